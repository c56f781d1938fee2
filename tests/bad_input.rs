//! Bad inputs: every broken file either fails with a clear error that names the file and
//! the problem, or (when mostly readable) imports what it can and counts the loss in
//! `stats`. Nothing may panic. Each test asserts the one outcome its input has (as Trace
//! Processor's behaviour notes in `shared/reference/` describe it); only the fuzzing loops
//! over garbage, whose outcome varies with the bytes, accept either.

mod common;

use common::TempFile;

use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use rusqlite::Connection;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// A successful import: the read-only connection plus the files to clean up.
struct Imported {
    conn: Connection,
    _input: TempFile,
    _db: TempFile,
}

impl Imported {
    /// Sum of a stat's values (0 when absent), the reference's in `stats` or Sextant's own
    /// in `sextant_stats`.
    fn stat(&self, name: &str) -> i64 {
        self.conn
            .query_row(
                "select coalesce(sum(value), 0) from (select name, value from stats
                 union all select name, value from sextant_stats) where name = ?1",
                [name],
                |r| r.get(0),
            )
            .expect("stats query")
    }

    /// The severity of a stat's row, if it has one with a value above 0.
    fn stat_severity(&self, name: &str) -> Option<String> {
        self.conn
            .query_row(
                "select severity from (select * from stats union all select * from sextant_stats)
                 where name = ?1 and value > 0 limit 1",
                [name],
                |r| r.get(0),
            )
            .ok()
    }

    fn count(&self, sql: &str) -> i64 {
        self.conn
            .query_row(sql, [], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// A query's single text value ("" for NULL).
    fn text(&self, sql: &str) -> String {
        self.conn
            .query_row(sql, [], |r| r.get::<_, Option<String>>(0))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .unwrap_or_default()
    }

    /// (name, ts, dur) of every slice, by ts then name.
    fn slices(&self) -> Vec<(String, i64, i64)> {
        let mut stmt = self
            .conn
            .prepare("select name, ts, dur from slice order by ts, name")
            .expect("slice query");
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("slice query");
        rows.map(|r| r.expect("slice row")).collect()
    }
}

/// What importing some bytes gave: the database, or the input's path and the error text.
enum Outcome {
    Ok(Imported),
    Err { file: String, message: String },
}

/// Writes `bytes` to a temp file named after `tag` and imports it. A panic anywhere in the
/// import fails the test with the tag, so loops over many inputs say which one broke.
fn import(tag: &str, bytes: &[u8]) -> Outcome {
    let input = TempFile::with_bytes(tag, bytes);
    let db = TempFile::new(&format!("{tag}.sqlite"));
    let result = catch_unwind(AssertUnwindSafe(|| {
        sextant::import::import_path(input.path(), db.path())
    }));
    match result {
        Err(_) => panic!("importing {tag} ({} bytes) panicked", bytes.len()),
        Ok(Err(e)) => Outcome::Err {
            file: input.name(),
            message: e.to_string(),
        },
        Ok(Ok(_)) => {
            let conn = sextant::db::open_read_only(db.path()).unwrap_or_else(|e| {
                panic!("{tag}: import succeeded but the db is unreadable: {e}")
            });
            Outcome::Ok(Imported {
                conn,
                _input: input,
                _db: db,
            })
        }
    }
}

/// Imports `bytes` and expects success.
fn expect_ok(tag: &str, bytes: &[u8]) -> Imported {
    match import(tag, bytes) {
        Outcome::Ok(i) => i,
        Outcome::Err { message, .. } => panic!("{tag}: expected an import, got error: {message}"),
    }
}

/// Imports `bytes` and expects an error naming the input file and containing one of
/// `phrases` (case-insensitive). Returns the message.
fn expect_err(tag: &str, bytes: &[u8], phrases: &[&str]) -> String {
    match import(tag, bytes) {
        Outcome::Ok(_) => panic!("{tag}: expected an error, but the import succeeded"),
        Outcome::Err { file, message } => {
            assert_names_file(tag, &file, &message);
            let lower = message.to_lowercase();
            assert!(
                phrases.iter().any(|p| lower.contains(&p.to_lowercase())),
                "{tag}: error should mention one of {phrases:?}: {message}"
            );
            message
        }
    }
}

fn assert_names_file(tag: &str, file: &str, message: &str) {
    assert!(
        message.contains(file),
        "{tag}: error should name the file {file}: {message}"
    );
}

/// Either outcome is fine, but an error must name the file and not be empty (for inputs of
/// random bytes only).
fn expect_no_panic(tag: &str, bytes: &[u8]) -> Option<Imported> {
    match import(tag, bytes) {
        Outcome::Ok(i) => Some(i),
        Outcome::Err { file, message } => {
            assert_names_file(tag, &file, &message);
            assert!(
                message.len() > file.len() + 4,
                "{tag}: error says nothing beyond the file name: {message}"
            );
            None
        }
    }
}

fn data(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Deterministic pseudo-random bytes (xorshift64*).
fn garbage(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

fn read_varint(b: &[u8], mut pos: usize) -> (u64, usize) {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let c = b[pos];
        pos += 1;
        v |= u64::from(c & 0x7f) << shift;
        shift += 7;
        if c & 0x80 == 0 {
            return (v, pos);
        }
    }
}

/// The top-level packets of a well-formed proto trace: (start, body start, end).
fn packets(b: &[u8]) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < b.len() {
        let (tag, p) = read_varint(b, pos);
        assert_eq!(tag, 0x0a, "golden trace has a non-packet field");
        let (len, p) = read_varint(b, p);
        out.push((pos, p, p + len as usize));
        pos = p + len as usize;
    }
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

const SYSTRACE_HEADER: &str = "# tracer: nop\n#\n#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n#              | |        |      |   ||||       |         |\n";

// ---------------------------------------------------------------------------------------
// Empty, garbage, wrong kind
// ---------------------------------------------------------------------------------------

#[test]
fn empty_file_is_a_clear_error() {
    expect_err("empty.pftrace", b"", &["empty", "unknown trace type"]);
}

#[test]
fn whitespace_only_file_is_an_empty_systrace() {
    // A leading space is a systrace hint (behaviour-parsers.md §2.1, as in Trace Processor):
    // this imports as a systrace with nothing in it, and invents nothing.
    let db = expect_ok("blank.txt", b"   \n\n \t ");
    assert_eq!(
        db.count("select count(*) from trace_file where trace_type = 'systrace'"),
        1
    );
    assert_eq!(db.count("select count(*) from slice"), 0);
    assert_eq!(db.count("select count(*) from sched"), 0);
    assert_eq!(db.count("select count(*) from counter"), 0);
}

#[test]
fn random_garbage_never_panics() {
    // Plain garbage, and garbage behind each format's magic so every parser sees it.
    let prefixes: [(&str, &[u8]); 7] = [
        ("raw", b""),
        (
            "strace",
            b"1000  1700000052.321000 openat(AT_FDCWD) = 3\n1000 ",
        ),
        ("proto", b"\x0a"),
        ("json_obj", b"{\"traceEvents\": [{\"ph\": "),
        ("json_arr", b"[{"),
        ("systrace", SYSTRACE_HEADER.as_bytes()),
        ("gzip", b"\x1f\x8b\x08\x00"),
    ];
    for seed in [1u64, 2, 3] {
        for size in [1usize, 7, 64, 513, 4096, 65536] {
            for (label, prefix) in prefixes {
                let mut bytes = prefix.to_vec();
                bytes.extend(garbage(seed * 1000 + size as u64, size));
                let tag = format!("garbage-{label}-{seed}-{size}");
                expect_no_panic(&tag, &bytes);
            }
        }
    }
}

#[test]
fn garbage_lines_in_systrace_body_are_counted() {
    // Printable garbage split into lines, so the line tokenizer sees many odd shapes. A
    // line that does not tokenize is counted, not fatal (behaviour-parsers.md §2.1).
    for seed in 10u64..16 {
        let mut text = SYSTRACE_HEADER.to_string();
        let mut lines = 0;
        for (i, b) in garbage(seed, 4000).into_iter().enumerate() {
            let c = b" -|()[]:.=>0123456789abcdefBEC"[b as usize % 30] as char;
            text.push(c);
            if i % 61 == 60 {
                text.push('\n');
                lines += 1;
            }
        }
        text.push('\n');
        lines += 1;
        let tag = format!("garbage-lines-{seed}.txt");
        let db = expect_ok(&tag, text.as_bytes());
        assert_eq!(db.stat("systrace_parse_failure"), lines, "{tag}");
        assert_eq!(db.count("select count(*) from slice"), 0, "{tag}");
        assert_eq!(db.count("select count(*) from sched"), 0, "{tag}");
    }
}

#[test]
fn png_is_unknown_trace_type() {
    let mut png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR".to_vec();
    png.extend(garbage(7, 200));
    expect_err("image.png", &png, &["Unknown trace type"]);
}

#[test]
fn plain_text_is_unknown_trace_type() {
    expect_err(
        "README.txt",
        b"Hello! This is a README, not a trace.\nNothing to see here.\n",
        &["Unknown trace type"],
    );
}

#[test]
fn deeply_nested_bare_array_is_an_error_not_a_crash() {
    // A bare array is JSON only when it starts `[{"` (behaviour-parsers.md §1.1); `[[[…` is
    // no trace type at all (behaviour-merging.md: `Unknown trace type provided`).
    let bytes = "[".repeat(100_000);
    expect_err(
        "nested-bare.json",
        bytes.as_bytes(),
        &["Unknown trace type"],
    );
}

// ---------------------------------------------------------------------------------------
// Protobuf
// ---------------------------------------------------------------------------------------

#[test]
fn proto_truncated_at_many_offsets() {
    let full = data("a_track_events.pftrace");
    let pk = packets(&full);
    let boundaries: Vec<usize> = pk.iter().map(|p| p.2).collect();
    let first_end = boundaries[0];
    let full_slices = expect_ok("full.pftrace", &full).slices().len();
    assert_eq!(full_slices, 8);

    let mut cuts: Vec<usize> = (0..full.len()).step_by(2).collect();
    // Around the first packet's end, and cuts inside a header and right after it.
    cuts.extend([1, 2, first_end - 1, first_end, first_end + 1, first_end + 2]);
    cuts.extend(boundaries.iter().map(|b| b - 1));
    cuts.extend(pk.iter().map(|p| p.1));
    cuts.push(full.len() - 1);
    cuts.sort_unstable();
    cuts.dedup();

    for cut in cuts {
        let tag = format!("cut-{cut}.pftrace");
        let bytes = &full[..cut];
        if cut == 0 {
            expect_err(&tag, bytes, &["empty", "unknown trace type"]);
        } else if cut < first_end {
            expect_err(&tag, bytes, &["ends in the middle", "truncated"]);
        } else if boundaries.contains(&cut) {
            // A cut between packets is a shorter, valid trace.
            let db = expect_ok(&tag, bytes);
            assert_eq!(db.stat("proto_truncated"), 0, "{tag}");
            assert!(db.slices().len() <= full_slices, "{tag}");
        } else {
            let db = expect_ok(&tag, bytes);
            assert_eq!(db.stat("proto_truncated"), 1, "{tag}");
            assert_eq!(
                db.stat_severity("proto_truncated").as_deref(),
                Some("data_loss"),
                "{tag}"
            );
            assert!(db.slices().len() <= full_slices, "{tag}");
        }
    }
}

#[test]
fn proto_truncated_keeps_packets_before_the_cut() {
    // Cut in the middle of the last packet: everything before it is still there.
    let full = data("a_track_events.pftrace");
    let last = *packets(&full).last().unwrap();
    let db = expect_ok("cut-last.pftrace", &full[..last.1 + 3]);
    assert_eq!(db.stat("proto_truncated"), 1);
    let names: Vec<String> = db.slices().into_iter().map(|s| s.0).collect();
    for name in ["frame", "draw", "vsync", "onTap", "inputLatency", "job_a"] {
        assert!(names.iter().any(|n| n == name), "{name} missing: {names:?}");
    }
}

#[test]
fn proto_corrupt_packet_body_in_the_middle() {
    let mut bytes = data("a_track_events.pftrace");
    let pk = packets(&bytes);
    // Overwrite the body of a packet in the middle with bytes that cannot decode (an
    // endless varint); the framing stays intact.
    let (_, body, end) = pk[pk.len() / 2];
    bytes[body..end].fill(0xff);
    let db = expect_ok("corrupt-body.pftrace", &bytes);
    assert_eq!(db.stat("proto_packet_decode_failure"), 1);
    assert_eq!(
        db.stat_severity("proto_packet_decode_failure").as_deref(),
        Some("data_loss")
    );
    let n = db.slices().len();
    assert!((1..=8).contains(&n), "{n} slices");
    assert_eq!(db.stat("proto_truncated"), 0);
}

#[test]
fn proto_corrupt_packet_length_in_the_middle() {
    let full = data("a_track_events.pftrace");
    let pk = packets(&full);
    let (start, _, _) = pk[pk.len() / 2];
    // The packet's length says 2^28: it runs past the end of the file.
    let mut bytes = full[..start + 1].to_vec();
    bytes.extend([0x80, 0x80, 0x80, 0x80, 0x01]);
    bytes.extend(&full[pk[pk.len() / 2].1..]);
    let db = expect_ok("corrupt-len.pftrace", &bytes);
    assert!(
        db.stat("proto_truncated") + db.stat("proto_packet_decode_failure") >= 1,
        "the loss is not counted"
    );
    assert!(!db.slices().is_empty());
}

#[test]
fn proto_invalid_wire_type_in_the_middle() {
    let full = data("a_track_events.pftrace");
    let pk = packets(&full);
    let (start, _, _) = pk[pk.len() / 2];
    let mut bytes = full[..start].to_vec();
    bytes.push(0x0f); // field 1, wire type 7 (does not exist)
    bytes.extend(&full[start..]);
    let db = expect_ok("bad-wire.pftrace", &bytes);
    assert!(db.stat("proto_packet_decode_failure") >= 1);
    assert!(!db.slices().is_empty());
}

#[test]
fn proto_unreadable_first_packet_is_an_error() {
    // A packet tag, then a length that runs past the end: nothing is readable.
    expect_err(
        "bad-start.pftrace",
        b"\x0a\xff\xff\xff\xff\x0f",
        &["protobuf", "ends in the middle"],
    );
}

// ---------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------

const X1: &str = r#"{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"first"}"#;
const X2: &str = r#"{"ph":"X","pid":1,"tid":1,"ts":5,"dur":2,"name":"second"}"#;

#[test]
fn json_object_cut_short_keeps_its_events_and_counts_the_cut() {
    let text = format!(r#"{{"traceEvents": [{X1}, {X2}"#);
    let db = expect_ok("trunc.json", text.as_bytes());
    assert_eq!(db.slices().len(), 2);
    assert_eq!(db.stat("json_truncated"), 1);
    let text = format!(r#"{{"traceEvents": [{X1}, {X2}], "metadata": {{"a": "#);
    let db = expect_ok("trunc-meta.json", text.as_bytes());
    assert_eq!(db.slices().len(), 2);
    assert_eq!(db.stat("json_truncated"), 1);
    assert_eq!(
        db.stat_severity("json_truncated").as_deref(),
        Some("data_loss")
    );
}

#[test]
fn json_truncated_at_many_offsets_never_panics() {
    let full = data("g_chrome.json");
    for cut in (1..full.len()).step_by(11) {
        expect_no_panic(&format!("chrome-cut-{cut}.json"), &full[..cut]);
    }
}

#[test]
fn json_bare_array_without_closing_bracket_is_accepted() {
    let db = expect_ok("open-array.json", format!("[{X1},\n{X2},\n").as_bytes());
    let names: Vec<String> = db.slices().into_iter().map(|s| s.0).collect();
    assert_eq!(names, ["first", "second"]);

    // A trailing partial event is dropped.
    let text = format!("[{X1},\n{X2},\n{{\"ph\":\"X\",\"na");
    let db = expect_ok("open-array-partial.json", text.as_bytes());
    assert_eq!(db.slices().len(), 2);
}

#[test]
fn json_invalid_utf8_is_a_clear_error() {
    let mut bytes =
        br#"{"traceEvents": [{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"a"#.to_vec();
    bytes.extend([0xff, 0xfe, 0xc3]);
    bytes.extend(br#""}]}"#);
    expect_err("bad-utf8.json", &bytes, &["UTF-8"]);
}

#[test]
fn json_string_timestamp_drops_the_event_and_counts_it() {
    let bad = r#"{"ph":"X","pid":1,"tid":1,"ts":"abc","dur":2,"name":"bad"}"#;
    let text = format!(r#"{{"traceEvents": [{X1}, {bad}, {X2}]}}"#);
    let db = expect_ok("ts-abc.json", text.as_bytes());
    let names: Vec<String> = db.slices().into_iter().map(|s| s.0).collect();
    assert_eq!(names, ["first", "second"]);
    assert_eq!(
        db.stat("json_tokenizer_failure") + db.stat("json_parser_failure"),
        1
    );
}

#[test]
fn json_string_duration_in_an_object_is_an_error() {
    // A bad `dur` stops tokenizing there (behaviour-parsers.md §1.2): in an object trace the
    // closing `}` is then never reached and the import fails.
    let bad = r#"{"ph":"X","pid":1,"tid":1,"ts":3,"dur":"abc","name":"bad"}"#;
    let text = format!(r#"{{"traceEvents": [{X1}, {bad}, {X2}]}}"#);
    expect_err("dur-abc.json", text.as_bytes(), &["'dur'"]);
}

#[test]
fn json_string_duration_in_a_bare_array_ends_the_trace_there() {
    // In a bare array, which needs no closing bracket, the events before it stay and the
    // rest is lost; the stop is counted.
    let bad = r#"{"ph":"X","pid":1,"tid":1,"ts":3,"dur":"abc","name":"bad"}"#;
    let text = format!("[{X1},\n{bad},\n{X2}]");
    let db = expect_ok("dur-abc-array.json", text.as_bytes());
    let names: Vec<String> = db.slices().into_iter().map(|s| s.0).collect();
    assert_eq!(names, ["first"]);
    assert_eq!(db.stat("json_tokenizer_failure"), 1);
}

#[test]
fn json_trace_events_not_an_array_is_an_error() {
    expect_err(
        "events-5.json",
        br#"{"traceEvents": 5}"#,
        &["traceEvents must be an array"],
    );
}

#[test]
fn json_deeply_nested_arrays_are_an_error_not_a_stack_overflow() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    // In an event's args.
    let ev = format!(
        r#"{{"ph":"X","pid":1,"tid":1,"ts":9,"dur":1,"name":"deep","args":{{"a":{deep}}}}}"#
    );
    let text = format!(r#"{{"traceEvents": [{X1}, {ev}, {X2}]}}"#);
    expect_too_deep("deep-args.json", &text);
    // In an unknown top-level key that is skipped.
    let text = format!(r#"{{"traceEvents": [{X1}], "other": {deep}}}"#);
    expect_too_deep("deep-key.json", &text);
    // In metadata.
    let text = format!(r#"{{"traceEvents": [{X1}], "metadata": {{"m": {deep}}}}}"#);
    expect_too_deep("deep-meta.json", &text);
    // Never closed.
    let open = "[".repeat(100_000);
    let text = format!(r#"{{"traceEvents": [{X1}], "other": {open}"#);
    expect_too_deep("deep-open.json", &text);
    let text = format!("[{X1}, {{\"args\": {open}");
    expect_too_deep("deep-open-array.json", &text);
}

/// Nesting past the parser's depth limit is refused, saying so, wherever it is (bad JSON is
/// fatal in Trace Processor too, behaviour-parsers.md §1.1; its notes give no limit).
fn expect_too_deep(tag: &str, text: &str) {
    expect_err(tag, text.as_bytes(), &["nesting too deep"]);
}

#[test]
fn json_huge_numbers_have_one_outcome_per_field() {
    for (i, num) in [
        "1e400",
        "-1e400",
        "1e300",
        "99999999999999999999999999999999",
        "-99999999999999999999999999999999",
        "18446744073709551615",
        "9223372036854775807",
        "-9223372036854775808",
        &"9".repeat(5000),
    ]
    .iter()
    .enumerate()
    {
        for field in ["ts", "dur", "pid", "tid"] {
            let mut ev = serde_json::json!({
                "ph": "X", "pid": 1, "tid": 1, "ts": 3, "dur": 1, "name": "huge"
            });
            ev[field] = serde_json::Value::Null;
            let ev = ev.to_string().replace("null", num);
            let text = format!(r#"{{"traceEvents": [{X1}, {ev}, {X2}]}}"#);
            let tag = format!("huge-{i}-{field}.json");
            match field {
                // No nanosecond timestamp can hold it: a bad `ts`, the event dropped and
                // counted (behaviour-parsers.md §1.2).
                "ts" => {
                    let db = expect_ok(&tag, text.as_bytes());
                    let names: Vec<String> = db.slices().into_iter().map(|s| s.0).collect();
                    assert_eq!(names, ["first", "second"], "{tag}");
                    assert_eq!(db.stat("json_tokenizer_failure"), 1, "{tag}");
                }
                // A bad `dur` stops the tokenizer: the object trace is incomplete.
                "dur" => {
                    expect_err(&tag, text.as_bytes(), &["'dur'"]);
                }
                // pid/tid outside uint32 become 0; tid 0 with a pid is the pid.
                _ => {
                    let db = expect_ok(&tag, text.as_bytes());
                    let names: Vec<String> = db.slices().into_iter().map(|s| s.0).collect();
                    assert_eq!(names, ["first", "huge", "second"], "{tag}");
                    let (tid, pid): (i64, i64) = db
                        .conn
                        .query_row(
                            "select t.tid, p.pid from slice s
                             join thread_track tt on s.track_id = tt.id
                             join thread t using (utid) join process p using (upid)
                             where s.name = 'huge'",
                            [],
                            |r| Ok((r.get(0)?, r.get(1)?)),
                        )
                        .unwrap_or_else(|e| panic!("{tag}: {e}"));
                    let expected = if field == "pid" { (1, 0) } else { (1, 1) };
                    assert_eq!((tid, pid), expected, "{tag}");
                }
            }
        }
        // As a counter value: a double, however large (beyond f64, infinite).
        let ev = format!(r#"{{"ph":"C","pid":1,"tid":1,"ts":4,"name":"c","args":{{"v":{num}}}}}"#);
        let text = format!(r#"{{"traceEvents": [{X1}, {ev}]}}"#);
        let tag = format!("huge-{i}-counter.json");
        let db = expect_ok(&tag, text.as_bytes());
        let values: Vec<f64> = db
            .conn
            .prepare("select value from counter")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .unwrap_or_else(|e| panic!("{tag}: {e}"));
        let expected: f64 = num.parse().expect("a number");
        assert_eq!(values, [expected], "{tag}");
    }
}

#[test]
fn json_unbalanced_begin_end() {
    let text = r#"{"traceEvents": [
        {"ph":"B","pid":1,"tid":1,"ts":1,"name":"open"},
        {"ph":"B","pid":1,"tid":1,"ts":2,"name":"inner"},
        {"ph":"E","pid":1,"tid":1,"ts":3},
        {"ph":"E","pid":1,"tid":2,"ts":4},
        {"ph":"B","pid":1,"tid":3,"ts":5,"name":"never_closed"}
    ]}"#;
    let db = expect_ok("unbalanced.json", text.as_bytes());
    assert_eq!(
        db.slices(),
        [
            ("open".to_string(), 1000, -1),
            ("inner".to_string(), 2000, 1000),
            ("never_closed".to_string(), 5000, -1),
        ]
    );
}

// ---------------------------------------------------------------------------------------
// strace
// ---------------------------------------------------------------------------------------

#[test]
fn strace_pids_padded_to_five_columns_are_read() {
    // `strace -f -o FILE` pads pids to five columns: the fields are split on runs of blanks,
    // and such a file is still told to be strace from its first line.
    let db = expect_ok(
        "padded.strace",
        b"1000  1700000052.321000 openat(AT_FDCWD, \"/x\", O_RDONLY) = 3\n\
12345 1700000052.321100 read(3, \"a = b\", 1024) = 5\n\
1000  1700000052.321200 close(3)                = 0\n",
    );
    assert_eq!(
        db.count("select count(*) from trace_file where trace_type = 'strace'"),
        1
    );
    assert_eq!(
        db.text(
            "select group_concat(name || '@' || tid, ' ') from (select s.name, t.tid
             from slice s join thread_track tt on s.track_id = tt.id join thread t using (utid)
             order by s.ts)"
        ),
        "openat@1000 read@12345 close@1000"
    );
    assert_eq!(db.stat("strace_parse_failure"), 0);
}

#[test]
fn strace_resumed_without_unfinished_is_counted_not_dropped() {
    // strace attached mid-call prints `<... read resumed>` with no unfinished line before:
    // nothing to end, so the line is counted (Sextant's own stat) and makes no track.
    let db = expect_ok(
        "orphan.strace",
        b"1000 1700000052.321000 futex(0x7f, FUTEX_WAIT, 2, NULL <unfinished ...>\n\
1002 1700000052.321100 <... read resumed>\"abc\", 1024) = 3\n\
1000 1700000052.321500 <... futex resumed> )  = 0\n",
    );
    assert_eq!(db.stat("strace_resumed_without_unfinished"), 1);
    assert_eq!(
        db.slices(),
        vec![("futex".to_string(), 1_700_000_052_321_000_000, 500_000)]
    );
    assert_eq!(db.count("select count(*) from thread_track"), 1);
}

#[test]
fn strace_leaves_thread_zero_unnamed() {
    // Only proto and systrace take tid 0 as the idle `swapper` (process-tracking §1,
    // `pid_zero_is_idle`); strace, like JSON, leaves the reserved thread unnamed.
    let db = expect_ok("plain.strace", b"1000 1700000052.321000 close(3) = 0\n");
    assert_eq!(
        db.count("select count(*) from thread where tid = 0 and name is null"),
        1
    );
    assert_eq!(
        db.count("select count(*) from thread where name = 'swapper'"),
        0
    );
}

// ---------------------------------------------------------------------------------------
// Systrace
// ---------------------------------------------------------------------------------------

#[test]
fn systrace_garbage_lines_are_counted() {
    let original = String::from_utf8(data("h_systrace.txt")).unwrap();
    let clean = expect_ok("clean.txt", original.as_bytes());
    let clean_slices = clean.slices();
    let clean_failures = clean.stat("systrace_parse_failure");

    let garbage_lines = [
        "this line is not ftrace at all",
        "          ui-500   (  500) [000] ...1  not_a_timestamp: tracing_mark_write: B|500|x",
        "@@@@ ### !!!",
    ];
    let mut text = String::new();
    for (i, line) in original.lines().enumerate() {
        text.push_str(line);
        text.push('\n');
        if i == 6 || i == 10 {
            for g in garbage_lines {
                text.push_str(g);
                text.push('\n');
            }
        }
    }
    let db = expect_ok("garbage-lines.txt", text.as_bytes());
    assert_eq!(
        db.stat("systrace_parse_failure") - clean_failures,
        2 * garbage_lines.len() as i64
    );
    assert_eq!(db.slices(), clean_slices);
}

#[test]
fn systrace_unbalanced_begin_end() {
    let text = format!(
        "{SYSTRACE_HEADER}\
          ui-500   (  500) [000] ...1  100.001000: tracing_mark_write: B|500|outer
          ui-500   (  500) [000] ...1  100.002000: tracing_mark_write: B|500|inner
          ui-500   (  500) [000] ...1  100.003000: tracing_mark_write: E|500
          bg-501   (  500) [000] ...1  100.004000: tracing_mark_write: E|500
"
    );
    let db = expect_ok("unbalanced.txt", text.as_bytes());
    assert_eq!(
        db.slices(),
        [
            ("outer".to_string(), 100_001_000_000, -1),
            ("inner".to_string(), 100_002_000_000, 1_000_000),
        ]
    );
}

// ---------------------------------------------------------------------------------------
// Archives
// ---------------------------------------------------------------------------------------

#[test]
fn gzip_corrupt_half_way_keeps_what_came_before_and_counts_it() {
    let full = expect_ok("whole.pftrace", &data("a_track_events.pftrace")).slices();
    let mut gz = gzip(&data("a_track_events.pftrace"));
    let mid = gz.len() / 2;
    for b in &mut gz[mid..mid + 16] {
        *b ^= 0x5a;
    }
    let db = expect_ok("corrupt.pftrace.gz", &gz);
    assert_eq!(db.stat("compressed_stream_truncated"), 1);
    let slices: usize = db
        .conn
        .query_row("select count(*) from slice", [], |r| r.get(0))
        .expect("count");
    assert!(
        slices > 0 && slices < full.len(),
        "{slices} of {}",
        full.len()
    );
}

#[test]
fn gzip_corrupt_from_its_start_is_an_error() {
    let mut gz = gzip(&data("a_track_events.pftrace"));
    // Past the 10-byte header, the deflate data itself.
    for b in &mut gz[10..30] {
        *b ^= 0x5a;
    }
    expect_err("corrupt-start.pftrace.gz", &gz, &["corrupt"]);
}

#[test]
fn gzip_truncated_never_panics() {
    let gz = gzip(&data("a_track_events.pftrace"));
    for cut in (2..gz.len()).step_by(9) {
        expect_no_panic(&format!("cut-{cut}.pftrace.gz"), &gz[..cut]);
    }
}

fn zip_of(members: &[(&str, &[u8], zip::CompressionMethod)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes, method) in members {
        let opts = zip::write::SimpleFileOptions::default().compression_method(*method);
        w.start_file(*name, opts).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// Flips bytes in the middle of a member's stored data.
fn corrupt_member(zip_bytes: &mut [u8], index: usize) {
    let (start, len) = {
        let mut a = zip::ZipArchive::new(std::io::Cursor::new(&*zip_bytes)).unwrap();
        let f = a.by_index_raw(index).unwrap();
        (f.data_start() as usize, f.compressed_size() as usize)
    };
    let mid = start + len / 2;
    for b in &mut zip_bytes[mid..mid + 8.min(len / 2)] {
        *b ^= 0xa5;
    }
}

#[test]
fn zip_with_a_corrupt_member_keeps_the_others_and_counts_it_against_that_member() {
    for method in [
        zip::CompressionMethod::Stored,
        zip::CompressionMethod::Deflated,
    ] {
        let chrome = data("g_chrome.json");
        let proto = data("a_track_events.pftrace");
        let mut z = zip_of(&[
            ("good.json", &chrome, method),
            ("broken.pftrace", &proto, method),
        ]);
        corrupt_member(&mut z, 1);
        let tag = format!("corrupt-member-{method:?}.zip");
        let db = expect_ok(&tag, &z);
        // Counted once, on the broken member's file.
        let on: Vec<(String, i64)> = {
            let mut st = db
                .conn
                .prepare(
                    "select f.name, s.value from sextant_stats s join __intrinsic_trace_file f
                     on f.id = s.trace_id where s.name = 'compressed_stream_truncated'
                     and s.value > 0",
                )
                .expect("query");
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .expect("rows")
                .collect::<Result<_, _>>()
                .expect("rows")
        };
        assert_eq!(on, [("broken.pftrace".to_string(), 1)], "{tag}");
        // The good member is whole.
        let names: Vec<String> = db.slices().into_iter().map(|s| s.0).collect();
        assert!(names.len() > 1, "{tag}: {names:?}");
    }
}

#[test]
fn zip_with_a_corrupt_directory_is_read_from_its_local_headers() {
    let chrome = data("g_chrome.json");
    let whole = expect_ok("good.json", &chrome).slices();
    let mut z = zip_of(&[("good.json", &chrome, zip::CompressionMethod::Deflated)]);
    // Break the end-of-central-directory record's offset field.
    let eocd = z.len() - 22;
    assert_eq!(&z[eocd..eocd + 4], b"PK\x05\x06");
    z[eocd + 16..eocd + 20].copy_from_slice(&[0xff, 0xff, 0xff, 0x0f]);
    let db = expect_ok("bad-directory.zip", &z);
    assert_eq!(db.slices(), whole);
    assert_eq!(db.stat("archive_damaged"), 1);
}

#[test]
fn zip_without_any_readable_member_is_an_error() {
    let mut z = zip_of(&[(
        "good.json",
        &data("g_chrome.json"),
        zip::CompressionMethod::Deflated,
    )]);
    z.truncate(40);
    expect_err("nothing-left.zip", &z, &["zip", "cut", "corrupt"]);
}

#[test]
fn zip_truncated_never_panics() {
    let chrome = data("g_chrome.json");
    let proto = data("a_track_events.pftrace");
    let z = zip_of(&[
        ("good.json", &chrome, zip::CompressionMethod::Deflated),
        ("b.pftrace", &proto, zip::CompressionMethod::Deflated),
    ]);
    for cut in (4..z.len()).step_by(23) {
        expect_no_panic(&format!("cut-{cut}.zip"), &z[..cut]);
    }
}

#[test]
fn zip_with_a_garbage_member_is_an_error_naming_the_member() {
    let proto = data("a_track_events.pftrace");
    let z = zip_of(&[
        ("trace.pftrace", &proto, zip::CompressionMethod::Deflated),
        (
            "notes.txt",
            b"just some notes\n",
            zip::CompressionMethod::Deflated,
        ),
    ]);
    // A member of no known type fails the whole load, as in Trace Processor
    // (behaviour-merging.md: `Unknown trace type provided (ERR:fmt)`).
    match import("garbage-member.zip", &z) {
        Outcome::Ok(_) => panic!("a member of unknown type was skipped silently"),
        Outcome::Err { message, .. } => {
            assert!(message.contains("notes.txt"), "{message}");
            assert!(message.contains("Unknown trace type"), "{message}");
        }
    }
}

/// A merge archive cut before a member its manifest names: the error says the archive is
/// cut and which member is missing, not that the manifest is wrong.
#[test]
fn an_archive_cut_before_a_member_its_manifest_names_says_so() {
    let zip = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/i1_merge.zip"))
        .expect("fixture");
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zip)).expect("zip");
    let mut member = |name: &str| -> Vec<u8> {
        let mut out = Vec::new();
        std::io::copy(&mut archive.by_name(name).expect("member"), &mut out).expect("read");
        out
    };
    let (manifest, phone, watch, log) = (
        member("perfetto_manifest.json"),
        member("phone.pftrace"),
        member("watch.pftrace"),
        member("app_log.json"),
    );
    let stored = zip::CompressionMethod::Stored;
    let whole = zip_of(&[
        ("perfetto_manifest.json", &manifest, stored),
        ("phone.pftrace", &phone, stored),
        ("watch.pftrace", &watch, stored),
        ("app_log.json", &log, stored),
    ]);
    // Cut just before the log's local header (the fourth).
    let at = whole
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"PK\x03\x04")
        .map(|(i, _)| i)
        .nth(3)
        .expect("the log's header");
    let message = expect_err("cut_merge.zip", &whole[..at], &["cut short"]);
    assert!(
        message.contains("app_log.json, which its manifest names, is not in what is left"),
        "{message}"
    );
}
