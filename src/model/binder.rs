//! The binder tracker: binder transactions, replies and one-way calls as slices on the
//! threads' tracks (`binder transaction`, `binder reply`, `binder transaction async`,
//! `binder async rcv`) with their args and flows, reply matching, the per-thread
//! command/return state machine that closes failed transactions, and the binder global lock
//! (`binder lock waiting` / `binder lock held`). Fed by proto ftrace and systrace text alike
//! ([`EventData::Binder`]); hands on slices (through the slice tracker) and flow rows.
//!
//! Follows Trace Processor's `BinderTracker` (reference/behaviour-android.md §1).

use super::*;

/// A sent transaction waiting for its receive.
#[derive(Clone, Copy)]
struct Pending {
    reply: bool,
    oneway: bool,
    /// The slice the send made (or closed, for a reply).
    slice: Option<u32>,
    /// The sender's thread track.
    track: u32,
    /// The transaction args (copied onto a one-way receive).
    args: ArgsRef,
}

/// State of one frame of a thread's binder command/return state machine.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Snd1,
    Snd2,
    Snd3,
    Snd4,
    Rcv1,
    Rcv2,
    Rcv3,
    Rcv4,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    state: State,
    oneway: bool,
    reply: bool,
}

/// Binder driver command and return codes.
mod code {
    pub const BC_TRANSACTION: u32 = 0x4040_6300;
    pub const BC_REPLY: u32 = 0x4040_6301;
    pub const BC_TRANSACTION_SG: u32 = 0x4048_6311;
    pub const BC_REPLY_SG: u32 = 0x4048_6312;
    pub const BR_TRANSACTION: u32 = 0x8040_7202;
    pub const BR_TRANSACTION_SEC_CTX: u32 = 0x8048_7202;
    pub const BR_REPLY: u32 = 0x8040_7203;
    pub const BR_DEAD_REPLY: u32 = 0x7205;
    pub const BR_TRANSACTION_COMPLETE: u32 = 0x7206;
    pub const BR_FAILED_REPLY: u32 = 0x7211;
    pub const BR_FROZEN_REPLY: u32 = 0x7212;
    pub const BR_ONEWAY_SPAM_SUSPECT: u32 = 0x7213;
    pub const BR_TRANSACTION_PENDING_FROZEN: u32 = 0x7214;
}

/// What the binder tracker remembers between events.
#[derive(Default)]
pub(super) struct BinderState {
    pending: FxHashMap<(MachineId, i64), Pending>,
    /// Threads waiting for the global binder lock, and threads holding it.
    lock_waiting: FxHashMap<u32, ()>,
    lock_held: FxHashMap<u32, ()>,
    frames: FxHashMap<u32, Vec<Frame>>,
    strings: Option<Strings>,
}

/// The names and keys binder rows use, interned once.
#[derive(Clone, Copy)]
struct Strings {
    binder: StrId,
    transaction: StrId,
    reply: StrId,
    transaction_async: StrId,
    async_rcv: StrId,
    lock_waiting: StrId,
    lock_held: StrId,
}

/// The `flags` arg: the value in hex, then what each known bit means.
pub fn flags_text(flags: u32) -> String {
    if flags == 0 {
        return "0x00 No Flags Set".to_string();
    }
    let mut s = format!("0x{flags:02x} ");
    for (bit, text) in [
        (0x01, "this is a one-way call: async, no return; "),
        (0x04, "contents are the components root object; "),
        (0x08, "contents are a 32-bit status code; "),
        (0x10, "allow replies with file descriptors; "),
    ] {
        if flags & bit != 0 {
            s.push_str(text);
        }
    }
    s
}

impl<'s> Builder<'s> {
    fn binder_strings(&mut self) -> Strings {
        if let Some(s) = self.binder.strings {
            return s;
        }
        let s = Strings {
            binder: self.sink.intern("binder"),
            transaction: self.sink.intern("binder transaction"),
            reply: self.sink.intern("binder reply"),
            transaction_async: self.sink.intern("binder transaction async"),
            async_rcv: self.sink.intern("binder async rcv"),
            lock_waiting: self.sink.intern("binder lock waiting"),
            lock_held: self.sink.intern("binder lock held"),
        };
        self.binder.strings = Some(s);
        s
    }

    fn binder_slice(&self, category: StrId, name: StrId, args: ArgsRef) -> SliceEvent {
        SliceEvent {
            track: 0,
            category,
            name,
            args,
            thread_ts: NO_TS,
            flows: NO_FLOWS,
        }
    }

    /// The topmost open slice on `track` matching `category` and `name` (NULL matches
    /// anything), as Trace Processor's `AddArgs` finds it.
    pub(super) fn open_slice_matching(
        &self,
        track: u32,
        category: StrId,
        name: StrId,
    ) -> Option<u32> {
        let stack = self.stacks.get(track as usize)?;
        for e in stack.iter().rev() {
            if e.dur >= 0 {
                continue;
            }
            let row = self.live_slices.get(&e.slice)?;
            if category != NULL_STR && row.category != category {
                continue;
            }
            if name != NULL_STR && row.name != NULL_STR && row.name != name {
                continue;
            }
            return Some(e.slice);
        }
        None
    }

