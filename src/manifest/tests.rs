//! The manifest reader against every rule and error text of the spec.

use super::*;

/// The error message of parsing `json`.
fn err(json: &str) -> String {
    match parse(json.as_bytes()) {
        Ok(m) => panic!("expected an error for {json}, got {m:?}"),
        Err(e) => e.to_string(),
    }
}

/// Parses a manifest body (the object under `perfetto_manifest`).
fn body(inner: &str) -> Result<Manifest, ManifestError> {
    parse(format!("{{\"perfetto_manifest\": {inner}}}").as_bytes())
}

/// The error message of a manifest body.
fn body_err(inner: &str) -> String {
    match body(inner) {
        Ok(m) => panic!("expected an error for {inner}, got {m:?}"),
        Err(e) => e.to_string(),
    }
}

/// The error message of a version-1 manifest with `files` = `files`.
fn files_err(files: &str) -> String {
    body_err(&format!("{{\"version\": 1, \"files\": {files}}}"))
}

/// The error message of the step-9 checks on a manifest body that parses.
fn ref_err(inner: &str) -> String {
    let m = match body(inner) {
        Ok(m) => m,
        Err(e) => panic!("{inner} should parse: {e}"),
    };
    match m.check_references() {
        Ok(()) => panic!("expected a reference error for {inner}"),
        Err(e) => e.to_string(),
    }
}

fn ok(inner: &str) -> Manifest {
    match body(inner) {
        Ok(m) => m,
        Err(e) => panic!("{inner} should parse: {e}"),
    }
}

const UNKNOWN_CLOCK_TAIL: &str =
    ". Use one of REALTIME, REALTIME_COARSE, MONOTONIC, MONOTONIC_COARSE, MONOTONIC_RAW, \
     BOOTTIME.";

// ---------------------------------------------------------------- is_manifest

#[test]
fn is_manifest_plain() {
    assert!(is_manifest(b"{\"perfetto_manifest\": {\"version\": 1}}"));
}

#[test]
fn is_manifest_leading_whitespace() {
    assert!(is_manifest(b"\n\t  \r\n{\"perfetto_manifest\": {}}"));
}

#[test]
fn is_manifest_whitespace_inside_is_removed() {
    assert!(is_manifest(b"{ \"perfetto_manifest\" : {}}"));
    assert!(is_manifest(b"{\n  \"perfetto_manifest\"\n: {}}"));
    assert!(is_manifest(b"\x0b\x0c{\x0b\"perfetto_manifest\"}"));
}

#[test]
fn is_manifest_key_must_come_first() {
    assert!(!is_manifest(
        b"{\"traceEvents\": [], \"perfetto_manifest\": {\"version\": 1}}"
    ));
}

#[test]
fn is_manifest_rejects_other_content() {
    assert!(!is_manifest(b""));
    assert!(!is_manifest(b"   "));
    assert!(!is_manifest(b"[{\"perfetto_manifest\": 1}]"));
    assert!(!is_manifest(b"{\"perfetto_manifes\": 1}"));
    assert!(!is_manifest(b"{'perfetto_manifest': 1}"));
    assert!(!is_manifest(b"{\"PERFETTO_MANIFEST\": 1}"));
    assert!(!is_manifest(b"PK\x03\x04{\"perfetto_manifest\""));
    assert!(!is_manifest(&[0xff, 0x00, 0x7b]));
}

#[test]
fn is_manifest_only_looks_at_first_128_bytes() {
    // 108 spaces + 20-byte prefix = 128: still inside the window.
    let mut inside = vec![b' '; 108];
    inside.extend_from_slice(b"{\"perfetto_manifest\": {}}");
    assert!(is_manifest(&inside));
    // One more space pushes the closing quote out of the window.
    let mut outside = vec![b' '; 109];
    outside.extend_from_slice(b"{\"perfetto_manifest\": {}}");
    assert!(!is_manifest(&outside));
}

#[test]
fn is_manifest_on_a_truncated_prefix_is_false() {
    assert!(!is_manifest(b"{\"perfetto_manif"));
}

// ---------------------------------------------------------------- step 2: JSON

#[test]
fn empty_input() {
    assert_eq!(err(""), "perfetto_manifest: Empty JSON input");
    assert_eq!(err(" \n\t\r "), "perfetto_manifest: Empty JSON input");
}

#[test]
fn json_syntax_error() {
    let msg = err("{\"perfetto_manifest\": {\"version\": 1,}");
    assert!(
        msg.starts_with("perfetto_manifest: Failed to parse object: "),
        "{msg}"
    );
    let msg = err("{\"perfetto_manifest\": ");
    assert!(
        msg.starts_with("perfetto_manifest: Failed to parse object: "),
        "{msg}"
    );
    let msg = err("{\"perfetto_manifest\": {\"version\": 1}} trailing");
    assert!(
        msg.starts_with("perfetto_manifest: Failed to parse object: "),
        "{msg}"
    );
}

#[test]
fn invalid_utf8_is_a_json_error() {
    let e = parse(b"{\"perfetto_manifest\": {\"version\": 1, \"x\": \"\xff\"}}");
    assert!(matches!(e, Err(ManifestError::Json(_))), "{e:?}");
}

#[test]
fn json_error_before_top_level_error() {
    let msg = err("[1, 2");
    assert!(msg.starts_with("perfetto_manifest: Failed to parse object: "));
}

#[test]
fn duplicate_keys_keep_last_value() {
    let m = ok("{\"version\": 7, \"version\": 1}");
    assert_eq!(m, Manifest::default());
    assert_eq!(
        body_err("{\"version\": 1, \"version\": 2}"),
        "perfetto_manifest: unsupported version: 2. Only version 1 is supported; set \
         \"version\": 1."
    );
    let m = ok(
        "{\"version\": 1, \"trace_time\": {\"clock\": \"BOOTIME\", \"clock\": \
                \"REALTIME\"}}",
    );
    assert_eq!(m.trace_time.map(|t| t.clock), Some(1));
}

// ---------------------------------------------------------------- step 3: top level

#[test]
fn top_level_must_be_object_with_manifest_key() {
    let want = "perfetto_manifest: expected a JSON object with a top-level perfetto_manifest key";
    assert_eq!(err("[]"), want);
    assert_eq!(err("1"), want);
    assert_eq!(err("\"perfetto_manifest\""), want);
    assert_eq!(err("null"), want);
    assert_eq!(err("{}"), want);
    assert_eq!(err("{\"version\": 1}"), want);
    assert_eq!(err("{\"perfetto_manifest\": 1}"), want);
    assert_eq!(err("{\"perfetto_manifest\": [{\"version\": 1}]}"), want);
    assert_eq!(err("{\"perfetto_manifest\": null}"), want);
}

#[test]
fn manifest_key_need_not_be_first_for_parse() {
    // Detection needs it first; parsing does not care.
    let m = parse(b"{\"other\": 1, \"perfetto_manifest\": {\"version\": 1}}");
    assert_eq!(m, Ok(Manifest::default()));
}

// ---------------------------------------------------------------- step 4: version

#[test]
fn missing_version() {
    assert_eq!(
        body_err("{}"),
        "perfetto_manifest: missing required field: version"
    );
    assert_eq!(
        body_err("{\"files\": []}"),
        "perfetto_manifest: missing required field: version"
    );
}

