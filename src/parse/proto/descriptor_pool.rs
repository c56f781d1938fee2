//! The descriptor pool (Trace Processor's `DescriptorPool`): messages and enums by full
//! name, built from FileDescriptorSets — the one Sextant embeds (TrackEvent, the Chrome
//! messages it carries and Chrome's ChromeTrackEvent extensions, `protos/reflected/`,
//! compiled by build.rs) and those a trace brings in
//! `extension_descriptor` packets. Hands on field descriptions to the reflection in
//! [`super::typed_args`].

use std::collections::HashMap;
use std::sync::OnceLock;

use prost::Message;

use crate::ir::FxHashMap;
use crate::protos;

/// The embedded FileDescriptorSet (see build.rs).
static REFLECTED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/reflected.descriptor"));

/// `FieldDescriptorProto.Type` numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Double,
    Float,
    Int64,
    Uint64,
    Int32,
    Fixed64,
    Fixed32,
    Bool,
    String,
    Message,
    Bytes,
    Uint32,
    Enum,
    Sfixed32,
    Sfixed64,
    Sint32,
    Sint64,
}

impl Kind {
    fn from_type(t: i32) -> Option<Kind> {
        Some(match t {
            1 => Kind::Double,
            2 => Kind::Float,
            3 => Kind::Int64,
            4 => Kind::Uint64,
            5 => Kind::Int32,
            6 => Kind::Fixed64,
            7 => Kind::Fixed32,
            8 => Kind::Bool,
            9 => Kind::String,
            11 => Kind::Message,
            12 => Kind::Bytes,
            13 => Kind::Uint32,
            14 => Kind::Enum,
            15 => Kind::Sfixed32,
            16 => Kind::Sfixed64,
            17 => Kind::Sint32,
            18 => Kind::Sint64,
            // Groups (10) are not reflected.
            _ => return None,
        })
    }

