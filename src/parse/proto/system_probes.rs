//! Polled system probes: `process_stats` (per-process memory, smaps rollup, oom score,
//! cpu runtime; threads bound to their process) and `sys_stats` (meminfo, vmstat, cpu
//! times, interrupts, forks, devfreq, cpu/gpu frequency, buddyinfo, disk stats, pressure,
//! thermal zones, cpuidle residency), and `journald_event` (systemd journal entries, or the
//! journal reader's stats). Hands on counters on process or probe tracks with Trace
//! Processor's names, types and dimensions, thread bindings, journal entries and stats.

use super::android_probes::ProbeSpec;
use super::*;

/// /proc/meminfo's names of the `MeminfoCounters` enum, by value.
const MEMINFO_KEYS: &[&str] = &[
    "MemUnspecified",
    "MemTotal",
    "MemFree",
    "MemAvailable",
    "Buffers",
    "Cached",
    "SwapCached",
    "Active",
    "Inactive",
    "Active(anon)",
    "Inactive(anon)",
    "Active(file)",
    "Inactive(file)",
    "Unevictable",
    "Mlocked",
    "SwapTotal",
    "SwapFree",
    "Dirty",
    "Writeback",
    "AnonPages",
    "Mapped",
    "Shmem",
    "Slab",
    "SReclaimable",
    "SUnreclaim",
    "KernelStack",
    "PageTables",
    "CommitLimit",
    "Committed_AS",
    "VmallocTotal",
    "VmallocUsed",
    "VmallocChunk",
    "CmaTotal",
    "CmaFree",
    "Gpu",
    "Zram",
    "Misc",
    "ION_heap",
    "ION_heap_pool",
];

const PSI: [&str; 7] = [
    "",
    "psi.cpu.some",
    "psi.cpu.full",
    "psi.io.some",
    "psi.io.full",
    "psi.mem.some",
    "psi.mem.full",
];

/// A counter's name and value, when the packet has it.
type Reading<'a> = (&'a str, Option<f64>);

/// 512-byte sectors to MiB.
fn sectors_mb(sectors: u64) -> f64 {
    sectors as f64 * 512.0 / (1024.0 * 1024.0)
}

