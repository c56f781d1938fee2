//! The track tracker: tracks by their dimensions (thread, process, cpu, global, counter,
//! async sets with their compressor slots, TrackEvent descriptors). Hands on track ids.

use super::*;

#[derive(Default)]
pub(super) struct AsyncSetState {
    pub(super) group: u32,
    /// (cookie or None for timestamp lanes, track id, open slices, last end)
    pub(super) slots: Vec<AsyncSlot>,
}

pub(super) struct AsyncSlot {
    pub(super) cookie: Option<u64>,
    pub(super) track: u32,
    pub(super) open: u32,
    pub(super) last_end: i64,
}

impl AsyncSetState {
    /// The slot an event goes to, if an existing one fits: Begin(cookie) and End(cookie)
    /// take the slot bound to the cookie, else the first cookie slot with nothing open
    /// (rebound); a scoped slice the first timestamp lane free at `ts`.
    pub(super) fn pick(&self, cookie: Option<u64>, phase: AsyncPhase, ts: i64) -> Option<usize> {
        match (cookie, phase) {
            (Some(c), _) => self
                .slots
                .iter()
                .position(|s| s.cookie == Some(c))
                // A cookie not seen yet takes the first free cookie slot, for an End too.
                .or_else(|| match phase {
                    AsyncPhase::Begin | AsyncPhase::BeginSaturating | AsyncPhase::End => self
                        .slots
                        .iter()
                        .position(|s| s.cookie.is_some() && s.open == 0),
                    AsyncPhase::Scoped { .. } => None,
                }),
            (None, AsyncPhase::Scoped { .. }) => self
                .slots
                .iter()
                .position(|s| s.cookie.is_none() && s.last_end <= ts),
            (None, _) => None,
        }
    }

    pub(super) fn push_slot(&mut self, cookie: Option<u64>, track: u32) {
        self.slots.push(AsyncSlot {
            cookie,
            track,
            open: 0,
            last_end: i64::MIN,
        });
    }

    /// Records an event on a slot (binding it to the cookie) and returns its track.
    pub(super) fn note(&mut self, slot: usize, cookie: Option<u64>, phase: AsyncPhase) -> u32 {
        let Some(s) = self.slots.get_mut(slot) else {
            return u32::MAX;
        };
        if cookie.is_some() {
            s.cookie = cookie;
        }
        match phase {
            AsyncPhase::Begin => s.open += 1,
            AsyncPhase::BeginSaturating => s.open = 1,
            AsyncPhase::End => s.open = s.open.saturating_sub(1),
            AsyncPhase::Scoped { end } => s.last_end = s.last_end.max(end),
        }
        s.track
    }

    /// The track of the slot bound to a cookie.
    pub(super) fn bound(&self, cookie: u64) -> Option<u32> {
        self.slots
            .iter()
            .find(|s| s.cookie == Some(cookie))
            .map(|s| s.track)
    }
}

#[derive(Clone, Copy)]
pub(super) enum DescriptorTrack {
    /// Resolved to a fixed track.
    Track(u32),
}

#[derive(Clone, Copy)]
pub(super) enum AsyncPhase {
    Begin,
    /// A legacy unnestable begin (atrace `S`): the slot's open count saturates at 1, as
    /// Trace Processor's `kLegacySaturatingUnnestable` nesting.
    BeginSaturating,
    End,
    Scoped {
        end: i64,
    },
}

pub(super) enum Scope {
    Global,
    Thread(u32),
    Process(u32),
}

impl<'s> Builder<'s> {
    pub(super) fn new_track(&mut self, row: TrackRow) -> u32 {
        let id = self.tables.tracks.len() as u32;
        self.tables.tracks.push(row);
        self.stacks.push(Vec::new());
        id
    }

    pub(super) fn thread_slices_track(&mut self, utid: u32) -> u32 {
        if let Some(&t) = self.thread_slice_track.get(&utid) {
            return t;
        }
        let machine = self.tables.threads[utid as usize].machine;
        let t = self.new_track(TrackRow {
            utid: Some(utid),
            ..TrackRow::new(NULL_STR, "thread_execution", machine, TrackEventType::Slice)
        });
        self.thread_slice_track.insert(utid, t);
        t
    }

