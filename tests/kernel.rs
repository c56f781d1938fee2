//! Kernel events beyond the scheduler: binder transactions (protobuf ftrace and systrace
//! text), the generic kernel packets, dma fences, TCP streams and process tracking; device
//! and driver events are in `kernel/devices.rs`.
//! `binder_qoe.pftrace` is 40 ms of a real Android 9 trace (android/qoe_samsung_j5_android9);
//! the small `.pftrace` files are inputs of the reference implementation's own test cases.

use rusqlite::Connection;

mod common;

#[path = "kernel/devices.rs"]
mod devices;

use common::{rows, table, TempFile};

fn import(name: &str) -> (Connection, TempFile) {
    common::import_data("kernel", name)
}

fn args_of(conn: &Connection, slice: i64) -> Vec<Vec<String>> {
    rows(
        conn,
        &format!(
            "select a.key, a.value_type, a.display_value from slice s
             join args a using (arg_set_id) where s.id = {slice} order by a.id"
        ),
    )
}

#[test]
fn binder_transactions_and_replies_pair_up_with_args_and_flows() {
    let (conn, _db) = import("binder_qoe.pftrace");
    let counts = rows(
        &conn,
        "select name, count(*) from slice where category = 'binder' group by name order by name",
    );
    assert_eq!(
        counts,
        table(&[
            ["binder async rcv", "2"],
            ["binder reply", "19"],
            ["binder transaction", "19"],
            ["binder transaction async", "2"],
        ])
    );
    // Every reply and one-way receive is reached by a flow from its transaction.
    let flows = rows(
        &conn,
        "select o.name, i.name, count(*) from flow f join slice o on o.id = f.slice_out
         join slice i on i.id = f.slice_in group by 1, 2 order by 1",
    );
    assert_eq!(
        flows,
        table(&[
            ["binder transaction", "binder reply", "19"],
            ["binder transaction async", "binder async rcv", "2"],
        ])
    );
    // A sync call: the transaction args, then who received it.
    assert_eq!(
        args_of(&conn, 2),
        table(&[
            ["transaction id", "int", "453795"],
            ["destination node", "int", "27432"],
            ["destination process", "int", "2839"],
            ["reply transaction?", "bool", "false"],
            [
                "flags",
                "string",
                "0x10 allow replies with file descriptors; "
            ],
            ["code", "string", "0x02 Java Layer Dependent"],
            ["calling tid", "uint", "3758"],
            ["destination thread", "uint", "5086"],
            ["destination name", "string", "Binder:2839_5"],
        ])
    );
    // Its reply: whom it answers, then the reply transaction's args.
    assert_eq!(
        args_of(&conn, 3),
        table(&[
            ["destination thread", "int", "3758"],
            ["destination name", "string", "RenderThread"],
            ["transaction id", "int", "453796"],
            ["destination node", "int", "0"],
            ["destination process", "int", "3534"],
            ["reply transaction?", "bool", "true"],
            ["flags", "string", "0x00 No Flags Set"],
            ["code", "string", "0x00 Java Layer Dependent"],
            ["calling tid", "uint", "5086"],
        ])
    );
    // The reply lies inside the call, on another thread.
    let pair = rows(
        &conn,
        "select o.ts <= i.ts and i.ts + i.dur <= o.ts + o.dur, o.track_id != i.track_id
         from flow f join slice o on o.id = f.slice_out join slice i on i.id = f.slice_in
         where o.id = 2",
    );
    assert_eq!(pair, table(&[["1", "1"]]));
}

#[test]
fn binder_from_systrace_text() {
    let (conn, _db) = import("binder.systrace");
    let slices = rows(
        &conn,
        "select (s.ts - 100000000000) / 1000, s.dur / 1000, s.name, t.tid from slice s
         join thread_track tt on tt.id = s.track_id join thread t using (utid) order by s.id",
    );
    assert_eq!(
        slices,
        table(&[
            ["200", "600", "binder transaction", "515"],
            ["400", "300", "binder reply", "1300"],
            ["500", "100", "getDisplayInfo", "1300"],
            ["900", "0", "binder transaction async", "515"],
            ["1000", "0", "binder async rcv", "1300"],
            ["1100", "100", "binder lock waiting", "1300"],
            ["1200", "100", "binder lock held", "1300"],
        ])
    );
    // Text codes are kept as written; alloc_buf sizes land on the open transaction.
    let args = args_of(&conn, 0);
    assert!(args.contains(&vec![
        "code".to_string(),
        "string".to_string(),
        "0x5f444d50 Java Layer Dependent".to_string()
    ]));
    assert!(args.contains(&vec![
        "data size".to_string(),
        "uint".to_string(),
        "80".to_string()
    ]));
    let flows = rows(&conn, "select slice_out, slice_in from flow order by id");
    assert_eq!(flows, table(&[["0", "1"], ["3", "4"]]));
    // The receive of a transaction never sent is ignored.
    let raw = rows(&conn, "select count(*) from ftrace_event");
    assert_eq!(raw, table(&[["0"]]));
}

