//! The SQLite schema: Trace Processor's table and column names, in its column order, so
//! `SELECT *` and Perfetto SQL written against Trace Processor give the same shape.

/// Tables created before the bulk load (their indexes are [`INDEXES`]).
pub const TABLES: &str = r#"
CREATE TABLE machine (
  id INTEGER PRIMARY KEY, raw_id INTEGER, name TEXT, sysname TEXT, release TEXT,
  version TEXT, arch TEXT, num_cpus INTEGER, android_build_fingerprint TEXT,
  android_device_manufacturer TEXT, android_sdk_version INTEGER, system_ram_bytes INTEGER,
  system_ram_gb INTEGER, label_index INTEGER);
CREATE TABLE process (
  id INTEGER PRIMARY KEY, upid INTEGER, pid INTEGER, name TEXT, start_ts INTEGER,
  end_ts INTEGER, parent_upid INTEGER, uid INTEGER, android_appid INTEGER,
  android_user_id INTEGER, cmdline TEXT, arg_set_id INTEGER, machine_id INTEGER);
CREATE TABLE thread (
  id INTEGER PRIMARY KEY, utid INTEGER, tid INTEGER, name TEXT, start_ts INTEGER,
  end_ts INTEGER, upid INTEGER, is_main_thread INTEGER, is_idle INTEGER,
  machine_id INTEGER, arg_set_id INTEGER);
CREATE TABLE __intrinsic_track (
  id INTEGER PRIMARY KEY, name TEXT, type TEXT, dimension_arg_set_id INTEGER,
  parent_id INTEGER, source_arg_set_id INTEGER, machine_id INTEGER,
  track_group_id INTEGER, event_type TEXT, utid INTEGER, upid INTEGER, cpu INTEGER,
  unit TEXT, description TEXT);
CREATE TABLE slice (
  id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, track_id INTEGER, category TEXT,
  name TEXT, depth INTEGER, parent_id INTEGER, arg_set_id INTEGER, thread_ts INTEGER,
  thread_dur INTEGER, thread_instruction_count INTEGER, thread_instruction_delta INTEGER,
  cat TEXT GENERATED ALWAYS AS (category) VIRTUAL,
  slice_id INTEGER GENERATED ALWAYS AS (id) VIRTUAL);
CREATE TABLE counter (
  id INTEGER PRIMARY KEY, ts INTEGER, track_id INTEGER, value REAL, arg_set_id INTEGER);
CREATE TABLE sched_slice (
  id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, cpu INTEGER, utid INTEGER,
  end_state TEXT, priority INTEGER, ucpu INTEGER,
  ts_end INTEGER GENERATED ALWAYS AS (CASE WHEN dur = -1 THEN ts - 1 ELSE ts + dur END) VIRTUAL);
CREATE TABLE thread_state (
  id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, cpu INTEGER, utid INTEGER,
  state TEXT, io_wait INTEGER, blocked_function TEXT, waker_utid INTEGER, waker_id INTEGER,
  irq_context INTEGER, ucpu INTEGER);
CREATE TABLE __intrinsic_ftrace_event (
  id INTEGER PRIMARY KEY, ts INTEGER, name TEXT, cpu INTEGER, utid INTEGER,
  arg_set_id INTEGER, common_flags INTEGER, ucpu INTEGER);
CREATE TABLE __intrinsic_state (
  id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, track_id INTEGER, category TEXT,
  value TEXT, arg_set_id INTEGER);
CREATE TABLE flow (
  id INTEGER PRIMARY KEY, slice_out INTEGER, slice_in INTEGER, trace_id INTEGER,
  arg_set_id INTEGER);
CREATE TABLE args (
  id INTEGER PRIMARY KEY, arg_set_id INTEGER, flat_key TEXT, key TEXT, int_value INTEGER,
  string_value TEXT, real_value REAL, value_type TEXT, display_value TEXT);
CREATE TABLE cpu (
  id INTEGER PRIMARY KEY, ucpu INTEGER, cpu INTEGER, cluster_id INTEGER, processor TEXT,
  machine_id INTEGER, capacity INTEGER, arg_set_id INTEGER);
CREATE TABLE cpu_available_frequencies (
  id INTEGER PRIMARY KEY, cpu INTEGER, freq INTEGER, ucpu INTEGER);
CREATE TABLE stats (
  id INTEGER PRIMARY KEY, name TEXT, key INTEGER, idx INTEGER, severity TEXT, source TEXT,
  value INTEGER, description TEXT, machine_id INTEGER, trace_id INTEGER);
-- Sextant's own counters (losses and notices the reference has no stat for: files cut
-- short, undecodable packets, per-sequence loss markers …), shaped like `stats` (key NULL)
-- so that `stats` holds exactly the reference's stats.
CREATE TABLE sextant_stats (
  id INTEGER PRIMARY KEY, name TEXT, key INTEGER, idx INTEGER, severity TEXT, source TEXT,
  value INTEGER, description TEXT, machine_id INTEGER, trace_id INTEGER);
CREATE TABLE __intrinsic_trace_diagnostics (
  id INTEGER PRIMARY KEY, key TEXT, title TEXT, description TEXT, remediation TEXT,
  confidence REAL, trace_id INTEGER);
CREATE TABLE metadata (
  id INTEGER PRIMARY KEY, name TEXT, key_type TEXT, int_value INTEGER, str_value TEXT,
  machine_id INTEGER, trace_id INTEGER);
CREATE TABLE clock_snapshot (
  id INTEGER PRIMARY KEY, ts INTEGER, clock_id INTEGER, clock_name TEXT,
  clock_value INTEGER, snapshot_id INTEGER, machine_id INTEGER);
CREATE TABLE __intrinsic_trace_file (
  id INTEGER PRIMARY KEY, parent_id INTEGER, name TEXT, size INTEGER, trace_type TEXT,
  processing_order INTEGER, is_container INTEGER);
CREATE TABLE trace_bounds (start_ts INTEGER, end_ts INTEGER);
CREATE TABLE __sextant_clock_node (
  id INTEGER PRIMARY KEY, machine_id INTEGER, clock_id INTEGER, clock_name TEXT,
  file_id INTEGER, sequence_id INTEGER, label TEXT, is_trace_time INTEGER);
CREATE TABLE __sextant_clock_edge (
  id INTEGER PRIMARY KEY, src_node_id INTEGER, dst_node_id INTEGER, source TEXT,
  offset_ns INTEGER, readings INTEGER, file_id INTEGER);
