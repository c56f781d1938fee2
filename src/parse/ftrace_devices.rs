//! Device events of the one ftrace handler, as Trace Processor's ftrace parser and its
//! device trackers read them: GPU memory and frequency, Adreno command batches (placed by
//! the model, `model/gpu_kernel.rs`), V4L2 / videobuf2 buffers, virtio-gpu command queues,
//! GPU work periods, Mali KCPU queue and CSF interrupt events, F2FS I/O statistics, UFS clock gating,
//! ChromeOS EC sensor samples, function-graph tracing, TCP retransmits and NAPI GRO
//! receives, devices' runtime power states, suspend/resume phases and wakeup sources
//! (paired by the model, `model/power.rs`). Hands on counters, slices and kernel ops.

use super::ftrace_events::{
    arg_set, cookie_slice, global_set, instant, kernel_op, slice, thread_track, Blueprint, Fields,
    Origin,
};
use crate::ir::*;

/// Handles the event if it is one of this module's kinds.
pub(crate) fn handle(
    sink: &mut Sink,
    o: &Origin,
    name: &str,
    f: &Fields,
    symbol: &dyn Fn(u64) -> Option<StrId>,
) -> bool {
    let done = match name {
        "gpu_mem_total" => gpu_mem_total(sink, o, f),
        "gpu_frequency" => gpu_frequency(sink, o, f, "state", 1.0),
        // KGSL reports the frequency divided by 1000; the reference scales it back.
        "kgsl_gpu_frequency" => gpu_frequency(sink, o, f, "gpu_freq", 1000.0),
        "gpu_work_period" => gpu_work_period(sink, o, f),
        "kgsl_adreno_cmdbatch_queued"
        | "kgsl_adreno_cmdbatch_sync"
        | "kgsl_adreno_cmdbatch_retired" => adreno(sink, o, name, f),
        "v4l2_qbuf" | "v4l2_dqbuf" | "vb2_v4l2_buf_queue" | "vb2_v4l2_buf_done"
        | "vb2_v4l2_qbuf" | "vb2_v4l2_dqbuf" => v4l2(sink, o, name, f),
        "virtio_gpu_cmd_queue" | "virtio_gpu_cmd_response" => virtio_gpu(sink, o, name, f),
        "f2fs_iostat" => f2fs(sink, o, f, "f2fs_iostat", F2FS_IOSTAT),
        "f2fs_iostat_latency" => f2fs(sink, o, f, "f2fs_iostat_latency", F2FS_LATENCY),
        "ufshcd_clk_gating" => ufs_clk_gating(sink, o, f),
        "cros_ec_sensorhub_data" => cros_ec(sink, o, f),
        "funcgraph_entry" | "funcgraph_exit" => funcgraph(sink, o, name, f, symbol),
        "tcp_retransmit_skb" => tcp_retransmit(sink, o, f),
        "napi_gro_receive_entry" | "napi_gro_receive_exit" => napi_gro(sink, o, name, f),
        "mali_mali_KCPU_CQS_SET"
        | "mali_mali_KCPU_CQS_WAIT_START"
        | "mali_mali_KCPU_CQS_WAIT_END"
        | "mali_mali_KCPU_FENCE_SIGNAL"
        | "mali_mali_KCPU_FENCE_WAIT_START"
        | "mali_mali_KCPU_FENCE_WAIT_END" => mali_kcpu(sink, o, name),
        "mali_mali_CSF_INTERRUPT_START" | "mali_mali_CSF_INTERRUPT_END" => {
            mali_csf_interrupt(sink, o, name, f)
        }
        _ if name.starts_with("mali_mali_PM_MCU_") => mali_mcu_state(sink, o, name),
        "rpm_status" => rpm_status(sink, o, f),
        "suspend_resume" => suspend_resume(sink, o, f),
        "suspend_resume_minimal" => suspend_resume_minimal(sink, o, f),
        "wakeup_source_activate" | "wakeup_source_deactivate" => {
            let name_id = f.str_id(sink, "name").unwrap_or(NULL_STR);
            let op = KernelOp::Wakelock {
                name: name_id,
                activate: name == "wakeup_source_activate",
            };
            kernel_op(sink, o, op);
            Some(())
        }
        _ => return false,
    };
    let _ = done;
    true
}

