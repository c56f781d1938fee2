//! Everything a Perfetto protobuf trace says about its own losses, per file: the TraceStats
//! packet (service counters, every per-buffer counter, filter stats, the final flush, and
//! the loss markers attributed to buffers through `writer_stats`), FtraceStats (per-cpu
//! ring-buffer counters at start and end, kprobes, setup errors), the per-packet loss
//! markers (`previous_packet_dropped`, packets skipped for lost incremental state),
//! service events (clones; their times as metadata), and what the TraceConfig implies at the end of the file
//! (data lost in streaming mode, config diagnostics). Behaviour follows Trace Processor's
//! (`../shared/reference/behaviour-stats.md`).
//!
//! The proto parser hands each packet's loss facts to [`LossTracker`]; the tracker hands
//! stats to the sink (`set_stat` / `stat`) and diagnostics rows to `Sink::diagnostics`.

use std::collections::{BTreeMap, HashSet};

use crate::ir::{MachineId, MetaValue, Sink, StatKey};
use crate::parse::ParseError;
use crate::protos::{self, trace_config::buffer_config::FillPolicy, trace_stats};
use crate::stats::{self, diagnostics};

/// `previous_packet_dropped` bits and the per-buffer stat each is counted in (bit 1,
/// DATA_LOSS_PRESENT, only counts in `traced_buf_sequence_packet_loss`).
const CAUSES: [(u32, &str); 8] = [
    (2, "traced_buf_data_loss_read_gap"),
    (4, "traced_buf_data_loss_chunk_corrupted"),
    (8, "traced_buf_data_loss_orphan_continuation"),
    (16, "traced_buf_data_loss_reassembly_gap"),
    (32, "traced_buf_data_loss_reassembly_broken_chain"),
    (64, "traced_buf_data_loss_overwrite"),
    (128, "traced_buf_data_loss_writer_abort"),
    (256, "traced_buf_data_loss_smb_full"),
];

/// FtraceParseStatus names, by value; ZERO_DATA_LENGTH records are skipped and counted,
/// any other status fails the import.
const FTRACE_PARSE_STATUS: [&str; 18] = [
    "FTRACE_STATUS_UNSPECIFIED",
    "FTRACE_STATUS_OK",
    "FTRACE_STATUS_UNEXPECTED_READ_ERROR",
    "FTRACE_STATUS_PARTIAL_PAGE_READ",
    "FTRACE_STATUS_ABI_INVALID_PAGE_HEADER",
    "FTRACE_STATUS_ABI_SHORT_EVENT_HEADER",
    "FTRACE_STATUS_ABI_NULL_PADDING",
    "FTRACE_STATUS_ABI_SHORT_PADDING_LENGTH",
    "FTRACE_STATUS_ABI_INVALID_PADDING_LENGTH",
    "FTRACE_STATUS_ABI_SHORT_TIME_EXTEND",
    "FTRACE_STATUS_ABI_SHORT_TIME_STAMP",
    "FTRACE_STATUS_ABI_SHORT_DATA_LENGTH",
    "FTRACE_STATUS_ABI_ZERO_DATA_LENGTH",
    "FTRACE_STATUS_ABI_INVALID_DATA_LENGTH",
    "FTRACE_STATUS_ABI_SHORT_EVENT_ID",
    "FTRACE_STATUS_ABI_END_OVERFLOW",
    "FTRACE_STATUS_SHORT_COMPACT_EVENT",
    "FTRACE_STATUS_INVALID_EVENT",
];
const ZERO_DATA_LENGTH: i32 = 12;

/// A file-write period of a day or more does not count as streaming.
const LONG_TRACE_FILE_PERIOD_MS: u32 = 86_400_000;
/// Services from this major version on flush periodically on their own.
const SERVICE_FLUSHES_ITSELF: u32 = 54;
const NS_PER_S: f64 = 1e9;

/// Loss facts of one packet sequence.
#[derive(Default)]
struct SequenceLoss {
    /// Packets after the first that carried a loss marker.
    lost: i64,
    /// Of those, per cause (bits of [`CAUSES`]).
    causes: [i64; 8],
    /// Packets flagged SEQ_NEEDS_INCREMENTAL_STATE, and those skipped.
    needs_state: u64,
    skipped: u64,
}

