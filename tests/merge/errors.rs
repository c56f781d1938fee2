//! Manifest errors: one test per row of the spec's error table.

use super::*;

// ---------------------------------------------------------------------------------------
// Manifest errors: one test per row of the spec's error table
// ---------------------------------------------------------------------------------------

#[test]
fn error_missing_version() {
    manifest_error(
        "missing-version",
        r#"{"files": []}"#,
        "perfetto_manifest: missing required field: version",
    );
}

#[test]
fn error_version_not_1() {
    manifest_error(
        "version-2",
        r#"{"version": 2}"#,
        "perfetto_manifest: unsupported version: 2. Only version 1 is supported; set \
         \"version\": 1.",
    );
}

#[test]
fn error_version_not_integer() {
    for (tag, version) in [("version-string", r#""1""#), ("version-float", "1.0")] {
        manifest_error(
            tag,
            &format!(r#"{{"version": {version}}}"#),
            "perfetto_manifest: version must be an integer",
        );
    }
}

#[test]
fn error_unknown_clock_name() {
    manifest_error(
        "unknown-clock-trace-time",
        r#"{"version": 1, "trace_time": {"clock": "UPTIME"}}"#,
        "perfetto_manifest: unknown clock name: UPTIME. Use one of REALTIME, REALTIME_COARSE, \
         MONOTONIC, MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME.",
    );
    // Clock names are case-sensitive, and checked in `clocks` too.
    manifest_error(
        "unknown-clock-sync-to",
        r#"{"version": 1, "files": [{"path": "trace.pftrace", "clocks": {"clock": "BOOTTIME",
            "sync_to": {"file": "other.pftrace", "clock": "boottime"}}},
            {"path": "other.pftrace"}]}"#,
        "perfetto_manifest: unknown clock name: boottime. Use one of REALTIME",
    );
}

#[test]
fn error_second_manifest() {
    let m = manifest(r#"{"version": 1}"#);
    let trace = small_proto("s", true, None);
    let got = expect_err(
        "two-manifests",
        &zip(&[
            ("a_manifest.json", &m),
            ("trace.pftrace", &trace),
            ("b_manifest.json", &m),
        ]),
    );
    assert!(
        got.starts_with("a_manifest.json: ") || got.starts_with("b_manifest.json: "),
        "the error should start with a manifest's member name: {got}"
    );
    assert!(
        got.contains("multiple perfetto_manifest files in archive"),
        "{got}"
    );
    // The second manifest is refused before its JSON is read.
    let broken = b"{\"perfetto_manifest\": {\"version\": ";
    let got = expect_err(
        "two-manifests-second-broken",
        &zip(&[("a_manifest.json", &m), ("b_manifest.json", broken)]),
    );
    assert!(
        got.contains("multiple perfetto_manifest files in archive"),
        "{got}"
    );
}

#[test]
fn error_manifest_after_trace_file() {
    // The gzipped manifest sorts after the proto member (containers come after protos), so
    // a trace file is processed before the manifest.
    let m = gzip(&manifest(r#"{"version": 1}"#));
    let trace = small_proto("s", true, None);
    expect_error(
        "manifest-not-first",
        &zip(&[("meta.json.gz", &m), ("a.pftrace", &trace)]),
        "meta.json.gz",
        "perfetto_manifest file must be the first trace file in the input",
    );
}

#[test]
fn error_machine_and_machines() {
    manifest_error(
        "machine-and-machines",
        r#"{"version": 1, "files": [{"path": "trace.pftrace", "machine": {"name": "a"},
            "machines": [{"id": 0, "name": "b"}]}]}"#,
        "perfetto_manifest: machine and machines are mutually exclusive. Use `machine` for a \
         single-machine file, or `machines` to remap a multi-machine proto's embedded ids; not \
         both.",
    );
}

#[test]
fn error_empty_machine_name() {
    manifest_error(
        "empty-machine-name",
        r#"{"version": 1, "files": [{"path": "trace.pftrace", "machine": {"name": ""}}]}"#,
        "perfetto_manifest: machine: name must be non-empty",
    );
}

