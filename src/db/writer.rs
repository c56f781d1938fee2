//! The import side of the bulk load: turns the model's rows into batches for the writer
//! thread ([`super::bulk`]), which owns the connection. The big tables stream in as the
//! model produces them ([`RowSink`]); arg sets are numbered and deduplicated here, so every
//! row carries its final `arg_set_id` when it is sent; the tables written whole (machines,
//! processes, threads, tracks at each checkpoint; the rest at the end) are built by
//! [`super::whole`] into the same batches.
//!
//! Nothing here holds a lock: rows leave by message only, so a full channel means the writer
//! is busy, never that it waits for this thread.

use std::collections::VecDeque;

use rusqlite::Connection;

use super::bulk::{Message, Pipe, Rows, Table, ALL, TABLES};
use super::{DbError, ImportFacts};
use crate::ir::{Arg, ArgValue, ArgsRef, Sink, StrId, NO_ARGS, NO_FILE, NO_TS};
use crate::model::{
    CounterRow, FtraceEventRow, RowSink, SchedRow, SliceRow, Tables, ThreadStateRow,
};

/// Slices that ended before an earlier-begun one wait for it at most this many ids, so
/// rows reach SQLite in id order (appending is its cheapest insert).
pub(super) const REORDER_WINDOW: usize = 1 << 16;

/// Writes rows of the bulk load: the big tables as the model streams them ([`RowSink`]),
/// handed in batches to the writer thread; the small ones at checkpoints and at the end.
pub struct TableWriter<'t> {
    pipe: Pipe,
    live: bool,
    /// The batch being filled, per table ([`Table::index`]).
    batches: Vec<Rows>,
    /// Slices ended, waiting for the ones before them: `waiting[i]` is slice `next_slice + i`.
    waiting: VecDeque<Option<(SliceRow, Option<i64>)>>,
    next_slice: u32,
    /// Per track, the file its first written slice came from (`NO_FILE` before any).
    pub(super) track_files: Vec<u32>,
    /// Each file's `__intrinsic_trace_file` id (`trace_id`, `file_id`), by the import's
    /// file index (processing order).
    file_ids: Vec<u32>,
    /// The first error while streaming (the model cannot take errors mid-event).
    error: Option<DbError>,
    rows: u64,
    tick: &'t mut dyn FnMut(u64) -> bool,
    next_arg_row: i64,
    /// Identical arg sets share one id.
    /// Keyed by values from the trace: SipHash, so a crafted file cannot flood it.
    /// Arg sets written, by a 128-bit digest of their content (as Trace Processor's
    /// GlobalArgsTracker keys them by hash); bounded, see [`DEDUP_LIMIT`].
    sets_by_content: DigestIds,
    /// The id written for each parser arg set, by `ArgsRef` (see [`SetIds`]).
    sets_by_ref: SetIds,
    /// The display value of the arg being written (one buffer, not one String per arg).
    display: String,
}

impl RowSink for TableWriter<'_> {
    fn slice(&mut self, id: u32, s: &SliceRow, sink: &Sink) {
        self.stream(|w| w.write_slice(id, s, sink));
    }
    fn counter(&mut self, id: u32, c: &CounterRow, sink: &Sink) {
        self.stream(|w| w.write_counter(id, c, sink));
    }
    fn sched(&mut self, id: u32, s: &SchedRow, sink: &Sink) {
        self.stream(|w| w.write_sched(id, s, sink));
    }
    fn thread_state(&mut self, id: u32, s: &ThreadStateRow, sink: &Sink) {
        self.stream(|w| w.write_thread_state(id, s, sink));
    }
    fn ftrace_event(&mut self, id: u32, e: &FtraceEventRow, sink: &Sink) {
        self.stream(|w| w.write_ftrace_event(id, e, sink));
    }
    fn profile(&mut self, row: &crate::model::ProfileRow, sink: &Sink) {
        self.stream(|w| w.write_profile(row, sink));
    }
    fn checkpoint(&mut self, tables: &Tables, sink: &Sink) {
        if self.error.is_some() {
            return;
        }
        let r = if self.live {
            self.publish(tables, sink)
        } else {
            Ok(())
        };
        if let Err(e) = r {
            self.error = Some(e);
        } else if !(self.tick)(self.rows) {
            self.error = Some(DbError::Cancelled);
        }
    }
}

