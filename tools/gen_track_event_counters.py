#!/usr/bin/env python3
"""Writes tests/data/track_event/counter_errors.pftrace: TrackEvent counters and extra counters
with each problem behaviour-parsers.md §3.5 names (a counter without value, on an undescribed
uuid, without uuid; extra counters without uuids, with more values than uuids, on a
non-counter track), besides good ones (unit multiplier, incremental, extra counters from the
sequence defaults).

usage: python3 tools/gen_track_event_counters.py  (needs `pip install perfetto`)"""
import os
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'data',
                   'track_event', 'counter_errors.pftrace')
TE = pb.TrackEvent
t = pb.Trace()


def pk(ts=None):
    p = t.packet.add()
    p.trusted_packet_sequence_id = 1
    if ts is not None:
        p.timestamp = ts
    return p


p = pk()
p.incremental_state_cleared = True
p.trace_packet_defaults.track_event_defaults.extra_counter_track_uuids.append(31)
p = pk()
p.track_descriptor.uuid = 10
p.track_descriptor.process.pid = 100
for uuid, name, mult, inc in [(30, 'bytes', 10, True), (31, 'extra', 0, False)]:
    p = pk()
    d = p.track_descriptor
    d.uuid, d.parent_uuid, d.name = uuid, 10, name
    if mult:
        d.counter.unit_multiplier = mult
    d.counter.is_incremental = inc
    d.counter.unit = pb.CounterDescriptor.UNIT_SIZE_BYTES
p = pk()
p.track_descriptor.uuid = 40
p.track_descriptor.parent_uuid = 10
p.track_descriptor.name = 'slices'


def ev(ts, **kw):
    e = pk(ts).track_event
    for k, v in kw.items():
        if isinstance(v, list):
            getattr(e, k).extend(v)
        else:
            setattr(e, k, v)
    return e


ev(100, type=TE.TYPE_COUNTER, track_uuid=30, counter_value=5)      # 50
ev(110, type=TE.TYPE_COUNTER, track_uuid=30, counter_value=3)      # 80 (incremental)
ev(120, type=TE.TYPE_COUNTER, track_uuid=30)                       # no value
ev(130, type=TE.TYPE_COUNTER, track_uuid=99, counter_value=1)      # undescribed
ev(140, type=TE.TYPE_COUNTER, counter_value=1)                     # no uuid
ev(150, type=TE.TYPE_INSTANT, track_uuid=40, name='ok', extra_counter_values=[7])  # defaults
ev(160, type=TE.TYPE_INSTANT, track_uuid=40, name='mismatch', extra_counter_values=[1, 2])
ev(170, type=TE.TYPE_INSTANT, track_uuid=40, name='not_counter',
   extra_counter_values=[1], extra_counter_track_uuids=[40])
ev(180, type=TE.TYPE_INSTANT, track_uuid=40, name='no_uuids',
   extra_double_counter_values=[1.5])
with open(OUT, 'wb') as out:
    out.write(t.SerializeToString())
print(OUT)
