//! The generic kernel packets (`generic_kernel_task_state_event`,
//! `generic_kernel_cpu_freq_event`, `generic_kernel_task_rename_event`,
//! `generic_kernel_process_tree`): scheduling and process facts from kernels traced without
//! ftrace. Read from the packet's bytes; hands on [`GenericKernelEvent`]s (the model's
//! generic kernel tracker), thread names and cpu frequency counters.

use super::schema::{next_field, Value};
use super::*;

/// TracePacket field numbers of the generic kernel packets.
pub(super) const TASK_STATE: u32 = 117;
pub(super) const CPU_FREQ: u32 = 118;
pub(super) const TASK_RENAME: u32 = 120;
pub(super) const PROCESS_TREE: u32 = 122;

pub(super) fn is_generic_kernel(kind: u32) -> bool {
    matches!(kind, TASK_STATE | CPU_FREQ | TASK_RENAME | PROCESS_TREE)
}

/// The fields of a message as (number, value), in order.
fn fields(mut bytes: &[u8]) -> Vec<(u32, Value<'_>)> {
    let mut out = Vec::new();
    while let Some(field) = next_field(&mut bytes) {
        out.push(field);
    }
    out
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Varint(v) | Value::Fixed64(v) => Some(*v as i64),
        Value::Fixed32(v) => Some(i64::from(*v as i32)),
        Value::Len(_) => None,
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::Len(b) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    }
}

impl Parser<'_> {
    /// A generic kernel packet; `packet` is the whole TracePacket.
    pub(super) fn generic_kernel(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        packet: &[u8],
    ) {
        for (number, value) in fields(packet) {
            let Value::Len(payload) = value else {
                continue;
            };
            match number {
                TASK_STATE => self.generic_task_state(machine, ts, clock, payload),
                CPU_FREQ => {
                    let (mut cpu, mut freq) = (0u32, 0i64);
                    for (n, v) in fields(payload) {
                        match n {
                            1 => cpu = int(&v).unwrap_or(0) as u32,
                            2 => freq = int(&v).unwrap_or(0),
                            _ => {}
                        }
                    }
                    let name = self.sink.intern("cpufreq");
                    let track = self.sink.track(TrackKey::CpuCounter {
                        machine,
                        cpu,
                        name,
                        kind: "cpu_frequency",
                    });
                    // Hz in the packet, kHz in the counter (as cpu_frequency's).
                    let data = EventData::Counter {
                        track,
                        value: Real(freq as f64 / 1000.0),
                        args: NO_ARGS,
                    };
                    self.sink.push(ts, clock, data);
                }
                TASK_RENAME => {
                    let (mut tid, mut comm) = (0i64, None);
                    for (n, v) in fields(payload) {
                        match n {
                            1 => tid = int(&v).unwrap_or(0),
                            2 => comm = text(&v),
                            _ => {}
                        }
                    }
                    let name = self.sink.intern_opt(comm.as_deref());
                    let data = EventData::ThreadName {
                        thread: ThreadRef {
                            machine,
                            tid,
                            pid: None,
                        },
                        name,
                        priority: NamePriority::Ftrace,
                    };
                    self.sink.push(ts, clock, data);
                }
                PROCESS_TREE => self.generic_process_tree(machine, ts, clock, payload),
                _ => {}
            }
        }
    }

    fn generic_task_state(&mut self, machine: MachineId, ts: i64, clock: ClockRef, p: &[u8]) {
        let (mut cpu, mut comm, mut tid, mut state, mut prio) = (None, None, 0i64, 0u8, 0i32);
        for (n, v) in fields(p) {
            match n {
                1 => cpu = int(&v).and_then(|c| u32::try_from(c).ok()),
                2 => comm = text(&v),
                3 => tid = int(&v).unwrap_or(0),
                4 => state = int(&v).and_then(|s| u8::try_from(s).ok()).unwrap_or(0),
                5 => prio = int(&v).unwrap_or(0) as i32,
                _ => {}
            }
        }
        let comm = self.sink.intern_opt(comm.as_deref());
        let ev = GenericKernelEvent::TaskState {
            machine,
            cpu,
            tid,
            comm,
            state,
            prio,
        };
        self.sink
            .push(ts, clock, EventData::GenericKernel(Box::new(ev)));
    }

    fn generic_process_tree(&mut self, machine: MachineId, ts: i64, clock: ClockRef, p: &[u8]) {
        for (n, v) in fields(p) {
            let Value::Len(entry) = v else {
                continue;
            };
            let ev = match n {
                1 => {
                    let (mut pid, mut ppid, mut cmdline) = (0i64, 0i64, None);
                    for (n, v) in fields(entry) {
                        match n {
                            1 => pid = int(&v).unwrap_or(0),
                            2 => ppid = int(&v).unwrap_or(0),
                            3 => cmdline = text(&v),
                            _ => {}
                        }
                    }
                    GenericKernelEvent::Process {
                        machine,
                        pid,
                        ppid,
                        cmdline: self.sink.intern_opt(cmdline.as_deref()),
                    }
                }
                2 => {
                    let (mut tid, mut pid, mut comm, mut main, mut idle) =
                        (0i64, 0i64, None, false, false);
                    for (n, v) in fields(entry) {
                        match n {
                            1 => tid = int(&v).unwrap_or(0),
                            2 => pid = int(&v).unwrap_or(0),
                            3 => comm = text(&v),
                            4 => main = int(&v).unwrap_or(0) != 0,
                            5 => idle = int(&v).unwrap_or(0) != 0,
                            _ => {}
                        }
                    }
                    GenericKernelEvent::Thread {
                        machine,
                        tid,
                        pid,
                        comm: self.sink.intern_opt(comm.as_deref()),
                        is_main_thread: main,
                        is_idle: idle,
                    }
                }
                _ => continue,
            };
            self.sink
                .push(ts, clock, EventData::GenericKernel(Box::new(ev)));
        }
    }
}
