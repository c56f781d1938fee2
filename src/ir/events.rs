//! The payloads of the event stream: what each parsed event says happened (slices, flows,
//! scheduling, binder, kernel, DRM, profiles, …), before the clock places it and the model
//! turns it into rows. Re-exported by [`crate::ir`].

use super::*;
/// One flow operation attached to a slice event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FlowOp {
    /// TrackEvent `flow_ids`: begin if not pending, else step.
    Id(u64),
    /// TrackEvent `terminating_flow_ids`: end if pending and forget.
    Terminating(u64),
    /// Flow v2 (`bind_id` + `flow_out`): begin.
    V2Out(u64),
    /// Flow v2 `flow_in`: end (id stays pending).
    V2In(u64),
    /// Flow v2 with both directions: step.
    V2Step(u64),
}

/// Index of a run of flow ops in [`Sink::flow_ops`]; `0` is none.
pub type FlowsRef = u32;
pub const NO_FLOWS: FlowsRef = 0;

/// Sentinel for "no thread timestamp".
pub const NO_TS: i64 = i64::MIN;

/// A slice-shaped event (begin, end, complete, instant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SliceEvent {
    pub track: TrackRef,
    pub category: StrId,
    pub name: StrId,
    pub args: ArgsRef,
    /// Thread timestamp (`thread_ts`), or [`NO_TS`].
    pub thread_ts: i64,
    pub flows: FlowsRef,
}

impl EventData {
    /// Whether this record stands for an event of the trace in counts shown to the user
    /// (events per clock, events dropped): a raw ftrace row shadows its event.
    pub fn counts_as_event(&self) -> bool {
        !matches!(
            self,
            EventData::FtraceRaw(_)
                | EventData::CompactSwitchRaw(_)
                | EventData::ChromeProcessSeen { .. }
                | EventData::Dropped
                | EventData::TimeProbe(_)
                | EventData::SliceCallstack(_)
                | EventData::SliceInstructions { .. }
                | EventData::Profile(ProfileSample::HeapDumpProcess { .. })
        )
    }

    /// Whether the event keeps a time before trace time's zero: heapprofd dumps are
    /// placed on MONOTONIC_COARSE after sorting, and Trace Processor keeps their rows.
    pub fn keeps_negative_ts(&self) -> bool {
        matches!(
            self,
            EventData::Profile(
                ProfileSample::HeapAllocation { .. } | ProfileSample::HeapProfile { .. }
            )
        )
    }
}

/// An ftrace event as Trace Processor's raw table keeps it: its name and fields (as args),
/// and where it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FtraceRaw {
    pub machine: MachineId,
    pub cpu: u32,
    /// The thread it ran on (the event's `pid`).
    pub tid: i64,
    pub name: StrId,
    pub args: ArgsRef,
    pub common_flags: Option<u32>,
}

/// Legacy (JSON / atrace-style v1) flow event: `s`, `t`, `f`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowV1Event {
    pub track: TrackRef,
    pub id: u64,
    pub category: StrId,
    pub name: StrId,
    pub phase: FlowV1Phase,
    /// `f` with `bp:"e"`: bind to the enclosing slice rather than the next one.
    pub bind_enclosing: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowV1Phase {
    Start,
    Step,
    End,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SchedSwitch {
    pub machine: MachineId,
    pub cpu: u32,
    pub prev_tid: i64,
    pub prev_comm: StrId,
    /// Already decoded end state (`R`, `S`, `D|K`, ...), or NULL when invalid.
    pub prev_state: StrId,
    pub next_tid: i64,
    pub next_comm: StrId,
    pub next_prio: i32,
}

/// A compact `sched_switch`'s raw `ftrace_event` row. The compact encoding carries no
/// comm for the task switched out, so its `prev_comm` arg is the name that task has in the
/// thread table when the switch is parsed (in timestamp order), as Trace Processor looks
/// it up afresh (a task_rename while the task ran, a process_tree name, `swapper` for the
/// idle task all show there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CompactSwitchRaw {
    pub machine: MachineId,
    pub cpu: u32,
    pub prev_pid: i64,
    pub prev_state: i64,
    pub next_pid: i64,
    pub next_comm: StrId,
    pub prev_prio: i32,
    pub next_prio: i32,
}

