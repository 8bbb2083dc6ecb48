"""Codex CLI rollout JSONL (`CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`; checked against 0.171.0).

`{"timestamp", "type", "payload"}` lines: `session_meta`, `turn_context`, `event_msg` and
`response_item`. The prompt and the answers appear twice, once as an event and once as the model's
input/output item, and every reader keeps one of each:

- 0.171: `event_msg` `item_completed` with `item.type` `UserMessage` / `AgentMessage` (text in
  `item.content[].text`) / `HookPrompt` (a Stop hook's continuation: `item.fragments[].text`), each with
  the `turn_id` that Codex's hooks and `notify` name too (the turn's key, so a hook capture, a notify
  capture and a later import agree); `response_item` `message` of role user / assistant / developer,
  with `internal_chat_message_metadata_passthrough.turn_id` and a provenance (`user`, or `harness` for
  `<hook_prompt …>` continuations); `function_call` / `function_call_output` (its text says "Process
  exited with code N").
- before 0.171: `event_msg` `user_message` / `agent_message` / `task_complete` / `turn_aborted` /
  `error`, `response_item` items as above, keyed by timestamp.
- before 2025-09: bare response items (no `payload`), read too.

Injected context (`<environment_context>`, `<user_instructions>`, AGENTS.md) starts no turn. A Stop
hook's `<hook_prompt>` starts a "hook" turn inside the same Codex turn: the answer after the block is
stored as that turn's, so the user's turn keeps the pre-block answer and the final one follows it.
"""

from __future__ import annotations

import re
from typing import Any

from habitus.harness.provenance import source_of
from habitus.harness.transcripts.core import _block_text, _Builder, _mapping, _parse, _Rec

_CODEX_NOT_PROMPTS = ("<environment_context>", "<user_instructions>", "<user_shell_command>", "# AGENTS.md")
_HOOK_PROMPT = re.compile(r"<hook_prompt\b[^>]*>(.*?)</hook_prompt>", re.S)
_EXIT = re.compile(r"(?:Process exited with code|Exit code:?)\s*(-?\d+)")


def _codex(records: list[_Rec]) -> _Builder:
    builder = _Builder()
    wrapped = any("payload" in r.obj for r in records)
    for rec in records:
        obj = rec.obj
        if wrapped:
            payload = _mapping(obj.get("payload"))
            at = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
            kind = obj.get("type")
            if kind == "session_meta" and isinstance(payload.get("id"), str):
                builder.session_id = payload["id"]
                if builder.current is not None:
                    builder.current.session_id = builder.session_id
            elif kind == "event_msg":
                _codex_event(builder, payload, at, rec.offset)
            elif kind == "response_item":
                _codex_item(builder, payload, at, rec.offset)
        else:
            if "instructions" in obj and "id" in obj and isinstance(obj.get("id"), str):
                builder.session_id = obj["id"]
                continue
            _codex_legacy(builder, obj, rec.offset)
    builder.finish()
    return builder


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _prompt(builder: _Builder, text: str, at: str | None, key: str | None, offset: int, source: str) -> None:
    """Start a turn, unless this is the second record of the prompt the current turn already holds."""
    text = text.strip()
    if not text or text.startswith(_CODEX_NOT_PROMPTS):
        return
    current = builder.current
    if current is not None and current.user == text and not current.assistant and not current.tools:
        if key and (current.key is None or current.key == current.user_at):
            current.key = key  # the event names the Codex turn; the item may only have a time
        return
    builder.prompt(text, at, key, offset, source=source)


