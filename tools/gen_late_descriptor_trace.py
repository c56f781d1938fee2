#!/usr/bin/env python3
"""Writes tests/data/chrome/late_proto_value_type.pftrace: two TrackEvents whose debug
annotations carry a `proto_value` of type `.qa.Late` (and a TrackEvent extension field 5000),
which only an `extension_descriptor` packet at the END of the file describes, as Chrome
writes its own; a third annotation names `.qa.Never`, which nothing describes.

    python3 tools/gen_late_descriptor_trace.py tests/data/chrome/late_proto_value_type.pftrace
"""
import sys

sys.path.insert(0, '/work/notes/pb')
from perfetto.trace import perfetto_trace_pb2 as pb  # noqa: E402
from google.protobuf import descriptor_pb2  # noqa: E402


def main():
    packets = []
    seq = 7
    p = pb.TracePacket()
    p.trusted_packet_sequence_id = seq
    p.sequence_flags = 1
    d = p.track_descriptor
    d.uuid = 1
    d.thread.pid = 10
    d.thread.tid = 11
    d.thread.thread_name = 'main'
    packets.append(p.SerializeToString())
    late = bytes([0x08, 0x07, 0x12, 0x02]) + b'hi'  # v = 7, s = "hi"
    ext = bytes([0xc2, 0xb8, 0x02, 0x02, 0x08, 0x2a])  # field 5000 (LEN) { v = 42 }
    for i, (name, type_name, extra) in enumerate(
            [('first', '.qa.Late', ext), ('second', '.qa.Late', b''), ('third', '.qa.Never', b'')]):
        e = pb.TrackEvent()
        e.type = pb.TrackEvent.TYPE_INSTANT
        e.track_uuid = 1
        e.name = name
        a = e.debug_annotations.add()
        a.name = 'value'
        a.proto_type_name = type_name
        a.proto_value = late
        te = e.SerializeToString() + extra
        p = pb.TracePacket()
        p.trusted_packet_sequence_id = seq
        p.timestamp = 1000 + 100 * i
        packets.append(p.SerializeToString() + bytes([0x5a]) + varint(len(te)) + te)
    fds = descriptor_pb2.FileDescriptorSet()
    f = fds.file.add()
    f.name = 'qa/late.proto'
    f.package = 'qa'
    m = f.message_type.add()
    m.name = 'Late'
    for num, fname, ftype in [(1, 'v', descriptor_pb2.FieldDescriptorProto.TYPE_INT32),
                              (2, 's', descriptor_pb2.FieldDescriptorProto.TYPE_STRING)]:
        fd = m.field.add()
        fd.name, fd.number, fd.type = fname, num, ftype
        fd.label = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    x = f.extension.add()
    x.name = 'qa_late'
    x.number = 5000
    x.label = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    x.type = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
    x.type_name = '.qa.Late'
    x.extendee = '.perfetto.protos.TrackEvent'
    p = pb.TracePacket()
    p.trusted_packet_sequence_id = seq
    p.timestamp = 2000
    p.extension_descriptor.extension_set.ParseFromString(fds.SerializeToString())
    packets.append(p.SerializeToString())
    with open(sys.argv[1], 'wb') as out:
        for b in packets:
            out.write(bytes([0x0a]) + varint(len(b)) + b)


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


if __name__ == '__main__':
    main()
