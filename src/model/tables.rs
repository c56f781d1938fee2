//! In-memory rows of the Trace Processor tables, before they are written to SQLite.

use crate::ir::{ArgValue, ArgsRef, MachineInfo, NamePriority, Sink, StrId, NO_ARGS, NULL_STR};

/// Where finished rows of the big tables go as the model produces them (the database
/// writer), so the model never holds a whole trace's slices, counters or sched rows.
pub trait RowSink {
    fn slice(&mut self, id: u32, row: &SliceRow, sink: &Sink);
    fn counter(&mut self, id: u32, row: &CounterRow, sink: &Sink);
    fn sched(&mut self, id: u32, row: &SchedRow, sink: &Sink);
    fn thread_state(&mut self, id: u32, row: &ThreadStateRow, sink: &Sink);
    fn ftrace_event(&mut self, id: u32, row: &FtraceEventRow, sink: &Sink);
    /// A row of a profiler's sample table (see `stack_profile.rs`).
    fn profile(&mut self, _row: &super::ProfileRow, _sink: &Sink) {}
    /// Called every [`CHECKPOINT_EVENTS`] events with the tables so far, so a writer can
    /// publish a consistent snapshot (readers then see data land during the import).
    fn checkpoint(&mut self, _tables: &Tables, _sink: &Sink) {}
}

/// Events between two [`RowSink::checkpoint`] calls.
pub const CHECKPOINT_EVENTS: usize = 500_000;

/// Keeps every row in memory (for tests and small tools).
#[derive(Default, Debug)]
pub struct CollectRows {
    pub slices: Vec<(u32, SliceRow)>,
    pub counters: Vec<CounterRow>,
    pub sched: Vec<(u32, SchedRow)>,
    pub thread_states: Vec<(u32, ThreadStateRow)>,
    pub ftrace_events: Vec<(u32, FtraceEventRow)>,
    pub profiles: Vec<super::ProfileRow>,
}

impl RowSink for CollectRows {
    fn slice(&mut self, id: u32, row: &SliceRow, _: &Sink) {
        self.slices.push((id, *row));
    }
    fn counter(&mut self, _: u32, row: &CounterRow, _: &Sink) {
        self.counters.push(*row);
    }
    fn sched(&mut self, id: u32, row: &SchedRow, _: &Sink) {
        self.sched.push((id, *row));
    }
    fn thread_state(&mut self, id: u32, row: &ThreadStateRow, _: &Sink) {
        self.thread_states.push((id, *row));
    }
    fn ftrace_event(&mut self, id: u32, row: &FtraceEventRow, _: &Sink) {
        self.ftrace_events.push((id, *row));
    }
    fn profile(&mut self, row: &super::ProfileRow, _: &Sink) {
        self.profiles.push(*row);
    }
}

/// A TrackEvent slice's callstacks (`__intrinsic_track_event_callstacks`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CallstackRow {
    pub slice: u32,
    pub track: u32,
    pub callsite: Option<u32>,
    pub end_callsite: Option<u32>,
    pub weight: Option<f64>,
}

#[derive(Debug, Default)]
pub struct Tables {
    pub machines: Vec<MachineRow>,
    pub processes: Vec<ProcessRow>,
    pub threads: Vec<ThreadRow>,
    pub tracks: Vec<TrackRow>,
    /// Rows handed to the [`RowSink`].
    pub slice_count: u32,
    pub counter_count: u32,
    pub sched_count: u32,
    pub thread_state_count: u32,
    pub ftrace_event_count: u32,
    pub flows: Vec<FlowRow>,
    /// `state` rows (few; each one's `dur` is known only when the next state arrives).
    pub states: Vec<StateRow>,
    /// `_trace_import_logs` rows (few: one per import problem worth explaining).
    pub import_logs: Vec<ImportLogRow>,
    pub cpus: Vec<CpuRow>,
    /// `android_logs` rows, in sorted order.
    pub android_logs: Vec<AndroidLogRow>,
    /// `chrome_raw` rows, in sorted order.
    pub chrome_raw: Vec<ChromeRawRow>,
    /// V8's isolates, scripts, functions and code (`v8.rs`).
    pub v8: super::V8Tables,
    /// Memory-infra snapshots (`memory_snapshot.rs`).
    pub memory: super::MemorySnapshotTables,
    /// `experimental_missing_chrome_processes` rows: (upid, reliable_from), by upid.
    pub missing_chrome_processes: Vec<(u32, Option<i64>)>,
    /// `__intrinsic_track_event_callstacks` rows.
    pub track_event_callstacks: Vec<CallstackRow>,
    /// `gpu_counter_group` rows: (group id, name, description, track id).
    pub gpu_counter_groups: Vec<(i64, StrId, StrId, u32)>,
    /// The machine row of each `gpu` row and graphics context (in the sink's order).
    pub gpu_machines: Vec<u32>,
    pub gpu_context_machines: Vec<u32>,
    /// The machine row of each `android_user_list` row.
    pub user_machines: Vec<u32>,
    /// `filedescriptor` rows: (ts, upid, fd, path).
    pub fds: Vec<(i64, u32, i64, StrId)>,
    /// Present fences' timings: (slice id, queue to acquire, acquire to latch, latch to
    /// present) for `frame_slice`.
    pub frame_times: Vec<[i64; 4]>,
    /// `vulkan_memory_allocations` rows: (upid, the event).
    pub vulkan_memory: Vec<(u32, crate::ir::VulkanMemoryRow)>,
    /// Android input event rows, in sorted order.
    pub input_events: Vec<crate::ir::InputEventRow>,
    /// Winscope rows (shell transitions, SurfaceFlinger, window manager).
    pub winscope: super::winscope::WinscopeTables,
    /// `profiler_smaps` rows: (ts, upid, the entry).
    pub smaps: Vec<(i64, u32, crate::ir::SmapsRow)>,
    /// `spurious_sched_wakeup` rows (wakings of threads already runnable or running).
    pub spurious_wakeups: Vec<SpuriousWakeupRow>,
    /// Systemd journal entries, in sorted order, with their thread.
    pub journald: Vec<(i64, Option<u32>, crate::ir::JournaldEntry)>,
    /// (min, max) timestamp seen; (i64::MAX, i64::MIN) when nothing was.
    pub bounds: (i64, i64),
}

