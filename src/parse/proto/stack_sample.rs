//! Generic stack samplers' packets (`stack_sample`: Python and other runtimes' profilers),
//! as Trace Processor reads them: each sample names (inline or by interned iid) its task
//! context (pid, tid, async context), execution context (cpu, mode), callstack (interned, or
//! inline frames known by function name and source location) and the weights of its
//! primary and follower counters (descriptors from the sample, the interned data or the
//! sequence's `stack_sample_defaults`). A sequence's samples make one session whose source
//! the defaults name. Samples are handed on as [`ProfileSample::Stack`] events; their
//! contexts and counters become rows in `model::profiler`.

use super::profiling::Lookup;
use super::*;
use crate::model::{AsyncContextRow, ProfilerSession, SampleCounterDesc, StackSampleData, TaskRef};
use protos::stack_sample as ss;

/// What one sequence has interned and set for StackSamples.
#[derive(Default)]
pub(super) struct SeqStackSamples {
    pub(super) defaults: Option<protos::StackSampleDefaults>,
    tasks: FxHashMap<u64, ss::TaskContext>,
    executions: FxHashMap<u64, ss::ExecutionContext>,
    counters: FxHashMap<u64, ss::CounterDescriptor>,
    /// Async context rows by iid.
    async_contexts: FxHashMap<u64, u32>,
    /// The sequence's session, made at its first sample.
    session: Option<u32>,
}

impl SeqStackSamples {
    /// SEQ_INCREMENTAL_STATE_CLEARED: interned data and defaults are forgotten.
    pub(super) fn clear(&mut self) {
        self.defaults = None;
        self.tasks.clear();
        self.executions.clear();
        self.counters.clear();
        self.async_contexts.clear();
    }

    /// The StackSample parts of a packet's interned data (first definition of an iid wins).
    pub(super) fn intern(&mut self, sink: &mut Sink, d: &protos::InternedData) {
        for t in &d.stack_sample_task_contexts {
            self.tasks.entry(t.iid.unwrap_or(0)).or_insert(*t);
        }
        for e in &d.stack_sample_execution_contexts {
            let iid = e.iid.unwrap_or(0);
            self.executions.entry(iid).or_insert(*e);
        }
        for c in &d.stack_sample_counter_descriptors {
            let iid = c.iid.unwrap_or(0);
            self.counters.entry(iid).or_insert_with(|| c.clone());
        }
        for a in &d.stack_sample_async_context_descriptors {
            let iid = a.iid.unwrap_or(0);
            if self.async_contexts.contains_key(&iid) {
                continue;
            }
            let row = AsyncContextRow {
                name: sink.intern_opt(a.name.as_deref()),
                kind: sink.intern_opt(a.kind.as_deref()),
                parent: a
                    .parent_iid
                    .and_then(|p| self.async_contexts.get(&p).copied()),
            };
            let id = sink.stack_profile.async_contexts.len() as u32;
            sink.stack_profile.async_contexts.push(row);
            self.async_contexts.insert(iid, id);
        }
    }
}

/// `stack_sample_execution_context.cpu_mode` of StackSample.Mode (NULL when unknown).
fn mode_name(mode: i32) -> Option<&'static str> {
    Some(match mode {
        1 => "user",
        2 => "kernel",
        3 => "hypervisor",
        4 => "guest_user",
        5 => "guest_kernel",
        _ => return None,
    })
}

/// The unit of a counter descriptor (StackSample.Unit, or its own unit string).
fn unit_name(sink: &mut Sink, d: &ss::CounterDescriptor) -> StrId {
    use ss::counter_descriptor::UnitField;
    let name = match d.unit_field.as_ref() {
        Some(UnitField::UnitStr(s)) => return sink.intern_nonempty(s),
        Some(UnitField::Unit(1)) => "ns",
        Some(UnitField::Unit(2)) => "cycles",
        Some(UnitField::Unit(3)) => "instructions",
        Some(UnitField::Unit(4)) => "bytes",
        Some(UnitField::Unit(5)) => "page_faults",
        Some(UnitField::Unit(6)) => "cache_misses",
        Some(UnitField::Unit(7)) => "cache_references",
        Some(UnitField::Unit(8)) => "branch_misses",
        Some(UnitField::Unit(9)) => "count",
        _ => return NULL_STR,
    };
    sink.intern(name)
}

