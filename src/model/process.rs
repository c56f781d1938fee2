//! The process tracker: machines, processes and threads by (machine, pid/tid), pid reuse,
//! names by priority, descriptor-claimed identities, process args. Hands on upids and utids.

use super::*;

/// What the process tracker waits for: threads to bind together once one of them is
/// bound, and forked processes whose parent is known once their creator is bound.
#[derive(Default)]
pub(super) struct ProcessTrackerState {
    pub(super) associated: FxHashMap<u32, Vec<u32>>,
    pub(super) forked_by: FxHashMap<u32, Vec<u32>>,
}

impl<'s> Builder<'s> {
    /// Declares the machines in the order their rows should get (host first).
    pub fn add_machine(&mut self, raw: MachineId) -> u32 {
        if let Some(&row) = self.machine_rows.get(&raw) {
            return row;
        }
        let row = self.tables.machines.len() as u32;
        let mut info = self.sink.machines.get(&raw).cloned().unwrap_or_default();
        let record = self.sink.machine_registry.records.get(raw as usize);
        // A SystemInfo machine_name wins over the manifest's name.
        if info.name.is_none() {
            info.name = record.and_then(|r| r.name.clone());
        }
        self.tables.machines.push(MachineRow {
            raw_id: record.map_or(i64::from(raw), |r| r.raw_id),
            info,
        });
        self.machine_rows.insert(raw, row);
        // Every machine has its own idle process (pid 0) and thread (tid 0).
        let upid = self.tables.processes.len() as u32;
        self.tables.processes.push(ProcessRow::new(0, row));
        let utid = self.tables.threads.len() as u32;
        let mut idle = ThreadRow::new(0, row);
        idle.upid = Some(upid);
        idle.is_main_thread = Some(true);
        idle.is_idle = true;
        self.tables.threads.push(idle);
        self.idle.insert(raw, (upid, utid));
        row
    }

    /// Pid and tid 0 of a machine are its idle process and thread, named `swapper` (as
    /// systrace and proto traces have it); elsewhere (JSON) they are ordinary ids.
    pub fn name_idle_thread(&mut self, machine: MachineId) {
        self.add_machine(machine);
        if let Some(&(upid, utid)) = self.idle.get(&machine) {
            self.process_by_pid.insert((machine, 0), upid);
            self.threads_by_tid.insert((machine, 0), vec![utid]);
            self.idle_mapped.insert(machine);
            let name = self.sink.intern("swapper");
            self.set_thread_name(utid, name, NamePriority::Constant);
        }
    }

    pub(super) fn machine_row(&mut self, raw: MachineId) -> u32 {
        self.add_machine(raw)
    }

    // ----- processes and threads -------------------------------------------------------

    pub(super) fn new_thread(&mut self, machine: MachineId, tid: i64, upid: Option<u32>) -> u32 {
        let mrow = self.machine_row(machine);
        let utid = self.tables.threads.len() as u32;
        let mut row = ThreadRow::new(tid, mrow);
        if let Some(upid) = upid {
            row.upid = Some(upid);
            row.is_main_thread = Some(self.tables.processes[upid as usize].pid == tid);
        }
        self.tables.threads.push(row);
        self.threads_by_tid
            .entry((machine, tid))
            .or_default()
            .push(utid);
        utid
    }

    /// Binds an unbound thread to its process, then whatever waited on it: threads
    /// associated with it (created by it with CLONE_THREAD before its process was known)
    /// and processes it forked (their parent).
    pub(super) fn bind_thread(&mut self, utid: u32, upid: u32) {
        let mut todo = vec![utid];
        while let Some(utid) = todo.pop() {
            let pid = self.tables.processes[upid as usize].pid;
            let row = &mut self.tables.threads[utid as usize];
            if row.upid.is_some_and(|u| u != upid) {
                continue;
            }
            row.upid = Some(upid);
            row.is_main_thread = Some(row.tid == pid);
            if let Some(children) = self.procs.forked_by.remove(&utid) {
                for child in children {
                    let row = &mut self.tables.processes[child as usize];
                    if row.parent_upid.is_none() {
                        row.parent_upid = Some(upid);
                    }
                }
            }
            if let Some(pairs) = self.procs.associated.remove(&utid) {
                for other in pairs {
                    if self.tables.threads[other as usize].upid.is_none() {
                        todo.push(other);
                    }
                }
            }
        }
    }

