//! GPU activity packets, as Trace Processor's GPU event parser reads them:
//! `gpu_render_stage_event` (render stages and compute kernels on hardware queue tracks,
//! type `gpu_render_stage`, placed in lanes so overlapping stages stay apart; queues and
//! stages named by legacy specifications or interned ones; the `gpu_slice` columns as
//! args), `vulkan_api_event` (debug names of Vulkan objects, `vkQueueSubmit` slices on
//! `Vulkan Events`), `vulkan_memory_event` (`vulkan_memory_allocations` rows and memory
//! totals as process counters), `gpu_log` (instants on `GPU Log` named by severity) and
//! `gpu_info` (the `gpu` table). Hands on slices, track renames, GPU rows, contexts and
//! Vulkan memory rows.

use super::*;

/// Vulkan object types whose debug names the render stages show.
const VK_OBJECT_TYPE_COMMAND_BUFFER: i32 = 6;
const VK_OBJECT_TYPE_RENDER_PASS: i32 = 18;
const VK_OBJECT_TYPE_FRAMEBUFFER: i32 = 24;

/// What the GPU event parser remembers across packets.
#[derive(Default)]
pub(super) struct GpuEventState {
    /// Legacy hardware queue specifications so far, per machine (their index is their
    /// order of appearance across packets).
    queues: HashMap<MachineId, u32>,
    /// Legacy stage specifications, per machine: (name, description).
    stages: HashMap<MachineId, Vec<(StrId, StrId)>>,
    /// Vulkan objects' debug names by (machine, object type, handle).
    debug_names: HashMap<(MachineId, i32, u64), StrId>,
    /// Vulkan memory totals: driver memory by allocation scope, device memory allocated
    /// and bound by memory type. One total per machine and key, whatever the process (as
    /// Trace Processor keeps them), shown on the tracks of each event's process.
    vk_driver: HashMap<(MachineId, i32), i64>,
    vk_allocated: HashMap<(MachineId, u32), i64>,
    vk_bound: HashMap<(MachineId, u32), i64>,
}

/// Names of VulkanMemoryEvent's Source, Operation and AllocationScope values.
const VK_SOURCES: [&str; 6] = [
    "UNSPECIFIED",
    "DRIVER",
    "DEVICE",
    "DEVICE_MEMORY",
    "BUFFER",
    "IMAGE",
];
const VK_OPERATIONS: [&str; 6] = [
    "UNSPECIFIED",
    "CREATE",
    "DESTROY",
    "BIND",
    "DESTROY_BOUND",
    "ANNOTATIONS",
];
const VK_SCOPES: [&str; 6] = [
    "UNSPECIFIED",
    "COMMAND",
    "OBJECT",
    "CACHE",
    "DEVICE",
    "INSTANCE",
];

fn vk_name(names: &[&'static str], v: Option<i32>) -> Option<&'static str> {
    names.get(usize::try_from(v?).ok()?).copied()
}

/// The `render_subpasses` arg: the set bits of the mask words, as indices joined by `,`.
fn subpasses(mask: &[u64]) -> Option<String> {
    if mask.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for (word, &bits) in mask.iter().enumerate() {
        for bit in 0..64 {
            if bits & (1u64 << bit) != 0 {
                out.push((word * 64 + bit).to_string());
            }
        }
    }
    Some(out.join(","))
}

/// InternedGraphicsContext.Api names.
fn api_name(api: i32) -> &'static str {
    match api {
        1 => "OPEN_GL",
        2 => "VULKAN",
        3 => "OPEN_CL",
        4 => "CUDA",
        5 => "HIP",
        _ => "UNDEFINED",
    }
}

/// InternedGpuRenderStageSpecification.RenderStageCategory names.
fn category_name(category: i32) -> &'static str {
    match category {
        1 => "GRAPHICS",
        2 => "COMPUTE",
        _ => "OTHER",
    }
}

