//! Editing the manifest of an imported session: a preview says how far each file moves and
//! what would drop, applying re-places without parsing again, machines can be renamed, and
//! the result writes as a new archive that imports the same way.

mod common;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use sextant::import::Session;
use sextant::manifest::{ClockOverride, SyncTo};

use common::TempFile;

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn session(db: &Path) -> Session {
    let files = sextant::source::open(&data("i1_merge.zip")).expect("opens");
    let never = AtomicBool::new(false);
    Session::import("i1_merge.zip", files, db, &mut |_| {}, &never).expect("imports")
}

fn first_log_ts(db: &Path) -> i64 {
    let conn = sextant::db::open_read_only(db).expect("db");
    conn.query_row(
        "SELECT min(s.ts) FROM slice s JOIN __sextant_track_file f ON f.track_id = s.track_id
         JOIN __intrinsic_trace_file tf ON tf.id = f.file_id WHERE tf.name = 'app_log.json'",
        [],
        |r| r.get(0),
    )
    .expect("a slice of the log")
}

#[test]
fn an_edited_offset_previews_then_moves_the_file_by_exactly_that() {
    let db = TempFile::new("edit-0.sqlite");
    let mut s = session(db.path());
    let before = first_log_ts(db.path());
    let mut m = s.manifest();
    let log = m
        .files
        .iter_mut()
        .find(|e| e.path == "app_log.json")
        .expect("an entry");
    let clocks = log.clocks.as_mut().expect("the log is pinned");
    clocks.offset_ns += 1_000_000_000;
    let preview = s.preview_manifest(&m).expect("preview");
    let log = preview
        .iter()
        .find(|p| p.file == "app_log.json")
        .expect("the log");
    assert_eq!(log.shift_ns, Some(1_000_000_000), "{preview:?}");
    for other in preview.iter().filter(|p| p.file != "app_log.json") {
        assert_eq!(other.shift_ns, Some(0), "{other:?}");
    }
    // The preview wrote nothing: the session still answers for the old placement.
    let db1 = TempFile::new("edit-1.sqlite");
    let never = AtomicBool::new(false);
    s.apply_manifest(m.clone(), db1.path(), &mut |_| {}, &never)
        .expect("applies");
    assert_eq!(first_log_ts(db1.path()) - before, 1_000_000_000);
    assert_eq!(s.manifest(), m);
}

#[test]
fn a_pin_far_back_previews_its_drops() {
    let db = TempFile::new("edit-drop.sqlite");
    let s = session(db.path());
    let mut m = s.manifest();
    let log = m
        .files
        .iter_mut()
        .find(|e| e.path == "app_log.json")
        .expect("an entry");
    log.clocks = Some(ClockOverride {
        clock: None,
        machine: None,
        sync_to: SyncTo {
            file: "phone.pftrace".into(),
            machine: None,
            clock: sextant::manifest::clock_id("BOOTTIME"),
        },
        offset_ns: -1_000_000_000_000_000,
    });
    let preview = s.preview_manifest(&m).expect("preview");
    let log = preview
        .iter()
        .find(|p| p.file == "app_log.json")
        .expect("log");
    assert_eq!(log.dropped, log.events, "{log:?}");
    assert!(log.events > 0);
}

#[test]
fn machines_are_renamed_but_not_merged_and_the_result_imports_the_same() {
    let db = TempFile::new("edit-rename.sqlite");
    let mut s = session(db.path());
    let mut m = s.manifest();
    let watch = m
        .files
        .iter_mut()
        .find(|e| e.path == "watch.pftrace")
        .expect("watch");
    watch.machine = Some("wrist".into());
    let db1 = TempFile::new("edit-rename-1.sqlite");
    let never = AtomicBool::new(false);
    s.apply_manifest(m.clone(), db1.path(), &mut |_| {}, &never)
        .expect("applies");
    let conn = sextant::db::open_read_only(db1.path()).expect("db");
    let names: String = conn
        .query_row(
            "SELECT group_concat(name, ',') FROM (SELECT name FROM machine
             WHERE name IS NOT NULL ORDER BY name)",
            [],
            |r| r.get(0),
        )
        .expect("names");
    assert_eq!(names, "phone,wrist");
    // Onto the phone: that needs a new import, and says so.
    let mut merge_onto = m.clone();
    for e in &mut merge_onto.files {
        if e.path == "watch.pftrace" {
            e.machine = Some("phone".into());
        }
    }
    let err = s.preview_manifest(&merge_onto).expect_err("refused");
    assert!(err.to_string().contains("exists already"), "{err}");
    // Written out and imported again, the edited merge lands where the session put it.
    let out = TempFile::new("edited.zip");
    s.write_archive(out.path()).expect("writes");
    assert!(s.write_archive(out.path()).is_err(), "never over a file");
    let again = TempFile::new("edit-again.sqlite");
    sextant::import::import_path(out.path(), again.path()).expect("imports");
    assert_eq!(first_log_ts(again.path()), first_log_ts(db1.path()));
}
