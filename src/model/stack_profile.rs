//! Stack profiles, as Trace Processor's StackProfileTracker and MappingTracker keep them:
//! the `stack_profile_mapping`, `stack_profile_frame`, `stack_profile_callsite` and
//! `stack_profile_symbol` tables every profiler shares, and the samples that point into
//! them (`cpu_profile_stack_sample`, `perf_sample`, `heap_profile_allocation`,
//! `heap_profile`), with perf samples' counter values on `perf_counter` tracks.
//!
//! The tables of frames are interned as the parsers read them ([`StackProfile`], kept in
//! the [`Sink`]: they do not depend on time, so a change of trace time keeps them); a
//! sample is an event like any other, and reaches this tracker sorted and on trace time,
//! which hands its row to the [`RowSink`].

use super::*;

/// A `stack_profile_mapping` row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MappingRow {
    /// Hex text of the build id ("" when there is none).
    pub build_id: StrId,
    pub exact_offset: i64,
    pub start_offset: i64,
    pub start: i64,
    pub end: i64,
    pub load_bias: i64,
    pub name: StrId,
}

/// A `stack_profile_frame` row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameRow {
    pub name: StrId,
    pub mapping: u32,
    pub rel_pc: i64,
    pub symbol_set: Option<u32>,
    pub deobfuscated_name: StrId,
    /// `type`: the frame's kind (`interpreted`, `jit`, a custom label), or NULL.
    pub kind: StrId,
}

/// A `stack_profile_callsite` row: one frame below its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallsiteRow {
    pub depth: u32,
    pub parent: Option<u32>,
    pub frame: u32,
}

/// A `stack_profile_symbol` row: one line of a frame's symbolization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SymbolRow {
    pub symbol_set: u32,
    pub name: StrId,
    pub source_file: StrId,
    pub line_number: Option<u32>,
    pub inlined: bool,
}

/// A perf sampling session (one per perf data source sequence): its counters' names.
#[derive(Clone, Debug, PartialEq)]
pub struct PerfSession {
    pub timebase: StrId,
    pub followers: Vec<StrId>,
    /// Its `stack_sample_session` row.
    pub profiler_session: Option<u32>,
}

/// What a perf sample carries besides its thread and cpu (see [`ProfileSample::Perf`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerfSampleData {
    pub session: u32,
    /// `cpu_mode` as Trace Processor spells it (`kernel`, `user`, …, `unknown`).
    pub cpu_mode: StrId,
    pub callsite: Option<u32>,
    /// The unwinder's error (`UNWIND_ERROR_…` without the prefix), or NULL.
    pub unwind_error: StrId,
    pub timebase_count: Option<u64>,
    /// Follower counts: a run of [`StackProfile::perf_counts`].
    pub followers: (u32, u32),
}

/// A profiler session (`stack_sample_session`): the samples of one perf data source or of
/// one StackSample sequence, and what their primary counter (the timebase) measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProfilerSession {
    /// The profiler (`StackSampleDefaults.source`, `linux.perf`), or NULL.
    pub source: StrId,
    pub timebase_name: StrId,
    /// `ns`, `count`, … or NULL.
    pub timebase_unit: StrId,
    /// The `perf_session` row of a perf data source.
    pub perf_session: Option<u32>,
}

/// A counter a StackSample session's samples carry values of (a CounterDescriptor).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SampleCounterDesc {
    pub session: u32,
    pub name: StrId,
    pub unit: StrId,
    pub description: StrId,
    /// SCOPE_CPU: one track per cpu.
    pub per_cpu: bool,
    /// The primary (timebase) counter of the samples.
    pub primary: bool,
}

/// An async context of StackSample task contexts (a fiber, a coroutine…).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsyncContextRow {
    pub name: StrId,
    pub kind: StrId,
    pub parent: Option<u32>,
}

/// Who a StackSample ran for: a thread, a process, maybe an async context in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TaskRef {
    pub machine: MachineId,
    pub pid: Option<i64>,
    pub tid: Option<i64>,
    pub async_context: Option<u32>,
}

/// What a StackSample carries besides its time (see [`ProfileSample::Stack`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StackSampleData {
    pub session: u32,
    pub callsite: Option<u32>,
    pub task: Option<TaskRef>,
    /// (cpu, mode name or NULL).
    pub execution: Option<(u32, StrId)>,
    /// A run of [`StackProfile::sample_counters`].
    pub counters: (u32, u32),
    pub unwind_error: StrId,
}