/// `gpu_mem_total`: the GPU memory of the machine (pid 0) or of a process, on the same
/// tracks as the `gpu_mem_total_event` packet. A process's is dropped by the model when
/// the pid is not a known thread (kernel workers report it after the process died).
fn gpu_mem_total(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let gpu = u32::try_from(f.uint(sink, "gpu_id").unwrap_or(0)).unwrap_or(u32::MAX);
    let pid = f.int(sink, "pid").unwrap_or(0);
    let size = f.uint(sink, "size").unwrap_or(0);
    if pid == 0 {
        let dims = [("gpu", ArgValue::Int(i64::from(gpu)))];
        let bp = Blueprint {
            dims: &dims,
            unit: Some("bytes"),
            ..Blueprint::counter("gpu_memory", "GPU Memory")
        };
        bp.counter_at(sink, o, size as f64, NO_ARGS);
    } else {
        kernel_op(sink, o, KernelOp::GpuMemTotal { pid, gpu, size });
    }
    Some(())
}

/// `gpu_frequency`: a GPU's frequency, on the same track as the GPU frequency packets.
fn gpu_frequency(sink: &mut Sink, o: &Origin, f: &Fields, key: &str, scale: f64) -> Option<()> {
    let gpu = f.uint(sink, "gpu_id").unwrap_or(0);
    let state = f.uint(sink, key).unwrap_or(0);
    let ugpu = sink.gpu(o.machine, gpu as i64) as i64;
    let dims = [
        ("ugpu", ArgValue::Int(ugpu)),
        ("gpu", ArgValue::Int(gpu as i64)),
    ];
    let bp = Blueprint {
        dims: &dims,
        unit: Some("kHz"),
        ..Blueprint::counter("gpu_frequency", "gpufreq")
    };
    bp.counter_at(sink, o, state as f64 * scale, NO_ARGS);
    Some(())
}

/// Adreno (KGSL) command batches: the queued event names the submitting thread, sync
/// events tie the GPU's tick counter to trace time, and the retired event says when the
/// batch ran on the GPU.
fn adreno(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let u32_of = |sink: &Sink, k: &str| u32::try_from(f.uint(sink, k).unwrap_or(0)).unwrap_or(0);
    let op = match name {
        "kgsl_adreno_cmdbatch_queued" => KernelOp::AdrenoQueued {
            ctx: u32_of(sink, "id"),
            seqno: u32_of(sink, "timestamp"),
        },
        "kgsl_adreno_cmdbatch_sync" => KernelOp::AdrenoSync {
            ticks: f.uint(sink, "ticks").unwrap_or(0),
        },
        _ => KernelOp::AdrenoRetired {
            ctx: u32_of(sink, "id"),
            seqno: u32_of(sink, "timestamp"),
            prio: f.int(sink, "prio").unwrap_or(0),
            start: f.uint(sink, "start").unwrap_or(0),
            retire: f.uint(sink, "retire").unwrap_or(0),
        },
    };
    kernel_op(sink, o, op);
    Some(())
}

/// V4L2 buffer types, by number.
fn v4l2_buf_type(t: u64) -> &'static str {
    match t {
        1 => "VIDEO_CAPTURE",
        2 => "VIDEO_OUTPUT",
        3 => "VIDEO_OVERLAY",
        4 => "VBI_CAPTURE",
        5 => "VBI_OUTPUT",
        6 => "SLICED_VBI_CAPTURE",
        7 => "SLICED_VBI_OUTPUT",
        8 => "VIDEO_OUTPUT_OVERLAY",
        9 => "VIDEO_CAPTURE_MPLANE",
        10 => "VIDEO_OUTPUT_MPLANE",
        11 => "SDR_CAPTURE",
        12 => "SDR_OUTPUT",
        13 => "META_CAPTURE",
        14 => "META_OUTPUT",
        0x80 => "PRIVATE",
        _ => "UNKNOWN",
    }
}

