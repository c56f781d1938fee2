//! Chrome JSON trace importer (`{"traceEvents": [...]}` or a bare `[...]` array).
//!
//! Behaviour follows `behaviour-parsers.md` §1. The file is read with a small tolerant JSON
//! lexer rather than `serde_json` because the reference accepts input that strict JSON rejects:
//! trailing commas in arrays and objects, raw control characters (newlines) inside strings, and
//! a bare array missing its closing `]` (the trailing partial event is lost).
//!
//! Events are tokenized into compact [`Item`]s (strings, args and most tracks already interned),
//! sorted as the reference sorts JSON events (§1.3), then pushed into the [`Sink`] on the file's
//! private `TRACE_FILE` clock. Only async tracks are resolved after sorting, because their name
//! is the name of the cookie's first event in timestamp order.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::fmt::Write as _;

use crate::ir::{
    self, ArgValue, ArgsBuilder, ArgsRef, AsyncSet, EventData, FlowOp, FlowV1Event, FlowV1Phase,
    FlowsRef, LegacyAsyncInfo, MachineId, MetaValue, NamePriority, ProcessInfo, ProcessRef, Real,
    Sink, SliceEvent, StrId, ThreadRef, ThreadStateEvent, TrackKey, NO_ARGS, NO_FLOWS, NO_TS,
    NULL_STR,
};
use crate::parse::{FileContext, ParseError};

/// Containers nested deeper than this are rejected (protects the recursive lexer's stack).
const MAX_DEPTH: u32 = 512;

/// Opaque numbers for string pids/tids start here so they never collide with real (u32) ids.
const STRING_ID_BASE: i64 = 1 << 32;

const NO_NAME: &str = "[No name]";

mod convert;
mod events;
mod lexer;
mod v8_profile;

use convert::*;
use lexer::{JErr, JResult, JVal, Lexer};

/// Imports a Chrome JSON trace held in memory.
pub fn parse(bytes: &[u8], sink: &mut Sink, ctx: &FileContext) -> Result<(), ParseError> {
    let mut input = bytes;
    parse_stream(&mut input, sink, ctx)
}

/// Imports a Chrome JSON trace, reading it as a stream: the events array is read an event
/// at a time, and only the event being read (or a top-level value other than the events)
/// needs to fit in memory.
pub fn parse_stream(
    input: &mut dyn std::io::Read,
    sink: &mut Sink,
    ctx: &FileContext,
) -> Result<(), ParseError> {
    parse_stream_lexing(input, sink, ctx, events::LEX_INLINE)
}

/// [`parse_stream`], the events of an array after the first `lex_inline` lexed on a second
/// thread.
fn parse_stream_lexing(
    input: &mut dyn std::io::Read,
    sink: &mut Sink,
    ctx: &FileContext,
    lex_inline: usize,
) -> Result<(), ParseError> {
    let mut st = Stream::new(input);
    // A UTF-8 byte order mark is harmless; skip it.
    st.attempt(|lx| {
        let rest = &lx.b[lx.pos..];
        if rest.starts_with(b"\xEF\xBB\xBF") {
            lx.pos += 3;
        } else if !lx.complete && b"\xEF\xBB\xBF".starts_with(rest) {
            return Err(JErr::Eof);
        }
        Ok(())
    })?
    .map_err(syntax_error)?;
    let mut imp = Importer::new(sink, ctx.machine);
    imp.lex_inline = lex_inline;
    match st.attempt(|lx| lx.next_byte())?.map_err(syntax_error)? {
        Some(b'{') => {
            let events = sink.event_count;
            imp.read_top_object(&mut st, sink, ctx)?;
            // An object without trace events (a V8 `.cpuprofile`, a DevTools
            // `traceEvents`-less export, any other JSON): nothing was read, say so.
            if !imp.saw_trace_events && sink.event_count == events {
                imp.stat(sink, "json_without_trace_events");
            }
        }
        Some(b'[') => {
            imp.read_events(&mut st, sink, false)?;
        }
        Some(_) => {
            return Err(ParseError::invalid(
                "not a JSON trace: expected a JSON object or array",
            ))
        }
        None => return Err(ParseError::invalid("empty JSON input")),
    }
    imp.finish(sink);
    Ok(())
}

fn syntax_error(e: JErr) -> ParseError {
    match e {
        JErr::Syntax(m) => ParseError::Invalid(m),
        JErr::Eof => ParseError::invalid("the JSON input ends early"),
    }
}

/// `metadata` fields, as `json_metadata.<key>` rows will hold them; the lexer is at `{`.
fn read_metadata(lx: &mut Lexer) -> JResult<Vec<(String, MetaValue)>> {
    let mut entries = Vec::new();
    lx.object(|lx, key| {
        lx.skip_ws();
        let start = lx.pos;
        let v = lx.value(2)?;
        let value = match v {
            JVal::Null => return Ok(()),
            JVal::Bool(b) => MetaValue::Int(b as i64),
            JVal::Int(i) => MetaValue::Int(i),
            JVal::UInt(u) => MetaValue::Str(format_g(u as f64)),
            JVal::Real(f) => {
                if f.fract() == 0.0 && f.abs() < 9.2e18 {
                    MetaValue::Int(f as i64)
                } else {
                    MetaValue::Str(format_g(f))
                }
            }
            JVal::Str(s) => MetaValue::Str(s.into_owned()),
            JVal::Arr(_) | JVal::Obj(_) => {
                MetaValue::Str(String::from_utf8_lossy(&lx.b[start..lx.pos]).into_owned())
            }
        };
        entries.push((key.into_owned(), value));
        Ok(())
    })?;
    Ok(entries)
}

