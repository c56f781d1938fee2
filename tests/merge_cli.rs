//! `sextant merge`, `sextant manifest` and loose files: a round trip through the written
//! archive gives the placement each option asked for, every invalid option gets the
//! reader's error text and writes nothing, and several files given together import as the
//! members of one archive.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::TempFile;

/// A scratch directory, removed with everything in it.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let path = TempFile::new(tag).path().to_path_buf();
        std::fs::create_dir_all(&path).expect("mkdir");
        Dir(path)
    }
    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    fn names(&self) -> Vec<String> {
        let mut n: Vec<String> = std::fs::read_dir(&self.0)
            .expect("read_dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn sextant(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sextant"))
        .args(args)
        .output()
        .expect("running sextant")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The members of the i1 golden archive, unpacked into `dir`: a phone and a watch proto and
/// a JSON log.
fn unpack_i1(dir: &Dir) -> [PathBuf; 3] {
    let zip = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/i1_merge.zip"))
        .expect("fixture");
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zip)).expect("zip");
    for name in ["phone.pftrace", "watch.pftrace", "app_log.json"] {
        let mut f = archive.by_name(name).expect("member");
        let mut out = std::fs::File::create(dir.join(name)).expect("create");
        std::io::copy(&mut f, &mut out).expect("copy");
    }
    ["phone.pftrace", "watch.pftrace", "app_log.json"].map(|n| dir.join(n))
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

/// Runs `sextant merge FILES OPTIONS -o OUT` and expects success.
fn merge(files: &[PathBuf], options: &[&str], out: &Path) -> String {
    let mut args: Vec<&std::ffi::OsStr> = vec![os("merge")];
    args.extend(files.iter().map(|f| f.as_os_str()));
    args.extend(options.iter().map(|o| os(o)));
    args.extend([os("-o"), out.as_os_str()]);
    let out = sextant(&args);
    assert!(out.status.success(), "merge failed: {}", text(&out.stderr));
    text(&out.stderr)
}

