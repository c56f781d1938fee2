//! The events array of a long JSON trace, lexed on a second thread: the import thread reads
//! the input and imports events, the lexing thread turns the bytes into events. Hands each
//! event (and how the array ended) to the importer in file order, exactly as reading the
//! array on the import thread would.
//!
//! The import thread keeps two chunks of input in flight to the lexer. The lexer reads the
//! array with the same lexer and state machine as `Importer::read_events`, and copies each
//! whole event's strings into the batch it hands back (numbers parsed, objects and arrays as
//! their text, lexed again only when the importer wants them). Before it waits for more
//! input it hands back the events it has, so neither thread waits for the other's full
//! channel. When the array ends, the lexer hands back the bytes it did not read and the
//! chunks it did not take, and the import thread reads on from there.

use std::borrow::Cow;
use std::cell::RefCell;
use std::io::Read;
use std::rc::Rc;
use std::sync::mpsc::{self, Receiver, SyncSender};

use super::lexer::{JErr, JVal, Lexer};
use super::{array_separator, event_key, Importer, Next, RawEvent, Stream, CHUNK};
use crate::ir::Sink;
use crate::parse::ParseError;

/// Events of an array read on the import thread before the rest is lexed on a second.
pub(super) const LEX_INLINE: usize = 50_000;

/// A field's value, outside the lexer's buffer.
enum Value {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Real(f64),
    /// A string without escapes: a range of the batch's bytes.
    Str(u32, u32),
    /// A string with escapes, decoded.
    Owned(String),
    /// An object or array: its text, a range of the batch's bytes.
    Text(u32, u32),
}

/// How the array ended (as `Importer::read_events` tells the cases apart).
enum Outcome {
    /// `]`.
    Close,
    /// The input ended where an event or `]` would be, or after an event.
    End,
    /// The input ended inside an event.
    CutInEvent,
    Syntax(String),
}

/// What the lexer hands back, in file order.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    /// (keys, first field, end of fields) per event.
    events: Vec<(u32, u32, u32)>,
    /// (field index, value) of every event, in order.
    fields: Vec<(u8, Value)>,
    /// Chunks of input the lexer took since the last batch.
    took: usize,
    /// How the array ended, with the bytes after it, the stream's offset of them, and
    /// whether the lexer saw the end of the input.
    end: Option<(Outcome, Vec<u8>, u64, bool)>,
    /// A chunk the lexer did not take (after the end).
    unused: Option<Chunk>,
    /// A chunk the lexer has read to its end: its buffer goes back to be read into again.
    spent: Option<Vec<u8>>,
}

impl Batch {
    /// Empties the batch, keeping its buffers' capacity for the next one.
    fn clear(&mut self) {
        self.bytes.clear();
        self.events.clear();
        self.fields.clear();
        self.took = 0;
        self.end = None;
        self.unused = None;
        self.spent = None;
    }
}

/// Input for the lexer: bytes, or `None` at the end of the input.
type Chunk = Option<Vec<u8>>;

