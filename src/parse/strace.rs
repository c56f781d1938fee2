//! strace text (`strace -f -ttt` output: `<pid> <seconds>.<frac> <syscall>(<args>) = <ret>`):
//! each syscall a slice on its thread's track, named after the syscall, with its argument
//! text (`args`) and its result (`ret`); `<unfinished ...>` calls end at their
//! `<... name resumed>` line. Timestamps are wall-clock (REALTIME). Lines that are not
//! syscalls (signals, exits, anything else) count in `strace_parse_failure`, lines
//! without a pid in `strace_missing_pid`, `-t`/`-tt` clock times in
//! `strace_unsupported_timestamp_format`; a `resumed` line of a thread with no unfinished
//! call open counts in Sextant's own `strace_resumed_without_unfinished`. Hands on slice
//! events.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};

use super::atrace::clean_utf8;
use super::{FileContext, ParseError};
use crate::ir::{
    clocks, ArgValue, ClockRef, EventData, Sink, SliceEvent, ThreadRef, TrackKey, NO_FLOWS, NO_TS,
    NULL_STR,
};

/// Whether the first line of a file reads as strace output with pids and `-ttt` times.
pub fn looks_like_strace(head: &[u8]) -> bool {
    let line = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let Ok(line) = std::str::from_utf8(line) else {
        return false;
    };
    let (pid, ts, rest) = fields(line);
    !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && seconds_to_ns(ts).is_some()
        && call_name(rest).is_some()
}

/// A line's first two fields and the rest. `strace -f -o FILE` pads pids to five
/// columns (`1000  1700000052.321000 …`), so fields are separated by runs of blanks.
fn fields(line: &str) -> (&str, &str, &str) {
    let blank = |c: char| c == ' ' || c == '\t';
    let line = line.trim_start_matches(blank);
    let (first, rest) = line.split_once(blank).unwrap_or((line, ""));
    let rest = rest.trim_start_matches(blank);
    let (second, rest) = rest.split_once(blank).unwrap_or((rest, ""));
    (first, second, rest.trim_start_matches(blank))
}

/// `<seconds>.<frac>` as ns, exactly (no float rounding).
fn seconds_to_ns(s: &str) -> Option<i64> {
    let (secs, frac) = s.split_once('.')?;
    if secs.is_empty()
        || frac.is_empty()
        || frac.len() > 9
        || !secs.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let secs: i64 = secs.parse().ok()?;
    let frac: i64 = frac.parse().ok()?;
    let scale = 10i64.pow(9 - s.split_once('.')?.1.len() as u32);
    secs.checked_mul(1_000_000_000)?.checked_add(frac * scale)
}

/// A `-t` / `-tt` clock time (`14:32:01`, `14:32:01.123456`).
fn is_clock_time(s: &str) -> bool {
    let hms = s.split('.').next().unwrap_or("");
    let parts: Vec<&str> = hms.split(':').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The syscall name at the start of `rest` (`openat(` → `openat`).
fn call_name(rest: &str) -> Option<&str> {
    let open = rest.find('(')?;
    let name = &rest[..open];
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .then_some(name)
}

/// What one line says.
#[derive(Debug, PartialEq)]
enum Call<'a> {
    /// `name(args) = ret`
    Complete {
        name: &'a str,
        args: &'a str,
        ret: &'a str,
    },
    /// `name(args <unfinished ...>`
    Unfinished { name: &'a str, args: &'a str },
    /// `<... name resumed> rest) = ret`
    Resumed { ret: &'a str },
}

fn parse_call(rest: &str) -> Option<Call<'_>> {
    if let Some(resumed) = rest.strip_prefix("<... ") {
        let (_, after) = resumed.split_once(" resumed>")?;
        let ret = after.rsplit_once(" = ").map_or("", |(_, r)| r.trim());
        return Some(Call::Resumed { ret });
    }
    let name = call_name(rest)?;
    let inside = &rest[name.len() + 1..];
    if let Some(args) = inside.strip_suffix(" <unfinished ...>") {
        return Some(Call::Unfinished {
            name,
            args: args.trim(),
        });
    }
    let (call, ret) = inside.rsplit_once(" = ")?;
    let args = call.trim_end().strip_suffix(')')?;
    Some(Call::Complete {
        name,
        args,
        ret: ret.trim(),
    })
}

