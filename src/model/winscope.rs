//! Winscope tracker (Trace Processor's ShellTransitionsTracker and the winscope tables):
//! a shell transition is one row per transition id, created when its first packet comes
//! (ids in order of first packet); later packets of the id merge into it — each field
//! they carry replaces the row's, their args join the row's (a key repeated keeps its
//! first position and takes the later value). Every packet's proto is kept in
//! `window_manager_shell_transition_protos` and its targets in the participants table.
//! Handlers, SurfaceFlinger snapshots (with their layers), transactions and window manager
//! entries are rows in order. Hands on [`WinscopeTables`].

use super::*;
use crate::ir::{ProtoLogRow, ShellTransitionRow, WinscopeRow};

/// The winscope rows, as the database writes them.
#[derive(Debug, Default)]
pub struct WinscopeTables {
    /// Merged transitions: (ts, the merged row).
    pub transitions: Vec<(i64, ShellTransitionRow)>,
    /// Row index by transition id.
    pub transition_index: FxHashMap<i64, usize>,
    /// (row index, args) of a transition's later packets, joined at the end of the trace.
    pub transition_more_args: Vec<(usize, ArgsRef)>,
    /// (transition_id, base64 proto) per packet.
    pub transition_protos: Vec<(i64, StrId)>,
    /// (transition_id, layer_id, window_id) per target.
    pub participants: Vec<(i64, Option<i64>, Option<i64>)>,
    /// (handler_id, name, base64 proto).
    pub handlers: Vec<(i64, StrId, StrId)>,
    /// SurfaceFlinger snapshots: (ts, args, base64).
    pub sf_snapshots: Vec<(i64, ArgsRef, StrId)>,
    /// SurfaceFlinger layers: (snapshot id, args, base64).
    pub sf_layers: Vec<(i64, ArgsRef, StrId)>,
    /// SurfaceFlinger transactions: (ts, args, base64, vsync_id).
    pub sf_transactions: Vec<(i64, ArgsRef, StrId, Option<i64>)>,
    /// Window manager, input method clients, service, manager service and view capture
    /// entries (in
    /// [`WinscopeEntryKind`] order): (ts, args, base64).
    pub entries: [Vec<(i64, ArgsRef, StrId)>; 5],
    /// ProtoLog messages waiting for the end of the trace: (ts, parameters).
    pub protolog_pending: Vec<(i64, ProtoLogRow)>,
    /// Viewer configs: message formats (format, level, group id, location) by message id,
    /// group tags by group id.
    pub protolog_formats: FxHashMap<u64, (StrId, i64, u32, StrId)>,
    pub protolog_groups: FxHashMap<u32, StrId>,
    /// `protolog` rows: (ts, level, tag, message, stacktrace, location).
    pub protolog: Vec<(i64, StrId, StrId, StrId, StrId, StrId)>,
}

