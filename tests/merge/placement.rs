//! Clock placement rules of behaviour-merging.md §1–5 on small archives built in memory:
//! what `clock_snapshot` records and when, and what a conversion failure counts.

use super::*;

/// A proto with a BOOTTIME/REALTIME snapshot (REALTIME = 1.7e18 + 1 s at BOOTTIME `boot`)
/// and one 100 ns slice `name` 100 ms after the snapshot.
fn boot_realtime_proto(name: &str, boot: u64) -> Vec<u8> {
    let mut packets = vec![snapshot(&[
        (BOOTTIME, boot),
        (REALTIME, 1_700_000_001_000_000_000),
    ])];
    packets.extend(thread_tracks(10, 11, "app", "main"));
    packets.extend(slice(name, boot + 100_000_000, 100));
    encode(packets, None)
}

/// `clock_snapshot` in row order, machines by name.
const SNAPSHOT_ROWS: &str = "
    select c.ts, c.clock_id, coalesce(c.clock_name, '-'), c.clock_value, c.snapshot_id,
           coalesce(m.name, '-')
    from clock_snapshot c left join machine m on m.id = c.machine_id
    order by c.id";

const SYSTRACE: &str = "# tracer: nop\n#\n\
    \x20          <...>-1     (-----) [000] ...1  1.500000: tracing_mark_write: B|1|sys_slice\n\
    \x20          <...>-1     (-----) [000] ...1  2.000000: tracing_mark_write: E|1\n";

#[test]
fn clock_snapshot_rows_are_written_when_their_relation_is_added() {
    // The server's snapshot is converted for its rows at once: that first conversion of
    // the server's context adds the REALTIME rendezvous (its rows first, REALTIME 0 in
    // trace time), then the snapshot's own rows follow with the id it was given first.
    let meta = manifest(
        r#"{"version": 1, "files": [
            {"path": "a.pb", "machine": {"name": "phone"}},
            {"path": "b.pb", "machine": {"name": "server"}}]}"#,
    );
    let a = boot_realtime_proto("a_slice", 1_000_000_000);
    let b = boot_realtime_proto("b_slice", 3_000_000_000);
    let i = expect_ok(
        "rows_at_insertion.zip",
        &zip(&[("meta.json", &meta), ("a.pb", &a), ("b.pb", &b)]),
    );
    let rendezvous = "-1700000000000000000";
    assert_eq!(
        rows(&i.conn, SNAPSHOT_ROWS),
        table(&[
            ["1000000000", "6", "BOOTTIME", "1000000000", "0", "phone"],
            [
                "1000000000",
                "1",
                "REALTIME",
                "1700000001000000000",
                "0",
                "phone"
            ],
            [rendezvous, "1", "REALTIME", "0", "2", "server"],
            [rendezvous, "1", "REALTIME", "0", "2", "phone"],
            ["1000000000", "6", "BOOTTIME", "3000000000", "1", "server"],
            [
                "1000000000",
                "1",
                "REALTIME",
                "1700000001000000000",
                "1",
                "server"
            ],
        ])
    );
}

#[test]
fn a_manifest_override_has_rows_only_if_trace_time_reaches_it_when_the_manifest_is_read() {
    let json = |name: &str| {
        format!(
            r#"{{"traceEvents": [{{"pid": 1, "tid": 1, "ts": 10, "dur": 1, "ph": "X",
                "name": "{name}"}}]}}"#
        )
        .into_bytes()
    };
    let (a, b) = (json("ja"), json("jb"));
    // No manifest trace_time: trace time is nobody's yet, the pin converts to nothing.
    let meta = manifest(
        r#"{"version": 1, "files": [{"path": "a.json"},
            {"path": "b.json", "clocks": {"sync_to": {"file": "a.json"}, "offset_ns": 7000}}]}"#,
    );
    let i = expect_ok(
        "pin_without_trace_time.zip",
        &zip(&[("meta.json", &meta), ("a.json", &a), ("b.json", &b)]),
    );
    assert_eq!(rows(&i.conn, SNAPSHOT_ROWS), table::<6>(&[]));
    assert_eq!(
        rows(&i.conn, "select name, ts from slice order by ts"),
        table(&[["ja", "10000"], ["jb", "17000"]])
    );
    // Pinned to the manifest's trace-time clock: two rows, both at the reference's reading.
    let meta = manifest(
        r#"{"version": 1, "trace_time": {"clock": "BOOTTIME", "file": "p.pb"},
            "files": [{"path": "p.pb"},
            {"path": "b.json", "clocks": {"sync_to": {"file": "p.pb", "clock": "BOOTTIME"},
                                          "offset_ns": 7000}}]}"#,
    );
    let p = small_proto("p_slice", true, None);
    let i = expect_ok(
        "pin_on_trace_time.zip",
        &zip(&[("meta.json", &meta), ("p.pb", &p), ("b.json", &b)]),
    );
    let got = rows(&i.conn, SNAPSHOT_ROWS);
    assert_eq!(
        got[..2],
        table(&[
            ["7000", "11", "-", "0", "0", "-"],
            ["7000", "6", "BOOTTIME", "7000", "0", "-"],
        ])
    );
}

