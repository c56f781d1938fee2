//! Helpers shared by the integration tests (a module, not a test binary of its own).
// Each test binary uses a different subset of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A file in the temp directory; removed, with SQLite's side files, on drop.
pub struct TempFile(pub PathBuf);

impl TempFile {
    /// A fresh unique path; nothing is written.
    pub fn new(tag: &str) -> TempFile {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = std::env::temp_dir().join(format!(
            "sextant-test-{}-{nanos}-{n}-{tag}",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        TempFile(path)
    }

    /// A unique file holding `bytes`.
    pub fn with_bytes(tag: &str, bytes: &[u8]) -> TempFile {
        let f = TempFile::new(tag);
        std::fs::write(&f.0, bytes).expect("writing a temp file");
        f
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn name(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        for suffix in ["-journal", "-wal", "-shm"] {
            let mut side = self.0.clone().into_os_string();
            side.push(suffix);
            let _ = std::fs::remove_file(side);
        }
    }
}
