//! The memory tracker: `rss_stat` counters attributed to the thread that owns the memory
//! map (Trace Processor's RssStatTracker), and per-process GPU memory from ftrace (only
//! for pids that are known threads). Hands on counter rows.

use super::*;

#[derive(Default)]
pub(super) struct MemoryState {
    /// The thread that last reported each memory map as its own.
    mm_owners: FxHashMap<(MachineId, i64), u32>,
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

    /// A counter of the thread's process, or of the thread while its process is unknown.
    pub(super) fn process_counter_for_thread(
        &mut self,
        ts: i64,
        utid: u32,
        name: StrId,
        kind: &'static str,
        value: f64,
    ) {
        let track = match self.tables.threads[utid as usize].upid {
            Some(upid) => self.process_counter_track(upid, name, kind),
            None => self.thread_counter_track(utid, name, kind, true),
        };
        self.note_ts(ts);
        let args = self.with_utid_arg(NO_ARGS, utid);
        let row = CounterRow {
            ts,
            track,
            value,
            args,
        };
        self.out.counter(self.tables.counter_count, &row, self.sink);
        self.tables.counter_count += 1;
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
