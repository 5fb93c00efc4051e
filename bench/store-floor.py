#!/usr/bin/env python3
"""How long storing an import's result takes by itself: the floor under
`compactor import` that no parser or encoder can go below.

    python3 bench/store-floor.py STORE.db [--runs N]

STORE.db is a store that `compactor import` just wrote (one session). The
script copies its rows into a fresh store the way the import stores them:
the same schema, page size, WAL journal, `synchronous=NORMAL`, page cache,
one transaction, then a PASSIVE checkpoint; each copy is a single
`INSERT ... SELECT` run inside SQLite, so no row crosses into Python. It
prints the median wall and CPU seconds of that copy, and of the same copy
with `synchronous=OFF`, which leaves out the checkpoint's two fsyncs (shown
only to say how much of the floor is waiting for the disk; the store never
runs that way). It uses Python's own SQLite, not the one compactor bundles.
"""

import argparse
import os
import sqlite3
import statistics
import tempfile
import time

TABLES = ["task", "import_source", "task_message", "task_tool_compaction"]


def store_once(src, synchronous):
    """Wall and CPU seconds of one copy of `src`'s rows into a new store."""
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(src))) as d:
        dst = os.path.join(d, "floor.db")
        schema = [r[0] for r in sqlite3.connect(src).execute(
            "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'"
            " ORDER BY type = 'table' DESC, rowid")]
        page_size = sqlite3.connect(src).execute("PRAGMA page_size").fetchone()[0]
        wall, cpu = time.monotonic(), time.process_time()
        c = sqlite3.connect(dst, isolation_level=None)
        c.execute(f"PRAGMA page_size={page_size}")
        c.execute("PRAGMA journal_mode=WAL")
        c.execute(f"PRAGMA synchronous={synchronous}")
        c.execute("PRAGMA wal_autocheckpoint=0")
        c.execute("PRAGMA cache_size=-8192")
        for sql in schema:
            c.execute(sql)
        c.execute("ATTACH ? AS src", (src,))
        c.execute("BEGIN")
        for t in TABLES:
            c.execute(f"INSERT INTO main.{t} SELECT * FROM src.{t}")
        c.execute("COMMIT")
        c.execute("DETACH src")
        c.execute("PRAGMA wal_checkpoint(PASSIVE)")
        c.close()
        return time.monotonic() - wall, time.process_time() - cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("store")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    if not os.path.exists(a.store):
        ap.error(f"{a.store}: no such store")
    rows = sqlite3.connect(a.store).execute("SELECT count(*) FROM task_message").fetchone()[0]
    size = os.path.getsize(a.store)
    print(f"{a.store}: {rows} rows, {size / 1e6:.1f} MB; SQLite {sqlite3.sqlite_version}")
    for sync in ["NORMAL", "OFF"]:
        runs = [store_once(a.store, sync) for _ in range(a.runs)]
        w = statistics.median(r[0] for r in runs)
        c = statistics.median(r[1] for r in runs)
        print(f"synchronous={sync}: {w:.3f} s wall, {c:.3f} s CPU (medians of {a.runs})")


if __name__ == "__main__":
    main()
