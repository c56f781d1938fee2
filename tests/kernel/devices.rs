//! Device and driver events of the kernel test binary (`tests/kernel.rs`): GPU, video, UFS,
//! thermal, devfreq, block I/O, interrupts, pKVM and vendor driver markers.

use super::{import, COUNTERS, SLICES};
use crate::common::{rows, table};

#[test]
fn gpu_and_video_devices_from_ftrace() {
    let (conn, _db) = import("device_events.pftrace");
    // virtio-gpu: commands from queue to answer, free slots, and the latency of the
    // command without a fence only.
    assert_eq!(
        rows(&conn, COUNTERS),
        table(&[
            ["100", "10", "Virtgpu Control Num Free", "virtgpu_num_free"],
            ["150", "9", "Virtgpu Control Num Free", "virtgpu_num_free"],
            ["400", "300", "Virtgpu Control Latency", "virtgpu_latency"],
            ["400", "10", "Virtgpu Control Num Free", "virtgpu_num_free"],
            ["600", "11", "Virtgpu Control Num Free", "virtgpu_num_free"],
            [
                "1100",
                "3",
                "io.ufs.clkgating (OFF:0/REQ_OFF/REQ_ON/ON:3)",
                "ufs_clkgating"
            ],
        ])
    );
    assert_eq!(
        rows(&conn, SLICES),
        table(&[
            [
                "100",
                "300",
                "RESOURCE_FLUSH",
                "Virtgpu Control Queue",
                "virtgpu_queue_event"
            ],
            [
                "150",
                "450",
                "SUBMIT_3D",
                "Virtgpu Control Queue",
                "virtgpu_queue_event"
            ],
            [
                "700",
                "0",
                "VIDIOC_QBUF minor=3 seq=8 type=1 index=1",
                "NULL",
                "thread_execution"
            ],
            [
                "800",
                "0",
                "VIDIOC_DQBUF minor=3 seq=8 type=1 index=1",
                "NULL",
                "thread_execution"
            ],
            ["900", "50", "0xffff1000", "NULL", "thread_execution"],
            // The idle thread's functions go to a track per cpu.
            [
                "960",
                "10",
                "0xffff2000",
                "swapper0 -funcgraph",
                "cpu_funcgraph"
            ],
            [
                "1000",
                "0",
                "127.0.0.1:80 -> 192.168.1.2:443",
                "TCP Retransmit Skb",
                "net_tcp_retransmit_skb"
            ],
        ])
    );
    // A dequeued buffer is reached by a flow from its queue.
    assert_eq!(
        rows(
            &conn,
            "select o.name, i.name from flow f join slice o on o.id = f.slice_out
             join slice i on i.id = f.slice_in"
        ),
        table(&[[
            "VIDIOC_QBUF minor=3 seq=8 type=1 index=1",
            "VIDIOC_DQBUF minor=3 seq=8 type=1 index=1"
        ]])
    );
    assert_eq!(
        rows(
            &conn,
            "select extract_arg(arg_set_id, 'type'), extract_arg(arg_set_id, 'flags')
             from slice where category = 'Video 4 Linux 2' order by ts"
        ),
        table(&[
            ["VIDEO_CAPTURE", "QUEUED|TIMESTAMP_UNKNOWN|TSTAMP_SRC_EOF"],
            ["VIDEO_CAPTURE", "DONE|TIMESTAMP_UNKNOWN|TSTAMP_SRC_EOF"],
        ])
    );
    // Adreno batches run on the GPU's clock: placed through the sync point, on a track
    // named after the process that queued them.
    let (conn, _db) = import("adreno_cmdbatch.pftrace");
    assert_eq!(
        rows(&conn, SLICES),
        table(&[[
            "2000000000",
            "1000000000",
            "GPU",
            "GPU com.example.app (Ctx=1, Prio=0)",
            "adreno_gpu_cmdbatch"
        ]])
    );
    // F2FS statistics: a counter per figure and device.
    let (conn, _db) = import("f2fs_iostat.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select count(distinct t.name), count(*) from counter c
             join counter_track t on t.id = c.track_id where t.type = 'f2fs_iostat'"
        ),
        table(&[["44", "110"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select c.value from counter c join counter_track t on t.id = c.track_id
             where t.name = 'f2fs_iostat.[254:32].read_app_buffered' order by c.ts"
        ),
        table(&[["7821963"], ["4552114"]])
    );
}

/// The systrace line parser's rules (reference/behaviour-systrace-events.md): `<...>`
/// tasks keep their thread's name, atrace markers bind threads to processes, `print:`
/// payloads that are not markers, unknown phases, flags longer than five characters and
/// garbage lines are failures, clock syncs are not, unlisted events change nothing.

#[test]
fn mali_queue_events_and_interrupts() {
    let (conn, _db) = import("mali.pftrace");
    assert_eq!(
        rows(&conn, SLICES),
        table(&[
            ["100", "0", "mali_KCPU_CQS_SET", "NULL", "thread_execution"],
            [
                "200",
                "100",
                "mali_KCPU_CQS_WAIT",
                "NULL",
                "thread_execution"
            ],
            [
                "400",
                "0",
                "mali_KCPU_FENCE_SIGNAL",
                "NULL",
                "thread_execution"
            ],
            [
                "500",
                "100",
                "mali_KCPU_FENCE_WAIT",
                "NULL",
                "thread_execution"
            ],
            [
                "700",
                "50",
                "mali_CSF_INTERRUPT",
                "Mali Irq Cpu 2",
                "cpu_mali_irq"
            ],
        ])
    );
}

#[test]
fn runtime_power_states_of_a_device() {
    let (conn, _db) = import("rpm_status.pftrace");
    assert_eq!(
        rows(&conn, SLICES),
        table(&[
            ["100", "100", "Resuming", "ufs0", "linux_rpm"],
            ["200", "100", "Active", "ufs0", "linux_rpm"],
            // Suspended (at 400) ends Suspending and makes no slice.
            ["300", "100", "Suspending", "ufs0", "linux_rpm"],
            ["500", "-1", "Active", "ufs0", "linux_rpm"],
        ])
    );
}

/// Kernel drivers' markers (SDE, G2D, Mali, DPU, `zero`) as the reference's
/// ParseKernelTracingMarkWrite / ParseZeroEvent read them: type `I` is an instant; a type
/// outside B/E/C/I, a DPU/G2D/Mali marker without a type, an SDE marker with neither a type
/// nor `trace_begin`, and a `zero` without a phase bit are `systrace_parse_failure`s; the
/// tgid is the payload's `pid`, so a marker without one leaves its thread unbound.

#[test]
fn driver_markers_read_types_as_the_reference() {
    let (conn, _db) = import("driver_markers.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.dur, s.name, t.tid, coalesce(t.upid, 'unbound') from slice s
             join thread_track tt on s.track_id = tt.id join thread t using (utid)
             order by s.ts"
        ),
        table(&[
            ["100", "20", "sde_b", "403", "1"],
            ["110", "0", "sde_i", "403", "1"],
            ["160", "0", "mali_i", "404", "2"],
            ["170", "10", "dpu_nopid", "405", "unbound"],
            ["200", "10", "zb", "406", "3"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select value from stats where name = 'systrace_parse_failure'"
        ),
        table(&[["4"]])
    );
}

/// A counter marker without a process (kernel g2d/dpu markers with payload pid 0, or
/// `C|0|…`) is a counter of the writing thread, not of process 0 (the reference's
/// kernel_tmw_counter_thread_counter_and_track).
#[test]
fn counter_markers_without_a_process_are_thread_counters() {
    let (conn, _db) = import("kernel_counter_markers_without_pid.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select c.ts, t.name, c.value, th.tid from counter c
             join thread_counter_track t on c.track_id = t.id join thread th using (utid)
             order by c.ts"
        ),
        table(&[
            ["795572805481", "g2d_frame_hw#15", "0", "237"],
            ["795620516581", "g2d_frame_sw#15", "1", "237"],
            ["795623633810", "g2d_frame_hw#15", "0", "237"],
            ["795623633900", "printed", "5", "238"],
            ["795623633950", "dpu_ctr", "3", "239"],
        ])
    );
    assert_eq!(
        rows(&conn, "select distinct type from thread_counter_track"),
        table(&[["atrace_counter"]])
    );
    assert_eq!(
        rows(&conn, "select count(*) from process_counter_track"),
        table(&[["0"]])
    );
}

/// Camera (LWIS), display panel and Samsung markers go through the same
/// ParseKernelTracingMarkWrite as the DPU ones: LWIS names them by `func_name` (its `value`
/// is 64-bit), the panel by `name`, Samsung by `trace_name` with `trace_type`; the payload's
/// `pid` is the tgid; a marker without a type is a `systrace_parse_failure`.

#[test]
fn lwis_panel_and_samsung_markers_are_kernel_trace_markers() {
    let (conn, _db) = import("lwis_panel_markers.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.dur, s.name, t.tid, p.pid from slice s
             join thread_track tt on s.track_id = tt.id join thread t using (utid)
             join process p using (upid) order by s.ts"
        ),
        table(&[
            ["100", "30", "lwis_begin", "501", "500"],
            ["200", "10", "panel_b", "601", "600"],
            ["300", "5", "sam_b", "701", "700"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select c.ts, t.name, c.value, p.pid from counter c
             join process_counter_track t on c.track_id = t.id join process p using (upid)
             order by c.ts"
        ),
        table(&[
            ["140", "lwis_ctr", "5000000000", "500"],
            ["220", "panel_ctr", "3", "600"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select value from stats where name = 'systrace_parse_failure'"
        ),
        table(&[["3"]])
    );
}

/// behaviour-process-tracking §5: a producer inside a pid namespace describes its process
/// and threads with namespace-local ids; the descriptor packet's trusted pid and the process
/// tree's `nspid` / `nstid` translate them to the root-level process and thread (which the
/// process tree already made), so no pid-5 process or tid-6 thread appears. An `nstid` of a
/// process without `nspid` is logged.

#[test]
fn devfreq_frequencies_are_counters_named_after_the_device() {
    // `devfreq_mif` → `mif Frequency`; the dimension keeps the full device name.
    let (conn, _db) = import("devfreq.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select c.ts, c.value, t.name, t.type,
                    extract_arg(t.dimension_arg_set_id, 'linux_device')
             from counter c join counter_track t on c.track_id = t.id order by c.ts"
        ),
        table(&[
            [
                "1000",
                "2000000",
                "mif Frequency",
                "linux_device_frequency",
                "devfreq_mif"
            ],
            [
                "2000",
                "3000000",
                "mif Frequency",
                "linux_device_frequency",
                "devfreq_mif"
            ],
            [
                "3000",
                "500",
                "gpu Frequency",
                "linux_device_frequency",
                "gpu"
            ],
        ])
    );
}

#[test]
fn gpu_work_periods_are_slices_named_by_their_active_share_per_gpu_and_uid() {
    let (conn, _db) = import("gpu_work_period.pftrace");
    let got = rows(
        &conn,
        "select s.ts, s.dur, s.name, t.name, t.type,
                extract_arg(t.dimension_arg_set_id, 'gpu_id'),
                extract_arg(t.dimension_arg_set_id, 'uid')
         from slice s join track t on s.track_id = t.id order by s.ts, s.dur",
    );
    let kind = "android_gpu_work_period";
    assert_eq!(
        got,
        table(&[
            ["100", "100", "%50.00", "GPU Work Period", kind, "0", "1000"],
            [
                "100",
                "200",
                "%100.00",
                "GPU Work Period",
                kind,
                "1",
                "10001"
            ],
            [
                "300",
                "100",
                "%100.00",
                "GPU Work Period",
                kind,
                "0",
                "1000"
            ],
        ])
    );
    // The same GPU and uid share a track; an end before the start is counted, not kept.
    let tracks = rows(&conn, "select count(distinct track_id) from slice");
    assert_eq!(tracks, table(&[["2"]]));
    let stat = rows(
        &conn,
        "select value from stats where name = 'gpu_work_period_negative_duration'",
    );
    assert_eq!(stat, table(&[["1"]]));
}

/// Trace Processor's ParseLwisTracingMarkWrite / ParseSamsungTracingMarkWrite: an LWIS
/// marker is named by its `func_name`, and both need a type (else
/// `systrace_parse_failure`); the tgid is the payload's `pid`.

#[test]
fn lwis_and_samsung_markers_are_atrace_markers() {
    // Written by tools/gen_android_family_traces.py.
    let (conn, _db) = import("lwis_samsung_markers.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.dur, s.name, t.tid, p.pid from slice s
             join thread_track tt on s.track_id = tt.id join thread t using (utid)
             join process p using (upid) order by s.ts"
        ),
        table(&[
            ["900", "50", "lwis_func", "14", "10"],
            ["970", "10", "sam", "15", "10"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select t.name, c.ts, c.value from counter c join counter_track t on c.track_id = t.id"
        ),
        table(&[["lwis_counter", "955", "12"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select value from stats where name = 'systrace_parse_failure'"
        ),
        table(&[["2"]])
    );
}

/// Trace Processor's ParseKgslGpuFreq: `kgsl_gpu_frequency` reports kHz / 1000 and lands,
/// scaled back, on the same `gpufreq` track as `gpu_frequency` for that GPU.

#[test]
fn kgsl_gpu_frequency_is_scaled_onto_the_gpufreq_track() {
    // heldout-gpu2/kgsl.txt: two kgsl events (gpu 0 and 1), then gpu_frequency on gpu 0.
    let (conn, _db) = import("kgsl_gpu_frequency.pftrace");
    let got = rows(
        &conn,
        "select c.ts, c.value, t.name, extract_arg(t.dimension_arg_set_id, 'gpu'), t.id
         from counter c join counter_track t on c.track_id = t.id order by c.ts",
    );
    assert_eq!(
        got,
        table(&[
            ["100", "585000000", "gpufreq", "0", "0"],
            ["200", "300000000", "gpufreq", "1", "1"],
            ["300", "400000", "gpufreq", "0", "0"],
        ])
    );
}

/// An atrace `S` while its cookie's slice is open adds nothing and, as Trace Processor's
/// saturating unnestable nesting, leaves the slot's open count at 1: after one `F` the
/// slot is free again, so a new cookie takes the first slot (idx 0), not the second.

#[test]
fn pkvm_hypervisor_slices_dcvsh_limits_and_ufs_clock_gating() {
    let (conn, _db) = import("hypervisor_cpu_limits.pftrace");
    // hyp_enter/hyp_exit bound `hyp` slices on the cpu's track; host_* events add the
    // reason to the open one (none open on cpu 2 at 300: nothing).
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.dur, s.category, s.name, t.cpu, t.name, t.type,
                    (select group_concat(key || '=' || display_value, ' ') from args a
                     where a.arg_set_id = s.arg_set_id)
             from slice s join cpu_track t on s.track_id = t.id order by s.ts"
        ),
        table(&[
            [
                "100",
                "10",
                "pkvm_hyp",
                "hyp",
                "2",
                "pKVM Hypervisor CPU 2",
                "pkvm_hypervisor",
                "hyp_enter_reason=host_hcall id=7 invalid=0",
            ],
            [
                "150",
                "-1",
                "pkvm_hyp",
                "hyp",
                "0",
                "pKVM Hypervisor CPU 0",
                "pkvm_hypervisor",
                "hyp_enter_reason=host_mem_abort esr=5 addr=4096",
            ],
            [
                "200",
                "30",
                "pkvm_hyp",
                "hyp",
                "2",
                "pKVM Hypervisor CPU 2",
                "pkvm_hypervisor",
                "hyp_enter_reason=host_smc id=9 forwarded=1",
            ],
        ])
    );
    // The standard library's view of them (module pkvm.hypervisor).
    assert_eq!(
        rows(
            &conn,
            "select cpu, ts, dur, reason from pkvm_hypervisor_events order by ts"
        ),
        table(&[
            ["2", "100", "10", "host_hcall"],
            ["0", "150", "-1", "host_mem_abort"],
            ["2", "200", "30", "host_smc"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select c.ts, t.name, t.type, c.value from counter c join counter_track t
             on c.track_id = t.id order by c.ts"
        ),
        table(&[
            [
                "400",
                "Cpu 3 Max Freq Limit",
                "cpu_max_frequency_limit",
                "1200000"
            ],
            [
                "500",
                "io.ufs.clkgating (OFF:0/REQ_OFF/REQ_ON/ON:3)",
                "ufs_clkgating",
                "3"
            ],
            [
                "510",
                "io.ufs.clkgating (OFF:0/REQ_OFF/REQ_ON/ON:3)",
                "ufs_clkgating",
                "1"
            ],
        ])
    );
}

#[test]
fn thermal_exynos_high_overhead_and_unknown_zones() {
    let (conn, _db) = import("thermal_exynos_zones.pftrace");
    // Bulk at the firmware's time, high-overhead at the event's; unknown zones counted.
    assert_eq!(
        rows(
            &conn,
            "select c.ts, t.name, c.value from counter c join counter_track t
             on c.track_id = t.id order by c.ts"
        ),
        table(&[
            ["3000", "MID Temperature", "50"],
            ["5000", "MID Temperature", "35"]
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select value from stats where name = 'ftrace_thermal_exynos_acpm_unknown_tz_id'"
        ),
        table(&[["2"]])
    );
}

#[test]
fn block_ios_in_flight_together_take_separate_lanes() {
    let (conn, _db) = import("block_io_in_flight.pftrace");
    // Each I/O is a slice from start to done whatever else is in flight; a device's lanes
    // are reused once free.
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.dur, s.name, extract_arg(t.dimension_arg_set_id, 'block_device'),
                    extract_arg(t.dimension_arg_set_id, 'track_compressor_idx'),
                    extract_arg(s.arg_set_id, 'sector')
             from slice s join track t on s.track_id = t.id and t.type = 'block_io'
             order by s.ts"
        ),
        table(&[
            ["1000", "2000", "block_io", "45824", "0", "100"],
            ["2000", "2000", "block_io", "45824", "1", "200"],
            ["5000", "1000", "block_io", "7", "0", "1"],
            ["7000", "500", "block_io", "45824", "0", "300"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select count(*) from stats where name like 'slice_drop%' and value > 0"
        ),
        table(&[["0"]])
    );
}

#[test]
fn interrupts_are_cpu_slices_and_unknown_softirq_vectors_make_none() {
    let (conn, _db) = import("interrupts.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.dur, s.category, s.name, t.name,
                    (select group_concat(key || '=' || display_value, ' ') from args a
                     where a.arg_set_id = s.arg_set_id)
             from slice s join cpu_track t on s.track_id = t.id order by s.ts"
        ),
        table(&[
            [
                "1000",
                "100",
                "irq",
                "IRQ (eth0)",
                "Irq Cpu 1",
                "irq=5 ret=handled"
            ],
            ["2000", "300", "softirq", "NET_RX", "SoftIrq Cpu 1", "vec=3"],
        ])
    );
    // Every event keeps its raw row.
    assert_eq!(
        rows(&conn, "select count(*) from ftrace_event"),
        table(&[["6"]])
    );
}