    /// The wire type a single value of this kind has (a LEN of a scalar kind is packed).
    pub(crate) fn wire_type(self) -> u8 {
        match self {
            Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => 1,
            Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => 5,
            Kind::String | Kind::Bytes | Kind::Message => 2,
            _ => 0,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct FieldDesc {
    pub name: Box<str>,
    pub kind: Kind,
    pub repeated: bool,
    pub is_extension: bool,
    /// The message or enum type, by full name (`.perfetto.protos.X`).
    pub type_name: Box<str>,
    /// Index of that message or enum, once resolved.
    pub target: Option<usize>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct MessageDesc {
    pub fields: FxHashMap<u32, FieldDesc>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct EnumDesc {
    /// Value names by number (the first name of an aliased number).
    pub values: FxHashMap<i32, Box<str>>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Pool {
    pub messages: Vec<MessageDesc>,
    by_name: HashMap<Box<str>, usize>,
    pub enums: Vec<EnumDesc>,
    enum_by_name: HashMap<Box<str>, usize>,
}

/// Extensions whose extendee was not (yet) known: added when it is.
struct Pending {
    extendee: String,
    number: u32,
    field: FieldDesc,
}

impl Pool {
    /// The pool every import starts from: the embedded descriptors.
    pub(crate) fn builtin() -> &'static Pool {
        static POOL: OnceLock<Pool> = OnceLock::new();
        POOL.get_or_init(|| {
            let mut pool = Pool::default();
            // The embedded set is built with the binary: it decodes.
            let _ = pool.add_file_set(REFLECTED);
            pool
        })
    }

    pub(crate) fn message(&self, full_name: &str) -> Option<usize> {
        self.by_name.get(full_name).copied()
    }

    /// Adds the messages, enums and extensions of a serialized FileDescriptorSet. A message
    /// already in the pool keeps its fields and gains the new ones (Trace Processor merges
    /// existing messages so).
    pub(crate) fn add_file_set(&mut self, bytes: &[u8]) -> Result<(), prost::DecodeError> {
        let set = protos::FileDescriptorSet::decode(bytes)?;
        let mut pending = Vec::new();
        for file in &set.file {
            let package = match file.package.as_deref() {
                Some(p) if !p.is_empty() => format!(".{p}"),
                _ => String::new(),
            };
            for e in &file.enum_type {
                self.add_enum(&package, e);
            }
            for m in &file.message_type {
                self.add_message(&package, m, &mut pending);
            }
            for ext in &file.extension {
                if let Some(p) = extension(&package, ext) {
                    pending.push(p);
                }
            }
        }
        for p in pending {
            let index = match self.by_name.get(p.extendee.as_str()) {
                Some(&i) => i,
                None => self.new_message(&p.extendee),
            };
            self.messages[index]
                .fields
                .entry(p.number)
                .or_insert(p.field);
        }
        self.resolve();
        Ok(())
    }

    fn new_message(&mut self, name: &str) -> usize {
        let index = self.messages.len();
        self.messages.push(MessageDesc {
            fields: FxHashMap::default(),
        });
        self.by_name.insert(name.into(), index);
        index
    }

    fn add_enum(&mut self, scope: &str, e: &protos::EnumDescriptorProto) {
        let name = format!("{scope}.{}", e.name.as_deref().unwrap_or(""));
        if self.enum_by_name.contains_key(name.as_str()) {
            return;
        }
        let mut desc = EnumDesc::default();
        for v in &e.value {
            desc.values
                .entry(v.number.unwrap_or(0))
                .or_insert_with(|| v.name.as_deref().unwrap_or("").into());
        }
        self.enum_by_name.insert(name.into(), self.enums.len());
        self.enums.push(desc);
    }

    fn add_message(
        &mut self,
        scope: &str,
        m: &protos::DescriptorProto,
        pending: &mut Vec<Pending>,
    ) {
        let name = format!("{scope}.{}", m.name.as_deref().unwrap_or(""));
        for e in &m.enum_type {
            self.add_enum(&name, e);
        }
        for n in &m.nested_type {
            self.add_message(&name, n, pending);
        }
        for ext in &m.extension {
            if let Some(p) = extension(&name, ext) {
                pending.push(p);
            }
        }
        let index = match self.by_name.get(name.as_str()) {
            Some(&i) => i,
            None => self.new_message(&name),
        };
        for f in &m.field {
            let Some(field) = field_desc(&name, f, false) else {
                continue;
            };
            let number = f.number.unwrap_or(0) as u32;
            self.messages[index].fields.entry(number).or_insert(field);
        }
    }

    /// Points every message/enum field at its type.
    fn resolve(&mut self) {
        let (by_name, enum_by_name) = (&self.by_name, &self.enum_by_name);
        for m in &mut self.messages {
            for f in m.fields.values_mut() {
                if f.target.is_some() {
                    continue;
                }
                f.target = match f.kind {
                    Kind::Message => by_name.get(&*f.type_name).copied(),
                    Kind::Enum => enum_by_name.get(&*f.type_name).copied(),
                    _ => None,
                };
            }
        }
    }
}

/// A field's description; relative type names are taken as relative to the package of
/// the message declaring them (compilers write full names; a bare name is resolved in the
/// enclosing scopes at lookup, which is what `resolve` does with the full name given here).
fn field_desc(
    scope: &str,
    f: &protos::FieldDescriptorProto,
    is_extension: bool,
) -> Option<FieldDesc> {
    let kind = Kind::from_type(f.r#type.unwrap_or(0))?;
    let mut type_name = f.type_name.clone().unwrap_or_default();
    if !type_name.is_empty() && !type_name.starts_with('.') {
        // Not fully qualified: take it as declared next to the scope's package.
        let package = scope.rsplit_once('.').map_or("", |(p, _)| p);
        type_name = format!("{package}.{type_name}");
    }
    Some(FieldDesc {
        name: f.name.as_deref().unwrap_or("").into(),
        kind,
        repeated: f.label == Some(3),
        is_extension,
        type_name: type_name.into(),
        target: None,
    })
}

fn extension(scope: &str, f: &protos::FieldDescriptorProto) -> Option<Pending> {
    let field = field_desc(scope, f, true)?;
    let mut extendee = f.extendee.clone()?;
    if !extendee.starts_with('.') {
        let package = scope.rsplit_once('.').map_or("", |(p, _)| p);
        extendee = format!("{package}.{extendee}");
    }
    Some(Pending {
        extendee,
        number: f.number.unwrap_or(0) as u32,
        field,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_pool_knows_track_event_chrome_fields_and_extensions() {
        let pool = Pool::builtin();
        let te = pool
            .message(".perfetto.protos.TrackEvent")
            .expect("TrackEvent");
        let fields = &pool.messages[te].fields;
        let histogram = &fields[&28];
        assert_eq!(&*histogram.name, "chrome_histogram_sample");
        assert_eq!(histogram.kind, Kind::Message);
        assert!(histogram.target.is_some());
        let app_state = &fields[&1000];
        assert_eq!(&*app_state.name, "chrome_app_state");
        assert!(app_state.is_extension);
        let e = &pool.enums[app_state.target.expect("enum resolved")];
        assert_eq!(e.values.get(&1).map(|s| &**s), Some("APP_STATE_FOREGROUND"));
    }
}