CREATE TABLE __sextant_file_placement (
  file_id INTEGER, machine_id INTEGER, node_id INTEGER, status TEXT, path TEXT,
  events INTEGER, dropped INTEGER);
CREATE TABLE __sextant_clock_error (
  file_id INTEGER, machine_id INTEGER, message TEXT);
CREATE TABLE __sextant_trace_time_candidate (
  node_id INTEGER, label TEXT, is_current INTEGER, dropped_events INTEGER);
-- The trace file a slice came from: its row in __sextant_slice_file, else its track's in
-- __sextant_track_file (the file of the track's first slice). Only slices from another file
-- than their track's first have a row of their own, so a trace costs a row per track.
CREATE TABLE __sextant_track_file (track_id INTEGER PRIMARY KEY, file_id INTEGER);
CREATE TABLE __sextant_slice_file (slice_id INTEGER PRIMARY KEY, file_id INTEGER);
CREATE TABLE __sextant_proto_content (
  id INTEGER PRIMARY KEY, path TEXT, size INTEGER, count INTEGER, category TEXT, name TEXT,
  arg_set_id INTEGER, trace_id INTEGER);
CREATE TABLE __intrinsic_android_logs (
  id INTEGER PRIMARY KEY, ts INTEGER, utid INTEGER, prio INTEGER, tag TEXT, msg TEXT);
CREATE TABLE __intrinsic_chrome_raw (
  id INTEGER PRIMARY KEY, ts INTEGER, name TEXT, utid INTEGER, arg_set_id INTEGER);
-- What became of the events each file's parser read (JSON trace events, systrace event
-- lines, TracePackets, ftrace events): read = imported + dropped (counted in stats) +
-- unaccounted (lost without a count: a bug, and a test checks there are none).
CREATE TABLE __sextant_file_events (
  file_id INTEGER PRIMARY KEY, read INTEGER, imported INTEGER, dropped INTEGER,
  unaccounted INTEGER);
CREATE TABLE __intrinsic_gpu_counter_group (
  id INTEGER PRIMARY KEY, group_id INTEGER, name TEXT, description TEXT, track_id INTEGER);
CREATE TABLE __intrinsic_package_list (
  id INTEGER PRIMARY KEY, package_name TEXT, uid INTEGER, debuggable INTEGER,
  profileable_from_shell INTEGER, version_code INTEGER, machine_id INTEGER);
CREATE TABLE __intrinsic_gpu (
  id INTEGER PRIMARY KEY, gpu INTEGER, name TEXT, vendor TEXT, model TEXT,
  architecture TEXT, uuid TEXT, pci_bdf TEXT, machine_id INTEGER, arg_set_id INTEGER);
CREATE TABLE __intrinsic_gpu_context (
  id INTEGER PRIMARY KEY, context_id INTEGER, pid INTEGER, api TEXT, machine_id INTEGER);
CREATE TABLE __intrinsic_journald_logs (
  id INTEGER PRIMARY KEY, ts INTEGER, utid INTEGER, pid INTEGER, tid INTEGER, uid INTEGER,
  gid INTEGER, prio INTEGER, tag TEXT, msg TEXT, comm TEXT, exe TEXT, systemd_unit TEXT,
  hostname TEXT, transport TEXT);
CREATE TABLE experimental_missing_chrome_processes (
  id INTEGER PRIMARY KEY, upid INTEGER, reliable_from INTEGER);
CREATE TABLE __intrinsic_android_user_list (
  id INTEGER PRIMARY KEY, android_user_id INTEGER, type TEXT, machine_id INTEGER);
CREATE TABLE android_game_intervention_list (
  id INTEGER PRIMARY KEY, package_name TEXT, uid INTEGER, current_mode INTEGER,
  standard_mode_supported INTEGER, standard_mode_downscale REAL,
  standard_mode_use_angle INTEGER, standard_mode_fps REAL, perf_mode_supported INTEGER,
  perf_mode_downscale REAL, perf_mode_use_angle INTEGER, perf_mode_fps REAL,
  battery_mode_supported INTEGER, battery_mode_downscale REAL,
  battery_mode_use_angle INTEGER, battery_mode_fps REAL);
CREATE TABLE filedescriptor (
  id INTEGER PRIMARY KEY, ufd INTEGER, fd INTEGER, ts INTEGER, upid INTEGER, path TEXT);
CREATE TABLE memory_snapshot (
  id INTEGER PRIMARY KEY, timestamp INTEGER, track_id INTEGER, detail_level TEXT);
CREATE TABLE process_memory_snapshot (
  id INTEGER PRIMARY KEY, snapshot_id INTEGER, upid INTEGER);
CREATE TABLE memory_snapshot_node (
  id INTEGER PRIMARY KEY, process_snapshot_id INTEGER, parent_node_id INTEGER, path TEXT,
  size INTEGER, effective_size INTEGER, arg_set_id INTEGER);
CREATE TABLE memory_snapshot_edge (
  id INTEGER PRIMARY KEY, source_node_id INTEGER, target_node_id INTEGER, importance INTEGER);
CREATE TABLE __intrinsic_v8_isolate (
  id INTEGER PRIMARY KEY, upid INTEGER, internal_isolate_id INTEGER,
  embedded_blob_code_start_address INTEGER, embedded_blob_code_size INTEGER,
  code_range_base_address INTEGER, code_range_size INTEGER, shared_code_range INTEGER,
  embedded_blob_code_copy_start_address INTEGER);
CREATE TABLE __intrinsic_v8_js_script (
  id INTEGER PRIMARY KEY, v8_isolate_id INTEGER, internal_script_id INTEGER,
  script_type TEXT, name TEXT, source TEXT);
CREATE TABLE __intrinsic_v8_wasm_script (
  id INTEGER PRIMARY KEY, v8_isolate_id INTEGER, internal_script_id INTEGER, url TEXT,
  wire_bytes_base64 TEXT, source TEXT);
CREATE TABLE __intrinsic_v8_js_function (
  id INTEGER PRIMARY KEY, name TEXT, v8_js_script_id INTEGER, is_toplevel INTEGER,
  kind TEXT, line INTEGER, col INTEGER);
CREATE TABLE __intrinsic_v8_js_code (
  id INTEGER PRIMARY KEY, jit_code_id INTEGER, v8_js_function_id INTEGER, tier TEXT,
  bytecode_base64 TEXT);
CREATE TABLE __intrinsic_v8_internal_code (
  id INTEGER PRIMARY KEY, jit_code_id INTEGER, v8_isolate_id INTEGER, function_name TEXT,
  code_type TEXT);