#[test]
fn a_text_file_whose_clock_cannot_be_placed_loses_lines_not_deferred_packets() {
    let a = boot_realtime_proto("a_slice", 1_000_000_000);
    let i = expect_ok(
        "systrace_unrelatable.zip",
        &zip(&[("a.pb", &a), ("s.txt", SYSTRACE.as_bytes())]),
    );
    let got = rows(&i.conn, SYNC_FAILURES);
    // MONOTONIC appears in no snapshot: its events are dropped, as an unknown clock; only
    // proto packets (held to the end of their file first) are "undeferrable". Each line is
    // one event of the reference, however many rows it makes here.
    assert_eq!(
        got,
        table(&[
            ["clock_sync_failure_unknown_source_clock", "2"],
            ["clock_sync_unrelatable_clock_domains", "1"]
        ])
    );
    // The unrelatable pair is logged on the systrace's file with the raw clock numbers
    // (behaviour-merging.md §4b4): MONOTONIC cannot reach trace time (BOOTTIME).
    assert_eq!(
        rows(
            &i.conn,
            "select l.severity, f.name, a.key, a.int_value from _trace_import_logs l
             join __intrinsic_trace_file f on f.id = l.trace_id
             join args a using (arg_set_id)
             where l.name = 'clock_sync_unrelatable_clock_domains' order by a.key"
        ),
        table(&[
            ["error", "s.txt", "source_clock_id", "3"],
            ["error", "s.txt", "target_clock_id", "6"]
        ])
    );
    assert_eq!(
        rows(
            &i.conn,
            "select count(*) from slice where name = 'sys_slice'"
        ),
        table(&[["0"]])
    );
}

#[test]
fn a_text_file_without_events_needs_no_clock() {
    let a = boot_realtime_proto("a_slice", 1_000_000_000);
    let i = expect_ok(
        "empty_systrace.zip",
        &zip(&[("a.pb", &a), ("s.txt", b"# tracer: nop\n")]),
    );
    assert_eq!(rows(&i.conn, SYNC_FAILURES), table::<2>(&[]));
}

/// Sequence-scoped clocks (64–127) need a sequence: a ClockSnapshot naming one, or a
/// packet stamped on one, without a trusted sequence id is a fatal error.
#[test]
fn sequence_clocks_without_a_sequence_are_fatal() {
    let unsequenced = |mut p: TracePacket| {
        p.optional_trusted_packet_sequence_id = None;
        p
    };
    let snap = unsequenced(snapshot(&[(BOOTTIME, 1_000), (64, 10)]));
    let got = expect_err("seq-clock-snapshot", &encode(vec![snap], None));
    assert!(
        got.contains(
            "ClockSnapshot packet is specifying a sequence-scoped clock id (0) but the \
             TracePacket sequence_id is zero"
        ),
        "got: {got}"
    );
    // Id 128 and above are scoped like the builtin clocks: no sequence needed.
    let global = unsequenced(snapshot(&[(BOOTTIME, 1_000), (128, 10)]));
    let mut packets = vec![global];
    packets.extend(thread_tracks(10, 11, "app", "main"));
    packets.extend(slice("s", 2_000, 10));
    expect_ok("global-clock-128", &encode(packets, None));

    let mut stamped = unsequenced(slice("s", 2_000, 10).remove(0));
    stamped.timestamp_clock_id = Some(70);
    let packets = vec![snapshot(&[(BOOTTIME, 1_000), (70, 10)]), stamped];
    let got = expect_err("seq-clock-packet", &encode(packets, None));
    assert!(
        got.contains(
            "TracePacket specified a sequence-local clock id (70) but the TraceWriter's \
             sequence_id is zero (the service is probably too old)"
        ),
        "got: {got}"
    );
}

/// A slice on MONOTONIC (clock 3) at `ts` after the given snapshots, on track uuid 1.
fn monotonic_slice_after(snapshots: &[&[(u32, u64)]], ts: u64) -> Vec<u8> {
    let mut packets: Vec<TracePacket> = snapshots.iter().map(|s| snapshot(s)).collect();
    packets.extend(thread_tracks(10, 11, "app", "main"));
    for mut p in slice("m", ts, 10) {
        p.timestamp_clock_id = Some(MONOTONIC);
        packets.push(p);
    }
    encode(packets, None)
}

const INVALID_SNAPSHOTS: &str =
    "select value, machine_id, trace_id from stats where name = 'invalid_clock_snapshots'";

