//! The typed event stream every importer emits.
//!
//! Parsers turn bytes into [`Event`]s carrying the **raw** timestamp and the clock it was read
//! on; they know nothing of SQLite. The model (`crate::model`) later sorts the events, resolves
//! threads, processes and tracks, and builds Trace-Processor-shaped rows.
//!
//! Events are kept small (strings are interned into a [`StringPool`], tracks into a
//! [`TrackKey`] interner, args into an [`ArgArena`]) because a large trace holds millions of
//! them in memory between parsing and sorting.

mod descriptor;
mod events;
mod machines;
mod v8;
pub use descriptor::*;
pub use events::*;
pub use machines::*;
pub use v8::*;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// A fast non-cryptographic hasher (FxHash) for the importer's hot maps: keys come from
/// trace files, but a slow or adversarial hash would only cost time, never correctness.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut v = [0u8; 8];
            v[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(v));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }
    fn write_u16(&mut self, i: u16) {
        self.write_u64(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub type FxBuild = BuildHasherDefault<FxHasher>;
pub type FxHashMap<K, V> = HashMap<K, V, FxBuild>;

/// An f64 compared and hashed by its bits, so event payloads can be interned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Real(pub f64);

impl Eq for Real {}

impl Hash for Real {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

/// Index into [`StringPool`]; `0` is NULL.
pub type StrId = u32;
/// The NULL string.
pub const NULL_STR: StrId = 0;

/// Interns every string of an import once.
#[derive(Default)]
pub struct StringPool {
    ids: FxHashMap<Box<str>, StrId>,
    strings: Vec<Box<str>>,
}

impl StringPool {
    pub fn new() -> Self {
        Self {
            ids: FxHashMap::default(),
            // Slot 0 is NULL and never looked up by content.
            strings: vec![Box::from("")],
        }
    }

    pub fn intern(&mut self, s: &str) -> StrId {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.strings.len() as StrId;
        self.strings.push(Box::from(s));
        self.ids.insert(Box::from(s), id);
        id
    }

    /// Interns, mapping the empty string to NULL (as Trace Processor does for names and
    /// categories).
    pub fn intern_nonempty(&mut self, s: &str) -> StrId {
        if s.is_empty() {
            NULL_STR
        } else {
            self.intern(s)
        }
    }

    /// The string, or `None` for NULL.
    pub fn get(&self, id: StrId) -> Option<&str> {
        if id == NULL_STR {
            None
        } else {
            self.strings.get(id as usize).map(|s| &**s)
        }
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.len() <= 1
    }
}

/// A typed argument value, as the `args` table stores it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArgValue {
    Int(i64),
    Uint(u64),
    Str(StrId),
    Real(f64),
    Bool(bool),
    Pointer(u64),
    /// Raw JSON text.
    Json(StrId),
    Null,
    /// The utid of an interned [`ThreadRef`] (see [`Sink::thread_refs`]); the model replaces
    /// it with an `Int` once it knows the thread's row.
    ThreadUtid(u32),
    /// The upid of an interned [`ProcessRef`] (see [`Sink::process_refs`]), likewise.
    ProcessUpid(u32),
    /// `legacy_event.passthrough_utid`: the sequence's thread (an interned [`ThreadRef`])
    /// of a TrackEvent on a described track. As in Trace Processor, the model keeps it (as
    /// the thread's utid) only on a global track or one of the thread's own process, and
    /// drops it on a thread's track, once it knows where the event landed.
    PassthroughUtid(u32),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arg {
    /// The key without array indices (`args.a`).
    pub flat_key: StrId,
    /// The full key (`args.a[0]`).
    pub key: StrId,
    pub value: ArgValue,
}

/// Index of an arg set in [`ArgArena`]; `0` means "no args".
pub type ArgsRef = u32;
pub const NO_ARGS: ArgsRef = 0;

/// Arg sets built by the parsers; each set is a run of [`Arg`]s in insertion order.
pub struct ArgArena {
    args: Vec<Arg>,
    /// (start, len) into `args`; index 0 is the empty set.
    sets: Vec<(u32, u32)>,
    /// Sets stored by [`ArgArena::push_shared`], by a hash of their content.
    shared: HashMap<u64, ArgsRef, FxBuild>,
}

impl Default for ArgArena {
    fn default() -> Self {
        Self {
            args: Vec::new(),
            sets: vec![(0, 0)],
            shared: HashMap::default(),
        }
    }
}

impl ArgArena {
    /// Stores a set; an empty set is [`NO_ARGS`]. A key repeated within the set keeps its
    /// first position and takes the last value, as Trace Processor's arg inserter does.
    pub fn push(&mut self, args: &[Arg]) -> ArgsRef {
        if args.is_empty() {
            return NO_ARGS;
        }
        let start = self.args.len() as u32;
        if args.len() <= 32 {
            for arg in args {
                let set = &mut self.args[start as usize..];
                if let Some(existing) = set.iter_mut().find(|a| a.key == arg.key) {
                    existing.value = arg.value;
                } else {
                    self.args.push(*arg);
                }
            }
        } else {
            // A large set (a reflected winscope message) looks its keys up by hash: the
            // scan above would be quadratic in its size.
            let mut at: FxHashMap<StrId, usize> = FxHashMap::default();
            for arg in args {
                match at.entry(arg.key) {
                    std::collections::hash_map::Entry::Occupied(e) => {
                        self.args[*e.get()].value = arg.value;
                    }
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(self.args.len());
                        self.args.push(*arg);
                    }
                }
            }
        }
        let id = self.sets.len() as ArgsRef;
        self.sets.push((start, self.args.len() as u32 - start));
        id
    }

    /// Like [`ArgArena::push`], but a set equal to one stored earlier this way is stored
    /// once: raw ftrace events repeat the same few sets (a scheduler switching between
    /// the same threads) millions of times.
    pub fn push_shared(&mut self, args: &[Arg]) -> ArgsRef {
        if args.is_empty() {
            return NO_ARGS;
        }
        let mut hasher = FxHasher::default();
        for a in args {
            let value = match a.value {
                ArgValue::Int(v) => (0u8, v as u64),
                ArgValue::Uint(v) => (1, v),
                ArgValue::Str(s) => (2, u64::from(s)),
                ArgValue::Real(v) => (3, v.to_bits()),
                ArgValue::Bool(b) => (4, u64::from(b)),
                ArgValue::Pointer(p) => (5, p),
                ArgValue::Json(s) => (6, u64::from(s)),
                ArgValue::Null => (7, 0),
                ArgValue::ThreadUtid(u) => (8, u64::from(u)),
                ArgValue::ProcessUpid(u) => (9, u64::from(u)),
                ArgValue::PassthroughUtid(u) => (10, u64::from(u)),
            };
            (a.flat_key, a.key, value).hash(&mut hasher);
        }
        let hash = hasher.finish();
        if let Some(&id) = self.shared.get(&hash) {
            if self.get(id) == args {
                return id;
            }
        }
        let id = self.push(args);
        self.shared.insert(hash, id);
        id
    }

    /// An empty set with an id of its own, for args that may only be known at the end of
    /// the file (see [`ArgArena::replace`]); still empty then, it writes no args (NULL
    /// `arg_set_id`).
    pub fn reserve(&mut self) -> ArgsRef {
        let id = self.sets.len() as ArgsRef;
        self.sets.push((self.args.len() as u32, 0));
        id
    }

    /// Gives a stored set new content (Trace Processor's end-of-trace arg translation):
    /// the set keeps its id, its args move to the end of the arena.
    pub fn replace(&mut self, id: ArgsRef, args: &[Arg]) {
        if id == NO_ARGS || id as usize >= self.sets.len() {
            return;
        }
        let fresh = self.push(args);
        if fresh != NO_ARGS {
            self.sets[id as usize] = self.sets[fresh as usize];
            self.sets.pop();
        }
    }

    pub fn get(&self, id: ArgsRef) -> &[Arg] {
        match self.sets.get(id as usize) {
            Some(&(start, len)) => &self.args[start as usize..(start + len) as usize],
            None => &[],
        }
    }
}

/// Collects args for one event before they go into the arena.
#[derive(Default)]
pub struct ArgsBuilder {
    pub args: Vec<Arg>,
}

impl ArgsBuilder {
    pub fn add(&mut self, flat_key: StrId, key: StrId, value: ArgValue) {
        self.args.push(Arg {
            flat_key,
            key,
            value,
        });
    }

    pub fn clear(&mut self) {
        self.args.clear();
    }
}

/// A thread as named in a trace: tid, and pid when the source says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThreadRef {
    pub machine: MachineId,
    pub tid: i64,
    pub pid: Option<i64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcessRef {
    pub machine: MachineId,
    pub pid: i64,
}

/// Bytes and packets of one kind in a trace file: the TracePacket field their payload came
/// in, and for TrackEvents also their category and name (columns, so `args` holds what the
/// reference's holds by default). With `--analyze-trace-proto-content` a TrackEvent row also
/// gets the reference's annotation arg set (`event.category`, `event.name`); otherwise
/// `annotation` is [`NO_ARGS`].
#[derive(Clone, Copy, Debug)]
pub struct ProtoContent {
    pub file: u32,
    pub path: &'static str,
    pub category: StrId,
    pub name: StrId,
    pub annotation: ArgsRef,
    pub size: u64,
    pub count: u64,
}

/// What Trace Processor records on a legacy (Chrome) async track besides its set: the
/// `source_scope` arg, whether the id was process-scoped, and the process whose event made
/// the track (its `upid` arg, even for a global id).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LegacyAsyncInfo {
    pub source_scope: StrId,
    pub process_scoped: bool,
    pub creator: Option<ProcessRef>,
}

/// What a set of async tracks is keyed by (Trace Processor's track compressor "set").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AsyncSet {
    /// `track.type`, e.g. `legacy_async_process_slice`, `atrace_async_slice`.
    pub kind: &'static str,
    pub machine: MachineId,
    /// Process scope, or `None` for a global set.
    pub process: Option<ProcessRef>,
    /// The `name` dimension (also the track's name).
    pub name: StrId,
    /// Extra scope dimension (JSON category / id scope).
    pub scope: StrId,
}

