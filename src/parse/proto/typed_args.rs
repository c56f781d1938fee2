//! A TrackEvent's args in Trace Processor's order (behaviour-chrome-typed-args §2): source
//! location, posted-from location, log message (which also makes an `android_logs` row),
//! screenshot, histogram name, active processes, correlation id, legacy source id, the
//! typed fields reflected through the descriptor pool (§4: the Chrome allowlist and every
//! extension), debug annotations, and the arg sets to translate at the end of the file
//! (§5). Fields the pool does not know yet are reflected again at the end of the file, once
//! every `extension_descriptor` is in (Trace Processor reads those at tokenization, before
//! it parses any TrackEvent; Chrome writes its own after its events). Hands on arg sets,
//! log lines and process references.

use super::descriptor_pool::{Kind, Pool};
use super::schema::{next_field, zigzag, Value};
use super::*;

/// TrackEvent fields reflected into args besides extensions (Trace Processor's
/// `kReflectFields`).
const REFLECTED_FIELDS: &[u32] = &[
    24, 25, 26, 27, 28, 29, 32, 33, 34, 35, 38, 39, 40, 41, 43, 49, 50,
];

/// Extension field numbers of TrackEvent.
const EXTENSIONS: std::ops::Range<u32> = 1000..10000;

/// The most bytes of events kept to be reflected again at the end of the file (see
/// [`LateArgs`]); past it, unknown fields stay unknown.
const MAX_LATE_BYTES: usize = 64 << 20;

/// Nesting deeper than this is not reflected (a malicious trace cannot recurse forever).
const MAX_DEPTH: usize = 64;

/// The interned lookups one reflection made (the §4.2 field overrides), so that reflecting
/// the same bytes again at the end of the file sees the sequence's interned data as it was
/// when the event was read.
#[derive(Default)]
pub(super) struct Lookups {
    /// Interned unsymbolized location → (mapping row, rel_pc).
    native: Vec<(u64, Option<(u64, u64)>)>,
    /// Interned source location → (file, function, line).
    locations: Vec<(u64, Option<Location>)>,
}

/// An interned source location: file, function, line.
type Location = (StrId, StrId, Option<u32>);

/// What one reflection gave.
pub(super) struct Reflected {
    /// A key §5 may translate was added.
    translatable: bool,
    /// Fields the pool does not describe.
    unknown: i64,
    lookups: Lookups,
}

/// A run of an event's args reflected while the pool did not know some of its fields.
pub(super) struct LateSegment {
    /// Where the run sits in the event's args (before the set was stored).
    range: std::ops::Range<usize>,
    /// The unknown fields of the first reflection.
    unknown: i64,
    /// The TrackEvent's own fields (counted in `unknown_extension_fields`), or a debug
    /// annotation's `proto_value`: (key, full type name).
    what: Option<(String, String)>,
    bytes: Vec<u8>,
    lookups: Lookups,
    /// The proto value's type was not in the pool at all (`track_event_parser_errors` if it
    /// still is not at the end).
    type_missing: bool,
}

/// An event's arg set with runs to reflect again once the whole file's descriptors are in.
pub(super) struct LateArgs {
    id: ArgsRef,
    args: Vec<Arg>,
    segments: Vec<LateSegment>,
    /// The pool generation the event was reflected with.
    generation: u32,
    cx: EventContext,
    /// The set is listed for §5 translation already.
    translatable: bool,
}

/// What the arg builder needs to know about the event besides its fields.
#[derive(Clone, Copy)]
pub(super) struct EventContext {
    pub machine: MachineId,
    pub seq_id: u32,
    pub ts: i64,
    pub clock: ClockRef,
    /// The thread the event belongs to, if any (log messages need one).
    pub thread: Option<ThreadRef>,
    /// A legacy async event's id (`legacy_trace_source_id`).
    pub legacy_source_id: Option<i64>,
    /// The sequence's thread, for `legacy_event.passthrough_utid` (a slice of a pid/tid
    /// sequence on a described track).
    pub passthrough: Option<ThreadRef>,
}

