//! Golden-trace tests: imports each non-archive trace in `tests/data/` and checks the facts
//! stated in its `tests/data/NAME.expect.md` by SQL on the resulting database.
//!
//! Threads and processes are identified by tid/pid and names, never by row ids. Facts an
//! expect file lists under "Not asserted / unsure" are not asserted here.

use rusqlite::Connection;

mod common;

use common::{rows, table, TempFile};

/// Imports `tests/data/<name>` into a fresh temporary database and opens it read-only.
fn import(name: &str) -> (Connection, TempFile) {
    common::import_data("", name)
}

/// Sum of a stat's values over all its rows (0 when absent).
fn stat(conn: &Connection, name: &str) -> i64 {
    conn.query_row(
        "select coalesce(sum(value), 0) from stats where name = ?1",
        [name],
        |r| r.get(0),
    )
    .expect("stats query")
}

/// Every slice on a thread track: name, tid, ts, dur, depth, parent name, category.
const THREAD_SLICES: &str = "
    select s.name, t.tid, s.ts, s.dur, s.depth, p.name, s.category
    from slice s
    join thread_track tt on s.track_id = tt.id
    join thread t on t.utid = tt.utid
    left join slice p on p.id = s.parent_id
    order by s.ts, s.depth";

/// Every sched row: cpu, ts, dur, tid, thread name, end_state, priority.
const SCHED: &str = "
    select s.cpu, s.ts, s.dur, t.tid, t.name, s.end_state, s.priority
    from sched s join thread t on t.utid = s.utid
    order by s.cpu, s.ts";

/// Every counter value with its track name.
const COUNTERS: &str = "
    select t.name, c.ts, c.value
    from counter c join counter_track t on t.id = c.track_id
    order by t.name, c.ts";

#[test]
fn a_track_events() {
    let (c, _db) = import("a_track_events.pftrace");

    assert_eq!(
        rows(&c, THREAD_SLICES),
        table(&[
            ["frame", "11", "1000000000", "500000000", "0", "NULL", "gfx"],
            ["draw", "11", "1100000000", "200000000", "1", "frame", "gfx"],
            ["vsync", "11", "1150000000", "0", "2", "draw", "gfx"],
            [
                "onTap",
                "10",
                "1200000000",
                "200000000",
                "0",
                "NULL",
                "input"
            ],
            [
                "inputLatency",
                "10",
                "1250000000",
                "0",
                "1",
                "onTap",
                "input,latency"
            ],
            [
                "job_a",
                "12",
                "2000000000",
                "100000000",
                "0",
                "NULL",
                "NULL"
            ],
            [
                "recovered_marker",
                "12",
                "2350000000",
                "0",
                "0",
                "NULL",
                "NULL"
            ],
            [
                "job_b",
                "12",
                "2400000000",
                "200000000",
                "0",
                "NULL",
                "NULL"
            ],
        ])
    );
    // Exactly 8 slices, all on thread tracks (no "?iid 2" placeholder anywhere).
    assert_eq!(rows(&c, "select count(*) from slice"), table(&[["8"]]));

    // Exactly one process row for pid 10 and one thread row per tid.
    assert_eq!(
        rows(&c, "select pid, name from process where pid = 10"),
        table(&[["10", "com.example.app"]])
    );
    assert_eq!(
        rows(
            &c,
            "select t.tid, t.name, p.pid from thread t left join process p using(upid)
             where t.tid in (10, 11, 12) order by t.tid"
        ),
        table(&[
            ["10", "main", "10"],
            ["11", "RenderThread", "10"],
            ["12", "Worker", "10"],
        ])
    );

    // Debug annotations become args. Keys follow Trace Processor's `debug.<name>`, which
    // the expect file lists as unsure, so only the annotation name is matched here.
    let arg = |slice: &str, name: &str| {
        rows(
            &c,
            &format!(
                "select a.value_type, a.int_value, a.string_value, a.real_value
                 from slice s join args a on a.arg_set_id = s.arg_set_id
                 where s.name = '{slice}' and a.key like '%{name}'"
            ),
        )
    };
    assert_eq!(
        arg("frame", "frame_id"),
        table(&[["int", "42", "NULL", "NULL"]])
    );
    assert_eq!(
        arg("onTap", "button"),
        table(&[["string", "NULL", "ok", "NULL"]])
    );
    assert_eq!(
        arg("onTap", "ratio"),
        table(&[["real", "NULL", "NULL", "0.5"]])
    );
    // Slices without annotations carry no args.
    assert_eq!(
        rows(
            &c,
            "select s.name from slice s join args a on a.arg_set_id = s.arg_set_id
             where s.name not in ('frame', 'onTap') group by s.name"
        ),
        table::<1>(&[])
    );

    // The BEGIN/END pair after `previous_packet_dropped` is skipped and counted.
    assert_eq!(
        rows(
            &c,
            "select severity, sum(value) from stats
             where name = 'packet_skipped_seq_needs_incremental_state_invalid'
             group by severity"
        ),
        table(&[["notice", "2"]])
    );
    assert_eq!(stat(&c, "tokenizer_skipped_packets"), 0);
}