/// Bytes read from the input at a time.
const CHUNK: usize = 1 << 20;

/// The unread part of a streamed JSON file.
struct Stream<'r> {
    input: &'r mut dyn std::io::Read,
    buf: Vec<u8>,
    pos: usize,
    /// The input offset of `buf[0]`.
    base: u64,
    eof: bool,
    /// Bytes to read next time: small at first (for small files), up to [`CHUNK`].
    chunk: usize,
}

/// After an element of the event array: `true` for a `,` (another element follows),
/// `false` for the closing `]`.
fn array_separator(lx: &mut Lexer<'_>) -> JResult<bool> {
    match lx.next_byte()? {
        Some(b',') => {
            lx.pos += 1;
            Ok(true)
        }
        Some(b']') => {
            lx.pos += 1;
            Ok(false)
        }
        None => Err(JErr::Eof),
        Some(_) => Err(JErr::Syntax(format!(
            "invalid JSON: expected ',' or ']' at byte {}",
            lx.offset()
        ))),
    }
}

impl<'r> Stream<'r> {
    fn new(input: &'r mut dyn std::io::Read) -> Self {
        Stream {
            input,
            buf: Vec::new(),
            pos: 0,
            base: 0,
            eof: false,
            chunk: 64 << 10,
        }
    }

    /// Reads at least `n` more bytes (or to the end of the input).
    fn fill(&mut self, n: usize) -> Result<(), ParseError> {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
        }
        let start = self.buf.len();
        self.buf.resize(start + n, 0);
        let mut filled = start;
        while filled < self.buf.len() {
            match self.input.read(&mut self.buf[filled..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(k) => filled += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ParseError::invalid(format!("cannot read the file: {e}"))),
            }
        }
        self.buf.truncate(filled);
        Ok(())
    }

    /// Runs `step` on a lexer at the unread bytes and, when it succeeds, moves past what it
    /// read. A step that needs more than is buffered ([`JErr::Eof`] before the end of the
    /// input) runs again, from the same place, once more is read — so a step must not act
    /// on anything before it has read all it needs. At the end of the input, `Eof` is
    /// returned: the input ends inside what the step reads.
    fn attempt<T>(
        &mut self,
        mut step: impl FnMut(&mut Lexer<'_>) -> JResult<T>,
    ) -> Result<JResult<T>, ParseError> {
        // Blanks before the step are passed over for good, so a run of them never has to
        // fit in memory.
        loop {
            let blanks = self.buf[self.pos..]
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                .count();
            self.pos += blanks;
            if self.pos < self.buf.len() || self.eof {
                break;
            }
            let n = self.chunk;
            self.chunk = (self.chunk * 2).min(CHUNK);
            self.fill(n)?;
        }
        loop {
            let mut lx = Lexer {
                b: &self.buf,
                pos: self.pos,
                base: self.base,
                complete: self.eof,
            };
            match step(&mut lx) {
                Err(JErr::Eof) if !self.eof => {
                    // Double what is pending, so a long value is re-read a few times only.
                    let pending = self.buf.len() - self.pos;
                    let n = pending.max(self.chunk);
                    self.chunk = (self.chunk * 2).min(CHUNK);
                    self.fill(n)?;
                }
                Ok(v) => {
                    self.pos = lx.pos;
                    return Ok(Ok(v));
                }
                Err(e) => return Ok(Err(e)),
            }
        }
    }
}

/// The fields of one trace event the importer looks at (later duplicates win).
#[derive(Default)]
struct RawEvent<'a> {
    n_keys: u32,
    ph: Option<JVal<'a>>,
    ts: Option<JVal<'a>>,
    dur: Option<JVal<'a>>,
    tts: Option<JVal<'a>>,
    tdur: Option<JVal<'a>>,
    pid: Option<JVal<'a>>,
    tid: Option<JVal<'a>>,
    name: Option<JVal<'a>>,
    cat: Option<JVal<'a>>,
    id: Option<JVal<'a>>,
    id2: Option<JVal<'a>>,
    bind_id: Option<JVal<'a>>,
    flow_in: Option<JVal<'a>>,
    flow_out: Option<JVal<'a>>,
    s: Option<JVal<'a>>,
    bp: Option<JVal<'a>>,
    args: Option<JVal<'a>>,
}

/// The field index of a key the importer reads (see [`RawEvent::slot`]).
fn event_key(key: &str) -> Option<usize> {
    Some(match key {
        "ph" => 0,
        "ts" => 1,
        "dur" => 2,
        "tts" => 3,
        "tdur" => 4,
        "pid" => 5,
        "tid" => 6,
        "name" => 7,
        "cat" => 8,
        "id" => 9,
        "id2" => 10,
        "bind_id" => 11,
        "flow_in" => 12,
        "flow_out" => 13,
        "s" => 14,
        "bp" => 15,
        "args" => 16,
        _ => return None,
    })
}

impl<'a> RawEvent<'a> {
    fn read(lx: &mut Lexer<'a>) -> JResult<Self> {
        let mut ev = RawEvent::default();
        lx.object(|lx, key| {
            ev.n_keys += 1;
            let Some(field) = event_key(&key) else {
                return lx.skip(2);
            };
            *ev.slot(field) = Some(lx.value(2)?);
            Ok(())
        })?;
        Ok(ev)
    }

