//! The log pane: Android log lines (`android_logs`) in time order, filtered by a lowest
//! priority and a tag; `Enter` puts the timeline on the line under the cursor. Below the
//! list, the line under the cursor in full: its tag, thread and message wrapped (the list
//! cuts them to one row).

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::format;
use super::input::{InputAction, LineInput};
use super::theme::Theme;
use super::timeline::load::{LogEntry, TimelineData};
use super::timeline::truncate_label;
use super::wrap::wrap_line;

/// Rows under the list for the line under the cursor: a rule, its tag and thread, and up to
/// this many rows of its message less two.
const DETAIL_ROWS: usize = 6;

/// Rows of the detail block in a pane `height` rows tall (none when it is too short).
fn detail_rows(height: u16) -> usize {
    if height >= 14 {
        DETAIL_ROWS
    } else {
        0
    }
}

/// Log lines the list shows in a pane `height` rows tall (the title and the footer aside).
pub fn list_rows(height: u16) -> usize {
    (height as usize)
        .saturating_sub(2 + detail_rows(height))
        .max(1)
}

/// Log priorities as logcat prints them, from 2 (verbose) to 7 (fatal).
pub fn prio_letter(prio: i64) -> char {
    match prio {
        2 => 'V',
        3 => 'D',
        4 => 'I',
        5 => 'W',
        6 => 'E',
        7 => 'F',
        _ => '?',
    }
}

#[derive(Debug, Default)]
pub struct LogsState {
    /// Index into the filtered lines.
    pub cursor: usize,
    pub scroll: usize,
    /// Lines below this priority are hidden (2 shows everything).
    pub min_prio: i64,
    /// Only lines whose tag contains this text (case-insensitive).
    pub tag: String,
    /// The tag filter being typed.
    pub input: Option<LineInput>,
}

/// What a key asks of the app.
#[derive(Debug, PartialEq, Eq)]
pub enum LogsCommand {
    /// Show this time on the timeline.
    Jump(i64),
}

impl LogsState {
    pub fn editing(&self) -> bool {
        self.input.is_some()
    }

    fn shows(&self, l: &LogEntry) -> bool {
        l.prio >= self.min_prio
            && (self.tag.is_empty() || l.tag.to_lowercase().contains(&self.tag.to_lowercase()))
    }

    /// The lines the filters let through.
    pub fn visible<'d>(&self, data: &'d TimelineData) -> Vec<&'d LogEntry> {
        data.logs.iter().filter(|l| self.shows(l)).collect()
    }

    pub fn on_key(
        &mut self,
        key: KeyEvent,
        page: usize,
        data: Option<&TimelineData>,
    ) -> Option<LogsCommand> {
        if let Some(input) = &mut self.input {
            match input.handle(key) {
                InputAction::Submit | InputAction::Cancel => self.input = None,
                _ => self.tag = input.text.clone(),
            }
            self.cursor = 0;
            self.scroll = 0;
            return None;
        }
        let total = data.map_or(0, |d| self.visible(d).len());
        let last = total.saturating_sub(1);
        match key.code {
            KeyCode::Char('j') | KeyCode::Down => self.cursor = (self.cursor + 1).min(last),
            KeyCode::Char('k') | KeyCode::Up => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::PageDown => self.cursor = (self.cursor + page).min(last),
            KeyCode::PageUp => self.cursor = self.cursor.saturating_sub(page),
            KeyCode::Char('g') | KeyCode::Home => self.cursor = 0,
            KeyCode::Char('G') | KeyCode::End => self.cursor = last,
            KeyCode::Char('p') => {
                // V → D → I → W → E → F → V.
                self.min_prio = if self.min_prio >= 7 {
                    2
                } else {
                    self.min_prio.max(2) + 1
                };
                self.cursor = 0;
            }
            KeyCode::Char('P') => {
                self.min_prio = 2;
                self.cursor = 0;
            }
            KeyCode::Char('/') => {
                let mut input = LineInput::default();
                input.set(&self.tag);
                self.input = Some(input);
            }
            KeyCode::Esc => {
                self.tag.clear();
                self.min_prio = 2;
                self.cursor = 0;
            }
            KeyCode::Enter => {
                let data = data?;
                let line = self.visible(data).get(self.cursor).map(|l| l.ts)?;
                return Some(LogsCommand::Jump(line));
            }
            _ => {}
        }
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + page.max(1) {
            self.scroll = self.cursor + 1 - page.max(1);
        }
        None
    }
}

