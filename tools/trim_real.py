#!/usr/bin/env python3
"""Writes trimmed copies of the real traces (../shared/real) into tests/data/real/, so the
project tests real tools' output from its own tree (the full files are checked by the CI
ratchet on check_real.py). Each copy keeps what makes its format and producer what they are:

- protobuf: every packet that is not an event (descriptors, config, clock snapshots, stats,
  system info, …) and the first event packets, up to a byte budget, in file order; a file
  cut off in its last packet keeps its cut;
- JSON: every metadata (`M`) and profile (`P`) event and the first other events, with the
  top-level keys besides the events kept as they are; a file that is not valid JSON as a
  whole (truncated on purpose) is kept whole if small;
- systrace / atrace text and HTML: the first lines, up to the budget;
- gzip'd files are trimmed inside and compressed again; anything small is copied whole.

    python3 tools/trim_real.py ../shared/real tests/data/real
"""
import gzip, json, os, shutil, sys

BUDGET = 160 * 1024
# ftrace_events, sys_stats, process_stats, track_event, profile_packet, battery, android_log,
# power_rails, gpu_counter_event, streaming_profile_packet, perf_sample, frame_timeline_event.
EVENT_PACKET_FIELDS = {1, 7, 9, 11, 37, 38, 39, 40, 52, 54, 66, 76}


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i


def packets(data):
    i = 0
    while i < len(data):
        start = i
        try:
            tag, i = varint(data, i)
            if tag != 0x0a:
                return
            n, i = varint(data, i)
        except IndexError:
            yield start, len(data), None
            return
        if i + n > len(data):
            yield start, len(data), None  # cut off: kept as the cut
            return
        yield start, i + n, data[i:i + n]
        i += n


def packet_fields(pkt):
    out = set(); i = 0
    try:
        while i < len(pkt):
            tag, i = varint(pkt, i); f, w = tag >> 3, tag & 7
            out.add(f)
            if w == 0: _, i = varint(pkt, i)
            elif w == 1: i += 8
            elif w == 5: i += 4
            elif w == 2:
                n, i = varint(pkt, i); i += n
            else: break
    except IndexError:
        pass
    return out


def trim_proto(data):
    if len(data) <= BUDGET:
        return data
    out = bytearray(); events = 0
    for start, end, pkt in packets(data):
        chunk = data[start:end]
        is_event = pkt is None or packet_fields(pkt) & EVENT_PACKET_FIELDS
        if not is_event or events < BUDGET:
            out += chunk
            if is_event:
                events += len(chunk)
    return bytes(out)


def trim_json(data):
    if len(data) <= BUDGET:
        return data
    try:
        doc = json.loads(data)
    except ValueError:
        return data[:BUDGET]
    events = doc if isinstance(doc, list) else doc.get('traceEvents', [])
    kept, size, profiles = [], 0, 0
    for e in events:
        ph = e.get('ph') if isinstance(e, dict) else None
        # Metadata always; a CPU profile's first chunks (each holds many samples).
        keep_always = ph == 'M' or (ph == 'P' and profiles < 40)
        profiles += ph == 'P'
        n = len(json.dumps(e))
        if keep_always or size + n <= BUDGET:
            kept.append(e)
            if not keep_always:
                size += n
    if isinstance(doc, list):
        doc = kept
    else:
        doc['traceEvents'] = kept
        system = doc.get('systemTraceEvents')
        if isinstance(system, dict) and isinstance(system.get('events'), list):
            system['events'] = system['events'][:2000]
        for k in ('stackFrames', 'samples'):
            if isinstance(doc.get(k), (list, dict)) and len(json.dumps(doc[k])) > BUDGET:
                doc.pop(k)
    return json.dumps(doc, separators=(',', ':')).encode()


def trim_text(data):
    if len(data) <= BUDGET:
        return data
    cut = data.rfind(b'\n', 0, BUDGET)
    return data[:cut + 1]


def trim(data):
    head = data.lstrip()[:1]
    if head in (b'{', b'['):
        return trim_json(data)
    if data[:1] == b'\x0a':
        return trim_proto(data)
    return trim_text(data)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    for dirpath, _, files in os.walk(src):
        if os.path.relpath(dirpath, src).startswith('reference'):
            continue
        for f in sorted(files):
            if f.endswith('.md'):
                continue
            path = os.path.join(dirpath, f)
            out = os.path.join(dst, os.path.relpath(path, src))
            os.makedirs(os.path.dirname(out), exist_ok=True)
            data = open(path, 'rb').read()
            if len(data) <= BUDGET or data[:2] == b'PK':
                shutil.copyfile(path, out)
            elif data[:2] == b'\x1f\x8b':
                open(out, 'wb').write(gzip.compress(trim(gzip.decompress(data)), mtime=0))
            elif data.startswith(b'TRACE:\n') and data[7:8] == b'\x78':
                shutil.copyfile(path, out)  # atrace -z: a zlib stream, kept whole
            else:
                open(out, 'wb').write(trim(data))
            print(f'{os.path.relpath(path, src)}: {len(data)} -> {os.path.getsize(out)}')


if __name__ == '__main__':
    main()