    /// Two threads of one process (a thread and the thread it created): one bound binds
    /// the other; both bound elsewhere is an error; neither, and they wait for each other.
    pub(super) fn associate_threads(&mut self, a: u32, b: u32) {
        let (ua, ub) = (
            self.tables.threads[a as usize].upid,
            self.tables.threads[b as usize].upid,
        );
        match (ua, ub) {
            (Some(x), Some(y)) if x != y => {
                let m = self.tables.threads[a as usize].machine;
                self.stat("process_tracker_errors", m);
            }
            (Some(_), Some(_)) => {}
            (Some(x), None) => self.bind_thread(b, x),
            (None, Some(y)) => self.bind_thread(a, y),
            (None, None) => {
                self.procs.associated.entry(a).or_default().push(b);
                self.procs.associated.entry(b).or_default().push(a);
            }
        }
    }

    /// Whether a thread can still be found by its tid: not ended, and not in a process
    /// that ended or whose pid now names another process.
    pub(super) fn thread_alive(&self, machine: MachineId, utid: u32) -> bool {
        let row = &self.tables.threads[utid as usize];
        if row.end_ts.is_some() {
            return false;
        }
        match row.upid {
            None => true,
            Some(upid) => {
                let p = &self.tables.processes[upid as usize];
                p.end_ts.is_none()
                    && self
                        .process_by_pid
                        .get(&(machine, p.pid))
                        .is_none_or(|&u| u == upid)
            }
        }
    }

    /// The live process with this pid, created (with its main thread) if needed.
    pub fn process(&mut self, p: ProcessRef) -> u32 {
        self.machine_row(p.machine);
        if let Some(&upid) = self.process_by_pid.get(&(p.machine, p.pid)) {
            return upid;
        }
        let mrow = self.machine_row(p.machine);
        let upid = self.tables.processes.len() as u32;
        self.tables.processes.push(ProcessRow::new(p.pid, mrow));
        self.process_by_pid.insert((p.machine, p.pid), upid);
        // A new process immediately gets its main thread.
        let unbound = self
            .live_threads(p.machine, p.pid)
            .find(|&utid| self.tables.threads[utid as usize].upid.is_none());
        match unbound {
            Some(utid) => self.bind_thread(utid, upid),
            None => {
                self.new_thread(p.machine, p.pid, Some(upid));
            }
        }
        upid
    }

    pub(super) fn live_threads(
        &self,
        machine: MachineId,
        tid: i64,
    ) -> impl Iterator<Item = u32> + use<'_, 's> {
        self.threads_by_tid
            .get(&(machine, tid))
            .into_iter()
            .flat_map(|v| v.iter().rev().copied())
            .filter(move |&utid| self.thread_alive(machine, utid))
    }

    pub(super) fn latest_live_thread(&self, machine: MachineId, tid: i64) -> Option<u32> {
        self.live_threads(machine, tid).next()
    }

    /// The thread for (tid, pid), following Trace Processor's thread tracker.
    pub fn thread(&mut self, t: ThreadRef) -> u32 {
        self.machine_row(t.machine);
        if t.tid == 0 && matches!(t.pid, None | Some(0)) && self.idle_mapped.contains(&t.machine) {
            if let Some(&(_, utid)) = self.idle.get(&t.machine) {
                return utid;
            }
        }
        match t.pid {
            Some(pid) => {
                let upid = self.process(ProcessRef {
                    machine: t.machine,
                    pid,
                });
                // The newest live thread with this tid that is unbound or in this process.
                let found = self.live_threads(t.machine, t.tid).find(|&utid| {
                    self.tables.threads[utid as usize]
                        .upid
                        .is_none_or(|u| u == upid)
                });
                match found {
                    Some(utid) => {
                        if self.tables.threads[utid as usize].upid.is_none() {
                            self.bind_thread(utid, upid);
                        }
                        // It becomes the tid's newest thread.
                        if let Some(list) = self.threads_by_tid.get_mut(&(t.machine, t.tid)) {
                            if let Some(i) = list.iter().position(|&u| u == utid) {
                                list.remove(i);
                                list.push(utid);
                            }
                        }
                        utid
                    }
                    None => self.new_thread(t.machine, t.tid, Some(upid)),
                }
            }
            None => match self.latest_live_thread(t.machine, t.tid) {
                Some(utid) => utid,
                None => self.new_thread(t.machine, t.tid, None),
            },
        }
    }