#[test]
fn b_counters() {
    let (c, _db) = import("b_counters.pftrace");

    assert_eq!(
        rows(&c, COUNTERS),
        table(&[
            // is_incremental, with a reset by SEQ_INCREMENTAL_STATE_CLEARED at 1_300_000_000.
            ["bytes.sent", "1000000000", "10"],
            ["bytes.sent", "1100000000", "15"],
            ["bytes.sent", "1200000000", "22"],
            ["bytes.sent", "1300000000", "4"],
            ["bytes.sent", "1400000000", "10"],
            // Spec difference: the reference gives 0 here (it reads every extra value after
            // a first exact 0 as 0); the spec maps extra_double_counter_values[0] to
            // extra_double_counter_track_uuids[0], i.e. 0.25, and Sextant follows the spec.
            ["load", "1000000000", "0.25"],
            ["load", "1500000000", "0.75"],
            // unit_multiplier 1024.
            ["mem.used", "1000000000", "102400"],
            ["mem.used", "1100000000", "153600"],
            ["mem.used", "1200000000", "122880"],
            ["temperature", "1000000000", "36.6"],
            ["temperature", "1200000000", "37.25"],
            // Extra counter values on the BEGIN (explicit uuids) and END (from defaults).
            ["work.done", "1000000000", "1000"],
            ["work.done", "1500000000", "1800"],
            ["work.errors", "1000000000", "0"],
            ["work.errors", "1500000000", "2"],
        ])
    );
    assert_eq!(rows(&c, "select count(*) from counter"), table(&[["16"]]));

    // One slice; TYPE_COUNTER events never make slices.
    assert_eq!(
        rows(
            &c,
            "select s.name, t.tid, t.name, p.pid, p.name, s.ts, s.dur, s.depth
             from slice s join thread_track tt on s.track_id = tt.id
             join thread t on t.utid = tt.utid left join process p on p.upid = t.upid"
        ),
        table(&[[
            "compute",
            "31",
            "sampler",
            "30",
            "meter",
            "1000000000",
            "500000000",
            "0"
        ]])
    );
    assert_eq!(rows(&c, "select count(*) from slice"), table(&[["1"]]));
}

