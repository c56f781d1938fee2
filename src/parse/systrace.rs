//! Systrace: ftrace text as written by `atrace` / `systrace.py` / the kernel's `trace` file,
//! either plain (`# tracer: nop` header, optional `TRACE:\n` prelude and `cpus=N` first line)
//! or wrapped in a systrace HTML page (`<script class="trace-data" type="application/text">`
//! blocks, incl. `PROCESS DUMP` blocks).
//!
//! Line grammar (no regex; see [`tokenize`]):
//!
//! ```text
//! <task>-<pid> [(<tgid>|-----)] [<cpu>] [<flags>] <seconds>.<frac>: <event>: <payload>
//! ```
//!
//! The task is the text before the leftmost `-<digits><whitespace>` that makes the rest of the
//! line match, so task names may hold spaces and dashes (`Binder:1234_2-1250`,
//! `task-1234-567`). Flags (`d..2`, `dNsa.`) are optional and may touch the timestamp
//! (`....316.196720`).
//!
//! Timestamps are seconds; like Trace Processor they become `trunc(f64(seconds) * 1e9)` ns
//! (so `4213.033672` s is `4213033671999` ns), on the machine's MONOTONIC clock for systrace
//! files and on the JSON file's own TRACE_FILE clock for `systemTraceEvents` ([`parse_text`]).

use std::borrow::Cow;
use std::io::{BufRead, BufReader, Read};

use super::atrace::{self, clean_utf8};
use super::ftrace_events::{self, Fields, Origin};
use super::{FileContext, ParseError};
use crate::ir::{
    clocks, ArgValue, ClockRef, EventData, FtraceRaw, MachineId, NamePriority, ProcessInfo,
    ProcessRef, SchedSwitch, SchedWaking, Sink, StrId, ThreadRef, NULL_STR,
};

/// How far into the file a `TRACE:\n` prelude (adb `atrace` output) is looked for.
const PRELUDE_LOOKAHEAD: usize = 4096;
const TRACE_DATA_SECTION: &[u8] = br#"<script class="trace-data" type="application/text">"#;
const SCRIPT_END: &[u8] = b"</script>";

/// Imports a whole systrace file (plain ftrace text or systrace HTML) from memory.
pub fn parse(bytes: &[u8], sink: &mut Sink, ctx: &FileContext) -> Result<(), ParseError> {
    let mut input = bytes;
    parse_stream(&mut input, sink, ctx)
}

/// Imports a systrace file (plain ftrace text or systrace HTML), reading it line by line.
///
/// Lines that do not tokenize count as stat `systrace_parse_failure` and are skipped, as are
/// the handlers' own errors. As in Trace Processor, a last line without a terminating `\n` is
/// not read, and in HTML the `</script>` closing the first ftrace block ends parsing.
pub fn parse_stream(
    input: &mut dyn Read,
    sink: &mut Sink,
    ctx: &FileContext,
) -> Result<(), ParseError> {
    let read_err = |e: std::io::Error| ParseError::invalid(format!("cannot read the file: {e}"));
    let mut head = Vec::with_capacity(HEAD_BYTES);
    input
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(read_err)?;
    let (skip, compressed) = strip_prelude(&head);
    let mut body = std::io::Cursor::new(head);
    body.set_position(skip as u64);
    let inflate_failed = std::rc::Rc::new(std::cell::Cell::new(false));
    let mut reader: Box<dyn BufRead + '_> = if compressed {
        let decoder = flate2::read::ZlibDecoder::new(body.chain(input));
        Box::new(BufReader::with_capacity(
            1 << 16,
            Inflated {
                inner: decoder,
                failed: inflate_failed.clone(),
            },
        ))
    } else {
        Box::new(BufReader::with_capacity(1 << 16, body.chain(input)))
    };
    // The first bytes of the ftrace text tell HTML from plain text.
    let html = is_html(reader.fill_buf().map_err(read_err)?);
    if compressed && inflate_failed.get() {
        return Err(ParseError::invalid(
            "cannot inflate the compressed atrace data (after TRACE:)",
        ));
    }
    let clock = sink.builtin_clock(ctx.machine, clocks::MONOTONIC);
    let mut parser = LineParser::new(ctx.machine, clock);
    let mut state = if html {
        State::HtmlBeforeSystrace
    } else {
        State::Systrace
    };

    let mut first = true;
    let mut saw_trace_data = false;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if !read_line(&mut *reader, &mut buf).map_err(read_err)? {
            // Longer than any ftrace line: skipped (whatever it is, it is not one).
            sink.begin_input();
            sink.stat("systrace_parse_failure", ctx.machine, 1);
            sink.end_input();
            continue;
        }
        // Only `\n`-terminated lines are read (a trailing partial line is dropped, as the
        // reference does).
        let Some((&b'\n', line)) = buf.split_last() else {
            break;
        };
        let mut line = line;
        if let [head @ .., b'\r'] = line {
            line = head;
        }
        if std::mem::take(&mut first) && !html && is_cpus_line(line) {
            continue;
        }
        match state {
            State::HtmlBeforeSystrace => {
                if contains(line, TRACE_DATA_SECTION) {
                    state = State::TraceData;
                    saw_trace_data = true;
                }
            }
            State::TraceData => {
                if line.starts_with(b"#") && contains(line, b"TASK-PID") {
                    state = State::Systrace;
                } else if line.starts_with(b"PROCESS DUMP") {
                    state = State::ProcessDump(DumpKind::Long);
                } else if line.starts_with(b"CGROUP DUMP") {
                    state = State::OtherDump;
                } else if contains(line, SCRIPT_END) {
                    state = State::HtmlBeforeSystrace;
                }
            }
            State::Systrace => {
                if contains(line, SCRIPT_END) {
                    break;
                }
                if line.is_empty() || line[0] == b'#' {
                    continue;
                }
                sink.begin_input();
                match tokenize(line) {
                    Some(l) => parser.line(sink, &l),
                    None => sink.stat("systrace_parse_failure", ctx.machine, 1),
                }
                sink.end_input();
            }
            State::ProcessDump(kind) => {
                if contains(line, SCRIPT_END) {
                    state = State::HtmlBeforeSystrace;
                } else {
                    state = State::ProcessDump(parser.dump_row(sink, kind, line)?);
                }
            }
            State::OtherDump => {
                if contains(line, SCRIPT_END) {
                    state = State::HtmlBeforeSystrace;
                }
            }
        }
    }
    if inflate_failed.get() {
        // The lines before the break were read.
        sink.stat("compressed_stream_truncated", ctx.machine, 1);
    }
    if html && !saw_trace_data {
        // A page without a `trace-data` block (e.g. the 2012 format that keeps ftrace text
        // in a JavaScript string): nothing in it was read, and the reference reads nothing
        // either; say so rather than show an empty trace.
        sink.stat("systrace_html_without_trace_data", ctx.machine, 1);
    }
    Ok(())
}