impl Tables {
    /// Trace bounds, or (0, 0) for an empty trace; a trace whose events are all at one
    /// time ends 1 ns after it (as Trace Processor reports).
    pub fn trace_bounds(&self) -> (i64, i64) {
        match self.bounds {
            (start, end) if start > end => (0, 0),
            (start, end) if start == end => (start, end.saturating_add(1)),
            bounds => bounds,
        }
    }
}

/// A waking of a thread that was not blocked: Trace Processor's `spurious_sched_wakeup`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpuriousWakeupRow {
    pub ts: i64,
    /// The wakee's `thread_state` row at the time (its runnable or running one).
    pub thread_state_id: u32,
    pub irq_context: Option<bool>,
    pub utid: u32,
    pub waker_utid: Option<u32>,
}

#[derive(Debug)]
pub struct MachineRow {
    pub raw_id: i64,
    pub info: MachineInfo,
}

#[derive(Debug)]
pub struct ProcessRow {
    pub pid: i64,
    pub name: StrId,
    pub name_priority: u8,
    pub start_ts: Option<i64>,
    pub end_ts: Option<i64>,
    pub parent_upid: Option<u32>,
    pub uid: Option<i64>,
    pub cmdline: StrId,
    pub machine: u32,
    pub extra_args: Vec<(StrId, ArgValue)>,
}

impl ProcessRow {
    pub fn new(pid: i64, machine: u32) -> Self {
        Self {
            pid,
            name: NULL_STR,
            name_priority: 0,
            start_ts: None,
            end_ts: None,
            parent_upid: None,
            uid: None,
            cmdline: NULL_STR,
            machine,
            extra_args: Vec::new(),
        }
    }
}

#[derive(Debug)]
pub struct ThreadRow {
    pub tid: i64,
    pub name: StrId,
    pub name_priority: NamePriority,
    pub start_ts: Option<i64>,
    pub end_ts: Option<i64>,
    pub upid: Option<u32>,
    pub is_main_thread: Option<bool>,
    pub is_idle: bool,
    pub machine: u32,
    pub extra_args: Vec<(StrId, ArgValue)>,
}

