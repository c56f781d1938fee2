//! `thread_state` from the scheduler's events, as Trace Processor's thread state tracker
//! builds it: every thread has at most one open row; a switch closes the rows of the two
//! threads it names and opens new ones (the switched-out thread in its `prev_state`, the
//! switched-in one `Running` on the cpu); a waking turns a blocked thread runnable and
//! records who woke it; a new task starts runnable, woken by its creator.

use super::tables::{SpuriousWakeupRow, ThreadStateRow};
use super::Builder;
use crate::ir::{StrId, NULL_STR};

/// The open row of one thread.
#[derive(Clone, Copy, Debug)]
pub(super) struct OpenThreadState {
    id: u32,
    row: ThreadStateRow,
}

/// What opens a row besides its state.
#[derive(Clone, Copy, Default)]
pub(super) struct Opening {
    pub(super) cpu: Option<(u32, u32)>,
    pub(super) waker_utid: Option<u32>,
    pub(super) irq_context: Option<bool>,
}

impl Builder<'_> {
    /// A `sched_switch` from `prev` (leaving in `prev_state`) to `next` on `cpu`. The idle
    /// thread (utid 0) has no rows.
    pub(super) fn thread_state_switch(
        &mut self,
        ts: i64,
        prev: u32,
        prev_state: StrId,
        next: u32,
        cpu: (u32, u32),
    ) {
        let running = self.running_state();
        if prev != 0 {
            // A thread switched out must have been running; if its open row says otherwise
            // a switch-in was lost, and that row's end is unknown.
            let was_running = self
                .open_thread_states
                .get(&prev)
                .is_some_and(|open| open.row.state == running);
            self.close_thread_state(prev, ts, was_running);
            self.open_thread_state(ts, prev, prev_state, Opening::default());
        }
        if next != 0 {
            self.close_thread_state(next, ts, true);
            let opening = Opening {
                cpu: Some(cpu),
                ..Opening::default()
            };
            self.open_thread_state(ts, next, running, opening);
        }
    }

    /// A `sched_waking` of `wakee` by `waker`. Waking a thread that is already runnable or
    /// running leaves its rows alone and is filed as a spurious wakeup, as Trace Processor
    /// does (`spurious_sched_wakeup`, naming the wakee's current row).
    pub(super) fn thread_state_waking(
        &mut self,
        ts: i64,
        wakee: u32,
        waker: Option<u32>,
        irq_context: Option<bool>,
    ) {
        if wakee == 0 {
            return;
        }
        let runnable = self.sink.intern("R");
        let running = self.running_state();
        if let Some(open) = self.open_thread_states.get(&wakee) {
            if open.row.state == runnable || open.row.state == running {
                let row = SpuriousWakeupRow {
                    ts,
                    thread_state_id: open.id,
                    irq_context,
                    utid: wakee,
                    waker_utid: waker,
                };
                self.tables.spurious_wakeups.push(row);
                return;
            }
            self.close_thread_state(wakee, ts, true);
        }
        let opening = Opening {
            waker_utid: waker,
            irq_context,
            ..Opening::default()
        };
        self.open_thread_state(ts, wakee, runnable, opening);
    }

    /// A task created by `creator` starts runnable.
    pub(super) fn thread_state_new_task(&mut self, ts: i64, utid: u32, creator: u32) {
        if utid == 0 {
            return;
        }
        let runnable = self.sink.intern("R");
        self.close_thread_state(utid, ts, true);
        let opening = Opening {
            waker_utid: Some(creator),
            irq_context: Some(false),
            ..Opening::default()
        };
        self.open_thread_state(ts, utid, runnable, opening);
    }

    /// `sched_blocked_reason`: why the thread's latest uninterruptible sleep began. The
    /// kernel reports it from the wakeup path, after the waking: the sleep is usually over
    /// by then, so the thread's last blocked row is kept unwritten until the next one.
    pub(super) fn thread_state_blocked_reason(
        &mut self,
        utid: u32,
        io_wait: Option<bool>,
        function: StrId,
    ) {
        let open_blocked = self
            .open_thread_states
            .get(&utid)
            .is_some_and(|open| self.is_blocked(open.row.state));
        let row = if open_blocked {
            self.open_thread_states.get_mut(&utid).map(|o| &mut o.row)
        } else {
            self.last_blocked_states.get_mut(&utid).map(|o| &mut o.row)
        };
        if let Some(row) = row {
            row.io_wait = io_wait;
            if function != NULL_STR {
                row.blocked_function = function;
            }
        }
    }

    fn is_blocked(&self, state: StrId) -> bool {
        self.sink
            .strings
            .get(state)
            .is_some_and(|s| s.starts_with('D'))
    }

    /// Writes the rows still open at the end of the trace (their `dur` stays −1) and the
    /// blocked rows kept for a late blocked reason.
    pub(super) fn flush_thread_states(&mut self) {
        let mut open: Vec<OpenThreadState> = self
            .open_thread_states
            .drain()
            .chain(self.last_blocked_states.drain())
            .map(|(_, v)| v)
            .collect();
        open.sort_unstable_by_key(|o| o.id);
        for o in open {
            self.out.thread_state(o.id, &o.row, self.sink);
        }
    }

    pub(super) fn running_state(&mut self) -> StrId {
        self.sink.intern("Running")
    }

    /// Ends the thread's open row at `ts`, or leaves its end unknown (−1) when `ended` is
    /// false, and writes it.
    pub(super) fn close_thread_state(&mut self, utid: u32, ts: i64, ended: bool) {
        if let Some(mut open) = self.open_thread_states.remove(&utid) {
            if ended {
                open.row.dur = ts - open.row.ts;
            }
            if self.is_blocked(open.row.state) {
                // Kept for a blocked reason still to come; the one it replaces is final.
                if let Some(done) = self.last_blocked_states.insert(utid, open) {
                    self.out.thread_state(done.id, &done.row, self.sink);
                }
            } else {
                self.out.thread_state(open.id, &open.row, self.sink);
            }
        }
    }

    pub(super) fn open_thread_state(&mut self, ts: i64, utid: u32, state: StrId, opening: Opening) {
        let running = self.running_state();
        // The waker's row, if it is running: the wakeup came from that stretch of running.
        let waker_id = opening.waker_utid.and_then(|w| {
            self.open_thread_states
                .get(&w)
                .filter(|open| open.row.state == running)
                .map(|open| open.id)
        });
        let id = self.tables.thread_state_count;
        self.tables.thread_state_count += 1;
        let row = ThreadStateRow {
            ts,
            dur: -1,
            cpu: opening.cpu.map(|c| c.0),
            ucpu: opening.cpu.map(|c| c.1),
            utid,
            state,
            io_wait: None,
            blocked_function: NULL_STR,
            waker_utid: opening.waker_utid,
            waker_id,
            irq_context: opening.irq_context,
        };
        self.open_thread_states
            .insert(utid, OpenThreadState { id, row });
    }
}
