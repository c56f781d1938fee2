//! Real traces, as real tools wrote them (trimmed copies in `tests/data/real`, made by
//! `tools/trim_real.py`; the full files are checked against the reference by the CI
//! ratchet), and the fixtures:
//! - every one imports, live, within a minute: a watchdog on the test side fails naming the
//!   stage the import stopped in, instead of hanging `cargo test`;
//! - every input event a parser read is accounted for: read = imported + dropped, nothing
//!   unaccounted, and a file that dropped events says why in `stats`.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sextant::import::{Progress, Session};

use common::TempFile;

/// Every file under `dir`, recursively, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_none_or(|e| e != "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn real_traces() -> Vec<PathBuf> {
    files_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/real"))
}

/// The golden fixtures (traces with an `.expect.md` beside them).
fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    files_under(&dir)
        .into_iter()
        .filter(|p| p.parent() == Some(dir.as_path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let stem = name.split('.').next().unwrap_or("");
            dir.join(format!("{stem}.expect.md")).exists()
        })
        .collect()
}

/// How an import ended.
enum Ended {
    Imported(TempFile),
    Failed(String),
}

/// Imports `trace` live on a thread of its own; fails the test, naming the stage it was in,
/// if the import has not ended within a minute.
fn import_watched(trace: &Path) -> Ended {
    let last: Arc<Mutex<Option<Progress>>> = Arc::new(Mutex::new(None));
    let seen = last.clone();
    let db = TempFile::new("real.sqlite");
    let db_path = db.path().to_path_buf();
    let input = trace.to_path_buf();
    let (done, ended) = mpsc::channel();
    std::thread::spawn(move || {
        let never = AtomicBool::new(false);
        let mut progress = |p: &Progress| {
            if let Ok(mut slot) = seen.lock() {
                *slot = Some(p.clone());
            }
        };
        let result = sextant::source::open(&input)
            .map_err(|e| e.to_string())
            .and_then(|files| {
                Session::import(
                    &input.display().to_string(),
                    files,
                    &db_path,
                    &mut progress,
                    &never,
                )
                .map(drop)
                .map_err(|e| e.to_string())
            });
        let _ = done.send(result);
    });
    match ended.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(())) => Ended::Imported(db),
        Ok(Err(e)) => Ended::Failed(e),
        Err(_) => {
            let stage = last.lock().map(|p| format!("{:?}", *p)).unwrap_or_default();
            panic!(
                "{}: the import did not end within a minute; last progress: {stage}",
                trace.display()
            );
        }
    }
}

/// (file, read, imported, dropped, unaccounted, losses counted in stats for that file).
type Account = (String, i64, i64, i64, i64, i64);

fn accounts(db: &Path) -> Vec<Account> {
    let conn = sextant::db::open_read_only(db).expect("the database opens");
    let mut stmt = conn
        .prepare(
            "SELECT COALESCE(NULLIF(f.name, ''), 'file ' || e.file_id), e.read, e.imported,
                    e.dropped, e.unaccounted,
                    (SELECT COUNT(*)
                     FROM (SELECT * FROM stats UNION ALL SELECT * FROM sextant_stats) s
                     WHERE s.trace_id = e.file_id AND s.value > 0)
             FROM __sextant_file_events e
             LEFT JOIN __intrinsic_trace_file f ON f.id = e.file_id
             ORDER BY e.file_id",
        )
        .expect("query");
    stmt.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ))
    })
    .expect("rows")
    .collect::<Result<_, _>>()
    .expect("rows")
}

/// Losses and errors counted anywhere in an import.
fn losses_anywhere(db: &Path) -> i64 {
    let conn = sextant::db::open_read_only(db).expect("the database opens");
    conn.query_row(
        "SELECT COUNT(*) FROM (SELECT * FROM stats UNION ALL SELECT * FROM sextant_stats)
         WHERE value > 0 AND severity IN ('data_loss', 'error')",
        [],
        |r| r.get(0),
    )
    .expect("stats")
}

/// Checks the accounting of one import; returns the problems found.
fn check_accounting(trace: &Path, db: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let rows = accounts(db);
    if rows.is_empty() && losses_anywhere(db) == 0 {
        problems.push(format!(
            "{}: no events read at all, and no stat says why",
            trace.display()
        ));
    }
    for (file, read, imported, dropped, unaccounted, losses) in rows {
        let what = format!("{} ({file})", trace.display());
        if read != imported + dropped + unaccounted {
            problems.push(format!(
                "{what}: read {read} != imported {imported} + dropped {dropped} + unaccounted {unaccounted}"
            ));
        }
        if unaccounted != 0 {
            problems.push(format!(
                "{what}: {unaccounted} of {read} events were lost without a count"
            ));
        }
        if dropped > 0 && losses == 0 {
            problems.push(format!(
                "{what}: {dropped} events dropped, but no stat of the file says so"
            ));
        }
    }
    problems
}

fn run_all(traces: &[PathBuf], may_fail: &[&str]) {
    assert!(!traces.is_empty());
    let mut problems = Vec::new();
    for trace in traces {
        match import_watched(trace) {
            Ended::Imported(db) => problems.extend(check_accounting(trace, db.path())),
            Ended::Failed(e) => {
                let name = trace.display().to_string();
                if !may_fail.iter().any(|m| name.ends_with(m)) {
                    problems.push(format!("{name}: the import failed: {e}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_real_trace_imports_in_time_and_accounts_for_every_event() {
    // The reference refuses these too (check_real.py's summaries say `fails`).
    run_all(
        &real_traces(),
        &["android_systrace.html", "fuchsia_trace.json.gz"],
    );
}

#[test]
fn every_fixture_accounts_for_every_event() {
    run_all(&fixtures(), &[]);
}
