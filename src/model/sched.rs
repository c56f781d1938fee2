//! Scheduling and raw kernel events: sched_switch into sched rows, raw ftrace rows,
//! syscalls. Hands on sched and ftrace_event rows.

use super::*;

impl<'s> Builder<'s> {
    pub(super) fn sched_switch(&mut self, ts: i64, s: &SchedSwitch) {
        let ucpu = self.cpu(s.machine, s.cpu);
        let prev = self.thread(ThreadRef {
            machine: s.machine,
            tid: s.prev_tid,
            pid: None,
        });
        self.set_thread_name(prev, s.prev_comm, NamePriority::Ftrace);
        let next = self.thread(ThreadRef {
            machine: s.machine,
            tid: s.next_tid,
            pid: None,
        });
        self.set_thread_name(next, s.next_comm, NamePriority::Ftrace);
        if let Some((id, mut row)) = self.sched_pending.remove(&(s.machine, s.cpu)) {
            let tid = self.tables.threads[row.utid as usize].tid;
            if tid == s.prev_tid {
                row.dur = ts - row.ts;
                row.end_state = s.prev_state;
            } else {
                let m = self.tables.threads[prev as usize].machine;
                self.stat("mismatched_sched_switch_tids", m);
            }
            self.out.sched(id, &row, self.sink);
        }
        let id = self.tables.sched_count;
        self.tables.sched_count += 1;
        let row = SchedRow {
            ts,
            dur: -1,
            cpu: s.cpu,
            ucpu,
            utid: next,
            end_state: NULL_STR,
            priority: s.next_prio,
        };
        self.sched_pending.insert((s.machine, s.cpu), (id, row));
        self.thread_state_switch(ts, prev, s.prev_state, next, (s.cpu, ucpu));
    }

    // ----- driver ----------------------------------------------------------------------

    /// An ftrace event's `ftrace_event` row.
    pub(super) fn ftrace_raw(&mut self, ts: i64, raw: &FtraceRaw) {
        let utid = self.thread(ThreadRef {
            machine: raw.machine,
            tid: raw.tid,
            pid: None,
        });
        let ucpu = self.cpu(raw.machine, raw.cpu);
        let row = FtraceEventRow {
            ts,
            name: raw.name,
            cpu: raw.cpu,
            utid,
            args: raw.args,
            common_flags: raw.common_flags,
            ucpu,
        };
        let id = self.tables.ftrace_event_count;
        self.tables.ftrace_event_count += 1;
        self.note_ts(ts);
        self.out.ftrace_event(id, &row, self.sink);
    }

    /// A compact `sched_switch`'s raw row. Its `prev_comm` is the switched-out task's name
    /// in the thread table now (the encoding has none), as Trace Processor looks it up.
    pub(super) fn compact_switch_raw(&mut self, ts: i64, s: &CompactSwitchRaw) {
        let prev = self.thread(ThreadRef {
            machine: s.machine,
            tid: s.prev_pid,
            pid: None,
        });
        let prev_comm = self.tables.threads[prev as usize].name;
        let args = self.sink.sched_switch_args(
            (prev_comm, s.prev_pid, s.prev_prio, s.prev_state),
            (s.next_comm, s.next_pid, s.next_prio),
        );
        let raw = FtraceRaw {
            machine: s.machine,
            cpu: s.cpu,
            tid: s.prev_pid,
            name: self.sink.intern_static("sched_switch"),
            args: self.sink.args.push_shared(&args),
            common_flags: None,
        };
        self.ftrace_raw(ts, &raw);
    }

    /// A syscall's begin or end, named for the machine's architecture.
    pub(super) fn syscall(
        &mut self,
        ts: i64,
        track: TrackRef,
        machine: MachineId,
        number: i64,
        args: ArgsRef,
        enter: bool,
    ) {
        let arch = self
            .sink
            .machines
            .get(&machine)
            .and_then(|m| m.arch.as_deref());
        let Some(name) = arch.and_then(|arch| syscall::name(arch, number)) else {
            let row = self.machine_row(machine);
            self.stat("syscall_unknown", row);
            return;
        };
        let slice = SliceEvent {
            track,
            category: NULL_STR,
            name: self.sink.intern(name),
            args,
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        let track = self.resolve_track(track);
        self.note_ts(ts);
        if enter {
            self.begin(track, ts, &slice);
        } else {
            self.end(track, ts, &slice);
        }
    }
}
