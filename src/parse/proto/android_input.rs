//! Android input events (`winscope_extensions` → `android_input_event`, the input
//! dispatcher's trace), as Trace Processor's AndroidInputEventModule reads them: a motion
//! event (or its redacted form) becomes an `android_motion_events` row, a key event an
//! `android_key_events` row, a dispatch to a window an `android_input_event_dispatch` row.
//! Each row keeps the event's id, its time (`event_time_nanos`, as the event has it: not
//! converted to trace time), for a dispatch the vsync and window ids, every field of the
//! message as args (reflected by field name: `pointer[0].axis_value[1].value`, …) and the
//! message itself in base64. Window manager, input method and view capture entries go to
//! `winscope.rs`; other extensions are not imported and are counted in `proto_packet_kind_not_imported` (idx 112).
//!
//! Hands on [`EventData::InputEvent`] rows.

use super::schema::{next_field, Value};
use super::typed_args::field_scalar;
use super::*;

/// `WinscopeExtensionsImpl.android_input_event`.
const ANDROID_INPUT_EVENT: u32 = 5;
/// `WinscopeExtensionsImpl.viewcapture` (read in `winscope.rs`, as the window manager and
/// input method entries).
const VIEWCAPTURE: u32 = 4;
/// The TracePacket field of winscope extensions.
const WINSCOPE_EXTENSIONS: i64 = 112;

impl Parser<'_> {
    /// `winscope_extensions`: the input events it holds, or a count of what it holds else.
    pub(super) fn winscope_extensions(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        bytes: &[u8],
    ) {
        let mut rest = bytes;
        let mut imported = false;
        while let Some((number, value)) = next_field(&mut rest) {
            match (number, value) {
                (ANDROID_INPUT_EVENT, Value::Len(event)) => {
                    imported |= self.android_input_event(machine, seq_id, ts, clock, event);
                }
                (VIEWCAPTURE, Value::Len(entry)) => {
                    self.viewcapture(machine, seq_id, ts, clock, entry);
                    imported = true;
                }
                (_, Value::Len(entry)) => {
                    imported |= self.winscope_entry(machine, seq_id, ts, clock, number, entry);
                }
                _ => {}
            }
        }
        if !imported {
            self.sink.stat_indexed(
                "proto_packet_kind_not_imported",
                Some(WINSCOPE_EXTENSIONS),
                machine,
                1,
            );
        }
    }

    /// One `AndroidInputEvent` (its `event` oneof); whether it made a row.
    fn android_input_event(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        bytes: &[u8],
    ) -> bool {
        let mut rest = bytes;
        let mut made = false;
        while let Some((number, value)) = next_field(&mut rest) {
            let Value::Len(message) = value else {
                continue;
            };
            let (kind, type_name) = match number {
                1 | 2 => (
                    InputEventKind::Motion,
                    ".perfetto.protos.AndroidMotionEvent",
                ),
                3 | 4 => (InputEventKind::Key, ".perfetto.protos.AndroidKeyEvent"),
                5 | 6 => (
                    InputEventKind::Dispatch,
                    ".perfetto.protos.AndroidWindowInputDispatchEvent",
                ),
                _ => continue,
            };
            let signed = |v: u64| v as i64;
            let event_id = field_scalar(message, 1).map_or(0, signed);
            let (event_ts, vsync_id, window_id) = match kind {
                InputEventKind::Dispatch => (
                    None,
                    field_scalar(message, 2).map(signed),
                    field_scalar(message, 3).map(|v| i64::from(v as i32)),
                ),
                _ => (Some(field_scalar(message, 2).map_or(0, signed)), None, None),
            };
            let mut args = std::mem::take(&mut self.args);
            args.clear();
            let unknown =
                self.reflect_proto_value(&mut args, "", type_name, message, machine, seq_id);
            if unknown > 0 {
                self.sink
                    .stat("android_input_event_parse_errors", machine, unknown);
            }
            let args_ref = self.sink.args.push(&args.args);
            self.args = args;
            let base64 = self.sink.intern(&chrome::base64(message));
            let row = InputEventRow {
                kind,
                event_id,
                ts: event_ts,
                vsync_id,
                window_id,
                args: args_ref,
                base64,
            };
            self.sink
                .push(ts, clock, EventData::InputEvent(Box::new(row)));
            made = true;
        }
        made
    }
}
