//! Builds Trace-Processor-shaped rows from the sorted event stream: process and thread
//! identity, tracks, slice nesting per track, counters, sched, flows.
//!
//! The rules follow Trace Processor's trackers (see `reference/behaviour-parsers.md`): the
//! same input gives the same rows, so Perfetto SQL written against Trace Processor works.

mod android;
mod binder;
mod chrome;
mod descriptor;
mod drm;
mod flow;
mod generic_kernel;
mod gpu_kernel;
mod graphics;
mod heap_graph;
mod kernel;
mod memory;
mod memory_snapshot;
mod power;
mod process;
mod profiler;
mod sched;
mod slice;
mod stack_profile;
mod syscall;
mod syscall_table;
mod tables;
mod thread_state;
mod track;
mod v8;
mod winscope;

use flow::FlowState;
use slice::{Overlap, StackEntry};
use track::{AsyncPhase, AsyncSetState, DescriptorTrack};

pub use heap_graph::{
    package_of, HeapClassRow, HeapDump, HeapGraphStore, HeapObjectRow, HeapReferenceRow, OomStack,
};
pub use memory_snapshot::*;
pub use stack_profile::{
    AsyncContextRow, CallsiteRow, FrameRow, MappingRow, PerfSampleData, PerfSession, ProfileRow,
    ProfilerSession, SampleCounterDesc, StackProfile, StackSampleData, SymbolRow, TaskRef,
};
pub use tables::*;
pub use v8::*;
pub use winscope::WinscopeTables;

use std::collections::HashMap;

use crate::ir::*;

/// Turns a sorted, time-converted event stream into [`Tables`].
/// Width of each machine's ucpu range.
const CPUS_PER_MACHINE: u32 = 4096;
/// Where ucpus of cpus numbered past their machine's range start.
const ODD_CPUS_FIRST_UCPU: u32 = 1 << 30;

