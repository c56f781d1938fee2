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

/// What an edited manifest would do.
#[derive(Clone, Debug, PartialEq)]
pub struct ManifestPreview {
    /// The manifest as it would be applied (a machine renamed for one file is renamed for
    /// every file on it).
    pub manifest: Manifest,
    pub files: Vec<FilePreview>,
    /// What to know before applying: names the traces override, machines renamed for
    /// several files.
    pub notes: Vec<String>,
}

/// A trace file of the session, as the editor offers it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Member {
    /// The member name (what a manifest's `path` names).
    pub name: String,
    /// `proto`, `json`, `systrace`, …: what a sync of it can move (a PIN moves a JSON
    /// trace's own timeline; the others are placed by their clocks).
    pub trace_type: String,
    /// The file has clock snapshots of its own.
    pub has_snapshots: bool,
    /// A multi-machine file's embedded machine ids and the names they show with (empty for
    /// a file on one machine).
    pub machines: Vec<(u32, String)>,
}

impl Session {
    /// The trace files, with what the editor needs to know of each.
    pub fn members(&self) -> Vec<Member> {
        let now = self.manifest();
        let registry = &self.sink.machine_registry;
        self.member_names()
            .into_iter()
            .map(|name| {
                let Some(file) = self.trace_file_index(&name) else {
                    return Member {
                        name,
                        ..Member::default()
                    };
                };
                let ids = self.machines_of(file);
                let block = now.entry(&name).and_then(|e| e.machines.clone());
                let machines = match block {
                    Some(list) => list.iter().map(|m| (m.id, m.name.clone())).collect(),
                    None if ids.len() > 1 => ids
                        .iter()
                        .filter_map(|&id| {
                            let raw =
                                u32::try_from(registry.records.get(id as usize)?.raw_id).ok()?;
                            Some((raw, self.shown_machine_name(registry, id)))
                        })
                        .collect(),
                    None => Vec::new(),
                };
                Member {
                    trace_type: self.trace_type(file).to_string(),
                    has_snapshots: self.has_snapshots(file),
                    machines,
                    name,
                }
            })
            .collect()
    }

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

    /// Checks `m` with the reader's rules (the document's, and those it applies while
    /// parsing) and resolves its clocks on a copy of the machine registry (renamed as `m`
    /// names the files' machines).
    fn resolve(&self, m: &Manifest) -> Result<(ManifestClocks, MachineRegistry), ImportError> {
        let fail = |error| ImportError::Manifest {
            file: self.input_name.clone(),
            error,
        };
        let checked = manifest::parse(crate::merge::to_json(m).as_bytes()).map_err(fail)?;
        checked.check_references().map_err(fail)?;
        self.check_parse_rules(m)?;
        let mut registry = self.sink.machine_registry.clone();
        self.rename_machines(m, &mut registry)?;
        let file_index = |path: &str| self.trace_file_index(path);
        let clocks = manifest_setup::resolve_clocks(&checked, &file_index, &mut registry, false)
            .map_err(fail)?;
        Ok((clocks, registry))
    }

    /// `m` as it can be applied without parsing again: a machine renamed for one file is
    /// renamed for every file on it (they share one machine in the session, and a new import
    /// of the written manifest must put them on one machine too). Says what it changed.
    fn normalize(&self, m: &Manifest) -> Result<(Manifest, Vec<String>), ImportError> {
        let now = self.manifest();
        let mut out = m.clone();
        let mut notes = Vec::new();
        let refuse = |file: &str, why: String| ImportError::Manifest {
            file: file.to_string(),
            error: ManifestError::Edit(why),
        };
        for entry in &m.files {
            let Some(old_entry) = now.entry(&entry.path) else {
                continue;
            };
            if entry.machines.is_none() && old_entry.machines.is_some() {
                return Err(refuse(
                    &entry.path,
                    "removing a machines block needs the file to be imported again (sextant merge)"
                        .into(),
                ));
            }
            if entry.machines.is_some() {
                continue;
            }
            let (old, new) = (old_entry.base_machine(), entry.base_machine());
            if old == new {
                continue;
            }
            let Some(new) = new else {
                return Err(refuse(
                    &entry.path,
                    format!(
                        "removing the machine name {:?} needs the file to be imported again \
                         (sextant merge); rename the machine instead",
                        old.unwrap_or_default()
                    ),
                ));
            };
            let Some(file) = self.trace_file_index(&entry.path) else {
                continue;
            };
            let Some(&machine) = self.machines_of(file).first() else {
                continue;
            };
            let mut sharing = vec![entry.path.clone()];
            for other in out.files.iter_mut() {
                if other.path == entry.path || other.machines.is_some() {
                    continue;
                }
                let Some(f) = self.trace_file_index(&other.path) else {
                    continue;
                };
                let unchanged =
                    now.entry(&other.path).and_then(|e| e.base_machine()) == other.base_machine();
                if unchanged && self.machines_of(f).contains(&machine) {
                    other.machine = Some(new.to_string());
                    sharing.push(other.path.clone());
                }
            }
            if sharing.len() > 1 {
                notes.push(format!(
                    "renames machine {} to {new:?} for every file on it: {} (to put {} on a \
                     machine of its own, merge again: sextant merge … --machine {}={new})",
                    old.map_or_else(|| "the host".to_string(), |o| format!("{o:?}")),
                    sharing.join(", "),
                    entry.path,
                    entry.path
                ));
            }
        }
        Ok((out, notes))
    }

