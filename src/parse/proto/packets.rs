//! Reading the packets off the input: the window over the stream, the framing of the
//! `Trace` into its `packet` fields, and the fast path for TrackEvent packets, whose
//! decoding runs on a second thread for large files. Hands each whole packet, in file
//! order, to [`Parser::packet`] (with its TrackEvent already decoded when the fast path
//! could read it).
//!
//! Packets go to the decoder in batches of whole packets (copied out of the window), and
//! come back with, for each, the header and TrackEvent the fast path read (or nothing: the
//! full decoder reads it on the import thread). The import thread handles batch `n` while
//! the decoder reads batch `n + 1`; everything with an effect (the sink, statistics,
//! errors, progress) happens on the import thread, in file order, as before. Small files
//! are decoded on the import thread by the same code, batch by batch.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::mpsc::{self, Receiver, SyncSender};

use prost::Message;

use super::{schema, Parser, UUID_HASH_BYTES};
use crate::ir::{ClockRef, MachineId};
use crate::parse::ParseError;
use crate::protos::{self, trace_packet, TracePacket};

/// Packets between two calls of the progress callback.
const PACKETS_PER_TICK: u64 = 1 << 16;

/// Bytes read from the input at a time.
const CHUNK: usize = 4 << 20;

/// Bytes and packets per batch, at most (a batch's TrackEvents are all decoded at once).
const BATCH_BYTES: usize = 256 << 10;
const BATCH_PACKETS: usize = 4096;

/// Files at least this large decode on a second thread.
const THREADED_BYTES: u64 = 8 << 20;

/// The TracePacket fields that place a packet on its machine, sequence and clock (see
/// [`Parser::header`]), from a decoded packet or from [`fast_header`].
#[derive(Default)]
pub(super) struct Header<'p> {
    pub timestamp: Option<u64>,
    pub timestamp_clock_id: Option<u32>,
    pub trusted_seq: Option<u32>,
    pub sequence_flags: Option<u32>,
    pub previous_packet_dropped: Option<u32>,
    pub incremental_state_cleared: bool,
    pub first_packet_on_sequence: bool,
    pub machine_id: Option<u32>,
    /// The packet is a RemoteClockSync (the file is multi-machine) or a sync marker (no
    /// packet of the host's); never a TrackEvent.
    pub remote_sync: bool,
    pub marker: bool,
    pub defaults: Option<&'p protos::TracePacketDefaults>,
    pub interned: Option<&'p protos::InternedData>,
    /// The packet is one the reference handles when it reads it (its tokenizer), never
    /// through the sorter: without a timestamp it stays first ([`clocks::UNTIMED`]) rather
    /// than taking the latest one ([`clocks::LATEST`]).
    pub tokenized: bool,
}

