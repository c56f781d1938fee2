//! Places every file's timestamps on one timeline (trace time).
//!
//! The clock graph ([`graph`]) holds every clock and every known relation between two clocks.
//! [`place`] builds it the way Trace Processor does, file by file in processing order: the
//! manifest's overrides first, then each (file, machine) context's ClockSnapshots and its
//! trace-time claim, then — once per context — the fall-backs that bridge its clock to trace
//! time when no path exists: REALTIME rendezvous, the same-domain assumption, or nothing (its
//! events are dropped and counted). The result converts any raw clock of the import and says
//! which relations placed each file.

pub mod graph;
pub mod report;

use std::collections::{HashMap, HashSet};

pub use graph::{read_time, ChangeScope, ClockGraph, EdgeSource, ReadAt, Relation, READ_ALL};
use petgraph::graph::{EdgeIndex, NodeIndex};

use crate::ir::{clocks, ClockDomain, ClockSnapshot, MachineId, KEEP_RAW_ON_FAILURE};

/// The first clock id of sequence-scoped custom clocks, and the first after them.
const SEQUENCE_CLOCKS: std::ops::Range<u32> = 64..128;

/// The importer (format) a file was read by; it decides the file's clock and its claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Proto,
    Json,
    Systrace,
    /// strace text: wall-clock times.
    Strace,
}

/// A (file, machine) pair that has events or snapshots, in processing order.
#[derive(Clone, Debug, PartialEq)]
pub struct Context {
    pub file: u32,
    pub machine: MachineId,
    pub format: Format,
    /// Some event of the context is on a clock that needs converting.
    pub converts: bool,
    /// The context converted (or tried to) before its first own ClockSnapshot: its
    /// fall-backs are decided then, on the machine's shared clocks, and it can no longer
    /// claim trace time.
    pub early: bool,
}

/// A manifest `clocks` override: `from` reads T when `to` reads T + `offset_ns`.
#[derive(Clone, Debug, PartialEq)]
pub struct ManifestEdge {
    pub from: ClockDomain,
    pub to: ClockDomain,
    pub offset_ns: i64,
    pub file: u32,
}

/// What the manifest says about clocks, resolved to clock nodes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ManifestClocks {
    pub trace_time: Option<ClockDomain>,
    pub edges: Vec<ManifestEdge>,
}

/// A clock with an explicit trace-time choice (the manifest's, or the user's in the TUI).
pub fn builtin(machine: MachineId, clock_id: u32) -> ClockDomain {
    ClockDomain {
        machine,
        clock_id,
        sequence: 0,
        file: 0,
        shared: false,
    }
}

/// A file's private timeline (TRACE_FILE).
pub fn file_timeline(file: u32, machine: MachineId) -> ClockDomain {
    ClockDomain {
        machine,
        clock_id: clocks::TRACE_FILE,
        sequence: 0,
        file,
        shared: false,
    }
}

/// Why a timestamp could not be converted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    UnknownSourceClock,
    UnknownTargetClock,
    NoPath,
}

impl Failure {
    pub fn stat(self) -> &'static str {
        match self {
            Failure::UnknownSourceClock => "clock_sync_failure_unknown_source_clock",
            Failure::UnknownTargetClock => "clock_sync_failure_unknown_target_clock",
            Failure::NoPath => "clock_sync_failure_no_path",
        }
    }
}

/// How the events of one raw clock reach trace time.
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    /// Already on trace time (or a packet with no clock in a file without snapshots).
    Identity,
    Path(Vec<EdgeIndex>),
    Drop(Failure),
}

/// A relation added to the graph, in insertion order: the rows of `clock_snapshot`.
#[derive(Clone, Debug, PartialEq)]
pub struct InsertedSnapshot {
    /// (raw clock id, node, value); each row's machine is its node's.
    pub readings: Vec<(u32, ClockDomain, i64)>,
    pub source: EdgeSource,
    /// Each reading in trace time as it was when the relation was added (the reference
    /// writes the row then and never updates it); `None`: no row, the clock could not be
    /// converted yet.
    pub ts: Vec<Option<i64>>,
    /// When the rows were written, among all relations' (a snapshot's rows come after
    /// the fall-back relations its conversion added).
    pub written: usize,
}

/// A context whose clock could not be related to trace time.
#[derive(Clone, Debug, PartialEq)]
pub struct Unrelatable {
    pub file: u32,
    pub machine: MachineId,
    pub clock: ClockDomain,
    pub trace_time: ClockDomain,
}

