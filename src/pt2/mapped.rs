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

    /// Whether a read of the map faulted (the file shrank under it) and the recovering guard put
    /// zeros in its place.
    fn faulted(&self) -> bool {
        #[cfg(target_os = "linux")]
        if let Some(slot) = self.slot {
            return guard::faulted(slot);
        }
        false
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
/// process with a message and exit status 1 instead of a bare SIGBUS. Faults elsewhere go to the
/// handler that was there before. The CLI installs it; a library leaves the signal handlers of its
/// host alone, so a program embedding fxonnx decides for itself (no-op outside Linux). Nothing is
/// left behind: outputs are unnamed until they are complete (ARCHITECTURE.md, "Files").
pub fn install_truncation_guard() {
    #[cfg(target_os = "linux")]
    guard::install(guard::Mode::Exit);
}

/// Like [`install_truncation_guard`], for a host that must live on (the Python module): a fault
/// on an archive's map puts zero pages where the file's pages were and marks the map, and the
/// save (or [`crate::OnnxProgram::check_archive`]) then fails with an error saying the archive
/// changed. No model is written from the zeros.
pub fn install_recovering_truncation_guard() {
    #[cfg(target_os = "linux")]
    guard::install(guard::Mode::Recover);
}

#[cfg(target_os = "linux")]
mod guard {
    //! The maps in use as address ranges in fixed atomic slots, which a signal handler may read.
    use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
    use std::sync::OnceLock;

    const SLOTS: usize = 64;
    /// Start of the map in each slot: 0 when free, `CLAIMED` while being filled in.
    static STARTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
    static ENDS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
    /// A fault hit the map in this slot, and zero pages replaced its file's (recovering mode).
    static FAULTED: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
    const CLAIMED: usize = usize::MAX;

    /// What a fault on an archive's map does.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum Mode {
        /// A message and exit status 1 (the CLI).
        Exit = 1,
        /// Zero pages in place of the file's, and the map marked as faulted (the Python module).
        Recover = 2,
    }
    static MODE: AtomicU8 = AtomicU8::new(0);
    static PAGE: AtomicUsize = AtomicUsize::new(4096);
    /// The SIGBUS action before ours, for faults that are not on an archive's map.
    static PREVIOUS: OnceLock<Previous> = OnceLock::new();
    struct Previous(libc::sigaction);
    // SAFETY: a plain C struct, written once before the handler can read it, never changed.
    unsafe impl Sync for Previous {}
    unsafe impl Send for Previous {}

    /// Record the map `[start, start + len)`; `None` when every slot is taken (then a fault in it
    /// is a plain SIGBUS, as without the guard).
    pub fn register(start: usize, len: usize) -> Option<usize> {
        if start == 0 || len == 0 {
            return None;
        }
        let slot = (0..SLOTS)
            .find(|&i| STARTS[i].compare_exchange(0, CLAIMED, Ordering::AcqRel, Ordering::Relaxed).is_ok())?;
        FAULTED[slot].store(false, Ordering::Release);
        ENDS[slot].store(start.saturating_add(len), Ordering::Release);
        STARTS[slot].store(start, Ordering::Release);
        Some(slot)
    }

    pub fn unregister(slot: usize) {
        STARTS[slot].store(0, Ordering::Release);
    }

    pub fn faulted(slot: usize) -> bool {
        FAULTED[slot].load(Ordering::Acquire)
    }

    fn slot_of(addr: usize) -> Option<usize> {
        (0..SLOTS).find(|&i| {
            let start = STARTS[i].load(Ordering::Acquire);
            start != 0 && start != CLAIMED && addr >= start && addr < ENDS[i].load(Ordering::Acquire)
        })
    }

    const MESSAGE: &[u8] = b"error: the archive changed while it was read (it was truncated or rewritten: a fault \
on its memory map); no output was written\nhint: export from a copy that nothing else writes to\n";

    extern "C" fn on_sigbus(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler; write, mmap,
        // sigaction and _exit are system calls, and the slots are atomics.
        unsafe {
            let addr = (*info).si_addr() as usize;
            if let Some(slot) = slot_of(addr) {
                if MODE.load(Ordering::Acquire) == Mode::Recover as u8 {
                    // The file ends before this page now: zeros from here to the map's end, so the
                    // access retried on return succeeds; the map is marked, and no model is
                    // written from it (`ArchiveFile::check_unchanged`).
                    let page = addr & !(PAGE.load(Ordering::Relaxed) - 1);
                    let len = ENDS[slot].load(Ordering::Acquire) - page;
                    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED;
                    let zeros = libc::mmap(page as *mut libc::c_void, len, libc::PROT_READ, flags, -1, 0);
                    if zeros != libc::MAP_FAILED {
                        FAULTED[slot].store(true, Ordering::Release);
                        return;
                    }
                }
                libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
                libc::_exit(1);
            }
            // Not an archive's page: the action that was there before ours takes it.
            match PREVIOUS.get() {
                Some(Previous(previous)) if previous.sa_flags & libc::SA_SIGINFO != 0 => {
                    let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(previous.sa_sigaction);
                    handler(signal, info, context);
                }
                Some(Previous(previous))
                    if previous.sa_sigaction != libc::SIG_DFL && previous.sa_sigaction != libc::SIG_IGN =>
                {
                    let handler: extern "C" fn(libc::c_int) = std::mem::transmute(previous.sa_sigaction);
                    handler(signal);
                }
                // The default action, which the faulting access, retried on return, then takes.
                _ => {
                    libc::signal(libc::SIGBUS, libc::SIG_DFL);
                }
            }
        }
    }

    pub fn install(mode: Mode) {
        // Recovering wins: a host that must live on keeps living when it also runs the CLI.
        let _ = MODE.fetch_max(mode as u8, Ordering::AcqRel);
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        PREVIOUS.get_or_init(|| {
            // SAFETY: a zeroed sigaction with a handler of the SA_SIGINFO signature and an empty
            // mask; the old action is read into `old`.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_sigbus as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                libc::sigaction(libc::SIGBUS, &action, &mut old);
                Previous(old)
            }
        });
    }
}

