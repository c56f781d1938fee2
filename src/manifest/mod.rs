//! `perfetto_manifest`: parse and validate the JSON document that configures how the
//! files of an archive merge (machines, clock overrides, trace time, attributes).
//!
//! [`parse`] runs steps 2–7 of the reference validation order (JSON syntax, top level,
//! version, `trace_time`, `files` entries, `attributes`); [`Manifest::check_references`]
//! runs the step-9 reference checks that need no trace data. The remaining errors are
//! raised by the importer, which finds their variants here too so that every message is
//! spelled exactly as the reference implementation prints it.
//!
//! This module knows nothing of clocks at run time or of SQLite.

use serde_json::{Map, Value};

/// Clock names accepted wherever the manifest expects a clock, with their builtin ids.
pub const CLOCK_NAMES: [(&str, u32); 6] = [
    ("REALTIME", 1),
    ("REALTIME_COARSE", 2),
    ("MONOTONIC", 3),
    ("MONOTONIC_COARSE", 4),
    ("MONOTONIC_RAW", 5),
    ("BOOTTIME", 6),
];

/// The builtin clock id of a manifest clock name (case-sensitive).
pub fn clock_id(name: &str) -> Option<u32> {
    CLOCK_NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, id)| id)
}

/// The manifest clock name of a builtin clock id.
pub fn clock_name(id: u32) -> Option<&'static str> {
    CLOCK_NAMES.iter().find(|&&(_, i)| i == id).map(|&(n, _)| n)
}

const MANIFEST_KEY: &str = "perfetto_manifest";

/// How many leading bytes [`is_manifest`] looks at.
const SNIFF_LEN: usize = 128;

/// True when the bytes are a manifest: the first 128 bytes with ALL whitespace removed
/// start with `{"perfetto_manifest"` (that key must come first).
pub fn is_manifest(bytes: &[u8]) -> bool {
    let prefix = format!("{{\"{MANIFEST_KEY}\"");
    let squeezed: Vec<u8> = bytes
        .iter()
        .take(SNIFF_LEN)
        .copied()
        .filter(|b| !is_space(*b))
        .collect();
    squeezed.starts_with(prefix.as_bytes())
}

/// C `isspace`: space, \t, \n, \v, \f, \r.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// A parsed, shape-validated manifest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifest {
    pub trace_time: Option<TraceTime>,
    pub files: Vec<FileEntry>,
    /// `attributes`, sorted by key (bytewise).
    pub attributes: Vec<(String, AttrValue)>,
}

/// `trace_time`: the clock of the merged timeline, optionally pinned to a file's machine.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceTime {
    pub clock: u32,
    pub file: Option<String>,
    pub machine: Option<String>,
}

/// One entry of `files`.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEntry {
    pub path: String,
    /// `machine.name`: the whole file belongs to this named machine.
    pub machine: Option<String>,
    /// `machines`: remaps the embedded machine ids of a multi-machine trace.
    pub machines: Option<Vec<MachineEntry>>,
    pub clocks: Option<ClockOverride>,
}

/// One entry of a file's `machines` block.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineEntry {
    pub id: u32,
    pub name: String,
}

/// A file's `clocks` block.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockOverride {
    /// The file's own clock being related; `None` = PIN (the file is clockless).
    pub clock: Option<u32>,
    /// Which of this (multi-machine) file's machines owns the source clock.
    pub machine: Option<String>,
    pub sync_to: SyncTo,
    /// At a common instant the source clock reads T when the reference reads T + offset_ns.
    pub offset_ns: i64,
}

/// The reference clock of a `clocks` block.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncTo {
    pub file: String,
    pub machine: Option<String>,
    /// `None`: the reference file's private per-file timeline.
    pub clock: Option<u32>,
}

/// An `attributes` value.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    Int(i64),
    Str(String),
}

impl FileEntry {
    /// True when the entry has a `machines` block (never inferred from trace data).
    pub fn is_multi_machine(&self) -> bool {
        self.machines.is_some()
    }

