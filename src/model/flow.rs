//! The flow tracker, as Trace Processor's `FlowTracker`: one table of pending flow ids
//! (TrackEvent `flow_ids`, v2 `bind_id`s and v1 `s`/`t`/`f` ids share it), bound to the
//! slice on top of a track's stack (finished but not yet popped slices count), or, for a
//! v1 `f` without `bp:"e"`, to the next slice that begins on its track. Hands on flow rows.
//!
//! The reference's quirks are kept, because queries count them: a begin on an id already
//! pending is dropped (`flow_duplicate_id`) and the old binding stays; ids stay pending
//! after an end (TrackEvent terminating ids excepted); a deferred `f` whose id never began
//! still makes a flow, from slice 0, and leaves the id pending from there; v1 ids are
//! numbered 0, 1, 2… per (id, category, name) in the same id space as the raw ids, and
//! every flow whose id has a v1 number gets the `name` and `cat` args.

use super::*;

#[derive(Default)]
pub(super) struct FlowState {
    /// Flow id → the slice its next row starts from.
    pending: FxHashMap<u64, u32>,
    /// v1 (id, category, name) → flow id, and back.
    v1_ids: FxHashMap<(u64, StrId, StrId), u64>,
    v1_names: FxHashMap<u64, (StrId, StrId)>,
    /// v1 `f` events waiting for the next slice that begins on a track: (track, flow id).
    pub(super) waiting_next: Vec<(u32, u64)>,
}

impl<'s> Builder<'s> {
    /// The slice a flow event on `track` binds to: the top of its stack, as it stands.
    fn top_slice(&self, track: u32) -> Option<u32> {
        self.stacks
            .get(track as usize)
            .and_then(|s| s.last())
            .map(|e| e.slice)
    }

    fn flow_stat(&mut self, name: &'static str, track: u32) {
        let machine = self.tables.tracks[track as usize].machine;
        self.stat(name, machine);
    }

    /// FlowTracker::Begin: `slice` (the event's own, or for v1 the top of its track)
    /// starts flow `id`.
    fn flow_begin(&mut self, track: u32, slice: Option<u32>, id: u64) {
        let Some(slice) = slice else {
            self.flow_stat("flow_no_enclosing_slice", track);
            return;
        };
        if self.flows.pending.contains_key(&id) {
            self.flow_stat("flow_duplicate_id", track);
            return;
        }
        self.flows.pending.insert(id, slice);
    }

    /// FlowTracker::Step: a row from the pending slice to `slice`, which takes over.
    fn flow_step(&mut self, track: u32, slice: Option<u32>, id: u64) {
        let Some(slice) = slice else {
            self.flow_stat("flow_no_enclosing_slice", track);
            return;
        };
        let Some(out) = self.flows.pending.insert(id, slice) else {
            self.flows.pending.remove(&id);
            self.flow_stat("flow_step_without_start", track);
            return;
        };
        self.flow_row(id, out, slice);
    }

    /// FlowTracker::End: bound to the top slice now, or (v1 `f` without `bp:"e"`) to the
    /// next slice that begins on the track.
    fn flow_end(
        &mut self,
        track: u32,
        slice: Option<u32>,
        id: u64,
        bind_enclosing: bool,
        close: bool,
    ) {
        if !bind_enclosing {
            self.flows.waiting_next.push((track, id));
            return;
        }
        let Some(slice) = slice else {
            self.flow_stat("flow_no_enclosing_slice", track);
            return;
        };
        let Some(&out) = self.flows.pending.get(&id) else {
            self.flow_stat("flow_end_without_start", track);
            return;
        };
        if close {
            self.flows.pending.remove(&id);
        }
        self.flow_row(id, out, slice);
    }

    /// A slice began on `track`: the flows waiting for it end there.
    pub(super) fn close_waiting_flows(&mut self, track: u32, slice: u32) {
        if self.flows.waiting_next.is_empty() {
            return;
        }
        let mut i = 0;
        while i < self.flows.waiting_next.len() {
            if self.flows.waiting_next[i].0 != track {
                i += 1;
                continue;
            }
            let (_, id) = self.flows.waiting_next.remove(i);
            // As the reference's map lookup does: an id that never began starts at slice 0.
            let out = *self.flows.pending.entry(id).or_insert(0);
            self.flow_row(id, out, slice);
        }
    }

    /// The flow ops of a slice event, applied to its slice.
    pub(super) fn apply_flows(&mut self, flows: FlowsRef, track: u32, slice: u32) {
        if flows == NO_FLOWS {
            return;
        }
        let own = Some(slice);
        let (start, len) = self.sink.flow_runs[flows as usize];
        for i in start..start + len {
            match self.sink.flow_ops[i as usize] {
                FlowOp::Id(id) => {
                    if self.flows.pending.contains_key(&id) {
                        self.flow_step(track, own, id);
                    } else {
                        self.flow_begin(track, own, id);
                    }
                }
                FlowOp::Terminating(id) => {
                    if self.flows.pending.contains_key(&id) {
                        self.flow_end(track, own, id, true, true);
                    }
                }
                FlowOp::V2Out(id) => self.flow_begin(track, own, id),
                FlowOp::V2In(id) => self.flow_end(track, own, id, true, false),
                FlowOp::V2Step(id) => self.flow_step(track, own, id),
            }
        }
    }

    /// A flow row; it always points forward in time. A flow whose id has a v1 number
    /// gets that flow's `name` and `cat`.
    fn flow_row(&mut self, id: u64, out: u32, slice_in: u32) {
        let (a, b) = if self.slice_ts.get(out as usize) <= self.slice_ts.get(slice_in as usize) {
            (out, slice_in)
        } else {
            (slice_in, out)
        };
        let args = match self.flows.v1_names.get(&id) {
            Some(&(category, name)) => self.v1_args(category, name),
            None => NO_ARGS,
        };
        self.tables.flows.push(FlowRow {
            slice_out: a,
            slice_in: b,
            trace_id: Some(id as i64),
            args,
        });
    }

    /// A v1 flow event (`s`, `t`, `f`) on its thread's track.
    pub(super) fn flow_v1(&mut self, f: &FlowV1Event) {
        let track = self.resolve_track(f.track);
        // Async keys pick their track per slice; a flow event cannot name one.
        if track == u32::MAX {
            return;
        }
        let key = (f.id, f.category, f.name);
        let next = self.flows.v1_ids.len() as u64;
        let id = *self.flows.v1_ids.entry(key).or_insert(next);
        self.flows.v1_names.insert(id, (f.category, f.name));
        let top = self.top_slice(track);
        match f.phase {
            FlowV1Phase::Start => self.flow_begin(track, top, id),
            FlowV1Phase::Step => self.flow_step(track, top, id),
            FlowV1Phase::End => self.flow_end(track, top, id, f.bind_enclosing, false),
        }
    }

    fn v1_args(&mut self, category: StrId, name: StrId) -> ArgsRef {
        let name_key = self.sink.intern_static("name");
        let cat_key = self.sink.intern_static("cat");
        let mut args = Vec::with_capacity(2);
        for (key, value) in [(name_key, name), (cat_key, category)] {
            if value != NULL_STR {
                args.push(Arg {
                    flat_key: key,
                    key,
                    value: ArgValue::Str(value),
                });
            }
        }
        self.sink.args.push_shared(&args)
    }

    // ----- sched -----------------------------------------------------------------------
}
