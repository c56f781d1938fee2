//! The import pipeline: source → manifest → parse → clock → sort → model → db.
//!
//! Parsing keeps every event's raw timestamp and the clock it was read on. A [`Session`]
//! keeps those parsed events, so the same files can be re-placed on another trace_time clock
//! (the TUI's chooser) without parsing them again: only clock → sort → model → db run again.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::clock::report::{self, Report};
use crate::clock::{
    self, ChangeScope, Context, Failure, Format, ManifestClocks, ManifestEdge, Placement, Plan,
};
use crate::db::{self, ImportFacts, TraceFileRow};
use crate::ir::{
    clocks, ArgValue, ClockDomain, ClockRef, Event, EventData, FxHashMap, MachineId,
    MachineRegistry, MetaValue, Sink, StatKey, NO_FILE, NO_MACHINE,
};
use crate::manifest::{self, Manifest, ManifestError};
use crate::parse::{self, FileContext, MachineScope, ParseError};
use crate::source::{self, Fault, Kind, SourceError, TraceFile};
use petgraph::graph::NodeIndex;

mod check;
mod edit;
mod manifest_setup;

pub use check::Findings;
pub use edit::{FilePreview, ManifestPreview, Member};
use manifest_setup::ManifestSetup;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("{file}: {error}")]
    Parse { file: String, error: ParseError },
    #[error("{file}: {error}")]
    Manifest { file: String, error: ManifestError },
    #[error("{file}: Unknown trace type provided (ERR:fmt): not a Perfetto protobuf, Chrome JSON or systrace file, nor a ZIP/TAR/gzip archive")]
    UnknownType { file: String },
    #[error("{file}: {}", Fault::Limit { limit: *limit }.describe())]
    TooLarge { file: String, limit: u64 },
    #[error("the import was cancelled")]
    Cancelled,
    #[error("there is no clock node {0} to put trace time on")]
    NoSuchClock(u32),
    #[error(transparent)]
    Db(#[from] db::DbError),
    /// A manifest the reader would accept that does not do what it says (a sync that moves
    /// nothing, an offset out of range): refused, with why.
    #[error("{0}")]
    Refused(String),
}

/// The table a database keeps the manifest in effect in (one row, its JSON); absent when
/// the input had no manifest.
pub const MANIFEST_TABLE: &str = "__sextant_manifest";

/// What an import did, for summaries and benchmarks.
#[derive(Debug, Default, Clone)]
pub struct ImportSummary {
    pub files: usize,
    pub bytes: u64,
    pub events: usize,
    pub slices: usize,
    pub counters: usize,
    pub sched: usize,
    pub dropped_events: u64,
    pub parse_secs: f64,
    pub total_secs: f64,
}

/// Where an import is, for progress bars.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stage {
    Reading,
    Parsing { file: String },
    Placing,
    Writing,
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    pub stage: Stage,
    pub files_done: usize,
    pub files_total: usize,
    pub bytes_done: u64,
    pub bytes_total: u64,
    /// Events parsed so far (while parsing), or rows written (while writing).
    pub events: u64,
}

/// A candidate clock for trace time, with what choosing it would cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceTimeCandidate {
    /// The `__sextant_clock_node` id.
    pub node: u32,
    pub label: String,
    pub current: bool,
    /// Events that would be dropped: unrelatable to it, or placed before its zero.
    pub dropped_events: u64,
}

/// An imported set of files, kept parsed so trace time can be switched without re-parsing.
pub struct Session {
    sink: Sink,
    /// Stats and metadata as parsing left them (each write adds its own on top).
    parse_stats: HashMap<StatKey, i64>,
    parse_stat_order: Vec<StatKey>,
    parse_metadata: Vec<(String, MachineId, u32, MetaValue)>,
    files: Vec<TraceFileRow>,
    file_names: Vec<String>,
    contexts: Vec<Context>,
    manifest_clocks: ManifestClocks,
    first_machine: MachineId,
    /// Clock nodes of the database written last, by `__sextant_clock_node` id.
    nodes: Vec<ClockDomain>,
    summary: ImportSummary,
    candidates: Vec<TraceTimeCandidate>,
    started: Instant,
    /// The manifest in effect (read from the input, or set by [`Session::apply_manifest`]).
    manifest: Option<Manifest>,
    /// Where each file's bytes are, to write them again (`None` for containers).
    data: Vec<Option<source::Data>>,
    input_name: String,
}

/// Imports the trace at `input` into a new SQLite database at `db_path`.
pub fn import_path(input: &Path, db_path: &Path) -> Result<ImportSummary, ImportError> {
    import_paths(&[input.to_path_buf()], db_path)
}

/// Imports several paths as one merge (see [`source::open_paths`]).
pub fn import_paths(
    inputs: &[std::path::PathBuf],
    db_path: &Path,
) -> Result<ImportSummary, ImportError> {
    let files = source::open_paths(inputs)?;
    import_files(&source::loose_name(inputs), files, db_path)
}

/// Imports already-opened files (see [`source::open_bytes`]) once, without keeping them
/// for re-placement.
pub fn import_files(
    input_name: &str,
    files: Vec<TraceFile>,
    db_path: &Path,
) -> Result<ImportSummary, ImportError> {
    let never = AtomicBool::new(false);
    let mut session = Session::parse(input_name, files, &mut |_| {}, &never)?;
    session.write(db_path, None, false, false, &mut |_| {}, &never)?;
    Ok(session.summary)
}

