"""Sharing approved habits: a marked block in the files teams already share, and reading it back.

The block (the same in CLAUDE.md, AGENTS.md and GEMINI.md; in a Cursor rule it follows the rule's front
matter) is one list item per approved habit, worded exactly as approved and joined the way `select`
shows habits to the agent, with a comment holding the polarity and the review checksum's first 16 hex:

    <!-- habitus:begin (managed by habitus; edit with `habitus habit`, then export again) -->
    ## Habits
    ...
    - When a test fails -> Read the whole error first <!-- habitus:habit polarity=1 checksum=9c1d2e3f4a5b6c7d -->
    <!-- habitus:end -->

Habits are ordered by their normalised wording, so two machines with the same approved habits write
the same bytes (no ids, no dates: a second export changes nothing). Text outside the block is never
changed; a file without a block gets it appended.

Reading: only list items (`- ` or `* `) inside the block are entries; other lines are prose. An entry
is `CONDITION -> BEHAVIOR`; its comment, when present, gives the polarity (1 without one) and the
exporter's checksum, which also picks the right ` -> ` when a wording contains one. An entry whose text
no longer matches its checksum was edited after export (`edited`): its visible text is what is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from habitus.errors import HabitusError
from habitus.habits.wording import normalize, wording_checksum

FORMATS: dict[str, str] = {
    "claude-md": "CLAUDE.md",
    "agents-md": "AGENTS.md",
    "gemini": "GEMINI.md",
    "cursor": ".cursor/rules/habitus.mdc",
}
BEGIN = "<!-- habitus:begin (managed by habitus; edit with `habitus habit`, then export again) -->"
END = "<!-- habitus:end -->"
HEADING = "## Habits"
INTRO = (
    "Approved in habitus. When a condition holds, follow its habit; "
    "the user's direct instructions always override a habit."
)
NONE = "(No approved habits yet.)"
CURSOR_FRONT_MATTER = (
    "---\ndescription: Habits approved in habitus (managed by habitus; edit with habitus)\n"
    "alwaysApply: true\n---\n\n"
)
SEPARATOR = " -> "
CHECKSUM_CHARS = 16
MAX_ENTRIES = 500

_META = re.compile(r"\s*<!--\s*habitus:habit\s+([^<>]*?)\s*-->\s*$")
_FIELD = re.compile(r"^(polarity|checksum)=(\S+)$")
_HEX = re.compile(r"^[0-9a-f]{12,64}$")


def _invalid(where: str, what: str) -> HabitusError:
    return HabitusError(
        "habits_file_invalid",
        f"{where}: {what}; nothing was changed",
        hint="a habitus block runs from its `<!-- habitus:begin` line to `<!-- habitus:end -->`",
    )


# -- writing ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """One approved habit as the block shows it."""

    condition: str
    behavior: str
    polarity: int
    wording: str  # the review checksum


def _order(habit: Shown) -> tuple[str, str, int]:
    return (normalize(habit.condition), normalize(habit.behavior), habit.polarity)


def render(habits: list[Shown], newline: str = "\n") -> str:
    """The block, markers included, without a final newline."""
    lines = [BEGIN, HEADING, "", INTRO, ""]
    for habit in sorted(habits, key=_order):
        meta = f"polarity={habit.polarity} checksum={habit.wording[:CHECKSUM_CHARS]}"
        lines.append(f"- {habit.condition}{SEPARATOR}{habit.behavior} <!-- habitus:habit {meta} -->")
    if not habits:
        lines.append(NONE)
    lines.append(END)
    return newline.join(lines)


def new_file(block: str, format_name: str) -> str:
    """What a file created by export holds: the block (after the front matter of a Cursor rule)."""
    front = CURSOR_FRONT_MATTER if format_name == "cursor" else ""
    return f"{front}{block}\n"


def locate(text: str, where: str) -> tuple[int, int] | None:
    """(start, end) character offsets of the block's lines (end before the end marker's newline),
    or None when the text has no block. Stray or repeated markers are `habits_file_invalid`."""
    begins: list[int] = []
    ends: list[int] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        bare = line.strip()
        if bare.startswith("<!-- habitus:begin") and bare.endswith("-->"):
            begins.append(offset)
        elif bare == END:
            ends.append(offset + len(line.rstrip("\r\n")))
        offset += len(line)
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise _invalid(
            where, f"{len(begins)} begin and {len(ends)} end markers (expected one of each, in order)"
        )
    return begins[0], ends[0]


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def splice(existing: str | None, block: str, format_name: str, where: str) -> str:
    """The file's new text: its block replaced (or appended), every other character as it was."""
    if not existing:  # absent or empty: a new file (a Cursor rule gets its front matter)
        return new_file(block, format_name)
    newline = newline_of(existing)
    block = block.replace("\n", newline) if newline != "\n" else block
    found = locate(existing, where)
    if found is not None:
        start, end = found
        return existing[:start] + block + existing[end:]
    gap = newline if existing.endswith(("\n", "\r")) else newline * 2
    return existing + gap + block + newline