impl<'t> TableWriter<'t> {
    pub(super) fn new(
        conn: Connection,
        live: bool,
        tick: &'t mut dyn FnMut(u64) -> bool,
    ) -> Result<TableWriter<'t>, DbError> {
        conn.execute_batch("BEGIN")?;
        Ok(TableWriter {
            pipe: Pipe::spawn(conn)?,
            live,
            batches: ALL.iter().map(|&t| Rows::new(t)).collect(),
            waiting: VecDeque::new(),
            next_slice: 0,
            track_files: Vec::new(),
            file_ids: Vec::new(),
            error: None,
            rows: 0,
            tick,
            next_arg_row: 0,
            sets_by_content: DigestIds::default(),
            sets_by_ref: SetIds::default(),
            display: String::new(),
        })
    }

    /// Each file's row id, by the import's file index: the ids every `trace_id` and
    /// `file_id` column is written with (without it, the index is the id).
    pub fn set_file_ids(&mut self, ids: Vec<u32>) {
        self.file_ids = ids;
    }

    /// The row id of the import's file `f`; `None` for no file.
    pub(super) fn file_id(&self, f: u32) -> Option<i64> {
        (f != NO_FILE).then(|| i64::from(self.file_ids.get(f as usize).copied().unwrap_or(f)))
    }

    /// Writes one streamed row, unless an earlier one failed: the model cannot stop
    /// mid-event, so the first error waits for [`TableWriter::finish`].
    fn stream(&mut self, write: impl FnOnce(&mut Self) -> Result<(), DbError>) {
        if self.error.is_some() {
            return;
        }
        match write(self) {
            Ok(()) => self.rows += 1,
            Err(e) => self.error = Some(e),
        }
    }

    /// The batch being filled for `table`.
    pub(super) fn batch(&mut self, table: Table) -> &mut Rows {
        &mut self.batches[table.index()]
    }

    /// Sends a table's batch once it is full.
    pub(super) fn send_if_full(&mut self, table: Table) -> Result<(), DbError> {
        let batch = self.batch(table);
        if batch.is_full() {
            let rows = batch.take();
            self.pipe.send(Message::Rows(rows))?;
        }
        Ok(())
    }

    /// Adds one row to `table` (`fill` pushes its values in column order).
    pub(super) fn row(
        &mut self,
        table: Table,
        fill: impl FnOnce(&mut Rows),
    ) -> Result<(), DbError> {
        fill(self.batch(table));
        self.send_if_full(table)
    }

    /// Empties a table the writer is about to write whole again.
    pub(super) fn clear(&mut self, table: Table) -> Result<(), DbError> {
        // Rows of it still in the batch belong to the old contents.
        let _ = self.batch(table).take();
        self.pipe.send(Message::Clear(table))
    }

    /// Sends every batch, full or not.
    fn flush(&mut self) -> Result<(), DbError> {
        for i in 0..TABLES {
            let rows = self.batches[i].take();
            if !rows.is_empty() {
                self.pipe.send(Message::Rows(rows))?;
            }
        }
        Ok(())
    }

    /// Commits what is written so far, with the machine, process, thread and track rows as
    /// the model has them now and every arg row they name, so a reader sees a consistent
    /// partial trace.
    fn publish(&mut self, tables: &Tables, sink: &Sink) -> Result<(), DbError> {
        self.release_waiting(sink, usize::MAX)?;
        self.identities(tables, sink)?;
        self.flush()?;
        self.pipe.commit()
    }

    /// Writes the small tables and what the import knows besides; ends the streaming and
    /// hands back the connection once the writer thread has written everything.
    pub fn finish(
        mut self,
        tables: &Tables,
        sink: &Sink,
        facts: &ImportFacts,
    ) -> Result<Connection, DbError> {
        if let Some(e) = self.error.take() {
            return Err(match e {
                // The thread's own error says more than a closed channel.
                DbError::WriterFailed => self.pipe.finish().err().unwrap_or(e),
                e => e,
            });
        }
        self.release_waiting(sink, usize::MAX)?;
        self.identities(tables, sink)?;
        self.rest(tables, sink, facts)?;
        self.flush()?;
        self.pipe.finish()
    }

    /// The `arg_set_id` for a parser arg set: the args-row id of its first row.
    pub(super) fn arg_set(&mut self, args: ArgsRef, sink: &Sink) -> Result<Option<i64>, DbError> {
        if args == NO_ARGS {
            return Ok(None);
        }
        if let Some(id) = self.sets_by_ref.get(args) {
            return Ok(Some(id));
        }
        let set = sink.args.get(args);
        let id = self.write_set(set, sink)?;
        if let Some(id) = id {
            self.sets_by_ref.insert(args, id);
        }
        Ok(id)
    }

    pub(super) fn write_set(&mut self, set: &[Arg], sink: &Sink) -> Result<Option<i64>, DbError> {
        if set.is_empty() {
            return Ok(None);
        }
        if has_duplicate_keys(set) {
            let set = collapse_duplicate_keys(set);
            return self.write_unique_set(&set, sink);
        }
        self.write_unique_set(set, sink)
    }

    /// Writes a set whose keys are all different (see [`collapse_duplicate_keys`]).
    fn write_unique_set(&mut self, set: &[Arg], sink: &Sink) -> Result<Option<i64>, DbError> {
        let key = digest(set);
        let set_id = self.next_arg_row;
        if let Some(id) = self.sets_by_content.get_or_insert(key, set_id, DEDUP_LIMIT) {
            return Ok(Some(id));
        }
        let strings = &sink.strings;
        let mut display = std::mem::take(&mut self.display);
        for a in set {
            use std::fmt::Write as _;
            display.clear();
            let (int, string, real, ty): (Option<i64>, Option<&str>, Option<f64>, &str) =
                match a.value {
                    ArgValue::Int(v) => {
                        push_decimal(&mut display, v.unsigned_abs(), v < 0);
                        (Some(v), None, None, "int")
                    }
                    ArgValue::Uint(v) => {
                        push_decimal(&mut display, v, false);
                        (Some(v as i64), None, None, "uint")
                    }
                    // A NULL string (an absent proto string) stays NULL.
                    ArgValue::Str(v) => match strings.get(v) {
                        Some(s) => {
                            display.push_str(s);
                            (None, Some(s), None, "string")
                        }
                        None => (None, None, None, "string"),
                    },
                    ArgValue::Real(v) => {
                        let _ = write!(display, "{v}");
                        (None, None, Some(v), "real")
                    }
                    ArgValue::Bool(v) => {
                        display.push_str(if v { "true" } else { "false" });
                        (Some(v as i64), None, None, "bool")
                    }
                    ArgValue::Pointer(v) => {
                        let _ = write!(display, "0x{v:x}");
                        (Some(v as i64), None, None, "pointer")
                    }
                    ArgValue::Json(v) => {
                        let s = strings.get(v).unwrap_or("");
                        display.push_str(s);
                        (None, Some(s), None, "json")
                    }
                    ArgValue::Null => {
                        display.push_str("[NULL]");
                        (None, None, None, "null")
                    }
                    // Resolved by the model; an unresolved one has no utid to show.
                    ArgValue::ThreadUtid(_)
                    | ArgValue::ProcessUpid(_)
                    | ArgValue::PassthroughUtid(_) => {
                        display.push_str("[NULL]");
                        (None, None, None, "int")
                    }
                };
            let id = self.next_arg_row;
            let row = self.batch(Table::Args);
            row.int(id);
            row.int(set_id);
            row.text(strings.get(a.flat_key));
            row.text(strings.get(a.key));
            row.opt_int(int);
            row.text(string);
            row.real(real);
            row.text(Some(ty));
            let null_string = matches!(a.value, ArgValue::Str(v) if strings.get(v).is_none());
            row.text((!null_string).then_some(display.as_str()));
            self.next_arg_row += 1;
        }
        self.display = display;
        self.send_if_full(Table::Args)?;
        Ok(Some(set_id))
    }

    pub(super) fn extra_args(
        &mut self,
        extra: &[(StrId, ArgValue)],
        sink: &Sink,
    ) -> Result<Option<i64>, DbError> {
        let set: Vec<Arg> = extra
            .iter()
            .map(|&(key, value)| Arg {
                flat_key: sink.flat_keys.get(&key).copied().unwrap_or(key),
                key,
                value,
            })
            .collect();
        self.write_set(&set, sink)
    }

    fn write_slice(&mut self, id: u32, s: &SliceRow, sink: &Sink) -> Result<(), DbError> {
        let args = self.arg_set(s.args, sink)?;
        self.note_file(id, s)?;
        if id < self.next_slice {
            // It gave up waiting for this one: it goes in out of order.
            return self.queue_slice(id, s, args, sink);
        }
        let offset = (id - self.next_slice) as usize;
        if offset >= REORDER_WINDOW {
            self.release_waiting(sink, offset + 1 - REORDER_WINDOW)?;
        }
        let offset = (id - self.next_slice) as usize;
        if self.waiting.len() == offset {
            self.waiting.push_back(None);
        } else if self.waiting.len() < offset {
            self.waiting.resize(offset + 1, None);
        }
        self.waiting[offset] = Some((*s, args));
        while let Some(Some(_)) = self.waiting.front() {
            self.release_waiting(sink, 1)?;
        }
        Ok(())
    }

    /// Gives up waiting for the next `count` slice ids: those that ended are written, the
    /// others will be written out of order when they end.
    fn release_waiting(&mut self, sink: &Sink, count: usize) -> Result<(), DbError> {
        let mut released = 0;
        while released < count {
            let Some(waiting) = self.waiting.pop_front() else {
                break;
            };
            if let Some((row, args)) = waiting {
                self.queue_slice(self.next_slice, &row, args, sink)?;
            }
            self.next_slice += 1;
            released += 1;
        }
        if released < count && count != usize::MAX {
            let rest = u32::try_from(count - released).unwrap_or(u32::MAX);
            self.next_slice = self.next_slice.saturating_add(rest);
        }
        Ok(())
    }

    fn queue_slice(
        &mut self,
        id: u32,
        s: &SliceRow,
        args: Option<i64>,
        sink: &Sink,
    ) -> Result<(), DbError> {
        self.row(Table::Slice, |row| {
            row.int(id);
            row.int(s.ts);
            row.int(s.dur);
            row.int(s.track);
            row.text(sink.strings.get(s.category));
            row.text(sink.strings.get(s.name));
            row.int(s.depth);
            row.opt_int(s.parent);
            row.opt_int(args);
            row.opt_int((s.thread_ts != NO_TS).then_some(s.thread_ts));
            row.opt_int((s.thread_dur != NO_TS).then_some(s.thread_dur));
            row.opt_int((s.thread_ic != NO_TS).then_some(s.thread_ic));
            row.opt_int((s.thread_ic_delta != NO_TS).then_some(s.thread_ic_delta));
        })
    }

    /// Remembers the file a slice came from: once per track, and per slice for a slice
    /// from another file than its track's first.
    fn note_file(&mut self, id: u32, s: &SliceRow) -> Result<(), DbError> {
        if s.file == NO_FILE {
            return Ok(());
        }
        let track = s.track as usize;
        if self.track_files.len() <= track {
            self.track_files.resize(track + 1, NO_FILE);
        }
        let first = &mut self.track_files[track];
        if *first == NO_FILE {
            *first = s.file;
        } else if *first != s.file {
            let file = self.file_id(s.file);
            self.row(Table::SliceFile, |row| {
                row.int(id);
                row.opt_int(file);
            })?;
        }
        Ok(())
    }

    fn write_counter(&mut self, id: u32, c: &CounterRow, sink: &Sink) -> Result<(), DbError> {
        let args = self.arg_set(c.args, sink)?;
        self.row(Table::Counter, |row| {
            row.int(id);
            row.int(c.ts);
            row.int(c.track);
            row.real(Some(c.value));
            row.opt_int(args);
        })
    }

    fn write_sched(&mut self, id: u32, s: &SchedRow, sink: &Sink) -> Result<(), DbError> {
        self.row(Table::Sched, |row| {
            row.int(id);
            row.int(s.ts);
            row.int(s.dur);
            row.int(s.cpu);
            row.int(s.utid);
            row.text(sink.strings.get(s.end_state));
            row.int(s.priority);
            row.int(s.ucpu);
        })
    }

    fn write_thread_state(
        &mut self,
        id: u32,
        s: &ThreadStateRow,
        sink: &Sink,
    ) -> Result<(), DbError> {
        self.row(Table::ThreadState, |row| {
            row.int(id);
            row.int(s.ts);
            row.int(s.dur);
            row.opt_int(s.cpu);
            row.int(s.utid);
            row.text(sink.strings.get(s.state));
            row.opt_int(s.io_wait);
            row.text(sink.strings.get(s.blocked_function));
            row.opt_int(s.waker_utid);
            row.opt_int(s.waker_id);
            row.opt_int(s.irq_context);
            row.opt_int(s.ucpu);
        })
    }

    fn write_ftrace_event(
        &mut self,
        id: u32,
        e: &FtraceEventRow,
        sink: &Sink,
    ) -> Result<(), DbError> {
        let args = self.arg_set(e.args, sink)?;
        self.row(Table::FtraceEvent, |row| {
            row.int(id);
            row.int(e.ts);
            row.text(sink.strings.get(e.name));
            row.int(e.cpu);
            row.int(e.utid);
            row.opt_int(args);
            row.opt_int(e.common_flags);
            row.int(e.ucpu);
        })
    }
}