    /// The machine the file's id-0 (host) data goes to: `machine`, or the `machines`
    /// entry with id 0.
    pub fn base_machine(&self) -> Option<&str> {
        if let Some(name) = &self.machine {
            return Some(name);
        }
        self.machines
            .as_ref()?
            .iter()
            .find(|m| m.id == 0)
            .map(|m| m.name.as_str())
    }

    /// True when `name` is one of the names in this entry's `machines` block.
    fn declares(&self, name: &str) -> bool {
        self.machines
            .as_ref()
            .is_some_and(|ms| ms.iter().any(|m| m.name == name))
    }
}

impl ClockOverride {
    /// PIN: no source clock, the file is placed via its private per-file timeline.
    pub fn is_pin(&self) -> bool {
        self.clock.is_none()
    }
}

impl Manifest {
    /// Machine names in order of first appearance (each entry's `machine`, then its
    /// `machines`), deduplicated: manifest machines get raw_id 2^32 + index in this list.
    pub fn machine_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for entry in &self.files {
            let own = entry.machine.as_deref().into_iter();
            let remapped = entry.machines.iter().flatten().map(|m| m.name.as_str());
            for name in own.chain(remapped) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }

    /// The first `files` entry whose path is exactly `path`.
    pub fn entry(&self, path: &str) -> Option<&FileEntry> {
        self.files.iter().find(|e| e.path == path)
    }

    /// Step 9 reference checks (trace_time file/machine, then each clocks entry in files
    /// order), with the exact texts of behaviour-merging.md §8 step 9, EXCEPT the "could
    /// not resolve file" one which the importer raises.
    ///
    /// A machine name given for a file without a `machines` block is not checked: such a
    /// file has a single machine, so the name selects nothing.
    pub fn check_references(&self) -> Result<(), ManifestError> {
        self.check_references_in(&|_| true)
    }

    /// [`Manifest::check_references`], and where a `clocks` entry needs a file's private
    /// timeline (no `clock` on its side), that a member of the input is named so (`member`):
    /// the reference checks each entry's source machine, its reference, then these, in
    /// files order, so an earlier entry's missing member is reported before a later
    /// entry's bad reference.
    pub fn check_references_in(&self, member: &dyn Fn(&str) -> bool) -> Result<(), ManifestError> {
        if let Some(tt) = &self.trace_time {
            self.check_reference(
                RefSite::TraceTime,
                tt.file.as_deref(),
                tt.machine.as_deref(),
            )?;
        }
        for entry in &self.files {
            let Some(clocks) = &entry.clocks else {
                continue;
            };
            if entry.is_multi_machine() {
                match &clocks.machine {
                    None => {
                        return Err(ManifestError::SourceNeedsMachine {
                            file: entry.path.clone(),
                        })
                    }
                    Some(m) if !entry.declares(m) => {
                        return Err(ManifestError::SourceMachineNotDeclared {
                            machine: m.clone(),
                            file: entry.path.clone(),
                        })
                    }
                    Some(_) => {}
                }
            }
            self.check_reference(
                RefSite::SyncTo,
                Some(&clocks.sync_to.file),
                clocks.sync_to.machine.as_deref(),
            )?;
            let timelines = [
                (clocks.clock.is_none(), &entry.path),
                (clocks.sync_to.clock.is_none(), &clocks.sync_to.file),
            ];
            for (needed, file) in timelines {
                if needed && !member(file) {
                    return Err(ManifestError::CouldNotResolveFile { file: file.clone() });
                }
            }
        }
        Ok(())
    }

