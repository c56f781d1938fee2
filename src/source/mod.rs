//! Opens an input and lists the trace files in it, each sniffed by content (never by name):
//! ZIP and TAR archives, gzip streams, perfetto manifests, protobuf, JSON and systrace.
//!
//! Nothing is read whole here: a file is a [`Data`] (a range of the input, decompressed as
//! its container requires) that the parser streams from; only the first few KB of each are
//! read, to tell what it is.

mod archive;
mod gzip;
mod stream;

pub use stream::{
    format_size, parse_size, read_bounded, Backing, Codec, Data, Fault, Limits, Monitor, Opened,
    LIMIT_ENV,
};

use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Proto,
    Json,
    Systrace,
    /// strace text (`strace -f -ttt`).
    Strace,
    Manifest,
    Zip,
    Tar,
    Gzip,
    /// Several files (or a directory) opened together: a container, as an archive without
    /// a manifest would be.
    Loose,
    Unknown,
}

impl Kind {
    /// The `trace_type` Trace Processor writes into `__intrinsic_trace_file`.
    pub fn trace_type(self) -> &'static str {
        match self {
            Kind::Proto => "proto",
            Kind::Json => "json",
            Kind::Systrace => "systrace",
            Kind::Strace => "strace",
            Kind::Manifest => "perfetto_manifest",
            Kind::Zip => "zip",
            Kind::Tar => "tar",
            Kind::Gzip => "gzip",
            Kind::Loose => "files",
            Kind::Unknown => "unknown",
        }
    }

    pub fn is_container(self) -> bool {
        matches!(self, Kind::Zip | Kind::Tar | Kind::Gzip | Kind::Loose)
    }

    /// Processing priority inside an archive: manifest, proto, containers, the rest.
    fn priority(self) -> i32 {
        match self {
            Kind::Manifest => -1,
            Kind::Proto => 0,
            Kind::Zip | Kind::Tar | Kind::Gzip | Kind::Loose => 1,
            _ => 2,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    // The io error is part of the message, not a `source`, so it is printed once.
    #[error("cannot read {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("{name}: {problem}")]
    Corrupt { name: String, problem: String },
    #[error(
        "{name}: an archive inside an archive may hold one trace only, and this one holds \
         several (recursive synchronization is not supported): merge its files directly"
    )]
    NestedArchive { name: String },
}