#[test]
fn error_machines_id_out_of_range() {
    for (tag, id) in [
        ("machines-id-2p32", "4294967296"),
        ("machines-id-neg", "-1"),
    ] {
        manifest_error(
            tag,
            &format!(
                r#"{{"version": 1, "files": [{{"path": "trace.pftrace",
                    "machines": [{{"id": {id}, "name": "vm"}}]}}]}}"#
            ),
            "perfetto_manifest: machines: id must be in [0, 4294967295]",
        );
    }
    // The bounds themselves are accepted.
    expect_ok(
        "machines-id-bounds",
        &archive_with_manifest(
            r#"{"version": 1, "files": [{"path": "trace.pftrace",
                "machines": [{"id": 0, "name": "a"}, {"id": 4294967295, "name": "b"}]}]}"#,
        ),
    );
}

/// A proto whose packets all carry embedded machine id 7.
fn machine7_proto(with_snapshot: bool) -> Vec<u8> {
    small_proto("remote_slice", with_snapshot, Some(7))
}

/// A ZIP of `meta.json` (manifest `body`) and `multi.pftrace` (packets from machine 7).
fn machine7_archive(body: &str, with_snapshot: bool) -> Vec<u8> {
    let meta = manifest(body);
    let multi = machine7_proto(with_snapshot);
    zip(&[("meta.json", &meta), ("multi.pftrace", &multi)])
}

#[test]
fn error_undeclared_machine_id() {
    // Raised while the proto is parsed: the error names the proto member.
    expect_error(
        "undeclared-machine",
        &machine7_archive(
            r#"{"version": 1, "files": [{"path": "multi.pftrace",
                "machines": [{"id": 0, "name": "host"}]}]}"#,
            true,
        ),
        "multi.pftrace",
        "perfetto_manifest: machines: trace has a packet from undeclared machine id 7",
    );
    // Declaring it is enough.
    let i = expect_ok(
        "declared-machine",
        &machine7_archive(
            r#"{"version": 1, "files": [{"path": "multi.pftrace",
                "machines": [{"id": 0, "name": "host"}, {"id": 7, "name": "vm"}]}]}"#,
            true,
        ),
    );
    assert_eq!(
        rows(
            &i.conn,
            "select s.name, m.name from slice s join thread_track tt on tt.id = s.track_id
             join thread t on t.utid = tt.utid join machine m on m.id = t.machine_id"
        ),
        table(&[["remote_slice", "vm"]])
    );
}

#[test]
fn error_machine_on_multi_machine_file() {
    // Raised while the proto is parsed (at its first non-zero machine id, even with only
    // one embedded id): the error names the proto member.
    expect_error(
        "machine-on-multi",
        &machine7_archive(
            r#"{"version": 1, "files": [{"path": "multi.pftrace", "machine": {"name": "phone"}}]}"#,
            true,
        ),
        "multi.pftrace",
        "perfetto_manifest: a `machine` override attributes the file to one machine, but the \
         file contains packets from multiple machines. Replace `machine` with a `machines` \
         block that maps each embedded machine_id to a named machine, e.g. \"machines\": \
         [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": \"vm\"}].",
    );
}

#[test]
fn error_pin_on_multi_machine_file() {
    // §6: a PIN (clocks without `clock`) on a file with embedded machine ids.
    let pin = r#""clocks": {"sync_to": {"file": "ref.json"}}"#;
    let text = "perfetto_manifest: a `clocks` override applies only to a single-machine file, \
                but the file contains packets from multiple machines. Remove the `clocks` \
                override and let the trace's own remote clock snapshots align the machines; if \
                you need to anchor a specific embedded machine, split it into its own file and \
                override that.";
    let reference = br#"[{"ph": "X", "name": "r", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]"#;
    let build = |entry: &str| {
        let meta = manifest(&format!(
            r#"{{"version": 1, "files": [{{"path": "multi.pftrace", {entry}}},
                {{"path": "ref.json"}}]}}"#
        ));
        let multi = machine7_proto(false);
        zip(&[
            ("meta.json", &meta),
            ("multi.pftrace", &multi),
            ("ref.json", reference),
        ])
    };
    expect_error("pin-on-multi", &build(pin), "multi.pftrace", text);
    // With `machine` as well, the `machine` error is reported first.
    expect_error(
        "pin-and-machine-on-multi",
        &build(&format!(r#""machine": {{"name": "phone"}}, {pin}"#)),
        "multi.pftrace",
        "perfetto_manifest: a `machine` override attributes the file to one machine",
    );
}

#[test]
fn error_clocks_without_sync_to() {
    manifest_error(
        "clocks-no-sync-to",
        r#"{"version": 1, "files": [{"path": "trace.pftrace",
            "clocks": {"clock": "BOOTTIME", "offset_ns": 5}}]}"#,
        "perfetto_manifest: clocks: a sync_to block is required. Manual clock handling relates \
         this file to a clock in another trace, e.g. \"sync_to\": {\"file\": \"other.pb\"}.",
    );
}

