"""Transcript readers: Claude Code, Pi, Codex and Gemini CLI session files, as turns.

    read_transcript(path, start_offset=0, max_bytes=..., format=None, hold_last=False) -> TranscriptChunk
    read_tail(path, max_bytes=..., limit=...) -> TranscriptChunk  the last part of a file (hooks)
    turns_from_pi_messages(messages) -> list[Turn]            a Pi extension's agent_end messages
    detect_format(path) -> "claude-code" | "pi" | "codex" | "gemini"

A `Turn` is one prompt and the agent's run that answered it: the prompt, the assistant's text (every
text block of the run, in order), timestamps, the tools used with their outcome (ok, error, refused by
the harness, or rejected by the user), the final stop reason, an `outcome`:

    complete     the run ended normally
    rejected     the user rejected a tool use (Claude Code "User rejected tool use"); kept: it is friction
    interrupted  the user interrupted the run ("[Request interrupted by user]"); kept: the prompt is theirs
    aborted      Pi stopReason "aborted", Codex turn_aborted; kept for the same reason
    error        an API error (Claude Code isApiErrorMessage, Pi stopReason "error", Codex error); kept:
                 the prompt is the user's, unless the user sent the same prompt again right after
    truncated    the model hit its output limit (max_tokens / "length"); kept like an error

and a `source`: who wrote the prompt. Only "user" is a human's words; the others are recorded as such so
that learning never reads them as the user's (see `provenance`):

    user  teammate  plan  command  meta  hook  tool  subagent

Formats, read from the real files in ../shared/fixtures/transcripts, from files the real clients wrote
(Claude Code 2.1.332, Codex CLI 0.171.0, Gemini CLI 0.61.0, Pi 1.6.0 and 0.73.1) and the published
sources, are described in each reader module: `claude_code`, `pi`, `codex`, `gemini`.

Bounded: at most `max_bytes` are read per call (callers page with `end_offset`); a line longer than
MAX_LINE_BYTES is skipped in pieces and counted, never held whole; a file with NUL bytes or invalid UTF-8
at the start is refused as binary; per-turn text is capped (the assistant keeps its tail). A trailing
line without its newline (the agent is still writing it) is left for the next read.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from habitus.errors import HabitusError
from habitus.harness.transcripts.claude_code import _CC_SKIP_TYPES, _claude_code
from habitus.harness.transcripts.codex import _codex
from habitus.harness.transcripts.core import (
    DEFAULT_MAX_BYTES,
    FAILED_OUTCOMES,
    FORMATS,
    MAX_ASSISTANT_CHARS,
    MAX_LINE_BYTES,
    MAX_TAIL_BYTES,
    MAX_TOOLS,
    MAX_USER_CHARS,
    SNIFF_BYTES,
    SOURCES,
    TAIL_BYTES,
    ToolUse,
    TranscriptChunk,
    Turn,
    _bad,
    _parse,
    _Rec,
    tool_detail,
)
from habitus.harness.transcripts.gemini import _gemini
from habitus.harness.transcripts.pi import _pi, turns_from_pi_messages
from habitus.state import files

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FAILED_OUTCOMES",
    "FORMATS",
    "MAX_ASSISTANT_CHARS",
    "MAX_LINE_BYTES",
    "MAX_TAIL_BYTES",
    "MAX_TOOLS",
    "MAX_USER_CHARS",
    "SOURCES",
    "TAIL_BYTES",
    "ToolUse",
    "TranscriptChunk",
    "Turn",
    "detect_format",
    "last_turn",
    "read_tail",
    "read_transcript",
    "tool_detail",
    "turns_from_pi_messages",
]

# -- reading lines --------------------------------------------------------------------------------


def _open(path: Path) -> tuple[Any, int]:
    try:
        handle, st = files.open_input(path)  # closed by the caller; a FIFO never blocks the hook
    except FileNotFoundError:
        raise HabitusError("not_found", f"{path}: no such transcript file") from None
    except HabitusError:
        raise _bad(path, "is not a regular file") from None
    except PermissionError:
        raise HabitusError("io_error", f"{path}: permission denied") from None
    return handle, st.st_size


def _lines(handle: Any, start: int, max_bytes: int, counter: list[int]) -> Iterator[tuple[int, bytes]]:
    """(offset, line) for complete lines from start, stopping at a line boundary after max_bytes.

    A line longer than MAX_LINE_BYTES is consumed in pieces and counted in counter[0], never yielded.
    The position after the last complete line consumed is kept in counter[1].
    """
    handle.seek(start)
    position = start
    counter[1] = start
    while position - start < max_bytes:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if not line.endswith(b"\n"):
            if len(line) <= MAX_LINE_BYTES:
                return  # an incomplete last line: the writer has not finished it
            while line and not line.endswith(b"\n"):  # skip an oversized line without holding it
                position += len(line)
                line = handle.readline(MAX_LINE_BYTES)
            if not line:
                return
            position += len(line)
            counter[0] += 1
            counter[1] = position
            continue
        yield position, line
        position += len(line)
        counter[1] = position


# -- format detection -----------------------------------------------------------------------------


def _classify(obj: dict[str, Any]) -> str | None:
    kind = obj.get("type")
    if "payload" in obj and kind in (
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
    ):
        return "codex"
    if (
        "parentUuid" in obj
        or (kind in ("user", "assistant") and "uuid" in obj)
        or kind in _CC_SKIP_TYPES - {"system"}
    ):
        return "claude-code"
    if isinstance(obj.get("sessionId"), str) and "projectHash" in obj and "startTime" in obj:
        return "gemini"
    if (
        kind in ("user", "gemini")
        and isinstance(obj.get("id"), str)
        and "content" in obj
        and "uuid" not in obj
    ):
        return "gemini"
    if kind == "session" and ("cwd" in obj or "version" in obj):
        return "pi"
    message = obj.get("message")
    if (
        kind == "message"
        and isinstance(message, dict)
        and message.get("role") in ("user", "assistant", "toolResult")
    ):
        return "pi"
    if kind == "message" and obj.get("role") in ("user", "assistant", "system"):
        return "codex"  # a legacy rollout: bare response items
    if "instructions" in obj and "id" in obj and "timestamp" in obj:
        return "codex"
    return None


def detect_format(path: Path | str) -> str:
    """Recognise a transcript from its first lines. Binary or unrecognised files are bad_transcript."""
    path = Path(path)
    handle, _ = _open(path)
    with handle:
        head = handle.read(SNIFF_BYTES)
    return _detect(path, head)


_PREFIXES = (
    (re.compile(rb'\A\s*\{\s*"(?:parentUuid|logicalParentUuid)"\s*:'), "claude-code"),
    (
        re.compile(rb'"type"\s*:\s*"(?:session_meta|response_item|event_msg|turn_context)"\s*,\s*"payload"'),
        "codex",
    ),
    (re.compile(rb'\A\s*\{\s*"type"\s*:\s*"(?:message|session)"\s*,\s*"id"\s*:'), "pi"),
    (re.compile(rb'\A\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"projectHash"'), "gemini"),
)


def _detect(path: Path, head: bytes) -> str:
    if b"\x00" in head:
        raise _bad(path, "is a binary file, not a JSONL transcript")
    lines = head.split(b"\n")
    # The last piece may be cut; when the first line is longer than the window (a pasted image), it
    # is all there is, and its beginning still says which format it is.
    cut = lines.pop() if len(head) == SNIFF_BYTES else None
    for raw in lines[:50]:
        if not raw.strip():
            continue
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _bad(path, "is not UTF-8 text") from None
        obj = _parse(raw)
        if obj is None:
            continue
        found = _classify(obj)
        if found:
            return found
    if cut and not any(line.strip() for line in lines):
        try:
            codecs.getincrementaldecoder("utf-8")().decode(cut, final=False)
        except UnicodeDecodeError:
            raise _bad(path, "is not UTF-8 text") from None
        for pattern, found in _PREFIXES:
            if pattern.search(cut[:4096]):
                return found
    raise _bad(
        path,
        "is not a recognised transcript (Claude Code, Pi, Codex or Gemini CLI JSONL)",
        hint="pass --format claude-code|pi|codex|gemini if you know what it is",
    )


# -- entry points -----------------------------------------------------------------------------------


def read_transcript(
    path: Path | str,
    *,
    start_offset: int = 0,
    max_bytes: int = DEFAULT_MAX_BYTES,
    format: str | None = None,
    hold_last: bool = False,
) -> TranscriptChunk:
    """Read the turns in [start_offset, about start_offset + max_bytes) of a transcript file.

    `end_offset` is where the next call should start: after the last complete line read, or, with
    hold_last, at the start of the last turn (which may still be growing) so that the next call reads
    it whole, unless it is the only turn and began at start_offset (so that paging always advances).
    A start_offset that is not at a line start is moved to the next line.
    """
    path = Path(path)
    if format is not None and format not in FORMATS:
        raise HabitusError("bad_request", "format: expected one of claude-code, pi, codex, gemini")
    handle, size = _open(path)
    with handle:
        head = handle.read(SNIFF_BYTES)
        fmt = format or _detect(path, head)
        if b"\x00" in head:
            raise _bad(path, "is a binary file, not a JSONL transcript")
        start = min(max(0, start_offset), size)
        if 0 < start < size:
            handle.seek(start - 1)
            if handle.read(1) != b"\n":
                handle.readline(MAX_LINE_BYTES)
                start = handle.tell()
        counter = [0, start]
        records: list[_Rec] = []
        parents: dict[str, str | None] = {}
        previous: str | None = None  # the last main-conversation record read (Claude Code)
        for offset, line in _lines(handle, start, max(1, max_bytes), counter):
            obj = _parse(line)
            if obj is None:
                if line.strip():
                    counter[0] += 1
                continue
            ident, parent = _links(fmt, obj)
            if fmt == "claude-code" and parent is None and obj.get("isCompactSummary"):
                # Claude Code 1.0 wrote a compaction's summary as a new root (no logicalParentUuid):
                # the conversation before it is the same session's, not an abandoned branch.
                parent = previous
            if ident is not None:
                parents[ident] = parent
                if fmt == "claude-code" and not obj.get("isSidechain"):
                    previous = ident
            if fmt == "claude-code" and obj.get("type") not in ("user", "assistant"):
                continue  # progress and bookkeeping: only their links matter
            records.append(_Rec(ident, offset, obj))
        end = counter[1]
    if fmt == "claude-code":
        builder = _claude_code(records, parents, whole=start == 0)
    elif fmt == "pi":
        builder = _pi(records, parents)
    elif fmt == "gemini":
        builder = _gemini(records)
    else:
        builder = _codex(records)
    turns = builder.turns
    if hold_last and turns and end < size and not (len(turns) == 1 and turns[0].offset <= start):
        end = turns[-1].offset
        turns = turns[:-1]
    return TranscriptChunk(
        format=fmt,
        turns=turns,
        end_offset=end,
        eof=end >= size,
        session_id=builder.session_id,
        skipped_lines=counter[0],
    )


def _links(fmt: str, obj: dict[str, Any]) -> tuple[str | None, str | None]:
    if fmt == "claude-code":
        ident = obj.get("uuid") if isinstance(obj.get("uuid"), str) else None
        parent = obj.get("parentUuid")
        if parent is None:
            parent = obj.get("logicalParentUuid")
        return ident, parent if isinstance(parent, str) else None
    if fmt == "pi":
        ident = obj.get("id") if isinstance(obj.get("id"), str) and obj.get("type") != "session" else None
        parent = obj.get("parentId")
        return ident, parent if isinstance(parent, str) else None
    return None, None


def read_tail(
    path: Path | str,
    *,
    max_bytes: int = TAIL_BYTES,
    format: str | None = None,
    limit: int = MAX_TAIL_BYTES,
    turns: int = 1,
) -> TranscriptChunk:
    """The turns at the end of a transcript, reading at most max_bytes (doubling, up to `limit`, while
    the window holds fewer than `turns` turns or the last turn's prompt lies before it)."""
    path = Path(path)
    handle, size = _open(path)
    handle.close()
    window = max(1, max_bytes)
    while True:
        chunk = read_transcript(path, start_offset=max(0, size - window), max_bytes=window, format=format)
        complete = len(chunk.turns) >= turns and not chunk.turns[-1].continued
        if complete or window >= size or window >= limit:
            return chunk
        window = min(window * 2, limit)


# A Claude Code turn is read from its own records (the session id is on each, links run backwards), so a
# window that also holds the turn before it gives the same last turn as a larger one (a window starting
# between a slash command and its expansion would not: hence the turn before). Real sessions run to
# megabytes, and 4 MiB of JSON cost a Stop hook 16-24 ms where 256 KiB costs 1-2 (docs/speed.md). Codex
# and Gemini files carry the session id, rewinds and updates in earlier records: read as before.
FIRST_WINDOW = {"claude-code": 256 * 1024}


def last_turn(path: Path | str, *, format: str | None = None) -> tuple[Turn | None, TranscriptChunk]:
    """The last turn of a transcript (None when it holds none), and the chunk it came from."""
    window = FIRST_WINDOW.get(format or "")
    if window is not None:
        chunk = read_tail(path, max_bytes=window, format=format, turns=2)
    else:
        chunk = read_tail(path, format=format)
    return (chunk.turns[-1] if chunk.turns else None), chunk