/// Per machine of the file.
#[derive(Default)]
struct MachineFacts {
    /// The last TraceConfig.
    config: Option<protos::TraceConfig>,
    service_version: Option<String>,
    tracing_started_ns: Option<i64>,
    /// A START FtraceStats said the ftrace buffer kept what it held before tracing began.
    preserve_ftrace_buffer: bool,
    clone_trigger_seen: bool,
}

#[derive(Default)]
pub struct LossTracker {
    sequences: crate::ir::FxHashMap<(MachineId, u32), SequenceLoss>,
    machines: BTreeMap<MachineId, MachineFacts>,
    /// Sequences whose START FtraceStats setup errors were counted.
    setup_errors_counted: HashSet<(MachineId, u32)>,
}

impl LossTracker {
    /// A packet's loss marker. `seq_id` is None without `trusted_packet_sequence_id`;
    /// the first packet seen of a sequence never counts (nothing came before it).
    pub fn packet(&mut self, machine: MachineId, seq_id: Option<u32>, dropped: u32, needs: bool) {
        let Some(seq_id) = seq_id else { return };
        let mut first = false;
        let seq = self.sequences.entry((machine, seq_id)).or_insert_with(|| {
            first = true;
            SequenceLoss::default()
        });
        if needs {
            seq.needs_state += 1;
        }
        if first || dropped == 0 {
            return;
        }
        seq.lost += 1;
        for (i, (bit, _)) in CAUSES.iter().enumerate() {
            if dropped & bit != 0 {
                seq.causes[i] += 1;
            }
        }
    }

    /// A packet needing incremental state was skipped: its sequence's state was lost.
    pub fn skipped(&mut self, machine: MachineId, seq_id: u32) {
        self.sequences.entry((machine, seq_id)).or_default().skipped += 1;
    }

    pub fn system_info(&mut self, machine: MachineId, info: &protos::SystemInfo) {
        if let Some(v) = &info.tracing_service_version {
            self.machines.entry(machine).or_default().service_version = Some(v.clone());
        }
    }

    pub fn service_event(
        &mut self,
        sink: &mut Sink,
        machine: MachineId,
        ts: Option<i64>,
        e: &protos::TracingServiceEvent,
    ) {
        let ts = ts.unwrap_or(0);
        if e.tracing_started() {
            self.machines.entry(machine).or_default().tracing_started_ns = Some(ts);
            sink.metadata("tracing_started_ns", machine, MetaValue::Int(ts));
        }
        if e.tracing_disabled() {
            sink.metadata("tracing_disabled_ns", machine, MetaValue::Int(ts));
        }
        if e.all_data_sources_started() {
            sink.metadata("all_data_source_started_ns", machine, MetaValue::Int(ts));
        }
        // Data sources slow to start or to flush: "producer data_source", one row each.
        let slow = [
            ("slow_start_data_source", &e.slow_starting_data_sources),
            (
                "last_flush_slow_data_source",
                &e.last_flush_slow_data_sources,
            ),
        ];
        for (key, sources) in slow {
            for ds in sources.iter().flat_map(|d| &d.data_source) {
                let name = format!(
                    "{} {}",
                    ds.producer_name.as_deref().unwrap_or(""),
                    ds.data_source_name.as_deref().unwrap_or("")
                );
                sink.metadata_append(key, machine, MetaValue::Str(name));
            }
        }
        if e.clone_started() {
            sink.set_stat("traced_clone_started_timestamp_ns", None, machine, ts);
        }
        if let Some(buffer) = e.buffer_cloned {
            let idx = Some(i64::from(buffer));
            sink.set_stat("traced_buf_clone_done_timestamp_ns", idx, machine, ts);
        }
    }

    /// The first clone_snapshot_trigger packet read stamps the clone; returns whether this
    /// one was the first (it alone names the `trace_trigger` metadata).
    pub fn clone_snapshot_trigger(
        &mut self,
        sink: &mut Sink,
        machine: MachineId,
        ts: Option<i64>,
    ) -> bool {
        let m = self.machines.entry(machine).or_default();
        if m.clone_trigger_seen {
            return false;
        }
        m.clone_trigger_seen = true;
        let ts = ts.unwrap_or(0);
        sink.set_stat("traced_clone_trigger_timestamp_ns", None, machine, ts);
        true
    }