/// How an event names its track. The model turns each into a `track` row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TrackKey {
    /// The thread's own slice track (`thread_execution`), shared by all formats.
    ThreadSlices(ThreadRef),
    /// Overflow lanes for overlapping JSON `X` events (`thread_overlapping_slice`).
    ThreadOverlap(ThreadRef),
    /// A counter scoped to a process (`atrace_counter`, `json_counter`).
    ProcessCounter {
        process: ProcessRef,
        name: StrId,
        kind: &'static str,
    },
    /// A counter scoped to a thread.
    ThreadCounter {
        thread: ThreadRef,
        name: StrId,
        kind: &'static str,
    },
    /// A process counter named by one of its threads (kernel events carry a tid): the
    /// thread's process, or the process of that pid when the thread has none.
    ThreadProcessCounter {
        thread: ThreadRef,
        name: StrId,
        kind: &'static str,
    },
    /// A counter scoped to a cpu (`cpu_frequency`, `cpu_idle`).
    CpuCounter {
        machine: MachineId,
        cpu: u32,
        name: StrId,
        kind: &'static str,
    },
    /// Slices scoped to a cpu (interrupt handlers).
    CpuSlices {
        machine: MachineId,
        cpu: u32,
        name: StrId,
        kind: &'static str,
    },
    /// A machine-wide counter.
    GlobalCounter {
        machine: MachineId,
        name: StrId,
        kind: &'static str,
    },
    /// A machine-wide slice track of a given type and name (e.g. legacy global instants).
    GlobalSlices {
        machine: MachineId,
        kind: &'static str,
        name: StrId,
    },
    /// A machine-wide slice track of a kernel object (a fence timeline, a GPU ring, a
    /// block device, a TCP stream), with the dimension that names it when it has one.
    KernelSlices {
        machine: MachineId,
        kind: &'static str,
        name: StrId,
        dim: Option<(&'static str, i64)>,
    },
    /// A process-wide slice track of a given type (e.g. `chrome_process_instant`).
    ProcessSlices {
        process: ProcessRef,
        kind: &'static str,
        name: StrId,
    },
    /// An async slice identified by a cookie within a set: slots are reused when free.
    AsyncCookie { set: AsyncSet, cookie: u64 },
    /// A scoped (begin+duration) async slice placed in the first free lane of a set.
    AsyncScoped { set: AsyncSet },
    /// A TrackDescriptor uuid (proto). `seq_thread` is the writing sequence's thread, used
    /// for uuid 0 events on sequences that describe a thread.
    Descriptor {
        machine: MachineId,
        uuid: u64,
        seq_thread: Option<ThreadRef>,
    },
    /// A probe's track (Android / system probes) with Trace Processor's dimensions, unit
    /// and track args: an index into [`Sink::probe_tracks`].
    Probe(u32),
}

