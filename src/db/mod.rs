//! SQLite: the schema, the bulk writer on the import connection, read-only query
//! connections with Perfetto's SQL functions, and `trace_processor_shell`-style CSV output.

mod functions;
mod layout;
mod output;
pub mod schema;
mod span_join;

pub use functions::register_functions;

pub use output::{run_script, split_statements, translate, QueryError};

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{params, Connection, OpenFlags, Statement};

use crate::clock::report::{CandidateRow, Report, SnapshotRow};
use crate::ir::{
    clocks, Arg, ArgValue, ArgsRef, MachineId, MetaValue, Sink, StrId, NO_ARGS, NO_FILE,
    NO_MACHINE, NO_TS,
};
use crate::model::{CounterRow, RowSink, SchedRow, SliceRow, Tables, ThreadStateRow};
use crate::stats;

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("the import was cancelled")]
    Cancelled,
    #[error("{path} is not a Sextant database: {reason}")]
    NotSextant { path: String, reason: String },
}

/// A row of `__intrinsic_trace_file`.
#[derive(Clone, Debug)]
pub struct TraceFileRow {
    pub parent_id: Option<u32>,
    pub name: Option<String>,
    pub size: u64,
    pub trace_type: &'static str,
    pub processing_order: Option<u32>,
    pub is_container: bool,
}

/// What the import knows beyond the model's tables.
#[derive(Default, Debug)]
pub struct ImportFacts {
    pub files: Vec<TraceFileRow>,
    pub snapshots: Vec<SnapshotRow>,
    /// The clock trace time is on, when a file or the manifest claimed one.
    pub trace_time_clock: Option<u32>,
    /// How the clock graph placed each file.
    pub report: Report,
    pub candidates: Vec<CandidateRow>,
}

/// Opens a fresh database file for writing, tuned for one bulk load.
pub fn create(path: &Path) -> Result<Connection, DbError> {
    if path.exists() {
        let _ = std::fs::remove_file(path);
    }
    for suffix in ["-wal", "-shm"] {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        let _ = std::fs::remove_file(side);
    }
    let conn = Connection::open(path)?;
    // WAL lets read-only connections (the TUI) see each committed batch while the import
    // writes; nothing needs to survive a crash, so no syncing.
    conn.execute_batch(
        "PRAGMA page_size = 8192; PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;
         PRAGMA cache_size = -32768; PRAGMA temp_store = MEMORY;
         PRAGMA wal_autocheckpoint = 10000;",
    )?;
    conn.execute_batch(schema::TABLES)?;
    conn.execute_batch(schema::VIEWS)?;
    Ok(conn)
}

/// Opens a database read-only for queries, with Perfetto's SQL functions.
pub fn open_read_only(path: &Path) -> Result<Connection, DbError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let ok: Result<i64, _> = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE name IN ('slice', 'stats', 'metadata')",
        [],
        |r| r.get(0),
    );
    match ok {
        Ok(3) => {}
        Ok(_) => {
            return Err(DbError::NotSextant {
                path: path.display().to_string(),
                reason: "it has no slice/stats/metadata tables".into(),
            })
        }
        Err(e) => {
            return Err(DbError::NotSextant {
                path: path.display().to_string(),
                reason: e.to_string(),
            })
        }
    }
    register_functions(&conn, path)?;
    Ok(conn)
}

/// Starts the bulk load, committed at each model checkpoint (see [`RowSink::checkpoint`]).
/// `tick` hears the rows written so far at each commit; returning false cancels the import.
pub fn begin<'c>(
    conn: &'c Connection,
    tick: &'c mut dyn FnMut(u64) -> bool,
) -> Result<TableWriter<'c>, DbError> {
    conn.execute_batch("BEGIN")?;
    TableWriter::new(conn, tick)
}

/// Commits the bulk load, then builds indexes and folds the WAL into the database file.
pub fn commit(conn: &Connection) -> Result<(), DbError> {
    conn.execute_batch("COMMIT")?;
    conn.execute_batch(schema::INDEXES)?;
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    Ok(())
}