impl Session {
    /// Parses every file and writes the database at `db_path`.
    pub fn import(
        input_name: &str,
        files: Vec<TraceFile>,
        db_path: &Path,
        progress: &mut dyn FnMut(&Progress),
        cancel: &AtomicBool,
    ) -> Result<Session, ImportError> {
        let mut session = Session::parse(input_name, files, progress, cancel)?;
        session.write(db_path, None, true, true, progress, cancel)?;
        Ok(session)
    }

    /// Like [`Session::import`], with trace time on `clock` (see [`Session::clock_node`])
    /// rather than where the files and the manifest put it: the database
    /// [`Session::replace`] would write for that clock.
    pub fn import_on(
        input_name: &str,
        files: Vec<TraceFile>,
        clock: ClockDomain,
        db_path: &Path,
        progress: &mut dyn FnMut(&Progress),
        cancel: &AtomicBool,
    ) -> Result<Session, ImportError> {
        let mut session = Session::parse(input_name, files, progress, cancel)?;
        session.write(db_path, Some(clock), true, true, progress, cancel)?;
        Ok(session)
    }

    /// The clock of a node of the last database's `__sextant_clock_node`.
    pub fn clock_node(&self, node: u32) -> Option<ClockDomain> {
        self.nodes.get(node as usize).copied()
    }

    pub fn summary(&self) -> &ImportSummary {
        &self.summary
    }

    /// Every clock trace time could be put on, as in `__sextant_trace_time_candidate`.
    pub fn candidates(&self) -> Vec<TraceTimeCandidate> {
        self.candidates.clone()
    }

    /// Re-places every event with trace time on clock node `node` (an id of the last
    /// database's `__sextant_clock_node`) and writes a complete new database at `db_path`.
    pub fn replace(
        &mut self,
        node: u32,
        db_path: &Path,
        progress: &mut dyn FnMut(&Progress),
        cancel: &AtomicBool,
    ) -> Result<ImportSummary, ImportError> {
        let clock = *self
            .nodes
            .get(node as usize)
            .ok_or(ImportError::NoSuchClock(node))?;
        self.started = Instant::now();
        self.write(db_path, Some(clock), true, false, progress, cancel)?;
        Ok(self.summary.clone())
    }

