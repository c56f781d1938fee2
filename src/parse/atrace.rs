//! Atrace markers: the `B|tgid|name`, `E|tgid`, `C|tgid|name|value`, ... strings Android's
//! `atrace` writes into `trace_marker`. They arrive from systrace `tracing_mark_write` / `print`
//! lines, from systrace embedded in Chrome JSON, and from proto ftrace `print` events.
//!
//! Grammar (field 2 is always the tgid):
//!
//! | marker | effect |
//! |---|---|
//! | `B\|tgid\|name` | Begin on the thread's track; name = rest of the string (may hold `\|`) |
//! | `E`, `E\|tgid` | End (no name matching) on the thread's track |
//! | `C\|tgid\|name\|value[\|…]` | process counter `atrace_counter` (integer values only) |
//! | `S\|tgid\|name\|cookie`, `F\|…` | unnestable async slice in set `atrace_async_slice` |
//! | `I\|tgid\|name` | instant on the thread's track |
//! | `N\|tgid\|track\|name` | instant in set `atrace_async_slice_for_track` |
//! | `G\|tgid\|track\|name\|cookie` | async Begin by cookie in that set |
//! | `H\|tgid\|track\|cookie`, `H\|tgid\|track\|name\|cookie` | async End by cookie |
//!
//! Anything else is stat `systrace_parse_failure`; `trace_event_clock_sync:` payloads are
//! ignored silently.
//!
//! **Unnestable `S`/`F`.** Trace Processor drops an `S` whose slot (track) already has an open
//! slice, and adds `legacy_unnestable_begin_count` / `legacy_unnestable_last_begin_ts` to the
//! slice an `F` closes. That depends on time order, so `S` is emitted as
//! [`EventData::BeginUnnestable`] and the model applies the rule after sorting.

use std::borrow::Cow;

use crate::ir::{
    ArgValue, ArgsBuilder, AsyncSet, ClockRef, EventData, MachineId, ProcessRef, Real, Sink,
    SliceEvent, ThreadRef, TrackKey, NO_ARGS, NO_FLOWS, NO_TS, NULL_STR,
};

/// Name given to a `B` marker with an empty name.
pub const EMPTY_SLICE_NAME: &str = "[empty slice name]";

/// Parses one atrace marker. `tid` is the thread that wrote the marker.
pub fn parse_marker(
    sink: &mut Sink,
    clock: ClockRef,
    ts: i64,
    machine: MachineId,
    tid: i64,
    payload: &[u8],
) {
    handle(sink, clock, ts, machine, tid, payload);
}

/// A parsed marker; `&str`s borrow the (cleaned) payload.
#[derive(Debug, PartialEq)]
enum Marker<'a> {
    Begin {
        tgid: i64,
        name: &'a str,
    },
    End {
        tgid: Option<i64>,
    },
    Counter {
        tgid: i64,
        name: &'a str,
        value: i64,
    },
    AsyncBegin {
        tgid: i64,
        name: &'a str,
        cookie: i64,
    },
    AsyncEnd {
        tgid: i64,
        name: &'a str,
        cookie: i64,
    },
    Instant {
        tgid: i64,
        name: &'a str,
    },
    TrackInstant {
        tgid: i64,
        track: &'a str,
        name: &'a str,
    },
    TrackBegin {
        tgid: i64,
        track: &'a str,
        name: &'a str,
        cookie: i64,
    },
    TrackEnd {
        tgid: i64,
        track: &'a str,
        cookie: i64,
    },
}

#[derive(Debug, PartialEq)]
enum Parsed<'a> {
    Marker(Marker<'a>),
    /// Known but deliberately ignored (`trace_event_clock_sync:`).
    Ignored,
    Failure,
}