fn nullable_machine(m: MachineId) -> Option<i64> {
    (m != NO_MACHINE).then_some(i64::from(m))
}

fn nullable_file(f: u32) -> Option<i64> {
    (f != NO_FILE).then_some(i64::from(f))
}

fn opt_u32(v: Option<u32>) -> Option<i64> {
    v.map(i64::from)
}

/// Writes rows on the import connection: the big tables as the model streams them
/// ([`RowSink`]), the small ones at the end.
pub struct TableWriter<'c> {
    conn: &'c Connection,
    arg_stmt: Statement<'c>,
    slice_stmt: Statement<'c>,
    counter_stmt: Statement<'c>,
    sched_stmt: Statement<'c>,
    thread_state_stmt: Statement<'c>,
    /// The first error while streaming (the model cannot take errors mid-event).
    error: Option<DbError>,
    rows: u64,
    tick: &'c mut dyn FnMut(u64) -> bool,
    next_arg_row: i64,
    /// Identical arg sets share one id.
    sets_by_content: HashMap<Vec<(StrId, StrId, u8, u64)>, i64>,
    sets_by_ref: HashMap<ArgsRef, i64>,
}

impl RowSink for TableWriter<'_> {
    fn slice(&mut self, id: u32, s: &SliceRow, sink: &Sink) {
        let r = self.write_slice(id, s, sink);
        self.keep_error(r);
    }
    fn counter(&mut self, id: u32, c: &CounterRow, sink: &Sink) {
        let r = self.write_counter(id, c, sink);
        self.keep_error(r);
    }
    fn sched(&mut self, id: u32, s: &SchedRow, sink: &Sink) {
        let r = self.write_sched(id, s, sink);
        self.keep_error(r);
    }
    fn thread_state(&mut self, id: u32, s: &ThreadStateRow, sink: &Sink) {
        let r = self.write_thread_state(id, s, sink);
        self.keep_error(r);
    }
    fn checkpoint(&mut self, tables: &Tables, sink: &Sink) {
        if self.error.is_some() {
            return;
        }
        let r = self.publish(tables, sink);
        if let Err(e) = r {
            self.error = Some(e);
        } else if !(self.tick)(self.rows) {
            self.error = Some(DbError::Cancelled);
        }
    }
}

fn bind_str(stmt: &mut Statement<'_>, i: usize, v: Option<&str>) -> rusqlite::Result<()> {
    match v {
        Some(v) => stmt.raw_bind_parameter(i, v),
        None => stmt.raw_bind_parameter(i, rusqlite::types::Null),
    }
}

