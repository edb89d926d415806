//! Memory maps that remember their file, so that writers can ask where a weight's bytes live and
//! copy them file to file inside the kernel (`copy_file_range`) instead of reading them through
//! the map: no page of the archive is then faulted into this process, and the copy is one pass.
//!
//! [`MappedFile`] owns the map behind the archive's `Bytes`; while any slice of it is alive the
//! map is registered, and [`source_of`] finds the file and offset of a slice.

use std::fs::File;
use std::sync::{Arc, Mutex};

use memmap2::Mmap;

/// Registered maps: (start address, length, file, the map).
type Entry = (usize, usize, Arc<File>, Arc<Mmap>);
static MAPS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// The owner of an archive's map (the `Bytes` owner): registers the map while it lives.
pub(crate) struct MappedFile {
    map: Arc<Mmap>,
}

impl MappedFile {
    pub(crate) fn new(map: Mmap, file: Arc<File>) -> MappedFile {
        let map = Arc::new(map);
        if let Ok(mut maps) = MAPS.lock() {
            maps.push((map.as_ptr() as usize, map.len(), file, map.clone()));
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

/// The file and byte offset that `bytes` are mapped from, when they are a slice of a live archive
/// map. The caller must keep `bytes` (and so the map) alive while using the answer.
pub fn source_of(bytes: &[u8]) -> Option<(Arc<File>, u64)> {
    let (p, n) = (bytes.as_ptr() as usize, bytes.len());
    let maps = MAPS.lock().ok()?;
    maps.iter()
        .find(|(s, len, ..)| p >= *s && p + n <= s + len && n > 0)
        .map(|(s, _, f, _)| (f.clone(), (p - s) as u64))
}

/// Drop the pages of `bytes` from this process's resident set when they are a slice of an archive
/// map (nothing otherwise): after a derived weight was computed from them and written, they would
/// otherwise stay resident until exit. The map is read-only and shared, so a later read simply
/// faults the same bytes back in from the page cache.
pub fn release(bytes: &[u8]) {
    let (p, n) = (bytes.as_ptr() as usize, bytes.len());
    let Ok(maps) = MAPS.lock() else { return };
    if let Some((s, _, _, map)) = maps.iter().find(|(s, len, ..)| p >= *s && p + n <= s + len && n > 0) {
        // SAFETY: MADV_DONTNEED on a read-only shared file mapping only discards page-table entries;
        // the contents stay those of the file (no private pages exist that could be lost).
        let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, p - s, n) };
    }
}