/// V4L2 buffer flags, as `|`-joined names.
fn v4l2_buf_flags(flags: u64) -> String {
    const FLAGS: [(u64, &str); 14] = [
        (0x1, "MAPPED"),
        (0x2, "QUEUED"),
        (0x4, "DONE"),
        (0x8, "KEYFRAME"),
        (0x10, "PFRAME"),
        (0x20, "BFRAME"),
        (0x40, "ERROR"),
        (0x80, "IN_REQUEST"),
        (0x100, "TIMECODE"),
        (0x200, "M2M_HOLD_CAPTURE_BUF"),
        (0x400, "PREPARED"),
        (0x800, "NO_CACHE_INVALIDATE"),
        (0x1000, "NO_CACHE_CLEAN"),
        (0x100000, "LAST"),
    ];
    let mut parts: Vec<&str> = FLAGS
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|(_, n)| *n)
        .collect();
    parts.push(match flags & 0xe000 {
        0x2000 => "TIMESTAMP_MONOTONIC",
        0x4000 => "TIMESTAMP_COPY",
        _ => "TIMESTAMP_UNKNOWN",
    });
    parts.push(if flags & 0x70000 == 0x10000 {
        "TSTAMP_SRC_SOE"
    } else {
        "TSTAMP_SRC_EOF"
    });
    if flags & 0x800000 != 0 {
        parts.push("REQUEST_FD");
    }
    parts.join("|")
}

fn v4l2_field(field: u64) -> &'static str {
    const FIELDS: [&str; 10] = [
        "ANY",
        "NONE",
        "TOP",
        "BOTTOM",
        "INTERLACED",
        "SEQ_TB",
        "SEQ_BT",
        "ALTERNATE",
        "INTERLACED_TB",
        "INTERLACED_BT",
    ];
    usize::try_from(field)
        .ok()
        .and_then(|f| FIELDS.get(f))
        .copied()
        .unwrap_or("UNKNOWN")
}

fn v4l2_timecode_type(t: u64) -> &'static str {
    match t {
        1 => "24FPS",
        2 => "25FPS",
        3 => "30FPS",
        4 => "50FPS",
        5 => "60FPS",
        _ => "UNKNOWN",
    }
}

fn v4l2_timecode_flags(flags: u64) -> String {
    let mut parts = Vec::new();
    if flags & 0x1 != 0 {
        parts.push("DROPFRAME");
    }
    if flags & 0x2 != 0 {
        parts.push("COLORFRAME");
    }
    parts.push(if flags & 0x0c == 0x08 {
        "USERBITS_8BITCHARS"
    } else {
        "USERBITS_USERDEFINED"
    });
    parts.join("|")
}