CREATE TABLE __intrinsic_v8_wasm_code (
  id INTEGER PRIMARY KEY, jit_code_id INTEGER, v8_isolate_id INTEGER,
  v8_wasm_script_id INTEGER, function_name TEXT, tier TEXT, code_offset_in_module INTEGER);
CREATE TABLE __intrinsic_v8_regexp_code (
  id INTEGER PRIMARY KEY, jit_code_id INTEGER, v8_isolate_id INTEGER, pattern TEXT);
CREATE TABLE __intrinsic_jit_code (
  id INTEGER PRIMARY KEY, create_ts INTEGER, estimated_delete_ts INTEGER, utid INTEGER,
  start_address INTEGER, size INTEGER, function_name TEXT, native_code_base64 TEXT);
CREATE TABLE profiler_smaps (
  id INTEGER PRIMARY KEY, upid INTEGER, ts INTEGER, path TEXT, size_kb INTEGER,
  private_dirty_kb INTEGER, swap_kb INTEGER, file_name TEXT, start_address INTEGER,
  module_timestamp INTEGER, module_debugid TEXT, module_debug_path TEXT,
  protection_flags INTEGER, private_clean_resident_kb INTEGER,
  shared_dirty_resident_kb INTEGER, shared_clean_resident_kb INTEGER, locked_kb INTEGER,
  proportional_resident_kb INTEGER);
CREATE TABLE __intrinsic_frame_slice_times (
  slice_id INTEGER, queue_to_acquire_time INTEGER, acquire_to_latch_time INTEGER,
  latch_to_present_time INTEGER);
CREATE TABLE vulkan_memory_allocations (
  id INTEGER PRIMARY KEY, arg_set_id INTEGER, source TEXT, operation TEXT, timestamp INTEGER,
  upid INTEGER, device INTEGER, device_memory INTEGER, memory_type INTEGER, heap INTEGER,
  function_name TEXT, object_handle INTEGER, memory_address INTEGER, memory_size INTEGER,
  scope TEXT);
CREATE TABLE __intrinsic_android_motion_events (
  id INTEGER PRIMARY KEY, event_id INTEGER, ts INTEGER, arg_set_id INTEGER,
  base64_proto_id INTEGER);
CREATE TABLE __intrinsic_android_key_events (
  id INTEGER PRIMARY KEY, event_id INTEGER, ts INTEGER, arg_set_id INTEGER,
  base64_proto_id INTEGER);
CREATE TABLE __intrinsic_android_input_event_dispatch (
  id INTEGER PRIMARY KEY, event_id INTEGER, arg_set_id INTEGER, vsync_id INTEGER,
  window_id INTEGER, base64_proto_id INTEGER);
CREATE TABLE __intrinsic_base64_proto (id INTEGER PRIMARY KEY, str TEXT);
CREATE TABLE __intrinsic_window_manager_shell_transitions (
  id INTEGER PRIMARY KEY, ts INTEGER, transition_id INTEGER, arg_set_id INTEGER,
  transition_type INTEGER, send_time_ns INTEGER, dispatch_time_ns INTEGER,
  duration_ns INTEGER, finish_time_ns INTEGER, shell_abort_time_ns INTEGER,
  handler INTEGER, status TEXT, flags INTEGER, start_transaction_id INTEGER,
  finish_transaction_id INTEGER);
CREATE TABLE __intrinsic_window_manager_shell_transition_protos (
  id INTEGER PRIMARY KEY, transition_id INTEGER, base64_proto_id INTEGER);
CREATE TABLE __intrinsic_window_manager_shell_transition_participants (
  id INTEGER PRIMARY KEY, transition_id INTEGER, layer_id INTEGER, window_id INTEGER);
CREATE TABLE __intrinsic_window_manager_shell_transition_handlers (
  id INTEGER PRIMARY KEY, handler_id INTEGER, handler_name TEXT, base64_proto_id INTEGER);
CREATE TABLE __intrinsic_surfaceflinger_layers_snapshot (
  id INTEGER PRIMARY KEY, ts INTEGER, arg_set_id INTEGER, base64_proto_id INTEGER);
CREATE TABLE __intrinsic_surfaceflinger_layer (
  id INTEGER PRIMARY KEY, snapshot_id INTEGER, arg_set_id INTEGER, base64_proto_id INTEGER);
CREATE TABLE __intrinsic_surfaceflinger_transactions (
  id INTEGER PRIMARY KEY, ts INTEGER, arg_set_id INTEGER, base64_proto_id INTEGER,
  vsync_id INTEGER);
CREATE TABLE __intrinsic_windowmanager (
  id INTEGER PRIMARY KEY, ts INTEGER, arg_set_id INTEGER, base64_proto_id INTEGER);
CREATE TABLE __intrinsic_inputmethod_clients (
  id INTEGER PRIMARY KEY, ts INTEGER, arg_set_id INTEGER, base64_proto_id INTEGER);
CREATE TABLE __intrinsic_inputmethod_service (
  id INTEGER PRIMARY KEY, ts INTEGER, arg_set_id INTEGER, base64_proto_id INTEGER);
CREATE TABLE __intrinsic_inputmethod_manager_service (
  id INTEGER PRIMARY KEY, ts INTEGER, arg_set_id INTEGER, base64_proto_id INTEGER);
CREATE TABLE __intrinsic_protolog (
  id INTEGER PRIMARY KEY, ts INTEGER, level TEXT, tag TEXT, message TEXT, stacktrace TEXT,
  location TEXT);
CREATE TABLE __intrinsic_viewcapture (
  id INTEGER PRIMARY KEY, ts INTEGER, arg_set_id INTEGER, base64_proto_id INTEGER);
CREATE TABLE __intrinsic_spurious_sched_wakeup (
  id INTEGER PRIMARY KEY, ts INTEGER, thread_state_id INTEGER, irq_context INTEGER,
  utid INTEGER, waker_utid INTEGER);
CREATE VIEW spurious_sched_wakeup AS SELECT * FROM __intrinsic_spurious_sched_wakeup;
CREATE TABLE _trace_import_logs (
  id INTEGER PRIMARY KEY, trace_id INTEGER, ts INTEGER, byte_offset INTEGER, severity TEXT,
  name TEXT, arg_set_id INTEGER);
CREATE VIEW chrome_raw AS
  SELECT id, ts, name, utid, arg_set_id FROM __intrinsic_chrome_raw;
"#;

