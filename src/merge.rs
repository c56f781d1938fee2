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
    /// `CLOCK[=FILE[@MACHINE]]` (given once)
    pub trace_time: Vec<String>,
}

/// The member name of each file: its base name.
fn member_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// A path without `.` components and with `..` folded where it can be (`./s/a.json` and
/// `s/a.json` are the same file).
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Whether `given` (as an option names a file) means `path`: the path as given, its base
/// name, or the same file however it is spelled (`./s/a.json`, an absolute path).
fn names_file(path: &Path, given: &str) -> bool {
    if path.as_os_str() == given || member_name(path) == given {
        return true;
    }
    let given = Path::new(given);
    if lexical(path) == lexical(given) {
        return true;
    }
    match (std::fs::canonicalize(path), std::fs::canonicalize(given)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The member a FILE of an option means, if it is one of the files to merge.
fn find_member(files: &[PathBuf], file: &str) -> Option<String> {
    files
        .iter()
        .find(|p| names_file(p, file))
        .map(|p| member_name(p))
}

/// Which member a FILE in an option means: the path as given or its base name.
fn resolve(
    files: &[PathBuf],
    option: &'static str,
    value: &str,
    file: &str,
) -> Result<String, MergeError> {
    find_member(files, file).ok_or_else(|| MergeError::Option {
        option,
        value: value.to_string(),
        problem: format!("{file:?} is not one of the files to merge"),
    })
}

/// A clock name, as the reader spells them (any case accepted here).
fn clock(option: &'static str, value: &str, name: &str) -> Result<u32, MergeError> {
    manifest::clock_id(&name.to_ascii_uppercase()).ok_or_else(|| MergeError::Option {
        option,
        value: value.to_string(),
        problem: ManifestError::UnknownClockName(name.to_string()).to_string(),
    })
}

/// A file reference of an option, `FILE[@MACHINE][:CLOCK]`, taken apart.
#[derive(Debug, PartialEq)]
struct FileRef {
    /// The member name when FILE is one of the files to merge, else FILE as written (the
    /// reader then names it in its own words).
    file: String,
    machine: Option<String>,
    clock: Option<u32>,
}

/// Takes `FILE[@MACHINE][:CLOCK]` apart. A file of the merge whose name holds `@` or `:`
/// is meant as a whole; a suffix after `:` is a clock when the part before it names a file
/// of the merge (an unknown clock is an error then, not an unknown file).
fn file_ref(
    files: &[PathBuf],
    option: &'static str,
    value: &str,
    s: &str,
) -> Result<FileRef, MergeError> {
    let file_and_machine = |s: &str| -> Option<(String, Option<String>)> {
        if let Some(m) = find_member(files, s) {
            return Some((m, None));
        }
        let (file, machine) = s.rsplit_once('@')?;
        Some((find_member(files, file)?, Some(machine.to_string())))
    };
    if let Some(file) = find_member(files, s) {
        return Ok(FileRef {
            file,
            machine: None,
            clock: None,
        });
    }
    // `…:CLOCK` with a clock name: the part before it is the file (and machine).
    if let Some((head, c)) = s.rsplit_once(':') {
        if let Some(id) = manifest::clock_id(&c.to_ascii_uppercase()) {
            let (file, machine) = file_and_machine(head).unwrap_or((head.to_string(), None));
            return Ok(FileRef {
                file,
                machine,
                clock: Some(id),
            });
        }
    }
    if let Some((file, machine)) = file_and_machine(s) {
        return Ok(FileRef {
            file,
            machine,
            clock: None,
        });
    }
    // `FILE:WORD` where FILE is one of the files: WORD was meant as a clock.
    if let Some((head, c)) = s.rsplit_once(':') {
        if file_and_machine(head).is_some() {
            clock(option, value, c)?;
        }
    }
    Ok(FileRef {
        file: s.to_string(),
        machine: None,
        clock: None,
    })
}

/// An offset in ns: an integer, or a decimal number with a unit (`250ms`, `-1.5s`, `40us`,
/// `1min`). Nanoseconds are whole numbers: `1.5` or `0.5ns` is an error, not rounded, and
/// so is an offset outside the range `offset_ns` holds.
pub fn parse_offset(s: &str) -> Result<i64, String> {
    let text = s.trim();
    let not_offset = || format!("{s:?} is not an offset (ns, or with a unit: 250ms, -1.5s, 40us)");
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let split = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(rest.len());
    let (number, unit) = rest.split_at(split);
    let scale: u128 = match unit.trim() {
        "" | "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(not_offset()),
    };
    let number = number.replace('_', "");
    let (whole, fraction) = number.split_once('.').unwrap_or((&number, ""));
    if (whole.is_empty() && fraction.is_empty())
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !fraction.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(not_offset());
    }
    let out_of_range = || {
        format!(
            "{s:?}: {} (an offset moves a file by at most ±9223372036854775807 ns, about 292 years)",
            ManifestError::OffsetOutOfRange
        )
    };
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| out_of_range())?
    };
    let mut ns = whole.checked_mul(scale).ok_or_else(out_of_range)?;
    if !fraction.is_empty() {
        let digits = fraction.trim_end_matches('0');
        if digits.len() > 30 {
            return Err(not_offset());
        }
        let denominator = 10u128.pow(digits.len() as u32);
        let part: u128 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| not_offset())?
        };
        let scaled = part * scale;
        if !scaled.is_multiple_of(denominator) {
            return Err(format!(
                "{s:?} is not a whole number of nanoseconds (offset_ns is an integer: give ns, \
                 or a unit that makes it whole, e.g. 1500ms)"
            ));
        }
        ns = ns
            .checked_add(scaled / denominator)
            .ok_or_else(out_of_range)?;
    }
    // INT64_MIN is out of range for the reader too.
    if ns > i64::MAX as u128 {
        return Err(out_of_range());
    }
    let ns = ns as i64;
    Ok(if negative { -ns } else { ns })
}