/// What the trace says of one cpu (CpuInfo): the `cpu` row's columns and args, and its
/// `cpu_available_frequencies`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CpuDescription {
    pub machine: MachineId,
    pub cpu: u32,
    pub cluster_id: u32,
    pub processor: StrId,
    pub capacity: Option<u32>,
    /// kHz.
    pub frequencies: Vec<u32>,
    pub args: ArgsRef,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SchedWaking {
    pub machine: MachineId,
    pub cpu: u32,
    pub tid: i64,
    pub comm: StrId,
    /// The thread running when the waking was recorded, if known.
    pub waker_tid: Option<i64>,
    /// Whether the waking ran in interrupt context (from the event's common flags).
    pub irq_context: Option<bool>,
}

/// Name priority when several sources name a thread (Trace Processor's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NamePriority {
    Other = 0,
    Ftrace = 1,
    ProcessTree = 2,
    TrackEventThreadName = 3,
    TrackDescriptor = 4,
    Constant = 5,
}

/// Facts about a process (process_tree, descriptors, JSON `M`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcessInfo {
    pub process: ProcessRef,
    pub parent_pid: Option<i64>,
    pub name: StrId,
    pub cmdline: StrId,
    pub uid: Option<i64>,
    pub start_ts: Option<i64>,
    /// A start time on another clock than the event's ([`Sink::time_probe`] slot), used
    /// when `start_ts` is `None`; a probe that did not convert sets nothing.
    pub start_probe: Option<u32>,
    /// Descriptor names (priority 2) lose to system names (priority 4).
    pub from_system: bool,
}

/// A new thread (task_newtask).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThreadStart {
    pub thread: ThreadRef,
    pub creator_tid: i64,
    pub name: StrId,
    /// Without CLONE_THREAD the thread starts a new process.
    pub new_process: bool,
}

/// A thread state interval the trace states itself (JSON `T`), as a `thread_state` row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThreadStateEvent {
    pub thread: ThreadRef,
    pub dur: i64,
    pub state: StrId,
    /// `args.io_wait`, when given.
    pub io_wait: Option<bool>,
    /// `args.blocked_function`, or NULL.
    pub blocked_function: StrId,
    /// A `Running` state with an integer `args.cpu` also makes a `sched` row on that cpu.
    pub running_cpu: Option<u32>,
}

/// What a binder ftrace event says (the model's binder tracker turns it into slices and
/// flows, see `model/binder.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinderOp {
    /// `binder_transaction`: sent by the event's thread.
    Transaction {
        id: i64,
        dest_node: i64,
        dest_proc: i64,
        dest_thread: i64,
        reply: bool,
        flags: u32,
        /// The `code` arg, already spelled (`0x03 Java Layer Dependent`).
        code: StrId,
    },
    /// `binder_transaction_received`: the event's thread took transaction `id`.
    Received {
        id: i64,
    },
    /// `binder_transaction_alloc_buf`.
    AllocBuf {
        data_size: u64,
        offsets_size: u64,
    },
    /// `binder_command` (BC_*) / `binder_return` (BR_*).
    Command(u32),
    Return(u32),
    /// `binder_lock` / `binder_locked` / `binder_unlock`.
    Lock,
    Locked,
    Unlock,
}

/// A binder event on a thread (the ftrace event's pid).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BinderEvent {
    pub machine: MachineId,
    pub tid: i64,
    pub op: BinderOp,
}

/// What the generic kernel packets (`generic_kernel_*`, kernels traced without ftrace)
/// say; the model's generic kernel tracker turns them into sched, thread_state, thread and
/// process rows (see `model/generic_kernel.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GenericKernelEvent {
    /// A task changed state (`TaskStateEnum`: 1 created … 8 destroyed); `cpu` for running.
    TaskState {
        machine: MachineId,
        cpu: Option<u32>,
        tid: i64,
        comm: StrId,
        state: u8,
        prio: i32,
    },
    /// A process of the process tree (no main thread is made for it).
    Process {
        machine: MachineId,
        pid: i64,
        ppid: i64,
        cmdline: StrId,
    },
    /// A thread of the process tree.
    Thread {
        machine: MachineId,
        tid: i64,
        pid: i64,
        comm: StrId,
        is_main_thread: bool,
        is_idle: bool,
    },
}