    /// A descriptor uuid describes a thread; a second uuid for the same tid is tid reuse.
    pub(super) fn claim_thread(&mut self, t: ThreadRef, uuid: u64) {
        let previous = self.thread_claims.insert((t.machine, t.tid), uuid);
        let utid = match previous {
            Some(p) if p != uuid => {
                let upid = t.pid.map(|pid| {
                    self.process(ProcessRef {
                        machine: t.machine,
                        pid,
                    })
                });
                self.new_thread(t.machine, t.tid, upid)
            }
            _ => self.thread(t),
        };
        self.uuid_threads.insert((t.machine, uuid), utid);
    }

    /// A descriptor uuid describes a process; a second uuid for the same pid is pid reuse.
    pub(super) fn claim_process(&mut self, p: ProcessRef, uuid: u64) {
        let previous = self.process_claims.insert((p.machine, p.pid), uuid);
        if matches!(previous, Some(prev) if prev != uuid) {
            self.process_by_pid.remove(&(p.machine, p.pid));
        }
        let upid = self.process(p);
        self.uuid_processes.insert((p.machine, uuid), upid);
    }

    /// The thread row a descriptor's uuid claimed (or the live one for its tid).
    pub(super) fn descriptor_thread(&mut self, machine: MachineId, uuid: u64, t: ThreadRef) -> u32 {
        match self.uuid_threads.get(&(machine, uuid)) {
            Some(&utid) => utid,
            None => self.thread(t),
        }
    }

    pub(super) fn descriptor_process(
        &mut self,
        machine: MachineId,
        uuid: u64,
        p: ProcessRef,
    ) -> u32 {
        match self.uuid_processes.get(&(machine, uuid)) {
            Some(&upid) => upid,
            None => self.process(p),
        }
    }

    pub(super) fn set_thread_name(&mut self, utid: u32, name: StrId, priority: NamePriority) {
        if name == NULL_STR {
            return;
        }
        let row = &mut self.tables.threads[utid as usize];
        if priority >= row.name_priority || row.name == NULL_STR {
            row.name = name;
            row.name_priority = priority;
        }
    }

    pub(super) fn set_process_name(&mut self, upid: u32, name: StrId, from_system: bool) {
        self.set_process_name_at(upid, name, if from_system { 4 } else { 2 });
    }

    /// A process name at a priority (see [`EventData::ProcessName`]): it wins if its
    /// priority is at least the current name's.
    pub(super) fn set_process_name_at(&mut self, upid: u32, name: StrId, priority: u8) {
        if name == NULL_STR {
            return;
        }
        let row = &mut self.tables.processes[upid as usize];
        if priority >= row.name_priority {
            row.name = name;
            row.name_priority = priority;
        }
    }

    // ----- tracks ----------------------------------------------------------------------

    pub(super) fn process_info(&mut self, info: &ProcessInfo) {
        let parent = info.parent_pid.map(|ppid| {
            self.process(ProcessRef {
                machine: info.process.machine,
                pid: ppid,
            })
        });
        let upid = self.process(info.process);
        let row = &mut self.tables.processes[upid as usize];
        match (row.parent_upid, parent) {
            (None, _) => row.parent_upid = parent,
            // The first parent stays; another one is a reparenting, counted.
            (Some(old), Some(new)) if old != new => {
                let m = row.machine;
                self.stat("process_tracker_parent_pid_changed", m);
            }
            _ => {}
        }
        let row = &mut self.tables.processes[upid as usize];
        if info.cmdline != NULL_STR {
            row.cmdline = info.cmdline;
        }
        if let Some(uid) = info.uid {
            row.uid = Some(uid);
        }
        if row.start_ts.is_none() {
            let probe = info
                .start_probe
                .and_then(|s| self.sink.time_probes.get(s as usize));
            row.start_ts = info.start_ts.or(probe.copied().flatten());
        }
        self.set_process_name(upid, info.name, info.from_system);
    }

