//! Profilers' packets, as Trace Processor's profile module reads them: `perf_sample`
//! (traced_perf, with its sampling session from `perf_sample_defaults`),
//! `streaming_profile_packet` (Chrome's sampler), `profile_packet` (heapprofd dumps),
//! `module_symbols` and `deobfuscation_mapping`, and the interned callstacks, frames,
//! mappings and strings they refer to. Callstacks are interned into the sink's stack
//! profile tables (`model::stack_profile`) as they are read; the samples are handed on as
//! [`ProfileSample`] events, and their problems counted under the reference's stats.

use super::*;
use crate::model::{MappingRow, PerfSampleData, PerfSession};

/// What one sequence has interned for profiles, and what it resolved of it.
#[derive(Default)]
pub(super) struct SeqProfile {
    function_names: FxHashMap<u64, StrId>,
    build_ids: FxHashMap<u64, Vec<u8>>,
    mapping_paths: FxHashMap<u64, StrId>,
    source_paths: FxHashMap<u64, StrId>,
    mappings: FxHashMap<u64, protos::Mapping>,
    frames: FxHashMap<u64, protos::Frame>,
    callstacks: FxHashMap<u64, Vec<u64>>,
    /// Resolved rows, by iid.
    mapping_rows: FxHashMap<u64, Option<u32>>,
    frame_rows: FxHashMap<u64, Option<u32>>,
    callstack_rows: FxHashMap<u64, Option<u32>>,
    /// The perf session of this sequence (made at its first sample).
    perf_session: Option<u32>,
    perf_defaults: Option<protos::PerfSampleDefaults>,
    pub(super) heap: heapprofd::HeapSequence,
    /// The sequence's StackSample state (see `stack_sample.rs`).
    pub(super) stack: stack_sample::SeqStackSamples,
}

/// Profile state of a file's sequences.
#[derive(Default)]
pub(super) struct ProfilingState {
    pub(super) sequences: FxHashMap<(MachineId, u32), SeqProfile>,
}

impl ProfilingState {
    /// SEQ_INCREMENTAL_STATE_CLEARED: interned data is forgotten (perf sessions and heap
    /// totals are not interned data and stay).
    pub(super) fn clear_sequence(&mut self, machine: MachineId, seq_id: u32) {
        if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
            seq.function_names.clear();
            seq.build_ids.clear();
            seq.mapping_paths.clear();
            seq.source_paths.clear();
            seq.mappings.clear();
            seq.stack.clear();
            seq.frames.clear();
            seq.callstacks.clear();
            seq.mapping_rows.clear();
            seq.frame_rows.clear();
            seq.callstack_rows.clear();
            seq.perf_defaults = None;
        }
    }

    pub(super) fn defaults(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        defaults: &protos::TracePacketDefaults,
    ) {
        if let Some(perf) = &defaults.perf_sample_defaults {
            let seq = self.sequences.entry((machine, seq_id)).or_default();
            seq.perf_defaults = Some(perf.clone());
        }
        if let Some(stack) = &defaults.stack_sample_defaults {
            let seq = self.sequences.entry((machine, seq_id)).or_default();
            seq.stack.defaults = Some(stack.clone());
        }
    }

    /// Interned profile data of a packet (first definition of an iid wins).
    pub(super) fn intern(
        &mut self,
        sink: &mut Sink,
        machine: MachineId,
        seq_id: u32,
        d: &protos::InternedData,
    ) {
        if d.function_names.is_empty()
            && d.frames.is_empty()
            && d.callstacks.is_empty()
            && d.mappings.is_empty()
            && d.build_ids.is_empty()
            && d.mapping_paths.is_empty()
            && d.source_paths.is_empty()
            && d.stack_sample_task_contexts.is_empty()
            && d.stack_sample_execution_contexts.is_empty()
            && d.stack_sample_counter_descriptors.is_empty()
            && d.stack_sample_async_context_descriptors.is_empty()
        {
            return;
        }
        let seq = self.sequences.entry((machine, seq_id)).or_default();
        seq.stack.intern(sink, d);
        for s in &d.source_paths {
            let text = String::from_utf8_lossy(s.str.as_deref().unwrap_or_default());
            let id = sink.intern(&text);
            seq.source_paths.entry(s.iid.unwrap_or(0)).or_insert(id);
        }
        for s in &d.function_names {
            let text = String::from_utf8_lossy(s.str.as_deref().unwrap_or_default());
            let id = sink.intern(&text);
            seq.function_names.entry(s.iid.unwrap_or(0)).or_insert(id);
        }
        for s in &d.mapping_paths {
            let text = String::from_utf8_lossy(s.str.as_deref().unwrap_or_default());
            let id = sink.intern(&text);
            seq.mapping_paths.entry(s.iid.unwrap_or(0)).or_insert(id);
        }
        for s in &d.build_ids {
            let bytes = s.str.clone().unwrap_or_default();
            seq.build_ids.entry(s.iid.unwrap_or(0)).or_insert(bytes);
        }
        for m in &d.mappings {
            seq.mappings
                .entry(m.iid.unwrap_or(0))
                .or_insert_with(|| m.clone());
        }
        for f in &d.frames {
            seq.frames
                .entry(f.iid.unwrap_or(0))
                .or_insert_with(|| f.clone());
        }
        for c in &d.callstacks {
            let frames = c.frame_ids.clone();
            seq.callstacks.entry(c.iid.unwrap_or(0)).or_insert(frames);
        }
    }
}