/// One input file: the archive itself, or a trace inside it.
#[derive(Debug)]
pub struct TraceFile {
    /// Member path inside the parent; `None` for the top-level input.
    pub name: Option<String>,
    pub kind: Kind,
    /// Where its bytes are; `None` for a container (its members are files of their own).
    pub data: Option<Data>,
    /// Its size as stored: the input's length, a member's (compressed) size in its archive.
    /// A decompressed stream's size is known once it is read.
    pub size: u64,
    /// Index of the containing file in the list.
    pub parent: Option<usize>,
    /// Its `__intrinsic_trace_file` id: the input 0, then, as each container is processed,
    /// its members in archive order (an archive's when it is listed, a decompressed stream
    /// when its gzip is processed); the list itself is in processing order.
    pub row: usize,
    /// Name for messages when the file has no name of its own (a decompressed stream).
    pub origin: Option<String>,
    /// What is wrong with a container that was read anyway (a ZIP without its central
    /// directory, a TAR cut short, a member with nothing readable left): the stat that
    /// counts it, and what happened.
    pub problems: Vec<(&'static str, String)>,
}

impl TraceFile {
    /// Name for messages: the member path, the stream it was decompressed from, or the
    /// input path for the top-level file.
    pub fn display_name<'a>(&'a self, input: &'a str) -> &'a str {
        match (&self.name, &self.origin) {
            (Some(n), _) if !n.is_empty() => n,
            (_, Some(origin)) => origin,
            _ => input,
        }
    }
}

fn skip_ws(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    &bytes[start..]
}

fn starts_with_ci(bytes: &[u8], prefix: &[u8]) -> bool {
    bytes.len() >= prefix.len() && bytes[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// Guesses what a file is from its first bytes.
pub fn sniff(bytes: &[u8]) -> Kind {
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        return Kind::Zip;
    }
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Kind::Gzip;
    }
    if bytes.len() >= 262 && &bytes[257..262] == b"ustar" {
        return Kind::Tar;
    }
    if crate::manifest::is_manifest(bytes) {
        return Kind::Manifest;
    }
    let text = skip_ws(bytes);
    if let Some(rest) = text.strip_prefix(b"{") {
        if skip_ws(rest).starts_with(b"\"") {
            return Kind::Json;
        }
    }
    if let Some(rest) = text.strip_prefix(b"[") {
        let rest = skip_ws(rest);
        if rest.starts_with(b"{") || rest.starts_with(b"]") {
            return Kind::Json;
        }
    }
    let head = &bytes[..bytes.len().min(4096)];
    let head_has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    // Trace Processor looks for the systrace markers in its 64-byte lookahead before it
    // takes a leading 0x0a (`\n`) as a protobuf packet: text with blank lines before
    // `# tracer` is systrace.
    let lookahead = &bytes[..bytes.len().min(64)];
    let lookahead_has = |needle: &[u8]| lookahead.windows(needle.len()).any(|w| w == needle);
    if bytes.first() == Some(&0x0a) {
        if lookahead_has(b"# tracer") || lookahead_has(b"TRACE:\n") {
            return Kind::Systrace;
        }
        return Kind::Proto;
    }
    if head_has(b"# tracer")
        || head_has(b"TRACE:\n")
        || starts_with_ci(text, b"<!doctype html>")
        || starts_with_ci(text, b"<html>")
        || bytes.starts_with(b"cpus=")
        || bytes.starts_with(b" ")
    {
        return Kind::Systrace;
    }
    if crate::parse::strace::looks_like_strace(head) {
        return Kind::Strace;
    }
    // A proto trace may also start with a packet of another top-level field number; only
    // field 1 (TracePacket) is valid, so anything else is unknown.
    Kind::Unknown
}

/// How many bytes of a file are read to tell what it is.
const SNIFF_BYTES: usize = 4096;

/// The first bytes of `data` and what they say it is.
fn sniff_data(name: &str, data: &Data) -> Result<(Kind, Option<Fault>), SourceError> {
    let (head, fault) = data.head(SNIFF_BYTES).map_err(|error| SourceError::Read {
        path: name.to_string(),
        error,
    })?;
    Ok((sniff(&head), fault))
}

/// Opens a path (with the decompression limit of [`Limits::from_env`]) and lists the files
/// to process, in processing order.
pub fn open(path: &Path) -> Result<Vec<TraceFile>, SourceError> {
    let limits = Limits::from_env().map_err(|problem| SourceError::Corrupt {
        name: LIMIT_ENV.to_string(),
        problem,
    })?;
    open_with(path, limits)
}

/// Like [`open`], with the limits given.
pub fn open_with(path: &Path, limits: Limits) -> Result<Vec<TraceFile>, SourceError> {
    let name = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|error| SourceError::Read {
        path: name.clone(),
        error,
    })?;
    if meta.is_dir() {
        return Err(SourceError::Read {
            path: name,
            error: std::io::Error::other("it is a directory, not a trace file"),
        });
    }
    list(&name, Backing::File(path.to_path_buf()), limits)
}

/// Opens several paths as one merge: each file (or each file under a directory, hidden ones
/// skipped) is a member named by its base name (its path under a directory), exactly as if
/// they were the members of one archive without a manifest. One plain file opens as
/// [`open`] does.
pub fn open_paths(paths: &[PathBuf]) -> Result<Vec<TraceFile>, SourceError> {
    if let [one] = paths {
        if !one.is_dir() {
            return open(one);
        }
    }
    open_merge(paths, None)
}

/// The name `sextant merge` gives the manifest it writes.
pub const MANIFEST_NAME: &str = "perfetto_manifest.json";