    /// Resolves the track an event names.
    pub(super) fn resolve_track(&mut self, track: TrackRef) -> u32 {
        if let Some(Some(t)) = self.track_cache.get(track as usize) {
            return *t;
        }
        let key = *self.sink.tracks.get(track);
        let (id, cacheable) = self.resolve_key(key);
        if cacheable {
            if self.track_cache.len() <= track as usize {
                self.track_cache.resize(track as usize + 1, None);
            }
            self.track_cache[track as usize] = Some(id);
        }
        id
    }

    pub(super) fn resolve_key(&mut self, key: TrackKey) -> (u32, bool) {
        match key {
            TrackKey::ThreadSlices(t) => {
                let utid = self.thread(t);
                (self.thread_slices_track(utid), false)
            }
            TrackKey::ThreadOverlap(t) => {
                // Overlap lanes are chosen per event in `complete`.
                let utid = self.thread(t);
                (self.thread_slices_track(utid), false)
            }
            TrackKey::ProcessCounter {
                process,
                name,
                kind,
            } => {
                let upid = self.process(process);
                (self.process_counter_track(upid, name, kind), true)
            }
            // Not cached: the same tid names a new thread after it ends or its process is
            // replaced. (Counters on these keys never get here: their track is chosen when
            // the import ends, see `memory.rs`.)
            TrackKey::ThreadProcessCounter { thread, name, kind } => {
                let utid = self.thread(thread);
                match self.tables.threads[utid as usize].upid {
                    Some(upid) => (self.process_counter_track(upid, name, kind), false),
                    None => (self.thread_counter_track(utid, name, kind), false),
                }
            }
            TrackKey::ThreadCounter { thread, name, kind } => {
                let utid = self.thread(thread);
                (self.thread_counter_track(utid, name, kind), false)
            }
            TrackKey::CpuCounter {
                machine,
                cpu,
                name,
                kind,
            }
            | TrackKey::CpuSlices {
                machine,
                cpu,
                name,
                kind,
            } => {
                let event_type = if matches!(key, TrackKey::CpuCounter { .. }) {
                    TrackEventType::Counter
                } else {
                    TrackEventType::Slice
                };
                let mrow = self.machine_row(machine);
                self.cpu(machine, cpu);
                let t = self.new_track(TrackRow {
                    cpu: Some(cpu),
                    ..TrackRow::new(name, kind, mrow, event_type)
                });
                (t, true)
            }
            TrackKey::GlobalCounter {
                machine,
                name,
                kind,
            } => {
                let mrow = self.machine_row(machine);
                let t = self.new_track(TrackRow::new(name, kind, mrow, TrackEventType::Counter));
                (t, true)
            }
            TrackKey::GlobalSlices {
                machine,
                kind,
                name,
            } => {
                let mrow = self.machine_row(machine);
                let mut row = TrackRow::new(name, kind, mrow, TrackEventType::Slice);
                if kind == "legacy_chrome_global_instants" {
                    row.source_args = self.source_chrome_args();
                }
                (self.new_track(row), true)
            }
            TrackKey::KernelSlices {
                machine,
                kind,
                name,
                dim,
            } => {
                let mrow = self.machine_row(machine);
                let mut row = TrackRow::new(name, kind, mrow, TrackEventType::Slice);
                if let Some((key, value)) = dim {
                    let dim = self.sink.static_arg(key, ArgValue::Int(value));
                    row.extra_dims = self.sink.args.push(&[dim]);
                }
                (self.new_track(row), true)
            }
            TrackKey::ProcessSlices {
                process,
                kind,
                name,
            } => {
                let upid = self.process(process);
                let machine = self.tables.processes[upid as usize].machine;
                let mut row = TrackRow::new(name, kind, machine, TrackEventType::Slice);
                row.upid = Some(upid);
                if kind == "chrome_process_instant" {
                    row.source_args = self.source_chrome_args();
                }
                (self.new_track(row), true)
            }
            TrackKey::AsyncCookie { .. } | TrackKey::AsyncScoped { .. } => {
                // Chosen per event (slots are reused); see `async_track`.
                (u32::MAX, false)
            }
            TrackKey::Descriptor {
                machine,
                uuid,
                seq_thread,
            } => self.descriptor_track(machine, uuid, seq_thread),
            TrackKey::Probe(id) => (self.probe_track(id), true),
        }
    }

