//! Nothing left behind: `sextant query` and the summary leave their temp directory (a fresh
//! one per test, the child's TMPDIR) as they found it, on success and on error; `sextant
//! import -o` interrupted leaves neither its output nor its temporary file, and an older
//! output stays as it was; and what dead runs left is removed by the next run — only
//! Sextant's own files, only of processes that are gone.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{kill_process, Pid, Signal};

use common::{TempDir, TempFile};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn command(tmp: &TempDir, args: &[&std::ffi::OsStr]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sextant"));
    cmd.args(args).env("TMPDIR", tmp.path());
    cmd
}

fn run(tmp: &TempDir, args: &[&std::ffi::OsStr]) -> Output {
    command(tmp, args).output().expect("running sextant")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

#[test]
fn query_leaves_nothing_in_the_temp_directory() {
    let tmp = TempDir::new("query-tmp");
    let trace = data("c_sched.pftrace");
    let out = run(
        &tmp,
        &[
            os("query"),
            trace.as_os_str(),
            os("select count(*) from sched"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "\"count(*)\"\n10\n");
    assert_eq!(tmp.entries(), Vec::<String>::new());

    // A query that fails after the import, and an import that fails.
    let out = run(&tmp, &[os("query"), trace.as_os_str(), os("select nope")]);
    assert!(!out.status.success());
    assert_eq!(tmp.entries(), Vec::<String>::new());
    let bad = TempFile::with_bytes("bad.json", br#"{"traceEvents": 5}"#);
    let out = run(&tmp, &[os("query"), bad.0.as_os_str(), os("select 1")]);
    assert!(!out.status.success());
    assert_eq!(tmp.entries(), Vec::<String>::new());
}

#[test]
fn the_summary_leaves_nothing_in_the_temp_directory() {
    let tmp = TempDir::new("summary-tmp");
    // Not a terminal: `sextant TRACE` prints a summary.
    let out = command(&tmp, &[data("a_track_events.pftrace").as_os_str()])
        .stdin(Stdio::null())
        .output()
        .expect("running sextant");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("slices"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(tmp.entries(), Vec::<String>::new());
}

#[test]
fn import_output_is_renamed_into_place_and_reading_it_leaves_no_side_files() {
    let tmp = TempDir::new("import-tmp");
    let work = TempDir::new("import-out");
    let db = work.path().join("out.sqlite");
    let out = run(
        &tmp,
        &[
            os("import"),
            data("a_track_events.pftrace").as_os_str(),
            os("-o"),
            db.as_os_str(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(work.entries(), ["out.sqlite"]);
    // Queried as it is: a read-only reader leaves no -wal or -shm beside it.
    let out = run(
        &tmp,
        &[
            os("query"),
            db.as_os_str(),
            os("select count(*) from slice"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "\"count(*)\"\n8\n");
    assert_eq!(work.entries(), ["out.sqlite"]);
    assert_eq!(tmp.entries(), Vec::<String>::new());
}

#[test]
fn a_failed_import_output_leaves_nothing_and_names_the_output() {
    let tmp = TempDir::new("failed-tmp");
    let work = TempDir::new("failed-out");
    let bad = work.path().join("bad.json");
    std::fs::write(&bad, br#"{"traceEvents": 5}"#).expect("writing");
    let db = work.path().join("out.sqlite");
    let out = run(
        &tmp,
        &[os("import"), bad.as_os_str(), os("-o"), db.as_os_str()],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("traceEvents must be an array"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(work.entries(), ["bad.json"]);
    assert_eq!(tmp.entries(), Vec::<String>::new());

    // An output that cannot be written fails before the import, naming the output.
    let nowhere = work.path().join("missing-dir").join("out.sqlite");
    let out = run(
        &tmp,
        &[
            os("import"),
            data("c_sched.pftrace").as_os_str(),
            os("-o"),
            nowhere.as_os_str(),
        ],
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("cannot write the database {}", nowhere.display())),
        "{err}"
    );
    assert_eq!(work.entries(), ["bad.json"]);
}

/// The state letter of a process in /proc (`T` when stopped), if it still exists.
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) S ...`: the state follows the last ')'.
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

fn wait_exit(child: &mut Child, what: &str) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(s) = child.try_wait().expect("waiting for sextant") {
            return s;
        }
        assert!(Instant::now() < deadline, "sextant did not end on {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `cmd` and, once an entry of `dir` satisfies `wanted`, stops the process
/// (SIGSTOP) — a known point to signal it at, however fast or slow the machine. Returns the
/// stopped child and the entry, checked to be still there once the process stopped.
fn stop_when_written(
    mut cmd: Command,
    dir: &TempDir,
    wanted: impl Fn(&str) -> bool,
) -> (Child, String) {
    let mut child = cmd
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting sextant");
    let deadline = Instant::now() + Duration::from_secs(60);
    let name = loop {
        if let Some(name) = dir.entries().into_iter().find(|n| wanted(n)) {
            break name;
        }
        assert!(
            child.try_wait().expect("waiting").is_none(),
            "sextant ended before the file was seen"
        );
        assert!(Instant::now() < deadline, "the file never appeared");
        std::thread::sleep(Duration::from_millis(2));
    };
    let pid = child.id();
    kill_process(Pid::from_child(&child), Signal::STOP).expect("stopping sextant");
    let deadline = Instant::now() + Duration::from_secs(30);
    while proc_state(pid) != Some('T') {
        assert!(Instant::now() < deadline, "sextant did not stop");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        dir.entries().contains(&name),
        "sextant got past {name} before it stopped: {:?}",
        dir.entries()
    );
    (child, name)
}

#[test]
fn import_output_interrupted_leaves_no_output_and_no_temporary_file() {
    let tmp = TempDir::new("interrupt-tmp");
    let work = TempDir::new("interrupt-out");
    let trace = work.path().join("big.json");
    std::fs::write(&trace, common::big_json_trace(150_000)).expect("writing the trace");
    let db = work.path().join("out.sqlite");

    // An older output at that path, which the interrupted import must leave as it was.
    let out = run(
        &tmp,
        &[
            os("import"),
            data("c_sched.pftrace").as_os_str(),
            os("-o"),
            db.as_os_str(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let before = std::fs::read(&db).expect("the older output");

    let cmd = command(
        &tmp,
        &[os("import"), trace.as_os_str(), os("-o"), db.as_os_str()],
    );
    // Stopped mid-import: the temporary there and written to (SQLite has its schema in
    // it), the output not replaced yet.
    let (mut child, _) = stop_when_written(cmd, &work, |n| {
        n.starts_with(".out.sqlite.sextant-")
            && n.ends_with(".tmp")
            && std::fs::metadata(work.path().join(n)).is_ok_and(|m| m.len() > 0)
    });
    assert_eq!(std::fs::read(&db).expect("the output"), before);
    let child_pid = Pid::from_child(&child);

    kill_process(child_pid, Signal::TERM).expect("signalling sextant");
    kill_process(child_pid, Signal::CONT).expect("resuming sextant");
    let status = wait_exit(&mut child, "SIGTERM");
    assert_eq!(status.signal(), Some(15), "exit status {status}");

    // The older output is untouched; nothing else is left beside it or in TMPDIR.
    assert_eq!(work.entries(), ["big.json", "out.sqlite"]);
    assert_eq!(std::fs::read(&db).expect("the output"), before);
    assert_eq!(tmp.entries(), Vec::<String>::new());
}

/// A pid that belonged to a process that has ended (and was reaped).
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().expect("running true");
    let pid = child.id();
    child.wait().expect("waiting for true");
    pid
}

#[test]
fn the_next_run_removes_what_dead_runs_left_and_nothing_else() {
    let tmp = TempDir::new("stale-tmp");
    let dead = dead_pid();
    let alive = std::process::id();
    let touch = |name: &str| std::fs::write(tmp.path().join(name), b"x").expect("writing");
    let session = |name: &str, files: &[&str]| {
        std::fs::create_dir(tmp.path().join(name)).expect("mkdir");
        for f in files {
            std::fs::write(tmp.path().join(name).join(f), b"x").expect("writing");
        }
    };
    // A dead run's database and side files (this version's names and older ones), and its
    // session directory.
    let stale = [
        format!("sextant-{dead}-1700000000000000000-0.sqlite"),
        format!("sextant-{dead}-1700000000000000000-0.sqlite-wal"),
        format!("sextant-{dead}-1700000000000000000-0.sqlite-shm"),
        format!("sextant-{dead}-1700000000000000001.sqlite-journal"),
    ];
    for name in &stale {
        touch(name);
    }
    session(
        &format!("sextant-{dead}-1700000000000000002-1"),
        &["trace-0.sqlite", "trace-0.sqlite-wal", "trace-1.sqlite"],
    );
    // A live process's files, files not named as Sextant names them, and a directory named
    // like a session that holds something else.
    let kept = [
        format!("sextant-{alive}-1700000000000000000-0.sqlite"),
        format!("sextant-{alive}-1700000000000000000-0.sqlite-wal"),
        format!("sextant-test-{dead}-1700000000000000000-0-history"),
        format!("sextant-{dead}-1700000000000000000-0.sqlite-old"),
        format!("sextant-{dead}.sqlite"),
        "notes.txt".to_string(),
    ];
    for name in &kept {
        touch(name);
    }
    let live_session = format!("sextant-{alive}-1700000000000000003-2");
    session(&live_session, &["trace-0.sqlite"]);
    let foreign = format!("sextant-{dead}-1700000000000000004-3");
    session(&foreign, &["trace-0.sqlite", "photo.jpg"]);

    let out = run(
        &tmp,
        &[
            os("query"),
            data("c_sched.pftrace").as_os_str(),
            os("select 1"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut expected: Vec<String> = kept.to_vec();
    expected.push(live_session);
    expected.push(foreign);
    expected.sort();
    assert_eq!(tmp.entries(), expected);

    // Beside an `import -o` output: a dead run's temporary goes, a live one's stays.
    let work = TempDir::new("stale-out");
    let dead_temp = format!(".out.sqlite.sextant-{dead}-1700000000000000000-0.tmp");
    let live_temp = format!(".out.sqlite.sextant-{alive}-1700000000000000000-0.tmp");
    let other_temp = format!(".other.sqlite.sextant-{dead}-1700000000000000000-0.tmp");
    for name in [&dead_temp, &live_temp, &other_temp] {
        std::fs::write(work.path().join(name), b"x").expect("writing");
    }
    let db = work.path().join("out.sqlite");
    let out = run(
        &tmp,
        &[
            os("import"),
            data("c_sched.pftrace").as_os_str(),
            os("-o"),
            db.as_os_str(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut expected = vec![live_temp, other_temp, "out.sqlite".to_string()];
    expected.sort();
    assert_eq!(work.entries(), expected);
}

#[test]
fn a_hangup_the_parent_ignores_stays_ignored() {
    // `nohup sextant query …`: SIGHUP is ignored when sextant starts, and stays so.
    let tmp = TempDir::new("nohup-tmp");
    let trace = TempFile::with_bytes("big.json", &common::big_json_trace(150_000));
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "trap '' HUP; exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_sextant"))
        .args([
            os("query"),
            trace.0.as_os_str(),
            os("select count(*) from slice"),
        ])
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::piped());
    // Hung up mid-import, while its temporary database is there.
    let (child, _) = stop_when_written(cmd, &tmp, |n| {
        n.starts_with("sextant-") && n.ends_with(".sqlite")
    });
    let pid = Pid::from_child(&child);
    kill_process(pid, Signal::HUP).expect("signalling sextant");
    kill_process(pid, Signal::CONT).expect("resuming sextant");
    let out = child.wait_with_output().expect("waiting for sextant");
    assert!(out.status.success(), "exit status {}", out.status);
    assert_eq!(text(&out.stdout), "\"count(*)\"\n150000\n");
    assert_eq!(tmp.entries(), Vec::<String>::new());
}
