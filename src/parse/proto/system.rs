//! System packets: clock snapshots and remote clock sync, triggers, the process tree,
//! SystemInfo and CpuInfo. They hand on clock snapshots, machine facts, process/thread
//! identity events and cpu rows to the sink.

use super::*;

/// Android's API level for a release number (`12` → 31), as the fingerprint only names
/// the release.
pub(super) fn android_sdk_for_release(release: &str) -> Option<i64> {
    let mut parts = release.split('.');
    let major: u32 = parts.next()?.trim_end_matches('L').parse().ok()?;
    let minor: u32 = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    Some(match (major, minor) {
        (5, 0) => 21,
        (5, _) => 22,
        (6, _) => 23,
        (7, 0) => 24,
        (7, _) => 25,
        (8, 0) => 26,
        (8, _) => 27,
        (9..=11, _) => i64::from(major) + 19,
        (12, _) if release.ends_with('L') => 32,
        (12, _) => 31,
        (13.., _) => i64::from(major) + 20,
        _ => return None,
    })
}

impl Parser<'_> {
    pub(super) fn clock_snapshot(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        cs: &protos::ClockSnapshot,
    ) {
        let sequence_scoped = |c: &protos::clock_snapshot::Clock| {
            c.clock_id
                .is_some_and(|id| (FIRST_SEQUENCE_CLOCK..LAST_SEQUENCE_CLOCK).contains(&id))
        };
        if seq_id == 0 && cs.clocks.iter().any(sequence_scoped) {
            // The reference prints 0 for the clock id, whichever it was.
            self.fatal.get_or_insert(ParseError::invalid(
                "ClockSnapshot packet is specifying a sequence-scoped clock id (0) but the \
                 TracePacket sequence_id is zero",
            ));
            return;
        }
        let mut readings = Vec::with_capacity(cs.clocks.len());
        let mut units = Vec::with_capacity(cs.clocks.len());
        for c in &cs.clocks {
            let Some(id) = c.clock_id else { continue };
            let mult = c.unit_multiplier_ns.unwrap_or(1).max(1) as i64;
            units.push((mult, c.is_incremental()));
            let v = (c.timestamp.unwrap_or(0) as i64).saturating_mul(mult);
            if (FIRST_SEQUENCE_CLOCK..LAST_SEQUENCE_CLOCK).contains(&id)
                && (mult != 1 || c.is_incremental())
            {
                let clock = SequenceClock {
                    unit_ns: mult,
                    incremental: c.is_incremental(),
                    last_ns: v,
                };
                self.seq_clocks.insert((machine, seq_id, id), clock);
            } else if !(FIRST_SEQUENCE_CLOCK..LAST_SEQUENCE_CLOCK).contains(&id)
                && !c.is_incremental()
            {
                // A global clock's unit is fixed at its first appearance (a snapshot that
                // declares another is refused by the clock tracker, as is an incremental
                // one); every value read on it is scaled, whichever sequence reads it.
                self.seq_clocks
                    .entry((machine, 0, id))
                    .or_insert(SequenceClock {
                        unit_ns: mult,
                        incremental: false,
                        last_ns: v,
                    });
            }
            let domain = ClockDomain {
                machine,
                clock_id: id,
                sequence: if id >= FIRST_SEQUENCE_CLOCK {
                    seq_id
                } else {
                    0
                },
                file: self.ctx.file,
                shared: false,
            };
            readings.push((domain, v));
        }
        if !readings.is_empty() {
            // The file's default clock, as the placement picks it (`clock::default_clock`):
            // `primary_trace_clock`, else BOOTTIME without a TRACE_FILE clock.
            let has = |id| {
                readings
                    .iter()
                    .any(|(d, _): &(ClockDomain, i64)| d.clock_id == id)
            };
            self.default_clock_set |= cs.primary_trace_clock.is_some()
                || (has(clocks::BOOTTIME) && !has(clocks::TRACE_FILE));
            let at = i64::try_from(self.packet_at.1).ok();
            self.sink.add_snapshot(
                ClockSnapshot {
                    machine,
                    file: self.ctx.file,
                    primary_trace_clock: cs.primary_trace_clock.map(|c| c as u32),
                    readings,
                    units,
                    relates_only: false,
                    read_at: 0,
                },
                at,
            );
        }
    }

    /// Attributes a producer attached to the trace: metadata `trace_attribute.<key>`, an
    /// integer or a string, about the whole import (no machine, no file) as the manifest's
    /// `manifest_attribute.<key>` are.
    pub(super) fn trace_attributes(&mut self, a: &protos::TraceAttributes) {
        use protos::trace_attributes::attribute::Value;
        for attr in &a.attribute {
            let Some(key) = attr.key.as_deref().filter(|k| !k.is_empty()) else {
                continue;
            };
            let value = match &attr.value {
                Some(Value::LongValue(v)) => MetaValue::Int(*v),
                Some(Value::StringValue(v)) => MetaValue::Str(v.clone()),
                None => continue,
            };
            let file = std::mem::replace(&mut self.sink.current_file, NO_FILE);
            self.sink
                .metadata(format!("trace_attribute.{key}"), NO_MACHINE, value);
            self.sink.current_file = file;
        }
    }

    /// A trace trigger: an instant on the global "Trace Triggers" track, with the producer.
    pub(super) fn trigger(
        &mut self,
        machine: MachineId,
        ts: Option<i64>,
        clock: ClockRef,
        t: &protos::Trigger,
    ) {
        let Some(ts) = ts else { return };
        let mut args = Vec::new();
        if let Some(p) = &t.producer_name {
            let key = self.sink.intern("producer_name");
            let value = ArgValue::Str(self.sink.intern(p));
            args.push(Arg {
                flat_key: key,
                key,
                value,
            });
        }
        if let Some(uid) = t.trusted_producer_uid {
            let key = self.sink.intern("trusted_producer_uid");
            args.push(Arg {
                flat_key: key,
                key,
                value: ArgValue::Int(i64::from(uid)),
            });
        }
        let track_name = self.sink.intern("Trace Triggers");
        let slice = SliceEvent {
            track: self.sink.track(TrackKey::GlobalSlices {
                machine,
                kind: "triggers",
                name: track_name,
            }),
            category: NULL_STR,
            name: t
                .trigger_name
                .as_deref()
                .map_or(NULL_STR, |n| self.sink.intern(n)),
            args: self.sink.args.push(&args),
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        self.sink.push(
            ts,
            clock,
            EventData::Complete {
                slice,
                dur: 0,
                thread_dur: NO_TS,
            },
        );
    }

    /// A relayed machine's clock synchronisation with the host (traced_relay): each round
    /// read the client's and the host's clocks; per clock, the rounds' offsets are averaged
    /// into one relation between the client's clock and the host's.
    pub(super) fn remote_clock_sync(&mut self, client: MachineId, sync: &protos::RemoteClockSync) {
        let host = self.ctx.machine;
        let reading = |cs: &Option<protos::ClockSnapshot>, id: u32| -> Option<i64> {
            let c = cs
                .as_ref()?
                .clocks
                .iter()
                .find(|c| c.clock_id == Some(id))?;
            let mult = c.unit_multiplier_ns.unwrap_or(1).max(1) as i64;
            Some((c.timestamp? as i64).saturating_mul(mult))
        };
        let mut ids: Vec<u32> = Vec::new();
        for round in &sync.synced_clocks {
            if let Some(cs) = &round.client_clocks {
                self.clock_snapshot(client, 0, cs);
                for c in &cs.clocks {
                    if let Some(id) = c.clock_id.filter(|id| !ids.contains(id)) {
                        ids.push(id);
                    }
                }
            }
        }
        for id in ids {
            let mut offsets: Vec<i64> = Vec::new();
            let mut anchor = None;
            for round in &sync.synced_clocks {
                let host_value = reading(&round.host_clocks, id);
                if let (Some(c), Some(h)) = (reading(&round.client_clocks, id), host_value) {
                    offsets.push(c.wrapping_sub(h));
                }
                if let Some(h) = host_value.filter(|&h| h != 0) {
                    anchor = Some(h);
                }
            }
            let (Some(anchor), false) = (anchor, offsets.is_empty()) else {
                continue;
            };
            let sum: i128 = offsets.iter().map(|&o| i128::from(o)).sum();
            let offset = (sum / offsets.len() as i128) as i64;
            let domain = |machine| ClockDomain {
                machine,
                clock_id: id,
                sequence: 0,
                file: self.ctx.file,
                shared: false,
            };
            let at = i64::try_from(self.packet_at.1).ok();
            self.sink.add_snapshot(
                ClockSnapshot {
                    machine: host,
                    file: self.ctx.file,
                    primary_trace_clock: None,
                    readings: vec![
                        (domain(host), anchor),
                        (domain(client), anchor.wrapping_add(offset)),
                    ],
                    units: Vec::new(),
                    relates_only: false,
                    read_at: 0,
                },
                at,
            );
        }
    }

    pub(super) fn process_tree(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        tree: &protos::ProcessTree,
    ) {
        // Kernel threads (children of kthreadd) named `kworker/…` lose their changing
        // workqueue suffix.
        let mut kthreads = std::collections::HashSet::new();
        for p in &tree.processes {
            if p.cmdline.is_empty() {
                continue;
            }
            let pid = i64::from(p.pid.unwrap_or(0));
            if !p.nspid.is_empty() {
                let nspid = p.nspid.iter().map(|&v| i64::from(v)).collect();
                self.namespaces
                    .processes
                    .insert((machine, pid), (nspid, Vec::new()));
            }
            let kworker = (p.ppid == Some(2))
                .then(|| kworker_name(&p.cmdline[0]))
                .flatten();
            let (name, cmdline) = match kworker {
                Some(cut) => {
                    kthreads.insert(pid);
                    let id = self.sink.intern(cut);
                    (id, id)
                }
                None => {
                    let argv0 = if p.cmdline.len() == 1 {
                        p.cmdline[0].split(' ').next().unwrap_or("")
                    } else {
                        p.cmdline[0].as_str()
                    };
                    (
                        // An empty argv0 is a name too (only NULL names are ignored).
                        self.sink.intern(argv0),
                        self.sink.intern(&p.cmdline.join(" ")),
                    )
                }
            };

            // The start time is on BOOTTIME whatever the packet's clock: converted to trace
            // time like an event (no conversion, no start time).
            let start_probe = p.process_start_from_boot.map(|v| {
                let boottime = self.clock(machine, 0, clocks::BOOTTIME);
                self.sink.time_probe(v as i64, boottime)
            });
            let info = ProcessInfo {
                process: ProcessRef {
                    machine,
                    pid: i64::from(p.pid.unwrap_or(0)),
                },
                parent_pid: p.ppid.map(i64::from),
                name,
                cmdline,
                uid: p.uid.map(i64::from),
                start_ts: None,
                start_probe,
                from_system: true,
            };
            self.sink
                .push(ts, clock, EventData::Process(Box::new(info)));
            if let Some(k) = p.is_kthread {
                let arg = self.sink.static_arg("is_kthread", ArgValue::Bool(k));
                let data = EventData::ProcessArgs {
                    process: ProcessRef { machine, pid },
                    args: self.sink.args.push(&[arg]),
                };
                self.sink.push(ts, clock, data);
            }
            if p.cmdline_is_comm == Some(true) {
                // The main thread's name is the (cut) command line.
                let data = EventData::ThreadName {
                    thread: ThreadRef {
                        machine,
                        tid: pid,
                        pid: Some(pid),
                    },
                    name: cmdline,
                    priority: NamePriority::ProcessTree,
                };
                self.sink.push(ts, clock, data);
            }
        }
        for t in &tree.threads {
            let thread = ThreadRef {
                machine,
                tid: i64::from(t.tid.unwrap_or(0)),
                pid: t.tgid.map(i64::from),
            };
            if !t.nstid.is_empty() {
                let tgid = i64::from(t.tgid.unwrap_or(0));
                match self.namespaces.processes.get_mut(&(machine, tgid)) {
                    Some((_, threads)) => {
                        threads.push(thread.tid);
                        let nstid = t.nstid.iter().map(|&v| i64::from(v)).collect();
                        self.namespaces.threads.insert((machine, thread.tid), nstid);
                    }
                    None => self.log("namespaced_thread_missing_process", machine, &[]),
                }
            }
            let main_kthread = kthreads.contains(&thread.tid) && thread.pid == Some(thread.tid);
            let data = match t.name.as_deref() {
                Some(n) if !n.is_empty() => EventData::ThreadName {
                    thread,
                    name: self.sink.intern(match main_kthread {
                        true => kworker_name(n).unwrap_or(n),
                        false => n,
                    }),
                    priority: NamePriority::ProcessTree,
                },
                _ => EventData::Thread(thread),
            };
            self.sink.push(ts, clock, data);
        }
    }

    pub(super) fn system_info(&mut self, machine: MachineId, info: &protos::SystemInfo) {
        let m = self.sink.machines.entry(machine).or_default();
        if let Some(n) = &info.machine_name {
            m.name = Some(n.clone());
        }
        if let Some(u) = &info.utsname {
            m.sysname = u.sysname.clone();
            m.release = u.release.clone();
            m.version = u.version.clone();
            m.arch = u.machine.clone();
        }
        // Each fact is set when the packet has it: a later SystemInfo without one keeps it.
        if let Some(n) = info.num_cpus {
            m.num_cpus = Some(i64::from(n));
        }
        if let Some(f) = &info.android_build_fingerprint {
            m.android_build_fingerprint = Some(f.clone());
        }
        if let Some(d) = &info.android_device_manufacturer {
            m.android_device_manufacturer = Some(d.clone());
        }
        if let Some(v) = info.android_sdk_version {
            m.android_sdk_version = Some(v as i64);
        }
        if let Some(v) = info.system_ram_bytes {
            m.system_ram_bytes = Some(v as i64);
        }
        let mut meta = Vec::new();
        if let Some(u) = &info.utsname {
            for (k, v) in [
                ("system_name", &u.sysname),
                ("system_release", &u.release),
                ("system_version", &u.version),
                ("system_machine", &u.machine),
            ] {
                if let Some(v) = v {
                    meta.push((k, MetaValue::Str(v.clone())));
                }
            }
        }
        if let Some(f) = &info.android_build_fingerprint {
            meta.push(("android_build_fingerprint", MetaValue::Str(f.clone())));
        }
        // The service's version (behaviour-stats §4 reads it back from metadata).
        if let Some(v) = &info.tracing_service_version {
            meta.push(("tracing_service_version", MetaValue::Str(v.clone())));
        }
        // BRAND/PRODUCT/DEVICE:RELEASE/ID/INCREMENTAL:TYPE/TAGS
        let fingerprint: Vec<&str> = info
            .android_build_fingerprint
            .as_deref()
            .map(|f| f.split('/').collect())
            .unwrap_or_default();
        if let Some(incremental) = fingerprint.get(4).and_then(|p| p.split(':').next()) {
            meta.push((
                "android_incremental_build",
                MetaValue::Str(incremental.to_string()),
            ));
        }
        let sdk = info.android_sdk_version.map(|v| v as i64).or_else(|| {
            let release = fingerprint.get(2)?.split(':').nth(1)?;
            android_sdk_for_release(release)
        });
        if let Some(v) = sdk {
            meta.push(("android_sdk_version", MetaValue::Int(v)));
            if let Some(m) = self.sink.machines.get_mut(&machine) {
                m.android_sdk_version.get_or_insert(v);
            }
        }
        // Device facts the reference copies to metadata under the field's own name.
        for (k, v) in [
            (
                "android_device_manufacturer",
                &info.android_device_manufacturer,
            ),
            ("android_soc_model", &info.android_soc_model),
            ("android_guest_soc_model", &info.android_guest_soc_model),
            ("android_hardware_revision", &info.android_hardware_revision),
            ("android_storage_model", &info.android_storage_model),
            ("android_ram_model", &info.android_ram_model),
            ("android_serial_console", &info.android_serial_console),
        ] {
            if let Some(v) = v {
                meta.push((k, MetaValue::Str(v.clone())));
            }
        }
        if let Some(v) = info.system_ram_bytes {
            meta.push(("system_ram_bytes", MetaValue::Int(v as i64)));
            meta.push((
                "system_ram_gb",
                MetaValue::Int((v as f64 / 1e9).round() as i64),
            ));
        }
        if let Some(v) = info.timezone_off_mins {
            meta.push(("timezone_off_mins", MetaValue::Int(i64::from(v))));
        }
        for (k, v) in meta {
            self.sink.metadata(k, machine, v);
        }
    }

    /// One `cpu` row per cpu. Clusters are ranked as the reference's ParseCpuInfo ranks them:
    /// by capacity when every cpu reports one (equal capacities share a cluster, ids rise with
    /// capacity), else by each cpu's highest frequency when every cpu lists frequencies;
    /// otherwise every cpu is in cluster 0.
    pub(super) fn cpu_info(
        &mut self,
        machine: MachineId,
        ts: Option<i64>,
        clock: ClockRef,
        info: &protos::CpuInfo,
    ) {
        /// Feature bits Trace Processor names.
        const FEATURES: [(u64, &str); 2] = [(1, "cpu_features.mte"), (2, "cpu_features.mte3")];
        let known = FEATURES.iter().fold(0, |all, f| all | f.0);
        if info.cpus.is_empty() {
            self.stat("cpu_info_empty", machine);
            return;
        }
        let clusters = cpu_clusters(&info.cpus);
        for (index, cpu) in info.cpus.iter().enumerate() {
            let cluster = clusters[index];
            let mut args = Vec::new();
            let mut add =
                |sink: &mut Sink, key: &str, value: ArgValue| args.push(sink.arg(key, value));
            if let Some(arm) = &cpu.arm_identifier {
                for (key, value) in [
                    ("arm_cpu_implementer", arm.implementer),
                    ("arm_cpu_architecture", arm.architecture),
                    ("arm_cpu_variant", arm.variant),
                    ("arm_cpu_part", arm.part),
                    ("arm_cpu_revision", arm.revision),
                ] {
                    if let Some(v) = value {
                        add(self.sink, key, ArgValue::Int(i64::from(v)));
                    }
                }
            }
            if let Some(features) = cpu.features {
                add(
                    self.sink,
                    "cpu_features.raw_bitmap",
                    ArgValue::Int(features as i64),
                );
                for (bit, key) in FEATURES {
                    if features & bit != 0 {
                        add(self.sink, key, ArgValue::Bool(true));
                    }
                }
                if features & !known != 0 {
                    self.sink.stat("cpu_info_unknown_cpu_features", machine, 1);
                }
            }
            let args = self.sink.args.push(&args);
            let description = CpuDescription {
                machine,
                cpu: index as u32,
                cluster_id: cluster,
                processor: self.sink.intern_opt(cpu.processor.as_deref()),
                capacity: cpu.capacity,
                frequencies: cpu.frequencies.clone(),
                args,
            };
            let data = EventData::CpuInfo(Box::new(description));
            self.sink.push(ts.unwrap_or(0), clock, data);
        }
    }
}

