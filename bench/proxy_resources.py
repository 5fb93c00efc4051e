#!/usr/bin/env python3
"""What `compactor proxy` holds (resident memory, threads, open files),
each scenario in a proxy process of its own against a stub upstream on
loopback, and what a page of the MCP server's `view_tool_call` costs:

    bench/proxy_resources.py [--only SCENARIOS] [--runs 3] [--base BINARY] [BINARY]

The scenarios (--only takes a comma-separated list; default: all):

- conversations: 1,000 one-call conversations, 8 clients at a time;
- long: one conversation of 1,000 model calls (each answer a tool call, each
  result 1,200 characters; the client sends its whole history every time),
  played first straight to the stub, then through the proxy: the first-byte
  time the proxy adds at the same call (bench/proxy.py's client), p50 and p99;
- answer: one call whose answer is a 55 MB JSON body (not streamed);
- the body shapes, each one request of about 60 MB seen by the proxy for
  the first time: text (one text block of 60 MB, a pasted file), messages
  (600 messages of 100 KB), tools (20,000 tool results of 3 KB, ten calls
  at a time), image (one base64 image block of 60 MB), body (1,000 tool
  results of 60 KB: the 61 MiB body);
- call1000: the 1,000th call of one conversation whose every tool result
  is 4,000 characters (a body of about 4.3 MB), after its 999 calls went
  through the same proxy;
- paging: `compactor mcp` pages through `view_tool_call` of one call whose
  output is 150 MB (1.9 million lines), imported from a Claude Code
  session: per page the time from request to answer and the peak memory
  (VmHWM reset before each page), and the resident memory after.

For each proxy scenario: the proxy's RSS when idle just before the
measured request (for call1000, after its 999 calls), its peak (VmHWM,
reset just before that request), its RSS right after the answer and 5 s
after, threads and open files (sampled every 20 ms: the highest seen),
and for the bodies and the answer the peak over idle divided by the
body's size. With --base the same scenarios run with a second binary (an
earlier build), alternately with BINARY, and the tables show both. With
--runs N every scenario runs N times (a new proxy each time) and a last
table gives the median of each column. Never a test: nothing asserts a
figure. BINARY defaults to target/release/compactor.
"""


import argparse
import base64
import http.client
import http.server
import json
import multiprocessing
import os
import shutil
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy import connect, pct, play, tool_call_answer  # noqa: E402  (the same client as bench/proxy.py)

ANSWER_BYTES = 55 << 20
BODY_BYTES = 60 << 20
SETTLE = 5.0  # seconds after the answer when "5 s after" is read
PAGING_BYTES = 150 << 20


