//! What the clock graph did, in rows: every node, every relation with its source, how each
//! (file, machine) was placed on trace time, what each other choice of trace time would drop,
//! and the `clock_snapshot` rows.

use std::collections::HashMap;

use super::{place, Context, ManifestClocks, Placement, PlacementInput, Plan};
use crate::ir::{clocks, ClockDomain, MachineId, Sink};

#[derive(Clone, Debug, PartialEq)]
pub struct NodeRow {
    pub clock: ClockDomain,
    pub label: String,
    pub is_trace_time: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EdgeRow {
    pub src: u32,
    pub dst: u32,
    pub source: &'static str,
    /// dst − src at the first reading.
    pub offset_ns: i64,
    pub readings: u32,
    pub file: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FilePlacementRow {
    pub file: u32,
    pub machine: MachineId,
    pub node: Option<u32>,
    /// `trace_time`, `path`, `unconverted` or `dropped`.
    pub status: &'static str,
    /// The chain of clocks that placed the file, or why nothing could.
    pub path: String,
    pub events: u64,
    pub dropped: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CandidateRow {
    pub node: u32,
    pub label: String,
    pub current: bool,
    pub dropped_events: u64,
}

/// A row of `clock_snapshot`.
#[derive(Clone, Debug, PartialEq)]
pub struct SnapshotRow {
    pub ts: i64,
    pub clock_id: u32,
    pub clock_value: i64,
    pub snapshot_id: u32,
    pub machine: MachineId,
}

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub nodes: Vec<NodeRow>,
    pub edges: Vec<EdgeRow>,
    pub files: Vec<FilePlacementRow>,
    /// ClockSnapshots refused, in the order they were read, with why.
    pub refused: Vec<super::RejectedSnapshot>,
}

/// Event counts per raw clock (index into `sink.clocks`).
pub fn events_per_clock(sink: &Sink) -> Vec<u64> {
    let mut counts = vec![0u64; sink.clocks.len()];
    for ev in &sink.events {
        let (clock, data) = &sink.payloads[ev.payload as usize];
        if !data.counts_as_event() {
            continue;
        }
        if let Some(n) = counts.get_mut(*clock as usize) {
            *n += 1;
        }
    }
    counts
}

impl Report {
    pub fn new(
        placement: &Placement,
        sink: &Sink,
        machine_names: &[String],
        file_names: &[String],
        per_clock: &[u64],
    ) -> Report {
        let machine_name = |m: MachineId| {
            machine_names
                .get(m as usize)
                .cloned()
                .unwrap_or_else(|| format!("machine {m}"))
        };
        let file_name = |f: u32| {
            file_names
                .get(f as usize)
                .cloned()
                .unwrap_or_else(|| format!("file {f}"))
        };
        let label = |c: &ClockDomain| super::label(c, &machine_name, &file_name);
        let mut nodes: Vec<NodeRow> = Vec::new();
        let mut ids: HashMap<ClockDomain, u32> = HashMap::new();
        let mut add = |c: ClockDomain, nodes: &mut Vec<NodeRow>| -> u32 {
            *ids.entry(c).or_insert_with(|| {
                nodes.push(NodeRow {
                    clock: c,
                    label: label(&c),
                    is_trace_time: c == placement.trace_time,
                });
                nodes.len() as u32 - 1
            })
        };
        add(placement.trace_time, &mut nodes);
        for c in placement.graph.clocks() {
            add(c, &mut nodes);
        }
        for (_, c) in &placement.context_clocks {
            add(*c, &mut nodes);
        }
        let mut edges = Vec::new();
        for (a, b, rel) in placement.graph.relations() {
            let (src, dst) = (add(a, &mut nodes), add(b, &mut nodes));
            let first = rel.points().first().copied().unwrap_or((0, 0));
            edges.push(EdgeRow {
                src,
                dst,
                source: rel.source.as_str(),
                offset_ns: first.1.wrapping_sub(first.0),
                readings: rel.points().len() as u32,
                file: rel.file,
            });
        }

        // Events and drops per context, from the raw clocks' plans.
        let mut events: HashMap<(u32, MachineId), (u64, u64)> = HashMap::new();
        for (c, &n) in per_clock.iter().enumerate() {
            let d = sink.clocks.get(c as u32);
            let slot = events.entry((d.file, d.machine)).or_default();
            slot.0 += n;
            if matches!(placement.plan(*d), Plan::Drop(_)) {
                slot.1 += n;
            }
        }
        let mut files = Vec::new();
        for (ctx, clock) in &placement.context_clocks {
            let (n, dropped) = events
                .get(&(ctx.file, ctx.machine))
                .copied()
                .unwrap_or_default();
            let node = ids.get(clock).copied();
            let unrelatable = placement
                .unrelatable
                .iter()
                .find(|u| u.file == ctx.file && u.machine == ctx.machine);
            let (status, path) = if let Some(u) = unrelatable {
                (
                    "dropped",
                    format!(
                        "{} cannot be related to {}: no snapshot path, no REALTIME on both machines, and different clock domains. Record clock snapshots, or add a manifest `clocks` override.",
                        label(&u.clock),
                        label(&u.trace_time)
                    ),
                )
            } else if !ctx.converts {
                let snapshots = sink
                    .snapshots
                    .iter()
                    .any(|s| s.file == ctx.file && s.machine == ctx.machine);
                let why = if snapshots {
                    "its clock snapshots relate clocks, but none of its timestamps is on a clock to convert: they are taken as trace time"
                } else {
                    "no clock snapshots: timestamps are taken as trace time"
                };
                ("unconverted", why.to_string())
            } else if *clock == placement.trace_time {
                ("trace_time", format!("{} is trace time", label(clock)))
            } else {
                match placement.graph.path(clock, &placement.trace_time) {
                    Some(edges) => {
                        let mut text = label(clock);
                        for e in edges {
                            if let Some((_, to, rel)) = placement.graph.relation(e) {
                                text.push_str(" → ");
                                text.push_str(&label(&to));
                                if rel.source != super::EdgeSource::Snapshot {
                                    text.push_str(&format!(" ({})", rel.source.as_str()));
                                }
                            }
                        }
                        ("path", text)
                    }
                    None => (
                        "dropped",
                        format!(
                            "{} has no path to {}",
                            label(clock),
                            label(&placement.trace_time)
                        ),
                    ),
                }
            };
            files.push(FilePlacementRow {
                file: ctx.file,
                machine: ctx.machine,
                node,
                status,
                path,
                events: n,
                dropped,
            });
        }
        Report {
            nodes,
            edges,
            files,
            refused: placement.rejected.clone(),
        }
    }

    /// Every clock trace time could be on — each machine's clock domains and each file's
    /// private timeline — with the events that choosing it would drop. `sink.events` must
    /// still hold raw timestamps.
    pub fn candidates(
        &self,
        current: &Placement,
        sink: &Sink,
        contexts: &[Context],
        manifest: &ManifestClocks,
        first_machine: MachineId,
        per_clock: &[u64],
    ) -> Vec<CandidateRow> {
        let mut out = Vec::new();
        // Each clock's earliest raw timestamp, whatever the placement: one pass for all
        // the candidates (it was one pass per candidate).
        let mut earliest = vec![i64::MAX; sink.clocks.len()];
        for ev in &sink.events {
            let c = sink.payloads[ev.payload as usize].0 as usize;
            if let Some(e) = earliest.get_mut(c) {
                *e = (*e).min(ev.ts);
            }
        }
        for (id, node) in self.nodes.iter().enumerate() {
            let c = node.clock;
            // The clocks a manifest can name (and each file's own timeline): a custom clock
            // id is never offered, which also bounds the placements made here (one each) on
            // a crafted file relating thousands of custom clocks.
            let is_current = c == current.trace_time;
            let named =
                c.file == 0 && c.sequence == 0 && crate::manifest::clock_name(c.clock_id).is_some();
            if !(named || is_current || c.clock_id == clocks::TRACE_FILE) {
                continue;
            }
            let placement = if is_current {
                None
            } else {
                Some(place(&PlacementInput {
                    contexts,
                    snapshots: &sink.snapshots,
                    manifest,
                    forced_trace_time: Some(c),
                    first_machine,
                    spans: &sink.file_spans,
                }))
            };
            let p = placement.as_ref().unwrap_or(current);
            out.push(CandidateRow {
                node: id as u32,
                label: node.label.clone(),
                current: is_current,
                dropped_events: dropped_under(p, sink, per_clock, &earliest),
            });
        }
        out
    }

    /// `clock_snapshot` rows: each relation added to the graph, at its time on trace time.
    pub fn snapshot_rows(placement: &Placement) -> Vec<SnapshotRow> {
        let mut rows = Vec::new();
        let mut order: Vec<(usize, &crate::clock::InsertedSnapshot)> =
            placement.inserted.iter().enumerate().collect();
        order.sort_by_key(|(_, s)| s.written);
        for (id, snap) in order {
            for (&(clock_id, node, v), &ts) in snap.readings.iter().zip(&snap.ts) {
                // A clock that could not be converted when the relation was added has no
                // row (the reference's rows are written then, and never revisited).
                let Some(ts) = ts else { continue };
                rows.push(SnapshotRow {
                    ts,
                    clock_id,
                    clock_value: v,
                    snapshot_id: id as u32,
                    machine: node.machine,
                });
            }
        }
        rows
    }
}

/// Events a placement drops: on clocks it cannot convert, or converted to before zero. Only
/// clocks whose earliest event converts to before zero need a pass over the events.
fn dropped_under(p: &Placement, sink: &Sink, per_clock: &[u64], earliest: &[i64]) -> u64 {
    let plans: Vec<Plan> = (0..sink.clocks.len())
        .map(|c| p.plan(*sink.clocks.get(c as u32)))
        .collect();
    let mut dropped: u64 = plans
        .iter()
        .zip(per_clock)
        .filter(|(plan, _)| matches!(plan, Plan::Drop(_)))
        .map(|(_, n)| n)
        .sum();
    let at_risk: Vec<bool> = plans
        .iter()
        .zip(earliest)
        .map(|(plan, &first)| match plan {
            _ if first == i64::MAX => false,
            Plan::Identity => first < 0,
            Plan::Path(path) => p.graph.convert_along(path, first) < 0,
            Plan::Drop(_) => false,
        })
        .collect();
    if !at_risk.contains(&true) {
        return dropped;
    }
    for ev in &sink.events {
        let c = sink.payloads[ev.payload as usize].0 as usize;
        if !at_risk[c] {
            continue;
        }
        let ts = match &plans[c] {
            Plan::Path(path) => p.graph.convert_along(path, ev.ts),
            _ => ev.ts,
        };
        dropped += u64::from(ts < 0);
    }
    dropped
}
