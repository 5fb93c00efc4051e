#!/usr/bin/env python3
"""Write a long synthetic Claude Code session (JSONL) for benchmarks.

    python3 bench/gen_session.py [--codex] [--session UUID] CALLS [SEED] > session.jsonl

Deterministic: the same CALLS and SEED give the same bytes (a seeded PRNG, no
clock). The shape follows a real 2.1.x session: a `summary` title, user asks
every 20 to 80 model calls, assistant lines split per content block sharing a
message id and usage, thinking, text, tool_use (Read, Bash, Grep, Edit, Glob)
and tool_result lines with outputs from a few hundred bytes to ~24 KB, and
recorded usage that grows with the history (cache read + creation), so the
engine calibrates against it. Nothing here is copied from the corpus.

With --codex the same conversation (same seed, same draws) is written as a
Codex CLI rollout: `session_meta`, a `turn_context` before every model call,
`response_item` messages, reasoning, `function_call` (shell, with a JSON string
of arguments) and `function_call_output` items, and a `token_count` event with
the call's usage after its items.

Python, like the other bench scripts: no build step, and the stdlib's seeded
`random.Random` gives the same bytes on every machine.
"""

import hashlib
import json
import random
import sys

SESSION = "b3e1c0de-0000-4000-a000-000000010000"
MODEL = "claude-opus-4-6"
OVERHEAD = 14_000  # system prompt and tool definitions, in tokens

WORDS = (
    "the handler reads orders from the session and joins line items before it "
    "renders a page so each request issues one query per row unless the loader "
    "prefetches related rows in a single select which the cache then keeps warm"
).split()


def uid(*parts):
    h = hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def tok(text):
    return (len(text) + 3) // 4