/// A snapshot the clock tracker refuses adds no relation and counts
/// `invalid_clock_snapshots` (global): the trace-time clock going back, a clock read twice,
/// a global clock declared incremental, a clock changing its unit.
#[test]
fn refused_clock_snapshots_add_no_relation() {
    // BOOTTIME (trace time) goes back at the second snapshot: MONOTONIC converts through
    // the first one only (1500 - 100 + 1000).
    let trace = monotonic_slice_after(
        &[
            &[(BOOTTIME, 1_000), (MONOTONIC, 100)],
            &[(BOOTTIME, 500), (MONOTONIC, 200)],
        ],
        1_500,
    );
    let i = expect_ok("trace-clock-backwards", &trace);
    assert_eq!(rows(&i.conn, "select ts from slice"), table(&[["2400"]]));
    assert_eq!(
        rows(&i.conn, INVALID_SNAPSHOTS),
        table(&[["1", "NULL", "NULL"]])
    );
    // Why, for the Clock graph pane: the reference's message, on the file and machine.
    assert_eq!(
        rows(
            &i.conn,
            "select file_id, machine_id, message from __sextant_clock_error"
        ),
        table(&[[
            "0",
            "0",
            "Clock sync error: the trace clock (id=6) is not monotonic at snapshot 1. 500 not >= 1000."
        ]])
    );
    // Its snapshot id is used: the rows of the first one only, ids 0.
    assert_eq!(
        rows(&i.conn, "select distinct snapshot_id from clock_snapshot"),
        table(&[["0"]])
    );

    // MONOTONIC read twice in one snapshot: the snapshot is refused, so MONOTONIC only
    // relates through the second one (250 - 300 + 2000).
    let trace = monotonic_slice_after(
        &[
            &[(BOOTTIME, 1_000), (MONOTONIC, 100), (MONOTONIC, 200)],
            &[(BOOTTIME, 2_000), (MONOTONIC, 300)],
        ],
        250,
    );
    let i = expect_ok("duplicate-clock", &trace);
    assert_eq!(rows(&i.conn, "select ts from slice"), table(&[["1950"]]));
    assert_eq!(
        rows(&i.conn, INVALID_SNAPSHOTS),
        table(&[["1", "NULL", "NULL"]])
    );

    // A global clock cannot be incremental; a clock keeps its first unit.
    let clock = |id, ts, unit: Option<u64>, incremental: Option<bool>| clock_snapshot::Clock {
        clock_id: Some(id),
        timestamp: Some(ts),
        unit_multiplier_ns: unit,
        is_incremental: incremental,
    };
    let snap = |clocks: Vec<clock_snapshot::Clock>| {
        packet(
            None,
            trace_packet::Data::ClockSnapshot(ClockSnapshot {
                clocks,
                ..Default::default()
            }),
        )
    };
    let mut packets = vec![
        snap(vec![
            clock(BOOTTIME, 1_000, None, None),
            clock(MONOTONIC, 100, None, Some(true)),
        ]),
        snap(vec![
            clock(BOOTTIME, 2_000, None, None),
            clock(MONOTONIC, 300, None, None),
        ]),
        snap(vec![
            clock(BOOTTIME, 3_000, None, None),
            clock(MONOTONIC, 1, Some(1_000), None),
        ]),
    ];
    packets.extend(thread_tracks(10, 11, "app", "main"));
    for mut p in slice("m", 1_500, 10) {
        p.timestamp_clock_id = Some(MONOTONIC);
        packets.push(p);
    }
    let i = expect_ok("bad-encodings", &encode(packets, None));
    assert_eq!(rows(&i.conn, "select ts from slice"), table(&[["3200"]]));
    assert_eq!(
        rows(&i.conn, INVALID_SNAPSHOTS),
        table(&[["2", "NULL", "NULL"]])
    );
}

/// A clock other than trace time that goes back between two snapshots of a series is no
/// longer converted from: its events fail with no path.
#[test]
fn a_clock_going_back_is_no_longer_a_source() {
    let trace = monotonic_slice_after(
        &[
            &[(BOOTTIME, 1_000), (MONOTONIC, 500)],
            &[(BOOTTIME, 2_000), (MONOTONIC, 400)],
        ],
        600,
    );
    let i = expect_ok("source-backwards", &trace);
    assert_eq!(rows(&i.conn, "select count(*) from slice"), table(&[["0"]]));
    assert_eq!(
        rows(&i.conn, SYNC_FAILURES),
        table(&[
            ["clock_sync_failure_no_path", "2"],
            ["clock_sync_failure_undeferrable_packet_loss", "2"]
        ])
    );
    assert_eq!(
        rows(&i.conn, INVALID_SNAPSHOTS),
        table(&[["0", "NULL", "NULL"]])
    );
}

