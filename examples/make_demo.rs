//! Writes `assets/demo.zip`, the archive a bare `sextant` opens: a phone and a watch trace
//! with clock snapshots, a clockless JSON log pinned by the manifest with an offset, and a
//! `perfetto_manifest` tying them together. Some watch events are dropped on purpose (a
//! clock no snapshot relates, and events from before the phone booted) so the stats pane
//! has something to explain.
//!
//!     cargo run --example make_demo            # rewrites assets/demo.zip
//!     cargo run --example make_demo -- OUT.zip

use std::io::Write;

use prost::Message;
use sextant::protos::{self, trace_packet, track_descriptor, track_event, TracePacket};

const BOOTTIME: u32 = 6;
const MONOTONIC: u32 = 3;
const REALTIME: u32 = 1;
const MONOTONIC_RAW: u32 = 5;
const MS: u64 = 1_000_000;
/// Wall-clock time of the phone's snapshot (2026-11-21 09:00 UTC).
const WALL: u64 = 1_795_683_600_000_000_000;

/// Packets of one trace file.
#[derive(Default)]
struct Trace {
    packets: Vec<TracePacket>,
}

impl Trace {
    fn push(&mut self, seq: u32, ts: Option<u64>, data: trace_packet::Data) -> &mut TracePacket {
        let mut p = TracePacket {
            timestamp: ts,
            data: Some(data),
            ..Default::default()
        };
        p.optional_trusted_packet_sequence_id =
            Some(trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(seq));
        self.packets.push(p);
        self.packets.last_mut().expect("just pushed")
    }

