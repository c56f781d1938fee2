#!/usr/bin/env python3
"""Writes two traces to tests/data/profile for tests/profile.rs:

- module_symbols_paths.pftrace: a perf sample whose callstack has frames at 0x10, 0x20 and
  0x30 of /system/lib64/libc.so (20-byte raw build id), then ModuleSymbols for that path and
  build id (0x10 with two lines, 0x99 where no frame is), ModuleSymbols naming the build id
  under another path (0x30: no mapping has both), and ModuleSymbols for an unknown module.
- heapprofd_stats.pftrace: two heapprofd dumps (index 0 and 3) of pids 2 and 3: pid 2's
  dump reports a client error (INVALID_STACK_BOUNDS = 2), a sampling interval adjusted from
  4096 to 8192 and unwinding stats, and its callstack has two frames of a library under
  /data/local/tmp without a build id; pid 3's dump has no stats and no samples.
- heapprofd_two_heaps.pftrace: two continuous dumps of pid 2, each with the libc.malloc and
  com.android.art heaps on one callstack; only libc.malloc grows in the second.
- deobfuscate_frames.pftrace: one heapprofd dump whose callstack has a frame `a.f1` in each
  of five mappings (an app of com.example.app, framework.jar, the JIT cache, SystemUIGoogle's
  APK, another app), then maps of com.example.app and com.android.systemui that rename
  `a.f1`.

usage: python3 tools/gen_profile_symbols_heapprofd.py  (needs `pip install perfetto`)"""
import os

try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
except ImportError:  # protos compiled elsewhere: put their root on PYTHONPATH
    from perfetto.trace import perfetto_trace_pb2 as pb

DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'data', 'profile')
BUILD_ID = b'\x01\x02\x03\x04' * 5


def clocks(trace):
    cs = trace.packet.add().clock_snapshot
    for cid in (6, 1, 2, 3, 4, 5):
        c = cs.clocks.add()
        c.clock_id = cid
        c.timestamp = 0


def processes(trace, procs):
    p = trace.packet.add()
    p.timestamp = 1
    p.trusted_packet_sequence_id = 1
    for pid, ppid, cmd in procs:
        pr = p.process_tree.processes.add()
        pr.pid = pid
        pr.ppid = ppid
        pr.cmdline.append(cmd)


def module_symbols():
    t = pb.Trace()
    clocks(t)
    processes(t, [(10, 1, 'app')])
    p = t.packet.add()
    p.timestamp = 1
    p.trusted_packet_sequence_id = 1
    p.sequence_flags = 1
    p.incremental_state_cleared = True
    p.trace_packet_defaults.perf_sample_defaults.timebase.frequency = 100
    i = p.interned_data
    for iid, name in [(1, b'main'), (2, b'foo'), (3, b'bar')]:
        i.function_names.add(iid=iid, str=name)
    i.build_ids.add(iid=1, str=BUILD_ID)
    for iid, part in [(1, b'system'), (2, b'lib64'), (3, b'libc.so')]:
        i.mapping_paths.add(iid=iid, str=part)
    m = i.mappings.add(iid=1, build_id=1, start=0x1000, end=0x2000)
    m.path_string_ids.extend([1, 2, 3])
    for iid, pc in [(1, 0x10), (2, 0x20), (3, 0x30)]:
        i.frames.add(iid=iid, function_name_id=iid, mapping_id=1, rel_pc=pc)
    i.callstacks.add(iid=1, frame_ids=[1, 2, 3])
    p = t.packet.add()
    p.timestamp = 100
    p.trusted_packet_sequence_id = 1
    s = p.perf_sample
    s.cpu = 0
    s.pid = 10
    s.tid = 10
    s.callstack_iid = 1

    def symbols(path, build_id, addresses):
        ms = t.packet.add().module_symbols
        ms.path = path
        ms.build_id = build_id
        for address, lines in addresses:
            a = ms.address_symbols.add(address=address)
            for fn, file, line in lines:
                a.lines.add(function_name=fn, source_file_name=file, line_number=line)

    symbols('/system/lib64/libc.so', BUILD_ID,
            [(0x10, [('inlined', 'a.cc', 5), ('main', 'main.cc', 10)]),
             (0x99, [('nowhere', 'c.cc', 1)])])
    symbols('/vendor/lib64/libc.so', BUILD_ID, [(0x30, [('bar', 'b.cc', 7)])])
    symbols('/unknown.so', b'\x05' * 20, [(0x20, [('foo', 'f.cc', 3)])])
    return t