/// The interned stack tables of an import, in row order, and the side data of perf samples.
#[derive(Default)]
pub struct StackProfile {
    pub mappings: Vec<MappingRow>,
    mapping_ids: FxHashMap<MappingRow, u32>,
    pub frames: Vec<FrameRow>,
    frame_ids: FxHashMap<(u32, i64, StrId), u32>,
    pub callsites: Vec<CallsiteRow>,
    callsite_ids: FxHashMap<(Option<u32>, u32), u32>,
    pub symbols: Vec<SymbolRow>,
    /// Frames made from a function name and a source location alone (no mapping of
    /// their own): one per (mapping, name, file, line).
    dummy_frames: FxHashMap<(u32, StrId, StrId, Option<u32>), u32>,
    pub perf_sessions: Vec<PerfSession>,
    pub perf_samples: Vec<PerfSampleData>,
    pub perf_counts: Vec<u64>,
    /// Profiler sessions (`stack_sample_session`), perf's and StackSample's.
    pub sessions: Vec<ProfilerSession>,
    /// StackSample counters, one per distinct descriptor of a session.
    pub counter_descs: Vec<SampleCounterDesc>,
    counter_desc_ids: FxHashMap<SampleCounterDesc, u32>,
    pub async_contexts: Vec<AsyncContextRow>,
    pub stack_samples: Vec<StackSampleData>,
    /// (counter descriptor, value) of StackSamples.
    pub sample_counters: Vec<(u32, f64)>,
}

impl StackProfile {
    /// The id of a mapping with these columns (one row per distinct mapping).
    pub fn mapping(&mut self, row: MappingRow) -> u32 {
        if let Some(&id) = self.mapping_ids.get(&row) {
            return id;
        }
        let id = self.mappings.len() as u32;
        self.mappings.push(row);
        self.mapping_ids.insert(row, id);
        id
    }

    /// The mapping of frames known only by name and location (no file, no build id;
    /// `empty` is the empty string's id).
    pub fn empty_mapping(&mut self, empty: StrId) -> u32 {
        self.mapping(MappingRow {
            build_id: empty,
            exact_offset: 0,
            start_offset: 0,
            start: 0,
            end: 0,
            load_bias: 0,
            name: empty,
        })
    }

    /// The frame at `rel_pc` of a mapping named `name` (one row per (mapping, pc, name)).
    /// A frame seen first without a kind takes the kind it is given later.
    pub fn frame(&mut self, mapping: u32, rel_pc: i64, name: StrId, kind: StrId) -> u32 {
        if let Some(&id) = self.frame_ids.get(&(mapping, rel_pc, name)) {
            let row = &mut self.frames[id as usize];
            if row.kind == NULL_STR {
                row.kind = kind;
            }
            return id;
        }
        let id = self.frames.len() as u32;
        self.frames.push(FrameRow {
            name,
            mapping,
            rel_pc,
            symbol_set: None,
            deobfuscated_name: NULL_STR,
            kind,
        });
        self.frame_ids.insert((mapping, rel_pc, name), id);
        id
    }

    /// A frame known only by its function name and source location (a V8 profile node,
    /// an inline callstack): a frame at pc 0 of `mapping` with a symbol row giving the
    /// location.
    pub fn dummy_frame(
        &mut self,
        mapping: u32,
        name: StrId,
        source_file: StrId,
        line: Option<u32>,
    ) -> u32 {
        let key = (mapping, name, source_file, line);
        if let Some(&id) = self.dummy_frames.get(&key) {
            return id;
        }
        let symbol_set = self.symbols.len() as u32;
        self.symbols.push(SymbolRow {
            symbol_set,
            name,
            source_file,
            line_number: line,
            inlined: false,
        });
        let id = self.frames.len() as u32;
        self.frames.push(FrameRow {
            name,
            mapping,
            rel_pc: 0,
            symbol_set: Some(symbol_set),
            deobfuscated_name: NULL_STR,
            kind: NULL_STR,
        });
        self.dummy_frames.insert(key, id);
        id
    }

    /// Gives a frame without symbols its source location (an interned frame that names its
    /// source file and line) as a one-line symbol set.
    pub fn locate_frame(&mut self, frame: u32, name: StrId, source_file: StrId, line: Option<u32>) {
        let Some(row) = self.frames.get(frame as usize) else {
            return;
        };
        if row.symbol_set.is_some() {
            return;
        }
        let symbol_set = self.symbols.len() as u32;
        self.symbols.push(SymbolRow {
            symbol_set,
            name,
            source_file,
            line_number: line,
            inlined: false,
        });
        self.frames[frame as usize].symbol_set = Some(symbol_set);
    }

