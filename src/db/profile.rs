//! The profile tables: Trace Processor's stack profile tables (`stack_profile_mapping`,
//! `stack_profile_frame`, `stack_profile_callsite`, `stack_profile_symbol`), written whole at
//! the end of the import from the sink's [`StackProfile`](crate::model::StackProfile), and
//! the sample tables (`cpu_profile_stack_sample`, `perf_sample`, `heap_profile_allocation`,
//! `heap_profile`), streamed as the model hands their rows on.

use super::bulk::Table;
use super::writer::TableWriter;
use super::DbError;
use crate::ir::Sink;
use crate::model::ProfileRow;

/// The tables, created with the rest of the schema.
pub const TABLES: &str = r#"
CREATE TABLE stack_profile_mapping (
  id INTEGER PRIMARY KEY, build_id TEXT, exact_offset INTEGER, start_offset INTEGER,
  start INTEGER, "end" INTEGER, load_bias INTEGER, name TEXT);
CREATE TABLE stack_profile_frame (
  id INTEGER PRIMARY KEY, name TEXT, mapping INTEGER, rel_pc INTEGER, symbol_set_id INTEGER,
  deobfuscated_name TEXT, type TEXT);
CREATE TABLE stack_profile_callsite (
  id INTEGER PRIMARY KEY, depth INTEGER, parent_id INTEGER, frame_id INTEGER);
CREATE TABLE stack_profile_symbol (
  id INTEGER PRIMARY KEY, symbol_set_id INTEGER, name TEXT, source_file TEXT,
  line_number INTEGER, inlined INTEGER);
CREATE TABLE cpu_profile_stack_sample (
  id INTEGER PRIMARY KEY, ts INTEGER, callsite_id INTEGER, utid INTEGER,
  process_priority INTEGER);
CREATE TABLE perf_sample (
  id INTEGER PRIMARY KEY, ts INTEGER, utid INTEGER, cpu INTEGER, cpu_mode TEXT,
  callsite_id INTEGER, unwind_error TEXT, perf_session_id INTEGER);
CREATE TABLE perf_session (id INTEGER PRIMARY KEY, cmdline TEXT);
CREATE TABLE heap_profile_allocation (
  id INTEGER PRIMARY KEY, ts INTEGER, upid INTEGER, heap_name TEXT, callsite_id INTEGER,
  count INTEGER, size INTEGER);
CREATE TABLE __intrinsic_profiler_sample (
  id INTEGER PRIMARY KEY, ts INTEGER, session_id INTEGER, callsite_id INTEGER,
  counter_set_id INTEGER, execution_context_id INTEGER, task_context_id INTEGER,
  unwind_error TEXT);
CREATE TABLE __intrinsic_profiler_counter_set (
  id INTEGER PRIMARY KEY, counter_set_id INTEGER, counter_id INTEGER);
CREATE TABLE __intrinsic_profiler_execution_context (
  id INTEGER PRIMARY KEY, ucpu INTEGER, cpu_mode TEXT);
CREATE TABLE __intrinsic_profiler_task_context (
  id INTEGER PRIMARY KEY, upid INTEGER, utid INTEGER, async_context_id INTEGER);
CREATE TABLE __intrinsic_profiler_session (
  id INTEGER PRIMARY KEY, source TEXT, timebase_name TEXT, timebase_unit TEXT,
  perf_session_id INTEGER);
CREATE TABLE __intrinsic_profiler_async_context (
  id INTEGER PRIMARY KEY, name TEXT, kind TEXT, parent_id INTEGER);
CREATE TABLE heap_graph_class (
  id INTEGER PRIMARY KEY, name TEXT, deobfuscated_name TEXT, location TEXT,
  superclass_id INTEGER, classloader_id INTEGER, kind TEXT);
CREATE TABLE heap_graph_object (
  id INTEGER PRIMARY KEY, upid INTEGER, graph_sample_ts INTEGER, self_size INTEGER,
  native_size INTEGER, reference_set_id INTEGER, reachable INTEGER, heap_type TEXT,
  type_id INTEGER, root_type TEXT, root_distance INTEGER);