#[test]
fn version_must_be_integer() {
    let want = "perfetto_manifest: version must be an integer";
    assert_eq!(body_err("{\"version\": 1.0}"), want);
    assert_eq!(body_err("{\"version\": 1.5}"), want);
    assert_eq!(body_err("{\"version\": 1e0}"), want);
    assert_eq!(body_err("{\"version\": \"1\"}"), want);
    assert_eq!(body_err("{\"version\": true}"), want);
    assert_eq!(body_err("{\"version\": null}"), want);
    assert_eq!(body_err("{\"version\": [1]}"), want);
    assert_eq!(body_err("{\"version\": 18446744073709551615}"), want);
}

#[test]
fn unsupported_version() {
    assert_eq!(
        body_err("{\"version\": 99}"),
        "perfetto_manifest: unsupported version: 99. Only version 1 is supported; set \
         \"version\": 1."
    );
    assert_eq!(
        body_err("{\"version\": 0}"),
        "perfetto_manifest: unsupported version: 0. Only version 1 is supported; set \
         \"version\": 1."
    );
    assert_eq!(
        body_err("{\"version\": -1}"),
        "perfetto_manifest: unsupported version: -1. Only version 1 is supported; set \
         \"version\": 1."
    );
}

#[test]
fn minimal_manifest() {
    assert_eq!(ok("{\"version\": 1}"), Manifest::default());
}

// ---------------------------------------------------------------- step 5: trace_time

#[test]
fn trace_time_must_be_object() {
    let want = "perfetto_manifest: trace_time must be an object";
    assert_eq!(
        body_err("{\"version\": 1, \"trace_time\": \"BOOTTIME\"}"),
        want
    );
    assert_eq!(body_err("{\"version\": 1, \"trace_time\": null}"), want);
    assert_eq!(body_err("{\"version\": 1, \"trace_time\": []}"), want);
}

#[test]
fn trace_time_needs_clock() {
    assert_eq!(
        body_err("{\"version\": 1, \"trace_time\": {\"file\": \"a.pb\"}}"),
        "perfetto_manifest: trace_time needs a clock"
    );
}

#[test]
fn trace_time_clock_name_must_be_string() {
    assert_eq!(
        body_err("{\"version\": 1, \"trace_time\": {\"clock\": 6}}"),
        "perfetto_manifest: clock name must be a string"
    );
}

#[test]
fn trace_time_unknown_clock_name() {
    assert_eq!(
        body_err("{\"version\": 1, \"trace_time\": {\"clock\": \"BOOTIME\"}}"),
        format!("perfetto_manifest: unknown clock name: BOOTIME{UNKNOWN_CLOCK_TAIL}")
    );
}

#[test]
fn clock_names_are_case_sensitive() {
    assert_eq!(
        body_err("{\"version\": 1, \"trace_time\": {\"clock\": \"boottime\"}}"),
        format!("perfetto_manifest: unknown clock name: boottime{UNKNOWN_CLOCK_TAIL}")
    );
    assert_eq!(
        body_err("{\"version\": 1, \"trace_time\": {\"clock\": \"\"}}"),
        format!("perfetto_manifest: unknown clock name: {UNKNOWN_CLOCK_TAIL}")
    );
}

#[test]
fn every_clock_name_parses() {
    for (name, id) in CLOCK_NAMES {
        let m = ok(&format!(
            "{{\"version\": 1, \"trace_time\": {{\"clock\": \"{name}\"}}}}"
        ));
        assert_eq!(m.trace_time.map(|t| t.clock), Some(id), "{name}");
        assert_eq!(clock_id(name), Some(id));
        assert_eq!(clock_name(id), Some(name));
    }
    assert_eq!(clock_id("TSC"), None);
    assert_eq!(clock_name(0), None);
}

#[test]
fn trace_time_file_must_be_string() {
    assert_eq!(
        body_err("{\"version\": 1, \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": 1}}"),
        "perfetto_manifest: trace_time: file must be a string"
    );
}

#[test]
fn trace_time_machine_must_be_string() {
    assert_eq!(
        body_err(
            "{\"version\": 1, \"trace_time\": {\"clock\": \"BOOTTIME\", \"machine\": \
             {\"name\": \"vm\"}}}"
        ),
        "perfetto_manifest: trace_time: machine must be a string"
    );
}

#[test]
fn trace_time_fields() {
    let m = ok(
        "{\"version\": 1, \"trace_time\": {\"clock\": \"REALTIME\", \"file\": \
                \"a.pb\", \"machine\": \"vm\", \"extra\": true}}",
    );
    assert_eq!(
        m.trace_time,
        Some(TraceTime {
            clock: 1,
            file: Some("a.pb".into()),
            machine: Some("vm".into()),
        })
    );
}

// ---------------------------------------------------------------- step 6: files

#[test]
fn files_must_be_array() {
    let want = "perfetto_manifest: files must be an array";
    assert_eq!(files_err("{}"), want);
    assert_eq!(files_err("\"a.pb\""), want);
    assert_eq!(files_err("null"), want);
}

#[test]
fn files_entries_must_be_objects_with_string_path() {
    let want = "perfetto_manifest: files entries must be objects with a string path";
    assert_eq!(files_err("[\"a.pb\"]"), want);
    assert_eq!(files_err("[{}]"), want);
    assert_eq!(files_err("[{\"path\": 1}]"), want);
    assert_eq!(files_err("[{\"path\": null}]"), want);
    assert_eq!(files_err("[{\"path\": \"a.pb\"}, 3]"), want);
}

#[test]
fn clocks_must_be_object() {
    assert_eq!(
        files_err("[{\"path\": \"a.pb\", \"clocks\": []}]"),
        "perfetto_manifest: clocks must be an object"
    );
}

#[test]
fn clocks_machine_must_be_string() {
    assert_eq!(
        files_err("[{\"path\": \"a.pb\", \"clocks\": {\"machine\": 7}}]"),
        "perfetto_manifest: clocks: machine must be a string"
    );
}

#[test]
fn clocks_source_clock_name_errors() {
    assert_eq!(
        files_err(
            "[{\"path\": \"a.pb\", \"clocks\": {\"clock\": 6, \"sync_to\": {\"file\": \
             \"b.pb\"}}}]"
        ),
        "perfetto_manifest: clock name must be a string"
    );
    assert_eq!(
        files_err(
            "[{\"path\": \"a.pb\", \"clocks\": {\"clock\": \"TSC\", \"sync_to\": {\"file\": \
             \"b.pb\"}}}]"
        ),
        format!("perfetto_manifest: unknown clock name: TSC{UNKNOWN_CLOCK_TAIL}")
    );
}

#[test]
fn clocks_sync_to_required() {
    assert_eq!(
        files_err("[{\"path\": \"a.pb\", \"clocks\": {\"offset_ns\": 5}}]"),
        "perfetto_manifest: clocks: a sync_to block is required. Manual clock handling \
         relates this file to a clock in another trace, e.g. \"sync_to\": {\"file\": \
         \"other.pb\"}."
    );
}

