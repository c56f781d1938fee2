//! SQLite: the schema, the bulk writer on the import connection, read-only query
//! connections with Perfetto's SQL functions, and `trace_processor_shell`-style CSV output.

mod bulk;
mod ftrace_text;
mod functions;
mod layout;
mod output;
pub mod schema;
mod span_join;

pub use functions::register_functions;

pub use output::{run_script, split_statements, translate, QueryError};

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{params, Connection, OpenFlags};

use bulk::{Destination, Message, Pipe, Rows, Table};

use crate::clock::report::{CandidateRow, Report, SnapshotRow};
use crate::ir::{
    clocks, Arg, ArgValue, ArgsRef, FxHashMap, MachineId, MetaValue, Sink, StrId, NO_ARGS, NO_FILE,
    NO_MACHINE, NO_TS,
};
use crate::model::{
    CounterRow, FtraceEventRow, RowSink, SchedRow, SliceRow, Tables, ThreadStateRow,
};
use crate::stats;

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("the import was cancelled")]
    Cancelled,
    #[error("the database writer thread failed")]
    WriterFailed,
    #[error("cannot start the database writer thread: {0}")]
    Thread(std::io::Error),
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

/// Opens a fresh database file for writing, tuned for one bulk load. A `live` one is read
/// while it is written (see [`begin`]).
pub fn create(path: &Path, live: bool) -> Result<Connection, DbError> {
    if path.exists() {
        let _ = std::fs::remove_file(path);
    }
    for suffix in ["-wal", "-shm"] {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        let _ = std::fs::remove_file(side);
    }
    let conn = Connection::open(path)?;
    // Nothing needs to survive a crash, so no syncing.
    conn.execute_batch(
        "PRAGMA page_size = 8192; PRAGMA synchronous = OFF; PRAGMA cache_size = -32768;
         PRAGMA temp_store = MEMORY;",
    )?;
    if live {
        // WAL lets read-only connections (the TUI) see each committed batch while the
        // import writes.
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 10000;")?;
    } else {
        // Nobody reads it before it is complete: no journal, every page written once
        // (WAL writes each twice). [`commit`] turns WAL on at the end.
        conn.execute_batch("PRAGMA journal_mode = OFF;")?;
    }
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

/// Starts the bulk load on `conn` (made by [`create`] with the same `live`). Rows are written
/// by a second thread while the model builds them. When `live`, every model checkpoint (see
/// [`RowSink::checkpoint`]) commits what is written so far; `tick` hears the rows written
/// so far at each checkpoint, and returning false cancels the import.
pub fn begin(
    conn: Connection,
    live: bool,
    tick: &mut dyn FnMut(u64) -> bool,
) -> Result<TableWriter<'_>, DbError> {
    conn.execute_batch("BEGIN")?;
    let dest = Arc::new(Mutex::new(Destination::new(conn)));
    let pipe = bulk::spawn(dest.clone())?;
    Ok(TableWriter {
        dest,
        pipe: Some(pipe),
        live,
        slices: Rows::new(Table::Slice),
        counters: Rows::new(Table::Counter),
        sched: Rows::new(Table::Sched),
        thread_states: Rows::new(Table::ThreadState),
        ftrace_events: Rows::new(Table::FtraceEvent),
        args: Rows::new(Table::Args),
        slice_files: Rows::new(Table::SliceFile),
        waiting: VecDeque::new(),
        next_slice: 0,
        track_files: Vec::new(),
        error: None,
        rows: 0,
        tick,
        next_arg_row: 0,
        sets_by_content: std::collections::HashMap::new(),
        sets_by_ref: FxHashMap::default(),
    })
}

