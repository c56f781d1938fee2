//! Editing the manifest of an imported session — machine names, clock syncs, trace time —
//! and re-placing the files with it without parsing them again, as a trace_time switch
//! does. Before anything is written, a preview says where each file would land, how far its
//! events move and what would be dropped. The result can be written as a new archive: the
//! files as they were read, and the edited manifest.

use std::io::Read;

use super::*;
use crate::clock::PlacementInput;

/// Where one file would land under an edited manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePreview {
    pub file: String,
    pub machine: String,
    /// How the file reaches trace time (or why it cannot).
    pub path: String,
    /// How far its first event moves (None when it has none, or is dropped either way).
    pub shift_ns: Option<i64>,
    pub events: u64,
    /// Events that would be dropped (no path to trace time, or before its start).
    pub dropped: u64,
    /// Events dropped as things are now.
    pub dropped_now: u64,
}

impl Session {
    /// The manifest in effect: the input's (as edited), or one with an entry per trace file
    /// and nothing else when it has none.
    pub fn manifest(&self) -> Manifest {
        let mut m = self.manifest.clone().unwrap_or_default();
        for name in self.member_names() {
            if m.entry(&name).is_none() {
                m.files.push(manifest::FileEntry {
                    path: name,
                    machine: None,
                    machines: None,
                    clocks: None,
                });
            }
        }
        m
    }

    /// The member names of the trace files (what a manifest's `path` names).
    pub fn member_names(&self) -> Vec<String> {
        self.files
            .iter()
            .enumerate()
            .filter(|(_, f)| !f.is_container && f.trace_type != "perfetto_manifest")
            .map(|(i, f)| match f.name.as_deref() {
                Some(n) if !n.is_empty() => n.to_string(),
                _ => self.file_names[i].clone(),
            })
            .collect()
    }

    /// Checks `m` with the reader's rules and resolves its clocks on a copy of the machine
    /// registry (renamed as `m` names the files' machines).
    fn resolve(&self, m: &Manifest) -> Result<(ManifestClocks, MachineRegistry), ImportError> {
        let fail = |error| ImportError::Manifest {
            file: self.input_name.clone(),
            error,
        };
        let checked = manifest::parse(crate::merge::to_json(m).as_bytes()).map_err(fail)?;
        checked.check_references().map_err(fail)?;
        let mut registry = self.sink.machine_registry.clone();
        self.rename_machines(m, &mut registry)
            .map_err(|e| ImportError::Manifest {
                file: self.input_name.clone(),
                error: ManifestError::Edit(e),
            })?;
        let names = self.member_names();
        let file_index = |path: &str| -> Option<u32> {
            let at = names.iter().position(|n| n == path)?;
            // The n-th trace file of the list.
            self.files
                .iter()
                .enumerate()
                .filter(|(_, f)| !f.is_container && f.trace_type != "perfetto_manifest")
                .nth(at)
                .map(|(i, _)| i as u32)
        };
        let clocks =
            manifest_setup::resolve_clocks(&checked, &file_index, &mut registry).map_err(fail)?;
        Ok((clocks, registry))
    }

    /// Renames the machines whose files `m` gives another name.
    fn rename_machines(&self, m: &Manifest, registry: &mut MachineRegistry) -> Result<(), String> {
        let now = self.manifest();
        let names = self.member_names();
        for entry in &m.files {
            let Some(new) = entry.base_machine() else {
                continue;
            };
            let old = now.entry(&entry.path).and_then(|e| e.base_machine());
            if old == Some(new) {
                continue;
            }
            // The machine the file's own data is on.
            let Some(at) = names.iter().position(|n| n == &entry.path) else {
                continue;
            };
            let Some((index, _)) = self
                .files
                .iter()
                .enumerate()
                .filter(|(_, f)| !f.is_container && f.trace_type != "perfetto_manifest")
                .nth(at)
            else {
                continue;
            };
            let Some(ctx) = self.contexts.iter().find(|c| c.file == index as u32) else {
                continue;
            };
            registry.rename(ctx.machine, new)?;
        }
        Ok(())
    }

    fn placement_with(&self, clocks: &ManifestClocks) -> Placement {
        clock::place(&PlacementInput {
            contexts: &self.contexts,
            snapshots: &self.sink.snapshots,
            manifest: clocks,
            forced_trace_time: None,
            first_machine: self.first_machine,
        })
    }

