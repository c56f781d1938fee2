//! Unit tests of the JSON importer.

use super::*;
use crate::ir::{ClockDomain, DecodedEvent};
use crate::parse::Trickle;

fn ctx() -> FileContext {
    FileContext::new(0, 0)
}

fn run(json: &str) -> (Sink, Result<(), ParseError>) {
    let mut sink = Sink::new();
    let r = parse(json.as_bytes(), &mut sink, &ctx());
    (sink, r)
}

fn ok(json: &str) -> Sink {
    let (sink, r) = run(json);
    assert_eq!(r, Ok(()), "parse failed for {json}");
    sink
}

fn s(sink: &Sink, id: StrId) -> String {
    sink.strings.get(id).unwrap_or("NULL").to_string()
}

fn stat(sink: &Sink, name: &str) -> i64 {
    sink.stat_total(name)
}

/// Slice-like events as "<kind> <ts> <name> [dur]" (Thread/name events omitted).
fn slices(sink: &Sink) -> Vec<String> {
    sink.decoded()
        .iter()
        .filter_map(|e: &DecodedEvent| match e.data {
            EventData::Begin(sl) => Some(format!("B {} {}", e.ts, s(sink, sl.name))),
            EventData::End(sl) => Some(format!("E {} {}", e.ts, s(sink, sl.name))),
            EventData::Complete { slice, dur, .. } => {
                Some(format!("X {} {} {}", e.ts, s(sink, slice.name), dur))
            }
            _ => None,
        })
        .collect()
}

fn slice_events(sink: &Sink) -> Vec<(i64, SliceEvent)> {
    sink.decoded()
        .iter()
        .filter_map(|e| match e.data {
            EventData::Begin(sl) | EventData::End(sl) => Some((e.ts, sl)),
            EventData::Complete { slice, .. } => Some((e.ts, slice)),
            _ => None,
        })
        .collect()
}

fn args(sink: &Sink, id: ArgsRef) -> Vec<(String, String, ArgValue)> {
    sink.args
        .get(id)
        .iter()
        .map(|a| (s(sink, a.flat_key), s(sink, a.key), a.value))
        .collect()
}

#[test]
fn us_to_ns_conversion() {
    let sink = ok(r#"[
        {"ph":"X","pid":1,"tid":1,"ts":2000.5,"dur":1,"name":"a"},
        {"ph":"X","pid":1,"tid":1,"ts":5.1,"dur":500.1,"name":"b"},
        {"ph":"X","pid":1,"tid":1,"ts":"100","dur":"200.5","name":"c"},
        {"ph":"X","pid":1,"tid":1,"ts":1850244461563845.0,"dur":167,"name":"d"},
        {"ph":"X","pid":1,"tid":1,"ts":-0.0005,"dur":0,"name":"e"},
        {"ph":"X","pid":1,"tid":1,"ts":"100a","dur":1,"name":"bad1"},
        {"ph":"X","pid":1,"tid":1,"ts":"+1","dur":1,"name":"bad2"},
        {"ph":"X","pid":1,"tid":1,"ts":"01","dur":1,"name":"bad3"},
        {"ph":"X","pid":1,"tid":1,"ts":1e300,"dur":1,"name":"bad4"},
        {"ph":"B","pid":1,"tid":1,"name":"bad5"}
    ]"#);
    assert_eq!(
        slices(&sink),
        vec![
            "X -1 e 0",
            "X 5100 b 500100",
            "X 100000 c 200500",
            "X 2000500 a 1000",
            "X 1850244461563845000 d 167000",
        ]
    );
    assert_eq!(stat(&sink, "json_tokenizer_failure"), 5);
    // Everything is on the file's private clock.
    let clock = sink.decoded()[0].clock;
    assert_eq!(
        *sink.clocks.get(clock as u32),
        ClockDomain {
            machine: 0,
            clock_id: ir::clocks::TRACE_FILE,
            sequence: 0,
            file: 0,
            shared: false,
        }
    );
}

#[test]
fn ts_conversion_edges() {
    assert_eq!(us_to_ns(&JVal::Int(i64::MAX)), None);
    assert_eq!(us_to_ns(&JVal::Real(f64::INFINITY)), None);
    assert_eq!(us_to_ns(&JVal::Real(-1.0005)), Some(-1001)); // half away from zero
    assert_eq!(us_to_ns(&JVal::Real(0.0015)), Some(2));
    assert_eq!(us_to_ns(&JVal::Str("1e3".into())), Some(1_000_000));
    assert_eq!(us_to_ns(&JVal::Str("".into())), None);
    assert_eq!(us_to_ns(&JVal::Bool(true)), None);
}

#[test]
fn tie_order_without_x_is_file_order() {
    let sink = ok(r#"[
        {"ph":"B","pid":1,"tid":1,"ts":1,"name":"a"},
        {"ph":"E","pid":1,"tid":1,"ts":1},
        {"ph":"B","pid":1,"tid":1,"ts":0,"name":"z"}
    ]"#);
    assert_eq!(slices(&sink), vec!["B 0 z", "B 1000 a", "E 1000 NULL"]);
}