    /// The field of index `field` (see [`event_key`]).
    fn slot(&mut self, field: usize) -> &mut Option<JVal<'a>> {
        match field {
            0 => &mut self.ph,
            1 => &mut self.ts,
            2 => &mut self.dur,
            3 => &mut self.tts,
            4 => &mut self.tdur,
            5 => &mut self.pid,
            6 => &mut self.tid,
            7 => &mut self.name,
            8 => &mut self.cat,
            9 => &mut self.id,
            10 => &mut self.id2,
            11 => &mut self.bind_id,
            12 => &mut self.flow_in,
            13 => &mut self.flow_out,
            14 => &mut self.s,
            15 => &mut self.bp,
            _ => &mut self.args,
        }
    }

    fn str_field<'v>(v: &'v Option<JVal<'a>>) -> &'v str {
        v.as_ref().and_then(JVal::as_str).unwrap_or("")
    }

    fn name(&self) -> &str {
        Self::str_field(&self.name)
    }

    fn cat(&self) -> &str {
        Self::str_field(&self.cat)
    }

    fn flag(v: &Option<JVal<'a>>) -> bool {
        matches!(v, Some(JVal::Bool(true)))
    }
}

/// An event waiting for the sort; async slices get their track after it.
#[derive(Clone, Debug)]
enum Pending {
    Ready(EventData),
    Async(Box<AsyncItem>),
    /// Pushed into the sink already.
    Taken,
}

#[derive(Clone, Debug)]
struct AsyncItem {
    phase: u8,
    /// `Some(pid)` for `id2.local` (process-scoped) cookies.
    local_pid: Option<i64>,
    /// The event's process, named in its track's args.
    pid: i64,
    cookie: u64,
    /// The event's own name (NULL when absent), for naming the cookie's track.
    raw_name: StrId,
    slice: SliceEvent,
}

/// Where an event goes in the sort (§1.3): its time, then `E` before `X` (longest first)
/// before the rest, then file order. The event itself waits in `Importer::pending[idx]`:
/// the sort moves these 24 bytes, not the events.
#[derive(Clone, Copy, Debug)]
struct SortKey {
    ts: i64,
    /// `dur` of an `X` event, else 0.
    dur: i64,
    /// 0 for `E`, 1 for `X`, 2 for the rest.
    class: u8,
    idx: u32,
}

/// What to do after an event.
enum Next {
    Continue,
    /// Tokenizing stops here (bad `dur`/`tts`/`tdur`).
    Stop(String),
}

struct Importer {
    machine: MachineId,
    keys: Vec<SortKey>,
    pending: Vec<Pending>,
    has_x: bool,
    /// String pids/tids → opaque numbers.
    string_ids: HashMap<String, i64>,
    args: ArgsBuilder,
    key: String,
    flat_key: String,
    no_name: StrId,
    n_events: u64,
    /// V8 CPU profiles (`P` events).
    v8: v8_profile::V8Profiles,
    /// Events of an array lexed on the import thread before the rest goes to a second.
    lex_inline: usize,
    /// The top-level object has a `traceEvents` or `systemTraceEvents` key.
    saw_trace_events: bool,
}

impl Importer {
    fn new(sink: &mut Sink, machine: MachineId) -> Self {
        Self {
            machine,
            keys: Vec::new(),
            pending: Vec::new(),
            has_x: false,
            string_ids: HashMap::new(),
            args: ArgsBuilder::default(),
            key: String::new(),
            flat_key: String::new(),
            no_name: sink.intern(NO_NAME),
            n_events: 0,
            v8: v8_profile::V8Profiles::default(),
            lex_inline: events::LEX_INLINE,
            saw_trace_events: false,
        }
    }

    fn stat(&self, sink: &mut Sink, name: &'static str) {
        sink.stat(name, self.machine, 1);
    }

    /// An event the parser cannot use: counted in `json_parser_failure`, with a
    /// `_trace_import_logs` row at the event's time naming it (`event_name`, `event_phase`),
    /// as the reference logs it.
    fn parser_failure(&mut self, sink: &mut Sink, ev: &RawEvent, ts: i64) {
        self.stat(sink, "json_parser_failure");
        let name = sink.intern(ev.name());
        let phase = ev
            .ph
            .as_ref()
            .and_then(JVal::as_str)
            .and_then(|s| s.chars().next())
            .map(String::from)
            .unwrap_or_default();
        let phase = sink.intern(&phase);
        let set = [
            sink.arg("event_name", ArgValue::Str(name)),
            sink.arg("event_phase", ArgValue::Str(phase)),
        ];
        let args = sink.args.push(&set);
        let data = EventData::ImportLog {
            name: "json_parser_failure",
            args,
        };
        // Sorted with the phases that have no tie rule.
        self.push(ts, b'L', 0, data);
    }

    /// Reads one event, accounted for as an input event (an empty `{}` is not one: the
    /// reference skips it without a word).
    fn account(&mut self, sink: &mut Sink, ev: RawEvent) -> Next {
        if ev.n_keys == 0 {
            return self.event(sink, ev);
        }
        let items = self.pending.len();
        sink.begin_input();
        let next = self.event(sink, ev);
        if self.pending.len() > items {
            // Its events wait for the sort, in the importer.
            sink.touch();
        }
        sink.end_input();
        next
    }

    /// The input ends early: everything read so far stays, and the cut is counted.
    fn truncated(&self, sink: &mut Sink) {
        self.stat(sink, "json_truncated");
    }

