//! Behaviour tests on small archives built in memory.

use super::*;

// ---------------------------------------------------------------------------------------
// Behaviour
// ---------------------------------------------------------------------------------------

/// A proto on embedded machine `machine_id`: BOOTTIME `boot` = REALTIME `real`, process
/// 300 `process`, thread 301 `main`, one slice `name` at BOOTTIME `ts`.
fn machine_proto(
    machine_id: u32,
    boot: u64,
    real: u64,
    process: &str,
    name: &str,
    ts: u64,
) -> Vec<u8> {
    let mut packets = vec![snapshot(&[(BOOTTIME, boot), (REALTIME, real)])];
    packets.extend(thread_tracks(300, 301, process, "main"));
    packets.extend(slice(name, ts, 100_000_000));
    encode(packets, Some(machine_id))
}

#[test]
fn manifestless_archive_of_two_machines_merges() {
    // a.pftrace is all machine 1, b.pftrace all machine 2. a is processed first and its
    // BOOTTIME becomes trace time; b has no path to it but through REALTIME (assumed
    // equal on both machines): b BOOTTIME T = REALTIME T + 95.5 s = a BOOTTIME T - 3.5 s.
    let a = machine_proto(
        1,
        1_000_000_000,
        100_000_000_000,
        "sender",
        "a_slice",
        1_500_000_000,
    );
    let b = machine_proto(
        2,
        5_000_000_000,
        100_500_000_000,
        "receiver",
        "b_slice",
        5_600_000_000,
    );
    for (tag, archive) in [
        (
            "two-machines-zip",
            zip(&[("b.pftrace", &b), ("a.pftrace", &a)]),
        ),
        (
            "two-machines-tar",
            tar(&[("b.pftrace", &b), ("a.pftrace", &a)]),
        ),
    ] {
        let i = expect_ok(tag, &archive);
        let c = &i.conn;
        assert_eq!(
            rows(
                c,
                "select s.name, m.raw_id, p.name, t.tid, s.ts, s.dur
                 from slice s join thread_track tt on tt.id = s.track_id
                 join thread t on t.utid = tt.utid
                 join process p on p.upid = t.upid
                 join machine m on m.id = t.machine_id order by s.ts"
            ),
            table(&[
                ["a_slice", "1", "sender", "301", "1500000000", "100000000"],
                ["b_slice", "2", "receiver", "301", "2100000000", "100000000"],
            ]),
            "{tag}"
        );
        // One machine row per embedded id; same pid on both, two process rows.
        assert_eq!(
            rows(c, "select raw_id from machine order by raw_id"),
            table(&[["1"], ["2"]]),
            "{tag}"
        );
        assert_eq!(
            rows(c, "select count(*) from process where pid = 300"),
            table(&[["2"]]),
            "{tag}"
        );
        assert_eq!(trace_time_clock_id(c), table(&[["6"]]), "{tag}");
        assert_eq!(rows(c, SYNC_FAILURES), Vec::<Vec<String>>::new(), "{tag}");
        let path = rows(
            c,
            "select p.path from __sextant_file_placement p
             join __intrinsic_trace_file f on f.id = p.file_id where f.name = 'b.pftrace'",
        );
        assert_eq!(path.len(), 1, "{tag}: placement rows of b.pftrace");
        assert!(
            path[0][0].contains("realtime_rendezvous"),
            "{tag}: b.pftrace should be placed through the REALTIME rendezvous: {}",
            path[0][0]
        );
    }
}

#[test]
fn files_not_in_the_manifest_are_imported() {
    let meta = manifest(
        r#"{"version": 1, "files": [{"path": "listed.pftrace", "machine": {"name": "phone"}}]}"#,
    );
    let listed = small_proto("listed_slice", true, None);
    let unlisted = small_proto("unlisted_slice", false, None);
    let log = br#"[{"ph": "X", "name": "log_slice", "ts": 1000, "dur": 10, "pid": 5, "tid": 6}]"#;
    let i = expect_ok(
        "unlisted-files",
        &zip(&[
            ("meta.json", &meta),
            ("listed.pftrace", &listed),
            ("unlisted.pftrace", &unlisted),
            ("extra/log.json", log),
        ]),
    );
    let c = &i.conn;
    assert_eq!(
        rows(
            c,
            "select s.name, m.raw_id, m.name from slice s
             join thread_track tt on tt.id = s.track_id
             join thread t on t.utid = tt.utid
             join machine m on m.id = t.machine_id order by s.name"
        ),
        table(&[
            ["listed_slice", "4294967296", "phone"],
            ["log_slice", "0", "NULL"],
            ["unlisted_slice", "0", "NULL"],
        ])
    );
    assert_eq!(
        rows(
            c,
            "select name, trace_type from __intrinsic_trace_file
             where parent_id is not null order by name"
        ),
        table(&[
            ["extra/log.json", "json"],
            ["listed.pftrace", "proto"],
            ["meta.json", "perfetto_manifest"],
            ["unlisted.pftrace", "proto"],
        ])
    );
}