    /// Renames the machines whose files `m` gives other names (a `machine`, the id-0 name
    /// of a `machines` block, or the names of a multi-machine file's embedded ids).
    fn rename_machines(
        &self,
        m: &Manifest,
        registry: &mut MachineRegistry,
    ) -> Result<(), ImportError> {
        let now = self.manifest();
        let original = &self.sink.machine_registry;
        let edit = |file: &str, e: String| ImportError::Manifest {
            file: file.to_string(),
            error: ManifestError::Edit(e.replace("FILE=", &format!("{file}="))),
        };
        for entry in &m.files {
            let Some(file) = self.trace_file_index(&entry.path) else {
                continue;
            };
            let old = now.entry(&entry.path);
            if let Some(list) = &entry.machines {
                // Each embedded id's machine in the session: by the old block's name, or by
                // its raw id when the file had no block.
                let old_list = old.and_then(|e| e.machines.as_ref());
                let machines = self.machines_of(file);
                let machine_of_id = |id: u32| -> Option<MachineId> {
                    match old_list {
                        Some(l) => {
                            let name = l.iter().find(|x| x.id == id)?.name.as_str();
                            machines.iter().copied().find(|&mid| {
                                original
                                    .records
                                    .get(mid as usize)
                                    .and_then(|r| r.name.as_deref())
                                    == Some(name)
                            })
                        }
                        None => machines.iter().copied().find(|&mid| {
                            original
                                .records
                                .get(mid as usize)
                                .is_some_and(|r| r.raw_id == i64::from(id))
                        }),
                    }
                };
                // Every machine of the data must keep a name (the reader refuses a packet
                // from an undeclared id).
                for &mid in &machines {
                    let declared = list.iter().any(|x| machine_of_id(x.id) == Some(mid));
                    if !declared {
                        let id = match old_list {
                            Some(l) => l
                                .iter()
                                .find(|x| {
                                    original
                                        .records
                                        .get(mid as usize)
                                        .and_then(|r| r.name.as_deref())
                                        == Some(x.name.as_str())
                                })
                                .map(|x| i64::from(x.id)),
                            None => original.records.get(mid as usize).map(|r| r.raw_id),
                        };
                        return Err(edit(
                            &entry.path,
                            match id {
                                Some(id) => format!(
                                    "the file has packets from machine id {id}: give it a name \
                                     in the machines block too"
                                ),
                                None => "every machine of the file needs a name in the machines \
                                         block"
                                    .to_string(),
                            },
                        ));
                    }
                }
                for x in list {
                    if let Some(mid) = machine_of_id(x.id) {
                        registry
                            .rename(mid, &x.name)
                            .map_err(|e| edit(&entry.path, e))?;
                    }
                }
                continue;
            }
            let Some(new) = entry.base_machine() else {
                continue;
            };
            if old.and_then(|e| e.base_machine()) == Some(new) {
                continue;
            }
            // The machine the file's own data is on.
            let Some(&machine) = self.machines_of(file).first() else {
                continue;
            };
            registry
                .rename(machine, new)
                .map_err(|e| edit(&entry.path, e))?;
        }
        Ok(())
    }