/// Where a probe track lives (its scope dimension, which comes first in its dimensions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeScope {
    Global,
    Cpu(u32),
    Process(ProcessRef),
}

/// A probe's counter (or slice) track, as Trace Processor's track blueprints describe it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProbeTrack {
    pub machine: MachineId,
    /// `track.type`.
    pub kind: &'static str,
    pub name: StrId,
    pub scope: ProbeScope,
    /// Dimension args after the scope's own (`cpu` / `upid`), in order (a shared set).
    pub dims: ArgsRef,
    pub unit: StrId,
    pub description: StrId,
    /// Track args (`source_arg_set_id`).
    pub source_args: ArgsRef,
    /// A slice track (else a counter track).
    pub slices: bool,
}

/// SurfaceFlinger's four kinds of FrameTimeline frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameKind {
    ExpectedDisplay,
    ActualDisplay,
    ExpectedSurface,
    ActualSurface,
}

/// The start of a FrameTimeline frame (see `parse::proto::frame_timeline`): the parser
/// builds its args; the model pairs it with its end by cookie and links surfaces to
/// displays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameStart {
    pub process: ProcessRef,
    pub cookie: i64,
    pub kind: FrameKind,
    pub token: i64,
    /// The display frame a surface frame was composited into (the token itself for a
    /// display frame).
    pub display_token: i64,
    pub args: ArgsRef,
}

/// One `android_logs` row before its thread is resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LogLine {
    pub thread: ThreadRef,
    pub prio: i64,
    /// NULL when the event had no tag (an empty tag is kept).
    pub tag: StrId,
    pub msg: StrId,
}

/// One `package_list` row (first occurrence of a package name wins).
#[derive(Clone, Debug, PartialEq)]
pub struct PackageRow {
    pub machine: MachineId,
    pub name: String,
    pub uid: i64,
    pub debuggable: bool,
    pub profileable_from_shell: bool,
    pub version_code: i64,
}

/// One `gpu` row (GpuInfo): a GPU of a machine, numbered in order.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuRow {
    pub machine: MachineId,
    pub gpu: i64,
    pub name: Option<String>,
    pub vendor: Option<String>,
    pub model: Option<String>,
    pub architecture: Option<String>,
    /// The uuid's bytes in hex.
    pub uuid: Option<String>,
    pub pci_bdf: Option<String>,
    /// `extra_info` key/values.
    pub args: ArgsRef,
}

/// What a game mode of `android_game_intervention_list` does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GameMode {
    pub downscale: f64,
    pub use_angle: bool,
    pub fps: f64,
}

/// One `android_game_intervention_list` row: the standard, performance and battery modes
/// (absent when the game does not support one).
#[derive(Clone, Debug, PartialEq)]
pub struct GameIntervention {
    pub machine: MachineId,
    pub package: String,
    pub uid: i64,
    pub current_mode: i64,
    pub modes: [Option<GameMode>; 3],
}

/// One `gpu_context` row: an interned graphics context (its id, process and API).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuContextRow {
    pub machine: MachineId,
    pub context_id: i64,
    pub pid: i64,
    pub api: StrId,
}

/// One systemd journal entry before its thread is resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JournaldEntry {
    /// The writing thread, when the entry names its pid.
    pub thread: Option<ThreadRef>,
    pub pid: Option<i64>,
    pub tid: Option<i64>,
    pub uid: Option<i64>,
    pub gid: Option<i64>,
    pub prio: Option<i64>,
    pub tag: StrId,
    pub msg: StrId,
    pub comm: StrId,
    pub exe: StrId,
    pub systemd_unit: StrId,
    pub hostname: StrId,
    pub transport: StrId,
}

/// Index into the track-key interner.
pub type TrackRef = u32;

/// Interns values to dense u32 ids.
pub struct Interner<T: Hash + Eq + Copy> {
    ids: FxHashMap<T, u32>,
    values: Vec<T>,
}

impl<T: Hash + Eq + Copy> Default for Interner<T> {
    fn default() -> Self {
        Self {
            ids: FxHashMap::default(),
            values: Vec::new(),
        }
    }
}

impl<T: Hash + Eq + Copy> Interner<T> {
    pub fn intern(&mut self, value: T) -> u32 {
        if let Some(&id) = self.ids.get(&value) {
            return id;
        }
        let id = self.values.len() as u32;
        self.values.push(value);
        self.ids.insert(value, id);
        id
    }

