#!/usr/bin/env python3
"""Writes tests/data/android/user_type.pftrace: processes of two Android users (uid 10001 of
user 0, uid 1010001 of user 10, one process without a uid) and the `user_list` packet naming
both users' types, for android_process_metadata.user_type. Encoded by hand (AndroidUserList,
TracePacket field 123, is not in the perfetto Python package's descriptors)."""

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
    return varint(n << 3) + varint(v)

def f_bytes(n, b):
    if isinstance(b, str):
        b = b.encode()
    return varint(n << 3 | 2) + varint(len(b)) + b

def packet(ts, body):
    return f_bytes(1, f_int(8, ts) + f_int(10, 1) + body)

def process(pid, cmdline, uid=None):
    p = f_int(1, pid) + f_int(2, 1) + f_bytes(3, cmdline)
    if uid is not None:
        p += f_int(5, uid)
    return f_bytes(1, p)

# ProcessTree (TracePacket field 2): Process {pid 1, ppid 2, cmdline 3, uid 5}.
tree = process(100, 'com.a', 10001) + process(200, 'com.a', 1010001) + process(300, 'daemon')
# AndroidUserList (field 123): UserInfo {type 1, uid 2} (the user id).
users = (f_bytes(1, f_bytes(1, 'android.os.usertype.full.SYSTEM') + f_int(2, 0))
         + f_bytes(1, f_bytes(1, 'android.os.usertype.full.SECONDARY') + f_int(2, 10)))
trace = packet(10, f_bytes(2, tree)) + packet(20, f_bytes(123, users))
with open('tests/data/android/user_type.pftrace', 'wb') as f:
    f.write(trace)
