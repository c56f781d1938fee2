"""Protobuf wire encoding by hand, for the tools that write test traces whose messages the
perfetto Python package does not describe (gen_network_trace.py, gen_input_event_trace.py)."""

import struct


def varint(v):
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def f_int(n, v):
    """A varint field (int32/int64/uint32/uint64/enum/bool)."""
    return varint(n << 3) + varint(v)


def f_sint(n, v):
    """A zigzag-encoded sint32/sint64 field."""
    return varint(n << 3) + varint((v << 1) ^ (v >> 63))


def f_fixed32(n, v):
    return varint(n << 3 | 5) + struct.pack('<I', v)


def f_float(n, v):
    return varint(n << 3 | 5) + struct.pack('<f', v)


def f_bytes(n, b):
    """A length-delimited field: bytes, a string or an encoded message."""
    if isinstance(b, str):
        b = b.encode()
    return varint(n << 3 | 2) + varint(len(b)) + b


def packed(n, values):
    """A packed repeated varint field."""
    return f_bytes(n, b''.join(varint(v) for v in values))