#[test]
fn clocks_sync_to_must_be_object() {
    assert_eq!(
        files_err("[{\"path\": \"a.pb\", \"clocks\": {\"sync_to\": \"b.pb\"}}]"),
        "perfetto_manifest: clocks: sync_to must be an object"
    );
}

#[test]
fn clocks_sync_to_file_required() {
    let want = "perfetto_manifest: clocks: sync_to.file is required and must be a string";
    // The conformance case error_sync_to_without_file.
    assert_eq!(
        files_err(
            "[{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}, \"clocks\": \
             {\"clock\": \"BOOTTIME\", \"offset_ns\": 1, \"sync_to\": {\"machine\": \
             \"phone\", \"clock\": \"BOOTTIME\"}}}]"
        ),
        want
    );
    assert_eq!(
        files_err("[{\"path\": \"a.pb\", \"clocks\": {\"sync_to\": {\"file\": 3}}}]"),
        want
    );
}

#[test]
fn clocks_sync_to_machine_must_be_string() {
    assert_eq!(
        files_err(
            "[{\"path\": \"a.pb\", \"clocks\": {\"sync_to\": {\"file\": \"b.pb\", \
             \"machine\": 0}}}]"
        ),
        "perfetto_manifest: clocks: sync_to.machine must be a string"
    );
}

#[test]
fn clocks_reference_clock_name_errors() {
    assert_eq!(
        files_err(
            "[{\"path\": \"a.pb\", \"clocks\": {\"sync_to\": {\"file\": \"b.pb\", \
             \"clock\": null}}}]"
        ),
        "perfetto_manifest: clock name must be a string"
    );
    assert_eq!(
        files_err(
            "[{\"path\": \"a.pb\", \"clocks\": {\"sync_to\": {\"file\": \"b.pb\", \
             \"clock\": \"Boottime\"}}}]"
        ),
        format!("perfetto_manifest: unknown clock name: Boottime{UNKNOWN_CLOCK_TAIL}")
    );
}

fn offset_err(offset: &str) -> String {
    files_err(&format!(
        "[{{\"path\": \"a.pb\", \"clocks\": {{\"sync_to\": {{\"file\": \"b.pb\"}}, \
         \"offset_ns\": {offset}}}}}]"
    ))
}

fn offset_ok(offset: &str) -> i64 {
    let m = ok(&format!(
        "{{\"version\": 1, \"files\": [{{\"path\": \"a.pb\", \"clocks\": {{\"sync_to\": \
         {{\"file\": \"b.pb\"}}, \"offset_ns\": {offset}}}}}]}}"
    ));
    match m.files[0].clocks.as_ref() {
        Some(c) => c.offset_ns,
        None => panic!("no clocks"),
    }
}

#[test]
fn clocks_offset_must_be_integer() {
    let want = "perfetto_manifest: clocks: offset_ns must be an integer";
    assert_eq!(offset_err("1.5"), want);
    assert_eq!(offset_err("1.0"), want);
    assert_eq!(offset_err("1e3"), want);
    assert_eq!(offset_err("\"5\""), want);
    assert_eq!(offset_err("null"), want);
    assert_eq!(offset_err("true"), want);
    // Above i64::MAX: not representable as an integer.
    assert_eq!(offset_err("9223372036854775808"), want);
}

#[test]
fn clocks_offset_out_of_range_is_only_int64_min() {
    assert_eq!(
        offset_err("-9223372036854775808"),
        "perfetto_manifest: clocks: offset_ns is out of range"
    );
    assert_eq!(offset_ok("-9223372036854775807"), i64::MIN + 1);
    assert_eq!(offset_ok("9223372036854775807"), i64::MAX);
    assert_eq!(offset_ok("-250"), -250);
    assert_eq!(offset_ok("0"), 0);
}

#[test]
fn clocks_offset_defaults_to_zero() {
    let m = ok(
        "{\"version\": 1, \"files\": [{\"path\": \"a.json\", \"clocks\": \
                {\"sync_to\": {\"file\": \"b.pb\"}}}]}",
    );
    assert_eq!(
        m.files[0].clocks,
        Some(ClockOverride {
            clock: None,
            machine: None,
            sync_to: SyncTo {
                file: "b.pb".into(),
                machine: None,
                clock: None,
            },
            offset_ns: 0,
        })
    );
    assert!(m.files[0]
        .clocks
        .as_ref()
        .is_some_and(ClockOverride::is_pin));
}

#[test]
fn machine_and_machines_mutually_exclusive() {
    // The conformance case error_machine_and_machines_exclusive.
    assert_eq!(
        files_err(
            "[{\"path\": \"app.json\", \"machine\": {\"name\": \"a\"}, \"machines\": \
             [{\"id\": 0, \"name\": \"b\"}]}]"
        ),
        "perfetto_manifest: machine and machines are mutually exclusive. Use `machine` for \
         a single-machine file, or `machines` to remap a multi-machine proto's embedded \
         ids; not both."
    );
    // Presence is enough, whatever the values.
    assert_eq!(
        files_err("[{\"path\": \"a\", \"machine\": 1, \"machines\": 2}]"),
        "perfetto_manifest: machine and machines are mutually exclusive. Use `machine` for \
         a single-machine file, or `machines` to remap a multi-machine proto's embedded \
         ids; not both."
    );
}

#[test]
fn machine_must_be_object_with_string_name() {
    let want = "perfetto_manifest: machine must be an object with a string name, e.g. \
                \"machine\": {\"name\": \"phone\"}.";
    assert_eq!(
        files_err("[{\"path\": \"a\", \"machine\": \"phone\"}]"),
        want
    );
    assert_eq!(files_err("[{\"path\": \"a\", \"machine\": {}}]"), want);
    assert_eq!(
        files_err("[{\"path\": \"a\", \"machine\": {\"name\": 3}}]"),
        want
    );
    assert_eq!(files_err("[{\"path\": \"a\", \"machine\": null}]"), want);
}

#[test]
fn machine_name_must_be_non_empty() {
    assert_eq!(
        files_err("[{\"path\": \"app.json\", \"machine\": {\"name\": \"\"}}]"),
        "perfetto_manifest: machine: name must be non-empty"
    );
}

#[test]
fn machines_must_be_array() {
    assert_eq!(
        files_err("[{\"path\": \"a\", \"machines\": {\"id\": 0, \"name\": \"x\"}}]"),
        "perfetto_manifest: machines must be an array"
    );
}

#[test]
fn machines_entries_need_id_and_name() {
    let want = "perfetto_manifest: machines entries need an integer id and a string name, \
                e.g. \"machines\": [{\"id\": 0, \"name\": \"phone\"}].";
    assert_eq!(files_err("[{\"path\": \"a\", \"machines\": [7]}]"), want);
    assert_eq!(
        files_err("[{\"path\": \"a\", \"machines\": [{\"name\": \"x\"}]}]"),
        want
    );
    assert_eq!(
        files_err("[{\"path\": \"a\", \"machines\": [{\"id\": 0}]}]"),
        want
    );
    assert_eq!(
        files_err("[{\"path\": \"a\", \"machines\": [{\"id\": \"0\", \"name\": \"x\"}]}]"),
        want
    );
    assert_eq!(
        files_err("[{\"path\": \"a\", \"machines\": [{\"id\": 0, \"name\": 1}]}]"),
        want
    );
    // Shape is checked before the range.
    assert_eq!(
        files_err("[{\"path\": \"a\", \"machines\": [{\"id\": -1, \"name\": 1}]}]"),
        want
    );
}

