//! One ftrace event handler for every source. The protobuf parser (events read through the
//! ftrace schema, the same args their raw `ftrace_event` rows get) and the systrace text
//! parser (`k=v` payloads) both hand it an event's name, its fields and where it ran; it
//! pushes the same events either way: binder transactions and locks, signals, workqueues,
//! kernel marker events (`zero`), cpu frequency and idle, frequency limits, clocks,
//! thermal zones and cooling devices, and the kernel slices and counters of
//! `ftrace_kernel.rs`.
//!
//! Text systrace only dispatches the events of Trace Processor's systrace line parser
//! (`reference/behaviour-systrace-events.md` §4); every other kind is ignored there, as the
//! reference ignores it.

use std::borrow::Cow;

use super::atrace::{self, clean_utf8};
use super::{ftrace_devices, ftrace_kernel, ftrace_memory};
use crate::ir::*;

/// Where an ftrace event ran and when.
#[derive(Clone, Copy)]
pub(crate) struct Origin {
    pub machine: MachineId,
    pub cpu: u32,
    /// The thread that ran it (the event's `pid`).
    pub pid: i64,
    pub ts: i64,
    pub clock: ClockRef,
    /// A systrace text line (rather than a protobuf event).
    pub text: bool,
}

impl Origin {
    pub(crate) fn thread(&self) -> ThreadRef {
        ThreadRef {
            machine: self.machine,
            tid: self.pid,
            pid: None,
        }
    }

    pub(crate) fn push(&self, sink: &mut Sink, data: EventData) {
        sink.push(self.ts, self.clock, data);
    }
}

/// An event's fields: typed args read from the protobuf, or a text line's `k=v` payload.
pub(crate) enum Fields<'a> {
    Proto(&'a [Arg]),
    Text(&'a [u8]),
}

/// The value of `key` in a space-separated `k=v` payload, as Trace Processor reads it: first
/// occurrence wins, the value is the text after the token's last `=` (empty `=` parts are
/// skipped), bare tokens are key `name`.
pub(crate) fn text_arg<'a>(args: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    for tok in args.split(|&b| b == b' ').filter(|t| !t.is_empty()) {
        if !tok.contains(&b'=') {
            if key == b"name" {
                return Some(tok);
            }
            continue;
        }
        let mut parts = tok.split(|&b| b == b'=').filter(|p| !p.is_empty());
        let Some(k) = parts.next() else {
            continue;
        };
        if k == key {
            return Some(parts.next_back().unwrap_or(&tok[..0]));
        }
    }
    None
}

fn parse_text<T: std::str::FromStr>(s: &[u8]) -> Option<T> {
    std::str::from_utf8(s).ok()?.parse().ok()
}

impl Fields<'_> {
    fn proto(&self, sink: &Sink, key: &str) -> Option<ArgValue> {
        match self {
            Fields::Proto(args) => args
                .iter()
                .find(|a| sink.strings.get(a.key) == Some(key))
                .map(|a| a.value),
            Fields::Text(_) => None,
        }
    }

    fn text(&self, key: &str) -> Option<&[u8]> {
        match self {
            Fields::Text(payload) => text_arg(payload, key.as_bytes()),
            Fields::Proto(_) => None,
        }
    }

    /// A signed integer field (text: decimal).
    pub(crate) fn int(&self, sink: &Sink, key: &str) -> Option<i64> {
        match self {
            Fields::Proto(_) => match self.proto(sink, key)? {
                ArgValue::Int(v) => Some(v),
                ArgValue::Uint(v) | ArgValue::Pointer(v) => Some(v as i64),
                ArgValue::Bool(b) => Some(i64::from(b)),
                _ => None,
            },
            Fields::Text(_) => parse_text(self.text(key)?),
        }
    }

    /// An unsigned integer field (text: decimal).
    pub(crate) fn uint(&self, sink: &Sink, key: &str) -> Option<u64> {
        match self {
            Fields::Proto(_) => self.int(sink, key).map(|v| v as u64),
            Fields::Text(_) => parse_text(self.text(key)?),
        }
    }

    /// A field the text writes in hex (`0x` optional).
    pub(crate) fn hex(&self, sink: &Sink, key: &str) -> Option<u64> {
        match self {
            Fields::Proto(_) => self.uint(sink, key),
            Fields::Text(_) => {
                let s = std::str::from_utf8(self.text(key)?).ok()?;
                let s = s
                    .strip_prefix("0x")
                    .or_else(|| s.strip_prefix("0X"))
                    .unwrap_or(s);
                u64::from_str_radix(s, 16).ok()
            }
        }
    }

    /// A field the text writes in decimal or, with `0x`, in hex.
    pub(crate) fn auto_radix(&self, sink: &Sink, key: &str) -> Option<u64> {
        match self {
            Fields::Proto(_) => self.uint(sink, key),
            Fields::Text(_) => {
                let s = std::str::from_utf8(self.text(key)?).ok()?;
                match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                    Some(h) => u64::from_str_radix(h, 16).ok(),
                    None => s.parse().ok(),
                }
            }
        }
    }

    pub(crate) fn real(&self, sink: &Sink, key: &str) -> Option<f64> {
        match self {
            Fields::Proto(_) => match self.proto(sink, key)? {
                ArgValue::Int(v) => Some(v as f64),
                ArgValue::Uint(v) => Some(v as f64),
                ArgValue::Real(v) => Some(v),
                _ => None,
            },
            Fields::Text(_) => parse_text(self.text(key)?),
        }
    }

    /// A string field (text: the token as written).
    pub(crate) fn string<'s>(&'s self, sink: &'s Sink, key: &str) -> Option<Cow<'s, str>> {
        match self {
            Fields::Proto(_) => match self.proto(sink, key)? {
                ArgValue::Str(id) => Some(Cow::Borrowed(sink.strings.get(id).unwrap_or(""))),
                _ => None,
            },
            Fields::Text(_) => Some(clean_utf8(self.text(key)?)),
        }
    }

    /// A string field, interned (NULL when absent).
    pub(crate) fn str_id(&self, sink: &mut Sink, key: &str) -> Option<StrId> {
        match self {
            Fields::Proto(_) => match self.proto(sink, key)? {
                ArgValue::Str(id) => Some(id),
                _ => None,
            },
            Fields::Text(_) => {
                let s = clean_utf8(self.text(key)?).into_owned();
                Some(sink.intern(&s))
            }
        }
    }
}

