//! The bulk load's writer thread, which owns the import's SQLite connection outright. The
//! model builds rows on the import thread while this thread inserts them: SQLite's per-row
//! work is most of an import's write time, and the two halves then run on two cores.
//!
//! Everything the import writes reaches this thread as a [`Message`], in order: batches of
//! rows of any table (strings copied into one buffer per batch, so the writer needs nothing
//! of the parser's state), the clearing of a table that a checkpoint rewrites, and the
//! transaction boundaries. Nothing else touches the connection until the thread hands it
//! back at the end ([`Pipe::finish`]).
//!
//! The rule that keeps an import from ever hanging: no lock is shared with this thread, and
//! nothing the import thread holds while it sends can be wanted by this thread. The channel
//! is bounded (a few batches in flight), so a sender waits only for this thread to insert,
//! and this thread waits for nothing but the next message; when it fails it returns, the
//! channel closes, and the next send fails instead of blocking.
//!
//! Inserts go through multi-row statements, and a row whose id is one more than the table's
//! largest gets its id from SQLite (NULL binds an INTEGER PRIMARY KEY to the next rowid):
//! that skips the search for the id's place in the b-tree, which appending rows in id order
//! does not need.

use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use rusqlite::{ffi, Connection};

use super::DbError;

/// Every table the import writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Table {
    Slice,
    Counter,
    Sched,
    ThreadState,
    FtraceEvent,
    Args,
    SliceFile,
    Machine,
    Process,
    Thread,
    Track,
    Flow,
    State,
    ProtoContent,
    Cpu,
    CpuFrequency,
    ImportLog,
    Stats,
    SextantStats,
    TraceDiagnostics,
    Metadata,
    TraceFile,
    ClockSnapshot,
    ClockNode,
    ClockEdge,
    FilePlacement,
    ClockError,
    TraceTimeCandidate,
    TrackFile,
    TraceBounds,
    FileEvents,
    // Profiles (`super::profile`).
    StackProfileMapping,
    StackProfileFrame,
    StackProfileCallsite,
    StackProfileSymbol,
    CpuProfileStackSample,
    PerfSample,
    PerfSession,
    HeapProfileAllocation,
    HeapProfile,
    ProfilerSample,
    ProfilerCounterSet,
    ProfilerExecutionContext,
    ProfilerTaskContext,
    ProfilerSession,
    ProfilerAsyncContext,
    HeapGraphClass,
    HeapGraphObject,
    HeapGraphReference,
    HeapGraph,
    HeapGraphThreadCallsite,
    TrackEventCallstacks,
    // Chrome (`android_logs` is Android logcat's too).
    AndroidLog,
    ChromeRaw,
    MissingChromeProcesses,
    // Android probes.
    Package,
    GpuCounterGroup,
    // GPUs and their contexts, systemd journal entries.
    Gpu,
    GpuContext,
    Journald,
    AndroidUser,
    GameIntervention,
    FileDescriptor,
    ProfilerSmaps,
    VulkanMemory,
    FrameTimes,
    SpuriousSchedWakeup,
    // Android input events and the base64 protos they keep.
    MotionEvents,
    KeyEvents,
    InputDispatch,
    Base64Protos,
    // V8's code and the JIT code it loads.
    V8Isolate,
    V8JsScript,
    V8WasmScript,
    V8JsFunction,
    V8JsCode,
    V8InternalCode,
    V8WasmCode,
    V8RegExpCode,
    JitCode,
    // Chrome's memory-infra snapshots.
    MemorySnapshot,
    ProcessMemorySnapshot,
    MemorySnapshotNode,
    MemorySnapshotEdge,
    // Winscope.
    ShellTransitions,
    ShellTransitionProtos,
    ShellTransitionParticipants,
    ShellTransitionHandlers,
    SfLayersSnapshot,
    SfLayer,
    SfTransactions,
    WindowManager,
    InputMethodClients,
    InputMethodService,
    InputMethodManagerService,
    ViewCapture,
    ProtoLog,
}

pub(super) const TABLES: usize = 31 + 21 + 3 + 2 + 10 + 4 + 9 + 4 + 13;

