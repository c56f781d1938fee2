//! Field conversions: timestamps, ids, counter values and numbers as the reference formats
//! them.

use std::borrow::Cow;

use super::lexer::{strict_number, JVal};

/// µs (int, double, or a string holding a strict JSON number) → ns.
pub(super) fn us_to_ns(v: &JVal) -> Option<i64> {
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

pub(super) fn f64_us_to_ns(v: f64) -> Option<i64> {
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
pub(super) fn coerce_u32(v: &JVal) -> Option<i64> {
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
pub(super) fn flow_id(v: &JVal) -> Option<u64> {
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
pub(super) fn counter_string_value(s: &str) -> Option<f64> {
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
pub(super) fn format_g(v: f64) -> String {
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
pub(super) fn fnv1a(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The async id as the reference compares it: as a string (ints in decimal).
pub(super) fn id_string<'v>(v: &'v JVal) -> Option<Cow<'v, str>> {
    match v {
        JVal::Str(s) => Some(Cow::Borrowed(&**s)),
        JVal::Int(i) => Some(Cow::Owned(i.to_string())),
        JVal::UInt(u) => Some(Cow::Owned(u.to_string())),
        _ => None,
    }
}
