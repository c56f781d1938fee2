//! The manifest of an import: read from its file, checked, and resolved against the files
//! and the machine registry into the clock edges placement uses and each file's parse
//! context. Hands on [`ManifestClocks`] and [`FileContext`]s.

use super::*;

/// A manifest file's bytes (it is small, and needed whole).
fn read_manifest(file: &TraceFile, name: &str) -> Result<Vec<u8>, ImportError> {
    let read_error = |error| {
        ImportError::Source(SourceError::Read {
            path: name.to_string(),
            error,
        })
    };
    let Some(data) = &file.data else {
        return Ok(Vec::new());
    };
    let mut opened = data.open().map_err(read_error)?;
    let bytes = source::read_bounded(&mut opened.reader, MAX_MANIFEST_BYTES, "the manifest")
        .map_err(read_error)?;
    if let Some(fault) = opened.monitor.fault() {
        return Err(ImportError::Source(SourceError::Corrupt {
            name: name.to_string(),
            problem: fault.describe(),
        }));
    }
    Ok(bytes)
}

/// The manifest of an input (if any), checked and resolved against the files.
pub(super) struct ManifestSetup {
    pub(super) manifest: Option<Manifest>,
    pub(super) clocks: ManifestClocks,
    /// The manifest file's size.
    pub(super) manifest_size: u64,
}

/// A manifest larger than this is refused (real ones are a few KB).
const MAX_MANIFEST_BYTES: u64 = 16 << 20;

impl ManifestSetup {
    pub(super) fn read(
        files: &[TraceFile],
        names: &[String],
        sink: &mut Sink,
    ) -> Result<ManifestSetup, ImportError> {
        let manifests: Vec<usize> = (0..files.len())
            .filter(|&i| files[i].kind == Kind::Manifest)
            .collect();
        let none = ManifestSetup {
            manifest: None,
            clocks: ManifestClocks::default(),
            manifest_size: 0,
        };
        let Some(&at) = manifests.first() else {
            return Ok(none);
        };
        let fail = |error| ImportError::Manifest {
            file: names[at].clone(),
            error,
        };
        let is_trace = |f: &TraceFile| !f.kind.is_container() && f.kind != Kind::Manifest;
        if files[..at].iter().any(is_trace) {
            return Err(fail(ManifestError::NotFirst));
        }
        let bytes = read_manifest(&files[at], &names[at])?;
        let m = manifest::parse(&bytes).map_err(fail)?;
        // Any member the manifest names resolves (a container too, as in Trace Processor:
        // an override on one is then refused below, by name, rather than as unknown).
        let member = |path: &str| {
            files
                .iter()
                .any(|f| !path.is_empty() && f.name.as_deref() == Some(path))
        };
        // A member the manifest names is missing from an archive that is cut short: the cut
        // is the error (the manifest is fine).
        let explain = |error: ManifestError| {
            let damage: Vec<&str> = files
                .iter()
                .flat_map(|f| f.problems.iter().map(|p| p.1.as_str()))
                .collect();
            match (&error, damage.is_empty()) {
                (ManifestError::CouldNotResolveFile { file }, false) => {
                    ImportError::Source(SourceError::Corrupt {
                        name: names.first().cloned().unwrap_or_default(),
                        problem: format!(
                            "the archive is cut short ({}): {file}, which its manifest names, \
                             is not in what is left, so the files cannot be placed as the \
                             manifest says; the archive needs to be copied again whole",
                            damage.join("; ")
                        ),
                    })
                }
                _ => fail(error),
            }
        };
        m.check_references_in(&member).map_err(explain)?;
        // An override naming a member that is itself an archive or a manifest is refused
        // (even a second manifest: Trace Processor meets the override first).
        for entry in &m.files {
            let has_override = entry.clocks.is_some() || entry.base_machine().is_some();
            // Decompressed streams have no name and never match an entry.
            let is_container = files.iter().any(|f| {
                f.name.as_deref().is_some_and(|n| !n.is_empty())
                    && f.name.as_deref() == Some(entry.path.as_str())
                    && (f.kind.is_container() || f.kind == Kind::Manifest)
            });
            if has_override && is_container {
                return Err(fail(ManifestError::OverrideOnContainer {
                    path: entry.path.clone(),
                }));
            }
        }
        if manifests.len() > 1 {
            return Err(fail(ManifestError::MultipleManifests));
        }
        for (key, value) in &m.attributes {
            let value = match value {
                manifest::AttrValue::Int(v) => MetaValue::Int(*v),
                manifest::AttrValue::Str(s) => MetaValue::Str(s.clone()),
            };
            sink.current_file = NO_FILE;
            sink.metadata(format!("manifest_attribute.{key}"), NO_MACHINE, value);
        }
        for name in m.machine_names() {
            sink.machine_registry.named(name);
        }
        let file_index = |path: &str| {
            files
                .iter()
                .position(|f| {
                    !path.is_empty() && f.name.as_deref() == Some(path) && !f.kind.is_container()
                })
                .map(|i| i as u32)
        };
        // Loose files are `sextant merge`'s preview (no reference input): a sync relating a
        // clock to itself is left to its findings, which say why it moves nothing.
        let refuse_self = files.first().is_some_and(|f| f.kind != Kind::Loose);
        let clocks = resolve_clocks(&m, &file_index, &mut sink.machine_registry, refuse_self)
            .map_err(explain)?;
        Ok(ManifestSetup {
            manifest: Some(m),
            clocks,
            manifest_size: bytes.len() as u64,
        })
    }