/// Commits the bulk load, then builds indexes and leaves the database in WAL mode with
/// nothing in the WAL, whichever way it was written.
pub fn commit(conn: &Connection, live: bool) -> Result<(), DbError> {
    conn.execute_batch("COMMIT")?;
    conn.execute_batch(schema::INDEXES)?;
    if live {
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    } else {
        conn.execute_batch("PRAGMA journal_mode = WAL")?;
    }
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

/// Slices that ended before an earlier-begun one wait for it at most this many ids, so
/// rows reach SQLite in id order (appending is its cheapest insert).
const REORDER_WINDOW: usize = 1 << 16;

/// Writes rows of the bulk load: the big tables as the model streams them ([`RowSink`]),
/// handed in batches to the writer thread; the small ones at the end.
pub struct TableWriter<'t> {
    dest: Arc<Mutex<Destination>>,
    /// The writer thread, until the stream ends.
    pipe: Option<Pipe>,
    live: bool,
    slices: Rows,
    counters: Rows,
    sched: Rows,
    thread_states: Rows,
    ftrace_events: Rows,
    args: Rows,
    slice_files: Rows,
    /// Slices ended, waiting for the ones before them: `waiting[i]` is slice `next_slice + i`.
    waiting: VecDeque<Option<(SliceRow, Option<i64>)>>,
    next_slice: u32,
    /// Per track, the file its first written slice came from (`NO_FILE` before any).
    track_files: Vec<u32>,
    /// The first error while streaming (the model cannot take errors mid-event).
    error: Option<DbError>,
    rows: u64,
    tick: &'t mut dyn FnMut(u64) -> bool,
    next_arg_row: i64,
    /// Identical arg sets share one id.
    /// Keyed by values from the trace: SipHash, so a crafted file cannot flood it.
    sets_by_content: std::collections::HashMap<Vec<(StrId, StrId, u8, u64)>, i64>,
    sets_by_ref: FxHashMap<ArgsRef, i64>,
}

impl RowSink for TableWriter<'_> {
    fn slice(&mut self, id: u32, s: &SliceRow, sink: &Sink) {
        self.stream(|w| w.write_slice(id, s, sink));
    }
    fn counter(&mut self, id: u32, c: &CounterRow, sink: &Sink) {
        self.stream(|w| w.write_counter(id, c, sink));
    }
    fn sched(&mut self, id: u32, s: &SchedRow, sink: &Sink) {
        self.stream(|w| w.write_sched(id, s, sink));
    }
    fn thread_state(&mut self, id: u32, s: &ThreadStateRow, sink: &Sink) {
        self.stream(|w| w.write_thread_state(id, s, sink));
    }
    fn ftrace_event(&mut self, id: u32, e: &FtraceEventRow, sink: &Sink) {
        self.stream(|w| w.write_ftrace_event(id, e, sink));
    }
    fn checkpoint(&mut self, tables: &Tables, sink: &Sink) {
        if self.error.is_some() {
            return;
        }
        let r = if self.live {
            self.publish(tables, sink)
        } else {
            Ok(())
        };
        if let Err(e) = r {
            self.error = Some(e);
        } else if !(self.tick)(self.rows) {
            self.error = Some(DbError::Cancelled);
        }
    }
}

impl Drop for TableWriter<'_> {
    fn drop(&mut self) {
        // An import that failed or was cancelled still stops its writer thread.
        if let Some(pipe) = self.pipe.take() {
            drop(pipe.tx);
            let _ = pipe.thread.join();
        }
    }
}

