//! `sextant merge`: turns command-line options (machine names, clock syncs, trace time)
//! into a `perfetto_manifest`, checks it with the reader's own rules (so an invalid option
//! gets the reader's error text), imports the files with it to show where each lands and
//! what would be dropped, then writes the files and the manifest as a TAR or ZIP, or prints
//! the manifest alone. Also reads back the manifest an archive holds (`sextant manifest`).
//!
//! Hands on: a [`Manifest`], its JSON, a [`Preview`] of the placement, and the archive.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::import::{ImportError, Session};
use crate::manifest::{
    self, ClockOverride, FileEntry, MachineEntry, Manifest, ManifestError, SyncTo, TraceTime,
};
use crate::source::{self, SourceError, MANIFEST_NAME};

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("{option} {value}: {problem}")]
    Option {
        option: &'static str,
        value: String,
        problem: String,
    },
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("{0}")]
    Output(String),
}

/// What the options ask for.
#[derive(Clone, Debug, Default)]
pub struct MergeOptions {
    pub files: Vec<PathBuf>,
    /// `FILE=NAME`
    pub machine: Vec<String>,
    /// `FILE=ID:NAME[,ID:NAME...]`
    pub machines: Vec<String>,
    /// `FILE[:CLOCK]=REF_FILE[:CLOCK][,OFFSET]`
    pub sync: Vec<String>,
    /// `CLOCK[=FILE]`
    pub trace_time: Option<String>,
}

/// The member name of each file: its base name.
fn member_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Which member a FILE in an option means: the path as given or its base name.
fn resolve(
    files: &[PathBuf],
    option: &'static str,
    value: &str,
    file: &str,
) -> Result<String, MergeError> {
    for path in files {
        if path.as_os_str() == file || member_name(path) == file {
            return Ok(member_name(path));
        }
    }
    Err(MergeError::Option {
        option,
        value: value.to_string(),
        problem: format!("{file:?} is not one of the files to merge"),
    })
}

/// A FILE option naming a file outside the merge keeps its name: the reader then says what
/// is wrong with it, in its own words.
fn resolve_or_keep(files: &[PathBuf], file: &str) -> String {
    files
        .iter()
        .find(|p| p.as_os_str() == file || member_name(p) == file)
        .map_or_else(|| file.to_string(), |p| member_name(p))
}

/// A clock name, as the reader spells them (any case accepted here).
fn clock(option: &'static str, value: &str, name: &str) -> Result<u32, MergeError> {
    manifest::clock_id(&name.to_ascii_uppercase()).ok_or_else(|| MergeError::Option {
        option,
        value: value.to_string(),
        problem: ManifestError::UnknownClockName(name.to_string()).to_string(),
    })
}

/// Splits `FILE:CLOCK` when the part after the last `:` is a clock name.
fn split_clock(s: &str) -> (&str, Option<&str>) {
    match s.rsplit_once(':') {
        Some((file, c)) if manifest::clock_id(&c.to_ascii_uppercase()).is_some() => (file, Some(c)),
        _ => (s, None),
    }
}

/// An offset in ns: an integer, or a number with a unit (`250ms`, `-1.5s`, `40us`, `3ns`).
pub fn parse_offset(s: &str) -> Option<i64> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let scale: f64 = match unit {
        "" | "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        _ => return None,
    };
    if unit.is_empty() || unit == "ns" {
        if let Ok(v) = number.parse::<i64>() {
            return Some(v);
        }
    }
    let v: f64 = number.parse().ok()?;
    let ns = (v * scale).round();
    (ns.is_finite() && ns.abs() < 9.2e18).then_some(ns as i64)
}