    /// Streaming into a file with DISCARD buffers loses data once a buffer fills.
    pub fn trace_config(
        &mut self,
        sink: &mut Sink,
        machine: MachineId,
        config: protos::TraceConfig,
    ) {
        if config.write_into_file() {
            for (i, b) in config.buffers.iter().enumerate() {
                if b.fill_policy() == FillPolicy::Discard {
                    sink.stat_indexed("config_write_into_file_discard", Some(i as i64), machine, 1);
                }
            }
        }
        self.machines.entry(machine).or_default().config = Some(config);
    }

    /// Ftrace events before this time are dropped: when tracing started, unless the START
    /// FtraceStats says the kernel's buffer from before was kept (`preserve_ftrace_buffer`).
    pub fn ftrace_drop_before(&self, machine: MachineId) -> Option<i64> {
        let facts = self.machines.get(&machine)?;
        if facts.preserve_ftrace_buffer {
            return None;
        }
        facts.tracing_started_ns
    }

    /// The service's counters; a later TraceStats packet overwrites an earlier one.
    pub fn trace_stats(&mut self, sink: &mut Sink, machine: MachineId, s: &protos::TraceStats) {
        let mut set = |name: &'static str, idx: Option<i64>, v: Option<u64>| {
            sink.set_stat(name, idx, machine, v.unwrap_or(0) as i64);
        };
        let u32v = |v: Option<u32>| v.map(u64::from);
        set(
            "traced_producers_connected",
            None,
            u32v(s.producers_connected),
        );
        set("traced_producers_seen", None, s.producers_seen);
        set(
            "traced_data_sources_registered",
            None,
            u32v(s.data_sources_registered),
        );
        set("traced_data_sources_seen", None, s.data_sources_seen);
        set("traced_tracing_sessions", None, u32v(s.tracing_sessions));
        set("traced_total_buffers", None, u32v(s.total_buffers));
        set("traced_chunks_discarded", None, s.chunks_discarded);
        set("traced_patches_discarded", None, s.patches_discarded);
        set("traced_flushes_requested", None, s.flushes_requested);
        set("traced_flushes_succeeded", None, s.flushes_succeeded);
        set("traced_flushes_failed", None, s.flushes_failed);
        if let Some(f) = &s.filter_stats {
            set("filter_input_packets", None, f.input_packets);
            set("filter_input_bytes", None, f.input_bytes);
            set("filter_output_bytes", None, f.output_bytes);
            set("filter_errors", None, f.errors);
            set("filter_time_taken_ns", None, f.time_taken_ns);
            for (i, v) in f.bytes_discarded_per_buffer.iter().enumerate() {
                set("traced_buf_bytes_filtered_out", Some(i as i64), Some(*v));
            }
        }
        for (i, b) in s.buffer_stats.iter().enumerate() {
            for (name, v) in buffer_fields(b) {
                set(name, Some(i as i64), v);
            }
        }
        match s.final_flush_outcome() {
            trace_stats::FinalFlushOutcome::FinalFlushSucceeded => {
                sink.stat("traced_final_flush_succeeded", machine, 1);
            }
            trace_stats::FinalFlushOutcome::FinalFlushFailed => {
                sink.stat("traced_final_flush_failed", machine, 1);
            }
            trace_stats::FinalFlushOutcome::FinalFlushUnspecified => {}
        }
        self.writer_stats(sink, machine, &s.writer_stats);
    }

    /// The loss markers of the sequences `writer_stats` names, summed per buffer (only
    /// packets read so far count, as in the reference).
    fn writer_stats(
        &self,
        sink: &mut Sink,
        machine: MachineId,
        writers: &[trace_stats::WriterStats],
    ) {
        #[derive(Default)]
        struct BufferLoss {
            lost: i64,
            causes: [i64; 8],
            dropped_sequences: i64,
        }
        let mut buffers: BTreeMap<u32, BufferLoss> = BTreeMap::new();
        for w in writers {
            let Some(seq_id) = w.sequence_id.and_then(|s| u32::try_from(s).ok()) else {
                continue;
            };
            let Some(seq) = self.sequences.get(&(machine, seq_id)) else {
                continue;
            };
            let b = buffers.entry(w.buffer.unwrap_or(0)).or_default();
            b.lost += seq.lost;
            for (sum, n) in b.causes.iter_mut().zip(seq.causes) {
                *sum += n;
            }
            if seq.skipped > 0 && seq.skipped == seq.needs_state {
                b.dropped_sequences += 1;
            }
        }
        for (buffer, b) in buffers {
            let idx = Some(i64::from(buffer));
            sink.set_stat("traced_buf_sequence_packet_loss", idx, machine, b.lost);
            let dropped = b.dropped_sequences;
            sink.set_stat(
                "traced_buf_incremental_sequences_dropped",
                idx,
                machine,
                dropped,
            );
            for ((_, name), n) in CAUSES.iter().zip(b.causes) {
                sink.set_stat(name, idx, machine, n);
            }
        }
    }

    /// The kernel ring buffer's own counters, read at the start and at the end of tracing,
    /// per cpu; at the end, the growth since the start (overruns are lost events). Hands
    /// back the setup errors of the sequence's first START packet (one import log each);
    /// fails, as the reference's import does, on a phase other than start or end and on
    /// ftrace parse errors other than zero-length records.
    pub fn ftrace_stats(
        &mut self,
        sink: &mut Sink,
        machine: MachineId,
        seq_id: u32,
        s: &protos::FtraceStats,
    ) -> Result<Vec<String>, ParseError> {
        use protos::ftrace_stats::Phase;
        let end = match s.phase() {
            Phase::StartOfTrace => false,
            Phase::EndOfTrace => true,
            Phase::Unspecified => {
                return Err(ParseError::invalid(format!(
                    "FtraceStats with an unknown phase ({})",
                    s.phase.unwrap_or(0)
                )));
            }
        };
        let file = sink.current_file;
        let begin_of = |sink: &Sink, name: &'static str, idx: Option<i64>| {
            sink.stats
                .get(&StatKey {
                    name,
                    idx,
                    machine,
                    file,
                })
                .copied()
        };
        for c in &s.cpu_stats {
            let Ok(cpu) = i64::try_from(c.cpu.unwrap_or(0)) else {
                continue;
            };
            // Seconds as a double, to ns; past i64 clamps. Every counter is written for
            // each cpu entry, 0 when the entry leaves it out (the reference reads absent
            // fields as 0), so each `_end` has its `_begin` for the delta.
            let seconds_to_ns = |v: Option<f64>| Some((v.unwrap_or(0.0) * NS_PER_S) as i64 as u64);
            let values = [
                ("entries", c.entries),
                ("overrun", c.overrun),
                ("commit_overrun", c.commit_overrun),
                ("bytes", c.bytes_read),
                ("oldest_event_ts", seconds_to_ns(c.oldest_event_ts)),
                ("now_ts", seconds_to_ns(c.now_ts)),
                ("dropped_events", c.dropped_events),
                ("read_events", c.read_events),
            ];
            for (what, value) in values {
                let value = value.unwrap_or(0);
                let Some(name) = stats::ftrace_cpu_stat(what, end) else {
                    continue;
                };
                let value = value as i64;
                sink.set_stat(name, Some(cpu), machine, value);
                if !end {
                    continue;
                }
                let begin =
                    stats::ftrace_cpu_stat(what, false).and_then(|b| begin_of(sink, b, Some(cpu)));
                if let (Some(begin), Some(delta)) = (begin, stats::ftrace_cpu_delta(what)) {
                    sink.set_stat(delta, Some(cpu), machine, value.saturating_sub(begin));
                }
            }
        }
        let kprobe = s.kprobe_stats.as_ref();
        let kprobes = [
            ("hits", kprobe.and_then(|k| k.hits)),
            ("misses", kprobe.and_then(|k| k.misses)),
        ];
        for (what, value) in kprobes {
            let value = value.unwrap_or(0);
            let (begin, end_name, delta) = match what {
                "hits" => (
                    "ftrace_kprobe_hits_begin",
                    "ftrace_kprobe_hits_end",
                    "ftrace_kprobe_hits_delta",
                ),
                _ => (
                    "ftrace_kprobe_misses_begin",
                    "ftrace_kprobe_misses_end",
                    "ftrace_kprobe_misses_delta",
                ),
            };
            if !end {
                sink.set_stat(begin, None, machine, value);
                continue;
            }
            sink.set_stat(end_name, None, machine, value);
            let begin = begin_of(sink, begin, None).unwrap_or(0);
            if begin != 0 {
                sink.set_stat(delta, None, machine, value.saturating_sub(begin));
            }
        }
        if !end && s.preserve_ftrace_buffer() {
            self.machines
                .entry(machine)
                .or_default()
                .preserve_ftrace_buffer = true;
        }
        let mut setup_errors = Vec::new();
        if !end && self.setup_errors_counted.insert((machine, seq_id)) {
            let text = |t: &Option<String>| t.clone().filter(|t| !t.is_empty());
            setup_errors.extend(
                s.failed_ftrace_events
                    .iter()
                    .map(|e| format!("Ftrace event failed: {e}")),
            );
            setup_errors.extend(
                s.unknown_ftrace_events
                    .iter()
                    .map(|e| format!("Ftrace event unknown: {e}")),
            );
            if let Some(t) = text(&s.atrace_errors) {
                setup_errors.push(format!("Atrace failures: {t}"));
            }
            if let Some(t) = text(&s.exclusive_feature_error) {
                setup_errors.push(format!("Ftrace exclusive feature error: {t}"));
            }
        }
        let mut failures = Vec::new();
        for &status in &s.ftrace_parse_errors {
            if status == ZERO_DATA_LENGTH {
                sink.stat("ftrace_abi_errors_skipped_zero_data_length", machine, 1);
                continue;
            }
            let name = usize::try_from(status)
                .ok()
                .and_then(|i| FTRACE_PARSE_STATUS.get(i));
            failures.push(name.map_or_else(|| status.to_string(), |n| n.to_string()));
        }
        if !failures.is_empty() {
            return Err(ParseError::invalid(format!(
                "the trace was recorded with errors parsing the kernel's ftrace data ({}); \
                 the events around them cannot be trusted (ERR:ftrace_parse)",
                failures.join(", ")
            )));
        }
        Ok(setup_errors)
    }

    /// End of the file: the losses of each sequence, what streaming into a file cost, and
    /// the config diagnostics.
    pub fn finish(&mut self, sink: &mut Sink) {
        let file = sink.current_file;
        let mut sequences: Vec<_> = self.sequences.iter().collect();
        sequences.sort_unstable_by_key(|(k, _)| **k);
        for (&(machine, seq_id), seq) in sequences {
            let idx = Some(i64::from(seq_id));
            if seq.lost > 0 {
                sink.set_stat("sequence_packet_loss", idx, machine, seq.lost);
            }
            if seq.skipped > 0 {
                sink.set_stat("sequence_packets_skipped", idx, machine, seq.skipped as i64);
            }
        }
        for (&machine, facts) in &self.machines {
            let Some(config) = &facts.config else {
                continue;
            };
            let stat = |name: &'static str, idx: Option<i64>| {
                sink.stats
                    .get(&StatKey {
                        name,
                        idx,
                        machine,
                        file,
                    })
                    .copied()
                    .unwrap_or(0)
            };
            let mut long_trace = Vec::new();
            if config.write_into_file() {
                if config.file_write_period_ms.unwrap_or(0) < LONG_TRACE_FILE_PERIOD_MS {
                    for i in 0..config.buffers.len() as i64 {
                        let v = stat("traced_buf_bytes_overwritten", Some(i));
                        if v > 0 {
                            long_trace.push((i, v));
                        }
                    }
                }
                let flushes_itself = facts
                    .service_version
                    .as_deref()
                    .and_then(service_major)
                    .is_some_and(|v| v >= SERVICE_FLUSHES_ITSELF);
                if config.flush_period_ms.unwrap_or(0) == 0 && !flushes_itself {
                    sink.stat("config_write_into_file_no_flush", machine, 1);
                }
            }
            for (i, v) in long_trace {
                sink.set_stat("long_trace_mode_bytes_overwritten", Some(i), machine, v);
            }
            let lost = |name: &str| {
                sink.stats.iter().any(|(k, &v)| {
                    k.name == name && k.machine == machine && k.file == file && v > 0
                })
            };
            let severe = |prefix: &str| {
                sink.stats.iter().any(|(k, &v)| {
                    k.name.starts_with(prefix)
                        && k.machine == machine
                        && k.file == file
                        && v > 0
                        && stats::lookup(k.name).is_some_and(|d| {
                            matches!(
                                d.severity,
                                stats::Severity::Error | stats::Severity::DataLoss
                            )
                        })
                })
            };
            let facts = diagnostics::Facts {
                ftrace_data_loss: lost("ftrace_cpu_has_data_loss")
                    || lost("ftrace_cpu_overrun_delta")
                    || lost("ftrace_cpu_commit_overrun_delta"),
                tracing_started_ns: facts.tracing_started_ns,
                heapprofd_errors: severe("heapprofd"),
                android_build_fingerprint: sink
                    .machines
                    .get(&machine)
                    .and_then(|m| m.android_build_fingerprint.clone()),
                display_video_frames: 0,
                android_video_errors: severe("android_video_"),
            };
            let rows = diagnostics::check(config, &facts, file);
            sink.diagnostics.extend(rows);
        }
    }
}

