//! Merging several trace files into one timeline: the golden archives `i1_merge.zip`,
//! `i2_rendezvous.tar` and `i3_concat.pftrace.gz` (facts from their `tests/data/*.expect.md`),
//! one test per row of the manifest error table (trace-manifest-format.txt, with the exact
//! texts of behaviour-merging.md §6 and §8), and a few behaviour tests on small archives
//! built in memory.
//!
//! Threads and processes are identified by tid/pid and names, machines by name or raw_id,
//! never by row ids. Facts an expect file lists under "Not asserted / unsure" are not
//! asserted here.

use std::io::{Cursor, Read, Write};
use std::path::Path;

use prost::Message;
use rusqlite::Connection;
use sextant::protos::{
    clock_snapshot, trace_packet, track_event, ClockSnapshot, Trace, TracePacket, TrackDescriptor,
    TrackEvent,
};

mod common;

use common::{rows, table, TempFile};

// ---------------------------------------------------------------------------------------
// Helpers: importing and querying
// ---------------------------------------------------------------------------------------

/// A successful import: the read-only connection plus the files to clean up.
struct Imported {
    conn: Connection,
    _input: Option<TempFile>,
    _db: TempFile,
}

/// Imports the file at `path` into a fresh temporary database.
fn import_file(path: &Path, tag: &str) -> Result<Imported, String> {
    let db = TempFile::new(&format!("{tag}.sqlite"));
    sextant::import::import_path(path, db.path()).map_err(|e| e.to_string())?;
    let conn = sextant::db::open_read_only(db.path())
        .unwrap_or_else(|e| panic!("{tag}: import succeeded but the db is unreadable: {e}"));
    Ok(Imported {
        conn,
        _input: None,
        _db: db,
    })
}

/// Imports `tests/data/<name>` and opens the result; panics on failure.
fn import_golden(name: &str) -> Imported {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    import_file(&trace, name).unwrap_or_else(|e| panic!("importing {name} failed: {e}"))
}

/// Writes `bytes` to a temp file and imports it.
fn import_bytes(tag: &str, bytes: &[u8]) -> Result<Imported, String> {
    let input = TempFile::with_bytes(tag, bytes);
    let mut imported = import_file(input.path(), tag)?;
    imported._input = Some(input);
    Ok(imported)
}

/// Imports `bytes`, expecting success.
fn expect_ok(tag: &str, bytes: &[u8]) -> Imported {
    import_bytes(tag, bytes).unwrap_or_else(|e| panic!("{tag}: expected an import, got: {e}"))
}

/// Imports `bytes`, expecting an error; returns its Display.
fn expect_err(tag: &str, bytes: &[u8]) -> String {
    match import_bytes(tag, bytes) {
        Ok(_) => panic!("{tag}: expected an error, but the import succeeded"),
        Err(e) => e,
    }
}

/// Imports `bytes` and checks the error names the member `file` first and carries the
/// exact message `want`.
fn expect_error(tag: &str, bytes: &[u8], file: &str, want: &str) {
    let got = expect_err(tag, bytes);
    assert!(
        got.starts_with(file),
        "{tag}: the error should start with the member name {file:?}\n  got: {got}"
    );
    assert!(
        got.contains(want),
        "{tag}: the error should contain\n  want: {want}\n  got:  {got}"
    );
}

/// Every slice on a thread track: name, machine, pid, tid, thread, ts, dur, depth, parent.
const SLICES: &str = "
    select s.name, m.name, p.pid, t.tid, t.name, s.ts, s.dur, s.depth, par.name
    from slice s
    join thread_track tt on s.track_id = tt.id
    join thread t on t.utid = tt.utid
    left join process p on p.upid = t.upid
    left join machine m on m.id = t.machine_id
    left join slice par on par.id = s.parent_id
    order by s.ts, s.depth";

/// Non-zero `clock_sync_*` stats and dropped negative timestamps, as (name, value).
const SYNC_FAILURES: &str = "
    select name, value from stats
    where (name like 'clock_sync_%' or name = 'trace_sorter_negative_timestamp_dropped')
      and value != 0
    order by name";

/// `__intrinsic_trace_file` in processing order: name, type, order, container flag.
const TRACE_FILES: &str = "
    select name, trace_type, processing_order, is_container
    from __intrinsic_trace_file order by processing_order, id";

