#!/usr/bin/env python3
"""Writes src/stats/catalogue.rs: every stat Trace Processor (the reference) lists, in its order
(the `key` column), with its type, scope, severity and source, then the stats only Sextant has.

    python3 tools/gen_stats_catalogue.py ../shared/reference/behaviour-stats.md > src/stats/catalogue.rs

The reference's list comes from the table in section 6 of the notes (written from the reference's
`stats.h`). A description is Sextant's own text where it has one (below: what the stat means for the
person reviewing losses), else the note's. Only needed when the reference's list changes or a text is
reworded; the output is committed.
"""
import re
import sys

# Sextant's texts for reference stats: what happened and, where it helps, what to do.
TEXT = {
    # The reference's own text, as its diff tests print it.
    'generic_task_state_invalid_order': 'Invalid order of generic task state events. Should never happen.',
    'clock_sync_unrelatable_clock_domains': 'Events on a clock that no snapshot, manifest override or rendezvous relates to trace time were dropped. Record clock snapshots, or add a manifest `clocks` override.',
    'clock_sync_failure': 'A timestamp could not be converted to trace time and its event was dropped (the reference never writes it; the clock_sync_failure_* stats give the cause).',
    'clock_sync_failure_no_path': 'Events whose clock has no path of relations to the trace_time clock were dropped. Record clock snapshots, or add a manifest `clocks` override.',
    'clock_sync_failure_unknown_source_clock': "Events on a clock that no ClockSnapshot mentions were dropped. Record the clock in the trace's ClockSnapshots.",
    'clock_sync_failure_unknown_target_clock': 'Events could not be converted because the trace_time clock appears in no snapshot; they were dropped. Choose a trace_time clock the traces record.',
    'clock_sync_failure_undeferrable_packet_loss': 'Proto packets whose timestamp could not be converted to trace time, even at the end of their file, were dropped.',
    'trace_sorter_negative_timestamp_dropped': 'Events that land before the start of trace time were dropped. Pick another trace_time clock or fix the offsets.',
    'json_tokenizer_failure': 'A JSON event could not be read (bad field types or syntax); it was dropped.',
    'json_parser_failure': 'A JSON event missed a field its phase needs (e.g. dur on X, tid on a thread instant); it was dropped.',
    'json_display_time_unit': 'The JSON file sets displayTimeUnit; it only affects display and is ignored.',
    'systrace_parse_failure': 'A systrace line or atrace marker could not be parsed; it was skipped.',
    'misplaced_end_event': 'Slices were still open when an enclosing slice ended; they were closed at its end.',
    'slice_drop_overlapping_complete_event': 'A complete slice overlapped its parent partially and was dropped.',
    'slice_spill_overlapping_complete_event': 'A JSON complete event overlapped its parent partially; it was moved to an overflow track.',
    'slice_negative_duration': 'A slice with a negative duration was dropped.',
    'flow_duplicate_id': 'A flow began with an id already in use.',
    'flow_no_enclosing_slice': 'A flow event had no slice to attach to.',
    'flow_step_without_start': 'A flow step had no flow begin.',
    'flow_end_without_start': 'A flow end had no flow begin.',
    'flow_invalid_id': 'A flow event had an unusable id.',
    'flow_without_direction': 'A flow binding had neither flow_in nor flow_out.',
    'mismatched_sched_switch_tids': "A sched_switch's prev_pid did not match the task running on that cpu; the running slice was left open.",
    'task_state_invalid': 'A sched_switch prev_state could not be decoded.',
    'compact_sched_switch_skipped': "The first compact sched_switch of each cpu only primes the cpu's state (as Trace Processor does).",
    'compact_sched_has_parse_errors': 'A compact_sched bundle had columns of different lengths.',
    'compact_sched_waking_skipped': 'A compact sched_waking came before any switch on its cpu.',
    'packet_skipped_seq_needs_incremental_state_invalid': 'Packets that need incremental state were skipped because their sequence lost data and had not yet re-emitted its state.',
    'interned_data_skipped_incremental_state_invalid': 'Interned data on a sequence with invalid incremental state was ignored.',
    'interned_data_tokenizer_errors': 'An event referred to interned data that was never defined.',
    'track_event_parser_errors': 'TrackEvents that could not be imported (missing type, thread, id or counter track).',
    'track_event_invalid_timestamp': 'TrackEvents with a negative timestamp were dropped.',
    'track_event_missing_sequence_id': 'TrackEvent packets without a trusted_packet_sequence_id were dropped.',
    'cpu_info_unknown_cpu_features': 'CpuInfo named cpu feature bits Trace Processor does not know; raw_bitmap keeps them.',
    'ftrace_cpu_overrun_delta': 'Ftrace events lost to ring-buffer overruns during the trace, per cpu (the reference calls it info although the events are lost): make the buffer bigger (buffer_size_kb), drain it more often or record fewer events.',
    'ftrace_cpu_commit_overrun_delta': 'Ftrace events lost to commit overruns during the trace, per cpu.',
    'ftrace_cpu_dropped_events_delta': 'Ftrace events the kernel dropped during the trace, per cpu.',
    'ftrace_cpu_has_data_loss': 'An ftrace bundle of this cpu said the kernel lost events before it (lost_events): the per-cpu ring buffer was full.',
    'ftrace_abi_errors_skipped_zero_data_length': 'Ftrace ring-buffer records of zero data length were skipped by the tracing service.',
    'ftrace_setup_errors': 'Ftrace setup problems the service reported at the start (events that failed or are unknown to the kernel, atrace errors): those events were never recorded.',
    'ftrace_missing_event_id': 'Ftrace events with no payload field (only a timestamp and pid) were dropped.',
    'rss_stat_unknown_keys': 'rss_stat events for a memory counter Trace Processor does not know were dropped.',
    'rss_stat_negative_size': 'rss_stat events with a negative size were dropped.',
    'rss_stat_unknown_thread_for_mm_id': 'rss_stat events for a memory map no thread had reported as its own were dropped.',
    'traced_buf_buffer_size': 'Size of the trace buffer in bytes (idx = the buffer).',
    'traced_buf_bytes_written': 'Bytes producers wrote into the trace buffer.',
    'traced_buf_bytes_overwritten': 'Bytes overwritten in the ring buffer before they were read: data lost unless the trace was meant to keep only its end.',
    'traced_buf_bytes_read': 'Bytes read out of the trace buffer.',
    'traced_buf_bytes_filtered_out': 'Bytes the trace filter removed from this buffer.',
    'traced_buf_padding_bytes_written': 'Padding bytes written into the buffer.',
    'traced_buf_padding_bytes_cleared': 'Padding bytes cleared in the buffer.',
    'traced_buf_chunks_written': 'Chunks written into the buffer.',
    'traced_buf_chunks_rewritten': 'Chunks rewritten in place (scraped and committed again).',
    'traced_buf_chunks_overwritten': 'Chunks overwritten in ring-buffer mode before they were read.',
    'traced_buf_chunks_discarded': 'Chunks the service discarded: the buffer was full in DISCARD mode, or the chunks were bad.',
    'traced_buf_chunks_read': 'Chunks read out of the buffer.',
    'traced_buf_chunks_relocated': 'Chunks moved within the buffer.',
    'traced_buf_chunks_committed_out_of_order': 'Chunks committed out of order.',
    'traced_buf_write_wrap_count': 'Times the write pointer wrapped around the ring buffer.',
    'traced_buf_patches_succeeded': 'Chunk patches applied.',
    'traced_buf_patches_failed': 'Chunk patches that failed: the chunk had already left the buffer, so a packet there is incomplete.',
    'traced_buf_readaheads_succeeded': 'Read-aheads that succeeded.',
    'traced_buf_readaheads_failed': 'Read-aheads that failed.',
    'traced_buf_abi_violations': 'Chunks a producer wrote against the shared-memory ABI; the service dropped them.',
    'traced_buf_trace_writer_packet_loss': 'Packets trace writers lost before they reached this buffer.',
    'traced_buf_sequence_packet_loss': "Packets of this buffer's sequences that came after a gap (previous_packet_dropped), counted from the loss markers.",
    'traced_buf_incremental_sequences_dropped': "Sequences of this buffer whose every packet needing incremental state was skipped: their interned data never arrived.",
    'traced_buf_data_loss_read_gap': 'Loss markers of this buffer caused by a gap when the service read the buffer (data overwritten before it was read).',
    'traced_buf_data_loss_chunk_corrupted': 'Loss markers of this buffer caused by corrupted chunks.',
    'traced_buf_data_loss_orphan_continuation': 'Loss markers caused by continuation fragments whose first fragment was lost.',
    'traced_buf_data_loss_reassembly_gap': 'Loss markers caused by a gap while reassembling fragmented packets.',
    'traced_buf_data_loss_reassembly_broken_chain': 'Loss markers caused by a broken chain of packet fragments.',
    'traced_buf_data_loss_overwrite': 'Loss markers caused by data overwritten in the ring buffer.',
    'traced_buf_data_loss_writer_abort': 'Loss markers caused by a writer that aborted (e.g. its process died mid-packet).',
    'traced_buf_data_loss_smb_full': "Loss markers caused by the producer's shared memory buffer being full: the producer wrote faster than the service drained it.",
    'traced_chunks_discarded': 'Chunks the service discarded over the whole session.',
    'traced_patches_discarded': 'Patches the service discarded over the whole session.',
    'traced_final_flush_failed': 'The final flush before the trace was read failed: the last data of some data sources is missing.',
    'traced_final_flush_succeeded': 'The final flush before the trace was read succeeded.',
    'traced_flushes_failed': 'Flushes that did not complete in time: data of the data sources that missed them may be missing.',
    'config_write_into_file_no_flush': 'The trace was streamed to a file (write_into_file) without flush_period_ms on a service older than v54: data sources were never flushed while tracing.',
    'config_write_into_file_discard': 'The trace was streamed to a file (write_into_file) into a DISCARD buffer: once the buffer filled between two writes, data was thrown away.',
    'long_trace_mode_bytes_overwritten': 'Bytes overwritten in a ring buffer while streaming to a file: the file period was too long for the buffer.',
}

