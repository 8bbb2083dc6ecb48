"""A loopback model server that the real agent clients talk to: the only double in the end-to-end tests.

It speaks, streamed as each client expects:

- Anthropic Messages (`POST /v1/messages`, SSE) for Claude Code;
- OpenAI Responses (`POST /v1/responses`, SSE) for Codex CLI;
- Gemini `generateContent` (JSON) and `streamGenerateContent?alt=sse` for Gemini CLI;
- OpenAI chat completions (`POST /v1/chat/completions`, SSE when `stream` is true, JSON otherwise) for
  Pi, Ollama and llama.cpp server.

Every request is recorded (path, headers, parsed body). The script is one rule, the same in every
protocol: when the conversation already holds a tool result, answer `answer` (a text); else when the
last user text contains `TOOL_TRIGGER`, ask for one tool call that reads `notes.txt` (or, for Claude Code
with `command`, one that runs it in Bash); else answer.
Side calls (Claude's title or quota probes, Gemini's routing) get the same rule, so nothing needs to
know which call is which.

    with FakeModel() as model:
        env = {"ANTHROPIC_BASE_URL": model.url, ...}
        ...
        assert model.saw("When about to call a release ready")
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

TOOL_TRIGGER = "read notes.txt"
NOTES = "notes.txt"
ANSWER = "Done. The notes say the build is green."
# Each protocol's name for its file-reading tool and the argument naming the file.
READ_TOOL = {
    "anthropic": ("Read", "file_path"),
    "gemini": ("read_file", "file_path"),
    "chat": ("read", "path"),
}


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes = field(repr=False, default=b"")

    @property
    def text(self) -> str:
        """The body as text, for substring checks (JSON escapes decoded)."""
        return json.dumps(self.body, ensure_ascii=False) if self.body is not None else ""


class FakeModel:
    """A threaded HTTP server on 127.0.0.1; `url` is its base (no path)."""

    def __init__(self, answer: str = ANSWER, *, notes_path: str = NOTES, command: str | None = None) -> None:
        self.answer = answer
        self.notes_path = notes_path
        self.command = command  # Anthropic only: ask for this shell command instead of the read
        self.requests: list[Seen] = []
        self.delay_s = 0.0
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _record(self, body: bytes) -> Seen:
                try:
                    parsed = json.loads(body) if body else None
                except ValueError:
                    parsed = None
                seen = Seen(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, parsed, body
                )
                with model._lock:
                    model.requests.append(seen)
                return seen

            def do_HEAD(self) -> None:
                self._record(b"")
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._record(b"")
                path = urlsplit(self.path).path
                if path.endswith("/models"):
                    self._json({"object": "list", "data": [{"id": "fake", "object": "model"}], "models": []})
                else:
                    self._json({"error": {"message": "not found"}}, status=404)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                seen = self._record(body)
                if model.delay_s:
                    time.sleep(model.delay_s)
                path = urlsplit(self.path).path
                request = seen.body if isinstance(seen.body, dict) else {}
                if path.endswith("/messages"):
                    self._anthropic(request)
                elif path.endswith("/responses"):
                    self._responses(request)
                elif path.endswith("/chat/completions"):
                    self._chat(request)
                elif ":streamGenerateContent" in path:
                    self._sse([_gemini_chunk(model._gemini(request))])
                elif ":generateContent" in path:
                    self._json(_gemini_chunk(model._gemini(request)))
                elif path.endswith(":countTokens"):
                    self._json({"totalTokens": 10})
                elif path.endswith("/count_tokens"):
                    self._json({"input_tokens": 10})
                else:
                    self._json({"error": {"message": "not found"}}, status=404)

            def _json(self, obj: Any, status: int = 200) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, events: list[Any], named: bool = False) -> None:
                chunks = []
                for item in events:
                    if named:
                        name, data = item
                        chunks.append(f"event: {name}\ndata: {json.dumps(data)}\n\n")
                    elif item == "[DONE]":
                        chunks.append("data: [DONE]\n\n")
                    else:
                        chunks.append(f"data: {json.dumps(item)}\n\n")
                data = "".join(chunks).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _anthropic(self, request: dict[str, Any]) -> None:
                tool = model._anthropic_tool(request)
                if not request.get("stream"):
                    content = [tool] if tool else [{"type": "text", "text": model.answer}]
                    self._json(
                        {
                            "id": "msg_fake",
                            "type": "message",
                            "role": "assistant",
                            "model": request.get("model", "fake"),
                            "content": content,
                            "stop_reason": "tool_use" if tool else "end_turn",
                            "stop_sequence": None,
                            "usage": {"input_tokens": 10, "output_tokens": 10},
                        }
                    )
                    return
                self._sse(_anthropic_events(request.get("model", "fake"), model.answer, tool), named=True)

            def _responses(self, request: dict[str, Any]) -> None:
                self._sse(_responses_events(model._responses_tool(request), model.answer), named=True)

            def _chat(self, request: dict[str, Any]) -> None:
                tool = model._chat_tool(request)
                if request.get("stream"):
                    self._sse(_chat_chunks(request.get("model", "fake"), model.answer, tool))
                    return
                message: dict[str, Any] = {"role": "assistant", "content": model.answer}
                self._json(
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": request.get("model", "fake"),
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
                    }
                )

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- what the tests read --------------------------------------------------------------------------

    def turns(self) -> list[Seen]:
        """The model calls (POSTs), in order."""
        with self._lock:
            return [seen for seen in self.requests if seen.method == "POST"]

    def saw(self, text: str) -> bool:
        """Whether any model call carried `text`."""
        return any(text in seen.text for seen in self.turns())

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- the one rule, per protocol -------------------------------------------------------------------

    def _wants_tool(self, last_user_text: str, has_result: bool) -> bool:
        return not has_result and TOOL_TRIGGER in last_user_text

    def _anthropic_tool(self, request: dict[str, Any]) -> dict[str, Any] | None:
        messages = request.get("messages") or []
        has_result = any(
            isinstance(block, dict) and block.get("type") == "tool_result"
            for message in messages
            if isinstance(message.get("content"), list)
            for block in message["content"]
        )
        users = [m for m in messages if m.get("role") == "user"]
        if not users or not self._wants_tool(_text_of(users[-1].get("content")), has_result):
            return None
        if self.command is not None:
            return {
                "type": "tool_use",
                "id": "toolu_fake1",
                "name": "Bash",
                "input": {"command": self.command},
            }
        name, arg = READ_TOOL["anthropic"]
        return {"type": "tool_use", "id": "toolu_fake1", "name": name, "input": {arg: self.notes_path}}

    def _responses_tool(self, request: dict[str, Any]) -> dict[str, Any] | None:
        items = request.get("input") or []
        has_result = any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items)
        users = [i for i in items if isinstance(i, dict) and i.get("role") == "user"]
        if not users or not self._wants_tool(_text_of(users[-1].get("content")), has_result):
            return None
        arguments = json.dumps({"cmd": f"cat {self.notes_path}"})
        return {
            "type": "function_call",
            "id": "fc_fake1",
            "call_id": "call_fake1",
            "name": "exec_command",
            "arguments": arguments,
        }

    def _gemini(self, request: dict[str, Any]) -> dict[str, Any]:
        contents = request.get("contents") or []
        parts = [p for c in contents for p in (c.get("parts") or []) if isinstance(p, dict)]
        has_result = any("functionResponse" in p for p in parts)
        users = [c for c in contents if c.get("role") == "user"]
        last = " ".join(str(p.get("text", "")) for p in (users[-1].get("parts") or [])) if users else ""
        config = request.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json" or config.get("responseJsonSchema"):
            return {"text": json.dumps({"reasoning": "a simple request", "model_choice": "flash"})}
        if self._wants_tool(last, has_result):
            name, arg = READ_TOOL["gemini"]
            return {"functionCall": {"name": name, "args": {arg: self.notes_path}}}
        return {"text": self.answer}

    def _chat_tool(self, request: dict[str, Any]) -> dict[str, Any] | None:
        messages = request.get("messages") or []
        has_result = any(m.get("role") == "tool" for m in messages)
        users = [m for m in messages if m.get("role") == "user"]
        if not users or not self._wants_tool(_text_of(users[-1].get("content")), has_result):
            return None
        name, arg = READ_TOOL["chat"]
        return {"id": "call_fake1", "name": name, "arguments": json.dumps({arg: self.notes_path})}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


def _anthropic_events(model: str, answer: str, tool: dict[str, Any] | None) -> list[tuple[str, Any]]:
    usage = {
        "input_tokens": 10,
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    events: list[tuple[str, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                },
            },
        )
    ]
    if tool:
        start = {**tool, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(tool["input"])}
    else:
        start = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": answer}
    events += [
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use" if tool else "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 10},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def _responses_events(tool: dict[str, Any] | None, answer: str) -> list[tuple[str, Any]]:
    item = tool or {
        "type": "message",
        "role": "assistant",
        "id": "msg_fake1",
        "content": [{"type": "output_text", "text": answer}],
    }
    usage = {
        "input_tokens": 10,
        "input_tokens_details": None,
        "output_tokens": 10,
        "output_tokens_details": None,
        "total_tokens": 20,
    }
    return [
        ("response.created", {"type": "response.created", "response": {"id": "resp_fake"}}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        (
            "response.completed",
            {"type": "response.completed", "response": {"id": "resp_fake", "usage": usage}},
        ),
    ]


def _gemini_chunk(part: dict[str, Any]) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
        "modelVersion": "gemini-fake",
    }


def _chat_chunks(model: str, answer: str, tool: dict[str, Any] | None) -> list[Any]:
    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    if tool:
        call = {
            "index": 0,
            "id": tool["id"],
            "type": "function",
            "function": {"name": tool["name"], "arguments": tool["arguments"]},
        }
        body = [
            chunk({"role": "assistant", "content": None, "tool_calls": [call]}, None),
            chunk({}, "tool_calls"),
        ]
    else:
        body = [chunk({"role": "assistant", "content": answer}, None), chunk({}, "stop")]
    usage = {
        **chunk({}, None),
        "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }
    return [*body, usage, "[DONE]"]
