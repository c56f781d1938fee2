//! The V8 tracker: isolates, scripts, functions and the code V8 loads, as Trace
//! Processor's V8Tracker keeps them. An isolate is one row per (process, isolate id), made
//! when a code event first names it; scripts are one per (isolate, script id) — the first
//! description wins — and functions one per distinct (name, script, toplevel, kind, line,
//! column). Compiled code becomes a `__intrinsic_jit_code` row (its thread, address, size,
//! name, machine code) when it lies in one of its isolate's code regions (the code range,
//! the embedded blob or its copy); code with no address range is counted in
//! `v8_code_load_missing_code_range`, code outside every region in `v8_no_code_range`, and
//! neither leaves rows. Interpreted (Ignition) JS code has no JIT code: its row keeps the
//! bytecode.
//!
//! Hands on rows in [`V8Tables`] (written by `db::whole`).

use super::*;
use crate::ir::{V8Code, V8CodeKind, V8IsolateRef, V8JsFunction};

/// `__intrinsic_v8_isolate` row.
#[derive(Clone, Copy, Debug)]
pub struct V8IsolateRow {
    pub upid: u32,
    pub isolate: V8IsolateRef,
}

/// `__intrinsic_v8_js_script` row.
#[derive(Clone, Copy, Debug)]
pub struct V8JsScriptRow {
    pub isolate: u32,
    pub script: crate::ir::V8JsScript,
}

/// `__intrinsic_v8_wasm_script` row.
#[derive(Clone, Copy, Debug)]
pub struct V8WasmScriptRow {
    pub isolate: u32,
    pub script: crate::ir::V8WasmScript,
}

/// `__intrinsic_jit_code` row.
#[derive(Clone, Copy, Debug)]
pub struct JitCodeRow {
    pub create_ts: i64,
    pub utid: u32,
    pub start: i64,
    pub size: i64,
    pub function_name: StrId,
    pub native_code: StrId,
}

/// A row of one of the four V8 code tables.
#[derive(Clone, Copy, Debug)]
pub enum V8CodeRow {
    /// (jit code, function, tier, bytecode)
    Js(Option<u32>, u32, StrId, StrId),
    /// (jit code, isolate, function name, code type)
    Internal(u32, u32, StrId, StrId),
    /// (jit code, isolate, wasm script, function name, tier, offset in module)
    Wasm(u32, u32, u32, StrId, StrId, Option<i64>),
    /// (jit code, isolate, pattern)
    RegExp(u32, u32, StrId),
}

/// The V8 rows, and the keys that make them unique.
#[derive(Debug, Default)]
pub struct V8Tables {
    pub isolates: Vec<V8IsolateRow>,
    pub js_scripts: Vec<V8JsScriptRow>,
    pub wasm_scripts: Vec<V8WasmScriptRow>,
    /// (script row, function)
    pub js_functions: Vec<(u32, V8JsFunction)>,
    pub jit_code: Vec<JitCodeRow>,
    pub code: Vec<V8CodeRow>,
    isolate_index: FxHashMap<(u32, i64), u32>,
    script_index: FxHashMap<(u32, i64), u32>,
    wasm_script_index: FxHashMap<(u32, i64), u32>,
    function_index: FxHashMap<(u32, V8JsFunction), u32>,
}

impl V8Tables {
    fn isolate(&mut self, upid: u32, isolate: &V8IsolateRef) -> u32 {
        let next = self.isolates.len() as u32;
        let id = *self
            .isolate_index
            .entry((upid, isolate.isolate_id))
            .or_insert(next);
        if id == next {
            self.isolates.push(V8IsolateRow {
                upid,
                isolate: *isolate,
            });
        }
        id
    }

    /// Whether `[start, start + size)` lies in one of the isolate's code regions.
    fn in_code_regions(&self, isolate: u32, start: i64, size: i64) -> bool {
        let i = &self.isolates[isolate as usize].isolate;
        let end = start.saturating_add(size);
        let contains = |base: i64, len: i64| start >= base && end <= base.saturating_add(len);
        contains(i.code_range.base, i.code_range.size)
            || contains(i.blob_start, i.blob_size)
            || i.code_range
                .blob_copy_start
                .is_some_and(|copy| contains(copy, i.blob_size))
    }
}

impl Builder<'_> {
    pub(super) fn v8_code(&mut self, ts: i64, code: &V8Code) {
        let upid = self.process(code.isolate.process);
        let isolate = self.tables.v8.isolate(upid, &code.isolate);
        let (Some(thread), Some(kind)) = (code.thread, code.kind) else {
            return;
        };
        let utid = self.thread(thread);
        let v8 = &mut self.tables.v8;
        let interpreted = matches!(
            kind,
            V8CodeKind::Js {
                bytecode: Some(_),
                ..
            }
        );
        let jit = if interpreted {
            None
        } else if code.size <= 0 {
            self.sink
                .stat("v8_code_load_missing_code_range", thread.machine, 1);
            return;
        } else if !v8.in_code_regions(isolate, code.start, code.size) {
            self.sink.stat("v8_no_code_range", thread.machine, 1);
            return;
        } else {
            let function_name = match kind {
                V8CodeKind::Js { function, .. } => function.name,
                V8CodeKind::Internal { name, .. } => name,
                V8CodeKind::Wasm { function_name, .. } => function_name,
                V8CodeKind::RegExp { pattern } => pattern,
            };
            v8.jit_code.push(JitCodeRow {
                create_ts: ts,
                utid,
                start: code.start,
                size: code.size,
                function_name,
                native_code: code.machine_code,
            });
            Some(v8.jit_code.len() as u32 - 1)
        };
        let row = match kind {
            V8CodeKind::Js {
                script,
                function,
                tier,
                bytecode,
            } => {
                let next = v8.js_scripts.len() as u32;
                let script_row = *v8
                    .script_index
                    .entry((isolate, script.script_id))
                    .or_insert(next);
                if script_row == next {
                    v8.js_scripts.push(V8JsScriptRow { isolate, script });
                }
                let next = v8.js_functions.len() as u32;
                let function_row = *v8
                    .function_index
                    .entry((script_row, function))
                    .or_insert(next);
                if function_row == next {
                    v8.js_functions.push((script_row, function));
                }
                V8CodeRow::Js(jit, function_row, tier, bytecode.unwrap_or(NULL_STR))
            }
            V8CodeKind::Internal { name, code_type } => {
                V8CodeRow::Internal(jit.unwrap_or(0), isolate, name, code_type)
            }
            V8CodeKind::Wasm {
                script,
                function_name,
                tier,
                offset_in_module,
            } => {
                let next = v8.wasm_scripts.len() as u32;
                let script_row = *v8
                    .wasm_script_index
                    .entry((isolate, script.script_id))
                    .or_insert(next);
                if script_row == next {
                    v8.wasm_scripts.push(V8WasmScriptRow { isolate, script });
                }
                V8CodeRow::Wasm(
                    jit.unwrap_or(0),
                    isolate,
                    script_row,
                    function_name,
                    tier,
                    offset_in_module,
                )
            }
            V8CodeKind::RegExp { pattern } => V8CodeRow::RegExp(jit.unwrap_or(0), isolate, pattern),
        };
        v8.code.push(row);
    }
}
