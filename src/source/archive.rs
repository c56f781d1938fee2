//! Lists the members of ZIP and TAR archives as ranges of the archive ([`Data`]), without
//! reading their contents. A ZIP whose central directory is missing (an archive cut short)
//! is listed from its local headers instead, so the members before the cut are still read.

use std::io::{self, Read, Seek, SeekFrom};

use super::stream::{Backing, Codec, Data, Limits};
use super::SourceError;

/// A member of an archive.
pub(super) struct Member {
    pub name: String,
    pub data: Data,
}

/// The members of an archive, and what was wrong with the archive itself (read anyway).
pub(super) struct Listing {
    pub members: Vec<Member>,
    pub problem: Option<String>,
}

fn corrupt(input: &str, what: &str, e: impl std::fmt::Display) -> SourceError {
    SourceError::Corrupt {
        name: input.to_string(),
        problem: format!("{what} archive is unreadable: {e}"),
    }
}

/// Hidden members (a path component starting with `.`, other than `.` and `..`) are skipped.
pub(super) fn is_hidden(path: &str) -> bool {
    path.split('/')
        .any(|c| c.starts_with('.') && c != "." && c != "..")
}

fn member_data(backing: &Backing, limits: Limits, offset: u64, len: Option<u64>) -> Data {
    Data {
        backing: backing.clone(),
        offset,
        len,
        codecs: Vec::new(),
        limits,
    }
}

pub(super) fn zip(input: &str, backing: &Backing, limits: Limits) -> Result<Listing, SourceError> {
    let reader = backing.seekable().map_err(|e| corrupt(input, "ZIP", e))?;
    let mut archive = match zip::ZipArchive::new(reader) {
        Ok(a) => a,
        Err(e) => {
            // No central directory: the archive may be cut short. Its local headers still
            // say where each member before the cut is.
            let members = zip_local_headers(backing, limits).unwrap_or_default();
            if members.is_empty() {
                return Err(corrupt(input, "ZIP", e));
            }
            return Ok(Listing {
                members,
                problem: Some(format!(
                    "the ZIP archive has no central directory ({e}): it is probably cut short; \
                     its members were found from their local headers"
                )),
            });
        }
    };
    let mut members = Vec::new();
    for i in 0..archive.len() {
        let f = archive
            .by_index_raw(i)
            .map_err(|e| corrupt(input, "ZIP", e))?;
        if f.is_dir() {
            continue;
        }
        let name = f.name().to_string();
        if is_hidden(&name) {
            continue;
        }
        let mut data = member_data(backing, limits, f.data_start(), Some(f.compressed_size()));
        match f.compression() {
            zip::CompressionMethod::Stored => {}
            zip::CompressionMethod::Deflated => data.codecs.push(Codec::Deflate),
            other => {
                return Err(SourceError::Corrupt {
                    name: format!("{input}: {name}"),
                    problem: format!(
                        "ZIP member compressed with {other:?}, which Sextant cannot read \
                         (only stored and deflated members)"
                    ),
                })
            }
        }
        data.codecs.push(Codec::Check {
            crc: f.crc32(),
            size: f.size(),
        });
        members.push(Member { name, data });
    }
    // Two members of one name: the reader keeps only the last, while Trace Processor reads
    // every local header in order and keeps both (told apart by archive position). List
    // such an archive from its local headers instead, when they can all be read.
    if central_directory_entries(backing).is_some_and(|n| n > archive.len() as u64) {
        if let Ok(local) = zip_local_headers(backing, limits) {
            if local.len() > members.len() {
                members = local;
            }
        }
    }
    Ok(Listing {
        members,
        problem: None,
    })
}

/// How many entries the central directory says it holds (from the end-of-central-directory
/// record), or None when the record cannot be found or defers to Zip64.
fn central_directory_entries(backing: &Backing) -> Option<u64> {
    const EOCD: [u8; 4] = [0x50, 0x4b, 0x05, 0x06];
    let total = backing.len().ok()?;
    // The record is 22 bytes plus a comment of at most 65,535.
    let tail = total.min(22 + 65_535);
    let mut r = backing.seekable().ok()?;
    r.seek(SeekFrom::Start(total - tail)).ok()?;
    let mut buf = Vec::with_capacity(tail as usize);
    r.take(tail).read_to_end(&mut buf).ok()?;
    let at = (0..buf.len().checked_sub(21)?)
        .rev()
        .find(|&i| buf[i..i + 4] == EOCD)?;
    let entries = u16::from_le_bytes([buf[at + 10], buf[at + 11]]);
    (entries != 0xffff).then_some(u64::from(entries))
}