/// What a DRM / dma-fence ftrace event says (see `model/drm.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DrmOp {
    /// `drm_vblank_event` (signal) / `drm_vblank_event_delivered`.
    Vblank {
        crtc: i64,
        seq: u64,
        delivered: bool,
    },
    /// `drm_sched_job`: a job queued on a ring.
    SchedJob {
        ring: StrId,
        job: u64,
    },
    /// `drm_run_job`: a job handed to the hardware, done when `fence` signals.
    RunJob {
        ring: StrId,
        job: u64,
        fence: u64,
    },
    /// `drm_sched_process_job`: the job of `fence` is done.
    ProcessJob {
        fence: u64,
    },
    /// Kernel 6.17 scheduler events, jobs named by their fence (context, seqno).
    JobQueue {
        ring: StrId,
        context: u64,
        seqno: u64,
    },
    JobRun {
        ring: StrId,
        context: u64,
        seqno: u64,
    },
    JobDone {
        context: u64,
        seqno: u64,
    },
    /// `dma_fence_init` / `_emit` / `_signaled` on a fence timeline.
    FenceInit {
        context: u64,
        timeline: StrId,
        seqno: u64,
    },
    FenceEmit {
        context: u64,
        timeline: StrId,
        seqno: u64,
    },
    FenceSignaled {
        context: u64,
        timeline: StrId,
        seqno: u64,
    },
    /// `dma_fence_wait_start` / `_end` on the waiting thread.
    FenceWaitStart {
        context: u64,
        seqno: u64,
    },
    FenceWaitEnd,
}

/// A DRM event on a thread (the ftrace event's pid).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DrmEvent {
    pub machine: MachineId,
    pub tid: i64,
    pub op: DrmOp,
}

/// An ftrace event whose rows depend on what came before it in time, so the model, which
/// sees events in time order, decides what it makes (see `model/power.rs`,
/// `model/memory.rs`, `model/gpu_kernel.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelOp {
    /// `suspend_resume`: `name` is `<action>(<val>)`; `action` the bare action.
    SuspendResume {
        action: StrId,
        name: StrId,
        start: bool,
    },
    /// `wakeup_source_activate` / `_deactivate` of the named wakelock.
    Wakelock { name: StrId, activate: bool },
    /// `gpu_mem_total` from ftrace for a process (pid ≠ 0): dropped unless the pid is a
    /// known thread.
    GpuMemTotal { pid: i64, gpu: u32, size: u64 },
    /// `rss_stat` / `rss_stat_throttled`: `tid` reported a memory counter (`name`) of the
    /// memory map `mm_id`, its own when `curr`.
    RssStat {
        tid: i64,
        name: StrId,
        size: i64,
        curr: Option<bool>,
        mm_id: Option<i64>,
    },
    /// `kgsl_adreno_cmdbatch_queued`: the submitting thread of a command batch.
    AdrenoQueued { ctx: u32, seqno: u32 },
    /// `kgsl_adreno_cmdbatch_sync`: the GPU's tick counter at this time.
    AdrenoSync { ticks: u64 },
    /// `kgsl_adreno_cmdbatch_retired`: a batch ran on the GPU from `start` to `retire`
    /// (GPU ticks).
    AdrenoRetired {
        ctx: u32,
        seqno: u32,
        prio: i64,
        start: u64,
        retire: u64,
    },
    /// A V4L2 buffer event: an instant on the thread (`slice`), queued (linked to its
    /// dequeue by `key`) or dequeued.
    V4l2Buffer {
        slice: SliceEvent,
        key: u64,
        queue: Option<bool>,
    },
    /// A virtio-gpu command queued (`start`, without a fence) or answered: the queue's
    /// latency counter (`track`) measures the answer.
    VirtioGpuLatency {
        track: TrackRef,
        seqno: u32,
        start: bool,
    },
    /// Args for the topmost open slice on `slice.track` whose category and name match
    /// `slice`'s (NULL matches anything), as Trace Processor's `SliceTracker::AddArgs`;
    /// nothing when there is none.
    SliceArgs { slice: SliceEvent },
}

