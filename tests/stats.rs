//! The `stats` table and `__intrinsic_trace_diagnostics` on a trace whose recorder lost data
//! in every way TraceStats, FtraceStats and the loss markers report it
//! (`tests/data/buffer_loss.pftrace`, written by `tools/gen_buffer_loss_trace.py`), and the
//! reference's catalogue on a plain fixture.

mod common;

use common::{rows, table, TempFile};
use rusqlite::Connection;

fn import(name: &str) -> (Connection, TempFile) {
    common::import_data("", name)
}

fn stat_rows(conn: &Connection, filter: &str) -> Vec<Vec<String>> {
    rows(
        conn,
        &format!(
            "select name, coalesce(idx, '-'), value, severity
             from (select * from stats union all select * from sextant_stats)
             where {filter} order by key is null, key, name, idx"
        ),
    )
}

#[test]
fn every_per_buffer_counter_is_read_indexed_by_buffer() {
    let (conn, _db) = import("buffer_loss.pftrace");
    let got = rows(
        &conn,
        "select idx, count(*) from stats where name like 'traced_buf_%'
           and name not like 'traced_buf_data_loss_%' and name not in
           ('traced_buf_sequence_packet_loss', 'traced_buf_incremental_sequences_dropped')
         group by idx order by idx",
    );
    // The 20 BufferStats counters for each of the two buffers, written even when 0.
    assert_eq!(got, table(&[["0", "20"], ["1", "20"]]));
    let got = stat_rows(
        &conn,
        "name in ('traced_buf_bytes_overwritten', 'traced_buf_chunks_discarded',
                  'traced_buf_patches_failed', 'traced_buf_trace_writer_packet_loss')
         and value > 0",
    );
    assert_eq!(
        got,
        table(&[
            ["traced_buf_bytes_overwritten", "0", "3145728", "info"],
            ["traced_buf_chunks_discarded", "1", "12", "info"],
            ["traced_buf_patches_failed", "1", "2", "data_loss"],
            ["traced_buf_trace_writer_packet_loss", "1", "3", "data_loss"],
        ])
    );
}

#[test]
fn loss_markers_are_attributed_to_buffers_by_cause_and_to_sequences() {
    let (conn, _db) = import("buffer_loss.pftrace");
    let got = stat_rows(
        &conn,
        "(name like 'traced_buf_data_loss_%' or name like 'traced_buf_%sequence%'
          or name like 'sequence_packet%') and value > 0",
    );
    assert_eq!(
        got,
        table(&[
            ["traced_buf_sequence_packet_loss", "0", "1", "data_loss"],
            ["traced_buf_sequence_packet_loss", "1", "1", "data_loss"],
            [
                "traced_buf_incremental_sequences_dropped",
                "1",
                "1",
                "data_loss"
            ],
            ["traced_buf_data_loss_read_gap", "0", "1", "data_loss"],
            ["traced_buf_data_loss_overwrite", "0", "1", "data_loss"],
            ["traced_buf_data_loss_smb_full", "1", "1", "data_loss"],
            ["sequence_packet_loss", "1", "1", "data_loss"],
            ["sequence_packet_loss", "2", "1", "data_loss"],
            ["sequence_packet_loss_flagged", "-", "2", "data_loss"],
            ["sequence_packets_skipped", "3", "3", "notice"],
        ])
    );
}

#[test]
fn flushes_ftrace_overruns_and_streaming_losses_are_counted() {
    let (conn, _db) = import("buffer_loss.pftrace");
    let got = stat_rows(
        &conn,
        "name in ('traced_final_flush_failed', 'traced_final_flush_succeeded',
                  'traced_flushes_failed', 'ftrace_cpu_overrun_delta',
                  'ftrace_cpu_has_data_loss', 'config_write_into_file_no_flush',
                  'config_write_into_file_discard', 'long_trace_mode_bytes_overwritten')",
    );
    assert_eq!(
        got,
        table(&[
            ["ftrace_cpu_overrun_delta", "0", "0", "info"],
            ["ftrace_cpu_overrun_delta", "1", "1500", "info"],
            ["ftrace_cpu_has_data_loss", "1", "1", "data_loss"],
            ["traced_final_flush_failed", "-", "1", "data_loss"],
            ["traced_final_flush_succeeded", "-", "0", "info"],
            ["traced_flushes_failed", "-", "1", "data_loss"],
            ["config_write_into_file_no_flush", "-", "1", "error"],
            ["config_write_into_file_discard", "1", "1", "data_loss"],
            [
                "long_trace_mode_bytes_overwritten",
                "0",
                "3145728",
                "data_loss"
            ],
        ])
    );
}