/// Each cpu's cluster id: the rank of its capacity among the distinct capacities when every
/// cpu has one, else the rank of its highest frequency when every cpu lists frequencies, else 0.
fn cpu_clusters(cpus: &[protos::cpu_info::Cpu]) -> Vec<u32> {
    let keys: Option<Vec<u32>> = if cpus.iter().all(|c| c.capacity.is_some()) {
        cpus.iter().map(|c| c.capacity).collect()
    } else {
        cpus.iter()
            .map(|c| c.frequencies.iter().copied().max())
            .collect()
    };
    let Some(keys) = keys else {
        return vec![0; cpus.len()];
    };
    let mut distinct = keys.clone();
    distinct.sort_unstable();
    distinct.dedup();
    keys.iter()
        .map(|k| distinct.partition_point(|d| d < k) as u32)
        .collect()
}

/// A kworker's name without its workqueue suffix: cut at the first `+` or `-` at position
/// 8 or later (`kworker/45:2-mm_percpu_wq` → `kworker/45:2`); `None` if not a kworker.
fn kworker_name(argv0: &str) -> Option<&str> {
    if !argv0.starts_with("kworker/") {
        return None;
    }
    let cut = argv0
        .char_indices()
        .find(|&(i, c)| i >= 8 && (c == '+' || c == '-'))
        .map_or(argv0.len(), |(i, _)| i);
    Some(&argv0[..cut])
}