impl Parser<'_> {
    /// Interned graphics contexts, render stage specifications and kernels of a sequence.
    pub(super) fn intern_gpu(&mut self, machine: MachineId, seq_id: u32, d: &protos::InternedData) {
        for c in &d.graphics_contexts {
            let iid = c.iid.unwrap_or(0);
            let (pid, api) = (c.pid.unwrap_or(0), c.api.unwrap_or(0));
            let row = GpuContextRow {
                machine,
                context_id: iid as i64,
                pid: i64::from(pid),
                api: self.sink.intern(api_name(api)),
            };
            if !self.sink.gpu_contexts.contains(&row) {
                self.sink.gpu_contexts.push(row);
            }
            if let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) {
                seq.graphics_contexts.entry(iid).or_insert(pid);
            }
        }
        let specs: Vec<(u64, StrId, StrId, i32)> = d
            .gpu_specifications
            .iter()
            .map(|s| {
                (
                    s.iid.unwrap_or(0),
                    self.sink.intern_opt(s.name.as_deref()),
                    self.sink.intern_opt(s.description.as_deref()),
                    s.category.unwrap_or(0),
                )
            })
            .collect();
        let kernels: Vec<(u64, [StrId; 3])> = d
            .gpu_kernels
            .iter()
            .map(|k| {
                (
                    k.iid.unwrap_or(0),
                    [
                        self.sink.intern_opt(k.name.as_deref()),
                        self.sink.intern_opt(k.demangled_name.as_deref()),
                        self.sink.intern_opt(k.arch.as_deref()),
                    ],
                )
            })
            .collect();
        let strings = |list: &[protos::InternedString], sink: &mut Sink| -> Vec<(u64, StrId)> {
            list.iter()
                .map(|s| {
                    let text = String::from_utf8_lossy(s.str.as_deref().unwrap_or_default());
                    (s.iid.unwrap_or(0), sink.intern(&text))
                })
                .collect()
        };
        let vk_keys = strings(&d.vulkan_memory_keys, self.sink);
        let functions = strings(&d.function_names, self.sink);
        let Some(seq) = self.sequences.get_mut(&(machine, seq_id)) else {
            return;
        };
        seq.vulkan_memory_keys.extend(vk_keys);
        seq.function_names.extend(functions);
        for (iid, name, description, category) in specs {
            seq.gpu_specs
                .entry(iid)
                .or_insert((name, description, category));
        }
        for (iid, k) in kernels {
            seq.gpu_kernels.entry(iid).or_insert(k);
        }
    }

    /// The track set of a hardware queue: its lanes share the queue's name.
    fn queue_set(&mut self, machine: MachineId, name: StrId) -> AsyncSet {
        AsyncSet {
            kind: "gpu_render_stage",
            machine,
            process: None,
            name,
            scope: NULL_STR,
        }
    }

    pub(super) fn gpu_render_stage(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        ev: &protos::GpuRenderStageEvent,
    ) {
        self.sink.touch();
        let mut pid = 0;
        if let Some(spec) = &ev.specifications {
            for q in &spec.hw_queue {
                // Only named queues take an index.
                if q.name.is_none() {
                    continue;
                }
                let index = self.gpu_events.queues.entry(machine).or_insert(0);
                let i = *index;
                *index += 1;
                // A queue's track is named when its specification arrives, even if stages
                // already ran on it.
                let key = self.sink.intern(&format!("Unknown GPU Queue {i}"));
                let name = self.sink.intern_opt(q.name.as_deref());
                let description = self.sink.intern_opt(q.description.as_deref());
                self.sink
                    .track_renames
                    .insert((machine, "gpu_render_stage", key), (name, description));
            }
            for st in &spec.stage {
                let entry = match &st.name {
                    Some(n) => (
                        self.sink.intern(n),
                        self.sink.intern_opt(st.description.as_deref()),
                    ),
                    None => (NULL_STR, NULL_STR),
                };
                self.gpu_events
                    .stages
                    .entry(machine)
                    .or_default()
                    .push(entry);
            }
            if let Some(pid_spec) = spec.context_spec.as_ref().and_then(|c| c.pid) {
                pid = pid_spec;
            }
        }
        if ev.event_id.is_none() {
            return;
        }
        let seq = self.sequences.get(&(machine, seq_id));
        // The queue: interned by iid (an unknown iid drops the event), else by index.
        let (set, hw_queue_id) = match ev.hw_queue_iid {
            Some(iid) => {
                let Some(&(name, description, _)) = seq.and_then(|s| s.gpu_specs.get(&iid)) else {
                    self.sink.stat("gpu_render_stage_parser_errors", machine, 1);
                    return;
                };
                self.sink
                    .track_renames
                    .insert((machine, "gpu_render_stage", name), (name, description));
                (self.queue_set(machine, name), iid as i64)
            }
            None => {
                let id = ev.hw_queue_id.unwrap_or(0) as u32;
                let key = self.sink.intern(&format!("Unknown GPU Queue {id}"));
                (self.queue_set(machine, key), i64::from(id))
            }
        };
        // The stage's name and description.
        let seq = self.sequences.get(&(machine, seq_id));
        let mut category = None;
        let (name, description) = match ev.stage_iid {
            Some(iid) => match seq.and_then(|s| s.gpu_specs.get(&iid)).copied() {
                Some((name, description, cat)) => {
                    category = Some(cat);
                    (name, description)
                }
                None => (NULL_STR, NULL_STR),
            },
            None => {
                let id = ev.stage_id.unwrap_or(0);
                let known = usize::try_from(id)
                    .ok()
                    .and_then(|i| self.gpu_events.stages.get(&machine)?.get(i).copied());
                match known {
                    Some(entry) => entry,
                    None => (
                        self.sink
                            .intern(&format!("render stage({})", i64::from(id) as u64)),
                        NULL_STR,
                    ),
                }
            }
        };
        let name = match &ev.name {
            Some(n) => self.sink.intern(n),
            None => name,
        };
        if let Some(p) = ev
            .context
            .and_then(|c| seq.and_then(|s| s.graphics_contexts.get(&c)).copied())
        {
            pid = p;
        }
        let kernel = ev
            .kernel_iid
            .and_then(|k| seq.and_then(|s| s.gpu_kernels.get(&k)).copied());
        let debug_name = |state: &GpuEventState, ty: i32, handle: u64| {
            state.debug_names.get(&(machine, ty, handle)).copied()
        };
        let render_target = ev.render_target_handle.unwrap_or(0);
        let render_pass = ev.render_pass_handle.unwrap_or(0);
        let command_buffer = ev.command_buffer_handle.unwrap_or(0);
        let names = [
            debug_name(&self.gpu_events, VK_OBJECT_TYPE_FRAMEBUFFER, render_target),
            debug_name(&self.gpu_events, VK_OBJECT_TYPE_RENDER_PASS, render_pass),
            debug_name(
                &self.gpu_events,
                VK_OBJECT_TYPE_COMMAND_BUFFER,
                command_buffer,
            ),
        ];
        let mut args = vec![
            self.sink
                .static_arg("context_id", ArgValue::Int(ev.context.unwrap_or(0) as i64)),
            self.sink
                .static_arg("render_target", ArgValue::Int(render_target as i64)),
        ];
        if let Some(n) = names[0] {
            args.push(self.sink.static_arg("render_target_name", ArgValue::Str(n)));
        }
        args.push(
            self.sink
                .static_arg("render_pass", ArgValue::Int(render_pass as i64)),
        );
        if let Some(n) = names[1] {
            args.push(self.sink.static_arg("render_pass_name", ArgValue::Str(n)));
        }
        args.push(
            self.sink
                .static_arg("command_buffer", ArgValue::Int(command_buffer as i64)),
        );
        if let Some(n) = names[2] {
            args.push(
                self.sink
                    .static_arg("command_buffer_name", ArgValue::Str(n)),
            );
        }
        let submission = i64::from(ev.submission_id.unwrap_or(0));
        args.push(
            self.sink
                .static_arg("submission_id", ArgValue::Int(submission)),
        );
        args.push(
            self.sink
                .static_arg("hw_queue_id", ArgValue::Int(hw_queue_id)),
        );
        if let Some(s) = subpasses(&ev.render_subpass_index_mask) {
            let s = self.sink.intern(&s);
            args.push(self.sink.static_arg("render_subpasses", ArgValue::Str(s)));
        }
        if let Some(cat) = category {
            let cat = self.sink.intern(category_name(cat));
            args.push(
                self.sink
                    .static_arg("render_stage_category", ArgValue::Str(cat)),
            );
        }
        // The process whose context it ran for (pid 0: the idle process).
        let process = self.sink.process_refs.intern(ProcessRef {
            machine,
            pid: i64::from(pid),
        });
        args.push(self.sink.static_arg("upid", ArgValue::ProcessUpid(process)));
        if description != NULL_STR {
            args.push(
                self.sink
                    .static_arg("description", ArgValue::Str(description)),
            );
        }
        for d in &ev.extra_data {
            let key = self.sink.intern(d.name.as_deref().unwrap_or(""));
            let value = self.sink.intern_opt(d.value.as_deref());
            args.push(Arg {
                flat_key: key,
                key,
                value: ArgValue::Str(value),
            });
        }
        if let Some(id) = ev.render_pass_instance_id {
            let c = self.sink.intern(&format!("rp:#{id}"));
            args.push(self.sink.static_arg("correlation_id", ArgValue::Str(c)));
        }
        if let Some([kname, demangled, arch]) = kernel {
            for (key, v) in [
                ("kernel_name", kname),
                ("kernel_demangled_name", demangled),
                ("arch", arch),
            ] {
                if v != NULL_STR {
                    args.push(self.sink.static_arg(key, ArgValue::Str(v)));
                }
            }
        }
        let track = self.sink.track(TrackKey::AsyncScoped { set });
        let slice = SliceEvent {
            track,
            category: NULL_STR,
            name,
            args: self.sink.args.push(&args),
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        let dur = ev.duration.unwrap_or(0) as i64;
        self.sink.push(
            ts,
            clock,
            EventData::Complete {
                slice,
                dur,
                thread_dur: NO_TS,
            },
        );
    }

    pub(super) fn vulkan_api_event(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        ev: &protos::VulkanApiEvent,
    ) {
        use protos::vulkan_api_event::Event;
        self.sink.touch();
        match &ev.event {
            Some(Event::VkDebugUtilsObjectName(n)) => {
                let name = self.sink.intern(n.object_name.as_deref().unwrap_or(""));
                let key = (machine, n.object_type.unwrap_or(0), n.object.unwrap_or(0));
                self.gpu_events.debug_names.insert(key, name);
            }
            Some(Event::VkQueueSubmit(s)) => {
                let name = self.sink.intern("Vulkan Events");
                let track = self.sink.track(TrackKey::KernelSlices {
                    machine,
                    kind: "vulkan_events",
                    name,
                    dim: None,
                });
                let mut args = Vec::new();
                if let Some(&cb) = s.vk_command_buffers.first() {
                    args.push(
                        self.sink
                            .static_arg("command_buffer", ArgValue::Int(cb as i64)),
                    );
                }
                let submission = i64::from(s.submission_id.unwrap_or(0));
                args.push(
                    self.sink
                        .static_arg("submission_id", ArgValue::Int(submission)),
                );
                args.push(
                    self.sink
                        .static_arg("pid", ArgValue::Int(i64::from(s.pid.unwrap_or(0)))),
                );
                args.push(
                    self.sink
                        .static_arg("tid", ArgValue::Int(i64::from(s.tid.unwrap_or(0)))),
                );
                let flat = self.sink.intern("command_buffers");
                for (i, &cb) in s.vk_command_buffers.iter().enumerate() {
                    let key = self.sink.intern(&format!("command_buffers[{i}]"));
                    args.push(Arg {
                        flat_key: flat,
                        key,
                        value: ArgValue::Int(cb as i64),
                    });
                }
                let slice = SliceEvent {
                    track,
                    category: NULL_STR,
                    name: self.sink.intern("vkQueueSubmit"),
                    args: self.sink.args.push(&args),
                    thread_ts: NO_TS,
                    flows: NO_FLOWS,
                };
                let dur = s.duration_ns.unwrap_or(0) as i64;
                self.sink.push(
                    ts,
                    clock,
                    EventData::Complete {
                        slice,
                        dur,
                        thread_dur: NO_TS,
                    },
                );
            }
            None => {}
        }
    }

    /// `vulkan_memory_event`: a `vulkan_memory_allocations` row (its annotations as args,
    /// keyed and valued by interned `vulkan_memory_keys`; its caller an interned function
    /// name), and the running totals as process counters: driver memory per allocation
    /// scope (`vulkan.mem.driver.scope.<SCOPE>`, CREATE adds, DESTROY subtracts), device
    /// memory per memory type allocated (`vulkan.mem.device.memory.type.<n>.allocation`,
    /// CREATE/DESTROY) and bound by buffers and images (`….bind`, BIND/DESTROY_BOUND), as
    /// Trace Processor's GpuEventParser::ParseVulkanMemoryEvent.
    pub(super) fn vulkan_memory_event(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        ev: &protos::VulkanMemoryEvent,
    ) {
        self.sink.touch();
        let seq = self.sequences.get(&(machine, seq_id));
        let key = |iid: u64| seq.and_then(|s| s.vulkan_memory_keys.get(&iid).copied());
        let function_name = ev
            .caller_iid
            .and_then(|iid| seq.and_then(|s| s.function_names.get(&iid).copied()))
            .unwrap_or(NULL_STR);
        let mut args = Vec::new();
        for a in &ev.annotations {
            let Some(k) = key(a.key_iid.unwrap_or(0)) else {
                continue;
            };
            let value = if let Some(v) = a.int_value {
                ArgValue::Int(v)
            } else if let Some(v) = a.double_value {
                ArgValue::Real(v)
            } else if let Some(s) = a.string_iid.and_then(key) {
                ArgValue::Str(s)
            } else {
                continue;
            };
            args.push(Arg {
                flat_key: k,
                key: k,
                value,
            });
        }
        let opt = |s: Option<&'static str>, sink: &mut Sink| s.map_or(NULL_STR, |s| sink.intern(s));
        let source = opt(vk_name(&VK_SOURCES, ev.source), self.sink);
        let operation = opt(vk_name(&VK_OPERATIONS, ev.operation), self.sink);
        let scope = opt(
            ev.allocation_scope
                .and_then(|s| vk_name(&VK_SCOPES, Some(s))),
            self.sink,
        );
        let process = ProcessRef {
            machine,
            pid: i64::from(ev.pid.unwrap_or(0)),
        };
        let timestamp = ev.timestamp.unwrap_or(0);
        let row = VulkanMemoryRow {
            process,
            source,
            operation,
            timestamp,
            function_name,
            scope,
            numbers: [
                ev.device.map(|v| v as i64),
                ev.device_memory.map(|v| v as i64),
                ev.memory_type.map(i64::from),
                ev.heap.map(i64::from),
                ev.object_handle.map(|v| v as i64),
                ev.memory_address.map(|v| v as i64),
                ev.memory_size.map(|v| v as i64),
            ],
            args: self.sink.args.push(&args),
        };
        self.sink
            .push(ts, clock, EventData::VulkanMemory(Box::new(row)));
        self.vulkan_memory_counter(machine, clock, process, timestamp, ev);
    }

    fn vulkan_memory_counter(
        &mut self,
        machine: MachineId,
        clock: ClockRef,
        process: ProcessRef,
        timestamp: i64,
        ev: &protos::VulkanMemoryEvent,
    ) {
        let size = ev.memory_size.unwrap_or(0) as i64;
        let (op, source) = (ev.operation.unwrap_or(0), ev.source.unwrap_or(0));
        let sign = |add: i32, sub: i32| match op {
            o if o == add => Some(size),
            o if o == sub => Some(size.wrapping_neg()),
            _ => None,
        };
        let (name, total) = match source {
            // DRIVER: per allocation scope, an unspecified scope counts nowhere.
            1 => {
                let scope = ev.allocation_scope.unwrap_or(0);
                let Some(scope_name) = vk_name(&VK_SCOPES, Some(scope)).filter(|_| scope != 0)
                else {
                    return;
                };
                let Some(delta) = sign(1, 2) else { return };
                let total = self
                    .gpu_events
                    .vk_driver
                    .entry((machine, scope))
                    .or_insert(0);
                *total = total.wrapping_add(delta);
                (format!("vulkan.mem.driver.scope.{scope_name}"), *total)
            }
            // DEVICE_MEMORY: allocations per memory type.
            3 => {
                let ty = ev.memory_type.unwrap_or(0);
                let Some(delta) = sign(1, 2) else { return };
                let total = self
                    .gpu_events
                    .vk_allocated
                    .entry((machine, ty))
                    .or_insert(0);
                *total = total.wrapping_add(delta);
                (
                    format!("vulkan.mem.device.memory.type.{ty}.allocation"),
                    *total,
                )
            }
            // BUFFER, IMAGE: bindings per memory type.
            4 | 5 => {
                let ty = ev.memory_type.unwrap_or(0);
                let Some(delta) = sign(3, 4) else { return };
                let total = self.gpu_events.vk_bound.entry((machine, ty)).or_insert(0);
                *total = total.wrapping_add(delta);
                (format!("vulkan.mem.device.memory.type.{ty}.bind"), *total)
            }
            _ => return,
        };
        let name = self.sink.intern(&name);
        let track = self.sink.track(TrackKey::ProcessCounter {
            process,
            name,
            kind: "vulkan_memory",
        });
        self.push_counter(timestamp, clock, track, total as f64, NO_ARGS);
    }

    pub(super) fn gpu_log(
        &mut self,
        machine: MachineId,
        ts: i64,
        clock: ClockRef,
        log: &protos::GpuLog,
    ) {
        const SEVERITIES: [&str; 6] = [
            "UNSPECIFIED",
            "VERBOSE",
            "DEBUG",
            "INFO",
            "WARNING",
            "ERROR",
        ];
        let severity = usize::try_from(log.severity.unwrap_or(0))
            .ok()
            .and_then(|s| SEVERITIES.get(s))
            .copied()
            .unwrap_or("UNKNOWN_SEVERITY");
        let name = self.sink.intern("GPU Log");
        let track = self.sink.track(TrackKey::KernelSlices {
            machine,
            kind: "gpu_log",
            name,
            dim: None,
        });
        let mut args = Vec::new();
        if let Some(tag) = &log.tag {
            let tag = self.sink.intern(tag);
            args.push(self.sink.static_arg("tag", ArgValue::Str(tag)));
        }
        if let Some(msg) = &log.log_message {
            let msg = self.sink.intern(msg);
            args.push(self.sink.static_arg("message", ArgValue::Str(msg)));
        }
        let slice = SliceEvent {
            track,
            category: NULL_STR,
            name: self.sink.intern(severity),
            args: self.sink.args.push(&args),
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        };
        self.sink.push(
            ts,
            clock,
            EventData::Complete {
                slice,
                dur: 0,
                thread_dur: NO_TS,
            },
        );
    }

    /// `gpu_info`: the details of each GPU (numbered in order on its machine) in its `gpu`
    /// row.
    pub(super) fn gpu_info(&mut self, machine: MachineId, info: &protos::GpuInfo) {
        self.sink.touch();
        for (index, g) in info.gpus.iter().enumerate() {
            let uuid = g
                .uuid
                .as_ref()
                .map(|u| u.iter().map(|b| format!("{b:02x}")).collect::<String>());
            let mut extra = Vec::new();
            for kv in &g.extra_info {
                let key = self.sink.intern(kv.key.as_deref().unwrap_or(""));
                let value = self.sink.intern_opt(kv.value.as_deref());
                extra.push(Arg {
                    flat_key: key,
                    key,
                    value: ArgValue::Str(value),
                });
            }
            let args = self.sink.args.push(&extra);
            let i = self.sink.gpu(machine, index as i64);
            let row = &mut self.sink.gpus[i];
            row.name.clone_from(&g.name);
            row.vendor.clone_from(&g.vendor);
            row.model.clone_from(&g.model);
            row.architecture.clone_from(&g.architecture);
            row.uuid = uuid;
            row.pci_bdf.clone_from(&g.pci_bdf);
            row.args = args;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subpass_masks_list_their_bits_across_words() {
        assert_eq!(subpasses(&[]), None);
        assert_eq!(subpasses(&[1]).as_deref(), Some("0"));
        assert_eq!(subpasses(&[1 << 63, 1]).as_deref(), Some("63,64"));
        assert_eq!(subpasses(&[8, 240]).as_deref(), Some("3,68,69,70,71"));
    }
}