/// Indexes, created with the tables: the writer thread keeps them as rows land, beside the
/// model, rather than the import sorting every row once more at the end, alone (the args
/// index of a 2 M-event JSON trace: 0.4 s more on the writer, 0.7 s less at the end). No
/// index leads with a column other than the id on `slice` or `counter`: SQLite would scan
/// through it, and rows that tie in an `ORDER BY` would leave id order, which Perfetto
/// queries rely on.
pub const INDEXES: &str = r#"
CREATE INDEX args_set ON args(arg_set_id);
CREATE INDEX sched_cpu_ts ON sched_slice(cpu, ts);
CREATE INDEX flow_out ON flow(slice_out);
CREATE INDEX flow_in ON flow(slice_in);
"#;

/// Views, created with the tables so readers can use them while the import runs.
pub const VIEWS: &str = r#"
CREATE VIEW sched AS SELECT * FROM sched_slice;
CREATE VIEW ftrace_event AS
  SELECT id, ts, name, cpu, utid, arg_set_id, common_flags, ucpu FROM __intrinsic_ftrace_event;
CREATE VIEW raw AS
  SELECT id, 'ftrace_event' AS type, ts, name, cpu, utid, arg_set_id, common_flags, ucpu
  FROM __intrinsic_ftrace_event;
CREATE VIEW slices AS SELECT * FROM slice;
CREATE VIEW __intrinsic_slice AS SELECT * FROM slice;
CREATE VIEW instant AS SELECT ts, track_id, name, arg_set_id FROM slice WHERE dur = 0;
CREATE VIEW trace_file AS SELECT * FROM __intrinsic_trace_file;
CREATE VIEW track AS
  SELECT id, name, type, dimension_arg_set_id, parent_id, source_arg_set_id, machine_id,
         track_group_id
  FROM __intrinsic_track;
CREATE VIEW thread_track AS
  SELECT id, name, type, parent_id, source_arg_set_id, machine_id, utid
  FROM __intrinsic_track WHERE event_type = 'slice' AND utid IS NOT NULL;
CREATE VIEW process_track AS
  SELECT id, name, type, parent_id, source_arg_set_id, machine_id, upid
  FROM __intrinsic_track WHERE event_type = 'slice' AND upid IS NOT NULL AND utid IS NULL;
CREATE VIEW cpu_track AS
  SELECT id, name, type, parent_id, source_arg_set_id, machine_id, cpu
  FROM __intrinsic_track WHERE event_type = 'slice' AND cpu IS NOT NULL;
-- GPU tracks: DRM fences, scheduler rings and vblanks (kernel), and, with their type as
-- scope, SurfaceFlinger buffer queues (GraphicsFrameEvent), render stage queues, Vulkan
-- events and the GPU log.
CREATE VIEW gpu_track AS
  SELECT id, name, type, dimension_arg_set_id, parent_id, source_arg_set_id, machine_id,
         CASE WHEN type IN ('graphics_frame_event', 'gpu_render_stage', 'vulkan_events',
                            'gpu_log') THEN type END AS scope,
         description, NULL AS context_id
  FROM __intrinsic_track
  WHERE (event_type = 'slice' AND type IN ('drm_fence', 'drm_sched_ring', 'drm_vblank'))
     OR type IN ('graphics_frame_event', 'gpu_render_stage', 'vulkan_events', 'gpu_log');
-- Slices on GPU tracks, with the columns render stages and Vulkan submits keep as args.
CREATE VIEW gpu_slice AS
  SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id,
         s.arg_set_id, s.thread_ts, s.thread_dur,
         extract_arg(s.arg_set_id, 'context_id') AS context_id,
         extract_arg(s.arg_set_id, 'render_target') AS render_target,
         extract_arg(s.arg_set_id, 'render_target_name') AS render_target_name,
         extract_arg(s.arg_set_id, 'render_pass') AS render_pass,
         extract_arg(s.arg_set_id, 'render_pass_name') AS render_pass_name,
         extract_arg(s.arg_set_id, 'command_buffer') AS command_buffer,
         extract_arg(s.arg_set_id, 'command_buffer_name') AS command_buffer_name,
         extract_arg(s.arg_set_id, 'frame_id') AS frame_id,
         extract_arg(s.arg_set_id, 'submission_id') AS submission_id,
         extract_arg(s.arg_set_id, 'hw_queue_id') AS hw_queue_id,
         extract_arg(s.arg_set_id, 'upid') AS upid,
         extract_arg(s.arg_set_id, 'render_subpasses') AS render_subpasses
  FROM slice s JOIN gpu_track t ON s.track_id = t.id;
CREATE VIEW gpu AS
  SELECT id, gpu, name, vendor, model, architecture, uuid, pci_bdf, machine_id, arg_set_id
  FROM __intrinsic_gpu;
-- Perfetto stdlib std.gpu.context: the graphics contexts of GPU activity.
CREATE VIEW gpu_context AS
  SELECT id, context_id, pid, api, machine_id FROM __intrinsic_gpu_context;
-- Perfetto stdlib android.user_list: the device's users.
CREATE VIEW android_user_list AS
  SELECT android_user_id, type FROM __intrinsic_android_user_list;
-- Perfetto stdlib linux.systemd_journald: the journal's entries.
CREATE VIEW linux_systemd_journald_logs AS
  SELECT id, ts, utid, prio, tag, msg, pid, tid, uid, gid, comm, exe, systemd_unit,
         hostname, transport
  FROM __intrinsic_journald_logs;
CREATE VIEW state AS SELECT * FROM __intrinsic_state;
CREATE VIEW state_track AS
  SELECT id, name, parent_id, type, dimension_arg_set_id, source_arg_set_id, machine_id
  FROM __intrinsic_track WHERE event_type = 'state';
CREATE VIEW process_state_track AS
  SELECT id, name, type, parent_id, source_arg_set_id, machine_id, upid
  FROM __intrinsic_track WHERE event_type = 'state' AND upid IS NOT NULL AND utid IS NULL;
CREATE VIEW thread_state_track AS
  SELECT id, name, type, parent_id, source_arg_set_id, machine_id, utid
  FROM __intrinsic_track WHERE event_type = 'state' AND utid IS NOT NULL;
CREATE VIEW counter_track AS
  SELECT id, name, parent_id, type, dimension_arg_set_id, source_arg_set_id, machine_id,
         unit, description
  FROM __intrinsic_track WHERE event_type = 'counter';
CREATE VIEW process_counter_track AS
  SELECT id, name, type, parent_id, source_arg_set_id, machine_id, unit, description, upid
  FROM __intrinsic_track WHERE event_type = 'counter' AND upid IS NOT NULL AND utid IS NULL;
