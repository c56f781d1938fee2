//! Perfetto protobuf traces: a `Trace` is a run of `TracePacket`s (field 1). Packets are
//! decoded one at a time (never the whole file as one message), with per-sequence state:
//! interned data, packet defaults, incremental counters and delta timestamps.

use std::collections::HashMap;
use std::io::Read;

use prost::Message;

use super::{
    atrace, config_text, ftrace_events, ftrace_raw, schema, wire_repair, FileContext, MachineScope,
    ParseError,
};
use crate::ir::{clocks, *};
use crate::manifest::ManifestError;
use crate::protos::{self, debug_annotation, ftrace_event, trace_packet, track_event, TracePacket};
use trace_stats::LossTracker;

mod android_input;
mod android_probes;
mod app_wakelock;
mod camera;
mod chrome;
mod chrome_descriptors;
mod debug_annotations;
mod descriptor_pool;
mod dispatch;
mod etw;
mod frame_timeline;
mod ftrace;
mod generic_kernel;
mod gpu;
mod gpu_events;
mod heap_graph;
mod heapprofd;
mod memory_snapshot;
mod metatrace;
mod network;
mod packets;
mod profiling;
mod stack_sample;
mod statsd;
mod statsd_atom_names;
mod system;
mod system_probes;
mod trace_stats;
mod track_events;
mod typed_args;
mod v8;
mod winscope;

pub use ftrace::decode_task_state;
use ftrace::CompactCpu;
use packets::{Header, Placed};

const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;
const CLONE_THREAD: u64 = 0x10000;
/// Custom clock ids at or above this are scoped to their sequence.
const FIRST_SEQUENCE_CLOCK: u32 = 64;
/// The first clock id after the sequence-scoped ones (128 and above are scoped like the
/// builtin clocks).
const LAST_SEQUENCE_CLOCK: u32 = 128;

/// Interned data and defaults of one packet sequence.
#[derive(Default)]
struct Sequence {
    /// False until the sequence's incremental state is known to be intact.
    valid: bool,
    names: FxHashMap<u64, StrId>,
    categories: FxHashMap<u64, StrId>,
    annotation_names: FxHashMap<u64, StrId>,
    /// (file, function, line)
    source_locations: FxHashMap<u64, (StrId, StrId, Option<u32>)>,
    interned_strings: FxHashMap<u64, StrId>,
    clock_id: Option<u32>,
    default_track: Option<u64>,
    default_extra_counters: Vec<u64>,
    default_extra_double_counters: Vec<u64>,
    /// Running values of incremental counters, by track uuid.
    counter_values: FxHashMap<u64, f64>,
    /// The thread this sequence writes for (ThreadDescriptor or a thread TrackDescriptor).
    thread: Option<ThreadRef>,
    /// Some packet of the sequence had `first_packet_on_sequence`.
    first_packet_seen: bool,
    /// Running time for `timestamp_delta_us` deltas, in ns (see [`Sequence::advance`]).
    ref_ts_ns: Option<i64>,
    /// A delta overflowed: every later delta is invalid until a new reference time.
    ref_ts_broken: bool,
    /// Base for `thread_time_delta_us` (µs).
    ref_thread_time_us: Option<i64>,
    /// Base for `thread_instruction_count_delta`.
    ref_thread_ic: Option<i64>,
    /// Interned kernel symbols (`sched_blocked_reason.caller`).
    kernel_symbols: FxHashMap<u64, StrId>,
    /// Interned log message bodies, histogram names, correlation ids and debug annotation
    /// proto type names.
    log_bodies: FxHashMap<u64, StrId>,
    histogram_names: FxHashMap<u64, StrId>,
    correlation_ids: FxHashMap<u64, StrId>,
    value_type_names: FxHashMap<u64, StrId>,
    /// Interned unsymbolized locations (mapping iid, rel_pc), for Mojo method names (the
    /// mappings are the profiles' interned ones).
    unsymbolized: FxHashMap<u64, (u64, u64)>,
    /// Interned GPU counter descriptors and their GPU (see `gpu.rs`).
    gpu_counter_descriptors: FxHashMap<u64, (protos::GpuCounterDescriptor, i32)>,
    /// Interned graphics contexts (their pid), render stage specifications (name,
    /// description, category) and compute kernels (name, demangled name, arch).
    graphics_contexts: FxHashMap<u64, i32>,
    gpu_specs: FxHashMap<u64, (StrId, StrId, i32)>,
    gpu_kernels: FxHashMap<u64, [StrId; 3]>,
    /// Interned strings Vulkan memory events refer to: annotation keys and values
    /// (`vulkan_memory_keys`) and callers (`function_names`).
    vulkan_memory_keys: FxHashMap<u64, StrId>,
    function_names: FxHashMap<u64, StrId>,
    /// Interned network packet contexts (`network.rs`).
    packet_contexts: FxHashMap<u64, protos::NetworkPacketEvent>,
    /// Interned app wakelock descriptions (`app_wakelock.rs`).
    app_wakelocks: FxHashMap<u32, protos::AppWakelockInfo>,
    /// Interned V8 isolates, scripts and functions, and the code defaults (`v8.rs`).
    v8: v8::V8Interned,
    /// Interned protolog and view capture strings by (InternedData field, iid)
    /// (`winscope.rs`).
    winscope_strings: FxHashMap<(u32, u64), StrId>,
}

