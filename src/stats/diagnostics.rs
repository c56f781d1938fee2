//! `__intrinsic_trace_diagnostics`: Trace Processor's checks of a trace's config against
//! what the trace holds (buffers too small, drains too slow, streaming into DISCARD
//! buffers, …), with its keys, titles and confidences. The proto parser gathers the facts
//! ([`Facts`]) at the end of each file; [`check`] hands back plain rows for the writer.

use crate::protos::trace_config::buffer_config::FillPolicy;
use crate::protos::{FtraceConfig, TraceConfig};

/// One finding.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceDiagnostic {
    pub key: &'static str,
    pub title: &'static str,
    pub description: String,
    pub remediation: String,
    pub confidence: f64,
    /// The trace file (`trace_id`).
    pub file: u32,
}

/// What the checks need besides the config, for one (machine, file) context.
#[derive(Debug, Default)]
pub struct Facts {
    /// Some cpu's ftrace ring buffer lost events (`ftrace_cpu_has_data_loss`,
    /// `ftrace_cpu_overrun_delta` or `ftrace_cpu_commit_overrun_delta` above 0).
    pub ftrace_data_loss: bool,
    /// When tracing started, in ns since boot (None when the trace does not say).
    pub tracing_started_ns: Option<i64>,
    /// Some `heapprofd*` stat of severity error or data_loss is above 0.
    pub heapprofd_errors: bool,
    pub android_build_fingerprint: Option<String>,
    /// Display-video frames in the trace.
    pub display_video_frames: u64,
    /// Some `android_video_*` stat of severity error or data_loss is above 0.
    pub android_video_errors: bool,
}

const SECONDS_AFTER_BOOT_FOR_LATE_START: i64 = 300;
const TINY_BUFFER_KB: u32 = 1024;
const MIN_DRAIN_MB_PER_S: f64 = 5.0;
const STREAMING_FILE_PERIOD_MS: u32 = 604_800_000;
const MIN_HEAPPROFD_INTERVAL: u64 = 102_400;

fn ftrace_configs(config: &TraceConfig) -> impl Iterator<Item = &FtraceConfig> {
    config
        .data_sources
        .iter()
        .filter_map(|ds| ds.config.as_ref()?.ftrace_config.as_ref())
}

