//! Android probe packets: `android_log` (log lines), `packages_list`, `battery`,
//! `power_rails`, `android_energy_estimation_breakdown`, `entity_state_residency`,
//! `android_system_property`, `kernel_wakelock_data`, `cpu_per_uid_data`, `user_list` and
//! `android_game_intervention_list`.
//! Hands on counters on probe tracks (Trace Processor's track types, names, dimensions,
//! units and track args), `AndroidLog` events, `package_list` rows and stats.

use std::collections::HashMap;

use super::*;

/// A GPU counter id in its scope: the machine, the (sequence, iid) of an interned
/// descriptor (None for an inline one), and the id.
pub(super) type GpuCounterKey = (MachineId, Option<(u32, u64)>, u32);

/// A probe track's (machine, type, name, scope, hash of its dimensions).
type ProbeKey = (MachineId, &'static str, StrId, ProbeScope, u64);

/// What the probe parsers remember across packets.
#[derive(Default)]
pub(super) struct ProbeState {
    /// Power rails by (session uuid, index): (raw name, subsystem).
    rails: HashMap<(MachineId, u64, u32), (String, String)>,
    /// Energy consumers by id: (name, type, ordinal).
    consumers: HashMap<(MachineId, i32), (String, String, i32)>,
    /// Entity states by (entity, state) index: (entity name, state name).
    entity_states: HashMap<(MachineId, i32, i32), (String, String)>,
    /// Clusters per uid row, and each (uid, cluster)'s last total.
    cpu_per_uid_clusters: HashMap<MachineId, u32>,
    cpu_per_uid_last: HashMap<(MachineId, u32, u32), u64>,
    cpu_per_uid_totals: HashMap<(MachineId, &'static str, u32), u64>,
    /// Kernel wakelocks by id: (name, type), and each one's running total.
    wakelocks: HashMap<(MachineId, u32), (String, i32)>,
    wakelock_totals: HashMap<(MachineId, u32), u64>,
    /// GPU counter specs by id: (gpu, track).
    pub(super) gpu_counters: HashMap<GpuCounterKey, TrackRef>,
    /// Interned GPU counter descriptors already registered, by (sequence, iid).
    pub(super) gpu_scopes: std::collections::HashSet<(MachineId, u32, u64)>,
    /// Probe tracks by (machine, type, name, scope, hash of the dimensions), with their
    /// probe id: a sample of a known track allocates nothing.
    tracks: HashMap<ProbeKey, Vec<(u32, TrackRef)>>,
    /// Disk stats of each device at the last sample, and its time.
    pub(super) disks: HashMap<(MachineId, String), (i64, [u64; 8])>,
}

/// A probe track's description, before it is interned.
pub(super) struct ProbeSpec<'a> {
    pub kind: &'static str,
    pub name: &'a str,
    pub scope: ProbeScope,
    pub dims: &'a [(&'static str, ArgValue)],
    pub unit: Option<&'a str>,
    pub description: Option<&'a str>,
    pub source: &'a [(&'static str, ArgValue)],
}

impl<'a> ProbeSpec<'a> {
    pub(super) fn new(kind: &'static str, name: &'a str) -> Self {
        ProbeSpec {
            kind,
            name,
            scope: ProbeScope::Global,
            dims: &[],
            unit: None,
            description: None,
            source: &[],
        }
    }
}

/// Pixel power rails whose role is known, by the end of their raw name.
const RAIL_NAMES: &[(&str, &str)] = &[
    ("VDD_CPUCL0", "cpu.little"),
    ("VDD_CPUCL1", "cpu.mid"),
    ("VDD_CPUCL2", "cpu.big"),
    ("VDD_G3D", "gpu"),
    ("VDD_INT", "system"),
    ("VDD_MIF", "memory.interface"),
    ("VDD_TPU", "tpu"),
    ("PWR_DISPLAY", "display"),
    ("PWR_MODEM", "modem"),
    ("PWR_RFFE", "radio.frontend"),
    ("PWR_WLAN_BT", "wifi.bt"),
    ("PWR_CAMERA", "camera"),
    ("VDD_AOC_RET", "aoc.memory"),
    ("VDD_AOC", "aoc.logic"),
    ("VDD_MEM", "ddr.a"),
    ("VDD2H_MEM", "ddr.b"),
    ("VDDQ_MEM", "ddr.c"),
    ("VDD_SLC_M", "system.cache"),
    ("GNSS_CORE", "gnss"),
];

