//! TrackEvent: process/thread/track descriptors, slices, instants and counters on their
//! tracks, legacy (JSON-style) phases and async ids, flows. Hands on slice, counter, track
//! and flow events to the sink; debug annotations become args in [`super::debug_annotations`].

use super::*;

impl Parser<'_> {
    pub(super) fn process_descriptor(
        &mut self,
        machine: MachineId,
        pd: &protos::ProcessDescriptor,
    ) -> ProcessInfo {
        // Only `process_name` names the process: Trace Processor reads neither `cmdline`
        // nor `legacy_sort_index` of a ProcessDescriptor (behaviour-chrome-typed-args.md §7).
        let name = pd
            .process_name
            .as_deref()
            .map_or(NULL_STR, |n| self.sink.intern_nonempty(n));
        let cmdline = NULL_STR;
        ProcessInfo {
            process: ProcessRef {
                machine,
                pid: i64::from(pd.pid.unwrap_or(0)),
            },
            parent_pid: None,
            name,
            cmdline,
            uid: None,
            start_ts: pd.start_timestamp_ns,
            start_probe: None,
            from_system: false,
        }
    }

    /// `legacy_event.passthrough_utid`: the thread a legacy event came from, on a slice of
    /// a track that is not that thread's.
    fn passthrough_utid_arg(&mut self, t: ThreadRef) -> Arg {
        let thread = self.sink.thread_refs.intern(t);
        self.sink.static_arg(
            "legacy_event.passthrough_utid",
            ArgValue::PassthroughUtid(thread),
        )
    }

    /// A process descriptor was emitted (for `experimental_missing_chrome_processes`).
    pub(super) fn process_described(&mut self, ts: i64, clock: ClockRef, process: ProcessRef) {
        self.sink.push(
            ts,
            clock,
            EventData::ChromeProcessSeen {
                process,
                descriptor: true,
            },
        );
    }

    pub(super) fn track_descriptor(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        d: protos::TrackDescriptor,
    ) {
        // What Trace Processor's tokenizer refuses outright: the descriptor says nothing
        // (no track, thread, process or name), only the stat counts it.
        let Some(uuid) = d.uuid else {
            self.sink.stat("track_descriptor_missing_uuid", machine, 1);
            return;
        };
        if d.thread
            .as_ref()
            .is_some_and(|t| t.pid.is_none() || t.tid.is_none())
        {
            let name = "track_descriptor_thread_missing_pid_tid";
            self.sink.stat(name, machine, 1);
            return;
        }
        if d.thread.is_none() && d.process.as_ref().is_some_and(|p| p.pid.is_none()) {
            let name = "track_descriptor_process_missing_pid";
            self.sink.stat(name, machine, 1);
            return;
        }
        // A child ordering outside the enum orders nothing (no `child_ordering` arg).
        if d.child_ordering.is_some_and(|o| !(0..=3).contains(&o)) {
            let name = "track_descriptor_invalid_child_ordering";
            self.sink.stat(name, machine, 1);
        }
        let name = match &d.static_or_dynamic_name {
            Some(protos::track_descriptor::StaticOrDynamicName::Name(n))
            | Some(protos::track_descriptor::StaticOrDynamicName::StaticName(n))
            | Some(protos::track_descriptor::StaticOrDynamicName::AtraceName(n)) => {
                self.sink.intern_nonempty(n)
            }
            None => NULL_STR,
        };
        let has_first_packet_on_sequence = self
            .sequences
            .get(&(machine, seq_id))
            .is_some_and(|s| s.first_packet_seen);
        if uuid == 0 {
            self.sink.explicit_process_ordering |= d.process_ordering.unwrap_or(0) == 1;
            self.sink.explicit_thread_ordering |= d.thread_ordering.unwrap_or(0) == 1;
        }
        if let Some(td) = &d.thread {
            // Whichever descriptor a sequence emits, it writes for that thread; one with a
            // pid and tid on a valid sequence also sets the delta-timestamp bases (Trace
            // Processor's tokenizer calls SetThreadDescriptor for it too).
            let thread = self.chrome_thread(machine, td, d.chrome_thread.as_ref());
            if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
                seq.thread = Some(thread);
                if seq.valid && td.pid.is_some() && td.tid.is_some() {
                    seq.set_thread_references(td);
                }
            }
        }
        // The default track (uuid 0) cannot have a parent: its reservation is ignored (what
        // the thread descriptor said of the sequence above still holds).
        if uuid == 0 && d.parent_uuid.unwrap_or(0) != 0 {
            let name = "track_descriptor_default_track_with_parent";
            self.sink.stat(name, machine, 1);
            return;
        }
        // A re-description must be of the same track: same parent, thread or process ids and
        // kind; else it is ignored and counted.
        let ids = match (&d.thread, &d.process) {
            (Some(td), _) => {
                let t = self.chrome_thread(machine, td, d.chrome_thread.as_ref());
                (1, t.pid, Some(t.tid))
            }
            (None, Some(pd)) => (2, Some(i64::from(pd.pid.unwrap_or(0))), None),
            (None, None) => (0, None, None),
        };
        if let Some(existing) = self.sink.descriptors.get(&(machine, uuid)) {
            let existing_ids = match (existing.thread, existing.process) {
                (Some(t), _) => (1, t.pid, Some(t.tid)),
                (None, Some(p)) => (2, Some(p.pid), None),
                (None, None) => (0, None, None),
            };
            if existing.parent_uuid.unwrap_or(0) != d.parent_uuid.unwrap_or(0)
                || existing_ids != ids
                || existing.counter.is_some() != d.counter.is_some()
            {
                self.sink
                    .stat("track_descriptor_conflicting_reservation", machine, 1);
                return;
            }
        }
        if let Some(existing) = self.sink.descriptors.get_mut(&(machine, uuid)) {
            // A re-description renames only tracks that do not merge by name (the latest
            // name wins); merged tracks keep their first non-NULL name.
            let merge_none = d.sibling_merge_behavior.unwrap_or(0) == 2;
            if name != NULL_STR && (merge_none || existing.name == NULL_STR) {
                existing.name = name;
            }
            let (thread, process) = (existing.thread, existing.process);
            // Every emission of a process descriptor counts, repeated ones too.
            if let Some(pd) = &d.process {
                let described = ProcessRef {
                    machine,
                    pid: i64::from(pd.pid.unwrap_or(0)),
                };
                self.process_described(ts, clock, described);
            }
            self.redescribe(machine, (ts, clock), &d, thread, process);
            return;
        }
        let mut desc = Descriptor {
            uuid,
            parent_uuid: d.parent_uuid,
            name,
            disallow_merging_with_system_tracks: d.disallow_merging_with_system_tracks(),
            description: self.sink.intern_opt(d.description.as_deref()),
            child_ordering: d.child_ordering.unwrap_or(0),
            sibling_order_rank: d.sibling_order_rank,
            has_first_packet_on_sequence,
            is_state: d.state.is_some(),
            sibling_merge_behavior: d.sibling_merge_behavior.unwrap_or(0),
            sibling_merge_key: match &d.sibling_merge_key_field {
                Some(protos::track_descriptor::SiblingMergeKeyField::SiblingMergeKey(k)) => {
                    Some(MergeKeyValue::Str(self.sink.intern(k)))
                }
                Some(protos::track_descriptor::SiblingMergeKeyField::SiblingMergeKeyInt(k)) => {
                    Some(MergeKeyValue::Int(*k))
                }
                None => None,
            },
            ..Default::default()
        };
        if let Some(pd) = &d.process {
            let mut info = self.process_descriptor(machine, pd);
            let process = info.process;
            desc.process = Some(process);
            if info.name == NULL_STR {
                info.name = name;
            }
            self.sink
                .push(ts, clock, EventData::ClaimProcess { process, uuid });
            self.sink
                .push(ts, clock, EventData::Process(Box::new(info)));
            self.process_described(ts, clock, process);
            self.chrome_process_facts(ts, clock, process, pd, d.chrome_process.as_ref());
            if let (Some(rank), true) = (d.sibling_order_rank, self.sink.explicit_process_ordering)
            {
                let key = self.sink.intern("process_sort_index_hint");
                let value = i64::from(rank);
                self.sink.push(
                    ts,
                    clock,
                    EventData::ProcessArg {
                        process,
                        key,
                        value,
                    },
                );
            }
        }
        if let Some(td) = &d.thread {
            let chrome = d.chrome_thread.as_ref();
            let thread = self.chrome_thread(machine, td, chrome);
            desc.thread = Some(thread);
            desc.process = None;
            if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
                seq.thread = Some(thread);
            }
            self.sink
                .push(ts, clock, EventData::ClaimThread { thread, uuid });
            self.chrome_thread_names(ts, clock, thread, td, chrome, name);
            if let (Some(rank), true) = (d.sibling_order_rank, self.sink.explicit_thread_ordering) {
                let key = self.sink.intern("thread_sort_index_hint");
                let value = i64::from(rank);
                self.sink
                    .push(ts, clock, EventData::ThreadArg { thread, key, value });
            }
        }
        if let Some(c) = &d.counter {
            desc.counter = Some(CounterInfo {
                builtin: c.r#type.unwrap_or(0),
                unit: c.unit.unwrap_or(0),
                unit_name: self.sink.intern_opt(c.unit_name.as_deref()),
                unit_multiplier: c.unit_multiplier.unwrap_or(0),
                is_incremental: c.is_incremental(),
                // Trace Processor keeps only the first category.
                category: c
                    .categories
                    .first()
                    .map_or(NULL_STR, |cat| self.sink.intern(cat)),
            });
        }
        self.sink.descriptors.insert((machine, uuid), desc);
    }

    /// A descriptor for a uuid already described: Trace Processor parses every descriptor
    /// packet (in timestamp order), so what it says of its thread or process (names, the
    /// Chrome labels and args) applies again, e.g. a thread name that only a later copy
    /// carries. One that describes another thread or process than the first is a
    /// conflicting reservation and says nothing.
    fn redescribe(
        &mut self,
        machine: MachineId,
        (ts, clock): (i64, ClockRef),
        d: &protos::TrackDescriptor,
        thread: Option<ThreadRef>,
        process: Option<ProcessRef>,
    ) {
        if let (Some(td), Some(thread)) = (&d.thread, thread) {
            let chrome = d.chrome_thread.as_ref();
            if self.chrome_thread(machine, td, chrome) == thread {
                self.chrome_thread_names(ts, clock, thread, td, chrome, NULL_STR);
            }
        } else if let (Some(pd), Some(process), None) = (&d.process, process, &d.thread) {
            let info = self.process_descriptor(machine, pd);
            if info.process == process {
                self.sink
                    .push(ts, clock, EventData::Process(Box::new(info)));
                self.chrome_process_facts(ts, clock, process, pd, d.chrome_process.as_ref());
            }
        }
    }

    /// A `TrackEventRangeOfInterest` packet: its `start_us` (field 1) becomes metadata
    /// `range_of_interest_start_us` and, when cropping, the time before which this file's
    /// TrackEvents are dropped (from the next TrackEvent on, as the reference's tokenizer
    /// reads the file). Without `start_us`: `track_event_range_of_interest_missing_start_us`.
    pub(super) fn range_of_interest(&mut self, machine: MachineId, bytes: &[u8]) {
        let Some(start_us) = typed_args::field_scalar(bytes, 1) else {
            let name = "track_event_range_of_interest_missing_start_us";
            self.sink.stat(name, machine, 1);
            return;
        };
        let start_us = start_us as i64;
        self.sink.metadata(
            "range_of_interest_start_us",
            machine,
            MetaValue::Int(start_us),
        );
        if super::crop_track_events() {
            self.range_of_interest_ns = Some(start_us.saturating_mul(1000));
        }
    }

    pub(super) fn track_event(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        packet_ts: Option<i64>,
        packet_clock: ClockRef,
        ev: &protos::TrackEvent,
        raw: &[u8],
    ) {
        let key = (machine, seq_id);
        let Some(seq) = self.sequences.get_mut(&key) else {
            return;
        };
        // Timestamp: delta or absolute µs on MONOTONIC, else the packet's.
        let (ts, clock) = match ev.timestamp {
            Some(track_event::Timestamp::TimestampDeltaUs(d)) => match seq.advance(d) {
                DeltaTs::Valid(ns) => (ns, None),
                DeltaTs::Invalid => {
                    self.sink.stat("track_event_invalid_timestamp", machine, 1);
                    return;
                }
                // As the reference names it (its track_event_tokenizer_errors stays 0).
                DeltaTs::NoBase => {
                    let name = "track_event_skipped_timestamp_delta_without_valid_state";
                    self.sink.stat(name, machine, 1);
                    return;
                }
            },
            Some(track_event::Timestamp::TimestampAbsoluteUs(v)) if v != 0 => {
                match v.checked_mul(1000) {
                    Some(ns) => (ns, None),
                    None => {
                        self.sink.stat("track_event_invalid_timestamp", machine, 1);
                        return;
                    }
                }
            }
            _ => match packet_ts {
                Some(t) => (t, Some(packet_clock)),
                None => {
                    self.sink.stat("track_event_missing_timestamp", machine, 1);
                    return;
                }
            },
        };
        let clock = match clock {
            Some(c) => c,
            None => {
                let domain = self.sink.shared_until_own_snapshot(ClockDomain {
                    machine,
                    clock_id: clocks::MONOTONIC,
                    sequence: KEEP_RAW_ON_FAILURE,
                    file: self.ctx.file,
                    shared: false,
                });
                self.sink.clock(domain)
            }
        };
        if ts < 0 {
            self.sink.stat("track_event_invalid_timestamp", machine, 1);
            return;
        }
        if self.range_of_interest_ns.is_some_and(|start| ts < start) {
            let name = "track_event_dropped_packets_outside_of_range_of_interest";
            self.sink.stat(name, machine, 1);
            return;
        }
        let Some(seq) = self.sequences.get_mut(&key) else {
            return;
        };
        // Delta thread times and instruction counts need the bases a ThreadDescriptor set
        // since the sequence last lost data, as delta timestamps do: without them Trace
        // Processor's tokenizer skips the event.
        let mut thread_ts = match ev.thread_time {
            Some(track_event::ThreadTime::ThreadTimeDeltaUs(d)) => match seq.ref_thread_time_us {
                Some(base) => {
                    let v = base.saturating_add(d);
                    seq.ref_thread_time_us = Some(v);
                    v.saturating_mul(1000)
                }
                None => {
                    let name = "track_event_skipped_thread_time_delta_without_valid_state";
                    self.sink.stat(name, machine, 1);
                    return;
                }
            },
            Some(track_event::ThreadTime::ThreadTimeAbsoluteUs(v)) => v.saturating_mul(1000),
            None => NO_TS,
        };
        if matches!(
            ev.thread_instruction_count,
            Some(track_event::ThreadInstructionCount::ThreadInstructionCountDelta(_))
        ) && seq.ref_thread_ic.is_none()
        {
            let name = "track_event_skipped_thread_instruction_delta_without_valid_state";
            self.sink.stat(name, machine, 1);
            return;
        }

        // Category: interned ids in order, then strings, joined by ','. Every interned id
        // that does not resolve counts once (Trace Processor counts per failed lookup).
        let mut missing_iids: i64 = 0;
        let category =
            if ev.category_iids.len() + ev.categories.len() == 1 && ev.categories.is_empty() {
                let iid = ev.category_iids[0];
                match seq.categories.get(&iid) {
                    Some(&c) => c,
                    None => {
                        missing_iids += 1;
                        self.sink.intern(&format!("unknown({iid})"))
                    }
                }
            } else if ev.category_iids.is_empty() && ev.categories.len() == 1 {
                self.sink.intern_nonempty(&ev.categories[0])
            } else if ev.category_iids.is_empty() && ev.categories.is_empty() {
                NULL_STR
            } else {
                let mut parts: Vec<String> = Vec::new();
                for iid in &ev.category_iids {
                    match seq
                        .categories
                        .get(iid)
                        .and_then(|&c| self.sink.strings.get(c))
                    {
                        Some(s) => parts.push(s.to_string()),
                        None => missing_iids += 1,
                    }
                }
                parts.extend(ev.categories.iter().cloned());
                self.sink.intern_nonempty(&parts.join(","))
            };
        // Name: the event's `name_iid`, else the legacy event's `name_iid` (Trace
        // Processor's ParseTrackEventName: a non-zero iid wins over `name` even when it
        // does not resolve), else `name`.
        let name_iid = match &ev.name_field {
            Some(track_event::NameField::NameIid(iid)) if *iid != 0 => *iid,
            _ => ev
                .legacy_event
                .as_ref()
                .and_then(|l| l.name_iid)
                .unwrap_or(0),
        };
        let name = if name_iid != 0 {
            match seq.names.get(&name_iid) {
                Some(&n) => n,
                None => {
                    missing_iids += 1;
                    NULL_STR
                }
            }
        } else {
            match &ev.name_field {
                Some(track_event::NameField::Name(n)) => self.sink.intern(n),
                _ => NULL_STR,
            }
        };
        if missing_iids > 0 {
            self.sink
                .stat("interned_data_tokenizer_errors", machine, missing_iids);
        }
        if let Some(size) = self.pending_track_event.take() {
            let entry = self.event_content.entry((category, name)).or_default();
            entry.0 += size;
            entry.1 += 1;
        }
        let Some(seq) = self.sequences.get(&key) else {
            return;
        };
        let uuid = ev.track_uuid.or(seq.default_track).unwrap_or(0);
        let seq_pid_tid = seq.thread.filter(|t| t.pid.is_some());
        // uuid 0 means the sequence's thread unless the event names track 0 explicitly and
        // has a type; legacy pid/tid overrides force a thread.
        // Alone, an override acts only where the event falls back to the sequence's
        // thread (track uuid 0), as in Trace Processor: a pid override means that
        // process's thread -1, a tid override that thread in the sequence's process.
        let overrides =
            ev.legacy_event
                .as_ref()
                .and_then(|l| match (l.pid_override, l.tid_override) {
                    (Some(pid), Some(tid)) => Some((i64::from(pid), i64::from(tid))),
                    (Some(pid), None) if uuid == 0 => Some((i64::from(pid), -1)),
                    (None, Some(tid)) if uuid == 0 => seq
                        .thread
                        .and_then(|t| t.pid)
                        .map(|pid| (pid, i64::from(tid))),
                    _ => None,
                });
        let seq_thread = match overrides {
            Some((pid, tid)) => Some(ThreadRef {
                machine,
                tid,
                pid: Some(pid),
            }),
            None if ev.track_uuid.is_none() || ev.r#type.is_none() => seq.thread,
            None => None,
        };
        let ev_type = ev.r#type.unwrap_or(0);
        let counter_uuid = ev.track_uuid.or(seq.default_track);

        // Extra counter values share the event's timestamp.
        let extra_int_uuids = if ev.extra_counter_track_uuids.is_empty() {
            seq.default_extra_counters.clone()
        } else {
            ev.extra_counter_track_uuids.clone()
        };
        let extra_double_uuids = if ev.extra_double_counter_track_uuids.is_empty() {
            seq.default_extra_double_counters.clone()
        } else {
            ev.extra_double_counter_track_uuids.clone()
        };

        // Counter values are checked and made absolute in Trace Processor's tokenizer order:
        // a TYPE_COUNTER event's own value first (a uuid, the event's or the defaults', even an
        // explicit 0; then a value; then a counter track), then the extra values one by one
        // (int ones, then double ones, sharing one index of at most 8). The first problem drops
        // the whole event with its one stat; running sums already advanced stay advanced.
        let mut own_value = None;
        if ev_type == track_event::Type::Counter as i32 {
            let Some(uuid) = counter_uuid else {
                self.sink
                    .stat("track_event_counter_missing_track_uuid", machine, 1);
                return;
            };
            let raw_value = match ev.counter_value_field {
                Some(track_event::CounterValueField::CounterValue(v)) => v as f64,
                Some(track_event::CounterValueField::DoubleCounterValue(v)) => v,
                None => {
                    self.sink
                        .stat("track_event_counter_missing_value", machine, 1);
                    return;
                }
            };
            let Some(value) = self.counter_value(machine, seq_id, uuid, raw_value) else {
                self.sink
                    .stat("track_event_counter_invalid_track_uuid", machine, 1);
                return;
            };
            own_value = Some((uuid, value));
        }
        let int_values = ev.extra_counter_values.iter().map(|v| *v as f64);
        let double_values = ev.extra_double_counter_values.iter().copied();
        let mut extras: Vec<(u64, f64)> = Vec::new();
        for (values, uuids) in [
            (int_values.collect::<Vec<f64>>(), &extra_int_uuids),
            (double_values.collect::<Vec<f64>>(), &extra_double_uuids),
        ] {
            if values.is_empty() {
                continue;
            }
            if uuids.is_empty() {
                self.sink
                    .stat("track_event_extra_counter_missing_track_uuids", machine, 1);
                return;
            }
            for (i, raw_value) in values.into_iter().enumerate() {
                let Some(&u) = uuids.get(i) else {
                    self.sink
                        .stat("track_event_extra_counter_track_uuid_mismatch", machine, 1);
                    return;
                };
                if extras.len() >= 8 {
                    self.sink
                        .stat("track_event_extra_counter_exceeds_max", machine, 1);
                    return;
                }
                let Some(value) = self.counter_value(machine, seq_id, u, raw_value) else {
                    self.sink
                        .stat("track_event_extra_counter_invalid_track", machine, 1);
                    return;
                };
                extras.push((u, value));
            }
        }
        // Falling back to a thread whose tid or pid is 0 (e.g. Chrome's `num_cpus` metadata
        // with tid override 0) is an error in Trace Processor: the event is dropped.
        if uuid == 0 && seq_thread.is_some_and(|t| t.tid == 0 || t.pid == Some(0)) {
            self.sink.stat("track_event_parser_errors", machine, 1);
            return;
        }
        // A described track whose parent chain loops never resolves in Trace Processor:
        // the event is dropped as a parser error (after its counter values were
        // converted, as the reference's tokenizer does that first).
        if uuid != 0
            && overrides.is_none()
            && crate::ir::descriptor_chain_loops(&self.sink.descriptors, machine, uuid)
        {
            let fault = crate::ir::descriptor_chain_fault(&self.sink.descriptors, machine, uuid);
            self.sink.stat(fault, machine, 1);
            self.sink.stat("track_event_parser_errors", machine, 1);
            return;
        }
        // Extra counters that are the thread's time or instruction count also give the
        // event its thread timestamp / instruction count (as Trace Processor reads them).
        let mut extra_instructions = None;
        for (u, value) in extras {
            self.push_descriptor_counter(machine, (ts, clock), u, value, NO_ARGS);
            match self
                .sink
                .descriptors
                .get(&(machine, u))
                .and_then(|d| d.counter)
            {
                Some(c) if c.builtin == 1 && thread_ts == NO_TS => thread_ts = value as i64,
                Some(c) if c.builtin == 2 => extra_instructions = Some(value as i64),
                _ => {}
            }
        }

        if let Some((uuid, value)) = own_value {
            // The counter row carries the event's args (its annotations, and the
            // sequence's thread as `legacy_event.passthrough_utid`).
            let thread = self
                .sink
                .descriptors
                .get(&(machine, uuid))
                .and_then(|d| d.thread);
            let cx = typed_args::EventContext {
                machine,
                seq_id,
                ts,
                clock,
                thread,
                legacy_source_id: None,
                passthrough: seq_pid_tid,
            };
            let args = self.track_event_args(ev, raw, cx);
            self.push_descriptor_counter(machine, (ts, clock), uuid, value, args);
            return;
        }

        // Thread time and instruction counts on the event also feed per-thread counters.
        let instructions = match ev.thread_instruction_count {
            Some(track_event::ThreadInstructionCount::ThreadInstructionCountAbsolute(v)) => Some(v),
            Some(track_event::ThreadInstructionCount::ThreadInstructionCountDelta(d)) => {
                self.sequences.get_mut(&key).and_then(|seq| {
                    let v = seq.ref_thread_ic?.saturating_add(d);
                    seq.ref_thread_ic = Some(v);
                    Some(v)
                })
            }
            None => None,
        };
        let from_fields = ev.thread_time.is_some() || instructions.is_some();
        let instructions = instructions.or(extra_instructions);
        if from_fields && (thread_ts != NO_TS || instructions.is_some()) {
            let thread = seq_thread.or_else(|| {
                self.sink
                    .descriptors
                    .get(&(machine, uuid))
                    .and_then(|d| d.thread)
            });
            if let Some(thread) = thread {
                let counter = |sink: &mut Sink, name: &str, kind: &'static str, v: i64| {
                    let name = sink.intern(name);
                    let track = sink.track(TrackKey::ThreadCounter { thread, name, kind });
                    sink.push(
                        ts,
                        clock,
                        EventData::Counter {
                            track,
                            value: Real(v as f64),
                            args: NO_ARGS,
                        },
                    );
                };
                if thread_ts != NO_TS {
                    counter(self.sink, "thread_time", "thread_time", thread_ts);
                }
                if let Some(v) = instructions {
                    counter(
                        self.sink,
                        "thread_instruction_count",
                        "thread_instructions",
                        v,
                    );
                }
            }
        }
        let track = self.sink.track(TrackKey::Descriptor {
            machine,
            uuid,
            seq_thread: if uuid == 0 || overrides.is_some() {
                seq_thread
            } else {
                None
            },
        });
        let legacy_source_id = ev.legacy_event.as_ref().and_then(|l| {
            use track_event::legacy_event::Id;
            let async_phase = matches!(
                l.phase.map(|p| p as u8),
                Some(b'b' | b'e' | b'n' | b'S' | b'T' | b'p' | b'F')
            );
            match l.id {
                Some(Id::UnscopedId(id) | Id::GlobalId(id) | Id::LocalId(id)) if async_phase => {
                    Some(id as i64)
                }
                _ => None,
            }
        });
        let event_thread = seq_thread.or_else(|| {
            self.sink
                .descriptors
                .get(&(machine, uuid))
                .and_then(|d| d.thread)
        });
        // A slice of a pid/tid sequence on a described track names the sequence's thread
        // (`legacy_event.passthrough_utid`; the model keeps it where the track is not that
        // thread's own).
        let slice_phase = match ev.r#type {
            Some(t) => [
                track_event::Type::SliceBegin as i32,
                track_event::Type::SliceEnd as i32,
                track_event::Type::Instant as i32,
            ]
            .contains(&t),
            None => ev
                .legacy_event
                .as_ref()
                .and_then(|l| l.phase)
                .is_some_and(|p| matches!(p as u8, b'B' | b'E' | b'X' | b'i' | b'I' | b'R')),
        };
        // A thread's own track never keeps it: skip it there at once rather than give every
        // slice of a thread track an arg set of its own for the model to drop (5 M-event
        // traces of thread slices cost 400 MB more that way).
        let thread_track = self
            .sink
            .descriptors
            .get(&(machine, uuid))
            .is_some_and(|d| d.thread.is_some());
        let passthrough = seq_pid_tid
            .filter(|_| uuid != 0 && overrides.is_none() && slice_phase && !thread_track);
        let cx = typed_args::EventContext {
            machine,
            seq_id,
            ts,
            clock,
            thread: event_thread,
            legacy_source_id,
            passthrough,
        };
        let args = self.track_event_args(ev, raw, cx);
        let mut flow_ops: Vec<FlowOp> = Vec::new();
        for id in ev.flow_ids.iter().chain(&ev.flow_ids_old) {
            flow_ops.push(FlowOp::Id(*id));
        }
        for id in ev
            .terminating_flow_ids
            .iter()
            .chain(&ev.terminating_flow_ids_old)
        {
            flow_ops.push(FlowOp::Terminating(*id));
        }
        if let Some(legacy) = &ev.legacy_event {
            if let Some(bind) = legacy.bind_id {
                match legacy.flow_direction.unwrap_or(0) {
                    1 => flow_ops.push(FlowOp::V2In(bind)),
                    2 => flow_ops.push(FlowOp::V2Out(bind)),
                    3 => flow_ops.push(FlowOp::V2Step(bind)),
                    _ => self.sink.stat("flow_without_direction", machine, 1),
                }
            }
        }
        let flows = self.sink.flows(&flow_ops);
        let slice = SliceEvent {
            track,
            category,
            name,
            args,
            thread_ts,
            flows,
        };
        let data = match ev_type {
            t if t == track_event::Type::State as i32 => {
                // A pid/tid override forces the legacy thread-track fallback, which
                // cannot hold states.
                let forced_thread = ev
                    .legacy_event
                    .as_ref()
                    .is_some_and(|l| l.pid_override.is_some() || l.tid_override.is_some());
                // Track 0 falls back to the sequence's thread; a described uuid (the event's
                // or the sequence default's) is the track itself.
                let on_state_track = (uuid != 0 || seq_thread.is_none())
                    && !forced_thread
                    && self
                        .sink
                        .descriptors
                        .get(&(machine, uuid))
                        .is_some_and(|d| d.is_state);
                if uuid == 0 && ev.track_uuid.is_none() && !forced_thread {
                    self.sink
                        .stat("track_event_state_missing_track_uuid", machine, 1);
                    return;
                }
                if !on_state_track {
                    self.sink.stat("track_event_parser_errors", machine, 1);
                    return;
                }
                EventData::State {
                    track: slice.track,
                    category: slice.category,
                    value: slice.name,
                    args: slice.args,
                }
            }
            t if t == track_event::Type::SliceBegin as i32 => EventData::Begin(slice),
            t if t == track_event::Type::SliceEnd as i32 => EventData::End(slice),
            t if t == track_event::Type::Instant as i32 => EventData::Complete {
                slice,
                dur: 0,
                thread_dur: NO_TS,
            },
            _ => match ev.legacy_event.as_ref().and_then(|l| l.phase) {
                Some(phase) => match self.legacy_phase(phase as u8, slice, ev, seq_thread) {
                    Some(d) => d,
                    None => return,
                },
                None => {
                    self.sink.stat("track_event_parser_errors", machine, 1);
                    return;
                }
            },
        };
        let is_end = matches!(data, EventData::End(_));
        let mut data = data;
        let slice_track = match &data {
            EventData::Begin(s) | EventData::End(s) | EventData::Complete { slice: s, .. } => {
                Some(s.track)
            }
            _ => None,
        };
        let is_slice = slice_track.is_some();
        // Thread times and instruction counts belong to slices on thread-scoped tracks (the
        // reference's thread phases B/E/i/X); an instant's thread_dur and delta are 0, a
        // legacy X's are its own. Elsewhere (async phases) the slice has none.
        let thread_scoped = slice_track.is_some_and(|t| self.thread_scoped(machine, t));
        let mut instructions = instructions;
        let mut delta = NO_TS;
        match &mut data {
            EventData::Begin(s) | EventData::End(s) if !thread_scoped => s.thread_ts = NO_TS,
            EventData::Complete {
                slice, thread_dur, ..
            } => {
                if !thread_scoped {
                    slice.thread_ts = NO_TS;
                    *thread_dur = NO_TS;
                } else {
                    let legacy = ev.legacy_event.as_ref();
                    if slice.thread_ts != NO_TS && *thread_dur == NO_TS {
                        *thread_dur = 0;
                    }
                    delta = legacy.and_then(|l| l.thread_instruction_delta).unwrap_or(0);
                }
            }
            _ => {}
        }
        if !thread_scoped {
            instructions = None;
        }
        // The thread instruction count goes to the slice the event begins or closes.
        if let (Some(count), Some(track)) = (instructions, slice_track) {
            self.sink.push(
                ts,
                clock,
                EventData::SliceInstructions {
                    track,
                    count,
                    delta,
                },
            );
        }
        self.sink.push(ts, clock, data);
        // The event's callstack goes to its slice (`__intrinsic_track_event_callstacks`).
        if let (true, Some(field)) = (is_slice, &ev.callstack_field) {
            use track_event::CallstackField;
            let callsite = match field {
                CallstackField::Callstack(inline) => self.inline_callstack(inline),
                CallstackField::CallstackIid(iid) => self.interned_callstack(machine, seq_id, *iid),
            };
            if let Some(callsite) = callsite {
                let cs = SliceCallstack {
                    callsite,
                    end: is_end,
                    weight: ev.callstack_weight.map(Real),
                };
                self.sink
                    .push(ts, clock, EventData::SliceCallstack(Box::new(cs)));
            }
        }
    }

    /// Whether a slice track is thread-scoped: the sequence's thread, or a descriptor that
    /// is a thread or has a thread ancestor.
    fn thread_scoped(&self, machine: MachineId, track: TrackRef) -> bool {
        let TrackKey::Descriptor {
            uuid, seq_thread, ..
        } = *self.sink.tracks.get(track)
        else {
            return false;
        };
        if seq_thread.is_some() {
            return true;
        }
        let mut next = Some(uuid);
        for _ in 0..64 {
            let Some(d) = next.and_then(|u| self.sink.descriptors.get(&(machine, u))) else {
                return false;
            };
            if d.thread.is_some() {
                return true;
            }
            if d.process.is_some() {
                return false;
            }
            next = d.parent_uuid;
        }
        false
    }

    /// Legacy (JSON-style) phases carried in `TrackEvent.legacy_event`.
    pub(super) fn legacy_phase(
        &mut self,
        phase: u8,
        mut slice: SliceEvent,
        ev: &protos::TrackEvent,
        seq_thread: Option<ThreadRef>,
    ) -> Option<EventData> {
        let legacy = ev.legacy_event.as_ref()?;
        // Thread phases need the event's thread (the sequence's, or a thread-scoped
        // track's): without one Trace Processor drops the event ("TrackEvent with phase B
        // without thread association").
        let machine = self.ctx.machine;
        let thread_phase = matches!(phase, b'B' | b'E' | b'X')
            || (matches!(phase, b'i' | b'I')
                && !matches!(legacy.instant_event_scope, Some(1) | Some(2)));
        if thread_phase && !self.thread_scoped(machine, slice.track) {
            self.sink.stat("track_event_parser_errors", machine, 1);
            return None;
        }
        match phase {
            b'B' => Some(EventData::Begin(slice)),
            b'E' => Some(EventData::End(slice)),
            b'X' => Some(EventData::Complete {
                slice,
                dur: legacy.duration_us.unwrap_or(0).saturating_mul(1000),
                thread_dur: legacy
                    .thread_duration_us
                    .map_or(NO_TS, |d| d.saturating_mul(1000)),
            }),
            b's' | b't' | b'f' => {
                let Some(track_event::legacy_event::Id::UnscopedId(id)) = legacy.id else {
                    self.sink.stat("flow_invalid_id", self.ctx.machine, 1);
                    return None;
                };
                let phase = match phase {
                    b's' => FlowV1Phase::Start,
                    b't' => FlowV1Phase::Step,
                    _ => FlowV1Phase::End,
                };
                Some(EventData::FlowV1(FlowV1Event {
                    track: slice.track,
                    id,
                    category: slice.category,
                    name: slice.name,
                    phase,
                    bind_enclosing: legacy.bind_to_enclosing(),
                }))
            }
            b'b' | b'e' | b'n' | b'S' | b'T' | b'p' | b'F' => {
                self.legacy_async(phase, slice, legacy, seq_thread)
            }
            b'M' => self.legacy_metadata(slice, ev, seq_thread),
            b'i' | b'I' | b'R' => {
                let mut off_thread = None;
                match legacy.instant_event_scope {
                    // Global: no thread needed (one is named when the sequence has it).
                    Some(1) => {
                        slice.track = self.sink.track(TrackKey::GlobalSlices {
                            machine,
                            kind: "legacy_chrome_global_instants",
                            name: NULL_STR,
                        });
                        off_thread = seq_thread;
                    }
                    // Process: the sequence's process, else the error "without process
                    // association".
                    Some(2) => match seq_thread.and_then(|t| t.pid.map(|pid| (t, pid))) {
                        Some((t, pid)) => {
                            slice.track = self.sink.track(TrackKey::ProcessSlices {
                                process: ProcessRef {
                                    machine: t.machine,
                                    pid,
                                },
                                kind: "chrome_process_instant",
                                name: NULL_STR,
                            });
                            off_thread = Some(t);
                        }
                        None => {
                            self.sink.stat("track_event_parser_errors", machine, 1);
                            return None;
                        }
                    },
                    _ => {}
                }
                // A global or process instant names the thread it came from.
                if let Some(t) = off_thread {
                    let mut args: Vec<Arg> = self.sink.args.get(slice.args).to_vec();
                    args.push(self.passthrough_utid_arg(t));
                    slice.args = self.sink.args.push(&args);
                }
                // A mark (`R`) says it was one.
                if phase == b'R' {
                    let mut args: Vec<Arg> = self.sink.args.get(slice.args).to_vec();
                    let key = self.sink.intern("legacy_event.phase");
                    let value = self.sink.intern("R");
                    args.push(Arg {
                        flat_key: key,
                        key,
                        value: ArgValue::Str(value),
                    });
                    slice.args = self.sink.args.push(&args);
                }
                Some(EventData::Complete {
                    slice,
                    dur: 0,
                    thread_dur: NO_TS,
                })
            }
            _ => self.legacy_raw(phase, slice, ev, seq_thread),
        }
    }

    /// A legacy `M` event: `thread_name` / `process_name` name the sequence's thread or
    /// process with the first annotation's string; any other kept raw.
    fn legacy_metadata(
        &mut self,
        slice: SliceEvent,
        ev: &protos::TrackEvent,
        seq_thread: Option<ThreadRef>,
    ) -> Option<EventData> {
        let Some(thread) = seq_thread else {
            self.sink
                .stat("track_event_parser_errors", self.ctx.machine, 1);
            return None;
        };
        let value = ev.debug_annotations.first().and_then(|a| match &a.value {
            Some(debug_annotation::Value::StringValue(s)) => Some(s.clone()),
            _ => None,
        });
        match (self.sink.strings.get(slice.name), value) {
            (Some("thread_name"), Some(v)) => Some(EventData::ThreadName {
                thread,
                name: self.sink.intern(&v),
                priority: NamePriority::TrackEventThreadName,
            }),
            (Some("process_name"), Some(v)) => {
                let pid = thread.pid?;
                Some(EventData::ProcessName {
                    process: ProcessRef {
                        machine: thread.machine,
                        pid,
                    },
                    name: self.sink.intern(&v),
                    priority: 2,
                })
            }
            _ => self.legacy_raw(b'M', slice, ev, seq_thread),
        }
    }

    /// A legacy event of a phase Trace Processor does not import: a `chrome_raw` row
    /// `track_event.legacy_event` with the legacy fields as args before the event's own.
    fn legacy_raw(
        &mut self,
        phase: u8,
        slice: SliceEvent,
        ev: &protos::TrackEvent,
        seq_thread: Option<ThreadRef>,
    ) -> Option<EventData> {
        use track_event::legacy_event::Id;
        let Some(thread) = seq_thread else {
            self.sink
                .stat("track_event_parser_errors", self.ctx.machine, 1);
            return None;
        };
        let legacy = ev.legacy_event.as_ref()?;
        let mut args = Vec::new();
        let phase_str = self.sink.intern(&char::from(phase).to_string());
        let fields = [
            ("legacy_event.category", ArgValue::Str(slice.category)),
            ("legacy_event.name", ArgValue::Str(slice.name)),
            ("legacy_event.phase", ArgValue::Str(phase_str)),
        ];
        for (k, v) in fields {
            args.push(self.sink.static_arg(k, v));
        }
        let mut ints = Vec::new();
        if let Some(d) = legacy.duration_us {
            ints.push(("legacy_event.duration_ns", d.saturating_mul(1000)));
        }
        if slice.thread_ts != NO_TS {
            ints.push(("legacy_event.thread_timestamp_ns", slice.thread_ts));
        }
        if let Some(d) = legacy.thread_duration_us {
            ints.push(("legacy_event.thread_duration_ns", d.saturating_mul(1000)));
        }
        if let Some(track_event::ThreadInstructionCount::ThreadInstructionCountAbsolute(v)) =
            ev.thread_instruction_count
        {
            ints.push(("legacy_event.thread_instruction_count", v));
        }
        if let Some(d) = legacy.thread_instruction_delta {
            ints.push(("legacy_event.thread_instruction_delta", d));
        }
        for (k, v) in ints {
            args.push(self.sink.static_arg(k, ArgValue::Int(v)));
        }
        if legacy.use_async_tts() {
            args.push(
                self.sink
                    .static_arg("legacy_event.use_async_tts", ArgValue::Bool(true)),
            );
        }
        let id = match legacy.id {
            Some(Id::UnscopedId(id)) => Some(("legacy_event.unscoped_id", id)),
            Some(Id::GlobalId(id)) => Some(("legacy_event.global_id", id)),
            Some(Id::LocalId(id)) => Some(("legacy_event.local_id", id)),
            None => None,
        };
        if let Some((k, id)) = id {
            args.push(self.sink.static_arg(k, ArgValue::Uint(id)));
            if let Some(scope) = &legacy.id_scope {
                let v = ArgValue::Str(self.sink.intern(scope));
                args.push(self.sink.static_arg("legacy_event.id_scope", v));
            }
        }
        args.extend_from_slice(self.sink.args.get(slice.args));
        let name = self.sink.intern_static("track_event.legacy_event");
        Some(EventData::ChromeRaw(Box::new(ChromeRaw {
            machine: thread.machine,
            thread: Some(thread),
            name,
            args: self.sink.args.push(&args),
        })))
    }

    /// Legacy async events (`b/e/n`, `S/T/p/F`): slices on async tracks keyed by the event's
    /// id, global unless the id is `local_id` (scoped to the writing process).
    pub(super) fn legacy_async(
        &mut self,
        phase: u8,
        mut slice: SliceEvent,
        legacy: &track_event::LegacyEvent,
        seq_thread: Option<ThreadRef>,
    ) -> Option<EventData> {
        use track_event::legacy_event::Id;
        let machine = seq_thread.map_or(self.ctx.machine, |t| t.machine);
        let (cookie, process) = match legacy.id {
            Some(Id::UnscopedId(id)) | Some(Id::GlobalId(id)) => (id, None),
            Some(Id::LocalId(id)) => {
                let pid = seq_thread.and_then(|t| t.pid);
                match pid {
                    Some(pid) => (id, Some(ProcessRef { machine, pid })),
                    None => {
                        self.sink.stat("track_event_parser_errors", machine, 1);
                        return None;
                    }
                }
            }
            None => {
                self.sink.stat("track_event_parser_errors", machine, 1);
                return None;
            }
        };
        // The track is named by the event (an end, which has no name of its own, by the
        // begin it ends).
        let key = (machine, process, cookie);
        let name = match phase {
            b'e' | b'F' => self.async_names.get(&key).copied().unwrap_or(slice.name),
            _ => {
                if matches!(phase, b'b' | b'S') {
                    self.async_names.insert(key, slice.name);
                }
                slice.name
            }
        };
        let scope = match (phase, legacy.id_scope.as_deref()) {
            (_, Some(id_scope)) => {
                let cat = self
                    .sink
                    .strings
                    .get(slice.category)
                    .unwrap_or("")
                    .to_string();
                self.sink.intern(&format!("{cat}:{id_scope}"))
            }
            (b'b' | b'e' | b'n', None) => slice.category,
            _ => name,
        };
        let set = AsyncSet {
            kind: if process.is_some() {
                "legacy_async_process_slice"
            } else {
                "legacy_async_global_slice"
            },
            machine,
            process,
            name,
            scope,
        };
        let creator = seq_thread.and_then(|t| {
            Some(ProcessRef {
                machine,
                pid: t.pid?,
            })
        });
        self.sink
            .legacy_async
            .entry(set)
            .or_insert(LegacyAsyncInfo {
                source_scope: scope,
                process_scoped: process.is_some(),
                creator,
            });
        slice.track = self.sink.track(TrackKey::AsyncCookie { set, cookie });
        if matches!(phase, b'e' | b'F') {
            // An end only merges its annotations into the slice it closes.
            return Some(EventData::End(slice));
        }
        // The event's args (its source id among them), then its thread and phase.
        let mut args: Vec<Arg> = self.sink.args.get(slice.args).to_vec();
        if let Some(t) = seq_thread {
            args.push(self.passthrough_utid_arg(t));
        }
        if matches!(phase, b'S' | b'T' | b'p') {
            let key = self.sink.intern("legacy_event.phase");
            let value = self.sink.intern(&(phase as char).to_string());
            args.push(Arg {
                flat_key: key,
                key,
                value: ArgValue::Str(value),
            });
        }
        slice.args = self.sink.args.push(&args);
        Some(match phase {
            b'b' | b'S' => EventData::Begin(slice),
            _ => EventData::Complete {
                slice,
                dur: 0,
                thread_dur: NO_TS,
            },
        })
    }

    /// A raw value on a described counter track made absolute, as Trace Processor's
    /// ConvertToAbsoluteCounterValue: × `unit_multiplier` (if > 0), then, on an incremental
    /// track, added to the running sum of this sequence. None if `uuid` is not a counter track.
    fn counter_value(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        uuid: u64,
        raw: f64,
    ) -> Option<f64> {
        let info = self.sink.descriptors.get(&(machine, uuid))?.counter?;
        let mut value = raw;
        if info.unit_multiplier > 0 {
            value *= info.unit_multiplier as f64;
        }
        if info.is_incremental {
            if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
                let running = seq.counter_values.entry(uuid).or_insert(0.0);
                *running += value;
                value = *running;
            }
        }
        Some(value)
    }

    /// A counter row (value already absolute) on a described counter track, with its args.
    fn push_descriptor_counter(
        &mut self,
        machine: MachineId,
        (ts, clock): (i64, ClockRef),
        uuid: u64,
        value: f64,
        args: ArgsRef,
    ) {
        let track = self.sink.track(TrackKey::Descriptor {
            machine,
            uuid,
            seq_thread: None,
        });
        self.sink.push(
            ts,
            clock,
            EventData::Counter {
                track,
                value: Real(value),
                args,
            },
        );
    }
}