/// The lexer's input: chunks from the import thread. Before it waits for one, it hands
/// back the events read so far.
struct Chunks {
    from: Receiver<Chunk>,
    to: SyncSender<Batch>,
    /// Batches the import thread has emptied, to be filled again (fresh ones fault their
    /// pages in each time: a tenth of a 200 MB import's time went there).
    recycled: Receiver<Batch>,
    batch: Rc<RefCell<Batch>>,
    current: Vec<u8>,
    at: usize,
    ended: bool,
}

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.current.len() {
            if self.ended {
                return Ok(0);
            }
            let fresh = self.recycled.try_recv().unwrap_or_default();
            let mut batch = std::mem::replace(&mut *self.batch.borrow_mut(), fresh);
            if self.current.capacity() > 0 {
                batch.spent = Some(std::mem::take(&mut self.current));
                self.at = 0;
            }
            if self.to.send(batch).is_err() {
                return Err(std::io::Error::other("the import stopped"));
            }
            match self.from.recv() {
                Ok(Some(bytes)) => {
                    self.current = bytes;
                    self.at = 0;
                }
                Ok(None) => self.ended = true,
                Err(_) => return Err(std::io::Error::other("the import stopped")),
            }
            self.batch.borrow_mut().took += 1;
        }
        let n = buf.len().min(self.current.len() - self.at);
        buf[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Copies a field's value into the batch.
fn keep(batch: &mut Batch, v: JVal) -> Value {
    let mut range = |s: &[u8]| {
        let start = batch.bytes.len() as u32;
        batch.bytes.extend_from_slice(s);
        (start, batch.bytes.len() as u32)
    };
    match v {
        JVal::Null => Value::Null,
        JVal::Bool(b) => Value::Bool(b),
        JVal::Int(i) => Value::Int(i),
        JVal::UInt(u) => Value::UInt(u),
        JVal::Real(f) => Value::Real(f),
        JVal::Str(Cow::Borrowed(s)) => {
            let (a, b) = range(s.as_bytes());
            Value::Str(a, b)
        }
        JVal::Str(Cow::Owned(s)) => Value::Owned(s),
        // Containers come as text (see `read_event`).
        JVal::Arr(_) | JVal::Obj(_) => Value::Null,
    }
}

/// One event into the batch (the lexer is at `{`); as `RawEvent::read` reads it, objects and
/// arrays kept as text. Nothing is added unless the whole event is read.
fn read_event(lx: &mut Lexer, batch: &mut Batch) -> Result<(), JErr> {
    let (bytes, fields) = (batch.bytes.len(), batch.fields.len());
    let mut keys = 0u32;
    let r = lx.object(|lx, key| {
        keys += 1;
        let Some(field) = event_key(&key) else {
            return lx.skip(2);
        };
        let value = match lx.peek() {
            Some(b'{' | b'[') => {
                let start = lx.pos;
                lx.skip(2)?;
                let a = batch.bytes.len() as u32;
                batch.bytes.extend_from_slice(&lx.b[start..lx.pos]);
                Value::Text(a, batch.bytes.len() as u32)
            }
            _ => {
                let v = lx.value(2)?;
                keep(batch, v)
            }
        };
        batch.fields.push((field as u8, value));
        Ok(())
    });
    if let Err(e) = r {
        batch.bytes.truncate(bytes);
        batch.fields.truncate(fields);
        return Err(e);
    }
    batch
        .events
        .push((keys, fields as u32, batch.fields.len() as u32));
    Ok(())
}

/// The lexing thread: reads the array from `st` (at an element) until it ends.
fn lex(st: &mut Stream, batch: &Rc<RefCell<Batch>>) -> Result<Outcome, ParseError> {
    enum Element {
        Event,
        Close,
        End,
    }
    loop {
        let element = st.attempt(|lx| match lx.next_byte()? {
            None => Ok(Element::End),
            Some(b']') => {
                lx.pos += 1;
                Ok(Element::Close)
            }
            Some(b'{') => {
                read_event(lx, &mut batch.borrow_mut())?;
                Ok(Element::Event)
            }
            Some(_) => Err(JErr::Syntax(format!(
                "trace event at byte {} is not a JSON object",
                lx.offset()
            ))),
        })?;
        match element {
            Ok(Element::Event) => {}
            Ok(Element::Close) => return Ok(Outcome::Close),
            Ok(Element::End) => return Ok(Outcome::End),
            Err(JErr::Eof) => return Ok(Outcome::CutInEvent),
            Err(JErr::Syntax(m)) => return Ok(Outcome::Syntax(m)),
        }
        let next = st.attempt(array_separator)?;
        match next {
            Ok(true) => {}
            Ok(false) => return Ok(Outcome::Close),
            Err(JErr::Eof) => return Ok(Outcome::End),
            Err(JErr::Syntax(m)) => return Ok(Outcome::Syntax(m)),
        }
    }
}

/// A field's value as the lexer would have given it, borrowing the batch.
fn value<'a>(bytes: &'a [u8], v: &Value) -> JVal<'a> {
    let text = |a: u32, b: u32| bytes.get(a as usize..b as usize).unwrap_or_default();
    match v {
        Value::Null => JVal::Null,
        Value::Bool(b) => JVal::Bool(*b),
        Value::Int(i) => JVal::Int(*i),
        Value::UInt(u) => JVal::UInt(*u),
        Value::Real(f) => JVal::Real(*f),
        // The lexer checked these very bytes are UTF-8 before they were copied.
        Value::Str(a, b) => {
            let s = text(*a, *b);
            JVal::Str(Cow::Borrowed(if s.is_ascii() {
                // SAFETY: ASCII bytes are UTF-8.
                unsafe { std::str::from_utf8_unchecked(s) }
            } else {
                // The lexer checked these very bytes are UTF-8 before copying them.
                std::str::from_utf8(s).unwrap_or_default()
            }))
        }
        Value::Owned(s) => JVal::Str(Cow::Owned(s.clone())),
        Value::Text(a, b) => {
            let mut lx = Lexer {
                b: text(*a, *b),
                pos: 0,
                base: 0,
                complete: true,
            };
            // The lexer read this text as a value already.
            lx.value(2).unwrap_or(JVal::Null)
        }
    }
}

