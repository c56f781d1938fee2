//! V8's code events (TracePacket `v8_js_code`, `v8_internal_code`, `v8_wasm_code`,
//! `v8_reg_exp_code`, `v8_code_move`) and the interned isolates, scripts and functions they
//! name, as Trace Processor's V8Module and V8SequenceState read them: each code event
//! resolves its isolate first (an unknown iid is counted in `v8_intern_errors`), then its
//! thread — the event's tid, else the sequence's `v8_code_defaults` tid, else it is dropped
//! and counted in `v8_no_defaults` — then the function, script or wasm script it names.
//! Code moves only re-place code the reference keeps for symbolizing samples (Sextant does
//! not symbolize JIT frames), so they leave no rows.
//!
//! Hands on [`EventData::V8Code`]; the model's V8 tracker makes the rows.

use super::*;

/// A V8String's text: latin1 bytes are code points, UTF-16 either way round.
fn v8_string(latin1: Option<&[u8]>, le: Option<&[u8]>, be: Option<&[u8]>) -> String {
    if let Some(bytes) = latin1 {
        return bytes.iter().map(|&b| char::from(b)).collect();
    }
    type Unit = fn([u8; 2]) -> u16;
    let (bytes, from): (&[u8], Unit) = match (le, be) {
        (Some(b), _) => (b, u16::from_le_bytes),
        (None, Some(b)) => (b, u16::from_be_bytes),
        (None, None) => return String::new(),
    };
    let units = bytes.chunks_exact(2).map(|c| from([c[0], c[1]]));
    char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

fn v8_string_msg(s: &protos::V8String) -> String {
    use protos::v8_string::EncodedString as E;
    match &s.encoded_string {
        Some(E::Latin1(b)) => v8_string(Some(b), None, None),
        Some(E::Utf16Le(b)) => v8_string(None, Some(b), None),
        Some(E::Utf16Be(b)) => v8_string(None, None, Some(b)),
        None => String::new(),
    }
}

pub(super) fn interned_v8_string(s: &protos::InternedV8String) -> String {
    use protos::interned_v8_string::EncodedString as E;
    match &s.encoded_string {
        Some(E::Latin1(b)) => v8_string(Some(b), None, None),
        Some(E::Utf16Le(b)) => v8_string(None, Some(b), None),
        Some(E::Utf16Be(b)) => v8_string(None, None, Some(b)),
        None => String::new(),
    }
}

/// An enum value's name in the reference's tables: the proto name without its prefix.
fn enum_name(names: &[&'static str], value: i32) -> &'static str {
    usize::try_from(value)
        .ok()
        .and_then(|i| names.get(i))
        .copied()
        .unwrap_or("UNKNOWN")
}

const SCRIPT_TYPES: &[&str] = &[
    "UNKNOWN",
    "NORMAL",
    "EVAL",
    "MODULE",
    "NATIVE",
    "EXTENSION",
    "INSPECTOR",
];
const FUNCTION_KINDS: &[&str] = &[
    "UNKNOWN",
    "NORMAL_FUNCTION",
    "MODULE",
    "ASYNC_MODULE",
    "BASE_CONSTRUCTOR",
    "DEFAULT_BASE_CONSTRUCTOR",
    "DEFAULT_DERIVED_CONSTRUCTOR",
    "DERIVED_CONSTRUCTOR",
    "GETTER_FUNCTION",
    "STATIC_GETTER_FUNCTION",
    "SETTER_FUNCTION",
    "STATIC_SETTER_FUNCTION",
    "ARROW_FUNCTION",
    "ASYNC_ARROW_FUNCTION",
    "ASYNC_FUNCTION",
    "ASYNC_CONCISE_METHOD",
    "STATIC_ASYNC_CONCISE_METHOD",
    "ASYNC_CONCISE_GENERATOR_METHOD",
    "STATIC_ASYNC_CONCISE_GENERATOR_METHOD",
    "ASYNC_GENERATOR_FUNCTION",
    "GENERATOR_FUNCTION",
    "CONCISE_GENERATOR_METHOD",
    "STATIC_CONCISE_GENERATOR_METHOD",
    "CONCISE_METHOD",
    "STATIC_CONCISE_METHOD",
    "CLASS_MEMBERS_INITIALIZER_FUNCTION",
    "CLASS_STATIC_INITIALIZER_FUNCTION",
    "INVALID",
];
const JS_TIERS: &[&str] = &[
    "UNKNOWN",
    "IGNITION",
    "SPARKPLUG",
    "MAGLEV",
    "TURBOSHAFT",
    "TURBOFAN",
];
const TIER_IGNITION: i32 = 1;
const WASM_TIERS: &[&str] = &["UNKNOWN", "LIFTOFF", "TURBOFAN"];
const INTERNAL_TYPES: &[&str] = &[
    "UNKNOWN",
    "BYTECODE_HANDLER",
    "FOR_TESTING",
    "BUILTIN",
    "WASM_FUNCTION",
    "WASM_TO_CAPI_FUNCTION",
    "WASM_TO_JS_FUNCTION",
    "JS_TO_WASM_FUNCTION",
    "JS_TO_JS_FUNCTION",
    "C_WASM_ENTRY",
];

/// What a code event shares, whatever its kind.
struct CodeHead<'a> {
    isolate_iid: u64,
    tid: Option<u32>,
    start: Option<u64>,
    size: Option<u64>,
    machine_code: Option<&'a [u8]>,
}

/// The V8 part of a sequence's interned data and defaults.
#[derive(Default)]
pub(super) struct V8Interned {
    isolates: FxHashMap<u64, protos::InternedV8Isolate>,
    scripts: FxHashMap<u64, protos::InternedV8JsScript>,
    wasm_scripts: FxHashMap<u64, protos::InternedV8WasmScript>,
    functions: FxHashMap<u64, protos::InternedV8JsFunction>,
    function_names: FxHashMap<u64, String>,
    /// The script rows made so far, by iid (a script is decoded once per sequence).
    js_script_rows: FxHashMap<u64, V8JsScript>,
    wasm_script_rows: FxHashMap<u64, V8WasmScript>,
    /// `v8_code_defaults.tid`: `None` without defaults, `Some(None)` with defaults that
    /// give no tid.
    pub(super) default_tid: Option<Option<u32>>,
}

impl V8Interned {
    pub(super) fn intern(&mut self, d: &protos::InternedData) {
        for s in &d.v8_js_function_name {
            self.function_names
                .entry(s.iid.unwrap_or(0))
                .or_insert_with(|| interned_v8_string(s));
        }
        for f in &d.v8_js_function {
            self.functions.entry(f.iid.unwrap_or(0)).or_insert(*f);
        }
        for s in &d.v8_js_script {
            self.scripts
                .entry(s.iid.unwrap_or(0))
                .or_insert_with(|| s.clone());
        }
        for s in &d.v8_wasm_script {
            self.wasm_scripts
                .entry(s.iid.unwrap_or(0))
                .or_insert_with(|| s.clone());
        }
        for i in &d.v8_isolate {
            self.isolates.entry(i.iid.unwrap_or(0)).or_insert(*i);
        }
    }
}

/// The part every V8 code message shares (the four messages have the same field names but
/// are distinct types).
macro_rules! code_head {
    ($code:expr, $machine_code:expr) => {
        CodeHead {
            isolate_iid: $code.v8_isolate_iid.unwrap_or(0),
            tid: $code.tid,
            start: $code.instruction_start,
            size: $code.instruction_size_bytes,
            machine_code: $machine_code,
        }
    };
}

impl Parser<'_> {
    fn v8_state(&self, machine: MachineId, seq_id: u32) -> Option<&V8Interned> {
        self.sequences.get(&(machine, seq_id)).map(|s| &s.v8)
    }

    /// The isolate a code event names, or `None` (counted) when it is not interned or
    /// has no code range (the reference does not support isolates without one yet).
    fn v8_isolate(&mut self, machine: MachineId, seq_id: u32, iid: u64) -> Option<V8IsolateRef> {
        let Some(isolate) = self
            .v8_state(machine, seq_id)
            .and_then(|s| s.isolates.get(&iid))
            .cloned()
        else {
            self.stat("v8_intern_errors", machine);
            return None;
        };
        let Some(range) = &isolate.code_range else {
            self.stat("v8_isolate_has_no_code_range", machine);
            return None;
        };
        Some(V8IsolateRef {
            process: ProcessRef {
                machine,
                pid: i64::from(isolate.pid.unwrap_or(0)),
            },
            isolate_id: i64::from(isolate.isolate_id.unwrap_or(0)),
            blob_start: isolate.embedded_blob_code_start_address.unwrap_or(0) as i64,
            blob_size: isolate.embedded_blob_code_size.unwrap_or(0) as i64,
            code_range: V8CodeRange {
                base: range.base_address.unwrap_or(0) as i64,
                size: range.size.unwrap_or(0) as i64,
                blob_copy_start: range
                    .embedded_blob_code_copy_start_address
                    .map(|a| a as i64),
                process_wide: range.is_process_wide.unwrap_or(false),
            },
        })
    }

    /// The thread of a code event: its own tid, else the sequence's default one.
    fn v8_thread(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        isolate: &V8IsolateRef,
        tid: Option<u32>,
    ) -> Option<ThreadRef> {
        let tid = match tid {
            Some(t) => t,
            None => match self.v8_state(machine, seq_id).and_then(|s| s.default_tid) {
                Some(Some(t)) => t,
                _ => {
                    self.stat("v8_no_defaults", machine);
                    return None;
                }
            },
        };
        Some(ThreadRef {
            machine,
            tid: i64::from(tid),
            pid: Some(isolate.process.pid),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn v8_push(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        head: &CodeHead,
        kind: impl FnOnce(&mut Self, &mut V8Interned) -> Option<V8CodeKind>,
    ) {
        // Used even when it leaves no rows (the stats say why).
        self.sink.touch();
        let Some(isolate) = self.v8_isolate(machine, seq_id, head.isolate_iid) else {
            return;
        };
        let thread = self.v8_thread(machine, seq_id, &isolate, head.tid);
        let kind = match thread {
            Some(_) => {
                let mut state = self
                    .sequences
                    .get_mut(&(machine, seq_id))
                    .map(|s| std::mem::take(&mut s.v8))
                    .unwrap_or_default();
                let kind = kind(self, &mut state);
                if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
                    seq.v8 = state;
                }
                kind
            }
            None => None,
        };
        let machine_code = match head.machine_code {
            Some(code) => self.sink.intern(&chrome::base64(code)),
            None => NULL_STR,
        };
        let code = V8Code {
            isolate,
            thread,
            kind,
            start: head.start.unwrap_or(0) as i64,
            size: head.size.unwrap_or(0) as i64,
            machine_code,
        };
        self.sink.push(ts, clock, EventData::V8Code(Box::new(code)));
    }

    pub(super) fn v8_js_code(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        code: &protos::V8JsCode,
    ) {
        use protos::v8_js_code::Instructions;
        let machine_code = match &code.instructions {
            Some(Instructions::MachineCode(b)) => Some(b.as_slice()),
            _ => None,
        };
        let head = code_head!(code, machine_code);
        self.v8_push(machine, seq_id, ts, clock, &head, |p, state| {
            let iid = code.v8_js_function_iid.unwrap_or(0);
            let Some(f) = state.functions.get(&iid) else {
                p.stat("v8_intern_errors", machine);
                return None;
            };
            let f = *f;
            // A script's row is made once per sequence: its source may be large and many
            // functions name it.
            let script_iid = f.v8_js_script_iid.unwrap_or(0);
            let script = match state.js_script_rows.get(&script_iid) {
                Some(&row) => row,
                None => {
                    let Some(script) = state.scripts.get(&script_iid) else {
                        p.stat("v8_intern_errors", machine);
                        return None;
                    };
                    let row = V8JsScript {
                        script_id: i64::from(script.script_id.unwrap_or(0)),
                        script_type: p
                            .sink
                            .intern(enum_name(SCRIPT_TYPES, script.r#type.unwrap_or(0))),
                        name: p
                            .sink
                            .intern(&script.name.as_ref().map(v8_string_msg).unwrap_or_default()),
                        source: match &script.source {
                            Some(s) => p.sink.intern(&v8_string_msg(s)),
                            None => NULL_STR,
                        },
                    };
                    state.js_script_rows.insert(script_iid, row);
                    row
                }
            };
            let Some(name) = state
                .function_names
                .get(&f.v8_js_function_name_iid.unwrap_or(0))
            else {
                p.stat("v8_intern_errors", machine);
                return None;
            };
            let function = V8JsFunction {
                name: p.sink.intern(name),
                is_toplevel: f.is_toplevel.unwrap_or(false),
                kind: p
                    .sink
                    .intern(enum_name(FUNCTION_KINDS, f.kind.unwrap_or(0))),
                line: f.line,
                col: f.column,
            };
            let tier = code.tier.unwrap_or(0);
            let bytecode = (tier == TIER_IGNITION).then(|| match &code.instructions {
                Some(Instructions::Bytecode(b)) => p.sink.intern(&chrome::base64(b)),
                _ => NULL_STR,
            });
            Some(V8CodeKind::Js {
                script,
                function,
                tier: p.sink.intern(enum_name(JS_TIERS, tier)),
                bytecode,
            })
        });
    }

    pub(super) fn v8_internal_code(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        code: &protos::V8InternalCode,
    ) {
        let head = code_head!(code, code.machine_code.as_deref());
        self.v8_push(machine, seq_id, ts, clock, &head, |p, _| {
            Some(V8CodeKind::Internal {
                name: p.sink.intern(code.name.as_deref().unwrap_or("")),
                code_type: p
                    .sink
                    .intern(enum_name(INTERNAL_TYPES, code.r#type.unwrap_or(0))),
            })
        });
    }

    pub(super) fn v8_wasm_code(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        code: &protos::V8WasmCode,
    ) {
        let head = code_head!(code, code.machine_code.as_deref());
        self.v8_push(machine, seq_id, ts, clock, &head, |p, state| {
            let iid = code.v8_wasm_script_iid.unwrap_or(0);
            let script = match state.wasm_script_rows.get(&iid) {
                Some(&row) => row,
                None => {
                    let Some(script) = state.wasm_scripts.get(&iid) else {
                        p.stat("v8_intern_errors", machine);
                        return None;
                    };
                    let row = V8WasmScript {
                        script_id: i64::from(script.script_id.unwrap_or(0)),
                        url: p.sink.intern(script.url.as_deref().unwrap_or("")),
                        wire_bytes: match &script.wire_bytes {
                            Some(b) => p.sink.intern(&chrome::base64(b)),
                            None => NULL_STR,
                        },
                    };
                    state.wasm_script_rows.insert(iid, row);
                    row
                }
            };
            Some(V8CodeKind::Wasm {
                script,
                function_name: p.sink.intern(code.function_name.as_deref().unwrap_or("")),
                tier: p.sink.intern(enum_name(WASM_TIERS, code.tier.unwrap_or(0))),
                offset_in_module: code.code_offset_in_module.map(i64::from),
            })
        });
    }

    pub(super) fn v8_regexp_code(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        code: &protos::V8RegExpCode,
    ) {
        let head = code_head!(code, code.machine_code.as_deref());
        self.v8_push(machine, seq_id, ts, clock, &head, |p, _| {
            let pattern = code.pattern.as_ref().map(v8_string_msg).unwrap_or_default();
            Some(V8CodeKind::RegExp {
                pattern: p.sink.intern(&pattern),
            })
        });
    }

    /// A code move: its isolate and thread are checked (and counted) as the reference
    /// does; the move itself only matters for symbolizing samples, which Sextant does not.
    pub(super) fn v8_code_move(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        mv: &protos::V8CodeMove,
    ) {
        self.sink.touch();
        if let Some(isolate) = self.v8_isolate(machine, seq_id, mv.isolate_iid.unwrap_or(0)) {
            self.v8_thread(machine, seq_id, &isolate, mv.tid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v8_strings_decode_latin1_and_utf16_both_ways() {
        assert_eq!(v8_string(Some(&[0x66, 0xe9]), None, None), "fé");
        assert_eq!(v8_string(None, Some(&[0x61, 0]), None), "a");
        assert_eq!(v8_string(None, Some(&[0xb1, 0x03]), None), "α");
        assert_eq!(v8_string(None, None, Some(&[0x03, 0xb1])), "α");
        assert_eq!(enum_name(JS_TIERS, 5), "TURBOFAN");
        assert_eq!(enum_name(JS_TIERS, 99), "UNKNOWN");
    }
}
