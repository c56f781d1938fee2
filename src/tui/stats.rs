//! The stats pane: every `stats` row with severity, source, value, machine and file —
//! errors and data losses first, non-zero only unless toggled — and, for the row under the
//! cursor, what it means and how to avoid it. This is where dropped events are reviewed.

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
    pub machine: Option<String>,
    pub file: Option<String>,
}

fn severity_rank(s: &str) -> u8 {
    match s {
        "error" => 0,
        "data_loss" => 1,
        "notice" => 2,
        _ => 3,
    }
}

/// Reads `stats`, worst first.
pub fn load(conn: &Connection) -> rusqlite::Result<Vec<StatRow>> {
    let mut stmt = conn.prepare(
        "SELECT s.name, s.idx, s.severity, s.source, s.value, s.description, m.name, f.name
         FROM stats s
         LEFT JOIN machine m ON m.id = s.machine_id
         LEFT JOIN __intrinsic_trace_file f ON f.id = s.trace_id",
    )?;
    let text = |v: Option<String>| v.map(|s| sanitize(&s).into_owned());
    let mut rows: Vec<StatRow> = stmt
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
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    rows.sort_by(|a, b| {
        (severity_rank(&a.severity), a.value == 0, &a.name, a.idx).cmp(&(
            severity_rank(&b.severity),
            b.value == 0,
            &b.name,
            b.idx,
        ))
    });
    Ok(rows)
}

/// How to avoid a stat that reports lost or dropped data, beyond its description.
pub fn fix(name: &str) -> Option<&'static str> {
    Some(match name {
        n if n.starts_with("clock_sync") => {
            "Fix: record ClockSnapshots in each trace, add a manifest `clocks` override relating the clocks, or press t to put trace time on a clock these events reach."
        }
        "trace_sorter_negative_timestamp_dropped" => {
            "Fix: press t and choose a trace_time clock that starts earlier, or correct the manifest offset_ns."
        }
        n if n.starts_with("json_") => {
            "Fix: the JSON writer emitted malformed events; check the file near the reported events."
        }
        n if n.starts_with("systrace") => "Fix: the systrace text has lines Sextant cannot read; check the tracer's output format.",
        n if n.starts_with("traced_buf") || n.starts_with("traced_chunks") || n.starts_with("traced_patches") => {
            "Fix: enlarge the trace buffer (buffers.size_kb), shorten write_period_ms, or use fill_policy DISCARD."
        }
        "ftrace_cpu_overrun_delta" | "ftrace_cpu_commit_overrun_delta" | "ftrace_cpu_dropped_events_delta" => {
            "Fix: enlarge the ftrace per-cpu buffer (buffer_size_kb), drain it more often (drain_period_ms) or trace fewer events."
        }
        "ftrace_event_unknown" => "Fix: the trace has ftrace events newer than this Sextant; update Sextant (tools/gen_schemas.py ftrace).",
        "syscall_unknown" => "Fix: record SystemInfo (utsname) in the trace so syscall numbers can be named; Sextant knows aarch64, arm, x86 and x86_64.",
        "ftrace_parse_errors" => "Fix: the device's ftrace format differs from what the tracing service expects; update Perfetto on the device.",
        n if n.starts_with("rss_stat") => "Fix: record the process's memory with a kernel that reports rss_stat mm_id with curr, or poll it with process_stats.",
        "proto_truncated" | "proto_packet_decode_failure" => {
            "Fix: the trace file was cut or corrupted; copy it again from the device."
        }
        "sequence_packet_loss_flagged" | "packet_skipped_seq_needs_incremental_state_invalid" => {
            "Fix: the producer lost packets; enlarge the buffer or set incremental_state_config.clear_period_ms."
        }
        n if n.starts_with("slice_") || n.starts_with("misplaced_end") => {
            "Fix: the instrumentation emits unbalanced or overlapping begin/end events; pair them per thread."
        }
        n if n.starts_with("flow_") => "Fix: the instrumentation emits flow ids that do not pair up.",
        _ => return None,
    })
}

#[derive(Debug, Default)]
pub struct StatsState {
    pub rows: Option<Result<Vec<StatRow>, String>>,
    pub show_zero: bool,
    pub cursor: usize,
}

