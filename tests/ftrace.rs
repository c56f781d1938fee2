//! Kernel facts: `thread_state` built from the scheduler's events (proto ftrace and systrace
//! text) and the `cpu` table from CpuInfo
//! (traces copied from the reference implementation's conformance cases into
//! tests/data/ftrace).

use rusqlite::Connection;

mod common;

use common::{rows, table, TempFile};

fn import(name: &str) -> (Connection, TempFile) {
    common::import_data("ftrace", name)
}

const STATES: &str = "
    select ts, dur, cpu, t.tid, state, io_wait, blocked_function, waker_utid, irq_context
    from thread_state s join thread t using (utid)
    order by s.id";

#[test]
fn switches_open_and_close_rows_and_blocked_reasons_name_the_kernel_function() {
    let (conn, _db) = import("sched_blocked_reason_symbolized.pftrace");
    let got = rows(&conn, STATES);
    // The first rows: the three cpus switch from idle to 100, 102, 105 (idle gets no
    // rows); 102 and 105 then block in D, and the blocked reasons name the function
    // through the sequence's interned kernel symbols.
    // Both cpus switch at 999000: as in Trace Processor's queue merge, cpu 3 (whose queue
    // was being drained) goes first, then cpu 2.
    let want = table(&[
        [
            "50", "999950", "1", "100", "Running", "NULL", "NULL", "NULL", "NULL",
        ],
        [
            "60", "998940", "2", "102", "Running", "NULL", "NULL", "NULL", "NULL",
        ],
        [
            "60", "998940", "3", "105", "Running", "NULL", "NULL", "NULL", "NULL",
        ],
        [
            "999000", "-1", "NULL", "105", "D", "1", "some_fn", "NULL", "NULL",
        ],
        [
            "999000",
            "-1",
            "NULL",
            "102",
            "D",
            "1",
            "filemap_fault",
            "NULL",
            "NULL",
        ],
        [
            "999000", "3000", "2", "103", "Running", "NULL", "NULL", "NULL", "NULL",
        ],
        [
            "1000000",
            "1000",
            "NULL",
            "100",
            "D",
            "0",
            "filemap_fault",
            "NULL",
            "NULL",
        ],
    ]);
    assert_eq!(got[..want.len()], want[..]);
    // A caller missing from the interned symbols leaves the function unknown; a symbol
    // interned again after the sequence was reset takes the new name.
    let d_rows = rows(
        &conn,
        "select ts, t.tid, blocked_function from thread_state join thread t using (utid)
         where state = 'D' and ts >= 1001000 order by ts",
    );
    assert_eq!(
        d_rows,
        table(&[
            ["1001000", "101", "NULL"],
            ["1002000", "103", "NULL"],
            ["1003000", "100", "some_other_fn"],
            ["1005000", "104", "filemap_fault"],
        ])
    );
}

#[test]
fn systrace_blocked_reason_sets_io_wait_and_caller() {
    let (conn, _db) = import("sched_blocked.systrace");
    assert_eq!(
        rows(
            &conn,
            "select ts, t.tid, io_wait, blocked_function from thread_state
             join thread t using (utid) where state = 'D' order by ts"
        ),
        table(&[
            ["20258854000", "269", "0", "worker_thread+0x534/0x820"],
            [
                "21123838000",
                "2172",
                "1",
                "__filemap_fdatawait_range+0x134/0x150"
            ],
        ])
    );
}

#[test]
fn a_new_task_starts_runnable_woken_by_its_creator() {
    let (conn, _db) = import("task_newtask.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select s.ts, t.tid, s.state, w.tid, s.irq_context from thread_state s
             join thread t using (utid) join thread w on w.utid = s.waker_utid order by s.ts"
        ),
        table(&[
            ["201315132677", "3294", "R", "518", "0"],
            ["201319417828", "3295", "R", "518", "0"],
        ])
    );
}

