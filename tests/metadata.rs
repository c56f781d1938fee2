//! Trace-level metadata from proto packets: Chrome's metadata, the trace uuid (named by the
//! trace, its config, or hashed from the file), and facts derived from an Android build
//! fingerprint (traces copied from the reference implementation's conformance cases); the
//! tracing service's events and a producer's trace attributes.

use rusqlite::Connection;

mod common;

use common::{rows, table, TempFile};

fn import(name: &str) -> (Connection, TempFile) {
    common::import_data("metadata", name)
}

const METADATA: &str = "select name, coalesce(int_value, str_value) from metadata
                        where name not in ('trace_size_bytes', 'trace_type', 'trace_time_clock_id')
                        order by name";

#[test]
fn chrome_metadata_and_a_uuid_hashed_from_the_file() {
    let (conn, _db) = import("chrome_metadata.pftrace");
    assert_eq!(
        rows(&conn, METADATA),
        table(&[
            ["cr-a-channel", "3"],
            ["cr-a-enabled_categories", "cat1,cat2,cat3"],
            [
                "cr-a-field_trial_hashes",
                "{ name: 123, group: 456 } { name: 789, group: 120 } "
            ],
            ["cr-a-os-name", "Android"],
            ["cr-a-package-name", "com.android.chrome"],
            ["cr-a-playstore_version_code", "101"],
            ["cr-a-product-version", "123.0.0.0"],
            ["cr-background_tracing_metadata", "CgUlDsAbXx2RziSz"],
            ["cr-scenario_name_hash", "3005533841"],
            ["cr-triggered_rule_name_hash", "1595654158"],
            // No uuid in the trace: FNV-1a of its bytes.
            ["trace_uuid", "00000000-0000-0000-400c-84601ce2950f"],
        ])
    );
}

#[test]
fn each_chrome_metadata_packet_has_its_own_prefix() {
    let (conn, _db) = import("chrome_metadata_multiple.pftrace");
    let got = rows(&conn, METADATA);
    let names: Vec<&str> = got.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        names,
        [
            "cr-a-enabled_categories",
            "cr-a-field_trial_hashes",
            "cr-a-playstore_version_code",
            "cr-b-enabled_categories",
            "cr-b-field_trial_hashes",
            "cr-b-playstore_version_code",
            "trace_uuid",
        ]
    );
    assert_eq!(got[5][1], "102");
}

#[test]
fn the_config_uuid_and_the_build_fingerprint() {
    let (conn, _db) = import("config_uuid_fingerprint.pftrace");
    assert_eq!(
        rows(&conn, METADATA),
        table(&[
            [
                "android_build_fingerprint",
                "google/coral/coral:12/SP1A.210812.015/7679548:userdebug/dev-keys"
            ],
            ["android_incremental_build", "7679548"],
            // Android 12 is API level 31.
            ["android_sdk_version", "31"],
            // The config as text, as Trace Processor prints it (int64s signed).
            [
                "trace_config_pbtxt",
                "trace_uuid_msb: 1314564453825188563\ntrace_uuid_lsb: -6605018796207623390"
            ],
            ["trace_uuid", "123e4567-e89b-12d3-a456-426655443322"],
        ])
    );
}

/// behaviour-chrome-typed-args §8: the config's statsd triggering subscription and the UI's
/// saved state (base64 of the packet) are metadata; a TraceUuid packet beats the config's uuid.
#[test]
fn statsd_subscription_and_ui_state_are_metadata() {
    let (conn, _db) = import("config_statsd_ui_state.pftrace");
    let got = rows(
        &conn,
        "select name, coalesce(int_value, str_value) from metadata
         where name not in ('trace_size_bytes', 'trace_type', 'trace_time_clock_id',
                            'trace_config_pbtxt')
         order by name",
    );
    assert_eq!(
        got,
        table(&[
            ["statsd_triggering_subscription_id", "7"],
            ["trace_uuid", "00000000-0000-0003-0000-000000000004"],
            ["ui_state", "CAU="],
            ["unique_session_name", "sess"],
        ])
    );
}

