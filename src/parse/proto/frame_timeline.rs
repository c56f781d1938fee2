//! SurfaceFlinger's FrameTimeline (`TracePacket.frame_timeline_event`): expected and actual
//! display and surface frames. Checks each start (cookie, token, pid), spells out its
//! enums (present, prediction, jank type, severity, jank tag) into args in the reference's
//! order, and hands on `FrameStart` / `FrameEnd` events; the model pairs them by cookie on
//! the per-process "Expected Timeline" / "Actual Timeline" tracks and links surfaces to
//! displays.

use super::*;
use protos::frame_timeline_event::Event as Ft;

/// Jank type bits and their names, in the order the reference lists them.
const JANK_BITS: &[(i32, &str)] = &[
    (2, "SurfaceFlinger Scheduling"),
    (4, "Prediction Error"),
    (8, "Display HAL"),
    (16, "SurfaceFlinger CPU Deadline Missed"),
    (32, "SurfaceFlinger GPU Deadline Missed"),
    (64, "App Deadline Missed"),
    (4096, "App Resynced Jitter"),
    (128, "Buffer Stuffing"),
    (256, "Unknown Jank"),
    (512, "SurfaceFlinger Stuffing"),
    (1024, "Dropped Frame"),
    (2048, "Non Animating"),
    (8192, "Display not ON"),
    (16384, "ModeChange in progress"),
    (32768, "PowerModeChange in progress"),
];

/// A jank type bitmask as the reference spells it.
pub(crate) fn jank_type_name(jank: i32) -> String {
    match jank {
        0 => "Unspecified".into(),
        1 => "None".into(),
        _ => {
            let names: Vec<&str> = JANK_BITS
                .iter()
                .filter(|(bit, _)| jank & bit != 0)
                .map(|(_, name)| *name)
                .collect();
            names.join(", ")
        }
    }
}

fn display_janky(jank: i32) -> bool {
    !matches!(jank, 0 | 1 | 2048 | 8192) && jank & (2 | 4 | 8 | 16 | 32) != 0
}

fn surface_janky(jank: i32) -> bool {
    !matches!(jank, 0 | 1 | 2048 | 8192) && jank & (64 | 4096 | 256) != 0
}

fn display_jank_tag(jank: i32) -> &'static str {
    match jank {
        0 => "Unspecified",
        _ if display_janky(jank) => "Self Jank",
        512 => "SurfaceFlinger Stuffing",
        1024 => "Dropped Frame",
        2048 | 8192 | 32768 => "Non-perceivable Jank",
        _ => "No Jank",
    }
}

fn surface_jank_tag(jank: i32, present: Option<i32>) -> &'static str {
    match jank {
        0 => "Unspecified",
        _ if surface_janky(jank) => "Self Jank",
        _ if display_janky(jank) => "Other Jank",
        128 => "Buffer Stuffing",
        512 => "SurfaceFlinger Stuffing",
        _ if present == Some(4) => "Dropped Frame",
        2048 | 8192 | 32768 => "Non-perceivable Jank",
        _ => "No Jank",
    }
}

const PRESENT: [&str; 5] = [
    "On-time Present",
    "Late Present",
    "Early Present",
    "Dropped Frame",
    "Unknown Present",
];
const PREDICTION: [&str; 3] = [
    "Valid Prediction",
    "Expired Prediction",
    "Unknown Prediction",
];
const SEVERITY: [&str; 4] = ["Unknown", "None", "Partial", "Full"];

/// The fields actual display and surface frames share.
struct Actual {
    present_type: Option<i32>,
    on_time_finish: bool,
    gpu_composition: bool,
    jank_type: i32,
    prediction_type: Option<i32>,
    jank_severity_type: Option<i32>,
    jank_severity_score: f32,
}