    /// `task_newtask`: a new process (fork) or a new thread of the creator's process.
    pub(super) fn thread_start(
        &mut self,
        ts: i64,
        thread: ThreadRef,
        creator_tid: i64,
        name: StrId,
        new_process: bool,
    ) {
        if thread.tid == 0 {
            return;
        }
        let machine = thread.machine;
        let creator = self.thread(ThreadRef {
            machine,
            tid: creator_tid,
            pid: None,
        });
        let utid = if new_process {
            // A new incarnation of the pid: its old process and threads are forgotten
            // (not ended).
            self.process_by_pid.remove(&(machine, thread.tid));
            self.threads_by_tid.remove(&(machine, thread.tid));
            let utid = self.new_thread(machine, thread.tid, None);
            self.tables.threads[utid as usize].start_ts = Some(ts);
            self.set_thread_name(utid, name, NamePriority::Ftrace);
            let upid = self.process(ProcessRef {
                machine,
                pid: thread.tid,
            });
            self.tables.processes[upid as usize].start_ts = Some(ts);
            self.set_process_name(upid, name, true);
            match self.tables.threads[creator as usize].upid {
                Some(parent) => self.tables.processes[upid as usize].parent_upid = Some(parent),
                None => self.procs.forked_by.entry(creator).or_default().push(upid),
            }
            utid
        } else {
            let utid = self.new_thread(machine, thread.tid, None);
            self.tables.threads[utid as usize].start_ts = Some(ts);
            self.set_thread_name(utid, name, NamePriority::Ftrace);
            self.associate_threads(creator, utid);
            utid
        };
        self.thread_state_new_task(ts, utid, creator);
    }

    /// `task_rename`: the thread's new name, and its process's when it is the main thread.
    pub(super) fn rename_thread(&mut self, thread: ThreadRef, name: StrId) {
        let utid = self.thread(thread);
        self.set_thread_name(utid, name, NamePriority::Ftrace);
        let row = &self.tables.threads[utid as usize];
        if let Some(upid) = row.upid {
            if self.tables.processes[upid as usize].pid == row.tid {
                self.set_process_name(upid, name, true);
            }
        }
    }

    /// Replaces [`ArgValue::ThreadUtid`] / [`ArgValue::ProcessUpid`] args by the thread's
    /// utid / the process's upid.
    pub(super) fn resolve_thread_args(&mut self, args: ArgsRef) -> ArgsRef {
        if args == NO_ARGS
            || !self
                .sink
                .args
                .get(args)
                .iter()
                .any(|a| matches!(a.value, ArgValue::ThreadUtid(_) | ArgValue::ProcessUpid(_)))
        {
            return args;
        }
        let mut resolved: Vec<Arg> = self.sink.args.get(args).to_vec();
        for a in &mut resolved {
            match a.value {
                ArgValue::ThreadUtid(r) => {
                    let t = *self.sink.thread_refs.get(r);
                    a.value = ArgValue::Int(i64::from(self.thread(t)));
                }
                ArgValue::ProcessUpid(r) => {
                    let p = *self.sink.process_refs.get(r);
                    a.value = ArgValue::Int(i64::from(self.process(p)));
                }
                _ => {}
            }
        }
        self.sink.args.push(&resolved)
    }

    /// Settles [`ArgValue::PassthroughUtid`] args once the event's track is known: the
    /// thread's utid on a global track or a track of the thread's own process; dropped on
    /// a thread's track or another process's (Trace Processor's rule).
    pub(super) fn resolve_passthrough(&mut self, args: ArgsRef, track: u32) -> ArgsRef {
        if args == NO_ARGS
            || !self
                .sink
                .args
                .get(args)
                .iter()
                .any(|a| matches!(a.value, ArgValue::PassthroughUtid(_)))
        {
            return args;
        }
        let (track_utid, track_upid) = self
            .tables
            .tracks
            .get(track as usize)
            .map_or((None, None), |t| (t.utid, t.upid));
        let mut resolved: Vec<Arg> = Vec::with_capacity(self.sink.args.get(args).len());
        for i in 0..self.sink.args.get(args).len() {
            let mut a = self.sink.args.get(args)[i];
            if let ArgValue::PassthroughUtid(r) = a.value {
                if track_utid.is_some() {
                    continue;
                }
                let t = *self.sink.thread_refs.get(r);
                let utid = self.thread(t);
                if track_upid.is_some() && self.tables.threads[utid as usize].upid != track_upid {
                    continue;
                }
                // An unsigned integer, as Trace Processor writes it.
                a.value = ArgValue::Uint(u64::from(utid));
            }
            resolved.push(a);
        }
        self.sink.args.push(&resolved)
    }

    pub(super) fn process_arg(&mut self, process: ProcessRef, key: StrId, value: ArgValue) {
        let upid = self.process(process);
        self.tables.processes[upid as usize]
            .extra_args
            .push((key, value));
    }
}