/// A [`KernelOp`] and where it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelEvent {
    pub machine: MachineId,
    pub tid: i64,
    pub op: KernelOp,
}

/// What pairs a kernel operation's start with its end: the event kind and two numbers
/// (e.g. inode and offset, device and sector).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PairKey {
    pub machine: MachineId,
    pub kind: &'static str,
    pub a: u64,
    pub b: u64,
}

/// What happened, after tokenizing; raw timestamp in [`Event::ts`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EventData {
    Begin(SliceEvent),
    /// A Begin on a legacy *unnestable* track (atrace `S`): while the track already has an
    /// open slice it adds nothing; the slice an End then closes gets the args
    /// `legacy_unnestable_begin_count` / `legacy_unnestable_last_begin_ts`. Decided by the
    /// model after sorting, so markers that arrive out of order behave as in time order.
    BeginUnnestable(SliceEvent),
    End(SliceEvent),
    /// A slice with a known duration; instants are `dur == 0`.
    Complete {
        slice: SliceEvent,
        dur: i64,
        thread_dur: i64,
    },
    Counter {
        track: TrackRef,
        value: Real,
        args: ArgsRef,
    },
    /// An Android network packet (or an aggregate of several): a slice of `dur` named by
    /// the package of `uid`, which the packages list may give later in the file, else by
    /// `slice.name` (`uid=<uid>`). The model names it, then places it as a `Complete`.
    NetworkPacket {
        slice: SliceEvent,
        dur: i64,
        uid: i64,
    },
    /// A TYPE_STATE event: `value` holds on its track until the next state there.
    State {
        track: TrackRef,
        category: StrId,
        value: StrId,
        args: ArgsRef,
    },
    FlowV1(FlowV1Event),
    SchedSwitch(SchedSwitch),
    /// A cpu's description from the trace (CpuInfo).
    CpuInfo(Box<CpuDescription>),
    /// `sys_enter` (a begin) or `sys_exit` (an end) on the thread's slice track. The model
    /// names it: the number means a syscall of the machine's architecture, which SystemInfo
    /// may give later in the file.
    Syscall {
        track: TrackRef,
        machine: MachineId,
        number: i64,
        args: ArgsRef,
        enter: bool,
    },
    /// An ftrace event's raw row (`ftrace_event`): every event has one.
    FtraceRaw(FtraceRaw),
    /// A compact `sched_switch`'s raw row, whose `prev_comm` the model fills in.
    CompactSwitchRaw(CompactSwitchRaw),
    /// `sched_blocked_reason`: why the thread's current uninterruptible sleep began.
    BlockedReason {
        thread: ThreadRef,
        io_wait: Option<bool>,
        /// The kernel function it blocked in, when known.
        function: StrId,
    },
    SchedWaking(SchedWaking),
    ThreadName {
        thread: ThreadRef,
        name: StrId,
        priority: NamePriority,
    },
    /// Makes sure the thread (and its process) exist and are bound, with no name change.
    Thread(ThreadRef),
    /// A `_trace_import_logs` row for a stat the parser has already counted: the args that
    /// explain it, at the event's time (so it is placed on trace time like the event).
    ImportLog {
        name: &'static str,
        args: ArgsRef,
    },
    /// A TrackDescriptor uuid describes this thread: a different uuid describing the same
    /// tid later means the tid was reused (a new thread row).
    ClaimThread {
        thread: ThreadRef,
        uuid: u64,
    },
    /// Likewise for a process.
    ClaimProcess {
        process: ProcessRef,
        uuid: u64,
    },
    /// Chrome's bookkeeping of its live processes (Trace Processor's
    /// ActiveChromeProcessesTracker): a pid listed in `chrome_active_processes`
    /// (`descriptor` false) or a process descriptor emitted for it (true), at the packet's
    /// time; see `experimental_missing_chrome_processes`.
    ChromeProcessSeen {
        process: ProcessRef,
        descriptor: bool,
    },
    /// A string arg on a process (e.g. `chrome.host_app_package_name`).
    ProcessStrArg {
        process: ProcessRef,
        key: StrId,
        value: StrId,
    },
    Process(Box<ProcessInfo>),
    ThreadStart(Box<ThreadStart>),
    /// A thread ends (sched_process_free).
    ThreadEnd {
        machine: MachineId,
        tid: i64,
    },
    /// Adds an int arg to a thread's or process's arg set (sort index hints).
    ThreadArg {
        thread: ThreadRef,
        key: StrId,
        value: i64,
    },
    ProcessArg {
        process: ProcessRef,
        key: StrId,
        value: i64,
    },
    /// A `thread_state` row (and maybe a `sched` row) stated by the trace.
    ThreadState(Box<ThreadStateEvent>),
    /// An Android log line (`android_logs`); Chrome's TrackEvent log messages too.
    AndroidLog(Box<LogLine>),
    /// A V8 code load (`v8_js_code`, `v8_internal_code`, `v8_wasm_code`,
    /// `v8_regexp_code` and their `jit_code` rows).
    V8Code(Box<V8Code>),
    /// A memory-infra snapshot's dumps (snapshots at one time make one global dump).
    MemorySnapshot(Box<MemorySnapshotDump>),
    /// A systemd journal entry (`linux_systemd_journald_logs`).
    Journald(Box<JournaldEntry>),
    /// A file a process had open (process_stats `fds`): the `filedescriptor` table.
    FileDescriptor(Box<(ProcessRef, i64, StrId)>),
    /// A memory mapping of a process sampled with a profile (`smaps_packet`): the
    /// `profiler_smaps` table.
    ProfilerSmaps(Box<SmapsRow>),
    /// A Vulkan memory operation (`vulkan_memory_event`): the `vulkan_memory_allocations`
    /// table.
    VulkanMemory(Box<VulkanMemoryRow>),
    /// An Android input event (`android_motion_events`, `android_key_events`,
    /// `android_input_event_dispatch`).
    InputEvent(Box<InputEventRow>),
    /// A winscope row: shell transitions and handlers, SurfaceFlinger layers snapshots and
    /// transactions, window manager entries.
    Winscope(Box<WinscopeRow>),
    /// A Chrome event kept raw (`chrome_raw`): legacy metadata, text, unknown phases.
    ChromeRaw(Box<ChromeRaw>),
    /// A process name at a given priority (Trace Processor's process name priorities:
    /// 1 Chrome process label, 2 descriptor, 3 Chrome renderer label, 4 system).
    ProcessName {
        process: ProcessRef,
        name: StrId,
        priority: u8,
    },
    /// Args added to a process's arg set.
    ProcessArgs {
        process: ProcessRef,
        args: ArgsRef,
    },
    /// A binder event (see `model/binder.rs`).
    Binder(Box<BinderEvent>),
    /// A generic kernel event (see `model/generic_kernel.rs`).
    GenericKernel(Box<GenericKernelEvent>),
    /// A DRM / dma-fence event (see `model/drm.rs`).
    Drm(Box<DrmEvent>),
    /// An ftrace event the model interprets in time order (see [`KernelOp`]).
    Kernel(Box<KernelEvent>),
    /// `task_rename`: the thread's new name (and its process's, for a main thread).
    ThreadRename {
        thread: ThreadRef,
        name: StrId,
    },
    /// An event cropped after parsing (ftrace from before every cpu's data is complete):
    /// nothing.
    Dropped,
    /// A timestamp another event carries on a clock of its own (a process's
    /// `process_start_from_boot` on BOOTTIME): converted to trace time with the events and
    /// then taken out of the stream into [`super::Sink::time_probes`] (slot = the value),
    /// see [`super::Sink::time_probe`]. Never reaches the model as an event.
    TimeProbe(u32),
    /// A counter that adds `delta` to its track's running total; the row's value is the
    /// total divided by `divisor` (packets counted, bytes summed as KB).
    CounterSum {
        track: TrackRef,
        delta: i64,
        divisor: u32,
        args: ArgsRef,
    },
    /// A kernel operation that begins here and ends at a [`EventData::PairEnd`] with the
    /// same key, possibly on another thread: one slice on `slice.track` (see
    /// `model/kernel.rs`).
    PairBegin(Box<(PairKey, SliceEvent)>),
    PairEnd(Box<(PairKey, ArgsRef)>),
    /// A TCP socket changed state (`inet_sock_set_state`, see `model/kernel.rs`).
    SockState {
        machine: MachineId,
        skaddr: u64,
        /// The slice name (state and details).
        name: StrId,
        /// SYN_SENT / ESTABLISHED: a socket not seen before starts a stream.
        opens: bool,
    },
    /// A FrameTimeline frame begins (SurfaceFlinger's `frame_timeline_event`).
    FrameStart(Box<FrameStart>),
    /// A FrameTimeline frame ends.
    FrameEnd {
        machine: MachineId,
        cookie: i64,
    },
    /// A track that exists whether or not events land on it (a described GPU counter).
    EnsureTrack(TrackRef),
    /// A SurfaceFlinger buffer event (GraphicsFrameEvent).
    BufferEvent(Box<BufferEvent>),
    /// A profiler's sample (see `model::stack_profile`).
    Profile(ProfileSample),
    /// The callstack of the TrackEvent slice event pushed just before (same time).
    SliceCallstack(Box<SliceCallstack>),
    /// The thread instruction count of the TrackEvent slice event pushed just after it on
    /// the same track: a begin or complete slice records it (`thread_instruction_count`,
    /// and for a complete slice `delta` as `thread_instruction_delta`; `NO_TS` otherwise),
    /// an end gives the slice it closes `thread_instruction_delta`.
    SliceInstructions {
        track: TrackRef,
        count: i64,
        delta: i64,
    },
}

