//! Archive benchmark (issue 12): a ZIP of 4 traces from 4 machines (N track events each,
//! default 1.25 million; a manifest names the machines and places them by REALTIME
//! rendezvous), imported whole, against the same 4 files imported one by one. Prints both
//! times, their ratio (the target is at most 0.7 on 2 cores), and the peak memory.
//!
//!     cargo run --release --example archive_bench -- [EVENTS_PER_FILE] [--keep DIR]
//!
//! Peak memory is the process's VmHWM (Linux): the archive is imported first, so the
//! figure printed after it is the archive's.

use std::io::Write;
use std::time::Instant;

#[path = "support/bench_trace.rs"]
#[allow(dead_code)]
mod bench_trace;

#[path = "support/cli.rs"]
mod cli;
#[path = "support/peak.rs"]
mod peak;

const MACHINES: [&str; 4] = ["phone", "watch", "tablet", "laptop"];
/// A wall-clock time for the snapshots (2026-11-21).
const WALL: u64 = 1_795_683_600_000_000_000;

fn manifest() -> String {
    let files: Vec<String> = MACHINES
        .iter()
        .map(|m| format!(r#"{{"path": "{m}.pftrace", "machine": {{"name": "{m}"}}}}"#))
        .collect();
    format!(
        r#"{{"perfetto_manifest": {{"version": 1, "trace_time": {{"clock": "BOOTTIME", "file": "phone.pftrace"}}, "files": [{}]}}}}"#,
        files.join(", ")
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let per_file: u64 = cli::size_arg(&args, 1_250_000)?;
    let keep = cli::keep_arg(&args);
    let dir = keep.clone().unwrap_or_else(std::env::temp_dir);
    let pid = std::process::id();
    let archive = dir.join(format!("sextant-archive-bench-{pid}.zip"));
    let db = dir.join(format!("sextant-archive-bench-{pid}.sqlite"));

    let started = Instant::now();
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&archive)?);
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("perfetto_manifest.json", stored)?;
    zip.write_all(manifest().as_bytes())?;
    let mut singles = Vec::new();
    let mut bytes = 0;
    for (i, m) in MACHINES.iter().enumerate() {
        // Each machine booted at another time; wall clocks agree within a few ms.
        let boot = 10_000_000_000 * (i as u64 + 1);
        let mut trace = Vec::new();
        bench_trace::write_trace(
            &mut trace,
            per_file,
            Some((boot, WALL + i as u64 * 3_000_000)),
        )?;
        bytes += trace.len();
        zip.start_file(format!("{m}.pftrace"), stored)?;
        zip.write_all(&trace)?;
        let single = dir.join(format!("sextant-archive-bench-{pid}-{m}.pftrace"));
        std::fs::write(&single, &trace)?;
        singles.push(single);
    }
    zip.finish()?;
    eprintln!(
        "generated 4 x {per_file} events ({:.1} MB) in {:.2}s",
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );

    let before = peak::peak_rss_mb().unwrap_or(0.0);
    let started = Instant::now();
    let merged = sextant::import::import_path(&archive, &db)?;
    let archive_secs = started.elapsed().as_secs_f64();
    let peak = peak::peak_rss_mb().unwrap_or(0.0);
    let mut sum = 0.0;
    let mut each = Vec::new();
    for single in &singles {
        let started = Instant::now();
        sextant::import::import_path(single, &db)?;
        let secs = started.elapsed().as_secs_f64();
        each.push(format!("{secs:.2}"));
        sum += secs;
    }
    println!(
        "archive of 4 x {per_file} events: {archive_secs:.2}s ({} events kept, {} dropped); one by one: {} = {sum:.2}s; archive / sum = {:.2}",
        merged.events,
        merged.dropped_events,
        each.join(" + "),
        archive_secs / sum
    );
    println!(
        "peak memory importing the archive {peak:.0} MB (before import {before:.0} MB); traces {:.0} MB; budget traces+200 MB = {:.0} MB",
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 + 200.0
    );
    let _ = std::fs::remove_file(&db);
    if keep.is_none() {
        for p in singles.iter().chain([&archive]) {
            let _ = std::fs::remove_file(p);
        }
    }
    Ok(())
}
