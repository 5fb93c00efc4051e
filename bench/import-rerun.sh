#!/bin/sh
# A second `compactor import` over an unchanged tree, against the first one.
# Builds a fake home in a temp dir holding every corpus session (Claude Code
# projects with their subagents, Codex rollouts), imports it twice and prints
# both wall times and their ratio. Usage: bench/import-rerun.sh [BINARY]
# (default: target/release/compactor, else target/debug/compactor).
set -eu
cd "$(dirname "$0")/.."
corpus=${COMPACTOR_CORPUS:-../shared/corpus}
bin=${1:-}
if [ -z "$bin" ]; then
    if [ -x target/release/compactor ]; then bin=target/release/compactor; else bin=target/debug/compactor; fi
fi
[ -d "$corpus" ] || { echo "the corpus is absent ($corpus); set COMPACTOR_CORPUS" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
home=$tmp/home
for d in "$corpus"/claude-code/*/; do
    mkdir -p "$home/.claude/projects/-work-$(basename "$d")"
    cp -R "$d". "$home/.claude/projects/-work-$(basename "$d")/"
done
for d in "$corpus"/codex/*/; do
    mkdir -p "$home/.codex/sessions/2026/01/$(basename "$d")"
    cp -R "$d". "$home/.codex/sessions/2026/01/$(basename "$d")/"
done
chmod -R u+w "$tmp"
files=$(find "$home" -name '*.jsonl' | wc -l)
bytes=$(find "$home" -name '*.jsonl' -exec cat {} + | wc -c)
now() { date +%s%N; }
t0=$(now)
HOME=$home "$bin" --db "$tmp/store.db" -q import >/dev/null
t1=$(now)
HOME=$home "$bin" --db "$tmp/store.db" -q import >"$tmp/second.txt"
t2=$(now)
first=$(( (t1 - t0) / 1000000 ))
second=$(( (t2 - t1) / 1000000 ))
echo "binary: $bin"
echo "sessions: $files files, $bytes bytes"
echo "first import:  ${first} ms"
echo "second import: ${second} ms ($(cat "$tmp/second.txt"))"
echo "second / first: $(( second * 1000 / first )) per mille"