/// A clock that goes back stops being a source only from the snapshot where it does: an
/// event read before that snapshot was converted as it was read.
#[test]
fn a_clock_going_back_keeps_the_events_converted_before() {
    let mut packets = thread_tracks(10, 11, "app", "main");
    let mono = |name: &str, ts: u64| {
        slice(name, ts, 10).into_iter().map(|mut p| {
            p.timestamp_clock_id = Some(MONOTONIC);
            p
        })
    };
    packets.push(snapshot(&[(BOOTTIME, 1_000), (MONOTONIC, 500)]));
    packets.extend(mono("before", 600));
    packets.push(snapshot(&[(BOOTTIME, 2_000), (MONOTONIC, 400)]));
    packets.extend(mono("after", 700));
    let i = expect_ok("backwards-midway", &encode(packets, None));
    assert_eq!(
        rows(&i.conn, "select name, ts from slice"),
        table(&[["before", "1100"]])
    );
    assert_eq!(
        rows(&i.conn, SYNC_FAILURES),
        table(&[
            ["clock_sync_failure_no_path", "2"],
            ["clock_sync_failure_undeferrable_packet_loss", "2"]
        ])
    );
}

/// behaviour-merging.md §2 "REALTIME twins" are added only off the trace-time machine, and a
/// proto claims trace time at its snapshot before the snapshot is added: b.pb (second file
/// on the host, a.pb has no snapshot) claims the host's BOOTTIME, so its REALTIME reading is
/// not re-added as the host's own. Its rows: the reconnect of its isolated BOOTTIME (0/0, at
/// trace time 0), then its snapshot's two readings, no third.
#[test]
fn no_realtime_twin_on_the_machine_that_claims_trace_time() {
    let mut a = thread_tracks(10, 11, "app", "main");
    a.extend(slice("a", 5_000, 10));
    let b = boot_realtime_proto("b", 1_000_000_000);
    let i = expect_ok(
        "no_twin.zip",
        &zip(&[("a.pb", &encode(a, None)), ("b.pb", &b)]),
    );
    assert_eq!(
        rows(&i.conn, SNAPSHOT_ROWS),
        table(&[
            ["0", "6", "BOOTTIME", "0", "1", "-"],
            ["0", "6", "BOOTTIME", "0", "1", "-"],
            ["1000000000", "6", "BOOTTIME", "1000000000", "0", "-"],
            [
                "1000000000",
                "1",
                "REALTIME",
                "1700000001000000000",
                "0",
                "-"
            ],
        ])
    );
    assert_eq!(trace_time_clock_id(&i.conn), table(&[["6"]]));
}

/// A second file on a machine converts through the machine's shared clocks until its first
/// own ClockSnapshot, then through its own: an event read before that snapshot is placed by
/// the first file's snapshot, and the context logs `clock_sync_mixed_clock_sources` once with
/// the number of conversions made before it (behaviour-merging.md §2, top-10 rule 7). Its
/// fall-backs were decided at that first conversion, while it still used the machine's
/// clocks, and are never decided again (§4 "resolved once"), so nothing reconnects its own
/// clocks: an event read after its snapshot has no path and is dropped.
#[test]
fn a_second_file_uses_the_machines_clocks_until_its_own_snapshot() {
    let monotonic = |name: &str, ts: u64| {
        slice(name, ts, 10).into_iter().map(|mut p| {
            p.timestamp_clock_id = Some(MONOTONIC);
            p
        })
    };
    // a.pb: BOOTTIME 1000 = MONOTONIC 0, trace time BOOTTIME.
    let mut a = vec![snapshot(&[(BOOTTIME, 1_000), (MONOTONIC, 0)])];
    a.extend(thread_tracks(10, 11, "app", "main"));
    a.extend(slice("a", 1_500, 10));
    // b.pb: a MONOTONIC slice, then its own BOOTTIME 90000 = MONOTONIC 0, then another.
    let mut b = thread_tracks(20, 21, "other", "worker");
    b.extend(monotonic("b_early", 2_000));
    b.push(snapshot(&[(BOOTTIME, 90_000), (MONOTONIC, 0)]));
    b.extend(monotonic("b_late", 500));
    let archive = zip(&[("a.pb", &encode(a, None)), ("b.pb", &encode(b, None))]);
    let i = expect_ok("mixed-clock-sources", &archive);
    // b_early: 2000 on MONOTONIC through a.pb's snapshot (+1000), not b's (+90000);
    // b_late: b.pb's own clocks were never reconnected to the machine's.
    assert_eq!(
        rows(&i.conn, "select name, ts from slice order by ts"),
        table(&[["a", "1500"], ["b_early", "3000"]])
    );
    assert_eq!(
        rows(
            &i.conn,
            "select s.name, s.value, f.name from stats s
             join __intrinsic_trace_file f on f.id = s.trace_id
             where s.name glob 'clock_sync_failure_*' and s.value != 0 order by s.name"
        ),
        table(&[
            ["clock_sync_failure_no_path", "2", "b.pb"],
            ["clock_sync_failure_undeferrable_packet_loss", "2", "b.pb"],
        ])
    );
    // Two conversions (the slice's begin and end) used the machine's clocks.
    assert_eq!(
        rows(
            &i.conn,
            "select s.value, f.name from stats s
             join __intrinsic_trace_file f on f.id = s.trace_id
             where s.name = 'clock_sync_mixed_clock_sources' and s.value != 0"
        ),
        table(&[["1", "b.pb"]])
    );
    assert_eq!(
        rows(
            &i.conn,
            "select l.severity, f.name, a.key, a.int_value from _trace_import_logs l
             join __intrinsic_trace_file f on f.id = l.trace_id
             join args a using (arg_set_id)
             where l.name = 'clock_sync_mixed_clock_sources'"
        ),
        table(&[["error", "b.pb", "num_conversions_using_primary", "2"]])
    );
}

