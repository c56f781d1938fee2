//! The DRM tracker: GPU fences, scheduler rings and vblanks from `dma_fence_*`,
//! `drm_sched_*`, `drm_run_job` and `drm_vblank_*` ftrace events, as Trace Processor's
//! DRM tracker builds them. A fence timeline (`fence-<timeline>-<context>`, type
//! `drm_fence`) shows the fence it waits on, one after another; a ring
//! (`sched-<ring>`, type `drm_sched_ring`) shows the job it runs, one after another; a
//! crtc (`vblank-<crtc>`, type `drm_vblank`) shows each vblank signalled and delivered.
//! Waiting for a fence is a `dma_fence_wait` slice on the waiting thread; queuing a job an
//! instant there. Hands on slices through the slice tracker.

use std::collections::VecDeque;

use super::*;

struct Timeline {
    track: u32,
    pending: VecDeque<u64>,
    has_emit: bool,
}

struct Ring {
    track: u32,
    /// Jobs running or queued to run, oldest first, with their args.
    running: VecDeque<ArgsRef>,
}

#[derive(Default)]
pub(super) struct DrmState {
    timelines: FxHashMap<(MachineId, u64), Timeline>,
    rings: FxHashMap<(MachineId, StrId), Ring>,
    /// The ring whose job a fence completes.
    ring_of_fence: FxHashMap<(MachineId, u64, u64), StrId>,
}

impl<'s> Builder<'s> {
    fn drm_track(&mut self, machine: MachineId, kind: &'static str, name: &str) -> u32 {
        let name = self.sink.intern(name);
        let key = self.sink.track(TrackKey::KernelSlices {
            machine,
            kind,
            name,
            dim: None,
        });
        self.resolve_track(key)
    }

    fn drm_slice(&mut self, name: &str, args: ArgsRef) -> SliceEvent {
        SliceEvent {
            track: 0,
            category: NULL_STR,
            name: self.sink.intern(name),
            args,
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        }
    }

