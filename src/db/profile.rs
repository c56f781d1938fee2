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

/// Indexes, built after the bulk load.
pub const INDEXES: &str = r#"
CREATE INDEX cpu_profile_stack_sample_utid ON cpu_profile_stack_sample(utid);
CREATE INDEX perf_sample_utid ON perf_sample(utid);
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
        for id in 0..sp.perf_sessions.len() {
            self.row(Table::PerfSession, |r| {
                r.int(id as i64);
                r.text(None);
            })?;
        }
        Ok(())
    }
}
