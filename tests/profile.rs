//! Profiles: V8 CPU profiles in Chrome JSON, perf samples, heapprofd dumps, symbols and
//! deobfuscation maps, against what the reference implementation makes of them (the proto
//! traces are its own conformance cases, copied into tests/data/profile; the JSON ones are
//! real DevTools / Lighthouse exports).

use rusqlite::Connection;

mod common;

use common::{rows, table, TempFile};

fn import(file: &str) -> (Connection, TempFile) {
    common::import_data("profile", file)
}

fn import_top(file: &str) -> (Connection, TempFile) {
    common::import_data("", file)
}

fn stat(conn: &Connection, name: &str) -> String {
    rows(
        conn,
        &format!("select coalesce(sum(value), 0) from stats where name = '{name}'"),
    )[0][0]
        .clone()
}

#[test]
fn v8_profile_chunks_become_samples_on_the_chunk_thread() {
    let (conn, _db) = import_top("lighthouse_cpu_profile.json");
    let got = rows(
        &conn,
        "select count(*), count(distinct s.utid), min(t.tid), max(t.tid)
         from cpu_profile_stack_sample s join thread t using (utid)",
    );
    assert_eq!(got, table(&[["4994", "1", "35847", "35847"]]));
    // Every sample's stack goes back to V8's (root) node, depth 0.
    let roots = rows(
        &conn,
        "with recursive up(id, parent_id, frame_id) as (
           select c.id, c.parent_id, c.frame_id from stack_profile_callsite c
           where c.id in (select callsite_id from cpu_profile_stack_sample)
           union
           select c.id, c.parent_id, c.frame_id from stack_profile_callsite c
           join up on c.id = up.parent_id)
         select f.name, c.depth from up join stack_profile_callsite c using (id)
         join stack_profile_frame f on f.id = c.frame_id where c.parent_id is null",
    );
    assert_eq!(roots, table(&[["(root)", "0"]]));
    // Samples are on the file's timeline, from the profile's startTime on.
    let first = rows(&conn, "select min(ts) > 0 from cpu_profile_stack_sample");
    assert_eq!(first, table(&[["1"]]));
}

#[test]
fn v8_nodes_with_unknown_parents_and_their_samples_are_counted() {
    let (conn, _db) = import_top("chrome141_v8_profile_no_arg_chunks.json");
    let got = rows(&conn, "select count(*) from cpu_profile_stack_sample");
    assert_eq!(got, table(&[["400"]]));
    assert_eq!(stat(&conn, "legacy_v8_cpu_profile_invalid_callsite"), "59");
    assert_eq!(stat(&conn, "legacy_v8_cpu_profile_invalid_sample"), "21");
}

#[test]
fn perf_sample_counters_go_to_per_cpu_session_tracks() {
    let (conn, _db) = import("perf_sample_followers.pftrace");
    let got = rows(
        &conn,
        "select c.ts, c.value, pct.cpu, pct.perf_session_id, pct.is_timebase, pct.name
         from counter c join perf_counter_track pct on c.track_id = pct.id
         order by ts, c.id",
    );
    assert_eq!(
        got,
        table(&[
            ["273574993553025", "10020141", "0", "0", "1", "cpu-clock"],
            ["273574993553025", "4672142", "0", "0", "0", "cpu-cycles"],
            ["273574993553025", "1144537", "0", "0", "0", "instructions"],
        ])
    );
    // The sample's callstack has no frames: a row without callsite, and the stat.
    let got = rows(
        &conn,
        "select ts, cpu, cpu_mode, callsite_id is null, perf_session_id from perf_sample",
    );
    assert_eq!(got, table(&[["273574993553025", "0", "kernel", "1", "0"]]));
    assert_eq!(stat(&conn, "stackprofile_empty_callstack"), "1");
}

