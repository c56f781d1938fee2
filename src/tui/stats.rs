//! The stats pane, where dropped events are reviewed: the `stats` table (with Sextant's own
//! counters from `sextant_stats`) grouped by machine and file, each group saying what was checked (a proto file's TraceStats and FtraceStats;
//! formats that carry no loss counters say so), its buffers as a small table (size,
//! written, overwritten, discarded, failed patches, writer loss, lost packets and their
//! causes), then its stats — losses first, with buffer, cpu and sequence as the index —
//! and, for the row under the cursor, what it means and which config change avoids it.
//! [`load`] reads the rows (strings sanitized), [`StatsState`] holds them and the cursor,
//! [`draw`] only draws.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;
use rusqlite::Connection;

use super::sanitize::sanitize;
use super::theme::Theme;

#[derive(Clone, Debug, PartialEq)]
pub struct StatRow {
    pub name: String,
    pub idx: Option<i64>,
    pub severity: String,
    pub source: String,
    pub value: i64,
    pub description: String,
    /// The machine's name (`host` or `machine <raw id>` when it has none, as the timeline
    /// and the clock graph call it); None for the whole import.
    pub machine: Option<String>,
    /// The file's name (`file <id>` when it has none, as a lone trace file); None for the
    /// whole import.
    pub file: Option<String>,
    /// The file's format (`proto`, `json`, …), when the stat belongs to a file.
    pub format: Option<String>,
}

fn severity_rank(s: &str) -> u8 {
    match s {
        "error" => 0,
        "data_loss" => 1,
        "notice" => 2,
        _ => 3,
    }
}

/// Stats the reference files as `info` that still mean data is missing from the trace.
const INFO_LOSSES: &[&str] = &[
    "ftrace_cpu_overrun_delta",
    "traced_buf_chunks_discarded",
    "traced_chunks_discarded",
    "traced_patches_discarded",
];

impl StatRow {
    /// Data is missing, or something went wrong, where this stat is above 0.
    pub fn is_loss(&self) -> bool {
        self.value != 0
            && (severity_rank(&self.severity) <= 1 || INFO_LOSSES.contains(&self.name.as_str()))
    }

    /// Worth the user's attention: a loss or a notice.
    fn is_finding(&self) -> bool {
        self.value != 0 && (self.is_loss() || self.severity == "notice")
    }

    /// What the index means for this stat.
    fn index_kind(&self) -> &'static str {
        let n = self.name.as_str();
        if n.starts_with("traced_buf_") || n.starts_with("config_") || n.starts_with("long_trace") {
            "buffer"
        } else if n.starts_with("ftrace_cpu_") || n.starts_with("perf_cpu") {
            "cpu"
        } else if n.starts_with("sequence_") {
            "sequence"
        } else if n == "proto_packet_kind_not_imported" {
            "TracePacket field"
        } else {
            "index"
        }
    }

    fn display_name(&self) -> String {
        match self.idx {
            Some(idx) => format!("{}[{} {idx}]", self.name, self.index_kind()),
            None => self.name.clone(),
        }
    }
}

