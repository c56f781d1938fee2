#!/usr/bin/env python3
"""Writes the protobuf trace of issue 12's first benchmark row with Perfetto's own Python
bindings (`pip install perfetto protobuf`), the way Perfetto's documentation converts
timestamped data ("Converting arbitrary timestamped data to Perfetto"): one process, 100
thread tracks and a counter track per thread, described by TrackDescriptors; then, per
thread, a loop of slice begin (named inline, no interning), a nested begin, two ends and a
counter value, every TrackEvent naming its track uuid on the one trusted sequence 8009.

    python3 tools/gen_python_bindings_trace.py OUT.pftrace [EVENTS]

`examples/proto_bench.rs` writes the same bytes in Rust (fast enough for 5 M events; this
script takes minutes for that many). `proto_bench --check OUT.pftrace EVENTS` compares them.
"""
import sys

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import CounterDescriptor, TrackEvent
from perfetto.trace_builder.proto_builder import StreamingTraceProtoBuilder

SEQ = 8009
PID = 1000
THREADS = 100
NAMES = 64


def main():
    out = sys.argv[1]
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 5_000_000
    with open(out, "wb") as f:
        b = StreamingTraceProtoBuilder(f)

        p = b.create_packet()
        p.track_descriptor.uuid = 1
        p.track_descriptor.process.pid = PID
        p.track_descriptor.process.process_name = "bench"
        p.trusted_packet_sequence_id = SEQ
        b.write_packet(p)
        for t in range(THREADS):
            p = b.create_packet()
            d = p.track_descriptor
            d.uuid = 100 + t
            d.parent_uuid = 1
            d.thread.pid = PID
            d.thread.tid = 2000 + t
            d.thread.thread_name = f"worker-{t}"
            p.trusted_packet_sequence_id = SEQ
            b.write_packet(p)
            p = b.create_packet()
            d = p.track_descriptor
            d.uuid = 10_000 + t
            d.parent_uuid = 100 + t
            d.name = f"queue-{t}"
            d.counter.unit = CounterDescriptor.UNIT_COUNT
            p.trusted_packet_sequence_id = SEQ
            b.write_packet(p)

        ts = 1_000_000
        written = 0
        step = 0
        while written < events:
            for t in range(THREADS):
                if written >= events:
                    break
                phase = step % 5
                p = b.create_packet()
                p.timestamp = ts + t
                e = p.track_event
                if phase in (0, 1):
                    e.type = TrackEvent.TYPE_SLICE_BEGIN
                    e.track_uuid = 100 + t
                    e.name = f"function_{1 + (step // 5 + t + phase) % NAMES}"
                elif phase in (2, 3):
                    e.type = TrackEvent.TYPE_SLICE_END
                    e.track_uuid = 100 + t
                else:
                    e.type = TrackEvent.TYPE_COUNTER
                    e.track_uuid = 10_000 + t
                    e.counter_value = step % 97
                p.trusted_packet_sequence_id = SEQ
                b.write_packet(p)
                written += 1
            step += 1
            ts += 1_000


if __name__ == "__main__":
    main()
