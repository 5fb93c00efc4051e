#!/usr/bin/env python3
"""Issue 43's figures over the corpus: does the head carry what a model
needs to continue?

For every transcript of the corpus at each window it runs `compactor probe
--json` (every call replayed, scored at the last call) and `compactor compact
--in-place` (so every summary the replay mints is in the store), and prints,
per window, summed over the transcripts that fold at least once:

- `definition`: files whose latest changed definition the last view names,
  of those judged (one per file written with a definition in its text);
- `outcome`: the latest test, build or lint run's counts kept;
- `next`: the plan's next step or the agent's latest stated intent kept;
- `reason`: decisions' reasons kept;
- critical probes lost (last call, worst call) and misleading lines;
- the largest head (chars/4 tokens) and how many heads were over the budget.

Then it lists the exceptions: each transcript whose last view lost a
definition, the outcome or the next step, with the probe's text.

Usage: scripts/continuation-corpus.py [--windows 16000,32000,64000]
       [--summary-budget N] [--output-reserved N] [--bin PATH] [--corpus DIR]
Needs the release build (cargo build --release) unless --bin names another.
Reads $COMPACTOR_CORPUS (default ../shared/corpus); uses scratch stores.
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

KINDS = ["definition", "outcome", "next", "reason"]


def tokens(text):
    return -(-len(text) // 4)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def measure(binary, path, window, extra, work):
    db = os.path.join(work, "store.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    base = [binary, "--db", db, "--quiet"]
    flags = ["--window", str(window)] + extra
    probe = run(base + ["probe", path] + flags + ["--json"])
    if probe.returncode not in (0, 1) or not probe.stdout.strip():
        return None
    p = json.loads(probe.stdout)
    view = os.path.join(work, "view.json")
    compact = run(base + ["compact", path] + flags + ["--in-place", "-o", view, "--json"])
    if compact.returncode not in (0, 1) or not compact.stdout.strip():
        return None
    report = json.loads(compact.stdout)
    task = report["task"]
    budget = report.get("budget", {}).get("summary_budget_tokens")
    con = sqlite3.connect(db)
    heads = [json.loads(e)["text"] for (e,) in con.execute(
        "SELECT entry FROM task_compaction_snapshot WHERE task_id = ? AND key LIKE 'cov:%'",
        (task,))]
    con.close()
    r = {
        "calls": p["call"], "folds": p.get("folds", 0),
        "critical_lost": p["critical_lost"],
        "worst_critical_lost": p.get("worst_call", {}).get("critical_lost", 0),
        "misleading": p["misleading"], "misleading_calls": p.get("misleading_calls", 0),
        "heads": len(heads), "max_head": max((tokens(h) for h in heads), default=0),
        "budget": budget,
        "over_budget": sum(1 for h in heads if budget and tokens(h) > budget),
        "kinds": {k: p["categories"].get(k, {}) for k in KINDS},
        "lost": [l for l in p.get("lost", []) if l["category"] in KINDS],
    }
    return r


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--windows", default="16000,32000,64000")
    ap.add_argument("--summary-budget", type=int)
    ap.add_argument("--output-reserved", type=int)
    ap.add_argument("--bin", default=os.path.join(root, "target", "release", "compactor"))
    ap.add_argument("--corpus", default=os.environ.get(
        "COMPACTOR_CORPUS", os.path.join(root, "..", "shared", "corpus")))
    args = ap.parse_args()
    if not os.path.isdir(args.corpus):
        sys.exit(f"no corpus at {args.corpus}: set COMPACTOR_CORPUS")
    extra = []
    if args.summary_budget:
        extra += ["--summary-budget", str(args.summary_budget)]
    if args.output_reserved is not None:
        extra += ["--output-reserved", str(args.output_reserved)]
    files = sorted(
        os.path.join(d, f) for d, _, fs in os.walk(args.corpus) for f in fs if f.endswith(".jsonl"))
    print(f"{len(files)} transcripts; summary budget "
          f"{args.summary_budget or 'default (by window)'}")
    print()
    print("| window | folded | definition kept | outcome kept | next kept | reason kept "
          "| critical lost: last / worst | misleading | largest head | heads over budget |")
    print("|---:|---:|---|---|---|---|---|---:|---:|---|")
    exceptions = []
    with tempfile.TemporaryDirectory() as work:
        for window in [int(w) for w in args.windows.split(",")]:
            agg = {k: [0, 0] for k in KINDS}
            folded = crit = worst = mis = over = heads = largest = 0
            budget = None
            for f in files:
                r = measure(args.bin, f, window, extra, work)
                if r is None or r["folds"] == 0:
                    continue
                folded += 1
                budget = r["budget"]
                for k in KINDS:
                    c = r["kinds"][k]
                    judged = c.get("passed", 0) + c.get("recoverable", 0) + c.get("lost", 0)
                    agg[k][0] += c.get("passed", 0) + c.get("recoverable", 0)
                    agg[k][1] += judged
                crit += r["critical_lost"]
                worst += r["worst_critical_lost"]
                mis += r["misleading"]
                over += r["over_budget"]
                heads += r["heads"]
                largest = max(largest, r["max_head"])
                rel = os.path.relpath(f, args.corpus)
                for l in r["lost"]:
                    if l["category"] != "reason":
                        exceptions.append((window, rel, l["category"], l["expected"]))
            cells = " | ".join(f"{a} of {b}" for a, b in (agg[k] for k in KINDS))
            print(f"| {window} | {folded} | {cells} | {crit} / {worst} | {mis} | {largest} "
                  f"| {over} of {heads} (budget {budget}) |")
    print()
    print("Exceptions (lost at the last call):")
    if not exceptions:
        print("- none")
    for window, rel, kind, expected in exceptions:
        print(f"- {window} {rel}: {kind} `{expected[:100]}`")


if __name__ == "__main__":
    main()
