#!/usr/bin/env python3
"""Time compactor's hooks on a 10 MB Claude Code session, as a client runs them.

    python3 bench/hooks.py [BINARY] [--runs N] [--calls CALLS]

A hook runs on the user's critical path: the client waits for PreCompact
before it asks for its summary, and for SessionStart before its next request.
This measures, on a session written by bench/gen_session.py (CALLS model
calls, 1850 by default: about 10 MB) in a temporary HOME:

- grown: the store holds the session as it was at the last hook or import,
  and the transcript has grown by its last 4% since (about 400 KB, a
  compaction's worth of new history): `hook pre-compact` imports that, then
  `hook session-start` finds nothing new and derives the Task Context;
- first: the store has never seen the session (the whole file is imported
  by pre-compact);

each a fresh copy of the same store per run, the hook's JSON on stdin. Prints
the median and p99 (nearest rank) of each hook and of the pair: wall time from
spawn to exit, and the CPU time the hook used (user + system), which a busy
machine does not inflate. BINARY defaults to target/release/compactor.
"""

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SESSION = "b3e1c0de-0000-4000-a000-000000010000"


def args():
    a = sys.argv[1:]
    runs, calls, binary = 30, 1850, None
    while a:
        x = a.pop(0)
        if x == "--runs":
            runs = int(a.pop(0))
        elif x == "--calls":
            calls = int(a.pop(0))
        else:
            binary = x
    binary = Path(binary or ROOT / "target" / "release" / "compactor").resolve()
    if not binary.is_file():
        sys.exit(f"no binary at {binary}: cargo build --release, or name one")
    return binary, runs, calls


def pct(xs, p):
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, -(-p * len(xs) // 100) - 1))
    return xs[k]


def main():
    binary, runs, calls = args()
    tmp = Path(tempfile.mkdtemp(prefix="compactor-hooks-bench-"))
    try:
        home = tmp / "home"
        data = tmp / "data"
        project_dir = home / ".claude" / "projects" / "-bench"
        project_dir.mkdir(parents=True)
        data.mkdir()
        whole = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "gen_session.py"), str(calls)],
            check=True,
            capture_output=True,
        ).stdout
        lines = whole.splitlines(keepends=True)
        cut = len(lines) * 96 // 100
        head = b"".join(lines[:cut])
        transcript = project_dir / f"{SESSION}.jsonl"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "XDG_DATA_HOME": str(data),
        }
        store_dir = data / "compactor"
        store = store_dir / "compactor.db"

        def hook(event, extra):
            body = {
                "session_id": SESSION,
                "transcript_path": str(transcript),
                "cwd": "/bench",
                "hook_event_name": extra.pop("name"),
                **extra,
            }
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter_ns()
            out = subprocess.run(
                [str(binary), "hook", event, "--client", "claude-code"],
                input=json.dumps(body).encode(),
                capture_output=True,
                env=env,
                check=True,
            )
            took = (time.perf_counter_ns() - t0) / 1e6
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1e3
            return (took, cpu), out.stdout

        # The store as the last hook left it: the session without its last 4%.
        transcript.write_bytes(head)
        hook("pre-compact", {"name": "PreCompact", "trigger": "auto"})
        pristine = tmp / "pristine"
        shutil.copytree(store_dir, pristine)

        results = {}
        for scenario in ("grown", "first"):
            pre, start, pair = [], [], []
            for _ in range(runs):
                shutil.rmtree(store_dir)
                if scenario == "grown":
                    shutil.copytree(pristine, store_dir)
                else:
                    store_dir.mkdir()
                transcript.write_bytes(whole)
                a, out = hook("pre-compact", {"name": "PreCompact", "trigger": "auto"})
                assert out.startswith(b"Keep every request"), out[:200]
                b, out = hook(
                    "session-start",
                    {"name": "SessionStart", "source": "compact", "model": "m"},
                )
                context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
                assert "## Task Context" in context
                pre.append(a)
                start.append(b)
                pair.append((a[0] + b[0], a[1] + b[1]))
            results[scenario] = (pre, start, pair, len(context))
        log = (store_dir / "hooks.log").read_text().splitlines()
        assert all(" ok: " in l for l in log), log[-3:]
        print(f"binary: {binary}")
        print(
            f"session: {len(whole):,} bytes, {len(lines):,} lines, {calls} calls; "
            f"grown by its last {len(whole) - len(head):,} bytes ({len(lines) - cut} lines)"
        )
        print(f"runs: {runs} per scenario; load average before: {os.getloadavg()[0]:.1f}")
        print()
        print("| scenario | hook | wall median ms | wall p99 ms | CPU median ms | CPU p99 ms |")
        print("|---|---|---:|---:|---:|---:|")
        for scenario, (pre, start, pair, chars) in results.items():
            for name, xs in (
                ("pre-compact (import)", pre),
                ("session-start (Task Context)", start),
                ("both", pair),
            ):
                wall = [x[0] for x in xs]
                cpu = [x[1] for x in xs]
                print(
                    f"| {scenario} | {name} | {pct(wall, 50):.0f} | {pct(wall, 99):.0f} "
                    f"| {pct(cpu, 50):.0f} | {pct(cpu, 99):.0f} |"
                )
        print()
        print(f"Task Context printed: {results['grown'][3]:,} characters")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