class Stub(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n)
        if self.headers.get("x-bench-answer") == "big":
            text = "y" * ANSWER_BYTES
            out = json.dumps({"id": "msg_big", "type": "message", "role": "assistant", "model": "m",
                              "content": [{"type": "text", "text": text}],
                              "stop_reason": "end_turn", "usage": {"input_tokens": len(raw) // 4, "output_tokens": 1}}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
            return
        out = tool_call_answer(int(self.headers.get("x-bench-call") or 0), len(raw))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def serve_stub(ports):
    server = Server(("127.0.0.1", 0), Stub)
    ports.put(server.server_address[1])
    server.serve_forever()


SYSTEM = [{"type": "text", "text": "You are a benchmark agent. " * 200}]
TOOLS = [{"name": "Bash", "description": "run a command " * 50, "input_schema": {"type": "object"}}]


def proc_status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def reset_peak(pid):
    """Reset the process's VmHWM to its RSS now (Linux 4.0 and later)."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


class Watch:
    """Samples a process's threads and open files every 20 ms."""

    def __init__(self, pid):
        self.pid, self.threads, self.files, self.stop = pid, 0, 0, False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop:
            try:
                self.threads = max(self.threads, proc_status(self.pid, "Threads"))
                self.files = max(self.files, len(os.listdir(f"/proc/{self.pid}/fd")))
            except OSError:
                return
            time.sleep(0.02)

    def done(self):
        self.stop = True
        self.t.join()


def start_proxy(binary, upstream, extra=()):
    work = tempfile.mkdtemp(prefix="compactor-proxy-resources-")
    p = subprocess.Popen(
        [binary, "--db", os.path.join(work, "bench.db"), "proxy", "--listen", "127.0.0.1:0",
         "--upstream", f"http://127.0.0.1:{upstream}", "--json", *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    port = int(p.stderr.readline().strip().rsplit(":", 1)[1])
    threading.Thread(target=p.stderr.read, daemon=True).start()
    return p, port, work


def post(port, body, headers):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("POST", "/v1/messages", body, {"content-type": "application/json", "x-api-key": "sk-bench", **headers})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    assert resp.status == 200, (resp.status, data[:300])
    return data


def request(messages, session, stream=True):
    return json.dumps({"model": "claude-bench", "system": SYSTEM, "tools": TOOLS,
                       "metadata": {"user_id": json.dumps({"session_id": session})},
                       "max_tokens": 1000, "messages": messages, "stream": stream}).encode()


def output(k, chars):
    line = f"part {k}: request served in {k % 97} ms by worker {k % 7}, cache hit ratio 0.{k % 10}\n"
    return (line * (chars // len(line) + 1))[:chars]


def pasted(size):
    """A pasted file of `size` characters: numbered lines of varied length."""
    lines, n, k = [], 0, 0
    while n < size:
        line = f"{k:07d} | order {k * 7919 % 100003} shipped to depot {k % 311} after {k % 59} retries{'.' * (k % 23)}\n"
        lines.append(line)
        n += len(line)
        k += 1
    return "".join(lines)[:size]


# Each scenario: (setup, measured). setup(port, direct) runs before the
# proxy's idle memory is read (None: nothing to do) and returns what
# measured(port, direct, state) needs; measured returns (what, body size or
# None, (p50, p99) added or None).


def conversations(port, _direct, _state):
    def client(w):
        for i in range(125):
            c = w * 125 + i
            post(port, request([{"role": "user", "content": f"Conversation {c}: go through the logs."}], f"s-{c}"), {})
    ts = [threading.Thread(target=client, args=(w,)) for w in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return "1,000 one-call conversations", None, None


def long(port, direct, _state):
    """The client of bench/proxy.py, straight to the stub and then through
    the proxy: per call the time from the request's last byte to the
    answer's first body byte; the difference at the same call is what the
    proxy adds."""
    straight = play(direct, 1000, 1200, False)
    through = play(port, 1000, 1200, False)
    added = [b - a for a, b in zip(straight, through)]
    return "a 1,000-call conversation", None, (pct(added, .5), pct(added, .99))


def answer(port, _direct, _state):
    data = post(port, request([{"role": "user", "content": "Write a lot."}], "answer", stream=False), {"x-bench-answer": "big"})
    return f"a {len(data) / (1 << 20):.0f} MiB answer", len(data), None


def one_body(what):
    """A measured scenario that posts the body `setup` built."""
    def measured(port, _direct, raw):
        post(port, raw, {})
        return f"{what} ({len(raw) / 1e6:.0f} MB)", len(raw), None
    return measured


def body_setup(_port, _direct):
    messages = [{"role": "user", "content": "Go through every log part."}]
    per = BODY_BYTES // 1000
    for k in range(1000):
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{k:05}", "name": "Bash", "input": {"command": f"cat part_{k}.log"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k:05}", "content": output(k, per)}]})
    return request(messages, "body")


def text_setup(_port, _direct):
    text = pasted(BODY_BYTES)
    return request([{"role": "user", "content": [{"type": "text", "text": "Review this file:\n" + text}]}], "text")


def messages_setup(_port, _direct):
    messages = []
    for k in range(600):
        role = "user" if k % 2 == 0 else "assistant"
        messages.append({"role": role, "content": [{"type": "text", "text": pasted(100_000).replace("order", f"m{k}")}]})
    return request(messages, "messages")


def tools_setup(_port, _direct):
    messages = [{"role": "user", "content": "Check every host."}]
    for turn in range(2000):
        ids = [f"toolu_{turn:04}_{j}" for j in range(10)]
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": i, "name": "Bash", "input": {"command": f"ssh host{turn}-{j} uptime"}}
            for j, i in enumerate(ids)]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": i, "content": output(turn * 10 + j, 3000)}
            for j, i in enumerate(ids)]})
    return request(messages, "tools")


def image_setup(_port, _direct):
    raw = bytes((k * 131 + (k >> 9)) % 256 for k in range(BODY_BYTES * 3 // 4))
    data = base64.b64encode(raw).decode()
    return request([{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}},
        {"type": "text", "text": "What does this picture show?"}]}], "image")


CALL1000_CHARS = 4000


def call1000_setup(port, _direct):
    """999 calls of one conversation through the proxy; returns the
    1,000th call's body."""
    conn = connect(port)
    messages = [{"role": "user", "content": [{"type": "text", "text": "Go through every log part and report anomalies."}]}]
    for k in range(1000):
        body = request(messages, "call1000")
        if k == 999:
            conn.close()
            return body
        conn.request("POST", "/v1/messages", body, {"content-type": "application/json", "x-api-key": "sk-bench", "x-bench-call": str(k)})
        resp = conn.getresponse()
        data = resp.read()
        assert resp.status == 200, (resp.status, data[:300])
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{k:05}", "name": "Bash", "input": {"command": f"cat part_{k}.log"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k:05}", "content": output(k, CALL1000_CHARS)}]})