#[test]
fn cpu_info_fills_the_cpu_table_with_clusters_features_and_frequencies() {
    let (conn, _db) = import("cpu_info_machine.pftrace");
    // Cpus 0-5 share a frequency table, 6-7 another: two clusters. The trace's one
    // machine (1001) is the first, so its ucpus are the cpu numbers.
    assert_eq!(
        rows(
            &conn,
            "select c.cpu, c.ucpu, c.cluster_id, m.raw_id,
                    extract_arg(c.arg_set_id, 'cpu_features.mte'),
                    extract_arg(c.arg_set_id, 'cpu_features.mte3'),
                    extract_arg(c.arg_set_id, 'cpu_features.raw_bitmap'),
                    extract_arg(c.arg_set_id, 'arm_cpu_part')
             from cpu c join machine m on m.id = c.machine_id where c.cpu >= 4 order by c.cpu"
        ),
        table(&[
            ["4", "4", "0", "1001", "NULL", "NULL", "NULL", "NULL"],
            ["5", "5", "0", "1001", "1", "NULL", "1", "NULL"],
            ["6", "6", "1", "1001", "1", "1", "3", "NULL"],
            [
                "7",
                "7",
                "1",
                "1001",
                "1",
                "1",
                "4611686018427387907",
                "3336"
            ],
        ])
    );
    // Bit 62 is no feature Trace Processor knows.
    assert_eq!(
        rows(
            &conn,
            "select value from stats where name = 'cpu_info_unknown_cpu_features'"
        ),
        table(&[["1"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select freq, group_concat(c.cpu) from cpu_available_frequencies f
             join cpu c using (ucpu) where freq in (300000, 652800) group by freq order by freq"
        ),
        table(&[["300000", "0,1,2,3,4,5,6,7"], ["652800", "6,7"]])
    );
    // Row ids count from 0, as in every reference table.
    assert_eq!(
        rows(
            &conn,
            "select min(id), max(id), count(*) from cpu_available_frequencies"
        ),
        table(&[["0", "73", "74"]])
    );
}

#[test]
fn cpu_capacity_is_kept_and_the_host_ucpu_is_the_cpu_number() {
    let (conn, _db) = import("cpu_capacity.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select ucpu, cpu, cluster_id, capacity, processor from cpu order by cpu"
        ),
        table(&[
            ["0", "0", "0", "256", "AArch64 Processor rev 13 (aarch64)"],
            ["1", "1", "1", "1024", "AArch64 Processor rev 13 (aarch64)"],
        ])
    );
}

/// Clusters are ranked as the reference ranks them: by capacity when every cpu has one, else
/// by each cpu's highest frequency when every cpu lists frequencies, else all 0 — not by
/// runs of equal frequency tables.
#[test]
fn cpu_clusters_rank_capacities_else_highest_frequencies() {
    use prost::Message;
    use sextant::protos::{cpu_info::Cpu, trace_packet::Data, CpuInfo, Trace, TracePacket};
    let cpu = |name: &str, freqs: &[u32], capacity: Option<u32>| Cpu {
        processor: Some(name.into()),
        frequencies: freqs.to_vec(),
        capacity,
        ..Default::default()
    };
    let clusters = |cpus: Vec<Cpu>| {
        let packet = TracePacket {
            data: Some(Data::CpuInfo(CpuInfo { cpus })),
            ..Default::default()
        };
        let bytes = Trace {
            packet: vec![packet],
        }
        .encode_to_vec();
        let input = TempFile::with_bytes("cpu_clusters.pftrace", &bytes);
        let db = TempFile::new("cpu_clusters.sqlite");
        sextant::import::import_path(input.path(), db.path()).expect("imports");
        let conn = sextant::db::open_read_only(db.path()).expect("opens");
        rows(
            &conn,
            "select group_concat(cluster_id) from (select cluster_id from cpu order by cpu)",
        )
    };
    // Big cpu first, two equal littles, a mid one: capacity ranks, ties share.
    assert_eq!(
        clusters(vec![
            cpu("big", &[500, 3000], Some(1024)),
            cpu("little", &[300, 1000], Some(200)),
            cpu("little", &[300, 1000], Some(200)),
            cpu("mid", &[300, 2000], Some(600)),
        ]),
        table(&[["2,0,0,1"]])
    );
    // One cpu lacks a capacity: highest frequencies rank (tables differ, maxima tie).
    assert_eq!(
        clusters(vec![
            cpu("a", &[300, 1000], None),
            cpu("b", &[500, 2000], None),
            cpu("c", &[400, 1000], None),
            cpu("d", &[300, 1000], Some(5)),
        ]),
        table(&[["0,1,0,0"]])
    );
    // One cpu lists no frequencies (and none has a capacity): a single cluster.
    assert_eq!(
        clusters(vec![cpu("a", &[300, 1000], None), cpu("b", &[], None)]),
        table(&[["0,0"]])
    );
}

#[test]
fn interrupt_handlers_are_slices_on_their_cpu_track() {
    let (conn, _db) = import("irq.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select t.name, t.type, t.cpu, s.ts, s.dur, s.category, s.name,
                    extract_arg(s.arg_set_id, 'irq'), extract_arg(s.arg_set_id, 'ret')
             from slice s join cpu_track t on t.id = s.track_id order by s.ts"
        ),
        table(&[
            [
                "Irq Cpu 1",
                "cpu_irq",
                "1",
                "100001000000",
                "1000000",
                "irq",
                "IRQ (resource1)",
                "100",
                "handled"
            ],
            [
                "Irq Cpu 0",
                "cpu_irq",
                "0",
                "100003000000",
                "-1",
                "irq",
                "IRQ (resource1)",
                "100",
                "NULL"
            ],
        ])
    );
}

