//! Memory events of the one ftrace handler, as Trace Processor's ftrace parser reads them:
//! `rss_stat` (and its throttled form) and `dmabuf_rss_stat` (process memory counters the
//! model attributes, `model/memory.rs`), ION and DMA-BUF heaps (`ion_heap_grow` /
//! `_shrink`, `ion_stat`, `dma_heap_stat`: heap totals, per-thread changes and one slice
//! per live buffer), `fastrpc_dma_stat`, `mm_event_record`, CMA allocations, direct
//! reclaim, slab shrinking and Pixel's kswapd. Hands on counters, slices and kernel ops.

use super::ftrace_events::{
    arg_set, cookie_slice, global_set, kernel_op, kernel_version, slice, thread_track, Blueprint,
    Fields, Origin,
};
use crate::ir::*;

/// The kernel's MM_* counters, by `rss_stat` member, as the reference names them: every
/// member past `mem.unreclaimable` (4) is `mem.unknown`, so `rss_stat_unknown_keys` is
/// never written (behaviour-systrace-events.md §4 `rss_stat`, behaviour-stats.md row 98).
const RSS_MEMBERS: [&str; 6] = [
    "mem.rss.file",
    "mem.rss.anon",
    "mem.swap",
    "mem.rss.shmem",
    "mem.unreclaimable",
    "mem.unknown",
];

/// `mm_event_record` types, by number.
const MM_EVENT_TYPES: [&str; 7] = [
    "mem.mm.min_flt",
    "mem.mm.maj_flt",
    "mem.mm.read_io",
    "mem.mm.compaction",
    "mem.mm.reclaim",
    "mem.mm.swp_flt",
    "mem.mm.kern_alloc",
];

/// FastRPC's DSPs by channel id (the reference spells the first `ASDP`).
const FASTRPC_DSPS: [&str; 4] = ["ASDP", "MDSP", "SDSP", "CDSP"];