impl Parser<'_> {
    pub(super) fn frame_timeline(
        &mut self,
        machine: MachineId,
        ts: Option<i64>,
        clock: ClockRef,
        ev: &protos::FrameTimelineEvent,
    ) {
        const ERR: &str = "frame_timeline_event_parser_errors";
        let Some(ts) = ts.filter(|t| (0..i64::MAX - 10_000_000_000).contains(t)) else {
            self.stat(ERR, machine);
            return;
        };
        let Some(event) = &ev.event else {
            self.stat(ERR, machine);
            return;
        };
        let start = match event {
            Ft::ExpectedDisplayFrameStart(e) => {
                let (Some(cookie), Some(token), Some(pid)) = (e.cookie, e.token, e.pid) else {
                    self.stat(ERR, machine);
                    return;
                };
                let args = [self.int_arg("Display frame token", token)];
                let args = self.sink.args.push(&args);
                (cookie, FrameKind::ExpectedDisplay, token, token, pid, args)
            }
            Ft::ExpectedSurfaceFrameStart(e) => {
                let (Some(cookie), Some(token), Some(pid), Some(display)) =
                    (e.cookie, e.token, e.pid, e.display_frame_token)
                else {
                    self.stat(ERR, machine);
                    return;
                };
                let layer = self.layer_arg(e.layer_name.as_deref());
                let args = [
                    self.int_arg("Surface frame token", token),
                    self.int_arg("Display frame token", display),
                    layer,
                ];
                let args = self.sink.args.push(&args);
                (
                    cookie,
                    FrameKind::ExpectedSurface,
                    token,
                    display,
                    pid,
                    args,
                )
            }
            Ft::ActualDisplayFrameStart(e) => {
                let (Some(cookie), Some(token), Some(pid)) = (e.cookie, e.token, e.pid) else {
                    self.stat(ERR, machine);
                    return;
                };
                let actual = Actual {
                    present_type: e.present_type,
                    on_time_finish: e.on_time_finish.unwrap_or(false),
                    gpu_composition: e.gpu_composition.unwrap_or(false),
                    jank_type: e.jank_type.unwrap_or(0),
                    prediction_type: e.prediction_type,
                    jank_severity_type: e.jank_severity_type,
                    jank_severity_score: e.jank_severity_score.unwrap_or(0.0),
                };
                let mut args = vec![
                    self.int_arg("Display frame token", token),
                    self.real_arg("Present Delay (ms)", e.present_delay_millis.unwrap_or(0.0)),
                ];
                self.actual_args(machine, &actual, false, &mut args);
                let args = self.sink.args.push(&args);
                (cookie, FrameKind::ActualDisplay, token, token, pid, args)
            }
            Ft::ActualSurfaceFrameStart(e) => {
                let (Some(cookie), Some(token), Some(pid), Some(display)) =
                    (e.cookie, e.token, e.pid, e.display_frame_token)
                else {
                    self.stat(ERR, machine);
                    return;
                };
                let actual = Actual {
                    present_type: e.present_type,
                    on_time_finish: e.on_time_finish.unwrap_or(false),
                    gpu_composition: e.gpu_composition.unwrap_or(false),
                    jank_type: e.jank_type.unwrap_or(0),
                    prediction_type: e.prediction_type,
                    jank_severity_type: e.jank_severity_type,
                    jank_severity_score: e.jank_severity_score.unwrap_or(0.0),
                };
                let mut args = vec![
                    self.int_arg("Surface frame token", token),
                    self.int_arg("Display frame token", display),
                    self.real_arg("Present Delay (ms)", e.present_delay_millis.unwrap_or(0.0)),
                    self.real_arg(
                        "Vsync Resynced Jitter (ms)",
                        e.vsync_resynced_jitter_millis.unwrap_or(0.0),
                    ),
                    self.layer_arg(e.layer_name.as_deref()),
                ];
                let is_buffer = match e.is_buffer {
                    Some(true) => "Yes",
                    Some(false) => "No",
                    None => "Unspecified",
                };
                self.actual_args(machine, &actual, true, &mut args);
                // `Is Buffer?` comes before the jank metadata, which `actual_args` ends with.
                let metadata = args.pop();
                let is_buffer = ArgValue::Str(self.sink.intern(is_buffer));
                args.push(self.sink.static_arg("Is Buffer?", is_buffer));
                args.extend(metadata);
                let args = self.sink.args.push(&args);
                (cookie, FrameKind::ActualSurface, token, display, pid, args)
            }
            Ft::FrameEnd(e) => {
                let Some(cookie) = e.cookie else {
                    self.stat(ERR, machine);
                    return;
                };
                self.sink
                    .push(ts, clock, EventData::FrameEnd { machine, cookie });
                return;
            }
        };
        let (cookie, kind, token, display_token, pid, args) = start;
        let start = FrameStart {
            process: ProcessRef {
                machine,
                pid: i64::from(pid),
            },
            cookie,
            kind,
            token,
            display_token,
            args,
        };
        self.sink
            .push(ts, clock, EventData::FrameStart(Box::new(start)));
    }

    fn int_arg(&mut self, key: &'static str, v: i64) -> Arg {
        self.sink.static_arg(key, ArgValue::Int(v))
    }

    fn real_arg(&mut self, key: &'static str, v: f32) -> Arg {
        self.sink.static_arg(key, ArgValue::Real(f64::from(v)))
    }

    fn str_arg(&mut self, key: &'static str, v: &str) -> Arg {
        let v = ArgValue::Str(self.sink.intern(v));
        self.sink.static_arg(key, v)
    }

    /// `Layer name`: a string arg, its value NULL when the event has none (not an arg of
    /// type `null`).
    fn layer_arg(&mut self, layer: Option<&str>) -> Arg {
        let v = ArgValue::Str(layer.map_or(NULL_STR, |l| self.sink.intern(l)));
        self.sink.static_arg("Layer name", v)
    }

    /// An enum's name: absent → the unspecified name; out of range (an explicit 0
    /// included) → the unspecified name and a parser error.
    fn frame_enum(
        &mut self,
        machine: MachineId,
        value: Option<i32>,
        names: &[&'static str],
        unspecified: &'static str,
    ) -> &'static str {
        match value {
            None => unspecified,
            Some(v) if v >= 1 && (v as usize) <= names.len() => names[v as usize - 1],
            Some(_) => {
                self.stat("frame_timeline_event_parser_errors", machine);
                unspecified
            }
        }
    }

    /// The args actual frames share, from `Present type` to `Jank Metadata`.
    fn actual_args(&mut self, machine: MachineId, a: &Actual, surface: bool, args: &mut Vec<Arg>) {
        let present = self.frame_enum(machine, a.present_type, &PRESENT, "Unspecified Present");
        // The experimental fields are not declared (later Android releases): absent.
        let present_exp = "Unspecified Present";
        let prediction = self.frame_enum(
            machine,
            a.prediction_type,
            &PREDICTION,
            "Unspecified Prediction",
        );
        let severity = match a.jank_severity_type {
            Some(v) => SEVERITY
                .get(usize::try_from(v).unwrap_or(0))
                .copied()
                .unwrap_or("Unknown"),
            None if a.jank_type == 1 => "None",
            None => "Unknown",
        };
        let valid_present = a.present_type.filter(|p| (1..=5).contains(p));
        let tag = if surface {
            surface_jank_tag(a.jank_type, valid_present)
        } else {
            display_jank_tag(a.jank_type)
        };
        let tag_exp = if surface {
            surface_jank_tag(0, None)
        } else {
            display_jank_tag(0)
        };
        let jank = jank_type_name(a.jank_type);
        args.push(self.str_arg("Present type", present));
        args.push(self.str_arg("Present type (experimental)", present_exp));
        args.push(self.int_arg("On time finish", i64::from(a.on_time_finish)));
        args.push(self.int_arg("GPU composition", i64::from(a.gpu_composition)));
        args.push(self.str_arg("Jank type", &jank));
        args.push(self.str_arg("Jank type (experimental)", "Unspecified"));
        args.push(self.str_arg("Jank severity type", severity));
        args.push(self.real_arg("Jank Severity Score", a.jank_severity_score));
        args.push(self.str_arg("Prediction type", prediction));
        args.push(self.str_arg("Jank tag", tag));
        args.push(self.str_arg("Jank tag (experimental)", tag_exp));
        args.push(self.real_arg("Jank Metadata (debugging only)", 0.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jank_types_are_spelled_in_the_reference_order() {
        assert_eq!(jank_type_name(0), "Unspecified");
        assert_eq!(jank_type_name(1), "None");
        assert_eq!(
            jank_type_name(2 | 16),
            "SurfaceFlinger Scheduling, SurfaceFlinger CPU Deadline Missed"
        );
        assert_eq!(
            jank_type_name(4096 | 128 | 64),
            "App Deadline Missed, App Resynced Jitter, Buffer Stuffing"
        );
        assert_eq!(jank_type_name(1 << 20), "");
    }

    #[test]
    fn jank_tags_blame_the_right_side() {
        assert_eq!(surface_jank_tag(64, Some(2)), "Self Jank");
        assert_eq!(surface_jank_tag(2, Some(3)), "Other Jank");
        assert_eq!(display_jank_tag(2), "Self Jank");
        assert_eq!(surface_jank_tag(1, Some(4)), "Dropped Frame");
        assert_eq!(display_jank_tag(512), "SurfaceFlinger Stuffing");
        assert_eq!(display_jank_tag(2048), "Non-perceivable Jank");
        assert_eq!(surface_jank_tag(128, None), "Buffer Stuffing");
        assert_eq!(display_jank_tag(1), "No Jank");
    }
}