/// behaviour-merging.md §3: a context that converted anything (here an explicit MONOTONIC
/// slice, read before its file's first ClockSnapshot) cannot claim trace time at that
/// snapshot. a.pb's events stay on the initial timeline (its BOOTTIME joined to it by the
/// assumption at its first conversion); b.pb, read later on another machine, claims its own
/// BOOTTIME, so nothing shifts it onto a.pb's clocks by REALTIME. Files are converted as
/// they are read and never again: a.pb keeps the timeline of its time.
#[test]
fn a_context_that_converted_before_its_snapshot_cannot_claim_trace_time() {
    let mut a = thread_tracks(10, 11, "app", "main");
    a.extend(slice("early", 600_000_000, 10).into_iter().map(|mut p| {
        p.timestamp_clock_id = Some(MONOTONIC);
        p
    }));
    a.push(snapshot(&[
        (BOOTTIME, 1_000_000_000),
        (MONOTONIC, 500_000_000),
        (REALTIME, 1_700_000_001_000_000_000),
    ]));
    a.extend(slice("a", 1_100_000_000, 10));
    let mut b = vec![snapshot(&[
        (BOOTTIME, 5_000_000_000),
        (REALTIME, 1_700_000_002_000_000_000),
    ])];
    b.extend(thread_tracks(20, 21, "srv", "main"));
    b.extend(slice("b", 5_100_000_000, 10));
    let meta =
        manifest(r#"{"version": 1, "files": [{"path": "b.pb", "machine": {"name": "server"}}]}"#);
    let i = expect_ok(
        "converted_cannot_claim.zip",
        &zip(&[
            ("meta.json", &meta),
            ("a.pb", &encode(a, None)),
            ("b.pb", &encode(b, None)),
        ]),
    );
    // With a.pb claiming BOOTTIME, b would be moved to 2.1e9 by the REALTIME rendezvous.
    assert_eq!(
        rows(&i.conn, "select name, ts from slice order by ts, name"),
        table(&[
            ["a", "1100000000"],
            ["early", "1100000000"],
            ["b", "5100000000"]
        ])
    );
    assert_eq!(trace_time_clock_id(&i.conn), table(&[["6"]]));
}

/// behaviour-merging.md §4 "Deferred clock": a proto context's fall-backs are decided for
/// BOOTTIME, whatever its default clock. b.pb (second file on the host, its own snapshot
/// with `primary_trace_clock` MONOTONIC) is isolated and reconnected BOOTTIME to BOOTTIME,
/// so its MONOTONIC slice reaches trace time through its own snapshot; deciding them for
/// MONOTONIC found no relation and dropped it as unrelatable.
#[test]
fn a_proto_context_is_reconnected_by_its_boottime_whatever_its_default_clock() {
    let mut a = vec![snapshot(&[(BOOTTIME, 1_000_000_000)])];
    a.extend(thread_tracks(10, 11, "app", "main"));
    a.extend(slice("a", 1_100_000_000, 10));
    let mut snap = snapshot(&[(BOOTTIME, 5_000_000_000), (MONOTONIC, 2_000_000_000)]);
    if let Some(trace_packet::Data::ClockSnapshot(cs)) = snap.data.as_mut() {
        cs.primary_trace_clock = Some(MONOTONIC as i32);
    }
    let mut b = vec![snap];
    b.extend(thread_tracks(20, 21, "other", "worker"));
    b.extend(slice("b", 2_100_000_000, 10));
    let i = expect_ok(
        "deferred_boottime.zip",
        &zip(&[("a.pb", &encode(a, None)), ("b.pb", &encode(b, None))]),
    );
    assert_eq!(
        rows(&i.conn, "select name, ts from slice order by ts"),
        table(&[["a", "1100000000"], ["b", "5100000000"]])
    );
    assert_eq!(rows(&i.conn, SYNC_FAILURES), table::<2>(&[]));
}

/// behaviour-merging.md §1 "Units": every value read on a clock is scaled by the unit its
/// first snapshot declared, a global clock's too (not only sequence-scoped ones): MONOTONIC
/// in µs reads 500000 at BOOTTIME 1 s, so a slice at MONOTONIC 600000 µs is at 1.1 s.
#[test]
fn a_global_clock_with_a_unit_scales_the_values_read_on_it() {
    let mut snap = snapshot(&[(BOOTTIME, 1_000_000_000), (MONOTONIC, 500_000)]);
    if let Some(trace_packet::Data::ClockSnapshot(cs)) = snap.data.as_mut() {
        cs.clocks[1].unit_multiplier_ns = Some(1_000);
    }
    let mut packets = vec![snap];
    packets.extend(thread_tracks(10, 11, "app", "main"));
    packets.extend(slice("mono", 600_000, 100_000).into_iter().map(|mut p| {
        p.timestamp_clock_id = Some(MONOTONIC);
        p
    }));
    let i = expect_ok("units.zip", &zip(&[("p.pb", &encode(packets, None))]));
    assert_eq!(
        rows(&i.conn, "select name, ts, dur from slice"),
        table(&[["mono", "1100000000", "100000000"]])
    );
    assert_eq!(
        rows(
            &i.conn,
            "select clock_id, clock_value from clock_snapshot order by id"
        ),
        table(&[["6", "1000000000"], ["3", "500000000"]])
    );
}

/// behaviour-merging.md §1, "Proto packet clock": only a parsed ClockSnapshot sets a file's
/// default clock, so a packet naming no clock read before the file's first snapshot keeps its
/// value unconverted; the same packet after the snapshot converts through the default clock
/// (BOOTTIME here) to trace time (REALTIME).
#[test]
fn a_clockless_packet_before_the_first_snapshot_is_not_converted() {
    let mut packets = thread_tracks(10, 11, "app", "main");
    packets.extend(slice("early", 50_000_000, 100));
    packets.push(snapshot(&[
        (BOOTTIME, 1_000_000_000),
        (REALTIME, 1_700_000_001_000_000_000),
    ]));
    packets.extend(slice("late", 1_100_000_000, 100));
    let p = encode(packets, None);
    let meta = manifest(
        r#"{"version": 1, "trace_time": {"clock": "REALTIME", "file": "p.pb"},
            "files": [{"path": "p.pb"}]}"#,
    );
    let i = expect_ok(
        "clockless_before_snapshot.zip",
        &zip(&[("meta.json", &meta), ("p.pb", &p)]),
    );
    assert_eq!(
        rows(&i.conn, "select name, ts, dur from slice order by ts"),
        table(&[
            ["early", "50000000", "100"],
            ["late", "1700000001100000000", "100"],
        ])
    );
}