    pub fn get(&self, id: u32) -> &T {
        &self.values[id as usize]
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// Index into [`Sink::clocks`].
pub type ClockRef = u16;

/// One event: 16 bytes, because large traces hold millions between parsing and sorting.
/// What happened (and on which clock) is a payload shared by identical events.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    /// Raw timestamp on the payload's clock until the clock step converts it to trace time.
    pub ts: i64,
    /// Insertion order: ties in time keep file order.
    pub ord: u32,
    /// Index into [`Sink::payloads`].
    pub payload: u32,
}

/// A slice payload without args, flows or duration, as a key (see [`Sink::push`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct SliceKey {
    clock: ClockRef,
    kind: u8,
    track: TrackRef,
    category: StrId,
    name: StrId,
    thread_ts: i64,
    thread_dur: i64,
}

/// An event with its payload spelled out (see [`Sink::decoded`]).
#[derive(Clone, Debug)]
pub struct DecodedEvent {
    pub ts: i64,
    pub ord: u32,
    pub clock: ClockRef,
    pub data: EventData,
}

/// One reading of several clocks at the same instant (a ClockSnapshot packet).
#[derive(Clone, Debug)]
pub struct ClockSnapshot {
    pub machine: MachineId,
    pub file: u32,
    /// The snapshot's `primary_trace_clock`, when it names one.
    pub primary_trace_clock: Option<u32>,
    /// (clock, value in ns). Clock values are already scaled to ns.
    pub readings: Vec<(ClockDomain, i64)>,
    /// Each reading's encoding as the snapshot declared it: (`unit_multiplier_ns`,
    /// `is_incremental`); empty when all are plain nanoseconds.
    pub units: Vec<(i64, bool)>,
    /// Added by an ftrace bundle's clock reading (the reference's HandleFtraceClockSnapshot
    /// adds it to the clock tracker directly), not read from a ClockSnapshot packet: it
    /// relates clocks, but sets no default clock and claims no trace time.
    pub relates_only: bool,
    /// When it was read: the number of events pushed before it (the clock placement's read
    /// time, see `clock::graph`). Set by [`Sink::add_snapshot`].
    pub read_at: u32,
}

/// A stat the importer or the trace itself reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StatKey {
    pub name: &'static str,
    pub idx: Option<i64>,
    pub machine: MachineId,
    pub file: u32,
}

/// A metadata value.
#[derive(Clone, Debug, PartialEq)]
pub enum MetaValue {
    Int(i64),
    Str(String),
}

/// Machine facts from SystemInfo.
#[derive(Clone, Debug, Default)]
pub struct MachineInfo {
    pub name: Option<String>,
    pub sysname: Option<String>,
    pub release: Option<String>,
    pub version: Option<String>,
    pub arch: Option<String>,
    pub num_cpus: Option<i64>,
    pub android_build_fingerprint: Option<String>,
    pub android_device_manufacturer: Option<String>,
    pub android_sdk_version: Option<i64>,
    pub system_ram_bytes: Option<i64>,
}

impl MachineInfo {
    /// `system_ram_gb`: the RAM in (decimal) gigabytes, rounded, as the reference has it.
    pub fn system_ram_gb(&self) -> Option<i64> {
        self.system_ram_bytes
            .map(|b| (b as f64 / 1e9).round() as i64)
    }
}

