#!/usr/bin/env python3
"""Writes the small TrackEvent traces of the parser audit (behaviour-parsers.md §3) to
tests/data/track_event/:
- thread_instruction_counts.pftrace: begin / instant / end events with
  thread_instruction_count_delta (from the ThreadDescriptor's reference count) and _absolute,
  for slice.thread_instruction_count / thread_instruction_delta (§3.2, §3.4).

usage: python3 tools/gen_track_event_audit.py  (needs `pip install perfetto`)"""
import os
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

TE = pb.TrackEvent
OUT = os.path.join(os.path.dirname(__file__), '..', 'tests', 'data', 'track_event')


def pkt(t, ts=None, seq=1):
    p = t.packet.add()
    if ts is not None:
        p.timestamp = ts
    p.trusted_packet_sequence_id = seq
    return p


def save(t, name):
    with open(os.path.join(OUT, name), 'wb') as f:
        f.write(t.SerializeToString())


def thread_instruction_counts():
    t = pb.Trace()
    p = pkt(t, 50, 1)
    p.incremental_state_cleared = True
    p.thread_descriptor.pid = 5
    p.thread_descriptor.tid = 6
    p.thread_descriptor.reference_thread_instruction_count = 100

    def ev(ts, typ, name=None, seq=1, **kw):
        e = pkt(t, ts, seq).track_event
        e.type = typ
        if name:
            e.name = name
        for k, v in kw.items():
            setattr(e, k, v)

    ev(1000, TE.TYPE_SLICE_BEGIN, 'a', thread_instruction_count_delta=5)
    ev(1100, TE.TYPE_INSTANT, 'i', thread_instruction_count_delta=5)
    ev(1200, TE.TYPE_SLICE_END, thread_instruction_count_delta=10)
    p = pkt(t, 60, 2)
    p.incremental_state_cleared = True
    p.thread_descriptor.pid = 5
    p.thread_descriptor.tid = 7
    ev(2000, TE.TYPE_SLICE_BEGIN, 'abs', seq=2, thread_instruction_count_absolute=20)
    ev(2100, TE.TYPE_SLICE_END, seq=2, thread_instruction_count_absolute=25)
    ev(2200, TE.TYPE_INSTANT, 'none', seq=2)
    save(t, 'thread_instruction_counts.pftrace')


thread_instruction_counts()
