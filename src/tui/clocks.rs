//! The clock graph pane: every clock node (a machine's clock domain, or a file's private
//! timeline), every edge with where it came from and its offset, and for every file the
//! path that placed it on trace time — or why it could not be placed. A list at 80x24;
//! nodes and files side by side when the terminal is wide.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use rusqlite::Connection;

use super::clock_editor::{self, EditCommand, EditState};
use super::format;
use super::sanitize::sanitize;
use super::theme::Theme;
use super::wrap;

#[derive(Clone, Debug, PartialEq)]
pub struct ClockNode {
    pub id: i64,
    pub label: String,
    pub clock_name: String,
    pub machine: Option<String>,
    pub file: Option<String>,
    pub trace_time: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ClockEdge {
    pub src: i64,
    pub dst: i64,
    pub source: String,
    pub offset_ns: i64,
    pub readings: i64,
    pub file: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FilePlacement {
    pub file: String,
    pub status: String,
    pub path: String,
    pub events: i64,
    pub dropped: i64,
}

/// A ClockSnapshot the clock tracker refused (it counts in `invalid_clock_snapshots`).
#[derive(Clone, Debug, PartialEq)]
pub struct RefusedSnapshot {
    pub file: String,
    pub message: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClockGraph {
    pub nodes: Vec<ClockNode>,
    pub edges: Vec<ClockEdge>,
    pub files: Vec<FilePlacement>,
    pub refused: Vec<RefusedSnapshot>,
}

/// What `load` calls a file without a name of its own (a single trace, or the trace in a
/// gzip file), until [`ClockGraph::name_lone_file`] names it after the input.
const LONE_FILE: &str = "(the opened file)";

impl ClockGraph {
    /// Names the file without a name of its own after the input, as the Stats pane does.
    pub fn name_lone_file(&mut self, input: &str) {
        if input.is_empty() {
            return;
        }
        let files = self.files.iter_mut().map(|f| &mut f.file);
        for f in files.chain(self.refused.iter_mut().map(|r| &mut r.file)) {
            if f == LONE_FILE {
                *f = input.to_string();
            }
        }
    }
}

fn clean(v: Option<String>) -> Option<String> {
    v.map(|s| sanitize(&s).into_owned())
        .filter(|s| !s.is_empty())
}

pub fn load(conn: &Connection) -> rusqlite::Result<ClockGraph> {
    let mut graph = ClockGraph::default();
    let mut stmt = conn.prepare(
        "SELECT n.id, n.label, n.clock_name, m.name, f.name, n.is_trace_time
         FROM __sextant_clock_node n
         LEFT JOIN machine m ON m.id = n.machine_id
         LEFT JOIN __intrinsic_trace_file f ON f.id = n.file_id
         ORDER BY n.id",
    )?;
    graph.nodes = stmt
        .query_map([], |r| {
            Ok(ClockNode {
                id: r.get(0)?,
                label: clean(r.get(1)?).unwrap_or_default(),
                clock_name: clean(r.get(2)?).unwrap_or_default(),
                machine: clean(r.get(3)?),
                file: clean(r.get(4)?),
                trace_time: r.get::<_, Option<i64>>(5)?.unwrap_or(0) != 0,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare(
        "SELECT e.src_node_id, e.dst_node_id, e.source, e.offset_ns, e.readings, f.name
         FROM __sextant_clock_edge e
         LEFT JOIN __intrinsic_trace_file f ON f.id = e.file_id
         ORDER BY e.src_node_id, e.id",
    )?;
    graph.edges = stmt
        .query_map([], |r| {
            Ok(ClockEdge {
                src: r.get(0)?,
                dst: r.get(1)?,
                source: clean(r.get(2)?).unwrap_or_default(),
                offset_ns: r.get::<_, Option<i64>>(3)?.unwrap_or(0),
                readings: r.get::<_, Option<i64>>(4)?.unwrap_or(0),
                file: clean(r.get(5)?),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare(&format!(
        "SELECT coalesce(f.name, CASE WHEN f.parent_id IS NULL THEN '{LONE_FILE}' ELSE 'file ' || p.file_id END), p.status, p.path, p.events, p.dropped
         FROM __sextant_file_placement p
         LEFT JOIN __intrinsic_trace_file f ON f.id = p.file_id
         ORDER BY p.file_id",
    ))?;
    graph.files = stmt
        .query_map([], |r| {
            Ok(FilePlacement {
                file: clean(r.get(0)?).unwrap_or_default(),
                status: clean(r.get(1)?).unwrap_or_default(),
                path: clean(r.get(2)?).unwrap_or_default(),
                events: r.get::<_, Option<i64>>(3)?.unwrap_or(0),
                dropped: r.get::<_, Option<i64>>(4)?.unwrap_or(0),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    // A database from a Sextant that did not record them has none to show.
    graph.refused = conn
        .prepare(&format!(
            "SELECT coalesce(f.name, CASE WHEN f.parent_id IS NULL THEN '{LONE_FILE}' ELSE 'file ' || e.file_id END), e.message
             FROM __sextant_clock_error e
             LEFT JOIN __intrinsic_trace_file f ON f.id = e.file_id
             ORDER BY e.rowid",
        ))
        .and_then(|mut stmt| {
            stmt.query_map([], |r| {
                Ok(RefusedSnapshot {
                    file: clean(r.get(0)?).unwrap_or_default(),
                    message: clean(r.get(1)?).unwrap_or_default(),
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()
        })
        .unwrap_or_default();
    Ok(graph)
}

/// What an edge's source means, in words.
pub fn edge_source(source: &str) -> &str {
    match source {
        "snapshot" => "clock snapshot",
        "manifest" => "manifest override",
        "realtime_rendezvous" => "REALTIME rendezvous",
        "same_domain" => "same-domain assumption",
        "reconnect" => "same clock, another file",
        other => other,
    }
}

#[derive(Debug, Default)]
pub struct ClocksState {
    pub graph: Option<Result<ClockGraph, String>>,
    pub scroll: usize,
    /// Editing the manifest: machine names and syncs.
    pub edit: EditState,
}

impl ClocksState {
    /// Keys of the pane; returns work for the import thread (an edit's preview, applying
    /// it, writing an archive).
    pub fn on_key(&mut self, key: KeyEvent, page: usize) -> Option<EditCommand> {
        let editor_keys = matches!(
            key.code,
            KeyCode::Left | KeyCode::Right | KeyCode::Enter | KeyCode::Char('e' | 'u' | 'w' | 'W')
        );
        if self.edit.editing() || editor_keys {
            return self.edit.on_key(key);
        }
        match key.code {
            KeyCode::Down | KeyCode::Char('j') => self.scroll += 1,
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown => self.scroll += page,
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(page),
            KeyCode::Home | KeyCode::Char('g') => self.scroll = 0,
            _ => {}
        }
        None
    }

    /// How a file is placed now (`unconverted`: no clock of its own).
    pub fn status_of(&self, file: &str) -> Option<&str> {
        let Some(Ok(g)) = &self.graph else {
            return None;
        };
        g.files
            .iter()
            .find(|f| f.file == file)
            .map(|f| f.status.as_str())
    }
}

fn node_lines<'a>(g: &'a ClockGraph, theme: &Theme) -> Vec<Line<'a>> {
    let label = |id: i64| {
        g.nodes
            .iter()
            .find(|n| n.id == id)
            .map_or_else(|| format!("node {id}"), |n| n.label.clone())
    };
    let mut lines = Vec::new();
    for n in &g.nodes {
        let mut spans = vec![
            Span::styled(if n.trace_time { "● " } else { "○ " }, theme.key()),
            Span::styled(n.label.clone(), theme.title()),
        ];
        if n.trace_time {
            spans.push(Span::styled("  trace time", theme.ok()));
        }
        lines.push(Line::from(spans));
        for e in g.edges.iter().filter(|e| e.src == n.id) {
            let mut spans = vec![
                Span::raw("    → "),
                Span::raw(label(e.dst)),
                Span::styled(format!("  {}", edge_source(&e.source)), theme.key()),
                Span::raw(format!("  {}", format::offset(e.offset_ns))),
            ];
            if e.readings > 1 {
                spans.push(Span::styled(
                    format!("  ({} readings)", e.readings),
                    theme.dim(),
                ));
            }
            if let Some(f) = &e.file {
                spans.push(Span::styled(format!("  from {f}"), theme.dim()));
            }
            lines.push(Line::from(spans));
        }
    }
    if g.nodes.is_empty() {
        lines.push(Line::styled("no clocks recorded", theme.dim()));
    }
    lines
}

fn file_lines<'a>(g: &'a ClockGraph, theme: &Theme) -> Vec<Line<'a>> {
    let mut lines = Vec::new();
    for f in &g.files {
        let (mark, style) = match f.status.as_str() {
            "trace_time" | "path" => ("✓", theme.ok()),
            "dropped" | "unconverted" => ("✗", theme.error()),
            _ => ("·", theme.dim()),
        };
        let mut head = vec![
            Span::styled(format!("{mark} "), style),
            Span::styled(f.file.clone(), theme.title()),
            Span::styled(format!("  {}", f.status.replace('_', " ")), style),
            Span::styled(format!("  {} events", f.events), theme.dim()),
        ];
        if f.dropped > 0 {
            head.push(Span::styled(
                format!(", {} dropped", f.dropped),
                theme.error(),
            ));
        }
        lines.push(Line::from(head));
        lines.push(Line::raw(format!("    {}", f.path)));
        lines.extend(refused_lines(g, |file| file == f.file, false, theme));
    }
    if g.files.is_empty() {
        lines.push(Line::styled("no files placed yet", theme.dim()));
    }
    // Refused snapshots of files that placed no events.
    lines.extend(refused_lines(
        g,
        |file| !g.files.iter().any(|f| f.file == file),
        true,
        theme,
    ));
    lines
}

/// One line per refused ClockSnapshot of the files `of` picks: the reference's reason
/// (and the file's name when the line is not under the file's own entry).
fn refused_lines<'a>(
    g: &'a ClockGraph,
    of: impl Fn(&str) -> bool,
    name_file: bool,
    theme: &Theme,
) -> Vec<Line<'a>> {
    g.refused
        .iter()
        .filter(|r| of(&r.file))
        .map(|r| {
            let text = if name_file {
                format!("{} ({})", r.message, r.file)
            } else {
                r.message.clone()
            };
            Line::from(vec![
                Span::styled("    ✗ snapshot refused: ", theme.error()),
                Span::raw(text),
            ])
        })
        .collect()
}

pub fn draw(frame: &mut Frame, area: Rect, state: &ClocksState, theme: &Theme) {
    let graph = match &state.graph {
        None => {
            frame.render_widget(
                Paragraph::new(Line::styled(
                    "  the clock graph appears when the import is done…",
                    theme.dim(),
                )),
                area,
            );
            return;
        }
        Some(Err(e)) => {
            frame.render_widget(
                Paragraph::new(vec![
                    Line::styled(format!("  cannot read the clock graph: {e}"), theme.error()),
                    Line::styled(
                        "  (a database written before clock graphs were recorded: import the trace again)",
                        theme.dim(),
                    ),
                ]),
                area,
            );
            return;
        }
        Some(Ok(g)) => g,
    };
    let trace_time = graph
        .nodes
        .iter()
        .find(|n| n.trace_time)
        .map_or("(none)", |n| n.label.as_str());
    // What the editor says can be long (why an edit is refused): it wraps, up to 4 lines.
    let strip = wrap::wrap_line(
        &clock_editor::strip(&state.edit, theme),
        usize::from(area.width.max(1)),
        4,
    );
    let foot_height = (strip.len() as u16).clamp(1, 4);
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(foot_height),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(strip), foot);
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::raw("  trace time is on "),
            Span::styled(trace_time.to_string(), theme.title()),
            Span::styled(
                format!(
                    "  · {} clocks, {} relations, {} · t chooses another",
                    graph.nodes.len(),
                    graph.edges.len(),
                    match graph.files.len() {
                        1 => "1 file".to_string(),
                        n => format!("{n} files"),
                    }
                ),
                theme.dim(),
            ),
        ])),
        head,
    );
    let scroll = state.scroll.min(u16::MAX as usize) as u16;
    if area.width >= 140 {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
                .areas(body);
        let block = Block::new()
            .borders(Borders::TOP)
            .title(" Clocks and relations ");
        let inner = block.inner(left);
        frame.render_widget(
            wrap::paragraph(&node_lines(graph, theme), inner.width, 6)
                .block(block)
                .scroll((scroll, 0)),
            left,
        );
        let block = Block::new()
            .borders(Borders::TOP | Borders::LEFT)
            .title(" How each file reached trace time ");
        let inner = block.inner(right);
        frame.render_widget(
            wrap::paragraph(&file_lines(graph, theme), inner.width, 4)
                .block(block)
                .scroll((scroll, 0)),
            right,
        );
    } else {
        let mut lines = vec![Line::styled("Clocks and relations", theme.dim())];
        lines.extend(node_lines(graph, theme));
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            "How each file reached trace time",
            theme.dim(),
        ));
        lines.extend(file_lines(graph, theme));
        let lines: Vec<Line> = lines
            .into_iter()
            .map(|mut l| {
                l.spans.insert(0, Span::raw("  "));
                l
            })
            .collect();
        frame.render_widget(
            wrap::paragraph(&lines, body.width, 4).scroll((scroll, 0)),
            body,
        );
    }
    clock_editor::draw(frame, body, &state.edit, theme);
}
