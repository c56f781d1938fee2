//! Merging several trace files into one timeline: the golden archives `i1_merge.zip`,
//! `i2_rendezvous.tar` and `i3_concat.pftrace.gz` (facts from their `tests/data/*.expect.md`),
//! one test per row of the manifest error table (trace-manifest-format.txt, with the exact
//! texts of behaviour-merging.md §6 and §8), behaviour tests on small archives built in
//! memory, the clock placement rules (`placement`: behaviour-merging.md §1–5) and switching
//! trace time. This file holds the helpers; each part is a module of its own.
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

#[path = "../common/mod.rs"]
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

mod behaviour;
mod errors;
mod golden;
mod machines;
mod placement;
mod switching;
