#!/usr/bin/env python3
"""Compare what two stores hold, for an import change that must not change it.

    python3 bench/compare-stores.py OLD.db NEW.db

Every row of `task_message` must match: each column, the row hash, and the
content as decoded (stored bytes that differ, say another LZ4 encoding of the
same JSON, are decoded and compared as JSON text). Every other table must hold
the same rows, except what depends on when or where the import ran
(`import_source` keeps its path and content hash; ids are compared through
the path). Exit status 0 when they match, 1 (with the first differences)
when not.
"""

import sqlite3
import struct
import sys

# Columns left out: they record the moment of the import, not its result.
VOLATILE = {"created_at", "updated_at", "imported_at", "mtime_ns", "size"}


def lz4_length(src, i, n):
    """An LZ4 length: `n` from the token, plus extra bytes while it is 15."""
    if n == 15:
        while True:
            b = src[i]
            i += 1
            n += b
            if b != 255:
                break
    return n, i


def lz4_block(src):
    """One LZ4 block, decompressed (the format `lz4_flex` writes)."""
    out = bytearray()
    i = 0
    while i < len(src):
        token = src[i]
        lit, i = lz4_length(src, i + 1, token >> 4)
        out += src[i:i + lit]
        i += lit
        if i >= len(src):
            break
        off = src[i] | (src[i + 1] << 8)
        n, i = lz4_length(src, i + 2, token & 15)
        start = len(out) - off
        for k in range(n + 4):
            out.append(out[start + k])
    return bytes(out)


def content(encoding, raw):
    if encoding == "json":
        return raw.encode() if isinstance(raw, str) else raw
    if encoding == "lz4":
        (size,) = struct.unpack("<I", raw[:4])
        out = lz4_block(raw[4:])
        assert len(out) == size, "length prefix"
        return out
    raise SystemExit(f"unknown content encoding {encoding!r}")


def columns(db, table):
    return [r[1] for r in db.execute(f"PRAGMA table_info({table})")]


def main(old_path, new_path):
    old, new = sqlite3.connect(old_path), sqlite3.connect(new_path)
    problems = []
    tables = [r[0] for r in old.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    new_tables = [r[0] for r in new.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    if tables != new_tables:
        problems.append(f"tables differ: {tables} / {new_tables}")
    source = {}
    for db in (old, new):
        source[db] = dict(db.execute("SELECT id, path FROM import_source"))

    rows = 0
    reencoded = 0
    q = ("SELECT task_id, seq, role, kind, turn, step, gen_id, content, content_encoding, "
         "usage, source_id, source_line, source_uuid, timestamp, row_hash "
         "FROM task_message ORDER BY task_id, seq")
    a, b = old.execute(q), new.execute(q)
    while True:
        x, y = a.fetchone(), b.fetchone()
        if x is None and y is None:
            break
        if x is None or y is None:
            problems.append(f"task_message: one store has more rows, from {(x or y)[:2]}")
            break
        rows += 1
        xs = list(x)
        ys = list(y)
        xs[10] = source[old].get(xs[10])
        ys[10] = source[new].get(ys[10])
        if (xs[8], xs[7]) != (ys[8], ys[7]):
            reencoded += 1
            # Another encoding of the same content is allowed; other content is not.
            if content(xs[8], xs[7]) != content(ys[8], ys[7]):
                problems.append(f"task_message {x[:2]}: content differs")
        del xs[7:9], ys[7:9]
        if xs != ys:
            problems.append(f"task_message {x[:2]}: {xs} / {ys}")
        if len(problems) > 10:
            break

    for table in tables:
        if table == "task_message":
            continue
        cols = [c for c in columns(old, table) if c not in VOLATILE]
        if cols != [c for c in columns(new, table) if c not in VOLATILE]:
            problems.append(f"{table}: columns differ")
            continue
        sel = ", ".join(cols)

        def load(db):
            out = []
            for r in db.execute(f"SELECT {sel} FROM {table}"):
                r = list(r)
                for i, c in enumerate(cols):
                    if c == "source_id" or (table == "import_source" and c == "id"):
                        r[i] = source[db].get(r[i])
                out.append(repr(r))
            return sorted(out)

        la, lb = load(old), load(new)
        if la != lb:
            problems.append(f"{table}: {len(la)} / {len(lb)} rows, not the same")

    for p in problems[:10]:
        print(p)
    print(f"{rows} task_message rows compared ({reencoded} stored in other bytes), "
          f"{len(tables)} tables: "
          + ("DIFFERENT" if problems else "identical"))
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
