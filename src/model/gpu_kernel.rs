//! The GPU and video device tracker for kernel events that need what came before them:
//! Adreno command batches placed on the GPU's timeline (`GPU <process> (Ctx=<ctx>,
//! Prio=<prio>)` tracks, type `adreno_gpu_cmdbatch`) from the GPU tick counter's sync
//! points, V4L2 buffers linked queue → dequeue by flows, and virtio-gpu command latency.
//! Hands on slices, flows and counter rows.

use super::*;

/// The Adreno always-on counter's rate: 19.2 MHz.
const ADRENO_TICKS_PER_SEC: i128 = 19_200_000;

#[derive(Default)]
pub(super) struct GpuKernelState {
    /// The latest (trace time, GPU ticks) sync point per machine.
    adreno_sync: FxHashMap<MachineId, (i64, u64)>,
    /// The thread that queued each (context, timestamp) command batch.
    adreno_queued: FxHashMap<(MachineId, u32, u32), i64>,
    /// Queued V4L2 buffers waiting for their dequeue: the queue's slice.
    v4l2_queued: FxHashMap<(MachineId, u64), Option<u32>>,
    /// Start of virtio-gpu commands awaiting an answer, by (latency track, seqno).
    virtio_started: FxHashMap<(TrackRef, u32), i64>,
}

impl Builder<'_> {
    pub(super) fn kernel_event(&mut self, ts: i64, ev: &KernelEvent) {
        let machine = ev.machine;
        match ev.op {
            KernelOp::SuspendResume {
                action,
                name,
                start,
            } => self.suspend_resume(ts, machine, action, name, start),
            KernelOp::Wakelock { name, activate } => self.wakelock(ts, machine, name, activate),
            KernelOp::GpuMemTotal { pid, gpu, size } => {
                self.gpu_mem_total(ts, machine, pid, gpu, size)
            }
            KernelOp::RssStat {
                tid,
                name,
                size,
                curr,
                mm_id,
            } => self.rss_stat(ts, machine, tid, (name, size), curr, mm_id),
            KernelOp::AdrenoQueued { ctx, seqno } => {
                self.gpu_kernel
                    .adreno_queued
                    .insert((machine, ctx, seqno), ev.tid);
            }
            KernelOp::AdrenoSync { ticks } => {
                self.gpu_kernel.adreno_sync.insert(machine, (ts, ticks));
            }
            KernelOp::AdrenoRetired {
                ctx,
                seqno,
                prio,
                start,
                retire,
            } => self.adreno_retired(machine, ev.tid, (ctx, seqno, prio), start, retire),
            KernelOp::SliceArgs { slice } => {
                self.note_ts(ts);
                let track = self.resolve_track(slice.track);
                if let Some(open) = self.open_slice_matching(track, slice.category, slice.name) {
                    let args = self.sink.args.get(slice.args).to_vec();
                    self.add_slice_args(open, &args);
                }
            }
            KernelOp::V4l2Buffer { slice, key, queue } => {
                self.v4l2_buffer(ts, machine, slice, key, queue)
            }
            KernelOp::VirtioGpuLatency {
                track,
                seqno,
                start,
            } => {
                if start {
                    self.gpu_kernel.virtio_started.insert((track, seqno), ts);
                } else if let Some(begin) = self.gpu_kernel.virtio_started.remove(&(track, seqno)) {
                    let track = self.resolve_track(track);
                    self.note_ts(ts);
                    let row = CounterRow {
                        ts,
                        track,
                        value: (ts - begin) as f64,
                        args: NO_ARGS,
                    };
                    self.out.counter(self.tables.counter_count, &row, self.sink);
                    self.tables.counter_count += 1;
                }
            }
        }
    }

    /// A retired Adreno batch: a `GPU` slice from its start to its retirement in GPU
    /// ticks, placed through the latest sync point, on the track of its context and
    /// priority named after the process that queued it.
    fn adreno_retired(
        &mut self,
        machine: MachineId,
        tid: i64,
        (ctx, seqno, prio): (u32, u32, i64),
        start: u64,
        retire: u64,
    ) {
        let Some(&(sync_ts, sync_ticks)) = self.gpu_kernel.adreno_sync.get(&machine) else {
            return;
        };
        let to_ts = |ticks: u64| {
            let delta = i128::from(ticks) - i128::from(sync_ticks);
            let ns = delta * 1_000_000_000 / ADRENO_TICKS_PER_SEC;
            i64::try_from(i128::from(sync_ts) + ns).ok()
        };
        let (Some(begin), Some(end)) = (to_ts(start), to_ts(retire)) else {
            return;
        };
        if end < begin {
            return;
        }
        let submitter = self
            .gpu_kernel
            .adreno_queued
            .remove(&(machine, ctx, seqno))
            .unwrap_or(tid);
        let utid = self.thread(ThreadRef {
            machine,
            tid: submitter,
            pid: None,
        });
        let who = match self.tables.threads[utid as usize].upid {
            Some(upid) => {
                let p = &self.tables.processes[upid as usize];
                match self.sink.strings.get(p.name) {
                    Some(n) => n.to_string(),
                    None => p.pid.to_string(),
                }
            }
            None => submitter.to_string(),
        };
        let name = self
            .sink
            .intern(&format!("GPU {who} (Ctx={ctx}, Prio={prio})"));
        let key = self.sink.track(TrackKey::KernelSlices {
            machine,
            kind: "adreno_gpu_cmdbatch",
            name,
            dim: None,
        });
        let track = self.resolve_track(key);
        let s = SliceEvent {
            track: key,
            category: NULL_STR,
            name: self.sink.intern("GPU"),
            args: NO_ARGS,
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        self.note_ts(begin);
        self.note_ts(end);
        self.complete(track, begin, end - begin, NO_TS, &s, slice::Overlap::Drop);
    }

    /// A V4L2 buffer event: its instant, and a flow from the buffer's queue to its
    /// dequeue (the first queue of a buffer is kept until it is dequeued).
    fn v4l2_buffer(
        &mut self,
        ts: i64,
        machine: MachineId,
        s: SliceEvent,
        key: u64,
        queue: Option<bool>,
    ) {
        let track = self.resolve_track(s.track);
        self.note_ts(ts);
        let id = self.complete(track, ts, 0, NO_TS, &s, slice::Overlap::Drop);
        match queue {
            Some(true) => {
                self.gpu_kernel
                    .v4l2_queued
                    .entry((machine, key))
                    .or_insert(id);
            }
            Some(false) => {
                if let Some(queued) = self.gpu_kernel.v4l2_queued.remove(&(machine, key)) {
                    if let (Some(slice_out), Some(slice_in)) = (queued, id) {
                        self.tables.flows.push(FlowRow {
                            slice_out,
                            slice_in,
                            trace_id: None,
                            args: NO_ARGS,
                        });
                    }
                }
            }
            None => {}
        }
    }
}