#[test]
fn service_events_and_trace_attributes_are_metadata() {
    use prost::Message;
    use sextant::protos::{
        trace_attributes::{attribute::Value, Attribute},
        trace_packet::Data,
        tracing_service_event::{data_sources::DataSource, DataSources},
        Trace, TraceAttributes, TracePacket, TracingServiceEvent,
    };
    let event = |ts: u64, e: TracingServiceEvent| TracePacket {
        timestamp: Some(ts),
        data: Some(Data::ServiceEvent(e)),
        ..Default::default()
    };
    let slow = DataSources {
        data_source: vec![DataSource {
            producer_name: Some("p1".into()),
            data_source_name: Some("d1".into()),
        }],
    };
    let attribute = |key: &str, value: Value| Attribute {
        key: Some(key.into()),
        value: Some(value),
    };
    let packets = vec![
        event(
            100,
            TracingServiceEvent {
                tracing_started: Some(true),
                ..Default::default()
            },
        ),
        event(
            110,
            TracingServiceEvent {
                all_data_sources_started: Some(true),
                ..Default::default()
            },
        ),
        event(
            120,
            TracingServiceEvent {
                slow_starting_data_sources: Some(slow),
                ..Default::default()
            },
        ),
        event(
            130,
            TracingServiceEvent {
                all_data_sources_flushed: Some(true),
                ..Default::default()
            },
        ),
        event(
            140,
            TracingServiceEvent {
                tracing_disabled: Some(true),
                ..Default::default()
            },
        ),
        TracePacket {
            data: Some(Data::TraceAttributes(TraceAttributes {
                attribute: vec![
                    attribute("myapp.build_id", Value::StringValue("abc".into())),
                    attribute("myapp.iterations", Value::LongValue(5)),
                ],
            })),
            ..Default::default()
        },
    ];
    let input = TempFile::with_bytes(
        "service.pftrace",
        &Trace { packet: packets }.encode_to_vec(),
    );
    let db = TempFile::new("service.sqlite");
    sextant::import::import_path(input.path(), db.path()).expect("imports");
    let conn = sextant::db::open_read_only(db.path()).expect("opens");
    let got = rows(
        &conn,
        "select name, key_type, coalesce(int_value, str_value), coalesce(trace_id, '-')
         from metadata where name not in ('trace_size_bytes', 'trace_type', 'trace_uuid')
         order by name",
    );
    assert_eq!(
        got,
        table(&[
            ["all_data_source_flushed_ns", "multi", "130", "0"],
            ["all_data_source_started_ns", "single", "110", "0"],
            ["slow_start_data_source", "multi", "p1 d1", "0"],
            ["trace_attribute.myapp.build_id", "single", "abc", "-"],
            ["trace_attribute.myapp.iterations", "single", "5", "-"],
            ["tracing_disabled_ns", "single", "140", "0"],
            ["tracing_started_ns", "single", "100", "0"],
        ])
    );
}

/// Only the first clone_snapshot_trigger read names the trace and stamps the clone (notes:
/// "first trace trigger → metadata trace_trigger"); every trigger is still a slice.
#[test]
fn the_first_clone_trigger_names_the_trace() {
    use prost::Message;
    use sextant::protos::{trace_packet::Data, Trace, TracePacket, Trigger};
    let clone = |ts: u64, name: &str| TracePacket {
        timestamp: Some(ts),
        data: Some(Data::CloneSnapshotTrigger(Trigger {
            trigger_name: Some(name.into()),
            ..Default::default()
        })),
        ..Default::default()
    };
    let packets = vec![clone(300, "first_read"), clone(200, "earlier_ts")];
    let input = TempFile::with_bytes("clone.pftrace", &Trace { packet: packets }.encode_to_vec());
    let db = TempFile::new("clone.sqlite");
    sextant::import::import_path(input.path(), db.path()).expect("imports");
    let conn = sextant::db::open_read_only(db.path()).expect("opens");
    assert_eq!(
        rows(
            &conn,
            "select str_value from metadata where name = 'trace_trigger'"
        ),
        table(&[["first_read"]])
    );
    assert_eq!(
        rows(
            &conn,
            "select value from stats where name = 'traced_clone_trigger_timestamp_ns'"
        ),
        table(&[["300"]])
    );
    assert_eq!(
        rows(&conn, "select ts, name from slice order by ts"),
        table(&[["200", "earlier_ts"], ["300", "first_read"]])
    );
}

