//! The help pane: every key, per pane. The README's key table is the same list.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::app::Pane;
use super::theme::Theme;
use super::wrap;

/// (section, [(keys, what they do)]).
pub const KEYS: &[(&str, &[(&str, &str)])] = &[
    (
        "Everywhere",
        &[
            ("1 2 3 4 5 6", "timeline · clock graph · stats · SQL prompt · CPU profile · Android log"),
            ("t", "trace_time chooser (Esc goes back)"),
            ("?", "this help (Esc or ? goes back)"),
            ("Tab / Shift-Tab", "next / previous pane"),
            ("q, Ctrl-C", "quit (q types into a focused text field; Esc leaves it first)"),
        ],
    ),
    (
        "Timeline (1)",
        &[
            ("w s, + -", "zoom in / out (W S: 4x)"),
            ("a d, h l, ← →", "pan left / right (A D: a whole screen)"),
            ("j k, ↓ ↑, PgDn PgUp", "move between tracks"),
            ("g G, Home End", "first / last track"),
            ("Space, c", "open / close the machine, process or thread under the cursor"),
            ("C", "close / open every machine"),
            ("Enter", "select the slice in the middle of the view; with one selected, follow its first flow; on a counter, read its value"),
            ("[ ], , .", "previous / next slice on the track"),
            ("f", "fit the selected slice (on a query result's track, the row ] [ went to)"),
            ("0", "fit the whole trace"),
            ("/", "search slice names; n N next / previous match"),
            ("Esc", "clear the selection (then the track filter)"),
            ("M", "mark the selected slice; M on a slice of another file opens the clock editor with that file moved so both start together"),
            ("mouse", "click selects a slice, reads a counter or opens a group; wheel zooms at the pointer, Shift-wheel pans"),
        ],
    ),
    (
        "Timeline: find and summarise",
        &[
            ("T", "filter tracks by name, process, thread, pid or tid (groups stay for context); Enter keeps it, Esc clears it"),
            ("p", "pin the track under the cursor to the top (p on a pinned track unpins it)"),
            ("v", "start an area at the view's middle on the cursor's track (with a slice selected: its span); ← → (Shift more) extend it in time, j k across tracks; v or Enter ends it"),
            ("mouse drag", "select an area"),
            ("< >", "with an area: previous / next aggregate tab (Slices, Thread states, CPU by thread / process, Counters, Samples)"),
            ("j k, o O", "with an area: move in the table; sort by the next column / reverse the sort"),
            ("Enter, n N", "with an area: highlight the row's slices (or thread, or state) and step through them"),
            ("x", "with an area: show the SQL of the tab (runs as is in the SQL pane or sextant query)"),
            ("Esc", "drop the area (then the selection, then the track filter)"),
            ("m", "mark the selection's start (or the view's middle); the ruler shows the distance to the selection"),
        ],
    ),
    (
        "Clock graph (2)",
        &[
            ("j k, PgDn PgUp, g", "scroll"),
            ("← →", "the file to edit"),
            ("e, Enter", "edit its machine name and how it syncs (sync, reference file and clock, offset)"),
            ("↑ ↓, Tab, ← →", "in the editor: field, then choice"),
            ("Enter", "in the editor: preview where every file lands and what drops; Enter again applies (no re-parse)"),
            ("Esc", "in the editor: back to the form, then close"),
            ("u", "undo the last applied edit"),
            ("w", "write the files and the manifest in effect as a new archive (<name>.edited.zip)"),
            ("W", "write only the manifest in effect (<name>.edited.manifest.json)"),
        ],
    ),
    (
        "Stats (3)",
        &[
            ("j k, PgDn PgUp, g G", "move; the lines below say what the stat means and how to avoid it"),
            ("z", "list losses and notices, then non-zero stats, then all"),
        ],
    ),
    (
        "SQL prompt (4)",
        &[
            ("Enter", "run the query (a \\ at the end of the line continues it)"),
            ("↑ ↓", "history (kept across runs)"),
            ("← → Home End, Ctrl-A Ctrl-E Ctrl-U Ctrl-K Ctrl-W", "edit the line"),
            ("Esc", "interrupt a running query, else leave the prompt"),
            ("PgDn PgUp", "page through the result"),
            ("i", "back to the prompt (after Esc)"),
            ("j k, g G, h l", "after Esc: select a row of the result; scroll the columns"),
            ("Enter", "after Esc: put the timeline on the selected row (its ts and dur; the slice its slice_id or id names is selected)"),
            ("T", "after Esc: put a result with ts and dur (and name, utid or track_id) on the timeline as tracks pinned on top; ] [ there step through its rows"),
        ],
    ),
    (
        "CPU profile (5)",
        &[
            ("j k, ↓ ↑, PgDn PgUp, g G", "move"),
            ("l h, → ←", "open a frame's callees / close it (or go to its caller)"),
            ("Enter, Space", "open / close"),
            ("e E", "open everything below the cursor / everything"),
            ("C", "close everything"),
            ("[ ]", "whole trace, then each thread with samples"),
            ("/", "search frame names; n N next / previous match"),
        ],
    ),
    (
        "Android log (6)",
        &[
            ("j k, ↓ ↑, PgDn PgUp, g G", "move"),
            ("p, P", "raise the lowest priority shown (V D I W E F) / show every priority"),
            ("/", "show only tags containing the text typed"),
            ("Esc", "clear the filters"),
            ("Enter", "put the timeline on the line's time"),
        ],
    ),
    (
        "trace_time chooser (t)",
        &[
            ("j k, ↓ ↑", "move"),
            ("Enter", "put trace time on that clock (re-places every event in the background)"),
        ],
    ),
];