/// Every table, in [`Table::index`] order.
pub(super) const ALL: [Table; TABLES] = [
    Table::Slice,
    Table::Counter,
    Table::Sched,
    Table::ThreadState,
    Table::FtraceEvent,
    Table::Args,
    Table::SliceFile,
    Table::Machine,
    Table::Process,
    Table::Thread,
    Table::Track,
    Table::Flow,
    Table::State,
    Table::ProtoContent,
    Table::Cpu,
    Table::CpuFrequency,
    Table::ImportLog,
    Table::Stats,
    Table::SextantStats,
    Table::TraceDiagnostics,
    Table::Metadata,
    Table::TraceFile,
    Table::ClockSnapshot,
    Table::ClockNode,
    Table::ClockEdge,
    Table::FilePlacement,
    Table::ClockError,
    Table::TraceTimeCandidate,
    Table::TrackFile,
    Table::TraceBounds,
    Table::FileEvents,
    Table::StackProfileMapping,
    Table::StackProfileFrame,
    Table::StackProfileCallsite,
    Table::StackProfileSymbol,
    Table::CpuProfileStackSample,
    Table::PerfSample,
    Table::PerfSession,
    Table::HeapProfileAllocation,
    Table::HeapProfile,
    Table::ProfilerSample,
    Table::ProfilerCounterSet,
    Table::ProfilerExecutionContext,
    Table::ProfilerTaskContext,
    Table::ProfilerSession,
    Table::ProfilerAsyncContext,
    Table::HeapGraphClass,
    Table::HeapGraphObject,
    Table::HeapGraphReference,
    Table::HeapGraph,
    Table::HeapGraphThreadCallsite,
    Table::TrackEventCallstacks,
    Table::AndroidLog,
    Table::ChromeRaw,
    Table::MissingChromeProcesses,
    Table::Package,
    Table::GpuCounterGroup,
    Table::Gpu,
    Table::GpuContext,
    Table::Journald,
    Table::AndroidUser,
    Table::GameIntervention,
    Table::FileDescriptor,
    Table::ProfilerSmaps,
    Table::VulkanMemory,
    Table::FrameTimes,
    Table::SpuriousSchedWakeup,
    Table::MotionEvents,
    Table::KeyEvents,
    Table::InputDispatch,
    Table::Base64Protos,
    Table::V8Isolate,
    Table::V8JsScript,
    Table::V8WasmScript,
    Table::V8JsFunction,
    Table::V8JsCode,
    Table::V8InternalCode,
    Table::V8WasmCode,
    Table::V8RegExpCode,
    Table::JitCode,
    Table::MemorySnapshot,
    Table::ProcessMemorySnapshot,
    Table::MemorySnapshotNode,
    Table::MemorySnapshotEdge,
    Table::ShellTransitions,
    Table::ShellTransitionProtos,
    Table::ShellTransitionParticipants,
    Table::ShellTransitionHandlers,
    Table::SfLayersSnapshot,
    Table::SfLayer,
    Table::SfTransactions,
    Table::WindowManager,
    Table::InputMethodClients,
    Table::InputMethodService,
    Table::InputMethodManagerService,
    Table::ViewCapture,
    Table::ProtoLog,
];

impl Table {
    pub(super) fn index(self) -> usize {
        self as usize
    }