#[test]
fn the_config_is_checked_against_the_trace() {
    let (conn, _db) = import("buffer_loss.pftrace");
    let got = rows(
        &conn,
        "select key, title, confidence, trace_id from __intrinsic_trace_diagnostics order by id",
    );
    // 512 KB drained once a second is 0.5 MB/s; the ftrace buffers lost data, which makes
    // the reference sure of both ftrace findings.
    assert_eq!(
        got,
        table(&[
            ["tiny_ftrace_buffer", "Ftrace buffer too small", "0.9", "0"],
            [
                "low_ftrace_drain_bandwidth",
                "Low ftrace drain bandwidth",
                "0.9",
                "0"
            ],
            [
                "discard_buffer_for_streaming",
                "DISCARD buffer for streaming",
                "0.8",
                "0"
            ],
        ])
    );
}

#[test]
fn every_single_stat_of_the_reference_has_a_row_even_at_zero() {
    let (conn, _db) = import("a_track_events.pftrace");
    let got = rows(
        &conn,
        "select count(distinct name), count(distinct key), min(key), max(key) from stats
         where key is not null",
    );
    // The reference's 269 per-context single stats and its 9 global ones.
    assert_eq!(got, table(&[["278", "278", "0", "357"]]));
    let got = rows(
        &conn,
        "select value, machine_id, trace_id from stats where name = 'traced_chunks_discarded'",
    );
    assert_eq!(got, table(&[["0", "0", "0"]]));
    let got = rows(
        &conn,
        "select value, machine_id, trace_id from stats where name = 'parse_trace_duration_ns'",
    );
    assert_eq!(got, table(&[["0", "NULL", "NULL"]]));
    // No TraceStats: no per-buffer rows, and nothing says a buffer lost nothing.
    let got = rows(
        &conn,
        "select count(*) from stats where name like 'traced_buf_%'",
    );
    assert_eq!(got, table(&[["0"]]));
}

#[test]
fn the_buffer_loss_trace_has_a_row_for_a_discarded_chunk_stat_as_the_reference_does() {
    let (conn, _db) = import("buffer_loss.pftrace");
    let got = rows(
        &conn,
        "select name, idx, value, key from stats where name = 'traced_buf_chunks_discarded'
         order by idx",
    );
    assert_eq!(
        got,
        table(&[
            ["traced_buf_chunks_discarded", "0", "0", "130"],
            ["traced_buf_chunks_discarded", "1", "12", "130"],
        ])
    );
}

/// A Trace of the given serialized TracePackets.
fn trace(packets: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in packets {
        out.push(0x0a);
        out.push(p.len() as u8);
        out.extend_from_slice(p);
    }
    out
}

#[test]
fn packets_without_a_sequence_are_counted_not_silently_used() {
    // timestamp = 5 (field 8), then: previous_packet_dropped = 1 (field 42); an empty
    // TrackEvent (field 11); an unknown payload kind (field 900, 1 byte); and a TrackEvent
    // with a sequence id (field 10) for contrast.
    let bytes = trace(&[
        &[0x40, 5, 0xd0, 0x02, 1],
        &[0x40, 5, 0x5a, 0],
        &[0x40, 5, 0xa2, 0x38, 1, 0],
        &[0x40, 5, 0x50, 7, 0x5a, 0],
    ]);
    let input = TempFile::with_bytes("no_sequence.pftrace", &bytes);
    let db = TempFile::new("no_sequence.sqlite");
    sextant::import::import_path(input.path(), db.path()).expect("imports");
    let conn = sextant::db::open_read_only(db.path()).expect("opens");
    let got = stat_rows(
        &conn,
        "name in ('previous_packet_dropped_missing_sequence_id',
                  'track_event_missing_sequence_id', 'proto_packet_kind_not_imported')",
    );
    assert_eq!(
        got,
        table(&[
            ["track_event_missing_sequence_id", "-", "1", "error"],
            [
                "previous_packet_dropped_missing_sequence_id",
                "-",
                "1",
                "error"
            ],
            ["proto_packet_kind_not_imported", "900", "1", "notice"],
        ])
    );
}

