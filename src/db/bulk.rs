//! The bulk load's writer thread. The model builds rows on the import thread while this
//! thread inserts them: SQLite's per-row work is most of an import's write time, and the two
//! halves then run on two cores.
//!
//! Rows travel in batches of plain values (strings copied into one buffer per batch), so the
//! writer needs nothing of the parser's state. Inserts go through multi-row statements, and a
//! row whose id is one more than the table's largest gets its id from SQLite (NULL binds an
//! INTEGER PRIMARY KEY to the next rowid): that skips the search for the id's place in the
//! b-tree, which appending rows in id order does not need.

use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use rusqlite::Connection;

use super::DbError;

/// The tables filled while the model streams rows. Each has an integer id as first column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Table {
    Slice,
    Counter,
    Sched,
    ThreadState,
    FtraceEvent,
    Args,
    SliceFile,
}

const TABLES: usize = 7;

impl Table {
    fn index(self) -> usize {
        self as usize
    }

    /// `INSERT INTO table (columns) VALUES` and the number of columns.
    fn insert(self) -> (&'static str, usize) {
        match self {
            Table::Slice => (
                "INSERT INTO slice (id, ts, dur, track_id, category, name, depth, parent_id,
                 arg_set_id, thread_ts, thread_dur) VALUES ",
                11,
            ),
            Table::Counter => (
                "INSERT INTO counter (id, ts, track_id, value, arg_set_id) VALUES ",
                5,
            ),
            Table::Sched => (
                "INSERT INTO sched_slice (id, ts, dur, cpu, utid, end_state, priority, ucpu)
                 VALUES ",
                8,
            ),
            Table::ThreadState => (
                "INSERT INTO thread_state (id, ts, dur, cpu, utid, state, io_wait,
                 blocked_function, waker_utid, waker_id, irq_context, ucpu) VALUES ",
                12,
            ),
            Table::FtraceEvent => (
                "INSERT INTO __intrinsic_ftrace_event (id, ts, name, cpu, utid, arg_set_id,
                 common_flags, ucpu) VALUES ",
                8,
            ),
            Table::Args => (
                "INSERT INTO args (id, arg_set_id, flat_key, key, int_value, string_value,
                 real_value, value_type, display_value) VALUES ",
                9,
            ),
            Table::SliceFile => (
                "INSERT INTO __sextant_slice_file (slice_id, file_id) VALUES ",
                2,
            ),
        }
    }

    fn sql(self, rows: usize) -> String {
        let (head, columns) = self.insert();
        let one = format!("({})", vec!["?"; columns].join(","));
        format!("{head}{}", vec![one.as_str(); rows].join(","))
    }
}

/// Rows per multi-row INSERT: enough to spread a statement's fixed cost thin, few enough
/// to stay far below SQLite's parameter limit.
const ROWS_PER_STATEMENT: usize = 32;

/// Rows per batch sent to the writer thread.
pub(super) const BATCH_ROWS: usize = 4096;

#[derive(Clone, Copy, Debug)]
enum Value {
    Null,
    Int(i64),
    Real(f64),
    /// A range of the batch's text.
    Text(u32, u32),
}

/// A batch of rows of one table.
pub(super) struct Rows {
    table: Table,
    columns: usize,
    values: Vec<Value>,
    text: String,
}

