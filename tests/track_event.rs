//! TrackEvent corners taken from the reference implementation's conformance cases (the
//! traces are copied into tests/data/track_event): state tracks, legacy async ends whose
//! args merge into the slice, StreamingProfilePacket timestamps, and the
//! `experimental_slice_layout` table function.

use std::path::Path;

use rusqlite::Connection;

mod common;

use common::{rows, table, TempFile};

fn import(name: &str) -> (Connection, TempFile) {
    common::import_data("track_event", &format!("{name}.pftrace"))
}

fn stat(conn: &Connection, name: &str) -> String {
    rows(
        conn,
        &format!("select coalesce(sum(value), 0) from stats where name = '{name}'"),
    )[0][0]
        .clone()
}

#[test]
fn state_events_land_in_the_state_table_on_their_scoped_tracks() {
    let (conn, _db) = import("track_event_state_state");
    let got = rows(
        &conn,
        "select st.name, p.name, th.name, tp.name, s.ts, s.dur, s.category, s.value
         from state s
         left join state_track st on s.track_id = st.id
         left join process_state_track pst on s.track_id = pst.id
         left join process p on pst.upid = p.upid
         left join thread_state_track tst on s.track_id = tst.id
         left join thread th on tst.utid = th.utid
         left join process tp on th.upid = tp.upid
         order by s.ts",
    );
    assert_eq!(
        got,
        table(&[
            [
                "ProcState",
                "Browser",
                "NULL",
                "NULL",
                "1000",
                "-1",
                "cat",
                "Foreground"
            ],
            [
                "ThreadState",
                "NULL",
                "t1",
                "Browser",
                "2000",
                "-1",
                "cat",
                "Running"
            ],
            [
                "GlobalState",
                "NULL",
                "NULL",
                "NULL",
                "3000",
                "-1",
                "cat",
                "Active"
            ],
        ])
    );
    // States are not slices, and their tracks say so.
    assert_eq!(rows(&conn, "select count(*) from slice"), table(&[["0"]]));
    assert_eq!(
        rows(&conn, "select distinct event_type from __intrinsic_track where id in (select track_id from state)"),
        table(&[["state"]])
    );
}

/// Descriptor tracks that are not merged by name are told apart by their `track_uuid`
/// dimension, after their scope's (`upid` / `utid`), as the reference's blueprints make them.
#[test]
fn unmerged_descriptor_tracks_have_their_uuid_as_a_dimension() {
    let (conn, _db) = import("track_event_state_state");
    assert_eq!(
        rows(
            &conn,
            "select t.name, t.type, group_concat(a.key || '=' || a.value_type, ',')
             from track t left join args a on a.arg_set_id = t.dimension_arg_set_id
             group by t.id order by t.id"
        ),
        table(&[
            [
                "ProcState",
                "process_track_event",
                "upid=uint,track_uuid=uint"
            ],
            [
                "ThreadState",
                "thread_track_event",
                "utid=uint,track_uuid=uint"
            ],
            ["GlobalState", "global_track_event", "track_uuid=uint"],
            ["NULL", "process_track_event", "upid=uint,track_uuid=uint"],
        ])
    );
    // Each track's uuid is its descriptor's (the source arg `trace_id`).
    assert_eq!(
        rows(
            &conn,
            "select count(*) from track t
             where extract_arg(t.dimension_arg_set_id, 'track_uuid')
                 = extract_arg(t.source_arg_set_id, 'trace_id')"
        ),
        table(&[["4"]])
    );
}

#[test]
fn a_state_lasts_until_the_next_state_on_its_track() {
    // Built in place: two states on one state track, the first ends when the second starts.
    use prost::Message;
    use sextant::protos::{
        trace_packet, track_event, Trace, TracePacket, TrackDescriptor, TrackEvent,
    };
    let packet = |ts: u64, data: trace_packet::Data| TracePacket {
        timestamp: Some(ts),
        optional_trusted_packet_sequence_id: Some(
            trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(1),
        ),
        data: Some(data),
        ..Default::default()
    };
    let state = |ts: u64, name: &str| {
        packet(
            ts,
            trace_packet::Data::TrackEvent(TrackEvent {
                r#type: Some(track_event::Type::State as i32),
                track_uuid: Some(7),
                name_field: Some(track_event::NameField::Name(name.into())),
                ..Default::default()
            }),
        )
    };
    let trace = Trace {
        packet: vec![
            packet(
                0,
                trace_packet::Data::TrackDescriptor(TrackDescriptor {
                    uuid: Some(7),
                    static_or_dynamic_name: Some(
                        sextant::protos::track_descriptor::StaticOrDynamicName::Name(
                            "Power".into(),
                        ),
                    ),
                    state: Some(Default::default()),
                    ..Default::default()
                }),
            ),
            state(100, "On"),
            state(250, "Off"),
        ],
    };
    let file = TempFile::with_bytes("states.pftrace", &trace.encode_to_vec());
    let db = TempFile::new("states.sqlite");
    sextant::import::import_path(file.path(), db.path()).expect("import");
    let conn = sextant::db::open_read_only(db.path()).expect("open");
    assert_eq!(
        rows(&conn, "select ts, dur, value from state order by ts"),
        table(&[["100", "150", "On"], ["250", "-1", "Off"]])
    );
}

