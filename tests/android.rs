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

#[path = "android/packets.rs"]
mod packets;

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
fn process_metadata_names_the_type_of_each_processs_android_user() {
    // tools/gen_user_type_trace.py: uid 10001 is user 0, uid 1010001 user 10; the
    // user_list packet types both users; a process without a uid has no user.
    let (conn, _db) = import("user_type.pftrace");
    let got = rows(
        &conn,
        "select pid, user_id, user_type from android_process_metadata where pid >= 100
         order by upid",
    );
    let want = table(&[
        ["100", "0", "android.os.usertype.full.SYSTEM"],
        ["200", "10", "android.os.usertype.full.SECONDARY"],
        ["300", "NULL", "NULL"],
    ]);
    assert_eq!(got, want);
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

fn import_gpu(name: &str) -> (Connection, TempFile) {
    common::import_data("gpu", name)
}

#[test]
fn log_lines_of_binary_events_users_and_game_interventions() {
    // Written by tools/gen_kernel_family_traces.py.
    let (conn, _db) = import("probes_misc.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select ts, prio, tag, msg from android_logs order by ts"
        ),
        table(&[
            // A binary event's args make its message; priority 0 reads as INFO.
            ["2000", "4", "tagA", "count=3 what=\"x y\" ratio=0.500000"],
            // No message and no tag stay NULL; an empty tag stays empty.
            ["3000", "6", "NULL", "NULL"],
            ["4000", "5", "", "hello"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select name, value from stats
             where name in ('android_log_num_total', 'android_log_num_failed',
                            'game_intervention_has_parse_errors') order by name"
        ),
        table(&[
            ["android_log_num_failed", "1"],
            ["android_log_num_total", "3"],
            ["game_intervention_has_parse_errors", "1"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select * from android_user_list order by android_user_id"
        ),
        table(&[
            ["0", "android.os.usertype.full.SYSTEM"],
            ["10", "android.os.usertype.full.SECONDARY"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select package_name, uid, current_mode, standard_mode_supported,
                    standard_mode_fps, perf_mode_supported, perf_mode_downscale,
                    perf_mode_use_angle, battery_mode_supported, battery_mode_fps
             from android_game_intervention_list"
        ),
        table(&[["com.game", "10123", "2", "1", "60", "1", "0.5", "1", "0", "NULL"]])
    );
}

#[test]
fn journal_entries_and_the_journal_readers_stats() {
    let (conn, _db) = import("journald_basic.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select ts, prio, tag, msg, uid, comm, systemd_unit, hostname, transport, t.tid
             from linux_systemd_journald_logs j join thread t using (utid)"
        ),
        table(&[[
            "1000000000",
            "6",
            "myapp",
            "hello world",
            "1000",
            "myapp",
            "myapp.service",
            "myhost",
            "journal",
            "42"
        ]])
    );
}

const GPU_SLICES: &str = "select t.name, t.description, s.ts, s.dur, s.name, s.depth,
    s.context_id, s.render_target_name, s.render_pass_name, s.command_buffer_name,
    s.submission_id, s.hw_queue_id, s.render_subpasses
    from gpu_track t join gpu_slice s on s.track_id = t.id order by s.ts, s.id";

#[test]
fn gpu_render_stages_on_their_queues_named_by_specifications() {
    let (conn, _db) = import_gpu("gpu_render_stages.pftrace");
    let got = rows(&conn, GPU_SLICES);
    // A stage before the specifications: its queue is named when they come, the stage
    // keeps the name it had.
    assert_eq!(
        got[0],
        [
            "queue 1",
            "queue desc 1",
            "0",
            "5",
            "render stage(1)",
            "0",
            "0",
            "NULL",
            "NULL",
            "NULL",
            "0",
            "1",
            "NULL"
        ]
    );
    // A queue without a specification, and a negative id read unsigned.
    let unknown: Vec<_> = got.iter().filter(|r| r[0].starts_with("Unknown")).collect();
    assert_eq!(unknown.len(), 2);
    assert_eq!(unknown[0][0], "Unknown GPU Queue 3");
    assert_eq!(unknown[1][0], "Unknown GPU Queue 4294967295");
    assert_eq!(unknown[1][4], "render stage(18446744073709551615)");
    // Vulkan objects named before a stage give it their debug names.
    let named: Vec<_> = got
        .iter()
        .filter(|r| r[2] == "120" || r[2] == "130")
        .map(|r| (r[7].as_str(), r[8].as_str(), r[9].as_str()))
        .collect();
    assert_eq!(
        named,
        vec![
            ("framebuffer", "render_pass", "command_buffer"),
            ("renamed_buffer", "NULL", "NULL")
        ]
    );
    let masks: Vec<&str> = got
        .iter()
        .filter(|r| r[12] != "NULL")
        .map(|r| r[12].as_str())
        .collect();
    assert_eq!(masks, vec!["0", "63,64", "64", "3,68,69,70,71"]);
    // Overlapping stages of one queue go to lanes.
    let (conn, _db) = import_gpu("gpu_render_stages_overlapping.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select t.name, s.ts, s.depth from gpu_track t join gpu_slice s
             on s.track_id = t.id order by s.ts"
        ),
        table(&[["queue 1", "100", "0"], ["queue 1", "105", "0"]])
    );
    // Interned specifications name queues and stages per sequence.
    let (conn, _db) = import_gpu("gpu_render_stages_interned_spec.pftrace");
    let got: Vec<Vec<String>> = rows(&conn, GPU_SLICES)
        .into_iter()
        .map(|r| r[..5].to_vec())
        .collect();
    assert_eq!(
        got,
        table(&[
            ["vertex", "vertex queue", "100", "10", "binning"],
            ["fragment", "fragment queue", "200", "10", "render"],
            ["queue2", "queue2 description", "300", "10", "render"],
        ])
    );
}

#[test]
fn gpu_compute_vulkan_log_info_and_contexts() {
    let (conn, _db) = import_gpu("gpu_compute_kernel.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select name, extract_arg(arg_set_id, 'kernel_name'),
                    extract_arg(arg_set_id, 'arch') from gpu_slice order by ts"
        ),
        table(&[
            ["Kernel", "_Z9vectorAddPfS_S_i", "sm_80"],
            ["Kernel", "_Z6matMulPfS_S_ii", "sm_80"],
            ["Kernel", "_Z9vectorAddPfS_S_i", "sm_80"],
        ])
    );
    let (conn, _db) = import_gpu("vulkan_api_events.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select t.name, s.ts, s.dur, s.name, s.context_id, s.command_buffer,
                    extract_arg(s.arg_set_id, 'command_buffers[2]'), s.submission_id,
                    extract_arg(s.arg_set_id, 'tid')
             from gpu_track t join gpu_slice s on s.track_id = t.id order by s.ts"
        ),
        table(&[
            [
                "Vulkan Events",
                "10",
                "2",
                "vkQueueSubmit",
                "NULL",
                "100",
                "NULL",
                "1",
                "43"
            ],
            [
                "Vulkan Events",
                "20",
                "2",
                "vkQueueSubmit",
                "NULL",
                "200",
                "400",
                "2",
                "45"
            ],
        ])
    );
    let (conn, _db) = import_gpu("gpu_log.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select t.scope, s.ts, s.name, extract_arg(s.arg_set_id, 'message')
             from gpu_track t join gpu_slice s on s.track_id = t.id order by s.ts, s.id
             limit 2"
        ),
        table(&[
            ["gpu_log", "1", "VERBOSE", "message0"],
            ["gpu_log", "2", "DEBUG", "message1"],
        ])
    );
    let (conn, _db) = import_gpu("gpu_info.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select gpu, model, uuid, pci_bdf, machine_id,
                    extract_arg(arg_set_id, 'driver_version') from gpu order by gpu"
        ),
        table(&[
            [
                "0",
                "A100",
                "0123456789abcdef0123456789abcdef",
                "0000:01:00.0",
                "0",
                "535.129.03"
            ],
            [
                "1",
                "A100",
                "abcdefabcdefabcdabcdefabcdefabcd",
                "0000:02:00.0",
                "0",
                "NULL"
            ],
        ])
    );
    // GPUs named by counter descriptors have rows too, on their machine.
    let (conn, _db) = import_gpu("gpu_table_machine_id.pftrace");
    assert_eq!(
        rows(&conn, "select gpu, machine_id from gpu order by gpu"),
        table(&[["0", "0"], ["1", "0"]])
    );
    let (conn, _db) = import_gpu("gpu_context.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select context_id, pid, api from gpu_context order by context_id"
        ),
        table(&[["1", "100", "VULKAN"], ["2", "200", "CUDA"]])
    );
    // A stage's process is its context's.
    assert_eq!(
        rows(
            &conn,
            "select s.context_id, p.pid from gpu_slice s join process p using (upid)
             order by s.ts"
        ),
        table(&[["1", "100"], ["2", "200"]])
    );
    // TrackEvent's gpu_api extension, by its enum name.
    let (conn, _db) = import_gpu("gpu_api_arg.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select name, extract_arg(arg_set_id, 'gpu_api') from slice order by ts"
        ),
        table(&[
            ["cuLaunchKernel", "GPU_API_CUDA"],
            ["vkCmdDispatch", "GPU_API_VULKAN"],
        ])
    );
}