/// One value of a query.
fn value(trace: &Path, sql: &str) -> String {
    let out = sextant(&[os("query"), trace.as_os_str(), os(sql)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .nth(1)
        .unwrap_or_default()
        .trim_matches('"')
        .to_string()
}

/// When the JSON log's first slice starts.
const LOG_START: &str = "SELECT min(s.ts) FROM slice s
    JOIN __sextant_track_file f ON f.track_id = s.track_id
    JOIN __intrinsic_trace_file tf ON tf.id = f.file_id WHERE tf.name = 'app_log.json'";

#[test]
fn an_offset_of_one_second_moves_the_file_by_exactly_one_second() {
    let dir = Dir::new("merge-offset");
    let files = unpack_i1(&dir);
    let base = [
        "--machine",
        "phone.pftrace=phone",
        "--machine",
        "watch.pftrace=watch",
        "--sync",
        "watch.pftrace:BOOTTIME=phone.pftrace:BOOTTIME,-40s",
        "--trace-time",
        "BOOTTIME=phone.pftrace",
    ];
    let mut starts = Vec::new();
    for (out, offset) in [("zero.zip", "0"), ("one.tar", "1s")] {
        let sync = format!("app_log.json=phone.pftrace:BOOTTIME,{offset}");
        let mut options = base.to_vec();
        options.extend(["--sync", sync.as_str()]);
        let preview = merge(&files, &options, &dir.join(out));
        assert!(preview.contains("app_log.json"), "{preview}");
        assert!(
            preview.contains("phone BOOTTIME is trace time"),
            "{preview}"
        );
        starts.push(
            value(&dir.join(out), LOG_START)
                .parse::<i64>()
                .expect("a ts"),
        );
        // The machines the options named.
        let machines = value(
            &dir.join(out),
            "SELECT group_concat(name, ',') FROM (SELECT name FROM machine WHERE name IS NOT NULL ORDER BY name)",
        );
        assert_eq!(machines, "phone,watch");
    }
    assert_eq!(starts[1] - starts[0], 1_000_000_000, "{starts:?}");
}

#[test]
fn the_manifest_alone_goes_to_stdout_and_reads_back() {
    let dir = Dir::new("merge-stdout");
    let files = unpack_i1(&dir);
    let mut args: Vec<&std::ffi::OsStr> = vec![os("merge")];
    args.extend(files.iter().map(|f| f.as_os_str()));
    args.extend(
        [
            "--machines",
            "phone.pftrace=0:phone",
            "--trace-time",
            "boottime",
            "-o",
            "-",
        ]
        .map(os),
    );
    let out = sextant(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let m = sextant::manifest::parse(&out.stdout).expect("the printed manifest reads");
    assert_eq!(m.files.len(), 3);
    assert_eq!(
        m.entry("phone.pftrace").and_then(|e| e.base_machine()),
        Some("phone")
    );
    // Nothing was written.
    assert_eq!(
        dir.names(),
        ["app_log.json", "phone.pftrace", "watch.pftrace"]
    );
}

#[test]
fn sextant_manifest_prints_the_manifest_of_an_archive_or_says_there_is_none() {
    let dir = Dir::new("manifest");
    let files = unpack_i1(&dir);
    let out = dir.join("m.zip");
    merge(&files, &["--machine", "watch.pftrace=watch"], &out);
    let printed = sextant(&[os("manifest"), out.as_os_str()]);
    assert!(printed.status.success());
    let m = sextant::manifest::parse(&printed.stdout).expect("reads");
    assert_eq!(
        m.entry("watch.pftrace").and_then(|e| e.base_machine()),
        Some("watch")
    );
    let none = sextant(&[os("manifest"), files[0].as_os_str()]);
    assert!(none.status.success());
    assert!(none.stdout.is_empty());
    assert!(text(&none.stderr).contains("has no perfetto_manifest"));
}

#[test]
fn every_invalid_option_gets_the_readers_error_and_writes_nothing() {
    let dir = Dir::new("merge-errors");
    let files = unpack_i1(&dir);
    let cases: &[(&[&str], &str)] = &[
        (
            &["--sync", "app_log.json=ghost.pftrace"],
            "perfetto_manifest: clocks: sync_to.file names unknown file 'ghost.pftrace'",
        ),
        (
            &["--machine", "phone.pftrace="],
            "perfetto_manifest: machine: name must be non-empty",
        ),
        (
            &["--machines", "phone.pftrace=99999999999:x"],
            "machines: id must be in [0, 4294967295]",
        ),
        (&["--trace-time", "BOOTIME"], "unknown clock name: BOOTIME"),
        (
            &["--sync", "app_log.json=phone.pftrace,5 parsecs"],
            "is not an offset",
        ),
        (
            &["--machine", "nowhere.json=x"],
            "\"nowhere.json\" is not one of the files",
        ),
        (
            &[
                "--machine",
                "phone.pftrace=a",
                "--machines",
                "phone.pftrace=0:b",
            ],
            "machine and machines are mutually exclusive",
        ),
        // A PIN on a file with its own clock snapshots, as the reader reports it.
        (
            &["--sync", "watch.pftrace=phone.pftrace:BOOTTIME"],
            "clock overrides require the trace to use a single clock",
        ),
    ];
    for (options, expected) in cases {
        let out = dir.join("out.zip");
        let mut args: Vec<&std::ffi::OsStr> = vec![os("merge")];
        args.extend(files.iter().map(|f| f.as_os_str()));
        args.extend(options.iter().map(|o| os(o)));
        args.extend([os("-o"), out.as_os_str()]);
        let result = sextant(&args);
        assert!(!result.status.success(), "{options:?} succeeded");
        let err = text(&result.stderr);
        assert!(err.contains(expected), "{options:?}: {err}");
        assert_eq!(
            dir.names(),
            ["app_log.json", "phone.pftrace", "watch.pftrace"],
            "{options:?} left something behind"
        );
    }
}

#[test]
fn tar_refuses_long_member_names_clearly() {
    let dir = Dir::new("merge-long");
    let files = unpack_i1(&dir);
    let long = dir.join(&format!("{}.pftrace", "x".repeat(100)));
    std::fs::copy(&files[0], &long).expect("copy");
    let args = [
        os("merge"),
        long.as_os_str(),
        os("-o"),
        dir.join("out.tar").into_os_string().leak(),
    ];
    let result = sextant(&args);
    assert!(!result.status.success());
    let err = text(&result.stderr);
    assert!(
        err.contains("at most 99 characters") && err.contains(".zip"),
        "{err}"
    );
    assert!(!dir.join("out.tar").exists());
}

#[test]
fn loose_files_import_as_one_merge_in_query_and_import() {
    let dir = Dir::new("loose");
    let files = unpack_i1(&dir);
    let sql = "SELECT count(*) FROM __intrinsic_trace_file WHERE trace_type IN ('proto', 'json')";
    let mut args: Vec<&std::ffi::OsStr> = vec![os("query")];
    args.extend(files.iter().map(|f| f.as_os_str()));
    args.push(os(sql));
    let out = sextant(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().nth(1), Some("3"));
    // A directory is the same merge.
    let out = sextant(&[os("query"), dir.0.as_os_str(), os(sql)]);
    assert_eq!(
        text(&out.stdout).lines().nth(1),
        Some("3"),
        "{}",
        text(&out.stderr)
    );
    // Two files with one name cannot be told apart.
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let twin = sub.join("phone.pftrace");
    std::fs::copy(&files[0], &twin).expect("copy");
    let out = sextant(&[
        os("query"),
        files[0].as_os_str(),
        twin.as_os_str(),
        os("select 1"),
    ]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("two files are named \"phone.pftrace\""));
}

/// Runs `sextant merge FILES OPTIONS -o OUT` and expects it to fail, writing nothing.
fn merge_fails(dir: &Dir, files: &[PathBuf], options: &[&str]) -> String {
    let before = dir.names();
    let out = dir.join("refused.zip");
    let mut args: Vec<&std::ffi::OsStr> = vec![os("merge")];
    args.extend(files.iter().map(|f| f.as_os_str()));
    args.extend(options.iter().map(|o| os(o)));
    args.extend([os("-o"), out.as_os_str()]);
    let result = sextant(&args);
    assert!(!result.status.success(), "{options:?} succeeded");
    assert_eq!(dir.names(), before, "{options:?} left something behind");
    text(&result.stderr)
}

/// Offsets are whole nanoseconds in range (never rounded, never wrapped), each option is
/// given once per file, and a word after `FILE:` is a clock.
#[test]
fn offsets_repeats_and_clock_names_are_refused_as_what_they_are() {
    let dir = Dir::new("merge-values");
    let files = unpack_i1(&dir);
    let cases: &[(&[&str], &str)] = &[
        (
            &["--sync", "app_log.json=phone.pftrace:BOOTTIME,1.5"],
            "not a whole number of nanoseconds",
        ),
        (
            &[
                "--sync",
                "app_log.json=phone.pftrace:BOOTTIME,9223372036854775808",
            ],
            "offset_ns is out of range",
        ),
        // In range for the reader, but it carries the events past the largest timestamp.
        (
            &[
                "--sync",
                "app_log.json=phone.pftrace:BOOTTIME,9223372036854775807",
            ],
            "app_log.json: its events would land outside the range of a timestamp",
        ),
        (
            &[
                "--machine",
                "phone.pftrace=a",
                "--machine",
                "phone.pftrace=b",
            ],
            "--machine is given twice for phone.pftrace",
        ),
        (
            &[
                "--sync",
                "app_log.json=phone.pftrace:BOOTTIME",
                "--sync",
                "DIR/./app_log.json=phone.pftrace:BOOTTIME,1s",
            ],
            "--sync is given twice for app_log.json",
        ),
        (
            &["--trace-time", "BOOTTIME", "--trace-time", "MONOTONIC"],
            "--trace-time is given more than once",
        ),
        (
            &["--machines", "phone.pftrace=0:a,0:b"],
            "machine id 0 is named twice",
        ),
        (
            &["--sync", "app_log.json=phone.pftrace:FOO"],
            "unknown clock name: FOO",
        ),
    ];
    let root = dir.0.display().to_string();
    for (options, expected) in cases {
        // A path spelled another way (here `DIR/./FILE`) is the same file.
        let options: Vec<String> = options.iter().map(|o| o.replace("DIR", &root)).collect();
        let options: Vec<&str> = options.iter().map(String::as_str).collect();
        let err = merge_fails(&dir, &files, &options);
        assert!(err.contains(expected), "{options:?}: {err}");
    }
}

/// A sync that can move nothing is refused with why, not silently ignored.
#[test]
fn syncs_that_move_nothing_are_refused_with_why() {
    let dir = Dir::new("merge-noop");
    let files = unpack_i1(&dir);
    let g = dir.join("g.json");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/g_chrome.json"),
        &g,
    )
    .expect("copy");
    let mut all = files.to_vec();
    all.push(g);
    let cases: &[(&[&str], &str)] = &[
        // A PIN to a proto's own timeline: its events are on its clocks.
        (
            &["--sync", "app_log.json=phone.pftrace,1s"],
            "phone.pftrace's own timeline places none of its events",
        ),
        // A RELATE of a JSON trace's clock (the log is on the host, as the phone is).
        (
            &["--sync", "app_log.json:BOOTTIME=phone.pftrace:BOOTTIME,1s"],
            "are one clock",
        ),
        (
            &["--sync", "app_log.json:BOOTTIME=watch.pftrace:REALTIME,1s"],
            "app_log.json is a JSON trace",
        ),
        (
            &["--sync", "app_log.json=app_log.json"],
            "app_log.json is synced to itself",
        ),
        (
            &[
                "--sync",
                "app_log.json=g.json",
                "--sync",
                "g.json=app_log.json",
            ],
            "synced to each other twice",
        ),
        // A machine named on a file that has no machines block names no machine.
        (
            &["--sync", "watch.pftrace@vm:BOOTTIME=phone.pftrace:BOOTTIME"],
            "@vm names no machine of watch.pftrace",
        ),
    ];
    for (options, expected) in cases {
        let err = merge_fails(&dir, &all, options);
        assert!(err.contains(expected), "{options:?}: {err}");
    }
}

/// A merge that would drop events is not written: the files that lose them are named, with
/// what would keep them; --allow-drops writes it anyway.
#[test]
fn a_merge_that_drops_events_names_whose_and_is_written_only_when_allowed() {
    let dir = Dir::new("merge-drops");
    let g = dir.join("g_chrome.json");
    let a = dir.join("app2.json");
    for f in [&g, &a] {
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/g_chrome.json"),
            f,
        )
        .expect("copy");
    }
    let files = [g.clone(), a.clone()];
    // app2.json claims trace time (its own timeline) and g_chrome.json lands 5 ms before it.
    let err = merge_fails(&dir, &files, &["--sync", "app2.json=g_chrome.json,5ms"]);
    assert!(
        err.contains("g_chrome.json on the host: 16 events, ALL 16 dropped"),
        "{err}"
    );
    assert!(
        err.contains("nothing written: g_chrome.json would lose all 16 of its events"),
        "{err}"
    );
    assert!(err.contains("--trace-time BOOTTIME"), "{err}");
    // The way out it names keeps every event, with app2.json 5 ms later.
    let out = dir.join("kept.zip");
    let preview = merge(
        &files,
        &[
            "--trace-time",
            "BOOTTIME",
            "--sync",
            "app2.json=g_chrome.json:BOOTTIME,5ms",
        ],
        &out,
    );
    assert!(preview.contains("nothing would be dropped"), "{preview}");
    let first = |name: &str| {
        value(
            &out,
            &format!(
                "SELECT min(s.ts) FROM slice s LEFT JOIN __sextant_slice_file sf ON sf.slice_id = s.id
                 LEFT JOIN __sextant_track_file f ON f.track_id = s.track_id
                 JOIN __intrinsic_trace_file tf ON tf.id = COALESCE(sf.file_id, f.file_id)
                 WHERE tf.name = '{name}'"
            ),
        )
        .parse::<i64>()
        .expect("a ts")
    };
    assert_eq!(first("app2.json") - first("g_chrome.json"), 5_000_000);
    // Allowed, the dropping merge is written, and its placement rows say whose events went.
    let forced = dir.join("forced.zip");
    merge(
        &files,
        &["--sync", "app2.json=g_chrome.json,5ms", "--allow-drops"],
        &forced,
    );
    assert_eq!(
        value(
            &forced,
            "SELECT p.dropped FROM __sextant_file_placement p JOIN __intrinsic_trace_file f
             ON f.id = p.file_id WHERE f.name = 'g_chrome.json'"
        ),
        "16"
    );
}

/// FILE@MACHINE names one machine of a multi-machine file in --sync and --trace-time; the
/// trace's own machine names win over --machines, and merge says so.
#[test]
fn a_machine_of_a_multi_machine_file_is_named_with_at() {
    let dir = Dir::new("merge-at");
    let e = dir.join("e_two_machines.pftrace");
    let g = dir.join("g_chrome.json");
    for (from, to) in [("e_two_machines.pftrace", &e), ("g_chrome.json", &g)] {
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data")
                .join(from),
            to,
        )
        .expect("copy");
    }
    let out = dir.join("e.zip");
    let preview = merge(
        &[e.clone(), g.clone()],
        &[
            "--machines",
            "e_two_machines.pftrace=0:hostA,2:vmB",
            "--sync",
            "g_chrome.json=e_two_machines.pftrace@hostA:BOOTTIME,1s",
            "--trace-time",
            "BOOTTIME=e_two_machines.pftrace@vmB",
        ],
        &out,
    );
    assert!(
        preview.contains("the trace names machine \"vmB\" itself \"guest-vm\""),
        "{preview}"
    );
    let m = sextant::manifest::parse(&sextant(&[os("manifest"), out.as_os_str()]).stdout)
        .expect("the manifest reads");
    let tt = m.trace_time.clone().expect("trace_time");
    assert_eq!(tt.machine.as_deref(), Some("vmB"));
    let sync = m
        .entry("g_chrome.json")
        .and_then(|e| e.clocks.clone())
        .expect("clocks");
    assert_eq!(sync.sync_to.machine.as_deref(), Some("hostA"));
    // As the reader names them: the trace's own.
    assert_eq!(
        value(&out, "SELECT group_concat(name, ',') FROM (SELECT name FROM machine WHERE name IS NOT NULL ORDER BY name)"),
        "guest-vm,host-box"
    );
}

