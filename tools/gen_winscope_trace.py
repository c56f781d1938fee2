#!/usr/bin/env python3
"""Writes tests/data/android/winscope.pftrace: winscope packets for tests/android.rs —
shell transitions (transition 7 in three packets from window manager and shell, 10 merged,
11 aborted without a dispatch), shell handler mappings, two SurfaceFlinger layers snapshots
(two layers, then one), a SurfaceFlinger transactions entry and a window manager entry
(winscope_extensions.windowmanager) with a field its descriptor lacks, and one entry of
each input method kind, two view captures (interned strings; one missing) and ProtoLog
messages decoded with a later viewer config.
Encoded by hand (the perfetto Python package lacks these messages)."""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pbwire import f_bytes, f_float, f_int, packed, varint  # noqa: E402


def f_fixed64(n, v):
    return varint(n << 3 | 1) + struct.pack('<q', v)


def packet(ts, field, body, seq=1):
    # timestamp 8, trusted_packet_sequence_id 10.
    return f_bytes(1, f_int(8, ts) + f_int(10, seq) + f_bytes(field, body))


# ShellTransition: id 1, create_time_ns 2, send_time_ns 3, dispatch_time_ns 4,
# merge_time_ns 5, shell_abort_time_ns 7, finish_time_ns 9, start_transaction_id 10,
# finish_transaction_id 11, handler 12, type 13, targets 14 {mode 1, layer_id 2,
# window_id 3, flags 4}, merge_target 15, flags 16.
wm_sent = (f_int(1, 7) + f_int(2, 1000) + f_int(3, 1500) + f_int(10, 5604932321952)
           + f_int(11, 5604932321953) + f_int(13, 1) + f_int(16, 0)
           + f_bytes(14, f_int(1, 1) + f_int(2, 244) + f_int(3, 219036708) + f_int(4, 0))
           + f_bytes(14, f_int(1, 2) + f_int(2, 10) + f_int(3, 12)))
shell_dispatched = f_int(1, 7) + f_int(4, 2000) + f_int(12, 2) + f_int(13, 3)
wm_finished = f_int(1, 7) + f_int(9, 9000)
merged = f_int(1, 10) + f_int(4, 2500) + f_int(5, 3000) + f_int(15, 7)
aborted = f_int(1, 11) + f_int(7, 4000)
# ShellHandlerMappings: mapping 1 {id 1, name 2}.
handlers = (f_bytes(1, f_int(1, 1) + f_bytes(2, 'DefaultTransitionHandler'))
            + f_bytes(1, f_int(1, 2) + f_bytes(2, 'RecentsTransitionHandler')))

# LayersSnapshotProto: elapsed_realtime_nanos 1 (sfixed64), where 2, layers 3 {layers 1},
# displays 7 {id 1, name 2, size 4 {w 1, h 2}}, vsync_id 8.
# LayerProto: id 1, name 2, children 3 (packed), z 10, color 20 {r 1, g 2, b 3, a 4},
# parent 25, hwc_composition_type 35 (enum: 2 = HWC_TYPE_DEVICE).
layer3 = (f_int(1, 3) + f_bytes(2, 'Display 0') + packed(3, [4, 5]) + f_int(25, -1)
          + f_int(10, 0) + f_bytes(20, f_float(1, 1.0) + f_float(4, 0.5)) + f_int(35, 2))
layer4 = f_int(1, 4) + f_bytes(2, 'Wallpaper#4') + f_int(25, 3)
snapshot1 = (f_fixed64(1, 2748300281655) + f_bytes(2, 'visibleRegionsDirty')
             + f_bytes(3, f_bytes(1, layer3) + f_bytes(1, layer4))
             + f_bytes(7, f_int(1, 4619827677550801152) + f_bytes(2, 'Common Panel')
                       + f_bytes(4, f_int(1, 1080) + f_int(2, 2400)))
             + f_int(8, 24766))
snapshot2 = f_fixed64(1, 2749500341063) + f_bytes(3, f_bytes(1, f_int(1, 5)))

# TransactionTraceEntry: elapsed_realtime_nanos 1, vsync_id 2, transactions 3 {pid 1,
# uid 2, vsync_id 3, transaction_id 6, layer_changes 7 {layer_id 1, what 2, x 3}},
# destroyed_layers 5.
transactions = (f_int(1, 2749532892211) + f_int(2, 24767)
                + f_bytes(3, f_int(1, 100) + f_int(2, 1000) + f_int(6, 5)
                          + f_bytes(7, f_int(1, 4) + f_int(2, 2) + f_float(3, 1.5)))
                + f_int(5, 3))

# WindowManagerTraceEntry (winscope_extensions 112 → windowmanager 6): elapsed_realtime_nanos
# 1 (fixed64), where 2, window_manager_service 3 {policy 1 {rotation_mode 2}, focused_app 4};
# field 999 is not in the descriptor.
wm = (f_fixed64(1, 558296470731) + f_bytes(2, 'trace.enable')
      + f_bytes(3, f_bytes(1, f_int(2, 1)) + f_bytes(4, 'com.example/.Main'))
      + f_bytes(999, b'zz'))

# Input method entries (winscope_extensions → inputmethod_clients 1, inputmethod_service 2,
# inputmethod_manager_service 3): elapsed_realtime_nanos 1 (fixed64), where 2, then
# client 3 {display_id 1} / input_method_service 3 {views_created 2} /
# input_method_manager_service 3 {cur_method_id 1}.
ime_clients = f_fixed64(1, 700) + f_bytes(2, 'Focus') + f_bytes(3, f_int(1, 0))
ime_service = f_fixed64(1, 800) + f_bytes(2, 'onCreate') + f_bytes(3, f_int(2, 1))
ime_manager = f_fixed64(1, 900) + f_bytes(2, 'x') + f_bytes(3, f_bytes(1, 'com.ime/.Ime'))

