//! The command line every benchmark example takes: `[SIZE] [--keep PATH]`.

// Each example includes this file and uses what it needs of it.
#![allow(dead_code)]

use std::path::PathBuf;
use std::str::FromStr;

/// The first argument, unless it is an option: the benchmark's size (`default` if absent).
pub fn size_arg<T: FromStr>(args: &[String], default: T) -> Result<T, T::Err> {
    args.get(1)
        .filter(|a| !a.starts_with("--"))
        .map(|a| a.parse())
        .transpose()
        .map(|v| v.unwrap_or(default))
}

/// The path after `--keep`, where the generated input is kept.
pub fn keep_arg(args: &[String]) -> Option<PathBuf> {
    args.iter()
        .position(|a| a == "--keep")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from)
}
