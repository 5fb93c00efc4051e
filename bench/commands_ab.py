#!/usr/bin/env python3
"""`replay`, `probe` and `report` over one generated session, for this
build and an earlier one, in one run:

    bench/commands_ab.py [--calls 11200] [--runs 5] [--base BINARY] [BINARY]

A Claude Code session of --calls model calls (bench/gen_session.py, seed 1)
is imported into one store per build; then `replay --jsonl`, `probe --json`
and `report -o` run round-robin, build after build, --runs times (a change of
the machine's load reaches every command alike). Per command: the median
wall time, its ratio to the same build's `replay --jsonl`, the CPU time of
the process and of its probe-judge thread (read from /proc as it runs), and
its peak RSS. `probe` and `report` judge on a second thread, so on a machine
whose other core is busy their wall time tends to their CPU time. BINARY
defaults to target/release/compactor. Never a test: nothing asserts a time.
"""

import argparse
import atexit
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASK = "b3e1c0de-0000-4000-a000-000000010000"
TICK = os.sysconf("SC_CLK_TCK")


def threads_cpu(pid):
    """CPU seconds of each thread of `pid`, by thread name."""
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{t}/stat") as f:
            s = f.read()
        name = s[s.index("(") + 1:s.rindex(")")]
        rest = s[s.rindex(")") + 2:].split()
        out[name] = out.get(name, 0) + (int(rest[11]) + int(rest[12])) / TICK
    return out


def run(cmd):
    """(wall s, CPU s, judge CPU s, peak RSS MB) of one command: its CPU
    and peak from its rusage, the judge's CPU read from /proc as it runs."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    judge = 0.0
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        try:
            judge = max(judge, threads_cpu(p.pid).get("probe-judge", 0.0))
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0, cmd
    return wall, ru.ru_utime + ru.ru_stime, judge, ru.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=11_200)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--base", help="an earlier build, run alternately with BINARY")
    ap.add_argument("binary", nargs="?", default=os.path.join(ROOT, "target", "release", "compactor"))
    a = ap.parse_args()
    builds = [("this", a.binary)] + ([("base", a.base)] if a.base else [])
    work = tempfile.mkdtemp(prefix="compactor-commands-")
    # Removed however the run ends: the session and its stores are hundreds of MB.
    atexit.register(shutil.rmtree, work, True)
    session = os.path.join(work, "session.jsonl")
    with open(session, "wb") as f:
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_session.py"), str(a.calls), "1"],
                       stdout=f, check=True)
    dbs = {}
    for build, binary in builds:
        dbs[build] = os.path.join(work, f"{build}.db")
        subprocess.run([binary, "-q", "--db", dbs[build], "import", session], check=True,
                       stdout=subprocess.DEVNULL)
    page = os.path.join(work, "report.html")
    commands = [
        ("replay --jsonl", ["replay", "--jsonl"]),
        ("probe --json", ["probe", "--json"]),
        ("report -o", ["report", "-o", page]),
    ]
    res = {}
    for r in range(a.runs):
        for name, args in commands:
            for build, binary in builds:
                cmd = [binary, "-q", "--db", dbs[build], *args[:1], "--task", TASK, "--window", "200000", *args[1:]]
                wall, cpu, judge, peak = run(cmd)
                res.setdefault((name, build), []).append((wall, cpu, judge, peak))
                print(f"run {r + 1}: {name} ({build}) {wall:.2f} s, CPU {cpu:.2f} s, judge {judge:.2f} s, {peak:.0f} MB",
                      file=sys.stderr, flush=True)
    print(f"{a.calls:,} calls ({os.path.getsize(session) / 1e6:.0f} MB), window 200000, medians of {a.runs} runs\n")
    print("| command | build | wall | / replay --jsonl | CPU | / replay's CPU | judge thread CPU | peak RSS |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, _ in commands:
        for build, _ in builds:
            rows = res[(name, build)]
            wall, cpu, judge, peak = (statistics.median(x[i] for x in rows) for i in range(4))
            base_wall = statistics.median(x[0] for x in res[("replay --jsonl", build)])
            base_cpu = statistics.median(x[1] for x in res[("replay --jsonl", build)])
            print(f"| `{name}` | {build} | {wall:.2f} s | {wall / base_wall:.2f}x | {cpu:.2f} s | "
                  f"{cpu / base_cpu:.2f}x | {judge:.2f} s | {peak:.0f} MB |")


if __name__ == "__main__":
    main()
