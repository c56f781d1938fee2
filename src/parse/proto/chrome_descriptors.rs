//! Chrome's process and thread descriptors (behaviour-chrome-typed-args §7): process types
//! and thread types as labels that name processes and threads at Trace Processor's
//! priorities, process labels, crash trace ids and host app packages as process args,
//! sandboxed thread ids. Hands on process/thread names and args.

use super::*;

/// Process type labels (ProcessDescriptor.ChromeProcessType / ChromeProcessDescriptor
/// .ProcessType share the numbers): the label, or the enum's name where Chrome has no label.
pub(super) fn process_type_label(t: i32) -> Option<&'static str> {
    Some(match t {
        1 => "Browser",
        2 => "Renderer",
        3 => "Utility",
        4 => "SandboxHelper",
        5 => "PROCESS_SANDBOX_HELPER",
        6 => "Gpu",
        7 => "PpapiPlugin",
        8 => "PpapiBroker",
        9 => "Service: network.mojom.NetworkService",
        10 => "Service: tracing.mojom.TracingService",
        11 => "Service: storage.mojom.StorageService",
        12 => "Service: audio.mojom.AudioService",
        13 => "Service: data_decoder.mojom.DataDecoderService",
        14 => "Service: chrome.mojom.UtilWin",
        15 => "Service: proxy_resolver.mojom.ProxyResolverFactory",
        16 => "Service: media.mojom.CdmServiceBroker",
        17 => "Service: video_capture.mojom.VideoCaptureService",
        18 => "Service: unzip.mojom.Unzipper",
        19 => "Service: mirroring.mojom.MirroringService",
        20 => "Service: patch.mojom.FilePatcher",
        21 => "Service: chromeos.tts.mojom.TtsService",
        22 => "Service: printing.mojom.PrintingService",
        23 => "Service: quarantine.mojom.Quarantine",
        24 => "Service: chromeos.local_search_service.mojom.LocalSearchService",
        25 => "Service: chromeos.assistant.mojom.AssistantAudioDecoderFactory",
        26 => "Service: chrome.mojom.FileUtilService",
        27 => "Service: printing.mojom.PrintCompositor",
        28 => "Service: paint_preview.mojom.PaintPreviewCompositorCollection",
        29 => "Service: media.mojom.SpeechRecognitionService",
        30 => "Service: device.mojom.XRDeviceService",
        31 => "Service: chrome.mojom.UtilReadIcon",
        32 => "Service: language_detection.mojom.LanguageDetectionService",
        33 => "Service: sharing.mojom.Sharing",
        34 => "Service: chrome.mojom.MediaParserFactory",
        35 => "Service: qrcode_generator.mojom.QRCodeService",
        36 => "Service: chrome.mojom.ProfileImport",
        37 => "Service: chromeos.ime.mojom.ImeService",
        38 => "Service: recording.mojom.RecordingService",
        39 => "Service: shape_detection.mojom.ShapeDetectionService",
        40 => "Extension Renderer",
        41 => "Service: media.mojom.MediaFoundationServiceBroker",
        42 => "PROCESS_RENDERER_TOP_WEBUI",
        _ => return None,
    })
}

/// Thread type labels (ChromeThreadDescriptor.ThreadType; the legacy
/// ThreadDescriptor.ChromeThreadType uses the same numbers).
pub(super) fn thread_type_label(t: i32) -> Option<&'static str> {
    Some(match t {
        1 => "CrProcessMain",
        2 => "ChromeIOThread",
        3 => "ThreadPoolBackgroundWorker&",
        4 => "ThreadPoolForegroundWorker&",
        5 => "ThreadPoolSingleThreadForegroundBlocking&",
        6 => "ThreadPoolSingleThreadBackgroundBlocking&",
        7 => "ThreadPoolService",
        8 => "Compositor",
        9 => "VizCompositorThread",
        10 => "CompositorTileWorker&",
        11 => "ServiceWorkerThread&",
        12 => "NetworkService",
        13 => "Chrome_ChildIOThread",
        14 => "Chrome_IOThread",
        15 => "CrBrowserMain",
        16 => "CrRendererMain",
        17 => "CrUtilityMain",
        18 => "CrGpuMain",
        19 => "CacheThread_BlockFile",
        20 => "Media",
        21 => "AudioOutputDevice",
        22 => "AudioInputDevice",
        23 => "GpuMemoryThread",
        24 => "GpuVSyncThread",
        25 => "DXVAVideoDecoderThread",
        26 => "BrowserWatchdog",
        27 => "WebRTC_Network",
        28 => "Window owner thread",
        29 => "WebRTC_Signaling",
        30 => "WebRTC_Worker",
        31 => "CrPPAPIMain",
        32 => "GpuWatchdog",
        33 => "swapper",
        34 => "Gamepad polling thread",
        35 => "WebCrypto",
        36 => "Database thread",
        37 => "Proxy Resolver",
        38 => "Chrome_DevToolsADBThread",
        39 => "NetworkConfigWatcher",
        40 => "wasapi_render_thread",
        41 => "LoaderLockSampler",
        42 => "VSyncThread",
        50 => "MemoryInfra",
        51 => "StackSamplingProfiler",
        52 => "CompositorGpuThread",
        _ => return None,
    })
}