    /// The callsite of `frame` called from `parent` (one row per (parent, frame)).
    pub fn callsite(&mut self, parent: Option<u32>, frame: u32) -> u32 {
        if let Some(&id) = self.callsite_ids.get(&(parent, frame)) {
            return id;
        }
        let depth = parent.map_or(0, |p| self.callsites[p as usize].depth + 1);
        let id = self.callsites.len() as u32;
        self.callsites.push(CallsiteRow {
            depth,
            parent,
            frame,
        });
        self.callsite_ids.insert((parent, frame), id);
        id
    }

    /// The leaf callsite of a stack of frames, outermost first; `None` for no frames.
    pub fn callstack(&mut self, frames: &[u32]) -> Option<u32> {
        let mut parent = None;
        for &frame in frames {
            parent = Some(self.callsite(parent, frame));
        }
        parent
    }

    /// Symbolizes the frames at `rel_pc` of the mappings `mappings` with `lines` (innermost
    /// inlined function first, as ModuleSymbols lists them): one symbol set per address, kept
    /// even when no frame sits there (as the reference inserts the lines first). False when
    /// no frame was found.
    pub fn symbolize(
        &mut self,
        mappings: &[u32],
        rel_pc: i64,
        lines: &[(StrId, StrId, u32)],
    ) -> bool {
        if lines.is_empty() {
            return true;
        }
        let frames: Vec<u32> = (0..self.frames.len() as u32)
            .filter(|&f| {
                let row = &self.frames[f as usize];
                row.rel_pc == rel_pc && mappings.contains(&row.mapping)
            })
            .collect();
        let symbol_set = self.symbols.len() as u32;
        for (i, &(name, file, line)) in lines.iter().enumerate() {
            self.symbols.push(SymbolRow {
                symbol_set,
                name,
                source_file: file,
                line_number: Some(line),
                inlined: i + 1 < lines.len(),
            });
        }
        let found = !frames.is_empty();
        for f in frames {
            self.frames[f as usize].symbol_set = Some(symbol_set);
        }
        found
    }

    /// The id of a StackSample counter descriptor (one per distinct descriptor).
    pub fn counter_desc(&mut self, desc: SampleCounterDesc) -> u32 {
        if let Some(&id) = self.counter_desc_ids.get(&desc) {
            return id;
        }
        let id = self.counter_descs.len() as u32;
        self.counter_descs.push(desc);
        self.counter_desc_ids.insert(desc, id);
        id
    }

    /// The counter values of a StackSample.
    pub fn sample_counter_values(&self, data: &StackSampleData) -> &[(u32, f64)] {
        let (start, len) = data.counters;
        self.sample_counters
            .get(start as usize..(start + len) as usize)
            .unwrap_or(&[])
    }

    /// The follower counts of a perf sample.
    pub fn perf_followers(&self, data: &PerfSampleData) -> &[u64] {
        let (start, len) = data.followers;
        self.perf_counts
            .get(start as usize..(start + len) as usize)
            .unwrap_or(&[])
    }
}

/// A row of a sample table, handed to the [`RowSink`] with its id.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProfileRow {
    /// `cpu_profile_stack_sample`.
    Cpu {
        id: u32,
        ts: i64,
        callsite: u32,
        utid: u32,
        process_priority: i32,
    },
    /// `perf_sample`.
    Perf {
        id: u32,
        ts: i64,
        utid: u32,
        cpu: u32,
        cpu_mode: StrId,
        callsite: Option<u32>,
        unwind_error: StrId,
        session: u32,
    },
    /// `heap_profile_allocation`.
    HeapAllocation {
        id: u32,
        ts: i64,
        upid: u32,
        heap_name: StrId,
        callsite: u32,
        count: i64,
        size: i64,
    },
    /// `__intrinsic_profiler_sample`: a sample of a stack profiler (perf's too).
    Sample {
        id: u32,
        ts: i64,
        session: u32,
        callsite: Option<u32>,
        counter_set: Option<u32>,
        execution: Option<u32>,
        task: Option<u32>,
        unwind_error: StrId,
    },
    /// `__intrinsic_profiler_counter_set`: a counter value of a sample.
    CounterSetEntry { id: u32, set: u32, counter: u32 },
    /// `__intrinsic_profiler_execution_context`: a cpu and the mode it ran in.
    ExecutionContext { id: u32, ucpu: u32, mode: StrId },
    /// `__intrinsic_profiler_task_context`: the thread / process / async context sampled.
    TaskContext {
        id: u32,
        upid: Option<u32>,
        utid: Option<u32>,
        async_context: Option<u32>,
    },
    /// `heap_profile`: the window a heapprofd dump covers.
    HeapProfile {
        id: u32,
        ts: i64,
        dur: i64,
        upid: u32,
        heap_name: StrId,
        sampling_interval: i64,
    },
}

