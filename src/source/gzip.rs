//! A gzip stream read member by member: concatenated members form one file (a trace split
//! across members continues, with its sequence state), zero padding after the last member
//! is not another member, and a perfetto manifest may only come first — one found after
//! trace data is a fault. The caller splits a leading manifest member off as a file of its
//! own ([`Codec::Gzip`]'s `skip`/`take`).
//!
//! [`Codec::Gzip`]: super::stream::Codec::Gzip

use std::io::{self, BufRead, Read};

use flate2::bufread::GzDecoder;

use super::stream::{only_zeros_left, Fault, Monitor};

pub(super) struct GzStream<R: BufRead> {
    state: State<R>,
    /// Members still to skip before the first one read.
    skip: u32,
    /// Members still to read, if limited.
    take: Option<u32>,
    /// Members begun so far (skipped ones included).
    begun: u32,
    /// The first bytes of a member, read to sniff it and not yet handed out.
    pending: Vec<u8>,
    pending_at: usize,
    monitor: Monitor,
}

enum State<R: BufRead> {
    /// Between members: the compressed input.
    Between(R),
    InMember(GzDecoder<R>),
    Done,
}

impl<R: BufRead> GzStream<R> {
    pub(super) fn new(input: R, skip: u32, take: Option<u32>, monitor: Monitor) -> Self {
        GzStream {
            state: State::Between(input),
            skip,
            take,
            begun: 0,
            pending: Vec::new(),
            pending_at: 0,
            monitor,
        }
    }

    /// Starts the next member, or ends the stream. Errors are the compressed data's.
    fn next_member(&mut self, mut input: R) -> io::Result<()> {
        if self.take == Some(0) {
            self.state = State::Done;
            return Ok(());
        }
        let at_start = self.begun == 0;
        if !at_start && only_zeros_left(&mut input)? {
            self.state = State::Done;
            return Ok(());
        }
        if input.fill_buf()?.is_empty() {
            // An empty file: no member at all.
            self.state = State::Done;
            return Ok(());
        }
        self.begun += 1;
        let mut decoder = GzDecoder::new(input);
        if self.skip > 0 {
            self.skip -= 1;
            io::copy(&mut decoder, &mut io::sink())?;
            self.state = State::Between(decoder.into_inner());
            // Members read so far count from the first one not skipped.
            if self.skip == 0 {
                self.begun = 0;
            }
            return Ok(());
        }
        if let Some(n) = &mut self.take {
            *n -= 1;
        }
        if self.begun > 1 {
            // A manifest after trace data is refused, as the reference refuses it.
            let mut head = Vec::new();
            (&mut decoder).take(256).read_to_end(&mut head)?;
            if crate::manifest::is_manifest(&head) {
                self.monitor.note(Fault::ManifestNotFirst);
                self.state = State::Done;
                return Ok(());
            }
            self.pending = head;
            self.pending_at = 0;
        }
        self.state = State::InMember(decoder);
        Ok(())
    }
}

impl<R: BufRead> Read for GzStream<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.pending_at < self.pending.len() {
                let n = buf.len().min(self.pending.len() - self.pending_at);
                buf[..n].copy_from_slice(&self.pending[self.pending_at..self.pending_at + n]);
                self.pending_at += n;
                return Ok(n);
            }
            match std::mem::replace(&mut self.state, State::Done) {
                State::Done => return Ok(0),
                State::Between(input) => self.next_member(input)?,
                State::InMember(mut decoder) => {
                    let n = decoder.read(buf)?;
                    if n > 0 {
                        self.state = State::InMember(decoder);
                        return Ok(n);
                    }
                    let mut input = decoder.into_inner();
                    // After a member: another member, padding, or data that is not gzip.
                    let rest = input.fill_buf()?;
                    if rest.is_empty() || rest[0] == 0 || rest.starts_with(&[0x1f, 0x8b]) {
                        self.state = State::Between(input);
                    } else {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            "data after the last gzip member is not gzip",
                        ));
                    }
                }
            }
        }
    }
}