/// Events the systrace line parser dispatches (besides the sched and marker events the
/// text parser reads itself).
fn text_handles(name: &str) -> bool {
    matches!(
        name,
        "cpu_frequency"
            | "cpu_idle"
            | "cpu_frequency_limits"
            | "clock_set_rate"
            | "clock_enable"
            | "clock_disable"
            | "thermal_temperature"
            | "cdev_update"
            | "workqueue_execute_start"
            | "workqueue_execute_end"
            | "rss_stat"
            | "binder_transaction"
            | "binder_transaction_received"
            | "binder_transaction_alloc_buf"
            | "binder_command"
            | "binder_return"
            | "binder_lock"
            | "binder_locked"
            | "binder_unlock"
    )
}

/// Handles one ftrace event. `symbol` names an interned kernel symbol (protobuf only).
/// Returns whether the event's kind is one it reads.
pub(crate) fn handle(
    sink: &mut Sink,
    o: &Origin,
    name: &str,
    f: &Fields,
    symbol: &dyn Fn(u64) -> Option<StrId>,
) -> bool {
    if o.text && !text_handles(name) {
        return false;
    }
    // Missing or malformed fields make the handler give up on the event silently, as the
    // reference's handlers do.
    let handled = match name {
        "binder_transaction"
        | "binder_transaction_received"
        | "binder_transaction_alloc_buf"
        | "binder_command"
        | "binder_return"
        | "binder_lock"
        | "binder_locked"
        | "binder_unlock" => binder(sink, o, name, f),
        "signal_generate" | "signal_deliver" => signal(sink, o, name, f),
        "workqueue_execute_start" => workqueue_start(sink, o, f, symbol),
        "workqueue_execute_end" => {
            let category = sink.intern("workqueue");
            let track = sink.track(TrackKey::ThreadSlices(o.thread()));
            o.push(
                sink,
                EventData::End(slice(track, category, NULL_STR, NO_ARGS)),
            );
            Some(())
        }
        "zero" => zero(sink, o, f),
        "cpu_frequency" | "cpu_idle" => cpu_counter(sink, o, name, f),
        "cpu_frequency_limits" => cpu_frequency_limits(sink, o, f),
        "clock_set_rate" | "clock_enable" | "clock_disable" => clock(sink, o, name, f),
        "thermal_temperature" => thermal(sink, o, f),
        "cdev_update" => cdev_update(sink, o, f),
        "mm_shrink_slab_start" | "mm_shrink_slab_end" => {
            ftrace_memory::shrink_slab(sink, o, name, f, symbol)
        }
        _ => {
            return ftrace_memory::handle(sink, o, name, f)
                || ftrace_devices::handle(sink, o, name, f, symbol)
                || ftrace_kernel::handle(sink, o, name, f);
        }
    };
    let _ = handled;
    true
}