    fn snapshot(&mut self, clocks: &[(u32, u64)]) {
        self.push(
            1,
            None,
            trace_packet::Data::ClockSnapshot(protos::ClockSnapshot {
                clocks: clocks
                    .iter()
                    .map(|&(id, ts)| protos::clock_snapshot::Clock {
                        clock_id: Some(id),
                        timestamp: Some(ts),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }),
        );
    }

    fn process(&mut self, uuid: u64, pid: i32, name: &str) {
        self.push(
            2,
            None,
            trace_packet::Data::TrackDescriptor(protos::TrackDescriptor {
                uuid: Some(uuid),
                process: Some(protos::ProcessDescriptor {
                    pid: Some(pid),
                    process_name: Some(name.into()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
        );
    }

    fn thread(&mut self, uuid: u64, parent: u64, pid: i32, tid: i64, name: &str) {
        self.push(
            2,
            None,
            trace_packet::Data::TrackDescriptor(protos::TrackDescriptor {
                uuid: Some(uuid),
                parent_uuid: Some(parent),
                thread: Some(protos::ThreadDescriptor {
                    pid: Some(pid),
                    tid: Some(tid),
                    thread_name: Some(name.into()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
        );
    }

    fn counter_track(&mut self, uuid: u64, parent: u64, name: &str) {
        self.push(
            2,
            None,
            trace_packet::Data::TrackDescriptor(protos::TrackDescriptor {
                uuid: Some(uuid),
                parent_uuid: Some(parent),
                static_or_dynamic_name: Some(track_descriptor::StaticOrDynamicName::Name(
                    name.into(),
                )),
                counter: Some(protos::CounterDescriptor::default()),
                ..Default::default()
            }),
        );
    }

    fn event(
        &mut self,
        ts: u64,
        track: u64,
        ty: track_event::Type,
        name: Option<&str>,
    ) -> &mut TracePacket {
        let ev = protos::TrackEvent {
            r#type: Some(ty as i32),
            track_uuid: Some(track),
            categories: if name.is_some() {
                vec!["demo".into()]
            } else {
                vec![]
            },
            name_field: name.map(|n| track_event::NameField::Name(n.into())),
            ..Default::default()
        };
        self.push(3, Some(ts), trace_packet::Data::TrackEvent(ev))
    }

    fn slice(&mut self, ts: u64, dur: u64, track: u64, name: &str) {
        self.event(ts, track, track_event::Type::SliceBegin, Some(name));
        self.event(ts + dur, track, track_event::Type::SliceEnd, None);
    }

    fn counter(&mut self, ts: u64, track: u64, value: f64) {
        let p = self.event(ts, track, track_event::Type::Counter, None);
        if let Some(trace_packet::Data::TrackEvent(ev)) = &mut p.data {
            ev.counter_value_field =
                Some(track_event::CounterValueField::DoubleCounterValue(value));
        }
    }

    fn sched(&mut self, cpu: u32, switches: &[(u64, &str, i32, &str, i32)]) {
        let event = switches
            .iter()
            .map(
                |&(ts, prev, prev_pid, next, next_pid)| protos::FtraceEvent {
                    timestamp: Some(ts),
                    pid: Some(prev_pid as u32),
                    event: Some(protos::ftrace_event::Event::SchedSwitch(
                        protos::SchedSwitchFtraceEvent {
                            prev_comm: Some(prev.into()),
                            prev_pid: Some(prev_pid),
                            prev_prio: Some(120),
                            prev_state: Some(1),
                            next_comm: Some(next.into()),
                            next_pid: Some(next_pid),
                            next_prio: Some(120),
                        },
                    )),
                    ..Default::default()
                },
            )
            .collect();
        self.push(
            4,
            None,
            trace_packet::Data::FtraceEvents(protos::FtraceEventBundle {
                cpu: Some(cpu),
                event,
                ..Default::default()
            }),
        );
    }

    fn bytes(&self) -> Vec<u8> {
        protos::Trace {
            packet: self.packets.clone(),
        }
        .encode_to_vec()
    }
}

/// The phone: a camera app drawing frames, a flow from its main thread to the render
/// thread, battery and CPU counters, and the scheduler on two CPUs.
fn phone() -> Vec<u8> {
    let mut t = Trace::default();
    let boot = 10_000 * MS;
    t.snapshot(&[
        (BOOTTIME, boot),
        (MONOTONIC, boot - 150 * MS),
        (REALTIME, WALL),
    ]);
    t.process(1, 1000, "com.example.camera");
    t.thread(11, 1, 1000, 1000, "main");
    t.thread(12, 1, 1000, 1001, "RenderThread");
    t.counter_track(13, 1, "battery_mA");
    t.process(2, 600, "system_server");
    t.thread(21, 2, 600, 612, "binder:600_2");
    for frame in 0..12u64 {
        let start = boot + 100 * MS + frame * 160 * MS;
        t.slice(start, 40 * MS, 11, "Choreographer#doFrame");
        t.slice(start + 2 * MS, 20 * MS, 11, "traversal");
        t.slice(start + 4 * MS, 10 * MS, 11, "measure");
        t.slice(start + 15 * MS, 5 * MS, 11, "layout");
        t.slice(start + 41 * MS, 30 * MS, 12, "DrawFrame");
        t.slice(start + 45 * MS, 12 * MS, 12, "flush commands");
        if frame % 4 == 1 {
            t.slice(start + 80 * MS, 25 * MS, 21, "getCameraCharacteristics");
        }
        t.counter(start, 13, 310.0 + (frame % 5) as f64 * 42.5);
    }
    // A flow: the main thread posts work that the render thread picks up.
    let post = boot + 2_100 * MS;
    t.event(
        post,
        11,
        track_event::Type::SliceBegin,
        Some("post frame callback"),
    );
    if let Some(trace_packet::Data::TrackEvent(ev)) =
        t.packets.last_mut().and_then(|p| p.data.as_mut())
    {
        ev.flow_ids = vec![4242];
    }
    t.event(post + 3 * MS, 11, track_event::Type::SliceEnd, None);
    t.event(
        post + 5 * MS,
        12,
        track_event::Type::SliceBegin,
        Some("run frame callback"),
    );
    if let Some(trace_packet::Data::TrackEvent(ev)) =
        t.packets.last_mut().and_then(|p| p.data.as_mut())
    {
        ev.terminating_flow_ids = vec![4242];
    }
    t.event(post + 9 * MS, 12, track_event::Type::SliceEnd, None);
    // The scheduler on two CPUs.
    let mut cpu0 = Vec::new();
    let mut cpu1 = Vec::new();
    for i in 0..40u64 {
        let ts = boot + 100 * MS + i * 50 * MS;
        cpu0.push((ts, "swapper/0", 0, "main", 1000));
        cpu0.push((ts + 30 * MS, "main", 1000, "swapper/0", 0));
        cpu1.push((ts + 20 * MS, "swapper/1", 0, "RenderThread", 1001));
        cpu1.push((ts + 45 * MS, "RenderThread", 1001, "swapper/1", 0));
    }
    t.sched(0, &cpu0);
    t.sched(1, &cpu1);
    t.bytes()
}

/// The watch: booted long before the phone (so its BOOTTIME is far ahead), its wall clock
/// 350 ms ahead of the phone's; placed by REALTIME rendezvous.
fn watch() -> Vec<u8> {
    let mut t = Trace::default();
    let boot = 500_000 * MS;
    t.snapshot(&[(BOOTTIME, boot), (REALTIME, WALL + 350 * MS)]);
    t.process(1, 300, "com.example.watchface");
    t.thread(11, 1, 300, 300, "ui");
    t.thread(12, 1, 300, 305, "sensors");
    t.counter_track(13, 1, "heart_rate_bpm");
    for i in 0..8u64 {
        let start = boot + 200 * MS + i * 250 * MS;
        t.slice(start, 60 * MS, 11, "render watchface");
        t.slice(start + 5 * MS, 20 * MS, 11, "draw complications");
        t.slice(start + 100 * MS, 15 * MS, 12, "read heart rate");
        t.counter(start + 100 * MS, 13, 62.0 + (i * 7 % 11) as f64);
    }
    // Logged on MONOTONIC_RAW, a clock no snapshot of the watch records: dropped.
    for i in 0..3u64 {
        let p = t.event(
            boot + i * MS,
            12,
            track_event::Type::Instant,
            Some("raw clock sample"),
        );
        p.timestamp_clock_id = Some(MONOTONIC_RAW);
    }
    // From 20 s before the phone booted: before trace time starts, dropped.
    t.slice(boot - 20_000 * MS, 10 * MS, 11, "boot animation");
    t.bytes()
}

/// A clockless app log: times are relative to the app's own start.
fn app_log() -> Vec<u8> {
    let mut events = Vec::new();
    for i in 0..6u64 {
        let ts = 50_000 + i * 300_000;
        events.push(format!(
            r#"{{"name": "upload photo", "cat": "net", "ph": "X", "ts": {ts}, "dur": 180000, "pid": 1000, "tid": 1002, "args": {{"bytes": {}}}}}"#,
            250_000 + i * 13_000
        ));
        events.push(format!(
            r#"{{"name": "compress", "cat": "cpu", "ph": "X", "ts": {}, "dur": 60000, "pid": 1000, "tid": 1002}}"#,
            ts + 10_000
        ));
    }
    events.push(
        r#"{"name": "thread_name", "ph": "M", "pid": 1000, "tid": 1002, "args": {"name": "uploader"}}"#
            .to_string(),
    );
    format!("{{\"traceEvents\": [\n{}\n]}}\n", events.join(",\n")).into_bytes()
}

const MANIFEST: &str = r#"{"perfetto_manifest": {
  "version": 1,
  "trace_time": {"clock": "BOOTTIME", "file": "phone.pftrace"},
  "files": [
    {"path": "phone.pftrace", "machine": {"name": "phone"}},
    {"path": "watch.pftrace", "machine": {"name": "watch"}},
    {"path": "app_log.json", "machine": {"name": "phone"},
     "clocks": {"sync_to": {"file": "phone.pftrace", "clock": "BOOTTIME"},
                "offset_ns": 10300000000}}
  ]}}
"#;

fn main() -> std::io::Result<()> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/assets/demo.zip").to_string());
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&out)?);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    for (name, bytes) in [
        ("perfetto_manifest.json", MANIFEST.as_bytes().to_vec()),
        ("phone.pftrace", phone()),
        ("watch.pftrace", watch()),
        ("app_log.json", app_log()),
    ] {
        zip.start_file(name, options)?;
        zip.write_all(&bytes)?;
    }
    zip.finish()?;
    println!("wrote {out}");
    Ok(())
}
