#!/usr/bin/env python3
"""Writes the small TrackEvent traces of the held-out round (notes/heldout-te.md) to
tests/data/track_event/:
- missing_iids_each_counted.pftrace: instants whose name iid and category iids were never
  interned, several in one event (behaviour-parsers §3.1: every failed lookup counts
  interned_data_tokenizer_errors once).
- missing_arg_lookups_counted.pftrace: events whose log message body, histogram name,
  correlation id string, debug annotation string value and proto type name iids were never
  interned (§3.1: each failed lookup counts interned_data_tokenizer_errors; the arg is
  skipped as behaviour-chrome-typed-args §2 says).

usage: python3 tools/gen_track_event_heldout.py  (needs `pip install perfetto`, or the
perfetto_trace_pb2 module on PYTHONPATH)"""
import os

try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
except ImportError:  # a standalone perfetto_trace_pb2 package
    from perfetto.trace import perfetto_trace_pb2 as pb

TE = pb.TrackEvent
OUT = os.path.join(os.path.dirname(__file__), '..', 'tests', 'data', 'track_event')
CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
NEEDS = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE


def pkt(t, ts=None, seq=1, flags=None):
    p = t.packet.add()
    if ts is not None:
        p.timestamp = ts
    p.trusted_packet_sequence_id = seq
    if flags is not None:
        p.sequence_flags = flags
    return p


def save(t, name):
    with open(os.path.join(OUT, name), 'wb') as f:
        f.write(t.SerializeToString())


def missing_iids_each_counted():
    t = pb.Trace()
    # The sequence starts valid with its ThreadDescriptor (one read while the state is not
    # valid is ignored: thread_descriptor_skipped_incremental_state_invalid).
    pkt(t, 1, flags=CLEARED).thread_descriptor.CopyFrom(pb.ThreadDescriptor(pid=1, tid=2))
    p = pkt(t, 2, flags=NEEDS)
    p.interned_data.event_names.add(iid=1, name='n1')
    p.interned_data.event_categories.add(iid=1, name='c1')
    # Name and lone category both unknown: two lookups fail.
    pkt(t, 3, flags=NEEDS).track_event.CopyFrom(
        TE(type=TE.TYPE_INSTANT, name_iid=2, category_iids=[7]))
    # Two of three category iids unknown (plus a string): two more.
    pkt(t, 4, flags=NEEDS).track_event.CopyFrom(
        TE(type=TE.TYPE_INSTANT, name='x', category_iids=[8, 1, 9], categories=['s']))
    # Everything known: none.
    pkt(t, 5, flags=NEEDS).track_event.CopyFrom(
        TE(type=TE.TYPE_INSTANT, name_iid=1, category_iids=[1]))
    save(t, 'missing_iids_each_counted.pftrace')


def missing_arg_lookups_counted():
    t = pb.Trace()
    # The sequence starts valid with its ThreadDescriptor (one read while the state is not
    # valid is ignored: thread_descriptor_skipped_incremental_state_invalid).
    pkt(t, 1, flags=CLEARED).thread_descriptor.CopyFrom(pb.ThreadDescriptor(pid=1, tid=2))
    p = pkt(t, 2, flags=NEEDS)
    p.interned_data.log_message_body.add(iid=1, body='known')
    I = TE.TYPE_INSTANT
    DA = pb.DebugAnnotation
    events = [
        TE(type=I, name='log', log_message=pb.LogMessage(body_iid=9)),
        TE(type=I, name='histogram',
           chrome_histogram_sample=pb.ChromeHistogramSample(name_iid=9, sample=3)),
        TE(type=I, name='correlation', correlation_id_str_iid=9),
        TE(type=I, name='string_iid', debug_annotations=[DA(name='s', string_value_iid=9)]),
        TE(type=I, name='type_iid',
           debug_annotations=[DA(name='p', proto_type_name_iid=9, proto_value=b'\x08\x01')]),
        TE(type=I, name='fine', log_message=pb.LogMessage(body_iid=1)),
    ]
    for i, ev in enumerate(events):
        pkt(t, 10 + i, flags=NEEDS).track_event.CopyFrom(ev)
    save(t, 'missing_arg_lookups_counted.pftrace')


if __name__ == '__main__':
    missing_iids_each_counted()
    missing_arg_lookups_counted()
