#!/bin/sh
# Benchmark `compactor report` against `compactor replay` on a synthetic
# session of CALLS model calls (bench/gen_session.py), with the release build.
#
#   bench/report-bench.sh CALLS [budget flags...]
#
# Prints the wall time and peak memory of the replay (`replay --json`) and of
# the report, and the report's size. Work files go to a temporary directory.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 CALLS [budget flags...]" >&2; exit 2; }
calls=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin=$root/target/release/compactor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
python3 "$root/bench/gen_session.py" "$calls" > "$work/session.jsonl"
task=b3e1c0de-0000-4000-a000-000000010000
"$bin" --db "$work/store.db" import "$work/session.jsonl" > /dev/null
echo "session: $calls calls, $(wc -c < "$work/session.jsonl") bytes"
/usr/bin/time -f "replay: %e s, %M KB peak" "$bin" --db "$work/store.db" replay --task "$task" --json "$@" > /dev/null
/usr/bin/time -f "report: %e s, %M KB peak" "$bin" --db "$work/store.db" -q report --task "$task" -o "$work/report.html" "$@"
echo "report size: $(wc -c < "$work/report.html") bytes"
