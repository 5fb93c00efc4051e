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

fn main() -> ExitCode {
    compactor::release_memory_with(release_memory);
    compactor::main(std::env::args_os())
}