#[test]
fn perf_callstacks_intern_mappings_frames_and_callsites() {
    let (conn, _db) = import("perf_sample_switch_interp.pftrace");
    let got = rows(
        &conn,
        "with recursive up(id, parent_id, depth, frame_id) as (
           select id, parent_id, depth, frame_id from stack_profile_callsite
           where id = (select callsite_id from perf_sample)
           union all
           select c.id, c.parent_id, c.depth, c.frame_id from stack_profile_callsite c
           join up on c.id = up.parent_id)
         select up.depth, m.name, f.name from up
         join stack_profile_frame f on f.id = up.frame_id
         join stack_profile_mapping m on m.id = f.mapping order by up.depth",
    );
    assert_eq!(
        got,
        table(&[
            ["0", "/example.vdex", "com.example.managed.frame"],
            ["1", "/apex/com.android.art/lib64/libart.so", "ExecuteSwitchImplAsm"],
            [
                "2",
                "/apex/com.android.art/lib64/libart.so",
                "_ZN3art11interpreter20ExecuteSwitchImplCppILb0EEEvPNS0_17SwitchImplContextE"
            ],
            [
                "3",
                "/apex/com.android.art/lib64/libart.so",
                "_ZN3art11interpreter6DoCallILb1EEEbPNS_9ArtMethodEPNS_6ThreadERNS_11ShadowFrameEPKNS_11InstructionEtbPNS_6JValueE"
            ],
            [
                "4",
                "/apex/com.android.art/lib64/libart.so",
                "_ZN3art9ArtMethod6InvokeEPNS_6ThreadEPjjPNS_6JValueEPKc"
            ],
        ])
    );
    let got = rows(&conn, "select cpu_mode, utid is not null from perf_sample");
    assert_eq!(got, table(&[["user", "1"]]));
}

#[test]
fn heapprofd_dumps_become_allocation_and_free_rows_at_the_dump_time() {
    let (conn, _db) = import("heap_profile_window.pftrace");
    let got = rows(
        &conn,
        "select hp.ts, hp.ts_end, hp.dur, a.ts, a.size, a.count, a.heap_name
         from heap_profile hp join heap_profile_allocation a
         on hp.upid = a.upid and a.ts = hp.ts_end",
    );
    assert_eq!(
        got,
        table(&[["5", "20", "15", "20", "1000", "4", "unknown"]])
    );
    // A dump at max without trustworthy counts: sizes only, at a time before trace start.
    let (conn, _db) = import("heap_profile_dump_max_legacy.pftrace");
    let got = rows(
        &conn,
        "select ts, callsite_id, count, size from heap_profile_allocation order by id",
    );
    assert_eq!(
        got,
        table(&[["-10", "2", "0", "1000"], ["-10", "3", "0", "90"]])
    );
    // Symbols of the module name the frames at their addresses.
    let got = rows(
        &conn,
        "select f.rel_pc, s.name, s.source_file, s.line_number from stack_profile_frame f
         join stack_profile_symbol s using (symbol_set_id) order by f.rel_pc",
    );
    assert_eq!(
        got,
        table(&[
            ["8192", "symbolized f2", "f2.cc", "22"],
            ["12288", "symbolized f3", "f3.cc", "33"],
            ["16384", "symbolized f2", "f2.cc", "23"],
        ])
    );
}

#[test]
fn deobfuscation_applies_to_frames_of_the_package_only() {
    let (conn, _db) = import("heap_profile_deobfuscate.pftrace");
    let got = rows(
        &conn,
        "select name, deobfuscated_name, mapping, rel_pc from stack_profile_frame",
    );
    assert_eq!(got, table(&[["a.f1", "Bar.function1", "0", "4096"]]));
    let got = rows(
        &conn,
        "select count, size from heap_profile_allocation order by id",
    );
    assert_eq!(got, table(&[["2", "2000"], ["-1", "-1000"]]));
}

#[test]
fn an_empty_callstack_makes_no_allocation_and_is_counted() {
    let (conn, _db) = import("empty_callstack.pftrace");
    let got = rows(&conn, "select count(*) from heap_profile_allocation");
    assert_eq!(got, table(&[["0"]]));
    // Each sample that names it.
    assert_eq!(stat(&conn, "stackprofile_empty_callstack"), "2");
}