#[test]
fn hidden_members_are_skipped() {
    let trace = small_proto("visible", true, None);
    let junk = b"\x00\x05Bud1 not a trace at all";
    let members: [(&str, &[u8]); 4] = [
        (".DS_Store", junk),
        ("a/.git/x", junk),
        ("t.pftrace", &trace),
        ("dir/.hidden.json", b"[{\"ph\": \"X\"}]"),
    ];
    for (tag, archive) in [("hidden-zip", zip(&members)), ("hidden-tar", tar(&members))] {
        let i = expect_ok(tag, &archive);
        assert_eq!(
            rows(
                &i.conn,
                "select name from __intrinsic_trace_file order by id"
            ),
            table(&[["NULL"], ["t.pftrace"]]),
            "{tag}"
        );
        assert_eq!(
            rows(&i.conn, "select name from slice"),
            table(&[["visible"]]),
            "{tag}"
        );
    }
}

/// The spec: "an archive that itself contains multiple traces cannot be nested inside
/// another merge"; one that holds a single trace is read where a container sorts.
#[test]
fn archive_of_several_traces_inside_an_archive_is_refused() {
    let trace = small_proto("s", true, None);
    let inner = zip(&[("a.pftrace", &trace), ("b.pftrace", &trace)]);
    let inner_tar = tar(&[("a.pftrace", &trace), ("b.pftrace", &trace)]);
    for (tag, archive, member) in [
        (
            "nested-zip",
            zip(&[("t.pftrace", &trace), ("inner.zip", &inner)]),
            "inner.zip",
        ),
        (
            "nested-tar-in-zip",
            zip(&[("t.pftrace", &trace), ("inner.tar", &inner_tar)]),
            "inner.tar",
        ),
        (
            "nested-zip-in-tar",
            tar(&[("t.pftrace", &trace), ("inner.zip", &inner)]),
            "inner.zip",
        ),
        (
            "nested-gz-zip",
            zip(&[("t.pftrace", &trace), ("inner.zip.gz", &gzip(&inner))]),
            "inner.zip.gz",
        ),
    ] {
        let got = expect_err(tag, &archive);
        assert!(
            got.contains(member),
            "{tag}: the error should name {member}: {got}"
        );
        assert!(
            got.contains("an archive inside an archive may hold one trace only"),
            "{tag}: {got}"
        );
    }
}

#[test]
fn archive_of_one_trace_inside_an_archive_is_read() {
    let json = br#"[{"ph": "X", "name": "inner", "ts": 2, "dur": 1, "pid": 1, "tid": 1}]"#;
    let proto = small_proto("p", true, None);
    let inner = zip(&[("x.json", json)]);
    let archive = zip(&[("inner.zip", &inner), ("p.pftrace", &proto)]);
    let i = expect_ok("zip-in-zip", &archive);
    assert_eq!(
        rows(
            &i.conn,
            "select id, coalesce(parent_id, '-'), coalesce(name, '-'), trace_type,
                    processing_order, is_container
             from __intrinsic_trace_file order by id"
        ),
        table(&[
            ["0", "-", "-", "zip", "0", "1"],
            ["1", "0", "inner.zip", "zip", "2", "1"],
            ["2", "0", "p.pftrace", "proto", "1", "0"],
            ["3", "1", "x.json", "json", "3", "0"],
        ])
    );
    assert_eq!(
        rows(&i.conn, "select name from slice where name = 'inner'"),
        table(&[["inner"]])
    );
    let tar_inside = zip(&[
        ("inner.tar", &tar(&[("x.json", json)])),
        ("p.pftrace", &proto),
    ]);
    let i = expect_ok("tar-in-zip", &tar_inside);
    assert_eq!(
        rows(&i.conn, "select count(*) from slice where name = 'inner'"),
        table(&[["1"]])
    );
}

