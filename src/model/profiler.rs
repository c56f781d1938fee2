//! Stack samplers' samples as Trace Processor's profiler tables hold them: every sample of
//! a stack profiler — traced_perf's `perf_sample` and the generic `stack_sample` packet —
//! is a `__intrinsic_profiler_sample` row with its session, callsite, execution context
//! (cpu and mode), task context (thread, process, async context) and the set of counter
//! values it stands for (`__intrinsic_profiler_counter_set` rows pointing at `counter`
//! rows on the session's counter tracks). The `stack_sample*` views show the samples that
//! have a callstack (see `db/profile.rs`).
//!
//! Perf samples keep their `perf_sample` row too, with the same id.

use super::*;

/// A task context's key: (upid, utid, async context).
type TaskKey = (Option<u32>, Option<u32>, Option<u32>);

/// The model's side of the profiler tables: ids handed out and contexts interned.
#[derive(Default)]
pub struct ProfilerState {
    next_sample: u32,
    next_counter_set_row: u32,
    executions: FxHashMap<(u32, StrId), u32>,
    tasks: FxHashMap<TaskKey, u32>,
    /// Counter track per (counter descriptor, cpu of a per-cpu counter).
    tracks: FxHashMap<(u32, Option<u32>), u32>,
}

/// What a sample's row needs besides its counters.
struct SampleFacts {
    session: u32,
    callsite: Option<u32>,
    execution: Option<(MachineId, u32, StrId)>,
    task: Option<TaskKey>,
    unwind_error: StrId,
}