/// V4L2 `VIDIOC_QBUF` / `VIDIOC_DQBUF` and videobuf2's buffer events: an instant on the
/// thread (category `Video 4 Linux 2`) with the buffer's fields; a dequeue is linked by a
/// flow to the queue of the same buffer (device, sequence, type, index).
fn v4l2(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let minor = f.int(sink, "minor").unwrap_or(0);
    let u = |sink: &Sink, k: &str| f.uint(sink, k).unwrap_or(0);
    let v4l2 = name.starts_with("v4l2_");
    let (index, ty, sequence) = (u(sink, "index"), u(sink, "type"), u(sink, "sequence"));
    let title = match name {
        "v4l2_qbuf" => format!("VIDIOC_QBUF minor={minor} seq={sequence} type={ty} index={index}"),
        "v4l2_dqbuf" => {
            format!("VIDIOC_DQBUF minor={minor} seq={sequence} type={ty} index={index}")
        }
        other => format!("{other} minor={minor}"),
    };
    let mut args: Vec<(&'static str, ArgValue)> = vec![("minor", ArgValue::Int(minor))];
    if v4l2 {
        let ty_name = sink.intern(v4l2_buf_type(ty));
        args.push(("index", ArgValue::Int(index as i64)));
        args.push(("type", ArgValue::Str(ty_name)));
        args.push(("bytesused", ArgValue::Int(u(sink, "bytesused") as i64)));
    }
    let flags = sink.intern(&v4l2_buf_flags(u(sink, "flags")));
    let field = sink.intern(v4l2_field(u(sink, "field")));
    let tc_type = sink.intern(v4l2_timecode_type(u(sink, "timecode_type")));
    let tc_flags = sink.intern(&v4l2_timecode_flags(u(sink, "timecode_flags")));
    args.push(("flags", ArgValue::Str(flags)));
    args.push(("field", ArgValue::Str(field)));
    args.push((
        "timestamp",
        ArgValue::Int(f.int(sink, "timestamp").unwrap_or(0)),
    ));
    args.push(("timecode_type", ArgValue::Str(tc_type)));
    args.push(("timecode_flags", ArgValue::Str(tc_flags)));
    for key in [
        "timecode_frames",
        "timecode_seconds",
        "timecode_minutes",
        "timecode_hours",
        "timecode_userbits0",
        "timecode_userbits1",
        "timecode_userbits2",
        "timecode_userbits3",
    ] {
        args.push((key, ArgValue::Int(u(sink, key) as i64)));
    }
    args.push(("sequence", ArgValue::Int(sequence as i64)));
    let args = arg_set(sink, &args);
    let track = thread_track(sink, o.machine, o.pid);
    let category = sink.intern("Video 4 Linux 2");
    let title = sink.intern(&title);
    let s = slice(track, category, title, args);
    let queue = match name {
        "v4l2_qbuf" => Some(true),
        "v4l2_dqbuf" => Some(false),
        _ => None,
    };
    let key = (minor as u64 & 0xffff_ffff)
        ^ (sequence << 32)
        ^ ty.rotate_left(48)
        ^ index.rotate_left(16).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    kernel_op(
        sink,
        o,
        KernelOp::V4l2Buffer {
            slice: s,
            key,
            queue,
        },
    );
    Some(())
}

/// virtio-gpu command types, by number.
fn virtio_gpu_cmd(t: u64) -> &'static str {
    match t {
        0x100 => "GET_DISPLAY_INFO",
        0x101 => "RESOURCE_CREATE_2D",
        0x102 => "RESOURCE_UNREF",
        0x103 => "SET_SCANOUT",
        0x104 => "RESOURCE_FLUSH",
        0x105 => "TRANSFER_TO_HOST_2D",
        0x106 => "RESOURCE_ATTACH_BACKING",
        0x107 => "RESOURCE_DETACH_BACKING",
        0x108 => "GET_CAPSET_INFO",
        0x109 => "GET_CAPSET",
        0x10a => "GET_EDID",
        0x10b => "RESOURCE_ASSIGN_UUID",
        0x10c => "RESOURCE_CREATE_BLOB",
        0x10d => "SET_SCANOUT_BLOB",
        0x200 => "CTX_CREATE",
        0x201 => "CTX_DESTROY",
        0x202 => "CTX_ATTACH_RESOURCE",
        0x203 => "CTX_DETACH_RESOURCE",
        0x204 => "RESOURCE_CREATE_3D",
        0x205 => "TRANSFER_TO_HOST_3D",
        0x206 => "TRANSFER_FROM_HOST_3D",
        0x207 => "SUBMIT_3D",
        0x208 => "RESOURCE_MAP_BLOB",
        0x209 => "RESOURCE_UNMAP_BLOB",
        0x300 => "UPDATE_CURSOR",
        0x301 => "MOVE_CURSOR",
        0x1100 => "RESP_OK_NODATA",
        0x1101 => "RESP_OK_DISPLAY_INFO",
        0x1102 => "RESP_OK_CAPSET_INFO",
        0x1103 => "RESP_OK_CAPSET",
        0x1104 => "RESP_OK_EDID",
        0x1105 => "RESP_OK_RESOURCE_UUID",
        0x1106 => "RESP_OK_MAP_INFO",
        0x1200 => "RESP_ERR_UNSPEC",
        0x1201 => "RESP_ERR_OUT_OF_MEMORY",
        0x1202 => "RESP_ERR_INVALID_SCANOUT_ID",
        0x1203 => "RESP_ERR_INVALID_RESOURCE_ID",
        0x1204 => "RESP_ERR_INVALID_CONTEXT_ID",
        0x1205 => "RESP_ERR_INVALID_PARAMETER",
        _ => "UNKNOWN",
    }
}

/// virtio-gpu's control and cursor queues: free slots as a counter, each command a slice
/// from queued to answered (by sequence number) on the queue's track, and the latency of
/// commands without a fence (answered at once by the host) as a counter.
fn virtio_gpu(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let queue = match f.string(sink, "name")?.as_ref() {
        "control" => "Control",
        "cursor" => "Cursor",
        _ => return None,
    };
    let num_free = f.uint(sink, "num_free").unwrap_or(0);
    let free_name = format!("Virtgpu {queue} Num Free");
    Blueprint::counter("virtgpu_num_free", &free_name).counter_at(
        sink,
        o,
        num_free as f64,
        NO_ARGS,
    );
    let seqno = u32::try_from(f.uint(sink, "seqno").unwrap_or(0)).unwrap_or(0);
    let set = global_set(
        sink,
        o.machine,
        "virtgpu_queue_event",
        &format!("Virtgpu {queue} Queue"),
    );
    let latency = Blueprint::counter("virtgpu_latency", &format!("Virtgpu {queue} Latency"))
        .track(sink, o.machine);
    if name == "virtio_gpu_cmd_queue" {
        let cmd = sink.intern(virtio_gpu_cmd(f.uint(sink, "type").unwrap_or(0)));
        cookie_slice(sink, o, set, u64::from(seqno), Some(cmd), NO_ARGS);
        let fence = f.uint(sink, "fence_id").unwrap_or(0);
        if fence == 0 {
            let op = KernelOp::VirtioGpuLatency {
                track: latency,
                seqno,
                start: true,
            };
            kernel_op(sink, o, op);
        }
    } else {
        cookie_slice(sink, o, set, u64::from(seqno), None, NO_ARGS);
        let op = KernelOp::VirtioGpuLatency {
            track: latency,
            seqno,
            start: false,
        };
        kernel_op(sink, o, op);
    }
    Some(())
}