#[test]
fn the_oom_killer_victim_gets_an_instant_on_its_thread() {
    let (conn, _db) = import("oom_kill.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select i.ts, i.name, t.tid, p.name from instant i
             join thread_track tt on tt.id = i.track_id join thread t using (utid)
             join process p using (upid)"
        ),
        table(&[["1234", "mem.oom_kill", "1001", "com.google.android.gm"]])
    );
}

#[test]
fn scm_calls_are_thread_slices_and_low_memory_kills_raw_rows_only() {
    // lowmemory_kill is a raw row only (behaviour-android.md), whether its thread is known
    // (200) or not (300). scm ids are `%#x` (0 is `0`).
    let (conn, _db) = import("lmk_scm_call.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.dur, s.name, t.tid, t.name from slice s
             join thread_track tt on tt.id = s.track_id join thread t using (utid)
             order by s.ts"
        ),
        table(&[
            ["3000", "500", "scm id=0x42000001", "100", "a"],
            ["4000", "200", "scm id=0", "100", "a"],
        ])
    );
    assert_eq!(
        rows(&conn, "select count(*) from thread where tid = 300"),
        table(&[["0"]])
    );
}

#[test]
fn every_ftrace_event_names_its_thread_even_one_sextant_does_not_read() {
    // lowmemory_kill is not imported, but pid 99 ran it.
    let (conn, _db) = import("unknown_event_thread.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select tid, is_main_thread from thread where tid = 99"
        ),
        table(&[["99", "NULL"]])
    );
}

#[test]
fn ftrace_stats_are_per_cpu_and_per_machine() {
    let (conn, _db) = import("ftrace_stats_two_machines.pftrace");
    // Each FtraceStats cpu entry writes all 8 counters (absent ones as 0, as the reference
    // reads them): 8 rows per machine.
    assert_eq!(
        rows(
            &conn,
            "select count(*) from stats where name like 'ftrace_cpu_%'"
        ),
        table(&[["16"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select s.name, s.idx, s.value, m.raw_id, s.severity from stats s
             join machine m on m.id = s.machine_id
             where s.name like 'ftrace_cpu_%' and s.value > 0 order by m.raw_id"
        ),
        table(&[
            ["ftrace_cpu_entries_begin", "0", "7", "0", "info"],
            ["ftrace_cpu_entries_begin", "0", "11", "1001", "info"],
        ])
    );
    let (conn, _db) = import("ftrace_abi_error.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select name, value from stats where name like 'ftrace_abi%' or name like 'ftrace_cpu_%'
             order by name"
        ),
        table(&[
            ["ftrace_abi_errors_skipped_zero_data_length", "1"],
            ["ftrace_cpu_bytes_end", "840"],
            ["ftrace_cpu_commit_overrun_end", "0"],
            ["ftrace_cpu_dropped_events_end", "0"],
            ["ftrace_cpu_entries_end", "14"],
            ["ftrace_cpu_now_ts_end", "86557574310000"],
            ["ftrace_cpu_oldest_event_ts_end", "86557552705000"],
            ["ftrace_cpu_overrun_end", "0"],
            ["ftrace_cpu_read_events_end", "199966062"],
        ])
    );
}

#[test]
fn the_latest_ftrace_data_start_is_metadata_per_machine() {
    let (conn, _db) = import("latest_data_start.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select d.int_value, m.raw_id, d.trace_id from metadata d
             join machine m on m.id = d.machine_id
             where d.name = 'ftrace_latest_data_start_ns' order by m.raw_id"
        ),
        table(&[["1000", "0", "0"], ["2000", "1001", "0"]])
    );
}

