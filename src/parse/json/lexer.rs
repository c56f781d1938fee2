//! The tolerant JSON lexer: values borrow from the input unless they hold escapes; trailing
//! commas and raw control characters in strings are accepted, as the reference accepts them.
//! A lexer over a buffer that is not yet the whole input reports the end of the buffer as
//! [`JErr::Eof`] wherever a value might go on, so the caller can read more and try again.

use std::borrow::Cow;

use super::MAX_DEPTH;

/// Why a JSON value could not be read.
#[derive(Debug, PartialEq)]
pub(super) enum JErr {
    /// The input ended inside the value.
    Eof,
    /// Malformed input (message includes the byte offset).
    Syntax(String),
}

pub(super) type JResult<T> = Result<T, JErr>;

/// A parsed JSON value; strings borrow from the input unless they contain escapes.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum JVal<'a> {
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
    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            JVal::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The last value of `key` in an object (later duplicates win).
    pub(super) fn get(&self, key: &str) -> Option<&JVal<'a>> {
        match self {
            JVal::Obj(entries) => entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

pub(super) struct Lexer<'a> {
    pub(super) b: &'a [u8],
    pub(super) pos: usize,
    /// The input offset of `b[0]`, for messages.
    pub(super) base: u64,
    /// `b` runs to the end of the input (else more may follow).
    pub(super) complete: bool,
}

/// Result of scanning a number: where it ends and whether it has a fraction or exponent.
#[derive(Debug, PartialEq)]
pub(super) enum NumScan {
    Ok {
        end: usize,
        float: bool,
    },
    /// The input ended inside the number (`-`, `1.`, `1e`).
    Eof,
    Bad,
}

/// Scans a strict JSON number starting at `start`.
pub(super) fn scan_number(b: &[u8], start: usize) -> NumScan {
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

/// Exact powers of ten (every one up to 10^22 is a double).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The value of a valid JSON number without an exponent and with at most 15 significant
/// digits, computed exactly: its digits make an integer `m` below 2^53 and it is `m / 10^k`
/// with `k` at most 22, both exact doubles, so the one rounding (the division's) gives the
/// nearest double, as parsing the text does. `None` for any other number.
fn short_number(text: &[u8], float: bool) -> Option<JVal<'static>> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut m: u64 = 0;
    let mut significant = 0usize;
    let mut fraction: Option<usize> = None;
    for &c in digits {
        match c {
            b'0'..=b'9' => {
                if m > 0 || c != b'0' {
                    significant += 1;
                }
                m = m * 10 + u64::from(c - b'0');
                if let Some(k) = fraction.as_mut() {
                    *k += 1;
                }
                if significant > 15 {
                    return None;
                }
            }
            b'.' => fraction = Some(0),
            _ => return None,
        }
    }
    if !float {
        let v = m as i64;
        return Some(JVal::Int(if negative { -v } else { v }));
    }
    let k = fraction?;
    let v = m as f64 / *POW10.get(k)?;
    Some(JVal::Real(if negative { -v } else { v }))
}

/// Converts the text of a valid JSON number into a value.
pub(super) fn number_value(text: &str, float: bool) -> JVal<'static> {
    if let Some(v) = short_number(text.as_bytes(), float) {
        return v;
    }
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
pub(super) fn strict_number(s: &str) -> Option<JVal<'static>> {
    match scan_number(s.as_bytes(), 0) {
        NumScan::Ok { end, float } if end == s.len() => Some(number_value(s, float)),
        _ => None,
    }
}

impl<'a> Lexer<'a> {
    /// A lexer over the whole input.
    #[cfg(test)]
    pub(super) fn new(b: &'a [u8]) -> Self {
        Self {
            b,
            pos: 0,
            base: 0,
            complete: true,
        }
    }

    /// The next non-blank byte, not consumed; None at the end of the input. The end of a
    /// buffer that is not the whole input is [`JErr::Eof`]: more may follow.
    pub(super) fn next_byte(&mut self) -> JResult<Option<u8>> {
        match self.peek() {
            None if !self.complete => Err(JErr::Eof),
            b => Ok(b),
        }
    }