class Gen:
    def __init__(self, calls, seed):
        self.calls = calls
        self.rng = random.Random(seed)
        self.parent = None
        self.n = 0
        self.history = 0  # estimated tokens of the conversation so far
        self.out = []

    def sentence(self, lo, hi):
        r = self.rng
        return " ".join(r.choice(WORDS) for _ in range(r.randint(lo, hi))).capitalize() + "."

    def ts(self):
        s = self.n * 7
        return f"2026-03-14T{9 + s // 3600 % 14:02d}:{s // 60 % 60:02d}:{s % 60:02d}.000Z"

    def line(self, kind, message, extra=None):
        self.n += 1
        u = uid(SESSION, self.n)
        d = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/shop",
            "sessionId": SESSION,
            "version": "2.1.39",
            "gitBranch": "main",
            "type": kind,
            "uuid": u,
            "timestamp": self.ts(),
            "message": message,
        }
        if extra:
            d.update(extra)
        self.parent = u
        self.out.append(json.dumps(d, separators=(",", ":")))

    def ask(self, k):
        text = f"Task {k}: " + self.sentence(12, 40)
        self.history += tok(text)
        self.line("user", {"role": "user", "content": text})

    def tool_output(self, name, i):
        r = self.rng
        if name == "Read":
            lines = r.randint(10, 200)
            return "\n".join(f"{n:>5}\t    {self.sentence(3, 12)}" for n in range(1, lines + 1))
        if name == "Bash":
            return "\n".join(f"test_{i}_{n} ... {'ok' if r.random() > 0.05 else 'FAILED'}"
                             for n in range(r.randint(3, 120)))
        if name == "Grep":
            return "\n".join(f"app/orders/module_{r.randint(0, 99):03d}.py:{r.randint(1, 400)}: "
                             + self.sentence(3, 9) for _ in range(r.randint(2, 60)))
        if name == "Glob":
            return "\n".join(f"app/orders/module_{n:03d}.py" for n in range(r.randint(5, 80)))
        return "The file app/orders/views.py has been updated."

    def tool_input(self, name, i):
        r = self.rng
        return {
            "Read": {"file_path": f"/home/dev/shop/app/orders/module_{r.randint(0, 99):03d}.py"},
            "Bash": {"command": f"pytest -q tests/test_orders.py -k case_{i}", "description": "Run tests"},
            "Grep": {"pattern": r.choice(WORDS), "path": "app/orders", "output_mode": "content"},
            "Glob": {"pattern": "app/orders/**/*.py"},
            "Edit": {"file_path": "/home/dev/shop/app/orders/views.py",
                     "old_string": self.sentence(4, 10), "new_string": self.sentence(4, 10)},
        }[name]

    def call(self, i, last_of_turn):
        r = self.rng
        msg_id = "msg_" + hashlib.sha256(f"{SESSION}/{i}".encode()).hexdigest()[:24]
        blocks = []
        if r.random() < 0.4:
            blocks.append({"type": "thinking", "thinking": self.sentence(10, 60),
                           "signature": "Eq" + hashlib.sha256(f"sig{i}".encode()).hexdigest()})
        if r.random() < 0.5 or last_of_turn:
            blocks.append({"type": "text", "text": self.sentence(5, 40)})
        tool = None
        if not last_of_turn:
            name = r.choices(["Read", "Bash", "Grep", "Glob", "Edit"], [45, 20, 20, 5, 10])[0]
            tool = (f"toolu_{hashlib.sha256(f'{SESSION}/t{i}'.encode()).hexdigest()[:24]}", name)
            blocks.append({"type": "tool_use", "id": tool[0], "name": name,
                           "input": self.tool_input(name, i)})
        prompt = OVERHEAD + self.history
        output = sum(tok(json.dumps(b)) for b in blocks)
        usage = {"input_tokens": 3, "cache_creation_input_tokens": min(prompt, 2_000 + r.randint(0, 3_000)),
                 "output_tokens": output, "service_tier": "standard"}
        usage["cache_read_input_tokens"] = prompt - 3 - usage["cache_creation_input_tokens"]
        for b in blocks:
            self.line("assistant", {"model": MODEL, "id": msg_id, "type": "message", "role": "assistant",
                                    "content": [b], "stop_reason": None, "stop_sequence": None,
                                    "usage": usage},
                      {"requestId": "req_" + msg_id[4:]})
        self.history += output
        if tool:
            content = self.tool_output(tool[1], i)
            self.history += tok(content)
            self.line("user", {"role": "user", "content": [
                {"tool_use_id": tool[0], "type": "tool_result", "content": content}]})

    def run(self):
        if getattr(self, "codex", False):
            return self.run_codex()
        self.out.append(json.dumps({"type": "summary", "summary": f"Synthetic session of {self.calls} calls",
                                    "leafUuid": uid(SESSION, "leaf")}, separators=(",", ":")))
        i, turn = 0, 0
        while i < self.calls:
            turn += 1
            self.ask(turn)
            length = min(self.rng.randint(20, 80), self.calls - i)
            for j in range(length):
                i += 1
                self.call(i, j == length - 1)
        return "\n".join(self.out) + "\n"