/// The placement of every clock of an import on trace time.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    pub graph: ClockGraph,
    pub trace_time: ClockDomain,
    /// Some file or the manifest claimed trace time (else it is the initial private
    /// timeline, and `metadata` gets no `trace_time_clock_id`).
    pub claimed: bool,
    pub unrelatable: Vec<Unrelatable>,
    /// Each context's clock: the one its fall-backs were decided for.
    pub context_clocks: Vec<(Context, ClockDomain)>,
    pub inserted: Vec<InsertedSnapshot>,
    /// File tag of each (file, machine) context's builtin clocks: 0 shares the machine's
    /// clocks; a file id isolates a second file on a machine that has snapshots of its own.
    tags: HashMap<(u32, MachineId), u32>,
    /// Each proto file's default clock (from its first ClockSnapshot).
    default_clocks: HashMap<u32, u32>,
    /// The trace time a file's events were converted to when it differs from the final one:
    /// the reference converts each file as it reads it and never redoes it, so a file read
    /// before a later file claimed trace time stays on the timeline of its own time.
    targets: HashMap<u32, ClockDomain>,
    /// Relations whose `clock_snapshot` rows were written so far.
    stamps: usize,
    /// Snapshots refused (`invalid_clock_snapshots`), each with the reference's message.
    pub rejected: Vec<RejectedSnapshot>,
    /// Each clock's encoding, fixed at its first snapshot: (unit in ns, incremental).
    encodings: HashMap<ClockDomain, (i64, bool)>,
    /// The last reading of each clock in each series (the set of clocks read together).
    series: HashMap<(ClockDomain, Vec<ClockDomain>), i64>,
    /// Each file's read times: (its first event's, the one after its last event's).
    spans: HashMap<u32, (ReadAt, ReadAt)>,
}

/// A ClockSnapshot the clock tracker refused, and why (the reference's message).
#[derive(Clone, Debug, PartialEq)]
pub struct RejectedSnapshot {
    pub file: u32,
    pub machine: MachineId,
    pub message: String,
}

/// The inputs of [`place`].
pub struct PlacementInput<'a> {
    pub contexts: &'a [Context],
    pub snapshots: &'a [ClockSnapshot],
    pub manifest: &'a ManifestClocks,
    /// Trace time chosen by the user (overrides the manifest and every claim).
    pub forced_trace_time: Option<ClockDomain>,
    /// Machine row 0: the owner of the initial private timeline.
    pub first_machine: MachineId,
    /// Each file's event counts when it started and when it ended (its read times are made
    /// of them, see [`read_time`]). A file missing here is taken as read before everything
    /// and ending after.
    pub spans: &'a HashMap<u32, (u32, u32)>,
}

/// When a snapshot was read (see [`ReadAt`]).
fn snap_read_at(snap: &ClockSnapshot) -> ReadAt {
    read_time(snap.read_at, snap.file)
}

/// The clock a snapshot asks trace time (and its file's unlabelled packets) to be on:
/// `primary_trace_clock`, else BOOTTIME when it has BOOTTIME and no TRACE_FILE clock.
fn default_clock(snap: &ClockSnapshot) -> Option<u32> {
    if snap.relates_only {
        return None;
    }
    if let Some(p) = snap.primary_trace_clock {
        return Some(p);
    }
    let has = |id| snap.readings.iter().any(|(d, _)| d.clock_id == id);
    (has(clocks::BOOTTIME) && !has(clocks::TRACE_FILE)).then_some(clocks::BOOTTIME)
}

impl Placement {
    /// The graph node of a raw clock (as the parsers tagged it), or `None` for a packet that
    /// names no clock in a file that has none.
    pub fn node_of(&self, raw: ClockDomain) -> Option<ClockDomain> {
        let mut raw = raw;
        if raw.clock_id == clocks::PACKET_DEFAULT {
            raw.clock_id = *self.default_clocks.get(&raw.file)?;
        }
        Some(self.node_in_context(raw))
    }

    /// The graph node of a raw clock: a builtin clock is tagged with its context's file tag
    /// (0, the machine's shared clocks, when read before the context's first own snapshot).
    fn node_in_context(&self, raw: ClockDomain) -> ClockDomain {
        let shared = raw.shared;
        let raw = ClockDomain {
            shared: false,
            ..raw
        };
        if raw.clock_id == clocks::TRACE_FILE {
            return ClockDomain { sequence: 0, ..raw };
        }
        if SEQUENCE_CLOCKS.contains(&raw.clock_id) {
            return raw;
        }
        let tag = if shared {
            0
        } else {
            self.tag(raw.file, raw.machine)
        };
        ClockDomain {
            sequence: 0,
            file: tag,
            ..raw
        }
    }