CREATE TABLE heap_graph_reference (
  id INTEGER PRIMARY KEY, reference_set_id INTEGER, owner_id INTEGER, owned_id INTEGER,
  field_name TEXT, field_type_name TEXT, deobfuscated_field_name TEXT);
CREATE TABLE heap_graph (
  id INTEGER PRIMARY KEY, ts INTEGER, upid INTEGER, heap_size INTEGER, dump_reason TEXT);
CREATE TABLE heap_graph_thread_callsite (
  id INTEGER PRIMARY KEY, ts INTEGER, upid INTEGER, callsite_id INTEGER);
CREATE TABLE __intrinsic_track_event_callstacks (
  id INTEGER PRIMARY KEY, slice_id INTEGER, track_id INTEGER, callsite_id INTEGER,
  end_callsite_id INTEGER, weight REAL);
CREATE TABLE heap_profile (
  id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, upid INTEGER, heap_name TEXT,
  sampling_interval_bytes INTEGER,
  ts_end INTEGER GENERATED ALWAYS AS (ts + dur) VIRTUAL);
"#;

/// Views over them, as Trace Processor names them.
pub const VIEWS: &str = r#"
CREATE VIEW perf_counter_track AS
  SELECT t.id, t.name, t.type, t.parent_id, t.source_arg_set_id, t.machine_id, t.unit,
         t.description,
         (SELECT a.int_value FROM args a
          WHERE a.arg_set_id = t.dimension_arg_set_id AND a.key = 'perf_session_id')
           AS perf_session_id,
         t.cpu,
         (SELECT a.int_value FROM args a
          WHERE a.arg_set_id = t.source_arg_set_id AND a.key = 'is_timebase') AS is_timebase
  FROM __intrinsic_track t WHERE t.type = 'perf_counter';
"#;

/// The stack sample views: samples of any stack profiler that have a callstack, their
/// sessions, contexts and counter values.
pub const STACK_SAMPLE_VIEWS: &str = r#"
CREATE VIEW stack_sample AS
  SELECT s.id, s.ts, s.callsite_id, ses.source, s.session_id,
         s.execution_context_id, s.task_context_id, tc.utid, tc.upid, s.unwind_error,
         s.counter_set_id
  FROM __intrinsic_profiler_sample s
  LEFT JOIN __intrinsic_profiler_session ses ON ses.id = s.session_id
  LEFT JOIN __intrinsic_profiler_task_context tc ON tc.id = s.task_context_id
  WHERE s.callsite_id IS NOT NULL;
CREATE VIEW stack_sample_session AS
  SELECT ses.id, ses.source, ses.timebase_name, ses.timebase_unit, ses.perf_session_id
  FROM __intrinsic_profiler_session ses
  WHERE EXISTS (SELECT 1 FROM __intrinsic_profiler_sample s
                WHERE s.session_id = ses.id AND s.callsite_id IS NOT NULL);
CREATE VIEW stack_sample_counter AS
  SELECT c.id, c.ts, c.track_id, c.value, s.id AS stack_sample_id
  FROM __intrinsic_profiler_sample s
  JOIN __intrinsic_profiler_counter_set cs ON cs.counter_set_id = s.counter_set_id
  JOIN counter c ON c.id = cs.counter_id
  WHERE s.callsite_id IS NOT NULL;
CREATE VIEW stack_sample_counter_track AS
  SELECT t.id, t.name, t.type, t.parent_id, t.source_arg_set_id, t.machine_id, t.unit,
         t.description, ses.id AS session_id, t.cpu,
         (SELECT a.int_value FROM args a
          WHERE a.arg_set_id = t.source_arg_set_id AND a.key = 'is_timebase') AS is_timebase
  FROM __intrinsic_track t
  JOIN stack_sample_session ses ON ses.id = CASE t.type
      WHEN 'perf_counter' THEN
        (SELECT s2.id FROM __intrinsic_profiler_session s2
         WHERE s2.perf_session_id = (SELECT a.int_value FROM args a
            WHERE a.arg_set_id = t.dimension_arg_set_id AND a.key = 'perf_session_id'))
      ELSE (SELECT a.int_value FROM args a
            WHERE a.arg_set_id = t.dimension_arg_set_id AND a.key = 'session_id') END
  WHERE t.type IN ('stack_sample_counter', 'perf_counter');
