//! Protobuf import benchmark (issue 12, first row): the trace Perfetto's Python bindings
//! write when they convert data as Perfetto's documentation shows — TrackDescriptors for one
//! process, 100 threads and a counter track each, then TrackEvents with inline names (no
//! interning), every one naming its track uuid, on one trusted sequence. 5 M events make
//! 109.9 MB. `tools/gen_python_bindings_trace.py` writes it with the bindings themselves;
//! this writes the same bytes (checked with `--check`) fast enough for 5 M events, then
//! imports it end to end and prints the time and the peak memory.
//!
//!     cargo run --release --example proto_bench -- [EVENTS] [--keep PATH]
//!     cargo run --release --example proto_bench -- --check FILE EVENTS
//!
//! Peak memory is the process's VmHWM (Linux): the generator streams, so it is the import's.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

#[path = "support/cli.rs"]
mod cli;
#[path = "support/peak.rs"]
mod peak;

const SEQ: u64 = 8009;
const PID: u64 = 1000;
const THREADS: u64 = 100;
const NAMES: u64 = 64;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u64, wire: u64) {
    varint(out, field << 3 | wire);
}

fn uint(out: &mut Vec<u8>, field: u64, v: u64) {
    key(out, field, 0);
    varint(out, v);
}

fn bytes(out: &mut Vec<u8>, field: u64, v: &[u8]) {
    key(out, field, 2);
    varint(out, v.len() as u64);
    out.extend_from_slice(v);
}

/// Writes one `Trace.packet` (field 1) holding `packet`.
fn packet(out: &mut impl Write, packet: &[u8], buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    bytes(buf, 1, packet);
    out.write_all(buf)
}

/// Writes the trace (fields in number order, as the Python protobuf runtime writes them).
fn write_trace(out: &mut impl Write, events: u64) -> std::io::Result<()> {
    let (mut p, mut d, mut m, mut buf) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // TracePacket { trusted_packet_sequence_id: 10, track_descriptor: 60 { uuid: 1,
    // name: 2, process: 3 { pid: 1, process_name: 6 }, thread: 4 { pid: 1, tid: 2,
    // thread_name: 5 }, parent_uuid: 5, counter: 8 { unit: 3 } } }
    let descriptor = |d: &[u8], p: &mut Vec<u8>| {
        p.clear();
        uint(p, 10, SEQ);
        bytes(p, 60, d);
    };
    d.clear();
    uint(&mut d, 1, 1);
    m.clear();
    uint(&mut m, 1, PID);
    bytes(&mut m, 6, b"bench");
    bytes(&mut d, 3, &m);
    descriptor(&d, &mut p);
    packet(out, &p, &mut buf)?;
    for t in 0..THREADS {
        d.clear();
        uint(&mut d, 1, 100 + t);
        m.clear();
        uint(&mut m, 1, PID);
        uint(&mut m, 2, 2000 + t);
        bytes(&mut m, 5, format!("worker-{t}").as_bytes());
        bytes(&mut d, 4, &m);
        uint(&mut d, 5, 1);
        descriptor(&d, &mut p);
        packet(out, &p, &mut buf)?;
        d.clear();
        uint(&mut d, 1, 10_000 + t);
        bytes(&mut d, 2, format!("queue-{t}").as_bytes());
        uint(&mut d, 5, 100 + t);
        m.clear();
        uint(&mut m, 3, 2); // UNIT_COUNT
        bytes(&mut d, 8, &m);
        descriptor(&d, &mut p);
        packet(out, &p, &mut buf)?;
    }
    // TracePacket { timestamp: 8, trusted_packet_sequence_id: 10, track_event: 11 {
    // type: 9, track_uuid: 11, name: 23, counter_value: 30 } }
    let names: Vec<String> = (0..=NAMES).map(|i| format!("function_{i}")).collect();
    let mut ts = 1_000_000u64;
    let mut written = 0u64;
    let mut step = 0u64;
    let mut e = Vec::new();
    while written < events {
        for t in 0..THREADS {
            if written >= events {
                break;
            }
            let phase = step % 5;
            e.clear();
            match phase {
                0 | 1 => {
                    uint(&mut e, 9, 1); // TYPE_SLICE_BEGIN
                    uint(&mut e, 11, 100 + t);
                    let name = 1 + (step / 5 + t + phase) % NAMES;
                    bytes(&mut e, 23, names[name as usize].as_bytes());
                }
                2 | 3 => {
                    uint(&mut e, 9, 2); // TYPE_SLICE_END
                    uint(&mut e, 11, 100 + t);
                }
                _ => {
                    uint(&mut e, 9, 4); // TYPE_COUNTER
                    uint(&mut e, 11, 10_000 + t);
                    uint(&mut e, 30, step % 97);
                }
            }
            p.clear();
            uint(&mut p, 8, ts + t);
            uint(&mut p, 10, SEQ);
            bytes(&mut p, 11, &e);
            packet(out, &p, &mut buf)?;
            written += 1;
        }
        step += 1;
        ts += 1_000;
    }
    Ok(())
}

fn generate(path: &Path, events: u64) -> std::io::Result<u64> {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    write_trace(&mut out, events)?;
    out.flush()?;
    drop(out);
    Ok(std::fs::metadata(path)?.len())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--check") {
        let (Some(file), Some(events)) = (args.get(2), args.get(3)) else {
            return Err("usage: proto_bench --check FILE EVENTS".into());
        };
        let theirs = std::fs::read(file)?;
        let mut ours = Vec::new();
        write_trace(&mut ours, events.parse()?)?;
        if ours == theirs {
            println!("{file}: the same {} bytes", ours.len());
            return Ok(());
        }
        let at = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
        return Err(format!(
            "{file} differs at byte {at} ({} bytes here, {} there)",
            ours.len(),
            theirs.len()
        )
        .into());
    }
    let events: u64 = cli::size_arg(&args, 5_000_000)?;
    let keep = cli::keep_arg(&args);
    let dir = std::env::temp_dir();
    let pid = std::process::id();
    let trace = keep
        .clone()
        .unwrap_or_else(|| dir.join(format!("sextant-proto-bench-{pid}.pftrace")));
    let db = dir.join(format!("sextant-proto-bench-{pid}.sqlite"));
    let started = Instant::now();
    let size = generate(&trace, events)?;
    eprintln!(
        "generated {events} events ({:.1} MB) in {:.2}s",
        size as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    let before = peak::peak_rss_mb().unwrap_or(0.0);
    let started = Instant::now();
    let summary = sextant::import::import_path(&trace, &db)?;
    let secs = started.elapsed().as_secs_f64();
    let peak = peak::peak_rss_mb().unwrap_or(0.0);
    println!(
        "imported {events} events in {secs:.2}s (parse {:.2}s): {:.0} events/s; {} slices, {} counters",
        summary.parse_secs,
        events as f64 / secs,
        summary.slices,
        summary.counters
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
