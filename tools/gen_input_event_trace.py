#!/usr/bin/env python3
"""Writes tests/data/android/input_events.pftrace: Android input events (the input
dispatcher's trace, TracePacket.winscope_extensions → android_input_event) for
tests/android.rs: a motion event with two pointers, a redacted key event, a dispatch of the
motion to a window, and a view capture (another winscope extension, `winscope.rs`).
Encoded by hand (the perfetto Python package lacks these messages)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pbwire import f_bytes, f_fixed32, f_float, f_int, f_sint  # noqa: E402

def axis(a, v):
    return f_int(1, a) + f_float(2, v)

# AndroidMotionEvent: event_id 1 (fixed32), event_time_nanos 2, source 3, action 4,
# device_id 5, display_id 6 (sint32), flags 8, pointer 9 {axis_value 1, pointer_id 2,
# tool_type 3}, down_time_nanos 17.
motion = (f_fixed32(1, 0xABCD1234) + f_int(2, 5_000_000) + f_int(3, 4098) + f_int(4, 0)
          + f_int(5, 4) + f_sint(6, 0) + f_int(8, 0)
          + f_bytes(9, f_bytes(1, axis(0, 100.5)) + f_bytes(1, axis(1, 200.25)) + f_int(2, 0)
                    + f_int(3, 1))
          + f_bytes(9, f_bytes(1, axis(0, 7.0)) + f_int(2, 1) + f_int(3, 1))
          + f_int(17, 4_900_000))
# AndroidKeyEvent: event_id 1, event_time_nanos 2, down_time_nanos 3, source 4, action 5,
# device_id 6, display_id 7 (sint32), key_code 8, scan_code 9, repeat_count 11.
key = (f_fixed32(1, 77) + f_int(2, 6_000_000) + f_int(3, 6_000_000) + f_int(4, 257)
       + f_int(5, 1) + f_int(6, 2) + f_sint(7, -1) + f_int(8, 0) + f_int(9, 0) + f_int(11, 0))
# AndroidWindowInputDispatchEvent: event_id 1, vsync_id 2, window_id 3, dispatched_pointer 4
# {pointer_id 1, x_in_display 2, y_in_display 3, axis_value_in_window 4}, resolved_flags 5.
dispatch = (f_fixed32(1, 0xABCD1234) + f_int(2, 99) + f_int(3, 12)
            + f_bytes(4, f_int(1, 0) + f_float(2, 100.5) + f_float(3, 200.25)
                      + f_bytes(4, axis(0, 10.0)))
            + f_int(5, 0))

def packet(ts, body):
    # timestamp 8, trusted_packet_sequence_id 10, winscope_extensions 112.
    return f_bytes(1, f_int(8, ts) + f_int(10, 1) + f_bytes(112, body))

def input_event(field, message):
    # WinscopeExtensionsImpl.android_input_event = 5 → AndroidInputEvent oneof `event`.
    return f_bytes(5, f_bytes(field, message))

trace = (packet(5_000_100, input_event(1, motion))   # dispatcher_motion_event
         + packet(6_000_100, input_event(4, key))    # dispatcher_key_event_redacted
         + packet(6_500_000, input_event(5, dispatch))
         + packet(7_000_000, f_bytes(4, f_int(1, 1))))  # viewcapture

out = sys.argv[1] if len(sys.argv) > 1 else 'tests/data/android/input_events.pftrace'
with open(out, 'wb') as f:
    f.write(trace)
