//! TrackEvent debug annotations (and legacy JSON values) as args: key naming, nesting of
//! dicts and arrays, value types. Hands on arg sets.

use super::*;

impl Parser<'_> {
    /// Step 11 of the arg order: debug annotations under `debug.`.
    pub(super) fn debug_annotations(
        &mut self,
        args: &mut ArgsBuilder,
        machine: MachineId,
        seq_id: u32,
        ev: &protos::TrackEvent,
    ) {
        for ann in &ev.debug_annotations {
            let Some(name) = self.annotation_name(machine, seq_id, ann) else {
                continue;
            };
            let clean: String = name
                .chars()
                .map(|c| if matches!(c, '.' | '[' | ']') { '_' } else { c })
                .collect();
            let key = format!("debug.{clean}");
            // An annotation that adds no entry (no value, empty dict or array) still shows
            // its key, as a null (Trace Processor's DebugAnnotationParser: `AddNull` when
            // nothing was added); one that failed has been counted and adds nothing.
            if self.annotation(machine, seq_id, args, &key, &key, ann, 0) == Some(false) {
                let k = self.sink.intern(&key);
                args.add(k, k, ArgValue::Null);
            }
        }
    }

    /// The name of an annotation or of a dict entry: inline `name`, or `name_iid` resolved in
    /// the sequence's interned `debug_annotation_names` (Trace Processor's
    /// ParseDebugAnnotationName serves both). A missing name or unknown iid is an error,
    /// counted here (an unknown iid is also an interning lookup failure).
    fn annotation_name(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ann: &protos::DebugAnnotation,
    ) -> Option<String> {
        let name = match &ann.name_field {
            Some(debug_annotation::NameField::Name(n)) => Some(n.clone()),
            Some(debug_annotation::NameField::NameIid(iid)) => self
                .sequences
                .get(&(machine, seq_id))
                .and_then(|s| s.annotation_names.get(iid).copied())
                .and_then(|id| self.sink.strings.get(id).map(str::to_string)),
            None => None,
        };
        if name.is_none() {
            if matches!(
                ann.name_field,
                Some(debug_annotation::NameField::NameIid(_))
            ) {
                self.sink.stat("interned_data_tokenizer_errors", machine, 1);
            }
            self.sink.stat("track_event_parser_errors", machine, 1);
        }
        name
    }

    /// Adds one annotation value under `key`: `Some(true)` if it added an entry,
    /// `Some(false)` if there was nothing to add, `None` on an error (already counted).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn annotation(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        args: &mut ArgsBuilder,
        flat: &str,
        key: &str,
        ann: &protos::DebugAnnotation,
        depth: usize,
    ) -> Option<bool> {
        if depth > 32 {
            return Some(false);
        }
        if let Some(bytes) = &ann.proto_value {
            // A typed proto value: reflected under the annotation's key.
            let type_name = match &ann.proto_type_descriptor {
                Some(debug_annotation::ProtoTypeDescriptor::ProtoTypeName(n)) => Some(n.clone()),
                Some(debug_annotation::ProtoTypeDescriptor::ProtoTypeNameIid(iid)) => self
                    .sequences
                    .get(&(machine, seq_id))
                    .and_then(|s| s.value_type_names.get(iid).copied())
                    .and_then(|id| self.sink.strings.get(id).map(str::to_string)),
                None => None,
            };
            match type_name {
                Some(t) => {
                    self.reflect_proto_value(args, key, &t, bytes, machine, seq_id);
                    return Some(true);
                }
                None => {
                    if matches!(
                        ann.proto_type_descriptor,
                        Some(debug_annotation::ProtoTypeDescriptor::ProtoTypeNameIid(_))
                    ) {
                        self.sink.stat("interned_data_tokenizer_errors", machine, 1);
                    }
                    self.sink.stat("track_event_parser_errors", machine, 1);
                    return None;
                }
            }
        }
        if !ann.dict_entries.is_empty() {
            // Entries are named like the annotation itself (inline or interned name); an
            // entry whose interned name or value fails ends the dict (the entries added so
            // far stay). An entry without any name adds nothing.
            let mut added = false;
            for e in &ann.dict_entries {
                if e.name_field.is_none() {
                    continue;
                }
                let n = self.annotation_name(machine, seq_id, e)?;
                match self.annotation(
                    machine,
                    seq_id,
                    args,
                    &format!("{flat}.{n}"),
                    &format!("{key}.{n}"),
                    e,
                    depth + 1,
                ) {
                    Some(a) => added |= a,
                    None => return None,
                }
            }
            return Some(added);
        }
        if !ann.array_values.is_empty() {
            // An element that adds nothing does not use up its index (the reference
            // advances the array index only after an added entry).
            let mut i = 0;
            for e in &ann.array_values {
                let element = format!("{key}[{i}]");
                if self.annotation(machine, seq_id, args, flat, &element, e, depth + 1)
                    == Some(true)
                {
                    i += 1;
                }
            }
            return Some(i > 0);
        }
        let value = match &ann.value {
            Some(debug_annotation::Value::BoolValue(v)) => ArgValue::Bool(*v),
            Some(debug_annotation::Value::UintValue(v)) => ArgValue::Uint(*v),
            Some(debug_annotation::Value::IntValue(v)) => ArgValue::Int(*v),
            Some(debug_annotation::Value::DoubleValue(v)) => ArgValue::Real(*v),
            Some(debug_annotation::Value::StringValue(s)) => ArgValue::Str(self.sink.intern(s)),
            Some(debug_annotation::Value::StringValueIid(iid)) => {
                match self
                    .sequences
                    .get(&(machine, seq_id))
                    .and_then(|s| s.interned_strings.get(iid).copied())
                {
                    Some(s) => ArgValue::Str(s),
                    None => {
                        self.sink.stat("interned_data_tokenizer_errors", machine, 1);
                        self.sink.stat("track_event_parser_errors", machine, 1);
                        return None;
                    }
                }
            }
            Some(debug_annotation::Value::PointerValue(v)) => ArgValue::Pointer(*v),
            Some(debug_annotation::Value::LegacyJsonValue(s)) => {
                match serde_json::from_str::<serde_json::Value>(s) {
                    Ok(v) => {
                        self.json_value(args, flat, key, &v, depth);
                        return Some(true);
                    }
                    // Trace Processor's AddJson fails ("Failed to parse JSON"): an error,
                    // and the annotation adds nothing.
                    Err(_) => {
                        self.sink.stat("track_event_parser_errors", machine, 1);
                        return None;
                    }
                }
            }
            Some(debug_annotation::Value::NestedValue(n)) => {
                self.nested_value(args, flat, key, n, depth);
                return Some(true);
            }
            None => return Some(false),
        };
        let (f, k) = (self.sink.intern(flat), self.sink.intern(key));
        args.add(f, k, value);
        Some(true)
    }

    /// Expands a legacy JSON annotation like Chrome JSON args: dicts join keys with `.`,
    /// arrays index the key; null and empty containers give nothing.
    pub(super) fn json_value(
        &mut self,
        args: &mut ArgsBuilder,
        flat: &str,
        key: &str,
        v: &serde_json::Value,
        depth: usize,
    ) {
        use serde_json::Value as J;
        if depth > 32 {
            return;
        }
        let value = match v {
            J::Object(map) => {
                for (k, v) in map {
                    self.json_value(
                        args,
                        &format!("{flat}.{k}"),
                        &format!("{key}.{k}"),
                        v,
                        depth + 1,
                    );
                }
                return;
            }
            J::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    self.json_value(args, flat, &format!("{key}[{i}]"), v, depth + 1);
                }
                return;
            }
            J::Null => return,
            J::Bool(b) => ArgValue::Bool(*b),
            J::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => ArgValue::Int(i),
                (None, Some(u)) => ArgValue::Uint(u),
                _ => ArgValue::Real(n.as_f64().unwrap_or(0.0)),
            },
            J::String(s) => ArgValue::Str(self.sink.intern(s)),
        };
        let (f, k) = (self.sink.intern(flat), self.sink.intern(key));
        args.add(f, k, value);
    }

    pub(super) fn nested_value(
        &mut self,
        args: &mut ArgsBuilder,
        flat: &str,
        key: &str,
        n: &debug_annotation::NestedValue,
        depth: usize,
    ) {
        if depth > 32 {
            return;
        }
        match n.nested_type.unwrap_or(0) {
            1 => {
                for (k, v) in n.dict_keys.iter().zip(&n.dict_values) {
                    self.nested_value(
                        args,
                        &format!("{flat}.{k}"),
                        &format!("{key}.{k}"),
                        v,
                        depth + 1,
                    );
                }
            }
            2 => {
                for (i, v) in n.array_values.iter().enumerate() {
                    self.nested_value(args, flat, &format!("{key}[{i}]"), v, depth + 1);
                }
            }
            _ => {
                let value = if let Some(v) = n.int_value {
                    ArgValue::Int(v)
                } else if let Some(v) = n.double_value {
                    ArgValue::Real(v)
                } else if let Some(v) = n.bool_value {
                    ArgValue::Bool(v)
                } else if let Some(s) = &n.string_value {
                    ArgValue::Str(self.sink.intern(s))
                } else {
                    return;
                };
                let (f, k) = (self.sink.intern(flat), self.sink.intern(key));
                args.add(f, k, value);
            }
        }
    }

    // ----- ftrace ------------------------------------------------------------------------
}