#[test]
fn c_sched() {
    let (c, _db) = import("c_sched.pftrace");

    assert_eq!(
        rows(
            &c,
            "select p.pid, p.name, pp.pid from process p
             left join process pp on pp.upid = p.parent_upid
             where p.pid in (1, 100, 200) order by p.pid"
        ),
        table(&[
            ["1", "/system/bin/init", "0"],
            ["100", "com.example.game", "1"],
            ["200", "/system/bin/surfaceflinger", "1"],
        ])
    );
    assert_eq!(
        rows(
            &c,
            "select t.tid, t.name, p.pid from thread t left join process p using(upid)
             where t.tid in (0, 101, 102, 103, 201) order by t.tid"
        ),
        table(&[
            ["0", "swapper", "0"],
            ["101", "GameThread", "100"],
            ["102", "AudioThread", "100"],
            // Born by task_newtask (CLONE_THREAD, parent tid 102), renamed from `Loader`.
            ["103", "AssetLoader", "100"],
            ["201", "sf-render", "200"],
        ])
    );
    // task_newtask / sched_process_free set the thread's lifetime.
    assert_eq!(
        rows(&c, "select start_ts, end_ts from thread where tid = 103"),
        table(&[["1020000000", "1070000000"]])
    );

    assert_eq!(
        rows(&c, SCHED),
        table(&[
            [
                "0",
                "1000000000",
                "10000000",
                "101",
                "GameThread",
                "S",
                "120"
            ],
            [
                "0",
                "1010000000",
                "15000000",
                "201",
                "sf-render",
                "S",
                "120"
            ],
            ["0", "1025000000", "15000000", "0", "swapper", "R", "120"],
            [
                "0",
                "1040000000",
                "10000000",
                "101",
                "GameThread",
                "R",
                "120"
            ],
            [
                "0",
                "1050000000",
                "10000000",
                "102",
                "AudioThread",
                "D",
                "120"
            ],
            ["0", "1060000000", "-1", "0", "swapper", "NULL", "120"],
            [
                "1",
                "1005000000",
                "25000000",
                "102",
                "AudioThread",
                "S",
                "120"
            ],
            [
                "1",
                "1030000000",
                "15000000",
                "201",
                "sf-render",
                "S",
                "120"
            ],
            ["1", "1045000000", "10000000", "0", "swapper", "R", "120"],
            ["1", "1055000000", "-1", "101", "GameThread", "NULL", "120"],
        ])
    );
    assert_eq!(
        rows(
            &c,
            "select t.tid, sum(s.dur) from sched s join thread t using(utid)
             where s.dur >= 0 group by t.tid order by t.tid"
        ),
        table(&[
            ["0", "25000000"],
            ["101", "20000000"],
            ["102", "35000000"],
            ["201", "30000000"],
        ])
    );
    assert_eq!(stat(&c, "mismatched_sched_switch_tids"), 0);

    // atrace B/E from ftrace `print` (trailing "\n" is not part of the name).
    assert_eq!(
        rows(
            &c,
            "select s.name, t.tid, p.pid, s.ts, s.dur, s.depth
             from slice s join thread_track tt on s.track_id = tt.id
             join thread t on t.utid = tt.utid left join process p on p.upid = t.upid"
        ),
        table(&[["game_frame", "101", "100", "1001000000", "8000000", "0"]])
    );
    assert_eq!(rows(&c, "select count(*) from slice"), table(&[["1"]]));

    // `C|100|queued_frames|3`: a counter track of process 100.
    assert_eq!(
        rows(
            &c,
            "select t.name, p.pid, c.ts, c.value from counter c
             join process_counter_track t on t.id = c.track_id
             join process p on p.upid = t.upid
             where t.name = 'queued_frames'"
        ),
        table(&[["queued_frames", "100", "1002000000", "3"]])
    );
    // cpu_frequency and cpu_idle (track names and shapes are not asserted: see the
    // expect file), each on its own track, separate from queued_frames.
    assert_eq!(
        rows(
            &c,
            "select c.ts, c.value from counter c
             join counter_track t on t.id = c.track_id
             where t.name is not 'queued_frames' order by c.ts"
        ),
        table(&[
            ["1000000000", "1800000"],
            ["1025000000", "1"],
            ["1040000000", "4294967295"],
        ])
    );
    assert_eq!(
        rows(
            &c,
            "select count(distinct c.track_id) from counter c
             where c.ts in (1000000000, 1025000000)"
        ),
        table(&[["2"]])
    );
    assert_eq!(
        rows(
            &c,
            "select count(distinct track_id) from counter
             where ts in (1025000000, 1040000000)"
        ),
        table(&[["1"]])
    );
    assert_eq!(rows(&c, "select count(*) from counter"), table(&[["4"]]));
}