    fn parse(
        input_name: &str,
        mut files: Vec<TraceFile>,
        progress: &mut dyn FnMut(&Progress),
        cancel: &AtomicBool,
    ) -> Result<Session, ImportError> {
        let started = Instant::now();
        let mut sink = Sink::new();
        let bytes_total: u64 = files
            .iter()
            .filter_map(|f| f.data.as_ref())
            .map(|d| d.stored_len())
            .sum();
        let mut state = Progress {
            stage: Stage::Reading,
            files_done: 0,
            files_total: files.len(),
            bytes_done: 0,
            bytes_total,
            events: 0,
        };
        progress(&state);
        let traces: Vec<usize> = (0..files.len())
            .filter(|&i| !files[i].kind.is_container())
            .collect();
        if traces.is_empty() && !files.is_empty() && !files[0].problems.is_empty() {
            // An archive with nothing readable left.
            let problems: Vec<&str> = files[0].problems.iter().map(|p| p.1.as_str()).collect();
            return Err(ImportError::Source(SourceError::Corrupt {
                name: input_name.to_string(),
                problem: problems.join("; "),
            }));
        }
        if traces.is_empty() || traces.iter().all(|&i| files[i].kind == Kind::Unknown) {
            return Err(ImportError::UnknownType {
                file: input_name.to_string(),
            });
        }
        let file_names: Vec<String> = files
            .iter()
            .map(|f| f.display_name(input_name).to_string())
            .collect();
        let setup = ManifestSetup::read(&files, &file_names, &mut sink)?;

        let mut rows = Vec::with_capacity(files.len());
        let mut formats: Vec<Option<Format>> = vec![None; files.len()];
        let row_ids: Vec<u32> = files.iter().map(|f| f.row as u32).collect();
        for (order, file) in files.iter_mut().enumerate() {
            rows.push(TraceFileRow {
                id: row_ids[order],
                parent_id: file.parent.and_then(|p| row_ids.get(p).copied()),
                name: file.name.clone(),
                size: file.size,
                trace_type: file.kind.trace_type(),
                processing_order: Some(order as u32),
                is_container: file.kind.is_container(),
            });
            if cancel.load(Ordering::Relaxed) {
                return Err(ImportError::Cancelled);
            }
            sink.current_file = order as u32;
            // A damaged container, read anyway.
            for (stat, _) in &file.problems {
                sink.stat(stat, NO_MACHINE, 1);
            }
            let Some(data) = file.data.clone() else {
                state.files_done += 1;
                continue;
            };
            if file.kind == Kind::Manifest {
                // Read by the manifest setup; its size is what it holds.
                rows[order].size = setup.manifest_size;
                file.size = setup.manifest_size;
                state.files_done += 1;
                continue;
            }
            let index = order as u32;
            let name = file_names[order].clone();
            state.stage = Stage::Parsing { file: name.clone() };
            progress(&state);
            let ctx = setup.context(index, file.name.as_deref(), &mut sink);
            let opened = data.open().map_err(|error| SourceError::Read {
                path: name.clone(),
                error,
            })?;
            let monitor = opened.monitor.clone();
            let mut reader = opened.reader;
            let stored = data.stored_len();
            let start = sink.events.len() as u32;
            let parsed = match file.kind {
                Kind::Proto => {
                    let base = state.clone();
                    let watch = monitor.clone();
                    let mut tick = |_pos: u64, events: usize| {
                        let mut s = base.clone();
                        s.bytes_done += watch.stored().min(stored);
                        s.events = events as u64;
                        progress(&s);
                        !cancel.load(Ordering::Relaxed)
                    };
                    let r = parse::proto::parse_stream(
                        &mut reader,
                        data.size_hint(),
                        &mut sink,
                        &ctx,
                        &mut tick,
                    );
                    formats[order] = Some(Format::Proto);
                    r
                }
                Kind::Json => {
                    formats[order] = Some(Format::Json);
                    parse::json::parse_stream(&mut reader, &mut sink, &ctx)
                }
                Kind::Systrace => {
                    formats[order] = Some(Format::Systrace);
                    parse::systrace::parse_stream(&mut reader, &mut sink, &ctx)
                }
                Kind::Strace => {
                    formats[order] = Some(Format::Strace);
                    parse::strace::parse_stream(&mut reader, &mut sink, &ctx)
                }
                _ => return Err(ImportError::UnknownType { file: name }),
            };
            // The rest of the stream (what the parser did not need) still counts in the
            // file's size.
            if parsed.is_ok() {
                let _ = std::io::copy(&mut reader, &mut std::io::sink());
            }
            drop(reader);
            sink.file_spans
                .insert(index, (start, sink.events.len() as u32));
            let fault = monitor.fault();
            match (fault, parsed) {
                (Some(Fault::Limit { limit }), _) => {
                    return Err(ImportError::TooLarge { file: name, limit });
                }
                (Some(Fault::ManifestNotFirst), _) => {
                    return Err(ImportError::Manifest {
                        file: name,
                        error: ManifestError::NotFirst,
                    });
                }
                (_, Err(ParseError::Cancelled)) => return Err(ImportError::Cancelled),
                (Some(fault), Err(_)) => {
                    // Nothing usable before the break: the break is the error, named with
                    // the archive it is in.
                    let name = match file.parent {
                        Some(_) => format!("{input_name}: {name}"),
                        None => name,
                    };
                    return Err(ImportError::Source(SourceError::Corrupt {
                        name,
                        problem: fault.describe(),
                    }));
                }
                (_, Err(error)) => return Err(ImportError::Parse { file: name, error }),
                (Some(fault), Ok(())) => {
                    let stat = match fault {
                        Fault::MemberCut { .. } => "archive_member_truncated",
                        _ => "compressed_stream_truncated",
                    };
                    sink.stat(stat, ctx.machine, 1);
                }
                (None, Ok(())) => {}
            }
            // Only proto and systrace readers take pid/tid 0 as the idle `swapper`
            // (the reference's `pid_zero_is_idle`); JSON and strace leave thread 0 unnamed.
            if matches!(file.kind, Kind::Proto | Kind::Systrace) {
                sink.name_swapper(ctx.machine);
            }
            if file.kind == Kind::Proto
                && setup.is_pinned(file.name.as_deref())
                && sink.snapshots.iter().any(|s| s.file == index)
            {
                return Err(ImportError::Manifest {
                    file: name,
                    error: ManifestError::PinWithSnapshots,
                });
            }
            // Once read, a file's size is what it held (decompressed).
            file.size = monitor.delivered();
            rows[order].size = file.size;
            state.files_done += 1;
            state.bytes_done += stored;
            state.events = sink.event_count;
            progress(&state);
        }
        sink.events.shrink_to_fit();
        // Each trace file (the manifest too) says what it was and how big, decompressed.
        for (index, file) in files.iter().enumerate() {
            if file.kind.is_container() {
                continue;
            }
            sink.current_file = index as u32;
            let kind = MetaValue::Str(file.kind.trace_type().into());
            sink.metadata("trace_type", NO_MACHINE, kind);
            sink.metadata(
                "trace_size_bytes",
                NO_MACHINE,
                MetaValue::Int(file.size as i64),
            );
        }
        let contexts = contexts(&sink, &formats);
        let first_machine = if sink.machine_registry.is_empty() {
            sink.machine_registry.host()
        } else {
            0
        };
        let summary = ImportSummary {
            // Trace files: not the archive holding them, nor its manifest.
            files: formats.iter().filter(|f| f.is_some()).count(),
            bytes: files.first().map_or(0, |f| f.size),
            parse_secs: started.elapsed().as_secs_f64(),
            ..Default::default()
        };
        Ok(Session {
            parse_stats: sink.stats.clone(),
            parse_stat_order: sink.stat_order.clone(),
            parse_metadata: sink.metadata.clone(),
            sink,
            files: rows,
            file_names,
            contexts,
            manifest_clocks: setup.clocks,
            first_machine,
            nodes: Vec::new(),
            summary,
            candidates: Vec::new(),
            started,
            manifest: setup.manifest,
            data: files.iter().map(|f| f.data.clone()).collect(),
            input_name: input_name.to_string(),
        })
    }

