//! Which module takes each TracePacket: a packet's header is read (sequence, machine,
//! timestamp and clock), then its payload is handed to the module of its family
//! (`track_events`, `ftrace`, `android_probes`, `system_probes`, `profiling`, `winscope`,
//! `v8`, …). A payload Sextant does not import is named by its field number and counted
//! (`proto_packet_kind_not_imported`), never dropped silently. Hands on nothing itself:
//! each family module pushes its events into the sink.

use super::*;

/// The TracePacket field a packet's payload came in, as a content path.
fn content_path(data: Option<&trace_packet::Data>) -> &'static str {
    use trace_packet::Data as D;
    match data {
        Some(D::FtraceEvents(_)) => "TracePacket.ftrace_events",
        Some(D::ProcessTree(_)) => "TracePacket.process_tree",
        Some(D::ClockSnapshot(_)) => "TracePacket.clock_snapshot",
        Some(D::Trigger(_)) => "TracePacket.trigger",
        Some(D::ServiceEvent(_)) => "TracePacket.service_event",
        Some(D::TraceAttributes(_)) => "TracePacket.trace_attributes",
        Some(D::InitialDisplayState(_)) => "TracePacket.initial_display_state",
        Some(D::CloneSnapshotTrigger(_)) => "TracePacket.clone_snapshot_trigger",
        Some(D::SysStats(_)) => "TracePacket.sys_stats",
        Some(D::ProcessStats(_)) => "TracePacket.process_stats",
        Some(D::TrackEvent(_)) => "TracePacket.track_event",
        Some(D::FtraceStats(_)) => "TracePacket.ftrace_stats",
        Some(D::TraceStats(_)) => "TracePacket.trace_stats",
        Some(D::StreamingProfilePacket(_)) => "TracePacket.streaming_profile_packet",
        Some(D::SynchronizationMarker(_)) => "TracePacket.synchronization_marker",
        Some(D::ProcessDescriptor(_)) => "TracePacket.process_descriptor",
        Some(D::ThreadDescriptor(_)) => "TracePacket.thread_descriptor",
        Some(D::SystemInfo(_)) => "TracePacket.system_info",
        Some(D::TraceConfig(_)) => "TracePacket.trace_config",
        Some(D::ChromeMetadata(_)) => "TracePacket.chrome_metadata",
        Some(D::CpuInfo(_)) => "TracePacket.cpu_info",
        Some(D::CompressedPackets(_)) => "TracePacket.compressed_packets",
        Some(D::TrackDescriptor(_)) => "TracePacket.track_descriptor",
        Some(D::TraceUuid(_)) => "TracePacket.trace_uuid",
        Some(D::RemoteClockSync(_)) => "TracePacket.remote_clock_sync",
        Some(D::ZstdCompressedPackets(_)) => "TracePacket.zstd_compressed_packets",
        Some(D::ChromeEvents(_)) => "TracePacket.chrome_events",
        Some(D::ChromeBenchmarkMetadata(_)) => "TracePacket.chrome_benchmark_metadata",
        Some(D::ExtensionDescriptor(_)) => "TracePacket.extension_descriptor",
        Some(D::TranslationTable(_)) => "TracePacket.translation_table",
        Some(D::UiState(_)) => "TracePacket.ui_state",
        Some(D::TrackEventRangeOfInterest(_)) => "TracePacket.track_event_range_of_interest",
        Some(D::ChromeTrigger(_)) => "TracePacket.chrome_trigger",
        Some(D::ProfilePacket(_)) => "TracePacket.profile_packet",
        Some(D::PerfSample(_)) => "TracePacket.perf_sample",
        Some(D::StackSample(_)) => "TracePacket.stack_sample",
        Some(D::HeapGraph(_)) => "TracePacket.heap_graph",
        Some(D::ArtProcessMetadata(_)) => "TracePacket.art_process_metadata",
        Some(D::ModuleSymbols(_)) => "TracePacket.module_symbols",
        Some(D::DeobfuscationMapping(_)) => "TracePacket.deobfuscation_mapping",
        Some(D::SmapsPacket(_)) => "TracePacket.smaps_packet",
        Some(D::Battery(_)) => "TracePacket.battery",
        Some(D::AndroidLog(_)) => "TracePacket.android_log",
        Some(D::PowerRails(_)) => "TracePacket.power_rails",
        Some(D::PackagesList(_)) => "TracePacket.packages_list",
        Some(D::GpuCounterEvent(_)) => "TracePacket.gpu_counter_event",
        Some(D::GpuMemTotalEvent(_)) => "TracePacket.gpu_mem_total_event",
        Some(D::FrameTimelineEvent(_)) => "TracePacket.frame_timeline_event",
        Some(D::AndroidEnergyEstimationBreakdown(_)) => {
            "TracePacket.android_energy_estimation_breakdown"
        }
        Some(D::AndroidSystemProperty(_)) => "TracePacket.android_system_property",
        Some(D::EntityStateResidency(_)) => "TracePacket.entity_state_residency",
        Some(D::KernelWakelockData(_)) => "TracePacket.kernel_wakelock_data",
        Some(D::CpuPerUidData(_)) => "TracePacket.cpu_per_uid_data",
        Some(D::UserList(_)) => "TracePacket.user_list",
        Some(D::GraphicsFrameEvent(_)) => "TracePacket.graphics_frame_event",
        Some(D::GenericGpuFrequencyEvent(_)) => "TracePacket.generic_gpu_frequency_event",
        Some(D::GpuRenderStageEvent(_)) => "TracePacket.gpu_render_stage_event",
        Some(D::VulkanApiEvent(_)) => "TracePacket.vulkan_api_event",
        Some(D::VulkanMemoryEvent(_)) => "TracePacket.vulkan_memory_event",
        Some(D::GpuLog(_)) => "TracePacket.gpu_log",
        Some(D::GpuInfo(_)) => "TracePacket.gpu_info",
        Some(D::JournaldEvent(_)) => "TracePacket.journald_event",
        Some(D::NetworkPacket(_)) => "TracePacket.network_packet",
        Some(D::NetworkPacketBundle(_)) => "TracePacket.network_packet_bundle",
        Some(D::AppWakelockBundle(_)) => "TracePacket.app_wakelock_bundle",
        Some(D::StatsdAtom(_)) => "TracePacket.statsd_atom",
        Some(D::WinscopeExtensions(_)) => "TracePacket.winscope_extensions",
        Some(D::SurfaceflingerLayersSnapshot(_)) => "TracePacket.surfaceflinger_layers_snapshot",
        Some(D::SurfaceflingerTransactions(_)) => "TracePacket.surfaceflinger_transactions",
        Some(D::ShellTransition(_)) => "TracePacket.shell_transition",
        Some(D::ShellHandlerMappings(_)) => "TracePacket.shell_handler_mappings",
        Some(D::ProtologMessage(_)) => "TracePacket.protolog_message",
        Some(D::ProtologViewerConfig(_)) => "TracePacket.protolog_viewer_config",
        Some(D::AndroidGameInterventionList(_)) => "TracePacket.android_game_intervention_list",
        Some(D::V8JsCode(_)) => "TracePacket.v8_js_code",
        Some(D::V8InternalCode(_)) => "TracePacket.v8_internal_code",
        Some(D::V8WasmCode(_)) => "TracePacket.v8_wasm_code",
        Some(D::V8RegExpCode(_)) => "TracePacket.v8_reg_exp_code",
        Some(D::V8CodeMove(_)) => "TracePacket.v8_code_move",
        Some(D::MemoryTrackerSnapshot(_)) => "TracePacket.memory_tracker_snapshot",
        Some(D::PerfettoMetatrace(_)) => "TracePacket.perfetto_metatrace",
        Some(D::AndroidCameraFrameEvent(_)) => "TracePacket.android_camera_frame_event",
        Some(D::EtwEvents(_)) => "TracePacket.etw_events",
        None => "TracePacket (payload Sextant does not read)",
    }
}