    fn check_reference(
        &self,
        site: RefSite,
        file: Option<&str>,
        machine: Option<&str>,
    ) -> Result<(), ManifestError> {
        let Some(file) = file else {
            return match machine {
                Some(m) => Err(ManifestError::MachineWithoutFile {
                    site,
                    machine: m.to_string(),
                }),
                None => Ok(()),
            };
        };
        let Some(entry) = self.entry(file) else {
            return Err(ManifestError::UnknownFile {
                site,
                file: file.to_string(),
            });
        };
        if entry.is_multi_machine() {
            match machine {
                None => {
                    return Err(ManifestError::ReferenceNeedsMachine {
                        site,
                        file: file.to_string(),
                    })
                }
                Some(m) if !entry.declares(m) => {
                    return Err(ManifestError::MachineNotDeclared {
                        site,
                        machine: m.to_string(),
                        file: file.to_string(),
                    })
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}

/// Where a (file, machine) reference sits: names the keys in step-9 error texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefSite {
    /// `trace_time: file` / `trace_time: machine`.
    TraceTime,
    /// `clocks: sync_to.file` / `clocks: sync_to.machine`.
    SyncTo,
}

impl RefSite {
    /// The label of the file key (L in behaviour-merging.md §8 step 9).
    pub fn file_key(self) -> &'static str {
        match self {
            RefSite::TraceTime => "trace_time: file",
            RefSite::SyncTo => "clocks: sync_to.file",
        }
    }

    /// The label of the machine key (M in behaviour-merging.md §8 step 9).
    pub fn machine_key(self) -> &'static str {
        match self {
            RefSite::TraceTime => "trace_time: machine",
            RefSite::SyncTo => "clocks: sync_to.machine",
        }
    }
}

/// Every manifest error; `Display` is the full message as the reference prints it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ManifestError {
    // ---- raised by the importer, outside the manifest document ----
    #[error("multiple perfetto_manifest files in archive")]
    MultipleManifests,
    #[error("perfetto_manifest file must be the first trace file in the input")]
    NotFirst,
    #[error(
        "perfetto_manifest: overrides are not supported for trace files which are themselves \
         archives or perfetto_manifest files: {path}"
    )]
    OverrideOnContainer { path: String },
    #[error("perfetto_manifest: clock overrides require the trace to use a single clock")]
    PinWithSnapshots,
    #[error(
        "perfetto_manifest: a `machine` override attributes the file to one machine, but the \
         file contains packets from multiple machines. Replace `machine` with a `machines` \
         block that maps each embedded machine_id to a named machine, e.g. \"machines\": \
         [{{\"id\": 0, \"name\": \"phone\"}}, {{\"id\": 7, \"name\": \"vm\"}}]."
    )]
    MachineOnMultiMachineFile,
    #[error(
        "perfetto_manifest: a `clocks` override applies only to a single-machine file, but the \
         file contains packets from multiple machines. Remove the `clocks` override and let the \
         trace's own remote clock snapshots align the machines; if you need to anchor a \
         specific embedded machine, split it into its own file and override that."
    )]
    PinOnMultiMachineFile,
    #[error("perfetto_manifest: machines: trace has a packet from undeclared machine id {id}")]
    UndeclaredMachine { id: u32 },
    #[error(
        "perfetto_manifest: clocks: could not resolve file '{file}'. It must match the `path` \
         of an entry in the `files` array."
    )]
    CouldNotResolveFile { file: String },
    /// A `clocks` override relating a clock to itself: the clock tracker refuses the edge
    /// as a snapshot naming one clock twice.
    #[error("Clock sync error: duplicate clock domain with id={clock} at snapshot {snapshot}.")]
    SelfRelation { clock: String, snapshot: usize },
    /// An edit of the manifest in effect that Sextant cannot apply without parsing again.
    #[error("perfetto_manifest: {0}")]
    Edit(String),

    // ---- step 2: JSON syntax ----
    #[error("perfetto_manifest: Empty JSON input")]
    EmptyInput,
    #[error("perfetto_manifest: Failed to parse object: {0}")]
    Json(String),

    // ---- step 3: top level ----
    #[error("perfetto_manifest: expected a JSON object with a top-level perfetto_manifest key")]
    NotAManifestObject,

    // ---- step 4: version ----
    #[error("perfetto_manifest: missing required field: version")]
    MissingVersion,
    #[error("perfetto_manifest: version must be an integer")]
    VersionNotInteger,
    #[error(
        "perfetto_manifest: unsupported version: {0}. Only version 1 is supported; set \
         \"version\": 1."
    )]
    UnsupportedVersion(i64),

    // ---- step 5: trace_time (clock name errors also for clocks / sync_to) ----
    #[error("perfetto_manifest: trace_time must be an object")]
    TraceTimeNotObject,
    #[error("perfetto_manifest: trace_time needs a clock")]
    TraceTimeNeedsClock,
    #[error("perfetto_manifest: clock name must be a string")]
    ClockNameNotString,
    #[error(
        "perfetto_manifest: unknown clock name: {0}. Use one of REALTIME, REALTIME_COARSE, \
         MONOTONIC, MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME."
    )]
    UnknownClockName(String),
    #[error("perfetto_manifest: trace_time: file must be a string")]
    TraceTimeFileNotString,
    #[error("perfetto_manifest: trace_time: machine must be a string")]
    TraceTimeMachineNotString,

    // ---- step 6: files ----
    #[error("perfetto_manifest: files must be an array")]
    FilesNotArray,
    #[error("perfetto_manifest: files entries must be objects with a string path")]
    FileEntryInvalid,
    #[error("perfetto_manifest: clocks must be an object")]
    ClocksNotObject,
    #[error("perfetto_manifest: clocks: machine must be a string")]
    ClocksMachineNotString,
    #[error(
        "perfetto_manifest: clocks: a sync_to block is required. Manual clock handling relates \
         this file to a clock in another trace, e.g. \"sync_to\": {{\"file\": \"other.pb\"}}."
    )]
    SyncToRequired,
    #[error("perfetto_manifest: clocks: sync_to must be an object")]
    SyncToNotObject,
    #[error("perfetto_manifest: clocks: sync_to.file is required and must be a string")]
    SyncToFileRequired,
    #[error("perfetto_manifest: clocks: sync_to.machine must be a string")]
    SyncToMachineNotString,
    #[error("perfetto_manifest: clocks: offset_ns must be an integer")]
    OffsetNotInteger,
    #[error("perfetto_manifest: clocks: offset_ns is out of range")]
    OffsetOutOfRange,
    #[error(
        "perfetto_manifest: machine and machines are mutually exclusive. Use `machine` for a \
         single-machine file, or `machines` to remap a multi-machine proto's embedded ids; not \
         both."
    )]
    MachineAndMachines,
    #[error(
        "perfetto_manifest: machine must be an object with a string name, e.g. \"machine\": \
         {{\"name\": \"phone\"}}."
    )]
    MachineInvalid,
    #[error("perfetto_manifest: machine: name must be non-empty")]
    MachineNameEmpty,
    #[error("perfetto_manifest: machines must be an array")]
    MachinesNotArray,
    #[error(
        "perfetto_manifest: machines entries need an integer id and a string name, e.g. \
         \"machines\": [{{\"id\": 0, \"name\": \"phone\"}}]."
    )]
    MachinesEntryInvalid,
    #[error("perfetto_manifest: machines: id must be in [0, 4294967295]")]
    MachinesIdOutOfRange,
    #[error("perfetto_manifest: machines: name must be non-empty")]
    MachinesNameEmpty,

    // ---- step 7: attributes ----
    #[error(
        "perfetto_manifest: attributes must be an object of string or integer values, e.g. \
         \"attributes\": {{\"benchmark\": \"startup\"}}."
    )]
    AttributesNotObject,
    #[error("perfetto_manifest: attributes: keys must be non-empty")]
    AttributeKeyEmpty,
    #[error("perfetto_manifest: attributes: '{key}' must be a string or an integer")]
    AttributeValueInvalid { key: String },

    // ---- step 9: references ----
    #[error(
        "perfetto_manifest: {} '{machine}' needs {} too: a machine name alone is ambiguous \
         because embedded machine ids are scoped to their trace.",
        .site.machine_key(),
        .site.file_key()
    )]
    MachineWithoutFile { site: RefSite, machine: String },
    #[error(
        "perfetto_manifest: {} names unknown file '{file}'. It must match the `path` of an \
         entry in the `files` array.",
        .site.file_key()
    )]
    UnknownFile { site: RefSite, file: String },
    #[error(
        "perfetto_manifest: {} '{file}' is a multi-machine trace; also name the machine with {}.",
        .site.file_key(),
        .site.machine_key()
    )]
    ReferenceNeedsMachine { site: RefSite, file: String },
    #[error(
        "perfetto_manifest: {} '{machine}' is not a machine declared by file '{file}'.",
        .site.machine_key()
    )]
    MachineNotDeclared {
        site: RefSite,
        machine: String,
        file: String,
    },
    #[error(
        "perfetto_manifest: clocks: file '{file}' is a multi-machine trace; name which machine \
         the clock is on with clocks: machine."
    )]
    SourceNeedsMachine { file: String },
    #[error(
        "perfetto_manifest: clocks: machine '{machine}' is not a machine declared by file \
         '{file}'."
    )]
    SourceMachineNotDeclared { machine: String, file: String },
}