/// behaviour-merging.md §1: a packet without a timestamp that goes through the sorter takes
/// "max(file's latest ts, sorter max)", in trace time: a ProcessStats read after a slice
/// converted to REALTIME counts its memory at the slice's end, not at 0.
#[test]
fn an_untimed_packet_is_placed_at_the_latest_timestamp_read_before_it() {
    let mut packets = vec![snapshot(&[
        (BOOTTIME, 1_000_000_000),
        (REALTIME, 1_700_000_001_000_000_000),
    ])];
    packets.extend(thread_tracks(10, 11, "app", "main"));
    packets.extend(slice("s", 1_100_000_000, 100));
    packets.push(packet(
        None,
        trace_packet::Data::ProcessStats(sextant::protos::ProcessStats {
            processes: vec![sextant::protos::process_stats::Process {
                pid: Some(10),
                vm_rss_kb: Some(8),
                ..Default::default()
            }],
            ..Default::default()
        }),
    ));
    let p = encode(packets, None);
    let meta = manifest(
        r#"{"version": 1, "trace_time": {"clock": "REALTIME", "file": "p.pb"},
            "files": [{"path": "p.pb"}]}"#,
    );
    let i = expect_ok(
        "untimed_at_latest.zip",
        &zip(&[("meta.json", &meta), ("p.pb", &p)]),
    );
    assert_eq!(
        rows(
            &i.conn,
            "select c.ts, cast(c.value as int) from counter c join track t on c.track_id = t.id
             where t.name = 'mem.rss'"
        ),
        table(&[["1700000001100000100", "8192"]])
    );
}

/// behaviour-merging.md "Model": Trace Processor converts each event as it reads it, with
/// the snapshots read before it, and never redoes it. 'a' (MONOTONIC 600) is read when only
/// the first snapshot {BOOTTIME 1000, MONOTONIC 500} is: 1100, although the second
/// {2000, 550}, read after it, is the last reading at or before 600 once all are read
/// (2050). 'b', read after both, uses the second: 2150.
#[test]
fn each_event_converts_with_the_snapshots_read_before_it() {
    let mut packets = thread_tracks(10, 11, "app", "main");
    let mono = |name: &str, ts: u64| {
        slice(name, ts, 10).into_iter().map(|mut p| {
            p.timestamp_clock_id = Some(MONOTONIC);
            p
        })
    };
    packets.push(snapshot(&[(BOOTTIME, 1_000), (MONOTONIC, 500)]));
    packets.extend(mono("a", 600));
    packets.push(snapshot(&[(BOOTTIME, 2_000), (MONOTONIC, 550)]));
    packets.extend(mono("b", 700));
    let i = expect_ok("as_it_goes", &encode(packets, None));
    assert_eq!(
        rows(&i.conn, "select name, ts, dur from slice order by ts"),
        table(&[["a", "1100", "10"], ["b", "2150", "10"]])
    );
}