/// Removes invalid UTF-8 sequences (rather than replacing them); borrows when the input is
/// valid, which is the common case.
pub(crate) fn clean_utf8(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => {
            let mut out = String::with_capacity(bytes.len());
            let mut rest = bytes;
            while !rest.is_empty() {
                match std::str::from_utf8(rest) {
                    Ok(s) => {
                        out.push_str(s);
                        break;
                    }
                    Err(e) => {
                        let good = e.valid_up_to();
                        // `valid_up_to` marks a valid prefix, so this cannot fail.
                        if let Ok(s) = std::str::from_utf8(&rest[..good]) {
                            out.push_str(s);
                        }
                        let skip = e.error_len().unwrap_or(rest.len() - good);
                        rest = &rest[(good + skip).min(rest.len())..];
                    }
                }
            }
            Cow::Owned(out)
        }
    }
}

fn parse_u32(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<u32>().ok().map(i64::from)
}

/// A signed integer as Trace Processor's `StringToInt64` (strtoll) reads one: leading
/// blanks and a sign allowed, nothing after the digits.
fn parse_i64(s: &str) -> Option<i64> {
    s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c'])
        .parse::<i64>()
        .ok()
}

/// Parses a marker as Trace Processor's `ParseSystraceTracePoint` does: fields are split on
/// `|`; the phase is the first character of field 1 (the rest of that field is ignored) and
/// field 2 is the tgid. Only `B` takes the rest of the string as its name; every other
/// phase reads one field per value and ignores fields after them.
fn parse_point(s: &str) -> Parsed<'_> {
    let mut fields = s.split('|');
    let Some(&ph) = fields.next().and_then(|f| f.as_bytes().first()) else {
        return Parsed::Failure;
    };
    let tgid = parse_u32(fields.next().unwrap_or(""));
    let mut next = || fields.next().unwrap_or("");
    let marker = match (ph, tgid) {
        (b'B', Some(tgid)) => Marker::Begin {
            tgid,
            name: s.splitn(3, '|').nth(2).unwrap_or(""),
        },
        // Older Android and Flutter write no tgid on ends.
        (b'E', _) => Marker::End {
            tgid: tgid.filter(|&t| t != 0),
        },
        (b'S' | b'F', Some(tgid)) => {
            let name = next();
            let Some(cookie) = parse_i64(next()) else {
                return Parsed::Failure;
            };
            if name.is_empty() {
                return Parsed::Failure;
            }
            if ph == b'S' {
                Marker::AsyncBegin { tgid, name, cookie }
            } else {
                Marker::AsyncEnd { tgid, name, cookie }
            }
        }
        (b'I', Some(tgid)) => match next() {
            "" => return Parsed::Failure,
            name => Marker::Instant { tgid, name },
        },
        (b'C', Some(tgid)) => {
            let name = next();
            let Some(value) = parse_i64(next()) else {
                return Parsed::Failure;
            };
            if name.is_empty() {
                return Parsed::Failure;
            }
            Marker::Counter { tgid, name, value }
        }
        (b'N', Some(tgid)) => match (next(), next()) {
            ("", _) | (_, "") => return Parsed::Failure,
            (track, name) => Marker::TrackInstant { tgid, track, name },
        },
        (b'G', Some(tgid)) => {
            let (track, name) = (next(), next());
            let Some(cookie) = parse_i64(next()) else {
                return Parsed::Failure;
            };
            if track.is_empty() || name.is_empty() {
                return Parsed::Failure;
            }
            Marker::TrackBegin {
                tgid,
                track,
                name,
                cookie,
            }
        }
        // `H|tgid|track|cookie` or `H|tgid|track|name|cookie`: the cookie is the last
        // non-empty of fields 4 and 5.
        (b'H', Some(tgid)) => {
            let (track, field4, field5) = (next(), next(), next());
            let cookie_str = if field5.is_empty() { field4 } else { field5 };
            let Some(cookie) = parse_i64(cookie_str) else {
                return Parsed::Failure;
            };
            if track.is_empty() {
                return Parsed::Failure;
            }
            Marker::TrackEnd {
                tgid,
                track,
                cookie,
            }
        }
        (b'B' | b'S' | b'F' | b'I' | b'C' | b'N' | b'G' | b'H', None) => return Parsed::Failure,
        _ if s.starts_with("trace_event_clock_sync:") => return Parsed::Ignored,
        _ => return Parsed::Failure,
    };
    Parsed::Marker(marker)
}