/// The longest line read: no ftrace line comes close, and a file without line breaks must
/// not be held in memory whole.
const MAX_LINE: usize = 1 << 20;

/// Reads one line with its `\n` into `buf` (or what is left at the end); false, with the
/// line passed over, when it is longer than [`MAX_LINE`].
fn read_line(reader: &mut dyn BufRead, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    let mut too_long = false;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok(!too_long);
        }
        let (take, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if !too_long {
            if buf.len() + take > MAX_LINE {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&available[..take]);
            }
        }
        reader.consume(take);
        if done {
            return Ok(!too_long);
        }
    }
}

/// The first bytes read at once: enough for the `TRACE:\n` prelude and the first lines.
const HEAD_BYTES: usize = 64 << 10;

/// Inflated `atrace -z` data: a zlib stream that breaks part-way ends the text there (the
/// lines before it are kept).
struct Inflated<R> {
    inner: R,
    failed: std::rc::Rc<std::cell::Cell<bool>>,
}

impl<R: Read> Read for Inflated<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.failed.get() {
            return Ok(0);
        }
        match self.inner.read(buf) {
            Err(e) if e.kind() != std::io::ErrorKind::Interrupted => {
                self.failed.set(true);
                Ok(0)
            }
            r => r,
        }
    }
}

/// Imports ftrace text lines embedded in a Chrome JSON file (`systemTraceEvents`).
///
/// Strict, as Trace Processor is for JSON: blank and `#` lines are skipped, and any other line
/// that does not tokenize fails the whole import. Events go on the file's own TRACE_FILE clock
/// (the JSON's clock), not MONOTONIC. Every line is read, including an unterminated last one.
pub fn parse_text(text: &str, sink: &mut Sink, ctx: &FileContext) -> Result<(), ParseError> {
    let clock = sink.builtin_clock(ctx.machine, clocks::TRACE_FILE);
    let mut parser = LineParser::new(ctx.machine, clock);
    for line in text.as_bytes().split(|&b| b == b'\n') {
        let line = trim(line);
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        match tokenize(line) {
            Some(l) => {
                sink.begin_input();
                parser.line(sink, &l);
                sink.end_input();
            }
            None => {
                return Err(ParseError::invalid(format!(
                    "Not a known systrace event format (line: {})",
                    clean_utf8(line)
                )))
            }
        }
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// HTML, outside any trace-data block.
    HtmlBeforeSystrace,
    /// Inside a trace-data block, before its content is recognised.
    TraceData,
    /// Ftrace text.
    Systrace,
    ProcessDump(DumpKind),
    /// A block we skip (`CGROUP DUMP`).
    OtherDump,
}

/// Row layout of a `PROCESS DUMP` block, switched by its `USER …` header rows.
#[derive(Clone, Copy, Debug, PartialEq)]
enum DumpKind {
    /// `USER PID PPID VSZ RSS WCHAN ADDR S NAME …`: processes.
    Long,
    /// `USER PID TID CMD`: threads.
    Short,
}

/// Finds a `TRACE:\n` prelude (adb `atrace` output) in the first bytes and returns where
/// the text after it starts, and whether that is a zlib stream (`atrace -z`; the decoder stops at the end of
/// the stream, so bytes adb appends after it are never read).
fn strip_prelude(head: &[u8]) -> (usize, bool) {
    const MARKER: &[u8] = b"TRACE:\n";
    let lookahead = &head[..head.len().min(PRELUDE_LOOKAHEAD)];
    let Some(pos) = find(lookahead, MARKER) else {
        return (0, false);
    };
    let start = pos + MARKER.len();
    let body = &head[start..];
    let zlib = body.len() >= 2
        && body[0] & 0x0f == 8
        && (u16::from(body[0]) << 8 | u16::from(body[1])) % 31 == 0;
    (start, zlib)
}

/// Systrace HTML starts with a tag; an ftrace line may start with `<idle>` / `<...>` too.
fn is_html(data: &[u8]) -> bool {
    let start = skip_ws(data, 0);
    if data.get(start) != Some(&b'<') {
        return false;
    }
    let rest = &data[start..];
    let first_line = &rest[..rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())];
    tokenize(first_line).is_none()
}

/// `cpus=<digits>`, written by some tools as the first line.
fn is_cpus_line(line: &[u8]) -> bool {
    match trim(line).strip_prefix(b"cpus=") {
        Some(n) => !n.is_empty() && n.iter().all(u8::is_ascii_digit),
        None => false,
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, tail) = needle.split_first()?;
    let mut from = 0;
    while from + needle.len() <= hay.len() {
        let off = hay[from..=hay.len() - needle.len()]
            .iter()
            .position(|&b| b == first)?;
        let at = from + off;
        if &hay[at + 1..at + needle.len()] == tail {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find(hay, needle).is_some()
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !is_ws(*first) {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !is_ws(*last) {
            break;
        }
        s = rest;
    }
    s
}

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && is_ws(s[i]) {
        i += 1;
    }
    i
}

fn skip_digits(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && s[i].is_ascii_digit() {
        i += 1;
    }
    i
}

/// Parses a run of ASCII digits (no sign) that fits `T`.
fn parse_uint<T: std::str::FromStr>(s: &[u8]) -> Option<T> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// Parses a number (signed integer or float) of type `T`.
fn parse_num<T: std::str::FromStr>(s: &[u8]) -> Option<T> {
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// Seconds → ns exactly as Trace Processor computes it: `trunc(f64(s) * 1e9)`.
fn seconds_to_ns(s: &[u8]) -> Option<i64> {
    let secs: f64 = std::str::from_utf8(s).ok()?.parse().ok()?;
    Some((secs * 1e9) as i64)
}

/// At `i` (just after `]` and its blanks): the optional irq-flags column — exactly three of
/// `[A-Za-z.]` then one or two of `[0-9a-f.]`, then blanks — and `<digits>.<digits>`, as
/// Trace Processor's line regex reads them. Flags touching the timestamp take as few
/// characters as they can (`....316.1` is `....` then `316.1`, as the reference reads it).
/// Returns the timestamp's range.
fn flags_and_ts(line: &[u8], i: usize) -> Option<(usize, usize)> {
    let ts_at = |at: usize| -> Option<(usize, usize)> {
        let int_end = skip_digits(line, at);
        if int_end == at || line.get(int_end) != Some(&b'.') {
            return None;
        }
        let frac_end = skip_digits(line, int_end + 1);
        (frac_end > int_end + 1).then_some((at, frac_end))
    };
    let first = |b: u8| b.is_ascii_alphabetic() || b == b'.';
    let second = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b) || b == b'.';
    if line.len() >= i + 4 && line[i..i + 3].iter().all(|&b| first(b)) {
        for n in [1, 2] {
            let end = i + 3 + n;
            if end <= line.len() && line[i + 3..end].iter().all(|&b| second(b)) {
                if let Some(ts) = ts_at(skip_ws(line, end)) {
                    return Some(ts);
                }
            }
        }
    }
    ts_at(i)
}

/// One tokenized ftrace text line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Line<'a> {
    pub task: &'a [u8],
    /// The `-<pid>` column (a thread id).
    pub pid: i64,
    /// The `(<tgid>)` column when numeric.
    pub tgid: Option<i64>,
    pub cpu: u32,
    pub ts: i64,
    pub event: &'a [u8],
    /// Everything after `<event>:`, trimmed.
    pub args: &'a [u8],
}

