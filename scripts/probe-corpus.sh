#!/bin/sh
# BENCHMARKS.md's fidelity table: every corpus transcript probed at a window,
# one Markdown row per transcript whose replay folds at least twice.
# Usage: scripts/probe-corpus.sh WINDOW OUTPUT_RESERVED [extra probe flags]
# Needs jq; reads $COMPACTOR_CORPUS (default ../shared/corpus); uses a scratch store.
set -eu
cd "$(dirname "$0")/.."
window=$1 reserved=$2
shift 2
corpus=${COMPACTOR_CORPUS:-../shared/corpus}
bin=${COMPACTOR_BIN:-target/release/compactor}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db=$tmp/probe.db
echo "| transcript | calls | folds | tokens at the last call (raw → view) | critical kept, worst call | critical kept, last call | all kept, last call |"
echo "|---|---:|---:|---|---|---|---|"
find "$corpus" -name '*.jsonl' | LC_ALL=C sort | while read -r f; do
  rel=${f#"$corpus"/}
  json=$("$bin" --db "$db" --quiet probe "$f" --window "$window" --output-reserved "$reserved" --json "$@" 2>/dev/null) || continue
  echo "$json" | jq -r --arg f "$rel" '
    def pct(x): "\((x/10)|floor).\(x%10)%";
    select(.folds >= 2) |
    "| \($f) | \(.call) | \(.folds) | \(.raw_tokens) → \(.tokens_after) (−\(((.raw_tokens - .tokens_after) * 100 / .raw_tokens)|floor)%) | \(pct(.worst_call.critical_kept_permille)) (call \(.worst_call.call)\(if .worst_call.critical_lost > 0 then ", \(.worst_call.critical_lost) lost" else "" end)) | \(pct(if .critical_judged == 0 then 1000 else ((.critical_judged - .critical_lost) * 1000 / .critical_judged)|floor end)) | \(pct(if .judged == 0 then 1000 else ((.passed + .recoverable) * 1000 / .judged)|floor end)) |"'
done
