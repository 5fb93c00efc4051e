#!/bin/sh
# Benchmark one sweep policy on long generated Claude Code sessions against
# `replay --jsonl` and `probe --json` on the same session, release build.
#
#   bench/sweep-long.sh [RUNS [CALLS...]]
#
# RUNS defaults to 3, CALLS to 1000 5000 10000. Each session is written by
# bench/gen_session.py (seed 1) and imported into its own temporary store
# first (not timed). The policy is window 64000 with --jobs 1, so the sweep
# runs three jobs one after another: the policy, its trim and the recorded
# reference. Prints per command the median wall time and peak RSS of RUNS
# runs (/usr/bin/time), and the 1-minute load average before the first.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
[ $# -gt 0 ] && shift
calls=${*:-1000 5000 10000}
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin=${COMPACTOR_BIN:-$root/target/release/compactor}
task=b3e1c0de-0000-4000-a000-000000010000
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for n in $calls; do
    python3 "$root/bench/gen_session.py" "$n" 1 > "$work/s.jsonl"
    rm -f "$work/store.db"
    "$bin" --db "$work/store.db" -q import "$work/s.jsonl" > /dev/null
    size=$(du -m "$work/s.jsonl" | cut -f1)
    echo "$n calls ($size MB), load $(cut -d' ' -f1 /proc/loadavg)"
    for cmd in "replay --task $task --window 64000 --jsonl" \
               "probe --task $task --window 64000 --json" \
               "sweep --task $task --window 64000 --jobs 1 --json"; do
        : > "$work/times"
        i=0
        while [ "$i" -lt "$runs" ]; do
            # shellcheck disable=SC2086
            /usr/bin/time -f "%e %M" -a -o "$work/times" \
                "$bin" --db "$work/store.db" -q $cmd > "$work/out" || [ $? -eq 1 ]
            i=$((i + 1))
        done
        wall=$(cut -d' ' -f1 "$work/times" | median)
        rss=$(cut -d' ' -f2 "$work/times" | median)
        echo "  ${cmd%% *}: ${wall} s, $((rss / 1024)) MiB (median of $runs)"
    done
done