/// A gzip'd archive is the archive it holds: its stream is the container of the members.
#[test]
fn gzipped_archive_is_read_as_its_archive() {
    let json = br#"[{"ph": "X", "name": "j", "ts": 2, "dur": 1, "pid": 1, "tid": 1}]"#;
    let proto = small_proto("p", true, None);
    let inner = tar(&[("p.pftrace", &proto), ("a.json", json)]);
    let input = gzip(&inner);
    let i = expect_ok("tar-gz", &input);
    assert_eq!(
        rows(
            &i.conn,
            "select size from __intrinsic_trace_file where id = 1"
        ),
        table(&[[inner.len().to_string().as_str()]])
    );
    assert_eq!(
        rows(
            &i.conn,
            "select id, coalesce(parent_id, '-'), coalesce(name, '-'), trace_type,
                    processing_order, is_container
             from __intrinsic_trace_file order by id"
        ),
        table(&[
            ["0", "-", "-", "gzip", "0", "1"],
            ["1", "0", "", "tar", "1", "1"],
            ["2", "1", "p.pftrace", "proto", "2", "0"],
            ["3", "1", "a.json", "json", "3", "0"],
        ])
    );
    assert_eq!(
        rows(
            &i.conn,
            "select name from slice where name in ('j', 'p') order by name"
        ),
        table(&[["j"], ["p"]])
    );
}

#[test]
fn pretty_printed_manifest_is_detected() {
    // Detection removes ALL whitespace from the first 128 bytes before looking for
    // `{"perfetto_manifest"` (behaviour-merging.md §7), so whitespace between `{` and the
    // key, as any pretty-printer writes it, still makes a manifest.
    let meta = b"{\n  \"perfetto_manifest\" : {\n    \"version\": 1,\n    \"files\": [{\"path\": \
                 \"t.pftrace\", \"machine\": {\"name\": \"phone\"}}]}}\n";
    let trace = small_proto("s", true, None);
    let i = expect_ok(
        "pretty-manifest",
        &zip(&[("meta.json", meta), ("t.pftrace", &trace)]),
    );
    assert_eq!(
        rows(
            &i.conn,
            "select name, trace_type from __intrinsic_trace_file
             where parent_id is not null order by processing_order"
        ),
        table(&[["meta.json", "perfetto_manifest"], ["t.pftrace", "proto"]])
    );
    assert_eq!(
        rows(
            &i.conn,
            "select s.name, m.name from slice s join thread_track tt on tt.id = s.track_id
             join thread t on t.utid = tt.utid join machine m on m.id = t.machine_id"
        ),
        table(&[["s", "phone"]])
    );
}

#[test]
fn standalone_manifest_imports() {
    let i = expect_ok(
        "standalone-manifest",
        &manifest(
            r#"{"version": 1, "trace_time": {"clock": "BOOTTIME"},
                "files": [{"path": "x.pftrace", "machine": {"name": "phone"}}]}"#,
        ),
    );
    let c = &i.conn;
    assert_eq!(
        rows(
            c,
            "select parent_id, trace_type, processing_order, is_container
             from __intrinsic_trace_file"
        ),
        table(&[["NULL", "perfetto_manifest", "0", "0"]])
    );
    assert_eq!(rows(c, "select count(*) from slice"), table(&[["0"]]));
    // It still applies trace_time and names its machines (behaviour-merging.md §8).
    assert_eq!(trace_time_clock_id(c), table(&[["6"]]));
    assert_eq!(
        rows(c, "select raw_id, name from machine where name is not null"),
        table(&[["4294967296", "phone"]])
    );
}

/// A TAR member of a type other than a file or a directory is skipped when empty (links,
/// fifos) and refused when it holds data: `Unsupported file type: 0xNN`.
#[test]
fn tar_members_of_other_types() {
    let trace = small_proto("kept", true, None);
    let mut b = tar::Builder::new(Vec::new());
    let mut add = |name: &str, kind: tar::EntryType, data: &[u8]| {
        let mut header = tar::Header::new_ustar();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(kind);
        b.append_data(&mut header, name, data).expect("tar member");
    };
    add("link", tar::EntryType::Symlink, b"");
    add("fifo", tar::EntryType::Fifo, b"");
    add("dir/", tar::EntryType::Directory, b"");
    add("t.pftrace", tar::EntryType::Regular, &trace);
    let skipped = b.into_inner().expect("tar finish");
    let i = expect_ok("tar-other-types", &skipped);
    assert_eq!(
        rows(
            &i.conn,
            "select name from __intrinsic_trace_file order by id"
        ),
        table(&[["NULL"], ["t.pftrace"]])
    );

    let mut b = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_ustar();
    header.set_size(trace.len() as u64);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Continuous);
    b.append_data(&mut header, "contiguous.pftrace", &trace[..])
        .expect("tar member");
    let refused = b.into_inner().expect("tar finish");
    let got = expect_err("tar-contiguous", &refused);
    assert!(
        got.contains("contiguous.pftrace: Unsupported file type: 0x37"),
        "got: {got}"
    );
}

