#!/usr/bin/env python3
"""Writes small hand-built traces for the tests of the ftrace memory / device / power
families and the Android probe packets (tests/data/kernel/*.pftrace,
tests/data/android/*.pftrace). Each trace exercises one rule of
reference/behaviour-android.md or of Trace Processor's ftrace parser that the reference's
own cases do not cover.

usage: python3 tools/gen_kernel_family_traces.py  (needs `pip install perfetto`)"""

import os
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'data')


def write(sub, name, trace):
    path = os.path.join(ROOT, sub, name)
    with open(path, 'wb') as f:
        f.write(trace.SerializeToString())
    print('wrote', path)


def ftrace(trace, cpu, events):
    """events: (ts, pid, field name, dict of fields)"""
    p = trace.packet.add()
    b = p.ftrace_events
    b.cpu = cpu
    for ts, pid, kind, fields in events:
        e = b.event.add()
        e.timestamp = ts
        e.pid = pid
        sub = getattr(e, kind)
        for k, v in fields.items():
            setattr(sub, k, v)
        sub.SetInParent()
    return p


def system_info(trace, release):
    p = trace.packet.add()
    p.system_info.utsname.sysname = 'Linux'
    p.system_info.utsname.release = release


def process_tree(trace, ts, procs):
    p = trace.packet.add()
    p.timestamp = ts
    for pid, ppid, cmd in procs:
        pr = p.process_tree.processes.add()
        pr.pid = pid
        pr.ppid = ppid
        pr.cmdline.append(cmd)


def suspend_resume():
    """A phase begun twice ends as `replica`; a failed suspend (thaw_processes ending
    inside freeze_processes and suspend_enter) closes suspend_enter; the minimal event."""
    t = Trace()
    sr = lambda ts, action, val, start: (ts, 0, 'suspend_resume',
                                         dict(action=action, val=val, start=start))
    ftrace(t, 0, [
        sr(100, 'dpm_suspend', 2, 1),
        sr(200, 'dpm_suspend', 2, 1),
        sr(300, 'dpm_suspend', 2, 0),
        sr(1000, 'suspend_enter', 3, 1),
        sr(1100, 'freeze_processes', 0, 1),
        sr(1200, 'thaw_processes', 0, 1),
        sr(1300, 'thaw_processes', 0, 0),
        sr(1400, 'freeze_processes', 0, 0),
        (2000, 0, 'suspend_resume_minimal', dict(start=1)),
        (2500, 0, 'suspend_resume_minimal', dict(start=0)),
    ])
    write('kernel', 'suspend_resume.pftrace', t)


def memory():
    """ION heaps grow and shrink (totals after the change, changes on the thread), DMA-BUF
    heap buffers, mm_event_record (an unknown type counted), CMA on a 5.4 kernel (ignored),
    gpu_mem_total for a pid never seen (dropped) and one known, dmabuf_rss_stat."""
    t = Trace()
    system_info(t, '5.4.61')
    process_tree(t, 1, [(10, 1, 'app')])
    ftrace(t, 0, [
        (100, 10, 'ion_heap_grow', dict(heap_name='system', len=4096, total_allocated=8192)),
        (200, 10, 'ion_heap_shrink', dict(heap_name='system', len=1024, total_allocated=12288)),
        (250, 10, 'ion_heap_grow', dict(len=2048, total_allocated=0)),
        (300, 10, 'dma_heap_stat', dict(inode=7, len=8192, total_allocated=8192)),
        (400, 10, 'dma_heap_stat', dict(inode=7, len=-8192, total_allocated=0)),
        (500, 10, 'mm_event_record', dict(type=1, count=3, max_lat=9, avg_lat=4)),
        (510, 10, 'mm_event_record', dict(type=42, count=1, max_lat=1, avg_lat=1)),
        (600, 10, 'cma_alloc_start', dict(name='cma', count=1, align=0)),
        (700, 10, 'cma_alloc_info', dict(name='cma', count=1, align=0)),
        (800, 10, 'gpu_mem_total', dict(gpu_id=0, pid=55, size=100)),
        (810, 10, 'gpu_mem_total', dict(gpu_id=0, pid=10, size=200)),
        (820, 10, 'gpu_mem_total', dict(gpu_id=0, pid=0, size=300)),
        (900, 10, 'dmabuf_rss_stat', dict(rss=65536, rss_delta=4096, i_ino=3)),
    ])
    write('kernel', 'memory_events.pftrace', t)