/// A Trace of the given packets (prost messages).
fn encode(packets: Vec<sextant::protos::TracePacket>) -> Vec<u8> {
    use prost::Message;
    sextant::protos::Trace { packet: packets }.encode_to_vec()
}

fn import_bytes(tag: &str, bytes: &[u8]) -> (Connection, TempFile, TempFile) {
    let input = TempFile::with_bytes(tag, bytes);
    let db = TempFile::new(&format!("{tag}.sqlite"));
    sextant::import::import_path(input.path(), db.path()).expect("imports");
    let conn = sextant::db::open_read_only(db.path()).expect("opens");
    (conn, input, db)
}

#[test]
fn ftrace_cpu_stats_write_every_counter_of_each_cpu_entry() {
    use sextant::protos::{ftrace_stats::Phase, trace_packet::Data, FtraceCpuStats, FtraceStats};
    let stats = |phase: Phase, cpus: Vec<FtraceCpuStats>| sextant::protos::TracePacket {
        data: Some(Data::FtraceStats(FtraceStats {
            phase: Some(phase as i32),
            cpu_stats: cpus,
            ..Default::default()
        })),
        ..Default::default()
    };
    // Start: cpu 0 with 7 entries and nothing else said; end: cpu 0 with 9 entries and an
    // oldest event time past i64, cpu 2 with no start entry.
    let bytes = encode(vec![
        stats(
            Phase::StartOfTrace,
            vec![FtraceCpuStats {
                cpu: Some(0),
                entries: Some(7),
                ..Default::default()
            }],
        ),
        stats(
            Phase::EndOfTrace,
            vec![
                FtraceCpuStats {
                    cpu: Some(0),
                    entries: Some(9),
                    overrun: Some(4),
                    oldest_event_ts: Some(1e30),
                    ..Default::default()
                },
                FtraceCpuStats {
                    cpu: Some(2),
                    entries: Some(5),
                    ..Default::default()
                },
            ],
        ),
    ]);
    let (conn, _input, _db) = import_bytes("ftrace_stats.pftrace", &bytes);
    let count = |filter: &str| {
        rows(
            &conn,
            &format!("select count(*) from stats where name like 'ftrace_cpu_%' and {filter}"),
        )
    };
    // The reference reads absent counters as 0 and writes all 8 of each entry, and the 6
    // deltas of a cpu whose start it has.
    assert_eq!(count("name like '%_begin'"), table(&[["8"]]));
    assert_eq!(count("name like '%_end' and idx = 0"), table(&[["8"]]));
    assert_eq!(count("name like '%_end' and idx = 2"), table(&[["8"]]));
    assert_eq!(count("name like '%_delta' and idx = 0"), table(&[["6"]]));
    assert_eq!(count("name like '%_delta' and idx = 2"), table(&[["0"]]));
    let got = stat_rows(
        &conn,
        "name in ('ftrace_cpu_entries_delta', 'ftrace_cpu_overrun_delta',
                  'ftrace_cpu_overrun_begin', 'ftrace_cpu_oldest_event_ts_end')",
    );
    assert_eq!(
        got,
        table(&[
            ["ftrace_cpu_entries_delta", "0", "2", "info"],
            [
                "ftrace_cpu_oldest_event_ts_end",
                "0",
                "9223372036854775807",
                "info"
            ],
            ["ftrace_cpu_oldest_event_ts_end", "2", "0", "info"],
            ["ftrace_cpu_overrun_begin", "0", "0", "info"],
            ["ftrace_cpu_overrun_delta", "0", "4", "info"],
        ])
    );
    // Indexed rows are numbered in the order they were written, as the reference's: the
    // end packet's cpu 0 (each counter, then its delta) before its cpu 2.
    let got = rows(
        &conn,
        "select name, idx from stats where name like 'ftrace_cpu_%' and id > (select max(id)
           from stats where name like 'ftrace_cpu_%_begin') order by id limit 4",
    );
    assert_eq!(
        got,
        table(&[
            ["ftrace_cpu_entries_end", "0"],
            ["ftrace_cpu_entries_delta", "0"],
            ["ftrace_cpu_overrun_end", "0"],
            ["ftrace_cpu_overrun_delta", "0"],
        ])
    );
    let got = rows(
        &conn,
        "select count(*) from stats where idx = 2 and id < (select max(id) from stats
           where idx = 0)",
    );
    assert_eq!(got, table(&[["0"]]));
}