pub(crate) fn slice(track: TrackRef, category: StrId, name: StrId, args: ArgsRef) -> SliceEvent {
    SliceEvent {
        track,
        category,
        name,
        args,
        thread_ts: NO_TS,
        flows: NO_FLOWS,
    }
}

pub(crate) fn instant(sink: &mut Sink, o: &Origin, track: TrackRef, s: SliceEvent) {
    let _ = track;
    o.push(
        sink,
        EventData::Complete {
            slice: s,
            dur: 0,
            thread_dur: NO_TS,
        },
    );
}

pub(crate) fn counter(sink: &mut Sink, o: &Origin, key: TrackKey, value: f64) {
    let track = sink.track(key);
    o.push(
        sink,
        EventData::Counter {
            track,
            value: Real(value),
            args: NO_ARGS,
        },
    );
}

pub(crate) fn global_counter(sink: &mut Sink, o: &Origin, name: StrId, kind: &'static str, v: f64) {
    let key = TrackKey::GlobalCounter {
        machine: o.machine,
        name,
        kind,
    };
    counter(sink, o, key, v);
}

fn thermal(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let zone = f.string(sink, "thermal_zone")?.into_owned();
    let name = format!("{zone} Temperature");
    let zone = sink.intern(&zone);
    let dims = [("thermal_zone", ArgValue::Str(zone))];
    let bp = Blueprint {
        dims: &dims,
        ..Blueprint::counter("thermal_temperature", &name)
    };
    // The track exists even when the temperature does not parse.
    let Some(temp) = f.int(sink, "temp") else {
        let track = bp.track(sink, o.machine);
        o.push(sink, EventData::EnsureTrack(track));
        return None;
    };
    bp.counter_at(sink, o, temp as f64, NO_ARGS);
    Some(())
}

fn cdev_update(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let ty = f.string(sink, "type")?.into_owned();
    let target = f.real(sink, "target")?;
    let name = format!("{ty} Cooling Device");
    let dims = [("linux_device", ArgValue::Str(sink.intern(&ty)))];
    let bp = Blueprint {
        dims: &dims,
        ..Blueprint::counter("cooling_device_counter", &name)
    };
    bp.counter_at(sink, o, target, NO_ARGS);
    Some(())
}

fn binder(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let op = match name {
        "binder_transaction" => {
            let (id, dest_node, dest_proc, dest_thread) = match f {
                Fields::Proto(_) => (
                    f.int(sink, "debug_id").unwrap_or(0),
                    f.int(sink, "target_node").unwrap_or(0),
                    f.int(sink, "to_proc").unwrap_or(0),
                    f.int(sink, "to_thread").unwrap_or(0),
                ),
                Fields::Text(_) => (
                    f.int(sink, "transaction")?,
                    f.int(sink, "dest_node")?,
                    f.int(sink, "dest_proc")?,
                    f.int(sink, "dest_thread")?,
                ),
            };
            let reply = match f {
                Fields::Proto(_) => f.int(sink, "reply").unwrap_or(0) == 1,
                Fields::Text(_) => f.int(sink, "reply")? == 1,
            };
            let flags = f.hex(sink, "flags").unwrap_or(0) as u32;
            let code = match f {
                Fields::Proto(_) => format!(
                    "0x{:02x} Java Layer Dependent",
                    f.uint(sink, "code").unwrap_or(0)
                ),
                Fields::Text(_) => format!(
                    "{} Java Layer Dependent",
                    f.string(sink, "code").unwrap_or_default()
                ),
            };
            BinderOp::Transaction {
                id,
                dest_node,
                dest_proc,
                dest_thread,
                reply,
                flags,
                code: sink.intern(&code),
            }
        }
        "binder_transaction_received" => BinderOp::Received {
            id: match f {
                Fields::Proto(_) => f.int(sink, "debug_id").unwrap_or(0),
                Fields::Text(_) => f.int(sink, "transaction")?,
            },
        },
        "binder_transaction_alloc_buf" => BinderOp::AllocBuf {
            data_size: f.uint(sink, "data_size")?,
            offsets_size: f.uint(sink, "offsets_size")?,
        },
        "binder_command" => BinderOp::Command(f.auto_radix(sink, "cmd")? as u32),
        "binder_return" => BinderOp::Return(f.auto_radix(sink, "cmd")? as u32),
        "binder_lock" => BinderOp::Lock,
        "binder_locked" => BinderOp::Locked,
        _ => BinderOp::Unlock,
    };
    let ev = BinderEvent {
        machine: o.machine,
        tid: o.pid,
        op,
    };
    o.push(sink, EventData::Binder(Box::new(ev)));
    Some(())
}

