//! The synthetic trace the benchmarks import (shared by `import_bench` and `merge_bench`).

use std::io::{BufWriter, Write};

use prost::Message;
use sextant::protos::{
    self, counter_descriptor, trace_packet, track_descriptor, track_event, TracePacket,
};

const THREADS: u64 = 100;
const NAMES: u64 = 64;

fn seq_id(p: &mut TracePacket, seq: u32) {
    p.optional_trusted_packet_sequence_id =
        Some(trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(seq));
}

fn write_packet(out: &mut impl Write, p: &TracePacket, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    // Field 1, length-delimited: one TracePacket of the Trace.
    buf.push(0x0a);
    prost::encoding::encode_varint(p.encoded_len() as u64, buf);
    p.encode_raw(buf);
    out.write_all(buf)
}

/// Writes a trace with `events` track events to `path`; returns its size in bytes.
pub fn generate(path: &std::path::Path, events: u64) -> std::io::Result<u64> {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    write_trace(&mut out, events, None)?;
    out.flush()?;
    drop(out);
    Ok(std::fs::metadata(path)?.len())
}

/// Writes a trace with `events` track events (100 threads of nested slices and a counter
/// each), after a ClockSnapshot (BOOTTIME, REALTIME) when `snapshot` is given; events then
/// start at that BOOTTIME.
pub fn write_trace(
    out: &mut impl Write,
    events: u64,
    snapshot: Option<(u64, u64)>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    if let Some((boot, wall)) = snapshot {
        let mut p = TracePacket::default();
        seq_id(&mut p, 1);
        let clock = |id: u32, ts: u64| protos::clock_snapshot::Clock {
            clock_id: Some(id),
            timestamp: Some(ts),
            ..Default::default()
        };
        p.data = Some(trace_packet::Data::ClockSnapshot(protos::ClockSnapshot {
            clocks: vec![clock(6, boot), clock(1, wall)],
            ..Default::default()
        }));
        write_packet(out, &p, &mut buf)?;
    }
    // Process and thread descriptors, one counter track per thread.
    let mut p = TracePacket::default();
    seq_id(&mut p, 1);
    p.data = Some(trace_packet::Data::TrackDescriptor(
        protos::TrackDescriptor {
            uuid: Some(1),
            process: Some(protos::ProcessDescriptor {
                pid: Some(1000),
                process_name: Some("bench".into()),
                ..Default::default()
            }),
            ..Default::default()
        },
    ));
    write_packet(out, &p, &mut buf)?;
    for t in 0..THREADS {
        let mut p = TracePacket::default();
        seq_id(&mut p, 10 + t as u32);
        p.data = Some(trace_packet::Data::TrackDescriptor(
            protos::TrackDescriptor {
                uuid: Some(100 + t),
                parent_uuid: Some(1),
                thread: Some(protos::ThreadDescriptor {
                    pid: Some(1000),
                    tid: Some(2000 + t as i64),
                    thread_name: Some(format!("worker-{t}")),
                    ..Default::default()
                }),
                ..Default::default()
            },
        ));
        write_packet(out, &p, &mut buf)?;
        let mut p = TracePacket::default();
        seq_id(&mut p, 10 + t as u32);
        p.data = Some(trace_packet::Data::TrackDescriptor(
            protos::TrackDescriptor {
                uuid: Some(10_000 + t),
                parent_uuid: Some(100 + t),
                static_or_dynamic_name: Some(track_descriptor::StaticOrDynamicName::Name(format!(
                    "queue-{t}"
                ))),
                counter: Some(protos::CounterDescriptor {
                    unit: Some(counter_descriptor::Unit::Count as i32),
                    ..Default::default()
                }),
                ..Default::default()
            },
        ));
        write_packet(out, &p, &mut buf)?;
    }
    // Interned names per sequence, then events round-robin over the threads.
    for t in 0..THREADS {
        let mut p = TracePacket::default();
        seq_id(&mut p, 10 + t as u32);
        p.sequence_flags = Some(1);
        p.interned_data = Some(protos::InternedData {
            event_names: (1..=NAMES)
                .map(|i| protos::EventName {
                    iid: Some(i),
                    name: Some(format!("function_{i}")),
                })
                .collect(),
            event_categories: vec![protos::EventCategory {
                iid: Some(1),
                name: Some("bench".into()),
            }],
            ..Default::default()
        });
        p.trace_packet_defaults = Some(protos::TracePacketDefaults {
            track_event_defaults: Some(protos::TrackEventDefaults {
                track_uuid: Some(100 + t),
                ..Default::default()
            }),
            ..Default::default()
        });
        write_packet(out, &p, &mut buf)?;
    }
    // Each thread runs a loop: begin A, begin B, end B, end A, counter (5 events).
    let mut ts = snapshot.map_or(1_000_000, |(boot, _)| boot);
    let mut written = 0u64;
    let mut step = 0u64;
    while written < events {
        for t in 0..THREADS {
            if written >= events {
                break;
            }
            let phase = step % 5;
            let mut p = TracePacket::default();
            seq_id(&mut p, 10 + t as u32);
            p.sequence_flags = Some(2);
            p.timestamp = Some(ts + t);
            let name = 1 + (step / 5 + t) % NAMES;
            let ev = match phase {
                0 | 1 => protos::TrackEvent {
                    r#type: Some(track_event::Type::SliceBegin as i32),
                    category_iids: vec![1],
                    name_field: Some(track_event::NameField::NameIid(name + phase)),
                    ..Default::default()
                },
                2 | 3 => protos::TrackEvent {
                    r#type: Some(track_event::Type::SliceEnd as i32),
                    ..Default::default()
                },
                _ => protos::TrackEvent {
                    r#type: Some(track_event::Type::Counter as i32),
                    track_uuid: Some(10_000 + t),
                    counter_value_field: Some(track_event::CounterValueField::CounterValue(
                        (step % 97) as i64,
                    )),
                    ..Default::default()
                },
            };
            p.data = Some(trace_packet::Data::TrackEvent(ev));
            write_packet(out, &p, &mut buf)?;
            written += 1;
        }
        step += 1;
        ts += 1_000;
    }
    Ok(())
}
