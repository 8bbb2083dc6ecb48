"""The local reviewer (default, offline): the slice against the user's approved habits and the law.

Habits. A "do" habit (polarity +1) is missed when its condition is triggered by the new work and the
evidence of its behaviour is absent from the whole slice; an "avoid" habit (polarity -1) is broken when
its condition is triggered and the new work shows the avoided behaviour. Precision comes first: a missed
concern costs less than a wrong one (users of earlier advisors quit over spam).

- Units: the slice split into sentences (prose) and tool calls. Code blocks, quoted lines and tool
  calls are never prose triggers of user-side conditions; quoted spans are removed before matching.
- Trigger: a unit of the right side (the user's prompt for conditions about the user, "When the user
  asks ...", the agent's text and tool calls otherwise) that (1) holds at least two of the condition's
  content words (one when it has only one), stemmed; (2) is not negated ("not ready"), hypothetical
  ("if", "would", "later", ...), a question, or talk about habits; and (3) is close to the condition in
  the embedding space (cosine >= TRIGGER_COS, with the cached condition vector).
- Evidence of a do-habit's behaviour: any agent unit (new or earlier in the turn) holding one of the
  behaviour's distinctive content words (not in the condition, not generic), or, among the units already
  embedded, one close to the behaviour (cosine >= EVIDENCE_COS). Evidence is matched generously,
  as a substring ("pytest" counts for "test"), because a false "absent" is what makes a false concern.
- Violation of an avoid-habit: a new agent unit holding one of the avoided clause's distinctive words,
  not negated, close to the behaviour (cosine >= VIOLATION_COS).

The embedding model loads only when some unit passes the word check for some habit.

Law. New tool calls are checked for destructive commands the user did not ask for in this turn (force
push, `reset --hard`, `clean -f`, `rm -rf` of `/`, `~`, `*` or `.`, dropping tables, `mkfs`, `dd` to a
device, `chmod -R 777`) -> blocker; for disabled checks (`--no-verify`, tests marked skip or xfail) ->
concern; and the new agent text and tool calls for law.md `deny:` phrases, not negated -> concern.

Thresholds were set on tests/fixtures/advise/cases.jsonl and checked for false positives on the real
transcripts in ../shared/fixtures/transcripts (README: "Advice").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from habitus.advise.notes import STOP_WORDS, normalize, stem, word_set

if TYPE_CHECKING:
    import numpy as np

    from habitus.advise.slice import Slice
    from habitus.habits.law import Law
    from habitus.habits.store import ActiveHabit

TRIGGER_COS = 0.55
EVIDENCE_COS = 0.55
VIOLATION_COS = 0.45
MAX_UNITS = 2_000
MAX_UNIT_CHARS = 400
EXCERPT_CHARS = 140

_WORD = re.compile(r"[a-z0-9]+")
# Words too common in coding work to carry a habit's meaning (stemmed).
_GENERIC = frozenset(
    stem(w)
    for w in word_set(
        "use using make making get getting take go going work working thing things way something first "
        "before after always never new existing instead ask asks asked user users agent code change "
        "changes changing write writes writing add adding added one time times sure need needs want "
        "file files run running step steps say says keep let also done try see show look check checking"
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
_QUOTED = re.compile(r"`[^`]*`|\"[^\"]*\"|“[^”]*”|'[^'\s][^']*[^'\s]'")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\[\"'(`])")
_USER_SIDE = re.compile(r"\b(?:the user|users?|i|me|my|asks?|asked|requests?)\b", re.IGNORECASE)


def words(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


def anchors(text: str) -> set[str]:
    return {w for w in words(text) if w not in _GENERIC and len(w) >= 2}


@dataclass
class Unit:
    text: str
    role: str  # user | assistant | tool
    new: bool
    prose: bool  # plain sentence (not code, quote or tool call)
    stems: set[str] = field(default_factory=set)
    lowered: str = ""


def units_of(s: Slice) -> list[Unit]:
    out: list[Unit] = []
    for entry in s.entries:
        if entry.role == "tool":
            text = f"{entry.name or 'tool'}: {entry.text}"[:MAX_UNIT_CHARS]
            out.append(Unit(text, "tool", entry.new, False))
            continue
        fenced = False
        for line in entry.text.splitlines():
            stripped = line.strip()
            if stripped.startswith("```"):
                fenced = not fenced
                continue
            if not stripped:
                continue
            code = fenced or stripped.startswith((">", "    ", "\t", "$ ", "|"))
            for sentence in [stripped] if code else _SENTENCE.split(stripped):
                if len(sentence) >= 3:
                    out.append(Unit(sentence[:MAX_UNIT_CHARS], entry.role, entry.new, not code))
        if len(out) >= MAX_UNITS:
            break
    for unit in out[:MAX_UNITS]:
        unit.lowered = unit.text.lower()
        unit.stems = set(words(unit.text))
    return out[:MAX_UNITS]


@dataclass
class Rule:
    habit: ActiveHabit
    condition: set[str]
    behavior: set[str]  # distinctive words of the behaviour (of its avoided clause, for polarity -1)
    need: int
    user_side: bool

    @classmethod
    def of(cls, habit: ActiveHabit) -> Rule:
        condition = anchors(re.sub(r"^\s*when\b", "", habit.condition, flags=re.IGNORECASE))
        text = habit.behavior
        if habit.polarity < 0:
            text = re.split(r"[;:]|\binstead\b|\brather\b", text, maxsplit=1)[0]
        behavior = anchors(re.sub(r"^\s*do\b(\s+not\b)?", "", text, flags=re.IGNORECASE)) - condition
        return cls(
            habit,
            condition,
            behavior,
            1 if len(condition) <= 1 else 2,
            bool(_USER_SIDE.search(habit.condition)),
        )

    def side(self, unit: Unit) -> bool:
        return unit.role == "user" and unit.prose if self.user_side else unit.role in ("assistant", "tool")

    def candidate(self, unit: Unit) -> bool:
        """The word check of a trigger: enough condition words, on the right side, not negated or
        hypothetical, not a question."""
        if not unit.new or not self.condition or not self.side(unit):
            return False
        text = _QUOTED.sub(" ", unit.lowered) if unit.prose else unit.lowered
        if len(self.condition & set(words(text))) < self.need:
            return False
        doubtful = text.rstrip().endswith("?") or _NEGATED.search(text) or _HYPOTHETICAL.search(text)
        return not (unit.prose and doubtful)

    def evidence(self, units: list[Unit]) -> bool:
        for unit in units:
            if unit.role == "user":
                continue
            if self.behavior & unit.stems:
                return True
            if any(len(w) >= 4 and w in unit.lowered for w in self.behavior):
                return True
        return False

    def violation_words(self, unit: Unit) -> bool:
        if not unit.new or unit.role == "user" or not self.behavior:
            return False
        if not (self.behavior & unit.stems or any(len(w) >= 4 and w in unit.lowered for w in self.behavior)):
            return False
        return not (unit.prose and _NEGATED.search(unit.lowered))


@dataclass
class Candidate:
    note: str
    severity: str
    key: str  # findingKey
    reviewer: str = "local"
    habit: str | None = None
    rank: int = 0  # tie-break: higher first


def _excerpt(text: str) -> str:
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
    """Every local finding in the slice, most important first. `embed(habits, units)` returns
    (condition matrix, behaviour matrix, unit matrix) as unit-length rows; it is called only when some
    unit passes the word check of some habit."""
    units = units_of(s)
    found: list[Candidate] = []
    if law is not None:
        found.extend(_law(units, law, prompt if prompt is not None else _prompt(units)))
    rules = [Rule.of(h) for h in habits]
    pairs: list[tuple[int, int]] = []  # (rule, unit) passing the word check
    for r, rule in enumerate(rules):
        if rule.habit.polarity > 0:
            pairs.extend((r, u) for u, unit in enumerate(units) if rule.candidate(unit))
        else:
            pairs.extend(
                (r, u) for u, unit in enumerate(units) if rule.candidate(unit) or rule.violation_words(unit)
            )
    if not pairs or embed is None:
        return _ordered(found)
    wanted_rules = sorted({r for r, _ in pairs})
    wanted_units = sorted({u for _, u in pairs})
    conditions, behaviors, vectors = embed(
        [rules[r].habit for r in wanted_rules], [units[u] for u in wanted_units]
    )
    rule_row = {r: i for i, r in enumerate(wanted_rules)}
    unit_row = {u: i for i, u in enumerate(wanted_units)}
    for r in wanted_rules:
        rule = rules[r]
        cond_cos = vectors @ conditions[rule_row[r]]
        beh_cos = vectors @ behaviors[rule_row[r]]
        triggers = [
            u
            for rr, u in pairs
            if rr == r and rule.candidate(units[u]) and cond_cos[unit_row[u]] >= TRIGGER_COS
        ]
        if not triggers:
            continue
        trigger = max(triggers, key=lambda u: float(cond_cos[unit_row[u]]))
        if rule.habit.polarity > 0:
            embedded = [
                units[u]
                for u in wanted_units
                if units[u].role != "user" and beh_cos[unit_row[u]] >= EVIDENCE_COS
            ]
            if embedded or rule.evidence(units):
                continue
            found.append(_habit_note(rule, units[trigger], None, float(cond_cos[unit_row[trigger]])))
        else:
            broken = [
                u
                for rr, u in pairs
                if rr == r and rule.violation_words(units[u]) and beh_cos[unit_row[u]] >= VIOLATION_COS
            ]
            if broken:
                worst = max(broken, key=lambda u: float(beh_cos[unit_row[u]]))
                found.append(_habit_note(rule, units[trigger], units[worst], float(beh_cos[unit_row[worst]])))
    return _ordered(found)


def _ordered(found: list[Candidate]) -> list[Candidate]:
    from habitus.advise.notes import RANK

    return sorted(found, key=lambda c: (-RANK[c.severity], -c.rank, c.key))


def _habit_note(rule: Rule, trigger: Unit, violation: Unit | None, score: float) -> Candidate:
    habit = rule.habit
    head = f'Approved habit {habit.id}: "{habit.condition}" -> "{habit.behavior}"'
    if violation is None:
        body = f'The new work matches the condition ("{_excerpt(trigger.text)}") but shows no sign of the behaviour.'
    else:
        body = f'The new work seems to do what the habit avoids ("{_excerpt(violation.text)}").'
    return Candidate(
        f"{head}. {body}",
        "concern",
        f"habit:{habit.id}",
        habit=habit.id,
        rank=habit.confidence_bp + int(score * 100),
    )


# -- the law ------------------------------------------------------------------------------------------

DESTRUCTIVE: tuple[tuple[str, str, re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (name, what, re.compile(pattern), re.compile(asked))
    for name, what, pattern, asked in (
        (
            "force_push",
            "force-pushed",
            r"\bgit\s+push\b[^\n|;&]*?\s(?:--force(?![-\w])|-f\b|\+\w)",
            r"force[- ]?push|--force|push -f",
        ),
        (
            "reset_hard",
            "ran git reset --hard",
            r"\bgit\s+reset\s+[^\n|;&]*--hard\b",
            r"reset --hard|hard reset|discard",
        ),
        ("clean_force", "ran git clean -f", r"\bgit\s+clean\s+-[a-z]*f", r"git clean|discard|untracked"),
        (
            "remove_all",
            "removed a whole tree (rm -rf of /, ~, * or .)",
            r"\brm\s+(?:-[a-z]*\s+)*-[a-z]*r[a-z]*\s+(?:-\S+\s+)*(?:/|~/?|\$home/?|\*|\./?\*?|\.\./?)(?=\s|$|;|&)",
            r"\brm -rf\b|delete (?:everything|all)|wipe",
        ),
        (
            "drop_data",
            "dropped or truncated database data",
            r"\b(?:drop\s+(?:table|database|schema)|truncate\s+table)\b",
            r"\bdrop\b|\btruncate\b",
        ),
        (
            "wipe_device",
            "wrote to a device or made a file system",
            r"\bmkfs(?:\.\w+)?\b|\bdd\s+[^\n]*\bof=/dev/",
            r"mkfs|\bdd\b|format",
        ),
        (
            "chmod_777",
            "made files world-writable",
            r"\bchmod\s+(?:-[a-z]*r[a-z]*\s+)777\b",
            r"777|world[- ]writable",
        ),
    )
)
DISABLED_CHECKS: tuple[tuple[str, str, re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (name, what, re.compile(pattern), re.compile(asked))
    for name, what, pattern, asked in (
        (
            "no_verify",
            "skipped the git hooks with --no-verify",
            r"--no-verify\b",
            r"no-verify|skip (?:the )?hooks?",
        ),
        (
            "skipped_tests",
            "marked tests to be skipped",
            r"@pytest\.mark\.(?:skip|xfail)\b|@unittest\.skip|\b(?:it|test|describe)\.skip\(|\bx(?:it|describe)\(",
            r"\bskip\w*|\bxfail|disable",
        ),
    )
)


def _prompt(units: list[Unit]) -> str:
    """The user's words in the slice (what counts as the user asking for something)."""
    return " ".join(u.lowered for u in units if u.role == "user")


