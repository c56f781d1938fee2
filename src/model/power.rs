//! The power tracker: suspend/resume phases (`suspend_resume`) as slices on the
//! `Suspend/Resume Latency` tracks, one compressor slot per phase name, with the
//! reference's repairs (a phase started again closes the first, renamed `replica`; ending
//! `thaw_processes` inside `freeze_processes` and `suspend_enter` closes the
//! `suspend_enter` a failed suspend never ends), and wakeup sources as `Wakelock(<name>)`
//! slices on the `Wakelocks` tracks, counted so nested activations make one slice. Hands
//! on slices through the slice tracker.

use super::*;

#[derive(Default)]
pub(super) struct PowerState {
    /// Suspend/resume phases begun and not ended, by name.
    ongoing: FxHashMap<(MachineId, StrId), bool>,
    /// Activations of each wakeup source not yet deactivated.
    wakelocks: FxHashMap<(MachineId, StrId), u32>,
}

impl Builder<'_> {
    fn cookie_track(&mut self, set: AsyncSet, cookie: u64, ts: i64, phase: AsyncPhase) -> u32 {
        let key = TrackKey::AsyncCookie { set, cookie };
        self.async_track(key, ts, phase)
    }

    fn plain_slice(name: StrId, category: StrId) -> SliceEvent {
        SliceEvent {
            track: 0,
            category,
            name,
            args: NO_ARGS,
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        }
    }

    fn suspend_set(&mut self, machine: MachineId) -> AsyncSet {
        AsyncSet {
            kind: "suspend_resume",
            machine,
            process: None,
            name: self.sink.intern("Suspend/Resume Latency"),
            scope: NULL_STR,
        }
    }

    fn suspend_end(&mut self, ts: i64, machine: MachineId, name: StrId) -> Option<u32> {
        let set = self.suspend_set(machine);
        let track = self.cookie_track(set, u64::from(name), ts, AsyncPhase::End);
        self.end(track, ts, &Self::plain_slice(NULL_STR, NULL_STR))
    }

    pub(super) fn suspend_resume(
        &mut self,
        ts: i64,
        machine: MachineId,
        action: StrId,
        name: StrId,
        start: bool,
    ) {
        self.note_ts(ts);
        if !start {
            // A failed suspend ends thaw_processes inside freeze_processes and never ends
            // suspend_enter: end it here.
            if self.sink.strings.get(action) == Some("thaw_processes") {
                let freeze = self.sink.intern("freeze_processes(0)");
                let enter = self.sink.intern("suspend_enter(3)");
                let on = |b: &Self, n| b.power.ongoing.get(&(machine, n)).copied() == Some(true);
                if on(self, freeze) && on(self, enter) {
                    self.suspend_end(ts, machine, enter);
                    self.power.ongoing.insert((machine, enter), false);
                }
            }
            self.suspend_end(ts, machine, name);
            self.power.ongoing.insert((machine, name), false);
            return;
        }
        // A phase started again before it ended: the first ends here, as a replica.
        if self.power.ongoing.get(&(machine, name)).copied() == Some(true) {
            let set = self.suspend_set(machine);
            let track = self.cookie_track(set, u64::from(name), ts, AsyncPhase::End);
            let open = self
                .stacks
                .get(track as usize)
                .and_then(|stack| stack.iter().rev().find(|e| e.dur < 0).map(|e| e.slice));
            if let Some(id) = open {
                let replica = self.sink.intern("replica");
                if let Some(row) = self.live_slices.get_mut(&id) {
                    row.name = replica;
                }
            }
            self.end(track, ts, &Self::plain_slice(NULL_STR, NULL_STR));
        }
        let set = self.suspend_set(machine);
        let track = self.cookie_track(set, u64::from(name), ts, AsyncPhase::Begin);
        let category = set.name;
        self.begin(track, ts, &Self::plain_slice(name, category));
        self.power.ongoing.insert((machine, name), true);
    }

    /// A wakeup source activated or deactivated: a slice from its first activation to the
    /// deactivation that balances them.
    pub(super) fn wakelock(&mut self, ts: i64, machine: MachineId, name: StrId, activate: bool) {
        self.note_ts(ts);
        let count = self.power.wakelocks.entry((machine, name)).or_insert(0);
        let before = *count;
        if activate {
            *count += 1;
            if before != 0 {
                return;
            }
        } else {
            *count = before.saturating_sub(1);
            if before != 1 {
                return;
            }
        }
        let set = AsyncSet {
            kind: "wakesource_wakelock",
            machine,
            process: None,
            name: self.sink.intern("Wakelocks"),
            scope: NULL_STR,
        };
        if activate {
            let title = format!("Wakelock({})", self.sink.strings.get(name).unwrap_or(""));
            let title = self.sink.intern(&title);
            let track = self.cookie_track(set, u64::from(name), ts, AsyncPhase::Begin);
            self.begin(track, ts, &Self::plain_slice(title, NULL_STR));
        } else {
            let track = self.cookie_track(set, u64::from(name), ts, AsyncPhase::End);
            self.end(track, ts, &Self::plain_slice(NULL_STR, NULL_STR));
        }
    }
}