#[test]
fn system_info_fills_the_machine_row() {
    use prost::Message;
    use sextant::protos::{trace_packet::Data, SystemInfo, Trace, TracePacket, Utsname};
    let info = SystemInfo {
        utsname: Some(Utsname {
            sysname: Some("Linux".into()),
            release: Some("6.1".into()),
            version: Some("#1 SMP".into()),
            machine: Some("aarch64".into()),
        }),
        num_cpus: Some(8),
        system_ram_bytes: Some(7_900_000_000),
        android_sdk_version: Some(33),
        android_device_manufacturer: Some("Google".into()),
        ..Default::default()
    };
    let packet = TracePacket {
        data: Some(Data::SystemInfo(info)),
        ..Default::default()
    };
    let bytes = Trace {
        packet: vec![packet],
    }
    .encode_to_vec();
    let input = TempFile::with_bytes("system_info.pftrace", &bytes);
    let db = TempFile::new("system_info.sqlite");
    sextant::import::import_path(input.path(), db.path()).expect("imports");
    let conn = sextant::db::open_read_only(db.path()).expect("opens");
    // RAM in decimal gigabytes, rounded (7.9 GB is 8; 7.36 GiB would be 7).
    assert_eq!(
        rows(
            &conn,
            "select sysname, release, version, arch, num_cpus, android_device_manufacturer,
                    android_sdk_version, system_ram_bytes, system_ram_gb from machine"
        ),
        table(&[[
            "Linux",
            "6.1",
            "#1 SMP",
            "aarch64",
            "8",
            "Google",
            "33",
            "7900000000",
            "8"
        ]])
    );
}

/// The reference copies SystemInfo's device facts (manufacturer, SoC, hardware revision,
/// storage, RAM, serial console) to `metadata` under the field's own name.
#[test]
fn system_info_device_facts_are_metadata() {
    use prost::Message;
    use sextant::protos::{trace_packet::Data, SystemInfo, Trace, TracePacket};
    let info = SystemInfo {
        android_device_manufacturer: Some("Google".into()),
        android_soc_model: Some("GS101".into()),
        android_guest_soc_model: Some("GSX".into()),
        android_hardware_revision: Some("MP1.0".into()),
        android_storage_model: Some("UFS".into()),
        android_ram_model: Some("LPDDR5".into()),
        android_serial_console: Some("ttyS0".into()),
        ..Default::default()
    };
    let bytes = Trace {
        packet: vec![TracePacket {
            data: Some(Data::SystemInfo(info)),
            ..Default::default()
        }],
    }
    .encode_to_vec();
    let input = TempFile::with_bytes("system_info_device.pftrace", &bytes);
    let db = TempFile::new("system_info_device.sqlite");
    sextant::import::import_path(input.path(), db.path()).expect("imports");
    let conn = sextant::db::open_read_only(db.path()).expect("opens");
    assert_eq!(
        rows(
            &conn,
            "select name, str_value from metadata where name glob 'android_*' order by name"
        ),
        table(&[
            ["android_device_manufacturer", "Google"],
            ["android_guest_soc_model", "GSX"],
            ["android_hardware_revision", "MP1.0"],
            ["android_ram_model", "LPDDR5"],
            ["android_serial_console", "ttyS0"],
            ["android_soc_model", "GS101"],
            ["android_storage_model", "UFS"],
        ])
    );
}

/// The tracing service's version is metadata (`tracing_service_version`, which the
/// write-into-file checks read back), and a later SystemInfo without a fact keeps the
/// machine's earlier value.
#[test]
fn system_info_service_version_is_metadata_and_later_packets_keep_facts() {
    use prost::Message;
    use sextant::protos::{trace_packet::Data, SystemInfo, Trace, TracePacket};
    let packet = |info: SystemInfo| TracePacket {
        data: Some(Data::SystemInfo(info)),
        ..Default::default()
    };
    let bytes = Trace {
        packet: vec![
            packet(SystemInfo {
                tracing_service_version: Some("Perfetto v50.1 (abc)".into()),
                num_cpus: Some(8),
                android_sdk_version: Some(34),
                ..Default::default()
            }),
            packet(SystemInfo {
                timezone_off_mins: Some(60),
                ..Default::default()
            }),
        ],
    }
    .encode_to_vec();
    let input = TempFile::with_bytes("system_info_version.pftrace", &bytes);
    let db = TempFile::new("system_info_version.sqlite");
    sextant::import::import_path(input.path(), db.path()).expect("imports");
    let conn = sextant::db::open_read_only(db.path()).expect("opens");
    assert_eq!(
        rows(
            &conn,
            "select str_value from metadata where name = 'tracing_service_version'"
        ),
        table(&[["Perfetto v50.1 (abc)"]])
    );
    assert_eq!(
        rows(&conn, "select num_cpus, android_sdk_version from machine"),
        table(&[["8", "34"]])
    );
}
