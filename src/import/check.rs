//! Checks of a manifest against the parsed files it places, beyond the document's own
//! rules: the reader's rules that need the files (a PIN on a file with clock snapshots, a
//! `machine` or a PIN on a multi-machine file), syncs that place nothing (and why), offsets
//! that carry a timestamp out of its range, machine names a trace overrides with its own
//! (SystemInfo `machine_name` wins, as in Trace Processor, behaviour-merging.md §6).
//!
//! `sextant merge` runs them before it writes, the explorer's editor before it applies, so
//! the two agree with each other and with a new import of what they write.

use std::collections::HashSet;

use super::*;
use crate::ir::clocks;

/// Per raw clock (index into `sink.clocks`): events, and the earliest and latest raw time.
#[derive(Clone, Copy, Debug)]
pub(super) struct ClockSpan {
    pub count: u64,
    pub earliest: i64,
    pub latest: i64,
}

/// What the checks found: problems refuse the manifest, notes only inform.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Findings {
    pub problems: Vec<String>,
    pub notes: Vec<String>,
}

impl Session {
    /// The n-th trace file's index in `files` (what a manifest's `path` names).
    pub(super) fn trace_file_index(&self, member: &str) -> Option<u32> {
        let at = self.member_names().iter().position(|n| n == member)?;
        self.files
            .iter()
            .enumerate()
            .filter(|(_, f)| !f.is_container && f.trace_type != "perfetto_manifest")
            .nth(at)
            .map(|(i, _)| i as u32)
    }

    /// The machines a file's packets are on.
    pub(super) fn machines_of(&self, file: u32) -> Vec<MachineId> {
        let mut out: Vec<MachineId> = Vec::new();
        for c in self.contexts.iter().filter(|c| c.file == file) {
            if !out.contains(&c.machine) {
                out.push(c.machine);
            }
        }
        out
    }