/// `v` in decimal, as `{}` formats it (with a minus sign when `negative`).
fn push_decimal(out: &mut String, mut v: u64, negative: bool) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if negative {
        out.push('-');
    }
    out.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}

/// The arg-set id written for each parser arg set, by `ArgsRef`: a map with the bounded
/// map's behaviour (forgotten whole once [`DEDUP_LIMIT`] sets are remembered) held in a
/// vector, since refs are dense: each slot is `generation << 48 | (id + 1)`, and a slot of
/// an older generation is empty.
struct SetIds {
    slots: Vec<u64>,
    generation: u64,
    len: usize,
    /// [`DEDUP_LIMIT`] (smaller in tests).
    limit: usize,
}

impl Default for SetIds {
    fn default() -> Self {
        SetIds {
            slots: Vec::new(),
            generation: 0,
            len: 0,
            limit: DEDUP_LIMIT,
        }
    }
}

impl SetIds {
    const ID_BITS: u32 = 48;

    fn get(&self, args: ArgsRef) -> Option<i64> {
        let slot = *self.slots.get(args as usize)?;
        (slot != 0 && slot >> Self::ID_BITS == self.generation)
            .then(|| (slot & ((1 << Self::ID_BITS) - 1)) as i64 - 1)
    }

    fn insert(&mut self, args: ArgsRef, id: i64) {
        let Ok(value) = u64::try_from(id + 1) else {
            return;
        };
        if value >> Self::ID_BITS != 0 {
            // Past 2^48 args rows: not remembered (written again if met again).
            return;
        }
        if self.get(args).is_none() {
            if self.len >= self.limit {
                self.generation = (self.generation + 1) & 0xffff;
                self.len = 0;
                if self.generation == 0 {
                    // Generations wrapped: really empty it.
                    self.slots.iter_mut().for_each(|s| *s = 0);
                }
            }
            self.len += 1;
        }
        let i = args as usize;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, 0);
        }
        self.slots[i] = self.generation << Self::ID_BITS | value;
    }
}