    /// The SQL table's name.
    fn name(self) -> &'static str {
        self.shape().0
    }

    /// The table, its columns in the order rows give them, and whether the first column is
    /// the table's INTEGER PRIMARY KEY (rowid).
    fn shape(self) -> (&'static str, &'static str, bool) {
        match self {
            Table::Slice => (
                "slice",
                "id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, \
                 thread_ts, thread_dur, thread_instruction_count, thread_instruction_delta",
                true,
            ),
            Table::Counter => ("counter", "id, ts, track_id, value, arg_set_id", true),
            Table::Sched => (
                "sched_slice",
                "id, ts, dur, cpu, utid, end_state, priority, ucpu",
                true,
            ),
            Table::ThreadState => (
                "thread_state",
                "id, ts, dur, cpu, utid, state, io_wait, blocked_function, waker_utid, \
                 waker_id, irq_context, ucpu",
                true,
            ),
            Table::FtraceEvent => (
                "__intrinsic_ftrace_event",
                "id, ts, name, cpu, utid, arg_set_id, common_flags, ucpu",
                true,
            ),
            Table::Args => (
                "args",
                "id, arg_set_id, flat_key, key, int_value, string_value, real_value, \
                 value_type, display_value",
                true,
            ),
            Table::SliceFile => ("__sextant_slice_file", "slice_id, file_id", true),
            Table::Machine => (
                "machine",
                "id, raw_id, name, sysname, release, version, arch, num_cpus, \
                 android_build_fingerprint, android_device_manufacturer, android_sdk_version, \
                 system_ram_bytes, system_ram_gb, label_index",
                true,
            ),
            Table::Process => (
                "process",
                "id, upid, pid, name, start_ts, end_ts, parent_upid, uid, android_appid, \
                 android_user_id, cmdline, arg_set_id, machine_id",
                true,
            ),
            Table::Thread => (
                "thread",
                "id, utid, tid, name, start_ts, end_ts, upid, is_main_thread, is_idle, \
                 machine_id, arg_set_id",
                true,
            ),
            Table::Track => (
                "__intrinsic_track",
                "id, name, type, dimension_arg_set_id, parent_id, source_arg_set_id, \
                 machine_id, track_group_id, event_type, utid, upid, cpu, unit, description",
                true,
            ),
            Table::Flow => (
                "flow",
                "id, slice_out, slice_in, trace_id, arg_set_id",
                true,
            ),
            Table::State => (
                "__intrinsic_state",
                "id, ts, dur, track_id, category, value, arg_set_id",
                true,
            ),
            Table::ProtoContent => (
                "__sextant_proto_content",
                "id, path, size, count, category, name, arg_set_id, trace_id",
                true,
            ),
            Table::Cpu => (
                "cpu",
                "id, ucpu, cpu, cluster_id, processor, machine_id, capacity, arg_set_id",
                true,
            ),
            Table::CpuFrequency => ("cpu_available_frequencies", "id, cpu, freq, ucpu", true),
            Table::ImportLog => (
                "_trace_import_logs",
                "id, trace_id, ts, byte_offset, severity, name, arg_set_id",
                true,
            ),
            Table::Stats => (
                "stats",
                "id, name, key, idx, severity, source, value, description, machine_id, trace_id",
                true,
            ),
            Table::SextantStats => (
                "sextant_stats",
                "id, name, key, idx, severity, source, value, description, machine_id, trace_id",
                true,
            ),
            Table::TraceDiagnostics => (
                "__intrinsic_trace_diagnostics",
                "id, key, title, description, remediation, confidence, trace_id",
                true,
            ),
            Table::Metadata => (
                "metadata",
                "id, name, key_type, int_value, str_value, machine_id, trace_id",
                true,
            ),
            Table::TraceFile => (
                "__intrinsic_trace_file",
                "id, parent_id, name, size, trace_type, processing_order, is_container",
                true,
            ),
            Table::ClockSnapshot => (
                "clock_snapshot",
                "id, ts, clock_id, clock_name, clock_value, snapshot_id, machine_id",
                true,
            ),
            Table::ClockNode => (
                "__sextant_clock_node",
                "id, machine_id, clock_id, clock_name, file_id, sequence_id, label, \
                 is_trace_time",
                true,
            ),
            Table::ClockEdge => (
                "__sextant_clock_edge",
                "src_node_id, dst_node_id, source, offset_ns, readings, file_id",
                false,
            ),
            Table::FilePlacement => (
                "__sextant_file_placement",
                "file_id, machine_id, node_id, status, path, events, dropped",
                false,
            ),
            Table::ClockError => (
                "__sextant_clock_error",
                "file_id, machine_id, message",
                false,
            ),
            Table::TraceTimeCandidate => (
                "__sextant_trace_time_candidate",
                "node_id, label, is_current, dropped_events",
                false,
            ),
            Table::TrackFile => ("__sextant_track_file", "track_id, file_id", true),
            Table::TraceBounds => ("trace_bounds", "start_ts, end_ts", false),
            Table::AndroidLog => (
                "__intrinsic_android_logs",
                "id, ts, utid, prio, tag, msg",
                true,
            ),
            Table::ChromeRaw => (
                "__intrinsic_chrome_raw",
                "id, ts, name, utid, arg_set_id",
                true,
            ),
            Table::MissingChromeProcesses => (
                "experimental_missing_chrome_processes",
                "id, upid, reliable_from",
                true,
            ),
            Table::FileEvents => (
                "__sextant_file_events",
                "file_id, read, imported, dropped, unaccounted",
                true,
            ),
            Table::GpuCounterGroup => (
                "__intrinsic_gpu_counter_group",
                "id, group_id, name, description, track_id",
                true,
            ),
            Table::Package => (
                "__intrinsic_package_list",
                "id, package_name, uid, debuggable, profileable_from_shell, version_code, \
                 machine_id",
                true,
            ),
            Table::Gpu => (
                "__intrinsic_gpu",
                "id, gpu, name, vendor, model, architecture, uuid, pci_bdf, machine_id, \
                 arg_set_id",
                true,
            ),
            Table::GpuContext => (
                "__intrinsic_gpu_context",
                "id, context_id, pid, api, machine_id",
                true,
            ),
            Table::Journald => (
                "__intrinsic_journald_logs",
                "id, ts, utid, pid, tid, uid, gid, prio, tag, msg, comm, exe, systemd_unit, \
                 hostname, transport",
                true,
            ),
            Table::AndroidUser => (
                "__intrinsic_android_user_list",
                "id, android_user_id, type, machine_id",
                true,
            ),
            Table::GameIntervention => (
                "android_game_intervention_list",
                "id, package_name, uid, current_mode, standard_mode_supported, \
                 standard_mode_downscale, standard_mode_use_angle, standard_mode_fps, \
                 perf_mode_supported, perf_mode_downscale, perf_mode_use_angle, perf_mode_fps, \
                 battery_mode_supported, battery_mode_downscale, battery_mode_use_angle, \
                 battery_mode_fps",
                true,
            ),
            Table::FileDescriptor => ("filedescriptor", "id, ufd, fd, ts, upid, path", true),
            Table::MemorySnapshot => (
                "memory_snapshot",
                "id, timestamp, track_id, detail_level",
                true,
            ),
            Table::ProcessMemorySnapshot => {
                ("process_memory_snapshot", "id, snapshot_id, upid", true)
            }
            Table::MemorySnapshotNode => (
                "memory_snapshot_node",
                "id, process_snapshot_id, parent_node_id, path, size, effective_size, arg_set_id",
                true,
            ),
            Table::MemorySnapshotEdge => (
                "memory_snapshot_edge",
                "id, source_node_id, target_node_id, importance",
                true,
            ),
            Table::V8Isolate => (
                "__intrinsic_v8_isolate",
                "id, upid, internal_isolate_id, embedded_blob_code_start_address, \
                 embedded_blob_code_size, code_range_base_address, code_range_size, \
                 shared_code_range, embedded_blob_code_copy_start_address",
                true,
            ),
            Table::V8JsScript => (
                "__intrinsic_v8_js_script",
                "id, v8_isolate_id, internal_script_id, script_type, name, source",
                true,
            ),
            Table::V8WasmScript => (
                "__intrinsic_v8_wasm_script",
                "id, v8_isolate_id, internal_script_id, url, wire_bytes_base64, source",
                true,
            ),
            Table::V8JsFunction => (
                "__intrinsic_v8_js_function",
                "id, name, v8_js_script_id, is_toplevel, kind, line, col",
                true,
            ),
            Table::V8JsCode => (
                "__intrinsic_v8_js_code",
                "id, jit_code_id, v8_js_function_id, tier, bytecode_base64",
                true,
            ),
            Table::V8InternalCode => (
                "__intrinsic_v8_internal_code",
                "id, jit_code_id, v8_isolate_id, function_name, code_type",
                true,
            ),
            Table::V8WasmCode => (
                "__intrinsic_v8_wasm_code",
                "id, jit_code_id, v8_isolate_id, v8_wasm_script_id, function_name, tier, \
                 code_offset_in_module",
                true,
            ),
            Table::V8RegExpCode => (
                "__intrinsic_v8_regexp_code",
                "id, jit_code_id, v8_isolate_id, pattern",
                true,
            ),
            Table::JitCode => (
                "__intrinsic_jit_code",
                "id, create_ts, estimated_delete_ts, utid, start_address, size, function_name, \
                 native_code_base64",
                true,
            ),
            Table::ProfilerSmaps => (
                "profiler_smaps",
                "id, upid, ts, path, size_kb, private_dirty_kb, swap_kb, file_name, \
                 start_address, module_timestamp, module_debugid, module_debug_path, \
                 protection_flags, private_clean_resident_kb, shared_dirty_resident_kb, \
                 shared_clean_resident_kb, locked_kb, proportional_resident_kb",
                true,
            ),
            Table::VulkanMemory => (
                "vulkan_memory_allocations",
                "id, arg_set_id, source, operation, timestamp, upid, device, device_memory, \
                 memory_type, heap, function_name, object_handle, memory_address, memory_size, \
                 scope",
                true,
            ),
            Table::MotionEvents => (
                "__intrinsic_android_motion_events",
                "id, event_id, ts, arg_set_id, base64_proto_id",
                true,
            ),
            Table::KeyEvents => (
                "__intrinsic_android_key_events",
                "id, event_id, ts, arg_set_id, base64_proto_id",
                true,
            ),
            Table::InputDispatch => (
                "__intrinsic_android_input_event_dispatch",
                "id, event_id, arg_set_id, vsync_id, window_id, base64_proto_id",
                true,
            ),
            Table::Base64Protos => ("__intrinsic_base64_proto", "id, str", true),
            Table::ShellTransitions => (
                "__intrinsic_window_manager_shell_transitions",
                "id, ts, transition_id, arg_set_id, transition_type, send_time_ns, \
                 dispatch_time_ns, duration_ns, finish_time_ns, shell_abort_time_ns, handler, \
                 status, flags, start_transaction_id, finish_transaction_id",
                true,
            ),
            Table::ShellTransitionProtos => (
                "__intrinsic_window_manager_shell_transition_protos",
                "id, transition_id, base64_proto_id",
                true,
            ),
            Table::ShellTransitionParticipants => (
                "__intrinsic_window_manager_shell_transition_participants",
                "id, transition_id, layer_id, window_id",
                true,
            ),
            Table::ShellTransitionHandlers => (
                "__intrinsic_window_manager_shell_transition_handlers",
                "id, handler_id, handler_name, base64_proto_id",
                true,
            ),
            Table::SfLayersSnapshot => (
                "__intrinsic_surfaceflinger_layers_snapshot",
                "id, ts, arg_set_id, base64_proto_id",
                true,
            ),
            Table::SfLayer => (
                "__intrinsic_surfaceflinger_layer",
                "id, snapshot_id, arg_set_id, base64_proto_id",
                true,
            ),
            Table::SfTransactions => (
                "__intrinsic_surfaceflinger_transactions",
                "id, ts, arg_set_id, base64_proto_id, vsync_id",
                true,
            ),
            Table::WindowManager => (
                "__intrinsic_windowmanager",
                "id, ts, arg_set_id, base64_proto_id",
                true,
            ),
            Table::InputMethodClients => (
                "__intrinsic_inputmethod_clients",
                "id, ts, arg_set_id, base64_proto_id",
                true,
            ),
            Table::InputMethodService => (
                "__intrinsic_inputmethod_service",
                "id, ts, arg_set_id, base64_proto_id",
                true,
            ),
            Table::InputMethodManagerService => (
                "__intrinsic_inputmethod_manager_service",
                "id, ts, arg_set_id, base64_proto_id",
                true,
            ),
            Table::ProtoLog => (
                "__intrinsic_protolog",
                "id, ts, level, tag, message, stacktrace, location",
                true,
            ),
            Table::ViewCapture => (
                "__intrinsic_viewcapture",
                "id, ts, arg_set_id, base64_proto_id",
                true,
            ),
            Table::FrameTimes => (
                "__intrinsic_frame_slice_times",
                "slice_id, queue_to_acquire_time, acquire_to_latch_time, latch_to_present_time",
                false,
            ),
            Table::SpuriousSchedWakeup => (
                "__intrinsic_spurious_sched_wakeup",
                "id, ts, thread_state_id, irq_context, utid, waker_utid",
                true,
            ),
            profile => super::profile::shape(profile).unwrap_or(("", "", false)),
        }
    }

    pub(super) fn columns(self) -> usize {
        self.shape().1.split(',').count()
    }

    fn sql(self, rows: usize) -> String {
        let (name, columns, _) = self.shape();
        let one = format!("({})", vec!["?"; self.columns()].join(","));
        format!(
            "INSERT OR FAIL INTO {name} ({columns}) VALUES {}",
            vec![one.as_str(); rows].join(",")
        )
    }
}