fn machine_ids(machines: &str) -> Result<Vec<u32>, ManifestError> {
    let m = body(&format!(
        "{{\"version\": 1, \"files\": [{{\"path\": \"a\", \"machines\": {machines}}}]}}"
    ))?;
    Ok(m.files[0].machines.iter().flatten().map(|e| e.id).collect())
}

#[test]
fn machines_id_out_of_range() {
    let out = Err(ManifestError::MachinesIdOutOfRange);
    assert_eq!(
        ManifestError::MachinesIdOutOfRange.to_string(),
        "perfetto_manifest: machines: id must be in [0, 4294967295]"
    );
    // The conformance case error_machines_id_out_of_range.
    assert_eq!(machine_ids("[{\"id\": 4294967296, \"name\": \"vm\"}]"), out);
    assert_eq!(machine_ids("[{\"id\": -1, \"name\": \"vm\"}]"), out);
    assert_eq!(machine_ids("[{\"id\": -1.5, \"name\": \"vm\"}]"), out);
    assert_eq!(
        machine_ids("[{\"id\": 4294967296.5, \"name\": \"vm\"}]"),
        out
    );
    assert_eq!(
        machine_ids("[{\"id\": 18446744073709551615, \"name\": \"vm\"}]"),
        out
    );
    assert_eq!(machine_ids("[{\"id\": 1e300, \"name\": \"vm\"}]"), out);
    assert_eq!(machine_ids("[{\"id\": -1e300, \"name\": \"vm\"}]"), out);
    assert_eq!(
        files_err("[{\"path\": \"a\", \"machines\": [{\"id\": -1, \"name\": \"vm\"}]}]"),
        "perfetto_manifest: machines: id must be in [0, 4294967295]"
    );
}

#[test]
fn machines_id_any_number_truncated() {
    assert_eq!(
        machine_ids(
            "[{\"id\": 0, \"name\": \"a\"}, {\"id\": 7.9, \"name\": \"b\"}, {\"id\": \
             4294967295, \"name\": \"c\"}, {\"id\": 4294967295.7, \"name\": \"d\"}, {\"id\": \
             -0.5, \"name\": \"e\"}, {\"id\": 1e3, \"name\": \"f\"}]"
        ),
        Ok(vec![0, 7, u32::MAX, u32::MAX, 0, 1000])
    );
}

#[test]
fn machines_name_must_be_non_empty() {
    assert_eq!(
        files_err("[{\"path\": \"a\", \"machines\": [{\"id\": 0, \"name\": \"\"}]}]"),
        "perfetto_manifest: machines: name must be non-empty"
    );
    // Range before name.
    assert_eq!(
        files_err("[{\"path\": \"a\", \"machines\": [{\"id\": -1, \"name\": \"\"}]}]"),
        "perfetto_manifest: machines: id must be in [0, 4294967295]"
    );
}

#[test]
fn empty_machines_block_is_multi_machine() {
    let m = ok("{\"version\": 1, \"files\": [{\"path\": \"a\", \"machines\": []}]}");
    assert!(m.files[0].is_multi_machine());
    assert_eq!(m.files[0].base_machine(), None);
}

// ---------------------------------------------------------------- step 7: attributes

#[test]
fn attributes_must_be_object() {
    let want = "perfetto_manifest: attributes must be an object of string or integer \
                values, e.g. \"attributes\": {\"benchmark\": \"startup\"}.";
    assert_eq!(body_err("{\"version\": 1, \"attributes\": []}"), want);
    assert_eq!(body_err("{\"version\": 1, \"attributes\": \"x\"}"), want);
    assert_eq!(body_err("{\"version\": 1, \"attributes\": null}"), want);
}

#[test]
fn attributes_keys_must_be_non_empty() {
    assert_eq!(
        body_err("{\"version\": 1, \"attributes\": {\"\": 1}}"),
        "perfetto_manifest: attributes: keys must be non-empty"
    );
}

#[test]
fn attributes_values_must_be_string_or_integer() {
    // The conformance case error_attributes_bad_value.
    assert_eq!(
        body_err("{\"version\": 1, \"attributes\": {\"flags\": [\"a\", \"b\"]}}"),
        "perfetto_manifest: attributes: 'flags' must be a string or an integer"
    );
    for bad in [
        "true",
        "false",
        "1.5",
        "1.0",
        "null",
        "{}",
        "[]",
        "18446744073709551615",
    ] {
        assert_eq!(
            body_err(&format!(
                "{{\"version\": 1, \"attributes\": {{\"k\": {bad}}}}}"
            )),
            "perfetto_manifest: attributes: 'k' must be a string or an integer",
            "{bad}"
        );
    }
}

#[test]
fn attributes_checked_in_sorted_key_order() {
    // "b" has a bad value and comes first in the document, but "a" sorts first.
    assert_eq!(
        body_err("{\"version\": 1, \"attributes\": {\"b\": true, \"a\": null}}"),
        "perfetto_manifest: attributes: 'a' must be a string or an integer"
    );
    // The empty key sorts before everything.
    assert_eq!(
        body_err("{\"version\": 1, \"attributes\": {\"a\": null, \"\": 1}}"),
        "perfetto_manifest: attributes: keys must be non-empty"
    );
}

#[test]
fn attributes_sorted_bytewise() {
    let m = ok(
        "{\"version\": 1, \"attributes\": {\"zeta\": \"z\", \"Beta\": -3, \"alpha\": \
                9223372036854775807, \"a\": \"\", \"_x\": 0}}",
    );
    assert_eq!(
        m.attributes,
        vec![
            ("Beta".to_string(), AttrValue::Int(-3)),
            ("_x".to_string(), AttrValue::Int(0)),
            ("a".to_string(), AttrValue::Str(String::new())),
            ("alpha".to_string(), AttrValue::Int(i64::MAX)),
            ("zeta".to_string(), AttrValue::Str("z".into())),
        ]
    );
}

#[test]
fn attributes_duplicate_key_keeps_last() {
    let m = ok("{\"version\": 1, \"attributes\": {\"k\": true, \"k\": 5}}");
    assert_eq!(m.attributes, vec![("k".to_string(), AttrValue::Int(5))]);
}

// ---------------------------------------------------------------- validation order

#[test]
fn order_version_before_everything_else() {
    assert_eq!(
        body_err("{\"trace_time\": 1, \"files\": 1, \"attributes\": 1}"),
        "perfetto_manifest: missing required field: version"
    );
    assert_eq!(
        body_err("{\"version\": 2, \"trace_time\": 1, \"files\": 1}"),
        "perfetto_manifest: unsupported version: 2. Only version 1 is supported; set \
         \"version\": 1."
    );
}

#[test]
fn order_trace_time_before_files_before_attributes() {
    assert_eq!(
        body_err("{\"attributes\": 1, \"files\": 1, \"trace_time\": 1, \"version\": 1}"),
        "perfetto_manifest: trace_time must be an object"
    );
    assert_eq!(
        body_err("{\"attributes\": 1, \"files\": 1, \"version\": 1}"),
        "perfetto_manifest: files must be an array"
    );
}

