//! The `compactor` binary: everything lives in the library.

use std::process::ExitCode;

/// mimalloc (its 2.x line, which holds less memory than 3.x here) in place
/// of the system allocator: a replay allocates and frees a view's worth of
/// blocks at every call, and glibc's malloc spent a third of the time on
/// it (measured in the history of BENCHMARKS.md, "Import, preflight and replay").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    compactor::main(std::env::args_os())
}
