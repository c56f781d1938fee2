//! The help pane: every key, per pane. The README's key table is the same list.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::app::Pane;
use super::theme::Theme;

/// (section, [(keys, what they do)]).
pub const KEYS: &[(&str, &[(&str, &str)])] = &[
    (
        "Everywhere",
        &[
            ("1 2 3 4 5 6", "timeline · clock graph · stats · SQL prompt · CPU profile · Android log"),
            ("t", "trace_time chooser"),
            ("?", "this help"),
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
            ("f", "fit the selected slice"),
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
            ("PgDn PgUp", "scroll the result"),
            ("i, Enter", "back to the prompt (after Esc)"),
            ("j k h l, g G", "scroll rows and columns (after Esc)"),
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

/// The line where the keys of `pane` start (after the keys that work everywhere, which
/// stay in view above the timeline's), as drawn `width` wide.
pub fn section_line(pane: Pane) -> u16 {
    section_line_at(pane, u16::MAX)
}

/// How many lines `text` takes wrapped at word boundaries `width` wide.
fn wrapped(text: &str, width: usize) -> u16 {
    if width == 0 {
        return 1;
    }
    let mut lines = 1u16;
    let mut col = 0usize;
    for word in text.split_inclusive(' ') {
        let n = word.chars().count();
        if col + n.saturating_sub(usize::from(word.ends_with(' '))) > width && col > 0 {
            lines += 1;
            col = 0;
        }
        col += n;
        while col > width {
            lines += 1;
            col -= width;
        }
    }
    lines
}

/// [`section_line`] for a pane `width` wide: long keys wrap as the help draws them.
pub fn section_line_at(pane: Pane, width: u16) -> u16 {
    let title = match pane {
        Pane::Timeline | Pane::Help => return 0,
        Pane::Clocks => "Clock graph (2)",
        Pane::Stats => "Stats (3)",
        Pane::Query => "SQL prompt (4)",
        Pane::Profile => "CPU profile (5)",
        Pane::Logs => "Android log (6)",
        Pane::TraceTime => "trace_time chooser (t)",
    };
    let key_w = if width >= 120 { 34 } else { 22 };
    let mut line = 0u16;
    for (section, keys) in KEYS {
        if *section == title {
            return line;
        }
        for (k, what) in *keys {
            line += wrapped(&format!("   {k:<key_w$} {what}"), width as usize);
        }
        line += 2;
    }
    0
}

pub fn on_key(scroll: &mut u16, key: KeyEvent) {
    match key.code {
        KeyCode::Down | KeyCode::Char('j') => *scroll = scroll.saturating_add(1),
        KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
        KeyCode::PageDown => *scroll = scroll.saturating_add(10),
        KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
        KeyCode::Home | KeyCode::Char('g') => *scroll = 0,
        _ => {}
    }
}

pub fn draw(frame: &mut Frame, area: Rect, scroll: u16, theme: &Theme) {
    let key_w = if area.width >= 120 { 34 } else { 22 };
    let mut lines = Vec::new();
    for (section, keys) in KEYS {
        lines.push(Line::styled(format!(" {section}"), theme.title()));
        for (k, what) in *keys {
            lines.push(Line::from(vec![
                Span::styled(format!("   {k:<key_w$} "), theme.key()),
                Span::raw(*what),
            ]));
        }
        lines.push(Line::raw(""));
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(ratatui::widgets::Wrap { trim: false })
            .scroll((scroll, 0)),
        area,
    );
}