/// Runs every check, in the reference's order, for one context's config.
pub fn check(config: &TraceConfig, facts: &Facts, file: u32) -> Vec<TraceDiagnostic> {
    let mut out = Vec::new();
    let mut emit = |key, title, description: String, remediation: &str, confidence: f64| {
        out.push(TraceDiagnostic {
            key,
            title,
            description,
            remediation: remediation.to_string(),
            confidence,
            file,
        });
    };
    let loss = facts.ftrace_data_loss;
    for f in ftrace_configs(config) {
        let late = facts
            .tracing_started_ns
            .is_some_and(|ns| ns > SECONDS_AFTER_BOOT_FOR_LATE_START * 1_000_000_000);
        if f.preserve_ftrace_buffer() && late {
            emit(
                "preserve_ftrace_buffer_late_start",
                "Unnecessary preserve_ftrace_buffer",
                "preserve_ftrace_buffer keeps what the kernel buffered before tracing began, \
                 which helps only for traces that start at boot; this one started more than \
                 5 minutes after boot."
                    .into(),
                "Remove preserve_ftrace_buffer from the ftrace config.",
                0.7,
            );
        }
    }
    for f in ftrace_configs(config) {
        let Some(kb) = f
            .buffer_size_kb
            .filter(|&kb| kb != 0 && kb < TINY_BUFFER_KB)
        else {
            continue;
        };
        let confidence = if loss || kb <= 64 {
            0.9
        } else {
            0.9 - 0.7 * f64::from(kb - 64) / 960.0
        };
        emit(
            "tiny_ftrace_buffer",
            "Ftrace buffer too small",
            format!(
                "The per-cpu ftrace buffer is {kb} KB: a burst of events fills it before it is \
                 drained, and the kernel drops what does not fit."
            ),
            "Set buffer_size_kb to at least 1024 (8192 or more for sched and syscall tracing).",
            confidence,
        );
    }
    for f in ftrace_configs(config) {
        let (Some(kb), Some(ms)) = (
            f.buffer_size_kb.filter(|&v| v != 0),
            f.drain_period_ms.filter(|&v| v != 0),
        ) else {
            continue;
        };
        let bandwidth = (f64::from(kb) / 1024.0) / (f64::from(ms) / 1000.0);
        if bandwidth >= MIN_DRAIN_MB_PER_S {
            continue;
        }
        let confidence = if loss || bandwidth <= 1.0 {
            0.9
        } else {
            0.9 * (MIN_DRAIN_MB_PER_S - bandwidth) / 4.0
        };
        emit(
            "low_ftrace_drain_bandwidth",
            "Low ftrace drain bandwidth",
            format!(
                "A {kb} KB per-cpu buffer drained every {ms} ms moves at most {bandwidth:.2} MB/s \
                 per cpu; busier cpus lose events."
            ),
            "Raise buffer_size_kb or lower drain_period_ms so that buffer/period is at least 5 MB/s.",
            confidence,
        );
    }
    for f in ftrace_configs(config) {
        let Some(ms) = f.drain_period_ms else {
            continue;
        };
        if (100..=60_000).contains(&ms) {
            continue;
        }
        emit(
            "extreme_ftrace_drain_period",
            "Extreme ftrace drain period",
            format!(
                "drain_period_ms is {ms}: below 100 ms the drain costs cpu for little, above \
                 60 s the buffers overflow between drains."
            ),
            "Leave drain_period_ms unset or choose a value between 100 and 60000.",
            0.6,
        );
    }
    for f in ftrace_configs(config) {
        let raw = f
            .ftrace_events
            .iter()
            .any(|e| e == "raw_syscalls/sys_enter" || e == "raw_syscalls/sys_exit");
        if raw && f.syscall_events.is_empty() {
            emit(
                "syscalls_without_filter",
                "Unfiltered syscall tracing",
                "raw_syscalls events are recorded for every syscall of every process: they \
                 flood the ftrace buffers."
                    .into(),
                "List the syscalls you need in syscall_events.",
                if loss { 0.9 } else { 0.3 },
            );
        }
    }
    for f in ftrace_configs(config) {
        if f.symbolize_ksyms() {
            continue;
        }
        if f.enable_function_graph() {
            emit(
                "function_graph_requires_symbolize_ksyms",
                "Function graph needs symbolize_ksyms",
                "Function graph tracing records kernel addresses; without symbolize_ksyms they \
                 cannot be named."
                    .into(),
                "Set symbolize_ksyms: true in the ftrace config.",
                1.0,
            );
        }
        let needs = [
            "workqueue/workqueue_execute_start",
            "sched/sched_blocked_reason",
        ];
        if let Some(event) = f.ftrace_events.iter().find(|e| needs.contains(&e.as_str())) {
            emit(
                "events_require_symbolize_ksyms",
                "Events need symbolize_ksyms",
                format!(
                    "{event} records kernel function addresses; without symbolize_ksyms they \
                     cannot be named."
                ),
                "Set symbolize_ksyms: true in the ftrace config.",
                0.6,
            );
        }
    }
    if config.write_into_file()
        && config.file_write_period_ms.unwrap_or(0) < STREAMING_FILE_PERIOD_MS
    {
        for ds in &config.data_sources {
            let Some(c) = &ds.config else { continue };
            let name = c.name.as_deref().unwrap_or("");
            if name != "linux.ftrace" && name != "track_event" {
                continue;
            }
            let buffer = config.buffers.get(c.target_buffer.unwrap_or(0) as usize);
            if buffer.is_some_and(|b| b.fill_policy() == FillPolicy::Discard) {
                emit(
                    "discard_buffer_for_streaming",
                    "DISCARD buffer for streaming",
                    format!(
                        "The trace streams into a file, but {name} writes into a DISCARD \
                         buffer: once it fills between two file writes, new data is thrown \
                         away."
                    ),
                    "Use fill_policy: RING_BUFFER for buffers of a streaming trace.",
                    0.8,
                );
            }
        }
    }
    for ds in &config.data_sources {
        let Some(interval) = ds
            .config
            .as_ref()
            .and_then(|c| c.heapprofd_config.as_ref())
            .and_then(|h| h.sampling_interval_bytes)
            .filter(|&v| v != 0 && v < MIN_HEAPPROFD_INTERVAL)
        else {
            continue;
        };
        emit(
            "heapprofd_sampling_interval_too_low",
            "Heapprofd sampling interval too low",
            format!(
                "heapprofd samples every {interval} bytes: the profiled process slows down and \
                 the profiler's buffer can overrun."
            ),
            "Use a sampling_interval_bytes of 102400 or more unless every allocation matters.",
            if facts.heapprofd_errors { 0.9 } else { 0.3 },
        );
    }
    let video = config.data_sources.iter().any(|ds| {
        ds.config.as_ref().and_then(|c| c.name.as_deref()) == Some("android.display.video")
    });
    let user_build = facts
        .android_build_fingerprint
        .as_deref()
        .and_then(build_type)
        .is_some_and(|t| t == "user");
    if video && user_build && facts.display_video_frames == 0 && !facts.android_video_errors {
        emit(
            "display_video_not_enabled",
            "Display video not captured",
            "The config asks for android.display.video, but the device runs a user build, \
             which does not capture the display; the trace has no frames."
                .into(),
            "Record display video on a userdebug or eng build.",
            0.7,
        );
    }
    out
}