    /// A legacy async track's dimensions (`scope`, NULL when it has none, and `name`) and
    /// args.
    pub(super) fn legacy_async_args(
        &mut self,
        row: &mut TrackRow,
        set: &AsyncSet,
        info: LegacyAsyncInfo,
    ) {
        let dims = [
            self.sink.arg("scope", str_or_null(set.scope)),
            self.sink.arg("name", str_or_null(set.name)),
        ];
        row.extra_dims = self.sink.args.push(&dims);
        let chrome = self.sink.intern("chrome");
        let mut source = vec![
            self.sink.arg("source", ArgValue::Str(chrome)),
            self.sink.arg(
                "trace_id_is_process_scoped",
                ArgValue::Bool(info.process_scoped),
            ),
        ];
        if let Some(p) = info.creator {
            let upid = self.process(p);
            source.push(self.sink.arg("upid", ArgValue::Uint(u64::from(upid))));
        }
        source.push(
            self.sink
                .arg("source_scope", str_or_null(info.source_scope)),
        );
        row.source_args = self.sink.args.push(&source);
    }

    pub(super) fn source_chrome_args(&mut self) -> ArgsRef {
        let value = self.sink.intern("chrome");
        let source = self.sink.arg("source", ArgValue::Str(value));
        self.sink.args.push(&[source])
    }

    /// One counter track per thread, name and type.
    pub(super) fn thread_counter_track(
        &mut self,
        utid: u32,
        name: StrId,
        kind: &'static str,
    ) -> u32 {
        if let Some(&t) = self.thread_counters.get(&(utid, name, kind)) {
            return t;
        }
        let machine = self.tables.threads[utid as usize].machine;
        let t = self.new_track(TrackRow {
            utid: Some(utid),
            ..TrackRow::new(name, kind, machine, TrackEventType::Counter)
        });
        self.thread_counters.insert((utid, name, kind), t);
        t
    }

    /// One counter track per process, name and type, however the events named it.
    pub(super) fn process_counter_track(
        &mut self,
        upid: u32,
        name: StrId,
        kind: &'static str,
    ) -> u32 {
        if let Some(&t) = self.process_counters.get(&(upid, name, kind)) {
            return t;
        }
        let machine = self.tables.processes[upid as usize].machine;
        let mut row = TrackRow {
            upid: Some(upid),
            ..TrackRow::new(name, kind, machine, TrackEventType::Counter)
        };
        // Atrace counters are keyed by (process, the name the trace gave them), in that
        // order.
        if kind == "atrace_counter" {
            row.extra_dims = self.upid_and_name_dims(upid, name, None);
            row.own_dims = true;
        }
        // Process memory tracks are also keyed by what they measure (`mem.rss` → `rss`).
        if kind == "process_memory" {
            let key = self.sink.strings.get(name).unwrap_or("");
            let key = key.strip_prefix("mem.").unwrap_or(key).to_string();
            let key = self.sink.intern(&key);
            let dims = [
                self.sink
                    .static_arg("upid", ArgValue::Uint(u64::from(upid))),
                self.sink
                    .static_arg("process_memory_key", ArgValue::Str(key)),
            ];
            row.extra_dims = self.sink.args.push_shared(&dims);
            row.own_dims = true;
            row.unit = self.sink.intern("bytes");
        }
        let t = self.new_track(row);
        self.process_counters.insert((upid, name, kind), t);
        t
    }

    /// The dimensions `upid`, `name` (and `track_compressor_idx`) of an atrace track, in
    /// the reference's order.
    fn upid_and_name_dims(&mut self, upid: u32, name: StrId, idx: Option<u32>) -> ArgsRef {
        let mut dims = vec![
            self.sink
                .static_arg("upid", ArgValue::Uint(u64::from(upid))),
            self.sink.static_arg("name", str_or_null(name)),
        ];
        if let Some(idx) = idx {
            let arg = ArgValue::Uint(u64::from(idx));
            dims.push(self.sink.static_arg("track_compressor_idx", arg));
        }
        self.sink.args.push_shared(&dims)
    }

    /// The ucpu of a machine's cpu (its `cpu` row id), creating the row on first use.
    pub(super) fn cpu(&mut self, machine: MachineId, cpu: u32) -> u32 {
        let index = self.cpu_index(machine, cpu);
        self.tables.cpus[index].ucpu
    }