#[test]
fn stack_samples_carry_contexts_counters_and_sessions() {
    let (conn, _db) = import("stack_samples.pftrace");
    // Samples with a callstack: their frame, thread, process, cpu, mode and async context.
    let got = rows(
        &conn,
        "select s.ts, s.source, t.tid, p.pid, f.name, ec.ucpu, ec.cpu_mode, ac.name
         from stack_sample s
         join stack_profile_callsite c on c.id = s.callsite_id
         join stack_profile_frame f on f.id = c.frame_id
         left join thread t using (utid) left join process p on p.upid = s.upid
         left join stack_sample_execution_context ec on ec.id = s.execution_context_id
         left join stack_sample_task_context tc on tc.id = s.task_context_id
         left join stack_sample_async_context ac on ac.id = tc.async_context_id
         order by s.ts",
    );
    assert_eq!(
        got,
        table(&[
            ["1000", "py.cpu", "201", "200", "leaf", "3", "user", "NULL"],
            [
                "2000",
                "py.cpu",
                "NULL",
                "200",
                "inline_leaf",
                "NULL",
                "NULL",
                "loop"
            ],
            ["4000", "NULL", "202", "200", "faulting", "NULL", "NULL", "NULL"],
        ])
    );
    // Weights: primary and followers (interned by iid, per cpu, unit string × multiplier).
    let counters = rows(
        &conn,
        "select s.ts, t.name, t.unit, t.cpu, t.is_timebase, c.value
         from stack_sample_counter c join stack_sample_counter_track t on t.id = c.track_id
         join stack_sample s on s.id = c.stack_sample_id order by c.id",
    );
    assert_eq!(
        counters,
        table(&[
            ["1000", "cpu-time", "ns", "NULL", "1", "250"],
            ["1000", "cycles", "cycles", "3", "0", "7"],
            ["2000", "cpu-time", "ns", "NULL", "1", "500"],
            ["2000", "alloc", "KiB", "NULL", "0", "2048"],
            ["4000", "faults", "page_faults", "NULL", "1", "3"],
        ])
    );
    // The sample without a callstack is a profiler sample only.
    let all = rows(&conn, "select count(*) from __intrinsic_profiler_sample");
    assert_eq!(all, table(&[["4"]]));
    // An interned frame's source location is its symbol; its kind its type.
    let leaf = rows(
        &conn,
        "select f.type, s.source_file, s.line_number from stack_profile_frame f
         join stack_profile_symbol s using (symbol_set_id) where f.name = 'leaf'",
    );
    assert_eq!(leaf, table(&[["jit", "/src/leaf.py", "7"]]));
    // CPU profiling samples: the session timed in ns only.
    let cpu = rows(
        &conn,
        "select id, ts, source from cpu_profiling_samples order by id",
    );
    assert_eq!(
        cpu,
        table(&[["0", "1000", "py.cpu"], ["1", "2000", "py.cpu"]])
    );
}

#[test]
fn heapprofd_rows_belong_to_the_process_when_the_dump_is_read() {
    // The dump's own time (−10) is before the process tree (0); its rows still go to
    // system_server (pid 2, upid 2), as the reference reads the dump at its packet's time.
    let (conn, _db) = import("heap_profile_dump_max_legacy.pftrace");
    let got = rows(
        &conn,
        "select a.ts, p.pid, p.name, a.callsite_id, a.size from heap_profile_allocation a
         join process p using (upid) order by a.id",
    );
    assert_eq!(
        got,
        table(&[
            ["-10", "2", "system_server", "2", "1000"],
            ["-10", "2", "system_server", "3", "90"],
        ])
    );
    let intervals = rows(
        &conn,
        "select ts, dur, heap_name, retained, allocated, delta from _android_heap_profile_intervals",
    );
    assert_eq!(
        intervals,
        table(&[["-10", "0", "unknown", "1090", "1090", "1090"]])
    );
}

/// Imports a trace made of `packets`.
fn import_packets(
    tag: &str,
    packets: Vec<sextant::protos::TracePacket>,
) -> (Connection, TempFile, TempFile) {
    use prost::Message;
    let trace = sextant::protos::Trace { packet: packets };
    let input = TempFile::with_bytes(tag, &trace.encode_to_vec());
    let db = TempFile::new(&format!("{tag}.sqlite"));
    sextant::import::import_path(input.path(), db.path()).expect("imports");
    let conn = sextant::db::open_read_only(db.path()).expect("opens");
    (conn, input, db)
}