/// The import thread's side of the input: chunks read and sent, two at most in flight.
struct Feed<'i> {
    input: &'i mut dyn Read,
    to: SyncSender<Chunk>,
    in_flight: usize,
    done: bool,
    /// Buffers of chunks the lexer has read, to read the next chunks into.
    spare: Vec<Vec<u8>>,
}

impl Feed<'_> {
    fn top_up(&mut self) -> Result<(), ParseError> {
        while self.in_flight < 2 && !self.done {
            let chunk = read_chunk(&mut *self.input, self.spare.pop())?;
            self.done = chunk.is_none();
            if self.to.send(chunk).is_err() {
                self.done = true;
                break;
            }
            self.in_flight += 1;
        }
        Ok(())
    }
}

/// How the threaded read ended.
enum Ended {
    /// The array ended: how, the bytes after it and where they are, and whether the input
    /// ended too.
    Array(Outcome, Vec<u8>, u64, bool),
    /// The importer stopped at an event.
    Stop(String),
}

impl Importer {
    /// The rest of the events array (the stream at an element), lexed on a second thread;
    /// returns as `read_events` does, or `None` when no thread could be started (nothing
    /// read: the array goes on on this thread).
    pub(super) fn read_events_threaded(
        &mut self,
        st: &mut Stream,
        sink: &mut Sink,
        in_object: bool,
    ) -> Result<Option<bool>, ParseError> {
        let unread = st.buf[st.pos..].to_vec();
        let (base, eof) = (st.base + st.pos as u64, st.eof);
        let input: &mut dyn Read = &mut *st.input;
        let ended = std::thread::scope(|scope| -> Result<Option<Ended>, ParseError> {
            let (to_lexer, chunks) = mpsc::sync_channel::<Chunk>(2);
            let (batches_to, batches) = mpsc::sync_channel::<Batch>(2);
            let (recycle, recycled) = mpsc::channel::<Batch>();
            let lexer = std::thread::Builder::new()
                .name("json-lexer".into())
                .spawn_scoped(scope, move || {
                    lexer_thread(unread, base, eof, chunks, batches_to, recycled)
                });
            if lexer.is_err() {
                return Ok(None);
            }
            let mut feed = Feed {
                input,
                to: to_lexer,
                in_flight: 0,
                done: eof,
                spare: Vec::new(),
            };
            feed.top_up()?;
            let mut end = None;
            for mut batch in batches.iter() {
                feed.in_flight -= batch.took.min(feed.in_flight);
                if let Some(buf) = batch.spent.take() {
                    feed.spare.push(buf);
                }
                if batch.end.is_none() {
                    feed.top_up()?;
                }
                for &(keys, first, last) in &batch.events {
                    let mut ev = RawEvent {
                        n_keys: keys,
                        ..RawEvent::default()
                    };
                    for (field, v) in &batch.fields[first as usize..last as usize] {
                        *ev.slot(usize::from(*field)) = Some(value(&batch.bytes, v));
                    }
                    if let Next::Stop(msg) = self.account(sink, ev) {
                        return Ok(Some(Ended::Stop(msg)));
                    }
                }
                if let Some(e) = batch.end.take() {
                    end = Some(e);
                    break;
                }
                batch.clear();
                // The lexer may have ended meanwhile: then the batch is simply dropped.
                let _ = recycle.send(batch);
            }
            // The lexer hands back the chunks it did not take, then ends.
            drop(feed);
            let Some((outcome, mut tail, tail_at, lexer_eof)) = end else {
                return Err(ParseError::invalid("the JSON lexing thread stopped"));
            };
            let mut input_ended = lexer_eof;
            for batch in batches.iter() {
                match batch.unused {
                    Some(Some(bytes)) => tail.extend_from_slice(&bytes),
                    Some(None) => input_ended = true,
                    None => {}
                }
            }
            Ok(Some(Ended::Array(outcome, tail, tail_at, input_ended)))
        })?;
        let (outcome, tail, tail_at, input_ended) = match ended {
            None => return Ok(None),
            Some(Ended::Stop(msg)) => {
                return if in_object {
                    Err(ParseError::Invalid(msg))
                } else {
                    Ok(Some(false))
                };
            }
            Some(Ended::Array(outcome, tail, at, ended)) => (outcome, tail, at, ended),
        };
        // The stream goes on after the array, with what the lexer did not read.
        st.buf = tail;
        st.pos = 0;
        st.base = tail_at;
        st.eof = input_ended;
        Ok(Some(match outcome {
            Outcome::Close => true,
            Outcome::End => {
                if in_object {
                    self.truncated(sink);
                }
                false
            }
            Outcome::CutInEvent => {
                // An event cut short: read, and lost.
                sink.begin_input();
                self.truncated(sink);
                sink.end_input();
                false
            }
            Outcome::Syntax(m) => return Err(ParseError::Invalid(m)),
        }))
    }
}

