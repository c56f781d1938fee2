//! ART's Java heap dumps, as Trace Processor's HeapGraphTracker keeps them: the rows of
//! `heap_graph_object`, `heap_graph_class` and `heap_graph_reference`, made by the parser
//! when a dump is complete (reachability from the GC roots, distance from the nearest root,
//! native sizes from NativeAllocationRegistry cleaners, reference field names), kept in the
//! [`Sink`] and written whole at the end; names from deobfuscation maps (which may come
//! later in the trace) are applied then. The model only places each dump: its process and
//! its time ([`ProfileSample::HeapGraph`]).

use super::*;

/// A `heap_graph_class` row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapClassRow {
    pub name: StrId,
    /// The location (APK / jar) its code came from, or NULL.
    pub location: StrId,
    pub superclass: Option<u32>,
    /// The object row of its class loader.
    pub classloader: Option<u32>,
    /// `KIND_NORMAL`, `KIND_ARRAY`, … or NULL.
    pub kind: StrId,
    /// From a deobfuscation map (set at the end of the import).
    pub deobfuscated_name: StrId,
}

/// A `heap_graph_object` row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapObjectRow {
    pub dump: u32,
    pub self_size: i64,
    pub native_size: i64,
    pub reference_set: Option<u32>,
    pub reachable: bool,
    /// `HEAP_TYPE_APP`, … or NULL.
    pub heap_type: StrId,
    pub class: Option<u32>,
    /// `ROOT_JAVA_FRAME`, … or NULL for an object that is not a root.
    pub root_type: StrId,
    /// Hops from the nearest root, -1 when unreachable.
    pub root_distance: i64,
}

/// A `heap_graph_reference` row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapReferenceRow {
    pub reference_set: u32,
    pub owner: u32,
    /// NULL for a field that held no object.
    pub owned: Option<u32>,
    /// `<declaring class>.<field>`.
    pub field_name: StrId,
    pub field_type_name: StrId,
    /// From a deobfuscation map (set at the end of the import).
    pub deobfuscated_field_name: StrId,
}

/// A heap dump: whose, when (set by the model), and what ART said about it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeapDump {
    pub process: ProcessRef,
    pub heap_size: Option<i64>,
    /// Placed by the model: (upid, ts).
    pub placed: Option<(u32, i64)>,
    /// Its objects are `objects[first..end]`.
    pub objects: (u32, u32),
}

/// The Java frames of the thread that ran out of memory, innermost first.
#[derive(Clone, Debug, PartialEq)]
pub struct OomStack {
    pub process: ProcessRef,
    pub callsite: u32,
    /// Placed by the model: (upid, ts).
    pub placed: Option<(u32, i64)>,
}

/// Every heap dump of the import.
#[derive(Default)]
pub struct HeapGraphStore {
    pub dumps: Vec<HeapDump>,
    pub classes: Vec<HeapClassRow>,
    pub objects: Vec<HeapObjectRow>,
    pub references: Vec<HeapReferenceRow>,
    /// Processes ART dumped because of an OutOfMemoryError (ArtProcessMetadata).
    pub oome_processes: Vec<ProcessRef>,
    pub oom_stacks: Vec<OomStack>,
    /// Deobfuscated class names by (package, obfuscated name), and reference field names
    /// by obfuscated `<class>.<member>`.
    pub class_names: FxHashMap<(StrId, StrId), StrId>,
    pub field_names: FxHashMap<StrId, StrId>,
}

/// System apps whose code is not under `/data/app/<package>-…`: Trace Processor's
/// PackageFromLocation names their packages from a fixed list (by the APK path's end, or a
/// part of the path anywhere in it).
const SYSTEM_APPS_BY_SUFFIX: [(&str, &str); 6] = [
    ("/SystemUIGoogle/SystemUIGoogle.apk", "com.android.systemui"),
    ("/Phonesky/Phonesky.apk", "com.android.vending"),
    ("/Maps/Maps.apk", "com.google.android.apps.maps"),
    (
        "/NexusLauncherRelease/NexusLauncherRelease.apk",
        "com.google.android.apps.nexuslauncher",
    ),
    ("/Photos/Photos.apk", "com.google.android.apps.photos"),
    (
        "/WellbeingPrebuilt/WellbeingPrebuilt.apk",
        "com.google.android.apps.wellbeing",
    ),
];
const SYSTEM_APPS_BY_PART: [(&str, &str); 5] = [
    ("DevicePersonalizationPrebuilt", "com.google.android.as"),
    ("DevicePersonalizationServices", "com.google.android.as"),
    ("MatchMaker", "com.google.android.as"),
    ("PrebuiltGmsCore", "com.google.android.gms"),
    ("com.google.android.gms", "com.google.android.gms"),
];

