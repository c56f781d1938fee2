//! Android probes: FrameTimeline, logs, packages, process metadata and the counters of
//! stats packets (traces in tests/data/android: `android_probes.pftrace` written by
//! tools/gen_android_test_trace.py, the others copied from the reference's conformance
//! cases).

use rusqlite::Connection;

mod common;

use common::{rows, table, TempFile};

fn import(name: &str) -> (Connection, TempFile) {
    common::import_data("android", name)
}

#[test]
fn frame_timeline_frames_have_their_enums_spelled_out_and_surfaces_flow_to_displays() {
    let (conn, _db) = import("frame_timeline.pftrace");
    let got = rows(
        &conn,
        "select ts, dur, p.pid, display_frame_token, surface_frame_token, layer_name,
                present_type, on_time_finish, jank_type, prediction_type, jank_tag,
                jank_severity_type
         from actual_frame_timeline_slice s join process p using (upid)
         where ts in (41, 90, 148, 245) order by ts, dur",
    );
    let want = table(&[
        [
            "41",
            "33",
            "1000",
            "6",
            "5",
            "Layer1",
            "Late Present",
            "0",
            "App Deadline Missed",
            "Valid Prediction",
            "Self Jank",
            "Full",
        ],
        [
            "90",
            "16",
            "1000",
            "8",
            "7",
            "Layer1",
            "Early Present",
            "1",
            "SurfaceFlinger Scheduling",
            "Valid Prediction",
            "Other Jank",
            "Unknown",
        ],
        [
            "148",
            "8",
            "666",
            "12",
            "NULL",
            "NULL",
            "Late Present",
            "0",
            "SurfaceFlinger Scheduling, SurfaceFlinger CPU Deadline Missed",
            "Valid Prediction",
            "Self Jank",
            "Unknown",
        ],
        [
            "245",
            "-1",
            "666",
            "18",
            "NULL",
            "NULL",
            "Late Present",
            "0",
            "SurfaceFlinger Stuffing",
            "Valid Prediction",
            "SurfaceFlinger Stuffing",
            "Unknown",
        ],
        [
            "245",
            "15",
            "666",
            "18",
            "NULL",
            "NULL",
            "Dropped Frame",
            "0",
            "Dropped Frame",
            "Unspecified Prediction",
            "Dropped Frame",
            "Unknown",
        ],
    ]);
    assert_eq!(got, want);
    // Both layers of token 14 are actual frames; the expected frame is listed once.
    let expected = rows(
        &conn,
        "select count(*) from expected_frame_timeline_slice where surface_frame_token = 14",
    );
    assert_eq!(expected, table(&[["1"]]));
    let tracks = rows(
        &conn,
        "select distinct t.name, t.type from process_track t
         join actual_frame_timeline_slice s on s.track_id = t.id",
    );
    assert_eq!(
        tracks,
        table(&[["Actual Timeline", "android_actual_frame_timeline"]])
    );
    // Each actual surface frame flows into the display frame that presented it.
    let flows = rows(
        &conn,
        "select count(*) from flow f
         join actual_frame_timeline_slice a on a.id = f.slice_out
         join actual_frame_timeline_slice b on b.id = f.slice_in
         where a.surface_frame_token is not null and b.surface_frame_token is null
           and a.display_frame_token = b.display_frame_token",
    );
    let total = rows(&conn, "select count(*) from flow");
    assert_eq!(flows, total);
    assert_ne!(flows, table(&[["0"]]));
}

#[test]
fn log_lines_packages_and_probe_counters() {
    let (conn, _db) = import("android_probes.pftrace");
    let logs = rows(
        &conn,
        "select l.ts, prio, tag, msg, t.tid from android_logs l join thread t using (utid)
         order by l.id",
    );
    assert_eq!(logs.len(), 5);
    // REALTIME log timestamps are placed on the trace's BOOTTIME by the clock snapshot.
    assert_eq!(
        logs[0],
        [
            "1005000000",
            "4",
            "ActivityManager",
            "Start proc 1000:com.example.app",
            "1000"
        ]
    );
    assert_eq!(logs[1][4], "1001");
    let packages = rows(
        &conn,
        "select package_name, uid, version_code from package_list order by id",
    );
    assert_eq!(
        packages,
        table(&[
            ["com.example.app", "10100", "42"],
            ["com.android.systemui", "10050", "7"]
        ])
    );
    let counters = rows(
        &conn,
        "select t.name, t.type, t.unit, p.pid, count(*), max(c.value)
         from counter c join counter_track t on c.track_id = t.id
         left join process_counter_track pt on pt.id = t.id
         left join process p on p.upid = pt.upid
         group by t.id order by t.id",
    );
    assert_eq!(
        counters,
        table(&[
            [
                "mem.rss",
                "process_memory",
                "bytes",
                "1000",
                "3",
                "184320000"
            ],
            [
                "mem.rss.anon",
                "process_memory",
                "bytes",
                "1000",
                "3",
                "92160000"
            ],
            ["MemFree", "meminfo", "bytes", "NULL", "3", "798720000"],
            [
                "MemAvailable",
                "meminfo",
                "bytes",
                "NULL",
                "3",
                "1413120000"
            ],
            [
                "batt.capacity_pct",
                "battery_counter",
                "NULL",
                "NULL",
                "3",
                "80"
            ],
            [
                "batt.current_ua",
                "battery_counter",
                "NULL",
                "NULL",
                "3",
                "-250000"
            ],
        ])
    );
    let dims = rows(
        &conn,
        "select extract_arg(dimension_arg_set_id, 'process_memory_key') from counter_track
         where name = 'mem.rss.anon'",
    );
    assert_eq!(dims, table(&[["rss.anon"]]));
}