SCENARIOS = {
    "conversations": (None, conversations),
    "long": (None, long),
    "answer": (None, answer),
    "text": (text_setup, one_body("one text block")),
    "messages": (messages_setup, one_body("600 messages of 100 KB")),
    "tools": (tools_setup, one_body("20,000 tool results of 3 KB")),
    "image": (image_setup, one_body("one image block")),
    "call1000": (call1000_setup, one_body("the 1,000th call of a conversation")),
    "body": (body_setup, one_body("1,000 tool results of 60 KB")),
}
# Bodies built once and kept between runs and builds (the same bytes).
BUILT = {}


def measure(build, binary, sport, name):
    """One scenario in a proxy of its own: a row of figures."""
    setup, measured = SCENARIOS[name]
    proxy, port, work = start_proxy(binary, sport)
    try:
        time.sleep(0.3)
        if setup is call1000_setup:
            state = setup(port, sport)
        elif setup is not None:
            if name not in BUILT:
                BUILT[name] = setup(port, sport)
            state = BUILT[name]
        else:
            state = None
        time.sleep(1.0)
        before = proc_status(proxy.pid, "VmRSS")
        reset_peak(proxy.pid)
        watch = Watch(proxy.pid)
        t0 = time.perf_counter()
        what, size, added = measured(port, sport, state)
        t1 = time.perf_counter()
        right = proc_status(proxy.pid, "VmRSS")
        time.sleep(max(0.0, SETTLE - (time.perf_counter() - t1)))
        after = proc_status(proxy.pid, "VmRSS")
        peak = proc_status(proxy.pid, "VmHWM")
        watch.done()
    finally:
        proxy.terminate()
        proxy.wait()
        shutil.rmtree(work, ignore_errors=True)
    return {"build": build, "what": what, "before": before / 1024, "peak": peak / 1024,
            "right": right / 1024, "after": after / 1024,
            "ratio": (peak - before) * 1024 / size if size else None,
            "threads": watch.threads, "files": watch.files, "wall": t1 - t0,
            "p50": added[0] * 1e3 if added else None, "p99": added[1] * 1e3 if added else None}


HEAD = ("| scenario | build | RSS idle | peak | peak over idle / body | right after | 5 s after "
        "| threads | open files | first byte added p50 / p99 | wall |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def line(r):
    ratio = f"{r['ratio']:.1f}x" if r["ratio"] is not None else "-"
    added = f"{r['p50']:.2f} / {r['p99']:.2f} ms" if r["p50"] is not None else "-"
    return (f"| {r['what']} | {r['build']} | {r['before']:.0f} MB | {r['peak']:.0f} MB | {ratio} "
            f"| {r['right']:.0f} MB | {r['after']:.0f} MB "
            f"| {r['threads']:.0f} | {r['files']:.0f} | {added} | {r['wall']:.1f} s |")


# paging: the MCP server's view_tool_call over one 150 MB tool output.

PAGING_SESSION = "b3e1c0de-0000-4000-a000-0000000150ff"
PAGING_TOOL = "toolu_bench_paging_150mb"


def paging_session(path):
    """A Claude Code session: an ask, one Bash call whose output is 150 MB
    of log lines, and an answer."""
    def line(n, kind, message, parent):
        return json.dumps({"parentUuid": parent, "isSidechain": False, "userType": "external",
                           "cwd": "/home/dev/shop", "sessionId": PAGING_SESSION, "version": "2.1.39",
                           "type": kind, "uuid": f"00000000-0000-4000-a000-{n:012d}",
                           "timestamp": f"2026-03-14T09:00:{n:02d}.000Z", "message": message}) + "\n"
    usage = {"input_tokens": 10, "output_tokens": 10}
    with open(path, "w") as f:
        f.write(line(1, "user", {"role": "user", "content": "Show me the build log."}, None))
        f.write(line(2, "assistant", {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-6",
                                      "content": [{"type": "tool_use", "id": PAGING_TOOL, "name": "Bash",
                                                   "input": {"command": "cat build.log"}}],
                                      "usage": usage}, "00000000-0000-4000-a000-000000000001"))
        f.write(line(3, "user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": PAGING_TOOL,
                                                              "content": pasted(PAGING_BYTES)}]},
                     "00000000-0000-4000-a000-000000000002"))
        f.write(line(4, "assistant", {"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-opus-4-6",
                                      "content": [{"type": "text", "text": "The build passed."}], "usage": usage},
                     "00000000-0000-4000-a000-000000000003"))


