#!/usr/bin/env python3
"""Regenerate the round-trip fixtures in testdata/roundtrip/ (deterministic output).

Two sessions whose first ask states rules, in the real formats: a Claude Code
session and a Codex rollout. Each has a `*-more.jsonl` companion: the lines
its client appends to a session it resumes (a new ask with a rule of its own,
tool calls, usage), which `tests/cli/roundtrip.rs` appends to a session
`compact --write-session` wrote after filling in the placeholders:
`@SESSION@` (the written session's id), `@PARENT@` (the uuid of its last
line, Claude Code) and `@CWD@` (its project directory).

Run from the repository root: python3 testdata/gen/make_roundtrip.py
The generated files are committed.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from make_fixtures import est, hid, listing, source_file, uuid  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "roundtrip")

CLAUDE_ASK = (
    "The payment webhook handler in app/payments/webhook.py drops events under load. "
    "Find out why and fix it. Never log the webhook signing secret, and do not change "
    "the public route /hooks/payment."
)
CLAUDE_MORE_ASK = "Now add retries with backoff to the event queue. Keep the retry count at 3 or fewer."
CODEX_ASK = (
    "The tenant quota report is wrong for accounts with more than 1000 seats. Find the "
    "bug and fix it. Only edit files under services/quota, and never run migrations "
    "against the production database."
)
CODEX_MORE_ASK = "Add a regression test for the 1000-seat case. Do not add new dependencies."


def write(name, lines):
    with open(os.path.join(OUT, name), "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n")


class Claude:
    """Claude Code session lines (`version`, `gitBranch` and ids as given)."""

    def __init__(self, session, cwd, version, branch, seed, parent=None, minute=0):
        self.session = session
        self.cwd = cwd
        self.version = version
        self.branch = branch
        self.seed = seed
        self.parent = parent
        self.lines = []
        self.n = 0
        self.t = minute * 60
        self.history = 0

    def ts(self):
        self.t += 7
        return f"2026-03-20T10:{self.t // 60 % 60:02}:{self.t % 60:02}.{self.t * 13 % 1000:03}Z"

    def env(self, kind):
        self.n += 1
        u = uuid(self.seed, self.n)
        line = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": self.version,
            "gitBranch": self.branch,
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
        mid = "msg_01" + hid(self.seed, "msg", self.n, n=22)
        out_tokens = sum(est(json.dumps(b)) for b in blocks)
        usage = {
            "input_tokens": 4,
            "cache_creation_input_tokens": 300 + out_tokens,
            "cache_read_input_tokens": 2800 + self.history * 21 // 20,
            "output_tokens": out_tokens,
            "service_tier": "standard",
        }
        first = None
        for b in blocks:
            line = self.env("assistant")
            first = first or line["uuid"]
            line["message"] = {
                "model": "claude-sonnet-4-5",
                "id": mid,
                "type": "message",
                "role": "assistant",
                "content": [b],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            }
            line["requestId"] = "req_011" + hid(self.seed, "req", self.n, n=21)
            self.lines.append(line)
        self.history += out_tokens
        for tool_id, content in results:
            line = self.env("user")
            line["message"] = {
                "role": "user",
                "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": content}],
            }
            line["toolUseResult"] = {"type": "text", "file": {"content": content[:60]}}
            line["sourceToolAssistantUUID"] = first
            self.lines.append(line)
            self.history += est(content)

    def tool(self, name, inp, output, note=None):
        self.n += 1
        tid = "toolu_01" + hid(self.seed, "tool", self.n, n=22)
        blocks = [{"type": "text", "text": note}] if note else []
        blocks.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
        self.response(blocks, [(tid, output)])


def claude():
    c = Claude("7c3e9a10-4b2d-4f6e-9a81-3d5c7e9f1a2b", "/home/dev/payments", "2.1.39", "fix/webhook-retries", "rt-claude")
    c.lines.append({"type": "summary", "summary": "Payment webhook drops events", "leafUuid": uuid("rt-claude", "leaf")})
    c.user(CLAUDE_ASK)
    c.response([{"type": "text", "text": "I'll read the webhook handler and the queue it feeds first."}])
    c.tool("Glob", {"pattern": "app/payments/**/*.py"}, listing("app/payments", 50))
    for i in range(1, 11):
        path = f"/home/dev/payments/app/payments/handler_{i:02}.py"
        c.tool("Read", {"file_path": path}, source_file(path, 160 + 8 * i, 40 + i), note=f"Reading handler {i}.")
    c.tool("Grep", {"pattern": "queue.put", "path": "app/payments", "output_mode": "content"}, listing("app/payments/queue", 60))
    c.response([{"type": "text", "text": "The handler blocks on a full queue: I'll use a bounded put with a timeout instead of the blocking call."}])
    c.tool("Edit", {"file_path": "/home/dev/payments/app/payments/webhook.py", "old_string": "queue.put(event)", "new_string": "queue.put(event, timeout=2)"},
           "The file /home/dev/payments/app/payments/webhook.py has been updated.")
    c.response([{"type": "text", "text": "webhook.py now puts events with a timeout; no event is dropped in the load test."}])
    write("claude-code.jsonl", c.lines)

    # What Claude Code appends when it resumes the session: the resumed
    # client's own version, a new ask, calls and their results.
    m = Claude("@SESSION@", "@CWD@", "2.1.332", "fix/webhook-retries", "rt-claude-more", parent="@PARENT@", minute=30)
    m.user(CLAUDE_MORE_ASK)
    m.response([{"type": "text", "text": "I'll read the queue worker before adding the retries."}])
    for i in range(1, 7):
        path = f"/home/dev/payments/app/payments/queue_{i:02}.py"
        m.tool("Read", {"file_path": path}, source_file(path, 170 + 6 * i, 70 + i), note=f"Reading queue module {i}.")
    m.tool("Edit", {"file_path": "/home/dev/payments/app/payments/queue_01.py", "old_string": "worker.run(event)", "new_string": "retry(worker.run, event, attempts=3, backoff=0.5)"},
           "The file /home/dev/payments/app/payments/queue_01.py has been updated.")
    m.response([{"type": "text", "text": "The worker retries each event at most 3 times, with backoff."}])
    write("claude-code-more.jsonl", m.lines)


class Codex:
    """Codex rollout lines, 0.16x-style (`exec_command`, `token_count` after each call)."""

    def __init__(self, cwd, seed, minute=0):
        self.cwd = cwd
        self.seed = seed
        self.lines = []
        self.t = minute * 60
        self.total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0, "total_tokens": 0}
        self.history = 0
        self.calls = 0

    def ts(self):
        self.t += 3
        return f"2026-03-21T15:{self.t // 60 % 60:02}:{self.t % 60:02}.{self.t * 37 % 1000:03}Z"

    def emit(self, kind, payload):
        self.lines.append({"timestamp": self.ts(), "type": kind, "payload": payload})

    def turn_context(self):
        self.emit("turn_context", {"cwd": self.cwd, "approval_policy": "never", "sandbox_policy": {"type": "workspace-write"}, "model": "gpt-5.1-codex", "effort": "medium", "summary": "auto"})

    def context(self):
        self.emit("response_item", {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions instructions>\nApprovals are off; the sandbox allows writes in the workspace.\n</permissions instructions>"}]})
        self.emit("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n  <shell>bash</shell>\n</environment_context>"}]})

    def ask(self, text):
        self.emit("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
        self.emit("event_msg", {"type": "user_message", "message": text, "images": []})
        self.history += est(text)

    def usage(self, out):
        prompt = 3000 + self.history * 21 // 20
        last = {"input_tokens": prompt, "cached_input_tokens": prompt * 3 // 4, "output_tokens": out, "reasoning_output_tokens": 0, "total_tokens": prompt + out}
        self.total = {k: self.total[k] + last[k] for k in self.total}
        self.emit("event_msg", {"type": "token_count", "info": {"total_token_usage": dict(self.total), "last_token_usage": last, "model_context_window": 258400}})

    def call(self, cmd, output):
        self.calls += 1
        call = "call_" + hid(self.seed, "call", self.calls, n=24)
        self.emit("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": f"**Running {cmd.split()[0]}**"}], "content": None, "encrypted_content": "gAAAAB" + hid(self.seed, "enc", self.calls, n=60)})
        self.emit("response_item", {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": cmd}), "call_id": call})
        self.emit("response_item", {"type": "function_call_output", "call_id": call, "output": f"Process exited with code 0\nOutput:\n{output}\n"})
        self.history += est(output) + 60
        self.usage(60)
        self.turn_context()

    def answer(self, text):
        self.emit("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})
        self.emit("event_msg", {"type": "agent_message", "message": text})
        self.history += est(text)
        self.usage(est(text))


def codex():
    sid = "01a1f0c2-5e3d-7b4a-9c8d-2e1f0a9b8c7d"
    c = Codex("/home/dev/tenants", "rt-codex")
    c.emit("session_meta", {"id": sid, "timestamp": c.ts(), "cwd": c.cwd, "originator": "codex_cli_rs", "cli_version": "0.169.0", "source": "cli",
                            "git": {"commit_hash": hid("rt-codex", "commit", n=40), "branch": "fix/quota-seats", "repository_url": "git@example.com:dev/tenants.git"}})
    c.context()
    c.turn_context()
    c.ask(CODEX_ASK)
    c.call("rg -n seats services/quota", listing("services/quota", 50))
    for i in range(1, 10):
        path = f"services/quota/report_{i:02}.py"
        c.call(f"sed -n '1,220p' {path}", source_file(path, 150 + 9 * i, 80 + i))
    c.call("python -m pytest services/quota -q", "12 passed in 1.02s")
    c.answer("The report summed seats as a 16-bit value; report_03.py now uses an int. I only touched services/quota.")
    write("codex.jsonl", c.lines)

    # What Codex appends when it resumes: its context again, a new ask, calls.
    m = Codex("@CWD@", "rt-codex-more", minute=30)
    m.context()
    m.turn_context()
    m.ask(CODEX_MORE_ASK)
    for i in range(1, 7):
        path = f"services/quota/tests/test_report_{i:02}.py"
        m.call(f"sed -n '1,200p' {path}", source_file(path, 160 + 7 * i, 110 + i))
    m.call("python -m pytest services/quota -q", "13 passed in 1.10s")
    m.answer("tests/test_report_seats.py covers 1000 and 1001 seats; no dependency was added.")
    write("codex-more.jsonl", m.lines)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    claude()
    codex()