#[test]
fn a_state_event_off_a_state_track_is_a_parser_error() {
    for name in [
        "track_event_state_on_non_state_track",
        "state_track_legacy_fallback_error",
    ] {
        let (conn, _db) = import(name);
        assert_eq!(stat(&conn, "track_event_parser_errors"), "1", "{name}");
        assert_eq!(
            rows(&conn, "select count(*) from state"),
            table(&[["0"]]),
            "{name}"
        );
    }
}

#[test]
fn a_nameless_legacy_async_end_closes_its_begin_and_merges_its_args() {
    let (conn, _db) = import("track_event_merged_debug_annotations_args");
    assert_eq!(
        rows(
            &conn,
            "select name, dur, (select count(*) from track) from slice"
        ),
        table(&[["name1", "1000", "1"]])
    );
    let got = rows(
        &conn,
        "select key, display_value from args
         where arg_set_id = (select arg_set_id from slice) and key like 'debug.%'
         order by key",
    );
    // The end's array entries follow the begin's; its other keys win or are added.
    assert_eq!(
        got,
        table(&[
            ["debug.debug1.key1", "10"],
            ["debug.debug1.key2[0]", "20"],
            ["debug.debug1.key2[1]", "21"],
            ["debug.debug1.key2[2]", "22"],
            ["debug.debug1.key2[3]", "23"],
            ["debug.debug1.key3", "30"],
            ["debug.debug2.key1", "10"],
            ["debug.debug2.key2[0]", "20"],
            ["debug.debug2.key2[1]", "21"],
            ["debug.debug2.key2[2]", "22"],
            ["debug.debug2.key2[3]", "23"],
            ["debug.debug2.key3.key31", "31"],
            ["debug.debug2.key3.key32", "32"],
            ["debug.debug2.key4", "40"],
            ["debug.debug3", "32"],
            ["debug.debug4.key1", "10"],
            ["debug.debug4.key2[0]", "20"],
            ["debug.debug4.key2[1]", "21"],
        ])
    );
}

#[test]
fn an_overflowing_profile_delta_invalidates_later_deltas_on_the_sequence() {
    let (conn, _db) = import("streaming_profile_timestamp_delta_overflow");
    assert_eq!(
        rows(&conn, "select name, ts from slice"),
        table(&[["good", "1000001"]])
    );
    assert_eq!(stat(&conn, "streaming_profile_invalid_timestamp"), "2");
    assert_eq!(stat(&conn, "track_event_invalid_timestamp"), "1");
}

#[test]
fn experimental_slice_layout_packs_the_given_tracks() {
    let (conn, _db) = import("experimental_slice_layout_depth");
    assert_eq!(
        rows(
            &conn,
            "select id, layout_depth from experimental_slice_layout(
               (select group_concat(track_id, ',') from slice)) order by id"
        ),
        table(&[["0", "0"], ["1", "0"], ["2", "0"]])
    );
    // Only the named tracks are laid out (the three unnamed tracks take their first
    // slice's name and, never overlapping, merge into one).
    assert_eq!(
        rows(&conn, "select count(distinct track_id) from slice"),
        table(&[["1"]])
    );
    let track = rows(&conn, "select track_id from slice where id = 2")[0][0].clone();
    assert_eq!(
        rows(
            &conn,
            &format!("select id from experimental_slice_layout('{track}') order by id")
        ),
        table(&[["0"], ["1"], ["2"]])
    );
    assert_eq!(
        rows(&conn, "select id from experimental_slice_layout('999')"),
        Vec::<Vec<String>>::new()
    );
    let err = conn
        .prepare("select * from experimental_slice_layout('1,x')")
        .and_then(|mut s| s.query([]).and_then(|mut r| r.next().map(|_| ())))
        .expect_err("a bad track id is an error");
    assert!(err.to_string().contains("'x' is not a track id"), "{err}");
}

#[test]
fn a_legacy_async_track_has_chrome_dimensions_and_args() {
    let (conn, _db) = import("track_event_merged_debug_annotations_args");
    let args = |column: &str| {
        rows(
            &conn,
            &format!(
                "select a.key, a.display_value from track t join args a
                 on a.arg_set_id = t.{column} order by a.key"
            ),
        )
    };
    // The id's track: named and scoped by its first event, made by pid 5's process.
    assert_eq!(
        args("dimension_arg_set_id"),
        table(&[
            ["name", "name1"],
            ["scope", "cat"],
            ["track_compressor_idx", "0"]
        ])
    );
    assert_eq!(
        args("source_arg_set_id"),
        table(&[
            ["source", "chrome"],
            ["source_scope", "cat"],
            ["trace_id_is_process_scoped", "false"],
            ["upid", "1"],
        ])
    );
    assert_eq!(
        rows(&conn, "select pid from process where upid = 1"),
        table(&[["5"]])
    );
}

