//! The golden archives `i1_merge.zip`, `i2_rendezvous.tar` and `i3_concat.pftrace.gz`.

use super::*;

// ---------------------------------------------------------------------------------------
// Golden archives
// ---------------------------------------------------------------------------------------

#[test]
fn i1_merge() {
    check_i1(&import_golden("i1_merge.zip").conn);
}

/// i1 with its manifest re-serialized without whitespace (members, order and everything
/// else unchanged): separates manifest detection from the rest of the merge.
#[test]
fn i1_merge_compact_manifest() {
    let bytes = compact_manifest_copy("i1_merge.zip", "perfetto_manifest.json");
    check_i1(&expect_ok("i1-compact.zip", &bytes).conn);
}

fn check_i1(c: &Connection) {
    assert_eq!(
        rows(c, SLICES),
        table(&[
            [
                "phone_launch",
                "phone",
                "1234",
                "1235",
                "RenderThread",
                "10100000000",
                "300000000",
                "0",
                "NULL"
            ],
            [
                "app_request",
                "phone",
                "1234",
                "1234",
                "NULL",
                "10150000000",
                "50000000",
                "0",
                "NULL"
            ],
            [
                "app_parse",
                "phone",
                "1234",
                "1234",
                "NULL",
                "10160000000",
                "20000000",
                "1",
                "app_request"
            ],
            [
                "watch_sync",
                "watch",
                "77",
                "78",
                "sync",
                "10200000000",
                "100000000",
                "0",
                "NULL"
            ],
            [
                "watch_notify",
                "watch",
                "77",
                "78",
                "sync",
                "10400000000",
                "50000000",
                "0",
                "NULL"
            ],
        ])
    );
    assert_eq!(rows(c, "select count(*) from slice"), table(&[["5"]]));

    // Exactly the two named machines, synthetic raw ids in order of first appearance, and
    // no raw_id 0 host row.
    assert_eq!(
        rows(c, "select raw_id, name from machine order by raw_id"),
        table(&[["4294967296", "phone"], ["4294967297", "watch"]])
    );
    // One process row for pid 1234 (phone.pftrace and app_log.json share it).
    assert_eq!(
        rows(
            c,
            "select m.name, p.pid, p.name from process p join machine m on m.id = p.machine_id
             where p.pid != 0 order by m.name, p.pid"
        ),
        table(&[
            ["phone", "1234", "com.example.app"],
            ["watch", "77", "watchd"],
        ])
    );
    assert_eq!(
        rows(
            c,
            "select m.name, t.tid, t.name, p.pid from thread t
             join machine m on m.id = t.machine_id
             left join process p on p.upid = t.upid
             where t.tid in (1234, 1235, 78) order by m.name, t.tid"
        ),
        table(&[
            ["phone", "1234", "NULL", "1234"],
            ["phone", "1235", "RenderThread", "1234"],
            ["watch", "78", "sync", "77"],
        ])
    );
    assert_eq!(
        idle_rows(c),
        table(&[["phone", "1", "swapper"], ["watch", "1", "swapper"]])
    );

    assert_eq!(trace_time_clock_id(c), table(&[["6"]]));
    assert_eq!(rows(c, SYNC_FAILURES), Vec::<Vec<String>>::new());

    assert_eq!(
        rows(c, TRACE_FILES),
        table(&[
            ["NULL", "zip", "0", "1"],
            ["perfetto_manifest.json", "perfetto_manifest", "1", "0"],
            ["phone.pftrace", "proto", "2", "0"],
            ["watch.pftrace", "proto", "3", "0"],
            ["app_log.json", "json", "4", "0"],
        ])
    );

    // clock_snapshot: the two files' own snapshots and the two manifest edges, 8 rows.
    // Compared as a set of snapshots, each the sorted (clock_id, clock_name, value) rows of
    // one snapshot_id. (Which machine_id a manifest edge's rows carry is not stated.)
    assert_eq!(
        rows(c, "select count(*) from clock_snapshot"),
        table(&[["8"]])
    );
    let flat = rows(
        c,
        "select snapshot_id, clock_id, clock_name, clock_value from clock_snapshot
         order by snapshot_id, clock_id, clock_value",
    );
    let mut snapshots: Vec<Vec<Vec<String>>> = Vec::new();
    let mut last: Option<String> = None;
    for r in flat {
        if last.as_deref() != Some(r[0].as_str()) {
            snapshots.push(Vec::new());
            last = Some(r[0].clone());
        }
        snapshots.last_mut().unwrap().push(r[1..].to_vec());
    }
    for s in &mut snapshots {
        s.sort();
    }
    snapshots.sort();
    let mut want = vec![
        // phone.pftrace's own snapshot.
        table(&[
            ["3", "MONOTONIC", "9000000000"],
            ["6", "BOOTTIME", "10000000000"],
        ]),
        // watch.pftrace's own snapshot.
        table(&[
            ["3", "MONOTONIC", "49000000000"],
            ["6", "BOOTTIME", "50000000000"],
        ]),
        // RELATE: watch BOOTTIME 40 s <-> phone BOOTTIME 0 (offset -40 s).
        table(&[["6", "BOOTTIME", "0"], ["6", "BOOTTIME", "40000000000"]]),
        // PIN: app_log.json's file clock 0 <-> phone BOOTTIME 10 s (offset +10 s).
        table(&[["11", "NULL", "0"], ["6", "BOOTTIME", "10000000000"]]),
    ];
    for s in &mut want {
        s.sort();
    }
    want.sort();
    assert_eq!(snapshots, want);

    // Sextant's placement report: one row per (file, machine), each placed.
    assert_eq!(
        rows(c, PLACEMENTS),
        table(&[
            ["app_log.json", "phone", "path"],
            ["phone.pftrace", "phone", "trace_time"],
            ["watch.pftrace", "watch", "path"],
        ])
    );
    for (file, machine) in [("watch.pftrace", "watch"), ("app_log.json", "phone")] {
        let path = placement_path(c, file, machine);
        assert!(
            path.contains("manifest"),
            "{file}: the path should go through the manifest edge: {path}"
        );
    }
    assert_eq!(
        rows(
            c,
            "select count(*) > 0 from __sextant_clock_edge where source = 'manifest'"
        ),
        table(&[["1"]]),
        "no manifest edge in __sextant_clock_edge"
    );
    assert_eq!(
        rows(
            c,
            "select count(*) from __sextant_clock_edge where source = 'realtime_rendezvous'"
        ),
        table(&[["0"]]),
        "the watch has no REALTIME: no rendezvous"
    );
    // Queryable (import_path keeps no candidates, so it may be empty).
    rows(
        c,
        "select node_id, label, is_current, dropped_events from __sextant_trace_time_candidate",
    );
}

