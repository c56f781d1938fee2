//! Import benchmark: generates a Perfetto trace of N track events (slices across 100
//! threads, counters, interned names), imports it, and prints events per second and peak
//! memory.
//!
//!     cargo run --release --example import_bench -- [EVENTS] [--keep PATH]
//!
//! Peak memory is the process's VmHWM (Linux), which includes the importer and SQLite.

use std::time::Instant;

#[path = "support/bench_trace.rs"]
mod bench_trace;

use bench_trace::generate;

#[path = "support/cli.rs"]
mod cli;
#[path = "support/peak.rs"]
mod peak;

use peak::peak_rss_mb;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let events: u64 = cli::size_arg(&args, 5_000_000)?;
    let dir = std::env::temp_dir();
    let trace = dir.join(format!("sextant-bench-{}.pftrace", std::process::id()));
    let db = dir.join(format!("sextant-bench-{}.sqlite", std::process::id()));
    let started = Instant::now();
    let size = generate(&trace, events)?;
    eprintln!(
        "generated {events} events ({:.1} MB) in {:.2}s",
        size as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    let before = peak_rss_mb().unwrap_or(0.0);
    let started = Instant::now();
    let summary = sextant::import::import_path(&trace, &db)?;
    let secs = started.elapsed().as_secs_f64();
    let peak = peak_rss_mb().unwrap_or(0.0);
    println!(
        "imported {} events in {:.2}s (parse {:.2}s): {:.0} events/s; {} slices, {} counters",
        events,
        secs,
        summary.parse_secs,
        events as f64 / secs,
        summary.slices,
        summary.counters
    );
    println!(
        "peak memory {:.0} MB (before import {:.0} MB); trace {:.0} MB; budget trace+200 MB = {:.0} MB",
        peak,
        before,
        size as f64 / 1e6,
        size as f64 / 1e6 + 200.0
    );
    let _ = std::fs::remove_file(&trace);
    let _ = std::fs::remove_file(&db);
    Ok(())
}
