#!/usr/bin/env python3
"""Writes tests/data/chrome/mojo_unsymbolized.pftrace (behaviour-chrome-typed-args §4.2/§5):
Mojo method locations without symbols — one whose mapping is interned (after another
sequence's mapping, so its stack_profile_mapping id is 1), one whose mapping is not, one
unknown iid. usage: python3 tools/chrome_audit/gen_mojo_unsymbolized.py"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tb import *

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'data',
                   'chrome', 'mojo_unsymbolized.pftrace')
t = T()
pk = t.pkt(trusted_packet_sequence_id=1, timestamp=1)
pk.incremental_state_cleared = True
pk.thread_descriptor.pid = 5; pk.thread_descriptor.tid = 10
idt = pk.interned_data
b = idt.build_ids.add(); b.iid = 2; b.str = b"bid"
m = idt.mapping_paths.add(); m.iid = 1; m.str = b"lib.so"
m = idt.mappings.add(); m.iid = 1; m.build_id = 2; m.path_string_ids.append(1)
u = idt.unsymbolized_source_locations.add(); u.iid = 1; u.mapping_id = 1; u.rel_pc = 123
u = idt.unsymbolized_source_locations.add(); u.iid = 2; u.mapping_id = 7; u.rel_pc = 9   # unknown mapping
# an earlier mapping in stack_profile_mapping (from another sequence) so ids are not 0
pk = t.pkt(trusted_packet_sequence_id=2, timestamp=1)
pk.incremental_state_cleared = True
idt = pk.interned_data
b = idt.build_ids.add(); b.iid = 1; b.str = b"other"
m = idt.mappings.add(); m.iid = 1; m.build_id = 1
fr = idt.function_names.add(); fr.iid = 1; fr.str = b"fn"
f = idt.frames.add(); f.iid = 1; f.mapping_id = 1; f.function_name_id = 1; f.rel_pc = 1
c = idt.callstacks.add(); c.iid = 1; c.frame_ids.append(1)
pk = t.pkt(trusted_packet_sequence_id=2, timestamp=2)
pk.perf_sample.callstack_iid = 1; pk.perf_sample.pid = 5; pk.perf_sample.tid = 10; pk.perf_sample.cpu = 0
def inst(ts, name, fill):
    pk = t.te(ts)
    e = pk.track_event; e.type = p.TrackEvent.TYPE_SLICE_BEGIN; e.name = name
    fill(e)
    pk = t.te(ts + 1); pk.track_event.type = p.TrackEvent.TYPE_SLICE_END
def m1(e):
    e.chrome_mojo_event_info.mojo_interface_method_iid = 1; e.chrome_mojo_event_info.ipc_hash = 5
    d = e.debug_annotations.add(); d.name = "x"; d.int_value = 1
inst(1000, "mojo_nosym", m1)
def m2(e):
    e.chrome_mojo_event_info.mojo_interface_method_iid = 2
inst(2000, "mojo_unknown_mapping", m2)
def m3(e):
    e.chrome_mojo_event_info.mojo_interface_method_iid = 42
inst(3000, "mojo_unknown_iid", m3)
t.write(OUT)
