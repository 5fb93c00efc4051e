#!/usr/bin/env python3
"""Issue 35's figures over the corpus: does the Task Context say only what is
true, and does it still hold what it must?

For every transcript of the corpus (Claude Code and Codex) at each window, it
runs `compactor probe --json` (scored at the last call, every call replayed)
and `compactor compact --in-place` (so every summary the replay mints is in
the store), then reads every minted summary back from the store. It prints,
per window, summed over the transcripts:

- misleading lines at the last call, by kind (`ruled_out_succeeded`: a Ruled
  out line whose action later succeeded; `open_error_resolved`;
  `owed_written`), and how many calls' views carried one;
- narrated Findings: lines under `## Findings`, in every minted summary, whose
  statement narrates intent ("Now let me…", "Let me…", "I'll…", "Next…");
  read here by a pattern of this script's own, not by compactor's;
- critical probes lost, at the last call and at the worst call;
- abandoned approaches: the `error` probes of calls whose action never
  succeeded afterwards, kept by the last call's view (of those judged), and
  the `## Ruled out` lines the last call's view carries;
- head size: the largest minted summary, in chars/4 tokens, against the
  2,500-token budget, and how many summaries were over it.

Usage: scripts/precision-corpus.py [--windows 16000,32000,64000] [--bin PATH]
       [--corpus DIR] [--details]
Needs the release build (cargo build --release) unless --bin names another.
Reads $COMPACTOR_CORPUS (default ../shared/corpus); uses scratch stores.
"""
import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

BUDGET = 2500
NARRATION = re.compile(
    r"^\W*(?:(?:now|ok|okay|so|good|great|perfect|alright|first|then|also|and|but)\b[,\s]*)*"
    r"(?:let me|let's|lets|i'll|i will|i'm going to|i am going to|i need to|i should|"
    r"i want to|we need to|we'll|we will|next\b|time to)"
    # "Now file the bead…": an instruction to oneself.
    r"|^\W*now\s+(?:add|check|create|fix|file|look|make|read|run|try|update|verify|write)\b",
    re.IGNORECASE,
)


def sections(text):
    """{heading: [fact text, ...]} and the Current state lines of a summary."""
    out, state, place = {}, {}, None
    for line in text.split("\n"):
        if line.startswith("## "):
            place = line[3:].strip()
            out.setdefault(place, [])
            continue
        if place == "Current state":
            if ": " in line:
                k, v = line.split(": ", 1)
                state[k] = v
        elif place and line.startswith("- "):
            out[place].append(line[2:].split(": ", 1)[-1])
    return out, state