#[test]
fn generic_kernel_task_states_end_threads() {
    let (conn, _db) = import("generic_dead_destroyed.pftrace");
    let states = rows(
        &conn,
        "select ts, dur, cpu, utid, state from thread_state order by id",
    );
    assert_eq!(
        states,
        table(&[
            ["359831239274", "1000000000", "0", "1", "Running"],
            ["360831239274", "1000000000", "NULL", "1", "Z"],
            ["361831239274", "-1", "NULL", "1", "X"],
        ])
    );
    let sched = rows(&conn, "select dur, end_state, priority from sched_slice");
    assert_eq!(sched, table(&[["1000000000", "Z", "100"]]));
    let thread = rows(&conn, "select tid, name, end_ts from thread where utid = 1");
    assert_eq!(thread, table(&[["1", "task1", "361831239274"]]));
}

#[test]
fn generic_process_tree_makes_processes_without_main_threads() {
    let (conn, _db) = import("generic_process_tree.pftrace");
    let procs = rows(
        &conn,
        "select upid, pid, name, parent_upid, cmdline from process order by upid",
    );
    assert_eq!(
        procs,
        table(&[
            ["0", "0", "NULL", "NULL", "NULL"],
            ["1", "1", "init", "0", "init"],
            ["2", "10", "proc1", "1", "proc1 --hello"],
            ["3", "22", "NULL", "NULL", "NULL"],
        ])
    );
    let threads = rows(
        &conn,
        "select tid, name, upid, is_main_thread from thread order by utid",
    );
    assert_eq!(
        threads,
        table(&[
            ["0", "swapper", "0", "1"],
            ["1234", "task1", "2", "1"],
            ["5678", "task2", "3", "0"],
        ])
    );
}

#[test]
fn dma_fences_wait_one_after_another_on_their_timeline() {
    let (conn, _db) = import("dma_fence.pftrace");
    let got = rows(
        &conn,
        "select t.name, t.type, s.ts, s.dur from slice s join track t on t.id = s.track_id
         where t.type = 'drm_fence' order by s.ts",
    );
    assert_eq!(
        got,
        table(&[
            ["fence-gpu-ring-0-1", "drm_fence", "11303602488073", "12813"],
            [
                "fence-gpu-ring-0-1",
                "drm_fence",
                "11303602500886",
                "4805626"
            ],
            [
                "fence-gpu-ring-0-1",
                "drm_fence",
                "11303607306512",
                "3850783"
            ],
            ["fence-ring0-9", "drm_fence", "11303702681699", "4868387"],
        ])
    );
    let wait = rows(
        &conn,
        "select name, dur from slice where name = 'dma_fence_wait'",
    );
    assert_eq!(wait, table(&[["dma_fence_wait", "4867658"]]));
}

#[test]
fn tcp_sockets_get_a_stream_track_each() {
    let (conn, _db) = import("inet_sock.pftrace");
    let got = rows(
        &conn,
        "select t.name, s.name, s.dur from slice s join track t on t.id = s.track_id
         order by s.ts",
    );
    assert_eq!(
        got,
        table(&[
            ["TCP stream#1", "TCP_SYN_SENT(pid=123)", "100000000"],
            [
                "TCP stream#1",
                "TCP_ESTABLISHED(sport=56789,dport=5001)",
                "500000000"
            ],
            ["TCP stream#1", "TCP_CLOSE_WAIT", "-1"],
            ["TCP stream#2", "TCP_SYN_SENT(pid=567)", "10000000"],
            [
                "TCP stream#2",
                "TCP_ESTABLISHED(sport=56790,dport=5002)",
                "300000000"
            ],
            ["TCP stream#2", "TCP_CLOSE_WAIT", "-1"],
        ])
    );
}

/// `process_tracking.pftrace` (written with Perfetto's Python bindings): pid 1 forks 100
/// ("app") before its own process is known, 100 starts thread 101, renames itself, 101
/// is freed, pid 1 forks 100 again, and only then does pid 1 write an atrace marker that
/// binds it to its process.