impl ProfilingState {
    /// The `stack_profile_mapping` row of a sequence's interned mapping (made if new), as
    /// other interned data (Mojo method locations) names it; None if it is not interned.
    pub(super) fn mapping_row(
        &mut self,
        sink: &mut Sink,
        machine: MachineId,
        seq_id: u32,
        iid: u64,
    ) -> Option<u32> {
        let seq = self.sequences.get_mut(&(machine, seq_id))?;
        Lookup { seq, heap: false }.mapping(sink, machine, iid)
    }
}

/// Trace Processor's name of a perf counter.
fn counter_name(counter: i32) -> &'static str {
    match counter {
        1 => "cpu-clock",
        2 => "page-faults",
        3 => "task-clock",
        4 => "context-switches",
        5 => "cpu-migrations",
        6 => "minor-faults",
        7 => "major-faults",
        8 => "alignment-faults",
        9 => "emulation-faults",
        20 => "dummy",
        10 => "cpu-cycles",
        11 => "instructions",
        12 => "cache-references",
        13 => "cache-misses",
        14 => "branch-instructions",
        15 => "branch-misses",
        16 => "bus-cycles",
        17 => "stalled-cycles-frontend",
        18 => "stalled-cycles-backend",
        19 => "ref-cycles",
        _ => "unknown",
    }
}

/// `perf_sample.cpu_mode` as Trace Processor spells Profiling.CpuMode.
pub(super) fn cpu_mode_name(mode: i32) -> &'static str {
    match mode {
        1 => "kernel",
        2 => "user",
        3 => "hypervisor",
        4 => "guest_kernel",
        5 => "guest_user",
        _ => "unknown",
    }
}

/// `perf_sample.unwind_error` as Trace Processor spells Profiling.StackUnwindError.
fn unwind_error_name(error: i32) -> &'static str {
    match error {
        1 => "none",
        2 => "memory_invalid",
        3 => "unwind_info",
        4 => "unsupported",
        5 => "invalid_map",
        6 => "max_frames_exceeded",
        7 => "repeated_frame",
        8 => "invalid_elf",
        9 => "system_call",
        10 => "thread_timeout",
        11 => "thread_does_not_exist",
        12 => "bad_arch",
        13 => "maps_parse",
        14 => "invalid_parameter",
        15 => "ptrace_call",
        _ => "unknown",
    }
}

/// `stack_profile_frame.type` of Frame.Kind / kind_str.
fn frame_kind(sink: &mut Sink, kind: Option<&protos::frame::KindField>) -> StrId {
    use protos::frame::KindField;
    let name = match kind {
        Some(KindField::KindStr(s)) => return sink.intern_nonempty(s),
        Some(KindField::Kind(1)) => "native",
        Some(KindField::Kind(2)) => "kernel",
        Some(KindField::Kind(3)) => "interpreted",
        Some(KindField::Kind(4)) => "jit",
        Some(KindField::Kind(5)) => "gc",
        Some(KindField::Kind(6)) => "runtime",
        _ => return NULL_STR,
    };
    sink.intern(name)
}

