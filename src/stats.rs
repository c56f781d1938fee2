//! The catalogue of stats: what each counts, how bad it is, and where it comes from.
//!
//! Names, severities and sources are Trace Processor's, so queries against `stats` written
//! for Perfetto keep working.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Info,
    DataLoss,
    Error,
    Notice,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::DataLoss => "data_loss",
            Severity::Error => "error",
            Severity::Notice => "notice",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Recorded by the tracing service.
    Trace,
    /// Found while importing.
    Analysis,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Trace => "trace",
            Source::Analysis => "analysis",
        }
    }
}

pub struct StatDef {
    pub name: &'static str,
    pub indexed: bool,
    pub severity: Severity,
    pub source: Source,
    pub description: &'static str,
}

const fn def(
    name: &'static str,
    indexed: bool,
    severity: Severity,
    source: Source,
    description: &'static str,
) -> StatDef {
    StatDef {
        name,
        indexed,
        severity,
        source,
        description,
    }
}

use Severity::*;
use Source::*;

pub const STATS: &[StatDef] = &[
    def("clock_sync_unrelatable_clock_domains", false, Error, Analysis,
        "Events on a clock that no snapshot, manifest override or rendezvous relates to trace time were dropped. Record clock snapshots, or add a manifest `clocks` override."),
    def("clock_sync_failure", false, Error, Analysis,
        "A timestamp could not be converted to trace time and its event was dropped."),
    def("clock_sync_failure_no_path", false, Error, Analysis,
        "Events whose clock has no path of relations to the trace_time clock were dropped. Record clock snapshots, or add a manifest `clocks` override."),
    def("clock_sync_failure_unknown_source_clock", false, Error, Analysis,
        "Events on a clock that no ClockSnapshot mentions were dropped. Record the clock in the trace's ClockSnapshots."),
    def("clock_sync_failure_unknown_target_clock", false, Error, Analysis,
        "Events could not be converted because the trace_time clock appears in no snapshot; they were dropped. Choose a trace_time clock the traces record."),
    def("clock_sync_failure_undeferrable_packet_loss", false, DataLoss, Analysis,
        "Proto packets whose timestamp could not be converted to trace time, even at the end of their file, were dropped."),
    def("trace_sorter_negative_timestamp_dropped", false, Error, Analysis,
        "Events that land before the start of trace time were dropped. Pick another trace_time clock or fix the offsets."),
    def("json_tokenizer_failure", false, Error, Trace,
        "A JSON event could not be read (bad field types or syntax); it was dropped."),
    def("json_parser_failure", false, Error, Analysis,
        "A JSON event missed a field its phase needs (e.g. dur on X, tid on a thread instant); it was dropped."),
    def("json_display_time_unit", false, Info, Trace,
        "The JSON file sets displayTimeUnit; it only affects display and is ignored."),
    def("systrace_parse_failure", false, Error, Analysis,
        "A systrace line or atrace marker could not be parsed; it was skipped."),
    def("misplaced_end_event", false, DataLoss, Analysis,
        "Slices were still open when an enclosing slice ended; they were closed at its end."),
    def("slice_drop_overlapping_complete_event", false, Error, Analysis,
        "A complete slice overlapped its parent partially and was dropped."),
    def("slice_spill_overlapping_complete_event", false, Error, Analysis,
        "A JSON complete event overlapped its parent partially; it was moved to an overflow track."),
    def("slice_negative_duration", false, Error, Analysis,
        "A slice with a negative duration was dropped."),
    def("flow_duplicate_id", false, Error, Analysis, "A flow began with an id already in use."),
    def("flow_no_enclosing_slice", false, Error, Analysis,
        "A flow event had no slice to attach to."),
    def("flow_step_without_start", false, Error, Analysis, "A flow step had no flow begin."),
    def("flow_end_without_start", false, Error, Analysis, "A flow end had no flow begin."),
    def("flow_invalid_id", false, Error, Analysis, "A flow event had an unusable id."),
    def("flow_without_direction", false, Error, Analysis,
        "A flow binding had neither flow_in nor flow_out."),
    def("mismatched_sched_switch_tids", false, Error, Analysis,
        "A sched_switch's prev_pid did not match the task running on that cpu; the running slice was left open."),
    def("ftrace_event_unknown", false, DataLoss, Analysis,
        "ftrace events with no ftrace_event row: a kind Perfetto's schema (as Sextant knows it) does not list, or a bundle whose bytes could not be matched to its events."),
    def("syscall_unknown", false, DataLoss, Analysis,
        "sys_enter / sys_exit events whose number names no syscall of the machine's architecture (SystemInfo utsname.machine), or whose machine gave no architecture Sextant knows; they were dropped."),
    def("task_state_invalid", false, Error, Analysis,
        "A sched_switch prev_state could not be decoded."),
    def("compact_sched_switch_skipped", false, Info, Analysis,
        "The first compact sched_switch of each cpu only primes the cpu's state (as Trace Processor does)."),
    def("compact_sched_has_parse_errors", false, Error, Analysis,
        "A compact_sched bundle had columns of different lengths."),
    def("compact_sched_waking_skipped", false, Info, Analysis,
        "A compact sched_waking came before any switch on its cpu."),
    def("packet_skipped_seq_needs_incremental_state_invalid", false, Notice, Analysis,
        "Packets that need incremental state were skipped because their sequence lost data and had not yet re-emitted its state."),
    def("interned_data_skipped_incremental_state_invalid", false, Notice, Analysis,
        "Interned data on a sequence with invalid incremental state was ignored."),
    def("sequence_packet_loss_flagged", false, DataLoss, Analysis,
        "The tracing service flagged lost packets on a sequence (previous_packet_dropped)."),
    def("interned_data_tokenizer_errors", false, Info, Analysis,
        "An event referred to interned data that was never defined."),
    def("track_event_parser_errors", false, Info, Analysis,
        "TrackEvents that could not be imported (missing type, thread, id or counter track)."),
    def("track_event_tokenizer_errors", false, Info, Analysis,
        "TrackEvents whose timestamps could not be read."),
    def("track_event_invalid_timestamp", false, Error, Analysis,
        "TrackEvents with a negative timestamp were dropped."),
    def("track_event_missing_sequence_id", false, Error, Analysis,
        "TrackEvent packets without a trusted_packet_sequence_id were dropped."),
    def("proto_truncated", false, DataLoss, Analysis,
        "The protobuf trace ends in the middle of a packet; everything before it was imported."),
    def("proto_packet_decode_failure", false, DataLoss, Analysis,
        "TracePackets that could not be decoded were skipped."),
    def("proto_field_wire_type_mismatch", false, Error, Analysis,
        "Fields of TracePackets written with another wire type than Perfetto's schema gives them (a vendor build numbering fields differently). They were read as Trace Processor reads them, so the tables match its: a number written as bytes reads as an address (shown here as 2^30 + its file offset, e.g. bogus pids and threads), a string written as a number reads empty. Rows built from them are suspect."),
    def("proto_field_skipped", false, DataLoss, Analysis,
        "Fields of TracePackets whose bytes stop being protobuf (a packed run cut short, a message cut part-way) were skipped; the rest of each packet was imported."),
    def("proto_string_invalid_utf8", false, Info, Analysis,
        "Strings in TracePackets that are not valid UTF-8; the invalid bytes were replaced with U+FFFD."),
    def("cpu_info_unknown_cpu_features", false, Info, Analysis,
        "CpuInfo named cpu feature bits Trace Processor does not know; raw_bitmap keeps them."),
    def("ftrace_cpu_entries_begin", true, Info, Trace, "Ftrace ring buffer entries at start, per cpu."),
    def("ftrace_cpu_entries_end", true, Info, Trace, "Ftrace ring buffer entries at the end, per cpu."),
    def("ftrace_cpu_entries_delta", true, Info, Trace, "Growth of the ring buffer entries, per cpu."),
    def("ftrace_cpu_overrun_begin", true, Info, Trace,
        "The kernel's count of ring-buffer overruns at start, per cpu."),
    def("ftrace_cpu_overrun_end", true, Info, Trace,
        "The kernel's count of ring-buffer overruns at the end, per cpu."),
    def("ftrace_cpu_overrun_delta", true, DataLoss, Trace,
        "Ftrace events lost to ring-buffer overruns during the trace, per cpu: make the buffer \
         bigger (buffer_size_kb) or record fewer events."),
    def("ftrace_cpu_commit_overrun_begin", true, Info, Trace, "Commit overruns at start, per cpu."),
    def("ftrace_cpu_commit_overrun_end", true, Info, Trace, "Commit overruns at the end, per cpu."),
    def("ftrace_cpu_commit_overrun_delta", true, DataLoss, Trace,
        "Ftrace events lost to commit overruns during the trace, per cpu."),
    def("ftrace_cpu_bytes_begin", true, Info, Trace, "Bytes in the ring buffer at start, per cpu."),
    def("ftrace_cpu_bytes_end", true, Info, Trace, "Bytes in the ring buffer at the end, per cpu."),
    def("ftrace_cpu_bytes_delta", true, Info, Trace, "Growth of the ring buffer bytes, per cpu."),
    def("ftrace_cpu_oldest_event_ts_begin", true, Info, Trace,
        "Timestamp of the oldest event in the ring buffer at start (ns), per cpu."),
    def("ftrace_cpu_oldest_event_ts_end", true, Info, Trace,
        "Timestamp of the oldest event in the ring buffer at the end (ns), per cpu."),
    def("ftrace_cpu_now_ts_begin", true, Info, Trace, "The ftrace clock at start (ns), per cpu."),
    def("ftrace_cpu_now_ts_end", true, Info, Trace, "The ftrace clock at the end (ns), per cpu."),
    def("ftrace_cpu_dropped_events_begin", true, Info, Trace, "Dropped events at start, per cpu."),
    def("ftrace_cpu_dropped_events_end", true, Info, Trace, "Dropped events at the end, per cpu."),
    def("ftrace_cpu_dropped_events_delta", true, DataLoss, Trace,
        "Ftrace events the kernel dropped during the trace, per cpu."),
    def("ftrace_cpu_read_events_begin", true, Info, Trace, "Events read at start, per cpu."),
    def("ftrace_cpu_read_events_end", true, Info, Trace, "Events read at the end, per cpu."),
    def("ftrace_cpu_read_events_delta", true, Info, Trace, "Events read during the trace, per cpu."),
    def("ftrace_abi_errors_skipped_zero_data_length", false, Info, Trace,
        "Ftrace ring-buffer records of zero data length were skipped by the tracing service."),
    def("ftrace_parse_errors", false, DataLoss, Trace,
        "The tracing service could not parse part of the ftrace ring buffer (an ABI error): \
         events there are lost."),
    def("rss_stat_unknown_keys", false, Error, Analysis,
        "rss_stat events for a memory counter Trace Processor does not know were dropped."),
    def("rss_stat_negative_size", false, Info, Analysis,
        "rss_stat events with a negative size were dropped."),
    def("rss_stat_unknown_thread_for_mm_id", false, Info, Analysis,
        "rss_stat events for a memory map no thread had reported as its own were dropped."),
    def("ftrace_stats_unknown_phase", false, Info, Analysis,
        "FtraceStats without a start/end phase were ignored."),
    def("traced_buf_bytes_written", true, Info, Trace, "Bytes written into the trace buffer."),
    def("traced_buf_bytes_filtered_out", true, Info, Trace, "Bytes filtered out by the trace filter."),
    def("traced_buf_chunks_discarded", true, DataLoss, Trace,
        "Chunks discarded by the tracing service (buffer overrun or bad chunks)."),
    def("traced_buf_chunks_overwritten", true, DataLoss, Trace,
        "Chunks overwritten in ring-buffer mode before they were read."),
    def("traced_buf_patches_failed", true, DataLoss, Trace, "Chunk patches that failed."),
    def("traced_buf_abi_violations", true, DataLoss, Trace, "Producers that violated the buffer ABI."),
    def("traced_buf_trace_writer_packet_loss", true, DataLoss, Trace,
        "Packets lost by trace writers."),
    def("traced_buf_sequence_packet_loss", true, DataLoss, Analysis,
        "Sequences on which packets were lost."),
    def("traced_buf_incremental_sequences_dropped", true, DataLoss, Analysis,
        "Sequences whose incremental state was lost."),
    def("traced_buf_data_loss_chunk_corrupted", true, DataLoss, Trace, "Corrupted chunks."),
    def("traced_buf_data_loss_orphan_continuation", true, DataLoss, Trace, "Orphan continuation chunks."),
    def("traced_buf_data_loss_overwrite", true, DataLoss, Trace, "Data overwritten in the buffer."),
    def("traced_buf_data_loss_read_gap", true, DataLoss, Trace, "Gaps when reading the buffer."),
    def("traced_buf_data_loss_reassembly_broken_chain", true, DataLoss, Trace, "Broken fragment chains."),
    def("traced_buf_data_loss_reassembly_gap", true, DataLoss, Trace, "Gaps in fragment reassembly."),
    def("traced_buf_data_loss_smb_full", true, DataLoss, Trace, "Shared memory buffer full."),
    def("traced_buf_data_loss_writer_abort", true, DataLoss, Trace, "Writers that aborted."),
    def("traced_chunks_discarded", false, DataLoss, Trace, "Chunks discarded by the service."),
    def("traced_data_sources_registered", false, Info, Trace, "Data sources registered."),
    def("traced_data_sources_seen", false, Info, Trace, "Data sources seen."),
    def("traced_final_flush_failed", false, DataLoss, Trace, "The final flush failed."),
    def("traced_final_flush_succeeded", false, Info, Trace, "The final flush succeeded."),
    def("traced_flushes_failed", false, DataLoss, Trace, "Flushes that failed."),
    def("traced_flushes_requested", false, Info, Trace, "Flushes requested."),
    def("traced_flushes_succeeded", false, Info, Trace, "Flushes that succeeded."),
    def("traced_patches_discarded", false, DataLoss, Trace, "Patches discarded."),
    def("traced_producers_connected", false, Info, Trace, "Producers connected."),
    def("traced_producers_seen", false, Info, Trace, "Producers seen."),
    def("traced_total_buffers", false, Info, Trace, "Buffers in the session."),
    def("traced_tracing_sessions", false, Info, Trace, "Tracing sessions."),
    def("filter_input_packets", false, Info, Trace, "Packets into the trace filter."),
    def("filter_input_bytes", false, Info, Trace, "Bytes into the trace filter."),
    def("filter_output_bytes", false, Info, Trace, "Bytes out of the trace filter."),
    def("filter_errors", false, Error, Trace, "Errors in the trace filter."),
    def("filter_time_taken_ns", false, Info, Trace, "Time the trace filter took."),
];

/// `ftrace_cpu_<what>_begin` / `_end` (the names are static for the stats table).
pub fn ftrace_cpu_stat(what: &str, end: bool) -> Option<&'static str> {
    let name = format!("ftrace_cpu_{what}_{}", if end { "end" } else { "begin" });
    lookup(&name).map(|d| d.name)
}

/// `ftrace_cpu_<what>_delta`, for the counters that have one.
pub fn ftrace_cpu_delta(what: &str) -> Option<&'static str> {
    lookup(&format!("ftrace_cpu_{what}_delta")).map(|d| d.name)
}

pub fn lookup(name: &str) -> Option<&'static StatDef> {
    STATS.iter().find(|d| d.name == name)
}