/// Tokenizes one ftrace text line, or `None` if it does not match the grammar.
pub(crate) fn tokenize(line: &[u8]) -> Option<Line<'_>> {
    let mut from = 0;
    while let Some(off) = line[from..].iter().position(|&b| b == b'-') {
        let dash = from + off;
        if let Some(l) = match_at(line, dash) {
            return Some(l);
        }
        from = dash + 1;
    }
    None
}

/// Tries to match the line with the task/pid separator at `dash`.
fn match_at(line: &[u8], dash: usize) -> Option<Line<'_>> {
    let n = line.len();
    let pid_start = dash + 1;
    let pid_end = skip_digits(line, pid_start);
    if pid_end == pid_start || pid_end >= n || !is_ws(line[pid_end]) {
        return None;
    }
    let pid: u32 = parse_uint(&line[pid_start..pid_end])?;

    // ` (tgid) [cpu]`: blanks, an optional `(`, blanks, digits or dashes, an optional `)`
    // right after them, at most one blank, then `[`.
    let mut i = skip_ws(line, pid_end);
    if line.get(i) == Some(&b'(') {
        i = skip_ws(line, i + 1);
    }
    let tgid_start = i;
    match line.get(i) {
        Some(b) if b.is_ascii_digit() => i = skip_digits(line, i),
        Some(b'-') => {
            while line.get(i) == Some(&b'-') {
                i += 1;
            }
        }
        _ => {}
    }
    let tgid_str = &line[tgid_start..i];
    if line.get(i) == Some(&b')') {
        i += 1;
    }
    if line.get(i).is_some_and(|&b| is_ws(b)) {
        i += 1;
    }

    // `[cpu]`
    if line.get(i) != Some(&b'[') {
        return None;
    }
    let cpu_start = i + 1;
    let cpu_end = skip_digits(line, cpu_start);
    if line.get(cpu_end) != Some(&b']') {
        return None;
    }
    let cpu: u32 = parse_uint(&line[cpu_start..cpu_end])?;

    // `[flags] <seconds>.<frac>:`
    let (ts_start, ts_end) = flags_and_ts(line, skip_ws(line, cpu_end + 1))?;
    if line.get(ts_end) != Some(&b':') {
        return None;
    }
    let colon = ts_end;
    let ts = seconds_to_ns(&line[ts_start..ts_end])?;

    // ` <event>:` — the event is the next word up to its last `:`.
    let ev_start = colon + 1;
    if ev_start >= n || !is_ws(line[ev_start]) {
        return None;
    }
    let ev_start = skip_ws(line, ev_start);
    let word_end = line[ev_start..]
        .iter()
        .position(|&b| is_ws(b))
        .map_or(n, |p| ev_start + p);
    let last_colon = line[ev_start..word_end].iter().rposition(|&b| b == b':')?;
    if last_colon == 0 {
        return None;
    }
    Some(Line {
        task: trim(&line[..dash]),
        pid: i64::from(pid),
        tgid: parse_uint::<u32>(tgid_str).map(i64::from),
        cpu,
        ts,
        event: &line[ev_start..ev_start + last_colon],
        args: trim(&line[ev_start + last_colon + 1..]),
    })
}

/// The value of `key` in a space-separated `k=v` payload (the one reader of ftrace text
/// payloads, see [`super::ftrace_events::text_arg`]).
fn arg<'a>(args: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    super::ftrace_events::text_arg(args, key)
}

/// Formats a systrace `prev_state` (`R`, `R+`, `S`, `D|K`, `DK`, …) as the end-state string:
/// `R` / `R+` when runnable, else the state letters in canonical order joined by `|`, cut to
/// its first three characters as Trace Processor's task-state string is (`T|t|X` → `T|t`).
/// `None` for an empty or unknown state.
fn format_prev_state(s: &[u8]) -> Option<Cow<'static, str>> {
    // Canonical order of the non-runnable letters.
    const LETTERS: &[u8] = b"SDTtXZPxKWNI";
    if s.is_empty() {
        return None;
    }
    let mut bits = 0u32;
    let mut preempted = false;
    for &c in s {
        match c {
            b'|' | b'R' => {}
            b'+' => preempted = true,
            _ => bits |= 1 << LETTERS.iter().position(|&l| l == c)?,
        }
    }
    if bits == 0 {
        return Some(Cow::Borrowed(if preempted { "R+" } else { "R" }));
    }
    let mut out = String::with_capacity(8);
    for (i, &l) in LETTERS.iter().enumerate() {
        if bits & (1 << i) != 0 {
            if !out.is_empty() {
                out.push('|');
            }
            out.push(char::from(l));
        }
    }
    out.truncate(MAX_STATE_CHARS);
    Some(Cow::Owned(out))
}

/// The longest task-state string: Trace Processor keeps three characters (and a NUL).
pub(crate) const MAX_STATE_CHARS: usize = 3;

/// A systrace `prev_state` as the kernel's state bits (the 4.4 layout Trace Processor
/// decodes by default): what the raw `ftrace_event` row of a text `sched_switch` holds.
/// -1 for a state it cannot read.
fn raw_prev_state(s: &[u8]) -> i64 {
    const LETTERS: &[u8] = b"SDTtXZxKWPN";
    let mut bits = 0i64;
    for &c in s {
        match c {
            b'|' | b'R' => {}
            b'+' => bits |= 0x800,
            b'I' => bits |= 0x402,
            _ => match LETTERS.iter().position(|&l| l == c) {
                Some(i) => bits |= 1 << i,
                None => return -1,
            },
        }
    }
    bits
}