impl Rows {
    pub(super) fn new(table: Table) -> Rows {
        let columns = table.insert().1;
        Rows {
            table,
            columns,
            values: Vec::with_capacity(BATCH_ROWS * columns),
            text: String::new(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub(super) fn is_full(&self) -> bool {
        self.values.len() >= BATCH_ROWS * self.columns
    }

    /// Hands over the rows, leaving an empty batch of the same table.
    pub(super) fn take(&mut self) -> Rows {
        std::mem::replace(self, Rows::new(self.table))
    }

    pub(super) fn int(&mut self, v: impl Into<i64>) {
        self.values.push(Value::Int(v.into()));
    }

    pub(super) fn opt_int(&mut self, v: Option<impl Into<i64>>) {
        self.values
            .push(v.map_or(Value::Null, |v| Value::Int(v.into())));
    }

    pub(super) fn real(&mut self, v: Option<f64>) {
        self.values.push(v.map_or(Value::Null, Value::Real));
    }

    pub(super) fn text(&mut self, v: Option<&str>) {
        let Some(v) = v else {
            self.values.push(Value::Null);
            return;
        };
        let start = self.text.len();
        self.text.push_str(v);
        // A batch's text stays far below 4 GiB (BATCH_ROWS rows of a few strings each).
        self.values
            .push(Value::Text(start as u32, (start + v.len()) as u32));
    }
}

/// The connection of the bulk load, with what the inserts know of each table.
pub(super) struct Destination {
    pub(super) conn: Connection,
    /// The largest id inserted per table.
    last_ids: [Option<i64>; TABLES],
}

impl Destination {
    pub(super) fn new(conn: Connection) -> Destination {
        // Two statements per streamed table, besides the few the small tables use.
        conn.set_prepared_statement_cache_capacity(32);
        Destination {
            conn,
            last_ids: [None; TABLES],
        }
    }

    pub(super) fn insert(&mut self, rows: &Rows) -> Result<(), DbError> {
        let table = rows.table;
        let last_id = &mut self.last_ids[table.index()];
        let mut chunks = rows.values.chunks_exact(rows.columns * ROWS_PER_STATEMENT);
        if chunks.len() > 0 {
            let mut stmt = self.conn.prepare_cached(&table.sql(ROWS_PER_STATEMENT))?;
            let mut binder = Binder::new(rows, ROWS_PER_STATEMENT);
            for chunk in &mut chunks {
                binder.bind(&mut stmt, chunk, last_id)?;
                stmt.raw_execute()?;
            }
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut stmt = self.conn.prepare_cached(&table.sql(1))?;
            let mut binder = Binder::new(rows, 1);
            for row in rest.chunks_exact(rows.columns) {
                binder.bind(&mut stmt, row, last_id)?;
                stmt.raw_execute()?;
            }
        }
        Ok(())
    }
}

/// Binds rows of a batch to one statement. A binding outlives an execution, so a
/// parameter whose value is the one bound last time (NULL columns, repeated names) is not
/// bound again.
struct Binder<'r> {
    rows: &'r Rows,
    bound: Vec<Option<Value>>,
}

impl<'r> Binder<'r> {
    fn new(rows: &'r Rows, rows_per_statement: usize) -> Binder<'r> {
        Binder {
            rows,
            // A statement fresh from the cache has nothing bound.
            bound: vec![None; rows.columns * rows_per_statement],
        }
    }

    fn same(&self, a: Value, b: Value) -> bool {
        let text = |start: u32, end: u32| self.rows.text.get(start as usize..end as usize);
        match (a, b) {
            (Value::Null, Value::Null) => true,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Real(a), Value::Real(b)) => a.to_bits() == b.to_bits(),
            (Value::Text(a0, a1), Value::Text(b0, b1)) => text(a0, a1) == text(b0, b1),
            _ => false,
        }
    }

    /// Binds one execution's rows; `last_id` is the table's largest id so far.
    fn bind(
        &mut self,
        stmt: &mut rusqlite::Statement<'_>,
        values: &[Value],
        last_id: &mut Option<i64>,
    ) -> rusqlite::Result<()> {
        for (i, &v) in values.iter().enumerate() {
            let mut v = v;
            if i % self.rows.columns == 0 {
                if let Value::Int(id) = v {
                    // NULL makes SQLite use the table's largest id + 1, this very id,
                    // without looking for its place (an empty table would start at 1: its
                    // first id is bound).
                    if last_id.is_some_and(|last| id == last + 1) {
                        v = Value::Null;
                    }
                    *last_id = Some(last_id.map_or(id, |last| last.max(id)));
                }
            }
            if self.bound[i].is_some_and(|b| self.same(b, v)) {
                continue;
            }
            let param = i + 1;
            match v {
                Value::Null => stmt.raw_bind_parameter(param, rusqlite::types::Null)?,
                Value::Int(v) => stmt.raw_bind_parameter(param, v)?,
                Value::Real(v) => stmt.raw_bind_parameter(param, v)?,
                Value::Text(start, end) => {
                    let s = self.rows.text.get(start as usize..end as usize);
                    stmt.raw_bind_parameter(param, s.unwrap_or(""))?
                }
            }
            self.bound[i] = Some(v);
        }
        Ok(())
    }
}

pub(super) enum Message {
    Rows(Rows),
    /// Answered once every message before it is written.
    Sync(SyncSender<()>),
}

/// Locks the destination; a writer that panicked holding it leaves it unusable.
pub(super) fn lock(dest: &Mutex<Destination>) -> Result<MutexGuard<'_, Destination>, DbError> {
    dest.lock().map_err(|_| DbError::WriterFailed)
}

/// The writer thread and the way to it.
pub(super) struct Pipe {
    pub(super) tx: SyncSender<Message>,
    pub(super) thread: JoinHandle<Result<(), DbError>>,
}

/// Starts the writer thread on `dest`.
pub(super) fn spawn(dest: Arc<Mutex<Destination>>) -> Result<Pipe, DbError> {
    // A few batches in flight keep both threads busy without holding many rows.
    let (tx, rx) = mpsc::sync_channel(4);
    let thread = std::thread::Builder::new()
        .name("db-writer".into())
        .spawn(move || run(&dest, rx))
        .map_err(DbError::Thread)?;
    Ok(Pipe { tx, thread })
}

fn run(dest: &Mutex<Destination>, rx: Receiver<Message>) -> Result<(), DbError> {
    for message in rx {
        match message {
            Message::Rows(rows) => lock(dest)?.insert(&rows)?,
            Message::Sync(done) => {
                let _ = done.send(());
            }
        }
    }
    Ok(())
}