CREATE VIEW thread_counter_track AS
  SELECT id, name, type, parent_id, source_arg_set_id, machine_id, unit, description, utid
  FROM __intrinsic_track WHERE event_type = 'counter' AND utid IS NOT NULL;
CREATE VIEW cpu_counter_track AS
  SELECT id, name, type, parent_id, source_arg_set_id, machine_id, unit, description, cpu
  FROM __intrinsic_track WHERE event_type = 'counter' AND cpu IS NOT NULL;
CREATE VIEW thread_slice AS
  SELECT s.id, s.ts, s.dur, s.category, s.name, s.track_id, t.utid, th.tid,
         th.name AS thread_name, th.upid, p.pid, p.name AS process_name, s.depth,
         s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur
  FROM slice s JOIN __intrinsic_track t ON s.track_id = t.id AND t.utid IS NOT NULL
  LEFT JOIN thread th ON th.utid = t.utid LEFT JOIN process p ON p.upid = th.upid;
CREATE VIEW process_slice AS
  SELECT s.id, s.ts, s.dur, s.category, s.name, s.track_id, t.upid, p.pid,
         p.name AS process_name, s.depth, s.parent_id, s.arg_set_id, s.thread_ts,
         s.thread_dur
  FROM slice s JOIN __intrinsic_track t ON s.track_id = t.id
       AND t.upid IS NOT NULL AND t.utid IS NULL
  LEFT JOIN process p ON p.upid = t.upid;
CREATE VIEW thread_or_process_slice AS
  SELECT s.id, s.ts, s.dur, s.category, s.name, s.track_id, t.name AS track_name,
         th.name AS thread_name, t.utid, th.tid,
         COALESCE(p1.name, p2.name) AS process_name,
         COALESCE(t.upid, th.upid) AS upid,
         COALESCE(p1.pid, p2.pid) AS pid,
         s.depth, s.parent_id, s.arg_set_id
  FROM slice s JOIN __intrinsic_track t ON s.track_id = t.id
  LEFT JOIN thread th ON th.utid = t.utid
  LEFT JOIN process p1 ON p1.upid = t.upid
  LEFT JOIN process p2 ON p2.upid = th.upid
  WHERE t.utid IS NOT NULL OR t.upid IS NOT NULL;
CREATE VIEW counters AS
  SELECT c.id, c.ts, c.track_id, c.value, c.arg_set_id, t.name, t.unit
  FROM counter c JOIN __intrinsic_track t ON c.track_id = t.id AND t.event_type = 'counter'
  ORDER BY c.ts;
-- Trace Processor's experimental_counter_dur: each counter row with the time to the next
-- row of its track (-1 for the last) and the change from the previous one (0 for the first),
-- rows in table (id) order.
CREATE VIEW experimental_counter_dur AS
  SELECT c.id, c.ts, c.track_id, c.value, c.arg_set_id,
    coalesce(lead(c.ts) OVER w - c.ts, -1) AS dur,
    coalesce(c.value - lag(c.value) OVER w, 0.0) AS delta
  FROM counter c
  WINDOW w AS (PARTITION BY c.track_id ORDER BY c.id)
  ORDER BY c.id;
CREATE VIEW android_logs AS
  SELECT id, ts, utid, prio, tag, msg FROM __intrinsic_android_logs;
CREATE VIEW package_list AS
  SELECT id, package_name, uid, debuggable, profileable_from_shell, version_code
  FROM __intrinsic_package_list;
CREATE VIEW frame_slice AS
  SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id,
         s.arg_set_id,
         extract_arg(s.arg_set_id, 'frame_number') AS frame_number,
         extract_arg(s.arg_set_id, 'layer_name') AS layer_name,
         ft.queue_to_acquire_time, ft.acquire_to_latch_time, ft.latch_to_present_time
  FROM slice s JOIN __intrinsic_track t ON s.track_id = t.id
  LEFT JOIN __intrinsic_frame_slice_times ft ON ft.slice_id = s.id
  WHERE t.type = 'graphics_frame_event';
CREATE VIEW gpu_counter_group AS
  SELECT id, group_id, name, description, track_id FROM __intrinsic_gpu_counter_group;
CREATE VIEW gpu_counter_track AS
  SELECT id, name, type, parent_id, source_arg_set_id, machine_id, unit, description,
         extract_arg(dimension_arg_set_id, 'gpu') AS gpu_id
  FROM __intrinsic_track WHERE event_type = 'counter' AND type = 'gpu_counter';
CREATE VIEW expected_frame_timeline_slice AS
  SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id,
         s.arg_set_id,
         extract_arg(s.arg_set_id, 'Display frame token') AS display_frame_token,
         extract_arg(s.arg_set_id, 'Surface frame token') AS surface_frame_token,
         t.upid,
         extract_arg(s.arg_set_id, 'Layer name') AS layer_name
  FROM slice s JOIN __intrinsic_track t ON s.track_id = t.id
  WHERE t.type = 'android_expected_frame_timeline';
CREATE VIEW actual_frame_timeline_slice AS
  SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id,
         s.arg_set_id,
         extract_arg(s.arg_set_id, 'Display frame token') AS display_frame_token,
         extract_arg(s.arg_set_id, 'Surface frame token') AS surface_frame_token,
         t.upid,
         extract_arg(s.arg_set_id, 'Layer name') AS layer_name,
         extract_arg(s.arg_set_id, 'Present type') AS present_type,
         extract_arg(s.arg_set_id, 'On time finish') AS on_time_finish,
         extract_arg(s.arg_set_id, 'GPU composition') AS gpu_composition,
         extract_arg(s.arg_set_id, 'Jank type') AS jank_type,
         extract_arg(s.arg_set_id, 'Jank severity type') AS jank_severity_type,
         extract_arg(s.arg_set_id, 'Prediction type') AS prediction_type,
         extract_arg(s.arg_set_id, 'Jank tag') AS jank_tag,
         extract_arg(s.arg_set_id, 'Jank tag (experimental)') AS jank_tag_experimental,
         extract_arg(s.arg_set_id, 'Jank Severity Score') AS jank_score,
         extract_arg(s.arg_set_id, 'Latched unsignaled count') AS latched_unsignaled_count,
         extract_arg(s.arg_set_id, 'Addressable unsignaled latch count')
           AS addressable_unsignaled_latch_count,
         extract_arg(s.arg_set_id, 'Latched fence state') AS latched_fence_state
  FROM slice s JOIN __intrinsic_track t ON s.track_id = t.id
  WHERE t.type = 'android_actual_frame_timeline';
