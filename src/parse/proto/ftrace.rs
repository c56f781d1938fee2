//! ftrace bundles: typed kernel events (sched, irqs, cpu frequency/idle, memory, print and
//! atrace markers, syscalls, …), compact sched, and a raw `ftrace_event` row for every event.
//! Hands on sched, thread-state, slice, counter and raw-row events to the sink.

use super::*;

/// Bundles from a cpu at or past this are corrupt (Trace Processor's kMaxCpuCount).
const MAX_CPUS: u32 = 1024;

/// The fields of a kernel driver's trace marker (MDSS, SDE, DPU, G2D, Mali).
pub(super) struct KernelMarker {
    /// The driver's trace type: `B`, `E`, `C` or `I` as in atrace, or 0 when the driver
    /// says begin/end with `trace_begin` instead.
    ty: u8,
    trace_begin: bool,
    tgid: Option<i32>,
    name: String,
    value: i64,
}

impl KernelMarker {
    fn new(ty: u8, tgid: Option<i32>, name: Option<String>, value: Option<i64>) -> Self {
        Self {
            ty,
            trace_begin: false,
            tgid,
            name: name.unwrap_or_default(),
            value: value.unwrap_or(0),
        }
    }
}

/// `common_flags` bits saying an ftrace event ran in hard or soft interrupt context.
pub(super) const IRQ_FLAGS: u32 = 0x08 | 0x10;

/// Which kind of interrupt handler a cpu slice is.
#[derive(Clone, Copy)]
pub(super) enum Interrupt {
    Hard,
    Soft,
}

/// The kernel's softirq vectors, by number.
pub(super) const SOFTIRQ_NAMES: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// Where an ftrace event came from: its bundle's machine, sequence and cpu, and the
/// event's own pid and flags.
#[derive(Clone, Copy)]
pub(super) struct FtraceOrigin {
    machine: MachineId,
    seq_id: u32,
    cpu: u32,
    pid: i64,
    common_flags: Option<u32>,
}

/// Per-cpu state of compact sched decoding: the task that the last switch put on.
#[derive(Clone, Copy)]
pub(super) struct CompactCpu {
    next_pid: i64,
    next_prio: i32,
}

/// A `sched_switch`'s fields, from a full event or a compact one.
pub(super) struct RawSwitch {
    prev_comm: StrId,
    prev_pid: i64,
    prev_prio: i32,
    prev_state: i64,
    next_comm: StrId,
    next_pid: i64,
    next_prio: i32,
}

/// Decodes a `sched_switch` prev_state with the kernel 4.4 layout (Trace Processor's
/// default when the kernel version is unknown). `None` when the bits make no sense.
pub fn decode_task_state(state: i64) -> Option<String> {
    decode_task_state_for(state, None)
}

/// Decodes a `sched_switch` prev_state as the kernel of that version encodes it: before
/// 4.14, x K W P N follow Z (D with N is `I`) and the preempted flag is 0x800 (0x1000 from
/// 4.8); from 4.14, P and I follow Z and 0x100 means preempted. `None` when the bits make
/// no sense.
pub fn decode_task_state_for(state: i64, version: Option<(u32, u32)>) -> Option<String> {
    let version = version.unwrap_or((4, 4));
    if state < 0 {
        return None;
    }
    let state = state as u64;
    if state == 0 {
        return Some("R".into());
    }
    const COMMON: [(u64, char); 6] = [
        (0x1, 'S'),
        (0x2, 'D'),
        (0x4, 'T'),
        (0x8, 't'),
        (0x10, 'X'),
        (0x20, 'Z'),
    ];
    let (preempt, letters): (u64, Vec<(u64, char)>) = if version >= (4, 14) {
        let mut l = COMMON.to_vec();
        l.extend([(0x40, 'P'), (0x80, 'I')]);
        (0x100, l)
    } else {
        let mut l = COMMON.to_vec();
        l.extend([
            (0x40, 'x'),
            (0x80, 'K'),
            (0x100, 'W'),
            (0x200, 'P'),
            (0x400, 'N'),
        ]);
        (if version >= (4, 8) { 0x1000 } else { 0x800 }, l)
    };
    let known = letters.iter().fold(preempt, |m, (bit, _)| m | bit);
    if state & !known != 0 {
        return None;
    }
    let preempted = state & preempt != 0;
    let bits = state & !preempt;
    if bits == 0 {
        return Some("R+".into());
    }
    let mut out = String::new();
    // Before 4.14, D with N is the idle state `I`.
    if version < (4, 14) && bits & 0x402 == 0x402 {
        out.push('I');
    } else {
        for (bit, c) in letters {
            if bits & bit != 0 {
                out.push(c);
            }
        }
    }
    if out.is_empty() {
        return None;
    }
    if preempted {
        out.push('+');
    }
    // Trace Processor's task-state string holds three characters: longer ones are cut.
    out.truncate(crate::parse::systrace::MAX_STATE_CHARS);
    Some(out)
}

/// The sequence-scoped clock id of ftrace's `global` clock (the reference's
/// kFtraceGlobalClockIdForOldKernels).
const FTRACE_GLOBAL_CLOCK: u32 = 64;

