//! Every ftrace event's raw row (Trace Processor's `ftrace_event` table): the event's name
//! and its fields as args, in wire order, read through the schema of every event kind
//! Perfetto knows — so events Sextant does not model are still there to query.

use super::ftrace_schema::{EVENTS, MESSAGES};
use super::schema::{next_field, zigzag, Kind, Value};
use crate::ir::{Arg, ArgValue, Sink, StrId};

/// FtraceEvent fields that are not the event itself.
const TIMESTAMP: u32 = 1;
const PID: u32 = 2;
/// Event kinds read differently from their schema (sched_switch, always written whole, is
/// not read here at all).
const SCHED_BLOCKED_REASON: u32 = 18;
const GENERIC: u32 = 327;
/// `sched_blocked_reason.caller`: an interned kernel symbol.
const BLOCKED_REASON_CALLER: u32 = 2;

/// The serialized FtraceEvents of a TracePacket's ftrace bundle(s), in order (the order
/// the decoded bundle lists them in).
pub(crate) fn bundle_events(mut packet: &[u8]) -> Vec<&[u8]> {
    const FTRACE_EVENTS: u32 = 1;
    const EVENT: u32 = 2;
    let mut events = Vec::new();
    while let Some((number, value)) = next_field(&mut packet) {
        if let (FTRACE_EVENTS, Value::Len(mut bundle)) = (number, value) {
            while let Some((number, value)) = next_field(&mut bundle) {
                if let (EVENT, Value::Len(event)) = (number, value) {
                    events.push(event);
                }
            }
        }
    }
    events
}

/// The kind (FtraceEvent field number) and payload of one serialized FtraceEvent: the last
/// event field, as a protobuf decoder keeps the last member of a oneof.
pub(crate) fn event_payload(mut event: &[u8]) -> Option<(u32, &[u8])> {
    let mut found = None;
    while let Some((number, value)) = next_field(&mut event) {
        // `common_flags` is a varint; written as a message (a vendor numbering), it is an
        // event of a kind the schema does not know, as Trace Processor reads it.
        if let (n, Value::Len(payload)) = (number, value) {
            if !matches!(n, TIMESTAMP | PID) {
                found = Some((n, payload));
            }
        }
    }
    found
}

/// Whether `number` is inside the range of event kinds Perfetto numbers (Trace Processor
/// keeps a row, unnamed, for a kind it has no descriptor for inside that range).
pub(crate) fn in_event_range(number: u32) -> bool {
    EVENTS.last().is_some_and(|e| number <= e.0)
}

/// The name of event kind `number`, when the schema knows it.
pub(crate) fn event_name(number: u32) -> Option<&'static str> {
    event_kind(number).map(|(name, _)| name)
}

/// The name of event kind `number` and the index of its message in the schema.
fn event_kind(number: u32) -> Option<(&'static str, usize)> {
    let i = EVENTS.binary_search_by_key(&number, |e| e.0).ok()?;
    EVENTS.get(i).map(|&(_, name, message)| (name, message))
}

/// How a raw event reads its fields: `kernel_symbol` names an interned kernel symbol;
/// `address` gives the stand-in for the address of a field's bytes, which is what a number
/// written as bytes reads as (see `wire_repair`).
pub(crate) struct Lookups<'a> {
    pub kernel_symbol: &'a dyn Fn(u64) -> Option<StrId>,
    pub address: &'a dyn Fn(&[u8]) -> u64,
}