impl Parser<'_> {
    /// `smaps_packet`: one `profiler_smaps` row per entry, for the process `pid`
    /// (Trace Processor's ProfileModule::ParseSmapsPacket).
    pub(super) fn smaps_packet(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        smaps: &protos::SmapsPacket,
    ) {
        self.sink.touch();
        let process = ProcessRef {
            machine,
            pid: i64::from(smaps.pid.unwrap_or(0)),
        };
        for e in &smaps.entries {
            let n = |v: Option<u64>| v.unwrap_or(0) as i64;
            let row = SmapsRow {
                process,
                path: self.sink.intern_nullable(e.path.as_deref()),
                file_name: self.sink.intern_nullable(e.file_name.as_deref()),
                module_debugid: self.sink.intern_nullable(e.module_debugid.as_deref()),
                module_debug_path: self.sink.intern_nullable(e.module_debug_path.as_deref()),
                numbers: [
                    n(e.size_kb),
                    n(e.private_dirty_kb),
                    n(e.swap_kb),
                    n(e.start_address),
                    n(e.module_timestamp),
                    i64::from(e.protection_flags.unwrap_or(0)),
                    n(e.private_clean_resident_kb),
                    n(e.shared_dirty_resident_kb),
                    n(e.shared_clean_resident_kb),
                    n(e.locked_kb),
                    n(e.proportional_resident_kb),
                ],
            };
            self.sink
                .push(ts, clock, EventData::ProfilerSmaps(Box::new(row)));
        }
    }

    pub(super) fn process_stats(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        stats: &protos::ProcessStats,
    ) {
        self.sink.touch();
        for p in &stats.processes {
            let pid = i64::from(p.pid.unwrap_or(0));
            for t in &p.threads {
                let thread = ThreadRef {
                    machine,
                    tid: i64::from(t.tid.unwrap_or(0)),
                    pid: Some(pid),
                };
                self.sink.push(ts, clock, EventData::Thread(thread));
            }
            let process = ProcessRef { machine, pid };
            for fd in &p.fds {
                let path = self.sink.intern_nullable(fd.path.as_deref());
                let row = (process, fd.fd.unwrap_or(0) as i64, path);
                self.sink
                    .push(ts, clock, EventData::FileDescriptor(Box::new(row)));
            }
            // Counters are emitted in field-number order of ProcessStats.Process, as the
            // reference walks its per-field array (so track and counter ids follow it):
            // memory 2-9, oom_score_adj 10, smaps rollup 16-20, runtime 21-22,
            // smr_swap_pss 23, dmabuf_rss 24.
            let kb = |v: Option<u64>| v.map(|v| v as f64 * 1024.0);
            let memory = [
                ("mem.virt", kb(p.vm_size_kb)),
                ("mem.rss", kb(p.vm_rss_kb)),
                ("mem.rss.anon", kb(p.rss_anon_kb)),
                ("mem.rss.file", kb(p.rss_file_kb)),
                ("mem.rss.shmem", kb(p.rss_shmem_kb)),
                ("mem.swap", kb(p.vm_swap_kb)),
                ("mem.locked", kb(p.vm_locked_kb)),
                ("mem.rss.watermark", kb(p.vm_hwm_kb)),
            ];
            let oom = [("oom_score_adj", p.oom_score_adj.map(|v| v as f64))];
            let smaps = [
                ("mem.smaps.rss", kb(p.smr_rss_kb)),
                ("mem.smaps.pss", kb(p.smr_pss_kb)),
                ("mem.smaps.pss.anon", kb(p.smr_pss_anon_kb)),
                ("mem.smaps.pss.file", kb(p.smr_pss_file_kb)),
                ("mem.smaps.pss.smem", kb(p.smr_pss_shmem_kb)),
            ];
            let runtime = [
                ("runtime.user_ns", p.runtime_user_mode.map(|v| v as f64)),
                ("runtime.kernel_ns", p.runtime_kernel_mode.map(|v| v as f64)),
            ];
            let swap_pss = [("mem.smaps.swap.pss", kb(p.smr_swap_pss_kb))];
            let dmabuf = [("mem.dmabuf_rss", kb(p.dmabuf_rss_kb))];
            let groups: [(&'static str, &[Reading]); 6] = [
                ("process_memory", &memory),
                ("oom_score_adj", &oom),
                ("smaps", &smaps),
                ("proc_stat_runtime", &runtime),
                ("smaps", &swap_pss),
                ("process_memory", &dmabuf),
            ];
            for (kind, values) in groups {
                for &(name, value) in values {
                    let Some(value) = value else { continue };
                    let name = self.sink.intern(name);
                    let track = self.sink.track(TrackKey::ProcessCounter {
                        process,
                        name,
                        kind,
                    });
                    self.push_counter(ts, clock, track, value, NO_ARGS);
                }
            }
            if p.chrome_peak_resident_set_kb.is_some() {
                self.stat("proc_stat_unknown_counters", machine);
            }
            // Chrome's own fields, as the reference's ChromeSystemProbesParser reads them:
            // a process arg and two counters (named in kB, valued in bytes).
            if let Some(resettable) = p.is_peak_rss_resettable {
                let arg = self
                    .sink
                    .static_arg("is_peak_rss_resettable", ArgValue::Bool(resettable));
                let data = EventData::ProcessArgs {
                    process,
                    args: self.sink.args.push(&[arg]),
                };
                self.sink.push(ts, clock, data);
            }
            let chrome = [
                ("chrome.private_footprint_kb", p.chrome_private_footprint_kb),
                ("chrome.peak_resident_set_kb", p.chrome_peak_resident_set_kb),
            ];
            for (name, value) in chrome {
                let Some(value) = value else { continue };
                let name = self.sink.intern(name);
                let track = self.sink.track(TrackKey::ProcessCounter {
                    process,
                    name,
                    kind: "chrome_process_stats",
                });
                self.push_counter(ts, clock, track, f64::from(value) * 1024.0, NO_ARGS);
            }
        }
    }

    pub(super) fn sys_stats(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        s: &protos::SysStats,
    ) {
        self.sink.touch();
        for m in &s.meminfo {
            let key = m.key.unwrap_or(0);
            let Some(&name) = usize::try_from(key).ok().and_then(|k| MEMINFO_KEYS.get(k)) else {
                self.stat("meminfo_unknown_keys", machine);
                continue;
            };
            let dims = [("meminfo_key", ArgValue::Str(self.sink.intern(name)))];
            let spec = ProbeSpec {
                dims: &dims,
                unit: Some("bytes"),
                ..ProbeSpec::new("meminfo", name)
            };
            let value = m.value.unwrap_or(0) as f64 * 1024.0;
            self.probe_counter(machine, ts, clock, &spec, value);
        }
        for v in &s.vmstat {
            let key = v.key.unwrap_or(0);
            let Some(name) = protos::VmstatCounters::try_from(key)
                .ok()
                .filter(|&k| k != protos::VmstatCounters::VmstatUnspecified)
                .map(|k| k.as_str_name().trim_start_matches("VMSTAT_").to_lowercase())
            else {
                self.stat("vmstat_unknown_keys", machine);
                continue;
            };
            let dims = [("vmstat_key", ArgValue::Str(self.sink.intern(&name)))];
            let spec = ProbeSpec {
                dims: &dims,
                ..ProbeSpec::new("vmstat", &name)
            };
            self.probe_counter(machine, ts, clock, &spec, v.value.unwrap_or(0) as f64);
        }
        for c in &s.cpu_stat {
            // Times without their cpu are counted and skipped, as the reference does.
            let Some(cpu) = c.cpu_id else {
                self.stat("invalid_cpu_times", machine);
                continue;
            };
            let times = [
                ("user_ns", c.user_ns),
                ("user_nice_ns", c.user_nice_ns),
                ("system_mode_ns", c.system_mode_ns),
                ("idle_ns", c.idle_ns),
                ("io_wait_ns", c.io_wait_ns),
                ("irq_ns", c.irq_ns),
                ("softirq_ns", c.softirq_ns),
                ("steal_ns", c.steal_ns),
            ];
            // Every cpu time is written, 0 when absent, as the reference does.
            for (key, value) in times {
                let value = value.unwrap_or(0);
                let name = format!("cpu.times.{key}");
                let dims = [("cpustat_key", ArgValue::Str(self.sink.intern(key)))];
                let spec = ProbeSpec {
                    scope: ProbeScope::Cpu(cpu),
                    dims: &dims,
                    unit: Some("ns"),
                    ..ProbeSpec::new("cpustat", &name)
                };
                self.probe_counter(machine, ts, clock, &spec, value as f64);
            }
        }
        let totals = [
            ("num_forks", s.num_forks),
            ("num_irq_total", s.num_irq_total),
            ("num_softirq_total", s.num_softirq_total),
        ];
        for (name, value) in totals {
            let Some(value) = value else { continue };
            let spec = ProbeSpec::new(name, name);
            self.probe_counter(machine, ts, clock, &spec, value as f64);
        }
        for (kind, list) in [("num_irq", &s.num_irq), ("num_softirq", &s.num_softirq)] {
            for irq in list {
                let id = irq.irq.unwrap_or(0);
                let name = format!("{kind} (id: {id})");
                let dims = [("irq", ArgValue::Int(i64::from(id)))];
                let spec = ProbeSpec {
                    dims: &dims,
                    ..ProbeSpec::new(kind, &name)
                };
                self.probe_counter(machine, ts, clock, &spec, irq.count.unwrap_or(0) as f64);
            }
        }
        for d in &s.devfreq {
            let key = d.key.clone().unwrap_or_default();
            let name = key.clone();
            let dims = [("devfreq_key", ArgValue::Str(self.sink.intern(&key)))];
            let spec = ProbeSpec {
                dims: &dims,
                unit: Some("kHz"),
                ..ProbeSpec::new("devfreq", &name)
            };
            self.probe_counter(machine, ts, clock, &spec, d.value.unwrap_or(0) as f64);
        }
        for (cpu, &khz) in s.cpufreq_khz.iter().enumerate() {
            let name = self.sink.intern("cpufreq");
            let track = self.sink.track(TrackKey::CpuCounter {
                machine,
                cpu: cpu as u32,
                name,
                kind: "cpu_frequency",
            });
            self.push_counter(ts, clock, track, f64::from(khz), NO_ARGS);
        }
        for (gpu, &mhz) in s.gpufreq_mhz.iter().enumerate() {
            let dims = [("gpu", ArgValue::Int(gpu as i64))];
            let spec = ProbeSpec {
                dims: &dims,
                unit: Some("MHz"),
                ..ProbeSpec::new("gpu_frequency", "gpufreq")
            };
            self.probe_counter(machine, ts, clock, &spec, mhz as f64);
        }
        for b in &s.buddy_info {
            let node = b.node.as_deref().unwrap_or("");
            let zone = b.zone.as_deref().unwrap_or("");
            for (order, &pages) in b.order_pages.iter().enumerate() {
                let size_kb = 4u64 << order;
                let name = format!("mem.buddyinfo[{node}][{zone}][{size_kb} kB]");
                let dims = [
                    ("buddyinfo_node", ArgValue::Str(self.sink.intern(node))),
                    ("buddyinfo_zone", ArgValue::Str(self.sink.intern(zone))),
                    ("buddyinfo_chunk_size_kb", ArgValue::Int(size_kb as i64)),
                ];
                let spec = ProbeSpec {
                    dims: &dims,
                    ..ProbeSpec::new("buddyinfo", &name)
                };
                self.probe_counter(machine, ts, clock, &spec, f64::from(pages));
            }
        }
        for d in &s.disk_stat {
            self.disk_stat(machine, ts, clock, d);
        }
        for p in &s.psi {
            let resource = p.resource.unwrap_or(0);
            let Some(&name) = usize::try_from(resource)
                .ok()
                .and_then(|r| PSI.get(r))
                .filter(|n| !n.is_empty())
            else {
                self.stat("psi_unknown_resource", machine);
                continue;
            };
            let dims = [("psi_resource", ArgValue::Str(self.sink.intern(name)))];
            let spec = ProbeSpec {
                dims: &dims,
                unit: Some("ns"),
                ..ProbeSpec::new("psi", name)
            };
            self.probe_counter(machine, ts, clock, &spec, p.total_ns.unwrap_or(0) as f64);
        }
        for z in &s.thermal_zone {
            let kind = z.r#type.clone().unwrap_or_default();
            let dims = [("thermal_zone", ArgValue::Str(self.sink.intern(&kind)))];
            let spec = ProbeSpec {
                dims: &dims,
                unit: Some("C"),
                ..ProbeSpec::new("thermal_temperature", &kind)
            };
            self.probe_counter(machine, ts, clock, &spec, z.temp.unwrap_or(0) as f64);
        }
        for c in &s.cpuidle_state {
            let cpu = c.cpu_id.unwrap_or(0);
            for e in &c.cpuidle_state_entry {
                let state = e.state.clone().unwrap_or_default();
                let name = format!("cpuidle.{state}");
                let dims = [("state", ArgValue::Str(self.sink.intern(&state)))];
                let spec = ProbeSpec {
                    scope: ProbeScope::Cpu(cpu),
                    dims: &dims,
                    unit: Some("us"),
                    ..ProbeSpec::new("cpu_idle_state", &name)
                };
                let value = e.duration_us.unwrap_or(0) as f64;
                self.probe_counter(machine, ts, clock, &spec, value);
            }
        }
    }

    /// Disk stats are cumulative: each sample after a device's first gives the amount moved
    /// since the one before (MB), the throughput over the time the disk spent on it (MB/s),
    /// and the flushes.
    fn disk_stat(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        d: &protos::sys_stats::DiskStat,
    ) {
        let device = d.device_name.clone().unwrap_or_default();
        let now = [
            d.read_sectors.unwrap_or(0),
            d.read_time_ms.unwrap_or(0),
            d.write_sectors.unwrap_or(0),
            d.write_time_ms.unwrap_or(0),
            d.discard_sectors.unwrap_or(0),
            d.discard_time_ms.unwrap_or(0),
            d.flush_count.unwrap_or(0),
            d.flush_time_ms.unwrap_or(0),
        ];
        let previous = self
            .probes
            .disks
            .insert((machine, device.clone()), (ts, now));
        let Some((_, before)) = previous else { return };
        let delta = |i: usize| now[i].saturating_sub(before[i]);
        let mut values: Vec<(&str, f64, &str)> = Vec::new();
        for (what, sectors, time) in [("read", 0, 1), ("write", 2, 3), ("discard", 4, 5)] {
            let amount = sectors_mb(delta(sectors));
            values.push((what, amount, "amount"));
            let ms = delta(time);
            if ms > 0 {
                values.push((what, amount / (ms as f64 / 1000.0), "throughput"));
            }
        }
        values.push(("flush", delta(6) as f64, "amount"));
        values.push(("flush", delta(7) as f64, "time"));
        for (what, value, measure) in values {
            let name = format!("diskstat.[{device}].{what}_{measure}");
            let unit = match (what, measure) {
                ("flush", "amount") => "count",
                ("flush", _) => "ms",
                (_, "amount") => "MB",
                _ => "MB/s",
            };
            let dims = [("device_name", ArgValue::Str(self.sink.intern(&device)))];
            let spec = ProbeSpec {
                dims: &dims,
                unit: Some(unit),
                ..ProbeSpec::new("diskstat", &name)
            };
            self.probe_counter(machine, ts, clock, &spec, value);
        }
    }
}

