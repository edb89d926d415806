//! The archive's memory map together with its file.
//!
//! Weights are `Bytes` slices of the map. Saving them copies each once into the output; reading
//! that copy from the file ([`ArchiveFile::read_into`]) rather than through the map keeps the
//! archive's pages out of the process's resident set, and the pages a folded weight was computed
//! from are dropped once it is written ([`ArchiveFile::release`]). The save gets the
//! [`ArchiveFile`] from whoever opened the archive ([`super::Archive::file`]).

use std::fs::File;
use std::sync::Arc;

use bytes::Bytes;
use memmap2::Mmap;

/// The owner of an archive's map behind its `Bytes`.
struct MappedFile(Arc<Mmap>);

impl AsRef<[u8]> for MappedFile {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// An archive file and its read-only map: what the save needs to read weights that are slices of
/// the map from the file instead.
#[derive(Clone)]
pub struct ArchiveFile {
    map: Arc<Mmap>,
    file: Arc<File>,
}

impl ArchiveFile {
    /// Whether `path` names this archive's file (the same inode; on other platforms, never):
    /// an output written there would replace the archive it is read from.
    pub fn is_at(&self, path: &std::path::Path) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            match (self.file.metadata(), std::fs::metadata(path)) {
                (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
                _ => false,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = path;
            false
        }
    }

    /// `map` maps all of `file`, from its start. Returns the handle and the map as `Bytes`.
    pub(crate) fn new(map: Mmap, file: File) -> (ArchiveFile, Bytes) {
        let map = Arc::new(map);
        let bytes = Bytes::from_owner(MappedFile(map.clone()));
        (ArchiveFile { map, file: Arc::new(file) }, bytes)
    }

    /// Where `bytes` start in the file, when they are a (non-empty) slice of this archive's map.
    fn offset_of(&self, bytes: &[u8]) -> Option<usize> {
        let (start, len) = (self.map.as_ptr() as usize, self.map.len());
        let (p, n) = (bytes.as_ptr() as usize, bytes.len());
        (n > 0 && p >= start && p + n <= start + len).then(|| p - start)
    }

    /// Fill `out` with `bytes` (of equal length): read from the file when `bytes` is a slice of
    /// the map, copied otherwise. The same bytes either way (the map is shared: both read the
    /// page cache), but a read does not map the pages into the process.
    pub fn read_into(&self, bytes: &[u8], out: &mut [u8]) {
        debug_assert_eq!(bytes.len(), out.len());
        #[cfg(unix)]
        if let Some(offset) = self.offset_of(bytes) {
            use std::os::unix::fs::FileExt;
            if self.file.read_exact_at(out, offset as u64).is_ok() {
                return;
            }
        }
        out.copy_from_slice(bytes);
    }

    /// Drop the pages of `bytes` from the resident set when they are a slice of the map (they
    /// stay in the page cache: a later read faults them back in). Nothing happens elsewhere.
    pub fn release(&self, bytes: &[u8]) {
        #[cfg(target_os = "linux")]
        if let Some(offset) = self.offset_of(bytes) {
            // SAFETY: MADV_DONTNEED on a read-only shared file mapping only discards page-table
            // entries; the contents stay those of the file (there are no private pages to lose).
            let advice = memmap2::UncheckedAdvice::DontNeed;
            let _ = unsafe { self.map.unchecked_advise_range(advice, offset, bytes.len()) };
        }
        #[cfg(not(target_os = "linux"))]
        let _ = bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn read_into_reads_slices_of_the_map_from_the_file_and_copies_the_rest() {
        let contents: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&contents).unwrap();
        // SAFETY: a private temporary file, not modified while mapped.
        let map = unsafe { Mmap::map(&file) }.unwrap();
        let (archive, bytes) = ArchiveFile::new(map, file.try_clone().unwrap());
        // Unaligned both ends: the read is at the slice's offset in the file.
        let slice = bytes.slice(12_345..80_001);
        assert_eq!(archive.offset_of(&slice), Some(12_345));
        let mut out = vec![0u8; slice.len()];
        archive.read_into(&slice, &mut out);
        assert_eq!(out[..], contents[12_345..80_001]);
        archive.release(&slice);
        assert_eq!(slice[..], contents[12_345..80_001]);
        // Not a slice of the map: copied.
        let plain = contents[5..500].to_vec();
        assert_eq!(archive.offset_of(&plain), None);
        let mut out = vec![0u8; plain.len()];
        archive.read_into(&plain, &mut out);
        assert_eq!(out, plain);
    }
}
