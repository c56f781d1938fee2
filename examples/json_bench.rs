//! JSON import benchmark (issue 12): generates a Chrome JSON trace of N complete (`X`)
//! events on 200 threads, an int arg each, half of them nested in the other half, with
//! fractional microsecond timestamps (about 100 bytes an event: 2 M events are 200 MB), then
//! imports it end to end into SQLite and prints the time and the peak memory.
//!
//!     cargo run --release --example json_bench -- [EVENTS] [--keep PATH]
//!
//! Peak memory is the process's VmHWM (Linux): the generator streams, so it is the import's.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

const THREADS: u64 = 200;

/// Writes the trace; returns its size in bytes.
fn generate(path: &Path, events: u64) -> std::io::Result<u64> {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    out.write_all(b"{\"traceEvents\":[\n")?;
    // Per thread, pairs: a parent of 10 µs and, in its middle, a child of 2.5 µs.
    let pairs = events / 2;
    for i in 0..pairs {
        let tid = 1000 + i % THREADS;
        let pid = 1 + (i % THREADS) / 20;
        let step = i / THREADS;
        let ts = step as f64 * 12.5 + 0.125;
        let sep = if i + 1 == pairs && events.is_multiple_of(2) {
            ""
        } else {
            ","
        };
        writeln!(
            out,
            "{{\"name\":\"parent_{}\",\"cat\":\"bench\",\"ph\":\"X\",\"ts\":{ts:.3},\"dur\":10.0,\"pid\":{pid},\"tid\":{tid},\"args\":{{\"n\":{i}}}}},",
            i % 97
        )?;
        writeln!(
            out,
            "{{\"name\":\"child_{}\",\"cat\":\"bench\",\"ph\":\"X\",\"ts\":{:.3},\"dur\":2.5,\"pid\":{pid},\"tid\":{tid},\"args\":{{\"n\":{}}}}}{sep}",
            i % 89,
            ts + 3.75,
            i + pairs
        )?;
    }
    if !events.is_multiple_of(2) {
        writeln!(
            out,
            "{{\"name\":\"last\",\"ph\":\"X\",\"ts\":0.5,\"dur\":1,\"pid\":1,\"tid\":1,\"args\":{{\"n\":0}}}}"
        )?;
    }
    out.write_all(b"]}\n")?;
    out.flush()?;
    Ok(std::fs::metadata(path)?.len())
}

#[path = "support/cli.rs"]
mod cli;
#[path = "support/peak.rs"]
mod peak;

use peak::peak_rss_mb;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let events: u64 = cli::size_arg(&args, 2_000_000)?;
    let keep = cli::keep_arg(&args);
    let dir = std::env::temp_dir();
    let trace = keep
        .clone()
        .unwrap_or_else(|| dir.join(format!("sextant-json-bench-{}.json", std::process::id())));
    let db = dir.join(format!("sextant-json-bench-{}.sqlite", std::process::id()));
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
        "imported {events} events in {secs:.2}s (parse {:.2}s): {:.0} events/s; {} slices",
        summary.parse_secs,
        events as f64 / secs,
        summary.slices,
    );
    println!(
        "peak memory {peak:.0} MB (before import {before:.0} MB); trace {:.0} MB; budget trace+200 MB = {:.0} MB",
        size as f64 / 1e6,
        size as f64 / 1e6 + 200.0
    );
    if keep.is_none() {
        let _ = std::fs::remove_file(&trace);
    }
    let _ = std::fs::remove_file(&db);
    Ok(())
}
