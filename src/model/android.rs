//! Android trackers: SurfaceFlinger's FrameTimeline (frames paired by cookie on the
//! per-process "Expected Timeline" / "Actual Timeline" track sets, expected surface frames
//! deduplicated per process and token, surface → display flows), `android_logs` rows, and
//! the tracks of Android / system probes (their dimensions, unit and track args). Hands on
//! slices to the slice tracker, flows to the flow table and log rows to the tables.

use super::*;

/// What the FrameTimeline tracker remembers between events.
#[derive(Default)]
pub(super) struct FrameTimelineState {
    /// Open cookies: the set their slice went to, and whether a slice was made (not for a
    /// duplicate expected surface frame).
    cookies: FxHashMap<(MachineId, i64), (AsyncSet, bool)>,
    /// Expected surface frames seen, per (upid, token).
    expected_surfaces: std::collections::HashSet<(u32, i64)>,
    /// Actual surface frame slices waiting for their display frame, by display token.
    surfaces_by_display: FxHashMap<(MachineId, i64), Vec<u32>>,
    /// Each GPU counter track's last sample (ts, args) and how many it had.
    gpu_pending: FxHashMap<u32, (i64, ArgsRef, u32)>,
    gpu_first: FxHashMap<u32, f64>,
}

const EXPECTED_TIMELINE: &str = "Expected Timeline";
const ACTUAL_TIMELINE: &str = "Actual Timeline";