#[test]
fn process_tracker_forks_threads_renames_and_reuse() {
    let (conn, _db) = import("process_tracking.pftrace");
    let procs = rows(
        &conn,
        "select upid, pid, name, start_ts, end_ts, parent_upid from process order by upid",
    );
    // The reused pid is a second process; both get their parent once pid 1 is bound.
    assert_eq!(
        procs,
        table(&[
            ["0", "0", "NULL", "NULL", "NULL", "NULL"],
            ["1", "100", "app_renamed", "10", "NULL", "3"],
            ["2", "100", "app", "50", "NULL", "3"],
            ["3", "1", "NULL", "NULL", "NULL", "NULL"],
        ])
    );
    let threads = rows(
        &conn,
        "select utid, tid, name, start_ts, end_ts, upid, is_main_thread from thread
         order by utid",
    );
    // The first incarnation of 100 is forgotten, not ended; 101 ended when freed.
    assert_eq!(
        threads,
        table(&[
            ["0", "0", "swapper", "NULL", "NULL", "0", "1"],
            ["1", "1", "NULL", "NULL", "NULL", "3", "1"],
            ["2", "100", "app_renamed", "10", "NULL", "1", "1"],
            ["3", "101", "worker", "20", "40", "1", "0"],
            ["4", "100", "app", "50", "NULL", "2", "1"],
        ])
    );
}

/// strace `-f -ttt` text (`basic.strace`, from the reference's test cases): syscalls as
/// slices with their argument text and result, on wall-clock time; what is not a syscall
/// is counted.