/// Members from ZIP local headers, in file order, up to the first that cannot be read.
fn zip_local_headers(backing: &Backing, limits: Limits) -> io::Result<Vec<Member>> {
    const LOCAL: u32 = 0x0403_4b50;
    let total = backing.len()?;
    let mut r = backing.seekable()?;
    let mut members = Vec::new();
    let mut at = 0u64;
    loop {
        r.seek(SeekFrom::Start(at))?;
        let mut h = [0u8; 30];
        if r.read_exact(&mut h).is_err() {
            break;
        }
        let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        if u32_at(0) != LOCAL {
            break;
        }
        let flags = u16_at(6);
        let method = u16_at(8);
        let crc = u32_at(14);
        let mut csize = u64::from(u32_at(18));
        let mut size = u64::from(u32_at(22));
        let name_len = u64::from(u16_at(26));
        let extra_len = u64::from(u16_at(28));
        let mut name = vec![0u8; name_len as usize];
        r.read_exact(&mut name)?;
        let mut extra = vec![0u8; extra_len as usize];
        r.read_exact(&mut extra)?;
        // Zip64: sizes in the extra field.
        let mut e = &extra[..];
        while e.len() >= 4 {
            let id = u16::from_le_bytes([e[0], e[1]]);
            let len = usize::from(u16::from_le_bytes([e[2], e[3]]));
            let body = e.get(4..4 + len).unwrap_or(&[]);
            if id == 1 && body.len() >= 16 {
                let u64_at =
                    |i: usize| u64::from_le_bytes(body[i..i + 8].try_into().unwrap_or([0; 8]));
                size = u64_at(0);
                csize = u64_at(8);
            }
            e = e.get(4 + len..).unwrap_or(&[]);
        }
        let start = at + 30 + name_len + extra_len;
        let name = String::from_utf8_lossy(&name).into_owned();
        // Bit 3: sizes come after the data; a deflated member still ends where its stream
        // does, but where the next header starts is unknown.
        let sizes_unknown = flags & 0x08 != 0;
        let len = if sizes_unknown { None } else { Some(csize) };
        let mut data = member_data(backing, limits, start, len);
        match method {
            0 if sizes_unknown => break,
            0 => {}
            8 => data.codecs.push(Codec::Deflate),
            _ => break,
        }
        if !sizes_unknown {
            data.codecs.push(Codec::Check { crc, size });
        }
        if !name.ends_with('/') && !is_hidden(&name) {
            members.push(Member { name, data });
        }
        match len {
            Some(len) if start + len < total => at = start + len,
            _ => break,
        }
    }
    Ok(members)
}

pub(super) fn tar(input: &str, backing: &Backing, limits: Limits) -> Result<Listing, SourceError> {
    let reader = backing.seekable().map_err(|e| corrupt(input, "TAR", e))?;
    let mut archive = tar::Archive::new(reader);
    let mut members = Vec::new();
    let mut problem = None;
    let entries = archive
        .entries_with_seek()
        .map_err(|e| corrupt(input, "TAR", e))?;
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            // Members before a broken header are kept; the first member is not optional.
            Err(e) if !members.is_empty() => {
                problem = Some(format!("the TAR archive breaks off after its members: {e}"));
                break;
            }
            Err(e) => return Err(corrupt(input, "TAR", e)),
        };
        let kind = entry.header().entry_type();
        if !kind.is_file() {
            // Directories, links and the like are skipped; a member of another type with
            // data in it is an entry Trace Processor cannot read (PAX and GNU name
            // records are part of the format, not members).
            let meta = kind.is_dir()
                || kind.is_pax_global_extensions()
                || kind.is_pax_local_extensions()
                || kind.is_gnu_longname()
                || kind.is_gnu_longlink();
            if !meta && entry.size() > 0 {
                let member = entry.path_bytes().into_owned();
                return Err(SourceError::Corrupt {
                    name: input.to_string(),
                    problem: format!(
                        "{}: Unsupported file type: 0x{:02x}",
                        String::from_utf8_lossy(&member),
                        kind.as_byte()
                    ),
                });
            }
            continue;
        }
        let name = entry
            .path()
            .map_err(|e| corrupt(input, "TAR", e))?
            .to_string_lossy()
            .into_owned();
        if is_hidden(&name) {
            continue;
        }
        let len = entry.size();
        let data = member_data(backing, limits, entry.raw_file_position(), Some(len));
        members.push(Member { name, data });
    }
    Ok(Listing { members, problem })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_members() {
        assert!(is_hidden(".DS_Store"));
        assert!(is_hidden("a/.git/x"));
        assert!(!is_hidden("./a/b.pftrace"));
    }
}
