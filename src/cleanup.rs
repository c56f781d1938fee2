//! Sextant's temporary files, and the guarantee that none outlives the run that made it.
//!
//! Every temporary database (a `sextant query`'s, `sextant import -o`'s file before it is
//! renamed into place) and every explorer session directory is a [`TempPath`]: it is
//! registered here while it exists, and removed — with SQLite's `-wal`, `-shm` and `-journal`
//! side files — when the guard drops (normal exit, error, panic unwinding). The exits that
//! run no destructors (a signal the process dies of, a panic on another thread) go through
//! [`crate::shutdown`], which removes whatever is still registered ([`remove_registered`])
//! before the process ends. What a `kill -9` or a power cut leaves behind is found by the next
//! run: [`sweep_stale`] removes Sextant's own entries (recognised by name) whose process is
//! gone.
//!
//! Names: `sextant-<pid>-<stamp>.sqlite` (a database), `sextant-<pid>-<stamp>.archive` (an
//! archive found inside another, decompressed to disk to be listed and read), `sextant-<pid>-
//! <stamp>` (a session directory holding only `trace-<n>.sqlite` files), and, beside an
//! `import -o` output,
//! `.<output name>.sextant-<pid>-<stamp>.tmp`. The stamp is the time in nanoseconds and a
//! per-process counter (`<nanos>-<n>`; files of older versions have no counter).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The suffixes of SQLite's side files.
pub const SIDE_FILES: [&str; 3] = ["-wal", "-shm", "-journal"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A database file: it and its side files.
    Database,
    /// A directory and everything in it.
    Directory,
}

struct Entry {
    id: u64,
    path: PathBuf,
    kind: Kind,
}

/// What exists now and must go if the process ends.
static REGISTRY: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// A registered temporary database file or directory; removed on drop.
#[derive(Debug)]
pub struct TempPath {
    id: u64,
    path: PathBuf,
    kind: Kind,
}

impl TempPath {
    /// Registers the database at `path` (it need not exist yet): it and its side files go
    /// when the guard drops, or when the process is ended by a signal.
    pub fn database(path: PathBuf) -> TempPath {
        TempPath::register(path, Kind::Database)
    }

    /// Registers a fresh path in the temp directory for an archive found inside another
    /// (created by the caller): removed when the guard drops, or at a signal.
    pub fn nested_archive() -> TempPath {
        let path = std::env::temp_dir().join(format!("{}.archive", unique_name()));
        TempPath::register(path, Kind::Database)
    }

    /// Creates a fresh, private session directory in the temp directory.
    pub fn session_dir() -> std::io::Result<TempPath> {
        let path = std::env::temp_dir().join(unique_name());
        let guard = TempPath::register(path, Kind::Directory);
        create_private_dir(&guard.path)?;
        Ok(guard)
    }