/// The arg-set id written for each digest (see [`digest`]): an open-addressing table with
/// linear probing, at most half full, whose slots are 4 bytes — 10 bits of the digest and
/// the position + 1 of (digest, id) in a log kept in insertion order (0 = empty). A lookup
/// reads the log only where the fingerprint matches, and an insertion writes one slot and
/// appends to the log, so the only random accesses are to the slots (8 MB at the most,
/// where a slot holding the whole digest made a 48 MB table: a cache and TLB miss per set,
/// 0.7 s of a 2 M-event JSON import's model thread).
#[derive(Default)]
struct DigestIds {
    slots: Vec<u32>,
    /// (digest high, digest low, id), in insertion order.
    log: Vec<(u64, u64, i64)>,
}

/// Where a digest is, or the empty slot where it would go.
enum Probe {
    Found(i64),
    Empty(usize),
}

impl DigestIds {
    const FIRST: usize = 1 << 12;
    /// Slot bits for the log position + 1; the rest hold the fingerprint.
    const INDEX_BITS: u32 = 22;
    const INDEX_MASK: u32 = (1 << Self::INDEX_BITS) - 1;
    /// The most digests held (log positions + 1 must fit their bits).
    const CAPACITY: usize = (1 << Self::INDEX_BITS) - 2;