    /// The manifest pins this file's private timeline (a `clocks` override without `clock`).
    pub(super) fn is_pinned(&self, name: Option<&str>) -> bool {
        self.manifest
            .as_ref()
            .zip(name)
            .and_then(|(m, n)| m.entry(n))
            .and_then(|e| e.clocks.as_ref())
            .is_some_and(|c| c.clock.is_none())
    }

    /// The parser context of a file: its base machine and what its packets may say.
    pub(super) fn context(&self, index: u32, name: Option<&str>, sink: &mut Sink) -> FileContext {
        let entry = self
            .manifest
            .as_ref()
            .zip(name.filter(|n| !n.is_empty()))
            .and_then(|(m, n)| m.entry(n));
        let registry = &mut sink.machine_registry;
        let Some(entry) = entry else {
            return FileContext::new(index, registry.host());
        };
        let machine = match entry.base_machine() {
            Some(name) => registry.named(name),
            None => registry.host(),
        };
        let machines = if let Some(list) = &entry.machines {
            MachineScope::Remap(
                list.iter()
                    .map(|m| (m.id, registry.named(&m.name)))
                    .collect(),
            )
        } else if entry.machine.is_some() {
            MachineScope::Single
        } else if entry.clocks.as_ref().is_some_and(|c| c.clock.is_none()) {
            MachineScope::Pinned
        } else {
            MachineScope::Free
        };
        FileContext {
            file: index,
            machine,
            machines,
        }
    }
}

/// The clock edges and trace time a manifest asks for, on the machines its names mean
/// (created in `registry` as needed); `file_index` finds a trace file by member path.
/// With `refuse_self`, an override relating a clock to itself is the reference's error
/// (else it is kept, and relates nothing).
pub(super) fn resolve_clocks(
    m: &Manifest,
    file_index: &dyn Fn(&str) -> Option<u32>,
    registry: &mut crate::ir::MachineRegistry,
    refuse_self: bool,
) -> Result<ManifestClocks, ManifestError> {
    // The machine a manifest reference means: a named machine of a multi-machine file, its
    // base machine, or the host. A machine name given for a file without a `machines` block
    // selects nothing (the file has one machine): it names no machine of its own.
    let mut machine_of = |file: Option<&str>, machine: Option<&str>| -> MachineId {
        let entry = file.and_then(|f| m.entry(f));
        if let Some(name) = machine.filter(|_| entry.is_some_and(|e| e.is_multi_machine())) {
            return registry.named(name);
        }
        let base = entry.and_then(|e| e.base_machine());
        match base {
            Some(name) => registry.named(name),
            None if file.is_none() && !registry.is_empty() => 0,
            None => registry.host(),
        }
    };
    let mut clocks = ManifestClocks::default();
    if let Some(tt) = &m.trace_time {
        let machine = machine_of(tt.file.as_deref(), tt.machine.as_deref());
        clocks.trace_time = Some(clock::builtin(machine, tt.clock));
    }
    for entry in &m.files {
        let Some(over) = &entry.clocks else { continue };
        let index = file_index(&entry.path);
        let from = match over.clock {
            Some(c) => clock::builtin(machine_of(Some(&entry.path), over.machine.as_deref()), c),
            None => {
                let Some(index) = index else {
                    return Err(ManifestError::CouldNotResolveFile {
                        file: entry.path.clone(),
                    });
                };
                clock::file_timeline(index, machine_of(Some(&entry.path), None))
            }
        };
        let target = &over.sync_to;
        let to = match target.clock {
            Some(c) => clock::builtin(machine_of(Some(&target.file), target.machine.as_deref()), c),
            None => {
                let Some(ti) = file_index(&target.file) else {
                    return Err(ManifestError::CouldNotResolveFile {
                        file: target.file.clone(),
                    });
                };
                clock::file_timeline(ti, machine_of(Some(&target.file), None))
            }
        };
        if refuse_self && from == to {
            return Err(ManifestError::SelfRelation {
                clock: clock::clock_label_for_errors(&from),
                snapshot: clocks.edges.len(),
            });
        }
        clocks.edges.push(ManifestEdge {
            from,
            to,
            offset_ns: over.offset_ns,
            file: index.unwrap_or(u32::MAX),
        });
    }
    Ok(clocks)
}