#[test]
fn stats_holds_only_the_references_stats_and_sextant_stats_the_rest() {
    let (conn, _db) = import("c_sched.pftrace");
    let got = rows(&conn, "select count(*) from stats where key is null");
    assert_eq!(got, table(&[["0"]]));
    // A trace with loss markers: Sextant's per-sequence counters are non-zero, but a query
    // listing every non-zero stat sees only the reference's.
    let (conn, _db) = import("buffer_loss.pftrace");
    let got = rows(
        &conn,
        "select count(*), count(key) from stats where value > 0",
    );
    assert_eq!(
        got[0][0], got[0][1],
        "a stat without a reference key in stats"
    );
    // Row ids count from 0, as the reference's do: the 9 global rows come first.
    let got = rows(
        &conn,
        "select min(id), max(id) + 1 = count(*), (select id from stats
           where name = 'extra_parsing_descriptors_error') from stats",
    );
    assert_eq!(got, table(&[["0", "1", "8"]]));
    let got = rows(
        &conn,
        "select count(*) from stats where name like 'sequence_%'",
    );
    assert_eq!(got, table(&[["0"]]));
    let got = rows(
        &conn,
        "select id, name, coalesce(idx, '-'), value, severity, source, coalesce(key, '-')
         from sextant_stats where name = 'sequence_packet_loss_flagged'",
    );
    assert_eq!(
        got,
        table(&[[
            "0",
            "sequence_packet_loss_flagged",
            "-",
            "2",
            "data_loss",
            "analysis",
            "-"
        ]])
    );
}

/// The import's error on `bytes` (it must fail).
fn import_error(tag: &str, bytes: &[u8]) -> String {
    let input = TempFile::with_bytes(tag, bytes);
    let db = TempFile::new(&format!("{tag}.sqlite"));
    match sextant::import::import_path(input.path(), db.path()) {
        Ok(_) => panic!("{tag}: imported, but the reference's import fails"),
        Err(e) => format!("{e:#}"),
    }
}

fn ftrace_stats_packet(stats: sextant::protos::FtraceStats) -> sextant::protos::TracePacket {
    sextant::protos::TracePacket {
        optional_trusted_packet_sequence_id: Some(
            sextant::protos::trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(
                1,
            ),
        ),
        data: Some(sextant::protos::trace_packet::Data::FtraceStats(stats)),
        ..Default::default()
    }
}

#[test]
fn ftrace_setup_errors_are_import_logs_once_per_sequence() {
    use sextant::protos::{ftrace_stats::Phase, FtraceStats};
    let start = |failed: &[&str], atrace: &str| {
        ftrace_stats_packet(FtraceStats {
            phase: Some(Phase::StartOfTrace as i32),
            failed_ftrace_events: failed.iter().map(|s| s.to_string()).collect(),
            unknown_ftrace_events: vec!["c/z".into()],
            atrace_errors: Some(atrace.into()),
            exclusive_feature_error: Some(String::new()),
            ..Default::default()
        })
    };
    // The second START of the sequence is not counted again.
    let bytes = encode(vec![start(&["a/x", "b/y"], "boom"), start(&["d/w"], "")]);
    let (conn, _input, _db) = import_bytes("ftrace_setup_errors.pftrace", &bytes);
    let got = rows(
        &conn,
        "select l.name, l.severity, a.key, a.string_value from _trace_import_logs l
         join args a using (arg_set_id) order by l.id",
    );
    let log = |message: &str| {
        vec![
            "ftrace_setup_errors".to_string(),
            "notice".into(),
            "message".into(),
            message.into(),
        ]
    };
    assert_eq!(
        got,
        vec![
            log("Ftrace event failed: a/x"),
            log("Ftrace event failed: b/y"),
            log("Ftrace event unknown: c/z"),
            log("Atrace failures: boom"),
        ]
    );
    let got = rows(
        &conn,
        "select value from stats where name = 'ftrace_setup_errors'",
    );
    assert_eq!(got, table(&[["4"]]));
}

