#!/usr/bin/env python3
"""Writes tests/data/metadata/config_statsd_ui_state.pftrace (behaviour-chrome-typed-args §8):
a TraceConfig with unique_session_name, a uuid and statsd_metadata, a TraceUuid packet that
wins over the config's uuid, and a ui_state packet.
usage: python3 tools/chrome_audit/gen_config_statsd_ui_state.py"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tb import *

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'data',
                   'metadata', 'config_statsd_ui_state.pftrace')
t = T()
pk = t.pkt(trusted_packet_sequence_id=1, timestamp=1)
c = pk.trace_config; c.unique_session_name = "sess"; c.trace_uuid_msb = 1; c.trace_uuid_lsb = 2
c.buffers.add().size_kb = 4
c.statsd_metadata.triggering_subscription_id = 7
pk = t.pkt(trusted_packet_sequence_id=1, timestamp=2)
pk.trace_uuid.msb = 3; pk.trace_uuid.lsb = 4
pk = t.pkt(trusted_packet_sequence_id=1, timestamp=3)
pk.ui_state.timeline_start_ts = 5
t.write(OUT)