    /// The file tag of a (file, machine) context's builtin clocks once it has read a
    /// snapshot of its own.
    fn tag(&self, file: u32, machine: MachineId) -> u32 {
        self.tags.get(&(file, machine)).copied().unwrap_or(0)
    }

    /// Whether a raw clock, read before its context's first own snapshot, went through the
    /// machine's shared clocks although the context later isolated its own
    /// (`clock_sync_mixed_clock_sources`).
    pub fn used_primary(&self, raw: &ClockDomain) -> bool {
        raw.shared && self.tag(raw.file, raw.machine) != 0
    }

    /// The trace time the events of `file` were converted to.
    pub fn target_of(&self, file: u32) -> ClockDomain {
        self.targets.get(&file).copied().unwrap_or(self.trace_time)
    }

    /// The graph nodes events are converted to: trace time, and the timeline of any file
    /// converted to another.
    pub fn target_nodes(&self) -> Vec<NodeIndex> {
        std::iter::once(&self.trace_time)
            .chain(self.targets.values())
            .filter_map(|c| self.graph.find(c))
            .collect()
    }

    /// The graph node of a raw clock, if it was ever read.
    pub fn graph_node(&self, raw: ClockDomain) -> Option<NodeIndex> {
        self.node_of(raw).and_then(|c| self.graph.find(&c))
    }

    /// How events on a raw clock reach trace time, once the import is read whole.
    pub fn plan(&self, raw: ClockDomain) -> Plan {
        self.plan_at(raw, READ_ALL)
    }

    /// How an event on a raw clock read at `at` reaches trace time, with the clocks and
    /// relations read by then (Trace Processor converts as it reads). A clock whose
    /// conversion may fail and keep its raw value does so then.
    pub fn plan_at(&self, raw: ClockDomain, at: ReadAt) -> Plan {
        let plan = self.strict_plan(raw, at);
        match plan {
            Plan::Drop(_) if Self::keeps_raw(raw) => Plan::Identity,
            plan => plan,
        }
    }

    /// Events on this clock keep their raw value when they cannot be converted.
    pub fn keeps_raw(raw: ClockDomain) -> bool {
        raw.sequence == KEEP_RAW_ON_FAILURE && !SEQUENCE_CLOCKS.contains(&raw.clock_id)
    }

    /// The read time at which a proto packet that could not be converted when read is
    /// tried again: the end of its file (it then sees the whole file's snapshots, never a
    /// later file's).
    pub fn end_of_file(&self, file: u32) -> ReadAt {
        self.spans.get(&file).map_or(READ_ALL, |s| s.1)
    }

    /// Where `file` starts being read.
    fn start_of_file(&self, file: u32) -> ReadAt {
        self.spans.get(&file).map_or(0, |s| s.0)
    }

    /// The plan of the relations read by `at`, no leniency.
    pub fn strict_plan(&self, raw: ClockDomain, at: ReadAt) -> Plan {
        if matches!(
            raw.clock_id,
            clocks::UNTIMED | clocks::LATEST | clocks::UNCONVERTED
        ) {
            return Plan::Identity;
        }
        let Some(node) = self.node_of(raw) else {
            return Plan::Identity;
        };
        let target = self.target_of(raw.file);
        if node == target {
            return Plan::Identity;
        }
        if self.graph.find_at(&node, at).is_none() {
            return Plan::Drop(Failure::UnknownSourceClock);
        }
        if self.graph.find_at(&target, at).is_none() {
            return Plan::Drop(Failure::UnknownTargetClock);
        }
        match self.graph.path_at(&node, &target, at) {
            Some(path) if path.is_empty() => Plan::Identity,
            Some(path) => Plan::Path(path),
            None => Plan::Drop(Failure::NoPath),
        }
    }

    /// Converts one reading; `None` when its clock cannot reach trace time.
    pub fn convert(&self, raw: ClockDomain, v: i64) -> Option<i64> {
        match self.plan(raw) {
            Plan::Identity => Some(v),
            Plan::Path(p) => Some(self.graph.convert_along(&p, v)),
            Plan::Drop(_) => None,
        }
    }