/// A TrackEvent's callstack: the callsite its slice began (or, for an end, ended) in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SliceCallstack {
    pub callsite: u32,
    pub end: bool,
    pub weight: Option<Real>,
}

/// One `chrome_raw` row before its thread is resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChromeRaw {
    pub machine: MachineId,
    /// The thread it came from; none: the machine's idle thread (utid 0 on the host).
    pub thread: Option<ThreadRef>,
    pub name: StrId,
    pub args: ArgsRef,
}

/// What TranslationTable packets (and deobfuscation mappings) say: hashed names and the
/// names they stand for, slice and process track names to replace.
#[derive(Default)]
pub struct Translations {
    pub histogram: FxHashMap<u64, StrId>,
    pub user_event: FxHashMap<u64, StrId>,
    pub performance_mark_site: FxHashMap<u64, StrId>,
    pub performance_mark: FxHashMap<u64, StrId>,
    pub study: FxHashMap<u64, StrId>,
    pub slice_name: FxHashMap<StrId, StrId>,
    pub process_track_name: FxHashMap<StrId, StrId>,
    /// Obfuscated Java class name → real one.
    pub deobfuscated_classes: FxHashMap<StrId, StrId>,
}

impl Translations {
    /// No table gives any arg a name (slice and track renames aside).
    pub fn is_empty(&self) -> bool {
        self.histogram.is_empty()
            && self.user_event.is_empty()
            && self.performance_mark_site.is_empty()
            && self.performance_mark.is_empty()
            && self.study.is_empty()
            && self.deobfuscated_classes.is_empty()
    }
}