    /// Where each file would land with manifest `m`, against where it is now; nothing is
    /// written.
    pub fn preview_manifest(&self, m: &Manifest) -> Result<Vec<FilePreview>, ImportError> {
        let (clocks, registry) = self.resolve(m)?;
        let now = self.placement_with(&self.manifest_clocks);
        let then = self.placement_with(&clocks);
        let sink = &self.sink;
        // Per raw clock: events, and the earliest raw timestamp.
        let n = sink.clocks.len();
        let mut count = vec![0u64; n];
        let mut earliest = vec![i64::MAX; n];
        for ev in &sink.events {
            let (c, data) = &sink.payloads[ev.payload as usize];
            let c = *c as usize;
            if c < n && data.counts_as_event() {
                count[c] += 1;
                earliest[c] = earliest[c].min(ev.ts);
            }
        }
        let convert = |p: &Placement, c: usize, ts: i64| -> Option<i64> {
            match p.plan(*sink.clocks.get(c as u32)) {
                Plan::Identity => Some(ts),
                Plan::Path(path) => Some(p.graph.convert_along(&path, ts)),
                Plan::Drop(_) => None,
            }
        };
        // Events each placement loses, per clock: all of a clock it cannot convert, and
        // those converted to before zero (a second pass only over clocks at risk).
        let lost = |p: &Placement| -> Vec<u64> {
            let mut lost = vec![0u64; n];
            let mut at_risk = vec![false; n];
            for c in 0..n {
                if count[c] == 0 {
                    continue;
                }
                match convert(p, c, earliest[c]) {
                    None => lost[c] = count[c],
                    Some(first) => at_risk[c] = first < 0,
                }
            }
            if at_risk.contains(&true) {
                for ev in &sink.events {
                    let (c, data) = &sink.payloads[ev.payload as usize];
                    let c = *c as usize;
                    if c < n && at_risk[c] && data.counts_as_event() && !data.keeps_negative_ts() {
                        if let Some(ts) = convert(p, c, ev.ts) {
                            lost[c] += u64::from(ts < 0);
                        }
                    }
                }
            }
            lost
        };
        let (lost_now, lost_then) = (lost(&now), lost(&then));
        let machine_name = |id: MachineId| -> String {
            registry
                .records
                .get(id as usize)
                .and_then(|r| r.name.clone())
                .unwrap_or_else(|| match registry.records.get(id as usize) {
                    Some(r) if r.raw_id != 0 => format!("machine {}", r.raw_id),
                    _ => "the host".into(),
                })
        };
        let names: Vec<String> = self.file_names.clone();
        let machine_names: Vec<String> = (0..registry.records.len())
            .map(|i| machine_name(i as MachineId))
            .collect();
        let per_clock = report::events_per_clock(sink);
        let report = Report::new(&then, sink, &machine_names, &names, &per_clock);
        let mut out = Vec::new();
        for ctx in &self.contexts {
            let clocks_of: Vec<usize> = (0..n)
                .filter(|&c| {
                    let d = sink.clocks.get(c as u32);
                    d.file == ctx.file && d.machine == ctx.machine
                })
                .collect();
            let mut events = 0;
            let (mut dropped, mut dropped_now) = (0, 0);
            let mut shift = None;
            for &c in &clocks_of {
                events += count[c];
                if count[c] == 0 {
                    continue;
                }
                dropped += lost_then[c];
                dropped_now += lost_now[c];
                let (a, b) = (
                    convert(&now, c, earliest[c]),
                    convert(&then, c, earliest[c]),
                );
                if let (Some(a), Some(b), None) = (a, b, shift) {
                    shift = Some(b - a);
                }
            }
            let path = report
                .files
                .iter()
                .find(|f| f.file == ctx.file && f.machine == ctx.machine)
                .map(|f| f.path.clone())
                .unwrap_or_default();
            out.push(FilePreview {
                file: names.get(ctx.file as usize).cloned().unwrap_or_default(),
                machine: machine_name(ctx.machine),
                path,
                shift_ns: shift,
                events,
                dropped,
                dropped_now,
            });
        }
        Ok(out)
    }

    /// Re-places every event with manifest `m` and writes a complete new database at
    /// `db_path` (nothing is parsed again).
    pub fn apply_manifest(
        &mut self,
        m: Manifest,
        db_path: &Path,
        progress: &mut dyn FnMut(&Progress),
        cancel: &AtomicBool,
    ) -> Result<ImportSummary, ImportError> {
        let (clocks, registry) = self.resolve(&m)?;
        let old = (
            std::mem::replace(&mut self.manifest_clocks, clocks),
            std::mem::replace(&mut self.sink.machine_registry, registry),
            self.manifest.replace(m),
        );
        self.started = Instant::now();
        if let Err(e) = self.write(db_path, None, true, false, progress, cancel) {
            // The last complete database stands: so does its manifest.
            (
                self.manifest_clocks,
                self.sink.machine_registry,
                self.manifest,
            ) = old;
            return Err(e);
        }
        Ok(self.summary.clone())
    }

    /// Writes the files as they were read and the manifest in effect as a new ZIP at `out`
    /// (never over an existing file).
    pub fn write_archive(&self, out: &Path) -> Result<(), crate::merge::MergeError> {
        if out.exists() {
            return Err(crate::merge::MergeError::Output(format!(
                "{} exists already; Sextant never writes over a file",
                out.display()
            )));
        }
        let names = self.member_names();
        let mut members: Vec<(String, Box<dyn Read>)> = Vec::new();
        let traces = self
            .files
            .iter()
            .enumerate()
            .filter(|(_, f)| !f.is_container && f.trace_type != "perfetto_manifest");
        for ((i, _), name) in traces.zip(names) {
            let Some(data) = self.data.get(i).and_then(Option::as_ref) else {
                continue;
            };
            let opened = data
                .open()
                .map_err(|e| crate::merge::MergeError::Output(format!("{name}: {e}")))?;
            members.push((name, opened.reader));
        }
        let json = crate::merge::to_json(&self.manifest());
        crate::merge::write_zip(out, &json, members)
    }
}
