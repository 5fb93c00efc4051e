#!/usr/bin/env python3
"""A stand-in model on loopback, to try `compactor run` (or `compactor proxy`)
without a model, a key or the network: it answers the APIs the clients speak
with a short text that says no model ran.

    python3 scripts/stand-in-model.py [--port 8790]
    compactor run claude --upstream http://127.0.0.1:8790 -- -p "Say hello"

It prints `stand-in model listening on http://127.0.0.1:PORT` first (port 0
picks a free one), then serves until stopped:

- Anthropic Messages (`POST /v1/messages`, Claude Code), streamed or whole,
  and `POST /v1/messages/count_tokens`;
- OpenAI Responses (`POST /v1/responses`, Codex), streamed or whole;
- OpenAI Chat Completions (`POST [/v1]/chat/completions`, OpenCode and any
  OpenAI-compatible client), streamed (with the usage chunk
  `stream_options.include_usage` asks for) or whole;
- `GET /v1/models`.

Every answer is the text "compactor's stand-in model: no model ran; this
request held N messages", with a usage that counts the request's JSON at four
characters a token, so the proxy calibrates and compacts as it would. It
checks no key and stores nothing. Standard library only.
"""
import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "stand-in"


def answer_text(items):
    return (
        "compactor's stand-in model: no model ran; this request held "
        f"{items} message{'' if items == 1 else 's'}."
    )


def tokens(raw):
    return max(1, len(raw) // 4)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    served = 0

    def log_message(self, fmt, *args):  # one line per request, on stderr
        sys.stderr.write("stand-in model: %s\n" % (fmt % args))

    def send(self, status, kind, body):
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, status, value):
        self.send(status, "application/json", json.dumps(value).encode())

    def send_events(self, events):
        """Server-sent events, each (name or None, JSON value or raw text)."""
        out = []
        for name, data in events:
            if name:
                out.append(f"event: {name}\n")
            text = data if isinstance(data, str) else json.dumps(data)
            out.append(f"data: {text}\n\n")
        self.send(200, "text/event-stream", "".join(out).encode())

    def do_GET(self):
        if self.path.startswith("/v1/models"):
            self.send_json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        else:
            self.send_json(404, {"error": {"message": f"no {self.path} here"}})

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self.send_json(400, {"error": {"message": "the body is not JSON"}})
            return
        Handler.served += 1
        n = Handler.served
        path = self.path.split("?")[0]
        if path == "/v1/messages/count_tokens":
            self.send_json(200, {"input_tokens": tokens(raw)})
        elif path == "/v1/messages":
            self.answer_messages(body, raw, n)
        elif path == "/v1/responses":
            self.answer_responses(body, raw, n)
        elif path in ("/v1/chat/completions", "/chat/completions"):
            self.answer_chat(body, raw, n)
        else:
            self.send_json(404, {"error": {"message": f"no {path} here"}})

    def answer_messages(self, body, raw, n):
        text = answer_text(len(body.get("messages") or []))
        usage = {"input_tokens": tokens(raw), "output_tokens": tokens(text)}
        message = {
            "id": f"msg_standin_{n}", "type": "message", "role": "assistant",
            "model": body.get("model", MODEL), "stop_reason": "end_turn",
            "stop_sequence": None,
        }
        if not body.get("stream"):
            self.send_json(200, dict(message, content=[{"type": "text", "text": text}], usage=usage))
            return
        start = dict(message, content=[], stop_reason=None,
                     usage={"input_tokens": usage["input_tokens"], "output_tokens": 1})
        self.send_events([
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": text}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": {"output_tokens": usage["output_tokens"]}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    def answer_responses(self, body, raw, n):
        items = body.get("input")
        text = answer_text(len(items) if isinstance(items, list) else 1)
        rid = f"resp_standin_{n}"
        item = {"type": "message", "id": f"msg_standin_{n}", "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
        usage = {"input_tokens": tokens(raw), "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": tokens(text), "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": tokens(raw) + tokens(text)}
        done = {"id": rid, "object": "response", "status": "completed",
                "model": body.get("model", MODEL), "output": [item], "usage": usage}
        if not body.get("stream"):
            self.send_json(200, done)
            return
        self.send_events([
            ("response.created", {"type": "response.created",
                                  "response": {"id": rid, "status": "in_progress"}}),
            ("response.output_item.added", {"type": "response.output_item.added",
                                            "output_index": 0,
                                            "item": dict(item, status="in_progress", content=[])}),
            ("response.output_text.delta", {"type": "response.output_text.delta",
                                            "output_index": 0, "content_index": 0,
                                            "item_id": item["id"], "delta": text}),
            ("response.output_item.done", {"type": "response.output_item.done",
                                           "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": done}),
        ])

    def answer_chat(self, body, raw, n):
        text = answer_text(len(body.get("messages") or []))
        cid = f"chatcmpl-standin-{n}"
        usage = {"prompt_tokens": tokens(raw), "completion_tokens": tokens(text),
                 "total_tokens": tokens(raw) + tokens(text)}
        head = {"id": cid, "created": 0, "model": body.get("model", MODEL)}
        if not body.get("stream"):
            self.send_json(200, dict(head, object="chat.completion", usage=usage, choices=[
                {"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": text}}]))
            return
        chunk = dict(head, object="chat.completion.chunk")
        events = [
            (None, dict(chunk, choices=[{"index": 0, "finish_reason": None,
                                         "delta": {"role": "assistant", "content": text}}])),
            (None, dict(chunk, choices=[{"index": 0, "finish_reason": "stop", "delta": {}}])),
        ]
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append((None, dict(chunk, choices=[], usage=usage)))
        events.append((None, "[DONE]"))
        self.send_events(events)


def main():
    p = argparse.ArgumentParser(description="A stand-in model on loopback, to try compactor live.")
    p.add_argument("--port", type=int, default=8790, help="the port (0: a free one); default 8790")
    args = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"stand-in model listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
