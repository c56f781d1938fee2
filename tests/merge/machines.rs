//! Machine rules of behaviour-merging.md §6 on small archives built in memory: adoption of
//! a single embedded machine onto the host row, and what makes a file multi-machine.

use super::*;

/// A TracePacket that is only a sync marker (no machine id), as traced writes them.
fn sync_marker() -> TracePacket {
    TracePacket {
        data: Some(trace_packet::Data::SynchronizationMarker(vec![0x82, 0x47])),
        ..Default::default()
    }
}

#[test]
fn a_sync_marker_does_not_stop_a_single_embedded_machine_from_being_adopted() {
    // Everything but the marker is machine 7: one machine, the host row with raw_id 7.
    let mut bytes = encode(vec![sync_marker()], None);
    bytes.extend(small_proto("vm_slice", true, Some(7)));
    let i = expect_ok("adopt_after_marker.pftrace", &bytes);
    assert_eq!(
        rows(&i.conn, "select id, raw_id, label_index from machine"),
        table(&[["0", "7", "1"]])
    );
}

#[test]
fn a_remote_clock_sync_makes_a_file_multi_machine_for_a_machine_override() {
    use sextant::protos::{remote_clock_sync::SyncedClocks, RemoteClockSync};
    let clocks = |ts| ClockSnapshot {
        clocks: vec![clock_snapshot::Clock {
            clock_id: Some(BOOTTIME),
            timestamp: Some(ts),
            ..Default::default()
        }],
        ..Default::default()
    };
    let sync = packet(
        None,
        trace_packet::Data::RemoteClockSync(RemoteClockSync {
            synced_clocks: vec![SyncedClocks {
                client_clocks: Some(clocks(5)),
                host_clocks: Some(clocks(6)),
            }],
        }),
    );
    // No packet carries a machine id: the sync alone says a second machine is there.
    let mut trace = small_proto("s", true, None);
    trace.extend(encode(vec![sync], None));
    let meta = manifest(r#"{"version": 1, "files": [{"path": "b.pb", "machine": {"name": "m"}}]}"#);
    expect_error(
        "machine_override_remote_sync.zip",
        &zip(&[("meta.json", &meta), ("b.pb", &trace)]),
        "b.pb",
        "perfetto_manifest: a `machine` override attributes the file to one machine, but the \
         file contains packets from multiple machines.",
    );
}

#[test]
fn a_machine_name_for_a_single_machine_file_names_no_machine() {
    // trace.pftrace has no `machines` block: `trace_time: machine` and `sync_to.machine`
    // select nothing, so trace time and the reference are watch's BOOTTIME, and no machine
    // "vm" is made (behaviour-merging.md §8 step 9: only a multi-machine file's names are
    // checked and used).
    let i = expect_ok(
        "single_machine_names.zip",
        &archive_with_manifest(
            r#"{"version": 1,
                "trace_time": {"clock": "BOOTTIME", "file": "trace.pftrace", "machine": "vm"},
                "files": [
                  {"path": "trace.pftrace", "machine": {"name": "watch"}},
                  {"path": "other.pftrace", "clocks": {"clock": "BOOTTIME", "offset_ns": 5,
                    "sync_to": {"file": "trace.pftrace", "machine": "vm", "clock": "BOOTTIME"}}}]}"#,
        ),
    );
    assert_eq!(
        rows(
            &i.conn,
            "select raw_id, coalesce(name, '-') from machine order by id"
        ),
        table(&[["4294967296", "watch"], ["0", "-"]])
    );
    assert_eq!(
        rows(
            &i.conn,
            "select s.name, s.ts, coalesce(m.name, '-') from slice s
             join track t on s.track_id = t.id join machine m on t.machine_id = m.id
             order by s.ts"
        ),
        table(&[
            ["trace_slice", "1100000000", "watch"],
            ["other_slice", "1100000005", "-"],
        ])
    );
}