#[test]
fn i2_rendezvous() {
    check_i2(&import_golden("i2_rendezvous.tar").conn);
}

/// i2 with its manifest re-serialized without whitespace (see i1_merge_compact_manifest).
#[test]
fn i2_rendezvous_compact_manifest() {
    let bytes = compact_manifest_copy("i2_rendezvous.tar", "perfetto_manifest.json");
    check_i2(&expect_ok("i2-compact.tar", &bytes).conn);
}

fn check_i2(c: &Connection) {
    assert_eq!(
        rows(c, SLICES),
        table(&[
            [
                "b_ack",
                "phone-b",
                "300",
                "301",
                "main",
                "1300000000",
                "100000000",
                "0",
                "NULL"
            ],
            [
                "a_tap",
                "phone-a",
                "300",
                "301",
                "main",
                "1500000000",
                "100000000",
                "0",
                "NULL"
            ],
            [
                "b_done",
                "phone-b",
                "300",
                "301",
                "main",
                "1650000000",
                "50000000",
                "0",
                "NULL"
            ],
            [
                "b_wall",
                "phone-b",
                "300",
                "301",
                "main",
                "1800000000",
                "20000000",
                "0",
                "NULL"
            ],
        ])
    );
    assert_eq!(rows(c, "select count(*) from slice"), table(&[["4"]]));

    assert_eq!(
        rows(c, "select raw_id, name from machine order by raw_id"),
        table(&[["4294967296", "phone-a"], ["4294967297", "phone-b"]])
    );
    // Same pid/tid on both phones: two process rows and two thread rows.
    assert_eq!(
        rows(
            c,
            "select m.name, p.pid, p.name from process p join machine m on m.id = p.machine_id
             where p.pid != 0 order by m.name"
        ),
        table(&[
            ["phone-a", "300", "com.example.sender"],
            ["phone-b", "300", "com.example.receiver"],
        ])
    );
    assert_eq!(
        rows(
            c,
            "select m.name, t.tid, t.name, p.pid, p.name from thread t
             join machine m on m.id = t.machine_id
             left join process p on p.upid = t.upid
             where t.tid = 301 order by m.name"
        ),
        table(&[
            ["phone-a", "301", "main", "300", "com.example.sender"],
            ["phone-b", "301", "main", "300", "com.example.receiver"],
        ])
    );
    assert_eq!(
        idle_rows(c),
        table(&[["phone-a", "1", "swapper"], ["phone-b", "1", "swapper"]])
    );
    assert_eq!(trace_time_clock_id(c), table(&[["6"]]));
    assert_eq!(rows(c, SYNC_FAILURES), Vec::<Vec<String>>::new());
    // Processing order by §7's rule: manifest first, then protos by name.
    assert_eq!(
        rows(c, TRACE_FILES),
        table(&[
            ["NULL", "tar", "0", "1"],
            ["perfetto_manifest.json", "perfetto_manifest", "1", "0"],
            ["phone_a.pftrace", "proto", "2", "0"],
            ["phone_b.pftrace", "proto", "3", "0"],
        ])
    );

    // Sextant's placement report: phone-b goes through the REALTIME rendezvous.
    assert_eq!(
        rows(c, PLACEMENTS),
        table(&[
            ["phone_a.pftrace", "phone-a", "trace_time"],
            ["phone_b.pftrace", "phone-b", "path"],
        ])
    );
    let path = placement_path(c, "phone_b.pftrace", "phone-b");
    assert!(
        path.contains("realtime_rendezvous"),
        "phone-b should be placed through the REALTIME rendezvous: {path}"
    );
    assert_eq!(
        rows(
            c,
            "select count(*) > 0 from __sextant_clock_edge
             where source = 'realtime_rendezvous'"
        ),
        table(&[["1"]]),
        "no realtime_rendezvous edge in __sextant_clock_edge"
    );
    assert_eq!(
        rows(
            c,
            "select count(*) from __sextant_clock_edge where source = 'manifest'"
        ),
        table(&[["0"]]),
        "the manifest states no clock relation"
    );
    rows(
        c,
        "select node_id, label, is_current, dropped_events from __sextant_trace_time_candidate",
    );
}

