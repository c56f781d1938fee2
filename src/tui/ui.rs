//! The frame: a tab bar, the active pane, and a status line with the import's progress.
//! A pure function of the app state.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use ratatui::Frame;

use crate::import::Stage;

use super::app::{App, ImportStatus, Pane, Running};
use super::importer::ImportFailure;
use super::theme::Theme;
use super::{chooser, clocks, format, help, logs, profile, query, stats, timeline};

/// The pane's area for a terminal of this size (below the tabs, above the status line).
pub fn body_area(size: Rect) -> Rect {
    Rect::new(
        size.x,
        size.y + 1,
        size.width,
        size.height.saturating_sub(2),
    )
}

pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    let [tabs, _, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(area);
    let body = body_area(area);
    draw_tabs(frame, tabs, app);
    if let (ImportStatus::Failed(f), false) = (&app.import, app.pane == Pane::Help) {
        draw_failure(frame, body, f, &app.theme);
    } else {
        match app.pane {
            Pane::Timeline => {
                let waiting = match &app.import {
                    ImportStatus::Running(_) => {
                        Some("importing… the timeline fills as the rows land")
                    }
                    _ => None,
                };
                timeline::draw(frame, body, &app.timeline, &app.theme, waiting)
            }
            Pane::Clocks => clocks::draw(frame, body, &app.clocks, &app.theme),
            Pane::Stats => stats::draw(frame, body, &app.stats, &app.theme),
            Pane::Query => query::draw(frame, body, &app.query, &app.theme),
            Pane::Profile => profile::draw(frame, body, &app.profile, &app.theme),
            Pane::Logs => logs::draw(
                frame,
                body,
                &app.logs,
                app.timeline.data.as_deref(),
                &app.theme,
            ),
            Pane::TraceTime => chooser::draw(frame, body, &app.chooser, &app.theme),
            Pane::Help => help::draw(frame, body, app.help_scroll, &app.theme),
        }
    }
    draw_status(frame, status, app);
}

fn draw_tabs(frame: &mut Frame, area: Rect, app: &App) {
    let mut spans = Vec::new();
    let compact = area.width < 100;
    for pane in Pane::ALL {
        if !app.pane_shown(pane) {
            continue;
        }
        let title = if compact && pane == Pane::Clocks {
            "Clocks"
        } else {
            pane.title()
        };
        let text = format!(" {} {} ", pane.key(), title);
        if pane == app.pane {
            spans.push(Span::styled(text, app.theme.active_tab()));
        } else {
            spans.push(Span::styled(text, app.theme.dim()));
        }
    }
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let room = (area.width as usize).saturating_sub(used + 1);
    if room > 8 {
        let name = super::sanitize::sanitize(&app.title).into_owned();
        let name = if name.chars().count() > room {
            let tail: String = name
                .chars()
                .rev()
                .take(room - 1)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            format!("…{tail}")
        } else {
            name
        };
        spans.push(Span::raw(format!("{name:>room$}")));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_failure(frame: &mut Frame, area: Rect, f: &ImportFailure, theme: &Theme) {
    let mut lines = vec![Line::raw("")];
    if let Some(file) = &f.file {
        lines.push(Line::from(vec![
            Span::styled("  file     ", theme.dim()),
            Span::styled(super::sanitize::sanitize(file).into_owned(), theme.title()),
        ]));
    }
    for (i, l) in f.message.lines().enumerate() {
        lines.push(Line::from(vec![
            Span::styled(
                if i == 0 { "  problem  " } else { "           " },
                theme.dim(),
            ),
            Span::styled(super::sanitize::sanitize(l).into_owned(), theme.error()),
        ]));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "  Nothing was imported. Fix or remove that file and open the trace again.",
        theme.dim(),
    ));
    lines.push(Line::styled("  q quits · ? shows the keys", theme.dim()));
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(theme.error())
        .title(Span::styled(" The import failed ", theme.error()));
    let inner = Rect::new(
        area.x + 1,
        area.y + 1,
        area.width.saturating_sub(2),
        area.height.saturating_sub(2),
    );
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        inner,
    );
}

fn bar(fraction: f64, width: usize) -> String {
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = (fraction.clamp(0.0, 1.0) * width as f64 * 8.0).round() as usize;
    let mut s: String = "█".repeat(eighths / 8);
    if eighths / 8 < width {
        s.push(PARTS[eighths % 8]);
    }
    format!("{s:<width$}")
}