    /// Places, sorts, builds and writes the database; keeps the raw events when `keep`.
    /// A `live` database is committed as rows land, for readers during the import.
    fn write(
        &mut self,
        db_path: &Path,
        forced: Option<ClockDomain>,
        keep: bool,
        live: bool,
        progress: &mut dyn FnMut(&Progress),
        cancel: &AtomicBool,
    ) -> Result<(), ImportError> {
        let t = Instant::now();
        let mut state = Progress {
            stage: Stage::Placing,
            files_done: self.files.len(),
            files_total: self.files.len(),
            bytes_done: self.summary.bytes,
            bytes_total: self.summary.bytes,
            events: self.sink.event_count,
        };
        progress(&state);
        let sink = &mut self.sink;
        sink.stats = self.parse_stats.clone();
        sink.stat_order = self.parse_stat_order.clone();
        sink.metadata = self.parse_metadata.clone();
        let placement = clock::place(&clock::PlacementInput {
            contexts: &self.contexts,
            snapshots: &sink.snapshots,
            manifest: &self.manifest_clocks,
            forced_trace_time: forced,
            first_machine: self.first_machine,
            spans: &sink.file_spans,
        });
        let mut facts = ImportFacts {
            files: self.files.clone(),
            trace_time_clock: placement.claimed.then_some(placement.trace_time.clock_id),
            ..Default::default()
        };
        let machine_names: Vec<String> = sink
            .machine_registry
            .records
            .iter()
            .enumerate()
            .map(|(i, r)| {
                sink.machines
                    .get(&(i as MachineId))
                    .and_then(|m| m.name.clone())
                    .or_else(|| r.name.clone())
                    .unwrap_or_else(|| match r.raw_id {
                        0 => "host".to_string(),
                        raw => format!("machine {raw}"),
                    })
            })
            .collect();
        // The report reads raw timestamps: it runs before conversion.
        let per_clock = report::events_per_clock(sink);
        let report = Report::new(
            &placement,
            sink,
            &machine_names,
            &self.file_names,
            &per_clock,
        );
        // Node ids name the clocks of the database being written; the session answers with
        // the last complete one's until this one is.
        let nodes: Vec<ClockDomain> = report.nodes.iter().map(|n| n.clock).collect();
        // Every import fills `__sextant_trace_time_candidate` (`sextant query` and `sextant
        // import` too, not only the explorer): the README documents it.
        let t_candidates = Instant::now();
        let candidates = report.candidates(
            &placement,
            sink,
            &self.contexts,
            &self.manifest_clocks,
            self.first_machine,
            &per_clock,
        );
        phase("candidates", t_candidates);
        let choices = candidates
            .iter()
            .map(|c| TraceTimeCandidate {
                node: c.node,
                label: c.label.clone(),
                current: c.current,
                dropped_events: c.dropped_events,
            })
            .collect();
        facts.snapshots = Report::snapshot_rows(&placement);
        facts.candidates = candidates;
        facts.report = report;

        let protos: std::collections::HashSet<u32> = self
            .contexts
            .iter()
            .filter(|c| c.format == Format::Proto)
            .map(|c| c.file)
            .collect();
        // Clears the placement's logs of an earlier placement, then logs its own.
        mixed_clock_sources(sink, &placement);
        let converted = convert_events(sink, &placement, &protos, keep);
        let raw = converted.map(|events| std::mem::replace(&mut sink.events, events));
        sink.take_time_probes();
        let negative = sort_and_drop_negative(sink);
        let losses = placement_losses(sink, &sink.events);
        sink.placement_losses = losses;
        // The stat is global, as in Trace Processor; the placement rows say whose events
        // they were.
        for row in &mut facts.report.files {
            row.dropped += negative.get(&(row.file, row.machine)).copied().unwrap_or(0);
        }
        phase("clock+sort", t);
        if cancel.load(Ordering::Relaxed) {
            if let Some(raw) = raw {
                sink.events = raw;
            }
            return Err(ImportError::Cancelled);
        }
        // Counted as the clock pane counts them (events per file, before any drop).
        self.summary.events = facts.report.files.iter().map(|f| f.events as usize).sum();

        let t = Instant::now();
        state.stage = Stage::Writing;
        state.events = 0;
        progress(&state);
        let machines: Vec<MachineId> = (0..sink.machine_registry.len() as MachineId).collect();
        let swapper = sink.swapper_machines.clone();
        let mut tick = |rows: u64| {
            let mut s = state.clone();
            s.events = rows;
            progress(&s);
            !cancel.load(Ordering::Relaxed)
        };
        let built = db::create(db_path, live).and_then(|conn| {
            let mut writer = db::begin(conn, live, &mut tick)?;
            writer.set_file_ids(self.files.iter().map(|f| f.id).collect());
            let tables = crate::model::build(sink, &machines, &swapper, &mut writer);
            Ok((writer, tables))
        });
        phase("model+rows", t);
        // The raw events go back whatever happened, for the next placement.
        if let Some(raw) = raw {
            sink.events = raw;
        }
        let (writer, tables) = built?;
        let t = Instant::now();
        self.summary.slices = tables.slice_count as usize;
        self.summary.counters = tables.counter_count as usize;
        self.summary.sched = tables.sched_count as usize;
        // In the unit of `events`: what the placement rows say each file lost (the stats
        // count the sorter's drops per input event, not per event).
        self.summary.dropped_events = facts.report.files.iter().map(|f| f.dropped).sum();
        let conn = writer.finish(&tables, sink, &facts)?;
        // The manifest in effect, for `sextant manifest` on the database.
        if let Some(m) = &self.manifest {
            conn.execute_batch(&format!("CREATE TABLE {MANIFEST_TABLE} (json TEXT)"))
                .and_then(|()| {
                    conn.execute(
                        &format!("INSERT INTO {MANIFEST_TABLE} (json) VALUES (?1)"),
                        [crate::merge::to_json(m)],
                    )
                })
                .map_err(db::DbError::from)?;
        }
        db::commit(&conn, live)?;
        phase("db", t);
        self.nodes = nodes;
        self.candidates = choices;
        self.summary.total_secs = self.started.elapsed().as_secs_f64();
        progress(&Progress {
            stage: Stage::Done,
            ..state
        });
        Ok(())
    }
}

fn phase(name: &str, since: Instant) {
    if std::env::var_os("SEXTANT_TIMING").is_some() {
        let hwm = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmHWM"))
                    .map(str::to_string)
            })
            .unwrap_or_default();
        eprintln!("{name}: {:.2}s {hwm}", since.elapsed().as_secs_f64());
    }
}

