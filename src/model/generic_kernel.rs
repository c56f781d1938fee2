//! The generic kernel tracker: task state events of kernels traced without ftrace become
//! `sched` slices (a task running on a cpu until another runs there or it changes state),
//! `thread_state` rows, thread start and end times; the generic process tree makes
//! processes (without main threads) and threads with their flags. Events out of order
//! (running twice, created after it ran, two states at one instant) are counted in
//! `generic_task_state_invalid_order` and dropped, as Trace Processor does. Hands on sched
//! and thread_state rows and thread/process rows.

use super::thread_state::Opening;
use super::*;

/// `GenericKernelTaskStateEvent.TaskStateEnum`.
mod task {
    pub const CREATED: u8 = 1;
    pub const RUNNING: u8 = 3;
    pub const DESTROYED: u8 = 8;
}

/// The `thread_state` text of a task state.
fn state_text(state: u8) -> Option<&'static str> {
    Some(match state {
        1 => "Created",
        2 => "R",
        3 => "Running",
        4 => "S",
        5 => "D",
        6 => "T",
        7 => "Z",
        8 => "X",
        _ => return None,
    })
}

#[derive(Default)]
pub(super) struct GenericKernelState {
    /// The cpu each running thread runs on.
    thread_cpu: FxHashMap<u32, (MachineId, u32)>,
    /// Each thread's last state event (ts, state).
    last: FxHashMap<u32, (i64, u8)>,
}

impl<'s> Builder<'s> {
    pub(super) fn generic_kernel(&mut self, ts: i64, ev: &GenericKernelEvent) {
        match *ev {
            GenericKernelEvent::TaskState {
                machine,
                cpu,
                tid,
                comm,
                state,
                prio,
            } => self.generic_task_state(ts, machine, cpu, tid, comm, state, prio),
            GenericKernelEvent::Process {
                machine,
                pid,
                ppid,
                cmdline,
            } => {
                let parent = self.process_without_main_thread(machine, ppid);
                let upid = self.process_without_main_thread(machine, pid);
                let row = &mut self.tables.processes[upid as usize];
                if row.parent_upid.is_none() && upid != parent {
                    row.parent_upid = Some(parent);
                }
                if cmdline != NULL_STR {
                    row.cmdline = cmdline;
                    let text = self.sink.strings.get(cmdline).unwrap_or("").to_string();
                    let name = text.split(' ').next().unwrap_or("");
                    let name = self.sink.intern(name);
                    self.set_process_name(upid, name, true);
                }
            }
            GenericKernelEvent::Thread {
                machine,
                tid,
                pid,
                comm,
                is_main_thread,
                is_idle,
            } => {
                let upid = self.process_without_main_thread(machine, pid);
                let bound = self.live_threads(machine, tid).find(|&utid| {
                    let u = self.tables.threads[utid as usize].upid;
                    u.is_none() || u == Some(upid)
                });
                let utid = match bound {
                    Some(utid) => utid,
                    None => self.new_thread(machine, tid, None),
                };
                let row = &mut self.tables.threads[utid as usize];
                row.upid = Some(upid);
                row.is_main_thread = Some(is_main_thread);
                row.is_idle = is_idle;
                self.set_thread_name(utid, comm, NamePriority::ProcessTree);
            }
        }
    }

    /// The live process with this pid, made without a main thread when new.
    pub(super) fn process_without_main_thread(&mut self, machine: MachineId, pid: i64) -> u32 {
        let mrow = self.machine_row(machine);
        if let Some(&upid) = self.process_by_pid.get(&(machine, pid)) {
            return upid;
        }
        let upid = self.tables.processes.len() as u32;
        self.tables.processes.push(ProcessRow::new(pid, mrow));
        self.process_by_pid.insert((machine, pid), upid);
        upid
    }