/// Parses and validates a manifest: steps 2–7 of the reference validation order. The
/// first error aborts. Unknown keys are ignored; duplicate keys keep the last value.
pub fn parse(bytes: &[u8]) -> Result<Manifest, ManifestError> {
    // Step 2: JSON syntax.
    if bytes.iter().all(|b| is_space(*b)) {
        return Err(ManifestError::EmptyInput);
    }
    let root: Value =
        serde_json::from_slice(bytes).map_err(|e| ManifestError::Json(e.to_string()))?;

    // Step 3: top level.
    let body = root
        .as_object()
        .and_then(|o| o.get(MANIFEST_KEY))
        .and_then(Value::as_object)
        .ok_or(ManifestError::NotAManifestObject)?;

    // Step 4: version.
    match body.get("version") {
        None => return Err(ManifestError::MissingVersion),
        Some(v) => match v.as_i64() {
            None => return Err(ManifestError::VersionNotInteger),
            Some(1) => {}
            Some(n) => return Err(ManifestError::UnsupportedVersion(n)),
        },
    }

    // Step 5: trace_time.
    let trace_time = body.get("trace_time").map(parse_trace_time).transpose()?;

    // Step 6: files.
    let files = match body.get("files") {
        None => Vec::new(),
        Some(v) => {
            let list = v.as_array().ok_or(ManifestError::FilesNotArray)?;
            list.iter()
                .map(parse_file_entry)
                .collect::<Result<Vec<_>, _>>()?
        }
    };

    // Step 7: attributes.
    let attributes = match body.get("attributes") {
        None => Vec::new(),
        Some(v) => parse_attributes(v)?,
    };

    Ok(Manifest {
        trace_time,
        files,
        attributes,
    })
}

