//! GPU packets: `gpu_counter_event` (counter descriptors: name, description, unit from
//! numerator/denominator units; then samples by counter id) and `gpu_mem_total_event`
//! (global or per-process GPU memory). Hands on counters on `gpu_counter` /
//! `gpu_memory` / `process_gpu_memory` tracks and stats.

use super::android_probes::ProbeSpec;
use super::*;

/// A GPU counter unit's symbol (GpuCounterDescriptor.MeasureUnit), or "" for NONE.
fn unit_symbol(unit: i32) -> &'static str {
    const SYMBOLS: [&str; 41] = [
        "",
        "bit",
        "Kibit",
        "Mibit",
        "Gibit",
        "Tibit",
        "Pibit",
        "B",
        "KiB",
        "MiB",
        "GiB",
        "TiB",
        "PiB",
        "Hz",
        "kHz",
        "MHz",
        "GHz",
        "THz",
        "PHz",
        "ns",
        "us",
        "ms",
        "s",
        "min",
        "h",
        "Vertex",
        "Pixel",
        "Triangle",
        "mW",
        "W",
        "kW",
        "J",
        "V",
        "A",
        "C",
        "F",
        "K",
        "%",
        "Primitive",
        "Fragment",
        "Instruction",
    ];
    usize::try_from(unit)
        .ok()
        .and_then(|u| SYMBOLS.get(u))
        .copied()
        .unwrap_or("")
}

/// `num1:num2/den1:den2`, units NONE left out (no denominator: no slash).
pub(crate) fn gpu_unit(numerators: &[i32], denominators: &[i32]) -> String {
    let join = |units: &[i32]| {
        units
            .iter()
            .map(|&u| unit_symbol(u))
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(":")
    };
    let (num, den) = (join(numerators), join(denominators));
    if den.is_empty() {
        num
    } else {
        format!("{num}/{den}")
    }
}

