//! The `compactor` binary: everything lives in the library.

use std::process::ExitCode;

fn main() -> ExitCode {
    compactor::main(std::env::args_os())
}