/// `f2fs_iostat` counters: (name, field).
const F2FS_IOSTAT: &[(&str, &str)] = &[
    ("write_app_total", "app_wio"),
    ("write_app_direct", "app_dio"),
    ("write_app_buffered", "app_bio"),
    ("write_app_mapped", "app_mio"),
    ("write_fs_data", "fs_dio"),
    ("write_fs_node", "fs_nio"),
    ("write_fs_meta", "fs_mio"),
    ("write_gc_data", "fs_gc_dio"),
    ("write_gc_node", "fs_gc_nio"),
    ("write_cp_data", "fs_cp_dio"),
    ("write_cp_node", "fs_cp_nio"),
    ("write_cp_meta", "fs_cp_mio"),
    ("read_app_total", "app_rio"),
    ("read_app_direct", "app_drio"),
    ("read_app_buffered", "app_brio"),
    ("read_app_mapped", "app_mrio"),
    ("read_fs_data", "fs_drio"),
    ("read_fs_gdata", "fs_gdrio"),
    ("read_fs_cdata", "fs_cdrio"),
    ("read_fs_node", "fs_nrio"),
    ("read_fs_meta", "fs_mrio"),
    ("other_fs_discard", "fs_discard"),
];

/// `f2fs_iostat_latency` counters: (name, field).
const F2FS_LATENCY: &[(&str, &str)] = &[
    ("read_data_peak", "d_rd_peak"),
    ("read_data_avg", "d_rd_avg"),
    ("read_data_cnt", "d_rd_cnt"),
    ("read_node_peak", "n_rd_peak"),
    ("read_node_avg", "n_rd_avg"),
    ("read_node_cnt", "n_rd_cnt"),
    ("read_meta_peak", "m_rd_peak"),
    ("read_meta_avg", "m_rd_avg"),
    ("read_meta_cnt", "m_rd_cnt"),
    ("write_sync_data_peak", "d_wr_s_peak"),
    ("write_sync_data_avg", "d_wr_s_avg"),
    ("write_sync_data_cnt", "d_wr_s_cnt"),
    ("write_sync_node_peak", "n_wr_s_peak"),
    ("write_sync_node_avg", "n_wr_s_avg"),
    ("write_sync_node_cnt", "n_wr_s_cnt"),
    ("write_sync_meta_peak", "m_wr_s_peak"),
    ("write_sync_meta_avg", "m_wr_s_avg"),
    ("write_sync_meta_cnt", "m_wr_s_cnt"),
    ("write_async_data_peak", "d_wr_as_peak"),
    ("write_async_data_avg", "d_wr_as_avg"),
    ("write_async_data_cnt", "d_wr_as_cnt"),
    ("write_async_node_peak", "n_wr_as_peak"),
    ("write_async_node_avg", "n_wr_as_avg"),
    ("write_async_node_cnt", "n_wr_as_cnt"),
    ("write_async_meta_peak", "m_wr_as_peak"),
    ("write_async_meta_avg", "m_wr_as_avg"),
    ("write_async_meta_cnt", "m_wr_as_cnt"),
];

/// A device number as `major:minor` (glibc's encoding of a 64-bit dev_t).
fn dev_name(dev: u64) -> String {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    format!("{}:{}", major as u32, minor as u32)
}

