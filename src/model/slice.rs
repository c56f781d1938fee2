//! The slice tracker: one stack per track, begin/end matching, complete and instant
//! slices, overlap handling and its import logs, end args merged into the begin's.
//! Hands on finished slice rows to the row sink.

use super::*;

/// Slices at this depth or deeper are dropped (`slice_max_depth_exceeded`), as the
/// reference's slice tracker does.
const MAX_SLICE_DEPTH: usize = 512;

#[derive(Clone, Copy)]
pub(super) struct StackEntry {
    pub(super) slice: u32,
    pub(super) ts: i64,
    /// −1 while open.
    pub(super) dur: i64,
}

impl StackEntry {
    fn end(&self) -> Option<i64> {
        (self.dur >= 0).then(|| self.ts.saturating_add(self.dur))
    }
}

/// What a Complete event does when it overlaps its parent partially.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Overlap {
    Drop,
    Spill,
}

/// An End's args merged into its slice's, as Trace Processor's args tracker does: a key
/// already present takes the End's value, and an array the slice already has is extended
/// (the End's `a[0]` becomes `a[n]` after the slice's n entries) rather than overwritten.
pub(super) fn merge_end_args(begin: &[Arg], end: &[Arg], sink: &mut Sink) -> Vec<Arg> {
    let mut merged = begin.to_vec();
    // Next free index of each array of the slice, by the key up to its first `[`.
    let mut next_index: HashMap<String, u64> = HashMap::new();
    for arg in begin {
        let Some(key) = sink.strings.get(arg.key) else {
            continue;
        };
        if let Some((prefix, index)) = first_array_index(key) {
            let next = next_index.entry(prefix.to_string()).or_insert(0);
            *next = (*next).max(index.saturating_add(1));
        }
    }
    for arg in end {
        let mut arg = *arg;
        let renamed = sink.strings.get(arg.key).and_then(|key| {
            let (prefix, index) = first_array_index(key)?;
            let base = *next_index.get(prefix)?;
            let open = prefix.len();
            let close = open + key[open..].find(']')?;
            Some(format!(
                "{prefix}[{}{}",
                base.saturating_add(index),
                &key[close..]
            ))
        });
        if let Some(key) = renamed {
            arg.key = sink.intern(&key);
        }
        match merged.iter_mut().find(|a| a.key == arg.key) {
            Some(existing) => *existing = arg,
            None => merged.push(arg),
        }
    }
    merged
}

/// `("a.b", 3)` for the key `a.b[3].c`.
pub(super) fn first_array_index(key: &str) -> Option<(&str, u64)> {
    let open = key.find('[')?;
    let close = open + key[open..].find(']')?;
    let index = key[open + 1..close].parse().ok()?;
    Some((&key[..open], index))
}

impl<'s> Builder<'s> {
    /// Pops what has ended before `ts` (Trace Processor's stack cleaning).
    pub(super) fn clean_stack(&mut self, track: u32, ts: i64, new_dur: i64) {
        loop {
            let stack = &mut self.stacks[track as usize];
            let Some(top) = stack.last().copied() else {
                return;
            };
            if let Some(end) = top.end() {
                let same_ts_instants = top.dur == 0 && new_dur == 0 && end == ts;
                if end < ts || (end == ts && !same_ts_instants) {
                    stack.pop();
                    self.emit_slice(top.slice);
                    continue;
                }
                return;
            }
            // The top is open: a completed slice below it that has ended (the new time is
            // past its end, not at it) means the open ones above it were never closed in
            // time.
            let below = stack
                .iter()
                .rposition(|e| e.end().is_some_and(|end| end < ts && e.dur >= 0));
            let Some(i) = below else {
                return;
            };
            let end = stack[i].end().unwrap_or(ts);
            let closing: Vec<StackEntry> = stack.drain(i + 1..).collect();
            for e in closing.into_iter().rev() {
                if e.dur < 0 {
                    if let Some(row) = self.live_slices.get_mut(&e.slice) {
                        row.dur = end - e.ts;
                    }
                }
                self.emit_slice(e.slice);
            }
            let m = self.tables.tracks[track as usize].machine;
            self.stat("misplaced_end_event", m);
        }
    }

