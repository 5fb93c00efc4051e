#!/usr/bin/env python3
"""What `compactor proxy` holds (resident memory, threads, open files) in
four scenarios, each in a proxy process of its own, against a stub upstream
on loopback:

    bench/proxy_resources.py [--only conversations,long,answer,body] [--runs 3] [BINARY]

- conversations: 1,000 one-call conversations, 8 clients at a time;
- long: one conversation of 1,000 model calls (each answer a tool call, each
  result 1,200 characters; the client sends its whole history every time),
  played first straight to the stub, then through the proxy: the first-byte
  time the proxy adds at the same call (bench/proxy.py's client), p50 and p99;
- answer: one call whose answer is a 55 MB JSON body (not streamed);
- body: one call whose request body is 60 MB (a conversation of 1,000 tool
  results of 60 KB, seen by the proxy for the first time).

For each: the proxy's RSS before the work, its peak (VmHWM) and its RSS
after (once the calls are over and the proxy has been idle a second),
threads and open files (sampled every 20 ms: the highest seen), and for
`answer` and `body` the peak over the body's size. With --runs N every
scenario runs N times (a new proxy each time) and a last table gives the
median of each column. Never a test: nothing asserts a figure. BINARY
defaults to target/release/compactor.
"""

import argparse
import http.client
import http.server
import json
import multiprocessing
import os
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proxy import pct, play, tool_call_answer  # noqa: E402  (the same client as bench/proxy.py)

ANSWER_BYTES = 55 << 20
BODY_BYTES = 60 << 20


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
    return p, port


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


def conversations(port, _direct):
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


def long(port, direct):
    """The client of bench/proxy.py, straight to the stub and then through
    the proxy: per call the time from the request's last byte to the
    answer's first body byte; the difference at the same call is what the
    proxy adds."""
    straight = play(direct, 1000, 1200, False)
    through = play(port, 1000, 1200, False)
    added = [b - a for a, b in zip(straight, through)]
    return "a 1,000-call conversation", None, (pct(added, .5), pct(added, .99))


def answer(port, _direct):
    data = post(port, request([{"role": "user", "content": "Write a lot."}], "answer", stream=False), {"x-bench-answer": "big"})
    return f"a {len(data) / (1 << 20):.0f} MiB answer", len(data), None


def body(port, _direct):
    messages = [{"role": "user", "content": "Go through every log part."}]
    per = BODY_BYTES // 1000
    for k in range(1000):
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{k:05}", "name": "Bash", "input": {"command": f"cat part_{k}.log"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k:05}", "content": output(k, per)}]})
    raw = request(messages, "body")
    post(port, raw, {})
    return f"a {len(raw) / (1 << 20):.0f} MiB body", len(raw), None


SCENARIOS = {"conversations": conversations, "long": long, "answer": answer, "body": body}


def measure(binary, sport, name):
    """One scenario in a proxy of its own: a row of figures."""
    proxy, port = start_proxy(binary, sport)
    time.sleep(0.3)
    before = proc_status(proxy.pid, "VmRSS")
    watch = Watch(proxy.pid)
    t0 = time.perf_counter()
    what, size, added = SCENARIOS[name](port, sport)
    wall = time.perf_counter() - t0
    time.sleep(float(os.environ.get("SETTLE", "1")))
    after = proc_status(proxy.pid, "VmRSS")
    if os.environ.get("DETAIL"):
        print(name, {k: proc_status(proxy.pid, k) // 1024 for k in ("RssAnon", "RssFile", "RssShmem")})
    peak = proc_status(proxy.pid, "VmHWM")
    watch.done()
    proxy.terminate()
    proxy.wait()
    return {"what": what, "before": before / 1024, "peak": peak / 1024, "after": after / 1024,
            "ratio": (peak - before) * 1024 / size if size else None,
            "threads": watch.threads, "files": watch.files, "wall": wall,
            "p50": added[0] * 1e3 if added else None, "p99": added[1] * 1e3 if added else None}


HEAD = ("| scenario | RSS before | peak | RSS after | peak over the body | threads | open files "
        "| first byte added p50 / p99 | wall |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|")


def line(r):
    ratio = f"{r['ratio']:.1f}x" if r["ratio"] is not None else "-"
    added = f"{r['p50']:.2f} / {r['p99']:.2f} ms" if r["p50"] is not None else "-"
    return (f"| {r['what']} | {r['before']:.0f} MB | {r['peak']:.0f} MB | {r['after']:.0f} MB | {ratio} "
            f"| {r['threads']} | {r['files']} | {added} | {r['wall']:.1f} s |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=",".join(SCENARIOS))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("binary", nargs="?", default="target/release/compactor")
    a = ap.parse_args()
    ports = multiprocessing.Queue()
    stub = multiprocessing.Process(target=serve_stub, args=(ports,), daemon=True)
    stub.start()
    sport = ports.get()
    names = a.only.split(",")
    rows = {name: [] for name in names}
    for run in range(a.runs):
        print(f"run {run + 1}\n{HEAD}", flush=True)
        for name in names:
            rows[name].append(measure(a.binary, sport, name))
            print(line(rows[name][-1]), flush=True)
    if a.runs > 1:
        print(f"median of {a.runs} runs\n{HEAD}")
        for name in names:
            rs = rows[name]
            med = {k: (statistics.median(r[k] for r in rs) if rs[0][k] is not None else None)
                   for k in rs[0] if k != "what"}
            print(line({"what": rs[0]["what"], **med}))


if __name__ == "__main__":
    main()