#[test]
fn order_trace_time_fields() {
    // clock before file before machine.
    assert_eq!(
        body_err("{\"version\": 1, \"trace_time\": {\"machine\": 1, \"file\": 1}}"),
        "perfetto_manifest: trace_time needs a clock"
    );
    assert_eq!(
        body_err(
            "{\"version\": 1, \"trace_time\": {\"machine\": 1, \"file\": 1, \"clock\": \"X\"}}"
        ),
        format!("perfetto_manifest: unknown clock name: X{UNKNOWN_CLOCK_TAIL}")
    );
    assert_eq!(
        body_err(
            "{\"version\": 1, \"trace_time\": {\"machine\": 1, \"file\": 1, \"clock\": \
             \"BOOTTIME\"}}"
        ),
        "perfetto_manifest: trace_time: file must be a string"
    );
}

#[test]
fn order_files_entries_in_order() {
    assert_eq!(
        files_err(
            "[{\"path\": \"a\", \"machine\": {\"name\": \"\"}}, {\"path\": \"b\", \
             \"machines\": 1}]"
        ),
        "perfetto_manifest: machine: name must be non-empty"
    );
    assert_eq!(
        files_err("[{\"path\": \"a\", \"machines\": 1}, {\"path\": \"b\", \"machine\": 1}]"),
        "perfetto_manifest: machines must be an array"
    );
}

#[test]
fn order_within_a_files_entry() {
    // path before clocks.
    assert_eq!(
        files_err("[{\"clocks\": 1}]"),
        "perfetto_manifest: files entries must be objects with a string path"
    );
    // clocks before machine / machines.
    assert_eq!(
        files_err(
            "[{\"path\": \"a\", \"machine\": 1, \"machines\": 1, \"clocks\": {\"offset_ns\": \
             1.5}}]"
        ),
        "perfetto_manifest: clocks: a sync_to block is required. Manual clock handling \
         relates this file to a clock in another trace, e.g. \"sync_to\": {\"file\": \
         \"other.pb\"}."
    );
    // Within clocks: machine, then source clock, then sync_to, then offset.
    assert_eq!(
        files_err("[{\"path\": \"a\", \"clocks\": {\"machine\": 1, \"clock\": 1}}]"),
        "perfetto_manifest: clocks: machine must be a string"
    );
    assert_eq!(
        files_err("[{\"path\": \"a\", \"clocks\": {\"clock\": \"X\"}}]"),
        format!("perfetto_manifest: unknown clock name: X{UNKNOWN_CLOCK_TAIL}")
    );
    assert_eq!(
        files_err(
            "[{\"path\": \"a\", \"clocks\": {\"offset_ns\": 1.5, \"sync_to\": {\"machine\": \
             1}}}]"
        ),
        "perfetto_manifest: clocks: sync_to.file is required and must be a string"
    );
    assert_eq!(
        files_err(
            "[{\"path\": \"a\", \"clocks\": {\"offset_ns\": 1.5, \"sync_to\": {\"file\": \
             \"b\", \"machine\": 1, \"clock\": \"X\"}}}]"
        ),
        "perfetto_manifest: clocks: sync_to.machine must be a string"
    );
    assert_eq!(
        files_err(
            "[{\"path\": \"a\", \"clocks\": {\"offset_ns\": 1.5, \"sync_to\": {\"file\": \
             \"b\", \"clock\": \"X\"}}}]"
        ),
        format!("perfetto_manifest: unknown clock name: X{UNKNOWN_CLOCK_TAIL}")
    );
    // machine/machines exclusivity before the machine's own shape.
    assert_eq!(
        files_err("[{\"path\": \"a\", \"machine\": {\"name\": \"\"}, \"machines\": 1}]"),
        "perfetto_manifest: machine and machines are mutually exclusive. Use `machine` for \
         a single-machine file, or `machines` to remap a multi-machine proto's embedded \
         ids; not both."
    );
}

#[test]
fn order_files_before_attributes() {
    assert_eq!(
        body_err(
            "{\"version\": 1, \"attributes\": {\"\": 1}, \"files\": [{\"path\": \"a\", \
             \"machine\": {\"name\": \"\"}}]}"
        ),
        "perfetto_manifest: machine: name must be non-empty"
    );
}

#[test]
fn parse_does_not_check_references() {
    let m = ok(
        "{\"version\": 1, \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": \
                \"ghost\"}, \"attributes\": {\"k\": 1}}",
    );
    assert_eq!(m.attributes.len(), 1);
    assert!(m.check_references().is_err());
}

// ---------------------------------------------------------------- full example

const SPEC_EXAMPLE: &str = r#"{
"perfetto_manifest": {
"version": 1,
"trace_time": {"clock": "BOOTTIME"},
"files": [
{"path": "phone.pftrace", "machine": {"name": "phone"}},
{"path": "watch.pftrace", "machine": {"name": "watch"}},
{
"path": "app_log.json",
"clocks": {
"sync_to": {"file": "phone.pftrace", "clock": "BOOTTIME"},
"offset_ns": 250000000
}
}
]
}
}"#;

#[test]
fn spec_example_round_trip() {
    assert!(is_manifest(SPEC_EXAMPLE.as_bytes()));
    let m = match parse(SPEC_EXAMPLE.as_bytes()) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    };
    let want = Manifest {
        trace_time: Some(TraceTime {
            clock: 6,
            file: None,
            machine: None,
        }),
        files: vec![
            FileEntry {
                path: "phone.pftrace".into(),
                machine: Some("phone".into()),
                machines: None,
                clocks: None,
            },
            FileEntry {
                path: "watch.pftrace".into(),
                machine: Some("watch".into()),
                machines: None,
                clocks: None,
            },
            FileEntry {
                path: "app_log.json".into(),
                machine: None,
                machines: None,
                clocks: Some(ClockOverride {
                    clock: None,
                    machine: None,
                    sync_to: SyncTo {
                        file: "phone.pftrace".into(),
                        machine: None,
                        clock: Some(6),
                    },
                    offset_ns: 250_000_000,
                }),
            },
        ],
        attributes: vec![],
    };
    assert_eq!(m, want);
    assert_eq!(m.check_references(), Ok(()));
    assert_eq!(m.machine_names(), vec!["phone", "watch"]);
    assert_eq!(
        m.entry("watch.pftrace").map(|e| e.path.as_str()),
        Some("watch.pftrace")
    );
    assert_eq!(m.entry("phone"), None);
    assert_eq!(
        m.entry("phone.pftrace").and_then(FileEntry::base_machine),
        Some("phone")
    );
    assert_eq!(
        m.entry("app_log.json").and_then(FileEntry::base_machine),
        None
    );
}