# Stats only Sextant has: (name, indexed, severity, source, text).
SEXTANT = [
    ('ftrace_event_unknown', False, 'DataLoss', 'Analysis', "ftrace events with no ftrace_event row: a kind Perfetto's schema (as Sextant knows it) does not list, or a bundle whose bytes could not be matched to its events."),
    ('syscall_unknown', False, 'DataLoss', 'Analysis', "sys_enter / sys_exit events whose number names no syscall of the machine's architecture (SystemInfo utsname.machine), or whose machine gave no architecture Sextant knows; they were dropped."),
    ('sequence_packet_loss_flagged', False, 'DataLoss', 'Analysis', 'The tracing service flagged lost packets on a sequence (previous_packet_dropped); counted even when the trace has no TraceStats to attribute them to a buffer.'),
    ('sequence_packet_loss', True, 'DataLoss', 'Analysis', 'Packets of this sequence (idx = trusted_packet_sequence_id) that came after a gap the service flagged (previous_packet_dropped), its first packet excepted: the loss markers per writer.'),
    ('sequence_packets_skipped', True, 'Notice', 'Analysis', 'Packets of this sequence (idx = trusted_packet_sequence_id) skipped because they need incremental state (interned names, defaults) that was lost or never written.'),
    ('proto_truncated', False, 'DataLoss', 'Analysis', 'The protobuf trace ends in the middle of a packet; everything before it was imported.'),
    ('proto_packet_decode_failure', False, 'DataLoss', 'Analysis', 'TracePackets that could not be decoded were skipped.'),
    ('proto_field_wire_type_mismatch', False, 'Error', 'Analysis', "Fields of TracePackets written with another wire type than Perfetto's schema gives them (a vendor build numbering fields differently). They were read as Trace Processor reads them, so the tables match its: a number written as bytes reads as an address (shown here as 2^30 + its file offset, e.g. bogus pids and threads), a string written as a number reads empty. Rows built from them are suspect."),
    ('proto_field_skipped', False, 'DataLoss', 'Analysis', 'Fields of TracePackets whose bytes stop being protobuf (a packed run cut short, a message cut part-way) were skipped; the rest of each packet was imported.'),
    ('proto_string_invalid_utf8', False, 'Info', 'Analysis', 'Strings in TracePackets that are not valid UTF-8; the invalid bytes were replaced with U+FFFD.'),
    ('compressed_stream_truncated', False, 'DataLoss', 'Analysis', 'A compressed stream (a gzip file or member, a deflated ZIP member, atrace -z data) is cut short or corrupt part-way; everything decompressed before the break was imported, the rest is lost. Copy the file again (an interrupted transfer is the usual cause) or compress it again.'),
    ('archive_member_truncated', False, 'DataLoss', 'Analysis', "An archive member's data runs past the end of the archive (the archive was cut short); the bytes that are there were imported, and a member with nothing readable left was skipped."),
    ('archive_damaged', False, 'DataLoss', 'Analysis', 'A ZIP or TAR archive is damaged (no ZIP central directory, a broken TAR header); the members that could still be found were imported, later ones may be missing.'),
    ('json_truncated', False, 'DataLoss', 'Analysis', 'The JSON trace ends in the middle of an event, or without closing its event array or object; every complete event before the cut was imported.'),
    ('systrace_html_without_trace_data', False, 'DataLoss', 'Analysis', 'A systrace HTML page has no <script class="trace-data"> block, so nothing in it was read (pages from systrace.py before 2014 keep the ftrace text in a JavaScript string, which Trace Processor does not read either). Re-record with a newer systrace or Perfetto, or extract the text.'),
    ('proto_packet_kind_not_imported', True, 'Notice', 'Analysis', 'TracePackets of a kind Sextant does not import (idx = the TracePacket field number): they are in the file but not in the tables.'),
]

