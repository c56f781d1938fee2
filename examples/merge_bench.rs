//! Merge benchmark: an archive of 3 machines × N track events each (default 2 million),
//! placed by a manifest and REALTIME rendezvous, against a single-file trace of the same
//! total size imported in the same run. Prints both rates and their ratio (the target is a
//! merged rate no worse than 80% of the single-file rate).
//!
//!     cargo run --release --example merge_bench -- [EVENTS_PER_MACHINE]

use std::io::Write;
use std::time::Instant;

#[path = "support/bench_trace.rs"]
mod bench_trace;

const MACHINES: [&str; 3] = ["phone", "watch", "tablet"];
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
    let per_machine: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(2_000_000);
    let total = per_machine * MACHINES.len() as u64;
    let dir = std::env::temp_dir();
    let pid = std::process::id();
    let archive = dir.join(format!("sextant-merge-bench-{pid}.zip"));
    let single = dir.join(format!("sextant-merge-bench-{pid}.pftrace"));
    let db = dir.join(format!("sextant-merge-bench-{pid}.sqlite"));

    let started = Instant::now();
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&archive)?);
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("perfetto_manifest.json", stored)?;
    zip.write_all(manifest().as_bytes())?;
    for (i, m) in MACHINES.iter().enumerate() {
        // Each machine booted at another time; wall clocks agree within a few ms.
        let boot = 10_000_000_000 * (i as u64 + 1);
        let mut trace = Vec::new();
        bench_trace::write_trace(
            &mut trace,
            per_machine,
            Some((boot, WALL + i as u64 * 3_000_000)),
        )?;
        zip.start_file(
            format!("{m}.pftrace"),
            stored.large_file(trace.len() > u32::MAX as usize),
        )?;
        zip.write_all(&trace)?;
    }
    zip.finish()?;
    let size = bench_trace::generate(&single, total)?;
    eprintln!(
        "generated {} + {total}-event single file ({:.1} MB) in {:.2}s",
        archive.display(),
        size as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );

    let started = Instant::now();
    sextant::import::import_path(&single, &db)?;
    let single_rate = total as f64 / started.elapsed().as_secs_f64();
    let started = Instant::now();
    let merged = sextant::import::import_path(&archive, &db)?;
    let merged_secs = started.elapsed().as_secs_f64();
    let merged_rate = total as f64 / merged_secs;
    println!(
        "single file: {total} events at {single_rate:.0} events/s\nmerged {} machines x {per_machine}: {} events kept, {} dropped, in {merged_secs:.2}s = {merged_rate:.0} events/s\nmerged / single = {:.0}%",
        MACHINES.len(),
        merged.events,
        merged.dropped_events,
        100.0 * merged_rate / single_rate
    );
    // Switching trace time: re-place every event on the watch's BOOTTIME, without parsing.
    let never = std::sync::atomic::AtomicBool::new(false);
    let files = sextant::source::open(&archive)?;
    let mut session = sextant::import::Session::import("merge", files, &db, &mut |_| {}, &never)?;
    let watch = session
        .candidates()
        .into_iter()
        .find(|c| c.label == "watch BOOTTIME")
        .ok_or("no watch BOOTTIME candidate")?;
    let db2 = dir.join(format!("sextant-merge-bench-{pid}-2.sqlite"));
    let started = Instant::now();
    let replaced = session.replace(watch.node, &db2, &mut |_| {}, &never)?;
    println!(
        "re-placed {} events on watch BOOTTIME in {:.2}s ({} dropped; the chooser predicted {})",
        replaced.events,
        started.elapsed().as_secs_f64(),
        replaced.dropped_events,
        watch.dropped_events
    );
    let _ = std::fs::remove_file(&db2);
    for p in [&archive, &single, &db] {
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}
