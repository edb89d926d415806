//! The zip central directory of an archive in memory: where each entry's bytes are.
//!
//! A `.pt2` holds one zip entry per tensor, hundreds of thousands in a large program. A general zip
//! reader builds a large record per entry and reads every entry's local header while opening, for
//! a table this reader needs four numbers of. Here an entry is 24 bytes
//! that point into the memory map (its name is not copied), names are found through a hash table
//! of entry indices, and the local header, which says where the data starts, is read only when an
//! entry is used. Reads are bounds-checked: a damaged archive gives an error, never a panic.
//!
//! Format: PKWARE APPNOTE 6.3.10, sections 4.3.7 (local header), 4.3.12 (central directory
//! header), 4.3.14–16 (zip64 end records) and 4.5.3 (zip64 extra field).

use hashbrown::HashTable;
use std::hash::{BuildHasher, Hasher};

use crate::hash::FxBuild;

const LOCAL: u32 = 0x0403_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const END: u32 = 0x0605_4b50;
const END64: u32 = 0x0606_4b50;
const END64_LOCATOR: u32 = 0x0706_4b50;

/// One entry: its name (a span of the archive bytes) and where its local header is.
#[derive(Clone, Copy, Debug)]
struct Entry {
    name_at: usize,
    name_len: u16,
    method: u16,
    local_header: u64,
    size: u64,
    /// The CRC-32 the writer recorded (not checked here: entries are read in place, unread).
    crc32: u32,
}

/// Entries in archive order, found by name.
pub(super) struct Directory {
    entries: Vec<Entry>,
    by_name: HashTable<u32>,
}

/// Why an entry's bytes cannot be found.
#[derive(Debug)]
pub(super) enum LocateError {
    /// Its local header is not where the directory says, or is cut short.
    BadHeader(String),
    /// Its bytes run past the end of the file.
    Outside,
}

/// Where an entry's bytes are, once its local header was read.
pub(super) struct Located {
    pub start: usize,
    pub end: usize,
    /// Compression method (0: stored).
    pub method: u16,
    pub crc32: u32,
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at.checked_add(2)?)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

fn hash(name: &[u8]) -> u64 {
    let mut h = FxBuild::default().build_hasher();
    h.write(name);
    h.finish()
}

impl Directory {
    /// Read the central directory of the zip archive `data` (found by name once [`Self::under`]
    /// picked the folder). `Err` says what is wrong.
    pub fn read(data: &[u8]) -> Result<Directory, String> {
        let end = find_end(data).ok_or("no end of central directory record")?;
        let (mut count, mut cd_size, cd_at) =
            (u16_at(data, end + 10).map(u64::from), u32_at(data, end + 12).map(u64::from), u32_at(data, end + 16));
        let zip64 = count == Some(0xffff) || cd_size == Some(0xffff_ffff) || cd_at == Some(0xffff_ffff);
        let mut cd_at = cd_at.map(u64::from);
        if zip64 {
            let locator = end.checked_sub(20).filter(|&l| u32_at(data, l) == Some(END64_LOCATOR));
            let record = locator.and_then(|l| u64_at(data, l + 8)).ok_or("zip64 end locator missing")?;
            let record = usize::try_from(record).map_err(|_| "zip64 end record out of range")?;
            if u32_at(data, record) != Some(END64) {
                return Err("zip64 end record missing".into());
            }
            (count, cd_size, cd_at) = (u64_at(data, record + 32), u64_at(data, record + 40), u64_at(data, record + 48));
        }
        let (Some(count), Some(cd_size), Some(cd_at)) = (count, cd_size, cd_at) else {
            return Err("truncated end of central directory record".into());
        };
        let cd_at = usize::try_from(cd_at).map_err(|_| "central directory out of range")?;
        if usize::try_from(cd_size).ok().and_then(|s| cd_at.checked_add(s)).is_none_or(|e| e > data.len()) {
            return Err("central directory lies outside the file".into());
        }
        // Each header takes at least 46 bytes: a count larger than the directory could hold is a
        // damaged record, not a reason to reserve memory.
        let count = usize::try_from(count).unwrap_or(usize::MAX).min(cd_size as usize / 46);
        let mut dir = Directory { entries: Vec::with_capacity(count), by_name: HashTable::new() };
        let mut at = cd_at;
        for i in 0..count {
            let bad = |what: &str| format!("central directory entry {i}: {what}");
            if u32_at(data, at) != Some(CENTRAL) {
                return Err(bad("bad signature"));
            }
            let field16 = |o| u16_at(data, at + o).ok_or_else(|| bad("truncated"));
            let field32 = |o| u32_at(data, at + o).ok_or_else(|| bad("truncated"));
            let method = field16(10)?;
            let crc32 = field32(16)?;
            let (compressed, uncompressed) = (field32(20)?, field32(24)?);
            let (name_len, extra_len, comment_len) = (field16(28)?, field16(30)?, field16(32)?);
            let offset = field32(42)?;
            let name_at = at + 46;
            let extra_at = name_at + name_len as usize;
            let next = extra_at + extra_len as usize + comment_len as usize;
            if next > data.len() {
                return Err(bad("truncated"));
            }
            let mut size = u64::from(compressed);
            let mut local_header = u64::from(offset);
            if compressed == 0xffff_ffff || uncompressed == 0xffff_ffff || offset == 0xffff_ffff {
                // The zip64 extra field holds the 64-bit values, in this order, of those that are
                // 0xffffffff above.
                let mut values = zip64_extra(&data[extra_at..extra_at + extra_len as usize])
                    .ok_or_else(|| bad("zip64 field missing"))?;
                let mut next_value = || values.next().ok_or_else(|| bad("zip64 field too short"));
                if uncompressed == 0xffff_ffff {
                    next_value()?;
                }
                if compressed == 0xffff_ffff {
                    size = next_value()?;
                }
                if offset == 0xffff_ffff {
                    local_header = next_value()?;
                }
            }
            let name = &data[name_at..extra_at];
            if std::str::from_utf8(name).is_err() {
                return Err(bad("name is not UTF-8"));
            }
            dir.entries.push(Entry { name_at, name_len, method, local_header, size, crc32 });
            at = next;
        }
        // Named lookups start after `under`, which indexes the entries it keeps.
        Ok(dir)
    }

