#!/usr/bin/env python3
"""Cuts a small test trace out of a large Perfetto trace around chosen TrackEvent packets.

For each chosen packet (an index among the file's packets) it keeps the packet's sequence from
its last incremental-state clear up to the packet (so interned data, packet defaults and
incremental clocks still resolve), the first descriptor of every track those packets use (and
its ancestors), the first clock snapshot, and every packet that is not an event, a track
descriptor, a clock snapshot or a Chrome event bundle (config, system info, extension
descriptors, service events, stats, metadata).

    python3 tools/trim_sequence_runs.py IN.pftrace OUT.pftrace INDEX [INDEX ...]
"""
import sys

sys.path.insert(0, '/work/notes/pb')
from perfetto.trace import perfetto_trace_pb2 as pb  # noqa: E402


def main():
    src, out, idx = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
    t = pb.Trace()
    t.ParseFromString(open(src, 'rb').read())
    P = list(t.packet)
    keep = set()
    for i in idx:
        s = P[i].trusted_packet_sequence_id
        j = i
        while j > 0 and not (P[j].trusted_packet_sequence_id == s
                             and (P[j].sequence_flags & 1 or P[j].incremental_state_cleared)):
            j -= 1
        keep.update(k for k in range(j, i + 1) if P[k].trusted_packet_sequence_id == s)
    # Tracks the kept events use (explicit or by default), and their ancestors.
    uuids = set()
    for k in keep:
        p = P[k]
        if p.HasField('track_event') and p.track_event.HasField('track_uuid'):
            uuids.add(p.track_event.track_uuid)
        if p.HasField('trace_packet_defaults'):
            uuids.add(p.trace_packet_defaults.track_event_defaults.track_uuid)
    first = {}
    for k, p in enumerate(P):
        if p.HasField('track_descriptor'):
            first.setdefault(p.track_descriptor.uuid, k)
    todo = list(uuids)
    while todo:
        u = todo.pop()
        k = first.get(u)
        if k is None or k in keep:
            continue
        keep.add(k)
        d = P[k].track_descriptor
        if d.HasField('parent_uuid'):
            todo.append(d.parent_uuid)
    skip = {'track_event', 'track_descriptor', 'clock_snapshot', 'chrome_events'}
    clock = False
    for k, p in enumerate(P):
        kind = p.WhichOneof('data')
        if kind == 'clock_snapshot' and not clock:
            keep.add(k)
            clock = True
        elif kind not in skip:
            keep.add(k)
    o = pb.Trace()
    for k in sorted(keep):
        o.packet.add().CopyFrom(P[k])
    open(out, 'wb').write(o.SerializeToString())
    print(f'{len(keep)} of {len(P)} packets, {o.ByteSize()} bytes')


if __name__ == '__main__':
    main()