#[test]
fn c2_compact_sched() {
    let (c, _db) = import("c2_compact_sched.pftrace");

    // The rows after the first compact switch of cpu 0.
    assert_eq!(
        rows(&c, SCHED_AFTER_FIRST),
        table(&[
            ["0", "1010000000", "15000000", "0", "swapper", "R", "120"],
            [
                "0",
                "1025000000",
                "5000000",
                "102",
                "AudioThread",
                "D",
                "120"
            ],
            ["0", "1030000000", "-1", "0", "swapper", "NULL", "120"],
        ])
    );
    // The first compact switch of a cpu only primes it, as in Trace Processor (the expect
    // file's "sched" section): GameThread's run from 1_000_000_000 makes no row, the stat
    // counts it, and the trace bounds start at the second switch.
    assert_eq!(
        rows(&c, "select count(*) from sched where ts < 1010000000"),
        table(&[["0"]])
    );
    assert_eq!(stat(&c, "compact_sched_switch_skipped"), 1);
    assert_eq!(
        rows(&c, "select start_ts from trace_bounds"),
        table(&[["1010000000"]])
    );
    assert_eq!(stat(&c, "compact_sched_has_parse_errors"), 0);
    // The waking row is kept.
    assert_eq!(stat(&c, "compact_sched_waking_skipped"), 0);
}

/// c2: sched rows from the second compact switch on.
const SCHED_AFTER_FIRST: &str = "
    select s.cpu, s.ts, s.dur, t.tid, t.name, s.end_state, s.priority
    from sched s join thread t on t.utid = s.utid
    where s.ts >= 1010000000
    order by s.cpu, s.ts";

#[test]
fn d_clocks() {
    let (c, _db) = import("d_clocks.pftrace");

    assert_eq!(
        rows(
            &c,
            "select s.name, t.tid, t.name, s.ts, s.dur, s.depth
             from slice s join thread_track tt on s.track_id = tt.id
             join thread t on t.utid = tt.utid order by s.ts"
        ),
        table(&[
            // MONOTONIC before every snapshot: snapshot 0 is used.
            [
                "mono_early",
                "41",
                "clockthread",
                "700000000",
                "50000000",
                "0"
            ],
            [
                "boot_evt",
                "41",
                "clockthread",
                "1400000000",
                "100000000",
                "0"
            ],
            [
                "mono_evt",
                "41",
                "clockthread",
                "1600000000",
                "100000000",
                "0"
            ],
            ["real_evt", "41", "clockthread", "1800000000", "0", "0"],
            // Sequence default clock MONOTONIC; 2_000_000_000 < snapshot 1's MONOTONIC.
            [
                "mono_default",
                "42",
                "monothread",
                "2600000000",
                "200000000",
                "0"
            ],
            [
                "mono_late",
                "41",
                "clockthread",
                "3110000000",
                "100000000",
                "0"
            ],
        ])
    );
    assert_eq!(rows(&c, "select count(*) from slice"), table(&[["6"]]));
    assert_eq!(
        rows(&c, "select t.tid, p.pid from thread t join process p using(upid) where t.tid in (41, 42) order by t.tid"),
        table(&[["41", "40"], ["42", "40"]])
    );
    assert_eq!(
        rows(&c, "select start_ts, end_ts from trace_bounds"),
        table(&[["700000000", "3210000000"]])
    );

    // Snapshot ids are implementation-defined; the pairing of readings is not.
    assert_eq!(
        rows(
            &c,
            "select ts, clock_id, clock_name, clock_value from clock_snapshot
             order by ts, clock_id desc"
        ),
        table(&[
            ["1000000000", "6", "BOOTTIME", "1000000000"],
            ["1000000000", "3", "MONOTONIC", "400000000"],
            ["1000000000", "1", "REALTIME", "1700000000000000000"],
            ["3000000000", "6", "BOOTTIME", "3000000000"],
            ["3000000000", "3", "MONOTONIC", "2390000000"],
            ["3000000000", "1", "REALTIME", "1700000002005000000"],
        ])
    );
    assert_eq!(
        rows(
            &c,
            "select min(ts), count(*), count(distinct ts), sum(clock_id) from clock_snapshot
             group by snapshot_id order by min(ts)"
        ),
        table(&[
            ["1000000000", "3", "1", "10"],
            ["3000000000", "3", "1", "10"]
        ])
    );

    assert_eq!(
        rows(
            &c,
            "select int_value from metadata where name = 'trace_time_clock_id'"
        ),
        table(&[["6"]])
    );
    assert_eq!(
        rows(
            &c,
            "select name, value from stats where name like 'clock_sync%' and value > 0"
        ),
        table::<2>(&[])
    );
}

