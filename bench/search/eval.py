#!/usr/bin/env python3
"""Recall of `compactor search` against the line match `search_history` had
before it (every word in one line, newest first), on the corpus.

    bench/search/eval.py --base OLD-BINARY [--bin NEW-BINARY] [--corpus DIR] [--verbose]

`queries.jsonl` beside this script holds the query set: each query written
from what a later turn of a corpus session needed (an error's text, a rule,
a file's change, a command that worked, what was said), in other words and
word forms than the record's, with the item(s) it should find (a tool call's
id, or a row's seq and call, in a task). `from` is the session that asks;
`scope` is `session` (its own record) or `project` (the other sessions of
its project: the old tool could not reach them, which is part of what is
measured).

The corpus is imported into a fresh store by each binary. The new build is
asked `compactor search --json --limit 20` (`--task FROM`, or `--project` the
session's directory); the old one `search_history(query, limit 200)` over
`compactor mcp --task FROM`. A query's rank is the position of the first hit
that is (or lists under `also`) one of its targets; for the old tool, among
the distinct items its lines come from (a tool call, or a call's user or
assistant text). Prints recall@5 and MRR (over the first 20 hits) for both,
overall and per kind. Nothing here asserts: it measures.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))


def corpus_files(corpus):
    out = []
    for d, _, files in os.walk(corpus):
        out += [os.path.join(d, f) for f in files if f.endswith(".jsonl")]
    return sorted(out)


def imported(binary, work, name, files):
    db = os.path.join(work, name + ".db")
    subprocess.run([binary, "--db", db, "-q", "import", *files], check=True,
                   stdout=subprocess.DEVNULL)
    return db


def project_of(binary, db):
    out = subprocess.run([binary, "--db", db, "tasks", "--json"], check=True,
                         capture_output=True, text=True).stdout
    return {t["id"]: t.get("cwd") for t in map(json.loads, out.splitlines()) if "id" in t}


def matches(t, task, tool, seq):
    if t["task"] != task:
        return False
    if "tool" in t:
        return tool == t["tool"]
    return seq == t["seq"]


def new_rank(binary, db, q, cwd):
    scope = ["--task", q["from"]] if q["scope"] == "session" else ["--project", cwd]
    r = subprocess.run([binary, "--db", db, "search", "--json", "--limit", "20", *scope, q["query"]],
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit(f"{q['id']}: {r.stderr}")
    hits = json.loads(r.stdout)["hits"]
    for i, h in enumerate(hits, 1):
        places = [(h["task"], h.get("tool_id"), h.get("seq"))]
        places += [(a["task"], h.get("tool_id"), a.get("seq")) for a in h.get("also", [])]
        if any(matches(t, *p) for t in q["targets"] for p in places):
            return i
    return None


class OldServer:
    """`compactor mcp --task T` of the old build, spoken to line by line."""

    def __init__(self, binary, db, task):
        self.p = subprocess.Popen([binary, "--db", db, "mcp", "--task", task],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        self.n = 0
        self.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "eval", "version": "1"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        self.p.stdin.flush()

    def ask(self, method, params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def search(self, query):
        r = self.ask("tools/call", {"name": "search_history",
                                    "arguments": {"query": query, "limit": 200}})
        return r["result"]["content"][0]["text"]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


LINE = re.compile(r"^(?:task (?P<task>\S+) · )?call (?P<call>\d+) · (?P<source>[^:]*?)(?:: |$)")
TOOL = re.compile(r'view_tool_call\("([^"]+)"\)')


def old_rank(server, q, default_task):
    text = server.search(q["query"])
    items = []
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        task = m.group("task") or default_task
        tool = TOOL.search(m.group("source"))
        key = (task, tool.group(1) if tool else None, int(m.group("call")),
               "user" if m.group("source").startswith("user") else "other")
        if not items or items[-1] != key:
            items.append(key)
    seen = []
    for key in items:
        if key not in seen:
            seen.append(key)
    for i, (task, tool, call, source) in enumerate(seen[:20], 1):
        for t in q["targets"]:
            if t["task"] != task:
                continue
            if "tool" in t and t["tool"] == tool:
                return i
            if "seq" in t and tool is None and t["call"] == call:
                return i
    return None


def summary(rows, key):
    n = len(rows)
    r5 = sum(1 for r in rows if r[key] and r[key] <= 5) / n
    mrr = sum(1 / r[key] for r in rows if r[key]) / n
    return r5, mrr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "compactor"))
    ap.add_argument("--base", required=True, help="a build from before the index")
    ap.add_argument("--corpus", default=os.environ.get("COMPACTOR_CORPUS",
                                                       os.path.join(ROOT, "..", "shared", "corpus")))
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    queries = [json.loads(l) for l in open(os.path.join(HERE, "queries.jsonl"))]
    files = corpus_files(a.corpus)
    with tempfile.TemporaryDirectory() as work:
        new_db = imported(a.bin, work, "new", files)
        old_db = imported(a.base, work, "old", files)
        cwd = project_of(a.bin, new_db)
        servers = {}
        rows = []
        for q in queries:
            s = servers.get(q["from"]) or servers.setdefault(q["from"], OldServer(a.base, old_db, q["from"]))
            rows.append({"q": q, "new": new_rank(a.bin, new_db, q, cwd.get(q["from"])),
                         "old": old_rank(s, q, q["from"])})
        for s in servers.values():
            s.close()
    kinds = sorted({r["q"]["kind"] for r in rows})
    print(f"{len(rows)} queries over {len(files)} corpus files")
    print()
    print("| kind | queries | recall@5 index | recall@5 line match | MRR index | MRR line match |")
    print("|---|---:|---:|---:|---:|---:|")
    for k in kinds + ["all"]:
        sub = [r for r in rows if k == "all" or r["q"]["kind"] == k]
        n5, nm = summary(sub, "new")
        o5, om = summary(sub, "old")
        label = "**all**" if k == "all" else k
        print(f"| {label} | {len(sub)} | {n5:.2f} | {o5:.2f} | {nm:.2f} | {om:.2f} |")
    if a.verbose:
        print()
        for r in rows:
            print(f"{r['q']['id']} {r['q']['kind']:8s} new={r['new']} old={r['old']}  {r['q']['query']}")


if __name__ == "__main__":
    sys.exit(main())