fn slice(track: u32, name: u32, args: u32) -> SliceEvent {
    SliceEvent {
        track,
        category: NULL_STR,
        name,
        args,
        thread_ts: NO_TS,
        flows: NO_FLOWS,
    }
}

fn tgid_opt(tgid: i64) -> Option<i64> {
    if tgid == 0 {
        None
    } else {
        Some(tgid)
    }
}

fn handle(sink: &mut Sink, clock: ClockRef, ts: i64, machine: MachineId, tid: i64, payload: &[u8]) {
    let mut end = payload.len();
    while end > 0 && matches!(payload[end - 1], b'\n' | b'\0') {
        end -= 1;
    }
    let text = clean_utf8(&payload[..end]);
    let marker = match parse_point(&text) {
        Parsed::Marker(m) => m,
        Parsed::Ignored => return,
        Parsed::Failure => {
            sink.stat("systrace_parse_failure", machine, 1);
            return;
        }
    };
    let process = |pid: i64| ProcessRef { machine, pid };
    match marker {
        Marker::Begin { tgid, name } => {
            let track = sink.thread_track(machine, tid, tgid_opt(tgid));
            let name_id = sink.intern(if name.is_empty() {
                EMPTY_SLICE_NAME
            } else {
                name
            });
            sink.push(ts, clock, EventData::Begin(slice(track, name_id, NO_ARGS)));
            if let Some(rest) = name.strip_prefix("lmk,") {
                lmk(sink, clock, ts, machine, rest);
            }
        }
        Marker::End { tgid } => {
            let track = sink.thread_track(machine, tid, tgid);
            sink.push(ts, clock, EventData::End(slice(track, NULL_STR, NO_ARGS)));
        }
        Marker::Counter { tgid, name, value } => {
            let name_id = sink.intern(name);
            let key = if name == "ScreenState" {
                TrackKey::GlobalCounter {
                    machine,
                    name: name_id,
                    kind: "screen_state",
                }
            } else if name.starts_with("battery_stats.") {
                TrackKey::GlobalCounter {
                    machine,
                    name: name_id,
                    kind: "battery_stats",
                }
            } else if tgid == 0 {
                // No process (kernel markers such as g2d/dpu write pid 0): the counter
                // belongs to the writing thread (the reference's
                // kernel_tmw_counter_thread_counter_and_track).
                TrackKey::ThreadCounter {
                    thread: ThreadRef {
                        machine,
                        tid,
                        pid: None,
                    },
                    name: name_id,
                    kind: "atrace_counter",
                }
            } else {
                TrackKey::ProcessCounter {
                    process: process(tgid),
                    name: name_id,
                    kind: "atrace_counter",
                }
            };
            // Userspace LMK's kill counter: its value is the killed pid.
            if name == "kill_one_process" && value != 0 {
                lmk_instant(sink, clock, ts, process(value));
            }
            let track = sink.track(key);
            // The row names the thread that wrote it (always known: every ftrace event
            // and text line makes its thread first).
            let args = if matches!(
                key,
                TrackKey::ProcessCounter { .. } | TrackKey::ThreadCounter { .. }
            ) {
                let thread = sink.thread_refs.intern(ThreadRef {
                    machine,
                    tid,
                    pid: None,
                });
                let arg = sink.static_arg("utid", ArgValue::ThreadUtid(thread));
                sink.args.push_shared(&[arg])
            } else {
                NO_ARGS
            };
            sink.push(
                ts,
                clock,
                EventData::Counter {
                    track,
                    value: Real(value as f64),
                    args,
                },
            );
        }
        Marker::AsyncBegin { tgid, name, cookie } => {
            let name_id = sink.intern(name);
            let set = AsyncSet {
                kind: "atrace_async_slice",
                machine,
                process: Some(process(tgid)),
                name: name_id,
                scope: NULL_STR,
            };
            let track = sink.track(TrackKey::AsyncCookie {
                set,
                cookie: cookie as u64,
            });
            let key = sink.intern("cookie");
            let mut builder = ArgsBuilder::default();
            builder.add(key, key, ArgValue::Int(cookie));
            let args = sink.args(&mut builder);
            // Unnestable: the model drops an `S` while its slot has an open slice.
            sink.push(
                ts,
                clock,
                EventData::BeginUnnestable(slice(track, name_id, args)),
            );
        }
        Marker::AsyncEnd { tgid, name, cookie } => {
            let name_id = sink.intern(name);
            let set = AsyncSet {
                kind: "atrace_async_slice",
                machine,
                process: Some(process(tgid)),
                name: name_id,
                scope: NULL_STR,
            };
            let track = sink.track(TrackKey::AsyncCookie {
                set,
                cookie: cookie as u64,
            });
            sink.push(ts, clock, EventData::End(slice(track, NULL_STR, NO_ARGS)));
        }
        Marker::Instant { tgid, name } => {
            let track = sink.thread_track(machine, tid, tgid_opt(tgid));
            let name_id = sink.intern(name);
            sink.push(
                ts,
                clock,
                EventData::Complete {
                    slice: slice(track, name_id, NO_ARGS),
                    dur: 0,
                    thread_dur: NO_TS,
                },
            );
        }
        Marker::TrackInstant { tgid, track, name } => {
            track_owner(sink, clock, ts, machine, tgid);
            let track_name = sink.intern(track);
            let name_id = sink.intern(name);
            let key = if track == "DeviceStateChanged" {
                TrackKey::GlobalSlices {
                    machine,
                    kind: "android_device_state",
                    name: track_name,
                }
            } else {
                TrackKey::AsyncScoped {
                    set: for_track_set(machine, tgid, track_name),
                }
            };
            let args = match key {
                TrackKey::AsyncScoped { .. } => thread_arg(sink, "utid", machine, tid),
                _ => NO_ARGS,
            };
            let track = sink.track(key);
            sink.push(
                ts,
                clock,
                EventData::Complete {
                    slice: slice(track, name_id, args),
                    dur: 0,
                    thread_dur: NO_TS,
                },
            );
        }
        Marker::TrackBegin {
            tgid,
            track,
            name,
            cookie,
        } => {
            track_owner(sink, clock, ts, machine, tgid);
            let track_name = sink.intern(track);
            let name_id = sink.intern(name);
            let track = sink.track(TrackKey::AsyncCookie {
                set: for_track_set(machine, tgid, track_name),
                cookie: cookie as u64,
            });
            let args = thread_arg(sink, "utid", machine, tid);
            sink.push(ts, clock, EventData::Begin(slice(track, name_id, args)));
        }
        Marker::TrackEnd {
            tgid,
            track,
            cookie,
        } => {
            track_owner(sink, clock, ts, machine, tgid);
            let track_name = sink.intern(track);
            let track = sink.track(TrackKey::AsyncCookie {
                set: for_track_set(machine, tgid, track_name),
                cookie: cookie as u64,
            });
            let args = thread_arg(sink, "end_utid", machine, tid);
            sink.push(ts, clock, EventData::End(slice(track, NULL_STR, args)));
        }
    }
}

