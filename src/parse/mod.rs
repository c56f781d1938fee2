//! One importer per format. Each turns a file's bytes into [`crate::ir::Event`]s in a shared
//! [`crate::ir::Sink`], with raw timestamps and the clock they were read on.

pub mod atrace;
mod config_schema;
pub mod config_text;
mod ftrace_devices;
mod ftrace_events;
mod ftrace_kernel;
mod ftrace_memory;
mod ftrace_raw;
mod ftrace_schema;
pub mod json;
pub mod proto;
mod schema;
pub mod strace;
pub mod systrace;
mod wire_repair;

use std::collections::HashMap;

use crate::ir::MachineId;

/// What a parser knows about the file it reads.
#[derive(Clone, Debug)]
pub struct FileContext {
    /// Index of the file in the import (the `trace_file` row).
    pub file: u32,
    /// Machine the file's events belong to unless the file itself says otherwise.
    pub machine: MachineId,
    /// What the manifest allows for machine ids embedded in the file's packets.
    pub machines: MachineScope,
}

impl FileContext {
    /// A file with no manifest entry.
    pub fn new(file: u32, machine: MachineId) -> Self {
        Self {
            file,
            machine,
            machines: MachineScope::Free,
        }
    }
}

/// How embedded machine ids (`TracePacket.machine_id`) are treated.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum MachineScope {
    /// Each id is its own machine (a single remote machine is adopted onto the host).
    #[default]
    Free,
    /// The manifest attributes the file to one machine: another id is an error.
    Single,
    /// The manifest pins the file's timeline: it must be single-machine.
    Pinned,
    /// The manifest's `machines` block: every id must be declared.
    Remap(HashMap<u32, MachineId>),
}

/// Why a file could not be imported (the import layer adds the file name).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ParseError {
    #[error("{0}")]
    Invalid(String),
    #[error("the file ends in the middle of {0}")]
    Truncated(String),
    #[error("the import was cancelled")]
    Cancelled,
}

impl ParseError {
    pub fn invalid(msg: impl Into<String>) -> Self {
        ParseError::Invalid(msg.into())
    }
}

/// Hands out its bytes `step` at a time, as a slow pipe or a decompressor would: streamed
/// parsers must read the same events from it as from the whole file.
#[cfg(test)]
pub(crate) struct Trickle<'a> {
    pub bytes: &'a [u8],
    pub step: usize,
}

#[cfg(test)]
impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}