impl Parser<'_> {
    /// `journald_event`: a journal entry, or (when it carries counts) the journal reader's
    /// totals as stats, which make no entry.
    pub(super) fn journald(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        ev: &protos::SystemdJournaldEvent,
    ) {
        if ev.num_total.is_some() || ev.num_failed.is_some() {
            self.sink.touch();
            if let Some(n) = ev.num_total {
                self.sink
                    .set_stat("systemd_journal_num_total", None, machine, n as i64);
            }
            if let Some(n) = ev.num_failed {
                self.sink
                    .set_stat("systemd_journal_num_failed", None, machine, n as i64);
            }
            return;
        }
        let pid = ev.pid.map(i64::from);
        let tid = ev.tid.map(i64::from);
        let thread = pid.map(|pid| ThreadRef {
            machine,
            tid: tid.unwrap_or(pid),
            pid: Some(pid),
        });
        let entry = JournaldEntry {
            thread,
            pid,
            tid,
            uid: ev.uid.map(i64::from),
            gid: ev.gid.map(i64::from),
            prio: ev.prio.map(i64::from),
            tag: self.sink.intern_opt(ev.tag.as_deref()),
            msg: self.sink.intern_opt(ev.message.as_deref()),
            comm: self.sink.intern_opt(ev.comm.as_deref()),
            exe: self.sink.intern_opt(ev.exe.as_deref()),
            systemd_unit: self.sink.intern_opt(ev.systemd_unit.as_deref()),
            hostname: self.sink.intern_opt(ev.hostname.as_deref()),
            transport: self.sink.intern_opt(ev.transport.as_deref()),
        };
        self.sink
            .push(ts, clock, EventData::Journald(Box::new(entry)));
    }
}