#[test]
fn a_log_line_without_tid_is_the_idle_threads_and_a_missing_layer_is_a_null_string() {
    // Logcat lines of pid 80 with tid 0 and tid 81; expected surface frames of pid 1000
    // without and with a layer name.
    let (conn, _db) = import("idle_log_and_unnamed_layer.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select l.msg, l.utid, t.tid, p.pid from android_logs l
             join thread t using (utid) left join process p using (upid) order by l.ts"
        ),
        table(&[
            ["kernel line", "0", "0", "0"],
            ["app line", "2", "81", "80"]
        ])
    );
    // pid 80 and its main thread exist only through the second line.
    assert_eq!(
        rows(
            &conn,
            "select count(*) from thread where tid = 80 and upid is not null"
        ),
        table(&[["1"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select s.name, a.value_type, a.string_value, a.display_value
             from expected_frame_timeline_slice s join args a using (arg_set_id)
             where a.key = 'Layer name' order by s.name"
        ),
        table(&[["5", "string", "NULL", "NULL"], ["7", "string", "L", "L"]])
    );
}

#[test]
fn power_rail_samples_sort_by_their_own_time_and_counter_dur_spans_them() {
    // Energy samples take timestamp_ms, not the packet's time, and arrive out of order.
    let (conn, _db) = import("power_rails_unsorted.pftrace");
    let got = rows(
        &conn,
        "select ts, dur, value, delta from experimental_counter_dur order by id",
    );
    assert_eq!(
        got,
        table(&[
            ["3000000", "1000000", "666", "0"],
            ["4000000", "1000000", "999", "333"],
            ["5000000", "-1", "333", "-666"],
        ])
    );
}

/// behaviour-android §3.1: a log line with a message and args keeps its message and the
/// ` name=value` pieces follow it; a line with args only drops the first space.
#[test]
fn a_log_lines_args_follow_its_message() {
    // Written by tools/gen_android_family_traces.py.
    let (conn, _db) = import("log_message_with_args.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select ts, prio, tag, msg from android_logs order by ts"
        ),
        table(&[
            ["4000", "4", "evt", "a=3 b=\"x\""],
            ["7000", "7", "t", "m k=-1 f=1.500000"],
        ])
    );
}