class Mcp:
    """`compactor mcp` spoken to line by line."""

    def __init__(self, binary, db):
        self.p = subprocess.Popen([binary, "--db", db, "mcp", "--task", PAGING_SESSION],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.n = 0
        self.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()

    def ask(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        return json.loads(self.p.stdout.readline())

    def page(self, offset):
        """(text, seconds, peak KB, RSS KB after)"""
        reset_peak(self.p.pid)
        t0 = time.perf_counter()
        a = self.ask("tools/call", {"name": "view_tool_call", "arguments": {"id": PAGING_TOOL, "offset": offset}})
        dt = time.perf_counter() - t0
        text = a["result"]["content"][0]["text"]
        assert not a["result"].get("isError"), text[:300]
        return text, dt, proc_status(self.p.pid, "VmHWM"), proc_status(self.p.pid, "VmRSS")

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def next_offset(text):
    tail = text.rsplit("next_offset: ", 1)
    return int(tail[1]) if len(tail) == 2 else None


def paging(builds, work):
    """Rows: per build, sampled pages (first three, middle, last), and for
    the first build every page."""
    session = os.path.join(work, "paging.jsonl")
    paging_session(session)
    rows, offsets, texts = [], None, {}
    for build, binary in builds:
        db = os.path.join(work, f"paging-{build}.db")
        subprocess.run([binary, "-q", "--db", db, "import", session], check=True, stdout=subprocess.DEVNULL)
        mcp = Mcp(binary, db)
        idle = proc_status(mcp.p.pid, "VmRSS")
        if offsets is None:
            # Every page, in order: where each starts, and the whole paging.
            offsets, times, peaks, at = [], [], [], 0
            t0 = time.perf_counter()
            while at is not None:
                offsets.append(at)
                text, dt, peak, _ = mcp.page(at)
                times.append(dt)
                peaks.append(peak)
                at = next_offset(text)
            rows.append(f"| {build} | every page, in order ({len(offsets):,} pages) | "
                        f"{time.perf_counter() - t0:.1f} s in all; p50 {pct(times, .5) * 1e3:.1f} ms, "
                        f"max {max(times) * 1e3:.0f} ms | max {max(peaks) / 1024:.0f} MB | "
                        f"{proc_status(mcp.p.pid, 'VmRSS') / 1024:.0f} MB |")
        sample = [(0, "first"), (1, "second"), (2, "third"), (len(offsets) // 2, "middle"), (len(offsets) - 1, "last")]
        for i, name in sample:
            text, dt, peak, rss = mcp.page(offsets[i])
            texts.setdefault(i, text)
            same = "" if texts[i] == text else " (DIFFERS)"
            rows.append(f"| {build} | page {i + 1:,} ({name}){same} | {dt * 1e3:.0f} ms | {peak / 1024:.0f} MB | {rss / 1024:.0f} MB |")
        time.sleep(SETTLE)
        rows.append(f"| {build} | idle before, and 5 s after the last | | {idle / 1024:.0f} MB | "
                    f"{proc_status(mcp.p.pid, 'VmRSS') / 1024:.0f} MB |")
        mcp.close()
    return ("| build | page | time | peak | RSS after |\n|---|---|---:|---:|---:|\n" + "\n".join(rows))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=",".join([*SCENARIOS, "paging"]))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--base", help="an earlier build, measured alternately with BINARY")
    ap.add_argument("binary", nargs="?", default="target/release/compactor")
    a = ap.parse_args()
    builds = [("this", a.binary)] + ([("base", a.base)] if a.base else [])
    names = a.only.split(",")
    unknown = set(names) - set(SCENARIOS) - {"paging"}
    if unknown:
        ap.error(f"--only: unknown scenarios {', '.join(sorted(unknown))}")
    ports = multiprocessing.Queue()
    stub = multiprocessing.Process(target=serve_stub, args=(ports,), daemon=True)
    stub.start()
    sport = ports.get()
    proxy_names = [n for n in names if n != "paging"]
    rows = {(name, b): [] for name in proxy_names for b, _ in builds}
    for run in range(a.runs if proxy_names else 0):
        print(f"run {run + 1}\n{HEAD}", flush=True)
        for name in proxy_names:
            for build, binary in builds:
                rows[(name, build)].append(measure(build, binary, sport, name))
                print(line(rows[(name, build)][-1]), flush=True)
    if a.runs > 1 and proxy_names:
        print(f"median of {a.runs} runs\n{HEAD}")
        for name in proxy_names:
            for build, _ in builds:
                rs = rows[(name, build)]
                med = {k: (statistics.median(r[k] for r in rs) if rs[0][k] is not None else None)
                       for k in rs[0] if k not in ("what", "build")}
                print(line({"what": rs[0]["what"], "build": build, **med}))
    if "paging" in names:
        work = tempfile.mkdtemp(prefix="compactor-paging-")
        try:
            print(f"view_tool_call over one {PAGING_BYTES >> 20} MiB tool output\n{paging(builds, work)}", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