impl Builder<'_> {
    pub(super) fn winscope(&mut self, ts: i64, row: &WinscopeRow) {
        match row {
            WinscopeRow::ShellTransition(t) => self.shell_transition(t),
            WinscopeRow::ShellHandler {
                handler_id,
                name,
                base64,
            } => self
                .tables
                .winscope
                .handlers
                .push((*handler_id, *name, *base64)),
            WinscopeRow::LayersSnapshot {
                args,
                base64,
                layers,
            } => {
                let w = &mut self.tables.winscope;
                let snapshot = w.sf_snapshots.len() as i64;
                w.sf_snapshots.push((ts, *args, *base64));
                for &(args, base64) in layers {
                    w.sf_layers.push((snapshot, args, base64));
                }
            }
            WinscopeRow::Transactions {
                args,
                base64,
                vsync_id,
            } => self
                .tables
                .winscope
                .sf_transactions
                .push((ts, *args, *base64, *vsync_id)),
            WinscopeRow::ProtoLog(p) => self.tables.winscope.protolog_pending.push((ts, p.clone())),
            WinscopeRow::ProtoLogConfig { messages, groups } => {
                let w = &mut self.tables.winscope;
                for &(id, format, level, group, location) in messages {
                    w.protolog_formats
                        .entry(id)
                        .or_insert((format, level, group, location));
                }
                for &(id, tag) in groups {
                    w.protolog_groups.entry(id).or_insert(tag);
                }
            }
            WinscopeRow::Entry { kind, args, base64 } => {
                self.tables.winscope.entries[*kind as usize].push((ts, *args, *base64))
            }
        }
    }

    fn shell_transition(&mut self, t: &ShellTransitionRow) {
        let id = t.transition_id;
        let w = &mut self.tables.winscope;
        w.transition_protos.push((id, t.base64));
        for &(layer, window) in &t.participants {
            w.participants.push((id, layer, window));
        }
        let Some(&index) = w.transition_index.get(&id) else {
            w.transition_index.insert(id, w.transitions.len());
            let mut row = t.clone();
            row.participants.clear();
            w.transitions.push((t.dispatch_time.unwrap_or(0), row));
            return;
        };
        let (ts, row) = &mut w.transitions[index];
        if let Some(dispatch) = t.dispatch_time {
            *ts = dispatch;
        }
        macro_rules! take {
            ($($f:ident),*) => { $( if t.$f.is_some() { row.$f = t.$f; } )* };
        }
        take!(
            transition_type,
            send_time,
            dispatch_time,
            finish_time,
            merge_time,
            shell_abort_time,
            wm_abort_time,
            handler,
            flags,
            start_transaction_id,
            finish_transaction_id
        );
        if t.args != NO_ARGS {
            w.transition_more_args.push((index, t.args));
        }
    }
}

impl Builder<'_> {
    /// End of trace: each transition's args joined with those of its later packets, once
    /// (merging at every packet would copy the growing set each time).
    pub(super) fn finish_transitions(&mut self) {
        let mut more = std::mem::take(&mut self.tables.winscope.transition_more_args);
        more.sort_by_key(|&(index, _)| index);
        let mut i = 0;
        while i < more.len() {
            let index = more[i].0;
            let row = &mut self.tables.winscope.transitions[index].1;
            let mut set = self.sink.args.get(row.args).to_vec();
            while i < more.len() && more[i].0 == index {
                set.extend_from_slice(self.sink.args.get(more[i].1));
                i += 1;
            }
            row.args = self.sink.args.push(&set);
        }
    }
}

impl Builder<'_> {
    /// End of trace: each ProtoLog message formatted with its viewer config's format
    /// (`%d %o %x` integers, `%f %e %g` doubles, `%s` strings, `%b` booleans, `%%`); a
    /// message no config describes keeps only its time and stacktrace and is counted in
    /// `winscope_protolog_message_decoding_failed`.
    pub(super) fn finish_protolog(&mut self) {
        let pending = std::mem::take(&mut self.tables.winscope.protolog_pending);
        for (ts, p) in pending {
            let w = &self.tables.winscope;
            let Some(&(format, level, group, location)) = w.protolog_formats.get(&p.message_id)
            else {
                self.stat("winscope_protolog_message_decoding_failed", 0);
                let row = (ts, NULL_STR, NULL_STR, NULL_STR, p.stacktrace, NULL_STR);
                self.tables.winscope.protolog.push(row);
                continue;
            };
            let tag = w.protolog_groups.get(&group).copied().unwrap_or(NULL_STR);
            let format = self
                .sink
                .strings
                .get(format)
                .unwrap_or_default()
                .to_string();
            let (message, mismatch) = format_protolog(&format, &p, |id| {
                self.sink.strings.get(id).unwrap_or_default().to_string()
            });
            if mismatch {
                self.stat("winscope_protolog_param_mismatch", 0);
            }
            let level = match level {
                1 => "DEBUG",
                2 => "VERBOSE",
                3 => "INFO",
                4 => "WARN",
                5 => "ERROR",
                6 => "WTF",
                _ => "UNDEFINED",
            };
            let level = self.sink.intern(level);
            let message = self.sink.intern(&message);
            self.tables
                .winscope
                .protolog
                .push((ts, level, tag, message, p.stacktrace, location));
        }
    }
}