    /// `{ "traceEvents": [...], "systemTraceEvents": "...", "metadata": {...}, ... }`. An
    /// object cut short keeps what was read before the cut.
    fn read_top_object(
        &mut self,
        st: &mut Stream,
        sink: &mut Sink,
        ctx: &FileContext,
    ) -> Result<(), ParseError> {
        enum Key {
            Name(String),
            Close,
            End,
        }
        st.attempt(|lx| {
            lx.pos += 1;
            Ok(())
        })?
        .map_err(syntax_error)?;
        loop {
            let key = st.attempt(|lx| match lx.next_byte()? {
                None => Ok(Key::End),
                Some(b'}') => {
                    lx.pos += 1;
                    Ok(Key::Close)
                }
                Some(b'"') => {
                    let key = lx.string()?.into_owned();
                    lx.expect_colon()?;
                    Ok(Key::Name(key))
                }
                Some(_) => Err(lx.syntax("expected a key")),
            })?;
            let key = match key {
                Ok(Key::Name(k)) => k,
                Ok(Key::Close) => return Ok(()),
                Ok(Key::End) | Err(JErr::Eof) => {
                    self.truncated(sink);
                    return Ok(());
                }
                Err(JErr::Syntax(m)) => return Err(ParseError::Invalid(m)),
            };
            if key == "traceEvents" || key == "systemTraceEvents" {
                self.saw_trace_events = true;
            }
            let read = match key.as_str() {
                "traceEvents" => match st.attempt(|lx| lx.next_byte())? {
                    Ok(Some(b'[')) => {
                        if !self.read_events(st, sink, true)? {
                            return Ok(());
                        }
                        Ok(())
                    }
                    Ok(None) | Err(JErr::Eof) => Err(JErr::Eof),
                    Ok(Some(_)) => {
                        return Err(ParseError::invalid("traceEvents must be an array"));
                    }
                    Err(e) => Err(e),
                },
                "systemTraceEvents" => {
                    let text = st.attempt(|lx| match lx.value(1)? {
                        JVal::Str(text) => Ok(Some(text.into_owned())),
                        _ => Ok(None),
                    })?;
                    match text {
                        Ok(Some(text)) => {
                            crate::parse::systrace::parse_text(&text, sink, ctx)?;
                            Ok(())
                        }
                        Ok(None) => {
                            return Err(ParseError::invalid("systemTraceEvents must be a string"));
                        }
                        Err(e) => Err(e),
                    }
                }
                "displayTimeUnit" => {
                    let r = st.attempt(|lx| lx.skip(1))?;
                    if r.is_ok() {
                        self.stat(sink, "json_display_time_unit");
                    }
                    r
                }
                "metadata" => st
                    .attempt(|lx| {
                        if lx.next_byte()? == Some(b'{') {
                            read_metadata(lx)
                        } else {
                            lx.skip(1).map(|()| Vec::new())
                        }
                    })?
                    .map(|entries| {
                        for (key, value) in entries {
                            sink.metadata(format!("json_metadata.{key}"), self.machine, value);
                        }
                    }),
                _ => st.attempt(|lx| lx.skip(1))?,
            };
            match read {
                Ok(()) => {}
                Err(JErr::Eof) => {
                    self.truncated(sink);
                    return Ok(());
                }
                Err(JErr::Syntax(m)) => return Err(ParseError::Invalid(m)),
            }
            let next = st.attempt(|lx| match lx.next_byte()? {
                Some(b',') => {
                    lx.pos += 1;
                    Ok(true)
                }
                Some(b'}') => {
                    lx.pos += 1;
                    Ok(false)
                }
                None => Err(JErr::Eof),
                Some(_) => Err(lx.syntax("expected ',' or '}'")),
            })?;
            match next {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(JErr::Eof) => {
                    self.truncated(sink);
                    return Ok(());
                }
                Err(JErr::Syntax(m)) => return Err(ParseError::Invalid(m)),
            }
        }
    }

    /// Reads the events array; the stream is at `[`. Returns false when the input ended
    /// before the array did (every complete event is kept; in an object, or when a partial
    /// event is lost, the cut is counted). In a bare array (`in_object == false`) a missing
    /// `]` after a complete event loses nothing, as in the reference.
    fn read_events(
        &mut self,
        st: &mut Stream,
        sink: &mut Sink,
        in_object: bool,
    ) -> Result<bool, ParseError> {
        enum Element {
            Event(Next),
            Close,
            End,
        }
        st.attempt(|lx| {
            lx.pos += 1;
            Ok(())
        })?
        .map_err(syntax_error)?;
        let mut inline = 0;
        loop {
            // A long array is lexed on a second thread from here on (see `events`).
            if inline == self.lex_inline {
                if let Some(done) = self.read_events_threaded(st, sink, in_object)? {
                    return Ok(done);
                }
            }
            inline += 1;
            let element = st.attempt(|lx| match lx.next_byte()? {
                None => Ok(Element::End),
                Some(b']') => {
                    lx.pos += 1;
                    Ok(Element::Close)
                }
                Some(b'{') => {
                    let ev = RawEvent::read(lx)?;
                    Ok(Element::Event(self.account(sink, ev)))
                }
                Some(_) => Err(JErr::Syntax(format!(
                    "trace event at byte {} is not a JSON object",
                    lx.offset()
                ))),
            })?;
            match element {
                Ok(Element::Event(Next::Continue)) => {}
                Ok(Element::Event(Next::Stop(msg))) => {
                    return if in_object {
                        Err(ParseError::Invalid(msg))
                    } else {
                        Ok(false)
                    };
                }
                Ok(Element::Close) => return Ok(true),
                Ok(Element::End) => {
                    if in_object {
                        self.truncated(sink);
                    }
                    return Ok(false);
                }
                Err(JErr::Eof) => {
                    // An event cut short: read, and lost.
                    sink.begin_input();
                    self.truncated(sink);
                    sink.end_input();
                    return Ok(false);
                }
                Err(JErr::Syntax(m)) => return Err(ParseError::Invalid(m)),
            }
            let next = st.attempt(array_separator)?;
            match next {
                Ok(true) => {}
                Ok(false) => return Ok(true),
                Err(JErr::Eof) => {
                    if in_object {
                        self.truncated(sink);
                    }
                    return Ok(false);
                }
                Err(JErr::Syntax(m)) => return Err(ParseError::Invalid(m)),
            }
        }
    }