/// A build id as the tables show it: hex of the raw bytes, or as given when it is already
/// a hex module id (Breakpad's 33 characters).
pub(crate) fn build_id_hex(bytes: &[u8]) -> String {
    if bytes.len() == 33 && bytes.iter().all(u8::is_ascii_hexdigit) {
        return String::from_utf8_lossy(bytes).to_ascii_lowercase();
    }
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Where interned pieces are looked up: a heapprofd dump's own tables first, then the
/// sequence's interned data.
pub(super) struct Lookup<'a> {
    pub(super) seq: &'a mut SeqProfile,
    /// Look in the heapprofd dump's tables first.
    pub(super) heap: bool,
}

impl Lookup<'_> {
    fn string(&self, sink: &mut Sink, table: u8, iid: u64) -> Option<StrId> {
        if self.heap {
            if let Some(s) = self.seq.heap.strings.get(&iid) {
                return Some(sink.intern(&String::from_utf8_lossy(s)));
            }
        }
        match table {
            0 => self.seq.function_names.get(&iid).copied(),
            _ => self.seq.mapping_paths.get(&iid).copied(),
        }
    }

    fn build_id(&self, iid: u64) -> Option<Vec<u8>> {
        if self.heap {
            if let Some(s) = self.seq.heap.strings.get(&iid) {
                return Some(s.clone());
            }
        }
        self.seq.build_ids.get(&iid).cloned()
    }

    fn mapping(&mut self, sink: &mut Sink, machine: MachineId, iid: u64) -> Option<u32> {
        let cache_heap = self.heap;
        if !cache_heap {
            if let Some(&r) = self.seq.mapping_rows.get(&iid) {
                return r;
            }
        }
        let m = if self.heap {
            self.seq
                .heap
                .mappings
                .get(&iid)
                .or(self.seq.mappings.get(&iid))
        } else {
            self.seq.mappings.get(&iid)
        };
        let m = m.cloned()?;
        let build_id = match m.build_id {
            None => Vec::new(),
            Some(b) => match self.build_id(b) {
                Some(v) => v,
                None if b == 0 => Vec::new(),
                None => return None,
            },
        };
        let mut name = String::new();
        for &p in &m.path_string_ids {
            let part = self.string(sink, 1, p)?;
            name.push('/');
            name.push_str(sink.strings.get(part).unwrap_or(""));
        }
        // Code pushed to /data/local/tmp cannot be symbolized without its build id: counted
        // once per interned mapping (per dump for heapprofd's own tables).
        if build_id.is_empty() && name.starts_with("/data/local/tmp/") {
            let first = if cache_heap {
                self.seq.heap.tmp_mappings_counted.insert(iid)
            } else {
                true
            };
            if first {
                sink.stat("symbolization_tmp_build_id_not_found", machine, 1);
            }
        }
        let row = MappingRow {
            build_id: sink.intern(&build_id_hex(&build_id)),
            exact_offset: m.exact_offset.unwrap_or(0) as i64,
            start_offset: m.start_offset.unwrap_or(0) as i64,
            start: m.start.unwrap_or(0) as i64,
            end: m.end.unwrap_or(0) as i64,
            load_bias: m.load_bias.unwrap_or(0) as i64,
            name: sink.intern(&name),
        };
        let id = sink.stack_profile.mapping(row);
        if !cache_heap {
            self.seq.mapping_rows.insert(iid, Some(id));
        }
        Some(id)
    }

    fn frame(&mut self, sink: &mut Sink, machine: MachineId, iid: u64) -> Option<u32> {
        if !self.heap {
            if let Some(&r) = self.seq.frame_rows.get(&iid) {
                return r;
            }
        }
        let f = if self.heap {
            self.seq.heap.frames.get(&iid).or(self.seq.frames.get(&iid))
        } else {
            self.seq.frames.get(&iid)
        };
        let Some(f) = f.cloned() else {
            sink.stat("stackprofile_invalid_frame_id", machine, 1);
            return None;
        };
        let name = match f.function_name_id {
            None | Some(0) => self.string(sink, 0, 0).unwrap_or_else(|| sink.intern("")),
            Some(n) => match self.string(sink, 0, n) {
                Some(s) => s,
                None => {
                    sink.stat("stackprofile_invalid_string_id", machine, 1);
                    return None;
                }
            },
        };
        let Some(mapping) = self.mapping(sink, machine, f.mapping_id.unwrap_or(0)) else {
            sink.stat("stackprofile_invalid_mapping_id", machine, 1);
            return None;
        };
        let kind = frame_kind(sink, f.kind_field.as_ref());
        let rel_pc = f.rel_pc.unwrap_or(0) as i64;
        let id = sink.stack_profile.frame(mapping, rel_pc, name, kind);
        // A frame that says where its code is has that location as its symbol.
        let file = f
            .source_path_iid
            .and_then(|p| self.seq.source_paths.get(&p).copied());
        if file.is_some() || f.line_number.is_some() {
            let file = file.unwrap_or(NULL_STR);
            sink.stack_profile
                .locate_frame(id, name, file, f.line_number);
        }
        if !self.heap {
            self.seq.frame_rows.insert(iid, Some(id));
        }
        Some(id)
    }

    /// The leaf callsite of an interned callstack, counting what is wrong with it.
    pub(super) fn callstack(
        &mut self,
        sink: &mut Sink,
        machine: MachineId,
        iid: u64,
    ) -> Option<u32> {
        if !self.heap {
            if let Some(&r) = self.seq.callstack_rows.get(&iid) {
                return r;
            }
        }
        let frames = if self.heap {
            self.seq
                .heap
                .callstacks
                .get(&iid)
                .or(self.seq.callstacks.get(&iid))
        } else {
            self.seq.callstacks.get(&iid)
        };
        let Some(frames) = frames.cloned() else {
            sink.stat("stackprofile_invalid_callstack_id", machine, 1);
            return None;
        };
        let result = if frames.is_empty() {
            sink.stat("stackprofile_empty_callstack", machine, 1);
            None
        } else {
            let mut rows = Vec::with_capacity(frames.len());
            let mut ok = true;
            for f in frames {
                match self.frame(sink, machine, f) {
                    Some(r) => rows.push(r),
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                sink.stack_profile.callstack(&rows)
            } else {
                None
            }
        };
        if !self.heap {
            self.seq.callstack_rows.insert(iid, result);
        }
        result
    }
}

