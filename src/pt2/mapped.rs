//! Memory maps that remember their file, so that writers can ask where a weight's bytes live and
//! copy them file to file inside the kernel (`copy_file_range`) instead of reading them through
//! the map: no page of the archive is then faulted into this process, and the copy is one pass.
//!
//! [`MappedFile`] owns the map behind the archive's `Bytes`; while any slice of it is alive the
//! map is registered, and [`source_of`] finds the file and offset of a slice.

use std::fs::File;
use std::sync::{Arc, Mutex};

use memmap2::Mmap;

/// Registered maps: (start address, length, file).
static MAPS: Mutex<Vec<(usize, usize, Arc<File>)>> = Mutex::new(Vec::new());

/// The owner of an archive's map (the `Bytes` owner): registers the map while it lives.
pub(crate) struct MappedFile {
    map: Mmap,
}

impl MappedFile {
    pub(crate) fn new(map: Mmap, file: Arc<File>) -> MappedFile {
        if let Ok(mut maps) = MAPS.lock() {
            maps.push((map.as_ptr() as usize, map.len(), file));
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
    maps.iter().find(|(s, len, _)| p >= *s && p + n <= s + len && n > 0).map(|(s, _, f)| (f.clone(), (p - s) as u64))
}
