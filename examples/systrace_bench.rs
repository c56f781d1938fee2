//! Systrace import benchmark (issue 12, third row): a systrace HTML file (the ftrace text
//! in a `trace-data` script block, as systrace.py writes it) of about 28 MB, deflated in a
//! ZIP, from a made-up Android device: 4 cpus, 8 processes of 6 threads, scheduler switches
//! and wakeups, atrace slices and counters (`tracing_mark_write`), binder transactions with
//! their replies, cpu frequency and idle. Imports the ZIP end to end and prints the time,
//! the peak memory, and the slices made (binder slices among them).
//!
//!     cargo run --release --example systrace_bench -- [MEGABYTES] [--keep PATH]
//!
//! Peak memory is the process's VmHWM (Linux).

use std::fmt::Write as _;
use std::io::Write;
use std::time::Instant;

#[path = "support/cli.rs"]
mod cli;
#[path = "support/peak.rs"]
mod peak;

const CPUS: usize = 4;
const PROCESSES: u32 = 8;
const THREADS_PER_PROCESS: u32 = 6;

/// A small deterministic generator (xorshift64*), so every run writes the same trace.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Clone)]
struct Thread {
    tid: u32,
    pid: u32,
    comm: String,
    depth: u32,
}

const SLICE_NAMES: [&str; 8] = [
    "Choreographer#doFrame",
    "traversal",
    "draw",
    "inflate",
    "RenderThread::syncFrameState",
    "binder transaction async",
    "Lock contention on a monitor lock",
    "activityStart",
];

const HTML_HEAD: &str = "<!DOCTYPE html>\n<html>\n<head i18n-values=\"dir:textdirection;\">\n\
<meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\">\n\
<title>Android System Trace</title>\n</head>\n<body>\n\
  <script class=\"trace-data\" type=\"application/text\">\n\
# tracer: nop\n#\n# entries-in-buffer/entries-written: 0/0   #P:4\n#\n\
#                                      _-----=> irqs-off\n\
#                                     / _----=> need-resched\n\
#                                    | / _---=> hardirq/softirq\n\
#                                    || / _--=> preempt-depth\n\
#                                    ||| /     delay\n\
#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n\
#              | |        |      |   ||||       |         |\n";

const HTML_TAIL: &str = "  </script>\n</body>\n</html>\n";

