"""`memory observe`: turn a transcript chunk into single-line observations rated by relevance.

Input, either a JSON request of messages (`observe`):

    {"stream": "session-42",            # whose watermark; default "default"
     "start": 0,                         # transcript position of messages[0] (default 0)
     "messages": [{"role": "user" | "assistant" | "tool", "text": "...",
                   "at": "2026-11-30T22:44:34.123Z",   # default: now
                   "tool": "bash", "error": false}]}   # tool results: name, and whether it failed

or a transcript file (habitus.memory.transcript: Claude Code, Codex or Pi JSONL, read from the
stream's watermark, which then holds a byte offset).

Messages before the stream's watermark were observed already and are skipped, so a caller may send the
whole transcript every time. One run reads at most `chunk_chars` characters of new messages (at least
one message, or one transcript turn); the rest is reported as `remaining` for the next run. The
watermark always advances past what the run read: an empty run, or one whose observer failed, never
re-reads the same messages forever. A watermark counts messages or bytes (`unit`); a stream keeps the
unit it started with.

Privacy: each message is redacted before any observer sees it (so a model never receives a secret); a
message that still looks sensitive is skipped and counted in `dropped_sensitive`, as is an observation
whose text does.

Relevance follows the observational-memory rubric:
  critical  persistent preferences and identity, explicit corrections, completions not to be redone
  high      decisions, unresolved blockers and errors, key constraints
  medium    task-level context (the default when unsure between medium and high)
  low       routine acknowledgements, re-derivable output (dropped first by prune)
User assertions (statements by the user) and completions are flagged; prune never drops them, nor any
critical observation.

The observer is pluggable: `RuleObserver` is the offline default, `habitus.memory.model.ModelObserver`
asks a configured language model. Both implement `Observer.observe(messages, known) -> list[Proposal]`
(`known`: the stream's reflections and recent observations, one per line); `accept` enforces the
invariants on whatever an observer proposes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from habitus.errors import HabitusError, bad_request
from habitus.memory import core, records, text
from habitus.memory.stores import MemoryStore
from habitus.state.clock import utc_now

ROLES = ("user", "assistant", "tool")
MAX_MESSAGES = 10_000
OBSERVATION_CHARS = 280
DEFAULT_STREAM = "default"
STREAM_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
LABEL = {"user": "User", "assistant": "Assistant", "tool": "Tool"}
IMPORTANCE = {"low": 0.2, "medium": 0.4, "high": 0.6, "critical": 0.8}


@dataclass(frozen=True)
class Message:
    position: int
    role: str
    text: str
    at: str
    tool: str | None = None
    error: bool | None = None  # for tool results, when the transcript says whether the call failed


@dataclass
class Proposal:
    """One observation an observer proposes (before the invariants are checked)."""

    content: str
    relevance: str
    at: str
    role: str
    position: int
    assertion: bool = False
    completion: bool = False
    signals: list[str] = field(default_factory=list)


class Observer(Protocol):
    name: str

    def observe(self, messages: list[Message], known: list[str]) -> list[Proposal]: ...


# -- the offline observer --------------------------------------------------------------------------

_I = re.IGNORECASE
SIGNALS: dict[str, re.Pattern[str]] = {
    "ack": re.compile(
        r"^\W*(ok(ay)?|k|thanks?( you)?|thx|sure|got it|great|nice|cool|yes|yep|yeah|sounds good|looks good|lgtm|"
        r"continue|go on|go ahead|proceed|perfect)\W*$",
        _I,
    ),
    "correction": re.compile(
        r"(^\W*(no|nope|wrong|stop)\b|\b(that'?s (not|wrong)|not what i (asked|meant|said)|i told you|i said|"
        r"you (forgot|missed|broke|ignored|messed|fucked)|try again|undo (that|it|this)|don'?t do that|"
        r"still (broken|wrong|the same|looks the same|doesn'?t)|are you (stupid|kidding|serious))\b|\bno \w+[^?]*!)",
        _I,
    ),
    "preference": re.compile(
        r"\b(i (prefer|like|want|hate|dislike|always|never)|(always|never) (use|do|run|write|add|put|call)|"
        r"from now on|please (always|never)|my (name|role|team|company|username) is|call me|i'?m (a|an) \w+)\b",
        _I,
    ),
    "constraint": re.compile(
        r"\b(must( not)?|mustn'?t|required|requirement|deadline|only (use|run|touch)|do not|don'?t (use|touch|change|add)|"
        r"make sure|never|always)\b",
        _I,
    ),
    "decision": re.compile(
        r"\b(we (decided|agreed|chose|will go|'ll go)|let'?s (use|go with|switch|keep|do)|decided to|decision|"
        r"going with|instead of|switch(ed)? to|settled on)\b",
        _I,
    ),
    "blocker": re.compile(
        r"\b(error|exception|traceback|failed|failing|fails|cannot|can'?t|unable|blocked|crash(es|ed)?|timed? ?out|"
        r"denied|not found|segfault|panic)\b",
        _I,
    ),
    "completion": re.compile(
        r"(\b(i|we)('ve| have)? (now )?(fixed|implemented|added|completed|finished|merged|deployed|released|"
        r"resolved|ported|removed|renamed|refactored|updated|created|wrote)\b|^\W*(done|fixed|completed|finished)\b|"
        r"\ball (\d+ )?tests (now )?pass|\b(is|are) (now )?(fixed|done|complete|working)\b)",
        _I,
    ),
    "plan": re.compile(r"\b(i'?ll|i will|let me|next,? i|first,? i|plan)\b", _I),
    "request": re.compile(
        r"^\W*(please|can you|could you|would you|let'?s|read|write|create|add|fix|make|update|remove|delete|"
        r"rename|implement|port|run|try|show|check|find|look|move|change|refactor|investigate|help|explain)\b",
        _I,
    ),
}
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _sentences(body: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(body) if s.strip()]


def _summary(body: str, wanted: list[str]) -> str:
    """The sentences that carry the wanted signals (at most two), else the first sentence."""
    sentences = _sentences(body)
    if not sentences:
        return ""
    picked = [s for s in sentences if any(SIGNALS[name].search(s) for name in wanted)][:2]
    return text.one_line(" ".join(picked or sentences[:1]))


def _found(body: str) -> list[str]:
    return [name for name, pattern in SIGNALS.items() if pattern.search(body)]


class RuleObserver:
    """Offline observer: signal phrases and the speaker decide relevance (English phrasing)."""

    name = "rules"

    def observe(self, messages: list[Message], known: list[str] | None = None) -> list[Proposal]:
        tool_words = text.words(" ".join(m.text for m in messages if m.role == "tool"))
        out = []
        for message in messages:
            proposal = self._one(message)
            if proposal is None:
                continue
            if message.role == "assistant" and relays(message.text, tool_words):
                # The agent repeating what a tool printed: tool output, not a fact of the session.
                proposal.relevance, proposal.completion = "low", False
                proposal.signals = [*proposal.signals, "relays_tool"]
            out.append(proposal)
        return out

    def _one(self, message: Message) -> Proposal | None:
        body = message.text.strip()
        if not body:
            return None
        signals = _found(body)
        first_line = text.one_line(body)
        if message.role == "user":
            return self._user(message, body, first_line, signals)
        if message.role == "assistant":
            return self._assistant(message, body, first_line, signals)
        return self._tool(message, body, signals)

    def _user(self, message: Message, body: str, flat: str, signals: list[str]) -> Proposal:
        def make(relevance: str, wanted: list[str], assertion: bool) -> Proposal:
            return Proposal(
                f"User: {_summary(body, wanted) or flat}", relevance, message.at, "user", message.position,
                assertion=assertion, signals=signals,
            )  # fmt: skip

        if "ack" in signals:
            return make("low", [], False)
        for name in ("correction", "preference"):
            if name in signals:
                return make("critical", [name], True)
        for name in ("decision", "constraint"):
            if name in signals:
                return make("high", [name], True)
        # Task requests and questions are context; other statements are the user's assertions.
        return make("medium", [], "request" not in signals and not flat.endswith("?"))

    def _assistant(self, message: Message, body: str, flat: str, signals: list[str]) -> Proposal:
        def make(
            relevance: str, wanted: list[str], prefix: str = "Assistant", completion: bool = False
        ) -> Proposal:
            return Proposal(
                f"{prefix}: {_summary(body, wanted) or flat}", relevance, message.at, "assistant", message.position,
                completion=completion, signals=signals,
            )  # fmt: skip

        if "completion" in signals:
            return make("critical", ["completion"], "Assistant completed", completion=True)
        if "decision" in signals:
            return make("high", ["decision"])
        if "blocker" in signals:
            return make("high", ["blocker"])
        if "plan" in signals:
            return make("medium", ["plan"])
        return make("low", [])

    def _tool(self, message: Message, body: str, signals: list[str]) -> Proposal | None:
        # Tool output never becomes memory (it is whatever a file or a web page said): a failed call
        # is noted by the tool's name alone, a successful one not at all.
        failed = "blocker" in signals if message.error is None else message.error
        if not failed:
            return None
        return Proposal(tool_note(message), "high", message.at, "tool", message.position, signals=["blocker"])


REJECTED = "rejected by the user"  # the text habitus.memory.transcript gives a tool use the user refused


def tool_note(message: Message) -> str:
    """What a failed tool call leaves in memory: its name and how it ended, never its output."""
    name = message.tool or "tool"
    return f"Tool {name} {REJECTED}" if message.text == REJECTED else f"Tool {name} failed"


RELAY_MIN_WORDS = 6
RELAY_SHARE = 0.7


def relays(body: str, tool_words: set[str]) -> bool:
    """Whether an assistant message mostly repeats the chunk's tool output: at least RELAY_SHARE of its
    words (and RELAY_MIN_WORDS of them) appear in what the tools printed."""
    said = text.words(body)
    if not tool_words or len(said) < RELAY_MIN_WORDS:
        return False
    return len(said & tool_words) >= RELAY_SHARE * len(said)


# -- requests --------------------------------------------------------------------------------------


def check_stream(value: Any) -> str:
    if value is None:
        return DEFAULT_STREAM
    if not isinstance(value, str) or not STREAM_RE.match(value):
        raise bad_request("stream", "expected 1-128 letters, digits, '.', '_', ':' or '-'")
    from habitus.redact import looks_sensitive

    if looks_sensitive(value):  # stream names are stored (watermarks, metadata) and cannot be redacted
        raise records.sensitive("stream")
    return value


def stream_name(text: str) -> str:
    """A valid stream name made from text (a session id or a transcript's file name)."""
    name = re.sub(r"[^A-Za-z0-9._:-]+", "-", text).lstrip("._:-")[:128]
    return name or "transcript"


def messages_from_request(request: dict[str, Any], *, now: str) -> list[Message]:
    """The messages of an observe request, validated, numbered from `start`."""
    start = request.get("start", 0)
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise bad_request("start", "expected a non-negative integer")
    raw = request.get("messages")
    if not isinstance(raw, list):
        raise bad_request("messages", "expected a list of {role, text, at?, tool?} objects")
    if len(raw) > MAX_MESSAGES:
        raise bad_request("messages", f"expected at most {MAX_MESSAGES} messages per request")
    out = []
    for index, item in enumerate(raw):
        where = f"messages[{index}]"
        if not isinstance(item, dict):
            raise bad_request(where, "expected an object")
        role = records.check_choice(item.get("role"), f"{where}.role", ROLES)
        body = item.get("text")
        if not isinstance(body, str):
            raise bad_request(f"{where}.text", "expected a string")
        at = records.check_timestamp(item.get("at", now), f"{where}.at")
        tool = item.get("tool")
        if tool is not None and (not isinstance(tool, str) or not 0 < len(tool) <= 64):
            raise bad_request(f"{where}.tool", "expected a tool name (1-64 characters)")
        error = item.get("error")
        if error is not None and not isinstance(error, bool):
            raise bad_request(f"{where}.error", "expected true, false or null")
        out.append(Message(start + index, role, body, str(at), tool, error))
    return out


def _chunk(messages: list[Message], chunk_chars: int) -> list[Message]:
    taken: list[Message] = []
    size = 0
    for message in messages:
        if taken and size + len(message.text) > chunk_chars:
            break
        taken.append(message)
        size += len(message.text)
    if taken and len(taken[0].text) > chunk_chars:
        taken[0] = replace(taken[0], text=taken[0].text[:chunk_chars])
    return taken


def _redacted(chunk: list[Message]) -> tuple[list[Message], int]:
    """The chunk's messages with their text redacted, and how many still looked sensitive (left out)."""
    from habitus.redact import looks_sensitive, redact

    out, dropped = [], 0
    for message in chunk:
        clean, _ = redact(message.text)
        if looks_sensitive(clean):
            dropped += 1
            continue
        out.append(replace(message, text=clean))
    return out, dropped


# -- watermarks ------------------------------------------------------------------------------------


def watermark(store: MemoryStore, job: str, stream: str) -> int:
    """The stream's position for job (0 when the store or the watermark does not exist yet)."""
    return watermark_row(store, job, stream)[0]


def watermark_row(store: MemoryStore, job: str, stream: str) -> tuple[int, str | None]:
    """(position, unit) of the stream's watermark for job; (0, None) when there is none yet."""
    if not store.exists():
        return 0, None
    row = (
        store.writer()
        .execute("SELECT position, unit FROM memory_watermarks WHERE job = ? AND stream = ?", (job, stream))
        .fetchone()
    )
    return (0, None) if row is None else (int(row[0]), str(row[1]))


def position(conn: Any, job: str, stream: str) -> int:
    row = conn.execute(
        "SELECT position FROM memory_watermarks WHERE job = ? AND stream = ?", (job, stream)
    ).fetchone()
    return 0 if row is None else int(row[0])


def advance(
    conn: Any,
    job: str,
    stream: str,
    position: int,
    produced: int,
    error: str | None,
    now: str,
    unit: str = "message",
) -> None:
    """Move a watermark forward (never back) and count the run, in the caller's transaction."""
    conn.execute(
        "INSERT INTO memory_watermarks (job, stream, position, runs, produced, last_error, updated_at, unit) "
        "VALUES (?, ?, ?, 1, ?, ?, ?, ?) ON CONFLICT (job, stream) DO UPDATE SET "
        "position = max(position, excluded.position), runs = runs + 1, produced = produced + excluded.produced, "
        "last_error = excluded.last_error, updated_at = excluded.updated_at",
        (job, stream, position, produced, error, now, unit),
    )


def check_unit(stream: str, found: str | None, wanted: str) -> None:
    if found is not None and found != wanted:
        raise bad_request(
            "stream",
            f"this stream's watermark counts {found}s (it was fed "
            f"{'a transcript file' if found == 'byte' else 'messages'}); use another --stream",
        )


def error_label(error: HabitusError) -> str:
    """What the watermark records about a failed run: the code, and a model's reason."""
    reason = error.details.get("reason")
    return f"{error.code}:{reason}" if isinstance(reason, str) else error.code


# -- observe ---------------------------------------------------------------------------------------


def accept(proposals: list[Proposal], chunk: list[Message]) -> list[Proposal]:
    """Enforce the invariants on proposals from any observer: a message of that role at that position
    inside the chunk, a relevance from the rubric, single-line bounded content, a valid timestamp; only
    a user's statement is an assertion. Others are dropped."""
    speakers = {(m.position, m.role) for m in chunk}
    kept = []
    for proposal in proposals:
        content = text.clip(text.one_line(proposal.content), OBSERVATION_CHARS)
        if (proposal.position, proposal.role) not in speakers or proposal.relevance not in IMPORTANCE:
            continue
        if not content or not records.TIMESTAMP_RE.match(proposal.at):
            continue
        if proposal.role == "tool":
            # Whoever proposed it, a tool's observation carries no tool output: only that it failed.
            content = tool_note(next(m for m in chunk if (m.position, m.role) == (proposal.position, "tool")))
        proposal.content = content
        proposal.assertion = proposal.assertion is True and proposal.role == "user"
        proposal.completion = proposal.completion is True
        kept.append(proposal)
    return kept


def existing_keys(conn: Any, stream: str) -> set[str]:
    """Comparison forms of the stream's active observations (for duplicate skipping)."""
    if conn is None:
        return set()
    rows = conn.execute(
        "SELECT content FROM memories WHERE kind = 'observation' AND +removed_at IS NULL "
        "AND json_extract(metadata, '$.stream') = ?",
        (stream,),
    )
    return {text.normal(row[0]) for row in rows}


def known_lines(store: MemoryStore, stream: str, *, max_chars: int) -> list[str]:
    """The stream's reflections, then its most recent observations, rendered one per line (oldest first
    within each kind), at most max_chars in all: what an observer is told is already captured."""
    conn = store.reader() if store.exists() else None
    if conn is None or max_chars <= 0:
        return []
    out: list[str] = []
    used = 0
    for kind in ("reflection", "observation"):
        rows = conn.execute(
            "SELECT content, relevance, json_extract(metadata, '$.at') FROM memories WHERE kind = ? "
            "AND +removed_at IS NULL AND json_extract(metadata, '$.stream') = ? ORDER BY seq DESC LIMIT 500",
            (kind, stream),
        ).fetchall()
        lines = []
        for content, relevance, at in rows:
            when = str(at or "")[:16].replace("T", " ")
            line = content if kind == "reflection" else f"{when} [{relevance}] {content}"
            if used + len(line) + 1 > max_chars:
                break
            used += len(line) + 1
            lines.append(line)
        out += reversed(lines)
    return out


def observe_chunk(
    store: MemoryStore,
    stream: str,
    chunk: list[Message],
    *,
    before: int,
    after: int,
    unit: str,
    observer: Observer,
    known_chars: int,
    now: str,
) -> dict[str, Any]:
    """Observe one bounded chunk and move the watermark to `after` (whatever the observer did)."""
    visible, dropped = _redacted(chunk)
    error: HabitusError | None = None
    proposals: list[Proposal] = []
    if visible:
        known = known_lines(store, stream, max_chars=known_chars) if known_chars else []
        try:
            proposals = accept(observer.observe(visible, known), visible)
        except HabitusError as exc:  # e.g. a model that failed: still advance, then report it
            error = exc
    conn = store.writer()
    items: list[dict[str, Any]] = []
    duplicates = instructions = 0
    with store.db.write(conn):
        # Another run may have observed part of this chunk meanwhile: keep only what is still new.
        current = position(conn, "observe", stream)
        seen = existing_keys(conn, stream)
        for proposal in (p for p in proposals if p.position >= current):
            key = text.normal(proposal.content)
            if key in seen:
                duplicates += 1
                continue
            try:
                record = records.create(_request(proposal, stream, observer.name), scope=store.name, now=now)
            except HabitusError as exc:
                if exc.code == "refused":  # an instruction-injection marker (records.check_instructions)
                    instructions += 1
                    continue
                if exc.code != "sensitive_content":
                    raise
                dropped += 1
                continue
            seen.add(key)
            core.insert(conn, record)
            items.append(record)
        advance(conn, "observe", stream, after, len(items), error_label(error) if error else None, now, unit)
    if error is not None:
        raise error
    return {
        "observed": len(items),
        "duplicates": duplicates,
        "dropped_sensitive": dropped,
        "dropped_instruction": instructions,
        "items": items,
        "watermark": {"before": before, "after": after},
        "unit": unit,
    }


def _request(proposal: Proposal, stream: str, observer: str) -> dict[str, Any]:
    return {
        "content": proposal.content,
        "kind": "observation",
        "relevance": proposal.relevance,
        "importance": IMPORTANCE[proposal.relevance],
        "tags": ["observation"],
        "metadata": {
            "source": "observe",
            "observer": observer,
            "stream": stream,
            "role": proposal.role,
            "at": proposal.at,
            "position": proposal.position,
            "assertion": proposal.assertion,
            "completion": proposal.completion,
            "signals": proposal.signals,
        },
    }


def observe(
    store: MemoryStore,
    request: dict[str, Any],
    *,
    chunk_chars: int,
    observer: Observer | None = None,
    known_chars: int = 0,
    now: str | None = None,
) -> dict[str, Any]:
    """Observe the new messages of an observe request (one bounded chunk of them)."""
    now = now or utc_now()
    stream = check_stream(request.get("stream"))
    messages = messages_from_request(request, now=now)
    observer = observer or RuleObserver()
    before, unit = watermark_row(store, "observe", stream)
    check_unit(stream, unit, "message")
    fresh = [m for m in messages if m.position >= before]
    chunk = _chunk(fresh, chunk_chars)
    result: dict[str, Any] = {"store": store.name, "stream": stream, "observer": observer.name}
    if not chunk:
        return {**result, "observed": 0, "duplicates": 0, "dropped_sensitive": 0, "dropped_instruction": 0, "items": [],
                "watermark": {"before": before, "after": before}, "unit": "message", "remaining": 0}  # fmt: skip
    done = observe_chunk(
        store, stream, chunk, before=before, after=chunk[-1].position + 1, unit="message",
        observer=observer, known_chars=known_chars, now=now,
    )  # fmt: skip
    return {**result, **done, "remaining": len(fresh) - len(chunk)}
