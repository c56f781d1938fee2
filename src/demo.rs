//! The demo archive a bare `sextant` opens, built into the binary: a phone and a watch trace
//! with clock snapshots (the watch placed by REALTIME rendezvous), a clockless JSON app log
//! pinned to the phone by the manifest with an offset, and a few watch events that are
//! dropped on purpose. `cargo run --example make_demo` regenerates it.

/// `assets/demo.zip`.
pub const DEMO_ZIP: &[u8] = include_bytes!("../assets/demo.zip");

/// The name the demo is shown under.
pub const NAME: &str = "demo.zip";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_shows_every_pane_something() {
        let files = crate::source::open_bytes(NAME, DEMO_ZIP.to_vec()).expect("demo opens");
        let db = crate::database::temp_path();
        let never = std::sync::atomic::AtomicBool::new(false);
        let session = crate::import::Session::import(NAME, files, &db, &mut |_| {}, &never)
            .expect("demo imports");
        let conn = crate::db::open_read_only(&db).expect("demo database opens");
        let one = |sql: &str| -> i64 {
            conn.query_row(sql, [], |r| r.get(0))
                .unwrap_or_else(|e| panic!("{sql}: {e}"))
        };
        let machines: Vec<String> = conn
            .prepare("SELECT name FROM machine ORDER BY id")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .expect("machine names");
        assert_eq!(machines, ["phone", "watch"]);
        assert!(
            one("SELECT count(*) FROM slice WHERE depth > 0") > 0,
            "nested slices"
        );
        assert!(one("SELECT count(*) FROM counter") > 0, "counters");
        assert!(one("SELECT count(*) FROM sched") > 0, "sched");
        assert_eq!(one("SELECT count(*) FROM flow"), 1, "one flow");
        // The app log is pinned 10.3 s after the phone's BOOTTIME zero.
        assert_eq!(
            one("SELECT min(ts) FROM slice WHERE name = 'upload photo'"),
            10_350_000_000
        );
        assert!(
            one("SELECT count(*) FROM __sextant_clock_edge WHERE source = 'realtime_rendezvous'")
                == 1
        );
        assert!(
            one("SELECT sum(value) FROM stats WHERE name IN ('clock_sync_failure_unknown_source_clock', 'trace_sorter_negative_timestamp_dropped')")
                > 0,
            "some events are dropped"
        );
        assert!(session.candidates().len() >= 4, "trace_time has choices");
        drop(conn);
        let _ = std::fs::remove_file(&db);
    }
}
