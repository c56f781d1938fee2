//! Perfetto protobuf traces: a `Trace` is a run of `TracePacket`s (field 1). Packets are
//! decoded one at a time (never the whole file as one message), with per-sequence state:
//! interned data, packet defaults, incremental counters and delta timestamps.

use std::collections::HashMap;

use prost::Message;

use super::{
    atrace, config_text, ftrace_raw, schema, wire_repair, FileContext, MachineScope, ParseError,
};
use crate::ir::{clocks, *};
use crate::manifest::ManifestError;
use crate::protos::{self, debug_annotation, ftrace_event, trace_packet, track_event, TracePacket};
use crate::stats;

const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;
const CLONE_THREAD: u64 = 0x10000;
/// Custom clock ids at or above this are scoped to their sequence.
const FIRST_SEQUENCE_CLOCK: u32 = 64;

/// Interned data and defaults of one packet sequence.
#[derive(Default)]
struct Sequence {
    /// False until the sequence's incremental state is known to be intact.
    valid: bool,
    names: HashMap<u64, StrId>,
    categories: HashMap<u64, StrId>,
    annotation_names: HashMap<u64, StrId>,
    /// (file, function, line)
    source_locations: HashMap<u64, (StrId, StrId, Option<u32>)>,
    interned_strings: HashMap<u64, StrId>,
    clock_id: Option<u32>,
    default_track: Option<u64>,
    default_extra_counters: Vec<u64>,
    default_extra_double_counters: Vec<u64>,
    /// Running values of incremental counters, by track uuid.
    counter_values: HashMap<u64, f64>,
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
    /// Interned kernel symbols (`sched_blocked_reason.caller`).
    kernel_symbols: HashMap<u64, StrId>,
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

/// The fields of a kernel driver's trace marker (MDSS, SDE, DPU, G2D, Mali).
struct KernelMarker {
    /// `B`, `E` or `C`, as in atrace.
    ty: u8,
    tgid: Option<i32>,
    name: String,
    value: i32,
}

impl KernelMarker {
    fn new(ty: u8, tgid: Option<i32>, name: Option<String>, value: Option<i32>) -> Self {
        Self {
            ty,
            tgid,
            name: name.unwrap_or_default(),
            value: value.unwrap_or(0),
        }
    }
}

/// `common_flags` bits saying an ftrace event ran in hard or soft interrupt context.
const IRQ_FLAGS: u32 = 0x08 | 0x10;

/// Which kind of interrupt handler a cpu slice is.
#[derive(Clone, Copy)]
enum Interrupt {
    Hard,
    Soft,
}

/// The kernel's softirq vectors, by number.
const SOFTIRQ_NAMES: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// Where an ftrace event came from: its bundle's machine, sequence and cpu, and the
/// event's own pid and flags.
#[derive(Clone, Copy)]
struct FtraceOrigin {
    machine: MachineId,
    seq_id: u32,
    cpu: u32,
    pid: i64,
    common_flags: Option<u32>,
}

/// Per-cpu state of compact sched decoding: the task that the last switch put on.
#[derive(Clone, Copy)]
struct CompactCpu {
    next_pid: i64,
    next_comm: StrId,
    next_prio: i32,
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
    content: HashMap<&'static str, (u64, u64)>,
    event_content: FxHashMap<(StrId, StrId), (u64, u64)>,
    /// Size of the TrackEvent packet being parsed, until its category and name are known.
    pending_track_event: Option<u64>,
    /// The thread each kernel memory map (`rss_stat.mm_id`) was last reported by.
    mm_owners: HashMap<(MachineId, u32), i64>,
    /// Some packet named the trace's uuid.
    uuid_seen: bool,
    /// ChromeMetadataPackets so far (each gets its own `cr-<letter>-` metadata prefix).
    chrome_metadata_packets: u32,
    /// Latest `last_read_event_timestamp` of the ftrace bundles, per machine.
    latest_ftrace_start: HashMap<MachineId, i64>,
    /// Scratch space for a raw ftrace event's args.
    raw_args: Vec<Arg>,
    /// The packet being parsed: where its bytes are in memory, and its offset in the file.
    packet_at: (usize, u64),
}

/// Reads a varint and its length in bytes; `None` if the buffer ends inside it.
fn read_varint(buf: &[u8]) -> Option<(u64, usize)> {
    let mut rest = buf;
    let value = schema::varint(&mut rest)?;
    Some((value, buf.len() - rest.len()))
}

/// Imports a protobuf trace. A file cut off in the middle keeps every whole packet before
/// the cut and counts the rest in `proto_truncated`.
pub fn parse(bytes: &[u8], sink: &mut Sink, ctx: &FileContext) -> Result<(), ParseError> {
    parse_with_progress(bytes, sink, ctx, &mut |_, _| true)
}

/// Packets between two calls of the progress callback.
const PACKETS_PER_TICK: u64 = 1 << 16;

/// Like [`parse`]; `tick(bytes read, events so far)` is called every few thousand packets,
/// and the parse stops with [`ParseError::Cancelled`] when it returns false.
pub fn parse_with_progress(
    bytes: &[u8],
    sink: &mut Sink,
    ctx: &FileContext,
    tick: &mut dyn FnMut(usize, usize) -> bool,
) -> Result<(), ParseError> {
    let mut p = Parser {
        sink,
        ctx,
        sequences: FxHashMap::default(),
        compact: HashMap::new(),
        args: ArgsBuilder::default(),
        packets: 0,
        fatal: None,
        sent_base_packet: false,
        async_names: HashMap::new(),
        latest_ftrace_start: HashMap::new(),
        uuid_seen: false,
        content: HashMap::new(),
        event_content: FxHashMap::default(),
        pending_track_event: None,
        mm_owners: HashMap::new(),
        chrome_metadata_packets: 0,
        raw_args: Vec::new(),
        packet_at: (0, 0),
    };
    // Track events take about 16 bytes or more on the wire; reserving up front avoids the
    // doubling spike (old and new buffers alive at once) on large traces.
    p.sink.events.reserve(bytes.len() / 16);
    let mut pos = 0usize;
    while pos < bytes.len() {
        let Some((tag, n)) = read_varint(&bytes[pos..]) else {
            p.truncated(pos)?;
            break;
        };
        let field = tag >> 3;
        let wire = tag & 7;
        pos += n;
        let skip = match wire {
            0 => read_varint(&bytes[pos..]).map(|(_, n)| n),
            1 => Some(8),
            5 => Some(4),
            2 => match read_varint(&bytes[pos..]) {
                Some((len, n)) => {
                    let start = pos + n;
                    let end = start
                        .checked_add(len as usize)
                        .filter(|&e| e <= bytes.len());
                    match end {
                        Some(end) => {
                            if field == 1 {
                                p.packet(&bytes[start..end], start as u64);
                                if let Some(e) = p.fatal.take() {
                                    return Err(e);
                                }
                                if p.packets.is_multiple_of(PACKETS_PER_TICK)
                                    && !tick(end, p.sink.events.len())
                                {
                                    return Err(ParseError::Cancelled);
                                }
                            }
                            Some(end - pos)
                        }
                        None => None,
                    }
                }
                None => None,
            },
            _ => {
                if p.packets == 0 {
                    return Err(ParseError::invalid(format!(
                        "not a Perfetto protobuf trace: invalid wire type {wire} at byte {pos}"
                    )));
                }
                p.sink.stat("proto_packet_decode_failure", ctx.machine, 1);
                p.finish(bytes);
                return Ok(());
            }
        };
        match skip {
            Some(n) if pos + n <= bytes.len() => pos += n,
            _ => {
                p.truncated(pos)?;
                break;
            }
        }
    }
    p.finish(bytes);
    Ok(())
}

/// The TracePacket field a packet's payload came in, as a content path.
fn content_path(data: Option<&trace_packet::Data>) -> &'static str {
    use trace_packet::Data as D;
    match data {
        Some(D::FtraceEvents(_)) => "TracePacket.ftrace_events",
        Some(D::ProcessTree(_)) => "TracePacket.process_tree",
        Some(D::ClockSnapshot(_)) => "TracePacket.clock_snapshot",
        Some(D::Trigger(_)) => "TracePacket.trigger",
        Some(D::ServiceEvent(_)) => "TracePacket.service_event",
        Some(D::InitialDisplayState(_)) => "TracePacket.initial_display_state",
        Some(D::CloneSnapshotTrigger(_)) => "TracePacket.clone_snapshot_trigger",
        Some(D::SysStats(_)) => "TracePacket.sys_stats",
        Some(D::ProcessStats(_)) => "TracePacket.process_stats",
        Some(D::TrackEvent(_)) => "TracePacket.track_event",
        Some(D::FtraceStats(_)) => "TracePacket.ftrace_stats",
        Some(D::TraceStats(_)) => "TracePacket.trace_stats",
        Some(D::StreamingProfilePacket(_)) => "TracePacket.streaming_profile_packet",
        Some(D::SynchronizationMarker(_)) => "TracePacket.synchronization_marker",
        Some(D::ProcessDescriptor(_)) => "TracePacket.process_descriptor",
        Some(D::ThreadDescriptor(_)) => "TracePacket.thread_descriptor",
        Some(D::SystemInfo(_)) => "TracePacket.system_info",
        Some(D::TraceConfig(_)) => "TracePacket.trace_config",
        Some(D::ChromeMetadata(_)) => "TracePacket.chrome_metadata",
        Some(D::CpuInfo(_)) => "TracePacket.cpu_info",
        Some(D::CompressedPackets(_)) => "TracePacket.compressed_packets",
        Some(D::TrackDescriptor(_)) => "TracePacket.track_descriptor",
        Some(D::TraceUuid(_)) => "TracePacket.trace_uuid",
        Some(D::RemoteClockSync(_)) => "TracePacket.remote_clock_sync",
        Some(D::ZstdCompressedPackets(_)) => "TracePacket.zstd_compressed_packets",
        None => "TracePacket (payload Sextant does not read)",
    }
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

/// Standard base64 with padding (Chrome's background tracing metadata is stored so).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Android's API level for a release number (`12` → 31), as the fingerprint only names
/// the release.
fn android_sdk_for_release(release: &str) -> Option<i64> {
    let mut parts = release.split('.');
    let major: u32 = parts.next()?.trim_end_matches('L').parse().ok()?;
    let minor: u32 = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    Some(match (major, minor) {
        (5, 0) => 21,
        (5, _) => 22,
        (6, _) => 23,
        (7, 0) => 24,
        (7, _) => 25,
        (8, 0) => 26,
        (8, _) => 27,
        (9..=11, _) => i64::from(major) + 19,
        (12, _) if release.ends_with('L') => 32,
        (12, _) => 31,
        (13.., _) => i64::from(major) + 20,
        _ => return None,
    })
}

fn lossy(s: &str) -> &str {
    s.trim_end_matches(['\0', '\n'])
}

impl Parser<'_> {
    fn truncated(&mut self, at: usize) -> Result<(), ParseError> {
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

    /// The machine of a packet: the file's own for no id (or 0), else the embedded id,
    /// through the manifest's `machines` remap when there is one.
    fn packet_machine(&mut self, id: Option<u32>) -> Result<MachineId, ParseError> {
        let n = match id {
            None | Some(0) => {
                self.sent_base_packet = true;
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

    /// One TracePacket, found at byte `offset` of the file.
    fn packet(&mut self, bytes: &[u8], offset: u64) {
        self.packet_at = (bytes.as_ptr() as usize, offset);
        // Raw ftrace rows read the packet's own bytes, repaired or not: a skipped field
        // may be an event of a kind the schema does not know.
        let pkt = match TracePacket::decode(bytes) {
            Ok(p) => p,
            Err(_) => match self.repair(bytes, offset) {
                Some(p) => p,
                None => {
                    self.stat("proto_packet_decode_failure", self.ctx.machine);
                    return;
                }
            },
        };
        self.packets += 1;
        self.flush_pending_track_event();
        let path = content_path(pkt.data.as_ref());
        if matches!(pkt.data, Some(trace_packet::Data::TrackEvent(_))) {
            self.pending_track_event = Some(bytes.len() as u64);
        } else {
            let entry = self.content.entry(path).or_default();
            entry.0 += bytes.len() as u64;
            entry.1 += 1;
        }
        let machine = match self.packet_machine(pkt.machine_id) {
            Ok(m) => m,
            Err(e) => {
                self.fatal.get_or_insert(e);
                return;
            }
        };
        let seq_id = match pkt.optional_trusted_packet_sequence_id {
            Some(trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(s)) => s,
            None => 0,
        };
        let flags = pkt.sequence_flags.unwrap_or(0);
        {
            let seq = self.sequences.entry((machine, seq_id)).or_default();
            if pkt.first_packet_on_sequence() {
                seq.first_packet_seen = true;
            }
            if pkt.previous_packet_dropped.unwrap_or(0) != 0 && !pkt.first_packet_on_sequence() {
                seq.valid = false;
                seq.counter_values.clear();
                seq.ref_ts_ns = None;
                seq.ref_ts_broken = false;
                seq.ref_thread_time_us = None;
                self.sink.stat("sequence_packet_loss_flagged", machine, 1);
            }
        }
        if pkt.incremental_state_cleared() || flags & SEQ_INCREMENTAL_STATE_CLEARED != 0 {
            if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
                seq.clear();
            }
        }
        if let Some(defaults) = &pkt.trace_packet_defaults {
            if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
                seq.clock_id = defaults.timestamp_clock_id;
                if let Some(te) = &defaults.track_event_defaults {
                    seq.default_track = te.track_uuid;
                    seq.default_extra_counters = te.extra_counter_track_uuids.clone();
                    seq.default_extra_double_counters = te.extra_double_counter_track_uuids.clone();
                }
            }
        }
        let valid = self
            .sequences
            .get(&(machine, seq_id))
            .is_some_and(|s| s.valid);
        if let Some(interned) = &pkt.interned_data {
            if valid {
                self.intern(machine, seq_id, interned);
            } else {
                self.stat("interned_data_skipped_incremental_state_invalid", machine);
            }
        }
        if flags & SEQ_NEEDS_INCREMENTAL_STATE != 0 && !valid {
            self.stat(
                "packet_skipped_seq_needs_incremental_state_invalid",
                machine,
            );
            return;
        }
        let seq_clock = self
            .sequences
            .get(&(machine, seq_id))
            .and_then(|s| s.clock_id);
        let clock_id = pkt
            .timestamp_clock_id
            .filter(|&c| c != 0)
            .or(seq_clock)
            .unwrap_or(clocks::PACKET_DEFAULT);
        let ts = pkt.timestamp.map(|t| t as i64);
        // A packet without a timestamp (descriptors, process trees) describes the trace rather
        // than a moment of it: it is kept at time 0 of trace time, never converted.
        let clock = if ts.is_some() {
            self.clock(machine, seq_id, clock_id)
        } else {
            self.clock(machine, 0, clocks::UNTIMED)
        };
        let Some(data) = pkt.data else {
            return;
        };
        match data {
            trace_packet::Data::TrackEvent(ev) => {
                self.track_event(machine, seq_id, ts, clock, ev);
            }
            trace_packet::Data::TrackDescriptor(d) => {
                self.track_descriptor(machine, seq_id, ts.unwrap_or(0), clock, d);
            }
            trace_packet::Data::ThreadDescriptor(t) => {
                let thread = ThreadRef {
                    machine,
                    tid: t.tid.unwrap_or(0),
                    pid: t.pid.map(i64::from),
                };
                if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
                    seq.thread = Some(thread);
                    let reference = t.reference_timestamp_us.map(|us| us.checked_mul(1000));
                    seq.ref_ts_broken = matches!(reference, Some(None));
                    seq.ref_ts_ns = reference.flatten();
                    seq.ref_thread_time_us = t.reference_thread_time_us;
                }
                let name = t
                    .thread_name
                    .as_deref()
                    .map_or(NULL_STR, |n| self.sink.intern(n));
                self.sink.push(
                    ts.unwrap_or(0),
                    clock,
                    EventData::ThreadName {
                        thread,
                        name,
                        priority: NamePriority::TrackEventThreadName,
                    },
                );
            }
            trace_packet::Data::ProcessDescriptor(pd) => {
                let info = self.process_descriptor(machine, &pd);
                self.sink
                    .push(ts.unwrap_or(0), clock, EventData::Process(Box::new(info)));
            }
            trace_packet::Data::ClockSnapshot(cs) => self.clock_snapshot(machine, seq_id, &cs),
            trace_packet::Data::RemoteClockSync(sync) => self.remote_clock_sync(machine, &sync),
            trace_packet::Data::Trigger(t) => self.trigger(machine, ts, clock, &t),
            trace_packet::Data::CloneSnapshotTrigger(t) => {
                if let Some(name) = &t.trigger_name {
                    self.sink
                        .metadata("trace_trigger", machine, MetaValue::Str(name.clone()));
                }
                self.trigger(machine, ts, clock, &t)
            }
            trace_packet::Data::ServiceEvent(e) if e.all_data_sources_flushed() => {
                let ts = MetaValue::Int(ts.unwrap_or(0));
                self.sink
                    .metadata_append("all_data_source_flushed_ns", machine, ts);
            }
            trace_packet::Data::InitialDisplayState(d) => {
                if let (Some(ts), Some(state)) = (ts, d.display_state) {
                    let name = self.sink.intern("ScreenState");
                    let track = self.sink.track(TrackKey::GlobalCounter {
                        machine,
                        name,
                        kind: "screen_state",
                    });
                    let value = Real(f64::from(state));
                    self.sink.push(
                        ts,
                        clock,
                        EventData::Counter {
                            track,
                            value,
                            args: NO_ARGS,
                        },
                    );
                }
            }
            trace_packet::Data::ProcessTree(tree) => {
                self.process_tree(machine, ts.unwrap_or(0), clock, &tree)
            }
            trace_packet::Data::FtraceEvents(bundle) => {
                self.ftrace_bundle(machine, seq_id, bundle, bytes);
            }
            trace_packet::Data::SystemInfo(info) => self.system_info(machine, &info),
            trace_packet::Data::CpuInfo(info) => self.cpu_info(machine, ts, clock, &info),
            trace_packet::Data::TraceStats(stats) => self.trace_stats(machine, &stats),
            trace_packet::Data::FtraceStats(stats) => self.ftrace_stats(machine, &stats),
            trace_packet::Data::StreamingProfilePacket(profile) => {
                self.streaming_profile(machine, seq_id, &profile);
            }
            trace_packet::Data::TraceUuid(uuid) => {
                let (msb, lsb) = (uuid.msb.unwrap_or(0) as u64, uuid.lsb.unwrap_or(0) as u64);
                self.uuid_seen = true;
                let s = uuid_string(msb, lsb);
                self.sink.metadata("trace_uuid", machine, MetaValue::Str(s));
            }
            // The config's uuid names the trace unless a TraceUuid packet does.
            trace_packet::Data::TraceConfig(bytes) => {
                let text = config_text::trace_config_text(&bytes);
                self.sink
                    .metadata("trace_config_pbtxt", machine, MetaValue::Str(text));
                let Ok(config) = protos::TraceConfig::decode(&bytes[..]) else {
                    self.sink.stat("proto_packet_decode_failure", machine, 1);
                    return;
                };
                if let Some(name) = config.unique_session_name {
                    self.sink
                        .metadata("unique_session_name", machine, MetaValue::Str(name));
                }
                if let (Some(msb), Some(lsb), false) =
                    (config.trace_uuid_msb, config.trace_uuid_lsb, self.uuid_seen)
                {
                    self.uuid_seen = true;
                    let s = uuid_string(msb as u64, lsb as u64);
                    self.sink.metadata("trace_uuid", machine, MetaValue::Str(s));
                }
            }
            trace_packet::Data::ChromeMetadata(meta) => self.chrome_metadata(machine, &meta),
            _ => {}
        }
    }

    fn clock(&mut self, machine: MachineId, seq_id: u32, clock_id: u32) -> ClockRef {
        self.sink.clock(ClockDomain {
            machine,
            clock_id,
            sequence: if clock_id >= FIRST_SEQUENCE_CLOCK {
                seq_id
            } else {
                0
            },
            file: self.ctx.file,
        })
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
    }

    fn process_descriptor(
        &mut self,
        machine: MachineId,
        pd: &protos::ProcessDescriptor,
    ) -> ProcessInfo {
        let name = pd
            .process_name
            .as_deref()
            .or(pd.cmdline.first().map(String::as_str))
            .map_or(NULL_STR, |n| self.sink.intern(n));
        let cmdline = if pd.cmdline.is_empty() {
            NULL_STR
        } else {
            self.sink.intern(&pd.cmdline.join(" "))
        };
        ProcessInfo {
            process: ProcessRef {
                machine,
                pid: i64::from(pd.pid.unwrap_or(0)),
            },
            parent_pid: None,
            name,
            cmdline,
            uid: None,
            start_ts: pd.start_timestamp_ns,
            from_system: false,
        }
    }

    fn track_descriptor(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        d: protos::TrackDescriptor,
    ) {
        let uuid = d.uuid.unwrap_or(0);
        let name = match &d.static_or_dynamic_name {
            Some(protos::track_descriptor::StaticOrDynamicName::Name(n))
            | Some(protos::track_descriptor::StaticOrDynamicName::StaticName(n))
            | Some(protos::track_descriptor::StaticOrDynamicName::AtraceName(n)) => {
                self.sink.intern_nonempty(n)
            }
            None => NULL_STR,
        };
        let has_first_packet_on_sequence = self
            .sequences
            .get(&(machine, seq_id))
            .is_some_and(|s| s.first_packet_seen);
        if uuid == 0 {
            self.sink.explicit_process_ordering |= d.process_ordering.unwrap_or(0) == 1;
            self.sink.explicit_thread_ordering |= d.thread_ordering.unwrap_or(0) == 1;
        }
        if let Some(td) = &d.thread {
            // Whichever descriptor a sequence emits, it writes for that thread.
            let thread = ThreadRef {
                machine,
                tid: td.tid.unwrap_or(0),
                pid: td.pid.map(i64::from),
            };
            if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
                seq.thread = Some(thread);
            }
        }
        if let Some(existing) = self.sink.descriptors.get_mut(&(machine, uuid)) {
            // A re-description renames only tracks that do not merge by name (the latest
            // name wins); merged tracks keep their first non-NULL name.
            let merge_none = d.sibling_merge_behavior.unwrap_or(0) == 2;
            if name != NULL_STR && (merge_none || existing.name == NULL_STR) {
                existing.name = name;
            }
            return;
        }
        let mut desc = Descriptor {
            uuid,
            parent_uuid: d.parent_uuid,
            name,
            disallow_merging_with_system_tracks: d.disallow_merging_with_system_tracks(),
            description: self.sink.intern_opt(d.description.as_deref()),
            child_ordering: d.child_ordering.unwrap_or(0),
            sibling_order_rank: d.sibling_order_rank,
            has_first_packet_on_sequence,
            is_state: d.state.is_some(),
            ..Default::default()
        };
        if let Some(pd) = &d.process {
            let mut info = self.process_descriptor(machine, pd);
            let process = info.process;
            desc.process = Some(process);
            if info.name == NULL_STR {
                info.name = name;
            }
            self.sink
                .push(ts, clock, EventData::ClaimProcess { process, uuid });
            let host_app = d
                .chrome_process
                .as_ref()
                .and_then(|c| c.host_app_package_name.as_deref());
            if let Some(app) = host_app {
                let key = self.sink.intern("chrome.host_app_package_name");
                let value = self.sink.intern(app);
                self.sink.push(
                    ts,
                    clock,
                    EventData::ProcessStrArg {
                        process,
                        key,
                        value,
                    },
                );
            }
            self.sink
                .push(ts, clock, EventData::Process(Box::new(info)));
            if let (Some(rank), true) = (d.sibling_order_rank, self.sink.explicit_process_ordering)
            {
                let key = self.sink.intern("process_sort_index_hint");
                let value = i64::from(rank);
                self.sink.push(
                    ts,
                    clock,
                    EventData::ProcessArg {
                        process,
                        key,
                        value,
                    },
                );
            }
        }
        if let Some(td) = &d.thread {
            let thread = ThreadRef {
                machine,
                tid: td.tid.unwrap_or(0),
                pid: td.pid.map(i64::from),
            };
            desc.thread = Some(thread);
            desc.process = None;
            if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
                seq.thread = Some(thread);
            }
            self.sink
                .push(ts, clock, EventData::ClaimThread { thread, uuid });
            let tname = td
                .thread_name
                .as_deref()
                .map_or(name, |n| self.sink.intern_nonempty(n));
            self.sink.push(
                ts,
                clock,
                EventData::ThreadName {
                    thread,
                    name: tname,
                    priority: NamePriority::TrackDescriptor,
                },
            );
            if let (Some(rank), true) = (d.sibling_order_rank, self.sink.explicit_thread_ordering) {
                let key = self.sink.intern("thread_sort_index_hint");
                let value = i64::from(rank);
                self.sink
                    .push(ts, clock, EventData::ThreadArg { thread, key, value });
            }
        }
        if let Some(c) = &d.counter {
            desc.counter = Some(CounterInfo {
                builtin: c.r#type.unwrap_or(0),
                unit: c.unit.unwrap_or(0),
                unit_name: self.sink.intern_opt(c.unit_name.as_deref()),
                unit_multiplier: c.unit_multiplier.unwrap_or(0),
                is_incremental: c.is_incremental(),
            });
        }
        self.sink.descriptors.insert((machine, uuid), desc);
    }

    fn clock_snapshot(&mut self, machine: MachineId, seq_id: u32, cs: &protos::ClockSnapshot) {
        let mut readings = Vec::with_capacity(cs.clocks.len());
        for c in &cs.clocks {
            let Some(id) = c.clock_id else { continue };
            let mult = c.unit_multiplier_ns.unwrap_or(1).max(1) as i64;
            let v = (c.timestamp.unwrap_or(0) as i64).saturating_mul(mult);
            let domain = ClockDomain {
                machine,
                clock_id: id,
                sequence: if id >= FIRST_SEQUENCE_CLOCK {
                    seq_id
                } else {
                    0
                },
                file: self.ctx.file,
            };
            readings.push((domain, v));
        }
        if !readings.is_empty() {
            self.sink.snapshots.push(ClockSnapshot {
                machine,
                file: self.ctx.file,
                primary_trace_clock: cs.primary_trace_clock.map(|c| c as u32),
                readings,
            });
        }
    }

    /// A kernel driver's trace marker, as the atrace text it stands for; `at` is where the
    /// ftrace event happened (machine, ts, clock, pid).
    fn kernel_marker(&mut self, at: (MachineId, i64, ClockRef, i64), m: KernelMarker) {
        let (machine, ts, clock, pid) = at;
        let tgid = m.tgid.map_or(pid, i64::from);
        let (name, value) = (m.name, m.value);
        let text = match m.ty {
            b'B' => format!("B|{tgid}|{name}"),
            b'E' => format!("E|{tgid}"),
            b'C' => format!("C|{tgid}|{name}|{value}"),
            _ => return,
        };
        atrace::parse_marker(self.sink, clock, ts, machine, pid, text.as_bytes());
    }

    /// A trace trigger: an instant on the global "Trace Triggers" track, with the producer.
    fn trigger(
        &mut self,
        machine: MachineId,
        ts: Option<i64>,
        clock: ClockRef,
        t: &protos::Trigger,
    ) {
        let Some(ts) = ts else { return };
        let mut args = Vec::new();
        if let Some(p) = &t.producer_name {
            let key = self.sink.intern("producer_name");
            let value = ArgValue::Str(self.sink.intern(p));
            args.push(Arg {
                flat_key: key,
                key,
                value,
            });
        }
        if let Some(uid) = t.trusted_producer_uid {
            let key = self.sink.intern("trusted_producer_uid");
            args.push(Arg {
                flat_key: key,
                key,
                value: ArgValue::Int(i64::from(uid)),
            });
        }
        let track_name = self.sink.intern("Trace Triggers");
        let slice = SliceEvent {
            track: self.sink.track(TrackKey::GlobalSlices {
                machine,
                kind: "trace_trigger",
                name: track_name,
            }),
            category: NULL_STR,
            name: t
                .trigger_name
                .as_deref()
                .map_or(NULL_STR, |n| self.sink.intern(n)),
            args: self.sink.args.push(&args),
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        self.sink.push(
            ts,
            clock,
            EventData::Complete {
                slice,
                dur: 0,
                thread_dur: NO_TS,
            },
        );
    }

    /// A relayed machine's clock synchronisation with the host (traced_relay): each round
    /// read the client's and the host's clocks; per clock, the rounds' offsets are averaged
    /// into one relation between the client's clock and the host's.
    fn remote_clock_sync(&mut self, client: MachineId, sync: &protos::RemoteClockSync) {
        let host = self.ctx.machine;
        let reading = |cs: &Option<protos::ClockSnapshot>, id: u32| -> Option<i64> {
            let c = cs
                .as_ref()?
                .clocks
                .iter()
                .find(|c| c.clock_id == Some(id))?;
            let mult = c.unit_multiplier_ns.unwrap_or(1).max(1) as i64;
            Some((c.timestamp? as i64).saturating_mul(mult))
        };
        let mut ids: Vec<u32> = Vec::new();
        for round in &sync.synced_clocks {
            if let Some(cs) = &round.client_clocks {
                self.clock_snapshot(client, 0, cs);
                for c in &cs.clocks {
                    if let Some(id) = c.clock_id.filter(|id| !ids.contains(id)) {
                        ids.push(id);
                    }
                }
            }
        }
        for id in ids {
            let mut offsets: Vec<i64> = Vec::new();
            let mut anchor = None;
            for round in &sync.synced_clocks {
                let host_value = reading(&round.host_clocks, id);
                if let (Some(c), Some(h)) = (reading(&round.client_clocks, id), host_value) {
                    offsets.push(c.wrapping_sub(h));
                }
                if let Some(h) = host_value.filter(|&h| h != 0) {
                    anchor = Some(h);
                }
            }
            let (Some(anchor), false) = (anchor, offsets.is_empty()) else {
                continue;
            };
            let sum: i128 = offsets.iter().map(|&o| i128::from(o)).sum();
            let offset = (sum / offsets.len() as i128) as i64;
            let domain = |machine| ClockDomain {
                machine,
                clock_id: id,
                sequence: 0,
                file: self.ctx.file,
            };
            self.sink.snapshots.push(ClockSnapshot {
                machine: host,
                file: self.ctx.file,
                primary_trace_clock: None,
                readings: vec![
                    (domain(host), anchor),
                    (domain(client), anchor.wrapping_add(offset)),
                ],
            });
        }
    }

    fn process_tree(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        tree: &protos::ProcessTree,
    ) {
        for p in &tree.processes {
            if p.cmdline.is_empty() {
                continue;
            }
            let argv0 = if p.cmdline.len() == 1 {
                p.cmdline[0].split(' ').next().unwrap_or("")
            } else {
                p.cmdline[0].as_str()
            };
            let name = self.sink.intern_nonempty(argv0);
            let cmdline = self.sink.intern(&p.cmdline.join(" "));
            let info = ProcessInfo {
                process: ProcessRef {
                    machine,
                    pid: i64::from(p.pid.unwrap_or(0)),
                },
                parent_pid: p.ppid.map(i64::from),
                name,
                cmdline,
                uid: p.uid.map(i64::from),
                start_ts: p.process_start_from_boot.map(|v| v as i64),
                from_system: true,
            };
            self.sink
                .push(ts, clock, EventData::Process(Box::new(info)));
        }
        for t in &tree.threads {
            let thread = ThreadRef {
                machine,
                tid: i64::from(t.tid.unwrap_or(0)),
                pid: t.tgid.map(i64::from),
            };
            let data = match t.name.as_deref() {
                Some(n) if !n.is_empty() => EventData::ThreadName {
                    thread,
                    name: self.sink.intern(n),
                    priority: NamePriority::ProcessTree,
                },
                _ => EventData::Thread(thread),
            };
            self.sink.push(ts, clock, data);
        }
    }

    fn system_info(&mut self, machine: MachineId, info: &protos::SystemInfo) {
        let m = self.sink.machines.entry(machine).or_default();
        if let Some(n) = &info.machine_name {
            m.name = Some(n.clone());
        }
        if let Some(u) = &info.utsname {
            m.sysname = u.sysname.clone();
            m.release = u.release.clone();
            m.version = u.version.clone();
            m.arch = u.machine.clone();
        }
        m.num_cpus = info.num_cpus.map(i64::from);
        m.android_build_fingerprint = info.android_build_fingerprint.clone();
        m.android_sdk_version = info.android_sdk_version.map(|v| v as i64);
        m.system_ram_bytes = info.system_ram_bytes.map(|v| v as i64);
        let mut meta = Vec::new();
        if let Some(u) = &info.utsname {
            for (k, v) in [
                ("system_name", &u.sysname),
                ("system_release", &u.release),
                ("system_version", &u.version),
                ("system_machine", &u.machine),
            ] {
                if let Some(v) = v {
                    meta.push((k, MetaValue::Str(v.clone())));
                }
            }
        }
        if let Some(f) = &info.android_build_fingerprint {
            meta.push(("android_build_fingerprint", MetaValue::Str(f.clone())));
        }
        // BRAND/PRODUCT/DEVICE:RELEASE/ID/INCREMENTAL:TYPE/TAGS
        let fingerprint: Vec<&str> = info
            .android_build_fingerprint
            .as_deref()
            .map(|f| f.split('/').collect())
            .unwrap_or_default();
        if let Some(incremental) = fingerprint.get(4).and_then(|p| p.split(':').next()) {
            meta.push((
                "android_incremental_build",
                MetaValue::Str(incremental.to_string()),
            ));
        }
        let sdk = info.android_sdk_version.map(|v| v as i64).or_else(|| {
            let release = fingerprint.get(2)?.split(':').nth(1)?;
            android_sdk_for_release(release)
        });
        if let Some(v) = sdk {
            meta.push(("android_sdk_version", MetaValue::Int(v)));
            if let Some(m) = self.sink.machines.get_mut(&machine) {
                m.android_sdk_version.get_or_insert(v);
            }
        }
        if let Some(v) = info.system_ram_bytes {
            meta.push(("system_ram_bytes", MetaValue::Int(v as i64)));
            meta.push((
                "system_ram_gb",
                MetaValue::Int((v.saturating_add(1 << 29) >> 30) as i64),
            ));
        }
        if let Some(v) = info.timezone_off_mins {
            meta.push(("timezone_off_mins", MetaValue::Int(i64::from(v))));
        }
        for (k, v) in meta {
            self.sink.metadata(k, machine, v);
        }
    }

    /// Profiler samples are not imported (Sextant has no stack tables), but their
    /// timestamps share the sequence's delta base with TrackEvent, so they must advance it.
    fn streaming_profile(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        profile: &protos::StreamingProfilePacket,
    ) {
        let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) else {
            return;
        };
        let mut invalid = 0;
        for &delta_us in &profile.timestamp_delta_us {
            if !matches!(seq.advance(delta_us), DeltaTs::Valid(_)) {
                invalid += 1;
            }
        }
        if invalid > 0 {
            self.sink
                .stat("streaming_profile_invalid_timestamp", machine, invalid);
        }
    }

    /// A trace that names no uuid gets one hashed from its first bytes, so the same file
    /// always has the same uuid.
    fn finish(&mut self, bytes: &[u8]) {
        self.flush_pending_track_event();
        let file = self.sink.current_file;
        let mut paths: Vec<(&'static str, (u64, u64))> = self.content.drain().collect();
        paths.sort_unstable();
        for (path, (size, count)) in paths {
            self.sink.proto_content.push(ProtoContent {
                file,
                path,
                annotation: NO_ARGS,
                size,
                count,
            });
        }
        let mut events: Vec<((StrId, StrId), (u64, u64))> = self.event_content.drain().collect();
        events.sort_unstable_by_key(|(_, (size, _))| std::cmp::Reverse(*size));
        for ((category, name), (size, count)) in events {
            let value = |s: StrId| {
                if s == NULL_STR {
                    ArgValue::Null
                } else {
                    ArgValue::Str(s)
                }
            };
            let annotation = [
                self.sink.arg("event.category", value(category)),
                self.sink.arg("event.name", value(name)),
            ];
            let annotation = self.sink.args.push(&annotation);
            self.sink.proto_content.push(ProtoContent {
                file,
                path: "TracePacket.track_event",
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
            let entry = self.content.entry("TracePacket.track_event").or_default();
            entry.0 += size;
            entry.1 += 1;
        }
    }

    /// Chrome's own metadata: `cr-<a, b, …>-<key>` per packet, and the background
    /// tracing scenario (kept base64-encoded, with its rule and scenario hashes).
    fn chrome_metadata(&mut self, machine: MachineId, m: &protos::ChromeMetadataPacket) {
        let letter = char::from(b'a' + (self.chrome_metadata_packets % 26) as u8);
        self.chrome_metadata_packets += 1;
        let key = |name: &str| format!("cr-{letter}-{name}");
        let mut meta: Vec<(String, MetaValue)> = Vec::new();
        if let Some(v) = m.chrome_version_code {
            meta.push((key("playstore_version_code"), MetaValue::Int(i64::from(v))));
        }
        if let Some(v) = &m.enabled_categories {
            meta.push((key("enabled_categories"), MetaValue::Str(v.clone())));
        }
        if !m.field_trial_hashes.is_empty() {
            let hashes: String = m
                .field_trial_hashes
                .iter()
                .map(|h| {
                    format!(
                        "{{ name: {}, group: {} }} ",
                        h.name.unwrap_or(0),
                        h.group.unwrap_or(0)
                    )
                })
                .collect();
            meta.push((key("field_trial_hashes"), MetaValue::Str(hashes)));
        }
        for (name, value) in [
            ("package-name", &m.app_package_name),
            ("product-version", &m.app_version),
            ("os-name", &m.os_name),
        ] {
            if let Some(v) = value {
                meta.push((key(name), MetaValue::Str(v.clone())));
            }
        }
        if let Some(v) = m.channel {
            meta.push((key("channel"), MetaValue::Int(i64::from(v))));
        }
        if let Some(raw) = &m.background_tracing_metadata {
            meta.push((
                "cr-background_tracing_metadata".to_string(),
                MetaValue::Str(base64(raw)),
            ));
            if let Ok(bg) = protos::BackgroundTracingMetadata::decode(raw.as_slice()) {
                if let Some(hash) = bg.triggered_rule.and_then(|r| r.name_hash) {
                    meta.push((
                        "cr-triggered_rule_name_hash".to_string(),
                        MetaValue::Int(i64::from(hash)),
                    ));
                }
                if let Some(hash) = bg.scenario_name_hash {
                    meta.push((
                        "cr-scenario_name_hash".to_string(),
                        MetaValue::Int(i64::from(hash)),
                    ));
                }
            }
        }
        for (k, v) in meta {
            self.sink.metadata(k, machine, v);
        }
    }

    /// One `cpu` row per cpu. Cpus with the same frequency table as the one before them are
    /// in its cluster; a new table starts the next cluster.
    fn cpu_info(
        &mut self,
        machine: MachineId,
        ts: Option<i64>,
        clock: ClockRef,
        info: &protos::CpuInfo,
    ) {
        /// Feature bits Trace Processor names.
        const FEATURES: [(u64, &str); 2] = [(1, "cpu_features.mte"), (2, "cpu_features.mte3")];
        let known = FEATURES.iter().fold(0, |all, f| all | f.0);
        let mut cluster = 0u32;
        let mut previous: Option<&[u32]> = None;
        for (index, cpu) in info.cpus.iter().enumerate() {
            if previous.is_some_and(|p| p != cpu.frequencies.as_slice()) {
                cluster += 1;
            }
            previous = Some(&cpu.frequencies);
            let mut args = Vec::new();
            let mut add =
                |sink: &mut Sink, key: &str, value: ArgValue| args.push(sink.arg(key, value));
            if let Some(arm) = &cpu.arm_identifier {
                for (key, value) in [
                    ("arm_cpu_implementer", arm.implementer),
                    ("arm_cpu_architecture", arm.architecture),
                    ("arm_cpu_variant", arm.variant),
                    ("arm_cpu_part", arm.part),
                    ("arm_cpu_revision", arm.revision),
                ] {
                    if let Some(v) = value {
                        add(self.sink, key, ArgValue::Int(i64::from(v)));
                    }
                }
            }
            if let Some(features) = cpu.features {
                add(
                    self.sink,
                    "cpu_features.raw_bitmap",
                    ArgValue::Int(features as i64),
                );
                for (bit, key) in FEATURES {
                    if features & bit != 0 {
                        add(self.sink, key, ArgValue::Bool(true));
                    }
                }
                if features & !known != 0 {
                    self.sink.stat("cpu_info_unknown_cpu_features", machine, 1);
                }
            }
            let args = self.sink.args.push(&args);
            let description = CpuDescription {
                machine,
                cpu: index as u32,
                cluster_id: cluster,
                processor: self.sink.intern_opt(cpu.processor.as_deref()),
                capacity: cpu.capacity,
                frequencies: cpu.frequencies.clone(),
                args,
            };
            let data = EventData::CpuInfo(Box::new(description));
            self.sink.push(ts.unwrap_or(0), clock, data);
        }
    }

    /// `rss_stat`: a process's memory counter changed. With an `mm_id` the event names the
    /// memory map, which belongs to the event's thread when `curr` is set and otherwise to
    /// whichever thread last reported it as its own.
    fn rss_stat(
        &mut self,
        origin: FtraceOrigin,
        ts: i64,
        clock: ClockRef,
        r: &protos::RssStatFtraceEvent,
    ) {
        /// The kernel's MM_* counters, by member index.
        const MEMBERS: [&str; 5] = [
            "mem.rss.file",
            "mem.rss.anon",
            "mem.swap",
            "mem.rss.shmem",
            "mem.unreclaimable",
        ];
        let machine = origin.machine;
        let Some(&name) = r.member.and_then(|m| MEMBERS.get(usize::try_from(m).ok()?)) else {
            self.sink.stat("rss_stat_unknown_keys", machine, 1);
            return;
        };
        let size = r.size.unwrap_or(0);
        if size < 0 {
            self.sink.stat("rss_stat_negative_size", machine, 1);
            return;
        }
        let tid = match r.mm_id {
            None => origin.pid,
            Some(mm) if r.curr.unwrap_or(0) != 0 => {
                self.mm_owners.insert((machine, mm), origin.pid);
                origin.pid
            }
            Some(mm) => match self.mm_owners.get(&(machine, mm)) {
                Some(&tid) => tid,
                None => {
                    self.sink
                        .stat("rss_stat_unknown_thread_for_mm_id", machine, 1);
                    return;
                }
            },
        };
        let thread = ThreadRef {
            machine,
            tid,
            pid: None,
        };
        self.thread_process_counter(thread, name, "process_memory", ts, clock, size as f64);
    }

    fn thread_process_counter(
        &mut self,
        thread: ThreadRef,
        name: &str,
        kind: &'static str,
        ts: i64,
        clock: ClockRef,
        value: f64,
    ) {
        let name = self.sink.intern(name);
        let track = self
            .sink
            .track(TrackKey::ThreadProcessCounter { thread, name, kind });
        let data = EventData::Counter {
            track,
            value: Real(value),
            args: NO_ARGS,
        };
        self.sink.push(ts, clock, data);
    }

    /// Begins (with a name) or ends (without) an interrupt slice on the cpu's track.
    fn cpu_slice(
        &mut self,
        origin: FtraceOrigin,
        ts: i64,
        clock: ClockRef,
        interrupt: Interrupt,
        name: Option<&str>,
        args: &[(&str, ArgValue)],
    ) {
        let (kind, track_name, category) = match interrupt {
            Interrupt::Hard => ("cpu_irq", "Irq Cpu", "irq"),
            Interrupt::Soft => ("cpu_softirq", "SoftIrq Cpu", "softirq"),
        };
        let track_name = self.sink.intern(&format!("{track_name} {}", origin.cpu));
        let track = self.sink.track(TrackKey::CpuSlices {
            machine: origin.machine,
            cpu: origin.cpu,
            name: track_name,
            kind,
        });
        let args: Vec<Arg> = args
            .iter()
            .map(|(key, value)| self.sink.arg(key, *value))
            .collect();
        let slice = SliceEvent {
            track,
            category: self.sink.intern(category),
            name: name.map_or(NULL_STR, |n| self.sink.intern(n)),
            args: self.sink.args.push(&args),
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        let data = match name {
            Some(_) => EventData::Begin(slice),
            None => EventData::End(slice),
        };
        self.sink.push(ts, clock, data);
    }

    /// The kernel ring buffer's own counters, read at the start and at the end of tracing,
    /// per cpu; at the end, the growth since the start (overruns are lost events).
    fn ftrace_stats(&mut self, machine: MachineId, s: &protos::FtraceStats) {
        use protos::ftrace_stats::Phase;
        /// Trace Processor's FTRACE_STATUS_ABI_ZERO_DATA_LENGTH.
        const ZERO_DATA_LENGTH: i32 = 12;
        let end = match s.phase() {
            Phase::StartOfTrace => false,
            Phase::EndOfTrace => true,
            Phase::Unspecified => {
                self.sink.stat("ftrace_stats_unknown_phase", machine, 1);
                return;
            }
        };
        for c in &s.cpu_stats {
            let Ok(cpu) = i64::try_from(c.cpu.unwrap_or(0)) else {
                continue;
            };
            let seconds_to_ns = |v: Option<f64>| v.map(|s| (s * 1e9) as u64);
            let values = [
                ("entries", c.entries),
                ("overrun", c.overrun),
                ("commit_overrun", c.commit_overrun),
                ("bytes", c.bytes_read),
                ("oldest_event_ts", seconds_to_ns(c.oldest_event_ts)),
                ("now_ts", seconds_to_ns(c.now_ts)),
                ("dropped_events", c.dropped_events),
                ("read_events", c.read_events),
            ];
            for (what, value) in values {
                let Some(value) = value else { continue };
                let Some(name) = stats::ftrace_cpu_stat(what, end) else {
                    continue;
                };
                let value = value as i64;
                self.sink.set_stat(name, Some(cpu), machine, value);
                if !end {
                    continue;
                }
                let begin = stats::ftrace_cpu_stat(what, false).and_then(|b| {
                    self.sink
                        .stats
                        .get(&StatKey {
                            name: b,
                            idx: Some(cpu),
                            machine,
                            file: self.sink.current_file,
                        })
                        .copied()
                });
                if let (Some(begin), Some(delta)) = (begin, stats::ftrace_cpu_delta(what)) {
                    self.sink
                        .set_stat(delta, Some(cpu), machine, value.saturating_sub(begin));
                }
            }
        }
        for &status in &s.ftrace_parse_errors {
            let name = if status == ZERO_DATA_LENGTH {
                "ftrace_abi_errors_skipped_zero_data_length"
            } else {
                "ftrace_parse_errors"
            };
            self.sink.stat(name, machine, 1);
        }
    }

    fn trace_stats(&mut self, machine: MachineId, s: &protos::TraceStats) {
        let set = |sink: &mut Sink, name: &'static str, idx: Option<i64>, v: Option<u64>| {
            if let Some(v) = v {
                sink.set_stat(name, idx, machine, v as i64);
            }
        };
        for (i, b) in s.buffer_stats.iter().enumerate() {
            let idx = Some(i as i64);
            set(self.sink, "traced_buf_bytes_written", idx, b.bytes_written);
            set(
                self.sink,
                "traced_buf_chunks_discarded",
                idx,
                b.chunks_discarded,
            );
            set(
                self.sink,
                "traced_buf_chunks_overwritten",
                idx,
                b.chunks_overwritten,
            );
            set(
                self.sink,
                "traced_buf_patches_failed",
                idx,
                b.patches_failed,
            );
            set(
                self.sink,
                "traced_buf_abi_violations",
                idx,
                b.abi_violations,
            );
            set(
                self.sink,
                "traced_buf_trace_writer_packet_loss",
                idx,
                b.trace_writer_packet_loss,
            );
        }
        set(
            self.sink,
            "traced_producers_connected",
            None,
            s.producers_connected.map(u64::from),
        );
        set(self.sink, "traced_producers_seen", None, s.producers_seen);
        set(
            self.sink,
            "traced_data_sources_registered",
            None,
            s.data_sources_registered.map(u64::from),
        );
        set(
            self.sink,
            "traced_data_sources_seen",
            None,
            s.data_sources_seen,
        );
        set(
            self.sink,
            "traced_tracing_sessions",
            None,
            s.tracing_sessions.map(u64::from),
        );
        set(
            self.sink,
            "traced_total_buffers",
            None,
            s.total_buffers.map(u64::from),
        );
        set(
            self.sink,
            "traced_chunks_discarded",
            None,
            s.chunks_discarded,
        );
        set(
            self.sink,
            "traced_patches_discarded",
            None,
            s.patches_discarded,
        );
        set(
            self.sink,
            "traced_flushes_requested",
            None,
            s.flushes_requested,
        );
        set(
            self.sink,
            "traced_flushes_succeeded",
            None,
            s.flushes_succeeded,
        );
        set(self.sink, "traced_flushes_failed", None, s.flushes_failed);
        if let Some(f) = &s.filter_stats {
            set(self.sink, "filter_input_packets", None, f.input_packets);
            set(self.sink, "filter_input_bytes", None, f.input_bytes);
            set(self.sink, "filter_output_bytes", None, f.output_bytes);
            set(self.sink, "filter_errors", None, f.errors);
            set(self.sink, "filter_time_taken_ns", None, f.time_taken_ns);
            for (i, v) in f.bytes_discarded_per_buffer.iter().enumerate() {
                set(
                    self.sink,
                    "traced_buf_bytes_filtered_out",
                    Some(i as i64),
                    Some(*v),
                );
            }
        }
    }

    // ----- TrackEvent --------------------------------------------------------------------

    fn track_event(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        packet_ts: Option<i64>,
        packet_clock: ClockRef,
        ev: protos::TrackEvent,
    ) {
        let key = (machine, seq_id);
        let Some(seq) = self.sequences.get_mut(&key) else {
            return;
        };
        // Timestamp: delta or absolute µs on MONOTONIC, else the packet's.
        let (ts, clock) = match ev.timestamp {
            Some(track_event::Timestamp::TimestampDeltaUs(d)) => match seq.advance(d) {
                DeltaTs::Valid(ns) => (ns, None),
                DeltaTs::Invalid => {
                    self.sink.stat("track_event_invalid_timestamp", machine, 1);
                    return;
                }
                DeltaTs::NoBase => {
                    self.sink.stat("track_event_tokenizer_errors", machine, 1);
                    return;
                }
            },
            Some(track_event::Timestamp::TimestampAbsoluteUs(v)) if v != 0 => {
                match v.checked_mul(1000) {
                    Some(ns) => (ns, None),
                    None => {
                        self.sink.stat("track_event_invalid_timestamp", machine, 1);
                        return;
                    }
                }
            }
            _ => match packet_ts {
                Some(t) => (t, Some(packet_clock)),
                None => {
                    self.sink.stat("track_event_tokenizer_errors", machine, 1);
                    return;
                }
            },
        };
        let clock = match clock {
            Some(c) => c,
            None => self.sink.clock(ClockDomain {
                machine,
                clock_id: clocks::MONOTONIC,
                sequence: KEEP_RAW_ON_FAILURE,
                file: self.ctx.file,
            }),
        };
        if ts < 0 {
            self.sink.stat("track_event_invalid_timestamp", machine, 1);
            return;
        }
        let Some(seq) = self.sequences.get_mut(&key) else {
            return;
        };
        let thread_ts = match ev.thread_time {
            Some(track_event::ThreadTime::ThreadTimeDeltaUs(d)) => match seq.ref_thread_time_us {
                Some(base) => {
                    let v = base.saturating_add(d);
                    seq.ref_thread_time_us = Some(v);
                    v.saturating_mul(1000)
                }
                None => NO_TS,
            },
            Some(track_event::ThreadTime::ThreadTimeAbsoluteUs(v)) => v.saturating_mul(1000),
            None => NO_TS,
        };

        // Category: interned ids in order, then strings, joined by ','.
        let mut missing_iid = false;
        let category =
            if ev.category_iids.len() + ev.categories.len() == 1 && ev.categories.is_empty() {
                let iid = ev.category_iids[0];
                match seq.categories.get(&iid) {
                    Some(&c) => c,
                    None => {
                        missing_iid = true;
                        self.sink.intern(&format!("unknown({iid})"))
                    }
                }
            } else if ev.category_iids.is_empty() && ev.categories.len() == 1 {
                self.sink.intern_nonempty(&ev.categories[0])
            } else if ev.category_iids.is_empty() && ev.categories.is_empty() {
                NULL_STR
            } else {
                let mut parts: Vec<String> = Vec::new();
                for iid in &ev.category_iids {
                    match seq
                        .categories
                        .get(iid)
                        .and_then(|&c| self.sink.strings.get(c))
                    {
                        Some(s) => parts.push(s.to_string()),
                        None => missing_iid = true,
                    }
                }
                parts.extend(ev.categories.iter().cloned());
                self.sink.intern_nonempty(&parts.join(","))
            };
        let name = match &ev.name_field {
            Some(track_event::NameField::NameIid(iid)) if *iid != 0 => match seq.names.get(iid) {
                Some(&n) => n,
                None => {
                    missing_iid = true;
                    NULL_STR
                }
            },
            Some(track_event::NameField::Name(n)) => self.sink.intern(n),
            _ => NULL_STR,
        };
        if missing_iid {
            self.sink.stat("interned_data_tokenizer_errors", machine, 1);
        }
        if let Some(size) = self.pending_track_event.take() {
            let entry = self.event_content.entry((category, name)).or_default();
            entry.0 += size;
            entry.1 += 1;
        }
        let Some(seq) = self.sequences.get(&key) else {
            return;
        };
        let uuid = ev.track_uuid.or(seq.default_track).unwrap_or(0);
        // uuid 0 means the sequence's thread unless the event names track 0 explicitly and
        // has a type; legacy pid/tid overrides force a thread.
        let overrides = ev
            .legacy_event
            .as_ref()
            .and_then(|l| Some((l.pid_override?, l.tid_override?)));
        let seq_thread = match overrides {
            Some((pid, tid)) => Some(ThreadRef {
                machine,
                tid: i64::from(tid),
                pid: Some(i64::from(pid)),
            }),
            None if ev.track_uuid.is_none() || ev.r#type.is_none() => seq.thread,
            None => None,
        };
        let ev_type = ev.r#type.unwrap_or(0);

        // Extra counter values share the event's timestamp.
        let extra_int_uuids = if ev.extra_counter_track_uuids.is_empty() {
            seq.default_extra_counters.clone()
        } else {
            ev.extra_counter_track_uuids.clone()
        };
        let extra_double_uuids = if ev.extra_double_counter_track_uuids.is_empty() {
            seq.default_extra_double_counters.clone()
        } else {
            ev.extra_double_counter_track_uuids.clone()
        };
        for (i, v) in ev.extra_counter_values.iter().enumerate() {
            match extra_int_uuids.get(i) {
                Some(&u) => self.counter(machine, seq_id, ts, clock, u, *v as f64, true),
                None => self.sink.stat("track_event_parser_errors", machine, 1),
            }
        }
        for (i, v) in ev.extra_double_counter_values.iter().enumerate() {
            match extra_double_uuids.get(i) {
                Some(&u) => self.counter(machine, seq_id, ts, clock, u, *v, false),
                None => self.sink.stat("track_event_parser_errors", machine, 1),
            }
        }

        if ev_type == track_event::Type::Counter as i32 {
            let value = match ev.counter_value_field {
                Some(track_event::CounterValueField::CounterValue(v)) => (v as f64, true),
                Some(track_event::CounterValueField::DoubleCounterValue(v)) => (v, false),
                None => {
                    self.sink.stat("track_event_parser_errors", machine, 1);
                    return;
                }
            };
            if uuid == 0 {
                self.sink.stat("track_event_parser_errors", machine, 1);
                return;
            }
            self.counter(machine, seq_id, ts, clock, uuid, value.0, value.1);
            return;
        }

        // Thread time and instruction counts on the event also feed per-thread counters.
        let instructions = match ev.thread_instruction_count {
            Some(track_event::ThreadInstructionCount::ThreadInstructionCountAbsolute(v)) => Some(v),
            _ => None,
        };
        if thread_ts != NO_TS || instructions.is_some() {
            let thread = seq_thread.or_else(|| {
                self.sink
                    .descriptors
                    .get(&(machine, uuid))
                    .and_then(|d| d.thread)
            });
            if let Some(thread) = thread {
                let counter = |sink: &mut Sink, name: &str, kind: &'static str, v: i64| {
                    let name = sink.intern(name);
                    let track = sink.track(TrackKey::ThreadCounter { thread, name, kind });
                    sink.push(
                        ts,
                        clock,
                        EventData::Counter {
                            track,
                            value: Real(v as f64),
                            args: NO_ARGS,
                        },
                    );
                };
                if thread_ts != NO_TS {
                    counter(self.sink, "thread_time", "thread_time", thread_ts);
                }
                if let Some(v) = instructions {
                    counter(
                        self.sink,
                        "thread_instruction_count",
                        "thread_instructions",
                        v,
                    );
                }
            }
        }
        let track = self.sink.track(TrackKey::Descriptor {
            machine,
            uuid,
            seq_thread: if uuid == 0 || overrides.is_some() {
                seq_thread
            } else {
                None
            },
        });
        let args = self.debug_annotations(machine, seq_id, &ev);
        let mut flow_ops: Vec<FlowOp> = Vec::new();
        for id in ev.flow_ids.iter().chain(&ev.flow_ids_old) {
            flow_ops.push(FlowOp::Id(*id));
        }
        for id in ev
            .terminating_flow_ids
            .iter()
            .chain(&ev.terminating_flow_ids_old)
        {
            flow_ops.push(FlowOp::Terminating(*id));
        }
        if let Some(legacy) = &ev.legacy_event {
            if let Some(bind) = legacy.bind_id {
                match legacy.flow_direction.unwrap_or(0) {
                    1 => flow_ops.push(FlowOp::V2In(bind)),
                    2 => flow_ops.push(FlowOp::V2Out(bind)),
                    3 => flow_ops.push(FlowOp::V2Step(bind)),
                    _ => self.sink.stat("flow_without_direction", machine, 1),
                }
            }
        }
        let flows = self.sink.flows(&flow_ops);
        let slice = SliceEvent {
            track,
            category,
            name,
            args,
            thread_ts,
            flows,
        };
        let data = match ev_type {
            t if t == track_event::Type::State as i32 => {
                // A pid/tid override forces the legacy thread-track fallback, which
                // cannot hold states.
                let forced_thread = ev
                    .legacy_event
                    .as_ref()
                    .is_some_and(|l| l.pid_override.is_some() || l.tid_override.is_some());
                // Track 0 falls back to the sequence's thread; a described uuid (the event's
                // or the sequence default's) is the track itself.
                let on_state_track = (uuid != 0 || seq_thread.is_none())
                    && !forced_thread
                    && self
                        .sink
                        .descriptors
                        .get(&(machine, uuid))
                        .is_some_and(|d| d.is_state);
                if !on_state_track {
                    self.sink.stat("track_event_parser_errors", machine, 1);
                    return;
                }
                EventData::State {
                    track: slice.track,
                    category: slice.category,
                    value: slice.name,
                    args: slice.args,
                }
            }
            t if t == track_event::Type::SliceBegin as i32 => EventData::Begin(slice),
            t if t == track_event::Type::SliceEnd as i32 => EventData::End(slice),
            t if t == track_event::Type::Instant as i32 => EventData::Complete {
                slice,
                dur: 0,
                thread_dur: NO_TS,
            },
            _ => match ev.legacy_event.as_ref().and_then(|l| l.phase) {
                Some(phase) => match self.legacy_phase(phase as u8, slice, &ev, seq_thread) {
                    Some(d) => d,
                    None => return,
                },
                None => {
                    self.sink.stat("track_event_parser_errors", machine, 1);
                    return;
                }
            },
        };
        self.sink.push(ts, clock, data);
    }

    /// Legacy (JSON-style) phases carried in `TrackEvent.legacy_event`.
    fn legacy_phase(
        &mut self,
        phase: u8,
        mut slice: SliceEvent,
        ev: &protos::TrackEvent,
        seq_thread: Option<ThreadRef>,
    ) -> Option<EventData> {
        let legacy = ev.legacy_event.as_ref()?;
        match phase {
            b'B' => Some(EventData::Begin(slice)),
            b'E' => Some(EventData::End(slice)),
            b'X' => Some(EventData::Complete {
                slice,
                dur: legacy.duration_us.unwrap_or(0).saturating_mul(1000),
                thread_dur: legacy
                    .thread_duration_us
                    .map_or(NO_TS, |d| d.saturating_mul(1000)),
            }),
            b's' | b't' | b'f' => {
                let Some(track_event::legacy_event::Id::UnscopedId(id)) = legacy.id else {
                    self.sink.stat("flow_invalid_id", self.ctx.machine, 1);
                    return None;
                };
                let phase = match phase {
                    b's' => FlowV1Phase::Start,
                    b't' => FlowV1Phase::Step,
                    _ => FlowV1Phase::End,
                };
                Some(EventData::FlowV1(FlowV1Event {
                    track: slice.track,
                    id,
                    category: slice.category,
                    name: slice.name,
                    phase,
                    bind_enclosing: legacy.bind_to_enclosing(),
                }))
            }
            b'b' | b'e' | b'n' | b'S' | b'T' | b'p' | b'F' => {
                self.legacy_async(phase, slice, legacy, seq_thread)
            }
            b'i' | b'I' | b'R' => {
                if let (Some(scope), Some(t)) = (legacy.instant_event_scope, seq_thread) {
                    match scope {
                        1 => {
                            slice.track = self.sink.track(TrackKey::GlobalSlices {
                                machine: t.machine,
                                kind: "legacy_chrome_global_instants",
                                name: NULL_STR,
                            })
                        }
                        2 => {
                            if let Some(pid) = t.pid {
                                slice.track = self.sink.track(TrackKey::ProcessSlices {
                                    process: ProcessRef {
                                        machine: t.machine,
                                        pid,
                                    },
                                    kind: "chrome_process_instant",
                                    name: NULL_STR,
                                })
                            }
                        }
                        _ => {}
                    }
                }
                Some(EventData::Complete {
                    slice,
                    dur: 0,
                    thread_dur: NO_TS,
                })
            }
            _ => None,
        }
    }

    /// Legacy async events (`b/e/n`, `S/T/p/F`): slices on async tracks keyed by the event's
    /// id, global unless the id is `local_id` (scoped to the writing process).
    fn legacy_async(
        &mut self,
        phase: u8,
        mut slice: SliceEvent,
        legacy: &track_event::LegacyEvent,
        seq_thread: Option<ThreadRef>,
    ) -> Option<EventData> {
        use track_event::legacy_event::Id;
        let machine = seq_thread.map_or(self.ctx.machine, |t| t.machine);
        let (cookie, process) = match legacy.id {
            Some(Id::UnscopedId(id)) | Some(Id::GlobalId(id)) => (id, None),
            Some(Id::LocalId(id)) => {
                let pid = seq_thread.and_then(|t| t.pid);
                match pid {
                    Some(pid) => (id, Some(ProcessRef { machine, pid })),
                    None => {
                        self.sink.stat("track_event_parser_errors", machine, 1);
                        return None;
                    }
                }
            }
            None => {
                self.sink.stat("track_event_parser_errors", machine, 1);
                return None;
            }
        };
        let scope = match (phase, legacy.id_scope.as_deref()) {
            (_, Some(id_scope)) => {
                let cat = self
                    .sink
                    .strings
                    .get(slice.category)
                    .unwrap_or("")
                    .to_string();
                self.sink.intern(&format!("{cat}:{id_scope}"))
            }
            (b'b' | b'e' | b'n', None) => slice.category,
            _ => slice.name,
        };
        let name = *self
            .async_names
            .entry((machine, process, cookie))
            .or_insert(slice.name);
        let set = AsyncSet {
            kind: if process.is_some() {
                "legacy_async_process_slice"
            } else {
                "legacy_async_global_slice"
            },
            machine,
            process,
            name,
            scope,
        };
        let creator = seq_thread.and_then(|t| {
            Some(ProcessRef {
                machine,
                pid: t.pid?,
            })
        });
        self.sink
            .legacy_async
            .entry(set)
            .or_insert(LegacyAsyncInfo {
                source_scope: scope,
                process_scoped: process.is_some(),
                creator,
            });
        slice.track = self.sink.track(TrackKey::AsyncCookie { set, cookie });
        if matches!(phase, b'e' | b'F') {
            // An end only merges its annotations into the slice it closes.
            return Some(EventData::End(slice));
        }
        // Args in Trace Processor's order: source id, annotations, thread, phase.
        let mut args: Vec<Arg> = Vec::new();
        let source_id = self.sink.intern("legacy_trace_source_id");
        args.push(Arg {
            flat_key: source_id,
            key: source_id,
            value: ArgValue::Int(cookie as i64),
        });
        args.extend_from_slice(self.sink.args.get(slice.args));
        if let Some(t) = seq_thread {
            let key = self.sink.intern("legacy_event.passthrough_utid");
            let thread = self.sink.thread_refs.intern(t);
            args.push(Arg {
                flat_key: key,
                key,
                value: ArgValue::ThreadUtid(thread),
            });
        }
        if matches!(phase, b'S' | b'T' | b'p') {
            let key = self.sink.intern("legacy_event.phase");
            let value = self.sink.intern(&(phase as char).to_string());
            args.push(Arg {
                flat_key: key,
                key,
                value: ArgValue::Str(value),
            });
        }
        slice.args = self.sink.args.push(&args);
        Some(match phase {
            b'b' | b'S' => EventData::Begin(slice),
            _ => EventData::Complete {
                slice,
                dur: 0,
                thread_dur: NO_TS,
            },
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn counter(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        uuid: u64,
        raw: f64,
        _integer: bool,
    ) {
        let Some(desc) = self.sink.descriptors.get(&(machine, uuid)) else {
            self.sink.stat("track_event_parser_errors", machine, 1);
            return;
        };
        let Some(info) = desc.counter else {
            self.sink.stat("track_event_parser_errors", machine, 1);
            return;
        };
        let mut value = raw;
        if info.unit_multiplier > 0 {
            value *= info.unit_multiplier as f64;
        }
        if info.is_incremental {
            if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
                let running = seq.counter_values.entry(uuid).or_insert(0.0);
                *running += value;
                value = *running;
            }
        }
        let track = self.sink.track(TrackKey::Descriptor {
            machine,
            uuid,
            seq_thread: None,
        });
        self.sink.push(
            ts,
            clock,
            EventData::Counter {
                track,
                value: Real(value),
                args: NO_ARGS,
            },
        );
    }

    fn debug_annotations(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ev: &protos::TrackEvent,
    ) -> ArgsRef {
        if ev.debug_annotations.is_empty() && ev.source_location_field.is_none() {
            return NO_ARGS;
        }
        let mut args = std::mem::take(&mut self.args);
        args.clear();
        if let Some(loc) = &ev.source_location_field {
            let resolved = match loc {
                track_event::SourceLocationField::SourceLocation(l) => Some((
                    self.sink.intern_opt(l.file_name.as_deref()),
                    self.sink.intern_opt(l.function_name.as_deref()),
                    l.line_number,
                )),
                track_event::SourceLocationField::SourceLocationIid(iid) => self
                    .sequences
                    .get(&(machine, seq_id))
                    .and_then(|s| s.source_locations.get(iid).copied()),
            };
            match resolved {
                Some((file, func, line)) => {
                    for (k, v) in [("source.file_name", file), ("source.function_name", func)] {
                        if v != NULL_STR {
                            let k = self.sink.intern(k);
                            args.add(k, k, ArgValue::Str(v));
                        }
                    }
                    if let Some(line) = line {
                        let k = self.sink.intern("source.line_number");
                        args.add(k, k, ArgValue::Int(i64::from(line)));
                    }
                }
                None => self.sink.stat("track_event_parser_errors", machine, 1),
            }
        }
        for ann in &ev.debug_annotations {
            let name = match &ann.name_field {
                Some(debug_annotation::NameField::Name(n)) => Some(n.clone()),
                Some(debug_annotation::NameField::NameIid(iid)) => self
                    .sequences
                    .get(&(machine, seq_id))
                    .and_then(|s| s.annotation_names.get(iid).copied())
                    .and_then(|id| self.sink.strings.get(id).map(str::to_string)),
                None => None,
            };
            let Some(name) = name else {
                self.sink.stat("track_event_parser_errors", machine, 1);
                continue;
            };
            let clean: String = name
                .chars()
                .map(|c| if matches!(c, '.' | '[' | ']') { '_' } else { c })
                .collect();
            let key = format!("debug.{clean}");
            self.annotation(machine, seq_id, &mut args, &key, &key, ann, 0);
        }
        let id = self.sink.args(&mut args);
        self.args = args;
        id
    }

    #[allow(clippy::too_many_arguments)]
    fn annotation(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        args: &mut ArgsBuilder,
        flat: &str,
        key: &str,
        ann: &protos::DebugAnnotation,
        depth: usize,
    ) {
        if depth > 32 {
            return;
        }
        if !ann.dict_entries.is_empty() {
            for e in &ann.dict_entries {
                let n = match &e.name_field {
                    Some(debug_annotation::NameField::Name(n)) => n.clone(),
                    _ => continue,
                };
                self.annotation(
                    machine,
                    seq_id,
                    args,
                    &format!("{flat}.{n}"),
                    &format!("{key}.{n}"),
                    e,
                    depth + 1,
                );
            }
            return;
        }
        if !ann.array_values.is_empty() {
            for (i, e) in ann.array_values.iter().enumerate() {
                self.annotation(
                    machine,
                    seq_id,
                    args,
                    flat,
                    &format!("{key}[{i}]"),
                    e,
                    depth + 1,
                );
            }
            return;
        }
        let value = match &ann.value {
            Some(debug_annotation::Value::BoolValue(v)) => ArgValue::Bool(*v),
            Some(debug_annotation::Value::UintValue(v)) => ArgValue::Uint(*v),
            Some(debug_annotation::Value::IntValue(v)) => ArgValue::Int(*v),
            Some(debug_annotation::Value::DoubleValue(v)) => ArgValue::Real(*v),
            Some(debug_annotation::Value::StringValue(s)) => ArgValue::Str(self.sink.intern(s)),
            Some(debug_annotation::Value::StringValueIid(iid)) => {
                match self
                    .sequences
                    .get(&(machine, seq_id))
                    .and_then(|s| s.interned_strings.get(iid).copied())
                {
                    Some(s) => ArgValue::Str(s),
                    None => {
                        self.sink.stat("track_event_parser_errors", machine, 1);
                        return;
                    }
                }
            }
            Some(debug_annotation::Value::PointerValue(v)) => ArgValue::Pointer(*v),
            Some(debug_annotation::Value::LegacyJsonValue(s)) => {
                match serde_json::from_str::<serde_json::Value>(s) {
                    Ok(v) => {
                        self.json_value(args, flat, key, &v, depth);
                        return;
                    }
                    Err(_) => ArgValue::Json(self.sink.intern(s)),
                }
            }
            Some(debug_annotation::Value::NestedValue(n)) => {
                self.nested_value(args, flat, key, n, depth);
                return;
            }
            None => return,
        };
        let (f, k) = (self.sink.intern(flat), self.sink.intern(key));
        args.add(f, k, value);
    }

    /// Expands a legacy JSON annotation like Chrome JSON args: dicts join keys with `.`,
    /// arrays index the key; null and empty containers give nothing.
    fn json_value(
        &mut self,
        args: &mut ArgsBuilder,
        flat: &str,
        key: &str,
        v: &serde_json::Value,
        depth: usize,
    ) {
        use serde_json::Value as J;
        if depth > 32 {
            return;
        }
        let value = match v {
            J::Object(map) => {
                for (k, v) in map {
                    self.json_value(
                        args,
                        &format!("{flat}.{k}"),
                        &format!("{key}.{k}"),
                        v,
                        depth + 1,
                    );
                }
                return;
            }
            J::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    self.json_value(args, flat, &format!("{key}[{i}]"), v, depth + 1);
                }
                return;
            }
            J::Null => return,
            J::Bool(b) => ArgValue::Bool(*b),
            J::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => ArgValue::Int(i),
                (None, Some(u)) => ArgValue::Uint(u),
                _ => ArgValue::Real(n.as_f64().unwrap_or(0.0)),
            },
            J::String(s) => ArgValue::Str(self.sink.intern(s)),
        };
        let (f, k) = (self.sink.intern(flat), self.sink.intern(key));
        args.add(f, k, value);
    }

    fn nested_value(
        &mut self,
        args: &mut ArgsBuilder,
        flat: &str,
        key: &str,
        n: &debug_annotation::NestedValue,
        depth: usize,
    ) {
        if depth > 32 {
            return;
        }
        match n.nested_type.unwrap_or(0) {
            1 => {
                for (k, v) in n.dict_keys.iter().zip(&n.dict_values) {
                    self.nested_value(
                        args,
                        &format!("{flat}.{k}"),
                        &format!("{key}.{k}"),
                        v,
                        depth + 1,
                    );
                }
            }
            2 => {
                for (i, v) in n.array_values.iter().enumerate() {
                    self.nested_value(args, flat, &format!("{key}[{i}]"), v, depth + 1);
                }
            }
            _ => {
                let value = if let Some(v) = n.int_value {
                    ArgValue::Int(v)
                } else if let Some(v) = n.double_value {
                    ArgValue::Real(v)
                } else if let Some(v) = n.bool_value {
                    ArgValue::Bool(v)
                } else if let Some(s) = &n.string_value {
                    ArgValue::Str(self.sink.intern(s))
                } else {
                    return;
                };
                let (f, k) = (self.sink.intern(flat), self.sink.intern(key));
                args.add(f, k, value);
            }
        }
    }

    // ----- ftrace ------------------------------------------------------------------------

    fn ftrace_bundle(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        bundle: protos::FtraceEventBundle,
        packet: &[u8],
    ) {
        let mut raw_events = ftrace_raw::bundle_events(packet);
        let cpu = bundle.cpu.unwrap_or(0);
        // Raw rows need each event's bytes; where the packet's bytes do not line up with
        // its decoded events (repeated bundles, groups), the bundle gets none, counted.
        if raw_events.len() != bundle.event.len() {
            raw_events.clear();
            let missing = bundle
                .event
                .iter()
                .filter(|e| !matches!(e.event, Some(ftrace_event::Event::SchedSwitch(_))))
                .count() as i64;
            self.sink.stat("ftrace_event_unknown", machine, missing);
        }
        let clock_id = match bundle.ftrace_clock.unwrap_or(0) {
            4 => clocks::MONOTONIC_RAW,
            _ => clocks::BOOTTIME,
        };
        let clock = self.sink.builtin_clock(machine, clock_id);
        // Trace Processor sorts each cpu's ftrace events in a queue of its own.
        let cpu_range = if self.ctx.machine == machine {
            0
        } else {
            machine + 1
        };
        let queue = 1 + cpu_range.saturating_mul(4096).saturating_add(cpu.min(4095));
        self.sink.set_queue(queue);
        for (i, ev) in bundle.event.into_iter().enumerate() {
            let ts = ev.timestamp.unwrap_or(0) as i64;
            let pid = i64::from(ev.pid.unwrap_or(0));
            // Every event names the thread it ran on, whether or not Sextant reads the
            // event itself (Trace Processor records them all in its raw table).
            let names_its_thread = matches!(
                ev.event,
                Some(
                    ftrace_event::Event::SchedSwitch(_)
                        | ftrace_event::Event::SchedWaking(_)
                        | ftrace_event::Event::Print(_)
                        | ftrace_event::Event::TaskNewtask(_)
                )
            );
            if !names_its_thread {
                let thread = ThreadRef {
                    machine,
                    tid: pid,
                    pid: None,
                };
                self.sink.push(ts, clock, EventData::Thread(thread));
            }
            let origin = FtraceOrigin {
                machine,
                seq_id,
                cpu,
                pid,
                common_flags: ev.common_flags,
            };
            // A kind Sextant does not read still gets its raw row.
            let Some(event) = ev.event else {
                if let Some(raw) = raw_events.get(i) {
                    self.raw_ftrace_event(origin, ts, clock, raw);
                }
                continue;
            };
            if let ftrace_event::Event::SchedSwitch(s) = &event {
                self.sched_switch(origin, ts, clock, s);
                continue;
            }
            self.ftrace_event(origin, ts, clock, event);
            if let Some(raw) = raw_events.get(i) {
                self.raw_ftrace_event(origin, ts, clock, raw);
            }
        }
        // Every cpu's data is complete from the latest of these on (Trace Processor keeps it
        // as metadata).
        if let Some(last_read) = bundle.last_read_event_timestamp {
            let last_read = last_read as i64;
            if self
                .latest_ftrace_start
                .get(&machine)
                .is_none_or(|&t| t < last_read)
            {
                self.latest_ftrace_start.insert(machine, last_read);
                self.sink.metadata(
                    "ftrace_latest_data_start_ns",
                    machine,
                    MetaValue::Int(last_read),
                );
            }
        }
        if let Some(compact) = bundle.compact_sched {
            self.compact_sched(machine, cpu, clock, &compact);
        }
        self.sink.set_queue(0);
    }

    fn ftrace_event(
        &mut self,
        origin: FtraceOrigin,
        ts: i64,
        clock: ClockRef,
        event: ftrace_event::Event,
    ) {
        let FtraceOrigin {
            machine, cpu, pid, ..
        } = origin;
        use ftrace_event::Event as E;
        match event {
            // `ftrace_bundle` reads it (with its raw row) through `sched_switch`.
            E::SchedSwitch(_) => {}
            E::SchedWaking(w) => {
                let data = EventData::SchedWaking(SchedWaking {
                    machine,
                    cpu,
                    tid: i64::from(w.pid.unwrap_or(0)),
                    comm: self.sink.intern_opt(w.comm.as_deref()),
                    waker_tid: Some(pid),
                    irq_context: origin.common_flags.map(|f| f & IRQ_FLAGS != 0),
                });
                self.sink.push(ts, clock, data);
            }
            E::SchedBlockedReason(b) => {
                let function = b
                    .caller
                    .and_then(|iid| {
                        let seq = self.sequences.get(&(machine, origin.seq_id))?;
                        seq.kernel_symbols.get(&iid).copied()
                    })
                    .unwrap_or(NULL_STR);
                let data = EventData::BlockedReason {
                    thread: ThreadRef {
                        machine,
                        tid: i64::from(b.pid.unwrap_or(0)),
                        pid: None,
                    },
                    io_wait: b.io_wait.map(|v| v != 0),
                    function,
                };
                self.sink.push(ts, clock, data);
            }
            E::SysEnter(e) => {
                // Syscalls take six arguments: their keys are interned by address.
                const KEYS: [&str; 6] = [
                    "args[0]", "args[1]", "args[2]", "args[3]", "args[4]", "args[5]",
                ];
                let flat_key = self.sink.intern_static("args");
                let args: Vec<Arg> = e
                    .args
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| Arg {
                        flat_key,
                        key: match KEYS.get(i) {
                            Some(key) => self.sink.intern_static(key),
                            None => self.sink.intern(&format!("args[{i}]")),
                        },
                        value: ArgValue::Uint(v),
                    })
                    .collect();
                let data = EventData::Syscall {
                    track: self.sink.thread_track(machine, pid, None),
                    machine,
                    number: e.id.unwrap_or(0),
                    args: self.sink.args.push(&args),
                    enter: true,
                };
                self.sink.push(ts, clock, data);
            }
            E::SysExit(e) => {
                let ret = self
                    .sink
                    .static_arg("ret", ArgValue::Int(e.ret.unwrap_or(0)));
                let data = EventData::Syscall {
                    track: self.sink.thread_track(machine, pid, None),
                    machine,
                    number: e.id.unwrap_or(0),
                    args: self.sink.args.push(&[ret]),
                    enter: false,
                };
                self.sink.push(ts, clock, data);
            }
            E::Print(p) => {
                if let Some(buf) = p.buf {
                    atrace::parse_marker(self.sink, clock, ts, machine, pid, buf.as_bytes());
                }
            }
            // Drivers' markers carry the atrace fields separately: rebuild the marker text.
            E::TracingMarkWrite(m) => {
                let ty = if m.trace_begin.unwrap_or(0) != 0 {
                    b'B'
                } else {
                    b'E'
                };
                let marker = KernelMarker::new(ty, m.pid, m.trace_name, None);
                self.kernel_marker((machine, ts, clock, pid), marker);
            }
            E::SdeTracingMarkWrite(m) => {
                let ty = match m.trace_type.unwrap_or(0) {
                    0 if m.trace_begin.unwrap_or(0) != 0 => b'B',
                    0 => b'E',
                    t => t as u8,
                };
                let marker = KernelMarker::new(ty, m.pid, m.trace_name, m.value);
                self.kernel_marker((machine, ts, clock, pid), marker);
            }
            E::DpuTracingMarkWrite(m) => {
                let ty = m.r#type.unwrap_or(0) as u8;
                let marker = KernelMarker::new(ty, m.pid, m.name.or(m.trace_name), m.value);
                self.kernel_marker((machine, ts, clock, pid), marker);
            }
            E::G2dTracingMarkWrite(m) => {
                let marker = KernelMarker::new(m.r#type.unwrap_or(0) as u8, m.pid, m.name, m.value);
                self.kernel_marker((machine, ts, clock, pid), marker);
            }
            E::MaliTracingMarkWrite(m) => {
                let marker = KernelMarker::new(m.r#type.unwrap_or(0) as u8, m.pid, m.name, m.value);
                self.kernel_marker((machine, ts, clock, pid), marker);
            }
            E::CpuFrequency(f) => {
                let name = self.sink.intern("cpufreq");
                let track = self.sink.track(TrackKey::CpuCounter {
                    machine,
                    cpu: f.cpu_id.unwrap_or(0),
                    name,
                    kind: "cpu_frequency",
                });
                let value = f64::from(f.state.unwrap_or(0));
                self.sink.push(
                    ts,
                    clock,
                    EventData::Counter {
                        track,
                        value: Real(value),
                        args: NO_ARGS,
                    },
                );
            }
            E::CpuIdle(f) => {
                let name = self.sink.intern("cpuidle");
                let track = self.sink.track(TrackKey::CpuCounter {
                    machine,
                    cpu: f.cpu_id.unwrap_or(0),
                    name,
                    kind: "cpu_idle",
                });
                let value = f64::from(f.state.unwrap_or(0));
                self.sink.push(
                    ts,
                    clock,
                    EventData::Counter {
                        track,
                        value: Real(value),
                        args: NO_ARGS,
                    },
                );
            }
            E::TaskNewtask(t) => {
                let tid = i64::from(t.pid.unwrap_or(0));
                let name = self.sink.intern_opt(t.comm.as_deref());
                let data = EventData::ThreadStart(Box::new(ThreadStart {
                    thread: ThreadRef {
                        machine,
                        tid,
                        pid: None,
                    },
                    creator_tid: pid,
                    name,
                    new_process: t.clone_flags.unwrap_or(0) & CLONE_THREAD == 0,
                }));
                self.sink.push(ts, clock, data);
            }
            E::TaskRename(t) => {
                let tid = i64::from(t.pid.unwrap_or(0));
                let name = self.sink.intern_opt(t.newcomm.as_deref().map(lossy));
                self.sink.push(
                    ts,
                    clock,
                    EventData::ThreadName {
                        thread: ThreadRef {
                            machine,
                            tid,
                            pid: None,
                        },
                        name,
                        priority: NamePriority::Ftrace,
                    },
                );
            }
            // Interrupt handlers run as slices on their cpu's track.
            E::IrqHandlerEntry(irq) => {
                let name = format!("IRQ ({})", irq.name.as_deref().unwrap_or(""));
                let args = vec![("irq", ArgValue::Int(i64::from(irq.irq.unwrap_or(0))))];
                self.cpu_slice(origin, ts, clock, Interrupt::Hard, Some(&name), &args);
            }
            E::IrqHandlerExit(irq) => {
                let ret = if irq.ret.unwrap_or(0) == 1 {
                    "handled"
                } else {
                    "unhandled"
                };
                let ret = self.sink.intern(ret);
                let args = vec![("ret", ArgValue::Str(ret))];
                self.cpu_slice(origin, ts, clock, Interrupt::Hard, None, &args);
            }
            E::SoftirqEntry(s) => {
                let vec = s.vec.unwrap_or(u32::MAX);
                let name = SOFTIRQ_NAMES
                    .get(vec as usize)
                    .map_or_else(|| format!("softirq {vec}"), |n| n.to_string());
                let args = vec![("vec", ArgValue::Int(i64::from(vec)))];
                self.cpu_slice(origin, ts, clock, Interrupt::Soft, Some(&name), &args);
            }
            E::SoftirqExit(_) => {
                self.cpu_slice(origin, ts, clock, Interrupt::Soft, None, &[]);
            }
            E::RssStat(r) => self.rss_stat(origin, ts, clock, &r),
            E::OomScoreAdjUpdate(o) => {
                let thread = ThreadRef {
                    machine,
                    tid: i64::from(o.pid.unwrap_or(0)),
                    pid: None,
                };
                let value = f64::from(o.oom_score_adj.unwrap_or(0));
                self.thread_process_counter(
                    thread,
                    "oom_score_adj",
                    "oom_score_adj",
                    ts,
                    clock,
                    value,
                );
            }
            // The kernel's OOM killer chose this task.
            E::MarkVictim(m) => {
                let thread = ThreadRef {
                    machine,
                    tid: i64::from(m.pid.unwrap_or(0)),
                    pid: None,
                };
                let slice = SliceEvent {
                    track: self.sink.track(TrackKey::ThreadSlices(thread)),
                    category: NULL_STR,
                    name: self.sink.intern("mem.oom_kill"),
                    args: NO_ARGS,
                    thread_ts: NO_TS,
                    flows: NO_FLOWS,
                };
                let data = EventData::Complete {
                    slice,
                    dur: 0,
                    thread_dur: NO_TS,
                };
                self.sink.push(ts, clock, data);
            }
            E::SchedProcessFree(f) => {
                let tid = i64::from(f.pid.unwrap_or(0));
                self.sink
                    .push(ts, clock, EventData::ThreadEnd { machine, tid });
            }
            _ => {}
        }
    }

    fn compact_sched(
        &mut self,
        machine: MachineId,
        cpu: u32,
        clock: ClockRef,
        c: &protos::ftrace_event_bundle::CompactSched,
    ) {
        let comms: Vec<StrId> = c.intern_table.iter().map(|s| self.sink.intern(s)).collect();
        let n = c.switch_timestamp.len();
        if [
            c.switch_prev_state.len(),
            c.switch_next_pid.len(),
            c.switch_next_prio.len(),
            c.switch_next_comm_index.len(),
        ]
        .iter()
        .any(|&l| l != n)
        {
            self.sink.stat("compact_sched_has_parse_errors", machine, 1);
            return;
        }
        let mut ts = 0i64;
        for i in 0..n {
            ts = ts.wrapping_add(c.switch_timestamp[i] as i64);
            let next_pid = i64::from(c.switch_next_pid[i]);
            let next_comm = comms
                .get(c.switch_next_comm_index[i] as usize)
                .copied()
                .unwrap_or(NULL_STR);
            let prev = self.compact.insert(
                (machine, cpu),
                CompactCpu {
                    next_pid,
                    next_comm,
                    next_prio: c.switch_next_prio[i],
                },
            );
            let Some(prev) = prev else {
                // The first switch of a cpu only tells who runs next.
                self.sink.stat("compact_sched_switch_skipped", machine, 1);
                continue;
            };
            let prev_state = match decode_task_state(c.switch_prev_state[i]) {
                Some(st) => self.sink.intern(&st),
                None => NULL_STR,
            };
            let data = EventData::SchedSwitch(SchedSwitch {
                machine,
                cpu,
                prev_tid: prev.next_pid,
                prev_comm: prev.next_comm,
                prev_state,
                next_tid: next_pid,
                next_comm,
                next_prio: c.switch_next_prio[i],
            });
            self.sink.push(ts, clock, data);
            let raw = RawSwitch {
                prev_comm: prev.next_comm,
                prev_pid: prev.next_pid,
                prev_prio: prev.next_prio,
                prev_state: c.switch_prev_state[i],
                next_comm,
                next_pid,
                next_prio: c.switch_next_prio[i],
            };
            self.raw_sched_switch(machine, cpu, (ts, clock), raw, None);
        }
        let n = c.waking_timestamp.len();
        let mut ts = 0i64;
        for i in 0..n {
            ts = ts.wrapping_add(c.waking_timestamp[i] as i64);
            let Some(&tid) = c.waking_pid.get(i) else {
                break;
            };
            let comm = c
                .waking_comm_index
                .get(i)
                .and_then(|&j| comms.get(j as usize).copied())
                .unwrap_or(NULL_STR);
            let waker = self.compact.get(&(machine, cpu)).map(|s| s.next_pid);
            let irq_context = c.waking_common_flags.get(i).map(|f| f & IRQ_FLAGS != 0);
            if waker.is_none() {
                self.sink.stat("compact_sched_waking_skipped", machine, 1);
                continue;
            }
            let data = EventData::SchedWaking(SchedWaking {
                machine,
                cpu,
                tid: i64::from(tid),
                comm,
                waker_tid: waker,
                irq_context,
            });
            self.sink.push(ts, clock, data);
            // The raw row: what a sched_waking event would have carried, on the waker.
            let args = [
                self.sink.static_arg("comm", ArgValue::Str(comm)),
                self.sink.static_arg("pid", ArgValue::Int(i64::from(tid))),
                self.sink.static_arg(
                    "prio",
                    ArgValue::Int(i64::from(c.waking_prio.get(i).copied().unwrap_or(0))),
                ),
                self.sink.static_arg(
                    "target_cpu",
                    ArgValue::Int(i64::from(c.waking_target_cpu.get(i).copied().unwrap_or(0))),
                ),
            ];
            let raw = FtraceRaw {
                machine,
                cpu,
                tid: waker.unwrap_or(0),
                name: self.sink.intern("sched_waking"),
                args: self.sink.args.push_shared(&args),
                common_flags: c.waking_common_flags.get(i).copied(),
            };
            self.sink.push(ts, clock, EventData::FtraceRaw(raw));
        }
    }

    /// A full `sched_switch`: the scheduler's event and its raw row.
    fn sched_switch(
        &mut self,
        origin: FtraceOrigin,
        ts: i64,
        clock: ClockRef,
        s: &protos::SchedSwitchFtraceEvent,
    ) {
        let FtraceOrigin { machine, cpu, .. } = origin;
        let prev_state = match decode_task_state(s.prev_state.unwrap_or(0)) {
            Some(st) => self.sink.intern(&st),
            None => {
                self.sink.stat("task_state_invalid", machine, 1);
                NULL_STR
            }
        };
        let raw = RawSwitch {
            prev_comm: self.sink.intern_opt(s.prev_comm.as_deref()),
            prev_pid: i64::from(s.prev_pid.unwrap_or(0)),
            prev_prio: s.prev_prio.unwrap_or(0),
            prev_state: s.prev_state.unwrap_or(0),
            next_comm: self.sink.intern_opt(s.next_comm.as_deref()),
            next_pid: i64::from(s.next_pid.unwrap_or(0)),
            next_prio: s.next_prio.unwrap_or(0),
        };
        let data = EventData::SchedSwitch(SchedSwitch {
            machine,
            cpu,
            prev_tid: raw.prev_pid,
            prev_comm: raw.prev_comm,
            prev_state,
            next_tid: raw.next_pid,
            next_comm: raw.next_comm,
            next_prio: raw.next_prio,
        });
        self.sink.push(ts, clock, data);
        self.raw_sched_switch(machine, cpu, (ts, clock), raw, origin.common_flags);
    }

    /// A `sched_switch`'s raw row: all seven fields, always, in the proto's order (as
    /// Trace Processor writes them, for full and compact switches alike).
    fn raw_sched_switch(
        &mut self,
        machine: MachineId,
        cpu: u32,
        (ts, clock): (i64, ClockRef),
        s: RawSwitch,
        common_flags: Option<u32>,
    ) {
        let args = [
            self.sink
                .static_arg("prev_comm", ArgValue::Str(s.prev_comm)),
            self.sink.static_arg("prev_pid", ArgValue::Int(s.prev_pid)),
            self.sink
                .static_arg("prev_prio", ArgValue::Int(i64::from(s.prev_prio))),
            self.sink
                .static_arg("prev_state", ArgValue::Int(s.prev_state)),
            self.sink
                .static_arg("next_comm", ArgValue::Str(s.next_comm)),
            self.sink.static_arg("next_pid", ArgValue::Int(s.next_pid)),
            self.sink
                .static_arg("next_prio", ArgValue::Int(i64::from(s.next_prio))),
        ];
        let raw = FtraceRaw {
            machine,
            cpu,
            tid: s.prev_pid,
            name: self.sink.intern("sched_switch"),
            args: self.sink.args.push_shared(&args),
            common_flags,
        };
        self.sink.push(ts, clock, EventData::FtraceRaw(raw));
    }

    /// Any other event's raw row, its fields read through the schema.
    fn raw_ftrace_event(&mut self, origin: FtraceOrigin, ts: i64, clock: ClockRef, event: &[u8]) {
        let Some((number, payload)) = ftrace_raw::event_payload(event) else {
            return;
        };
        let symbols = self
            .sequences
            .get(&(origin.machine, origin.seq_id))
            .map(|seq| &seq.kernel_symbols);
        let kernel_symbol = |iid: u64| symbols.and_then(|s| s.get(&iid).copied());
        let (packet_start, packet_offset) = self.packet_at;
        let address = |b: &[u8]| {
            let inside = (b.as_ptr() as usize).wrapping_sub(packet_start) as u64;
            wire_repair::BOGUS_BASE + packet_offset + inside
        };
        let lookups = ftrace_raw::Lookups {
            kernel_symbol: &kernel_symbol,
            address: &address,
        };
        // One buffer for every event's args, not an allocation each.
        let mut args = std::mem::take(&mut self.raw_args);
        args.clear();
        let name = ftrace_raw::read_event(self.sink, number, payload, &lookups, &mut args);
        let set = self.sink.args.push_shared(&args);
        self.raw_args = args;
        let name = match name {
            Some(name) => name,
            // A kind Perfetto's numbering leaves unnamed: a row without name or args.
            None if ftrace_raw::in_event_range(number) => NULL_STR,
            None => {
                self.sink.stat("ftrace_event_unknown", origin.machine, 1);
                return;
            }
        };
        let raw = FtraceRaw {
            machine: origin.machine,
            cpu: origin.cpu,
            tid: origin.pid,
            name,
            args: set,
            common_flags: origin.common_flags,
        };
        self.sink.push(ts, clock, EventData::FtraceRaw(raw));
    }
}

/// A `sched_switch`'s fields, from a full event or a compact one.
struct RawSwitch {
    prev_comm: StrId,
    prev_pid: i64,
    prev_prio: i32,
    prev_state: i64,
    next_comm: StrId,
    next_pid: i64,
    next_prio: i32,
}

/// Decodes a `sched_switch` prev_state with the kernel 4.4 layout (Trace Processor's
/// default when the kernel version is unknown). `None` when the bits make no sense.
pub fn decode_task_state(state: i64) -> Option<String> {
    if state < 0 {
        return None;
    }
    let state = state as u64;
    if state == 0 {
        return Some("R".into());
    }
    let preempted = state & 0x800 != 0;
    let bits = state & 0x7ff;
    if bits == 0 && preempted {
        return Some("R+".into());
    }
    let mut out = String::new();
    let letters = [
        (0x1, 'S'),
        (0x2, 'D'),
        (0x4, 'T'),
        (0x8, 't'),
        (0x10, 'X'),
        (0x20, 'Z'),
        (0x40, 'x'),
        (0x80, 'K'),
        (0x100, 'W'),
        (0x200, 'P'),
        (0x400, 'N'),
    ];
    // D with N is the idle state `I`.
    if bits & 0x402 == 0x402 {
        out.push('I');
    } else {
        for (bit, c) in letters {
            if bits & bit != 0 {
                out.push(c);
            }
        }
    }
    if out.is_empty() || out.len() > 3 {
        return None;
    }
    if preempted {
        out.push('+');
    }
    Some(out)
}

#[cfg(test)]
mod tests {

    #[test]
    fn base64_pads_like_the_standard() {
        assert_eq!(super::base64(b""), "");
        assert_eq!(super::base64(b"f"), "Zg==");
        assert_eq!(super::base64(b"fo"), "Zm8=");
        assert_eq!(super::base64(b"foo"), "Zm9v");
        assert_eq!(super::base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn android_release_to_api_level() {
        let sdk = super::android_sdk_for_release;
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
    fn task_states_use_the_4_4_layout() {
        assert_eq!(decode_task_state(0).as_deref(), Some("R"));
        assert_eq!(decode_task_state(1).as_deref(), Some("S"));
        assert_eq!(decode_task_state(2).as_deref(), Some("D"));
        assert_eq!(decode_task_state(0x800).as_deref(), Some("R+"));
        assert_eq!(decode_task_state(-1), None);
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
