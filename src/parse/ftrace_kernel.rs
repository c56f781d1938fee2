//! Kernel slices and counters Trace Processor derives from ftrace events beyond the core
//! ones of `ftrace_events.rs`: dma fences, GPU scheduler jobs and vblanks (handed to the
//! model's DRM tracker), kprobes, and the rest of the reference's ftrace parser. Hands on
//! slice, counter and DRM events to the sink.

use super::ftrace_events::{instant, slice, Fields, Origin};
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
        _ => return false,
    };
    let _ = done;
    true
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
