//! One importer per format. Each turns a file's bytes into [`crate::ir::Event`]s in a shared
//! [`crate::ir::Sink`], with raw timestamps and the clock they were read on.

pub mod atrace;
pub mod json;
pub mod proto;
pub mod systrace;

use crate::ir::MachineId;

/// What a parser knows about the file it reads.
#[derive(Clone, Debug)]
pub struct FileContext {
    /// Index of the file in the import (the `trace_file` row).
    pub file: u32,
    /// Machine the file's events belong to unless the file itself says otherwise.
    pub machine: MachineId,
}

/// Why a file could not be imported (the import layer adds the file name).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ParseError {
    #[error("{0}")]
    Invalid(String),
    #[error("the file ends in the middle of {0}")]
    Truncated(String),
}

impl ParseError {
    pub fn invalid(msg: impl Into<String>) -> Self {
        ParseError::Invalid(msg.into())
    }
}