#[test]
fn error_sync_to_without_file() {
    manifest_error(
        "sync-to-no-file",
        r#"{"version": 1, "files": [{"path": "trace.pftrace",
            "clocks": {"clock": "BOOTTIME", "sync_to": {"clock": "BOOTTIME"}}}]}"#,
        "perfetto_manifest: clocks: sync_to.file is required and must be a string",
    );
}

#[test]
fn error_sync_to_file_unknown() {
    manifest_error(
        "sync-to-unknown-file",
        r#"{"version": 1, "files": [{"path": "trace.pftrace",
            "clocks": {"clock": "BOOTTIME", "sync_to": {"file": "ghost.pftrace",
                       "clock": "BOOTTIME"}}}]}"#,
        "perfetto_manifest: clocks: sync_to.file names unknown file 'ghost.pftrace'. It must \
         match the `path` of an entry in the `files` array.",
    );
    // A member of the archive that has no `files` entry is still unknown.
    manifest_error(
        "sync-to-unlisted-file",
        r#"{"version": 1, "files": [{"path": "trace.pftrace",
            "clocks": {"clock": "BOOTTIME", "sync_to": {"file": "other.pftrace",
                       "clock": "BOOTTIME"}}}]}"#,
        "perfetto_manifest: clocks: sync_to.file names unknown file 'other.pftrace'.",
    );
}

#[test]
fn error_sync_to_machine_without_file() {
    // In `clocks`, sync_to.file is required, so a machine alone fails on that first (as the
    // reference's conformance case error_sync_to_machine_without_file expects).
    manifest_error(
        "sync-to-machine-no-file",
        r#"{"version": 1, "files": [{"path": "trace.pftrace", "machine": {"name": "phone"},
            "clocks": {"clock": "BOOTTIME", "offset_ns": 1,
                       "sync_to": {"machine": "phone", "clock": "BOOTTIME"}}}]}"#,
        "perfetto_manifest: clocks: sync_to.file is required and must be a string",
    );
    // In `trace_time` the ambiguity text is reachable.
    manifest_error(
        "trace-time-machine-no-file",
        r#"{"version": 1, "trace_time": {"clock": "BOOTTIME", "machine": "phone"},
            "files": [{"path": "trace.pftrace", "machine": {"name": "phone"}}]}"#,
        "perfetto_manifest: trace_time: machine 'phone' needs trace_time: file too: a machine \
         name alone is ambiguous because embedded machine ids are scoped to their trace.",
    );
}

/// A `files` entry declaring trace.pftrace multi-machine (ids 0 and 7).
const MULTI: &str = r#"{"path": "trace.pftrace",
    "machines": [{"id": 0, "name": "phone"}, {"id": 7, "name": "vm"}]}"#;

#[test]
fn error_reference_multi_machine_without_machine() {
    manifest_error(
        "ref-multi-no-machine",
        &format!(
            r#"{{"version": 1, "files": [{MULTI}, {{"path": "other.pftrace",
                "machine": {{"name": "server"}}, "clocks": {{"clock": "BOOTTIME",
                "sync_to": {{"file": "trace.pftrace", "clock": "BOOTTIME"}}}}}}]}}"#
        ),
        "perfetto_manifest: clocks: sync_to.file 'trace.pftrace' is a multi-machine trace; also \
         name the machine with clocks: sync_to.machine.",
    );
    // The same rule for trace_time.
    manifest_error(
        "trace-time-multi-no-machine",
        &format!(
            r#"{{"version": 1, "trace_time": {{"clock": "BOOTTIME", "file": "trace.pftrace"}},
                "files": [{MULTI}]}}"#
        ),
        "perfetto_manifest: trace_time: file 'trace.pftrace' is a multi-machine trace; also \
         name the machine with trace_time: machine.",
    );
}