#[test]
fn tie_order_with_x() {
    let sink = ok(r#"[
        {"ph":"B","pid":1,"tid":1,"ts":1,"name":"b"},
        {"ph":"X","pid":1,"tid":1,"ts":1,"dur":5,"name":"short"},
        {"ph":"i","pid":1,"tid":1,"ts":1,"name":"inst"},
        {"ph":"X","pid":1,"tid":1,"ts":1,"dur":10,"name":"long"},
        {"ph":"X","pid":1,"tid":1,"ts":1,"dur":5,"name":"short2"},
        {"ph":"E","pid":1,"tid":1,"ts":1,"name":"e"},
        {"ph":"X","pid":1,"tid":1,"ts":0,"dur":1,"name":"first"}
    ]"#);
    assert_eq!(
        slices(&sink),
        vec![
            "X 0 first 1000",
            "E 1000 e",
            "X 1000 long 10000",
            "X 1000 short 5000",
            "X 1000 short2 5000",
            "B 1000 b",
            "X 1000 inst 0",
        ]
    );
    // The x_event_order case: tid defaults to pid, longer X first.
    let sink = ok(r#"[
      {"name":"Child","ph":"X","ts":1,"dur":5,"pid":1},
      {"name":"Parent","ph":"X","ts":1,"dur":10,"pid":1,"tid":1}
    ]"#);
    assert_eq!(
        slices(&sink),
        vec!["X 1000 Parent 10000", "X 1000 Child 5000"]
    );
    let tracks: Vec<_> = slice_events(&sink).iter().map(|(_, e)| e.track).collect();
    assert_eq!(tracks[0], tracks[1]);
}