/// Like [`open_paths`], always as a merge of loose files, with `manifest` (if any) as one
/// more member named [`MANIFEST_NAME`]: what `sextant merge` will write, before writing it.
pub fn open_merge(
    paths: &[PathBuf],
    manifest: Option<Vec<u8>>,
) -> Result<Vec<TraceFile>, SourceError> {
    let limits = Limits::from_env().map_err(|problem| SourceError::Corrupt {
        name: LIMIT_ENV.to_string(),
        problem,
    })?;
    let name = loose_name(paths);
    let mut members = Vec::new();
    if let Some(bytes) = manifest {
        members.push(archive::Member {
            name: MANIFEST_NAME.to_string(),
            data: Data::whole(Backing::Memory(Arc::from(bytes)), limits),
        });
    }
    // Members found in a directory (not named one by one): what they are is checked below.
    let mut listed: Vec<String> = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|error| SourceError::Read {
            path: path.display().to_string(),
            error,
        })?;
        if is_database(path) {
            return Err(SourceError::Corrupt {
                name: path.display().to_string(),
                problem: "is a database (written by sextant import): a database cannot be \
                          merged with traces; open it alone, or merge the traces it was made \
                          from"
                    .into(),
            });
        }
        if meta.is_dir() {
            let before = members.len();
            list_directory(path, path, limits, &mut members)?;
            listed.extend(members[before..].iter().map(|m| m.name.clone()));
        } else {
            let base = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string());
            members.push(archive::Member {
                name: base,
                data: Data::whole(Backing::File(path.clone()), limits),
            });
        }
    }
    // Members are matched by name (the manifest, `sextant merge`): a name twice is an error.
    let mut names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(SourceError::Corrupt {
            name: name.clone(),
            problem: format!(
                "two files are named {:?}: files opened together are told apart by their \
                 names, so rename one",
                w[0]
            ),
        });
    }
    if members.is_empty() {
        return Err(SourceError::Corrupt {
            name,
            problem: "there is no file to open".into(),
        });
    }
    let mut files = vec![TraceFile {
        name: None,
        kind: Kind::Loose,
        data: None,
        size: members.iter().map(|m| m.data.stored_len()).sum(),
        parent: None,
        row: 0,
        origin: None,
        problems: Vec::new(),
    }];
    add_members(&name, members, &mut files, 0, Nesting::Loose).map_err(|e| match e {
        // Among loose files, an archive is one file of the merge: say what to do.
        SourceError::NestedArchive { name } => SourceError::Corrupt {
            name,
            problem: "an archive cannot be one of several files opened together (Sextant opens \
                      one archive at a time): open it on its own, or unpack its members beside \
                      the other files"
                .into(),
        },
        other => other,
    })?;
    number_rows(&mut files);
    // A file in a directory that is no trace (a README, an empty file) fails the merge
    // with what it is and what to do, rather than as an unknown trace type.
    for f in files.iter().skip(1) {
        let Some(member) = f.name.as_deref().filter(|n| listed.iter().any(|l| l == n)) else {
            continue;
        };
        if f.kind == Kind::Unknown {
            let what = if f.size == 0 {
                "an empty file".to_string()
            } else {
                format!("{} bytes that are no trace Sextant reads", f.size)
            };
            return Err(SourceError::Corrupt {
                name: format!("{name}: {member}"),
                problem: format!(
                    "not a trace ({what}): a directory opens as a merge of every file in it; \
                     move it out, or name the traces to open"
                ),
            });
        }
    }
    Ok(files)
}

/// Whether `path` is an SQLite database (its 16-byte header).
fn is_database(path: &Path) -> bool {
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| &head == b"SQLite format 3\0")
}

/// How several paths are named in messages.
pub fn loose_name(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The files under `dir` (not hidden), named by their path under `root`, in name order.
fn list_directory(
    root: &Path,
    dir: &Path,
    limits: Limits,
    out: &mut Vec<archive::Member>,
) -> Result<(), SourceError> {
    let read_error = |error| SourceError::Read {
        path: dir.display().to_string(),
        error,
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read_error)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(read_error)?;
    entries.sort();
    for path in entries {
        let relative = path
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_else(|_| path.display().to_string());
        if archive::is_hidden(&relative) {
            continue;
        }
        if path.is_dir() {
            list_directory(root, &path, limits, out)?;
        } else if path.is_file() {
            out.push(archive::Member {
                name: relative,
                data: Data::whole(Backing::File(path), limits),
            });
        }
    }
    Ok(())
}

/// Like [`open`], from bytes already in memory (the embedded demo, tests).
pub fn open_bytes(input_name: &str, bytes: Vec<u8>) -> Result<Vec<TraceFile>, SourceError> {
    list(
        input_name,
        Backing::Memory(Arc::from(bytes)),
        Limits::default(),
    )
}

fn list(input_name: &str, backing: Backing, limits: Limits) -> Result<Vec<TraceFile>, SourceError> {
    let size = backing.len().map_err(|error| SourceError::Read {
        path: input_name.to_string(),
        error,
    })?;
    let whole = Data::whole(backing.clone(), limits);
    let (kind, _) = sniff_data(input_name, &whole)?;
    let mut files = vec![TraceFile {
        name: None,
        kind,
        data: (!kind.is_container()).then(|| whole.clone()),
        size,
        parent: None,
        row: 0,
        origin: None,
        problems: Vec::new(),
    }];
    match kind {
        Kind::Zip | Kind::Tar => {
            let listing = if kind == Kind::Zip {
                archive::zip(input_name, &backing, limits)?
            } else {
                archive::tar(input_name, &backing, limits)?
            };
            if let Some(problem) = listing.problem {
                files[0].problems.push(("archive_damaged", problem));
            }
            add_members(input_name, listing.members, &mut files, 0, Nesting::Merge)?;
        }
        Kind::Gzip => gunzip_children(input_name, &whole, 0, &mut files, Nesting::Merge)?,
        _ => {}
    }
    number_rows(&mut files);
    Ok(files)
}

/// Where an archive sits, which says whether archives inside it may be read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Nesting {
    /// The input itself (or the one stream of a gzip'd input): the merge. An archive among
    /// its members is read when it holds a single trace.
    Merge,
    /// An archive inside the merge: it may hold one trace only (the spec: "an archive that
    /// itself contains multiple traces cannot be nested inside another merge").
    Nested,
    /// Loose files opened together: an archive among them is refused.
    Loose,
}

