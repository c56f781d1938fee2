//! Where a trace file's bytes are and how to read them as a stream: a range of the input
//! file (or of bytes in memory), run through the decompressors its container needs. Nothing
//! is read whole: each [`Data::open`] gives a reader the parser pulls from.
//!
//! Reading never fails half-way on a broken container: a compressed stream that is cut
//! short or corrupt, or an archive member whose data runs past the end of the archive, ends
//! the stream where it broke and leaves a [`Fault`] on the [`Monitor`], so the parser keeps
//! what it read and the import counts the loss. Past the decompression limit the stream
//! ends too, with a fault the import turns into an error.

use std::cell::{Cell, RefCell};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

/// What the input is read from.
#[derive(Clone, Debug)]
pub enum Backing {
    File(PathBuf),
    Memory(Arc<[u8]>),
    /// An archive found inside another, decompressed to a temporary file: removed when the
    /// last member read from it is gone.
    Spilled(Arc<crate::cleanup::TempPath>),
}

/// Where a backing's bytes are.
enum Place<'a> {
    Disk(&'a std::path::Path),
    Memory(&'a Arc<[u8]>),
}

impl Backing {
    fn place(&self) -> Place<'_> {
        match self {
            Backing::File(path) => Place::Disk(path),
            Backing::Spilled(temp) => Place::Disk(temp.path()),
            Backing::Memory(bytes) => Place::Memory(bytes),
        }
    }

    /// A reader positioned at `offset`, and the backing's length.
    fn open_at(&self, offset: u64) -> io::Result<(Box<dyn Read>, u64)> {
        match self.place() {
            Place::Disk(path) => {
                let mut f = File::open(path)?;
                let len = f.metadata()?.len();
                f.seek(SeekFrom::Start(offset))?;
                Ok((Box::new(f), len))
            }
            Place::Memory(bytes) => {
                let mut c = io::Cursor::new(bytes.clone());
                c.set_position(offset);
                Ok((Box::new(c), bytes.len() as u64))
            }
        }
    }

    /// A seekable reader of the whole backing (to list an archive's members).
    pub(super) fn seekable(&self) -> io::Result<Box<dyn ReadSeek>> {
        match self.place() {
            Place::Disk(path) => Ok(Box::new(BufReader::new(File::open(path)?))),
            Place::Memory(bytes) => Ok(Box::new(io::Cursor::new(bytes.clone()))),
        }
    }

    pub(super) fn len(&self) -> io::Result<u64> {
        match self.place() {
            Place::Disk(path) => Ok(std::fs::metadata(path)?.len()),
            Place::Memory(bytes) => Ok(bytes.len() as u64),
        }
    }
}

pub(super) trait ReadSeek: Read + Seek {}
impl<T: Read + Seek> ReadSeek for T {}

/// A decompression step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Codec {
    /// Raw deflate (a deflated ZIP member).
    Deflate,
    /// No change, but the CRC-32 and size the archive records for the member are checked
    /// at its end.
    Check { crc: u32, size: u64 },
    /// gzip members, concatenated; the first `skip` members are skipped, and at most `take`
    /// are read.
    Gzip { skip: u32, take: Option<u32> },
}

/// The bytes of one file: a range of the backing, decompressed in turn by `codecs`.
#[derive(Clone, Debug)]
pub struct Data {
    pub backing: Backing,
    pub offset: u64,
    /// None: to the end of the backing.
    pub len: Option<u64>,
    pub codecs: Vec<Codec>,
    pub limits: Limits,
}

/// How far decompression may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes one decompressed stream may yield.
    pub max_decompressed: u64,
}

/// The environment variable that raises (or lowers) the decompression limit.
pub const LIMIT_ENV: &str = "SEXTANT_MAX_DECOMPRESSED";

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_decompressed: 16 << 30,
        }
    }
}

impl Limits {
    /// The default, or what [`LIMIT_ENV`] says (a size such as `64G`, `500M`, `1000000`).
    pub fn from_env() -> Result<Limits, String> {
        match std::env::var(LIMIT_ENV) {
            Ok(v) => Ok(Limits {
                max_decompressed: parse_size(&v)
                    .ok_or_else(|| format!("{LIMIT_ENV}={v}: not a size (e.g. 64G, 500M)"))?,
            }),
            Err(_) => Ok(Limits::default()),
        }
    }
}