/// The build type of an Android fingerprint (`…:user/release-keys` → `user`).
fn build_type(fingerprint: &str) -> Option<&str> {
    let tail = &fingerprint[fingerprint.rfind(':')? + 1..];
    Some(tail.split('/').next().unwrap_or(tail))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protos::trace_config::{BufferConfig, DataSource};
    use crate::protos::DataSourceConfig;

    fn ftrace(f: FtraceConfig) -> DataSource {
        DataSource {
            config: Some(DataSourceConfig {
                name: Some("linux.ftrace".into()),
                ftrace_config: Some(f),
                ..Default::default()
            }),
        }
    }

    #[test]
    fn a_small_slow_ftrace_buffer_is_reported_with_the_references_confidence() {
        let config = TraceConfig {
            data_sources: vec![ftrace(FtraceConfig {
                buffer_size_kb: Some(544),
                drain_period_ms: Some(50),
                ..Default::default()
            })],
            ..Default::default()
        };
        let rows = check(&config, &Facts::default(), 3);
        let keys: Vec<_> = rows.iter().map(|r| r.key).collect();
        assert_eq!(
            keys,
            ["tiny_ftrace_buffer", "extreme_ftrace_drain_period"],
            "544 KB every 50 ms is 10.6 MB/s: fast enough"
        );
        assert!((rows[0].confidence - (0.9 - 0.7 * 480.0 / 960.0)).abs() < 1e-9);
        assert_eq!(rows[0].title, "Ftrace buffer too small");
        assert!(rows[0].description.contains("544 KB"));
        assert_eq!(rows[1].confidence, 0.6);
        assert_eq!(rows[0].file, 3);
        let lossy = Facts {
            ftrace_data_loss: true,
            ..Default::default()
        };
        assert_eq!(check(&config, &lossy, 3)[0].confidence, 0.9);
    }

    #[test]
    fn streaming_into_a_discard_buffer_and_missing_ksyms_are_reported() {
        let config = TraceConfig {
            buffers: vec![BufferConfig {
                size_kb: Some(1024),
                fill_policy: Some(FillPolicy::Discard as i32),
            }],
            data_sources: vec![ftrace(FtraceConfig {
                ftrace_events: vec!["sched/sched_blocked_reason".into()],
                enable_function_graph: Some(true),
                drain_period_ms: Some(1000),
                buffer_size_kb: Some(4096),
                ..Default::default()
            })],
            write_into_file: Some(true),
            ..Default::default()
        };
        let rows = check(&config, &Facts::default(), 0);
        let keys: Vec<_> = rows.iter().map(|r| (r.key, r.confidence)).collect();
        assert_eq!(
            keys,
            [
                ("low_ftrace_drain_bandwidth", 0.9 * (5.0 - 4.0) / 4.0),
                ("function_graph_requires_symbolize_ksyms", 1.0),
                ("events_require_symbolize_ksyms", 0.6),
                ("discard_buffer_for_streaming", 0.8),
            ]
        );
    }

    #[test]
    fn no_config_problem_no_row() {
        let config = TraceConfig {
            data_sources: vec![ftrace(FtraceConfig {
                buffer_size_kb: Some(8192),
                drain_period_ms: Some(1000),
                symbolize_ksyms: Some(true),
                ..Default::default()
            })],
            ..Default::default()
        };
        assert!(check(&config, &Facts::default(), 0).is_empty());
        assert_eq!(
            build_type("google/raven/raven:13/TQ1A/123:user/release-keys"),
            Some("user")
        );
    }
}
