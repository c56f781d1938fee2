//! The clock editor as a user drives it (issue 13, and the QA report on it): aligning moves
//! whichever file can move, a failed align leaves the timeline as it was, the editor offers
//! only syncs that move something, an undo says so, and a database opened alone says that
//! editing needs the traces instead of waiting forever.

use super::*;

use sextant::tui::clock_editor::SyncMode;

/// `snapshot!` from this file's directory (insta's path is relative to the caller's file).
macro_rules! snap {
    ($name:expr, $screen:expr) => {
        insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!($name, $screen);
        });
    };
}

/// Selects the first slice named `name` (by search) on the timeline.
fn select(h: &mut Harness, name: &str) {
    h.key(KeyCode::Esc);
    h.key(KeyCode::Char('/'));
    h.keys(name);
    h.key(KeyCode::Enter);
}

#[test]
fn aligning_moves_whichever_file_can_move_in_either_marking_order() {
    let mut h = Harness::demo(120, 40);
    // The log (pinned) first, then the phone (placed by its own snapshots): the log moves.
    select(&mut h, "upload photo");
    h.key(KeyCode::Char('M'));
    select(&mut h, "getCameraCharacteristics");
    let target = match &h.app.timeline.details {
        sextant::tui::timeline::DetailsView::Ready(d) => d.ts,
        other => panic!("no details: {other:?}"),
    };
    h.key(KeyCode::Char('M'));
    assert_eq!(h.app.pane, Pane::Clocks);
    let screen = h.screen();
    assert!(
        screen.contains("Edit app_log.json") && screen.contains("Preview"),
        "{screen}"
    );
    // The strip points at the file being edited.
    assert!(screen.contains("edit ◀ app_log.json ▶"), "{screen}");
    h.key(KeyCode::Enter);
    let db = h.app.db.as_ref().expect("db");
    let conn = sextant::db::open_read_only(&db.path).expect("opens");
    let moved: i64 = conn
        .query_row(
            "SELECT ts FROM slice WHERE name = 'upload photo' ORDER BY abs(ts - ?1) LIMIT 1",
            [target],
            |r| r.get(0),
        )
        .expect("slice");
    assert_eq!(moved, target);
    // Undo says what it did.
    h.key(KeyCode::Char('u'));
    let screen = h.screen();
    assert!(screen.contains("undone:"), "{screen}");
    assert!(!screen.contains("applied:"), "{screen}");
}

#[test]
fn an_align_that_cannot_be_made_stays_on_the_timeline_and_says_why() {
    let mut h = Harness::demo(120, 40);
    select(&mut h, "getCameraCharacteristics");
    h.key(KeyCode::Char('M'));
    select(&mut h, "read heart rate");
    h.key(KeyCode::Char('M'));
    assert_eq!(h.app.pane, Pane::Timeline);
    let screen = h.screen();
    assert!(
        screen.contains(
            "cannot align: neither watch.pftrace nor phone.pftrace can move (both placed by \
             their own clocks); sync one (2, e) first"
        ),
        "{screen}"
    );
    // The next keys are the timeline's: `/` searches, nothing types into a form.
    assert!(h.app.clocks.edit.form.is_none());
    h.key(KeyCode::Char('/'));
    h.keys("layout");
    assert!(h.app.clocks.edit.form.is_none());
    assert!(h.screen().contains("layout"), "{}", h.screen());
}

#[test]
fn the_editor_offers_a_pin_for_a_json_trace_and_a_relate_for_the_others() {
    let mut h = Harness::demo(120, 40);
    h.key(KeyCode::Char('2'));
    // The JSON log: none ↔ PIN, never RELATE.
    h.key(KeyCode::Left);
    h.key(KeyCode::Char('e'));
    h.key(KeyCode::Down);
    let mut seen = Vec::new();
    for _ in 0..4 {
        h.key(KeyCode::Right);
        seen.push(h.app.clocks.edit.form.as_ref().expect("form").mode);
    }
    assert!(!seen.contains(&SyncMode::Relate), "{seen:?}");
    assert!(seen.contains(&SyncMode::Pin), "{seen:?}");
    h.key(KeyCode::Esc);
    // The phone proto: none ↔ RELATE, never PIN.
    h.key(KeyCode::Right);
    h.key(KeyCode::Char('e'));
    assert!(h.screen().contains("Edit phone.pftrace"), "{}", h.screen());
    h.key(KeyCode::Down);
    let mut seen = Vec::new();
    for _ in 0..4 {
        h.key(KeyCode::Right);
        seen.push(h.app.clocks.edit.form.as_ref().expect("form").mode);
    }
    assert!(!seen.contains(&SyncMode::Pin), "{seen:?}");
    assert!(seen.contains(&SyncMode::Relate), "{seen:?}");
}

#[test]
fn a_refused_edit_says_why_wrapped_on_screen() {
    let mut h = Harness::demo(80, 24);
    h.key(KeyCode::Char('2'));
    // Rename the watch onto the phone: a merge of machines needs a new import.
    h.key(KeyCode::Right);
    h.key(KeyCode::Char('e'));
    assert!(h.screen().contains("Edit watch.pftrace"), "{}", h.screen());
    for _ in 0..5 {
        h.key(KeyCode::Backspace);
    }
    h.keys("phone");
    h.key(KeyCode::Enter);
    let screen = h.screen();
    assert!(screen.contains("cannot apply"), "{screen}");
    // Wrapped, the whole reason is on screen, continuation lines indented.
    let flat: String = screen
        .lines()
        .map(|l| l.trim_matches(|c| c == '│' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(flat.contains("--machine watch.pftrace=phone)"), "{screen}");
    snap!("clock_editor_refused_80x24", screen);
}

#[test]
fn a_database_opened_alone_says_editing_needs_the_traces() {
    let db = TempFile::new("opened-edit.sqlite");
    sextant::import::import_path(&data("i1_merge.zip"), db.path()).expect("imports");
    let mut h = Harness::new("opened.sqlite", 120, 40);
    h.send(AppEvent::Import(ImportEvent::Opened { db: db.0.clone() }));
    h.key(KeyCode::Char('2'));
    for key in ['w', 'W', 'e', 'u'] {
        h.key(KeyCode::Char(key));
        let screen = h.screen();
        assert!(
            screen.contains("editing the merge needs the original trace files"),
            "{key}: {screen}"
        );
        assert!(!screen.contains("writing"), "{key}: {screen}");
    }
    h.key(KeyCode::Char('1'));
    select(&mut h, "phone_launch");
    h.key(KeyCode::Char('M'));
    assert_eq!(h.app.pane, Pane::Timeline);
    assert!(
        h.screen().contains(
            "M re-places files, and a database has none: open the traces (or their archive)"
        ),
        "{}",
        h.screen()
    );
    drop(Connection::open(db.path()));
}