    /// Adds args to a slice still on its stack (same key: the new value wins).
    pub(super) fn add_slice_args(&mut self, slice: u32, args: &[Arg]) {
        let Some(current) = self.live_slices.get(&slice).map(|r| r.args) else {
            return;
        };
        let begin: Vec<Arg> = self.sink.args.get(current).to_vec();
        let merged = slice::merge_end_args(&begin, args, self.sink);
        let merged = self.sink.args.push(&merged);
        if let Some(row) = self.live_slices.get_mut(&slice) {
            row.args = merged;
        }
    }

    fn binder_flow(&mut self, out: Option<u32>, into: Option<u32>) {
        if let (Some(slice_out), Some(slice_in)) = (out, into) {
            self.tables.flows.push(FlowRow {
                slice_out,
                slice_in,
                trace_id: None,
                args: NO_ARGS,
            });
        }
    }

    fn thread_name_arg(&mut self, utid: u32) -> Option<Arg> {
        let name = self.tables.threads[utid as usize].name;
        (name != NULL_STR).then(|| {
            self.sink
                .static_arg("destination name", ArgValue::Str(name))
        })
    }

    pub(super) fn binder(&mut self, ts: i64, ev: &BinderEvent) {
        let s = self.binder_strings();
        let utid = self.thread(ThreadRef {
            machine: ev.machine,
            tid: ev.tid,
            pid: None,
        });
        let track = self.thread_slices_track(utid);
        self.note_ts(ts);
        match ev.op {
            BinderOp::Transaction {
                id,
                dest_node,
                dest_proc,
                dest_thread,
                reply,
                flags,
                code,
            } => {
                let oneway = flags & 0x01 != 0;
                let flags_str = self.sink.intern(&flags_text(flags));
                let txn_args = [
                    self.sink.static_arg("transaction id", ArgValue::Int(id)),
                    self.sink
                        .static_arg("destination node", ArgValue::Int(dest_node)),
                    self.sink
                        .static_arg("destination process", ArgValue::Int(dest_proc)),
                    self.sink
                        .static_arg("reply transaction?", ArgValue::Bool(reply)),
                    self.sink.static_arg("flags", ArgValue::Str(flags_str)),
                    self.sink.static_arg("code", ArgValue::Str(code)),
                    self.sink
                        .static_arg("calling tid", ArgValue::Uint(ev.tid as u64)),
                ];
                let args = self.sink.args.push(&txn_args);
                self.binder_frames_on_transaction(utid, oneway, reply);
                let slice = if reply {
                    // The reply's slice on this thread gets who it answers.
                    let dest = self.thread(ThreadRef {
                        machine: ev.machine,
                        tid: dest_thread,
                        pid: None,
                    });
                    if let Some(open) = self.open_slice_matching(track, s.binder, s.reply) {
                        let mut extra = vec![self
                            .sink
                            .static_arg("destination thread", ArgValue::Int(dest_thread))];
                        extra.extend(self.thread_name_arg(dest));
                        self.add_slice_args(open, &extra);
                    }
                    // Whatever is open on top ends here (Trace Processor's quirk).
                    let end = self.binder_slice(NULL_STR, NULL_STR, args);
                    self.end(track, ts, &end)
                } else if oneway {
                    let ev = self.binder_slice(s.binder, s.transaction_async, args);
                    self.complete(track, ts, 0, NO_TS, &ev, slice::Overlap::Drop)
                } else {
                    let ev = self.binder_slice(s.binder, s.transaction, args);
                    self.begin(track, ts, &ev)
                };
                self.binder.pending.insert(
                    (ev.machine, id),
                    Pending {
                        reply,
                        oneway,
                        slice,
                        track,
                        args,
                    },
                );
            }
            BinderOp::Received { id } => {
                let Some(p) = self.binder.pending.remove(&(ev.machine, id)) else {
                    return;
                };
                if p.reply {
                    if let Some(top) = self.binder.frames.get_mut(&utid).and_then(|f| f.last_mut())
                    {
                        if top.state == State::Snd3 {
                            top.state = State::Snd4;
                        }
                    }
                    let end = self.binder_slice(NULL_STR, NULL_STR, NO_ARGS);
                    self.end(track, ts, &end);
                } else if p.oneway {
                    let rcv = self.binder_slice(s.binder, s.async_rcv, p.args);
                    let rcv = self.complete(track, ts, 0, NO_TS, &rcv, slice::Overlap::Drop);
                    self.binder_flow(p.slice, rcv);
                } else {
                    self.binder.frames.entry(utid).or_default().push(Frame {
                        state: State::Rcv1,
                        oneway: false,
                        reply: false,
                    });
                    if let Some(open) = self.open_slice_matching(p.track, s.binder, s.transaction) {
                        let mut extra = vec![self
                            .sink
                            .static_arg("destination thread", ArgValue::Uint(ev.tid as u64))];
                        extra.extend(self.thread_name_arg(utid));
                        self.add_slice_args(open, &extra);
                    }
                    let reply = self.binder_slice(s.binder, s.reply, NO_ARGS);
                    let reply = self.begin(track, ts, &reply);
                    self.binder_flow(p.slice, reply);
                }
            }
            BinderOp::AllocBuf {
                data_size,
                offsets_size,
            } => {
                if let Some(open) = self.open_slice_matching(track, s.binder, s.transaction) {
                    let extra = [
                        self.sink.static_arg("data size", ArgValue::Uint(data_size)),
                        self.sink
                            .static_arg("offsets size", ArgValue::Uint(offsets_size)),
                    ];
                    self.add_slice_args(open, &extra);
                }
            }
            BinderOp::Command(cmd) => self.binder_command(utid, cmd),
            BinderOp::Return(cmd) => self.binder_return(ts, utid, track, cmd),
            BinderOp::Lock => {
                self.binder.lock_waiting.insert(utid, ());
                let ev = self.binder_slice(s.binder, s.lock_waiting, NO_ARGS);
                self.begin(track, ts, &ev);
            }
            BinderOp::Locked => {
                if self.binder.lock_waiting.remove(&utid).is_none() {
                    return;
                }
                let end = self.binder_slice(NULL_STR, NULL_STR, NO_ARGS);
                self.end(track, ts, &end);
                let held = self.binder_slice(s.binder, s.lock_held, NO_ARGS);
                self.begin(track, ts, &held);
                self.binder.lock_held.insert(utid, ());
            }
            BinderOp::Unlock => {
                if self.binder.lock_held.remove(&utid).is_none() {
                    return;
                }
                let end = self.binder_slice(s.binder, s.lock_held, NO_ARGS);
                self.end(track, ts, &end);
            }
        }
    }

