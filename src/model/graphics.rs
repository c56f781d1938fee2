//! The graphics frame tracker: SurfaceFlinger's buffer events (GraphicsFrameEvent). Each
//! event is an instant on its buffer's track (`Buffer: <id> <layer>`), and moves the frame
//! through its phases, each a slice named by the frame number on a track of its own: APP
//! (dequeued → queued), GPU (queued → acquire fence signaled, unless it signaled first),
//! SF (latched → present fence signaled) and Display (one present fence of the layer to the
//! next). A present fence's instant also gets the frame's queue → acquire → latch →
//! present times (`frame_slice` columns). Hands on slices to the slice tracker.

use std::collections::HashSet;

use super::*;

#[derive(Default)]
pub(super) struct GraphicsState {
    /// Tracks by (machine, name).
    tracks: HashMap<(MachineId, String), u32>,
    /// Frames whose acquire fence signaled before they were queued:
    /// (machine, layer, buffer, frame number).
    acquired: HashSet<(MachineId, StrId, u32, u32)>,
    /// The last time each kind of event happened to a (machine, buffer, layer): what a
    /// present fence's timings are measured from (0 when it never happened, as in Trace
    /// Processor's per-buffer map).
    last: HashMap<(MachineId, u32, StrId), HashMap<i32, i64>>,
}

fn event_name(kind: i32) -> &'static str {
    match kind {
        1 => "Dequeue",
        2 => "Queue",
        3 => "Post",
        4 => "AcquireFenceSignaled",
        5 => "Latch",
        6 => "HWCCompositionQueued",
        7 => "FallbackComposition",
        8 => "PresentFenceSignaled",
        9 => "ReleaseFenceSignaled",
        10 => "Modify",
        11 => "Detach",
        12 => "Attach",
        13 => "Cancel",
        _ => "unknown_event",
    }
}

const DEQUEUE: i32 = 1;
const QUEUE: i32 = 2;
const ACQUIRE_FENCE: i32 = 4;
const LATCH: i32 = 5;
const PRESENT_FENCE: i32 = 8;

impl Builder<'_> {
    fn graphics_track(&mut self, machine: MachineId, name: String) -> u32 {
        if let Some(&t) = self.graphics.tracks.get(&(machine, name.clone())) {
            return t;
        }
        let mrow = self.machine_row(machine);
        let id = self.sink.intern(&name);
        let t = self.new_track(TrackRow::new(
            id,
            "graphics_frame_event",
            mrow,
            TrackEventType::Slice,
        ));
        self.graphics.tracks.insert((machine, name), t);
        t
    }

    fn existing_track(&self, machine: MachineId, name: String) -> Option<u32> {
        self.graphics.tracks.get(&(machine, name)).copied()
    }

    fn frame_args(&mut self, frame: u32, layer: StrId) -> ArgsRef {
        let args = [
            self.sink
                .static_arg("frame_number", ArgValue::Int(i64::from(frame))),
            self.sink.static_arg("layer_name", ArgValue::Str(layer)),
        ];
        self.sink.args.push_shared(&args)
    }

    fn frame_slice(&mut self, frame: u32, layer: StrId) -> SliceEvent {
        SliceEvent {
            track: 0,
            category: NULL_STR,
            name: self.sink.intern(&frame.to_string()),
            args: self.frame_args(frame, layer),
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        }
    }

    /// Ends the topmost open slice of a phase track, if it has one.
    fn end_phase(&mut self, track: Option<u32>, ts: i64) -> bool {
        let Some(track) = track else { return false };
        let open = self.stacks[track as usize].iter().any(|e| e.dur < 0);
        if open {
            let end = SliceEvent {
                track: 0,
                category: NULL_STR,
                name: NULL_STR,
                args: NO_ARGS,
                thread_ts: NO_TS,
                flows: NO_FLOWS,
            };
            self.end(track, ts, &end);
        }
        open
    }

    pub(super) fn buffer_event(&mut self, ts: i64, e: &BufferEvent) {
        let machine = e.machine;
        let layer = self.sink.strings.get(e.layer).unwrap_or("").to_string();
        let buffer = e.buffer_id;
        self.note_ts(ts);
        let track = self.graphics_track(machine, format!("Buffer: {buffer} {layer}"));
        let instant = SliceEvent {
            name: self.sink.intern(event_name(e.kind)),
            ..self.frame_slice(e.frame_number, e.layer)
        };
        let id = self.complete(
            track,
            ts,
            e.duration_ns.max(0),
            NO_TS,
            &instant,
            Overlap::Drop,
        );
        let last = self
            .graphics
            .last
            .entry((machine, buffer, e.layer))
            .or_default();
        last.insert(e.kind, ts);
        if e.kind == PRESENT_FENCE {
            // The frame's timings up to its presentation (a fence signaled before the
            // queue counts 0).
            let at = |kind: i32| last.get(&kind).copied().unwrap_or(0);
            let (queue, acquire, latch) = (at(QUEUE), at(ACQUIRE_FENCE), at(LATCH));
            if let Some(id) = id {
                self.tables.frame_times.push([
                    i64::from(id),
                    acquire.saturating_sub(queue).max(0),
                    latch.saturating_sub(acquire),
                    ts.saturating_sub(latch),
                ]);
            }
        }
        let frame = e.frame_number;
        match e.kind {
            DEQUEUE => {
                // The frame number is known once the buffer is queued.
                let app = self.graphics_track(machine, format!("APP_{buffer} {layer}"));
                let slice = self.frame_slice(0, e.layer);
                self.begin(app, ts, &slice);
            }
            QUEUE => {
                let app = self.existing_track(machine, format!("APP_{buffer} {layer}"));
                let top = app.and_then(|app| {
                    self.stacks[app as usize]
                        .iter()
                        .rev()
                        .find(|s| s.dur < 0)
                        .map(|s| s.slice)
                });
                if let Some(id) = top {
                    let named = self.frame_slice(frame, e.layer);
                    if let Some(row) = self.live_slices.get_mut(&id) {
                        row.name = named.name;
                        row.args = named.args;
                    }
                    self.end_phase(app, ts);
                }
                let key = (machine, e.layer, buffer, frame);
                if !self.graphics.acquired.remove(&key) {
                    let gpu = self.graphics_track(machine, format!("GPU_{buffer} {layer}"));
                    let slice = self.frame_slice(frame, e.layer);
                    self.begin(gpu, ts, &slice);
                }
            }
            ACQUIRE_FENCE => {
                let gpu = self.existing_track(machine, format!("GPU_{buffer} {layer}"));
                if !self.end_phase(gpu, ts) {
                    self.graphics
                        .acquired
                        .insert((machine, e.layer, buffer, frame));
                }
            }
            LATCH => {
                let sf = self.graphics_track(machine, format!("SF_{buffer} {layer}"));
                let slice = self.frame_slice(frame, e.layer);
                self.begin(sf, ts, &slice);
            }
            PRESENT_FENCE => {
                let sf = self.existing_track(machine, format!("SF_{buffer} {layer}"));
                self.end_phase(sf, ts);
                let name = format!("Display_{layer}");
                let open = self.existing_track(machine, name.clone());
                self.end_phase(open, ts);
                let display = self.graphics_track(machine, name);
                let slice = self.frame_slice(frame, e.layer);
                self.begin(display, ts, &slice);
            }
            _ => {}
        }
    }
}