#[test]
fn e_two_machines() {
    let (c, _db) = import("e_two_machines.pftrace");

    assert_eq!(
        rows(
            &c,
            "select raw_id, name, sysname, release from machine order by raw_id"
        ),
        table(&[
            ["0", "host-box", "Linux", "6.1.0"],
            ["2", "guest-vm", "NULL", "NULL"],
        ])
    );
    assert_eq!(
        rows(
            &c,
            "select int_value from metadata where name = 'trace_time_clock_id'"
        ),
        table(&[["6"]])
    );

    // Same pid/tid on both machines: two distinct process rows and two thread rows.
    assert_eq!(
        rows(
            &c,
            "select m.name, p.pid, p.name, t.tid, t.name from thread t
             join process p on p.upid = t.upid
             join machine m on m.id = t.machine_id
             where t.tid = 51 order by m.raw_id"
        ),
        table(&[
            ["host-box", "50", "hostd", "51", "host-worker"],
            ["guest-vm", "50", "guestd", "51", "guest-worker"],
        ])
    );
    assert_eq!(
        rows(
            &c,
            "select m.name, p.pid, p.name from process p join machine m on m.id = p.machine_id
             where p.pid = 50 order by m.raw_id"
        ),
        table(&[["host-box", "50", "hostd"], ["guest-vm", "50", "guestd"]])
    );

    // Each machine's MONOTONIC goes through its own snapshot; guest BOOTTIME = host BOOTTIME.
    assert_eq!(
        rows(
            &c,
            "select s.name, m.name, t.name, s.ts, s.dur, s.depth
             from slice s join thread_track tt on s.track_id = tt.id
             join thread t on t.utid = tt.utid
             join machine m on m.id = t.machine_id order by s.ts"
        ),
        table(&[
            [
                "host_slice",
                "host-box",
                "host-worker",
                "1100000000",
                "200000000",
                "0"
            ],
            [
                "host_mono",
                "host-box",
                "host-worker",
                "1500000000",
                "100000000",
                "0"
            ],
            [
                "guest_slice",
                "guest-vm",
                "guest-worker",
                "10100000000",
                "300000000",
                "0"
            ],
            [
                "guest_mono",
                "guest-vm",
                "guest-worker",
                "10500000000",
                "100000000",
                "0"
            ],
        ])
    );
    assert_eq!(rows(&c, "select count(*) from slice"), table(&[["4"]]));
}

#[test]
fn f_flows() {
    let (c, _db) = import("f_flows.pftrace");

    assert_eq!(
        rows(
            &c,
            "select s.name, t.tid, t.name, p.pid, p.name, s.ts, s.dur, s.depth
             from slice s join thread_track tt on s.track_id = tt.id
             join thread t on t.utid = tt.utid left join process p on p.upid = t.upid
             order by s.ts"
        ),
        table(&[
            [
                "post_task",
                "21",
                "Producer",
                "20",
                "pipeline",
                "3000000000",
                "50000000",
                "0"
            ],
            [
                "run_task",
                "22",
                "Consumer",
                "20",
                "pipeline",
                "3100000000",
                "100000000",
                "0"
            ],
            [
                "send",
                "21",
                "Producer",
                "20",
                "pipeline",
                "3200000000",
                "0",
                "0"
            ],
            [
                "recv",
                "22",
                "Consumer",
                "20",
                "pipeline",
                "3250000000",
                "20000000",
                "0"
            ],
            [
                "ack",
                "21",
                "Producer",
                "20",
                "pipeline",
                "3300000000",
                "10000000",
                "0"
            ],
            [
                "post2",
                "22",
                "Consumer",
                "20",
                "pipeline",
                "3400000000",
                "10000000",
                "0"
            ],
            [
                "handle2",
                "21",
                "Producer",
                "20",
                "pipeline",
                "3450000000",
                "10000000",
                "0"
            ],
        ])
    );

    // FLOW_A = 0xF122334455667788 stored as a signed 64-bit trace_id; FLOW_B = 242.
    // A is terminated at run_task, so post2 starts a new flow with the same id.
    assert_eq!(
        rows(
            &c,
            "select so.name, si.name, f.trace_id from flow f
             join slice so on so.id = f.slice_out
             join slice si on si.id = f.slice_in
             order by so.ts, si.ts"
        ),
        table(&[
            ["post_task", "run_task", "-1071237392777185400"],
            ["send", "recv", "242"],
            ["recv", "ack", "242"],
            ["post2", "handle2", "-1071237392777185400"],
        ])
    );
}

