//! V8's code events and Chrome's memory-infra snapshots as the parser hands them on: every
//! interned reference resolved, processes and threads still unresolved (the model's
//! `v8` and `memory_snapshot` trackers turn them into rows).

use super::{ProcessRef, StrId, ThreadRef};

/// An isolate as a code event names it (InternedV8Isolate); the model keys its
/// `__intrinsic_v8_isolate` row by (process, `isolate_id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct V8IsolateRef {
    pub process: ProcessRef,
    pub isolate_id: i64,
    pub blob_start: i64,
    pub blob_size: i64,
    pub code_range: V8CodeRange,
}

/// An isolate's code range (its JIT code lives in it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct V8CodeRange {
    pub base: i64,
    pub size: i64,
    /// The copy of the embedded blob inside the range (short builtin calls).
    pub blob_copy_start: Option<i64>,
    /// Shared by every isolate of the process.
    pub process_wide: bool,
}

/// A JS script (InternedV8JsScript), keyed by (isolate, `script_id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct V8JsScript {
    pub script_id: i64,
    /// `NORMAL`, `EVAL`, … (the enum's name without `TYPE_`).
    pub script_type: StrId,
    pub name: StrId,
    /// NULL when the trace gave no source.
    pub source: StrId,
}

/// A JS function (InternedV8JsFunction), keyed by all it says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct V8JsFunction {
    pub name: StrId,
    pub is_toplevel: bool,
    /// `NORMAL_FUNCTION`, `ARROW_FUNCTION`, … (the enum's name without `KIND_`).
    pub kind: StrId,
    pub line: Option<u32>,
    pub col: Option<u32>,
}

/// A wasm script (InternedV8WasmScript), keyed by (isolate, `script_id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct V8WasmScript {
    pub script_id: i64,
    pub url: StrId,
    /// The module's bytes in base64, NULL when absent.
    pub wire_bytes: StrId,
}

/// What kind of code a V8 code event loads, with what its table row needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum V8CodeKind {
    Js {
        script: V8JsScript,
        function: V8JsFunction,
        tier: StrId,
        /// Interpreted (Ignition) code: no JIT code, its bytecode in base64.
        bytecode: Option<StrId>,
    },
    Internal {
        name: StrId,
        code_type: StrId,
    },
    Wasm {
        script: V8WasmScript,
        function_name: StrId,
        tier: StrId,
        offset_in_module: Option<i64>,
    },
    RegExp {
        pattern: StrId,
    },
}

/// One V8 code load. `thread` is `None` when the event had no tid and its sequence no
/// defaults (counted already): the isolate is still interned, as the reference does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct V8Code {
    pub isolate: V8IsolateRef,
    pub thread: Option<ThreadRef>,
    /// `None` when a reference the code names was not interned (counted already).
    pub kind: Option<V8CodeKind>,
    pub start: i64,
    pub size: i64,
    /// The machine code in base64, NULL when absent.
    pub machine_code: StrId,
}

/// One value of a memory-infra node's entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryEntryValue {
    Uint(u64),
    Str(StrId),
}

/// An entry of a memory-infra node (`size` from `size_bytes` first, then the node's list).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemoryEntry {
    pub name: StrId,
    /// Its units are bytes (else objects or unspecified).
    pub bytes: bool,
    pub value: MemoryEntryValue,
}

/// An allocator dump of one process.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemoryNodeDump {
    pub id: u64,
    pub absolute_name: StrId,
    pub weak: bool,
    pub entries: Vec<MemoryEntry>,
}

/// One process's part of a memory-infra snapshot: its allocator dumps and ownership edges
/// (source id, target id, importance).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProcessMemoryDump {
    pub pid: i64,
    pub nodes: Vec<MemoryNodeDump>,
    pub edges: Vec<(u64, u64, u32)>,
}

/// A `memory_tracker_snapshot` packet. `detail` is the level of detail's name
/// (`detailed`, `light`, `background`); `track` the global instant track snapshots sit on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemorySnapshotDump {
    pub machine: super::MachineId,
    pub track: super::TrackRef,
    pub detail: StrId,
    pub processes: Vec<ProcessMemoryDump>,
}
