//! Opens an input and lists the trace files in it, each sniffed by content (never by name):
//! ZIP and TAR archives, gzip streams, perfetto manifests, protobuf, JSON and systrace.

use std::io::Read;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Proto,
    Json,
    Systrace,
    Manifest,
    Zip,
    Tar,
    Gzip,
    Unknown,
}

impl Kind {
    /// The `trace_type` Trace Processor writes into `__intrinsic_trace_file`.
    pub fn trace_type(self) -> &'static str {
        match self {
            Kind::Proto => "proto",
            Kind::Json => "json",
            Kind::Systrace => "systrace",
            Kind::Manifest => "perfetto_manifest",
            Kind::Zip => "zip",
            Kind::Tar => "tar",
            Kind::Gzip => "gzip",
            Kind::Unknown => "unknown",
        }
    }

    pub fn is_container(self) -> bool {
        matches!(self, Kind::Zip | Kind::Tar | Kind::Gzip)
    }

    /// Processing priority inside an archive: manifest, proto, containers, the rest.
    fn priority(self) -> i32 {
        match self {
            Kind::Manifest => -1,
            Kind::Proto => 0,
            Kind::Zip | Kind::Tar | Kind::Gzip => 1,
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
    #[error("{name}: an archive inside an archive is not supported (recursive synchronization is not supported)")]
    NestedArchive { name: String },
}

/// One input file: the archive itself, or a trace inside it.
#[derive(Debug)]
pub struct TraceFile {
    /// Member path inside the parent; `None` for the top-level input.
    pub name: Option<String>,
    pub kind: Kind,
    pub bytes: Vec<u8>,
    pub size: u64,
    /// Index of the containing file in the list.
    pub parent: Option<usize>,
    /// Name for messages when the file has no name of its own (a decompressed stream).
    pub origin: Option<String>,
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
    if bytes.first() == Some(&0x0a) {
        return Kind::Proto;
    }
    let head = &bytes[..bytes.len().min(4096)];
    let head_has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    if head_has(b"# tracer")
        || head_has(b"TRACE:\n")
        || starts_with_ci(text, b"<!doctype html>")
        || starts_with_ci(text, b"<html>")
        || bytes.starts_with(b"cpus=")
        || bytes.starts_with(b" ")
    {
        return Kind::Systrace;
    }
    // A proto trace may also start with a packet of another top-level field number; only
    // field 1 (TracePacket) is valid, so anything else is unknown.
    Kind::Unknown
}

/// Hidden members (a path component starting with `.`, other than `.` and `..`) are skipped.
fn is_hidden(path: &str) -> bool {
    path.split('/')
        .any(|c| c.starts_with('.') && c != "." && c != "..")
}

/// Decompresses a gzip stream member by member (several members may be concatenated). The
/// members form one file — a trace split across members continues, with its sequence state —
/// except that a manifest member is a file of its own, so a stream may carry a manifest
/// followed by the trace it configures.
fn gunzip(name: &str, bytes: &[u8]) -> Result<Vec<Vec<u8>>, SourceError> {
    let corrupt = |e: std::io::Error| SourceError::Corrupt {
        name: name.to_string(),
        problem: format!("gzip data is corrupt: {e}"),
    };
    let mut files: Vec<Vec<u8>> = Vec::new();
    let mut rest = bytes;
    let mut last_was_manifest = false;
    while !rest.is_empty() {
        let mut decoder = flate2::bufread::GzDecoder::new(rest);
        let mut member = Vec::new();
        decoder.read_to_end(&mut member).map_err(corrupt)?;
        rest = decoder.into_inner();
        let is_manifest = sniff(&member) == Kind::Manifest;
        match files.last_mut() {
            Some(file) if !is_manifest && !last_was_manifest => file.extend_from_slice(&member),
            _ => files.push(member),
        }
        last_was_manifest = is_manifest;
        // Padding after the last member (some tools write zeros) is not another member.
        if rest.iter().all(|&b| b == 0) {
            break;
        }
    }
    if files.is_empty() {
        files.push(Vec::new());
    }
    Ok(files)
}

/// Reads a path and unpacks it into the ordered list of files to process.
pub fn open(path: &Path) -> Result<Vec<TraceFile>, SourceError> {
    let bytes = std::fs::read(path).map_err(|error| SourceError::Read {
        path: path.display().to_string(),
        error,
    })?;
    open_bytes(&path.display().to_string(), bytes)
}

/// Like [`open`], from bytes already in memory (the embedded demo, tests).
pub fn open_bytes(input_name: &str, bytes: Vec<u8>) -> Result<Vec<TraceFile>, SourceError> {
    let kind = sniff(&bytes);
    let size = bytes.len() as u64;
    let mut files = vec![TraceFile {
        name: None,
        kind,
        bytes,
        size,
        parent: None,
        origin: None,
    }];
    match kind {
        Kind::Zip | Kind::Tar => {
            let members = if kind == Kind::Zip {
                zip_members(input_name, &files[0].bytes)?
            } else {
                tar_members(input_name, &files[0].bytes)?
            };
            let top = std::mem::take(&mut files[0].bytes);
            drop(top);
            let mut sorted: Vec<(usize, String, Vec<u8>, Kind)> = members
                .into_iter()
                .enumerate()
                .map(|(i, (name, data))| {
                    let k = sniff(&data);
                    (i, name, data, k)
                })
                .collect();
            sorted.sort_by(|a, b| (a.3.priority(), &a.1, a.0).cmp(&(b.3.priority(), &b.1, b.0)));
            for (_, name, data, k) in sorted {
                if matches!(k, Kind::Zip | Kind::Tar) {
                    return Err(SourceError::NestedArchive { name });
                }
                let size = data.len() as u64;
                if k == Kind::Gzip {
                    let parent = files.len();
                    files.push(TraceFile {
                        name: Some(name.clone()),
                        kind: Kind::Gzip,
                        bytes: Vec::new(),
                        size,
                        parent: Some(0),
                        origin: None,
                    });
                    for inner in gunzip(&name, &data)? {
                        let ik = sniff(&inner);
                        if matches!(ik, Kind::Zip | Kind::Tar | Kind::Gzip) {
                            return Err(SourceError::NestedArchive { name });
                        }
                        files.push(TraceFile {
                            name: Some(String::new()),
                            kind: ik,
                            size: inner.len() as u64,
                            bytes: inner,
                            parent: Some(parent),
                            origin: Some(format!("{name} (decompressed)")),
                        });
                    }
                } else {
                    files.push(TraceFile {
                        name: Some(name),
                        kind: k,
                        bytes: data,
                        size,
                        parent: Some(0),
                        origin: None,
                    });
                }
            }
        }
        Kind::Gzip => {
            let members = gunzip(input_name, &files[0].bytes)?;
            files[0].bytes = Vec::new();
            for inner in members {
                let ik = sniff(&inner);
                if ik.is_container() {
                    return Err(SourceError::NestedArchive {
                        name: input_name.to_string(),
                    });
                }
                files.push(TraceFile {
                    name: Some(String::new()),
                    kind: ik,
                    size: inner.len() as u64,
                    bytes: inner,
                    parent: Some(0),
                    origin: Some(format!("{input_name} (decompressed)")),
                });
            }
        }
        _ => {}
    }
    Ok(files)
}

fn zip_members(input: &str, bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, SourceError> {
    let corrupt = |e: zip::result::ZipError| SourceError::Corrupt {
        name: input.to_string(),
        problem: format!("ZIP archive is unreadable: {e}"),
    };
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(corrupt)?;
    let mut out = Vec::new();
    for i in 0..archive.len() {
        let mut f = archive.by_index(i).map_err(corrupt)?;
        if f.is_dir() {
            continue;
        }
        let name = f.name().to_string();
        if is_hidden(&name) {
            continue;
        }
        let mut data = Vec::with_capacity(f.size().min(1 << 30) as usize);
        f.read_to_end(&mut data).map_err(|e| SourceError::Corrupt {
            name: format!("{input}: {name}"),
            problem: format!("cannot decompress member: {e}"),
        })?;
        out.push((name, data));
    }
    Ok(out)
}

fn tar_members(input: &str, bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, SourceError> {
    let corrupt = |e: std::io::Error| SourceError::Corrupt {
        name: input.to_string(),
        problem: format!("TAR archive is unreadable: {e}"),
    };
    let mut archive = tar::Archive::new(bytes);
    let mut out = Vec::new();
    for entry in archive.entries().map_err(corrupt)? {
        let mut entry = entry.map_err(corrupt)?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry
            .path()
            .map_err(corrupt)?
            .to_string_lossy()
            .into_owned();
        if is_hidden(&name) {
            continue;
        }
        let mut data = Vec::new();
        entry.read_to_end(&mut data).map_err(corrupt)?;
        out.push((name, data));
    }
    Ok(out)
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
        assert_eq!(sniff(b"PK\x03\x04rest"), Kind::Zip);
        assert_eq!(sniff(b"\x1f\x8b\x08"), Kind::Gzip);
        assert_eq!(sniff(b"hello world"), Kind::Unknown);
    }

    #[test]
    fn hidden_members() {
        assert!(is_hidden(".DS_Store"));
        assert!(is_hidden("a/.git/x"));
        assert!(!is_hidden("./a/b.pftrace"));
    }
}
