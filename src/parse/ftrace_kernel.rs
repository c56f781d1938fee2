//! Kernel slices and counters Trace Processor derives from ftrace events beyond the core
//! ones of `ftrace_events.rs`: dma fences, GPU scheduler jobs and vblanks (handed to the
//! model's DRM tracker), kprobes, and the rest of the reference's ftrace parser. Hands on
//! slice, counter and DRM events to the sink.

use super::ftrace_events::{
    cookie_slice, counter, global_counter, instant, kernel_op, slice, thread_track, Blueprint,
    Fields, Origin,
};
use crate::ir::*;

/// Handles the event if it is one of this module's kinds.
pub(crate) fn handle(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> bool {
    let done = match name {
        "drm_vblank_event"
        | "drm_vblank_event_delivered"
        | "drm_sched_job"
        | "drm_run_job"
        | "drm_sched_process_job"
        | "drm_sched_job_queue"
        | "drm_sched_job_run"
        | "drm_sched_job_done"
        | "dma_fence_init"
        | "dma_fence_emit"
        | "dma_fence_signaled"
        | "dma_fence_wait_start"
        | "dma_fence_wait_end" => drm(sink, o, name, f),
        "kprobe_event" => kprobe(sink, o, f),
        "sched_cpu_util_cfs" => cpu_util(sink, o, f),
        "thermal_exynos_acpm_bulk" | "thermal_exynos_acpm_high_overhead" => {
            thermal_exynos(sink, o, f)
        }
        "kfree_skb" => kfree_skb(sink, o, f),
        "net_dev_xmit" | "netif_receive_skb" => net_bytes(sink, o, name, f),
        "inet_sock_set_state" => inet_sock(sink, o, f),
        "ufshcd_command" => ufs_command(sink, o, f),
        "android_fs_dataread_start"
        | "android_fs_dataread_end"
        | "android_fs_datawrite_start"
        | "android_fs_datawrite_end"
        | "android_fs_fsync_start"
        | "android_fs_fsync_end" => android_fs(sink, o, name, f),
        "block_io_start" | "block_io_done" => block_io(sink, o, name, f),
        "devfreq_frequency" => devfreq(sink, o, f),
        "dcvsh_freq" => dcvsh_freq(sink, o, f),
        "hyp_enter" | "hyp_exit" | "host_hcall" | "host_smc" | "host_mem_abort" => {
            pkvm_hyp(sink, o, name, f)
        }
        "scm_call_start" => scm_call_start(sink, o, f),
        "scm_call_end" => {
            let track = thread_track(sink, o.machine, o.pid);
            o.push(
                sink,
                EventData::End(slice(track, NULL_STR, NULL_STR, NO_ARGS)),
            );
            Some(())
        }
        _ => return false,
    };
    let _ = done;
    true
}

/// `dcvsh_freq`: the hardware's cap on a cpu's frequency, on the same `Cpu <n> Max Freq
/// Limit` track as `cpu_frequency_limits` (Trace Processor's `ParseDcvshFreq`).
fn dcvsh_freq(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let cpu = u32::try_from(f.uint(sink, "cpu").unwrap_or(0)).ok()?;
    let freq = f.uint(sink, "freq").unwrap_or(0) as f64;
    let name = sink.intern(&format!("Cpu {cpu} Max Freq Limit"));
    let key = TrackKey::CpuCounter {
        machine: o.machine,
        cpu,
        name,
        kind: "cpu_max_frequency_limit",
    };
    counter(sink, o, key, freq);
    Some(())
}

/// pKVM hypervisor events (Trace Processor's `PkvmHypervisorCpuTracker`): `hyp_enter` /
/// `hyp_exit` bound a `hyp` slice (category `pkvm_hyp`) on the cpu's `pkVM Hypervisor CPU
/// <n>` track; `host_hcall`, `host_smc` and `host_mem_abort` say why, as args of the open
/// slice (`hyp_enter_reason` and the event's fields).
fn pkvm_hyp(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let track_name = sink.intern(&format!("pKVM Hypervisor CPU {}", o.cpu));
    let track = sink.track(TrackKey::CpuSlices {
        machine: o.machine,
        cpu: o.cpu,
        name: track_name,
        kind: "pkvm_hypervisor",
    });
    let category = sink.intern("pkvm_hyp");
    let hyp = sink.intern("hyp");
    let fields: &[&'static str] = match name {
        "hyp_enter" => {
            o.push(sink, EventData::Begin(slice(track, category, hyp, NO_ARGS)));
            return Some(());
        }
        "hyp_exit" => {
            o.push(
                sink,
                EventData::End(slice(track, NULL_STR, NULL_STR, NO_ARGS)),
            );
            return Some(());
        }
        "host_hcall" => &["id", "invalid"],
        "host_smc" => &["id", "forwarded"],
        _ => &["esr", "addr"],
    };
    let reason = sink.intern(name);
    let mut args = vec![sink.static_arg("hyp_enter_reason", ArgValue::Str(reason))];
    for &key in fields {
        let v = f.uint(sink, key).unwrap_or(0);
        args.push(sink.static_arg(key, ArgValue::Uint(v)));
    }
    let args = sink.args.push(&args);
    let op = KernelOp::SliceArgs {
        slice: slice(track, category, hyp, args),
    };
    kernel_op(sink, o, op);
    Some(())
}

/// `devfreq_frequency`: a device's frequency on its `linux_device_frequency` counter
/// (dimension: the device), named `<device> Frequency` after the text past `devfreq_`.
fn devfreq(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let freq = f.uint(sink, "freq").unwrap_or(0) as f64;
    let dev = f.string(sink, "dev_name").unwrap_or_default().into_owned();
    const DELIMITER: &str = "devfreq_";
    let short = dev
        .find(DELIMITER)
        .map_or(&dev[..], |i| &dev[i + DELIMITER.len()..]);
    let name = format!("{short} Frequency");
    let dims = [("linux_device", ArgValue::Str(sink.intern(&dev)))];
    let bp = Blueprint {
        dims: &dims,
        ..Blueprint::counter("linux_device_frequency", &name)
    };
    bp.counter_at(sink, o, freq, NO_ARGS);
    Some(())
}

/// `scm_call_start`: a secure-monitor call, as a slice `scm id=<x0 in hex>` on the thread
/// (C's `%#x`: `0` without the `0x`); `scm_call_end` ends it.
fn scm_call_start(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let x0 = f.uint(sink, "x0").unwrap_or(0);
    let text = if x0 == 0 {
        "scm id=0".to_string()
    } else {
        format!("scm id={x0:#x}")
    };
    let name = sink.intern(&text);
    let track = thread_track(sink, o.machine, o.pid);
    o.push(
        sink,
        EventData::Begin(slice(track, NULL_STR, name, NO_ARGS)),
    );
    Some(())
}

fn drm(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let u = |sink: &Sink, k: &str| f.uint(sink, k).unwrap_or(0);
    let op = match name {
        "drm_vblank_event" | "drm_vblank_event_delivered" => DrmOp::Vblank {
            crtc: f.int(sink, "crtc").unwrap_or(0),
            seq: u(sink, "seq"),
            delivered: name == "drm_vblank_event_delivered",
        },
        "drm_sched_job" => DrmOp::SchedJob {
            ring: f.str_id(sink, "name").unwrap_or(NULL_STR),
            job: u(sink, "id"),
        },
        "drm_run_job" => DrmOp::RunJob {
            ring: f.str_id(sink, "name").unwrap_or(NULL_STR),
            job: u(sink, "id"),
            fence: u(sink, "fence"),
        },
        "drm_sched_process_job" => DrmOp::ProcessJob {
            fence: u(sink, "fence"),
        },
        "drm_sched_job_queue" | "drm_sched_job_run" => {
            let ring = f.str_id(sink, "name").unwrap_or(NULL_STR);
            let (context, seqno) = (u(sink, "fence_context"), u(sink, "fence_seqno"));
            if name == "drm_sched_job_queue" {
                DrmOp::JobQueue {
                    ring,
                    context,
                    seqno,
                }
            } else {
                DrmOp::JobRun {
                    ring,
                    context,
                    seqno,
                }
            }
        }
        "drm_sched_job_done" => DrmOp::JobDone {
            context: u(sink, "fence_context"),
            seqno: u(sink, "fence_seqno"),
        },
        "dma_fence_wait_start" => DrmOp::FenceWaitStart {
            context: u(sink, "context"),
            seqno: u(sink, "seqno"),
        },
        "dma_fence_wait_end" => DrmOp::FenceWaitEnd,
        _ => {
            let context = u(sink, "context");
            let seqno = u(sink, "seqno");
            let timeline = f.str_id(sink, "timeline").unwrap_or(NULL_STR);
            match name {
                "dma_fence_init" => DrmOp::FenceInit {
                    context,
                    timeline,
                    seqno,
                },
                "dma_fence_emit" => DrmOp::FenceEmit {
                    context,
                    timeline,
                    seqno,
                },
                _ => DrmOp::FenceSignaled {
                    context,
                    timeline,
                    seqno,
                },
            }
        }
    };
    let ev = DrmEvent {
        machine: o.machine,
        tid: o.pid,
        op,
    };
    o.push(sink, EventData::Drm(Box::new(ev)));
    Some(())
}

/// A kprobe hit: begin, end or instant on the thread's track, named after the probe.
fn kprobe(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    const BEGIN: i64 = 1;
    const END: i64 = 2;
    const INSTANT: i64 = 3;
    let name = f.str_id(sink, "name").unwrap_or(NULL_STR);
    let track = sink.track(TrackKey::ThreadSlices(o.thread()));
    let s = slice(track, NULL_STR, name, NO_ARGS);
    match f.int(sink, "type")? {
        BEGIN => o.push(sink, EventData::Begin(s)),
        END => o.push(sink, EventData::End(s)),
        INSTANT => instant(sink, o, track, s),
        _ => return None,
    }
    Some(())
}

fn cpu_counter(sink: &mut Sink, o: &Origin, cpu: u32, name: String, kind: &'static str, v: f64) {
    let name = sink.intern(&name);
    let key = TrackKey::CpuCounter {
        machine: o.machine,
        cpu,
        name,
        kind,
    };
    counter(sink, o, key, v);
}

/// `sched_cpu_util_cfs`: the cpu's utilization, capacity and runnable tasks.
fn cpu_util(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let cpu = u32::try_from(f.uint(sink, "cpu")?).ok()?;
    let util = f.real(sink, "cpu_util").unwrap_or(0.0);
    let cap = f.real(sink, "capacity").unwrap_or(0.0);
    let nr = f.real(sink, "nr_running").unwrap_or(0.0);
    cpu_counter(
        sink,
        o,
        cpu,
        format!("Cpu {cpu} Util"),
        "cpu_utilization",
        util,
    );
    cpu_counter(sink, o, cpu, format!("Cpu {cpu} Cap"), "cpu_capacity", cap);
    cpu_counter(
        sink,
        o,
        cpu,
        format!("Cpu {cpu} Nr Running"),
        "cpu_nr_running",
        nr,
    );
    Some(())
}

/// Exynos thermal zones by `tz_id`.
const EXYNOS_ZONES: [&str; 6] = ["BIG", "MID", "LITTLE", "GPU", "ISP", "TPU"];

/// `thermal_exynos_acpm_bulk`: a zone's temperature at the time the firmware read it;
/// `thermal_exynos_acpm_high_overhead` (no firmware time): at the event's time. A zone
/// id past the known zones is counted (`ftrace_thermal_exynos_acpm_unknown_tz_id`).
fn thermal_exynos(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let tz = f.int(sink, "tz_id").unwrap_or(0);
    let Some(zone) = usize::try_from(tz).ok().and_then(|i| EXYNOS_ZONES.get(i)) else {
        sink.stat("ftrace_thermal_exynos_acpm_unknown_tz_id", o.machine, 1);
        return None;
    };
    let temp = f.real(sink, "current_temp").unwrap_or(0.0);
    let at = f.int(sink, "timestamp").unwrap_or(o.ts);
    let name = sink.intern(&format!("{zone} Temperature"));
    let origin = Origin { ts: at, ..*o };
    global_counter(sink, &origin, name, "thermal_temperature", temp);
    Some(())
}

fn sum_counter(
    sink: &mut Sink,
    o: &Origin,
    name: &str,
    kind: &'static str,
    delta: i64,
    divisor: u32,
    args: &[(&'static str, ArgValue)],
) {
    let name = sink.intern(name);
    let track = sink.track(TrackKey::GlobalCounter {
        machine: o.machine,
        name,
        kind,
    });
    let set: Vec<Arg> = args.iter().map(|&(k, v)| sink.static_arg(k, v)).collect();
    let args = sink.args.push_shared(&set);
    o.push(
        sink,
        EventData::CounterSum {
            track,
            delta,
            divisor,
            args,
        },
    );
}

/// `kfree_skb`: IP and IPv6 packets freed, counted.
fn kfree_skb(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    const ETH_P_IP: u64 = 0x0800;
    const ETH_P_IPV6: u64 = 0x86dd;
    let protocol = match f.uint(sink, "protocol")? {
        ETH_P_IP => "IP",
        ETH_P_IPV6 => "IPV6",
        _ => return None,
    };
    let protocol = sink.intern(protocol);
    let args = [("protocol", ArgValue::Str(protocol))];
    sum_counter(sink, o, "Kfree Skb IP Prot", "net_kfree_skb", 1, 1, &args);
    Some(())
}

/// `net_dev_xmit` (sent, when it succeeded) / `netif_receive_skb`: KB through a device.
fn net_bytes(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let transmit = name == "net_dev_xmit";
    if transmit && f.int(sink, "rc").unwrap_or(0) != 0 {
        return None;
    }
    let dev = f.string(sink, "name")?.into_owned();
    let len = f.uint(sink, "len").unwrap_or(0);
    let (track, kind) = if transmit {
        (format!("{dev} Transmitted KB"), "net_transmitted")
    } else {
        (format!("{dev} Received KB"), "net_received")
    };
    let args = [
        ("cpu", ArgValue::Uint(u64::from(o.cpu))),
        ("len", ArgValue::Uint(len)),
    ];
    sum_counter(sink, o, &track, kind, len as i64, 1024, &args);
    Some(())
}

/// `inet_sock_set_state` of a TCP socket: its state as a slice on its stream's track.
fn inet_sock(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    const IPPROTO_TCP: u64 = 6;
    const AF_INET: u64 = 2;
    const AF_INET6: u64 = 10;
    const STATES: [&str; 13] = [
        "TCP_UNKNOWN",
        "TCP_ESTABLISHED",
        "TCP_SYN_SENT",
        "TCP_SYN_RECV",
        "TCP_FIN_WAIT1",
        "TCP_FIN_WAIT2",
        "TCP_TIME_WAIT",
        "TCP_CLOSE",
        "TCP_CLOSE_WAIT",
        "TCP_LAST_ACK",
        "TCP_LISTEN",
        "TCP_CLOSING",
        "TCP_NEW_SYN_RECV",
    ];
    if f.uint(sink, "protocol")? != IPPROTO_TCP {
        return None;
    }
    if !matches!(f.uint(sink, "family")?, AF_INET | AF_INET6) {
        return None;
    }
    let new = usize::try_from(f.int(sink, "newstate")?).ok()?;
    let state = STATES.get(new).copied()?;
    let name = match new {
        2 => format!("{state}(pid={})", o.pid),
        1 => format!(
            "{state}(sport={},dport={})",
            f.uint(sink, "sport").unwrap_or(0),
            f.uint(sink, "dport").unwrap_or(0)
        ),
        _ => state.to_string(),
    };
    let data = EventData::SockState {
        machine: o.machine,
        skaddr: f.uint(sink, "skaddr").unwrap_or(0),
        name: sink.intern(&name),
        opens: new == 2,
    };
    o.push(sink, data);
    Some(())
}

/// A SCSI command's name, as UFS traces spell it.
fn scsi_command(opcode: u64) -> &'static str {
    match opcode {
        0x00 => "TEST UNIT READY",
        0x03 => "REQUEST SENSE",
        0x04 => "FORMAT UNIT",
        0x08 => "READ (6)",
        0x0a => "WRITE (6)",
        0x12 => "INQUIRY",
        0x15 => "MODE SELECT (6)",
        0x1a => "MODE SENSE (6)",
        0x1b => "START STOP UNIT",
        0x25 => "READ CAPACITY (10)",
        0x28 => "READ (10)",
        0x2a => "WRITE (10)",
        0x2f => "VERIFY (10)",
        0x35 => "SYNCHRONIZE CACHE (10)",
        0x3b => "WRITE BUFFER",
        0x3c => "READ BUFFER",
        0x42 => "UNMAP",
        0x55 => "MODE SELECT (10)",
        0x5a => "MODE SENSE (10)",
        0x88 => "READ (16)",
        0x8a => "WRITE (16)",
        0x91 => "SYNCHRONIZE CACHE (16)",
        0x9e => "SERVICE ACTION IN (16)",
        0xa0 => "REPORT LUNS",
        0xa2 => "SECURITY PROTOCOL IN",
        0xb5 => "SECURITY PROTOCOL OUT",
        _ => "UNKNOWN",
    }
}

/// `ufshcd_command`: commands in flight (bits of the doorbell) and, per tag, each
/// command from send to completion.
fn ufs_command(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let doorbell = f.uint(sink, "doorbell").unwrap_or(0);
    let name = sink.intern("io.ufs.command.count");
    global_counter(
        sink,
        o,
        name,
        "ufs_command_count",
        f64::from(doorbell.count_ones()),
    );
    let tag = f.uint(sink, "tag")?;
    let track_name = sink.intern(&format!("io.ufs.command.tag[{tag:03}]"));
    let track = sink.track(TrackKey::KernelSlices {
        machine: o.machine,
        kind: "ufs_command_tag",
        name: track_name,
        dim: Some(("ufs_command_tag", tag as i64)),
    });
    if f.uint(sink, "str_t").unwrap_or(0) == 0 {
        let mut label = scsi_command(f.uint(sink, "opcode").unwrap_or(u64::MAX)).to_string();
        let group = f.uint(sink, "group_id").unwrap_or(0);
        if group != 0 {
            label.push_str(&format!(" (GID={group:#x})"));
        }
        let name = sink.intern(&label);
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

/// `android_fs_*_start` / `_end`: a file read, write or fsync, on the thread that started
/// it, paired by inode and offset.
fn android_fs(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let (kind, slice_name) = match name {
        n if n.starts_with("android_fs_dataread") => {
            ("android_fs_dataread", "android_fs_data_read")
        }
        n if n.starts_with("android_fs_datawrite") => {
            ("android_fs_datawrite", "android_fs_data_write")
        }
        _ => ("android_fs_fsync", "android_fs_fsync"),
    };
    let key = PairKey {
        machine: o.machine,
        kind,
        a: f.uint(sink, "ino").unwrap_or(0),
        b: f.int(sink, "offset").unwrap_or(0) as u64,
    };
    if name.ends_with("_start") {
        let mut args = Vec::new();
        for k in ["bytes", "offset", "i_size"] {
            if let Some(v) = f.int(sink, k) {
                args.push(sink.static_arg(k, ArgValue::Int(v)));
            }
        }
        for k in ["cmdline", "pathbuf"] {
            if let Some(v) = f.str_id(sink, k) {
                args.push(sink.static_arg(k, ArgValue::Str(v)));
            }
        }
        let args = sink.args.push(&args);
        let track = sink.track(TrackKey::ThreadSlices(o.thread()));
        let name = sink.intern(slice_name);
        let data = EventData::PairBegin(Box::new((key, slice(track, NULL_STR, name, args))));
        o.push(sink, data);
    } else {
        o.push(sink, EventData::PairEnd(Box::new((key, NO_ARGS))));
    }
    Some(())
}

/// `block_io_start` / `_done`: an I/O on a block device, a slice from start to done on the
/// device's `block_io` tracks (dimension `block_device`), I/Os in flight together on
/// separate lanes: Trace Processor's track compressor keyed by the sector.
fn block_io(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let dev = f.uint(sink, "dev").unwrap_or(0);
    let sector = f.uint(sink, "sector").unwrap_or(0);
    let track_name = sink.intern("block_io");
    let set = AsyncSet {
        kind: "block_io",
        machine: o.machine,
        process: None,
        name: track_name,
        scope: sink.intern(&dev.to_string()),
    };
    if !sink.async_dims.contains_key(&set) {
        let dim = sink.static_arg("block_device", ArgValue::Uint(dev));
        let dims = sink.args.push_shared(&[dim]);
        sink.async_dims.insert(set, dims);
    }
    if name == "block_io_start" {
        let mut args = Vec::new();
        for k in ["sector", "nr_sector", "bytes", "ioprio"] {
            if let Some(v) = f.uint(sink, k) {
                args.push(sink.static_arg(k, ArgValue::Uint(v)));
            }
        }
        for k in ["rwbs", "comm", "cmd"] {
            if let Some(v) = f.str_id(sink, k) {
                args.push(sink.static_arg(k, ArgValue::Str(v)));
            }
        }
        let args = sink.args.push(&args);
        cookie_slice(sink, o, set, sector, Some(track_name), args);
    } else {
        cookie_slice(sink, o, set, sector, None, NO_ARGS);
    }
    Some(())
}
