"""Prior messages for a hook's prompt, read only when the prompt may be a follow-up ("yes, do that").

generic: the request's own `context` list. Pi: the event's `messages`. Claude Code, Codex and Gemini:
the tail of the session transcript (`transcript_path`). Context is optional: when it cannot be read the
prompt is judged on its own, which can only select less, never more.
"""

from __future__ import annotations

from typing import Any

from habitus.harness.events import HookEvent
from habitus.select import MAX_CONTEXT
from habitus.select.text import needs_context

TAIL_BYTES = 64 * 1024


def context_of(event: HookEvent) -> list[str]:
    prompt = event.prompt or ""
    if event.harness == "generic":
        given = event.raw.get("context")
        if isinstance(given, list):
            return [m for m in given if isinstance(m, str)]
        return []
    if not needs_context(prompt):
        return []
    try:
        turns = _turns(event)
    except Exception:  # a missing, partial or unreadable transcript: judge the prompt alone
        return []
    if turns and turns[-1].user.strip() == prompt.strip() and not turns[-1].assistant.strip():
        turns = turns[:-1]  # the transcript already holds the current prompt
    messages: list[str] = []
    for turn in turns[-2:]:
        messages += [m for m in (turn.user, turn.assistant) if m and m.strip()]
    return messages[-MAX_CONTEXT:]


def _turns(event: HookEvent) -> list[Any]:
    from habitus.harness import transcripts

    if event.harness == "pi" and event.messages:
        return transcripts.turns_from_pi_messages(event.messages)
    if not event.transcript_path:
        return []
    return transcripts.read_tail(event.transcript_path, max_bytes=TAIL_BYTES).turns
