//! Memory maps registered while they live, with the files they map: a writer copies a stored
//! weight out of the archive by reading the file ([`copy_out`]), never mapping its pages, and
//! drops the pages a folded weight was computed from once written ([`release`]); weights are
//! read once, and a model larger than memory never has all of them resident.
//!
//! [`MappedFile`] owns the map behind the archive's `Bytes`; while any slice of it is alive the
//! map is registered.

use std::fs::File;
use std::sync::{Arc, Mutex};

use memmap2::Mmap;

/// Registered maps: (start address, length, the map, the file it maps from offset 0).
type Entry = (usize, usize, Arc<Mmap>, Arc<File>);
static MAPS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// The owner of an archive's map (the `Bytes` owner): registers the map while it lives.
pub(crate) struct MappedFile {
    map: Arc<Mmap>,
}

impl MappedFile {
    /// `map` maps all of `file`, from its start.
    pub(crate) fn new(map: Mmap, file: File) -> MappedFile {
        let map = Arc::new(map);
        if let Ok(mut maps) = MAPS.lock() {
            maps.push((map.as_ptr() as usize, map.len(), map.clone(), Arc::new(file)));
        }
        MappedFile { map }
    }
}

impl AsRef<[u8]> for MappedFile {
    fn as_ref(&self) -> &[u8] {
        &self.map
    }
}

impl Drop for MappedFile {
    // Unregistered before the map is unmapped (fields drop after this), so an address range is
    // never attributed to a file it no longer maps.
    fn drop(&mut self) {
        let start = self.map.as_ptr() as usize;
        if let Ok(mut maps) = MAPS.lock() {
            maps.retain(|(s, ..)| *s != start);
        }
    }
}

/// Drop the pages of `bytes` from this process's resident set when they are a slice of an archive
/// map (nothing otherwise): once a folded weight computed from them was written, they would
/// otherwise stay resident until exit (stored weights are read with [`copy_out`], never mapped).
/// The map is read-only and shared, so a later read simply faults the same bytes back in from the
/// page cache.
pub fn release(bytes: &[u8]) {
    with_entry(bytes, |(_, _, map, _), offset| {
        // SAFETY: MADV_DONTNEED on a read-only shared file mapping only discards page-table entries;
        // the contents stay those of the file (no private pages exist that could be lost).
        let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, offset, bytes.len()) };
    });
}

/// Fill `out` with `bytes` (of equal length), read from the archive file with `pread` when
/// `bytes` is a slice of an archive map, else copied.
///
/// The same bytes either way (the map is shared: both read the file's page cache), but reading
/// the file does not map its pages into the process: on ViT-B/16's save, mapping the weights'
/// pages in (fault-around) and out again ([`release`]) had cost the encoder's thread as much as
/// copying them.
pub fn copy_out(bytes: &[u8], out: &mut [u8]) {
    debug_assert_eq!(bytes.len(), out.len());
    let file = with_entry(bytes, |(.., file), offset| (file.clone(), offset as u64));
    #[cfg(unix)]
    if let Some((file, offset)) = file {
        use std::os::unix::fs::FileExt;
        if file.read_exact_at(out, offset).is_ok() {
            return;
        }
    }
    #[cfg(not(unix))]
    let _ = file;
    out.copy_from_slice(bytes);
}

/// `f(entry, offset of bytes in its map)` for the registered map holding all of `bytes`
/// (non-empty), under the registry's lock.
fn with_entry<R>(bytes: &[u8], f: impl FnOnce(&Entry, usize) -> R) -> Option<R> {
    let (p, n) = (bytes.as_ptr() as usize, bytes.len());
    let maps = MAPS.lock().ok()?;
    let entry = maps.iter().find(|(s, len, ..)| n > 0 && p >= *s && p + n <= s + len)?;
    Some(f(entry, p - entry.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn copy_out_reads_the_slice_from_the_file_or_copies_it() {
        let contents: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&contents).unwrap();
        // SAFETY: a private temporary file, not modified while mapped.
        let map = unsafe { Mmap::map(&file) }.unwrap();
        let owner = bytes::Bytes::from_owner(MappedFile::new(map, file.try_clone().unwrap()));
        // Unaligned both ends: the read is at the slice's offset in the file.
        let slice = owner.slice(12_345..80_001);
        let mut out = vec![0u8; slice.len()];
        copy_out(&slice, &mut out);
        assert_eq!(out[..], contents[12_345..80_001]);
        // Not a slice of a registered map: copied.
        let plain = contents[5..500].to_vec();
        let mut out = vec![0u8; plain.len()];
        copy_out(&plain, &mut out);
        assert_eq!(out, plain);
    }
}