/// A clock name value: must be a string naming one of [`CLOCK_NAMES`].
fn parse_clock(v: &Value) -> Result<u32, ManifestError> {
    let name = v.as_str().ok_or(ManifestError::ClockNameNotString)?;
    clock_id(name).ok_or_else(|| ManifestError::UnknownClockName(name.to_string()))
}

/// An optional string field: absent → `None`; present but not a string → `err`.
fn opt_string(
    obj: &Map<String, Value>,
    key: &str,
    err: ManifestError,
) -> Result<Option<String>, ManifestError> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(err),
    }
}

fn parse_trace_time(v: &Value) -> Result<TraceTime, ManifestError> {
    let obj = v.as_object().ok_or(ManifestError::TraceTimeNotObject)?;
    let clock = parse_clock(obj.get("clock").ok_or(ManifestError::TraceTimeNeedsClock)?)?;
    let file = opt_string(obj, "file", ManifestError::TraceTimeFileNotString)?;
    let machine = opt_string(obj, "machine", ManifestError::TraceTimeMachineNotString)?;
    Ok(TraceTime {
        clock,
        file,
        machine,
    })
}

fn parse_file_entry(v: &Value) -> Result<FileEntry, ManifestError> {
    let obj = v.as_object().ok_or(ManifestError::FileEntryInvalid)?;
    let path = obj
        .get("path")
        .and_then(Value::as_str)
        .ok_or(ManifestError::FileEntryInvalid)?
        .to_string();

    let clocks = obj.get("clocks").map(parse_clocks).transpose()?;

    let (machine, machines) = match (obj.get("machine"), obj.get("machines")) {
        (Some(_), Some(_)) => return Err(ManifestError::MachineAndMachines),
        (Some(m), None) => (Some(parse_machine(m)?), None),
        (None, Some(ms)) => (None, Some(parse_machines(ms)?)),
        (None, None) => (None, None),
    };

    Ok(FileEntry {
        path,
        machine,
        machines,
        clocks,
    })
}