/// The help as drawn `width` wide: every line wrapped at word boundaries, a key's text
/// continuing under its text (not at column 0).
pub fn lines(width: u16) -> Vec<Line<'static>> {
    let key_w = if width >= 120 { 34 } else { 22 };
    let mut out = Vec::new();
    for (section, keys) in KEYS {
        out.push(Line::styled(
            format!(" {section}"),
            Style::new().add_modifier(Modifier::BOLD),
        ));
        for (k, what) in *keys {
            let line = Line::from(vec![
                Span::styled(
                    format!("   {k:<key_w$} "),
                    Style::new().add_modifier(Modifier::DIM),
                ),
                Span::raw(*what),
            ]);
            // Continuation lines start under the description.
            out.extend(wrap::wrap_line(&line, usize::from(width.max(1)), key_w + 1));
        }
        out.push(Line::raw(""));
    }
    out
}

fn title(pane: Pane) -> Option<&'static str> {
    Some(match pane {
        Pane::Timeline | Pane::Help => return None,
        Pane::Clocks => "Clock graph (2)",
        Pane::Stats => "Stats (3)",
        Pane::Query => "SQL prompt (4)",
        Pane::Profile => "CPU profile (5)",
        Pane::Logs => "Android log (6)",
        Pane::TraceTime => "trace_time chooser (t)",
    })
}

/// The line where the keys of `pane` start (after the keys that work everywhere, which
/// stay in view above the timeline's).
pub fn section_line(pane: Pane) -> u16 {
    section_line_at(pane, u16::MAX)
}

/// [`section_line`] for a pane `width` wide: long keys wrap as the help draws them.
pub fn section_line_at(pane: Pane, width: u16) -> u16 {
    let Some(title) = title(pane) else { return 0 };
    let head = format!(" {title}");
    lines(width.min(1000))
        .iter()
        .position(|l| l.spans.first().is_some_and(|s| s.content == head))
        .map_or(0, |i| i as u16)
}

/// The furthest the help scrolls in `area`: its last line at the bottom.
pub fn max_scroll(area: Rect) -> u16 {
    (lines(area.width).len() as u16).saturating_sub(area.height)
}

/// Keys of the help in `area`: j/k a line, PgDn/PgUp a page, g/G the ends; never past the
/// last line.
pub fn on_key(scroll: &mut u16, key: KeyEvent, area: Rect) {
    let max = max_scroll(area);
    let page = area.height.saturating_sub(1).max(1);
    *scroll = match key.code {
        KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
        KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
        KeyCode::PageDown | KeyCode::Char(' ') => scroll.saturating_add(page),
        KeyCode::PageUp => scroll.saturating_sub(page),
        KeyCode::Home | KeyCode::Char('g') => 0,
        KeyCode::End | KeyCode::Char('G') => max,
        _ => *scroll,
    }
    .min(max);
}

pub fn draw(frame: &mut Frame, area: Rect, scroll: u16, theme: &Theme) {
    let lines: Vec<Line> = lines(area.width)
        .into_iter()
        .map(|mut l| {
            // The layout's styles, in the theme's colours.
            for s in &mut l.spans {
                if s.style.add_modifier.contains(Modifier::BOLD) {
                    s.style = theme.title();
                } else if s.style.add_modifier.contains(Modifier::DIM) {
                    s.style = theme.key();
                }
            }
            l
        })
        .collect();
    let scroll = scroll.min(max_scroll(area));
    frame.render_widget(Paragraph::new(lines).scroll((scroll, 0)), area);
}
