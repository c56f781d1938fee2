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
    /// inlined function first, as ModuleSymbols lists them): one symbol set per address.
    pub fn symbolize(&mut self, mappings: &[u32], rel_pc: i64, lines: &[(StrId, StrId, u32)]) {
        if lines.is_empty() {
            return;
        }
        let frames: Vec<u32> = (0..self.frames.len() as u32)
            .filter(|&f| {
                let row = &self.frames[f as usize];
                row.rel_pc == rel_pc && mappings.contains(&row.mapping)
            })
            .collect();
        if frames.is_empty() {
            return;
        }
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
        for f in frames {
            self.frames[f as usize].symbol_set = Some(symbol_set);
        }
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
    pub perf_samples: u32,
    pub heap_allocations: u32,
    pub heap_profiles: u32,
    /// Counter track per (session, cpu, counter index; 0 is the timebase).
    perf_tracks: HashMap<(u32, u32, u32), u32>,
}

impl Builder<'_> {
    /// A profiler sample: its row, and for perf samples the counter values.
    pub(super) fn profile_sample(&mut self, ts: i64, sample: &ProfileSample) {
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
                let Some(&data) = self.sink.stack_profile.perf_samples.get(index as usize) else {
                    return;
                };
                if let Some(count) = data.timebase_count {
                    self.perf_counter(ts, thread.machine, data.session, cpu, 0, count);
                }
                let followers = self.sink.stack_profile.perf_followers(&data).to_vec();
                for (i, count) in followers.into_iter().enumerate() {
                    self.perf_counter(ts, thread.machine, data.session, cpu, i as u32 + 1, count);
                }
                let utid = self.thread(thread);
                let id = self.profiles.perf_samples;
                self.profiles.perf_samples += 1;
                ProfileRow::Perf {
                    id,
                    ts,
                    utid,
                    cpu,
                    cpu_mode: data.cpu_mode,
                    callsite: data.callsite,
                    unwind_error: data.unwind_error,
                    session: data.session,
                }
            }
            ProfileSample::HeapAllocation {
                process,
                heap_name,
                callsite,
                count,
                size,
            } => {
                let upid = self.process(process);
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
                let upid = self.process(process);
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
        };
        self.out.profile(&row, self.sink);
    }

    /// A perf counter's value at a sample, on the session's track for that cpu (`index`
    /// 0: the timebase, which sampling is driven by; then the followers).
    fn perf_counter(
        &mut self,
        ts: i64,
        machine: MachineId,
        session: u32,
        cpu: u32,
        index: u32,
        count: u64,
    ) {
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
        self.out.counter(self.tables.counter_count, &row, self.sink);
        self.tables.counter_count += 1;
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