/// `metadata` and `clock_snapshot` rows are numbered from 0, as every table of the
/// reference is.
#[test]
fn metadata_and_clock_snapshot_ids_start_at_zero() {
    let i = expect_ok("ids-from-zero", &small_proto("s", true, None));
    assert_eq!(
        rows(
            &i.conn,
            "select (select min(id) from metadata), (select min(id) from clock_snapshot),
                    (select count(*) = max(id) + 1 from clock_snapshot)"
        ),
        table(&[["0", "0", "1"]])
    );
}

/// A gzip'd member of a deflated ZIP is, once read, as big as the gzip stream it took in
/// (the ZIP's recorded size), like every file: not its deflated size in the archive
/// (behaviour-merging.md §7).
#[test]
fn a_gzip_member_of_a_deflated_zip_has_its_inflated_size() {
    let proto = small_proto("p", true, None);
    let gz = gzip(&proto);
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    w.start_file("p.pftrace.gz", deflated).expect("zip member");
    w.write_all(&gz).expect("zip write");
    let archive = w.finish().expect("zip finish").into_inner();
    let i = expect_ok("zip-gz-size", &archive);
    assert_eq!(
        rows(
            &i.conn,
            "select id, trace_type, size from __intrinsic_trace_file order by id"
        ),
        table(&[
            ["0", "zip", &archive.len().to_string()],
            ["1", "gzip", &gz.len().to_string()],
            ["2", "proto", &proto.len().to_string()],
        ])
    );
}

/// Two ZIP members of one name are two files: Trace Processor reads every local header, and
/// orders the pair by archive position (behaviour-merging.md §7). The ZIP reader's index
/// keeps only the last of them, so such an archive is listed from its local headers.
#[test]
fn zip_members_of_one_name_are_both_read() {
    let first = small_proto("first", true, None);
    let second = small_proto("second", true, None);
    // The writer refuses a repeated name: write two, then rename the second in place
    // (local header and central directory; the CRCs are of the contents).
    let mut archive = zip(&[("dup.pftrace", &first), ("dxp.pftrace", &second)]);
    let (from, to) = (b"dxp.pftrace", b"dup.pftrace");
    let mut at = 0;
    while let Some(i) = archive[at..].windows(from.len()).position(|w| w == from) {
        archive[at + i..at + i + to.len()].copy_from_slice(to);
        at += i + to.len();
    }
    let i = expect_ok("zip-duplicates", &archive);
    assert_eq!(
        rows(
            &i.conn,
            "select id, coalesce(name, '-'), trace_type, processing_order
             from __intrinsic_trace_file order by id"
        ),
        table(&[
            ["0", "-", "zip", "0"],
            ["1", "dup.pftrace", "proto", "1"],
            ["2", "dup.pftrace", "proto", "2"],
        ])
    );
    assert_eq!(
        rows(&i.conn, "select name from slice order by name"),
        table(&[["first"], ["second"]])
    );
}

/// `__intrinsic_trace_file` ids follow the archive's order while members are processed by
/// (priority, name): `processing_order` says that order, and every `trace_id` is the id. A
/// gzip member's decompressed stream gets its id when the gzip is processed, after all
/// the members.
#[test]
fn trace_file_ids_follow_the_archive_order() {
    let json = br#"[{"ph": "X", "name": "j", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]"#;
    let proto = small_proto("p", true, None);
    let archive = tar(&[
        ("k.json", json),
        ("g.pftrace.gz", &gzip(&proto)),
        ("p.pftrace", &proto),
    ]);
    let i = expect_ok("trace-file-ids", &archive);
    assert_eq!(
        rows(
            &i.conn,
            "select id, coalesce(parent_id, '-'), coalesce(name, '-'), trace_type, processing_order
             from __intrinsic_trace_file order by id"
        ),
        table(&[
            ["0", "-", "-", "tar", "0"],
            ["1", "0", "k.json", "json", "4"],
            ["2", "0", "g.pftrace.gz", "gzip", "2"],
            ["3", "0", "p.pftrace", "proto", "1"],
            ["4", "2", "", "proto", "3"],
        ])
    );
    assert_eq!(
        rows(
            &i.conn,
            "select trace_id, str_value from metadata where name = 'trace_type' order by trace_id"
        ),
        table(&[["1", "json"], ["3", "proto"], ["4", "proto"]])
    );
    assert_eq!(
        rows(
            &i.conn,
            "select distinct trace_id from stats where trace_id is not null order by trace_id"
        ),
        table(&[["1"], ["3"], ["4"]])
    );
}