/// Everything the parsers produce for one import. Shared across the files of an archive so
/// strings, tracks and args are interned once.
#[derive(Default)]
pub struct Sink {
    pub strings: StringPool,
    /// Ids of `&'static str`s by address, so the keys that every raw ftrace event repeats
    /// are not hashed by content each time.
    static_ids: FxHashMap<(usize, usize), StrId>,
    pub tracks: Interner<TrackKey>,
    pub clocks: Interner<ClockDomain>,
    pub args: ArgArena,
    /// Flow op runs: `flow_runs[i] = (start, len)` into `flow_ops`; index 0 is empty.
    pub flow_ops: Vec<FlowOp>,
    pub flow_runs: Vec<(u32, u32)>,
    pub events: Vec<Event>,
    /// (clock, what happened) per distinct event payload.
    pub payloads: Vec<(ClockRef, EventData)>,
    payload_ids: FxHashMap<(ClockRef, EventData), u32>,
    /// The same for slice payloads, keyed by their fields as plain integers (hashed and
    /// compared without walking the enum: the map of `EventData` keys was 4% of a 5 M
    /// TrackEvent import).
    slice_payload_ids: FxHashMap<SliceKey, u32>,
    pub snapshots: Vec<ClockSnapshot>,
    /// Each file's read times: the number of events pushed when it started and when it
    /// ended (the clock placement converts an event with what was read before it).
    pub file_spans: HashMap<u32, (u32, u32)>,
    /// Each (file, machine) context that read a ClockSnapshot of its own, with the byte
    /// offset of the first: the clocks it reads after it are its own, those before it the
    /// machine's shared ones ([`ClockDomain::shared`]).
    pub own_snapshots: FxHashMap<(u32, MachineId), Option<i64>>,
    /// `_trace_import_logs` rows of the last placement (replaced at each placement).
    pub placement_logs: Vec<crate::model::ImportLogRow>,
    pub descriptors: FxHashMap<(MachineId, u64), Descriptor>,
    pub stats: HashMap<StatKey, i64>,
    /// The keys of `stats` in the order each was first written: the reference numbers its
    /// indexed stat rows in that order.
    pub stat_order: Vec<StatKey>,
    /// `_trace_import_logs` rows of losses found while reading (no time: where in the file,
    /// as the reference's tokenization logs); the model adds the ones it finds.
    pub import_logs: Vec<crate::model::ImportLogRow>,
    /// Findings of the checks of each file's trace config (`__intrinsic_trace_diagnostics`).
    pub diagnostics: Vec<crate::stats::diagnostics::TraceDiagnostic>,
    /// (name, machine, file, value); a later value for the same key replaces the earlier.
    pub metadata: Vec<(String, MachineId, u32, MetaValue)>,
    pub machines: HashMap<MachineId, MachineInfo>,
    /// Row order and raw ids of the machines above.
    pub machine_registry: MachineRegistry,
    /// The file being parsed now (index into the import's file list).
    pub current_file: u32,
    /// The root descriptor (uuid 0) asks for explicit process / thread ordering, which
    /// turns `sibling_order_rank` into sort-index hints.
    pub explicit_process_ordering: bool,
    pub explicit_thread_ordering: bool,
    /// Threads named by [`ArgValue::ThreadUtid`] args.
    pub thread_refs: Interner<ThreadRef>,
    /// Processes named by [`ArgValue::ProcessUpid`] args.
    pub process_refs: Interner<ProcessRef>,
    /// Keys of track dimension args, interned up front so the writer needs no `&mut`.
    pub dimension_keys: HashMap<&'static str, StrId>,
    /// What the protobuf files are made of (see [`ProtoContent`]).
    pub proto_content: Vec<ProtoContent>,
    /// Legacy async sets' track args, from the first event of each set.
    pub legacy_async: HashMap<AsyncSet, LegacyAsyncInfo>,
    /// Dimensions of other async sets' tracks besides the compressor index (e.g. a block
    /// device's `block_io` tracks: `block_device`).
    pub async_dims: HashMap<AsyncSet, ArgsRef>,
    /// Machines whose idle thread (tid 0) is `swapper` (proto and systrace sources).
    pub swapper_machines: Vec<MachineId>,
    /// Trace Processor's sorter queue of the events pushed from each `ord` on, as runs
    /// (first ord, queue): 0 for most events, one queue per cpu for ftrace bundles. Ties
    /// in time are ordered as its queue merge orders them (see `import::sort_events`).
    pub queue_runs: Vec<(u32, u32)>,
    /// TranslationTable packets' names (see [`Translations`]).
    pub translations: Translations,
    /// Flat keys of process/thread arg keys with array indices (`a[0]` → `a`).
    pub flat_keys: FxHashMap<StrId, StrId>,
    /// Callsites, frames, mappings and symbols of the profiles (`model::stack_profile`).
    pub stack_profile: crate::model::StackProfile,
    /// ART's Java heap dumps (`model::heap_graph`).
    pub heap_graph: crate::model::HeapGraphStore,
    /// What became of the events each parser read, by file (see [`Sink::begin_input`]).
    pub accounting: Vec<InputAccount>,
    /// Which events each input event left, one bit per event (by ord) in each: the first
    /// event of an input, and an event that continues the input of the event before it.
    /// An input is what Trace Processor's sorter counts as one event (a packet, an ftrace
    /// event, a JSON event, a systrace line) however many rows it makes here, and what the
    /// placement loses as a whole. Events pushed outside any input have neither bit.
    pub input_first: Vec<u64>,
    pub input_more: Vec<u64>,
    /// (first ord, file): runs of the events' inputs by file.
    pub input_files: Vec<(u32, u32)>,
    /// Events pushed so far (the next event's ord).
    pub pushed: u32,
    /// Per file: input events the last placement dropped whole (no path to trace time, or
    /// before its zero), moved from imported to dropped in `__sextant_file_events`.
    pub placement_losses: Vec<u64>,
    /// Events pushed that count as events ([`EventData::counts_as_event`]): the one count
    /// of events the progress bar, the summary and the clock pane all show.
    pub event_count: u64,
    /// The sink's state when the input event being read began.
    input_mark: Option<InputMark>,
    /// Changes made to the sink that leave no event (parser state, descriptors, …), and
    /// stat increments, so far.
    touches: u64,
    stat_increments: u64,
    /// Converted values of [`EventData::TimeProbe`]s by slot (`None`: no path to trace
    /// time), filled by the import once the events are converted; `time_probe_count` slots
    /// are handed out.
    pub time_probes: Vec<Option<i64>>,
    pub time_probe_count: u32,
    /// Probe tracks named by [`TrackKey::Probe`].
    pub probe_tracks: Interner<ProbeTrack>,
    /// `package_list` rows, and the names already listed.
    pub packages: Vec<PackageRow>,
    pub package_names: std::collections::HashSet<String>,
    /// The first package listed for each uid, by name (network packets are named by it).
    pub package_by_uid: FxHashMap<i64, StrId>,
    /// GPU counter groups: (group id, name, description, the counter's track).
    pub gpu_counter_groups: Vec<(i64, StrId, StrId, TrackRef)>,
    /// `android_user_list` rows: (machine, android user id, type), and the games of
    /// `android_game_intervention_list`.
    pub android_users: Vec<(MachineId, i64, String)>,
    pub game_interventions: Vec<GameIntervention>,
    /// `gpu` rows (GpuInfo) and graphics contexts.
    pub gpus: Vec<GpuRow>,
    pub gpu_contexts: Vec<GpuContextRow>,
    /// Tracks named later than they were made (a GPU queue's specification after its
    /// first stages): (machine, type, name made with) → (name, description).
    pub track_renames: HashMap<(MachineId, &'static str, StrId), (StrId, StrId)>,
}

/// What became of the events a parser read from one file: each was imported (it left
/// events or state in the sink), dropped (it left only a stat saying why), or — what must
/// never happen — neither.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputAccount {
    pub read: u64,
    pub imported: u64,
    pub dropped: u64,
    /// Read, then neither imported nor counted anywhere: a silent loss (a bug).
    pub unaccounted: u64,
}

#[derive(Clone, Copy, Debug)]
struct InputMark {
    events: usize,
    metadata: usize,
    snapshots: usize,
    touches: u64,
    stat_increments: u64,
}

impl Sink {
    /// A parser starts reading one input event (a JSON trace event, a systrace event line, a
    /// TracePacket or an ftrace event). [`Sink::end_input`] then sees what it left.
    pub fn begin_input(&mut self) {
        self.input_mark = Some(InputMark {
            events: self.events.len(),
            metadata: self.metadata.len(),
            snapshots: self.snapshots.len(),
            touches: self.touches,
            stat_increments: self.stat_increments,
        });
    }