    /// Converts a reading of a graph node (not a raw clock).
    pub fn convert_node(&self, node: &ClockDomain, v: i64) -> Option<i64> {
        self.graph.convert(node, &self.trace_time, v)
    }

    #[allow(clippy::too_many_arguments)]
    fn relate(
        &mut self,
        a: (ClockDomain, i64),
        b: (ClockDomain, i64),
        source: EdgeSource,
        file: Option<u32>,
        trace_time: ClockDomain,
        read_at: ReadAt,
    ) {
        self.graph.relate(a, b, source, file, read_at);
        self.inserted.push(InsertedSnapshot {
            readings: vec![(a.0.clock_id, a.0, a.1), (b.0.clock_id, b.0, b.1)],
            source,
            ts: Vec::new(),
            written: 0,
        });
        self.stamp(self.inserted.len() - 1, trace_time, read_at);
    }

    /// The `clock_snapshot` times of relation `at`, on trace time as it is now (read time
    /// `read_at`): all the reading of the trace-time clock when the relation holds it, else
    /// each reading converted, where it can be.
    fn stamp(&mut self, at: usize, trace_time: ClockDomain, read_at: ReadAt) {
        let Some(last) = self.inserted.get(at) else {
            return;
        };
        let own = last
            .readings
            .iter()
            .find(|r| r.1 == trace_time)
            .map(|r| r.2);
        let ts = last
            .readings
            .iter()
            .map(|&(_, node, v)| {
                own.or_else(|| self.graph.convert_at(&node, &trace_time, v, read_at))
            })
            .collect();
        self.stamps += 1;
        let written = self.stamps;
        if let Some(last) = self.inserted.get_mut(at) {
            last.ts = ts;
            last.written = written;
        }
    }

    /// Checks a snapshot as the reference's clock tracker does when adding it, reading by
    /// reading: a clock's encoding is fixed at its first snapshot (a global clock cannot be
    /// incremental), the trace-time clock must be in ns and never go back, and a clock
    /// appears once. A refused snapshot adds no relation (the readings before the bad one
    /// still count as read). A clock other than trace time that goes back in its series
    /// can no longer be converted from.
    fn check_snapshot(
        &mut self,
        snap: &ClockSnapshot,
        trace_clock: Option<ClockDomain>,
    ) -> Result<(), String> {
        let at = self.inserted.len();
        let nodes: Vec<ClockDomain> = snap
            .readings
            .iter()
            .map(|&(raw, _)| self.node_in_context(raw))
            .collect();
        let mut set = nodes.clone();
        set.sort_by_key(graph::key);
        set.dedup();
        let mut seen: HashSet<ClockDomain> = HashSet::new();
        for (i, (&node, &(_, v))) in nodes.iter().zip(&snap.readings).enumerate() {
            let (unit, incremental) = snap.units.get(i).copied().unwrap_or((1, false));
            let x = clock_label_for_errors(&node);
            match self.encodings.get(&node) {
                None if incremental && !SEQUENCE_CLOCKS.contains(&node.clock_id) => {
                    return Err(format!(
                        "the global clock with id={x} cannot use incremental encoding; this \
                         is only supported for sequence-scoped clocks."
                    ));
                }
                None => {
                    self.encodings.insert(node, (unit, incremental));
                }
                Some(&(u, inc)) if (u, inc) != (unit, incremental) => {
                    return Err(format!(
                        "the clock domain with id={x} (unit={unit}, incremental={}), was \
                         previously registered with different properties (unit={u}, \
                         incremental={}).",
                        u8::from(incremental),
                        u8::from(inc)
                    ));
                }
                Some(_) => {}
            }
            let is_trace_clock = trace_clock == Some(node);
            if is_trace_clock && unit != 1 {
                return Err(format!(
                    "the trace clock (id={x}) must always use nanoseconds as unit multiplier."
                ));
            }
            if !seen.insert(node) {
                return Err(format!(
                    "duplicate clock domain with id={x} at snapshot {at}."
                ));
            }
            let last = self.series.insert((node, set.clone()), v);
            if let Some(last) = last.filter(|&last| v < last) {
                if is_trace_clock {
                    // The refused reading is not kept.
                    self.series.insert((node, set.clone()), last);
                    return Err(format!(
                        "the trace clock (id={x}) is not monotonic at snapshot {at}. {v} not \
                         >= {last}."
                    ));
                }
                let n = self.graph.node(node, snap_read_at(snap));
                self.graph.mark_non_monotonic(n, snap_read_at(snap));
            }
        }
        Ok(())
    }