/// Every (file, machine) pair with events or snapshots, in processing order (machines in
/// the order the file first used them).
fn contexts(sink: &Sink, formats: &[Option<Format>]) -> Vec<Context> {
    let mut out: Vec<Context> = Vec::new();
    let mut seen: HashMap<(u32, MachineId), usize> = HashMap::new();
    let mut note = |file: u32, machine: MachineId, converts: bool, early: bool| {
        let Some(Some(format)) = formats.get(file as usize) else {
            return;
        };
        match seen.get(&(file, machine)) {
            Some(&i) => {
                out[i].converts |= converts;
                out[i].early |= early;
            }
            None => {
                seen.insert((file, machine), out.len());
                out.push(Context {
                    file,
                    machine,
                    format: *format,
                    converts,
                    early,
                });
            }
        }
    };
    // A text format's clock is named at the start of the file; it converts only if
    // events are on it (an empty systrace must not be bridged, nor counted unrelatable).
    let per_clock = report::events_per_clock(sink);
    let own_snapshots: std::collections::HashSet<(u32, MachineId)> =
        sink.snapshots.iter().map(|s| (s.file, s.machine)).collect();
    for c in 0..sink.clocks.len() {
        let d = sink.clocks.get(c as u32);
        let is_proto = formats.get(d.file as usize) == Some(&Some(Format::Proto));
        let used = is_proto || per_clock.get(c).is_some_and(|&n| n > 0);
        let converts = used
            && !matches!(
                d.clock_id,
                clocks::PACKET_DEFAULT | clocks::UNTIMED | clocks::LATEST | clocks::UNCONVERTED
            );
        // A proto event on a builtin clock read before the file's first own snapshot
        // (`shared`) converted before it, in a file that has one.
        let early = converts && d.shared && own_snapshots.contains(&(d.file, d.machine));
        note(d.file, d.machine, converts, early);
    }
    for s in &sink.snapshots {
        note(s.file, s.machine, false, false);
    }
    // Packets that name no clock convert through the file's default clock once it has one.
    let with_snapshots: std::collections::HashSet<u32> =
        sink.snapshots.iter().map(|s| s.file).collect();
    for c in 0..sink.clocks.len() {
        let d = sink.clocks.get(c as u32);
        if d.clock_id == clocks::PACKET_DEFAULT && with_snapshots.contains(&d.file) {
            if let Some(&i) = seen.get(&(d.file, d.machine)) {
                out[i].converts = true;
            }
        }
    }
    out.sort_by_key(|c| (c.file, seen[&(c.file, c.machine)]));
    out
}

