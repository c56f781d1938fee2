//! The flow tracker: TrackEvent/v2 flow ids and JSON v1 flow events bound to slices.
//! Hands on flow rows.

use super::*;

#[derive(Default)]
pub(super) struct FlowState {
    /// TrackEvent `flow_ids` and v2 `bind_id`s pending at a slice.
    pub(super) pending: HashMap<u64, u32>,
    /// v1 flows keyed by (id, category, name) → (slice, trace_id).
    pub(super) v1_pending: HashMap<(u64, StrId, StrId), (u32, i64)>,
    pub(super) v1_ids: HashMap<(u64, StrId, StrId), i64>,
    /// Flows waiting for the next slice that begins on a track: (track, out slice, trace id).
    pub(super) waiting_next: Vec<(u32, u32, i64, ArgsRef)>,
}

impl<'s> Builder<'s> {
    pub(super) fn apply_flows(&mut self, flows: FlowsRef, slice: u32) {
        if flows == NO_FLOWS {
            return;
        }
        let ops: Vec<FlowOp> = self.sink.flow_ops(flows).to_vec();
        for op in ops {
            match op {
                FlowOp::Id(id) => {
                    if let Some(out) = self.flows.pending.insert(id, slice) {
                        self.flow_row(out, slice, id as i64);
                    }
                }
                FlowOp::Terminating(id) => {
                    if let Some(out) = self.flows.pending.remove(&id) {
                        self.flow_row(out, slice, id as i64);
                    }
                }
                FlowOp::V2Out(id) => {
                    self.flows.pending.insert(id, slice);
                }
                FlowOp::V2In(id) => match self.flows.pending.get(&id) {
                    Some(&out) => self.flow_row(out, slice, id as i64),
                    None => self.stat_slice("flow_end_without_start", slice),
                },
                FlowOp::V2Step(id) => match self.flows.pending.insert(id, slice) {
                    Some(out) => self.flow_row(out, slice, id as i64),
                    None => self.stat_slice("flow_step_without_start", slice),
                },
            }
        }
    }

    pub(super) fn flow_row(&mut self, out: u32, slice_in: u32, trace_id: i64) {
        // A flow always points forward in time.
        let (a, b) = if self.slice_ts.get(out as usize) <= self.slice_ts.get(slice_in as usize) {
            (out, slice_in)
        } else {
            (slice_in, out)
        };
        self.tables.flows.push(FlowRow {
            slice_out: a,
            slice_in: b,
            trace_id: Some(trace_id),
            args: NO_ARGS,
        });
    }

    pub(super) fn flow_v1(&mut self, ts: i64, f: &FlowV1Event) {
        let track = self.resolve_track(f.track);
        // Async keys pick their track per slice; a flow event cannot name one.
        if track == u32::MAX {
            return;
        }
        self.clean_stack(track, ts, 0);
        let top = self.stacks[track as usize].last().map(|e| e.slice);
        let key = (f.id, f.category, f.name);
        let next_id = self.flows.v1_ids.len() as i64;
        let trace_id = *self.flows.v1_ids.entry(key).or_insert(next_id);
        let machine = self.tables.tracks[track as usize].machine;
        match f.phase {
            FlowV1Phase::Start => match top {
                Some(s) => {
                    if self.flows.v1_pending.insert(key, (s, trace_id)).is_some() {
                        self.stat("flow_duplicate_id", machine);
                    }
                }
                None => self.stat("flow_no_enclosing_slice", machine),
            },
            FlowV1Phase::Step => {
                let Some(&(out, _)) = self.flows.v1_pending.get(&key) else {
                    self.stat("flow_step_without_start", machine);
                    return;
                };
                let Some(s) = top else {
                    self.stat("flow_no_enclosing_slice", machine);
                    return;
                };
                let args = self.v1_args(f);
                self.tables.flows.push(FlowRow {
                    slice_out: out,
                    slice_in: s,
                    trace_id: Some(trace_id),
                    args,
                });
                self.flows.v1_pending.insert(key, (s, trace_id));
            }
            FlowV1Phase::End => {
                let Some(&(out, _)) = self.flows.v1_pending.get(&key) else {
                    self.stat("flow_end_without_start", machine);
                    return;
                };
                let args = self.v1_args(f);
                match (f.bind_enclosing, top) {
                    (true, Some(s)) => self.tables.flows.push(FlowRow {
                        slice_out: out,
                        slice_in: s,
                        trace_id: Some(trace_id),
                        args,
                    }),
                    _ => self.flows.waiting_next.push((track, out, trace_id, args)),
                }
            }
        }
    }

    pub(super) fn v1_args(&mut self, f: &FlowV1Event) -> ArgsRef {
        let name = self.sink.intern("name");
        let cat = self.sink.intern("cat");
        let mut args = Vec::new();
        if f.name != NULL_STR {
            args.push(Arg {
                flat_key: name,
                key: name,
                value: ArgValue::Str(f.name),
            });
        }
        if f.category != NULL_STR {
            args.push(Arg {
                flat_key: cat,
                key: cat,
                value: ArgValue::Str(f.category),
            });
        }
        self.sink.args.push(&args)
    }

    // ----- sched -----------------------------------------------------------------------
}
