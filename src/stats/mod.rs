//! The catalogue of stats — what each counts, how bad it is, where it comes from — and the
//! `stats` table's rows built from what an import counted.
//!
//! Names, order (`key`), severities, sources and scopes are Trace Processor's (the list in
//! [`catalogue`] is generated from the reference notes), so queries against `stats` written
//! for Perfetto keep working; Sextant's own stats follow the reference's list in the
//! catalogue and have no `key`: the writer puts them in `sextant_stats`, so `stats` holds
//! exactly the reference's. As in the reference, every single (non-indexed) stat of the
//! reference's list has a row in every (machine, file) context, at 0 when nothing counted
//! it (Sextant's own only where they counted something), and the global ones one row with
//! no machine or file; indexed stats have rows only where something was counted. [`rows`]
//! hands plain rows to the database writer; [`diagnostics`] holds the checks of the trace
//! config.

mod catalogue;
pub mod diagnostics;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::OnceLock;

use crate::ir::{MachineId, StatKey, HOST_MACHINE, NO_FILE, NO_MACHINE};

pub use catalogue::{REFERENCE_COUNT, STATS};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Info,
    DataLoss,
    Error,
    Notice,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::DataLoss => "data_loss",
            Severity::Error => "error",
            Severity::Notice => "notice",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Recorded by the tracing service.
    Trace,
    /// Found while importing.
    Analysis,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Trace => "trace",
            Source::Analysis => "analysis",
        }
    }
}

#[derive(Debug)]
pub struct StatDef {
    pub name: &'static str,
    /// One row per index (cpu, buffer, …) instead of one per context.
    pub indexed: bool,
    /// About the whole import: no machine, no file.
    pub global: bool,
    pub severity: Severity,
    pub source: Source,
    pub description: &'static str,
}

fn index() -> &'static HashMap<&'static str, usize> {
    static INDEX: OnceLock<HashMap<&'static str, usize>> = OnceLock::new();
    INDEX.get_or_init(|| STATS.iter().enumerate().map(|(i, d)| (d.name, i)).collect())
}

pub fn lookup(name: &str) -> Option<&'static StatDef> {
    index().get(name).map(|&i| &STATS[i])
}

/// The reference's `key` for a stat (its position in the reference's list); `None` for
/// stats only Sextant has.
pub fn key(name: &str) -> Option<usize> {
    index().get(name).copied().filter(|&i| i < REFERENCE_COUNT)
}

/// `ftrace_cpu_<what>_begin` / `_end` (the names are static for the stats table).
pub fn ftrace_cpu_stat(what: &str, end: bool) -> Option<&'static str> {
    let name = format!("ftrace_cpu_{what}_{}", if end { "end" } else { "begin" });
    lookup(&name).map(|d| d.name)
}

/// `ftrace_cpu_<what>_delta`, for the counters that have one.
pub fn ftrace_cpu_delta(what: &str) -> Option<&'static str> {
    lookup(&format!("ftrace_cpu_{what}_delta")).map(|d| d.name)
}

/// One row of the `stats` table.
#[derive(Clone, Debug, PartialEq)]
pub struct StatRow {
    pub name: &'static str,
    pub key: Option<i64>,
    pub idx: Option<i64>,
    pub severity: &'static str,
    pub source: &'static str,
    pub value: i64,
    pub description: &'static str,
    pub machine: Option<i64>,
    pub file: Option<i64>,
}

impl StatRow {
    fn new(def: Option<&'static StatDef>, name: &'static str, idx: Option<i64>) -> Self {
        StatRow {
            name,
            key: key(name).map(|k| k as i64),
            idx,
            severity: def.map_or("error", |d| d.severity.as_str()),
            source: def.map_or("analysis", |d| d.source.as_str()),
            value: 0,
            description: def.map_or("", |d| d.description),
            machine: None,
            file: None,
        }
    }
}

fn machine_col(m: MachineId) -> Option<i64> {
    (m != NO_MACHINE).then_some(i64::from(m))
}

fn file_col(f: u32) -> Option<i64> {
    (f != NO_FILE).then_some(i64::from(f))
}

