#!/usr/bin/env python3
"""LangChain's trim_messages on a generated Claude Code session (bench/run's peer).

    python bench/trim_peer.py SESSION.jsonl WINDOW

Turns the session into LangChain messages (user text, assistant text and
tool calls merged per message id, tool results as ToolMessages), then at 50
calls spread over the session trims the history before that call to the
budget compactor uses by default (WINDOW minus the 20000 output tokens
reserved), keeping the newest messages (`strategy="last"`, approximate token
counter, starting on a human message). Prints JSON: version, per-call p50 in
ms, calls/s, peak RSS in MB. It only drops old messages: no summary, no
tool-output reduction, no store, no cache-aware prefix.
"""

import json
import resource
import statistics
import sys
import time

import langchain_core
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, trim_messages


def load(path):
    msgs, call_starts, last_id = [], [], None
    for line in open(path):
        d = json.loads(line)
        if d.get("type") not in ("user", "assistant"):
            continue
        m = d["message"]
        if d["type"] == "user":
            last_id = None
            if isinstance(m["content"], str):
                msgs.append(HumanMessage(m["content"]))
                continue
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    msgs.append(ToolMessage(b["content"], tool_call_id=b["tool_use_id"]))
            continue
        if m["id"] != last_id:
            call_starts.append(len(msgs))
            msgs.append(AIMessage(content="", tool_calls=[]))
            last_id = m["id"]
        ai = msgs[-1]
        for b in m["content"]:
            if b["type"] == "text":
                ai.content += b["text"]
            elif b["type"] == "thinking":
                ai.content += b["thinking"]
            elif b["type"] == "tool_use":
                ai.tool_calls.append({"name": b["name"], "args": b["input"], "id": b["id"], "type": "tool_call"})
    return msgs, call_starts


def main():
    path, window = sys.argv[1], int(sys.argv[2])
    budget = window - 20_000
    msgs, starts = load(path)
    step = max(1, len(starts) // 50)
    sampled = starts[::step]
    times = []
    for end in sampled:
        t = time.perf_counter()
        trim_messages(msgs[:end], max_tokens=budget, strategy="last",
                      token_counter="approximate", start_on="human", allow_partial=False)
        times.append(time.perf_counter() - t)
    print(json.dumps({
        "version": langchain_core.__version__,
        "sampled": len(sampled),
        "per_call_ms": statistics.median(times) * 1000,
        "calls_s": len(times) / sum(times),
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


if __name__ == "__main__":
    main()