/// Builds the manifest the options describe: an entry for every file (so any of them can be
/// a sync reference), with the options' machines and clocks.
pub fn build_manifest(o: &MergeOptions) -> Result<Manifest, MergeError> {
    let mut entries: Vec<FileEntry> = o
        .files
        .iter()
        .map(|p| FileEntry {
            path: member_name(p),
            machine: None,
            machines: None,
            clocks: None,
        })
        .collect();
    let entry = |entries: &mut Vec<FileEntry>, name: &str| -> usize {
        entries.iter().position(|e| e.path == name).unwrap_or(0)
    };
    let split_eq = |option: &'static str, value: &str| -> Result<(String, String), MergeError> {
        value
            .split_once('=')
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .ok_or_else(|| MergeError::Option {
                option,
                value: value.to_string(),
                problem: "expected FILE=…".into(),
            })
    };
    for value in &o.machine {
        let (file, name) = split_eq("--machine", value)?;
        let member = resolve(&o.files, "--machine", value, &file)?;
        let i = entry(&mut entries, &member);
        entries[i].machine = Some(name);
    }
    for value in &o.machines {
        let (file, list) = split_eq("--machines", value)?;
        let member = resolve(&o.files, "--machines", value, &file)?;
        let mut machines = Vec::new();
        for item in list.split(',') {
            let (id, name) = item.split_once(':').ok_or_else(|| MergeError::Option {
                option: "--machines",
                value: value.to_string(),
                problem: format!("{item:?}: expected ID:NAME"),
            })?;
            let id = id.trim().parse::<u32>().map_err(|_| MergeError::Option {
                option: "--machines",
                value: value.to_string(),
                problem: ManifestError::MachinesIdOutOfRange.to_string(),
            })?;
            machines.push(MachineEntry {
                id,
                name: name.to_string(),
            });
        }
        let i = entry(&mut entries, &member);
        entries[i].machines = Some(machines);
    }
    for value in &o.sync {
        let (source, target) = split_eq("--sync", value)?;
        let (source_file, source_clock) = split_clock(&source);
        let member = resolve(&o.files, "--sync", value, source_file)?;
        let (target, offset) = match target.rsplit_once(',') {
            Some((t, off)) => {
                let ns = parse_offset(off).ok_or_else(|| MergeError::Option {
                    option: "--sync",
                    value: value.to_string(),
                    problem: format!(
                        "{off:?} is not an offset (ns, or with a unit: 250ms, -1.5s, 40us)"
                    ),
                })?;
                (t.to_string(), ns)
            }
            None => (target, 0),
        };
        let (ref_file, ref_clock) = split_clock(&target);
        let source_clock = source_clock
            .map(|c| clock("--sync", value, c))
            .transpose()?;
        let ref_clock = ref_clock.map(|c| clock("--sync", value, c)).transpose()?;
        let i = entry(&mut entries, &member);
        entries[i].clocks = Some(ClockOverride {
            clock: source_clock,
            machine: None,
            sync_to: SyncTo {
                file: resolve_or_keep(&o.files, ref_file),
                machine: None,
                clock: ref_clock,
            },
            offset_ns: offset,
        });
    }
    let trace_time = match &o.trace_time {
        None => None,
        Some(value) => {
            let (c, file) = match value.split_once('=') {
                Some((c, f)) => (c, Some(resolve_or_keep(&o.files, f))),
                None => (value.as_str(), None),
            };
            Some(TraceTime {
                clock: clock("--trace-time", value, c)?,
                file,
                machine: None,
            })
        }
    };
    let m = Manifest {
        trace_time,
        files: entries,
        attributes: Vec::new(),
    };
    // The reader's own checks, on the JSON it will read, so errors are its errors.
    let checked = manifest::parse(to_json(&m).as_bytes())?;
    checked.check_references()?;
    Ok(checked)
}

