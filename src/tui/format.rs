//! Times and durations as people read them, in units that fit their size.

/// A duration in the largest unit that keeps it ≥ 1, with up to 3 decimals, e.g. `1.5 s`,
/// `250 ms`, `12.125 µs`, `800 ns`.
pub fn duration(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let abs = ns.unsigned_abs();
    let (unit, scale) = match abs {
        0..=999 => return format!("{sign}{abs} ns"),
        1_000..=999_999 => ("µs", 1e3),
        1_000_000..=999_999_999 => ("ms", 1e6),
        _ => ("s", 1e9),
    };
    let v = abs as f64 / scale;
    let mut s = format!("{v:.3}");
    while s.ends_with('0') {
        s.pop();
    }
    if s.ends_with('.') {
        s.pop();
    }
    format!("{sign}{s} {unit}")
}

/// A signed offset, always with its sign.
pub fn offset(ns: i64) -> String {
    if ns >= 0 {
        format!("+{}", duration(ns))
    } else {
        duration(ns)
    }
}

/// An absolute trace timestamp: seconds with all nine decimals, grouped by three.
pub fn timestamp(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let abs = ns.unsigned_abs();
    let frac = abs % 1_000_000_000;
    format!(
        "{sign}{}.{:03} {:03} {:03} s",
        abs / 1_000_000_000,
        frac / 1_000_000,
        frac / 1_000 % 1_000,
        frac % 1_000
    )
}

/// A ruler label for `ns` when ticks are `step` apart and labels reach up to `largest`:
/// one unit for the whole ruler (the one that fits the largest label), and as few decimals
/// as the step needs.
pub fn tick(ns: i64, step: i64, largest: i64) -> String {
    let sign = if ns < 0 { "-" } else { "+" };
    let abs = ns.unsigned_abs() as f64;
    let step = step.max(1) as f64;
    let size = (largest.unsigned_abs() as f64).max(step);
    let (unit, scale) = if size >= 1e9 {
        ("s", 1e9)
    } else if size >= 1e6 {
        ("ms", 1e6)
    } else if size >= 1e3 {
        ("µs", 1e3)
    } else {
        ("ns", 1.0)
    };
    // Decimals needed to write every multiple of the step exactly in this unit, found in
    // whole nanoseconds (a float test judged a 2 ns step in seconds "whole": every tick of a
    // deep zoom read `+5 s`).
    let step_ns = step as u64;
    let scale_ns = scale as u64;
    let decimals = (0..=9u32)
        .find(|&d| (u128::from(step_ns) * 10u128.pow(d)) % u128::from(scale_ns) == 0)
        .unwrap_or(9) as usize;
    format!("{sign}{:.*} {unit}", decimals, abs / scale)
}

/// A counter value: whole numbers as they are, others with three decimals.
pub fn value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.3}")
    }
}

/// A readable count: 1234567 → `1.2M`.
pub fn count(n: f64) -> String {
    if n >= 1e9 {
        format!("{:.1}G", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.1}M", n / 1e6)
    } else if n >= 1e4 {
        format!("{:.0}k", n / 1e3)
    } else {
        format!("{n:.0}")
    }
}

/// Bytes as `12.3 MB`.
pub fn bytes(n: u64) -> String {
    let n = n as f64;
    if n >= 1e9 {
        format!("{:.1} GB", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.1} MB", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.1} kB", n / 1e3)
    } else {
        format!("{n:.0} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_pick_their_unit() {
        assert_eq!(duration(800), "800 ns");
        assert_eq!(duration(12_125), "12.125 µs");
        assert_eq!(duration(250_000_000), "250 ms");
        assert_eq!(duration(1_500_000_000), "1.5 s");
        assert_eq!(duration(-2_000_000), "-2 ms");
        assert_eq!(offset(1_000), "+1 µs");
    }

    #[test]
    fn counter_values() {
        assert_eq!(value(42.0), "42");
        assert_eq!(value(-1.5), "-1.500");
    }

    #[test]
    fn timestamps_keep_every_nanosecond() {
        assert_eq!(timestamp(1_100_000_001), "1.100 000 001 s");
        assert_eq!(timestamp(-5), "-0.000 000 005 s");
    }

    #[test]
    fn ticks_have_the_decimals_the_step_needs() {
        assert_eq!(tick(1_500_000_000, 500_000_000, 2_000_000_000), "+1.5 s");
        assert_eq!(tick(2_000_000_000, 1_000_000_000, 3_000_000_000), "+2 s");
        assert_eq!(tick(1_250, 250, 1_500), "+1.25 µs");
        assert_eq!(tick(1_500_000, 100_000, 1_900_000), "+1.5 ms");
        assert_eq!(tick(0, 20_000_000, 60_000_000), "+0 ms");
        // Deep zoom far from the start: a 2 ns step at +5 s keeps its nanoseconds.
        assert_eq!(tick(5_000_000_002, 2, 5_000_000_020), "+5.000000002 s");
        assert_eq!(tick(5_000_000_010, 10, 5_000_000_020), "+5.00000001 s");
        assert_eq!(tick(3_000_250_000, 250_000, 3_001_000_000), "+3.00025 s");
    }
}