/// Process name priority of a process type label: renderers' labels beat a descriptor's
/// process name, other labels do not.
fn label_priority(t: i32) -> u8 {
    if matches!(t, 2 | 40) {
        3
    } else {
        1
    }
}

/// A sandboxed Chrome thread's tid: its pid in the high half, so that tids of different
/// sandboxes do not collide.
pub(super) fn sandboxed_tid(pid: i64, tid: i64) -> i64 {
    (pid << 32) | (tid & 0xffff_ffff)
}

impl Parser<'_> {
    /// A ProcessDescriptor's and ChromeProcessDescriptor's Chrome facts: the process type's
    /// label as a name, the process labels and Chrome's args.
    pub(super) fn chrome_process_facts(
        &mut self,
        ts: i64,
        clock: ClockRef,
        process: ProcessRef,
        pd: &protos::ProcessDescriptor,
        chrome: Option<&protos::ChromeProcessDescriptor>,
    ) {
        let mut names = Vec::new();
        if let Some(t) = pd.chrome_process_type {
            if let Some(label) = process_type_label(t) {
                names.push((self.sink.intern(label), label_priority(t)));
            }
        }
        let mut args = Vec::new();
        for (i, label) in pd.process_labels.iter().enumerate() {
            let flat = self.sink.intern_static("chrome.process_label");
            let key = self.sink.intern(&format!("chrome.process_label[{i}]"));
            self.sink.flat_keys.insert(key, flat);
            let value = ArgValue::Str(self.sink.intern(label));
            args.push(Arg {
                flat_key: flat,
                key,
                value,
            });
        }
        if let Some(c) = chrome {
            if let Some(t) = c.process_type {
                if let Some(label) = process_type_label(t) {
                    let label = self.sink.intern(label);
                    names.push((label, label_priority(t)));
                    args.push(
                        self.sink
                            .static_arg("chrome.process_type", ArgValue::Str(label)),
                    );
                }
            }
            if let Some(app) = &c.host_app_package_name {
                let v = ArgValue::Str(self.sink.intern(app));
                args.push(self.sink.static_arg("chrome.host_app_package_name", v));
            }
            if let Some(id) = c.crash_trace_id {
                args.push(
                    self.sink
                        .static_arg("chrome.crash_trace_id", ArgValue::Uint(id)),
                );
            }
        }
        for (name, priority) in names {
            let data = EventData::ProcessName {
                process,
                name,
                priority,
            };
            self.sink.push(ts, clock, data);
        }
        if !args.is_empty() {
            let args = self.sink.args.push(&args);
            self.sink
                .push(ts, clock, EventData::ProcessArgs { process, args });
        }
    }

    /// A ThreadDescriptor's thread (sandboxed tids made unique) and its name: the thread
    /// name, else the legacy thread type's label (descriptor priority); a Chrome thread
    /// type's label names it below that.
    pub(super) fn chrome_thread(
        &mut self,
        machine: MachineId,
        td: &protos::ThreadDescriptor,
        chrome: Option<&protos::ChromeThreadDescriptor>,
    ) -> ThreadRef {
        let pid = td.pid.map(i64::from);
        let mut tid = td.tid.unwrap_or(0);
        if let (Some(pid), true) = (pid, chrome.is_some_and(|c| c.is_sandboxed_tid())) {
            tid = sandboxed_tid(pid, tid);
        }
        ThreadRef { machine, tid, pid }
    }

    /// The names a ThreadDescriptor (and its Chrome part) give its thread.
    pub(super) fn chrome_thread_names(
        &mut self,
        ts: i64,
        clock: ClockRef,
        thread: ThreadRef,
        td: &protos::ThreadDescriptor,
        chrome: Option<&protos::ChromeThreadDescriptor>,
        fallback: StrId,
    ) {
        if let Some(label) = chrome
            .and_then(|c| c.thread_type)
            .and_then(thread_type_label)
        {
            let name = self.sink.intern(label);
            let data = EventData::ThreadName {
                thread,
                name,
                priority: NamePriority::TrackEventThreadName,
            };
            self.sink.push(ts, clock, data);
        }
        let name = match td.thread_name.as_deref().filter(|n| !n.is_empty()) {
            Some(n) => self.sink.intern(n),
            None => match td.chrome_thread_type.and_then(thread_type_label) {
                Some(label) => self.sink.intern(label),
                None => fallback,
            },
        };
        let data = EventData::ThreadName {
            thread,
            name,
            priority: NamePriority::TrackDescriptor,
        };
        self.sink.push(ts, clock, data);
    }
}