-- Perfetto stdlib android.process_metadata: each process with its package, matched by
-- uid (app ids 20000-39999 folded onto their app), by the longest package name that
-- starts the process name when several packages share the uid, and for isolated processes
-- (90000-99999) by name only.
CREATE VIEW android_process_metadata AS
  WITH proc AS (
    SELECT p.upid, p.pid,
      CASE WHEN length(p.name) = 15 AND p.cmdline IS NOT NULL
            AND (p.cmdline IN ('zygote', 'zygote64', '<pre-initialized>')
                 OR substr(p.cmdline, -15) = p.name)
           THEN p.cmdline ELSE p.name END AS process_name,
      p.android_appid AS uid, p.android_user_id AS user_id, p.machine_id,
      CASE WHEN p.android_appid BETWEEN 20000 AND 29999 THEN p.android_appid - 10000
           WHEN p.android_appid BETWEEN 30000 AND 39999 THEN p.android_appid - 20000
           ELSE p.android_appid END AS match_uid,
      IFNULL(parent.name = 'kthreadd' OR p.pid = 0 OR parent.pid = 0, 0) AS is_kernel_task
    FROM process p LEFT JOIN process parent ON p.parent_upid = parent.upid
  ),
  uid_counts AS (SELECT uid, count(*) AS n FROM __intrinsic_package_list GROUP BY uid),
  matched AS (
    SELECT proc.upid, (
      SELECT pl.id FROM __intrinsic_package_list pl
      WHERE CASE
        WHEN proc.uid BETWEEN 90000 AND 99999 THEN
          substr(proc.process_name, 1, length(pl.package_name)) = pl.package_name
          AND substr(proc.process_name || ':', length(pl.package_name) + 1, 1) IN (':', '.')
        ELSE pl.uid = proc.match_uid AND (
          (SELECT n FROM uid_counts u WHERE u.uid = pl.uid) = 1
          OR substr(proc.process_name, 1, length(pl.package_name)) = pl.package_name)
        END
      ORDER BY length(pl.package_name) DESC, pl.id LIMIT 1) AS package_id
    FROM proc
  )
  SELECT proc.upid, proc.pid, proc.process_name, proc.uid,
    CASE WHEN (SELECT n FROM uid_counts u WHERE u.uid = proc.match_uid) > 1 THEN 1 END
      AS shared_uid,
    proc.user_id, ul.type AS user_type, pl.package_name, pl.version_code, pl.debuggable,
    proc.is_kernel_task
  FROM proc LEFT JOIN matched USING (upid)
  LEFT JOIN __intrinsic_package_list pl ON pl.id = matched.package_id
  LEFT JOIN __intrinsic_android_user_list ul ON ul.id = (
    SELECT u.id FROM __intrinsic_android_user_list u
    WHERE u.android_user_id = proc.user_id
      AND u.machine_id IS proc.machine_id ORDER BY u.id LIMIT 1)
  ORDER BY proc.upid;
-- Per uid and cluster, the cpu time between the first and the last sample.
CREATE VIEW __intrinsic_android_cpu_per_uid_track AS
  SELECT t.id, t.id AS track_id,
    extract_arg(t.dimension_arg_set_id, 'uid') AS uid,
    extract_arg(t.dimension_arg_set_id, 'cluster') AS cluster,
    CAST(IFNULL(max(c.value) - min(c.value), 0) AS INTEGER) AS total_cpu_millis
  FROM __intrinsic_track t LEFT JOIN counter c ON c.track_id = t.id
  WHERE t.type = 'android_cpu_per_uid'
  GROUP BY t.id;
-- Perfetto stdlib android.entity_state_residency.
CREATE VIEW android_entity_state_residency AS
  SELECT c.id, c.ts, c.track_id,
    extract_arg(t.dimension_arg_set_id, 'entity_name') AS entity_name,
    extract_arg(t.dimension_arg_set_id, 'state_name') AS state_name,
    CAST(c.value * 1000000 AS INTEGER) AS state_time_since_boot
  FROM counter c JOIN __intrinsic_track t ON c.track_id = t.id
  WHERE t.type = 'entity_state';
-- Perfetto stdlib android.power_rails.
CREATE VIEW android_power_rails_metadata AS
  SELECT t.name AS power_rail_name,
    extract_arg(t.source_arg_set_id, 'raw_name') AS raw_power_rail_name,
    CASE WHEN t.name GLOB 'power.rails.*' THEN substr(t.name, 13) END AS friendly_name,
    extract_arg(t.source_arg_set_id, 'subsystem_name') AS subsystem_name,
    t.id AS track_id, t.machine_id
  FROM __intrinsic_track t WHERE t.type = 'power_rails';
-- linux.cpu.frequency / linux.cpu.idle: each cpu's frequency (kHz) / idle state as intervals
-- over which it holds (counter_leading_intervals: a repeated value is folded in, the last
-- interval lasts to the end of the trace); idle state 4294967295 (-1 as unsigned) is -1.
CREATE VIEW cpu_frequency_counters AS
  WITH vals AS (
    SELECT c.id, c.ts, c.track_id, c.value,
      LAG(c.value) OVER (PARTITION BY c.track_id ORDER BY c.ts, c.id) AS prev
    FROM counter c JOIN cpu_counter_track t ON t.id = c.track_id AND t.type = 'cpu_frequency'
  ), kept AS (
    SELECT id, ts, track_id, value FROM vals WHERE prev IS NULL OR prev != value
  ), iv AS (
    SELECT id, ts, track_id, value,
      COALESCE(LEAD(ts) OVER w, (SELECT end_ts FROM trace_bounds)) - ts AS dur
    FROM kept WINDOW w AS (PARTITION BY track_id ORDER BY ts, id)
  )
  SELECT iv.id, iv.track_id, iv.ts, iv.dur, CAST(iv.value AS INT) AS freq, c.ucpu, t.cpu
  FROM iv JOIN cpu_counter_track t ON t.id = iv.track_id
  LEFT JOIN cpu c ON c.machine_id IS t.machine_id AND c.cpu = t.cpu;
