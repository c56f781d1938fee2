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
