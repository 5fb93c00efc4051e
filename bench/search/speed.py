#!/usr/bin/env python3
"""Speed and size of the search index, against a build from before it.

    bench/search/speed.py --base OLD-BINARY [--bin NEW-BINARY] [--runs 5] [--calls 11200] [--corpus DIR]

Two inputs: one generated Claude Code session (`bench/gen_session.py CALLS
1`, 11,200 calls by default) and the whole corpus (every file, imported by
one `compactor import`). For each:

- import: both builds in turn, --runs times each, into a new store: the
  median wall time and CPU time (user + system) of each, and their ratio;
- size: the new build's store, and what the index takes of it (the pages
  of `search_index`'s tables and `search_*`, read through SQLite's dbstat);
- queries: `compactor search --json` run once per query (the whole
  process: start-up, opening the store, the search, the output), and the
  same queries through one `compactor mcp` server's `search_history` (the
  round trip of a request): p50 and p99 over every query of every run.

The corpus's queries are `queries.jsonl`'s; the generated session's are
words and phrases of its vocabulary, errors and paths. Figures depend on
the machine and its load: compare the ratios of one run. Never a test.
"""

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import eval as evaluation  # noqa: E402

GEN_TASK = "b3e1c0de-0000-4000-a000-000000010000"
GEN_QUERIES = [
    "handler loader prefetches", "session cache warm", "query per row", "renders page",
    "\"single select\"", "orders line items", "rows related", "issues one query",
    "loader prefetch* rows", "NEAR(cache warm, 3)", "module_003 handler", "pytest failed",
    "src/app/orders", "unless the loader", "keeps warm select", "joins line items before",
    "TranscriptRenderer", "error", "Grep pattern handler", "Edit the session",
]


def timed(cmd):
    """Wall and CPU (user + system) seconds of one process."""
    start = time.monotonic()
    before = os.times()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = os.times()
    wall = time.monotonic() - start
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu


def fresh(db):
    for s in ("", "-wal", "-shm"):
        if os.path.exists(db + s):
            os.remove(db + s)


def size(db):
    return sum(os.path.getsize(db + s) for s in ("", "-wal") if os.path.exists(db + s))


def index_size(db):
    c = sqlite3.connect(db)
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    n = c.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'search%' OR name LIKE 'sqlite_autoindex_search%'").fetchone()[0]
    total = c.execute("SELECT sum(pgsize) FROM dbstat").fetchone()[0]
    c.close()
    return n or 0, total


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def bench(name, a, files, queries, scope_of, work):
    base_db = os.path.join(work, "base.db")
    new_db = os.path.join(work, "new.db")
    walls = {"base": [], "new": []}
    cpus = {"base": [], "new": []}
    for _ in range(a.runs):
        for which, binary, db in (("base", a.base, base_db), ("new", a.bin, new_db)):
            fresh(db)
            w, c = timed([binary, "--db", db, "-q", "import", *files])
            walls[which].append(w)
            cpus[which].append(c)
    idx, total = index_size(new_db)
    cli, mcp = [], []
    for _ in range(a.runs):
        for q in queries:
            start = time.monotonic()
            r = subprocess.run([a.bin, "--db", new_db, "search", "--json", "--limit", "10",
                                *scope_of(q), q["query"]], capture_output=True, text=True)
            cli.append(time.monotonic() - start)
            if r.returncode not in (0, 1):
                raise SystemExit(f"{q['query']}: {r.stderr}")
    servers = {}
    for _ in range(a.runs):
        for q in queries:
            s = servers.get(q["from"]) or servers.setdefault(
                q["from"], evaluation.OldServer(a.bin, new_db, q["from"]))
            start = time.monotonic()
            s.ask("tools/call", {"name": "search_history",
                                 "arguments": {"query": q["query"], "scope": q.get("scope", "session")}})
            mcp.append(time.monotonic() - start)
    for s in servers.values():
        s.close()
    med = {k: statistics.median(v) for k, v in walls.items()}
    medc = {k: statistics.median(v) for k, v in cpus.items()}
    return {
        "name": name,
        "import_base": med["base"], "import_new": med["new"],
        "cpu_base": medc["base"], "cpu_new": medc["new"],
        "store": total, "index": idx,
        "cli_p50": pct(cli, 50), "cli_p99": pct(cli, 99),
        "mcp_p50": pct(mcp, 50), "mcp_p99": pct(mcp, 99),
        "queries": len(queries) * a.runs,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "compactor"))
    ap.add_argument("--base", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--calls", type=int, default=11200)
    ap.add_argument("--corpus", default=os.environ.get("COMPACTOR_CORPUS",
                                                       os.path.join(ROOT, "..", "shared", "corpus")))
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        gen = os.path.join(work, "session.jsonl")
        with open(gen, "wb") as f:
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_session.py"),
                            str(a.calls), "1"], stdout=f, check=True)
        qs = [{"query": q, "from": GEN_TASK} for q in GEN_QUERIES]
        rows.append(bench(f"generated, {a.calls:,} calls ({os.path.getsize(gen) / 1e6:.0f} MB)",
                          a, [gen], qs, lambda q: ["--task", q["from"]], work))
        files = evaluation.corpus_files(a.corpus)
        queries = [json.loads(l) for l in open(os.path.join(HERE, "queries.jsonl"))]
        cwd = {}

        def scope(q):
            if q["scope"] == "session":
                return ["--task", q["from"]]
            if q["from"] not in cwd:
                cwd.update(evaluation.project_of(a.bin, os.path.join(work, "new.db")))
            return ["--project", cwd[q["from"]]]
        mb = sum(os.path.getsize(f) for f in files) / 1e6
        rows.append(bench(f"corpus, {len(files)} files ({mb:.0f} MB)", a, files, queries, scope, work))
    print(f"medians of {a.runs} runs; query times over every query of every run")
    print()
    print("| input | import before | import with the index | wall × | CPU × | store | index | index / store |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['name']} | {r['import_base']:.2f} s | {r['import_new']:.2f} s | "
              f"{r['import_new'] / r['import_base']:.2f} | {r['cpu_new'] / r['cpu_base']:.2f} | "
              f"{r['store'] / 1e6:.1f} MB | {r['index'] / 1e6:.1f} MB | {r['index'] / r['store']:.0%} |")
    print()
    print("| input | queries | `search` p50 | p99 | `search_history` p50 | p99 |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['name']} | {r['queries']} | {r['cli_p50'] * 1e3:.1f} ms | {r['cli_p99'] * 1e3:.1f} ms | "
              f"{r['mcp_p50'] * 1e3:.1f} ms | {r['mcp_p99'] * 1e3:.1f} ms |")


if __name__ == "__main__":
    sys.exit(main())