/// The model's side: row counts per sample table and the perf counter tracks.
#[derive(Default)]
pub struct ProfileState {
    pub cpu_samples: u32,
    pub heap_allocations: u32,
    pub heap_profiles: u32,
    /// The process each heapprofd dump's pid named when the dump was read.
    heap_upids: FxHashMap<(MachineId, i64), u32>,
    /// heapprofd rows that came before their dump was read.
    pending_heap: Vec<(i64, ProfileSample)>,
    /// Counter track per (session, cpu, counter index; 0 is the timebase).
    perf_tracks: HashMap<(u32, u32, u32), u32>,
}

/// The process of a heapprofd row.
fn heap_process(sample: &ProfileSample) -> Option<ProcessRef> {
    match *sample {
        ProfileSample::HeapAllocation { process, .. }
        | ProfileSample::HeapProfile { process, .. }
        | ProfileSample::HeapDumpProcess { process } => Some(process),
        _ => None,
    }
}

impl Builder<'_> {
    /// A profiler sample: its row, and for perf samples the counter values.
    pub(super) fn profile_sample(&mut self, ts: i64, sample: &ProfileSample) {
        // heapprofd's rows belong to the process as it is when their dump is read (the
        // packet's time), which may be later than the dump's own times.
        match *sample {
            ProfileSample::HeapDumpProcess { process } => {
                let upid = self.process(process);
                self.profiles
                    .heap_upids
                    .insert((process.machine, process.pid), upid);
                let pending = std::mem::take(&mut self.profiles.pending_heap);
                let (now, later): (Vec<_>, Vec<_>) = pending
                    .into_iter()
                    .partition(|(_, s)| heap_process(s) == Some(process));
                self.profiles.pending_heap = later;
                for (ts, s) in now {
                    self.heap_row(ts, &s, upid);
                }
                return;
            }
            ProfileSample::HeapGraph { dump } => {
                self.place_heap_graph(ts, Some(dump), None);
                return;
            }
            ProfileSample::OomStack { stack } => {
                self.place_heap_graph(ts, None, Some(stack));
                return;
            }
            ProfileSample::HeapAllocation { process, .. }
            | ProfileSample::HeapProfile { process, .. } => {
                self.note_ts(ts);
                match self
                    .profiles
                    .heap_upids
                    .get(&(process.machine, process.pid))
                {
                    Some(&upid) => self.heap_row(ts, sample, upid),
                    None => self.profiles.pending_heap.push((ts, *sample)),
                }
                return;
            }
            _ => {}
        }
        self.note_ts(ts);
        let row = match *sample {
            ProfileSample::Cpu {
                thread,
                callsite,
                process_priority,
            } => {
                let utid = self.thread(thread);
                let id = self.profiles.cpu_samples;
                self.profiles.cpu_samples += 1;
                ProfileRow::Cpu {
                    id,
                    ts,
                    callsite,
                    utid,
                    process_priority,
                }
            }
            ProfileSample::Perf { thread, cpu, index } => {
                self.perf_sample(ts, thread, cpu, index);
                return;
            }
            ProfileSample::Stack { index } => {
                self.stack_sample(ts, index);
                return;
            }
            _ => return,
        };
        self.out.profile(&row, self.sink);
    }

    /// A heapprofd row of the process `upid`.
    fn heap_row(&mut self, ts: i64, sample: &ProfileSample, upid: u32) {
        let row = match *sample {
            ProfileSample::HeapAllocation {
                process: _,
                heap_name,
                callsite,
                count,
                size,
            } => {
                let id = self.profiles.heap_allocations;
                self.profiles.heap_allocations += 1;
                ProfileRow::HeapAllocation {
                    id,
                    ts,
                    upid,
                    heap_name,
                    callsite,
                    count,
                    size,
                }
            }
            ProfileSample::HeapProfile {
                process,
                heap_name,
                dur,
                sampling_interval,
            } => {
                // The dump's own time, in trace time: the window's end.
                self.set_indexed_stat(
                    "heapprofd_last_profile_timestamp",
                    process.pid,
                    process.machine,
                    ts + dur,
                );
                let id = self.profiles.heap_profiles;
                self.profiles.heap_profiles += 1;
                ProfileRow::HeapProfile {
                    id,
                    ts,
                    dur,
                    upid,
                    heap_name,
                    sampling_interval,
                }
            }
            _ => return,
        };
        self.out.profile(&row, self.sink);
    }

    /// heapprofd rows whose dump was never read (a cut file): their processes as they are.
    pub(super) fn finish_heap_rows(&mut self) {
        for (ts, s) in std::mem::take(&mut self.profiles.pending_heap) {
            if let Some(process) = heap_process(&s) {
                let upid = self.process(process);
                self.heap_row(ts, &s, upid);
            }
        }
    }

    /// A perf counter's value at a sample, on the session's track for that cpu (`index`
    /// 0: the timebase, which sampling is driven by; then the followers); returns the
    /// counter row's id.
    pub(super) fn perf_counter(
        &mut self,
        ts: i64,
        machine: MachineId,
        session: u32,
        cpu: u32,
        index: u32,
        count: u64,
    ) -> u32 {
        let key = (session, cpu, index);
        let track = match self.profiles.perf_tracks.get(&key) {
            Some(&t) => t,
            None => {
                let name = self
                    .sink
                    .stack_profile
                    .perf_sessions
                    .get(session as usize)
                    .and_then(|s| {
                        if index == 0 {
                            Some(s.timebase)
                        } else {
                            s.followers.get(index as usize - 1).copied()
                        }
                    })
                    .unwrap_or(NULL_STR);
                let mrow = self.machine_row(machine);
                let mut row = TrackRow::new(name, "perf_counter", mrow, TrackEventType::Counter);
                row.cpu = Some(cpu);
                let dims = [self
                    .sink
                    .static_arg("perf_session_id", ArgValue::Int(i64::from(session)))];
                row.extra_dims = self.sink.args.push_shared(&dims);
                let source = [self
                    .sink
                    .static_arg("is_timebase", ArgValue::Bool(index == 0))];
                row.source_args = self.sink.args.push_shared(&source);
                let t = self.tables.tracks.len() as u32;
                self.tables.tracks.push(row);
                self.profiles.perf_tracks.insert(key, t);
                t
            }
        };
        let row = CounterRow {
            ts,
            track,
            value: count as f64,
            args: NO_ARGS,
        };
        let id = self.tables.counter_count;
        self.out.counter(id, &row, self.sink);
        self.tables.counter_count += 1;
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callsites_are_interned_by_parent_and_frame() {
        let mut sp = StackProfile::default();
        let m = sp.mapping(MappingRow {
            build_id: NULL_STR,
            exact_offset: 0,
            start_offset: 0,
            start: 0,
            end: 0,
            load_bias: 0,
            name: NULL_STR,
        });
        let f: Vec<u32> = (0..4)
            .map(|pc| sp.frame(m, pc * 16, NULL_STR, NULL_STR))
            .collect();
        // As heapprofd's dump_max test: [f1, f2, f3] then [f1, f4].
        assert_eq!(sp.callstack(&[f[0], f[1], f[2]]), Some(2));
        assert_eq!(sp.callstack(&[f[0], f[3]]), Some(3));
        assert_eq!(sp.callsites[3].parent, Some(0));
        assert_eq!(sp.callsites[3].depth, 1);
        assert_eq!(sp.callstack(&[]), None);
        assert_eq!(sp.frame(m, 0, NULL_STR, NULL_STR), f[0]);
    }

    #[test]
    fn dummy_frames_carry_their_location_as_a_symbol() {
        let mut sp = StackProfile::default();
        let a = sp.dummy_frame(0, 5, 6, Some(10));
        assert_eq!(sp.dummy_frame(0, 5, 6, Some(10)), a);
        let b = sp.dummy_frame(0, 5, 7, None);
        assert_ne!(a, b);
        assert_eq!(sp.frames[b as usize].symbol_set, Some(1));
        assert_eq!(sp.symbols[1].source_file, 7);
    }
}