#[test]
fn heap_graphs_become_objects_classes_references_and_a_flamegraph() {
    use sextant::protos::{
        heap_graph_object::Identifier, trace_packet::Data, ArtProcessMetadata,
        DeobfuscationMapping, HeapGraph, HeapGraphInternedString, HeapGraphObject, HeapGraphRoot,
        HeapGraphType, ObfuscatedClass, ObfuscatedMember, TracePacket,
    };
    let s = |iid: u64, text: &str| HeapGraphInternedString {
        iid: Some(iid),
        str: Some(text.as_bytes().to_vec()),
    };
    let ty =
        |id: u64, name: &str, size: u64, superclass: Option<u64>, fields: Vec<u64>, kind: i32| {
            HeapGraphType {
                id: Some(id),
                location_id: Some(1),
                class_name: Some(name.into()),
                object_size: Some(size),
                superclass_id: superclass,
                reference_field_id: fields,
                kind: Some(kind),
                classloader_id: None,
            }
        };
    let obj = |id: u64, type_id: u64, refs: Vec<u64>, fields: Vec<u64>| HeapGraphObject {
        identifier: Some(Identifier::Id(id)),
        type_id: Some(type_id),
        reference_object_id: refs,
        reference_field_id: fields,
        ..Default::default()
    };
    let graph = |index: u64, continued: bool| HeapGraph {
        pid: Some(7),
        index: Some(index),
        continued: Some(continued),
        ..Default::default()
    };
    // Packet 0: types, field names; packet 1: objects and roots.
    let mut first = graph(0, true);
    first.location_names = vec![s(1, "/data/app/com.ex-1/base.apk")];
    first.field_names = vec![
        s(10, "a b.x"),
        s(11, "a b.y"),
        s(12, "a c.z"),
        s(13, "java.lang.Object java.lang.ref.Reference.referent"),
    ];
    first.types = vec![
        ty(1, "b", 16, None, vec![10, 11], 1),
        ty(2, "c", 8, Some(1), vec![12], 1),
        ty(3, "a", 100, None, vec![], 2),
        ty(4, "java.lang.ref.WeakReference", 24, None, vec![13], 9),
    ];
    let mut second = graph(1, false);
    second.heap_size = Some(4096);
    second.objects = vec![
        // c: fields from its class then its superclass (z, x, y); y holds nothing.
        obj(100, 2, vec![101, 102, 0], vec![]),
        obj(101, 3, vec![], vec![]),
        // A weak reference to 103: not a path to it.
        obj(102, 4, vec![103], vec![]),
        obj(103, 3, vec![], vec![]),
        // Explicit field ids.
        obj(104, 1, vec![101], vec![10]),
    ];
    second.roots = vec![HeapGraphRoot {
        object_ids: vec![100],
        root_type: Some(3),
    }];
    let art = ArtProcessMetadata {
        pid: Some(7),
        oom_error_msg: Some("OOM".into()),
        ..Default::default()
    };
    let deobf = DeobfuscationMapping {
        package_name: Some("com.ex".into()),
        obfuscated_classes: vec![
            ObfuscatedClass {
                obfuscated_name: Some("a".into()),
                deobfuscated_name: Some("com.ex.Big".into()),
                obfuscated_members: vec![],
                obfuscated_methods: vec![],
            },
            ObfuscatedClass {
                obfuscated_name: Some("c".into()),
                deobfuscated_name: Some("com.ex.Child".into()),
                obfuscated_members: vec![ObfuscatedMember {
                    obfuscated_name: Some("z".into()),
                    deobfuscated_name: Some("zed".into()),
                }],
                obfuscated_methods: vec![],
            },
        ],
        ..Default::default()
    };
    let mut packets = Vec::new();
    for (ts, data) in [
        (10, Data::ArtProcessMetadata(art)),
        (10, Data::HeapGraph(first)),
        (10, Data::HeapGraph(second)),
        (20, Data::DeobfuscationMapping(deobf)),
    ] {
        packets.push(TracePacket {
            timestamp: Some(ts),
            optional_trusted_packet_sequence_id: Some(
                sextant::protos::trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(1),
            ),
            data: Some(data),
            ..Default::default()
        });
    }
    let (conn, _input, _db) = import_packets("heap_graph", packets);
    let objects = rows(
        &conn,
        "select o.graph_sample_ts, c.name, c.deobfuscated_name, o.self_size, o.reachable,
                o.root_type, o.root_distance
         from heap_graph_object o join heap_graph_class c on c.id = o.type_id order by o.id",
    );
    assert_eq!(
        objects,
        table(&[
            ["10", "c", "com.ex.Child", "8", "1", "ROOT_JAVA_FRAME", "0"],
            ["10", "a", "com.ex.Big", "100", "1", "NULL", "1"],
            [
                "10",
                "java.lang.ref.WeakReference",
                "NULL",
                "24",
                "1",
                "NULL",
                "1"
            ],
            ["10", "a", "com.ex.Big", "100", "0", "NULL", "-1"],
            ["10", "b", "NULL", "16", "0", "NULL", "-1"],
        ])
    );
    let refs = rows(
        &conn,
        "select r.owner_id, r.owned_id, r.field_name, r.field_type_name,
                r.deobfuscated_field_name
         from heap_graph_reference r order by r.id",
    );
    assert_eq!(
        refs,
        table(&[
            ["0", "1", "c.z", "a", "com.ex.Child.zed"],
            ["0", "2", "b.x", "a", "NULL"],
            ["0", "NULL", "b.y", "a", "NULL"],
            [
                "2",
                "3",
                "java.lang.ref.Reference.referent",
                "java.lang.Object",
                "NULL"
            ],
            ["4", "1", "b.x", "a", "NULL"],
        ])
    );
    let dump = rows(&conn, "select ts, heap_size, dump_reason from heap_graph");
    assert_eq!(dump, table(&[["10", "4096", "OOME"]]));
    // The flamegraph: the root class, then what it reaches by the shortest paths.
    let flame = rows(
        &conn,
        "select depth, name, count, cumulative_count, size, cumulative_size
         from experimental_flamegraph('graph', 10, NULL,
              (select upid from process where pid = 7), NULL, NULL)
         order by depth, name",
    );
    assert_eq!(
        flame,
        table(&[
            ["0", "com.ex.Child", "1", "3", "8", "132"],
            ["1", "com.ex.Big", "1", "1", "100", "100"],
            ["1", "java.lang.ref.WeakReference", "1", "1", "24", "24"],
        ])
    );
}