/// A proto packet whose clock has no relation yet when it is read is held to the end of its
/// file (behaviour-merging.md §1 "Proto failures"), then converted with all the file's
/// snapshots: 'early' (clock 64, read before any snapshot of clock 64) is placed by the
/// snapshot read after it, not dropped.
#[test]
fn a_packet_with_no_relation_when_read_is_retried_at_the_end_of_its_file() {
    let mut packets = thread_tracks(10, 11, "app", "main");
    let seq_clock = |name: &str, ts: u64| {
        slice(name, ts, 10).into_iter().map(|mut p| {
            p.timestamp_clock_id = Some(64);
            p
        })
    };
    packets.push(snapshot(&[(BOOTTIME, 1_000), (MONOTONIC, 500)]));
    packets.extend(seq_clock("early", 100));
    packets.push(snapshot(&[(BOOTTIME, 2_000), (64, 50)]));
    packets.extend(seq_clock("late", 80));
    let i = expect_ok("deferred", &encode(packets, None));
    assert_eq!(
        rows(&i.conn, "select name, ts from slice order by ts"),
        table(&[["late", "2030"], ["early", "2050"]])
    );
    assert_eq!(rows(&i.conn, SYNC_FAILURES), table::<2>(&[]));
}

/// Each event a clock conversion drops is logged once (an input that made several rows
/// counts once), with the raw clock numbers and timestamp (behaviour-merging.md §1 "Other
/// formats", "Proto failures"), besides its stats.
#[test]
fn each_failed_conversion_is_logged_with_its_raw_clock_and_timestamp() {
    let trace = monotonic_slice_after(&[&[(BOOTTIME, 1_000), (REALTIME, 500)]], 600);
    let i = expect_ok("failure_logs", &trace);
    assert_eq!(
        rows(&i.conn, SYNC_FAILURES),
        table(&[
            ["clock_sync_failure_undeferrable_packet_loss", "2"],
            ["clock_sync_failure_unknown_source_clock", "2"]
        ])
    );
    assert_eq!(
        rows(
            &i.conn,
            "select l.id, l.severity, l.trace_id, l.ts, a.key, a.int_value
             from _trace_import_logs l join args a using (arg_set_id)
             where l.name = 'clock_sync_failure_unknown_source_clock' order by l.id, a.key"
        ),
        table(&[
            ["0", "error", "0", "NULL", "source_clock_id", "3"],
            ["0", "error", "0", "NULL", "source_timestamp", "600"],
            ["0", "error", "0", "NULL", "target_clock_id", "6"],
            ["1", "error", "0", "NULL", "source_clock_id", "3"],
            ["1", "error", "0", "NULL", "source_timestamp", "610"],
            ["1", "error", "0", "NULL", "target_clock_id", "6"],
        ])
    );
}

/// A file failing many conversions logs the first 10,000 of a kind one by one; the stat
/// counts them all and Sextant's own `clock_sync_failure_logs_omitted` the rest.
#[test]
fn failure_logs_stop_at_ten_thousand_per_kind() {
    let a = boot_realtime_proto("a_slice", 1_000_000_000);
    let mut systrace = String::from("# tracer: nop\n#\n");
    for i in 0..10_003 {
        systrace.push_str(&format!(
            "           <...>-1     (-----) [000] ...1  1.{i:06}: tracing_mark_write: C|1|ctr|{i}\n"
        ));
    }
    let i = expect_ok(
        "many_failures.zip",
        &zip(&[("a.pb", &a), ("s.txt", systrace.as_bytes())]),
    );
    assert_eq!(
        rows(
            &i.conn,
            "select name, value from stats where name = 'clock_sync_failure_unknown_source_clock'
             and value > 0"
        ),
        table(&[["clock_sync_failure_unknown_source_clock", "10003"]])
    );
    assert_eq!(
        rows(
            &i.conn,
            "select count(*) from _trace_import_logs
             where name = 'clock_sync_failure_unknown_source_clock'"
        ),
        table(&[["10000"]])
    );
    assert_eq!(
        rows(
            &i.conn,
            "select value from sextant_stats where name = 'clock_sync_failure_logs_omitted'"
        ),
        table(&[["3"]])
    );
}