#[test]
fn ftrace_parse_errors_other_than_zero_length_records_fail_the_import() {
    use sextant::protos::{ftrace_stats::Phase, FtraceStats};
    let stats = |errors: Vec<i32>| {
        ftrace_stats_packet(FtraceStats {
            phase: Some(Phase::EndOfTrace as i32),
            ftrace_parse_errors: errors,
            ..Default::default()
        })
    };
    // ABI_ZERO_DATA_LENGTH (12) is tolerated and counted.
    let (conn, _input, _db) =
        import_bytes("ftrace_zero.pftrace", &encode(vec![stats(vec![12, 12])]));
    let got = rows(
        &conn,
        "select value from stats where name = 'ftrace_abi_errors_skipped_zero_data_length'",
    );
    assert_eq!(got, table(&[["2"]]));
    // ABI_INVALID_PAGE_HEADER (4) and INVALID_EVENT (17) fail it, named.
    let error = import_error("ftrace_abi.pftrace", &encode(vec![stats(vec![12, 4, 17])]));
    assert!(error.contains("(ERR:ftrace_parse)"), "{error}");
    assert!(
        error.contains("FTRACE_STATUS_ABI_INVALID_PAGE_HEADER, FTRACE_STATUS_INVALID_EVENT"),
        "{error}"
    );
    // So does an FtraceStats that is neither the start's nor the end's.
    let unknown = ftrace_stats_packet(FtraceStats::default());
    let error = import_error("ftrace_phase.pftrace", &encode(vec![unknown]));
    assert!(error.contains("phase"), "{error}");
}

#[test]
fn ftrace_bundles_without_a_cpu_are_dropped_and_past_1024_cpus_fail_the_import() {
    use sextant::protos::{ftrace_event, trace_packet::Data, FtraceEvent, FtraceEventBundle};
    let bundle = |cpu: Option<u32>, ts: u64| sextant::protos::TracePacket {
        optional_trusted_packet_sequence_id: Some(
            sextant::protos::trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(
                1,
            ),
        ),
        data: Some(Data::FtraceEvents(FtraceEventBundle {
            cpu,
            lost_events: Some(true),
            event: vec![FtraceEvent {
                timestamp: Some(ts),
                pid: Some(7),
                event: Some(ftrace_event::Event::Print(Default::default())),
                ..Default::default()
            }],
            ..Default::default()
        })),
        ..Default::default()
    };
    let bytes = encode(vec![bundle(Some(1), 1000), bundle(None, 1100)]);
    let (conn, _input, _db) = import_bytes("ftrace_no_cpu.pftrace", &bytes);
    let got = stat_rows(
        &conn,
        "name in ('ftrace_bundle_tokenizer_errors', 'ftrace_cpu_has_data_loss') and value > 0",
    );
    assert_eq!(
        got,
        table(&[
            ["ftrace_bundle_tokenizer_errors", "-", "1", "error"],
            ["ftrace_cpu_has_data_loss", "1", "1", "data_loss"],
        ])
    );
    let got = rows(&conn, "select ts, cpu from ftrace_event");
    assert_eq!(got, table(&[["1000", "1"]]));
    let got = rows(
        &conn,
        "select read, dropped, unaccounted from __sextant_file_events",
    );
    assert_eq!(got, table(&[["2", "1", "0"]]));
    let error = import_error(
        "ftrace_cpu_1024.pftrace",
        &encode(vec![bundle(Some(1024), 1)]),
    );
    assert!(
        error.contains("CPU 1024 is greater than maximum allowed of 1024"),
        "{error}"
    );
}

