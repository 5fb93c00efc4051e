//! The `compactor` binary: everything lives in the library.

use std::process::ExitCode;

/// mimalloc (its 2.x line, which holds less memory than 3.x here) in place
/// of the system allocator: a replay allocates and frees a view's worth of
/// blocks at every call, and glibc's malloc spent a third of the time on
/// it (measured in the history of BENCHMARKS.md, "Import, preflight and replay").
/// Blocks of 1 MiB and more are mapped on their own (`allocator::Hybrid`):
/// the proxy's peak on a large body is what it writes, and it is returned
/// when freed (BENCHMARKS.md, "Live proxy").
#[global_allocator]
static GLOBAL: compactor::allocator::Hybrid = compactor::allocator::Hybrid;

unsafe extern "C" {
    /// mimalloc's own: free what it holds and no longer uses.
    fn mi_collect(force: bool);
}

/// Return to the system the memory mimalloc keeps after a large transfer:
/// it purges freed memory lazily, when a thread next allocates, and a proxy
/// that has gone quiet after a 60 MB body would keep it.
fn release_memory() {
    // SAFETY: mi_collect takes no pointer and may be called from any thread.
    unsafe { mi_collect(true) }
}

/// SQLite (bundled, in C) allocates with the C library's `malloc`, not
/// with the global allocator. glibc raises the size from which it maps a
/// block on its own to the largest mapped block freed (up to 32 MiB): once
/// a large row has been read, the buffers of the next ones come from an
/// arena and stay resident after the request (36 MB after one text block
/// of 64 MB). Fixed at [`compactor::allocator::LARGE`], as the global
/// allocator's: a larger block is a mapping of its own, returned when freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn map_large_c_blocks() {
    let large = i32::try_from(compactor::allocator::LARGE).expect("1 MiB fits an int");
    // SAFETY: mallopt takes no pointer; called before any other thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, large);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn map_large_c_blocks() {}

fn main() -> ExitCode {
    map_large_c_blocks();
    compactor::release_memory_with(release_memory);
    compactor::main(std::env::args_os())
}