/// Rows per multi-row INSERT: enough to spread a statement's fixed cost thin, few enough
/// to stay far below SQLite's parameter limit.
const ROWS_PER_STATEMENT: usize = 32;

/// Rows per batch sent to the writer thread.
pub(super) const BATCH_ROWS: usize = 4096;

#[derive(Clone, Copy, Debug)]
enum Value {
    Null,
    Int(i64),
    Real(f64),
    /// A range of the batch's text.
    Text(u32, u32),
}

/// A batch of rows of one table.
pub(super) struct Rows {
    table: Table,
    columns: usize,
    values: Vec<Value>,
    text: String,
}

impl Rows {
    pub(super) fn new(table: Table) -> Rows {
        Rows {
            table,
            columns: table.columns(),
            values: Vec::new(),
            text: String::new(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub(super) fn is_full(&self) -> bool {
        self.values.len() >= BATCH_ROWS * self.columns
    }

    /// Hands over the rows, leaving an empty batch of the same table.
    pub(super) fn take(&mut self) -> Rows {
        std::mem::replace(self, Rows::new(self.table))
    }

    pub(super) fn int(&mut self, v: impl Into<i64>) {
        self.values.push(Value::Int(v.into()));
    }

    pub(super) fn opt_int(&mut self, v: Option<impl Into<i64>>) {
        self.values
            .push(v.map_or(Value::Null, |v| Value::Int(v.into())));
    }

    pub(super) fn real(&mut self, v: Option<f64>) {
        self.values.push(v.map_or(Value::Null, Value::Real));
    }

    pub(super) fn text(&mut self, v: Option<&str>) {
        let Some(v) = v else {
            self.values.push(Value::Null);
            return;
        };
        let start = self.text.len();
        self.text.push_str(v);
        // A batch's text stays far below 4 GiB (BATCH_ROWS rows of a few strings each).
        self.values
            .push(Value::Text(start as u32, (start + v.len()) as u32));
    }
}

/// The connection of the bulk load, with what the inserts know of each table.
struct Destination {
    /// The INSERT statements, by (table, rows per statement); declared before the
    /// connection so they are finalized before it closes.
    statements: Statements,
    conn: Connection,
    /// The largest id inserted per table since it was last cleared.
    last_ids: [Option<i64>; TABLES],
}

impl Destination {
    fn new(conn: Connection) -> Destination {
        Destination {
            statements: Statements::default(),
            conn,
            last_ids: [None; TABLES],
        }
    }

    fn insert(&mut self, rows: &Rows) -> Result<(), DbError> {
        let table = rows.table;
        let rowid_first = table.shape().2;
        let last_id = &mut self.last_ids[table.index()];
        let mut chunks = rows.values.chunks_exact(rows.columns * ROWS_PER_STATEMENT);
        if chunks.len() > 0 {
            let stmt = self.statements.get(&self.conn, table, ROWS_PER_STATEMENT)?;
            let mut binder = Binder::new(rows, ROWS_PER_STATEMENT, rowid_first);
            for chunk in &mut chunks {
                binder.bind(stmt, chunk, last_id);
                stmt.execute(&self.conn)?;
            }
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let stmt = self.statements.get(&self.conn, table, 1)?;
            let mut binder = Binder::new(rows, 1, rowid_first);
            for row in rest.chunks_exact(rows.columns) {
                binder.bind(stmt, row, last_id);
                stmt.execute(&self.conn)?;
            }
        }
        Ok(())
    }

    fn clear(&mut self, table: Table) -> Result<(), DbError> {
        self.conn
            .execute_batch(&format!("DELETE FROM {}", table.name()))?;
        self.last_ids[table.index()] = None;
        Ok(())
    }

    /// Hands back the connection, its statements finalized.
    fn into_connection(self) -> Connection {
        drop(self.statements);
        self.conn
    }
}

/// The writer's INSERT statements, prepared once each and used through SQLite's C API:
/// binding a value is then a call with no conversion, and text is bound without a copy
/// (SQLITE_STATIC: it stays in its batch until the statement has run). `INSERT OR FAIL`
/// needs no statement journal (a failing row leaves the rows before it; the import fails
/// either way), so pages are not copied into one as a multi-row INSERT dirties them.
#[derive(Default)]
struct Statements {
    prepared: Vec<((Table, usize), RawStatement)>,
}

impl Statements {
    fn get(
        &mut self,
        conn: &Connection,
        table: Table,
        rows: usize,
    ) -> Result<&mut RawStatement, DbError> {
        let i = match self.prepared.iter().position(|(k, _)| *k == (table, rows)) {
            Some(i) => i,
            None => {
                let stmt = RawStatement::prepare(conn, &table.sql(rows))?;
                self.prepared.push(((table, rows), stmt));
                self.prepared.len() - 1
            }
        };
        Ok(&mut self.prepared[i].1)
    }
}

/// A prepared statement owned outright (finalized when dropped). Only the writer thread
/// uses it, with the connection it was prepared on.
struct RawStatement {
    stmt: *mut ffi::sqlite3_stmt,
}

impl RawStatement {
    fn prepare(conn: &Connection, sql: &str) -> Result<RawStatement, DbError> {
        let mut stmt = std::ptr::null_mut();
        let len = std::os::raw::c_int::try_from(sql.len()).map_err(|_| {
            rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_TOOBIG), None)
        })?;
        // SAFETY: the connection's handle is valid while `conn` is; `sql` outlives the
        // call, which reads `len` bytes of it.
        let rc = unsafe {
            ffi::sqlite3_prepare_v2(
                conn.handle(),
                sql.as_ptr().cast(),
                len,
                &mut stmt,
                std::ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK || stmt.is_null() {
            return Err(failure(conn, rc).into());
        }
        Ok(RawStatement { stmt })
    }

    fn bind_null(&mut self, param: usize) {
        // SAFETY: a valid statement; an out-of-range index is an error SQLite reports
        // (never the case here: parameters are counted from the statement's own shape).
        unsafe { ffi::sqlite3_bind_null(self.stmt, param as std::os::raw::c_int) };
    }

    fn bind_int(&mut self, param: usize, v: i64) {
        // SAFETY: as in `bind_null`.
        unsafe { ffi::sqlite3_bind_int64(self.stmt, param as std::os::raw::c_int, v) };
    }

    fn bind_real(&mut self, param: usize, v: f64) {
        // SAFETY: as in `bind_null`.
        unsafe { ffi::sqlite3_bind_double(self.stmt, param as std::os::raw::c_int, v) };
    }

    /// Binds `text` without copying it: it must stay where it is, unchanged, until the
    /// statement has run with it (the caller's batch outlives every execution bound from
    /// it, and every parameter is bound again before a statement runs for another batch).
    fn bind_text(&mut self, param: usize, text: &str) {
        let len = std::os::raw::c_int::try_from(text.len()).unwrap_or(0);
        // SAFETY: a valid statement, and a pointer to `len` bytes of UTF-8 that stay valid
        // while SQLite may read them (see above).
        unsafe {
            ffi::sqlite3_bind_text(
                self.stmt,
                param as std::os::raw::c_int,
                text.as_ptr().cast(),
                len,
                ffi::SQLITE_STATIC(),
            )
        };
    }

    /// Runs the statement once (an INSERT: no rows come back) and resets it.
    fn execute(&mut self, conn: &Connection) -> Result<(), DbError> {
        // SAFETY: a valid statement of this connection, used by this thread only.
        let rc = unsafe { ffi::sqlite3_step(self.stmt) };
        // SAFETY: as above; resetting keeps the bindings.
        unsafe { ffi::sqlite3_reset(self.stmt) };
        if rc == ffi::SQLITE_DONE {
            Ok(())
        } else {
            Err(failure(conn, rc).into())
        }
    }
}

impl Drop for RawStatement {
    fn drop(&mut self) {
        // SAFETY: the statement was prepared and is finalized once, here.
        unsafe { ffi::sqlite3_finalize(self.stmt) };
    }
}

// SAFETY: a statement moves with the writer thread's `Destination` (built on the import
// thread, used only on the writer thread); SQLite connections here are in serialized
// threading mode, and the statement is never used from two threads.
unsafe impl Send for RawStatement {}

/// The error SQLite reports for `code` on the connection.
fn failure(conn: &Connection, code: std::os::raw::c_int) -> rusqlite::Error {
    // SAFETY: a valid handle; the message is copied before anything else runs on it.
    let message = unsafe {
        let m = ffi::sqlite3_errmsg(conn.handle());
        (!m.is_null()).then(|| std::ffi::CStr::from_ptr(m).to_string_lossy().into_owned())
    };
    rusqlite::Error::SqliteFailure(ffi::Error::new(code), message)
}

/// Binds rows of a batch to one statement. A binding outlives an execution, so a
/// parameter whose value is the one bound last time (NULL columns, repeated names) is not
/// bound again.
struct Binder<'r> {
    rows: &'r Rows,
    bound: Vec<Option<Value>>,
    /// The first column is the rowid, which SQLite can choose itself when it is the next.
    rowid_first: bool,
}

impl<'r> Binder<'r> {
    fn new(rows: &'r Rows, rows_per_statement: usize, rowid_first: bool) -> Binder<'r> {
        Binder {
            rows,
            // Nothing this batch bound yet: every parameter is bound before the first run.
            bound: vec![None; rows.columns * rows_per_statement],
            rowid_first,
        }
    }

    fn same(&self, a: Value, b: Value) -> bool {
        let text = |start: u32, end: u32| self.rows.text.get(start as usize..end as usize);
        match (a, b) {
            (Value::Null, Value::Null) => true,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Real(a), Value::Real(b)) => a.to_bits() == b.to_bits(),
            (Value::Text(a0, a1), Value::Text(b0, b1)) => text(a0, a1) == text(b0, b1),
            _ => false,
        }
    }

    /// Binds one execution's rows; `last_id` is the table's largest id so far.
    fn bind(&mut self, stmt: &mut RawStatement, values: &[Value], last_id: &mut Option<i64>) {
        let columns = self.rows.columns;
        let mut column = 0;
        for (i, &v) in values.iter().enumerate() {
            let mut v = v;
            if self.rowid_first && column == 0 {
                if let Value::Int(id) = v {
                    // NULL makes SQLite use the table's largest id + 1, this very id,
                    // without looking for its place (an empty table would start at 1: its
                    // first id is bound).
                    if last_id.is_some_and(|last| id == last + 1) {
                        v = Value::Null;
                    }
                    *last_id = Some(last_id.map_or(id, |last| last.max(id)));
                }
            }
            column += 1;
            if column == columns {
                column = 0;
            }
            if self.bound[i].is_some_and(|b| self.same(b, v)) {
                continue;
            }
            let param = i + 1;
            match v {
                Value::Null => stmt.bind_null(param),
                Value::Int(v) => stmt.bind_int(param, v),
                Value::Real(v) => stmt.bind_real(param, v),
                Value::Text(start, end) => {
                    let s = self.rows.text.get(start as usize..end as usize);
                    stmt.bind_text(param, s.unwrap_or(""));
                }
            }
            self.bound[i] = Some(v);
        }
    }
}

/// What the import thread asks of the writer thread, carried out in the order sent.
pub(super) enum Message {
    Rows(Rows),
    /// Empties a table that is about to be written whole again (a checkpoint's small
    /// tables).
    Clear(Table),
    /// Commits what is written so far and opens the next transaction, then answers.
    Commit(SyncSender<()>),
}

/// The writer thread and the way to it.
pub(super) struct Pipe {
    tx: Option<SyncSender<Message>>,
    thread: Option<JoinHandle<Result<Connection, DbError>>>,
}

impl Pipe {
    /// Starts the writer thread on `conn`, inside a transaction already begun.
    pub(super) fn spawn(conn: Connection) -> Result<Pipe, DbError> {
        // A few batches in flight keep both threads busy without holding many rows.
        let (tx, rx) = mpsc::sync_channel(4);
        let dest = Destination::new(conn);
        let thread = std::thread::Builder::new()
            .name("db-writer".into())
            .spawn(move || run(dest, rx))
            .map_err(DbError::Thread)?;
        Ok(Pipe {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Hands a message to the writer thread. When the thread has stopped (it failed), its
    /// own error is returned.
    pub(super) fn send(&mut self, message: Message) -> Result<(), DbError> {
        let sent = match &self.tx {
            Some(tx) => tx.send(message).is_ok(),
            None => false,
        };
        if sent {
            Ok(())
        } else {
            Err(self.stop().err().unwrap_or(DbError::WriterFailed))
        }
    }

    /// Commits everything sent so far and waits until readers can see it.
    pub(super) fn commit(&mut self) -> Result<(), DbError> {
        let (done, wait) = mpsc::sync_channel(1);
        self.send(Message::Commit(done))?;
        match wait.recv() {
            Ok(()) => Ok(()),
            // The thread stopped before committing: its own error says why.
            Err(_) => Err(self.stop().err().unwrap_or(DbError::WriterFailed)),
        }
    }

    /// Ends the thread after everything sent so far is written, and takes back the
    /// connection (or the thread's error).
    pub(super) fn finish(mut self) -> Result<Connection, DbError> {
        self.stop()
    }

    fn stop(&mut self) -> Result<Connection, DbError> {
        drop(self.tx.take());
        match self.thread.take() {
            Some(thread) => thread.join().map_err(|_| DbError::WriterFailed)?,
            None => Err(DbError::WriterFailed),
        }
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // An import that failed or was cancelled still stops its writer thread.
        let _ = self.stop();
    }
}

fn run(mut dest: Destination, rx: Receiver<Message>) -> Result<Connection, DbError> {
    for message in rx {
        match message {
            Message::Rows(rows) => dest.insert(&rows)?,
            Message::Clear(table) => dest.clear(table)?,
            Message::Commit(done) => {
                dest.conn.execute_batch("COMMIT; BEGIN")?;
                let _ = done.send(());
            }
        }
    }
    Ok(dest.into_connection())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_is_listed_once_in_index_order() {
        for (i, t) in ALL.iter().enumerate() {
            assert_eq!(t.index(), i, "{t:?}");
        }
    }

    #[test]
    fn every_insert_matches_the_schema() {
        let conn = Connection::open_in_memory().expect("open");
        conn.execute_batch(super::super::schema::TABLES)
            .expect("schema");
        conn.execute_batch(super::super::profile::TABLES)
            .expect("profile schema");
        for t in ALL {
            conn.prepare(&t.sql(2))
                .unwrap_or_else(|e| panic!("{t:?}: {e}"));
        }
    }

    #[test]
    fn a_failed_writer_makes_the_next_send_fail_instead_of_waiting() {
        let conn = Connection::open_in_memory().expect("open");
        // No tables: the first insert fails and the thread returns.
        let mut pipe = Pipe::spawn(conn).expect("spawn");
        let mut failed = false;
        for _ in 0..100 {
            let mut rows = Rows::new(Table::TraceBounds);
            rows.int(1);
            rows.int(2);
            if pipe.send(Message::Rows(rows)).is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed);
    }
}