/// F2FS I/O statistics of a device: one counter per figure, `<kind>.[<dev>].<figure>`.
fn f2fs(
    sink: &mut Sink,
    o: &Origin,
    f: &Fields,
    kind: &'static str,
    figures: &[(&str, &str)],
) -> Option<()> {
    let dev = dev_name(f.uint(sink, "dev").unwrap_or(0));
    let dev_id = sink.intern(&dev);
    for (figure, field) in figures {
        let value = f.uint(sink, field).unwrap_or(0);
        let name = format!("{kind}.[{dev}].{figure}");
        let figure_id = sink.intern(figure);
        let dims = [
            ("linux_device", ArgValue::Str(dev_id)),
            ("name", ArgValue::Str(figure_id)),
        ];
        let bp = Blueprint {
            dims: &dims,
            ..Blueprint::counter(kind, &name)
        };
        bp.counter_at(sink, o, value as f64, NO_ARGS);
    }
    Some(())
}

/// `ufshcd_clk_gating`: the UFS clock's state (1 off, 2 requested on, 3 on; 0 otherwise).
fn ufs_clk_gating(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let state = match f.int(sink, "state").unwrap_or(0) {
        1 => 3,
        2 => 1,
        3 => 2,
        _ => 0,
    };
    Blueprint::counter(
        "ufs_clkgating",
        "io.ufs.clkgating (OFF:0/REQ_OFF/REQ_ON/ON:3)",
    )
    .counter_at(sink, o, f64::from(state), NO_ARGS);
    Some(())
}

/// `gpu_work_period`: a complete slice `[start_time_ns, end_time_ns)` named by the share
/// of it the GPU was active (`%50.00`) on the `GPU Work Period` track of the GPU and uid
/// (Trace Processor's GpuWorkPeriodTracker); an end before the start is counted
/// (`gpu_work_period_negative_duration`) and dropped.
fn gpu_work_period(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let gpu = f.uint(sink, "gpu_id").unwrap_or(0);
    let uid = f.uint(sink, "uid").unwrap_or(0);
    let start = f.uint(sink, "start_time_ns").unwrap_or(0) as i64;
    let end = f.uint(sink, "end_time_ns").unwrap_or(0) as i64;
    let active = f.uint(sink, "total_active_duration_ns").unwrap_or(0);
    let dur = end.wrapping_sub(start);
    if dur < 0 {
        sink.stat("gpu_work_period_negative_duration", o.machine, 1);
        return Some(());
    }
    let percent = 100.0 * (active as f64 / dur as f64);
    let dims = [
        ("gpu_id", ArgValue::Int(gpu as i64)),
        ("uid", ArgValue::Int(uid as i64)),
    ];
    let bp = Blueprint {
        dims: &dims,
        slices: true,
        ..Blueprint::counter("android_gpu_work_period", "GPU Work Period")
    };
    let track = bp.track(sink, o.machine);
    let name = sink.intern(&format!("%{percent:.2}"));
    sink.push(
        start,
        o.clock,
        EventData::Complete {
            slice: slice(track, NULL_STR, name, NO_ARGS),
            dur,
            thread_dur: NO_TS,
        },
    );
    Some(())
}

/// `cros_ec_sensorhub_data`: how late a ChromeOS EC sensor's sample was read.
fn cros_ec(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let sensor = f.uint(sink, "ec_sensor_num").unwrap_or(0);
    let current_time = f.int(sink, "current_time").unwrap_or(0);
    let current_ts = f.int(sink, "current_timestamp").unwrap_or(0);
    let fifo_ts = f.int(sink, "fifo_timestamp").unwrap_or(0);
    let args = arg_set(
        sink,
        &[
            ("ec_num", ArgValue::Int(sensor as i64)),
            ("ec_delta", ArgValue::Int(fifo_ts.wrapping_sub(current_ts))),
            ("sample_ts", ArgValue::Int(current_ts)),
        ],
    );
    let dims = [("ec_sensor_num", ArgValue::Uint(sensor))];
    let name = format!("cros_ec.cros_ec_sensorhub_data.{sensor}");
    let bp = Blueprint {
        dims: &dims,
        ..Blueprint::counter("cros_ec_sensorhub_data", &name)
    };
    bp.counter_at(sink, o, current_time.wrapping_sub(current_ts) as f64, args);
    Some(())
}