/// Adds an archive's (or a set of loose files') members to the list, sniffed, in processing
/// order, under the container at `parent`: each is a file of its own, a gzip'd one a
/// container of its decompressed stream, an archive (when `nesting` allows it) a container
/// of its members, listed recursively right after it (Trace Processor processes a container
/// when it meets it). `row` holds each member's position in its archive until
/// [`number_rows`] numbers the whole list.
fn add_members(
    input_name: &str,
    members: Vec<archive::Member>,
    files: &mut Vec<TraceFile>,
    parent: usize,
    nesting: Nesting,
) -> Result<(), SourceError> {
    let mut sorted = Vec::with_capacity(members.len());
    for m in members {
        let (k, fault) = sniff_data(&format!("{input_name}: {}", m.name), &m.data)?;
        if let (Kind::Unknown, Some(fault)) = (k, &fault) {
            // Cut or corrupt before anything readable: nothing of it can be kept.
            let problem = format!("{}: {}", m.name, fault.describe());
            files[0]
                .problems
                .push(("archive_member_truncated", problem));
            continue;
        }
        sorted.push((sorted.len(), m, k));
    }
    if nesting == Nesting::Nested && sorted.len() > 1 {
        return Err(SourceError::NestedArchive {
            name: input_name.to_string(),
        });
    }
    let inner = match nesting {
        Nesting::Loose => Nesting::Loose,
        Nesting::Merge | Nesting::Nested => Nesting::Nested,
    };
    sorted.sort_by(|a, b| (a.2.priority(), &a.1.name, a.0).cmp(&(b.2.priority(), &b.1.name, b.0)));
    for (at, m, k) in sorted {
        let size = m.data.len.unwrap_or(0);
        let container = k.is_container();
        let index = files.len();
        files.push(TraceFile {
            name: Some(m.name.clone()),
            kind: k,
            data: (!container).then(|| m.data.clone()),
            size,
            parent: Some(parent),
            row: at,
            origin: None,
            problems: Vec::new(),
        });
        match k {
            Kind::Zip | Kind::Tar if inner == Nesting::Loose => {
                return Err(SourceError::NestedArchive { name: m.name });
            }
            Kind::Zip | Kind::Tar => {
                add_archive(&m.name, k, &m.data, files, index, inner)?;
            }
            Kind::Gzip => gunzip_children(&m.name, &m.data, index, files, inner)?,
            _ => {}
        }
    }
    Ok(())
}

/// Lists the members of the ZIP or TAR archive in `data` (a member of another container,
/// decompressed to a temporary file first) under the container at `parent`.
fn add_archive(
    name: &str,
    kind: Kind,
    data: &Data,
    files: &mut Vec<TraceFile>,
    parent: usize,
    nesting: Nesting,
) -> Result<(), SourceError> {
    let read_error = |error| SourceError::Read {
        path: name.to_string(),
        error,
    };
    let mut opened = data.open().map_err(read_error)?;
    let backing = stream::spill(&mut opened.reader, data.limits.max_decompressed, name)
        .map_err(read_error)?;
    // Read whole: its size is what it holds, as for any file once parsed.
    files[parent].size = backing.len().map_err(read_error)?;
    let listing = if kind == Kind::Zip {
        archive::zip(name, &backing, data.limits)?
    } else {
        archive::tar(name, &backing, data.limits)?
    };
    if let Some(problem) = listing.problem {
        files[0].problems.push(("archive_damaged", problem));
    }
    add_members(name, listing.members, files, parent, nesting)
}

