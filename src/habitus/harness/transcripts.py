"""Transcript readers: Claude Code session JSONL, Pi session JSONL and Codex rollout JSONL, as turns.

    read_transcript(path, start_offset=0, max_bytes=..., format=None, hold_last=False) -> TranscriptChunk
    read_tail(path, max_bytes=...) -> TranscriptChunk        the last part of a file (hooks)
    turns_from_pi_messages(messages) -> list[Turn]            a Pi extension's agent_end messages
    detect_format(path) -> "claude-code" | "pi" | "codex"

A `Turn` is one user prompt and the agent's run that answered it: the prompt, the assistant's text
(every text block of the run, in order), timestamps, the tools used with their outcome (ok, error, or
rejected by the user), the final stop reason, and an `outcome`:

    complete     the run ended normally
    rejected     the user rejected a tool use (Claude Code "User rejected tool use"); kept: it is friction
    interrupted  the user interrupted the run ("[Request interrupted by user]")
    aborted      Pi stopReason "aborted", Codex turn_aborted
    error        an API error (Claude Code isApiErrorMessage, Pi stopReason "error", Codex error)
    truncated    the model hit its output limit (max_tokens / "length")

Formats, as read from the real files in ../shared/fixtures/transcripts and the published sources:

- Claude Code: one record per line, linked by `uuid`/`parentUuid` (a compaction boundary links through
  `logicalParentUuid`); one content block per record; tool results arrive as `user` records holding a
  `tool_result` block (`toolUseResult: "User rejected tool use"` when rejected); `progress`,
  `file-history-snapshot`, `queue-operation` and `system` records carry no conversation; `isMeta` and
  `isCompactSummary` user records are not the human. Only the active branch counts: the chain from the
  last record back to the root, plus tool results hanging off it (parallel tool calls); a branch left
  by rewinding a prompt, and sidechain (subagent) records, are ignored.
- Pi (badlogic/pi-mono docs/session.md): a `session` header, then `message` entries whose `message` has
  `role` user / assistant / toolResult and, for assistants, `stopReason` (stop, toolUse, length,
  error, aborted). Newer files link entries with `id`/`parentId`: then only the active branch counts.
- Codex rollouts: `{"timestamp", "type", "payload"}` lines (`session_meta`, `event_msg` with
  user_message / agent_message / task_complete / turn_aborted / error, `response_item` with
  function_call(_output)); older rollouts hold bare response items, which are read too.

Bounded: at most `max_bytes` are read per call (callers page with `end_offset`); a line longer than
MAX_LINE_BYTES is skipped in pieces and counted, never held whole; a file with NUL bytes or invalid UTF-8
at the start is refused as binary; per-turn text is capped (the assistant keeps its tail). A trailing
line without its newline (the agent is still writing it) is left for the next read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from habitus.errors import HabitusError
from habitus.state import files

FORMATS = ("claude-code", "pi", "codex")
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
TAIL_BYTES = 4 * 1024 * 1024
MAX_TAIL_BYTES = 32 * 1024 * 1024
MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_USER_CHARS = 64 * 1024
MAX_ASSISTANT_CHARS = 128 * 1024
MAX_TOOLS = 200
SNIFF_BYTES = 64 * 1024
DROPPED_OUTCOMES = ("interrupted", "aborted", "error", "truncated")

_CC_SKIP_TYPES = {"progress", "file-history-snapshot", "queue-operation", "summary", "system"}
_CC_NOT_PROMPTS = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<task-notification>",
    "<system-reminder>",
    "<bash-stdout>",
    "<bash-stderr>",
)
_CODEX_NOT_PROMPTS = ("<environment_context>", "<user_instructions>", "<user_shell_command>", "# AGENTS.md")
_REJECTED_PREFIX = "The user doesn't want to proceed with this tool use"


@dataclass
class ToolUse:
    name: str | None
    status: str = "ok"  # ok | error | rejected
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

    @property
    def kept(self) -> bool:
        """Whether capture stores this turn: a prompt was seen, the agent did something (said something
        or used a tool; a local command such as /mcp does neither), and the run was not dropped."""
        return (
            bool(self.user.strip())
            and not self.continued
            and bool(self.assistant.strip() or self.tools)
            and self.outcome not in DROPPED_OUTCOMES
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


def _parse(line: bytes) -> dict[str, Any] | None:
    if not line.strip():
        return None
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


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


def _detect(path: Path, head: bytes) -> str:
    if b"\x00" in head:
        raise _bad(path, "is a binary file, not a JSONL transcript")
    lines = head.split(b"\n")
    if len(head) == SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last piece may be cut
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
    raise _bad(
        path,
        "is not a recognised transcript (Claude Code, Pi or Codex JSONL)",
        hint="pass --format claude-code|pi|codex if you know what it is",
    )


# -- turn assembly --------------------------------------------------------------------------------


class _Builder:
    """Turns out of a stream of prompt / assistant / tool / outcome events."""

    def __init__(self, session_id: str | None = None) -> None:
        self.turns: list[Turn] = []
        self.current: Turn | None = None
        self.session_id = session_id
        self.tool_ids: dict[str, ToolUse] = {}

    def prompt(self, text: str, at: str | None, key: str | None, offset: int) -> None:
        self.finish()
        if len(text) > MAX_USER_CHARS:
            text = text[:MAX_USER_CHARS] + "\n[habitus: rest of the prompt truncated]"
        self.current = Turn(user=text, user_at=at, key=key, session_id=self.session_id, offset=offset)
        self.tool_ids = {}

    def _turn(self, offset: int) -> Turn:
        if self.current is None:
            self.current = Turn(user="", continued=True, session_id=self.session_id, offset=offset)
        return self.current

    def say(self, text: str, at: str | None, offset: int) -> None:
        if not text.strip():
            return
        turn = self._turn(offset)
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

    def result(self, call_id: str | None, *, error: bool, rejected: bool, offset: int) -> None:
        turn = self._turn(offset)
        use = self.tool_ids.get(call_id or "")
        if use is None:
            if len(turn.tools) >= MAX_TOOLS:
                return
            use = ToolUse(None)
            turn.tools.append(use)
        use.status = "rejected" if rejected else ("error" if error else use.status)
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


def _slash_command(text: str) -> str:
    """`<command-name>/x</command-name>...<command-args>y</command-args>` -> `/x y`."""
    import re

    name = re.search(r"<command-name>(.*?)</command-name>", text, re.S)
    args = re.search(r"<command-args>(.*?)</command-args>", text, re.S)
    out = (name.group(1).strip() if name else "").strip()
    if args and args.group(1).strip():
        out = f"{out} {args.group(1).strip()}".strip()
    return out


@dataclass
class _Rec:
    uuid: str | None
    offset: int
    obj: dict[str, Any]


def _claude_code(records: list[_Rec], parents: dict[str, str | None]) -> _Builder:
    conversation = [r for r in records if r.obj.get("type") in ("user", "assistant")]
    main = [r for r in conversation if not r.obj.get("isSidechain")]
    if main:
        conversation = main
    builder = _Builder()
    if not conversation:
        return builder
    builder.session_id = conversation[-1].obj.get("sessionId") or None
    active = _chain(conversation[-1].uuid, parents)
    for rec in conversation:
        obj = rec.obj
        if rec.uuid is not None and active and rec.uuid not in active:
            parent = parents.get(rec.uuid)
            if not (obj.get("type") == "user" and parent in active and _has_tool_result(obj)):
                continue  # an abandoned branch
        message = obj.get("message") if isinstance(obj.get("message"), dict) else {}
        at = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        if obj.get("type") == "assistant":
            _cc_assistant(builder, obj, message, at, rec.offset)
        else:
            _cc_user(builder, obj, message, at, rec)
    builder.finish()
    return builder


def _has_tool_result(obj: dict[str, Any]) -> bool:
    message = obj.get("message")
    return isinstance(message, dict) and any(
        b.get("type") == "tool_result" for b in _blocks(message.get("content"))
    )


def _chain(leaf: str | None, parents: dict[str, str | None]) -> set[str]:
    chain: set[str] = set()
    node = leaf
    while node is not None and node not in chain and node in parents:
        chain.add(node)
        node = parents[node]
    return chain


def _cc_assistant(
    builder: _Builder, obj: dict[str, Any], message: dict[str, Any], at: str | None, offset: int
) -> None:
    for block in _blocks(message.get("content")):
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            builder.say(block["text"], at, offset)
        elif kind == "tool_use":
            name = block.get("name") if isinstance(block.get("name"), str) else None
            builder.tool(
                name,
                block.get("id") if isinstance(block.get("id"), str) else None,
                offset,
                block.get("input"),
            )
    reason = message.get("stop_reason") if isinstance(message.get("stop_reason"), str) else None
    if obj.get("isApiErrorMessage") or obj.get("error"):
        builder.stop(reason, offset, outcome="error")
    elif reason in ("max_tokens", "model_context_window_exceeded"):
        builder.stop(reason, offset, outcome="truncated")
    elif reason is not None:
        builder.stop(reason, offset)


def _cc_user(
    builder: _Builder, obj: dict[str, Any], message: dict[str, Any], at: str | None, rec: _Rec
) -> None:
    if obj.get("isMeta") or obj.get("isCompactSummary") or obj.get("isVisibleInTranscriptOnly"):
        return
    blocks = _blocks(message.get("content"))
    results = [b for b in blocks if b.get("type") == "tool_result"]
    for block in results:
        text = _block_text(block.get("content"))
        rejected = obj.get("toolUseResult") == "User rejected tool use" or text.startswith(_REJECTED_PREFIX)
        builder.result(
            block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else None,
            error=bool(block.get("is_error")),
            rejected=rejected,
            offset=rec.offset,
        )
    if results:
        return
    text = _block_text(message.get("content")).strip()
    if not text:
        return
    if text.startswith("[Request interrupted by user"):
        builder.stop(None, rec.offset, outcome="interrupted")
        return
    if text.startswith(_CC_NOT_PROMPTS):
        return
    if "<command-name>" in text:
        text = _slash_command(text)
        if not text:
            return
    builder.prompt(text, at, rec.uuid, rec.offset)


# -- Pi -------------------------------------------------------------------------------------------


def _pi_entry(builder: _Builder, entry: dict[str, Any], offset: int) -> None:
    message = entry.get("message")
    if entry.get("type") != "message" or not isinstance(message, dict):
        return
    role = message.get("role")
    at = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else _ms(message.get("timestamp"))
    if role == "user":
        text = _block_text(message.get("content")).strip()
        if text:
            # The message's own timestamp is the key: the extension's agent_end messages carry it too,
            # so a hook capture and a later import of the session file agree.
            stamp = message.get("timestamp")
            key = str(int(stamp)) if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else None
            if key is None and isinstance(entry.get("id"), str):
                key = entry["id"]
            builder.prompt(text, at, key, offset)
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


def _ms(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    from habitus.harness.events import iso_from_epoch

    return iso_from_epoch(value / 1000)


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


# -- Codex ----------------------------------------------------------------------------------------


def _codex(records: list[_Rec]) -> _Builder:
    builder = _Builder()
    wrapped = any("payload" in r.obj for r in records)
    for rec in records:
        obj = rec.obj
        if wrapped:
            payload = obj.get("payload") if isinstance(obj.get("payload"), dict) else {}
            at = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
            kind = obj.get("type")
            if kind == "session_meta" and isinstance(payload.get("id"), str):
                builder.session_id = payload["id"]
                if builder.current is not None:
                    builder.current.session_id = builder.session_id
            elif kind == "event_msg":
                _codex_event(builder, payload, at, rec.offset)
            elif kind == "response_item":
                _codex_tool(builder, payload, rec.offset)
        else:
            if "instructions" in obj and "id" in obj and isinstance(obj.get("id"), str):
                builder.session_id = obj["id"]
                continue
            _codex_legacy(builder, obj, rec.offset)
    builder.finish()
    return builder


def _codex_event(builder: _Builder, payload: dict[str, Any], at: str | None, offset: int) -> None:
    kind = payload.get("type")
    message = payload.get("message") if isinstance(payload.get("message"), str) else ""
    if kind == "user_message":
        text = message.strip()
        if text and not text.startswith(_CODEX_NOT_PROMPTS):
            builder.prompt(text, at, at, offset)
    elif kind == "agent_message":
        builder.say(message, at, offset)
    elif kind in ("task_complete", "turn_complete"):
        last = payload.get("last_agent_message")
        if builder.current is not None and not builder.current.assistant and isinstance(last, str):
            builder.say(last, at, offset)
        builder.stop("task_complete", offset)
    elif kind == "turn_aborted":
        reason = payload.get("reason") if isinstance(payload.get("reason"), str) else "aborted"
        builder.stop(reason, offset, outcome="aborted")
    elif kind in ("error", "stream_error"):
        builder.stop("error", offset, outcome="error")


def _codex_tool(builder: _Builder, payload: dict[str, Any], offset: int) -> None:
    kind = payload.get("type")
    call_id = payload.get("call_id") if isinstance(payload.get("call_id"), str) else None
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        name = payload.get("name") if isinstance(payload.get("name"), str) else kind
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
        elif isinstance(output, dict) and output.get("success") is False:
            error = True
        builder.result(call_id, error=error, rejected=False, offset=offset)


def _codex_legacy(builder: _Builder, obj: dict[str, Any], offset: int) -> None:
    kind = obj.get("type")
    if kind == "message":
        text = _block_text(obj.get("content")).strip()
        if obj.get("role") == "user":
            if text and not text.startswith(_CODEX_NOT_PROMPTS):
                builder.prompt(text, None, None, offset)
        elif obj.get("role") == "assistant":
            builder.say(text, None, offset)
    else:
        _codex_tool(builder, obj, offset)


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
        raise HabitusError("bad_request", "format: expected one of claude-code, pi, codex")
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
        for offset, line in _lines(handle, start, max(1, max_bytes), counter):
            obj = _parse(line)
            if obj is None:
                if line.strip():
                    counter[0] += 1
                continue
            ident, parent = _links(fmt, obj)
            if ident is not None:
                parents[ident] = parent
            if fmt == "claude-code" and obj.get("type") not in ("user", "assistant"):
                continue  # progress and bookkeeping: only their links matter
            records.append(_Rec(ident, offset, obj))
        end = counter[1]
    if fmt == "claude-code":
        builder = _claude_code(records, parents)
    elif fmt == "pi":
        builder = _pi(records, parents)
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


def read_tail(path: Path | str, *, max_bytes: int = TAIL_BYTES, format: str | None = None) -> TranscriptChunk:
    """The turns at the end of a transcript, reading at most max_bytes (doubling, up to
    MAX_TAIL_BYTES, while the window holds no turn or the last turn's prompt lies before it)."""
    path = Path(path)
    handle, size = _open(path)
    handle.close()
    window = max(1, max_bytes)
    while True:
        chunk = read_transcript(path, start_offset=max(0, size - window), max_bytes=window, format=format)
        complete = bool(chunk.turns) and not chunk.turns[-1].continued
        if complete or window >= size or window >= MAX_TAIL_BYTES:
            return chunk
        window = min(window * 2, MAX_TAIL_BYTES)


def last_turn(path: Path | str, *, format: str | None = None) -> tuple[Turn | None, TranscriptChunk]:
    """The last turn of a transcript (None when it holds none), and the chunk it came from."""
    chunk = read_tail(path, format=format)
    return (chunk.turns[-1] if chunk.turns else None), chunk