    fn drm_args(&mut self, args: &[(&'static str, ArgValue)]) -> ArgsRef {
        let set: Vec<Arg> = args
            .iter()
            .map(|&(k, v)| self.sink.static_arg(k, v))
            .collect();
        self.sink.args.push(&set)
    }

    pub(super) fn drm(&mut self, ts: i64, ev: &DrmEvent) {
        self.note_ts(ts);
        let machine = ev.machine;
        let thread = ThreadRef {
            machine,
            tid: ev.tid,
            pid: None,
        };
        match ev.op {
            DrmOp::Vblank {
                crtc,
                seq,
                delivered,
            } => {
                let track = self.drm_track(machine, "drm_vblank", &format!("vblank-{crtc}"));
                let args = self.drm_args(&[("vblank seqno", ArgValue::Uint(seq))]);
                let name = if delivered { "deliver" } else { "signal" };
                let s = self.drm_slice(name, args);
                self.complete(track, ts, 0, NO_TS, &s, slice::Overlap::Drop);
            }
            DrmOp::SchedJob { ring, job } => {
                let utid = self.thread(thread);
                let track = self.thread_slices_track(utid);
                let args = self.drm_args(&[
                    ("gpu sched ring", ArgValue::Str(ring)),
                    ("gpu sched job", ArgValue::Uint(job)),
                ]);
                let s = self.drm_slice("drm_sched_job", args);
                self.complete(track, ts, 0, NO_TS, &s, slice::Overlap::Drop);
            }
            DrmOp::JobQueue {
                ring,
                context,
                seqno,
            } => {
                let utid = self.thread(thread);
                let track = self.thread_slices_track(utid);
                let args = self.drm_args(&[
                    ("gpu sched ring", ArgValue::Str(ring)),
                    ("fence context", ArgValue::Uint(context)),
                    ("fence seqno", ArgValue::Uint(seqno)),
                ]);
                let s = self.drm_slice("drm_sched_job_queue", args);
                self.complete(track, ts, 0, NO_TS, &s, slice::Overlap::Drop);
            }
            DrmOp::RunJob { ring, job, fence } => {
                let args = self.drm_args(&[("gpu sched job", ArgValue::Uint(job))]);
                self.ring_run(ts, machine, ring, args);
                self.drm.ring_of_fence.insert((machine, fence, 0), ring);
            }
            DrmOp::JobRun {
                ring,
                context,
                seqno,
            } => {
                let args = self.drm_args(&[
                    ("fence context", ArgValue::Uint(context)),
                    ("fence seqno", ArgValue::Uint(seqno)),
                ]);
                self.ring_run(ts, machine, ring, args);
                self.drm
                    .ring_of_fence
                    .insert((machine, context, seqno.wrapping_add(1)), ring);
            }
            DrmOp::ProcessJob { fence } => self.ring_done(ts, machine, (fence, 0)),
            DrmOp::JobDone { context, seqno } => {
                self.ring_done(ts, machine, (context, seqno.wrapping_add(1)))
            }
            DrmOp::FenceInit {
                context,
                timeline,
                seqno,
            } => {
                let t = self.fence_timeline(machine, context, timeline);
                let Some(tl) = self.drm.timelines.get_mut(&(machine, context)) else {
                    return;
                };
                // Once the timeline emits, inits say nothing new.
                if tl.has_emit {
                    return;
                }
                let begin = tl.pending.is_empty();
                tl.pending.push_back(seqno);
                if begin {
                    self.fence_begin(ts, t, seqno);
                }
            }
            DrmOp::FenceEmit {
                context,
                timeline,
                seqno,
            } => {
                let t = self.fence_timeline(machine, context, timeline);
                let Some(tl) = self.drm.timelines.get_mut(&(machine, context)) else {
                    return;
                };
                let mut end_first = false;
                if !tl.has_emit {
                    tl.has_emit = true;
                    if !tl.pending.is_empty() {
                        tl.pending.clear();
                        end_first = true;
                    }
                }
                let begin = tl.pending.is_empty();
                tl.pending.push_back(seqno);
                if end_first {
                    let end = self.drm_slice("fence", NO_ARGS);
                    self.end(t, ts, &end);
                }
                if begin {
                    self.fence_begin(ts, t, seqno);
                }
            }
            DrmOp::FenceSignaled {
                context,
                timeline,
                seqno,
            } => {
                let t = self.fence_timeline(machine, context, timeline);
                let Some(tl) = self.drm.timelines.get_mut(&(machine, context)) else {
                    return;
                };
                if tl.pending.front().is_none_or(|&first| seqno < first) {
                    return;
                }
                tl.pending.pop_front();
                let next = tl.pending.front().copied();
                let end = self.drm_slice("fence", NO_ARGS);
                self.end(t, ts, &end);
                if let Some(next) = next {
                    self.fence_begin(ts, t, next);
                }
            }
            DrmOp::FenceWaitStart { context, seqno } => {
                let utid = self.thread(thread);
                let track = self.thread_slices_track(utid);
                let args = self.drm_args(&[
                    ("fence context", ArgValue::Uint(context)),
                    ("fence seqno", ArgValue::Uint(seqno)),
                ]);
                let s = self.drm_slice("dma_fence_wait", args);
                self.begin(track, ts, &s);
            }
            DrmOp::FenceWaitEnd => {
                let utid = self.thread(thread);
                let track = self.thread_slices_track(utid);
                let s = self.drm_slice("dma_fence_wait", NO_ARGS);
                self.end(track, ts, &s);
            }
        }
    }

    fn fence_timeline(&mut self, machine: MachineId, context: u64, timeline: StrId) -> u32 {
        if let Some(t) = self.drm.timelines.get(&(machine, context)) {
            return t.track;
        }
        let name = self.sink.strings.get(timeline).unwrap_or("").to_string();
        let track = self.drm_track(machine, "drm_fence", &format!("fence-{name}-{context}"));
        self.drm.timelines.insert(
            (machine, context),
            Timeline {
                track,
                pending: VecDeque::new(),
                has_emit: false,
            },
        );
        track
    }

    fn fence_begin(&mut self, ts: i64, track: u32, seqno: u64) {
        let args = self.drm_args(&[("fence seqno", ArgValue::Uint(seqno))]);
        let s = self.drm_slice("fence", args);
        self.begin(track, ts, &s);
    }

    fn ring(&mut self, machine: MachineId, ring: StrId) -> u32 {
        if let Some(r) = self.drm.rings.get(&(machine, ring)) {
            return r.track;
        }
        let name = self.sink.strings.get(ring).unwrap_or("").to_string();
        let track = self.drm_track(machine, "drm_sched_ring", &format!("sched-{name}"));
        self.drm.rings.insert(
            (machine, ring),
            Ring {
                track,
                running: VecDeque::new(),
            },
        );
        track
    }

    fn ring_run(&mut self, ts: i64, machine: MachineId, ring: StrId, args: ArgsRef) {
        let track = self.ring(machine, ring);
        let Some(r) = self.drm.rings.get_mut(&(machine, ring)) else {
            return;
        };
        r.running.push_back(args);
        if r.running.len() == 1 {
            let s = self.drm_slice("job", args);
            self.begin(track, ts, &s);
        }
    }

    fn ring_done(&mut self, ts: i64, machine: MachineId, fence: (u64, u64)) {
        let Some(ring) = self.drm.ring_of_fence.remove(&(machine, fence.0, fence.1)) else {
            return;
        };
        let track = self.ring(machine, ring);
        let Some(r) = self.drm.rings.get_mut(&(machine, ring)) else {
            return;
        };
        r.running.pop_front();
        let next = r.running.front().copied();
        let end = self.drm_slice("job", NO_ARGS);
        self.end(track, ts, &end);
        if let Some(args) = next {
            let s = self.drm_slice("job", args);
            self.begin(track, ts, &s);
        }
    }
}