    /// A refused snapshot: it still takes a snapshot id (and writes no rows).
    fn reject_snapshot(&mut self, snap: &ClockSnapshot, message: String, trace_time: ClockDomain) {
        self.rejected.push(RejectedSnapshot {
            file: snap.file,
            machine: snap.machine,
            message: format!("Clock sync error: {message}"),
        });
        self.inserted.push(InsertedSnapshot {
            readings: Vec::new(),
            source: EdgeSource::Snapshot,
            ts: Vec::new(),
            written: 0,
        });
        self.stamp(self.inserted.len() - 1, trace_time, snap_read_at(snap));
    }

    /// Adds a snapshot's relations; `trace_time` is trace time as the snapshot is added
    /// (after the claim it makes, initially the private timeline of machine row 0).
    fn add_snapshot(&mut self, snap: &ClockSnapshot, trace_time: ClockDomain) {
        let mut readings: Vec<(u32, ClockDomain, i64)> = Vec::with_capacity(snap.readings.len());
        for &(raw, v) in &snap.readings {
            let node = self.node_in_context(raw);
            if readings.iter().any(|r| r.1 == node) {
                continue;
            }
            readings.push((raw.clock_id, node, v));
            // An isolated file on another machine than trace time still meets the rest of the
            // world through its machine's wall clock.
            let realtime = matches!(raw.clock_id, clocks::REALTIME | clocks::REALTIME_COARSE);
            if realtime && node.file != 0 && trace_time.machine != node.machine {
                let twin = ClockDomain { file: 0, ..node };
                if !readings.iter().any(|r| r.1 == twin) {
                    readings.push((raw.clock_id, twin, v));
                }
            }
        }
        for (i, a) in readings.iter().enumerate() {
            for b in &readings[i + 1..] {
                self.graph.relate(
                    (a.1, a.2),
                    (b.1, b.2),
                    EdgeSource::Snapshot,
                    Some(snap.file),
                    snap_read_at(snap),
                );
            }
        }
        for r in &readings {
            self.graph.node(r.1, snap_read_at(snap));
        }
        self.inserted.push(InsertedSnapshot {
            readings,
            source: EdgeSource::Snapshot,
            ts: Vec::new(),
            written: 0,
        });
    }

    /// The fall-backs for a context whose clock `clock` has no path to trace time, decided
    /// at read time `at`.
    fn bridge(&mut self, ctx: &Context, clock: ClockDomain, trace_time: ClockDomain, at: ReadAt) {
        // A second file on a machine rejoins the machine's own clock.
        if clock.file != 0 && clock.clock_id != clocks::TRACE_FILE {
            let canonical = ClockDomain { file: 0, ..clock };
            if !self.graph.reachable_at(&clock, &canonical, at) {
                self.relate(
                    (clock, 0),
                    (canonical, 0),
                    EdgeSource::Reconnect,
                    Some(ctx.file),
                    trace_time,
                    at,
                );
            }
        }
        let c = if clock.clock_id == clocks::TRACE_FILE {
            clock
        } else {
            ClockDomain { file: 0, ..clock }
        };
        let g = trace_time;
        if c == g || self.graph.reachable_at(&c, &g, at) {
            return;
        }
        let r = builtin(c.machine, clocks::REALTIME);
        let rg = builtin(g.machine, clocks::REALTIME);
        if r != rg && self.graph.reachable_at(&c, &r, at) && self.graph.reachable_at(&rg, &g, at) {
            self.relate(
                (r, 0),
                (rg, 0),
                EdgeSource::RealtimeRendezvous,
                Some(ctx.file),
                g,
                at,
            );
            return;
        }
        if c.clock_id == clocks::TRACE_FILE
            || g.clock_id == clocks::TRACE_FILE
            || c.clock_id == g.clock_id
        {
            let file = Some(ctx.file);
            self.relate((c, 0), (g, 0), EdgeSource::SameDomain, file, g, at);
            return;
        }
        self.unrelatable.push(Unrelatable {
            file: ctx.file,
            machine: ctx.machine,
            clock: c,
            trace_time: g,
        });
    }
}

