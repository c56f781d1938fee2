#!/usr/bin/env python3
"""Writes /tmp/ftrace_heavy.pftrace: 600,000 sched_switch and 200,000 kmalloc ftrace events
on 4 cpus (100 threads), for measuring ftrace imports (README, "Speed and memory"):

    python3 tools/gen_ftrace_trace.py
    /usr/bin/time -f "%e s %M KB" target/release/sextant import /tmp/ftrace_heavy.pftrace -o /tmp/o.sqlite
"""
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as p
import random
random.seed(1)
t = p.Trace()
pk = t.packet.add(); pk.system_info.utsname.machine = "aarch64"
N = 100
ts = 1000
for b in range(2000):
    pk = t.packet.add()
    pk.trusted_packet_sequence_id = 1
    bundle = pk.ftrace_events
    bundle.cpu = b % 4
    prev = 0
    for i in range(300):
        ts += 1000
        e = bundle.event.add(); e.timestamp = ts; e.pid = prev
        nxt = random.randrange(1, N)
        s = e.sched_switch
        s.prev_comm = f"t{prev}"; s.prev_pid = prev; s.prev_prio = 120; s.prev_state = random.choice([0,1,2])
        s.next_comm = f"t{nxt}"; s.next_pid = nxt; s.next_prio = 120
        prev = nxt
        if i % 3 == 0:
            e = bundle.event.add(); e.timestamp = ts + 10; e.pid = prev
            k = e.kmalloc; k.bytes_alloc = 64; k.bytes_req = 50; k.call_site = random.getrandbits(64); k.ptr = random.getrandbits(64); k.gfp_flags = 0xcc0
open('/tmp/ftrace_heavy.pftrace', 'wb').write(t.SerializeToString())
