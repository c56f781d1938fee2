//! Chrome and ML-profiler traces as the reference imports them: TrackEvent typed args
//! (reflection, translation tables, Mojo symbols, deobfuscated class names), Chrome
//! descriptors, log messages, raw legacy events and metadata (tests/data/chrome: the
//! reference's own translated-args cases and `chrome_features.pftrace` written by
//! tools/gen_chrome_trace.py), and every JSON flow form (v1 with binding points, v2, Kineto's
//! launch → kernel flows on a trimmed PyTorch trace).

use rusqlite::Connection;

mod common;

use common::{rows, table, TempFile};

fn import(name: &str) -> (Connection, TempFile) {
    common::import_data("chrome", &format!("{name}.pftrace"))
}

fn import_json(json: &str) -> (Connection, TempFile, TempFile) {
    let trace = TempFile::with_bytes("trace.json", json.as_bytes());
    let db = TempFile::new("chrome.sqlite");
    sextant::import::import_path(trace.path(), db.path()).expect("the JSON imports");
    let conn = sextant::db::open_read_only(db.path()).expect("the database opens");
    (conn, db, trace)
}

fn stat(conn: &Connection, name: &str) -> String {
    rows(
        conn,
        &format!("select coalesce(sum(value), 0) from stats where name = '{name}'"),
    )[0][0]
        .clone()
}

/// `key = value` of an arg set, in order.
fn args_of(conn: &Connection, set: &str) -> Vec<Vec<String>> {
    rows(
        conn,
        &format!("select key, display_value from args where arg_set_id = {set} order by id"),
    )
}

#[test]
fn hashed_names_are_translated_at_the_end_of_the_file() {
    let (conn, _db) = import("chrome_histogram");
    let got = rows(
        &conn,
        "select s.name, a.key, a.display_value from slice s join args a using (arg_set_id)
         where a.key like 'chrome_histogram_sample.%' order by s.ts, a.id",
    );
    assert_eq!(
        got,
        table(&[
            ["slice1", "chrome_histogram_sample.name_hash", "10"],
            ["slice1", "chrome_histogram_sample.name", "histogram_name1"],
            ["slice1", "chrome_histogram_sample.sample", "100"],
            ["slice2", "chrome_histogram_sample.name_hash", "20"],
            ["slice2", "chrome_histogram_sample.name", "histogram_name2"],
            // No rule for 30: the hash alone.
            ["slice3", "chrome_histogram_sample.name_hash", "30"],
        ])
    );
}

/// behaviour-chrome-typed-args §4.1–§4.3: every ChromeTrackEvent extension is preloaded (no
/// extension_descriptor in the trace): enums by name, the extension `chrome_latency_info`
/// (1068) under the core field's prefix, and a memory-pressure notification's creation
/// location expanded (normalized file, line as int) unless its iid does not resolve.
#[test]
fn chrome_track_event_extensions_are_known_without_a_descriptor() {
    let (conn, _db) = import("chrome_extensions");
    let got = rows(
        &conn,
        "select s.name, a.key, a.value_type, a.display_value
         from slice s join args a using (arg_set_id) order by s.ts, a.id",
    );
    assert_eq!(
        got,
        table(&[
            [
                "pool",
                "thread_pool_task.task_priority",
                "string",
                "PRIORITY_USER_BLOCKING"
            ],
            [
                "pool",
                "thread_pool_task.execution_mode",
                "string",
                "EXECUTION_MODE_SEQUENCED"
            ],
            ["pool", "thread_pool_task.sequence_token", "int", "-3"],
            [
                "task",
                "current_task.event_offset_from_task_start_time_us",
                "uint",
                "7"
            ],
            ["task", "current_task.task_start_time_us", "uint", "9"],
            ["latency2", "chrome_latency_info.trace_id", "int", "42"],
            [
                "pressure",
                "chrome_memory_pressure_notification.level",
                "string",
                "MEMORY_PRESSURE_LEVEL_MODERATE"
            ],
            [
                "pressure",
                "chrome_memory_pressure_notification.file_name",
                "string",
                "base/mem.cc"
            ],
            [
                "pressure",
                "chrome_memory_pressure_notification.function_name",
                "string",
                "Listen"
            ],
            [
                "pressure",
                "chrome_memory_pressure_notification.line_number",
                "int",
                "12"
            ],
            [
                "pressure_unknown",
                "chrome_memory_pressure_notification.level",
                "string",
                "MEMORY_PRESSURE_LEVEL_CRITICAL"
            ],
            [
                "pressure_unknown",
                "chrome_memory_pressure_notification.creation_location_iid",
                "uint",
                "99"
            ],
        ])
    );
    assert_eq!(stat(&conn, "unknown_extension_fields"), "1");
}