#[test]
fn full_manifest_with_every_field() {
    let m = ok(r#"{
        "version": 1,
        "unknown_key": {"anything": [1, 2]},
        "trace_time": {"clock": "MONOTONIC", "file": "multi.pb", "machine": "vm"},
        "files": [
            {"path": "multi.pb", "machines": [{"id": 0, "name": "phone"}, {"id": 7, "name": "vm"}]},
            {"path": "server.pb", "machine": {"name": "server", "extra": 1},
             "clocks": {"clock": "BOOTTIME", "offset_ns": -500,
                        "sync_to": {"file": "multi.pb", "machine": "vm", "clock": "BOOTTIME"}}},
            {"path": "vm.json", "clocks": {"sync_to": {"file": "server.pb"}}},
            {"path": "multi2.pb", "machines": [{"id": 3, "name": "other"}],
             "clocks": {"machine": "other", "clock": "REALTIME_COARSE",
                        "sync_to": {"file": "vm.json", "clock": "MONOTONIC_RAW"}}}
        ],
        "attributes": {"run": 3, "benchmark": "startup"}
    }"#);
    assert_eq!(m.check_references(), Ok(()));
    assert_eq!(
        m.trace_time,
        Some(TraceTime {
            clock: 3,
            file: Some("multi.pb".into()),
            machine: Some("vm".into()),
        })
    );
    assert_eq!(m.files.len(), 4);
    assert_eq!(
        m.files[0].machines,
        Some(vec![
            MachineEntry {
                id: 0,
                name: "phone".into()
            },
            MachineEntry {
                id: 7,
                name: "vm".into()
            },
        ])
    );
    assert!(m.files[0].is_multi_machine());
    assert!(!m.files[1].is_multi_machine());
    assert_eq!(m.files[0].base_machine(), Some("phone"));
    assert_eq!(m.files[3].base_machine(), None);
    assert_eq!(
        m.files[1].clocks,
        Some(ClockOverride {
            clock: Some(6),
            machine: None,
            sync_to: SyncTo {
                file: "multi.pb".into(),
                machine: Some("vm".into()),
                clock: Some(6),
            },
            offset_ns: -500,
        })
    );
    assert_eq!(
        m.files[3]
            .clocks
            .as_ref()
            .map(|c| (c.clock, c.machine.clone())),
        Some((Some(2), Some("other".into())))
    );
    assert_eq!(
        m.files[3].clocks.as_ref().and_then(|c| c.sync_to.clock),
        Some(5)
    );
    assert!(!m.files[1]
        .clocks
        .as_ref()
        .is_some_and(ClockOverride::is_pin));
    assert!(m.files[2]
        .clocks
        .as_ref()
        .is_some_and(ClockOverride::is_pin));
    assert_eq!(
        m.attributes,
        vec![
            ("benchmark".to_string(), AttrValue::Str("startup".into())),
            ("run".to_string(), AttrValue::Int(3)),
        ]
    );
    assert_eq!(m.machine_names(), vec!["phone", "vm", "server", "other"]);
}

// ---------------------------------------------------------------- machine_names

#[test]
fn machine_names_first_appearance_dedup() {
    let m = ok(r#"{"version": 1, "files": [
        {"path": "a.json", "machine": {"name": "phone"}},
        {"path": "b.json", "machine": {"name": "phone"}},
        {"path": "x.pb"},
        {"path": "c.json", "machine": {"name": "watch"}},
        {"path": "p.pb", "machines": [{"id": 7, "name": "shared"}, {"id": 0, "name": "host_p"},
                                      {"id": 8, "name": "shared"}]},
        {"path": "q.pb", "machines": [{"id": 0, "name": "host_q"}, {"id": 7, "name": "watch"}]},
        {"path": "d.json", "machine": {"name": "shared"}},
        {"path": "e.json", "machine": {"name": "zz"}}
    ]}"#);
    assert_eq!(
        m.machine_names(),
        vec!["phone", "watch", "shared", "host_p", "host_q", "zz"]
    );
}

#[test]
fn machine_names_empty() {
    assert!(Manifest::default().machine_names().is_empty());
    assert!(ok("{\"version\": 1, \"files\": [{\"path\": \"a\"}]}")
        .machine_names()
        .is_empty());
}

#[test]
fn entry_first_match_and_base_machine() {
    let m = ok(r#"{"version": 1, "files": [
        {"path": "a", "machine": {"name": "one"}},
        {"path": "a", "machine": {"name": "two"}},
        {"path": "b", "machines": [{"id": 3, "name": "x"}, {"id": 0, "name": "host"}]}
    ]}"#);
    assert_eq!(m.entry("a").and_then(FileEntry::base_machine), Some("one"));
    assert_eq!(m.entry("b").and_then(FileEntry::base_machine), Some("host"));
    assert_eq!(m.entry("c"), None);
    assert_eq!(m.entry(""), None);
}

// ---------------------------------------------------------------- step 9: references

const MULTI: &str =
    r#"{"path": "multi.pb", "machines": [{"id": 0, "name": "phone"}, {"id": 7, "name": "vm"}]}"#;

#[test]
fn trace_time_machine_without_file() {
    assert_eq!(
        ref_err(&format!(
            "{{\"version\": 1, \"trace_time\": {{\"clock\": \"BOOTTIME\", \"machine\": \
             \"vm\"}}, \"files\": [{MULTI}]}}"
        )),
        "perfetto_manifest: trace_time: machine 'vm' needs trace_time: file too: a machine \
         name alone is ambiguous because embedded machine ids are scoped to their trace."
    );
}

#[test]
fn trace_time_unknown_file() {
    assert_eq!(
        ref_err("{\"version\": 1, \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": \"ghost\"}}"),
        "perfetto_manifest: trace_time: file names unknown file 'ghost'. It must match the \
         `path` of an entry in the `files` array."
    );
}

#[test]
fn trace_time_multi_machine_needs_machine() {
    assert_eq!(
        ref_err(&format!(
            "{{\"version\": 1, \"trace_time\": {{\"clock\": \"BOOTTIME\", \"file\": \
             \"multi.pb\"}}, \"files\": [{MULTI}]}}"
        )),
        "perfetto_manifest: trace_time: file 'multi.pb' is a multi-machine trace; also name \
         the machine with trace_time: machine."
    );
}

#[test]
fn trace_time_machine_not_declared() {
    assert_eq!(
        ref_err(&format!(
            "{{\"version\": 1, \"trace_time\": {{\"clock\": \"BOOTTIME\", \"file\": \
             \"multi.pb\", \"machine\": \"ghost\"}}, \"files\": [{MULTI}]}}"
        )),
        "perfetto_manifest: trace_time: machine 'ghost' is not a machine declared by file \
         'multi.pb'."
    );
}

#[test]
fn a_missing_timeline_member_is_reported_in_files_order() {
    let m = ok(r#"{"version": 1, "files": [
        {"path": "a.pb"},
        {"path": "ghost.json", "clocks": {"sync_to": {"file": "a.pb", "clock": "BOOTTIME"}}},
        {"path": "b.json", "clocks": {"sync_to": {"file": "nope.json"}}}]}"#);
    let member = |p: &str| p != "ghost.json";
    assert_eq!(
        m.check_references_in(&member).map_err(|e| e.to_string()),
        Err(
            "perfetto_manifest: clocks: could not resolve file 'ghost.json'. It must match \
             the `path` of an entry in the `files` array."
                .to_string()
        )
    );
    // Without the archive's members only the references are checked.
    assert!(matches!(
        m.check_references(),
        Err(ManifestError::UnknownFile { .. })
    ));
}

