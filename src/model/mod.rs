//! Builds Trace-Processor-shaped rows from the sorted event stream: process and thread
//! identity, tracks, slice nesting per track, counters, sched, flows.
//!
//! The rules follow Trace Processor's trackers (see `reference/behaviour-parsers.md`): the
//! same input gives the same rows, so Perfetto SQL written against Trace Processor works.

mod syscall;
mod syscall_table;
mod tables;
mod thread_state;

pub use tables::*;

use std::collections::HashMap;

use crate::ir::*;

/// Turns a sorted, time-converted event stream into [`Tables`].
/// Width of each machine's ucpu range.
const CPUS_PER_MACHINE: u32 = 4096;
/// Where ucpus of cpus numbered past their machine's range start.
const ODD_CPUS_FIRST_UCPU: u32 = 1 << 30;

pub struct Builder<'s> {
    sink: &'s mut Sink,
    out: &'s mut dyn RowSink,
    /// Slices still on a stack (they may change until popped).
    live_slices: FxHashMap<u32, SliceRow>,
    /// Start of every slice, for orienting flows.
    slice_ts: Vec<i64>,
    pub tables: Tables,
    machine_rows: HashMap<MachineId, u32>,
    /// Live thread rows per (machine, tid), oldest first.
    threads_by_tid: FxHashMap<(MachineId, i64), Vec<u32>>,
    /// Live process per (machine, pid).
    process_by_pid: FxHashMap<(MachineId, i64), u32>,
    /// Idle thread / process rows per machine row.
    idle: HashMap<MachineId, (u32, u32)>,
    /// Resolved track per interned key (None = not yet resolved).
    track_cache: Vec<Option<u32>>,
    thread_slice_track: FxHashMap<u32, u32>,
    thread_overlap_tracks: HashMap<u32, Vec<u32>>,
    stacks: Vec<Vec<StackEntry>>,
    async_sets: HashMap<AsyncSet, AsyncSetState>,
    next_track_group: u32,
    descriptor_tracks: HashMap<(MachineId, u64), DescriptorTrack>,
    flows: FlowState,
    sched_pending: HashMap<(MachineId, u32), (u32, SchedRow)>,
    /// Index into `tables.cpus` per machine's cpu.
    cpus: HashMap<(MachineId, u32), usize>,
    /// Process counter tracks made before their thread's process was known: (track, utid).
    unsettled_process_counters: Vec<(u32, u32)>,
    /// Process counter tracks by (upid, name, type).
    process_counters: HashMap<(u32, StrId, &'static str), u32>,
    /// Cpus numbered past their machine's range so far.
    odd_cpus: u32,
    /// The ucpu range of each machine other than the host (1, 2, ...).
    cpu_ranges: HashMap<u32, u32>,
    /// Legacy unnestable tracks (atrace `S`/`F`): (begin count, last begin ts), cumulative.
    unnestable: FxHashMap<u32, (i64, i64)>,
    /// The latest `state` row of each state track (index into `tables.states`).
    open_states: FxHashMap<u32, usize>,
    /// Each thread's open `thread_state` row (see `thread_state.rs`).
    open_thread_states: FxHashMap<u32, thread_state::OpenThreadState>,
    /// Each thread's last closed blocked (`D`) row, unwritten until a later one replaces it.
    last_blocked_states: FxHashMap<u32, thread_state::OpenThreadState>,
    /// Which descriptor uuid last described each tid / pid, and the row each uuid got.
    thread_claims: FxHashMap<(MachineId, i64), u64>,
    process_claims: FxHashMap<(MachineId, i64), u64>,
    uuid_threads: FxHashMap<(MachineId, u64), u32>,
    uuid_processes: FxHashMap<(MachineId, u64), u32>,
    /// The trace file of the event being applied, so each slice knows where it came from.
    event_file: u32,
}

#[derive(Clone, Copy)]
struct StackEntry {
    slice: u32,
    ts: i64,
    /// −1 while open.
    dur: i64,
}

impl StackEntry {
    fn end(&self) -> Option<i64> {
        (self.dur >= 0).then(|| self.ts.saturating_add(self.dur))
    }
}

#[derive(Default)]
struct AsyncSetState {
    group: u32,
    /// (cookie or None for timestamp lanes, track id, open slices, last end)
    slots: Vec<AsyncSlot>,
}

struct AsyncSlot {
    cookie: Option<u64>,
    track: u32,
    open: u32,
    last_end: i64,
}

#[derive(Clone, Copy)]
enum DescriptorTrack {
    /// Resolved to a fixed track.
    Track(u32),
}

#[derive(Default)]
struct FlowState {
    /// TrackEvent `flow_ids` and v2 `bind_id`s pending at a slice.
    pending: HashMap<u64, u32>,
    /// v1 flows keyed by (id, category, name) → (slice, trace_id).
    v1_pending: HashMap<(u64, StrId, StrId), (u32, i64)>,
    v1_ids: HashMap<(u64, StrId, StrId), i64>,
    /// Flows waiting for the next slice that begins on a track: (track, out slice, trace id).
    waiting_next: Vec<(u32, u32, i64, ArgsRef)>,
}

/// What a Complete event does when it overlaps its parent partially.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Overlap {
    Drop,
    Spill,
}