/// Handles the event if it is one of this module's kinds.
pub(crate) fn handle(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> bool {
    let done = match name {
        "rss_stat" | "rss_stat_throttled" => rss_stat(sink, o, f),
        "dmabuf_rss_stat" => dmabuf_rss(sink, o, f),
        "ion_heap_grow" | "ion_heap_shrink" => ion_heap(sink, o, f, name == "ion_heap_grow"),
        "ion_stat" => buffer_stat(sink, o, f, Heap::Ion),
        "dma_heap_stat" => buffer_stat(sink, o, f, Heap::Dma),
        "fastrpc_dma_stat" => fastrpc(sink, o, f),
        "mm_event_record" => mm_event(sink, o, f),
        "cma_alloc_start" | "cma_alloc_info" => cma(sink, o, name, f),
        "mm_vmscan_direct_reclaim_begin" | "mm_vmscan_direct_reclaim_end" => {
            direct_reclaim(sink, o, name, f)
        }
        "pixel_mm_kswapd_wake" | "pixel_mm_kswapd_done" => kswapd(sink, o, name, f),
        _ => return false,
    };
    let _ = done;
    true
}

/// Handles `mm_shrink_slab_start` / `_end`, whose shrinker is a kernel symbol.
pub(crate) fn shrink_slab(
    sink: &mut Sink,
    o: &Origin,
    name: &str,
    f: &Fields,
    symbol: &dyn Fn(u64) -> Option<StrId>,
) -> Option<()> {
    let track = thread_track(sink, o.machine, o.pid);
    if name == "mm_shrink_slab_start" {
        let shrink = f.uint(sink, "shrink").unwrap_or(0);
        let shrink = match symbol(shrink) {
            Some(s) => s,
            None => sink.intern(&format!("{shrink:#x}")),
        };
        let args = arg_set(
            sink,
            &[
                ("shrink_name", ArgValue::Str(shrink)),
                (
                    "total_scan",
                    ArgValue::Uint(f.uint(sink, "total_scan").unwrap_or(0)),
                ),
                (
                    "priority",
                    ArgValue::Int(f.int(sink, "priority").unwrap_or(0)),
                ),
            ],
        );
        let name = sink.intern("mm_vmscan_shrink_slab");
        o.push(sink, EventData::Begin(slice(track, NULL_STR, name, args)));
    } else {
        let freed = f.int(sink, "retval").unwrap_or(0);
        let args = arg_set(sink, &[("shrink_freed", ArgValue::Int(freed))]);
        o.push(sink, EventData::End(slice(track, NULL_STR, NULL_STR, args)));
    }
    Some(())
}

/// `rss_stat`: the model attributes the counter to the thread that owns the memory map.
/// Text lines are attributed to their own thread (the reference's text parser never looks
/// the map up).
fn rss_stat(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let (size, member, curr, mm_id) = match f {
        Fields::Text(_) => {
            let size = f.int(sink, "size")?;
            let member = f.uint(sink, "member")?;
            (size, member, None, None)
        }
        Fields::Proto(_) => (
            f.int(sink, "size").unwrap_or(0),
            f.uint(sink, "member").unwrap_or(0),
            f.uint(sink, "curr").map(|c| c != 0),
            f.int(sink, "mm_id"),
        ),
    };
    let last = RSS_MEMBERS.len() - 1;
    let name = RSS_MEMBERS[usize::try_from(member).map_or(last, |m| m.min(last))];
    if size < 0 {
        sink.stat("rss_stat_negative_size", o.machine, 1);
        return None;
    }
    let name = sink.intern(name);
    let op = KernelOp::RssStat {
        tid: o.pid,
        name,
        size,
        curr,
        mm_id,
    };
    kernel_op(sink, o, op);
    Some(())
}

/// A process memory counter reported by one of its threads.
fn process_counter_for_thread(sink: &mut Sink, o: &Origin, name: &str, kind: &'static str, v: f64) {
    let name = sink.intern(name);
    let track = sink.track(TrackKey::ThreadProcessCounter {
        thread: o.thread(),
        name,
        kind,
    });
    o.push(
        sink,
        EventData::Counter {
            track,
            value: Real(v),
            args: NO_ARGS,
        },
    );
}

/// `dmabuf_rss_stat`: the DMA-BUF memory mapped by the thread's process.
fn dmabuf_rss(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let rss = f.uint(sink, "rss").unwrap_or(0);
    process_counter_for_thread(sink, o, "mem.dmabuf_rss", "process_memory", rss as f64);
    Some(())
}

/// `ion_heap_grow` / `_shrink`: the heap's total after the change (the event reports it
/// before), and the change on the thread.
fn ion_heap(sink: &mut Sink, o: &Origin, f: &Fields, grow: bool) -> Option<()> {
    let len = f.uint(sink, "len").unwrap_or(0) as i64;
    let change = if grow { len } else { -len };
    let total = f
        .int(sink, "total_allocated")
        .unwrap_or(0)
        .wrapping_add(change);
    let heap = f.string(sink, "heap_name").map(|h| h.into_owned());
    let (total_name, change_name) = match &heap {
        Some(h) => (format!("mem.ion.{h}"), format!("mem.ion_change.{h}")),
        None => ("mem.ion".to_string(), "mem.ion_change".to_string()),
    };
    Blueprint::counter("ion", &total_name).counter_at(sink, o, total as f64, NO_ARGS);
    thread_counter(sink, o, &change_name, "ion_change", change as f64, NO_ARGS);
    Some(())
}

fn thread_counter(
    sink: &mut Sink,
    o: &Origin,
    name: &str,
    kind: &'static str,
    v: f64,
    args: ArgsRef,
) {
    let name = sink.intern(name);
    let track = sink.track(TrackKey::ThreadCounter {
        thread: o.thread(),
        name,
        kind,
    });
    o.push(
        sink,
        EventData::Counter {
            track,
            value: Real(v),
            args,
        },
    );
}

#[derive(Clone, Copy, PartialEq)]
enum Heap {
    Ion,
    Dma,
}

/// `ion_stat` / `dma_heap_stat`: the heap's total, the change on the thread, and a slice
/// per buffer while it is allocated (`<len / 1024> kB`).
fn buffer_stat(sink: &mut Sink, o: &Origin, f: &Fields, heap: Heap) -> Option<()> {
    let len = f.int(sink, "len").unwrap_or(0);
    let total = f.uint(sink, "total_allocated").unwrap_or(0);
    let (buffer, total_bp, change, buffers) = match heap {
        Heap::Ion => (
            f.uint(sink, "buffer_id").unwrap_or(0),
            Blueprint::counter("ion", "mem.ion"),
            ("mem.ion_change", "ion_change"),
            ("android_ion_allocations", "mem.ion_buffer"),
        ),
        Heap::Dma => (
            f.uint(sink, "inode").unwrap_or(0),
            Blueprint::counter("android_dma_heap", "mem.dma_heap"),
            ("mem.dma_heap_change", "android_dma_heap_change"),
            ("android_dma_allocations", "mem.dma_buffer"),
        ),
    };
    total_bp.counter_at(sink, o, total as f64, NO_ARGS);
    let args = match heap {
        Heap::Ion => NO_ARGS,
        Heap::Dma => arg_set(sink, &[("inode", ArgValue::Int(buffer as i64))]),
    };
    thread_counter(sink, o, change.0, change.1, len as f64, args);
    let set = global_set(sink, o.machine, buffers.0, buffers.1);
    let name = (len > 0).then(|| sink.intern(&format!("{} kB", len / 1024)));
    cookie_slice(sink, o, set, buffer, name, NO_ARGS);
    Some(())
}

/// `fastrpc_dma_stat`: a DSP channel's total and the change on the thread.
fn fastrpc(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let cid = f.int(sink, "cid").unwrap_or(0);
    let (total_name, change_name) =
        match usize::try_from(cid).ok().and_then(|c| FASTRPC_DSPS.get(c)) {
            Some(dsp) => (
                format!("mem.fastrpc[{dsp}]"),
                format!("mem.fastrpc_change[{dsp}]"),
            ),
            None => (
                format!("mem.fastrpc[{cid}]"),
                format!("mem.fastrpc_change[{cid}]"),
            ),
        };
    let total = f.uint(sink, "total_allocated").unwrap_or(0);
    let len = f.int(sink, "len").unwrap_or(0);
    Blueprint::counter("android_fastrpc", &total_name).counter_at(sink, o, total as f64, NO_ARGS);
    thread_counter(
        sink,
        o,
        &change_name,
        "android_fastrpc_change",
        len as f64,
        NO_ARGS,
    );
    Some(())
}

/// `mm_event_record`: a memory event's count and latencies for the thread's process.
fn mm_event(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let ty = f.uint(sink, "type").unwrap_or(0);
    let Some(prefix) = usize::try_from(ty).ok().and_then(|t| MM_EVENT_TYPES.get(t)) else {
        sink.stat("mm_unknown_type", o.machine, 1);
        return None;
    };
    for (metric, key) in [
        ("count", "count"),
        ("max_lat", "max_lat"),
        ("avg_lat", "avg_lat"),
    ] {
        let value = f.uint(sink, key).unwrap_or(0);
        let name = format!("{prefix}.{metric}");
        process_counter_for_thread(sink, o, &name, "mm_event", value as f64);
    }
    Some(())
}

/// `cma_alloc_start` / `cma_alloc_info`: a contiguous allocation as a slice on the thread
/// (kernels from 5.10, which have the info event; others are ignored, as the reference
/// ignores them when it cannot tell).
fn cma(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    if kernel_version(sink, o.machine).is_none_or(|v| v < (5, 10)) {
        return None;
    }
    let track = thread_track(sink, o.machine, o.pid);
    if name == "cma_alloc_start" {
        let name = sink.intern("mm_cma_alloc");
        o.push(
            sink,
            EventData::Begin(slice(track, NULL_STR, name, NO_ARGS)),
        );
        return Some(());
    }
    let cma_name = f.str_id(sink, "name").unwrap_or(NULL_STR);
    let u = |sink: &Sink, k: &str| ArgValue::Uint(f.uint(sink, k).unwrap_or(0));
    let args = [
        ("cma_name", ArgValue::Str(cma_name)),
        ("cma_pfn", u(sink, "pfn")),
        ("cma_req_pages", u(sink, "count")),
        ("cma_nr_migrated", u(sink, "nr_migrated")),
        ("cma_nr_reclaimed", u(sink, "nr_reclaimed")),
        ("cma_nr_mapped", u(sink, "nr_mapped")),
        ("cma_nr_isolate_fail", u(sink, "err_iso")),
        ("cma_nr_migrate_fail", u(sink, "err_mig")),
        ("cma_nr_test_fail", u(sink, "err_test")),
    ];
    let args = arg_set(sink, &args);
    o.push(sink, EventData::End(slice(track, NULL_STR, NULL_STR, args)));
    Some(())
}

/// `mm_vmscan_direct_reclaim_begin` / `_end`: direct reclaim as a slice on the thread.
fn direct_reclaim(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let track = thread_track(sink, o.machine, o.pid);
    if name == "mm_vmscan_direct_reclaim_begin" {
        let i = |sink: &Sink, k: &str| ArgValue::Int(f.int(sink, k).unwrap_or(0));
        let args = [
            ("order", i(sink, "order")),
            ("may_writepage", i(sink, "may_writepage")),
            ("gfp_flags", i(sink, "gfp_flags")),
        ];
        let args = arg_set(sink, &args);
        let name = sink.intern("mm_vmscan_direct_reclaim");
        o.push(sink, EventData::Begin(slice(track, NULL_STR, name, args)));
    } else {
        let reclaimed = f.int(sink, "nr_reclaimed").unwrap_or(0);
        let args = arg_set(sink, &[("nr_reclaimed", ArgValue::Int(reclaimed))]);
        o.push(sink, EventData::End(slice(track, NULL_STR, NULL_STR, args)));
    }
    Some(())
}

/// Pixel's `pixel_mm_kswapd_wake` / `_done`: a kswapd run as a slice on its thread.
fn kswapd(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let track = thread_track(sink, o.machine, o.pid);
    if name == "pixel_mm_kswapd_wake" {
        let name = sink.intern("kswapd");
        o.push(
            sink,
            EventData::Begin(slice(track, NULL_STR, name, NO_ARGS)),
        );
    } else {
        let u = |sink: &Sink, k: &str| ArgValue::Uint(f.uint(sink, k).unwrap_or(0));
        let args = [
            ("delta_nr_scanned", u(sink, "delta_nr_scanned")),
            ("delta_nr_reclaimed", u(sink, "delta_nr_reclaimed")),
            ("delta_nr_allocated", u(sink, "delta_nr_allocated")),
            ("duration_ns", u(sink, "duration_ns")),
        ];
        let args = arg_set(sink, &args);
        o.push(sink, EventData::End(slice(track, NULL_STR, NULL_STR, args)));
    }
    Some(())
}