impl Parser<'_> {
    /// A bundle's (ftrace clock, boot time) reading: a snapshot relating the sequence's
    /// `global` ftrace clock to BOOTTIME, skipped when it repeats the latest one.
    fn ftrace_clock_snapshot(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ftrace_ts: i64,
        boot_ts: Option<i64>,
    ) {
        if self.latest_ftrace_clock_snapshot == Some(ftrace_ts) {
            return;
        }
        self.latest_ftrace_clock_snapshot = Some(ftrace_ts);
        let domain = |clock_id, sequence| ClockDomain {
            machine,
            clock_id,
            sequence,
            file: self.ctx.file,
            shared: false,
        };
        let readings = vec![
            (domain(FTRACE_GLOBAL_CLOCK, seq_id), ftrace_ts),
            (domain(clocks::BOOTTIME, 0), boot_ts.unwrap_or(0)),
        ];
        let at = i64::try_from(self.packet_at.1).ok();
        self.sink.add_snapshot(
            ClockSnapshot {
                machine,
                file: self.ctx.file,
                primary_trace_clock: None,
                readings,
                units: vec![(1, false), (1, false)],
                relates_only: true,
                read_at: 0,
            },
            at,
        );
    }

    /// A kernel driver's trace marker, as the atrace text it stands for; `at` is where the
    /// ftrace event happened (machine, ts, clock, pid).
    /// A kernel driver's marker, as the reference's ParseKernelTracingMarkWrite: type 0
    /// is begin or end by `trace_begin`; `B`/`E`/`C`/`I` as in atrace; any other type is a
    /// `systrace_parse_failure`. The tgid is the payload's `pid` (0 when absent: the
    /// writing thread is then not bound to a process).
    pub(super) fn kernel_marker(&mut self, at: (MachineId, i64, ClockRef, i64), m: KernelMarker) {
        let (machine, ts, clock, pid) = at;
        let tgid = m.tgid.map_or(0, i64::from);
        let (name, value) = (m.name, m.value);
        let phase = match m.ty {
            0 if m.trace_begin => b'B',
            0 => b'E',
            t => t,
        };
        let text = match phase {
            b'B' => format!("B|{tgid}|{name}"),
            b'E' => format!("E|{tgid}"),
            b'C' => format!("C|{tgid}|{name}|{value}"),
            b'I' => format!("I|{tgid}|{name}"),
            _ => {
                self.sink.stat("systrace_parse_failure", machine, 1);
                return;
            }
        };
        atrace::parse_marker(self.sink, clock, ts, machine, pid, text.as_bytes());
    }

    pub(super) fn thread_process_counter(
        &mut self,
        thread: ThreadRef,
        name: &str,
        kind: &'static str,
        ts: i64,
        clock: ClockRef,
        value: f64,
    ) {
        let name = self.sink.intern(name);
        let track = self
            .sink
            .track(TrackKey::ThreadProcessCounter { thread, name, kind });
        let data = EventData::Counter {
            track,
            value: Real(value),
            args: NO_ARGS,
        };
        self.sink.push(ts, clock, data);
    }

    /// Begins (with a name) or ends (without) an interrupt slice on the cpu's track.
    pub(super) fn cpu_slice(
        &mut self,
        origin: FtraceOrigin,
        ts: i64,
        clock: ClockRef,
        interrupt: Interrupt,
        name: Option<&str>,
        args: &[(&str, ArgValue)],
    ) {
        let (kind, track_name, category) = match interrupt {
            Interrupt::Hard => ("cpu_irq", "Irq Cpu", "irq"),
            Interrupt::Soft => ("cpu_softirq", "SoftIrq Cpu", "softirq"),
        };
        let track_name = self.sink.intern(&format!("{track_name} {}", origin.cpu));
        let track = self.sink.track(TrackKey::CpuSlices {
            machine: origin.machine,
            cpu: origin.cpu,
            name: track_name,
            kind,
        });
        let args: Vec<Arg> = args
            .iter()
            .map(|(key, value)| self.sink.arg(key, *value))
            .collect();
        let slice = SliceEvent {
            track,
            category: self.sink.intern(category),
            name: name.map_or(NULL_STR, |n| self.sink.intern(n)),
            args: self.sink.args.push(&args),
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        let data = match name {
            Some(_) => EventData::Begin(slice),
            None => EventData::End(slice),
        };
        self.sink.push(ts, clock, data);
    }

    // ----- TrackEvent --------------------------------------------------------------------

    pub(super) fn ftrace_bundle(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        bundle: protos::FtraceEventBundle,
        packet: &[u8],
    ) {
        // The bundle's events are the input events, not the packet.
        self.sink.forget_input();
        // A bundle that does not say its cpu is dropped whole, counted; a cpu past the
        // reference's limit means the trace is corrupt, and the import fails.
        let Some(cpu) = bundle.cpu else {
            self.sink.stat("ftrace_bundle_tokenizer_errors", machine, 1);
            let compact = bundle
                .compact_sched
                .as_ref()
                .map_or(0, |c| c.switch_timestamp.len() + c.waking_timestamp.len());
            self.sink
                .inputs_dropped((bundle.event.len() + compact) as u64);
            return;
        };
        if cpu >= MAX_CPUS {
            self.fatal.get_or_insert(ParseError::invalid(format!(
                "CPU {cpu} is greater than maximum allowed of {MAX_CPUS}. This is likely \
                 because of trace corruption"
            )));
            return;
        }
        // The clock the kernel stamped the bundle with: boot time unless it says otherwise.
        // The `global` clock (old kernels) is a clock of the sequence, related to boot time
        // by the snapshots bundles carry; `local` and unknown clocks cannot be related to
        // anything, and the reference refuses the trace.
        let clock_id = match bundle.ftrace_clock.unwrap_or(0) {
            0 => clocks::BOOTTIME,
            2 => FTRACE_GLOBAL_CLOCK,
            4 => clocks::MONOTONIC_RAW,
            3 => {
                self.fatal.get_or_insert(ParseError::invalid(
                    "Unable to parse ftrace packets with local clock",
                ));
                return;
            }
            _ => {
                self.fatal.get_or_insert(ParseError::invalid(
                    "Unable to parse ftrace packets with unknown clock",
                ));
                return;
            }
        };
        if let Some(ftrace_ts) = bundle.ftrace_timestamp {
            self.ftrace_clock_snapshot(machine, seq_id, ftrace_ts, bundle.boot_timestamp);
        }
        let mut raw_events = ftrace_raw::bundle_events(packet);
        // The kernel lost events of this cpu before the bundle (its ring buffer was full).
        if bundle.lost_events() {
            let idx = Some(i64::from(cpu));
            self.sink
                .set_stat("ftrace_cpu_has_data_loss", idx, machine, 1);
        }
        // Raw rows need each event's bytes; where the packet's bytes do not line up with
        // its decoded events (repeated bundles, groups), the bundle gets none, counted.
        if raw_events.len() != bundle.event.len() {
            raw_events.clear();
            let missing = bundle
                .event
                .iter()
                .filter(|e| !matches!(e.event, Some(ftrace_event::Event::SchedSwitch(_))))
                .count() as i64;
            self.sink.stat("ftrace_event_unknown", machine, missing);
        }
        let clock = self.clock(machine, seq_id, clock_id);
        // Trace Processor sorts each cpu's ftrace events in a queue of its own.
        let cpu_range = if self.ctx.machine == machine {
            0
        } else {
            machine + 1
        };
        let queue = 1 + cpu_range.saturating_mul(4096).saturating_add(cpu.min(4095));
        self.sink.set_queue(queue);
        let first_ord = self.sink.events.len() as u32;
        let drop_before = self.losses.ftrace_drop_before(machine);
        for (i, ev) in bundle.event.into_iter().enumerate() {
            self.sink.next_input();
            // Events from before tracing started are the kernel buffer's leftovers.
            if drop_before.is_some_and(|start| (ev.timestamp.unwrap_or(0) as i64) < start) {
                self.sink
                    .stat("ftrace_packet_before_tracing_start", machine, 1);
                continue;
            }
            // An event with nothing but a timestamp and pid is dropped, as the reference
            // drops it, and counted.
            let raw = raw_events.get(i).copied();
            if ev.event.is_none() && raw.is_some_and(|r| ftrace_raw::event_payload(r).is_none()) {
                self.sink.stat("ftrace_missing_event_id", machine, 1);
                continue;
            }
            let ts = ev.timestamp.unwrap_or(0) as i64;
            let pid = i64::from(ev.pid.unwrap_or(0));
            // Every event names the thread it ran on, whether or not Sextant reads the
            // event itself (Trace Processor records them all in its raw table).
            let names_its_thread = matches!(
                ev.event,
                Some(
                    ftrace_event::Event::SchedSwitch(_)
                        | ftrace_event::Event::SchedWaking(_)
                        | ftrace_event::Event::Print(_)
                        | ftrace_event::Event::TaskNewtask(_)
                )
            );
            if !names_its_thread {
                let thread = ThreadRef {
                    machine,
                    tid: pid,
                    pid: None,
                };
                self.sink.push(ts, clock, EventData::Thread(thread));
            }
            let origin = FtraceOrigin {
                machine,
                seq_id,
                cpu,
                pid,
                common_flags: ev.common_flags,
            };
            // A kind Sextant does not read still gets its raw row.
            let Some(event) = ev.event else {
                if let Some(raw) = raw_events.get(i) {
                    self.raw_ftrace_event(origin, ts, clock, raw);
                }
                continue;
            };
            if let ftrace_event::Event::SchedSwitch(s) = &event {
                self.sched_switch(origin, ts, clock, s);
                continue;
            }
            // The raw row first: it names the thread the event ran on as it was before the
            // event (a `sched_process_free` of itself ends that thread).
            if let Some(raw) = raw_events.get(i) {
                self.raw_ftrace_event(origin, ts, clock, raw);
            }
            self.ftrace_event(origin, ts, clock, event);
        }
        self.sink.end_input();
        // A cpu's data is complete from where its first bundle says the previous one ended;
        // every cpu's from the latest of these (Trace Processor keeps it as metadata, and
        // events before it only make raw rows).
        let first_of_cpu = self.ftrace_cpus_seen.insert((machine, cpu));
        let start = bundle
            .previous_bundle_end_timestamp
            .or(bundle.last_read_event_timestamp);
        if let (true, Some(start)) = (first_of_cpu, start) {
            let start = start as i64;
            if self
                .latest_ftrace_start
                .get(&machine)
                .is_none_or(|&t| t < start)
            {
                self.latest_ftrace_start.insert(machine, start);
                self.sink.metadata(
                    "ftrace_latest_data_start_ns",
                    machine,
                    MetaValue::Int(start),
                );
            }
        }
        if let Some(compact) = bundle.compact_sched {
            self.compact_sched(machine, cpu, clock, &compact);
        }
        self.sink.set_queue(0);
        let end = self.sink.events.len() as u32;
        if end > first_ord {
            self.ftrace_ranges.push((machine, first_ord, end));
            if drop_before.is_none() {
                self.ftrace_unfiltered.push((machine, first_ord, end));
            }
        }
    }

    /// Ftrace events read before their machine's `tracing_started` service event (later in
    /// the file) but older than it are dropped too: the reference reads service events
    /// while tokenizing and drops ftrace events older than the start when parsing them,
    /// after the whole file is sorted, so where the service event sits does not matter.
    pub(super) fn drop_ftrace_before_tracing_start(&mut self) {
        let ranges = std::mem::take(&mut self.ftrace_unfiltered);
        let mut dropped_payload = None;
        let file = self.sink.current_file as usize;
        for (machine, first, end) in ranges {
            let Some(start) = self.losses.ftrace_drop_before(machine) else {
                continue;
            };
            let mut inputs = 0u64;
            for i in first..end {
                let Some(ev) = self.sink.events.get(i as usize).copied() else {
                    break;
                };
                if ev.ts >= start {
                    continue;
                }
                let (clock, _) = self.sink.payload(&ev);
                let payload = *dropped_payload.get_or_insert_with(|| {
                    self.sink.payloads.push((clock, EventData::Dropped));
                    (self.sink.payloads.len() - 1) as u32
                });
                self.sink.events[i as usize].payload = payload;
                // One ftrace event (its raw row, typed event and thread) per input.
                let word = self.sink.input_first.get(i as usize / 64).copied();
                if word.is_some_and(|w| w >> (i % 64) & 1 == 1) {
                    inputs += 1;
                }
            }
            if inputs > 0 {
                self.sink
                    .stat("ftrace_packet_before_tracing_start", machine, inputs as i64);
                if let Some(account) = self.sink.accounting.get_mut(file) {
                    account.imported = account.imported.saturating_sub(inputs);
                    account.dropped += inputs;
                }
            }
        }
    }

    /// Ftrace events from before every cpu's data is complete keep their raw rows (and
    /// threads) but nothing else, as Trace Processor's soft drop does.
    pub(super) fn crop_ftrace(&mut self) {
        let ranges = std::mem::take(&mut self.ftrace_ranges);
        if self.latest_ftrace_start.is_empty() {
            return;
        }
        let mut dropped = None;
        for (machine, first, end) in ranges {
            let Some(&start) = self.latest_ftrace_start.get(&machine) else {
                continue;
            };
            for i in first..end {
                let Some(ev) = self.sink.events.get(i as usize).copied() else {
                    break;
                };
                if ev.ts >= start {
                    continue;
                }
                let (clock, data) = self.sink.payload(&ev);
                if matches!(
                    data,
                    EventData::FtraceRaw(_)
                        | EventData::CompactSwitchRaw(_)
                        | EventData::Thread(_)
                        | EventData::Dropped
                ) {
                    continue;
                }
                let payload = *dropped.get_or_insert_with(|| {
                    self.sink.payloads.push((clock, EventData::Dropped));
                    (self.sink.payloads.len() - 1) as u32
                });
                self.sink.events[i as usize].payload = payload;
            }
        }
    }

    pub(super) fn ftrace_event(
        &mut self,
        origin: FtraceOrigin,
        ts: i64,
        clock: ClockRef,
        event: ftrace_event::Event,
    ) {
        let FtraceOrigin {
            machine, cpu, pid, ..
        } = origin;
        use ftrace_event::Event as E;
        match event {
            // `ftrace_bundle` reads it (with its raw row) through `sched_switch`.
            E::SchedSwitch(_) => {}
            E::SchedWaking(w) => {
                let data = EventData::SchedWaking(SchedWaking {
                    machine,
                    cpu,
                    tid: i64::from(w.pid.unwrap_or(0)),
                    comm: self.sink.intern_opt(w.comm.as_deref()),
                    waker_tid: Some(pid),
                    irq_context: origin.common_flags.map(|f| f & IRQ_FLAGS != 0),
                });
                self.sink.push(ts, clock, data);
            }
            E::SchedBlockedReason(b) => {
                let function = b
                    .caller
                    .and_then(|iid| {
                        let seq = self.sequences.get(&(machine, origin.seq_id))?;
                        seq.kernel_symbols.get(&iid).copied()
                    })
                    .unwrap_or(NULL_STR);
                let data = EventData::BlockedReason {
                    thread: ThreadRef {
                        machine,
                        tid: i64::from(b.pid.unwrap_or(0)),
                        pid: None,
                    },
                    io_wait: b.io_wait.map(|v| v != 0),
                    function,
                };
                self.sink.push(ts, clock, data);
            }
            E::SysEnter(e) => {
                // Syscalls take six arguments: their keys are interned by address.
                const KEYS: [&str; 6] = [
                    "args[0]", "args[1]", "args[2]", "args[3]", "args[4]", "args[5]",
                ];
                let flat_key = self.sink.intern_static("args");
                let args: Vec<Arg> = e
                    .args
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| Arg {
                        flat_key,
                        key: match KEYS.get(i) {
                            Some(key) => self.sink.intern_static(key),
                            None => self.sink.intern(&format!("args[{i}]")),
                        },
                        value: ArgValue::Uint(v),
                    })
                    .collect();
                let data = EventData::Syscall {
                    track: self.sink.thread_track(machine, pid, None),
                    machine,
                    number: e.id.unwrap_or(0),
                    args: self.sink.args.push(&args),
                    enter: true,
                };
                self.sink.push(ts, clock, data);
            }
            E::SysExit(e) => {
                let ret = self
                    .sink
                    .static_arg("ret", ArgValue::Int(e.ret.unwrap_or(0)));
                let data = EventData::Syscall {
                    track: self.sink.thread_track(machine, pid, None),
                    machine,
                    number: e.id.unwrap_or(0),
                    args: self.sink.args.push(&[ret]),
                    enter: false,
                };
                self.sink.push(ts, clock, data);
            }
            E::Print(p) => {
                if let Some(buf) = p.buf {
                    atrace::parse_marker(self.sink, clock, ts, machine, pid, buf.as_bytes());
                }
            }
            // Drivers' markers carry the atrace fields separately: rebuild the marker text.
            E::TracingMarkWrite(m) => {
                let mut marker = KernelMarker::new(0, m.pid, m.trace_name, None);
                marker.trace_begin = m.trace_begin == Some(1);
                self.kernel_marker((machine, ts, clock, pid), marker);
            }
            E::SdeTracingMarkWrite(m) => {
                // Neither a type nor a begin flag: nothing to read.
                if m.trace_type.is_none() && m.trace_begin.is_none() {
                    self.sink.stat("systrace_parse_failure", machine, 1);
                    return;
                }
                let ty = m.trace_type.unwrap_or(0) as u8;
                let mut marker = KernelMarker::new(ty, m.pid, m.trace_name, m.value.map(i64::from));
                marker.trace_begin = m.trace_begin.unwrap_or(0) != 0;
                self.kernel_marker((machine, ts, clock, pid), marker);
            }
            // DPU, G2D and Mali markers must carry a type.
            E::DpuTracingMarkWrite(m) => {
                let ty = m.r#type.unwrap_or(0) as u8;
                if ty == 0 {
                    self.sink.stat("systrace_parse_failure", machine, 1);
                    return;
                }
                let marker =
                    KernelMarker::new(ty, m.pid, m.name.or(m.trace_name), m.value.map(i64::from));
                self.kernel_marker((machine, ts, clock, pid), marker);
            }
            E::G2dTracingMarkWrite(m) => {
                let ty = m.r#type.unwrap_or(0) as u8;
                if ty == 0 {
                    self.sink.stat("systrace_parse_failure", machine, 1);
                    return;
                }
                let marker = KernelMarker::new(ty, m.pid, m.name, m.value.map(i64::from));
                self.kernel_marker((machine, ts, clock, pid), marker);
            }
            E::MaliTracingMarkWrite(m) => {
                let ty = m.r#type.unwrap_or(0) as u8;
                if ty == 0 {
                    self.sink.stat("systrace_parse_failure", machine, 1);
                    return;
                }
                let marker = KernelMarker::new(ty, m.pid, m.name, m.value.map(i64::from));
                self.kernel_marker((machine, ts, clock, pid), marker);
            }
            // Camera (LWIS) markers name the slice or counter by the driver function.
            E::LwisTracingMarkWrite(m) => {
                let ty = m.r#type.unwrap_or(0) as u8;
                if ty == 0 {
                    self.sink.stat("systrace_parse_failure", machine, 1);
                    return;
                }
                let marker = KernelMarker::new(ty, m.pid, m.func_name, m.value);
                self.kernel_marker((machine, ts, clock, pid), marker);
            }
            // Samsung markers must carry a type (a `trace_begin` alone is not read).
            E::SamsungTracingMarkWrite(m) => {
                let Some(ty) = m.trace_type else {
                    self.sink.stat("systrace_parse_failure", machine, 1);
                    return;
                };
                let value = m.value.map(i64::from);
                let marker = KernelMarker::new(ty as u8, m.pid, m.trace_name, value);
                self.kernel_marker((machine, ts, clock, pid), marker);
            }
            // Display panel markers: the DPU marker's fields.
            E::PanelWriteGeneric(m) => {
                let ty = m.r#type.unwrap_or(0) as u8;
                if ty == 0 {
                    self.sink.stat("systrace_parse_failure", machine, 1);
                    return;
                }
                let marker = KernelMarker::new(ty, m.pid, m.name, m.value.map(i64::from));
                self.kernel_marker((machine, ts, clock, pid), marker);
            }
            E::TaskNewtask(t) => {
                let tid = i64::from(t.pid.unwrap_or(0));
                let name = self.sink.intern_opt(t.comm.as_deref());
                let data = EventData::ThreadStart(Box::new(ThreadStart {
                    thread: ThreadRef {
                        machine,
                        tid,
                        pid: None,
                    },
                    creator_tid: pid,
                    name,
                    new_process: t.clone_flags.unwrap_or(0) & CLONE_THREAD == 0,
                }));
                self.sink.push(ts, clock, data);
            }
            E::TaskRename(t) => {
                let tid = i64::from(t.pid.unwrap_or(0));
                let name = self.sink.intern_opt(t.newcomm.as_deref().map(lossy));
                self.sink.push(
                    ts,
                    clock,
                    EventData::ThreadRename {
                        thread: ThreadRef {
                            machine,
                            tid,
                            pid: None,
                        },
                        name,
                    },
                );
            }
            // Interrupt handlers run as slices on their cpu's track.
            E::IrqHandlerEntry(irq) => {
                let name = format!("IRQ ({})", irq.name.as_deref().unwrap_or(""));
                let args = vec![("irq", ArgValue::Int(i64::from(irq.irq.unwrap_or(0))))];
                self.cpu_slice(origin, ts, clock, Interrupt::Hard, Some(&name), &args);
            }
            E::IrqHandlerExit(irq) => {
                let ret = if irq.ret.unwrap_or(0) == 1 {
                    "handled"
                } else {
                    "unhandled"
                };
                let ret = self.sink.intern(ret);
                let args = vec![("ret", ArgValue::Str(ret))];
                self.cpu_slice(origin, ts, clock, Interrupt::Hard, None, &args);
            }
            E::SoftirqEntry(s) => {
                let vec = s.vec.unwrap_or(0);
                // A vector the kernel does not have begins nothing (as the reference,
                // which has no name for it); its raw row stays.
                if let Some(name) = SOFTIRQ_NAMES.get(vec as usize) {
                    let args = vec![("vec", ArgValue::Int(i64::from(vec)))];
                    self.cpu_slice(origin, ts, clock, Interrupt::Soft, Some(name), &args);
                }
            }
            E::SoftirqExit(_) => {
                self.cpu_slice(origin, ts, clock, Interrupt::Soft, None, &[]);
            }
            E::OomScoreAdjUpdate(o) => {
                let thread = ThreadRef {
                    machine,
                    tid: i64::from(o.pid.unwrap_or(0)),
                    pid: None,
                };
                // As the reference reads it: an int16 (older tracers mis-encoded negative
                // varints, b/120618641).
                let value = f64::from(o.oom_score_adj.unwrap_or(0) as i16);
                self.thread_process_counter(
                    thread,
                    "oom_score_adj",
                    "oom_score_adj",
                    ts,
                    clock,
                    value,
                );
            }
            // The kernel's OOM killer chose this task.
            E::MarkVictim(m) => {
                let thread = ThreadRef {
                    machine,
                    tid: i64::from(m.pid.unwrap_or(0)),
                    pid: None,
                };
                let slice = SliceEvent {
                    track: self.sink.track(TrackKey::ThreadSlices(thread)),
                    category: NULL_STR,
                    name: self.sink.intern("mem.oom_kill"),
                    args: NO_ARGS,
                    thread_ts: NO_TS,
                    flows: NO_FLOWS,
                };
                let data = EventData::Complete {
                    slice,
                    dur: 0,
                    thread_dur: NO_TS,
                };
                self.sink.push(ts, clock, data);
            }
            E::SchedProcessFree(f) => {
                let tid = i64::from(f.pid.unwrap_or(0));
                self.sink
                    .push(ts, clock, EventData::ThreadEnd { machine, tid });
            }
            _ => {}
        }
    }

    pub(super) fn compact_sched(
        &mut self,
        machine: MachineId,
        cpu: u32,
        clock: ClockRef,
        c: &protos::ftrace_event_bundle::CompactSched,
    ) {
        let comms: Vec<StrId> = c.intern_table.iter().map(|s| self.sink.intern(s)).collect();
        let drop_before = self.losses.ftrace_drop_before(machine);
        let n = c.switch_timestamp.len();
        if [
            c.switch_prev_state.len(),
            c.switch_next_pid.len(),
            c.switch_next_prio.len(),
            c.switch_next_comm_index.len(),
        ]
        .iter()
        .any(|&l| l != n)
        {
            self.sink.stat("compact_sched_has_parse_errors", machine, 1);
            let entries = n + c.waking_timestamp.len();
            self.sink.inputs_dropped(entries as u64);
            return;
        }
        // Who runs on the cpu from each switch on (in the bundle's order, which is the
        // cpu's time order), so each waking can be given the task running at its time.
        let before = self.compact.get(&(machine, cpu)).map(|s| s.next_pid);
        let mut running: Vec<(i64, i64)> = Vec::with_capacity(n);
        let mut ts = 0i64;
        for i in 0..n {
            self.sink.next_input();
            ts = ts.wrapping_add(c.switch_timestamp[i] as i64);
            let next_pid = i64::from(c.switch_next_pid[i]);
            let next_comm = comms
                .get(c.switch_next_comm_index[i] as usize)
                .copied()
                .unwrap_or(NULL_STR);
            if drop_before.is_some_and(|start| ts < start) {
                self.sink
                    .stat("ftrace_packet_before_tracing_start", machine, 1);
                continue;
            }
            let prev = self.compact.insert(
                (machine, cpu),
                CompactCpu {
                    next_pid,
                    next_prio: c.switch_next_prio[i],
                },
            );
            running.push((ts, next_pid));
            let Some(prev) = prev else {
                // The first switch of a cpu only tells who runs next (and names it).
                self.sink.stat("compact_sched_switch_skipped", machine, 1);
                let thread = ThreadRef {
                    machine,
                    tid: next_pid,
                    pid: None,
                };
                let data = EventData::ThreadName {
                    thread,
                    name: next_comm,
                    priority: NamePriority::Ftrace,
                };
                self.sink.push(ts, clock, data);
                continue;
            };
            let version = ftrace_events::kernel_version(self.sink, machine);
            let prev_state = match decode_task_state_for(c.switch_prev_state[i], version) {
                Some(st) => self.sink.intern(&st),
                None => NULL_STR,
            };
            // No prev comm in the compact encoding: the task switched out is not renamed.
            let data = EventData::SchedSwitch(SchedSwitch {
                machine,
                cpu,
                prev_tid: prev.next_pid,
                prev_comm: NULL_STR,
                prev_state,
                next_tid: next_pid,
                next_comm,
                next_prio: c.switch_next_prio[i],
            });
            self.sink.push(ts, clock, data);
            let raw = CompactSwitchRaw {
                machine,
                cpu,
                prev_pid: prev.next_pid,
                prev_state: c.switch_prev_state[i],
                next_pid,
                next_comm,
                prev_prio: prev.next_prio,
                next_prio: c.switch_next_prio[i],
            };
            self.sink.push(ts, clock, EventData::CompactSwitchRaw(raw));
        }
        self.sink.end_input();
        let n = c.waking_timestamp.len();
        let mut ts = 0i64;
        for i in 0..n {
            self.sink.next_input();
            ts = ts.wrapping_add(c.waking_timestamp[i] as i64);
            let Some(&tid) = c.waking_pid.get(i) else {
                // Arrays of different lengths: the rest cannot be read.
                self.sink.stat("compact_sched_has_parse_errors", machine, 1);
                self.sink.end_input();
                self.sink.inputs_dropped((n - i - 1) as u64);
                break;
            };
            let comm = c
                .waking_comm_index
                .get(i)
                .and_then(|&j| comms.get(j as usize).copied())
                .unwrap_or(NULL_STR);
            if drop_before.is_some_and(|start| ts < start) {
                self.sink
                    .stat("ftrace_packet_before_tracing_start", machine, 1);
                continue;
            }
            // The waker is the task running at the waking's time: the last switch at or
            // before it (a switch at the same time comes first, as it was read first).
            let at = running.partition_point(|&(t, _)| t <= ts);
            let waker = at.checked_sub(1).map(|j| running[j].1).or(before);
            let irq_context = c.waking_common_flags.get(i).map(|f| f & IRQ_FLAGS != 0);
            if waker.is_none() {
                // Before any switch on the cpu: nobody is known to run there.
                self.sink.stat("compact_sched_waking_skipped", machine, 1);
                continue;
            }
            // Unlike a full sched_waking, the compact one never renames the wakee
            // (Trace Processor's PushSchedWakingCompact only looks the thread up); its
            // comm is kept in the raw row.
            let data = EventData::SchedWaking(SchedWaking {
                machine,
                cpu,
                tid: i64::from(tid),
                comm: NULL_STR,
                waker_tid: waker,
                irq_context,
            });
            self.sink.push(ts, clock, data);
            // The raw row: what a sched_waking event would have carried, on the waker.
            let args = [
                self.sink.static_arg("comm", ArgValue::Str(comm)),
                self.sink.static_arg("pid", ArgValue::Int(i64::from(tid))),
                self.sink.static_arg(
                    "prio",
                    ArgValue::Int(i64::from(c.waking_prio.get(i).copied().unwrap_or(0))),
                ),
                self.sink.static_arg(
                    "target_cpu",
                    ArgValue::Int(i64::from(c.waking_target_cpu.get(i).copied().unwrap_or(0))),
                ),
            ];
            let raw = FtraceRaw {
                machine,
                cpu,
                tid: waker.unwrap_or(0),
                name: self.sink.intern("sched_waking"),
                args: self.sink.args.push_shared(&args),
                common_flags: c.waking_common_flags.get(i).copied(),
            };
            self.sink.push(ts, clock, EventData::FtraceRaw(raw));
        }
        self.sink.end_input();
    }

    /// A full `sched_switch`: the scheduler's event and its raw row.
    pub(super) fn sched_switch(
        &mut self,
        origin: FtraceOrigin,
        ts: i64,
        clock: ClockRef,
        s: &protos::SchedSwitchFtraceEvent,
    ) {
        let FtraceOrigin { machine, cpu, .. } = origin;
        let version = ftrace_events::kernel_version(self.sink, machine);
        let prev_state = match decode_task_state_for(s.prev_state.unwrap_or(0), version) {
            Some(st) => self.sink.intern(&st),
            None => {
                self.sink.stat("task_state_invalid", machine, 1);
                NULL_STR
            }
        };
        let raw = RawSwitch {
            prev_comm: self.sink.intern_opt(s.prev_comm.as_deref()),
            prev_pid: i64::from(s.prev_pid.unwrap_or(0)),
            prev_prio: s.prev_prio.unwrap_or(0),
            prev_state: s.prev_state.unwrap_or(0),
            next_comm: self.sink.intern_opt(s.next_comm.as_deref()),
            next_pid: i64::from(s.next_pid.unwrap_or(0)),
            next_prio: s.next_prio.unwrap_or(0),
        };
        let data = EventData::SchedSwitch(SchedSwitch {
            machine,
            cpu,
            prev_tid: raw.prev_pid,
            prev_comm: raw.prev_comm,
            prev_state,
            next_tid: raw.next_pid,
            next_comm: raw.next_comm,
            next_prio: raw.next_prio,
        });
        self.sink.push(ts, clock, data);
        // Compact switches that follow on this cpu continue from this one.
        self.compact.insert(
            (machine, cpu),
            CompactCpu {
                next_pid: raw.next_pid,
                next_prio: raw.next_prio,
            },
        );
        self.raw_sched_switch(machine, cpu, (ts, clock), raw, origin.common_flags);
    }

    /// A `sched_switch`'s raw row: all seven fields, always, in the proto's order (as
    /// Trace Processor writes them, for full and compact switches alike).
    pub(super) fn raw_sched_switch(
        &mut self,
        machine: MachineId,
        cpu: u32,
        (ts, clock): (i64, ClockRef),
        s: RawSwitch,
        common_flags: Option<u32>,
    ) {
        let args = self.sink.sched_switch_args(
            (s.prev_comm, s.prev_pid, s.prev_prio, s.prev_state),
            (s.next_comm, s.next_pid, s.next_prio),
        );
        let raw = FtraceRaw {
            machine,
            cpu,
            tid: s.prev_pid,
            name: self.sink.intern("sched_switch"),
            args: self.sink.args.push_shared(&args),
            common_flags,
        };
        self.sink.push(ts, clock, EventData::FtraceRaw(raw));
    }

    /// Any other event's raw row, its fields read through the schema.
    pub(super) fn raw_ftrace_event(
        &mut self,
        origin: FtraceOrigin,
        ts: i64,
        clock: ClockRef,
        event: &[u8],
    ) {
        let Some((number, payload)) = ftrace_raw::event_payload(event) else {
            return;
        };
        let symbols = self
            .sequences
            .get(&(origin.machine, origin.seq_id))
            .map(|seq| &seq.kernel_symbols);
        let kernel_symbol = |iid: u64| symbols.and_then(|s| s.get(&iid).copied());
        let (packet_start, packet_offset) = self.packet_at;
        let address = |b: &[u8]| {
            let inside = (b.as_ptr() as usize).wrapping_sub(packet_start) as u64;
            wire_repair::BOGUS_BASE + packet_offset + inside
        };
        let lookups = ftrace_raw::Lookups {
            kernel_symbol: &kernel_symbol,
            address: &address,
        };
        // One buffer for every event's args, not an allocation each.
        let mut args = std::mem::take(&mut self.raw_args);
        args.clear();
        let name = ftrace_raw::read_event(self.sink, number, payload, &lookups, &mut args);
        let set = self.sink.args.push_shared(&args);
        let name = match name {
            Some(name) => name,
            // A kind Perfetto's numbering leaves unnamed: a row without name or args.
            None if ftrace_raw::in_event_range(number) => NULL_STR,
            None => {
                self.sink.stat("ftrace_event_unknown", origin.machine, 1);
                self.raw_args = args;
                return;
            }
        };
        let raw = FtraceRaw {
            machine: origin.machine,
            cpu: origin.cpu,
            tid: origin.pid,
            name,
            args: set,
            common_flags: origin.common_flags,
        };
        self.sink.push(ts, clock, EventData::FtraceRaw(raw));
        // The one ftrace handler reads the same fields the raw row keeps.
        if let Some(kind) = ftrace_raw::event_name(number) {
            let o = ftrace_events::Origin {
                machine: origin.machine,
                cpu: origin.cpu,
                pid: origin.pid,
                ts,
                clock,
                text: false,
            };
            let fields = ftrace_events::Fields::Proto(&args);
            ftrace_events::handle(self.sink, &o, kind, &fields, &kernel_symbol);
        }
        self.raw_args = args;
    }
}