pub struct Builder<'s> {
    sink: &'s mut Sink,
    out: &'s mut dyn RowSink,
    /// Slices still on a stack (they may change until popped).
    live_slices: FxHashMap<u32, SliceRow>,
    /// Start of every slice, for orienting flows.
    slice_ts: Vec<i64>,
    pub tables: Tables,
    machine_rows: FxHashMap<MachineId, u32>,
    /// Live thread rows per (machine, tid), oldest first.
    threads_by_tid: FxHashMap<(MachineId, i64), Vec<u32>>,
    /// Live process per (machine, pid).
    process_by_pid: FxHashMap<(MachineId, i64), u32>,
    /// The slice the last Begin / End / complete event made or closed: (ts, id, track).
    last_slice: Option<(i64, u32, u32)>,
    /// Thread instruction counts waiting for the next slice event on their track
    /// ([`EventData::SliceInstructions`]), and the one of the slice event being applied
    /// (`NO_TS` for none).
    pending_ic: FxHashMap<TrackRef, (i64, i64)>,
    slice_ic: (i64, i64),
    /// Idle thread / process rows per machine row.
    idle: FxHashMap<MachineId, (u32, u32)>,
    /// Machines whose pid/tid 0 are the idle rows (proto and systrace sources).
    idle_mapped: std::collections::HashSet<MachineId>,
    /// Resolved track per interned key (None = not yet resolved).
    track_cache: Vec<Option<u32>>,
    thread_slice_track: FxHashMap<u32, u32>,
    thread_overlap_tracks: FxHashMap<u32, Vec<u32>>,
    stacks: Vec<Vec<StackEntry>>,
    async_sets: FxHashMap<AsyncSet, AsyncSetState>,
    next_track_group: u32,
    descriptor_tracks: FxHashMap<(MachineId, u64), DescriptorTrack>,
    /// Merging descriptor tracks (see `descriptor.rs`).
    merged: descriptor::MergedTracks,
    flows: FlowState,
    sched_pending: FxHashMap<(MachineId, u32), (u32, SchedRow)>,
    /// Index into `tables.cpus` per machine's cpu.
    cpus: FxHashMap<(MachineId, u32), usize>,
    /// Process counter tracks by (upid, name, type).
    process_counters: FxHashMap<(u32, StrId, &'static str), u32>,
    /// Thread counter tracks by (utid, name, type).
    thread_counters: FxHashMap<(u32, StrId, &'static str), u32>,
    /// Cpus numbered past their machine's range so far.
    odd_cpus: u32,
    /// The ucpu range of each machine other than the host (1, 2, ...).
    cpu_ranges: FxHashMap<u32, u32>,
    /// Legacy unnestable tracks (atrace `S`/`F`): (begin count, last begin ts), cumulative.
    unnestable: FxHashMap<u32, (i64, i64)>,
    /// The latest `state` row of each state track (index into `tables.states`).
    open_states: FxHashMap<u32, usize>,
    /// Each thread's open `thread_state` row (see `thread_state.rs`).
    open_thread_states: FxHashMap<u32, thread_state::OpenThreadState>,
    /// Each thread's last closed blocked (`D`) row, unwritten until a later one replaces it.
    last_blocked_states: FxHashMap<u32, thread_state::OpenThreadState>,
    /// Which descriptor uuid last described each tid / pid, and the row each uuid got.
    thread_claims: FxHashMap<(MachineId, i64), u64>,
    process_claims: FxHashMap<(MachineId, i64), u64>,
    uuid_threads: FxHashMap<(MachineId, u64), u32>,
    uuid_processes: FxHashMap<(MachineId, u64), u32>,
    /// The trace file of the event being applied, so each slice knows where it came from.
    event_file: u32,
    /// The binder tracker's state (see `binder.rs`).
    binder: binder::BinderState,
    /// The generic kernel tracker's state (see `generic_kernel.rs`).
    generic: generic_kernel::GenericKernelState,
    /// The DRM tracker's state (see `drm.rs`).
    drm: drm::DrmState,
    /// Paired kernel operations, running totals, TCP streams (see `kernel.rs`).
    kernel: kernel::KernelState,
    /// Pending thread associations and parents (see `process.rs`).
    procs: process::ProcessTrackerState,
    /// Profiler samples (see `stack_profile.rs`).
    profiles: stack_profile::ProfileState,
    /// Stack samplers' sample tables (see `profiler.rs`).
    profiler: profiler::ProfilerState,
    /// FrameTimeline frames and their cookies (see `android.rs`).
    frames: android::FrameTimelineState,
    /// SurfaceFlinger buffer phases (see `graphics.rs`).
    graphics: graphics::GraphicsState,
    /// Memory maps' owners (see `memory.rs`).
    memory: memory::MemoryState,
    /// Suspend/resume phases and wakeup sources (see `power.rs`).
    power: power::PowerState,
    /// Adreno, V4L2 and virtio-gpu state (see `gpu_kernel.rs`).
    gpu_kernel: gpu_kernel::GpuKernelState,
    /// Chrome's live-process listings and process descriptors (see `chrome.rs`).
    chrome_processes: chrome::ActiveChromeProcesses,
}

impl<'s> Builder<'s> {
    pub fn new(sink: &'s mut Sink, out: &'s mut dyn RowSink) -> Self {
        let track_cache = vec![None; sink.tracks.len()];
        Self {
            sink,
            out,
            live_slices: FxHashMap::default(),
            slice_ts: Vec::new(),
            tables: Tables {
                bounds: (i64::MAX, i64::MIN),
                ..Tables::default()
            },
            machine_rows: FxHashMap::default(),
            threads_by_tid: FxHashMap::default(),
            process_by_pid: FxHashMap::default(),
            idle: FxHashMap::default(),
            last_slice: None,
            pending_ic: FxHashMap::default(),
            slice_ic: (NO_TS, NO_TS),
            idle_mapped: std::collections::HashSet::new(),
            track_cache,
            thread_slice_track: FxHashMap::default(),
            thread_overlap_tracks: FxHashMap::default(),
            stacks: Vec::new(),
            async_sets: FxHashMap::default(),
            next_track_group: 0,
            descriptor_tracks: FxHashMap::default(),
            merged: descriptor::MergedTracks::default(),
            flows: FlowState::default(),
            sched_pending: FxHashMap::default(),
            cpus: FxHashMap::default(),
            cpu_ranges: FxHashMap::default(),
            odd_cpus: 0,
            process_counters: FxHashMap::default(),
            thread_counters: FxHashMap::default(),
            unnestable: FxHashMap::default(),
            open_states: FxHashMap::default(),
            open_thread_states: FxHashMap::default(),
            last_blocked_states: FxHashMap::default(),
            thread_claims: FxHashMap::default(),
            process_claims: FxHashMap::default(),
            uuid_threads: FxHashMap::default(),
            uuid_processes: FxHashMap::default(),
            event_file: NO_FILE,
            binder: binder::BinderState::default(),
            generic: generic_kernel::GenericKernelState::default(),
            drm: drm::DrmState::default(),
            kernel: kernel::KernelState::default(),
            procs: process::ProcessTrackerState::default(),
            profiles: stack_profile::ProfileState::default(),
            profiler: profiler::ProfilerState::default(),
            frames: android::FrameTimelineState::default(),
            graphics: graphics::GraphicsState::default(),
            memory: memory::MemoryState::default(),
            power: power::PowerState::default(),
            gpu_kernel: gpu_kernel::GpuKernelState::default(),
            chrome_processes: chrome::ActiveChromeProcesses::default(),
        }
    }

    /// Applies one event (already in trace time, in sorted order).
    pub fn apply(&mut self, ts: i64, data: &EventData) {
        if !self.pending_ic.is_empty() || self.slice_ic.0 != NO_TS {
            self.slice_ic = match *data {
                EventData::Begin(s) | EventData::End(s) | EventData::Complete { slice: s, .. } => {
                    self.pending_ic.remove(&s.track).unwrap_or((NO_TS, NO_TS))
                }
                _ => (NO_TS, NO_TS),
            };
        }
        match *data {
            EventData::Begin(mut s) => {
                s.args = self.resolve_thread_args(s.args);
                let track = self.slice_track(s.track, ts, AsyncPhase::Begin, s.name);
                s.args = self.resolve_passthrough(s.args, track);
                self.note_ts(ts);
                self.last_slice = self.begin(track, ts, &s).map(|id| (ts, id, track));
            }
            EventData::BeginUnnestable(s) => {
                let track = self.slice_track(s.track, ts, AsyncPhase::BeginSaturating, s.name);
                self.note_ts(ts);
                self.begin_unnestable(track, ts, &s);
            }
            EventData::End(mut s) => {
                s.args = self.resolve_thread_args(s.args);
                let track = self.slice_track(s.track, ts, AsyncPhase::End, s.name);
                s.args = self.resolve_passthrough(s.args, track);
                self.note_ts(ts);
                self.last_slice = self.end(track, ts, &s).map(|id| (ts, id, track));
            }
            EventData::Complete {
                mut slice,
                dur,
                thread_dur,
            } => {
                slice.args = self.resolve_thread_args(slice.args);
                let key = *self.sink.tracks.get(slice.track);
                let overlap = if matches!(key, TrackKey::ThreadOverlap(_)) {
                    Overlap::Spill
                } else {
                    Overlap::Drop
                };
                let track = match key {
                    TrackKey::AsyncCookie { .. } | TrackKey::Descriptor { .. } => {
                        // An instant on a cookie nests under that cookie's open slices.
                        self.slice_track(slice.track, ts, AsyncPhase::Begin, slice.name);
                        self.slice_track(slice.track, ts, AsyncPhase::End, slice.name)
                    }
                    TrackKey::AsyncScoped { .. } => self.async_track(
                        key,
                        ts,
                        AsyncPhase::Scoped {
                            end: ts.saturating_add(dur.max(0)),
                        },
                    ),
                    _ => self.resolve_track(slice.track),
                };
                slice.args = self.resolve_passthrough(slice.args, track);
                self.note_ts(ts);
                self.note_ts(ts.saturating_add(dur.max(0)));
                self.last_slice = self
                    .complete(track, ts, dur, thread_dur, &slice, overlap)
                    .map(|id| (ts, id, track));
            }
            EventData::NetworkPacket {
                mut slice,
                dur,
                uid,
            } => {
                if let Some(&name) = self.sink.package_by_uid.get(&uid) {
                    slice.name = name;
                }
                let data = EventData::Complete {
                    slice,
                    dur,
                    thread_dur: NO_TS,
                };
                self.apply(ts, &data);
            }
            EventData::SliceCallstack(ref cs) => self.slice_callstack(ts, cs),
            EventData::SliceInstructions {
                track,
                count,
                delta,
            } => {
                self.pending_ic.insert(track, (count, delta));
            }
            EventData::Counter { track, value, args } => {
                let args = self.resolve_thread_args(args);
                // A process counter reported by a thread: its track is chosen at the end.
                if let TrackKey::ThreadProcessCounter { thread, name, kind } =
                    *self.sink.tracks.get(track)
                {
                    let utid = self.thread(thread);
                    self.process_counter_for_thread_with_args(ts, utid, name, kind, value.0, args);
                    return;
                }
                let gpu = self.is_gpu_counter(track);
                let track = self.resolve_track(track);
                let args = self.resolve_passthrough(args, track);
                if gpu {
                    self.note_ts(ts);
                    self.gpu_counter(ts, track, value.0, args);
                    return;
                }
                self.note_ts(ts);
                let row = CounterRow {
                    ts,
                    track,
                    value: value.0,
                    args,
                };
                self.out.counter(self.tables.counter_count, &row, self.sink);
                self.tables.counter_count += 1;
            }
            EventData::State {
                track,
                category,
                value,
                args,
            } => {
                let track = self.resolve_track(track);
                self.note_ts(ts);
                if let Some(&prev) = self.open_states.get(&track) {
                    if let Some(row) = self.tables.states.get_mut(prev) {
                        row.dur = ts - row.ts;
                    }
                }
                self.open_states.insert(track, self.tables.states.len());
                self.tables.states.push(StateRow {
                    ts,
                    dur: -1,
                    track,
                    category,
                    value,
                    args,
                });
            }
            EventData::Syscall {
                track,
                machine,
                number,
                args,
                enter,
            } => self.syscall(ts, track, machine, number, args, enter),
            EventData::FtraceRaw(raw) => self.ftrace_raw(ts, &raw),
            EventData::CompactSwitchRaw(raw) => self.compact_switch_raw(ts, &raw),
            EventData::FlowV1(f) => self.flow_v1(&f),
            EventData::SchedSwitch(s) => {
                self.note_ts(ts);
                self.sched_switch(ts, &s);
            }
            EventData::SchedWaking(w) => {
                let utid = self.thread(ThreadRef {
                    machine: w.machine,
                    tid: w.tid,
                    pid: None,
                });
                self.set_thread_name(utid, w.comm, NamePriority::Ftrace);
                let waker = w.waker_tid.map(|tid| {
                    self.thread(ThreadRef {
                        machine: w.machine,
                        tid,
                        pid: None,
                    })
                });
                self.thread_state_waking(ts, utid, waker, w.irq_context);
            }
            EventData::CpuInfo(ref info) => {
                let index = self.cpu_index(info.machine, info.cpu);
                let row = &mut self.tables.cpus[index];
                row.cluster_id = Some(info.cluster_id);
                row.processor = info.processor;
                row.capacity = info.capacity;
                row.frequencies.clone_from(&info.frequencies);
                row.args = info.args;
            }
            EventData::BlockedReason {
                thread,
                io_wait,
                function,
            } => {
                let utid = self.thread(thread);
                self.thread_state_blocked_reason(utid, io_wait, function);
            }
            EventData::ThreadName {
                thread,
                name,
                priority,
            } => {
                let utid = self.thread(thread);
                self.set_thread_name(utid, name, priority);
                // A main thread's name from the system also names its process.
                let _ = utid;
            }
            EventData::Thread(t) => {
                self.thread(t);
            }
            EventData::ImportLog { name, args } => {
                self.tables.import_logs.push(tables::ImportLogRow {
                    ts: Some(ts),
                    byte_offset: None,
                    name,
                    file: self.event_file,
                    args,
                });
            }
            EventData::ClaimThread { thread, uuid } => self.claim_thread(thread, uuid),
            EventData::ProcessStrArg {
                process,
                key,
                value,
            } => self.process_arg(process, key, ArgValue::Str(value)),
            EventData::ClaimProcess { process, uuid } => self.claim_process(process, uuid),
            EventData::ChromeProcessSeen {
                process,
                descriptor,
            } => self.chrome_process_seen(ts, process, descriptor),
            EventData::Process(ref info) => self.process_info(info),
            EventData::ThreadStart(ref t) => {
                self.thread_start(ts, t.thread, t.creator_tid, t.name, t.new_process)
            }
            EventData::ThreadEnd { machine, tid } => {
                if let Some(utid) = self.latest_live_thread(machine, tid) {
                    self.tables.threads[utid as usize].end_ts = Some(ts);
                    if let Some(upid) = self.tables.threads[utid as usize].upid {
                        if self.tables.processes[upid as usize].pid == tid {
                            self.tables.processes[upid as usize].end_ts = Some(ts);
                            self.process_by_pid.remove(&(machine, tid));
                        }
                    }
                }
            }
            EventData::ThreadArg { thread, key, value } => {
                let utid = self.thread(thread);
                self.tables.threads[utid as usize]
                    .extra_args
                    .push((key, ArgValue::Int(value)));
            }
            EventData::ProcessArg {
                process,
                key,
                value,
            } => self.process_arg(process, key, ArgValue::Int(value)),
            EventData::ThreadState(ref st) => self.thread_state_event(ts, st),
            EventData::AndroidLog(ref log) => self.android_log(ts, log),
            EventData::V8Code(ref code) => self.v8_code(ts, code),
            EventData::MemorySnapshot(ref dump) => self.memory_snapshot(ts, dump),
            EventData::Journald(ref entry) => self.journald(ts, entry),
            EventData::FileDescriptor(ref fd) => {
                let upid = self.process(fd.0);
                self.tables.fds.push((ts, upid, fd.1, fd.2));
            }
            EventData::InputEvent(ref row) => self.tables.input_events.push((**row).clone()),
            EventData::Winscope(ref row) => self.winscope(ts, row),
            EventData::VulkanMemory(ref row) => {
                let upid = self.process(row.process);
                self.tables.vulkan_memory.push((upid, (**row).clone()));
            }
            EventData::ProfilerSmaps(ref row) => {
                let upid = self.process(row.process);
                self.tables.smaps.push((ts, upid, (**row).clone()));
            }
            EventData::ChromeRaw(ref raw) => self.chrome_raw(ts, raw),
            EventData::ProcessName {
                process,
                name,
                priority,
            } => {
                let upid = self.process(process);
                self.set_process_name_at(upid, name, priority);
            }
            EventData::ProcessArgs { process, args } => {
                let upid = self.process(process);
                let set: Vec<Arg> = self.sink.args.get(args).to_vec();
                let row = &mut self.tables.processes[upid as usize];
                row.extra_args.extend(set.iter().map(|a| (a.key, a.value)));
            }
            EventData::Binder(ref b) => self.binder(ts, b),
            EventData::GenericKernel(ref g) => self.generic_kernel(ts, g),
            EventData::Drm(ref d) => self.drm(ts, d),
            EventData::Kernel(ref k) => self.kernel_event(ts, k),
            EventData::Dropped | EventData::TimeProbe(_) => {}
            EventData::ThreadRename { thread, name } => self.rename_thread(thread, name),
            EventData::CounterSum {
                track,
                delta,
                divisor,
                args,
            } => self.counter_sum(ts, track, delta, divisor, args),
            EventData::PairBegin(ref p) => self.pair_begin(ts, p.0, p.1),
            EventData::PairEnd(ref p) => self.pair_end(ts, p.0, p.1),
            EventData::SockState {
                machine,
                skaddr,
                name,
                opens,
            } => self.sock_state(ts, machine, skaddr, name, opens),
            EventData::Profile(ref sample) => self.profile_sample(ts, sample),
            EventData::FrameStart(ref f) => self.frame_start(ts, f),
            EventData::FrameEnd { machine, cookie } => self.frame_end(ts, machine, cookie),
            EventData::BufferEvent(ref e) => self.buffer_event(ts, e),
            EventData::EnsureTrack(track) => {
                self.resolve_track(track);
            }
        }
    }

    /// A thread state the trace states itself (JSON `T`); `Running` on a cpu is also a
    /// `sched` row.
    fn thread_state_event(&mut self, ts: i64, st: &ThreadStateEvent) {
        let utid = self.thread(st.thread);
        self.note_ts(ts);
        let row = ThreadStateRow {
            ts,
            dur: st.dur,
            cpu: None,
            ucpu: None,
            utid,
            state: st.state,
            io_wait: st.io_wait,
            blocked_function: st.blocked_function,
            waker_utid: None,
            waker_id: None,
            irq_context: None,
        };
        self.out
            .thread_state(self.tables.thread_state_count, &row, self.sink);
        self.tables.thread_state_count += 1;
        if let Some(cpu) = st.running_cpu {
            let ucpu = self.cpu(st.thread.machine, cpu);
            let row = SchedRow {
                ts,
                dur: st.dur,
                cpu,
                ucpu,
                utid,
                end_state: NULL_STR,
                priority: 0,
            };
            let id = self.tables.sched_count;
            self.tables.sched_count += 1;
            self.out.sched(id, &row, self.sink);
        }
    }

    fn note_ts(&mut self, ts: i64) {
        let b = &mut self.tables.bounds;
        b.0 = b.0.min(ts);
        b.1 = b.1.max(ts);
    }

    /// Finishes the import: hands over what is still open and returns the small tables.
    pub fn finish(mut self) -> Tables {
        // Stats counted while finishing belong to no one event's file.
        self.event_file = NO_FILE;
        self.flush_memory_snapshot();
        self.tables.missing_chrome_processes = self.chrome_processes.with_data_loss();
        self.settle_process_counters_for_threads();
        self.described_tracks();
        self.finish_protolog();
        self.finish_transitions();
        // A TranslationTable's process_track_name rules rename process-scoped tracks.
        if !self.sink.translations.process_track_name.is_empty() {
            for row in &mut self.tables.tracks {
                if row.upid.is_some() && row.utid.is_none() {
                    let renames = &self.sink.translations.process_track_name;
                    if let Some(&n) = renames.get(&row.name) {
                        row.name = n;
                    }
                }
            }
        }
        let gpu_machines: Vec<MachineId> = self.sink.gpus.iter().map(|g| g.machine).collect();
        self.tables.gpu_machines = gpu_machines
            .into_iter()
            .map(|m| self.machine_row(m))
            .collect();
        let ctx_machines: Vec<MachineId> =
            self.sink.gpu_contexts.iter().map(|c| c.machine).collect();
        self.tables.gpu_context_machines = ctx_machines
            .into_iter()
            .map(|m| self.machine_row(m))
            .collect();
        let user_machines: Vec<MachineId> = self.sink.android_users.iter().map(|u| u.0).collect();
        self.tables.user_machines = user_machines
            .into_iter()
            .map(|m| self.machine_row(m))
            .collect();
        // Tracks named after they were made (GPU queues specified after their first stages).
        if !self.sink.track_renames.is_empty() {
            let rows: HashMap<u32, MachineId> = self
                .machine_rows
                .iter()
                .map(|(&raw, &row)| (row, raw))
                .collect();
            for row in &mut self.tables.tracks {
                let Some(&raw) = rows.get(&row.machine) else {
                    continue;
                };
                if let Some(&(name, description)) =
                    self.sink.track_renames.get(&(raw, row.kind, row.name))
                {
                    row.name = name;
                    row.description = description;
                }
            }
        }
        let mut open: Vec<u32> = self.live_slices.keys().copied().collect();
        open.sort_unstable();
        for id in open {
            self.emit_slice(id);
        }
        let mut pending: Vec<(u32, SchedRow)> =
            self.sched_pending.drain().map(|(_, v)| v).collect();
        pending.sort_unstable_by_key(|p| p.0);
        for (id, row) in pending {
            self.out.sched(id, &row, self.sink);
        }
        self.flush_thread_states();
        self.finish_heap_rows();
        self.deobfuscate_heap_graphs();
        self.finish_gpu_counters();
        for (group, name, description, track) in std::mem::take(&mut self.sink.gpu_counter_groups) {
            let track = self.resolve_track(track);
            self.tables
                .gpu_counter_groups
                .push((group, name, description, track));
        }
        self.tables
    }
}

fn str_or_null(s: StrId) -> ArgValue {
    if s == NULL_STR {
        ArgValue::Null
    } else {
        ArgValue::Str(s)
    }
}

/// Builds tables from a sink whose events are already converted to trace time and sorted.
pub fn build(
    sink: &mut Sink,
    machines: &[MachineId],
    swapper_machines: &[MachineId],
    out: &mut dyn RowSink,
) -> Tables {
    let events = std::mem::take(&mut sink.events);
    let payloads = std::mem::take(&mut sink.payloads);
    let mut builder = Builder::new(sink, out);
    for &m in machines {
        builder.add_machine(m);
    }
    for &m in swapper_machines {
        builder.name_idle_thread(m);
    }
    let clock_files: Vec<u32> = (0..builder.sink.clocks.len())
        .map(|c| builder.sink.clocks.get(c as u32).file)
        .collect();
    for (i, ev) in events.iter().enumerate() {
        let (clock, data) = &payloads[ev.payload as usize];
        builder.event_file = clock_files
            .get(usize::from(*clock))
            .copied()
            .unwrap_or(NO_FILE);
        builder.apply(ev.ts, data);
        if (i + 1).is_multiple_of(tables::CHECKPOINT_EVENTS) {
            builder.out.checkpoint(&builder.tables, builder.sink);
        }
    }
    let tables = builder.finish();
    drop(events);
    sink.payloads = payloads;
    tables
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(tid: i64) -> ThreadRef {
        ThreadRef {
            machine: HOST_MACHINE,
            tid,
            pid: Some(1),
        }
    }

    fn complete(sink: &mut Sink, key: TrackKey, ts: i64, dur: i64, name: &str) {
        let clock = sink.builtin_clock(HOST_MACHINE, clocks::TRACE_FILE);
        let slice = SliceEvent {
            track: sink.track(key),
            category: NULL_STR,
            name: sink.intern(name),
            args: NO_ARGS,
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        let data = EventData::Complete {
            slice,
            dur,
            thread_dur: NO_TS,
        };
        sink.push(ts, clock, data);
    }

    fn run(sink: &mut Sink) -> (Tables, CollectRows) {
        sink.events.sort_by_key(|e| (e.ts, e.ord));
        let mut rows = CollectRows::default();
        let tables = build(sink, &[HOST_MACHINE], &[HOST_MACHINE], &mut rows);
        rows.slices.sort_by_key(|(id, _)| *id);
        (tables, rows)
    }

    fn stat(sink: &Sink, name: &str) -> i64 {
        sink.stat_total(name)
    }

    fn log_args(sink: &Sink, log: &ImportLogRow) -> Vec<(String, ArgValue)> {
        sink.args
            .get(log.args)
            .iter()
            .map(|a| (sink.strings.get(a.key).unwrap_or("").to_string(), a.value))
            .collect()
    }

    #[test]
    fn overlapping_complete_spills_to_a_lane_and_logs() {
        let mut sink = Sink::new();
        let key = TrackKey::ThreadOverlap(thread(1));
        complete(&mut sink, key, 100, 100, "outer");
        complete(&mut sink, key, 150, 100, "inner");
        complete(&mut sink, key, 160, 20, "nested");
        let (tables, rows) = run(&mut sink);
        let placed: Vec<(&str, &str, u32)> = rows
            .slices
            .iter()
            .map(|(_, r)| {
                let name = sink.strings.get(r.name).unwrap_or("");
                (name, tables.tracks[r.track as usize].kind, r.depth)
            })
            .collect();
        assert_eq!(
            placed,
            vec![
                ("outer", "thread_execution", 0),
                ("inner", "thread_overlapping_slice", 0),
                ("nested", "thread_execution", 1),
            ]
        );
        assert_eq!(stat(&sink, "slice_spill_overlapping_complete_event"), 1);
        assert_eq!(stat(&sink, "slice_drop_overlapping_complete_event"), 0);
        assert_eq!(tables.import_logs.len(), 1);
        let log = tables.import_logs[0];
        assert_eq!(
            (log.ts, log.name),
            (Some(150), "slice_spill_overlapping_complete_event")
        );
        let args = log_args(&sink, &log);
        assert!(args.contains(&("overlap_start".into(), ArgValue::Int(150))));
        assert!(args.contains(&("overlap_end".into(), ArgValue::Int(200))));
        assert!(args.contains(&("conflicting_slice_ts".into(), ArgValue::Int(100))));
        assert!(args.contains(&("conflicting_slice_dur".into(), ArgValue::Int(100))));
        let name_of = |k: &str| {
            args.iter().find(|a| a.0 == k).and_then(|a| match a.1 {
                ArgValue::Str(s) => sink.strings.get(s),
                _ => None,
            })
        };
        assert_eq!(name_of("conflicting_slice_name"), Some("outer"));
        assert_eq!(name_of("event_name"), Some("inner"));
        assert_eq!(name_of("event_phase"), Some("X"));
    }

    #[test]
    fn overlapping_complete_on_a_plain_track_is_dropped_and_logged() {
        let mut sink = Sink::new();
        let key = TrackKey::ThreadSlices(thread(1));
        complete(&mut sink, key, 100, 100, "outer");
        complete(&mut sink, key, 150, 100, "inner");
        let (tables, rows) = run(&mut sink);
        assert_eq!(rows.slices.len(), 1);
        assert_eq!(stat(&sink, "slice_drop_overlapping_complete_event"), 1);
        assert_eq!(tables.import_logs.len(), 1);
        assert_eq!(
            tables.import_logs[0].name,
            "slice_drop_overlapping_complete_event"
        );
        assert_eq!(log_args(&sink, &tables.import_logs[0]).len(), 5);
    }

    #[test]
    fn waking_a_blocked_thread_makes_it_runnable_and_names_the_running_waker() {
        let mut sink = Sink::new();
        let clock = sink.builtin_clock(HOST_MACHINE, clocks::BOOTTIME);
        let (running, runnable, sleeping) =
            (sink.intern("Running"), sink.intern("R"), sink.intern("S"));
        let switch = |prev: i64, state: StrId, next: i64| {
            EventData::SchedSwitch(SchedSwitch {
                machine: HOST_MACHINE,
                cpu: 0,
                prev_tid: prev,
                prev_comm: NULL_STR,
                prev_state: state,
                next_tid: next,
                next_comm: NULL_STR,
                next_prio: 120,
            })
        };
        let waking = |tid: i64, waker: i64| {
            EventData::SchedWaking(SchedWaking {
                machine: HOST_MACHINE,
                cpu: 0,
                tid,
                comm: NULL_STR,
                waker_tid: Some(waker),
                irq_context: Some(true),
            })
        };
        sink.push(100, clock, switch(0, runnable, 7));
        sink.push(200, clock, switch(7, sleeping, 8));
        sink.push(300, clock, waking(7, 8));
        // Already runnable: a spurious wakeup changes nothing.
        sink.push(350, clock, waking(7, 8));
        // A kernel trace's machine: its tid 0 is the idle thread.
        sink.events.sort_by_key(|e| (e.ts, e.ord));
        let mut rows = CollectRows::default();
        build(&mut sink, &[HOST_MACHINE], &[HOST_MACHINE], &mut rows);
        let mut got: Vec<_> = rows
            .thread_states
            .iter()
            .map(|(id, r)| (*id, r.ts, r.dur, r.state, r.waker_id, r.irq_context))
            .collect();
        got.sort_unstable();
        assert_eq!(
            got,
            vec![
                (0, 100, 100, running, None, None),
                (1, 200, 100, sleeping, None, None),
                (2, 200, -1, running, None, None),
                // Woken by 8 while 8 was running in row 2.
                (3, 300, -1, runnable, Some(2), Some(true)),
            ]
        );
    }

    #[test]
    fn thread_state_rows_and_running_sched() {
        let mut sink = Sink::new();
        let clock = sink.builtin_clock(HOST_MACHINE, clocks::TRACE_FILE);
        let running = sink.intern("Running");
        let sleeping = sink.intern("S");
        let blocked = sink.intern("wait");
        let states = [
            (1000, 500, running, None, NULL_STR, Some(2)),
            (1500, 100, sleeping, Some(true), blocked, None),
            (1600, 50, running, None, NULL_STR, None),
        ];
        for (ts, dur, state, io_wait, blocked_function, running_cpu) in states {
            let ev = ThreadStateEvent {
                thread: thread(7),
                dur,
                state,
                io_wait,
                blocked_function,
                running_cpu,
            };
            sink.push(ts, clock, EventData::ThreadState(Box::new(ev)));
        }
        let (tables, rows) = run(&mut sink);
        let got: Vec<_> = rows
            .thread_states
            .iter()
            .map(|(id, r)| (*id, r.ts, r.dur, r.state, r.io_wait, r.blocked_function))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 1000, 500, running, None, NULL_STR),
                (1, 1500, 100, sleeping, Some(true), blocked),
                (2, 1600, 50, running, None, NULL_STR),
            ]
        );
        let utid = rows.thread_states[0].1.utid;
        assert_eq!(tables.threads[utid as usize].tid, 7);
        assert_eq!(rows.sched.len(), 1);
        let (id, sched) = rows.sched[0];
        assert_eq!(
            (id, sched.ts, sched.dur, sched.cpu, sched.utid),
            (0, 1000, 500, 2, utid)
        );
        assert_eq!(sched.ucpu, 2, "the host's ucpu is the cpu number");
        assert!(tables.cpus.iter().any(|c| c.ucpu == 2 && c.cpu == 2));
    }
}