#[test]
fn trace_time_references_ok() {
    for tt in [
        r#"{"clock": "BOOTTIME"}"#,
        r#"{"clock": "BOOTTIME", "file": "multi.pb", "machine": "phone"}"#,
        r#"{"clock": "BOOTTIME", "file": "single.pb"}"#,
        // A machine name on a single-machine file selects nothing and is not checked.
        r#"{"clock": "BOOTTIME", "file": "single.pb", "machine": "whatever"}"#,
        r#"{"clock": "BOOTTIME", "file": "bare.json"}"#,
    ] {
        let m = ok(&format!(
            "{{\"version\": 1, \"trace_time\": {tt}, \"files\": [{MULTI}, {{\"path\": \
             \"single.pb\", \"machine\": {{\"name\": \"s\"}}}}, {{\"path\": \"bare.json\"}}]}}"
        ));
        assert_eq!(m.check_references(), Ok(()), "{tt}");
    }
}

#[test]
fn sync_to_machine_without_file_text() {
    // Unreachable from parse (sync_to.file is required), but the text must be right.
    assert_eq!(
        ManifestError::MachineWithoutFile {
            site: RefSite::SyncTo,
            machine: "phone".into()
        }
        .to_string(),
        "perfetto_manifest: clocks: sync_to.machine 'phone' needs clocks: sync_to.file too: \
         a machine name alone is ambiguous because embedded machine ids are scoped to their \
         trace."
    );
}

#[test]
fn sync_to_unknown_file() {
    // The conformance case error_sync_to_file_unknown.
    assert_eq!(
        ref_err(
            r#"{"version": 1, "files": [{"path": "a.pb", "machine": {"name": "phone"},
            "clocks": {"clock": "BOOTTIME", "offset_ns": 1,
            "sync_to": {"file": "ghost.pb", "clock": "BOOTTIME"}}}]}"#
        ),
        "perfetto_manifest: clocks: sync_to.file names unknown file 'ghost.pb'. It must \
         match the `path` of an entry in the `files` array."
    );
}

#[test]
fn sync_to_multi_machine_needs_machine() {
    // The conformance case error_sync_to_file_multi_machine_needs_machine.
    assert_eq!(
        ref_err(&format!(
            r#"{{"version": 1, "files": [{MULTI}, {{"path": "server.pb",
            "machine": {{"name": "server"}}, "clocks": {{"clock": "BOOTTIME",
            "offset_ns": 500, "sync_to": {{"file": "multi.pb", "clock": "BOOTTIME"}}}}}}]}}"#
        )),
        "perfetto_manifest: clocks: sync_to.file 'multi.pb' is a multi-machine trace; also \
         name the machine with clocks: sync_to.machine."
    );
}

#[test]
fn sync_to_machine_not_declared() {
    // The conformance case error_sync_to_machine_not_in_file.
    assert_eq!(
        ref_err(&format!(
            r#"{{"version": 1, "files": [{MULTI}, {{"path": "server.pb",
            "machine": {{"name": "server"}}, "clocks": {{"clock": "BOOTTIME",
            "offset_ns": 500, "sync_to": {{"file": "multi.pb", "machine": "ghost",
            "clock": "BOOTTIME"}}}}}}]}}"#
        )),
        "perfetto_manifest: clocks: sync_to.machine 'ghost' is not a machine declared by \
         file 'multi.pb'."
    );
}

#[test]
fn clocks_source_multi_machine_needs_machine() {
    assert_eq!(
        ref_err(
            r#"{"version": 1, "files": [
            {"path": "multi.pb", "machines": [{"id": 0, "name": "phone"}],
             "clocks": {"clock": "BOOTTIME", "sync_to": {"file": "b.pb"}}},
            {"path": "b.pb"}]}"#
        ),
        "perfetto_manifest: clocks: file 'multi.pb' is a multi-machine trace; name which \
         machine the clock is on with clocks: machine."
    );
}

#[test]
fn clocks_source_machine_not_declared() {
    assert_eq!(
        ref_err(
            r#"{"version": 1, "files": [
            {"path": "multi.pb", "machines": [{"id": 0, "name": "phone"}],
             "clocks": {"machine": "vm", "clock": "BOOTTIME", "sync_to": {"file": "b.pb"}}},
            {"path": "b.pb"}]}"#
        ),
        "perfetto_manifest: clocks: machine 'vm' is not a machine declared by file \
         'multi.pb'."
    );
}

#[test]
fn references_ok_cases() {
    // The conformance cases sync_to_file_machine_offset and sync_to_machine_offset.
    let m = ok(&format!(
        r#"{{"version": 1, "trace_time": {{"file": "multi.pb", "machine": "vm",
        "clock": "BOOTTIME"}}, "files": [{MULTI}, {{"path": "server.pb",
        "machine": {{"name": "server"}}, "clocks": {{"clock": "BOOTTIME", "offset_ns": 500,
        "sync_to": {{"file": "multi.pb", "machine": "vm", "clock": "BOOTTIME"}}}}}}]}}"#
    ));
    assert_eq!(m.check_references(), Ok(()));
    let m = ok(
        r#"{"version": 1, "files": [{"path": "phone.pb", "machine": {"name": "phone"}},
        {"path": "server.pb", "machine": {"name": "server"}, "clocks": {"clock": "BOOTTIME",
        "offset_ns": 500, "sync_to": {"file": "phone.pb", "machine": "phone",
        "clock": "BOOTTIME"}}}]}"#,
    );
    assert_eq!(m.check_references(), Ok(()));
    // A file may sync to itself as far as references go (the clock graph judges).
    let m = ok(r#"{"version": 1, "files": [{"path": "a.pb",
        "clocks": {"clock": "BOOTTIME", "sync_to": {"file": "a.pb", "clock": "REALTIME"}}}]}"#);
    assert_eq!(m.check_references(), Ok(()));
}

#[test]
fn references_order_trace_time_first() {
    assert_eq!(
        ref_err(
            r#"{"version": 1, "trace_time": {"clock": "BOOTTIME", "file": "ghost1"},
            "files": [{"path": "a", "clocks": {"sync_to": {"file": "ghost2"}}}]}"#
        ),
        "perfetto_manifest: trace_time: file names unknown file 'ghost1'. It must match the \
         `path` of an entry in the `files` array."
    );
}

#[test]
fn references_order_clocks_in_files_order() {
    assert_eq!(
        ref_err(
            r#"{"version": 1, "files": [
            {"path": "a", "clocks": {"sync_to": {"file": "ghost_a"}}},
            {"path": "b", "clocks": {"sync_to": {"file": "ghost_b"}}}]}"#
        ),
        "perfetto_manifest: clocks: sync_to.file names unknown file 'ghost_a'. It must match \
         the `path` of an entry in the `files` array."
    );
}

#[test]
fn references_order_source_before_reference() {
    assert_eq!(
        ref_err(
            r#"{"version": 1, "files": [
            {"path": "m", "machines": [{"id": 0, "name": "h"}],
             "clocks": {"sync_to": {"file": "ghost"}}}]}"#
        ),
        "perfetto_manifest: clocks: file 'm' is a multi-machine trace; name which machine \
         the clock is on with clocks: machine."
    );
}

// ---------------------------------------------------------------- importer errors

