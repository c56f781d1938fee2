//! The import pipeline: source → parse → clock → sort → model → db.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use crate::clock::{self, ClockConverter, Placement};
use crate::db::{self, ImportFacts, SnapshotRow, TraceFileRow};
use crate::ir::{clocks, ClockDomain, MetaValue, Sink, HOST_MACHINE};
use crate::parse::{self, FileContext, ParseError};
use crate::source::{self, Kind, SourceError, TraceFile};

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("{file}: {error}")]
    Parse { file: String, error: ParseError },
    #[error("{file}: Unknown trace type provided (not a Perfetto protobuf, Chrome JSON or systrace file, nor a ZIP/TAR/gzip archive)")]
    UnknownType { file: String },
    #[error(transparent)]
    Db(#[from] db::DbError),
}

/// What an import did, for summaries and benchmarks.
#[derive(Debug, Default, Clone)]
pub struct ImportSummary {
    pub files: usize,
    pub bytes: u64,
    pub events: usize,
    pub slices: usize,
    pub counters: usize,
    pub sched: usize,
    pub dropped_events: u64,
    pub parse_secs: f64,
    pub total_secs: f64,
}

/// Imports the trace at `input` into a new SQLite database at `db_path`.
pub fn import_path(input: &Path, db_path: &Path) -> Result<ImportSummary, ImportError> {
    let files = source::open(input)?;
    import_files(&input.display().to_string(), files, db_path)
}

