//! The tables written whole rather than streamed: machines, processes, threads and tracks
//! (at every live checkpoint and at the end, each time replacing the last), and at the end
//! flows, states, cpus, import logs, stats, trace diagnostics, metadata, the trace files and Sextant's clock
//! report. Each row's arg sets are resolved first ([`TableWriter::arg_set`]), then the row
//! goes into the same batches as the streamed tables, so it reaches the writer thread by
//! message like every other row.

use super::bulk::Table;
use super::writer::TableWriter;
use super::{DbError, ImportFacts};
use crate::ir::{clocks, Arg, ArgValue, MachineId, MetaValue, Sink, StrId, NO_FILE, NO_MACHINE};
use crate::model::Tables;
use crate::stats;

fn nullable_machine(m: MachineId) -> Option<i64> {
    (m != NO_MACHINE).then_some(i64::from(m))
}

fn opt_u32(v: Option<u32>) -> Option<i64> {
    v.map(i64::from)
}

impl TableWriter<'_> {
    /// Machines, processes, threads and tracks as the model has them now, replacing what
    /// an earlier checkpoint wrote.
    pub(super) fn identities(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        self.machines(t)?;
        self.processes(t, sink)?;
        self.threads(t, sink)?;
        self.tracks(t, sink)
    }

    /// Everything else, once the model is done.
    pub(super) fn rest(
        &mut self,
        t: &Tables,
        sink: &Sink,
        facts: &ImportFacts,
    ) -> Result<(), DbError> {
        self.flows(t, sink)?;
        self.states(t, sink)?;
        self.android_logs(t, sink)?;
        self.chrome_raw(t, sink)?;
        self.v8(t, sink)?;
        self.memory_snapshots(t, sink)?;
        self.packages(sink)?;
        self.gpus(t, sink)?;
        for (id, &(group, name, description, track)) in t.gpu_counter_groups.iter().enumerate() {
            self.row(Table::GpuCounterGroup, |row| {
                row.int(id as i64);
                row.int(group);
                row.text(sink.strings.get(name));
                row.text(sink.strings.get(description));
                row.int(track);
            })?;
        }
        for (id, c) in t.track_event_callstacks.iter().enumerate() {
            self.row(Table::TrackEventCallstacks, |row| {
                row.int(id as i64);
                row.int(c.slice);
                row.int(c.track);
                row.opt_int(c.callsite);
                row.opt_int(c.end_callsite);
                row.real(c.weight);
            })?;
        }
        self.proto_content(sink)?;
        self.cpus(t, sink)?;
        self.import_logs(t, sink)?;
        self.stats(sink, facts)?;
        self.trace_diagnostics(sink)?;
        self.metadata(facts, sink)?;
        self.files_and_snapshots(facts)?;
        self.clock_report(facts)?;
        self.track_files()?;
        self.file_events(sink)?;
        self.stack_profile(sink)?;
        self.heap_graphs(sink)?;
        let (start, end) = t.trace_bounds();
        self.row(Table::TraceBounds, |row| {
            row.int(start);
            row.int(end);
        })
    }

    fn machines(&mut self, t: &Tables) -> Result<(), DbError> {
        self.clear(Table::Machine)?;
        // label_index: 0 for the host, else the rank among the other machines.
        let mut next_label = 0i64;
        for (id, m) in t.machines.iter().enumerate() {
            let i = &m.info;
            let label_index = if m.raw_id == 0 {
                0
            } else {
                next_label += 1;
                next_label
            };
            self.row(Table::Machine, |row| {
                row.int(id as i64);
                row.int(m.raw_id);
                row.text(i.name.as_deref());
                row.text(i.sysname.as_deref());
                row.text(i.release.as_deref());
                row.text(i.version.as_deref());
                row.text(i.arch.as_deref());
                row.opt_int(i.num_cpus);
                row.text(i.android_build_fingerprint.as_deref());
                row.text(i.android_device_manufacturer.as_deref());
                row.opt_int(i.android_sdk_version);
                row.opt_int(i.system_ram_bytes);
                row.opt_int(i.system_ram_gb());
                row.int(label_index);
            })?;
        }
        Ok(())
    }

    fn processes(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        self.clear(Table::Process)?;
        for (id, p) in t.processes.iter().enumerate() {
            let args = self.extra_args(&p.extra_args, sink)?;
            self.row(Table::Process, |row| {
                row.int(id as i64);
                row.int(id as i64);
                row.int(p.pid);
                row.text(sink.strings.get(p.name));
                row.opt_int(p.start_ts);
                row.opt_int(p.end_ts);
                row.opt_int(opt_u32(p.parent_upid));
                row.opt_int(p.uid);
                row.opt_int(p.uid.map(|u| u % 100_000));
                row.opt_int(p.uid.map(|u| u / 100_000));
                row.text(sink.strings.get(p.cmdline));
                row.opt_int(args);
                row.int(p.machine);
            })?;
        }
        Ok(())
    }

    fn threads(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        self.clear(Table::Thread)?;
        for (id, th) in t.threads.iter().enumerate() {
            let args = self.extra_args(&th.extra_args, sink)?;
            self.row(Table::Thread, |row| {
                row.int(id as i64);
                row.int(id as i64);
                row.int(th.tid);
                row.text(sink.strings.get(th.name));
                row.opt_int(th.start_ts);
                row.opt_int(th.end_ts);
                row.opt_int(opt_u32(th.upid));
                row.opt_int(th.is_main_thread);
                row.int(th.is_idle);
                row.int(th.machine);
                row.opt_int(args);
            })?;
        }
        Ok(())
    }

    fn tracks(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        self.clear(Table::Track)?;
        for (id, tr) in t.tracks.iter().enumerate() {
            let dims = [
                ("utid", tr.utid),
                ("upid", tr.upid),
                ("cpu", tr.cpu),
                ("track_compressor_idx", tr.compressor_idx),
            ];
            let dims = if tr.own_dims {
                self.arg_set(tr.extra_dims, sink)?
            } else {
                self.dimension_args(sink.args.get(tr.extra_dims), &dims, sink)?
            };
            let source = self.arg_set(tr.source_args, sink)?;
            self.row(Table::Track, |row| {
                row.int(id as i64);
                row.text(sink.strings.get(tr.name));
                row.text(Some(tr.kind));
                row.opt_int(dims);
                row.opt_int(opt_u32(tr.parent_id));
                row.opt_int(source);
                row.int(tr.machine);
                row.opt_int(opt_u32(tr.track_group));
                row.text(Some(tr.event_type.as_str()));
                row.opt_int(opt_u32(tr.utid));
                row.opt_int(opt_u32(tr.upid));
                row.opt_int(opt_u32(tr.cpu));
                row.text(sink.strings.get(tr.unit));
                row.text(sink.strings.get(tr.description));
            })?;
        }
        Ok(())
    }

    /// A track's dimension arg set: its extra dimensions, then those of `dims` it has.
    fn dimension_args(
        &mut self,
        extra: &[Arg],
        dims: &[(&str, Option<u32>)],
        sink: &Sink,
    ) -> Result<Option<i64>, DbError> {
        if extra.is_empty() && dims.iter().all(|(_, v)| v.is_none()) {
            return Ok(None);
        }
        let mut set = extra.to_vec();
        for &(k, v) in dims {
            // Dimension keys are few and fixed; look them up without interning.
            let (Some(v), Some(&key)) = (v, sink.dimension_keys.get(k)) else {
                continue;
            };
            set.push(Arg {
                flat_key: key,
                key,
                value: ArgValue::Uint(u64::from(v)),
            });
        }
        self.write_set(&set, sink)
    }

    fn flows(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        for (id, f) in t.flows.iter().enumerate() {
            let args = self.arg_set(f.args, sink)?;
            self.row(Table::Flow, |row| {
                row.int(id as i64);
                row.int(f.slice_out);
                row.int(f.slice_in);
                row.opt_int(f.trace_id);
                row.opt_int(args);
            })?;
        }
        Ok(())
    }

    fn states(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        for (id, s) in t.states.iter().enumerate() {
            let args = self.arg_set(s.args, sink)?;
            self.row(Table::State, |row| {
                row.int(id as i64);
                row.int(s.ts);
                row.int(s.dur);
                row.int(s.track);
                row.text(sink.strings.get(s.category));
                row.text(sink.strings.get(s.value));
                row.opt_int(args);
            })?;
        }
        Ok(())
    }

    /// Memory-infra snapshots: the snapshots, their processes, nodes and edges.
    fn memory_snapshots(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        let m = &t.memory;
        for (id, &(ts, track, detail)) in m.snapshots.iter().enumerate() {
            self.row(Table::MemorySnapshot, |row| {
                row.int(id as i64);
                row.int(ts);
                row.int(track);
                row.text(sink.strings.get(detail));
            })?;
        }
        for (id, &(snapshot, upid)) in m.process_snapshots.iter().enumerate() {
            self.row(Table::ProcessMemorySnapshot, |row| {
                row.int(id as i64);
                row.int(snapshot);
                row.int(upid);
            })?;
        }
        for (id, n) in m.nodes.iter().enumerate() {
            let args = self.arg_set(n.args, sink)?;
            self.row(Table::MemorySnapshotNode, |row| {
                row.int(id as i64);
                row.int(n.process_snapshot);
                row.opt_int(n.parent);
                row.text(sink.strings.get(n.path));
                row.int(n.size);
                row.int(n.effective_size);
                row.opt_int(args);
            })?;
        }
        for (id, &(source, target, importance)) in m.edges.iter().enumerate() {
            self.row(Table::MemorySnapshotEdge, |row| {
                row.int(id as i64);
                row.int(source);
                row.int(target);
                row.int(importance);
            })?;
        }
        Ok(())
    }

    /// V8's isolates, scripts, functions and code; each code table numbered from 0.
    fn v8(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        use crate::model::V8CodeRow;
        let v8 = &t.v8;
        let text = |s: StrId| sink.strings.get(s);
        for (id, r) in v8.isolates.iter().enumerate() {
            let i = &r.isolate;
            self.row(Table::V8Isolate, |row| {
                row.int(id as i64);
                row.int(r.upid);
                row.int(i.isolate_id);
                row.int(i.blob_start);
                row.int(i.blob_size);
                row.int(i.code_range.base);
                row.int(i.code_range.size);
                row.int(i64::from(i.code_range.process_wide));
                row.opt_int(i.code_range.blob_copy_start);
            })?;
        }
        for (id, r) in v8.js_scripts.iter().enumerate() {
            self.row(Table::V8JsScript, |row| {
                row.int(id as i64);
                row.int(r.isolate);
                row.int(r.script.script_id);
                row.text(text(r.script.script_type));
                row.text(text(r.script.name));
                row.text(text(r.script.source));
            })?;
        }
        for (id, r) in v8.wasm_scripts.iter().enumerate() {
            self.row(Table::V8WasmScript, |row| {
                row.int(id as i64);
                row.int(r.isolate);
                row.int(r.script.script_id);
                row.text(text(r.script.url));
                row.text(text(r.script.wire_bytes));
                row.text(None);
            })?;
        }
        for (id, (script, f)) in v8.js_functions.iter().enumerate() {
            self.row(Table::V8JsFunction, |row| {
                row.int(id as i64);
                row.text(text(f.name));
                row.int(*script);
                row.int(i64::from(f.is_toplevel));
                row.text(text(f.kind));
                row.opt_int(f.line);
                row.opt_int(f.col);
            })?;
        }
        for (id, j) in v8.jit_code.iter().enumerate() {
            self.row(Table::JitCode, |row| {
                row.int(id as i64);
                row.int(j.create_ts);
                row.opt_int(None::<i64>);
                row.int(j.utid);
                row.int(j.start);
                row.int(j.size);
                row.text(text(j.function_name));
                row.text(text(j.native_code));
            })?;
        }
        let mut ids = [0i64; 4];
        for c in &v8.code {
            match *c {
                V8CodeRow::Js(jit, function, tier, bytecode) => {
                    self.row(Table::V8JsCode, |row| {
                        row.int(ids[0]);
                        row.opt_int(jit);
                        row.int(function);
                        row.text(text(tier));
                        row.text(text(bytecode));
                    })?;
                    ids[0] += 1;
                }
                V8CodeRow::Internal(jit, isolate, name, code_type) => {
                    self.row(Table::V8InternalCode, |row| {
                        row.int(ids[1]);
                        row.int(jit);
                        row.int(isolate);
                        row.text(text(name));
                        row.text(text(code_type));
                    })?;
                    ids[1] += 1;
                }
                V8CodeRow::Wasm(jit, isolate, script, name, tier, offset) => {
                    self.row(Table::V8WasmCode, |row| {
                        row.int(ids[2]);
                        row.int(jit);
                        row.int(isolate);
                        row.int(script);
                        row.text(text(name));
                        row.text(text(tier));
                        row.opt_int(offset);
                    })?;
                    ids[2] += 1;
                }
                V8CodeRow::RegExp(jit, isolate, pattern) => {
                    self.row(Table::V8RegExpCode, |row| {
                        row.int(ids[3]);
                        row.int(jit);
                        row.int(isolate);
                        row.text(text(pattern));
                    })?;
                    ids[3] += 1;
                }
            }
        }
        Ok(())
    }

    fn android_logs(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        for (id, log) in t.android_logs.iter().enumerate() {
            self.row(Table::AndroidLog, |row| {
                row.int(id as i64);
                row.int(log.ts);
                row.int(i64::from(log.utid));
                row.int(log.prio);
                row.text(sink.strings.get(log.tag));
                row.text(sink.strings.get(log.msg));
            })?;
        }
        Ok(())
    }

    /// Android input events, each table numbered from 0; their base64 protos stored once
    /// each (ids in order of first use, as a string pool interns them).
    fn input_events(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        use crate::ir::InputEventKind;
        let mut protos: std::collections::HashMap<StrId, i64> = Default::default();
        let mut ids = [0i64; 3];
        for e in &t.input_events {
            let proto = self.base64_proto(&mut protos, e.base64, sink)?;
            let args = self.arg_set(e.args, sink)?;
            let (table, slot) = match e.kind {
                InputEventKind::Motion => (Table::MotionEvents, 0),
                InputEventKind::Key => (Table::KeyEvents, 1),
                InputEventKind::Dispatch => (Table::InputDispatch, 2),
            };
            let id = ids[slot];
            ids[slot] += 1;
            self.row(table, |row| {
                row.int(id);
                row.int(e.event_id);
                if e.kind == InputEventKind::Dispatch {
                    row.opt_int(args);
                    row.opt_int(e.vsync_id);
                    row.opt_int(e.window_id);
                } else {
                    row.opt_int(e.ts);
                    row.opt_int(args);
                }
                row.int(proto);
            })?;
        }
        self.winscope(&t.winscope, &mut protos, sink)
    }

    /// The `__intrinsic_base64_proto` id of a proto, written at its first use.
    fn base64_proto(
        &mut self,
        protos: &mut std::collections::HashMap<StrId, i64>,
        base64: StrId,
        sink: &Sink,
    ) -> Result<i64, DbError> {
        let next = protos.len() as i64;
        let proto = *protos.entry(base64).or_insert(next);
        if proto == next {
            self.row(Table::Base64Protos, |row| {
                row.int(proto);
                row.text(sink.strings.get(base64));
            })?;
        }
        Ok(proto)
    }

    /// Winscope tables (see `model/winscope.rs`), after the input events (one base64 pool).
    fn winscope(
        &mut self,
        w: &crate::model::WinscopeTables,
        protos: &mut std::collections::HashMap<StrId, i64>,
        sink: &Sink,
    ) -> Result<(), DbError> {
        for (id, (ts, tr)) in w.transitions.iter().enumerate() {
            let args = self.arg_set(tr.args, sink)?;
            self.row(Table::ShellTransitions, |row| {
                row.int(id as i64);
                row.int(*ts);
                row.int(tr.transition_id);
                row.opt_int(args);
                row.opt_int(tr.transition_type);
                row.opt_int(tr.send_time);
                row.opt_int(tr.dispatch_time);
                row.opt_int(tr.duration());
                row.opt_int(tr.finish_time);
                row.opt_int(tr.shell_abort_time);
                row.opt_int(tr.handler);
                row.text(tr.status());
                row.opt_int(tr.flags);
                row.opt_int(tr.start_transaction_id);
                row.opt_int(tr.finish_transaction_id);
            })?;
        }
        for (id, &(transition_id, base64)) in w.transition_protos.iter().enumerate() {
            let proto = self.base64_proto(protos, base64, sink)?;
            self.row(Table::ShellTransitionProtos, |row| {
                row.int(id as i64);
                row.int(transition_id);
                row.int(proto);
            })?;
        }
        for (id, &(transition_id, layer, window)) in w.participants.iter().enumerate() {
            self.row(Table::ShellTransitionParticipants, |row| {
                row.int(id as i64);
                row.int(transition_id);
                row.opt_int(layer);
                row.opt_int(window);
            })?;
        }
        for (id, &(handler_id, name, base64)) in w.handlers.iter().enumerate() {
            let proto = self.base64_proto(protos, base64, sink)?;
            self.row(Table::ShellTransitionHandlers, |row| {
                row.int(id as i64);
                row.int(handler_id);
                row.text(sink.strings.get(name));
                row.int(proto);
            })?;
        }
        let snapshot_like = [
            (Table::SfLayersSnapshot, &w.sf_snapshots),
            (Table::SfLayer, &w.sf_layers),
            (Table::WindowManager, &w.entries[0]),
            (Table::InputMethodClients, &w.entries[1]),
            (Table::InputMethodService, &w.entries[2]),
            (Table::InputMethodManagerService, &w.entries[3]),
            (Table::ViewCapture, &w.entries[4]),
        ];
        for (table, rows) in snapshot_like {
            for (id, &(first, args, base64)) in rows.iter().enumerate() {
                let proto = self.base64_proto(protos, base64, sink)?;
                let args = self.arg_set(args, sink)?;
                self.row(table, |row| {
                    row.int(id as i64);
                    row.int(first);
                    row.opt_int(args);
                    row.int(proto);
                })?;
            }
        }
        for (id, &(ts, level, tag, message, stacktrace, location)) in w.protolog.iter().enumerate()
        {
            self.row(Table::ProtoLog, |row| {
                row.int(id as i64);
                row.int(ts);
                for s in [level, tag, message, stacktrace, location] {
                    row.text(sink.strings.get(s));
                }
            })?;
        }
        for (id, &(ts, args, base64, vsync_id)) in w.sf_transactions.iter().enumerate() {
            let proto = self.base64_proto(protos, base64, sink)?;
            let args = self.arg_set(args, sink)?;
            self.row(Table::SfTransactions, |row| {
                row.int(id as i64);
                row.int(ts);
                row.opt_int(args);
                row.int(proto);
                row.opt_int(vsync_id);
            })?;
        }
        Ok(())
    }

    fn chrome_raw(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        for (id, raw) in t.chrome_raw.iter().enumerate() {
            let args = self.arg_set(raw.args, sink)?;
            self.row(Table::ChromeRaw, |row| {
                row.int(id as i64);
                row.int(raw.ts);
                row.text(sink.strings.get(raw.name));
                row.int(i64::from(raw.utid));
                row.opt_int(args);
            })?;
        }
        Ok(())
    }

    fn packages(&mut self, sink: &Sink) -> Result<(), DbError> {
        for (id, p) in sink.packages.iter().enumerate() {
            self.row(Table::Package, |row| {
                row.int(id as i64);
                row.text(Some(&p.name));
                row.int(p.uid);
                row.int(p.debuggable);
                row.int(p.profileable_from_shell);
                row.int(p.version_code);
                row.opt_int(nullable_machine(p.machine));
            })?;
        }
        Ok(())
    }

    /// GPUs (GpuInfo), graphics contexts and systemd journal entries.
    fn gpus(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        for (id, g) in sink.gpus.iter().enumerate() {
            let args = self.arg_set(g.args, sink)?;
            self.row(Table::Gpu, |row| {
                row.int(id as i64);
                row.int(g.gpu);
                row.text(g.name.as_deref());
                row.text(g.vendor.as_deref());
                row.text(g.model.as_deref());
                row.text(g.architecture.as_deref());
                row.text(g.uuid.as_deref());
                row.text(g.pci_bdf.as_deref());
                row.opt_int(t.gpu_machines.get(id).copied().map(i64::from));
                row.opt_int(args);
            })?;
        }
        for (id, c) in sink.gpu_contexts.iter().enumerate() {
            self.row(Table::GpuContext, |row| {
                row.int(id as i64);
                row.int(c.context_id);
                row.int(c.pid);
                row.text(sink.strings.get(c.api));
                row.opt_int(t.gpu_context_machines.get(id).copied().map(i64::from));
            })?;
        }
        for (id, &(ts, upid, fd, path)) in t.fds.iter().enumerate() {
            self.row(Table::FileDescriptor, |row| {
                row.int(id as i64);
                row.opt_int(None::<i64>);
                row.int(fd);
                row.int(ts);
                row.int(i64::from(upid));
                row.text(sink.strings.get(path));
            })?;
        }
        for times in &t.frame_times {
            self.row(Table::FrameTimes, |row| {
                for &v in times {
                    row.int(v);
                }
            })?;
        }
        self.input_events(t, sink)?;
        for (id, (upid, v)) in t.vulkan_memory.iter().enumerate() {
            let args = self.arg_set(v.args, sink)?;
            self.row(Table::VulkanMemory, |row| {
                row.int(id as i64);
                row.opt_int(args);
                row.text(sink.strings.get(v.source));
                row.text(sink.strings.get(v.operation));
                row.int(v.timestamp);
                row.int(i64::from(*upid));
                for &n in &v.numbers[..4] {
                    row.opt_int(n);
                }
                row.text(sink.strings.get(v.function_name));
                for &n in &v.numbers[4..] {
                    row.opt_int(n);
                }
                row.text(sink.strings.get(v.scope));
            })?;
        }
        for (id, (ts, upid, e)) in t.smaps.iter().enumerate() {
            self.row(Table::ProfilerSmaps, |row| {
                row.int(id as i64);
                row.int(i64::from(*upid));
                row.int(*ts);
                row.text(sink.strings.get(e.path));
                for &v in &e.numbers[..3] {
                    row.int(v);
                }
                row.text(sink.strings.get(e.file_name));
                row.int(e.numbers[3]);
                row.int(e.numbers[4]);
                row.text(sink.strings.get(e.module_debugid));
                row.text(sink.strings.get(e.module_debug_path));
                for &v in &e.numbers[5..] {
                    row.int(v);
                }
            })?;
        }
        for (id, w) in t.spurious_wakeups.iter().enumerate() {
            self.row(Table::SpuriousSchedWakeup, |row| {
                row.int(id as i64);
                row.int(w.ts);
                row.int(w.thread_state_id);
                row.opt_int(w.irq_context);
                row.int(w.utid);
                row.opt_int(w.waker_utid);
            })?;
        }
        for (id, &(upid, reliable_from)) in t.missing_chrome_processes.iter().enumerate() {
            self.row(Table::MissingChromeProcesses, |row| {
                row.int(id as i64);
                row.int(i64::from(upid));
                row.opt_int(reliable_from);
            })?;
        }
        for (id, (_, uid, ty)) in sink.android_users.iter().enumerate() {
            self.row(Table::AndroidUser, |row| {
                row.int(id as i64);
                row.int(*uid);
                row.text(Some(ty));
                row.opt_int(t.user_machines.get(id).copied().map(i64::from));
            })?;
        }
        for (id, g) in sink.game_interventions.iter().enumerate() {
            self.row(Table::GameIntervention, |row| {
                row.int(id as i64);
                row.text(Some(&g.package));
                row.int(g.uid);
                row.int(g.current_mode);
                for mode in &g.modes {
                    row.int(i64::from(mode.is_some()));
                    row.real(mode.map(|m| m.downscale));
                    row.opt_int(mode.map(|m| i64::from(m.use_angle)));
                    row.real(mode.map(|m| m.fps));
                }
            })?;
        }
        for (id, (ts, utid, e)) in t.journald.iter().enumerate() {
            self.row(Table::Journald, |row| {
                row.int(id as i64);
                row.int(*ts);
                row.opt_int(opt_u32(*utid));
                row.opt_int(e.pid);
                row.opt_int(e.tid);
                row.opt_int(e.uid);
                row.opt_int(e.gid);
                row.opt_int(e.prio);
                for s in [
                    e.tag,
                    e.msg,
                    e.comm,
                    e.exe,
                    e.systemd_unit,
                    e.hostname,
                    e.transport,
                ] {
                    row.text(sink.strings.get(s));
                }
            })?;
        }
        Ok(())
    }

    fn proto_content(&mut self, sink: &Sink) -> Result<(), DbError> {
        for (id, c) in sink.proto_content.iter().enumerate() {
            let args = self.arg_set(c.annotation, sink)?;
            let file = self.file_id(c.file);
            self.row(Table::ProtoContent, |row| {
                row.int(id as i64);
                row.text(Some(c.path));
                row.int(c.size as i64);
                row.int(c.count as i64);
                row.text(sink.strings.get(c.category));
                row.text(sink.strings.get(c.name));
                row.opt_int(args);
                row.opt_int(file);
            })?;
        }
        Ok(())
    }

    fn cpus(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        let mut cpus: Vec<_> = t.cpus.iter().collect();
        cpus.sort_by_key(|c| c.ucpu);
        for c in &cpus {
            let args = self.arg_set(c.args, sink)?;
            self.row(Table::Cpu, |row| {
                row.int(c.ucpu);
                row.int(c.ucpu);
                row.int(c.cpu);
                row.opt_int(c.cluster_id);
                row.text(sink.strings.get(c.processor));
                row.int(c.machine);
                row.opt_int(c.capacity);
                row.opt_int(args);
            })?;
        }
        // Row ids count from 0 like every reference table's.
        let mut id = 0i64;
        for c in &cpus {
            for &freq in &c.frequencies {
                self.row(Table::CpuFrequency, |row| {
                    row.int(id);
                    row.int(c.cpu);
                    row.int(freq);
                    row.int(c.ucpu);
                })?;
                id += 1;
            }
        }
        Ok(())
    }

    fn import_logs(&mut self, t: &Tables, sink: &Sink) -> Result<(), DbError> {
        let logs = t
            .import_logs
            .iter()
            .chain(&sink.import_logs)
            .chain(&sink.placement_logs);
        for (id, log) in logs.enumerate() {
            let args = self.arg_set(log.args, sink)?;
            let severity = stats::lookup(log.name).map_or("error", |d| d.severity.as_str());
            let file = self.file_id(log.file);
            self.row(Table::ImportLog, |row| {
                row.int(id as i64);
                row.opt_int(file);
                row.opt_int(log.ts);
                row.opt_int(log.byte_offset);
                row.text(Some(severity));
                row.text(Some(log.name));
                row.opt_int(args);
            })?;
        }
        Ok(())
    }

    /// `stats` rows as [`stats::rows`] builds them: the catalogue's singles in every
    /// (machine, file) context the clock report placed, and what was counted. The
    /// reference's stats go to `stats`, Sextant's own (no reference key) to
    /// `sextant_stats`, so `stats` holds exactly the reference's; ids count from 0 in each.
    fn stats(&mut self, sink: &Sink, facts: &ImportFacts) -> Result<(), DbError> {
        let contexts: Vec<_> = facts
            .report
            .files
            .iter()
            .map(|f| (f.machine, f.file))
            .collect();
        let (mut reference_id, mut own_id) = (0i64, 0i64);
        for r in stats::rows(&sink.stats, &sink.stat_order, &contexts) {
            let file = r.file.and_then(|f| self.file_id(u32::try_from(f).ok()?));
            let (table, id) = match r.key {
                Some(_) => (Table::Stats, &mut reference_id),
                None => (Table::SextantStats, &mut own_id),
            };
            let row_id = *id;
            *id += 1;
            self.row(table, |row| {
                row.int(row_id);
                row.text(Some(r.name));
                row.opt_int(r.key);
                row.opt_int(r.idx);
                row.text(Some(r.severity));
                row.text(Some(r.source));
                row.int(r.value);
                row.text(Some(r.description));
                row.opt_int(r.machine);
                row.opt_int(file);
            })?;
        }
        Ok(())
    }

    /// `__sextant_file_events`: what became of the events each file's parser read.
    fn file_events(&mut self, sink: &Sink) -> Result<(), DbError> {
        for (file, a) in sink.accounting.iter().enumerate() {
            if a.read == 0 {
                continue;
            }
            // Inputs the placement dropped whole were imported by the parser, then lost
            // (counted in the clock and sorter stats).
            let lost = sink
                .placement_losses
                .get(file)
                .copied()
                .unwrap_or(0)
                .min(a.imported);
            let file = self.file_id(file as u32);
            self.row(Table::FileEvents, |row| {
                row.opt_int(file);
                row.int(a.read as i64);
                row.int((a.imported - lost) as i64);
                row.int((a.dropped + lost) as i64);
                row.int(a.unaccounted as i64);
            })?;
        }
        Ok(())
    }

    fn trace_diagnostics(&mut self, sink: &Sink) -> Result<(), DbError> {
        for (id, d) in sink.diagnostics.iter().enumerate() {
            let file = self.file_id(d.file);
            self.row(Table::TraceDiagnostics, |row| {
                row.int(id as i64);
                row.text(Some(d.key));
                row.text(Some(d.title));
                row.text(Some(&d.description));
                row.text(Some(&d.remediation));
                row.real(Some(d.confidence));
                row.opt_int(file);
            })?;
        }
        Ok(())
    }

    /// `metadata` rows, ids from 0 as the reference numbers them.
    fn metadata(&mut self, facts: &ImportFacts, sink: &Sink) -> Result<(), DbError> {
        let mut id = 0i64;
        for (name, machine, file, value) in &sink.metadata {
            let (int, string) = match value {
                MetaValue::Int(v) => (Some(*v), None),
                MetaValue::Str(s) => (None, Some(s.as_str())),
            };
            // Machine facts belong to a machine; trace facts to a trace file.
            let machine_scoped = name.starts_with("system_")
                || name.starts_with("android_")
                || name.starts_with("timezone");
            // The reference's keys that collect every value (KeyType::kMulti).
            let multi = matches!(
                name.as_str(),
                "all_data_source_flushed_ns"
                    | "benchmark_story_tags"
                    | "slow_start_data_source"
                    | "last_flush_slow_data_source"
            );
            let file = if machine_scoped {
                None
            } else {
                self.file_id(*file)
            };
            self.row(Table::Metadata, |row| {
                row.int(id);
                row.text(Some(name));
                row.text(Some(if multi { "multi" } else { "single" }));
                row.opt_int(int);
                row.text(string);
                row.opt_int(nullable_machine(*machine));
                row.opt_int(file);
            })?;
            id += 1;
        }
        if let Some(clock) = facts.trace_time_clock {
            self.row(Table::Metadata, |row| {
                row.int(id);
                row.text(Some("trace_time_clock_id"));
                row.text(Some("single"));
                row.int(clock);
                row.text(None);
                row.opt_int(None::<i64>);
                row.opt_int(None::<i64>);
            })?;
        }
        Ok(())
    }

    fn files_and_snapshots(&mut self, facts: &ImportFacts) -> Result<(), DbError> {
        for f in &facts.files {
            self.row(Table::TraceFile, |row| {
                row.int(f.id);
                row.opt_int(opt_u32(f.parent_id));
                row.text(f.name.as_deref());
                row.int(f.size as i64);
                row.text(Some(f.trace_type));
                row.opt_int(opt_u32(f.processing_order));
                row.int(f.is_container);
            })?;
        }
        for (id, s) in facts.snapshots.iter().enumerate() {
            self.row(Table::ClockSnapshot, |row| {
                row.int(id as i64);
                row.int(s.ts);
                row.int(s.clock_id);
                row.text(clocks::name(s.clock_id).filter(|_| (1..=6).contains(&s.clock_id)));
                row.int(s.clock_value);
                row.int(s.snapshot_id);
                row.opt_int(nullable_machine(s.machine));
            })?;
        }
        Ok(())
    }

    fn clock_report(&mut self, facts: &ImportFacts) -> Result<(), DbError> {
        let report = &facts.report;
        for (id, n) in report.nodes.iter().enumerate() {
            let c = n.clock;
            let file = (c.file != 0 || c.clock_id == clocks::TRACE_FILE)
                .then(|| self.file_id(c.file))
                .flatten();
            self.row(Table::ClockNode, |row| {
                row.int(id as i64);
                row.opt_int(nullable_machine(c.machine));
                row.int(c.clock_id);
                row.text(clocks::name(c.clock_id));
                row.opt_int(file);
                row.opt_int((c.sequence != 0).then_some(c.sequence));
                row.text(Some(&n.label));
                row.int(n.is_trace_time);
            })?;
        }
        for e in &report.edges {
            let file = e.file.and_then(|f| self.file_id(f));
            self.row(Table::ClockEdge, |row| {
                row.int(e.src);
                row.int(e.dst);
                row.text(Some(e.source));
                row.int(e.offset_ns);
                row.int(e.readings);
                row.opt_int(file);
            })?;
        }
        for f in &report.files {
            let file = self.file_id(f.file);
            self.row(Table::FilePlacement, |row| {
                row.opt_int(file);
                row.opt_int(nullable_machine(f.machine));
                row.opt_int(f.node);
                row.text(Some(f.status));
                row.text(Some(&f.path));
                row.int(f.events as i64);
                row.int(f.dropped as i64);
            })?;
        }
        for r in &report.refused {
            let file = self.file_id(r.file);
            self.row(Table::ClockError, |row| {
                row.opt_int(file);
                row.opt_int(nullable_machine(r.machine));
                row.text(Some(&r.message));
            })?;
        }
        for c in &facts.candidates {
            self.row(Table::TraceTimeCandidate, |row| {
                row.int(c.node);
                row.text(Some(&c.label));
                row.int(c.current);
                row.int(c.dropped_events as i64);
            })?;
        }
        Ok(())
    }

    /// `__sextant_track_file`: the file of each track's first slice.
    fn track_files(&mut self) -> Result<(), DbError> {
        let files = std::mem::take(&mut self.track_files);
        for (track, &file) in files.iter().enumerate() {
            if file != NO_FILE {
                let file = self.file_id(file);
                self.row(Table::TrackFile, |row| {
                    row.int(track as i64);
                    row.opt_int(file);
                })?;
            }
        }
        Ok(())
    }
}