/// Converts every event to trace time. Events whose clock cannot reach it are dropped and
/// counted per (machine, file): `clock_sync_failure_<kind>`, and for proto packets (which
/// the reference holds to the end of their file before giving up on them) also
/// `clock_sync_failure_undeferrable_packet_loss`. With `keep`, the raw events stay in the
/// sink and the converted ones are returned.
fn convert_events(
    sink: &mut Sink,
    placement: &Placement,
    protos: &std::collections::HashSet<u32>,
    keep: bool,
) -> Option<Vec<Event>> {
    let domains: Vec<ClockDomain> = (0..sink.clocks.len())
        .map(|c| *sink.clocks.get(c as u32))
        .collect();
    if !placement.rejected.is_empty() {
        let prev = std::mem::replace(&mut sink.current_file, NO_FILE);
        let n = placement.rejected.len() as i64;
        sink.stat("invalid_clock_snapshots", NO_MACHINE, n);
        sink.current_file = prev;
    }
    // Each is also logged with the two raw clock numbers (behaviour-merging.md §4b4).
    for u in &placement.unrelatable {
        let prev = sink.current_file;
        sink.current_file = u.file;
        let name = "clock_sync_unrelatable_clock_domains";
        sink.stat(name, u.machine, 1);
        let source = i64::from(u.clock.clock_id);
        let target = i64::from(u.trace_time.clock_id);
        let source = sink.arg("source_clock_id", crate::ir::ArgValue::Int(source));
        let target = sink.arg("target_clock_id", crate::ir::ArgValue::Int(target));
        let args = sink.args.push(&[source, target]);
        sink.placement_logs.push(crate::model::ImportLogRow {
            ts: None,
            byte_offset: None,
            name,
            file: u.file,
            args,
        });
        sink.current_file = prev;
    }
    let latest: Vec<bool> = domains
        .iter()
        .map(|d| d.clock_id == clocks::LATEST)
        .collect();
    // A clock on trace time once everything is read is on it whenever it was read (no
    // relation is involved).
    let all_identity = domains
        .iter()
        .all(|d| placement.strict_plan(*d, clock::READ_ALL) == Plan::Identity);
    if all_identity {
        let mut out = keep.then(|| sink.events.clone());
        let events = out.as_mut().unwrap_or(&mut sink.events);
        place_latest(events, &sink.payloads, &latest, &[]);
        return out;
    }
    // Trace Processor converts each event as it reads it, with the snapshots read before it
    // (behaviour-merging.md, "Model"): an event read at `ord` converts with the clock graph
    // of that time. The graph only changes at a few read times, so plans are kept per clock
    // until a change that may alter them (most changes add one clock beside a known one and
    // alter that clock's plan only). A proto packet that cannot be converted when read is
    // tried again at the end of its file; other formats' events are dropped then.
    let changes = placement.graph.changes();
    let targets = placement.target_nodes();
    // The clocks (indices into `domains`) read on each graph node.
    let mut on_node: FxHashMap<NodeIndex, Vec<usize>> = FxHashMap::default();
    for (c, d) in domains.iter().enumerate() {
        if let Some(n) = placement.graph_node(*d) {
            on_node.entry(n).or_default().push(c);
        }
    }
    let mut epoch = 0usize;
    let mut last_read: clock::ReadAt = 0;
    let mut now: Vec<Option<Plan>> = vec![None; domains.len()];
    // Forgets the plans that the changes `from..to` may alter.
    let forget = |now: &mut Vec<Option<Plan>>, from: usize, to: usize| {
        for (_, scope) in changes.get(from..to).unwrap_or(&[]) {
            let nodes = match scope {
                ChangeScope::Only(nodes) if !nodes.iter().any(|n| targets.contains(n)) => nodes,
                _ => {
                    now.iter_mut().for_each(|p| *p = None);
                    return;
                }
            };
            for c in nodes.iter().filter_map(|n| on_node.get(n)).flatten() {
                now[*c] = None;
            }
        }
    };
    let mut at_end: Vec<Option<Plan>> = vec![None; domains.len()];
    // The events dropped: (clock, failure, ord, raw ts); counted as the inputs they came
    // from (a systrace line or a proto packet is one event of the reference's however many
    // rows it makes here).
    let mut dropped: Vec<Dropped> = Vec::new();
    // The events placed only at the end of their file: (ord, end of file, trace time).
    let mut held: Vec<Held> = Vec::new();
    let payloads = &sink.payloads;
    let sink_end = &sink.file_spans;
    let mut apply = |ev: &mut Event| -> bool {
        let c = payloads[ev.payload as usize].0 as usize;
        let d = domains[c];
        let at = clock::read_time(ev.ord, d.file);
        if at < last_read {
            epoch = changes.partition_point(|&(t, _)| t <= at);
            now.iter_mut().for_each(|p| *p = None);
        }
        last_read = at;
        if changes.get(epoch).is_some_and(|&(t, _)| t <= at) {
            let to = changes.partition_point(|&(t, _)| t <= at);
            forget(&mut now, epoch, to);
            epoch = to;
        }
        let plan = now[c].get_or_insert_with(|| placement.strict_plan(d, at));
        let failure = match plan {
            Plan::Identity => return true,
            Plan::Path(path) => {
                ev.ts = placement.graph.convert_along_at(path, ev.ts, at);
                return true;
            }
            Plan::Drop(failure) => *failure,
        };
        if Placement::keeps_raw(d) {
            return true;
        }
        let failure = if protos.contains(&d.file) {
            let end = placement.end_of_file(d.file);
            // Placed among the events as if read at the end of its file.
            let after = sink_end.get(&d.file).map_or(u32::MAX, |s| s.1);
            match at_end[c].get_or_insert_with(|| placement.strict_plan(d, end)) {
                Plan::Identity => {
                    held.push((ev.ord, after, ev.ts));
                    return true;
                }
                Plan::Path(path) => {
                    ev.ts = placement.graph.convert_along_at(path, ev.ts, end);
                    held.push((ev.ord, after, ev.ts));
                    return true;
                }
                Plan::Drop(failure) => *failure,
            }
        } else {
            failure
        };
        if payloads[ev.payload as usize].1.counts_as_event() {
            dropped.push((c, failure, ev.ord, ev.ts));
        }
        false
    };
    let mut out = if keep {
        let mut out = Vec::with_capacity(sink.events.len());
        for ev in &sink.events {
            let mut ev = *ev;
            if apply(&mut ev) {
                out.push(ev);
            }
        }
        Some(out)
    } else {
        sink.events.retain_mut(|ev| apply(ev));
        None
    };
    place_latest(
        out.as_mut().unwrap_or(&mut sink.events),
        &sink.payloads,
        &latest,
        &held,
    );
    log_clock_failures(sink, placement, &domains, protos, dropped);
    out
}

/// An event placed at the end of its file: (ord, the file's end read time, trace time).
type Held = (u32, u32, i64);

/// An event dropped by the placement: (clock, failure, ord, raw timestamp).
type Dropped = (usize, Failure, u32, i64);

/// The most `_trace_import_logs` rows written per (file, machine, failure kind); the
/// stats count every failure, and `clock_sync_failure_logs_omitted` the ones not listed.
const MAX_FAILURE_LOGS: usize = 10_000;