/// The HTML file, about `target` bytes.
fn systrace_html(target: usize) -> String {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut threads = Vec::new();
    for p in 0..PROCESSES {
        let pid = 1000 + p * 100;
        for k in 0..THREADS_PER_PROCESS {
            threads.push(Thread {
                tid: pid + k,
                pid,
                comm: if k == 0 {
                    format!("com.app{p}")
                } else {
                    format!("app{p}:worker{k}")
                },
                depth: 0,
            });
        }
    }
    let mut running: Vec<usize> = (0..CPUS).collect();
    let mut out = String::with_capacity(target + 4096);
    out.push_str(HTML_HEAD);
    let mut us: u64 = 100_000_000;
    let mut transaction = 1_000u64;
    let line = |out: &mut String, t: &Thread, cpu: usize, us: u64, body: &str| {
        let _ = writeln!(
            out,
            "{:>16}-{:<5} ({:>5}) [{cpu:03}] d..3 {:>5}.{:06}: {body}",
            t.comm,
            t.tid,
            t.pid,
            us / 1_000_000,
            us % 1_000_000
        );
    };
    let mut body = String::new();
    while out.len() < target {
        us += 5 + rng.below(30);
        let cpu = rng.below(CPUS as u64) as usize;
        let cur = running[cpu];
        body.clear();
        match rng.below(100) {
            0..=24 => {
                let next = rng.below(threads.len() as u64) as usize;
                let (p, n) = (&threads[cur], &threads[next]);
                let state = ["S", "R", "D"][rng.below(3) as usize];
                let _ = write!(
                    body,
                    "sched_switch: prev_comm={} prev_pid={} prev_prio=120 prev_state={state} ==> \
                     next_comm={} next_pid={} next_prio=120",
                    p.comm, p.tid, n.comm, n.tid
                );
                line(&mut out, &threads[cur], cpu, us, &body);
                running[cpu] = next;
            }
            25..=39 => {
                let woken = &threads[rng.below(threads.len() as u64) as usize];
                let _ = write!(
                    body,
                    "sched_wakeup: comm={} pid={} prio=120 target_cpu={:03}",
                    woken.comm,
                    woken.tid,
                    rng.below(CPUS as u64)
                );
                line(&mut out, &threads[cur], cpu, us, &body);
            }
            40..=74 => {
                let t = &mut threads[cur];
                if t.depth < 3 && (t.depth == 0 || rng.below(2) == 0) {
                    let name = SLICE_NAMES[rng.below(SLICE_NAMES.len() as u64) as usize];
                    let _ = write!(body, "tracing_mark_write: B|{}|{name}", t.pid);
                    t.depth += 1;
                } else {
                    let _ = write!(body, "tracing_mark_write: E|{}", t.pid);
                    t.depth -= 1;
                }
                line(&mut out, &threads[cur], cpu, us, &body);
            }
            75..=79 => {
                let t = &threads[cur];
                let _ = write!(
                    body,
                    "tracing_mark_write: C|{}|queued_buffers|{}",
                    t.pid,
                    rng.below(4)
                );
                line(&mut out, t, cpu, us, &body);
            }
            80..=94 => {
                // A transaction to another process's thread, received there, answered by
                // a reply the caller receives.
                let client = cur;
                let server = loop {
                    let s = rng.below(threads.len() as u64) as usize;
                    if threads[s].pid != threads[client].pid {
                        break s;
                    }
                };
                let (c, s) = (threads[client].clone(), threads[server].clone());
                let call = transaction;
                let reply = transaction + 1;
                transaction += 2;
                let other = (cpu + 1) % CPUS;
                let _ = write!(
                    body,
                    "binder_transaction: transaction={call} dest_node={} dest_proc={} \
                     dest_thread={} reply=0 flags=0x10 code=0x{:x}",
                    s.pid * 3,
                    s.pid,
                    s.tid,
                    1 + rng.below(40)
                );
                line(&mut out, &c, cpu, us, &body);
                us += 8;
                body.clear();
                let _ = write!(body, "binder_transaction_received: transaction={call}");
                line(&mut out, &s, other, us, &body);
                us += 20 + rng.below(200);
                body.clear();
                let _ = write!(
                    body,
                    "binder_transaction: transaction={reply} dest_node=0 dest_proc={} \
                     dest_thread={} reply=1 flags=0x0 code=0x0",
                    c.pid, c.tid
                );
                line(&mut out, &s, other, us, &body);
                us += 8;
                body.clear();
                let _ = write!(body, "binder_transaction_received: transaction={reply}");
                line(&mut out, &c, cpu, us, &body);
            }
            95..=97 => {
                let _ = write!(
                    body,
                    "cpu_frequency: state={} cpu_id={cpu}",
                    300_000 + 100_000 * rng.below(15)
                );
                line(&mut out, &threads[cur], cpu, us, &body);
            }
            _ => {
                let _ = write!(
                    body,
                    "cpu_idle: state={} cpu_id={cpu}",
                    [0u64, 1, 4_294_967_295][rng.below(3) as usize]
                );
                line(&mut out, &threads[cur], cpu, us, &body);
            }
        }
    }
    out.push_str(HTML_TAIL);
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let megabytes: f64 = cli::size_arg(&args, 28.0)?;
    let keep = cli::keep_arg(&args);
    let dir = std::env::temp_dir();
    let pid = std::process::id();
    let archive = keep
        .clone()
        .unwrap_or_else(|| dir.join(format!("sextant-systrace-bench-{pid}.zip")));
    let db = dir.join(format!("sextant-systrace-bench-{pid}.sqlite"));
    let started = Instant::now();
    let html = systrace_html((megabytes * 1e6) as usize);
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&archive)?);
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("systrace.html", deflated)?;
    zip.write_all(html.as_bytes())?;
    zip.finish()?;
    let size = std::fs::metadata(&archive)?.len();
    let unpacked = html.len();
    drop(html);
    eprintln!(
        "generated {:.1} MB of systrace HTML ({:.1} MB zipped) in {:.2}s",
        unpacked as f64 / 1e6,
        size as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    let before = peak::peak_rss_mb().unwrap_or(0.0);
    let started = Instant::now();
    let summary = sextant::import::import_path(&archive, &db)?;
    let secs = started.elapsed().as_secs_f64();
    let peak = peak::peak_rss_mb().unwrap_or(0.0);
    let conn = rusqlite::Connection::open(&db)?;
    let binder: i64 = conn.query_row(
        "SELECT count(*) FROM slice WHERE name IN ('binder transaction', 'binder reply')",
        [],
        |r| r.get(0),
    )?;
    drop(conn);
    println!(
        "imported {:.1} MB of systrace in {secs:.2}s (parse {:.2}s); {} slices ({binder} binder), {} sched",
        unpacked as f64 / 1e6,
        summary.parse_secs,
        summary.slices,
        summary.sched
    );
    println!(
        "peak memory {peak:.0} MB (before import {before:.0} MB); budget unpacked trace+200 MB = {:.0} MB",
        unpacked as f64 / 1e6 + 200.0
    );
    if keep.is_none() {
        let _ = std::fs::remove_file(&archive);
    }
    let _ = std::fs::remove_file(&db);
    Ok(())
}