    fn register(path: PathBuf, kind: Kind) -> TempPath {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let mut registry = lock();
        registry.push(Entry {
            id,
            path: path.clone(),
            kind,
        });
        drop(registry);
        TempPath { id, path, kind }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops tracking the path without removing it (it was renamed into place, say).
    pub fn keep(self) {
        unregister(self.id);
        std::mem::forget(self);
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        // Removed first, then forgotten: a signal in between removes it again, harmlessly.
        remove(&self.path, self.kind);
        unregister(self.id);
    }
}

fn lock() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    REGISTRY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn unregister(id: u64) {
    lock().retain(|e| e.id != id);
}

fn remove(path: &Path, kind: Kind) {
    match kind {
        Kind::Database => remove_database(path),
        Kind::Directory => {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

/// Removes a database file and SQLite's side files.
pub fn remove_database(path: &Path) {
    let _ = std::fs::remove_file(path);
    for suffix in SIDE_FILES {
        let _ = std::fs::remove_file(with_suffix(path, suffix));
    }
}

/// `path` with `suffix` appended to its file name.
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut side: OsString = path.as_os_str().to_owned();
    side.push(suffix);
    PathBuf::from(side)
}

/// Removes everything still registered: the last thing a process ended by a signal (or by a
/// panic on a thread other than the UI's) does. The registry is only read under its lock;
/// the files are removed after it is released. Safe to call more than once.
pub fn remove_registered() {
    // The lock is only ever held for a push or a retain; if a thread died holding it, the
    // poison is ignored. `try_lock` keeps this from waiting on a thread stopped mid-push.
    let snapshot: Vec<(PathBuf, Kind)> = {
        let mut tries = 0;
        loop {
            match REGISTRY.try_lock() {
                Ok(r) => break r.iter().map(|e| (e.path.clone(), e.kind)).collect(),
                Err(std::sync::TryLockError::Poisoned(p)) => {
                    break p
                        .into_inner()
                        .iter()
                        .map(|e| (e.path.clone(), e.kind))
                        .collect()
                }
                Err(std::sync::TryLockError::WouldBlock) if tries < 100 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(std::sync::TryLockError::WouldBlock) => break Vec::new(),
            }
        }
    };
    for (path, kind) in snapshot {
        remove(&path, kind);
    }
}

/// The paths registered now (for tests).
pub fn registered() -> Vec<PathBuf> {
    lock().iter().map(|e| e.path.clone()).collect()
}

/// `sextant-<pid>-<nanos>-<n>`: unique within the process (the counter) and across processes
/// (the pid), and recognisable by [`sweep_stale`].
pub fn unique_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("sextant-{}-{nanos}-{n}", std::process::id())
}

/// A fresh path in the temp directory for a temporary database.
pub fn temp_database_path() -> PathBuf {
    std::env::temp_dir().join(format!("{}.sqlite", unique_name()))
}

/// Where `sextant import -o out` writes before renaming: beside `out` (so the rename is
/// atomic), hidden, named after it.
pub fn sibling_temp_path(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map_or_else(|| "sextant-output".into(), |n| n.to_string_lossy());
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    dir.join(format!(".{name}.{}.tmp", unique_name()))
}

fn create_private_dir(path: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path)
}

// ---------------------------------------------------------------------------------------
// Stale files of runs that ended without cleaning up
// ---------------------------------------------------------------------------------------

/// Parses `<pid>-<digits>[-<digits>]` at the start of `s`; returns the pid and the rest.
fn pid_and_stamp(s: &str) -> Option<(u32, &str)> {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let n = digits(s);
    let pid: u32 = s.get(..n)?.parse().ok()?;
    let mut rest = s[n..].strip_prefix('-')?;
    let n = digits(rest);
    if n == 0 {
        return None;
    }
    rest = &rest[n..];
    if let Some(more) = rest.strip_prefix('-') {
        let n = digits(more);
        if n == 0 {
            return None;
        }
        rest = &more[n..];
    }
    Some((pid, rest))
}

/// `rest` is empty or one of SQLite's side-file suffixes.
fn is_side_suffix(rest: &str) -> bool {
    rest.is_empty() || SIDE_FILES.contains(&rest)
}

/// What a temp-directory entry named `name` is, if Sextant made it: the pid of the process
/// that did, and whether it is a session directory (as opposed to a database file).
pub fn temp_entry_owner(name: &str) -> Option<(u32, bool)> {
    let (pid, rest) = pid_and_stamp(name.strip_prefix("sextant-")?)?;
    if rest.is_empty() {
        return Some((pid, true));
    }
    if rest == ".archive" {
        return Some((pid, false));
    }
    let side = rest.strip_prefix(".sqlite")?;
    is_side_suffix(side).then_some((pid, false))
}

/// The pid of the process that wrote the `import -o` temporary `name` for an output named
/// `out_name`, if it is one.
pub fn sibling_owner(name: &str, out_name: &str) -> Option<u32> {
    let rest = name
        .strip_prefix('.')?
        .strip_prefix(out_name)?
        .strip_prefix(".sextant-")?;
    let (pid, rest) = pid_and_stamp(rest)?;
    is_side_suffix(rest.strip_prefix(".tmp")?).then_some(pid)
}

/// Whether process `pid` exists (a pid that cannot be asked about counts as alive).
pub fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(raw) = i32::try_from(pid) else {
            return true;
        };
        let Some(pid) = rustix::process::Pid::from_raw(raw) else {
            return true;
        };
        !matches!(
            rustix::process::test_kill_process(pid),
            Err(rustix::io::Errno::SRCH)
        )
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// A session directory holds nothing but the importer's databases.
fn only_session_files(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.into_iter().all(|e| {
        e.ok().is_some_and(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Some(rest) = name.strip_prefix("trace-") else {
                return false;
            };
            let n = rest.bytes().take_while(u8::is_ascii_digit).count();
            n > 0
                && rest[n..]
                    .strip_prefix(".sqlite")
                    .is_some_and(is_side_suffix)
                && e.file_type().is_ok_and(|t| t.is_file())
        })
    })
}