#[cfg(test)]
mod kworker_tests {
    use super::kworker_name;

    #[test]
    fn kworker_suffixes_are_cut() {
        assert_eq!(
            kworker_name("kworker/45:2-mm_percpu_wq"),
            Some("kworker/45:2")
        );
        assert_eq!(
            kworker_name("kworker/u16:3+events_unbound"),
            Some("kworker/u16:3")
        );
        assert_eq!(kworker_name("kworker/0:0H"), Some("kworker/0:0H"));
        assert_eq!(kworker_name("ksoftirqd/0"), None);
    }
}

/// Pid namespaces, from process trees' `nspid` / `nstid` (the ids inside the namespaces,
/// outermost first, the root-level id omitted), per machine, for translating the ids a
/// namespaced producer puts in its track descriptors to root-level ones
/// (behaviour-process-tracking.md §5; the reference's ResolveNamespacedTid).
#[derive(Default)]
pub(super) struct Namespaces {
    /// Root-level pid → (its namespace-local pids, root-level tids of its namespaced threads).
    processes: HashMap<(MachineId, i64), (Vec<i64>, Vec<i64>)>,
    /// Root-level tid → its namespace-local tids.
    threads: HashMap<(MachineId, i64), Vec<i64>>,
}

impl Namespaces {
    /// The root-level id of `id` as seen from inside root-level process `root`'s innermost
    /// namespace: `root` itself for its local pid, else the thread whose local tid at that
    /// level is `id`; `None` when `root` is not namespaced or nothing matches.
    fn resolve(&self, machine: MachineId, root: i64, id: i64) -> Option<i64> {
        if root <= 0 {
            return None;
        }
        let (nspid, threads) = self.processes.get(&(machine, root))?;
        let level = nspid.len().checked_sub(1)?;
        if nspid.last() == Some(&id) {
            return Some(root);
        }
        threads.iter().copied().find(|tid| {
            self.threads
                .get(&(machine, *tid))
                .is_some_and(|nstid| nstid.get(level) == Some(&id))
        })
    }

    /// Rewrites a descriptor's thread pid/tid and process pid to root-level ids where they
    /// resolve; ids that do not resolve stay as given.
    pub(super) fn translate(&self, machine: MachineId, root: i64, d: &mut protos::TrackDescriptor) {
        if self.processes.is_empty() {
            return;
        }
        let resolve = |id: i64| self.resolve(machine, root, id);
        let fix = |v: &mut Option<i32>| {
            if let Some(r) = v
                .and_then(|id| resolve(i64::from(id)))
                .and_then(|r| i32::try_from(r).ok())
            {
                *v = Some(r);
            }
        };
        if let Some(t) = d.thread.as_mut() {
            fix(&mut t.pid);
            if let Some(r) = t.tid.and_then(resolve) {
                t.tid = Some(r);
            }
        }
        if let Some(p) = d.process.as_mut() {
            fix(&mut p.pid);
        }
    }
}
