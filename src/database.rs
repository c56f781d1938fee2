//! Where an import's database lives: a file given with `-o`, an existing Sextant database
//! opened as it is, or a temporary file removed when the session ends.

use std::path::{Path, PathBuf};

use crate::import::{self, ImportError, ImportSummary};

/// A database file; temporary ones are deleted on drop.
#[derive(Debug)]
pub struct Database {
    pub path: PathBuf,
    temporary: bool,
}

impl Drop for Database {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A fresh temporary path for a database.
pub fn temp_path() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::env::temp_dir().join(format!("sextant-{}-{nanos}.sqlite", std::process::id()))
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
    trace: &Path,
    out: Option<&Path>,
) -> Result<(Database, Option<ImportSummary>), ImportError> {
    if is_sqlite(trace) && out.is_none() {
        return Ok((
            Database {
                path: trace.to_path_buf(),
                temporary: false,
            },
            None,
        ));
    }
    let (path, temporary) = match out {
        Some(p) => (p.to_path_buf(), false),
        None => (temp_path(), true),
    };
    let db = Database { path, temporary };
    let summary = import::import_path(trace, &db.path)?;
    Ok((db, Some(summary)))
}
