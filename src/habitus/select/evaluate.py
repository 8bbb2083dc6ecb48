"""Measure a select judge on labelled cases: precision, recall and a confusion table by category.

Cases are JSON lines `{"id", "prompt", "context", "expected", "category"}` (tests/fixtures/select/
README.md; a context message is a string or a chat message `{"role", "content" or "text"}`); the habit catalog is JSON lines `{"id", "condition", "behavior", "polarity"}`. Every catalog
habit is a candidate for every case. The judges run exactly as in `habitus select`: the condition
and behaviour vectors are what `habitus habit` caches (`field_input("condition", ...)`), then analyse, retrieve and
judge; only the ledger is left out.

Scoring counts (case, habit) pairs: a selected habit that is expected is a true positive, one that is
not a false positive, an expected habit not selected a false negative. A case is exact when its
selection equals its expectation.

`split` divides cases into a fit half and a held-out half, stratified by category: within each
category the cases are ordered by SHA-256 of their id and alternate fit, holdout, fit, ...
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from habitus.errors import HabitusError

if TYPE_CHECKING:
    from habitus.embed.engine import Embedder
    from habitus.habits.store import ActiveHabit
    from habitus.state.config import Config

PARTS = ("all", "fit", "holdout")
MAX_CASES = 10_000


@dataclass(frozen=True)
class Case:
    id: str
    prompt: str
    context: tuple[str, ...]
    expected: frozenset[str]
    category: str


def _lines(path: Path, what: str) -> list[tuple[int, dict[str, Any]]]:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HabitusError("not_found", f"{path}: no such {what} file") from None
    except UnicodeDecodeError:
        raise HabitusError("bad_request", f"{path}: not UTF-8") from None
    out = []
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise HabitusError("bad_request", f"{path}:{number}: not valid JSON") from None
        if not isinstance(obj, dict):
            raise HabitusError("bad_request", f"{path}:{number}: expected a JSON object")
        out.append((number, obj))
        if len(out) > MAX_CASES:
            raise HabitusError("bad_request", f"{path}: more than {MAX_CASES} lines")
    return out


def load_catalog(path: Path) -> list[ActiveHabit]:
    from habitus.habits.store import ActiveHabit

    habits = []
    for number, obj in _lines(path, "habit catalog"):
        habit_id, condition, behavior = (obj.get(k) for k in ("id", "condition", "behavior"))
        polarity = obj.get("polarity", 1)
        if not (_filled(habit_id) and _filled(condition) and _filled(behavior)) or polarity not in (1, -1):
            raise HabitusError(
                "bad_request",
                f"{path}:{number}: expected id, condition, behavior (strings) and polarity 1/-1",
            )
        habits.append(ActiveHabit(habit_id, condition, behavior, polarity, 10000, "", ""))
    if len({h.id for h in habits}) != len(habits):
        raise HabitusError("bad_request", f"{path}: habit ids are not unique")
    return habits


def _filled(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())


def load_cases(path: Path, known: set[str]) -> list[Case]:
    cases = []
    for number, obj in _lines(path, "cases"):
        case_id, prompt, context, expected = (
            obj.get("id"),
            obj.get("prompt"),
            _messages(obj.get("context", [])),
            obj.get("expected"),
        )
        if not (
            isinstance(case_id, str)
            and isinstance(prompt, str)
            and isinstance(context, list)
            and all(isinstance(m, str) for m in context)
            and isinstance(expected, list)
            and all(isinstance(e, str) for e in expected)
        ):
            raise HabitusError(
                "bad_request",
                f"{path}:{number}: expected id and prompt (strings), context and expected (lists of strings)",
            )
        unknown = set(expected) - known
        if unknown:
            raise HabitusError("bad_request", f"{path}:{number}: expected names a habit not in the catalog")
        category = named if isinstance(named := obj.get("category"), str) else "uncategorised"
        cases.append(Case(case_id, prompt, tuple(context), frozenset(expected), category))
    return cases


def _messages(context: Any) -> Any:
    """Prior messages as strings: each is a string, or a chat message `{"role", "content"}` (or
    `"text"`, as some transcripts write it), read as its words. Anything else is left for the caller to
    refuse."""
    if not isinstance(context, list):
        return context
    return [_words(m) for m in context]


def _words(message: Any) -> Any:
    if isinstance(message, dict):
        for key in ("content", "text"):
            if isinstance(message.get(key), str):
                return message[key]
    return message


def split(cases: list[Case], part: str) -> list[Case]:
    """The fit or holdout half (stratified by category), or all cases."""
    if part == "all":
        return list(cases)
    keep: set[str] = set()
    for category in sorted({c.category for c in cases}):
        ordered = sorted(
            (c for c in cases if c.category == category),
            key=lambda c: hashlib.sha256(c.id.encode()).hexdigest(),
        )
        keep.update(c.id for c in ordered[(0 if part == "fit" else 1) :: 2])
    return [c for c in cases if c.id in keep]


@dataclass
class Prepared:
    """One case after analysis and retrieval (everything but the gate's decision)."""

    case: Case
    query: Any
    found: Any


def prepare(embedder: Embedder, habits: list[ActiveHabit], cases: list[Case]) -> list[Prepared]:
    from habitus.habits.vectors import field_input
    from habitus.select import clip_context, judge

    matrix = embedder.embed([field_input("condition", h.condition) for h in habits])
    behaviors = embedder.embed([field_input("behavior", h.behavior) for h in habits])
    out = []
    for case in cases:
        query = judge.analyse(case.prompt, clip_context(list(case.context)))
        out.append(Prepared(case, query, judge.retrieve(embedder, matrix, query, behaviors=behaviors)))
    return out


@dataclass
class SelectionTally:
    cases: int = 0
    exact: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, expected: frozenset[str], selected: set[str]) -> None:
        self.cases += 1
        self.exact += expected == selected
        self.tp += len(expected & selected)
        self.fp += len(selected - expected)
        self.fn += len(expected - selected)

    def as_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "exact": self.exact,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": _ratio(self.tp, self.tp + self.fp),
            "recall": _ratio(self.tp, self.tp + self.fn),
        }


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 3) if b else None