#[test]
fn i3_concat() {
    let i = import_golden("i3_concat.pftrace.gz");
    let c = &i.conn;

    assert_eq!(
        rows(c, SLICES),
        table(&[
            [
                "gz_first",
                "NULL",
                "60",
                "61",
                "gzmain",
                "2100000000",
                "100000000",
                "0",
                "NULL"
            ],
            [
                "gz_second",
                "NULL",
                "60",
                "61",
                "gzmain",
                "2300000000",
                "100000000",
                "0",
                "NULL"
            ],
            [
                "gz_span",
                "NULL",
                "60",
                "61",
                "gzmain",
                "2500000000",
                "400000000",
                "0",
                "NULL"
            ],
            [
                "gz_interned",
                "NULL",
                "60",
                "61",
                "gzmain",
                "2600000000",
                "0",
                "1",
                "gz_span"
            ],
        ])
    );
    assert_eq!(rows(c, "select count(*) from slice"), table(&[["4"]]));
    assert_eq!(
        rows(c, "select pid, name from process where pid = 60"),
        table(&[["60", "gzapp"]])
    );
    // Single machine: the host.
    assert_eq!(
        rows(c, "select raw_id from machine"),
        table(&[["0"]]),
        "i3 is a single-machine (host) trace"
    );
    assert_eq!(trace_time_clock_id(c), table(&[["6"]]));
    assert_eq!(rows(c, SYNC_FAILURES), Vec::<Vec<String>>::new());

    // One gzip container holding one proto child named "" with all members decompressed.
    assert_eq!(
        rows(
            c,
            "select f.name, f.size, f.trace_type, f.is_container,
                    (select count(*) from __intrinsic_trace_file k where k.parent_id = f.id)
             from __intrinsic_trace_file f where f.parent_id is null"
        ),
        table(&[["NULL", "307", "gzip", "1", "1"]])
    );
    assert_eq!(
        rows(
            c,
            "select quote(k.name), k.size, k.trace_type, k.is_container
             from __intrinsic_trace_file k join __intrinsic_trace_file f on f.id = k.parent_id
             where f.parent_id is null"
        ),
        table(&[["''", "262", "proto", "0"]]),
        "the decompressed child of a gzip stream is named \"\" (empty)"
    );
    assert_eq!(
        rows(
            c,
            "select int_value from metadata where name = 'trace_size_bytes'"
        ),
        table(&[["262"]]),
        "trace_size_bytes is the decompressed size"
    );
}
