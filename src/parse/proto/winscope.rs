//! Winscope packets (Android shell transitions, SurfaceFlinger layers snapshots and
//! transactions, window manager entries), as Trace Processor's WinscopeModule reads them:
//! every message is kept in base64 and reflected into args through the descriptor pool
//! (ProtoToArgsParser key naming: `targets[0].layer_id`, `displays[0].size.w`, …), fields
//! the descriptor lacks counted in the family's `winscope_*_parse_errors` stat.
//! - `shell_transition`: one row per transition id (several packets of one id merge: their
//!   args join, a key repeated takes the later value), typed columns from the fields;
//! - `shell_handler_mappings`: one handler row per mapping;
//! - `surfaceflinger_layers_snapshot`: a snapshot row (args: every field but `layers`) and
//!   a layer row per layer;
//! - `surfaceflinger_transactions`: one row per entry;
//! - `winscope_extensions` window manager, input method (clients, service, manager
//!   service) and view capture entries (read from `android_input.rs`): one row per entry;
//!   a view capture's interned strings (`package_name_iid`, `views[0].class_name_iid`, …)
//!   become string args under the key without `_iid` (`STRING DE-INTERNING ERROR` and
//!   `winscope_viewcapture_missing_interned_string_parse_errors` when the sequence lacks
//!   the string).
//!
//! Hands on [`EventData::Winscope`] rows; merging is the model's (`model/winscope.rs`).

use super::schema::{next_field, Value};
use super::typed_args::field_scalar;
use super::*;

use crate::ir::{ProtoLogRow, ShellTransitionRow, WinscopeEntryKind, WinscopeRow};

/// Values of a repeated scalar field, packed or not: varints, or 64-bit words.
fn repeated_scalars(bytes: &[u8], field: u32) -> Vec<u64> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while let Some((number, value)) = next_field(&mut rest) {
        if number != field {
            continue;
        }
        match value {
            Value::Varint(v) | Value::Fixed64(v) => out.push(v),
            Value::Fixed32(v) => out.push(u64::from(v)),
            Value::Len(mut packed) => {
                // Packed varints unless the field is 64-bit (doubles: field 4).
                if field == 4 {
                    while let Some(word) = super::schema::take(&mut packed, 8) {
                        let mut b = [0u8; 8];
                        b.copy_from_slice(word);
                        out.push(u64::from_le_bytes(b));
                    }
                } else {
                    while let Some(v) = super::schema::varint(&mut packed) {
                        out.push(v);
                    }
                }
            }
        }
    }
    out
}