/// The package an Android code location belongs to (a few system apps by name;
/// `/data/app/<pkg>-…/base.apk`, also with a `~~…==/` directory in front;
/// `/data/data/<pkg>/…`), as Trace Processor finds it.
pub fn package_of(location: &str) -> Option<&str> {
    for (suffix, package) in SYSTEM_APPS_BY_SUFFIX {
        if location.ends_with(suffix) {
            return Some(package);
        }
    }
    for (part, package) in SYSTEM_APPS_BY_PART {
        if location.contains(part) {
            return Some(package);
        }
    }
    if let Some(rest) = location.strip_prefix("/data/app/") {
        let mut parts = rest.split('/');
        let mut first = parts.next()?;
        if first.starts_with("~~") {
            first = parts.next()?;
        }
        return Some(first.rsplit_once('-').map_or(first, |(p, _)| p));
    }
    if let Some(rest) = location.strip_prefix("/data/data/") {
        return rest.split('/').next();
    }
    None
}

/// A type name without its array dimensions, and how many it had (`a.B[][]` → (`a.B`, 2)).
fn split_array(name: &str) -> (&str, usize) {
    let mut base = name;
    let mut dims = 0;
    while let Some(b) = base.strip_suffix("[]") {
        base = b;
        dims += 1;
    }
    (base, dims)
}

impl Builder<'_> {
    /// Deobfuscated names of classes and reference fields, from every map the trace held:
    /// a map of a package applies to classes loaded from that package's code; classes of
    /// no known package take any map's name.
    pub(super) fn deobfuscate_heap_graphs(&mut self) {
        if self.sink.heap_graph.class_names.is_empty()
            && self.sink.heap_graph.field_names.is_empty()
        {
            return;
        }
        let mut any_package: FxHashMap<StrId, StrId> = FxHashMap::default();
        for (&(_, obf), &deobf) in &self.sink.heap_graph.class_names {
            any_package.entry(obf).or_insert(deobf);
        }
        for i in 0..self.sink.heap_graph.classes.len() {
            let c = self.sink.heap_graph.classes[i];
            let name = self.sink.strings.get(c.name).unwrap_or("").to_string();
            let (base, dims) = split_array(&name);
            let location = self.sink.strings.get(c.location).unwrap_or("").to_string();
            let package = package_of(&location).map(str::to_string);
            let base_id = self.sink.intern(base);
            let found = match &package {
                Some(p) => {
                    let p = self.sink.intern(p);
                    self.sink.heap_graph.class_names.get(&(p, base_id)).copied()
                }
                None => any_package.get(&base_id).copied(),
            };
            let Some(d) = found else {
                continue;
            };
            let name = if dims == 0 {
                d
            } else {
                let text = format!(
                    "{}{}",
                    self.sink.strings.get(d).unwrap_or(""),
                    "[]".repeat(dims)
                );
                self.sink.intern(&text)
            };
            self.sink.heap_graph.classes[i].deobfuscated_name = name;
        }
        let hg = &mut self.sink.heap_graph;
        for r in &mut hg.references {
            if let Some(&d) = hg.field_names.get(&r.field_name) {
                r.deobfuscated_field_name = d;
            }
        }
    }

    /// A heap dump or an OOM stack is placed: the process its pid names now, and the time.
    pub(super) fn place_heap_graph(&mut self, ts: i64, dump: Option<u32>, stack: Option<u32>) {
        if let Some(d) = dump {
            let Some(process) = self
                .sink
                .heap_graph
                .dumps
                .get(d as usize)
                .map(|d| d.process)
            else {
                return;
            };
            let upid = self.process(process);
            self.sink.heap_graph.dumps[d as usize].placed = Some((upid, ts));
        }
        if let Some(s) = stack {
            let Some(process) = self
                .sink
                .heap_graph
                .oom_stacks
                .get(s as usize)
                .map(|s| s.process)
            else {
                return;
            };
            let upid = self.process(process);
            self.sink.heap_graph.oom_stacks[s as usize].placed = Some((upid, ts));
        }
    }
}