#[test]
fn a_packet_needing_incremental_state_on_sequence_zero_fails_the_import() {
    let packet = sextant::protos::TracePacket {
        timestamp: Some(10),
        sequence_flags: Some(2),
        ..Default::default()
    };
    let error = import_error("needs_state_seq0.pftrace", &encode(vec![packet]));
    assert!(error.contains("SEQ_NEEDS_INCREMENTAL_STATE"), "{error}");
}

/// A stat the model counts (after every file was read) belongs to the file its event came
/// from, not to the archive's last file: `a.json`'s flow end without a start is `a.json`'s,
/// and `b.json`, which lost nothing, gets no row of it (the Stats pane listed the loss
/// under `b.json`, and under every machine the last file was read after).
#[test]
fn a_stat_counted_by_the_model_belongs_to_the_file_of_its_event() {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    for (name, text) in [
        (
            "a.json",
            r#"[{"ph":"X","name":"x","ts":1,"dur":2,"pid":1,"tid":1},
                {"ph":"f","bp":"e","id":7,"name":"fl","cat":"c","ts":2,"pid":1,"tid":1}]"#,
        ),
        (
            "b.json",
            r#"[{"ph":"X","name":"y","ts":1,"dur":2,"pid":2,"tid":2}]"#,
        ),
    ] {
        w.start_file(name, opts).unwrap();
        w.write_all(text.as_bytes()).unwrap();
    }
    let zip = w.finish().unwrap().into_inner();
    let (conn, _db, _zip) = import_bytes("model-stat-file.zip", &zip);
    assert_eq!(
        rows(
            &conn,
            "select f.name, s.value from stats s join __intrinsic_trace_file f on f.id = s.trace_id
             where s.name = 'flow_end_without_start' order by f.name"
        ),
        table(&[["a.json", "1"], ["b.json", "0"]])
    );
}