def tokens(text):
    return -(-len(text) // 4)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def measure(binary, path, window, work):
    db = os.path.join(work, "store.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    base = [binary, "--db", db, "--quiet"]
    probe = run(base + ["probe", path, "--window", str(window), "--json"])
    if probe.returncode not in (0, 1) or not probe.stdout.strip():
        return None
    p = json.loads(probe.stdout)
    view = os.path.join(work, "view.json")
    compact = run(base + ["compact", path, "--window", str(window), "--in-place",
                          "-o", view, "--json"])
    # Exit 1: the last view is still over the window (it is measured all the same).
    if compact.returncode not in (0, 1) or not compact.stdout.strip():
        return None
    task = json.loads(compact.stdout)["task"]
    con = sqlite3.connect(db)
    heads = [json.loads(e)["text"] for (e,) in con.execute(
        "SELECT entry FROM task_compaction_snapshot WHERE task_id = ? AND key LIKE 'cov:%'",
        (task,))]
    con.close()
    with open(view) as f:
        first = json.load(f)["messages"][0]["content"]
    final = next((b["text"] for b in first if b.get("type") == "text"
                  and b["text"].startswith("## Task Context")), None)
    r = {
        "calls": p["call"], "folds": p.get("folds", 0),
        "misleading": p["misleading"], "misleading_calls": p.get("misleading_calls", 0),
        "kinds": {}, "critical_lost": p["critical_lost"],
        "worst_critical_lost": p.get("worst_call", {}).get("critical_lost", 0),
        "abandoned_judged": p["abandoned_judged"], "abandoned_lost": p["abandoned_lost"],
        "heads": len(heads), "max_head": max((tokens(h) for h in heads), default=0),
        "over_budget": sum(1 for h in heads if tokens(h) > BUDGET),
        "findings": 0, "narrated": [], "ruled_out_final": 0,
        "judged": p["judged"], "kept": p["passed"] + p["recoverable"],
        "lost_by_category": {c: n["lost"] for c, n in p["categories"].items()},
    }
    for m in p["misleading_lines"]:
        r["kinds"][m["kind"]] = r["kinds"].get(m["kind"], 0) + 1
    seen = set()
    for h in heads:
        facts, _ = sections(h)
        for f in facts.get("Findings", []):
            if f in seen:
                continue
            seen.add(f)
            r["findings"] += 1
            if NARRATION.match(f):
                r["narrated"].append(f)
    if final:
        facts, _ = sections(final)
        r["ruled_out_final"] = len(facts.get("Ruled out", []))
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--windows", default="16000,32000,64000")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--bin", default=os.path.join(root, "target", "release", "compactor"))
    ap.add_argument("--corpus", default=os.environ.get(
        "COMPACTOR_CORPUS", os.path.join(root, "..", "shared", "corpus")))
    ap.add_argument("--details", action="store_true", help="one line per transcript too")
    a = ap.parse_args()
    if not os.path.isdir(a.corpus):
        sys.exit(f"{sys.argv[0]}: no corpus at {a.corpus}")
    files = sorted(
        os.path.join(d, f) for d, _, fs in os.walk(a.corpus) for f in fs if f.endswith(".jsonl"))
    windows = [int(w) for w in a.windows.split(",")]
    cols = ["misleading", "misleading_calls", "critical_lost", "worst_critical_lost",
            "abandoned_judged", "abandoned_lost", "heads", "over_budget", "findings",
            "ruled_out_final", "judged", "kept"]
    print(f"{len(files)} transcripts of {a.corpus}; a head's size in chars/4 tokens, budget {BUDGET}")
    print()
    print("| window | sessions (folded) | misleading at the last call: ruled out / open error / owed "
          "| views with a misleading line | narrated findings / findings (every head) "
          "| critical lost: last / worst call | abandoned approaches kept | ruled-out lines, last call "
          "| largest head | heads over budget | all probes kept, last call |")
    print("|---:|---|---|---:|---|---|---|---:|---:|---|---|")
    notes = []
    with tempfile.TemporaryDirectory() as work:
        for w in windows:
            tot = {c: 0 for c in cols}
            kinds, narrated, sessions, folded, max_head = {}, [], 0, 0, 0
            lost_by_category = {}
            for path in files:
                r = measure(a.bin, path, w, work)
                if r is None:
                    notes.append(f"{w}: {os.path.relpath(path, a.corpus)} could not be measured")
                    continue
                sessions += 1
                folded += r["folds"] > 0
                max_head = max(max_head, r["max_head"])
                for c in cols:
                    tot[c] += r[c]
                for k, n in r["kinds"].items():
                    kinds[k] = kinds.get(k, 0) + n
                for k, n in r["lost_by_category"].items():
                    lost_by_category[k] = lost_by_category.get(k, 0) + n
                narrated += [(path, f) for f in r["narrated"]]
                if a.details:
                    rel = os.path.relpath(path, a.corpus)
                    notes.append(
                        f"{w} {rel}: calls {r['calls']} folds {r['folds']} "
                        f"misleading {r['misleading']} {r['kinds']} in {r['misleading_calls']} views"
                        f" · narrated {len(r['narrated'])}/{r['findings']}"
                        f" · critical lost {r['critical_lost']}/{r['worst_critical_lost']}"
                        f" · abandoned kept {r['abandoned_judged'] - r['abandoned_lost']}"
                        f"/{r['abandoned_judged']} · ruled out {r['ruled_out_final']}"
                        f" · largest head {r['max_head']} ({r['heads']} heads)")
            k = " / ".join(str(kinds.get(x, 0)) for x in
                           ("ruled_out_succeeded", "open_error_resolved", "owed_written"))
            lost = ", ".join(f"{c} {n}" for c, n in sorted(lost_by_category.items()) if n)
            print(f"| {w} | {sessions} ({folded}) | {tot['misleading']}: {k} | {tot['misleading_calls']}"
                  f" | {len(narrated)} / {tot['findings']}"
                  f" | {tot['critical_lost']} / {tot['worst_critical_lost']}"
                  f" | {tot['abandoned_judged'] - tot['abandoned_lost']} of {tot['abandoned_judged']}"
                  f" | {tot['ruled_out_final']} | {max_head} | {tot['over_budget']} of {tot['heads']}"
                  f" | {tot['kept']} of {tot['judged']}{' (lost: ' + lost + ')' if lost else ''} |")
            notes += [f"{w}: narrated finding in {os.path.relpath(p_, a.corpus)}: {f[:100]}"
                      for p_, f in narrated]
    if notes:
        print()
        for n in notes:
            print(n)


if __name__ == "__main__":
    main()
