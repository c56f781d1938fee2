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

use std::borrow::Cow;
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

/// Imports a Chrome JSON trace.
pub fn parse(bytes: &[u8], sink: &mut Sink, ctx: &FileContext) -> Result<(), ParseError> {
    let mut lx = Lexer::new(bytes);
    // A UTF-8 byte order mark is harmless; skip it.
    if lx.b.starts_with(b"\xEF\xBB\xBF") {
        lx.pos = 3;
    }
    let mut imp = Importer::new(sink, ctx.machine);
    match lx.peek() {
        Some(b'{') => imp.read_top_object(&mut lx, sink, ctx)?,
        Some(b'[') => imp.read_events(&mut lx, sink, false)?,
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

// ---------------------------------------------------------------------------------------------
// Lexer
// ---------------------------------------------------------------------------------------------

/// Why a JSON value could not be read.
#[derive(Debug, PartialEq)]
enum JErr {
    /// The input ended inside the value.
    Eof,
    /// Malformed input (message includes the byte offset).
    Syntax(String),
}

type JResult<T> = Result<T, JErr>;

/// A parsed JSON value; strings borrow from the input unless they contain escapes.
#[derive(Debug, Clone, PartialEq)]
enum JVal<'a> {
    Null,
    Bool(bool),
    Int(i64),
    /// Integers above `i64::MAX` that fit a u64.
    UInt(u64),
    Real(f64),
    Str(Cow<'a, str>),
    Arr(Vec<JVal<'a>>),
    Obj(Vec<(Cow<'a, str>, JVal<'a>)>),
}

impl<'a> JVal<'a> {
    fn as_str(&self) -> Option<&str> {
        match self {
            JVal::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The last value of `key` in an object (later duplicates win).
    fn get(&self, key: &str) -> Option<&JVal<'a>> {
        match self {
            JVal::Obj(entries) => entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

struct Lexer<'a> {
    b: &'a [u8],
    pos: usize,
}

/// Result of scanning a number: where it ends and whether it has a fraction or exponent.
#[derive(Debug, PartialEq)]
enum NumScan {
    Ok {
        end: usize,
        float: bool,
    },
    /// The input ended inside the number (`-`, `1.`, `1e`).
    Eof,
    Bad,
}

/// Scans a strict JSON number starting at `start`.
fn scan_number(b: &[u8], start: usize) -> NumScan {
    let mut i = start;
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        None => return NumScan::Eof,
        Some(b'0') => {
            i += 1;
            if b.get(i).is_some_and(u8::is_ascii_digit) {
                return NumScan::Bad;
            }
        }
        Some(c) if c.is_ascii_digit() => {
            digits(&mut i);
        }
        Some(_) => return NumScan::Bad,
    }
    let mut float = false;
    if b.get(i) == Some(&b'.') {
        float = true;
        i += 1;
        if digits(&mut i) == 0 {
            return if i >= b.len() {
                NumScan::Eof
            } else {
                NumScan::Bad
            };
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        float = true;
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return if i >= b.len() {
                NumScan::Eof
            } else {
                NumScan::Bad
            };
        }
    }
    NumScan::Ok { end: i, float }
}

/// Converts the text of a valid JSON number into a value.
fn number_value(text: &str, float: bool) -> JVal<'static> {
    if !float {
        if let Ok(v) = text.parse::<i64>() {
            return JVal::Int(v);
        }
        if let Ok(v) = text.parse::<u64>() {
            return JVal::UInt(v);
        }
    }
    // A valid JSON number always parses as f64 (possibly to ±inf when huge).
    JVal::Real(text.parse::<f64>().unwrap_or(f64::NAN))
}

/// Parses a string that must hold exactly one strict JSON number (`"100"`, `"200.5"`).
fn strict_number(s: &str) -> Option<JVal<'static>> {
    match scan_number(s.as_bytes(), 0) {
        NumScan::Ok { end, float } if end == s.len() => Some(number_value(s, float)),
        _ => None,
    }
}

impl<'a> Lexer<'a> {
    fn new(b: &'a [u8]) -> Self {
        Self { b, pos: 0 }
    }

    fn skip_ws(&mut self) {
        while let Some(&c) = self.b.get(self.pos) {
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    /// Next non-blank byte, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.b.get(self.pos).copied()
    }

    fn syntax(&self, what: &str) -> JErr {
        JErr::Syntax(format!("invalid JSON: {what} at byte {}", self.pos))
    }

    fn expect_colon(&mut self) -> JResult<()> {
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                Ok(())
            }
            None => Err(JErr::Eof),
            Some(_) => Err(self.syntax("expected ':'")),
        }
    }

    fn literal<T>(&mut self, word: &[u8], v: T) -> JResult<T> {
        let rest = &self.b[self.pos..];
        if rest.starts_with(word) {
            self.pos += word.len();
            Ok(v)
        } else if word.starts_with(rest) {
            Err(JErr::Eof)
        } else {
            Err(self.syntax("unexpected character"))
        }
    }

    fn number(&mut self) -> JResult<JVal<'a>> {
        match scan_number(self.b, self.pos) {
            NumScan::Ok { end, float } => {
                // The scanned bytes are ASCII.
                let text = std::str::from_utf8(&self.b[self.pos..end]).unwrap_or("0");
                self.pos = end;
                Ok(number_value(text, float))
            }
            NumScan::Eof => Err(JErr::Eof),
            NumScan::Bad => Err(self.syntax("malformed number")),
        }
    }

    fn hex4(&mut self) -> JResult<u32> {
        let Some(digits) = self.b.get(self.pos..self.pos + 4) else {
            return Err(JErr::Eof);
        };
        let mut v = 0u32;
        for &d in digits {
            let x = (d as char)
                .to_digit(16)
                .ok_or_else(|| self.syntax("bad \\u escape"))?;
            v = v * 16 + x;
        }
        self.pos += 4;
        Ok(v)
    }

    /// Reads a string; the lexer is at its opening quote. Raw control characters are accepted.
    fn string(&mut self) -> JResult<Cow<'a, str>> {
        self.pos += 1;
        let start = self.pos;
        loop {
            match self.b.get(self.pos) {
                None => return Err(JErr::Eof),
                Some(b'"') => {
                    let raw = &self.b[start..self.pos];
                    self.pos += 1;
                    return std::str::from_utf8(raw).map(Cow::Borrowed).map_err(|_| {
                        JErr::Syntax(format!("invalid UTF-8 in a string at byte {start}"))
                    });
                }
                Some(b'\\') => break,
                Some(_) => self.pos += 1,
            }
        }
        // Slow path: the string has escapes.
        let mut buf: Vec<u8> = self.b[start..self.pos].to_vec();
        loop {
            match self.b.get(self.pos) {
                None => return Err(JErr::Eof),
                Some(b'"') => {
                    self.pos += 1;
                    return String::from_utf8(buf).map(Cow::Owned).map_err(|_| {
                        JErr::Syntax(format!("invalid UTF-8 in a string at byte {start}"))
                    });
                }
                Some(b'\\') => {
                    let Some(&e) = self.b.get(self.pos + 1) else {
                        return Err(JErr::Eof);
                    };
                    self.pos += 2;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            if (0xD800..0xDC00).contains(&hi)
                                && self.b.get(self.pos..self.pos + 2) == Some(b"\\u")
                            {
                                let save = self.pos;
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                                    char::from_u32(cp).unwrap_or('\u{FFFD}')
                                } else {
                                    // Lone high surrogate; re-read the second escape on its own.
                                    self.pos = save;
                                    '\u{FFFD}'
                                }
                            } else {
                                char::from_u32(hi).unwrap_or('\u{FFFD}')
                            }
                        }
                        _ => {
                            self.pos -= 1;
                            return Err(self.syntax("bad escape in string"));
                        }
                    };
                    let mut tmp = [0u8; 4];
                    buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                }
                Some(&c) => {
                    buf.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// Iterates an object's entries; the lexer is at `{`. `f` must consume the value.
    fn object<F>(&mut self, mut f: F) -> JResult<()>
    where
        F: FnMut(&mut Self, Cow<'a, str>) -> JResult<()>,
    {
        self.pos += 1;
        loop {
            match self.peek() {
                None => return Err(JErr::Eof),
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'"') => {}
                Some(_) => return Err(self.syntax("expected a key")),
            }
            let key = self.string()?;
            self.expect_colon()?;
            f(self, key)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                None => return Err(JErr::Eof),
                Some(_) => return Err(self.syntax("expected ',' or '}'")),
            }
        }
    }

    /// Iterates an array's elements; the lexer is at `[`. `f` must consume the element.
    fn array<F>(&mut self, mut f: F) -> JResult<()>
    where
        F: FnMut(&mut Self) -> JResult<()>,
    {
        self.pos += 1;
        loop {
            match self.peek() {
                None => return Err(JErr::Eof),
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(_) => {}
            }
            f(self)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                None => return Err(JErr::Eof),
                Some(_) => return Err(self.syntax("expected ',' or ']'")),
            }
        }
    }

    fn check_depth(&self, depth: u32) -> JResult<()> {
        if depth > MAX_DEPTH {
            Err(self.syntax("nesting too deep"))
        } else {
            Ok(())
        }
    }

    fn value(&mut self, depth: u32) -> JResult<JVal<'a>> {
        match self.peek() {
            None => Err(JErr::Eof),
            Some(b'{') => {
                self.check_depth(depth)?;
                let mut entries = Vec::new();
                self.object(|lx, k| {
                    entries.push((k, lx.value(depth + 1)?));
                    Ok(())
                })?;
                Ok(JVal::Obj(entries))
            }
            Some(b'[') => {
                self.check_depth(depth)?;
                let mut items = Vec::new();
                self.array(|lx| {
                    items.push(lx.value(depth + 1)?);
                    Ok(())
                })?;
                Ok(JVal::Arr(items))
            }
            Some(b'"') => Ok(JVal::Str(self.string()?)),
            Some(b't') => self.literal(b"true", JVal::Bool(true)),
            Some(b'f') => self.literal(b"false", JVal::Bool(false)),
            Some(b'n') => self.literal(b"null", JVal::Null),
            Some(c) if c == b'-' || c.is_ascii_digit() => self.number(),
            Some(_) => Err(self.syntax("unexpected character")),
        }
    }

    /// Validates and skips a value without building it.
    fn skip(&mut self, depth: u32) -> JResult<()> {
        match self.peek() {
            None => Err(JErr::Eof),
            Some(b'{') => {
                self.check_depth(depth)?;
                self.object(|lx, _| lx.skip(depth + 1))
            }
            Some(b'[') => {
                self.check_depth(depth)?;
                self.array(|lx| lx.skip(depth + 1))
            }
            Some(b'"') => self.string().map(drop),
            Some(b't') => self.literal(b"true", ()),
            Some(b'f') => self.literal(b"false", ()),
            Some(b'n') => self.literal(b"null", ()),
            Some(c) if c == b'-' || c.is_ascii_digit() => self.number().map(drop),
            Some(_) => Err(self.syntax("unexpected character")),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Field conversions
// ---------------------------------------------------------------------------------------------

/// µs (int, double, or a string holding a strict JSON number) → ns.
fn us_to_ns(v: &JVal) -> Option<i64> {
    match v {
        JVal::Int(i) => i.checked_mul(1000),
        JVal::UInt(_) => None,
        JVal::Real(f) => f64_us_to_ns(*f),
        JVal::Str(s) => match strict_number(s)? {
            JVal::Str(_) => None,
            n => us_to_ns(&n),
        },
        _ => None,
    }
}

fn f64_us_to_ns(v: f64) -> Option<i64> {
    const LIMIT: f64 = 9.223_372_036_854_775e18;
    if !v.is_finite() {
        return None;
    }
    if v.fract() == 0.0 {
        // Integral: exact integer arithmetic.
        if v.abs() >= LIMIT {
            return None;
        }
        (v as i64).checked_mul(1000)
    } else {
        // f64::round rounds half away from zero.
        let r = (v * 1000.0).round();
        if r.abs() >= LIMIT {
            return None;
        }
        Some(r as i64)
    }
}

/// pid/tid number coercion: ints (doubles truncated), outside uint32 → 0.
fn coerce_u32(v: &JVal) -> Option<i64> {
    match v {
        JVal::Int(i) => Some(if (0..=u32::MAX as i64).contains(i) {
            *i
        } else {
            0
        }),
        JVal::UInt(_) => Some(0),
        JVal::Real(f) => {
            let t = f.trunc();
            Some(if t >= 0.0 && t <= u32::MAX as f64 {
                t as i64
            } else {
                0
            })
        }
        _ => None,
    }
}

/// Flow ids: integers, or strings holding hex (optional `0x`).
fn flow_id(v: &JVal) -> Option<u64> {
    match v {
        JVal::Int(i) => Some(*i as u64),
        JVal::UInt(u) => Some(*u),
        JVal::Str(s) => {
            let h = s
                .strip_prefix("0x")
                .or_else(|| s.strip_prefix("0X"))
                .unwrap_or(s);
            if h.is_empty() || h.len() > 16 || !h.bytes().all(|c| c.is_ascii_hexdigit()) {
                None
            } else {
                u64::from_str_radix(h, 16).ok()
            }
        }
        _ => None,
    }
}

/// Counter values given as strings: a decimal number, sign and leading/trailing dot allowed
/// (`".75"`, `"246."`, `"+10.5"`); `"1.5e"`, `"."`, `"-"` are rejected.
fn counter_string_value(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut n_digits = i - int_start;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        n_digits += i - f;
    }
    if n_digits == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let e = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == e {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// C's `printf("%g")`.
fn format_g(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    fn strip(s: &str) -> &str {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.')
        } else {
            s
        }
    }
    let sci = format!("{v:.5e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mant), exp.abs())
    } else {
        let prec = (5 - exp) as usize;
        strip(&format!("{v:.prec$}")).to_string()
    }
}

/// 64-bit FNV-1a, for async cookies.
fn fnv1a(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The async id as the reference compares it: as a string (ints in decimal).
fn id_string<'v>(v: &'v JVal) -> Option<Cow<'v, str>> {
    match v {
        JVal::Str(s) => Some(Cow::Borrowed(&**s)),
        JVal::Int(i) => Some(Cow::Owned(i.to_string())),
        JVal::UInt(u) => Some(Cow::Owned(u.to_string())),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

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

impl<'a> RawEvent<'a> {
    fn read(lx: &mut Lexer<'a>) -> JResult<Self> {
        let mut ev = RawEvent::default();
        lx.object(|lx, key| {
            ev.n_keys += 1;
            let slot = match &*key {
                "ph" => &mut ev.ph,
                "ts" => &mut ev.ts,
                "dur" => &mut ev.dur,
                "tts" => &mut ev.tts,
                "tdur" => &mut ev.tdur,
                "pid" => &mut ev.pid,
                "tid" => &mut ev.tid,
                "name" => &mut ev.name,
                "cat" => &mut ev.cat,
                "id" => &mut ev.id,
                "id2" => &mut ev.id2,
                "bind_id" => &mut ev.bind_id,
                "flow_in" => &mut ev.flow_in,
                "flow_out" => &mut ev.flow_out,
                "s" => &mut ev.s,
                "bp" => &mut ev.bp,
                "args" => &mut ev.args,
                _ => return lx.skip(2),
            };
            *slot = Some(lx.value(2)?);
            Ok(())
        })?;
        Ok(ev)
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
    Async {
        phase: u8,
        /// `Some(pid)` for `id2.local` (process-scoped) cookies.
        local_pid: Option<i64>,
        /// The event's process, named in its track's args.
        pid: i64,
        cookie: u64,
        /// The event's own name (NULL when absent), for naming the cookie's track.
        raw_name: StrId,
        slice: SliceEvent,
    },
}

#[derive(Clone, Debug)]
struct Item {
    ts: i64,
    ph: u8,
    /// `dur` of an `X` event (for the tie order).
    dur: i64,
    data: Pending,
}

/// What to do after an event.
enum Next {
    Continue,
    /// Tokenizing stops here (bad `dur`/`tts`/`tdur`).
    Stop(String),
}

struct Importer {
    machine: MachineId,
    items: Vec<Item>,
    has_x: bool,
    /// String pids/tids → opaque numbers.
    string_ids: HashMap<String, i64>,
    args: ArgsBuilder,
    key: String,
    flat_key: String,
    no_name: StrId,
    n_events: u64,
}

impl Importer {
    fn new(sink: &mut Sink, machine: MachineId) -> Self {
        Self {
            machine,
            items: Vec::new(),
            has_x: false,
            string_ids: HashMap::new(),
            args: ArgsBuilder::default(),
            key: String::new(),
            flat_key: String::new(),
            no_name: sink.intern(NO_NAME),
            n_events: 0,
        }
    }

    fn stat(&self, sink: &mut Sink, name: &'static str) {
        sink.stat(name, self.machine, 1);
    }

    /// `{ "traceEvents": [...], "systemTraceEvents": "...", "metadata": {...}, ... }`.
    fn read_top_object(
        &mut self,
        lx: &mut Lexer,
        sink: &mut Sink,
        ctx: &FileContext,
    ) -> Result<(), ParseError> {
        let truncated = || ParseError::Truncated("the JSON object (no closing '}')".into());
        let conv = |e: JErr| match e {
            JErr::Eof => truncated(),
            JErr::Syntax(m) => ParseError::Invalid(m),
        };
        lx.pos += 1;
        loop {
            match lx.peek() {
                None => return Err(truncated()),
                Some(b'}') => return Ok(()),
                Some(b'"') => {}
                Some(_) => return Err(conv(lx.syntax("expected a key"))),
            }
            let key = lx.string().map_err(conv)?;
            lx.expect_colon().map_err(conv)?;
            match &*key {
                "traceEvents" => match lx.peek() {
                    Some(b'[') => self.read_events(lx, sink, true)?,
                    None => return Err(truncated()),
                    Some(_) => {
                        return Err(ParseError::invalid("traceEvents must be an array"));
                    }
                },
                "systemTraceEvents" => match lx.value(1).map_err(conv)? {
                    JVal::Str(text) => crate::parse::systrace::parse_text(&text, sink, ctx)?,
                    _ => {
                        return Err(ParseError::invalid("systemTraceEvents must be a string"));
                    }
                },
                "displayTimeUnit" => {
                    lx.skip(1).map_err(conv)?;
                    self.stat(sink, "json_display_time_unit");
                }
                "metadata" => {
                    if lx.peek() == Some(b'{') {
                        self.read_metadata(lx, sink).map_err(conv)?;
                    } else {
                        lx.skip(1).map_err(conv)?;
                    }
                }
                _ => lx.skip(1).map_err(conv)?,
            }
            match lx.peek() {
                Some(b',') => lx.pos += 1,
                Some(b'}') => return Ok(()),
                None => return Err(truncated()),
                Some(_) => return Err(conv(lx.syntax("expected ',' or '}'"))),
            }
        }
    }

    /// `metadata` fields → `json_metadata.<key>` rows.
    fn read_metadata(&mut self, lx: &mut Lexer, sink: &mut Sink) -> JResult<()> {
        let machine = self.machine;
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
            sink.metadata(format!("json_metadata.{key}"), machine, value);
            Ok(())
        })
    }

    /// Reads the events array; the lexer is at `[`. In a bare array (`in_object == false`) the
    /// end of input anywhere is accepted and a trailing partial event is dropped.
    fn read_events(
        &mut self,
        lx: &mut Lexer,
        sink: &mut Sink,
        in_object: bool,
    ) -> Result<(), ParseError> {
        let eof = || {
            if in_object {
                Err(ParseError::Truncated("the traceEvents array".into()))
            } else {
                Ok(())
            }
        };
        lx.pos += 1;
        loop {
            match lx.peek() {
                None => return eof(),
                Some(b']') => {
                    lx.pos += 1;
                    return Ok(());
                }
                Some(b'{') => {}
                Some(_) => {
                    return Err(ParseError::Invalid(format!(
                        "trace event at byte {} is not a JSON object",
                        lx.pos
                    )));
                }
            }
            match RawEvent::read(lx) {
                Ok(ev) => {
                    if let Next::Stop(msg) = self.event(sink, ev) {
                        return if in_object {
                            Err(ParseError::Invalid(msg))
                        } else {
                            Ok(())
                        };
                    }
                }
                Err(JErr::Eof) => return eof(),
                Err(JErr::Syntax(m)) => return Err(ParseError::Invalid(m)),
            }
            match lx.peek() {
                Some(b',') => lx.pos += 1,
                Some(b']') => {
                    lx.pos += 1;
                    return Ok(());
                }
                None => return eof(),
                Some(_) => {
                    return Err(ParseError::Invalid(format!(
                        "invalid JSON: expected ',' or ']' at byte {}",
                        lx.pos
                    )))
                }
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
        self.items.push(Item {
            ts,
            ph,
            dur,
            data: Pending::Ready(data),
        });
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
                    self.stat(sink, "json_parser_failure");
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
                    None => self.stat(sink, "json_parser_failure"),
                }
            }
            b'b' | b'e' | b'n' => {
                self.push(ts, ph, 0, EventData::Thread(thread));
                self.async_event(sink, &ev, ts, ph, has_pid, pid, raw_name, name_or_default);
            }
            b'C' => {
                self.push(ts, ph, 0, EventData::Thread(thread));
                self.counters(sink, &ev, ts, process);
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
                    self.stat(sink, "json_parser_failure");
                } else {
                    let data = thread_state(sink, &ev, thread, dur, raw_name);
                    self.push(ts, ph, 0, EventData::ThreadState(Box::new(data)));
                }
            }
            // `P` (samples) and every other phase only make the thread.
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
            self.stat(sink, "json_parser_failure");
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
        self.items.push(Item {
            ts,
            ph,
            dur: 0,
            data: Pending::Async {
                phase: ph,
                local_pid: local.then_some(pid),
                pid,
                cookie,
                raw_name,
                slice,
            },
        });
    }

    /// `C`: one process counter per args key.
    fn counters(&mut self, sink: &mut Sink, ev: &RawEvent, ts: i64, process: ProcessRef) {
        let Some(JVal::Obj(entries)) = &ev.args else {
            self.stat(sink, "json_parser_failure");
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
                        self.stat(sink, "json_parser_failure");
                        continue;
                    }
                },
                _ => {
                    self.stat(sink, "json_parser_failure");
                    continue;
                }
            };
            track_name.clear();
            let _ = write!(track_name, "{prefix} {key}");
            let name = sink.intern(&track_name);
            let track = sink.track(TrackKey::ProcessCounter {
                process,
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
            self.stat(sink, "json_parser_failure");
            return;
        };
        let data = match ev.name() {
            "process_name" | "thread_name" => {
                let Some(name) = args
                    .get("name")
                    .and_then(JVal::as_str)
                    .filter(|s| !s.is_empty())
                else {
                    self.stat(sink, "json_parser_failure");
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
                        self.stat(sink, "json_parser_failure");
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
        let mut items = self.items;
        if self.has_x {
            // Ties: E first, then X by descending dur, then the rest in file order.
            items.sort_by_key(|it| {
                let class = match it.ph {
                    b'E' => 0u8,
                    b'X' => 1,
                    _ => 2,
                };
                let dur = if it.ph == b'X' { it.dur } else { 0 };
                (it.ts, class, Reverse(dur))
            });
        } else {
            items.sort_by_key(|it| it.ts);
        }
        let machine = self.machine;
        let clock = sink.builtin_clock(machine, ir::clocks::TRACE_FILE);
        let mut first_names: HashMap<(Option<i64>, u64), StrId> = HashMap::new();
        for item in items {
            let data = match item.data {
                Pending::Ready(data) => data,
                Pending::Async {
                    phase,
                    local_pid,
                    pid,
                    cookie,
                    raw_name,
                    mut slice,
                } => {
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
            sink.push(item.ts, clock, data);
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
mod tests {
    use super::*;
    use crate::ir::{ClockDomain, DecodedEvent};

    fn ctx() -> FileContext {
        FileContext::new(0, 0)
    }

    fn run(json: &str) -> (Sink, Result<(), ParseError>) {
        let mut sink = Sink::new();
        let r = parse(json.as_bytes(), &mut sink, &ctx());
        (sink, r)
    }

    fn ok(json: &str) -> Sink {
        let (sink, r) = run(json);
        assert_eq!(r, Ok(()), "parse failed for {json}");
        sink
    }

    fn s(sink: &Sink, id: StrId) -> String {
        sink.strings.get(id).unwrap_or("NULL").to_string()
    }

    fn stat(sink: &Sink, name: &str) -> i64 {
        sink.stat_total(name)
    }

    /// Slice-like events as "<kind> <ts> <name> [dur]" (Thread/name events omitted).
    fn slices(sink: &Sink) -> Vec<String> {
        sink.decoded()
            .iter()
            .filter_map(|e: &DecodedEvent| match e.data {
                EventData::Begin(sl) => Some(format!("B {} {}", e.ts, s(sink, sl.name))),
                EventData::End(sl) => Some(format!("E {} {}", e.ts, s(sink, sl.name))),
                EventData::Complete { slice, dur, .. } => {
                    Some(format!("X {} {} {}", e.ts, s(sink, slice.name), dur))
                }
                _ => None,
            })
            .collect()
    }

    fn slice_events(sink: &Sink) -> Vec<(i64, SliceEvent)> {
        sink.decoded()
            .iter()
            .filter_map(|e| match e.data {
                EventData::Begin(sl) | EventData::End(sl) => Some((e.ts, sl)),
                EventData::Complete { slice, .. } => Some((e.ts, slice)),
                _ => None,
            })
            .collect()
    }

    fn args(sink: &Sink, id: ArgsRef) -> Vec<(String, String, ArgValue)> {
        sink.args
            .get(id)
            .iter()
            .map(|a| (s(sink, a.flat_key), s(sink, a.key), a.value))
            .collect()
    }

    #[test]
    fn us_to_ns_conversion() {
        let sink = ok(r#"[
            {"ph":"X","pid":1,"tid":1,"ts":2000.5,"dur":1,"name":"a"},
            {"ph":"X","pid":1,"tid":1,"ts":5.1,"dur":500.1,"name":"b"},
            {"ph":"X","pid":1,"tid":1,"ts":"100","dur":"200.5","name":"c"},
            {"ph":"X","pid":1,"tid":1,"ts":1850244461563845.0,"dur":167,"name":"d"},
            {"ph":"X","pid":1,"tid":1,"ts":-0.0005,"dur":0,"name":"e"},
            {"ph":"X","pid":1,"tid":1,"ts":"100a","dur":1,"name":"bad1"},
            {"ph":"X","pid":1,"tid":1,"ts":"+1","dur":1,"name":"bad2"},
            {"ph":"X","pid":1,"tid":1,"ts":"01","dur":1,"name":"bad3"},
            {"ph":"X","pid":1,"tid":1,"ts":1e300,"dur":1,"name":"bad4"},
            {"ph":"B","pid":1,"tid":1,"name":"bad5"}
        ]"#);
        assert_eq!(
            slices(&sink),
            vec![
                "X -1 e 0",
                "X 5100 b 500100",
                "X 100000 c 200500",
                "X 2000500 a 1000",
                "X 1850244461563845000 d 167000",
            ]
        );
        assert_eq!(stat(&sink, "json_tokenizer_failure"), 5);
        // Everything is on the file's private clock.
        let clock = sink.decoded()[0].clock;
        assert_eq!(
            *sink.clocks.get(clock as u32),
            ClockDomain {
                machine: 0,
                clock_id: ir::clocks::TRACE_FILE,
                sequence: 0,
                file: 0
            }
        );
    }

    #[test]
    fn ts_conversion_edges() {
        assert_eq!(us_to_ns(&JVal::Int(i64::MAX)), None);
        assert_eq!(us_to_ns(&JVal::Real(f64::INFINITY)), None);
        assert_eq!(us_to_ns(&JVal::Real(-1.0005)), Some(-1001)); // half away from zero
        assert_eq!(us_to_ns(&JVal::Real(0.0015)), Some(2));
        assert_eq!(us_to_ns(&JVal::Str("1e3".into())), Some(1_000_000));
        assert_eq!(us_to_ns(&JVal::Str("".into())), None);
        assert_eq!(us_to_ns(&JVal::Bool(true)), None);
    }

    #[test]
    fn tie_order_without_x_is_file_order() {
        let sink = ok(r#"[
            {"ph":"B","pid":1,"tid":1,"ts":1,"name":"a"},
            {"ph":"E","pid":1,"tid":1,"ts":1},
            {"ph":"B","pid":1,"tid":1,"ts":0,"name":"z"}
        ]"#);
        assert_eq!(slices(&sink), vec!["B 0 z", "B 1000 a", "E 1000 NULL"]);
    }

    #[test]
    fn tie_order_with_x() {
        let sink = ok(r#"[
            {"ph":"B","pid":1,"tid":1,"ts":1,"name":"b"},
            {"ph":"X","pid":1,"tid":1,"ts":1,"dur":5,"name":"short"},
            {"ph":"i","pid":1,"tid":1,"ts":1,"name":"inst"},
            {"ph":"X","pid":1,"tid":1,"ts":1,"dur":10,"name":"long"},
            {"ph":"X","pid":1,"tid":1,"ts":1,"dur":5,"name":"short2"},
            {"ph":"E","pid":1,"tid":1,"ts":1,"name":"e"},
            {"ph":"X","pid":1,"tid":1,"ts":0,"dur":1,"name":"first"}
        ]"#);
        assert_eq!(
            slices(&sink),
            vec![
                "X 0 first 1000",
                "E 1000 e",
                "X 1000 long 10000",
                "X 1000 short 5000",
                "X 1000 short2 5000",
                "B 1000 b",
                "X 1000 inst 0",
            ]
        );
        // The x_event_order case: tid defaults to pid, longer X first.
        let sink = ok(r#"[
          {"name":"Child","ph":"X","ts":1,"dur":5,"pid":1},
          {"name":"Parent","ph":"X","ts":1,"dur":10,"pid":1,"tid":1}
        ]"#);
        assert_eq!(
            slices(&sink),
            vec!["X 1000 Parent 10000", "X 1000 Child 5000"]
        );
        let tracks: Vec<_> = slice_events(&sink).iter().map(|(_, e)| e.track).collect();
        assert_eq!(tracks[0], tracks[1]);
    }

    #[test]
    fn bare_array_missing_bracket_keeps_complete_events() {
        let sink = ok("[\n{\"name\":\"a\",\"ph\":\"X\",\"ts\":4619295550.000,\"dur\":8000.000,\"pid\":1,\"tid\":3},\n");
        assert_eq!(slices(&sink), vec!["X 4619295550000 a 8000000"]);
        let sink =
            ok(r#"[{"name":"a","ph":"X","ts":1,"dur":1,"pid":1},{"name":"b","ph":"X","ts":2,"du"#);
        assert_eq!(slices(&sink), vec!["X 1000 a 1000"]);
        let sink = ok(r#"[{"name":"a","ph":"X","ts":1,"dur":1,"pid":1}"#);
        assert_eq!(slices(&sink), vec!["X 1000 a 1000"]);
        let sink = ok("[");
        assert!(sink.decoded().is_empty());
        // A syntax error (not a truncation) is fatal even in a bare array.
        assert!(run(r#"[{"name":"a","ph":"X","ts":1,"dur":1,"pid":1} {"#)
            .1
            .is_err());
        assert!(run(r#"[{"ph":"X","ts":1,,}]"#).1.is_err());
    }

    #[test]
    fn truncated_object_is_an_error() {
        let (_, r) = run(r#"{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1}"#);
        assert!(matches!(r, Err(ParseError::Truncated(_))), "{r:?}");
        let (_, r) = run(r#"{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1}]"#);
        assert!(matches!(r, Err(ParseError::Truncated(_))), "{r:?}");
        let (_, r) = run(r#"{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1}],"#);
        assert!(matches!(r, Err(ParseError::Truncated(_))), "{r:?}");
        let sink = ok(r#"{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1}]}"#);
        assert_eq!(slices(&sink).len(), 1);
    }

    #[test]
    fn shape_errors() {
        assert!(run(r#"{"traceEvents":{}}"#).1.is_err());
        assert!(run(r#"{"traceEvents":[], "systemTraceEvents": {}}"#)
            .1
            .is_err());
        assert!(run(r#"[1]"#).1.is_err());
        assert!(run(r#"["x"]"#).1.is_err());
        assert!(run("").1.is_err());
        assert!(run("hello").1.is_err());
        let mut bad = br#"[{"ph":"X","ts":1,"dur":1,"pid":1,"name":""#.to_vec();
        bad.extend_from_slice(b"\xff\xfe\"}]");
        let mut sink = Sink::new();
        let r = parse(&bad, &mut sink, &ctx());
        assert!(
            matches!(&r, Err(ParseError::Invalid(m)) if m.contains("UTF-8")),
            "{r:?}"
        );
    }

    #[test]
    fn tolerant_syntax() {
        // Trailing commas (array, event, args), raw newline in a string, `{}` skipped.
        let sink = ok("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n\
            {\"name\":\"Foo\",\"ph\":\"X\",\"tid\":0,\"ts\":3473608.458,\"dur\":295555.500,\"args\":{\"raw\":\"a\nb\",},},\n\
            {},\n\
            ]}");
        assert_eq!(slices(&sink), vec!["X 3473608458 Foo 295555500"]);
        assert_eq!(stat(&sink, "json_tokenizer_failure"), 0);
        assert_eq!(stat(&sink, "json_display_time_unit"), 1);
        let (_, sl) = slice_events(&sink)[0];
        let a = args(&sink, sl.args);
        assert_eq!(a.len(), 1);
        assert_eq!((a[0].0.as_str(), a[0].1.as_str()), ("args.raw", "args.raw"));
        let ArgValue::Str(v) = a[0].2 else {
            panic!("{a:?}")
        };
        assert_eq!(s(&sink, v), "a\nb");
    }

    #[test]
    fn missing_ph_and_unknown_phase() {
        let sink = ok(r#"[{"ts":1,"pid":1},{"ph":"Q","ts":1,"pid":2,"tid":3},{"ph":"","ts":1}]"#);
        assert_eq!(stat(&sink, "json_tokenizer_failure"), 2);
        let threads: Vec<_> = sink
            .decoded()
            .iter()
            .filter_map(|e| match e.data {
                EventData::Thread(t) => Some((t.tid, t.pid)),
                _ => None,
            })
            .collect();
        assert_eq!(threads, vec![(3, Some(2))]);
    }

    #[test]
    fn string_pid_tid() {
        let sink = ok(
            r#"{"traceEvents":[{"pid":"foo","tid":"bar","ts":5.1,"dur":500.1,"name":"name.exec","ph":"XXX","cat":"aaa"},
                                         {"pid":"foo","ts":7,"dur":1,"name":"other","ph":"X"}]}"#,
        );
        let mut procs = vec![];
        let mut threads = vec![];
        for e in &sink.decoded() {
            match e.data {
                EventData::Process(ref p) => {
                    procs.push((p.process.pid, s(&sink, p.name), p.from_system))
                }
                EventData::ThreadName { thread, name, .. } => {
                    threads.push((thread.tid, thread.pid, s(&sink, name)))
                }
                _ => {}
            }
        }
        let foo = STRING_ID_BASE;
        let bar = STRING_ID_BASE + 1;
        assert_eq!(
            procs,
            vec![(foo, "foo".into(), true), (foo, "foo".into(), true)]
        );
        assert_eq!(threads, vec![(bar, Some(foo), "bar".into())]);
        let evs = slice_events(&sink);
        assert_eq!(
            *sink.tracks.get(evs[0].1.track),
            TrackKey::ThreadOverlap(ThreadRef {
                machine: 0,
                tid: bar,
                pid: Some(foo)
            })
        );
        // No tid → tid = pid.
        assert_eq!(
            *sink.tracks.get(evs[1].1.track),
            TrackKey::ThreadOverlap(ThreadRef {
                machine: 0,
                tid: foo,
                pid: Some(foo)
            })
        );
    }

    #[test]
    fn pid_tid_coercion() {
        let sink = ok(r#"[
            {"ph":"X","ts":1,"dur":1,"name":"a","pid":5.9,"tid":-3},
            {"ph":"X","ts":2,"dur":1,"name":"b","pid":4294967296,"tid":4294967295},
            {"ph":"X","ts":3,"dur":1,"name":"c"},
            {"ph":"X","ts":4,"dur":1,"name":"d","pid":7,"tid":0}
        ]"#);
        let refs: Vec<_> = slice_events(&sink)
            .iter()
            .map(|(_, e)| match sink.tracks.get(e.track) {
                // X goes on the thread's track, spilling to overlap lanes if it must.
                TrackKey::ThreadOverlap(t) => (t.tid, t.pid),
                k => panic!("{k:?}"),
            })
            .collect();
        assert_eq!(
            refs,
            vec![
                (5, Some(5)),
                (4294967295, Some(0)),
                (0, Some(0)),
                (7, Some(7))
            ]
        );
    }

    #[test]
    fn counters() {
        let sink = ok(r#"[
            {"ph":"C","pid":7,"tid":7,"ts":1000,"name":"Heap","args":{"used":10,"total":64.5}},
            {"ph":"C","pid":30,"tid":31,"ts":800,"name":"MyCounters","id":"g1","args":{"f":100.5,"s":"25.7"}},
            {"ph":"C","pid":30,"ts":801,"name":"N","id":5,"args":{"a":1}},
            {"ph":"C","pid":300,"ts":3000,"name":"E","args":{"leading_dot":".75","trailing_dot":"246.","plus":"+10.5",
               "lz":"050","incomplete_exp":"1.5e","exp_no_digit":"2e+","just_dot":".","just_plus":"+","just_minus":"-","b":true}},
            {"ph":"C","pid":1,"ts":1,"name":"NoArgs"}
        ]"#);
        let got: Vec<_> = sink
            .decoded()
            .iter()
            .filter_map(|e| match e.data {
                EventData::Counter { track, value, .. } => match sink.tracks.get(track) {
                    TrackKey::ProcessCounter {
                        process,
                        name,
                        kind,
                    } => {
                        assert_eq!(*kind, "json_counter");
                        Some((e.ts, process.pid, s(&sink, *name), value.0))
                    }
                    k => panic!("{k:?}"),
                },
                _ => None,
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (800_000, 30, "MyCounters id: g1 f".to_string(), 100.5),
                (800_000, 30, "MyCounters id: g1 s".to_string(), 25.7),
                (801_000, 30, "N a".to_string(), 1.0),
                (1_000_000, 7, "Heap used".to_string(), 10.0),
                (1_000_000, 7, "Heap total".to_string(), 64.5),
                (3_000_000, 300, "E leading_dot".to_string(), 0.75),
                (3_000_000, 300, "E trailing_dot".to_string(), 246.0),
                (3_000_000, 300, "E plus".to_string(), 10.5),
                (3_000_000, 300, "E lz".to_string(), 50.0),
            ]
        );
        // 6 bad values + the missing args.
        assert_eq!(stat(&sink, "json_parser_failure"), 7);
    }

    #[test]
    fn args_keys() {
        let sink = ok(r#"[{"ph":"B","pid":1,"tid":1,"ts":1,"name":"a","args":{
            "i":-5,"r":45.67,"s":"x","b":true,"n":null,"e":{},"ea":[],
            "d":{"x":{"y":1}},"arr":[1,[2,3],{"k":"v"}],"big":18446744073709551615,"i":6
        }}]"#);
        let (_, sl) = slice_events(&sink)[0];
        let got: Vec<_> = args(&sink, sl.args)
            .into_iter()
            .map(|(f, k, v)| {
                let v = match v {
                    ArgValue::Str(id) => format!("str {}", s(&sink, id)),
                    v => format!("{v:?}"),
                };
                format!("{f} {k} {v}")
            })
            .collect();
        assert_eq!(
            got,
            vec![
                "args.i args.i Int(6)",
                "args.r args.r Real(45.67)",
                "args.s args.s str x",
                "args.b args.b Bool(true)",
                "args.d.x.y args.d.x.y Int(1)",
                "args.arr args.arr[0] Int(1)",
                "args.arr args.arr[1][0] Int(2)",
                "args.arr args.arr[1][1] Int(3)",
                "args.arr.k args.arr[2].k str v",
                "args.big args.big Uint(18446744073709551615)",
            ]
        );
        // No args / empty args → NO_ARGS.
        let sink = ok(
            r#"[{"ph":"B","pid":1,"tid":1,"ts":1,"args":{}},{"ph":"B","pid":1,"tid":1,"ts":2}]"#,
        );
        assert!(slice_events(&sink).iter().all(|(_, e)| e.args == NO_ARGS));
        assert!(slice_events(&sink)
            .iter()
            .all(|(_, e)| s(&sink, e.name) == NO_NAME));
    }

    #[test]
    fn begin_end_complete_fields() {
        let sink = ok(r#"[
            {"ph":"B","pid":10,"tid":11,"ts":100,"name":"Begin","cat":"cat1","tts":90},
            {"ph":"E","pid":10,"tid":11,"ts":200,"tts":190,"args":{"d":1.5}},
            {"ph":"X","pid":10,"tid":12,"ts":250,"dur":50,"name":"C","cat":"","tts":240,"tdur":40},
            {"ph":"X","pid":10,"tid":13,"ts":260,"name":"NoDur"}
        ]"#);
        let evs: Vec<_> = sink.decoded().into_iter().map(|e| e.data).collect();
        let EventData::Begin(b) = evs[0] else {
            panic!("{evs:?}")
        };
        assert_eq!(
            (s(&sink, b.category).as_str(), b.thread_ts),
            ("cat1", 90_000)
        );
        let EventData::End(e) = evs[1] else {
            panic!("{evs:?}")
        };
        assert_eq!(
            (e.name, e.category, e.thread_ts),
            (NULL_STR, NULL_STR, 190_000)
        );
        assert_ne!(e.args, NO_ARGS);
        let EventData::Complete {
            slice,
            dur,
            thread_dur,
        } = evs[2]
        else {
            panic!("{evs:?}")
        };
        assert_eq!(
            (slice.category, slice.thread_ts, dur, thread_dur),
            (NULL_STR, 240_000, 50_000, 40_000)
        );
        // X without dur: thread only + json_parser_failure.
        assert!(matches!(
            evs[3],
            EventData::Thread(ThreadRef {
                tid: 13,
                pid: Some(10),
                ..
            })
        ));
        assert_eq!(evs.len(), 4);
        assert_eq!(stat(&sink, "json_parser_failure"), 1);
    }

    #[test]
    fn bad_dur_stops_tokenizing() {
        let sink = ok(r#"[
            {"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":"a"},
            {"ph":"X","pid":1,"tid":1,"ts":2,"dur":"zz","name":"b"},
            {"ph":"X","pid":1,"tid":1,"ts":3,"dur":1,"name":"c"}
        ]"#);
        assert_eq!(slices(&sink), vec!["X 1000 a 1000"]);
        assert_eq!(stat(&sink, "json_tokenizer_failure"), 1);
        let (_, r) =
            run(r#"{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":2,"tts":{},"name":"b"}]}"#);
        assert!(r.is_err());
    }

    #[test]
    fn instants() {
        let sink = ok(r#"[
            {"ph":"I","pid":10,"tid":11,"ts":300,"name":"G","s":"g"},
            {"ph":"I","pid":10,"tid":0,"ts":310,"s":"p"},
            {"ph":"I","pid":10,"tid":11,"ts":320,"s":"t"},
            {"ph":"i","pid":10,"ts":330,"name":"NoTid"},
            {"ph":"R","ts":340,"s":"p","name":"NoPid"},
            {"ph":"i","pid":10,"tid":10,"ts":350,"name":"Explicit"}
        ]"#);
        let got: Vec<_> = slice_events(&sink)
            .iter()
            .map(|(ts, e)| (*ts, s(&sink, e.name), *sink.tracks.get(e.track)))
            .collect();
        let th = |tid| {
            TrackKey::ThreadSlices(ThreadRef {
                machine: 0,
                tid,
                pid: Some(10),
            })
        };
        assert_eq!(
            got,
            vec![
                (
                    300_000,
                    "G".into(),
                    TrackKey::GlobalSlices {
                        machine: 0,
                        kind: "legacy_chrome_global_instants",
                        name: NULL_STR
                    }
                ),
                (
                    310_000,
                    "NULL".into(),
                    TrackKey::ProcessSlices {
                        process: ProcessRef {
                            machine: 0,
                            pid: 10
                        },
                        kind: "chrome_process_instant",
                        name: NULL_STR
                    }
                ),
                (320_000, NO_NAME.into(), th(11)),
                (350_000, "Explicit".into(), th(10)),
            ]
        );
        assert_eq!(stat(&sink, "json_parser_failure"), 2);
    }

    #[test]
    fn async_tracks() {
        let sink = ok(r#"[
            {"ph":"b","pid":1,"tid":2,"ts":2,"name":"Second","cat":"c","id":"0x1"},
            {"ph":"b","pid":1,"tid":2,"ts":1,"name":"First","cat":"c","id":"0x1"},
            {"ph":"e","pid":1,"tid":2,"ts":3,"cat":"c","id":"0x1"},
            {"ph":"n","pid":1,"tid":2,"ts":4,"cat":"c","id":1},
            {"ph":"b","pid":5,"tid":2,"ts":5,"name":"L","cat":"c","id2":{"local":"0x1"}},
            {"ph":"b","pid":5,"tid":2,"ts":6,"name":"G","cat":"c","id2":{"global":"0x1"}},
            {"ph":"b","pid":5,"tid":2,"ts":7,"name":"Bad","cat":"c","id2":{"":"x"}},
            {"ph":"b","tid":2,"ts":8,"name":"NoPid","cat":"c","id":"5"}
        ]"#);
        let got: Vec<_> = slice_events(&sink)
            .iter()
            .map(|(ts, e)| match sink.tracks.get(e.track) {
                TrackKey::AsyncCookie { set, cookie } => (
                    *ts / 1000,
                    s(&sink, e.name),
                    set.kind,
                    set.process.map(|p| p.pid),
                    s(&sink, set.name),
                    *cookie,
                ),
                k => panic!("{k:?}"),
            })
            .collect();
        assert_eq!(got.len(), 6);
        // Track named after the cookie's first event in ts order.
        assert_eq!(got[0].1, "First");
        assert_eq!(got[0].4, "First");
        assert_eq!(got[1].4, "First");
        assert_eq!(got[2].1, "NULL");
        assert_eq!(got[0].5, got[2].5);
        // "0x1" and 1 differ.
        assert_ne!(got[0].5, got[3].5);
        assert_eq!(got[3].4, "NULL");
        assert_eq!(got[4].2, "legacy_async_process_slice");
        assert_eq!(got[4].3, Some(5));
        assert_eq!(got[5].2, "legacy_async_global_slice");
        assert_eq!(got[5].3, None);
        // id2.global "0x1" shares the cookie of id "0x1" (same cat); its track name stays.
        assert_eq!(got[5].4, "First");
        assert_eq!(stat(&sink, "json_parser_failure"), 2);
    }

    #[test]
    fn metadata_events() {
        let sink = ok(r#"[
            {"ph":"M","pid":100,"name":"process_name","args":{"name":"MissingTs"}},
            {"ph":"M","pid":101,"ts":null,"name":"process_name","args":{"name":"NullTs"}},
            {"ph":"M","pid":102,"ts":"invalid","name":"process_name","args":{"name":"InvalidTs"}},
            {"ph":"M","pid":30,"tid":31,"ts":5,"name":"thread_name","args":{"name":"T"}},
            {"ph":"M","pid":30,"tid":0,"ts":5,"name":"process_sort_index","args":{"sort_index":-2}},
            {"ph":"M","pid":30,"tid":31,"ts":5,"name":"thread_sort_index","args":{"sort_index":5}},
            {"ph":"M","pid":30,"ts":5,"name":"process_name","args":{"name":""}}
        ]"#);
        let mut got = vec![];
        for e in &sink.decoded() {
            match e.data {
                EventData::Process(ref p) => {
                    got.push(format!("P {} {} {}", e.ts, p.process.pid, s(&sink, p.name)))
                }
                EventData::ThreadName {
                    thread,
                    name,
                    priority,
                } => {
                    assert_eq!(priority, NamePriority::Other);
                    got.push(format!(
                        "T {} {} {}",
                        thread.tid,
                        thread.pid.unwrap_or(-1),
                        s(&sink, name)
                    ))
                }
                EventData::ProcessArg {
                    process,
                    key,
                    value,
                } => got.push(format!("PA {} {} {}", process.pid, s(&sink, key), value)),
                EventData::ThreadArg { thread, key, value } => {
                    got.push(format!("TA {} {} {}", thread.tid, s(&sink, key), value))
                }
                EventData::Thread(_) => {}
                ref d => panic!("{d:?}"),
            }
        }
        assert_eq!(
            got,
            vec![
                "P 0 100 MissingTs",
                "P 0 101 NullTs",
                "P 0 102 InvalidTs",
                "T 31 30 T",
                "PA 30 process_sort_index_hint -2",
                "TA 31 thread_sort_index_hint 5",
            ]
        );
        assert_eq!(stat(&sink, "json_parser_failure"), 1);
        assert_eq!(stat(&sink, "json_tokenizer_failure"), 0);
    }

    #[test]
    fn trace_metadata() {
        let sink = ok(
            r#"{"metadata":{"source":"DevTools","cpuThrottling":1,"x":1.5,"y":2.0,
            "t":true,"n":null,"o":{"a": [1, 2]},"big":1e20},"traceEvents":[]}"#,
        );
        let got: Vec<_> = sink
            .metadata
            .iter()
            .map(|(n, _, _, v)| (n.as_str(), v.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("json_metadata.source", MetaValue::Str("DevTools".into())),
                ("json_metadata.cpuThrottling", MetaValue::Int(1)),
                ("json_metadata.x", MetaValue::Str("1.5".into())),
                ("json_metadata.y", MetaValue::Int(2)),
                ("json_metadata.t", MetaValue::Int(1)),
                ("json_metadata.o", MetaValue::Str(r#"{"a": [1, 2]}"#.into())),
                ("json_metadata.big", MetaValue::Str("1e+20".into())),
            ]
        );
    }

    #[test]
    fn flows() {
        let sink = ok(r#"[
            {"ph":"X","pid":1,"tid":1,"ts":1,"dur":10,"name":"A","bind_id":"0x402","flow_out":true},
            {"ph":"X","pid":1,"tid":1,"ts":2,"dur":1,"name":"B","bind_id":1026,"flow_in":true,"flow_out":false},
            {"ph":"B","pid":1,"tid":1,"ts":3,"name":"C","bind_id":"402","flow_in":true,"flow_out":true},
            {"ph":"X","pid":1,"tid":1,"ts":4,"dur":1,"name":"D","bind_id":"0x402"},
            {"ph":"X","pid":1,"tid":1,"ts":5,"dur":1,"name":"E","bind_id":"zz","flow_in":true},
            {"ph":"s","pid":1,"tid":1,"ts":6,"name":"f","cat":"c","id":"0xA"},
            {"ph":"t","pid":1,"tid":1,"ts":7,"name":"f","cat":"c","id":10},
            {"ph":"f","pid":1,"tid":1,"ts":8,"name":"f","cat":"c","id":"a","bp":"e"},
            {"ph":"f","pid":1,"tid":1,"ts":9,"id":"nothex"}
        ]"#);
        let ops: Vec<_> = slice_events(&sink)
            .iter()
            .map(|(_, e)| sink.flow_ops(e.flows).to_vec())
            .collect();
        assert_eq!(
            ops,
            vec![
                vec![FlowOp::V2Out(0x402)],
                vec![FlowOp::V2In(0x402)],
                vec![FlowOp::V2Step(0x402)],
                vec![],
                vec![],
            ]
        );
        assert_eq!(stat(&sink, "flow_without_direction"), 1);
        assert_eq!(stat(&sink, "flow_invalid_id"), 2);
        let v1: Vec<_> = sink
            .decoded()
            .iter()
            .filter_map(|e| match e.data {
                EventData::FlowV1(f) => Some((f.id, f.phase, f.bind_enclosing, s(&sink, f.name))),
                _ => None,
            })
            .collect();
        assert_eq!(
            v1,
            vec![
                (10, FlowV1Phase::Start, false, "f".into()),
                (10, FlowV1Phase::Step, false, "f".into()),
                (10, FlowV1Phase::End, true, "f".into()),
            ]
        );
    }

    #[test]
    fn every_event_makes_its_thread() {
        let sink = ok(r#"[
            {"ph":"C","pid":7,"tid":8,"ts":1,"name":"c","args":{"v":1}},
            {"ph":"T","pid":7,"tid":9,"ts":2,"dur":1,"name":"S"},
            {"ph":"X","pid":7,"tid":10,"ts":3,"dur":1,"name":"x"}
        ]"#);
        let threads: Vec<_> = sink
            .decoded()
            .iter()
            .filter_map(|e| match e.data {
                EventData::Thread(t) => Some(t.tid),
                EventData::ThreadState(ref st) => Some(st.thread.tid),
                _ => None,
            })
            .collect();
        // X names its thread through its track instead.
        assert_eq!(threads, vec![8, 9]);
    }

    #[test]
    fn thread_state_events() {
        let sink = ok(r#"[
            {"ph":"T","pid":1,"tid":2,"ts":1,"dur":5,"name":"Running","args":{"cpu":3}},
            {"ph":"T","pid":1,"tid":2,"ts":6,"dur":2,"name":"D",
             "args":{"io_wait":1,"blocked_function":"f","cpu":1}},
            {"ph":"T","pid":1,"tid":2,"ts":8,"dur":1,"name":"Running","args":{"cpu":1.5}},
            {"ph":"T","pid":1,"tid":2,"ts":9,"name":"S"}
        ]"#);
        let states: Vec<_> = sink
            .decoded()
            .iter()
            .filter_map(|e| match e.data {
                EventData::ThreadState(ref st) => Some((
                    e.ts,
                    st.dur,
                    s(&sink, st.state),
                    st.io_wait,
                    s(&sink, st.blocked_function),
                    st.running_cpu,
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            states,
            vec![
                (1000, 5000, "Running".into(), None, "NULL".into(), Some(3)),
                (6000, 2000, "D".into(), Some(true), "f".into(), None),
                (8000, 1000, "Running".into(), None, "NULL".into(), None),
            ]
        );
        // No dur: a parser failure (the thread is still made).
        assert_eq!(stat(&sink, "json_parser_failure"), 1);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!(
            r#"[{{"ph":"X","ts":1,"dur":1,"args":{}1{}}}]"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(run(&deep).1.is_err());
        let deep_obj = format!(
            r#"{{"other":{}1{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(run(&deep_obj).1.is_err());
    }

    #[test]
    fn no_panic_on_any_prefix_or_mutation() {
        let trace = r#"{"metadata":{"a":[1,{"b":2.5e3}],"c":"\u00e9\ud83d\ude00"},"displayTimeUnit":"ns","traceEvents":[
            {"ph":"M","pid":"p","tid":"t","name":"thread_name","args":{"name":"x\"y"}},
            {"ph":"X","pid":1,"tid":2,"ts":1.5,"dur":"2","name":"n","cat":"c","args":{"a":[1,-2.5e-3,true,null,{}]},"bind_id":"0x1","flow_out":true},
            {"ph":"b","pid":1,"ts":3,"id2":{"local":7},"name":"a"},
            {"ph":"C","pid":1,"ts":3,"id":"q","name":"a","args":{"v":"1.5"}},
            {"ph":"s","pid":1,"ts":3,"id":"0x12","name":"a"},
        ]}"#;
        let bytes = trace.as_bytes();
        for end in 0..=bytes.len() {
            let mut sink = Sink::new();
            let _ = parse(&bytes[..end], &mut sink, &ctx());
        }
        for i in 0..bytes.len() {
            for b in [
                b'{', b'}', b'[', b']', b'"', b',', b':', b'\\', b'0', b'-', 0xff, b'e',
            ] {
                let mut m = bytes.to_vec();
                m[i] = b;
                let mut sink = Sink::new();
                let _ = parse(&m, &mut sink, &ctx());
            }
        }
        let sink = ok(trace);
        assert_eq!(slices(&sink).len(), 2);
    }

    #[test]
    fn string_escapes() {
        let mut lx = Lexer::new(br#""a\n\t\"\\\/\u00e9\ud83d\ude00\ud800x""#);
        assert_eq!(
            lx.value(0),
            Ok(JVal::Str("a\n\t\"\\/é😀\u{FFFD}x".to_string().into()))
        );
        let mut lx = Lexer::new(br#""\q""#);
        assert!(matches!(lx.value(0), Err(JErr::Syntax(_))));
    }

    #[test]
    fn percent_g() {
        assert_eq!(format_g(1.5), "1.5");
        assert_eq!(format_g(0.1), "0.1");
        assert_eq!(format_g(1234567.0), "1.23457e+06");
        assert_eq!(format_g(123456.7), "123457");
        assert_eq!(format_g(0.0001), "0.0001");
        assert_eq!(format_g(0.00001234), "1.234e-05");
        assert_eq!(format_g(-2.5), "-2.5");
        assert_eq!(format_g(1e100), "1e+100");
    }
}