@dataclass
class Report:
    total: SelectionTally = field(default_factory=SelectionTally)
    categories: dict[str, SelectionTally] = field(default_factory=dict)
    misses: list[dict[str, Any]] = field(default_factory=list)
    reasons: dict[str, int] = field(default_factory=dict)

    def add(self, case: Case, selected: set[str], reasons: dict[str, int]) -> None:
        self.total.add(case.expected, selected)
        self.categories.setdefault(case.category, SelectionTally()).add(case.expected, selected)
        for reason, count in reasons.items():
            self.reasons[reason] = self.reasons.get(reason, 0) + count
        if selected != case.expected:
            self.misses.append(
                {
                    "id": case.id,
                    "category": case.category,
                    "expected": sorted(case.expected),
                    "selected": sorted(selected),
                }
            )

    def as_dict(self) -> dict[str, Any]:
        total = self.total.as_dict()
        p, r = total["precision"], total["recall"]
        return {
            **total,
            "f1": round(2 * p * r / (p + r), 3) if p and r else None,
            "categories": {k: self.categories[k].as_dict() for k in sorted(self.categories)},
            "reasons": dict(sorted(self.reasons.items())),
            "misses": self.misses,
        }


def decide_all(
    habits: list[ActiveHabit], prepared: list[Prepared], *, limit: int, model: Any = None
) -> Report:
    """The local judge's report for a given gate (default: the fitted one), from prepared cases."""
    from habitus.select import judge

    report = Report()
    for item in prepared:
        live = model.live if model is not None else None
        rows = judge.candidates(habits, item.query, item.found, live_model=live)
        verdict = judge.decide(item.query, item.found, rows, limit=limit, model=model)
        report.add(item.case, {habits[i].id for i in verdict.selected}, verdict.counts())
    return report


def evaluate(
    embedder: Embedder,
    habits: list[ActiveHabit],
    cases: list[Case],
    *,
    limit: int,
    model: str | None = None,
    config: Config | None = None,
) -> Report:
    """Run the local judge (model None) or the model judge `model` over the cases."""
    from habitus.select import judge

    prepared = prepare(embedder, habits, cases)
    if model is None:
        return decide_all(habits, prepared, limit=limit)
    assert config is not None
    report = Report()
    for item in prepared:
        verdict = judge.model_judge(config, model, habits, item.query, item.found, limit=limit)
        report.add(item.case, {habits[i].id for i in verdict.selected}, verdict.counts())
    return report