/// Kernel wakelock packets: values accumulate per interned id, an unknown id is counted,
/// and each `error_flags` bit the producer sets is counted under its stat.
#[test]
fn kernel_wakelock_error_flags_are_counted() {
    // Written by tools/gen_android_family_traces.py.
    let (conn, _db) = import("kernel_wakelock_errors.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select t.name, c.ts, c.value from counter c join counter_track t on c.track_id = t.id
             order by c.ts"
        ),
        table(&[
            ["wl_kernel", "1000000000", "100"],
            ["wl_kernel", "2000000000", "150"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select name, value from stats where name like 'kernel_wakelock%' and value > 0
             order by name"
        ),
        table(&[
            ["kernel_wakelock_implausibly_large_value_reported", "1"],
            ["kernel_wakelock_non_monotonic_value_reported", "1"],
            ["kernel_wakelock_unknown_id", "1"],
            ["kernel_wakelock_zero_value_reported", "2"],
        ])
    );
}

/// Vulkan memory events: a `vulkan_memory_allocations` row each (annotations as args
/// named by interned keys, the caller an interned function name, absent numbers NULL),
/// and running totals on process counters: driver memory per scope (kept across
/// processes), device memory allocated and bound per memory type.
#[test]
fn vulkan_memory_events_are_allocation_rows_and_running_totals() {
    // Written by tools/gen_android_family_traces.py.
    let (conn, _db) = import("vulkan_memory.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select source, operation, timestamp, p.pid, device, device_memory, memory_type, heap,
                    function_name, object_handle, memory_address, memory_size, scope
             from vulkan_memory_allocations v join process p using (upid) order by v.id"
        ),
        table(&[
            [
                "DRIVER",
                "CREATE",
                "100",
                "42",
                "NULL",
                "NULL",
                "NULL",
                "NULL",
                "vkAllocateMemory",
                "NULL",
                "4096",
                "64",
                "COMMAND"
            ],
            [
                "DRIVER", "CREATE", "110", "43", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL",
                "NULL", "16", "COMMAND"
            ],
            [
                "DEVICE_MEMORY",
                "CREATE",
                "120",
                "42",
                "1",
                "2",
                "3",
                "0",
                "NULL",
                "NULL",
                "NULL",
                "1000",
                "NULL"
            ],
            [
                "BUFFER", "BIND", "130", "42", "1", "2", "3", "NULL", "NULL", "77", "NULL", "500",
                "NULL"
            ],
            [
                "DRIVER", "DESTROY", "140", "42", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL",
                "NULL", "64", "COMMAND"
            ],
            [
                "DEVICE",
                "ANNOTATIONS",
                "150",
                "42",
                "NULL",
                "NULL",
                "NULL",
                "NULL",
                "NULL",
                "NULL",
                "NULL",
                "NULL",
                "NULL"
            ],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select a.key, a.display_value from vulkan_memory_allocations v
             join args a using (arg_set_id) order by a.id"
        ),
        table(&[["key_int", "7"], ["key_str", "value_str"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select t.name, p.pid, c.ts, c.value from counter c
             join process_counter_track t on c.track_id = t.id join process p using (upid)
             order by c.ts"
        ),
        table(&[
            ["vulkan.mem.driver.scope.COMMAND", "42", "100", "64"],
            ["vulkan.mem.driver.scope.COMMAND", "43", "110", "80"],
            [
                "vulkan.mem.device.memory.type.3.allocation",
                "42",
                "120",
                "1000"
            ],
            ["vulkan.mem.device.memory.type.3.bind", "42", "130", "500"],
            ["vulkan.mem.driver.scope.COMMAND", "42", "140", "16"],
        ])
    );
}

/// A present fence's instant carries the frame's timings, from the last queue, acquire
/// fence and latch of its buffer and layer (Trace Processor's GraphicsFrameEventParser):
/// queue → acquire (0 when the fence signaled before the queue), acquire → latch, latch →
/// present; other events leave them NULL.
#[test]
fn present_fences_carry_the_frames_timings() {
    let (conn, _db) = import("graphics_frames.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select ts, layer_name, queue_to_acquire_time, acquire_to_latch_time,
                    latch_to_present_time from frame_slice
             where queue_to_acquire_time is not null order by ts"
        ),
        table(&[
            ["14", "layer1", "2", "2", "6"],
            ["16", "layer2", "0", "3", "5"],
            ["24", "layer1", "2", "2", "16"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select count(*) from frame_slice
             where name != 'PresentFenceSignaled' and queue_to_acquire_time is not null"
        ),
        table(&[["0"]])
    );
}

#[test]
fn app_wakelocks_are_slices_from_acquire_to_release_named_by_their_tag() {
    // tools/gen_app_wakelock_statsd_trace.py: two interned wakelocks overlap (two lanes), one
    // is acquired again and never released, an inline one too; wakelock 7 was never
    // interned, and one bundle has an id without a time.
    let (conn, _db) = import("app_wakelocks_statsd.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.dur, s.name, t.name, t.type, s.track_id,
                    extract_arg(s.arg_set_id, 'flags'), extract_arg(s.arg_set_id, 'owner_pid'),
                    extract_arg(s.arg_set_id, 'owner_uid'), extract_arg(s.arg_set_id, 'work_uid')
             from slice s join track t on s.track_id = t.id
             where t.type = 'app_wakelock_events' order by s.ts"
        ),
        table(&[
            [
                "1000",
                "30",
                "*job*/com.example/.Sync",
                "app_wakelock_events",
                "app_wakelock_events",
                "0",
                "1",
                "1234",
                "10123",
                "NULL"
            ],
            [
                "1010",
                "40",
                "AudioMix",
                "app_wakelock_events",
                "app_wakelock_events",
                "1",
                "26",
                "567",
                "1041",
                "10200"
            ],
            [
                "2100",
                "-1",
                "*job*/com.example/.Sync",
                "app_wakelock_events",
                "app_wakelock_events",
                "0",
                "1",
                "1234",
                "10123",
                "NULL"
            ],
            [
                "2500",
                "-1",
                "inline",
                "app_wakelock_events",
                "app_wakelock_events",
                "1",
                "1",
                "42",
                "10042",
                "NULL"
            ],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select name, value from stats where name like 'app_wakelock%' order by name"
        ),
        table(&[
            ["app_wakelock_parse_error", "1"],
            ["app_wakelock_unknown_id", "1"]
        ])
    );
}

#[test]
fn statsd_atoms_are_instants_on_the_statsd_atoms_track_at_their_own_times() {
    // Four atoms, three times: the last atom takes the packet's time. Atoms are named by
    // atoms.proto's field names; one not in the list is named by number and counted, a
    // vendor atom (>= 100000) is not counted.
    let (conn, _db) = import("app_wakelocks_statsd.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.dur, s.name, t.name, t.type from slice s
             join track t on s.track_id = t.id where t.type = 'statsd_atoms' order by s.ts"
        ),
        table(&[
            [
                "3000",
                "0",
                "screen_state_changed",
                "Statsd Atoms",
                "statsd_atoms"
            ],
            [
                "3100",
                "0",
                "wakelock_state_changed",
                "Statsd Atoms",
                "statsd_atoms"
            ],
            ["3200", "0", "atom_100001", "Statsd Atoms", "statsd_atoms"],
            ["3250", "0", "atom_88888", "Statsd Atoms", "statsd_atoms"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select name, value from stats where name like 'atom%' order by name"
        ),
        table(&[["atom_timestamp_missing", "1"], ["atom_unknown", "1"]])
    );
}

/// Entity residencies as the reference counts their faults: a descriptor without its
/// indices is an invalid energy descriptor, a packet without residencies (descriptors only
/// too) is invalid, and a residency of an undescribed state skips the rest of its packet.
#[test]
fn entity_residency_faults_are_counted_as_the_reference_counts_them() {
    use prost::Message;
    use sextant::protos::{
        entity_state_residency::{PowerEntityState, StateResidency},
        trace_packet::Data,
        EntityStateResidency, Trace, TracePacket,
    };
    let state = |entity: Option<i32>, state: Option<i32>| PowerEntityState {
        entity_index: entity,
        state_index: state,
        entity_name: Some("Bluetooth".into()),
        state_name: Some("Idle".into()),
    };
    let residency = |entity: i32, ms: u64| StateResidency {
        entity_index: Some(entity),
        state_index: Some(0),
        total_time_in_state_ms: Some(ms),
        ..Default::default()
    };
    let packet = |ts: u64, power_entity_state, residency| TracePacket {
        timestamp: Some(ts),
        data: Some(Data::EntityStateResidency(EntityStateResidency {
            power_entity_state,
            residency,
        })),
        ..Default::default()
    };
    let bytes = Trace {
        packet: vec![
            packet(
                10,
                vec![state(Some(0), Some(0)), state(None, Some(1))],
                vec![],
            ),
            packet(20, vec![], vec![residency(5, 1), residency(0, 2)]),
            packet(30, vec![], vec![residency(0, 3)]),
        ],
    }
    .encode_to_vec();
    let input = TempFile::with_bytes("entity_residency.pftrace", &bytes);
    let db = TempFile::new("entity_residency.sqlite");
    sextant::import::import_path(input.path(), db.path()).expect("imports");
    let conn = sextant::db::open_read_only(db.path()).expect("opens");
    assert_eq!(
        rows(
            &conn,
            "select t.name, c.ts, c.value from counter c join counter_track t on t.id = c.track_id"
        ),
        table(&[["Entity residency: Bluetooth is Idle", "30", "3"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select name, value from stats where value > 0 order by name"
        ),
        table(&[
            ["energy_descriptor_invalid", "1"],
            ["entity_state_residency_invalid", "1"],
            ["entity_state_residency_lookup_failed", "1"],
        ])
    );
}

/// A CpuInfo packet without cpus and /proc/stat times without their cpu are counted
/// (`cpu_info_empty`, `invalid_cpu_times`) and leave no rows, as in the reference.
#[test]
fn empty_cpu_info_and_cpu_times_without_a_cpu_are_counted() {
    use prost::Message;
    use sextant::protos::{
        sys_stats::CpuTimes, trace_packet::Data, CpuInfo, SysStats, Trace, TracePacket,
    };
    let times = |cpu_id: Option<u32>| CpuTimes {
        cpu_id,
        user_ns: Some(5),
        ..Default::default()
    };
    let bytes = Trace {
        packet: vec![
            TracePacket {
                data: Some(Data::CpuInfo(CpuInfo { cpus: vec![] })),
                ..Default::default()
            },
            TracePacket {
                timestamp: Some(10),
                data: Some(Data::SysStats(SysStats {
                    cpu_stat: vec![times(None), times(Some(1))],
                    ..Default::default()
                })),
                ..Default::default()
            },
        ],
    }
    .encode_to_vec();
    let input = TempFile::with_bytes("cpu_faults.pftrace", &bytes);
    let db = TempFile::new("cpu_faults.sqlite");
    sextant::import::import_path(input.path(), db.path()).expect("imports");
    let conn = sextant::db::open_read_only(db.path()).expect("opens");
    assert_eq!(
        rows(
            &conn,
            "select extract_arg(t.dimension_arg_set_id, 'cpu'), c.value from counter c
             join counter_track t on t.id = c.track_id where t.name = 'cpu.times.user_ns'"
        ),
        table(&[["1", "5"]])
    );
    // Only the cpu the times name has a row (the empty CpuInfo adds none).
    assert_eq!(rows(&conn, "select cpu from cpu"), table(&[["1"]]));
    assert_eq!(
        rows(
            &conn,
            "select name, value from stats where value > 0 order by name"
        ),
        table(&[["cpu_info_empty", "1"], ["invalid_cpu_times", "1"]])
    );
}

/// App wakelocks: each bundle event's interned info names a slice on the global
/// `app_wakelock_events` tracks (one lane per lock held at once) from the acquire to the
/// release, at the packet's time plus the event's encoded delta (`delta << 1 | acquired`),
/// with the lock's flags and owners as args; an unknown interned id is counted.
#[test]
fn app_wakelocks_are_slices_from_acquire_to_release() {
    use prost::Message;
    use sextant::protos::{
        trace_packet::{Data, OptionalTrustedPacketSequenceId},
        AppWakelockBundle, AppWakelockInfo, InternedData, Trace, TracePacket,
    };
    let info = |iid: i32, tag: &str, work_uid: Option<i32>| AppWakelockInfo {
        iid: Some(iid),
        tag: Some(tag.into()),
        flags: Some(iid),
        owner_pid: Some(100 * iid),
        owner_uid: Some(10_000 + iid),
        work_uid,
    };
    let packet = TracePacket {
        timestamp: Some(1000),
        optional_trusted_packet_sequence_id: Some(
            OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(5),
        ),
        sequence_flags: Some(1),
        interned_data: Some(InternedData {
            app_wakelock_info: vec![info(1, "*job*/com.foo", None), info(2, "alarm", Some(7))],
            ..Default::default()
        }),
        data: Some(Data::AppWakelockBundle(AppWakelockBundle {
            intern_id: vec![1, 2, 1, 9, 2],
            // 1 acquired at +0, 2 at +10, 1 released at +20, 9 unknown, 2 released at +30.
            encoded_ts: vec![1, 21, 40, 41, 60],
            ..Default::default()
        })),
        ..Default::default()
    };
    let bytes = Trace {
        packet: vec![packet],
    }
    .encode_to_vec();
    let input = TempFile::with_bytes("app_wakelocks.pftrace", &bytes);
    let db = TempFile::new("app_wakelocks.sqlite");
    sextant::import::import_path(input.path(), db.path()).expect("imports");
    let conn = sextant::db::open_read_only(db.path()).expect("opens");
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.dur, s.name, t.name, t.type, s.track_id,
                    extract_arg(s.arg_set_id, 'flags'), extract_arg(s.arg_set_id, 'owner_pid'),
                    extract_arg(s.arg_set_id, 'owner_uid'), extract_arg(s.arg_set_id, 'work_uid')
             from slice s join track t on t.id = s.track_id order by s.ts"
        ),
        table(&[
            [
                "1000",
                "20",
                "*job*/com.foo",
                "app_wakelock_events",
                "app_wakelock_events",
                "0",
                "1",
                "100",
                "10001",
                "NULL"
            ],
            [
                "1010",
                "20",
                "alarm",
                "app_wakelock_events",
                "app_wakelock_events",
                "1",
                "2",
                "200",
                "10002",
                "7"
            ],
        ])
    );
    assert_eq!(
        rows(&conn, "select name, value from stats where value > 0"),
        table(&[["app_wakelock_unknown_id", "1"]])
    );
}

/// What an app wakelock bundle cannot place is counted, not dropped silently: lists beside
/// a single event's inline `info` (not read), and an event whose time overflows the clock.
#[test]
fn app_wakelock_events_that_cannot_be_placed_are_counted() {
    use prost::Message;
    use sextant::protos::{
        trace_packet::{Data, OptionalTrustedPacketSequenceId},
        AppWakelockBundle, AppWakelockInfo, InternedData, Trace, TracePacket,
    };
    let info = AppWakelockInfo {
        iid: Some(1),
        tag: Some("sync".into()),
        ..Default::default()
    };
    let packet = |interned: Option<InternedData>, bundle| TracePacket {
        timestamp: Some(1000),
        optional_trusted_packet_sequence_id: Some(
            OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(5),
        ),
        sequence_flags: Some(1),
        interned_data: interned,
        data: Some(Data::AppWakelockBundle(bundle)),
        ..Default::default()
    };
    let bytes = Trace {
        packet: vec![
            packet(
                Some(InternedData {
                    app_wakelock_info: vec![info.clone()],
                    ..Default::default()
                }),
                AppWakelockBundle {
                    intern_id: vec![1],
                    encoded_ts: vec![u64::MAX],
                    ..Default::default()
                },
            ),
            packet(
                None,
                AppWakelockBundle {
                    info: Some(info),
                    acquired: Some(true),
                    intern_id: vec![1],
                    encoded_ts: vec![3],
                },
            ),
        ],
    }
    .encode_to_vec();
    let input = TempFile::with_bytes("app_wakelocks_lost.pftrace", &bytes);
    let db = TempFile::new("app_wakelocks_lost.sqlite");
    sextant::import::import_path(input.path(), db.path()).expect("imports");
    let conn = sextant::db::open_read_only(db.path()).expect("opens");
    assert_eq!(
        rows(&conn, "select ts, dur, name from slice"),
        table(&[["1000", "-1", "sync"]])
    );
    assert_eq!(
        rows(&conn, "select name, value from stats where value > 0"),
        table(&[["app_wakelock_parse_error", "2"]])
    );
}

#[test]
fn metatrace_events_are_thread_slices_and_counters_with_interned_args() {
    // metatrace.textproto: interned strings in a packet of their own, an event named by an
    // interned string with a plain and an interned arg, a plain event with the overrun
    // flag, a counter, and an event named only by id (not imported).
    let (conn, _db) = import("metatrace.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.dur, s.category, s.name, t.tid,
               extract_arg(s.arg_set_id, 'query'), extract_arg(s.arg_set_id, 'rows')
             from slice s join thread_track tt on s.track_id = tt.id join thread t using (utid)
             order by s.ts"
        ),
        table(&[
            [
                "200",
                "50",
                "metatrace",
                "QUERY_EXECUTE",
                "42",
                "select 1",
                "QUERY_EXECUTE"
            ],
            ["300", "10", "metatrace", "PARSE", "42", "NULL", "NULL"],
        ])
    );
    assert_eq!(
        rows(
            &conn,
            "select c.ts, c.value, ct.name, ct.type, extract_arg(c.arg_set_id, 'k'), t.tid
             from counter c join thread_counter_track ct on c.track_id = ct.id
             join thread t using (utid)"
        ),
        table(&[["400", "1234", "MEM", "metatrace_counter", "v", "43"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select value from stats where name = 'metatrace_overruns'"
        ),
        table(&[["1"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select idx, value from sextant_stats where name = 'proto_packet_kind_not_imported'"
        ),
        table(&[["49", "1"]])
    );
}

#[test]
fn camera_frames_are_slices_on_a_track_set_per_camera() {
    // camera_frames.textproto: two overlapping frames of camera 0 and one of camera 1,
    // then session stats (not imported, as in the reference).
    let (conn, _db) = import("camera_frames.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select s.ts, s.dur, s.name, t.name, t.type, s.track_id
             from slice s join track t on s.track_id = t.id order by s.ts"
        ),
        table(&[
            [
                "1000",
                "500",
                "Frame 10",
                "Camera 0 Frames",
                "android_camera_event",
                "0"
            ],
            [
                "1100",
                "600",
                "Frame 11",
                "Camera 0 Frames",
                "android_camera_event",
                "1"
            ],
            [
                "1200",
                "100",
                "Frame 5",
                "Camera 1 Frames",
                "android_camera_event",
                "2"
            ],
        ])
    );
}

#[test]
fn power_rail_counters_are_intervals_between_changes_with_average_power() {
    // power_rails_intervals.textproto: two rails sampled at 1, 2 and 4 ms; the cpu rail
    // repeats its first value at 2 ms, the display rail its second at 4 ms.
    let (conn, _db) = import("power_rails_intervals.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select ts, dur, power_rail_name, raw_power_rail_name, energy_since_boot,
               energy_since_boot_at_end, round(average_power, 3), energy_delta, value
             from android_power_rails_counters order by power_rail_name, ts"
        ),
        table(&[
            [
                "1000000",
                "3000000",
                "power.rails.cpu.little",
                "S4M_VDD_CPUCL0",
                "100",
                "300",
                "66.667",
                "NULL",
                "100"
            ],
            [
                "4000000",
                "0",
                "power.rails.cpu.little",
                "S4M_VDD_CPUCL0",
                "300",
                "NULL",
                "NULL",
                "200",
                "300"
            ],
            [
                "1000000",
                "1000000",
                "power.rails.display",
                "VSYS_PWR_DISPLAY",
                "50",
                "80",
                "30",
                "NULL",
                "50"
            ],
            [
                "2000000",
                "2000000",
                "power.rails.display",
                "VSYS_PWR_DISPLAY",
                "80",
                "NULL",
                "NULL",
                "30",
                "80"
            ],
        ])
    );
}

#[test]
fn battery_charge_lines_up_the_battery_counters_by_time() {
    // battery_charge.textproto: a full battery sample, then one with only the capacity.
    let (conn, _db) = import("battery_charge.pftrace");
    assert_eq!(
        rows(
            &conn,
            "select ts, current_avg_ua, capacity_percent, charge_uah, current_ua, voltage_uv,
               power_mw from android_battery_charge"
        ),
        table(&[
            ["1000", "-400000", "80", "3000000", "-500000", "4000000", "2000"],
            ["2000", "NULL", "79", "NULL", "NULL", "NULL", "NULL"],
        ])
    );
}
