#!/usr/bin/env python3
"""Writes small hand-built traces (from text protos) for the tests of Android-family rules
that the reference's own visible cases do not cover (tests/data/android, tests/data/kernel).
Each names the rule of reference/behaviour-android.md or of Trace Processor's parsers it
exercises.

usage: python3 tools/gen_android_family_traces.py  (needs `pip install perfetto protobuf`)"""

import os
from google.protobuf import text_format
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'data')

TRACES = {
    # behaviour-android §3.1: a log line with both a message and args keeps its message,
    # the ` name=value` pieces follow it; without a message the first space is dropped.
    ('android', 'log_message_with_args.pftrace'): r'''
packet { clock_snapshot { clocks { clock_id: 6 timestamp: 1000 } clocks { clock_id: 1 timestamp: 1000 } } }
packet { timestamp: 50 android_log {
  events { timestamp: 4000 pid: 10 tid: 10 tag: "evt" args { name: "a" int_value: 3 } args { name: "b" string_value: "x" } }
  events { timestamp: 7000 pid: 12 tid: 13 tag: "t" prio: PRIO_FATAL message: "m" args { name: "k" int_value: -1 } args { name: "f" float_value: 1.5 } }
} }
''',
    # Trace Processor's ParseLwisTracingMarkWrite / ParseSamsungTracingMarkWrite: LWIS
    # markers are named by `func_name` and need a type; Samsung markers need a type.
    ('kernel', 'lwis_samsung_markers.pftrace'): r'''
packet { ftrace_events { cpu: 0
  event { timestamp: 900 pid: 14 lwis_tracing_mark_write { lwis_name: "lwis-x" type: 66 pid: 10 func_name: "lwis_func" value: 0 } }
  event { timestamp: 950 pid: 14 lwis_tracing_mark_write { lwis_name: "lwis-x" type: 69 pid: 10 func_name: "lwis_func" value: 0 } }
  event { timestamp: 955 pid: 14 lwis_tracing_mark_write { lwis_name: "lwis-x" type: 67 pid: 10 func_name: "lwis_counter" value: 12 } }
  event { timestamp: 960 pid: 14 lwis_tracing_mark_write { lwis_name: "lwis-x" pid: 10 func_name: "no_type" } }
  event { timestamp: 970 pid: 15 samsung_tracing_mark_write { pid: 10 trace_name: "sam" trace_type: 66 } }
  event { timestamp: 980 pid: 15 samsung_tracing_mark_write { pid: 10 trace_name: "sam" trace_type: 69 } }
  event { timestamp: 990 pid: 15 samsung_tracing_mark_write { pid: 10 trace_name: "no_type" trace_begin: 1 } }
} }
''',
    # Trace Processor's AndroidKernelWakelocksModule: values accumulate per interned id;
    # an unknown id is counted; each error flag bit (1 zero value, 2 non-monotonic, 4
    # implausibly large) is counted once per packet.
    ('android', 'kernel_wakelock_errors.pftrace'): r'''
packet { timestamp: 1000000000 trusted_packet_sequence_id: 1 kernel_wakelock_data {
  wakelock { wakelock_id: 1 wakelock_name: "wl_kernel" wakelock_type: WAKELOCK_TYPE_KERNEL }
  wakelock_id: 1 time_held_millis: 100
  error_flags: 5
} }
packet { timestamp: 2000000000 trusted_packet_sequence_id: 1 kernel_wakelock_data {
  wakelock_id: 1 wakelock_id: 3 time_held_millis: 50 time_held_millis: 7
  error_flags: 3
} }
''',
    # Trace Processor's GpuEventParser::ParseVulkanMemoryEvent: one
    # vulkan_memory_allocations row per event (annotations as args by interned keys, the
    # caller an interned function name) and running totals per scope / memory type.
    ('android', 'vulkan_memory.pftrace'): r'''
packet { trusted_packet_sequence_id: 1 sequence_flags: 1 timestamp: 10 interned_data {
  function_names { iid: 1 str: "vkAllocateMemory" }
  vulkan_memory_keys { iid: 1 str: "key_int" } vulkan_memory_keys { iid: 2 str: "key_str" } vulkan_memory_keys { iid: 3 str: "value_str" }
} }
packet { trusted_packet_sequence_id: 1 sequence_flags: 2 timestamp: 100 vulkan_memory_event { source: SOURCE_DRIVER operation: OP_CREATE timestamp: 100 pid: 42 memory_address: 4096 memory_size: 64 caller_iid: 1 allocation_scope: SCOPE_COMMAND
  annotations { key_iid: 1 int_value: 7 } annotations { key_iid: 2 string_iid: 3 } } }
packet { trusted_packet_sequence_id: 1 sequence_flags: 2 timestamp: 110 vulkan_memory_event { source: SOURCE_DRIVER operation: OP_CREATE timestamp: 110 pid: 43 memory_size: 16 allocation_scope: SCOPE_COMMAND } }
packet { trusted_packet_sequence_id: 1 sequence_flags: 2 timestamp: 120 vulkan_memory_event { source: SOURCE_DEVICE_MEMORY operation: OP_CREATE timestamp: 120 pid: 42 device: 1 device_memory: 2 memory_type: 3 heap: 0 memory_size: 1000 } }
packet { trusted_packet_sequence_id: 1 sequence_flags: 2 timestamp: 130 vulkan_memory_event { source: SOURCE_BUFFER operation: OP_BIND timestamp: 130 pid: 42 device: 1 device_memory: 2 memory_type: 3 memory_size: 500 object_handle: 77 } }
packet { trusted_packet_sequence_id: 1 sequence_flags: 2 timestamp: 140 vulkan_memory_event { source: SOURCE_DRIVER operation: OP_DESTROY timestamp: 140 pid: 42 memory_size: 64 allocation_scope: SCOPE_COMMAND } }
packet { trusted_packet_sequence_id: 1 sequence_flags: 2 timestamp: 150 vulkan_memory_event { source: SOURCE_DEVICE operation: OP_ANNOTATIONS timestamp: 150 pid: 42 } }
''',
}


def main():
    for (sub, name), text in TRACES.items():
        trace = text_format.Parse(text, Trace())
        path = os.path.join(ROOT, sub, name)
        with open(path, 'wb') as f:
            f.write(trace.SerializeToString())
        print('wrote', path)


if __name__ == '__main__':
    main()