/// `signal_generate` (on the target thread) / `signal_deliver` (on the event's thread):
/// an instant with the signal number.
fn signal(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let thread = if name == "signal_generate" {
        ThreadRef {
            machine: o.machine,
            tid: f.int(sink, "pid").unwrap_or(0),
            pid: None,
        }
    } else {
        o.thread()
    };
    let sig = f.int(sink, "sig").unwrap_or(0);
    let arg = sink.static_arg("signal.sig", ArgValue::Int(sig));
    let args = sink.args.push(&[arg]);
    let track = sink.track(TrackKey::ThreadSlices(thread));
    let name = sink.intern(name);
    instant(sink, o, track, slice(track, NULL_STR, name, args));
    Some(())
}

fn workqueue_start(
    sink: &mut Sink,
    o: &Origin,
    f: &Fields,
    symbol: &dyn Fn(u64) -> Option<StrId>,
) -> Option<()> {
    let name = match f {
        Fields::Text(payload) => {
            const FUNCTION: &[u8] = b"function ";
            let at = find(payload, FUNCTION)?;
            let func = &payload[at + FUNCTION.len()..];
            // A second "function " would end the name, as in the reference.
            let func = &func[..find(func, FUNCTION).unwrap_or(func.len())];
            let func = clean_utf8(func).into_owned();
            sink.intern(&func)
        }
        Fields::Proto(_) => {
            let function = f.uint(sink, "function").unwrap_or(0);
            match symbol(function) {
                Some(s) => s,
                None => sink.intern(&format!("{function:#x}")),
            }
        }
    };
    let category = sink.intern("workqueue");
    let track = sink.track(TrackKey::ThreadSlices(o.thread()));
    o.push(
        sink,
        EventData::Begin(slice(track, category, name, NO_ARGS)),
    );
    Some(())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `zero`: a kernel marker with the atrace fields apart (flag bit 0 B, bit 1 E, bit 2 C; none
/// of them → `systrace_parse_failure`).
fn zero(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let flag = f.int(sink, "flag").unwrap_or(0);
    let tgid = f.int(sink, "pid").unwrap_or(0);
    let name = f.string(sink, "name").unwrap_or_default().into_owned();
    let value = f.int(sink, "value").unwrap_or(0);
    let text = if flag & 0x01 != 0 {
        format!("B|{tgid}|{name}")
    } else if flag & 0x02 != 0 {
        format!("E|{tgid}")
    } else if flag & 0x04 != 0 {
        format!("C|{tgid}|{name}|{value}")
    } else {
        // No phase bit: the reference counts it (ParseZeroEvent).
        sink.stat("systrace_parse_failure", o.machine, 1);
        return Some(());
    };
    atrace::parse_marker(sink, o.clock, o.ts, o.machine, o.pid, text.as_bytes());
    Some(())
}

fn cpu_counter(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let cpu = u32::try_from(f.uint(sink, "cpu_id")?).ok()?;
    let value = f.real(sink, "state")?;
    let (track_name, kind) = if name == "cpu_frequency" {
        ("cpufreq", "cpu_frequency")
    } else {
        ("cpuidle", "cpu_idle")
    };
    let name = sink.intern(track_name);
    let key = TrackKey::CpuCounter {
        machine: o.machine,
        cpu,
        name,
        kind,
    };
    counter(sink, o, key, value);
    Some(())
}

fn cpu_frequency_limits(sink: &mut Sink, o: &Origin, f: &Fields) -> Option<()> {
    let cpu = u32::try_from(f.uint(sink, "cpu_id")?).ok()?;
    let max = f.real(sink, "max").or_else(|| f.real(sink, "max_freq"));
    let min = f.real(sink, "min").or_else(|| f.real(sink, "min_freq"));
    for (label, kind, value) in [
        ("Max", "cpu_max_frequency_limit", max),
        ("Min", "cpu_min_frequency_limit", min),
    ] {
        let Some(value) = value else {
            continue;
        };
        let name = sink.intern(&format!("Cpu {cpu} {label} Freq Limit"));
        let key = TrackKey::CpuCounter {
            machine: o.machine,
            cpu,
            name,
            kind,
        };
        counter(sink, o, key, value);
    }
    Some(())
}

fn clock(sink: &mut Sink, o: &Origin, name: &str, f: &Fields) -> Option<()> {
    let value = match f {
        Fields::Text(_) => f64::from(u32::try_from(f.uint(sink, "state")?).ok()?),
        Fields::Proto(_) => f.uint(sink, "state").unwrap_or(0) as f64,
    };
    let clk = f.string(sink, "name").unwrap_or_default().into_owned();
    let (suffix, kind) = if name == "clock_set_rate" {
        ("Frequency", "clock_frequency")
    } else {
        ("State", "clock_state")
    };
    let name = format!("{clk} {suffix}");
    let dims = [("linux_device", ArgValue::Str(sink.intern(&clk)))];
    let bp = Blueprint {
        dims: &dims,
        ..Blueprint::counter(kind, &name)
    };
    bp.counter_at(sink, o, value, NO_ARGS);
    Some(())
}

/// A track as one of Trace Processor's blueprints describes it: its type, name, scope,
/// dimensions (after the scope's), unit, and whether it holds slices or counters.
pub(crate) struct Blueprint<'a> {
    pub kind: &'static str,
    pub name: &'a str,
    pub scope: ProbeScope,
    pub dims: &'a [(&'static str, ArgValue)],
    pub unit: Option<&'a str>,
    pub slices: bool,
}