impl Builder<'_> {
    pub(super) fn frame_start(&mut self, ts: i64, f: &FrameStart) {
        let machine = f.process.machine;
        let upid = self.process(f.process);
        let expected = matches!(
            f.kind,
            FrameKind::ExpectedDisplay | FrameKind::ExpectedSurface
        );
        let (kind, name) = if expected {
            ("android_expected_frame_timeline", EXPECTED_TIMELINE)
        } else {
            ("android_actual_frame_timeline", ACTUAL_TIMELINE)
        };
        let set = AsyncSet {
            kind,
            machine,
            process: Some(f.process),
            name: self.sink.intern(name),
            scope: NULL_STR,
        };
        if f.kind == FrameKind::ExpectedSurface
            && !self.frames.expected_surfaces.insert((upid, f.token))
        {
            // The same expected surface frame again: no slice, but its end is paired.
            self.frames
                .cookies
                .insert((machine, f.cookie), (set, false));
            return;
        }
        self.frames.cookies.insert((machine, f.cookie), (set, true));
        let key = TrackKey::AsyncCookie {
            set,
            cookie: f.cookie as u64,
        };
        let track = self.async_track(key, ts, AsyncPhase::Begin);
        let slice = SliceEvent {
            track: 0,
            category: NULL_STR,
            name: self.sink.intern(&f.token.to_string()),
            args: f.args,
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        self.note_ts(ts);
        let Some(id) = self.begin(track, ts, &slice) else {
            return;
        };
        match f.kind {
            FrameKind::ActualSurface => self
                .frames
                .surfaces_by_display
                .entry((machine, f.display_token))
                .or_default()
                .push(id),
            FrameKind::ActualDisplay => {
                let waiting = self
                    .frames
                    .surfaces_by_display
                    .remove(&(machine, f.token))
                    .unwrap_or_default();
                for surface in waiting {
                    self.tables.flows.push(FlowRow {
                        slice_out: surface,
                        slice_in: id,
                        trace_id: None,
                        args: NO_ARGS,
                    });
                }
            }
            _ => {}
        }
    }

    pub(super) fn frame_end(&mut self, ts: i64, machine: MachineId, cookie: i64) {
        let Some((set, _made_slice)) = self.frames.cookies.remove(&(machine, cookie)) else {
            let mrow = self.machine_row(machine);
            self.stat("frame_timeline_unpaired_end_event", mrow);
            return;
        };
        // A duplicate's end still goes through the track compressor (which may make a
        // track for the cookie), and ends nothing there.
        let key = TrackKey::AsyncCookie {
            set,
            cookie: cookie as u64,
        };
        let track = self.async_track(key, ts, AsyncPhase::End);
        let end = SliceEvent {
            track: 0,
            category: NULL_STR,
            name: NULL_STR,
            args: NO_ARGS,
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        self.note_ts(ts);
        self.end(track, ts, &end);
    }

    pub(super) fn is_gpu_counter(&self, track: TrackRef) -> bool {
        match self.sink.tracks.get(track) {
            TrackKey::Probe(id) => self.sink.probe_tracks.get(*id).kind == "gpu_counter",
            _ => false,
        }
    }

    /// A GPU counter sample closes the interval the one before it opened: its value is
    /// written at the previous sample's time (in time order). The last sample's interval
    /// never closes: 0, unless it was the track's only sample.
    pub(super) fn gpu_counter(&mut self, ts: i64, track: u32, value: f64, args: ArgsRef) {
        let pending = self.frames.gpu_pending.get(&track).copied();
        if let Some((at, at_args, _)) = pending {
            self.push_counter_row(at, track, value, at_args);
        }
        let count = pending.map_or(0, |p| p.2) + 1;
        self.frames.gpu_pending.insert(track, (ts, args, count));
        if count == 1 {
            // Remembered for a lone sample.
            self.frames.gpu_first.insert(track, value);
        }
    }

    pub(super) fn finish_gpu_counters(&mut self) {
        let mut pending: Vec<(u32, (i64, ArgsRef, u32))> =
            self.frames.gpu_pending.drain().collect();
        pending.sort_unstable_by_key(|&(track, (ts, _, _))| (ts, track));
        for (track, (ts, args, count)) in pending {
            let value = if count == 1 {
                self.frames.gpu_first.get(&track).copied().unwrap_or(0.0)
            } else {
                0.0
            };
            self.push_counter_row(ts, track, value, args);
        }
    }

    fn push_counter_row(&mut self, ts: i64, track: u32, value: f64, args: ArgsRef) {
        let row = CounterRow {
            ts,
            track,
            value,
            args,
        };
        self.out.counter(self.tables.counter_count, &row, self.sink);
        self.tables.counter_count += 1;
    }

    /// A systemd journal entry; its thread (when it names one) is bound to its process.
    pub(super) fn journald(&mut self, ts: i64, entry: &JournaldEntry) {
        let utid = entry.thread.map(|t| self.thread(t));
        self.note_ts(ts);
        self.tables.journald.push((ts, utid, *entry));
    }

    pub(super) fn android_log(&mut self, ts: i64, log: &LogLine) {
        let utid = self.thread(log.thread);
        self.note_ts(ts);
        self.tables.android_logs.push(AndroidLogRow {
            ts,
            utid,
            prio: log.prio,
            tag: log.tag,
            msg: log.msg,
        });
    }

    /// The track of a probe: its scope's dimension first, then the probe's own.
    pub(super) fn probe_track(&mut self, id: u32) -> u32 {
        let p = *self.sink.probe_tracks.get(id);
        let mrow = self.machine_row(p.machine);
        let event_type = if p.slices {
            TrackEventType::Slice
        } else {
            TrackEventType::Counter
        };
        let mut row = TrackRow::new(p.name, p.kind, mrow, event_type);
        let mut dims = Vec::new();
        match p.scope {
            ProbeScope::Global => {}
            ProbeScope::Cpu(cpu) => {
                self.cpu(p.machine, cpu);
                row.cpu = Some(cpu);
                dims.push(self.sink.static_arg("cpu", ArgValue::Uint(u64::from(cpu))));
            }
            ProbeScope::Process(process) => {
                let upid = self.process(process);
                row.machine = self.tables.processes[upid as usize].machine;
                row.upid = Some(upid);
                dims.push(
                    self.sink
                        .static_arg("upid", ArgValue::Uint(u64::from(upid))),
                );
            }
        }
        dims.extend_from_slice(self.sink.args.get(p.dims));
        row.extra_dims = self.sink.args.push_shared(&dims);
        row.own_dims = true;
        row.unit = p.unit;
        row.description = p.description;
        row.source_args = p.source_args;
        self.new_track(row)
    }
}