#[test]
fn error_sync_to_machine_not_declared() {
    manifest_error(
        "sync-to-machine-undeclared",
        &format!(
            r#"{{"version": 1, "files": [{MULTI}, {{"path": "other.pftrace",
                "machine": {{"name": "server"}}, "clocks": {{"clock": "BOOTTIME",
                "sync_to": {{"file": "trace.pftrace", "machine": "ghost",
                             "clock": "BOOTTIME"}}}}}}]}}"#
        ),
        "perfetto_manifest: clocks: sync_to.machine 'ghost' is not a machine declared by file \
         'trace.pftrace'.",
    );
}

#[test]
fn error_clocks_machine_missing_on_multi_machine_file() {
    manifest_error(
        "clocks-machine-missing",
        r#"{"version": 1, "files": [{"path": "trace.pftrace",
            "machines": [{"id": 0, "name": "phone"}, {"id": 7, "name": "vm"}],
            "clocks": {"clock": "BOOTTIME",
                       "sync_to": {"file": "other.pftrace", "clock": "BOOTTIME"}}},
            {"path": "other.pftrace"}]}"#,
        "perfetto_manifest: clocks: file 'trace.pftrace' is a multi-machine trace; name which \
         machine the clock is on with clocks: machine.",
    );
    manifest_error(
        "clocks-machine-undeclared",
        r#"{"version": 1, "files": [{"path": "trace.pftrace",
            "machines": [{"id": 0, "name": "phone"}, {"id": 7, "name": "vm"}],
            "clocks": {"clock": "BOOTTIME", "machine": "ghost",
                       "sync_to": {"file": "other.pftrace", "clock": "BOOTTIME"}}},
            {"path": "other.pftrace"}]}"#,
        "perfetto_manifest: clocks: machine 'ghost' is not a machine declared by file \
         'trace.pftrace'.",
    );
}

/// A manifest relating trace.pftrace's BOOTTIME to other.pftrace's with `offset`.
fn offset_body(offset: &str) -> String {
    format!(
        r#"{{"version": 1, "files": [{{"path": "trace.pftrace", "clocks": {{"clock": "BOOTTIME",
            "sync_to": {{"file": "other.pftrace", "clock": "BOOTTIME"}},
            "offset_ns": {offset}}}}}, {{"path": "other.pftrace"}}]}}"#
    )
}

