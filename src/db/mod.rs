//! SQLite: the schema, the bulk writer on the import connection, read-only query
//! connections with Perfetto's SQL functions, and `trace_processor_shell`-style CSV output.

mod annotated;
mod bulk;
mod flamegraph;
mod ftrace_text;
mod functions;
mod heap_graph;
mod layout;
mod output;
mod perfetto_fn;
mod profile;
pub mod read;
pub mod schema;
mod slice_fns;
mod span_join;
mod sql_extras;
mod table_fn;
mod whole;
mod writer;

pub use writer::TableWriter;

pub use functions::register_functions;

pub use output::{run_script, split_statements, translate, QueryError};

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::clock::report::{CandidateRow, Report, SnapshotRow};

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
    /// The row id: archive order (the import's own file index is processing order).
    pub id: u32,
    /// The parent's row id.
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
    conn.execute_batch(schema::INDEXES)?;
    conn.execute_batch(profile::TABLES)?;
    conn.execute_batch(schema::VIEWS)?;
    conn.execute_batch(profile::VIEWS)?;
    conn.execute_batch(profile::STACK_SAMPLE_VIEWS)?;
    conn.execute_batch(profile::MODULE_VIEWS)?;
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
    TableWriter::new(conn, live, tick)
}

/// Commits the bulk load, then builds the profile tables' indexes and leaves the database
/// in WAL mode with nothing in the WAL, whichever way it was written.
pub fn commit(conn: &Connection, live: bool) -> Result<(), DbError> {
    conn.execute_batch("COMMIT")?;
    conn.execute_batch(profile::INDEXES)?;
    if live {
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    } else {
        conn.execute_batch("PRAGMA journal_mode = WAL")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::writer::REORDER_WINDOW;
    use super::*;
    use crate::ir::{Arg, ArgValue, ArgsRef, Sink, StrId, NO_ARGS, NO_FILE, NO_TS, NULL_STR};
    use crate::model::{CounterRow, MachineRow, RowSink, SliceRow, Tables};

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

    /// Runs `f` on a thread of its own and fails, naming `what`, if it has not returned
    /// within a minute (a hang fails the test instead of hanging `cargo test`).
    fn within_a_minute<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{what} did not finish within a minute"))
    }

    /// Tables several batches long in every finishing table, each row with an arg set of
    /// its own, written with live checkpoints: every row arrives, every arg set resolves.
    #[test]
    fn finishing_tables_far_larger_than_a_batch_are_written_whole() {
        use crate::ir::ProtoContent;
        use crate::model::{
            FlowRow, ImportLogRow, ProcessRow, StateRow, ThreadRow, TrackEventType, TrackRow,
        };
        let n = 3 * bulk::BATCH_ROWS + 17;
        for live in [true, false] {
            let counts = within_a_minute("the import", move || {
                let path = crate::database::temp_path();
                let conn = create(&path, live).expect("create");
                let mut tick = |_| true;
                let mut writer = begin(conn, live, &mut tick).expect("begin");
                let mut sink = Sink::new();
                let key = sink.intern("k");
                let mut set = |v: usize| {
                    sink.args.push(&[Arg {
                        flat_key: key,
                        key,
                        value: ArgValue::Int(v as i64),
                    }])
                };
                let mut tables = Tables::default();
                tables.machines.push(MachineRow {
                    raw_id: 0,
                    info: Default::default(),
                });
                let mut contents = Vec::new();
                for i in 0..n {
                    let mut p = ProcessRow::new(i as i64, 0);
                    p.extra_args.push((key, ArgValue::Int(i as i64)));
                    tables.processes.push(p);
                    let mut t = ThreadRow::new(i as i64, 0);
                    t.extra_args.push((key, ArgValue::Int(-(i as i64) - 1)));
                    tables.threads.push(t);
                    let mut tr = TrackRow::new(NULL_STR, "thread", 0, TrackEventType::Slice);
                    tr.utid = Some(i as u32);
                    tables.tracks.push(tr);
                    tables.flows.push(FlowRow {
                        slice_out: 0,
                        slice_in: 1,
                        trace_id: None,
                        args: set(n + i),
                    });
                    tables.import_logs.push(ImportLogRow {
                        ts: Some(i as i64),
                        byte_offset: None,
                        name: "flow_no_enclosing_slice",
                        file: 0,
                        args: set(2 * n + i),
                    });
                    tables.states.push(StateRow {
                        ts: i as i64,
                        dur: 1,
                        track: 0,
                        category: NULL_STR,
                        value: NULL_STR,
                        args: set(3 * n + i),
                    });
                    contents.push(ProtoContent {
                        file: 0,
                        path: "TracePacket.track_event",
                        category: NULL_STR,
                        name: NULL_STR,
                        annotation: set(4 * n + i),
                        size: 1,
                        count: 1,
                    });
                }
                sink.proto_content = contents;
                writer.checkpoint(&tables, &sink);
                writer.checkpoint(&tables, &sink);
                let conn = writer
                    .finish(&tables, &sink, &ImportFacts::default())
                    .expect("finish");
                commit(&conn, live).expect("commit");
                drop(conn);
                let reader = open_read_only(&path).expect("reader");
                let count =
                    |sql: &str| -> i64 { reader.query_row(sql, [], |r| r.get(0)).expect(sql) };
                let counts = [
                    "SELECT count(*) FROM process",
                    "SELECT count(*) FROM thread",
                    "SELECT count(*) FROM track",
                    "SELECT count(*) FROM flow",
                    "SELECT count(*) FROM _trace_import_logs",
                    "SELECT count(*) FROM __intrinsic_state",
                    "SELECT count(*) FROM __sextant_proto_content",
                    // Every arg set named anywhere has its rows.
                    "SELECT count(DISTINCT arg_set_id) FROM args",
                    "SELECT count(*) FROM (SELECT arg_set_id FROM process UNION ALL
                       SELECT arg_set_id FROM thread UNION ALL
                       SELECT dimension_arg_set_id FROM __intrinsic_track UNION ALL
                       SELECT arg_set_id FROM flow UNION ALL
                       SELECT arg_set_id FROM _trace_import_logs UNION ALL
                       SELECT arg_set_id FROM __intrinsic_state UNION ALL
                       SELECT arg_set_id FROM __sextant_proto_content) s
                     WHERE s.arg_set_id NOT IN (SELECT arg_set_id FROM args)",
                ]
                .map(count);
                drop(reader);
                remove_db(&path);
                counts
            });
            let n = n as i64;
            // Tracks share dimension sets with nothing else; the other sets are all
            // different: 2n identity sets + n track sets + 4n finishing sets.
            assert_eq!(counts, [n, n, n, n, n, n, n, 7 * n, 0], "live: {live}");
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
                thread_ic: NO_TS,
                thread_ic_delta: NO_TS,
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