impl Builder<'_> {
    /// A perf sample: its counter values on the perf session's tracks, its `perf_sample`
    /// row and its profiler sample row (same id).
    pub(super) fn perf_sample(&mut self, ts: i64, thread: ThreadRef, cpu: u32, index: u32) {
        let Some(&data) = self.sink.stack_profile.perf_samples.get(index as usize) else {
            return;
        };
        let mut counters = Vec::new();
        if let Some(count) = data.timebase_count {
            counters.push(self.perf_counter(ts, thread.machine, data.session, cpu, 0, count));
        }
        let followers = self.sink.stack_profile.perf_followers(&data).to_vec();
        for (i, count) in followers.into_iter().enumerate() {
            let i = i as u32 + 1;
            counters.push(self.perf_counter(ts, thread.machine, data.session, cpu, i, count));
        }
        let utid = self.thread(thread);
        let upid = self.tables.threads[utid as usize].upid;
        let id = self.profiler.next_sample;
        self.profiler.next_sample += 1;
        let row = ProfileRow::Perf {
            id,
            ts,
            utid,
            cpu,
            cpu_mode: data.cpu_mode,
            callsite: data.callsite,
            unwind_error: data.unwind_error,
            session: data.session,
        };
        self.out.profile(&row, self.sink);
        let session = self
            .sink
            .stack_profile
            .perf_sessions
            .get(data.session as usize)
            .and_then(|s| s.profiler_session)
            .unwrap_or(0);
        // Trace Processor's execution context holds a known mode only.
        let unknown = self.sink.intern("unknown");
        let mode = if data.cpu_mode == unknown {
            NULL_STR
        } else {
            data.cpu_mode
        };
        let facts = SampleFacts {
            session,
            callsite: data.callsite,
            execution: Some((thread.machine, cpu, mode)),
            task: Some((upid, Some(utid), None)),
            unwind_error: data.unwind_error,
        };
        self.profiler_sample(id, ts, &facts, &counters);
    }

    /// A StackSample: counter values on its session's tracks and its profiler sample row.
    pub(super) fn stack_sample(&mut self, ts: i64, index: u32) {
        let Some(&data) = self.sink.stack_profile.stack_samples.get(index as usize) else {
            return;
        };
        let task = data.task.map(|t| {
            let utid = t.tid.map(|tid| {
                self.thread(ThreadRef {
                    machine: t.machine,
                    tid,
                    pid: t.pid,
                })
            });
            let upid = match utid {
                Some(u) => self.tables.threads[u as usize].upid,
                None => t.pid.map(|pid| {
                    self.process(ProcessRef {
                        machine: t.machine,
                        pid,
                    })
                }),
            };
            (upid, utid, t.async_context)
        });
        let machine = data.task.map_or(HOST_MACHINE, |t| t.machine);
        let values = self
            .sink
            .stack_profile
            .sample_counter_values(&data)
            .to_vec();
        let mut counters = Vec::with_capacity(values.len());
        for (desc, value) in values {
            let cpu = data.execution.map(|e| e.0);
            counters.push(self.sample_counter(ts, machine, desc, cpu, value));
        }
        let id = self.profiler.next_sample;
        self.profiler.next_sample += 1;
        let facts = SampleFacts {
            session: data.session,
            callsite: data.callsite,
            execution: data.execution.map(|(cpu, mode)| (machine, cpu, mode)),
            task,
            unwind_error: data.unwind_error,
        };
        self.profiler_sample(id, ts, &facts, &counters);
    }

    /// The sample's row, its counter set and the contexts it names.
    fn profiler_sample(&mut self, id: u32, ts: i64, facts: &SampleFacts, counters: &[u32]) {
        let execution = facts.execution.map(|(machine, cpu, mode)| {
            let ucpu = self.cpu(machine, cpu);
            let next = self.profiler.executions.len() as u32;
            match self.profiler.executions.get(&(ucpu, mode)) {
                Some(&e) => e,
                None => {
                    self.profiler.executions.insert((ucpu, mode), next);
                    let row = ProfileRow::ExecutionContext {
                        id: next,
                        ucpu,
                        mode,
                    };
                    self.out.profile(&row, self.sink);
                    next
                }
            }
        });
        let task = facts.task.map(|key| {
            let next = self.profiler.tasks.len() as u32;
            match self.profiler.tasks.get(&key) {
                Some(&t) => t,
                None => {
                    self.profiler.tasks.insert(key, next);
                    let row = ProfileRow::TaskContext {
                        id: next,
                        upid: key.0,
                        utid: key.1,
                        async_context: key.2,
                    };
                    self.out.profile(&row, self.sink);
                    next
                }
            }
        });
        let counter_set = (!counters.is_empty()).then_some(id);
        for &counter in counters {
            let row = ProfileRow::CounterSetEntry {
                id: self.profiler.next_counter_set_row,
                set: id,
                counter,
            };
            self.profiler.next_counter_set_row += 1;
            self.out.profile(&row, self.sink);
        }
        let row = ProfileRow::Sample {
            id,
            ts,
            session: facts.session,
            callsite: facts.callsite,
            counter_set,
            execution,
            task,
            unwind_error: facts.unwind_error,
        };
        self.out.profile(&row, self.sink);
    }

    /// A StackSample counter's value, on its session's track (one per cpu for a per-cpu
    /// counter); returns the counter row's id.
    fn sample_counter(
        &mut self,
        ts: i64,
        machine: MachineId,
        desc: u32,
        cpu: Option<u32>,
        value: f64,
    ) -> u32 {
        let Some(&d) = self.sink.stack_profile.counter_descs.get(desc as usize) else {
            return 0;
        };
        let cpu = cpu.filter(|_| d.per_cpu);
        let track = match self.profiler.tracks.get(&(desc, cpu)) {
            Some(&t) => t,
            None => {
                let mrow = self.machine_row(machine);
                let mut row = TrackRow::new(
                    d.name,
                    "stack_sample_counter",
                    mrow,
                    TrackEventType::Counter,
                );
                row.cpu = cpu;
                row.unit = d.unit;
                row.description = d.description;
                let dims = [
                    self.sink
                        .static_arg("session_id", ArgValue::Int(i64::from(d.session))),
                    self.sink.static_arg("name", str_or_null(d.name)),
                ];
                row.extra_dims = self.sink.args.push_shared(&dims);
                let source = [self
                    .sink
                    .static_arg("is_timebase", ArgValue::Bool(d.primary))];
                row.source_args = self.sink.args.push_shared(&source);
                let t = self.tables.tracks.len() as u32;
                self.tables.tracks.push(row);
                self.profiler.tracks.insert((desc, cpu), t);
                t
            }
        };
        let id = self.tables.counter_count;
        let row = CounterRow {
            ts,
            track,
            value,
            args: NO_ARGS,
        };
        self.out.counter(id, &row, self.sink);
        self.tables.counter_count += 1;
        id
    }
}
