//! The CLI's allocator: mimalloc, tuned for one short process that builds and drops large graphs.
//!
//! Exports allocate millions of small strings and vectors (names, metadata, shapes); glibc's malloc
//! spent up to 40 % of large exports in its own bookkeeping, mimalloc a fraction of that. Shared by
//! `src/main.rs` and `benches/export.rs` (included by path) so benchmark stage times are the CLI's.

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
/// reuse; an export frees the parsed JSON and graph copies while building the next, so on the 100k-node
/// synthetic transformer that round trip cost 0.6–2.5 s of kernel time per run (0.2–0.3 s with this).
/// Peak RSS is unchanged (±3 %): the memory is reused, not added. Call first thing in `main`.
pub fn tune() {
    // SAFETY: plain C calls into the linked allocator; options are read at each decision.
    unsafe {
        if mi_version() / 10000 == 3 {
            mi_option_set(MI_OPTION_PURGE_DELAY, -1);
        }
    }
}
