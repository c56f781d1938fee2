#!/usr/bin/env python3
"""Writes tests/data/profile/stack_samples.pftrace: generic stack sampler packets
(`stack_sample`) exercising what Trace Processor reads of them: sequence defaults (source,
primary and follower counters), interned task / execution contexts and counter descriptors,
a per-cpu counter with a unit string and a multiplier, inline and interned callstacks (an
interned frame with a source location), an async context, and a second sequence without
defaults whose primary counter counts page faults (not cpu time).

usage: python3 tools/gen_profile_traces.py  (needs `pip install perfetto`)"""
import os
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'data', 'profile',
                   'stack_samples.pftrace')
SS = pb.StackSample

trace = pb.Trace()

p = trace.packet.add()
proc = p.process_tree.processes.add()
proc.pid = 200
proc.ppid = 1
proc.cmdline.append('sampled')

# Sequence 1: defaults, interned data.
p = trace.packet.add()
p.timestamp = 100
p.trusted_packet_sequence_id = 1
p.incremental_state_cleared = True
d = p.trace_packet_defaults.stack_sample_defaults
d.source = 'py.cpu'
d.primary_descriptor.name = 'cpu-time'
d.primary_descriptor.unit = SS.UNIT_NANOSECONDS
f = d.follower_descriptors.add()
f.name = 'alloc'
f.unit_str = 'KiB'
f.unit_multiplier = 1024
i = p.interned_data
i.function_names.add(iid=1, str=b'leaf')
i.function_names.add(iid=2, str=b'root')
i.source_paths.add(iid=1, str=b'/src/leaf.py')
i.mapping_paths.add(iid=1, str=b'py')
i.mappings.add(iid=1, path_string_ids=[1])
i.frames.add(iid=1, function_name_id=2, mapping_id=1, rel_pc=16)
i.frames.add(iid=2, function_name_id=1, mapping_id=1, rel_pc=32, source_path_iid=1,
             line_number=7, kind=pb.Frame.KIND_JIT)
i.callstacks.add(iid=1, frame_ids=[1, 2])
i.stack_sample_task_contexts.add(iid=1, pid=200, tid=201)
i.stack_sample_execution_contexts.add(iid=1, cpu=3, mode=SS.MODE_USER)
i.stack_sample_counter_descriptors.add(iid=5, name='cycles', unit=SS.UNIT_CPU_CYCLES,
                                           scope=SS.CounterDescriptor.SCOPE_CPU)
i.stack_sample_async_context_descriptors.add(iid=9, name='loop', kind='coroutine')

# An interned everything sample, with a per-cpu follower named by iid.
p = trace.packet.add()
p.timestamp = 1000
p.trusted_packet_sequence_id = 1
s = p.stack_sample
s.task_context_iid = 1
s.execution_context_iid = 1
s.callstack_iid = 1
s.primary_weight = 250
s.follower_descriptor_iids.append(5)
s.follower_weights.append(7)

# An inline sample in an async context, with the defaults' follower (×1024).
p = trace.packet.add()
p.timestamp = 2000
p.trusted_packet_sequence_id = 1
s = p.stack_sample
s.task_context.pid = 200
s.task_context.async_id = 9
fr = s.callstack.frames.add()
fr.function_name = 'root'
fr = s.callstack.frames.add()
fr.function_name = 'inline_leaf'
fr.source_file = '/src/x.py'
fr.line_number = 3
s.primary_weight = 500
s.follower_weights.append(2)

# A sample without a callstack: a profiler sample, not a stack sample.
p = trace.packet.add()
p.timestamp = 3000
p.trusted_packet_sequence_id = 1
p.stack_sample.primary_weight = 1

# Sequence 2: no defaults; its primary counter (inline) counts page faults.
p = trace.packet.add()
p.timestamp = 4000
p.trusted_packet_sequence_id = 2
s = p.stack_sample
s.primary_descriptor.name = 'faults'
s.primary_descriptor.unit = SS.UNIT_PAGE_FAULTS
s.task_context.pid = 200
s.task_context.tid = 202
s.callstack.frames.add().function_name = 'faulting'
s.primary_weight = 3

with open(OUT, 'wb') as out:
    out.write(trace.SerializeToString())
print(OUT)
