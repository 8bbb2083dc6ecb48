"""Notes: validation, content-free filtering, finding identity, SimHash and the dedupe decision.

Pure functions (stdlib only). The contracts, as in Pi Advisor's `advice.ts`:

- `normalize(text)`: NFKC; prose outside backtick code spans lowercased and whitespace-collapsed; trailing
  `.,;:?!…` stripped. Code spans keep their case, because `Foo` and `foo` can be different identifiers.
- `finding_hash(key)` = sha256("review-finding:" + normalize(key)), 64 hex: the identity of one underlying
  problem. Mute IDs are prefixes of it.
- `signature(note)`: 64-bit SimHash over the note's normalized word tokens (each token hashed with
  sha256("note-token:" + token), first 8 bytes), as 16 hex; `similarity_bp(a, b)` = (64 - hamming) /
  64 in basis points. Tokens are lightly stemmed and stop words dropped, so a paraphrase that keeps the
  content words ("verified" / "verify") stays close.
- `decide(...)`: muted -> never; a severity strictly higher than the highest delivered, at least N turns
  after the last delivery -> re-raised; similarity below the threshold -> possible duplicate; else
  suppressed. A finding never delivered in its scope is delivered.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from habitus.lang.words import ENGLISH_STOP_WORDS, IRREGULAR, word_set

SEVERITIES = ("nit", "concern", "blocker")
RANK = {name: index for index, name in enumerate(SEVERITIES)}
MAX_KEY_CHARS = 200
LABEL_CHARS = 128

# Notes that say nothing, dropped before delivery: a reviewer asked after every turn often answers
# with an acknowledgement (one review log of another agent tool held "Stop." 114 times, "No issue;
# continue." 52 times and "Done." 41 times), and such a note gives the agent nothing to act on.
CONTENT_FREE = frozenset(
    {
        "",
        "stop",
        "done",
        "complete",
        "completed",
        "ok",
        "okay",
        "lgtm",
        "looks good",
        "looks good to me",
        "all good",
        "fine",
        "good",
        "no issue",
        "no issues",
        "no concerns",
        "no concern",
        "no problems",
        "no problem",
        "none",
        "nothing",
        "nothing to add",
        "nothing to report",
        "nothing to flag",
        "continue",
        "keep going",
        "carry on",
        "proceed",
        "on track",
        "n/a",
        "na",
    }
)

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_TRAILING = ".,;:?!…"
_WORD = re.compile(r"[a-z0-9_]+(?:[.'/-][a-z0-9_]+)*")


STOP_WORDS = ENGLISH_STOP_WORDS | word_set(
    "again both doing down few how like mine more most off once only out over per so too under unless until "
    "up very via what whenever where which who why yours"
)


def normalize(text: str) -> str:
    """The dedupe form of a note or finding key (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    position = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(" ".join(text[position : match.start()].lower().split()))
        out.append(match.group(0))
        position = match.end()
    out.append(" ".join(text[position:].lower().split()))
    joined = " ".join(part for part in out if part)
    return joined.rstrip(_TRAILING + " ")


def content_free(note: str) -> bool:
    """True when every clause of the note is an acknowledgement ("ok", "No issue; continue.", "Done.")."""
    text = unicodedata.normalize("NFKC", note).lower()
    clauses = [" ".join(re.sub(r"[^\w/ ]+", " ", c).split()) for c in re.split(r"[.;,!?:\n—–-]+", text)]
    return all(clause in CONTENT_FREE for clause in clauses)


def finding_hash(key: str) -> str:
    return hashlib.sha256(("review-finding:" + normalize(key)).encode("utf-8")).hexdigest()


_SUFFIXES = ("ational", "ations", "ation", "ments", "ment", "ings", "ing", "edly", "ed", "ies", "es", "s")


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """Advise's own suffix stripper (irregular verbs from the shared table first): the SimHash
    signatures of delivered notes and local.py's prefix matching ("cod" starts "coding") rest on it.
    habitus.lang.words.stem (Snowball) merges words this room keeps apart ("exception" / "except"),
    so the switch belongs with a rework of the local reviewer."""
    word = IRREGULAR.get(word, word)
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("i" if suffix == "ies" else "")
            if suffix in ("ings", "ing", "edly", "ed") and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # logging -> log, shipped -> ship
            break
    if word.endswith("y") and len(word) > 3:
        word = word[:-1] + "i"
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def tokens(text: str) -> list[str]:
    """Content-word stems of a normalized text (stop words dropped)."""
    return [stem(w) for w in _WORD.findall(normalize(text)) if w not in STOP_WORDS]


def signature(note: str) -> str:
    """64-bit SimHash of the note's tokens, as 16 lower-case hex digits."""
    weights = [0] * 64
    for token in tokens(note) or [normalize(note)]:
        value = int.from_bytes(hashlib.sha256(("note-token:" + token).encode("utf-8")).digest()[:8], "big")
        for bit in range(64):
            weights[bit] += 1 if value >> bit & 1 else -1
    result = 0
    for bit in range(64):
        if weights[bit] > 0:
            result |= 1 << bit
    return f"{result:016x}"


def similarity_bp(a: str, b: str) -> int:
    """1 - hamming/64 of two signatures, in basis points (10000 = identical)."""
    distance = bin(int(a, 16) ^ int(b, 16)).count("1")
    return (64 - distance) * 10_000 // 64


def label_of(key: str) -> str:
    """A display label for a finding key: one line, at most LABEL_CHARS."""
    line = " ".join(unicodedata.normalize("NFKC", key).split())
    line = "".join(c for c in line if unicodedata.category(c)[0] != "C")
    return line if len(line) <= LABEL_CHARS else line[: LABEL_CHARS - 1] + "…"


@dataclass(frozen=True)
class Delivered:
    """What the scope remembers about a finding it delivered."""

    severity: str
    signature: str
    turn: int


@dataclass(frozen=True)
class Decision:
    action: str  # deliver | suppressed | muted
    tag: str | None = None  # re-raised | possible-duplicate (on deliver)
    similarity_bp: int | None = None


def decide(
    *,
    severity: str,
    note_signature: str,
    previous: Delivered | None,
    muted: bool,
    turn: int,
    reraise_min_turns: int,
    threshold_bp: int,
) -> Decision:
    """The dedupe decision for one note of a finding (see the module docstring)."""
    if muted:
        return Decision("muted")
    if previous is None:
        return Decision("deliver")
    if (
        reraise_min_turns > 0
        and RANK[severity] > RANK[previous.severity]
        and turn - previous.turn >= reraise_min_turns
    ):
        return Decision("deliver", "re-raised")
    similarity = similarity_bp(note_signature, previous.signature)
    if similarity < threshold_bp:
        return Decision("deliver", "possible-duplicate", similarity)
    return Decision("suppressed", None, similarity)


def fit(note: str, limit: int) -> str:
    """The note cut to `limit` characters, visibly."""
    note = note.strip()
    return note if len(note) <= limit else note[: max(1, limit - 1)].rstrip() + "…"