    pub(super) fn trace_type(&self, file: u32) -> &'static str {
        self.files.get(file as usize).map_or("", |f| f.trace_type)
    }

    pub(super) fn has_snapshots(&self, file: u32) -> bool {
        self.sink.snapshots.iter().any(|s| s.file == file)
    }

    /// Events, earliest and latest raw time per raw clock.
    pub(super) fn clock_spans(&self) -> Vec<ClockSpan> {
        let sink = &self.sink;
        let mut spans = vec![
            ClockSpan {
                count: 0,
                earliest: i64::MAX,
                latest: i64::MIN,
            };
            sink.clocks.len()
        ];
        for ev in &sink.events {
            let (c, data) = &sink.payloads[ev.payload as usize];
            if let Some(s) = spans.get_mut(*c as usize) {
                if data.counts_as_event() {
                    s.count += 1;
                    s.earliest = s.earliest.min(ev.ts);
                    s.latest = s.latest.max(ev.ts);
                }
            }
        }
        spans
    }

    /// The rules the reader applies while it parses the files (behaviour-merging.md §6 and
    /// §8 "raised outside the manifest"), for a manifest applied without parsing again.
    pub(super) fn check_parse_rules(&self, m: &Manifest) -> Result<(), ImportError> {
        for entry in &m.files {
            let Some(file) = self.trace_file_index(&entry.path) else {
                continue;
            };
            let fail = |error| ImportError::Manifest {
                file: entry.path.clone(),
                error,
            };
            let multi = self.machines_of(file).len() > 1;
            if multi && entry.machine.is_some() {
                return Err(fail(ManifestError::MachineOnMultiMachineFile));
            }
            let Some(clocks) = &entry.clocks else {
                continue;
            };
            if clocks.is_pin() {
                if self.trace_type(file) == "proto" && self.has_snapshots(file) {
                    return Err(fail(ManifestError::PinWithSnapshots));
                }
                if multi {
                    return Err(fail(ManifestError::PinOnMultiMachineFile));
                }
            }
        }
        Ok(())
    }

    /// Syncs that place nothing, syncs that repeat or contradict another, offsets that
    /// carry a timestamp out of range; and the machine names the traces override.
    pub(super) fn findings(
        &self,
        m: &Manifest,
        clocks: &ManifestClocks,
        placement: &Placement,
        registry: &MachineRegistry,
        spans: &[ClockSpan],
    ) -> Findings {
        let mut out = Findings::default();
        self.sync_findings(m, clocks, placement, spans, &mut out.problems);
        self.overflow_findings(placement, spans, &mut out.problems);
        self.name_findings(m, registry, &mut out.notes);
        out
    }

    /// The findings for the manifest in effect (what `sextant merge` imported).
    pub fn findings_in_effect(&self) -> Findings {
        let m = self.manifest();
        let placement = self.placement_with(&self.manifest_clocks);
        let spans = self.clock_spans();
        self.findings(
            &m,
            &self.manifest_clocks,
            &placement,
            &self.sink.machine_registry,
            &spans,
        )
    }

    fn sync_findings(
        &self,
        m: &Manifest,
        clocks: &ManifestClocks,
        placement: &Placement,
        spans: &[ClockSpan],
        problems: &mut Vec<String>,
    ) {
        let sink = &self.sink;
        // The manifest relations some event's conversion goes through.
        let mut used: HashSet<(ClockDomain, ClockDomain)> = HashSet::new();
        for (c, span) in spans.iter().enumerate() {
            if span.count == 0 {
                continue;
            }
            if let Plan::Path(path) = placement.plan(*sink.clocks.get(c as u32)) {
                for e in path {
                    if let Some((a, b, rel)) = placement.graph.relation(e) {
                        if rel.source == clock::EdgeSource::Manifest {
                            used.insert((a, b));
                            used.insert((b, a));
                        }
                    }
                }
            }
        }
        let events_of = |file: u32| -> u64 {
            spans
                .iter()
                .enumerate()
                .filter(|(c, _)| sink.clocks.get(*c as u32).file == file)
                .map(|(_, s)| s.count)
                .sum()
        };
        // The clock most of a file's events are on, as a manifest names it.
        let main_clock = |file: u32| -> &'static str {
            let mut best: Option<(u64, u32)> = None;
            for (c, s) in spans.iter().enumerate() {
                let d = sink.clocks.get(c as u32);
                if d.file == file
                    && s.count > 0
                    && manifest::clock_name(d.clock_id).is_some()
                    && best.is_none_or(|(n, _)| s.count > n)
                {
                    best = Some((s.count, d.clock_id));
                }
            }
            best.and_then(|(_, c)| manifest::clock_name(c))
                .unwrap_or("BOOTTIME")
        };
        let kind = |file: u32| match self.trace_type(file) {
            "proto" => "Perfetto protobuf",
            "json" => "JSON",
            "systrace" => "systrace",
            other => other,
        };
        let entries = m.files.iter().filter(|e| e.clocks.is_some());
        let mut seen: Vec<(ClockDomain, ClockDomain, &str)> = Vec::new();
        for (entry, edge) in entries.zip(&clocks.edges) {
            let Some(over) = &entry.clocks else { continue };
            let name = &entry.path;
            let target = &over.sync_to.file;
            if edge.from == edge.to {
                let json = self
                    .trace_file_index(name)
                    .is_some_and(|f| self.trace_type(f) == "json");
                let clock_name = |c: Option<u32>| {
                    c.and_then(manifest::clock_name)
                        .map_or_else(|| "own timeline".to_string(), str::to_string)
                };
                let mut text = if name == target {
                    format!(
                        "{name} is synced to itself ({} to {}): a sync relates two different \
                         clocks (the reader refuses a clock related to itself)",
                        clock_name(over.clock),
                        clock_name(over.sync_to.clock)
                    )
                } else {
                    format!(
                        "{name}'s {} and {target}'s {} are one clock (the two files are on one \
                         machine), so the sync relates a clock to itself, which moves nothing \
                         (the reader refuses it)",
                        clock_name(over.clock),
                        clock_name(over.sync_to.clock)
                    )
                };
                if json && over.clock.is_some() {
                    text.push_str(&format!(
                        "; {name} is a JSON trace: pin its own timeline instead (--sync \
                         {name}={target}:{},OFFSET)",
                        clock_name(over.sync_to.clock)
                    ));
                }
                problems.push(text);
                continue;
            }
            if let Some((_, _, first)) = seen.iter().find(|(a, b, _)| {
                (*a, *b) == (edge.from, edge.to) || (*b, *a) == (edge.from, edge.to)
            }) {
                problems.push(format!(
                    "{name} and {target} are synced to each other twice (by {first}'s sync and \
                     by {name}'s): the two relate the same clocks; keep one"
                ));
                continue;
            }
            seen.push((edge.from, edge.to, name));
            let Some(file) = self.trace_file_index(name) else {
                continue;
            };
            if events_of(file) == 0 || used.contains(&(edge.from, edge.to)) {
                continue;
            }
            let target_file = self.trace_file_index(target);
            let reason = if let Some(c) = over.clock.filter(|_| self.trace_type(file) == "json") {
                format!(
                    "{name} is a JSON trace: its events are on its own timeline, not on its {}, \
                     so relating that clock moves nothing; pin its own timeline instead (no \
                     clock after the file: --sync {name}={target}…)",
                    manifest::clock_name(c).unwrap_or("clock")
                )
            } else if over.is_pin() && self.trace_type(file) != "json" {
                format!(
                    "{name} is a {} trace: its events are on its clocks, not on its own \
                     timeline, so pinning that timeline moves nothing; relate one of its clocks \
                     instead (--sync {name}:{}={target}…)",
                    kind(file),
                    main_clock(file)
                )
            } else if let Some(t) = target_file
                .filter(|&t| over.sync_to.clock.is_none() && self.trace_type(t) != "json")
            {
                format!(
                    "{target}'s own timeline places none of its events ({target} is a {} trace, \
                     placed by its clocks), so a sync to it moves nothing; name one of its \
                     clocks (--sync {name}={target}:{})",
                    kind(t),
                    main_clock(t)
                )
            } else {
                format!(
                    "the sync of {name} moves nothing: its events reach trace time another way \
                     (see where it lands below), not through the clocks this sync relates"
                )
            };
            problems.push(reason);
        }
    }

    fn overflow_findings(
        &self,
        placement: &Placement,
        spans: &[ClockSpan],
        problems: &mut Vec<String>,
    ) {
        let mut files: Vec<u32> = Vec::new();
        for (c, span) in spans.iter().enumerate() {
            if span.count == 0 {
                continue;
            }
            let d = *self.sink.clocks.get(c as u32);
            let Plan::Path(path) = placement.plan(d) else {
                continue;
            };
            let fits = [span.earliest, span.latest]
                .iter()
                .all(|&v| placement.graph.checked_convert_along(&path, v).is_some());
            if !fits && !files.contains(&d.file) {
                files.push(d.file);
            }
        }
        for f in files {
            problems.push(format!(
                "{}: its events would land outside the range of a timestamp (±9223372036854775807 \
                 ns): the offsets that place it add up to too much",
                self.file_names
                    .get(f as usize)
                    .map_or("a file", String::as_str)
            ));
        }
    }

    /// Names the manifest gives machines that the traces name themselves.
    fn name_findings(&self, m: &Manifest, registry: &MachineRegistry, notes: &mut Vec<String>) {
        for entry in &m.files {
            let names = entry
                .machine
                .iter()
                .map(String::as_str)
                .chain(entry.machines.iter().flatten().map(|x| x.name.as_str()));
            for name in names {
                let Some(id) = registry
                    .records
                    .iter()
                    .position(|r| r.name.as_deref() == Some(name))
                else {
                    continue;
                };
                let own = self
                    .sink
                    .machines
                    .get(&(id as MachineId))
                    .and_then(|i| i.name.as_deref());
                if let Some(own) = own.filter(|own| *own != name) {
                    let note = format!(
                        "{}: the trace names machine {name:?} itself {own:?} (SystemInfo \
                         machine_name), and the trace's name wins over the manifest's, as in \
                         Perfetto: the machine shows as {own:?}",
                        entry.path
                    );
                    if !notes.contains(&note) {
                        notes.push(note);
                    }
                }
            }
        }
    }

    /// When a merge drops events: what would keep them, as `sextant merge` options.
    pub fn drop_advice(&self) -> Vec<String> {
        let mut out = Vec::new();
        let now = self.manifest();
        let current = self.candidates.iter().find(|c| c.current);
        if let Some(c) = current {
            let clock = self.clock_node(c.node);
            if clock.is_some_and(|d| d.clock_id == clocks::TRACE_FILE) {
                out.push(format!(
                    "trace time is {}: the first JSON file in processing order (by name) claims \
                     its own timeline, and a manifest cannot put trace time on a file's \
                     timeline, so whatever is placed before it is dropped; put trace time on a \
                     clock and relate the files to it instead, e.g. --trace-time BOOTTIME with \
                     --sync LATER.json=EARLIER.json:BOOTTIME,OFFSET",
                    c.label
                ));
            }
        }
        for c in self
            .candidates
            .iter()
            .filter(|c| !c.current && c.dropped_events == 0)
        {
            let Some(d) = self.clock_node(c.node) else {
                continue;
            };
            let Some(clock) = manifest::clock_name(d.clock_id) else {
                continue;
            };
            if d.file != 0 || d.sequence != 0 {
                continue;
            }
            // A file on that machine, and the machine's name when the file has several.
            let registry = &self.sink.machine_registry;
            let option = self.member_names().into_iter().find_map(|member| {
                let file = self.trace_file_index(&member)?;
                let machines = self.machines_of(file);
                if !machines.contains(&d.machine) {
                    return None;
                }
                match now.entry(&member).and_then(|e| e.machines.as_ref()) {
                    Some(block) => {
                        let name = registry.records.get(d.machine as usize)?.name.clone()?;
                        block
                            .iter()
                            .any(|m| m.name == name)
                            .then(|| format!("{member}@{name}"))
                    }
                    None => (machines.first() == Some(&d.machine)).then_some(member),
                }
            });
            if let Some(file) = option {
                out.push(format!(
                    "--trace-time {clock}={file} drops nothing (trace time on {})",
                    c.label
                ));
            }
            if out.len() >= 4 {
                break;
            }
        }
        out
    }

    /// The machine name a database shows: the trace's own (SystemInfo) first, then the
    /// manifest's, as the model writes `machine.name`.
    pub(super) fn shown_machine_name(&self, registry: &MachineRegistry, id: MachineId) -> String {
        self.sink
            .machines
            .get(&id)
            .and_then(|m| m.name.clone())
            .or_else(|| {
                registry
                    .records
                    .get(id as usize)
                    .and_then(|r| r.name.clone())
            })
            .unwrap_or_else(|| match registry.records.get(id as usize) {
                Some(r) if r.raw_id != 0 => format!("machine {}", r.raw_id),
                _ => "the host".into(),
            })
    }
}