/// The event's name and args (appended to `args`), or None for a kind Perfetto does not
/// know.
pub(crate) fn read_event(
    sink: &mut Sink,
    number: u32,
    mut payload: &[u8],
    lookups: &Lookups,
    args: &mut Vec<Arg>,
) -> Option<StrId> {
    if number == GENERIC {
        return Some(generic_event(sink, payload, args));
    }
    let (name, message) = event_kind(number)?;
    let message = MESSAGES.get(message)?;
    while let Some((field_number, value)) = next_field(&mut payload) {
        let Some(field) = message.field(field_number) else {
            continue;
        };
        let value = match (field.kind, value) {
            (Kind::Uint64, Value::Varint(iid))
                if number == SCHED_BLOCKED_REASON && field_number == BLOCKED_REASON_CALLER =>
            {
                (lookups.kernel_symbol)(iid).map_or(ArgValue::Uint(iid), ArgValue::Str)
            }
            (kind, value) => match arg_value(sink, kind, value, lookups.address) {
                Some(v) => v,
                None => continue,
            },
        };
        args.push(sink.static_arg(field.name, value));
    }
    Some(sink.intern(name))
}

/// A field's value as Trace Processor stores raw event args: signed kinds (and bools and
/// enums) as int, unsigned as uint, strings, reals; nested messages are not stored. A value
/// of the wrong wire type reads as Trace Processor's decoder reads it: bytes as a number
/// give their address, a number as a string reads empty.
fn arg_value(
    sink: &mut Sink,
    kind: Kind,
    value: Value,
    address: &dyn Fn(&[u8]) -> u64,
) -> Option<ArgValue> {
    Some(match (kind, value) {
        (Kind::String | Kind::Bytes, Value::Len(b)) => {
            ArgValue::Str(sink.intern(&String::from_utf8_lossy(b)))
        }
        (Kind::String | Kind::Bytes, _) => ArgValue::Str(sink.intern("")),
        (Kind::Message(_), _) => return None,
        (
            Kind::Int32
            | Kind::Int64
            | Kind::Bool
            | Kind::Enum(_)
            | Kind::Sint32
            | Kind::Sint64
            | Kind::Sfixed32
            | Kind::Sfixed64,
            Value::Len(b),
        ) => ArgValue::Int(address(b) as i64),
        (Kind::Float | Kind::Double, Value::Len(_)) => return None,
        (_, Value::Len(b)) => ArgValue::Uint(address(b)),
        (Kind::Int32 | Kind::Int64 | Kind::Bool | Kind::Enum(_), Value::Varint(v)) => {
            ArgValue::Int(v as i64)
        }
        (Kind::Sint32 | Kind::Sint64, Value::Varint(v)) => ArgValue::Int(zigzag(v)),
        (Kind::Sfixed32, Value::Fixed32(v)) => ArgValue::Int(i64::from(v as i32)),
        (Kind::Sfixed64, Value::Fixed64(v)) => ArgValue::Int(v as i64),
        (Kind::Float, Value::Fixed32(v)) => ArgValue::Real(f64::from(f32::from_bits(v))),
        (Kind::Double, Value::Fixed64(v)) => ArgValue::Real(f64::from_bits(v)),
        (_, Value::Varint(v) | Value::Fixed64(v)) => ArgValue::Uint(v),
        (_, Value::Fixed32(v)) => ArgValue::Uint(u64::from(v)),
    })
}