#[test]
fn proto_content_counts_bytes_per_payload_and_per_track_event_name() {
    let (conn, _db) = import("track_event_merged_debug_annotations_args");
    let got = rows(
        &conn,
        "select c.path, c.count, c.category, c.name, c.arg_set_id
         from __sextant_proto_content c order by c.path, c.size desc",
    );
    assert_eq!(
        got,
        table(&[
            ["TracePacket.track_descriptor", "2", "NULL", "NULL", "NULL"],
            ["TracePacket.track_event", "1", "cat", "name1", "NULL"],
            ["TracePacket.track_event", "1", "cat", "NULL", "NULL"],
        ])
    );
    // Every packet's bytes are counted once: only the framing (tag and length) is not.
    let size: i64 = conn
        .query_row("select sum(size) from __sextant_proto_content", [], |r| {
            r.get(0)
        })
        .expect("sum");
    let file = std::fs::metadata(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/track_event/track_event_merged_debug_annotations_args.pftrace"),
    )
    .expect("the trace")
    .len() as i64;
    assert!(size < file && file - size <= 4 * 3, "{size} of {file}");
}

#[test]
fn a_positive_delta_overflow_invalidates_the_sequence_too() {
    let (conn, _db) = import("positive_delta_overflow");
    assert_eq!(stat(&conn, "streaming_profile_invalid_timestamp"), "2");
    assert_eq!(stat(&conn, "track_event_invalid_timestamp"), "1");
    assert_eq!(stat(&conn, "trace_sorter_negative_timestamp_dropped"), "0");
}