/// An arg naming the writing thread (its utid, resolved by the model).
fn thread_arg(
    sink: &mut Sink,
    key: &'static str,
    machine: MachineId,
    tid: i64,
) -> crate::ir::ArgsRef {
    let thread = sink.thread_refs.intern(ThreadRef {
        machine,
        tid,
        pid: None,
    });
    let arg = sink.static_arg(key, ArgValue::ThreadUtid(thread));
    sink.args.push_shared(&[arg])
}

fn for_track_set(machine: MachineId, tgid: i64, track_name: u32) -> AsyncSet {
    AsyncSet {
        kind: "atrace_async_slice_for_track",
        machine,
        process: Some(ProcessRef { machine, pid: tgid }),
        name: track_name,
        scope: NULL_STR,
    }
}

/// `N`/`G`/`H` name a process (Trace Processor's GetOrCreateProcess(tgid), which also makes
/// its main thread) but, unlike `B`/`E`/`I`, do not bind the writing thread to it: its
/// `utid`/`end_utid` arg is the bare thread (behaviour-process-tracking §3).
fn track_owner(sink: &mut Sink, clock: ClockRef, ts: i64, machine: MachineId, tgid: i64) {
    sink.push(
        ts,
        clock,
        EventData::Thread(ThreadRef {
            machine,
            tid: tgid,
            pid: Some(tgid),
        }),
    );
}