    pub(super) fn skip_ws(&mut self) {
        while let Some(&c) = self.b.get(self.pos) {
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    /// Next non-blank byte, not consumed.
    pub(super) fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.b.get(self.pos).copied()
    }

    pub(super) fn syntax(&self, what: &str) -> JErr {
        JErr::Syntax(format!("invalid JSON: {what} at byte {}", self.offset()))
    }

    /// The input offset of the lexer's position.
    pub(super) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    pub(super) fn expect_colon(&mut self) -> JResult<()> {
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                Ok(())
            }
            None => Err(JErr::Eof),
            Some(_) => Err(self.syntax("expected ':'")),
        }
    }

    pub(super) fn literal<T>(&mut self, word: &[u8], v: T) -> JResult<T> {
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

    pub(super) fn number(&mut self) -> JResult<JVal<'a>> {
        if let Some(v) = self.short_number() {
            return Ok(v);
        }
        match scan_number(self.b, self.pos) {
            // A number running to the end of the buffer may go on in the next one.
            NumScan::Ok { end, .. } if end == self.b.len() && !self.complete => Err(JErr::Eof),
            NumScan::Ok { end, float } => {
                let bytes = &self.b[self.pos..end];
                self.pos = end;
                if let Some(v) = short_number(bytes, float) {
                    return Ok(v);
                }
                // The scanned bytes are ASCII.
                let text = std::str::from_utf8(bytes).unwrap_or("0");
                Ok(number_value(text, float))
            }
            NumScan::Eof => Err(JErr::Eof),
            NumScan::Bad => Err(self.syntax("malformed number")),
        }
    }

    /// A number read and computed in one pass when it is a strict JSON number with at
    /// most 15 significant digits, no exponent, and a known end (see [`short_number`] for
    /// why the value is exact); `None` (nothing consumed) for any other, which
    /// [`Lexer::number`] then reads the long way.
    fn short_number(&mut self) -> Option<JVal<'a>> {
        let b = self.b;
        let mut i = self.pos;
        let negative = b.get(i) == Some(&b'-');
        if negative {
            i += 1;
        }
        let first = i;
        let mut m: u64 = 0;
        let mut significant = 0u32;
        let mut digits = |i: &mut usize, m: &mut u64| -> Option<usize> {
            let start = *i;
            while let Some(&c) = b.get(*i) {
                if !c.is_ascii_digit() {
                    break;
                }
                if *m > 0 || c != b'0' {
                    significant += 1;
                    if significant > 15 {
                        return None;
                    }
                }
                *m = *m * 10 + u64::from(c - b'0');
                *i += 1;
            }
            Some(*i - start)
        };
        let int_digits = digits(&mut i, &mut m)?;
        // No digits, or a leading zero before more digits: the long way says what is wrong.
        if int_digits == 0 || (int_digits > 1 && b[first] == b'0') {
            return None;
        }
        let mut fraction = None;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let k = digits(&mut i, &mut m)?;
            if k == 0 {
                return None;
            }
            fraction = Some(k);
        }
        if matches!(b.get(i), Some(b'e' | b'E')) || (i == b.len() && !self.complete) {
            return None;
        }
        let v = match fraction {
            None => {
                let v = m as i64;
                JVal::Int(if negative { -v } else { v })
            }
            Some(k) => {
                let v = m as f64 / *POW10.get(k)?;
                JVal::Real(if negative { -v } else { v })
            }
        };
        self.pos = i;
        Some(v)
    }

    pub(super) fn hex4(&mut self) -> JResult<u32> {
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
    pub(super) fn string(&mut self) -> JResult<Cow<'a, str>> {
        self.pos += 1;
        let start = self.pos;
        // Up to the closing quote or the first escape.
        let rest = &self.b[start..];
        let run = rest
            .iter()
            .position(|&c| c == b'"' || c == b'\\')
            .unwrap_or(rest.len());
        self.pos += run;
        match rest.get(run) {
            None => return Err(JErr::Eof),
            Some(b'"') => {
                let raw = &rest[..run];
                self.pos += 1;
                if raw.is_ascii() {
                    // SAFETY: ASCII bytes are UTF-8.
                    return Ok(Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(raw) }));
                }
                return std::str::from_utf8(raw).map(Cow::Borrowed).map_err(|_| {
                    JErr::Syntax(format!(
                        "invalid UTF-8 in a string at byte {}",
                        self.base + start as u64
                    ))
                });
            }
            Some(_) => {}
        }
        // Slow path: the string has escapes.
        let mut buf: Vec<u8> = self.b[start..self.pos].to_vec();
        loop {
            match self.b.get(self.pos) {
                None => return Err(JErr::Eof),
                Some(b'"') => {
                    self.pos += 1;
                    return String::from_utf8(buf).map(Cow::Owned).map_err(|_| {
                        JErr::Syntax(format!(
                            "invalid UTF-8 in a string at byte {}",
                            self.base + start as u64
                        ))
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
    pub(super) fn object<F>(&mut self, mut f: F) -> JResult<()>
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
    pub(super) fn array<F>(&mut self, mut f: F) -> JResult<()>
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

    pub(super) fn check_depth(&self, depth: u32) -> JResult<()> {
        if depth > MAX_DEPTH {
            Err(self.syntax("nesting too deep"))
        } else {
            Ok(())
        }
    }

    pub(super) fn value(&mut self, depth: u32) -> JResult<JVal<'a>> {
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
    pub(super) fn skip(&mut self, depth: u32) -> JResult<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The value the long way gives (scan, then the standard library's parsers).
    fn long_way(text: &str) -> Option<JVal<'static>> {
        match scan_number(text.as_bytes(), 0) {
            NumScan::Ok { end, float } if end == text.len() => {
                if !float {
                    if let Ok(v) = text.parse::<i64>() {
                        return Some(JVal::Int(v));
                    }
                    if let Ok(v) = text.parse::<u64>() {
                        return Some(JVal::UInt(v));
                    }
                }
                text.parse::<f64>().ok().map(JVal::Real)
            }
            _ => None,
        }
    }

    fn same(a: &JVal, b: &JVal) -> bool {
        match (a, b) {
            (JVal::Real(x), JVal::Real(y)) => x.to_bits() == y.to_bits(),
            _ => a == b,
        }
    }

    #[test]
    fn numbers_read_in_one_pass_equal_the_long_way() {
        let texts = [
            "0",
            "-0",
            "7",
            "-12",
            "123456789012345",
            "1234567890123456",
            "99999999999999999999",
            "0.5",
            "-0.0",
            "12.125",
            "1562.625",
            "0.1",
            "0.3",
            "2.675",
            "9007199254740993.0",
            "0.000000000000000000001",
            "0.0000000000000000000000001",
            "1e3",
            "1.5E-2",
            "123456.789012345",
            "3.14159265358979",
        ];
        for text in texts {
            let mut lx = Lexer::new(text.as_bytes());
            let got = lx.number().expect("a number");
            let want = long_way(text).expect("valid");
            assert!(same(&got, &want), "{text}: {got:?} != {want:?}");
            assert_eq!(lx.pos, text.len(), "{text}");
        }
    }

    #[test]
    fn a_number_at_the_end_of_a_partial_buffer_waits_for_more() {
        for text in ["12", "-3.5", "0"] {
            let mut lx = Lexer::new(text.as_bytes());
            lx.complete = false;
            assert_eq!(lx.number(), Err(JErr::Eof), "{text}");
            assert_eq!(lx.pos, 0);
        }
        let mut lx = Lexer::new(b"12,");
        lx.complete = false;
        assert_eq!(lx.number(), Ok(JVal::Int(12)));
    }

    #[test]
    fn bad_numbers_are_still_errors() {
        for text in ["01", "-", "1.", "1.e5", "-a"] {
            let mut lx = Lexer::new(text.as_bytes());
            assert!(lx.number().is_err(), "{text}");
        }
    }
}