/// A delta timestamp, resolved against its sequence's running time.
enum DeltaTs {
    /// No reference time since the sequence started or lost data.
    NoBase,
    /// Overflowed, negative, or after an overflow: the event is dropped and counted.
    Invalid,
    Valid(i64),
}

impl Sequence {
    /// A ThreadDescriptor (packet-level, or a thread TrackDescriptor's) resets the bases of
    /// delta timestamps, thread times and instruction counts, as Trace Processor's
    /// SetThreadDescriptor: an absent reference is 0.
    fn set_thread_references(&mut self, t: &protos::ThreadDescriptor) {
        let reference = t.reference_timestamp_us.unwrap_or(0).checked_mul(1000);
        self.ref_ts_broken = reference.is_none();
        self.ref_ts_ns = reference;
        self.ref_thread_time_us = Some(t.reference_thread_time_us.unwrap_or(0));
        self.ref_thread_ic = Some(t.reference_thread_instruction_count.unwrap_or(0));
    }

    /// Adds a µs delta to the running time, as Trace Processor does: a result below zero
    /// or an overflow makes this and (for an overflow) every later delta invalid.
    fn advance(&mut self, delta_us: i64) -> DeltaTs {
        if self.ref_ts_broken {
            return DeltaTs::Invalid;
        }
        let Some(base) = self.ref_ts_ns else {
            return DeltaTs::NoBase;
        };
        match delta_us.checked_mul(1000).and_then(|d| base.checked_add(d)) {
            Some(ns) => {
                self.ref_ts_ns = Some(ns);
                if ns < 0 {
                    DeltaTs::Invalid
                } else {
                    DeltaTs::Valid(ns)
                }
            }
            None => {
                self.ref_ts_broken = true;
                DeltaTs::Invalid
            }
        }
    }

    /// SEQ_INCREMENTAL_STATE_CLEARED: forget interned data, defaults and counters.
    fn clear(&mut self) {
        let thread = self.thread;
        let first_packet_seen = self.first_packet_seen;
        *self = Sequence {
            valid: true,
            thread,
            first_packet_seen,
            ..Default::default()
        };
    }
}

struct Parser<'a> {
    sink: &'a mut Sink,
    ctx: &'a FileContext,
    sequences: FxHashMap<(MachineId, u32), Sequence>,
    compact: HashMap<(MachineId, u32), CompactCpu>,
    args: ArgsBuilder,
    packets: u64,
    /// An error that ends the import (a manifest rule the file breaks).
    fatal: Option<ParseError>,
    /// Some packet came from the file's own (base) machine.
    sent_base_packet: bool,
    /// The name of each legacy async id's first event: it names the id's track, so an
    /// end event without a name still closes the slice its begin opened.
    async_names: HashMap<(MachineId, Option<ProcessRef>, u64), StrId>,
    /// Bytes and packets per payload field, and per TrackEvent (category, name).
    content: FxHashMap<&'static str, (u64, u64)>,
    /// Bytes and packets of the TrackEvents not counted by (category, name).
    track_event_content: (u64, u64),
    event_content: FxHashMap<(StrId, StrId), (u64, u64)>,
    /// Size of the TrackEvent packet being parsed, until its category and name are known.
    pending_track_event: Option<u64>,
    /// Some packet named the trace's uuid.
    uuid_seen: bool,
    /// A ClockSnapshot of this file has set its default clock: until then a packet naming
    /// no clock keeps its value unconverted ([`clocks::UNCONVERTED`]).
    default_clock_set: bool,
    /// The start of the TrackEvent range of interest (ns), from the file's latest
    /// TrackEventRangeOfInterest packet: TrackEvents before it are dropped when cropping.
    range_of_interest_ns: Option<i64>,
    /// ChromeMetadataPackets so far (each gets its own `cr-<letter>-` metadata prefix).
    chrome_metadata_packets: u32,
    /// ChromeEventBundles so far (the second and later prefix their metadata `cr-<n>-`).
    chrome_event_bundles: u32,
    /// From when every cpu's ftrace data is complete, per machine: the latest
    /// `previous_bundle_end_timestamp` (or `last_read_event_timestamp`) of each cpu's first
    /// bundle.
    latest_ftrace_start: HashMap<MachineId, i64>,
    /// Cpus whose first ftrace bundle was read.
    ftrace_cpus_seen: std::collections::HashSet<(MachineId, u32)>,
    /// The events each ftrace bundle pushed: (machine, first ord, end ord).
    ftrace_ranges: Vec<(MachineId, u32, u32)>,
    /// The same for bundles read before their machine's tracing start was known.
    ftrace_unfiltered: Vec<(MachineId, u32, u32)>,
    /// Scratch space for a raw ftrace event's args.
    raw_args: Vec<Arg>,
    /// What the trace reports about its losses (TraceStats, FtraceStats, loss markers).
    losses: LossTracker,
    /// The packet being parsed: where its bytes are in memory, and its offset in the file.
    packet_at: (usize, u64),
    /// Clocks with a unit or incremental values (see [`Parser::sequence_clock_ts`]), by
    /// (machine, sequence, clock id); sequence 0 for global clocks (ids outside 64..128).
    seq_clocks: FxHashMap<(MachineId, u32, u32), SequenceClock>,
    /// This file's descriptor pool, once an `extension_descriptor` extended the builtin one.
    pool: Option<descriptor_pool::Pool>,
    /// Slice arg sets with hashed names, translated at the end of the file.
    translatable: Vec<ArgsRef>,
    /// How many `extension_descriptor` packets extended the pool so far.
    pool_generation: u32,
    /// Arg sets with fields the pool did not know when their event was read (see
    /// [`typed_args`]), reflected again at the end of the file.
    late_args: Vec<typed_args::LateArgs>,
    /// Bytes kept in `late_args`.
    late_bytes: usize,
    /// While a TrackEvent's debug annotations are read: their late `proto_value` runs.
    late_capture: Option<Vec<typed_args::LateSegment>>,
    /// Native symbols by (hex build id, or path without one; address), from ModuleSymbols
    /// packets, for Mojo method names.
    module_symbols: FxHashMap<(StrId, u64), StrId>,
    /// Interned callstacks and profilers' per-sequence state (see [`profiling`]).
    profiling: profiling::ProfilingState,
    /// Java heap dumps being read (see [`heap_graph`]).
    heap_graphs: heap_graph::HeapGraphState,
    /// What the Android / system probe parsers remember across packets.
    probes: android_probes::ProbeState,
    /// GPU queues, stages and Vulkan object names (see [`gpu_events`]).
    gpu_events: gpu_events::GpuEventState,
    /// Pid namespaces the process trees described (see [`system::Namespaces`]).
    namespaces: system::Namespaces,
    /// The ftrace `global` clock reading of the latest bundle snapshot added.
    latest_ftrace_clock_snapshot: Option<i64>,
    /// Metatrace strings by iid (for the whole trace, see [`metatrace`]).
    metatrace_strings: FxHashMap<u64, StrId>,
}

