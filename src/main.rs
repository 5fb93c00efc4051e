//! The `compactor` binary: everything lives in the library.

fn main() {
    std::process::exit(compactor::cmd::main(std::env::args_os()));
}
