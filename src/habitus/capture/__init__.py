"""Capture: hook events, transcripts and pairs in; bounded, redacted observations appended to the observations.

Every stored observation is one user/assistant pair:

    {"kind": "pair", "harness", "session", "user", "assistant", "user_at", "assistant_at",
     "outcome": "complete" | "rejected" | "interrupted" | "aborted", "tools": [{"name", "status"}],
     "truncated": bool, "source": "user" | "teammate" | "plan" | "command" | "meta" | "hook" | "tool"
     | "subagent"}

`source` says who wrote the prompt (habitus.harness.provenance): only "user" is a human's words;
learning reads no other source as the user's. A record without it (written before it existed) is "user".

Rules (DESIGN.md section 10):

- Only turns with a prompt whose run did not error or hit the output limit are stored (`Turn.kept`);
  a turn where the user rejected a tool use is stored (outcome "rejected"), and so is one the user
  interrupted or aborted, answered or not: its prompt is the user's words, and friction.
- Text is redacted first, then bounded: the prompt keeps its head (MAX_USER_BYTES), the assistant keeps
  its tail with TRUNCATION_MARKER in front, so that the record line fits MAX_RECORD_BYTES (64 KiB); the
  session id and tool names are cut, and a prompt of characters that JSON escapes (6 bytes each) is cut
  further, so that any input fits.
  Then the result is checked again (`looks_sensitive`); a pair that still looks sensitive is dropped
  and counted, never stored.
- Each pair has a stable fingerprint (harness, session, the prompt's own id in the transcript when there
  is one, else its redacted content and time), so a hook that fires twice, a transcript imported twice,
  or a transcript imported after its hooks captured it, adds nothing.

What each hook event does (see `capture_event`):

    prompt          Codex: remember the prompt for this session (pending/), for a Stop without transcript
    stop            store the turn that just ended (Claude Code, Codex, Gemini: read from transcript_path,
                    with the event's final message as the last word; Codex notify, generic, Gemini
                    without a chat file: from the event; Pi agent_settled / agent_end: from its
                    messages). After a Stop hook blocked (stop_hook_active) the turn is the hook's:
                    its answer is stored as a "hook" turn after the user's, so the final answer is kept
                    and the user's prompt is not stored twice.
    session_end,    Claude Code, Codex, Gemini, Pi: sweep the transcript's last TAIL_SWEEP_BYTES for turns a
    pre_compact     missed stop event left behind (deduplicated against the whole log)
    anything else   nothing (SubagentStop too: a subagent's "user" is the parent agent, not the human)
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from habitus import codec
from habitus.errors import HabitusError
from habitus.harness.events import HookEvent
from habitus.harness.transcripts import DEFAULT_MAX_BYTES, Turn, turns_from_pi_messages
from habitus.redact import clean_stamp, looks_sensitive, redact
from habitus.state import files, observations
from habitus.state.root import StateRoot

MAX_USER_BYTES = 16 * 1024
MAX_TOOLS_STORED = 50
MAX_SESSION_BYTES = 512  # an id; anything longer is cut (the fingerprint still uses the whole id)
MAX_TOOL_NAME_BYTES = 128
USER_MARKER = "[habitus: rest of the prompt truncated]"
TRUNCATION_MARKER = "[habitus: earlier assistant output truncated]"
TAIL_SWEEP_BYTES = 8 * 1024 * 1024
MAX_PENDING = 16
MAX_PENDING_BYTES = 64 * 1024


@dataclass
class CaptureResult:
    """What one capture call did; the result object of `habitus capture`."""

    appended: int = 0
    duplicates: int = 0
    redactions: int = 0
    dropped_sensitive: int = 0
    dropped_incomplete: int = 0
    skipped_lines: int = 0
    generation: int | None = None
    first_seq: int | None = None
    last_seq: int | None = None

    def add(self, other: CaptureResult) -> None:
        self.appended += other.appended
        self.duplicates += other.duplicates
        self.redactions += other.redactions
        self.dropped_sensitive += other.dropped_sensitive
        self.dropped_incomplete += other.dropped_incomplete
        self.skipped_lines += other.skipped_lines
        if other.generation is not None:
            self.generation = other.generation
        if other.first_seq is not None and self.first_seq is None:
            self.first_seq = other.first_seq
        if other.last_seq is not None:
            self.last_seq = other.last_seq

    def as_dict(self) -> dict[str, Any]:
        return {
            "appended": self.appended,
            "duplicates": self.duplicates,
            "redactions": self.redactions,
            "dropped": {
                "sensitive": self.dropped_sensitive,
                "incomplete": self.dropped_incomplete,
            },
            "skipped_lines": self.skipped_lines,
            "generation": self.generation,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
        }


# -- turning a turn into an entry -------------------------------------------------------------------


def _head(text: str, limit: int, marker: str) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore") + "\n" + marker


def _cut(text: str, limit: int) -> str:
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def _tool_name(name: str | None) -> str | None:
    """None for a tool the transcript never named (a nameless call, a result without its call)."""
    return None if name is None else _cut(redact(name)[0], MAX_TOOL_NAME_BYTES)


def _fit(payload: dict[str, Any], origin: dict[str, Any]) -> bool:
    """Make the record fit MAX_RECORD_BYTES: shorten the assistant's text from the front, then (when
    the prompt is made of characters that JSON escapes, 6 bytes each) the prompt from the back."""
    cut = _fit_assistant(payload, origin)
    user = payload["user"]
    while observations.record_size(payload, origin) > observations.MAX_RECORD_BYTES - 256 and user:
        user = user[: len(user) // 2]
        payload["user"] = f"{user}\n{USER_MARKER}"
        cut = True
    return cut


def _fit_assistant(payload: dict[str, Any], origin: dict[str, Any]) -> bool:
    """Shorten payload["assistant"] from the front until the record fits. Returns True if it cut."""
    cut = False
    for _ in range(8):
        over = observations.record_size(payload, origin) - observations.MAX_RECORD_BYTES + 256
        if over <= 0:
            return cut
        text = payload["assistant"]
        body = text[len(TRUNCATION_MARKER) + 1 :] if text.startswith(TRUNCATION_MARKER) else text
        keep = max(0, len(body) - max(over, len(body) // 16))
        payload["assistant"] = (
            f"{TRUNCATION_MARKER}\n{body[len(body) - keep :]}" if keep else TRUNCATION_MARKER
        )
        cut = True
    return cut


def entry_for(
    turn: Turn, *, harness: str, source: str, event: str | None
) -> tuple[observations.NewObservation | None, int, str]:
    """(entry or None, redactions, why-not) for one turn: redacted, bounded, post-checked."""
    if not turn.kept:
        return None, 0, "incomplete"
    user, n_user = redact(turn.user.strip())
    assistant, n_assistant = redact(turn.assistant.strip())
    session, n_session = redact(turn.session_id) if turn.session_id else (None, 0)
    session = _cut(session, MAX_SESSION_BYTES) if session else session
    redactions = n_user + n_assistant + n_session
    user = _head(user, MAX_USER_BYTES, USER_MARKER)
    payload: dict[str, Any] = {
        "kind": "pair",
        "harness": harness,
        "session": session,
        "user": user,
        "assistant": assistant,
        "user_at": clean_stamp(turn.user_at),
        "assistant_at": clean_stamp(turn.assistant_at),
        "outcome": turn.outcome,
        "tools": [{"name": _tool_name(t.name), "status": t.status} for t in turn.tools[:MAX_TOOLS_STORED]],
        "truncated": turn.assistant_truncated,
        "source": turn.source,
    }
    origin = {"harness": harness, "source": source, "event": redact(event)[0] if event else event}
    if _fit(payload, origin):
        payload["truncated"] = True
    if (
        looks_sensitive(payload["user"])
        or looks_sensitive(payload["assistant"])
        or looks_sensitive(session or "")
    ):
        return None, redactions, "sensitive"
    key: Any = turn.key
    if key is None:
        key = [turn.user_at, _digest(user), _digest(assistant)]
    fingerprint = observations.fingerprint(harness, turn.session_id or "", key)
    return (
        observations.NewObservation(payload=payload, origin=origin, fingerprint=fingerprint),
        redactions,
        "",
    )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def capture_turns(
    root: StateRoot,
    turns: list[Turn],
    *,
    harness: str,
    source: str,
    event: str | None,
    wait: float,
    full_dedupe: bool,
    retention_days: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> CaptureResult:
    """Redact, bound and append the kept turns; one lock hold for all of them.
    `progress(turns redacted, turns)` is called after each turn."""
    tally = CaptureResult()
    entries = []
    for number, turn in enumerate(turns, start=1):
        if progress is not None:
            progress(number, len(turns))
        entry, redactions, why = entry_for(turn, harness=harness, source=source, event=event)
        tally.redactions += redactions
        if entry is not None:
            entries.append(entry)
        elif why == "sensitive":
            tally.dropped_sensitive += 1
        else:
            tally.dropped_incomplete += 1
    if not entries:
        return tally
    result = observations.append(
        root, entries, wait=wait, full_dedupe=full_dedupe, retention_days=retention_days
    )
    tally.appended = result.appended
    tally.duplicates = result.duplicates
    tally.generation = result.generation
    if result.seqs:
        tally.first_seq, tally.last_seq = result.seqs[0], result.seqs[-1]
    return tally


# -- transcripts --------------------------------------------------------------------------------------


def import_transcript(
    root: StateRoot,
    path: Path,
    *,
    format: str | None,
    wait: float,
    retention_days: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: Callable[[int, int | None], None] | None = None,
) -> CaptureResult:
    """Import a whole transcript in bounded windows; every window is deduplicated against the whole observations.
    `progress(bytes done, bytes in the file)` is called as the turns of each window are redacted."""
    from habitus.harness.transcripts import read_transcript

    tally = CaptureResult()
    offset, session = 0, None
    size = _size(path) if progress is not None else None
    while True:
        chunk = read_transcript(path, start_offset=offset, max_bytes=max_bytes, format=format, hold_last=True)
        format = chunk.format
        session = chunk.session_id or session
        for turn in chunk.turns:
            turn.session_id = turn.session_id or session
        tally.skipped_lines += chunk.skipped_lines
        window = None if progress is None else _window(progress, offset, chunk.end_offset, size)
        tally.add(
            capture_turns(
                root,
                chunk.turns,
                harness=chunk.format,
                source="transcript",
                event=None,
                wait=wait,
                full_dedupe=True,
                retention_days=retention_days,
                progress=window,
            )
        )
        if progress is not None:
            progress(chunk.end_offset, size)
        if chunk.eof or chunk.end_offset <= offset:
            return tally
        offset = chunk.end_offset


def _window(
    progress: Callable[[int, int | None], None], start: int, end: int, size: int | None
) -> Callable[[int, int], None]:
    """Turns redacted in the window [start, end) as bytes of the file (an estimate: turns vary)."""

    def report(done: int, turns: int) -> None:
        progress(start + (end - start) * done // max(turns, 1), size)

    return report


def _size(path: Path) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None  # read_transcript names the problem


# -- hook events --------------------------------------------------------------------------------------


def capture_event(
    root: StateRoot,
    event: HookEvent,
    *,
    wait: float,
    retention_days: int | None = None,
    source: str = "hook",
) -> CaptureResult:
    """Do what `event` calls for (see the module docstring). Returns what was stored."""
    if event.kind == "prompt":
        if event.harness == "codex" and event.session_id and event.prompt:
            _remember_prompt(root, event)
        return CaptureResult()
    if event.kind == "stop":
        turns = _stop_turns(root, event)
        return capture_turns(
            root,
            turns,
            harness=event.harness,
            source=source,
            event=event.name,
            wait=wait,
            full_dedupe=False,
            retention_days=retention_days,
        )
    if event.kind in ("session_end", "pre_compact") and event.harness in (
        "claude-code",
        "codex",
        "gemini",
        "pi",
    ):
        if not event.transcript_path or (
            event.harness == "gemini" and event.transcript_path.endswith(".json")
        ):
            return CaptureResult()  # no file, or a Gemini chat file before 0.61 (one JSON object, not JSONL)
        from habitus.harness.transcripts import read_tail

        chunk = read_tail(event.transcript_path, max_bytes=TAIL_SWEEP_BYTES, format=event.harness)
        for turn in chunk.turns:
            turn.session_id = turn.session_id or event.session_id
        tally = capture_turns(
            root,
            chunk.turns,
            harness=event.harness,
            source="hook",
            event=event.name,
            wait=wait,
            full_dedupe=True,
            retention_days=retention_days,
        )
        tally.skipped_lines += chunk.skipped_lines
        return tally
    return CaptureResult()


def _stop_turns(root: StateRoot, event: HookEvent) -> list[Turn]:
    if event.harness == "pi":
        return _pi_turns(event)
    pending = _take_prompt(root, event) if event.harness == "codex" else None
    if event.harness in ("claude-code", "codex", "gemini"):
        turn = _turn_from_transcript(event)
        if turn is not None:
            return [turn]
    if event.harness == "gemini" or event.harness == "generic":
        # No chat file to read: the event carries both sides.
        if event.prompt is None or event.last_assistant_message is None:
            return []
        return [
            Turn(
                user=event.prompt,
                assistant=event.last_assistant_message,
                user_at=event.timestamp,
                session_id=event.session_id,
                source="hook" if event.stop_hook_active else "user",
            )
        ]
    prompt = event.prompt or (pending or {}).get("prompt")
    if not prompt:
        if event.transcript_path and not Path(event.transcript_path).exists():
            raise HabitusError("not_found", f"{event.transcript_path}: no such transcript file")
        return []
    if event.stop_hook_active:
        return []  # the continuation of a turn already stored, and no transcript to find its answer in
    key = event.turn_id or (pending or {}).get("turn_id") or (pending or {}).get("at")
    return [
        Turn(
            user=prompt,
            assistant=event.last_assistant_message or "",
            user_at=(pending or {}).get("at"),
            key=key,
            session_id=event.session_id,
        )
    ]


def _pi_turns(event: HookEvent) -> list[Turn]:
    """Pi: the run's messages. A retried attempt's agent_end (0.73) comes without its prompt: that
    partial turn is not stored (agent_settled, 1.6, brings every attempt's messages at once)."""
    turns = turns_from_pi_messages(event.messages or [], session_id=event.session_id)
    if turns and turns[0].continued and event.prompt:
        turns[0].user, turns[0].continued = event.prompt, False
    if not turns and event.prompt and event.last_assistant_message is not None:
        turns = [Turn(user=event.prompt, assistant=event.last_assistant_message, user_at=event.timestamp)]
    if event.raw.get("aborted") is True and turns and turns[-1].outcome == "complete":
        turns[-1].outcome = "aborted"
    for turn in turns:
        turn.session_id = turn.session_id or event.session_id
    return turns


def _turn_from_transcript(event: HookEvent) -> Turn | None:
    if not event.transcript_path:
        return None
    from habitus.harness.transcripts import last_turn

    try:
        turn, _ = last_turn(event.transcript_path, format=event.harness)
    except HabitusError as exc:
        if exc.code in ("not_found", "bad_transcript"):
            return None
        raise
    if turn is None or turn.continued:
        return None
    turn.session_id = turn.session_id or event.session_id
    if event.stop_hook_active and turn.source == "user":
        # The prompt of the run a Stop hook continued is the hook's reason, even where the transcript
        # records it like a user's message (Gemini CLI).
        turn.source = "hook"
    final = (event.last_assistant_message or "").strip()
    if event.harness == "gemini" and final and turn.assistant and final.endswith(turn.assistant.strip()):
        final = ""  # AfterAgent after a block repeats the earlier answers in front of the new one
    if final and final not in turn.assistant:
        # The transcript is written asynchronously and may lag: the hook's final message wins.
        turn.assistant = f"{turn.assistant}\n\n{final}" if turn.assistant else final
    return turn


# -- pending prompts (Codex: a Stop hook may come without a readable transcript) ---------------------


def _pending_path(root: StateRoot, event: HookEvent) -> Path:
    name = hashlib.sha256(f"{event.harness}\0{event.session_id}".encode()).hexdigest()[:32]
    return root.observations / "pending" / f"{name}.json"


def _remember_prompt(root: StateRoot, event: HookEvent) -> None:
    prompt, _ = redact(event.prompt or "")
    prompt = _head(prompt, MAX_USER_BYTES, USER_MARKER)
    if looks_sensitive(prompt):
        return
    from habitus.state.clock import utc_now

    folder = files.ensure_dir(root.ensure_sub("observations") / "pending")
    turn_id = redact(event.turn_id)[0] if event.turn_id else event.turn_id
    body = {"prompt": prompt, "turn_id": turn_id, "at": clean_stamp(event.timestamp) or utc_now()}
    files.atomic_write(_pending_path(root, event), codec.canonical(body))
    entries = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for stale in entries[:-MAX_PENDING]:
        try:
            stale.unlink()
        except FileNotFoundError:
            pass


def _take_prompt(root: StateRoot, event: HookEvent) -> dict[str, Any] | None:
    if not event.session_id:
        return None
    path = _pending_path(root, event)
    try:
        data = files.read_bytes(path, MAX_PENDING_BYTES)
    except FileNotFoundError:
        return None
    except HabitusError:
        return None
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    try:
        body = codec.loads(data)
    except Exception:
        return None
    return body if isinstance(body, dict) and isinstance(body.get("prompt"), str) else None