#[test]
fn memory_counters_and_oom_scores_go_to_the_threads_process_and_span_join_lines_them_up() {
    let (conn, _db) = import("synth_oom.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select t.name, t.type, c.ts, c.value from counter c
             join process_counter_track t on t.id = c.track_id join process p using (upid)
             where p.pid = 2 and c.ts <= 107 order by t.name, c.ts"
        ),
        table(&[
            ["mem.rss.anon", "process_memory", "100", "200"],
            ["mem.rss.file", "process_memory", "100", "100"],
            ["mem.rss.file", "process_memory", "105", "50"],
            ["oom_score_adj", "oom_score_adj", "100", "1000"],
            ["oom_score_adj", "oom_score_adj", "107", "-300"],
        ])
    );
    // Perfetto's span join, as the prompt and `sextant query` take it.
    let script = "
        CREATE VIEW anon AS SELECT c.ts, LEAD(c.ts, 1, c.ts) OVER (PARTITION BY c.track_id ORDER BY c.ts) - c.ts AS dur,
               t.upid, c.value AS anon
        FROM counter c JOIN process_counter_track t ON t.id = c.track_id
        WHERE t.name = 'mem.rss.anon';
        CREATE VIEW oom AS SELECT c.ts, LEAD(c.ts, 1, c.ts) OVER (PARTITION BY c.track_id ORDER BY c.ts) - c.ts AS dur,
               t.upid, c.value AS score
        FROM counter c JOIN process_counter_track t ON t.id = c.track_id
        WHERE t.name = 'oom_score_adj';
        CREATE VIRTUAL TABLE both_ USING span_join(anon PARTITIONED upid, oom PARTITIONED upid);
        SELECT ts, dur, anon, score FROM both_ JOIN process USING (upid)
        WHERE pid = 2 ORDER BY ts LIMIT 3;";
    let mut out = Vec::new();
    sextant::db::run_script(&conn, script, &mut out).expect("the script runs");
    assert_eq!(
        String::from_utf8_lossy(&out),
        "\"ts\",\"dur\",\"anon\",\"score\"\n\
         100,7,200.000000,1000.000000\n\
         107,3,200.000000,-300.000000\n\
         110,10,100.000000,-300.000000\n"
    );
}

#[test]
fn a_blocked_reason_after_the_waking_still_reaches_the_blocked_row() {
    // The kernel reports sched_blocked_reason from the wakeup path, after sched_waking.
    let (conn, _db) = import("blocked_reason_after_waking.systrace");
    assert_eq!(
        rows(
            &conn,
            "select ts, dur, state, io_wait, blocked_function from thread_state order by id"
        ),
        table(&[
            ["10258854000", "10000000000", "Running", "NULL", "NULL"],
            [
                "20258854000",
                "741146000",
                "D",
                "1",
                "worker_thread+0x534/0x820"
            ],
            ["21000000000", "-1", "R", "NULL", "NULL"],
        ])
    );
}

