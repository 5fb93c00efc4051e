#!/usr/bin/env python3
"""Regenerate the check fixtures in testdata/fixtures/ (deterministic output).

The fixtures are small transcripts in the real Claude Code, Codex and
Anthropic formats, sized so that the `check` budget matrix drives each tier of
the ladder. Run from the repository root: python3 testdata/gen/make_fixtures.py
Nothing else depends on this script; the generated files are committed.
"""

import hashlib
import json
import os

OUT = os.path.join(os.path.dirname(__file__), "..", "fixtures")


def hid(*parts, n=24):
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:n]


def uuid(*parts):
    h = hid(*parts, n=32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def est(text):
    return (len(text) + 3) // 4


def source_file(name, lines, seed):
    """A plausible source listing in `cat -n` style, as Read returns it."""
    out = []
    for i in range(1, lines + 1):
        k = (i * 7 + seed) % 11
        if k == 0:
            body = f"def handler_{seed}_{i}(request, session):"
        elif k == 1:
            body = f"    rows = session.query(Order).filter(Order.id == request.args['id_{i}']).all()"
        elif k == 2:
            body = f"    # {name}: keep the ledger consistent with the payment provider ({i})"
        elif k == 3:
            body = f"    return render(rows, page={i}, size=50)"
        else:
            body = f"    total_{i} = sum(r.amount for r in rows if r.status == 'paid')  # line {i}"
        out.append(f"{i:>6}\t{body}")
    return "\n".join(out)


def listing(prefix, n):
    return "\n".join(f"{prefix}/module_{i:03}.py:{(i * 13) % 97 + 1}:    def handler_{i}(request, session):" for i in range(n))


class Claude:
    """Claude Code 2.1-style session lines."""

    def __init__(self, session, cwd="/home/dev/shop", overhead=3000):
        self.session = session
        self.cwd = cwd
        self.lines = []
        self.parent = None
        self.n = 0
        self.t = 0
        self.history = 0  # estimated tokens of the history so far
        self.overhead = overhead

    def ts(self):
        self.t += 7
        return f"2026-03-14T09:{self.t // 60 % 60:02}:{self.t % 60:02}.{self.t % 1000:03}Z"

    def env(self, kind):
        self.n += 1
        u = uuid(self.session, self.n)
        line = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": "2.1.39",
            "gitBranch": "main",
            "type": kind,
            "uuid": u,
            "timestamp": self.ts(),
        }
        self.parent = u
        return line

    def user(self, text):
        line = self.env("user")
        line["message"] = {"role": "user", "content": text}
        self.lines.append(line)
        self.history += est(text)

    def response(self, blocks, results=()):
        """One API response written one block per line, sharing id and usage."""
        self.n += 1
        mid = "msg_01" + hid(self.session, "msg", self.n, n=22)
        rid = "req_011" + hid(self.session, "req", self.n, n=21)
        out_tokens = sum(est(json.dumps(b)) for b in blocks)
        usage = {
            "input_tokens": 3,
            "cache_creation_input_tokens": 400 + out_tokens,
            "cache_read_input_tokens": self.overhead + self.history * 21 // 20,
            "output_tokens": out_tokens,
            "service_tier": "standard",
        }
        first = None
        for b in blocks:
            line = self.env("assistant")
            first = first or line["uuid"]
            line["message"] = {
                "model": "claude-opus-4-6",
                "id": mid,
                "type": "message",
                "role": "assistant",
                "content": [b],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            }
            line["requestId"] = rid
            self.lines.append(line)
        self.history += out_tokens
        for tool_id, content, is_error in results:
            line = self.env("user")
            block = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
            if is_error:
                block["is_error"] = True
            line["message"] = {"role": "user", "content": [block]}
            line["toolUseResult"] = {"stdout": content[:80], "stderr": "", "interrupted": False}
            line["sourceToolAssistantUUID"] = first
            self.lines.append(line)
            self.history += est(content)

    def tool(self, name, inp, output, note=None, is_error=False):
        self.n += 1
        tid = "toolu_01" + hid(self.session, "tool", self.n, n=22)
        blocks = []
        if note:
            blocks.append({"type": "text", "text": note})
        blocks.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
        self.response(blocks, [(tid, output, is_error)])
        return tid

    def progress(self):
        line = self.env("progress")
        line["data"] = {"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Read", "command": "true"}
        self.lines.append(line)

    def write(self, name):
        with open(os.path.join(OUT, name), "w") as f:
            for line in self.lines:
                f.write(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n")


def claude_shrink_floor():
    c = Claude("5b1e2d3c-7f4a-4e2b-9c1d-2a3b4c5d6e7f")
    c.lines.append({"type": "summary", "summary": "Audit the order handlers", "leafUuid": uuid("leaf")})
    c.user("Audit the order handlers under app/orders for N+1 queries. Do not change the public API of app/orders/views.py.")
    c.response([{"type": "thinking", "thinking": "I should read the handlers one by one and look for queries inside loops.", "signature": "EqQBCkYIBxgCKkB" + hid("sig", n=40)},
                {"type": "text", "text": "I'll start by listing the handler modules."}])
    c.tool("Glob", {"pattern": "app/orders/**/*.py"}, listing("app/orders", 60))
    for i in range(1, 13):
        path = f"/home/dev/shop/app/orders/module_{i:03}.py"
        c.tool("Read", {"file_path": path}, source_file(path, 150 + 10 * i, i), note=f"Reading module {i}.")
        c.progress()
    c.tool("Grep", {"pattern": "session.query", "path": "app/orders", "output_mode": "content"}, listing("app/orders", 80))
    c.tool("Bash", {"command": "pytest tests/orders -q", "description": "Run the order tests"},
           "FAILED tests/orders/test_views.py::test_list - AssertionError: expected 3 queries, got 51\n1 failed, 40 passed in 3.21s", is_error=True)
    c.response([{"type": "text", "text": "The root cause is a query per row in handler_3: I'll use a joined load instead of the per-row lookup."}])
    c.user("Good. Fix handler_3 only, and run the tests again.")
    c.tool("Edit", {"file_path": "/home/dev/shop/app/orders/module_003.py", "old_string": "rows = session.query(Order)", "new_string": "rows = session.query(Order).options(joinedload(Order.lines))"},
           "The file /home/dev/shop/app/orders/module_003.py has been updated.")
    c.tool("Bash", {"command": "pytest tests/orders -q", "description": "Run the order tests"}, "41 passed in 2.98s")
    c.response([{"type": "text", "text": "handler_3 now issues 3 queries; all 41 order tests pass."}])
    c.write("claude-shrink-floor.jsonl")


def claude_disposable_interrupt():
    c = Claude("9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a")
    c.user("Plan the migration of the billing tables, think it through first.")
    for i in range(6):
        c.tool("reflect", {"thought": f"Consider step {i} of the migration plan"}, source_file("plan", 60 + 5 * i, 30 + i))
    c.tool("Read", {"file_path": "/home/dev/shop/db/schema.sql"}, source_file("schema", 180, 7))
    # A call the user interrupted: no result was ever written.
    c.response([{"type": "tool_use", "id": "toolu_01" + hid("lost", n=22), "name": "Bash", "input": {"command": "psql -f migrate.sql"}}])
    c.user("[Request interrupted by user for tool use]")
    c.user("Don't run anything against the database. Just write the plan to docs/migration.md.")
    c.tool("Write", {"file_path": "/home/dev/shop/docs/migration.md", "content": source_file("migration", 120, 3)},
           "File created successfully at: /home/dev/shop/docs/migration.md")
    c.response([{"type": "text", "text": "The plan is in docs/migration.md."}])
    c.write("claude-disposable-interrupt.jsonl")


def codex_tenant_registry():
    sid = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    lines = []
    t = [0]

    def ts():
        t[0] += 3
        return f"2025-10-02T14:{t[0] // 60 % 60:02}:{t[0] % 60:02}.{(t[0] * 37) % 1000:03}Z"

    def emit(kind, payload):
        lines.append({"timestamp": ts(), "type": kind, "payload": payload})

    emit("session_meta", {"id": sid, "timestamp": ts(), "cwd": "/Users/dev/platform", "originator": "codex_cli_rs",
                          "cli_version": "0.40.0", "instructions": None,
                          "git": {"commit_hash": hid("commit", n=40), "branch": "fix/tenants", "repository_url": "git@example.com:dev/platform.git"}})
    emit("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/Users/dev/platform</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n</environment_context>"}]})
    ask = "The tenant export job times out. Find out why and fix it. Do not touch the tenant_registry table: it is shared with billing and must never be migrated from here."
    emit("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ask}]})
    emit("event_msg", {"type": "user_message", "message": ask, "kind": "plain"})
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0, "total_tokens": 0}
    history = [est(ask) + 80]
    for i in range(24):
        emit("turn_context", {"cwd": "/Users/dev/platform", "approval_policy": "on-request", "sandbox_policy": {"mode": "workspace-write"}, "model": "gpt-5-codex", "effort": "medium", "summary": "auto"})
        prompt = 2600 + history[0] * 21 // 20
        last = {"input_tokens": prompt, "cached_input_tokens": prompt // 2, "output_tokens": 60, "reasoning_output_tokens": 20, "total_tokens": prompt + 60}
        total = {k: total[k] + last[k] for k in total}
        emit("event_msg", {"type": "token_count", "info": {"total_token_usage": dict(total), "last_token_usage": last, "model_context_window": 272000}})
        emit("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": f"**Inspecting export step {i}**"}], "content": None, "encrypted_content": "gAAAAB" + hid("enc", i, n=60)})
        emit("event_msg", {"type": "agent_reasoning", "text": f"**Inspecting export step {i}**"})
        call = "call_" + hid(sid, "call", i, n=24)
        if i % 6 == 5:
            cmd = ["bash", "-lc", f"rg -n 'tenant' services/export/step_{i}.py"]
            out = listing(f"services/export/step_{i}", 30)
        else:
            cmd = ["bash", "-lc", f"sed -n '1,220p' services/export/step_{i}.py"]
            out = source_file(f"services/export/step_{i}.py", 90 + 5 * i, 50 + i)
        code = 1 if i == 11 else 0
        if code:
            out = "Traceback (most recent call last):\n  File \"services/export/run.py\", line 88, in run\nTimeoutError: export of tenant 4411 exceeded 30s"
        emit("response_item", {"type": "function_call", "name": "shell", "arguments": json.dumps({"command": cmd, "workdir": "/Users/dev/platform"}), "call_id": call})
        emit("response_item", {"type": "function_call_output", "call_id": call, "output": json.dumps({"output": out, "metadata": {"exit_code": code, "duration_seconds": 0.1}})})
        history[0] += est(out) + 60
    emit("turn_context", {"cwd": "/Users/dev/platform", "approval_policy": "on-request", "sandbox_policy": {"mode": "workspace-write"}, "model": "gpt-5-codex", "effort": "medium", "summary": "auto"})
    emit("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Summarizing the fix**"}], "content": None, "encrypted_content": "gAAAAB" + hid("enc", "end", n=60)})
    emit("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "The export loads every tenant row one at a time; batching the reads in step_11 fixes the timeout. I left tenant_registry untouched."}]})
    emit("event_msg", {"type": "agent_message", "message": "The export loads every tenant row one at a time."})
    with open(os.path.join(OUT, "codex-tenant-registry.jsonl"), "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n")


def anthropic_breakthrough():
    """An Anthropic Messages request body whose last steps alone overflow a small window."""
    msgs = [{"role": "user", "content": "Collect the three largest log files and tell me what failed."}]
    for i in range(4):
        tid = "toolu_01" + hid("bt", i, n=22)
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": f"Reading log {i}."},
                                                      {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": f"cat /var/log/app/worker-{i}.log"}}]})
        msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": source_file(f"worker-{i}.log", 200 + 60 * i, 90 + i)}]})
    msgs.append({"role": "assistant", "content": [{"type": "text", "text": "worker-3 failed on a timeout talking to the queue."}]})
    body = {"model": "claude-sonnet-4-6", "max_tokens": 4096, "system": "You are a careful operations assistant.", "messages": msgs}
    with open(os.path.join(OUT, "anthropic-breakthrough.json"), "w") as f:
        json.dump(body, f, indent=2, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    claude_shrink_floor()
    claude_disposable_interrupt()
    codex_tenant_registry()
    anthropic_breakthrough()