#[test]
fn g_chrome() {
    let (c, _db) = import("g_chrome.json");

    assert_eq!(
        rows(&c, "select pid, name from process where pid = 7"),
        table(&[["7", "Browser"]])
    );
    assert_eq!(
        rows(
            &c,
            "select t.tid, t.name, p.pid from thread t left join process p using(upid)
             where t.tid in (7, 8) order by t.tid"
        ),
        table(&[["7", "NULL", "7"], ["8", "CrRendererMain", "7"]])
    );

    // µs → ns (2000.5 µs → 2_000_500 ns); sorted by ts before nesting.
    assert_eq!(
        rows(&c, THREAD_SLICES),
        table(&[
            ["Layout", "8", "1000000", "500000", "0", "NULL", "blink"],
            ["Style", "8", "1100000", "200000", "1", "Layout", "blink"],
            ["Paint", "8", "2000500", "300000", "0", "NULL", "cc"],
            ["Marker", "8", "2100000", "0", "1", "Paint", "cc"],
            ["Navigate", "7", "2500000", "1000000", "0", "NULL", "nav"],
        ])
    );
    assert_eq!(rows(&c, "select count(*) from slice"), table(&[["5"]]));

    let args = |slice: &str| {
        rows(
            &c,
            &format!(
                "select a.key, a.int_value, a.string_value, a.real_value
                 from slice s join args a on a.arg_set_id = s.arg_set_id
                 where s.name = '{slice}' and a.key is not 'args.dirty' order by a.key"
            ),
        )
    };
    assert_eq!(
        args("Layout"),
        table(&[["args.nodes", "12", "NULL", "NULL"]])
    );
    // The bool's storage is not asserted (the reference: int 1, value type `bool`); only
    // that it is present and true.
    assert_eq!(
        rows(
            &c,
            "select count(*) from slice s join args a on a.arg_set_id = s.arg_set_id
             where s.name = 'Layout' and a.key = 'args.dirty'
               and (a.int_value = 1 or a.string_value = 'true')"
        ),
        table(&[["1"]])
    );
    assert_eq!(
        args("Style"),
        table(&[["args.sheet", "NULL", "main.css", "NULL"]])
    );
    // B and E args merge.
    assert_eq!(
        args("Paint"),
        table(&[
            ["args.layer", "3", "NULL", "NULL"],
            ["args.tiles", "9", "NULL", "NULL"],
        ])
    );
    assert_eq!(args("Marker"), table::<4>(&[]));
    assert_eq!(args("Navigate"), table::<4>(&[]));

    // `C` events: one process-scoped track per args key, named `<event name> <arg key>`.
    assert_eq!(
        rows(
            &c,
            "select t.name, p.pid, c.ts, c.value from counter c
             join process_counter_track t on t.id = c.track_id
             join process p on p.upid = t.upid
             order by t.name, c.ts"
        ),
        table(&[
            ["Heap total", "7", "1000000", "64"],
            ["Heap total", "7", "3000000", "64"],
            ["Heap used", "7", "1000000", "10"],
            ["Heap used", "7", "3000000", "12.5"],
        ])
    );
    assert_eq!(rows(&c, "select count(*) from counter"), table(&[["4"]]));
}

