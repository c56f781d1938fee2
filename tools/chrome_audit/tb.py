"""Tiny trace builder for the Chrome args audit traces (pip perfetto protos + raw bytes for
fields the bindings lack). Used by gen_*.py here; see tests/chrome.rs."""
import subprocess, sys, os, csv, io
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as p

SEXTANT = os.environ.get('SEXTANT', '/work/wt-chrome/target/release/sextant')

def varint(v):
    v &= (1 << 64) - 1
    out = b''
    while True:
        b = v & 0x7f; v >>= 7
        if v: out += bytes([b | 0x80])
        else: return out + bytes([b])

def fv(n, v):  # varint field
    return varint(n << 3) + varint(v)

def fl(n, b):  # length-delimited
    if isinstance(b, str): b = b.encode()
    return varint(n << 3 | 2) + varint(len(b)) + b

def f64(n, v):
    import struct
    return varint(n << 3 | 1) + struct.pack('<Q', v)

def f32(n, v):
    import struct
    return varint(n << 3 | 5) + struct.pack('<I', v)

class T:
    def __init__(self):
        self.trace = p.Trace()
        self.raw = []  # (index, extra bytes for track_event)
    def pkt(self, **kw):
        pk = self.trace.packet.add()
        for k, v in kw.items():
            setattr(pk, k, v)
        return pk
    def te(self, ts, seq=1, extra=b'', flags=None, **kw):
        pk = self.trace.packet.add()
        pk.timestamp = ts
        pk.trusted_packet_sequence_id = seq
        if flags is not None: pk.sequence_flags = flags
        pk.track_event.SetInParent()
        if extra: self.raw.append((len(self.trace.packet) - 1, extra))
        return pk
    def write(self, path):
        out = b''
        for i, pk in enumerate(self.trace.packet):
            b = pk.SerializeToString()
            ext = [e for j, e in self.raw if j == i]
            if ext:
                # re-encode: track_event (field 11) with extra bytes appended
                te = pk.track_event.SerializeToString() + b''.join(ext)
                pk2 = p.TracePacket(); pk2.CopyFrom(pk); pk2.ClearField('track_event')
                b = pk2.SerializeToString() + fl(11, te)
            out += fl(1, b)
        open(path, 'wb').write(out)

def q(path, sql):
    r = subprocess.run([SEXTANT, 'query', '--analyze-trace-proto-content', path, sql],
                       capture_output=True, text=True)
    if r.returncode: print('ERR', r.stderr)
    return r.stdout

def args_of(path, where="1"):
    return q(path, f"select s.name, a.flat_key, a.key, a.value_type, a.int_value, a.string_value, a.real_value from slice s join args a using(arg_set_id) where {where} order by s.id, a.id")
