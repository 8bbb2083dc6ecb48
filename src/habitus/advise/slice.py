"""The slice: a bounded, redacted, protected-path-masked view of the agent's recent work.

A review reads only what is new since the last review of its session (the cursor), plus the earlier part
of the turn in progress as context, so that "verified the artifact" three tool calls ago still counts as
evidence when the agent says "ready" now. Entries are the user's prompt, each tool call (name, outcome and
a bounded summary of its input: command, path, pattern, the head of written text) and the assistant's
text. Tool results are never included.

Every entry is masked (protected paths -> `[protected path]`; a tool call that touches one is withheld
whole), then redacted (habitus.redact), then checked again: an entry that still looks sensitive is
withheld. The newest work is kept first; the budget is `advise.max_slice_chars` (24,000 by default).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from habitus.advise.protect import MARK
from habitus.advise.store import Cursor
from habitus.state import files

if TYPE_CHECKING:
    from habitus.advise import protect
    from habitus.harness.transcripts import Turn

MAX_WINDOW_BYTES = 4 * 1024 * 1024  # at most this much transcript is read per review
HEAD_BYTES = 512
MAX_USER_CHARS = 4_000
MAX_ASSISTANT_CHARS = 24_000
MIN_PIECE = 200
WITHHELD = "[withheld: looked sensitive]"
HEADERS = {False: "## Earlier in this turn (reviewed before; context only)\n", True: "## New work\n"}


@dataclass
class Entry:
    role: str  # user | assistant | tool
    text: str
    new: bool
    name: str | None = None  # tool name
    status: str | None = None  # tool outcome

    def render(self) -> str:
        if self.role == "tool":
            return f"[tool {self.name or 'unknown'} {self.status or 'ok'}] {self.text}\n"
        return f"[{self.role}] {self.text}\n"


@dataclass
class Slice:
    entries: list[Entry] = field(default_factory=list)
    new_turns: int = 0
    redactions: int = 0
    protected: int = 0
    withheld: int = 0
    truncated: bool = False
    skipped_bytes: int = 0
    branch: str | None = None  # the branch checked out when the work ended (habitus.advise.commits)

    @property
    def has_new(self) -> bool:
        return any(e.new for e in self.entries)

    def render(self) -> str:
        out: list[str] = []
        section: bool | None = None
        for entry in self.entries:
            if entry.new is not section:
                section = entry.new
                out.append(HEADERS[section])
            out.append(entry.render())
        return "".join(out)

    def summary(self) -> dict[str, object]:
        return {
            "chars": len(self.render()),
            "entries": len(self.entries),
            "new_turns": self.new_turns,
            "redactions": self.redactions,
            "protected": self.protected,
            "withheld": self.withheld,
            "truncated": self.truncated,
            "skipped_bytes": self.skipped_bytes,
        }


def _clean(text: str, protection: protect.ProtectedPaths, s: Slice) -> str:
    from habitus.redact import looks_sensitive, redact

    masked, hits = protection.mask(text)
    s.protected += hits
    cleaned, count = redact(masked)
    s.redactions += count
    if looks_sensitive(cleaned):
        s.withheld += 1
        return WITHHELD
    return cleaned


def _cap(text: str, limit: int, keep_tail: bool) -> str:
    if len(text) <= limit:
        return text
    return ("… " + text[-(limit - 2) :]) if keep_tail else (text[: limit - 2] + " …")


def entries_of(turns: list[Turn], *, new: bool) -> list[Entry]:
    """The raw entries of some turns (capped, not yet masked or redacted: see `build`)."""
    out: list[Entry] = []
    for turn in turns:
        if turn.user.strip() and not turn.continued:
            out.append(Entry("user", _cap(turn.user, MAX_USER_CHARS, False), new))
        for tool in turn.tools:
            out.append(Entry("tool", " ".join((tool.detail or "").split()), new, tool.name, tool.status))
        if turn.assistant.strip():
            out.append(Entry("assistant", _cap(turn.assistant.strip(), MAX_ASSISTANT_CHARS, True), new))
    return out


def _cleaned(entry: Entry, protection: protect.ProtectedPaths, s: Slice) -> Entry:
    if entry.role == "tool" and entry.text and protection.touches(entry.text):
        s.protected += 1  # a tool call on a protected path is withheld whole
        return Entry("tool", MARK, entry.new, entry.name, entry.status)
    return Entry(entry.role, _clean(entry.text, protection, s), entry.new, entry.name, entry.status)


def _fill(
    group: list[Entry], room: int, protection: protect.ProtectedPaths, s: Slice
) -> tuple[list[Entry], int]:
    """The newest entries of one group, cleaned, that fit in `room` characters (with its header), and
    the size used. Entries are cleaned newest first and only while there is room, so a long turn costs
    what fits, not what it holds."""
    if not group or room <= len(HEADERS[group[0].new]):
        s.truncated = s.truncated or bool(group)
        return [], 0
    left = room - len(HEADERS[group[0].new])
    chosen: list[Entry] = []
    for raw in reversed(group):
        entry = _cleaned(raw, protection, s)
        size = len(entry.render())
        if size <= left:
            chosen.append(entry)
            left -= size
            continue
        piece = left - (size - len(entry.text)) - 2
        if piece >= MIN_PIECE:
            cut = Entry(entry.role, "… " + entry.text[-piece:], entry.new, entry.name, entry.status)
            chosen.append(cut)
            left -= len(cut.render())
        s.truncated = True
        break
    if not chosen:
        return [], 0
    return list(reversed(chosen)), room - left


def build(context: list[Turn], new: list[Turn], budget: int, protection: protect.ProtectedPaths) -> Slice:
    """The slice of these turns within `budget` rendered characters (headers included). New work comes
    first, but up to a sixth of the budget stays for the earlier part of the turn when there is one."""
    s = Slice()
    new_entries, context_entries = entries_of(new, new=True), entries_of(context, new=False)
    context_size = sum(len(e.render()) for e in context_entries) + (
        len(HEADERS[False]) if context_entries else 0
    )
    reserve = min(context_size, budget // 6)
    kept_new, used = _fill(new_entries, budget - reserve, protection, s)
    kept_context, _ = _fill(context_entries, budget - used, protection, s)
    s.entries = kept_context + kept_new
    s.new_turns = sum(1 for t in new if not t.continued) or (1 if kept_new else 0)
    return s


# -- reading a transcript from the cursor ------------------------------------------------------------


def source_id(path: str | os.PathLike[str]) -> str:
    """A transcript's identity for the cursor: a hash of its resolved path (the path is not stored)."""
    return hashlib.sha256(os.path.realpath(path).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _head(path: Path) -> str | None:
    handle, _ = files.open_input(path)  # never blocks on a FIFO
    with handle:
        data = handle.read(HEAD_BYTES)
    return hashlib.sha256(data).hexdigest()[:32] if len(data) == HEAD_BYTES else None


@dataclass
class Window:
    context: list[Turn]
    new: list[Turn]
    cursor: Cursor  # where the next review starts
    skipped_bytes: int = 0


def read_window(path: Path, fmt: str | None, cursor: Cursor) -> Window:
    """The turns since `cursor` (and the earlier part of the turn in progress), and the next cursor.

    A transcript replaced under the same scope (other file, shorter, different first bytes) starts over.
    More than MAX_WINDOW_BYTES of unreviewed work: only the last MAX_WINDOW_BYTES are read.
    """
    from habitus.harness.transcripts import read_transcript

    size = path.stat().st_size
    source, head = source_id(path), _head(path)
    replaced = cursor.exists and (
        cursor.source != source or cursor.offset > size or (cursor.head is not None and head != cursor.head)
    )
    fresh = not cursor.exists or replaced
    offset = 0 if fresh else cursor.offset
    skipped = 0
    if size - offset > MAX_WINDOW_BYTES:
        skipped = size - MAX_WINDOW_BYTES - offset
        offset = size - MAX_WINDOW_BYTES
    turn_offset = offset if fresh else cursor.turn_offset
    chunk = read_transcript(path, start_offset=offset, max_bytes=max(1, size - offset), format=fmt)
    new = chunk.turns
    context: list[Turn] = []
    if not fresh and not skipped and turn_offset < offset and new and new[0].continued:
        # The review lands inside a turn: its earlier part (its prompt, the tools run so far) is context.
        start = max(turn_offset, offset - MAX_WINDOW_BYTES)
        context = read_transcript(path, start_offset=start, max_bytes=offset - start, format=fmt).turns
    prompted = [t for t in new if not t.continued]
    if prompted:
        turn_offset = prompted[-1].offset
    elif skipped:
        turn_offset = offset
    following = Cursor(
        cursor.scope,
        source,
        (head or cursor.head) if not replaced else head,
        chunk.end_offset,
        min(turn_offset, chunk.end_offset),
        cursor.turns,
        cursor.reviews,
        cursor.last_review_at,
        cursor.last_block,
        True,
    )
    return Window(context, new, following, skipped)