/// A sample of a profiler; its callsite is already interned in [`Sink::stack_profile`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProfileSample {
    /// `cpu_profile_stack_sample`: Chrome's sampler (StreamingProfilePacket) and V8 CPU
    /// profiles in JSON.
    Cpu {
        thread: ThreadRef,
        callsite: u32,
        process_priority: i32,
    },
    /// `perf_sample`; `index` into `stack_profile.perf_samples`.
    Perf {
        thread: ThreadRef,
        cpu: u32,
        index: u32,
    },
    /// A generic stack sampler's sample (`stack_sample`); `index` into
    /// `stack_profile.stack_samples`.
    Stack { index: u32 },
    /// `heap_profile_allocation`: what a heapprofd dump adds for one callsite.
    HeapAllocation {
        process: ProcessRef,
        heap_name: StrId,
        callsite: u32,
        count: i64,
        size: i64,
    },
    /// A heapprofd dump of this process was read (at its packet's time): its rows belong to
    /// the process as it is now.
    HeapDumpProcess { process: ProcessRef },
    /// A Java heap dump (`sink.heap_graph.dumps[dump]`) is placed at this time.
    HeapGraph { dump: u32 },
    /// An OutOfMemoryError thread stack (`sink.heap_graph.oom_stacks[stack]`).
    OomStack { stack: u32 },
    /// `heap_profile`: the window a heapprofd dump covers (from the event's time).
    HeapProfile {
        process: ProcessRef,
        heap_name: StrId,
        dur: i64,
        sampling_interval: i64,
    },
}