/// Reads a whole strace file as a stream, line by line.
pub fn parse_stream(
    reader: &mut dyn Read,
    sink: &mut Sink,
    ctx: &FileContext,
) -> Result<(), ParseError> {
    let clock = sink.builtin_clock(ctx.machine, clocks::REALTIME);
    let mut reader = BufReader::new(reader);
    let mut buf = Vec::new();
    // Threads with an `<unfinished ...>` call open.
    let mut unfinished = HashSet::new();
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| ParseError::Invalid(format!("cannot read the strace text: {e}")))?;
        if n == 0 {
            break;
        }
        let text = clean_utf8(&buf);
        let line = text.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        sink.begin_input();
        parse_line(sink, ctx, clock, &mut unfinished, line);
        sink.end_input();
    }
    Ok(())
}

fn parse_line(
    sink: &mut Sink,
    ctx: &FileContext,
    clock: ClockRef,
    unfinished: &mut HashSet<u32>,
    line: &str,
) {
    let machine = ctx.machine;
    let (first, time, rest) = fields(line);
    // No pid: the line starts with its time.
    if seconds_to_ns(first).is_some() || is_clock_time(first) {
        sink.stat("strace_missing_pid", machine, 1);
        return;
    }
    let Ok(pid) = first.parse::<u32>() else {
        sink.stat("strace_parse_failure", machine, 1);
        return;
    };
    let ts = match seconds_to_ns(time) {
        Some(ts) => ts,
        None if is_clock_time(time) => {
            sink.stat("strace_unsupported_timestamp_format", machine, 1);
            return;
        }
        None => {
            sink.stat("strace_parse_failure", machine, 1);
            return;
        }
    };
    let Some(call) = parse_call(rest) else {
        sink.stat("strace_parse_failure", machine, 1);
        return;
    };
    match call {
        Call::Unfinished { .. } => {
            unfinished.insert(pid);
        }
        Call::Resumed { .. } if !unfinished.remove(&pid) => {
            sink.stat("strace_resumed_without_unfinished", machine, 1);
            return;
        }
        _ => {}
    }
    let thread = ThreadRef {
        machine,
        tid: i64::from(pid),
        pid: None,
    };
    let track = sink.track(TrackKey::ThreadSlices(thread));
    let slice = |sink: &mut Sink, name: &str, args: &[(&'static str, &str)]| {
        let args: Vec<_> = args
            .iter()
            .map(|&(k, v)| {
                let v = sink.intern(v);
                sink.static_arg(k, ArgValue::Str(v))
            })
            .collect();
        SliceEvent {
            track,
            category: NULL_STR,
            name: if name.is_empty() {
                NULL_STR
            } else {
                sink.intern(name)
            },
            args: sink.args.push(&args),
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        }
    };
    let data = match call {
        Call::Complete { name, args, ret } => EventData::Complete {
            slice: slice(sink, name, &[("args", args), ("ret", ret)]),
            dur: 0,
            thread_dur: NO_TS,
        },
        Call::Unfinished { name, args } => EventData::Begin(slice(sink, name, &[("args", args)])),
        Call::Resumed { ret } => EventData::End(slice(sink, "", &[("ret", ret)])),
    };
    sink.push(ts, clock, data);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_as_the_reference_reads_them() {
        assert_eq!(
            seconds_to_ns("1700000052.321000"),
            Some(1_700_000_052_321_000_000)
        );
        assert_eq!(seconds_to_ns("14:32:01"), None);
        assert!(is_clock_time("14:32:01.123456"));
        assert_eq!(
            parse_call(r#"openat(AT_FDCWD, "/nope", O_RDONLY) = -1 ENOENT (No such file)"#),
            Some(Call::Complete {
                name: "openat",
                args: r#"AT_FDCWD, "/nope", O_RDONLY"#,
                ret: "-1 ENOENT (No such file)"
            })
        );
        assert_eq!(
            parse_call("close(3)                = 0"),
            Some(Call::Complete {
                name: "close",
                args: "3",
                ret: "0"
            })
        );
        assert_eq!(
            parse_call("futex(0x7f, FUTEX_WAIT, 2, NULL <unfinished ...>"),
            Some(Call::Unfinished {
                name: "futex",
                args: "0x7f, FUTEX_WAIT, 2, NULL"
            })
        );
        assert_eq!(
            parse_call("<... futex resumed> )  = 0"),
            Some(Call::Resumed { ret: "0" })
        );
        assert_eq!(parse_call("--- SIGCHLD {si_signo=SIGCHLD} ---"), None);
        assert!(looks_like_strace(
            b"1000 1700000052.321000 openat(AT_FDCWD) = 3\n"
        ));
        assert!(!looks_like_strace(b"# tracer: nop\n"));
    }
}