impl StatsState {
    pub fn visible(&self) -> Vec<&StatRow> {
        match &self.rows {
            Some(Ok(rows)) => rows
                .iter()
                .filter(|r| self.show_zero || r.value != 0)
                .collect(),
            _ => Vec::new(),
        }
    }

    pub fn on_key(&mut self, key: KeyEvent, page: usize) {
        let n = self.visible().len();
        match key.code {
            KeyCode::Char('z') | KeyCode::Char('a') => {
                self.show_zero = !self.show_zero;
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

fn severity_style(theme: &Theme, s: &str) -> Style {
    match s {
        "error" => theme.error(),
        "data_loss" => theme.warning(),
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
    let losses = rows
        .iter()
        .filter(|r| severity_rank(&r.severity) <= 1 && r.value != 0)
        .count();
    let [head, table, detail] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(3),
        Constraint::Length(5),
    ])
    .areas(area);
    let summary = if losses > 0 {
        Span::styled(
            format!(
                "  {losses} stats report errors or lost data: they come first, with what to do"
            ),
            theme.warning(),
        )
    } else {
        Span::styled("  no errors or data losses reported", theme.ok())
    };
    let toggle = if state.show_zero {
        format!("  all {} stats shown · z hides zeros", rows.len())
    } else {
        format!(
            "  {} non-zero of {} stats · z shows all",
            visible.len(),
            rows.len()
        )
    };
    frame.render_widget(
        Paragraph::new(vec![Line::from(summary), Line::styled(toggle, theme.dim())]),
        head,
    );

    let width = area.width as usize;
    // Names matter most; narrow terminals shorten machine and file and leave the source
    // out (the lines below the table give the full row).
    let wide = width >= 120;
    let (value_w, machine_w, file_w) = if wide { (12, 16, 28) } else { (7, 8, 10) };
    let source_w = if wide { 9 } else { 0 };
    let name_w = width
        .saturating_sub(2 + 10 + value_w + 1 + source_w + machine_w + 1 + file_w + 1)
        .max(12);
    let source_col = |s: &str| {
        if wide {
            format!(" {}", cut(s, 8))
        } else {
            String::new()
        }
    };
    let mut lines = vec![Line::styled(
        format!(
            "  {} {} {:>value_w$}{} {} {}",
            cut("severity", 9),
            cut("name", name_w),
            "value",
            source_col("source"),
            cut("machine", machine_w),
            cut("file", file_w)
        ),
        theme.title(),
    )];
    let body = table.height.saturating_sub(1) as usize;
    let first = state.cursor.saturating_sub(body.saturating_sub(1));
    for (i, r) in visible.iter().enumerate().skip(first).take(body) {
        let name = match r.idx {
            Some(idx) => format!("{}[{idx}]", r.name),
            None => r.name.clone(),
        };
        let mut line = Line::from(vec![
            Span::raw("  "),
            Span::styled(cut(&r.severity, 9), severity_style(theme, &r.severity)),
            Span::raw(format!(
                " {} {:>value_w$}{} {} {}",
                cut(&name, name_w),
                r.value,
                source_col(&r.source),
                cut(r.machine.as_deref().unwrap_or("-"), machine_w),
                cut(r.file.as_deref().unwrap_or("-"), file_w)
            )),
        ]);
        if i == state.cursor {
            line = line.style(theme.cursor());
        }
        lines.push(line);
    }
    if visible.is_empty() {
        lines.push(Line::styled(
            "  every stat is zero: nothing was lost or dropped · z lists them all",
            theme.ok(),
        ));
    }
    frame.render_widget(Paragraph::new(lines), table);

    if let Some(r) = visible.get(state.cursor) {
        let whence: Vec<String> = [
            Some(format!("{} stat", r.source)),
            r.machine.as_ref().map(|m| format!("machine {m}")),
            r.file.as_ref().map(|f| format!("file {f}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut text = vec![Line::from(vec![
            Span::styled(format!("  {} ", r.name), theme.title()),
            Span::styled(format!("({}): ", whence.join(", ")), theme.dim()),
            Span::raw(r.description.clone()),
        ])];
        if r.value != 0 && severity_rank(&r.severity) <= 1 {
            if let Some(f) = fix(&r.name) {
                text.push(Line::styled(format!("  {f}"), theme.key()));
            }
        }
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: false }), detail);
    }
}