/// One SurfaceFlinger buffer event: the model draws it on the buffer's track and opens or
/// closes the APP / GPU / SF / Display phases of the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferEvent {
    pub machine: MachineId,
    pub frame_number: u32,
    /// BufferEventType (1 DEQUEUE, 2 QUEUE, 4 ACQUIRE_FENCE, 5 LATCH, 8 PRESENT_FENCE, …).
    pub kind: i32,
    pub layer: StrId,
    pub duration_ns: i64,
    pub buffer_id: u32,
}

/// A clock an event's raw timestamp was read on: a builtin or sequence-scoped clock of a
/// machine, or a file's private timeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClockDomain {
    pub machine: MachineId,
    /// Builtin clock id (1 REALTIME ... 6 BOOTTIME, 11 TRACE_FILE) or a custom id (≥ 64,
    /// scoped by `sequence`).
    pub clock_id: u32,
    /// Sequence id for custom clocks; 0 for builtin clocks, or [`KEEP_RAW_ON_FAILURE`].
    pub sequence: u32,
    /// The trace file the clock was read in.
    pub file: u32,
    /// Read before the first ClockSnapshot of its (file, machine) context: the clock is the
    /// machine's shared one (file tag 0) even if the file's own snapshots later isolate
    /// its clocks (behaviour-merging.md §2).
    pub shared: bool,
}

/// In a builtin clock's `sequence`: an event whose timestamp cannot be converted keeps its raw
/// value instead of being dropped (TrackEvent µs timestamps on MONOTONIC, as Trace
/// Processor treats Chrome's events).
pub const KEEP_RAW_ON_FAILURE: u32 = u32::MAX;

pub mod clocks {
    /// A proto packet that names no clock: it is on the file's default clock (set by the
    /// file's first ClockSnapshot), or taken as trace time when the file has none.
    pub const PACKET_DEFAULT: u32 = 0;
    /// A packet without a timestamp that the reference handles as it reads it: placed at 0
    /// on trace time, before every other event, never converted.
    pub const UNTIMED: u32 = u32::MAX - 1;
    /// A packet without a timestamp that goes through the reference's sorter: placed at the
    /// latest trace-time timestamp of the events before it (its file's and earlier files',
    /// behaviour-merging.md §1: "No timestamp → max(file's latest ts, sorter max)"), never
    /// converted.
    pub const LATEST: u32 = u32::MAX - 3;
    /// A proto packet that names no clock, read before its file's first ClockSnapshot set the
    /// file's default clock: its value is used unconverted, never deferred
    /// (behaviour-merging.md §1, "Proto packet clock").
    pub const UNCONVERTED: u32 = u32::MAX - 2;
    pub const REALTIME: u32 = 1;
    pub const REALTIME_COARSE: u32 = 2;
    pub const MONOTONIC: u32 = 3;
    pub const MONOTONIC_COARSE: u32 = 4;
    pub const MONOTONIC_RAW: u32 = 5;
    pub const BOOTTIME: u32 = 6;
    pub const TSC: u32 = 9;
    pub const PERF: u32 = 10;
    pub const TRACE_FILE: u32 = 11;

    /// Trace Processor's display names for the builtin clocks.
    pub fn name(id: u32) -> Option<&'static str> {
        Some(match id {
            REALTIME => "REALTIME",
            REALTIME_COARSE => "REALTIME_COARSE",
            MONOTONIC => "MONOTONIC",
            MONOTONIC_COARSE => "MONOTONIC_COARSE",
            MONOTONIC_RAW => "MONOTONIC_RAW",
            BOOTTIME => "BOOTTIME",
            TSC => "TSC",
            PERF => "PERF",
            TRACE_FILE => "TRACE_FILE",
            _ => return None,
        })
    }
}

/// One `smaps_packet` entry: strings are NULL when absent, numbers 0.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SmapsRow {
    pub process: ProcessRef,
    pub path: StrId,
    pub file_name: StrId,
    pub module_debugid: StrId,
    pub module_debug_path: StrId,
    /// size_kb, private_dirty_kb, swap_kb, start_address, module_timestamp,
    /// protection_flags, private_clean_resident_kb, shared_dirty_resident_kb,
    /// shared_clean_resident_kb, locked_kb, proportional_resident_kb.
    pub numbers: [i64; 11],
}