    /// The input event begun last is done: imported if it left events or state, dropped if
    /// it left only stats, unaccounted otherwise.
    pub fn end_input(&mut self) {
        let Some(mark) = self.input_mark.take() else {
            return;
        };
        let imported = self.events.len() > mark.events
            || self.metadata.len() > mark.metadata
            || self.snapshots.len() > mark.snapshots
            || self.touches > mark.touches;
        let dropped = self.stat_increments > mark.stat_increments;
        let file = self.current_file as usize;
        if self.events.len() > mark.events {
            self.note_input_events(mark.events, self.events.len());
        }
        if self.accounting.len() <= file {
            self.accounting.resize(file + 1, InputAccount::default());
        }
        let account = &mut self.accounting[file];
        account.read += 1;
        if imported {
            account.imported += 1;
        } else if dropped {
            account.dropped += 1;
        } else {
            account.unaccounted += 1;
        }
    }

    /// Events `first..end` were pushed by one input event of the current file.
    fn note_input_events(&mut self, first: usize, end: usize) {
        let words = end.div_ceil(64);
        if self.input_first.len() < words {
            self.input_first.resize(words, 0);
            self.input_more.resize(words, 0);
        }
        self.input_first[first / 64] |= 1 << (first % 64);
        for o in first + 1..end {
            self.input_more[o / 64] |= 1 << (o % 64);
        }
        if self.input_files.last().map(|r| r.1) != Some(self.current_file) {
            self.input_files.push((first as u32, self.current_file));
        }
    }

    /// Ends the input event begun last (if any) and begins the next: for loops whose
    /// iterations each read one input event and may `continue` early.
    pub fn next_input(&mut self) {
        self.end_input();
        self.begin_input();
    }

    /// `n` input events read and dropped together, under a stat counted once.
    pub fn inputs_dropped(&mut self, n: u64) {
        let file = self.current_file as usize;
        if self.accounting.len() <= file {
            self.accounting.resize(file + 1, InputAccount::default());
        }
        self.accounting[file].read += n;
        self.accounting[file].dropped += n;
    }

    /// The input event begun last is not one after all (an ftrace bundle, whose events are
    /// the inputs).
    pub fn forget_input(&mut self) {
        self.input_mark = None;
    }

    /// Notes a change the parser made that leaves no event in the sink (interned data,
    /// sequence defaults, a descriptor, metadata replaced in place): the input was used.
    pub fn touch(&mut self) {
        self.touches += 1;
    }

    pub fn new() -> Self {
        let mut strings = StringPool::new();
        let dimension_keys = ["utid", "upid", "cpu", "track_compressor_idx"]
            .into_iter()
            .map(|k| (k, strings.intern(k)))
            .collect();
        Self {
            strings,
            flow_runs: vec![(0, 0)],
            dimension_keys,
            ..Default::default()
        }
    }

    /// A timestamp on `clock` that an event pushed with another clock refers to: pushed as
    /// an [`EventData::TimeProbe`] so it is converted to trace time like any event (with
    /// the clock relations known when it was read); returns its slot in
    /// [`Sink::time_probes`].
    pub fn time_probe(&mut self, ts: i64, clock: ClockRef) -> u32 {
        let slot = self.time_probe_count;
        self.time_probe_count += 1;
        self.push(ts, clock, EventData::TimeProbe(slot));
        slot
    }

    /// Takes the converted [`EventData::TimeProbe`]s out of the event stream into
    /// [`Sink::time_probes`] (the import calls this after conversion, before sorting).
    pub fn take_time_probes(&mut self) {
        self.time_probes = vec![None; self.time_probe_count as usize];
        if self.time_probe_count == 0 {
            return;
        }
        let payloads = &self.payloads;
        let probes = &mut self.time_probes;
        self.events
            .retain(|e| match payloads[e.payload as usize].1 {
                EventData::TimeProbe(slot) => {
                    if let Some(p) = probes.get_mut(slot as usize) {
                        *p = Some(e.ts);
                    }
                    false
                }
                _ => true,
            });
    }

    /// Notes that a machine's idle thread is called `swapper` in this import.
    pub fn name_swapper(&mut self, machine: MachineId) {
        if !self.swapper_machines.contains(&machine) {
            self.swapper_machines.push(machine);
        }
    }

    /// Records a ClockSnapshot read at `byte_offset` of its file.
    pub fn add_snapshot(&mut self, mut snap: ClockSnapshot, byte_offset: Option<i64>) {
        snap.read_at = self.events.len() as u32;
        self.own_snapshots
            .entry((snap.file, snap.machine))
            .or_insert(byte_offset);
        self.snapshots.push(snap);
    }

    /// A builtin clock read now by a (file, machine) context that has no ClockSnapshot of
    /// its own yet is the machine's shared one: marks it so the placement keeps it on file
    /// tag 0 even if the context's later snapshots isolate its clocks.
    pub fn shared_until_own_snapshot(&self, mut domain: ClockDomain) -> ClockDomain {
        let builtin = !(64..128).contains(&domain.clock_id)
            && !matches!(
                domain.clock_id,
                clocks::UNTIMED | clocks::LATEST | clocks::UNCONVERTED | clocks::TRACE_FILE
            );
        domain.shared = builtin
            && !self
                .own_snapshots
                .contains_key(&(domain.file, domain.machine));
        domain
    }

    pub fn clock(&mut self, domain: ClockDomain) -> ClockRef {
        let id = self.clocks.intern(domain);
        // More than 65k distinct clocks would need a wider ClockRef; clamp rather than wrap.
        id.min(u16::MAX as u32) as ClockRef
    }

    /// A builtin clock of a machine.
    pub fn builtin_clock(&mut self, machine: MachineId, clock_id: u32) -> ClockRef {
        self.clock(ClockDomain {
            machine,
            clock_id,
            sequence: 0,
            file: self.current_file,
            shared: false,
        })
    }