    /// Keep only the entries under folder `prefix` (ending in `/`, or empty), named relative to it.
    pub fn under(mut self, data: &[u8], prefix: &str) -> Directory {
        let p = prefix.as_bytes();
        self.entries.retain(|e| entry_name(data, e).starts_with(p));
        for e in &mut self.entries {
            e.name_at += p.len();
            e.name_len -= p.len() as u16;
        }
        self.index(data);
        self
    }

    /// (Re)build the name table.
    fn index(&mut self, data: &[u8]) {
        let entries = &self.entries;
        let mut by_name = HashTable::with_capacity(entries.len());
        for (index, e) in entries.iter().enumerate() {
            let name = entry_name(data, e);
            let h = hash(name);
            match by_name.find_mut(h, |&j: &u32| entry_name(data, &entries[j as usize]) == name) {
                // A repeated name: the later entry wins, as zip readers do.
                Some(j) => *j = index as u32,
                None => {
                    by_name.insert_unique(h, index as u32, |&j| hash(entry_name(data, &entries[j as usize])));
                }
            }
        }
        self.by_name = by_name;
    }

    /// Entry names in archive order.
    pub fn names<'d>(&'d self, data: &'d [u8]) -> impl Iterator<Item = &'d str> + 'd {
        self.entries.iter().map(move |e| name_str(data, e))
    }

    pub fn contains(&self, data: &[u8], name: &str) -> bool {
        self.find(data, name).is_some()
    }

    /// Where the bytes of entry `name` are; `Ok(None)` if there is no such entry, `Err` if its
    /// local header is damaged or its bytes lie outside the file.
    pub fn locate(&self, data: &[u8], name: &str) -> Result<Option<Located>, LocateError> {
        let Some(e) = self.find(data, name) else { return Ok(None) };
        let at = usize::try_from(e.local_header).map_err(|_| LocateError::Outside)?;
        if u32_at(data, at) != Some(LOCAL) {
            return Err(LocateError::BadHeader(format!("entry `{name}`: no local header where the directory says")));
        }
        let (Some(n), Some(x)) = (u16_at(data, at + 26), u16_at(data, at + 28)) else {
            return Err(LocateError::BadHeader(format!("entry `{name}`: truncated local header")));
        };
        let start = at + 30 + n as usize + x as usize;
        let end = usize::try_from(e.size).ok().and_then(|s| start.checked_add(s));
        match end {
            Some(end) if end <= data.len() => Ok(Some(Located { start, end, method: e.method, crc32: e.crc32 })),
            _ => Err(LocateError::Outside),
        }
    }

    fn find(&self, data: &[u8], name: &str) -> Option<&Entry> {
        let j = self
            .by_name
            .find(hash(name.as_bytes()), |&j| entry_name(data, &self.entries[j as usize]) == name.as_bytes())?;
        Some(&self.entries[*j as usize])
    }
}