impl<'c> TableWriter<'c> {
    fn new(conn: &'c Connection, tick: &'c mut dyn FnMut(u64) -> bool) -> Result<Self, DbError> {
        let arg_stmt = conn.prepare(
            "INSERT INTO args (id, arg_set_id, flat_key, key, int_value, string_value,
             real_value, value_type, display_value) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)",
        )?;
        let slice_stmt = conn.prepare(
            "INSERT INTO slice (id, ts, dur, track_id, category, name, depth, parent_id,
             arg_set_id, thread_ts, thread_dur) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
        )?;
        let counter_stmt = conn.prepare(
            "INSERT INTO counter (id, ts, track_id, value, arg_set_id) VALUES (?1,?2,?3,?4,?5)",
        )?;
        let sched_stmt = conn.prepare(
            "INSERT INTO sched_slice (id, ts, dur, cpu, utid, end_state, priority, ucpu)
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
        )?;
        let thread_state_stmt = conn.prepare(
            "INSERT INTO thread_state (id, ts, dur, cpu, utid, state, io_wait, blocked_function,
             waker_utid, waker_id, irq_context, ucpu)
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
        )?;
        Ok(Self {
            conn,
            arg_stmt,
            slice_stmt,
            counter_stmt,
            sched_stmt,
            thread_state_stmt,
            error: None,
            rows: 0,
            tick,
            next_arg_row: 0,
            sets_by_content: HashMap::new(),
            sets_by_ref: HashMap::new(),
        })
    }

    fn keep_error(&mut self, r: Result<(), DbError>) {
        if let Err(e) = r {
            self.error.get_or_insert(e);
            return;
        }
        self.rows += 1;
    }

    /// Commits what is written so far, with the machine, process, thread and track rows as
    /// the model has them now, so a reader sees a consistent partial trace.
    fn publish(&mut self, tables: &Tables, sink: &Sink) -> Result<(), DbError> {
        self.machines(tables)?;
        self.processes(tables, sink)?;
        self.threads(tables, sink)?;
        self.tracks(tables, sink)?;
        self.conn.execute_batch("COMMIT; BEGIN")?;
        Ok(())
    }

    /// The `arg_set_id` for a parser arg set: the args-row id of its first row.
    fn arg_set(&mut self, args: ArgsRef, sink: &Sink) -> Result<Option<i64>, DbError> {
        if args == NO_ARGS {
            return Ok(None);
        }
        if let Some(&id) = self.sets_by_ref.get(&args) {
            return Ok(Some(id));
        }
        let set = sink.args.get(args);
        let id = self.write_set(set, sink)?;
        if let Some(id) = id {
            self.sets_by_ref.insert(args, id);
        }
        Ok(id)
    }

    fn write_set(&mut self, set: &[Arg], sink: &Sink) -> Result<Option<i64>, DbError> {
        if set.is_empty() {
            return Ok(None);
        }
        let key: Vec<(StrId, StrId, u8, u64)> = set
            .iter()
            .map(|a| {
                let (tag, bits) = match a.value {
                    ArgValue::Int(v) => (0, v as u64),
                    ArgValue::Uint(v) => (1, v),
                    ArgValue::Str(v) => (2, v as u64),
                    ArgValue::Real(v) => (3, v.to_bits()),
                    ArgValue::Bool(v) => (4, v as u64),
                    ArgValue::Pointer(v) => (5, v),
                    ArgValue::Json(v) => (6, v as u64),
                    ArgValue::Null => (7, 0),
                    ArgValue::ThreadUtid(v) => (8, u64::from(v)),
                };
                (a.flat_key, a.key, tag, bits)
            })
            .collect();
        if let Some(&id) = self.sets_by_content.get(&key) {
            return Ok(Some(id));
        }
        let set_id = self.next_arg_row;
        let strings = &sink.strings;
        for a in set {
            let (int, string, real, ty, display): (
                Option<i64>,
                Option<&str>,
                Option<f64>,
                &str,
                String,
            ) = match a.value {
                ArgValue::Int(v) => (Some(v), None, None, "int", v.to_string()),
                ArgValue::Uint(v) => (Some(v as i64), None, None, "uint", v.to_string()),
                ArgValue::Str(v) => {
                    let s = strings.get(v).unwrap_or("");
                    (None, Some(s), None, "string", s.to_string())
                }
                ArgValue::Real(v) => (None, None, Some(v), "real", v.to_string()),
                ArgValue::Bool(v) => (
                    Some(v as i64),
                    None,
                    None,
                    "bool",
                    if v { "true" } else { "false" }.to_string(),
                ),
                ArgValue::Pointer(v) => (Some(v as i64), None, None, "pointer", format!("0x{v:x}")),
                ArgValue::Json(v) => {
                    let s = strings.get(v).unwrap_or("");
                    (None, Some(s), None, "json", s.to_string())
                }
                ArgValue::Null => (None, None, None, "null", "[NULL]".to_string()),
                // Resolved by the model; an unresolved one has no utid to show.
                ArgValue::ThreadUtid(_) => (None, None, None, "int", "[NULL]".to_string()),
            };
            self.arg_stmt.execute(params![
                self.next_arg_row,
                set_id,
                strings.get(a.flat_key),
                strings.get(a.key),
                int,
                string,
                real,
                ty,
                display
            ])?;
            self.next_arg_row += 1;
        }
        self.sets_by_content.insert(key, set_id);
        Ok(Some(set_id))
    }

    fn extra_args(
        &mut self,
        extra: &[(StrId, ArgValue)],
        sink: &Sink,
    ) -> Result<Option<i64>, DbError> {
        let set: Vec<Arg> = extra
            .iter()
            .map(|&(key, value)| Arg {
                flat_key: key,
                key,
                value,
            })
            .collect();
        self.write_set(&set, sink)
    }

    /// Writes the small tables and what the import knows besides; ends the streaming.
    pub fn finish(
        mut self,
        tables: &Tables,
        sink: &Sink,
        facts: &ImportFacts,
    ) -> Result<(), DbError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.machines(tables)?;
        self.processes(tables, sink)?;
        self.threads(tables, sink)?;
        self.tracks(tables, sink)?;
        self.flows(tables, sink)?;
        self.states(tables, sink)?;
        self.cpus(tables, sink)?;
        self.import_logs(tables, sink)?;
        self.stats(sink)?;
        self.metadata(facts, sink)?;
        self.files_and_snapshots(facts)?;
        let (start, end) = tables.trace_bounds();
        self.conn.execute(
            "INSERT INTO trace_bounds VALUES (?1, ?2)",
            params![start, end],
        )?;
        Ok(())
    }

    fn states(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        let mut rows = Vec::with_capacity(t.states.len());
        for s in &t.states {
            rows.push((s, self.arg_set(s.args, sink)?));
        }
        let mut stmt = self.conn.prepare(
            "INSERT INTO __intrinsic_state (id, ts, dur, track_id, category, value, arg_set_id)
             VALUES (?1,?2,?3,?4,?5,?6,?7)",
        )?;
        for (id, (s, args)) in rows.into_iter().enumerate() {
            stmt.execute(params![
                id as i64,
                s.ts,
                s.dur,
                s.track,
                sink.strings.get(s.category),
                sink.strings.get(s.value),
                args
            ])?;
        }
        Ok(())
    }

    fn machines(&mut self, t: &Tables) -> Result<(), DbError> {
        // Rewritten whole at each checkpoint and at the end.
        self.conn.execute("DELETE FROM machine", [])?;
        let mut stmt = self.conn.prepare(
            "INSERT INTO machine (id, raw_id, name, sysname, release, version, arch, num_cpus,
             android_build_fingerprint, android_sdk_version, system_ram_bytes, system_ram_gb,
             label_index) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
        )?;
        // label_index: 0 for the host, else the rank among the other machines.
        let mut next_label = 0i64;
        for (id, m) in t.machines.iter().enumerate() {
            let i = &m.info;
            let label_index = if m.raw_id == 0 {
                0
            } else {
                next_label += 1;
                next_label
            };
            stmt.execute(params![
                id as i64,
                m.raw_id,
                i.name,
                i.sysname,
                i.release,
                i.version,
                i.arch,
                i.num_cpus,
                i.android_build_fingerprint,
                i.android_sdk_version,
                i.system_ram_bytes,
                i.system_ram_bytes.map(|b| (b + (1 << 29)) >> 30),
                label_index
            ])?;
        }
        Ok(())
    }

    fn processes(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        // Rewritten whole at each checkpoint and at the end.
        self.conn.execute("DELETE FROM process", [])?;
        let mut stmt = self.conn.prepare(
            "INSERT INTO process (id, upid, pid, name, start_ts, end_ts, parent_upid, uid,
             android_appid, android_user_id, cmdline, arg_set_id, machine_id)
             VALUES (?1,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
        )?;
        for (id, p) in t.processes.iter().enumerate() {
            let args = self.extra_args(&p.extra_args, sink)?;
            stmt.execute(params![
                id as i64,
                p.pid,
                sink.strings.get(p.name),
                p.start_ts,
                p.end_ts,
                opt_u32(p.parent_upid),
                p.uid,
                p.uid.map(|u| u % 100_000),
                p.uid.map(|u| u / 100_000),
                sink.strings.get(p.cmdline),
                args,
                p.machine
            ])?;
        }
        Ok(())
    }

    fn threads(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        // Rewritten whole at each checkpoint and at the end.
        self.conn.execute("DELETE FROM thread", [])?;
        let mut stmt = self.conn.prepare(
            "INSERT INTO thread (id, utid, tid, name, start_ts, end_ts, upid, is_main_thread,
             is_idle, machine_id, arg_set_id) VALUES (?1,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
        )?;
        for (id, th) in t.threads.iter().enumerate() {
            let args = self.extra_args(&th.extra_args, sink)?;
            stmt.execute(params![
                id as i64,
                th.tid,
                sink.strings.get(th.name),
                th.start_ts,
                th.end_ts,
                opt_u32(th.upid),
                th.is_main_thread,
                th.is_idle,
                th.machine,
                args
            ])?;
        }
        Ok(())
    }

    fn tracks(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        // Rewritten whole at each checkpoint and at the end.
        self.conn.execute("DELETE FROM __intrinsic_track", [])?;
        let mut stmt = self.conn.prepare(
            "INSERT INTO __intrinsic_track (id, name, type, dimension_arg_set_id, parent_id,
             source_arg_set_id, machine_id, track_group_id, event_type, utid, upid, cpu, unit)
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)",
        )?;
        for (id, tr) in t.tracks.iter().enumerate() {
            let mut dims = Vec::new();
            let mut dim = |key: &str, v: Option<u32>| {
                if let Some(v) = v {
                    dims.push((key.to_string(), i64::from(v)));
                }
            };
            dim("utid", tr.utid);
            dim("upid", tr.upid);
            dim("cpu", tr.cpu);
            dim("track_compressor_idx", tr.compressor_idx);
            let dims = self.dimension_args(&dims, sink)?;
            let source = self.arg_set(tr.source_args, sink)?;
            stmt.execute(params![
                id as i64,
                sink.strings.get(tr.name),
                tr.kind,
                dims,
                opt_u32(tr.parent_id),
                source,
                tr.machine,
                opt_u32(tr.track_group),
                tr.event_type.as_str(),
                opt_u32(tr.utid),
                opt_u32(tr.upid),
                opt_u32(tr.cpu),
                sink.strings.get(tr.unit)
            ])?;
        }
        Ok(())
    }

    fn dimension_args(
        &mut self,
        dims: &[(String, i64)],
        sink: &Sink,
    ) -> Result<Option<i64>, DbError> {
        if dims.is_empty() {
            return Ok(None);
        }
        // Dimension keys are few and fixed; look them up without interning.
        let mut set = Vec::with_capacity(dims.len());
        for (k, v) in dims {
            let Some(key) = sink.dimension_keys.get(k.as_str()).copied() else {
                continue;
            };
            set.push(Arg {
                flat_key: key,
                key,
                value: ArgValue::Int(*v),
            });
        }
        self.write_set(&set, sink)
    }

    fn write_slice(&mut self, id: u32, s: &SliceRow, sink: &Sink) -> Result<(), DbError> {
        let args = self.arg_set(s.args, sink)?;
        let st = &mut self.slice_stmt;
        st.raw_bind_parameter(1, id)?;
        st.raw_bind_parameter(2, s.ts)?;
        st.raw_bind_parameter(3, s.dur)?;
        st.raw_bind_parameter(4, s.track)?;
        bind_str(st, 5, sink.strings.get(s.category))?;
        bind_str(st, 6, sink.strings.get(s.name))?;
        st.raw_bind_parameter(7, s.depth)?;
        st.raw_bind_parameter(8, opt_u32(s.parent))?;
        st.raw_bind_parameter(9, args)?;
        st.raw_bind_parameter(10, (s.thread_ts != NO_TS).then_some(s.thread_ts))?;
        st.raw_bind_parameter(11, (s.thread_dur != NO_TS).then_some(s.thread_dur))?;
        st.raw_execute()?;
        Ok(())
    }

    fn write_counter(&mut self, id: u32, c: &CounterRow, sink: &Sink) -> Result<(), DbError> {
        let args = self.arg_set(c.args, sink)?;
        let st = &mut self.counter_stmt;
        st.raw_bind_parameter(1, id)?;
        st.raw_bind_parameter(2, c.ts)?;
        st.raw_bind_parameter(3, c.track)?;
        st.raw_bind_parameter(4, c.value)?;
        st.raw_bind_parameter(5, args)?;
        st.raw_execute()?;
        Ok(())
    }

    fn write_sched(&mut self, id: u32, s: &SchedRow, sink: &Sink) -> Result<(), DbError> {
        let st = &mut self.sched_stmt;
        st.raw_bind_parameter(1, id)?;
        st.raw_bind_parameter(2, s.ts)?;
        st.raw_bind_parameter(3, s.dur)?;
        st.raw_bind_parameter(4, s.cpu)?;
        st.raw_bind_parameter(5, s.utid)?;
        bind_str(st, 6, sink.strings.get(s.end_state))?;
        st.raw_bind_parameter(7, s.priority)?;
        st.raw_bind_parameter(8, s.ucpu)?;
        st.raw_execute()?;
        Ok(())
    }

    fn write_thread_state(
        &mut self,
        id: u32,
        s: &ThreadStateRow,
        sink: &Sink,
    ) -> Result<(), DbError> {
        let st = &mut self.thread_state_stmt;
        st.raw_bind_parameter(1, id)?;
        st.raw_bind_parameter(2, s.ts)?;
        st.raw_bind_parameter(3, s.dur)?;
        st.raw_bind_parameter(4, opt_u32(s.cpu))?;
        st.raw_bind_parameter(5, s.utid)?;
        bind_str(st, 6, sink.strings.get(s.state))?;
        st.raw_bind_parameter(7, s.io_wait)?;
        bind_str(st, 8, sink.strings.get(s.blocked_function))?;
        st.raw_bind_parameter(9, opt_u32(s.waker_utid))?;
        st.raw_bind_parameter(10, opt_u32(s.waker_id))?;
        st.raw_bind_parameter(11, s.irq_context)?;
        st.raw_bind_parameter(12, opt_u32(s.ucpu))?;
        st.raw_execute()?;
        Ok(())
    }

    fn import_logs(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        let mut stmt = self.conn.prepare(
            "INSERT INTO _trace_import_logs (id, trace_id, ts, byte_offset, severity, name,
             arg_set_id) VALUES (?1,?2,?3,NULL,?4,?5,?6)",
        )?;
        for (id, log) in t.import_logs.iter().enumerate() {
            let args = self.arg_set(log.args, sink)?;
            let severity = stats::lookup(log.name).map_or("error", |d| d.severity.as_str());
            stmt.execute(params![
                id as i64, log.file, log.ts, severity, log.name, args
            ])?;
        }
        Ok(())
    }

    fn flows(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        let mut stmt = self.conn.prepare(
            "INSERT INTO flow (id, slice_out, slice_in, trace_id, arg_set_id)
             VALUES (?1,?2,?3,?4,?5)",
        )?;
        for (id, f) in t.flows.iter().enumerate() {
            let args = self.arg_set(f.args, sink)?;
            stmt.execute(params![
                id as i64,
                f.slice_out,
                f.slice_in,
                f.trace_id,
                args
            ])?;
        }
        Ok(())
    }

    fn cpus(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        let mut cpus: Vec<_> = t.cpus.iter().collect();
        cpus.sort_by_key(|c| c.ucpu);
        let mut args = Vec::with_capacity(cpus.len());
        for c in &cpus {
            args.push(self.arg_set(c.args, sink)?);
        }
        let mut stmt = self.conn.prepare(
            "INSERT INTO cpu (id, ucpu, cpu, cluster_id, processor, machine_id, capacity,
             arg_set_id) VALUES (?1,?1,?2,?3,?4,?5,?6,?7)",
        )?;
        for (c, args) in cpus.iter().zip(&args) {
            stmt.execute(params![
                c.ucpu,
                c.cpu,
                c.cluster_id,
                sink.strings.get(c.processor),
                c.machine,
                c.capacity,
                args
            ])?;
        }
        let mut stmt = self
            .conn
            .prepare("INSERT INTO cpu_available_frequencies (cpu, freq, ucpu) VALUES (?1,?2,?3)")?;
        for c in &cpus {
            for freq in &c.frequencies {
                stmt.execute(params![c.cpu, freq, c.ucpu])?;
            }
        }
        Ok(())
    }

    fn stats(&mut self, sink: &Sink) -> Result<(), DbError> {
        let mut stmt = self.conn.prepare(
            "INSERT INTO stats (name, idx, severity, source, value, description, machine_id,
             trace_id) VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
        )?;
        let mut rows: Vec<_> = sink.stats.iter().collect();
        rows.sort_by_key(|(k, _)| (k.name, k.machine, k.file, k.idx));
        let mut seen = std::collections::HashSet::new();
        for (key, value) in rows {
            seen.insert(key.name);
            let def = stats::lookup(key.name);
            stmt.execute(params![
                key.name,
                key.idx,
                def.map_or("error", |d| d.severity.as_str()),
                def.map_or("analysis", |d| d.source.as_str()),
                value,
                def.map(|d| d.description),
                nullable_machine(key.machine),
                nullable_file(key.file)
            ])?;
        }
        // Single stats nobody incremented still exist, at 0, as in Trace Processor.
        for def in stats::STATS {
            if def.indexed || seen.contains(def.name) {
                continue;
            }
            stmt.execute(params![
                def.name,
                Option::<i64>::None,
                def.severity.as_str(),
                def.source.as_str(),
                0,
                def.description,
                0,
                0
            ])?;
        }
        Ok(())
    }

    fn metadata(&mut self, facts: &ImportFacts, sink: &Sink) -> Result<(), DbError> {
        let mut stmt = self.conn.prepare(
            "INSERT INTO metadata (name, key_type, int_value, str_value, machine_id, trace_id)
             VALUES (?1, 'single', ?2, ?3, ?4, ?5)",
        )?;
        for (name, machine, file, value) in &sink.metadata {
            let (int, string) = match value {
                MetaValue::Int(v) => (Some(*v), None),
                MetaValue::Str(s) => (None, Some(s.as_str())),
            };
            // Machine facts belong to a machine; trace facts to a trace file.
            let machine_scoped = name.starts_with("system_")
                || name.starts_with("android_")
                || name.starts_with("timezone");
            stmt.execute(params![
                name,
                int,
                string,
                nullable_machine(*machine),
                if machine_scoped {
                    None
                } else {
                    nullable_file(*file)
                }
            ])?;
        }
        if let Some(clock) = facts.trace_time_clock {
            stmt.execute(params![
                "trace_time_clock_id",
                clock,
                Option::<&str>::None,
                Option::<i64>::None,
                Option::<i64>::None
            ])?;
        }
        Ok(())
    }

    fn files_and_snapshots(&mut self, facts: &ImportFacts) -> Result<(), DbError> {
        let mut stmt = self.conn.prepare(
            "INSERT INTO __intrinsic_trace_file (id, parent_id, name, size, trace_type,
             processing_order, is_container) VALUES (?1,?2,?3,?4,?5,?6,?7)",
        )?;
        for (id, f) in facts.files.iter().enumerate() {
            stmt.execute(params![
                id as i64,
                opt_u32(f.parent_id),
                f.name,
                f.size as i64,
                f.trace_type,
                opt_u32(f.processing_order),
                f.is_container
            ])?;
        }
        let mut stmt = self.conn.prepare(
            "INSERT INTO clock_snapshot (ts, clock_id, clock_name, clock_value, snapshot_id,
             machine_id) VALUES (?1,?2,?3,?4,?5,?6)",
        )?;
        for s in &facts.snapshots {
            stmt.execute(params![
                s.ts,
                s.clock_id,
                clocks::name(s.clock_id).filter(|_| (1..=6).contains(&s.clock_id)),
                s.clock_value,
                s.snapshot_id,
                nullable_machine(s.machine)
            ])?;
        }
        self.clock_report(facts)
    }

    fn clock_report(&mut self, facts: &ImportFacts) -> Result<(), DbError> {
        let report = &facts.report;
        let mut stmt = self.conn.prepare(
            "INSERT INTO __sextant_clock_node (id, machine_id, clock_id, clock_name, file_id,
             sequence_id, label, is_trace_time) VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
        )?;
        for (id, n) in report.nodes.iter().enumerate() {
            let c = n.clock;
            stmt.execute(params![
                id as i64,
                nullable_machine(c.machine),
                c.clock_id,
                clocks::name(c.clock_id),
                (c.file != 0 || c.clock_id == clocks::TRACE_FILE).then_some(c.file),
                (c.sequence != 0).then_some(c.sequence),
                n.label,
                n.is_trace_time
            ])?;
        }
        let mut stmt = self.conn.prepare(
            "INSERT INTO __sextant_clock_edge (src_node_id, dst_node_id, source, offset_ns,
             readings, file_id) VALUES (?1,?2,?3,?4,?5,?6)",
        )?;
        for e in &report.edges {
            stmt.execute(params![
                e.src,
                e.dst,
                e.source,
                e.offset_ns,
                e.readings,
                e.file.and_then(nullable_file)
            ])?;
        }
        let mut stmt = self.conn.prepare(
            "INSERT INTO __sextant_file_placement (file_id, machine_id, node_id, status, path,
             events, dropped) VALUES (?1,?2,?3,?4,?5,?6,?7)",
        )?;
        for f in &report.files {
            stmt.execute(params![
                f.file,
                nullable_machine(f.machine),
                f.node,
                f.status,
                f.path,
                f.events as i64,
                f.dropped as i64
            ])?;
        }
        let mut stmt = self.conn.prepare(
            "INSERT INTO __sextant_trace_time_candidate (node_id, label, is_current,
             dropped_events) VALUES (?1,?2,?3,?4)",
        )?;
        for c in &facts.candidates {
            stmt.execute(params![c.node, c.label, c.current, c.dropped_events as i64])?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MachineRow;

    #[test]
    fn a_checkpoint_is_visible_to_readers_before_the_import_ends() {
        let path = crate::database::temp_path();
        let conn = create(&path).expect("create");
        let mut ticks = Vec::new();
        let mut tick = |rows: u64| {
            ticks.push(rows);
            true
        };
        let mut writer = begin(&conn, &mut tick).expect("begin");
        let sink = Sink::new();
        let mut tables = Tables::default();
        tables.machines.push(MachineRow {
            raw_id: 0,
            info: Default::default(),
        });
        writer.checkpoint(&tables, &sink);
        // A second checkpoint rewrites the small tables rather than duplicating them.
        writer.checkpoint(&tables, &sink);
        let reader = open_read_only(&path).expect("reader");
        let machines: i64 = reader
            .query_row("SELECT count(*) FROM machine", [], |r| r.get(0))
            .expect("count");
        assert_eq!(machines, 1);
        drop(reader);
        drop(writer);
        assert_eq!(ticks.len(), 2);
        drop(conn);
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
}