/// Where the archive goes is checked before any file is read; a file named like the
/// manifest is refused for what it is.
#[test]
fn the_output_and_the_input_names_are_checked_first() {
    let dir = Dir::new("merge-out");
    let files = unpack_i1(&dir);
    let mut args: Vec<&std::ffi::OsStr> = vec![os("merge")];
    args.extend(files.iter().map(|f| f.as_os_str()));
    for (out, expected) in [
        ("out.txt", "must end in .tar or .zip"),
        ("no/such/dir/out.zip", "there is no directory"),
    ] {
        let mut a = args.clone();
        let out = dir.join(out);
        a.extend([os("-o"), out.as_os_str()]);
        let r = sextant(&a);
        let err = text(&r.stderr);
        assert!(!r.status.success() && err.contains(expected), "{err}");
        assert!(
            !err.contains("would be placed"),
            "checked after the import: {err}"
        );
    }
    let named = dir.join("perfetto_manifest.json");
    std::fs::copy(&files[2], &named).expect("copy");
    let err = merge_fails(&dir, &[files[0].clone(), named], &[]);
    assert!(
        err.contains("cannot be named perfetto_manifest.json"),
        "{err}"
    );
}

/// `sextant manifest` on a database gives the manifest the import used, and on loose files
/// or a directory what they hold.
#[test]
fn sextant_manifest_reads_a_database_and_loose_files() {
    let dir = Dir::new("manifest-db");
    let files = unpack_i1(&dir);
    let zip = dir.join("m.zip");
    merge(&files, &["--machine", "watch.pftrace=wrist"], &zip);
    let db = dir.join("m.sqlite");
    let r = sextant(&[os("import"), zip.as_os_str(), os("-o"), db.as_os_str()]);
    assert!(r.status.success(), "{}", text(&r.stderr));
    let r = sextant(&[os("manifest"), db.as_os_str()]);
    let m = sextant::manifest::parse(&r.stdout).expect("the database's manifest");
    assert_eq!(
        m.entry("watch.pftrace").and_then(|e| e.machine.as_deref()),
        Some("wrist")
    );
    // A database of a trace without one says so (and not that it is an archive).
    let plain = dir.join("plain.sqlite");
    let r = sextant(&[
        os("import"),
        files[0].as_os_str(),
        os("-o"),
        plain.as_os_str(),
    ]);
    assert!(r.status.success());
    let r = sextant(&[os("manifest"), plain.as_os_str()]);
    assert!(
        text(&r.stderr).contains("is a database of traces that had no perfetto_manifest"),
        "{}",
        text(&r.stderr)
    );
    // Loose files without one.
    let r = sextant(&[os("manifest"), files[0].as_os_str(), files[1].as_os_str()]);
    assert!(r.status.success());
    assert!(
        text(&r.stderr).contains("has no perfetto_manifest"),
        "{}",
        text(&r.stderr)
    );
}