    /// Resolves a pid/tid field: (value, present). String ids become opaque numbers.
    fn resolve_id(&mut self, v: &Option<JVal>) -> (i64, bool) {
        match v {
            Some(JVal::Str(s)) => {
                let next = STRING_ID_BASE + self.string_ids.len() as i64;
                let id = *self.string_ids.entry(s.to_string()).or_insert(next);
                (id, true)
            }
            Some(v) => match coerce_u32(v) {
                Some(id) => (id, true),
                None => (0, false),
            },
            None => (0, false),
        }
    }

    fn push(&mut self, ts: i64, ph: u8, dur: i64, data: EventData) {
        self.wait(ts, ph, dur, Pending::Ready(data));
    }

    fn wait(&mut self, ts: i64, ph: u8, dur: i64, data: Pending) {
        let class = match ph {
            b'E' => 0,
            b'X' => 1,
            _ => 2,
        };
        self.keys.push(SortKey {
            ts,
            dur: if ph == b'X' { dur } else { 0 },
            class,
            idx: self.pending.len() as u32,
        });
        self.pending.push(data);
    }

    /// Tokenizes one event into items.
    fn event(&mut self, sink: &mut Sink, ev: RawEvent) -> Next {
        self.n_events += 1;
        if ev.n_keys == 0 {
            return Next::Continue;
        }
        let ph = match ev
            .ph
            .as_ref()
            .and_then(JVal::as_str)
            .and_then(|s| s.bytes().next())
        {
            Some(c) => c,
            None => {
                self.stat(sink, "json_tokenizer_failure");
                return Next::Continue;
            }
        };
        let ts = match ev.ts.as_ref().and_then(us_to_ns) {
            Some(ts) => ts,
            None if ph == b'M' => 0,
            None => {
                self.stat(sink, "json_tokenizer_failure");
                return Next::Continue;
            }
        };
        let mut times = [NO_TS; 3];
        for (slot, (field, v)) in
            times
                .iter_mut()
                .zip([("dur", &ev.dur), ("tts", &ev.tts), ("tdur", &ev.tdur)])
        {
            match v {
                None | Some(JVal::Null) => {}
                Some(v) => match us_to_ns(v) {
                    Some(ns) => *slot = ns,
                    None => {
                        self.stat(sink, "json_tokenizer_failure");
                        return Next::Stop(format!(
                            "trace event {}: invalid '{field}' value; reading stops here",
                            self.n_events
                        ));
                    }
                },
            }
        }
        let [dur, tts, tdur] = times;
        let machine = self.machine;

        // pid / tid.
        let (pid, has_pid) = self.resolve_id(&ev.pid);
        let (tid_raw, tid_present) = self.resolve_id(&ev.tid);
        let explicit_tid = tid_present && !(tid_raw == 0 && pid != 0);
        let tid = if tid_present && tid_raw != 0 {
            tid_raw
        } else {
            pid
        };
        let thread = ThreadRef {
            machine,
            tid,
            pid: Some(pid),
        };
        let process = ProcessRef { machine, pid };

        if ph == b'X' {
            self.has_x = true;
        }
        let sort_dur = if ph == b'X' && dur != NO_TS { dur } else { 0 };

        // String pids/tids name their process/thread.
        if let Some(JVal::Str(s)) = &ev.pid {
            let name = sink.strings.intern_nonempty(s);
            let info = ProcessInfo {
                process,
                parent_pid: None,
                name,
                cmdline: NULL_STR,
                uid: None,
                start_ts: None,
                start_probe: None,
                from_system: true,
            };
            self.push(ts, ph, sort_dur, EventData::Process(Box::new(info)));
        }
        if let Some(JVal::Str(s)) = &ev.tid {
            let name = sink.strings.intern_nonempty(s);
            let data = EventData::ThreadName {
                thread,
                name,
                priority: NamePriority::Other,
            };
            self.push(ts, ph, sort_dur, data);
        }

        let category = sink.strings.intern_nonempty(ev.cat());
        let raw_name = sink.strings.intern_nonempty(ev.name());
        let name_or_default = if raw_name == NULL_STR {
            self.no_name
        } else {
            raw_name
        };
        let thread_track = || TrackKey::ThreadSlices(thread);
        // `X` partially overlapping its parent spills to overflow lanes (§1.6).
        let overlap_track = || TrackKey::ThreadOverlap(thread);

        match ph {
            b'B' => {
                let slice = SliceEvent {
                    track: sink.track(thread_track()),
                    category,
                    name: name_or_default,
                    args: self.build_args(sink, &ev.args),
                    thread_ts: tts,
                    flows: self.flow_v2(sink, &ev),
                };
                self.push(ts, ph, 0, EventData::Begin(slice));
            }
            b'E' => {
                let slice = SliceEvent {
                    track: sink.track(thread_track()),
                    category,
                    name: raw_name,
                    args: self.build_args(sink, &ev.args),
                    thread_ts: tts,
                    flows: NO_FLOWS,
                };
                self.push(ts, ph, 0, EventData::End(slice));
            }
            b'X' => {
                if dur == NO_TS {
                    self.push(ts, ph, 0, EventData::Thread(thread));
                    self.parser_failure(sink, &ev, ts);
                } else {
                    let slice = SliceEvent {
                        track: sink.track(overlap_track()),
                        category,
                        name: name_or_default,
                        args: self.build_args(sink, &ev.args),
                        thread_ts: tts,
                        flows: self.flow_v2(sink, &ev),
                    };
                    let data = EventData::Complete {
                        slice,
                        dur,
                        thread_dur: tdur,
                    };
                    self.push(ts, ph, dur, data);
                }
            }
            b'i' | b'I' | b'R' => {
                let scope = ev.s.as_ref().and_then(JVal::as_str);
                let (track, name) = match scope {
                    Some("g") => {
                        self.push(ts, ph, 0, EventData::Thread(thread));
                        let key = TrackKey::GlobalSlices {
                            machine,
                            kind: "legacy_chrome_global_instants",
                            name: NULL_STR,
                        };
                        (Some(key), raw_name)
                    }
                    Some("p") => {
                        self.push(ts, ph, 0, EventData::Thread(thread));
                        let key = has_pid.then_some(TrackKey::ProcessSlices {
                            process,
                            kind: "chrome_process_instant",
                            name: NULL_STR,
                        });
                        (key, raw_name)
                    }
                    _ => {
                        if !explicit_tid {
                            self.push(ts, ph, 0, EventData::Thread(thread));
                        }
                        (explicit_tid.then(thread_track), name_or_default)
                    }
                };
                match track {
                    Some(key) => {
                        let slice = SliceEvent {
                            track: sink.track(key),
                            category,
                            name,
                            args: self.build_args(sink, &ev.args),
                            thread_ts: NO_TS,
                            flows: NO_FLOWS,
                        };
                        let data = EventData::Complete {
                            slice,
                            dur: 0,
                            thread_dur: NO_TS,
                        };
                        self.push(ts, ph, 0, data);
                    }
                    None => self.parser_failure(sink, &ev, ts),
                }
            }
            b'b' | b'e' | b'n' => {
                self.push(ts, ph, 0, EventData::Thread(thread));
                self.async_event(sink, &ev, ts, ph, has_pid, pid, raw_name, name_or_default);
            }
            b'C' => {
                self.push(ts, ph, 0, EventData::Thread(thread));
                self.counters(sink, &ev, ts, thread);
            }
            b'M' => {
                self.push(ts, ph, 0, EventData::Thread(thread));
                self.metadata_event(sink, &ev, ts, thread, process);
            }
            b's' | b't' | b'f' => {
                self.push(ts, ph, 0, EventData::Thread(thread));
                let Some(id) = ev.id.as_ref().and_then(flow_id) else {
                    self.stat(sink, "flow_invalid_id");
                    return Next::Continue;
                };
                let phase = match ph {
                    b's' => FlowV1Phase::Start,
                    b't' => FlowV1Phase::Step,
                    _ => FlowV1Phase::End,
                };
                let flow = FlowV1Event {
                    track: sink.track(thread_track()),
                    id,
                    category,
                    name: raw_name,
                    phase,
                    bind_enclosing: ev.bp.as_ref().and_then(JVal::as_str) == Some("e"),
                };
                self.push(ts, ph, 0, EventData::FlowV1(flow));
            }
            b'T' => {
                if dur == NO_TS {
                    self.push(ts, ph, 0, EventData::Thread(thread));
                    self.parser_failure(sink, &ev, ts);
                } else {
                    let data = thread_state(sink, &ev, thread, dur, raw_name);
                    self.push(ts, ph, 0, EventData::ThreadState(Box::new(data)));
                }
            }
            b'P' => {
                self.push(ts, ph, 0, EventData::Thread(thread));
                self.v8_sample_event(sink, &ev, thread);
            }
            // Every other phase only makes the thread.
            _ => self.push(ts, ph, 0, EventData::Thread(thread)),
        }
        Next::Continue
    }