/// A size in bytes, with an optional K/M/G/T suffix (powers of 1024; `B`/`iB` allowed).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(digits);
    let n: u64 = n.parse().ok()?;
    let unit = unit.trim().to_ascii_uppercase();
    let unit = unit.trim_end_matches("IB").trim_end_matches('B');
    let shift = match unit {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

/// A size for messages: `64 GiB`, `1.5 MiB`, `512 B`.
pub fn format_size(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 || v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[unit])
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// Why a stream ended before its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Decompressed output reached the limit.
    Limit { limit: u64 },
    /// A compressed stream cut short or corrupt; everything before was read.
    Compressed { problem: String },
    /// An archive member's data runs past the end of the archive.
    MemberCut { expected: u64, got: u64 },
    /// A perfetto manifest in a concatenated gzip stream after trace data.
    ManifestNotFirst,
}

impl Fault {
    /// What went wrong, for a message.
    pub fn describe(&self) -> String {
        match self {
            Fault::Limit { limit } => format!(
                "it decompresses to more than the limit of {} (raise it with --max-decompressed \
                 SIZE or {LIMIT_ENV}=SIZE)",
                format_size(*limit)
            ),
            Fault::Compressed { problem } => {
                format!("the compressed data is cut short or corrupt: {problem}")
            }
            Fault::MemberCut { expected, got } => format!(
                "the archive ends inside this member ({got} of its {expected} bytes are there)"
            ),
            Fault::ManifestNotFirst => "perfetto_manifest file must be the first trace file".into(),
        }
    }
}

/// What a stream's readers report as it is read.
#[derive(Clone, Default)]
pub struct Monitor {
    fault: Rc<RefCell<Option<Fault>>>,
    /// Bytes read from the backing (compressed bytes, for progress).
    stored: Rc<Cell<u64>>,
    /// Bytes handed to the parser.
    delivered: Rc<Cell<u64>>,
}

impl Monitor {
    pub fn fault(&self) -> Option<Fault> {
        self.fault.borrow().clone()
    }
    pub fn stored(&self) -> u64 {
        self.stored.get()
    }
    pub fn delivered(&self) -> u64 {
        self.delivered.get()
    }
    pub(super) fn note(&self, fault: Fault) {
        let mut slot = self.fault.borrow_mut();
        if slot.is_none() {
            *slot = Some(fault);
        }
    }
}

/// An open stream and what watches it.
pub struct Opened {
    pub reader: Box<dyn Read>,
    pub monitor: Monitor,
}

impl Data {
    /// The whole of a backing, as it is.
    pub fn whole(backing: Backing, limits: Limits) -> Data {
        Data {
            backing,
            offset: 0,
            len: None,
            codecs: Vec::new(),
            limits,
        }
    }

    /// The same bytes, decompressed once more by `codec`.
    pub fn then(&self, codec: Codec) -> Data {
        let mut d = self.clone();
        d.codecs.push(codec);
        d
    }

    /// How many bytes of the backing it spans (its stored, maybe compressed, size).
    pub fn stored_len(&self) -> u64 {
        match self.len {
            Some(len) => len,
            None => self.backing.len().unwrap_or(0).saturating_sub(self.offset),
        }
    }

    /// Its size once decoded, when known without reading it: the stored size, or the size
    /// a ZIP records for a deflated member. None for a stream still to be decompressed.
    pub fn declared_len(&self) -> Option<u64> {
        match self.codecs.as_slice() {
            [] => Some(self.stored_len()),
            [.., Codec::Check { size, .. }]
                if self
                    .codecs
                    .iter()
                    .all(|c| matches!(c, Codec::Deflate | Codec::Check { .. })) =>
            {
                Some(*size)
            }
            _ => None,
        }
    }

    /// Its decompressed size when it is not compressed (to size buffers), else a guess.
    pub fn size_hint(&self) -> u64 {
        let stored = self.stored_len();
        if self.codecs.iter().all(|c| matches!(c, Codec::Check { .. })) {
            stored
        } else {
            stored.saturating_mul(4)
        }
    }

    /// Starts reading.
    pub fn open(&self) -> io::Result<Opened> {
        let monitor = Monitor::default();
        let (base, backing_len) = self.backing.open_at(self.offset)?;
        let available = backing_len.saturating_sub(self.offset);
        let mut reader: Box<dyn Read> = match self.len {
            Some(len) => Box::new(Exact {
                inner: base.take(len),
                expected: len,
                got: 0,
                cut: len > available,
                monitor: monitor.clone(),
            }),
            None => base,
        };
        reader = Box::new(Counting {
            inner: reader,
            count: monitor.stored.clone(),
        });
        for codec in &self.codecs {
            let decoded: Box<dyn Read> = match codec {
                Codec::Deflate => Box::new(flate2::read::DeflateDecoder::new(reader)),
                Codec::Check { crc, size } => {
                    reader = Box::new(CrcCheck {
                        inner: reader,
                        crc: flate2::Crc::new(),
                        expected_crc: *crc,
                        expected_size: *size,
                        monitor: monitor.clone(),
                        done: false,
                    });
                    continue;
                }
                Codec::Gzip { skip, take } => Box::new(super::gzip::GzStream::new(
                    BufReader::with_capacity(1 << 16, reader),
                    *skip,
                    *take,
                    monitor.clone(),
                )),
            };
            reader = Box::new(Guard {
                inner: decoded,
                produced: 0,
                limit: self.limits.max_decompressed,
                monitor: monitor.clone(),
                ended: false,
            });
        }
        let reader = Box::new(Counting {
            inner: reader,
            count: monitor.delivered.clone(),
        });
        Ok(Opened { reader, monitor })
    }

