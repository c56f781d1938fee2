#!/usr/bin/env python3
"""Writes the small TrackEvent traces of the parser audit (behaviour-parsers.md §3) to
tests/data/track_event/:
- thread_instruction_counts.pftrace: begin / instant / end events with
  thread_instruction_count_delta (from the ThreadDescriptor's reference count) and _absolute,
  for slice.thread_instruction_count / thread_instruction_delta (§3.2, §3.4).
- sibling_merge_key.pftrace: process-child descriptors merged by sibling_merge_key whatever
  their names, next to same-named siblings that overlap (§3.3).
- legacy_instant_scopes.pftrace: legacy i / I / R events with thread, global and process
  scope on a ThreadDescriptor sequence (§3.4: legacy_event.passthrough_utid off the thread).
- thread_times_by_scope.pftrace: begin / instant / end with thread time and instruction
  count on a thread root, a process root and children of each (§3.4: only thread-scoped
  slices get them; an instant's thread_dur and delta are 0).
- missing_arg_iids.pftrace: an event whose annotation name, source location and posted_from
  iids were never interned (§3.1: each arg skipped, counted in interned_data_tokenizer_errors
  and track_event_parser_errors).
- conflicting_reservation.pftrace: uuids described again with another tid / parent (ignored,
  track_descriptor_conflicting_reservation) or identically with a new name, and a track whose
  parent was never described (a root, track_hierarchy_missing_uuid once) (§3.3).

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


def sibling_merge_key():
    t = pb.Trace()

    def td(uuid, ts=100, **kw):
        d = pkt(t, ts, 1).track_descriptor
        d.uuid = uuid
        for k, v in kw.items():
            if k == 'pid':
                d.process.pid = v
            else:
                setattr(d, k, v)

    td(10, pid=5)
    t.packet[0].incremental_state_cleared = True
    td(20, parent_uuid=10, name='same')
    td(21, parent_uuid=10, name='same')
    by_key = TD.SIBLING_MERGE_BEHAVIOR_BY_SIBLING_MERGE_KEY
    td(23, parent_uuid=10, name='k1', sibling_merge_behavior=by_key, sibling_merge_key='K')
    td(24, parent_uuid=10, name='k2', sibling_merge_behavior=by_key, sibling_merge_key='K')
    td(25, parent_uuid=10, name='k3', sibling_merge_behavior=by_key, sibling_merge_key='K')

    def ev(ts, uuid, typ, name=None):
        e = pkt(t, ts, 1).track_event
        e.type = typ
        e.track_uuid = uuid
        if name:
            e.name = name

    ev(1000, 20, TE.TYPE_SLICE_BEGIN, 'a')
    ev(1100, 21, TE.TYPE_SLICE_BEGIN, 'b')
    ev(1200, 20, TE.TYPE_SLICE_END)
    ev(1300, 21, TE.TYPE_SLICE_END)
    ev(1700, 23, TE.TYPE_INSTANT, 'f')
    ev(1800, 24, TE.TYPE_INSTANT, 'g')
    ev(1900, 24, TE.TYPE_SLICE_BEGIN, 'h')
    ev(2000, 25, TE.TYPE_INSTANT, 'i')
    ev(2100, 24, TE.TYPE_SLICE_END)
    save(t, 'sibling_merge_key.pftrace')


def legacy_instant_scopes():
    t = pb.Trace()
    p = pkt(t, 50, 1)
    p.incremental_state_cleared = True
    p.thread_descriptor.pid = 5
    p.thread_descriptor.tid = 6

    def ev(ts, ph, name, scope=None):
        e = pkt(t, ts, 1).track_event
        e.name = name
        e.categories.append('cat')
        e.legacy_event.phase = ord(ph)
        if scope is not None:
            e.legacy_event.instant_event_scope = scope
        e.debug_annotations.add(name='a', int_value=1)

    S = TE.LegacyEvent
    ev(1000, 'i', 'thread', S.SCOPE_THREAD)
    ev(1100, 'I', 'global', S.SCOPE_GLOBAL)
    ev(1200, 'i', 'process', S.SCOPE_PROCESS)
    ev(1300, 'R', 'mark', S.SCOPE_PROCESS)
    save(t, 'legacy_instant_scopes.pftrace')


def conflicting_reservation():
    t = pb.Trace()
    p = pkt(t, 100, 1)
    p.incremental_state_cleared = True
    d = p.track_descriptor
    d.uuid = 10
    d.process.pid = 5
    for uuid, tid, parent, name in [(11, 6, None, None), (12, None, 10, 'first'),
                                    (11, 7, None, None), (12, None, None, 'other_parent'),
                                    (11, 6, None, None)]:
        d = pkt(t, 100, 1).track_descriptor
        d.uuid = uuid
        if tid is not None:
            d.thread.pid = 5
            d.thread.tid = tid
        if parent is not None:
            d.parent_uuid = parent
        if name is not None:
            d.name = name
    d = pkt(t, 100, 1).track_descriptor
    d.uuid = 14
    d.parent_uuid = 99
    d.name = 'orphan'
    for ts, uuid, name in [(1000, 11, 'on_thread'), (1100, 12, 'on_child'),
                           (1200, 14, 'on_orphan'), (1300, 14, 'on_orphan_again')]:
        e = pkt(t, ts, 1).track_event
        e.type = TE.TYPE_INSTANT
        e.track_uuid = uuid
        e.name = name
    save(t, 'conflicting_reservation.pftrace')


def thread_times_by_scope():
    t = pb.Trace()
    p = pkt(t, 50, 1)
    p.incremental_state_cleared = True
    p.track_descriptor.uuid = 10
    p.track_descriptor.thread.pid = 5
    p.track_descriptor.thread.tid = 6
    d = pkt(t, 51, 1).track_descriptor
    d.uuid = 11
    d.process.pid = 5
    for uuid, parent, name in [(12, 10, 'tchild'), (13, 11, 'pchild')]:
        d = pkt(t, 52, 1).track_descriptor
        d.uuid = uuid
        d.parent_uuid = parent
        d.name = name
    for i, uuid in enumerate([10, 11, 12, 13]):
        for dt, typ, name, tt, ic in [(0, TE.TYPE_SLICE_BEGIN, 'b%d' % uuid, 10, 100),
                                      (100, TE.TYPE_INSTANT, 'i%d' % uuid, 11, 200),
                                      (200, TE.TYPE_SLICE_END, None, 15, 300)]:
            e = pkt(t, 1000 * (i + 1) + dt, 1).track_event
            e.type = typ
            e.track_uuid = uuid
            if name:
                e.name = name
            e.thread_time_absolute_us = tt + 10 * i
            e.thread_instruction_count_absolute = ic + i
    save(t, 'thread_times_by_scope.pftrace')


def missing_arg_iids():
    t = pb.Trace()
    p = pkt(t, 50, 1)
    p.incremental_state_cleared = True
    p.thread_descriptor.pid = 5
    p.thread_descriptor.tid = 6
    p.interned_data.debug_annotation_names.add(iid=1, name='known')
    e = pkt(t, 1000, 1).track_event
    e.type = TE.TYPE_INSTANT
    e.name = 'e'
    e.source_location_iid = 7
    e.task_execution.posted_from_iid = 4
    e.debug_annotations.add(name_iid=9, int_value=1)
    e.debug_annotations.add(name_iid=1, int_value=2)
    save(t, 'missing_arg_iids.pftrace')


TD = pb.TrackDescriptor
thread_instruction_counts()
sibling_merge_key()
legacy_instant_scopes()
conflicting_reservation()
thread_times_by_scope()
missing_arg_iids()