#[test]
fn a_memory_counter_before_the_process_list_goes_to_the_threads_process() {
    // rss_stat from tid 101 at 1000, then a process_tree says 101 is a thread of pid 100.
    let (conn, _db) = import("rss_before_process_tree.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select p.pid, t.name, c.ts from counter c
             join process_counter_track t on t.id = c.track_id join process p using (upid)
             order by c.ts"
        ),
        table(&[
            ["100", "mem.rss.anon", "1000"],
            ["100", "mem.rss.anon", "3000"]
        ])
    );
    // No process was made up for the tid, and the thread is one row.
    assert_eq!(
        rows(
            &conn,
            "select (select count(*) from process where pid = 101),
                    (select count(*) from thread where tid = 101)"
        ),
        table(&[["0", "1"]])
    );
}

#[test]
fn memory_counters_of_threads_bound_late_share_their_processs_one_track_made_at_the_end() {
    // process_stats gives pid 95 a `mem.rss.file` track at 100; rss_stat from tids 96 and
    // 97 (not yet in a process) at 200/210; atrace binds both to pid 95 at 220/230; tid 98
    // is never bound; a cpufreq counter at 240.
    let (conn, _db) = import("rss_thread_bound_late.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select c.ts, c.track_id, t.name, t.type, p.pid from counter c
             join process_counter_track t on t.id = c.track_id join process p using (upid)
             order by c.id"
        ),
        table(&[
            ["100", "0", "mem.rss.file", "process_memory", "95"],
            ["200", "0", "mem.rss.file", "process_memory", "95"],
            ["210", "0", "mem.rss.file", "process_memory", "95"],
        ])
    );
    // The unbound thread's counter: a per-thread fallback track, made when the import
    // ended (after the cpufreq track made during it), and the row keeps its place.
    assert_eq!(
        rows(
            &conn,
            "select c.id, t.type, th.tid,
                    t.id > (select id from cpu_counter_track where name = 'cpufreq')
             from counter c join thread_counter_track t on t.id = c.track_id
             join thread th using (utid)"
        ),
        table(&[["3", "process_memory_thread_fallback", "98", "1"]])
    );
}

#[test]
fn a_compact_waking_does_not_name_the_wakee_but_a_compact_switch_does() {
    // Compact switches to 50 `alpha` and 51 `beta`; a compact waking of 52 with comm
    // `alpha` (kept in its raw row only).
    let (conn, _db) = import("compact_waking_keeps_names.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select tid, name from thread where tid > 0 order by tid"
        ),
        table(&[["50", "alpha"], ["51", "beta"], ["52", "NULL"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select display_value from ftrace_event join args using (arg_set_id)
             where ftrace_event.name = 'sched_waking' and key = 'comm'"
        ),
        table(&[["alpha"]])
    );
}

#[test]
fn cpu_numbers_past_any_range_still_get_rows_of_their_own() {
    let (conn, _db) = import("huge_cpu_numbers.systrace");
    assert_eq!(
        rows(
            &conn,
            "select cpu, (select count(*) from cpu) from cpu order by cpu"
        ),
        table(&[["5000", "2"], ["6000", "2"]])
    );
    assert_eq!(
        rows(&conn, "select count(distinct ucpu) from sched"),
        table(&[["2"]])
    );
}

#[test]
fn syscalls_become_slices_named_for_the_machines_architecture() {
    let (conn, _db) = import("sys_syscall.pftrace");
    // aarch64 (from SystemInfo's utsname): syscall 0 is io_setup, 1 io_destroy.
    assert_eq!(
        rows(
            &conn,
            "select slice.ts, dur, slice.name, t.tid, extract_arg(slice.arg_set_id, 'ret')
             from slice join thread_track tt on slice.track_id = tt.id join thread t using (utid)
             order by slice.ts"
        ),
        table(&[
            ["100", "6", "sys_io_setup", "1", "0"],
            ["105", "5", "sys_io_destroy", "2", "0"],
        ])
    );
}

#[test]
fn syscalls_of_an_unknown_architecture_are_counted_not_imported() {
    // The same trace without its SystemInfo packet (written with Perfetto's Python
    // bindings): the numbers cannot be named.
    let (conn, _db) = import("sys_syscall_no_arch.pftrace");
    assert_eq!(rows(&conn, "select count(*) from slice"), table(&[["0"]]));
    assert_eq!(
        rows(
            &conn,
            "select severity, value from sextant_stats where name = 'syscall_unknown'"
        ),
        table(&[["data_loss", "4"]])
    );
}

#[test]
fn syscall_arguments_and_return_values_become_args() {
    // The same trace written for x86_64 (with Perfetto's Python bindings), where syscall 59
    // is execve, with two arguments on its sys_enter and -2 (ENOENT) on its sys_exit.
    let (conn, _db) = import("sys_syscall_x86_64_args.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select s.name, a.flat_key, a.key, a.int_value, a.value_type
             from slice s join args a using (arg_set_id) where s.ts = 100 order by a.key"
        ),
        table(&[
            ["sys_execve", "args", "args[0]", "4096", "uint"],
            [
                "sys_execve",
                "args",
                "args[1]",
                "-9223372036854775803",
                "uint"
            ],
            ["sys_execve", "ret", "ret", "-2", "int"],
        ])
    );
}