#[test]
fn strace_syscalls_become_slices_with_args_and_results() {
    let (conn, _db) = import("basic.strace");
    let got = rows(
        &conn,
        "select s.ts, s.name, t.tid, extract_arg(s.arg_set_id, 'args'),
                extract_arg(s.arg_set_id, 'ret')
         from slice s join thread_track tt on tt.id = s.track_id join thread t using (utid)
         order by s.ts",
    );
    assert_eq!(
        got,
        table(&[
            [
                "1700000052321000000",
                "openat",
                "1000",
                r#"AT_FDCWD, "/etc/passwd", O_RDONLY"#,
                "3"
            ],
            [
                "1700000052321100000",
                "read",
                "1000",
                r#"3, "root:x:0:0"..., 1024"#,
                "312"
            ],
            ["1700000052321200000", "close", "1000", "3", "0"],
            [
                "1700000052321300000",
                "openat",
                "1000",
                r#"AT_FDCWD, "/nope", O_RDONLY"#,
                "-1 ENOENT (No such file or directory)"
            ],
            ["1700000052321400000", "write", "1234", r#"1, "hi", 2"#, "2"],
        ])
    );
    let failures = rows(
        &conn,
        "select value from stats where name = 'strace_parse_failure'",
    );
    assert_eq!(failures, table(&[["3"]]));
    let kind = rows(&conn, "select trace_type from trace_file");
    assert_eq!(kind, table(&[["strace"]]));
}

const COUNTERS: &str = "select c.ts, c.value, t.name, t.type from counter c
    join counter_track t on t.id = c.track_id order by c.ts, t.name";

const SLICES: &str = "select s.ts, s.dur, s.name, t.name, t.type from slice s
    join track t on t.id = s.track_id order by s.ts, s.id";

#[test]
fn suspend_resume_phases_pair_by_name_with_the_reference_repairs() {
    // Written by tools/gen_kernel_family_traces.py.
    let (conn, _db) = import("suspend_resume.pftrace");
    let got = rows(&conn, SLICES);
    let latency = |ts: &str, dur: &str, name: &str| {
        vec![
            ts.to_string(),
            dur.to_string(),
            name.to_string(),
            "Suspend/Resume Latency".to_string(),
            "suspend_resume".to_string(),
        ]
    };
    assert_eq!(
        got,
        vec![
            // Begun again before it ended: the first ends there, as a replica.
            latency("100", "100", "replica"),
            latency("200", "100", "dpm_suspend(2)"),
            // thaw_processes ending inside freeze_processes and suspend_enter: the suspend
            // failed, and suspend_enter ends with it.
            latency("1000", "300", "suspend_enter(3)"),
            latency("1100", "300", "freeze_processes(0)"),
            latency("1200", "100", "thaw_processes(0)"),
            vec![
                "2000".into(),
                "500".into(),
                "Suspended".into(),
                "Suspend/Resume Minimal".into(),
                "suspend_resume_minimal".into(),
            ],
        ]
    );
    // The reference's case: timekeeping_freeze's value is the cpu, read as 0.
    let (conn, _db) = import("suspend_resume_case.pftrace");
    let got = rows(&conn, "select ts, dur, name from slice order by ts");
    assert_eq!(
        got,
        table(&[
            ["10000", "2900", "suspend_enter(3)"],
            ["12000", "1000", "freeze_processes(0)"],
            ["12500", "400", "thaw_processes(0)"],
            ["15000", "5000", "suspend_enter(3)"],
            ["30000", "10000", "CPU(0)"],
            ["50000", "10000", "timekeeping_freeze(0)"],
        ])
    );
}

#[test]
fn wakeup_sources_make_one_slice_per_balanced_activation() {
    let (conn, _db) = import("wakesource.pftrace");
    let got = rows(&conn, "select ts, dur, name from slice order by ts");
    assert_eq!(
        got,
        table(&[
            ["34298714043271", "7872467", "Wakelock(s2mpw02-power-keys)"],
            ["34298721846504", "42732654", "Wakelock(event0)"],
            ["34298721915739", "16", "Wakelock(s2mpw02-power-keys)"],
            ["34298764569658", "14538", "Wakelock(eventpoll)"],
        ])
    );
}

#[test]
fn memory_heaps_events_and_gpu_memory_from_ftrace() {
    let (conn, _db) = import("memory_events.pftrace");
    let got = rows(&conn, COUNTERS);
    assert_eq!(
        got,
        table(&[
            // The heap total after the change; the change on the thread.
            ["100", "12288", "mem.ion.system", "ion"],
            ["100", "4096", "mem.ion_change.system", "ion_change"],
            ["200", "11264", "mem.ion.system", "ion"],
            ["200", "-1024", "mem.ion_change.system", "ion_change"],
            ["250", "2048", "mem.ion", "ion"],
            ["250", "2048", "mem.ion_change", "ion_change"],
            ["300", "8192", "mem.dma_heap", "android_dma_heap"],
            [
                "300",
                "8192",
                "mem.dma_heap_change",
                "android_dma_heap_change"
            ],
            ["400", "0", "mem.dma_heap", "android_dma_heap"],
            [
                "400",
                "-8192",
                "mem.dma_heap_change",
                "android_dma_heap_change"
            ],
            ["500", "4", "mem.mm.maj_flt.avg_lat", "mm_event"],
            ["500", "3", "mem.mm.maj_flt.count", "mm_event"],
            ["500", "9", "mem.mm.maj_flt.max_lat", "mm_event"],
            // pid 55 was never seen: its GPU memory is not made up a process.
            ["810", "200", "GPU Memory", "process_gpu_memory"],
            ["820", "300", "GPU Memory", "gpu_memory"],
            ["900", "65536", "mem.dmabuf_rss", "process_memory"],
        ])
    );
    assert_eq!(
        rows(&conn, "select count(*) from process where pid = 55"),
        table(&[["0"]])
    );
    // A DMA-BUF buffer lives from its allocation to its release; CMA on a 5.4 kernel
    // is ignored (the reference reads it from 5.10).
    assert_eq!(
        rows(&conn, SLICES),
        table(&[[
            "300",
            "100",
            "8 kB",
            "mem.dma_buffer",
            "android_dma_allocations"
        ]])
    );
    assert_eq!(
        rows(
            &conn,
            "select value from stats where name = 'mm_unknown_type'"
        ),
        table(&[["1"]])
    );
    // The change counter carries the buffer's inode.
    assert_eq!(
        rows(
            &conn,
            "select distinct extract_arg(c.arg_set_id, 'inode') from counter c
             join counter_track t on t.id = c.track_id where t.name = 'mem.dma_heap_change'"
        ),
        table(&[["7"]])
    );
    // From 5.10, a CMA allocation is a slice with what it did.
    let (conn, _db) = import("cma.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select ts, dur, name, extract_arg(arg_set_id, 'cma_nr_migrated') from slice"
        ),
        table(&[["74288080958099", "110151652", "mm_cma_alloc", "6365"]])
    );
}

#[test]
fn rss_stat_follows_the_memory_map_owner_while_it_lives() {
    // The map's owner was freed: a later report for it by another thread is dropped.
    let (conn, _db) = import("rss_stat_after_free.pftrace");
    let got = rows(
        &conn,
        "select pid, max(c.ts), p.end_ts from counter c
         join process_counter_track t on c.track_id = t.id join process p using (upid)
         group by upid order by pid",
    );
    assert_eq!(got, table(&[["10", "100", "101"], ["11", "90", "NULL"]]));
    assert_eq!(
        rows(
            &conn,
            "select value from stats where name = 'rss_stat_unknown_thread_for_mm_id'"
        ),
        table(&[["1"]])
    );
    // Each row names the thread that reported it.
    assert_eq!(
        rows(
            &conn,
            "select c.ts, t.tid from counter c join thread t
             on t.utid = extract_arg(c.arg_set_id, 'utid') order by c.ts"
        ),
        table(&[["90", "11"], ["100", "10"]])
    );
    // The pid was reused by a new process: its reports go to the new one.
    let (conn, _db) = import("rss_stat_mm_id_reuse.pftrace");
    let got = rows(
        &conn,
        "select c.ts, p.name from counter c join process_counter_track t on c.track_id = t.id
         join process p using (upid) order by c.ts",
    );
    assert_eq!(
        got,
        table(&[["100", "parent_process"], ["103", "new_process"]])
    );
}