    #[allow(clippy::too_many_arguments)]
    fn async_event(
        &mut self,
        sink: &mut Sink,
        ev: &RawEvent,
        ts: i64,
        ph: u8,
        has_pid: bool,
        pid: i64,
        raw_name: StrId,
        name_or_default: StrId,
    ) {
        // Cookie precedence: id > id2.global > id2.local; only id2.local is process-scoped.
        let id2 = ev.id2.as_ref();
        let (id, local) = match ev.id.as_ref().and_then(id_string) {
            Some(id) => (Some(id), false),
            None => match id2.and_then(|v| v.get("global")).and_then(id_string) {
                Some(id) => (Some(id), false),
                None => (id2.and_then(|v| v.get("local")).and_then(id_string), true),
            },
        };
        let (Some(id), true) = (id, has_pid) else {
            self.parser_failure(sink, ev, ts);
            return;
        };
        let mut cookie = fnv1a(0xcbf2_9ce4_8422_2325, ev.cat().as_bytes());
        cookie = fnv1a(cookie, &[0xff]);
        cookie = fnv1a(cookie, id.as_bytes());
        let (name, flows) = match ph {
            b'b' => (name_or_default, self.flow_v2(sink, ev)),
            b'n' => (raw_name, self.flow_v2(sink, ev)),
            _ => (raw_name, NO_FLOWS),
        };
        let slice = SliceEvent {
            track: 0,
            category: sink.strings.intern_nonempty(ev.cat()),
            name,
            args: self.build_args(sink, &ev.args),
            thread_ts: NO_TS,
            flows,
        };
        let item = AsyncItem {
            phase: ph,
            local_pid: local.then_some(pid),
            pid,
            cookie,
            raw_name,
            slice,
        };
        self.wait(ts, ph, 0, Pending::Async(Box::new(item)));
    }