#[test]
fn track_event_callstacks_go_to_their_slices() {
    use sextant::protos::{
        inline_callstack::Frame,
        trace_packet::Data,
        trace_packet::OptionalTrustedPacketSequenceId,
        track_event::{CallstackField, NameField, Type},
        InlineCallstack, ThreadDescriptor, TracePacket, TrackEvent,
    };
    let stack = |names: &[&str]| {
        CallstackField::Callstack(InlineCallstack {
            frames: names
                .iter()
                .map(|n| Frame {
                    function_name: Some(n.to_string()),
                    source_file: Some("f.py".into()),
                    line_number: Some(1),
                })
                .collect(),
        })
    };
    let event =
        |ts: u64, ty: Type, name: Option<&str>, cs: Option<CallstackField>, w: Option<f64>| {
            TracePacket {
                timestamp: Some(ts),
                optional_trusted_packet_sequence_id: Some(
                    OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(1),
                ),
                data: Some(Data::TrackEvent(TrackEvent {
                    r#type: Some(ty as i32),
                    name_field: name.map(|n| NameField::Name(n.into())),
                    callstack_field: cs,
                    callstack_weight: w,
                    ..Default::default()
                })),
                ..Default::default()
            }
        };
    let mut packets = vec![TracePacket {
        optional_trusted_packet_sequence_id: Some(
            OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(1),
        ),
        incremental_state_cleared: Some(true),
        data: Some(Data::ThreadDescriptor(ThreadDescriptor {
            pid: Some(5),
            tid: Some(6),
            ..Default::default()
        })),
        ..Default::default()
    }];
    packets.push(event(
        100,
        Type::SliceBegin,
        Some("outer"),
        Some(stack(&["main", "outer"])),
        Some(2.5),
    ));
    packets.push(event(
        150,
        Type::Instant,
        Some("tick"),
        Some(stack(&["main", "tick"])),
        None,
    ));
    packets.push(event(
        200,
        Type::SliceEnd,
        None,
        Some(stack(&["main", "done"])),
        None,
    ));
    let (conn, _input, _db) = import_packets("te_callstacks", packets);
    let got = rows(
        &conn,
        "select s.name, f1.name, f2.name, c.weight
         from __intrinsic_track_event_callstacks c join slice s on s.id = c.slice_id
         left join stack_profile_callsite c1 on c1.id = c.callsite_id
         left join stack_profile_frame f1 on f1.id = c1.frame_id
         left join stack_profile_callsite c2 on c2.id = c.end_callsite_id
         left join stack_profile_frame f2 on f2.id = c2.frame_id
         order by c.id",
    );
    assert_eq!(
        got,
        table(&[
            ["outer", "outer", "done", "2.5"],
            ["tick", "tick", "NULL", "NULL"],
        ])
    );
}