/// The 20 per-buffer counters, by stat name.
fn buffer_fields(b: &trace_stats::BufferStats) -> [(&'static str, Option<u64>); 20] {
    [
        ("traced_buf_buffer_size", b.buffer_size),
        ("traced_buf_bytes_written", b.bytes_written),
        ("traced_buf_bytes_overwritten", b.bytes_overwritten),
        ("traced_buf_bytes_read", b.bytes_read),
        ("traced_buf_padding_bytes_written", b.padding_bytes_written),
        ("traced_buf_padding_bytes_cleared", b.padding_bytes_cleared),
        ("traced_buf_chunks_written", b.chunks_written),
        ("traced_buf_chunks_rewritten", b.chunks_rewritten),
        ("traced_buf_chunks_overwritten", b.chunks_overwritten),
        ("traced_buf_chunks_discarded", b.chunks_discarded),
        ("traced_buf_chunks_read", b.chunks_read),
        ("traced_buf_chunks_relocated", b.chunks_relocated),
        (
            "traced_buf_chunks_committed_out_of_order",
            b.chunks_committed_out_of_order,
        ),
        ("traced_buf_write_wrap_count", b.write_wrap_count),
        ("traced_buf_patches_succeeded", b.patches_succeeded),
        ("traced_buf_patches_failed", b.patches_failed),
        ("traced_buf_readaheads_succeeded", b.readaheads_succeeded),
        ("traced_buf_readaheads_failed", b.readaheads_failed),
        ("traced_buf_abi_violations", b.abi_violations),
        (
            "traced_buf_trace_writer_packet_loss",
            b.trace_writer_packet_loss,
        ),
    ]
}

/// The major version of `Perfetto vNN.…` / `Perfetto vNN-…`.
fn service_major(version: &str) -> Option<u32> {
    let rest = version.strip_prefix("Perfetto v")?;
    let end = rest.find(['.', '-'])?;
    rest[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stat_named_here_is_catalogued() {
        let b = trace_stats::BufferStats::default();
        for name in CAUSES
            .iter()
            .map(|c| c.1)
            .chain(buffer_fields(&b).map(|f| f.0))
        {
            let def = stats::lookup(name).unwrap_or_else(|| panic!("{name}"));
            assert!(def.indexed, "{name}");
        }
    }

    #[test]
    fn service_versions_are_read_as_the_reference_reads_them() {
        assert_eq!(service_major("Perfetto v54.0-abc"), Some(54));
        assert_eq!(service_major("Perfetto v38-1234"), Some(38));
        assert_eq!(service_major("v54.0"), None);
        assert_eq!(service_major("Perfetto v54"), None);
    }

    #[test]
    fn loss_markers_count_per_buffer_except_each_sequences_first_packet() {
        let mut sink = Sink::new();
        let mut t = LossTracker::default();
        t.packet(0, Some(7), 1 | 64, false); // first packet of 7: never a loss
        t.packet(0, Some(7), 1 | 64, false);
        t.packet(0, Some(7), 1 | 256, false);
        t.packet(0, Some(8), 0, true);
        t.packet(0, Some(8), 0, true);
        t.skipped(0, 8);
        t.skipped(0, 8);
        t.packet(0, None, 1, false); // no sequence: not attributable
        let stats = protos::TraceStats {
            writer_stats: vec![
                trace_stats::WriterStats {
                    sequence_id: Some(7),
                    buffer: Some(1),
                    ..Default::default()
                },
                trace_stats::WriterStats {
                    sequence_id: Some(8),
                    buffer: Some(1),
                    ..Default::default()
                },
                trace_stats::WriterStats {
                    sequence_id: Some(99),
                    buffer: Some(2),
                    ..Default::default()
                },
            ],
            buffer_stats: vec![Default::default()],
            final_flush_outcome: Some(trace_stats::FinalFlushOutcome::FinalFlushFailed as i32),
            ..Default::default()
        };
        t.trace_stats(&mut sink, 0, &stats);
        let get = |name, idx| {
            sink.stats
                .get(&StatKey {
                    name,
                    idx,
                    machine: 0,
                    file: 0,
                })
                .copied()
        };
        assert_eq!(get("traced_buf_sequence_packet_loss", Some(1)), Some(2));
        assert_eq!(get("traced_buf_data_loss_overwrite", Some(1)), Some(1));
        assert_eq!(get("traced_buf_data_loss_smb_full", Some(1)), Some(1));
        assert_eq!(get("traced_buf_data_loss_read_gap", Some(1)), Some(0));
        assert_eq!(
            get("traced_buf_incremental_sequences_dropped", Some(1)),
            Some(1)
        );
        assert_eq!(
            get("traced_buf_sequence_packet_loss", Some(2)),
            None,
            "seq 99 never seen"
        );
        assert_eq!(get("traced_buf_chunks_discarded", Some(0)), Some(0));
        assert_eq!(get("traced_final_flush_failed", None), Some(1));
        assert_eq!(get("traced_producers_seen", None), Some(0));
    }

    #[test]
    fn streaming_overwrites_become_long_trace_losses_and_old_services_need_a_flush_period() {
        let mut sink = Sink::new();
        let mut t = LossTracker::default();
        let config = protos::TraceConfig {
            buffers: vec![
                protos::trace_config::BufferConfig {
                    size_kb: Some(64),
                    fill_policy: Some(FillPolicy::RingBuffer as i32),
                },
                protos::trace_config::BufferConfig {
                    size_kb: Some(64),
                    fill_policy: Some(FillPolicy::Discard as i32),
                },
            ],
            write_into_file: Some(true),
            file_write_period_ms: Some(5000),
            ..Default::default()
        };
        t.trace_config(&mut sink, 0, config);
        let stats = protos::TraceStats {
            buffer_stats: vec![
                trace_stats::BufferStats {
                    bytes_overwritten: Some(4096),
                    ..Default::default()
                },
                Default::default(),
            ],
            ..Default::default()
        };
        t.trace_stats(&mut sink, 0, &stats);
        t.finish(&mut sink);
        let get = |name, idx| {
            sink.stats
                .get(&StatKey {
                    name,
                    idx,
                    machine: 0,
                    file: 0,
                })
                .copied()
        };
        assert_eq!(
            get("long_trace_mode_bytes_overwritten", Some(0)),
            Some(4096)
        );
        assert_eq!(get("long_trace_mode_bytes_overwritten", Some(1)), None);
        assert_eq!(get("config_write_into_file_discard", Some(1)), Some(1));
        assert_eq!(get("config_write_into_file_no_flush", None), Some(1));
    }
}