def heapprofd_stats():
    t = pb.Trace()
    clocks(t)
    processes(t, [(1, 0, 'init'), (2, 1, 'system_server'), (3, 1, 'app')])
    p = t.packet.add()
    p.timestamp = 10
    p.trusted_packet_sequence_id = 1
    p.incremental_state_cleared = True
    pp = p.profile_packet
    pp.index = 0
    pp.strings.add(iid=1, str=b'f1')
    pp.strings.add(iid=2, str=b'libc.so')
    pp.strings.add(iid=3, str=b'data')
    pp.strings.add(iid=4, str=b'local')
    pp.strings.add(iid=5, str=b'tmp')
    pp.frames.add(iid=1, function_name_id=1, mapping_id=1, rel_pc=0x100)
    pp.frames.add(iid=2, function_name_id=1, mapping_id=2, rel_pc=0x200)
    pp.frames.add(iid=3, function_name_id=1, mapping_id=2, rel_pc=0x300)
    pp.callstacks.add(iid=1, frame_ids=[1, 2, 3])
    m = pp.mappings.add(iid=1, start=0, end=0x1000)
    m.path_string_ids.append(2)
    # Pushed to /data/local/tmp without a build id: cannot be symbolized.
    m = pp.mappings.add(iid=2, start=0x1000, end=0x2000)
    m.path_string_ids.extend([3, 4, 5, 2])
    d = pp.process_dumps.add(
        pid=2, timestamp=10, sampling_interval_bytes=8192, orig_sampling_interval_bytes=4096,
        client_error=pb.ProfilePacket.ProcessHeapSamples.CLIENT_ERROR_INVALID_STACK_BOUNDS)
    d.stats.total_unwinding_time_us = 55
    d.stats.heap_samples = 7
    d.stats.client_spinlock_blocked_us = 3
    d.samples.add(callstack_id=1, self_allocated=100, alloc_count=2)
    p = t.packet.add()
    p.timestamp = 20
    p.trusted_packet_sequence_id = 1
    pp = p.profile_packet
    pp.index = 3
    pp.process_dumps.add(pid=3, timestamp=20)
    return t


def two_heaps():
    t = pb.Trace()
    clocks(t)
    processes(t, [(1, 0, 'init'), (2, 1, 'system_server')])
    for index, (ts, libc, art) in enumerate([(10, (100, 2), (64, 4)), (20, (150, 3), (64, 4))]):
        p = t.packet.add()
        p.timestamp = ts
        p.trusted_packet_sequence_id = 1
        p.incremental_state_cleared = index == 0
        pp = p.profile_packet
        pp.index = index
        pp.strings.add(iid=1, str=b'f1')
        pp.strings.add(iid=2, str=b'libc.so')
        pp.frames.add(iid=1, function_name_id=1, mapping_id=1, rel_pc=0x100)
        pp.callstacks.add(iid=1, frame_ids=[1])
        pp.mappings.add(iid=1).path_string_ids.append(2)
        for heap, (size, count) in [('libc.malloc', libc), ('com.android.art', art)]:
            d = pp.process_dumps.add(pid=2, timestamp=ts, heap_name=heap)
            d.samples.add(callstack_id=1, self_allocated=size, alloc_count=count)
    return t


def deobfuscate_frames():
    t = pb.Trace()
    clocks(t)
    processes(t, [(1, 0, 'init'), (2, 1, 'system_server')])
    p = t.packet.add()
    p.timestamp = 10
    p.trusted_packet_sequence_id = 1
    p.incremental_state_cleared = True
    pp = p.profile_packet
    pp.strings.add(iid=1, str=b'a.f1')
    paths = [b'data/app/com.example.app-xyz==/base.apk', b'system/framework/framework.jar',
             b'memfd:jit-cache', b'system_ext/priv-app/SystemUIGoogle/SystemUIGoogle.apk',
             b'data/app/com.other-1/base.apk']
    for k, path in enumerate(paths):
        pp.strings.add(iid=10 + k, str=path)
        m = pp.mappings.add(iid=k + 1)
        m.path_string_ids.append(10 + k)
        pp.frames.add(iid=k + 1, function_name_id=1, mapping_id=k + 1, rel_pc=0x1000 + k)
    pp.callstacks.add(iid=1, frame_ids=list(range(1, len(paths) + 1)))
    d = pp.process_dumps.add(pid=2, timestamp=10)
    d.samples.add(callstack_id=1, self_allocated=10, alloc_count=1)
    for package, cls, method in [('com.example.app', 'Bar', 'fn'),
                                 ('com.android.systemui', 'Sys', 'ui')]:
        dm = t.packet.add().deobfuscation_mapping
        dm.package_name = package
        c = dm.obfuscated_classes.add(obfuscated_name='a', deobfuscated_name=cls)
        c.obfuscated_methods.add(obfuscated_name='f1', deobfuscated_name=method)
    return t


for name, trace in [('heapprofd_two_heaps.pftrace', two_heaps()),
                    ('deobfuscate_frames.pftrace', deobfuscate_frames()),
                    ('module_symbols_paths.pftrace', module_symbols()),
                    ('heapprofd_stats.pftrace', heapprofd_stats())]:
    with open(os.path.join(DIR, name), 'wb') as out:
        out.write(trace.SerializeToString())