# View capture (winscope_extensions → viewcapture 4): package_name_iid 1, window_name_iid 2,
# views 3 {id 1, hashcode 3, view_id_iid 4, class_name_iid 5, alpha 16}; the strings are
# interned on the sequence (InternedData viewcapture_package_name 38, window_name 39,
# view_id 40, class_name 41: {iid 1, str 2}); the second capture names a class never
# interned.
def interned(field, iid, text):
    return f_bytes(field, f_int(1, iid) + f_bytes(2, text))


vc_interned = (interned(38, 1, 'com.example.launcher') + interned(39, 1, 'MainWindow')
               + interned(40, 1, 'NO_ID') + interned(41, 1, 'com.android.DecorView'))
vc1 = (f_int(1, 1) + f_int(2, 1)
       + f_bytes(3, f_int(1, 0) + f_int(3, 182652084) + f_int(4, 1) + f_int(5, 1)
                 + f_float(16, 1.0)))
vc2 = f_int(1, 1) + f_bytes(3, f_int(1, 0) + f_int(5, 9))
# interned_data 12, sequence_flags 13 (1 = incremental state cleared).
vc_packets = (f_bytes(1, f_int(8, 1000) + f_int(10, 7) + f_int(13, 1)
                      + f_bytes(12, vc_interned) + f_bytes(112, f_bytes(4, vc1)))
              + f_bytes(1, f_int(8, 1100) + f_int(10, 7) + f_int(13, 2)
                        + f_bytes(112, f_bytes(4, vc2))))

# ProtoLog: messages (message_id 1 fixed64, str_param_iids 2, sint64_params 3 (packed
# zigzag), double_params 4 (packed), boolean_params 5, stacktrace_iid 6) before the viewer
# config (messages 1 {message_id 1, message 2, level 3, group_id 4, location 5}, groups 2
# {id 1, name 2, tag 3}); strings interned (InternedData protolog_string_args 36,
# protolog_stacktrace 37); message 99 has no format; message 3 names a string never
# interned.
def f_fixed64u(n, v):
    return varint(n << 3 | 1) + struct.pack('<Q', v)


def zigzag(v):
    return (v << 1) ^ (v >> 63)


pl_interned = interned(36, 1, 'MyTestString') + interned(37, 1, 'A STACK TRACE')
pl1 = (f_fixed64u(1, 1) + packed(2, [1]) + packed(3, [zigzag(1776)])
       + f_bytes(4, struct.pack('<d', 8.88)) + packed(5, [1]) + f_int(6, 1))
pl2 = (f_fixed64u(1, 2) + packed(3, [zigzag(1776)] * 3 + [zigzag(-5)])
       + f_bytes(4, struct.pack('<ddd', 888.0, 888.0, 0.0001)))
pl3 = f_fixed64u(1, 3) + packed(2, [7])
pl4 = f_fixed64u(1, 99)
config = (f_bytes(1, f_fixed64u(1, 1)
                  + f_bytes(2, 'A string (%s), an int (%d), a double %g, a boolean %b.')
                  + f_int(3, 1) + f_int(4, 1) + f_bytes(5, 'ProtoLogTest.java:1'))
          + f_bytes(1, f_fixed64u(1, 2) + f_bytes(2, 'Ints %d, %o, %x, %d; doubles %f, %e, %g.')
                    + f_int(3, 4) + f_int(4, 2))
          + f_bytes(1, f_fixed64u(1, 3) + f_bytes(2, "Missing '%s', 100%% done") + f_int(3, 5)
                    + f_int(4, 2))
          + f_bytes(2, f_int(1, 1) + f_bytes(2, 'FIRST') + f_bytes(3, 'MyFirstGroup'))
          + f_bytes(2, f_int(1, 2) + f_bytes(2, 'SECOND') + f_bytes(3, 'MySecondGroup')))
pl_packets = (f_bytes(1, f_int(8, 100) + f_int(10, 8) + f_int(13, 1) + f_bytes(12, pl_interned)
                      + f_bytes(104, pl1))
              + f_bytes(1, f_int(8, 110) + f_int(10, 8) + f_int(13, 2) + f_bytes(104, pl2))
              + f_bytes(1, f_int(8, 120) + f_int(10, 8) + f_int(13, 2) + f_bytes(104, pl3))
              + f_bytes(1, f_int(8, 130) + f_int(10, 8) + f_int(13, 2) + f_bytes(104, pl4))
              + packet(200, 105, config, seq=9))

trace = (packet(1500, 96, wm_sent)
         + packet(2000, 96, shell_dispatched, seq=2)
         + packet(2500, 96, merged, seq=2)
         + packet(4000, 96, aborted, seq=2)
         + packet(9000, 96, wm_finished)
         + packet(9500, 97, handlers, seq=2)
         + packet(2748300281655, 93, snapshot1, seq=3)
         + packet(2749500341063, 93, snapshot2, seq=3)
         + packet(2749532892211, 94, transactions, seq=4)
         + packet(558296470731, 112, f_bytes(6, wm), seq=5)
         + packet(700, 112, f_bytes(1, ime_clients), seq=6)
         + packet(800, 112, f_bytes(2, ime_service), seq=6)
         + packet(900, 112, f_bytes(3, ime_manager), seq=6)
         + vc_packets
         + pl_packets)

out = sys.argv[1] if len(sys.argv) > 1 else 'tests/data/android/winscope.pftrace'
with open(out, 'wb') as f:
    f.write(trace)