/// A packet held to the end of its file is not in the sorter when an untimed packet read
/// after it takes "the latest timestamp": 'h' (clock 64, related only by a later snapshot)
/// does not move the process stats, which stay at the end of 's'.
#[test]
fn a_held_packet_does_not_count_as_read_for_untimed_packets() {
    let mut packets = vec![snapshot(&[(BOOTTIME, 1_000), (MONOTONIC, 500)])];
    packets.extend(thread_tracks(10, 11, "app", "main"));
    packets.extend(slice("s", 1_100, 100));
    packets.extend(slice("h", 50, 10).into_iter().map(|mut p| {
        p.timestamp_clock_id = Some(64);
        p
    }));
    packets.push(packet(
        None,
        trace_packet::Data::ProcessStats(sextant::protos::ProcessStats {
            processes: vec![sextant::protos::process_stats::Process {
                pid: Some(10),
                vm_rss_kb: Some(8),
                ..Default::default()
            }],
            ..Default::default()
        }),
    ));
    packets.push(snapshot(&[(BOOTTIME, 9_000), (64, 0)]));
    let i = expect_ok("held_not_latest", &encode(packets, None));
    assert_eq!(
        rows(&i.conn, "select name, ts from slice order by ts"),
        table(&[["s", "1100"], ["h", "9050"]])
    );
    assert_eq!(
        rows(
            &i.conn,
            "select c.ts from counter c join track t on c.track_id = t.id
             where t.name = 'mem.rss'"
        ),
        table(&[["1200"]])
    );
}

/// A context's fall-backs are decided at its first conversion with what had been read by
/// then (behaviour-merging.md §4): the vm's first snapshot comes before the host's REALTIME
/// reading, so there is no REALTIME rendezvous then and the vm's BOOTTIME is taken as the
/// host's (same clock); the host's later snapshot does not redo it.
#[test]
fn fall_backs_see_only_what_was_read_before_the_first_conversion() {
    let on = |machine: u32, seq: u32, mut p: TracePacket| {
        p.machine_id = Some(machine);
        p.optional_trusted_packet_sequence_id =
            Some(trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(seq));
        p
    };
    let boot_slice = |name: &str, ts: u64, machine: u32, seq: u32| -> Vec<TracePacket> {
        let mut out = vec![on(
            machine,
            seq,
            packet(
                None,
                trace_packet::Data::TrackDescriptor(TrackDescriptor {
                    uuid: Some(u64::from(seq)),
                    ..Default::default()
                }),
            ),
        )];
        for mut p in slice(name, ts, 10) {
            p.timestamp_clock_id = Some(BOOTTIME);
            if let Some(trace_packet::Data::TrackEvent(e)) = p.data.as_mut() {
                e.track_uuid = Some(u64::from(seq));
            }
            out.push(on(machine, seq, p));
        }
        out
    };
    let mut packets = vec![on(0, 1, snapshot(&[(BOOTTIME, 1_000)]))];
    packets.extend(boot_slice("host_slice", 1_100, 0, 1));
    packets.push(on(
        7,
        2,
        snapshot(&[(BOOTTIME, 5_000), (REALTIME, 1_700_000_000_000_002_000)]),
    ));
    packets.extend(boot_slice("vm_slice", 5_100, 7, 2));
    packets.push(on(
        0,
        1,
        snapshot(&[(BOOTTIME, 2_000), (REALTIME, 1_700_000_000_000_001_000)]),
    ));
    let meta = manifest(
        r#"{"version": 1, "files": [{"path": "multi.pb",
            "machines": [{"id": 0, "name": "host"}, {"id": 7, "name": "vm"}]}]}"#,
    );
    let multi = Trace { packet: packets }.encode_to_vec();
    let i = expect_ok(
        "late_host_realtime.zip",
        &zip(&[("meta.json", &meta), ("multi.pb", &multi)]),
    );
    assert_eq!(
        rows(&i.conn, "select name, ts from slice order by ts"),
        table(&[["host_slice", "1100"], ["vm_slice", "5100"]])
    );
}

/// The trace-time candidates (`__sextant_trace_time_candidate`, what the explorer's chooser
/// offers) are the clocks a manifest can name, each file's timeline and the current trace
/// time: custom global clocks (ids 128 and up) related by snapshots are not among them, so a
/// file relating thousands of them costs no placement per clock.
#[test]
fn trace_time_candidates_are_named_clocks_not_custom_ones() {
    let mut packets = vec![snapshot(&[(BOOTTIME, 1_000), (MONOTONIC, 500)])];
    for i in 0..50u32 {
        packets.push(snapshot(&[(1_000 + 2 * i, 5), (1_001 + 2 * i, 7)]));
    }
    packets.extend(thread_tracks(10, 11, "app", "main"));
    packets.extend(slice("s", 2_000, 10));
    let i = expect_ok("candidates", &encode(packets, None));
    assert_eq!(
        rows(
            &i.conn,
            "select label, is_current from __sextant_trace_time_candidate order by label"
        ),
        table(&[["host BOOTTIME", "1"], ["host MONOTONIC", "0"]])
    );
}
