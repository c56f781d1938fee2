//! Switching trace time (`Session::replace`).

use super::*;

// ---------------------------------------------------------------------------------------
// Switching trace time (`Session::replace`): the database is the one a fresh import on the
// chosen clock writes
// ---------------------------------------------------------------------------------------

/// Every table of a database with its rows in rowid order, as text.
fn every_table(conn: &Connection) -> Vec<(String, Vec<Vec<String>>)> {
    rows(
        conn,
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    )
    .into_iter()
    .map(|name| {
        let name = name[0].clone();
        let content = rows(conn, &format!("SELECT * FROM \"{name}\" ORDER BY rowid"));
        (name, content)
    })
    .collect()
}

/// Checks two databases hold the same rows, naming the first table and row that differ.
fn assert_same_content(what: &str, got: &Path, want: &Path) {
    let open = |p: &Path| sextant::db::open_read_only(p).expect("the database opens");
    let (got, want) = (every_table(&open(got)), every_table(&open(want)));
    let names = |t: &[(String, Vec<Vec<String>>)]| -> Vec<String> {
        t.iter().map(|(n, _)| n.clone()).collect()
    };
    assert_eq!(names(&got), names(&want), "{what}: tables");
    for ((name, got), (_, want)) in got.iter().zip(&want) {
        if let Some(i) = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)) {
            panic!(
                "{what}: table {name} differs at row {i} ({} rows vs {}):\n  got:  {:?}\n  want: {:?}",
                got.len(),
                want.len(),
                got.get(i),
                want.get(i)
            );
        }
    }
}

fn demo_files() -> Vec<sextant::source::TraceFile> {
    sextant::source::open_bytes(sextant::demo::NAME, sextant::demo::DEMO_ZIP.to_vec())
        .expect("the demo opens")
}

/// Two traces of one machine whose slices share a thread track: `from_a` at 1.1 s from
/// `a.pftrace`, `from_b` at 1.3 s from `b.pftrace` (BOOTTIME and REALTIME snapshots in each).
fn shared_machine_archive() -> Vec<u8> {
    let trace = |name: &str, ts: u64| {
        let mut packets = vec![snapshot(&[
            (BOOTTIME, 1_000_000_000),
            (REALTIME, 50_000_000_000),
        ])];
        packets.extend(thread_tracks(10, 11, "app", "main"));
        packets.extend(slice(name, ts, 100_000_000));
        encode(packets, None)
    };
    let meta = manifest(
        r#"{"version": 1, "files": [
            {"path": "a.pftrace", "machine": {"name": "phone"}},
            {"path": "b.pftrace", "machine": {"name": "phone"}}]}"#,
    );
    zip(&[
        ("meta.json", &meta),
        ("a.pftrace", &trace("from_a", 1_100_000_000)),
        ("b.pftrace", &trace("from_b", 1_300_000_000)),
    ])
}

/// Each slice's name with the file it came from, as the details pane reads it.
const SLICE_FILES: &str = "
    select s.name, f.name from slice s
    join __intrinsic_trace_file f on f.id = coalesce(
        (select file_id from __sextant_slice_file where slice_id = s.id),
        (select file_id from __sextant_track_file where track_id = s.track_id))
    order by s.id";

/// Switches `files` to every clock in turn, each switch starting from the state the
/// previous one left, and compares each database with a fresh import on that clock.
fn check_replace_against_fresh_imports(
    files: &dyn Fn() -> Vec<sextant::source::TraceFile>,
    check: &dyn Fn(&Path),
) {
    let never = std::sync::atomic::AtomicBool::new(false);
    let first = TempFile::new("replace-first.sqlite");
    let mut session =
        sextant::import::Session::import("input", files(), first.path(), &mut |_| {}, &never)
            .expect("the input imports");
    check(first.path());
    let candidates = session.candidates();
    assert!(candidates.len() >= 2, "there are clocks to choose");
    for candidate in candidates.iter().filter(|c| !c.current) {
        let clock = session.clock_node(candidate.node).expect("a clock node");
        let replaced = TempFile::new("replaced.sqlite");
        session
            .replace(candidate.node, replaced.path(), &mut |_| {}, &never)
            .expect("the replace succeeds");
        let fresh = TempFile::new("fresh.sqlite");
        sextant::import::Session::import_on(
            "input",
            files(),
            clock,
            fresh.path(),
            &mut |_| {},
            &never,
        )
        .expect("the fresh import succeeds");
        assert_same_content(&candidate.label, replaced.path(), fresh.path());
        check(replaced.path());
    }
}