impl<'p> Header<'p> {
    pub(super) fn of(pkt: &'p TracePacket) -> Header<'p> {
        Header {
            timestamp: pkt.timestamp,
            timestamp_clock_id: pkt.timestamp_clock_id,
            trusted_seq: pkt
                .optional_trusted_packet_sequence_id
                .map(|trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(s)| s),
            sequence_flags: pkt.sequence_flags,
            previous_packet_dropped: pkt.previous_packet_dropped,
            incremental_state_cleared: pkt.incremental_state_cleared(),
            first_packet_on_sequence: pkt.first_packet_on_sequence(),
            machine_id: pkt.machine_id,
            remote_sync: matches!(pkt.data, Some(trace_packet::Data::RemoteClockSync(_))),
            marker: matches!(pkt.data, Some(trace_packet::Data::SynchronizationMarker(_))),
            defaults: pkt.trace_packet_defaults.as_ref(),
            interned: pkt.interned_data.as_ref(),
            tokenized: tokenized(pkt.data.as_ref()),
        }
    }
}

/// Packets Trace Processor handles as it reads them (clock snapshots, trace stats, system
/// info, configs and descriptors of the trace itself, packages, power rail and energy
/// descriptors): the others go through its sorter, an untimed one at the latest timestamp
/// read so far (behaviour-merging.md §1).
fn tokenized(data: Option<&trace_packet::Data>) -> bool {
    use trace_packet::Data as D;
    matches!(
        data,
        Some(
            D::ClockSnapshot(_)
                | D::TraceStats(_)
                | D::SystemInfo(_)
                | D::TraceConfig(_)
                | D::TraceUuid(_)
                | D::ExtensionDescriptor(_)
                | D::ServiceEvent(_)
                | D::SynchronizationMarker(_)
                | D::RemoteClockSync(_)
                | D::TraceAttributes(_)
                | D::PackagesList(_)
                | D::PowerRails(_)
                | D::AndroidEnergyEstimationBreakdown(_)
                | D::CompressedPackets(_)
                | D::ZstdCompressedPackets(_)
        )
    )
}

/// Where a packet is, once its header is read.
pub(super) struct Placed {
    pub machine: MachineId,
    pub seq_id: u32,
    pub trusted_seq: Option<u32>,
    pub ts: Option<i64>,
    pub clock: ClockRef,
}

/// The header of a packet made of header scalars and one TrackEvent (field 11), and where
/// the TrackEvent's bytes are in it; `None` for any other packet, or one the decoder might
/// read otherwise (another field, a wire type it would refuse, a TrackEvent in two parts).
/// Scalars read as the decoder reads them: the last occurrence wins, 32-bit fields keep the
/// low bits.
fn fast_header(packet: &[u8]) -> Option<(Header<'static>, std::ops::Range<usize>)> {
    let mut bytes = packet;
    let mut h = Header::default();
    let mut event = None;
    while !bytes.is_empty() {
        let tag = schema::varint(&mut bytes)?;
        if tag & 7 == 2 {
            // Only the TrackEvent, once.
            if tag >> 3 != 11 || event.is_some() {
                return None;
            }
            let len = usize::try_from(schema::varint(&mut bytes)?).ok()?;
            let start = packet.len() - bytes.len();
            schema::take(&mut bytes, len)?;
            event = Some(start..start + len);
            continue;
        }
        if tag & 7 != 0 {
            return None;
        }
        let v = schema::varint(&mut bytes)?;
        match tag >> 3 {
            8 => h.timestamp = Some(v),
            58 => h.timestamp_clock_id = Some(v as u32),
            10 => h.trusted_seq = Some(v as u32),
            13 => h.sequence_flags = Some(v as u32),
            42 => h.previous_packet_dropped = Some(v as u32),
            41 => h.incremental_state_cleared = v != 0,
            87 => h.first_packet_on_sequence = v != 0,
            98 => h.machine_id = Some(v as u32),
            // trusted_uid, trusted_pid: decoded, never read.
            3 | 79 => {}
            _ => return None,
        }
    }
    Some((h, event?))
}

/// TrackEvents to decode into, recycled: boxed, so handing one over moves a pointer, not
/// the 700-byte message.
#[allow(clippy::vec_box)]
pub(super) type Spare = Vec<Box<protos::TrackEvent>>;

/// What the fast path made of a packet: its header, where its TrackEvent is, and the
/// TrackEvent decoded.
pub(super) struct Decoded {
    header: Header<'static>,
    event_at: std::ops::Range<usize>,
    event: Box<protos::TrackEvent>,
}

/// Reads a packet the fast path can read; `spare` is a TrackEvent to decode into (cleared
/// first), handed back when the packet is not one.
fn decode(
    packet: &[u8],
    spare: Option<Box<protos::TrackEvent>>,
) -> Result<Decoded, Option<Box<protos::TrackEvent>>> {
    let Some((header, event_at)) = fast_header(packet) else {
        return Err(spare);
    };
    let mut event = spare.unwrap_or_default();
    event.clear();
    if event.merge(&packet[event_at.clone()]).is_err() {
        return Err(Some(event));
    }
    Ok(Decoded {
        header,
        event_at,
        event,
    })
}

/// Whole packets in file order, with what the fast path made of each.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    /// (start, end) in `bytes` and file offset of each packet.
    packets: Vec<(usize, usize, u64)>,
    decoded: Vec<Option<Decoded>>,
    /// TrackEvents to decode into.
    spare: Spare,
}