    fn len(&self) -> usize {
        self.log.len()
    }

    fn slot(&self, key: u128) -> usize {
        let (hi, lo) = ((key >> 64) as u64, key as u64);
        ((hi ^ lo.rotate_left(29)) as usize) & (self.slots.len() - 1)
    }

    /// The digest's top bits (the slot index takes low bits), in a slot's high bits.
    fn fingerprint(key: u128) -> u32 {
        ((key >> (128 - (32 - Self::INDEX_BITS))) as u32) << Self::INDEX_BITS
    }

    /// Walks `key`'s probe sequence (the table must have room).
    fn probe(&self, key: u128) -> Probe {
        let (hi, lo) = ((key >> 64) as u64, key as u64);
        let fp = Self::fingerprint(key);
        let mask = self.slots.len() - 1;
        let mut i = self.slot(key);
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return Probe::Empty(i);
            }
            if slot & !Self::INDEX_MASK == fp {
                let (h, l, id) = self.log[(slot & Self::INDEX_MASK) as usize - 1];
                if h == hi && l == lo {
                    return Probe::Found(id);
                }
            }
            i = (i + 1) & mask;
        }
    }

    #[cfg(test)]
    fn get(&self, key: u128) -> Option<i64> {
        if self.slots.is_empty() {
            return None;
        }
        match self.probe(key) {
            Probe::Found(id) => Some(id),
            Probe::Empty(_) => None,
        }
    }

    /// The id remembered for `key`, or else remembers `id` for it (one probe for both).
    /// A table holding `limit` digests forgets them all before it takes a new one.
    fn get_or_insert(&mut self, key: u128, id: i64, limit: usize) -> Option<i64> {
        let limit = limit.min(Self::CAPACITY);
        if !self.slots.is_empty() {
            match self.probe(key) {
                Probe::Found(found) => return Some(found),
                Probe::Empty(i)
                    if self.len() < limit && (self.len() + 1) * 2 <= self.slots.len() =>
                {
                    self.put(i, key, id);
                    return None;
                }
                Probe::Empty(_) => {}
            }
        }
        if self.len() >= limit {
            self.clear();
        }
        if (self.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        if let Probe::Empty(i) = self.probe(key) {
            self.put(i, key, id);
        }
        None
    }

    fn put(&mut self, i: usize, key: u128, id: i64) {
        self.log.push(((key >> 64) as u64, key as u64, id));
        // The log holds at most CAPACITY entries, so its length fits the index bits.
        self.slots[i] = Self::fingerprint(key) | (self.log.len() as u32 & Self::INDEX_MASK);
    }

    /// Remembers `key` (not already there) as `id`.
    #[cfg(test)]
    fn insert(&mut self, key: u128, id: i64) {
        if self.get_or_insert(key, id, usize::MAX).is_some() {
            unreachable!("inserted twice");
        }
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(Self::FIRST);
        self.slots = vec![0; size];
        let mask = size - 1;
        for (n, &(hi, lo, _)) in self.log.iter().enumerate() {
            let key = (u128::from(hi) << 64) | u128::from(lo);
            let mut i = self.slot(key);
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = Self::fingerprint(key) | ((n + 1) as u32 & Self::INDEX_MASK);
        }
    }

    /// Forgets every digest (the room stays).
    fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = 0);
        self.log.clear();
    }
}