/// C's spelling of a value `{}` would print otherwise: `nan`, `inf`, `-inf`.
fn c_nonfinite(v: f64) -> Option<String> {
    if v.is_nan() {
        Some("nan".into())
    } else if v.is_infinite() {
        Some(if v > 0.0 { "inf" } else { "-inf" }.into())
    } else {
        None
    }
}

/// C's `%f` (six decimals).
fn c_fixed(v: f64) -> String {
    c_nonfinite(v).unwrap_or_else(|| format!("{v:.6}"))
}

/// C's `%e` (`precision` decimals, exponent of at least two digits).
fn c_exp(v: f64, precision: usize) -> String {
    if let Some(s) = c_nonfinite(v) {
        return s;
    }
    let s = format!("{v:.precision$e}");
    match s.split_once('e') {
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// C's `%g`: six significant digits, trailing zeros dropped; the style is chosen by the
/// exponent *after* rounding to six digits, as C does (999999.5 is `1e+06`).
fn c_general(v: f64) -> String {
    if let Some(s) = c_nonfinite(v) {
        return s;
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let strip = |s: &str| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    let rounded = format!("{v:.5e}");
    let exp: i32 = rounded
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    if (-4..6).contains(&exp) {
        let decimals = (5 - exp) as usize;
        strip(&format!("{v:.decimals$}"))
    } else {
        let s = c_exp(v, 5);
        match s.split_once('e') {
            Some((m, e)) => format!("{}e{e}", strip(m)),
            None => s,
        }
    }
}

/// Formats a ProtoLog message; whether a parameter was missing.
fn format_protolog(
    format: &str,
    p: &ProtoLogRow,
    string: impl Fn(StrId) -> String,
) -> (String, bool) {
    let mut out = String::with_capacity(format.len());
    let (mut ints, mut doubles, mut bools, mut strings) = (
        p.ints.iter(),
        p.doubles.iter().map(|&b| f64::from_bits(b)),
        p.bools.iter(),
        p.strings.iter(),
    );
    let mut mismatch = false;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(&spec) = chars.peek() else {
            out.push('%');
            break;
        };
        let text = match spec {
            '%' => Some("%".to_string()),
            'd' => ints.next().map(|v| v.to_string()),
            'o' => ints.next().map(|v| format!("{v:o}")),
            'x' => ints.next().map(|v| format!("{v:x}")),
            'f' => doubles.next().map(c_fixed),
            'e' => doubles.next().map(|v| c_exp(v, 6)),
            'g' => doubles.next().map(c_general),
            's' => strings.next().map(|&s| string(s)),
            'b' => bools.next().map(|b| b.to_string()),
            _ => {
                out.push('%');
                continue;
            }
        };
        chars.next();
        match text {
            Some(t) => out.push_str(&t),
            None => mismatch = true,
        }
    }
    (out, mismatch)
}

impl ShellTransitionRow {
    /// `status`: aborted (by shell or window manager), else merged, else played (finished).
    pub fn status(&self) -> Option<&'static str> {
        if self.shell_abort_time.is_some() || self.wm_abort_time.is_some() {
            Some("aborted")
        } else if self.merge_time.is_some() {
            Some("merged")
        } else if self.finish_time.is_some() {
            Some("played")
        } else {
            None
        }
    }

    /// `duration_ns`: finish time less send time, when both are known.
    pub fn duration(&self) -> Option<i64> {
        Some(self.finish_time?.wrapping_sub(self.send_time?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `%g`, `%e` and `%f` print as C's printf does, at the rounding edges too.
    #[test]
    fn doubles_print_as_c_prints_them() {
        for (v, want) in [
            (999999.5, "1e+06"),
            (9.999996e-5, "0.0001"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.5, "0.5"),
            (-2.0, "-2"),
            (100.0, "100"),
        ] {
            assert_eq!(c_general(v), want, "{v}");
        }
        assert_eq!(c_general(f64::NAN), "nan");
        assert_eq!(c_general(f64::NEG_INFINITY), "-inf");
        assert_eq!(c_exp(1234.5, 6), "1.234500e+03");
        assert_eq!(c_fixed(f64::INFINITY), "inf");
        assert_eq!(c_fixed(1.5), "1.500000");
    }
}
