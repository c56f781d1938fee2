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
    let preview = s.preview_manifest(&m).expect("preview").files;
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
    let preview = s.preview_manifest(&m).expect("preview").files;
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

fn session_of(name: &str, db: &Path) -> Session {
    let files = sextant::source::open(&data(name)).expect("opens");
    let never = AtomicBool::new(false);
    Session::import(name, files, db, &mut |_| {}, &never).expect("imports")
}

fn entry<'a>(
    m: &'a mut sextant::manifest::Manifest,
    path: &str,
) -> &'a mut sextant::manifest::FileEntry {
    m.files
        .iter_mut()
        .find(|e| e.path == path)
        .expect("an entry")
}

/// A RELATE's offset moves the file's events by the change, as the preview says: it reads
/// the clock the events are on, not an untimed row of the file.
#[test]
fn a_relate_offset_change_previews_the_move_it_makes() {
    let db = TempFile::new("edit-relate.sqlite");
    let mut s = session(db.path());
    let conn_ts = |db: &Path| -> i64 {
        let conn = sextant::db::open_read_only(db).expect("db");
        conn.query_row("SELECT ts FROM slice WHERE name = 'watch_sync'", [], |r| {
            r.get(0)
        })
        .expect("watch_sync")
    };
    let before = conn_ts(db.path());
    let mut m = s.manifest();
    let watch = entry(&mut m, "watch.pftrace")
        .clocks
        .as_mut()
        .expect("a RELATE");
    assert!(!watch.is_pin());
    watch.offset_ns += 1_000_000_000;
    let preview = s.preview_manifest(&m).expect("preview");
    let w = preview
        .files
        .iter()
        .find(|p| p.file == "watch.pftrace")
        .expect("watch");
    assert_eq!(w.shift_ns, Some(1_000_000_000), "{preview:?}");
    let db1 = TempFile::new("edit-relate-1.sqlite");
    let never = AtomicBool::new(false);
    s.apply_manifest(preview.manifest, db1.path(), &mut |_| {}, &never)
        .expect("applies");
    assert_eq!(conn_ts(db1.path()) - before, 1_000_000_000);
}

/// The reader's rules that need the files: a PIN on a proto with its own clock snapshots is
/// refused in its words, before anything is applied or written.
#[test]
fn a_pin_on_a_file_with_clock_snapshots_is_refused_as_the_reader_refuses_it() {
    let db = TempFile::new("edit-pin.sqlite");
    let mut s = session(db.path());
    let mut m = s.manifest();
    entry(&mut m, "phone.pftrace").clocks = Some(ClockOverride {
        clock: None,
        machine: None,
        sync_to: SyncTo {
            file: "watch.pftrace".into(),
            machine: None,
            clock: None,
        },
        offset_ns: 0,
    });
    let e = s.preview_manifest(&m).expect_err("refused");
    assert!(
        e.to_string()
            .contains("phone.pftrace: perfetto_manifest: clock overrides require the trace to use a single clock"),
        "{e}"
    );
    let db1 = TempFile::new("edit-pin-1.sqlite");
    let never = AtomicBool::new(false);
    assert!(s
        .apply_manifest(m, db1.path(), &mut |_| {}, &never)
        .is_err());
    // The manifest in effect is unchanged, so what is written still opens.
    let out = TempFile::new("edit-pin.zip");
    s.write_archive(out.path()).expect("writes");
    let again = TempFile::new("edit-pin-again.sqlite");
    sextant::import::import_path(out.path(), again.path()).expect("the written archive opens");
}

/// A sync that can move nothing is refused with why: a RELATE of a JSON trace's clock (its
/// events are on its own timeline).
#[test]
fn a_relate_of_a_clockless_json_trace_is_refused_with_why() {
    let db = TempFile::new("edit-json-relate.sqlite");
    let s = session(db.path());
    let mut m = s.manifest();
    entry(&mut m, "app_log.json").clocks = Some(ClockOverride {
        clock: sextant::manifest::clock_id("BOOTTIME"),
        machine: None,
        sync_to: SyncTo {
            file: "watch.pftrace".into(),
            machine: None,
            clock: sextant::manifest::clock_id("REALTIME"),
        },
        offset_ns: 1_000_000_000,
    });
    let e = s.preview_manifest(&m).expect_err("refused").to_string();
    assert!(
        e.contains("app_log.json is a JSON trace") && e.contains("pin its own timeline"),
        "{e}"
    );
}