impl<'a> Blueprint<'a> {
    /// A machine-wide counter track with no dimensions.
    pub(crate) fn counter(kind: &'static str, name: &'a str) -> Self {
        Blueprint {
            kind,
            name,
            scope: ProbeScope::Global,
            dims: &[],
            unit: None,
            slices: false,
        }
    }

    /// The track (one per distinct description).
    pub(crate) fn track(&self, sink: &mut Sink, machine: MachineId) -> TrackRef {
        let dims: Vec<Arg> = self
            .dims
            .iter()
            .map(|&(k, v)| sink.static_arg(k, v))
            .collect();
        let track = ProbeTrack {
            machine,
            kind: self.kind,
            name: sink.intern(self.name),
            scope: self.scope,
            dims: sink.args.push_shared(&dims),
            unit: sink.intern_opt(self.unit),
            description: NULL_STR,
            source_args: NO_ARGS,
            slices: self.slices,
        };
        let id = sink.probe_tracks.intern(track);
        sink.track(TrackKey::Probe(id))
    }

    /// A counter on this track.
    pub(crate) fn counter_at(&self, sink: &mut Sink, o: &Origin, value: f64, args: ArgsRef) {
        let track = self.track(sink, o.machine);
        o.push(
            sink,
            EventData::Counter {
                track,
                value: Real(value),
                args,
            },
        );
    }
}

/// A thread's slice track (the shared `thread_execution` track).
pub(crate) fn thread_track(sink: &mut Sink, machine: MachineId, tid: i64) -> TrackRef {
    sink.track(TrackKey::ThreadSlices(ThreadRef {
        machine,
        tid,
        pid: None,
    }))
}

/// An arg set from static keys.
pub(crate) fn arg_set(sink: &mut Sink, args: &[(&'static str, ArgValue)]) -> ArgsRef {
    let set: Vec<Arg> = args.iter().map(|&(k, v)| sink.static_arg(k, v)).collect();
    sink.args.push(&set)
}

/// A global async set (Trace Processor's track compressor) of a type and name.
pub(crate) fn global_set(
    sink: &mut Sink,
    machine: MachineId,
    kind: &'static str,
    name: &str,
) -> AsyncSet {
    AsyncSet {
        kind,
        machine,
        process: None,
        name: sink.intern(name),
        scope: NULL_STR,
    }
}

/// Begins (with a name) or ends a slice on a compressor set's track for a cookie.
pub(crate) fn cookie_slice(
    sink: &mut Sink,
    o: &Origin,
    set: AsyncSet,
    cookie: u64,
    name: Option<StrId>,
    args: ArgsRef,
) {
    let track = sink.track(TrackKey::AsyncCookie { set, cookie });
    match name {
        Some(name) => o.push(sink, EventData::Begin(slice(track, NULL_STR, name, args))),
        None => o.push(sink, EventData::End(slice(track, NULL_STR, NULL_STR, args))),
    }
}

/// A kernel event the model interprets in time order.
pub(crate) fn kernel_op(sink: &mut Sink, o: &Origin, op: KernelOp) {
    let ev = KernelEvent {
        machine: o.machine,
        tid: o.pid,
        op,
    };
    o.push(sink, EventData::Kernel(Box::new(ev)));
}

/// The machine's kernel version (major, minor) from its SystemInfo, when known.
pub(crate) fn kernel_version(sink: &Sink, machine: MachineId) -> Option<(u32, u32)> {
    let release = sink.machines.get(&machine)?.release.as_deref()?;
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    Some((major, minor))
}