/// `\` → `/` in a source file name, as Trace Processor normalizes them.
fn normalize_path(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\\') {
        std::borrow::Cow::Owned(s.replace('\\', "/"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// The bytes of the first length-delimited occurrence of `field` in a message.
pub(super) fn field_bytes(mut msg: &[u8], field: u32) -> Option<&[u8]> {
    while let Some((number, value)) = next_field(&mut msg) {
        if number == field {
            if let Value::Len(b) = value {
                return Some(b);
            }
        }
    }
    None
}

/// The last scalar (varint or fixed-width) occurrence of `field` in a message, as its raw
/// 64 bits: a later occurrence of a scalar field replaces an earlier one.
pub(super) fn field_scalar(mut msg: &[u8], field: u32) -> Option<u64> {
    let mut found = None;
    while let Some((number, value)) = next_field(&mut msg) {
        if number != field {
            continue;
        }
        match value {
            Value::Varint(v) | Value::Fixed64(v) => found = Some(v),
            Value::Fixed32(v) => found = Some(u64::from(v)),
            Value::Len(_) => {}
        }
    }
    found
}

/// Keys being built while walking a message: the full key (with `[i]`) and the flat key.
struct Keys {
    key: String,
    flat: String,
}

impl Keys {
    fn push(&mut self, name: &str, index: Option<u32>) -> (usize, usize) {
        let at = (self.key.len(), self.flat.len());
        if !self.key.is_empty() {
            self.key.push('.');
            self.flat.push('.');
        }
        self.key.push_str(name);
        self.flat.push_str(name);
        if let Some(i) = index {
            use std::fmt::Write as _;
            let _ = write!(self.key, "[{i}]");
        }
        at
    }

    fn pop(&mut self, at: (usize, usize)) {
        self.key.truncate(at.0);
        self.flat.truncate(at.1);
    }
}

impl Parser<'_> {
    /// An `extension_descriptor` packet: its descriptors join the pool.
    pub(super) fn extension_descriptor(
        &mut self,
        machine: MachineId,
        d: &protos::ExtensionDescriptor,
    ) {
        self.sink.touch();
        let Some(set) = &d.extension_set else { return };
        let bytes = set.encode_to_vec();
        let pool = self.pool.get_or_insert_with(|| Pool::builtin().clone());
        if pool.add_file_set(&bytes).is_err() {
            self.sink.stat("proto_packet_decode_failure", machine, 1);
        }
        self.pool_generation += 1;
    }

    /// The native location of an interned unsymbolized location: its mapping's
    /// `stack_profile_mapping` id (the row made as profiles make theirs) and rel_pc; None
    /// when the location or its mapping was not interned.
    fn native_location(&mut self, machine: MachineId, seq_id: u32, iid: u64) -> Option<(u64, u64)> {
        let seq = self.sequences.get(&(machine, seq_id))?;
        let Some(&(mapping, rel_pc)) = seq.unsymbolized.get(&iid) else {
            self.sink.stat("interned_data_tokenizer_errors", machine, 1);
            return None;
        };
        let row = self
            .profiling
            .mapping_row(self.sink, machine, seq_id, mapping)?;
        Some((u64::from(row), rel_pc))
    }

    /// Every arg of a TrackEvent, in Trace Processor's order; `raw` is the event's bytes.
    pub(super) fn track_event_args(
        &mut self,
        ev: &protos::TrackEvent,
        raw: &[u8],
        cx: EventContext,
    ) -> ArgsRef {
        let mut args = std::mem::take(&mut self.args);
        args.clear();
        let machine = cx.machine;
        // 1. The interned source location.
        if let Some(track_event::SourceLocationField::SourceLocationIid(iid)) =
            ev.source_location_field
        {
            match self.source_location(machine, cx.seq_id, iid) {
                Some(loc) => self.location_args(&mut args, "source", loc),
                None => {
                    self.sink.stat("interned_data_tokenizer_errors", machine, 1);
                    self.sink.stat("track_event_parser_errors", machine, 1);
                }
            }
        }
        // 2. Where the task being run was posted from.
        if let Some(task) = &ev.task_execution {
            let iid = task.posted_from_iid.unwrap_or(0);
            match self
                .source_location(machine, cx.seq_id, iid)
                .filter(|_| iid != 0)
            {
                Some(loc) => self.location_args(&mut args, "task.posted_from", loc),
                None => {
                    if iid != 0 {
                        self.sink.stat("interned_data_tokenizer_errors", machine, 1);
                    }
                    self.sink.stat("track_event_parser_errors", machine, 1);
                }
            }
        }
        // 3. A log message (and its android_logs row).
        if let Some(log) = &ev.log_message {
            self.log_message(&mut args, log, cx);
        }
        // 4–6 read fields Sextant's bindings do not decode.
        let mut histogram = None;
        let mut screenshot = None;
        let mut active = None;
        // The same walk tells whether step 10 has anything to reflect.
        let mut reflected = false;
        let mut fields = raw;
        while let Some((number, value)) = next_field(&mut fields) {
            match (number, value) {
                (28, Value::Len(b)) => histogram = Some(b),
                (50, Value::Len(b)) => screenshot = Some(b),
                (49, Value::Len(b)) => active = Some(b),
                _ => {}
            }
            reflected |= REFLECTED_FIELDS.contains(&number) || EXTENSIONS.contains(&number);
        }
        if let Some(shot) = screenshot {
            self.screenshot_args(&mut args, shot);
        }
        if let Some(h) = histogram {
            self.histogram_name(&mut args, h, cx);
        }
        if let Some(a) = active {
            self.active_processes(a, cx, false);
        }
        // 7. Correlation id.
        if let Some(id) = &ev.correlation_id_field {
            let value = match id {
                track_event::CorrelationIdField::CorrelationId(v) => {
                    Some(self.sink.intern(&format!("tp:#{v}")))
                }
                track_event::CorrelationIdField::CorrelationIdStr(s) => Some(self.sink.intern(s)),
                track_event::CorrelationIdField::CorrelationIdStrIid(iid) => {
                    let found = self
                        .sequences
                        .get(&(machine, cx.seq_id))
                        .and_then(|s| s.correlation_ids.get(iid).copied());
                    if found.is_none() {
                        self.sink.stat("interned_data_tokenizer_errors", machine, 1);
                    }
                    found
                }
            };
            if let Some(v) = value {
                let key = self.sink.intern_static("correlation_id");
                args.add(key, key, ArgValue::Str(v));
            }
        }
        // 8. A legacy async event's id.
        if let Some(id) = cx.legacy_source_id {
            let key = self.sink.intern_static("legacy_trace_source_id");
            args.add(key, key, ArgValue::Int(id));
        }
        // 10. Typed fields.
        let start = args.args.len();
        let mut late = Vec::new();
        let mut translatable = false;
        if let Some(r) = reflected
            .then(|| self.reflect_track_event(&mut args, raw, cx, None))
            .flatten()
        {
            translatable = r.translatable;
            if r.unknown > 0 {
                late.push(LateSegment {
                    range: start..args.args.len(),
                    unknown: r.unknown,
                    what: None,
                    bytes: raw.to_vec(),
                    lookups: r.lookups,
                    type_missing: false,
                });
            }
        }
        // 11. Debug annotations (their typed proto values may be late too).
        let outer = self.late_capture.replace(late);
        self.debug_annotations(&mut args, cx.machine, cx.seq_id, ev);
        let late = std::mem::replace(&mut self.late_capture, outer).unwrap_or_default();
        // 12. The sequence's thread (kept by the model where the track is not its own).
        if let Some(t) = cx.passthrough {
            let key = self.sink.intern_static("legacy_event.passthrough_utid");
            let thread = self.sink.thread_refs.intern(t);
            args.add(key, key, ArgValue::PassthroughUtid(thread));
        }
        let kept_bytes: usize = late.iter().map(|s| s.bytes.len()).sum();
        let id = if late.is_empty() {
            self.sink.args(&mut args)
        } else if self.late_bytes + kept_bytes > MAX_LATE_BYTES {
            // Past the budget, the event's unknown fields stay unknown (as if no descriptor
            // came later) rather than keeping a copy of a large trace in memory.
            self.count_unresolved(cx.machine, &late);
            self.sink.args(&mut args)
        } else {
            self.late_bytes += kept_bytes;
            let kept = args.args.clone();
            let id = match self.sink.args(&mut args) {
                // Nothing known yet: a set of its own, filled at the end if it can be.
                NO_ARGS => self.sink.args.reserve(),
                id => id,
            };
            self.late_args.push(LateArgs {
                id,
                args: kept,
                segments: late,
                generation: self.pool_generation,
                cx,
                translatable,
            });
            id
        };
        self.args = args;
        if translatable && id != NO_ARGS {
            self.translatable.push(id);
        }
        id
    }

    /// At the end of the file: the runs reflected while the pool missed some of their
    /// fields (or a proto value's whole type) are reflected again if an
    /// `extension_descriptor` came after their event; the TrackEvent fields still unknown
    /// are counted in `unknown_extension_fields`, the types still unknown in
    /// `track_event_parser_errors`.
    pub(super) fn reflect_late_args(&mut self) {
        let late = std::mem::take(&mut self.late_args);
        for entry in late {
            let machine = entry.cx.machine;
            if entry.generation == self.pool_generation {
                self.count_unresolved(machine, &entry.segments);
                continue;
            }
            let mut builder = ArgsBuilder::default();
            let (mut at, mut unknown, mut translatable) = (0, 0, false);
            for seg in &entry.segments {
                builder
                    .args
                    .extend_from_slice(&entry.args[at..seg.range.start]);
                let r = match &seg.what {
                    None => self.reflect_track_event(
                        &mut builder,
                        &seg.bytes,
                        entry.cx,
                        Some(&seg.lookups),
                    ),
                    Some((key, type_name)) => self.reflect(
                        &mut builder,
                        type_name,
                        key,
                        &seg.bytes,
                        false,
                        entry.cx,
                        Some(&seg.lookups),
                    ),
                };
                match r {
                    Some(r) => {
                        translatable |= r.translatable;
                        if seg.what.is_none() {
                            unknown += r.unknown;
                        }
                    }
                    None => {
                        builder
                            .args
                            .extend_from_slice(&entry.args[seg.range.clone()]);
                        if seg.what.is_none() {
                            unknown += seg.unknown;
                        }
                        if seg.type_missing {
                            self.sink.stat("track_event_parser_errors", machine, 1);
                        }
                    }
                }
                at = seg.range.end;
            }
            builder.args.extend_from_slice(&entry.args[at..]);
            if unknown > 0 {
                self.sink.stat("unknown_extension_fields", machine, unknown);
            }
            self.sink.args.replace(entry.id, &builder.args);
            if translatable && !entry.translatable {
                self.translatable.push(entry.id);
            }
        }
    }

    /// Counts what a run left unknown: the TrackEvent's own fields in
    /// `unknown_extension_fields`, proto value types not in the pool in
    /// `track_event_parser_errors`.
    fn count_unresolved(&mut self, machine: MachineId, segments: &[LateSegment]) {
        let missing = segments.iter().filter(|s| s.type_missing).count();
        if missing > 0 {
            self.sink
                .stat("track_event_parser_errors", machine, missing as i64);
        }
        let unknown: i64 = segments
            .iter()
            .filter(|s| s.what.is_none())
            .map(|s| s.unknown)
            .sum();
        if unknown > 0 {
            self.sink.stat("unknown_extension_fields", machine, unknown);
        }
    }

    fn source_location(
        &self,
        machine: MachineId,
        seq_id: u32,
        iid: u64,
    ) -> Option<(StrId, StrId, Option<u32>)> {
        self.sequences
            .get(&(machine, seq_id))
            .and_then(|s| s.source_locations.get(&iid).copied())
    }

    /// `<prefix>.file_name` (normalized), `.function_name`, `.line_number` (uint, 0 unset).
    fn location_args(
        &mut self,
        args: &mut ArgsBuilder,
        prefix: &str,
        (file, function, line): (StrId, StrId, Option<u32>),
    ) {
        let file = match self.sink.strings.get(file) {
            Some(f) if f.contains('\\') => {
                let f = normalize_path(f).into_owned();
                self.sink.intern(&f)
            }
            _ => file,
        };
        for (name, value) in [
            ("file_name", ArgValue::Str(file)),
            ("function_name", ArgValue::Str(function)),
            ("line_number", ArgValue::Uint(u64::from(line.unwrap_or(0)))),
        ] {
            let key = self.sink.intern(&format!("{prefix}.{name}"));
            args.add(key, key, value);
        }
    }

    /// §3: a log message's args, and its `android_logs` row.
    fn log_message(&mut self, args: &mut ArgsBuilder, log: &protos::LogMessage, cx: EventContext) {
        let machine = cx.machine;
        let Some(thread) = cx.thread else {
            self.sink.stat("track_event_parser_errors", machine, 1);
            return;
        };
        let seq = self.sequences.get(&(machine, cx.seq_id));
        let body = seq.and_then(|s| s.log_bodies.get(&log.body_iid.unwrap_or(0)).copied());
        let Some(body) = body else {
            self.sink.stat("interned_data_tokenizer_errors", machine, 1);
            self.sink.stat("track_event_parser_errors", machine, 1);
            return;
        };
        let key = self.sink.intern_static("track_event.log_message.message");
        args.add(key, key, ArgValue::Str(body));
        let mut tag = NULL_STR;
        if let Some(iid) = log.source_location_iid.filter(|&i| i != 0) {
            let Some((file, function, line)) = self.source_location(machine, cx.seq_id, iid) else {
                self.sink.stat("interned_data_tokenizer_errors", machine, 1);
                self.sink.stat("track_event_parser_errors", machine, 1);
                return;
            };
            let line = i64::from(line.unwrap_or(0));
            for (name, value) in [
                ("track_event.log_message.file_name", ArgValue::Str(file)),
                (
                    "track_event.log_message.function_name",
                    ArgValue::Str(function),
                ),
                ("track_event.log_message.line_number", ArgValue::Int(line)),
            ] {
                let key = self.sink.intern_static(name);
                args.add(key, key, value);
            }
            let file = self.sink.strings.get(file).unwrap_or("").to_string();
            tag = self.sink.intern(&format!("{file}:{line}"));
        }
        if let Some(prio) = log.prio {
            let key = self.sink.intern_static("track_event.priority");
            args.add(key, key, ArgValue::Int(i64::from(prio)));
        }
        // LogMessage.Priority 0–7 are Android's priorities; unset is INFO.
        let prio = log.prio.map_or(4, i64::from);
        let line = LogLine {
            thread,
            prio,
            tag,
            msg: body,
        };
        self.sink
            .push(cx.ts, cx.clock, EventData::AndroidLog(Box::new(line)));
    }

    /// §4 step: `screenshot.*_image` as base64.
    fn screenshot_args(&mut self, args: &mut ArgsBuilder, mut shot: &[u8]) {
        while let Some((number, value)) = next_field(&mut shot) {
            let key = match number {
                1 => "screenshot.jpg_image",
                2 => "screenshot.pam_image",
                3 => "screenshot.ppm_image",
                _ => continue,
            };
            if let Value::Len(b) = value {
                let v = self.sink.intern(&chrome::base64(b));
                let key = self.sink.intern_static(key);
                args.add(key, key, ArgValue::Str(v));
            }
        }
    }

    /// `chrome_histogram_sample.name` from its interned name.
    fn histogram_name(&mut self, args: &mut ArgsBuilder, mut h: &[u8], cx: EventContext) {
        let (mut iid, mut has_name) = (None, false);
        while let Some((number, value)) = next_field(&mut h) {
            match (number, value) {
                (4, Value::Varint(v)) => iid = Some(v),
                (2, Value::Len(_)) => has_name = true,
                _ => {}
            }
        }
        let Some(iid) = iid else { return };
        if has_name {
            self.sink.stat("track_event_parser_errors", cx.machine, 1);
            return;
        }
        let name = self
            .sequences
            .get(&(cx.machine, cx.seq_id))
            .and_then(|s| s.histogram_names.get(&iid).copied());
        match name {
            Some(n) => {
                let key = self.sink.intern_static("chrome_histogram_sample.name");
                args.add(key, key, ArgValue::Str(n));
            }
            None => {
                self.sink
                    .stat("interned_data_tokenizer_errors", cx.machine, 1);
                self.sink.stat("track_event_parser_errors", cx.machine, 1);
            }
        }
    }

    /// Chrome's list of live processes: each pid gets its process (and main thread).
    fn active_processes(&mut self, mut a: &[u8], cx: EventContext, _reflected: bool) {
        let mut pids = Vec::new();
        while let Some((number, value)) = next_field(&mut a) {
            match (number, value) {
                (1, Value::Varint(v)) => pids.push(v as i32),
                (1, Value::Len(mut packed)) => {
                    while let Some(v) = schema::varint(&mut packed) {
                        pids.push(v as i32);
                    }
                }
                _ => {}
            }
        }
        for pid in pids {
            self.touch_process(cx, i64::from(pid));
        }
    }

    /// A pid Chrome lists as live: its process (and main thread), and the listing for
    /// `experimental_missing_chrome_processes`.
    fn touch_process(&mut self, cx: EventContext, pid: i64) {
        let thread = ThreadRef {
            machine: cx.machine,
            tid: pid,
            pid: Some(pid),
        };
        self.sink.push(cx.ts, cx.clock, EventData::Thread(thread));
        let process = ProcessRef {
            machine: cx.machine,
            pid,
        };
        self.sink.push(
            cx.ts,
            cx.clock,
            EventData::ChromeProcessSeen {
                process,
                descriptor: false,
            },
        );
    }

    /// §4: the allowlisted fields and the extensions of a TrackEvent, in wire order (None
    /// when it has none). `replay`: the lookups of an earlier reflection of these bytes.
    fn reflect_track_event(
        &mut self,
        args: &mut ArgsBuilder,
        raw: &[u8],
        cx: EventContext,
        replay: Option<&Lookups>,
    ) -> Option<Reflected> {
        // Cheap check first: most events have no reflected field.
        let mut scan = raw;
        let mut any = false;
        while let Some((number, _)) = next_field(&mut scan) {
            if REFLECTED_FIELDS.contains(&number) || EXTENSIONS.contains(&number) {
                any = true;
                break;
            }
        }
        if !any {
            return None;
        }
        self.reflect(
            args,
            ".perfetto.protos.TrackEvent",
            "",
            raw,
            true,
            cx,
            replay,
        )
    }

    /// Reflects `bytes` as message `full_name` under `key` (`top`: a TrackEvent's own
    /// fields, allowlisted); None when the pool has no such message.
    #[allow(clippy::too_many_arguments)]
    fn reflect(
        &mut self,
        args: &mut ArgsBuilder,
        full_name: &str,
        key: &str,
        bytes: &[u8],
        top: bool,
        cx: EventContext,
        replay: Option<&Lookups>,
    ) -> Option<Reflected> {
        let pool = self.pool.take();
        let p = pool.as_ref().unwrap_or_else(|| Pool::builtin());
        let Some(msg) = p.message(full_name) else {
            self.pool = pool;
            return None;
        };
        let mut r = Reflector {
            parser: self,
            pool: p,
            args,
            keys: Keys {
                key: key.to_string(),
                flat: key.to_string(),
            },
            unknown: 0,
            translatable: false,
            cx,
            replay,
            record: Lookups::default(),
        };
        r.message(msg, bytes, top, 0);
        let out = Reflected {
            translatable: r.translatable,
            unknown: r.unknown,
            lookups: r.record,
        };
        self.pool = pool;
        Some(out)
    }

    /// A DebugAnnotation's `proto_value` (or another message), reflected under `key`.
    /// Returns how many fields its descriptor does not know (they are not reflected).
    pub(super) fn reflect_proto_value(
        &mut self,
        args: &mut ArgsBuilder,
        key: &str,
        type_name: &str,
        bytes: &[u8],
        machine: MachineId,
        seq_id: u32,
    ) -> i64 {
        let full = if type_name.starts_with('.') {
            type_name.to_string()
        } else {
            format!(".{type_name}")
        };
        let cx = EventContext {
            machine,
            seq_id,
            ts: 0,
            clock: 0,
            thread: None,
            legacy_source_id: None,
            passthrough: None,
        };
        let start = args.args.len();
        let Some(r) = self.reflect(args, &full, key, bytes, false, cx, None) else {
            match self.late_capture.as_mut() {
                // Inside a TrackEvent's args: a later descriptor may describe the type.
                Some(late) => late.push(LateSegment {
                    range: start..start,
                    unknown: 0,
                    what: Some((key.to_string(), full)),
                    bytes: bytes.to_vec(),
                    lookups: Lookups::default(),
                    type_missing: true,
                }),
                None => self.sink.stat("track_event_parser_errors", machine, 1),
            }
            return 0;
        };
        if r.unknown > 0 {
            // Inside a TrackEvent's args: reflected again at the end of the file.
            if let Some(late) = self.late_capture.as_mut() {
                late.push(LateSegment {
                    range: start..args.args.len(),
                    unknown: r.unknown,
                    what: Some((key.to_string(), full)),
                    bytes: bytes.to_vec(),
                    lookups: r.lookups,
                    type_missing: false,
                });
            }
        }
        r.unknown
    }

    /// §5 at the end of the file: arg sets with hashed names get the names the
    /// translation tables give, and obfuscated class names their real ones.
    pub(super) fn translate_args(&mut self) {
        let sets = std::mem::take(&mut self.translatable);
        if sets.is_empty() {
            return;
        }
        let keys = [
            "chrome_histogram_sample.name_hash",
            "chrome_user_event.action_hash",
            "chrome_hashed_performance_mark.site_hash",
            "chrome_hashed_performance_mark.mark_hash",
            "chrome_trigger.name_hash",
            "android_view_dump.activity.view.class_name",
        ]
        .map(|k| self.sink.intern_static(k));
        let names = [
            "chrome_histogram_sample.name",
            "chrome_user_event.action",
            "chrome_hashed_performance_mark.site",
            "chrome_hashed_performance_mark.mark",
            "chrome_trigger.name",
        ]
        .map(|k| self.sink.intern_static(k));
        let mojo_mapping = self
            .sink
            .intern_static("chrome_mojo_event_info.mojo_interface_method.native_symbol.mapping_id");
        let mojo_pc = self
            .sink
            .intern_static("chrome_mojo_event_info.mojo_interface_method.native_symbol.rel_pc");
        let mojo_method = self
            .sink
            .intern_static("chrome_mojo_event_info.mojo_method_name");
        let mojo_tag = self
            .sink
            .intern_static("chrome_mojo_event_info.mojo_interface_tag");
        for id in sets {
            let old: Vec<Arg> = self.sink.args.get(id).to_vec();
            let mut new = Vec::with_capacity(old.len() + 2);
            let mut changed = false;
            // A Mojo method's native location: consumed, then named (or put back last).
            let mapping = old.iter().find(|a| a.key == mojo_mapping).copied();
            let pc = old.iter().find(|a| a.key == mojo_pc).copied();
            let mut mojo_tail = Vec::new();
            if let (Some(m), Some(p)) = (mapping, pc) {
                changed = true;
                let symbol = match (m.value, p.value) {
                    (ArgValue::Uint(m), ArgValue::Uint(p)) => self
                        .sink
                        .stack_profile
                        .mappings
                        .get(m as usize)
                        .and_then(|row| {
                            self.module_symbols
                                .get(&(row.build_id, p))
                                .or_else(|| self.module_symbols.get(&(row.name, p)))
                        })
                        .and_then(|&s| self.sink.strings.get(s))
                        .map(str::to_string),
                    _ => None,
                };
                match symbol {
                    Some(symbol) => {
                        let (method, tag) = mojo_names(&symbol);
                        let method = self.sink.intern(&method);
                        mojo_tail.push(Arg {
                            flat_key: mojo_method,
                            key: mojo_method,
                            value: ArgValue::Str(method),
                        });
                        if !old.iter().any(|a| a.key == mojo_tag) {
                            let tag = self.sink.intern(&tag);
                            mojo_tail.push(Arg {
                                flat_key: mojo_tag,
                                key: mojo_tag,
                                value: ArgValue::Str(tag),
                            });
                        }
                    }
                    None => mojo_tail.extend([m, p]),
                }
            }
            for a in old {
                if !mojo_tail.is_empty() && (a.key == mojo_mapping || a.key == mojo_pc) {
                    continue;
                }
                let t = &self.sink.translations;
                let added = match a.value {
                    ArgValue::Uint(h) if a.key == keys[0] => t.histogram.get(&h).map(|&n| (0, n)),
                    ArgValue::Uint(h) if a.key == keys[1] => t.user_event.get(&h).map(|&n| (1, n)),
                    ArgValue::Uint(h) if a.key == keys[2] => {
                        t.performance_mark_site.get(&h).map(|&n| (2, n))
                    }
                    ArgValue::Uint(h) if a.key == keys[3] => {
                        t.performance_mark.get(&h).map(|&n| (3, n))
                    }
                    ArgValue::Uint(h) if a.key == keys[4] => t.study.get(&h).map(|&n| (4, n)),
                    ArgValue::Str(s) if a.flat_key == keys[5] => {
                        if let Some(&real) = t.deobfuscated_classes.get(&s) {
                            new.push(Arg {
                                value: ArgValue::Str(real),
                                ..a
                            });
                            changed = true;
                            continue;
                        }
                        None
                    }
                    _ => None,
                };
                new.push(a);
                if let Some((i, name)) = added {
                    new.push(Arg {
                        flat_key: names[i],
                        key: names[i],
                        value: ArgValue::Str(name),
                    });
                    changed = true;
                }
            }
            new.extend(mojo_tail);
            if changed {
                self.sink.args.replace(id, &new);
            }
        }
    }
}

/// Walks a message through its descriptor, adding args.
struct Reflector<'p, 'a, 'b> {
    parser: &'b mut Parser<'a>,
    pool: &'p Pool,
    args: &'b mut ArgsBuilder,
    keys: Keys,
    /// Fields the pool does not describe.
    unknown: i64,
    /// A key §5 may translate was added.
    translatable: bool,
    cx: EventContext,
    /// Reflecting again at the end of the file: the interned lookups made the first time
    /// (no lookup is made, no stat counted twice, no process touched twice).
    replay: Option<&'p Lookups>,
    /// The interned lookups made (first reflection).
    record: Lookups,
}

impl Reflector<'_, '_, '_> {
    fn add(&mut self, value: ArgValue) {
        let key = self.parser.sink.intern(&self.keys.key);
        let flat = if self.keys.flat == self.keys.key {
            key
        } else {
            self.parser.sink.intern(&self.keys.flat)
        };
        self.args.add(flat, key, value);
    }

    /// The fields of one message; `top` is TrackEvent itself (allowlist + extensions).
    fn message(&mut self, msg: usize, mut bytes: &[u8], top: bool, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let pool = self.pool;
        let desc = &pool.messages[msg];
        // Occurrences so far of each repeated field, for `[i]`.
        let mut seen: Vec<(u32, u32)> = Vec::new();
        let mut empty = true;
        while let Some((number, value)) = next_field(&mut bytes) {
            empty = false;
            let field = desc.fields.get(&number);
            if top {
                let allowed = REFLECTED_FIELDS.contains(&number)
                    || field.is_some_and(|f| f.is_extension)
                    || EXTENSIONS.contains(&number);
                if !allowed {
                    continue;
                }
            }
            let Some(field) = field else {
                self.unknown += 1;
                continue;
            };
            let next_index = |seen: &mut Vec<(u32, u32)>| -> Option<u32> {
                if !field.repeated {
                    return None;
                }
                match seen.iter_mut().find(|(n, _)| *n == number) {
                    Some((_, c)) => {
                        let i = *c;
                        *c += 1;
                        Some(i)
                    }
                    None => {
                        seen.push((number, 1));
                        Some(0)
                    }
                }
            };
            // Packed repeated scalars: a LEN where one value has another wire type.
            if let (Value::Len(mut packed), true) = (&value, field.kind.wire_type() != 2) {
                while !packed.is_empty() {
                    let v = match field.kind.wire_type() {
                        0 => schema::varint(&mut packed).map(Value::Varint),
                        1 => schema::take(&mut packed, 8)
                            .and_then(|b| b.try_into().ok())
                            .map(|b| Value::Fixed64(u64::from_le_bytes(b))),
                        _ => schema::take(&mut packed, 4)
                            .and_then(|b| b.try_into().ok())
                            .map(|b| Value::Fixed32(u32::from_le_bytes(b))),
                    };
                    let Some(v) = v else { break };
                    let index = next_index(&mut seen);
                    self.field(field, index, v, depth);
                }
                continue;
            }
            let index = next_index(&mut seen);
            self.field(field, index, value, depth);
        }
        if empty && !top {
            self.add(ArgValue::Null);
        }
    }

    fn field(
        &mut self,
        field: &super::descriptor_pool::FieldDesc,
        index: Option<u32>,
        value: Value<'_>,
        depth: usize,
    ) {
        let at = self.keys.push(&field.name, index);
        if self.override_field(&value) {
            self.keys.pop(at);
            return;
        }
        let v = match (field.kind, value) {
            (Kind::Message, Value::Len(b)) => {
                if let Some(target) = field.target {
                    self.message(target, b, false, depth + 1);
                }
                self.keys.pop(at);
                return;
            }
            (Kind::String, Value::Len(b)) => {
                let s = String::from_utf8_lossy(b);
                ArgValue::Str(self.parser.sink.intern(&s))
            }
            (Kind::Bytes, Value::Len(b)) => {
                ArgValue::Str(self.parser.sink.intern(&chrome::base64(b)))
            }
            (Kind::Enum, Value::Varint(v)) => {
                let n = v as i32;
                let name = field
                    .target
                    .and_then(|e| self.pool.enums.get(e))
                    .and_then(|e| e.values.get(&n));
                match name {
                    Some(name) => ArgValue::Str(self.parser.sink.intern(name)),
                    None => ArgValue::Str(self.parser.sink.intern(&n.to_string())),
                }
            }
            (Kind::Int32, Value::Varint(v)) => ArgValue::Int(i64::from(v as i32)),
            (Kind::Int64, Value::Varint(v)) => ArgValue::Int(v as i64),
            (Kind::Sint32 | Kind::Sint64, Value::Varint(v)) => ArgValue::Int(zigzag(v)),
            (Kind::Uint32 | Kind::Uint64, Value::Varint(v)) => ArgValue::Uint(v),
            (Kind::Bool, Value::Varint(v)) => ArgValue::Bool(v != 0),
            (Kind::Fixed64, Value::Fixed64(v)) => ArgValue::Uint(v),
            (Kind::Sfixed64, Value::Fixed64(v)) => ArgValue::Int(v as i64),
            (Kind::Double, Value::Fixed64(v)) => ArgValue::Real(f64::from_bits(v)),
            (Kind::Fixed32, Value::Fixed32(v)) => ArgValue::Uint(u64::from(v)),
            (Kind::Sfixed32, Value::Fixed32(v)) => ArgValue::Int(i64::from(v as i32)),
            (Kind::Float, Value::Fixed32(v)) => ArgValue::Real(f64::from(f32::from_bits(v))),
            // A wire type the field's type cannot have: not readable as that field.
            _ => {
                self.keys.pop(at);
                return;
            }
        };
        if matches!(
            self.keys.flat.as_str(),
            "chrome_histogram_sample.name_hash"
                | "chrome_user_event.action_hash"
                | "chrome_hashed_performance_mark.site_hash"
                | "chrome_hashed_performance_mark.mark_hash"
                | "chrome_trigger.name_hash"
                | "android_view_dump.activity.view.class_name"
        ) {
            self.translatable = true;
        }
        self.add(v);
        self.keys.pop(at);
    }

    /// Trace Processor's field overrides (matched on the flat key): interned source
    /// locations expanded into file/function/line, active pids creating their process.
    fn override_field(&mut self, value: &Value<'_>) -> bool {
        let flat = self.keys.flat.as_str();
        let location_prefix = match flat {
            "begin_impl_frame_args.current_args.source_location_iid"
            | "begin_impl_frame_args.last_args.source_location_iid"
            | "begin_frame_observer_state.last_begin_frame_args.source_location_iid" => {
                flat.strip_suffix(".source_location_iid")
            }
            "chrome_memory_pressure_notification.creation_location_iid" => {
                flat.strip_suffix(".creation_location_iid")
            }
            "chrome_mojo_event_info.mojo_interface_method_iid" => {
                let Value::Varint(iid) = value else {
                    return false;
                };
                let found = match self.replay {
                    Some(l) => l.native.iter().find(|(i, _)| i == iid).and_then(|e| e.1),
                    None => {
                        let found =
                            self.parser
                                .native_location(self.cx.machine, self.cx.seq_id, *iid);
                        self.record.native.push((*iid, found));
                        found
                    }
                };
                let Some((mapping, pc)) = found else {
                    return false;
                };
                for (k, v) in [
                    (
                        "chrome_mojo_event_info.mojo_interface_method.native_symbol.mapping_id",
                        mapping,
                    ),
                    (
                        "chrome_mojo_event_info.mojo_interface_method.native_symbol.rel_pc",
                        pc,
                    ),
                ] {
                    let key = self.parser.sink.intern_static(k);
                    self.args.add(key, key, ArgValue::Uint(v));
                }
                self.translatable = true;
                return true;
            }
            "active_processes.pid" => {
                if let (Value::Varint(v), None) = (value, self.replay) {
                    self.parser.touch_process(self.cx, i64::from(*v as i32));
                }
                return false;
            }
            _ => None,
        };
        let (Some(_), Value::Varint(iid)) = (location_prefix, value) else {
            return false;
        };
        let found = match self.replay {
            Some(l) => l.locations.iter().find(|(i, _)| i == iid).and_then(|e| e.1),
            None => {
                let found = self
                    .parser
                    .source_location(self.cx.machine, self.cx.seq_id, *iid);
                self.record.locations.push((*iid, found));
                if found.is_none() {
                    let machine = self.cx.machine;
                    self.parser
                        .sink
                        .stat("interned_data_tokenizer_errors", machine, 1);
                }
                found
            }
        };
        let Some((file, function, line)) = found else {
            return false;
        };
        // The key and flat key without their last component (the iid field's name).
        let prefix = self.keys.key[..prefix_len(&self.keys.key)].to_string();
        let flat_base = flat[..prefix_len(flat)].to_string();
        let file = match self.parser.sink.strings.get(file) {
            Some(f) => {
                let f = normalize_path(f).into_owned();
                self.parser.sink.intern(&f)
            }
            None => NULL_STR,
        };
        let mut values = vec![
            ("file_name", ArgValue::Str(file)),
            ("function_name", ArgValue::Str(function)),
        ];
        if let Some(line) = line {
            values.push(("line_number", ArgValue::Int(i64::from(line))));
        }
        for (name, v) in values {
            let key = self.parser.sink.intern(&format!("{prefix}.{name}"));
            let fk = self.parser.sink.intern(&format!("{flat_base}.{name}"));
            self.args.add(fk, key, v);
        }
        true
    }
}

/// A Mojo method's name and interface tag from its native symbol: `ns::Iface::Method` with
/// the `_Sym::IPCStableHash` suffix (and `()`) dropped, the tag its namespace and interface
/// joined by `.`; another symbol names both as it is.
fn mojo_names(symbol: &str) -> (String, String) {
    let s = symbol.strip_suffix("()").unwrap_or(symbol);
    match s.strip_suffix("_Sym::IPCStableHash") {
        Some(method) => {
            let parts: Vec<&str> = method.split("::").collect();
            let tag = parts[..parts.len().saturating_sub(1)].join(".");
            (method.to_string(), tag)
        }
        None => (s.to_string(), s.to_string()),
    }
}

/// Length of a key without its last component.
fn prefix_len(key: &str) -> usize {
    key.rfind('.').unwrap_or(0)
}