/// Turns tokenized lines into events; one per file.
struct LineParser {
    machine: MachineId,
    clock: ClockRef,
}

impl LineParser {
    fn new(machine: MachineId, clock: ClockRef) -> Self {
        Self { machine, clock }
    }

    fn intern(sink: &mut Sink, s: &[u8]) -> StrId {
        sink.intern(&clean_utf8(s))
    }

    fn push(&self, sink: &mut Sink, ts: i64, data: EventData) {
        sink.push(ts, self.clock, data);
    }

    fn line(&mut self, sink: &mut Sink, l: &Line<'_>) {
        let machine = self.machine;
        // As the reference's line parser: the line's thread is looked up (or made) and
        // named by its tid alone, then bound to the TGID column's process, so a new thread
        // gets its row before its process's main thread.
        let thread = ThreadRef {
            machine,
            tid: l.pid,
            pid: None,
        };
        let name = if l.task == b"<...>" {
            NULL_STR
        } else {
            sink.strings.intern_nonempty(&clean_utf8(l.task))
        };
        let data = if name == NULL_STR {
            EventData::Thread(thread)
        } else {
            EventData::ThreadName {
                thread,
                name,
                priority: NamePriority::Ftrace,
            }
        };
        self.push(sink, l.ts, data);
        if let Some(tgid) = l.tgid {
            let bound = ThreadRef {
                pid: Some(tgid),
                ..thread
            };
            self.push(sink, l.ts, EventData::Thread(bound));
        }
        // Handler errors (missing or malformed fields) are silent.
        let _ = self.event(sink, l);
    }

    fn event(&mut self, sink: &mut Sink, l: &Line<'_>) -> Option<()> {
        let machine = self.machine;
        let a = l.args;
        match l.event {
            b"sched_switch" => {
                let prev_tid: u32 = parse_uint(arg(a, b"prev_pid")?)?;
                let prev_prio: i32 = parse_num(arg(a, b"prev_prio")?)?;
                let next_tid: u32 = parse_uint(arg(a, b"next_pid")?)?;
                let next_prio: i32 = parse_num(arg(a, b"next_prio")?)?;
                let prev_comm = Self::intern(sink, arg(a, b"prev_comm").unwrap_or_default());
                let next_comm = Self::intern(sink, arg(a, b"next_comm").unwrap_or_default());
                let state_text = arg(a, b"prev_state").unwrap_or_default();
                let prev_state = match format_prev_state(state_text) {
                    Some(s) => sink.intern(&s),
                    None => NULL_STR,
                };
                // The raw row, as the protobuf's: the state as the kernel's bits.
                let raw_args = [
                    sink.static_arg("prev_comm", ArgValue::Str(prev_comm)),
                    sink.static_arg("prev_pid", ArgValue::Int(i64::from(prev_tid))),
                    sink.static_arg("prev_prio", ArgValue::Int(i64::from(prev_prio))),
                    sink.static_arg("prev_state", ArgValue::Int(raw_prev_state(state_text))),
                    sink.static_arg("next_comm", ArgValue::Str(next_comm)),
                    sink.static_arg("next_pid", ArgValue::Int(i64::from(next_tid))),
                    sink.static_arg("next_prio", ArgValue::Int(i64::from(next_prio))),
                ];
                let raw = FtraceRaw {
                    machine,
                    cpu: l.cpu,
                    tid: i64::from(prev_tid),
                    name: sink.intern("sched_switch"),
                    args: sink.args.push_shared(&raw_args),
                    common_flags: None,
                };
                self.push(
                    sink,
                    l.ts,
                    EventData::SchedSwitch(SchedSwitch {
                        machine,
                        cpu: l.cpu,
                        prev_tid: i64::from(prev_tid),
                        prev_comm,
                        prev_state,
                        next_tid: i64::from(next_tid),
                        next_comm,
                        next_prio,
                    }),
                );
                self.push(sink, l.ts, EventData::FtraceRaw(raw));
            }
            b"sched_waking" => {
                let tid: u32 = parse_uint(arg(a, b"pid")?)?;
                let comm = Self::intern(sink, arg(a, b"comm").unwrap_or_default());
                self.push(
                    sink,
                    l.ts,
                    EventData::SchedWaking(SchedWaking {
                        machine,
                        cpu: l.cpu,
                        tid: i64::from(tid),
                        comm,
                        waker_tid: Some(l.pid),
                        irq_context: None,
                    }),
                );
            }
            b"tracing_mark_write" | b"print" | b"0" => {
                atrace::parse_marker(sink, self.clock, l.ts, machine, l.pid, l.args);
            }
            // `caller` is the kernel's `function+offset/size` text.
            b"sched_blocked_reason" => {
                // Both the pid and iowait must be integers, or the line does nothing.
                let tid: u32 = parse_uint(arg(a, b"pid")?)?;
                let io_wait = Some(parse_uint::<u32>(arg(a, b"iowait")?)? != 0);
                let function = Self::intern(sink, arg(a, b"caller").unwrap_or_default());
                let thread = ThreadRef {
                    machine,
                    tid: i64::from(tid),
                    pid: None,
                };
                self.push(
                    sink,
                    l.ts,
                    EventData::BlockedReason {
                        thread,
                        io_wait,
                        function,
                    },
                );
            }
            // The rest goes to the one ftrace handler (`sched_wakeup` and the other kinds
            // the reference's line parser does not read are ignored there).
            _ => {
                let kind = clean_utf8(l.event);
                let o = Origin {
                    machine,
                    cpu: l.cpu,
                    pid: l.pid,
                    ts: l.ts,
                    clock: self.clock,
                    text: true,
                };
                ftrace_events::handle(sink, &o, &kind, &Fields::Text(a), &|_| None);
            }
        }
        Some(())
    }