    /// `C`: one counter of the thread's process per args key.
    fn counters(&mut self, sink: &mut Sink, ev: &RawEvent, ts: i64, thread: ThreadRef) {
        let Some(JVal::Obj(entries)) = &ev.args else {
            self.parser_failure(sink, ev, ts);
            return;
        };
        let mut prefix = String::from(ev.name());
        if let Some(JVal::Str(id)) = &ev.id {
            let _ = write!(prefix, " id: {id}");
        }
        let mut track_name = String::new();
        for (key, v) in entries {
            let value = match v {
                JVal::Int(i) => *i as f64,
                JVal::UInt(u) => *u as f64,
                JVal::Real(f) => *f,
                JVal::Str(s) => match counter_string_value(s) {
                    Some(f) => f,
                    None => {
                        self.parser_failure(sink, ev, ts);
                        continue;
                    }
                },
                _ => {
                    self.parser_failure(sink, ev, ts);
                    continue;
                }
            };
            track_name.clear();
            let _ = write!(track_name, "{prefix} {key}");
            let name = sink.intern(&track_name);
            // A process counter pushed for the emitting thread (Trace Processor's
            // PushProcessCounterForThread): the row names the thread (arg `utid`) and its
            // track, the process's, is made when the import ends.
            let track = sink.track(TrackKey::ThreadProcessCounter {
                thread,
                name,
                kind: "json_counter",
            });
            let data = EventData::Counter {
                track,
                value: Real(value),
                args: NO_ARGS,
            };
            self.push(ts, b'C', 0, data);
        }
    }

    /// `M`: process/thread names and sort index hints.
    fn metadata_event(
        &mut self,
        sink: &mut Sink,
        ev: &RawEvent,
        ts: i64,
        thread: ThreadRef,
        process: ProcessRef,
    ) {
        let Some(args @ JVal::Obj(_)) = &ev.args else {
            self.parser_failure(sink, ev, ts);
            return;
        };
        let data = match ev.name() {
            "process_name" | "thread_name" => {
                let Some(name) = args
                    .get("name")
                    .and_then(JVal::as_str)
                    .filter(|s| !s.is_empty())
                else {
                    self.parser_failure(sink, ev, ts);
                    return;
                };
                let name = sink.intern(name);
                if ev.name() == "process_name" {
                    EventData::Process(Box::new(ProcessInfo {
                        process,
                        parent_pid: None,
                        name,
                        cmdline: NULL_STR,
                        uid: None,
                        start_ts: None,
                        start_probe: None,
                        from_system: true,
                    }))
                } else {
                    EventData::ThreadName {
                        thread,
                        name,
                        priority: NamePriority::Other,
                    }
                }
            }
            "process_sort_index" | "thread_sort_index" => {
                let value = match args.get("sort_index") {
                    Some(JVal::Int(i)) => *i,
                    Some(JVal::Real(f)) if f.is_finite() => f.trunc() as i64,
                    _ => {
                        self.parser_failure(sink, ev, ts);
                        return;
                    }
                };
                if ev.name() == "process_sort_index" {
                    let key = sink.intern("process_sort_index_hint");
                    EventData::ProcessArg {
                        process,
                        key,
                        value,
                    }
                } else {
                    let key = sink.intern("thread_sort_index_hint");
                    EventData::ThreadArg { thread, key, value }
                }
            }
            _ => return,
        };
        self.push(ts, b'M', 0, data);
    }

    /// Flow v2 (`bind_id` + `flow_in`/`flow_out`) on the event's own slice.
    fn flow_v2(&mut self, sink: &mut Sink, ev: &RawEvent) -> FlowsRef {
        let Some(bind_id) = &ev.bind_id else {
            return NO_FLOWS;
        };
        let Some(id) = flow_id(bind_id) else {
            self.stat(sink, "flow_invalid_id");
            return NO_FLOWS;
        };
        let op = match (RawEvent::flag(&ev.flow_in), RawEvent::flag(&ev.flow_out)) {
            (true, true) => FlowOp::V2Step(id),
            (false, true) => FlowOp::V2Out(id),
            (true, false) => FlowOp::V2In(id),
            (false, false) => {
                self.stat(sink, "flow_without_direction");
                return NO_FLOWS;
            }
        };
        sink.flows(&[op])
    }

