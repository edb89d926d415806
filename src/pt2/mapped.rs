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

/// An archive's map, known to the SIGBUS handler while it lives (see [`install_truncation_guard`]).
struct Map {
    map: Mmap,
    #[cfg(target_os = "linux")]
    slot: Option<usize>,
}

impl Map {
    fn new(map: Mmap) -> Map {
        #[cfg(target_os = "linux")]
        let slot = guard::register(map.as_ptr() as usize, map.len());
        Map {
            map,
            #[cfg(target_os = "linux")]
            slot,
        }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(slot) = self.slot {
            guard::unregister(slot);
        }
    }
}

impl std::ops::Deref for Map {
    type Target = Mmap;
    fn deref(&self) -> &Mmap {
        &self.map
    }
}

/// The owner of an archive's map behind its `Bytes`.
struct MappedFile(Arc<Map>);

impl AsRef<[u8]> for MappedFile {
    fn as_ref(&self) -> &[u8] {
        &self.0.map
    }
}

/// Make a fault on an archive's memory map — the file was truncated while being read — end the
/// process with a message and exit status 1 instead of a bare SIGBUS. Faults elsewhere keep the
/// default action. The CLI installs it; a library leaves the signal handlers of its host alone,
/// so a program embedding fxonnx decides for itself (no-op outside Linux). Nothing is left behind:
/// outputs are unnamed until they are complete (ARCHITECTURE.md, "Files").
pub fn install_truncation_guard() {
    #[cfg(target_os = "linux")]
    guard::install();
}

#[cfg(target_os = "linux")]
mod guard {
    //! The maps in use as address ranges in fixed atomic slots, which a signal handler may read.
    use std::sync::atomic::{AtomicUsize, Ordering};

    const SLOTS: usize = 64;
    /// Start of the map in each slot: 0 when free, `CLAIMED` while being filled in.
    static STARTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
    static ENDS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
    const CLAIMED: usize = usize::MAX;

    /// Record the map `[start, start + len)`; `None` when every slot is taken (then a fault in it
    /// is a plain SIGBUS, as without the guard).
    pub fn register(start: usize, len: usize) -> Option<usize> {
        if start == 0 || len == 0 {
            return None;
        }
        let slot = (0..SLOTS)
            .find(|&i| STARTS[i].compare_exchange(0, CLAIMED, Ordering::AcqRel, Ordering::Relaxed).is_ok())?;
        ENDS[slot].store(start.saturating_add(len), Ordering::Release);
        STARTS[slot].store(start, Ordering::Release);
        Some(slot)
    }

    pub fn unregister(slot: usize) {
        STARTS[slot].store(0, Ordering::Release);
    }

    fn is_mapped_archive(addr: usize) -> bool {
        (0..SLOTS).any(|i| {
            let start = STARTS[i].load(Ordering::Acquire);
            start != 0 && start != CLAIMED && addr >= start && addr < ENDS[i].load(Ordering::Acquire)
        })
    }

    const MESSAGE: &[u8] = b"error: the archive changed while it was read (it was truncated or rewritten: a fault \
on its memory map); no output was written\nhint: export from a copy that nothing else writes to\n";

    extern "C" fn on_sigbus(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler; write and _exit
        // are async-signal-safe, and the slots are atomics.
        unsafe {
            if is_mapped_archive((*info).si_addr() as usize) {
                libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
                libc::_exit(1);
            }
            // Not an archive's page: back to the default action, which the faulting access,
            // retried on return, then takes.
            libc::signal(libc::SIGBUS, libc::SIG_DFL);
        }
    }

    pub fn install() {
        // SAFETY: a zeroed sigaction with a handler of the SA_SIGINFO signature and an empty mask.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    }
}

/// An archive file and its read-only map: what the save needs to read weights that are slices of
/// the map from the file instead.
#[derive(Clone)]
pub struct ArchiveFile {
    map: Arc<Map>,
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
        let map = Arc::new(Map::new(map));
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