fn prio_style(prio: i64, theme: &Theme) -> Style {
    match prio {
        6 | 7 => theme.error(),
        5 => theme.warning(),
        2 | 3 => theme.dim(),
        _ => Style::new(),
    }
}

pub fn draw(
    frame: &mut Frame,
    area: Rect,
    state: &LogsState,
    data: Option<&TimelineData>,
    theme: &Theme,
) {
    let mut lines = Vec::new();
    let shown = match data {
        Some(d) => state.visible(d),
        None => Vec::new(),
    };
    let all = data.map_or(0, |d| d.logs.len());
    let tag = match &state.input {
        Some(input) => format!("{}▏", input.text),
        None if state.tag.is_empty() => "any".to_string(),
        None => state.tag.clone(),
    };
    lines.push(Line::from(vec![
        Span::styled("Android log", theme.title()),
        Span::raw(format!(
            "  {} of {} lines · priority ≥ {} · tag: {}",
            shown.len(),
            all,
            prio_letter(state.min_prio.max(2)),
            tag
        )),
    ]));
    if all == 0 {
        lines.push(Line::styled(
            "The trace has no Android log lines (android.log data source).",
            theme.dim(),
        ));
    }
    let body = list_rows(area.height);
    let start = data.map_or(0, |d| d.start);
    for (i, l) in shown.iter().enumerate().skip(state.scroll).take(body) {
        // A thread cut short keeps its tid, as the timeline's labels do.
        let text = format!(
            "{:>14} {} {:<16.16} {:<20} {}",
            format::offset(l.ts - start),
            prio_letter(l.prio),
            l.tag,
            truncate_label(&l.thread, 20),
            l.msg
        );
        let style = if i == state.cursor {
            theme.cursor()
        } else {
            prio_style(l.prio, theme)
        };
        lines.push(Line::styled(text, style));
    }
    let footer_y = area.bottom().saturating_sub(1);
    frame.render_widget(
        Paragraph::new(lines),
        Rect::new(area.x, area.y, area.width, area.height.saturating_sub(1)),
    );
    let detail = detail_rows(area.height);
    if let (Some(l), true) = (shown.get(state.cursor), detail > 0) {
        let width = area.width as usize;
        let head = Line::from(vec![
            Span::styled(
                format!(" {} {} ", format::offset(l.ts - start), prio_letter(l.prio)),
                prio_style(l.prio, theme),
            ),
            Span::styled(format!("{} ", l.tag), theme.title()),
            Span::styled(" thread ", theme.dim()),
            Span::raw(l.thread.to_string()),
        ]);
        let mut text = wrap_line(&head, width, 2);
        text.extend(wrap_line(&Line::raw(format!(" {}", l.msg)), width, 0));
        let room = detail - 1;
        let cut = text.len() > room;
        text.truncate(room);
        if cut {
            // What does not fit ends in `…`.
            if let Some(last) = text.last_mut() {
                let mut t: String = last.spans.iter().map(|s| s.content.as_ref()).collect();
                t = t.chars().take(width.saturating_sub(1)).collect();
                t.push('…');
                *last = Line::raw(t);
            }
        }
        let mut rows = vec![Line::styled("─".repeat(width), theme.dim())];
        rows.extend(text);
        let y = footer_y.saturating_sub(detail as u16);
        frame.render_widget(
            Paragraph::new(rows),
            Rect::new(area.x, y, area.width, detail as u16),
        );
    }
    frame.render_widget(
        Paragraph::new(Line::styled(
            "j k move · p priority (P all) · / tag · Esc clear · Enter on the timeline",
            theme.dim(),
        )),
        Rect::new(area.x, footer_y, area.width, 1.min(area.height)),
    );
}