/// Builds the manifest the options describe: an entry for every file (so any of them can be
/// a sync reference), with the options' machines and clocks. Each file takes one of each
/// option: a second one is an error, not a silent override.
pub fn build_manifest(o: &MergeOptions) -> Result<Manifest, MergeError> {
    for path in &o.files {
        if member_name(path) == MANIFEST_NAME {
            return Err(MergeError::Output(format!(
                "{}: a file to merge cannot be named {MANIFEST_NAME}: sextant merge writes the \
                 manifest under that name (say what a manifest would with --machine, --machines, \
                 --sync and --trace-time)",
                path.display()
            )));
        }
    }
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
    // The value each file got from an option already, to refuse a second one.
    let mut given: std::collections::HashMap<(&'static str, String), String> =
        std::collections::HashMap::new();
    let mut once = |option: &'static str, member: &str, value: &str| -> Result<(), MergeError> {
        match given.insert((option, member.to_string()), value.to_string()) {
            Some(first) => Err(MergeError::Option {
                option,
                value: value.to_string(),
                problem: format!(
                    "{option} is given twice for {member} (first {first:?}): give it once"
                ),
            }),
            None => Ok(()),
        }
    };
    for value in &o.machine {
        let (file, name) = split_eq("--machine", value)?;
        let member = resolve(&o.files, "--machine", value, &file)?;
        once("--machine", &member, value)?;
        let i = entry(&mut entries, &member);
        entries[i].machine = Some(name);
    }
    for value in &o.machines {
        let (file, list) = split_eq("--machines", value)?;
        let member = resolve(&o.files, "--machines", value, &file)?;
        once("--machines", &member, value)?;
        let mut machines: Vec<MachineEntry> = Vec::new();
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
            if let Some(first) = machines.iter().find(|m| m.id == id) {
                return Err(MergeError::Option {
                    option: "--machines",
                    value: value.to_string(),
                    problem: format!(
                        "machine id {id} is named twice ({:?} and {name:?}): name it once",
                        first.name
                    ),
                });
            }
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
        let source = file_ref(&o.files, "--sync", value, &source)?;
        let member = resolve(&o.files, "--sync", value, &source.file)?;
        once("--sync", &member, value)?;
        let (target, offset) = match target.rsplit_once(',') {
            Some((t, off)) => {
                let ns = parse_offset(off).map_err(|problem| MergeError::Option {
                    option: "--sync",
                    value: value.to_string(),
                    problem,
                })?;
                (t.to_string(), ns)
            }
            None => (target, 0),
        };
        let target = file_ref(&o.files, "--sync", value, &target)?;
        let i = entry(&mut entries, &member);
        entries[i].clocks = Some(ClockOverride {
            clock: source.clock,
            machine: source.machine,
            sync_to: SyncTo {
                file: target.file,
                machine: target.machine,
                clock: target.clock,
            },
            offset_ns: offset,
        });
    }
    if o.trace_time.len() > 1 {
        return Err(MergeError::Option {
            option: "--trace-time",
            value: o.trace_time.join(" "),
            problem: "--trace-time is given more than once: give it once".into(),
        });
    }
    let trace_time = match o.trace_time.first() {
        None => None,
        Some(value) => {
            let (c, file) = match value.split_once('=') {
                Some((c, f)) => (c, Some(file_ref(&o.files, "--trace-time", value, f)?)),
                None => (value.as_str(), None),
            };
            if let Some(FileRef { clock: Some(_), .. }) = file {
                return Err(MergeError::Option {
                    option: "--trace-time",
                    value: value.to_string(),
                    problem: "the clock goes before the =: --trace-time CLOCK=FILE[@MACHINE]"
                        .into(),
                });
            }
            let (file, machine) = file.map_or((None, None), |f| (Some(f.file), f.machine));
            Some(TraceTime {
                clock: clock("--trace-time", value, c)?,
                file,
                machine,
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
    // @MACHINE picks one machine of a --machines block; for a file without one it would
    // select nothing (the reader ignores it), so it is refused here rather than dropped.
    let single = |file: &str| checked.entry(file).is_some_and(|e| !e.is_multi_machine());
    let mut named = Vec::new();
    if let Some(tt) = &checked.trace_time {
        if let (Some(f), Some(mach)) = (&tt.file, &tt.machine) {
            named.push(("--trace-time", f, mach));
        }
    }
    for e in &checked.files {
        if let Some(c) = &e.clocks {
            if let Some(mach) = &c.machine {
                named.push(("--sync", &e.path, mach));
            }
            if let Some(mach) = &c.sync_to.machine {
                named.push(("--sync", &c.sync_to.file, mach));
            }
        }
    }
    if let Some((option, file, mach)) = named.into_iter().find(|(_, f, _)| single(f)) {
        return Err(MergeError::Option {
            option,
            value: format!("{file}@{mach}"),
            problem: format!(
                "@{mach} names no machine of {file}: only a file with a machines block \
                 (--machines {file}=0:NAME,N:NAME) has machines to name; {file} has one, so \
                 drop @{mach}"
            ),
        });
    }
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
    /// Its events that would be dropped (no path to trace time, or before its zero).
    pub dropped: i64,
}

/// What importing the merge would give: each file's placement, the drops counted, and what
/// is wrong with the options or worth knowing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preview {
    pub placements: Vec<Placement>,
    /// (stat, value) of every clock or sorter drop, as the stats table will say.
    pub drops: Vec<(String, i64)>,
    /// What refuses the options: a sync that moves nothing, an offset out of range.
    pub problems: Vec<String>,
    /// What the options do that the user may not expect (a trace's own machine name wins).
    pub notes: Vec<String>,
    /// When something is dropped: what would keep it.
    pub advice: Vec<String>,
}

impl Preview {
    /// The preview as lines for a terminal.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for p in &self.placements {
            let dropped = match p.dropped {
                0 => String::new(),
                n if n == p.events => format!(", ALL {n} dropped"),
                n => format!(", {n} dropped"),
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
            // The sorter counts what was pushed to it, not the rows above.
            let unit = if name == "trace_sorter_negative_timestamp_dropped" {
                " (one per packet, ftrace event or JSON event, however many rows it makes)"
            } else {
                ""
            };
            out.push(format!("  stat {name} would be {value}{unit}"));
        }
        for note in &self.notes {
            out.push(format!("  note: {note}"));
        }
        out
    }

    /// Whether any event would be dropped.
    pub fn drops_events(&self) -> bool {
        !self.drops.is_empty() || self.placements.iter().any(|p| p.dropped > 0)
    }

    /// Why the merge is not written when it would drop events, and what would keep them.
    pub fn drop_refusal(&self) -> String {
        let mut lost: Vec<String> = self
            .placements
            .iter()
            .filter(|p| p.dropped > 0)
            .map(|p| {
                if p.dropped == p.events {
                    format!("{} would lose all {} of its events", p.file, p.events)
                } else {
                    format!(
                        "{} would lose {} of its {} events",
                        p.file, p.dropped, p.events
                    )
                }
            })
            .collect();
        if lost.is_empty() {
            lost = self
                .drops
                .iter()
                .map(|(n, v)| format!("stat {n} would be {v}"))
                .collect();
        }
        let mut text = format!("nothing written: {}", lost.join("; "));
        for a in &self.advice {
            text.push_str("\n  ");
            text.push_str(a);
        }
        text.push_str("\n  (--allow-drops writes it anyway)");
        text
    }
}

/// Imports the files with `manifest` into a temporary database and reads back where each
/// file landed and what was dropped, with the session's checks of the options.
pub fn preview(files: &[PathBuf], manifest_json: &str) -> Result<Preview, MergeError> {
    let opened = source::open_merge(files, Some(manifest_json.as_bytes().to_vec()))?;
    let db = crate::cleanup::TempPath::database(crate::database::temp_path());
    let never = std::sync::atomic::AtomicBool::new(false);
    let session = Session::import(
        &source::loose_name(files),
        opened,
        db.path(),
        &mut |_| {},
        &never,
    )?;
    let findings = session.findings_in_effect();
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
    let drops: Vec<(String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(read)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(read)?;
    // Refused ClockSnapshots relate nothing: say which and why.
    let mut notes = findings.notes;
    let mut stmt = conn
        .prepare(
            "SELECT COALESCE(f.name, 'file ' || e.file_id), e.message
             FROM __sextant_clock_error e
             LEFT JOIN __intrinsic_trace_file f ON f.id = e.file_id
             ORDER BY e.rowid",
        )
        .map_err(read)?;
    let refused = stmt
        .query_map([], |r| {
            Ok(format!(
                "a ClockSnapshot of {} is refused: {}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?
            ))
        })
        .map_err(read)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(read)?;
    notes.extend(refused);
    let mut preview = Preview {
        placements,
        drops,
        problems: findings.problems,
        notes,
        advice: Vec::new(),
    };
    if preview.drops_events() {
        preview.advice = session.drop_advice();
    }
    Ok(preview)
}

/// The largest member a TAR header can say (11 octal digits).
const TAR_MAX_SIZE: u64 = 8 << 30;
/// The longest member name a plain (ustar) TAR header holds.
const TAR_MAX_NAME: usize = 99;

/// Checks that `out` can be written, before any work: a `.tar` or `.zip` in a directory
/// that exists, not one of the inputs, members a TAR can hold.
pub fn check_output(out: &Path, files: &[PathBuf]) -> Result<(), MergeError> {
    let ext = out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if ext != "tar" && ext != "zip" {
        return Err(MergeError::Output(format!(
            "{}: the output must end in .tar or .zip (or be - to print the manifest)",
            out.display()
        )));
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(MergeError::Output(format!(
            "{}: there is no directory {} to write it in",
            out.display(),
            parent.display()
        )));
    }
    if out.is_dir() {
        return Err(MergeError::Output(format!(
            "{}: is a directory; give the archive's file name",
            out.display()
        )));
    }
    for path in files {
        if names_file(path, &out.to_string_lossy()) {
            return Err(MergeError::Output(format!(
                "{}: is one of the files to merge; write the archive elsewhere",
                out.display()
            )));
        }
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
    Ok(())
}

/// Writes the files and the manifest as `out` (a `.tar` or `.zip`), beside it first and
/// renamed into place once whole. Nothing is left behind on error.
pub fn write_archive(out: &Path, files: &[PathBuf], manifest_json: &str) -> Result<(), MergeError> {
    check_output(out, files)?;
    let ext = out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let out_err = |what: &str, e: &dyn std::fmt::Display| {
        MergeError::Output(format!("{}: {what}: {e}", out.display()))
    };
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

/// What `sextant manifest` finds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ManifestOf {
    /// The manifest JSON.
    Text(String),
    /// There is none, and why (said in full).
    None(String),
}

/// The manifest in effect for an input: an archive's member, the manifest among loose files
/// or in a directory, or what a database written by `sextant import` recorded.
pub fn manifest_of(inputs: &[PathBuf]) -> Result<ManifestOf, MergeError> {
    let name = source::loose_name(inputs);
    if let [one] = inputs {
        if crate::database::is_sqlite(one) {
            return manifest_of_database(one);
        }
    }
    let files = source::open_paths(inputs)?;
    for f in &files {
        if f.kind != source::Kind::Manifest {
            continue;
        }
        let Some(data) = &f.data else { continue };
        let mut opened = data.open().map_err(|error| SourceError::Read {
            path: name.clone(),
            error,
        })?;
        let mut text = String::new();
        (&mut opened.reader)
            .take(16 << 20)
            .read_to_string(&mut text)
            .map_err(|e| MergeError::Output(format!("{name}: {e}")))?;
        return Ok(ManifestOf::Text(text));
    }
    Ok(ManifestOf::None(format!(
        "{name} has no perfetto_manifest: its files are placed by the default rules"
    )))
}

fn manifest_of_database(path: &Path) -> Result<ManifestOf, MergeError> {
    let name = path.display();
    let conn =
        crate::db::open_read_only(path).map_err(|e| MergeError::Output(format!("{name}: {e}")))?;
    let table = crate::import::MANIFEST_TABLE;
    let has_table: bool = conn
        .query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE name = ?1",
            [table],
            |r| r.get(0),
        )
        .map_err(|e| MergeError::Output(format!("{name}: {e}")))?;
    if !has_table {
        // Databases record their manifest since this table exists: an older one, or one
        // whose input had no manifest.
        let files: i64 = conn
            .query_row(
                "SELECT count(*) FROM __intrinsic_trace_file WHERE trace_type = 'perfetto_manifest'",
                [],
                |r| r.get(0),
            )
            .unwrap_or(0);
        return Ok(ManifestOf::None(if files > 0 {
            format!(
                "{name} is a database written before Sextant recorded the manifest in effect: \
                 import the traces again (sextant import) to see it"
            )
        } else {
            format!(
                "{name} is a database of traces that had no perfetto_manifest: its files were \
                 placed by the default rules"
            )
        }));
    }
    let json: String = conn
        .query_row(&format!("SELECT json FROM {table} LIMIT 1"), [], |r| {
            r.get(0)
        })
        .map_err(|e| MergeError::Output(format!("{name}: {e}")))?;
    Ok(ManifestOf::Text(json))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_take_units() {
        assert_eq!(parse_offset("250ms"), Ok(250_000_000));
        assert_eq!(parse_offset("-1.5s"), Ok(-1_500_000_000));
        assert_eq!(parse_offset("40us"), Ok(40_000));
        assert_eq!(parse_offset("1min"), Ok(60_000_000_000));
        assert_eq!(parse_offset("123"), Ok(123));
        assert_eq!(parse_offset("1.5us"), Ok(1_500));
        assert_eq!(parse_offset("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(parse_offset("-9223372036854775807"), Ok(-i64::MAX));
        assert!(parse_offset("5 parsecs").is_err());
        assert!(parse_offset("ms").is_err());
        assert!(parse_offset("").is_err());
    }

    #[test]
    fn offsets_are_whole_nanoseconds_in_range_never_rounded() {
        for s in ["1.5", "0.5ns", "1.0000000005s"] {
            let e = parse_offset(s).expect_err(s);
            assert!(e.contains("not a whole number of nanoseconds"), "{s}: {e}");
        }
        for s in [
            "9223372036854775808",
            "-9223372036854775808",
            "10000000000s",
            "1e30",
        ] {
            let e = parse_offset(s).expect_err(s);
            assert!(
                e.contains("offset_ns is out of range") || e.contains("is not an offset"),
                "{s}: {e}"
            );
        }
        let e = parse_offset("9223372036854775808").expect_err("too large");
        assert!(e.contains("out of range"), "{e}");
    }

    #[test]
    fn a_file_reference_takes_a_machine_and_a_clock() {
        let files: Vec<PathBuf> = ["dir/e@x.pftrace", "log.json"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let r = file_ref(&files, "--sync", "v", "e@x.pftrace@vm:boottime").expect("parses");
        assert_eq!(
            r,
            FileRef {
                file: "e@x.pftrace".into(),
                machine: Some("vm".into()),
                clock: manifest::clock_id("BOOTTIME"),
            }
        );
        let r = file_ref(&files, "--sync", "v", "./dir/e@x.pftrace").expect("parses");
        assert_eq!(r.file, "e@x.pftrace");
        assert_eq!((r.machine, r.clock), (None, None));
        // An unknown clock after a file of the merge is an unknown clock, not an unknown file.
        let e = file_ref(&files, "--sync", "v", "log.json:FOO").expect_err("unknown clock");
        assert!(e.to_string().contains("unknown clock name: FOO"), "{e}");
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
        o.trace_time = vec!["BOOTTIME=phone.pftrace".into()];
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
    fn a_machine_of_a_file_without_a_machines_block_is_refused() {
        let mut o = opts(&["a.pftrace", "b.pftrace"]);
        o.trace_time = vec!["BOOTTIME=b.pftrace@vm".into()];
        let e = build_manifest(&o).expect_err("b has one machine");
        assert!(
            e.to_string().contains("@vm names no machine of b.pftrace"),
            "{e}"
        );
        let mut o = opts(&["a.pftrace", "b.pftrace"]);
        o.sync = vec!["a.pftrace:BOOTTIME=b.pftrace@vm:BOOTTIME".into()];
        let e = build_manifest(&o).expect_err("b has one machine");
        assert!(e.to_string().starts_with("--sync b.pftrace@vm:"), "{e}");
        // With a --machines block, @vm names one of them.
        o.machines = vec!["b.pftrace=0:host,7:vm".into()];
        build_manifest(&o).expect("vm is b's");
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
        o.trace_time = vec!["BOOTIME".into()];
        let e = build_manifest(&o).expect_err("clock");
        assert!(e.to_string().contains("unknown clock name: BOOTIME"), "{e}");
    }
}
