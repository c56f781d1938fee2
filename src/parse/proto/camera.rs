//! Android camera frames (`android_camera_frame_event`), as Trace Processor's
//! AndroidCameraEventModule reads them: each frame is a slice `Frame <frame_number>` on the
//! global track set `Camera <camera_id> Frames` (one lane per frame in flight at once),
//! from `request_processing_started_ns` (which also places the packet in time, in trace
//! time like the packet's own timestamp) to `responses_all_sent_ns`.
//!
//! `android_camera_session_stats` is not read by the reference either (no table holds a
//! session's graph): it stays counted in `proto_packet_kind_not_imported`.
//!
//! Hands on `Complete` slices on `AsyncScoped` tracks.

use super::*;

impl Parser<'_> {
    /// `android_camera_frame_event`: one frame's processing, as a slice.
    pub(super) fn camera_frame(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ev: &protos::AndroidCameraFrameEvent,
    ) {
        let camera = ev.camera_id.unwrap_or(0);
        let frame = ev.frame_number.unwrap_or(0);
        let start = ev.request_processing_started_ns.unwrap_or(0);
        let dur = ev.responses_all_sent_ns.unwrap_or(0).wrapping_sub(start);
        let set = AsyncSet {
            kind: "android_camera_event",
            machine,
            process: None,
            name: self.sink.intern(&format!("Camera {camera} Frames")),
            scope: NULL_STR,
        };
        let track = self.sink.track(TrackKey::AsyncScoped { set });
        let slice = SliceEvent {
            track,
            category: NULL_STR,
            name: self.sink.intern(&format!("Frame {frame}")),
            args: NO_ARGS,
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        let clock = self.clock(machine, seq_id, clocks::UNCONVERTED);
        let data = EventData::Complete {
            slice,
            dur,
            thread_dur: NO_TS,
        };
        self.sink.push(start, clock, data);
    }
}
