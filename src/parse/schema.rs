//! Protobuf messages read through a schema table instead of generated structs (the
//! TraceConfig printed as text, every ftrace event kind as `ftrace_event` args): the table's
//! types and a minimal wire reader.

pub(crate) struct Message {
    /// Sorted by field number.
    pub fields: &'static [Field],
}

pub(crate) struct Field {
    pub number: u32,
    pub name: &'static str,
    pub kind: Kind,
}

pub(crate) struct Enum {
    pub values: &'static [(i32, &'static str)],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Bool,
    Enum(usize),
    Message(usize),
    String,
    Bytes,
    Fixed32,
    Fixed64,
    Sfixed32,
    Sfixed64,
    Float,
    Double,
}

pub(crate) enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Len(&'a [u8]),
}

/// Reads one field; None at the end or where the bytes stop being protobuf.
pub(crate) fn next_field<'a>(bytes: &mut &'a [u8]) -> Option<(u32, Value<'a>)> {
    let tag = varint(bytes)?;
    let number = u32::try_from(tag >> 3).ok()?;
    let value = match tag & 7 {
        0 => Value::Varint(varint(bytes)?),
        1 => Value::Fixed64(u64::from_le_bytes(take(bytes, 8)?.try_into().ok()?)),
        2 => {
            let len = usize::try_from(varint(bytes)?).ok()?;
            Value::Len(take(bytes, len)?)
        }
        5 => Value::Fixed32(u32::from_le_bytes(take(bytes, 4)?.try_into().ok()?)),
        _ => return None,
    };
    Some((number, value))
}

pub(crate) fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if bytes.len() < n {
        return None;
    }
    let (head, rest) = bytes.split_at(n);
    *bytes = rest;
    Some(head)
}

pub(crate) fn varint(bytes: &mut &[u8]) -> Option<u64> {
    // Most varints on the hot paths (tags, small ids and lengths) are one byte.
    if let Some((&b, rest)) = bytes.split_first() {
        if b < 0x80 {
            *bytes = rest;
            return Some(u64::from(b));
        }
    }
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            *bytes = &bytes[i + 1..];
            return Some(value);
        }
    }
    None
}

impl Message {
    pub(crate) fn field(&self, number: u32) -> Option<&Field> {
        let i = self
            .fields
            .binary_search_by_key(&number, |f| f.number)
            .ok()?;
        self.fields.get(i)
    }
}

/// A zigzag-encoded (`sint32` / `sint64`) value.
pub(crate) fn zigzag(bits: u64) -> i64 {
    (bits >> 1) as i64 ^ -((bits & 1) as i64)
}