/// Builds the clock graph and decides trace time.
pub fn place(input: &PlacementInput) -> Placement {
    let mut p = Placement {
        spans: input
            .spans
            .iter()
            .map(|(&f, &(start, end))| (f, (read_time(start, f), read_time(end, f))))
            .collect(),
        ..Placement::default()
    };
    // Which files have snapshots, and each machine's first context.
    let mut primary: HashMap<MachineId, u32> = HashMap::new();
    for ctx in input.contexts {
        primary.entry(ctx.machine).or_insert(ctx.file);
    }
    for snap in input.snapshots {
        if primary.get(&snap.machine) != Some(&snap.file) {
            p.tags.insert((snap.file, snap.machine), snap.file);
        }
        if let Some(c) = default_clock(snap) {
            p.default_clocks.entry(snap.file).or_insert(c);
        }
    }

    let mut trace_time = input.forced_trace_time.or(input.manifest.trace_time);
    p.claimed = trace_time.is_some();
    for e in &input.manifest.edges {
        let from = (e.from, e.offset_ns.checked_neg().unwrap_or(i64::MAX).max(0));
        let to = (e.to, e.offset_ns.max(0));
        let now = trace_time.unwrap_or_else(|| file_timeline(0, input.first_machine));
        p.relate(from, to, EdgeSource::Manifest, Some(e.file), now, 0);
    }

    let mut by_context: HashMap<(u32, MachineId), Vec<&ClockSnapshot>> = HashMap::new();
    // Trace time as each file finished converting.
    let mut file_targets: HashMap<u32, ClockDomain> = HashMap::new();
    for snap in input.snapshots {
        by_context
            .entry((snap.file, snap.machine))
            .or_default()
            .push(snap);
    }
    for ctx in input.contexts {
        let format_clock = match ctx.format {
            Format::Json => file_timeline(ctx.file, ctx.machine),
            Format::Systrace => ClockDomain {
                machine: ctx.machine,
                clock_id: clocks::MONOTONIC,
                sequence: 0,
                file: ctx.file,
                shared: false,
            },
            Format::Strace => ClockDomain {
                machine: ctx.machine,
                clock_id: clocks::REALTIME,
                sequence: 0,
                file: ctx.file,
                shared: false,
            },
            // A proto's deferred clock is BOOTTIME whatever its default clock (which only
            // decides its claim and its clockless packets): the fall-backs join that.
            Format::Proto => ClockDomain {
                machine: ctx.machine,
                clock_id: clocks::BOOTTIME,
                sequence: 0,
                file: ctx.file,
                shared: false,
            },
        };
        // Text formats claim trace time when their file starts.
        if trace_time.is_none() {
            match ctx.format {
                Format::Json => trace_time = Some(format_clock),
                Format::Systrace => trace_time = Some(builtin(ctx.machine, clocks::MONOTONIC)),
                Format::Strace => trace_time = Some(builtin(ctx.machine, clocks::REALTIME)),
                Format::Proto => {}
            }
        }
        let clock = p.node_in_context(format_clock);
        let now =
            |t: Option<ClockDomain>| t.unwrap_or_else(|| file_timeline(0, input.first_machine));
        // The context's fall-backs are decided at its first conversion: converting its
        // first snapshot's readings for `clock_snapshot`, or its first event. An event read
        // before the context's first own snapshot decides them on the machine's shared
        // clock, and keeps the context from claiming trace time.
        let start = p.start_of_file(ctx.file);
        let mut resolved = false;
        if ctx.early && ctx.converts {
            resolved = true;
            let shared = p.node_in_context(ClockDomain {
                shared: true,
                ..format_clock
            });
            p.bridge(ctx, shared, now(trace_time), start);
        }
        let may_claim = ctx.format == Format::Proto && !ctx.early;
        for snap in by_context
            .remove(&(ctx.file, ctx.machine))
            .unwrap_or_default()
        {
            // A proto claims trace time at its snapshot before the snapshot is added.
            let claim = (trace_time.is_none() && may_claim)
                .then(|| default_clock(snap))
                .flatten()
                .map(|c| builtin(ctx.machine, c));
            if let Err(message) = p.check_snapshot(snap, trace_time.or(claim)) {
                p.reject_snapshot(snap, message, now(trace_time));
                continue;
            }
            // The claim comes first: no twins on the machine that just claimed.
            p.add_snapshot(snap, now(trace_time.or(claim)));
            let at = p.inserted.len() - 1;
            if trace_time.is_none() && may_claim {
                if let Some(c) = default_clock(snap) {
                    trace_time = Some(builtin(ctx.machine, c));
                }
            }
            if !resolved {
                resolved = true;
                p.bridge(ctx, clock, now(trace_time), snap_read_at(snap));
            }
            p.stamp(at, now(trace_time), snap_read_at(snap));
        }
        if ctx.converts && !resolved {
            p.bridge(ctx, clock, now(trace_time), start);
        }
        p.context_clocks.push((ctx.clone(), clock));
        file_targets.insert(ctx.file, now(trace_time));
    }
    // Snapshots of files that have no events still relate clocks.
    let mut rest: Vec<_> = by_context.into_values().flatten().collect();
    rest.sort_by_key(|s| (s.file, s.machine));
    for snap in rest {
        let now = trace_time.unwrap_or_else(|| file_timeline(0, input.first_machine));
        if let Err(message) = p.check_snapshot(snap, trace_time) {
            p.reject_snapshot(snap, message, now);
            continue;
        }
        p.add_snapshot(snap, now);
        let at = p.inserted.len() - 1;
        p.stamp(
            at,
            trace_time.unwrap_or_else(|| file_timeline(0, input.first_machine)),
            snap_read_at(snap),
        );
    }
    p.claimed |= trace_time.is_some();
    p.trace_time = trace_time.unwrap_or_else(|| file_timeline(0, input.first_machine));
    let last = p.trace_time;
    p.targets = file_targets
        .into_iter()
        .filter(|&(_, t)| t != last)
        .collect();
    p
}