/// Each (file, machine) placement: file name, machine name, status.
const PLACEMENTS: &str = "
    select f.name, m.name, p.status
    from __sextant_file_placement p
    join __intrinsic_trace_file f on f.id = p.file_id
    left join machine m on m.id = p.machine_id
    order by f.name, m.name";

/// The `path` text of a file's placement on a machine.
fn placement_path(conn: &Connection, file: &str, machine: &str) -> String {
    let found = rows(
        conn,
        &format!(
            "select p.path from __sextant_file_placement p
             join __intrinsic_trace_file f on f.id = p.file_id
             join machine m on m.id = p.machine_id
             where f.name = '{file}' and m.name = '{machine}'"
        ),
    );
    assert_eq!(found.len(), 1, "placement rows of {file} on {machine}");
    found[0][0].clone()
}

fn trace_time_clock_id(conn: &Connection) -> Vec<Vec<String>> {
    rows(
        conn,
        "select int_value from metadata where name = 'trace_time_clock_id'",
    )
}

/// Each machine's idle rows: (machine, pid 0 process rows, tid 0 thread name).
fn idle_rows(conn: &Connection) -> Vec<Vec<String>> {
    rows(
        conn,
        "select m.name,
                (select count(*) from process p where p.pid = 0 and p.machine_id = m.id),
                (select group_concat(t.name) from thread t
                 where t.tid = 0 and t.machine_id = m.id)
         from machine m order by m.raw_id",
    )
}

// ---------------------------------------------------------------------------------------
// Helpers: building traces and archives
// ---------------------------------------------------------------------------------------

const REALTIME: u32 = 1;
const MONOTONIC: u32 = 3;
const BOOTTIME: u32 = 6;

fn packet(ts: Option<u64>, data: trace_packet::Data) -> TracePacket {
    TracePacket {
        timestamp: ts,
        data: Some(data),
        optional_trusted_packet_sequence_id: Some(
            trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(1),
        ),
        ..Default::default()
    }
}