/// The lexing thread: the array from `unread` (at stream offset `base`) and the chunks that
/// follow, until it ends; then the chunks it did not take go back.
fn lexer_thread(
    unread: Vec<u8>,
    base: u64,
    eof: bool,
    chunks: Receiver<Chunk>,
    batches: SyncSender<Batch>,
    recycled: Receiver<Batch>,
) {
    let batch = Rc::new(RefCell::new(Batch::default()));
    let mut reader = Chunks {
        from: chunks,
        to: batches.clone(),
        batch: batch.clone(),
        recycled,
        current: Vec::new(),
        at: 0,
        ended: eof,
    };
    let mut st = Stream {
        input: &mut reader,
        buf: unread,
        pos: 0,
        base,
        eof,
        chunk: CHUNK,
    };
    let outcome = lex(&mut st, &batch);
    let (mut tail, tail_at, lexer_eof) =
        (st.buf[st.pos..].to_vec(), st.base + st.pos as u64, st.eof);
    drop(st);
    // The stream may have read only part of the chunk in hand (a read after an event larger
    // than a chunk ends inside one): the rest follows the stream's unread bytes.
    tail.extend_from_slice(reader.current.get(reader.at..).unwrap_or_default());
    // Only a stopped import makes the input fail.
    let Ok(outcome) = outcome else {
        return;
    };
    let mut last = std::mem::take(&mut *batch.borrow_mut());
    last.end = Some((outcome, tail, tail_at, lexer_eof));
    if batches.send(last).is_err() {
        return;
    }
    for chunk in reader.from.iter() {
        let back = Batch {
            unused: Some(chunk),
            ..Batch::default()
        };
        if batches.send(back).is_err() {
            return;
        }
    }
}

/// The next chunk of input (`None` at its end), read into `spare` if there is one.
fn read_chunk(input: &mut dyn Read, spare: Option<Vec<u8>>) -> Result<Chunk, ParseError> {
    let mut buf = spare.unwrap_or_default();
    buf.resize(CHUNK, 0);
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ParseError::invalid(format!("cannot read the file: {e}"))),
        }
    }
    if filled == 0 {
        return Ok(None);
    }
    buf.truncate(filled);
    Ok(Some(buf))
}