    /// One row of a `PROCESS DUMP` block; returns the layout for the next row. A row whose
    /// pid, ppid or tid is not a number fails the whole import, as in the reference
    /// (behaviour-process-tracking.md §4).
    fn dump_row(
        &mut self,
        sink: &mut Sink,
        kind: DumpKind,
        line: &[u8],
    ) -> Result<DumpKind, ParseError> {
        let unparsable = |what: &str, token: &[u8]| {
            ParseError::invalid(format!(
                "Could not parse the {what} '{}' of PROCESS DUMP row '{}'",
                clean_utf8(token),
                clean_utf8(line)
            ))
        };
        let tokens: Vec<&[u8]> = line
            .split(|&b| is_ws(b))
            .filter(|t| !t.is_empty())
            .collect();
        if tokens.first() == Some(&&b"USER"[..]) {
            return Ok(if tokens.get(2) == Some(&&b"TID"[..]) {
                DumpKind::Short
            } else {
                DumpKind::Long
            });
        }
        let machine = self.machine;
        match kind {
            DumpKind::Long if tokens.len() >= 9 => {
                let pid =
                    parse_uint::<u32>(tokens[1]).ok_or_else(|| unparsable("pid", tokens[1]))?;
                let ppid =
                    parse_uint::<u32>(tokens[2]).ok_or_else(|| unparsable("ppid", tokens[2]))?;
                let name = Self::intern(sink, tokens[8]);
                // Dump facts come before every ftrace event, as in the reference.
                self.push(
                    sink,
                    0,
                    EventData::Process(Box::new(ProcessInfo {
                        process: ProcessRef {
                            machine,
                            pid: i64::from(pid),
                        },
                        parent_pid: Some(i64::from(ppid)),
                        name,
                        cmdline: NULL_STR,
                        uid: None,
                        start_ts: None,
                        start_probe: None,
                        from_system: true,
                    })),
                );
            }
            DumpKind::Short if tokens.len() >= 4 => {
                let pid =
                    parse_uint::<u32>(tokens[1]).ok_or_else(|| unparsable("pid", tokens[1]))?;
                let tid =
                    parse_uint::<u32>(tokens[2]).ok_or_else(|| unparsable("tid", tokens[2]))?;
                let cmd = tokens[3..]
                    .iter()
                    .map(|t| clean_utf8(t))
                    .collect::<Vec<_>>()
                    .join(" ");
                let name = sink.intern(&cmd);
                self.push(
                    sink,
                    0,
                    EventData::ThreadName {
                        thread: ThreadRef {
                            machine,
                            tid: i64::from(tid),
                            pid: Some(i64::from(pid)),
                        },
                        name,
                        priority: NamePriority::Other,
                    },
                );
            }
            _ => {}
        }
        Ok(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::TrackKey;

    #[test]
    fn a_stream_read_a_few_bytes_at_a_time_parses_as_the_whole_file_does() {
        let bytes = include_bytes!("../../tests/data/h_systrace.txt");
        let ctx = FileContext::new(0, 0);
        let mut whole = Sink::new();
        parse(bytes, &mut whole, &ctx).expect("parses");
        for step in [1, 3, 4096] {
            let mut sink = Sink::new();
            let mut input = crate::parse::Trickle { bytes, step };
            parse_stream(&mut input, &mut sink, &ctx).expect("parses");
            assert_eq!(
                format!("{:?}", sink.decoded()),
                format!("{:?}", whole.decoded())
            );
            assert_eq!(sink.stats, whole.stats, "step {step}");
        }
    }
    use crate::ir::DecodedEvent;

    fn ctx() -> FileContext {
        FileContext::new(0, 0)
    }

    fn import(text: &str) -> Sink {
        let mut sink = Sink::new();
        parse(text.as_bytes(), &mut sink, &ctx()).expect("systrace import failed");
        sink
    }

    fn failures(sink: &Sink) -> i64 {
        sink.stats
            .iter()
            .filter(|(k, _)| k.name == "systrace_parse_failure")
            .map(|(_, v)| *v)
            .sum()
    }

    fn s(sink: &Sink, id: StrId) -> &str {
        sink.strings.get(id).unwrap_or("NULL")
    }

    /// (ts, name) of every Begin.
    fn begins(sink: &Sink) -> Vec<(i64, String)> {
        sink.decoded()
            .iter()
            .filter_map(|e| match e.data {
                EventData::Begin(b) => Some((e.ts, s(sink, b.name).to_string())),
                _ => None,
            })
            .collect()
    }

    fn tok(line: &str) -> Line<'_> {
        tokenize(line.as_bytes()).unwrap_or_else(|| panic!("no match: {line}"))
    }

    #[test]
    fn line_grammar_variants() {
        let l = tok("          <idle>-0     (-----) [000] d..3  100.000000: sched_switch: prev_comm=swapper/0");
        assert_eq!((l.task, l.pid, l.tgid, l.cpu), (&b"<idle>"[..], 0, None, 0));
        assert_eq!(l.ts, 100_000_000_000);
        assert_eq!(l.event, b"sched_switch");
        assert_eq!(l.args, b"prev_comm=swapper/0");

        let l = tok("              ui-500   (  500) [001] ...1  100.001000: tracing_mark_write: B|500|measure  ");
        assert_eq!(
            (l.task, l.pid, l.tgid, l.cpu),
            (&b"ui"[..], 500, Some(500), 1)
        );
        assert_eq!(l.args, b"B|500|measure");

        // No tgid column, no flags.
        let l = tok("<idle>-0     [002]  0.002208: tracing_mark_write: E|123");
        assert_eq!((l.pid, l.tgid, l.cpu, l.ts), (0, None, 2, 2_208_000));

        // Old atrace layout without tgid, flags present.
        let l = tok("ksoftirqd/0-3     [000] ...2  1212.465092: sched_switch: prev_comm=x");
        assert_eq!((l.task, l.pid), (&b"ksoftirqd/0"[..], 3));

        // Task names with dashes, colons and spaces.
        let l = tok(" Binder:1234_2-1250  ( 1234) [003] .... 5.000001: print: I|1234|x");
        assert_eq!(
            (l.task, l.pid, l.tgid),
            (&b"Binder:1234_2"[..], 1250, Some(1234))
        );
        let l = tok("task-1234-567    ( 567) [000] ....   100.000000: tracing_mark_write: B|567|w");
        assert_eq!((l.task, l.pid, l.tgid), (&b"task-1234"[..], 567, Some(567)));
        let l = tok("Thread-5 worker-77 (70) [000] .... 1.5: tracing_mark_write: E|70");
        assert_eq!(
            (l.task, l.pid, l.tgid),
            (&b"Thread-5 worker"[..], 77, Some(70))
        );
        let l = tok(" ndroid.systemui-13580 (13580) [001] ...1 683202.104223: tracing_mark_write: S|13580|deliverInputEvent|263");
        assert_eq!(l.task, b"ndroid.systemui");

        // Flags touching the timestamp, 5-char flags with a hex preempt count.
        let l = tok("kworker/u16:1-77    (   77) [004] ....316.196720: tracing_mark_write: B|77|a");
        assert_eq!(l.ts, 316_196_720_000);
        let l =
            tok("test-process-123    (  123) [002] d...316.196740: tracing_mark_write: B|123|c");
        assert_eq!((l.task, l.ts), (&b"test-process"[..], 316_196_740_000));
        let l = tok("chrome-10830 ( 10830) [000] dNsa. 4213.033572: tracing_mark_write: B|10830|h");
        assert_eq!(l.ts, 4_213_033_572_000);
        let l = tok("chrome-10830 ( 10830) [000] dNsa.4213.033572: tracing_mark_write: E|10830");
        assert_eq!(l.ts, 4_213_033_572_000);

        // Pids are unsigned 32-bit.
        let l = tok("a-4000000000 [000] .... 1.5: x: y");
        assert_eq!(l.pid, 4_000_000_000);

        // Event `0` (old kernels) and an event whose payload has more colons.
        let l = tok("  a-1 [000] ...1 1.000000: 0: B|1|x");
        assert_eq!((l.event, l.args), (&b"0"[..], &b"B|1|x"[..]));
        let l = tok("<...>-882   (  882) [003] .... 10852.771186: event: event: abc xyz =0x34");
        assert_eq!(
            (l.event, l.args),
            (&b"event"[..], &b"event: abc xyz =0x34"[..])
        );

        for bad in [
            "some = 000, other = 0x4",
            "xyz = 0x0 abc = 0x0",
            "cpus=8",
            "a-1 [000] .... 1.0 : x: y",
            "a-1 [000] .... 1: x: y",
            "a-1 [000] .... 1.5:x: y",
            "a-1 [000] .... 1.5: x",
            "a-1 [x] .... 1.5: x: y",
            "a-99999999999 [0] .... 1.5: x: y",
            "a-1 [000] toolongflags 1.5: x: y",
            // At most one blank before `[cpu]`; flags are three letters and one or two
            // more; no blank before `)`.
            "a-1 (1)  [000] .... 1.5: x: y",
            "a-1 [000] ... 1.5: x: y",
            "a-1 (1 ) [000] .... 1.5: x: y",
            "",
            "-",
        ] {
            assert_eq!(tokenize(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn seconds_to_ns_truncates_like_the_reference() {
        assert_eq!(seconds_to_ns(b"100.001000"), Some(100_001_000_000));
        assert_eq!(seconds_to_ns(b"10852.771242"), Some(10_852_771_242_000));
        assert_eq!(seconds_to_ns(b"0.002188"), Some(2_188_000));
        // The reference's double artefact.
        assert_eq!(seconds_to_ns(b"4213.033672"), Some(4_213_033_671_999));
    }

    #[test]
    fn args_and_prev_state() {
        let a = b"prev_comm=a b prev_pid=5 x=y=z prev_pid=6 ==> k=";
        assert_eq!(arg(a, b"prev_pid"), Some(&b"5"[..]));
        assert_eq!(arg(a, b"prev_comm"), Some(&b"a"[..]));
        assert_eq!(arg(a, b"name"), Some(&b"b"[..]));
        assert_eq!(arg(a, b"x"), Some(&b"z"[..]));
        assert_eq!(arg(a, b"k"), Some(&b""[..]));
        assert_eq!(arg(a, b"missing"), None);
        let f = |s: &str| format_prev_state(s.as_bytes()).map(|c| c.into_owned());
        assert_eq!(f("R").as_deref(), Some("R"));
        assert_eq!(f("R+").as_deref(), Some("R+"));
        assert_eq!(f("S").as_deref(), Some("S"));
        assert_eq!(f("D|K").as_deref(), Some("D|K"));
        assert_eq!(f("KD").as_deref(), Some("D|K"));
        assert_eq!(f("I").as_deref(), Some("I"));
        assert_eq!(f("T|t|X|Z|P").as_deref(), Some("T|t"));
        assert_eq!(f("S|D").as_deref(), Some("S|D"));
        assert_eq!(f(""), None);
        assert_eq!(f("Q"), None);
    }

    #[test]
    fn h_systrace_fixture() {
        let sink = import(include_str!("../../tests/data/h_systrace.txt"));
        assert_eq!(failures(&sink), 0);
        let clock = sink.clocks.get(0);
        assert_eq!(clock.clock_id, clocks::MONOTONIC);
        assert_eq!(
            begins(&sink),
            vec![
                (100_001_000_000, "measure".to_string()),
                (100_002_000_000, "text".to_string()),
                (100_009_000_000, "upload".to_string())
            ]
        );
        // `B|500|upload` written by bg-501 is on thread 501 of process 500.
        let upload = sink
            .decoded()
            .iter()
            .find_map(|e| match e.data {
                EventData::Begin(b) if s(&sink, b.name) == "upload" => Some(b),
                _ => None,
            })
            .expect("upload slice");
        assert_eq!(
            *sink.tracks.get(upload.track),
            TrackKey::ThreadSlices(ThreadRef {
                machine: 0,
                tid: 501,
                pid: Some(500)
            })
        );
        let ends = sink
            .decoded()
            .iter()
            .filter(|e| matches!(e.data, EventData::End(_)))
            .count();
        assert_eq!(ends, 3);
        let counters: Vec<(i64, f64)> = sink
            .decoded()
            .iter()
            .filter_map(|e| match e.data {
                EventData::Counter { value, track, .. } => {
                    assert!(matches!(
                        sink.tracks.get(track),
                        TrackKey::ProcessCounter {
                            process: ProcessRef { pid: 500, .. },
                            kind: "atrace_counter",
                            ..
                        }
                    ));
                    Some((e.ts, value.0))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            counters,
            vec![(100_003_000_000, 4.0), (100_009_500_000, 1.0)]
        );
        let switches: Vec<(u32, i64, i64, &str, i64, i32)> = sink
            .decoded()
            .iter()
            .filter_map(|e| match e.data {
                EventData::SchedSwitch(sw) => Some((
                    sw.cpu,
                    e.ts,
                    sw.prev_tid,
                    s(&sink, sw.prev_state),
                    sw.next_tid,
                    sw.next_prio,
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            switches,
            vec![
                (0, 100_000_000_000, 0, "R", 500, 110),
                (0, 100_008_000_000, 500, "S", 501, 120),
                (0, 100_012_000_000, 501, "R", 0, 120),
                (1, 100_002_500_000, 0, "R", 600, 120),
                (1, 100_007_500_000, 600, "D", 0, 120),
            ]
        );
        // Every line names its thread; `-----` gives no pid.
        let names: Vec<(i64, Option<i64>, &str)> = sink
            .decoded()
            .iter()
            .filter_map(|e| match e.data {
                EventData::ThreadName {
                    thread,
                    name,
                    priority,
                } => {
                    assert_eq!(priority, NamePriority::Ftrace);
                    Some((thread.tid, thread.pid, s(&sink, name)))
                }
                _ => None,
            })
            .collect();
        assert_eq!(names.len(), 13);
        assert!(names.contains(&(0, None, "<idle>")));
        // Named by tid alone, then bound to the TGID column's process.
        assert!(names.contains(&(501, None, "bg")));
        assert!(names.contains(&(600, None, "net")));
        assert!(sink.decoded().iter().any(|e| matches!(
            e.data,
            EventData::Thread(ThreadRef {
                tid: 501,
                pid: Some(500),
                ..
            })
        )));
    }

    #[test]
    fn conformance_shapes() {
        // cpus_header_with_digits_only
        let sink = import("cpus=16\ntask-1234-567    ( 567) [000] ....   100.000000: tracing_mark_write: B|567|task_work\ntask-1234-567    ( 567) [000] ....   100.001000: tracing_mark_write: E|567\n        ");
        assert_eq!(
            begins(&sink),
            vec![(100_000_000_000, "task_work".to_string())]
        );
        assert_eq!(failures(&sink), 0);

        // bad_print_systrace: continuation lines are failures, the rest imports.
        let sink = import("           <...>-882   (  882) [003] .... 10852.771186: event: event: abc xyz =0x34 clk id = 019\nsome = 000, other = 0x4\nxyz = 0x0 abc = 0x0\n  surfaceflinger-598   (  598) [004] .... 10852.771242: tracing_mark_write: B|598|some event\n  surfaceflinger-598   (  598) [004] .... 10852.771245: tracing_mark_write: E|598\n");
        assert_eq!(
            begins(&sink),
            vec![(10_852_771_242_000, "some event".to_string())]
        );
        assert_eq!(failures(&sink), 2);
        // `<...>` does not name its thread, made by tid first, then bound to its tgid.
        assert!(matches!(
            sink.decoded()[0].data,
            EventData::Thread(ThreadRef {
                tid: 882,
                pid: None,
                ..
            })
        ));
        assert!(matches!(
            sink.decoded()[1].data,
            EventData::Thread(ThreadRef {
                tid: 882,
                pid: Some(882),
                ..
            })
        ));

        // regex_pattern_no_gap_after_irq_flags
        let sink = import("cpus=8\nkworker/u16:1-77    (   77) [004] ....316.196720: tracing_mark_write: B|77|no_gap_after_dots\nkworker/u16:2-78    (   78) [005] .... 316.196730: tracing_mark_write: B|78|space_after_dots\ntest-process-123    (  123) [002] d...316.196740: tracing_mark_write: B|123|no_gap_after_flags\n<idle>-0     [000]  0.002188: tracing_mark_write: E|77\n");
        assert_eq!(begins(&sink).len(), 3);
        assert_eq!(failures(&sink), 0);
    }

    #[test]
    fn other_events() {
        let sink = import(concat!(
            "# tracer: nop\n",
            "  kworker/0:1-40 [000] d..2 1.000000: cpu_frequency: state=1400000 cpu_id=2\n",
            "  <idle>-0 [001] d..2 1.000001: cpu_idle: state=4294967295 cpu_id=1\n",
            "  kworker/0:1-40 [000] ...1 1.000002: workqueue_execute_start: work struct ffffffc0: function dbs_work_handler\n",
            "  kworker/0:1-40 [000] ...1 1.000003: workqueue_execute_end: work struct ffffffc0\n",
            "  a-10 (10) [000] d..2 1.000004: sched_waking: comm=b pid=11 prio=120 target_cpu=001\n",
            "  a-10 (10) [000] d..2 1.000005: sched_wakeup: comm=b pid=11 prio=120 target_cpu=001\n",
            "  a-10 (10) [000] d..2 1.000006: sched_switch: prev_comm=a prev_pid=x prev_prio=120 prev_state=S ==> next_comm=b next_pid=11 next_prio=120\n",
            "  a-10 (10) [000] d..2 1.000007: sched_blocked_reason: pid=11 iowait=1 caller=foo\n",
        ));
        assert_eq!(failures(&sink), 0);
        let decoded = sink.decoded();
        let evs: Vec<&DecodedEvent> = decoded
            .iter()
            .filter(|e| !matches!(e.data, EventData::ThreadName { .. } | EventData::Thread(_)))
            .collect();
        // sched_wakeup adds nothing; the switch with a bad prev_pid neither.
        assert_eq!(evs.len(), 6);
        let EventData::BlockedReason {
            thread,
            io_wait,
            function,
        } = evs[5].data
        else {
            panic!("sched_blocked_reason")
        };
        assert_eq!(
            (thread.tid, io_wait, s(&sink, function)),
            (11, Some(true), "foo")
        );
        let EventData::Counter { track, value, .. } = evs[0].data else {
            panic!("cpu_frequency")
        };
        assert_eq!(value.0, 1_400_000.0);
        assert!(matches!(
            sink.tracks.get(track),
            TrackKey::CpuCounter {
                cpu: 2,
                kind: "cpu_frequency",
                ..
            }
        ));
        let EventData::Counter { track, value, .. } = evs[1].data else {
            panic!("cpu_idle")
        };
        assert_eq!(value.0, 4_294_967_295.0);
        let TrackKey::CpuCounter {
            cpu: 1,
            kind: "cpu_idle",
            name,
            ..
        } = *sink.tracks.get(track)
        else {
            panic!("cpu_idle track")
        };
        assert_eq!(s(&sink, name), "cpuidle");
        let EventData::Begin(b) = evs[2].data else {
            panic!("workqueue begin")
        };
        assert_eq!(
            (s(&sink, b.category), s(&sink, b.name)),
            ("workqueue", "dbs_work_handler")
        );
        let EventData::End(e) = evs[3].data else {
            panic!("workqueue end")
        };
        assert_eq!((e.track, s(&sink, e.category)), (b.track, "workqueue"));
        let EventData::SchedWaking(w) = evs[4].data else {
            panic!("waking")
        };
        assert_eq!((w.tid, s(&sink, w.comm), w.waker_tid), (11, "b", Some(10)));
    }

    #[test]
    fn html_with_process_dump() {
        let html = concat!(
            "<!DOCTYPE html>\n<html>\n<head></head>\n",
            "<script class=\"trace-data\" type=\"application/text\">\n",
            "PROCESS DUMP\n",
            "USER           PID  PPID     VSZ    RSS WCHAN            ADDR S NAME                       COMMAND\n",
            "root             1     0   10000   2000 0                   0 S init                       init second\n",
            "u0_a1          500     1   10000   2000 0                   0 S com.example.ui             com.example.ui\n",
            "USER           PID   TID CMD\n",
            "u0_a1          500   501 Render Thread\n",
            "</script>\n",
            "<script class=\"trace-data\" type=\"application/text\">\n",
            "# tracer: nop\n",
            "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n",
            "              ui-500   (  500) [000] ...1  1.000000: tracing_mark_write: B|500|a\n",
            "  </script>\n",
            "<script class=\"trace-data\" type=\"application/text\">\n",
            "# tracer: nop\n",
            "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n",
            "              ui-500   (  500) [000] ...1  2.000000: tracing_mark_write: B|500|ignored\n",
            "</script>\n",
        );
        let sink = import(html);
        assert_eq!(begins(&sink), vec![(1_000_000_000, "a".to_string())]);
        let procs: Vec<(i64, Option<i64>, &str)> = sink
            .decoded()
            .iter()
            .filter_map(|e| match e.data {
                EventData::Process(ref p) => {
                    assert!(p.from_system);
                    Some((p.process.pid, p.parent_pid, s(&sink, p.name)))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            procs,
            vec![(1, Some(0), "init"), (500, Some(1), "com.example.ui")]
        );
        assert!(sink.decoded().iter().any(|e| matches!(
            e.data,
            EventData::ThreadName { thread: ThreadRef { tid: 501, pid: Some(500), .. }, name, priority: NamePriority::Other }
                if s(&sink, name) == "Render Thread"
        )));
        assert_eq!(failures(&sink), 0);
    }

    #[test]
    fn process_dump_row_with_unparsable_ids_fails_the_import() {
        let page = |row: &str| {
            format!(
                "<html>\n<script class=\"trace-data\" type=\"application/text\">\nPROCESS DUMP\n{row}\n</script>\n</html>\n"
            )
        };
        let long = "USER PID PPID VSZ RSS WCHAN ADDR S NAME\n";
        let short = "USER PID TID CMD\n";
        for (rows, what) in [
            (format!("{long}root abc 0 1 1 0 0 S init"), "pid 'abc'"),
            (format!("{long}root 1 x 1 1 0 0 S init"), "ppid 'x'"),
            (format!("{short}u0_a1 500 5o1 Render Thread"), "tid '5o1'"),
            (format!("{short}u0_a1 -5 501 Render Thread"), "pid '-5'"),
        ] {
            let err = parse(page(&rows).as_bytes(), &mut Sink::new(), &ctx());
            assert!(
                matches!(err, Err(ParseError::Invalid(ref m)) if m.contains(what)),
                "{rows}: {err:?}"
            );
        }
        // Rows too short to be read are still skipped.
        let ok = parse(
            page(&format!("{long}root 1")).as_bytes(),
            &mut Sink::new(),
            &ctx(),
        );
        assert!(ok.is_ok());
    }

    #[test]
    fn prelude_and_compressed_atrace() {
        let text = "# tracer: nop\n  a-1 (1) [000] ...1 1.000000: tracing_mark_write: B|1|x\n";
        let sink = import(&format!("capturing trace... done\nTRACE:\n{text}"));
        assert_eq!(begins(&sink).len(), 1);
        assert_eq!(failures(&sink), 0);

        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut z, text.as_bytes()).expect("compress");
        let mut file = b"TRACE:\n".to_vec();
        file.extend(z.finish().expect("compress"));
        file.extend_from_slice(b"trailing junk that is not zlib");
        let mut sink = Sink::new();
        parse(&file, &mut sink, &ctx()).expect("import");
        assert_eq!(begins(&sink).len(), 1);
    }

    #[test]
    fn file_starting_with_idle_task_is_not_html() {
        let sink = import("<idle>-0 [000] d..2 1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=5 next_prio=120\n");
        assert!(sink
            .decoded()
            .iter()
            .any(|e| matches!(e.data, EventData::SchedSwitch(_))));
    }

    #[test]
    fn a_line_longer_than_any_ftrace_line_is_skipped_and_counted() {
        let long = "x".repeat(MAX_LINE + 10);
        let text = format!(
            "  a-1 (1) [000] ...1 1.000000: tracing_mark_write: B|1|before\n{long}\n  a-1 (1) [000] ...1 2.000000: tracing_mark_write: B|1|after\n"
        );
        let sink = import(&text);
        let names: Vec<String> = begins(&sink).into_iter().map(|b| b.1).collect();
        assert_eq!(names, ["before", "after"]);
        assert_eq!(failures(&sink), 1);
    }

    #[test]
    fn unterminated_last_line_is_not_read() {
        let sink = import("  a-1 (1) [000] ...1 1.000000: tracing_mark_write: B|1|x");
        assert!(sink.decoded().is_empty());
    }

    #[test]
    fn json_embedded_text_is_strict() {
        let mut sink = Sink::new();
        let text = "# tracer: nop\n\n  a-1 (1) [000] ...1 1.000000: tracing_mark_write: B|1|x\n  a-1 (1) [000] ...1 1.5: tracing_mark_write: E|1";
        parse_text(text, &mut sink, &ctx()).expect("valid lines");
        assert_eq!(begins(&sink).len(), 1);
        // Per line: the thread by tid, bound to its tgid, and the marker.
        assert_eq!(sink.decoded().len(), 6);
        assert_eq!(sink.clocks.get(0).clock_id, clocks::TRACE_FILE);
        let mut sink = Sink::new();
        let err = parse_text(
            "  a-1 (1) [000] ...1 1.0: print: B|1|x\ngarbage\n",
            &mut sink,
            &ctx(),
        );
        assert!(matches!(err, Err(ParseError::Invalid(m)) if m.contains("garbage")));
    }

    #[test]
    fn never_panics_on_junk() {
        let mut junk: Vec<u8> = Vec::new();
        for i in 0..4000u32 {
            junk.push((i.wrapping_mul(2_654_435_761) >> 13) as u8);
            if i % 37 == 0 {
                junk.extend_from_slice(b"-12 (3) [0] d..1 1.5: tracing_mark_write: S|1|\xff|9\n");
            }
            if i % 53 == 0 {
                junk.extend_from_slice(b"\n<script class=\"trace-data\" type=\"application/text\">\nPROCESS DUMP\nUSER PID TID\n");
            }
        }
        for start in [0usize, 1, 7] {
            let mut sink = Sink::new();
            let _ = parse(&junk[start..], &mut sink, &ctx());
            let _ = parse_text(&String::from_utf8_lossy(&junk[start..]), &mut sink, &ctx());
        }
        let mut with_lt = b"<".to_vec();
        with_lt.extend_from_slice(&junk);
        let _ = parse(&with_lt, &mut Sink::new(), &ctx());
    }
}