#[test]
fn processes_are_matched_to_their_packages() {
    let (conn, _db) = import("process_metadata.pftrace");
    let got = rows(
        &conn,
        "select upid, process_name, uid, shared_uid, package_name, version_code,
                is_kernel_task
         from android_process_metadata where upid != 0",
    );
    let want = table(&[
        ["1", "init", "0", "NULL", "NULL", "NULL", "1"],
        ["2", "system_server", "1000", "NULL", "NULL", "NULL", "0"],
        [
            "3",
            "com.google.android.gms",
            "10100",
            "1",
            "com.google.android.gms",
            "1234",
            "0",
        ],
        [
            "4",
            "com.google.android.gms.persistent",
            "10100",
            "1",
            "com.google.android.gms",
            "1234",
            "0",
        ],
        [
            "5",
            "com.google.android.gms",
            "10100",
            "1",
            "com.google.android.gms",
            "1234",
            "0",
        ],
    ]);
    assert_eq!(got, want);
}

#[test]
fn gpu_counter_values_close_the_interval_their_sample_ends() {
    let (conn, _db) = import("gpu_counters.pftrace");
    let got = rows(
        &conn,
        "select ts, value, name, gpu_id, unit from counter
         join gpu_counter_track t on counter.track_id = t.id
         where name = 'Vertex / Second' order by ts",
    );
    let want = table(&[
        ["11", "10", "Vertex / Second", "0", "Vertex/s"],
        ["21", "15.5", "Vertex / Second", "0", "Vertex/s"],
        ["31", "0", "Vertex / Second", "0", "Vertex/s"],
    ]);
    assert_eq!(got, want);
}

#[test]
fn cpu_time_per_uid_accumulates_deltas() {
    let (conn, _db) = import("cpu_per_uid.pftrace");
    let got = rows(
        &conn,
        "select t.name, c.ts, c.value from counter_track t join counter c on t.id = c.track_id
         where t.name in ('CPU for UID 1000 CL0', 'CPU for System CL0') order by 1, 2",
    );
    let want = table(&[
        ["CPU for System CL0", "10000", "0"],
        ["CPU for System CL0", "12000", "2100"],
        ["CPU for UID 1000 CL0", "10000", "1000000"],
        ["CPU for UID 1000 CL0", "12000", "1002000"],
    ]);
    assert_eq!(got, want);
}

#[test]
fn disk_stats_become_amounts_and_throughputs_between_samples() {
    let (conn, _db) = import("disk_stats.pftrace");
    let got = rows(
        &conn,
        "select c.ts, t.name, round(c.value, 6), t.unit from counter c
         join counter_track t on c.track_id = t.id
         where t.name glob 'diskstat.[[]sda].read*' order by t.name",
    );
    let want = table(&[
        ["2000", "diskstat.[sda].read_amount", "0.024414", "MB"],
        ["2000", "diskstat.[sda].read_throughput", "1.220703", "MB/s"],
    ]);
    assert_eq!(got, want);
}

#[test]
fn power_rails_get_friendly_names_and_keep_their_raw_names() {
    let (conn, _db) = import("power_rails.pftrace");
    let got = rows(
        &conn,
        "select power_rail_name, raw_power_rail_name, friendly_name
         from android_power_rails_metadata order by 1",
    );
    assert!(got.contains(&vec![
        "power.rails.gpu".to_string(),
        "S2S_VDD_G3D".to_string(),
        "gpu".to_string()
    ]));
}

#[test]
fn buffer_events_move_frames_through_their_phases() {
    let (conn, _db) = import("graphics_frames.pftrace");
    let phases = |track: &str| {
        rows(
            &conn,
            &format!(
                "select s.ts, s.dur, s.name, frame_number from frame_slice s
                 join gpu_track t on s.track_id = t.id
                 where t.name = '{track}' and t.scope = 'graphics_frame_event' order by s.ts"
            ),
        )
    };
    // Dequeued → queued; a frame never queued keeps the number 0 and stays open.
    assert_eq!(
        phases("APP_2 layer2"),
        table(&[["6", "3", "12", "12"], ["53", "-1", "0", "0"]])
    );
    // Frame 12's acquire fence signaled before it was queued: no GPU phase.
    assert_eq!(phases("GPU_2 layer2"), Vec::<Vec<String>>::new());
    assert_eq!(
        phases("Display_layer1"),
        table(&[["14", "10", "11", "11"], ["24", "-1", "13", "13"]])
    );
    // Every event is an instant on its buffer's track.
    let instants = rows(
        &conn,
        "select count(*), min(dur), max(dur) from frame_slice s
         join gpu_track t on s.track_id = t.id where t.name glob 'Buffer: *'",
    );
    assert_eq!(instants, table(&[["28", "0", "0"]]));
    // The event without a buffer id is counted.
    let errors = rows(
        &conn,
        "select value from stats where name = 'graphics_frame_event_parser_errors'",
    );
    assert_eq!(errors, table(&[["1"]]));
}