def _law(units: list[Unit], law: Law, prompt: str) -> list[Candidate]:
    from habitus.habits.law import _negated

    asked = prompt.lower()
    found: list[Candidate] = []
    seen: set[str] = set()
    tools = [u for u in units if u.new and u.role == "tool"]
    for group, severity, rules in (
        ("destructive", "blocker", DESTRUCTIVE),
        ("checks", "concern", DISABLED_CHECKS),
    ):
        for name, what, pattern, asked_for in rules:
            hit = next((u for u in tools if pattern.search(u.lowered)), None)
            if hit is None or asked_for.search(asked) or name in seen:
                continue
            seen.add(name)
            tail = "you did not ask for this in the current request; the law asks for confirmation first"
            if group == "checks":
                tail = "the law forbids turning checks or tests off to get a green run unless you asked"
            found.append(
                Candidate(
                    f'The agent {what} ("{_excerpt(hit.text)}"): {tail}.',
                    severity,
                    f"law:{name}",
                    rank=1_000_000,
                )
            )
    for rule in law.deny:
        for unit in (u for u in units if u.new and u.role != "user"):
            text = normalize(unit.text)
            if any(not _negated(text, m.start()) for m in rule.pattern.finditer(text)):
                found.append(
                    Candidate(
                        f'The new work does what law.md line {rule.line} denies ("{rule.phrase}"): '
                        f'"{_excerpt(unit.text)}".',
                        "concern",
                        f"law:deny:{rule.line}:{rule.phrase}",
                        rank=900_000,
                    )
                )
                break
    return found


def embed_with(root: Any, conn: Any) -> Any:
    """An `embed` callable for `review` backed by the configured embedding model and the cached habit
    vectors (computed in memory for any habit that lacks them)."""

    def embed(habits: list[ActiveHabit], units: list[Unit]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        import numpy as np

        from habitus.embed import load_embedder
        from habitus.habits import vectors

        embedder = load_embedder(root)
        rows = [{"id": h.id, "condition": h.condition, "behavior": h.behavior} for h in habits]
        cached = vectors.load(conn, rows, embedder.model_id, embedder.dims)
        missing = [h for h in habits if h.id not in cached]
        if missing:
            texts = [vectors.field_input(f, getattr(h, f)) for h in missing for f in vectors.FIELDS]
            matrix = embedder.embed(texts)
            for i, h in enumerate(missing):
                cached[h.id] = {"condition": matrix[2 * i], "behavior": matrix[2 * i + 1]}
        conditions = np.stack([cached[h.id]["condition"] for h in habits]).astype(np.float32)
        behaviors = np.stack([cached[h.id]["behavior"] for h in habits]).astype(np.float32)
        return conditions, behaviors, embedder.embed([u.text for u in units])

    return embed