/// The manifest as `perfetto_manifest.json` holds it.
pub fn to_json(m: &Manifest) -> String {
    let clock_name = |c: u32| manifest::clock_name(c).unwrap_or("BOOTTIME");
    let mut files = Vec::new();
    for e in &m.files {
        let mut f = Map::new();
        f.insert("path".into(), json!(e.path));
        if let Some(name) = &e.machine {
            f.insert("machine".into(), json!({ "name": name }));
        }
        if let Some(ms) = &e.machines {
            let list: Vec<Value> = ms
                .iter()
                .map(|m| json!({"id": m.id, "name": m.name}))
                .collect();
            f.insert("machines".into(), Value::Array(list));
        }
        if let Some(c) = &e.clocks {
            let mut clocks = Map::new();
            if let Some(clock) = c.clock {
                clocks.insert("clock".into(), json!(clock_name(clock)));
            }
            if let Some(machine) = &c.machine {
                clocks.insert("machine".into(), json!(machine));
            }
            let mut sync = Map::new();
            sync.insert("file".into(), json!(c.sync_to.file));
            if let Some(machine) = &c.sync_to.machine {
                sync.insert("machine".into(), json!(machine));
            }
            if let Some(clock) = c.sync_to.clock {
                sync.insert("clock".into(), json!(clock_name(clock)));
            }
            clocks.insert("sync_to".into(), Value::Object(sync));
            if c.offset_ns != 0 {
                clocks.insert("offset_ns".into(), json!(c.offset_ns));
            }
            f.insert("clocks".into(), Value::Object(clocks));
        }
        files.push(Value::Object(f));
    }
    let mut body = Map::new();
    body.insert("version".into(), json!(1));
    if let Some(t) = &m.trace_time {
        let mut tt = Map::new();
        tt.insert("clock".into(), json!(clock_name(t.clock)));
        if let Some(file) = &t.file {
            tt.insert("file".into(), json!(file));
        }
        if let Some(machine) = &t.machine {
            tt.insert("machine".into(), json!(machine));
        }
        body.insert("trace_time".into(), Value::Object(tt));
    }
    body.insert("files".into(), Value::Array(files));
    if !m.attributes.is_empty() {
        let attrs: Map<String, Value> = m
            .attributes
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    manifest::AttrValue::Int(i) => json!(i),
                    manifest::AttrValue::Str(s) => json!(s),
                };
                (k.clone(), v)
            })
            .collect();
        body.insert("attributes".into(), Value::Object(attrs));
    }
    let doc = json!({ "perfetto_manifest": Value::Object(body) });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// Where one file lands, as the import placed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub file: String,
    pub machine: String,
    /// `trace_time`, `path`, `unconverted` or `dropped`.
    pub status: String,
    pub path: String,
    pub events: i64,
    pub dropped: i64,
}

/// What importing the merge would give: each file's placement, and the drops counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preview {
    pub placements: Vec<Placement>,
    /// (stat, value) of every clock or sorter drop.
    pub drops: Vec<(String, i64)>,
}

impl Preview {
    /// The preview as lines for a terminal.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for p in &self.placements {
            let dropped = if p.dropped > 0 {
                format!(", {} dropped", p.dropped)
            } else {
                String::new()
            };
            out.push(format!(
                "  {} on {}: {} events{dropped}; {}",
                p.file, p.machine, p.events, p.path
            ));
        }
        if self.drops.is_empty() {
            out.push("  nothing would be dropped".into());
        }
        for (name, value) in &self.drops {
            out.push(format!("  would drop {value} events: {name}"));
        }
        out
    }
}

/// Imports the files with `manifest` into a temporary database and reads back where each
/// file landed and what was dropped.
pub fn preview(files: &[PathBuf], manifest_json: &str) -> Result<Preview, MergeError> {
    let opened = source::open_merge(files, Some(manifest_json.as_bytes().to_vec()))?;
    let db = crate::cleanup::TempPath::database(crate::database::temp_path());
    let never = std::sync::atomic::AtomicBool::new(false);
    Session::import(
        &source::loose_name(files),
        opened,
        db.path(),
        &mut |_| {},
        &never,
    )?;
    let conn = crate::db::open_read_only(db.path())
        .map_err(|e| MergeError::Output(format!("cannot read the preview: {e}")))?;
    let read = |e: rusqlite::Error| MergeError::Output(format!("cannot read the preview: {e}"));
    let mut stmt = conn
        .prepare(
            "SELECT COALESCE(f.name, 'file ' || p.file_id),
                    COALESCE(m.name, CASE WHEN m.raw_id = 0 THEN 'the host'
                                          ELSE 'machine ' || m.raw_id END),
                    p.status, p.path, p.events,
                    p.dropped
             FROM __sextant_file_placement p
             LEFT JOIN __intrinsic_trace_file f ON f.id = p.file_id
             LEFT JOIN machine m ON m.id = p.machine_id
             ORDER BY p.file_id, p.machine_id",
        )
        .map_err(read)?;
    let placements = stmt
        .query_map([], |r| {
            Ok(Placement {
                file: r.get(0)?,
                machine: r.get(1)?,
                status: r.get(2)?,
                path: r.get(3)?,
                events: r.get(4)?,
                dropped: r.get(5)?,
            })
        })
        .map_err(read)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(read)?;
    let mut stmt = conn
        .prepare(
            "SELECT name, SUM(value) FROM stats
             WHERE value > 0 AND (name LIKE 'clock_sync_failure%'
               OR name = 'clock_sync_unrelatable_clock_domains'
               OR name = 'trace_sorter_negative_timestamp_dropped')
             GROUP BY name ORDER BY name",
        )
        .map_err(read)?;
    let drops = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(read)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(read)?;
    Ok(Preview { placements, drops })
}