    #[allow(clippy::too_many_arguments)]
    fn generic_task_state(
        &mut self,
        ts: i64,
        machine: MachineId,
        cpu: Option<u32>,
        tid: i64,
        comm: StrId,
        state: u8,
        prio: i32,
    ) {
        self.note_ts(ts);
        let invalid = |b: &mut Self| {
            let m = b.machine_row(machine);
            b.stat("generic_task_state_invalid_order", m);
        };
        let utid = if state == task::CREATED {
            let existing = self.latest_live_thread(machine, tid);
            if existing.is_some_and(|u| self.generic.last.contains_key(&u)) {
                invalid(self);
                return;
            }
            let utid = self.new_thread(machine, tid, None);
            self.tables.threads[utid as usize].start_ts = Some(ts);
            utid
        } else {
            self.thread(ThreadRef {
                machine,
                tid,
                pid: None,
            })
        };
        if let Some(&(last_ts, last_state)) = self.generic.last.get(&utid) {
            let running_again = state == task::RUNNING && last_state == task::RUNNING;
            let same_instant =
                last_ts == ts && state != task::RUNNING && last_state != task::RUNNING;
            if running_again || same_instant {
                invalid(self);
                return;
            }
        }
        self.set_thread_name(utid, comm, NamePriority::Ftrace);
        self.generic.last.insert(utid, (ts, state));
        let text = state_text(state).map_or(NULL_STR, |s| self.sink.intern(s));
        if state == task::RUNNING {
            let cpu = cpu.unwrap_or(0);
            let ucpu = self.cpu(machine, cpu);
            // Whoever ran on that cpu stops, in a state nobody reported.
            if let Some((id, mut row)) = self.sched_pending.remove(&(machine, cpu)) {
                row.dur = ts - row.ts;
                self.out.sched(id, &row, self.sink);
                let prev = row.utid;
                self.generic.thread_cpu.remove(&prev);
                if prev != 0 && prev != utid {
                    self.close_thread_state(prev, ts, true);
                    self.open_thread_state(ts, prev, NULL_STR, Opening::default());
                }
            }
            let id = self.tables.sched_count;
            self.tables.sched_count += 1;
            let row = SchedRow {
                ts,
                dur: -1,
                cpu,
                ucpu,
                utid,
                end_state: NULL_STR,
                priority: prio,
            };
            self.sched_pending.insert((machine, cpu), (id, row));
            self.generic.thread_cpu.insert(utid, (machine, cpu));
            if utid != 0 {
                self.close_thread_state(utid, ts, true);
                let opening = Opening {
                    cpu: Some((cpu, ucpu)),
                    ..Opening::default()
                };
                let running = self.running_state();
                self.open_thread_state(ts, utid, running, opening);
            }
        } else {
            if let Some(at) = self.generic.thread_cpu.remove(&utid) {
                if self
                    .sched_pending
                    .get(&at)
                    .is_some_and(|(_, r)| r.utid == utid)
                {
                    if let Some((id, mut row)) = self.sched_pending.remove(&at) {
                        row.dur = ts - row.ts;
                        row.end_state = text;
                        self.out.sched(id, &row, self.sink);
                    }
                }
            }
            if utid != 0 {
                self.close_thread_state(utid, ts, true);
                self.open_thread_state(ts, utid, text, Opening::default());
            }
            if state == task::DESTROYED {
                self.end_thread(ts, utid);
            }
        }
    }

    /// A thread ends: its row gets `end_ts`, and a main thread ends its process.
    pub(super) fn end_thread(&mut self, ts: i64, utid: u32) {
        let machine = self.tables.threads[utid as usize].machine;
        let tid = self.tables.threads[utid as usize].tid;
        self.tables.threads[utid as usize].end_ts = Some(ts);
        if let Some(upid) = self.tables.threads[utid as usize].upid {
            if self.tables.processes[upid as usize].pid == tid {
                self.tables.processes[upid as usize].end_ts = Some(ts);
                let raw = self
                    .machine_rows
                    .iter()
                    .find(|(_, &row)| row == machine)
                    .map(|(&raw, _)| raw);
                if let Some(raw) = raw {
                    self.process_by_pid.remove(&(raw, tid));
                }
            }
        }
    }
}