def _codex_event(builder: _Builder, payload: dict[str, Any], at: str | None, offset: int) -> None:
    kind = payload.get("type")
    message = _str(payload.get("message")) or ""
    turn_id = _str(payload.get("turn_id"))
    if kind == "user_message":
        source, text = source_of(message)
        _prompt(builder, text, at, turn_id or at, offset, source)
    elif kind == "agent_message":
        builder.say(message, at, offset, once=True)
    elif kind == "item_completed" and isinstance(payload.get("item"), dict):
        item = payload["item"]
        what = item.get("type")
        if what == "UserMessage":
            source, text = source_of(_block_text(item.get("content")))
            _prompt(builder, text, at, turn_id or at, offset, source)
        elif what == "HookPrompt":
            fragments = item.get("fragments") if isinstance(item.get("fragments"), list) else []
            text = "\n".join(
                f["text"] for f in fragments if isinstance(f, dict) and isinstance(f.get("text"), str)
            )
            key = f"{turn_id}:{item.get('id')}" if turn_id else None
            _prompt(builder, text, at, key, offset, "hook")
        elif what == "AgentMessage":
            builder.say(_item_text(item.get("content")), at, offset, once=True)
    elif kind in ("task_complete", "turn_complete"):
        last = payload.get("last_agent_message")
        if builder.current is not None and not builder.current.assistant and isinstance(last, str):
            builder.say(last, at, offset)
        builder.stop("task_complete", offset)
    elif kind == "turn_aborted":
        reason = _str(payload.get("reason")) or "aborted"
        builder.stop(reason, offset, outcome="aborted")
    elif kind in ("error", "stream_error"):
        builder.stop("error", offset, outcome="error")


def _item_text(content: Any) -> str:
    """Text of 0.171 item content: [{"type": "Text" | "text", "text": ...}]."""
    if not isinstance(content, list):
        return _block_text(content)
    return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))


def _codex_item(builder: _Builder, payload: dict[str, Any], at: str | None, offset: int) -> None:
    if payload.get("type") != "message":
        _codex_tool(builder, payload, offset)
        return
    text = _block_text(payload.get("content")).strip()
    role = payload.get("role")
    if role == "assistant":
        builder.say(text, at, offset, once=True)
        return
    if role != "user":
        return  # developer / system instructions
    meta = payload.get("internal_chat_message_metadata_passthrough")
    meta = meta if isinstance(meta, dict) else {}
    turn_id = _str(meta.get("turn_id"))
    hook = _HOOK_PROMPT.search(text)
    if hook is not None or _harness_authored(meta):
        body = hook.group(1).strip() if hook is not None else text
        key = f"{turn_id}:{payload.get('id')}" if turn_id else None
        _prompt(builder, body, at, key, offset, "hook")
        return
    source, text = source_of(text)
    _prompt(builder, text, at, turn_id or at, offset, source)


def _harness_authored(meta: dict[str, Any]) -> bool:
    items = meta.get("content_item_metadata")
    if not isinstance(items, list):
        return False
    kinds = {
        i["provenance"].get("type")
        for i in items
        if isinstance(i, dict) and isinstance(i.get("provenance"), dict)
    }
    return bool(kinds) and "user" not in kinds


def _codex_tool(builder: _Builder, payload: dict[str, Any], offset: int) -> None:
    kind = payload.get("type")
    call_id = _str(payload.get("call_id"))
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        name = _str(payload.get("name")) or kind
        arguments = payload.get("arguments", payload.get("input", payload.get("action")))
        if kind == "local_shell_call":
            arguments = payload
        builder.tool(name, call_id, offset, arguments)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        output = payload.get("output")
        error = False
        if isinstance(output, str) and output.startswith("{"):
            parsed = _parse(output.encode("utf-8", "replace"))
            metadata = parsed.get("metadata") if parsed else None
            if isinstance(metadata, dict) and isinstance(metadata.get("exit_code"), int):
                error = metadata["exit_code"] != 0
        elif isinstance(output, str):
            found = _EXIT.search(output[:2000])
            error = found is not None and found.group(1) != "0"
        elif isinstance(output, dict) and output.get("success") is False:
            error = True
        builder.result(call_id, error=error, rejected=False, offset=offset)


def _codex_legacy(builder: _Builder, obj: dict[str, Any], offset: int) -> None:
    kind = obj.get("type")
    if kind == "message":
        text = _block_text(obj.get("content")).strip()
        if obj.get("role") == "user":
            source, text = source_of(text)
            _prompt(builder, text, None, None, offset, source)
        elif obj.get("role") == "assistant":
            builder.say(text, None, offset)
    else:
        _codex_tool(builder, obj, offset)