#[test]
fn importer_error_texts() {
    assert_eq!(
        ManifestError::MultipleManifests.to_string(),
        "multiple perfetto_manifest files in archive"
    );
    assert_eq!(
        ManifestError::NotFirst.to_string(),
        "perfetto_manifest file must be the first trace file in the input"
    );
    assert_eq!(
        ManifestError::OverrideOnContainer {
            path: "meta2.json".into()
        }
        .to_string(),
        "perfetto_manifest: overrides are not supported for trace files which are \
         themselves archives or perfetto_manifest files: meta2.json"
    );
    assert_eq!(
        ManifestError::PinWithSnapshots.to_string(),
        "perfetto_manifest: clock overrides require the trace to use a single clock"
    );
    assert_eq!(
        ManifestError::MachineOnMultiMachineFile.to_string(),
        "perfetto_manifest: a `machine` override attributes the file to one machine, but the \
         file contains packets from multiple machines. Replace `machine` with a `machines` \
         block that maps each embedded machine_id to a named machine, e.g. \"machines\": \
         [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": \"vm\"}]."
    );
    assert_eq!(
        ManifestError::PinOnMultiMachineFile.to_string(),
        "perfetto_manifest: a `clocks` override applies only to a single-machine file, but \
         the file contains packets from multiple machines. Remove the `clocks` override and \
         let the trace's own remote clock snapshots align the machines; if you need to \
         anchor a specific embedded machine, split it into its own file and override that."
    );
    assert_eq!(
        ManifestError::UndeclaredMachine { id: 42 }.to_string(),
        "perfetto_manifest: machines: trace has a packet from undeclared machine id 42"
    );
    assert_eq!(
        ManifestError::CouldNotResolveFile {
            file: "x.pb".into()
        }
        .to_string(),
        "perfetto_manifest: clocks: could not resolve file 'x.pb'. It must match the `path` \
         of an entry in the `files` array."
    );
}

#[test]
fn conformance_expected_substrings() {
    // expected_error.txt of the trace_manifest error_* cases whose error is the manifest's.
    let cases: &[(&str, &str)] = &[
        (
            r#"{"perfetto_manifest": {"version": 1, "attributes": {"flags": ["a", "b"]}}}"#,
            "perfetto_manifest: attributes: 'flags' must be a string or an integer",
        ),
        (
            r#"{"perfetto_manifest": {"version": 1, "files": [{"path": "app.json", "machine": {"name": "a"}, "machines": [{"id": 0, "name": "b"}]}]}}"#,
            "perfetto_manifest: machine and machines are mutually exclusive",
        ),
        (
            r#"{"perfetto_manifest": {"version": 1, "files": [{"path": "app.json", "machine": {"name": ""}}]}}"#,
            "perfetto_manifest: machine: name must be non-empty",
        ),
        (
            r#"{"perfetto_manifest": {"version": 1, "files": [{"path": "app.json", "machines": [{"id": 4294967296, "name": "vm"}]}]}}"#,
            "perfetto_manifest: machines: id must be in [0, 4294967295]",
        ),
        (
            r#"{"perfetto_manifest": {"version": 1, "files": [{"path": "a.pb", "machine": {"name": "phone"}, "clocks": {"clock": "BOOTTIME", "offset_ns": 1, "sync_to": {"machine": "phone", "clock": "BOOTTIME"}}}]}}"#,
            "perfetto_manifest: clocks: sync_to.file is required",
        ),
        (
            r#"{"perfetto_manifest": {"version": 1, "trace_time": {"clock": "BOOTIME"}}}"#,
            "perfetto_manifest: unknown clock name: BOOTIME",
        ),
        (
            r#"{"perfetto_manifest": {"version": 99}}"#,
            "perfetto_manifest: unsupported version: 99",
        ),
        (
            r#"{"perfetto_manifest": {"version": 1.5}}"#,
            "perfetto_manifest: version must be an integer",
        ),
    ];
    for (json, want) in cases {
        assert!(is_manifest(json.as_bytes()), "{json}");
        let msg = err(json);
        assert!(msg.contains(want), "{msg} does not contain {want}");
    }
    let full = |json: &str| -> String {
        let m = match parse(json.as_bytes()) {
            Ok(m) => m,
            Err(e) => panic!("{e}"),
        };
        match m.check_references() {
            Ok(()) => panic!("no reference error for {json}"),
            Err(e) => e.to_string(),
        }
    };
    let refs: &[(&str, &str)] = &[
        (
            r#"{"perfetto_manifest": {"version": 1, "files": [{"path": "multi.pb", "machines": [{"id": 0, "name": "phone"}, {"id": 7, "name": "vm"}]}, {"path": "server.pb", "machine": {"name": "server"}, "clocks": {"clock": "BOOTTIME", "offset_ns": 500, "sync_to": {"file": "multi.pb", "clock": "BOOTTIME"}}}]}}"#,
            "perfetto_manifest: clocks: sync_to.file 'multi.pb' is a multi-machine trace; also name the machine with clocks: sync_to.machine",
        ),
        (
            r#"{"perfetto_manifest": {"version": 1, "files": [{"path": "a.pb", "machine": {"name": "phone"}, "clocks": {"clock": "BOOTTIME", "offset_ns": 1, "sync_to": {"file": "ghost.pb", "clock": "BOOTTIME"}}}]}}"#,
            "perfetto_manifest: clocks: sync_to.file names unknown file 'ghost.pb'",
        ),
        (
            r#"{"perfetto_manifest": {"version": 1, "files": [{"path": "multi.pb", "machines": [{"id": 0, "name": "phone"}, {"id": 7, "name": "vm"}]}, {"path": "server.pb", "machine": {"name": "server"}, "clocks": {"clock": "BOOTTIME", "offset_ns": 500, "sync_to": {"file": "multi.pb", "machine": "ghost", "clock": "BOOTTIME"}}}]}}"#,
            "perfetto_manifest: clocks: sync_to.machine 'ghost' is not a machine declared by file 'multi.pb'",
        ),
    ];
    for (json, want) in refs {
        let msg = full(json);
        assert!(msg.contains(want), "{msg} does not contain {want}");
    }
}

// ---------------------------------------------------------------- robustness

#[test]
fn never_panics_on_truncations_and_garbage() {
    let full = SPEC_EXAMPLE.as_bytes();
    for end in 0..=full.len() {
        let _ = is_manifest(&full[..end]);
        if let Ok(m) = parse(&full[..end]) {
            let _ = m.check_references();
            let _ = m.machine_names();
        }
    }
    let garbage: &[&[u8]] = &[
        b"\xff\xfe\x00",
        b"{\"perfetto_manifest\": {\"version\": 1, \"files\": [[[[[[[[",
        b"\x00\x00\x00\x00",
        b"{\"perfetto_manifest\": {\"version\": 1e999}}",
        b"{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a\", \"machines\": [{\"id\": 1e999, \"name\": \"x\"}]}]}}",
    ];
    for g in garbage {
        let _ = is_manifest(g);
        let _ = parse(g);
    }
    // Deep nesting hits serde_json's recursion limit, not the stack.
    let deep = format!(
        "{{\"perfetto_manifest\": {{\"version\": 1, \"x\": {}{}}}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert!(matches!(
        parse(deep.as_bytes()),
        Err(ManifestError::Json(_))
    ));
}
