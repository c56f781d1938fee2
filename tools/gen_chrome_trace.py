#!/usr/bin/env python3
"""Writes tests/data/chrome/chrome_features.pftrace: a small Chrome-like protobuf trace with
what Chrome's real traces hold (see ../shared/real/chrome/ms_chrome.pftrace): an incremental
sequence clock in µs, process and thread descriptors with Chrome process/thread types and
labels, a log message, typed Chrome fields (keyed service, legacy IPC enum, latency info with
repeated components, an extension described by the trace's own extension_descriptor, an
extension nobody describes), task_execution with an interned posted-from location, a legacy
context event kept raw, a chrome_events metadata bundle and a flow.

usage: python3 tools/gen_chrome_trace.py  (needs `pip install perfetto`)"""
import os
from google.protobuf import descriptor_pb2
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'data', 'chrome',
                   'chrome_features.pftrace')

trace = pb.Trace()
SEQ = 7


def packet(**kw):
    p = trace.packet.add()
    p.trusted_packet_sequence_id = kw.pop('seq', SEQ)
    return p


# The clocks: BOOTTIME and Chrome's µs clock 64, and the incremental µs clock 65.
p = packet()
p.sequence_flags = 1
p.clock_snapshot.clocks.add(clock_id=6, timestamp=1_000_000_000)
p.clock_snapshot.clocks.add(clock_id=64, timestamp=1_000_000, unit_multiplier_ns=1000)
p.clock_snapshot.clocks.add(clock_id=65, timestamp=1_000_000, unit_multiplier_ns=1000,
                            is_incremental=True)
p.trace_packet_defaults.timestamp_clock_id = 65
p.trace_packet_defaults.track_event_defaults.track_uuid = 11

# A renderer process with labels; its main thread typed as CrRendererMain, no thread name.
p = packet()
d = p.track_descriptor
d.uuid = 10
d.process.pid = 4000
d.process.process_name = 'Renderer'
d.process.process_labels.extend(['example.com', 'Tab 2'])
d.chrome_process.process_type = 2
d.chrome_process.crash_trace_id = 99
p = packet()
d = p.track_descriptor
d.uuid = 11
d.parent_uuid = 10
d.thread.pid = 4000
d.thread.tid = 4001
d.chrome_thread.thread_type = 16

# An extension of TrackEvent only the trace describes: field 2001, a message with a string.
ext = packet()
fds = ext.extension_descriptor.extension_set
f = fds.file.add()
f.name = 'test/ext.proto'
f.package = 'perfetto.protos'
m = f.message_type.add()
m.name = 'TestExtension'
fld = m.field.add(name='note', number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                  label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
e = f.extension.add(name='test_extension', number=2001, extendee='.perfetto.protos.TrackEvent',
                    type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                    type_name='.perfetto.protos.TestExtension',
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)

# Interned data and the events, 10 µs apart on the incremental clock.
p = packet()
p.sequence_flags = 2
p.timestamp = 10
i = p.interned_data
i.event_categories.add(iid=1, name='toplevel')
i.event_names.add(iid=1, name='RunTask')
i.event_names.add(iid=2, name='FrameBlameContext')
i.source_locations.add(iid=1, file_name='..\\base\\task.cc', function_name='PostTask',
                       line_number=42)
i.log_message_body.add(iid=1, body='hello from chrome')
te = p.track_event
te.type = te.TYPE_SLICE_BEGIN
te.category_iids.append(1)
te.name_iid = 1
te.task_execution.posted_from_iid = 1
te.chrome_keyed_service.name = 'EventRouter'
te.chrome_legacy_ipc.message_class = 3
te.chrome_legacy_ipc.message_line = 77
lat = te.chrome_latency_info
lat.trace_id = 5
lat.component_info.add(component_type=1, time_us=100)
lat.component_info.add(component_type=2, time_us=200)
te.flow_ids.append(0xabc)
te_bytes = te.SerializeToString()
# test_extension (2001) {note: "described"} and field 2002 that nobody describes.
te_bytes += bytes([0x8a, 0x7d, 0x0b, 0x0a, 0x09]) + b'described'
te_bytes += bytes([0x90, 0x7d, 0x01])
te.Clear()
te.MergeFromString(te_bytes)

p = packet()
p.sequence_flags = 2
p.timestamp = 10
te = p.track_event
te.type = te.TYPE_INSTANT
te.category_iids.append(1)
te.name_iid = 1
te.log_message.body_iid = 1
te.log_message.source_location_iid = 1
te.log_message.prio = 6

p = packet()
p.sequence_flags = 2
p.timestamp = 10
te = p.track_event
te.category_iids.append(1)
te.name_iid = 2
te.legacy_event.phase = ord('(')
te.legacy_event.unscoped_id = 0x1234
te.legacy_event.id_scope = 'PlatformThread'

p = packet()
p.sequence_flags = 2
p.timestamp = 10
te = p.track_event
te.type = te.TYPE_SLICE_END

p = packet()
p.timestamp = 5
te = p.track_event
te.type = te.TYPE_INSTANT
te.categories.append('toplevel')
te.name = 'Closing'
te.terminating_flow_ids.append(0xabc)
p.sequence_flags = 2

b = packet()
b.chrome_events.metadata.add(name='os-name', string_value='Linux')
b.chrome_events.metadata.add(name='num-cpus', int_value=8)
b.chrome_events.metadata.add(name='empty')

open(OUT, 'wb').write(trace.SerializeToString())
print(f'{OUT}: {len(trace.packet)} packets')
