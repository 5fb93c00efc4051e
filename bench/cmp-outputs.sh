#!/bin/sh
# The outputs of two compactor binaries over the same generated sessions,
# compared byte for byte with cmp: replay (human, --json, --jsonl, each also
# with --probes), probe (human, --json) and report, at each CALLS.
#
#     bench/cmp-outputs.sh OLD NEW [CALLS ...]     (default: 1000 10000)
#
# Each binary imports the sessions into a store of its own. Prints one line
# per output (same / DIFFERS) and exits 1 when any differs. A report past
# four points a pixel column of its charts is drawn per column by design;
# its line says so, and its tables are compared on their own.
set -eu
[ $# -ge 2 ] || { echo "usage: bench/cmp-outputs.sh OLD NEW [CALLS ...]" >&2; exit 2; }
old=$1
new=$2
shift 2
[ $# -gt 0 ] || set -- 1000 10000
cd "$(dirname "$0")/.."
task=b3e1c0de-0000-4000-a000-000000010000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for calls in "$@"; do
    session=$tmp/claude-code-$calls.jsonl
    python3 bench/gen_session.py "$calls" 1 >"$session"
    for side in old new; do
        eval "bin=\$$side"
        db=$tmp/$side-$calls.db
        "$bin" -q --db "$db" import "$session" >/dev/null
        run() {
            name=$1
            shift
            # Exit status 1 is a result (a call over budget), not a failure.
            "$bin" -q --color never --db "$db" "$@" --task "$task" --window 200000 \
                >"$tmp/$side-$calls-$name" || [ $? -eq 1 ]
        }
        run replay.txt replay
        run replay.json replay --json
        run replay.jsonl replay --jsonl
        run replay-probes.txt replay --probes
        run replay-probes.json replay --json --probes
        run replay-probes.jsonl replay --jsonl --probes
        run probe.txt probe
        run probe.json probe --json
        run report.html report -o -
    done
    for name in replay.txt replay.json replay.jsonl replay-probes.txt replay-probes.json \
        replay-probes.jsonl probe.txt probe.json report.html; do
        a=$tmp/old-$calls-$name
        b=$tmp/new-$calls-$name
        if cmp -s "$a" "$b"; then
            echo "$calls calls  $name  same ($(wc -c <"$a") bytes)"
        elif [ "$name" = report.html ] && grep -q 'D.from' "$b"; then
            # Drawn per pixel column: the tables (every section but the charts and data) must agree.
            tables() { sed -e 's/<svg.*<\/svg>//' -e '/<script/,/<\/script>/d' "$1"; }
            tables "$a" >"$tmp/a-tables"
            tables "$b" >"$tmp/b-tables"
            if cmp -s "$tmp/a-tables" "$tmp/b-tables"; then
                echo "$calls calls  $name  drawn per pixel column ($(wc -c <"$a") -> $(wc -c <"$b") bytes); the rest same ($(wc -c <"$tmp/a-tables") bytes)"
            else
                echo "$calls calls  $name  DIFFERS outside the charts"
                status=1
            fi
        else
            echo "$calls calls  $name  DIFFERS ($(cmp "$a" "$b" 2>&1 | head -1))"
            status=1
        fi
    done
    rm -f "$tmp"/*-"$calls"-* "$tmp"/*-"$calls".db* "$session"
done
exit $status