def devices():
    """virtio-gpu commands (latency only without a fence), V4L2 queue → dequeue flow,
    funcgraph on a thread and on the idle thread, a TCP retransmit, UFS clock gating."""
    t = Trace()
    q = lambda ts, kind, seqno, fence, ty, free: (ts, 20, kind, dict(
        name='control', seqno=seqno, fence_id=fence, type=ty, num_free=free))
    ftrace(t, 0, [
        q(100, 'virtio_gpu_cmd_queue', 1, 0, 0x104, 10),
        q(150, 'virtio_gpu_cmd_queue', 2, 5, 0x207, 9),
        q(400, 'virtio_gpu_cmd_response', 1, 0, 0x1100, 10),
        q(600, 'virtio_gpu_cmd_response', 2, 5, 0x1100, 11),
        (700, 20, 'v4l2_qbuf', dict(minor=3, index=1, type=1, sequence=8, flags=2)),
        (800, 21, 'v4l2_dqbuf', dict(minor=3, index=1, type=1, sequence=8, flags=4)),
        (900, 20, 'funcgraph_entry', dict(func=0xffff1000, depth=0)),
        (950, 20, 'funcgraph_exit', dict(func=0xffff1000, depth=0)),
        (960, 0, 'funcgraph_entry', dict(func=0xffff2000, depth=0)),
        (970, 0, 'funcgraph_exit', dict(func=0xffff2000, depth=0)),
        (1000, 20, 'tcp_retransmit_skb', dict(saddr=0x0100007f, sport=80, daddr=0x0201a8c0, dport=443)),
        (1100, 20, 'ufshcd_clk_gating', dict(dev_name='ufs', state=1)),
    ])
    write('kernel', 'device_events.pftrace', t)


def android_probes():
    """Logcat lines (args instead of a message, no message, prio 0), users, games."""
    t = Trace()
    p = t.packet.add()
    p.clock_snapshot.clocks.add(clock_id=1, timestamp=1_000_000)
    p.clock_snapshot.clocks.add(clock_id=6, timestamp=1_000)
    p = t.packet.add()
    p.timestamp = 2_000
    log = p.android_log
    e = log.events.add(timestamp=1_001_000, pid=7, tid=8, prio=0, tag='tagA')
    a = e.args.add(name='count')
    a.int_value = 3
    a = e.args.add(name='what')
    a.string_value = 'x y'
    a = e.args.add(name='ratio')
    a.float_value = 0.5
    log.events.add(timestamp=1_002_000, pid=7, tid=8, prio=6)
    log.events.add(timestamp=1_003_000, pid=7, tid=8, prio=5, tag='', message='hello')
    log.stats.num_total = 3
    log.stats.num_failed = 1
    p = t.packet.add()
    u = p.user_list
    u.users.add(type='android.os.usertype.full.SYSTEM', uid=0)
    u.users.add(type='android.os.usertype.full.SECONDARY', uid=10)
    p = t.packet.add()
    g = p.android_game_intervention_list
    g.read_error = False
    g.parse_error = True
    game = g.game_packages.add(name='com.game', uid=10123, current_mode=2)
    game.game_mode_info.add(mode=1, use_angle=False, resolution_downscale=1.0, fps=60.0)
    game.game_mode_info.add(mode=2, use_angle=True, resolution_downscale=0.5, fps=30.0)
    write('android', 'probes_misc.pftrace', t)


if __name__ == '__main__':
    suspend_resume()
    memory()
    devices()
    android_probes()


