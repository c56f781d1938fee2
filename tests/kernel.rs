//! Kernel events beyond the scheduler: binder transactions (protobuf ftrace and systrace
//! text), the generic kernel packets, dma fences, TCP streams and process tracking.
//! `binder_qoe.pftrace` is 40 ms of a real Android 9 trace (android/qoe_samsung_j5_android9);
//! the small `.pftrace` files are inputs of the reference implementation's own test cases.

use rusqlite::Connection;

mod common;

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
