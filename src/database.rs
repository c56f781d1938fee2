//! Where an import's database lives: a file given with `-o`, an existing Sextant database
//! opened as it is, or a temporary file removed when the session ends.
//!
//! A temporary database is a registered [`TempPath`]: it and SQLite's side files go on
//! every exit (see [`crate::cleanup`]). An `-o` output is written beside its destination
//! under a hidden temporary name and renamed into place only when complete, so an
//! interrupted import leaves neither a half-written output nor its temporary file (and an
//! older file at that path stays as it was).

use std::path::{Path, PathBuf};

use crate::cleanup::{self, TempPath};
use crate::import::{self, ImportError, ImportSummary};

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error("cannot write the database {}: {error}", path.display())]
    Create {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot finish the database {}: {error}", path.display())]
    Finish {
        path: PathBuf,
        error: rusqlite::Error,
    },
    #[error("cannot move the finished database into place at {}: {error}", path.display())]
    Rename {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// A database file; a temporary one is removed, with its side files, on drop.
#[derive(Debug)]
pub struct Database {
    pub path: PathBuf,
    _temporary: Option<TempPath>,
}

/// A fresh temporary path for a database (not registered for removal: see [`TempPath`]).
pub fn temp_path() -> PathBuf {
    cleanup::temp_database_path()
}

/// True when the file is an SQLite database (so it is opened, not imported).
pub fn is_sqlite(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|_| &head == b"SQLite format 3\0")
}

/// Opens a trace: an SQLite file as it is, anything else imported into `out` (or a
/// temporary file).
pub fn open_trace(
    traces: &[PathBuf],
    out: Option<&Path>,
) -> Result<(Database, Option<ImportSummary>), OpenError> {
    if let ([trace], None) = (traces, out) {
        if is_sqlite(trace) {
            return Ok((
                Database {
                    path: trace.to_path_buf(),
                    _temporary: None,
                },
                None,
            ));
        }
    }
    match out {
        None => {
            let temp = TempPath::database(temp_path());
            let summary = import::import_paths(traces, temp.path())?;
            rollback_journal(temp.path())?;
            let db = Database {
                path: temp.path().to_path_buf(),
                _temporary: Some(temp),
            };
            Ok((db, Some(summary)))
        }
        Some(out) => {
            let summary = import_into(traces, out)?;
            let db = Database {
                path: out.to_path_buf(),
                _temporary: None,
            };
            Ok((db, Some(summary)))
        }
    }
}

/// Imports `trace` beside `out` and renames the complete database to `out`.
fn import_into(traces: &[PathBuf], out: &Path) -> Result<ImportSummary, OpenError> {
    cleanup::sweep_stale_siblings(out);
    let temp = TempPath::database(cleanup::sibling_temp_path(out));
    // Fails now, naming the output, rather than after the parse, naming the temporary.
    std::fs::File::create_new(temp.path()).map_err(|error| OpenError::Create {
        path: out.to_path_buf(),
        error,
    })?;
    let summary = import::import_paths(traces, temp.path())?;
    rollback_journal(temp.path())?;
    // Side files an older database left at `out` would be read as the new one's.
    for suffix in cleanup::SIDE_FILES {
        let _ = std::fs::remove_file(cleanup::with_suffix(out, suffix));
    }
    std::fs::rename(temp.path(), out).map_err(|error| OpenError::Rename {
        path: out.to_path_buf(),
        error,
    })?;
    temp.keep();
    Ok(summary)
}

/// Leaves a finished database in rollback-journal mode: readers (read-only, as `sextant
/// query`, the explorer and most tools open it) then create no `-wal`/`-shm` files beside
/// it, which a read-only connection could not remove when it closes.
fn rollback_journal(path: &Path) -> Result<(), OpenError> {
    let finish = |error| OpenError::Finish {
        path: path.to_path_buf(),
        error,
    };
    let conn = rusqlite::Connection::open(path).map_err(finish)?;
    conn.pragma_update(None, "journal_mode", "DELETE")
        .map_err(finish)?;
    conn.close().map_err(|(_, e)| finish(e))
}