fn entry_name<'d>(data: &'d [u8], e: &Entry) -> &'d [u8] {
    &data[e.name_at..e.name_at + e.name_len as usize]
}

fn name_str<'d>(data: &'d [u8], e: &Entry) -> &'d str {
    // Checked to be UTF-8 when read.
    std::str::from_utf8(entry_name(data, e)).unwrap_or("")
}

/// The end of central directory record: the last signature in the final 64 KiB + 22 bytes (the
/// record may be followed by a comment of up to 65,535 bytes).
fn find_end(data: &[u8]) -> Option<usize> {
    let lowest = data.len().saturating_sub(22 + 0xffff);
    (lowest..=data.len().checked_sub(22)?).rev().find(|&at| u32_at(data, at) == Some(END))
}

/// The 64-bit values of the zip64 extended information field (header id 1) in `extra`.
fn zip64_extra(extra: &[u8]) -> Option<impl Iterator<Item = u64> + '_> {
    let mut at = 0;
    while at + 4 <= extra.len() {
        let (id, len) = (u16_at(extra, at)?, u16_at(extra, at + 2)? as usize);
        let body = extra.get(at + 4..at + 4 + len)?;
        if id == 1 {
            return Some(body.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))));
        }
        at += 4 + len;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn archive(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        for (name, bytes) in entries {
            w.start_file(*name, opts).unwrap();
            w.write_all(bytes).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    #[test]
    fn reads_what_the_zip_crate_writes() {
        let data = archive(&[("m/archive_format", b"pt2"), ("m/data/weights/w0", &[7u8; 1000]), ("m/x", b"")]);
        let dir = Directory::read(&data).unwrap();
        assert_eq!(dir.names(&data).collect::<Vec<_>>(), ["m/archive_format", "m/data/weights/w0", "m/x"]);
        let dir = dir.under(&data, "m/");
        assert_eq!(dir.names(&data).collect::<Vec<_>>(), ["archive_format", "data/weights/w0", "x"]);
        let l = dir.locate(&data, "archive_format").unwrap().unwrap();
        assert_eq!(&data[l.start..l.end], b"pt2");
        let l = dir.locate(&data, "data/weights/w0").unwrap().unwrap();
        assert_eq!(&data[l.start..l.end], &[7u8; 1000]);
        assert_eq!(l.method, 0);
        let l = dir.locate(&data, "x").unwrap().unwrap();
        assert_eq!(l.start, l.end);
        assert!(dir.locate(&data, "m/x").unwrap().is_none());
        assert!(!dir.contains(&data, "missing"));
    }

    #[test]
    fn damaged_archives_are_errors_not_panics() {
        let data = archive(&[("a", b"hello"), ("b", &[1u8; 300])]);
        // Every truncation, and every single-byte corruption of the directory and end record.
        for n in 0..data.len() {
            if let Ok(dir) = Directory::read(&data[..n]) {
                let _ = dir.under(&data[..n], "").locate(&data[..n], "b");
            }
        }
        for at in 0..data.len() {
            let mut bad = data.clone();
            bad[at] ^= 0xff;
            if let Ok(dir) = Directory::read(&bad) {
                let dir = dir.under(&bad, "");
                let _ = dir.locate(&bad, "a");
                let _ = dir.locate(&bad, "b");
            }
        }
        assert!(Directory::read(b"not a zip at all, just text that is long enough").is_err());
    }

    #[test]
    fn a_local_header_out_of_place_is_reported() {
        let mut data = archive(&[("a", b"hello")]);
        data[0] ^= 1;
        let dir = Directory::read(&data).unwrap().under(&data, "");
        assert!(matches!(dir.locate(&data, "a"), Err(LocateError::BadHeader(d)) if d.contains("no local header")));
        // A directory size past the end of the file.
        let mut data = archive(&[("a", b"hello")]);
        let cd = (0..data.len()).find(|&i| u32_at(&data, i) == Some(CENTRAL)).unwrap();
        data[cd + 20..cd + 24].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
        let dir = Directory::read(&data).unwrap().under(&data, "");
        assert!(matches!(dir.locate(&data, "a"), Err(LocateError::Outside)));
    }
}