#[test]
fn smaps_packets_become_profiler_smaps_rows_of_their_process() {
    let (conn, _db) = import("profiler_smaps.pftrace");
    let got = rows(
        &conn,
        "select s.id, p.pid, s.ts, s.path, s.size_kb, s.private_dirty_kb, s.swap_kb,
                s.file_name, s.start_address, s.module_timestamp, s.module_debugid,
                s.module_debug_path, s.protection_flags, s.private_clean_resident_kb,
                s.shared_dirty_resident_kb, s.shared_clean_resident_kb, s.locked_kb,
                s.proportional_resident_kb
         from profiler_smaps s join process p using (upid) order by s.id",
    );
    assert_eq!(
        got,
        table(&[
            [
                "0",
                "2",
                "10",
                "/system/lib64/libc.so",
                "20",
                "4",
                "4",
                "NULL",
                "0",
                "0",
                "NULL",
                "NULL",
                "0",
                "0",
                "0",
                "0",
                "0",
                "0"
            ],
            [
                "1",
                "2",
                "10",
                "[anon: libc_malloc]",
                "30",
                "10",
                "10",
                "NULL",
                "0",
                "0",
                "NULL",
                "NULL",
                "0",
                "0",
                "0",
                "0",
                "0",
                "0"
            ],
            [
                "2",
                "2",
                "10",
                "/a/b.so",
                "1",
                "2",
                "3",
                "b.so",
                "4096",
                "5",
                "abc",
                "/dbg/b.pdb",
                "5",
                "6",
                "7",
                "8",
                "9",
                "11"
            ],
        ])
    );
}

#[test]
fn skipped_perf_samples_are_counted_and_keep_their_row() {
    use sextant::protos::{
        trace_packet::{Data, OptionalTrustedPacketSequenceId},
        PerfSample, TracePacket,
    };
    let sample = |ts: u64, skipped: Option<i32>| TracePacket {
        timestamp: Some(ts),
        optional_trusted_packet_sequence_id: Some(
            OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(1),
        ),
        data: Some(Data::PerfSample(PerfSample {
            cpu: Some(1),
            pid: Some(10),
            tid: Some(11),
            cpu_mode: Some(2),
            sample_skipped_reason: skipped,
            ..Default::default()
        })),
        ..Default::default()
    };
    // Reasons 1 (read stage) and 3 (unwind enqueue: data loss). The newest reference
    // keeps a skipped sample as a row without a callstack (conformance case
    // perf_sample_counter_only), only counting it.
    let packets = vec![
        sample(100, None),
        sample(110, Some(1)),
        sample(120, Some(3)),
    ];
    let (conn, _input, _db) = import_packets("perf_skipped", packets);
    assert_eq!(
        rows(&conn, "select ts, cpu, cpu_mode from perf_sample"),
        table(&[
            ["100", "1", "user"],
            ["110", "1", "user"],
            ["120", "1", "user"]
        ])
    );
    assert_eq!(stat(&conn, "perf_samples_skipped"), "2");
    assert_eq!(stat(&conn, "perf_samples_skipped_dataloss"), "1");
}

#[test]
fn perf_flamegraphs_take_a_group_of_processes_and_time_bounds() {
    // One sample of pid 10 at 100, two of pid 20 at 200 and 300, one of pid 30 at 400.
    let (conn, _db) = import("perf_three_processes.pftrace");
    let roots = |args: &str| {
        rows(
            &conn,
            &format!(
                "select cumulative_count from experimental_flamegraph('perf', {args})
                 where depth = 0"
            ),
        )
    };
    let group = "(select group_concat(upid) from process where pid in (10, 20))";
    assert_eq!(
        roots(&format!("NULL, NULL, NULL, {group}, NULL")),
        table(&[["3"]])
    );
    assert_eq!(
        roots("NULL, '>=200,<400', NULL, '1,2,3', NULL"),
        table(&[["2"]])
    );
    assert_eq!(roots("NULL, '<= 100', 1, NULL, NULL"), table(&[["1"]]));
}