impl<'s> Builder<'s> {
    pub fn new(sink: &'s mut Sink, out: &'s mut dyn RowSink) -> Self {
        let track_cache = vec![None; sink.tracks.len()];
        Self {
            sink,
            out,
            live_slices: FxHashMap::default(),
            slice_ts: Vec::new(),
            tables: Tables {
                bounds: (i64::MAX, i64::MIN),
                ..Tables::default()
            },
            machine_rows: HashMap::new(),
            threads_by_tid: FxHashMap::default(),
            process_by_pid: FxHashMap::default(),
            idle: HashMap::new(),
            track_cache,
            thread_slice_track: FxHashMap::default(),
            thread_overlap_tracks: HashMap::new(),
            stacks: Vec::new(),
            async_sets: HashMap::new(),
            next_track_group: 0,
            descriptor_tracks: HashMap::new(),
            flows: FlowState::default(),
            sched_pending: HashMap::new(),
            cpus: HashMap::new(),
            cpu_ranges: HashMap::new(),
            odd_cpus: 0,
            process_counters: HashMap::new(),
            unsettled_process_counters: Vec::new(),
            unnestable: FxHashMap::default(),
            open_states: FxHashMap::default(),
            open_thread_states: FxHashMap::default(),
            last_blocked_states: FxHashMap::default(),
            thread_claims: FxHashMap::default(),
            process_claims: FxHashMap::default(),
            uuid_threads: FxHashMap::default(),
            uuid_processes: FxHashMap::default(),
            event_file: NO_FILE,
        }
    }

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
        self.process_by_pid.insert((raw, 0), upid);
        self.threads_by_tid.insert((raw, 0), vec![utid]);
        row
    }

    /// Names a machine's idle thread `swapper` (what systrace and proto traces call it).
    pub fn name_idle_thread(&mut self, machine: MachineId) {
        self.add_machine(machine);
        if let Some(&(_, utid)) = self.idle.get(&machine) {
            let name = self.sink.intern("swapper");
            self.set_thread_name(utid, name, NamePriority::Constant);
        }
    }

    fn machine_row(&mut self, raw: MachineId) -> u32 {
        self.add_machine(raw)
    }

    // ----- processes and threads -------------------------------------------------------

    fn new_thread(&mut self, machine: MachineId, tid: i64, upid: Option<u32>) -> u32 {
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

    fn bind_thread(&mut self, utid: u32, upid: u32) {
        let pid = self.tables.processes[upid as usize].pid;
        let row = &mut self.tables.threads[utid as usize];
        row.upid = Some(upid);
        row.is_main_thread = Some(row.tid == pid);
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

    fn live_threads(
        &self,
        machine: MachineId,
        tid: i64,
    ) -> impl Iterator<Item = u32> + use<'_, 's> {
        self.threads_by_tid
            .get(&(machine, tid))
            .into_iter()
            .flat_map(|v| v.iter().rev().copied())
            .filter(|&utid| self.tables.threads[utid as usize].end_ts.is_none())
    }

    fn latest_live_thread(&self, machine: MachineId, tid: i64) -> Option<u32> {
        self.live_threads(machine, tid).next()
    }

    /// The thread for (tid, pid), following Trace Processor's thread tracker.
    pub fn thread(&mut self, t: ThreadRef) -> u32 {
        self.machine_row(t.machine);
        if t.tid == 0 && matches!(t.pid, None | Some(0)) {
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
                let mut unbound = None;
                for utid in self.live_threads(t.machine, t.tid) {
                    match self.tables.threads[utid as usize].upid {
                        Some(u) if u == upid => return utid,
                        None if unbound.is_none() => unbound = Some(utid),
                        _ => {}
                    }
                }
                if let Some(utid) = unbound {
                    self.bind_thread(utid, upid);
                    return utid;
                }
                self.new_thread(t.machine, t.tid, Some(upid))
            }
            None => match self.latest_live_thread(t.machine, t.tid) {
                Some(utid) => utid,
                None => self.new_thread(t.machine, t.tid, None),
            },
        }
    }

    /// A descriptor uuid describes a thread; a second uuid for the same tid is tid reuse.
    fn claim_thread(&mut self, t: ThreadRef, uuid: u64) {
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
    fn claim_process(&mut self, p: ProcessRef, uuid: u64) {
        let previous = self.process_claims.insert((p.machine, p.pid), uuid);
        if matches!(previous, Some(prev) if prev != uuid) {
            self.process_by_pid.remove(&(p.machine, p.pid));
        }
        let upid = self.process(p);
        self.uuid_processes.insert((p.machine, uuid), upid);
    }

    /// The thread row a descriptor's uuid claimed (or the live one for its tid).
    fn descriptor_thread(&mut self, machine: MachineId, uuid: u64, t: ThreadRef) -> u32 {
        match self.uuid_threads.get(&(machine, uuid)) {
            Some(&utid) => utid,
            None => self.thread(t),
        }
    }

    fn descriptor_process(&mut self, machine: MachineId, uuid: u64, p: ProcessRef) -> u32 {
        match self.uuid_processes.get(&(machine, uuid)) {
            Some(&upid) => upid,
            None => self.process(p),
        }
    }

    fn set_thread_name(&mut self, utid: u32, name: StrId, priority: NamePriority) {
        if name == NULL_STR {
            return;
        }
        let row = &mut self.tables.threads[utid as usize];
        if priority >= row.name_priority || row.name == NULL_STR {
            row.name = name;
            row.name_priority = priority;
        }
    }

    fn set_process_name(&mut self, upid: u32, name: StrId, from_system: bool) {
        if name == NULL_STR {
            return;
        }
        let row = &mut self.tables.processes[upid as usize];
        let priority = if from_system { 4 } else { 2 };
        if priority >= row.name_priority {
            row.name = name;
            row.name_priority = priority;
        }
    }

    // ----- tracks ----------------------------------------------------------------------

    fn new_track(&mut self, row: TrackRow) -> u32 {
        let id = self.tables.tracks.len() as u32;
        self.tables.tracks.push(row);
        self.stacks.push(Vec::new());
        id
    }

    fn thread_slices_track(&mut self, utid: u32) -> u32 {
        if let Some(&t) = self.thread_slice_track.get(&utid) {
            return t;
        }
        let machine = self.tables.threads[utid as usize].machine;
        let t = self.new_track(TrackRow {
            utid: Some(utid),
            ..TrackRow::new(NULL_STR, "thread_execution", machine, TrackEventType::Slice)
        });
        self.thread_slice_track.insert(utid, t);
        t
    }

    /// Resolves the track an event names.
    fn resolve_track(&mut self, track: TrackRef) -> u32 {
        if let Some(Some(t)) = self.track_cache.get(track as usize) {
            return *t;
        }
        let key = *self.sink.tracks.get(track);
        let (id, cacheable) = self.resolve_key(key);
        if cacheable {
            if self.track_cache.len() <= track as usize {
                self.track_cache.resize(track as usize + 1, None);
            }
            self.track_cache[track as usize] = Some(id);
        }
        id
    }

    fn resolve_key(&mut self, key: TrackKey) -> (u32, bool) {
        match key {
            TrackKey::ThreadSlices(t) => {
                let utid = self.thread(t);
                (self.thread_slices_track(utid), false)
            }
            TrackKey::ThreadOverlap(t) => {
                // Overlap lanes are chosen per event in `complete`.
                let utid = self.thread(t);
                (self.thread_slices_track(utid), false)
            }
            TrackKey::ProcessCounter {
                process,
                name,
                kind,
            } => {
                let upid = self.process(process);
                (self.process_counter_track(upid, name, kind), true)
            }
            TrackKey::ThreadProcessCounter { thread, name, kind } => {
                let utid = self.thread(thread);
                match self.tables.threads[utid as usize].upid {
                    Some(upid) => (self.process_counter_track(upid, name, kind), true),
                    // The thread's process is not known yet (ftrace often starts before the
                    // process list): a thread counter for now, moved to the process the
                    // thread turns out to belong to when the import ends.
                    None => {
                        let machine = self.tables.threads[utid as usize].machine;
                        let t = self.new_track(TrackRow {
                            utid: Some(utid),
                            ..TrackRow::new(name, kind, machine, TrackEventType::Counter)
                        });
                        self.unsettled_process_counters.push((t, utid));
                        (t, true)
                    }
                }
            }
            TrackKey::ThreadCounter { thread, name, kind } => {
                let utid = self.thread(thread);
                let machine = self.tables.threads[utid as usize].machine;
                let t = self.new_track(TrackRow {
                    utid: Some(utid),
                    ..TrackRow::new(name, kind, machine, TrackEventType::Counter)
                });
                (t, true)
            }
            TrackKey::CpuCounter {
                machine,
                cpu,
                name,
                kind,
            }
            | TrackKey::CpuSlices {
                machine,
                cpu,
                name,
                kind,
            } => {
                let event_type = if matches!(key, TrackKey::CpuCounter { .. }) {
                    TrackEventType::Counter
                } else {
                    TrackEventType::Slice
                };
                let mrow = self.machine_row(machine);
                self.cpu(machine, cpu);
                let t = self.new_track(TrackRow {
                    cpu: Some(cpu),
                    ..TrackRow::new(name, kind, mrow, event_type)
                });
                (t, true)
            }
            TrackKey::GlobalCounter {
                machine,
                name,
                kind,
            } => {
                let mrow = self.machine_row(machine);
                let t = self.new_track(TrackRow::new(name, kind, mrow, TrackEventType::Counter));
                (t, true)
            }
            TrackKey::GlobalSlices {
                machine,
                kind,
                name,
            } => {
                let mrow = self.machine_row(machine);
                let mut row = TrackRow::new(name, kind, mrow, TrackEventType::Slice);
                row.source_args = self.source_chrome_args();
                (self.new_track(row), true)
            }
            TrackKey::ProcessSlices {
                process,
                kind,
                name,
            } => {
                let upid = self.process(process);
                let machine = self.tables.processes[upid as usize].machine;
                let mut row = TrackRow::new(name, kind, machine, TrackEventType::Slice);
                row.upid = Some(upid);
                row.source_args = self.source_chrome_args();
                (self.new_track(row), true)
            }
            TrackKey::AsyncCookie { .. } | TrackKey::AsyncScoped { .. } => {
                // Chosen per event (slots are reused); see `async_track`.
                (u32::MAX, false)
            }
            TrackKey::Descriptor {
                machine,
                uuid,
                seq_thread,
            } => self.descriptor_track(machine, uuid, seq_thread),
        }
    }

    /// A legacy async track's dimensions (`scope` when it has one, `name`) and args.
    fn legacy_async_args(&mut self, row: &mut TrackRow, set: &AsyncSet, info: LegacyAsyncInfo) {
        let mut dims = Vec::new();
        if set.scope != NULL_STR {
            dims.push(self.sink.arg("scope", ArgValue::Str(set.scope)));
        }
        dims.push(self.sink.arg("name", str_or_null(set.name)));
        row.extra_dims = self.sink.args.push(&dims);
        let chrome = self.sink.intern("chrome");
        let mut source = vec![
            self.sink.arg("source", ArgValue::Str(chrome)),
            self.sink.arg(
                "trace_id_is_process_scoped",
                ArgValue::Bool(info.process_scoped),
            ),
        ];
        if let Some(p) = info.creator {
            let upid = self.process(p);
            source.push(self.sink.arg("upid", ArgValue::Uint(u64::from(upid))));
        }
        source.push(
            self.sink
                .arg("source_scope", str_or_null(info.source_scope)),
        );
        row.source_args = self.sink.args.push(&source);
    }

    fn source_chrome_args(&mut self) -> ArgsRef {
        let value = self.sink.intern("chrome");
        let source = self.sink.arg("source", ArgValue::Str(value));
        self.sink.args.push(&[source])
    }

    /// One counter track per process, name and type, however the events named it.
    fn process_counter_track(&mut self, upid: u32, name: StrId, kind: &'static str) -> u32 {
        if let Some(&t) = self.process_counters.get(&(upid, name, kind)) {
            return t;
        }
        let machine = self.tables.processes[upid as usize].machine;
        let t = self.new_track(TrackRow {
            upid: Some(upid),
            ..TrackRow::new(name, kind, machine, TrackEventType::Counter)
        });
        self.process_counters.insert((upid, name, kind), t);
        t
    }

    /// The ucpu of a machine's cpu (its `cpu` row id), creating the row on first use.
    fn cpu(&mut self, machine: MachineId, cpu: u32) -> u32 {
        let index = self.cpu_index(machine, cpu);
        self.tables.cpus[index].ucpu
    }

    fn cpu_index(&mut self, machine: MachineId, cpu: u32) -> usize {
        if let Some(&i) = self.cpus.get(&(machine, cpu)) {
            return i;
        }
        let mrow = self.machine_row(machine);
        // As Trace Processor: the first machine's (the host's, or the one machine adopted
        // as host) ucpu is the cpu number. Other machines get ranges of their own after
        // it, in the order their cpus appear.
        let range = if mrow == 0 {
            0
        } else {
            let next = self.cpu_ranges.len() as u32 + 1;
            *self.cpu_ranges.entry(mrow).or_insert(next)
        };
        // A cpu number past its machine's range (untrusted input) gets an id of its own
        // above all the ranges, so ids never clash.
        let ucpu = match range.checked_mul(CPUS_PER_MACHINE) {
            Some(start) if cpu < CPUS_PER_MACHINE && start < ODD_CPUS_FIRST_UCPU => start + cpu,
            _ => {
                self.odd_cpus += 1;
                ODD_CPUS_FIRST_UCPU.saturating_add(self.odd_cpus)
            }
        };
        let index = self.tables.cpus.len();
        self.tables.cpus.push(CpuRow {
            ucpu,
            cpu,
            machine: mrow,
            cluster_id: None,
            processor: NULL_STR,
            capacity: None,
            frequencies: Vec::new(),
            args: NO_ARGS,
        });
        self.cpus.insert((machine, cpu), index);
        index
    }

    /// The async track for an event on a cookie or scoped set (Trace Processor's track
    /// compressor).
    fn async_track(&mut self, key: TrackKey, ts: i64, phase: AsyncPhase) -> u32 {
        let (set, cookie) = match key {
            TrackKey::AsyncCookie { set, cookie } => (set, Some(cookie)),
            TrackKey::AsyncScoped { set } => (set, None),
            _ => return u32::MAX,
        };
        if !self.async_sets.contains_key(&set) {
            let group = self.next_track_group;
            self.next_track_group += 1;
            self.async_sets.insert(
                set,
                AsyncSetState {
                    group,
                    slots: Vec::new(),
                },
            );
        }
        let state = &self.async_sets[&set];
        let slot = match (cookie, phase) {
            (Some(c), _) => state
                .slots
                .iter()
                .position(|s| s.cookie == Some(c))
                .or_else(|| match phase {
                    AsyncPhase::Begin => state
                        .slots
                        .iter()
                        .position(|s| s.cookie.is_some() && s.open == 0),
                    _ => None,
                }),
            (None, AsyncPhase::Scoped { .. }) => state
                .slots
                .iter()
                .position(|s| s.cookie.is_none() && s.last_end <= ts),
            (None, _) => None,
        };
        let slot = match slot {
            Some(i) => i,
            None => {
                let group = state.group;
                let idx = state.slots.len();
                let machine = self.machine_row(set.machine);
                let upid = set.process.map(|p| self.process(p));
                let mut row = TrackRow::new(set.name, set.kind, machine, TrackEventType::Slice);
                row.upid = upid;
                row.track_group = Some(group);
                row.compressor_idx = Some(idx as u32);
                if let Some(info) = self.sink.legacy_async.get(&set).copied() {
                    self.legacy_async_args(&mut row, &set, info);
                }
                let track = self.new_track(row);
                let Some(state) = self.async_sets.get_mut(&set) else {
                    return track;
                };
                state.slots.push(AsyncSlot {
                    cookie,
                    track,
                    open: 0,
                    last_end: i64::MIN,
                });
                idx
            }
        };
        let Some(state) = self.async_sets.get_mut(&set) else {
            return u32::MAX;
        };
        let s = &mut state.slots[slot];
        if cookie.is_some() {
            s.cookie = cookie;
        }
        match phase {
            AsyncPhase::Begin => s.open += 1,
            AsyncPhase::End => s.open = s.open.saturating_sub(1),
            AsyncPhase::Scoped { end } => s.last_end = s.last_end.max(end),
        }
        s.track
    }

    fn descriptor_track(
        &mut self,
        machine: MachineId,
        uuid: u64,
        seq_thread: Option<ThreadRef>,
    ) -> (u32, bool) {
        // The parser passes the sequence's thread only for uuid 0 or pid/tid overrides.
        if let Some(t) = seq_thread {
            let utid = self.thread(t);
            return (self.thread_slices_track(utid), false);
        }
        if let Some(DescriptorTrack::Track(t)) = self.descriptor_tracks.get(&(machine, uuid)) {
            return (*t, true);
        }
        let mrow = self.machine_row(machine);
        let desc = self.sink.descriptors.get(&(machine, uuid)).cloned();
        let track = match desc {
            None if uuid == 0 => {
                let name = self.sink.intern("Default Track");
                self.new_track(TrackRow::new(
                    name,
                    "global_merged_track_event",
                    mrow,
                    TrackEventType::Slice,
                ))
            }
            None => self.new_track(TrackRow::new(
                NULL_STR,
                "global_track_event",
                mrow,
                TrackEventType::Slice,
            )),
            Some(d) => self.track_for_descriptor(machine, mrow, &d),
        };
        self.descriptor_tracks
            .insert((machine, uuid), DescriptorTrack::Track(track));
        (track, true)
    }

    /// Nearest thread or process ancestor of a descriptor (not itself).
    fn descriptor_scope(&mut self, machine: MachineId, d: &Descriptor) -> Scope {
        let mut parent = d.parent_uuid;
        let mut hops = 0;
        while let Some(p) = parent {
            hops += 1;
            if hops > 64 {
                break;
            }
            let Some(pd) = self.sink.descriptors.get(&(machine, p)).cloned() else {
                break;
            };
            if let Some(t) = pd.thread {
                return Scope::Thread(self.descriptor_thread(machine, p, t));
            }
            if let Some(pr) = pd.process {
                return Scope::Process(self.descriptor_process(machine, p, pr));
            }
            parent = pd.parent_uuid;
        }
        Scope::Global
    }

    fn track_for_descriptor(&mut self, machine: MachineId, mrow: u32, d: &Descriptor) -> u32 {
        if let Some(counter) = d.counter {
            let scope = self.descriptor_scope(machine, d);
            let mut name = d.name;
            if name == NULL_STR {
                name = match counter.builtin {
                    1 => self.sink.intern("thread_time"),
                    2 => self.sink.intern("thread_instruction_count"),
                    _ => NULL_STR,
                };
            }
            let kind = match scope {
                Scope::Thread(_) => "thread_counter_track_event",
                Scope::Process(_) => "process_counter_track_event",
                Scope::Global => "global_counter_track_event",
            };
            let mut row = TrackRow::new(name, kind, mrow, TrackEventType::Counter);
            // Builtin counters imply their unit.
            let unit = match (counter.unit, counter.builtin) {
                (0, 1) => 1,
                (0, 2) => 2,
                (u, _) => u,
            };
            row.unit = match unit {
                1 => self.sink.intern("ns"),
                2 => self.sink.intern("count"),
                3 => self.sink.intern("bytes"),
                _ => counter.unit_name,
            };
            match scope {
                Scope::Thread(u) => row.utid = Some(u),
                Scope::Process(u) => row.upid = Some(u),
                Scope::Global => {}
            }
            row.source_args = self.descriptor_args(d);
            return self.new_track(row);
        }
        if let Some(t) = d.thread {
            let utid = self.descriptor_thread(machine, d.uuid, t);
            if !d.disallow_merging_with_system_tracks {
                return self.thread_slices_track(utid);
            }
            let mut row = TrackRow::new(d.name, "thread_track_event", mrow, TrackEventType::Slice);
            row.utid = Some(utid);
            row.source_args = self.descriptor_args(d);
            return self.new_track(row);
        }
        if let Some(p) = d.process {
            let upid = self.descriptor_process(machine, d.uuid, p);
            let mut row = TrackRow::new(d.name, "process_track_event", mrow, TrackEventType::Slice);
            row.upid = Some(upid);
            row.source_args = self.descriptor_args(d);
            return self.new_track(row);
        }
        let scope = self.descriptor_scope(machine, d);
        let kind = match scope {
            Scope::Thread(_) => "thread_track_event",
            Scope::Process(_) => "process_track_event",
            Scope::Global => "global_track_event",
        };
        let event_type = if d.is_state {
            TrackEventType::State
        } else {
            TrackEventType::Slice
        };
        let mut row = TrackRow::new(d.name, kind, mrow, event_type);
        match scope {
            Scope::Thread(u) => row.utid = Some(u),
            Scope::Process(u) => row.upid = Some(u),
            Scope::Global => {}
        }
        row.name_from_first_event = d.name == NULL_STR && !d.is_state;
        // Parent link, unless the parent is a thread/process root.
        if let Some(p) = d.parent_uuid {
            let parent = self.sink.descriptors.get(&(machine, p)).cloned();
            if let Some(pd) = parent {
                if pd.thread.is_none() && pd.process.is_none() {
                    let (pt, _) = self.descriptor_track(machine, p, None);
                    row.parent_id = Some(pt);
                }
            }
        }
        row.source_args = self.descriptor_args(d);
        self.new_track(row)
    }

    /// Track args Trace Processor gives descriptor tracks.
    fn descriptor_args(&mut self, d: &Descriptor) -> ArgsRef {
        let mut args = Vec::new();
        let mut add = |sink: &mut Sink, key: &str, value: ArgValue| args.push(sink.arg(key, value));
        let descriptor = self.sink.intern("descriptor");
        add(self.sink, "source", ArgValue::Str(descriptor));
        add(self.sink, "trace_id", ArgValue::Uint(d.uuid));
        let is_root = d.parent_uuid.is_none();
        add(self.sink, "is_root_in_scope", ArgValue::Bool(is_root));
        if d.description != NULL_STR {
            add(self.sink, "description", ArgValue::Str(d.description));
        }
        let ordering = match d.child_ordering {
            1 => Some("lexicographic"),
            2 => Some("chronological"),
            3 => Some("explicit"),
            _ => None,
        };
        if let Some(o) = ordering {
            let o = self.sink.intern(o);
            add(self.sink, "child_ordering", ArgValue::Str(o));
        }
        if let Some(rank) = d.sibling_order_rank {
            add(
                self.sink,
                "sibling_order_rank",
                ArgValue::Int(i64::from(rank)),
            );
        }
        if d.has_first_packet_on_sequence {
            add(
                self.sink,
                "has_first_packet_on_sequence",
                ArgValue::Bool(true),
            );
        }
        self.sink.args.push(&args)
    }

    // ----- slices ----------------------------------------------------------------------

    /// Pops what has ended before `ts` (Trace Processor's stack cleaning).
    fn clean_stack(&mut self, track: u32, ts: i64, new_dur: i64) {
        loop {
            let stack = &mut self.stacks[track as usize];
            let Some(top) = stack.last().copied() else {
                return;
            };
            if let Some(end) = top.end() {
                let same_ts_instants = top.dur == 0 && new_dur == 0 && end == ts;
                if end < ts || (end == ts && !same_ts_instants) {
                    stack.pop();
                    self.emit_slice(top.slice);
                    continue;
                }
                return;
            }
            // The top is open: a completed slice below it that has ended means the open
            // ones above it were never closed in time.
            let below = stack
                .iter()
                .rposition(|e| e.end().is_some_and(|end| end <= ts && e.dur >= 0));
            let Some(i) = below else {
                return;
            };
            let end = stack[i].end().unwrap_or(ts);
            let closing: Vec<StackEntry> = stack.drain(i + 1..).collect();
            for e in closing.into_iter().rev() {
                if e.dur < 0 {
                    if let Some(row) = self.live_slices.get_mut(&e.slice) {
                        row.dur = end - e.ts;
                    }
                }
                self.emit_slice(e.slice);
            }
            let m = self.tables.tracks[track as usize].machine;
            self.stat("misplaced_end_event", m);
        }
    }

    /// A stat that also gets a `_trace_import_logs` row with the args explaining it.
    fn log(
        &mut self,
        name: &'static str,
        machine_row: u32,
        ts: i64,
        args: Vec<(&'static str, ArgValue)>,
    ) {
        self.stat(name, machine_row);
        let set: Vec<Arg> = args
            .into_iter()
            .map(|(k, value)| {
                let key = self.sink.intern(k);
                Arg {
                    flat_key: key,
                    key,
                    value,
                }
            })
            .collect();
        let args = self.sink.args.push(&set);
        self.tables.import_logs.push(ImportLogRow {
            ts,
            name,
            file: self.sink.current_file,
            args,
        });
    }

    fn stat(&mut self, name: &'static str, machine_row: u32) {
        let raw = machine_row as MachineId;
        let file = self.sink.current_file;
        *self
            .sink
            .stats
            .entry(StatKey {
                name,
                idx: None,
                machine: raw,
                file,
            })
            .or_insert(0) += 1;
    }

    fn push_slice(
        &mut self,
        track: u32,
        ts: i64,
        dur: i64,
        ev: &SliceEvent,
        thread_dur: i64,
    ) -> u32 {
        let stack = &self.stacks[track as usize];
        let depth = stack.len() as u32;
        let parent = stack.last().map(|e| e.slice);
        let id = self.slice_ts.len() as u32;
        self.slice_ts.push(ts);
        self.live_slices.insert(
            id,
            SliceRow {
                ts,
                dur,
                track,
                category: ev.category,
                name: ev.name,
                depth,
                parent,
                args: ev.args,
                thread_ts: ev.thread_ts,
                thread_dur,
                file: self.event_file,
            },
        );
        self.stacks[track as usize].push(StackEntry { slice: id, ts, dur });
        let track_row = &mut self.tables.tracks[track as usize];
        if track_row.name_from_first_event && track_row.name == NULL_STR {
            track_row.name = ev.name;
        }
        // Flows waiting for the next slice on this track.
        if !self.flows.waiting_next.is_empty() {
            let mut i = 0;
            while i < self.flows.waiting_next.len() {
                if self.flows.waiting_next[i].0 == track {
                    let (_, out, trace_id, args) = self.flows.waiting_next.swap_remove(i);
                    self.tables.flows.push(FlowRow {
                        slice_out: out,
                        slice_in: id,
                        trace_id: Some(trace_id),
                        args,
                    });
                } else {
                    i += 1;
                }
            }
        }
        id
    }

    fn begin(&mut self, track: u32, ts: i64, ev: &SliceEvent) -> Option<u32> {
        if track == u32::MAX {
            return None;
        }
        self.clean_stack(track, ts, -1);
        let id = self.push_slice(track, ts, -1, ev, NO_TS);
        self.apply_flows(ev.flows, id);
        Some(id)
    }

    /// A Begin on a legacy unnestable track: nothing while the track has an open slice.
    fn begin_unnestable(&mut self, track: u32, ts: i64, ev: &SliceEvent) -> Option<u32> {
        if track == u32::MAX {
            return None;
        }
        let state = self.unnestable.entry(track).or_insert((0, 0));
        state.0 += 1;
        state.1 = ts;
        if !self.stacks[track as usize].is_empty() {
            return None;
        }
        self.begin(track, ts, ev)
    }

    fn end(&mut self, track: u32, ts: i64, ev: &SliceEvent) -> Option<u32> {
        if track == u32::MAX {
            return None;
        }
        self.clean_stack(track, ts, -1);
        let stack = &self.stacks[track as usize];
        let mut found = None;
        for (i, e) in stack.iter().enumerate().rev() {
            if e.dur >= 0 {
                continue;
            }
            let Some(row) = self.live_slices.get(&e.slice) else {
                continue;
            };
            if ev.category != NULL_STR && row.category != ev.category {
                continue;
            }
            if ev.name != NULL_STR && row.name != NULL_STR && row.name != ev.name {
                continue;
            }
            found = Some(i);
            break;
        }
        let i = found?;
        let entry = self.stacks[track as usize][i];
        let dur = ts - entry.ts;
        let row = self.live_slices.get_mut(&entry.slice)?;
        row.dur = dur;
        if ev.thread_ts != NO_TS && row.thread_ts != NO_TS {
            row.thread_dur = ev.thread_ts - row.thread_ts;
        }
        let begin_args = row.args;
        // End args merge into the slice's (same key: End wins); a legacy unnestable track
        // adds its begin count and last begin ts.
        let mut extra: Vec<Arg> = self.sink.args.get(ev.args).to_vec();
        if let Some(&(count, last)) = self.unnestable.get(&track) {
            for (k, v) in [
                ("legacy_unnestable_begin_count", count),
                ("legacy_unnestable_last_begin_ts", last),
            ] {
                let key = self.sink.intern(k);
                extra.push(Arg {
                    flat_key: key,
                    key,
                    value: ArgValue::Int(v),
                });
            }
        }
        if !extra.is_empty() {
            let begin: Vec<Arg> = self.sink.args.get(begin_args).to_vec();
            let merged = merge_end_args(&begin, &extra, self.sink);
            let merged = self.sink.args.push(&merged);
            if let Some(row) = self.live_slices.get_mut(&entry.slice) {
                row.args = merged;
            }
        }
        self.apply_flows(ev.flows, entry.slice);
        let stack = &mut self.stacks[track as usize];
        if i == stack.len() - 1 {
            stack.pop();
            self.emit_slice(entry.slice);
        } else {
            stack[i].dur = dur;
        }
        Some(entry.slice)
    }

    fn complete(
        &mut self,
        track: u32,
        ts: i64,
        dur: i64,
        thread_dur: i64,
        ev: &SliceEvent,
        overlap: Overlap,
    ) -> Option<u32> {
        if track == u32::MAX {
            return None;
        }
        let machine = self.tables.tracks[track as usize].machine;
        if dur < 0 {
            self.log("slice_negative_duration", machine, ts, Vec::new());
            return None;
        }
        self.clean_stack(track, ts, dur);
        let end = ts.saturating_add(dur);
        let conflict = self.stacks[track as usize]
            .last()
            .copied()
            .filter(|top| top.end().is_some_and(|parent_end| end > parent_end));
        let track = if let Some(parent) = conflict {
            let parent_name = self
                .live_slices
                .get(&parent.slice)
                .map_or(NULL_STR, |r| r.name);
            let mut args = vec![
                ("overlap_start", ArgValue::Int(ts)),
                ("overlap_end", ArgValue::Int(parent.end().unwrap_or(ts))),
                ("conflicting_slice_name", str_or_null(parent_name)),
                ("conflicting_slice_ts", ArgValue::Int(parent.ts)),
                ("conflicting_slice_dur", ArgValue::Int(parent.dur)),
            ];
            match overlap {
                Overlap::Drop => {
                    self.log("slice_drop_overlapping_complete_event", machine, ts, args);
                    return None;
                }
                Overlap::Spill => {
                    let phase = self.sink.intern("X");
                    args.push(("event_name", str_or_null(ev.name)));
                    args.push(("event_phase", ArgValue::Str(phase)));
                    self.log("slice_spill_overlapping_complete_event", machine, ts, args);
                    let utid = self.tables.tracks[track as usize].utid;
                    match utid {
                        Some(utid) => self.overlap_lane(utid, ts, dur),
                        None => return None,
                    }
                }
            }
        } else {
            track
        };
        let id = self.push_slice(track, ts, dur, ev, thread_dur);
        self.apply_flows(ev.flows, id);
        Some(id)
    }

    /// First overflow lane where a partially overlapping slice nests, else a new lane.
    fn overlap_lane(&mut self, utid: u32, ts: i64, dur: i64) -> u32 {
        let lanes = self
            .thread_overlap_tracks
            .get(&utid)
            .cloned()
            .unwrap_or_default();
        for lane in &lanes {
            self.clean_stack(*lane, ts, dur);
            let fits = match self.stacks[*lane as usize].last().and_then(|e| e.end()) {
                None => true,
                Some(parent_end) => ts.saturating_add(dur) <= parent_end,
            };
            if fits {
                return *lane;
            }
        }
        let machine = self.tables.threads[utid as usize].machine;
        let mut row = TrackRow::new(
            NULL_STR,
            "thread_overlapping_slice",
            machine,
            TrackEventType::Slice,
        );
        row.utid = Some(utid);
        row.compressor_idx = Some(lanes.len() as u32);
        let lane = self.new_track(row);
        self.thread_overlap_tracks
            .entry(utid)
            .or_default()
            .push(lane);
        lane
    }

    fn apply_flows(&mut self, flows: FlowsRef, slice: u32) {
        if flows == NO_FLOWS {
            return;
        }
        let ops: Vec<FlowOp> = self.sink.flow_ops(flows).to_vec();
        for op in ops {
            match op {
                FlowOp::Id(id) => {
                    if let Some(out) = self.flows.pending.insert(id, slice) {
                        self.flow_row(out, slice, id as i64);
                    }
                }
                FlowOp::Terminating(id) => {
                    if let Some(out) = self.flows.pending.remove(&id) {
                        self.flow_row(out, slice, id as i64);
                    }
                }
                FlowOp::V2Out(id) => {
                    self.flows.pending.insert(id, slice);
                }
                FlowOp::V2In(id) => match self.flows.pending.get(&id) {
                    Some(&out) => self.flow_row(out, slice, id as i64),
                    None => self.stat_slice("flow_end_without_start", slice),
                },
                FlowOp::V2Step(id) => match self.flows.pending.insert(id, slice) {
                    Some(out) => self.flow_row(out, slice, id as i64),
                    None => self.stat_slice("flow_step_without_start", slice),
                },
            }
        }
    }

    /// A popped slice is final: hand it to the writer.
    fn emit_slice(&mut self, id: u32) {
        if let Some(row) = self.live_slices.remove(&id) {
            self.out.slice(id, &row, self.sink);
            self.tables.slice_count += 1;
        }
    }

    fn stat_slice(&mut self, name: &'static str, slice: u32) {
        let Some(track) = self.live_slices.get(&slice).map(|r| r.track) else {
            return;
        };
        let machine = self.tables.tracks[track as usize].machine;
        self.stat(name, machine);
    }

    fn flow_row(&mut self, out: u32, slice_in: u32, trace_id: i64) {
        // A flow always points forward in time.
        let (a, b) = if self.slice_ts.get(out as usize) <= self.slice_ts.get(slice_in as usize) {
            (out, slice_in)
        } else {
            (slice_in, out)
        };
        self.tables.flows.push(FlowRow {
            slice_out: a,
            slice_in: b,
            trace_id: Some(trace_id),
            args: NO_ARGS,
        });
    }

    fn flow_v1(&mut self, ts: i64, f: &FlowV1Event) {
        let track = self.resolve_track(f.track);
        // Async keys pick their track per slice; a flow event cannot name one.
        if track == u32::MAX {
            return;
        }
        self.clean_stack(track, ts, 0);
        let top = self.stacks[track as usize].last().map(|e| e.slice);
        let key = (f.id, f.category, f.name);
        let next_id = self.flows.v1_ids.len() as i64;
        let trace_id = *self.flows.v1_ids.entry(key).or_insert(next_id);
        let machine = self.tables.tracks[track as usize].machine;
        match f.phase {
            FlowV1Phase::Start => match top {
                Some(s) => {
                    if self.flows.v1_pending.insert(key, (s, trace_id)).is_some() {
                        self.stat("flow_duplicate_id", machine);
                    }
                }
                None => self.stat("flow_no_enclosing_slice", machine),
            },
            FlowV1Phase::Step => {
                let Some(&(out, _)) = self.flows.v1_pending.get(&key) else {
                    self.stat("flow_step_without_start", machine);
                    return;
                };
                let Some(s) = top else {
                    self.stat("flow_no_enclosing_slice", machine);
                    return;
                };
                let args = self.v1_args(f);
                self.tables.flows.push(FlowRow {
                    slice_out: out,
                    slice_in: s,
                    trace_id: Some(trace_id),
                    args,
                });
                self.flows.v1_pending.insert(key, (s, trace_id));
            }
            FlowV1Phase::End => {
                let Some(&(out, _)) = self.flows.v1_pending.get(&key) else {
                    self.stat("flow_end_without_start", machine);
                    return;
                };
                let args = self.v1_args(f);
                match (f.bind_enclosing, top) {
                    (true, Some(s)) => self.tables.flows.push(FlowRow {
                        slice_out: out,
                        slice_in: s,
                        trace_id: Some(trace_id),
                        args,
                    }),
                    _ => self.flows.waiting_next.push((track, out, trace_id, args)),
                }
            }
        }
    }

    fn v1_args(&mut self, f: &FlowV1Event) -> ArgsRef {
        let name = self.sink.intern("name");
        let cat = self.sink.intern("cat");
        let mut args = Vec::new();
        if f.name != NULL_STR {
            args.push(Arg {
                flat_key: name,
                key: name,
                value: ArgValue::Str(f.name),
            });
        }
        if f.category != NULL_STR {
            args.push(Arg {
                flat_key: cat,
                key: cat,
                value: ArgValue::Str(f.category),
            });
        }
        self.sink.args.push(&args)
    }

    // ----- sched -----------------------------------------------------------------------

    fn sched_switch(&mut self, ts: i64, s: &SchedSwitch) {
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

    /// Replaces [`ArgValue::ThreadUtid`] args by the thread's utid.
    fn resolve_thread_args(&mut self, args: ArgsRef) -> ArgsRef {
        if args == NO_ARGS
            || !self
                .sink
                .args
                .get(args)
                .iter()
                .any(|a| matches!(a.value, ArgValue::ThreadUtid(_)))
        {
            return args;
        }
        let mut resolved: Vec<Arg> = self.sink.args.get(args).to_vec();
        for a in &mut resolved {
            if let ArgValue::ThreadUtid(r) = a.value {
                let t = *self.sink.thread_refs.get(r);
                a.value = ArgValue::Int(i64::from(self.thread(t)));
            }
        }
        self.sink.args.push(&resolved)
    }

    fn process_arg(&mut self, process: ProcessRef, key: StrId, value: ArgValue) {
        let upid = self.process(process);
        self.tables.processes[upid as usize]
            .extra_args
            .push((key, value));
    }

    /// An ftrace event's `ftrace_event` row.
    fn ftrace_raw(&mut self, ts: i64, raw: &FtraceRaw) {
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

    /// A syscall's begin or end, named for the machine's architecture.
    fn syscall(
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

    /// The track a begin or end lands on: async cookies pick (and count) their slot.
    fn slice_track(&mut self, track: TrackRef, ts: i64, phase: AsyncPhase) -> u32 {
        let key = *self.sink.tracks.get(track);
        match key {
            TrackKey::AsyncCookie { .. } => self.async_track(key, ts, phase),
            _ => self.resolve_track(track),
        }
    }

    /// Applies one event (already in trace time, in sorted order).
    pub fn apply(&mut self, ts: i64, data: &EventData) {
        match *data {
            EventData::Begin(mut s) => {
                s.args = self.resolve_thread_args(s.args);
                let track = self.slice_track(s.track, ts, AsyncPhase::Begin);
                self.note_ts(ts);
                self.begin(track, ts, &s);
            }
            EventData::BeginUnnestable(s) => {
                let track = self.slice_track(s.track, ts, AsyncPhase::Begin);
                self.note_ts(ts);
                self.begin_unnestable(track, ts, &s);
            }
            EventData::End(mut s) => {
                s.args = self.resolve_thread_args(s.args);
                let track = self.slice_track(s.track, ts, AsyncPhase::End);
                self.note_ts(ts);
                self.end(track, ts, &s);
            }
            EventData::Complete {
                mut slice,
                dur,
                thread_dur,
            } => {
                slice.args = self.resolve_thread_args(slice.args);
                let key = *self.sink.tracks.get(slice.track);
                let overlap = if matches!(key, TrackKey::ThreadOverlap(_)) {
                    Overlap::Spill
                } else {
                    Overlap::Drop
                };
                let track = match key {
                    TrackKey::AsyncCookie { .. } => {
                        // An instant on a cookie nests under that cookie's open slices.
                        self.async_track(key, ts, AsyncPhase::Begin);
                        self.async_track(key, ts, AsyncPhase::End)
                    }
                    TrackKey::AsyncScoped { .. } => self.async_track(
                        key,
                        ts,
                        AsyncPhase::Scoped {
                            end: ts.saturating_add(dur.max(0)),
                        },
                    ),
                    _ => self.resolve_track(slice.track),
                };
                self.note_ts(ts);
                self.note_ts(ts.saturating_add(dur.max(0)));
                self.complete(track, ts, dur, thread_dur, &slice, overlap);
            }
            EventData::Counter { track, value, args } => {
                let track = self.resolve_track(track);
                self.note_ts(ts);
                let row = CounterRow {
                    ts,
                    track,
                    value: value.0,
                    args,
                };
                self.out.counter(self.tables.counter_count, &row, self.sink);
                self.tables.counter_count += 1;
            }
            EventData::State {
                track,
                category,
                value,
                args,
            } => {
                let track = self.resolve_track(track);
                self.note_ts(ts);
                if let Some(&prev) = self.open_states.get(&track) {
                    if let Some(row) = self.tables.states.get_mut(prev) {
                        row.dur = ts - row.ts;
                    }
                }
                self.open_states.insert(track, self.tables.states.len());
                self.tables.states.push(StateRow {
                    ts,
                    dur: -1,
                    track,
                    category,
                    value,
                    args,
                });
            }
            EventData::Syscall {
                track,
                machine,
                number,
                args,
                enter,
            } => self.syscall(ts, track, machine, number, args, enter),
            EventData::FtraceRaw(raw) => self.ftrace_raw(ts, &raw),
            EventData::FlowV1(f) => self.flow_v1(ts, &f),
            EventData::SchedSwitch(s) => {
                self.note_ts(ts);
                self.sched_switch(ts, &s);
            }
            EventData::SchedWaking(w) => {
                let utid = self.thread(ThreadRef {
                    machine: w.machine,
                    tid: w.tid,
                    pid: None,
                });
                self.set_thread_name(utid, w.comm, NamePriority::Ftrace);
                let waker = w.waker_tid.map(|tid| {
                    self.thread(ThreadRef {
                        machine: w.machine,
                        tid,
                        pid: None,
                    })
                });
                self.thread_state_waking(ts, utid, waker, w.irq_context);
            }
            EventData::CpuInfo(ref info) => {
                let index = self.cpu_index(info.machine, info.cpu);
                let row = &mut self.tables.cpus[index];
                row.cluster_id = Some(info.cluster_id);
                row.processor = info.processor;
                row.capacity = info.capacity;
                row.frequencies.clone_from(&info.frequencies);
                row.args = info.args;
            }
            EventData::BlockedReason {
                thread,
                io_wait,
                function,
            } => {
                let utid = self.thread(thread);
                self.thread_state_blocked_reason(utid, io_wait, function);
            }
            EventData::ThreadName {
                thread,
                name,
                priority,
            } => {
                let utid = self.thread(thread);
                self.set_thread_name(utid, name, priority);
                // A main thread's name from the system also names its process.
                let _ = utid;
            }
            EventData::Thread(t) => {
                self.thread(t);
            }
            EventData::ClaimThread { thread, uuid } => self.claim_thread(thread, uuid),
            EventData::ProcessStrArg {
                process,
                key,
                value,
            } => self.process_arg(process, key, ArgValue::Str(value)),
            EventData::ClaimProcess { process, uuid } => self.claim_process(process, uuid),
            EventData::Process(ref info) => self.process_info(info),
            EventData::ThreadStart(ref t) => {
                self.thread_start(ts, t.thread, t.creator_tid, t.name, t.new_process)
            }
            EventData::ThreadEnd { machine, tid } => {
                if let Some(utid) = self.latest_live_thread(machine, tid) {
                    self.tables.threads[utid as usize].end_ts = Some(ts);
                    if let Some(upid) = self.tables.threads[utid as usize].upid {
                        if self.tables.processes[upid as usize].pid == tid {
                            self.tables.processes[upid as usize].end_ts = Some(ts);
                            self.process_by_pid.remove(&(machine, tid));
                        }
                    }
                }
            }
            EventData::ThreadArg { thread, key, value } => {
                let utid = self.thread(thread);
                self.tables.threads[utid as usize]
                    .extra_args
                    .push((key, ArgValue::Int(value)));
            }
            EventData::ProcessArg {
                process,
                key,
                value,
            } => self.process_arg(process, key, ArgValue::Int(value)),
            EventData::ThreadState(ref st) => self.thread_state_event(ts, st),
        }
    }

    /// A thread state the trace states itself (JSON `T`); `Running` on a cpu is also a
    /// `sched` row.
    fn thread_state_event(&mut self, ts: i64, st: &ThreadStateEvent) {
        let utid = self.thread(st.thread);
        self.note_ts(ts);
        let row = ThreadStateRow {
            ts,
            dur: st.dur,
            cpu: None,
            ucpu: None,
            utid,
            state: st.state,
            io_wait: st.io_wait,
            blocked_function: st.blocked_function,
            waker_utid: None,
            waker_id: None,
            irq_context: None,
        };
        self.out
            .thread_state(self.tables.thread_state_count, &row, self.sink);
        self.tables.thread_state_count += 1;
        if let Some(cpu) = st.running_cpu {
            let ucpu = self.cpu(st.thread.machine, cpu);
            let row = SchedRow {
                ts,
                dur: st.dur,
                cpu,
                ucpu,
                utid,
                end_state: NULL_STR,
                priority: 0,
            };
            let id = self.tables.sched_count;
            self.tables.sched_count += 1;
            self.out.sched(id, &row, self.sink);
        }
    }

    fn note_ts(&mut self, ts: i64) {
        let b = &mut self.tables.bounds;
        b.0 = b.0.min(ts);
        b.1 = b.1.max(ts);
    }

    fn process_info(&mut self, info: &ProcessInfo) {
        let parent = info.parent_pid.map(|ppid| {
            self.process(ProcessRef {
                machine: info.process.machine,
                pid: ppid,
            })
        });
        let upid = self.process(info.process);
        let row = &mut self.tables.processes[upid as usize];
        if row.parent_upid.is_none() {
            row.parent_upid = parent;
        }
        if info.cmdline != NULL_STR {
            row.cmdline = info.cmdline;
        }
        if let Some(uid) = info.uid {
            row.uid = Some(uid);
        }
        if row.start_ts.is_none() {
            row.start_ts = info.start_ts;
        }
        self.set_process_name(upid, info.name, info.from_system);
    }

    fn thread_start(
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
        let creator = self.thread(ThreadRef {
            machine: thread.machine,
            tid: creator_tid,
            pid: None,
        });
        let creator_upid = self.tables.threads[creator as usize].upid;
        // The old thread with this tid (if any) is gone.
        if let Some(old) = self.latest_live_thread(thread.machine, thread.tid) {
            self.tables.threads[old as usize].end_ts.get_or_insert(ts);
        }
        let started = if new_process {
            self.process_by_pid.remove(&(thread.machine, thread.tid));
            let upid = self.process(ProcessRef {
                machine: thread.machine,
                pid: thread.tid,
            });
            let row = &mut self.tables.processes[upid as usize];
            row.start_ts = Some(ts);
            row.parent_upid = creator_upid;
            self.set_process_name(upid, name, true);
            let utid = self.latest_live_thread(thread.machine, thread.tid);
            if let Some(utid) = utid {
                self.tables.threads[utid as usize].start_ts = Some(ts);
                self.set_thread_name(utid, name, NamePriority::Ftrace);
            }
            utid
        } else {
            let utid = self.new_thread(thread.machine, thread.tid, creator_upid);
            self.tables.threads[utid as usize].start_ts = Some(ts);
            self.set_thread_name(utid, name, NamePriority::Ftrace);
            Some(utid)
        };
        if let Some(utid) = started {
            self.thread_state_new_task(ts, utid, creator);
        }
    }

    /// Finishes the import: hands over what is still open and returns the small tables.
    pub fn finish(mut self) -> Tables {
        // Every described track gets a row, even one no event landed on (thread tracks
        // excepted: they are the thread's own track, made when used).
        let mut described: Vec<(MachineId, u64)> = self
            .sink
            .descriptors
            .iter()
            .filter(|(_, d)| d.thread.is_none())
            .map(|(k, _)| *k)
            .collect();
        described.sort_unstable();
        for (machine, uuid) in described {
            self.descriptor_track(machine, uuid, None);
        }
        let mut open: Vec<u32> = self.live_slices.keys().copied().collect();
        open.sort_unstable();
        for id in open {
            self.emit_slice(id);
        }
        let mut pending: Vec<(u32, SchedRow)> =
            self.sched_pending.drain().map(|(_, v)| v).collect();
        pending.sort_unstable_by_key(|p| p.0);
        for (id, row) in pending {
            self.out.sched(id, &row, self.sink);
        }
        self.flush_thread_states();
        for (track, utid) in std::mem::take(&mut self.unsettled_process_counters) {
            if let Some(upid) = self.tables.threads[utid as usize].upid {
                let row = &mut self.tables.tracks[track as usize];
                row.upid = Some(upid);
                row.utid = None;
            }
        }
        self.tables
    }
}

fn str_or_null(s: StrId) -> ArgValue {
    if s == NULL_STR {
        ArgValue::Null
    } else {
        ArgValue::Str(s)
    }
}

#[derive(Clone, Copy)]
enum AsyncPhase {
    Begin,
    End,
    Scoped { end: i64 },
}

enum Scope {
    Global,
    Thread(u32),
    Process(u32),
}

/// Builds tables from a sink whose events are already converted to trace time and sorted.
pub fn build(
    sink: &mut Sink,
    machines: &[MachineId],
    swapper_machines: &[MachineId],
    out: &mut dyn RowSink,
) -> Tables {
    let events = std::mem::take(&mut sink.events);
    let payloads = std::mem::take(&mut sink.payloads);
    let mut builder = Builder::new(sink, out);
    for &m in machines {
        builder.add_machine(m);
    }
    for &m in swapper_machines {
        builder.name_idle_thread(m);
    }
    let clock_files: Vec<u32> = (0..builder.sink.clocks.len())
        .map(|c| builder.sink.clocks.get(c as u32).file)
        .collect();
    for (i, ev) in events.iter().enumerate() {
        let (clock, data) = &payloads[ev.payload as usize];
        builder.event_file = clock_files
            .get(usize::from(*clock))
            .copied()
            .unwrap_or(NO_FILE);
        builder.apply(ev.ts, data);
        if (i + 1).is_multiple_of(tables::CHECKPOINT_EVENTS) {
            builder.out.checkpoint(&builder.tables, builder.sink);
        }
    }
    let tables = builder.finish();
    drop(events);
    sink.payloads = payloads;
    tables
}

/// An End's args merged into its slice's, as Trace Processor's args tracker does: a key
/// already present takes the End's value, and an array the slice already has is extended
/// (the End's `a[0]` becomes `a[n]` after the slice's n entries) rather than overwritten.
fn merge_end_args(begin: &[Arg], end: &[Arg], sink: &mut Sink) -> Vec<Arg> {
    let mut merged = begin.to_vec();
    // Next free index of each array of the slice, by the key up to its first `[`.
    let mut next_index: HashMap<String, u64> = HashMap::new();
    for arg in begin {
        let Some(key) = sink.strings.get(arg.key) else {
            continue;
        };
        if let Some((prefix, index)) = first_array_index(key) {
            let next = next_index.entry(prefix.to_string()).or_insert(0);
            *next = (*next).max(index.saturating_add(1));
        }
    }
    for arg in end {
        let mut arg = *arg;
        let renamed = sink.strings.get(arg.key).and_then(|key| {
            let (prefix, index) = first_array_index(key)?;
            let base = *next_index.get(prefix)?;
            let open = prefix.len();
            let close = open + key[open..].find(']')?;
            Some(format!(
                "{prefix}[{}{}",
                base.saturating_add(index),
                &key[close..]
            ))
        });
        if let Some(key) = renamed {
            arg.key = sink.intern(&key);
        }
        match merged.iter_mut().find(|a| a.key == arg.key) {
            Some(existing) => *existing = arg,
            None => merged.push(arg),
        }
    }
    merged
}

/// `("a.b", 3)` for the key `a.b[3].c`.
fn first_array_index(key: &str) -> Option<(&str, u64)> {
    let open = key.find('[')?;
    let close = open + key[open..].find(']')?;
    let index = key[open + 1..close].parse().ok()?;
    Some((&key[..open], index))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(tid: i64) -> ThreadRef {
        ThreadRef {
            machine: HOST_MACHINE,
            tid,
            pid: Some(1),
        }
    }

    fn complete(sink: &mut Sink, key: TrackKey, ts: i64, dur: i64, name: &str) {
        let clock = sink.builtin_clock(HOST_MACHINE, clocks::TRACE_FILE);
        let slice = SliceEvent {
            track: sink.track(key),
            category: NULL_STR,
            name: sink.intern(name),
            args: NO_ARGS,
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        let data = EventData::Complete {
            slice,
            dur,
            thread_dur: NO_TS,
        };
        sink.push(ts, clock, data);
    }

    fn run(sink: &mut Sink) -> (Tables, CollectRows) {
        sink.events.sort_by_key(|e| (e.ts, e.ord));
        let mut rows = CollectRows::default();
        let tables = build(sink, &[HOST_MACHINE], &[], &mut rows);
        rows.slices.sort_by_key(|(id, _)| *id);
        (tables, rows)
    }

    fn stat(sink: &Sink, name: &str) -> i64 {
        sink.stat_total(name)
    }

    fn log_args(sink: &Sink, log: &ImportLogRow) -> Vec<(String, ArgValue)> {
        sink.args
            .get(log.args)
            .iter()
            .map(|a| (sink.strings.get(a.key).unwrap_or("").to_string(), a.value))
            .collect()
    }

    #[test]
    fn overlapping_complete_spills_to_a_lane_and_logs() {
        let mut sink = Sink::new();
        let key = TrackKey::ThreadOverlap(thread(1));
        complete(&mut sink, key, 100, 100, "outer");
        complete(&mut sink, key, 150, 100, "inner");
        complete(&mut sink, key, 160, 20, "nested");
        let (tables, rows) = run(&mut sink);
        let placed: Vec<(&str, &str, u32)> = rows
            .slices
            .iter()
            .map(|(_, r)| {
                let name = sink.strings.get(r.name).unwrap_or("");
                (name, tables.tracks[r.track as usize].kind, r.depth)
            })
            .collect();
        assert_eq!(
            placed,
            vec![
                ("outer", "thread_execution", 0),
                ("inner", "thread_overlapping_slice", 0),
                ("nested", "thread_execution", 1),
            ]
        );
        assert_eq!(stat(&sink, "slice_spill_overlapping_complete_event"), 1);
        assert_eq!(stat(&sink, "slice_drop_overlapping_complete_event"), 0);
        assert_eq!(tables.import_logs.len(), 1);
        let log = tables.import_logs[0];
        assert_eq!(
            (log.ts, log.name),
            (150, "slice_spill_overlapping_complete_event")
        );
        let args = log_args(&sink, &log);
        assert!(args.contains(&("overlap_start".into(), ArgValue::Int(150))));
        assert!(args.contains(&("overlap_end".into(), ArgValue::Int(200))));
        assert!(args.contains(&("conflicting_slice_ts".into(), ArgValue::Int(100))));
        assert!(args.contains(&("conflicting_slice_dur".into(), ArgValue::Int(100))));
        let name_of = |k: &str| {
            args.iter().find(|a| a.0 == k).and_then(|a| match a.1 {
                ArgValue::Str(s) => sink.strings.get(s),
                _ => None,
            })
        };
        assert_eq!(name_of("conflicting_slice_name"), Some("outer"));
        assert_eq!(name_of("event_name"), Some("inner"));
        assert_eq!(name_of("event_phase"), Some("X"));
    }

    #[test]
    fn overlapping_complete_on_a_plain_track_is_dropped_and_logged() {
        let mut sink = Sink::new();
        let key = TrackKey::ThreadSlices(thread(1));
        complete(&mut sink, key, 100, 100, "outer");
        complete(&mut sink, key, 150, 100, "inner");
        let (tables, rows) = run(&mut sink);
        assert_eq!(rows.slices.len(), 1);
        assert_eq!(stat(&sink, "slice_drop_overlapping_complete_event"), 1);
        assert_eq!(tables.import_logs.len(), 1);
        assert_eq!(
            tables.import_logs[0].name,
            "slice_drop_overlapping_complete_event"
        );
        assert_eq!(log_args(&sink, &tables.import_logs[0]).len(), 5);
    }

    #[test]
    fn waking_a_blocked_thread_makes_it_runnable_and_names_the_running_waker() {
        let mut sink = Sink::new();
        let clock = sink.builtin_clock(HOST_MACHINE, clocks::BOOTTIME);
        let (running, runnable, sleeping) =
            (sink.intern("Running"), sink.intern("R"), sink.intern("S"));
        let switch = |prev: i64, state: StrId, next: i64| {
            EventData::SchedSwitch(SchedSwitch {
                machine: HOST_MACHINE,
                cpu: 0,
                prev_tid: prev,
                prev_comm: NULL_STR,
                prev_state: state,
                next_tid: next,
                next_comm: NULL_STR,
                next_prio: 120,
            })
        };
        let waking = |tid: i64, waker: i64| {
            EventData::SchedWaking(SchedWaking {
                machine: HOST_MACHINE,
                cpu: 0,
                tid,
                comm: NULL_STR,
                waker_tid: Some(waker),
                irq_context: Some(true),
            })
        };
        sink.push(100, clock, switch(0, runnable, 7));
        sink.push(200, clock, switch(7, sleeping, 8));
        sink.push(300, clock, waking(7, 8));
        // Already runnable: a spurious wakeup changes nothing.
        sink.push(350, clock, waking(7, 8));
        let (_, rows) = run(&mut sink);
        let mut got: Vec<_> = rows
            .thread_states
            .iter()
            .map(|(id, r)| (*id, r.ts, r.dur, r.state, r.waker_id, r.irq_context))
            .collect();
        got.sort_unstable();
        assert_eq!(
            got,
            vec![
                (0, 100, 100, running, None, None),
                (1, 200, 100, sleeping, None, None),
                (2, 200, -1, running, None, None),
                // Woken by 8 while 8 was running in row 2.
                (3, 300, -1, runnable, Some(2), Some(true)),
            ]
        );
    }

    #[test]
    fn thread_state_rows_and_running_sched() {
        let mut sink = Sink::new();
        let clock = sink.builtin_clock(HOST_MACHINE, clocks::TRACE_FILE);
        let running = sink.intern("Running");
        let sleeping = sink.intern("S");
        let blocked = sink.intern("wait");
        let states = [
            (1000, 500, running, None, NULL_STR, Some(2)),
            (1500, 100, sleeping, Some(true), blocked, None),
            (1600, 50, running, None, NULL_STR, None),
        ];
        for (ts, dur, state, io_wait, blocked_function, running_cpu) in states {
            let ev = ThreadStateEvent {
                thread: thread(7),
                dur,
                state,
                io_wait,
                blocked_function,
                running_cpu,
            };
            sink.push(ts, clock, EventData::ThreadState(Box::new(ev)));
        }
        let (tables, rows) = run(&mut sink);
        let got: Vec<_> = rows
            .thread_states
            .iter()
            .map(|(id, r)| (*id, r.ts, r.dur, r.state, r.io_wait, r.blocked_function))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 1000, 500, running, None, NULL_STR),
                (1, 1500, 100, sleeping, Some(true), blocked),
                (2, 1600, 50, running, None, NULL_STR),
            ]
        );
        let utid = rows.thread_states[0].1.utid;
        assert_eq!(tables.threads[utid as usize].tid, 7);
        assert_eq!(rows.sched.len(), 1);
        let (id, sched) = rows.sched[0];
        assert_eq!(
            (id, sched.ts, sched.dur, sched.cpu, sched.utid),
            (0, 1000, 500, 2, utid)
        );
        assert_eq!(sched.ucpu, 2, "the host's ucpu is the cpu number");
        assert!(tables.cpus.iter().any(|c| c.ucpu == 2 && c.cpu == 2));
    }
}