use crate::model::package_of;

impl Parser<'_> {
    pub(super) fn seq_profile(&mut self, machine: MachineId, seq_id: u32) -> &mut SeqProfile {
        self.profiling
            .sequences
            .entry((machine, seq_id))
            .or_default()
    }

    /// A perf sample: a row, its counter values and its callsite; loss markers and
    /// skipped samples are counted.
    pub(super) fn perf_sample(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: Option<i64>,
        clock: ClockRef,
        s: &protos::PerfSample,
    ) {
        let cpu = s.cpu.unwrap_or(0);
        if s.kernel_records_lost.unwrap_or(0) > 0 {
            let lost = s.kernel_records_lost.unwrap_or(0) as i64;
            self.sink
                .stat_indexed("perf_cpu_lost_records", Some(i64::from(cpu)), machine, lost);
            return;
        }
        let session = self.perf_session(machine, seq_id);
        if let Some(reason) = s.sample_skipped_reason {
            self.sink.stat("perf_samples_skipped", machine, 1);
            if reason == 3 {
                self.sink.stat("perf_samples_skipped_dataloss", machine, 1);
            }
        }
        if let Some(event) = &s.producer_event {
            if event.source_stop_reason == Some(1) {
                let at = ts.unwrap_or(0);
                let idx = Some(i64::from(session));
                self.sink
                    .set_stat("perf_guardrail_stop_ts", idx, machine, at);
            }
            return;
        }
        let Some(ts) = ts else {
            self.sink.stat("perf_samples_skipped", machine, 1);
            return;
        };
        let callsite = match s.callstack_iid {
            Some(iid) => {
                let seq = self
                    .profiling
                    .sequences
                    .entry((machine, seq_id))
                    .or_default();
                Lookup { seq, heap: false }.callstack(self.sink, machine, iid)
            }
            None => None,
        };
        let cpu_mode = self.sink.intern(cpu_mode_name(s.cpu_mode.unwrap_or(0)));
        let unwind_error = match s.unwind_error {
            Some(e) => self.sink.intern(unwind_error_name(e)),
            None => NULL_STR,
        };
        let sp = &mut self.sink.stack_profile;
        let start = sp.perf_counts.len() as u32;
        sp.perf_counts.extend_from_slice(&s.follower_counts);
        let index = sp.perf_samples.len() as u32;
        sp.perf_samples.push(PerfSampleData {
            session,
            cpu_mode,
            callsite,
            unwind_error,
            timebase_count: s.timebase_count,
            followers: (start, s.follower_counts.len() as u32),
        });
        let thread = ThreadRef {
            machine,
            tid: i64::from(s.tid.unwrap_or(0)),
            pid: Some(i64::from(s.pid.unwrap_or(0))),
        };
        self.sink.push(
            ts,
            clock,
            EventData::Profile(ProfileSample::Perf { thread, cpu, index }),
        );
    }

    /// The perf session a sequence's samples belong to, made with its counters' names
    /// from the sequence's `perf_sample_defaults` at its first sample.
    fn perf_session(&mut self, machine: MachineId, seq_id: u32) -> u32 {
        if let Some(s) = self.seq_profile(machine, seq_id).perf_session {
            return s;
        }
        let defaults = self.seq_profile(machine, seq_id).perf_defaults.clone();
        let (timebase, followers) = match &defaults {
            Some(d) => {
                let timebase = d.timebase.as_ref().map_or("cpu-clock".to_string(), |t| {
                    if let Some(name) = t.name.as_deref().filter(|n| !n.is_empty()) {
                        name.to_string()
                    } else if let Some(tp) = &t.tracepoint {
                        tp.name.clone().unwrap_or_default()
                    } else {
                        counter_name(t.counter.unwrap_or(0)).to_string()
                    }
                });
                let followers: Vec<String> = d
                    .followers
                    .iter()
                    .map(|f| {
                        if let Some(name) = f.name.as_deref().filter(|n| !n.is_empty()) {
                            name.to_string()
                        } else if let Some(tp) = &f.tracepoint {
                            tp.name.clone().unwrap_or_default()
                        } else {
                            counter_name(f.counter.unwrap_or(0)).to_string()
                        }
                    })
                    .collect();
                (timebase, followers)
            }
            None => ("cpu-clock".to_string(), Vec::new()),
        };
        // Clocks count nanoseconds; every other event counts occurrences.
        let counter = match &defaults {
            Some(d) => d.timebase.as_ref().map_or(Some(1), |t| {
                if t.tracepoint.is_some() || t.raw_event.is_some() {
                    None
                } else {
                    t.counter
                }
            }),
            None => Some(1),
        };
        let unit = if matches!(counter, Some(1 | 3)) {
            "ns"
        } else {
            "count"
        };
        let timebase = self.sink.intern(&timebase);
        let followers = followers.iter().map(|f| self.sink.intern(f)).collect();
        let id = self.sink.stack_profile.perf_sessions.len() as u32;
        let profiler_session = self.sink.stack_profile.sessions.len() as u32;
        let session = crate::model::ProfilerSession {
            source: self.sink.intern("linux.perf"),
            timebase_name: timebase,
            timebase_unit: self.sink.intern(unit),
            perf_session: Some(id),
        };
        self.sink.stack_profile.sessions.push(session);
        self.sink.stack_profile.perf_sessions.push(PerfSession {
            timebase,
            followers,
            profiler_session: Some(profiler_session),
        });
        self.seq_profile(machine, seq_id).perf_session = Some(id);
        id
    }

    /// Chrome's sampler: each sample's time is a µs delta on the sequence's TrackEvent
    /// timeline (which it advances), its thread the sequence's.
    pub(super) fn streaming_profile(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        profile: &protos::StreamingProfilePacket,
    ) {
        let Some(seq) = self.sequences.get(&(machine, seq_id)) else {
            return;
        };
        let thread = seq.thread.unwrap_or(ThreadRef {
            machine,
            tid: 0,
            pid: Some(0),
        });
        let clock = self
            .sink
            .clock(self.sink.shared_until_own_snapshot(ClockDomain {
                machine,
                clock_id: clocks::MONOTONIC,
                sequence: KEEP_RAW_ON_FAILURE,
                file: self.ctx.file,
                shared: false,
            }));
        let priority = profile.process_priority.unwrap_or(0);
        // Every delta advances the sequence's time, as the reference's tokenizer does.
        let base = self
            .sequences
            .get(&(machine, seq_id))
            .and_then(|seq| seq.ref_ts_ns);
        let mut valid = Vec::with_capacity(profile.timestamp_delta_us.len());
        for &delta_us in &profile.timestamp_delta_us {
            let ts = match self.sequences.get_mut(&(machine, seq_id)) {
                Some(seq) => seq.advance(delta_us),
                None => return,
            };
            let ok = matches!(ts, DeltaTs::Valid(_));
            if !ok {
                self.sink
                    .stat("streaming_profile_invalid_timestamp", machine, 1);
            }
            valid.push(ok);
        }
        // The reference's parser walks the callstacks beside the deltas: a callstack
        // without its delta is a parser error that ends the packet (extra deltas are
        // ignored), and a sample whose callstack is unknown is counted and skipped
        // without adding its delta to the packet's running time.
        let mut ts = base.unwrap_or(0);
        for (i, &iid) in profile.callstack_iid.iter().enumerate() {
            let Some(&delta_us) = profile.timestamp_delta_us.get(i) else {
                self.sink.stat("stackprofile_parser_error", machine, 1);
                break;
            };
            if !valid[i] {
                // Counted above; its delta still moves the packet's running time.
                ts = ts.saturating_add(delta_us.saturating_mul(1000));
                continue;
            }
            let seq = self
                .profiling
                .sequences
                .entry((machine, seq_id))
                .or_default();
            let Some(callsite) = (Lookup { seq, heap: false }).callstack(self.sink, machine, iid)
            else {
                self.sink.stat("stackprofile_parser_error", machine, 1);
                continue;
            };
            ts = ts.saturating_add(delta_us.saturating_mul(1000));
            let sample = ProfileSample::Cpu {
                thread,
                callsite,
                process_priority: priority,
            };
            self.sink.push(ts, clock, EventData::Profile(sample));
        }
    }

    /// Symbols for the frames of a module, as Trace Processor's ParseModuleSymbols: the
    /// mappings of that path and build id (both must match; no mapping: one
    /// stackprofile_invalid_mapping_id, nothing kept); every address with lines gets a symbol
    /// set, whether or not a frame of those mappings sits at it (none: one
    /// stackprofile_invalid_frame_id).
    pub(super) fn module_symbols(&mut self, machine: MachineId, m: &protos::ModuleSymbols) {
        self.sink.touch();
        let path = m.path.as_deref().unwrap_or("");
        let build_id = build_id_hex(m.build_id.as_deref().unwrap_or("").as_bytes());
        let sp = &self.sink.stack_profile;
        let strings = &self.sink.strings;
        let mappings: Vec<u32> = (0..sp.mappings.len() as u32)
            .filter(|&i| {
                let row = &sp.mappings[i as usize];
                let name = strings.get(row.name).unwrap_or("");
                let id = strings.get(row.build_id).unwrap_or("");
                name == path && id == build_id
            })
            .collect();
        if mappings.is_empty() {
            self.sink
                .stat("stackprofile_invalid_mapping_id", machine, 1);
            return;
        }
        for a in &m.address_symbols {
            let lines: Vec<(StrId, StrId, u32)> = a
                .lines
                .iter()
                .map(|l| {
                    (
                        self.sink.intern_opt(l.function_name.as_deref()),
                        self.sink.intern_opt(l.source_file_name.as_deref()),
                        l.line_number.unwrap_or(0),
                    )
                })
                .collect();
            let pc = a.address.unwrap_or(0) as i64;
            if !self.sink.stack_profile.symbolize(&mappings, pc, &lines) {
                self.sink.stat("stackprofile_invalid_frame_id", machine, 1);
            }
        }
    }

    /// A ProGuard/R8 map: Java frames named `<obfuscated class>.<obfuscated method>` of
    /// the package's code (or of JIT code, `/memfd:…`) get their real names, as Trace
    /// Processor's JavaFramesForName index holds only those frames.
    pub(super) fn deobfuscation_mapping(&mut self, d: &protos::DeobfuscationMapping) {
        self.sink.touch();
        let package = d.package_name.as_deref().unwrap_or("");
        let package_id = self.sink.intern(package);
        for class in &d.obfuscated_classes {
            let obf_class = class.obfuscated_name.as_deref().unwrap_or("");
            let deobf_class = class.deobfuscated_name.as_deref().unwrap_or("");
            // Java heap dumps' classes and reference fields.
            let (o, r) = (self.sink.intern(obf_class), self.sink.intern(deobf_class));
            self.sink.heap_graph.class_names.insert((package_id, o), r);
            for member in &class.obfuscated_members {
                let obf = format!(
                    "{obf_class}.{}",
                    member.obfuscated_name.as_deref().unwrap_or("")
                );
                let name = member.deobfuscated_name.as_deref().unwrap_or("");
                let deobf = if name.contains('.') {
                    name.to_string()
                } else {
                    format!("{deobf_class}.{name}")
                };
                let (o, r) = (self.sink.intern(&obf), self.sink.intern(&deobf));
                self.sink.heap_graph.field_names.insert(o, r);
            }
            for method in &class.obfuscated_methods {
                let obf = format!(
                    "{obf_class}.{}",
                    method.obfuscated_name.as_deref().unwrap_or("")
                );
                let member = method.deobfuscated_name.as_deref().unwrap_or("");
                let deobf = if member.contains('.') {
                    member.to_string()
                } else {
                    format!("{deobf_class}.{member}")
                };
                let obf_id = self.sink.intern(&obf);
                let deobf_id = self.sink.intern(&deobf);
                let sp = &mut self.sink.stack_profile;
                let strings = &self.sink.strings;
                for i in 0..sp.frames.len() {
                    if sp.frames[i].name != obf_id {
                        continue;
                    }
                    let mapping = sp.frames[i].mapping as usize;
                    let location = sp
                        .mappings
                        .get(mapping)
                        .and_then(|m| strings.get(m.name))
                        .unwrap_or("");
                    // Frames of the package's code, and of JIT code (`/memfd:…`, whose
                    // package is unknown) for any package; other code is not the map's.
                    let applies = match package_of(location) {
                        Some(p) => p == package,
                        None => location.starts_with("/memfd:"),
                    };
                    if applies {
                        sp.frames[i].deobfuscated_name = deobf_id;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages_are_found_in_android_code_paths() {
        let webview = "/data/app/com.google.android.webview-6XfQhnaSkFwGK0sYL9is0G==/base.apk";
        assert_eq!(package_of(webview), Some("com.google.android.webview"));
        assert_eq!(
            package_of("/data/app/~~abc==/com.example.app-xyz==/oat/arm64/base.odex"),
            Some("com.example.app")
        );
        assert_eq!(
            package_of("/data/data/com.example/cache/x"),
            Some("com.example")
        );
        assert_eq!(package_of("/memfd:jit-cache"), None);
        assert_eq!(package_of("/system/framework/framework.jar"), None);
        assert_eq!(
            package_of("/product/priv-app/PrebuiltGmsCore/PrebuiltGmsCore.apk"),
            Some("com.google.android.gms")
        );
        assert_eq!(
            package_of("/product/app/Photos/Photos.apk"),
            Some("com.google.android.apps.photos")
        );
    }

    #[test]
    fn build_ids_are_hex() {
        assert_eq!(build_id_hex(b"build-id"), "6275696c642d6964");
        assert_eq!(build_id_hex(b""), "");
        let breakpad = "ABCDEF0123456789ABCDEF0123456789A";
        assert_eq!(
            build_id_hex(breakpad.as_bytes()),
            breakpad.to_ascii_lowercase()
        );
    }
}