/// The largest member a TAR header can say (11 octal digits).
const TAR_MAX_SIZE: u64 = 8 << 30;
/// The longest member name a plain (ustar) TAR header holds.
const TAR_MAX_NAME: usize = 99;

/// Writes the files and the manifest as `out` (a `.tar` or `.zip`), beside it first and
/// renamed into place once whole. Nothing is left behind on error.
pub fn write_archive(out: &Path, files: &[PathBuf], manifest_json: &str) -> Result<(), MergeError> {
    let ext = out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let out_err = |what: &str, e: &dyn std::fmt::Display| {
        MergeError::Output(format!("{}: {what}: {e}", out.display()))
    };
    if ext != "tar" && ext != "zip" {
        return Err(MergeError::Output(format!(
            "{}: the output must end in .tar or .zip (or be - to print the manifest)",
            out.display()
        )));
    }
    if ext == "tar" {
        for path in files {
            let name = member_name(path);
            if name.len() > TAR_MAX_NAME {
                return Err(MergeError::Output(format!(
                    "{name}: a TAR member name holds at most {TAR_MAX_NAME} characters \
                     (this one has {}); rename the file, or write a .zip",
                    name.len()
                )));
            }
            let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            if size >= TAR_MAX_SIZE {
                return Err(MergeError::Output(format!(
                    "{name}: a TAR member holds less than 8 GiB (this one has {size} bytes); \
                     write a .zip"
                )));
            }
        }
    }
    if ext == "zip" {
        let mut members: Vec<(String, Box<dyn Read>)> = Vec::new();
        for path in files {
            let input =
                std::fs::File::open(path).map_err(|e| out_err(&path.display().to_string(), &e))?;
            members.push((member_name(path), Box::new(input)));
        }
        return write_zip(out, manifest_json, members);
    }
    let temp = crate::cleanup::TempPath::database(crate::cleanup::sibling_temp_path(out));
    let file = std::fs::File::create_new(temp.path()).map_err(|e| out_err("cannot write", &e))?;
    let write = |e: &dyn std::fmt::Display| out_err("cannot write", e);
    let mut tar = tar::Builder::new(std::io::BufWriter::new(file));
    let mut header = tar::Header::new_ustar();
    header.set_size(manifest_json.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    tar.append_data(&mut header, MANIFEST_NAME, manifest_json.as_bytes())
        .map_err(|e| write(&e))?;
    for path in files {
        let mut input =
            std::fs::File::open(path).map_err(|e| out_err(&path.display().to_string(), &e))?;
        let size = input.metadata().map_err(|e| write(&e))?.len();
        let mut header = tar::Header::new_ustar();
        header.set_size(size);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, member_name(path), &mut input)
            .map_err(|e| write(&e))?;
    }
    let mut w = tar.into_inner().map_err(|e| write(&e))?;
    w.flush().map_err(|e| write(&e))?;
    std::fs::rename(temp.path(), out).map_err(|e| out_err("cannot move into place", &e))?;
    temp.keep();
    Ok(())
}

/// Writes `manifest_json` and `members` (name, contents) as the ZIP `out`: beside it first,
/// renamed into place once whole.
pub fn write_zip(
    out: &Path,
    manifest_json: &str,
    members: Vec<(String, Box<dyn Read>)>,
) -> Result<(), MergeError> {
    let out_err = |what: &str, e: &dyn std::fmt::Display| {
        MergeError::Output(format!("{}: {what}: {e}", out.display()))
    };
    let write = |e: &dyn std::fmt::Display| out_err("cannot write", e);
    let temp = crate::cleanup::TempPath::database(crate::cleanup::sibling_temp_path(out));
    let file = std::fs::File::create_new(temp.path()).map_err(|e| out_err("cannot write", &e))?;
    let mut zip = zip::ZipWriter::new(std::io::BufWriter::new(file));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    zip.start_file(MANIFEST_NAME, options)
        .map_err(|e| write(&e))?;
    zip.write_all(manifest_json.as_bytes())
        .map_err(|e| write(&e))?;
    for (name, mut input) in members {
        zip.start_file(name, options).map_err(|e| write(&e))?;
        std::io::copy(&mut input, &mut zip).map_err(|e| write(&e))?;
    }
    let mut w = zip.finish().map_err(|e| write(&e))?;
    w.flush().map_err(|e| write(&e))?;
    std::fs::rename(temp.path(), out).map_err(|e| out_err("cannot move into place", &e))?;
    temp.keep();
    Ok(())
}