/// Chrome writes its `extension_descriptor` after its events (here at the end of the file);
/// Trace Processor reads descriptors at tokenization, before any TrackEvent is parsed, so
/// fields only the trace's descriptors know (newer than Sextant's builtin ones) are still
/// reflected, in a TrackEvent's own fields and in a debug annotation's `proto_value`
/// (behaviour-chrome-typed-args §4.1, §4.2). Data: a cut of a real Chromium 148.0.7778.167
/// trace (Debian 12 package, headless): `chromium --headless --no-sandbox --disable-gpu
/// --trace-startup='*,disabled-by-default-v8.cpu_profiler,disabled-by-default-devtools.timeline'
/// --trace-startup-format=proto --trace-startup-duration=4 http://127.0.0.1:8765/page.html`,
/// cut by `tools/trim_sequence_runs.py … 129128 3973 54095`.
#[test]
fn extension_descriptors_at_the_end_of_the_file_describe_earlier_events() {
    let (conn, _db) = import("chromium148_late_extension_descriptor");
    let got = rows(
        &conn,
        "select s.name, a.key, a.value_type, a.display_value
         from slice s join args a using (arg_set_id)
         where a.key like 'begin_frame_args%' or a.key like 'frame_interval_decider%'
            or a.key like '%site_instance.process_assignment'
         order by s.ts, a.id",
    );
    let result = "FrameIntervalDeciderResult";
    let begin = "ExternalBeginFrameSource::OnBeginFrame";
    assert_eq!(
        got,
        table(&[
            [
                result,
                "frame_interval_decider.result.result_interval.interval_us",
                "int",
                "0"
            ],
            [
                result,
                "frame_interval_decider.result.result_interval.type",
                "string",
                "RESULT_INTERVAL_TYPE_EXACT"
            ],
            [
                result,
                "frame_interval_decider.matcher_type",
                "string",
                "MATCHER_TYPE_NONE"
            ],
            [begin, "begin_frame_args.frame_time_us", "int", "3362048846"],
            [begin, "begin_frame_args.interval_delta_us", "int", "16666"],
            [
                "WebContentsImpl::UpdateTitle",
                "debug.render_frame_host.site_instance.process_assignment",
                "string",
                "CREATED_NEW_PROCESS"
            ],
            [begin, "begin_frame_args.frame_time_us", "int", "3362515494"],
            [begin, "begin_frame_args.interval_delta_us", "int", "16666"],
        ])
    );
    assert_eq!(stat(&conn, "unknown_extension_fields"), "0");
    // Sets kept open for late fields and still empty write no arg set.
    let dangling = rows(
        &conn,
        "select count(*) from slice where arg_set_id is not null
         and arg_set_id not in (select arg_set_id from args)",
    );
    assert_eq!(dangling, table(&[["0"]]));
}

/// The same for a proto value whose whole type, and a TrackEvent extension, only a descriptor
/// at the end of the file describes (tools/gen_late_descriptor_trace.py); a type nothing
/// describes is still a `track_event_parser_errors`.
#[test]
fn a_late_descriptor_describes_earlier_proto_value_types_and_extensions() {
    let (conn, _db) = import("late_proto_value_type");
    let got = rows(
        &conn,
        "select s.name, a.key, a.value_type, a.display_value
         from slice s left join args a using (arg_set_id) order by s.ts, a.id",
    );
    assert_eq!(
        got,
        table(&[
            ["first", "qa_late.v", "int", "42"],
            ["first", "debug.value.v", "int", "7"],
            ["first", "debug.value.s", "string", "hi"],
            ["second", "debug.value.v", "int", "7"],
            ["second", "debug.value.s", "string", "hi"],
            ["third", "NULL", "NULL", "NULL"],
        ])
    );
    assert_eq!(stat(&conn, "unknown_extension_fields"), "0");
    assert_eq!(stat(&conn, "track_event_parser_errors"), "1");
}

#[test]
fn a_preloaded_chrome_extension_is_reflected_and_translated() {
    let (conn, _db) = import("chrome_performance_mark");
    let got = rows(
        &conn,
        "select key, display_value from args where key like 'chrome_hashed%' order by id",
    );
    assert_eq!(
        got,
        table(&[
            ["chrome_hashed_performance_mark.site_hash", "10"],
            ["chrome_hashed_performance_mark.site", "site1"],
            ["chrome_hashed_performance_mark.mark_hash", "20"],
            ["chrome_hashed_performance_mark.mark", "mark2"],
        ])
    );
}

#[test]
fn repeated_nested_fields_are_indexed_and_class_names_deobfuscated() {
    let (conn, _db) = import("java_class_name_arg");
    let got = rows(
        &conn,
        "select flat_key, key, display_value from args where key like 'android_view_dump%'
         order by id",
    );
    assert_eq!(
        got,
        table(&[
            [
                "android_view_dump.activity.name",
                "android_view_dump.activity[0].name",
                "A1"
            ],
            [
                "android_view_dump.activity.view.class_name",
                "android_view_dump.activity[0].view[0].class_name",
                "class_A"
            ],
            [
                "android_view_dump.activity.view.class_name",
                "android_view_dump.activity[0].view[1].class_name",
                "def"
            ],
            [
                "android_view_dump.activity.view.class_name",
                "android_view_dump.activity[0].view[2].class_name",
                "ghi"
            ],
            [
                "android_view_dump.activity.name",
                "android_view_dump.activity[1].name",
                "B1"
            ],
            [
                "android_view_dump.activity.view.class_name",
                "android_view_dump.activity[1].view[0].class_name",
                "class_J"
            ],
        ])
    );
}

#[test]
fn mojo_methods_are_named_from_module_symbols() {
    let (conn, _db) = import("native_symbol_arg_2");
    let got = rows(
        &conn,
        "select s.name, a.key, a.display_value from slice s join args a using (arg_set_id)
         where a.key like 'chrome_mojo_event_info.%' order by s.ts, a.id",
    );
    assert_eq!(
        got,
        table(&[
            [
                "slice1",
                "chrome_mojo_event_info.mojo_method_name",
                "storage::mojom::Directory::OpenFile"
            ],
            [
                "slice1",
                "chrome_mojo_event_info.mojo_interface_tag",
                "storage.mojom.Directory"
            ],
            [
                "slice2",
                "chrome_mojo_event_info.mojo_method_name",
                "storage::mojom::File::Close"
            ],
            [
                "slice2",
                "chrome_mojo_event_info.mojo_interface_tag",
                "storage.mojom.File"
            ],
            [
                "slice3",
                "chrome_mojo_event_info.mojo_method_name",
                "Class::Method"
            ],
            [
                "slice3",
                "chrome_mojo_event_info.mojo_interface_tag",
                "Class::Method"
            ],
            ["slice4", "chrome_mojo_event_info.mojo_method_name", "Func"],
            [
                "slice4",
                "chrome_mojo_event_info.mojo_interface_tag",
                "Func"
            ],
        ])
    );
}