    pub(super) fn placement_with(&self, clocks: &ManifestClocks) -> Placement {
        clock::place(&PlacementInput {
            contexts: &self.contexts,
            snapshots: &self.sink.snapshots,
            manifest: clocks,
            forced_trace_time: None,
            first_machine: self.first_machine,
            spans: &self.sink.file_spans,
        })
    }

    /// Where each file would land with manifest `m`, against where it is now; nothing is
    /// written. An edit the reader would refuse, or one that would place nothing (a sync
    /// that moves nothing, an offset out of range), is an error that says why.
    pub fn preview_manifest(&self, m: &Manifest) -> Result<ManifestPreview, ImportError> {
        let (m, mut notes) = self.normalize(m)?;
        let (clocks, registry) = self.resolve(&m)?;
        let now = self.placement_with(&self.manifest_clocks);
        let then = self.placement_with(&clocks);
        let spans = self.clock_spans();
        let findings = self.findings(&m, &clocks, &then, &registry, &spans);
        if !findings.problems.is_empty() {
            return Err(ImportError::Refused(findings.problems.join("; ")));
        }
        notes.extend(findings.notes);
        let sink = &self.sink;
        let n = sink.clocks.len();
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
                if spans[c].count == 0 {
                    continue;
                }
                match convert(p, c, spans[c].earliest) {
                    None => lost[c] = spans[c].count,
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
        let machine_names: Vec<String> = (0..registry.records.len())
            .map(|i| self.shown_machine_name(&registry, i as MachineId))
            .collect();
        let per_clock = report::events_per_clock(sink);
        let report = Report::new(&then, sink, &machine_names, &self.file_names, &per_clock);
        let mut files = Vec::new();
        for ctx in &self.contexts {
            let clocks_of: Vec<usize> = (0..n)
                .filter(|&c| {
                    let d = sink.clocks.get(c as u32);
                    d.file == ctx.file && d.machine == ctx.machine
                })
                .collect();
            let mut events = 0;
            let (mut dropped, mut dropped_now) = (0, 0);
            // How far the file moves: read on the clock most of its events are on (untimed
            // rows, and packets that name no clock in a file without one, never move).
            let mut shift: Option<(u64, i64)> = None;
            for &c in &clocks_of {
                let span = spans[c];
                events += span.count;
                if span.count == 0 {
                    continue;
                }
                dropped += lost_then[c];
                dropped_now += lost_now[c];
                let d = *sink.clocks.get(c as u32);
                let unconverted = matches!(
                    d.clock_id,
                    crate::ir::clocks::UNTIMED
                        | crate::ir::clocks::LATEST
                        | crate::ir::clocks::UNCONVERTED
                );
                if unconverted || then.node_of(d).is_none() {
                    continue;
                }
                let (a, b) = (
                    convert(&now, c, span.earliest),
                    convert(&then, c, span.earliest),
                );
                if let (Some(a), Some(b)) = (a, b) {
                    if shift.is_none_or(|(most, _)| span.count > most) {
                        shift = Some((span.count, b.wrapping_sub(a)));
                    }
                }
            }
            let shift = match shift {
                Some((_, s)) => Some(s),
                // Nothing converts: it stays where it is, unless it cannot be placed at all.
                None if dropped < events || events == 0 => Some(0),
                None => None,
            };
            let path = report
                .files
                .iter()
                .find(|f| f.file == ctx.file && f.machine == ctx.machine)
                .map(|f| f.path.clone())
                .unwrap_or_default();
            files.push(FilePreview {
                file: self
                    .file_names
                    .get(ctx.file as usize)
                    .cloned()
                    .unwrap_or_default(),
                machine: machine_names
                    .get(ctx.machine as usize)
                    .cloned()
                    .unwrap_or_default(),
                path,
                shift_ns: shift,
                events,
                dropped,
                dropped_now,
            });
        }
        Ok(ManifestPreview {
            manifest: m,
            files,
            notes,
        })
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
        let (m, _) = self.normalize(&m)?;
        let (clocks, registry) = self.resolve(&m)?;
        let spans = self.clock_spans();
        let findings = self.findings(
            &m,
            &clocks,
            &self.placement_with(&clocks),
            &registry,
            &spans,
        );
        if !findings.problems.is_empty() {
            return Err(ImportError::Refused(findings.problems.join("; ")));
        }
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
