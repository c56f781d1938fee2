#!/usr/bin/env python3
"""Writes tests/data/track_event/legacy_phases.pftrace: TrackEvents with legacy phases on a
ThreadDescriptor sequence (X with duration_us, S/T/p/F async steps, local and global ids, R
marks, process-scoped instants, M thread/process names, an O kept raw), v1 flows (s, f bound to
the enclosing slice, an id that is not unscoped), flow_ids / terminating_flow_ids, and thread
times (behaviour-parsers.md §3.4, §3.7).

usage: python3 tools/gen_track_event_legacy.py  (needs `pip install perfetto`)"""
import os
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
t=pb.Trace()
TE=pb.TrackEvent
def pk(seq=1, ts=None):
    p=t.packet.add(); p.trusted_packet_sequence_id=seq
    if ts is not None: p.timestamp=ts
    return p
p=pk(); p.incremental_state_cleared=True; p.thread_descriptor.pid=5; p.thread_descriptor.tid=6
def ev(ts, ph=None, **kw):
    e=pk(ts=ts).track_event
    for k,v in kw.items():
        if k=='leg':
            for kk,vv in v.items(): setattr(e.legacy_event,kk,vv)
        elif isinstance(v,list): getattr(e,k).extend(v)
        else: setattr(e,k,v)
    if ph: e.legacy_event.phase=ord(ph)
    return e
ev(100,'X',name='x', leg={'duration_us':5})
ev(200,'S',name='S1',categories=['c'], leg={'unscoped_id':9})
ev(210,'T',name='S1',categories=['c'], leg={'unscoped_id':9})
ev(215,'p',name='S1',categories=['c'], leg={'unscoped_id':9})
ev(220,'F',name='S1',categories=['c'], leg={'unscoped_id':9})
ev(300,'b',name='L',categories=['c'], leg={'local_id':3})
ev(310,'e',name='L',categories=['c'], leg={'local_id':3})
ev(320,'b',name='G',categories=['c'], leg={'global_id':4, 'id_scope':'sc'})
ev(330,'e',name='G',categories=['c'], leg={'global_id':4, 'id_scope':'sc'})
ev(400,'R',name='mark')
ev(410,'I',name='gi', leg={'instant_event_scope':TE.LegacyEvent.SCOPE_PROCESS})
e=ev(420,'M',name='thread_name'); a=e.debug_annotations.add(); a.name='name'; a.string_value='renamed'
e=ev(430,'M',name='process_name'); a=e.debug_annotations.add(); a.name='name'; a.string_value='procname'
ev(440,'O',name='obj')
# flows
ev(500,'s',name='fl',categories=['f'], leg={'unscoped_id':77})
ev(500,'B',name='outer')
ev(510,'f',name='fl',categories=['f'], leg={'unscoped_id':77, 'bind_to_enclosing':True})
ev(520,'E')
ev(530,'s',name='bad',categories=['f'], leg={'global_id':1})
e=ev(600,None,name='fi', type=TE.TYPE_INSTANT, flow_ids=[1000])
e=ev(610,None,name='fi2', type=TE.TYPE_INSTANT, flow_ids=[1000])
e=ev(620,None,name='fi3', type=TE.TYPE_INSTANT, terminating_flow_ids=[1000])
e=ev(630,None,name='fi4', type=TE.TYPE_INSTANT, flow_ids=[1000])
e=ev(700,None,name='tt', type=TE.TYPE_SLICE_BEGIN, thread_time_absolute_us=10)
e=ev(710,None, type=TE.TYPE_SLICE_END, thread_time_absolute_us=10)
e=ev(720,None,name='tt2', type=TE.TYPE_SLICE_BEGIN, thread_time_absolute_us=10)
e=ev(730,None, type=TE.TYPE_SLICE_END, thread_time_absolute_us=12)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'data',
                   'track_event', 'legacy_phases.pftrace')
open(OUT, 'wb').write(t.SerializeToString())
