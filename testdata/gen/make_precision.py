#!/usr/bin/env python3
"""Regenerate the precision fixtures in testdata/precision/ (deterministic output).

Sessions in the real formats (Claude Code 2.1.39, Codex 0.40) built to test
that a Task Context says only what the record bears out (issue 35):

- `*-retries.jsonl`: a failure retried with success with nothing changed in
  the call (`mix test`, `cargo test`: the fix was in a file), failures whose
  retry shows what made it work (`git push --set-upstream`, a Read with
  `limit`), a failure worked around by another command and one never
  retried (both abandoned: they must stay ruled out, error verbatim), a
  plan, an ask naming the file it wants written, the write near the end,
  and enough reads to fold several times at a 16000-token window, the last
  fold after all of that;
- `*-stale-context.jsonl`: a session that opens with compactor's own
  `## Task Context` carried in (as `compact --write-session` writes one),
  whose lines the record then contradicts: a ruled-out command that
  succeeds, an open error whose command succeeds, a file called still owed
  that gets written. Unfolded, the view carries those lines: misleading.

Run from the repository root: python3 testdata/gen/make_precision.py
The generated files are committed.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from make_fixtures import hid, source_file  # noqa: E402
from make_roundtrip import Claude, Codex  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "precision")

ASK = (
    "The nightly export job fails. Find out why, fix it, and write what you found to "
    "docs/export-notes.md. Never push to main."
)
BIG_FILE_ERROR = (
    "File content (85812 tokens) exceeds maximum allowed tokens (25000). Please use offset and "
    "limit parameters to read specific portions of the file, or use the GrepTool to search for "
    "specific content."
)
STALE_CONTEXT = """## Task Context

## Requests
- #1: {ask}

## Constraints
- never-push-main: Never push to main.

## Ruled out
- mix-test: Bash `mix test 2>&1` failed (step 12): Exit code 2
  ** (RuntimeError) no :secret_key_base configuration found in ExportWeb.Endpoint.

