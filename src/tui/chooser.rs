//! The trace_time chooser: every clock trace time could be put on, the current one marked,
//! and what choosing each would cost in dropped events. Enter re-places every event on the
//! chosen clock in the background (no re-parse); the other panes follow when it is done.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;
use rusqlite::Connection;

use crate::import::TraceTimeCandidate;

use super::sanitize::sanitize;
use super::theme::Theme;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub node: u32,
    pub label: String,
    pub current: bool,
    pub dropped_events: u64,
}

impl From<&TraceTimeCandidate> for Candidate {
    fn from(c: &TraceTimeCandidate) -> Candidate {
        Candidate {
            node: c.node,
            label: sanitize(&c.label).into_owned(),
            current: c.current,
            dropped_events: c.dropped_events,
        }
    }
}

/// The candidates recorded in a database (for one opened as is).
pub fn load(conn: &Connection) -> rusqlite::Result<Vec<Candidate>> {
    let mut stmt = conn.prepare(
        "SELECT node_id, label, is_current, dropped_events FROM __sextant_trace_time_candidate
         ORDER BY node_id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(Candidate {
            node: r.get::<_, i64>(0)?.try_into().unwrap_or(u32::MAX),
            label: sanitize(&r.get::<_, Option<String>>(1)?.unwrap_or_default()).into_owned(),
            current: r.get::<_, Option<i64>>(2)?.unwrap_or(0) != 0,
            dropped_events: r.get::<_, Option<i64>>(3)?.unwrap_or(0).max(0) as u64,
        })
    })?;
    rows.collect()
}

#[derive(Debug, Default)]
pub struct ChooserState {
    pub candidates: Option<Result<Vec<Candidate>, String>>,
    pub cursor: usize,
    /// The trace was imported in this session, so it can be re-placed.
    pub can_switch: bool,
    /// The label being switched to, while the switch runs.
    pub switching: Option<String>,
    /// The outcome of the last switch.
    pub message: Option<Result<String, String>>,
}

impl ChooserState {
    pub fn set(&mut self, candidates: Vec<Candidate>) {
        self.cursor = candidates.iter().position(|c| c.current).unwrap_or(0);
        self.candidates = Some(Ok(candidates));
    }

    fn list(&self) -> &[Candidate] {
        match &self.candidates {
            Some(Ok(c)) => c,
            _ => &[],
        }
    }

    /// A key; returns the clock node to switch to when the user chose one.
    pub fn on_key(&mut self, key: KeyEvent) -> Option<u32> {
        let n = self.list().len();
        match key.code {
            KeyCode::Down | KeyCode::Char('j') => {
                self.cursor = (self.cursor + 1).min(n.saturating_sub(1))
            }
            KeyCode::Up | KeyCode::Char('k') => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Home | KeyCode::Char('g') => self.cursor = 0,
            KeyCode::End | KeyCode::Char('G') => self.cursor = n.saturating_sub(1),
            KeyCode::Enter => {
                let c = self.list().get(self.cursor)?.clone();
                if self.switching.is_some() {
                    return None;
                }
                if !self.can_switch {
                    self.message = Some(Err(
                        "this database was opened as it is: open the trace itself to switch trace_time".into(),
                    ));
                    return None;
                }
                if c.current {
                    self.message = Some(Ok(format!("trace time is already on {}", c.label)));
                    return None;
                }
                self.switching = Some(c.label.clone());
                self.message = None;
                return Some(c.node);
            }
            _ => {}
        }
        None
    }
}

pub fn draw(frame: &mut Frame, area: Rect, state: &ChooserState, theme: &Theme) {
    let [head, list, foot] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(1),
        Constraint::Length(3),
    ])
    .areas(area);
    frame.render_widget(
        Paragraph::new(vec![
            Line::styled("  Which clock is trace time?", theme.title()),
            Line::styled(
                "  Every event is re-placed on the chosen clock; what cannot reach it is dropped.",
                theme.dim(),
            ),
        ])
        .wrap(Wrap { trim: false }),
        head,
    );
    let candidates = match &state.candidates {
        None => {
            frame.render_widget(
                Paragraph::new(Line::styled(
                    "  candidates appear when the import is done…",
                    theme.dim(),
                )),
                list,
            );
            return;
        }
        Some(Err(e)) => {
            frame.render_widget(
                Paragraph::new(Line::styled(
                    format!("  cannot read the candidates: {e}"),
                    theme.error(),
                )),
                list,
            );
            return;
        }
        Some(Ok(c)) if c.is_empty() => {
            let why = if state.can_switch {
                "  this trace has no clock to choose from"
            } else {
                "  no candidates recorded: a database opened as it is cannot be re-placed; open the trace itself"
            };
            frame.render_widget(
                Paragraph::new(Line::styled(why, theme.dim())).wrap(Wrap { trim: false }),
                list,
            );
            return;
        }
        Some(Ok(c)) => c,
    };
    let width = (area.width as usize).saturating_sub(30).max(10);
    let mut lines = vec![Line::styled(
        format!("     {:<width$} {:>16}", "clock", "would drop"),
        theme.title(),
    )];
    let rows = list.height.saturating_sub(1) as usize;
    let first = state.cursor.saturating_sub(rows.saturating_sub(1));
    for (i, c) in candidates.iter().enumerate().skip(first).take(rows) {
        let label: String = if c.label.chars().count() > width {
            c.label.chars().take(width - 1).chain(['…']).collect()
        } else {
            c.label.clone()
        };
        let dropped = if c.dropped_events == 0 {
            Span::styled(format!(" {:>16}", "nothing"), theme.ok())
        } else {
            Span::styled(format!(" {:>9} events", c.dropped_events), theme.warning())
        };
        let mut line = Line::from(vec![
            Span::styled(if c.current { "  ● " } else { "  ○ " }, theme.key()),
            Span::raw(format!("{label:<width$}")),
            dropped,
            Span::styled(if c.current { "  current" } else { "" }, theme.ok()),
        ]);
        if i == state.cursor {
            line = line.style(theme.cursor());
        }
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(lines), list);
    let foot_line = if let Some(label) = &state.switching {
        Line::styled(
            format!("  re-placing every event on {label}… (keys still work)"),
            theme.warning(),
        )
    } else {
        match &state.message {
            Some(Ok(m)) => Line::styled(format!("  {m}"), theme.ok()),
            Some(Err(m)) => Line::styled(format!("  {m}"), theme.error()),
            // A database opened on its own lists what each clock would drop (recorded at
            // import) but has no events to re-place.
            None if !state.can_switch => Line::styled(
                "  as recorded at import: a database cannot be re-placed (open the trace to switch)",
                theme.dim(),
            ),
            None => Line::styled("  ↑/↓ choose · Enter switches trace time", theme.dim()),
        }
    };
    frame.render_widget(Paragraph::new(foot_line).wrap(Wrap { trim: false }), foot);
}
