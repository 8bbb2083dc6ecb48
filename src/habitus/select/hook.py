"""Prior messages for a hook's prompt, read only when the prompt may be a follow-up ("yes, do that").

generic: the request's own `context` list. Pi: the event's `messages`. Claude Code, Codex and Gemini:
the tail of the session transcript (`transcript_path`): one read of at most TAIL_BYTES from its end,
never the whole file, and only for a prompt short enough to be a reply (`followup.may_be_reply`, in
any language). The agent's message keeps its end, where an offer ("Want me to write the commit
message too?") is; the user's keeps its start. Every message is bounded to MAX_CONTEXT_CHARS and
redacted before the judge reads it. Context is optional: when it cannot be read the prompt is judged
on its own, which can only select less, never more.
"""

from __future__ import annotations

import re
from typing import Any

from habitus.harness.events import HookEvent
from habitus.select import MAX_CONTEXT, MAX_CONTEXT_CHARS
from habitus.select.followup import may_be_reply

TAIL_BYTES = 64 * 1024


def context_of(event: HookEvent) -> list[str]:
    prompt = event.prompt or ""
    if event.harness == "generic":
        given = event.raw.get("context")
        if isinstance(given, list):
            return [m for m in given if isinstance(m, str)]
        return []
    if not may_be_reply(prompt):
        return []
    try:
        turns = _turns(event)
    except Exception:  # a missing, partial or unreadable transcript: judge the prompt alone
        return []
    if turns and turns[-1].user.strip() == prompt.strip() and not turns[-1].assistant.strip():
        turns = turns[:-1]  # the transcript already holds the current prompt
    messages: list[str] = []
    for turn in turns[-2:]:
        messages += [m for m in (_start(turn.user), _end(turn.assistant)) if m]
    return [_redacted(m) for m in messages[-MAX_CONTEXT:]]


def _start(text: str) -> str:
    return text.strip()[:MAX_CONTEXT_CHARS].strip()


def _end(text: str) -> str:
    """The message's last MAX_CONTEXT_CHARS characters, from a sentence start when one is near."""
    text = text.strip()
    if len(text) <= MAX_CONTEXT_CHARS:
        return text
    tail = text[-MAX_CONTEXT_CHARS:]
    cut = re.search(r"(?<=[.!?。！？\n])\s*", tail[: MAX_CONTEXT_CHARS // 2])
    return tail[cut.end() :].strip() if cut else tail.strip()


def _redacted(text: str) -> str:
    from habitus.redact import redact

    return redact(text)[0]


def _turns(event: HookEvent) -> list[Any]:
    from habitus.harness import transcripts

    if event.harness == "pi" and event.messages:
        return transcripts.turns_from_pi_messages(event.messages)
    if not event.transcript_path:
        return []
    # One window, never grown: a reply needs only the last exchange.
    return transcripts.read_tail(event.transcript_path, max_bytes=TAIL_BYTES, limit=TAIL_BYTES).turns