/// Numbers the `__intrinsic_trace_file` rows as Trace Processor inserts them: the input 0,
/// then, each time a container is processed (in processing order, which is the list's),
/// its children in their archive order (`row` holds that position until now).
fn number_rows(files: &mut [TraceFile]) {
    // Each container's children, found in one pass (an archive may hold thousands).
    let mut children_of: Vec<Vec<usize>> = vec![Vec::new(); files.len()];
    for (j, f) in files.iter().enumerate() {
        if let Some(list) = f.parent.and_then(|p| children_of.get_mut(p)) {
            list.push(j);
        }
    }
    let mut rows = vec![0usize; files.len()];
    let mut next = 1;
    for i in 0..files.len() {
        if !files[i].kind.is_container() {
            continue;
        }
        let mut children = std::mem::take(&mut children_of[i]);
        children.sort_by_key(|&j| files[j].row);
        for j in children {
            rows[j] = next;
            next += 1;
        }
    }
    for (f, row) in files.iter_mut().zip(rows) {
        f.row = row;
    }
}

/// The decompressed files of a gzip stream: one, or a leading manifest member and the
/// trace after it. A stream that holds an archive is that archive's container; a gzip'd
/// stream is decompressed again.
fn gunzip_children(
    name: &str,
    compressed: &Data,
    parent: usize,
    files: &mut Vec<TraceFile>,
    nesting: Nesting,
) -> Result<(), SourceError> {
    // Like any file once read, a gzip's size is the bytes it takes in: a deflated ZIP
    // member's inflated size, not its stored one (behaviour-merging.md §7).
    if let Some(len) = compressed.declared_len() {
        files[parent].size = len;
    }
    let all = compressed.then(Codec::Gzip {
        skip: 0,
        take: None,
    });
    let first = compressed.then(Codec::Gzip {
        skip: 0,
        take: Some(1),
    });
    let (first_kind, fault) = sniff_data(name, &first)?;
    if let Some(Fault::Compressed { problem }) = fault.filter(|_| first_kind == Kind::Unknown) {
        // Nothing readable at all: the stream is corrupt from its start.
        return Err(SourceError::Corrupt {
            name: name.to_string(),
            problem: format!("gzip data is corrupt: {problem}"),
        });
    }
    let mut children = Vec::new();
    if first_kind == Kind::Manifest {
        children.push((Kind::Manifest, first));
        let rest = compressed.then(Codec::Gzip {
            skip: 1,
            take: None,
        });
        let (rest_head, _) = rest.head(SNIFF_BYTES).map_err(|error| SourceError::Read {
            path: name.to_string(),
            error,
        })?;
        if !rest_head.is_empty() {
            children.push((sniff(&rest_head), rest));
        }
    } else {
        let (kind, _) = sniff_data(name, &all)?;
        children.push((kind, all));
    }
    for (at, (kind, data)) in children.into_iter().enumerate() {
        let container = kind.is_container();
        let index = files.len();
        files.push(TraceFile {
            name: Some(String::new()),
            kind,
            data: (!container).then(|| data.clone()),
            size: 0,
            parent: Some(parent),
            row: at,
            origin: Some(format!("{name} (decompressed)")),
            problems: Vec::new(),
        });
        match kind {
            Kind::Zip | Kind::Tar if nesting == Nesting::Loose => {
                return Err(SourceError::NestedArchive {
                    name: name.to_string(),
                });
            }
            Kind::Zip | Kind::Tar => add_archive(name, kind, &data, files, index, nesting)?,
            Kind::Gzip => gunzip_children(name, &data, index, files, nesting)?,
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_by_content() {
        assert_eq!(sniff(b"\x0a\x02\x08\x01"), Kind::Proto);
        assert_eq!(sniff(b"  {\"traceEvents\": []}"), Kind::Json);
        assert_eq!(sniff(b"[{\"ph\":\"X\"}"), Kind::Json);
        assert_eq!(sniff(b"{\"perfetto_manifest\": {}}"), Kind::Manifest);
        assert_eq!(sniff(b"# tracer: nop\n"), Kind::Systrace);
        assert_eq!(sniff(b"\n\n# tracer: nop\n"), Kind::Systrace);
        assert_eq!(
            sniff(b"\ncapturing trace... done\nTRACE:\n# tracer"),
            Kind::Systrace
        );
        assert_eq!(sniff(b"\x0a\x02\x08\x01"), Kind::Proto);
        assert_eq!(sniff(b"PK\x03\x04rest"), Kind::Zip);
        assert_eq!(sniff(b"\x1f\x8b\x08"), Kind::Gzip);
        assert_eq!(sniff(b"hello world"), Kind::Unknown);
    }
}