/// Whether two args of the set have the same key.
fn has_duplicate_keys(set: &[Arg]) -> bool {
    if set.len() <= 32 {
        return (1..set.len()).any(|i| set[..i].iter().any(|a| a.key == set[i].key));
    }
    let mut seen = std::collections::HashSet::with_capacity(set.len());
    !set.iter().all(|a| seen.insert(a.key))
}

/// One arg per key, as Trace Processor's GlobalArgsTracker stores a set: a later arg with
/// a key already in the set replaces the earlier one's value (its place stays the first's).
/// So an arg added twice (a process described twice, a sort index hint from two sources)
/// is one row.
fn collapse_duplicate_keys(set: &[Arg]) -> Vec<Arg> {
    let mut out: Vec<Arg> = Vec::with_capacity(set.len());
    let mut at = std::collections::HashMap::with_capacity(set.len());
    for a in set {
        match at.get(&a.key) {
            Some(&i) => out[i] = *a,
            None => {
                at.insert(a.key, out.len());
                out.push(*a);
            }
        }
    }
    out
}

/// The most arg sets remembered for deduplication: past it the memory starts again empty,
/// so a trace whose every event has args of its own (a JSON trace with an id per event)
/// costs a bounded map rather than one entry per event. Identical sets further apart than
/// that are written twice, which changes no query's answer but `arg_set_id` equality.
const DEDUP_LIMIT: usize = 1 << 20;