/// Renaming the machine of a file that shares it renames it for every file on it, so the
/// session and the written manifest (imported again) agree.
#[test]
fn renaming_a_shared_machine_renames_it_for_every_file_on_it() {
    let db = TempFile::new("edit-shared.sqlite");
    let mut s = session(db.path());
    let mut m = s.manifest();
    entry(&mut m, "app_log.json").machine = Some("laptop".into());
    let preview = s.preview_manifest(&m).expect("preview");
    assert_eq!(
        preview
            .manifest
            .entry("phone.pftrace")
            .and_then(|e| e.machine.as_deref()),
        Some("laptop")
    );
    assert!(
        preview
            .notes
            .iter()
            .any(|n| n.contains("app_log.json, phone.pftrace") && n.contains("\"laptop\"")),
        "{:?}",
        preview.notes
    );
    let db1 = TempFile::new("edit-shared-1.sqlite");
    let never = AtomicBool::new(false);
    s.apply_manifest(preview.manifest, db1.path(), &mut |_| {}, &never)
        .expect("applies");
    let per_machine = |db: &Path| -> String {
        let conn = sextant::db::open_read_only(db).expect("db");
        conn.query_row(
            "SELECT group_concat(n, ',') FROM (SELECT m.name || ':' || count(*) AS n
             FROM slice s JOIN thread_track tt ON tt.id = s.track_id
             JOIN thread t USING (utid) JOIN machine m ON m.id = t.machine_id
             GROUP BY m.name ORDER BY m.name)",
            [],
            |r| r.get(0),
        )
        .expect("names")
    };
    let here = per_machine(db1.path());
    assert_eq!(here, "laptop:3,watch:2");
    let out = TempFile::new("edit-shared.zip");
    s.write_archive(out.path()).expect("writes");
    let again = TempFile::new("edit-shared-again.sqlite");
    sextant::import::import_path(out.path(), again.path()).expect("imports");
    assert_eq!(per_machine(again.path()), here);
    // Removing a name is a new import's work, and says so.
    let mut m = s.manifest();
    entry(&mut m, "watch.pftrace").machine = None;
    let e = s.preview_manifest(&m).expect_err("refused").to_string();
    assert!(e.contains("needs the file to be imported again"), "{e}");
}

/// A multi-machine file's names are edited as a machines block; the trace's own names
/// (SystemInfo machine_name) win, as a new import of the written archive shows, and the
/// preview says so.
#[test]
fn a_multi_machine_files_names_edit_as_a_block_and_the_traces_own_names_win() {
    let db = TempFile::new("edit-multi.sqlite");
    let mut s = session_of("e_two_machines.pftrace", db.path());
    let members = s.members();
    assert_eq!(members.len(), 1);
    let ids: Vec<u32> = members[0].machines.iter().map(|m| m.0).collect();
    assert_eq!(ids, [0, 2]);
    let mut m = s.manifest();
    entry(&mut m, "e_two_machines.pftrace").machines = Some(vec![
        sextant::manifest::MachineEntry {
            id: 0,
            name: "hostA".into(),
        },
        sextant::manifest::MachineEntry {
            id: 2,
            name: "vmB".into(),
        },
    ]);
    let preview = s.preview_manifest(&m).expect("preview");
    assert!(
        preview
            .notes
            .iter()
            .any(|n| n.contains("\"vmB\" itself \"guest-vm\"")),
        "{:?}",
        preview.notes
    );
    let names: Vec<&str> = preview.files.iter().map(|f| f.machine.as_str()).collect();
    assert_eq!(names, ["host-box", "guest-vm"]);
    // A block that leaves a machine of the data unnamed is refused.
    let mut short = m.clone();
    entry(&mut short, "e_two_machines.pftrace").machines =
        Some(vec![sextant::manifest::MachineEntry {
            id: 0,
            name: "hostA".into(),
        }]);
    let e = s.preview_manifest(&short).expect_err("refused").to_string();
    assert!(e.contains("machine id 2"), "{e}");
    let db1 = TempFile::new("edit-multi-1.sqlite");
    let never = AtomicBool::new(false);
    s.apply_manifest(preview.manifest, db1.path(), &mut |_| {}, &never)
        .expect("applies");
    let names = |db: &Path| -> String {
        let conn = sextant::db::open_read_only(db).expect("db");
        conn.query_row(
            "SELECT group_concat(name, ',') FROM (SELECT name FROM machine WHERE name IS NOT NULL ORDER BY name)",
            [],
            |r| r.get(0),
        )
        .expect("names")
    };
    let out = TempFile::new("edit-multi.zip");
    s.write_archive(out.path()).expect("writes");
    let again = TempFile::new("edit-multi-again.sqlite");
    sextant::import::import_path(out.path(), again.path()).expect("imports");
    assert_eq!(names(db1.path()), "guest-vm,host-box");
    assert_eq!(names(again.path()), names(db1.path()));
}