CREATE VIEW cpu_idle_counters AS
  WITH vals AS (
    SELECT c.id, c.ts, c.track_id, c.value,
      LAG(c.value) OVER (PARTITION BY c.track_id ORDER BY c.ts, c.id) AS prev
    FROM counter c JOIN cpu_counter_track t ON t.id = c.track_id AND t.type = 'cpu_idle'
  ), kept AS (
    SELECT id, ts, track_id, value FROM vals WHERE prev IS NULL OR prev != value
  ), iv AS (
    SELECT id, ts, track_id, value,
      COALESCE(LEAD(ts) OVER w, (SELECT end_ts FROM trace_bounds)) - ts AS dur
    FROM kept WINDOW w AS (PARTITION BY track_id ORDER BY ts, id)
  )
  SELECT iv.id, iv.track_id, iv.ts, iv.dur, CAST(IIF(iv.value = 4294967295, -1, iv.value) AS INT) AS idle, t.cpu
  FROM iv JOIN cpu_counter_track t ON t.id = iv.track_id;
-- android.battery: the battery's counters side by side at each time one of them was sampled.
CREATE VIEW android_battery_charge AS
  SELECT all_ts.ts, current_avg_ua, capacity_percent, charge_uah, current_ua, voltage_uv,
    power_mw
  FROM (SELECT DISTINCT c.ts AS ts FROM counter c JOIN counter_track t ON c.track_id = t.id
        WHERE t.name GLOB 'batt.*') AS all_ts
  LEFT JOIN (SELECT c.ts, c.value AS current_avg_ua FROM counter c
             JOIN counter_track t ON c.track_id = t.id
             WHERE t.name = 'batt.current.avg_ua') USING (ts)
  LEFT JOIN (SELECT c.ts, c.value AS capacity_percent FROM counter c
             JOIN counter_track t ON c.track_id = t.id
             WHERE t.name = 'batt.capacity_pct') USING (ts)
  LEFT JOIN (SELECT c.ts, c.value AS charge_uah FROM counter c
             JOIN counter_track t ON c.track_id = t.id
             WHERE t.name = 'batt.charge_uah') USING (ts)
  LEFT JOIN (SELECT c.ts, c.value AS current_ua FROM counter c
             JOIN counter_track t ON c.track_id = t.id
             WHERE t.name = 'batt.current_ua') USING (ts)
  LEFT JOIN (SELECT c.ts, c.value AS voltage_uv FROM counter c
             JOIN counter_track t ON c.track_id = t.id
             WHERE t.name = 'batt.voltage_uv') USING (ts)
  LEFT JOIN (SELECT c.ts, c.value AS power_mw FROM counter c
             JOIN counter_track t ON c.track_id = t.id
             WHERE t.name = 'batt.power_mw') USING (ts)
  ORDER BY ts;
-- android.power_rails: each rail's energy as intervals (counter_leading_intervals: a sample
-- repeating the previous value of its rail is folded into it; an interval lasts to the next
-- change, the last to the end of the trace), with the energy at its end, the change since
-- the previous interval (uWs) and the average power over it (mW).
CREATE VIEW android_power_rails_counters AS
  WITH rails AS (
    SELECT c.id, c.ts, c.track_id, c.value,
      LAG(c.value) OVER (PARTITION BY c.track_id ORDER BY c.ts, c.id) AS prev
    FROM counter c JOIN android_power_rails_metadata m USING (track_id)
  ), kept AS (
    SELECT id, ts, track_id, value FROM rails WHERE prev IS NULL OR prev != value
  ), iv AS (
    SELECT id, ts, track_id, value,
      COALESCE(LEAD(ts) OVER w, (SELECT end_ts FROM trace_bounds)) - ts AS dur,
      LEAD(value) OVER w AS next_value,
      value - LAG(value) OVER w AS delta_value
    FROM kept WINDOW w AS (PARTITION BY track_id ORDER BY ts, id)
  )
  SELECT iv.id, iv.ts, iv.dur, m.power_rail_name, m.raw_power_rail_name,
    iv.value AS energy_since_boot, iv.next_value AS energy_since_boot_at_end,
    (iv.next_value - iv.value) / (iv.dur / 1e6) AS average_power,
    iv.delta_value AS energy_delta, iv.track_id, iv.value
  FROM iv JOIN android_power_rails_metadata m USING (track_id);
-- android.network_packets: every packet (or aggregate) of an Android network trace, its
-- interface and direction from its track's name, its fields from the slice's args.
CREATE VIEW android_network_packets AS
  SELECT s.ts, s.dur,
    t.name AS track_name,
    s.name AS package_name,
    substr(t.name, 1, instr(t.name, ' ') - 1) AS iface,
    substr(t.name, instr(t.name, ' ') + 1) AS direction,
    ifnull(extract_arg(s.arg_set_id, 'packet_count'), 1) AS packet_count,
    extract_arg(s.arg_set_id, 'packet_length') AS packet_length,
    extract_arg(s.arg_set_id, 'packet_transport') AS packet_transport,
    extract_arg(s.arg_set_id, 'packet_tcp_flags') AS packet_tcp_flags,
    extract_arg(s.arg_set_id, 'socket_tag') AS socket_tag,
    extract_arg(s.arg_set_id, 'socket_uid') AS socket_uid,
    extract_arg(s.arg_set_id, 'local_port') AS local_port,
    extract_arg(s.arg_set_id, 'remote_port') AS remote_port,
    extract_arg(s.arg_set_id, 'packet_icmp_type') AS packet_icmp_type,
    extract_arg(s.arg_set_id, 'packet_icmp_code') AS packet_icmp_code
  FROM slice s JOIN track t ON s.track_id = t.id
  WHERE t.type = 'android_network_packets';

-- android.input: the input dispatcher's motion and key events and their dispatches to
-- windows, each with its fields as args and its proto in base64.
CREATE VIEW android_motion_events AS
  SELECT e.id, e.event_id, e.ts, e.arg_set_id, p.str AS base64_proto, e.base64_proto_id
  FROM __intrinsic_android_motion_events e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW android_key_events AS
  SELECT e.id, e.event_id, e.ts, e.arg_set_id, p.str AS base64_proto, e.base64_proto_id
  FROM __intrinsic_android_key_events e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW android_input_event_dispatch AS
  SELECT e.id, e.event_id, e.arg_set_id, e.vsync_id, e.window_id, p.str AS base64_proto,
    e.base64_proto_id
  FROM __intrinsic_android_input_event_dispatch e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;

-- v8.jit: V8's isolates, scripts, functions and code, each id as `<table>_id`.
CREATE VIEW v8_isolate AS
  SELECT id AS v8_isolate_id, upid, internal_isolate_id, embedded_blob_code_start_address,
    embedded_blob_code_size, code_range_base_address, code_range_size, shared_code_range,
    embedded_blob_code_copy_start_address
  FROM __intrinsic_v8_isolate;
