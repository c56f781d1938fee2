//! Android packet families of the android test binary (`tests/android.rs`) that carry
//! whole messages: network packets, input events and the winscope traces (shell
//! transitions, SurfaceFlinger, window manager, input method, view capture, ProtoLog).

use super::import;
use crate::common::{rows, table};

#[test]
fn network_packets_are_slices_named_by_their_apps_package() {
    // tools/gen_network_trace.py: the packages list comes after the packets; 1010123 is
    // app 10123 of user 10; one bundle's context was never interned, another has more
    // timestamps than lengths.
    let (conn, _db) = import("network_packets.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select ts, dur, track_name, package_name, iface, direction, packet_count,
               packet_length, packet_transport, packet_tcp_flags, socket_tag, socket_uid,
               local_port, remote_port, packet_icmp_type, packet_icmp_code
             from android_network_packets order by ts"
        ),
        table(&[
            [
                "1000",
                "0",
                "wlan0 Transmitted",
                "com.example.app",
                "wlan0",
                "Transmitted",
                "1",
                "58",
                "IPPROTO_TCP",
                "2",
                "0x407",
                "10123",
                "5100",
                "443",
                "NULL",
                "NULL"
            ],
            [
                "1500",
                "0",
                "wlan0 Received",
                "com.example.app",
                "wlan0",
                "Received",
                "1",
                "100",
                "IPPROTO_UDP",
                "0",
                "0x0",
                "1010123",
                "NULL",
                "NULL",
                "NULL",
                "NULL"
            ],
            [
                "2000",
                "0",
                "rmnet0 Transmitted",
                "uid=1000",
                "rmnet0",
                "Transmitted",
                "1",
                "10",
                "IPPROTO_ICMP",
                "0",
                "0x0",
                "1000",
                "NULL",
                "NULL",
                "8",
                "0"
            ],
            [
                "2050",
                "0",
                "rmnet0 Transmitted",
                "uid=1000",
                "rmnet0",
                "Transmitted",
                "1",
                "20",
                "IPPROTO_ICMP",
                "0",
                "0x0",
                "1000",
                "NULL",
                "NULL",
                "8",
                "0"
            ],
            [
                "2100",
                "0",
                "rmnet0 Transmitted",
                "uid=1000",
                "rmnet0",
                "Transmitted",
                "1",
                "30",
                "IPPROTO_ICMP",
                "0",
                "0x0",
                "1000",
                "NULL",
                "NULL",
                "8",
                "0"
            ],
            [
                "3000",
                "400",
                "rmnet0 Transmitted",
                "uid=1000",
                "rmnet0",
                "Transmitted",
                "5",
                "500",
                "IPPROTO_ICMP",
                "0",
                "0x0",
                "1000",
                "NULL",
                "NULL",
                "8",
                "0"
            ],
            [
                "3100",
                "100",
                "rmnet0 Transmitted",
                "uid=1000",
                "rmnet0",
                "Transmitted",
                "2",
                "80",
                "IPPROTO_ICMP",
                "0",
                "0x0",
                "1000",
                "NULL",
                "NULL",
                "8",
                "0"
            ],
            [
                "3300",
                "0",
                "rmnet0 Transmitted",
                "uid=1000",
                "rmnet0",
                "Transmitted",
                "1",
                "40",
                "IPPROTO_ICMP",
                "0",
                "0x0",
                "1000",
                "NULL",
                "NULL",
                "8",
                "0"
            ],
        ])
    );
    // Overlapping aggregates take separate lanes of the interface's tracks.
    assert_eq!(
        rows(
            &conn,
            "select s.ts, t.type, extract_arg(t.dimension_arg_set_id, 'track_compressor_idx')
             from slice s join track t on s.track_id = t.id where s.ts in (3000, 3100)
             order by s.ts"
        ),
        table(&[
            ["3000", "android_network_packets", "0"],
            ["3100", "android_network_packets", "1"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select name, value from stats where name glob 'network_trace_*' and value > 0
             order by name"
        ),
        table(&[
            ["network_trace_intern_errors", "1"],
            ["network_trace_parse_errors", "1"]
        ])
    );
}

#[test]
fn input_events_keep_their_fields_as_args_and_their_protos_in_base64() {
    // tools/gen_input_event_trace.py: a motion event, a redacted key event, a dispatch of
    // the motion to a window, and a view capture (its own table since winscope import).
    let (conn, _db) = import("input_events.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select id, event_id, ts, base64_proto_id from android_motion_events"
        ),
        table(&[["0", "2882343476", "5000000", "0"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select id, event_id, ts, base64_proto_id from android_key_events"
        ),
        table(&[["0", "77", "6000000", "1"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select id, event_id, vsync_id, window_id, base64_proto from android_input_event_dispatch"
        ),
        table(&[[
            "0",
            "2882343476",
            "99",
            "12",
            "DTQSzasQYxgMIhUIABUAAMlCHQBASEMiBwgAFQAAIEEoAA=="
        ]])
    );
    assert_eq!(
        rows(
            &conn,
            "select a.key, a.value_type, a.display_value from android_motion_events e
             join args a using (arg_set_id) where a.key glob 'pointer[[]0]*' order by a.id"
        ),
        table(&[
            ["pointer[0].axis_value[0].axis", "int", "0"],
            ["pointer[0].axis_value[0].value", "real", "100.5"],
            ["pointer[0].axis_value[1].axis", "int", "1"],
            ["pointer[0].axis_value[1].value", "real", "200.25"],
            ["pointer[0].pointer_id", "int", "0"],
            ["pointer[0].tool_type", "int", "1"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select a.key, a.display_value from android_key_events e
             join args a using (arg_set_id) where a.key in ('event_id', 'display_id', 'action')
             order by a.id"
        ),
        table(&[["event_id", "77"], ["action", "1"], ["display_id", "-1"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select (select count(*) from sextant_stats
                     where name = 'proto_packet_kind_not_imported' and value > 0),
                    (select count(*) from viewcapture)"
        ),
        table(&[["0", "1"]])
    );
}

#[test]
fn shell_transitions_merge_by_id_and_winscope_snapshots_keep_args_and_protos() {
    // tools/gen_winscope_trace.py: transition 7 in three packets (window manager sent it,
    // shell dispatched it, window manager finished it), 10 merged, 11 aborted without a
    // dispatch; handler mappings; SurfaceFlinger snapshots, transactions, window manager.
    let (conn, _db) = import("winscope.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select id, ts, transition_id, transition_type, send_time_ns, dispatch_time_ns,
                    duration_ns, handler, status, flags, start_transaction_id
             from window_manager_shell_transitions order by id"
        ),
        table(&[
            [
                "0",
                "2000",
                "7",
                "3",
                "1500",
                "2000",
                "7500",
                "2",
                "played",
                "0",
                "5604932321952"
            ],
            ["1", "2500", "10", "NULL", "NULL", "2500", "NULL", "NULL", "merged", "NULL", "NULL"],
            ["2", "0", "11", "NULL", "NULL", "NULL", "NULL", "NULL", "aborted", "NULL", "NULL"],
        ])
    );
    // One arg set per transition: the packets' args joined, a repeated key the later value.
    assert_eq!(
        rows(
            &conn,
            "select a.key, a.display_value from window_manager_shell_transitions t
             join args a using (arg_set_id)
             where t.transition_id = 7 and a.key in ('id', 'type', 'send_time_ns',
               'dispatch_time_ns', 'finish_time_ns', 'targets[1].window_id')
             order by a.key"
        ),
        table(&[
            ["dispatch_time_ns", "2000"],
            ["finish_time_ns", "9000"],
            ["id", "7"],
            ["send_time_ns", "1500"],
            ["targets[1].window_id", "12"],
            ["type", "3"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select transition_id, layer_id, window_id
             from window_manager_shell_transition_participants order by id"
        ),
        table(&[["7", "244", "219036708"], ["7", "10", "12"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select transition_id, base64_proto from window_manager_shell_transition_protos
             where transition_id != 7 order by id"
        ),
        table(&[["10", "CAogxBMouBd4Bw=="], ["11", "CAs4oB8="]])
    );
    assert_eq!(
        rows(
            &conn,
            "select handler_id, handler_name from window_manager_shell_transition_handlers"
        ),
        table(&[
            ["1", "DefaultTransitionHandler"],
            ["2", "RecentsTransitionHandler"]
        ])
    );
    // Snapshot args: every field but the layers; each layer its own row and args.
    assert_eq!(
        rows(
            &conn,
            "select s.id, s.ts, a.key, a.display_value from surfaceflinger_layers_snapshot s
             join args a using (arg_set_id) order by s.id, a.key"
        ),
        table(&[
            [
                "0",
                "2748300281655",
                "displays[0].id",
                "4619827677550801152"
            ],
            ["0", "2748300281655", "displays[0].name", "Common Panel"],
            ["0", "2748300281655", "displays[0].size.h", "2400"],
            ["0", "2748300281655", "displays[0].size.w", "1080"],
            [
                "0",
                "2748300281655",
                "elapsed_realtime_nanos",
                "2748300281655"
            ],
            ["0", "2748300281655", "vsync_id", "24766"],
            ["0", "2748300281655", "where", "visibleRegionsDirty"],
            [
                "1",
                "2749500341063",
                "elapsed_realtime_nanos",
                "2749500341063"
            ],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select l.id, l.snapshot_id, a.key, a.display_value from surfaceflinger_layer l
             join args a using (arg_set_id)
             where a.key in ('id', 'parent', 'children[1]', 'hwc_composition_type', 'color.a')
             order by l.id, a.key"
        ),
        table(&[
            ["0", "0", "children[1]", "5"],
            ["0", "0", "color.a", "0.5"],
            ["0", "0", "hwc_composition_type", "HWC_TYPE_DEVICE"],
            ["0", "0", "id", "3"],
            ["0", "0", "parent", "-1"],
            ["1", "0", "id", "4"],
            ["1", "0", "parent", "3"],
            ["2", "1", "id", "5"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select t.ts, t.vsync_id, a.key, a.display_value from surfaceflinger_transactions t
             join args a using (arg_set_id) where a.key glob 'transactions*' order by a.key"
        ),
        table(&[
            [
                "2749532892211",
                "24767",
                "transactions[0].layer_changes[0].layer_id",
                "4"
            ],
            [
                "2749532892211",
                "24767",
                "transactions[0].layer_changes[0].what",
                "2"
            ],
            [
                "2749532892211",
                "24767",
                "transactions[0].layer_changes[0].x",
                "1.5"
            ],
            ["2749532892211", "24767", "transactions[0].pid", "100"],
            [
                "2749532892211",
                "24767",
                "transactions[0].transaction_id",
                "5"
            ],
            ["2749532892211", "24767", "transactions[0].uid", "1000"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select w.ts, a.key, a.display_value from windowmanager w
             join args a using (arg_set_id) order by a.key"
        ),
        table(&[
            ["558296470731", "elapsed_realtime_nanos", "558296470731"],
            ["558296470731", "where", "trace.enable"],
            [
                "558296470731",
                "window_manager_service.focused_app",
                "com.example/.Main"
            ],
            [
                "558296470731",
                "window_manager_service.policy.rotation_mode",
                "USER_ROTATION_LOCKED"
            ],
        ])
    );
    // Input method entries: a row each, under the reference's module view names too.
    assert_eq!(
        rows(
            &conn,
            "select 'c', ts, extract_arg(arg_set_id, 'where'),
                    extract_arg(arg_set_id, 'client.display_id') from android_inputmethod_clients
             union all
             select 's', ts, extract_arg(arg_set_id, 'where'),
                    extract_arg(arg_set_id, 'input_method_service.views_created')
             from inputmethod_service
             union all
             select 'm', ts, extract_arg(arg_set_id, 'where'),
                    extract_arg(arg_set_id, 'input_method_manager_service.cur_method_id')
             from android_inputmethod_manager_service"
        ),
        table(&[
            ["c", "700", "Focus", "0"],
            ["s", "800", "onCreate", "1"],
            ["m", "900", "x", "com.ime/.Ime"],
        ])
    );
    // ProtoLog: formatted at the end of the trace with the viewer config that came later.
    assert_eq!(
        rows(
            &conn,
            "select ts, level, tag, message, stacktrace, location from protolog order by id"
        ),
        table(&[
            [
                "100",
                "DEBUG",
                "MyFirstGroup",
                "A string (MyTestString), an int (1776), a double 8.88, a boolean true.",
                "A STACK TRACE",
                "ProtoLogTest.java:1"
            ],
            [
                "110",
                "WARN",
                "MySecondGroup",
                "Ints 1776, 3360, 6f0, -5; doubles 888.000000, 8.880000e+02, 0.0001.",
                "NULL",
                "NULL"
            ],
            [
                "120",
                "ERROR",
                "MySecondGroup",
                "Missing '<ERROR>', 100% done",
                "NULL",
                "NULL"
            ],
            ["130", "NULL", "NULL", "NULL", "NULL", "NULL"],
        ])
    );
    // View captures: interned strings resolved under the key without `_iid`.
    assert_eq!(
        rows(
            &conn,
            "select v.id, v.ts, a.key, a.display_value from android_viewcapture v
             join args a using (arg_set_id)
             where a.key in ('package_name', 'window_name', 'views[0].class_name',
               'views[0].view_id', 'views[0].class_name_iid')
             order by v.id, a.key"
        ),
        table(&[
            ["0", "1000", "package_name", "com.example.launcher"],
            ["0", "1000", "views[0].class_name", "com.android.DecorView"],
            ["0", "1000", "views[0].view_id", "NO_ID"],
            ["0", "1000", "window_name", "MainWindow"],
            ["1", "1100", "package_name", "com.example.launcher"],
            [
                "1",
                "1100",
                "views[0].class_name",
                "STRING DE-INTERNING ERROR"
            ],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select count(*) from __intrinsic_base64_proto p
             join surfaceflinger_layer l on l.base64_proto_id = p.id"
        ),
        table(&[["3"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select name, value from stats
             where value > 0 and (name glob 'winscope_*' or name = 'proto_packet_kind_not_imported')
             order by name"
        ),
        table(&[
            ["winscope_protolog_message_decoding_failed", "1"],
            ["winscope_protolog_missing_interned_arg_parse_errors", "1"],
            [
                "winscope_viewcapture_missing_interned_string_parse_errors",
                "1"
            ],
            ["winscope_windowmanager_parse_errors", "1"]
        ])
    );
}