#[test]
fn systrace_lines_follow_the_line_parsers_rules() {
    let (conn, _db) = import("systrace_rules.systrace");
    assert_eq!(
        rows(
            &conn,
            "select tid, name, upid, is_main_thread from thread order by utid"
        ),
        table(&[
            ["0", "swapper", "0", "1"],
            ["1234", "RenderThread", "1", "0"],
            ["1200", "main-thread", "1", "1"],
            ["77", "kworker/u16:1", "2", "1"],
            // sched_waking names the wakee; sched_wakeup is ignored.
            ["56", "binder:55_1", "NULL", "NULL"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select value from stats where name = 'systrace_parse_failure'"
        ),
        table(&[["4"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.name, s.category from slice s order by s.ts"
        ),
        table(&[
            ["100000001000", "work", "NULL"],
            ["100000004000", "inst", "NULL"],
            ["100000008000", "do_thing", "workqueue"],
        ])
    );
    // A thermal zone whose temperature does not parse still has its track; counters
    // are keyed by their zone or device.
    assert_eq!(
        rows(
            &conn,
            "select t.name, extract_arg(t.dimension_arg_set_id, 'thermal_zone'),
                    (select count(*) from counter c where c.track_id = t.id)
             from counter_track t where t.type = 'thermal_temperature'"
        ),
        table(&[["cpu Temperature", "cpu", "0"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select t.name, extract_arg(t.dimension_arg_set_id, 'linux_device'), c.value
             from counter c join counter_track t on t.id = c.track_id
             where t.type in ('clock_frequency', 'cooling_device_counter') order by t.name"
        ),
        table(&[
            ["fan Cooling Device", "fan", "3"],
            ["gpu Frequency", "gpu", "500"],
        ])
    );
    // task_newtask lines are ignored: no process 99.
    assert_eq!(
        rows(&conn, "select count(*) from thread where tid = 99"),
        table(&[["0"]])
    );
}

#[test]
fn atrace_markers_lmk_device_state_and_track_slices() {
    let (conn, _db) = import("atrace_markers.systrace");
    // kill_one_process and lmk,<pid>,… slices mark the killed process on its LMK track.
    assert_eq!(
        rows(
            &conn,
            "select s.ts, p.pid, t.name from slice s join process_track t on t.id = s.track_id
             join process p using (upid) where s.name = 'mem.lmk' order by s.ts"
        ),
        table(&[
            ["100000001000", "1234", "LMK"],
            ["100000002000", "1235", "LMK"]
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select t.name, t.type, c.value from counter c join counter_track t
             on t.id = c.track_id order by c.ts"
        ),
        table(&[
            ["kill_one_process", "atrace_counter", "1234"],
            ["oom_score_adj", "oom_score_adj", "900"],
            ["ScreenState", "screen_state", "2"],
            ["battery_stats.foo", "battery_stats", "3"],
        ])
    );
    // N and G/H slices name the thread that wrote them.
    assert_eq!(
        rows(
            &conn,
            "select s.name, t.type, extract_arg(s.arg_set_id, 'utid'),
                    extract_arg(s.arg_set_id, 'end_utid'), t.source_arg_set_id
             from slice s join track t on t.id = s.track_id
             where t.type in ('atrace_async_slice_for_track', 'android_device_state')
             order by s.ts"
        ),
        table(&[
            ["on", "android_device_state", "NULL", "NULL", "NULL"],
            ["evt", "atrace_async_slice_for_track", "1", "NULL", "NULL"],
            ["n1", "atrace_async_slice_for_track", "1", "1", "NULL"],
        ])
    );
}

/// `N`/`G`/`H` make the named process (and its main thread) but leave the writing thread
/// unbound, unlike `B` (behaviour-process-tracking §3); their `utid` args are the bare threads.
#[test]
fn atrace_track_markers_do_not_bind_the_writing_thread() {
    let (conn, _db) = import("atrace_track_markers_unbound.systrace");
    assert_eq!(
        rows(
            &conn,
            "select utid, tid, upid, is_main_thread from thread order by utid"
        ),
        table(&[
            ["0", "0", "0", "1"],
            ["1", "21", "NULL", "NULL"],
            ["2", "20", "1", "1"],
            ["3", "22", "NULL", "NULL"],
            ["4", "23", "NULL", "NULL"],
            ["5", "24", "1", "0"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select s.name, extract_arg(s.arg_set_id, 'utid'),
                    extract_arg(s.arg_set_id, 'end_utid')
             from slice s join process_track t on t.id = s.track_id order by s.ts"
        ),
        table(&[["nm", "1", "NULL"], ["g", "3", "4"]])
    );
}

/// Atrace tracks are keyed by (process, name) — the track name for `N`/`G`/`H` — then the
/// compressor slot, in that order (behaviour-parsers §2.4).

#[test]
fn atrace_tracks_have_the_process_then_the_name_as_dimensions() {
    let (conn, _db) = import("atrace_markers.systrace");
    assert_eq!(
        rows(
            &conn,
            "select t.name, group_concat(a.key || '=' || a.display_value, ',')
             from track t join args a on a.arg_set_id = t.dimension_arg_set_id
             where t.type in ('atrace_counter', 'atrace_async_slice',
                              'atrace_async_slice_for_track')
             group by t.id order by t.id"
        ),
        table(&[
            ["kill_one_process", "upid=1,name=kill_one_process"],
            ["mytrack", "upid=1,name=mytrack,track_compressor_idx=0"],
            ["mytrack2", "upid=1,name=mytrack2,track_compressor_idx=0"],
            ["async", "upid=1,name=async,track_compressor_idx=0"],
        ])
    );
}

/// process_tree's `process_start_from_boot` is a BOOTTIME time converted to trace time
/// (reference/behaviour-process-tracking.md §6.1), not taken as is.
#[test]
fn process_start_from_boot_is_converted_from_boottime() {
    // Written by tools/gen_kernel_family_traces.py: trace clock MONOTONIC, BOOTTIME 100000
    // = MONOTONIC 50000.
    let (conn, _db) = import("process_start_from_boot.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select pid, start_ts from process where pid >= 10 order by pid"
        ),
        table(&[
            ["10", "50200"],
            // Before the trace's zero, and kept.
            ["11", "-49800"],
            ["12", "NULL"],
        ])
    );
}

/// An empty argv0 is a process name like any other: only NULL names are ignored
/// (reference/behaviour-process-tracking.md §2.9, §6.1).
#[test]
fn process_tree_empty_argv0_names_the_process() {
    // Written by tools/gen_kernel_family_traces.py: pid 50 forked as `child`, then listed
    // with cmdline [""]; pid 60 with [" x"] (cut at its first space); pid 70 with ["", "y"].
    let (conn, _db) = import("process_tree_empty_argv0.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select pid, quote(name), quote(cmdline) from process where pid >= 50 order by pid"
        ),
        table(&[
            ["50", "''", "''"],
            ["60", "''", "' x'"],
            ["70", "''", "' y'"],
        ])
    );
}

/// process_tree and process_stats (reference/behaviour-process-tracking.md §6).

#[test]
fn process_tree_and_process_stats_rules() {
    // Written by tools/gen_kernel_family_traces.py.
    let (conn, _db) = import("process_rules.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select pid, name, cmdline, start_ts, parent_upid, uid, android_appid,
                    android_user_id, extract_arg(arg_set_id, 'is_kthread')
             from process order by upid"
        ),
        table(&[
            ["0", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"],
            ["2", "kthreadd", "kthreadd", "NULL", "0", "NULL", "NULL", "NULL", "1"],
            // A kworker's workqueue suffix is cut from its name and command line.
            [
                "20",
                "kworker/1:2",
                "kworker/1:2",
                "NULL",
                "1",
                "NULL",
                "NULL",
                "NULL",
                "1"
            ],
            ["1", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"],
            // One element: the name is cut at its first space.
            [
                "30",
                "/system/bin/foo",
                "/system/bin/foo --flag",
                "NULL",
                "3",
                "NULL",
                "NULL",
                "NULL",
                "NULL"
            ],
            // A later snapshot renames; the first parent stays.
            ["40", "app2", "app2", "500", "3", "1010123", "10123", "10", "NULL"],
            // No cmdline (pid 50): skipped.
            ["60", "zombie", "zombie", "NULL", "3", "NULL", "NULL", "NULL", "NULL"],
            ["7", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select t.tid, t.name, p.pid, t.is_main_thread from thread t
             join process p using (upid) where t.tid in (20, 41, 42, 60) order by t.tid"
        ),
        table(&[
            ["20", "kworker/1:2", "20", "1"],
            ["41", "worker", "40", "0"],
            ["42", "NULL", "40", "0"],
            // cmdline_is_comm names the main thread.
            ["60", "zombie", "60", "1"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select name, value from stats where value > 0 and name like 'pro%' order by name"
        ),
        table(&[
            ["proc_stat_unknown_counters", "1"],
            ["process_tracker_parent_pid_changed", "1"],
        ])
    );
    assert_eq!(
        rows(&conn, "select fd, ts, upid, path from filedescriptor"),
        table(&[["3", "10", "5", "/dev/null"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select t.name, t.type, c.value from counter c join process_counter_track t
             on t.id = c.track_id order by t.name"
        ),
        table(&[
            // Not the system probes parser's (it counts the field as unknown above) but the
            // reference's ChromeSystemProbesParser's, which reads the same packet.
            [
                "chrome.peak_resident_set_kb",
                "chrome_process_stats",
                "5120"
            ],
            ["mem.rss", "process_memory", "10240"],
            ["mem.smaps.pss", "smaps", "3072"],
            ["oom_score_adj", "oom_score_adj", "-100"],
            ["runtime.user_ns", "proc_stat_runtime", "7"],
        ])
    );
    // Tracks are made in ProcessStats.Process field-number order (vm_rss_kb 3,
    // oom_score_adj 10, smr_pss_kb 17, runtime_user_mode 21), as the reference walks its
    // per-field array, so ids follow that order; the Chrome module's counter comes after.
    assert_eq!(
        rows(&conn, "select name from process_counter_track order by id"),
        table(&[
            ["mem.rss"],
            ["oom_score_adj"],
            ["mem.smaps.pss"],
            ["runtime.user_ns"],
            ["chrome.peak_resident_set_kb"]
        ])
    );
}

#[test]
fn ftrace_from_before_tracing_started_is_dropped_unless_preserved() {
    let (conn, _db) = import("tracing_start.pftrace");
    assert_eq!(
        rows(&conn, "select ts, name from slice"),
        table(&[["150", "late"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select value from stats where name = 'ftrace_packet_before_tracing_start'"
        ),
        table(&[["1"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select int_value from metadata where name = 'tracing_started_ns'"
        ),
        table(&[["100"]])
    );
    let (conn, _db) = import("tracing_start_preserved.pftrace");
    assert_eq!(
        rows(&conn, "select ts, name from slice order by ts"),
        table(&[["50", "early"], ["150", "late"]])
    );
    // The reference reads the START FtraceStats' preserve_ftrace_buffer, not the config's.
    let (conn, _db) = import("tracing_start_preserved_in_config_only.pftrace");
    assert_eq!(
        rows(&conn, "select ts, name from slice order by ts"),
        table(&[["150", "late"]])
    );
}

/// Forks, threads, renames, frees and reuse of pids and tids
/// (reference/behaviour-process-tracking.md §2, §3).

#[test]
fn process_lifecycle_forks_frees_and_reuse() {
    let (conn, _db) = import("process_lifecycle.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select upid, pid, name, start_ts, end_ts, parent_upid from process order by upid"
        ),
        table(&[
            ["0", "0", "NULL", "NULL", "NULL", "NULL"],
            ["1", "1", "NULL", "NULL", "NULL", "NULL"],
            // Replaced by a fork of the same pid: forgotten, not ended.
            ["2", "10", "process1", "NULL", "NULL", "1"],
            ["3", "20", "process2", "NULL", "NULL", "1"],
            // Forked by a thread of process2; renamed by its main thread; freed.
            ["4", "30", "process3-renamed", "20", "50", "3"],
            // Named again after it ended: a new process, with no start.
            ["5", "30", "NULL", "NULL", "NULL", "NULL"],
            ["6", "10", "process1-new", "60", "NULL", "1"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select tid, name, start_ts, end_ts, upid, is_main_thread from thread
             where tid in (11, 12, 30, 31) order by utid"
        ),
        table(&[
            ["11", "p1-t1", "15", "NULL", "2", "0"],
            ["30", "process3-renamed", "20", "50", "4", "1"],
            ["31", "p3-t1-renamed", "25", "40", "4", "0"],
            // A freed tid seen again is a new thread of the same live process.
            ["31", "NULL", "NULL", "NULL", "4", "0"],
            ["30", "NULL", "NULL", "NULL", "5", "1"],
            // Its process replaced, 11 is a new thread, not yet in any process.
            ["11", "p1-t1", "NULL", "NULL", "NULL", "NULL"],
            ["12", "stranger", "NULL", "NULL", "NULL", "NULL"],
        ])
    );
    // A fork of pid 0 is the kernel starting the idle task: ignored.
    assert_eq!(
        rows(
            &conn,
            "select count(*) from thread where name = 'swapper-child'"
        ),
        table(&[["0"]])
    );
}

/// Only proto and systrace sources map pid and tid 0 to the idle rows (named `swapper`);
/// in JSON they are ordinary ids with rows of their own (the idle rows still exist).

#[test]
fn json_pid_zero_is_not_the_idle_process() {
    let (conn, _db) = import("json_pid_zero.json");
    assert_eq!(
        rows(
            &conn,
            "select utid, tid, upid, name from thread order by utid"
        ),
        table(&[
            ["0", "0", "0", "NULL"],
            ["1", "0", "1", "NULL"],
            ["2", "5", "2", "NULL"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select s.name, t.utid from slice s join thread_track t on t.id = s.track_id
             order by s.ts"
        ),
        table(&[["a", "1"], ["b", "2"]])
    );
}

#[test]
fn namespaced_descriptor_ids_resolve_to_root_level_threads() {
    let (conn, _db) = import("namespaced_descriptors.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select t.tid, coalesce(t.name, '-'), p.pid from thread t join process p using (upid)
             where t.tid > 1 order by t.utid"
        ),
        table(&[
            ["1000", "-", "1000"],
            ["2000", "-", "2000"],
            ["1001", "ns_thread", "1000"],
            ["2001", "-", "2000"],
            // Not in the process tree: its pid resolves, its tid stays.
            ["9", "unlisted", "1000"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select s.name, t.tid from slice s join thread_track tt on s.track_id = tt.id
             join thread t using (utid)"
        ),
        table(&[["s", "1001"]])
    );
    assert_eq!(
        rows(&conn, "select name from _trace_import_logs"),
        table(&[["namespaced_thread_missing_process"]])
    );
}

/// behaviour-process-tracking §4: a systrace line first looks its thread up (or makes it) by
/// tid, then binds it to the TGID column's process, so a new thread's row comes before the
/// row of its process's main thread.

#[test]
fn a_systrace_lines_thread_is_made_before_its_tgid_process() {
    let (conn, _db) = import("thread_before_its_process.systrace");
    assert_eq!(
        rows(
            &conn,
            "select utid, tid, coalesce(name, '-'), upid from thread order by utid"
        ),
        table(&[
            ["0", "0", "swapper", "0"],
            ["1", "20000", "-", "1"],
            ["2", "30", "-", "1"],
            ["3", "20001", "bar", "1"],
        ])
    );
}

#[test]
fn an_ignored_unnestable_begin_does_not_keep_its_async_slot_busy() {
    let (conn, _db) = import("unnestable_slot_reuse.systrace");
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.dur, extract_arg(t.dimension_arg_set_id, 'track_compressor_idx'),
                    extract_arg(s.arg_set_id, 'cookie')
             from slice s join track t on s.track_id = t.id order by s.ts"
        ),
        table(&[
            ["1000010000", "30000", "0", "1"],
            ["1000019999", "30001", "1", "2"],
            ["1000060000", "10000", "0", "3"],
        ])
    );
}

#[test]
fn etw_context_switches_and_ready_threads_are_scheduling() {
    // etw_cswitch.textproto: one bundle (cpu 0) whose events switch threads on cpu 0 and,
    // naming their own cpu, on cpu 1; a ReadyThread wakes thread 20 from thread 10; one
    // old thread state is no Windows state.
    let (conn, _db) = import("etw_cswitch.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select ts, dur, cpu, tid, end_state, priority from sched join thread using (utid)
             order by ts"
        ),
        table(&[
            ["100", "100", "0", "10", "R", "8"],
            ["200", "200", "0", "20", "T", "9"],
            ["300", "-1", "1", "30", "NULL", "1"],
            ["400", "-1", "0", "10", "NULL", "0"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select ts, dur, state, w.tid from thread_state s join thread t using (utid)
             left join thread w on w.utid = s.waker_utid where t.tid = 20 order by ts"
        ),
        table(&[
            ["150", "50", "R", "10"],
            ["200", "200", "Running", "NULL"],
            ["400", "-1", "T", "NULL"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select value from stats where name = 'task_state_invalid'"
        ),
        table(&[["1"]])
    );
}

#[test]
fn cpu_frequency_and_idle_counters_are_intervals_between_changes() {
    // cpu_freq_idle_intervals.textproto: cpu 0 repeats a frequency and an idle state (folded
    // into the interval before), leaves idle (4294967295, read as -1); the trace ends at 5000.
    let (conn, _db) = import("cpu_freq_idle_intervals.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select ts, dur, freq, ucpu, cpu from cpu_frequency_counters order by cpu, ts"
        ),
        table(&[
            ["1000", "2000", "500000", "0", "0"],
            ["3000", "2000", "900000", "0", "0"],
            ["1000", "4000", "600000", "1", "1"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select ts, dur, idle, cpu from cpu_idle_counters order by ts"
        ),
        table(&[
            ["1500", "1000", "1", "0"],
            ["2500", "2500", "-1", "0"],
            ["5000", "0", "0", "0"],
        ])
    );
}