impl TableWriter<'_> {
    /// Writes one streamed row, unless an earlier one failed: the model cannot stop
    /// mid-event, so the first error waits for [`TableWriter::finish`].
    fn stream(&mut self, write: impl FnOnce(&mut Self) -> Result<(), DbError>) {
        if self.error.is_some() {
            return;
        }
        match write(self) {
            Ok(()) => self.rows += 1,
            Err(e) => self.error = Some(e),
        }
    }

    /// Hands a batch to the writer thread, or writes it here once the thread is done.
    fn send(&mut self, rows: Rows) -> Result<(), DbError> {
        if rows.is_empty() {
            return Ok(());
        }
        match &self.pipe {
            Some(pipe) => pipe
                .tx
                .send(Message::Rows(rows))
                .map_err(|_| DbError::WriterFailed),
            None => bulk::lock(&self.dest)?.insert(&rows),
        }
    }

    /// Sends every batch, full or not.
    fn flush(&mut self) -> Result<(), DbError> {
        for table in [
            Table::Slice,
            Table::Counter,
            Table::Sched,
            Table::ThreadState,
            Table::FtraceEvent,
            Table::Args,
            Table::SliceFile,
        ] {
            let rows = self.batch(table).take();
            self.send(rows)?;
        }
        Ok(())
    }

    fn batch(&mut self, table: Table) -> &mut Rows {
        match table {
            Table::Slice => &mut self.slices,
            Table::Counter => &mut self.counters,
            Table::Sched => &mut self.sched,
            Table::ThreadState => &mut self.thread_states,
            Table::FtraceEvent => &mut self.ftrace_events,
            Table::Args => &mut self.args,
            Table::SliceFile => &mut self.slice_files,
        }
    }

    /// Sends a table's batch once it is full.
    fn send_if_full(&mut self, table: Table) -> Result<(), DbError> {
        let batch = self.batch(table);
        if batch.is_full() {
            let rows = batch.take();
            self.send(rows)?;
        }
        Ok(())
    }

    /// Waits until the writer thread has written everything sent so far.
    fn sync(&mut self) -> Result<(), DbError> {
        let Some(pipe) = &self.pipe else {
            return Ok(());
        };
        let (done, wait) = std::sync::mpsc::sync_channel(1);
        pipe.tx
            .send(Message::Sync(done))
            .map_err(|_| DbError::WriterFailed)?;
        wait.recv().map_err(|_| DbError::WriterFailed)
    }

    /// Ends the writer thread, with its error if it had one.
    fn stop_writer(&mut self) -> Result<(), DbError> {
        let Some(pipe) = self.pipe.take() else {
            return Ok(());
        };
        drop(pipe.tx);
        pipe.thread.join().map_err(|_| DbError::WriterFailed)?
    }

    /// Commits what is written so far, with the machine, process, thread and track rows as
    /// the model has them now, so a reader sees a consistent partial trace.
    fn publish(&mut self, tables: &Tables, sink: &Sink) -> Result<(), DbError> {
        self.release_waiting(sink, usize::MAX)?;
        self.flush()?;
        if let Err(e) = self.sync() {
            // The thread's own error says more than a closed channel.
            self.stop_writer()?;
            return Err(e);
        }
        let dest = self.dest.clone();
        let mut dest = bulk::lock(&dest)?;
        Self::machines(&dest.conn, tables)?;
        self.processes(&dest.conn, tables, sink)?;
        self.threads(&dest.conn, tables, sink)?;
        self.tracks(&dest.conn, tables, sink)?;
        dest.insert(&self.args.take())?;
        dest.conn.execute_batch("COMMIT; BEGIN")?;
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
            let row = &mut self.args;
            row.int(self.next_arg_row);
            row.int(set_id);
            row.text(strings.get(a.flat_key));
            row.text(strings.get(a.key));
            row.opt_int(int);
            row.text(string);
            row.real(real);
            row.text(Some(ty));
            row.text(Some(&display));
            self.next_arg_row += 1;
        }
        self.sets_by_content.insert(key, set_id);
        self.send_if_full(Table::Args)?;
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
    ) -> Result<Connection, DbError> {
        if let Some(e) = self.error.take() {
            if matches!(e, DbError::WriterFailed) {
                // The thread's own error says more than a closed channel.
                self.stop_writer()?;
            }
            return Err(e);
        }
        self.release_waiting(sink, usize::MAX)?;
        self.flush()?;
        self.stop_writer()?;
        let dest = self.dest.clone();
        {
            let mut dest = bulk::lock(&dest)?;
            let conn = &dest.conn;
            Self::machines(conn, tables)?;
            self.processes(conn, tables, sink)?;
            self.threads(conn, tables, sink)?;
            self.tracks(conn, tables, sink)?;
            self.flows(conn, tables, sink)?;
            self.states(conn, tables, sink)?;
            self.proto_content(conn, sink)?;
            self.cpus(conn, tables, sink)?;
            self.import_logs(conn, tables, sink)?;
            Self::stats(conn, sink, facts)?;
            Self::trace_diagnostics(conn, sink)?;
            Self::metadata(conn, facts, sink)?;
            Self::files_and_snapshots(conn, facts)?;
            self.track_files(conn)?;
            let (start, end) = tables.trace_bounds();
            conn.execute(
                "INSERT INTO trace_bounds VALUES (?1, ?2)",
                params![start, end],
            )?;
            dest.insert(&self.args.take())?;
            dest.insert(&self.slice_files.take())?;
        }
        drop(self);
        let dest = Arc::try_unwrap(dest).map_err(|_| DbError::WriterFailed)?;
        let dest = dest.into_inner().map_err(|_| DbError::WriterFailed)?;
        Ok(dest.conn)
    }

    /// `__sextant_track_file`: the file of each track's first slice.
    fn track_files(&self, conn: &Connection) -> Result<(), DbError> {
        let mut stmt =
            conn.prepare("INSERT INTO __sextant_track_file (track_id, file_id) VALUES (?1, ?2)")?;
        for (track, &file) in self.track_files.iter().enumerate() {
            if file != NO_FILE {
                stmt.execute(params![track as i64, file])?;
            }
        }
        Ok(())
    }

    fn states(&mut self, conn: &Connection, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        let mut rows = Vec::with_capacity(t.states.len());
        for s in &t.states {
            rows.push((s, self.arg_set(s.args, sink)?));
        }
        let mut stmt = conn.prepare(
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

    fn proto_content(&mut self, conn: &Connection, sink: &Sink) -> Result<(), DbError> {
        let mut rows = Vec::with_capacity(sink.proto_content.len());
        for c in &sink.proto_content {
            rows.push((c, self.arg_set(c.annotation, sink)?));
        }
        let mut stmt = conn.prepare(
            "INSERT INTO __sextant_proto_content (id, path, size, count, arg_set_id, trace_id)
             VALUES (?1,?2,?3,?4,?5,?6)",
        )?;
        for (id, (c, args)) in rows.into_iter().enumerate() {
            stmt.execute(params![
                id as i64,
                c.path,
                c.size as i64,
                c.count as i64,
                args,
                c.file
            ])?;
        }
        Ok(())
    }

    fn machines(conn: &Connection, t: &Tables) -> Result<(), DbError> {
        // Rewritten whole at each checkpoint and at the end.
        conn.execute("DELETE FROM machine", [])?;
        let mut stmt = conn.prepare(
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
                i.system_ram_bytes.map(|b| b.saturating_add(1 << 29) >> 30),
                label_index
            ])?;
        }
        Ok(())
    }

    fn processes(&mut self, conn: &Connection, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        // Rewritten whole at each checkpoint and at the end.
        conn.execute("DELETE FROM process", [])?;
        let mut stmt = conn.prepare(
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

    fn threads(&mut self, conn: &Connection, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        // Rewritten whole at each checkpoint and at the end.
        conn.execute("DELETE FROM thread", [])?;
        let mut stmt = conn.prepare(
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

    fn tracks(&mut self, conn: &Connection, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        // Rewritten whole at each checkpoint and at the end.
        conn.execute("DELETE FROM __intrinsic_track", [])?;
        let mut stmt = conn.prepare(
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
            let dims = self.dimension_args(sink.args.get(tr.extra_dims), &dims, sink)?;
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
        extra: &[Arg],
        dims: &[(String, i64)],
        sink: &Sink,
    ) -> Result<Option<i64>, DbError> {
        if dims.is_empty() && extra.is_empty() {
            return Ok(None);
        }
        // Dimension keys are few and fixed; look them up without interning.
        let mut set = extra.to_vec();
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
        self.note_file(id, s)?;
        if id < self.next_slice {
            // It gave up waiting for this one: it goes in out of order.
            return self.queue_slice(id, s, args, sink);
        }
        let offset = (id - self.next_slice) as usize;
        if offset >= REORDER_WINDOW {
            self.release_waiting(sink, offset + 1 - REORDER_WINDOW)?;
        }
        let offset = (id - self.next_slice) as usize;
        if self.waiting.len() <= offset {
            self.waiting.resize(offset + 1, None);
        }
        self.waiting[offset] = Some((*s, args));
        while let Some(Some(_)) = self.waiting.front() {
            self.release_waiting(sink, 1)?;
        }
        Ok(())
    }

    /// Gives up waiting for the next `count` slice ids: those that ended are written, the
    /// others will be written out of order when they end.
    fn release_waiting(&mut self, sink: &Sink, count: usize) -> Result<(), DbError> {
        let mut released = 0;
        while released < count {
            let Some(waiting) = self.waiting.pop_front() else {
                break;
            };
            if let Some((row, args)) = waiting {
                self.queue_slice(self.next_slice, &row, args, sink)?;
            }
            self.next_slice += 1;
            released += 1;
        }
        if released < count && count != usize::MAX {
            let rest = u32::try_from(count - released).unwrap_or(u32::MAX);
            self.next_slice = self.next_slice.saturating_add(rest);
        }
        Ok(())
    }

    fn queue_slice(
        &mut self,
        id: u32,
        s: &SliceRow,
        args: Option<i64>,
        sink: &Sink,
    ) -> Result<(), DbError> {
        let row = &mut self.slices;
        row.int(id);
        row.int(s.ts);
        row.int(s.dur);
        row.int(s.track);
        row.text(sink.strings.get(s.category));
        row.text(sink.strings.get(s.name));
        row.int(s.depth);
        row.opt_int(s.parent);
        row.opt_int(args);
        row.opt_int((s.thread_ts != NO_TS).then_some(s.thread_ts));
        row.opt_int((s.thread_dur != NO_TS).then_some(s.thread_dur));
        self.send_if_full(Table::Slice)
    }

    /// Remembers the file a slice came from: once per track, and per slice for a slice
    /// from another file than its track's first.
    fn note_file(&mut self, id: u32, s: &SliceRow) -> Result<(), DbError> {
        if s.file == NO_FILE {
            return Ok(());
        }
        let track = s.track as usize;
        if self.track_files.len() <= track {
            self.track_files.resize(track + 1, NO_FILE);
        }
        let first = &mut self.track_files[track];
        if *first == NO_FILE {
            *first = s.file;
        } else if *first != s.file {
            self.slice_files.int(id);
            self.slice_files.int(s.file);
            self.send_if_full(Table::SliceFile)?;
        }
        Ok(())
    }

    fn write_counter(&mut self, id: u32, c: &CounterRow, sink: &Sink) -> Result<(), DbError> {
        let args = self.arg_set(c.args, sink)?;
        let row = &mut self.counters;
        row.int(id);
        row.int(c.ts);
        row.int(c.track);
        row.real(Some(c.value));
        row.opt_int(args);
        self.send_if_full(Table::Counter)
    }

    fn write_sched(&mut self, id: u32, s: &SchedRow, sink: &Sink) -> Result<(), DbError> {
        let row = &mut self.sched;
        row.int(id);
        row.int(s.ts);
        row.int(s.dur);
        row.int(s.cpu);
        row.int(s.utid);
        row.text(sink.strings.get(s.end_state));
        row.int(s.priority);
        row.int(s.ucpu);
        self.send_if_full(Table::Sched)
    }

    fn write_thread_state(
        &mut self,
        id: u32,
        s: &ThreadStateRow,
        sink: &Sink,
    ) -> Result<(), DbError> {
        let row = &mut self.thread_states;
        row.int(id);
        row.int(s.ts);
        row.int(s.dur);
        row.opt_int(s.cpu);
        row.int(s.utid);
        row.text(sink.strings.get(s.state));
        row.opt_int(s.io_wait);
        row.text(sink.strings.get(s.blocked_function));
        row.opt_int(s.waker_utid);
        row.opt_int(s.waker_id);
        row.opt_int(s.irq_context);
        row.opt_int(s.ucpu);
        self.send_if_full(Table::ThreadState)
    }

    fn write_ftrace_event(
        &mut self,
        id: u32,
        e: &FtraceEventRow,
        sink: &Sink,
    ) -> Result<(), DbError> {
        let args = self.arg_set(e.args, sink)?;
        let row = &mut self.ftrace_events;
        row.int(id);
        row.int(e.ts);
        row.text(sink.strings.get(e.name));
        row.int(e.cpu);
        row.int(e.utid);
        row.opt_int(args);
        row.opt_int(e.common_flags);
        row.int(e.ucpu);
        self.send_if_full(Table::FtraceEvent)
    }

    fn import_logs(&mut self, conn: &Connection, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        let mut stmt = conn.prepare(
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

    fn flows(&mut self, conn: &Connection, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        let mut stmt = conn.prepare(
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

    fn cpus(&mut self, conn: &Connection, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        let mut cpus: Vec<_> = t.cpus.iter().collect();
        cpus.sort_by_key(|c| c.ucpu);
        let mut args = Vec::with_capacity(cpus.len());
        for c in &cpus {
            args.push(self.arg_set(c.args, sink)?);
        }
        let mut stmt = conn.prepare(
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
        let mut stmt = conn
            .prepare("INSERT INTO cpu_available_frequencies (cpu, freq, ucpu) VALUES (?1,?2,?3)")?;
        for c in &cpus {
            for freq in &c.frequencies {
                stmt.execute(params![c.cpu, freq, c.ucpu])?;
            }
        }
        Ok(())
    }

    fn stats(conn: &Connection, sink: &Sink, facts: &ImportFacts) -> Result<(), DbError> {
        let contexts: Vec<_> = facts
            .report
            .files
            .iter()
            .map(|f| (f.machine, f.file))
            .collect();
        let mut stmt = conn.prepare(
            "INSERT INTO stats (name, key, idx, severity, source, value, description, machine_id,
             trace_id) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)",
        )?;
        for r in stats::rows(&sink.stats, &contexts) {
            stmt.execute(params![
                r.name,
                r.key,
                r.idx,
                r.severity,
                r.source,
                r.value,
                r.description,
                r.machine,
                r.file
            ])?;
        }
        Ok(())
    }

    fn trace_diagnostics(conn: &Connection, sink: &Sink) -> Result<(), DbError> {
        let mut stmt = conn.prepare(
            "INSERT INTO __intrinsic_trace_diagnostics (key, title, description, remediation,
             confidence, trace_id) VALUES (?1,?2,?3,?4,?5,?6)",
        )?;
        for d in &sink.diagnostics {
            stmt.execute(params![
                d.key,
                d.title,
                d.description,
                d.remediation,
                d.confidence,
                d.file
            ])?;
        }
        Ok(())
    }

    fn metadata(conn: &Connection, facts: &ImportFacts, sink: &Sink) -> Result<(), DbError> {
        let mut stmt = conn.prepare(
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

    fn files_and_snapshots(conn: &Connection, facts: &ImportFacts) -> Result<(), DbError> {
        let mut stmt = conn.prepare(
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
        let mut stmt = conn.prepare(
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
        Self::clock_report(conn, facts)
    }

    fn clock_report(conn: &Connection, facts: &ImportFacts) -> Result<(), DbError> {
        let report = &facts.report;
        let mut stmt = conn.prepare(
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
        let mut stmt = conn.prepare(
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
        let mut stmt = conn.prepare(
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
        let mut stmt = conn.prepare(
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
    use crate::ir::NULL_STR;
    use crate::model::MachineRow;

    #[test]
    fn a_checkpoint_is_visible_to_readers_before_the_import_ends() {
        let path = crate::database::temp_path();
        let conn = create(&path, true).expect("create");
        let mut ticks = Vec::new();
        let mut tick = |rows: u64| {
            ticks.push(rows);
            true
        };
        let mut writer = begin(conn, true, &mut tick).expect("begin");
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
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }

    fn remove_db(path: &Path) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }

    /// A slice read back: id, ts, dur, name, arg_set_id.
    type SliceFacts = (i64, i64, i64, String, Option<i64>);

    /// Streams `order` (slice ids as they end) with a few args and counters; returns the
    /// database's slices and the counter count.
    fn stream(order: &[u32], live: bool) -> (Vec<SliceFacts>, i64) {
        let path = crate::database::temp_path();
        let conn = create(&path, live).expect("create");
        let mut tick = |_| true;
        let mut writer = begin(conn, live, &mut tick).expect("begin");
        let mut sink = Sink::new();
        let names: Vec<StrId> = (0..7).map(|i| sink.intern(&format!("n{i}"))).collect();
        let key = sink.intern("k");
        let args: Vec<ArgsRef> = (0..3)
            .map(|v| {
                sink.args.push(&[Arg {
                    flat_key: key,
                    key,
                    value: ArgValue::Int(v),
                }])
            })
            .collect();
        let mut tables = Tables::default();
        for (n, &id) in order.iter().enumerate() {
            let row = SliceRow {
                ts: i64::from(id) * 10,
                dur: i64::from(id % 5),
                track: id % 3,
                category: NULL_STR,
                name: names[id as usize % names.len()],
                depth: 0,
                parent: None,
                args: if id % 1000 == 0 {
                    args[id as usize % 3]
                } else {
                    NO_ARGS
                },
                thread_ts: NO_TS,
                thread_dur: NO_TS,
                file: NO_FILE,
            };
            writer.slice(id, &row, &sink);
            let counter = CounterRow {
                ts: i64::from(id),
                track: 0,
                value: 0.5,
                args: NO_ARGS,
            };
            writer.counter(n as u32, &counter, &sink);
            if n % 50_000 == 0 {
                writer.checkpoint(&tables, &sink);
            }
        }
        tables.machines.clear();
        let conn = writer
            .finish(&tables, &sink, &ImportFacts::default())
            .expect("finish");
        commit(&conn, live).expect("commit");
        drop(conn);
        let reader = open_read_only(&path).expect("reader");
        let slices = reader
            .prepare("SELECT id, ts, dur, name, arg_set_id FROM slice ORDER BY id")
            .and_then(|mut st| {
                st.query_map([], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .expect("slices");
        let counters: i64 = reader
            .query_row("SELECT count(*) FROM counter", [], |r| r.get(0))
            .expect("counters");
        drop(reader);
        remove_db(&path);
        (slices, counters)
    }

    #[test]
    fn slices_ending_in_any_order_are_all_written_with_their_ids() {
        let n: u32 = 3 * REORDER_WINDOW as u32;
        // Slice 0 stays open to the end (past the reorder window); the others end in
        // nested pairs (the inner one first), as on a thread's stack.
        let mut order: Vec<u32> = (1..n)
            .collect::<Vec<_>>()
            .chunks(2)
            .flat_map(|c| c.iter().rev().copied().collect::<Vec<_>>())
            .collect();
        order.push(0);
        for live in [false, true] {
            let (slices, counters) = stream(&order, live);
            assert_eq!(slices.len(), n as usize, "live: {live}");
            assert_eq!(counters, i64::from(n));
            for (i, (id, ts, dur, name, _)) in slices.iter().enumerate() {
                assert_eq!(*id, i as i64);
                assert_eq!(*ts, id * 10);
                assert_eq!(*dur, id % 5);
                assert_eq!(*name, format!("n{}", id % 7));
            }
            // Arg sets are numbered as slices end, whatever order rows reach SQLite in.
            let arg_ids: Vec<(i64, Option<i64>)> = slices
                .iter()
                .filter(|s| s.0 % 1000 == 0)
                .map(|s| (s.0, s.4))
                .take(4)
                .collect();
            assert_eq!(
                arg_ids,
                [
                    (0, Some(2)),
                    (1000, Some(0)),
                    (2000, Some(1)),
                    (3000, Some(2))
                ]
            );
        }
    }
}