/// behaviour-chrome-typed-args §4.2/§5: a Mojo method's interned location names the
/// `stack_profile_mapping` row of its mapping (made like a profile's), and without symbols the
/// two keys move to the end of the set; a location whose mapping was never interned (or an
/// unknown iid) leaves the raw `mojo_interface_method_iid`.
#[test]
fn mojo_locations_name_stack_profile_mappings_or_stay_raw() {
    let (conn, _db) = import("mojo_unsymbolized");
    let got = rows(
        &conn,
        "select s.name, a.key, a.display_value from slice s join args a using (arg_set_id)
         order by s.ts, a.id",
    );
    let mapping = rows(
        &conn,
        "select id from stack_profile_mapping where name = '/lib.so'",
    );
    assert_eq!(mapping, vec![vec!["1".to_string()]]);
    assert_eq!(
        got,
        table(&[
            ["mojo_nosym", "chrome_mojo_event_info.ipc_hash", "5"],
            ["mojo_nosym", "debug.x", "1"],
            [
                "mojo_nosym",
                "chrome_mojo_event_info.mojo_interface_method.native_symbol.mapping_id",
                "1"
            ],
            [
                "mojo_nosym",
                "chrome_mojo_event_info.mojo_interface_method.native_symbol.rel_pc",
                "123"
            ],
            [
                "mojo_unknown_mapping",
                "chrome_mojo_event_info.mojo_interface_method_iid",
                "2"
            ],
            [
                "mojo_unknown_iid",
                "chrome_mojo_event_info.mojo_interface_method_iid",
                "42"
            ],
        ])
    );
}

#[test]
fn translation_tables_rename_process_tracks() {
    let (conn, _db) = import("process_track_name");
    let got = rows(
        &conn,
        "select name from process_track where name is not null
         union all select name from __intrinsic_track where type like '%counter%'
           and upid is not null order by name",
    );
    assert_eq!(
        got,
        table(&[
            ["explicitly_renamed"],
            ["implicitly_renamed"],
            ["renamed_counter"]
        ])
    );
    // Slice names are not process track names.
    assert_eq!(
        rows(&conn, "select name from slice order by ts"),
        table(&[["raw_slice1"], ["raw_slice2"]])
    );
}

#[test]
fn translated_slice_names_match_ends_by_their_translated_name() {
    // slice_name_translation.textproto: rules raw_name1 -> slice_name_1, raw_name2 ->
    // slice_name_2; Begin raw_name1 / nameless End, instants raw_name2 and other, then
    // Begin raw_name2 at 1400 closed by an End named raw_name2 at 1500. The End's name is
    // translated before matching, so the last slice closes.
    let (conn, _db) = import("slice_name_translation");
    assert_eq!(
        rows(&conn, "select ts, dur, name from slice order by ts"),
        table(&[
            ["1000", "100", "slice_name_1"],
            ["1200", "0", "slice_name_2"],
            ["1300", "0", "other"],
            ["1400", "100", "slice_name_2"],
        ])
    );
}