/// `funcgraph_entry` / `_exit`: kernel functions as slices on the thread, or for the idle
/// thread on a track per cpu (`swapper<cpu> -funcgraph`).
fn funcgraph(
    sink: &mut Sink,
    o: &Origin,
    name: &str,
    f: &Fields,
    symbol: &dyn Fn(u64) -> Option<StrId>,
) -> Option<()> {
    let func = f.uint(sink, "func").unwrap_or(0);
    let func = match symbol(func) {
        Some(s) => s,
        None => sink.intern(&format!("{func:#x}")),
    };
    let track = if o.pid == 0 {
        let track_name = format!("swapper{} -funcgraph", o.cpu);
        let bp = Blueprint {
            scope: ProbeScope::Cpu(o.cpu),
            slices: true,
            ..Blueprint::counter("cpu_funcgraph", &track_name)
        };
        bp.track(sink, o.machine)
    } else {
        thread_track(sink, o.machine, o.pid)
    };
    let s = slice(track, NULL_STR, func, NO_ARGS);
    if name == "funcgraph_entry" {
        o.push(sink, EventData::Begin(s));
    } else {
        o.push(sink, EventData::End(s));
    }
    Some(())
}

/// `tcp_retransmit_skb`: an instant `saddr:sport -> daddr:dport` on a global track.
fn tcp_retransmit(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let ip = |a: u64| {
        format!(
            "{}.{}.{}.{}",
            a & 0xff,
            (a >> 8) & 0xff,
            (a >> 16) & 0xff,
            (a >> 24) & 0xff
        )
    };
    let u = |sink: &Sink, k: &str| f.uint(sink, k).unwrap_or(0);
    let text = format!(
        "{}:{} -> {}:{}",
        ip(u(sink, "saddr")),
        u(sink, "sport"),
        ip(u(sink, "daddr")),
        u(sink, "dport")
    );
    let bp = Blueprint {
        slices: true,
        ..Blueprint::counter("net_tcp_retransmit_skb", "TCP Retransmit Skb")
    };
    let track = bp.track(sink, o.machine);
    let name = sink.intern(&text);
    instant(sink, o, track, slice(track, NULL_STR, name, NO_ARGS));
    Some(())
}

/// `napi_gro_receive_entry` / `_exit`: a GRO receive as a slice on the cpu's track.
fn napi_gro(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let track_name = format!("Napi Gro Cpu {}", o.cpu);
    let bp = Blueprint {
        scope: ProbeScope::Cpu(o.cpu),
        slices: true,
        ..Blueprint::counter("cpu_napi_gro", &track_name)
    };
    let track = bp.track(sink, o.machine);
    let category = sink.intern("napi_gro");
    if name == "napi_gro_receive_entry" {
        let dev = f.str_id(sink, "name").unwrap_or(NULL_STR);
        let len = f.int(sink, "len").unwrap_or(0);
        let args = arg_set(sink, &[("len", ArgValue::Int(len))]);
        o.push(sink, EventData::Begin(slice(track, category, dev, args)));
    } else {
        let ret = f.int(sink, "ret").unwrap_or(0);
        let args = arg_set(sink, &[("ret", ArgValue::Int(ret))]);
        o.push(sink, EventData::End(slice(track, category, NULL_STR, args)));
    }
    Some(())
}

/// Mali's KCPU queue events on the thread: `mali_KCPU_CQS_SET` and `mali_KCPU_FENCE_SIGNAL`
/// instants, `mali_KCPU_CQS_WAIT` and `mali_KCPU_FENCE_WAIT` slices.
fn mali_kcpu(sink: &mut Sink, o: &Origin, name: &str) -> Option<()> {
    let base = name.strip_prefix("mali_")?;
    let track = thread_track(sink, o.machine, o.pid);
    if let Some(wait) = base.strip_suffix("_START") {
        let name = sink.intern(wait);
        o.push(
            sink,
            EventData::Begin(slice(track, NULL_STR, name, NO_ARGS)),
        );
    } else if let Some(wait) = base.strip_suffix("_END") {
        let name = sink.intern(wait);
        o.push(sink, EventData::End(slice(track, NULL_STR, name, NO_ARGS)));
    } else {
        let name = sink.intern(base);
        instant(sink, o, track, slice(track, NULL_STR, name, NO_ARGS));
    }
    Some(())
}

/// Mali's CSF interrupts run in interrupt context: slices `mali_CSF_INTERRUPT` (arg
/// `info_val`) on the cpu's `Mali Irq Cpu <n>` track.
fn mali_csf_interrupt(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let track_name = format!("Mali Irq Cpu {}", o.cpu);
    let bp = Blueprint {
        scope: ProbeScope::Cpu(o.cpu),
        slices: true,
        ..Blueprint::counter("cpu_mali_irq", &track_name)
    };
    let track = bp.track(sink, o.machine);
    let info = f.uint(sink, "info_val").unwrap_or(0);
    let args = arg_set(sink, &[("info_val", ArgValue::Uint(info))]);
    let title = sink.intern("mali_CSF_INTERRUPT");
    let s = slice(track, NULL_STR, title, args);
    if name.ends_with("_START") {
        o.push(sink, EventData::Begin(s));
    } else {
        o.push(sink, EventData::End(s));
    }
    Some(())
}

