#!/usr/bin/env python3
"""Writes testdata/probe/codex-adversarial.jsonl: a Codex session built to lose
critical facts under compaction (issue 14). Deterministic; rerun to regenerate.

- a rule stated once at turn 1 and never repeated, one of them phrased
  without any prohibition word ("Leave the billing module alone");
- an ask opened by the Codex IDE context, its request after
  `## My request for Codex:`;
- a later ask that supersedes the first;
- an ask typed after 20 KB of pasted log;
- distinct errors of one command, with terminal colour codes;
- files written with apply_patch;
- enough tool output to force several folds at small windows.
"""
import json
import os

ts = [0]


def line(kind, payload):
    ts[0] += 1
    m, s = divmod(ts[0] * 3, 60)
    h, m = divmod(m, 60)
    return json.dumps({"timestamp": f"2025-10-03T{10 + h}:{m:02d}:{s:02d}.000Z", "type": kind, "payload": payload})


out = []
out.append(line("session_meta", {"id": "0199c0de-0000-7000-8000-00000000a14e", "timestamp": "2025-10-03T10:00:00.000Z",
                                 "cwd": "/home/dev/shop", "originator": "codex_cli_rs", "cli_version": "0.40.0", "instructions": None}))
out.append(line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text":
    "<environment_context>\n  <cwd>/home/dev/shop</cwd>\n</environment_context>"}]}))


def ask(text):
    out.append(line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}))


tokens = [3000]


def usage():
    tokens[0] += 900
    u = {"input_tokens": tokens[0], "cached_input_tokens": 0, "output_tokens": 40, "reasoning_output_tokens": 0,
         "total_tokens": tokens[0] + 40}
    out.append(line("event_msg", {"type": "token_count", "info": {"total_token_usage": u, "last_token_usage": u,
                                                                  "model_context_window": 272000}}))


n = [0]


def shell(cmd, output, exit_code=0):
    n[0] += 1
    cid = f"call_adv_{n[0]:03d}"
    out.append(line("response_item", {"type": "function_call", "name": "shell", "arguments": json.dumps(
        {"command": ["bash", "-lc", cmd], "workdir": "/home/dev/shop"}), "call_id": cid}))
    usage()
    env = {"output": output, "metadata": {"exit_code": exit_code, "duration_seconds": 0.4}}
    out.append(line("response_item", {"type": "function_call_output", "call_id": cid, "output": json.dumps(env)}))


def patch(path, body):
    n[0] += 1
    cid = f"call_adv_{n[0]:03d}"
    p = f"*** Begin Patch\n*** Update File: {path}\n@@\n{body}\n*** End Patch\n"
    out.append(line("response_item", {"type": "custom_tool_call", "name": "apply_patch", "input": p, "call_id": cid,
                                      "status": "completed"}))
    usage()
    out.append(line("response_item", {"type": "custom_tool_call_output", "call_id": cid, "output": json.dumps(
        {"output": f"Success. Updated the following files:\nM {path}\n", "metadata": {"exit_code": 0}})}))


def say(text):
    out.append(line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}))
    usage()


def listing(name, k):
    return "\n".join(f"{i:5d}\t# {name}: line {i} of the module, {k} revision, nothing remarkable here" for i in range(1, 40))


ask("# Context from my IDE setup:\n\n## Active file: services/orders/schema.py\n\n## Open tabs:\n"
    + "".join(f"- tab_{i}.py: services/orders/tab_{i}.py\n" for i in range(40))
    + "\n## My request for Codex:\nMigrate the orders service to the v2 schema. Leave the billing module alone. "
      "Do not run any DDL against tenant_registry.")
for i in range(6):
    shell(f"sed -n '1,200p' services/orders/part_{i}.py", listing(f"orders/part_{i}", "first"))
say("I'll use an additive migration rather than rewriting the tables.")
patch("services/orders/schema.py", "-VERSION = 1\n+VERSION = 2")
shell("npm test", "\u001b[31m⎯⎯⎯ FAIL\u001b[39m tests/orders.test.ts > keeps totals\nAssertionError: expected 10 to be 12", 1)
for i in range(4):
    shell(f"sed -n '1,200p' services/orders/helper_{i}.py", listing(f"orders/helper_{i}", "second"))
shell("npm test", "\u001b[31m⎯⎯⎯ FAIL\u001b[39m tests/orders.test.ts > rounds tax\nTypeError: rate is undefined", 1)
say("The tax helper reads the rate before it is loaded.")

ask("Actually, stop the orders migration: migrate the invoices service to the v2 schema instead.")
for i in range(6):
    shell(f"sed -n '1,200p' services/invoices/part_{i}.py", listing(f"invoices/part_{i}", "third"))
patch("services/invoices/schema.py", "-VERSION = 1\n+VERSION = 2")
say("Invoices now use the v2 schema.")

log = "".join(f"2025-10-03T10:{i // 60:02d}:{i % 60:02d}Z INFO migrate worker={i % 7} batch={i} rows=500 ok\n" for i in range(360))
assert len(log) > 20_000
ask(log + "\nThe log above is from staging. Why does the invoices migration hang after batch 359?")
for i in range(6):
    shell(f"sed -n '1,200p' services/invoices/worker_{i}.py", listing(f"invoices/worker_{i}", "fourth"))
patch("services/invoices/worker.py", "-LIMIT = None\n+LIMIT = 500")
say("The worker had no batch limit, so the last batch never committed; it is capped at 500 rows now.")

path = os.path.join(os.path.dirname(__file__), "..", "testdata", "probe", "codex-adversarial.jsonl")
with open(path, "w") as f:
    f.write("\n".join(out) + "\n")