/// Loose files that cannot be merged say what they are and what to do: a file in a
/// directory that is no trace, an archive among loose files, a database with traces.
#[test]
fn what_cannot_be_merged_among_loose_files_says_what_it_is() {
    let dir = Dir::new("loose-bad");
    let files = unpack_i1(&dir);
    std::fs::write(dir.join("empty.txt"), b"").expect("write");
    let out = sextant(&[os("query"), dir.0.as_os_str(), os("select 1")]);
    let err = text(&out.stderr);
    assert!(
        !out.status.success() && err.contains("empty.txt: not a trace (an empty file)"),
        "{err}"
    );
    std::fs::remove_file(dir.join("empty.txt")).expect("rm");
    let zip = dir.join("m.zip");
    merge(&files, &[], &zip);
    let out = sextant(&[os("query"), dir.0.as_os_str(), os("select 1")]);
    let err = text(&out.stderr);
    assert!(
        err.contains("m.zip: an archive cannot be one of several files opened together"),
        "{err}"
    );
    let db = dir.join("t.sqlite");
    let r = sextant(&[os("import"), files[0].as_os_str(), os("-o"), db.as_os_str()]);
    assert!(r.status.success());
    let out = sextant(&[os("query"), db.as_os_str(), zip.as_os_str(), os("select 1")]);
    let err = text(&out.stderr);
    assert!(
        err.contains("a database cannot be merged with traces"),
        "{err}"
    );
}

