//! A new user's hour on fresh real traces (notes qa2.md): the log pane shows the line under
//! the cursor in full and keeps a cut thread's tid; the ruler keeps its span beside a wall
//! clock's long start time, and its ticks keep their nanoseconds at the deepest zoom.

use super::*;

/// `snapshot!` from this file's directory (insta's path is relative to the caller's file).
macro_rules! snap {
    ($name:expr, $screen:expr) => {
        insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!($name, $screen);
        });
    };
}

#[test]
fn log_pane_shows_the_line_under_the_cursor_in_full_and_keeps_a_cut_threads_tid() {
    let mut h = Harness::fixture("qa2_log.pftrace", 80, 24);
    h.key(KeyCode::Char('6'));
    let screen = h.screen();
    // The list cuts the thread in its middle, so its tid stays.
    assert!(screen.contains("ThreadPoolSin… 12490"), "{screen}");
    // The message's end, past the 80 columns of the list, is in the detail below it.
    assert!(screen.contains("END-OF-MESSAGE"), "{screen}");
    assert!(
        screen.contains("thread ThreadPoolSingleThreadSharedForegroundBlocking0"),
        "{screen}"
    );
    snap!("qa2_log_pane_detail_80x24", screen);
    // The detail follows the cursor.
    h.key(KeyCode::Char('j'));
    let screen = h.screen();
    assert!(!screen.contains("END-OF-MESSAGE"), "{screen}");
    assert!(screen.contains(" a short one"), "{screen}");
}

#[test]
fn log_pane_detail_sits_above_the_footer_and_goes_when_the_pane_is_short() {
    let mut h = Harness::fixture("qa2_log.pftrace", 80, 16);
    h.key(KeyCode::Char('6'));
    h.key(KeyCode::Char('j'));
    let screen = h.screen();
    // 16 rows: tabs, title, 6 list rows, the detail (a rule and 5 rows), footer, status.
    let lines: Vec<&str> = screen.lines().collect();
    assert!(lines[3].contains("a short one"), "{screen}");
    assert!(lines[8].starts_with('─'), "{screen}");
    assert!(lines[9].contains("E short  thread main 100"), "{screen}");
    // Too short a pane keeps every row for the list.
    let mut h = Harness::fixture("qa2_log.pftrace", 80, 15);
    h.key(KeyCode::Char('6'));
    let screen = h.screen();
    assert!(!screen.contains('─'), "{screen}");
}

#[test]
fn ruler_keeps_the_span_beside_a_wall_clock_start_at_80_columns() {
    let h = Harness::fixture("qa2_wallclock.json", 80, 24);
    let screen = h.screen();
    let ruler = screen.lines().nth(1).expect("a ruler row");
    assert!(ruler.contains("17958246"), "{screen}");
    assert!(ruler.contains('◂') && ruler.contains('▸'), "{screen}");
    snap!("qa2_wallclock_ruler_80x24", screen);
}

#[test]
fn ruler_ticks_keep_their_nanoseconds_at_the_deepest_zoom() {
    let mut h = Harness::fixture("qa2_wallclock.json", 160, 48);
    let start = first_start(&h, "request");
    // 40 ns of view, 5 s after the start.
    h.app.timeline.view_start = start + 5_000_000_000;
    h.app.timeline.view_span = 40;
    let screen = h.screen();
    let ticks: Vec<&str> = screen
        .lines()
        .nth(2)
        .expect("a tick row")
        .split('╵')
        .skip(1)
        .map(str::trim)
        .collect();
    assert!(ticks.len() >= 2, "{screen}");
    // Every tick reads differently (each was `+5 s`).
    let mut unique = ticks.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ticks.len(), "{screen}");
    assert!(
        ticks.iter().all(|t| t.starts_with("+5.0000000")),
        "{screen}"
    );
}

#[test]
fn f_fits_the_row_a_query_results_track_stepped_to() {
    let mut h = Harness::fixture("qa2_wallclock.json", 80, 24);
    h.key(KeyCode::Char('4'));
    h.keys("select ts, dur, name from slice where name = 'late'");
    h.key(KeyCode::Enter);
    h.key(KeyCode::Esc);
    h.keys("T");
    assert_eq!(h.app.pane, Pane::Timeline);
    // The whole trace is in view, so `]` leaves the view as it is and `f` zooms to the row.
    h.keys("]");
    let before = h.app.timeline.view_span;
    h.keys("f");
    let start = first_start(&h, "late");
    let (s, span) = (h.app.timeline.view_start, h.app.timeline.view_span);
    assert!(span < before / 4, "span {span} was {before}");
    assert!(s <= start && start + 300_000_000 <= s + span, "{s} {span}");
}

#[test]
fn a_sql_result_says_which_query_made_it() {
    let mut h = Harness::fixture("qa2_wallclock.json", 80, 24);
    h.key(KeyCode::Char('4'));
    h.keys("select name from slice \\");
    h.key(KeyCode::Enter);
    h.keys("order by ts");
    h.key(KeyCode::Enter);
    let screen = h.screen();
    // The prompt is empty again; the status line names the query, on one line.
    assert!(screen.contains("  sql>\n"), "{screen}");
    assert!(screen.contains("3 rows in"), "{screen}");
    assert!(
        screen.contains("· select name from slice order by…"),
        "{screen}"
    );
    snap!("qa2_sql_result_names_its_query_80x24", screen);
    // A failed query after it leaves the error, not the old query, on the status line.
    h.keys("select nope");
    h.key(KeyCode::Enter);
    let screen = h.screen();
    assert!(screen.contains("error after"), "{screen}");
    assert!(!screen.contains("· select name"), "{screen}");
}