class CodexGen(Gen):
    """The same draws as `Gen`, written as a Codex CLI rollout."""

    codex = True

    def cline(self, kind, payload):
        self.n += 1
        self.out.append(json.dumps({"timestamp": self.ts(), "type": kind, "payload": payload},
                                   separators=(",", ":")))

    def codex_ask(self, k):
        text = f"Task {k}: " + self.sentence(12, 40)
        self.history += tok(text)
        self.cline("response_item", {"type": "message", "role": "user",
                                     "content": [{"type": "input_text", "text": text}]})
        self.cline("event_msg", {"type": "user_message", "message": text})

    def codex_call(self, i, last_of_turn):
        r = self.rng
        self.cline("turn_context", {"cwd": "/home/dev/shop", "approval_policy": "never",
                                    "sandbox_policy": {"type": "danger-full-access"},
                                    "model": "gpt-5-codex", "effort": "high", "summary": "auto"})
        output = 0
        if r.random() < 0.4:
            text = self.sentence(10, 60)
            output += tok(text)
            self.cline("response_item", {"type": "reasoning",
                                         "summary": [{"type": "summary_text", "text": text}],
                                         "content": None,
                                         "encrypted_content": "gAAAA" + hashlib.sha256(f"r{i}".encode()).hexdigest()})
        if r.random() < 0.5 or last_of_turn:
            text = self.sentence(5, 40)
            output += tok(text)
            self.cline("response_item", {"type": "message", "role": "assistant",
                                         "content": [{"type": "output_text", "text": text}]})
        tool = None
        if not last_of_turn:
            name = r.choices(["Read", "Bash", "Grep", "Glob", "Edit"], [45, 20, 20, 5, 10])[0]
            call_id = "call_" + hashlib.sha256(f"{SESSION}/t{i}".encode()).hexdigest()[:24]
            args = self.tool_input(name, i)
            command = {"Read": lambda a: f"sed -n '1,400p' {a['file_path']}",
                       "Bash": lambda a: a["command"],
                       "Grep": lambda a: f"rg -n {a['pattern']} {a['path']}",
                       "Glob": lambda a: "rg --files app/orders",
                       "Edit": lambda a: f"apply edit {a['file_path']}"}[name](args)
            arguments = json.dumps({"command": ["bash", "-lc", command], "workdir": "/home/dev/shop"})
            output += tok(arguments)
            self.cline("response_item", {"type": "function_call", "name": "shell",
                                         "arguments": arguments, "call_id": call_id})
            tool = (call_id, name)
        prompt = OVERHEAD + self.history
        cached = max(0, prompt - 2_000 - r.randint(0, 3_000))
        self.total = getattr(self, "total", 0) + prompt + output
        usage = {"input_tokens": prompt, "cached_input_tokens": cached, "output_tokens": output,
                 "reasoning_output_tokens": 0, "total_tokens": prompt + output}
        self.cline("event_msg", {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": self.total, "cached_input_tokens": 0,
                                  "output_tokens": 0, "reasoning_output_tokens": 0,
                                  "total_tokens": self.total},
            "last_token_usage": usage, "model_context_window": 272000}, "rate_limits": None})
        self.history += output
        if tool:
            content = self.tool_output(tool[1], i)
            self.history += tok(content)
            self.cline("response_item", {"type": "function_call_output", "call_id": tool[0],
                                         "output": content})

    def run_codex(self):
        self.cline("session_meta", {"id": SESSION, "timestamp": "2026-03-14T09:00:00.000Z",
                                    "cwd": "/home/dev/shop", "originator": "codex_cli_rs",
                                    "cli_version": "0.40.0", "instructions": None})
        i, turn = 0, 0
        while i < self.calls:
            turn += 1
            self.codex_ask(turn)
            length = min(self.rng.randint(20, 80), self.calls - i)
            for j in range(length):
                i += 1
                self.codex_call(i, j == length - 1)
        return "\n".join(self.out) + "\n"


def main():
    global SESSION
    args = sys.argv[1:]
    codex = "--codex" in args
    args = [a for a in args if a != "--codex"]
    if "--session" in args:
        # Another session id: a tree of several sessions, none sharing ids.
        at = args.index("--session")
        SESSION = args[at + 1]
        del args[at : at + 2]
    if not args:
        sys.exit("usage: gen_session.py [--codex] [--session UUID] CALLS [SEED]")
    calls = int(args[0])
    seed = int(args[1]) if len(args) > 1 else 1
    text = (CodexGen if codex else Gen)(calls, seed).run()
    # In pieces: one write of 2 GiB or more is cut short at 2 GiB on Linux,
    # and the rest was lost.
    piece = 1 << 24
    for i in range(0, len(text), piece):
        sys.stdout.write(text[i : i + piece])


if __name__ == "__main__":
    main()