# -- reading ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SharedHabit:
    """One habit read from a shared file."""

    line: int
    condition: str
    behavior: str
    polarity: int
    exported: str | None  # the exporter's checksum prefix, when the entry carried one
    edited: bool  # its text no longer matches that checksum


@dataclass(frozen=True)
class Rejection:
    line: int
    reason: str  # malformed · injection · secret · bad_request · duplicate_in_file
    message: str

    def public(self) -> dict[str, Any]:
        return {"line": self.line, "reason": self.reason, "message": self.message}


def decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _invalid(where, "not valid UTF-8") from None


def _entry(number: int, item: str) -> SharedHabit | Rejection:
    meta: dict[str, str] = {}
    found = _META.search(item)
    if found is not None:
        item = item[: found.start()]
        for part in found.group(1).split():
            field = _FIELD.match(part)
            if field is None:
                return Rejection(number, "malformed", f"line {number}: unknown habitus:habit field")
            meta[field.group(1)] = field.group(2)
    polarity_text = meta.get("polarity", "1")
    if polarity_text not in ("1", "-1"):
        return Rejection(number, "malformed", f"line {number}: polarity must be 1 or -1")
    polarity = int(polarity_text)
    exported = meta.get("checksum")
    if exported is not None and not _HEX.match(exported):
        return Rejection(number, "malformed", f"line {number}: checksum must be 12 to 64 hex digits")
    item = item.strip()
    # Overlapping matches too: in "0 -> -> -> 0" the right cut shares its space with the one before it.
    cuts = [m.start() for m in re.finditer(f"(?={re.escape(SEPARATOR)})", item)]
    if not cuts:
        return Rejection(number, "malformed", f'line {number}: expected "CONDITION -> BEHAVIOR"')
    splits = [(item[:cut].strip(), item[cut + len(SEPARATOR) :].strip()) for cut in cuts]
    chosen, edited = splits[0], exported is not None
    if exported is not None:
        for condition, behavior in splits:
            if wording_checksum(condition, behavior, polarity).startswith(exported):
                chosen, edited = (condition, behavior), False
                break
    return SharedHabit(number, chosen[0], chosen[1], polarity, exported, edited)


def parse(text: str, where: str) -> tuple[list[SharedHabit], list[Rejection]]:
    """The entries of the text's block and the list items that are not entries. No block, or more
    than MAX_ENTRIES items, is `habits_file_invalid`."""
    found = locate(text, where)
    if found is None:
        raise _invalid(where, "no habitus block")
    start, end = found
    first_line = text.count("\n", 0, start) + 1
    body = text[start:end].splitlines()[1:-1]  # without the marker lines
    entries: list[SharedHabit] = []
    rejected: list[Rejection] = []
    for index, line in enumerate(body):
        number = first_line + 1 + index
        if not line.startswith(("- ", "* ")):
            continue  # headings and prose
        if len(entries) + len(rejected) >= MAX_ENTRIES:
            raise _invalid(where, f"more than {MAX_ENTRIES} entries")
        parsed = _entry(number, line[2:])
        (entries if isinstance(parsed, SharedHabit) else rejected).append(parsed)  # type: ignore[arg-type]
    return entries, rejected