#[test]
fn chrome_packets_become_args_logs_raw_rows_and_metadata() {
    let (conn, _db) = import("chrome_features");
    // The incremental µs clock: events 10 µs apart.
    assert_eq!(
        rows(&conn, "select ts, dur, name from slice order by ts"),
        table(&[
            ["1000010000", "30000", "RunTask"],
            ["1000020000", "0", "RunTask"],
            ["1000045000", "0", "Closing"],
        ])
    );
    let begin = rows(&conn, "select arg_set_id from slice where dur > 0")[0][0].clone();
    assert_eq!(
        args_of(&conn, &begin),
        table(&[
            ["task.posted_from.file_name", "../base/task.cc"],
            ["task.posted_from.function_name", "PostTask"],
            ["task.posted_from.line_number", "42"],
            ["chrome_keyed_service.name", "EventRouter"],
            ["chrome_legacy_ipc.message_class", "CLASS_PAGE"],
            ["chrome_legacy_ipc.message_line", "77"],
            ["chrome_latency_info.trace_id", "5"],
            [
                "chrome_latency_info.component_info[0].component_type",
                "COMPONENT_INPUT_EVENT_LATENCY_BEGIN_RWH"
            ],
            ["chrome_latency_info.component_info[0].time_us", "100"],
            [
                "chrome_latency_info.component_info[1].component_type",
                "COMPONENT_INPUT_EVENT_LATENCY_SCROLL_UPDATE_ORIGINAL"
            ],
            ["chrome_latency_info.component_info[1].time_us", "200"],
            // Described by the trace's extension_descriptor.
            ["test_extension.note", "described"],
        ])
    );
    // The extension field nobody describes is counted, not guessed at.
    assert_eq!(stat(&conn, "unknown_extension_fields"), "1");
    // The log message: args, and an android_logs row tagged file:line (not normalized).
    assert_eq!(
        rows(&conn, "select ts, prio, tag, msg from android_logs"),
        table(&[[
            "1000020000",
            "6",
            "..\\base\\task.cc:42",
            "hello from chrome"
        ]])
    );
    // Chrome's thread type names the thread; labels and the process type are process args.
    assert_eq!(
        rows(&conn, "select tid, name from thread where tid = 4001"),
        table(&[["4001", "CrRendererMain"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select a.flat_key, a.key, a.display_value from process p
             join args a using (arg_set_id) where p.pid = 4000 order by a.id"
        ),
        table(&[
            [
                "chrome.process_label",
                "chrome.process_label[0]",
                "example.com"
            ],
            ["chrome.process_label", "chrome.process_label[1]", "Tab 2"],
            ["chrome.process_type", "chrome.process_type", "Renderer"],
            ["chrome.crash_trace_id", "chrome.crash_trace_id", "99"],
        ])
    );
    // A legacy context event and the metadata bundle are kept raw. The bundle's packet has
    // no timestamp and comes last in the file: the sorter takes it at the latest timestamp
    // read, after the event (behaviour-merging.md §1).
    let raw = rows(&conn, "select name, arg_set_id from chrome_raw order by id");
    assert_eq!(raw.len(), 2, "{raw:?}");
    assert_eq!(raw[0][0], "track_event.legacy_event");
    assert_eq!(raw[1][0], "chrome_event.metadata");
    assert_eq!(
        args_of(&conn, &raw[0][1]),
        table(&[
            ["legacy_event.category", "toplevel"],
            ["legacy_event.name", "FrameBlameContext"],
            ["legacy_event.phase", "("],
            ["legacy_event.unscoped_id", "4660"],
            ["legacy_event.id_scope", "PlatformThread"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select name, str_value, int_value from metadata where name like 'cr-%' order by name"
        ),
        table(&[
            ["cr-num-cpus", "NULL", "8"],
            ["cr-os-name", "Linux", "NULL"]
        ])
    );
    assert_eq!(stat(&conn, "empty_chrome_metadata"), "1");
    // flow_ids begins, terminating_flow_ids ends.
    assert_eq!(
        rows(
            &conn,
            "select o.name, i.name, f.trace_id from flow f join slice o on o.id = f.slice_out
             join slice i on i.id = f.slice_in"
        ),
        table(&[["RunTask", "Closing", "2748"]])
    );
}

#[test]
fn v1_flows_bind_to_the_top_of_the_stack_as_it_stands() {
    // `s` binds to what is on top of the thread's stack: a finished instant that nothing
    // has popped yet. The `f` comes first in the file; with bp:"e" it binds to the slice
    // enclosing it, without to the next slice that begins on its thread.
    let (conn, _db, _t) = import_json(
        r#"[
        {"ph":"f","id":"0x1","pid":1,"tid":2,"ts":50,"cat":"c","name":"n","bp":"e"},
        {"ph":"f","id":"0x2","pid":1,"tid":2,"ts":52,"cat":"c","name":"n"},
        {"ph":"i","s":"t","name":"mark","pid":1,"tid":1,"ts":5},
        {"ph":"s","id":"0x1","pid":1,"tid":1,"ts":6,"cat":"c","name":"n"},
        {"ph":"s","id":"0x2","pid":1,"tid":1,"ts":7,"cat":"c","name":"n"},
        {"ph":"X","name":"kernel","pid":1,"tid":2,"ts":50,"dur":5},
        {"ph":"X","name":"next","pid":1,"tid":2,"ts":60,"dur":5}
        ]"#,
    );
    assert_eq!(
        rows(
            &conn,
            "select o.name, i.name, f.trace_id from flow f join slice o on o.id = f.slice_out
             join slice i on i.id = f.slice_in order by f.id"
        ),
        table(&[["mark", "kernel", "0"], ["mark", "next", "1"]])
    );
    // v1 flows carry their name and category.
    assert_eq!(
        rows(
            &conn,
            "select a.key, a.display_value from flow f join args a using (arg_set_id)
             where f.id = 0 order by a.id"
        ),
        table(&[["name", "n"], ["cat", "c"]])
    );
    assert_eq!(stat(&conn, "flow_no_enclosing_slice"), "0");
}

#[test]
fn v1_flow_duplicates_orphans_and_deferred_ends() {
    let (conn, _db, _t) = import_json(
        r#"[
        {"ph":"X","name":"a","pid":1,"tid":1,"ts":10,"dur":5},
        {"ph":"s","id":1,"pid":1,"tid":1,"ts":11,"cat":"c","name":"n"},
        {"ph":"X","name":"b","pid":1,"tid":1,"ts":20,"dur":5},
        {"ph":"s","id":1,"pid":1,"tid":1,"ts":21,"cat":"c","name":"n"},
        {"ph":"s","id":2,"pid":1,"tid":3,"ts":22,"cat":"c","name":"n"},
        {"ph":"f","id":1,"pid":1,"tid":2,"ts":30,"cat":"c","name":"n"},
        {"ph":"f","id":9,"pid":1,"tid":2,"ts":31,"cat":"c","name":"n"},
        {"ph":"X","name":"c","pid":1,"tid":2,"ts":40,"dur":5}
        ]"#,
    );
    // The second `s` of id 1 is a duplicate: the flow still starts at `a`. The `f`s wait
    // for `c`; id 9 never began and starts, as the reference's lookup does, at slice 0.
    assert_eq!(
        rows(
            &conn,
            "select o.name, i.name from flow f join slice o on o.id = f.slice_out
             join slice i on i.id = f.slice_in order by f.id"
        ),
        table(&[["a", "c"], ["a", "c"]])
    );
    assert_eq!(stat(&conn, "flow_duplicate_id"), "1");
    assert_eq!(stat(&conn, "flow_no_enclosing_slice"), "1");
    assert_eq!(stat(&conn, "flow_end_without_start"), "0");
}

#[test]
fn v2_flows_bind_their_own_slices() {
    let (conn, _db, _t) = import_json(
        r#"[
        {"ph":"X","name":"out","pid":1,"tid":1,"ts":10,"dur":5,"bind_id":"0x10","flow_out":true},
        {"ph":"X","name":"again","pid":1,"tid":1,"ts":16,"dur":1,"bind_id":"0x10","flow_out":true},
        {"ph":"X","name":"step","pid":1,"tid":2,"ts":20,"dur":5,"bind_id":"0x10","flow_in":true,"flow_out":true},
        {"ph":"X","name":"in","pid":1,"tid":3,"ts":30,"dur":5,"bind_id":"0x10","flow_in":true},
        {"ph":"X","name":"lost","pid":1,"tid":3,"ts":40,"dur":5,"bind_id":"0x11","flow_in":true},
        {"ph":"X","name":"none","pid":1,"tid":3,"ts":50,"dur":5,"bind_id":"0x12"}
        ]"#,
    );
    assert_eq!(
        rows(
            &conn,
            "select o.name, i.name, f.trace_id from flow f join slice o on o.id = f.slice_out
             join slice i on i.id = f.slice_in order by f.id"
        ),
        table(&[["out", "step", "16"], ["step", "in", "16"]])
    );
    assert_eq!(stat(&conn, "flow_duplicate_id"), "1");
    assert_eq!(stat(&conn, "flow_end_without_start"), "1");
    assert_eq!(stat(&conn, "flow_without_direction"), "1");
}

#[test]
fn kineto_flows_lead_from_each_launch_to_its_kernel() {
    let (conn, _db) = common::import_data(".", "kineto_h100_trimmed.json");
    let got = rows(
        &conn,
        "select o.name, count(*), sum(i.ts >= o.ts), count(distinct f.slice_in)
         from flow f join slice o on o.id = f.slice_out join slice i on i.id = f.slice_in
         group by o.name order by o.name",
    );
    assert_eq!(
        got,
        table(&[
            ["cudaLaunchKernel", "6", "6", "6"],
            ["cudaMemsetAsync", "2", "2", "2"]
        ])
    );
    // Each kernel's flow comes from the launch with its correlation id.
    let mismatched = rows(
        &conn,
        "select count(*) from flow f join slice o on o.id = f.slice_out
         join slice i on i.id = f.slice_in
         where extract_arg(o.arg_set_id, 'args.correlation')
            != extract_arg(i.arg_set_id, 'args.correlation')",
    );
    assert_eq!(mismatched, table(&[["0"]]));
}

#[test]
fn json_pid_and_tid_zero_are_ordinary_ids_not_the_idle_rows() {
    // behaviour-parsers §0.5: JSON does not map pid/tid 0 to the reserved rows.
    let (conn, _db, _trace) = import_json(
        r#"[{"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"swapper"}},
            {"ph":"X","name":"work","pid":0,"tid":0,"ts":1,"dur":2}]"#,
    );
    let got = rows(
        &conn,
        "select p.upid > 0, p.pid, t.utid > 0, t.tid, t.name, t.is_main_thread
         from slice s join thread_track tt on tt.id = s.track_id join thread t using (utid)
         join process p using (upid)",
    );
    assert_eq!(got, table(&[["1", "0", "1", "0", "swapper", "1"]]));
    let idle = rows(&conn, "select name from thread where utid = 0");
    assert_eq!(idle, table(&[["NULL"]]));
}