/// A 128-bit digest of an arg set's content: SipHash-1-3 and a multiply-xorshift lane over
/// (flat key, key, type, value bits) of each arg.
fn digest(set: &[Arg]) -> u128 {
    use std::hash::Hasher as _;
    fn fmix(mut k: u64) -> u64 {
        k ^= k >> 33;
        k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
        k ^= k >> 33;
        k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        k ^ (k >> 33)
    }
    let mut sip = std::hash::DefaultHasher::new();
    let mut lane: u64 = 0x9e37_79b9_7f4a_7c15;
    for a in set {
        let (tag, bits) = match a.value {
            ArgValue::Int(v) => (0u64, v as u64),
            ArgValue::Uint(v) => (1, v),
            ArgValue::Str(v) => (2, u64::from(v)),
            ArgValue::Real(v) => (3, v.to_bits()),
            ArgValue::Bool(v) => (4, u64::from(v)),
            ArgValue::Pointer(v) => (5, v),
            ArgValue::Json(v) => (6, u64::from(v)),
            ArgValue::Null => (7, 0),
            ArgValue::ThreadUtid(v) => (8, u64::from(v)),
            ArgValue::ProcessUpid(v) => (9, u64::from(v)),
            ArgValue::PassthroughUtid(v) => (10, u64::from(v)),
        };
        for w in [u64::from(a.flat_key), u64::from(a.key), tag, bits] {
            sip.write_u64(w);
            lane = fmix(lane ^ w).wrapping_add(0x2545_f491_4f6c_dd1d);
        }
    }
    sip.write_usize(set.len());
    (u128::from(sip.finish()) << 64) | u128::from(fmix(lane ^ set.len() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(key: StrId, value: ArgValue) -> Arg {
        Arg {
            flat_key: key,
            key,
            value,
        }
    }

    #[test]
    fn a_key_twice_in_a_set_is_one_arg_with_the_later_value_in_the_first_place() {
        let (a, b, c) = (1, 2, 3);
        let set = [
            arg(a, ArgValue::Int(1)),
            arg(b, ArgValue::Int(2)),
            arg(a, ArgValue::Int(3)),
            arg(c, ArgValue::Int(4)),
        ];
        assert!(has_duplicate_keys(&set));
        assert_eq!(
            collapse_duplicate_keys(&set),
            vec![
                arg(a, ArgValue::Int(3)),
                arg(b, ArgValue::Int(2)),
                arg(c, ArgValue::Int(4))
            ]
        );
        assert!(!has_duplicate_keys(&set[1..]));
        // Past the quadratic check's size too.
        let long: Vec<Arg> = (0..40).map(|k| arg(k, ArgValue::Int(0))).collect();
        assert!(!has_duplicate_keys(&long));
        let mut twice = long.clone();
        twice.push(arg(7, ArgValue::Int(1)));
        assert!(has_duplicate_keys(&twice));
        assert_eq!(collapse_duplicate_keys(&twice).len(), 40);
    }

    #[test]
    fn decimals_are_written_as_fmt_writes_them() {
        for v in [0i64, 7, -7, 10, 99, 100, 123_456, i64::MAX, i64::MIN, -1] {
            let mut s = String::from("x");
            push_decimal(&mut s, v.unsigned_abs(), v < 0);
            assert_eq!(s, format!("x{v}"));
        }
        let mut s = String::new();
        push_decimal(&mut s, u64::MAX, false);
        assert_eq!(s, u64::MAX.to_string());
    }

    #[test]
    fn set_ids_behave_as_a_map_forgotten_whole_at_its_bound() {
        // The bounded map SetIds stands for, at a small bound.
        let mut ids = SetIds {
            limit: 5,
            ..SetIds::default()
        };
        let mut map: std::collections::HashMap<ArgsRef, i64> = Default::default();
        let mut state = 1u64;
        for step in 0..2000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let args = (state >> 33) as u32 % 12;
            let want = map.get(&args).copied();
            assert_eq!(ids.get(args), want, "step {step}");
            if want.is_none() {
                if map.len() >= 5 {
                    map.clear();
                }
                map.insert(args, step);
                ids.insert(args, step);
            }
        }
    }

    #[test]
    fn digest_ids_remember_through_growth_and_forget_on_clear() {
        let mut ids = DigestIds::default();
        assert_eq!(ids.get(7), None);
        // Keys alike in their low bits probe past each other.
        let key = |i: u64| (u128::from(i) << 64) | u128::from(i.wrapping_mul(0x9e37_79b9));
        for i in 0..10_000u64 {
            assert_eq!(ids.get(key(i)), None);
            ids.insert(key(i), i as i64 * 3);
        }
        assert_eq!(ids.len(), 10_000);
        for i in 0..10_000u64 {
            assert_eq!(ids.get(key(i)), Some(i as i64 * 3));
        }
        assert_eq!(ids.get(key(10_000)), None);
        ids.clear();
        assert_eq!(ids.len(), 0);
        assert_eq!(ids.get(key(5)), None);
        ids.insert(key(5), 0);
        assert_eq!(ids.get(key(5)), Some(0));
    }

    #[test]
    fn digest_ids_at_their_limit_still_find_and_forget_only_to_take_a_new_digest() {
        let key = |i: u64| (u128::from(i) << 64) | u128::from(i.wrapping_mul(0x9e37_79b9));
        let mut ids = DigestIds::default();
        for i in 0..4 {
            assert_eq!(ids.get_or_insert(key(i), i as i64, 4), None);
        }
        // Full: a digest it holds is still found, and nothing is forgotten.
        assert_eq!(ids.get_or_insert(key(2), 99, 4), Some(2));
        assert_eq!(ids.len(), 4);
        // A new digest at the limit empties it first.
        assert_eq!(ids.get_or_insert(key(9), 9, 4), None);
        assert_eq!(ids.len(), 1);
        assert_eq!(ids.get(key(2)), None);
        assert_eq!(ids.get(key(9)), Some(9));
    }

    #[test]
    fn digests_tell_sets_apart_by_key_type_value_and_order() {
        let base = [arg(1, ArgValue::Int(7)), arg(2, ArgValue::Str(3))];
        let same = [arg(1, ArgValue::Int(7)), arg(2, ArgValue::Str(3))];
        assert_eq!(digest(&base), digest(&same));
        let others: [&[Arg]; 6] = [
            &[arg(1, ArgValue::Uint(7)), arg(2, ArgValue::Str(3))],
            &[arg(1, ArgValue::Int(8)), arg(2, ArgValue::Str(3))],
            &[arg(9, ArgValue::Int(7)), arg(2, ArgValue::Str(3))],
            &[arg(2, ArgValue::Str(3)), arg(1, ArgValue::Int(7))],
            &[arg(1, ArgValue::Int(7))],
            &[arg(1, ArgValue::Int(7)), arg(2, ArgValue::Json(3))],
        ];
        let mut seen = std::collections::HashSet::new();
        seen.insert(digest(&base));
        for other in others {
            assert!(seen.insert(digest(other)), "{other:?}");
        }
    }
}