#[test]
fn error_offset_not_integer() {
    for (tag, offset) in [("offset-float", "1.5"), ("offset-string", r#""5""#)] {
        manifest_error(
            tag,
            &offset_body(offset),
            "perfetto_manifest: clocks: offset_ns must be an integer",
        );
    }
}

#[test]
fn error_offset_int64_min() {
    manifest_error(
        "offset-int64-min",
        &offset_body("-9223372036854775808"),
        "perfetto_manifest: clocks: offset_ns is out of range",
    );
}

#[test]
fn error_override_on_manifest_or_archive() {
    // An override naming a member that is itself a manifest.
    let meta = manifest(
        r#"{"version": 1, "files": [{"path": "zz_manifest.json", "machine": {"name": "x"}}]}"#,
    );
    let second = manifest(r#"{"version": 1}"#);
    let trace = small_proto("s", true, None);
    expect_error(
        "override-on-manifest",
        &zip(&[
            ("meta.json", &meta),
            ("trace.pftrace", &trace),
            ("zz_manifest.json", &second),
        ]),
        "meta.json",
        "perfetto_manifest: overrides are not supported for trace files which are themselves \
         archives or perfetto_manifest files: zz_manifest.json",
    );
    // ... or a compressed stream (a container).
    let meta = manifest(
        r#"{"version": 1, "files": [{"path": "t.pftrace.gz", "clocks": {"clock": "BOOTTIME",
            "sync_to": {"file": "trace.pftrace", "clock": "BOOTTIME"}}},
            {"path": "trace.pftrace"}]}"#,
    );
    let gz = gzip(&small_proto("g", true, None));
    expect_error(
        "override-on-gzip",
        &zip(&[
            ("meta.json", &meta),
            ("trace.pftrace", &trace),
            ("t.pftrace.gz", &gz),
        ]),
        "meta.json",
        "perfetto_manifest: overrides are not supported for trace files which are themselves \
         archives or perfetto_manifest files: t.pftrace.gz",
    );
    // A PIN (no source clock) on a compressed stream: the member resolves (it is a file of
    // the archive), and the override is refused as on any container, not as an unknown file.
    let meta = manifest(
        r#"{"version": 1, "files": [{"path": "t.json.gz",
            "clocks": {"sync_to": {"file": "trace.pftrace", "clock": "BOOTTIME"}}},
            {"path": "trace.pftrace"}]}"#,
    );
    let json = br#"[{"ph": "X", "name": "j", "ts": 2, "dur": 1, "pid": 1, "tid": 1}]"#;
    expect_error(
        "pin-on-gzip",
        &zip(&[
            ("meta.json", &meta),
            ("trace.pftrace", &trace),
            ("t.json.gz", &gzip(json)),
        ]),
        "meta.json",
        "perfetto_manifest: overrides are not supported for trace files which are themselves \
         archives or perfetto_manifest files: t.json.gz",
    );
    // ... or an archive of one trace inside the archive (which is otherwise read).
    let meta =
        manifest(r#"{"version": 1, "files": [{"path": "inner.zip", "machine": {"name": "x"}}]}"#);
    expect_error(
        "override-on-nested-zip",
        &zip(&[
            ("meta.json", &meta),
            ("trace.pftrace", &trace),
            ("inner.zip", &zip(&[("x.json", json)])),
        ]),
        "meta.json",
        "perfetto_manifest: overrides are not supported for trace files which are themselves \
         archives or perfetto_manifest files: inner.zip",
    );
}

#[test]
fn error_pin_on_file_with_clock_snapshots() {
    // Raised while the pinned proto is parsed: the error names the proto member.
    manifest_error_on(
        "pin-with-snapshots",
        r#"{"version": 1, "files": [{"path": "trace.pftrace",
            "clocks": {"sync_to": {"file": "other.pftrace", "clock": "BOOTTIME"}}},
            {"path": "other.pftrace"}]}"#,
        "trace.pftrace",
        "perfetto_manifest: clock overrides require the trace to use a single clock",
    );
}

#[test]
fn error_pin_on_missing_file() {
    // A PIN needs the file's private timeline: an entry naming no member cannot have one.
    manifest_error(
        "pin-missing-file",
        r#"{"version": 1, "files": [{"path": "ghost.json",
            "clocks": {"sync_to": {"file": "trace.pftrace", "clock": "BOOTTIME"}}},
            {"path": "trace.pftrace"}]}"#,
        "perfetto_manifest: clocks: could not resolve file 'ghost.json'. It must match the \
         `path` of an entry in the `files` array.",
    );
}

#[test]
fn error_override_relating_a_clock_to_itself() {
    // The edge is a snapshot naming one clock twice; it is the manifest's second edge, so
    // snapshot 1. A file's own clock on a named machine prints with its machine.
    manifest_error(
        "self-relation",
        r#"{"version": 1, "files": [
            {"path": "other.pftrace", "clocks": {"clock": "MONOTONIC",
                "sync_to": {"file": "trace.pftrace", "clock": "BOOTTIME"}}},
            {"path": "trace.pftrace", "clocks": {"clock": "BOOTTIME",
                "sync_to": {"file": "trace.pftrace", "clock": "BOOTTIME"}}}]}"#,
        "Clock sync error: duplicate clock domain with id=6 at snapshot 1.",
    );
}

/// Like [`manifest_error`], for an error that names the member `file` instead.
fn manifest_error_on(tag: &str, body: &str, file: &str, want: &str) {
    expect_error(tag, &archive_with_manifest(body), file, want);
}