/// `sextant query` fills `__sextant_trace_time_candidate` as the explorer's chooser lists
/// them (it was empty outside the explorer).
#[test]
fn sextant_query_lists_the_trace_time_candidates() {
    let zip = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/i1_merge.zip");
    let n = value(
        &zip,
        "SELECT count(*) || ',' || sum(is_current) FROM __sextant_trace_time_candidate",
    );
    let (count, current) = n.split_once(',').expect("two values");
    assert!(count.parse::<i64>().expect("a count") >= 3, "{n}");
    assert_eq!(current, "1");
}

/// A file placed wholly before trace time's zero: the sorter stat counts each input event
/// once (an ftrace event is one, though it makes a raw row and a typed event), and
/// `__sextant_file_events` moves exactly those events from imported to dropped, so the two
/// tables agree on what the file lost.
#[test]
fn events_dropped_before_zero_are_counted_once_each_and_charged_to_their_file() {
    let dir = Dir::new("merge-negative");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let files = [data.join("d_clocks.pftrace"), data.join("c_sched.pftrace")];
    let out = dir.join("early.zip");
    let preview = merge(
        &files,
        &[
            "--machine",
            "c_sched.pftrace=box",
            "--trace-time",
            "BOOTTIME=d_clocks.pftrace",
            "--sync",
            "c_sched.pftrace:BOOTTIME=d_clocks.pftrace:BOOTTIME,-1000s",
            "--allow-drops",
        ],
        &out,
    );
    // c_sched.pftrace alone: 21 ftrace events, each one input event.
    let alone = data.join("c_sched.pftrace");
    assert_eq!(value(&alone, "SELECT count(*) FROM ftrace_event"), "21");
    let stat = value(
        &out,
        "SELECT value FROM stats WHERE name = 'trace_sorter_negative_timestamp_dropped'",
    );
    assert_eq!(stat, "21", "{preview}");
    assert!(
        preview.contains("stat trace_sorter_negative_timestamp_dropped would be 21 (one per"),
        "{preview}"
    );
    let row = value(
        &out,
        "SELECT read || ',' || imported || ',' || dropped || ',' || unaccounted
         FROM __sextant_file_events e JOIN __intrinsic_trace_file f ON f.id = e.file_id
         WHERE f.name = 'c_sched.pftrace'",
    );
    assert_eq!(row, "22,1,21,0");
    // The other file lost nothing.
    let other = value(
        &out,
        "SELECT dropped FROM __sextant_file_events e JOIN __intrinsic_trace_file f
         ON f.id = e.file_id WHERE f.name = 'd_clocks.pftrace'",
    );
    assert_eq!(other, "0");
}

/// A ClockSnapshot the clock tracker refuses relates nothing: the merge's preview names
/// whose it was and why, before anything is written.
#[test]
fn the_preview_says_which_clock_snapshot_is_refused_and_why() {
    let dir = Dir::new("merge-refused");
    let a = dir.join("a.pftrace");
    let bytes = common::refused_snapshot_trace();
    std::fs::write(&a, bytes).expect("write");
    let log = dir.join("log.json");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/g_chrome.json"),
        &log,
    )
    .expect("copy");
    let preview = merge(&[a, log], &[], &dir.join("out.zip"));
    assert!(
        preview.contains(
            "note: a ClockSnapshot of a.pftrace is refused: Clock sync error: the trace clock \
             (id=6) is not monotonic at snapshot 1. 500 not >= 1000."
        ),
        "{preview}"
    );
}