/// Imports already-opened files (see [`source::open_bytes`]).
pub fn import_files(
    input_name: &str,
    mut files: Vec<TraceFile>,
    db_path: &Path,
) -> Result<ImportSummary, ImportError> {
    let started = Instant::now();
    let mut sink = Sink::new();
    let mut facts = ImportFacts::default();
    let mut summary = ImportSummary {
        files: files.len(),
        bytes: files.first().map_or(0, |f| f.size),
        ..Default::default()
    };
    let traces: Vec<usize> = (0..files.len())
        .filter(|&i| !files[i].kind.is_container())
        .collect();
    if traces.is_empty() || traces.iter().all(|&i| files[i].kind == Kind::Unknown) {
        return Err(ImportError::UnknownType {
            file: input_name.to_string(),
        });
    }
    // The first file to claim a clock sets trace time.
    let mut claimed: Option<ClockDomain> = None;
    for (order, file) in files.iter_mut().enumerate() {
        facts.files.push(TraceFileRow {
            parent_id: file.parent.map(|p| p as u32),
            name: file.name.clone(),
            size: file.size,
            trace_type: file.kind.trace_type(),
            processing_order: Some(order as u32),
            is_container: file.kind.is_container(),
        });
        if file.kind.is_container() || file.kind == Kind::Manifest {
            continue;
        }
        let index = order as u32;
        sink.current_file = index;
        let ctx = FileContext {
            file: index,
            machine: HOST_MACHINE,
        };
        let bytes = std::mem::take(&mut file.bytes);
        let name = file.display_name(input_name).to_string();
        let wrap = |error| ImportError::Parse {
            file: name.clone(),
            error,
        };
        let snapshots_before = sink.snapshots.len();
        match file.kind {
            Kind::Proto => {
                parse::proto::parse(&bytes, &mut sink, &ctx).map_err(wrap)?;
                sink.name_swapper(HOST_MACHINE);
                if claimed.is_none() && sink.snapshots.len() > snapshots_before {
                    claimed = Some(clock::builtin(HOST_MACHINE, clocks::BOOTTIME));
                }
            }
            Kind::Json => {
                parse::json::parse(&bytes, &mut sink, &ctx).map_err(wrap)?;
                claimed.get_or_insert(ClockDomain {
                    machine: HOST_MACHINE,
                    clock_id: clocks::TRACE_FILE,
                    sequence: 0,
                    file: index,
                });
            }
            Kind::Systrace => {
                parse::systrace::parse(&bytes, &mut sink, &ctx).map_err(wrap)?;
                sink.name_swapper(HOST_MACHINE);
                claimed.get_or_insert(clock::builtin(HOST_MACHINE, clocks::MONOTONIC));
            }
            Kind::Unknown => {
                return Err(ImportError::UnknownType { file: name });
            }
            _ => {}
        }
    }
    summary.parse_secs = started.elapsed().as_secs_f64();
    sink.events.shrink_to_fit();
    // A snapshot's primary_trace_clock names the clock trace time is on.
    if let (Some(primary), Some(c)) = (sink.primary_trace_clock, claimed.as_mut()) {
        if c.clock_id == clocks::BOOTTIME {
            *c = clock::builtin(HOST_MACHINE, primary);
        }
    }
    let trace_clock = claimed.unwrap_or(clock::builtin(HOST_MACHINE, clocks::BOOTTIME));
    facts.trace_time_clock = claimed.map(|c| c.clock_id);

    let phase = |name: &str, since: Instant| {
        if std::env::var_os("SEXTANT_TIMING").is_some() {
            let hwm = std::fs::read_to_string("/proc/self/status")
                .ok()
                .and_then(|s| {
                    s.lines()
                        .find(|l| l.starts_with("VmHWM"))
                        .map(str::to_string)
                })
                .unwrap_or_default();
            eprintln!("{name}: {:.2}s {hwm}", since.elapsed().as_secs_f64());
        }
    };
    phase("parse", started);
    let t = Instant::now();
    to_trace_time(&mut sink, trace_clock, &mut facts);
    sort_and_drop_negative(&mut sink);
    summary.events = sink.events.len();

    let mut machines: BTreeSet<u32> = sink.machines.keys().copied().collect();
    machines.insert(HOST_MACHINE);
    for c in 0..sink.clocks.len() {
        machines.insert(sink.clocks.get(c as u32).machine);
    }
    let machines: Vec<u32> = machines.into_iter().collect();
    let swapper = sink.swapper_machines.clone();
    if let Some(top) = files.first() {
        let kind = files
            .iter()
            .find(|f| !f.kind.is_container())
            .map_or(top.kind, |f| f.kind);
        sink.current_file = 0;
        sink.metadata(
            "trace_type",
            HOST_MACHINE,
            MetaValue::Str(kind.trace_type().into()),
        );
        sink.metadata(
            "trace_size_bytes",
            HOST_MACHINE,
            MetaValue::Int(top.size as i64),
        );
    }
    phase("clock+sort", t);
    let t = Instant::now();
    let conn = db::create(db_path)?;
    let mut writer = db::begin(&conn)?;
    let tables = crate::model::build(&mut sink, &machines, &swapper, &mut writer);
    phase("model+rows", t);
    let t = Instant::now();
    for (row, m) in tables.machines.iter().enumerate() {
        facts.machine_rows.insert(m.raw_id as u32, row as u32);
    }
    for s in &mut facts.snapshots {
        s.machine = facts.machine_rows.get(&s.machine).copied().unwrap_or(0);
    }
    summary.slices = tables.slice_count as usize;
    summary.counters = tables.counter_count as usize;
    summary.sched = tables.sched_count as usize;
    summary.dropped_events = sink
        .stats
        .iter()
        .filter(|(k, _)| {
            matches!(
                k.name,
                "clock_sync_unrelatable_clock_domains" | "trace_sorter_negative_timestamp_dropped"
            )
        })
        .map(|(_, v)| *v as u64)
        .sum();

    writer.finish(&tables, &sink, &facts)?;
    db::commit(&conn)?;
    phase("db", t);
    summary.total_secs = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// Converts every event's raw timestamp to trace time; events whose clock cannot reach
/// trace time are dropped and counted.
fn to_trace_time(sink: &mut Sink, trace_clock: ClockDomain, facts: &mut ImportFacts) {
    let mut conv = ClockConverter::new(trace_clock, &sink.snapshots);
    let placements: Vec<Placement> = (0..sink.clocks.len())
        .map(|c| conv.placement(*sink.clocks.get(c as u32)))
        .collect();
    // Snapshot rows, placed at the snapshot's time on the trace clock.
    for (id, snap) in sink.snapshots.iter().enumerate() {
        let Some(ts) = snap.readings.iter().find_map(|&(d, v)| conv.convert(d, v)) else {
            continue;
        };
        for &(d, v) in &snap.readings {
            facts.snapshots.push(SnapshotRow {
                ts,
                clock_id: d.clock_id,
                clock_value: v,
                snapshot_id: id as u32,
                machine: snap.machine,
            });
        }
    }
    if placements.iter().all(|p| *p == Placement::Identity) {
        return;
    }
    let domains: Vec<ClockDomain> = (0..sink.clocks.len())
        .map(|c| *sink.clocks.get(c as u32))
        .collect();
    let mut dropped: std::collections::HashMap<(u32, u32), i64> = Default::default();
    let sink_payloads = &sink.payloads;
    sink.events.retain_mut(|ev| {
        let c = sink_payloads[ev.payload as usize].0 as usize;
        match placements.get(c) {
            Some(Placement::Identity | Placement::SameDomain(_)) => true,
            _ => match conv.convert(domains[c], ev.ts) {
                Some(ts) => {
                    ev.ts = ts;
                    true
                }
                None => {
                    *dropped
                        .entry((domains[c].machine, domains[c].file))
                        .or_default() += 1;
                    false
                }
            },
        }
    });
    for ((machine, file), n) in dropped {
        let prev = sink.current_file;
        sink.current_file = file;
        sink.stat("clock_sync_unrelatable_clock_domains", machine, n);
        sink.current_file = prev;
    }
}

fn sort_and_drop_negative(sink: &mut Sink) {
    let sorted = sink
        .events
        .windows(2)
        .all(|w| (w[0].ts, w[0].ord) <= (w[1].ts, w[1].ord));
    if !sorted {
        sink.events.sort_unstable_by_key(|e| (e.ts, e.ord));
    }
    let negative = sink.events.partition_point(|e| e.ts < 0);
    if negative > 0 {
        sink.events.drain(..negative);
        sink.current_file = 0;
        sink.stat(
            "trace_sorter_negative_timestamp_dropped",
            HOST_MACHINE,
            negative as i64,
        );
    }
}