CREATE VIEW v8_js_script AS
  SELECT id AS v8_js_script_id, v8_isolate_id, internal_script_id, script_type, name, source
  FROM __intrinsic_v8_js_script;
CREATE VIEW v8_wasm_script AS
  SELECT id AS v8_wasm_script_id, v8_isolate_id, internal_script_id, url,
    wire_bytes_base64, source
  FROM __intrinsic_v8_wasm_script;
CREATE VIEW v8_js_function AS
  SELECT id AS v8_js_function_id, name, v8_js_script_id, is_toplevel, kind, line, col
  FROM __intrinsic_v8_js_function;
CREATE VIEW v8_js_code AS
  SELECT id AS v8_js_code_id, jit_code_id, v8_js_function_id, tier, bytecode_base64
  FROM __intrinsic_v8_js_code;
CREATE VIEW v8_internal_code AS
  SELECT id AS v8_internal_code_id, jit_code_id, v8_isolate_id, function_name, code_type
  FROM __intrinsic_v8_internal_code;
CREATE VIEW v8_wasm_code AS
  SELECT id AS v8_wasm_code_id, jit_code_id, v8_isolate_id, v8_wasm_script_id,
    function_name, tier, code_offset_in_module
  FROM __intrinsic_v8_wasm_code;
CREATE VIEW v8_regexp_code AS
  SELECT id AS v8_regexp_code_id, jit_code_id, v8_isolate_id, pattern
  FROM __intrinsic_v8_regexp_code;
-- Winscope (shell transitions, SurfaceFlinger, window manager): the tables, their protos
-- in base64 joined in.
CREATE VIEW protolog AS SELECT * FROM __intrinsic_protolog;
CREATE VIEW window_manager_shell_transitions AS
  SELECT * FROM __intrinsic_window_manager_shell_transitions;
CREATE VIEW window_manager_shell_transition_protos AS
  SELECT e.id, e.transition_id, e.base64_proto_id, p.str AS base64_proto
  FROM __intrinsic_window_manager_shell_transition_protos e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW window_manager_shell_transition_participants AS
  SELECT * FROM __intrinsic_window_manager_shell_transition_participants;
CREATE VIEW window_manager_shell_transition_handlers AS
  SELECT e.id, e.handler_id, e.handler_name, e.base64_proto_id, p.str AS base64_proto
  FROM __intrinsic_window_manager_shell_transition_handlers e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW surfaceflinger_layers_snapshot AS
  SELECT e.id, e.ts, e.arg_set_id, e.base64_proto_id, p.str AS base64_proto
  FROM __intrinsic_surfaceflinger_layers_snapshot e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW surfaceflinger_layer AS
  SELECT e.id, e.snapshot_id, e.arg_set_id, e.base64_proto_id, p.str AS base64_proto
  FROM __intrinsic_surfaceflinger_layer e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW surfaceflinger_transactions AS
  SELECT e.id, e.ts, e.arg_set_id, e.base64_proto_id, p.str AS base64_proto, e.vsync_id
  FROM __intrinsic_surfaceflinger_transactions e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
-- Window manager, input method and view capture entries, also under the names the
-- reference's android.winscope.* modules give them (android_windowmanager, …).
CREATE VIEW viewcapture AS
  SELECT e.id, e.ts, e.arg_set_id, e.base64_proto_id, p.str AS base64_proto
  FROM __intrinsic_viewcapture e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW android_viewcapture AS
  SELECT e.id, e.ts, e.arg_set_id, e.base64_proto_id, p.str AS base64_proto
  FROM __intrinsic_viewcapture e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW windowmanager AS
  SELECT e.id, e.ts, e.arg_set_id, e.base64_proto_id, p.str AS base64_proto
  FROM __intrinsic_windowmanager e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW android_windowmanager AS
  SELECT e.id, e.ts, e.arg_set_id, e.base64_proto_id, p.str AS base64_proto
  FROM __intrinsic_windowmanager e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW inputmethod_clients AS
  SELECT e.id, e.ts, e.arg_set_id, e.base64_proto_id, p.str AS base64_proto
  FROM __intrinsic_inputmethod_clients e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW android_inputmethod_clients AS
  SELECT e.id, e.ts, e.arg_set_id, e.base64_proto_id, p.str AS base64_proto
  FROM __intrinsic_inputmethod_clients e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW inputmethod_service AS
  SELECT e.id, e.ts, e.arg_set_id, e.base64_proto_id, p.str AS base64_proto
  FROM __intrinsic_inputmethod_service e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW android_inputmethod_service AS
  SELECT e.id, e.ts, e.arg_set_id, e.base64_proto_id, p.str AS base64_proto
  FROM __intrinsic_inputmethod_service e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW inputmethod_manager_service AS
  SELECT e.id, e.ts, e.arg_set_id, e.base64_proto_id, p.str AS base64_proto
  FROM __intrinsic_inputmethod_manager_service e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;
CREATE VIEW android_inputmethod_manager_service AS
  SELECT e.id, e.ts, e.arg_set_id, e.base64_proto_id, p.str AS base64_proto
  FROM __intrinsic_inputmethod_manager_service e
  LEFT JOIN __intrinsic_base64_proto p ON p.id = e.base64_proto_id;

-- pkvm.hypervisor: the times cpus spent in the pKVM hypervisor and why they entered it.
CREATE VIEW pkvm_hypervisor_events AS
  SELECT s.id AS slice_id, ct.cpu AS cpu, s.ts AS ts, s.dur AS dur,
    extract_arg(s.arg_set_id, 'hyp_enter_reason') AS reason
  FROM slices s JOIN cpu_track ct ON ct.id = s.track_id
  WHERE s.category = 'pkvm_hyp';
"#;

/// Perfetto standard-library modules `INCLUDE PERFETTO MODULE` accepts: their tables and
/// views are built into the schema above.
pub const KNOWN_MODULES: &[&str] = &[
    "slices.with_context",
    "slices",
    "common",
    "prelude",
    "android.process_metadata",
    "android.entity_state_residency",
    "android.power_rails",
    "stacks.cpu_profiling",
    "android.memory.heap_profile.intervals",
    "linux.systemd_journald",
    "android.user_list",
    "std.gpu.context",
    "pkvm.hypervisor",
    "android.network_packets",
    "v8.jit",
    "android.input",
    "android.winscope.windowmanager",
    "android.winscope.inputmethod",
    "android.winscope.viewcapture",
    "time.conversion",
    "android.battery",
    "linux.cpu.frequency",
    "linux.cpu.idle",
];