    /// `args` → `args.<k>` (nested `args.a.b`, arrays `args.a[0]`).
    fn build_args(&mut self, sink: &mut Sink, args: &Option<JVal>) -> ArgsRef {
        let Some(JVal::Obj(entries)) = args else {
            return NO_ARGS;
        };
        if entries.is_empty() {
            return NO_ARGS;
        }
        self.key.clear();
        self.key.push_str("args");
        self.flat_key.clear();
        self.flat_key.push_str("args");
        let (mut key, mut flat) = (
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.flat_key),
        );
        for (k, v) in entries {
            let (kl, fl) = (key.len(), flat.len());
            key.push('.');
            key.push_str(k);
            flat.push('.');
            flat.push_str(k);
            add_arg(sink, &mut self.args, &mut key, &mut flat, v);
            key.truncate(kl);
            flat.truncate(fl);
        }
        self.key = key;
        self.flat_key = flat;
        sink.args(&mut self.args)
    }

    /// Sorts (§1.3), resolves async tracks, and pushes everything into the sink.
    fn finish(self, sink: &mut Sink) {
        let mut keys = self.keys;
        let mut pending = self.pending;
        if self.has_x {
            // Ties: E first, then X by descending dur, then the rest in file order.
            keys.sort_unstable_by_key(|k| (k.ts, k.class, Reverse(k.dur), k.idx));
        } else {
            keys.sort_unstable_by_key(|k| (k.ts, k.idx));
        }
        let machine = self.machine;
        let clock = sink.builtin_clock(machine, ir::clocks::TRACE_FILE);
        let mut first_names: HashMap<(Option<i64>, u64), StrId> = HashMap::new();
        for key in keys {
            let data = match std::mem::replace(&mut pending[key.idx as usize], Pending::Taken) {
                Pending::Ready(data) => data,
                Pending::Taken => continue,
                Pending::Async(item) => {
                    let AsyncItem {
                        phase,
                        local_pid,
                        pid,
                        cookie,
                        raw_name,
                        mut slice,
                    } = *item;
                    let name = *first_names.entry((local_pid, cookie)).or_insert(raw_name);
                    let set = AsyncSet {
                        kind: if local_pid.is_some() {
                            "legacy_async_process_slice"
                        } else {
                            "legacy_async_global_slice"
                        },
                        machine,
                        process: local_pid.map(|pid| ProcessRef { machine, pid }),
                        name,
                        scope: NULL_STR,
                    };
                    sink.legacy_async.entry(set).or_insert(LegacyAsyncInfo {
                        source_scope: NULL_STR,
                        process_scoped: local_pid.is_some(),
                        creator: Some(ProcessRef { machine, pid }),
                    });
                    slice.track = sink.track(TrackKey::AsyncCookie { set, cookie });
                    match phase {
                        b'b' => EventData::Begin(slice),
                        b'e' => EventData::End(slice),
                        _ => EventData::Complete {
                            slice,
                            dur: 0,
                            thread_dur: NO_TS,
                        },
                    }
                }
            };
            sink.push(key.ts, clock, data);
        }
    }
}

/// `T`: the state is the event's name; `args.io_wait` / `args.blocked_function` describe it,
/// and `Running` with an integer `args.cpu` is also a `sched` row.
fn thread_state(
    sink: &mut Sink,
    ev: &RawEvent,
    thread: ThreadRef,
    dur: i64,
    state: StrId,
) -> ThreadStateEvent {
    let arg = |key: &str| ev.args.as_ref().and_then(|a| a.get(key));
    let io_wait = match arg("io_wait") {
        Some(JVal::Bool(b)) => Some(*b),
        Some(JVal::Int(i)) => Some(*i != 0),
        Some(JVal::UInt(u)) => Some(*u != 0),
        _ => None,
    };
    let blocked_function = arg("blocked_function")
        .and_then(JVal::as_str)
        .map_or(NULL_STR, |f| sink.strings.intern_nonempty(f));
    let cpu = match arg("cpu") {
        Some(JVal::Int(i)) => u32::try_from(*i).ok(),
        Some(JVal::UInt(u)) => u32::try_from(*u).ok(),
        _ => None,
    };
    let running = sink.strings.get(state) == Some("Running");
    ThreadStateEvent {
        thread,
        dur,
        state,
        io_wait,
        blocked_function,
        running_cpu: cpu.filter(|_| running),
    }
}

fn add_arg(sink: &mut Sink, out: &mut ArgsBuilder, key: &mut String, flat: &mut String, v: &JVal) {
    let value = match v {
        JVal::Null => return,
        JVal::Bool(b) => ArgValue::Bool(*b),
        JVal::Int(i) => ArgValue::Int(*i),
        JVal::UInt(u) => ArgValue::Uint(*u),
        JVal::Real(f) => ArgValue::Real(*f),
        JVal::Str(s) => ArgValue::Str(sink.intern(s)),
        JVal::Arr(items) => {
            for (i, item) in items.iter().enumerate() {
                let kl = key.len();
                let _ = write!(key, "[{i}]");
                add_arg(sink, out, key, flat, item);
                key.truncate(kl);
            }
            return;
        }
        JVal::Obj(entries) => {
            for (k, item) in entries {
                let (kl, fl) = (key.len(), flat.len());
                key.push('.');
                key.push_str(k);
                flat.push('.');
                flat.push_str(k);
                add_arg(sink, out, key, flat, item);
                key.truncate(kl);
                flat.truncate(fl);
            }
            return;
        }
    };
    let flat_id = sink.intern(flat);
    let key_id = if key == flat {
        flat_id
    } else {
        sink.intern(key)
    };
    out.add(flat_id, key_id, value);
}

#[cfg(test)]
mod tests;