def process_rules():
    """process_tree and process_stats rules of reference/behaviour-process-tracking.md §6:
    processes without cmdline skipped, kworker names cut, one-element cmdlines cut at the
    first space, cmdline_is_comm, uid split, start from boot, is_kthread, a changed parent
    kept (and counted), threads bound; process_stats threads, fds and unknown fields."""
    t = Trace()
    p = t.packet.add()
    p.clock_snapshot.clocks.add(clock_id=6, timestamp=0)
    p.clock_snapshot.clocks.add(clock_id=3, timestamp=0)
    p = t.packet.add()
    p.timestamp = 1
    tree = p.process_tree
    tree.processes.add(pid=2, ppid=0, cmdline=['kthreadd'], is_kthread=True)
    tree.processes.add(pid=20, ppid=2, cmdline=['kworker/1:2-events'], is_kthread=True)
    tree.processes.add(pid=30, ppid=1, cmdline=['/system/bin/foo --flag'])
    tree.processes.add(pid=40, ppid=1, cmdline=['app', 'arg1', 'arg2'], uid=1010123,
                       process_start_from_boot=500)
    tree.processes.add(pid=50, ppid=1)
    tree.processes.add(pid=60, ppid=1, cmdline=['zombie'], cmdline_is_comm=True)
    tree.threads.add(tid=20, tgid=20, name='kworker/1:2-events')
    tree.threads.add(tid=41, tgid=40, name='worker')
    p = t.packet.add()
    p.timestamp = 5
    p.process_tree.processes.add(pid=40, ppid=7, cmdline=['app2'])
    p = t.packet.add()
    p.timestamp = 10
    st = p.process_stats.processes.add(pid=40, vm_rss_kb=10, oom_score_adj=-100,
                                       chrome_peak_resident_set_kb=5, runtime_user_mode=7,
                                       smr_pss_kb=3)
    st.threads.add(tid=42)
    st.fds.add(fd=3, path='/dev/null')
    write('kernel', 'process_rules.pftrace', t)


if __name__ == '__main__':
    process_rules()


def tracing_start(preserve, config_only=False):
    """Ftrace events from before the service's tracing_started are dropped (counted),
    unless the START FtraceStats says the ftrace buffer was preserved (as the service
    writes it when the config asks for it; the config alone does not count)."""
    t = Trace()
    p = t.packet.add()
    ds = p.trace_config.data_sources.add()
    ds.config.name = 'linux.ftrace'
    ds.config.ftrace_config.ftrace_events.append('sched/sched_switch')
    if preserve:
        ds.config.ftrace_config.preserve_ftrace_buffer = True
    p = t.packet.add()
    p.timestamp = 100
    p.service_event.tracing_started = True
    p = t.packet.add()
    p.trusted_packet_sequence_id = 1
    p.ftrace_stats.phase = 1  # START_OF_TRACE
    if preserve and not config_only:
        p.ftrace_stats.preserve_ftrace_buffer = True
    ftrace(t, 0, [
        (50, 10, 'print', dict(buf='B|10|early')),
        (150, 10, 'print', dict(buf='B|10|late')),
    ])
    name = 'tracing_start_preserved.pftrace' if preserve else 'tracing_start.pftrace'
    if config_only:
        name = 'tracing_start_preserved_in_config_only.pftrace'
    write('kernel', name, t)


if __name__ == '__main__':
    tracing_start(False)
    tracing_start(True)
    tracing_start(True, config_only=True)


def process_lifecycle():
    """Forks, threads, renames, frees and pid/tid reuse (reference/behaviour-process-
    tracking.md §2, §3)."""
    t = Trace()
    process_tree(t, 1, [(10, 1, 'process1'), (20, 1, 'process2')])
    t.packet[-1].process_tree.threads.add(tid=21, tgid=20, name='p2-t1')
    CLONE_THREAD = 0x10000
    nt = lambda ts, pid, new, comm, flags: (ts, pid, 'task_newtask', dict(pid=new, comm=comm, clone_flags=flags))
    ftrace(t, 0, [
        nt(15, 10, 11, 'p1-t1', CLONE_THREAD),
        nt(20, 21, 30, 'process3', 0),
        nt(25, 30, 31, 'p3-t1', CLONE_THREAD),
        (30, 30, 'task_rename', dict(pid=30, oldcomm='process3', newcomm='process3-renamed')),
        (35, 31, 'task_rename', dict(pid=31, oldcomm='p3-t1', newcomm='p3-t1-renamed')),
        (40, 31, 'sched_process_free', dict(pid=31, comm='p3-t1-renamed')),
        (45, 31, 'print', dict(buf='B|30|slice')),
        (50, 30, 'sched_process_free', dict(pid=30, comm='process3-renamed')),
        (55, 30, 'print', dict(buf='B|30|after')),
        nt(60, 1, 10, 'process1-new', 0),
        nt(62, 0, 0, 'swapper-child', 0),
        (65, 11, 'sched_switch', dict(prev_comm='p1-t1', prev_pid=11, prev_state=1,
                                      next_comm='stranger', next_pid=12, next_prio=120)),
    ])
    write('kernel', 'process_lifecycle.pftrace', t)


