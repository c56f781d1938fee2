#!/usr/bin/env python3
"""Writes tests/data/buffer_loss.pftrace: a small trace whose recorder lost data in every way
the stats pane explains, made with Perfetto's official Python bindings
(`pip install perfetto protobuf`):

    python3 tools/gen_buffer_loss_trace.py tests/data/buffer_loss.pftrace

- TraceConfig: buffer 0 RING_BUFFER 1024 KB (linux.ftrace, 512 KB per cpu drained every
  1000 ms), buffer 1 DISCARD 256 KB (track_event); streamed into a file every 2.5 s with no
  flush_period_ms, on a service older than v54.
- Sequence 1 (buffer 1): TrackEvents, one after a gap flagged SMB_FULL.
- Sequence 2 (buffer 0): TrackEvents, one after a gap flagged READ_GAP | OVERWRITE.
- Sequence 3 (buffer 1): every packet needs incremental state it never got (all skipped).
- FtraceStats at start and end for 2 cpus (cpu 1 overruns), a bundle with lost_events.
- TraceStats: buffer 0 overwrote 3 MB, buffer 1 discarded chunks and failed patches;
  writer_stats name the three sequences; the final flush failed.
"""
import sys
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as p

BOOT = 1_000_000_000
t = p.Trace()


def packet(seq=None, ts=None):
    pk = t.packet.add()
    if seq is not None:
        pk.trusted_packet_sequence_id = seq
    if ts is not None:
        pk.timestamp = ts
    return pk


cfg = packet(seq=100).trace_config
b = cfg.buffers.add(); b.size_kb = 1024; b.fill_policy = p.TraceConfig.BufferConfig.RING_BUFFER
b = cfg.buffers.add(); b.size_kb = 256; b.fill_policy = p.TraceConfig.BufferConfig.DISCARD
ds = cfg.data_sources.add().config
ds.name = "linux.ftrace"; ds.target_buffer = 0
ds.ftrace_config.ftrace_events.append("sched/sched_switch")
ds.ftrace_config.buffer_size_kb = 512
ds.ftrace_config.drain_period_ms = 1000
ds = cfg.data_sources.add().config
ds.name = "track_event"; ds.target_buffer = 1
cfg.write_into_file = True
cfg.file_write_period_ms = 2500

info = packet(seq=100).system_info
info.tracing_service_version = "Perfetto v44.0-6a1ad3c"
info.utsname.sysname = "Linux"; info.utsname.machine = "aarch64"

pk = packet(seq=100, ts=BOOT)
pk.service_event.tracing_started = True

fs = packet(seq=100, ts=BOOT).ftrace_stats
fs.phase = p.FtraceStats.START_OF_TRACE
for cpu in range(2):
    c = fs.cpu_stats.add(); c.cpu = cpu; c.entries = 10; c.overrun = 0; c.bytes_read = 4096
    c.now_ts = 1.0; c.oldest_event_ts = 0.5; c.read_events = 10

# Sequence 1 on buffer 1: a slice, then a gap (SMB_FULL) before the next.
for i, (dropped, name) in enumerate([(0, "frame"), (0, None), (1 | 256, "frame"), (0, None)]):
    pk = packet(seq=1, ts=BOOT + 10_000_000 * (i + 1))
    if i == 0:
        pk.first_packet_on_sequence = True
        pk.sequence_flags = p.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
        pk.track_descriptor.uuid = 11
        pk.track_descriptor.thread.pid = 10; pk.track_descriptor.thread.tid = 11
        pk.track_descriptor.thread.thread_name = "RenderThread"
        pk = packet(seq=1, ts=BOOT + 10_000_000 * (i + 1))
    if dropped:
        pk.previous_packet_dropped = dropped
    ev = pk.track_event
    ev.track_uuid = 11
    if name:
        ev.type = p.TrackEvent.TYPE_SLICE_BEGIN; ev.name = name
    else:
        ev.type = p.TrackEvent.TYPE_SLICE_END

# Sequence 2 on buffer 0: a gap the service read over (READ_GAP | OVERWRITE).
for i, dropped in enumerate([0, 0, 1 | 2 | 64, 0]):
    pk = packet(seq=2, ts=BOOT + 15_000_000 * (i + 1))
    if dropped:
        pk.previous_packet_dropped = dropped
    ev = pk.track_event
    ev.track_uuid = 11
    ev.type = p.TrackEvent.TYPE_INSTANT; ev.name = "tick"

# Sequence 3 on buffer 1: its interned state never arrived, so every packet is skipped.
for i in range(3):
    pk = packet(seq=3, ts=BOOT + 20_000_000 * (i + 1))
    pk.sequence_flags = p.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
    ev = pk.track_event
    ev.track_uuid = 11
    ev.type = p.TrackEvent.TYPE_INSTANT; ev.name_iid = 1

# An ftrace bundle of cpu 1 after the kernel lost events.
pk = packet(seq=100)
bundle = pk.ftrace_events
bundle.cpu = 1
bundle.lost_events = True
e = bundle.event.add(); e.timestamp = BOOT + 50_000_000; e.pid = 11
s = e.sched_switch
s.prev_comm = "RenderThread"; s.prev_pid = 11; s.prev_prio = 120; s.prev_state = 1
s.next_comm = "swapper/1"; s.next_pid = 0; s.next_prio = 120

fs = packet(seq=100, ts=BOOT + 100_000_000).ftrace_stats
fs.phase = p.FtraceStats.END_OF_TRACE
for cpu in range(2):
    c = fs.cpu_stats.add(); c.cpu = cpu; c.entries = 200; c.bytes_read = 409600
    c.overrun = 0 if cpu == 0 else 1500
    c.now_ts = 1.1; c.oldest_event_ts = 0.6; c.read_events = 4000

st = packet(seq=100, ts=BOOT + 100_000_000).trace_stats
b0 = st.buffer_stats.add()
b0.buffer_size = 1024 * 1024; b0.bytes_written = 5 * 1024 * 1024
b0.bytes_overwritten = 3 * 1024 * 1024; b0.bytes_read = 2 * 1024 * 1024
b0.chunks_written = 1280; b0.chunks_overwritten = 768; b0.chunks_read = 512
b0.write_wrap_count = 5; b0.patches_succeeded = 40
b1 = st.buffer_stats.add()
b1.buffer_size = 256 * 1024; b1.bytes_written = 256 * 1024; b1.bytes_read = 256 * 1024
b1.chunks_written = 64; b1.chunks_read = 64; b1.chunks_discarded = 12
b1.patches_succeeded = 3; b1.patches_failed = 2; b1.trace_writer_packet_loss = 3
for seq, buf in [(1, 1), (2, 0), (3, 1)]:
    w = st.writer_stats.add(); w.sequence_id = seq; w.buffer = buf
st.producers_connected = 2; st.producers_seen = 2
st.data_sources_registered = 2; st.data_sources_seen = 2
st.tracing_sessions = 1; st.total_buffers = 2
st.chunks_discarded = 12; st.patches_discarded = 0
st.flushes_requested = 3; st.flushes_succeeded = 2; st.flushes_failed = 1
st.final_flush_outcome = p.TraceStats.FINAL_FLUSH_FAILED

with open(sys.argv[1] if len(sys.argv) > 1 else "tests/data/buffer_loss.pftrace", "wb") as f:
    f.write(t.SerializeToString())
