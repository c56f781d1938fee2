//! A trace's TraceConfig as protobuf text format, as Trace Processor keeps it in metadata's
//! `trace_config_pbtxt`: one `name: value` per line, nested messages as `name {` … `}`
//! indented by two spaces, enums by name, packed fields one value per line. Fields missing
//! from the schema print under their number; bytes that stop decoding end the text.

use super::config_schema::{ENUMS, MESSAGES, TRACE_CONFIG};
use super::schema::{next_field, take, varint, zigzag, Kind, Value};

/// The text of a serialized TraceConfig.
pub fn trace_config_text(bytes: &[u8]) -> String {
    let mut out = String::new();
    print_message(&mut out, TRACE_CONFIG, bytes, 0);
    out
}

fn start_line(out: &mut String, depth: usize) {
    if !out.is_empty() {
        out.push('\n');
    }
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn print_message(out: &mut String, message: usize, mut bytes: &[u8], depth: usize) {
    let message = MESSAGES.get(message);
    while let Some((number, value)) = next_field(&mut bytes) {
        let Some(field) = message.and_then(|m| m.field(number)) else {
            start_line(out, depth);
            let text = match value {
                Value::Varint(v) | Value::Fixed64(v) => v.to_string(),
                Value::Fixed32(v) => v.to_string(),
                Value::Len(b) => quote(b),
            };
            out.push_str(&format!("{number}: {text}"));
            continue;
        };
        match (field.kind, value) {
            (Kind::Message(m), Value::Len(b)) => {
                start_line(out, depth);
                out.push_str(field.name);
                out.push_str(" {");
                print_message(out, m, b, depth + 1);
                start_line(out, depth);
                out.push('}');
            }
            (Kind::String | Kind::Bytes, Value::Len(b)) => {
                start_line(out, depth);
                out.push_str(&format!("{}: {}", field.name, quote(b)));
            }
            (kind, Value::Len(mut packed)) => {
                while let Some(value) = packed_value(kind, &mut packed) {
                    start_line(out, depth);
                    out.push_str(&format!("{}: {}", field.name, scalar(kind, value)));
                }
            }
            (kind, value) => {
                start_line(out, depth);
                out.push_str(&format!("{}: {}", field.name, scalar(kind, value)));
            }
        }
    }
}

/// The next element of a packed repeated field.
fn packed_value<'a>(kind: Kind, bytes: &mut &'a [u8]) -> Option<Value<'a>> {
    match kind {
        Kind::Fixed64 | Kind::Sfixed64 | Kind::Double => Some(Value::Fixed64(u64::from_le_bytes(
            take(bytes, 8)?.try_into().ok()?,
        ))),
        Kind::Fixed32 | Kind::Sfixed32 | Kind::Float => Some(Value::Fixed32(u32::from_le_bytes(
            take(bytes, 4)?.try_into().ok()?,
        ))),
        _ => Some(Value::Varint(varint(bytes)?)),
    }
}

fn scalar(kind: Kind, value: Value) -> String {
    let bits = match value {
        Value::Varint(v) | Value::Fixed64(v) => v,
        Value::Fixed32(v) => u64::from(v),
        Value::Len(b) => return quote(b),
    };
    match kind {
        Kind::Int32 | Kind::Sfixed32 => (bits as i32).to_string(),
        Kind::Int64 | Kind::Sfixed64 => (bits as i64).to_string(),
        Kind::Uint32 | Kind::Fixed32 => (bits as u32).to_string(),
        Kind::Sint32 | Kind::Sint64 => zigzag(bits).to_string(),
        Kind::Bool => (bits != 0).to_string(),
        Kind::Enum(e) => {
            let number = bits as i32;
            ENUMS
                .get(e)
                .and_then(|e| e.values.iter().find(|(n, _)| *n == number))
                .map_or_else(|| number.to_string(), |(_, name)| (*name).to_string())
        }
        Kind::Float => format!("{:.6}", f32::from_bits(bits as u32)),
        Kind::Double => format!("{:.6}", f64::from_bits(bits)),
        Kind::Uint64 | Kind::Fixed64 | Kind::Message(_) | Kind::String | Kind::Bytes => {
            bits.to_string()
        }
    }
}

/// A quoted string with text-format escapes (the bytes read as UTF-8, lossily).
fn quote(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::trace_config_text;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn len_field(number: u64, body: &[u8], out: &mut Vec<u8>) {
        varint(number << 3 | 2, out);
        varint(body.len() as u64, out);
        out.extend_from_slice(body);
    }

    #[test]
    fn scalars_messages_enums_and_strings() {
        let mut buffer = Vec::new();
        varint(1 << 3, &mut buffer); // size_kb
        varint(65536, &mut buffer);
        varint(4 << 3, &mut buffer); // fill_policy
        varint(2, &mut buffer); // DISCARD
        let mut source_config = Vec::new();
        len_field(1, b"linux.\"ftrace\"", &mut source_config);
        let mut data_source = Vec::new();
        len_field(1, &source_config, &mut data_source);
        let mut config = Vec::new();
        len_field(1, &buffer, &mut config);
        len_field(2, &data_source, &mut config);
        varint(3 << 3, &mut config); // duration_ms
        varint(10_000, &mut config);
        varint(28 << 3, &mut config); // trace_uuid_lsb
        varint(-5i64 as u64, &mut config);
        varint(9999 << 3, &mut config); // not in the schema
        varint(7, &mut config);
        assert_eq!(
            trace_config_text(&config),
            "buffers {\n  size_kb: 65536\n  fill_policy: DISCARD\n}\n\
             data_sources {\n  config {\n    name: \"linux.\\\"ftrace\\\"\"\n  }\n}\n\
             duration_ms: 10000\ntrace_uuid_lsb: -5\n9999: 7"
        );
    }

    #[test]
    fn packed_values_print_one_per_line() {
        // data_sources { config { heapprofd_config { pid: 7 pid: 300 } } }, pid packed.
        let mut pids = Vec::new();
        varint(7, &mut pids);
        varint(300, &mut pids);
        let mut heapprofd = Vec::new();
        len_field(4, &pids, &mut heapprofd);
        let mut source_config = Vec::new();
        len_field(105, &heapprofd, &mut source_config);
        let mut data_source = Vec::new();
        len_field(1, &source_config, &mut data_source);
        let mut config = Vec::new();
        len_field(2, &data_source, &mut config);
        assert_eq!(
            trace_config_text(&config),
            "data_sources {\n  config {\n    heapprofd_config {\n      pid: 7\n      pid: 300\n    }\n  }\n}"
        );
    }

    #[test]
    fn unknown_enum_values_print_as_numbers_and_bad_bytes_end_the_text() {
        let mut config = Vec::new();
        varint(5 << 3, &mut config); // lockdown_mode
        varint(42, &mut config);
        varint(3 << 3, &mut config);
        config.push(0x80); // a varint cut short
        assert_eq!(trace_config_text(&config), "lockdown_mode: 42");
    }
}