/// A `generic` event (one the tracing service had no schema for): its own name, and its
/// fields as named values. As Trace Processor reads a field: its int value if set, else its
/// uint value (stored as an int), else its string.
fn generic_event(sink: &mut Sink, mut payload: &[u8], args: &mut Vec<Arg>) -> StrId {
    let mut name = String::new();
    while let Some((number, value)) = next_field(&mut payload) {
        match (number, value) {
            (1, Value::Len(b)) => name = String::from_utf8_lossy(b).into_owned(),
            (2, Value::Len(mut field)) => {
                let mut key = String::new();
                let (mut int, mut uint, mut string) = (None, None, None);
                while let Some((number, value)) = next_field(&mut field) {
                    match (number, value) {
                        (1, Value::Len(b)) => key = String::from_utf8_lossy(b).into_owned(),
                        (3, Value::Len(b)) => string = Some(b),
                        (4, Value::Varint(v)) => int = Some(v as i64),
                        (5, Value::Varint(v)) => uint = Some(v as i64),
                        _ => {}
                    }
                }
                let value = match (int.or(uint), string) {
                    (Some(v), _) => Some(ArgValue::Int(v)),
                    (None, Some(b)) => {
                        Some(ArgValue::Str(sink.intern(&String::from_utf8_lossy(b))))
                    }
                    (None, None) => None,
                };
                if let Some(value) = value {
                    args.push(sink.arg(&key, value));
                }
            }
            _ => {}
        }
    }
    sink.intern(&name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ArgValue;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn read(
        sink: &mut Sink,
        number: u32,
        payload: &[u8],
    ) -> (Option<String>, Vec<(String, ArgValue)>) {
        let mut args = Vec::new();
        let lookups = Lookups {
            kernel_symbol: &|_| None,
            address: &|_| 0,
        };
        let name = read_event(sink, number, payload, &lookups, &mut args);
        let name = name.and_then(|n| sink.strings.get(n)).map(str::to_string);
        let args = args
            .iter()
            .map(|a| (sink.strings.get(a.key).unwrap_or("").to_string(), a.value))
            .collect();
        (name, args)
    }

    #[test]
    fn fields_become_typed_args_in_wire_order() {
        let mut sink = Sink::new();
        // kfree { ptr: 32 (field 2), call_site: 2^64 - 16 (field 1) }
        let mut payload = Vec::new();
        varint(2 << 3, &mut payload);
        varint(32, &mut payload);
        varint(1 << 3, &mut payload);
        varint(u64::MAX - 15, &mut payload);
        let (name, args) = read(&mut sink, 298, &payload);
        assert_eq!(name.as_deref(), Some("kfree"));
        assert_eq!(
            args,
            vec![
                ("ptr".to_string(), ArgValue::Uint(32)),
                ("call_site".to_string(), ArgValue::Uint(u64::MAX - 15)),
            ]
        );
    }

    #[test]
    fn generic_events_carry_their_own_names() {
        let mut sink = Sink::new();
        let mut field = Vec::new();
        field.extend_from_slice(&[0x0a, 3, b'c', b'n', b't']);
        varint(4 << 3, &mut field);
        varint(-3i64 as u64, &mut field);
        let mut payload = vec![0x0a, 4, b'm', b'y', b'e', b'v'];
        payload.push(0x12);
        payload.push(field.len() as u8);
        payload.extend_from_slice(&field);
        let (name, args) = read(&mut sink, GENERIC, &payload);
        assert_eq!(name.as_deref(), Some("myev"));
        assert_eq!(args, vec![("cnt".to_string(), ArgValue::Int(-3))]);
    }

    #[test]
    fn generic_uint_fields_are_ints_and_an_int_wins_over_a_string() {
        let mut sink = Sink::new();
        // Field `u`: uint 7. Field `both`: string "s" then int 2.
        let mut u = vec![0x0a, 1, b'u'];
        varint(5 << 3, &mut u);
        varint(7, &mut u);
        let mut both = vec![0x0a, 4, b'b', b'o', b't', b'h', 0x1a, 1, b's'];
        varint(4 << 3, &mut both);
        varint(2, &mut both);
        let mut payload = vec![0x0a, 1, b'g'];
        for f in [&u, &both] {
            payload.push(0x12);
            payload.push(f.len() as u8);
            payload.extend_from_slice(f);
        }
        let (_, args) = read(&mut sink, GENERIC, &payload);
        assert_eq!(
            args,
            vec![
                ("u".to_string(), ArgValue::Int(7)),
                ("both".to_string(), ArgValue::Int(2))
            ]
        );
    }

    #[test]
    fn unknown_kinds_have_no_row() {
        let mut sink = Sink::new();
        assert_eq!(read(&mut sink, 100_000, &[]).0, None);
        assert_eq!(event_payload(&[0x08, 5]), None);
    }
}
