#!/usr/bin/env python3
"""Writes tests/data/chrome/chrome_extensions.pftrace (behaviour-chrome-typed-args §4.1–§4.3):
ChromeTrackEvent extensions Trace Processor preloads, with no extension_descriptor in the
trace — thread_pool_task (1029, enums), current_task (1071), chrome_latency_info (1068,
ChromeLatencyInfo2, same key prefix as the core field 29), chrome_memory_pressure_notification
(1001) whose creation_location_iid names an interned source location (and one that does not
resolve), and an extension number nobody describes (counted in unknown_extension_fields).
usage: python3 tools/chrome_audit/gen_chrome_extensions.py"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tb import *

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'data',
                   'chrome', 'chrome_extensions.pftrace')

t = T()
pk = t.pkt(trusted_packet_sequence_id=1, timestamp=1, sequence_flags=1)
pk.incremental_state_cleared = True
pk.thread_descriptor.pid = 5; pk.thread_descriptor.tid = 10
s = pk.interned_data.source_locations.add(); s.iid = 3; s.file_name = "base\\mem.cc"; s.function_name = "Listen"; s.line_number = 12


def inst(ts, name, extra):
    pk = t.te(ts, flags=2, extra=extra)
    e = pk.track_event; e.type = p.TrackEvent.TYPE_INSTANT; e.name = name


# thread_pool_task: task_priority USER_BLOCKING, execution_mode SEQUENCED, sequence_token -3.
inst(100, "pool", fl(1029, fv(1, 3) + fv(2, 2) + fv(3, -3)))
# current_task: event_offset_from_task_start_time_us 7, task_start_time_us 9.
inst(200, "task", fl(1071, fv(1, 7) + fv(2, 9)))
# chrome_latency_info (1068): trace_id 42.
inst(300, "latency2", fl(1068, fv(1, 42)))
# chrome_memory_pressure_notification: MODERATE, created at interned location 3 / unknown 99.
inst(400, "pressure", fl(1001, fv(1, 1) + fv(2, 3)))
inst(500, "pressure_unknown", fl(1001, fv(1, 2) + fv(2, 99)))
# An extension number nothing describes.
inst(600, "unknown", fv(9999, 1))
t.write(OUT)