/// Which input event table a row belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputEventKind {
    Motion,
    Key,
    Dispatch,
}

/// One Android input event, as the dispatcher traced it: its fields as args (reflected),
/// the message itself in base64.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InputEventRow {
    pub kind: InputEventKind,
    pub event_id: i64,
    /// Motion and key events: their `event_time_nanos` as the event has it (the reference
    /// does not convert it); dispatches have none.
    pub ts: Option<i64>,
    pub vsync_id: Option<i64>,
    pub window_id: Option<i64>,
    pub args: ArgsRef,
    pub base64: StrId,
}

/// One winscope packet's row(s). Times inside the messages are kept as they are (the
/// reference does not convert them); `ts` of the snapshot kinds is the packet's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum WinscopeRow {
    /// One `ShellTransition` packet: several packets of one transition id merge.
    ShellTransition(ShellTransitionRow),
    /// One `ShellHandlerMapping`.
    ShellHandler {
        handler_id: i64,
        name: StrId,
        base64: StrId,
    },
    /// A `surfaceflinger_layers_snapshot`: its args (all but the layers) and one
    /// (args, base64) per layer.
    LayersSnapshot {
        args: ArgsRef,
        base64: StrId,
        layers: Vec<(ArgsRef, StrId)>,
    },
    /// A `surfaceflinger_transactions` entry.
    Transactions {
        args: ArgsRef,
        base64: StrId,
        vsync_id: Option<i64>,
    },
    /// A window manager or input method entry (`winscope_extensions`): one row of the
    /// kind's table.
    Entry {
        kind: WinscopeEntryKind,
        args: ArgsRef,
        base64: StrId,
    },
    /// A `protolog_message`, its interned strings resolved (decoded at the end of the
    /// trace, against every viewer config seen).
    ProtoLog(ProtoLogRow),
    /// A `protolog_viewer_config`: messages (id, format, level, group id, location) and
    /// groups (id, tag).
    ProtoLogConfig {
        messages: Vec<(u64, StrId, i64, u32, StrId)>,
        groups: Vec<(u32, StrId)>,
    },
}

/// One ProtoLog message's parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ProtoLogRow {
    pub message_id: u64,
    pub ints: Vec<i64>,
    /// Doubles, as their bits.
    pub doubles: Vec<u64>,
    pub bools: Vec<bool>,
    pub strings: Vec<StrId>,
    pub stacktrace: StrId,
}

/// The winscope extensions kept as one row per entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WinscopeEntryKind {
    WindowManager,
    InputMethodClients,
    InputMethodService,
    InputMethodManagerService,
    ViewCapture,
}

/// The typed fields of one `ShellTransition` packet (None where the packet lacks them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ShellTransitionRow {
    pub transition_id: i64,
    pub args: ArgsRef,
    pub base64: StrId,
    pub transition_type: Option<i64>,
    pub send_time: Option<i64>,
    pub dispatch_time: Option<i64>,
    pub finish_time: Option<i64>,
    pub merge_time: Option<i64>,
    pub shell_abort_time: Option<i64>,
    pub wm_abort_time: Option<i64>,
    pub handler: Option<i64>,
    pub flags: Option<i64>,
    pub start_transaction_id: Option<i64>,
    pub finish_transaction_id: Option<i64>,
    /// Targets: (layer_id, window_id).
    pub participants: Vec<(Option<i64>, Option<i64>)>,
}

/// One `vulkan_memory_event`: strings NULL and numbers NULL when absent.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VulkanMemoryRow {
    pub process: ProcessRef,
    pub source: StrId,
    pub operation: StrId,
    /// The event's own `timestamp` field (the packet's time only sorts it).
    pub timestamp: i64,
    pub function_name: StrId,
    pub scope: StrId,
    /// device, device_memory, memory_type, heap, object_handle, memory_address,
    /// memory_size.
    pub numbers: [Option<i64>; 7],
    /// The annotations, keyed by their interned names.
    pub args: super::ArgsRef,
}
