#!/usr/bin/env python3
"""Cuts a PyTorch profiler (Kineto) trace down to a time window for tests/data: the metadata
events, the events that start inside the window, and the launch → kernel flows whose two ends
are both kept.

usage: trim_kineto.py IN.json[.gz] OUT.json START_US LENGTH_US"""
import gzip, json, sys

src, out, start, length = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
opener = gzip.open if src.endswith('.gz') else open
trace = json.load(opener(src, 'rt'))
events = trace['traceEvents']
end = start + length
kept = [e for e in events if e.get('ph') == 'M' or
        (e.get('ph') not in ('s', 'f') and start <= float(e.get('ts', -1)) < end)]
starts = {e['id'] for e in events if e.get('ph') == 's' and start <= float(e['ts']) < end}
ends = {e['id'] for e in events if e.get('ph') == 'f' and start <= float(e['ts']) < end}
both = starts & ends
kept += [e for e in events if e.get('ph') in ('s', 'f') and e.get('id') in both]
trace['traceEvents'] = kept
json.dump(trace, open(out, 'w'), indent=None, separators=(',', ':'))
print(f'{out}: {len(kept)} events, {len(both)} flows')