impl Parser<'_> {
    /// Reflects `bytes` as `type_name` into a stored arg set, keys for which `keep` holds;
    /// unknown fields counted in `stat`.
    fn winscope_args(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        type_name: &str,
        bytes: &[u8],
        stat: &'static str,
        keep: Option<&dyn Fn(&str) -> bool>,
    ) -> ArgsRef {
        let mut args = std::mem::take(&mut self.args);
        args.clear();
        let unknown = self.reflect_proto_value(&mut args, "", type_name, bytes, machine, seq_id);
        if unknown > 0 {
            self.sink.stat(stat, machine, 1);
        }
        if let Some(keep) = keep {
            let strings = &self.sink.strings;
            args.args
                .retain(|a| keep(strings.get(a.key).unwrap_or_default()));
        }
        let args_ref = self.sink.args.push(&args.args);
        self.args = args;
        args_ref
    }

    fn base64(&mut self, bytes: &[u8]) -> StrId {
        self.sink.intern(&chrome::base64(bytes))
    }

    /// `TracePacket.shell_transition`.
    pub(super) fn shell_transition(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        bytes: &[u8],
    ) {
        let args = self.winscope_args(
            machine,
            seq_id,
            ".perfetto.protos.ShellTransition",
            bytes,
            "winscope_shell_transitions_parse_errors",
            None,
        );
        let base64 = self.base64(bytes);
        let int = |n: u32| field_scalar(bytes, n).map(|v| v as i64);
        let int32 = |n: u32| field_scalar(bytes, n).map(|v| i64::from(v as i32));
        let mut participants = Vec::new();
        let mut rest = bytes;
        while let Some((number, value)) = next_field(&mut rest) {
            if let (14, Value::Len(target)) = (number, value) {
                let layer = field_scalar(target, 2).map(|v| i64::from(v as i32));
                let window = field_scalar(target, 3).map(|v| i64::from(v as i32));
                participants.push((layer, window));
            }
        }
        let row = ShellTransitionRow {
            transition_id: int32(1).unwrap_or(0),
            args,
            base64,
            transition_type: int32(13),
            send_time: int(3),
            dispatch_time: int(4),
            finish_time: int(9),
            merge_time: int(5),
            shell_abort_time: int(7),
            wm_abort_time: int(8),
            handler: int32(12),
            flags: field_scalar(bytes, 16).map(|v| i64::from(v as u32)),
            start_transaction_id: int(10),
            finish_transaction_id: int(11),
            participants,
        };
        self.sink.push(
            ts,
            clock,
            EventData::Winscope(Box::new(WinscopeRow::ShellTransition(row))),
        );
    }

    /// `TracePacket.protolog_message`: its parameters, interned strings resolved on the
    /// sequence (`<ERROR>` and a stat when missing), for the model to format.
    pub(super) fn protolog_message(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        bytes: &[u8],
    ) {
        let message_id = field_scalar(bytes, 1).unwrap_or(0);
        let ints = repeated_scalars(bytes, 3)
            .into_iter()
            .map(|v| ((v >> 1) as i64) ^ -((v & 1) as i64))
            .collect();
        let doubles = repeated_scalars(bytes, 4);
        let bools = repeated_scalars(bytes, 5)
            .into_iter()
            .map(|v| v != 0)
            .collect();
        let lookup = |p: &Self, field: u32, iid: u64| {
            p.sequences
                .get(&(machine, seq_id))
                .and_then(|s| s.winscope_strings.get(&(field, iid)).copied())
        };
        let mut strings = Vec::new();
        let mut missing = 0;
        for iid in repeated_scalars(bytes, 2) {
            match lookup(self, 36, iid) {
                Some(s) => strings.push(s),
                None => {
                    missing += 1;
                    strings.push(self.sink.intern("<ERROR>"));
                }
            }
        }
        if missing > 0 {
            self.sink.stat(
                "winscope_protolog_missing_interned_arg_parse_errors",
                machine,
                missing,
            );
        }
        let mut stacktrace = NULL_STR;
        if let Some(iid) = field_scalar(bytes, 6) {
            match lookup(self, 37, iid) {
                Some(s) => stacktrace = s,
                None => self.sink.stat(
                    "winscope_protolog_missing_interned_stacktrace_parse_errors",
                    machine,
                    1,
                ),
            }
        }
        let row = ProtoLogRow {
            message_id,
            ints,
            doubles,
            bools,
            strings,
            stacktrace,
        };
        self.sink.push(
            ts,
            clock,
            EventData::Winscope(Box::new(WinscopeRow::ProtoLog(row))),
        );
    }

    /// `TracePacket.protolog_viewer_config`: the formats and groups messages refer to.
    pub(super) fn protolog_viewer_config(&mut self, ts: i64, clock: ClockRef, bytes: &[u8]) {
        let mut messages = Vec::new();
        let mut groups = Vec::new();
        let mut rest = bytes;
        while let Some((number, value)) = next_field(&mut rest) {
            let Value::Len(m) = value else {
                continue;
            };
            let mut text = [NULL_STR; 3];
            let mut fields = m;
            while let Some((n, v)) = next_field(&mut fields) {
                let slot = match (number, n) {
                    (1, 2) => 0, // message
                    (1, 5) => 1, // location
                    (2, 3) => 2, // group tag
                    _ => continue,
                };
                if let Value::Len(s) = v {
                    text[slot] = self.sink.intern(&String::from_utf8_lossy(s));
                }
            }
            match number {
                1 => messages.push((
                    field_scalar(m, 1).unwrap_or(0),
                    text[0],
                    field_scalar(m, 3).map_or(0, |v| v as i64),
                    field_scalar(m, 4).map_or(0, |v| v as u32),
                    text[1],
                )),
                2 => groups.push((field_scalar(m, 1).map_or(0, |v| v as u32), text[2])),
                _ => {}
            }
        }
        self.sink.push(
            ts,
            clock,
            EventData::Winscope(Box::new(WinscopeRow::ProtoLogConfig { messages, groups })),
        );
    }

    /// `TracePacket.shell_handler_mappings`: a row per mapping.
    pub(super) fn shell_handler_mappings(
        &mut self,
        _machine: MachineId,
        _seq_id: u32,
        ts: i64,
        clock: ClockRef,
        bytes: &[u8],
    ) {
        let mut rest = bytes;
        while let Some((number, value)) = next_field(&mut rest) {
            let (1, Value::Len(mapping)) = (number, value) else {
                continue;
            };
            let handler_id = field_scalar(mapping, 1).map_or(0, |v| i64::from(v as i32));
            let mut name = NULL_STR;
            let mut m = mapping;
            while let Some((n, v)) = next_field(&mut m) {
                if let (2, Value::Len(s)) = (n, v) {
                    name = self.sink.intern(&String::from_utf8_lossy(s));
                }
            }
            let base64 = self.base64(mapping);
            self.sink.push(
                ts,
                clock,
                EventData::Winscope(Box::new(WinscopeRow::ShellHandler {
                    handler_id,
                    name,
                    base64,
                })),
            );
        }
    }

    /// `TracePacket.surfaceflinger_layers_snapshot`: the snapshot and its layers.
    pub(super) fn sf_layers_snapshot(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        bytes: &[u8],
    ) {
        const STAT: &str = "winscope_sf_layers_parse_errors";
        let not_layers = |key: &str| key != "layers" && !key.starts_with("layers.");
        let args = self.winscope_args(
            machine,
            seq_id,
            ".perfetto.protos.LayersSnapshotProto",
            bytes,
            STAT,
            Some(&not_layers),
        );
        let base64 = self.base64(bytes);
        let mut layers = Vec::new();
        let mut rest = bytes;
        while let Some((number, value)) = next_field(&mut rest) {
            let (3, Value::Len(mut list)) = (number, value) else {
                continue;
            };
            while let Some((n, v)) = next_field(&mut list) {
                if let (1, Value::Len(layer)) = (n, v) {
                    let args = self.winscope_args(
                        machine,
                        seq_id,
                        ".perfetto.protos.LayerProto",
                        layer,
                        STAT,
                        None,
                    );
                    let base64 = self.base64(layer);
                    layers.push((args, base64));
                }
            }
        }
        self.sink.push(
            ts,
            clock,
            EventData::Winscope(Box::new(WinscopeRow::LayersSnapshot {
                args,
                base64,
                layers,
            })),
        );
    }

    /// `TracePacket.surfaceflinger_transactions`: one row.
    pub(super) fn sf_transactions(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        bytes: &[u8],
    ) {
        let args = self.winscope_args(
            machine,
            seq_id,
            ".perfetto.protos.TransactionTraceEntry",
            bytes,
            "winscope_sf_transactions_parse_errors",
            None,
        );
        let base64 = self.base64(bytes);
        let vsync_id = field_scalar(bytes, 2).map(|v| v as i64);
        self.sink.push(
            ts,
            clock,
            EventData::Winscope(Box::new(WinscopeRow::Transactions {
                args,
                base64,
                vsync_id,
            })),
        );
    }

    /// `WinscopeExtensionsImpl.viewcapture`: one row, interned strings resolved.
    pub(super) fn viewcapture(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        bytes: &[u8],
    ) {
        const ERROR: &str = "STRING DE-INTERNING ERROR";
        let mut args = std::mem::take(&mut self.args);
        args.clear();
        let unknown = self.reflect_proto_value(
            &mut args,
            "",
            ".perfetto.protos.ViewCapture",
            bytes,
            machine,
            seq_id,
        );
        if unknown > 0 {
            self.sink
                .stat("winscope_viewcapture_parse_errors", machine, 1);
        }
        // (index, key, flat key, InternedData field, iid) of each interned reference.
        let mut refs = Vec::new();
        for (i, a) in args.args.iter().enumerate() {
            let key = self.sink.strings.get(a.key).unwrap_or_default();
            let Some(stripped) = key.strip_suffix("_iid") else {
                continue;
            };
            let field = if stripped.ends_with("package_name") {
                38
            } else if stripped.ends_with("window_name") {
                39
            } else if stripped.ends_with("view_id") {
                40
            } else if stripped.ends_with("class_name") {
                41
            } else {
                continue;
            };
            let iid = match a.value {
                ArgValue::Int(v) => v as u64,
                ArgValue::Uint(v) => v,
                _ => continue,
            };
            let flat = self.sink.strings.get(a.flat_key).unwrap_or_default();
            let flat = flat.strip_suffix("_iid").unwrap_or(flat).to_string();
            refs.push((i, stripped.to_string(), flat, field, iid));
        }
        let mut missing = 0;
        for (i, key, flat, field, iid) in refs {
            let found = self
                .sequences
                .get(&(machine, seq_id))
                .and_then(|s| s.winscope_strings.get(&(field, iid)).copied());
            let value = found.unwrap_or_else(|| {
                missing += 1;
                self.sink.intern(ERROR)
            });
            let a = &mut args.args[i];
            a.key = self.sink.intern(&key);
            a.flat_key = self.sink.intern(&flat);
            a.value = ArgValue::Str(value);
        }
        if missing > 0 {
            self.sink.stat(
                "winscope_viewcapture_missing_interned_string_parse_errors",
                machine,
                missing,
            );
        }
        let args_ref = self.sink.args.push(&args.args);
        self.args = args;
        let base64 = self.base64(bytes);
        self.sink.push(
            ts,
            clock,
            EventData::Winscope(Box::new(WinscopeRow::Entry {
                kind: WinscopeEntryKind::ViewCapture,
                args: args_ref,
                base64,
            })),
        );
    }

    /// A `WinscopeExtensionsImpl` entry kept as one row: window manager (6), input method
    /// clients (1), service (2), manager service (3). Whether `field` is one.
    pub(super) fn winscope_entry(
        &mut self,
        machine: MachineId,
        seq_id: u32,
        ts: i64,
        clock: ClockRef,
        field: u32,
        bytes: &[u8],
    ) -> bool {
        use WinscopeEntryKind as K;
        let (kind, type_name, stat) = match field {
            1 => (
                K::InputMethodClients,
                ".perfetto.protos.InputMethodClientsTraceProto",
                "winscope_inputmethod_clients_parse_errors",
            ),
            2 => (
                K::InputMethodService,
                ".perfetto.protos.InputMethodServiceTraceProto",
                "winscope_inputmethod_service_parse_errors",
            ),
            3 => (
                K::InputMethodManagerService,
                ".perfetto.protos.InputMethodManagerServiceTraceProto",
                "winscope_inputmethod_manager_service_parse_errors",
            ),
            6 => (
                K::WindowManager,
                ".perfetto.protos.WindowManagerTraceEntry",
                "winscope_windowmanager_parse_errors",
            ),
            _ => return false,
        };
        let args = self.winscope_args(machine, seq_id, type_name, bytes, stat, None);
        let base64 = self.base64(bytes);
        self.sink.push(
            ts,
            clock,
            EventData::Winscope(Box::new(WinscopeRow::Entry { kind, args, base64 })),
        );
        true
    }
}