    /// The first `n` bytes (fewer if the stream is shorter), for sniffing.
    pub fn head(&self, n: usize) -> io::Result<(Vec<u8>, Option<Fault>)> {
        let mut opened = self.open()?;
        let mut head = Vec::with_capacity(n);
        (&mut opened.reader).take(n as u64).read_to_end(&mut head)?;
        Ok((head, opened.monitor.fault()))
    }
}

/// Counts the bytes that pass.
struct Counting<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

/// A member of known length: ending early (the archive is cut) is a fault.
struct Exact<R> {
    inner: R,
    expected: u64,
    got: u64,
    /// Known at open: the backing is shorter than the member.
    cut: bool,
    monitor: Monitor,
}

impl<R: Read> Read for Exact<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.got += n as u64;
        if n == 0 && !buf.is_empty() && (self.cut || self.got < self.expected) {
            self.monitor.note(Fault::MemberCut {
                expected: self.expected,
                got: self.got,
            });
        }
        Ok(n)
    }
}

/// Checks a ZIP member's CRC-32 and size at its end.
struct CrcCheck<R> {
    inner: R,
    crc: flate2::Crc,
    expected_crc: u32,
    expected_size: u64,
    monitor: Monitor,
    done: bool,
}

impl<R: Read> Read for CrcCheck<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(out) = buf.get(..n) {
            self.crc.update(out);
        }
        if n == 0 && !buf.is_empty() && !self.done {
            self.done = true;
            let size = u64::from(self.crc.amount());
            // The CRC's byte count wraps at 4 GiB; compare sizes modulo that too.
            if size != self.expected_size & 0xffff_ffff || self.crc.sum() != self.expected_crc {
                self.monitor.note(Fault::Compressed {
                    problem: format!(
                        "the member decompresses to {size} bytes with CRC {:08x}; the archive \
                         records {} bytes with CRC {:08x}",
                        self.crc.sum(),
                        self.expected_size,
                        self.expected_crc
                    ),
                });
            }
        }
        Ok(n)
    }
}

/// Around a decompressor: its errors end the stream with a fault instead of failing the
/// read, and its output stops at the limit.
struct Guard<R> {
    inner: R,
    produced: u64,
    limit: u64,
    monitor: Monitor,
    ended: bool,
}

impl<R: Read> Read for Guard<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ended {
            return Ok(0);
        }
        let room = self.limit.saturating_sub(self.produced);
        if room == 0 {
            // Is there more? One byte says.
            let mut probe = [0u8; 1];
            if matches!(self.inner.read(&mut probe), Ok(n) if n > 0) {
                self.monitor.note(Fault::Limit { limit: self.limit });
            }
            self.ended = true;
            return Ok(0);
        }
        let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        match self.inner.read(&mut buf[..want]) {
            Ok(n) => {
                self.produced += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                self.monitor.note(Fault::Compressed {
                    problem: e.to_string(),
                });
                self.ended = true;
                Ok(0)
            }
        }
    }
}

/// Reads `reader` to its end, at most `max` bytes; more is an error naming `what`.
pub fn read_bounded(reader: &mut dyn Read, max: u64, what: &str) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    reader.take(max + 1).read_to_end(&mut out)?;
    if out.len() as u64 > max {
        return Err(io::Error::other(format!(
            "{what} is larger than {}",
            format_size(max)
        )));
    }
    Ok(out)
}

/// Copies `reader` (at most `max` bytes, else the error [`read_bounded`] gives) into a
/// private temporary file, which becomes the backing: an archive found inside another is
/// listed and read from disk, never held in memory whole.
pub fn spill(reader: &mut dyn Read, max: u64, what: &str) -> io::Result<Backing> {
    let temp = crate::cleanup::TempPath::nested_archive();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = io::BufWriter::with_capacity(1 << 20, options.open(temp.path())?);
    let copied = io::copy(&mut reader.take(max + 1), &mut file)?;
    io::Write::flush(&mut file)?;
    if copied > max {
        return Err(io::Error::other(format!(
            "{what} is larger than {}",
            format_size(max)
        )));
    }
    Ok(Backing::Spilled(Arc::new(temp)))
}

