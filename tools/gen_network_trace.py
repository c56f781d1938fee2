#!/usr/bin/env python3
"""Writes tests/data/android/network_packets.pftrace: an Android network trace (the
android.network_packets data source) for tests/android.rs. Single packets in both directions
(one of a secondary user's uid, named through its app id), a bundle of three single packets
and two overlapping aggregates on an interned context, a bundle whose context was never
interned, one whose timestamps outnumber its lengths, and a packages list written after
the packets. Encoded by hand (the network
packets are not in the perfetto Python package's descriptors)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pbwire import f_bytes, f_int, packed  # noqa: E402

# NetworkPacketEvent: direction 1, interface 2, length 3, uid 4, tag 5, ip_proto 6,
# tcp_flags 7, local_port 8, remote_port 9, icmp_type 10, icmp_code 11.
def event(direction, iface, **f):
    out = f_int(1, direction) + f_bytes(2, iface)
    for key, num in [('length', 3), ('uid', 4), ('tag', 5), ('ip_proto', 6), ('tcp_flags', 7),
                     ('local_port', 8), ('remote_port', 9), ('icmp_type', 10), ('icmp_code', 11)]:
        if key in f:
            out += f_int(num, f[key])
    return out

# TracePacket: timestamp 8, trusted_packet_sequence_id 10, sequence_flags 13,
# interned_data 12, packages_list 47, network_packet 88, network_packet_bundle 92.
def packet(seq, body, ts=None, flags=None):
    out = b''
    if ts is not None:
        out += f_int(8, ts)
    out += f_int(10, seq)
    if flags is not None:
        out += f_int(13, flags)
    return f_bytes(1, out + body)

EGRESS, INGRESS = 2, 1
trace = b''
trace += packet(1, f_bytes(88, event(EGRESS, 'wlan0', length=58, uid=10123, tag=0x407,
                                     ip_proto=6, tcp_flags=2, local_port=5100,
                                     remote_port=443)), ts=1000)
trace += packet(1, f_bytes(88, event(INGRESS, 'wlan0', length=100, uid=1010123, ip_proto=17)),
                ts=1500)
# InternedData.packet_context (30): NetworkPacketContext {iid 1, ctx 2}.
ctx = event(EGRESS, 'rmnet0', uid=1000, ip_proto=1, icmp_type=8, icmp_code=0)
interned = f_bytes(12, f_bytes(30, f_int(1, 1) + f_bytes(2, ctx)))
# NetworkPacketBundle: iid 1, ctx 2, packet_timestamps 3, packet_lengths 4, total_packets 5,
# total_duration 6, total_length 7.
trace += packet(2, interned + f_bytes(92, f_int(1, 1) + packed(3, [0, 50, 100])
                                      + packed(4, [10, 20, 30])), ts=2000, flags=1)
trace += packet(2, f_bytes(92, f_int(1, 1) + f_int(5, 5) + f_int(6, 400) + f_int(7, 500)),
                ts=3000)
trace += packet(2, f_bytes(92, f_int(1, 1) + f_int(5, 2) + f_int(6, 100) + f_int(7, 80)),
                ts=3100)
trace += packet(2, f_bytes(92, f_int(1, 7) + f_int(5, 5) + f_int(6, 400) + f_int(7, 500)),
                ts=3200)
# Two timestamps, one length: the packet that pairs up is kept, the bundle counted.
trace += packet(2, f_bytes(92, f_int(1, 1) + packed(3, [0, 10]) + packed(4, [40])), ts=3300)
# PackagesList.packages (1): name 1, uid 2.
trace += packet(3, f_bytes(47, f_bytes(1, f_bytes(1, 'com.example.app') + f_int(2, 10123))))

out = sys.argv[1] if len(sys.argv) > 1 else 'tests/data/android/network_packets.pftrace'
with open(out, 'wb') as f:
    f.write(trace)