CREATE VIEW stack_sample_execution_context AS
  SELECT id, ucpu, cpu_mode FROM __intrinsic_profiler_execution_context;
CREATE VIEW stack_sample_task_context AS
  SELECT id, upid, utid, async_context_id FROM __intrinsic_profiler_task_context;
CREATE VIEW stack_sample_async_context AS
  SELECT id, name, kind, parent_id FROM __intrinsic_profiler_async_context;
"#;

/// Perfetto standard-library modules over the profile tables (`stacks.cpu_profiling`,
/// `android.memory.heap_profile.intervals`).
pub const MODULE_VIEWS: &str = r#"
-- stacks.cpu_profiling: samples of cpu time (stack samplers timed in ns, Chrome's and
-- V8's samplers), in time order.
CREATE VIEW cpu_profiling_samples AS
  SELECT ROW_NUMBER() OVER (ORDER BY ts, kind, sid) - 1 AS id, ts, utid, callsite_id, source
  FROM (
    SELECT s.ts, s.utid, s.callsite_id, s.source, 0 AS kind, s.id AS sid
    FROM stack_sample s JOIN __intrinsic_profiler_session ses ON ses.id = s.session_id
    WHERE ses.timebase_unit = 'ns'
    UNION ALL
    SELECT ts, utid, callsite_id, NULL, 1, id FROM cpu_profile_stack_sample);
-- android.memory.heap_profile.intervals: per heapprofd dump, the interval it covers (its
-- window, or from just after the previous dump of the process and heap), what it retains
-- (all allocations minus frees so far), what it allocated, and the change in retained.
CREATE VIEW _android_heap_profile_intervals AS
  WITH dumps AS (
    SELECT hp.id, hp.upid, hp.heap_name, hp.ts AS start_ts, hp.dur, hp.ts + hp.dur AS end_ts,
      LAG(hp.ts + hp.dur) OVER (PARTITION BY hp.upid, hp.heap_name
                                ORDER BY hp.ts + hp.dur, hp.id) AS prev_end
    FROM heap_profile hp),
  totals AS (
    SELECT d.*,
      (SELECT IFNULL(SUM(a.size), 0) FROM heap_profile_allocation a
       WHERE a.upid = d.upid AND a.heap_name = d.heap_name AND a.ts <= d.end_ts) AS retained,
      (SELECT IFNULL(SUM(a.size), 0) FROM heap_profile_allocation a
       WHERE a.upid = d.upid AND a.heap_name = d.heap_name AND a.ts = d.end_ts
         AND a.size > 0) AS allocated
    FROM dumps d),
  placed AS (
    SELECT t.*, CASE WHEN t.dur > 0 THEN t.start_ts WHEN t.prev_end IS NULL THEN t.end_ts
                     ELSE t.prev_end + 1 END AS iv_ts
    FROM totals t)
  SELECT id, iv_ts AS ts, end_ts - iv_ts AS dur, upid, heap_name, retained, allocated,
    retained - IFNULL(LAG(retained) OVER (PARTITION BY upid, heap_name
                                          ORDER BY end_ts, id), 0) AS delta
  FROM placed;
"#;

/// Indexes, built after the bulk load.
pub const INDEXES: &str = r#"
CREATE INDEX cpu_profile_stack_sample_utid ON cpu_profile_stack_sample(utid);
CREATE INDEX perf_sample_utid ON perf_sample(utid);
CREATE INDEX heap_graph_object_dump ON heap_graph_object(upid, graph_sample_ts);
CREATE INDEX heap_graph_reference_set ON heap_graph_reference(reference_set_id);
"#;

/// The SQL table and columns of each profile table (see `bulk::Table::shape`).
pub(super) fn shape(table: Table) -> Option<(&'static str, &'static str, bool)> {
    Some(match table {
        Table::StackProfileMapping => (
            "stack_profile_mapping",
            "id, build_id, exact_offset, start_offset, start, \"end\", load_bias, name",
            true,
        ),
        Table::StackProfileFrame => (
            "stack_profile_frame",
            "id, name, mapping, rel_pc, symbol_set_id, deobfuscated_name, type",
            true,
        ),
        Table::StackProfileCallsite => (
            "stack_profile_callsite",
            "id, depth, parent_id, frame_id",
            true,
        ),
        Table::StackProfileSymbol => (
            "stack_profile_symbol",
            "id, symbol_set_id, name, source_file, line_number, inlined",
            true,
        ),
        Table::CpuProfileStackSample => (
            "cpu_profile_stack_sample",
            "id, ts, callsite_id, utid, process_priority",
            true,
        ),
        Table::PerfSample => (
            "perf_sample",
            "id, ts, utid, cpu, cpu_mode, callsite_id, unwind_error, perf_session_id",
            true,
        ),
        Table::PerfSession => ("perf_session", "id, cmdline", true),
        Table::HeapProfileAllocation => (
            "heap_profile_allocation",
            "id, ts, upid, heap_name, callsite_id, count, size",
            true,
        ),
        Table::HeapProfile => (
            "heap_profile",
            "id, ts, dur, upid, heap_name, sampling_interval_bytes",
            true,
        ),
        Table::ProfilerSample => (
            "__intrinsic_profiler_sample",
            "id, ts, session_id, callsite_id, counter_set_id, execution_context_id, \
             task_context_id, unwind_error",
            true,
        ),
        Table::ProfilerCounterSet => (
            "__intrinsic_profiler_counter_set",
            "id, counter_set_id, counter_id",
            true,
        ),
        Table::ProfilerExecutionContext => (
            "__intrinsic_profiler_execution_context",
            "id, ucpu, cpu_mode",
            true,
        ),
        Table::ProfilerTaskContext => (
            "__intrinsic_profiler_task_context",
            "id, upid, utid, async_context_id",
            true,
        ),
        Table::ProfilerSession => (
            "__intrinsic_profiler_session",
            "id, source, timebase_name, timebase_unit, perf_session_id",
            true,
        ),
        Table::ProfilerAsyncContext => (
            "__intrinsic_profiler_async_context",
            "id, name, kind, parent_id",
            true,
        ),
        Table::HeapGraphClass => (
            "heap_graph_class",
            "id, name, deobfuscated_name, location, superclass_id, classloader_id, kind",
            true,
        ),
        Table::HeapGraphObject => (
            "heap_graph_object",
            "id, upid, graph_sample_ts, self_size, native_size, reference_set_id, reachable, \
             heap_type, type_id, root_type, root_distance",
            true,
        ),
        Table::HeapGraphReference => (
            "heap_graph_reference",
            "id, reference_set_id, owner_id, owned_id, field_name, field_type_name, \
             deobfuscated_field_name",
            true,
        ),
        Table::HeapGraph => ("heap_graph", "id, ts, upid, heap_size, dump_reason", true),
        Table::HeapGraphThreadCallsite => (
            "heap_graph_thread_callsite",
            "id, ts, upid, callsite_id",
            true,
        ),
        Table::TrackEventCallstacks => (
            "__intrinsic_track_event_callstacks",
            "id, slice_id, track_id, callsite_id, end_callsite_id, weight",
            true,
        ),
        _ => return None,
    })
}

impl TableWriter<'_> {
    /// One streamed sample row.
    pub(super) fn write_profile(&mut self, row: &ProfileRow, sink: &Sink) -> Result<(), DbError> {
        let s = &sink.strings;
        match *row {
            ProfileRow::Cpu {
                id,
                ts,
                callsite,
                utid,
                process_priority,
            } => self.row(Table::CpuProfileStackSample, |r| {
                r.int(id);
                r.int(ts);
                r.int(callsite);
                r.int(utid);
                r.int(process_priority);
            }),
            ProfileRow::Perf {
                id,
                ts,
                utid,
                cpu,
                cpu_mode,
                callsite,
                unwind_error,
                session,
            } => self.row(Table::PerfSample, |r| {
                r.int(id);
                r.int(ts);
                r.int(utid);
                r.int(cpu);
                r.text(s.get(cpu_mode));
                r.opt_int(callsite);
                r.text(s.get(unwind_error));
                r.int(session);
            }),
            ProfileRow::HeapAllocation {
                id,
                ts,
                upid,
                heap_name,
                callsite,
                count,
                size,
            } => self.row(Table::HeapProfileAllocation, |r| {
                r.int(id);
                r.int(ts);
                r.int(upid);
                r.text(s.get(heap_name));
                r.int(callsite);
                r.int(count);
                r.int(size);
            }),
            ProfileRow::Sample {
                id,
                ts,
                session,
                callsite,
                counter_set,
                execution,
                task,
                unwind_error,
            } => self.row(Table::ProfilerSample, |r| {
                r.int(id);
                r.int(ts);
                r.int(session);
                r.opt_int(callsite);
                r.opt_int(counter_set);
                r.opt_int(execution);
                r.opt_int(task);
                r.text(s.get(unwind_error));
            }),
            ProfileRow::CounterSetEntry { id, set, counter } => {
                self.row(Table::ProfilerCounterSet, |r| {
                    r.int(id);
                    r.int(set);
                    r.int(counter);
                })
            }
            ProfileRow::ExecutionContext { id, ucpu, mode } => {
                self.row(Table::ProfilerExecutionContext, |r| {
                    r.int(id);
                    r.int(ucpu);
                    r.text(s.get(mode));
                })
            }
            ProfileRow::TaskContext {
                id,
                upid,
                utid,
                async_context,
            } => self.row(Table::ProfilerTaskContext, |r| {
                r.int(id);
                r.opt_int(upid);
                r.opt_int(utid);
                r.opt_int(async_context);
            }),
            ProfileRow::HeapProfile {
                id,
                ts,
                dur,
                upid,
                heap_name,
                sampling_interval,
            } => self.row(Table::HeapProfile, |r| {
                r.int(id);
                r.int(ts);
                r.int(dur);
                r.int(upid);
                r.text(s.get(heap_name));
                r.int(sampling_interval);
            }),
        }
    }

    /// The stack tables, whole, once the import is done.
    pub(super) fn stack_profile(&mut self, sink: &Sink) -> Result<(), DbError> {
        let sp = &sink.stack_profile;
        let s = &sink.strings;
        for (id, m) in sp.mappings.iter().enumerate() {
            self.row(Table::StackProfileMapping, |r| {
                r.int(id as i64);
                r.text(Some(s.get(m.build_id).unwrap_or("")));
                r.int(m.exact_offset);
                r.int(m.start_offset);
                r.int(m.start);
                r.int(m.end);
                r.int(m.load_bias);
                r.text(Some(s.get(m.name).unwrap_or("")));
            })?;
        }
        for (id, f) in sp.frames.iter().enumerate() {
            self.row(Table::StackProfileFrame, |r| {
                r.int(id as i64);
                r.text(Some(s.get(f.name).unwrap_or("")));
                r.int(f.mapping);
                r.int(f.rel_pc);
                r.opt_int(f.symbol_set);
                r.text(s.get(f.deobfuscated_name));
                r.text(s.get(f.kind));
            })?;
        }
        for (id, c) in sp.callsites.iter().enumerate() {
            self.row(Table::StackProfileCallsite, |r| {
                r.int(id as i64);
                r.int(c.depth);
                r.opt_int(c.parent);
                r.int(c.frame);
            })?;
        }
        for (id, sym) in sp.symbols.iter().enumerate() {
            self.row(Table::StackProfileSymbol, |r| {
                r.int(id as i64);
                r.int(sym.symbol_set);
                r.text(s.get(sym.name));
                r.text(s.get(sym.source_file));
                r.opt_int(sym.line_number);
                r.int(sym.inlined);
            })?;
        }
        for (id, ses) in sp.sessions.iter().enumerate() {
            self.row(Table::ProfilerSession, |r| {
                r.int(id as i64);
                r.text(s.get(ses.source));
                r.text(s.get(ses.timebase_name));
                r.text(s.get(ses.timebase_unit));
                r.opt_int(ses.perf_session);
            })?;
        }
        for (id, a) in sp.async_contexts.iter().enumerate() {
            self.row(Table::ProfilerAsyncContext, |r| {
                r.int(id as i64);
                r.text(s.get(a.name));
                r.text(s.get(a.kind));
                r.opt_int(a.parent);
            })?;
        }
        for id in 0..sp.perf_sessions.len() {
            self.row(Table::PerfSession, |r| {
                r.int(id as i64);
                r.text(None);
            })?;
        }
        Ok(())
    }
}