/// Counts the events dropped for want of a clock conversion in `clock_sync_failure_<kind>`
/// (and, for proto packets, which were held to the end of their file first,
/// `clock_sync_failure_undeferrable_packet_loss`), and logs each with the raw clock
/// numbers and timestamp (behaviour-merging.md §1 "Other formats").
fn log_clock_failures(
    sink: &mut Sink,
    placement: &Placement,
    domains: &[ClockDomain],
    protos: &std::collections::HashSet<u32>,
    mut dropped: Vec<Dropped>,
) {
    if dropped.is_empty() {
        return;
    }
    // Grouped by (file, machine, kind), each group in reading order.
    dropped.sort_unstable_by_key(|&(c, f, ord, _)| {
        let d = domains[c];
        (d.file, d.machine, f as u8, ord)
    });
    let prev = sink.current_file;
    let mut rest = dropped.as_slice();
    while let Some(&(c0, failure, _, _)) = rest.first() {
        let key = |c: usize| (domains[c].file, domains[c].machine);
        let n = rest
            .iter()
            .take_while(|&&(c, f, _, _)| key(c) == key(c0) && f == failure)
            .count();
        let (group, tail) = rest.split_at(n);
        rest = tail;
        let inputs = first_of_inputs(sink, group);
        let (file, machine) = key(c0);
        sink.current_file = file;
        let count = inputs.len() as i64;
        let name = failure.stat();
        sink.stat(name, machine, count);
        if protos.contains(&file) {
            sink.stat(
                "clock_sync_failure_undeferrable_packet_loss",
                machine,
                count,
            );
        }
        for &(c, _, _, ts) in inputs.iter().take(MAX_FAILURE_LOGS) {
            let source = domains[c];
            let target = placement.target_of(source.file);
            let raw_id = placement
                .node_of(source)
                .map_or(source.clock_id, |n| n.clock_id);
            let mut args = vec![
                sink.arg("source_clock_id", ArgValue::Int(i64::from(raw_id))),
                sink.arg("source_timestamp", ArgValue::Int(ts)),
                sink.arg("target_clock_id", ArgValue::Int(i64::from(target.clock_id))),
            ];
            if (64..128).contains(&raw_id) {
                let seq = i64::from(source.sequence);
                args.push(sink.arg("source_sequence_id", ArgValue::Int(seq)));
            }
            let args = sink.args.push(&args);
            sink.placement_logs.push(crate::model::ImportLogRow {
                ts: None,
                byte_offset: None,
                name,
                file,
                args,
            });
        }
        if inputs.len() > MAX_FAILURE_LOGS {
            let omitted = (inputs.len() - MAX_FAILURE_LOGS) as i64;
            sink.stat("clock_sync_failure_logs_omitted", machine, omitted);
        }
    }
    sink.current_file = prev;
}

/// The first event of each input among `events` (sorted by `ord`): a proto packet or a
/// systrace line that made several events counts once.
fn first_of_inputs(sink: &Sink, events: &[Dropped]) -> Vec<Dropped> {
    let mut out = Vec::new();
    let mut prev: Option<u32> = None;
    for &e in events {
        let o = e.2;
        let same = prev.is_some_and(|p| (p + 1..=o).all(|x| bit(&sink.input_more, x)));
        if !same {
            out.push(e);
        }
        prev = Some(o);
    }
    out
}

/// Puts each untimed packet that goes through the sorter ([`clocks::LATEST`]) at the latest
/// trace-time timestamp of the events read before it, as Trace Processor does ("max(file's
/// latest ts, sorter max)", behaviour-merging.md §1): files are read one after another, so
/// that is the largest timestamp of every converted event earlier in reading order (the
/// sorter's maximum starts at 0 and never takes a negative timestamp, which it drops).
/// `events` are in reading order (`ord`), conversion done. Events `held` to the end of
/// their file were not converted when read: they reach the sorter, and count, only once
/// their file is read.
fn place_latest(
    events: &mut [Event],
    payloads: &[(ClockRef, EventData)],
    latest: &[bool],
    held: &[Held],
) {
    if !latest.iter().any(|&l| l) {
        return;
    }
    let mut held_ords: Vec<u32> = held.iter().map(|h| h.0).collect();
    held_ords.sort_unstable();
    let mut pending: Vec<(u32, i64)> = held.iter().map(|h| (h.1, h.2)).collect();
    pending.sort_unstable();
    let mut next = 0;
    let mut max = 0i64;
    for ev in events {
        while let Some(&(_, ts)) = pending.get(next).filter(|p| p.0 <= ev.ord) {
            max = max.max(ts);
            next += 1;
        }
        if latest
            .get(usize::from(payloads[ev.payload as usize].0))
            .copied()
            .unwrap_or(false)
        {
            ev.ts = max;
        } else if held_ords.binary_search(&ev.ord).is_err() {
            max = max.max(ev.ts);
        }
    }
}

/// Sorts the converted events and drops those before trace time's zero; returns how many
/// events (as the placement counts them) each (file, machine) lost so.
fn sort_and_drop_negative(sink: &mut Sink) -> HashMap<(u32, MachineId), u64> {
    let sorted = sink
        .events
        .windows(2)
        .all(|w| (w[0].ts, w[0].ord) <= (w[1].ts, w[1].ord));
    if !sorted {
        // Keys are unique (`ord` is the push order), so a stable sort orders as an
        // unstable one would; it merges the sorted runs of files (and of a file's
        // sequences) instead of sorting them again.
        sink.events.sort_by_key(|e| (e.ts, e.ord));
    }
    order_ties_by_queue(sink);
    let mut negative = sink.events.partition_point(|e| e.ts < 0);
    let mut lost: HashMap<(u32, MachineId), u64> = HashMap::new();
    for e in &sink.events[..negative] {
        let (clock, data) = &sink.payloads[e.payload as usize];
        if data.counts_as_event() && !data.keeps_negative_ts() {
            let d = sink.clocks.get(u32::from(*clock));
            *lost.entry((d.file, d.machine)).or_default() += 1;
        }
    }
    let payloads = &sink.payloads;
    let kept = |e: &Event| payloads[e.payload as usize].1.keeps_negative_ts();
    // Trace Processor's sorter counts each event pushed to it once: a packet, an ftrace
    // event, a JSON event, however many rows it makes here (an ftrace event is its raw row
    // and its typed event).
    let mut ords: Vec<u32> = sink.events[..negative]
        .iter()
        .filter(|e| !kept(e))
        .map(|e| e.ord)
        .collect();
    let inputs_dropped = count_inputs(sink, &mut ords);
    if sink.events[..negative].iter().any(kept) {
        let before = sink.events.len();
        let mut i = 0;
        sink.events.retain(|e| {
            i += 1;
            i > negative || kept(e)
        });
        negative = before - sink.events.len();
    } else {
        sink.events.drain(..negative);
    }
    if negative > 0 {
        let prev = sink.current_file;
        sink.current_file = NO_FILE;
        sink.stat(
            "trace_sorter_negative_timestamp_dropped",
            NO_MACHINE,
            inputs_dropped as i64,
        );
        sink.current_file = prev;
    }
    lost
}

