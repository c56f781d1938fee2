//! Windows ETW kernel events (`etw_events`), as Trace Processor's EtwModule reads them.
//! A bundle's events each carry their own timestamp (trace time, not converted) and cpu
//! (else the bundle's). A context switch (`c_switch`) is a sched_switch: it ends the
//! running slice of the cpu with the old thread's state and starts the new thread's
//! (with its priority), and moves both threads' thread states; the old thread's state is
//! Windows' (`Initialized`, `R` ready, `Running`, `Stand By`, `T` terminated, `Waiting`,
//! `Transition`, `Deferred Ready`), an unknown one is NULL and counted in
//! `task_state_invalid`. A `ready_thread` makes its thread (`t_thread_id`) runnable, woken
//! by the event's `thread_id`. ETW events carry no thread names or pids.
//!
//! An event without a timestamp, or without a cpu when its bundle has none, or with a cpu
//! past 1024 fails the import, as in the reference (its tokenizer errors).
//!
//! Hands on `SchedSwitch` and `SchedWaking` events.

use super::*;

/// The most cpus a trace may name (as for ftrace).
const MAX_ETW_CPUS: u32 = 1024;

/// Windows' thread states (`KTHREAD_STATE`), as the reference names them.
fn thread_state_name(state: i32) -> Option<&'static str> {
    // The reference reads the state as one byte.
    Some(match state as u8 {
        0 => "Initialized",
        1 => "R",
        2 => "Running",
        3 => "Stand By",
        4 => "T",
        5 => "Waiting",
        6 => "Transition",
        7 => "Deferred Ready",
        _ => return None,
    })
}

impl Parser<'_> {
    /// `etw_events`: a bundle of ETW events.
    pub(super) fn etw_bundle(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        bundle: &protos::EtwTraceEventBundle,
    ) {
        use protos::etw_trace_event::Event as E;
        let clock = self.clock(machine, seq_id, clocks::UNCONVERTED);
        for ev in &bundle.event {
            let Some(cpu) = ev.cpu.or(bundle.cpu) else {
                self.fatal.get_or_insert(ParseError::invalid(
                    "CPU field not found in EtwEvent and/or EtwEventBundle",
                ));
                return;
            };
            if cpu >= MAX_ETW_CPUS {
                self.fatal.get_or_insert(ParseError::invalid(format!(
                    "CPU {cpu} is greater than maximum allowed of {MAX_ETW_CPUS}. This is \
                     likely because of trace corruption"
                )));
                return;
            }
            let Some(ts) = ev.timestamp else {
                self.fatal
                    .get_or_insert(ParseError::invalid("Timestamp field not found in EtwEvent"));
                return;
            };
            let ts = ts as i64;
            match &ev.event {
                Some(E::CSwitch(cs)) => self.etw_cswitch(machine, cpu, ts, clock, cs),
                Some(E::ReadyThread(rt)) => {
                    let data = EventData::SchedWaking(SchedWaking {
                        machine,
                        cpu,
                        tid: i64::from(rt.t_thread_id.unwrap_or(0)),
                        comm: NULL_STR,
                        waker_tid: Some(i64::from(ev.thread_id.unwrap_or(0))),
                        irq_context: None,
                    });
                    self.sink.push(ts, clock, data);
                }
                // Kinds the reference does not read either.
                None => self.sink.touch(),
            }
        }
    }

    fn etw_cswitch(
        &mut self,
        machine: MachineId,
        cpu: u32,
        ts: i64,
        clock: ClockRef,
        cs: &protos::CSwitchEtwEvent,
    ) {
        use protos::c_switch_etw_event::OldThreadStateEnumOrInt as S;
        let state = match cs.old_thread_state_enum_or_int {
            Some(S::OldThreadState(s)) | Some(S::OldThreadStateInt(s)) => s,
            None => 0,
        };
        let prev_state = match thread_state_name(state) {
            Some(name) => self.sink.intern(name),
            None => {
                self.sink.stat("task_state_invalid", machine, 1);
                NULL_STR
            }
        };
        let data = EventData::SchedSwitch(SchedSwitch {
            machine,
            cpu,
            prev_tid: i64::from(cs.old_thread_id.unwrap_or(0)),
            prev_comm: NULL_STR,
            prev_state,
            next_tid: i64::from(cs.new_thread_id.unwrap_or(0)),
            next_comm: NULL_STR,
            next_prio: cs.new_thread_priority.unwrap_or(0),
        });
        self.sink.push(ts, clock, data);
    }
}