impl Parser<'_> {
    pub(super) fn gpu_counter_event(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: Option<i64>,
        clock: ClockRef,
        ev: &protos::GpuCounterEvent,
    ) {
        // Counter ids of an inline descriptor are global; those of an interned one belong
        // to its (sequence, iid).
        let scope = match &ev.desc {
            Some(protos::gpu_counter_event::Desc::CounterDescriptor(desc)) => {
                let gpu = ev.gpu_id.unwrap_or(0);
                self.sink.gpu(machine, i64::from(gpu));
                self.gpu_counter_specs(machine, None, desc, gpu, ts, clock);
                None
            }
            Some(protos::gpu_counter_event::Desc::CounterDescriptorIid(iid)) => {
                let scope = Some((seq_id, *iid));
                let interned = self
                    .sequences
                    .get(&(machine, seq_id))
                    .and_then(|s| s.gpu_counter_descriptors.get(iid))
                    .cloned();
                match interned {
                    Some((desc, gpu)) => {
                        self.sink.gpu(machine, i64::from(gpu));
                        if self.probes.gpu_scopes.insert((machine, seq_id, *iid)) {
                            self.gpu_counter_specs(machine, scope, &desc, gpu, ts, clock);
                        }
                    }
                    None => self.stat("gpu_counters_invalid_spec", machine),
                }
                scope
            }
            None => None,
        };
        if ev.counters.is_empty() {
            return;
        }
        let Some(ts) = ts else {
            self.stat("gpu_counters_missing_timestamp", machine);
            return;
        };
        for c in &ev.counters {
            let id = c.counter_id.unwrap_or(0);
            let Some(&track) = self.probes.gpu_counters.get(&(machine, scope, id)) else {
                self.stat("gpu_counters_missing_spec", machine);
                continue;
            };
            use protos::gpu_counter_event::gpu_counter::Value;
            let value = match c.value {
                Some(Value::IntValue(v)) => v as f64,
                Some(Value::DoubleValue(v)) => v,
                None => 0.0,
            };
            self.push_counter(ts, clock, track, value, NO_ARGS);
        }
    }

    /// A GPU's frequency (GenericGpuFrequencyEvent), on the same track as ftrace's.
    pub(super) fn gpu_frequency(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        ev: &protos::GenericGpuFrequencyEvent,
    ) {
        let gpu = i64::from(ev.gpu_id.unwrap_or(0));
        let ugpu = self.sink.gpu(machine, gpu) as i64;
        let dims = [("ugpu", ArgValue::Int(ugpu)), ("gpu", ArgValue::Int(gpu))];
        let spec = ProbeSpec {
            dims: &dims,
            unit: Some("kHz"),
            ..ProbeSpec::new("gpu_frequency", "gpufreq")
        };
        let value = f64::from(ev.frequency_khz.unwrap_or(0));
        self.probe_counter(machine, ts, clock, &spec, value);
    }

    /// Registers a descriptor's counters: each gets its track now, samples or not.
    fn gpu_counter_specs(
        &mut self,
        machine: MachineId,
        scope: Option<(u32, u64)>,
        desc: &protos::GpuCounterDescriptor,
        gpu: i32,
        ts: Option<i64>,
        clock: ClockRef,
    ) {
        for spec in &desc.specs {
            let (Some(id), Some(name)) = (spec.counter_id, spec.name.as_deref()) else {
                self.stat("gpu_counters_invalid_spec", machine);
                continue;
            };
            if self.probes.gpu_counters.contains_key(&(machine, scope, id)) {
                self.stat("gpu_counters_invalid_spec", machine);
                continue;
            }
            let unit = gpu_unit(&spec.numerator_units, &spec.denominator_units);
            // Keyed by the GPU (its `gpu` row and id) and the counter; the description is
            // also a track arg.
            let ugpu = self.sink.gpu(machine, i64::from(gpu)) as i64;
            let dims = [
                ("ugpu", ArgValue::Int(ugpu)),
                ("gpu", ArgValue::Int(i64::from(gpu))),
                ("counter_id", ArgValue::Int(i64::from(id))),
            ];
            let source = match &spec.description {
                Some(d) => vec![("description", ArgValue::Str(self.sink.intern(d)))],
                None => Vec::new(),
            };
            let track = self.probe_track(
                machine,
                &ProbeSpec {
                    dims: &dims,
                    unit: Some(&unit),
                    description: spec.description.as_deref(),
                    source: &source,
                    ..ProbeSpec::new("gpu_counter", name)
                },
            );
            self.probes.gpu_counters.insert((machine, scope, id), track);
            let at = ts.unwrap_or(0);
            self.sink.push(at, clock, EventData::EnsureTrack(track));
            // A counter in no group is in group 0 (unclassified).
            let groups: &[i32] = if spec.groups.is_empty() {
                &[0]
            } else {
                &spec.groups
            };
            for &group in groups {
                let (name, description) = self.gpu_group_names(desc, group);
                self.sink
                    .gpu_counter_groups
                    .push((i64::from(group), name, description, track));
            }
        }
        // Groups the producer defines also list counters by id.
        for g in &desc.counter_groups {
            let group = g.group_id.unwrap_or(0);
            let (name, description) = self.gpu_group_names(desc, group as i32);
            for id in &g.counter_ids {
                let Some(&track) = self.probes.gpu_counters.get(&(machine, scope, *id)) else {
                    self.stat("gpu_counters_invalid_spec", machine);
                    continue;
                };
                let row = (i64::from(group), name, description, track);
                if !self.sink.gpu_counter_groups.contains(&row) {
                    self.sink.gpu_counter_groups.push(row);
                }
            }
        }
    }

    /// The name and description a descriptor gives a group, if it defines it.
    fn gpu_group_names(
        &mut self,
        desc: &protos::GpuCounterDescriptor,
        group: i32,
    ) -> (StrId, StrId) {
        match desc
            .counter_groups
            .iter()
            .find(|g| g.group_id.map(|id| id as i32) == Some(group))
        {
            Some(g) => (
                self.sink.intern_opt(g.name.as_deref()),
                self.sink.intern_opt(g.description.as_deref()),
            ),
            None => (NULL_STR, NULL_STR),
        }
    }

    /// A SurfaceFlinger buffer event; one without a buffer id or timestamp is counted.
    pub(super) fn graphics_frame_event(
        &mut self,
        machine: MachineId,
        ts: Option<i64>,
        clock: ClockRef,
        ev: &protos::GraphicsFrameEvent,
    ) {
        let Some(b) = &ev.buffer_event else {
            self.stat("graphics_frame_event_parser_errors", machine);
            return;
        };
        let (Some(ts), Some(buffer_id)) = (ts, b.buffer_id) else {
            self.stat("graphics_frame_event_parser_errors", machine);
            return;
        };
        let event = BufferEvent {
            machine,
            frame_number: b.frame_number.unwrap_or(0),
            kind: b.r#type.unwrap_or(0),
            layer: self.sink.intern(b.layer_name.as_deref().unwrap_or("")),
            duration_ns: b.duration_ns.unwrap_or(0) as i64,
            buffer_id,
        };
        self.sink
            .push(ts, clock, EventData::BufferEvent(Box::new(event)));
    }

    pub(super) fn gpu_mem_total(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        ev: &protos::GpuMemTotalEvent,
    ) {
        let gpu = ev.gpu_id.unwrap_or(0);
        let pid = ev.pid.unwrap_or(0);
        let dims = [("gpu", ArgValue::Int(i64::from(gpu)))];
        let (kind, scope) = if pid == 0 {
            ("gpu_memory", ProbeScope::Global)
        } else {
            let process = ProcessRef {
                machine,
                pid: i64::from(pid),
            };
            ("process_gpu_memory", ProbeScope::Process(process))
        };
        let spec = ProbeSpec {
            scope,
            dims: &dims,
            unit: Some("bytes"),
            ..ProbeSpec::new(kind, "GPU Memory")
        };
        let value = ev.size.unwrap_or(0) as f64;
        self.probe_counter(machine, ts, clock, &spec, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_units_read_as_a_fraction() {
        assert_eq!(gpu_unit(&[25], &[22]), "Vertex/s");
        assert_eq!(gpu_unit(&[27], &[21, 21]), "Triangle/ms:ms");
        assert_eq!(gpu_unit(&[7], &[0]), "B");
        assert_eq!(gpu_unit(&[], &[22]), "/s");
        assert_eq!(gpu_unit(&[39], &[25]), "Fragment/Vertex");
    }
}
