//! `thread_state` built from the scheduler's events, in proto ftrace and systrace text
//! (traces copied from the reference implementation's conformance cases into
//! tests/data/ftrace).

use std::path::Path;

use rusqlite::Connection;

mod common;

use common::{rows, table, TempFile};

fn import(name: &str) -> (Connection, TempFile) {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/ftrace")
        .join(name);
    let db = TempFile::new(&format!("{name}.sqlite"));
    sextant::import::import_path(&trace, db.path())
        .unwrap_or_else(|e| panic!("importing {name} failed: {e}"));
    let conn = sextant::db::open_read_only(db.path())
        .unwrap_or_else(|e| panic!("opening the database of {name} failed: {e}"));
    (conn, db)
}

const STATES: &str = "
    select ts, dur, cpu, t.tid, state, io_wait, blocked_function, waker_utid, irq_context
    from thread_state s join thread t using (utid)
    order by s.id";

#[test]
fn switches_open_and_close_rows_and_blocked_reasons_name_the_kernel_function() {
    let (conn, _db) = import("sched_blocked_reason_symbolized.pftrace");
    let got = rows(&conn, STATES);
    // The first rows: the three cpus switch from idle to 100, 102, 105 (idle gets no
    // rows); 102 and 105 then block in D, and the blocked reasons name the function
    // through the sequence's interned kernel symbols.
    let want = table(&[
        [
            "50", "999950", "1", "100", "Running", "NULL", "NULL", "NULL", "NULL",
        ],
        [
            "60", "998940", "2", "102", "Running", "NULL", "NULL", "NULL", "NULL",
        ],
        [
            "60", "998940", "3", "105", "Running", "NULL", "NULL", "NULL", "NULL",
        ],
        [
            "999000",
            "-1",
            "NULL",
            "102",
            "D",
            "1",
            "filemap_fault",
            "NULL",
            "NULL",
        ],
        [
            "999000", "3000", "2", "103", "Running", "NULL", "NULL", "NULL", "NULL",
        ],
        [
            "999000", "-1", "NULL", "105", "D", "1", "some_fn", "NULL", "NULL",
        ],
        [
            "1000000",
            "1000",
            "NULL",
            "100",
            "D",
            "0",
            "filemap_fault",
            "NULL",
            "NULL",
        ],
    ]);
    assert_eq!(got[..want.len()], want[..]);
    // A caller missing from the interned symbols leaves the function unknown; a symbol
    // interned again after the sequence was reset takes the new name.
    let d_rows = rows(
        &conn,
        "select ts, t.tid, blocked_function from thread_state join thread t using (utid)
         where state = 'D' and ts >= 1001000 order by ts",
    );
    assert_eq!(
        d_rows,
        table(&[
            ["1001000", "101", "NULL"],
            ["1002000", "103", "NULL"],
            ["1003000", "100", "some_other_fn"],
            ["1005000", "104", "filemap_fault"],
        ])
    );
}

#[test]
fn systrace_blocked_reason_sets_io_wait_and_caller() {
    let (conn, _db) = import("sched_blocked.systrace");
    assert_eq!(
        rows(
            &conn,
            "select ts, t.tid, io_wait, blocked_function from thread_state
             join thread t using (utid) where state = 'D' order by ts"
        ),
        table(&[
            ["20258854000", "269", "0", "worker_thread+0x534/0x820"],
            [
                "21123838000",
                "2172",
                "1",
                "__filemap_fdatawait_range+0x134/0x150"
            ],
        ])
    );
}

#[test]
fn a_new_task_starts_runnable_woken_by_its_creator() {
    let (conn, _db) = import("task_newtask.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select s.ts, t.tid, s.state, w.tid, s.irq_context from thread_state s
             join thread t using (utid) join thread w on w.utid = s.waker_utid order by s.ts"
        ),
        table(&[
            ["201315132677", "3294", "R", "518", "0"],
            ["201319417828", "3295", "R", "518", "0"],
        ])
    );
}