    fn binder_frames_on_transaction(&mut self, utid: u32, oneway: bool, reply: bool) {
        let frames = self.binder.frames.entry(utid).or_default();
        match frames.last().map(|f| f.state) {
            Some(State::Snd1) => {
                if let Some(top) = frames.last_mut() {
                    *top = Frame {
                        state: State::Snd2,
                        oneway,
                        reply,
                    };
                }
            }
            Some(State::Rcv3) => {
                if let Some(top) = frames.last_mut() {
                    *top = Frame {
                        state: State::Rcv4,
                        oneway,
                        reply,
                    };
                }
            }
            Some(State::Rcv1) => {
                frames.pop();
            }
            _ => {}
        }
    }

    fn binder_command(&mut self, utid: u32, cmd: u32) {
        let frames = self.binder.frames.entry(utid).or_default();
        match cmd {
            code::BC_TRANSACTION | code::BC_TRANSACTION_SG => frames.push(Frame {
                state: State::Snd1,
                oneway: false,
                reply: false,
            }),
            code::BC_REPLY | code::BC_REPLY_SG => {
                if let Some(top) = frames.last_mut() {
                    if top.state == State::Rcv2 {
                        top.state = State::Rcv3;
                    }
                }
            }
            _ => {}
        }
    }

    fn binder_return(&mut self, ts: i64, utid: u32, track: u32, cmd: u32) {
        let frames = self.binder.frames.entry(utid).or_default();
        let Some(top) = frames.last().copied() else {
            return;
        };
        match cmd {
            code::BR_TRANSACTION_COMPLETE | code::BR_ONEWAY_SPAM_SUSPECT => match top.state {
                State::Rcv4 | State::Snd1 => {
                    frames.pop();
                }
                State::Snd2 if top.oneway => {
                    frames.pop();
                }
                State::Snd2 => {
                    if let Some(f) = frames.last_mut() {
                        f.state = State::Snd3;
                    }
                }
                _ => {}
            },
            code::BR_TRANSACTION | code::BR_TRANSACTION_SEC_CTX if top.state == State::Rcv1 => {
                if let Some(f) = frames.last_mut() {
                    f.state = State::Rcv2;
                }
            }
            code::BR_REPLY if top.state == State::Snd4 => {
                frames.pop();
            }
            code::BR_DEAD_REPLY
            | code::BR_FAILED_REPLY
            | code::BR_FROZEN_REPLY
            | code::BR_TRANSACTION_PENDING_FROZEN => match top.state {
                State::Snd1 => {
                    frames.pop();
                }
                State::Rcv3 | State::Snd2 | State::Rcv4 | State::Snd3 => {
                    frames.pop();
                    if !top.oneway && !top.reply {
                        let end = self.binder_slice(NULL_STR, NULL_STR, NO_ARGS);
                        self.end(track, ts, &end);
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_spelled_as_the_reference_does() {
        assert_eq!(flags_text(0), "0x00 No Flags Set");
        assert_eq!(
            flags_text(0x10),
            "0x10 allow replies with file descriptors; "
        );
        assert_eq!(
            flags_text(0x11),
            "0x11 this is a one-way call: async, no return; allow replies with file descriptors; "
        );
        assert_eq!(flags_text(0x40), "0x40 ");
    }
}