/// What Trace Processor's TrackEvent tokenizer refuses is counted and says nothing: a
/// TrackDescriptor without a uuid, a thread one without pid or tid, a process one without
/// pid, a parent on the default track (uuid 0); a ThreadDescriptor packet without a
/// sequence or on a sequence whose incremental state is not valid; an event with a delta
/// thread time or instruction count but no ThreadDescriptor base since the last loss
/// (behaviour-stats.md §6, keys 316-318, 323, 330, 333, 342, 344, 345); a child ordering outside the enum is counted too.
#[test]
fn refused_descriptors_and_events_without_delta_bases_are_counted_and_dropped() {
    use sextant::protos::{
        trace_packet::{Data, OptionalTrustedPacketSequenceId},
        track_descriptor::StaticOrDynamicName,
        track_event::{NameField, ThreadInstructionCount, ThreadTime, Type},
        ProcessDescriptor, ThreadDescriptor, TracePacket, TrackDescriptor, TrackEvent,
    };
    let seq = |id: u32| Some(OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(id));
    let descriptor = |d: TrackDescriptor| TracePacket {
        timestamp: Some(5),
        optional_trusted_packet_sequence_id: seq(1),
        sequence_flags: Some(1),
        data: Some(Data::TrackDescriptor(d)),
        ..Default::default()
    };
    let named = |uuid: Option<u64>, name: &str| TrackDescriptor {
        uuid,
        static_or_dynamic_name: Some(StaticOrDynamicName::Name(name.into())),
        ..Default::default()
    };
    let thread_descriptor = |s: Option<u32>, flags: u32, tid: i64| TracePacket {
        timestamp: Some(6),
        optional_trusted_packet_sequence_id: s.and_then(seq),
        sequence_flags: Some(flags),
        data: Some(Data::ThreadDescriptor(ThreadDescriptor {
            pid: Some(10),
            tid: Some(tid),
            thread_name: Some(format!("t{tid}")),
            ..Default::default()
        })),
        ..Default::default()
    };
    let event = |s: u32, ts: u64, name: &str, f: &dyn Fn(&mut TrackEvent)| {
        let mut ev = TrackEvent {
            track_uuid: Some(0),
            r#type: Some(Type::Instant as i32),
            name_field: Some(NameField::Name(name.into())),
            ..Default::default()
        };
        f(&mut ev);
        TracePacket {
            timestamp: Some(ts),
            optional_trusted_packet_sequence_id: seq(s),
            data: Some(Data::TrackEvent(ev)),
            ..Default::default()
        }
    };
    let mut no_tid = named(Some(5), "no tid");
    no_tid.thread = Some(ThreadDescriptor {
        pid: Some(3),
        ..Default::default()
    });
    let mut no_pid = named(Some(6), "no pid");
    no_pid.process = Some(ProcessDescriptor::default());
    let mut bad_ordering = named(Some(7), "bad ordering");
    bad_ordering.child_ordering = Some(9);
    let mut default_with_parent = named(Some(0), "default with parent");
    default_with_parent.parent_uuid = Some(9);
    let packets = vec![
        descriptor(named(None, "no uuid")),
        descriptor(no_tid),
        descriptor(no_pid),
        descriptor(default_with_parent),
        descriptor(bad_ordering),
        thread_descriptor(None, 0, 11),
        // Sequence 2 has not cleared its incremental state yet.
        thread_descriptor(Some(2), 0, 12),
        // Sequence 3: a base, then a loss; its delta thread time / instruction count
        // events are dropped, an absolute one is kept.
        thread_descriptor(Some(3), 1, 13),
        TracePacket {
            timestamp: Some(7),
            optional_trusted_packet_sequence_id: seq(3),
            previous_packet_dropped: Some(1),
            ..Default::default()
        },
        event(3, 8, "thread time delta", &|e| {
            e.thread_time = Some(ThreadTime::ThreadTimeDeltaUs(5))
        }),
        event(3, 9, "instruction delta", &|e| {
            e.thread_instruction_count =
                Some(ThreadInstructionCount::ThreadInstructionCountDelta(5))
        }),
        event(3, 10, "absolute", &|e| {
            e.thread_time = Some(ThreadTime::ThreadTimeAbsoluteUs(5))
        }),
    ];
    let (conn, _db, _input) = import_bytes("refused_descriptors.pftrace", &encode(packets));
    assert_eq!(
        stat_rows(
            &conn,
            "value > 0 and name glob '*descriptor*' or name glob '*delta_without*' and value > 0"
        ),
        table(&[
            ["track_descriptor_missing_uuid", "-", "1", "error"],
            ["track_descriptor_thread_missing_pid_tid", "-", "1", "error"],
            ["track_descriptor_process_missing_pid", "-", "1", "error"],
            ["thread_descriptor_missing_sequence_id", "-", "1", "error"],
            [
                "track_descriptor_default_track_with_parent",
                "-",
                "1",
                "error"
            ],
            ["track_descriptor_invalid_child_ordering", "-", "1", "error"],
            [
                "thread_descriptor_skipped_incremental_state_invalid",
                "-",
                "1",
                "notice"
            ],
            [
                "track_event_skipped_thread_time_delta_without_valid_state",
                "-",
                "1",
                "notice"
            ],
            [
                "track_event_skipped_thread_instruction_delta_without_valid_state",
                "-",
                "1",
                "notice"
            ],
        ])
    );
    // None of the refused descriptors named a track, made a thread or a process, or had a
    // parent looked up.
    assert_eq!(
        rows(&conn, "select name from track order by id"),
        table(&[["Default Track"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select tid, name from thread where tid > 10 order by tid"
        ),
        table(&[["13", "t13"]])
    );
    assert_eq!(
        rows(&conn, "select count(*) from process where pid = 3"),
        table(&[["0"]])
    );
    assert_eq!(
        rows(&conn, "select name from slice order by ts"),
        table(&[["absolute"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select count(*) from stats where name = 'track_hierarchy_missing_uuid' and value > 0"
        ),
        table(&[["0"]])
    );
}