#[test]
fn h_systrace() {
    let (c, _db) = import("h_systrace.txt");

    assert_eq!(
        rows(
            &c,
            "select t.tid, t.name, p.pid from thread t left join process p using(upid)
             where t.tid in (0, 500, 501, 600) order by t.tid"
        ),
        table(&[
            ["0", "swapper", "0"],
            ["500", "ui", "500"],
            ["501", "bg", "500"],
            ["600", "net", "600"],
        ])
    );

    // `B|500|upload` written by bg-501 is on thread 501.
    assert_eq!(
        rows(
            &c,
            "select s.name, t.tid, t.name, s.ts, s.dur, s.depth, p.name
             from slice s join thread_track tt on s.track_id = tt.id
             join thread t on t.utid = tt.utid
             left join slice p on p.id = s.parent_id order by s.ts"
        ),
        table(&[
            [
                "measure",
                "500",
                "ui",
                "100001000000",
                "5000000",
                "0",
                "NULL"
            ],
            [
                "text",
                "500",
                "ui",
                "100002000000",
                "2000000",
                "1",
                "measure"
            ],
            [
                "upload",
                "501",
                "bg",
                "100009000000",
                "2000000",
                "0",
                "NULL"
            ],
        ])
    );
    assert_eq!(rows(&c, "select count(*) from slice"), table(&[["3"]]));

    // `C|500|pending_jobs|N`: process-scoped track of process 500.
    assert_eq!(
        rows(
            &c,
            "select t.name, p.pid, c.ts, c.value from counter c
             join process_counter_track t on t.id = c.track_id
             join process p on p.upid = t.upid order by c.ts"
        ),
        table(&[
            ["pending_jobs", "500", "100003000000", "4"],
            ["pending_jobs", "500", "100009500000", "1"],
        ])
    );
    assert_eq!(rows(&c, "select count(*) from counter"), table(&[["2"]]));

    // cpu 1 lines come after cpu 0 lines in the file but are earlier in time.
    assert_eq!(
        rows(&c, SCHED),
        table(&[
            ["0", "100000000000", "8000000", "500", "ui", "S", "110"],
            ["0", "100008000000", "4000000", "501", "bg", "R", "120"],
            ["0", "100012000000", "-1", "0", "swapper", "NULL", "120"],
            ["1", "100002500000", "5000000", "600", "net", "D", "120"],
            ["1", "100007500000", "-1", "0", "swapper", "NULL", "120"],
        ])
    );
}

#[test]
fn compact_sched_gets_raw_rows_like_full_events() {
    let (c, _db) = import("c2_compact_sched.pftrace");
    // One raw row per switch that made a sched row (the cpu's first only primes it), and
    // one per waking, on the thread that was running. A compact switch has no prev comm:
    // the row names the task switched out as the thread table does (the idle thread is
    // `swapper`), as Trace Processor does.
    assert_eq!(
        rows(&c, "select to_ftrace(id) from ftrace_event order by id"),
        table(&[
            ["      GameThread-101   (-----) [000] .... 1.010000: sched_switch: prev_comm=GameThread prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"],
            ["          <idle>-0     (-----) [000] .... 1.020000: sched_waking: comm=AudioThread pid=102 prio=120 target_cpu=000"],
            ["          <idle>-0     (-----) [000] .... 1.025000: sched_switch: prev_comm=swapper prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=AudioThread next_pid=102 next_prio=120"],
            ["     AudioThread-102   (-----) [000] .... 1.030000: sched_switch: prev_comm=AudioThread prev_pid=102 prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120"],
        ])
    );
}

#[test]
fn trace_bounds_of_a_trace_at_a_single_instant_end_one_ns_later() {
    // Trace Processor's bounds never have zero length: (ts, ts + 1).
    let input = TempFile::with_bytes(
        "one_instant.json",
        br#"{"traceEvents": [{"pid": 1, "tid": 1, "ts": 5, "ph": "i", "s": "t", "name": "k"}]}"#,
    );
    let db = TempFile::new("one_instant.sqlite");
    sextant::import::import_path(input.path(), db.path()).expect("imports");
    let conn = sextant::db::open_read_only(db.path()).expect("opens");
    assert_eq!(
        rows(&conn, "select start_ts, end_ts from trace_bounds"),
        table(&[["5000", "5001"]])
    );
}