/// Reads `stats` and then `sextant_stats` (Sextant's own counters; a database written
/// before that table existed has them in `stats`), with each row's machine, file and
/// file format.
pub fn load(conn: &Connection) -> rusqlite::Result<Vec<StatRow>> {
    let own: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'sextant_stats'",
        [],
        |r| r.get(0),
    )?;
    let tables = if own {
        "SELECT 0 AS part, * FROM stats UNION ALL SELECT 1, * FROM sextant_stats"
    } else {
        "SELECT 0 AS part, * FROM stats"
    };
    let mut stmt = conn.prepare(&format!(
        "SELECT s.name, s.idx, s.severity, s.source, s.value, s.description,
                coalesce(nullif(m.name, ''),
                         CASE coalesce(m.raw_id, s.machine_id) WHEN 0 THEN 'host'
                         ELSE 'machine ' || coalesce(m.raw_id, s.machine_id) END),
                CASE WHEN s.trace_id IS NOT NULL THEN coalesce(f.name, '') END, f.trace_type
         FROM ({tables}) s
         LEFT JOIN machine m ON m.id = s.machine_id
         LEFT JOIN __intrinsic_trace_file f ON f.id = s.trace_id
         ORDER BY s.part, s.id"
    ))?;
    let text = |v: Option<String>| v.map(|s| sanitize(&s).into_owned());
    let rows = stmt
        .query_map([], |r| {
            Ok(StatRow {
                name: text(r.get(0)?).unwrap_or_default(),
                idx: r.get(1)?,
                severity: text(r.get(2)?).unwrap_or_default(),
                source: text(r.get(3)?).unwrap_or_default(),
                value: r.get::<_, Option<i64>>(4)?.unwrap_or(0),
                description: text(r.get(5)?).unwrap_or_default(),
                machine: text(r.get(6)?),
                file: text(r.get(7)?),
                format: text(r.get(8)?),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// What became of the events a file's parser read (`__sextant_file_events`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileEvents {
    pub file: String,
    pub read: i64,
    pub imported: i64,
    pub dropped: i64,
    pub unaccounted: i64,
}

/// Reads what became of each file's events (none for a database from an older Sextant).
pub fn load_events(conn: &Connection) -> Vec<FileEvents> {
    let rows = conn
        .prepare(
            "SELECT coalesce(f.name, ''), e.read, e.imported, e.dropped,
                    e.unaccounted
             FROM __sextant_file_events e
             LEFT JOIN __intrinsic_trace_file f ON f.id = e.file_id ORDER BY e.file_id",
        )
        .and_then(|mut stmt| {
            stmt.query_map([], |r| {
                Ok(FileEvents {
                    file: sanitize(&r.get::<_, String>(0)?).into_owned(),
                    read: r.get(1)?,
                    imported: r.get(2)?,
                    dropped: r.get(3)?,
                    unaccounted: r.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()
        });
    rows.unwrap_or_default()
}

impl FileEvents {
    /// `1,234 events read: 1,230 imported, 4 dropped (counted in the list)`: every filter lists
    /// the stats that count a file's drops (see [`StatsState::shown`]), which are the file's
    /// or, for events placed before trace time's zero, the whole import's
    /// (`trace_sorter_negative_timestamp_dropped`, listed first: not "below").
    pub fn describe(&self) -> String {
        let mut text = format!("{} events read: {} imported", self.read, self.imported);
        if self.dropped > 0 {
            text.push_str(&format!(", {} dropped (counted in the list)", self.dropped));
        }
        if self.unaccounted > 0 {
            text.push_str(&format!(", {} lost without a count", self.unaccounted));
        }
        text
    }
}

/// What a loss means and which change to the recording avoids it.
pub struct Advice {
    pub means: &'static str,
    pub fix: &'static str,
}

/// The cause behind a stat that reports lost or dropped data, and how to avoid it.
pub fn advice(name: &str) -> Option<Advice> {
    let a = |means, fix| Some(Advice { means, fix });
    match name {
        "traced_buf_bytes_overwritten"
        | "traced_buf_chunks_overwritten"
        | "traced_buf_data_loss_overwrite"
        | "long_trace_mode_bytes_overwritten" => a(
            "the ring buffer wrapped and overwrote data before the service read it out",
            "enlarge the buffer (buffers.size_kb); when streaming (write_into_file) lower file_write_period_ms so the buffer is drained before it wraps",
        ),
        "traced_buf_data_loss_read_gap" => a(
            "the service read the buffer after part of a sequence had already been overwritten",
            "enlarge the buffer (buffers.size_kb) or read it more often (write_into_file with a shorter file_write_period_ms)",
        ),
        "traced_buf_chunks_discarded" | "traced_chunks_discarded" | "config_write_into_file_discard" => a(
            "a DISCARD buffer was full, so the service threw new data away",
            "enlarge the buffer (buffers.size_kb), use fill_policy RING_BUFFER when streaming, or drain it more often (file_write_period_ms)",
        ),
        "traced_buf_patches_failed" | "traced_patches_discarded" => a(
            "a producer patched a chunk that had already left the buffer; the packet there is incomplete",
            "enlarge the buffer (buffers.size_kb) so chunks stay until patched, and set flush_period_ms",
        ),
        "traced_buf_trace_writer_packet_loss" | "traced_buf_data_loss_smb_full" => a(
            "a producer's shared memory buffer was full: it wrote faster than the service drained it",
            "raise the producer's shared memory size (shm_size_hint_kb / the SDK's shmem_size_hint_kb), record less, or use the stall buffer-exhausted policy",
        ),
        "traced_buf_abi_violations" | "traced_buf_data_loss_chunk_corrupted" => a(
            "a producer wrote chunks the service could not accept",
            "update the producer's Perfetto SDK to match the tracing service",
        ),
        "traced_buf_data_loss_orphan_continuation"
        | "traced_buf_data_loss_reassembly_gap"
        | "traced_buf_data_loss_reassembly_broken_chain" => a(
            "fragments of a packet too large for one chunk were lost, so the packet was dropped",
            "enlarge the buffer (buffers.size_kb) or emit smaller packets",
        ),
        "traced_buf_data_loss_writer_abort" => a(
            "a writer stopped in the middle of a packet (its process died or its thread ended)",
            "nothing in the config: look for crashes of the traced process",
        ),
        "traced_buf_sequence_packet_loss" | "sequence_packet_loss" | "sequence_packet_loss_flagged" => a(
            "packets of a writer's sequence were missing before this point; the traced_buf_data_loss_* rows give the cause",
            "follow the cause rows of the same buffer (overwrite, smb_full, read_gap …)",
        ),
        "traced_buf_incremental_sequences_dropped"
        | "packet_skipped_seq_needs_incremental_state_invalid"
        | "sequence_packets_skipped"
        | "interned_data_skipped_incremental_state_invalid" => a(
            "packets needing interned names or defaults were skipped: the state they refer to was lost or never written",
            "set incremental_state_config.clear_period_ms so producers re-emit their state, and avoid the losses above",
        ),
        "traced_final_flush_failed" | "traced_flushes_failed" => a(
            "data sources did not answer a flush in time, so their last data is missing",
            "raise flush_timeout_ms (and data_source_stop_timeout_ms)",
        ),
        "config_write_into_file_no_flush" => a(
            "the trace streamed to a file but nothing flushed producers while tracing (service older than v54)",
            "set flush_period_ms (e.g. 10000) or update the tracing service",
        ),
        "ftrace_cpu_overrun_delta"
        | "ftrace_cpu_commit_overrun_delta"
        | "ftrace_cpu_dropped_events_delta"
        | "ftrace_cpu_has_data_loss" => a(
            "the kernel's per-cpu ftrace buffer filled before it was drained",
            "enlarge ftrace_config.buffer_size_kb, lower drain_period_ms, or record fewer ftrace events",
        ),
        "ftrace_setup_errors" => a(
            "some ftrace events could not be enabled at the start, so they were never recorded",
            "check the event names in ftrace_config against the device's kernel",
        ),
        n if n.starts_with("clock_sync") => a(
            "events on a clock that cannot be related to trace time were dropped",
            "record ClockSnapshots in each trace, add a manifest `clocks` override relating the clocks, or press t to put trace time on a clock these events reach",
        ),
        "trace_sorter_negative_timestamp_dropped" => a(
            "events landed before the start of trace time",
            "press t and choose a trace_time clock that starts earlier, or correct the manifest offset_ns",
        ),
        n if n.starts_with("json_") => a(
            "the JSON writer emitted malformed events",
            "check the file near the reported events",
        ),
        n if n.starts_with("systrace") => a(
            "the systrace text has lines Sextant cannot read",
            "check the tracer's output format",
        ),
        "ftrace_event_unknown" => a(
            "the trace has ftrace events newer than this Sextant",
            "update Sextant (tools/gen_schemas.py ftrace)",
        ),
        "memory_snapshot_nodes_dropped" => a(
            "memory-infra dumps name nodes or edges a snapshot's graph cannot hold",
            "check the dumps' names and edges in the tracing app's memory-infra provider",
        ),
        "strace_resumed_without_unfinished" => a(
            "strace was attached while calls were running, or the start of its output is missing",
            "start the program under strace, or keep the whole output",
        ),
        "syscall_unknown" => a(
            "syscall numbers could not be named for the machine",
            "record SystemInfo (utsname) in the trace; Sextant knows aarch64, arm, x86 and x86_64",
        ),
        n if n.starts_with("rss_stat") => a(
            "memory counters could not be attributed",
            "record with a kernel that reports rss_stat mm_id with curr, or poll memory with process_stats",
        ),
        "metatrace_arg_key_unknown" => a(
            "metatrace packets name interned arg keys defined in packets the trace lost",
            "record the metatrace again with a larger buffer",
        ),
        "proto_truncated" | "proto_packet_decode_failure" => a(
            "the trace file was cut or corrupted",
            "copy it again from the device",
        ),
        "proto_packet_kind_not_imported" => a(
            "packets of this kind are in the file, but Sextant does not import them yet",
            "query them with Perfetto's own tools for now",
        ),
        n if n.starts_with("slice_") || n.starts_with("misplaced_end") => a(
            "the instrumentation emits unbalanced or overlapping begin/end events",
            "pair them per thread",
        ),
        n if n.starts_with("flow_") => a(
            "the instrumentation emits flow ids that do not pair up",
            "give each flow one begin and one end",
        ),
        _ => None,
    }
}

/// Which stats the list shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Filter {
    /// Losses and notices.
    #[default]
    Findings,
    NonZero,
    All,
}

/// One buffer's counters, from its `traced_buf_*` rows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BufferLine {
    pub idx: i64,
    pub size: i64,
    pub written: i64,
    pub overwritten: i64,
    pub chunks_discarded: i64,
    pub patches_failed: i64,
    pub writer_loss: i64,
    pub lost_packets: i64,
    /// (cause, packets) for each `traced_buf_data_loss_*` above 0.
    pub causes: Vec<(String, i64)>,
}

/// The rows of one (machine, file) and what its file could report.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub machine: Option<String>,
    pub file: Option<String>,
    pub format: Option<String>,
    pub buffers: Vec<BufferLine>,
    /// A TraceStats / FtraceStats packet was read (per-buffer / per-cpu rows exist).
    pub trace_stats: bool,
    pub ftrace_stats: bool,
    /// Indices into the state's rows, in display order (all of them; the filter applies
    /// when listing).
    pub rows: Vec<usize>,
    /// What became of the file's events.
    pub events: Option<FileEvents>,
}

impl Group {
    /// What was checked for this group, so no one reads "no loss" where nothing looked.
    pub fn checked(&self) -> String {
        let format = self.checked_format();
        match &self.events {
            Some(e) if !format.is_empty() => format!("{format} · {}", e.describe()),
            Some(e) => e.describe(),
            None => format,
        }
    }

    fn checked_format(&self) -> String {
        match (self.file.as_deref(), self.format.as_deref()) {
            (None, _) => String::new(),
            (_, Some("proto")) => {
                let buffers = if self.trace_stats {
                    format!(
                        "TraceStats: {} buffer{}",
                        self.buffers.len(),
                        if self.buffers.len() == 1 { "" } else { "s" }
                    )
                } else {
                    "no TraceStats: buffer losses unknown".into()
                };
                let ftrace = if self.ftrace_stats {
                    "FtraceStats"
                } else {
                    "no FtraceStats"
                };
                format!("{buffers} · {ftrace} · loss markers")
            }
            (_, Some(format)) => format!("{format}: the format carries no loss counters"),
            (_, None) => String::new(),
        }
    }
}

fn category(name: &str) -> u8 {
    if name.starts_with("traced_")
        || name.starts_with("config_")
        || name.starts_with("long_trace")
        || name.starts_with("filter_")
    {
        0
    } else if name.starts_with("ftrace_") {
        1
    } else if name.starts_with("sequence_") || name.contains("incremental_state") {
        2
    } else {
        3
    }
}

/// Groups rows by (machine, file), the whole import's first; within a group, buffer then
/// cpu then sequence stats then the rest, losses first.
pub fn group(rows: &[StatRow], events: &[FileEvents]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let at = groups
            .iter()
            .position(|g| g.machine == r.machine && g.file == r.file);
        let g = match at {
            Some(at) => &mut groups[at],
            None => {
                groups.push(Group {
                    machine: r.machine.clone(),
                    file: r.file.clone(),
                    format: r.format.clone(),
                    buffers: Vec::new(),
                    trace_stats: false,
                    ftrace_stats: false,
                    rows: Vec::new(),
                    // A file read on several machines tells its events once, in its
                    // first group.
                    events: r
                        .file
                        .as_ref()
                        .filter(|_| !groups.iter().any(|g| g.file == r.file))
                        .and_then(|f| events.iter().find(|e| &e.file == f).cloned()),
                });
                let last = groups.len() - 1;
                &mut groups[last]
            }
        };
        g.rows.push(i);
        if let (Some(idx), Some(field)) = (r.idx, r.name.strip_prefix("traced_buf_")) {
            let at = match g.buffers.iter().position(|b| b.idx == idx) {
                Some(at) => at,
                None => {
                    g.buffers.push(BufferLine {
                        idx,
                        ..Default::default()
                    });
                    g.buffers.len() - 1
                }
            };
            let b = &mut g.buffers[at];
            match field {
                "buffer_size" => {
                    b.size = r.value;
                    g.trace_stats = true;
                }
                "bytes_written" => b.written = r.value,
                "bytes_overwritten" => b.overwritten = r.value,
                "chunks_discarded" => b.chunks_discarded = r.value,
                "patches_failed" => b.patches_failed = r.value,
                "trace_writer_packet_loss" => b.writer_loss = r.value,
                "sequence_packet_loss" => b.lost_packets = r.value,
                _ => {
                    if let (Some(cause), true) = (field.strip_prefix("data_loss_"), r.value > 0) {
                        b.causes.push((cause.to_string(), r.value));
                    }
                }
            }
        }
        if r.name.starts_with("ftrace_cpu_") && r.name.ends_with("_end") {
            g.ftrace_stats = true;
        }
    }
    groups.sort_by_key(|g| g.file.is_some());
    for g in &mut groups {
        g.buffers.sort_by_key(|b| b.idx);
        g.rows.sort_by(|&a, &b| {
            let (a, b) = (&rows[a], &rows[b]);
            let key = |r: &StatRow| {
                (
                    category(&r.name),
                    !r.is_loss(),
                    severity_rank(&r.severity),
                    r.value == 0,
                )
            };
            key(a)
                .cmp(&key(b))
                .then_with(|| a.name.cmp(&b.name))
                .then_with(|| a.idx.cmp(&b.idx))
        });
    }
    groups
}

#[derive(Debug, Default)]
pub struct StatsState {
    /// What was opened: the name shown for a file without one of its own (a single trace,
    /// or the trace inside a gzip file), which `load` reads as "".
    pub input: String,
    rows: Option<Result<Vec<StatRow>, String>>,
    groups: Vec<Group>,
    /// The files whose parser dropped events (`FileEvents::dropped` above 0).
    dropping: Vec<String>,
    pub filter: Filter,
    pub cursor: usize,
}

impl StatsState {
    /// The pane for the input called `input`, before any stats; files are named by the
    /// input's last component (the title bar shows its whole path).
    pub fn new(input: String) -> StatsState {
        let input = std::path::Path::new(&input)
            .file_name()
            .map_or(input.clone(), |n| n.to_string_lossy().into_owned());
        StatsState {
            input,
            ..StatsState::default()
        }
    }

    pub fn set_rows(&mut self, loaded: Result<(Vec<StatRow>, Vec<FileEvents>), String>) {
        let rows = loaded.map(|(mut rows, mut events)| {
            let input = &self.input;
            for f in rows
                .iter_mut()
                .filter_map(|r| r.file.as_mut())
                .chain(events.iter_mut().map(|e| &mut e.file))
            {
                if f.is_empty() {
                    f.clone_from(input);
                }
            }
            self.groups = group(&rows, &events);
            self.dropping = events
                .iter()
                .filter(|e| e.dropped > 0)
                .map(|e| e.file.clone())
                .collect();
            rows
        });
        if rows.is_err() {
            self.groups = Vec::new();
        }
        self.rows = Some(rows);
        self.cursor = 0;
    }

    /// How many stats report lost data or errors (0 before the stats are read).
    pub fn losses(&self) -> usize {
        self.all().iter().filter(|r| r.is_loss()).count()
    }

    fn all(&self) -> &[StatRow] {
        match &self.rows {
            Some(Ok(rows)) => rows,
            _ => &[],
        }
    }

    /// Whether the list's filter shows `r`. Losses and notices also list a file's non-zero
    /// `analysis` stats when the file dropped events: the stats that count the drops are
    /// the importer's own, and may be `info` ones (`compact_sched_switch_skipped`), so its
    /// header's "N dropped (counted in the list)" holds under every filter.
    fn shown(&self, r: &StatRow) -> bool {
        match self.filter {
            Filter::Findings => {
                r.is_finding()
                    || (r.value != 0
                        && r.source == "analysis"
                        && r.file.as_ref().is_some_and(|f| self.dropping.contains(f)))
            }
            Filter::NonZero => r.value != 0,
            Filter::All => true,
        }
    }

    /// The rows listed, in display order (group by group).
    pub fn visible(&self) -> Vec<&StatRow> {
        let rows = self.all();
        self.groups
            .iter()
            .flat_map(|g| g.rows.iter().map(|&i| &rows[i]))
            .filter(|r| self.shown(r))
            .collect()
    }

    pub fn on_key(&mut self, key: KeyEvent, page: usize) {
        let n = self.visible().len();
        match key.code {
            KeyCode::Char('z') | KeyCode::Char('a') => {
                self.filter = match self.filter {
                    Filter::Findings => Filter::NonZero,
                    Filter::NonZero => Filter::All,
                    Filter::All => Filter::Findings,
                };
                self.cursor = 0;
                return;
            }
            KeyCode::Down | KeyCode::Char('j') => self.cursor += 1,
            KeyCode::Up | KeyCode::Char('k') => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::PageDown => self.cursor += page,
            KeyCode::PageUp => self.cursor = self.cursor.saturating_sub(page),
            KeyCode::Home | KeyCode::Char('g') => self.cursor = 0,
            KeyCode::End | KeyCode::Char('G') => self.cursor = n.saturating_sub(1),
            _ => {}
        }
        self.cursor = self.cursor.min(n.saturating_sub(1));
    }
}

fn severity_style(theme: &Theme, r: &StatRow) -> Style {
    match r.severity.as_str() {
        "error" => theme.error(),
        "data_loss" => theme.warning(),
        _ if r.is_loss() => theme.warning(),
        _ => theme.dim(),
    }
}

fn cut(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        format!("{s:<width$}")
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Bytes as B / KiB / MiB / GiB.
fn bytes(v: i64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = v as f64;
    let mut u = 0;
    while x.abs() >= 1024.0 && u + 1 < units.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v} B")
    } else {
        format!("{x:.1} {}", units[u])
    }
}

/// The buffer table of a group: header and one line per buffer (bytes written only where
/// there is room: the causes matter more).
fn buffer_lines(g: &Group, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let wide = width >= 100;
    let written = |s: &str| {
        if wide {
            format!(" {s:>9}")
        } else {
            String::new()
        }
    };
    let mut out = vec![Line::styled(
        format!(
            "  {:>3} {:>9}{} {:>9} {:>7} {:>6} {:>7} {:>4}  {}",
            "buf",
            "size",
            written("written"),
            "overwr.",
            "discard",
            "patch✗",
            "wr.loss",
            "lost",
            "causes of lost packets"
        ),
        theme.title(),
    )];
    for b in &g.buffers {
        let causes: Vec<String> = b.causes.iter().map(|(c, n)| format!("{c} {n}")).collect();
        let text = format!(
            "  {:>3} {:>9}{} {:>9} {:>7} {:>6} {:>7} {:>4}  {}",
            b.idx,
            bytes(b.size),
            written(&bytes(b.written)),
            bytes(b.overwritten),
            b.chunks_discarded,
            b.patches_failed,
            b.writer_loss,
            b.lost_packets,
            causes.join(", ")
        );
        let lossy = b.overwritten > 0
            || b.chunks_discarded > 0
            || b.patches_failed > 0
            || b.writer_loss > 0
            || b.lost_packets > 0;
        let style = if lossy {
            theme.warning()
        } else {
            Style::default()
        };
        out.push(Line::styled(cut(&text, width), style));
    }
    out
}

pub fn draw(frame: &mut Frame, area: Rect, state: &StatsState, theme: &Theme) {
    let rows = match &state.rows {
        None => {
            frame.render_widget(
                Paragraph::new(Line::styled(
                    "  stats appear when the import has written them…",
                    theme.dim(),
                )),
                area,
            );
            return;
        }
        Some(Err(e)) => {
            frame.render_widget(
                Paragraph::new(Line::styled(
                    format!("  cannot read stats: {e}"),
                    theme.error(),
                ))
                .wrap(Wrap { trim: false }),
                area,
            );
            return;
        }
        Some(Ok(rows)) => rows,
    };
    let visible = state.visible();
    let losses = rows.iter().filter(|r| r.is_loss()).count();
    let notices = rows
        .iter()
        .filter(|r| r.is_finding() && !r.is_loss())
        .count();
    let [head, body, detail] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(3),
        Constraint::Length(6),
    ])
    .areas(area);
    let summary = if losses > 0 {
        Span::styled(
            format!(
                "  {losses} {} or errors, {notices} {}, by machine and file",
                if losses == 1 { "loss" } else { "losses" },
                if notices == 1 { "notice" } else { "notices" }
            ),
            theme.warning(),
        )
    } else {
        Span::styled(
            format!(
                "  no loss reported by what was checked ({notices} {}): see each file",
                if notices == 1 { "notice" } else { "notices" }
            ),
            theme.ok(),
        )
    };
    let toggle = match state.filter {
        Filter::Findings => format!(
            "  losses and notices of {} stats · z: non-zero ones",
            rows.len()
        ),
        Filter::NonZero => format!("  non-zero stats of {} · z: all", rows.len()),
        Filter::All => format!("  all {} stats · z: losses only", rows.len()),
    };
    frame.render_widget(
        Paragraph::new(vec![Line::from(summary), Line::styled(toggle, theme.dim())]),
        head,
    );

    let width = area.width as usize;
    let value_w = if width >= 120 { 14 } else { 10 };
    let name_w = width.saturating_sub(2 + 10 + value_w + 1).max(12);
    // Every line of the list; the cursor's line is kept in view.
    let mut lines: Vec<Line> = Vec::new();
    let mut cursor_line = 0;
    let mut n = 0usize;
    for g in &state.groups {
        let listed: Vec<&StatRow> = g
            .rows
            .iter()
            .map(|&i| &rows[i])
            .filter(|r| state.shown(r))
            .collect();
        let where_ = match (&g.machine, &g.file) {
            (None, None) => "whole import".to_string(),
            (m, f) => format!(
                "{} · {}",
                m.as_deref().unwrap_or("no machine"),
                f.as_deref().unwrap_or("no file")
            ),
        };
        let checked = g.checked();
        if g.file.is_none() && listed.is_empty() {
            continue;
        }
        let group_losses = listed.iter().filter(|r| r.is_loss()).count();
        // The loss count comes before what was checked, which may run past the width.
        let mut header = vec![Span::styled(format!("▸ {where_}"), theme.title())];
        if group_losses > 0 {
            header.push(Span::styled(
                format!(
                    " · {group_losses} {}",
                    if group_losses == 1 { "loss" } else { "losses" }
                ),
                theme.warning(),
            ));
        }
        if !checked.is_empty() {
            header.push(Span::styled(format!(": {checked}"), theme.dim()));
        }
        lines.push(Line::from(header));
        if !g.buffers.is_empty() {
            lines.extend(buffer_lines(g, width, theme));
        }
        for r in listed {
            let mut line = Line::from(vec![
                Span::raw("  "),
                Span::styled(cut(&r.severity, 9), severity_style(theme, r)),
                Span::raw(format!(
                    " {} {:>value_w$}",
                    cut(&r.display_name(), name_w),
                    r.value
                )),
            ]);
            if n == state.cursor {
                line = line.style(theme.cursor());
                cursor_line = lines.len();
            }
            lines.push(line);
            n += 1;
        }
    }
    if visible.is_empty() {
        lines.push(Line::styled(
            "  no stat matches · z lists more",
            theme.dim(),
        ));
    }
    let height = body.height as usize;
    let first = cursor_line.saturating_sub(height.saturating_sub(1));
    let shown: Vec<Line> = lines.into_iter().skip(first).take(height).collect();
    frame.render_widget(Paragraph::new(shown), body);

    if let Some(r) = visible.get(state.cursor) {
        let whence: Vec<String> = [
            Some(format!("{} stat", r.source)),
            r.machine.clone(),
            r.file.clone(),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut head = vec![
            Span::styled(format!("  {} ", r.display_name()), theme.title()),
            Span::styled(format!("({})", whence.join(", ")), theme.dim()),
        ];
        // A loss says what it means and what to change; anything else its description.
        let advice = advice(&r.name).filter(|_| r.value != 0);
        if advice.is_none() {
            head.push(Span::raw(format!(": {}", r.description)));
        }
        let mut text = vec![Line::from(head)];
        if let Some(a) = advice {
            text.push(Line::raw(format!("  Means: {}.", a.means)));
            text.push(Line::styled(format!("  Fix: {}.", a.fix), theme.key()));
        }
        // Continuation lines stay under the text, clear of the left edge.
        frame.render_widget(super::wrap::paragraph(&text, detail.width, 4), detail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, idx: Option<i64>, severity: &str, value: i64, file: &str) -> StatRow {
        StatRow {
            name: name.into(),
            idx,
            severity: severity.into(),
            source: "trace".into(),
            value,
            description: String::new(),
            machine: Some("phone".into()),
            file: Some(file.into()),
            format: Some("proto".into()),
        }
    }

    #[test]
    fn buffers_become_a_table_and_losses_come_first_in_each_file() {
        let rows = vec![
            row("traced_buf_buffer_size", Some(0), "info", 4096, "a"),
            row("traced_buf_bytes_overwritten", Some(0), "info", 100, "a"),
            row(
                "traced_buf_data_loss_smb_full",
                Some(0),
                "data_loss",
                2,
                "a",
            ),
            row(
                "traced_buf_data_loss_read_gap",
                Some(0),
                "data_loss",
                0,
                "a",
            ),
            row("traced_producers_seen", None, "info", 3, "a"),
            row("traced_buf_chunks_discarded", Some(0), "info", 5, "a"),
            row("json_parser_failure", None, "error", 0, "b"),
        ];
        let groups = group(&rows, &[]);
        assert_eq!(groups.len(), 2);
        let a = &groups[0];
        assert!(a.trace_stats && !a.ftrace_stats);
        assert_eq!(
            a.buffers,
            [BufferLine {
                idx: 0,
                size: 4096,
                overwritten: 100,
                chunks_discarded: 5,
                causes: vec![("smb_full".into(), 2)],
                ..Default::default()
            }]
        );
        let order: Vec<&str> = a.rows.iter().map(|&i| rows[i].name.as_str()).collect();
        assert_eq!(
            order[..2],
            [
                "traced_buf_data_loss_smb_full",
                "traced_buf_chunks_discarded"
            ]
        );
        assert!(a.checked().starts_with("TraceStats: 1 buffer ·"));
        assert!(groups[1]
            .checked()
            .starts_with("no TraceStats: buffer losses unknown"));
    }

    /// "counted in the list" must hold under the default filter: the `info` stats that count a
    /// file's drops (api32's `compact_sched_switch_skipped`) are listed for a file that
    /// dropped events, and only for it; a file read on two machines tells its events once.
    #[test]
    fn dropped_events_are_counted_in_the_default_list() {
        let events = |file: &str, dropped| FileEvents {
            file: file.into(),
            read: 10,
            imported: 10 - dropped,
            dropped,
            unaccounted: 0,
        };
        let analysis = |name: &str, value, file: &str| StatRow {
            source: "analysis".into(),
            ..row(name, None, "info", value, file)
        };
        let mut state = StatsState::new("x.zip".into());
        let mut on_b = analysis("compact_sched_switch_skipped", 2, "b");
        on_b.machine = Some("tablet".into());
        state.set_rows(Ok((
            vec![
                analysis("compact_sched_switch_skipped", 2, "a"),
                row("traced_producers_seen", None, "info", 3, "a"),
                analysis("compact_sched_switch_skipped", 2, "b"),
                on_b,
            ],
            vec![events("a", 2), events("b", 0)],
        )));
        let names: Vec<(&str, &str)> = state
            .visible()
            .iter()
            .map(|r| (r.name.as_str(), r.file.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(names, [("compact_sched_switch_skipped", "a")]);
        assert_eq!(
            state.groups[0].checked(),
            "no TraceStats: buffer losses unknown · no FtraceStats · loss markers · \
             10 events read: 8 imported, 2 dropped (counted in the list)"
        );
        let b: Vec<Option<i64>> = state
            .groups
            .iter()
            .filter(|g| g.file.as_deref() == Some("b"))
            .map(|g| g.events.as_ref().map(|e| e.read))
            .collect();
        assert_eq!(b, [Some(10), None]);
    }

    #[test]
    fn every_loss_cause_says_what_it_means_and_what_to_change() {
        for name in crate::stats::STATS
            .iter()
            .map(|d| d.name)
            .filter(|n| n.starts_with("traced_buf_data_loss_"))
        {
            assert!(advice(name).is_some(), "{name}");
        }
        let a = advice("traced_buf_data_loss_smb_full").unwrap();
        assert!(a.fix.contains("shm_size_hint_kb"));
        assert!(advice("traced_buf_chunks_discarded")
            .unwrap()
            .fix
            .contains("RING_BUFFER"));
    }
}
