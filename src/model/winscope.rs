//! Winscope tracker (Trace Processor's ShellTransitionsTracker and the winscope tables):
//! a shell transition is one row per transition id, created when its first packet comes
//! (ids in order of first packet); later packets of the id merge into it — each field
//! they carry replaces the row's, their args join the row's (a key repeated keeps its
//! first position and takes the later value). Every packet's proto is kept in
//! `window_manager_shell_transition_protos` and its targets in the participants table.
//! Handlers, SurfaceFlinger snapshots (with their layers), transactions and window manager
//! entries are rows in order. Hands on [`WinscopeTables`].

use super::*;
use crate::ir::{ShellTransitionRow, WinscopeRow};

/// The winscope rows, as the database writes them.
#[derive(Debug, Default)]
pub struct WinscopeTables {
    /// Merged transitions: (ts, the merged row).
    pub transitions: Vec<(i64, ShellTransitionRow)>,
    /// Row index by transition id.
    pub transition_index: FxHashMap<i64, usize>,
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
            let mut set = self.sink.args.get(row.args).to_vec();
            set.extend_from_slice(self.sink.args.get(t.args));
            row.args = self.sink.args.push(&set);
        }
    }
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