fn bit(bits: &[u64], o: u32) -> bool {
    bits.get(o as usize / 64)
        .is_some_and(|w| w >> (o % 64) & 1 == 1)
}

/// How many input events (see [`Sink::input_first`]) the events with these ords came
/// from; an event pushed outside any input counts as one of its own.
fn count_inputs(sink: &Sink, ords: &mut [u32]) -> u64 {
    ords.sort_unstable();
    let mut count = 0;
    let mut prev: Option<u32> = None;
    for &o in ords.iter() {
        // The same input as the event before iff every event after that one up to this
        // one continues its input.
        let same = prev.is_some_and(|p| (p + 1..=o).all(|x| bit(&sink.input_more, x)));
        if !same {
            count += 1;
        }
        prev = Some(o);
    }
    count
}

/// A second file on a machine converts through the machine's shared clocks until its first
/// own ClockSnapshot isolates its clocks: each such context counts
/// `clock_sync_mixed_clock_sources` once and logs it at that snapshot, with the number of
/// conversions made before it (behaviour-merging.md §2).
fn mixed_clock_sources(sink: &mut Sink, placement: &Placement) {
    sink.placement_logs.clear();
    let early: Vec<bool> = (0..sink.clocks.len())
        .map(|c| placement.used_primary(sink.clocks.get(c as u32)))
        .collect();
    if !early.contains(&true) {
        return;
    }
    let mut counts: HashMap<(u32, MachineId), i64> = HashMap::new();
    for ev in &sink.events {
        let c = sink.payloads[ev.payload as usize].0 as usize;
        if early.get(c).copied().unwrap_or(false) {
            let d = sink.clocks.get(c as u32);
            *counts.entry((d.file, d.machine)).or_default() += 1;
        }
    }
    let mut counts: Vec<_> = counts.into_iter().collect();
    counts.sort_unstable();
    let prev = sink.current_file;
    for ((file, machine), n) in counts {
        let name = "clock_sync_mixed_clock_sources";
        sink.current_file = file;
        sink.stat(name, machine, 1);
        let arg = sink.arg("num_conversions_using_primary", crate::ir::ArgValue::Int(n));
        let args = sink.args.push(&[arg]);
        let byte_offset = sink.own_snapshots.get(&(file, machine)).copied().flatten();
        sink.placement_logs.push(crate::model::ImportLogRow {
            ts: None,
            byte_offset,
            name,
            file,
            args,
        });
    }
    sink.current_file = prev;
}

/// Per file, the input events none of whose events survived the placement (`survivors`
/// are the events left after clock conversion and the drop before zero).
fn placement_losses(sink: &Sink, survivors: &[Event]) -> Vec<u64> {
    let mut losses = vec![0u64; sink.accounting.len()];
    let end = sink.pushed;
    if sink.input_files.is_empty() || survivors.len() as u64 >= u64::from(end) {
        return losses;
    }
    let mut alive = vec![0u64; (end as usize).div_ceil(64)];
    for e in survivors {
        if let Some(w) = alive.get_mut(e.ord as usize / 64) {
            *w |= 1 << (e.ord % 64);
        }
    }
    let mut o = 0u32;
    while o < end {
        if !bit(&sink.input_first, o) {
            o += 1;
            continue;
        }
        let first = o;
        let mut any = bit(&alive, o);
        o += 1;
        while o < end && bit(&sink.input_more, o) {
            any |= bit(&alive, o);
            o += 1;
        }
        if !any {
            let run = sink.input_files.partition_point(|r| r.0 <= first);
            let file = run.checked_sub(1).map_or(0, |i| sink.input_files[i].1);
            if let Some(n) = losses.get_mut(file as usize) {
                *n += 1;
            }
        }
    }
    losses
}

/// Events at the same time from different sorter queues (ftrace cpus) come out of Trace
/// Processor's queue merge in this order: first the queue that produced the event just
/// before them (the merge keeps extracting from it while its events are not later than
/// every other queue's next one), then the other queues by index, each queue's events
/// in file order. Rows then get the same ids, which queries ordering by `ts` see.
fn order_ties_by_queue(sink: &mut Sink) {
    if sink.queue_runs.is_empty() {
        return;
    }
    // The last event before the current group, by its insertion order; its queue is looked
    // up only when a group of ties needs it.
    let mut previous: Option<u32> = None;
    let mut start = 0;
    let events = &mut sink.events;
    let queue_runs = &sink.queue_runs;
    let queue_of = |ord: u32| {
        let i = queue_runs.partition_point(|r| r.0 <= ord);
        i.checked_sub(1).map_or(0, |i| queue_runs[i].1)
    };
    while start < events.len() {
        let ts = events[start].ts;
        let mut end = start + 1;
        while end < events.len() && events[end].ts == ts {
            end += 1;
        }
        if end - start > 1 {
            let group = &mut events[start..end];
            let first_queue = queue_of(group[0].ord);
            if group.iter().any(|e| queue_of(e.ord) != first_queue) {
                let previous_queue = previous.map(queue_of);
                group.sort_by_key(|e| {
                    let q = queue_of(e.ord);
                    (Some(q) != previous_queue, q, e.ord)
                });
            }
        }
        previous = Some(events[end - 1].ord);
        start = end;
    }
}
