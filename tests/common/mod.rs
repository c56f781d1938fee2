//! Helpers shared by the integration tests (a module, not a test binary of its own).
// Each test binary uses a different subset of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use rusqlite::types::ValueRef;
use rusqlite::Connection;
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

/// Runs `sql` and renders every value as a string (NULL as "NULL"; reals without a
/// trailing ".0", so 102400.0 reads "102400" and 0.25 reads "0.25").
pub fn rows(conn: &Connection, sql: &str) -> Vec<Vec<String>> {
    let mut stmt = conn
        .prepare(sql)
        .unwrap_or_else(|e| panic!("preparing {sql}: {e}"));
    let n = stmt.column_count();
    let mut out = Vec::new();
    let mut cursor = stmt
        .query([])
        .unwrap_or_else(|e| panic!("running {sql}: {e}"));
    while let Some(row) = cursor.next().unwrap_or_else(|e| panic!("{sql}: {e}")) {
        let cells = (0..n)
            .map(|i| match row.get_ref(i).expect("column") {
                ValueRef::Null => "NULL".to_string(),
                ValueRef::Integer(v) => v.to_string(),
                ValueRef::Real(v) => v.to_string(),
                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                ValueRef::Blob(b) => format!("{b:02x?}"),
            })
            .collect();
        out.push(cells);
    }
    out
}

/// A literal expected table.
pub fn table<const N: usize>(rows: &[[&str; N]]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect()
}

/// Imports `tests/data/<dir>/<file>` into a fresh database and opens it for queries; the
/// database file goes when the returned guard drops.
pub fn import_data(dir: &str, file: &str) -> (Connection, TempFile) {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir)
        .join(file);
    let db = TempFile::new(&format!("{file}.sqlite"));
    sextant::import::import_path(&trace, db.path())
        .unwrap_or_else(|e| panic!("importing {file} failed: {e}"));
    let conn = sextant::db::open_read_only(db.path())
        .unwrap_or_else(|e| panic!("opening the database of {file} failed: {e}"));
    (conn, db)
}

/// A fresh, empty directory (for a child's TMPDIR, say); removed with its contents on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let dir = TempFile::new(tag);
        let path = dir.0.clone();
        drop(dir);
        std::fs::create_dir(&path).expect("creating a temp directory");
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The names in the directory, sorted.
    pub fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .expect("reading a temp directory")
            .map(|e| {
                e.expect("a directory entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A Chrome JSON trace of `n` complete events (one per 10 µs, with an arg each): big enough
/// that importing it takes a while, for tests that interrupt an import.
pub fn big_json_trace(n: usize) -> Vec<u8> {
    use std::fmt::Write;
    let mut s = String::from("{\"traceEvents\":[");
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            r#"{{"ph":"X","pid":{},"tid":{},"ts":{},"dur":5,"name":"s{}","args":{{"i":{i}}}}}"#,
            1 + i % 7,
            100 + i % 13,
            i * 10,
            i % 100
        );
    }
    s.push_str("]}");
    s.into_bytes()
}

/// A protobuf trace of two ClockSnapshots (BOOTTIME, MONOTONIC) in which BOOTTIME, the
/// trace-time clock, goes back at the second: the clock tracker refuses it with
/// "the trace clock (id=6) is not monotonic at snapshot 1. 500 not >= 1000.".
pub fn refused_snapshot_trace() -> Vec<u8> {
    use prost::Message;
    use sextant::protos::{
        clock_snapshot::Clock,
        trace_packet::{Data, OptionalTrustedPacketSequenceId},
        ClockSnapshot, Trace, TracePacket,
    };
    let snapshot = |boot: u64, mono: u64| TracePacket {
        data: Some(Data::ClockSnapshot(ClockSnapshot {
            clocks: [(6, boot), (3, mono)]
                .iter()
                .map(|&(id, ts)| Clock {
                    clock_id: Some(id),
                    timestamp: Some(ts),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        })),
        optional_trusted_packet_sequence_id: Some(
            OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(1),
        ),
        ..Default::default()
    };
    Trace {
        packet: vec![snapshot(1_000, 100), snapshot(500, 200)],
    }
    .encode_to_vec()
}