## Current state
Goal: #1 — {ask}
Deliverable: delivered: nothing yet; still owed: docs/export-notes.md (named in #1)
Status: open error (step 12): Bash `mix test 2>&1` — ** (RuntimeError) no :secret_key_base configuration found in ExportWeb.Endpoint.
Next: (not stated)"""


def write(name, lines):
    with open(os.path.join(OUT, name), "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n")


class ClaudeSession(Claude):
    """Claude Code lines whose tool results may be errors."""

    def call(self, name, inp, output, is_error=False, note=None):
        self.n += 1
        tid = "toolu_01" + hid(self.seed, "tool", self.n, n=22)
        blocks = [{"type": "text", "text": note}] if note else []
        blocks.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
        self.response(blocks, [(tid, output)])
        if is_error:
            # Claude Code marks a failed call on its result block.
            result = self.lines[-1]["message"]["content"][0]
            result["is_error"] = True
            self.lines[-1]["toolUseResult"] = "Error: " + output.splitlines()[0]

    def say(self, text):
        self.response([{"type": "text", "text": text}])

    def reads(self, root, first, count):
        for i in range(first, first + count):
            path = f"{root}/lib/export/stage_{i:02}.ex"
            self.call("Read", {"file_path": path}, source_file(path, 150 + 6 * i, 30 + i))


def claude_retries():
    root = "/home/dev/exporter"
    c = ClaudeSession("5b1e2c3d-4f5a-4b6c-8d7e-9f0a1b2c3d4e", root, "2.1.39", "fix/export", "pr-claude")
    c.user(ASK)
    c.call("TodoWrite", {"todos": [
        {"content": "Find why the export fails", "status": "in_progress", "activeForm": "Finding why the export fails"},
        {"content": "Fix the export", "status": "pending", "activeForm": "Fixing the export"},
        {"content": "Write docs/export-notes.md", "status": "pending", "activeForm": "Writing the notes"},
    ]}, "Todos have been modified successfully.")
    c.call("Bash", {"command": "mix test 2>&1", "description": "Run the tests"},
           "Exit code 2\n** (RuntimeError) no :secret_key_base configuration found in ExportWeb.Endpoint.", is_error=True)
    c.call("Read", {"file_path": f"{root}/test/fixtures/nightly.jsonl"}, BIG_FILE_ERROR, is_error=True)
    c.call("Read", {"file_path": f"{root}/test/fixtures/nightly.jsonl", "limit": 5},
           "     1\t{\"stage\": \"extract\", \"rows\": 1200}\n     2\t{\"stage\": \"load\", \"rows\": 0}")
    c.reads(root, 1, 8)
    c.call("Bash", {"command": "node assets/build.js 2>&1"},
           "Exit code 1\n✘ [ERROR] Could not resolve \"js/app.js\"", is_error=True)
    c.call("Bash", {"command": f"cd {root}/assets && node build.js 2>&1"}, "built in 41ms")
    c.say("The export fails because `ExportWeb.Endpoint` has no `secret_key_base` in the test config.")
    c.call("Edit", {"file_path": f"{root}/config/test.exs", "old_string": "config :export, ExportWeb.Endpoint,",
                    "new_string": "config :export, ExportWeb.Endpoint,\n  secret_key_base: String.duplicate(\"a\", 64),"},
           f"The file {root}/config/test.exs has been updated successfully.")
    c.reads(root, 9, 8)
    c.call("Bash", {"command": f"cd {root} && mix test 2>&1"}, "Finished in 1.2 seconds\n48 tests, 0 failures")
    c.call("Bash", {"command": "terraform apply -target=module.export_bucket"},
           "Error: insufficient privileges to modify module.export_bucket (role export-ci)", is_error=True)
    c.say("I can't change the bucket from here; the export no longer needs it.")
    c.reads(root, 17, 8)
    c.call("Bash", {"command": "git push 2>&1"},
           "fatal: The current branch fix/export has no upstream branch.", is_error=True)
    c.call("Bash", {"command": "git push --set-upstream origin fix/export 2>&1"},
           "branch 'fix/export' set up to track 'origin/fix/export'.")
    c.reads(root, 25, 6)
    c.call("Write", {"file_path": f"{root}/docs/export-notes.md",
                     "content": "# Nightly export\n\nThe test config had no secret_key_base.\n"},
           f"File created successfully at: {root}/docs/export-notes.md")
    c.call("TodoWrite", {"todos": [
        {"content": "Find why the export fails", "status": "completed", "activeForm": "Finding why the export fails"},
        {"content": "Fix the export", "status": "completed", "activeForm": "Fixing the export"},
        {"content": "Write docs/export-notes.md", "status": "completed", "activeForm": "Writing the notes"},
    ]}, "Todos have been modified successfully.")
    # Reading on after the work, so that a fold covers all of it.
    c.reads(root, 31, 10)
    c.say("The export is fixed: config/test.exs sets secret_key_base, and docs/export-notes.md says why.")
    write("claude-code-retries.jsonl", c.lines)


def claude_stale_context():
    root = "/home/dev/exporter"
    c = ClaudeSession("6c2f3d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f", root, "2.1.39", "fix/export", "pr-claude-stale")
    # A session written by `compact --write-session`: the boundary, then the
    # carried Task Context as the compact summary that opens the history.
    boundary = c.env("system")
    boundary.update({"subtype": "compact_boundary", "content": "Conversation compacted",
                     "compactMetadata": {"trigger": "manual", "preTokens": 41000}, "level": "info"})
    c.lines.append(boundary)
    summary = c.env("user")
    summary.update({"isCompactSummary": True, "isVisibleInTranscriptOnly": True,
                    "message": {"role": "user", "content": [{"type": "text", "text": STALE_CONTEXT.format(ask=ASK)}]}})
    c.lines.append(summary)
    c.call("Bash", {"command": "mix test 2>&1"}, "Finished in 1.1 seconds\n48 tests, 0 failures")
    c.reads(root, 1, 4)
    c.call("Write", {"file_path": f"{root}/docs/export-notes.md",
                     "content": "# Nightly export\n\nThe test config had no secret_key_base.\n"},
           f"File created successfully at: {root}/docs/export-notes.md")
    c.say("docs/export-notes.md is written and the tests pass.")
    write("claude-code-stale-context.jsonl", c.lines)


class CodexSession(Codex):
    """Codex 0.40 rollout lines: `shell` calls whose output is the JSON
    envelope with the exit code."""

    def shell(self, cmd, output, code=0, name="shell", args=None):
        self.calls += 1
        call = "call_" + hid(self.seed, "call", self.calls, n=24)
        self.emit("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": f"**Running {cmd.split()[0]}**"}],
                                    "content": None, "encrypted_content": "gAAAAB" + hid(self.seed, "enc", self.calls, n=60)})
        arguments = args if args is not None else {"command": ["bash", "-lc", cmd], "workdir": self.cwd}
        self.emit("response_item", {"type": "function_call", "name": name, "arguments": json.dumps(arguments), "call_id": call})
        self.emit("response_item", {"type": "function_call_output", "call_id": call,
                                    "output": json.dumps({"output": output, "metadata": {"exit_code": code, "duration_seconds": 0.4}})})
        self.history += len(output) // 4 + 60
        self.usage(60)
        self.turn_context()

    def plan(self, steps):
        self.shell("update_plan", "Plan updated", name="update_plan",
                   args={"plan": [{"step": s, "status": st} for s, st in steps]})

    def seds(self, first, count):
        for i in range(first, first + count):
            path = f"src/export/stage_{i:02}.rs"
            self.shell(f"sed -n '1,220p' {path}", source_file(path, 150 + 6 * i, 30 + i))

    def start(self, sid):
        self.emit("session_meta", {"id": sid, "timestamp": self.ts(), "cwd": self.cwd, "originator": "codex_cli_rs",
                                   "cli_version": "0.40.0", "instructions": None})
        self.emit("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text":
                  f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n  <approval_policy>never</approval_policy>\n</environment_context>"}]})
        self.turn_context()


CODEX_ASK = (
    "The nightly export fails in CI. Find out why, fix it, and write what you found to "
    "docs/export-notes.md. Never push to main."
)


def codex_retries():
    c = CodexSession("/home/dev/exporter", "pr-codex")
    c.start("0199f0a1-b2c3-7d4e-8f5a-6b7c8d9e0f1a")
    c.ask(CODEX_ASK)
    c.plan([("Find why the export fails", "in_progress"), ("Fix the export", "pending"),
            ("Write docs/export-notes.md", "pending")])
    c.shell("cargo test 2>&1", "error[E0425]: cannot find value `pool` in this scope\n --> src/export/run.rs:88:9", code=101)
    c.shell("git push 2>&1", "fatal: The current branch fix/export has no upstream branch.", code=128)
    c.shell("git push --set-upstream origin fix/export 2>&1", "branch 'fix/export' set up to track 'origin/fix/export'.")
    c.seds(1, 8)
    c.shell("psql -c 'ALTER TABLE exports ADD COLUMN batch int'",
            "ERROR:  permission denied for table exports", code=1)
    c.answer("The export fails because `open_pool` is called after `run_migrations` in src/export/run.rs.")
    c.shell("apply_patch", "Done!", name="shell", args={"command": ["apply_patch",
            "*** Begin Patch\n*** Update File: src/export/run.rs\n@@\n-    run_migrations();\n+    let pool = open_pool();\n+    run_migrations();\n*** End Patch\n"]})
    c.seds(9, 8)
    c.shell("cargo test 2>&1", "test result: ok. 48 passed; 0 failed")
    c.seds(17, 8)
    c.shell("apply_patch", "Done!", name="shell", args={"command": ["apply_patch",
            "*** Begin Patch\n*** Add File: docs/export-notes.md\n+# Nightly export\n+The pool was opened after the migrations ran.\n*** End Patch\n"]})
    c.plan([("Find why the export fails", "completed"), ("Fix the export", "completed"),
            ("Write docs/export-notes.md", "completed")])
    # Reading on after the work, so that a fold covers all of it.
    c.seds(25, 10)
    c.answer("The export is fixed in src/export/run.rs, and docs/export-notes.md says why.")
    write("codex-retries.jsonl", c.lines)


def codex_stale_context():
    c = CodexSession("/home/dev/exporter", "pr-codex-stale")
    # A rollout written by `compact --write-session`: `session_meta`, then a
    # `compacted` item whose message is compactor's Task Context and whose
    # replacement history opens with it; then Codex, resumed, goes on.
    c.emit("session_meta", {"id": "0199f0a1-b2c3-7d4e-8f5a-6b7c8d9e0f2b", "timestamp": c.ts(), "cwd": c.cwd,
                            "originator": "compactor", "cli_version": "0.40.0", "source": "cli"})
    context = STALE_CONTEXT.format(ask=CODEX_ASK)
    c.emit("compacted", {"message": context, "replacement_history": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": context}]}]})
    c.emit("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text":
           f"<environment_context>\n  <cwd>{c.cwd}</cwd>\n  <approval_policy>never</approval_policy>\n</environment_context>"}]})
    c.turn_context()
    c.shell("mix test 2>&1", "Finished in 1.1 seconds\n48 tests, 0 failures")
    c.seds(1, 4)
    c.shell("apply_patch", "Done!", name="shell", args={"command": ["apply_patch",
            "*** Begin Patch\n*** Add File: docs/export-notes.md\n+# Nightly export\n*** End Patch\n"]})
    c.answer("docs/export-notes.md is written and the tests pass.")
    write("codex-stale-context.jsonl", c.lines)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    claude_retries()
    claude_stale_context()
    codex_retries()
    codex_stale_context()