/// A clock as the reference's clock-sync errors print it: the id, with its sequence, file
/// and machine when any is set (`6`, `64(seq=1,tf=0,m=0)`).
pub fn clock_label_for_errors(node: &ClockDomain) -> String {
    if node.sequence == 0 && node.file == 0 && node.machine == 0 {
        node.clock_id.to_string()
    } else {
        format!(
            "{}(seq={},tf={},m={})",
            node.clock_id, node.sequence, node.file, node.machine
        )
    }
}

/// A readable name of a clock node, e.g. `phone BOOTTIME` or `app.json timeline`.
pub fn label(
    node: &ClockDomain,
    machine_name: &dyn Fn(MachineId) -> String,
    file_name: &dyn Fn(u32) -> String,
) -> String {
    let machine = machine_name(node.machine);
    if node.clock_id == clocks::TRACE_FILE {
        return format!("{} timeline ({machine})", file_name(node.file));
    }
    let clock = match clocks::name(node.clock_id) {
        Some(n) => n.to_string(),
        None if SEQUENCE_CLOCKS.contains(&node.clock_id) => {
            format!("clock {} (sequence {})", node.clock_id, node.sequence)
        }
        None => format!("clock {}", node.clock_id),
    };
    if node.file != 0 {
        format!("{machine} {clock} [{}]", file_name(node.file))
    } else {
        format!("{machine} {clock}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(file: u32, machine: MachineId, readings: &[(u32, i64)]) -> ClockSnapshot {
        ClockSnapshot {
            machine,
            file,
            primary_trace_clock: None,
            readings: readings
                .iter()
                .map(|&(c, v)| {
                    (
                        ClockDomain {
                            machine,
                            clock_id: c,
                            sequence: 0,
                            file,
                            shared: false,
                        },
                        v,
                    )
                })
                .collect(),
            units: Vec::new(),
            relates_only: false,
            read_at: 0,
        }
    }

    fn proto(file: u32, machine: MachineId) -> Context {
        Context {
            file,
            machine,
            format: Format::Proto,
            converts: true,
            early: false,
        }
    }

    fn raw(file: u32, machine: MachineId, clock_id: u32) -> ClockDomain {
        ClockDomain {
            machine,
            clock_id,
            sequence: 0,
            file,
            shared: false,
        }
    }

    const BOOT: u32 = clocks::BOOTTIME;
    const REAL: u32 = clocks::REALTIME;

    #[test]
    fn realtime_rendezvous_places_a_second_machine() {
        let snaps = [
            snap(1, 0, &[(BOOT, 1_000), (REAL, 1_700_000)]),
            snap(2, 1, &[(BOOT, 5_000), (REAL, 1_700_000)]),
        ];
        let p = place(&PlacementInput {
            contexts: &[proto(1, 0), proto(2, 1)],
            snapshots: &snaps,
            manifest: &ManifestClocks::default(),
            forced_trace_time: None,
            first_machine: 0,
            spans: &HashMap::new(),
        });
        assert_eq!(p.trace_time, builtin(0, BOOT));
        assert_eq!(
            p.convert(raw(2, 1, clocks::PACKET_DEFAULT), 5_100),
            Some(1_100)
        );
        assert!(p
            .inserted
            .iter()
            .any(|s| s.source == EdgeSource::RealtimeRendezvous));
    }

    #[test]
    fn same_domain_when_the_peer_has_no_realtime() {
        let snaps = [
            snap(1, 0, &[(BOOT, 1_000), (REAL, 1_700_000)]),
            snap(2, 1, &[(BOOT, 1_000)]),
        ];
        let p = place(&PlacementInput {
            contexts: &[proto(1, 0), proto(2, 1)],
            snapshots: &snaps,
            manifest: &ManifestClocks::default(),
            forced_trace_time: None,
            first_machine: 0,
            spans: &HashMap::new(),
        });
        assert_eq!(p.convert(raw(2, 1, BOOT), 3_000), Some(3_000));
    }

    #[test]
    fn different_domains_are_never_equated() {
        let snaps = [
            snap(1, 0, &[(BOOT, 1_000), (REAL, 1_700_000)]),
            snap(2, 1, &[(BOOT, 1_000)]),
        ];
        let manifest = ManifestClocks {
            trace_time: Some(builtin(0, REAL)),
            edges: vec![],
        };
        let p = place(&PlacementInput {
            contexts: &[proto(1, 0), proto(2, 1)],
            snapshots: &snaps,
            manifest: &manifest,
            forced_trace_time: None,
            first_machine: 0,
            spans: &HashMap::new(),
        });
        assert_eq!(p.convert(raw(1, 0, BOOT), 1_100), Some(1_700_100));
        assert_eq!(p.plan(raw(2, 1, BOOT)), Plan::Drop(Failure::NoPath));
        assert_eq!(p.unrelatable.len(), 1);
    }

    #[test]
    fn a_pinned_timeline_follows_its_offset() {
        let snaps = [snap(1, 0, &[(BOOT, 1_000)])];
        let manifest = ManifestClocks {
            trace_time: None,
            edges: vec![ManifestEdge {
                from: file_timeline(2, 1),
                to: builtin(0, BOOT),
                offset_ns: 500,
                file: 2,
            }],
        };
        let json = Context {
            file: 2,
            machine: 1,
            format: Format::Json,
            converts: true,
            early: false,
        };
        let p = place(&PlacementInput {
            contexts: &[proto(1, 0), json],
            snapshots: &snaps,
            manifest: &manifest,
            forced_trace_time: None,
            first_machine: 0,
            spans: &HashMap::new(),
        });
        assert_eq!(
            p.convert(raw(2, 1, clocks::TRACE_FILE), 2_000_000),
            Some(2_000_500)
        );
    }

    /// A second file on a machine reads the machine's clocks until its own snapshot.
    #[test]
    fn a_clock_read_before_the_files_own_snapshot_is_the_machines() {
        const MONO: u32 = clocks::MONOTONIC;
        let snaps = [
            snap(1, 0, &[(BOOT, 1_000), (MONO, 0)]),
            snap(2, 0, &[(BOOT, 90_000), (MONO, 0)]),
        ];
        let p = place(&PlacementInput {
            contexts: &[proto(1, 0), proto(2, 0)],
            snapshots: &snaps,
            manifest: &ManifestClocks::default(),
            forced_trace_time: None,
            first_machine: 0,
            spans: &HashMap::new(),
        });
        let early = ClockDomain {
            shared: true,
            ..raw(2, 0, MONO)
        };
        assert_eq!(p.convert(early, 2_000), Some(3_000));
        assert_eq!(p.convert(raw(2, 0, MONO), 500), Some(90_500));
        assert!(p.used_primary(&early));
        assert!(!p.used_primary(&raw(2, 0, MONO)));
        // The first file's clocks are the machine's anyway.
        assert!(!p.used_primary(&ClockDomain {
            shared: true,
            ..raw(1, 0, MONO)
        }));
    }

    #[test]
    fn a_proto_without_snapshots_is_taken_as_it_is() {
        let p = place(&PlacementInput {
            contexts: &[proto(1, 0)],
            snapshots: &[],
            manifest: &ManifestClocks::default(),
            forced_trace_time: None,
            first_machine: 0,
            spans: &HashMap::new(),
        });
        assert!(!p.claimed);
        assert_eq!(p.convert(raw(1, 0, clocks::PACKET_DEFAULT), 42), Some(42));
    }
}
