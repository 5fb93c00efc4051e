"""A second Chat Completions client for compactor's proxy tests: the official
`openai` Python SDK (pinned in requirements.txt) running a tool loop,
streamed with `stream_options.include_usage`, until the model answers with
text. Its one tool, `read`, reads a file under the working directory.

    python3 openai_chat_agent.py BASE_URL MODEL USER ASK

Prints each call's usage (`usage PROMPT CACHED COMPLETION`) and then the
final answer's text. The key comes from OPENAI_API_KEY.
"""

import json
import sys

from openai import OpenAI

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read",
            "description": "Read a file of the project.",
            "parameters": {
                "type": "object",
                "properties": {"filePath": {"type": "string"}},
                "required": ["filePath"],
            },
        },
    }
]


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def main():
    base_url, model, user, ask = sys.argv[1:5]
    client = OpenAI(base_url=base_url, max_retries=0)
    messages = [
        {"role": "system", "content": "You are a careful agent. Use the read tool."},
        {"role": "user", "content": ask},
    ]
    for _ in range(100):
        stream = client.chat.completions.create(
            model=model,
            messages=messages,
            tools=TOOLS,
            tool_choice="auto",
            user=user,
            stream=True,
            stream_options={"include_usage": True},
        )
        text, calls, usage = "", {}, None
        for chunk in stream:
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices:
                delta = choice.delta
                text += delta.content or ""
                for call in delta.tool_calls or []:
                    c = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                    c["id"] = call.id or c["id"]
                    if call.function is not None:
                        c["name"] = c["name"] or (call.function.name or "")
                        c["arguments"] += call.function.arguments or ""
        cached = usage.prompt_tokens_details.cached_tokens if usage.prompt_tokens_details else 0
        print(f"usage {usage.prompt_tokens} {cached} {usage.completion_tokens}", flush=True)
        message = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function",
                 "function": {"name": c["name"], "arguments": c["arguments"]}}
                for _, c in sorted(calls.items())
            ]
        messages.append(message)
        if not calls:
            print(text)
            return
        for c in message["tool_calls"]:
            args = json.loads(c["function"]["arguments"])
            messages.append(
                {"role": "tool", "tool_call_id": c["id"], "content": read(args["filePath"])}
            )
    sys.exit("the model never finished")


if __name__ == "__main__":
    main()
