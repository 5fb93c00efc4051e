#!/bin/sh
# The corpus table of the guide (docs/src/sweep.md) and BENCHMARKS.md: a sweep
# of every corpus session at 32k, 64k and 200k (default trigger and stop),
# and per policy and reference, summed over the sessions: the cost against
# the clients' own sends (recorded) and against observation masking (mask)
# at the same window, the critical probes lost (at the last call, and the
# sessions where any call lost one), the prefix breaks and the calls over
# the window. Then the checks of issue 34: no recommendation costs more
# than the client's own sends, and every session has a mask row at every
# window.
#
#   bench/policy-table.sh [CORPUS [--cache-ttl 5m|1h]]
#
# CORPUS defaults to $COMPACTOR_CORPUS, else ../shared/corpus. Release
# build; the corpus is imported into a temporary store.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-${COMPACTOR_CORPUS:-$root/../shared/corpus}}
[ $# -gt 0 ] && shift
[ -d "$corpus" ] || { echo "$0: no corpus at $corpus" >&2; exit 2; }
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin=$root/target/release/compactor
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
"$bin" --db "$work/store.db" -q import "$corpus" > /dev/null
"$bin" --db "$work/store.db" -q sweep "$corpus" --window 32000,64000,200000 --json "$@" \
    > "$work/sweep.jsonl" || [ $? -eq 1 ]
python3 - "$work/sweep.jsonl" <<'PY'
import json, sys

rows, total = [], None
for line in open(sys.argv[1]):
    v = json.loads(line)
    if v["schema"] == "compactor.sweep_row/1":
        rows.append(v)
    else:
        total = v
groups = total["policies"] + total["trim"] + total["mask"] + [total["recorded"]]
recorded = total["recorded"]["estimated_cost_micros"]
# Masking runs at every call whatever the window (the window only tells
# the calls over it), so its cost is one figure.
mask_costs = {g["cost_micros"] for g in total["mask"]}
assert len(mask_costs) == 1, mask_costs
mask = mask_costs.pop()

def cost(g):
    return g["estimated_cost_micros"] if g["kind"] == "recorded" else g["cost_micros"]

def pct(c, ref):
    return "%+.1f%%" % (100.0 * (c - ref) / ref)

def name(g):
    w = g["policy"] and g["policy"]["window"]
    return {"policy": "compactor at %s" % w, "trim": "trim at %s" % w,
            "mask": "mask at %s" % w, "recorded": "recorded (the clients' own)"}[g["kind"]]

n = len(total["sessions"])
print("%d sessions, %d calls; cost in USD at each session's model's prices, estimated tokens, 5-minute cache unless given" % (n, total["recorded"]["calls"]))
print()
print("| run | cost | vs recorded | vs mask | critical lost (sessions) | prefix breaks | calls over the window |")
print("|---|---:|---:|---:|---:|---:|---:|")
for g in sorted(groups, key=cost):
    vs_mask = "-" if g["kind"] == "mask" else pct(cost(g), mask)
    print("| %s | $%.2f | %s | %s | %d (%d of %d) | %d | %s |" % (
        name(g), cost(g) / 1e6, "-" if g["kind"] == "recorded" else pct(cost(g), recorded),
        vs_mask, g["critical_lost"], g["sessions_losing_critical"], g["sessions"],
        g["prefix_breaks"], "-" if g["over_window_calls"] is None else g["over_window_calls"]))
rec = total["recommendation"]
what = "keep what the clients do" if rec["kind"] == "recorded" else "compactor at %s" % rec["policy"]["window"]
print()
print("recommended for all %d sessions: %s ($%.2f)" % (n, what, rec["cost_micros"] / 1e6))
dearer = [s["session"] for s in total["sessions"]
          if s["recommendation"] and s["recommendation"]["cost_micros"] > s["recommendation"]["recorded_cost_micros"]]
kept = sum(1 for s in total["sessions"] if s["recommendation"] and s["recommendation"]["kind"] == "recorded")
masked = {r["session"] for r in rows if r["kind"] == "mask"}
print("per session: %d recommend a policy, %d keep what the client does; %d recommendations cost more than the client's own sends; %d of %d sessions have mask rows at the 3 windows"
      % (n - kept, kept, len(dearer), sum(1 for s in total["sessions"] if sum(1 for r in rows if r["session"] == s["session"] and r["kind"] == "mask") == 3), n))
PY
