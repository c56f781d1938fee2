//! Scalar SQL functions Perfetto queries use that the bundled SQLite lacks: the math
//! functions of SQLite's `SQLITE_ENABLE_MATH_FUNCTIONS` (`sqrt`, `pow`, `ln`, `log`, `floor`,
//! …, with SQLite's rules: NULL in or a domain error gives NULL), `regexp` (so `x REGEXP
//! 'pattern'` works, Rust's regex syntax), Perfetto's `str_split(str, delimiter, index)` and
//! the duration conversions of the stdlib module `time.conversion` (`time_from_us(x)` is
//! `x * 1000`, `time_to_ms(ns)` is `ns / 1000000`, … with SQLite's arithmetic: integer in,
//! integer out, truncated).

use std::collections::HashMap;
use std::sync::Mutex;

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

/// A numeric argument (an integer, a real or a numeric text), or None.
fn number(ctx: &Context<'_>, i: usize) -> Option<f64> {
    match ctx.get_raw(i) {
        ValueRef::Integer(v) => Some(v as f64),
        ValueRef::Real(v) => Some(v),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}

fn real(v: f64) -> Value {
    if v.is_finite() {
        Value::Real(v)
    } else {
        Value::Null
    }
}

type Unary = fn(f64) -> f64;

/// SQLite's one-argument math functions.
const UNARY: &[(&str, Unary)] = &[
    ("sqrt", f64::sqrt),
    ("exp", f64::exp),
    ("ln", f64::ln),
    ("log10", f64::log10),
    ("log2", f64::log2),
    ("sin", f64::sin),
    ("cos", f64::cos),
    ("tan", f64::tan),
    ("asin", f64::asin),
    ("acos", f64::acos),
    ("atan", f64::atan),
    ("sinh", f64::sinh),
    ("cosh", f64::cosh),
    ("tanh", f64::tanh),
    ("asinh", f64::asinh),
    ("acosh", f64::acosh),
    ("atanh", f64::atanh),
    ("degrees", f64::to_degrees),
    ("radians", f64::to_radians),
];

/// `floor`, `ceil`/`ceiling`, `trunc`: an integer stays the integer, a real gives a real.
fn rounding(ctx: &Context<'_>, f: Unary) -> Value {
    match ctx.get_raw(0) {
        ValueRef::Integer(v) => Value::Integer(v),
        _ => number(ctx, 0).map_or(Value::Null, |v| real(f(v))),
    }
}

/// `time.conversion`'s functions: (name, nanoseconds per unit, from unit to ns).
const TIME_CONVERSIONS: &[(&str, i64, bool)] = &[
    ("time_from_ns", 1, true),
    ("time_from_us", 1_000, true),
    ("time_from_ms", 1_000_000, true),
    ("time_from_s", 1_000_000_000, true),
    ("time_from_min", 60_000_000_000, true),
    ("time_from_hours", 3_600_000_000_000, true),
    ("time_from_days", 86_400_000_000_000, true),
    ("time_to_us", 1_000, false),
    ("time_to_ms", 1_000_000, false),
    ("time_to_s", 1_000_000_000, false),
    ("time_to_min", 60_000_000_000, false),
    ("time_to_hours", 3_600_000_000_000, false),
    ("time_to_days", 86_400_000_000_000, false),
];

/// `x * factor` or `x / factor` as SQLite computes it: integers stay integers (a division
/// truncates, a product that overflows becomes real), reals stay real, NULL stays NULL;
/// text is read as the number it spells.
fn scale(v: ValueRef<'_>, factor: i64, multiply: bool) -> Value {
    let int = |i: i64| {
        if multiply {
            i.checked_mul(factor)
                .map_or(Value::Real(i as f64 * factor as f64), Value::Integer)
        } else {
            Value::Integer(i / factor)
        }
    };
    let float = |f: f64| {
        Value::Real(if multiply {
            f * factor as f64
        } else {
            f / factor as f64
        })
    };
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => int(i),
        ValueRef::Real(f) => float(f),
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            let t = String::from_utf8_lossy(t);
            let t = t.trim();
            if let Ok(i) = t.parse::<i64>() {
                int(i)
            } else {
                float(t.parse::<f64>().unwrap_or(0.0))
            }
        }
    }
}

pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    for &(name, factor, multiply) in TIME_CONVERSIONS {
        conn.create_scalar_function(name, 1, flags, move |ctx| {
            Ok(scale(ctx.get_raw(0), factor, multiply))
        })?;
    }
    for &(name, f) in UNARY {
        conn.create_scalar_function(name, 1, flags, move |ctx| {
            Ok(number(ctx, 0).map_or(Value::Null, |v| real(f(v))))
        })?;
    }
    // log(X) is base 10, log(B, X) base B, as in SQLite.
    conn.create_scalar_function("log", 1, flags, |ctx| {
        Ok(number(ctx, 0).map_or(Value::Null, |v| real(v.log10())))
    })?;
    conn.create_scalar_function("log", 2, flags, |ctx| {
        Ok(match (number(ctx, 0), number(ctx, 1)) {
            (Some(b), Some(x)) => real(x.ln() / b.ln()),
            _ => Value::Null,
        })
    })?;
    for name in ["pow", "power"] {
        conn.create_scalar_function(name, 2, flags, |ctx| {
            Ok(match (number(ctx, 0), number(ctx, 1)) {
                (Some(x), Some(y)) => real(x.powf(y)),
                _ => Value::Null,
            })
        })?;
    }
    conn.create_scalar_function("atan2", 2, flags, |ctx| {
        Ok(match (number(ctx, 0), number(ctx, 1)) {
            (Some(y), Some(x)) => real(y.atan2(x)),
            _ => Value::Null,
        })
    })?;
    conn.create_scalar_function("mod", 2, flags, |ctx| {
        Ok(match (number(ctx, 0), number(ctx, 1)) {
            (Some(x), Some(y)) if y != 0.0 => real(x % y),
            _ => Value::Null,
        })
    })?;
    conn.create_scalar_function("pi", 0, flags, |_| Ok(Value::Real(std::f64::consts::PI)))?;
    conn.create_scalar_function("floor", 1, flags, |ctx| Ok(rounding(ctx, f64::floor)))?;
    conn.create_scalar_function("ceil", 1, flags, |ctx| Ok(rounding(ctx, f64::ceil)))?;
    conn.create_scalar_function("ceiling", 1, flags, |ctx| Ok(rounding(ctx, f64::ceil)))?;
    conn.create_scalar_function("trunc", 1, flags, |ctx| Ok(rounding(ctx, f64::trunc)))?;

    // Perfetto's str_split(str, delimiter, index): the index-th part (from 0), NULL past
    // the last one or for an empty delimiter.
    conn.create_scalar_function("str_split", 3, flags, |ctx| {
        let (ValueRef::Text(s), ValueRef::Text(d)) = (ctx.get_raw(0), ctx.get_raw(1)) else {
            return Ok(Value::Null);
        };
        let (s, d) = (String::from_utf8_lossy(s), String::from_utf8_lossy(d));
        let Some(index) = (match ctx.get_raw(2) {
            ValueRef::Integer(i) => usize::try_from(i).ok(),
            _ => None,
        }) else {
            return Ok(Value::Null);
        };
        if d.is_empty() {
            return Ok(Value::Null);
        }
        Ok(s.split(d.as_ref())
            .nth(index)
            .map_or(Value::Null, |p| Value::Text(p.to_string())))
    })?;

    // `x REGEXP p` calls regexp(p, x). Compiled patterns are kept (a query repeats one).
    let cache: Mutex<HashMap<String, regex::Regex>> = Mutex::new(HashMap::new());
    conn.create_scalar_function("regexp", 2, flags, move |ctx| {
        let (ValueRef::Text(p), ValueRef::Text(s)) = (ctx.get_raw(0), ctx.get_raw(1)) else {
            return Ok(Value::Null);
        };
        let pattern = String::from_utf8_lossy(p).into_owned();
        let text = String::from_utf8_lossy(s);
        let mut cache = cache
            .lock()
            .map_err(|_| rusqlite::Error::UserFunctionError("regexp cache poisoned".into()))?;
        if !cache.contains_key(&pattern) {
            let re = regex::Regex::new(&pattern).map_err(|e| {
                rusqlite::Error::UserFunctionError(format!("regexp: {pattern:?}: {e}").into())
            })?;
            if cache.len() > 64 {
                cache.clear();
            }
            cache.insert(pattern.clone(), re);
        }
        Ok(Value::Integer(
            cache.get(&pattern).is_some_and(|re| re.is_match(&text)) as i64,
        ))
    })?;
    Ok(())
}