/// Every event the JSON parser cannot use is counted in `json_parser_failure` and gets a
/// `_trace_import_logs` row at its time naming the event and its phase, as the reference
/// logs it.
#[test]
fn json_parser_failures_are_import_logs_naming_the_event() {
    let (conn, _json, _db) = import_json(
        r#"[{"ph":"X","name":"nodur","pid":1,"tid":2,"ts":10},
            {"ph":"B","name":"ok","pid":1,"tid":2,"ts":20},
            {"ph":"E","pid":1,"tid":2,"ts":30},
            {"ph":"i","name":"noTid","pid":1,"ts":40},
            {"ph":"C","name":"ctr","pid":1,"ts":50,"args":{"a":"1.5e"}},
            {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":""}}]"#,
    );
    assert_eq!(
        rows(
            &conn,
            "select l.ts, l.severity, l.trace_id, extract_arg(l.arg_set_id, 'event_name'),
                    extract_arg(l.arg_set_id, 'event_phase')
             from _trace_import_logs l where l.name = 'json_parser_failure' order by l.ts"
        ),
        table(&[
            ["0", "error", "0", "thread_name", "M"],
            ["10000", "error", "0", "nodur", "X"],
            ["40000", "error", "0", "noTid", "i"],
            ["50000", "error", "0", "ctr", "C"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select value from stats where name = 'json_parser_failure'"
        ),
        table(&[["4"]])
    );
}

/// A complete slice below an open one: the open ones are closed at its end only once time
/// is *past* that end (Trace Processor's stack cleaning), so an End at exactly the complete
/// slice's end still closes its own Begin, and only the later event counts a misplaced end.
#[test]
fn open_slices_over_a_complete_one_close_only_past_its_end() {
    let (conn, _json, _db) = import_json(
        r#"[{"ph":"X","name":"outer","pid":1,"tid":1,"ts":820,"dur":15},
            {"ph":"B","name":"never ends","pid":1,"tid":1,"ts":826},
            {"ph":"I","name":"at end","pid":1,"tid":1,"ts":835},
            {"ph":"I","name":"past end","pid":1,"tid":1,"ts":837},
            {"ph":"B","name":"over","pid":1,"tid":1,"ts":860},
            {"ph":"X","name":"x","pid":1,"tid":1,"ts":860,"dur":10},
            {"ph":"B","name":"under","pid":1,"tid":1,"ts":860},
            {"ph":"E","name":"under","pid":1,"tid":1,"ts":870},
            {"ph":"E","name":"over","pid":1,"tid":1,"ts":870}]"#,
    );
    assert_eq!(
        rows(
            &conn,
            "select s.name, s.dur, s.depth, p.name from slice s left join slice p on s.parent_id = p.id
             order by s.ts, s.depth"
        ),
        table(&[
            ["outer", "15000", "0", "NULL"],
            ["never ends", "9000", "1", "outer"],
            ["at end", "0", "2", "never ends"],
            ["past end", "0", "0", "NULL"],
            ["x", "10000", "0", "NULL"],
            ["over", "10000", "1", "x"],
            ["under", "10000", "2", "over"],
        ])
    );
    assert_eq!(stat(&conn, "misplaced_end_event"), "1");
}

/// A JSON counter value names the thread that emitted it (row arg `utid`, an int); the
/// thread's track dimensions are uints, so the two sets are not one shared set (the
/// reference's args tables count them apart).
#[test]
fn json_counter_values_name_their_thread_apart_from_track_dimensions() {
    let (conn, _json, _db) = import_json(
        r#"[{"ph":"C","name":"ctr","pid":1,"tid":2,"ts":10,"args":{"v":1}},
            {"ph":"X","name":"s","pid":1,"tid":2,"ts":10,"dur":5}]"#,
    );
    assert_eq!(
        rows(
            &conn,
            "select a.key, a.value_type, t.utid = a.int_value from counter c
             join args a using (arg_set_id) join thread t on t.tid = 2"
        ),
        table(&[["utid", "int", "1"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select t.type, a.key, a.value_type from track t join args a
             on a.arg_set_id = t.dimension_arg_set_id order by t.type"
        ),
        table(&[
            ["json_counter", "upid", "uint"],
            ["thread_execution", "utid", "uint"]
        ])
    );
    assert_eq!(rows(&conn, "select count(*) from args"), table(&[["3"]]));
}

/// A legacy async track's dimensions are `scope` (a null arg when the id has none) and
/// `name`, then its slot index, as the reference's: a global and a process-local track alike.
#[test]
fn legacy_async_tracks_have_a_scope_dimension_even_when_null() {
    let (conn, _json, _db) = import_json(
        r#"[{"ph":"b","name":"g","cat":"c","id":"0x1","pid":1,"tid":1,"ts":1},
            {"ph":"e","name":"g","cat":"c","id":"0x1","pid":1,"tid":1,"ts":2},
            {"ph":"b","name":"l","cat":"c","id2":{"local":"0x2"},"pid":1,"tid":1,"ts":3},
            {"ph":"e","name":"l","cat":"c","id2":{"local":"0x2"},"pid":1,"tid":1,"ts":4}]"#,
    );
    assert_eq!(
        rows(
            &conn,
            "select t.type, group_concat(a.key || '=' || a.display_value, ',')
             from track t join args a on a.arg_set_id = t.dimension_arg_set_id
             where t.type like 'legacy_async%' group by t.id order by t.id"
        ),
        table(&[
            [
                "legacy_async_global_slice",
                "scope=[NULL],name=g,track_compressor_idx=0"
            ],
            [
                "legacy_async_process_slice",
                "scope=[NULL],name=l,upid=1,track_compressor_idx=0"
            ],
        ])
    );
}

#[test]
fn json_counters_name_their_thread_and_share_one_process_track_made_at_the_end() {
    // A counter from tid 2 before any slice, then a slice and the same counter from tid 3.
    let (conn, _db, _t) = import_json(
        r#"[{"ph":"C","pid":1,"tid":2,"ts":1,"name":"ctr","args":{"a":1}},
            {"ph":"X","pid":1,"tid":3,"ts":2,"dur":5,"name":"s"},
            {"ph":"C","pid":1,"tid":3,"ts":3,"name":"ctr","args":{"a":2}}]"#,
    );
    assert_eq!(
        rows(
            &conn,
            "select c.ts, c.track_id, t.name, t.type, th.tid from counter c
             join process_counter_track t on t.id = c.track_id
             join args a on a.arg_set_id = c.arg_set_id and a.key = 'utid'
             join thread th on th.utid = a.int_value order by c.id"
        ),
        // The slice's thread track (made during the import) is track 0.
        table(&[
            ["1000", "1", "ctr a", "json_counter", "2"],
            ["3000", "1", "ctr a", "json_counter", "3"],
        ])
    );
}

#[test]
fn slices_nested_512_deep_or_more_are_dropped_and_logged() {
    // behaviour-parsers §0.1: depth >= 512 is dropped with slice_max_depth_exceeded
    // (args parent_slice_name, current_slice_name).
    let events: Vec<String> = (0..515)
        .map(|i| format!(r#"{{"ph":"B","pid":1,"tid":1,"ts":{i},"name":"s{i}"}}"#))
        .collect();
    let (conn, _db, _trace) = import_json(&format!("[{}]", events.join(",")));
    assert_eq!(
        rows(&conn, "select count(*), max(depth) from slice"),
        table(&[["512", "511"]])
    );
    assert_eq!(stat(&conn, "slice_max_depth_exceeded"), "3");
    let first = rows(
        &conn,
        "select a.key, a.display_value from _trace_import_logs l join args a using (arg_set_id)
         where l.name = 'slice_max_depth_exceeded' and l.ts = 512000 order by a.id",
    );
    assert_eq!(
        first,
        table(&[
            ["parent_slice_name", "s511"],
            ["current_slice_name", "s512"]
        ])
    );
}

#[test]
fn json_counter_tracks_are_made_when_the_trace_ends() {
    // behaviour-parsers §1.5: `C` tracks are made at the end of the trace, after the tracks
    // of every other event; the values keep their time order.
    let (conn, _db, _trace) = import_json(
        r#"[{"ph":"C","pid":1,"tid":2,"ts":1,"name":"ctr","args":{"a":1}},
            {"ph":"X","pid":1,"tid":2,"ts":2,"dur":1,"name":"x"},
            {"ph":"b","pid":1,"tid":2,"ts":3,"name":"as","id":1},
            {"ph":"C","pid":3,"tid":3,"ts":4,"name":"ctr2","args":{"a":2}}]"#,
    );
    assert_eq!(
        rows(&conn, "select id, name, type from track order by id"),
        table(&[
            ["0", "NULL", "thread_execution"],
            ["1", "as", "legacy_async_global_slice"],
            ["2", "ctr a", "json_counter"],
            ["3", "ctr2 a", "json_counter"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select id, ts, track_id, value from counter order by id"
        ),
        table(&[["0", "1000", "2", "1"], ["1", "4000", "3", "2"]])
    );
}

#[test]
fn processes_chrome_lists_without_describing_them_are_missing_until_described() {
    // tools/gen_chrome_missing_processes.py: pids 10, 100, 1000 listed at 1 ns, pid 10
    // again at 5 s; pid 10 described at each listing (once by a re-emitted descriptor),
    // pid 100 only at 1 s, pid 1000 never.
    let (conn, _db) = import("missing_processes");
    assert_eq!(
        rows(
            &conn,
            "select pid, reliable_from from experimental_missing_chrome_processes \
             join process using(upid) order by upid"
        ),
        table(&[["100", "1000000000"], ["1000", "5000000000"]])
    );
}

/// v8_code.textproto: one isolate with a process-wide code range and an embedded blob, a
/// JS script with two functions, a wasm script; code of every kind, inside and outside the
/// isolate's regions, with and without a tid (the sequence's V8 defaults give 11), and
/// events naming what was never interned.
#[test]
fn v8_code_events_fill_the_v8_tables_and_jit_code() {
    let (conn, _db) = import("v8_code");
    assert_eq!(
        rows(&conn, "select * from v8_isolate"),
        table(&[
            ["0", "1", "3", "1048576", "4096", "4096", "65536", "1", "NULL"],
            // Sequence 2's isolate: its code range starts at 0.
            ["1", "2", "1", "0", "0", "0", "100000", "0", "NULL"],
        ])
    );
    assert_eq!(
        rows(&conn, "select * from v8_js_script"),
        table(&[[
            "0",
            "0",
            "7",
            "NORMAL",
            "https://a.com/s.js",
            "function f(){}"
        ]])
    );
    assert_eq!(
        rows(&conn, "select * from v8_js_function"),
        table(&[
            ["0", "f", "0", "0", "NORMAL_FUNCTION", "1", "10"],
            ["1", "g", "0", "1", "ARROW_FUNCTION", "NULL", "NULL"],
        ])
    );
    // Interpreted code keeps its bytecode and has no JIT code.
    assert_eq!(
        rows(&conn, "select * from v8_js_code"),
        table(&[
            ["0", "0", "0", "TURBOFAN", "NULL"],
            ["1", "NULL", "1", "IGNITION", "qrs="],
            ["2", "1", "0", "SPARKPLUG", "NULL"],
        ])
    );
    assert_eq!(
        rows(&conn, "select * from v8_internal_code"),
        table(&[["0", "2", "0", "Builtin:Abort", "BUILTIN"]])
    );
    assert_eq!(
        rows(&conn, "select * from v8_wasm_script"),
        table(&[["0", "0", "9", "https://a.com/m.wasm", "AGFzbQ==", "NULL"]])
    );
    assert_eq!(
        rows(&conn, "select * from v8_wasm_code"),
        table(&[["0", "3", "0", "0", "wf", "LIFTOFF", "33"]])
    );
    assert_eq!(
        rows(&conn, "select * from v8_regexp_code"),
        table(&[["0", "4", "0", "a+b"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select j.id, create_ts, estimated_delete_ts, tid, start_address, size, \
             function_name, native_code_base64 from __intrinsic_jit_code j \
             join thread using(utid) order by j.id"
        ),
        table(&[
            ["0", "100", "NULL", "11", "8192", "64", "f", "AQID"],
            ["1", "120", "NULL", "11", "12288", "32", "f", "NULL"],
            [
                "2",
                "130",
                "NULL",
                "11",
                "1048580",
                "16",
                "Builtin:Abort",
                "NULL"
            ],
            ["3", "140", "NULL", "11", "16384", "100", "wf", "NULL"],
            ["4", "150", "NULL", "11", "20480", "50", "a+b", "NULL"],
        ])
    );
    // The IGNITION code's own tid 12 is a thread of the isolate's process.
    assert_eq!(
        rows(
            &conn,
            "select pid from thread join process using(upid) where tid = 12"
        ),
        table(&[["10"]])
    );
    // Unknown isolate and function iids; an isolate without a code range; code outside
    // every region; code without a size; no tid and no defaults on sequence 2.
    for (name, n) in [
        ("v8_intern_errors", "2"),
        ("v8_isolate_has_no_code_range", "1"),
        ("v8_no_code_range", "1"),
        ("v8_code_load_missing_code_range", "1"),
        ("v8_no_defaults", "1"),
        ("proto_packet_kind_not_imported", "0"),
    ] {
        assert_eq!(stat(&conn, name), n, "{name}");
    }
}

/// memory_snapshot.textproto: two dumps at 1000 (pids 20 and 10; one global, shared node
/// owned by a node of each, at importance 2 and 1) make one snapshot, a dump at 2000 of pid
/// 20 with no nodes another. A dump nested 300 deep and an edge to an unknown node are
/// dropped and counted.
#[test]
fn memory_snapshots_become_graphs_with_effective_sizes() {
    let (conn, _db) = import("memory_snapshot");
    assert_eq!(
        rows(
            &conn,
            "select sum(value) from sextant_stats where name = 'memory_snapshot_nodes_dropped'"
        ),
        table(&[["2"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select count(*) from memory_snapshot_node where path like 'd/d/d%'"
        ),
        table(&[["0"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select m.id, timestamp, t.type, detail_level from memory_snapshot m \
             join track t on t.id = m.track_id"
        ),
        table(&[
            ["0", "1000", "legacy_chrome_global_instants", "detailed"],
            ["1", "2000", "legacy_chrome_global_instants", "background"],
        ])
    );
    // Processes by pid, then the shared graph as pid 0's.
    assert_eq!(
        rows(
            &conn,
            "select snapshot_id, pid from process_memory_snapshot join process using(upid) \
             order by process_memory_snapshot.id"
        ),
        table(&[
            ["0", "10"],
            ["0", "20"],
            ["0", "0"],
            ["1", "20"],
            ["1", "0"]
        ])
    );
    // Depth first by name; malloc's children leave 40 bytes to `<unspecified>`; the shared
    // node's memory all goes to its most important owner (gpu/buf), none to cc/tiles or
    // itself.
    assert_eq!(
        rows(
            &conn,
            "select id, process_snapshot_id, parent_node_id, path, size, effective_size, \
             arg_set_id is not null from memory_snapshot_node"
        ),
        table(&[
            ["0", "0", "NULL", "cc", "30", "0", "0"],
            ["1", "0", "0", "cc/tiles", "30", "0", "0"],
            ["2", "1", "NULL", "gpu", "50", "50", "0"],
            ["3", "1", "2", "gpu/buf", "50", "50", "0"],
            ["4", "1", "NULL", "malloc", "100", "100", "0"],
            ["5", "1", "4", "malloc/<unspecified>", "40", "40", "0"],
            ["6", "1", "4", "malloc/allocated_objects", "60", "60", "1"],
            ["7", "1", "NULL", "v8", "40", "40", "0"],
            ["8", "1", "7", "v8/heap", "40", "40", "1"],
            ["9", "1", "NULL", "weakone", "1", "1", "0"],
            ["10", "2", "NULL", "global", "50", "0", "0"],
            ["11", "2", "10", "global/shm1", "50", "0", "0"],
        ])
    );
    // Edges newest first; the edge to an unknown node is ignored.
    assert_eq!(
        rows(&conn, "select * from memory_snapshot_edge"),
        table(&[["0", "3", "11", "2"], ["1", "1", "11", "1"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select n.path, key, display_value from memory_snapshot_node n \
             join args using(arg_set_id) order by n.id, args.id"
        ),
        table(&[
            ["malloc/allocated_objects", "note.value", "hi"],
            ["malloc/allocated_objects", "object_count.value", "7"],
            ["v8/heap", "allocated_objects_size.value", "30"],
            ["v8/heap", "allocated_objects_size.unit", "bytes"],
        ])
    );
    assert_eq!(stat(&conn, "proto_packet_kind_not_imported"), "0");
}

/// chrome_process_stats.textproto: Chrome's memory-infra OS dump fields in process_stats
/// (pid 20 with both counters and `is_peak_rss_resettable`, pid 10 with a footprint only)
/// beside a light memory snapshot at the same time.
#[test]
fn chrome_process_stats_fields_are_counters_and_a_process_arg() {
    let (conn, _db) = import("chrome_process_stats");
    assert_eq!(
        rows(
            &conn,
            "select pid, t.name, t.type, c.ts, c.value from counter c \
             join process_counter_track t on c.track_id = t.id join process using(upid) \
             order by pid, t.name"
        ),
        table(&[
            [
                "10",
                "chrome.private_footprint_kb",
                "chrome_process_stats",
                "1000",
                "5120"
            ],
            [
                "20",
                "chrome.peak_resident_set_kb",
                "chrome_process_stats",
                "1000",
                "40960"
            ],
            [
                "20",
                "chrome.private_footprint_kb",
                "chrome_process_stats",
                "1000",
                "28672"
            ],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select pid, extract_arg(arg_set_id, 'is_peak_rss_resettable') from process \
             where pid in (10, 20) order by pid"
        ),
        table(&[["10", "NULL"], ["20", "1"]])
    );
    // The reference's system probes parser still counts the peak as a field it skips.
    assert_eq!(stat(&conn, "proc_stat_unknown_counters"), "1");
    assert_eq!(
        rows(&conn, "select timestamp, detail_level from memory_snapshot"),
        table(&[["1000", "light"]])
    );
}