impl ThreadRow {
    pub fn new(tid: i64, machine: u32) -> Self {
        Self {
            tid,
            name: NULL_STR,
            name_priority: NamePriority::Other,
            start_ts: None,
            end_ts: None,
            upid: None,
            is_main_thread: None,
            is_idle: false,
            machine,
            extra_args: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrackEventType {
    Slice,
    Counter,
    State,
}

impl TrackEventType {
    pub fn as_str(self) -> &'static str {
        match self {
            TrackEventType::Slice => "slice",
            TrackEventType::Counter => "counter",
            TrackEventType::State => "state",
        }
    }
}

#[derive(Debug)]
pub struct TrackRow {
    pub name: StrId,
    /// `track.type` (Trace Processor's classification string).
    pub kind: &'static str,
    pub parent_id: Option<u32>,
    pub machine: u32,
    pub utid: Option<u32>,
    pub upid: Option<u32>,
    pub cpu: Option<u32>,
    pub event_type: TrackEventType,
    pub unit: StrId,
    pub source_args: ArgsRef,
    /// Dimension args besides utid / upid / cpu / compressor index (e.g. a legacy async
    /// track's `scope` and `name`).
    pub extra_dims: ArgsRef,
    pub track_group: Option<u32>,
    pub compressor_idx: Option<u32>,
    /// Unnamed descriptor tracks take the name of their first slice.
    pub name_from_first_event: bool,
    pub description: StrId,
    /// `extra_dims` is the whole dimension set, in order (probe tracks put their `cpu` or
    /// `upid` first, as Trace Processor's blueprints do).
    pub own_dims: bool,
}

impl TrackRow {
    pub fn new(name: StrId, kind: &'static str, machine: u32, event_type: TrackEventType) -> Self {
        Self {
            name,
            kind,
            parent_id: None,
            machine,
            utid: None,
            upid: None,
            cpu: None,
            event_type,
            unit: NULL_STR,
            source_args: NO_ARGS,
            extra_dims: NO_ARGS,
            track_group: None,
            compressor_idx: None,
            name_from_first_event: false,
            description: NULL_STR,
            own_dims: false,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct SliceRow {
    pub ts: i64,
    /// −1 when the slice never ended.
    pub dur: i64,
    pub track: u32,
    pub category: StrId,
    pub name: StrId,
    pub depth: u32,
    pub parent: Option<u32>,
    pub args: ArgsRef,
    /// `NO_TS` when unknown.
    pub thread_ts: i64,
    pub thread_dur: i64,
    /// `thread_instruction_count` at the begin and `thread_instruction_delta` to the end
    /// (TrackEvent), `NO_TS` when unknown.
    pub thread_ic: i64,
    pub thread_ic_delta: i64,
    /// The trace file whose event began the slice (`NO_FILE` when none did).
    pub file: u32,
}

#[derive(Debug, Clone, Copy)]
pub struct CounterRow {
    pub ts: i64,
    pub track: u32,
    pub value: f64,
    pub args: ArgsRef,
}

#[derive(Debug, Clone, Copy)]
pub struct FtraceEventRow {
    pub ts: i64,
    pub name: StrId,
    pub cpu: u32,
    pub utid: u32,
    pub args: ArgsRef,
    pub common_flags: Option<u32>,
    pub ucpu: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct StateRow {
    pub ts: i64,
    /// −1 while no later state has replaced it.
    pub dur: i64,
    pub track: u32,
    pub category: StrId,
    pub value: StrId,
    pub args: ArgsRef,
}

#[derive(Debug, Clone, Copy)]
pub struct SchedRow {
    pub ts: i64,
    pub dur: i64,
    pub cpu: u32,
    pub ucpu: u32,
    pub utid: u32,
    pub end_state: StrId,
    pub priority: i32,
}

#[derive(Debug, Clone, Copy)]
pub struct ThreadStateRow {
    pub ts: i64,
    /// −1 while the state has not ended.
    pub dur: i64,
    pub cpu: Option<u32>,
    pub ucpu: Option<u32>,
    pub utid: u32,
    pub state: StrId,
    pub io_wait: Option<bool>,
    pub blocked_function: StrId,
    pub waker_utid: Option<u32>,
    pub waker_id: Option<u32>,
    pub irq_context: Option<bool>,
}

/// A `_trace_import_logs` row: a stat occurrence with the args that explain it.
#[derive(Debug, Clone, Copy)]
pub struct ImportLogRow {
    /// When (a parser's log); `None` for a log of the reading, which has `byte_offset`.
    pub ts: Option<i64>,
    pub byte_offset: Option<i64>,
    /// The stat's name (its severity comes from the stats table definition).
    pub name: &'static str,
    /// The trace file being imported (`trace_id`).
    pub file: u32,
    pub args: ArgsRef,
}

#[derive(Debug, Clone, Copy)]
pub struct FlowRow {
    pub slice_out: u32,
    pub slice_in: u32,
    pub trace_id: Option<i64>,
    pub args: ArgsRef,
}

#[derive(Debug, Clone)]
pub struct CpuRow {
    /// The row id: the cpu number on the first machine, and for another machine the cpu
    /// number after a 4096-wide range of its own (so ids never clash).
    pub ucpu: u32,
    pub cpu: u32,
    pub machine: u32,
    pub cluster_id: Option<u32>,
    pub processor: StrId,
    pub capacity: Option<u32>,
    pub frequencies: Vec<u32>,
    pub args: ArgsRef,
}

/// An `android_logs` row.
#[derive(Debug, Clone, Copy)]
pub struct AndroidLogRow {
    pub ts: i64,
    pub utid: u32,
    pub prio: i64,
    pub tag: StrId,
    pub msg: StrId,
}

/// A `chrome_raw` row.
#[derive(Debug, Clone, Copy)]
pub struct ChromeRawRow {
    pub ts: i64,
    pub utid: u32,
    pub name: StrId,
    pub args: ArgsRef,
}