#[test]
fn replace_writes_what_a_fresh_import_on_that_clock_writes() {
    check_replace_against_fresh_imports(&demo_files, &|_| {});
}

#[test]
fn slices_from_two_files_of_one_machine_keep_their_file_across_switches() {
    let archive = shared_machine_archive();
    let files =
        || sextant::source::open_bytes("shared.zip", archive.clone()).expect("the archive opens");
    check_replace_against_fresh_imports(&files, &|db| {
        let conn = sextant::db::open_read_only(db).expect("the database opens");
        assert_eq!(
            rows(&conn, SLICE_FILES),
            table(&[["from_a", "a.pftrace"], ["from_b", "b.pftrace"]])
        );
        // One thread track for both; only the slice from the second file has a row.
        assert_eq!(
            rows(&conn, "select count(*) from __sextant_track_file"),
            table(&[["1"]])
        );
        assert_eq!(
            rows(&conn, "select count(*) from __sextant_slice_file"),
            table(&[["1"]])
        );
    });
}

#[test]
fn replace_back_to_the_first_clock_writes_the_same_database_again() {
    let never = std::sync::atomic::AtomicBool::new(false);
    let first = TempFile::new("roundtrip-first.sqlite");
    let mut session =
        sextant::import::Session::import("demo", demo_files(), first.path(), &mut |_| {}, &never)
            .expect("the demo imports");
    let candidates = session.candidates();
    let watch = candidates
        .iter()
        .find(|c| c.label == "watch BOOTTIME")
        .expect("a watch BOOTTIME candidate");
    let phone = candidates
        .iter()
        .find(|c| c.label == "phone BOOTTIME")
        .expect("a phone BOOTTIME candidate");
    let there = TempFile::new("roundtrip-watch.sqlite");
    session
        .replace(watch.node, there.path(), &mut |_| {}, &never)
        .expect("switching to the watch");
    let phone_node = session
        .candidates()
        .iter()
        .find(|c| c.label == phone.label)
        .expect("phone BOOTTIME is still a candidate")
        .node;
    let back = TempFile::new("roundtrip-phone.sqlite");
    session
        .replace(phone_node, back.path(), &mut |_| {}, &never)
        .expect("switching back to the phone");
    let again = TempFile::new("roundtrip-watch-again.sqlite");
    let watch_node = session
        .candidates()
        .iter()
        .find(|c| c.label == watch.label)
        .expect("watch BOOTTIME is still a candidate")
        .node;
    session
        .replace(watch_node, again.path(), &mut |_| {}, &never)
        .expect("switching to the watch again");
    assert_same_content("watch BOOTTIME twice", again.path(), there.path());
    let slices = |p: &Path| {
        let conn = sextant::db::open_read_only(p).expect("the database opens");
        rows(&conn, "SELECT ts, dur, name FROM slice ORDER BY id")
    };
    assert_eq!(
        slices(back.path()),
        slices(first.path()),
        "back on the phone's BOOTTIME, slices are where the first import put them"
    );
}

#[test]
fn a_cancelled_replace_leaves_the_session_able_to_switch() {
    let never = std::sync::atomic::AtomicBool::new(false);
    let cancelled = std::sync::atomic::AtomicBool::new(true);
    let first = TempFile::new("cancel-first.sqlite");
    let mut session =
        sextant::import::Session::import("demo", demo_files(), first.path(), &mut |_| {}, &never)
            .expect("the demo imports");
    let watch = session
        .candidates()
        .into_iter()
        .find(|c| c.label == "watch BOOTTIME")
        .expect("a watch BOOTTIME candidate");
    let clock = session.clock_node(watch.node).expect("a clock node");
    let target = TempFile::new("cancel-target.sqlite");
    let result = session.replace(watch.node, target.path(), &mut |_| {}, &cancelled);
    assert!(
        matches!(result, Err(sextant::import::ImportError::Cancelled)),
        "the replace is cancelled: {:?}",
        result.err()
    );
    let replaced = TempFile::new("cancel-replaced.sqlite");
    session
        .replace(watch.node, replaced.path(), &mut |_| {}, &never)
        .expect("the next replace succeeds");
    let fresh = TempFile::new("cancel-fresh.sqlite");
    sextant::import::Session::import_on(
        "demo",
        demo_files(),
        clock,
        fresh.path(),
        &mut |_| {},
        &never,
    )
    .expect("the fresh import succeeds");
    assert_same_content("after a cancelled switch", replaced.path(), fresh.path());
}
