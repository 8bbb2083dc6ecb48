"""Gemini CLI chat files (`~/.gemini/tmp/<project>/chats/session-*.jsonl`; checked against 0.61.0).

JSONL: a metadata line (`sessionId`, `projectHash`, `startTime`, `kind`), then message records with
an `id`, a `timestamp` and a `type`: `user` (`content` a list of parts: `{"text"}` for a prompt,
`{"functionResponse"}` for tool results) or `gemini` (`content` the answer's text, `toolCalls` with
`name`, `args`, `status` success / error / cancelled). A record whose id was seen before replaces that
message (Gemini rewrites a message as its tool calls finish); `{"$rewindTo": id}` removes that message
and everything after it; `{"$set": {...}}` updates the metadata, and `$set.messages` replaces the list.
The first user message is Gemini's own `<session_context>`; in `-p` mode the context hooks injected
(`<hook_context>…</hook_context>`) is glued in front of the prompt: both are removed (see `provenance`).
A message's id is its turn's key.
"""

from __future__ import annotations

from typing import Any

from habitus.harness.provenance import source_of
from habitus.harness.transcripts.core import _Builder, _items, _Rec

_TOOL_STATUS = {"error": "error", "cancelled": "rejected"}


def _gemini(records: list[_Rec]) -> _Builder:
    builder = _Builder()
    messages: dict[str, tuple[int, dict[str, Any]]] = {}  # id -> (offset, record), in first-seen order
    for rec in records:
        obj = rec.obj
        if isinstance(obj.get("sessionId"), str) and "type" not in obj:
            builder.session_id = obj["sessionId"]
            continue
        rewind = obj.get("$rewindTo")
        if isinstance(rewind, str):
            if rewind in messages:
                ids = list(messages)
                for gone in ids[ids.index(rewind) :]:
                    del messages[gone]
            continue
        update = obj.get("$set")
        if isinstance(update, dict):
            if isinstance(update.get("messages"), list):
                messages = {
                    m["id"]: (rec.offset, m)
                    for m in update["messages"]
                    if isinstance(m, dict) and isinstance(m.get("id"), str)
                }
            continue
        if isinstance(obj.get("id"), str) and obj.get("type") in ("user", "gemini", "info", "error"):
            offset = messages[obj["id"]][0] if obj["id"] in messages else rec.offset
            messages[obj["id"]] = (offset, obj)
    for offset, message in messages.values():
        _message(builder, message, offset)
    builder.finish()
    return builder


def _message(builder: _Builder, message: dict[str, Any], offset: int) -> None:
    at = message.get("timestamp") if isinstance(message.get("timestamp"), str) else None
    content = message.get("content")
    kind = message.get("type")
    if kind == "user":
        parts = (
            content if isinstance(content, list) else [{"text": content}] if isinstance(content, str) else []
        )
        parts = [p for p in parts if isinstance(p, dict)]
        if any("functionResponse" in p for p in parts):
            return  # tool results; their outcome is on the gemini record's toolCalls
        text = "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str))
        source, text = source_of(text)
        if not text or (source == "meta" and text.startswith("<session_context>")):
            return
        builder.prompt(text, at, message["id"], offset, source=source)
    elif kind == "gemini":
        if isinstance(content, str):
            builder.say(content, at, offset)
        elif isinstance(content, list):
            text = "\n".join(
                p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
            builder.say(text, at, offset)
        calls = _items(message.get("toolCalls"))
        for call in calls:
            if not isinstance(call, dict):
                continue
            call_id = call.get("id") if isinstance(call.get("id"), str) else None
            builder.tool(
                call.get("name") if isinstance(call.get("name"), str) else None,
                call_id,
                offset,
                call.get("args"),
            )
            raw_status = call.get("status")
            status = _TOOL_STATUS.get(raw_status if isinstance(raw_status, str) else "")
            if status is not None:
                builder.result(call_id, error=status == "error", rejected=status == "rejected", offset=offset)
        builder.stop("stop", offset)
    elif kind == "error":
        builder.stop("error", offset, outcome="error")