/// TracePacket fields Sextant's `TracePacket` declares.
const KNOWN_PACKET_FIELDS: &[u32] = &[
    1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46,
    47, 48, 49, 50, 51, 52, 53, 54, 57, 58, 59, 60, 61, 63, 64, 65, 66, 67, 69, 70, 71, 72, 73, 76,
    77, 79, 80, 82, 83, 84, 86, 87, 88, 89, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103,
    104, 105, 107, 109, 112, 113, 115, 116, 119, 123, 126, 128, 129, 132, 133,
];

/// The field number of the payload of a packet whose kind Sextant does not import: the
/// first length-delimited field its `TracePacket` does not declare (a payload it decodes
/// but ignores is named by its own number).
fn unknown_payload(mut packet: &[u8]) -> Option<u32> {
    const PAYLOADS_IGNORED: &[u32] = &[50, 133];
    while let Some((number, value)) = schema::next_field(&mut packet) {
        if matches!(value, schema::Value::Len(_))
            && (!KNOWN_PACKET_FIELDS.contains(&number) || PAYLOADS_IGNORED.contains(&number))
        {
            return Some(number);
        }
    }
    None
}

impl Parser<'_> {
    /// One TracePacket, found at byte `offset` of the file; `decoded` when the fast path
    /// read it already (see [`packets`]); `spare` holds TrackEvents to decode into.
    pub(super) fn packet(
        &mut self,
        bytes: &[u8],
        offset: u64,
        decoded: Option<packets::Decoded>,
        spare: &mut packets::Spare,
    ) {
        // Every packet is an input event (an ftrace bundle hands that on to its events).
        self.sink.begin_input();
        self.packet_inner(bytes, offset, decoded, spare);
        self.sink.end_input();
    }

    fn packet_inner(
        &mut self,
        bytes: &[u8],
        offset: u64,
        decoded: Option<packets::Decoded>,
        spare: &mut packets::Spare,
    ) {
        self.packet_at = (bytes.as_ptr() as usize, offset);
        if self.fast_track_event(bytes, decoded, spare) {
            return;
        }
        // Raw ftrace rows read the packet's own bytes, repaired or not: a skipped field
        // may be an event of a kind the schema does not know.
        let pkt = match TracePacket::decode(bytes) {
            Ok(p) => p,
            Err(_) => match self.repair(bytes, offset) {
                Some(p) => p,
                None => {
                    self.stat("proto_packet_decode_failure", self.ctx.machine);
                    return;
                }
            },
        };
        self.packets += 1;
        self.flush_pending_track_event();
        let path = content_path(pkt.data.as_ref());
        if matches!(pkt.data, Some(trace_packet::Data::TrackEvent(_))) {
            self.pending_track_event = Some(bytes.len() as u64);
        } else {
            let entry = self.content.entry(path).or_default();
            entry.0 += bytes.len() as u64;
            entry.1 += 1;
        }
        let Some(Placed {
            machine,
            seq_id,
            trusted_seq,
            ts,
            clock,
        }) = self.header(&Header::of(&pkt))
        else {
            return;
        };
        let Some(data) = pkt.data else {
            if let Some(kind) =
                unknown_payload(bytes).filter(|&k| generic_kernel::is_generic_kernel(k))
            {
                let ts = ts.unwrap_or(0);
                self.generic_kernel(machine, ts, clock, bytes);
                let _ = kind;
                return;
            }
            if let Some(kind) = unknown_payload(bytes) {
                let kind = Some(i64::from(kind));
                self.sink
                    .stat_indexed("proto_packet_kind_not_imported", kind, machine, 1);
            }
            return;
        };
        // Packets that describe the trace or its sequences rather than events: used once
        // read. The others must leave events, or stats saying why not.
        use trace_packet::Data as D;
        if matches!(
            data,
            D::ServiceEvent(_)
                | D::TraceAttributes(_)
                | D::SystemInfo(_)
                | D::TrackDescriptor(_)
                | D::ClockSnapshot(_)
                | D::RemoteClockSync(_)
                | D::TraceStats(_)
                | D::FtraceStats(_)
                | D::TraceUuid(_)
                | D::TraceConfig(_)
                | D::ChromeMetadata(_)
                | D::SynchronizationMarker(_)
                | D::CpuInfo(_)
        ) {
            self.sink.touch();
        }
        match &data {
            trace_packet::Data::ServiceEvent(e) => {
                self.losses.service_event(self.sink, machine, ts, e);
            }
            trace_packet::Data::CloneSnapshotTrigger(t) => {
                // Only the first clone trigger read names the trace (behaviour-android
                // "first trace trigger → metadata trace_trigger").
                let first = self.losses.clone_snapshot_trigger(self.sink, machine, ts);
                if let (true, Some(name)) = (first, &t.trigger_name) {
                    self.sink
                        .metadata("trace_trigger", machine, MetaValue::Str(name.clone()));
                }
            }
            trace_packet::Data::SystemInfo(info) => self.losses.system_info(machine, info),
            trace_packet::Data::CompressedPackets(_)
            | trace_packet::Data::ZstdCompressedPackets(_) => {
                let kind = unknown_payload(bytes).map(i64::from);
                self.sink
                    .stat_indexed("proto_packet_kind_not_imported", kind, machine, 1);
            }
            _ => {}
        }
        match data {
            // The reference drops TrackEvents it cannot give a sequence.
            trace_packet::Data::TrackEvent(_) if trusted_seq.is_none() => {
                self.stat("track_event_missing_sequence_id", machine);
            }
            trace_packet::Data::TrackEvent(ev) => {
                let raw = typed_args::field_bytes(bytes, 11).unwrap_or(&[]);
                self.track_event(machine, seq_id, ts, clock, &ev, raw);
            }
            trace_packet::Data::TrackDescriptor(mut d) => {
                // A producer in a pid namespace describes its own ids: the packet's
                // trusted pid says which root-level process they are local to.
                if let Some(root) = pkt.trusted_pid {
                    self.namespaces.translate(machine, i64::from(root), &mut d);
                }
                self.track_descriptor(machine, seq_id, ts.unwrap_or(0), clock, d);
            }
            // Trace Processor's tokenizer drops a ThreadDescriptor packet without a sequence,
            // and one on a sequence whose incremental state is not valid (its delta
            // timestamps would be wrong once the state is valid again).
            trace_packet::Data::ThreadDescriptor(_) if trusted_seq.is_none() => {
                self.stat("thread_descriptor_missing_sequence_id", machine);
            }
            trace_packet::Data::ThreadDescriptor(_)
                if !self
                    .sequences
                    .get(&(machine, seq_id))
                    .is_some_and(|s| s.valid) =>
            {
                let name = "thread_descriptor_skipped_incremental_state_invalid";
                self.stat(name, machine);
            }
            trace_packet::Data::ThreadDescriptor(t) => {
                let thread = self.chrome_thread(machine, &t, None);
                if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
                    seq.thread = Some(thread);
                    seq.set_thread_references(&t);
                }
                self.sink
                    .push(ts.unwrap_or(0), clock, EventData::Thread(thread));
                self.chrome_thread_names(ts.unwrap_or(0), clock, thread, &t, None, NULL_STR);
            }
            trace_packet::Data::ProcessDescriptor(pd) => {
                let info = self.process_descriptor(machine, &pd);
                let process = info.process;
                self.sink
                    .push(ts.unwrap_or(0), clock, EventData::Process(Box::new(info)));
                self.process_described(ts.unwrap_or(0), clock, process);
                self.chrome_process_facts(ts.unwrap_or(0), clock, process, &pd, None);
            }
            trace_packet::Data::ClockSnapshot(cs) => self.clock_snapshot(machine, seq_id, &cs),
            trace_packet::Data::RemoteClockSync(sync) => self.remote_clock_sync(machine, &sync),
            trace_packet::Data::Trigger(t) => self.trigger(machine, ts, clock, &t),
            trace_packet::Data::CloneSnapshotTrigger(t) => self.trigger(machine, ts, clock, &t),
            trace_packet::Data::ServiceEvent(e) if e.all_data_sources_flushed() => {
                let ts = MetaValue::Int(ts.unwrap_or(0));
                self.sink
                    .metadata_append("all_data_source_flushed_ns", machine, ts);
            }
            trace_packet::Data::InitialDisplayState(d) => {
                if let (Some(ts), Some(state)) = (ts, d.display_state) {
                    let name = self.sink.intern("ScreenState");
                    let track = self.sink.track(TrackKey::GlobalCounter {
                        machine,
                        name,
                        kind: "screen_state",
                    });
                    let value = Real(f64::from(state));
                    self.sink.push(
                        ts,
                        clock,
                        EventData::Counter {
                            track,
                            value,
                            args: NO_ARGS,
                        },
                    );
                }
            }
            trace_packet::Data::ProcessTree(tree) => {
                self.process_tree(machine, ts.unwrap_or(0), clock, &tree)
            }
            trace_packet::Data::FtraceEvents(bundle) => {
                self.ftrace_bundle(machine, seq_id, bundle, bytes);
            }
            trace_packet::Data::SystemInfo(info) => self.system_info(machine, &info),
            trace_packet::Data::TraceAttributes(a) => self.trace_attributes(&a),
            trace_packet::Data::CpuInfo(info) => self.cpu_info(machine, ts, clock, &info),
            trace_packet::Data::TraceStats(stats) => {
                self.losses.trace_stats(self.sink, machine, &stats);
            }
            trace_packet::Data::FtraceStats(stats) => {
                match self.losses.ftrace_stats(self.sink, machine, seq_id, &stats) {
                    Ok(setup_errors) => {
                        for message in setup_errors {
                            let message = ArgValue::Str(self.sink.intern(&message));
                            self.log("ftrace_setup_errors", machine, &[("message", message)]);
                        }
                    }
                    Err(e) => {
                        self.fatal.get_or_insert(e);
                    }
                }
            }
            trace_packet::Data::StreamingProfilePacket(profile) => {
                self.streaming_profile(machine, seq_id, &profile);
            }
            trace_packet::Data::PerfSample(sample) => {
                self.perf_sample(machine, seq_id, ts, clock, &sample);
            }
            trace_packet::Data::StackSample(sample) => {
                self.stack_sample(machine, seq_id, ts, clock, &sample);
            }
            trace_packet::Data::HeapGraph(graph) => {
                self.heap_graph(machine, seq_id, ts.map(|t| (t, clock)), &graph);
            }
            trace_packet::Data::ArtProcessMetadata(meta) => {
                self.art_process_metadata(machine, ts.map(|t| (t, clock)), &meta);
            }
            trace_packet::Data::ProfilePacket(profile) => {
                self.profile_packet(machine, seq_id, ts, clock, &profile);
            }
            trace_packet::Data::ModuleSymbols(symbols) => {
                self.module_symbols(machine, &symbols);
                self.chrome_module_symbols(&symbols);
            }
            trace_packet::Data::DeobfuscationMapping(map) => {
                self.deobfuscation_mapping(&map);
                self.chrome_class_names(&map);
            }
            trace_packet::Data::TraceUuid(uuid) => {
                let (msb, lsb) = (uuid.msb.unwrap_or(0) as u64, uuid.lsb.unwrap_or(0) as u64);
                self.uuid_seen = true;
                let s = uuid_string(msb, lsb);
                self.sink.metadata("trace_uuid", machine, MetaValue::Str(s));
            }
            // The config's uuid names the trace unless a TraceUuid packet does.
            trace_packet::Data::TraceConfig(bytes) => {
                let text = config_text::trace_config_text(&bytes);
                self.sink
                    .metadata("trace_config_pbtxt", machine, MetaValue::Str(text));
                let Ok(config) = protos::TraceConfig::decode(&bytes[..]) else {
                    self.sink.stat("proto_packet_decode_failure", machine, 1);
                    return;
                };
                if let Some(name) = config.unique_session_name.clone() {
                    self.sink
                        .metadata("unique_session_name", machine, MetaValue::Str(name));
                }
                if let (Some(msb), Some(lsb), false) =
                    (config.trace_uuid_msb, config.trace_uuid_lsb, self.uuid_seen)
                {
                    self.uuid_seen = true;
                    let s = uuid_string(msb as u64, lsb as u64);
                    self.sink.metadata("trace_uuid", machine, MetaValue::Str(s));
                }
                // statsd_metadata (7).triggering_subscription_id (4).
                if let Some(id) =
                    typed_args::field_bytes(&bytes, 7).and_then(|m| typed_args::field_scalar(m, 4))
                {
                    self.sink.metadata(
                        "statsd_triggering_subscription_id",
                        machine,
                        MetaValue::Int(id as i64),
                    );
                }
                self.losses.trace_config(self.sink, machine, config);
            }
            trace_packet::Data::TrackEventRangeOfInterest(bytes) => {
                self.range_of_interest(machine, &bytes)
            }
            trace_packet::Data::UiState(bytes) => {
                let text = chrome::base64(&bytes);
                self.sink
                    .metadata("ui_state", machine, MetaValue::Str(text));
            }
            trace_packet::Data::ChromeMetadata(meta) => self.chrome_metadata(machine, &meta),
            trace_packet::Data::ExtensionDescriptor(d) => self.extension_descriptor(machine, &d),
            trace_packet::Data::TranslationTable(t) => self.translation_table(&t),
            trace_packet::Data::ChromeEvents(bundle) => {
                self.chrome_events(machine, ts.unwrap_or(0), clock, &bundle)
            }
            trace_packet::Data::ChromeBenchmarkMetadata(m) => {
                self.chrome_benchmark_metadata(machine, &m)
            }
            trace_packet::Data::ChromeTrigger(t) => self.chrome_trigger(machine, ts, clock, &t),
            // Android and system probes.
            trace_packet::Data::FrameTimelineEvent(ev) => {
                self.frame_timeline(machine, ts, clock, &ev)
            }
            trace_packet::Data::AndroidLog(log) => self.android_log(machine, &log),
            trace_packet::Data::PackagesList(list) => self.packages_list(machine, &list),
            trace_packet::Data::UserList(list) => self.user_list(machine, &list),
            trace_packet::Data::AndroidGameInterventionList(list) => {
                self.game_interventions(machine, &list)
            }
            trace_packet::Data::PowerRails(rails) => self.power_rails(machine, ts, clock, &rails),
            trace_packet::Data::GpuCounterEvent(ev) => {
                self.gpu_counter_event(machine, seq_id, ts, clock, &ev)
            }
            trace_packet::Data::GraphicsFrameEvent(ev) => {
                self.graphics_frame_event(machine, ts, clock, &ev)
            }
            trace_packet::Data::GenericGpuFrequencyEvent(ev) => {
                if let Some(ts) = ts {
                    self.gpu_frequency(machine, ts, clock, &ev)
                }
            }
            trace_packet::Data::GpuRenderStageEvent(ev) => {
                self.gpu_render_stage(machine, seq_id, ts.unwrap_or(0), clock, &ev)
            }
            trace_packet::Data::VulkanMemoryEvent(ev) => {
                self.vulkan_memory_event(machine, seq_id, ts.unwrap_or(0), clock, &ev)
            }
            trace_packet::Data::VulkanApiEvent(ev) => {
                self.vulkan_api_event(machine, ts.unwrap_or(0), clock, &ev)
            }
            trace_packet::Data::GpuLog(log) => self.gpu_log(machine, ts.unwrap_or(0), clock, &log),
            trace_packet::Data::GpuInfo(info) => self.gpu_info(machine, &info),
            trace_packet::Data::JournaldEvent(ev) => {
                self.journald(machine, ts.unwrap_or(0), clock, &ev)
            }
            trace_packet::Data::NetworkPacket(ev) => {
                self.network_packet(machine, ts.unwrap_or(0), clock, &ev)
            }
            trace_packet::Data::NetworkPacketBundle(b) => {
                self.network_packet_bundle(machine, seq_id, ts.unwrap_or(0), clock, &b)
            }
            trace_packet::Data::AppWakelockBundle(b) => {
                self.app_wakelock_bundle(machine, seq_id, ts.unwrap_or(0), clock, &b)
            }
            trace_packet::Data::StatsdAtom(b) => {
                self.statsd_atoms(machine, ts.unwrap_or(0), clock, &b)
            }
            trace_packet::Data::V8JsCode(c) => {
                self.v8_js_code(machine, seq_id, ts.unwrap_or(0), clock, &c)
            }
            trace_packet::Data::V8InternalCode(c) => {
                self.v8_internal_code(machine, seq_id, ts.unwrap_or(0), clock, &c)
            }
            trace_packet::Data::V8WasmCode(c) => {
                self.v8_wasm_code(machine, seq_id, ts.unwrap_or(0), clock, &c)
            }
            trace_packet::Data::V8RegExpCode(c) => {
                self.v8_regexp_code(machine, seq_id, ts.unwrap_or(0), clock, &c)
            }
            trace_packet::Data::V8CodeMove(m) => self.v8_code_move(machine, seq_id, &m),
            trace_packet::Data::MemoryTrackerSnapshot(m) => {
                self.memory_snapshot(machine, ts.unwrap_or(0), clock, &m)
            }
            trace_packet::Data::PerfettoMetatrace(m) => {
                self.metatrace(machine, ts.unwrap_or(0), clock, &m)
            }
            trace_packet::Data::AndroidCameraFrameEvent(ev) => {
                self.camera_frame(machine, seq_id, &ev)
            }
            trace_packet::Data::EtwEvents(bundle) => self.etw_bundle(machine, seq_id, &bundle),
            trace_packet::Data::WinscopeExtensions(bytes) => {
                self.winscope_extensions(machine, seq_id, ts.unwrap_or(0), clock, &bytes)
            }
            trace_packet::Data::SurfaceflingerLayersSnapshot(bytes) => {
                self.sf_layers_snapshot(machine, seq_id, ts.unwrap_or(0), clock, &bytes)
            }
            trace_packet::Data::SurfaceflingerTransactions(bytes) => {
                self.sf_transactions(machine, seq_id, ts.unwrap_or(0), clock, &bytes)
            }
            trace_packet::Data::ShellTransition(bytes) => {
                self.shell_transition(machine, seq_id, ts.unwrap_or(0), clock, &bytes)
            }
            trace_packet::Data::ProtologMessage(bytes) => {
                self.protolog_message(machine, seq_id, ts.unwrap_or(0), clock, &bytes)
            }
            trace_packet::Data::ProtologViewerConfig(bytes) => {
                self.protolog_viewer_config(ts.unwrap_or(0), clock, &bytes)
            }
            trace_packet::Data::ShellHandlerMappings(bytes) => {
                self.shell_handler_mappings(machine, seq_id, ts.unwrap_or(0), clock, &bytes)
            }
            data => {
                let ts = ts.unwrap_or(0);
                match data {
                    trace_packet::Data::ProcessStats(s) => {
                        self.process_stats(machine, ts, clock, &s)
                    }
                    trace_packet::Data::SmapsPacket(s) => self.smaps_packet(machine, ts, clock, &s),
                    trace_packet::Data::SysStats(s) => self.sys_stats(machine, ts, clock, &s),
                    trace_packet::Data::Battery(b) => self.battery(machine, ts, clock, &b),
                    trace_packet::Data::GpuMemTotalEvent(e) => {
                        self.gpu_mem_total(machine, ts, clock, &e)
                    }
                    trace_packet::Data::AndroidEnergyEstimationBreakdown(e) => {
                        self.energy_breakdown(machine, ts, clock, &e)
                    }
                    trace_packet::Data::EntityStateResidency(e) => {
                        self.entity_state_residency(machine, ts, clock, &e)
                    }
                    trace_packet::Data::AndroidSystemProperty(p) => {
                        self.system_property(machine, ts, clock, &p)
                    }
                    trace_packet::Data::KernelWakelockData(w) => {
                        self.kernel_wakelocks(machine, ts, clock, &w)
                    }
                    trace_packet::Data::CpuPerUidData(c) => {
                        self.cpu_per_uid(machine, ts, clock, &c)
                    }
                    _ => {}
                }
            }
        }
    }
}
