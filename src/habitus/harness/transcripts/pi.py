"""Pi session JSONL and a Pi extension's agent_end messages (checked against Pi 1.6.0 and 0.73.1).

badlogic/pi-mono docs/session.md: a `session` header, then `message` entries whose `message` has `role`
user / assistant / toolResult (1.6 also writes system, custom, bashExecution, branchSummary and
compactionSummary messages, and `model_change`, `thinking_level_change`, `context_edit` entries: none
is the user's prompt) and, for assistants, `stopReason` (stop, toolUse, length, error, aborted). Newer
files link entries with `id`/`parentId`: then only the active branch counts. An automatically retried
provider error is one turn: the retry's answer completes the prompt the failed attempt carried. An
aborted run keeps its prompt (outcome "aborted").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from habitus.harness.provenance import source_of
from habitus.harness.transcripts.core import Turn, _block_text, _blocks, _Builder, _chain, _ms, _Rec


def _pi_entry(builder: _Builder, entry: dict[str, Any], offset: int) -> None:
    message = entry.get("message")
    if entry.get("type") != "message" or not isinstance(message, dict):
        return
    role = message.get("role")
    at = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else _ms(message.get("timestamp"))
    if role == "user":
        source, text = source_of(_block_text(message.get("content")))
        if text:
            # The message's own timestamp is the key: the extension's agent_end messages carry it too,
            # so a hook capture and a later import of the session file agree.
            stamp = message.get("timestamp")
            key = str(int(stamp)) if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else None
            if key is None and isinstance(entry.get("id"), str):
                key = entry["id"]
            builder.prompt(text, at, key, offset, source=source)
    elif role == "assistant":
        for block in _blocks(message.get("content")):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                builder.say(block["text"], at, offset)
            elif block.get("type") == "toolCall":
                builder.tool(
                    block.get("name") if isinstance(block.get("name"), str) else None,
                    block.get("id"),
                    offset,
                    block.get("arguments"),
                )
        reason = message.get("stopReason") if isinstance(message.get("stopReason"), str) else None
        outcome = {"error": "error", "aborted": "aborted", "length": "truncated"}.get(reason or "")
        if outcome is None and reason is not None:
            outcome = (
                "complete" if builder.current is not None and builder.current.outcome != "rejected" else None
            )
        builder.stop(reason, offset, outcome=outcome)
    elif role == "toolResult":
        call_id = message.get("toolCallId") if isinstance(message.get("toolCallId"), str) else None
        builder.result(call_id, error=bool(message.get("isError")), rejected=False, offset=offset)


def _pi(records: list[_Rec], parents: dict[str, str | None]) -> _Builder:
    builder = _Builder()
    for rec in records:
        if rec.obj.get("type") == "session" and isinstance(rec.obj.get("id"), str):
            builder.session_id = rec.obj["id"]
    entries = [r for r in records if r.obj.get("type") == "message"]
    active = _chain(entries[-1].uuid, parents) if entries and entries[-1].uuid else set()
    for rec in entries:
        if active and rec.uuid is not None and rec.uuid not in active:
            continue
        _pi_entry(builder, rec.obj, rec.offset)
    builder.finish()
    return builder


def turns_from_pi_messages(messages: Iterable[Any], *, session_id: str | None = None) -> list[Turn]:
    """Turns out of the `messages` of a Pi `agent_end` event (the same objects a session file holds)."""
    builder = _Builder(session_id)
    for message in messages:
        if isinstance(message, dict):
            _pi_entry(builder, {"type": "message", "message": message}, 0)
    builder.finish()
    return builder.turns