    /// Interns a string that lives for the whole program (a schema's field name).
    pub fn intern_static(&mut self, s: &'static str) -> StrId {
        let address = (s.as_ptr() as usize, s.len());
        if let Some(&id) = self.static_ids.get(&address) {
            return id;
        }
        let id = self.strings.intern(s);
        self.static_ids.insert(address, id);
        id
    }

    /// [`Sink::arg`] for a key that lives for the whole program.
    /// A `sched_switch`'s seven raw-row args, in the proto's order: (comm, pid, prio, state)
    /// of the task switched out, (comm, pid, prio) of the one switched in.
    pub fn sched_switch_args(
        &mut self,
        (prev_comm, prev_pid, prev_prio, prev_state): (StrId, i64, i32, i64),
        (next_comm, next_pid, next_prio): (StrId, i64, i32),
    ) -> [Arg; 7] {
        [
            self.static_arg("prev_comm", ArgValue::Str(prev_comm)),
            self.static_arg("prev_pid", ArgValue::Int(prev_pid)),
            self.static_arg("prev_prio", ArgValue::Int(i64::from(prev_prio))),
            self.static_arg("prev_state", ArgValue::Int(prev_state)),
            self.static_arg("next_comm", ArgValue::Str(next_comm)),
            self.static_arg("next_pid", ArgValue::Int(next_pid)),
            self.static_arg("next_prio", ArgValue::Int(i64::from(next_prio))),
        ]
    }

    pub fn static_arg(&mut self, key: &'static str, value: ArgValue) -> Arg {
        let key = self.intern_static(key);
        Arg {
            flat_key: key,
            key,
            value,
        }
    }

    /// An arg with a plain key (no array index, so its flat key is the key itself).
    pub fn arg(&mut self, key: &str, value: ArgValue) -> Arg {
        let key = self.intern(key);
        Arg {
            flat_key: key,
            key,
            value,
        }
    }

    /// Events pushed from now on go to sorter queue `queue` (0 = the default queue).
    pub fn set_queue(&mut self, queue: u32) {
        let current = self.queue_runs.last().map_or(0, |r| r.1);
        if current == queue {
            return;
        }
        let ord = self.events.len() as u32;
        match self.queue_runs.last_mut() {
            Some(last) if last.0 == ord => last.1 = queue,
            _ => self.queue_runs.push((ord, queue)),
        }
    }

    pub fn push(&mut self, ts: i64, clock: ClockRef, data: EventData) {
        if data.counts_as_event() {
            self.event_count += 1;
        }
        let ord = self.events.len() as u32;
        self.pushed = ord + 1;
        // Payloads without per-event data (args, flows, thread time, values) repeat a lot:
        // share them. Others are stored once each, without paying for a map entry.
        let slice_key = |kind: u8, s: &SliceEvent, thread_dur: i64| SliceKey {
            clock,
            kind,
            track: s.track,
            category: s.category,
            name: s.name,
            thread_ts: s.thread_ts,
            thread_dur,
        };
        // Every other field of these is fixed (no args, no flows, no duration), so the key
        // tells them apart as the whole payload would.
        let key = match &data {
            EventData::Begin(s)
                if s.args == NO_ARGS && s.flows == NO_FLOWS && s.thread_ts == NO_TS =>
            {
                Some(slice_key(0, s, 0))
            }
            EventData::End(s)
                if s.args == NO_ARGS && s.flows == NO_FLOWS && s.thread_ts == NO_TS =>
            {
                Some(slice_key(1, s, 0))
            }
            EventData::Complete {
                slice,
                dur: 0,
                thread_dur,
            } if slice.args == NO_ARGS && slice.flows == NO_FLOWS => {
                Some(slice_key(2, slice, *thread_dur))
            }
            _ => None,
        };
        if let Some(key) = key {
            let payload = match self.slice_payload_ids.get(&key) {
                Some(&id) => id,
                None => {
                    let id = self.payloads.len() as u32;
                    self.payloads.push((clock, data));
                    self.slice_payload_ids.insert(key, id);
                    id
                }
            };
            self.events.push(Event { ts, ord, payload });
            return;
        }
        // Every ftrace event names its thread: few threads, many events.
        let shareable = matches!(data, EventData::Thread(_));
        let payload = if shareable {
            let key = (clock, data);
            match self.payload_ids.get(&key) {
                Some(&id) => id,
                None => {
                    let id = self.payloads.len() as u32;
                    self.payloads.push(key.clone());
                    self.payload_ids.insert(key, id);
                    id
                }
            }
        } else {
            self.payloads.push((clock, data));
            (self.payloads.len() - 1) as u32
        };
        self.events.push(Event { ts, ord, payload });
    }

    /// Every event with its payload, in insertion order (for tests and debugging).
    pub fn decoded(&self) -> Vec<DecodedEvent> {
        self.events
            .iter()
            .map(|e| {
                let (clock, data) = self.payload(e);
                DecodedEvent {
                    ts: e.ts,
                    ord: e.ord,
                    clock,
                    data: data.clone(),
                }
            })
            .collect()
    }

    /// The clock and data of an event.
    pub fn payload(&self, ev: &Event) -> (ClockRef, &EventData) {
        let (clock, data) = &self.payloads[ev.payload as usize];
        (*clock, data)
    }

    pub fn track(&mut self, key: TrackKey) -> TrackRef {
        self.tracks.intern(key)
    }

    pub fn intern(&mut self, s: &str) -> StrId {
        self.strings.intern(s)
    }

    /// Interns; the empty string is NULL.
    pub fn intern_nonempty(&mut self, s: &str) -> StrId {
        self.strings.intern_nonempty(s)
    }

    /// Interns an optional string: absent is NULL, an empty one is kept (a proto string
    /// field that is present).
    pub fn intern_nullable(&mut self, s: Option<&str>) -> StrId {
        s.map_or(NULL_STR, |s| self.strings.intern(s))
    }

