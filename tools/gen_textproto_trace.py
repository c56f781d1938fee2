#!/usr/bin/env python3
"""Writes a binary trace next to each textproto given (`x.textproto` -> `x.pftrace`), e.g.
tests/data/chrome/v8_code.textproto (V8 code events) and
tests/data/chrome/memory_snapshot.textproto (memory-infra dumps).

usage: python3 tools/gen_textproto_trace.py FILE.textproto...  (needs `pip install perfetto`)"""
import sys
from google.protobuf import text_format
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

for path in sys.argv[1:]:
    trace = text_format.Parse(open(path).read(), pb.Trace())
    with open(path.rsplit('.', 1)[0] + '.pftrace', 'wb') as f:
        f.write(trace.SerializeToString())