if __name__ == '__main__':
    process_lifecycle()


def mali():
    """Mali KCPU queue events on the thread and CSF interrupts on the cpu's track."""
    t = Trace()
    ftrace(t, 2, [
        (100, 30, 'mali_mali_KCPU_CQS_SET', dict(id=1)),
        (200, 30, 'mali_mali_KCPU_CQS_WAIT_START', dict(id=1)),
        (300, 30, 'mali_mali_KCPU_CQS_WAIT_END', dict(id=1)),
        (400, 30, 'mali_mali_KCPU_FENCE_SIGNAL', dict(id=1)),
        (500, 30, 'mali_mali_KCPU_FENCE_WAIT_START', dict(id=1)),
        (600, 30, 'mali_mali_KCPU_FENCE_WAIT_END', dict(id=1)),
        (700, 0, 'mali_mali_CSF_INTERRUPT_START', dict(info_val=7)),
        (750, 0, 'mali_mali_CSF_INTERRUPT_END', dict(info_val=8)),
    ])
    write('kernel', 'mali.pftrace', t)


if __name__ == '__main__':
    mali()


def rpm():
    """A device's runtime power states; suspended makes no slice."""
    t = Trace()
    r = lambda ts, status: (ts, 5, 'rpm_status', dict(name='ufs0', status=status))
    ftrace(t, 0, [r(100, 1), r(200, 0), r(300, 3), r(400, 2), r(500, 0)])
    write('kernel', 'rpm_status.pftrace', t)


if __name__ == '__main__':
    rpm()


def process_start_from_boot():
    """process_tree's process_start_from_boot is on BOOTTIME whatever the trace clock: with
    MONOTONIC as trace clock (BOOTTIME 100000 = MONOTONIC 50000) it is converted (100200 →
    50200, 200 → -49800, kept though before the trace's zero)."""
    t = Trace()
    p = t.packet.add()
    p.clock_snapshot.clocks.add(clock_id=6, timestamp=100000)
    p.clock_snapshot.clocks.add(clock_id=3, timestamp=50000)
    p.clock_snapshot.primary_trace_clock = 3
    p = t.packet.add()
    p.timestamp = 100500
    p.timestamp_clock_id = 6
    p.trusted_packet_sequence_id = 1
    tree = p.process_tree
    tree.processes.add(pid=10, ppid=1, cmdline=['a'], process_start_from_boot=100200)
    tree.processes.add(pid=11, ppid=1, cmdline=['b'], process_start_from_boot=200)
    tree.processes.add(pid=12, ppid=1, cmdline=['c'])
    write('kernel', 'process_start_from_boot.pftrace', t)


if __name__ == '__main__':
    process_start_from_boot()


def process_tree_empty_argv0():
    """An empty argv0 (an empty first cmdline element, or a one-element cmdline starting
    with a space) names the process "": only NULL names are ignored, so it replaces the
    fork's comm."""
    t = Trace()
    ftrace(t, 0, [(100, 1, 'task_newtask', dict(pid=50, comm='child', clone_flags=0))])
    p = t.packet.add()
    p.timestamp = 200
    p.trusted_packet_sequence_id = 1
    p.process_tree.processes.add(pid=50, ppid=1, cmdline=[''])
    p.process_tree.processes.add(pid=60, ppid=1, cmdline=[' x'])
    p.process_tree.processes.add(pid=70, ppid=1, cmdline=['', 'y'])
    write('kernel', 'process_tree_empty_argv0.pftrace', t)


if __name__ == '__main__':
    process_tree_empty_argv0()