#[test]
fn module_symbols_need_path_and_build_id_and_keep_every_address() {
    // tools/gen_profile_symbols_heapprofd.py
    let (conn, _db) = import("module_symbols_paths.pftrace");
    let got = rows(
        &conn,
        "select id, symbol_set_id, name, source_file, line_number from stack_profile_symbol
         order by id",
    );
    // 0x99 has no frame but keeps its symbol set (the reference inserts lines first).
    assert_eq!(
        got,
        table(&[
            ["0", "0", "inlined", "a.cc", "5"],
            ["1", "0", "main", "main.cc", "10"],
            ["2", "2", "nowhere", "c.cc", "1"],
        ])
    );
    // 0x30's symbols name the build id under another path: no mapping has both.
    let got = rows(
        &conn,
        "select name, symbol_set_id from stack_profile_frame order by id",
    );
    assert_eq!(
        got,
        table(&[["main", "0"], ["foo", "NULL"], ["bar", "NULL"]])
    );
    assert_eq!(stat(&conn, "stackprofile_invalid_frame_id"), "1");
    assert_eq!(stat(&conn, "stackprofile_invalid_mapping_id"), "2");
}

#[test]
fn heapprofd_dump_stats_are_set_per_pid_as_the_reference_writes_them() {
    // tools/gen_profile_symbols_heapprofd.py
    let (conn, _db) = import("heapprofd_stats.pftrace");
    let got = rows(
        &conn,
        "select name, idx, value from stats where name like 'heapprofd%' and idx is not null
         order by name, idx",
    );
    assert_eq!(
        got,
        table(&[
            // The error code itself, not a count.
            ["heapprofd_client_error", "2", "2"],
            ["heapprofd_client_spinlock_blocked", "2", "3"],
            ["heapprofd_client_spinlock_blocked", "3", "0"],
            // The dump's time in trace time.
            ["heapprofd_last_profile_timestamp", "2", "10"],
            ["heapprofd_last_profile_timestamp", "3", "20"],
            // sampling_interval_bytes - orig_sampling_interval_bytes.
            ["heapprofd_sampling_interval_adjusted", "2", "4096"],
            ["heapprofd_unwind_samples", "2", "7"],
            ["heapprofd_unwind_samples", "3", "0"],
            ["heapprofd_unwind_time_us", "2", "55"],
            ["heapprofd_unwind_time_us", "3", "0"],
        ])
    );
    assert_eq!(stat(&conn, "heapprofd_missing_packet"), "1");
    // One mapping under /data/local/tmp without a build id (two frames on it).
    assert_eq!(stat(&conn, "symbolization_tmp_build_id_not_found"), "1");
}

#[test]
fn deobfuscation_maps_rename_their_packages_frames_and_jit_frames_only() {
    // tools/gen_profile_symbols_heapprofd.py
    let (conn, _db) = import("deobfuscate_frames.pftrace");
    let got = rows(
        &conn,
        "select m.name, f.deobfuscated_name from stack_profile_frame f
         join stack_profile_mapping m on f.mapping = m.id order by f.rel_pc",
    );
    assert_eq!(
        got,
        table(&[
            ["/data/app/com.example.app-xyz==/base.apk", "Bar.fn"],
            // Code of no package is no map's (the reference indexes only package and JIT
            // frames for deobfuscation).
            ["/system/framework/framework.jar", "NULL"],
            // JIT code takes every map's name: the last map wins.
            ["/memfd:jit-cache", "Sys.ui"],
            // A system app named from the reference's fixed list.
            [
                "/system_ext/priv-app/SystemUIGoogle/SystemUIGoogle.apk",
                "Sys.ui",
            ],
            ["/data/app/com.other-1/base.apk", "NULL"],
        ])
    );
}

#[test]
fn heapprofd_heaps_of_one_process_count_their_changes_apart() {
    // tools/gen_profile_symbols_heapprofd.py: libc.malloc and com.android.art share a
    // callstack; the second dump only grows libc.malloc.
    let (conn, _db) = import("heapprofd_two_heaps.pftrace");
    let got = rows(
        &conn,
        "select ts, heap_name, count, size from heap_profile_allocation order by id",
    );
    assert_eq!(
        got,
        table(&[
            ["10", "libc.malloc", "2", "100"],
            ["10", "com.android.art", "4", "64"],
            ["20", "libc.malloc", "1", "50"],
        ])
    );
    assert_eq!(stat(&conn, "heapprofd_malformed_packet"), "0");
}
