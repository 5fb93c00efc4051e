#!/bin/sh
# Benchmark `compactor sweep` of 9 policies (3 windows × 3 trigger ratios)
# over the whole corpus, with --jobs 1 and --jobs 2, with the release build.
#
#   bench/sweep-bench.sh [CORPUS [RUNS]]
#
# CORPUS defaults to $COMPACTOR_CORPUS, else ../shared/corpus. The corpus is
# imported into a temporary store first, so the sweeps time the runs only.
# Prints, per run, the wall time, the CPU time and the peak RSS, the 1-minute
# load average before it, and checks that every run printed the same bytes.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-${COMPACTOR_CORPUS:-$root/../shared/corpus}}
runs=${2:-3}
[ -d "$corpus" ] || { echo "$0: no corpus at $corpus" >&2; exit 2; }
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin=$root/target/release/compactor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
"$bin" --db "$work/store.db" -q import "$corpus" > /dev/null
grid="--window 32000,64000,200000 --trigger-ratio 0.5,0.65,0.8 --stop-ratio 0.4"
i=0
while [ "$i" -lt "$runs" ]; do
    for jobs in 1 2; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        # shellcheck disable=SC2086
        /usr/bin/time -f "jobs $jobs: %e s wall, %U s user + %S s system, %M KB peak (load $load)" \
            "$bin" --db "$work/store.db" -q sweep "$corpus" $grid --jobs "$jobs" --json > "$work/out-$jobs-$i.jsonl" || [ $? -eq 1 ]
        cmp -s "$work/out-1-0.jsonl" "$work/out-$jobs-$i.jsonl" || { echo "$0: run $i with --jobs $jobs printed other bytes" >&2; exit 1; }
    done
    i=$((i + 1))
done
rows=$(grep -c sweep_row "$work/out-1-0.jsonl")
sessions=$(grep -o '"session":"[^"]*"' "$work/out-1-0.jsonl" | sort -u | wc -l)
echo "$sessions sessions, $rows rows; every run printed the same bytes"