/// An archive file and its read-only map: what the save needs to read weights that are slices of
/// the map from the file instead, and to know that the file is still what was read.
#[derive(Clone)]
pub struct ArchiveFile {
    map: Arc<Map>,
    file: Arc<File>,
    path: Arc<std::path::Path>,
    /// The file as it was when mapped: a write in place (a truncation, or `torch.export.save` to
    /// the same path, which rewrites the same file) changes its size or times.
    stamp: Option<Stamp>,
}

/// What an in-place change of a file changes: its size, its modification and status-change
/// times (nanoseconds; any write sets both, and no user can set the status-change time back).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Stamp {
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Stamp {
    fn of(file: &File) -> Option<Stamp> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let m = file.metadata().ok()?;
            Some(Stamp { len: m.len(), modified: (m.mtime(), m.mtime_nsec()), changed: (m.ctime(), m.ctime_nsec()) })
        }
        #[cfg(not(unix))]
        {
            let m = file.metadata().ok()?;
            Some(Stamp { len: m.len(), modified: (0, 0), changed: (0, 0) })
        }
    }
}

impl ArchiveFile {
    /// Whether `path` names this archive's file (the same inode; on other platforms, never):
    /// an output written there would replace the archive it is read from.
    pub fn is_at(&self, path: &std::path::Path) -> bool {
        std::fs::metadata(path).is_ok_and(|m| self.is(&m))
    }

    /// Whether `meta` describes this archive's file (the same device and inode).
    pub fn is(&self, meta: &std::fs::Metadata) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            self.file.metadata().is_ok_and(|a| a.dev() == meta.dev() && a.ino() == meta.ino())
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            false
        }
    }

    /// Fail when the file is no longer what was mapped: written in place since (its size or
    /// times differ), or a read of the map faulted because it shrank. Weights read after such a
    /// change could be another model's, or zeros: nothing may be written from them. A file
    /// replaced by a rename is no change: the map holds the old one.
    pub fn check_unchanged(&self) -> Result<(), super::ArchiveError> {
        if self.map.faulted() || Stamp::of(&self.file) != self.stamp {
            return Err(super::ArchiveError::Changed { path: self.path.to_path_buf() });
        }
        Ok(())
    }

    /// `map` maps all of `file` (at `path`), from its start. Returns the handle and the map as
    /// `Bytes`. The file's stamp is taken before the map's contents are read.
    pub(crate) fn new(map: Mmap, file: File, path: &std::path::Path) -> (ArchiveFile, Bytes) {
        let stamp = Stamp::of(&file);
        let map = Arc::new(Map::new(map));
        let bytes = Bytes::from_owner(MappedFile(map.clone()));
        (ArchiveFile { map, file: Arc::new(file), path: path.into(), stamp }, bytes)
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

    /// With the recovering guard (the Python module's), a read of a map whose file was truncated
    /// meanwhile gives zeros instead of SIGBUS, and the archive then says it changed; so does a
    /// rewrite in place of the same size, without any fault.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_changed_under_its_map_is_an_error_never_sigbus() {
        install_recovering_truncation_guard();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.pt2");
        std::fs::write(&path, vec![7u8; 3 * 4096]).unwrap();
        let file = File::open(&path).unwrap();
        // SAFETY: the test truncates the file under the map on purpose: the guard is installed.
        let map = unsafe { Mmap::map(&file) }.unwrap();
        let (archive, bytes) = ArchiveFile::new(map, file, &path);
        assert!(archive.check_unchanged().is_ok());
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(0).unwrap();
        assert_eq!(bytes[2 * 4096 + 5], 0, "zeros where the file's pages were");
        assert!(archive.check_unchanged().is_err());
        drop((archive, bytes));

        std::fs::write(&path, vec![7u8; 4096]).unwrap();
        let file = File::open(&path).unwrap();
        // SAFETY: as above.
        let map = unsafe { Mmap::map(&file) }.unwrap();
        let (archive, bytes) = ArchiveFile::new(map, file, &path);
        std::thread::sleep(std::time::Duration::from_millis(10));
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all(&[9u8; 16]).unwrap();
        assert_eq!(bytes[0], 9, "a shared map sees the new bytes");
        let err = archive.check_unchanged().unwrap_err().to_string();
        assert!(err.contains("changed after it was read"), "{err}");
    }

    #[test]
    fn read_into_reads_slices_of_the_map_from_the_file_and_copies_the_rest() {
        let contents: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&contents).unwrap();
        // SAFETY: a private temporary file, not modified while mapped.
        let map = unsafe { Mmap::map(&file) }.unwrap();
        let (archive, bytes) = ArchiveFile::new(map, file.try_clone().unwrap(), std::path::Path::new("t"));
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