fn parse_clocks(v: &Value) -> Result<ClockOverride, ManifestError> {
    let obj = v.as_object().ok_or(ManifestError::ClocksNotObject)?;
    let machine = opt_string(obj, "machine", ManifestError::ClocksMachineNotString)?;
    let clock = obj.get("clock").map(parse_clock).transpose()?;

    let sync_to = obj
        .get("sync_to")
        .ok_or(ManifestError::SyncToRequired)?
        .as_object()
        .ok_or(ManifestError::SyncToNotObject)?;
    let file = sync_to
        .get("file")
        .and_then(Value::as_str)
        .ok_or(ManifestError::SyncToFileRequired)?
        .to_string();
    let sync_machine = opt_string(sync_to, "machine", ManifestError::SyncToMachineNotString)?;
    let sync_clock = sync_to.get("clock").map(parse_clock).transpose()?;

    let offset_ns = match obj.get("offset_ns") {
        None => 0,
        Some(v) => match v.as_i64() {
            None => return Err(ManifestError::OffsetNotInteger),
            Some(i64::MIN) => return Err(ManifestError::OffsetOutOfRange),
            Some(n) => n,
        },
    };

    Ok(ClockOverride {
        clock,
        machine,
        sync_to: SyncTo {
            file,
            machine: sync_machine,
            clock: sync_clock,
        },
        offset_ns,
    })
}

fn parse_machine(v: &Value) -> Result<String, ManifestError> {
    let name = v
        .as_object()
        .and_then(|o| o.get("name"))
        .and_then(Value::as_str)
        .ok_or(ManifestError::MachineInvalid)?;
    if name.is_empty() {
        return Err(ManifestError::MachineNameEmpty);
    }
    Ok(name.to_string())
}

fn parse_machines(v: &Value) -> Result<Vec<MachineEntry>, ManifestError> {
    let list = v.as_array().ok_or(ManifestError::MachinesNotArray)?;
    list.iter().map(parse_machines_entry).collect()
}

fn parse_machines_entry(v: &Value) -> Result<MachineEntry, ManifestError> {
    let obj = v.as_object().ok_or(ManifestError::MachinesEntryInvalid)?;
    let (Some(Value::Number(id)), Some(Value::String(name))) = (obj.get("id"), obj.get("name"))
    else {
        return Err(ManifestError::MachinesEntryInvalid);
    };
    let id = machine_id(id).ok_or(ManifestError::MachinesIdOutOfRange)?;
    if name.is_empty() {
        return Err(ManifestError::MachinesNameEmpty);
    }
    Ok(MachineEntry {
        id,
        name: name.clone(),
    })
}

/// Any JSON number: fractions are truncated, then it must lie in [0, 2^32 - 1].
fn machine_id(n: &serde_json::Number) -> Option<u32> {
    if let Some(i) = n.as_i64() {
        return u32::try_from(i).ok();
    }
    if n.is_u64() {
        // Above i64::MAX: certainly out of range.
        return None;
    }
    let t = n.as_f64()?.trunc();
    if (0.0..=f64::from(u32::MAX)).contains(&t) {
        // In range and integral after trunc: the conversion is exact.
        Some(t as u32)
    } else {
        None
    }
}

fn parse_attributes(v: &Value) -> Result<Vec<(String, AttrValue)>, ManifestError> {
    let obj = v.as_object().ok_or(ManifestError::AttributesNotObject)?;
    let mut keys: Vec<&String> = obj.keys().collect();
    keys.sort();
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        if key.is_empty() {
            return Err(ManifestError::AttributeKeyEmpty);
        }
        let value = match obj.get(key) {
            Some(Value::String(s)) => Some(AttrValue::Str(s.clone())),
            Some(v) => v.as_i64().map(AttrValue::Int),
            None => None,
        }
        .ok_or_else(|| ManifestError::AttributeValueInvalid { key: key.clone() })?;
        out.push((key.clone(), value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