/// The `stats` rows of an import: the global singles, then every single stat of each
/// (machine, file) context in key order, then the indexed stats that were counted in the
/// order each was first written (`order`, as the reference numbers them; keys missing
/// from it last), then any stat the catalogue does not know. `contexts` are the
/// (machine, file) pairs the import parsed; a pair a stat was counted for is one too.
pub fn rows(
    counted: &HashMap<StatKey, i64>,
    order: &[StatKey],
    contexts: &[(MachineId, u32)],
) -> Vec<StatRow> {
    let rank: HashMap<StatKey, usize> = order.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    // Global stats fold every machine and file together.
    let mut globals: HashMap<&str, i64> = HashMap::new();
    let mut singles: HashMap<(&'static str, MachineId, u32), i64> = HashMap::new();
    // (catalogue position, machine, file, idx) → (value, first write).
    let mut indexed: BTreeMap<(usize, MachineId, u32, i64), (i64, usize)> = BTreeMap::new();
    let mut unknown: BTreeMap<(&'static str, Option<i64>, MachineId, u32), i64> = BTreeMap::new();
    let mut scopes: BTreeSet<(u32, MachineId)> = contexts.iter().map(|&(m, f)| (f, m)).collect();
    for (k, &v) in counted {
        let pos = index().get(k.name).copied();
        match pos.map(|i| (i, &STATS[i])) {
            Some((_, d)) if d.global && !d.indexed => *globals.entry(d.name).or_default() += v,
            Some((i, d)) if d.indexed => {
                let idx = k.idx.unwrap_or(0);
                let first = rank.get(k).copied().unwrap_or(usize::MAX);
                let e = indexed
                    .entry((i, k.machine, k.file, idx))
                    .or_insert((0, first));
                e.0 += v;
                e.1 = e.1.min(first);
            }
            Some((_, d)) => {
                if k.machine != NO_MACHINE && k.file != NO_FILE {
                    scopes.insert((k.file, k.machine));
                }
                *singles.entry((d.name, k.machine, k.file)).or_default() += v;
            }
            None => {
                *unknown
                    .entry((k.name, k.idx, k.machine, k.file))
                    .or_default() += v
            }
        }
    }
    if scopes.is_empty() {
        scopes.insert((0, HOST_MACHINE));
    }
    let mut out = Vec::new();
    for d in STATS.iter().filter(|d| d.global && !d.indexed) {
        let mut row = StatRow::new(Some(d), d.name, None);
        row.value = globals.get(d.name).copied().unwrap_or(0);
        out.push(row);
    }
    for &(file, machine) in &scopes {
        for (i, d) in STATS.iter().enumerate() {
            if d.global || d.indexed {
                continue;
            }
            let value = singles.remove(&(d.name, machine, file)).unwrap_or(0);
            // Only the reference's stats have a row at 0 in every context: Sextant's own
            // appear where they counted something, so queries written for the reference
            // (`name GLOB 'ftrace_*'`) see the reference's rows.
            if i >= REFERENCE_COUNT && value == 0 {
                continue;
            }
            let mut row = StatRow::new(Some(d), d.name, None);
            row.value = value;
            row.machine = machine_col(machine);
            row.file = file_col(file);
            out.push(row);
        }
    }
    // Singles counted outside any context (no machine or no file).
    let mut rest: Vec<_> = singles.into_iter().collect();
    rest.sort_by_key(|&((name, m, f), _)| (key(name), name, m, f));
    for ((name, machine, file), value) in rest {
        let mut row = StatRow::new(lookup(name), name, None);
        row.value = value;
        row.machine = machine_col(machine);
        row.file = file_col(file);
        out.push(row);
    }
    for d in STATS.iter().filter(|d| d.global && d.indexed) {
        let mut by_idx: BTreeMap<i64, i64> = BTreeMap::new();
        for (&(i, _, _, idx), &(v, _)) in &indexed {
            if STATS[i].name == d.name {
                *by_idx.entry(idx).or_default() += v;
            }
        }
        for (idx, value) in by_idx {
            let mut row = StatRow::new(Some(d), d.name, Some(idx));
            row.value = value;
            out.push(row);
        }
    }
    let mut indexed: Vec<_> = indexed.into_iter().collect();
    indexed.sort_by_key(|&(k, (_, first))| (first, k));
    for ((i, machine, file, idx), (value, _)) in indexed {
        let d = &STATS[i];
        if d.global {
            continue;
        }
        let mut row = StatRow::new(Some(d), d.name, Some(idx));
        row.value = value;
        row.machine = machine_col(machine);
        row.file = file_col(file);
        out.push(row);
    }
    for ((name, idx, machine, file), value) in unknown {
        let mut row = StatRow::new(None, name, idx);
        row.value = value;
        row.machine = machine_col(machine);
        row.file = file_col(file);
        out.push(row);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_is_the_references_list_then_sextants() {
        assert_eq!(REFERENCE_COUNT, 358);
        assert_eq!(key("android_aflags_errors"), Some(0));
        assert_eq!(key("traced_buf_chunks_discarded"), Some(130));
        assert_eq!(key("extra_parsing_descriptors_error"), Some(357));
        assert_eq!(key("proto_truncated"), None);
        assert!(lookup("proto_truncated").is_some());
        let globals: Vec<usize> = STATS
            .iter()
            .enumerate()
            .filter(|(_, d)| d.global && !d.indexed)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(globals, [14, 71, 77, 94, 186, 249, 305, 348, 357]);
        let singles = STATS[..REFERENCE_COUNT]
            .iter()
            .filter(|d| !d.global && !d.indexed)
            .count();
        assert_eq!(singles, 269);
        let mut names: Vec<_> = STATS.iter().map(|d| d.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), STATS.len(), "a stat is listed twice");
    }

    /// Every stat name passed to a counting call in the sources is in the catalogue (an
    /// unknown one would be written as an `error` with no description).
    #[test]
    fn every_stat_the_code_counts_is_catalogued() {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        let mut files = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut files,
        );
        let mut checked = 0;
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for call in ["stat(", "stat_indexed(", "set_stat(", ".log("] {
                for (at, _) in text.match_indices(call) {
                    let rest = text[at + call.len()..].trim_start();
                    let Some(rest) = rest.strip_prefix('"') else {
                        continue;
                    };
                    let name = &rest[..rest.find('"').unwrap()];
                    let ident = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
                    if name.is_empty() || !name.chars().all(ident) {
                        continue;
                    }
                    assert!(lookup(name).is_some(), "{}: {name}", f.display());
                    checked += 1;
                }
            }
        }
        assert!(checked > 50, "only {checked} calls found");
    }

    #[test]
    fn every_context_has_every_single_stat_and_indexed_ones_only_when_counted() {
        let mut counted = HashMap::new();
        let k = |name, idx, machine, file| StatKey {
            name,
            idx,
            machine,
            file,
        };
        counted.insert(k("traced_chunks_discarded", None, 0, 0), 3);
        counted.insert(k("traced_buf_chunks_discarded", Some(1), 0, 0), 7);
        counted.insert(k("trace_sorter_negative_timestamp_dropped", None, 1, 1), 2);
        counted.insert(k("trace_sorter_negative_timestamp_dropped", None, 0, 0), 1);
        let rows = rows(&counted, &[], &[(0, 0), (1, 1)]);
        let count = |name: &str| rows.iter().filter(|r| r.name == name).count();
        assert_eq!(count("traced_chunks_discarded"), 2);
        assert_eq!(count("traced_buf_chunks_discarded"), 1);
        assert_eq!(count("traced_buf_abi_violations"), 0);
        let global: Vec<_> = rows
            .iter()
            .filter(|r| r.name == "trace_sorter_negative_timestamp_dropped")
            .collect();
        assert_eq!(global.len(), 1);
        assert_eq!(
            (global[0].value, global[0].machine, global[0].file),
            (3, None, None)
        );
        // The reference's 269 per-context singles in each context; Sextant's own only
        // where counted.
        assert_eq!(rows.len(), 9 + 2 * 269 + 1);
        assert_eq!(count("proto_truncated"), 0);
        let discarded = rows
            .iter()
            .find(|r| r.name == "traced_chunks_discarded" && r.machine == Some(0))
            .unwrap();
        assert_eq!((discarded.value, discarded.key), (3, Some(157)));
    }

    /// A global indexed stat (heap graph packet gaps) has one row per index, every
    /// machine and file folded together.
    #[test]
    fn global_indexed_stats_have_a_row_per_index() {
        let mut counted = HashMap::new();
        let k = |idx, machine, file| StatKey {
            name: "heap_graph_missing_packet",
            idx: Some(idx),
            machine,
            file,
        };
        counted.insert(k(3, 0, 0), 1);
        counted.insert(k(3, 1, 1), 2);
        counted.insert(k(5, 0, 0), 1);
        let rows = rows(&counted, &[], &[(0, 0), (1, 1)]);
        let got: Vec<_> = rows
            .iter()
            .filter(|r| r.name == "heap_graph_missing_packet")
            .map(|r| (r.idx, r.value, r.machine))
            .collect();
        assert_eq!(got, [(Some(3), 3, None), (Some(5), 1, None)]);
    }
}