/// Whether a buffered reader has nothing left but zero bytes (padding some tools write
/// after compressed data); consumes them.
pub(super) fn only_zeros_left(r: &mut dyn BufRead) -> io::Result<bool> {
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(true);
        }
        let zeros = buf.iter().take_while(|&&b| b == 0).count();
        if zeros < buf.len() {
            r.consume(zeros);
            return Ok(false);
        }
        let n = buf.len();
        r.consume(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A nested archive is read from a private temporary file that goes with the last
    /// reader of it; past the limit nothing is kept.
    #[test]
    fn a_spilled_archive_is_on_disk_until_its_last_reader_goes() {
        let backing = spill(&mut &b"PK\x03\x04 archive bytes"[..], 1 << 20, "inner.zip").unwrap();
        let Backing::Spilled(temp) = &backing else {
            panic!("not spilled: {backing:?}");
        };
        let path = temp.path().to_path_buf();
        assert!(path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with(".archive")));
        assert_eq!(backing.len().unwrap(), 18);
        let mut read = Vec::new();
        backing.seekable().unwrap().read_to_end(&mut read).unwrap();
        assert_eq!(read, b"PK\x03\x04 archive bytes");
        let copy = backing.clone();
        drop(backing);
        assert!(path.exists(), "removed while a reader remains");
        drop(copy);
        assert!(!path.exists(), "left behind");

        let err = spill(&mut &[0u8; 100][..], 10, "big.tar").unwrap_err();
        assert!(err.to_string().contains("big.tar is larger than"), "{err}");
    }

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("1000"), Some(1000));
        assert_eq!(parse_size("64G"), Some(64 << 30));
        assert_eq!(parse_size("500 MiB"), Some(500 << 20));
        assert_eq!(parse_size("2kb"), Some(2048));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("1Q"), None);
        assert_eq!(format_size(64 << 30), "64 GiB");
        assert_eq!(format_size(1536 << 10), "1.5 MiB");
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).expect("gzip");
        e.finish().expect("gzip")
    }

    fn memory(bytes: Vec<u8>, limit: u64) -> Data {
        Data::whole(
            Backing::Memory(bytes.into()),
            Limits {
                max_decompressed: limit,
            },
        )
    }

    #[test]
    fn a_stream_that_inflates_past_the_limit_ends_there_with_a_fault() {
        let bomb = gzip(&vec![0u8; 64 << 20]);
        let data = memory(bomb, 1 << 20).then(Codec::Gzip {
            skip: 0,
            take: None,
        });
        let mut opened = data.open().expect("open");
        let mut sink = Vec::new();
        opened.reader.read_to_end(&mut sink).expect("read");
        assert_eq!(sink.len(), 1 << 20);
        assert_eq!(
            opened.monitor.fault(),
            Some(Fault::Limit { limit: 1 << 20 })
        );
    }

    #[test]
    fn a_stream_exactly_at_the_limit_is_whole() {
        let data = memory(gzip(&[7u8; 1000]), 1000).then(Codec::Gzip {
            skip: 0,
            take: None,
        });
        let mut opened = data.open().expect("open");
        let mut out = Vec::new();
        opened.reader.read_to_end(&mut out).expect("read");
        assert_eq!(out.len(), 1000);
        assert_eq!(opened.monitor.fault(), None);
    }

    #[test]
    fn a_cut_gzip_keeps_what_it_decoded_and_says_so() {
        let text: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let gz = gzip(&text);
        let cut = gz[..gz.len() / 2].to_vec();
        let data = memory(cut, 1 << 30).then(Codec::Gzip {
            skip: 0,
            take: None,
        });
        let mut opened = data.open().expect("open");
        let mut out = Vec::new();
        opened.reader.read_to_end(&mut out).expect("read");
        assert!(!out.is_empty() && out.len() < text.len());
        assert_eq!(&out[..], &text[..out.len()]);
        assert!(matches!(
            opened.monitor.fault(),
            Some(Fault::Compressed { .. })
        ));
    }

    #[test]
    fn a_member_past_the_end_of_the_backing_is_a_cut() {
        let mut data = memory(vec![1u8; 100], 1 << 30);
        data.offset = 50;
        data.len = Some(80);
        let mut opened = data.open().expect("open");
        let mut out = Vec::new();
        opened.reader.read_to_end(&mut out).expect("read");
        assert_eq!(out.len(), 50);
        assert_eq!(
            opened.monitor.fault(),
            Some(Fault::MemberCut {
                expected: 80,
                got: 50
            })
        );
    }
}