#[test]
fn a_state_event_may_use_the_sequences_default_track() {
    use prost::Message;
    use sextant::protos::{
        trace_packet, track_event, Trace, TracePacket, TracePacketDefaults, TrackDescriptor,
        TrackEvent, TrackEventDefaults,
    };
    let seq = Some(trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(1));
    let trace = Trace {
        packet: vec![
            TracePacket {
                timestamp: Some(0),
                optional_trusted_packet_sequence_id: seq,
                incremental_state_cleared: Some(true),
                trace_packet_defaults: Some(TracePacketDefaults {
                    track_event_defaults: Some(TrackEventDefaults {
                        track_uuid: Some(7),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                data: Some(trace_packet::Data::TrackDescriptor(TrackDescriptor {
                    uuid: Some(7),
                    state: Some(Default::default()),
                    ..Default::default()
                })),
                ..Default::default()
            },
            TracePacket {
                timestamp: Some(100),
                optional_trusted_packet_sequence_id: seq,
                sequence_flags: Some(2),
                data: Some(trace_packet::Data::TrackEvent(TrackEvent {
                    r#type: Some(track_event::Type::State as i32),
                    name_field: Some(track_event::NameField::Name("On".into())),
                    ..Default::default()
                })),
                ..Default::default()
            },
        ],
    };
    let file = TempFile::with_bytes("default-state.pftrace", &trace.encode_to_vec());
    let db = TempFile::new("default-state.sqlite");
    sextant::import::import_path(file.path(), db.path()).expect("import");
    let conn = sextant::db::open_read_only(db.path()).expect("open");
    assert_eq!(
        rows(&conn, "select ts, value from state"),
        table(&[["100", "On"]])
    );
    assert_eq!(stat(&conn, "track_event_parser_errors"), "0");
}

#[test]
fn counter_problems_are_counted_by_name_and_bad_extra_counters_drop_their_event() {
    // tools/gen_track_event_counters.py; behaviour-parsers §3.5.
    let (conn, _db) = import("counter_errors");
    for name in [
        "track_event_counter_missing_track_uuid",
        "track_event_counter_missing_value",
        "track_event_counter_invalid_track_uuid",
        "track_event_extra_counter_missing_track_uuids",
        "track_event_extra_counter_track_uuid_mismatch",
        "track_event_extra_counter_invalid_track",
    ] {
        assert_eq!(stat(&conn, name), "1", "{name}");
    }
    assert_eq!(stat(&conn, "track_event_parser_errors"), "0");
    let slices = rows(&conn, "select name from slice");
    assert_eq!(slices, table(&[["ok"]]));
    let counters = rows(
        &conn,
        "select t.name, c.ts, c.value from counter c join counter_track t on t.id = c.track_id
         order by c.ts",
    );
    assert_eq!(
        counters,
        table(&[
            ["bytes", "100", "50"],
            ["bytes", "110", "80"],
            ["extra", "150", "7"]
        ])
    );
}

#[test]
fn counter_values_are_checked_in_tokenizer_order_and_advance_sums_before_a_drop() {
    // counter_check_order.textproto: explicit track_uuid 0 is a given (invalid) uuid, the
    // uuid is checked before the value, extra values fail at the first bad index (invalid
    // track before a missing uuid or the 8-value bound), and a counter's own incremental
    // value counts even when its extras drop the event (10 + 5 = 15).
    let (conn, _db) = import("counter_check_order");
    for (name, n) in [
        ("track_event_counter_missing_track_uuid", "1"),
        ("track_event_counter_missing_value", "0"),
        ("track_event_counter_invalid_track_uuid", "1"),
        ("track_event_extra_counter_invalid_track", "2"),
        ("track_event_extra_counter_track_uuid_mismatch", "1"),
        ("track_event_extra_counter_exceeds_max", "0"),
    ] {
        assert_eq!(stat(&conn, name), n, "{name}");
    }
    assert_eq!(rows(&conn, "select count(*) from slice"), table(&[["0"]]));
    assert_eq!(
        rows(&conn, "select ts, value from counter"),
        table(&[["60", "15"]])
    );
}

#[test]
fn new_trace_packet_defaults_replace_the_old_ones_as_a_whole() {
    // replaced_defaults.textproto: the second TracePacketDefaults has no TrackEventDefaults,
    // so the sequence no longer has a default track.
    let (conn, _db) = import("replaced_defaults");
    assert_eq!(
        rows(
            &conn,
            "select s.name, t.name from slice s join track t on t.id = s.track_id order by s.ts"
        ),
        table(&[["on_t1", "t1"], ["on_default", "Default Track"]])
    );
}

#[test]
fn a_thread_track_descriptor_sets_the_delta_timestamp_bases() {
    // thread_track_descriptor_references.textproto: delta timestamps and thread times after
    // a thread TrackDescriptor with references (they used to be dropped as lacking a base).
    let (conn, _db) = import("thread_track_descriptor_references");
    assert_eq!(
        rows(&conn, "select ts, dur, thread_ts, thread_dur from slice"),
        table(&[["1010000", "10000", "55000", "5000"]])
    );
    assert_eq!(
        stat(
            &conn,
            "track_event_skipped_timestamp_delta_without_valid_state"
        ),
        "0"
    );
}

#[test]
fn legacy_phases_flows_and_marks_on_a_thread_descriptor_sequence() {
    // tools/gen_track_event_legacy.py; behaviour-parsers §3.4 and §3.7.
    let (conn, _db) = import("legacy_phases");
    let got = rows(
        &conn,
        "select s.name, s.dur, t.type,
           (select group_concat(key || '=' || display_value, ' ') from args a
            where a.arg_set_id = s.arg_set_id and key like 'legacy_event.phase')
         from slice s join track t on t.id = s.track_id
         where s.name in ('x', 'S1', 'mark', 'gi', 'L', 'G') order by s.ts, s.id",
    );
    assert_eq!(
        got,
        table(&[
            ["x", "5000", "thread_execution", "NULL"],
            [
                "S1",
                "20",
                "legacy_async_global_slice",
                "legacy_event.phase=S"
            ],
            [
                "S1",
                "0",
                "legacy_async_global_slice",
                "legacy_event.phase=T"
            ],
            [
                "S1",
                "0",
                "legacy_async_global_slice",
                "legacy_event.phase=p"
            ],
            ["L", "10", "legacy_async_process_slice", "NULL"],
            ["G", "10", "legacy_async_global_slice", "NULL"],
            ["mark", "0", "thread_execution", "legacy_event.phase=R"],
            ["gi", "0", "chrome_process_instant", "NULL"],
        ])
    );
    let flows = rows(
        &conn,
        "select o.name, i.name, f.trace_id from flow f join slice o on o.id = f.slice_out
         join slice i on i.id = f.slice_in order by f.id",
    );
    assert_eq!(
        flows,
        table(&[
            ["mark", "outer", "0"],
            ["fi", "fi2", "1000"],
            ["fi2", "fi3", "1000"],
        ])
    );
    assert_eq!(stat(&conn, "flow_invalid_id"), "1");
    let names = rows(
        &conn,
        "select t.name, p.name from thread t join process p using (upid) where t.tid = 6",
    );
    assert_eq!(names, table(&[["renamed", "procname"]]));
    let raw = rows(&conn, "select name from chrome_raw");
    assert_eq!(raw, table(&[["track_event.legacy_event"]]));
}

#[test]
fn slices_get_the_thread_instruction_count_and_its_delta_to_the_end() {
    // tools/gen_track_event_audit.py; behaviour-parsers §3.2 (deltas from the
    // ThreadDescriptor's reference count) and §3.4 (count at begin/instant, delta at end).
    let (conn, _db) = import("thread_instruction_counts");
    let got = rows(
        &conn,
        "select name, dur, thread_instruction_count, thread_instruction_delta
         from slice order by ts",
    );
    assert_eq!(
        got,
        table(&[
            ["a", "200", "105", "15"],
            ["i", "0", "110", "0"],
            ["abs", "100", "20", "5"],
            ["none", "0", "NULL", "NULL"],
        ])
    );
}

#[test]
fn siblings_with_one_merge_key_share_tracks_whatever_their_names() {
    // tools/gen_track_event_audit.py; behaviour-parsers §3.3: same-named (or same
    // sibling_merge_key) siblings share a track unless their slices overlap.
    let (conn, _db) = import("sibling_merge_key");
    let got = rows(
        &conn,
        "select s.name, t.name, extract_arg(t.dimension_arg_set_id, 'track_compressor_idx')
         from slice s join track t on t.id = s.track_id order by s.ts",
    );
    assert_eq!(
        got,
        table(&[
            ["a", "same", "0"],
            ["b", "same", "1"],
            ["f", "k1", "0"],
            ["g", "k1", "0"],
            ["h", "k1", "0"],
            ["i", "k1", "1"],
        ])
    );
    let tracks = rows(
        &conn,
        "select count(*) from track where type = 'process_merged_track_event'",
    );
    assert_eq!(tracks, table(&[["4"]]));
}

#[test]
fn legacy_global_and_process_instants_name_their_thread() {
    // tools/gen_track_event_audit.py; behaviour-parsers §3.4: events of a pid/tid sequence
    // on global/process tracks get legacy_event.passthrough_utid (after the annotations).
    let (conn, _db) = import("legacy_instant_scopes");
    let got = rows(
        &conn,
        "select s.name, t.type,
           (select group_concat(key || '=' || display_value, ' ') from args a
            where a.arg_set_id = s.arg_set_id)
         from slice s join track t on t.id = s.track_id order by s.ts",
    );
    let utid = rows(&conn, "select utid from thread where tid = 6")[0][0].clone();
    let pass = format!("debug.a=1 legacy_event.passthrough_utid={utid}");
    assert_eq!(
        got,
        vec![
            vec![
                "thread".to_string(),
                "thread_execution".into(),
                "debug.a=1".into()
            ],
            vec![
                "global".to_string(),
                "legacy_chrome_global_instants".into(),
                pass.clone()
            ],
            vec![
                "process".to_string(),
                "chrome_process_instant".into(),
                pass.clone()
            ],
            vec![
                "mark".to_string(),
                "chrome_process_instant".into(),
                format!("{pass} legacy_event.phase=R")
            ],
        ]
    );
    // The utid is an unsigned integer (behaviour-chrome-typed-args.md §2 item 12).
    assert_eq!(
        rows(
            &conn,
            "select distinct value_type from args where key = 'legacy_event.passthrough_utid'"
        ),
        table(&[["uint"]])
    );
}

#[test]
fn a_conflicting_re_description_is_ignored_and_a_missing_parent_counted() {
    // tools/gen_track_event_audit.py; behaviour-parsers §3.3: describing a uuid again with
    // another parent / pid / tid / kind is ignored (track_descriptor_conflicting_reservation);
    // an identical re-description is not a conflict.
    let (conn, _db) = import("conflicting_reservation");
    let got = rows(
        &conn,
        "select s.name, t.name, th.tid from slice s join track t on t.id = s.track_id
         left join thread_track tt on tt.id = t.id left join thread th using (utid)
         order by s.ts",
    );
    assert_eq!(
        got,
        table(&[
            ["on_thread", "NULL", "6"],
            ["on_child", "first", "NULL"],
            ["on_orphan", "orphan", "NULL"],
            ["on_orphan_again", "orphan", "NULL"],
        ])
    );
    assert_eq!(stat(&conn, "track_descriptor_conflicting_reservation"), "2");
    // A parent never described: the track is a root, counted once.
    assert_eq!(stat(&conn, "track_hierarchy_missing_uuid"), "1");
}

#[test]
fn only_thread_scoped_slices_get_thread_times_and_instants_get_zero_durations() {
    // tools/gen_track_event_audit.py; behaviour-parsers §3.4: the reference imports events
    // on thread-scoped tracks as thread phases (B/E/i: thread_ts and instruction count at the
    // begin, thread_dur and delta at the end, 0 for an instant) and the others as async
    // phases, whose slices carry none of them.
    let (conn, _db) = import("thread_times_by_scope");
    let got = rows(
        &conn,
        "select s.name, s.thread_ts, s.thread_dur, s.thread_instruction_count,
           s.thread_instruction_delta, t.type
         from slice s join track t on t.id = s.track_id order by s.ts",
    );
    assert_eq!(
        got,
        table(&[
            ["b10", "10000", "5000", "100", "200", "thread_execution"],
            ["i10", "11000", "0", "200", "0", "thread_execution"],
            ["b11", "NULL", "NULL", "NULL", "NULL", "process_track_event"],
            ["i11", "NULL", "NULL", "NULL", "NULL", "process_track_event"],
            [
                "b12",
                "30000",
                "5000",
                "102",
                "200",
                "thread_merged_track_event"
            ],
            ["i12", "31000", "0", "202", "0", "thread_merged_track_event"],
            [
                "b13",
                "NULL",
                "NULL",
                "NULL",
                "NULL",
                "process_merged_track_event"
            ],
            [
                "i13",
                "NULL",
                "NULL",
                "NULL",
                "NULL",
                "process_merged_track_event"
            ],
        ])
    );
}

#[test]
fn args_whose_iids_were_never_interned_are_skipped_and_counted_twice() {
    // tools/gen_track_event_audit.py; behaviour-parsers §3.1: a missing iid counts
    // interned_data_tokenizer_errors, and a skipped annotation / source location arg also
    // track_event_parser_errors.
    let (conn, _db) = import("missing_arg_iids");
    let got = rows(
        &conn,
        "select key, display_value from args
         where arg_set_id = (select arg_set_id from slice where name = 'e')",
    );
    // The raw source_location_iid is a reflected field (behaviour-chrome-typed-args §4.1).
    assert_eq!(
        got,
        table(&[["source_location_iid", "7"], ["debug.known", "2"]])
    );
    assert_eq!(stat(&conn, "interned_data_tokenizer_errors"), "3");
    assert_eq!(stat(&conn, "track_event_parser_errors"), "3");
}

#[test]
fn dict_entries_are_named_like_annotations_inline_or_interned() {
    // nested_interned_annotation_names.textproto: a dict entry named by name_iid gets its
    // interned name; an entry with an unknown iid ends its dict (earlier entries stay) and
    // counts both stats; a dict whose only entry has no name adds nothing (a null).
    let (conn, _db) = import("nested_interned_annotation_names");
    let got = rows(
        &conn,
        "select key, display_value from args where key like 'debug.%' order by id",
    );
    assert_eq!(
        got,
        table(&[
            ["debug.outer.inner", "3"],
            ["debug.outer.plain[0]", "4"],
            ["debug.bad.first", "1"],
            ["debug.noname", "[NULL]"],
            ["debug.last", "true"],
        ])
    );
    assert_eq!(stat(&conn, "interned_data_tokenizer_errors"), "1");
    assert_eq!(stat(&conn, "track_event_parser_errors"), "1");
}

#[test]
fn redescriptions_overrides_and_passthrough_utids_as_trace_processor_reads_them() {
    // Sequence 1 describes process 10 `Browser` (uuid 100), its thread 11 (uuid 101, no
    // name), a global track (300) and process tracks under 10 (301) and under process 20
    // (302, described on sequence 2). Then: a slice on the thread, instants on 300, 301
    // and 302; legacy `M` events on track 0 with only a tid override (`thread_name`
    // Helper for tid 12, `num_cpus` for tid 0); at 6000 uuid 101 described again, now
    // with thread_name `Main`; at 7000 a counter value on `Queue` (uuid 400, under 100).
    let (conn, _db) = import("redescribed_overrides_passthrough");
    // Every descriptor packet names its thread (the later copy's name applies); a tid
    // override alone names that tid in the sequence's process; an override to tid 0 is
    // an error (no thread 0 in process 10, the event dropped).
    assert_eq!(
        rows(&conn, "select tid, upid, name from thread order by utid"),
        table(&[
            ["0", "0", "swapper"],
            ["10", "1", "NULL"],
            ["11", "1", "Main"],
            ["20", "2", "NULL"],
            ["12", "1", "Helper"],
        ])
    );
    assert_eq!(stat(&conn, "track_event_parser_errors"), "1");
    assert_eq!(
        rows(&conn, "select count(*) from chrome_raw"),
        table(&[["0"]])
    );
    // The sequence's thread (utid 2) is named on slices of a global track and of its own
    // process's tracks, not on its own track nor another process's.
    assert_eq!(
        rows(
            &conn,
            "select s.name, extract_arg(s.arg_set_id, 'legacy_event.passthrough_utid')
             from slice s order by s.ts"
        ),
        table(&[
            ["on_thread", "NULL"],
            ["on_global", "2"],
            ["on_own_process", "2"],
            ["on_other_process", "NULL"],
        ])
    );
    // A TYPE_COUNTER event's row carries the event's args (at 7000 on counter `Queue`
    // under process 10: its annotation and the sequence's thread).
    assert_eq!(
        rows(
            &conn,
            "select c.ts, a.key, a.display_value from counter c join args a using (arg_set_id)
             order by a.id"
        ),
        table(&[
            ["7000", "debug.note", "x"],
            ["7000", "legacy_event.passthrough_utid", "2"],
        ])
    );
}

#[test]
fn a_legacy_name_iid_names_the_event_when_the_event_has_none() {
    // legacy_name_iid.textproto: a ThreadDescriptor sequence with interned names ev1/ev2;
    // B with legacy name_iid 1, X with legacy name_iid 2, an instant with `name` and an
    // unknown legacy name_iid 9, an instant with name_iid 2 and legacy name_iid 1.
    let (conn, _db) = import("legacy_name_iid");
    assert_eq!(
        rows(&conn, "select ts, dur, name from slice order by ts"),
        table(&[
            ["1010000", "40000", "ev1"],
            ["1020000", "3000", "ev2"],
            // A non-zero legacy iid wins over `name` even when it does not resolve.
            ["1030000", "0", "NULL"],
            // The event's own iid wins over the legacy one.
            ["1040000", "0", "ev2"],
        ])
    );
    assert_eq!(stat(&conn, "interned_data_tokenizer_errors"), "1");
}

#[test]
fn a_counter_descriptor_s_first_category_is_a_track_arg() {
    // counter_category.textproto: a process counter with categories c1, c2 and a global
    // counter with none.
    let (conn, _db) = import("counter_category");
    assert_eq!(
        rows(
            &conn,
            "select name, extract_arg(source_arg_set_id, 'category') from counter_track
             order by name"
        ),
        table(&[["with_categories", "c1"], ["without", "NULL"]])
    );
}

#[test]
fn a_process_descriptor_s_cmdline_neither_names_the_process_nor_is_its_cmdline() {
    // process_descriptor_cmdline.textproto: packet-level ProcessDescriptors, pid 5 with
    // only a cmdline (and the legacy renderer type), pid 7 with a process_name.
    let (conn, _db) = import("process_descriptor_cmdline");
    assert_eq!(
        rows(
            &conn,
            "select pid, name, cmdline from process order by upid"
        ),
        table(&[
            ["0", "NULL", "NULL"],
            ["5", "Renderer", "NULL"],
            ["7", "named7", "NULL"],
        ])
    );
}

#[test]
fn legacy_thread_phases_need_a_thread_and_process_instants_a_process() {
    // legacy_thread_phases_without_thread.textproto: sequence 1 has thread t1 (default
    // track uuid 1); sequence 2 has no thread and sends legacy B, E, X, a thread instant,
    // a process instant, a global instant and a typed begin on track 0.
    let (conn, _db) = import("legacy_thread_phases_without_thread");
    assert_eq!(
        rows(
            &conn,
            "select s.name, t.type from slice s join track t on t.id = s.track_id
             order by s.ts"
        ),
        table(&[
            ["on_default_uuid", "thread_execution"],
            ["explicit0_typed", "global_merged_track_event"],
            ["explicit0_legacy", "thread_execution"],
            // Global instants need no thread; B, E, X, thread and process instants
            // without one are parser errors.
            ["noseq_global_i", "legacy_chrome_global_instants"],
            ["noseq_typed", "global_merged_track_event"],
        ])
    );
    assert_eq!(stat(&conn, "track_event_parser_errors"), "5");
}

#[test]
fn debug_annotations_that_cannot_be_read_add_nothing_and_are_counted() {
    // debug_annotation_errors.textproto: one instant with annotations `badjson` (legacy
    // JSON that does not parse), `after`, `noval` (no value), one with an unknown name
    // iid, `sv` with an unknown string iid, and `last`. `noval` adds no entry, so it
    // shows as a null (debug_annotations_adding_nothing_are_null).
    let (conn, _db) = import("debug_annotation_errors");
    assert_eq!(
        rows(
            &conn,
            "select a.key, a.display_value from slice s join args a using (arg_set_id)
             where a.key like 'debug.%' order by a.id"
        ),
        table(&[
            ["debug.after", "1"],
            ["debug.noval", "[NULL]"],
            ["debug.last", "3"]
        ])
    );
    // The bad JSON, the unknown name iid and the unknown string iid are parser errors;
    // the unknown name iid and the unknown string iid are interning errors too (every
    // failed interned lookup counts, behaviour-parsers.md §3.1).
    assert_eq!(stat(&conn, "track_event_parser_errors"), "3");
    assert_eq!(stat(&conn, "interned_data_tokenizer_errors"), "2");
}

/// An annotation that adds no entry (no value, an empty dict or array, a dict of such) is a
/// null arg under its key; array elements that add nothing do not use up an index
/// (the reference's DebugAnnotationParser: `added_entry`, `AddNull`, array index advanced
/// only after an added entry). debug_annotation_empty.textproto is the source.
#[test]
fn debug_annotations_adding_nothing_are_null() {
    let (conn, _db) = import("debug_annotation_empty");
    assert_eq!(
        rows(
            &conn,
            "select a.key, a.flat_key, a.value_type, a.display_value from slice s
             join args a using (arg_set_id) where a.key like 'debug.%' order by a.id"
        ),
        table(&[
            ["debug.empty_dict", "debug.empty_dict", "null", "[NULL]"],
            ["debug.empty_arr", "debug.empty_arr", "null", "[NULL]"],
            ["debug.arr[0]", "debug.arr", "int", "7"],
            ["debug.arr[1][0]", "debug.arr", "int", "1"],
            ["debug.arr[1][1]", "debug.arr", "int", "2"],
            ["debug.d.v", "debug.d.v", "bool", "true"],
            ["debug.novalue", "debug.novalue", "null", "[NULL]"],
        ])
    );
    assert_eq!(stat(&conn, "track_event_parser_errors"), "0");
}

#[test]
fn descriptor_parent_loops_drop_their_events_instead_of_recursing() {
    // Trace Processor's track resolution detects parent loops and self-loops and fails,
    // so events on such a track (or a child of one) are parser errors; the import used to
    // overflow the stack. descriptor_parent_loop.textproto is the source.
    let (conn, _db) = import("descriptor_parent_loop");
    assert_eq!(
        rows(
            &conn,
            "select s.name, t.name from slice s join track t on t.id = s.track_id"
        ),
        vec![vec!["fine".to_string(), "ok".into()]]
    );
    assert_eq!(rows(&conn, "select count(*) from counter"), vec![vec!["0"]]);
    assert_eq!(stat(&conn, "track_event_parser_errors"), "4");
    assert_eq!(
        rows(&conn, "select name from track order by id"),
        vec![vec!["ok".to_string()]]
    );
}

/// Protobuf varint.
fn varint(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A length-delimited protobuf field.
fn message(field: u64, body: &[u8], out: &mut Vec<u8>) {
    varint(field << 3 | 2, out);
    varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

#[test]
fn a_descriptor_hierarchy_past_the_depth_bound_is_unresolved_not_a_hang() {
    // 20,000 nested track descriptors and an instant on the deepest: resolution recurses
    // through the ancestors, so chains deeper than the bound are treated like a loop
    // (event dropped as track_event_parser_errors) instead of exhausting the stack or
    // rescanning the chain at every level.
    let mut trace = Vec::new();
    let n = 20_000u64;
    for uuid in 1..=n {
        let mut td = Vec::new();
        varint(1 << 3, &mut td); // uuid
        varint(uuid, &mut td);
        if uuid > 1 {
            varint(5 << 3, &mut td); // parent_uuid
            varint(uuid - 1, &mut td);
        }
        let mut packet = Vec::new();
        varint(10 << 3, &mut packet); // trusted_packet_sequence_id
        varint(1, &mut packet);
        message(60, &td, &mut packet); // track_descriptor
        message(1, &packet, &mut trace);
    }
    let mut te = Vec::new();
    varint(9 << 3, &mut te); // type = TYPE_INSTANT
    varint(3, &mut te);
    varint(11 << 3, &mut te); // track_uuid
    varint(n, &mut te);
    message(23, b"leaf", &mut te); // name
    let mut packet = Vec::new();
    varint(8 << 3, &mut packet); // timestamp
    varint(10, &mut packet);
    varint(10 << 3, &mut packet);
    varint(1, &mut packet);
    message(11, &te, &mut packet); // track_event
    message(1, &packet, &mut trace);

    let input = TempFile::with_bytes("deep_hierarchy.pftrace", &trace);
    let db = TempFile::new("deep_hierarchy.sqlite");
    sextant::import::import_path(input.path(), db.path()).expect("import");
    let conn = sextant::db::open_read_only(db.path()).expect("open");
    assert_eq!(rows(&conn, "select count(*) from slice"), vec![vec!["0"]]);
    assert_eq!(stat(&conn, "track_event_parser_errors"), "1");
}

/// The reference's parser walks a StreamingProfilePacket's callstacks beside its deltas:
/// a callstack without a delta ends the packet (one parser error), extra deltas only
/// advance the sequence's time, and a sample with an unknown callstack is skipped without
/// adding its delta to the packet's running time.
#[test]
fn streaming_profile_samples_follow_the_callstacks() {
    let (conn, _db) = import("streaming_profile_callstacks_beside_deltas");
    assert_eq!(
        rows(
            &conn,
            "select ts, callsite_id, process_priority from cpu_profile_stack_sample order by ts"
        ),
        table(&[
            ["11000", "0", "0"],
            ["26000", "1", "0"],
            ["36000", "1", "3"],
            ["51000", "0", "3"],
        ])
    );
    assert_eq!(stat(&conn, "stackprofile_parser_error"), "2");
    assert_eq!(stat(&conn, "stackprofile_invalid_callstack_id"), "1");
}

/// A delta that takes a sample below zero drops that sample (counted) but still moves
/// the packet's running time, so the next sample lands where the sequence's time is.
#[test]
fn a_streaming_profile_sample_after_a_negative_one_keeps_the_sequence_time() {
    let (conn, _db) = import("streaming_profile_negative_delta");
    assert_eq!(
        rows(&conn, "select ts from cpu_profile_stack_sample"),
        table(&[["6000"]])
    );
    assert_eq!(stat(&conn, "streaming_profile_invalid_timestamp"), "1");
}

#[test]
fn every_interned_id_that_does_not_resolve_is_counted() {
    // tools/gen_track_event_heldout.py; behaviour-parsers §3.1: each failed interned
    // lookup counts interned_data_tokenizer_errors once, so an event with an unknown name
    // and an unknown category counts two, and a multi-category entry one per unknown iid.
    let (conn, _db) = import("missing_iids_each_counted");
    let got = rows(&conn, "select ts, name, category from slice order by ts");
    assert_eq!(
        got,
        table(&[
            ["3", "NULL", "unknown(7)"],
            ["4", "x", "c1,s"],
            ["5", "n1", "c1"],
        ])
    );
    assert_eq!(stat(&conn, "interned_data_tokenizer_errors"), "4");
}

#[test]
fn every_interned_arg_lookup_that_fails_is_counted() {
    // tools/gen_track_event_heldout.py; behaviour-parsers §3.1 and
    // behaviour-chrome-typed-args §2: a log message body, histogram name, correlation id
    // string, annotation string value or proto type name whose iid was never interned adds
    // no arg and counts interned_data_tokenizer_errors (each lookup once) besides any
    // track_event_parser_errors.
    let (conn, _db) = import("missing_arg_lookups_counted");
    let got = rows(
        &conn,
        "select s.name, a.key, a.display_value from slice s
         left join args a using(arg_set_id) order by s.ts, a.id",
    );
    assert_eq!(
        got,
        table(&[
            ["log", "NULL", "NULL"],
            ["histogram", "chrome_histogram_sample.sample", "3"],
            ["histogram", "chrome_histogram_sample.name_iid", "9"],
            ["correlation", "NULL", "NULL"],
            ["string_iid", "NULL", "NULL"],
            ["type_iid", "NULL", "NULL"],
            ["fine", "track_event.log_message.message", "known"],
        ])
    );
    assert_eq!(stat(&conn, "interned_data_tokenizer_errors"), "5");
    assert_eq!(stat(&conn, "track_event_parser_errors"), "4");
}
