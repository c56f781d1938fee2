#!/usr/bin/env python3
"""Writes tests/data/chrome/missing_processes.pftrace: Chrome's live-process listings
(`chrome_active_processes`) against its process descriptors, for
`experimental_missing_chrome_processes`. pid 10 is described at each listing (its second
descriptor a re-emission of the same track, 0.1 s after the listing), pid 100 only 1 s after
the first listing, pid 1000 never (it is listed once, before the second listing).

usage: python3 tools/gen_chrome_missing_processes.py  (needs `pip install perfetto`)"""
import os
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'data', 'chrome',
                   'missing_processes.pftrace')

trace = pb.Trace()


def listing(ts, pids):
    p = trace.packet.add()
    p.timestamp = ts
    p.trusted_packet_sequence_id = 1
    if ts == 1:
        p.incremental_state_cleared = True
    p.track_event.type = pb.TrackEvent.TYPE_INSTANT
    p.track_event.name = 'ActiveProcesses'
    p.track_event.chrome_active_processes.pid.extend(pids)


def descriptor(ts, uuid, pid, seq):
    p = trace.packet.add()
    p.timestamp = ts
    p.trusted_packet_sequence_id = seq
    p.track_descriptor.uuid = uuid
    p.track_descriptor.process.pid = pid


listing(1, [10, 100, 1000])
descriptor(1, 1, 10, 2)
descriptor(1_000_000_000, 2, 100, 3)
listing(5_000_000_000, [10])
descriptor(5_100_000_000, 1, 10, 2)
open(OUT, 'wb').write(trace.SerializeToString())