SEVERITY = {'info': 'Info', 'notice': 'Notice', 'data_loss': 'DataLoss', 'error': 'Error'}
SOURCE = {'trace': 'Trace', 'analysis': 'Analysis'}
ROW = re.compile(r'^\| (\d+) \| (\w+) \| ([SI]) \| (\w+) \| (\w+) \| (.*) \|$')


def rust_str(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"') + '"'


def note_text(meaning):
    text = re.sub(r'\s*\[no writer found[^\]]*\]', '', meaning)
    text = re.sub(r'\s*\*\*\(global\)\*\*', '', text)
    text = re.sub(r'\s*\(global, non-deterministic\)', ' (non-deterministic)', text)
    text = text.replace('**', '').strip()
    return text + ('' if text.endswith('.') else '.')


def main(note):
    rows = []
    for line in open(note):
        m = ROW.match(line.strip())
        if m:
            rows.append(m.groups())
    keys = [int(r[0]) for r in rows]
    assert keys == list(range(len(rows))), 'the note lists the stats in key order'
    print('//! Every stat: the reference\'s list in its order (`key` = position), then Sextant\'s own.')
    print('//! Generated by `tools/gen_stats_catalogue.py` from the reference notes; do not edit by hand.')
    print('//! It hands the list to `stats`, which looks stats up and builds the table\'s rows.')
    print()
    print('use super::Severity::*;')
    print('use super::Source::*;')
    print('use super::StatDef;')
    print()
    print(f'/// The first {len(rows)} entries are the reference\'s, in key order.')
    print(f'pub const REFERENCE_COUNT: usize = {len(rows)};')
    print()
    print('#[rustfmt::skip]')
    print('pub const STATS: &[StatDef] = &[')
    for key, name, kind, severity, source, meaning in rows:
        glob = '(global' in meaning
        text = TEXT.get(name) or note_text(meaning)
        print(f'    StatDef {{ name: "{name}", indexed: {str(kind == "I").lower()}, global: {str(glob).lower()}, '
              f'severity: {SEVERITY[severity]}, source: {SOURCE[source]}, description: {rust_str(text)} }},')
    for name, indexed, severity, source, text in SEXTANT:
        print(f'    StatDef {{ name: "{name}", indexed: {str(indexed).lower()}, global: false, '
              f'severity: {severity}, source: {source}, description: {rust_str(text)} }},')
    print('];')


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else '../shared/reference/behaviour-stats.md')