#[test]
fn bare_array_missing_bracket_keeps_complete_events() {
    let sink = ok("[\n{\"name\":\"a\",\"ph\":\"X\",\"ts\":4619295550.000,\"dur\":8000.000,\"pid\":1,\"tid\":3},\n");
    assert_eq!(slices(&sink), vec!["X 4619295550000 a 8000000"]);
    let sink =
        ok(r#"[{"name":"a","ph":"X","ts":1,"dur":1,"pid":1},{"name":"b","ph":"X","ts":2,"du"#);
    assert_eq!(slices(&sink), vec!["X 1000 a 1000"]);
    let sink = ok(r#"[{"name":"a","ph":"X","ts":1,"dur":1,"pid":1}"#);
    assert_eq!(slices(&sink), vec!["X 1000 a 1000"]);
    let sink = ok("[");
    assert!(sink.decoded().is_empty());
    // A syntax error (not a truncation) is fatal even in a bare array.
    assert!(run(r#"[{"name":"a","ph":"X","ts":1,"dur":1,"pid":1} {"#)
        .1
        .is_err());
    assert!(run(r#"[{"ph":"X","ts":1,,}]"#).1.is_err());
}

#[test]
fn a_truncated_object_keeps_its_events_and_counts_the_cut() {
    for cut in [
        r#"{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1}"#,
        r#"{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1}]"#,
        r#"{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1}],"#,
        r#"{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1},{"ph":"X","ts":2,"du"#,
    ] {
        let sink = ok(cut);
        assert_eq!(slices(&sink).len(), 1, "{cut}");
        assert_eq!(stat(&sink, "json_truncated"), 1, "{cut}");
    }
    let sink = ok(r#"{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1}]}"#);
    assert_eq!(slices(&sink).len(), 1);
    assert_eq!(stat(&sink, "json_truncated"), 0);
    // A bare array without its `]` loses nothing; cut inside an event, it loses that one.
    let no_bracket = ok(r#"[{"ph":"X","ts":1,"dur":1,"pid":1},"#);
    assert_eq!(stat(&no_bracket, "json_truncated"), 0);
    let cut_event = ok(r#"[{"ph":"X","ts":1,"dur":1,"pid":1},{"p"#);
    assert_eq!(stat(&cut_event, "json_truncated"), 1);
}

#[test]
fn a_stream_read_a_few_bytes_at_a_time_parses_as_the_whole_file_does() {
    let trace = r##"{"metadata":{"a":[1,{"b":2.5e3}],"c":"\u00e9\ud83d\ude00"},"traceEvents":[
        {"ph":"M","pid":"p","tid":"t","name":"thread_name","args":{"name":"x\"y"}},
        {"ph":"X","pid":1,"tid":2,"ts":1.5,"dur":"2","name":"n","cat":"c","args":{"a":[1,-2.5e-3,true,null,{}]},"bind_id":"0x1","flow_out":true},
        {"ph":"b","pid":1,"ts":3,"id2":{"local":7},"name":"a"},
        {"ph":"C","pid":1,"ts":123456789,"id":"q","name":"a","args":{"v":"1.5","w":12345678}},
        {"ph":"B","pid":1,"tid":2,"ts":1234567,"name":"long"},
        {"ph":"E","pid":1,"tid":2,"ts":12345678}
    ],"displayTimeUnit":"ns","systemTraceEvents":"# tracer: nop\n"}"##;
    let whole = ok(trace);
    for step in [1, 2, 3, 7, 64] {
        let mut sink = Sink::new();
        let mut input = Trickle {
            bytes: trace.as_bytes(),
            step,
        };
        parse_stream(&mut input, &mut sink, &ctx()).expect("parses");
        assert_eq!(slices(&sink), slices(&whole), "step {step}");
        assert_eq!(sink.metadata, whole.metadata, "step {step}");
        assert_eq!(
            stat(&sink, "json_display_time_unit"),
            stat(&whole, "json_display_time_unit")
        );
        assert_eq!(sink.events.len(), whole.events.len(), "step {step}");
    }
}

#[test]
fn shape_errors() {
    assert!(run(r#"{"traceEvents":{}}"#).1.is_err());
    assert!(run(r#"{"traceEvents":[], "systemTraceEvents": {}}"#)
        .1
        .is_err());
    assert!(run(r#"[1]"#).1.is_err());
    assert!(run(r#"["x"]"#).1.is_err());
    assert!(run("").1.is_err());
    assert!(run("hello").1.is_err());
    let mut bad = br#"[{"ph":"X","ts":1,"dur":1,"pid":1,"name":""#.to_vec();
    bad.extend_from_slice(b"\xff\xfe\"}]");
    let mut sink = Sink::new();
    let r = parse(&bad, &mut sink, &ctx());
    assert!(
        matches!(&r, Err(ParseError::Invalid(m)) if m.contains("UTF-8")),
        "{r:?}"
    );
}

#[test]
fn tolerant_syntax() {
    // Trailing commas (array, event, args), raw newline in a string, `{}` skipped.
    let sink = ok("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n\
        {\"name\":\"Foo\",\"ph\":\"X\",\"tid\":0,\"ts\":3473608.458,\"dur\":295555.500,\"args\":{\"raw\":\"a\nb\",},},\n\
        {},\n\
        ]}");
    assert_eq!(slices(&sink), vec!["X 3473608458 Foo 295555500"]);
    assert_eq!(stat(&sink, "json_tokenizer_failure"), 0);
    assert_eq!(stat(&sink, "json_display_time_unit"), 1);
    let (_, sl) = slice_events(&sink)[0];
    let a = args(&sink, sl.args);
    assert_eq!(a.len(), 1);
    assert_eq!((a[0].0.as_str(), a[0].1.as_str()), ("args.raw", "args.raw"));
    let ArgValue::Str(v) = a[0].2 else {
        panic!("{a:?}")
    };
    assert_eq!(s(&sink, v), "a\nb");
}

#[test]
fn missing_ph_and_unknown_phase() {
    let sink = ok(r#"[{"ts":1,"pid":1},{"ph":"Q","ts":1,"pid":2,"tid":3},{"ph":"","ts":1}]"#);
    assert_eq!(stat(&sink, "json_tokenizer_failure"), 2);
    let threads: Vec<_> = sink
        .decoded()
        .iter()
        .filter_map(|e| match e.data {
            EventData::Thread(t) => Some((t.tid, t.pid)),
            _ => None,
        })
        .collect();
    assert_eq!(threads, vec![(3, Some(2))]);
}

#[test]
fn string_pid_tid() {
    let sink = ok(
        r#"{"traceEvents":[{"pid":"foo","tid":"bar","ts":5.1,"dur":500.1,"name":"name.exec","ph":"XXX","cat":"aaa"},
                                     {"pid":"foo","ts":7,"dur":1,"name":"other","ph":"X"}]}"#,
    );
    let mut procs = vec![];
    let mut threads = vec![];
    for e in &sink.decoded() {
        match e.data {
            EventData::Process(ref p) => {
                procs.push((p.process.pid, s(&sink, p.name), p.from_system))
            }
            EventData::ThreadName { thread, name, .. } => {
                threads.push((thread.tid, thread.pid, s(&sink, name)))
            }
            _ => {}
        }
    }
    let foo = STRING_ID_BASE;
    let bar = STRING_ID_BASE + 1;
    assert_eq!(
        procs,
        vec![(foo, "foo".into(), true), (foo, "foo".into(), true)]
    );
    assert_eq!(threads, vec![(bar, Some(foo), "bar".into())]);
    let evs = slice_events(&sink);
    assert_eq!(
        *sink.tracks.get(evs[0].1.track),
        TrackKey::ThreadOverlap(ThreadRef {
            machine: 0,
            tid: bar,
            pid: Some(foo)
        })
    );
    // No tid → tid = pid.
    assert_eq!(
        *sink.tracks.get(evs[1].1.track),
        TrackKey::ThreadOverlap(ThreadRef {
            machine: 0,
            tid: foo,
            pid: Some(foo)
        })
    );
}

#[test]
fn pid_tid_coercion() {
    let sink = ok(r#"[
        {"ph":"X","ts":1,"dur":1,"name":"a","pid":5.9,"tid":-3},
        {"ph":"X","ts":2,"dur":1,"name":"b","pid":4294967296,"tid":4294967295},
        {"ph":"X","ts":3,"dur":1,"name":"c"},
        {"ph":"X","ts":4,"dur":1,"name":"d","pid":7,"tid":0}
    ]"#);
    let refs: Vec<_> = slice_events(&sink)
        .iter()
        .map(|(_, e)| match sink.tracks.get(e.track) {
            // X goes on the thread's track, spilling to overlap lanes if it must.
            TrackKey::ThreadOverlap(t) => (t.tid, t.pid),
            k => panic!("{k:?}"),
        })
        .collect();
    assert_eq!(
        refs,
        vec![
            (5, Some(5)),
            (4294967295, Some(0)),
            (0, Some(0)),
            (7, Some(7))
        ]
    );
}

#[test]
fn counters() {
    let sink = ok(r#"[
        {"ph":"C","pid":7,"tid":7,"ts":1000,"name":"Heap","args":{"used":10,"total":64.5}},
        {"ph":"C","pid":30,"tid":31,"ts":800,"name":"MyCounters","id":"g1","args":{"f":100.5,"s":"25.7"}},
        {"ph":"C","pid":30,"ts":801,"name":"N","id":5,"args":{"a":1}},
        {"ph":"C","pid":300,"ts":3000,"name":"E","args":{"leading_dot":".75","trailing_dot":"246.","plus":"+10.5",
           "lz":"050","incomplete_exp":"1.5e","exp_no_digit":"2e+","just_dot":".","just_plus":"+","just_minus":"-","b":true}},
        {"ph":"C","pid":1,"ts":1,"name":"NoArgs"}
    ]"#);
    let got: Vec<_> = sink
        .decoded()
        .iter()
        .filter_map(|e| match e.data {
            EventData::Counter { track, value, .. } => match sink.tracks.get(track) {
                TrackKey::ThreadProcessCounter { thread, name, kind } => {
                    assert_eq!(*kind, "json_counter");
                    Some((e.ts, thread.pid.unwrap_or(-1), s(&sink, *name), value.0))
                }
                k => panic!("{k:?}"),
            },
            _ => None,
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (800_000, 30, "MyCounters id: g1 f".to_string(), 100.5),
            (800_000, 30, "MyCounters id: g1 s".to_string(), 25.7),
            (801_000, 30, "N a".to_string(), 1.0),
            (1_000_000, 7, "Heap used".to_string(), 10.0),
            (1_000_000, 7, "Heap total".to_string(), 64.5),
            (3_000_000, 300, "E leading_dot".to_string(), 0.75),
            (3_000_000, 300, "E trailing_dot".to_string(), 246.0),
            (3_000_000, 300, "E plus".to_string(), 10.5),
            (3_000_000, 300, "E lz".to_string(), 50.0),
        ]
    );
    // 6 bad values + the missing args.
    assert_eq!(stat(&sink, "json_parser_failure"), 7);
}

#[test]
fn args_keys() {
    let sink = ok(r#"[{"ph":"B","pid":1,"tid":1,"ts":1,"name":"a","args":{
        "i":-5,"r":45.67,"s":"x","b":true,"n":null,"e":{},"ea":[],
        "d":{"x":{"y":1}},"arr":[1,[2,3],{"k":"v"}],"big":18446744073709551615,"i":6
    }}]"#);
    let (_, sl) = slice_events(&sink)[0];
    let got: Vec<_> = args(&sink, sl.args)
        .into_iter()
        .map(|(f, k, v)| {
            let v = match v {
                ArgValue::Str(id) => format!("str {}", s(&sink, id)),
                v => format!("{v:?}"),
            };
            format!("{f} {k} {v}")
        })
        .collect();
    assert_eq!(
        got,
        vec![
            "args.i args.i Int(6)",
            "args.r args.r Real(45.67)",
            "args.s args.s str x",
            "args.b args.b Bool(true)",
            "args.d.x.y args.d.x.y Int(1)",
            "args.arr args.arr[0] Int(1)",
            "args.arr args.arr[1][0] Int(2)",
            "args.arr args.arr[1][1] Int(3)",
            "args.arr.k args.arr[2].k str v",
            "args.big args.big Uint(18446744073709551615)",
        ]
    );
    // No args / empty args → NO_ARGS.
    let sink =
        ok(r#"[{"ph":"B","pid":1,"tid":1,"ts":1,"args":{}},{"ph":"B","pid":1,"tid":1,"ts":2}]"#);
    assert!(slice_events(&sink).iter().all(|(_, e)| e.args == NO_ARGS));
    assert!(slice_events(&sink)
        .iter()
        .all(|(_, e)| s(&sink, e.name) == NO_NAME));
}

#[test]
fn begin_end_complete_fields() {
    let sink = ok(r#"[
        {"ph":"B","pid":10,"tid":11,"ts":100,"name":"Begin","cat":"cat1","tts":90},
        {"ph":"E","pid":10,"tid":11,"ts":200,"tts":190,"args":{"d":1.5}},
        {"ph":"X","pid":10,"tid":12,"ts":250,"dur":50,"name":"C","cat":"","tts":240,"tdur":40},
        {"ph":"X","pid":10,"tid":13,"ts":260,"name":"NoDur"}
    ]"#);
    let evs: Vec<_> = sink.decoded().into_iter().map(|e| e.data).collect();
    let EventData::Begin(b) = evs[0] else {
        panic!("{evs:?}")
    };
    assert_eq!(
        (s(&sink, b.category).as_str(), b.thread_ts),
        ("cat1", 90_000)
    );
    let EventData::End(e) = evs[1] else {
        panic!("{evs:?}")
    };
    assert_eq!(
        (e.name, e.category, e.thread_ts),
        (NULL_STR, NULL_STR, 190_000)
    );
    assert_ne!(e.args, NO_ARGS);
    let EventData::Complete {
        slice,
        dur,
        thread_dur,
    } = evs[2]
    else {
        panic!("{evs:?}")
    };
    assert_eq!(
        (slice.category, slice.thread_ts, dur, thread_dur),
        (NULL_STR, 240_000, 50_000, 40_000)
    );
    // X without dur: thread only + json_parser_failure.
    assert!(matches!(
        evs[3],
        EventData::Thread(ThreadRef {
            tid: 13,
            pid: Some(10),
            ..
        })
    ));
    // ... and its import log row.
    assert!(matches!(
        evs[4],
        EventData::ImportLog {
            name: "json_parser_failure",
            ..
        }
    ));
    assert_eq!(evs.len(), 5);
    assert_eq!(stat(&sink, "json_parser_failure"), 1);
}

#[test]
fn bad_dur_stops_tokenizing() {
    let sink = ok(r#"[
        {"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":"a"},
        {"ph":"X","pid":1,"tid":1,"ts":2,"dur":"zz","name":"b"},
        {"ph":"X","pid":1,"tid":1,"ts":3,"dur":1,"name":"c"}
    ]"#);
    assert_eq!(slices(&sink), vec!["X 1000 a 1000"]);
    assert_eq!(stat(&sink, "json_tokenizer_failure"), 1);
    let (_, r) = run(r#"{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":2,"tts":{},"name":"b"}]}"#);
    assert!(r.is_err());
}

#[test]
fn instants() {
    let sink = ok(r#"[
        {"ph":"I","pid":10,"tid":11,"ts":300,"name":"G","s":"g"},
        {"ph":"I","pid":10,"tid":0,"ts":310,"s":"p"},
        {"ph":"I","pid":10,"tid":11,"ts":320,"s":"t"},
        {"ph":"i","pid":10,"ts":330,"name":"NoTid"},
        {"ph":"R","ts":340,"s":"p","name":"NoPid"},
        {"ph":"i","pid":10,"tid":10,"ts":350,"name":"Explicit"}
    ]"#);
    let got: Vec<_> = slice_events(&sink)
        .iter()
        .map(|(ts, e)| (*ts, s(&sink, e.name), *sink.tracks.get(e.track)))
        .collect();
    let th = |tid| {
        TrackKey::ThreadSlices(ThreadRef {
            machine: 0,
            tid,
            pid: Some(10),
        })
    };
    assert_eq!(
        got,
        vec![
            (
                300_000,
                "G".into(),
                TrackKey::GlobalSlices {
                    machine: 0,
                    kind: "legacy_chrome_global_instants",
                    name: NULL_STR
                }
            ),
            (
                310_000,
                "NULL".into(),
                TrackKey::ProcessSlices {
                    process: ProcessRef {
                        machine: 0,
                        pid: 10
                    },
                    kind: "chrome_process_instant",
                    name: NULL_STR
                }
            ),
            (320_000, NO_NAME.into(), th(11)),
            (350_000, "Explicit".into(), th(10)),
        ]
    );
    assert_eq!(stat(&sink, "json_parser_failure"), 2);
}

#[test]
fn async_tracks() {
    let sink = ok(r#"[
        {"ph":"b","pid":1,"tid":2,"ts":2,"name":"Second","cat":"c","id":"0x1"},
        {"ph":"b","pid":1,"tid":2,"ts":1,"name":"First","cat":"c","id":"0x1"},
        {"ph":"e","pid":1,"tid":2,"ts":3,"cat":"c","id":"0x1"},
        {"ph":"n","pid":1,"tid":2,"ts":4,"cat":"c","id":1},
        {"ph":"b","pid":5,"tid":2,"ts":5,"name":"L","cat":"c","id2":{"local":"0x1"}},
        {"ph":"b","pid":5,"tid":2,"ts":6,"name":"G","cat":"c","id2":{"global":"0x1"}},
        {"ph":"b","pid":5,"tid":2,"ts":7,"name":"Bad","cat":"c","id2":{"":"x"}},
        {"ph":"b","tid":2,"ts":8,"name":"NoPid","cat":"c","id":"5"}
    ]"#);
    let got: Vec<_> = slice_events(&sink)
        .iter()
        .map(|(ts, e)| match sink.tracks.get(e.track) {
            TrackKey::AsyncCookie { set, cookie } => (
                *ts / 1000,
                s(&sink, e.name),
                set.kind,
                set.process.map(|p| p.pid),
                s(&sink, set.name),
                *cookie,
            ),
            k => panic!("{k:?}"),
        })
        .collect();
    assert_eq!(got.len(), 6);
    // Track named after the cookie's first event in ts order.
    assert_eq!(got[0].1, "First");
    assert_eq!(got[0].4, "First");
    assert_eq!(got[1].4, "First");
    assert_eq!(got[2].1, "NULL");
    assert_eq!(got[0].5, got[2].5);
    // "0x1" and 1 differ.
    assert_ne!(got[0].5, got[3].5);
    assert_eq!(got[3].4, "NULL");
    assert_eq!(got[4].2, "legacy_async_process_slice");
    assert_eq!(got[4].3, Some(5));
    assert_eq!(got[5].2, "legacy_async_global_slice");
    assert_eq!(got[5].3, None);
    // id2.global "0x1" shares the cookie of id "0x1" (same cat); its track name stays.
    assert_eq!(got[5].4, "First");
    assert_eq!(stat(&sink, "json_parser_failure"), 2);
}

#[test]
fn metadata_events() {
    let sink = ok(r#"[
        {"ph":"M","pid":100,"name":"process_name","args":{"name":"MissingTs"}},
        {"ph":"M","pid":101,"ts":null,"name":"process_name","args":{"name":"NullTs"}},
        {"ph":"M","pid":102,"ts":"invalid","name":"process_name","args":{"name":"InvalidTs"}},
        {"ph":"M","pid":30,"tid":31,"ts":5,"name":"thread_name","args":{"name":"T"}},
        {"ph":"M","pid":30,"tid":0,"ts":5,"name":"process_sort_index","args":{"sort_index":-2}},
        {"ph":"M","pid":30,"tid":31,"ts":5,"name":"thread_sort_index","args":{"sort_index":5}},
        {"ph":"M","pid":30,"ts":5,"name":"process_name","args":{"name":""}}
    ]"#);
    let mut got = vec![];
    for e in &sink.decoded() {
        match e.data {
            EventData::Process(ref p) => {
                got.push(format!("P {} {} {}", e.ts, p.process.pid, s(&sink, p.name)))
            }
            EventData::ThreadName {
                thread,
                name,
                priority,
            } => {
                assert_eq!(priority, NamePriority::Other);
                got.push(format!(
                    "T {} {} {}",
                    thread.tid,
                    thread.pid.unwrap_or(-1),
                    s(&sink, name)
                ))
            }
            EventData::ProcessArg {
                process,
                key,
                value,
            } => got.push(format!("PA {} {} {}", process.pid, s(&sink, key), value)),
            EventData::ThreadArg { thread, key, value } => {
                got.push(format!("TA {} {} {}", thread.tid, s(&sink, key), value))
            }
            EventData::Thread(_) => {}
            EventData::ImportLog { name, .. } => got.push(format!("L {name}")),
            ref d => panic!("{d:?}"),
        }
    }
    assert_eq!(
        got,
        vec![
            "P 0 100 MissingTs",
            "P 0 101 NullTs",
            "P 0 102 InvalidTs",
            "T 31 30 T",
            "PA 30 process_sort_index_hint -2",
            "TA 31 thread_sort_index_hint 5",
            "L json_parser_failure",
        ]
    );
    assert_eq!(stat(&sink, "json_parser_failure"), 1);
    assert_eq!(stat(&sink, "json_tokenizer_failure"), 0);
}

#[test]
fn trace_metadata() {
    let sink = ok(
        r#"{"metadata":{"source":"DevTools","cpuThrottling":1,"x":1.5,"y":2.0,
        "t":true,"n":null,"o":{"a": [1, 2]},"big":1e20},"traceEvents":[]}"#,
    );
    let got: Vec<_> = sink
        .metadata
        .iter()
        .map(|(n, _, _, v)| (n.as_str(), v.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("json_metadata.source", MetaValue::Str("DevTools".into())),
            ("json_metadata.cpuThrottling", MetaValue::Int(1)),
            ("json_metadata.x", MetaValue::Str("1.5".into())),
            ("json_metadata.y", MetaValue::Int(2)),
            ("json_metadata.t", MetaValue::Int(1)),
            ("json_metadata.o", MetaValue::Str(r#"{"a": [1, 2]}"#.into())),
            ("json_metadata.big", MetaValue::Str("1e+20".into())),
        ]
    );
}

#[test]
fn flows() {
    let sink = ok(r#"[
        {"ph":"X","pid":1,"tid":1,"ts":1,"dur":10,"name":"A","bind_id":"0x402","flow_out":true},
        {"ph":"X","pid":1,"tid":1,"ts":2,"dur":1,"name":"B","bind_id":1026,"flow_in":true,"flow_out":false},
        {"ph":"B","pid":1,"tid":1,"ts":3,"name":"C","bind_id":"402","flow_in":true,"flow_out":true},
        {"ph":"X","pid":1,"tid":1,"ts":4,"dur":1,"name":"D","bind_id":"0x402"},
        {"ph":"X","pid":1,"tid":1,"ts":5,"dur":1,"name":"E","bind_id":"zz","flow_in":true},
        {"ph":"s","pid":1,"tid":1,"ts":6,"name":"f","cat":"c","id":"0xA"},
        {"ph":"t","pid":1,"tid":1,"ts":7,"name":"f","cat":"c","id":10},
        {"ph":"f","pid":1,"tid":1,"ts":8,"name":"f","cat":"c","id":"a","bp":"e"},
        {"ph":"f","pid":1,"tid":1,"ts":9,"id":"nothex"}
    ]"#);
    let ops: Vec<_> = slice_events(&sink)
        .iter()
        .map(|(_, e)| sink.flow_ops(e.flows).to_vec())
        .collect();
    assert_eq!(
        ops,
        vec![
            vec![FlowOp::V2Out(0x402)],
            vec![FlowOp::V2In(0x402)],
            vec![FlowOp::V2Step(0x402)],
            vec![],
            vec![],
        ]
    );
    assert_eq!(stat(&sink, "flow_without_direction"), 1);
    assert_eq!(stat(&sink, "flow_invalid_id"), 2);
    let v1: Vec<_> = sink
        .decoded()
        .iter()
        .filter_map(|e| match e.data {
            EventData::FlowV1(f) => Some((f.id, f.phase, f.bind_enclosing, s(&sink, f.name))),
            _ => None,
        })
        .collect();
    assert_eq!(
        v1,
        vec![
            (10, FlowV1Phase::Start, false, "f".into()),
            (10, FlowV1Phase::Step, false, "f".into()),
            (10, FlowV1Phase::End, true, "f".into()),
        ]
    );
}

#[test]
fn every_event_makes_its_thread() {
    let sink = ok(r#"[
        {"ph":"C","pid":7,"tid":8,"ts":1,"name":"c","args":{"v":1}},
        {"ph":"T","pid":7,"tid":9,"ts":2,"dur":1,"name":"S"},
        {"ph":"X","pid":7,"tid":10,"ts":3,"dur":1,"name":"x"}
    ]"#);
    let threads: Vec<_> = sink
        .decoded()
        .iter()
        .filter_map(|e| match e.data {
            EventData::Thread(t) => Some(t.tid),
            EventData::ThreadState(ref st) => Some(st.thread.tid),
            _ => None,
        })
        .collect();
    // X names its thread through its track instead.
    assert_eq!(threads, vec![8, 9]);
}

#[test]
fn thread_state_events() {
    let sink = ok(r#"[
        {"ph":"T","pid":1,"tid":2,"ts":1,"dur":5,"name":"Running","args":{"cpu":3}},
        {"ph":"T","pid":1,"tid":2,"ts":6,"dur":2,"name":"D",
         "args":{"io_wait":1,"blocked_function":"f","cpu":1}},
        {"ph":"T","pid":1,"tid":2,"ts":8,"dur":1,"name":"Running","args":{"cpu":1.5}},
        {"ph":"T","pid":1,"tid":2,"ts":9,"name":"S"}
    ]"#);
    let states: Vec<_> = sink
        .decoded()
        .iter()
        .filter_map(|e| match e.data {
            EventData::ThreadState(ref st) => Some((
                e.ts,
                st.dur,
                s(&sink, st.state),
                st.io_wait,
                s(&sink, st.blocked_function),
                st.running_cpu,
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        states,
        vec![
            (1000, 5000, "Running".into(), None, "NULL".into(), Some(3)),
            (6000, 2000, "D".into(), Some(true), "f".into(), None),
            (8000, 1000, "Running".into(), None, "NULL".into(), None),
        ]
    );
    // No dur: a parser failure (the thread is still made).
    assert_eq!(stat(&sink, "json_parser_failure"), 1);
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!(
        r#"[{{"ph":"X","ts":1,"dur":1,"args":{}1{}}}]"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert!(run(&deep).1.is_err());
    let deep_obj = format!(
        r#"{{"other":{}1{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert!(run(&deep_obj).1.is_err());
}

#[test]
fn no_panic_on_any_prefix_or_mutation() {
    let trace = r#"{"metadata":{"a":[1,{"b":2.5e3}],"c":"\u00e9\ud83d\ude00"},"displayTimeUnit":"ns","traceEvents":[
        {"ph":"M","pid":"p","tid":"t","name":"thread_name","args":{"name":"x\"y"}},
        {"ph":"X","pid":1,"tid":2,"ts":1.5,"dur":"2","name":"n","cat":"c","args":{"a":[1,-2.5e-3,true,null,{}]},"bind_id":"0x1","flow_out":true},
        {"ph":"b","pid":1,"ts":3,"id2":{"local":7},"name":"a"},
        {"ph":"C","pid":1,"ts":3,"id":"q","name":"a","args":{"v":"1.5"}},
        {"ph":"s","pid":1,"ts":3,"id":"0x12","name":"a"},
    ]}"#;
    let bytes = trace.as_bytes();
    for end in 0..=bytes.len() {
        let mut sink = Sink::new();
        let _ = parse(&bytes[..end], &mut sink, &ctx());
    }
    for i in 0..bytes.len() {
        for b in [
            b'{', b'}', b'[', b']', b'"', b',', b':', b'\\', b'0', b'-', 0xff, b'e',
        ] {
            let mut m = bytes.to_vec();
            m[i] = b;
            let mut sink = Sink::new();
            let _ = parse(&m, &mut sink, &ctx());
        }
    }
    let sink = ok(trace);
    assert_eq!(slices(&sink).len(), 2);
}

#[test]
fn string_escapes() {
    let mut lx = Lexer::new(br#""a\n\t\"\\\/\u00e9\ud83d\ude00\ud800x""#);
    assert_eq!(
        lx.value(0),
        Ok(JVal::Str("a\n\t\"\\/é😀\u{FFFD}x".to_string().into()))
    );
    let mut lx = Lexer::new(br#""\q""#);
    assert!(matches!(lx.value(0), Err(JErr::Syntax(_))));
}

#[test]
fn percent_g() {
    assert_eq!(format_g(1.5), "1.5");
    assert_eq!(format_g(0.1), "0.1");
    assert_eq!(format_g(1234567.0), "1.23457e+06");
    assert_eq!(format_g(123456.7), "123457");
    assert_eq!(format_g(0.0001), "0.0001");
    assert_eq!(format_g(0.00001234), "1.234e-05");
    assert_eq!(format_g(-2.5), "-2.5");
    assert_eq!(format_g(1e100), "1e+100");
}

/// Endless blanks after a head, then a tail.
struct Blanks {
    head: &'static [u8],
    blanks: usize,
    tail: &'static [u8],
}

impl std::io::Read for Blanks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.head.is_empty() {
            let n = self.head.len().min(buf.len());
            buf[..n].copy_from_slice(&self.head[..n]);
            self.head = &self.head[n..];
            return Ok(n);
        }
        if self.blanks > 0 {
            let n = self.blanks.min(buf.len());
            buf[..n].fill(b' ');
            self.blanks -= n;
            return Ok(n);
        }
        let n = self.tail.len().min(buf.len());
        buf[..n].copy_from_slice(&self.tail[..n]);
        self.tail = &self.tail[n..];
        Ok(n)
    }
}

#[test]
fn blanks_between_events_are_never_held_in_memory() {
    let mut input = Blanks {
        head: br#"{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"a"},"#,
        blanks: 16 << 20,
        tail: br#"{"ph":"X","ts":2,"dur":1,"pid":1,"tid":1,"name":"b"}]}"#,
    };
    let mut st = Stream::new(&mut input);
    let mut sink = Sink::new();
    let mut imp = Importer::new(&mut sink, 0);
    let first = st
        .attempt(|lx| lx.next_byte())
        .expect("read")
        .expect("json");
    assert_eq!(first, Some(b'{'));
    imp.read_top_object(&mut st, &mut sink, &ctx())
        .expect("parses");
    imp.finish(&mut sink);
    assert_eq!(slices(&sink).len(), 2);
    assert!(
        st.buf.capacity() <= 2 * CHUNK,
        "{} bytes buffered",
        st.buf.capacity()
    );
}

/// Everything an import leaves in the sink that the lexing thread could change.
fn outcome(json: &[u8], lex_inline: usize, step: usize) -> String {
    let mut sink = Sink::new();
    let mut input = Trickle { bytes: json, step };
    let r = parse_stream_lexing(&mut input, &mut sink, &ctx(), lex_inline);
    let mut stats: Vec<_> = sink
        .stats
        .iter()
        .map(|(k, v)| (k.name, k.idx, *v))
        .collect();
    stats.sort_unstable();
    let events: Vec<_> = sink
        .decoded()
        .into_iter()
        .map(|e| (e.ts, e.ord, e.data))
        .collect();
    format!(
        "{r:?}\n{events:?}\n{stats:?}\n{:?}\n{:?}",
        sink.metadata, sink.accounting
    )
}

#[test]
fn events_lexed_on_a_second_thread_import_as_on_one() {
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    for name in [
        "g_chrome.json",
        "kineto_h100_trimmed.json",
        "lighthouse_cpu_profile.json",
    ] {
        let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
        inputs.push(std::fs::read(&path).expect(&path));
    }
    let generated: String = (0..300)
        .map(|i| {
            format!(
                r#"{{"name":"n{}","ph":"X","ts":{}.5,"dur":2,"pid":1,"tid":{},"args":{{"a":[1,{{"b":"\u00e9"}}],"s":"x\ny"}}}},"#,
                i % 7,
                i * 3,
                i % 4
            )
        })
        .collect();
    let array = format!("[{generated}");
    inputs.push(format!("{{\"traceEvents\":{array}{{}}],\"metadata\":{{\"k\":1}}}}").into_bytes());
    inputs.push(format!("{array}{{}}]").into_bytes());
    // Cut inside an event, between events, after a comma; a bare array without `]`.
    let whole = format!("{{\"traceEvents\":{array}{{\"ph\":\"B\",\"ts\":1}}]}}");
    for cut in [whole.len() - 3, whole.len() - 40, whole.len() / 2, 40] {
        inputs.push(whole.as_bytes()[..cut].to_vec());
    }
    inputs.push(array.trim_end_matches(',').as_bytes().to_vec());
    // A syntax error and a bad duration (reading stops) in the middle.
    inputs.push(format!("{{\"traceEvents\":{array}{{\"ph\":\"X\",\"ts\":1,]}}").into_bytes());
    inputs.push(
        format!("{array}{{\"ph\":\"X\",\"ts\":1,\"dur\":\"x\"}},{generated}{{}}]").into_bytes(),
    );
    inputs.push(
        format!("{{\"traceEvents\":{array}{{\"ph\":\"X\",\"ts\":1,\"dur\":\"x\"}}]}}").into_bytes(),
    );
    for (i, json) in inputs.iter().enumerate() {
        let inline = outcome(json, usize::MAX, 1 << 20);
        for (lex_inline, step) in [(0, 1 << 20), (1, 7), (5, 100_000), (17, 1)] {
            assert_eq!(
                outcome(json, lex_inline, step),
                inline,
                "input {i}, lexing thread after {lex_inline} events, {step}-byte reads"
            );
        }
    }
}

#[test]
fn a_file_of_many_chunks_lexed_on_a_second_thread_imports_as_on_one() {
    // More than three chunks: the lexer hands each chunk's buffer back and the import thread
    // reads the next ones into them, with batches reused the same way.
    let mut json = String::from("{\"traceEvents\":[");
    let mut i = 0u64;
    while json.len() < 3 * CHUNK + CHUNK / 2 {
        json.push_str(&format!(
            r#"{{"name":"n{}","ph":"X","ts":{}.25,"dur":3,"pid":1,"tid":{},"args":{{"i":{i}}}}},"#,
            i % 11,
            i * 5,
            i % 13
        ));
        i += 1;
    }
    json.push_str("{}]}");
    let whole = outcome(json.as_bytes(), usize::MAX, 1 << 20);
    let mut sink = Sink::new();
    let mut input = Trickle {
        bytes: json.as_bytes(),
        step: 1 << 20,
    };
    parse_stream_lexing(&mut input, &mut sink, &ctx(), 0).expect("parses");
    assert_eq!(slices(&sink).len() as u64, i, "every event of every chunk");
    for (lex_inline, step) in [(0, 1 << 20), (3, 65_536)] {
        assert_eq!(
            outcome(json.as_bytes(), lex_inline, step),
            whole,
            "lexing thread after {lex_inline} events, {step}-byte reads"
        );
    }
    // Cut inside the last chunk: what was read stays.
    let cut = &json.as_bytes()[..json.len() - 100];
    assert_eq!(outcome(cut, 0, 1 << 20), outcome(cut, usize::MAX, 1 << 20));
}

#[test]
fn what_follows_the_array_survives_an_event_larger_than_a_chunk() {
    // An event over a chunk long makes the stream read across chunk boundaries, so the
    // array can end inside a chunk the stream has only partly read: the metadata after it
    // must still be read, whatever the boundary.
    let small = |i: usize| format!(r#"{{"name":"s","ph":"X","ts":{i},"dur":1,"pid":1,"tid":1}},"#);
    let big = format!(
        r#"{{"name":"big","ph":"X","ts":1,"dur":1,"pid":1,"tid":2,"args":{{"a":"{}"}}}},"#,
        "x".repeat(CHUNK + CHUNK / 2)
    );
    let trailer = format!(
        r#"{{}}],"metadata":{{"pad":"{}","foo":"bar"}}}}"#,
        "p".repeat(300_000)
    );
    for padding in [0, 3_000, 9_000, 15_000, 21_000] {
        let mut json = String::from("{\"traceEvents\":[");
        (0..200).for_each(|i| json.push_str(&small(i)));
        json.push_str(&big);
        (0..padding).for_each(|i| json.push_str(&small(i)));
        json.push_str(&trailer);
        let whole = outcome(json.as_bytes(), usize::MAX, 1 << 20);
        assert!(whole.contains("json_metadata.foo"), "padding {padding}");
        assert_eq!(
            outcome(json.as_bytes(), 0, 1 << 20),
            whole,
            "padding {padding}: lexed on a second thread"
        );
    }
}

#[test]
fn an_object_without_trace_events_says_nothing_was_read() {
    // A V8 `.cpuprofile` (what `node --cpu-prof` writes) is JSON but no trace: nothing is
    // imported, and the stats say why instead of an empty trace that says nothing.
    let cpuprofile = ok(
        r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}}],"startTime":1,"endTime":2,"samples":[1],"timeDeltas":[1]}"#,
    );
    assert_eq!(stat(&cpuprofile, "json_without_trace_events"), 1);
    assert_eq!(
        stat(&ok(r#"{"traceEvents":[]}"#), "json_without_trace_events"),
        0
    );
    assert_eq!(
        stat(
            &ok(r#"{"metadata":{},"traceEvents":[]}"#),
            "json_without_trace_events"
        ),
        0
    );
    assert_eq!(stat(&ok("[]"), "json_without_trace_events"), 0);
}