impl Batch {
    fn decode(&mut self) {
        self.decoded.clear();
        for &(start, end, _) in &self.packets {
            match decode(&self.bytes[start..end], self.spare.pop()) {
                Ok(d) => self.decoded.push(Some(d)),
                Err(spare) => {
                    self.spare.extend(spare);
                    self.decoded.push(None);
                }
            }
        }
    }
}

/// Where batches are decoded: on a thread of its own, or in place.
enum Decoder {
    Inline(VecDeque<Batch>),
    Thread {
        to: Option<SyncSender<Batch>>,
        from: Receiver<Batch>,
        in_flight: usize,
    },
}

/// Batches sent to the decoding thread and not yet taken back, at most.
const IN_FLIGHT: usize = 2;

impl Decoder {
    fn send(&mut self, mut batch: Batch) {
        match self {
            Decoder::Inline(done) => {
                batch.decode();
                done.push_back(batch);
            }
            Decoder::Thread { to, in_flight, .. } => {
                if let Some(tx) = to {
                    // The thread takes batches until this end closes; its channel holds
                    // every batch in flight, so neither side waits on a full channel.
                    if tx.send(batch).is_ok() {
                        *in_flight += 1;
                    }
                }
            }
        }
    }

    /// The oldest batch sent and decoded, if any is in flight.
    fn receive(&mut self) -> Option<Batch> {
        match self {
            Decoder::Inline(done) => done.pop_front(),
            Decoder::Thread {
                from, in_flight, ..
            } => {
                if *in_flight == 0 {
                    return None;
                }
                *in_flight -= 1;
                from.recv().ok()
            }
        }
    }

    fn full(&self) -> bool {
        match self {
            Decoder::Inline(done) => !done.is_empty(),
            Decoder::Thread { in_flight, .. } => *in_flight >= IN_FLIGHT,
        }
    }
}

/// The unread part of a streamed file: whole packets are framed in place, a packet cut by
/// the end of the buffer waits for the next read.
struct Window<'r> {
    input: &'r mut dyn Read,
    buf: Vec<u8>,
    /// Where the unparsed bytes start in `buf`.
    at: usize,
    /// The file offset of `buf[0]`.
    base: u64,
    eof: bool,
    /// The file's first bytes, kept for the trace uuid's hash.
    head: Vec<u8>,
    /// Bytes to read next time.
    chunk: usize,
}

impl Window<'_> {
    /// Makes at least `n` unparsed bytes available, unless the input ends first.
    fn want(&mut self, n: usize) -> Result<bool, ParseError> {
        while self.buf.len() - self.at < n && !self.eof {
            if self.at > 0 {
                self.buf.drain(..self.at);
                self.base += self.at as u64;
                self.at = 0;
            }
            let start = self.buf.len();
            // Grow by what is there, not by what a (maybe corrupt) length claims: a chunk
            // (small at first, for small files), or doubling for a packet larger than one.
            let room = self.chunk.max(start);
            self.chunk = (self.chunk * 2).min(CHUNK);
            self.buf.resize(start + room, 0);
            let mut filled = start;
            while filled < self.buf.len() {
                match self.input.read(&mut self.buf[filled..]) {
                    Ok(0) => {
                        self.eof = true;
                        break;
                    }
                    Ok(k) => filled += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(ParseError::invalid(format!("cannot read the file: {e}")))
                    }
                }
            }
            self.buf.truncate(filled);
            if self.head.len() < UUID_HASH_BYTES {
                let take = (UUID_HASH_BYTES - self.head.len()).min(filled - start);
                let new = &self.buf[start..start + take];
                self.head.extend_from_slice(new);
            }
        }
        Ok(self.buf.len() - self.at >= n)
    }

    fn unparsed(&self) -> &[u8] {
        &self.buf[self.at..]
    }

    /// The file offset of the first unparsed byte.
    fn pos(&self) -> u64 {
        self.base + self.at as u64
    }
}

/// Reads a varint and its length in bytes; `None` if the buffer ends inside it.
fn read_varint(buf: &[u8]) -> Option<(u64, usize)> {
    let mut rest = buf;
    let value = schema::varint(&mut rest)?;
    Some((value, buf.len() - rest.len()))
}