    /// A stat that also gets a `_trace_import_logs` row with the args explaining it.
    pub(super) fn log(
        &mut self,
        name: &'static str,
        machine_row: u32,
        ts: i64,
        args: Vec<(&'static str, ArgValue)>,
    ) {
        self.stat(name, machine_row);
        let set: Vec<Arg> = args
            .into_iter()
            .map(|(k, value)| {
                let key = self.sink.intern(k);
                Arg {
                    flat_key: key,
                    key,
                    value,
                }
            })
            .collect();
        let args = self.sink.args.push(&set);
        self.tables.import_logs.push(ImportLogRow {
            ts: Some(ts),
            byte_offset: None,
            name,
            file: self.event_file,
            args,
        });
    }

    /// Counts `name` in the (machine, file) context of the event being applied: the file
    /// that event came from (the model runs after every file was read, so the sink's
    /// current file is the last one), else, outside an event, the sink's current file.
    pub(super) fn stat(&mut self, name: &'static str, machine_row: u32) {
        let raw = machine_row as MachineId;
        let file = if self.event_file != NO_FILE {
            self.event_file
        } else {
            self.sink.current_file
        };
        *self
            .sink
            .stats
            .entry(StatKey {
                name,
                idx: None,
                machine: raw,
                file,
            })
            .or_insert(0) += 1;
    }

    /// Sets the indexed stat `name` of `machine` (a raw machine id) to `v` in the context
    /// of the event being applied, as [`Self::stat`] counts.
    pub(super) fn set_indexed_stat(
        &mut self,
        name: &'static str,
        idx: i64,
        machine: MachineId,
        v: i64,
    ) {
        let file = if self.event_file != NO_FILE {
            self.event_file
        } else {
            self.sink.current_file
        };
        let key = StatKey {
            name,
            idx: Some(idx),
            machine,
            file,
        };
        if self.sink.stats.insert(key, v).is_none() {
            self.sink.stat_order.push(key);
        }
    }

    /// A slice would sit at depth `MAX_SLICE_DEPTH` or deeper: it is dropped, logged with
    /// the names of its would-be parent and itself (behaviour-parsers §0.1).
    fn too_deep(&mut self, track: u32, ts: i64, ev: &SliceEvent) -> bool {
        let stack = &self.stacks[track as usize];
        if stack.len() < MAX_SLICE_DEPTH {
            return false;
        }
        let parent = stack
            .last()
            .and_then(|e| self.live_slices.get(&e.slice))
            .map_or(NULL_STR, |r| r.name);
        let machine = self.tables.tracks[track as usize].machine;
        let args = vec![
            ("parent_slice_name", str_or_null(parent)),
            ("current_slice_name", str_or_null(ev.name)),
        ];
        self.log("slice_max_depth_exceeded", machine, ts, args);
        true
    }

    pub(super) fn push_slice(
        &mut self,
        track: u32,
        ts: i64,
        dur: i64,
        ev: &SliceEvent,
        thread_dur: i64,
    ) -> u32 {
        let stack = &self.stacks[track as usize];
        let depth = stack.len() as u32;
        let parent = stack.last().map(|e| e.slice);
        let id = self.slice_ts.len() as u32;
        self.slice_ts.push(ts);
        let name = self.translated_name(ev.name);
        self.live_slices.insert(
            id,
            SliceRow {
                ts,
                dur,
                track,
                category: ev.category,
                name,
                depth,
                parent,
                args: ev.args,
                thread_ts: ev.thread_ts,
                thread_dur,
                thread_ic: self.slice_ic.0,
                // A begin's delta comes with its end; a complete slice has its own.
                thread_ic_delta: if dur < 0 { NO_TS } else { self.slice_ic.1 },
                file: self.event_file,
            },
        );
        self.stacks[track as usize].push(StackEntry { slice: id, ts, dur });
        let track_row = &mut self.tables.tracks[track as usize];
        if track_row.name_from_first_event && track_row.name == NULL_STR {
            track_row.name = ev.name;
        }
        // Flows waiting for the next slice on this track.
        self.close_waiting_flows(track, id);
        id
    }

    /// A TranslationTable's slice_name rules rename slices as they are inserted, and an
    /// End's name is translated the same way before it is matched (Trace Processor's
    /// SliceTracker translates the raw name in Begin, End and Scoped alike).
    fn translated_name(&self, name: StrId) -> StrId {
        let renames = &self.sink.translations.slice_name;
        if renames.is_empty() {
            name
        } else {
            renames.get(&name).copied().unwrap_or(name)
        }
    }

    pub(super) fn begin(&mut self, track: u32, ts: i64, ev: &SliceEvent) -> Option<u32> {
        if track == u32::MAX {
            return None;
        }
        self.clean_stack(track, ts, -1);
        if self.too_deep(track, ts, ev) {
            return None;
        }
        let id = self.push_slice(track, ts, -1, ev, NO_TS);
        self.apply_flows(ev.flows, track, id);
        Some(id)
    }

    /// A Begin on a legacy unnestable track: nothing while the track has an open slice.
    pub(super) fn begin_unnestable(&mut self, track: u32, ts: i64, ev: &SliceEvent) -> Option<u32> {
        if track == u32::MAX {
            return None;
        }
        let state = self.unnestable.entry(track).or_insert((0, 0));
        state.0 += 1;
        state.1 = ts;
        if !self.stacks[track as usize].is_empty() {
            return None;
        }
        self.begin(track, ts, ev)
    }

    pub(super) fn end(&mut self, track: u32, ts: i64, ev: &SliceEvent) -> Option<u32> {
        if track == u32::MAX {
            return None;
        }
        self.clean_stack(track, ts, -1);
        let end_name = self.translated_name(ev.name);
        let stack = &self.stacks[track as usize];
        let mut found = None;
        for (i, e) in stack.iter().enumerate().rev() {
            if e.dur >= 0 {
                continue;
            }
            let Some(row) = self.live_slices.get(&e.slice) else {
                continue;
            };
            if ev.category != NULL_STR && row.category != ev.category {
                continue;
            }
            if end_name != NULL_STR && row.name != NULL_STR && row.name != end_name {
                continue;
            }
            found = Some(i);
            break;
        }
        let i = found?;
        let entry = self.stacks[track as usize][i];
        let dur = ts - entry.ts;
        let row = self.live_slices.get_mut(&entry.slice)?;
        row.dur = dur;
        if ev.thread_ts != NO_TS && row.thread_ts != NO_TS {
            row.thread_dur = ev.thread_ts - row.thread_ts;
        }
        if self.slice_ic.0 != NO_TS && row.thread_ic != NO_TS {
            row.thread_ic_delta = self.slice_ic.0 - row.thread_ic;
        }
        let begin_args = row.args;
        // End args merge into the slice's (same key: End wins); a legacy unnestable track
        // adds its begin count and last begin ts.
        let mut extra: Vec<Arg> = self.sink.args.get(ev.args).to_vec();
        if let Some(&(count, last)) = self.unnestable.get(&track) {
            for (k, v) in [
                ("legacy_unnestable_begin_count", count),
                ("legacy_unnestable_last_begin_ts", last),
            ] {
                let key = self.sink.intern(k);
                extra.push(Arg {
                    flat_key: key,
                    key,
                    value: ArgValue::Int(v),
                });
            }
        }
        if !extra.is_empty() {
            let begin: Vec<Arg> = self.sink.args.get(begin_args).to_vec();
            let merged = merge_end_args(&begin, &extra, self.sink);
            let merged = self.sink.args.push(&merged);
            if let Some(row) = self.live_slices.get_mut(&entry.slice) {
                row.args = merged;
            }
        }
        self.apply_flows(ev.flows, track, entry.slice);
        let stack = &mut self.stacks[track as usize];
        if i == stack.len() - 1 {
            stack.pop();
            self.emit_slice(entry.slice);
        } else {
            stack[i].dur = dur;
        }
        Some(entry.slice)
    }

    pub(super) fn complete(
        &mut self,
        track: u32,
        ts: i64,
        dur: i64,
        thread_dur: i64,
        ev: &SliceEvent,
        overlap: Overlap,
    ) -> Option<u32> {
        if track == u32::MAX {
            return None;
        }
        let machine = self.tables.tracks[track as usize].machine;
        if dur < 0 {
            self.log("slice_negative_duration", machine, ts, Vec::new());
            return None;
        }
        self.clean_stack(track, ts, dur);
        let end = ts.saturating_add(dur);
        let conflict = self.stacks[track as usize]
            .last()
            .copied()
            .filter(|top| top.end().is_some_and(|parent_end| end > parent_end));
        let track = if let Some(parent) = conflict {
            let parent_name = self
                .live_slices
                .get(&parent.slice)
                .map_or(NULL_STR, |r| r.name);
            let mut args = vec![
                ("overlap_start", ArgValue::Int(ts)),
                ("overlap_end", ArgValue::Int(parent.end().unwrap_or(ts))),
                ("conflicting_slice_name", str_or_null(parent_name)),
                ("conflicting_slice_ts", ArgValue::Int(parent.ts)),
                ("conflicting_slice_dur", ArgValue::Int(parent.dur)),
            ];
            match overlap {
                Overlap::Drop => {
                    self.log("slice_drop_overlapping_complete_event", machine, ts, args);
                    return None;
                }
                Overlap::Spill => {
                    let phase = self.sink.intern("X");
                    args.push(("event_name", str_or_null(ev.name)));
                    args.push(("event_phase", ArgValue::Str(phase)));
                    self.log("slice_spill_overlapping_complete_event", machine, ts, args);
                    let utid = self.tables.tracks[track as usize].utid;
                    match utid {
                        Some(utid) => self.overlap_lane(utid, ts, dur),
                        None => return None,
                    }
                }
            }
        } else {
            track
        };
        if self.too_deep(track, ts, ev) {
            return None;
        }
        let id = self.push_slice(track, ts, dur, ev, thread_dur);
        self.apply_flows(ev.flows, track, id);
        Some(id)
    }

    /// First overflow lane where a partially overlapping slice nests, else a new lane.
    pub(super) fn overlap_lane(&mut self, utid: u32, ts: i64, dur: i64) -> u32 {
        let lanes = self
            .thread_overlap_tracks
            .get(&utid)
            .cloned()
            .unwrap_or_default();
        for lane in &lanes {
            self.clean_stack(*lane, ts, dur);
            let fits = match self.stacks[*lane as usize].last().and_then(|e| e.end()) {
                None => true,
                Some(parent_end) => ts.saturating_add(dur) <= parent_end,
            };
            if fits {
                return *lane;
            }
        }
        let machine = self.tables.threads[utid as usize].machine;
        let mut row = TrackRow::new(
            NULL_STR,
            "thread_overlapping_slice",
            machine,
            TrackEventType::Slice,
        );
        row.utid = Some(utid);
        row.compressor_idx = Some(lanes.len() as u32);
        let lane = self.new_track(row);
        self.thread_overlap_tracks
            .entry(utid)
            .or_default()
            .push(lane);
        lane
    }

    /// A popped slice is final: hand it to the writer.
    pub(super) fn emit_slice(&mut self, id: u32) {
        if let Some(row) = self.live_slices.remove(&id) {
            self.out.slice(id, &row, self.sink);
            self.tables.slice_count += 1;
        }
    }
}

impl Builder<'_> {
    /// A TrackEvent's callstack, on the slice its event (pushed just before) made or
    /// closed: one `__intrinsic_track_event_callstacks` row per slice, the begin's callsite
    /// and the end's.
    pub(super) fn slice_callstack(&mut self, ts: i64, cs: &SliceCallstack) {
        let Some((at, slice, track)) = self.last_slice else {
            return;
        };
        if at != ts {
            return;
        }
        let rows = &mut self.tables.track_event_callstacks;
        let row = match rows.iter().rposition(|r| r.slice == slice) {
            Some(i) if cs.end => &mut rows[i],
            _ => {
                rows.push(CallstackRow {
                    slice,
                    track,
                    callsite: None,
                    end_callsite: None,
                    weight: None,
                });
                let last = rows.len() - 1;
                &mut rows[last]
            }
        };
        if cs.end {
            row.end_callsite = Some(cs.callsite);
        } else {
            row.callsite = Some(cs.callsite);
        }
        if let Some(w) = cs.weight {
            row.weight = Some(w.0);
        }
    }
}
