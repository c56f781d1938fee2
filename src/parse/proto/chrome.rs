//! Chrome's own packets: ChromeMetadataPacket (metadata rows with their `cr-` prefixes),
//! ChromeEventBundle (legacy metadata and raw text as `chrome_raw` rows), benchmark
//! metadata, Chrome triggers (an instant on `Trace Triggers` ending a flow), TranslationTable
//! (hashed names, slice and process track renames) and StreamingProfilePacket (CPU samples).
//! They hand on metadata, raw rows, slices and translations.

use super::*;

/// Standard base64 with padding (Chrome's background tracing metadata is stored so).
pub(super) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

impl Parser<'_> {
    /// Chrome's own metadata: `cr-<a, b, …>-<key>` per packet, and the background
    /// tracing scenario (kept base64-encoded, with its rule and scenario hashes).
    pub(super) fn chrome_metadata(&mut self, machine: MachineId, m: &protos::ChromeMetadataPacket) {
        let letter = char::from(b'a' + (self.chrome_metadata_packets % 26) as u8);
        self.chrome_metadata_packets += 1;
        let key = |name: &str| format!("cr-{letter}-{name}");
        let mut meta: Vec<(String, MetaValue)> = Vec::new();
        if let Some(v) = m.chrome_version_code {
            meta.push((key("playstore_version_code"), MetaValue::Int(i64::from(v))));
        }
        if let Some(v) = &m.enabled_categories {
            meta.push((key("enabled_categories"), MetaValue::Str(v.clone())));
        }
        if !m.field_trial_hashes.is_empty() {
            let hashes: String = m
                .field_trial_hashes
                .iter()
                .map(|h| {
                    format!(
                        "{{ name: {}, group: {} }} ",
                        h.name.unwrap_or(0),
                        h.group.unwrap_or(0)
                    )
                })
                .collect();
            meta.push((key("field_trial_hashes"), MetaValue::Str(hashes)));
        }
        for (name, value) in [
            ("package-name", &m.app_package_name),
            ("product-version", &m.app_version),
            ("os-name", &m.os_name),
        ] {
            if let Some(v) = value {
                meta.push((key(name), MetaValue::Str(v.clone())));
            }
        }
        if let Some(v) = m.channel {
            meta.push((key("channel"), MetaValue::Int(i64::from(v))));
        }
        if let Some(raw) = &m.background_tracing_metadata {
            meta.push((
                "cr-background_tracing_metadata".to_string(),
                MetaValue::Str(base64(raw)),
            ));
            if let Ok(bg) = protos::BackgroundTracingMetadata::decode(raw.as_slice()) {
                if let Some(hash) = bg.scenario_name_hash {
                    meta.push((
                        "cr-scenario_name_hash".to_string(),
                        MetaValue::Int(i64::from(hash)),
                    ));
                }
            }
        }
        for (k, v) in meta {
            self.sink.metadata(k, machine, v);
        }
    }

    /// TranslationTable: names for hashes (applied to arg sets at the end of the file),
    /// slice and process track names to replace.
    pub(super) fn translation_table(&mut self, t: &protos::TranslationTable) {
        use protos::translation_table::Table;
        self.sink.touch();
        let Some(table) = &t.table else { return };
        let mut hashed: Vec<(u8, u64, StrId)> = Vec::new();
        let mut renames: Vec<(bool, StrId, StrId)> = Vec::new();
        match table {
            Table::ChromeHistogram(h) => {
                for (k, v) in &h.hash_to_name {
                    hashed.push((0, *k, self.sink.intern(v)));
                }
            }
            Table::ChromeUserEvent(u) => {
                for (k, v) in &u.action_hash_to_name {
                    hashed.push((1, *k, self.sink.intern(v)));
                }
            }
            Table::ChromePerformanceMark(m) => {
                for (k, v) in &m.site_hash_to_name {
                    hashed.push((2, u64::from(*k), self.sink.intern(v)));
                }
                for (k, v) in &m.mark_hash_to_name {
                    hashed.push((3, u64::from(*k), self.sink.intern(v)));
                }
            }
            Table::ChromeStudy(st) => {
                for (k, v) in &st.hash_to_name {
                    hashed.push((4, *k, self.sink.intern(v)));
                }
            }
            Table::SliceName(n) => {
                for (k, v) in &n.raw_to_deobfuscated_name {
                    renames.push((false, self.sink.intern(k), self.sink.intern(v)));
                }
            }
            Table::ProcessTrackName(n) => {
                for (k, v) in &n.raw_to_deobfuscated_name {
                    renames.push((true, self.sink.intern(k), self.sink.intern(v)));
                }
            }
        }
        let t = &mut self.sink.translations;
        for (kind, hash, name) in hashed {
            let map = match kind {
                0 => &mut t.histogram,
                1 => &mut t.user_event,
                2 => &mut t.performance_mark_site,
                3 => &mut t.performance_mark,
                _ => &mut t.study,
            };
            map.insert(hash, name);
        }
        for (process_track, raw, name) in renames {
            if process_track {
                t.process_track_name.insert(raw, name);
            } else {
                t.slice_name.insert(raw, name);
            }
        }
    }

    /// ChromeEventBundle: its metadata as a `chrome_raw` row and `cr-` metadata rows, its
    /// legacy system trace text and user traces as `chrome_raw` rows.
    pub(super) fn chrome_events(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        bundle: &protos::ChromeEventBundle,
    ) {
        use protos::chrome_metadata::Value as V;
        self.sink.touch();
        self.chrome_event_bundles += 1;
        let n = self.chrome_event_bundles;
        let mut args = Vec::new();
        for entry in &bundle.metadata {
            let name = entry.name.as_deref().unwrap_or("");
            let (arg, meta) = match &entry.value {
                Some(V::StringValue(v)) => {
                    let id = self.sink.intern(v);
                    (ArgValue::Str(id), MetaValue::Str(v.clone()))
                }
                Some(V::IntValue(v)) => (ArgValue::Int(*v), MetaValue::Int(*v)),
                Some(V::BoolValue(v)) => {
                    (ArgValue::Int(i64::from(*v)), MetaValue::Int(i64::from(*v)))
                }
                Some(V::JsonValue(v)) => {
                    let id = self.sink.intern(v);
                    (ArgValue::Json(id), MetaValue::Str(v.clone()))
                }
                None => {
                    self.sink.stat("empty_chrome_metadata", machine, 1);
                    continue;
                }
            };
            args.push(self.sink.arg(name, arg));
            let key = if n > 1 {
                format!("cr-{n}-{name}")
            } else {
                format!("cr-{name}")
            };
            self.sink.metadata_append(key, machine, meta);
        }
        if !bundle.metadata.is_empty() {
            let name = self.sink.intern_static("chrome_event.metadata");
            let args = self.sink.args.push(&args);
            self.sink.push(
                ts,
                clock,
                EventData::ChromeRaw(Box::new(ChromeRaw {
                    machine,
                    thread: None,
                    name,
                    args,
                })),
            );
        }
        let mut raw_rows: Vec<(&'static str, String)> = Vec::new();
        if !bundle.legacy_ftrace_output.is_empty() {
            raw_rows.push((
                "chrome_event.legacy_system_trace",
                bundle.legacy_ftrace_output.concat(),
            ));
        }
        for json in &bundle.legacy_json_trace {
            if json.r#type.unwrap_or(0) == 0 {
                let data = json.data.clone().unwrap_or_default();
                raw_rows.push(("chrome_event.legacy_user_trace", data));
            }
        }
        for (name, data) in raw_rows {
            let name = self.sink.intern_static(name);
            let value = ArgValue::Str(self.sink.intern(&data));
            let arg = self.sink.static_arg("data", value);
            let args = self.sink.args.push(&[arg]);
            self.sink.push(
                ts,
                clock,
                EventData::ChromeRaw(Box::new(ChromeRaw {
                    machine,
                    thread: None,
                    name,
                    args,
                })),
            );
        }
    }

    /// Telemetry's benchmark facts: metadata rows (story tags one row each).
    pub(super) fn chrome_benchmark_metadata(
        &mut self,
        machine: MachineId,
        m: &protos::ChromeBenchmarkMetadata,
    ) {
        self.sink.touch();
        let ints = [
            ("benchmark_start_time_us", m.benchmark_start_time_us),
            ("benchmark_story_run_time_us", m.story_run_time_us),
            (
                "benchmark_story_run_index",
                m.story_run_index.map(i64::from),
            ),
            ("benchmark_had_failures", m.had_failures.map(i64::from)),
        ];
        let strings = [
            ("benchmark_name", &m.benchmark_name),
            ("benchmark_description", &m.benchmark_description),
            ("benchmark_label", &m.label),
            ("benchmark_story_name", &m.story_name),
        ];
        for (k, v) in strings {
            if let Some(v) = v {
                self.sink.metadata(k, machine, MetaValue::Str(v.clone()));
            }
        }
        for (k, v) in ints {
            if let Some(v) = v {
                self.sink.metadata(k, machine, MetaValue::Int(v));
            }
        }
        for tag in &m.story_tags {
            self.sink
                .metadata_append("benchmark_story_tags", machine, MetaValue::Str(tag.clone()));
        }
    }

    /// A Chrome trigger: an instant on `Trace Triggers` that ends the flow it names, and a
    /// `cr-triggered_rule_name_hash` metadata row.
    pub(super) fn chrome_trigger(
        &mut self,
        machine: MachineId,
        ts: Option<i64>,
        clock: ClockRef,
        t: &protos::ChromeTrigger,
    ) {
        if let Some(hash) = t.trigger_name_hash {
            self.sink.metadata_append(
                "cr-triggered_rule_name_hash",
                machine,
                MetaValue::Int(i64::from(hash)),
            );
        }
        let Some(ts) = ts else { return };
        let mut args = Vec::new();
        if let Some(hash) = t.trigger_name_hash {
            args.push(
                self.sink
                    .static_arg("chrome_trigger.name_hash", ArgValue::Uint(u64::from(hash))),
            );
        }
        if let Some(name) = &t.trigger_name {
            let v = ArgValue::Str(self.sink.intern(name));
            args.push(self.sink.static_arg("chrome_trigger.name", v));
        }
        let args = self.sink.args.push(&args);
        if t.trigger_name_hash.is_some() && args != NO_ARGS {
            self.translatable.push(args);
        }
        let flows = match t.flow_id {
            Some(id) => self.sink.flows(&[FlowOp::Terminating(id)]),
            None => NO_FLOWS,
        };
        let track_name = self.sink.intern_static("Trace Triggers");
        let name = match &t.trigger_name {
            Some(n) => self.sink.intern(n),
            None => self.sink.intern_static("chrome_trigger"),
        };
        let slice = SliceEvent {
            track: self.sink.track(TrackKey::GlobalSlices {
                machine,
                kind: "triggers",
                name: track_name,
            }),
            category: NULL_STR,
            name,
            args,
            thread_ts: NO_TS,
            flows,
        };
        let data = EventData::Complete {
            slice,
            dur: 0,
            thread_dur: NO_TS,
        };
        self.sink.push(ts, clock, data);
    }

    /// A deobfuscation map's class names, for `android_view_dump` class name args.
    pub(super) fn chrome_class_names(&mut self, d: &protos::DeobfuscationMapping) {
        for class in &d.obfuscated_classes {
            if let (Some(o), Some(r)) = (&class.obfuscated_name, &class.deobfuscated_name) {
                let o = self.sink.intern(o);
                let r = self.sink.intern(r);
                self.sink.translations.deobfuscated_classes.insert(o, r);
            }
        }
    }

    /// Module symbols by (build id, address), for Mojo method names.
    pub(super) fn chrome_module_symbols(&mut self, m: &protos::ModuleSymbols) {
        // Keyed as the mappings' rows are: hex build id, or the path without one.
        let build_id = match m.build_id.as_deref().filter(|b| !b.is_empty()) {
            Some(b) => self.sink.intern(&profiling::build_id_hex(b.as_bytes())),
            None => match m.path.as_deref() {
                Some(p) => self.sink.intern(p),
                None => return,
            },
        };
        for a in &m.address_symbols {
            let Some(function) = a.lines.last().and_then(|l| l.function_name.as_deref()) else {
                continue;
            };
            let f = self.sink.intern(function);
            self.module_symbols
                .insert((build_id, a.address.unwrap_or(0)), f);
        }
    }
}
