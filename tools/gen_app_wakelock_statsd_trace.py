#!/usr/bin/env python3
"""Writes tests/data/android/app_wakelocks_statsd.pftrace for tests/android.rs: app wakelocks
(android.app_wakelocks) and statsd atoms (android.statsd). Wakelocks: two interned
wakelocks acquired and released in one bundle (released in the other order than acquired),
an event of a wakelock never interned, a bundle with more ids than times, and a single
event with its description inline, never released. Atoms: a batch with fewer times than
atoms (one falls back to the packet's time): two named atoms, a vendor atom and an atom not
in the list. Encoded by hand (neither
family is in the perfetto Python package's descriptors)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pbwire import f_bytes, f_int, packed  # noqa: E402


# TracePacket: timestamp 8, trusted_packet_sequence_id 10, interned_data 12,
# sequence_flags 13, statsd_atom 84, app_wakelock_bundle 116.
def packet(seq, body, ts=None, flags=None):
    out = b''
    if ts is not None:
        out += f_int(8, ts)
    out += f_int(10, seq)
    if flags is not None:
        out += f_int(13, flags)
    return f_bytes(1, out + body)


# AppWakelockInfo: iid 1, tag 2, flags 3, owner_pid 4, owner_uid 5, work_uid 6.
def info(iid, tag, flags, pid, uid, work_uid=None):
    out = f_int(1, iid) + f_bytes(2, tag) + f_int(3, flags) + f_int(4, pid) + f_int(5, uid)
    if work_uid is not None:
        out += f_int(6, work_uid)
    return out


# AppWakelockBundle: intern_id 1, encoded_ts 2 ((offset << 1) | acquired), info 3, acquired 4.
def at(offset, acquired):
    return offset << 1 | int(acquired)


trace = b''
# InternedData.app_wakelock_info (42).
interned = f_bytes(12, f_bytes(42, info(1, '*job*/com.example/.Sync', 1, 1234, 10123))
                   + f_bytes(42, info(2, 'AudioMix', 26, 567, 1041, work_uid=10200)))
trace += packet(1, interned + f_bytes(116, packed(1, [1, 2, 1, 2])
                                      + packed(2, [at(0, True), at(10, True), at(30, False),
                                                   at(50, False)])), ts=1000, flags=1)
# Wakelock 7 was never interned; the second bundle has an id without a time.
trace += packet(1, f_bytes(116, packed(1, [7]) + packed(2, [at(5, True)])), ts=2000)
trace += packet(1, f_bytes(116, packed(1, [1, 1]) + packed(2, [at(0, True)])), ts=2100)
trace += packet(1, f_bytes(116, f_bytes(3, info(9, 'inline', 1, 42, 10042)) + f_int(4, 1)),
                ts=2500)


# StatsdAtom: atom 1 (an Atom: one field, numbered by the atom's kind), timestamp_nanos 2.
def atom(kind, payload=b''):
    return f_bytes(1, f_bytes(kind, payload))


trace += packet(2, f_bytes(84, atom(10, f_int(1, 1)) + atom(100001) + atom(88888) + atom(29)
                            + f_int(2, 3100) + f_int(2, 3200) + f_int(2, 3250)), ts=3000)

out = sys.argv[1] if len(sys.argv) > 1 else 'tests/data/android/app_wakelocks_statsd.pftrace'
with open(out, 'wb') as f:
    f.write(trace)
