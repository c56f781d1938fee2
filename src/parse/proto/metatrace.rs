//! Trace Processor's and traced's own metatrace (`perfetto_metatrace`), as Trace
//! Processor's MetatraceModule reads it. Each packet may first define interned strings
//! (`interned_strings`: iid → string, for the whole trace, not a sequence). An event (named
//! by `event_name`, or `event_name_iid`) becomes a slice of category `metatrace` on the
//! thread track of `thread_id`, lasting `event_duration_ns`; a counter (`counter_name`)
//! becomes a value on the thread's counter track of that name (type `metatrace_counter`).
//! Either gets the packet's `args` as string args (keys and values plain or interned).
//! `has_overruns` counts `metatrace_overruns`.
//!
//! Events and counters named only by an id of traced's built-in tables (`event_id`,
//! `counter_id`) are not imported (Sextant does not know those tables): counted in
//! `proto_packet_kind_not_imported` with index 49, like a packet of a kind not imported.
//!
//! Hands on `Complete` slices on `ThreadSlices` and `Counter`s on `ThreadCounter` tracks.

use super::*;

/// The TracePacket field of `perfetto_metatrace`.
const METATRACE_FIELD: i64 = 49;

impl Parser<'_> {
    /// `perfetto_metatrace`: one event, one counter value, or only interned strings.
    pub(super) fn metatrace(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        ev: &protos::PerfettoMetatrace,
    ) {
        use protos::perfetto_metatrace::RecordType as R;
        // Whatever the packet holds besides.
        if ev.has_overruns() {
            self.sink.stat("metatrace_overruns", machine, 1);
        }
        for s in &ev.interned_strings {
            let value = self.sink.intern(s.value.as_deref().unwrap_or(""));
            self.metatrace_strings.insert(s.iid.unwrap_or(0), value);
        }
        let Some(record) = &ev.record_type else {
            // Only interned strings (or nothing): used once read.
            self.sink.touch();
            return;
        };
        let thread = ThreadRef {
            machine,
            tid: i64::from(ev.thread_id.unwrap_or(0)),
            pid: None,
        };
        let (name, counter) = match record {
            R::EventName(name) => (self.sink.intern(name), false),
            R::EventNameIid(iid) => (self.metatrace_string(*iid), false),
            R::CounterName(name) => (self.sink.intern(name), true),
            R::EventId(_) | R::CounterId(_) => {
                let kind = Some(METATRACE_FIELD);
                self.sink
                    .stat_indexed("proto_packet_kind_not_imported", kind, machine, 1);
                return;
            }
        };
        let args = self.metatrace_args(machine, ev);
        if counter {
            let track = self.sink.track(TrackKey::ThreadCounter {
                thread,
                name,
                kind: "metatrace_counter",
            });
            let value = Real(f64::from(ev.counter_value.unwrap_or(0)));
            self.sink
                .push(ts, clock, EventData::Counter { track, value, args });
            return;
        }
        let track = self.sink.track(TrackKey::ThreadSlices(thread));
        let slice = SliceEvent {
            track,
            category: self.sink.intern("metatrace"),
            name,
            args,
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        let dur = i64::try_from(ev.event_duration_ns.unwrap_or(0)).unwrap_or(i64::MAX);
        let data = EventData::Complete {
            slice,
            dur,
            thread_dur: NO_TS,
        };
        self.sink.push(ts, clock, data);
    }

    /// An interned metatrace string; NULL when no packet defined the iid (as the reference).
    fn metatrace_string(&self, iid: u64) -> StrId {
        self.metatrace_strings
            .get(&iid)
            .copied()
            .unwrap_or(NULL_STR)
    }

    /// The event's args: each a string arg, key and value plain or interned.
    fn metatrace_args(&mut self, machine: MachineId, ev: &protos::PerfettoMetatrace) -> ArgsRef {
        use protos::perfetto_metatrace::arg::{KeyOrInternedKey as K, ValueOrInternedValue as V};
        let mut args = Vec::with_capacity(ev.args.len());
        for a in &ev.args {
            let key = match &a.key_or_interned_key {
                Some(K::Key(k)) => self.sink.intern(k),
                Some(K::KeyIid(iid)) => self.metatrace_string(*iid),
                None => NULL_STR,
            };
            // An arg whose interned key is unknown has no name to file it under.
            if key == NULL_STR {
                self.sink.stat("metatrace_arg_key_unknown", machine, 1);
                continue;
            }
            let value = match &a.value_or_interned_value {
                Some(V::Value(v)) => self.sink.intern(v),
                Some(V::ValueIid(iid)) => self.metatrace_string(*iid),
                None => self.sink.intern(""),
            };
            args.push(Arg {
                flat_key: key,
                key,
                value: ArgValue::Str(value),
            });
        }
        self.sink.args.push(&args)
    }
}