/// A hash of a probe's dimensions (keys and values), for its track cache.
fn dims_hash(dims: &[(&'static str, ArgValue)]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = FxHasher::default();
    for (k, v) in dims {
        k.hash(&mut h);
        match *v {
            ArgValue::Int(i) => i.hash(&mut h),
            ArgValue::Uint(u) | ArgValue::Pointer(u) => u.hash(&mut h),
            ArgValue::Str(s) | ArgValue::Json(s) => s.hash(&mut h),
            ArgValue::Real(r) => r.to_bits().hash(&mut h),
            ArgValue::Bool(b) => b.hash(&mut h),
            ArgValue::Null => 0u8.hash(&mut h),
            ArgValue::ThreadUtid(u) | ArgValue::ProcessUpid(u) | ArgValue::PassthroughUtid(u) => {
                u.hash(&mut h)
            }
        }
    }
    h.finish()
}

pub(super) fn rail_friendly_name(raw: &str) -> Option<&'static str> {
    RAIL_NAMES
        .iter()
        .find(|(suffix, _)| raw.ends_with(suffix))
        .map(|(_, name)| *name)
}

impl Parser<'_> {
    /// The track of a probe (one per distinct description).
    pub(super) fn probe_track(&mut self, machine: MachineId, spec: &ProbeSpec<'_>) -> TrackRef {
        let name = self.sink.intern(spec.name);
        let key = (machine, spec.kind, name, spec.scope, dims_hash(spec.dims));
        if let Some(known) = self.probes.tracks.get(&key) {
            for &(id, track) in known {
                let dims = self.sink.probe_tracks.get(id).dims;
                let same = {
                    let have = self.sink.args.get(dims);
                    have.len() == spec.dims.len()
                        && have.iter().zip(spec.dims).all(|(a, (k, v))| {
                            a.value == *v && self.sink.strings.get(a.key) == Some(*k)
                        })
                };
                if same {
                    return track;
                }
            }
        }
        let dims: Vec<Arg> = spec
            .dims
            .iter()
            .map(|&(k, v)| self.sink.static_arg(k, v))
            .collect();
        let source: Vec<Arg> = spec
            .source
            .iter()
            .map(|&(k, v)| self.sink.static_arg(k, v))
            .collect();
        let track = ProbeTrack {
            machine,
            kind: spec.kind,
            name,
            scope: spec.scope,
            dims: self.sink.args.push_shared(&dims),
            unit: self.sink.intern_opt(spec.unit),
            description: self.sink.intern_opt(spec.description),
            source_args: self.sink.args.push_shared(&source),
            slices: false,
        };
        let id = self.sink.probe_tracks.intern(track);
        let track = self.sink.track(TrackKey::Probe(id));
        self.probes.tracks.entry(key).or_default().push((id, track));
        track
    }

    pub(super) fn push_counter(
        &mut self,
        ts: i64,
        clock: ClockRef,
        track: TrackRef,
        value: f64,
        args: ArgsRef,
    ) {
        let data = EventData::Counter {
            track,
            value: Real(value),
            args,
        };
        self.sink.push(ts, clock, data);
    }

    /// A counter on a probe track.
    pub(super) fn probe_counter(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        spec: &ProbeSpec<'_>,
        value: f64,
    ) {
        let track = self.probe_track(machine, spec);
        self.push_counter(ts, clock, track, value, NO_ARGS);
    }

    pub(super) fn android_log(&mut self, machine: MachineId, log: &protos::AndroidLogPacket) {
        // Used even when it leaves no event (stats, rows of its own).
        self.sink.touch();
        // Log lines carry their own REALTIME timestamp.
        let clock = self.clock(machine, 0, clocks::REALTIME);
        for ev in &log.events {
            let Some(ts) = ev.timestamp else { continue };
            // Binary log events carry args: ` name=value` pieces (strings quoted, floats as
            // %f) in a 4 KiB buffer, after the message if there is one, else without the
            // first space.
            let mut pieces = String::new();
            for arg in &ev.args {
                let Some(name) = &arg.name else { continue };
                use protos::android_log_packet::log_event::arg::Value;
                let value = match &arg.value {
                    Some(Value::StringValue(s)) => format!("\"{s}\""),
                    Some(Value::IntValue(i)) => i.to_string(),
                    Some(Value::FloatValue(f)) => format!("{f:.6}"),
                    None => String::new(),
                };
                pieces.push(' ');
                pieces.push_str(name);
                pieces.push('=');
                pieces.push_str(&value);
            }
            let msg = if pieces.is_empty() {
                self.sink.intern_nullable(ev.message.as_deref())
            } else {
                let mut end = pieces.len().min(4095);
                while !pieces.is_char_boundary(end) {
                    end -= 1;
                }
                match ev.message.as_deref() {
                    // A message and args: the message, then the pieces after their space.
                    Some(m) => self.sink.intern(&format!("{m}{}", &pieces[..end])),
                    None => self.sink.intern(&pieces[1..end.max(1)]),
                }
            };
            let prio = match ev.prio.unwrap_or(0) {
                0 => 4,
                p => i64::from(p),
            };
            // A line without a tid is the idle thread's (Trace Processor: `tid ?
            // UpdateThread(tid, pid) : 0`): no process is made for its pid.
            let tid = i64::from(ev.tid.unwrap_or(0));
            let pid = (tid != 0).then(|| i64::from(ev.pid.unwrap_or(0)));
            let line = LogLine {
                thread: ThreadRef { machine, tid, pid },
                prio,
                tag: ev.tag.as_deref().map_or(NULL_STR, |t| self.sink.intern(t)),
                msg,
            };
            self.sink
                .push(ts as i64, clock, EventData::AndroidLog(Box::new(line)));
        }
        if let Some(stats) = &log.stats {
            let set = [
                ("android_log_num_total", stats.num_total),
                ("android_log_num_failed", stats.num_failed),
                ("android_log_num_skipped", stats.num_skipped),
            ];
            for (name, value) in set {
                if let Some(v) = value {
                    self.sink.set_stat(name, None, machine, v as i64);
                }
            }
        }
    }

    pub(super) fn packages_list(&mut self, machine: MachineId, list: &protos::PackagesList) {
        // Used even when it leaves no event (stats, rows of its own).
        self.sink.touch();
        let errors = [
            ("packages_list_has_read_errors", list.read_error),
            ("packages_list_has_parse_errors", list.parse_error),
        ];
        for (name, value) in errors {
            if let Some(v) = value {
                self.sink.set_stat(name, None, machine, i64::from(v));
            }
        }
        for p in &list.packages {
            let name = p.name.clone().unwrap_or_default();
            if !self.sink.package_names.insert(name.clone()) {
                continue;
            }
            let uid = p.uid.unwrap_or(0) as i64;
            let name_id = self.sink.intern(&name);
            self.sink.package_by_uid.entry(uid).or_insert(name_id);
            self.sink.packages.push(PackageRow {
                machine,
                name,
                uid,
                debuggable: p.debuggable.unwrap_or(false),
                profileable_from_shell: p.profileable_from_shell.unwrap_or(false),
                version_code: p.version_code.unwrap_or(0),
            });
        }
    }

    pub(super) fn battery(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        b: &protos::BatteryCounters,
    ) {
        let battery = b.name.clone().filter(|n| !n.is_empty());
        let charge = b.charge_counter_uah.map(|c| c as f64).or_else(|| {
            match (b.energy_counter_uwh, b.voltage_uv) {
                (Some(e), Some(v)) if v > 0 => {
                    Some((i128::from(e) * 1_000_000 / i128::from(v)) as f64)
                }
                _ => None,
            }
        });
        let power = match (b.current_ua, b.voltage_uv) {
            (Some(c), Some(v)) => Some((c.saturating_mul(v) / 1_000_000_000).abs() as f64),
            _ => None,
        };
        let values = [
            ("charge_uah", charge),
            ("capacity_pct", b.capacity_percent.map(f64::from)),
            ("current_ua", b.current_ua.map(|c| c as f64)),
            ("current.avg_ua", b.current_avg_ua.map(|c| c as f64)),
            ("voltage_uv", b.voltage_uv.map(|v| v as f64)),
            ("power_mw", power),
        ];
        for (counter, value) in values {
            let Some(value) = value else { continue };
            let name = match &battery {
                Some(n) => format!("batt.{n}.{counter}"),
                None => format!("batt.{counter}"),
            };
            let battery_dim = ArgValue::Str(self.sink.intern(battery.as_deref().unwrap_or("")));
            let counter_dim = ArgValue::Str(self.sink.intern(counter));
            let dims = [("battery_name", battery_dim), ("counter_name", counter_dim)];
            let spec = ProbeSpec {
                dims: &dims,
                ..ProbeSpec::new("battery_counter", &name)
            };
            self.probe_counter(machine, ts, clock, &spec, value);
        }
    }

    pub(super) fn power_rails(
        &mut self,
        machine: MachineId,
        ts: Option<i64>,
        clock: ClockRef,
        rails: &protos::PowerRails,
    ) {
        // Descriptors and properties are used even when they leave no event.
        self.sink.touch();
        let session = rails.session_uuid.unwrap_or(0);
        for d in &rails.rail_descriptor {
            let index = d.index.unwrap_or(0);
            let name = d.rail_name.clone().unwrap_or_default();
            let subsystem = d.subsys_name.clone().unwrap_or_default();
            // A described rail has its track, energy data or not.
            let track = self.rail_track(machine, session, &name, &subsystem);
            self.sink
                .push(ts.unwrap_or(0), clock, EventData::EnsureTrack(track));
            self.probes
                .rails
                .insert((machine, session, index), (name, subsystem));
        }
        if rails.energy_data.is_empty() {
            if rails.rail_descriptor.is_empty() {
                self.log("power_rail_empty_packet", machine, &[]);
            }
            return;
        }
        let boottime = self.clock(machine, 0, clocks::BOOTTIME);
        for e in &rails.energy_data {
            let index = e.index.unwrap_or(0);
            let Some((raw, subsystem)) = self.probes.rails.get(&(machine, session, index)).cloned()
            else {
                self.stat("power_rail_unknown_index", machine);
                continue;
            };
            let track = self.rail_track(machine, session, &raw, &subsystem);
            let packet_ts = ts.unwrap_or(0);
            let arg = [self
                .sink
                .static_arg("packet_ts", ArgValue::Uint(packet_ts as u64))];
            let args = self.sink.args.push(&arg);
            let value = e.energy.unwrap_or(0) as f64;
            match e.timestamp_ms {
                Some(ms) => {
                    let at = (ms as i64).saturating_mul(1_000_000);
                    self.push_counter(at, boottime, track, value, args);
                }
                None => self.push_counter(packet_ts, clock, track, value, args),
            }
        }
    }

    /// A power rail's track: named after its role when the rail is a known Pixel rail.
    fn rail_track(
        &mut self,
        machine: MachineId,
        session: u64,
        raw: &str,
        subsystem: &str,
    ) -> TrackRef {
        let name = match rail_friendly_name(raw) {
            Some(f) => format!("power.rails.{f}"),
            None => format!("power.{raw}_uws"),
        };
        let raw_id = ArgValue::Str(self.sink.intern(raw));
        let dims = [
            ("power_rail_name", raw_id),
            ("session_uuid", ArgValue::Int(session as i64)),
        ];
        let subsystem = ArgValue::Str(self.sink.intern(subsystem));
        let source = [("raw_name", raw_id), ("subsystem_name", subsystem)];
        let spec = ProbeSpec {
            dims: &dims,
            source: &source,
            unit: Some("uws"),
            ..ProbeSpec::new("power_rails", &name)
        };
        self.probe_track(machine, &spec)
    }

    pub(super) fn energy_breakdown(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        e: &protos::AndroidEnergyEstimationBreakdown,
    ) {
        // Descriptors and properties are used even when they leave no event.
        self.sink.touch();
        if let Some(desc) = &e.energy_consumer_descriptor {
            for c in &desc.energy_consumers {
                let Some(id) = c.energy_consumer_id else {
                    self.stat("energy_descriptor_invalid", machine);
                    continue;
                };
                let entry = (
                    c.name.clone().unwrap_or_default(),
                    c.r#type.clone().unwrap_or_default(),
                    c.ordinal.unwrap_or(0),
                );
                self.probes.consumers.insert((machine, id), entry);
            }
        }
        let (Some(id), Some(energy)) = (e.energy_consumer_id, e.energy_uws) else {
            if e.energy_consumer_descriptor.is_none() {
                self.stat("energy_breakdown_missing_values", machine);
            }
            return;
        };
        let Some((name, kind, ordinal)) = self.probes.consumers.get(&(machine, id)).cloned() else {
            self.stat("energy_breakdown_missing_values", machine);
            return;
        };
        let consumer = ("energy_consumer_id", ArgValue::Int(i64::from(id)));
        let kind = ArgValue::Str(self.sink.intern(&kind));
        let source = [
            ("consumer_type", kind),
            ("ordinal", ArgValue::Int(i64::from(ordinal))),
        ];
        let spec = ProbeSpec {
            dims: &[consumer],
            source: &source,
            ..ProbeSpec::new("android_energy_estimation_breakdown", &name)
        };
        self.probe_counter(machine, ts, clock, &spec, energy as f64);
        for u in &e.per_uid_breakdown {
            let (Some(uid), Some(energy)) = (u.uid, u.energy_uws) else {
                self.stat("energy_uid_breakdown_missing_values", machine);
                continue;
            };
            let dims = [consumer, ("uid", ArgValue::Int(i64::from(uid)))];
            let spec = ProbeSpec {
                dims: &dims,
                ..ProbeSpec::new("android_energy_estimation_breakdown_per_uid", &name)
            };
            self.probe_counter(machine, ts, clock, &spec, energy as f64);
        }
    }

    pub(super) fn entity_state_residency(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        e: &protos::EntityStateResidency,
    ) {
        // Descriptors and properties are used even when they leave no event.
        self.sink.touch();
        for s in &e.power_entity_state {
            let (Some(entity), Some(state)) = (s.entity_index, s.state_index) else {
                // The reference counts entity-state descriptors without their ids under
                // the energy descriptors' stat (entity_state_descriptor_invalid has no writer).
                self.stat("energy_descriptor_invalid", machine);
                continue;
            };
            let names = (
                s.entity_name.clone().unwrap_or_default(),
                s.state_name.clone().unwrap_or_default(),
            );
            self.probes
                .entity_states
                .insert((machine, entity, state), names);
        }
        // The reference reads the descriptors when the packet is tokenized and still parses
        // the packet for residencies: one without any (a descriptor-only packet too) is invalid.
        if e.residency.is_empty() {
            self.stat("entity_state_residency_invalid", machine);
            return;
        }
        for r in &e.residency {
            let key = (
                machine,
                r.entity_index.unwrap_or(0),
                r.state_index.unwrap_or(0),
            );
            let Some((entity, state)) = self.probes.entity_states.get(&key).cloned() else {
                self.stat("entity_state_residency_lookup_failed", machine);
                return;
            };
            let name = format!("Entity residency: {entity} is {state}");
            let dims = [
                ("entity_name", ArgValue::Str(self.sink.intern(&entity))),
                ("state_name", ArgValue::Str(self.sink.intern(&state))),
            ];
            let spec = ProbeSpec {
                dims: &dims,
                unit: Some("ms"),
                ..ProbeSpec::new("entity_state", &name)
            };
            let value = r.total_time_in_state_ms.unwrap_or(0) as f64;
            self.probe_counter(machine, ts, clock, &spec, value);
        }
    }

    pub(super) fn system_property(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        p: &protos::AndroidSystemProperty,
    ) {
        // Descriptors and properties are used even when they leave no event.
        self.sink.touch();
        for v in &p.values {
            let (Some(name), Some(value)) = (v.name.as_deref(), v.value.as_deref()) else {
                continue;
            };
            let Some(key) = name.strip_prefix("debug.tracing.") else {
                continue;
            };
            match key {
                "device_state" => {
                    let track_name = self.sink.intern("DeviceStateChanged");
                    let track = self.sink.track(TrackKey::GlobalSlices {
                        machine,
                        kind: "android_device_state",
                        name: track_name,
                    });
                    let slice = SliceEvent {
                        track,
                        category: NULL_STR,
                        name: self.sink.intern(value),
                        args: NO_ARGS,
                        thread_ts: NO_TS,
                        flows: NO_FLOWS,
                    };
                    let data = EventData::Complete {
                        slice,
                        dur: 0,
                        thread_dur: NO_TS,
                    };
                    self.sink.push(ts, clock, data);
                    continue;
                }
                "wallpaper.package_name" | "wallpaper.class_name" => {
                    self.sink
                        .metadata(name, machine, MetaValue::Str(value.to_string()));
                    continue;
                }
                _ => {}
            }
            let Ok(number) = value.parse::<i64>() else {
                continue;
            };
            let (kind, track_name): (&'static str, String) = match key {
                "profile_boot_classpath" | "profile_system_server" => {
                    let meta = format!("android_{key}");
                    self.sink.metadata(meta, machine, MetaValue::Int(number));
                    continue;
                }
                "screen_state" => ("screen_state", "ScreenState".into()),
                "battery_status" => ("sysprop_counter", "BatteryStatus".into()),
                "plug_type" => ("sysprop_counter", "PlugType".into()),
                "mcc" | "mnc" | "desktop_mode_visible_tasks" => ("sysprop_counter", key.into()),
                _ if key.starts_with("battery_stats.") => ("battery_stats", key.into()),
                _ => continue,
            };
            let name = self.sink.intern(&track_name);
            let track = self.sink.track(TrackKey::GlobalCounter {
                machine,
                name,
                kind,
            });
            self.push_counter(ts, clock, track, number as f64, NO_ARGS);
        }
    }

    pub(super) fn kernel_wakelocks(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        w: &protos::KernelWakelockData,
    ) {
        // Descriptors and properties are used even when they leave no event.
        self.sink.touch();
        for lock in &w.wakelock {
            let id = lock.wakelock_id.unwrap_or(0);
            let entry = (
                lock.wakelock_name.clone().unwrap_or_default(),
                lock.wakelock_type.unwrap_or(0),
            );
            if self.probes.wakelocks.insert((machine, id), entry).is_some() {
                self.stat("kernel_wakelock_reused_id", machine);
            }
        }
        for (&id, &held) in w.wakelock_id.iter().zip(&w.time_held_millis) {
            let Some((name, kind)) = self.probes.wakelocks.get(&(machine, id)).cloned() else {
                self.stat("kernel_wakelock_unknown_id", machine);
                continue;
            };
            let total = self
                .probes
                .wakelock_totals
                .entry((machine, id))
                .or_insert(0);
            *total = total.saturating_add(held);
            let value = *total as f64;
            let kind = match kind {
                1 => "kernel",
                2 => "native",
                _ => "unknown",
            };
            let dims = [
                ("wakelock_name", ArgValue::Str(self.sink.intern(&name))),
                ("wakelock_type", ArgValue::Str(self.sink.intern(kind))),
            ];
            let spec = ProbeSpec {
                dims: &dims,
                unit: Some("ms"),
                ..ProbeSpec::new("android_kernel_wakelock", &name)
            };
            self.probe_counter(machine, ts, clock, &spec, value);
        }
        // Problems the producer saw reading the wakelock stats, one stat per flag bit
        // (Trace Processor's kernel_wakelock_errors.h: 1 zero value, 2 non-monotonic value,
        // 4 implausibly large value).
        let flags = w.error_flags.unwrap_or(0);
        for (bit, name) in [
            (1, "kernel_wakelock_zero_value_reported"),
            (2, "kernel_wakelock_non_monotonic_value_reported"),
            (4, "kernel_wakelock_implausibly_large_value_reported"),
        ] {
            if flags & bit != 0 {
                self.stat(name, machine);
            }
        }
    }

    /// CPU time per uid and cluster: the packets carry deltas; each track shows the running
    /// total. Per category (System, Apps) and cluster, a total of the deltas since each
    /// uid was first seen.
    pub(super) fn cpu_per_uid(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        c: &protos::CpuPerUidData,
    ) {
        if let Some(n) = c.cluster_count {
            self.probes.cpu_per_uid_clusters.insert(machine, n);
        }
        let clusters = match self.probes.cpu_per_uid_clusters.get(&machine) {
            Some(&n) if n > 0 => n,
            _ => return,
        };
        let mut totals: Vec<(&'static str, u32, u64)> = Vec::new();
        for (i, &delta) in c.total_time_ms.iter().enumerate() {
            let Some(&uid) = c.uid.get(i / clusters as usize) else {
                break;
            };
            // Isolated processes (app ids 90000-99999) are counted together per user.
            let uid = match uid % 100_000 {
                90_000..=99_999 => uid - uid % 100_000 + 90_000,
                _ => uid,
            };
            let cluster = (i % clusters as usize) as u32;
            let category = if uid % 100_000 < 10_000 {
                "System"
            } else {
                "Apps"
            };
            let last = self.probes.cpu_per_uid_last.get(&(machine, uid, cluster));
            let seen = last.is_some();
            let total = last.copied().unwrap_or(0).saturating_add(delta);
            self.probes
                .cpu_per_uid_last
                .insert((machine, uid, cluster), total);
            match totals
                .iter_mut()
                .find(|t| t.0 == category && t.1 == cluster)
            {
                Some(t) => t.2 += if seen { delta } else { 0 },
                None => totals.push((category, cluster, if seen { delta } else { 0 })),
            }
            if delta == 0 {
                continue;
            }
            let name = format!("CPU for UID {uid} CL{cluster}");
            let dims = [
                ("uid", ArgValue::Int(i64::from(uid))),
                ("cluster", ArgValue::Int(i64::from(cluster))),
            ];
            let spec = ProbeSpec {
                dims: &dims,
                unit: Some("ms"),
                ..ProbeSpec::new("android_cpu_per_uid", &name)
            };
            self.probe_counter(machine, ts, clock, &spec, total as f64);
        }
        totals.sort_by_key(|t| (t.0, t.1));
        for (category, cluster, delta) in totals {
            let sum = self
                .probes
                .cpu_per_uid_totals
                .entry((machine, category, cluster))
                .or_insert(0);
            *sum = sum.saturating_add(delta);
            let value = *sum as f64;
            let name = format!("CPU for {category} CL{cluster}");
            let dims = [
                ("category", ArgValue::Str(self.sink.intern(category))),
                ("cluster", ArgValue::Int(i64::from(cluster))),
            ];
            let spec = ProbeSpec {
                dims: &dims,
                unit: Some("ms"),
                ..ProbeSpec::new("android_cpu_per_uid_totals", &name)
            };
            self.probe_counter(machine, ts, clock, &spec, value);
        }
    }

    pub(super) fn user_list(&mut self, machine: MachineId, list: &protos::AndroidUserList) {
        // Used even when it leaves no event (stats, rows of its own).
        self.sink.touch();
        if list.error.is_some_and(|e| e < 0) {
            self.stat("user_list_errors", machine);
        }
        for u in &list.users {
            let uid = i64::from(u.uid.unwrap_or(0));
            let ty = u.r#type.clone().unwrap_or_default();
            match self
                .sink
                .android_users
                .iter_mut()
                .find(|(m, id, _)| *m == machine && *id == uid)
            {
                Some(row) => row.2 = ty,
                None => self.sink.android_users.push((machine, uid, ty)),
            }
        }
    }

    /// `android_game_intervention_list`: each game's current mode and what the standard,
    /// performance and battery modes do.
    pub(super) fn game_interventions(
        &mut self,
        machine: MachineId,
        list: &protos::AndroidGameInterventionList,
    ) {
        self.sink.touch();
        let flags = [
            ("game_intervention_has_read_errors", list.read_error),
            ("game_intervention_has_parse_errors", list.parse_error),
        ];
        for (name, value) in flags {
            self.sink
                .set_stat(name, None, machine, i64::from(value.unwrap_or(false)));
        }
        for g in &list.game_packages {
            let mut modes: [Option<GameMode>; 3] = [None; 3];
            for m in &g.game_mode_info {
                let slot = match m.mode.unwrap_or(0) {
                    1 => 0,
                    2 => 1,
                    3 => 2,
                    _ => continue,
                };
                modes[slot] = Some(GameMode {
                    downscale: f64::from(m.resolution_downscale.unwrap_or(0.0)),
                    use_angle: m.use_angle.unwrap_or(false),
                    fps: f64::from(m.fps.unwrap_or(0.0)),
                });
            }
            self.sink.game_interventions.push(GameIntervention {
                machine,
                package: g.name.clone().unwrap_or_default(),
                uid: g.uid.unwrap_or(0) as i64,
                current_mode: i64::from(g.current_mode.unwrap_or(0)),
                modes,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixel_rails_get_their_friendly_names() {
        assert_eq!(rail_friendly_name("S3M_VDD_CPUCL1"), Some("cpu.mid"));
        assert_eq!(rail_friendly_name("S2S_VDD_G3D"), Some("gpu"));
        assert_eq!(rail_friendly_name("L14S_ALIVE"), None);
    }
}
