#!/usr/bin/env python3
"""Writes tests/data/android/android_probes.pftrace: a small Android system trace for the tests and
the screen snapshots. An app (com.example.app, pid 1000) and SurfaceFlinger (pid 666) with
FrameTimeline frames (one janky), logcat lines, the packages list, process memory,
meminfo and battery counters. Encoded by hand (FrameTimelineEvent is not in the perfetto
Python package's descriptors)."""

import struct
import sys

def varint(v):
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)

def f_int(n, v):
    return varint(n << 3) + varint(v)

def f_bytes(n, b):
    if isinstance(b, str):
        b = b.encode()
    return varint(n << 3 | 2) + varint(len(b)) + b

def f_float(n, v):
    return varint(n << 3 | 5) + struct.pack("<f", v)

def msg(*fields):
    return b"".join(fields)

BOOT0 = 1_000_000_000
REAL0 = 1_700_000_000_000_000_000
MS = 1_000_000

packets = []
def packet(*fields, ts=None):
    body = msg(*fields, f_int(10, 1))
    if ts is not None:
        body = f_int(8, ts) + body
    packets.append(f_bytes(1, body))

# Clocks: BOOTTIME (6) and REALTIME (1) at the same instant.
packet(f_bytes(6, msg(f_bytes(1, msg(f_int(1, 6), f_int(2, BOOT0))),
                      f_bytes(1, msg(f_int(1, 1), f_int(2, REAL0))))), ts=BOOT0)
packet(f_bytes(2, msg(
    f_bytes(1, msg(f_int(1, 1000), f_int(2, 1), f_bytes(3, "com.example.app"), f_int(5, 10100))),
    f_bytes(1, msg(f_int(1, 666), f_int(2, 1), f_bytes(3, "/system/bin/surfaceflinger"), f_int(5, 1000))),
    f_bytes(2, msg(f_int(1, 1001), f_int(3, 1000), f_bytes(2, "RenderThread"))),
)), ts=BOOT0)
packet(f_bytes(47, msg(
    f_bytes(1, msg(f_bytes(1, "com.example.app"), f_int(2, 10100), f_int(5, 42))),
    f_bytes(1, msg(f_bytes(1, "com.android.systemui"), f_int(2, 10050), f_int(5, 7))),
)))

def ft(kind, fields, ts):
    packet(f_bytes(76, f_bytes(kind, msg(*fields))), ts=ts)

cookie = 0
for i, (token, jank) in enumerate([(100, 1), (101, 64), (102, 1)]):
    start = BOOT0 + 10 * MS + i * 20 * MS
    display = token + 1000
    cookie += 1
    ft(1, [f_int(1, cookie), f_int(2, display), f_int(3, 666)], start)
    ft(5, [f_int(1, cookie)], start + 16 * MS)
    cookie += 1
    ft(2, [f_int(1, cookie), f_int(2, display), f_int(3, 666), f_int(4, 1), f_int(5, 1),
           f_int(6, 0), f_int(7, 1), f_int(8, 1)], start + 2 * MS)
    ft(5, [f_int(1, cookie)], start + 14 * MS)
    cookie += 1
    ft(3, [f_int(1, cookie), f_int(2, token), f_int(3, display), f_int(4, 1000),
           f_bytes(5, "com.example.app/MainActivity#0")], start)
    ft(5, [f_int(1, cookie)], start + 16 * MS)
    cookie += 1
    late = 10 * MS if jank != 1 else 0
    ft(4, [f_int(1, cookie), f_int(2, token), f_int(3, display), f_int(4, 1000),
           f_bytes(5, "com.example.app/MainActivity#0"), f_int(6, 2 if late else 1),
           f_int(7, 0 if late else 1), f_int(8, 0), f_int(9, jank), f_int(10, 1),
           f_int(12, 3 if late else 1)], start + MS)
    ft(5, [f_int(1, cookie)], start + 15 * MS + late)

logs = [
    (5, 1000, 1000, 4, "ActivityManager", "Start proc 1000:com.example.app"),
    (12, 1000, 1001, 3, "OpenGLRenderer", "Davey! duration=26ms"),
    (31, 1000, 1000, 5, "Choreographer", "Skipped 3 frames!  The application may be doing too much work."),
    (47, 666, 666, 6, "SurfaceFlinger", "Buffer stuffing on layer com.example.app"),
    (80, 1000, 1000, 2, "example", "idle"),
]
events = []
for ms, pid, tid, prio, tag, text in logs:
    events.append(f_bytes(1, msg(f_int(1, 0), f_int(2, pid), f_int(3, tid),
                                 f_int(5, REAL0 + ms * MS), f_bytes(6, tag), f_int(7, prio),
                                 f_bytes(8, text))))
packet(f_bytes(39, msg(*events)), ts=BOOT0 + 90 * MS)

for i, rss in enumerate([120_000, 180_000, 150_000]):
    t = BOOT0 + i * 40 * MS
    packet(f_bytes(9, f_bytes(1, msg(f_int(1, 1000), f_int(3, rss), f_int(4, rss // 2)))), ts=t)
    packet(f_bytes(7, msg(f_bytes(1, msg(f_int(1, 2), f_int(2, 900_000 - rss))),
                          f_bytes(1, msg(f_int(1, 3), f_int(2, 1_500_000 - rss))))), ts=t)
    packet(f_bytes(38, msg(f_float(2, 80.0 - i), f_int(3, -250_000 - 10_000 * i))), ts=t)

sys.stdout.buffer.write(b"".join(packets))