/// The Mali GPU's MCU power states: each `mali_mali_PM_MCU_<STATE>` event ends the state
/// before and begins `<STATE>` on the global `Mali MCU state` track (Trace Processor's
/// `MaliGpuEventTracker`; its `mali_unknown_mcu_state_id` cannot happen here, where the
/// event is known by name).
fn mali_mcu_state(sink: &mut Sink, o: &Origin, name: &str) -> Option<()> {
    let state = name.strip_prefix("mali_mali_PM_MCU_")?;
    let bp = Blueprint {
        slices: true,
        ..Blueprint::counter("mali_mcu_state", "Mali MCU state")
    };
    let track = bp.track(sink, o.machine);
    o.push(
        sink,
        EventData::End(slice(track, NULL_STR, NULL_STR, NO_ARGS)),
    );
    let state = sink.intern(state);
    o.push(
        sink,
        EventData::Begin(slice(track, NULL_STR, state, NO_ARGS)),
    );
    Some(())
}

/// `rpm_status`: a device's runtime power state as slices on its track (`linux_rpm`, named
/// after the device), each ending the one before; suspended (the usual state) makes none.
fn rpm_status(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    const RPM_SUSPENDED: i64 = 2;
    let device = f.string(sink, "name").unwrap_or_default().into_owned();
    let dims = [("linux_device", ArgValue::Str(sink.intern(&device)))];
    let bp = Blueprint {
        dims: &dims,
        slices: true,
        ..Blueprint::counter("linux_rpm", &device)
    };
    let track = bp.track(sink, o.machine);
    o.push(
        sink,
        EventData::End(slice(track, NULL_STR, NULL_STR, NO_ARGS)),
    );
    let status = f.int(sink, "status").unwrap_or(0);
    if status == RPM_SUSPENDED {
        return Some(());
    }
    let state = match status {
        -1 => "Invalid".to_string(),
        0 => "Active".to_string(),
        1 => "Resuming".to_string(),
        3 => "Suspending".to_string(),
        other => format!("Unknown ({other})"),
    };
    let name = sink.intern(&state);
    o.push(
        sink,
        EventData::Begin(slice(track, NULL_STR, name, NO_ARGS)),
    );
    Some(())
}

/// `suspend_resume`: a phase of suspending or resuming, `<action>(<val>)`, paired by the
/// model on the `Suspend/Resume Latency` tracks. `timekeeping_freeze`'s value is the cpu
/// it ran on, which may differ between its start and end: it reads as 0.
fn suspend_resume(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let action = f.string(sink, "action").unwrap_or_default().into_owned();
    let val = if action == "timekeeping_freeze" {
        0
    } else {
        f.int(sink, "val").unwrap_or(0) as u32
    };
    let name = sink.intern(&format!("{action}({val})"));
    let action = sink.intern(&action);
    let start = f.int(sink, "start").unwrap_or(0) != 0;
    kernel_op(
        sink,
        o,
        KernelOp::SuspendResume {
            action,
            name,
            start,
        },
    );
    Some(())
}

/// `suspend_resume_minimal`: the device suspended, as one slice per suspension.
fn suspend_resume_minimal(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let bp = Blueprint {
        slices: true,
        ..Blueprint::counter("suspend_resume_minimal", "Suspend/Resume Minimal")
    };
    let track = bp.track(sink, o.machine);
    if f.int(sink, "start").unwrap_or(0) != 0 {
        let name = sink.intern("Suspended");
        o.push(
            sink,
            EventData::Begin(slice(track, NULL_STR, name, NO_ARGS)),
        );
    } else {
        o.push(
            sink,
            EventData::End(slice(track, NULL_STR, NULL_STR, NO_ARGS)),
        );
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_numbers_read_as_glibc_does() {
        assert_eq!(dev_name(65070), "254:46");
        assert_eq!(dev_name(65056), "254:32");
    }

    #[test]
    fn v4l2_flags_name_every_bit() {
        assert_eq!(
            v4l2_buf_flags(16386),
            "QUEUED|TIMESTAMP_COPY|TSTAMP_SRC_EOF"
        );
    }
}
