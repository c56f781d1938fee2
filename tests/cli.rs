//! The `sextant` binary: `query` output in trace_processor_shell's CSV format, `-q` files,
//! errors, `import -o`, and the spec's sample queries on c_sched.pftrace.

mod common;

use common::TempFile;

fn text_file(tag: &str, text: &str) -> TempFile {
    TempFile::with_bytes(tag, text.as_bytes())
}

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn sextant<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_sextant"))
        .args(args)
        .output()
        .expect("running sextant")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `sextant query TRACE SQL`, expects success, returns stdout.
fn query(trace: &Path, sql: &str) -> String {
    let out = sextant([
        "query".as_ref(),
        trace.as_os_str(),
        std::ffi::OsStr::new(sql),
    ]);
    assert!(
        out.status.success(),
        "sextant query {} {sql:?} failed: {}",
        trace.display(),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Runs a failing command and returns stderr.
fn failing<I, S>(args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = sextant(args);
    assert!(
        !out.status.success(),
        "expected a failure, got success with stdout: {}",
        text(&out.stdout)
    );
    text(&out.stderr)
}

/// The data rows of a single-result-set CSV output (header checked, then dropped).
fn rows(csv: &str, header: &str) -> Vec<String> {
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some(header), "{csv}");
    lines.map(str::to_string).collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

// ---------------------------------------------------------------------------------------
// query: output format, scripts, errors
// ---------------------------------------------------------------------------------------

#[test]
fn query_prints_trace_processor_csv() {
    let out = query(
        &data("a_track_events.pftrace"),
        "select 1 as i, 'two' as s, null as n, 1.5 as d, -3 as neg, 0.1 + 0.2 as r;
         select name, ts, dur from slice where depth = 2",
    );
    assert_eq!(
        out,
        "\"i\",\"s\",\"n\",\"d\",\"neg\",\"r\"\n\
         1,\"two\",\"[NULL]\",1.500000,-3,0.300000\n\
         \n\
         \"name\",\"ts\",\"dur\"\n\
         \"vsync\",1150000000,0\n"
    );
}

#[test]
fn query_empty_result_prints_only_the_header() {
    let out = query(
        &data("a_track_events.pftrace"),
        "select name from slice where name = 'nope'",
    );
    assert_eq!(out, "\"name\"\n");
}

#[test]
fn query_file_with_two_statements() {
    let sql = text_file(
        "two.sql",
        "-- slices per thread\n\
         select count(*) as n from slice;\n\
         /* and the names */\n\
         select name from slice where depth = 0 order by ts;\n",
    );
    let out = sextant([
        "query".as_ref(),
        data("a_track_events.pftrace").as_os_str(),
        "-q".as_ref(),
        sql.0.as_os_str(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "\"n\"\n8\n\n\"name\"\n\"frame\"\n\"onTap\"\n\"job_a\"\n\"recovered_marker\"\n\"job_b\"\n"
    );
}

#[test]
fn query_error_exits_non_zero_with_message_on_stderr() {
    let err = failing([
        "query".as_ref(),
        data("a_track_events.pftrace").as_os_str(),
        "select * from no_such_table".as_ref(),
    ]);
    assert!(err.contains("no such table: no_such_table"), "{err}");
}

#[test]
fn empty_sql_file_is_an_error() {
    let sql = text_file("empty.sql", "  \n-- only a comment\n");
    let err = failing([
        "query".as_ref(),
        data("a_track_events.pftrace").as_os_str(),
        "-q".as_ref(),
        sql.0.as_os_str(),
    ]);
    assert!(err.contains("No valid SQL to run"), "{err}");
}

#[test]
fn missing_query_file_is_an_error_naming_it() {
    let sql = TempFile::new("missing.sql");
    let err = failing([
        "query".as_ref(),
        data("a_track_events.pftrace").as_os_str(),
        "-q".as_ref(),
        sql.0.as_os_str(),
    ]);
    assert!(err.contains(&sql.0.display().to_string()), "{err}");
}

#[test]
fn include_perfetto_module_is_accepted() {
    let out = query(
        &data("a_track_events.pftrace"),
        "INCLUDE PERFETTO MODULE slices.with_context;\nselect count(*) as n from slice",
    );
    assert_eq!(out, "\"n\"\n8\n");
}

#[test]
fn unknown_module_is_a_clear_error() {
    let err = failing([
        "query".as_ref(),
        data("a_track_events.pftrace").as_os_str(),
        "INCLUDE PERFETTO MODULE android.no_such_thing; select 1".as_ref(),
    ]);
    assert!(err.contains("android.no_such_thing"), "{err}");
    assert!(err.to_lowercase().contains("module"), "{err}");
}

#[test]
fn a_module_under_a_known_one_is_an_error_not_a_no_op() {
    let err = failing([
        "query".as_ref(),
        data("a_track_events.pftrace").as_os_str(),
        "INCLUDE PERFETTO MODULE slices.flat_slices; select 1".as_ref(),
    ]);
    assert!(err.contains("unknown module 'slices.flat_slices'"), "{err}");
}

#[test]
fn extract_arg_reads_debug_annotations() {
    let out = query(
        &data("a_track_events.pftrace"),
        "select name, extract_arg(arg_set_id, 'debug.frame_id') as frame_id,
                extract_arg(arg_set_id, 'debug.button') as button,
                extract_arg(arg_set_id, 'debug.ratio') as ratio
         from slice where name in ('frame', 'onTap', 'draw') order by ts",
    );
    assert_eq!(
        out,
        "\"name\",\"frame_id\",\"button\",\"ratio\"\n\
         \"frame\",42,\"[NULL]\",\"[NULL]\"\n\
         \"draw\",\"[NULL]\",\"[NULL]\",\"[NULL]\"\n\
         \"onTap\",\"[NULL]\",\"ok\",0.500000\n"
    );
}

/// Runs the binary with `args` and the environment `env`, expects success, returns stdout.
fn run_ok(args: &[&std::ffi::OsStr], env: &[(&str, &str)]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sextant"))
        .args(args)
        .env_remove("SEXTANT_ANALYZE_PROTO_CONTENT")
        .env_remove("SEXTANT_CROP_TRACK_EVENTS")
        .envs(env.iter().copied())
        .output()
        .expect("running sextant");
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// `sql` answered by `sextant import` (the explorer's import) and `sextant query` on it.
fn imported(trace: &Path, sql: &str, flags: &[&str]) -> String {
    let db = TempFile::new("flags.sqlite");
    let mut args: Vec<&std::ffi::OsStr> = flags.iter().map(|f| f.as_ref()).collect();
    args.extend([
        "import".as_ref(),
        trace.as_os_str(),
        "-o".as_ref(),
        db.0.as_os_str(),
    ]);
    run_ok(&args, &[]);
    run_ok(&["query".as_ref(), db.0.as_os_str(), sql.as_ref()], &[])
}

#[test]
fn proto_content_annotations_are_args_by_default_only_in_a_one_shot_query() {
    let trace = data("track_event/track_event_merged_debug_annotations_args.pftrace");
    let sql = "select count(*) as n from args where key in ('event.category', 'event.name');
               select count(*) as n from __sextant_proto_content where arg_set_id is not null";
    let on = "\"n\"\n4\n\n\"n\"\n2\n";
    let off = "\"n\"\n0\n\n\"n\"\n0\n";
    let q = |flags: &[&str], env: &[(&str, &str)]| {
        let mut args: Vec<&std::ffi::OsStr> = flags.iter().map(|f| f.as_ref()).collect();
        args.extend(["query".as_ref(), trace.as_os_str(), sql.as_ref()]);
        run_ok(&args, env)
    };
    // `sextant query TRACE` as Perfetto's diff tests run trace_processor_shell: each
    // TrackEvent row gets `event.category` and `event.name`.
    assert_eq!(q(&[], &[]), on);
    assert_eq!(q(&["--analyze-trace-proto-content"], &[]), on);
    // Turned off by the flag or the environment.
    assert_eq!(q(&["--analyze-trace-proto-content=false"], &[]), off);
    assert_eq!(q(&[], &[("SEXTANT_ANALYZE_PROTO_CONTENT", "0")]), off);
    // `sextant import` (and the explorer) as the plain shell: off unless asked for.
    assert_eq!(imported(&trace, sql, &[]), off);
    assert_eq!(
        imported(&trace, sql, &["--analyze-trace-proto-content"]),
        on
    );
}

/// A TrackEventRangeOfInterest packet names where the interesting part of a trace starts:
/// its start is metadata, and when cropping (`sextant query`'s default, as Perfetto's diff
/// tests run the shell; `--crop-track-events` elsewhere) the file's later TrackEvents before
/// it are dropped and counted.
#[test]
fn track_events_before_the_range_of_interest_are_cropped_when_asked() {
    use prost::Message;
    use sextant::protos::{
        trace_packet::{Data, OptionalTrustedPacketSequenceId},
        track_descriptor::StaticOrDynamicName,
        track_event::{NameField, Type},
        Trace, TracePacket, TrackDescriptor, TrackEvent,
    };
    let seq = Some(OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(1));
    let instant = |ts: u64, name: &str| TracePacket {
        timestamp: Some(ts),
        optional_trusted_packet_sequence_id: seq,
        data: Some(Data::TrackEvent(TrackEvent {
            track_uuid: Some(1),
            r#type: Some(Type::Instant as i32),
            name_field: Some(NameField::Name(name.into())),
            ..Default::default()
        })),
        ..Default::default()
    };
    let range = |start_us: Option<u8>| TracePacket {
        timestamp: Some(0),
        optional_trusted_packet_sequence_id: seq,
        // TrackEventRangeOfInterest { start_us = 1 }, or an empty one.
        data: Some(Data::TrackEventRangeOfInterest(match start_us {
            Some(us) => vec![0x08, us],
            None => vec![],
        })),
        ..Default::default()
    };
    let packets = vec![
        TracePacket {
            timestamp: Some(0),
            optional_trusted_packet_sequence_id: seq,
            data: Some(Data::TrackDescriptor(TrackDescriptor {
                uuid: Some(1),
                static_or_dynamic_name: Some(StaticOrDynamicName::Name("t".into())),
                ..Default::default()
            })),
            ..Default::default()
        },
        // Before the range packet: kept, the range is not known yet.
        instant(1_000, "early"),
        range(None),
        range(Some(20)),
        instant(10_000, "before"),
        instant(20_000, "at"),
        instant(30_000, "after"),
    ];
    let trace = TempFile::with_bytes("range.pftrace", &Trace { packet: packets }.encode_to_vec());
    let sql = "select group_concat(name, ' ') as names from (select name from slice order by ts);
               select name, value from stats
                 where name glob 'track_event_*range_of_interest*' and value > 0 order by name;
               select int_value from metadata where name = 'range_of_interest_start_us'";
    let stats = "\"name\",\"value\"\n\
                 \"track_event_dropped_packets_outside_of_range_of_interest\",1\n\
                 \"track_event_range_of_interest_missing_start_us\",1\n";
    let cropped = format!("\"names\"\n\"early at after\"\n\n{stats}\n\"int_value\"\n20\n");
    let q = |flags: &[&str]| {
        let mut args: Vec<&std::ffi::OsStr> = flags.iter().map(|f| f.as_ref()).collect();
        args.extend(["query".as_ref(), trace.0.as_os_str(), sql.as_ref()]);
        run_ok(&args, &[])
    };
    assert_eq!(q(&[]), cropped);
    assert_eq!(imported(&trace.0, sql, &["--crop-track-events"]), cropped);
    // Not cropping: every event stays, the range is still metadata.
    let kept = "\"names\"\n\"early before at after\"\n\n\"name\",\"value\"\n\
                \"track_event_range_of_interest_missing_start_us\",1\n\n\"int_value\"\n20\n";
    assert_eq!(q(&["--crop-track-events=false"]), kept);
    assert_eq!(imported(&trace.0, sql, &[]), kept);
}

#[test]
fn query_on_a_missing_trace_names_the_path() {
    let missing = TempFile::new("missing.pftrace");
    let err = failing(["query".as_ref(), missing.0.as_os_str(), "select 1".as_ref()]);
    assert!(err.contains(&missing.0.display().to_string()), "{err}");
}

#[test]
fn bare_trace_argument_prints_a_summary() {
    let out = sextant([data("a_track_events.pftrace")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("a_track_events.pftrace"), "{stdout}");
}

// ---------------------------------------------------------------------------------------
// import -o
// ---------------------------------------------------------------------------------------

#[test]
fn import_writes_a_database_that_sqlite_and_sextant_open() {
    let db = TempFile::new("out.sqlite");
    let out = sextant([
        "import".as_ref(),
        data("a_track_events.pftrace").as_os_str(),
        "-o".as_ref(),
        db.0.as_os_str(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let conn = rusqlite::Connection::open(&db.0).expect("opening the written database");
    let n: i64 = conn
        .query_row("select count(*) from slice", [], |r| r.get(0))
        .expect("counting slices");
    assert_eq!(n, 8);
    drop(conn);

    let direct = query(&db.0, "select count(*) from slice");
    assert_eq!(direct, format!("\"count(*)\"\n{n}\n"));
    // Same answer as querying the trace itself.
    assert_eq!(
        query(
            &data("a_track_events.pftrace"),
            "select count(*) from slice"
        ),
        direct
    );
    // Opening the database must not modify or delete it.
    assert!(db.0.exists());
}

#[test]
fn import_of_a_missing_file_fails_naming_the_path() {
    let missing = TempFile::new("does-not-exist.pftrace");
    let db = TempFile::new("never.sqlite");
    let err = failing([
        "import".as_ref(),
        missing.0.as_os_str(),
        "-o".as_ref(),
        db.0.as_os_str(),
    ]);
    assert!(err.contains(&missing.0.display().to_string()), "{err}");
    assert!(err.to_lowercase().contains("no such file"), "{err}");
}

#[test]
fn missing_file_error_states_the_cause_once() {
    let missing = TempFile::new("does-not-exist-2.pftrace");
    let err = failing(["query".as_ref(), missing.0.as_os_str(), "select 1".as_ref()]);
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}

// ---------------------------------------------------------------------------------------
// The spec's sample queries on c_sched.pftrace
// ---------------------------------------------------------------------------------------
//
// sched facts (c_sched.expect.md), ns:
//   cpu 0: GameThread 10M, sf-render 15M, swapper 15M, GameThread 10M, AudioThread 10M,
//          swapper open (dur -1)
//   cpu 1: AudioThread 25M, sf-render 15M, swapper 10M, GameThread open (dur -1)
// The open slices' dur of -1 is summed along: cpu 0 = 60M - 1, cpu 1 = 50M - 1; swapper
// 25M - 1; GameThread 20M - 1; AudioThread 35M; sf-render 30M. With %f these print
// rounded to 6 decimals.

const SCHED: &str = "c_sched.pftrace";

#[test]
fn sample_trace_duration() {
    let out = query(
        &data(SCHED),
        "select ((select max(ts) from sched) - (select min(ts) from sched)) / 1e9 as duration_sec",
    );
    // max ts 1_060_000_000 (cpu 0's last switch), min ts 1_000_000_000.
    assert_eq!(out, "\"duration_sec\"\n0.060000\n");
}

#[test]
fn sample_total_cpu_usage() {
    let out = query(
        &data(SCHED),
        "select cpu, sum(dur)/1e9 as cpu_time_sec from sched group by cpu order by cpu",
    );
    assert_eq!(out, "\"cpu\",\"cpu_time_sec\"\n0,0.060000\n1,0.050000\n");
    // Exactly: the open slice of each cpu adds its dur of -1.
    let exact = query(
        &data(SCHED),
        "select cpu, sum(dur) as ns, sum(iif(dur >= 0, dur, 0)) as closed_ns
         from sched group by cpu order by cpu",
    );
    assert_eq!(
        exact,
        "\"cpu\",\"ns\",\"closed_ns\"\n0,59999999,60000000\n1,49999999,50000000\n"
    );
}

#[test]
fn sample_list_processes() {
    let out = query(
        &data(SCHED),
        "select process.name, pid from process limit 100",
    );
    let got = rows(&out, "\"name\",\"pid\"");
    for expected in [
        "\"/system/bin/init\",1",
        "\"com.example.game\",100",
        "\"/system/bin/surfaceflinger\",200",
    ] {
        assert!(
            got.iter().any(|r| r == expected),
            "{expected} missing: {out}"
        );
    }
    // Any other row is a placeholder (pid 0, the idle process).
    for r in &got {
        assert!(
            r.ends_with(",1") || r.ends_with(",100") || r.ends_with(",200") || r.ends_with(",0"),
            "unexpected process {r}"
        );
    }
}

#[test]
fn sample_list_processes_and_threads() {
    let out = query(
        &data(SCHED),
        "select process.name as proc_name, pid, thread.name as thread_name, tid from thread left join process using(upid) limit 100",
    );
    let got = rows(&out, "\"proc_name\",\"pid\",\"thread_name\",\"tid\"");
    for expected in [
        "\"com.example.game\",100,\"GameThread\",101",
        "\"com.example.game\",100,\"AudioThread\",102",
        "\"com.example.game\",100,\"AssetLoader\",103",
        "\"/system/bin/surfaceflinger\",200,\"sf-render\",201",
    ] {
        assert!(
            got.iter().any(|r| r == expected),
            "{expected} missing: {out}"
        );
    }
    let swapper = got
        .iter()
        .find(|r| r.ends_with(",0") && r.contains("\"swapper\""));
    assert!(swapper.is_some(), "no swapper (tid 0) thread: {out}");
}

#[test]
fn sample_cpu_time_top_threads() {
    // `order by dur` on a grouped query orders by an arbitrary row's dur, so the row order
    // is not defined; compare as sets.
    let out = query(
        &data(SCHED),
        "select thread.name as thread_name, tid, cpu_sec from (select utid, sum(dur)/1e9 as cpu_sec from sched group by utid order by dur desc limit 100) inner join thread using(utid)",
    );
    assert_eq!(
        sorted(rows(&out, "\"thread_name\",\"tid\",\"cpu_sec\"")),
        strings(&[
            "\"AudioThread\",102,0.035000",
            "\"GameThread\",101,0.020000",
            "\"sf-render\",201,0.030000",
            "\"swapper\",0,0.025000",
        ])
    );
}

#[test]
fn sample_cpu_time_top_threads_with_process_names() {
    let out = query(
        &data(SCHED),
        "select thread.name as thread_name, process.name as proc_name, tid, pid, cpu_sec from (select utid, sum(dur)/1e9 as cpu_sec from sched group by utid order by dur desc limit 100) left outer join thread using(utid) left outer join process using(upid)",
    );
    assert_eq!(
        sorted(rows(
            &out,
            "\"thread_name\",\"proc_name\",\"tid\",\"pid\",\"cpu_sec\""
        )),
        strings(&[
            "\"AudioThread\",\"com.example.game\",102,100,0.035000",
            "\"GameThread\",\"com.example.game\",101,100,0.020000",
            "\"sf-render\",\"/system/bin/surfaceflinger\",201,200,0.030000",
            "\"swapper\",\"[NULL]\",0,0,0.025000",
        ])
    );
}

#[test]
fn sample_cpu_time_top_processes() {
    let out = query(
        &data(SCHED),
        "select process.name, tot_proc/1e9 as cpu_sec from (select upid, sum(tot_thd) as
tot_proc from (select utid, sum(dur) as tot_thd from sched group by utid) join
thread using(utid) group by upid) join process using(upid) order by cpu_sec desc
limit 100;",
    );
    // com.example.game = GameThread (20M - 1) + AudioThread 35M; the idle process (pid 0,
    // no name) = swapper 25M - 1.
    assert_eq!(
        out,
        "\"name\",\"cpu_sec\"\n\
         \"com.example.game\",0.055000\n\
         \"/system/bin/surfaceflinger\",0.030000\n\
         \"[NULL]\",0.025000\n"
    );
}

#[test]
fn sample_cpu_time_top_processes_by_cpu() {
    // The inner query groups by utid only, so `cpu` is the cpu of an arbitrary row of each
    // thread (every thread that ran did so on both cpus); check names, times and that the
    // cpu is a real one.
    let out = query(
        &data(SCHED),
        "select proc_name, cpu, cpu_sec from (select process.name as proc_name, upid, cpu, cpu_sec from (select cpu, utid, sum(dur)/1e9 as cpu_sec from sched group by utid) left join thread using(utid) left join process using(upid)) group by upid, cpu order by cpu_sec desc limit 100",
    );
    let got = rows(&out, "\"proc_name\",\"cpu\",\"cpu_sec\"");
    assert_eq!(got.len(), 4, "{out}");
    let mut without_cpu: Vec<String> = got
        .iter()
        .map(|r| {
            let f: Vec<&str> = r.split(',').collect();
            assert!(f[1] == "0" || f[1] == "1", "bad cpu in {r}");
            format!("{},{}", f[0], f[2])
        })
        .collect();
    without_cpu.sort();
    let mut expected = strings(&[
        "\"com.example.game\",0.035000",
        "\"com.example.game\",0.020000",
        "\"/system/bin/surfaceflinger\",0.030000",
        "\"[NULL]\",0.025000",
    ]);
    expected.sort();
    assert_eq!(without_cpu, expected);
    // Ordered by cpu_sec descending.
    let secs: Vec<&str> = got.iter().map(|r| r.rsplit(',').next().unwrap()).collect();
    assert_eq!(secs, ["0.035000", "0.030000", "0.025000", "0.020000"]);
    // The game's two rows are on different cpus, or the outer group by would have merged
    // them.
    let game_cpus: Vec<&str> = got
        .iter()
        .filter(|r| r.starts_with("\"com.example.game\""))
        .map(|r| r.split(',').nth(1).unwrap())
        .collect();
    assert_ne!(game_cpus[0], game_cpus[1], "{out}");
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).expect("gzip");
    e.finish().expect("gzip")
}

/// A JSON trace that decompresses to 1 GiB of blanks after its opening: 1,000 gzip members
/// of 1 MiB each, about a megabyte on disk.
fn gzip_bomb() -> TempFile {
    let mut bomb = gzip(br#"{"traceEvents":["#);
    let blanks = gzip(&vec![b' '; 1 << 20]);
    for _ in 0..1000 {
        bomb.extend_from_slice(&blanks);
    }
    TempFile::with_bytes("bomb.json.gz", &bomb)
}

/// Runs sextant with `args` and `env`, killed after a minute if it has not ended (a
/// watchdog, not a timing); returns its exit status, stderr and peak memory in KiB.
// The child is reaped by wait4(2), which std's `wait` cannot replace: it alone gives the
// child's peak memory.
#[allow(clippy::zombie_processes)]
fn run_measured(args: &[&std::ffi::OsStr], env: &[(&str, &str)]) -> (bool, String, i64) {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_sextant"))
        .args(args)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawning sextant");
    let pid = child.id() as libc::pid_t;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watched = done.clone();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(60));
        if !watched.load(std::sync::atomic::Ordering::SeqCst) {
            // SAFETY: kill(2) on our child, which has not been reaped yet.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        e.read_to_string(&mut stderr).expect("stderr");
    }
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-parameter for wait4(2).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, with valid pointers.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(waited, pid, "wait4");
    let killed = libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL;
    assert!(!killed, "sextant did not end within a minute: {stderr}");
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    (ok, stderr, usage.ru_maxrss)
}

#[test]
fn a_gzip_that_inflates_past_the_limit_is_an_error_naming_the_file_and_the_limit() {
    let bomb = gzip_bomb();
    for (args, env) in [
        (vec!["--max-decompressed", "1M"], vec![]),
        (vec![], vec![("SEXTANT_MAX_DECOMPRESSED", "1M")]),
    ] {
        let mut all: Vec<&std::ffi::OsStr> = vec![
            "query".as_ref(),
            bomb.path().as_os_str(),
            "select 1".as_ref(),
        ];
        all.extend(args.iter().map(std::ffi::OsStr::new));
        let (ok, stderr, peak_kib) = run_measured(&all, &env);
        assert!(!ok, "the import of a bomb succeeded");
        assert!(stderr.contains(&bomb.name()), "{stderr}");
        assert!(stderr.contains("1 MiB"), "{stderr}");
        assert!(stderr.contains("--max-decompressed"), "{stderr}");
        // 1000 times the limit never reaches memory.
        assert!(peak_kib < 200 * 1024, "peak memory {peak_kib} KiB");
    }
}

#[test]
fn a_bad_limit_is_an_error() {
    let err = failing(["query", "x.json", "select 1", "--max-decompressed", "lots"]);
    assert!(err.contains("lots") && err.contains("size"), "{err}");
}

/// Perfetto's slice and flow operator table functions: `ancestor_slice`, `descendant_slice`,
/// `directly_connected_flow`, `following_flow` (down through descendants) and
/// `preceding_flow` (up through ancestors), rows in id order; an unknown id gives none.
#[test]
fn slice_and_flow_operators_walk_the_tree_and_the_flows() {
    let trace = text_file(
        "operators.json",
        r#"{"traceEvents":[
{"ph":"X","pid":1,"tid":1,"ts":0,"dur":100,"name":"A"},
{"ph":"X","pid":1,"tid":1,"ts":10,"dur":50,"name":"A1"},
{"ph":"X","pid":1,"tid":1,"ts":20,"dur":10,"name":"A11","bind_id":"0x1","flow_out":true},
{"ph":"X","pid":1,"tid":1,"ts":70,"dur":10,"name":"A2"},
{"ph":"X","pid":1,"tid":2,"ts":200,"dur":100,"name":"B","bind_id":"0x1","flow_in":true},
{"ph":"X","pid":1,"tid":2,"ts":210,"dur":10,"name":"B1","bind_id":"0x2","flow_out":true},
{"ph":"X","pid":1,"tid":3,"ts":400,"dur":10,"name":"C","bind_id":"0x2","flow_in":true}
]}"#,
    );
    let names = |sql: &str| {
        let out = query(
            &trace.0,
            &format!(
                "select group_concat(name, ' ') as names from
                   (select s.name from {sql} f join slice s on s.id = f.id order by f.id)"
            ),
        );
        out.lines().nth(1).unwrap_or_default().to_string()
    };
    let id = |name: &str| format!("(select id from slice where name = '{name}')");
    assert_eq!(names(&format!("ancestor_slice({})", id("A11"))), "\"A A1\"");
    assert_eq!(
        names(&format!("descendant_slice({})", id("A"))),
        "\"A1 A11 A2\""
    );
    assert_eq!(names("ancestor_slice(12345)"), "\"[NULL]\"");
    let flows = |f: &str, name: &str| {
        let out = query(
            &trace.0,
            &format!(
                "select group_concat(o.name || '>' || i.name, ' ') as chain from
                   (select * from {f}({}) order by id) f
                 join slice o on o.id = f.slice_out join slice i on i.id = f.slice_in",
                id(name)
            ),
        );
        out.lines().nth(1).unwrap_or_default().to_string()
    };
    // From A: A11 (a descendant) flows to B, whose child B1 flows to C.
    assert_eq!(flows("following_flow", "A"), "\"A11>B B1>C\"");
    // Into C: from B1, whose parent B is reached from A11.
    assert_eq!(flows("preceding_flow", "C"), "\"A11>B B1>C\"");
    // Only the chain through B itself: nothing through its child B1.
    assert_eq!(flows("directly_connected_flow", "B"), "\"A11>B\"");
    assert_eq!(flows("directly_connected_flow", "A"), "\"[NULL]\"");
}

/// The math functions, REGEXP and Perfetto's str_split, which the bundled SQLite lacks.
#[test]
fn math_regexp_and_str_split_work_in_queries() {
    let trace = data("a_track_events.pftrace");
    assert_eq!(
        query(
            &trace,
            "select sqrt(16) a, pow(2, 10) b, log(2, 8) c, floor(2.5) d, ceil(3) e,
                    sqrt(-1) f, str_split('a,b,c', ',', 2) g, str_split('a', ',', 1) h,
                    'frame' regexp '^fr.me$' i, 'draw' regexp 'x' j"
        ),
        "\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\"\n\
         4.000000,1024.000000,3.000000,2.000000,3,\"[NULL]\",\"c\",\"[NULL]\",1,0\n"
    );
    let err = failing([
        "query".as_ref(),
        trace.as_os_str(),
        "select 'a' regexp '('".as_ref(),
    ]);
    assert!(err.contains("regexp"), "{err}");
}

/// The stdlib module `time.conversion`: durations to and from nanoseconds, integer in,
/// integer out (truncated), as its SQL functions compute them.
#[test]
fn time_conversion_module_converts_durations() {
    let trace = data("a_track_events.pftrace");
    assert_eq!(
        query(
            &trace,
            "INCLUDE PERFETTO MODULE time.conversion;
             select time_from_ns(7) a, time_from_us(2) b, time_from_ms(3) c, time_from_s(1) d,
                    time_from_min(1) e, time_from_hours(1) f, time_from_days(1) g,
                    time_to_us(1999) h, time_to_ms(2500000) i, time_to_s(3999999999) j,
                    time_to_min(120000000000) k, time_to_hours(7200000000000) l,
                    time_to_days(86400000000000) m, time_from_ms(1.5) n, time_to_s(null) o"
        ),
        "\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\",\"l\",\"m\",\"n\",\"o\"\n\
         7,2000,3000000,1000000000,60000000000,3600000000000,86400000000000,1,2,3,2,2,1,\
         1500000.000000,\"[NULL]\"\n"
    );
}
