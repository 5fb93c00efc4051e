#!/usr/bin/env python3
"""Benchmark `compactor proxy` against a stub upstream on loopback.

    bench/proxy.py [--calls 1000] [--output-chars 1200] [--window 200000] [BINARY]

A client plays one tool-heavy conversation of --calls model calls (each
answer a tool call, each result --output-chars of text), twice: straight to
a stub upstream, then through the proxy (a new store). It measures, per
call, the time from the request's last byte sent to the answer's first body
byte (the body is built before the clock starts), and reports p50/p99 of
each and of the difference at the same call (the latency the proxy adds);
the proxy's resident memory every 100 calls and its peak; the share of
calls whose forwarded messages are a prefix of the next call's (and that
no such pair without a tier fired breaks it); and streaming throughput: one
answer of 64 MB through the proxy and direct. The stub's usage is the
request's size / 4, as a model counts it. Never a test: nothing asserts a
time. BINARY defaults to target/release/compactor.
"""

import argparse
import atexit
import hashlib
import http.client
import http.server
import json
import multiprocessing
import os
import shutil
import socketserver
import subprocess
import tempfile
import threading
import time

BIG = 64 << 20


def tool_call_answer(k, request_bytes):
    """Call k's answer as the stub streams it: one Bash tool call (SSE), its
    usage the request's size / 4, as a model counts it."""
    events = [
        {"type": "message_start", "message": {"id": f"msg_{k}", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": request_bytes // 4, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": f"toolu_{k:05}", "name": "Bash", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": json.dumps({"command": f"cat part_{k}.log"})}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 25}},
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


class Stub(http.server.BaseHTTPRequestHandler):
    """The upstream, in a process of its own (so that the client's work
    never waits on its interpreter): answers at once, and only then, for a
    recorded call, sends the digests of the messages it received (their
    breakpoints removed) to the parent."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    seen = None  # a multiprocessing queue

    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n)
        if self.headers.get("x-bench-big") == "1":
            self.stream_big()
            return
        k = int(self.headers.get("x-bench-call") or 0)
        out = tool_call_answer(k, len(raw))
        head = f"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {len(out)}\r\n\r\n".encode()
        self.wfile.write(head + out)
        self.wfile.flush()
        if self.headers.get("x-bench-record") == "1":
            msgs = []
            for m in json.loads(raw).get("messages", []):
                if isinstance(m.get("content"), list):
                    for b in m["content"]:
                        b.pop("cache_control", None)
                msgs.append(hashlib.blake2b(json.dumps(m, sort_keys=True).encode(), digest_size=16).digest())
            Stub.seen.put((k, msgs))

    def stream_big(self):
        delta = json.dumps({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x" * 8000}})
        chunk = (f"event: content_block_delta\ndata: {delta}\n\n").encode()
        head = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in [
            {"type": "message_start", "message": {"id": "msg_big", "usage": {"input_tokens": 10, "output_tokens": 1}}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ]).encode()
        tail = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in [
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
            {"type": "message_stop"},
        ]).encode()
        reps = BIG // len(chunk)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(head) + reps * len(chunk) + len(tail)))
        self.end_headers()
        self.wfile.write(head)
        block = chunk * 16
        for _ in range(reps // 16):
            self.wfile.write(block)
        for _ in range(reps % 16):
            self.wfile.write(chunk)
        self.wfile.write(tail)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def serve_stub(seen, ports):
    Stub.seen = seen
    server = Server(("127.0.0.1", 0), Stub)
    ports.put(server.server_address[1])
    server.serve_forever()


SYSTEM = [{"type": "text", "text": "You are a benchmark agent. " * 200, "cache_control": {"type": "ephemeral"}}]
TOOLS = [{"name": "Bash", "description": "run a command " * 50, "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]


def output(k, chars):
    line = f"part {k}: request served in {k % 97} ms by worker {k % 7}, cache hit ratio 0.{k % 10}\n"
    return (line * (chars // len(line) + 1))[:chars]


def play(port, calls, chars, record):
    """One conversation; per call (ttfb seconds)."""
    conn = connect(port)
    messages = [{"role": "user", "content": [{"type": "text", "text": "Go through every log part and report anomalies. Never restart the service."}]}]
    ttfb = []
    for k in range(calls):
        for m in messages:
            if isinstance(m["content"], list):
                for b in m["content"]:
                    b.pop("cache_control", None)
        messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
        body = json.dumps({"model": "claude-bench", "system": SYSTEM, "tools": TOOLS, "metadata": {"user_id": '{"session_id":"bench"}'}, "max_tokens": 1000, "messages": messages, "stream": True}).encode()
        headers = {"content-type": "application/json", "x-api-key": "sk-bench", "content-length": str(len(body)), "x-bench-record": "1" if record else "0", "x-bench-call": str(k)}
        conn.putrequest("POST", "/v1/messages?beta=true", skip_accept_encoding=True)
        for h, v in headers.items():
            conn.putheader(h, v)
        conn.endheaders()
        conn.send(body)
        t0 = time.perf_counter()
        resp = conn.getresponse()
        resp.read(1)
        ttfb.append(time.perf_counter() - t0)
        rest = resp.read()
        assert resp.status == 200, (resp.status, rest[:300])
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{k:05}", "name": "Bash", "input": {"command": f"cat part_{k}.log"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k:05}", "content": output(k, chars)}]})
    conn.close()
    return ttfb


def connect(port):
    """A keep-alive connection without Nagle's delay on its small writes."""
    import socket
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.connect()
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return conn


def throughput(port):
    """MB/s of one 64 MB streamed answer: over its first 99% (the stream as
    it flows) and over all of it (the proxy records the answer, 64 MB of
    text, before its last chunk goes out)."""
    conn = connect(port)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "stream a lot"}], "stream": True}).encode()
    t0 = time.perf_counter()
    conn.request("POST", "/v1/messages", body, {"content-type": "application/json", "x-bench-big": "1"})
    resp = conn.getresponse()
    n, t99 = 0, None
    while True:
        b = resp.read(1 << 20)
        if not b:
            break
        n += len(b)
        if t99 is None and n >= BIG * 0.99:
            t99 = time.perf_counter() - t0
    dt = time.perf_counter() - t0
    conn.close()
    return n * 0.99 / t99 / 1e6, n / dt / 1e6, n