#[test]
fn every_ftrace_event_has_a_raw_row_with_typed_args_and_to_ftrace_prints_it() {
    // kfree / kmalloc: events Sextant models nowhere else, with unsigned 64-bit values.
    let (conn, _db) = import("kmalloc_unsigned.pftrace");
    assert_eq!(
        rows(&conn, "select to_ftrace(id) from ftrace_event order by id"),
        table(&[
            ["       <unknown>-10    (   10) [000] .... 0.000000: kfree: call_site=16 ptr=32"],
            ["       <unknown>-10    (   10) [000] .... 0.000000: kfree: call_site=18446744073709551600 ptr=18446744073709551584"],
            ["       <unknown>-10    (   10) [000] .... 0.000000: kmalloc: bytes_alloc=32 bytes_req=16 call_site=18446744073709551600 gfp_flags=GFP_NOWAIT ptr=18446744073709551584"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select e.name, a.key, a.value_type, a.display_value
             from raw e join args a using (arg_set_id) where e.id = 2 order by a.id"
        ),
        table(&[
            ["kmalloc", "bytes_alloc", "uint", "32"],
            ["kmalloc", "bytes_req", "uint", "16"],
            ["kmalloc", "call_site", "uint", "18446744073709551600"],
            ["kmalloc", "gfp_flags", "uint", "0"],
            ["kmalloc", "ptr", "uint", "18446744073709551584"],
        ])
    );
}

#[test]
fn scheduler_raw_rows_carry_every_field_and_symbolized_callers() {
    let (conn, _db) = import("sched_blocked_reason_symbolized.pftrace");
    let lines = rows(&conn, "select to_ftrace(id) from ftrace_event order by id");
    assert_eq!(
        lines[..2],
        table(&[
            ["          <idle>-0     (-----) [001] .... 0.000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=0 prev_state=D ==> next_comm=100 next_pid=100 next_prio=0"],
            ["          <idle>-0     (-----) [002] .... 0.000000: sched_switch: prev_comm=swapper/2 prev_pid=0 prev_prio=0 prev_state=D ==> next_comm=102 next_pid=102 next_prio=0"],
        ])[..]
    );
    // A caller interned as a kernel symbol is named; one that is not stays a number.
    let blocked: Vec<&str> = lines
        .iter()
        .map(|l| l[0].as_str())
        .filter(|l| l.contains("sched_blocked_reason"))
        .collect();
    assert!(blocked
        .iter()
        .any(|l| l.ends_with("pid=102 iowait=1 caller=filemap_fault")));
    assert!(blocked
        .iter()
        .any(|l| l.ends_with("pid=101 iowait=0 caller=2")));
    // A switch's raw row has all seven fields even where the event left some unset.
    assert_eq!(
        rows(
            &conn,
            "select count(*) from ftrace_event e join args a using (arg_set_id)
             where e.id = 0"
        ),
        table(&[["7"]])
    );
}

#[test]
fn compact_sched_wakings_take_the_task_running_then_and_switches_name_prev_from_the_thread() {
    // cpu 0, one bundle: compact switches at 1.000001 (primes: 101 `Game` runs), 2 (→ idle),
    // 3 (→ 101 `Game`), 4 (→ idle); 101 renames itself `Renamed` at 1.0000012 (a full
    // event); wakings at 0.9999995 (before any switch on the cpu) and 1.0000015 (while 101
    // runs). As Trace Processor parses them in time order: the early waking is skipped
    // (no row, its wakee not created), the other's waker is 101, not the task the bundle's
    // last switch put on; a compact switch's prev_comm is the task's name in the thread
    // table (the rename, `swapper` for the idle task), and a compact waking renames nobody.
    let (conn, _db) = import("compact_sched_waker.pftrace");
    assert_eq!(
        rows(&conn, "select to_ftrace(id) from ftrace_event order by id"),
        table(&[
            ["            Game-101   (-----) [000] .... 1.000001: task_rename: pid=101 oldcomm=Game newcomm=Renamed"],
            ["            Game-101   (-----) [000] .... 1.000001: sched_waking: comm=Waker pid=103 prio=120 target_cpu=000"],
            ["            Game-101   (-----) [000] .... 1.000002: sched_switch: prev_comm=Renamed prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"],
            ["          <idle>-0     (-----) [000] .... 1.000003: sched_switch: prev_comm=swapper prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=Game next_pid=101 next_prio=120"],
            ["            Game-101   (-----) [000] .... 1.000004: sched_switch: prev_comm=Game prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select s.ts, t.tid, s.state, w.tid from thread_state s join thread t using (utid)
             left join thread w on w.utid = s.waker_utid where t.tid = 103"
        ),
        table(&[["1000001500", "103", "R", "101"]])
    );
    assert_eq!(
        rows(&conn, "select tid, name from thread order by utid"),
        table(&[["0", "swapper"], ["101", "Game"], ["103", "NULL"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select name, value from stats where name like 'compact_sched_%_skipped' order by 1"
        ),
        table(&[
            ["compact_sched_switch_skipped", "1"],
            ["compact_sched_waking_skipped", "1"]
        ])
    );
}

#[test]
fn wakings_of_threads_not_blocked_are_spurious_and_task_states_keep_three_characters() {
    let (conn, _db) = import("wakings_and_states.systrace");
    // A waking of a runnable (100 at 1.00015) or running (200) thread leaves the rows alone
    // and is filed in `spurious_sched_wakeup`, naming the wakee's row then.
    assert_eq!(
        rows(
            &conn,
            "select w.ts, t.tid, s.state, s.ts, k.tid, w.irq_context
             from spurious_sched_wakeup w join thread t using (utid)
             join thread_state s on s.id = w.thread_state_id
             join thread k on k.utid = w.waker_utid order by w.id"
        ),
        table(&[
            ["1000150000", "100", "R", "1000100000", "200", "NULL"],
            ["1000159999", "200", "Running", "1000000000", "200", "NULL"],
        ])
    );
    // A blocked reason whose iowait is not an integer does nothing (not even make its
    // thread); a state of more than three characters is cut, as the reference's is.
    assert_eq!(
        rows(
            &conn,
            "select s.ts, t.tid, s.state, s.io_wait, s.blocked_function
             from thread_state s join thread t using (utid) order by s.id"
        ),
        table(&[
            ["1000000000", "100", "D", "1", "first_fn+0x10/0x20"],
            ["1000000000", "200", "Running", "NULL", "NULL"],
            ["1000100000", "100", "R", "NULL", "NULL"],
            ["1000200000", "200", "T|t", "NULL", "NULL"],
            ["1000200000", "100", "Running", "NULL", "NULL"],
        ])
    );
    assert_eq!(
        rows(&conn, "select count(*) from thread where tid = 300"),
        table(&[["0"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select end_state from sched where utid = (select utid from thread where tid = 200)"
        ),
        table(&[["T|t"]])
    );
}

/// behaviour-parsers §4.3: ftrace events from before tracing started are dropped. The
/// reference reads the service event while tokenizing and drops at parse time, after the
/// file is sorted, so a `tracing_started` packet written after an older ftrace bundle still
/// drops that bundle's early events (here the switch at 100; tracing started at 110).
#[test]
fn ftrace_events_before_a_later_written_tracing_start_are_dropped() {
    let (conn, _db) = import("tracing_started_after_data.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select ts, dur, tid from sched join thread using (utid) order by ts"
        ),
        table(&[["120", "10", "1"], ["130", "-1", "2"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select value from stats where name = 'ftrace_packet_before_tracing_start'"
        ),
        table(&[["1"]])
    );
    assert_eq!(
        rows(&conn, "select count(*) from ftrace_event"),
        table(&[["2"]])
    );
}

/// Bundles stamped with ftrace's `global` clock (old kernels) are related to boot time by
/// the (ftrace_timestamp, boot_timestamp) reading each carries, as the reference's
/// FtraceTokenizer does (a clock of the sequence, id 64); a `local` clock cannot be related
/// to anything and the import fails.
#[test]
fn global_ftrace_clock_bundles_convert_through_their_snapshots() {
    let (conn, _db) = import("global_clock.pftrace");
    assert_eq!(
        rows(&conn, "select ts, dur, name from slice order by ts"),
        table(&[["5100", "200", "x"], ["6600", "0", "y"]])
    );
    // Those readings relate clocks but are no ClockSnapshot packet: they claim no trace
    // time (behaviour-merging.md §3: only a proto's ClockSnapshot claims).
    assert_eq!(
        rows(
            &conn,
            "select count(*) from metadata where name = 'trace_time_clock_id'"
        ),
        table(&[["0"]])
    );
    let trace = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/ftrace/local_clock.pftrace");
    let db = common::TempFile::new("local_clock.sqlite");
    let err = sextant::import::import_path(&trace, db.path())
        .expect_err("a local ftrace clock fails the import");
    assert!(
        err.to_string()
            .contains("Unable to parse ftrace packets with local clock"),
        "{err}"
    );
}

#[test]
fn rss_stat_members_past_unreclaimable_are_mem_unknown() {
    // Members 4 (unreclaimable), then 5, 6 and 40: every member the reference does not
    // name is `mem.unknown`; none is dropped for its member (behaviour-systrace-events.md §4, stats row 98).
    let (conn, _db) = import("rss_stat_members.systrace");
    assert_eq!(
        rows(
            &conn,
            "select c.ts, t.name from counter c join counter_track t on t.id = c.track_id
             order by c.ts"
        ),
        table(&[
            ["100000000000", "mem.unreclaimable"],
            ["100000100000", "mem.unknown"],
            ["100000200000", "mem.unknown"]
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select name, value from stats where name like 'rss_stat%' and value > 0"
        ),
        // Member 40's size is negative: that is what drops it.
        table(&[["rss_stat_negative_size", "1"]])
    );
}

#[test]
fn oom_score_adj_update_values_are_read_as_int16() {
    let (conn, _db) = import("oom_score_adj_int16.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select c.ts, c.value from counter c join counter_track t on t.id = c.track_id
             where t.name = 'oom_score_adj' order by c.ts"
        ),
        table(&[["100", "-900"], ["200", "4464"]])
    );
}

#[test]
fn mali_mcu_states_follow_one_another_on_one_global_track() {
    // Each MCU power-state event ends the state before and begins its own; the last stays
    // open (MaliGpuEventTracker; behaviour-stats.md row 282 mali_unknown_mcu_state_id).
    let (conn, _db) = import("mali_mcu_state.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.dur, s.name, s.depth, t.name, t.type
             from slice s join track t on t.id = s.track_id order by s.ts"
        ),
        table(&[
            [
                "1000",
                "1000",
                "OFF",
                "0",
                "Mali MCU state",
                "mali_mcu_state"
            ],
            [
                "2000",
                "1000",
                "PEND_ON_RELOAD",
                "0",
                "Mali MCU state",
                "mali_mcu_state"
            ],
            ["3000", "-1", "ON", "0", "Mali MCU state", "mali_mcu_state"],
        ])
    );
    assert_eq!(
        rows(&conn, "select count(*) from stats where value > 0"),
        table(&[["0"]])
    );
}
