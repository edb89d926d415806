//! Memory maps registered while they live, so that a writer that has copied a weight out of the
//! archive can drop its pages from the process ([`release`]): weights are read through the map
//! once, and a model larger than memory never has all of them resident.
//!
//! [`MappedFile`] owns the map behind the archive's `Bytes`; while any slice of it is alive the
//! map is registered.

use std::sync::{Arc, Mutex};

use memmap2::Mmap;

/// Registered maps: (start address, length, the map).
type Entry = (usize, usize, Arc<Mmap>);
static MAPS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// The owner of an archive's map (the `Bytes` owner): registers the map while it lives.
pub(crate) struct MappedFile {
    map: Arc<Mmap>,
}

impl MappedFile {
    pub(crate) fn new(map: Mmap) -> MappedFile {
        let map = Arc::new(map);
        if let Ok(mut maps) = MAPS.lock() {
            maps.push((map.as_ptr() as usize, map.len(), map.clone()));
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
/// map (nothing otherwise): once a weight (or a folded weight computed from it) was copied into
/// the output, they would otherwise stay resident until exit. The map is read-only and shared, so
/// a later read simply faults the same bytes back in from the page cache.
pub fn release(bytes: &[u8]) {
    let (p, n) = (bytes.as_ptr() as usize, bytes.len());
    let Ok(maps) = MAPS.lock() else { return };
    if let Some((s, _, map)) = maps.iter().find(|(s, len, ..)| p >= *s && p + n <= s + len && n > 0) {
        // SAFETY: MADV_DONTNEED on a read-only shared file mapping only discards page-table entries;
        // the contents stay those of the file (no private pages exist that could be lost).
        let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, p - s, n) };
    }
}