/// A sequence-scoped clock a ClockSnapshot described: its unit, and for an incremental
/// clock the last value read (ns), which the next packet's timestamp is a delta from.
#[derive(Clone, Copy)]
struct SequenceClock {
    unit_ns: i64,
    incremental: bool,
    last_ns: i64,
}

/// The environment variable that turns on Trace Processor's
/// `--analyze-trace-proto-content`: each TrackEvent row of `__sextant_proto_content` then also
/// gets an arg set with `event.category` and `event.name`, as the reference's content analyzer
/// annotates its rows. Off by default, as in the reference (those sets would otherwise be most
/// of `args` in a trace whose event names are all different).
pub const ANALYZE_PROTO_CONTENT_ENV: &str = "SEXTANT_ANALYZE_PROTO_CONTENT";

/// Whether [`ANALYZE_PROTO_CONTENT_ENV`] is set to something other than empty or `0`.
pub fn analyze_proto_content() -> bool {
    std::env::var_os(ANALYZE_PROTO_CONTENT_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The environment variable that turns on Trace Processor's `--crop-track-events`: TrackEvents
/// before the start of the range of interest a `TrackEventRangeOfInterest` packet names are
/// dropped (counted in `track_event_dropped_packets_outside_of_range_of_interest`). Off by
/// default, as in the reference; `sextant query` on a trace turns it on (see `main.rs`).
pub const CROP_TRACK_EVENTS_ENV: &str = "SEXTANT_CROP_TRACK_EVENTS";

/// Whether [`CROP_TRACK_EVENTS_ENV`] is set to something other than empty or `0`.
pub fn crop_track_events() -> bool {
    std::env::var_os(CROP_TRACK_EVENTS_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Imports a protobuf trace. A file cut off in the middle keeps every whole packet before
/// the cut and counts the rest in `proto_truncated`.
pub fn parse(bytes: &[u8], sink: &mut Sink, ctx: &FileContext) -> Result<(), ParseError> {
    let mut input = bytes;
    parse_stream(&mut input, bytes.len() as u64, sink, ctx, &mut |_, _| true)
}

/// Like [`parse`], reading `input` as a stream (`size_hint`: its length if known, to size
/// buffers). `tick(events so far)` is called every few thousand packets, and the parse
/// stops with [`ParseError::Cancelled`] when it returns false.
pub fn parse_stream(
    input: &mut dyn Read,
    size_hint: u64,
    sink: &mut Sink,
    ctx: &FileContext,
    tick: &mut dyn FnMut(u64, usize) -> bool,
) -> Result<(), ParseError> {
    let mut p = Parser {
        sink,
        ctx,
        sequences: FxHashMap::default(),
        compact: HashMap::new(),
        metatrace_strings: FxHashMap::default(),
        args: ArgsBuilder::default(),
        packets: 0,
        fatal: None,
        sent_base_packet: false,
        async_names: HashMap::new(),
        latest_ftrace_start: HashMap::new(),
        ftrace_cpus_seen: std::collections::HashSet::new(),
        ftrace_ranges: Vec::new(),
        ftrace_unfiltered: Vec::new(),
        uuid_seen: false,
        default_clock_set: false,
        range_of_interest_ns: None,
        content: FxHashMap::default(),
        track_event_content: (0, 0),
        event_content: FxHashMap::default(),
        pending_track_event: None,
        chrome_metadata_packets: 0,
        chrome_event_bundles: 0,
        raw_args: Vec::new(),
        losses: LossTracker::default(),
        packet_at: (0, 0),
        seq_clocks: FxHashMap::default(),
        pool: None,
        translatable: Vec::new(),
        pool_generation: 0,
        late_args: Vec::new(),
        late_bytes: 0,
        late_capture: None,
        module_symbols: FxHashMap::default(),
        profiling: profiling::ProfilingState::default(),
        namespaces: system::Namespaces::default(),
        latest_ftrace_clock_snapshot: None,
        heap_graphs: heap_graph::HeapGraphState::default(),
        probes: android_probes::ProbeState::default(),
        gpu_events: gpu_events::GpuEventState::default(),
    };
    // Track events take about 16 bytes or more on the wire; reserving up front avoids the
    // doubling spike (old and new buffers alive at once) on large traces.
    let hint = usize::try_from(size_hint).unwrap_or(usize::MAX);
    p.sink.events.reserve(hint.min(1 << 34) / 16);
    let head = p.read_packets(input, size_hint, tick)?;
    p.finish(&head);
    Ok(())
}

/// Bytes of the file hashed into a trace uuid when the trace names none.
const UUID_HASH_BYTES: usize = 4096;

/// 64-bit FNV-1a, the hash Trace Processor derives a missing trace uuid from.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A uuid as Trace Processor prints it.
fn uuid_string(msb: u64, lsb: u64) -> String {
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        msb >> 32,
        (msb >> 16) & 0xffff,
        msb & 0xffff,
        lsb >> 48,
        lsb & 0xffff_ffff_ffff
    )
}

fn lossy(s: &str) -> &str {
    s.trim_end_matches(['\0', '\n'])
}

impl Parser<'_> {
    fn truncated(&mut self, at: u64) -> Result<(), ParseError> {
        if self.packets == 0 {
            return Err(ParseError::Truncated(format!(
                "the first packet (byte {at}); the file is empty or not a protobuf trace"
            )));
        }
        self.sink.stat("proto_truncated", self.ctx.machine, 1);
        Ok(())
    }

    /// A packet the strict decoder refuses, read as Trace Processor's lenient decoder reads
    /// it (see [`wire_repair`]); what had to be skipped is counted.
    fn repair(&mut self, bytes: &[u8], offset: u64) -> Option<TracePacket> {
        let message = wire_repair::message("perfetto.protos.TracePacket")?;
        let (fixed, repairs) = wire_repair::repair(bytes, message, offset);
        if fixed.is_empty() {
            // Nothing of it is protobuf.
            return None;
        }
        let pkt = TracePacket::decode(fixed.as_slice()).ok()?;
        let machine = self.ctx.machine;
        if repairs.mismatched_fields > 0 {
            let n = repairs.mismatched_fields as i64;
            self.sink.stat("proto_field_wire_type_mismatch", machine, n);
        }
        let skipped = repairs.skipped_fields + repairs.cut_messages;
        if skipped > 0 {
            self.sink
                .stat("proto_field_skipped", machine, skipped as i64);
        }
        if repairs.fixed_strings > 0 {
            self.sink.stat(
                "proto_string_invalid_utf8",
                machine,
                repairs.fixed_strings as i64,
            );
        }
        Some(pkt)
    }

    fn stat(&mut self, name: &'static str, machine: MachineId) {
        self.sink.stat(name, machine, 1);
    }

    /// A stat that the reference also logs in `_trace_import_logs` while reading: a row at
    /// the packet's place in the file with the args that explain it.
    fn log(&mut self, name: &'static str, machine: MachineId, args: &[(&str, ArgValue)]) {
        self.stat(name, machine);
        let set: Vec<Arg> = args.iter().map(|(k, v)| self.sink.arg(k, *v)).collect();
        let args = self.sink.args.push(&set);
        let file = self.sink.current_file;
        self.sink.import_logs.push(crate::model::ImportLogRow {
            ts: None,
            byte_offset: i64::try_from(self.packet_at.1).ok(),
            name,
            file,
            args,
        });
    }

    /// The machine of a packet: the file's own for no id (or 0), else the embedded id,
    /// through the manifest's `machines` remap when there is one. A `remote_sync` packet
    /// (RemoteClockSync) is refused like an embedded id by a file the manifest gives one
    /// machine; a sync `marker` does not count as a packet of the file's own machine.
    fn packet_machine(
        &mut self,
        id: Option<u32>,
        remote_sync: bool,
        marker: bool,
    ) -> Result<MachineId, ParseError> {
        if remote_sync {
            match self.ctx.machines {
                MachineScope::Single => {
                    return Err(ParseError::Invalid(
                        ManifestError::MachineOnMultiMachineFile.to_string(),
                    ))
                }
                MachineScope::Pinned => {
                    return Err(ParseError::Invalid(
                        ManifestError::PinOnMultiMachineFile.to_string(),
                    ))
                }
                _ => {}
            }
        }
        let n = match id {
            None | Some(0) => {
                self.sent_base_packet |= !marker;
                return Ok(self.ctx.machine);
            }
            Some(n) => n,
        };
        match &self.ctx.machines {
            MachineScope::Remap(map) => map.get(&n).copied().ok_or_else(|| {
                ParseError::Invalid(ManifestError::UndeclaredMachine { id: n }.to_string())
            }),
            MachineScope::Single => Err(ParseError::Invalid(
                ManifestError::MachineOnMultiMachineFile.to_string(),
            )),
            MachineScope::Pinned => Err(ParseError::Invalid(
                ManifestError::PinOnMultiMachineFile.to_string(),
            )),
            MachineScope::Free => {
                let registry = &mut self.sink.machine_registry;
                if !self.sent_base_packet
                    && registry.host_if_created() == Some(self.ctx.machine)
                    && !registry.has_raw(n)
                {
                    if let Some(host) = registry.adopt_onto_host(n) {
                        return Ok(host);
                    }
                }
                Ok(registry.embedded(n))
            }
        }
    }

    /// What every packet's header does to its sequence (machine, losses, incremental
    /// state, defaults, interned data) and where its timestamp is; `None` when the packet
    /// goes no further (a manifest rule broken, or its sequence's state lost).
    fn header(&mut self, pkt: &Header) -> Option<Placed> {
        // A clock sync with another machine makes the file multi-machine, whatever ids
        // its packets carry; a sync marker is no packet of the host's.
        let machine = match self.packet_machine(pkt.machine_id, pkt.remote_sync, pkt.marker) {
            Ok(m) => m,
            Err(e) => {
                self.fatal.get_or_insert(e);
                return None;
            }
        };
        // Every machine a protobuf trace names has its pid/tid 0 as the idle rows.
        if machine != self.ctx.machine {
            self.sink.name_swapper(machine);
        }
        let trusted_seq = pkt.trusted_seq;
        let seq_id = trusted_seq.unwrap_or(0);
        let flags = pkt.sequence_flags.unwrap_or(0);
        let dropped = pkt.previous_packet_dropped.unwrap_or(0);
        let needs_state = flags & SEQ_NEEDS_INCREMENTAL_STATE != 0;
        self.losses
            .packet(machine, trusted_seq, dropped, needs_state);
        if trusted_seq.is_none() {
            // Sequence state without a sequence to keep it on, counted as the reference does.
            let cleared =
                pkt.incremental_state_cleared || flags & SEQ_INCREMENTAL_STATE_CLEARED != 0;
            let missing = [
                (cleared, "incremental_state_cleared_missing_sequence_id"),
                (
                    !cleared && dropped != 0,
                    "previous_packet_dropped_missing_sequence_id",
                ),
                (
                    pkt.defaults.is_some(),
                    "trace_packet_defaults_missing_sequence_id",
                ),
                (pkt.interned.is_some(), "interned_data_missing_sequence_id"),
            ];
            for (_, name) in missing.into_iter().filter(|m| m.0) {
                self.log(name, machine, &[]);
            }
        }
        {
            let seq = self.sequences.entry((machine, seq_id)).or_default();
            if pkt.first_packet_on_sequence {
                seq.first_packet_seen = true;
            }
            if pkt.previous_packet_dropped.unwrap_or(0) != 0 && !pkt.first_packet_on_sequence {
                seq.valid = false;
                seq.counter_values.clear();
                seq.ref_ts_ns = None;
                seq.ref_ts_broken = false;
                seq.ref_thread_time_us = None;
                seq.ref_thread_ic = None;
                self.sink.stat("sequence_packet_loss_flagged", machine, 1);
            }
        }
        if pkt.incremental_state_cleared || flags & SEQ_INCREMENTAL_STATE_CLEARED != 0 {
            if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
                seq.clear();
            }
            self.sink.touch();
            self.profiling.clear_sequence(machine, seq_id);
        }
        if let Some(defaults) = pkt.defaults {
            self.sink.touch();
            self.profiling.defaults(machine, seq_id, defaults);
            if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
                // New defaults replace the old ones as a whole (those without
                // TrackEventDefaults leave none), as the reference's sequence state does.
                seq.clock_id = defaults.timestamp_clock_id;
                let te = defaults.track_event_defaults.as_ref();
                seq.default_track = te.and_then(|te| te.track_uuid);
                seq.default_extra_counters =
                    te.map_or_else(Vec::new, |te| te.extra_counter_track_uuids.clone());
                seq.default_extra_double_counters =
                    te.map_or_else(Vec::new, |te| te.extra_double_counter_track_uuids.clone());
                seq.v8.default_tid = Some(defaults.v8_code_defaults.as_ref().and_then(|d| d.tid));
            }
        }
        let valid = self
            .sequences
            .get(&(machine, seq_id))
            .is_some_and(|s| s.valid);
        if let Some(interned) = pkt.interned {
            if valid {
                self.intern(machine, seq_id, interned);
                self.sink.touch();
                self.profiling.intern(self.sink, machine, seq_id, interned);
                self.intern_gpu(machine, seq_id, interned);
            } else {
                self.log(
                    "interned_data_skipped_incremental_state_invalid",
                    machine,
                    &[("packet_sequence_id", ArgValue::Uint(u64::from(seq_id)))],
                );
            }
        }
        // Incremental state lives on a sequence: a packet needing it on none is refused,
        // and the import fails, as in the reference.
        if needs_state && seq_id == 0 {
            self.fatal.get_or_insert(ParseError::invalid(
                "TracePacket specified SEQ_NEEDS_INCREMENTAL_STATE but the TraceWriter's \
                 sequence_id is zero (the service is probably too old)",
            ));
            return None;
        }
        if needs_state && !valid {
            self.log(
                "packet_skipped_seq_needs_incremental_state_invalid",
                machine,
                &[("packet_sequence_id", ArgValue::Uint(u64::from(seq_id)))],
            );
            self.losses.skipped(machine, seq_id);
            return None;
        }
        let seq_clock = self
            .sequences
            .get(&(machine, seq_id))
            .and_then(|s| s.clock_id);
        let clock_id = pkt
            .timestamp_clock_id
            .filter(|&c| c != 0)
            .or(seq_clock)
            .unwrap_or(if self.default_clock_set {
                clocks::PACKET_DEFAULT
            } else {
                clocks::UNCONVERTED
            });
        if seq_id == 0 && (FIRST_SEQUENCE_CLOCK..LAST_SEQUENCE_CLOCK).contains(&clock_id) {
            self.fatal.get_or_insert(ParseError::invalid(format!(
                "TracePacket specified a sequence-local clock id ({clock_id}) but the \
                 TraceWriter's sequence_id is zero (the service is probably too old)"
            )));
            return None;
        }
        let ts = pkt
            .timestamp
            .map(|t| self.sequence_clock_ts(machine, seq_id, clock_id, t as i64));
        // A packet without a timestamp is never converted. One the reference handles as it
        // reads it stays at time 0, first; any other (descriptors, process trees) goes through
        // the sorter at the latest timestamp read so far, which placement fills in.
        let clock = match ts {
            Some(_) => self.clock(machine, seq_id, clock_id),
            None if pkt.tokenized => self.clock(machine, 0, clocks::UNTIMED),
            None => self.clock(machine, 0, clocks::LATEST),
        };
        Some(Placed {
            machine,
            seq_id,
            trusted_seq,
            ts,
            clock,
        })
    }

    /// A packet timestamp in ns: scaled by its clock's unit (any clock that declared one),
    /// and for an incremental clock added to the last value read on it (in file order, as
    /// Trace Processor's clock tracker reads them).
    fn sequence_clock_ts(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        clock_id: u32,
        ts: i64,
    ) -> i64 {
        // Only ids 64..128 are sequence-scoped; any other clock with a unit is global.
        let seq_id = if (FIRST_SEQUENCE_CLOCK..LAST_SEQUENCE_CLOCK).contains(&clock_id) {
            seq_id
        } else {
            0
        };
        let Some(clock) = self.seq_clocks.get_mut(&(machine, seq_id, clock_id)) else {
            return ts;
        };
        let ns = ts.saturating_mul(clock.unit_ns);
        if clock.incremental {
            clock.last_ns = clock.last_ns.saturating_add(ns);
            clock.last_ns
        } else {
            ns
        }
    }

    fn clock(&mut self, machine: MachineId, seq_id: u32, clock_id: u32) -> ClockRef {
        let domain = self.sink.shared_until_own_snapshot(ClockDomain {
            machine,
            clock_id,
            sequence: if clock_id >= FIRST_SEQUENCE_CLOCK {
                seq_id
            } else {
                0
            },
            file: self.ctx.file,
            shared: false,
        });
        self.sink.clock(domain)
    }

    fn intern(&mut self, machine: MachineId, seq_id: u32, d: &protos::InternedData) {
        let mut names = Vec::new();
        for n in &d.event_names {
            names.push((n.iid.unwrap_or(0), self.sink.intern_opt(n.name.as_deref())));
        }
        let mut cats = Vec::new();
        for c in &d.event_categories {
            cats.push((c.iid.unwrap_or(0), self.sink.intern_opt(c.name.as_deref())));
        }
        let mut anns = Vec::new();
        for a in &d.debug_annotation_names {
            anns.push((a.iid.unwrap_or(0), self.sink.intern_opt(a.name.as_deref())));
        }
        let mut locs = Vec::new();
        for l in &d.source_locations {
            locs.push((
                l.iid.unwrap_or(0),
                (
                    self.sink.intern_opt(l.file_name.as_deref()),
                    self.sink.intern_opt(l.function_name.as_deref()),
                    l.line_number,
                ),
            ));
        }
        let mut ksyms = Vec::new();
        for s in &d.kernel_symbols {
            let text = s.str.as_deref().map(String::from_utf8_lossy);
            ksyms.push((s.iid.unwrap_or(0), self.sink.intern_opt(text.as_deref())));
        }
        let mut logs = Vec::new();
        for b in &d.log_message_body {
            logs.push((b.iid.unwrap_or(0), self.sink.intern_opt(b.body.as_deref())));
        }
        let mut histograms = Vec::new();
        for h in &d.histogram_names {
            histograms.push((h.iid.unwrap_or(0), self.sink.intern_opt(h.name.as_deref())));
        }
        let mut viewcapture = Vec::new();
        for (field, list) in [
            (36, &d.protolog_string_args),
            (37, &d.protolog_stacktrace),
            (38, &d.viewcapture_package_name),
            (39, &d.viewcapture_window_name),
            (40, &d.viewcapture_view_id),
            (41, &d.viewcapture_class_name),
        ] {
            for s in list {
                let text = s.str.as_deref().map(String::from_utf8_lossy);
                let v = self.sink.intern(text.as_deref().unwrap_or_default());
                viewcapture.push(((field, s.iid.unwrap_or(0)), v));
            }
        }
        let mut correlations = Vec::new();
        for c in &d.correlation_id_str {
            let text = c.str.as_deref().map(String::from_utf8_lossy);
            correlations.push((c.iid.unwrap_or(0), self.sink.intern_opt(text.as_deref())));
        }
        let mut type_names = Vec::new();
        for t in &d.debug_annotation_value_type_names {
            type_names.push((t.iid.unwrap_or(0), self.sink.intern_opt(t.name.as_deref())));
        }
        let mut unsymbolized = Vec::new();
        for u in &d.unsymbolized_source_locations {
            let loc = (u.mapping_id.unwrap_or(0), u.rel_pc.unwrap_or(0));
            unsymbolized.push((u.iid.unwrap_or(0), loc));
        }
        let mut strs = Vec::new();
        for s in &d.debug_annotation_string_values {
            let text = s.str.as_deref().map(String::from_utf8_lossy);
            strs.push((s.iid.unwrap_or(0), self.sink.intern_opt(text.as_deref())));
        }
        let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) else {
            return;
        };
        for (iid, v) in names {
            seq.names.entry(iid).or_insert(v);
        }
        for (iid, v) in ksyms {
            seq.kernel_symbols.entry(iid).or_insert(v);
        }
        for (iid, v) in cats {
            seq.categories.entry(iid).or_insert(v);
        }
        for (iid, v) in anns {
            seq.annotation_names.entry(iid).or_insert(v);
        }
        for (iid, v) in locs {
            seq.source_locations.entry(iid).or_insert(v);
        }
        for (iid, v) in strs {
            seq.interned_strings.entry(iid).or_insert(v);
        }
        for (iid, v) in logs {
            seq.log_bodies.entry(iid).or_insert(v);
        }
        for (iid, v) in histograms {
            seq.histogram_names.entry(iid).or_insert(v);
        }
        for (iid, v) in correlations {
            seq.correlation_ids.entry(iid).or_insert(v);
        }
        for (key, v) in viewcapture {
            seq.winscope_strings.entry(key).or_insert(v);
        }
        for (iid, v) in type_names {
            seq.value_type_names.entry(iid).or_insert(v);
        }
        for (iid, v) in unsymbolized {
            seq.unsymbolized.entry(iid).or_insert(v);
        }
        for info in &d.app_wakelock_info {
            seq.app_wakelocks
                .entry(info.iid.unwrap_or(0) as u32)
                .or_insert_with(|| info.clone());
        }
        seq.v8.intern(d);
        for c in &d.packet_context {
            if let Some(ctx) = &c.ctx {
                seq.packet_contexts
                    .entry(c.iid.unwrap_or(0))
                    .or_insert_with(|| ctx.clone());
            }
        }
        for g in &d.gpu_counter_descriptors {
            if let Some(desc) = &g.counter_descriptor {
                let gpu = g.gpu_id.unwrap_or(0) as i32;
                seq.gpu_counter_descriptors
                    .entry(g.iid.unwrap_or(0))
                    .or_insert_with(|| (desc.clone(), gpu));
            }
        }
    }

    /// A trace that names no uuid gets one hashed from its first bytes, so the same file
    /// always has the same uuid.
    fn finish(&mut self, bytes: &[u8]) {
        self.flush_pending_track_event();
        self.finish_heap_graphs();
        self.reflect_late_args();
        self.translate_args();
        self.drop_ftrace_before_tracing_start();
        self.crop_ftrace();
        self.losses.finish(self.sink);
        let file = self.sink.current_file;
        if self.track_event_content.1 > 0 {
            let entry = self.content.entry("TracePacket.track_event").or_default();
            entry.0 += self.track_event_content.0;
            entry.1 += self.track_event_content.1;
        }
        let mut paths: Vec<(&'static str, (u64, u64))> = self.content.drain().collect();
        paths.sort_unstable();
        for (path, (size, count)) in paths {
            self.sink.proto_content.push(ProtoContent {
                file,
                path,
                category: NULL_STR,
                name: NULL_STR,
                annotation: NO_ARGS,
                size,
                count,
            });
        }
        let mut events: Vec<((StrId, StrId), (u64, u64))> = self.event_content.drain().collect();
        events.sort_unstable_by_key(|(_, (size, _))| std::cmp::Reverse(*size));
        let annotate = analyze_proto_content();
        for ((category, name), (size, count)) in events {
            let value = |s: StrId| {
                if s == NULL_STR {
                    ArgValue::Null
                } else {
                    ArgValue::Str(s)
                }
            };
            let annotation = if annotate {
                let set = [
                    self.sink.arg("event.category", value(category)),
                    self.sink.arg("event.name", value(name)),
                ];
                self.sink.args.push(&set)
            } else {
                NO_ARGS
            };
            self.sink.proto_content.push(ProtoContent {
                file,
                path: "TracePacket.track_event",
                category,
                name,
                annotation,
                size,
                count,
            });
        }
        if !self.uuid_seen {
            let hash = fnv1a(&bytes[..bytes.len().min(UUID_HASH_BYTES)]);
            let s = uuid_string(0, hash);
            self.sink
                .metadata("trace_uuid", self.ctx.machine, MetaValue::Str(s));
        }
    }

    /// A TrackEvent packet that ended before its category and name were read is counted
    /// without them.
    fn flush_pending_track_event(&mut self) {
        if let Some(size) = self.pending_track_event.take() {
            self.track_event_content.0 += size;
            self.track_event_content.1 += 1;
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn base64_pads_like_the_standard() {
        assert_eq!(super::chrome::base64(b""), "");
        assert_eq!(super::chrome::base64(b"f"), "Zg==");
        assert_eq!(super::chrome::base64(b"fo"), "Zm8=");
        assert_eq!(super::chrome::base64(b"foo"), "Zm9v");
        assert_eq!(super::chrome::base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn android_release_to_api_level() {
        let sdk = super::system::android_sdk_for_release;
        assert_eq!(sdk("5.1.1"), Some(22));
        assert_eq!(sdk("7.0"), Some(24));
        assert_eq!(sdk("8.1.0"), Some(27));
        assert_eq!(sdk("9"), Some(28));
        assert_eq!(sdk("12"), Some(31));
        assert_eq!(sdk("12L"), Some(32));
        assert_eq!(sdk("14"), Some(34));
        assert_eq!(sdk("4.4"), None);
        assert_eq!(sdk("Tiramisu"), None);
    }
    use super::*;

    #[test]
    fn a_stream_read_a_few_bytes_at_a_time_parses_as_the_whole_file_does() {
        let bytes = include_bytes!("../../../tests/data/a_track_events.pftrace");
        let ctx = FileContext::new(0, 0);
        let mut whole = Sink::new();
        parse(bytes, &mut whole, &ctx).expect("parses");
        for step in [1, 3, 4096] {
            let mut sink = Sink::new();
            let mut input = crate::parse::Trickle { bytes, step };
            parse_stream(&mut input, 0, &mut sink, &ctx, &mut |_, _| true).expect("parses");
            assert_eq!(
                format!("{:?}", sink.decoded()),
                format!("{:?}", whole.decoded())
            );
            assert_eq!(sink.stats, whole.stats, "step {step}");
        }
    }

    #[test]
    fn task_states_use_the_4_4_layout() {
        assert_eq!(decode_task_state(0).as_deref(), Some("R"));
        assert_eq!(decode_task_state(1).as_deref(), Some("S"));
        assert_eq!(decode_task_state(2).as_deref(), Some("D"));
        assert_eq!(decode_task_state(0x800).as_deref(), Some("R+"));
        assert_eq!(decode_task_state(-1), None);
        let v = |s, k| ftrace::decode_task_state_for(s, Some(k));
        assert_eq!(v(0x1000 | 1, (4, 9)).as_deref(), Some("S+"));
        assert_eq!(v(0x800, (4, 9)), None);
        assert_eq!(v(0x80, (4, 19)).as_deref(), Some("I"));
        assert_eq!(v(0x100, (5, 10)).as_deref(), Some("R+"));
        assert_eq!(v(0x40, (5, 10)).as_deref(), Some("P"));
        assert_eq!(v(0x402, (4, 4)).as_deref(), Some("I"));
        assert_eq!(v(0x200, (5, 10)), None);
        // Three characters at most, as the reference's state string.
        assert_eq!(v(0xF, (4, 4)).as_deref(), Some("SDT"));
        assert_eq!(v(0x1000 | 0x3, (4, 9)).as_deref(), Some("SD+"));
        assert_eq!(v(0x1000 | 0x7, (4, 9)).as_deref(), Some("SDT"));
    }

    #[test]
    fn garbage_is_a_clear_error_not_a_panic() {
        let mut sink = Sink::new();
        let ctx = FileContext::new(0, 0);
        assert!(parse(&[0x0f, 0xff, 0xff], &mut sink, &ctx).is_err());
        assert!(parse(&[0x0a, 0x80], &mut sink, &ctx).is_err());
    }

    #[test]
    fn truncated_after_a_packet_keeps_the_packet() {
        let pkt = TracePacket {
            timestamp: Some(5),
            ..Default::default()
        };
        let trace = protos::Trace {
            packet: vec![pkt.clone(), pkt],
        };
        let mut bytes = trace.encode_to_vec();
        bytes.truncate(bytes.len() - 1);
        let mut sink = Sink::new();
        let ctx = FileContext::new(0, 0);
        parse(&bytes, &mut sink, &ctx).unwrap();
        assert_eq!(sink.stats.values().sum::<i64>(), 1);
    }
}
