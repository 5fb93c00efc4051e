#!/usr/bin/env python3
"""Calibration table: predicted against recorded prompt tokens on the corpus.

usage: bench/calibration.py BEFORE_EXE AFTER_EXE [CORPUS_DIR]

Builds of compactor before and after a change (either may be the same). For
every corpus session (main tasks with recorded usage) each binary replays the
task at the default budget on a scratch copy. On the calls where both views
are still the raw history (no tier fired, nothing restored: the prediction is
the raw history's) and usage was recorded, the prediction (`tokens_before`) is
compared with the recorded prompt. Prints one Markdown row per session: the
calls compared, and the median and worst relative error before and after.
"""
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

before_exe, after_exe = sys.argv[1], sys.argv[2]
corpus = sys.argv[3] if len(sys.argv) > 3 else "../shared/corpus"
tmp = tempfile.mkdtemp(prefix="compactor-calibration-")
atexit.register(shutil.rmtree, tmp, True)


def run(exe, db, *args):
    out = subprocess.run([exe, "--db", db, "-q", *args], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f"{args}: {out.stderr}")
    return out.stdout


def rows_of(out):
    r = json.loads(out) if out.lstrip().startswith("{\"") and "\n{" not in out.strip() else None
    if r is None:
        lines = [json.loads(l) for l in out.splitlines() if l.strip()]
        if len(lines) == 1 and "steps" in lines[0]:
            r = lines[0]
        else:
            return [l for l in lines if "tokens_before" in l]
    return r.get("calls") or r.get("steps") or []


files = []
for root, _, names in os.walk(corpus):
    files += [os.path.join(root, n) for n in names if n.endswith(".jsonl")]
files.sort()
dbs = {}
for name, exe in (("before", before_exe), ("after", after_exe)):
    dbs[name] = os.path.join(tmp, f"{name}.db")
    run(exe, dbs[name], "import", *files)
out = run(after_exe, dbs["after"], "tasks", "--json")
try:
    tasks = json.loads(out)
except json.JSONDecodeError:  # JSON Lines
    tasks = [json.loads(l) for l in out.splitlines() if l.strip()]
tasks = [t for t in tasks if isinstance(t, dict) and t.get("id") and not t.get("parent")]


def raw_calls(exe, db, task):
    """call → (predicted, recorded) on calls whose view is the raw history."""
    out = {}
    for row in rows_of(run(exe, db, "replay", "--task", task, "--json")):
        rec = row.get("recorded_prompt_tokens")
        if not rec or row.get("tiers_fired"):
            continue
        if "basis" in row and row.get("raw_tokens") != row["tokens_before"]:
            continue  # the view was not the raw history
        out[row.get("call", row.get("step"))] = (row["tokens_before"], rec)
    return out


def stats(pairs):
    errs = [(p - r) / r for p, r in pairs]
    worst = max(errs, key=abs)
    return f"{statistics.median(abs(e) for e in errs):.1%} | {worst:+.1%}"


print("| session | calls compared | before: median error | before: worst | after: median error | after: worst |")
print("|---|---:|---:|---:|---:|---:|")
for t in sorted(tasks, key=lambda t: t["id"]):
    b = raw_calls(before_exe, dbs["before"], t["id"])
    a = raw_calls(after_exe, dbs["after"], t["id"])
    common = sorted(set(a) & set(b))
    if not common:
        continue
    print(f"| {t['id'][:8]} | {len(common)} | {stats([b[k] for k in common])} | {stats([a[k] for k in common])} |")