/// The manifest an input holds, as written (None when it has none).
pub fn manifest_of(input: &Path) -> Result<Option<String>, MergeError> {
    let files = source::open(input)?;
    for f in &files {
        if f.kind != source::Kind::Manifest {
            continue;
        }
        let Some(data) = &f.data else { continue };
        let mut opened = data.open().map_err(|error| SourceError::Read {
            path: input.display().to_string(),
            error,
        })?;
        let mut text = String::new();
        (&mut opened.reader)
            .take(16 << 20)
            .read_to_string(&mut text)
            .map_err(|e| MergeError::Output(format!("{}: {e}", input.display())))?;
        return Ok(Some(text));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_take_units() {
        assert_eq!(parse_offset("250ms"), Some(250_000_000));
        assert_eq!(parse_offset("-1.5s"), Some(-1_500_000_000));
        assert_eq!(parse_offset("40us"), Some(40_000));
        assert_eq!(parse_offset("123"), Some(123));
        assert_eq!(parse_offset("9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_offset("5 parsecs"), None);
        assert_eq!(parse_offset("ms"), None);
    }

    fn opts(files: &[&str]) -> MergeOptions {
        MergeOptions {
            files: files.iter().map(PathBuf::from).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn options_become_the_manifest_the_reader_reads() {
        let mut o = opts(&["dir/phone.pftrace", "watch.pftrace", "log.json"]);
        o.machine = vec![
            "dir/phone.pftrace=phone".into(),
            "watch.pftrace=watch".into(),
        ];
        o.sync = vec![
            "log.json=phone.pftrace:BOOTTIME,250ms".into(),
            "watch.pftrace:realtime=phone.pftrace:REALTIME".into(),
        ];
        o.trace_time = Some("BOOTTIME=phone.pftrace".into());
        let m = build_manifest(&o).expect("valid");
        assert_eq!(m.files.len(), 3);
        assert_eq!(m.files[0].machine.as_deref(), Some("phone"));
        let log = m
            .entry("log.json")
            .and_then(|e| e.clocks.clone())
            .expect("clocks");
        assert!(log.is_pin());
        assert_eq!(log.offset_ns, 250_000_000);
        assert_eq!(log.sync_to.file, "phone.pftrace");
        let watch = m
            .entry("watch.pftrace")
            .and_then(|e| e.clocks.clone())
            .expect("clocks");
        assert_eq!(watch.clock, manifest::clock_id("REALTIME"));
        // The JSON reads back to the same manifest.
        assert_eq!(manifest::parse(to_json(&m).as_bytes()).expect("reads"), m);
    }

    #[test]
    fn invalid_options_get_the_readers_error_texts() {
        let mut o = opts(&["a.pftrace", "b.json"]);
        o.sync = vec!["b.json=ghost.pftrace".into()];
        let e = build_manifest(&o).expect_err("unknown reference");
        assert_eq!(
            e.to_string(),
            ManifestError::UnknownFile {
                site: manifest::RefSite::SyncTo,
                file: "ghost.pftrace".into()
            }
            .to_string()
        );
        let mut o = opts(&["a.pftrace"]);
        o.machine = vec!["a.pftrace=".into()];
        let e = build_manifest(&o).expect_err("empty name");
        assert_eq!(e.to_string(), ManifestError::MachineNameEmpty.to_string());
        let mut o = opts(&["a.pftrace"]);
        o.machine = vec!["x.pftrace=phone".into()];
        let e = build_manifest(&o).expect_err("not in the merge");
        assert!(e.to_string().contains("not one of the files"), "{e}");
        let mut o = opts(&["a.pftrace"]);
        o.trace_time = Some("BOOTIME".into());
        let e = build_manifest(&o).expect_err("clock");
        assert!(e.to_string().contains("unknown clock name: BOOTIME"), "{e}");
    }
}