    pub(super) fn cpu_index(&mut self, machine: MachineId, cpu: u32) -> usize {
        if let Some(&i) = self.cpus.get(&(machine, cpu)) {
            return i;
        }
        let mrow = self.machine_row(machine);
        // As Trace Processor: the first machine's (the host's, or the one machine adopted
        // as host) ucpu is the cpu number. Other machines get ranges of their own after
        // it, in the order their cpus appear.
        let range = if mrow == 0 {
            0
        } else {
            let next = self.cpu_ranges.len() as u32 + 1;
            *self.cpu_ranges.entry(mrow).or_insert(next)
        };
        // A cpu number past its machine's range (untrusted input) gets an id of its own
        // above all the ranges, so ids never clash.
        let ucpu = match range.checked_mul(CPUS_PER_MACHINE) {
            Some(start) if cpu < CPUS_PER_MACHINE && start < ODD_CPUS_FIRST_UCPU => start + cpu,
            _ => {
                self.odd_cpus += 1;
                ODD_CPUS_FIRST_UCPU.saturating_add(self.odd_cpus)
            }
        };
        let index = self.tables.cpus.len();
        self.tables.cpus.push(CpuRow {
            ucpu,
            cpu,
            machine: mrow,
            cluster_id: None,
            processor: NULL_STR,
            capacity: None,
            frequencies: Vec::new(),
            args: NO_ARGS,
        });
        self.cpus.insert((machine, cpu), index);
        index
    }

    /// The async track for an event on a cookie or scoped set (Trace Processor's track
    /// compressor).
    pub(super) fn async_track(&mut self, key: TrackKey, ts: i64, phase: AsyncPhase) -> u32 {
        let (set, cookie) = match key {
            TrackKey::AsyncCookie { set, cookie } => (set, Some(cookie)),
            TrackKey::AsyncScoped { set } => (set, None),
            _ => return u32::MAX,
        };
        if !self.async_sets.contains_key(&set) {
            let group = self.next_track_group;
            self.next_track_group += 1;
            self.async_sets.insert(
                set,
                AsyncSetState {
                    group,
                    slots: Vec::new(),
                },
            );
        }
        let state = &self.async_sets[&set];
        let slot = state.pick(cookie, phase, ts);
        let slot = match slot {
            Some(i) => i,
            None => {
                let group = state.group;
                let idx = state.slots.len();
                let machine = self.machine_row(set.machine);
                let upid = set.process.map(|p| self.process(p));
                let mut row = TrackRow::new(set.name, set.kind, machine, TrackEventType::Slice);
                row.upid = upid;
                row.track_group = Some(group);
                row.compressor_idx = Some(idx as u32);
                if let Some(info) = self.sink.legacy_async.get(&set).copied() {
                    self.legacy_async_args(&mut row, &set, info);
                } else if let Some(dims) = self.sink.async_dims.get(&set).copied() {
                    row.extra_dims = dims;
                } else if let ("atrace_async_slice" | "atrace_async_slice_for_track", Some(upid)) =
                    (set.kind, upid)
                {
                    // Atrace async sets are keyed by (process, slice or track name), then
                    // the slot.
                    row.extra_dims = self.upid_and_name_dims(upid, set.name, Some(idx as u32));
                    row.own_dims = true;
                }
                let track = self.new_track(row);
                let Some(state) = self.async_sets.get_mut(&set) else {
                    return track;
                };
                state.push_slot(cookie, track);
                idx
            }
        };
        match self.async_sets.get_mut(&set) {
            Some(state) => state.note(slot, cookie, phase),
            None => u32::MAX,
        }
    }

    // ----- slices ----------------------------------------------------------------------

    /// The track a slice event lands on: async cookies and merging descriptor tracks pick
    /// (and count) their slot.
    pub(super) fn slice_track(
        &mut self,
        track: TrackRef,
        ts: i64,
        phase: AsyncPhase,
        name: StrId,
    ) -> u32 {
        let key = *self.sink.tracks.get(track);
        match key {
            TrackKey::AsyncCookie { .. } | TrackKey::AsyncScoped { .. } => {
                self.async_track(key, ts, phase)
            }
            TrackKey::Descriptor {
                machine,
                uuid,
                seq_thread,
            } => self.descriptor_slice_track(machine, uuid, seq_thread, ts, phase, name),
            _ => self.resolve_track(track),
        }
    }
}