/// Removes, from the temp directory `dir`, the databases and session directories of Sextant
/// processes that no longer exist. Returns how many entries went. Anything not named as
/// Sextant names its files, or whose process is alive, is left alone.
pub fn sweep_stale(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    let mut alive = std::collections::HashMap::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, is_dir)) = temp_entry_owner(&name.to_string_lossy()) else {
            continue;
        };
        if *alive.entry(pid).or_insert_with(|| process_alive(pid)) {
            continue;
        }
        // Never follows a link: a link is neither a file nor a directory here.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        let gone = if is_dir && kind.is_dir() {
            only_session_files(&path) && std::fs::remove_dir_all(&path).is_ok()
        } else if !is_dir && kind.is_file() {
            std::fs::remove_file(&path).is_ok()
        } else {
            false
        };
        removed += usize::from(gone);
    }
    removed
}

/// Removes the `import -o` temporaries that dead processes left beside `out`.
pub fn sweep_stale_siblings(out: &Path) -> usize {
    let Some(out_name) = out.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return 0;
    };
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = sibling_owner(&name.to_string_lossy(), &out_name) else {
            continue;
        };
        if process_alive(pid) || !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        removed += usize::from(std::fs::remove_file(entry.path()).is_ok());
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_recognised_exactly() {
        assert_eq!(
            temp_entry_owner("sextant-12-345-6.sqlite"),
            Some((12, false))
        );
        assert_eq!(
            temp_entry_owner("sextant-12-345.sqlite-wal"),
            Some((12, false))
        );
        assert_eq!(
            temp_entry_owner("sextant-12-345-6.sqlite-shm"),
            Some((12, false))
        );
        assert_eq!(
            temp_entry_owner("sextant-12-345-6.archive"),
            Some((12, false))
        );
        assert_eq!(temp_entry_owner("sextant-12-345-6"), Some((12, true)));
        assert_eq!(temp_entry_owner("sextant-12-345"), Some((12, true)));
        for other in [
            "sextant-test-12-345-history",
            "sextant-interrupt-12.sqlite",
            "sextant-12-345-6.sqlite-old",
            "sextant-12-345-6.db",
            "sextant-12-.sqlite",
            "sextant-12",
            "sextant--345",
            "sextant-12-345-6-7",
            "my-sextant-12-345",
            "sextant-12-345-6.sqlitex",
        ] {
            assert_eq!(temp_entry_owner(other), None, "{other}");
        }
        assert_eq!(
            sibling_owner(".out.db.sextant-7-8-9.tmp", "out.db"),
            Some(7)
        );
        assert_eq!(
            sibling_owner(".out.db.sextant-7-8-9.tmp-journal", "out.db"),
            Some(7)
        );
        assert_eq!(sibling_owner(".out.db.sextant-7-8-9.tmp", "other.db"), None);
        assert_eq!(sibling_owner("out.db.sextant-7-8-9.tmp", "out.db"), None);
        assert_eq!(sibling_owner(".out.db.sextant-7-8-9", "out.db"), None);
    }

    #[test]
    fn the_names_made_are_the_names_recognised() {
        let me = std::process::id();
        let db = temp_database_path();
        let name = db.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(temp_entry_owner(&name), Some((me, false)));
        assert_eq!(temp_entry_owner(&unique_name()), Some((me, true)));
        let side = sibling_temp_path(Path::new("/x/trace.sqlite"));
        assert_eq!(side.parent(), Some(Path::new("/x")));
        let name = side.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(sibling_owner(&name, "trace.sqlite"), Some(me));
        assert_eq!(
            sibling_temp_path(Path::new("out.db")).parent(),
            Some(Path::new("."))
        );
    }

    #[test]
    fn a_dropped_guard_removes_the_database_and_its_side_files() {
        let path = temp_database_path();
        let guard = TempPath::database(path.clone());
        for suffix in ["", "-wal", "-shm", "-journal"] {
            std::fs::write(with_suffix(&path, suffix), b"x").unwrap();
        }
        assert!(registered().contains(&path));
        drop(guard);
        for suffix in ["", "-wal", "-shm", "-journal"] {
            assert!(!with_suffix(&path, suffix).exists(), "{suffix}");
        }
        assert!(!registered().contains(&path));
    }

    #[test]
    fn a_kept_path_stays() {
        let path = temp_database_path();
        std::fs::write(&path, b"x").unwrap();
        TempPath::database(path.clone()).keep();
        assert!(path.exists());
        assert!(!registered().contains(&path));
        std::fs::remove_file(&path).unwrap();
    }
}