fn progress_spans(label: &str, r: &Running, theme: &Theme, width: u16) -> Vec<Span<'static>> {
    let bar_w = if width >= 120 { 24 } else { 12 };
    let secs = r.elapsed.as_secs_f64();
    let mut spans = vec![
        Span::styled(format!(" {label} "), theme.title()),
        Span::styled(format!("▕{}▏", bar(r.fraction(), bar_w)), theme.bar()),
        Span::raw(format!(" {:>3.0}%", r.fraction() * 100.0)),
    ];
    // Most telling first: a narrow terminal cuts the end of the line.
    let mut facts = vec![format!("{secs:.1} s")];
    match &r.progress {
        None => facts.push("starting".to_string()),
        Some(p) => {
            facts.push(match &p.stage {
                Stage::Reading => "reading".to_string(),
                Stage::Parsing { file } => format!("parsing {}", super::sanitize::sanitize(file)),
                Stage::Placing => "placing on trace time".to_string(),
                Stage::Writing => "writing".to_string(),
                Stage::Done => "done".to_string(),
            });
            let events = if p.stage == Stage::Writing {
                r.parsed.max(p.events)
            } else {
                p.events
            };
            facts.push(format!("{} events", format::count(events as f64)));
            if secs > 0.05 {
                facts.push(format!("{} ev/s", format::count(events as f64 / secs)));
            }
            facts.push(format!("{}/{} files", p.files_done, p.files_total));
            facts.push(format!(
                "{}/{}",
                format::bytes(p.bytes_done),
                format::bytes(p.bytes_total)
            ));
        }
    }
    spans.push(Span::styled(format!(" {}", facts.join(" · ")), theme.dim()));
    spans
}

fn draw_status(frame: &mut Frame, area: Rect, app: &App) {
    let theme = &app.theme;
    let line = if let Some(r) = &app.replacing {
        Line::from(progress_spans("Re-placing", r, theme, area.width))
    } else {
        match &app.import {
            ImportStatus::Running(r) => {
                Line::from(progress_spans("Importing", r, theme, area.width))
            }
            ImportStatus::Failed(f) => Line::from(vec![
                Span::styled(" import failed: ", theme.error()),
                Span::raw(
                    super::sanitize::sanitize(f.file.as_deref().unwrap_or(&app.title)).into_owned(),
                ),
                Span::styled("  · q quits", theme.dim()),
            ]),
            ImportStatus::Done(_) if app.notice.is_some() => Line::styled(
                format!(" {}", app.notice.as_deref().unwrap_or_default()),
                theme.key(),
            ),
            ImportStatus::Done(summary) => {
                let what = match summary {
                    Some(s) => format!(
                        " {} events from {} file{} in {:.1} s{}",
                        format::count(s.events as f64),
                        s.files,
                        if s.files == 1 { "" } else { "s" },
                        s.total_secs,
                        // Losses a parser counted (a truncated member, a bad JSON
                        // event) drop no placed event but must be seen too.
                        match (s.dropped_events, app.stats.losses()) {
                            (0, 0) => String::new(),
                            (0, 1) => " · 1 loss, see 3".to_string(),
                            (0, n) => format!(" · {n} losses, see 3"),
                            (d, _) => format!(" · {d} dropped, see 3"),
                        },
                    ),
                    None => " opened database".to_string(),
                };
                let hint = "q quit · ? help ";
                let room = (area.width as usize).saturating_sub(hint.chars().count());
                // Cut with an ellipsis and a space, so the text never runs into the hint.
                let what: String = if what.chars().count() < room {
                    what
                } else {
                    let mut cut: String = what.chars().take(room.saturating_sub(2)).collect();
                    cut.push_str("… ");
                    cut
                };
                Line::from(vec![
                    Span::styled(format!("{what:<room$}"), theme.dim()),
                    Span::styled(hint, theme.dim()),
                ])
            }
        }
    };
    frame.render_widget(Paragraph::new(line), area);
}

#[cfg(test)]
mod tests {
    use super::bar;

    #[test]
    fn progress_bar_fills_by_eighths() {
        assert_eq!(bar(0.0, 4), "    ");
        assert_eq!(bar(0.5, 4), "██  ");
        assert_eq!(bar(1.0, 4), "████");
        assert_eq!(bar(0.5 + 1.0 / 32.0, 4), "██▏ ");
    }
}
