//! App wakelocks (`app_wakelock_bundle`, the `android.app_wakelocks` data source), as Trace
//! Processor's AppWakelockModule reads them: each acquire begins a slice named by the
//! wakelock's tag on the compressor track set `app_wakelock_events` (one lane per wakelock
//! held at once), each release ends the slice of the same wakelock (its interned id). The
//! wakelock's description is interned (`InternedData.app_wakelock_info`) and gives the
//! slice's args `flags`, `owner_pid`, `owner_uid` and, when the work source has one,
//! `work_uid`. A bundle lists events as pairs (interned id, encoded time), the encoded
//! time being `(event_time - packet_time) << 1 | acquired`; a single event may instead
//! carry its description (`info`) and `acquired` inline.
//!
//! Losses: an interned id the sequence never defined drops the event
//! (`app_wakelock_unknown_id`); a bundle whose two lists differ in length keeps the pairs
//! and is counted (`app_wakelock_parse_error`), as are lists beside a single event's
//! `info` (not read) and an event whose time overflows the clock (dropped).
//!
//! Hands on `Begin` / `End` slice events on `AsyncCookie` tracks keyed by the interned id.

use super::*;
use crate::parse::ftrace_events::global_set;

impl Parser<'_> {
    /// `app_wakelock_bundle`: acquires and releases of app wakelocks.
    pub(super) fn app_wakelock_bundle(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        bundle: &protos::AppWakelockBundle,
    ) {
        if let Some(info) = &bundle.info {
            let acquired = bundle.acquired.unwrap_or(false);
            self.app_wakelock_event(machine, ts, clock, info, acquired);
            // The single-event form reads only `info`: lists beside it are not read.
            if !bundle.intern_id.is_empty() || !bundle.encoded_ts.is_empty() {
                self.sink.stat("app_wakelock_parse_error", machine, 1);
            }
            return;
        }
        if bundle.intern_id.len() != bundle.encoded_ts.len() {
            self.sink.stat("app_wakelock_parse_error", machine, 1);
        } else if bundle.intern_id.is_empty() {
            // An empty bundle: nothing to place, nothing lost.
            self.sink.touch();
        }
        for (&iid, &encoded) in bundle.intern_id.iter().zip(&bundle.encoded_ts) {
            let info = self
                .sequences
                .get(&(machine, seq_id))
                .and_then(|seq| seq.app_wakelocks.get(&iid))
                .cloned();
            let Some(info) = info else {
                self.sink.stat("app_wakelock_unknown_id", machine, 1);
                continue;
            };
            let Some(at) = i64::try_from(encoded >> 1)
                .ok()
                .and_then(|offset| ts.checked_add(offset))
            else {
                // A time past the end of the clock: the event cannot be placed.
                self.sink.stat("app_wakelock_parse_error", machine, 1);
                continue;
            };
            self.app_wakelock_event(machine, at, clock, &info, encoded & 1 == 1);
        }
    }

    fn app_wakelock_event(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        info: &protos::AppWakelockInfo,
        acquired: bool,
    ) {
        let set = global_set(
            self.sink,
            machine,
            "app_wakelock_events",
            "app_wakelock_events",
        );
        // The wakelock's interned id pairs a release with its acquire.
        let cookie = info.iid.unwrap_or(0) as u32 as u64;
        let track = self.sink.track(TrackKey::AsyncCookie { set, cookie });
        let event = if acquired {
            let mut args = vec![self
                .sink
                .static_arg("flags", ArgValue::Int(i64::from(info.flags.unwrap_or(0))))];
            let optional = [
                ("owner_pid", info.owner_pid),
                ("owner_uid", info.owner_uid),
                ("work_uid", info.work_uid),
            ];
            for (key, value) in optional {
                if let Some(v) = value {
                    args.push(self.sink.static_arg(key, ArgValue::Int(i64::from(v))));
                }
            }
            let name = self.sink.intern(info.tag.as_deref().unwrap_or(""));
            EventData::Begin(SliceEvent {
                track,
                category: NULL_STR,
                name,
                args: self.sink.args.push(&args),
                thread_ts: NO_TS,
                flows: NO_FLOWS,
            })
        } else {
            EventData::End(SliceEvent {
                track,
                category: NULL_STR,
                name: NULL_STR,
                args: NO_ARGS,
                thread_ts: NO_TS,
                flows: NO_FLOWS,
            })
        };
        self.sink.push(ts, clock, event);
    }
}
