"""`memory observe --transcript`: the next bounded chunk of a transcript file, from a byte watermark.

A transcript (Claude Code, Codex or Pi JSONL) is read with habitus.harness.transcripts from the stream's
watermark, a byte offset, so each run reads only what was appended since the last one. Each turn becomes
messages (see `turn_messages`); whole turns are taken while their text fits the chunk, and the rest of
the observing (redaction, the observer, invariants, duplicates, the watermark) is habitus.memory.observe's.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from habitus.errors import HabitusError
from habitus.memory import records
from habitus.memory.observe import (
    REJECTED,
    Message,
    Observer,
    RuleObserver,
    check_stream,
    check_unit,
    observe_chunk,
    stream_name,
    watermark_row,
)
from habitus.memory.stores import MemoryStore
from habitus.state.clock import utc_now

TRANSCRIPT_WINDOW_FACTOR = 16  # JSONL carries tool output and bookkeeping: read 16 bytes per message char
MIN_TRANSCRIPT_WINDOW = 1024 * 1024


def iso(value: str | None, fallback: str) -> str:
    """value as habitus's timestamp form (ISO-8601 UTC with milliseconds), or fallback."""
    if value and records.TIMESTAMP_RE.match(value):
        return value
    if value:
        import datetime

        try:
            moment = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return fallback
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=datetime.UTC)
        moment = moment.astimezone(datetime.UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return fallback


def turn_messages(turn: Any, *, now: str) -> list[Message]:
    """The messages of one transcript turn, all at the byte offset where the turn starts: the prompt,
    the agent's text, and each tool use that failed or that the user rejected."""
    user_at = iso(turn.user_at, now)
    at = iso(turn.assistant_at, user_at)
    out = []
    if turn.user.strip() and not turn.continued:
        out.append(Message(turn.offset, "user", turn.user, user_at))
    if turn.assistant.strip():
        out.append(Message(turn.offset, "assistant", turn.assistant, at))
    for use in turn.tools:
        if use.status != "ok":
            body = REJECTED if use.status == "rejected" else "the call failed"
            out.append(Message(turn.offset, "tool", body, at, (use.name or "tool")[:64], True))
    return out


def _fit(messages: list[Message], chunk_chars: int) -> list[Message]:
    """One turn's messages cut to chunk_chars in all: prompts keep their head, the agent its tail."""
    out: list[Message] = []
    left = chunk_chars
    for message in messages:
        share = max(0, left // max(1, len(messages) - len(out)))
        body = message.text
        if len(body) > share:
            body = body[:share] if message.role == "user" else body[len(body) - share :]
        left -= len(body)
        out.append(replace(message, text=body))
    return out


def observe_transcript(
    store: MemoryStore,
    path: Path,
    *,
    stream: str | None = None,
    format: str | None = None,
    chunk_chars: int,
    observer: Observer | None = None,
    known_chars: int = 0,
    now: str | None = None,
) -> dict[str, Any]:
    """Observe the next bounded chunk of a transcript file, from the stream's byte watermark.

    The stream defaults to the file name without its extension (a Claude Code session file is named by
    its session id). Whole turns are taken while their text fits chunk_chars (at least one turn, cut to
    fit); the watermark moves to the start of the first turn left out, or to the end of what was read.
    A file now shorter than the watermark was replaced or truncated: refused (`stale`).
    """
    from habitus.harness.transcripts import read_transcript

    now = now or utc_now()
    path = Path(path)
    stream = check_stream(stream if stream is not None else stream_name(path.stem))
    observer = observer or RuleObserver()
    before, unit = watermark_row(store, "observe", stream)
    check_unit(stream, unit, "byte")
    result: dict[str, Any] = {"store": store.name, "stream": stream, "observer": observer.name}
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise HabitusError("not_found", f"{path}: no such transcript file") from None
    if size < before:
        raise HabitusError(
            "stale",
            f"{path}: the file is shorter than what stream {stream} already observed (replaced or truncated?)",
            hint="observe it under a new --stream",
        )
    window = max(MIN_TRANSCRIPT_WINDOW, chunk_chars * TRANSCRIPT_WINDOW_FACTOR)
    part = read_transcript(path, start_offset=before, max_bytes=window, format=format)
    chunk: list[Message] = []
    after = part.end_offset
    for index, turn in enumerate(part.turns):
        messages = turn_messages(turn, now=now)
        used = sum(len(m.text) for m in chunk)
        if index and used + sum(len(m.text) for m in messages) > chunk_chars:
            after = turn.offset
            break
        chunk += messages if index else _fit(messages, chunk_chars)
    result["format"] = part.format
    if after <= before:  # nothing complete to read yet (the agent is still writing a line)
        return {**result, "observed": 0, "duplicates": 0, "dropped_sensitive": 0, "dropped_instruction": 0, "items": [],
                "watermark": {"before": before, "after": before}, "unit": "byte", "remaining": size - before}  # fmt: skip
    done = observe_chunk(
        store, stream, chunk, before=before, after=after, unit="byte",
        observer=observer, known_chars=known_chars, now=now,
    )  # fmt: skip
    return {**result, **done, "remaining": max(0, size - after)}