    /// Interns an optional string; absent or empty is NULL.
    pub fn intern_opt(&mut self, s: Option<&str>) -> StrId {
        s.map_or(NULL_STR, |s| self.strings.intern_nonempty(s))
    }

    pub fn flows(&mut self, ops: &[FlowOp]) -> FlowsRef {
        if ops.is_empty() {
            return NO_FLOWS;
        }
        let start = self.flow_ops.len() as u32;
        self.flow_ops.extend_from_slice(ops);
        self.flow_runs.push((start, ops.len() as u32));
        (self.flow_runs.len() - 1) as FlowsRef
    }

    pub fn flow_ops(&self, id: FlowsRef) -> &[FlowOp] {
        match self.flow_runs.get(id as usize) {
            Some(&(s, l)) => &self.flow_ops[s as usize..(s + l) as usize],
            None => &[],
        }
    }

    /// Adds `delta` to a stat of the current file on `machine`.
    /// A stat's value summed over every machine, file and index (0 when absent).
    pub fn stat_total(&self, name: &str) -> i64 {
        self.stats
            .iter()
            .filter(|(k, _)| k.name == name)
            .map(|(_, v)| *v)
            .sum()
    }

    pub fn stat(&mut self, name: &'static str, machine: MachineId, delta: i64) {
        self.stat_indexed(name, None, machine, delta);
    }

    pub fn stat_indexed(
        &mut self,
        name: &'static str,
        idx: Option<i64>,
        machine: MachineId,
        delta: i64,
    ) {
        let key = StatKey {
            name,
            idx,
            machine,
            file: self.current_file,
        };
        match self.stats.entry(key) {
            std::collections::hash_map::Entry::Occupied(mut e) => *e.get_mut() += delta,
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(delta);
                self.stat_order.push(key);
            }
        }
        if delta > 0 {
            self.stat_increments += 1;
        }
    }

    /// Sets (not adds) a stat value, for stats the trace reports itself.
    pub fn set_stat(&mut self, name: &'static str, idx: Option<i64>, machine: MachineId, v: i64) {
        let key = StatKey {
            name,
            idx,
            machine,
            file: self.current_file,
        };
        if self.stats.insert(key, v).is_none() {
            self.stat_order.push(key);
        }
    }

    /// A metadata row that does not replace earlier ones of the same name.
    pub fn metadata_append(
        &mut self,
        name: impl Into<String>,
        machine: MachineId,
        value: MetaValue,
    ) {
        let file = self.current_file;
        self.metadata.push((name.into(), machine, file, value));
    }

    pub fn metadata(&mut self, name: impl Into<String>, machine: MachineId, value: MetaValue) {
        let name = name.into();
        let file = self.current_file;
        if let Some(slot) = self
            .metadata
            .iter_mut()
            .find(|(n, m, f, _)| *n == name && *m == machine && *f == file)
        {
            slot.3 = value;
            self.touches += 1;
        } else {
            self.metadata.push((name, machine, file, value));
        }
    }

    /// Stores an arg set built from `builder` (and clears it).
    pub fn args(&mut self, builder: &mut ArgsBuilder) -> ArgsRef {
        let id = self.args.push(&builder.args);
        builder.clear();
        id
    }

    /// The `gpu` row of a machine's GPU, made (empty) when first named.
    pub fn gpu(&mut self, machine: MachineId, gpu: i64) -> usize {
        if let Some(i) = self
            .gpus
            .iter()
            .position(|g| g.machine == machine && g.gpu == gpu)
        {
            return i;
        }
        self.gpus.push(GpuRow {
            machine,
            gpu,
            name: None,
            vendor: None,
            model: None,
            architecture: None,
            uuid: None,
            pci_bdf: None,
            args: NO_ARGS,
        });
        self.gpus.len() - 1
    }

    /// Convenience: a thread-slices track for (tid, pid) on a machine.
    pub fn thread_track(&mut self, machine: MachineId, tid: i64, pid: Option<i64>) -> TrackRef {
        self.track(TrackKey::ThreadSlices(ThreadRef { machine, tid, pid }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_pool_interns_once_and_null_is_zero() {
        let mut pool = StringPool::new();
        let a = pool.intern("a");
        assert_eq!(pool.intern("a"), a);
        assert_ne!(a, NULL_STR);
        assert_eq!(pool.get(a), Some("a"));
        assert_eq!(pool.get(NULL_STR), None);
        assert_eq!(pool.intern_nonempty(""), NULL_STR);
    }

    #[test]
    fn repeated_arg_key_keeps_position_takes_last_value() {
        let mut arena = ArgArena::default();
        let arg = |k, v| Arg {
            flat_key: k,
            key: k,
            value: ArgValue::Int(v),
        };
        let id = arena.push(&[arg(1, 1), arg(2, 2), arg(1, 3)]);
        assert_eq!(arena.get(id), &[arg(1, 3), arg(2, 2)]);
        assert_eq!(arena.push(&[]), NO_ARGS);
    }

    /// A set past 32 args takes the hashed path: the same result as the scan.
    #[test]
    fn a_large_set_with_repeated_keys_merges_as_a_small_one() {
        let mut arena = ArgArena::default();
        let arg = |k, v| Arg {
            flat_key: k,
            key: k,
            value: ArgValue::Int(v),
        };
        let mut set: Vec<Arg> = (0..40).map(|k| arg(k, i64::from(k))).collect();
        set.push(arg(3, 100));
        set.push(arg(40, 40));
        let id = arena.push(&set);
        let mut want: Vec<Arg> = (0..41).map(|k| arg(k, i64::from(k))).collect();
        want[3] = arg(3, 100);
        assert_eq!(arena.get(id), want.as_slice());
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// Every parsed event's payload is an `EventData`: its size is memory per event.
    #[test]
    fn event_payloads_stay_small() {
        assert!(
            std::mem::size_of::<EventData>() <= 56,
            "{}",
            std::mem::size_of::<EventData>()
        );
    }
}
