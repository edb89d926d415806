//! The CLI's allocator: mimalloc, tuned for one short process that builds and drops large graphs.
//!
//! Exports allocate millions of small strings and vectors (names, metadata, shapes), where glibc's
//! malloc spends much of a large export in its own bookkeeping. Shared by `src/main.rs` and
//! `benches/export.rs` (included by path) so benchmark stage times are the CLI's.
//!
//! [`prefault_in_background`] (Linux only) has the second core fault in the allocator's memory
//! just ahead of use: first touches of memory are slow on the virtual machines this runs on.

use std::os::raw::{c_int, c_long};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

extern "C" {
    // Exported by the mimalloc the `mimalloc` crate links (the `extended` feature that would declare
    // them needs a crate not vendored here).
    fn mi_version() -> c_int;
    fn mi_option_set(option: c_int, value: c_long);
}

// `mi_option_purge_delay` of mimalloc 3.x (include/mimalloc.h); it differs in 2.x, hence the
// version check.
const MI_OPTION_PURGE_DELAY: c_int = 15;

/// Keep freed memory for reuse instead of returning it to the kernel.
///
/// By default mimalloc hands freed pages back (`madvise`) after a delay and faults them in again on
/// reuse; an export frees the parsed JSON and graph copies while building the next, and that round
/// trip is kernel time for nothing: the memory is reused, not added to the peak. Call first thing
/// in `main`.
pub fn tune() {
    // SAFETY: plain C calls into the linked allocator; options are read at each decision.
    unsafe {
        if mi_version() / 10000 == 3 {
            mi_option_set(MI_OPTION_PURGE_DELAY, -1);
        }
    }
}

/// Fault in the allocator's memory on a second thread, just ahead of the main thread's use.
///
/// A page the process touches for the first time is zeroed by the kernel, and on virtual machines
/// whose host backs guest memory lazily (this project's CI machines) that costs seconds per GB,
/// which a 1M-node export (several GB) pays on its one busy core. This thread watches the
/// allocator's large anonymous mappings (mimalloc's arenas, which it fills from the bottom) and
/// asks the kernel to fault in the next chunks (`MADV_POPULATE_WRITE`, which never changes memory
/// already in use) once the main thread has reached the chunk below them, so the zeroing runs on
/// the other core. Nothing is populated before the main thread has used [`START`] of some mapping,
/// so small exports are unaffected; after that (a large export) every large mapping, old or new,
/// has up to [`MAX_AHEAD`] chunks populated ahead of use, from its start.
///
/// Linux only (it reads `/proc/self/maps` and uses `MADV_POPULATE_WRITE`); elsewhere it does
/// nothing.
pub fn prefault_in_background() {
    #[cfg(target_os = "linux")]
    let _ = std::thread::Builder::new().name("fxonnx-prefault".into()).spawn(prefault::run);
}

/// Bytes populated at a time; the last huge page of each is left for the main thread to touch: a
/// tripwire that says it got there.
#[cfg(target_os = "linux")]
const CHUNK: usize = 32 << 20;
#[cfg(target_os = "linux")]
const TRIPWIRE: usize = 2 << 20;
/// Used bytes of a mapping before anything is populated ahead of them.
#[cfg(target_os = "linux")]
const START: usize = 4 * CHUNK;
#[cfg(target_os = "linux")]
const MAX_AHEAD: usize = 3;

#[cfg(target_os = "linux")]
mod prefault {
    use super::{CHUNK, MAX_AHEAD, START, TRIPWIRE};
    use std::time::{Duration, Instant};

    const MADV_POPULATE_WRITE: i32 = 23;
    const PAGE: usize = 4096;

    extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        fn mincore(addr: *mut std::ffi::c_void, len: usize, vec: *mut u8) -> i32;
    }

    /// One large anonymous mapping and how far it is populated (in chunks).
    struct Region {
        start: usize,
        chunks: usize,
        populated: usize,
    }

    pub(super) fn run() {
        let mut regions: Vec<Region> = Vec::new();
        let mut rescan = Instant::now();
        let mut residency = vec![0u8; TRIPWIRE / PAGE];
        // Some mapping was used past START: the export is large, and every mapping is populated
        // ahead of use from its first chunk on (a large export fills 1 GiB arenas one after the
        // other, each new one from its start).
        let mut large = false;
        loop {
            if rescan <= Instant::now() {
                if !rescan_maps(&mut regions) {
                    return;
                }
                rescan = Instant::now() + Duration::from_millis(20);
            }
            for r in &mut regions {
                // Chunks the main thread has reached: up to the highest whose tripwire it touched.
                let top = r.chunks.min(r.populated + MAX_AHEAD + 1);
                let reached = match (0..top).rev().find(|&c| tripped(r.start + c * CHUNK, &mut residency)) {
                    Some(c) => c + 1,
                    // A mapping the allocator added to a large process (mimalloc's arenas are
                    // 1 GiB each): it will be filled too, from its start.
                    None if large => 0,
                    None => continue,
                };
                if reached * CHUNK < START && !large {
                    continue;
                }
                large = true;
                let want = (reached + MAX_AHEAD).min(r.chunks);
                r.populated = r.populated.max(reached);
                while r.populated < want {
                    let at = r.start + r.populated * CHUNK;
                    // SAFETY: populating only faults in pages (zero-filled if new) of a mapping this
                    // process owns; it never changes the contents of memory in use.
                    if unsafe { madvise(at as *mut _, CHUNK - TRIPWIRE, MADV_POPULATE_WRITE) } != 0 {
                        // Unsupported advice, or memory the allocator keeps inaccessible.
                        r.populated = r.chunks;
                        break;
                    }
                    r.populated += 1;
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Whether any page of chunk `at`'s tripwire is resident.
    fn tripped(at: usize, residency: &mut [u8]) -> bool {
        // SAFETY: mincore only reads page-table state of our own mapping into `residency`.
        let rc = unsafe { mincore((at + CHUNK - TRIPWIRE) as *mut _, TRIPWIRE, residency.as_mut_ptr()) };
        rc == 0 && residency.iter().any(|&b| b & 1 != 0)
    }

    /// Track new large private anonymous read-write mappings; false when the maps cannot be read.
    fn rescan_maps(regions: &mut Vec<Region>) -> bool {
        let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else { return false };
        for line in maps.lines() {
            let mut f = line.split_ascii_whitespace();
            let (Some(range), Some(perms), Some(_), Some(_), Some(inode)) =
                (f.next(), f.next(), f.next(), f.next(), f.next())
            else {
                continue;
            };
            // Anonymous (no inode, no path), private, readable and writable.
            if perms != "rw-p" || inode != "0" || f.next().is_some() {
                continue;
            }
            let Some((a, b)) = range.split_once('-') else { continue };
            let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) else { continue };
            let start = a.next_multiple_of(TRIPWIRE);
            let chunks = b.saturating_sub(start) / CHUNK;
            if chunks < 8 {
                continue;
            }
            // A mapping placed right after a known one shows as the known one grown.
            match regions.iter_mut().find(|r| r.start == start) {
                Some(r) => r.chunks = r.chunks.max(chunks),
                None => regions.push(Region { start, chunks, populated: 0 }),
            }
        }
        true
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    extern "C" {
        fn mmap(
            addr: *mut std::ffi::c_void,
            len: usize,
            prot: i32,
            flags: i32,
            fd: i32,
            off: i64,
        ) -> *mut std::ffi::c_void;
        fn munmap(addr: *mut std::ffi::c_void, len: usize) -> i32;
        fn mincore(addr: *mut std::ffi::c_void, len: usize, vec: *mut u8) -> i32;
    }

    fn resident(p: *mut u8, len: usize) -> usize {
        let mut v = vec![0u8; len / 4096];
        // SAFETY: mincore reads page-table state of a live mapping of ours.
        assert_eq!(unsafe { mincore(p.cast(), len, v.as_mut_ptr()) }, 0);
        v.iter().filter(|&&b| b & 1 != 0).count() * 4096
    }

    /// The thread populates a large mapping ahead of use once its use passed `START`, and never
    /// changes what is already written there.
    #[test]
    fn populates_ahead_of_use_without_changing_memory() {
        let len = 32 * CHUNK;
        // SAFETY: a fresh private anonymous read-write mapping (PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS).
        let p = unsafe { mmap(std::ptr::null_mut(), len, 3, 0x22, -1, 0) } as *mut u8;
        assert!(!p.is_null() && p as isize != -1);
        // SAFETY: the mapping is ours, `len` bytes long, and only this thread writes to it.
        let mem = unsafe { std::slice::from_raw_parts_mut(p, len) };
        prefault_in_background();
        let used = START + CHUNK;
        for (i, b) in mem[..used].iter_mut().enumerate().step_by(4096) {
            *b = (i / 4096) as u8 | 1;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while resident(p, len) < used + 2 * CHUNK && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let r = resident(p, len);
        assert!(r >= used + 2 * CHUNK, "only {} MiB resident after using {} MiB", r >> 20, used >> 20);
        assert!(r <= used + (MAX_AHEAD + 2) * CHUNK, "{} MiB resident: populated too far ahead", r >> 20);
        for (i, b) in mem[..used].iter().enumerate().step_by(4096) {
            assert_eq!(*b, (i / 4096) as u8 | 1, "page {} changed", i / 4096);
        }
        assert!(mem[used..].iter().step_by(4096).all(|&b| b == 0));
        // SAFETY: unmapping our own mapping; `mem` is not used afterwards.
        unsafe { munmap(p.cast(), len) };
    }
}