impl Parser<'_> {
    /// A StackSample packet: its session, callstack, contexts and counter values, handed on
    /// as a sample at the packet's time.
    pub(super) fn stack_sample(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: Option<i64>,
        clock: ClockRef,
        s: &protos::StackSample,
    ) {
        let Some(ts) = ts else {
            self.sink.stat("stackprofile_parser_error", machine, 1);
            return;
        };
        let primary = match &s.primary_descriptor_field {
            Some(ss::PrimaryDescriptorField::PrimaryDescriptor(d)) => Some(d.clone()),
            Some(ss::PrimaryDescriptorField::PrimaryDescriptorIid(iid)) => {
                let seq = self.seq_profile(machine, seq_id);
                seq.stack.counters.get(iid).cloned()
            }
            None => {
                let seq = self.seq_profile(machine, seq_id);
                seq.stack
                    .defaults
                    .as_ref()
                    .and_then(|d| d.primary_descriptor.clone())
            }
        };
        let followers: Vec<ss::CounterDescriptor> = {
            let seq = self.seq_profile(machine, seq_id);
            if !s.follower_descriptors.is_empty() {
                s.follower_descriptors.clone()
            } else if !s.follower_descriptor_iids.is_empty() {
                s.follower_descriptor_iids
                    .iter()
                    .map(|iid| seq.stack.counters.get(iid).cloned().unwrap_or_default())
                    .collect()
            } else {
                seq.stack
                    .defaults
                    .as_ref()
                    .map(|d| d.follower_descriptors.clone())
                    .unwrap_or_default()
            }
        };
        let session = self.stack_session(machine, seq_id, primary.as_ref());
        let callsite = match &s.callstack_field {
            Some(ss::CallstackField::Callstack(inline)) => self.inline_callstack(inline),
            Some(ss::CallstackField::CallstackIid(iid)) => {
                let seq = self
                    .profiling
                    .sequences
                    .entry((machine, seq_id))
                    .or_default();
                Lookup { seq, heap: false }.callstack(self.sink, machine, *iid)
            }
            None => None,
        };
        let seq = self.seq_profile(machine, seq_id);
        let task = match &s.task_context_field {
            Some(ss::TaskContextField::TaskContext(t)) => Some(*t),
            Some(ss::TaskContextField::TaskContextIid(iid)) => seq.stack.tasks.get(iid).cloned(),
            None => None,
        };
        let task = task.map(|t| TaskRef {
            machine,
            pid: t.pid.map(i64::from),
            tid: t.tid.map(i64::from),
            async_context: t
                .async_id
                .and_then(|a| seq.stack.async_contexts.get(&a).copied()),
        });
        let execution = match &s.execution_context_field {
            Some(ss::ExecutionContextField::ExecutionContext(e)) => Some(*e),
            Some(ss::ExecutionContextField::ExecutionContextIid(iid)) => {
                seq.stack.executions.get(iid).cloned()
            }
            None => None,
        };
        let execution = execution.and_then(|e| {
            let mode = mode_name(e.mode.unwrap_or(0)).map_or(NULL_STR, |m| self.sink.intern(m));
            e.cpu.map(|cpu| (cpu, mode))
        });
        let unwind_error = match &s.unwind_error_field {
            Some(ss::UnwindErrorField::UnwindError(e)) => self.sink.intern_nonempty(e),
            _ => NULL_STR,
        };
        // Counter values: the primary weight, then each follower with a weight.
        let start = self.sink.stack_profile.sample_counters.len() as u32;
        let weights = s
            .primary_weight
            .map(|w| (primary.as_ref(), w, true))
            .into_iter()
            .chain(
                s.follower_weights
                    .iter()
                    .enumerate()
                    .map(|(i, &w)| (followers.get(i), w, false)),
            )
            .collect::<Vec<_>>();
        for (desc, weight, is_primary) in weights {
            let Some(desc) = desc else {
                self.sink.stat("stackprofile_parser_error", machine, 1);
                continue;
            };
            let multiplier = desc.unit_multiplier.filter(|&m| m > 0).unwrap_or(1);
            let row = SampleCounterDesc {
                session,
                name: self.sink.intern_opt(desc.name.as_deref()),
                unit: unit_name(self.sink, desc),
                description: self.sink.intern_opt(desc.description.as_deref()),
                per_cpu: desc.scope == Some(ss::counter_descriptor::Scope::Cpu as i32),
                primary: is_primary,
            };
            let id = self.sink.stack_profile.counter_desc(row);
            let value = weight as f64 * multiplier as f64;
            self.sink.stack_profile.sample_counters.push((id, value));
        }
        let end = self.sink.stack_profile.sample_counters.len() as u32;
        let index = self.sink.stack_profile.stack_samples.len() as u32;
        self.sink.stack_profile.stack_samples.push(StackSampleData {
            session,
            callsite,
            task,
            execution,
            counters: (start, end - start),
            unwind_error,
        });
        self.sink.push(
            ts,
            clock,
            EventData::Profile(ProfileSample::Stack { index }),
        );
    }

    /// The session of a sequence's StackSamples: its source from the defaults, its
    /// timebase from the primary counter.
    fn stack_session(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        primary: Option<&ss::CounterDescriptor>,
    ) -> u32 {
        if let Some(s) = self.seq_profile(machine, seq_id).stack.session {
            return s;
        }
        let source = self
            .seq_profile(machine, seq_id)
            .stack
            .defaults
            .as_ref()
            .and_then(|d| d.source.clone());
        let session = ProfilerSession {
            source: self.sink.intern_opt(source.as_deref()),
            timebase_name: self
                .sink
                .intern_opt(primary.and_then(|p| p.name.as_deref())),
            timebase_unit: primary.map_or(NULL_STR, |p| unit_name(self.sink, p)),
            perf_session: None,
        };
        let id = self.sink.stack_profile.sessions.len() as u32;
        self.sink.stack_profile.sessions.push(session);
        self.seq_profile(machine, seq_id).stack.session = Some(id);
        id
    }

    /// The leaf callsite of a callstack interned on the sequence.
    pub(super) fn interned_callstack(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        iid: u64,
    ) -> Option<u32> {
        let seq = self
            .profiling
            .sequences
            .entry((machine, seq_id))
            .or_default();
        Lookup { seq, heap: false }.callstack(self.sink, machine, iid)
    }

    /// The leaf callsite of frames given inline (outermost first): each a frame known by
    /// its function name and source location, in one shared mapping without a file.
    pub(super) fn inline_callstack(&mut self, inline: &protos::InlineCallstack) -> Option<u32> {
        if inline.frames.is_empty() {
            return None;
        }
        let empty = self.sink.intern("");
        let mapping = self.sink.stack_profile.empty_mapping(empty);
        let mut parent = None;
        for f in &inline.frames {
            let name = self.sink.intern(f.function_name.as_deref().unwrap_or(""));
            let file = self.sink.intern_opt(f.source_file.as_deref());
            let frame = self
                .sink
                .stack_profile
                .dummy_frame(mapping, name, file, f.line_number);
            parent = Some(self.sink.stack_profile.callsite(parent, frame));
        }
        parent
    }
}