/// How the framing of the file ended.
enum Framed {
    /// At the end of the input.
    End,
    /// Cut at this file offset (inside a field's header or value).
    Cut(u64),
    /// A wire type no protobuf has, at this file offset.
    BadWire(u64, u64),
}

impl Parser<'_> {
    /// Reads every packet of `input` (of `size_hint` bytes, if known) into the parser, and
    /// returns the file's first bytes (for the trace uuid's hash).
    pub(super) fn read_packets(
        &mut self,
        input: &mut dyn Read,
        size_hint: u64,
        tick: &mut dyn FnMut(u64, usize) -> bool,
    ) -> Result<Vec<u8>, ParseError> {
        let mut w = Window {
            input,
            buf: Vec::new(),
            at: 0,
            base: 0,
            eof: false,
            head: Vec::new(),
            chunk: 64 << 10,
        };
        if size_hint < THREADED_BYTES {
            let mut decoder = Decoder::Inline(VecDeque::new());
            self.frame(&mut w, &mut decoder, tick)?;
        } else {
            std::thread::scope(|scope| -> Result<(), ParseError> {
                let (to, batches) = mpsc::sync_channel::<Batch>(IN_FLIGHT);
                let (done, from) = mpsc::sync_channel::<Batch>(IN_FLIGHT);
                let thread = std::thread::Builder::new()
                    .name("proto-decoder".into())
                    .spawn_scoped(scope, move || {
                        for mut batch in batches {
                            batch.decode();
                            if done.send(batch).is_err() {
                                break;
                            }
                        }
                    });
                let mut decoder = match thread {
                    Ok(_) => Decoder::Thread {
                        to: Some(to),
                        from,
                        in_flight: 0,
                    },
                    // No thread to be had: decode in place.
                    Err(_) => Decoder::Inline(VecDeque::new()),
                };
                let r = self.frame(&mut w, &mut decoder, tick);
                // Closing the channel ends the thread (the scope waits for it).
                if let Decoder::Thread { to, .. } = &mut decoder {
                    drop(to.take());
                }
                r
            })?;
        }
        Ok(std::mem::take(&mut w.head))
    }

    /// Frames the file into packets, batch by batch, and handles each in order.
    fn frame(
        &mut self,
        w: &mut Window,
        decoder: &mut Decoder,
        tick: &mut dyn FnMut(u64, usize) -> bool,
    ) -> Result<(), ParseError> {
        let mut batch = Batch::default();
        let mut spare: Spare = Vec::new();
        let framed = loop {
            match next_packet(w)? {
                Ok(Some((start, end))) => {
                    let offset = w.pos() + start as u64;
                    let at = batch.bytes.len();
                    batch.bytes.extend_from_slice(&w.unparsed()[start..end]);
                    batch.packets.push((at, at + end - start, offset));
                    w.at += end;
                    if batch.bytes.len() >= BATCH_BYTES || batch.packets.len() >= BATCH_PACKETS {
                        let next = Batch {
                            spare: std::mem::take(&mut spare),
                            ..Batch::default()
                        };
                        decoder.send(std::mem::replace(&mut batch, next));
                        if decoder.full() {
                            if let Some(done) = decoder.receive() {
                                self.handle(done, &mut spare, tick)?;
                            }
                        }
                    }
                }
                Ok(None) => {}
                Err(framed) => break framed,
            }
        };
        // Every whole packet is handled before what ended the framing is.
        batch.spare = spare;
        let mut spare = Vec::new();
        decoder.send(batch);
        while let Some(done) = decoder.receive() {
            self.handle(done, &mut spare, tick)?;
        }
        match framed {
            Framed::End => Ok(()),
            Framed::Cut(at) => self.truncated(at),
            Framed::BadWire(wire, at) => {
                if self.packets == 0 {
                    return Err(ParseError::invalid(format!(
                        "not a Perfetto protobuf trace: invalid wire type {wire} at byte {at}"
                    )));
                }
                self.sink
                    .stat("proto_packet_decode_failure", self.ctx.machine, 1);
                Ok(())
            }
        }
    }

    /// Handles a decoded batch's packets in order; keeps its TrackEvents in `spare`.
    fn handle(
        &mut self,
        mut batch: Batch,
        spare: &mut Spare,
        tick: &mut dyn FnMut(u64, usize) -> bool,
    ) -> Result<(), ParseError> {
        spare.append(&mut batch.spare);
        let decoded = std::mem::take(&mut batch.decoded);
        for (&(start, end, offset), decoded) in batch.packets.iter().zip(decoded) {
            self.packet(&batch.bytes[start..end], offset, decoded, spare);
            if let Some(e) = self.fatal.take() {
                return Err(e);
            }
            if self.packets.is_multiple_of(PACKETS_PER_TICK)
                && !tick(offset, self.sink.event_count as usize)
            {
                return Err(ParseError::Cancelled);
            }
        }
        Ok(())
    }

    /// A packet the fast path read: its header is handled and its TrackEvent imported as
    /// the full decoder's would be. Without `decoded`, tries the fast path in place; false
    /// when it cannot read the packet (untouched: the full decoder reads it).
    pub(super) fn fast_track_event(
        &mut self,
        bytes: &[u8],
        decoded: Option<Decoded>,
        spare: &mut Spare,
    ) -> bool {
        let d = match decoded {
            Some(d) => d,
            None => match decode(bytes, spare.pop()) {
                Ok(d) => d,
                Err(back) => {
                    spare.extend(back);
                    return false;
                }
            },
        };
        let raw = &bytes[d.event_at.clone()];
        self.packets += 1;
        self.flush_pending_track_event();
        self.pending_track_event = Some(bytes.len() as u64);
        if let Some(at) = self.header(&d.header) {
            if at.trusted_seq.is_none() {
                // The reference drops TrackEvents it cannot give a sequence.
                self.stat("track_event_missing_sequence_id", at.machine);
            } else {
                self.track_event(at.machine, at.seq_id, at.ts, at.clock, &d.event, raw);
            }
        }
        spare.push(d.event);
        true
    }
}

