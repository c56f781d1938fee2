//! trace_time switch benchmark: imports frame_bench's trace (12.5 M events by default:
//! 5 M slices on 100 thread tracks, 2.5 M counter samples) once, then switches trace time
//! back and forth with `Session::replace` several times and prints each switch's time.
//!
//!     cargo run --release --example replace_bench -- [EVENTS] [SWITCHES]
//!
//! `SEXTANT_TIMING=1` also prints the time of each phase of the switch.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

#[allow(dead_code)]
#[path = "support/bench_trace.rs"]
mod bench_trace;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let events: u64 = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(12_500_000);
    let switches: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(4);
    let dir = std::env::temp_dir().join(format!("sextant-replace-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let trace = dir.join("bench.pftrace");
    {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&trace)?);
        bench_trace::write_trace(
            &mut out,
            events,
            Some((1_000_000, 1_700_000_000_000_000_000)),
        )?;
        std::io::Write::flush(&mut out)?;
    }
    let never = AtomicBool::new(false);
    let started = Instant::now();
    let files = sextant::source::open(&trace)?;
    let mut session = sextant::import::Session::import(
        "bench.pftrace",
        files,
        &dir.join("trace-0.sqlite"),
        &mut |_| {},
        &never,
    )?;
    println!(
        "imported {} events in {:.2} s",
        session.summary().events,
        started.elapsed().as_secs_f64()
    );
    for i in 1..=switches {
        let target = session
            .candidates()
            .into_iter()
            .find(|c| !c.current)
            .ok_or("only one candidate")?;
        let db = dir.join(format!("trace-{i}.sqlite"));
        let started = Instant::now();
        let summary = session.replace(target.node, &db, &mut |_| {}, &never)?;
        println!(
            "switch {i} to {}: {} slices, {} counter samples re-placed and written in {:.2} s",
            target.label,
            summary.slices,
            summary.counters,
            started.elapsed().as_secs_f64()
        );
        let _ = std::fs::remove_file(dir.join(format!("trace-{}.sqlite", i - 1)));
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
