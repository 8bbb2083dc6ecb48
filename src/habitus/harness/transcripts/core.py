"""Shared pieces of the transcript readers: turns, tool uses, the turn builder, JSON and block helpers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from habitus.errors import HabitusError

FORMATS = ("claude-code", "pi", "codex", "gemini")
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
TAIL_BYTES = 4 * 1024 * 1024
MAX_TAIL_BYTES = 32 * 1024 * 1024
MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_USER_CHARS = 64 * 1024
MAX_ASSISTANT_CHARS = 128 * 1024
MAX_TOOLS = 200
SNIFF_BYTES = 64 * 1024
# Runs that ended early: kept even without an answer, because the prompt is the user's words (a
# correction often comes right before or after an abort, and an API error does not unsay it).
STOPPED_OUTCOMES = ("interrupted", "aborted", "error", "truncated")
# Runs that failed on the harness's side: when the user sends the prompt again, the retry carries the
# words and the failed run is not stored a second time.
FAILED_OUTCOMES = ("error", "truncated")
# Who wrote a turn's prompt. Only "user" is a human's own words.
SOURCES = ("user", "teammate", "plan", "command", "meta", "hook", "tool", "subagent")


@dataclass
class ToolUse:
    name: str | None
    status: str = "ok"  # ok | error | refused (the harness did not run it) | rejected (by the user)
    detail: str | None = None  # a bounded, unredacted summary of the input (command, path, ...)


MAX_DETAIL_CHARS = 600
_DETAIL_KEYS = (
    "command",
    "cmd",
    "file_path",
    "path",
    "notebook_path",
    "pattern",
    "url",
    "query",
    "description",
)
_CONTENT_KEYS = ("new_string", "newText", "content", "new_source", "patch", "input")


def tool_detail(arguments: Any) -> str | None:
    """What a tool call was asked to do, in at most MAX_DETAIL_CHARS: its command, path, pattern or URL,
    then the head of any text it writes. Not redacted: callers redact before storing or sending it."""
    if isinstance(arguments, str):
        parsed = _parse(arguments.encode("utf-8", "replace")) if arguments.lstrip().startswith("{") else None
        arguments = parsed if parsed is not None else arguments
    if isinstance(arguments, str):
        return arguments[:MAX_DETAIL_CHARS] or None
    if not isinstance(arguments, dict):
        return None
    if isinstance(arguments.get("action"), dict):  # Codex local_shell_call
        arguments = arguments["action"]
    parts: list[str] = []
    for key in (*_DETAIL_KEYS, *_CONTENT_KEYS):
        value = arguments.get(key)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = " ".join(value)
        if isinstance(value, str) and value.strip():
            parts.append(value.strip())
    text = "\n".join(parts)
    if len(text) > MAX_DETAIL_CHARS:
        text = text[:MAX_DETAIL_CHARS] + " …"
    return text or None


@dataclass
class Turn:
    user: str
    assistant: str = ""
    user_at: str | None = None
    assistant_at: str | None = None
    stop_reason: str | None = None
    outcome: str = "complete"
    tools: list[ToolUse] = field(default_factory=list)
    key: str | None = None  # a stable id of the prompt (Claude Code uuid, Pi id/timestamp, Codex timestamp)
    session_id: str | None = None
    offset: int = 0  # byte offset of the line that started the turn
    continued: bool = False  # the read started inside this turn: its prompt was not seen
    assistant_truncated: bool = False
    source: str = "user"  # who wrote the prompt: one of SOURCES
    resent: bool = False  # a failed run whose prompt the user sent again as the next turn

    @property
    def kept(self) -> bool:
        """Whether capture stores this turn: a prompt was seen, the agent did something (said something
        or used a tool; a local command such as /mcp does neither) or the run ended early, and the
        prompt was not sent again right after a failed run."""
        return (
            bool(self.user.strip())
            and not self.continued
            and not self.resent
            and (bool(self.assistant.strip() or self.tools) or self.outcome in STOPPED_OUTCOMES)
        )


@dataclass
class TranscriptChunk:
    """What one bounded read produced. Unpacks as `(turns, end_offset)`."""

    format: str
    turns: list[Turn]
    end_offset: int
    eof: bool
    session_id: str | None = None
    skipped_lines: int = 0

    def __iter__(self) -> Iterator[Any]:
        return iter((self.turns, self.end_offset))


def _bad(path: Path | str, message: str, hint: str | None = None) -> HabitusError:
    return HabitusError("bad_transcript", f"{path}: {message}", hint=hint)


def _parse(line: bytes) -> dict[str, Any] | None:
    if not line.strip():
        return None
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


# -- turn assembly --------------------------------------------------------------------------------


def _resends(text: str, failed: str) -> bool:
    """Whether a prompt sends a failed run's prompt again: the same words, maybe with more around them
    ("run the tests" -> "run the tests again")."""
    failed = " ".join(failed.split()).casefold()
    return bool(failed) and failed in " ".join(text.split()).casefold()


class _Builder:
    """Turns out of a stream of prompt / assistant / tool / outcome events."""

    def __init__(self, session_id: str | None = None) -> None:
        self.turns: list[Turn] = []
        self.current: Turn | None = None
        self.session_id = session_id
        self.tool_ids: dict[str, ToolUse] = {}
        self.forced_source: str | None = None  # every prompt's source (a subagent's transcript)

    def prompt(self, text: str, at: str | None, key: str | None, offset: int, source: str = "user") -> None:
        self.finish()
        last = self.turns[-1] if self.turns else None
        if last is not None and last.outcome in FAILED_OUTCOMES and _resends(text, last.user):
            last.resent = True
        if len(text) > MAX_USER_CHARS:
            text = text[:MAX_USER_CHARS] + "\n[habitus: rest of the prompt truncated]"
        self.current = Turn(
            user=text, user_at=at, key=key, session_id=self.session_id, offset=offset, source=source
        )
        self.tool_ids = {}

    def _turn(self, offset: int) -> Turn:
        if self.current is None:
            self.current = Turn(user="", continued=True, session_id=self.session_id, offset=offset)
        return self.current

    def say(self, text: str, at: str | None, offset: int, *, once: bool = False) -> None:
        """Add the agent's text; with `once`, not when the turn's text already ends with it (a format that
        records the same message twice)."""
        if not text.strip():
            return
        turn = self._turn(offset)
        if once and turn.assistant.rstrip().endswith(text.strip()):
            return
        turn.assistant = f"{turn.assistant}\n\n{text}" if turn.assistant else text
        if len(turn.assistant) > MAX_ASSISTANT_CHARS:
            turn.assistant = turn.assistant[-MAX_ASSISTANT_CHARS:]
            turn.assistant_truncated = True
        turn.assistant_at = at or turn.assistant_at

    def tool(self, name: str | None, call_id: str | None, offset: int, arguments: Any = None) -> None:
        turn = self._turn(offset)
        if len(turn.tools) >= MAX_TOOLS:
            return
        use = ToolUse(name, detail=tool_detail(arguments))
        turn.tools.append(use)
        if call_id:
            self.tool_ids[call_id] = use

    def result(
        self, call_id: str | None, *, error: bool, rejected: bool, offset: int, refused: bool = False
    ) -> None:
        turn = self._turn(offset)
        use = self.tool_ids.get(call_id or "")
        if use is None:
            if len(turn.tools) >= MAX_TOOLS:
                return
            use = ToolUse(None)
            turn.tools.append(use)
        use.status = (
            "rejected" if rejected else ("refused" if refused else ("error" if error else use.status))
        )
        if rejected:
            turn.outcome = "rejected"

    def stop(self, reason: str | None, offset: int, *, outcome: str | None = None) -> None:
        turn = self._turn(offset)
        if reason is not None:
            turn.stop_reason = reason
        if outcome is not None and not (outcome == "interrupted" and turn.outcome == "rejected"):
            turn.outcome = outcome

    def finish(self) -> None:
        if self.current is not None:
            self.turns.append(self.current)
            self.current = None


# -- Claude Code ----------------------------------------------------------------------------------


def _mapping(value: Any) -> dict[str, Any]:
    """A JSON field that should be an object: itself, or {} when it is anything else."""
    return value if isinstance(value, dict) else {}


def _items(value: Any) -> list[Any]:
    """A JSON field that should be an array: itself, or [] when it is anything else."""
    return value if isinstance(value, list) else []


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in _blocks(content):
        if block.get("type") in ("text", "input_text", "output_text") and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(parts)


@dataclass
class _Rec:
    uuid: str | None
    offset: int
    obj: dict[str, Any]


def _chain(leaf: str | None, parents: dict[str, str | None], *, bridge: bool = False) -> set[str]:
    """The records from `leaf` back to its root. With `bridge` (a whole file was read), a link to a
    record the file does not hold continues from the record before it in the file: a copy that lost a
    record (an excerpt that dropped a progress line) would otherwise cut the conversation there and
    read everything before the gap as an abandoned branch. `parents` is in file order."""
    order = list(parents) if bridge else []
    position = {ident: i for i, ident in enumerate(order)}
    chain: set[str] = set()
    node = leaf
    while node is not None and node not in chain and node in parents:
        chain.add(node)
        parent = parents[node]
        if bridge and parent is not None and parent not in parents:
            at = position[node]
            parent = order[at - 1] if at > 0 else None
        node = parent
    return chain


def _ms(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    from habitus.harness.events import iso_from_epoch

    return iso_from_epoch(value / 1000)
