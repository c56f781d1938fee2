//! The TrackEvent track tracker (Trace Processor's `TrackEventTracker`): descriptor uuids
//! resolved to tracks. A thread root is the thread's own track unless it refuses to merge
//! with system tracks; a process root is a process track; counters, state tracks and
//! tracks that ask not to merge are tracks of their own. Every other slice track merges
//! with its siblings through the track compressor: one set per (nearest thread/process
//! ancestor, parent uuid, merge key — the track's name, the first event's name for an
//! unnamed track, or its `sibling_merge_key`), the uuid as cookie, so same-named siblings
//! share a track unless their slices overlap (`{thread,process,global}_merged_track_event`).
//! Hands on track ids.

use super::track::{AsyncPhase, AsyncSetState, DescriptorTrack, Scope};
use super::*;

/// `TrackDescriptor.SiblingMergeBehavior` values.
const SIBLING_MERGE_NONE: i32 = 2;
const SIBLING_MERGE_BY_KEY: i32 = 3;

/// Whether a descriptor (or an undescribed uuid) merges with its siblings.
fn merges(d: Option<&Descriptor>) -> bool {
    match d {
        None => true,
        Some(d) => {
            d.counter.is_none()
                && d.thread.is_none()
                && d.process.is_none()
                && !d.is_state
                && d.sibling_merge_behavior != SIBLING_MERGE_NONE
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum ScopeKey {
    Global,
    Thread(u32),
    Process(u32),
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum MergeKey {
    Name(StrId),
    Key(StrId),
    IntKey(u64),
}

/// One set of merged tracks (see the module doc).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct MergedSet {
    machine: MachineId,
    scope: ScopeKey,
    parent_uuid: u64,
    key: MergeKey,
}

#[derive(Default)]
pub(super) struct MergedTracks {
    sets: HashMap<MergedSet, AsyncSetState>,
    by_uuid: FxHashMap<(MachineId, u64), MergedSet>,
    /// The name of each set's tracks: the first non-NULL name of a uuid joining it (by
    /// name, that is the name; by `sibling_merge_key`, differently named siblings share).
    names: HashMap<MergedSet, StrId>,
    /// Uuids whose parent uuid was never described (counted once each).
    missing_parents: std::collections::HashSet<(MachineId, u64)>,
}

impl<'s> Builder<'s> {
    /// The fixed track of a descriptor uuid: the sequence's thread track (uuid 0 or pid/tid
    /// overrides), a thread root, a process root, a counter, a state or non-merging track.
    /// A merging track has no fixed track (its events pick a slot): asked for one (a flow
    /// event, a child's parent), it gives the slot its uuid is bound to.
    pub(super) fn descriptor_track(
        &mut self,
        machine: MachineId,
        uuid: u64,
        seq_thread: Option<ThreadRef>,
    ) -> (u32, bool) {
        // The parser passes the sequence's thread only for uuid 0 or pid/tid overrides.
        if let Some(t) = seq_thread {
            let utid = self.thread(t);
            return (self.thread_slices_track(utid), false);
        }
        if let Some(DescriptorTrack::Track(t)) = self.descriptor_tracks.get(&(machine, uuid)) {
            return (*t, true);
        }
        let desc = self.sink.descriptors.get(&(machine, uuid)).cloned();
        if merges(desc.as_ref()) {
            return (self.merged_track_of(machine, uuid), false);
        }
        let Some(d) = desc else {
            return (u32::MAX, false);
        };
        let mrow = self.machine_row(machine);
        let track = self.track_for_descriptor(machine, mrow, &d);
        self.descriptor_tracks
            .insert((machine, uuid), DescriptorTrack::Track(track));
        (track, true)
    }

    /// The track a slice event on a descriptor uuid lands on: merging tracks pick (and
    /// count) their compressor slot, the others have a fixed track.
    pub(super) fn descriptor_slice_track(
        &mut self,
        machine: MachineId,
        uuid: u64,
        seq_thread: Option<ThreadRef>,
        ts: i64,
        phase: AsyncPhase,
        event_name: StrId,
    ) -> u32 {
        if seq_thread.is_none() && !self.descriptor_tracks.contains_key(&(machine, uuid)) {
            let desc = self.sink.descriptors.get(&(machine, uuid));
            if merges(desc) {
                return self.merged_track(machine, uuid, ts, phase, event_name);
            }
        }
        self.descriptor_track(machine, uuid, seq_thread).0
    }

    /// Every described track no event landed on gets a row too (thread roots excepted:
    /// they are the thread's own track, made when used; merging tracks excepted: they
    /// exist as slots events are placed in).
    pub(super) fn described_tracks(&mut self) {
        let mut described: Vec<(MachineId, u64)> = self
            .sink
            .descriptors
            .iter()
            .filter(|(_, d)| d.thread.is_none() && !merges(Some(d)))
            .map(|(k, _)| *k)
            // A track in (or under) a parent loop never resolves.
            .filter(|&(m, u)| !crate::ir::descriptor_chain_loops(&self.sink.descriptors, m, u))
            .collect();
        described.sort_unstable();
        for (machine, uuid) in described {
            self.descriptor_track(machine, uuid, None);
        }
    }

    /// The merged set a uuid's events go to, fixed by its first event: the nearest
    /// thread/process ancestor, the parent uuid and the merge key (the track's name, or
    /// the first event's name for an unnamed track; or its `sibling_merge_key`).
    fn merged_set(&mut self, machine: MachineId, uuid: u64, event_name: StrId) -> MergedSet {
        if let Some(set) = self.merged.by_uuid.get(&(machine, uuid)) {
            return *set;
        }
        let desc = self.sink.descriptors.get(&(machine, uuid)).cloned();
        let scope = match &desc {
            Some(d) => match self.descriptor_scope(machine, d) {
                Scope::Global => ScopeKey::Global,
                Scope::Thread(u) => ScopeKey::Thread(u),
                Scope::Process(u) => ScopeKey::Process(u),
            },
            None => ScopeKey::Global,
        };
        let described_name = desc.as_ref().map_or(NULL_STR, |d| d.name);
        let name = if described_name != NULL_STR {
            described_name
        } else if desc.is_none() && uuid == 0 {
            self.sink.intern_static("Default Track")
        } else {
            event_name
        };
        let key = match desc
            .as_ref()
            .map(|d| (d.sibling_merge_behavior, d.sibling_merge_key))
        {
            Some((SIBLING_MERGE_BY_KEY, Some(MergeKeyValue::Str(k)))) => MergeKey::Key(k),
            Some((SIBLING_MERGE_BY_KEY, Some(MergeKeyValue::Int(k)))) => MergeKey::IntKey(k),
            _ => MergeKey::Name(name),
        };
        let set = MergedSet {
            machine,
            scope,
            parent_uuid: desc.as_ref().and_then(|d| d.parent_uuid).unwrap_or(0),
            key,
        };
        self.merged.by_uuid.insert((machine, uuid), set);
        let set_name = self.merged.names.entry(set).or_insert(name);
        if *set_name == NULL_STR {
            *set_name = name;
        }
        set
    }

    /// A slot of a merged set for an event of `uuid` (Trace Processor's track compressor
    /// with the uuid as cookie).
    fn merged_track(
        &mut self,
        machine: MachineId,
        uuid: u64,
        ts: i64,
        phase: AsyncPhase,
        event_name: StrId,
    ) -> u32 {
        let set = self.merged_set(machine, uuid, event_name);
        if !self.merged.sets.contains_key(&set) {
            let group = self.next_track_group;
            self.next_track_group += 1;
            let state = AsyncSetState {
                group,
                slots: Vec::new(),
            };
            self.merged.sets.insert(set, state);
        }
        let slot = self.merged.sets[&set].pick(Some(uuid), phase, ts);
        let slot = match slot {
            Some(i) => i,
            None => {
                let idx = self.merged.sets[&set].slots.len() as u32;
                let track = self.merged_slot_row(machine, uuid, &set, idx);
                let Some(state) = self.merged.sets.get_mut(&set) else {
                    return track;
                };
                state.push_slot(Some(uuid), track);
                idx as usize
            }
        };
        match self.merged.sets.get_mut(&set) {
            Some(state) => state.note(slot, Some(uuid), phase),
            None => u32::MAX,
        }
    }

    /// The slot a merging uuid is bound to, made (with no slice open) if it has none.
    fn merged_track_of(&mut self, machine: MachineId, uuid: u64) -> u32 {
        if let Some(set) = self.merged.by_uuid.get(&(machine, uuid)).copied() {
            if let Some(slot) = self.merged.sets.get(&set).and_then(|s| s.bound(uuid)) {
                return slot;
            }
        }
        self.merged_track(machine, uuid, 0, AsyncPhase::Begin, NULL_STR);
        self.merged_track(machine, uuid, 0, AsyncPhase::End, NULL_STR)
    }

    /// A new slot's track row: `{thread,process,global}_merged_track_event` with the
    /// dimensions `parent_track_uuid`, `merge_key_type`, `merge_key_value` and its index.
    fn merged_slot_row(&mut self, machine: MachineId, uuid: u64, set: &MergedSet, idx: u32) -> u32 {
        let mrow = self.machine_row(machine);
        let kind = match set.scope {
            ScopeKey::Thread(_) => "thread_merged_track_event",
            ScopeKey::Process(_) => "process_merged_track_event",
            ScopeKey::Global => "global_merged_track_event",
        };
        let name = self.merged.names.get(set).copied().unwrap_or(NULL_STR);
        let mut row = TrackRow::new(name, kind, mrow, TrackEventType::Slice);
        match set.scope {
            ScopeKey::Thread(u) => row.utid = Some(u),
            ScopeKey::Process(u) => row.upid = Some(u),
            ScopeKey::Global => {}
        }
        let (key_type, key_value) = match set.key {
            MergeKey::Name(n) => (0, str_or_null(n)),
            MergeKey::Key(k) => (1, str_or_null(k)),
            MergeKey::IntKey(k) => (2, ArgValue::Uint(k)),
        };
        let dims = [
            self.sink
                .static_arg("parent_track_uuid", ArgValue::Uint(set.parent_uuid)),
            self.sink
                .static_arg("merge_key_type", ArgValue::Int(key_type)),
            self.sink.static_arg("merge_key_value", key_value),
        ];
        row.extra_dims = self.sink.args.push_shared(&dims);
        row.compressor_idx = Some(idx);
        let desc = self
            .sink
            .descriptors
            .get(&(machine, uuid))
            .cloned()
            .unwrap_or(Descriptor {
                uuid,
                ..Descriptor::default()
            });
        row.parent_id = self.descriptor_parent_track(machine, &desc);
        row.source_args = self.descriptor_args(&desc);
        self.new_track(row)
    }

    /// A child's `parent_id`: its parent's track, unless the parent is a thread/process
    /// root (or unknown).
    fn descriptor_parent_track(&mut self, machine: MachineId, d: &Descriptor) -> Option<u32> {
        let p = d.parent_uuid?;
        // A looping chain has no parent track (and would recurse forever).
        if crate::ir::descriptor_chain_loops(&self.sink.descriptors, machine, d.uuid) {
            return None;
        }
        let pd = self.sink.descriptors.get(&(machine, p))?;
        if pd.thread.is_some() || pd.process.is_some() {
            return None;
        }
        let (track, _) = self.descriptor_track(machine, p, None);
        (track != u32::MAX).then_some(track)
    }

    /// Nearest thread or process ancestor of a descriptor (not itself).
    pub(super) fn descriptor_scope(&mut self, machine: MachineId, d: &Descriptor) -> Scope {
        let mut parent = d.parent_uuid;
        let mut child = d.uuid;
        let mut hops = 0;
        while let Some(p) = parent {
            hops += 1;
            if hops > 64 {
                break;
            }
            let Some(pd) = self.sink.descriptors.get(&(machine, p)).cloned() else {
                // A parent never described: the track is a root (track_hierarchy_missing_uuid).
                if p != 0 && self.merged.missing_parents.insert((machine, child)) {
                    let mrow = self.machine_row(machine);
                    self.stat("track_hierarchy_missing_uuid", mrow);
                }
                break;
            };
            child = p;
            if let Some(t) = pd.thread {
                return Scope::Thread(self.descriptor_thread(machine, p, t));
            }
            if let Some(pr) = pd.process {
                return Scope::Process(self.descriptor_process(machine, p, pr));
            }
            parent = pd.parent_uuid;
        }
        Scope::Global
    }

    pub(super) fn track_for_descriptor(
        &mut self,
        machine: MachineId,
        mrow: u32,
        d: &Descriptor,
    ) -> u32 {
        if let Some(counter) = d.counter {
            let scope = self.descriptor_scope(machine, d);
            let mut name = d.name;
            if name == NULL_STR {
                name = match counter.builtin {
                    1 => self.sink.intern("thread_time"),
                    2 => self.sink.intern("thread_instruction_count"),
                    _ => NULL_STR,
                };
            }
            let kind = match scope {
                Scope::Thread(_) => "thread_counter_track_event",
                Scope::Process(_) => "process_counter_track_event",
                Scope::Global => "global_counter_track_event",
            };
            let mut row = TrackRow::new(name, kind, mrow, TrackEventType::Counter);
            // Builtin counters imply their unit.
            let unit = match (counter.unit, counter.builtin) {
                (0, 1) => 1,
                (0, 2) => 2,
                (u, _) => u,
            };
            row.unit = match unit {
                1 => self.sink.intern("ns"),
                2 => self.sink.intern("count"),
                3 => self.sink.intern("bytes"),
                _ => counter.unit_name,
            };
            match scope {
                Scope::Thread(u) => row.utid = Some(u),
                Scope::Process(u) => row.upid = Some(u),
                Scope::Global => {}
            }
            self.uuid_dims(&mut row, d.uuid);
            row.source_args = self.descriptor_args(d);
            return self.new_track(row);
        }
        if let Some(t) = d.thread {
            let utid = self.descriptor_thread(machine, d.uuid, t);
            if !d.disallow_merging_with_system_tracks {
                return self.thread_slices_track(utid);
            }
            let mut row = TrackRow::new(d.name, "thread_track_event", mrow, TrackEventType::Slice);
            row.utid = Some(utid);
            self.uuid_dims(&mut row, d.uuid);
            row.source_args = self.descriptor_args(d);
            return self.new_track(row);
        }
        if let Some(p) = d.process {
            let upid = self.descriptor_process(machine, d.uuid, p);
            let mut row = TrackRow::new(d.name, "process_track_event", mrow, TrackEventType::Slice);
            row.upid = Some(upid);
            self.uuid_dims(&mut row, d.uuid);
            row.source_args = self.descriptor_args(d);
            return self.new_track(row);
        }
        let scope = self.descriptor_scope(machine, d);
        let kind = match scope {
            Scope::Thread(_) => "thread_track_event",
            Scope::Process(_) => "process_track_event",
            Scope::Global => "global_track_event",
        };
        let event_type = if d.is_state {
            TrackEventType::State
        } else {
            TrackEventType::Slice
        };
        let mut row = TrackRow::new(d.name, kind, mrow, event_type);
        match scope {
            Scope::Thread(u) => row.utid = Some(u),
            Scope::Process(u) => row.upid = Some(u),
            Scope::Global => {}
        }
        self.uuid_dims(&mut row, d.uuid);
        row.name_from_first_event = d.name == NULL_STR && !d.is_state;
        // Parent link, unless the parent is a thread/process root.
        row.parent_id = self.descriptor_parent_track(machine, d);
        row.source_args = self.descriptor_args(d);
        self.new_track(row)
    }

    /// The dimensions of a descriptor track that is not merged with others: its scope
    /// (`utid` / `upid`, when it has one) and its `track_uuid`, so two tracks of one scope
    /// never share a dimension set.
    fn uuid_dims(&mut self, row: &mut TrackRow, uuid: u64) {
        let mut dims = Vec::with_capacity(2);
        if let Some(u) = row.utid {
            dims.push(self.sink.static_arg("utid", ArgValue::Uint(u64::from(u))));
        } else if let Some(u) = row.upid {
            dims.push(self.sink.static_arg("upid", ArgValue::Uint(u64::from(u))));
        }
        dims.push(self.sink.static_arg("track_uuid", ArgValue::Uint(uuid)));
        row.extra_dims = self.sink.args.push_shared(&dims);
        row.own_dims = true;
    }

    /// Track args Trace Processor gives descriptor tracks.
    pub(super) fn descriptor_args(&mut self, d: &Descriptor) -> ArgsRef {
        let mut args = Vec::new();
        let mut add = |sink: &mut Sink, key: &str, value: ArgValue| args.push(sink.arg(key, value));
        let descriptor = self.sink.intern("descriptor");
        add(self.sink, "source", ArgValue::Str(descriptor));
        add(self.sink, "trace_id", ArgValue::Uint(d.uuid));
        let is_root = d.parent_uuid.is_none();
        add(self.sink, "is_root_in_scope", ArgValue::Bool(is_root));
        if d.description != NULL_STR {
            add(self.sink, "description", ArgValue::Str(d.description));
        }
        let ordering = match d.child_ordering {
            1 => Some("lexicographic"),
            2 => Some("chronological"),
            3 => Some("explicit"),
            _ => None,
        };
        if let Some(o) = ordering {
            let o = self.sink.intern(o);
            add(self.sink, "child_ordering", ArgValue::Str(o));
        }
        if let Some(rank) = d.sibling_order_rank {
            add(
                self.sink,
                "sibling_order_rank",
                ArgValue::Int(i64::from(rank)),
            );
        }
        if d.has_first_packet_on_sequence {
            add(
                self.sink,
                "has_first_packet_on_sequence",
                ArgValue::Bool(true),
            );
        }
        if let Some(category) = d.counter.map(|c| c.category).filter(|&c| c != NULL_STR) {
            add(self.sink, "category", ArgValue::Str(category));
        }
        self.sink.args.push(&args)
    }
}