/// A ClockSnapshot of `(clock id, reading)` pairs.
fn snapshot(clocks: &[(u32, u64)]) -> TracePacket {
    packet(
        None,
        trace_packet::Data::ClockSnapshot(ClockSnapshot {
            clocks: clocks
                .iter()
                .map(|&(id, ts)| clock_snapshot::Clock {
                    clock_id: Some(id),
                    timestamp: Some(ts),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
    )
}

/// A thread track (uuid 1) for `pid`/`tid` named `thread`, under a process track (uuid 2)
/// named `process`.
fn thread_tracks(pid: i32, tid: i64, process: &str, thread: &str) -> Vec<TracePacket> {
    vec![
        packet(
            None,
            trace_packet::Data::TrackDescriptor(TrackDescriptor {
                uuid: Some(2),
                process: Some(sextant::protos::ProcessDescriptor {
                    pid: Some(pid),
                    process_name: Some(process.into()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
        ),
        packet(
            None,
            trace_packet::Data::TrackDescriptor(TrackDescriptor {
                uuid: Some(1),
                parent_uuid: Some(2),
                thread: Some(sextant::protos::ThreadDescriptor {
                    pid: Some(pid),
                    tid: Some(tid),
                    thread_name: Some(thread.into()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
        ),
    ]
}

/// A complete slice `name` on track uuid 1, stamped on the packet's default clock.
fn slice(name: &str, ts: u64, dur: u64) -> Vec<TracePacket> {
    let event = |ts, kind: track_event::Type, name: Option<&str>| {
        packet(
            Some(ts),
            trace_packet::Data::TrackEvent(TrackEvent {
                r#type: Some(kind as i32),
                track_uuid: Some(1),
                name_field: name.map(|n| track_event::NameField::Name(n.into())),
                ..Default::default()
            }),
        )
    };
    vec![
        event(ts, track_event::Type::SliceBegin, Some(name)),
        event(ts + dur, track_event::Type::SliceEnd, None),
    ]
}

/// Encodes packets as a trace, stamping every packet with `machine_id` when given.
fn encode(packets: Vec<TracePacket>, machine_id: Option<u32>) -> Vec<u8> {
    let packet = packets
        .into_iter()
        .map(|mut p| {
            p.machine_id = machine_id;
            p
        })
        .collect();
    Trace { packet }.encode_to_vec()
}

/// A small proto: process 10 `app`, thread 11 `main`, one 100 ms slice `name` at 1.1 s;
/// with a BOOTTIME/MONOTONIC ClockSnapshot when `with_snapshot`.
fn small_proto(name: &str, with_snapshot: bool, machine_id: Option<u32>) -> Vec<u8> {
    let mut packets = Vec::new();
    if with_snapshot {
        packets.push(snapshot(&[
            (BOOTTIME, 1_000_000_000),
            (MONOTONIC, 500_000_000),
        ]));
    }
    packets.extend(thread_tracks(10, 11, "app", "main"));
    packets.extend(slice(name, 1_100_000_000, 100_000_000));
    encode(packets, machine_id)
}

/// A ZIP of `members`, in this order, stored uncompressed.
fn zip(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, bytes) in members {
        w.start_file(*name, options).expect("zip member");
        w.write_all(bytes).expect("zip write");
    }
    w.finish().expect("zip finish").into_inner()
}

/// A ustar TAR of `members`, in this order.
fn tar(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, bytes) in members {
        let mut header = tar::Header::new_ustar();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut header, name, *bytes)
            .expect("tar member");
    }
    b.into_inner().expect("tar finish")
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).expect("gzip write");
    e.finish().expect("gzip finish")
}

/// The members of a golden ZIP or TAR, in archive order.
fn golden_members(name: &str) -> Vec<(String, Vec<u8>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("reading {name}: {e}"));
    let mut out = Vec::new();
    if bytes.starts_with(b"PK") {
        let mut archive = zip::ZipArchive::new(Cursor::new(&bytes)).expect("zip");
        for i in 0..archive.len() {
            let mut f = archive.by_index(i).expect("zip member");
            let mut data = Vec::new();
            f.read_to_end(&mut data).expect("zip read");
            out.push((f.name().to_string(), data));
        }
    } else {
        let mut archive = tar::Archive::new(&bytes[..]);
        for entry in archive.entries().expect("tar") {
            let mut entry = entry.expect("tar entry");
            let name = entry.path().expect("tar path").display().to_string();
            let mut data = Vec::new();
            entry.read_to_end(&mut data).expect("tar read");
            out.push((name, data));
        }
    }
    out
}

/// A copy of the golden archive `name` (same kind, members and order) whose member
/// `manifest` is re-serialized as compact JSON.
fn compact_manifest_copy(name: &str, manifest: &str) -> Vec<u8> {
    let members: Vec<(String, Vec<u8>)> = golden_members(name)
        .into_iter()
        .map(|(n, data)| {
            if n != manifest {
                return (n, data);
            }
            let v: serde_json::Value = serde_json::from_slice(&data).expect("manifest JSON");
            (n, serde_json::to_vec(&v).expect("JSON"))
        })
        .collect();
    let refs: Vec<(&str, &[u8])> = members
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_slice()))
        .collect();
    if name.ends_with(".zip") {
        zip(&refs)
    } else {
        tar(&refs)
    }
}

/// `{"perfetto_manifest": BODY}`.
fn manifest(body: &str) -> Vec<u8> {
    format!("{{\"perfetto_manifest\": {body}}}").into_bytes()
}

/// A ZIP holding `meta.json` (the manifest with `body`), `other.pftrace` and
/// `trace.pftrace` (both small protos with a ClockSnapshot).
fn archive_with_manifest(body: &str) -> Vec<u8> {
    let meta = manifest(body);
    let other = small_proto("other_slice", true, None);
    let trace = small_proto("trace_slice", true, None);
    zip(&[
        ("meta.json", &meta),
        ("other.pftrace", &other),
        ("trace.pftrace", &trace),
    ])
}

/// Imports an [`archive_with_manifest`] and checks the error names `meta.json`.
fn manifest_error(tag: &str, body: &str, want: &str) {
    expect_error(tag, &archive_with_manifest(body), "meta.json", want);
}

// ---------------------------------------------------------------------------------------
// Golden archives
// ---------------------------------------------------------------------------------------

#[test]
fn i1_merge() {
    check_i1(&import_golden("i1_merge.zip").conn);
}

/// i1 with its manifest re-serialized without whitespace (members, order and everything
/// else unchanged): separates manifest detection from the rest of the merge.
#[test]
fn i1_merge_compact_manifest() {
    let bytes = compact_manifest_copy("i1_merge.zip", "perfetto_manifest.json");
    check_i1(&expect_ok("i1-compact.zip", &bytes).conn);
}

fn check_i1(c: &Connection) {
    assert_eq!(
        rows(c, SLICES),
        table(&[
            [
                "phone_launch",
                "phone",
                "1234",
                "1235",
                "RenderThread",
                "10100000000",
                "300000000",
                "0",
                "NULL"
            ],
            [
                "app_request",
                "phone",
                "1234",
                "1234",
                "NULL",
                "10150000000",
                "50000000",
                "0",
                "NULL"
            ],
            [
                "app_parse",
                "phone",
                "1234",
                "1234",
                "NULL",
                "10160000000",
                "20000000",
                "1",
                "app_request"
            ],
            [
                "watch_sync",
                "watch",
                "77",
                "78",
                "sync",
                "10200000000",
                "100000000",
                "0",
                "NULL"
            ],
            [
                "watch_notify",
                "watch",
                "77",
                "78",
                "sync",
                "10400000000",
                "50000000",
                "0",
                "NULL"
            ],
        ])
    );
    assert_eq!(rows(c, "select count(*) from slice"), table(&[["5"]]));

    // Exactly the two named machines, synthetic raw ids in order of first appearance, and
    // no raw_id 0 host row.
    assert_eq!(
        rows(c, "select raw_id, name from machine order by raw_id"),
        table(&[["4294967296", "phone"], ["4294967297", "watch"]])
    );
    // One process row for pid 1234 (phone.pftrace and app_log.json share it).
    assert_eq!(
        rows(
            c,
            "select m.name, p.pid, p.name from process p join machine m on m.id = p.machine_id
             where p.pid != 0 order by m.name, p.pid"
        ),
        table(&[
            ["phone", "1234", "com.example.app"],
            ["watch", "77", "watchd"],
        ])
    );
    assert_eq!(
        rows(
            c,
            "select m.name, t.tid, t.name, p.pid from thread t
             join machine m on m.id = t.machine_id
             left join process p on p.upid = t.upid
             where t.tid in (1234, 1235, 78) order by m.name, t.tid"
        ),
        table(&[
            ["phone", "1234", "NULL", "1234"],
            ["phone", "1235", "RenderThread", "1234"],
            ["watch", "78", "sync", "77"],
        ])
    );
    assert_eq!(
        idle_rows(c),
        table(&[["phone", "1", "swapper"], ["watch", "1", "swapper"]])
    );

    assert_eq!(trace_time_clock_id(c), table(&[["6"]]));
    assert_eq!(rows(c, SYNC_FAILURES), Vec::<Vec<String>>::new());

    assert_eq!(
        rows(c, TRACE_FILES),
        table(&[
            ["NULL", "zip", "0", "1"],
            ["perfetto_manifest.json", "perfetto_manifest", "1", "0"],
            ["phone.pftrace", "proto", "2", "0"],
            ["watch.pftrace", "proto", "3", "0"],
            ["app_log.json", "json", "4", "0"],
        ])
    );

    // clock_snapshot: the two files' own snapshots and the two manifest edges, 8 rows.
    // Compared as a set of snapshots, each the sorted (clock_id, clock_name, value) rows of
    // one snapshot_id. (Which machine_id a manifest edge's rows carry is not stated.)
    assert_eq!(
        rows(c, "select count(*) from clock_snapshot"),
        table(&[["8"]])
    );
    let flat = rows(
        c,
        "select snapshot_id, clock_id, clock_name, clock_value from clock_snapshot
         order by snapshot_id, clock_id, clock_value",
    );
    let mut snapshots: Vec<Vec<Vec<String>>> = Vec::new();
    let mut last: Option<String> = None;
    for r in flat {
        if last.as_deref() != Some(r[0].as_str()) {
            snapshots.push(Vec::new());
            last = Some(r[0].clone());
        }
        snapshots.last_mut().unwrap().push(r[1..].to_vec());
    }
    for s in &mut snapshots {
        s.sort();
    }
    snapshots.sort();
    let mut want = vec![
        // phone.pftrace's own snapshot.
        table(&[
            ["3", "MONOTONIC", "9000000000"],
            ["6", "BOOTTIME", "10000000000"],
        ]),
        // watch.pftrace's own snapshot.
        table(&[
            ["3", "MONOTONIC", "49000000000"],
            ["6", "BOOTTIME", "50000000000"],
        ]),
        // RELATE: watch BOOTTIME 40 s <-> phone BOOTTIME 0 (offset -40 s).
        table(&[["6", "BOOTTIME", "0"], ["6", "BOOTTIME", "40000000000"]]),
        // PIN: app_log.json's file clock 0 <-> phone BOOTTIME 10 s (offset +10 s).
        table(&[["11", "NULL", "0"], ["6", "BOOTTIME", "10000000000"]]),
    ];
    for s in &mut want {
        s.sort();
    }
    want.sort();
    assert_eq!(snapshots, want);

    // Sextant's placement report: one row per (file, machine), each placed.
    assert_eq!(
        rows(c, PLACEMENTS),
        table(&[
            ["app_log.json", "phone", "path"],
            ["phone.pftrace", "phone", "trace_time"],
            ["watch.pftrace", "watch", "path"],
        ])
    );
    for (file, machine) in [("watch.pftrace", "watch"), ("app_log.json", "phone")] {
        let path = placement_path(c, file, machine);
        assert!(
            path.contains("manifest"),
            "{file}: the path should go through the manifest edge: {path}"
        );
    }
    assert_eq!(
        rows(
            c,
            "select count(*) > 0 from __sextant_clock_edge where source = 'manifest'"
        ),
        table(&[["1"]]),
        "no manifest edge in __sextant_clock_edge"
    );
    assert_eq!(
        rows(
            c,
            "select count(*) from __sextant_clock_edge where source = 'realtime_rendezvous'"
        ),
        table(&[["0"]]),
        "the watch has no REALTIME: no rendezvous"
    );
    // Queryable (import_path keeps no candidates, so it may be empty).
    rows(
        c,
        "select node_id, label, is_current, dropped_events from __sextant_trace_time_candidate",
    );
}

#[test]
fn i2_rendezvous() {
    check_i2(&import_golden("i2_rendezvous.tar").conn);
}

/// i2 with its manifest re-serialized without whitespace (see i1_merge_compact_manifest).
#[test]
fn i2_rendezvous_compact_manifest() {
    let bytes = compact_manifest_copy("i2_rendezvous.tar", "perfetto_manifest.json");
    check_i2(&expect_ok("i2-compact.tar", &bytes).conn);
}

fn check_i2(c: &Connection) {
    assert_eq!(
        rows(c, SLICES),
        table(&[
            [
                "b_ack",
                "phone-b",
                "300",
                "301",
                "main",
                "1300000000",
                "100000000",
                "0",
                "NULL"
            ],
            [
                "a_tap",
                "phone-a",
                "300",
                "301",
                "main",
                "1500000000",
                "100000000",
                "0",
                "NULL"
            ],
            [
                "b_done",
                "phone-b",
                "300",
                "301",
                "main",
                "1650000000",
                "50000000",
                "0",
                "NULL"
            ],
            [
                "b_wall",
                "phone-b",
                "300",
                "301",
                "main",
                "1800000000",
                "20000000",
                "0",
                "NULL"
            ],
        ])
    );
    assert_eq!(rows(c, "select count(*) from slice"), table(&[["4"]]));

    assert_eq!(
        rows(c, "select raw_id, name from machine order by raw_id"),
        table(&[["4294967296", "phone-a"], ["4294967297", "phone-b"]])
    );
    // Same pid/tid on both phones: two process rows and two thread rows.
    assert_eq!(
        rows(
            c,
            "select m.name, p.pid, p.name from process p join machine m on m.id = p.machine_id
             where p.pid != 0 order by m.name"
        ),
        table(&[
            ["phone-a", "300", "com.example.sender"],
            ["phone-b", "300", "com.example.receiver"],
        ])
    );
    assert_eq!(
        rows(
            c,
            "select m.name, t.tid, t.name, p.pid, p.name from thread t
             join machine m on m.id = t.machine_id
             left join process p on p.upid = t.upid
             where t.tid = 301 order by m.name"
        ),
        table(&[
            ["phone-a", "301", "main", "300", "com.example.sender"],
            ["phone-b", "301", "main", "300", "com.example.receiver"],
        ])
    );
    assert_eq!(
        idle_rows(c),
        table(&[["phone-a", "1", "swapper"], ["phone-b", "1", "swapper"]])
    );
    assert_eq!(trace_time_clock_id(c), table(&[["6"]]));
    assert_eq!(rows(c, SYNC_FAILURES), Vec::<Vec<String>>::new());
    // Processing order by §7's rule: manifest first, then protos by name.
    assert_eq!(
        rows(c, TRACE_FILES),
        table(&[
            ["NULL", "tar", "0", "1"],
            ["perfetto_manifest.json", "perfetto_manifest", "1", "0"],
            ["phone_a.pftrace", "proto", "2", "0"],
            ["phone_b.pftrace", "proto", "3", "0"],
        ])
    );

    // Sextant's placement report: phone-b goes through the REALTIME rendezvous.
    assert_eq!(
        rows(c, PLACEMENTS),
        table(&[
            ["phone_a.pftrace", "phone-a", "trace_time"],
            ["phone_b.pftrace", "phone-b", "path"],
        ])
    );
    let path = placement_path(c, "phone_b.pftrace", "phone-b");
    assert!(
        path.contains("realtime_rendezvous"),
        "phone-b should be placed through the REALTIME rendezvous: {path}"
    );
    assert_eq!(
        rows(
            c,
            "select count(*) > 0 from __sextant_clock_edge
             where source = 'realtime_rendezvous'"
        ),
        table(&[["1"]]),
        "no realtime_rendezvous edge in __sextant_clock_edge"
    );
    assert_eq!(
        rows(
            c,
            "select count(*) from __sextant_clock_edge where source = 'manifest'"
        ),
        table(&[["0"]]),
        "the manifest states no clock relation"
    );
    rows(
        c,
        "select node_id, label, is_current, dropped_events from __sextant_trace_time_candidate",
    );
}

#[test]
fn i3_concat() {
    let i = import_golden("i3_concat.pftrace.gz");
    let c = &i.conn;

    assert_eq!(
        rows(c, SLICES),
        table(&[
            [
                "gz_first",
                "NULL",
                "60",
                "61",
                "gzmain",
                "2100000000",
                "100000000",
                "0",
                "NULL"
            ],
            [
                "gz_second",
                "NULL",
                "60",
                "61",
                "gzmain",
                "2300000000",
                "100000000",
                "0",
                "NULL"
            ],
            [
                "gz_span",
                "NULL",
                "60",
                "61",
                "gzmain",
                "2500000000",
                "400000000",
                "0",
                "NULL"
            ],
            [
                "gz_interned",
                "NULL",
                "60",
                "61",
                "gzmain",
                "2600000000",
                "0",
                "1",
                "gz_span"
            ],
        ])
    );
    assert_eq!(rows(c, "select count(*) from slice"), table(&[["4"]]));
    assert_eq!(
        rows(c, "select pid, name from process where pid = 60"),
        table(&[["60", "gzapp"]])
    );
    // Single machine: the host.
    assert_eq!(
        rows(c, "select raw_id from machine"),
        table(&[["0"]]),
        "i3 is a single-machine (host) trace"
    );
    assert_eq!(trace_time_clock_id(c), table(&[["6"]]));
    assert_eq!(rows(c, SYNC_FAILURES), Vec::<Vec<String>>::new());

    // One gzip container holding one proto child named "" with all members decompressed.
    assert_eq!(
        rows(
            c,
            "select f.name, f.size, f.trace_type, f.is_container,
                    (select count(*) from __intrinsic_trace_file k where k.parent_id = f.id)
             from __intrinsic_trace_file f where f.parent_id is null"
        ),
        table(&[["NULL", "307", "gzip", "1", "1"]])
    );
    assert_eq!(
        rows(
            c,
            "select quote(k.name), k.size, k.trace_type, k.is_container
             from __intrinsic_trace_file k join __intrinsic_trace_file f on f.id = k.parent_id
             where f.parent_id is null"
        ),
        table(&[["''", "262", "proto", "0"]]),
        "the decompressed child of a gzip stream is named \"\" (empty)"
    );
    assert_eq!(
        rows(
            c,
            "select int_value from metadata where name = 'trace_size_bytes'"
        ),
        table(&[["262"]]),
        "trace_size_bytes is the decompressed size"
    );
}

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

/// Like [`manifest_error`], for an error that names the member `file` instead.
fn manifest_error_on(tag: &str, body: &str, file: &str, want: &str) {
    expect_error(tag, &archive_with_manifest(body), file, want);
}

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

#[test]
fn archive_inside_an_archive_is_refused() {
    let trace = small_proto("s", true, None);
    let inner = zip(&[("inner.pftrace", &trace)]);
    let inner_tar = tar(&[("inner.pftrace", &trace)]);
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
            got.contains("an archive inside an archive is not supported"),
            "{tag}: {got}"
        );
    }
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
