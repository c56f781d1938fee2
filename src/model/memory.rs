//! The memory tracker: `rss_stat` counters attributed to the thread that owns the memory
//! map (Trace Processor's RssStatTracker), process counters reported by a thread (kept
//! until the import ends, when the thread's process is known), and per-process GPU memory
//! from ftrace (only for pids that are known threads). Hands on counter rows.

use super::*;

#[derive(Default)]
pub(super) struct MemoryState {
    /// The thread that last reported each memory map as its own.
    mm_owners: FxHashMap<(MachineId, i64), u32>,
    /// Process counters reported by a thread, in arrival order: their rows keep the id
    /// they were given then, their track is chosen when the import ends.
    for_thread: Vec<ThreadProcessCounter>,
}

/// A process counter a thread reported (`rss_stat`, `oom_score_adj_update`, ...), waiting
/// for the end of the import to know the thread's process.
struct ThreadProcessCounter {
    id: u32,
    ts: i64,
    utid: u32,
    name: StrId,
    kind: &'static str,
    value: f64,
    args: ArgsRef,
}

impl Builder<'_> {
    /// `args` with the arg `utid` (a process counter reported by one of its threads).
    pub(super) fn with_utid_arg(&mut self, args: ArgsRef, utid: u32) -> ArgsRef {
        let arg = self.sink.static_arg("utid", ArgValue::Int(i64::from(utid)));
        if args == NO_ARGS {
            return self.sink.args.push_shared(&[arg]);
        }
        let mut set: Vec<Arg> = self.sink.args.get(args).to_vec();
        set.push(arg);
        self.sink.args.push(&set)
    }

    /// A counter of the thread's process. As in Trace Processor (EventTracker's
    /// PushProcessCounterForThread), the row is numbered now (with arg `utid`) and its
    /// track chosen when the import ends: the process track (type, name, upid) shared with
    /// every other source of that counter if the thread is in a process by then, else a
    /// per-thread `*_thread_fallback` track. So a thread bound late (process_tree, atrace)
    /// still lands on its process's one track, and those tracks come after the others.
    pub(super) fn process_counter_for_thread(
        &mut self,
        ts: i64,
        utid: u32,
        name: StrId,
        kind: &'static str,
        value: f64,
    ) {
        self.process_counter_for_thread_with_args(ts, utid, name, kind, value, NO_ARGS);
    }

    pub(super) fn process_counter_for_thread_with_args(
        &mut self,
        ts: i64,
        utid: u32,
        name: StrId,
        kind: &'static str,
        value: f64,
        args: ArgsRef,
    ) {
        self.note_ts(ts);
        let args = self.with_utid_arg(args, utid);
        let id = self.tables.counter_count;
        self.tables.counter_count += 1;
        self.memory.for_thread.push(ThreadProcessCounter {
            id,
            ts,
            utid,
            name,
            kind,
            value,
            args,
        });
    }

    /// End of import: each process counter reported by a thread goes to its track (see
    /// [`Self::process_counter_for_thread`]), tracks made in the order of the rows.
    pub(super) fn settle_process_counters_for_threads(&mut self) {
        for c in std::mem::take(&mut self.memory.for_thread) {
            let track = match self.tables.threads[c.utid as usize].upid {
                Some(upid) => self.process_counter_track(upid, c.name, c.kind),
                None => self.thread_counter_track(c.utid, c.name, thread_fallback_kind(c.kind)),
            };
            let row = CounterRow {
                ts: c.ts,
                track,
                value: c.value,
                args: c.args,
            };
            self.out.counter(c.id, &row, self.sink);
        }
    }

    /// `rss_stat`: with a memory map and `curr`, the event names the map's owner — itself
    /// when `curr`, else whichever thread last reported the map as its own, as long as that
    /// thread is alive (else the event is dropped and counted).
    pub(super) fn rss_stat(
        &mut self,
        ts: i64,
        machine: MachineId,
        tid: i64,
        (name, size): (StrId, i64),
        curr: Option<bool>,
        mm_id: Option<i64>,
    ) {
        let bare = ThreadRef {
            machine,
            tid,
            pid: None,
        };
        let utid = match (mm_id, curr) {
            (Some(mm), Some(true)) => {
                let utid = self.thread(bare);
                self.memory.mm_owners.insert((machine, mm), utid);
                Some(utid)
            }
            (Some(mm), Some(false)) => match self.memory.mm_owners.get(&(machine, mm)).copied() {
                None => None,
                Some(owner) if !self.thread_alive(machine, owner) => {
                    self.memory.mm_owners.remove(&(machine, mm));
                    None
                }
                Some(owner) => Some(owner),
            },
            _ => Some(self.thread(bare)),
        };
        match utid {
            Some(utid) => {
                self.process_counter_for_thread(ts, utid, name, "process_memory", size as f64)
            }
            None => {
                let mrow = self.machine_row(machine);
                self.stat("rss_stat_unknown_thread_for_mm_id", mrow);
            }
        }
    }

    /// `gpu_mem_total` of a process from ftrace: kernel workers report it after the
    /// process died, so a pid that is not a known thread is ignored (no process is made
    /// up); a known one is that process's main thread.
    pub(super) fn gpu_mem_total(
        &mut self,
        ts: i64,
        machine: MachineId,
        pid: i64,
        gpu: u32,
        size: u64,
    ) {
        if self.latest_live_thread(machine, pid).is_none() {
            return;
        }
        self.thread(ThreadRef {
            machine,
            tid: pid,
            pid: Some(pid),
        });
        let dims = [self.sink.static_arg("gpu", ArgValue::Int(i64::from(gpu)))];
        let probe = ProbeTrack {
            machine,
            kind: "process_gpu_memory",
            name: self.sink.intern("GPU Memory"),
            scope: ProbeScope::Process(ProcessRef { machine, pid }),
            dims: self.sink.args.push_shared(&dims),
            unit: self.sink.intern("bytes"),
            description: NULL_STR,
            source_args: NO_ARGS,
            slices: false,
        };
        let id = self.sink.probe_tracks.intern(probe);
        let key = self.sink.track(TrackKey::Probe(id));
        let track = self.resolve_track(key);
        self.note_ts(ts);
        let row = CounterRow {
            ts,
            track,
            value: size as f64,
            args: NO_ARGS,
        };
        self.out.counter(self.tables.counter_count, &row, self.sink);
        self.tables.counter_count += 1;
    }
}

/// The track type of a process counter left on its thread (its process never known).
fn thread_fallback_kind(kind: &'static str) -> &'static str {
    match kind {
        "process_memory" => "process_memory_thread_fallback",
        "oom_score_adj" => "oom_score_adj_thread_fallback",
        "mm_event" => "mm_event_thread_fallback",
        "android_dmabuf_rss" => "android_dmabuf_rss_thread_fallback",
        other => other,
    }
}