/// Frames the next `Trace` field: `Ok(Some(range))` of a packet's bytes in the window's
/// unparsed bytes (the window not yet moved past it), `Ok(None)` for another field (moved
/// past), `Err` where the framing ends.
#[allow(clippy::type_complexity)]
fn next_packet(w: &mut Window) -> Result<Result<Option<(usize, usize)>, Framed>, ParseError> {
    // A field's header: a tag and a length, ten bytes each at most.
    const HEADER: usize = 20;
    w.want(HEADER)?;
    if w.unparsed().is_empty() {
        return Ok(Err(Framed::End));
    }
    let cut = Ok(Err(Framed::Cut(w.pos())));
    let bytes = w.unparsed();
    let Some((tag, n)) = read_varint(bytes) else {
        return cut;
    };
    let field = tag >> 3;
    let wire = tag & 7;
    let (value_at, len) = match wire {
        0 => match read_varint(&bytes[n..]) {
            Some((_, k)) => (n, k),
            None => return cut,
        },
        1 => (n, 8),
        5 => (n, 4),
        2 => match read_varint(&bytes[n..]) {
            Some((len, k)) => match usize::try_from(len) {
                Ok(len) => (n + k, len),
                Err(_) => return cut,
            },
            None => return cut,
        },
        _ => return Ok(Err(Framed::BadWire(wire, w.pos()))),
    };
    let Some(end) = value_at.checked_add(len) else {
        return cut;
    };
    if !w.want(end)? {
        return Ok(Err(Framed::Cut(w.pos())));
    }
    if field == 1 && wire == 2 {
        Ok(Ok(Some((value_at, end))))
    } else {
        w.at += end;
        Ok(Ok(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Sink, HOST_MACHINE};
    use crate::parse::FileContext;
    use crate::protos::{track_event, TrackDescriptor, TrackEvent};

    fn seq(p: &mut TracePacket) {
        p.optional_trusted_packet_sequence_id =
            Some(trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(7));
    }

    /// A trace of TrackEvent packets of every kind the fast path takes (and a few it
    /// refuses); `extra` appends an unknown field to every TrackEvent packet, which sends
    /// it to the full decoder.
    fn trace(extra: bool) -> Vec<u8> {
        let mut packets = Vec::new();
        let mut d = TracePacket::default();
        seq(&mut d);
        d.data = Some(trace_packet::Data::TrackDescriptor(TrackDescriptor {
            uuid: Some(5),
            static_or_dynamic_name: Some(
                crate::protos::track_descriptor::StaticOrDynamicName::Name("t".into()),
            ),
            ..Default::default()
        }));
        packets.push(d.encode_to_vec());
        for i in 0..300u64 {
            let mut p = TracePacket::default();
            seq(&mut p);
            p.timestamp = Some(1000 + i * 10);
            if i % 7 == 3 {
                p.machine_id = Some(0);
            }
            if i % 11 == 5 {
                p.previous_packet_dropped = Some(1);
            }
            let ev = TrackEvent {
                r#type: Some(if i % 2 == 0 {
                    track_event::Type::SliceBegin
                } else {
                    track_event::Type::SliceEnd
                } as i32),
                track_uuid: Some(5),
                name_field: Some(track_event::NameField::Name(format!("s{}", i % 5))),
                categories: vec!["c".into()],
                ..Default::default()
            };
            p.data = Some(trace_packet::Data::TrackEvent(ev));
            let mut bytes = p.encode_to_vec();
            if i % 13 == 0 {
                // The timestamp again (the last one wins) and trusted_pid: still fast.
                prost::encoding::uint64::encode(8, &(1000 + i * 10), &mut bytes);
                prost::encoding::int32::encode(79, &42, &mut bytes);
            }
            if i == 100 {
                // No sequence: counted and dropped either way.
                p.optional_trusted_packet_sequence_id = None;
                bytes = p.encode_to_vec();
            }
            if extra {
                prost::encoding::uint64::encode(900, &1, &mut bytes);
            }
            packets.push(bytes);
        }
        let mut out = Vec::new();
        for p in packets {
            prost::encoding::bytes::encode(1, &p, &mut out);
        }
        out
    }

    fn import(bytes: &[u8], size_hint: u64) -> Sink {
        let mut sink = Sink::new();
        let ctx = FileContext::new(0, HOST_MACHINE);
        let mut input = bytes;
        super::super::parse_stream(&mut input, size_hint, &mut sink, &ctx, &mut |_, _| true)
            .expect("parses");
        sink
    }

    fn stats(sink: &Sink) -> Vec<(&'static str, i64)> {
        let mut s: Vec<_> = sink.stats.iter().map(|(k, v)| (k.name, *v)).collect();
        s.sort_unstable();
        s
    }

    #[test]
    fn the_fast_path_and_the_full_decoder_import_the_same() {
        let fast = import(&trace(false), 0);
        let full = import(&trace(true), 0);
        assert!(fast.decoded().len() > 250);
        let names = |s: &Sink| {
            s.decoded()
                .into_iter()
                .map(|e| (e.ts, e.clock, e.data))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&fast), names(&full));
        assert_eq!(stats(&fast), stats(&full));
        assert!(stats(&fast).contains(&("track_event_missing_sequence_id", 1)));
    }

    #[test]
    fn the_decoding_thread_changes_nothing() {
        let bytes = trace(false);
        let inline = import(&bytes, 0);
        let threaded = import(&bytes, THREADED_BYTES);
        let events = |s: &Sink| {
            s.decoded()
                .into_iter()
                .map(|e| (e.ts, e.ord, e.clock, e.data))
                .collect::<Vec<_>>()
        };
        assert_eq!(events(&inline), events(&threaded));
        assert_eq!(stats(&inline), stats(&threaded));
        assert_eq!(inline.accounting, threaded.accounting);
    }

    #[test]
    fn a_cut_after_whole_packets_keeps_them_and_counts_the_cut() {
        let bytes = trace(false);
        // The last packet (a slice end) pushes one event.
        let whole = import(&bytes, 0).decoded().len();
        let cut = &bytes[..bytes.len() - 3];
        for hint in [0, THREADED_BYTES] {
            let sink = import(cut, hint);
            assert_eq!(sink.decoded().len(), whole - 1, "hint {hint}");
            assert!(
                stats(&sink).contains(&("proto_truncated", 1)),
                "hint {hint}"
            );
        }
    }
}
