#!/bin/sh
# Regenerate the shell completions and the man page in this directory from
# the current binary. Run from anywhere; `cargo test` fails until the
# committed files match what the binary prints.
set -eu
cd "$(dirname "$0")/.."
unset COMPACTOR_DB NO_COLOR
cargo build --quiet
run() { cargo run --quiet -- "$@"; }
run completions bash > completions/compactor.bash
run completions zsh > completions/_compactor
run completions fish > completions/compactor.fish
run completions elvish > completions/compactor.elv
run completions powershell > completions/_compactor.ps1
run man > completions/compactor.1
# One page per subcommand, as the main page's SEE ALSO names them.
rm -rf completions/man
mkdir -p completions/man
for sub in $(run man --list); do
    run man "$sub" > "completions/man/compactor-$sub.1"
done