/// `B|tgid|lmk,<pid>,<reason>,<oom_score_adj>,…` (userspace LMK): an `oom_score_adj` counter
/// and a `mem.lmk` instant for the killed process.
fn lmk(sink: &mut Sink, clock: ClockRef, ts: i64, machine: MachineId, rest: &str) {
    let mut fields = rest.split(',').filter(|f| !f.is_empty());
    let pid = fields.next().and_then(parse_u32);
    let _reason = fields.next();
    let adj = fields.next().and_then(|f| f.parse::<i32>().ok());
    let (Some(pid), Some(adj)) = (pid, adj) else {
        return;
    };
    let process = ProcessRef { machine, pid };
    let name = sink.intern("oom_score_adj");
    let counter = sink.track(TrackKey::ProcessCounter {
        process,
        name,
        kind: "oom_score_adj",
    });
    sink.push(
        ts,
        clock,
        EventData::Counter {
            track: counter,
            value: Real(f64::from(adj)),
            args: NO_ARGS,
        },
    );
    lmk_instant(sink, clock, ts, process);
}

/// A `mem.lmk` instant on the killed process's `LMK` track.
fn lmk_instant(sink: &mut Sink, clock: ClockRef, ts: i64, process: ProcessRef) {
    let track_name = sink.intern("LMK");
    let track = sink.track(TrackKey::ProcessSlices {
        process,
        kind: "android_lmk",
        name: track_name,
    });
    let name = sink.intern("mem.lmk");
    sink.push(
        ts,
        clock,
        EventData::Complete {
            slice: slice(track, name, NO_ARGS),
            dur: 0,
            thread_dur: NO_TS,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::clocks;

    fn run(payloads: &[(i64, i64, &[u8])]) -> Sink {
        let mut sink = Sink::new();
        let clock = sink.builtin_clock(0, clocks::MONOTONIC);
        for &(ts, tid, p) in payloads {
            parse_marker(&mut sink, clock, ts, 0, tid, p);
        }
        sink
    }

    fn failures(sink: &Sink) -> i64 {
        sink.stats
            .iter()
            .filter(|(k, _)| k.name == "systrace_parse_failure")
            .map(|(_, v)| *v)
            .sum()
    }

    fn name(sink: &Sink, id: u32) -> Option<&str> {
        sink.strings.get(id)
    }

    #[test]
    fn grammar() {
        use Marker::*;
        let m = |s| match parse_point(s) {
            Parsed::Marker(m) => Some(m),
            _ => None,
        };
        assert_eq!(
            m("B|12|a|b"),
            Some(Begin {
                tgid: 12,
                name: "a|b"
            })
        );
        assert_eq!(m("B|12|"), Some(Begin { tgid: 12, name: "" }));
        assert_eq!(m("B|12"), Some(Begin { tgid: 12, name: "" }));
        assert_eq!(m("E"), Some(End { tgid: None }));
        assert_eq!(m("E|7"), Some(End { tgid: Some(7) }));
        assert_eq!(m("E|0"), Some(End { tgid: None }));
        assert_eq!(m("E|7|junk"), Some(End { tgid: Some(7) }));
        assert_eq!(
            m("C|5|jobs|-3|cat"),
            Some(Counter {
                tgid: 5,
                name: "jobs",
                value: -3
            })
        );
        assert_eq!(m("C|5|jobs|1.5"), None);
        assert_eq!(m("C|5|jobs"), None);
        // One field per value: the name is field 3, the cookie field 4, more are ignored.
        assert_eq!(
            m("S|5|a|42|b"),
            Some(AsyncBegin {
                tgid: 5,
                name: "a",
                cookie: 42
            })
        );
        assert_eq!(m("S|5|a|b|42"), None);
        assert_eq!(m("S|5||42"), None);
        assert_eq!(m("I|5|a|b"), Some(Instant { tgid: 5, name: "a" }));
        assert_eq!(
            m("N|5|trk|a|b"),
            Some(TrackInstant {
                tgid: 5,
                track: "trk",
                name: "a"
            })
        );
        assert_eq!(m("N|5|trk|"), None);
        assert_eq!(m("N|5||a"), None);
        assert_eq!(m("G|5|trk|a|b|9"), None);
        assert_eq!(m("G|5|trk||9"), None);
        assert_eq!(m("H|5||9"), None);
        // The phase is the first character of field 1: a print that is not a marker but
        // starts with `E` ends a slice; `Bx|…` begins one.
        assert_eq!(m("Example text"), Some(End { tgid: None }));
        assert_eq!(
            m("Bx|12|n"),
            Some(Begin {
                tgid: 12,
                name: "n"
            })
        );
        // Integers as strtoll reads them.
        assert_eq!(
            m("C|5|c| +7"),
            Some(Counter {
                tgid: 5,
                name: "c",
                value: 7
            })
        );
        assert_eq!(m("C|5|c|7 "), None);
        assert_eq!(
            m("F|5|a|42"),
            Some(AsyncEnd {
                tgid: 5,
                name: "a",
                cookie: 42
            })
        );
        assert_eq!(m("S|5|a|x"), None);
        assert_eq!(
            m("I|5|inst"),
            Some(Instant {
                tgid: 5,
                name: "inst"
            })
        );
        assert_eq!(
            m("N|5|trk|ev"),
            Some(TrackInstant {
                tgid: 5,
                track: "trk",
                name: "ev"
            })
        );
        assert_eq!(
            m("G|5|trk|ev|9"),
            Some(TrackBegin {
                tgid: 5,
                track: "trk",
                name: "ev",
                cookie: 9
            })
        );
        assert_eq!(
            m("H|5|trk|9"),
            Some(TrackEnd {
                tgid: 5,
                track: "trk",
                cookie: 9
            })
        );
        assert_eq!(
            m("H|5|trk|ev|9"),
            Some(TrackEnd {
                tgid: 5,
                track: "trk",
                cookie: 9
            })
        );
        // The cookie is the last non-empty of fields 4 and 5.
        for end in [
            "H|5|trk|9|",
            "H|5|trk|ev|9|",
            "H|5|trk||9",
            "H|5|trk|ev|9|x",
        ] {
            let want = TrackEnd {
                tgid: 5,
                track: "trk",
                cookie: 9,
            };
            assert_eq!(m(end), Some(want), "{end}");
        }
        assert_eq!(m("B|x|a"), None);
        assert_eq!(m("Bogus"), None);
        assert_eq!(m(""), None);
        assert_eq!(m("X|1|a"), None);
        assert_eq!(
            parse_point("trace_event_clock_sync: parent_ts=1.0"),
            Parsed::Ignored
        );
    }

    #[test]
    fn begin_end_counter_events() {
        let sink = run(&[
            (10, 501, b"B|500|upload\n"),
            (11, 501, b"C|500|pending|4\0"),
            (12, 501, b"E|500"),
            (13, 501, b"B|500|"),
            (14, 501, b"E"),
        ]);
        assert_eq!(sink.decoded().len(), 5);
        let EventData::Begin(b) = sink.decoded()[0].data else {
            panic!("not a begin")
        };
        assert_eq!(name(&sink, b.name), Some("upload"));
        assert_eq!(b.category, NULL_STR);
        assert_eq!(
            *sink.tracks.get(b.track),
            TrackKey::ThreadSlices(ThreadRef {
                machine: 0,
                tid: 501,
                pid: Some(500)
            })
        );
        let EventData::Counter { track, value, .. } = sink.decoded()[1].data else {
            panic!("not a counter")
        };
        assert_eq!(value.0, 4.0);
        let TrackKey::ProcessCounter {
            process,
            name: n,
            kind,
        } = *sink.tracks.get(track)
        else {
            panic!("not a process counter")
        };
        assert_eq!(
            (process.pid, name(&sink, n), kind),
            (500, Some("pending"), "atrace_counter")
        );
        let EventData::End(e) = sink.decoded()[2].data else {
            panic!("not an end")
        };
        assert_eq!(e.track, b.track);
        assert_eq!(e.name, NULL_STR);
        let EventData::Begin(b2) = sink.decoded()[3].data else {
            panic!("not a begin")
        };
        assert_eq!(name(&sink, b2.name), Some(EMPTY_SLICE_NAME));
        let EventData::End(e2) = sink.decoded()[4].data else {
            panic!("not an end")
        };
        assert_eq!(
            *sink.tracks.get(e2.track),
            TrackKey::ThreadSlices(ThreadRef {
                machine: 0,
                tid: 501,
                pid: None
            })
        );
        assert_eq!(failures(&sink), 0);
    }

    #[test]
    fn failures_and_ignored() {
        let sink = run(&[
            (1, 1, b"another random print message"),
            (2, 1, b"C|1|x|1.5"),
            (3, 1, b"trace_event_clock_sync: realtime_ts=1"),
            (4, 1, b""),
        ]);
        assert!(sink.decoded().is_empty());
        assert_eq!(failures(&sink), 3);
    }

    #[test]
    fn invalid_utf8_is_dropped() {
        let sink = run(&[(1, 1, b"B|1|a\xffb\xc3")]);
        let EventData::Begin(b) = sink.decoded()[0].data else {
            panic!("not a begin")
        };
        assert_eq!(name(&sink, b.name), Some("ab"));
        assert_eq!(clean_utf8(b"\xe2\x82"), "");
        assert_eq!(clean_utf8("é€".as_bytes()), "é€");
    }

    /// The `android_b2b_async_begin` conformance case: back-to-back `S` on an open cookie add
    /// nothing.
    #[test]
    fn unnestable_async() {
        let evs: &[(i64, i64, &[u8])] = &[
            (1000, 4064, b"S|1204|multistart|0\n"),
            (1010, 1257, b"S|1204|multistart|0\n"),
            (1015, 1257, b"S|1204|multistart|10\n"),
            (1020, 1240, b"S|1204|multistart|0\n"),
            (1030, 4293, b"F|1204|multistart|0\n"),
            (1030, 1240, b"S|1204|multistart|0\n"),
            (1050, 4293, b"F|1204|multistart|0\n"),
            (1060, 4009, b"F|1204|multistart|10\n"),
        ];
        // Markers arrive out of time order (as from per-cpu ftrace bundles); ties keep
        // their file order.
        let order = [0, 2, 4, 6, 1, 3, 5, 7];
        let shuffled: Vec<_> = order.iter().map(|&i| evs[i]).collect();
        let mut sink = run(&shuffled);
        let kinds: Vec<(i64, char, u64)> = sink
            .decoded()
            .iter()
            .map(|e| {
                let (c, s) = match e.data {
                    EventData::BeginUnnestable(s) => ('S', s),
                    EventData::End(s) => {
                        // The model adds the unnestable args, not the parser.
                        assert_eq!(s.args, NO_ARGS);
                        ('F', s)
                    }
                    _ => panic!("unexpected event"),
                };
                let TrackKey::AsyncCookie { cookie, set } = *sink.tracks.get(s.track) else {
                    panic!("not an async track")
                };
                assert_eq!(set.kind, "atrace_async_slice");
                assert_eq!(set.process.map(|p| p.pid), Some(1204));
                (e.ts, c, cookie)
            })
            .collect();
        assert_eq!(kinds.len(), 8);
        assert_eq!(kinds[1], (1015, 'S', 10));
        // S carries its cookie.
        let EventData::BeginUnnestable(s) = sink.decoded()[1].data else {
            panic!("not a begin")
        };
        let args = sink.args.get(s.args);
        assert_eq!(name(&sink, args[0].key), Some("cookie"));
        assert_eq!(args[0].value, ArgValue::Int(10));

        // After sorting, the model keeps one slice per open slot.
        sink.events.sort_by_key(|e| (e.ts, e.ord));
        let mut rows = crate::model::CollectRows::default();
        crate::model::build(&mut sink, &[0], &[], &mut rows);
        let mut slices: Vec<_> = rows.slices.iter().map(|(_, r)| *r).collect();
        slices.sort_by_key(|r| r.ts);
        let spans: Vec<(i64, i64)> = slices.iter().map(|r| (r.ts, r.dur)).collect();
        assert_eq!(spans, vec![(1000, 30), (1015, 45), (1030, 20)]);
        // Cookie 0's track saw 3 S markers before the first F, the last at 1020; the counts
        // are cumulative per track.
        let unnestable_args = |r: &crate::model::SliceRow| -> Vec<(String, ArgValue)> {
            sink.args
                .get(r.args)
                .iter()
                .map(|a| (name(&sink, a.key).unwrap_or("").to_string(), a.value))
                .collect()
        };
        let int = |k: &str, v: i64| (k.to_string(), ArgValue::Int(v));
        assert_eq!(
            unnestable_args(&slices[0]),
            vec![
                int("cookie", 0),
                int("legacy_unnestable_begin_count", 3),
                int("legacy_unnestable_last_begin_ts", 1020)
            ]
        );
        assert_eq!(
            unnestable_args(&slices[2]),
            vec![
                int("cookie", 0),
                int("legacy_unnestable_begin_count", 4),
                int("legacy_unnestable_last_begin_ts", 1030)
            ]
        );
        assert_eq!(slices[0].track, slices[2].track);
        assert_ne!(slices[0].track, slices[1].track);
    }

    #[test]
    fn track_markers() {
        let sink = run(&[
            (50, 1, b"G|1|track|ev|1024\n"),
            (51, 2, b"N|2|track_p2|ev1\n"),
            (75, 1, b"H|1|track|ev|1024\n"),
            (76, 3, b"I|3|inst"),
        ]);
        let slices: Vec<(TrackKey, &'static str)> = sink
            .decoded()
            .iter()
            .filter_map(|e| match e.data {
                EventData::Begin(s) => Some((*sink.tracks.get(s.track), "B")),
                EventData::End(s) => Some((*sink.tracks.get(s.track), "E")),
                EventData::Complete { slice, dur, .. } => {
                    assert_eq!(dur, 0);
                    Some((*sink.tracks.get(slice.track), "I"))
                }
                EventData::Thread(t) => {
                    assert!(t.pid.is_some());
                    None
                }
                _ => panic!("unexpected event"),
            })
            .collect();
        assert_eq!(slices.len(), 4);
        assert_eq!(slices[0].0, slices[2].0);
        let TrackKey::AsyncCookie { set, cookie } = slices[0].0 else {
            panic!("G not on a cookie track")
        };
        assert_eq!((set.kind, cookie), ("atrace_async_slice_for_track", 1024));
        assert_eq!(name(&sink, set.name), Some("track"));
        let TrackKey::AsyncScoped { set } = slices[1].0 else {
            panic!("N not on a scoped track")
        };
        assert_eq!(set.process.map(|p| p.pid), Some(2));
        assert_eq!(name(&sink, set.name), Some("track_p2"));
        assert!(matches!(slices[3].0, TrackKey::ThreadSlices(_)));
    }

    #[test]
    fn lmk_begin_adds_counter_and_instant() {
        let sink = run(&[(5, 10, b"B|10|lmk,123,min_watermark,900,extra")]);
        assert_eq!(sink.decoded().len(), 3);
        assert!(
            matches!(sink.decoded()[1].data, EventData::Counter { value, .. } if value.0 == 900.0)
        );
        assert!(matches!(
            sink.decoded()[2].data,
            EventData::Complete { dur: 0, .. }
        ));
    }
}