def pct(xs, p):
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * p))]


def rss_kb(pid, key="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--output-chars", type=int, default=1200)
    ap.add_argument("--window", type=int, default=200000)
    ap.add_argument("binary", nargs="?", default="target/release/compactor")
    a = ap.parse_args()
    seen_q = multiprocessing.Queue()
    ports = multiprocessing.Queue()
    stub = multiprocessing.Process(target=serve_stub, args=(seen_q, ports), daemon=True)
    stub.start()
    sport = ports.get()

    direct = play(sport, a.calls, a.output_chars, False)
    direct_mb, direct_all, _ = throughput(sport)

    work = tempfile.mkdtemp(prefix="compactor-proxy-bench-")
    # Removed however the run ends: a store of the run is some 250 MB.
    atexit.register(shutil.rmtree, work, True)
    db = os.path.join(work, "bench.db")
    proxy = subprocess.Popen(
        [a.binary, "--db", db, "proxy", "--listen", "127.0.0.1:0", "--upstream", f"http://127.0.0.1:{sport}", "--json", "--window", str(a.window)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proxy.stderr.readline().strip()
    pport = int(first.rsplit(":", 1)[1])
    reports = []
    threading.Thread(target=lambda: reports.extend(json.loads(l) for l in proxy.stdout), daemon=True).start()
    rss = []
    # Measured in slices, so that memory is read as the conversation grows.
    through = []
    conn_calls = a.calls
    last_body = [0]
    through = play_with_rss(pport, conn_calls, a.output_chars, proxy.pid, rss, last_body)
    throughput(pport)  # the first answer also opens its conversation's thread and store
    proxy_mb, proxy_all, n_big = throughput(pport)
    hwm = rss_kb(proxy.pid, "VmHWM")
    time.sleep(0.5)
    proxy.terminate()
    proxy.wait()

    diff = [p - d for p, d in zip(through, direct)]
    ms = lambda x: f"{x * 1000:.2f} ms"
    got = {}
    while len(got) < a.calls:
        k, msgs = seen_q.get(timeout=60)
        got[k] = msgs
    seen = [got[k] for k in range(a.calls)]
    stable = sum(1 for x, y in zip(seen, seen[1:]) if y[: len(x)] == x)
    fired = {r["call"] for r in reports if r.get("tiers_fired")}
    broken_quiet = [i + 2 for i, (x, y) in enumerate(zip(seen, seen[1:])) if y[: len(x)] != x and (i + 2) not in fired]
    main = [r for r in reports if r["task"] == reports[0]["task"]]
    last = main[-1] if main else {}
    print(f"calls: {a.calls} (a tool result of {a.output_chars} chars each), window {a.window}; the client's body at the last call: {last_body[0] / 1e6:.2f} MB")
    print(f"first byte, direct:  p50 {ms(pct(direct, .5))}  p99 {ms(pct(direct, .99))}")
    print(f"first byte, proxied: p50 {ms(pct(through, .5))}  p99 {ms(pct(through, .99))}")
    print(f"added by the proxy (same call): p50 {ms(pct(diff, .5))}  p99 {ms(pct(diff, .99))}  max {ms(max(diff))}")
    for lo, hi in [(0, 100), (450, 550), (900, 1000)]:
        if hi <= len(diff):
            print(f"  calls {lo + 1}-{hi}: proxied p50 {ms(pct(through[lo:hi], .5))}, direct p50 {ms(pct(direct[lo:hi], .5))}; added p50 {ms(pct(diff[lo:hi], .5))}  p99 {ms(pct(diff[lo:hi], .99))}")
    print(f"RSS every 100 calls (MB): {' '.join(f'{r / 1024:.1f}' for r in rss)}; peak {hwm / 1024:.1f}")
    print(f"streaming one {n_big >> 20} MB answer: its first 99% direct {direct_mb:.0f} MB/s, proxied {proxy_mb:.0f} MB/s; all of it (recorded before its last chunk) direct {direct_all:.0f} MB/s, proxied {proxy_all:.0f} MB/s")
    print(f"prefix-stable pairs: {stable} of {len(seen) - 1} ({100 * stable / max(1, len(seen) - 1):.1f}%); broken without a tier: {broken_quiet}")
    print(f"tiers fired at {len(fired)} calls; last call: {last.get('tokens_before')} -> {last.get('tokens_after')} tokens, status {last.get('status')}")
    sizes = os.path.getsize(db) + (os.path.getsize(db + '-wal') if os.path.exists(db + '-wal') else 0)
    print(f"store: {sizes / 1e6:.1f} MB")


def play_with_rss(port, calls, chars, pid, rss, last_body):
    """`play`, reading the proxy's RSS every 100 calls."""
    out = []
    conn = connect(port)
    messages = [{"role": "user", "content": [{"type": "text", "text": "Go through every log part and report anomalies. Never restart the service."}]}]
    for k in range(calls):
        for m in messages:
            if isinstance(m["content"], list):
                for b in m["content"]:
                    b.pop("cache_control", None)
        messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
        body = json.dumps({"model": "claude-bench", "system": SYSTEM, "tools": TOOLS, "metadata": {"user_id": '{"session_id":"bench"}'}, "max_tokens": 1000, "messages": messages, "stream": True}).encode()
        last_body[0] = len(body)
        conn.putrequest("POST", "/v1/messages?beta=true", skip_accept_encoding=True)
        for h, v in {"content-type": "application/json", "x-api-key": "sk-bench", "content-length": str(len(body)), "x-bench-record": "1", "x-bench-call": str(k)}.items():
            conn.putheader(h, v)
        conn.endheaders()
        conn.send(body)
        t0 = time.perf_counter()
        resp = conn.getresponse()
        resp.read(1)
        out.append(time.perf_counter() - t0)
        rest = resp.read()
        assert resp.status == 200, (resp.status, rest[:300])
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{k:05}", "name": "Bash", "input": {"command": f"cat part_{k}.log"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k:05}", "content": output(k, chars)}]})
        if (k + 1) % 100 == 0:
            rss.append(rss_kb(pid))
    conn.close()
    return out


if __name__ == "__main__":
    main()
