"""Measuring the local reviewer on labelled slices (what `habitus eval advise` reports).

A case is `{"id", "category", "expected": ["habit:h03", "law:force_push", ...], "entries": [{"role":
"user"|"assistant"|"tool", "text", "name"}], "note"}`: a slice of new work and the finding keys a careful
reviewer would raise on it. Every catalog habit (`{"id", "condition", "behavior", "polarity"}`, as in
tests/fixtures/select/habits.jsonl) is approved; the law is the built-in one. Pairs (case, finding key)
are counted: raised and expected is a true positive, raised and not expected a false positive, expected
and not raised a false negative.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus import codec
from habitus.errors import HabitusError

ROLES = ("user", "assistant", "tool")


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise HabitusError("not_found", f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError):
        raise HabitusError("io_error", f"{path}: not readable as UTF-8 text") from None
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            value = codec.parse_object(line.encode("utf-8"), what=f"{path} line {number}")
            out.append(value)
    return out


def load_habits(path: Path) -> list[Any]:
    from habitus.habits.store import ActiveHabit

    habits = []
    for row in _lines(path):
        if not all(isinstance(row.get(k), str) for k in ("id", "condition", "behavior")) or row.get(
            "polarity"
        ) not in (1, -1):
            raise HabitusError(
                "bad_request", f"{path}: each habit needs id, condition, behavior and polarity"
            )
        habits.append(
            ActiveHabit(row["id"], row["condition"], row["behavior"], row["polarity"], 8000, "", "")
        )
    return habits


def load_cases(path: Path) -> list[dict[str, Any]]:
    cases = _lines(path)
    for case in cases:
        entries = case.get("entries")
        if (
            not isinstance(case.get("id"), str)
            or not isinstance(case.get("expected"), list)
            or not all(isinstance(k, str) for k in case["expected"])
            or not isinstance(entries, list)
            or not all(
                isinstance(e, dict) and e.get("role") in ROLES and isinstance(e.get("text"), str)
                for e in entries
            )
        ):
            raise HabitusError(
                "bad_request", f"{path}: case {case.get('id')!r} needs id, expected and entries"
            )
    return cases


@dataclass
class Report:
    cases: int = 0
    exact: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    categories: dict[str, Counter[str]] = field(default_factory=dict)
    misses: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        def rates(c: Counter[str]) -> dict[str, Any]:
            tp, fp, fn = c["tp"], c["fp"], c["fn"]
            return {
                "tp": tp,
                "fp": fp,
                "fn": fn,
                "precision": round(tp / (tp + fp), 3) if tp + fp else None,
                "recall": round(tp / (tp + fn), 3) if tp + fn else None,
            }

        return {
            "cases": self.cases,
            "exact": self.exact,
            **rates(self.counts),
            "categories": {
                name: {"cases": c["cases"], **rates(c)} for name, c in sorted(self.categories.items())
            },
            "misses": self.misses,
        }


class CatalogEmbedding:
    """An `embed` for habitus.advise.local.review over a catalog without a ledger (evaluation, training):
    the habits' condition and behaviour vectors computed once, select's judgement of the request read
    against the conditions alone (no exemplars), as `habitus eval select` reads them."""

    def __init__(self, embedder: Any, habits: list[Any]) -> None:
        from habitus.habits.vectors import field_input

        self.embedder = embedder
        self.model_id = embedder.model_id
        vectors = embedder.embed(
            [field_input(f, getattr(h, f)) for h in habits for f in ("condition", "behavior")]
        )
        self.conditions, self.behaviors = vectors[0::2], vectors[1::2]
        self.row = {h.id: i for i, h in enumerate(habits)}

    def habit_vectors(self, habits: list[Any]) -> tuple[Any, Any]:
        rows = [self.row[h.id] for h in habits]
        return self.conditions[rows], self.behaviors[rows]

    def __call__(self, chosen: list[Any], units: list[Any]) -> tuple[Any, Any, Any]:
        from habitus.advise.judge import embed_text

        conditions, behaviors = self.habit_vectors(chosen)
        return conditions, behaviors, self.embedder.embed([embed_text(u) for u in units])

    def signals(self, habits: list[Any], units: list[Any], chosen: list[Any], vectors: Any, turn: Any) -> Any:
        from habitus.advise import signals

        conditions, behaviors = self.habit_vectors(habits)
        return signals.gather(
            self.embedder, habits, conditions, None, behaviors, units, chosen, vectors, turn
        )


def evaluate(root: Any, habits: list[Any], cases: list[dict[str, Any]]) -> Report:
    from habitus.advise import local
    from habitus.advise.slice import Entry, Slice
    from habitus.habits.law import parse
    from habitus.models.embedders import load_embedder

    embedder = load_embedder(root, calibrated=local.CALIBRATED)
    embed = CatalogEmbedding(embedder, habits)
    law = parse(None)
    report = Report()
    for case in cases:
        entries = [Entry(e["role"], e["text"], True, e.get("name"), "ok") for e in case["entries"]]
        found = {c.key for c in local.review(Slice(entries=entries), habits, law, embed=embed)}
        expected = set(case["expected"])
        category = str(case.get("category", "none"))
        counts = {"tp": len(found & expected), "fp": len(found - expected), "fn": len(expected - found)}
        report.cases += 1
        report.exact += found == expected
        report.counts.update(counts)
        report.categories.setdefault(category, Counter()).update({"cases": 1, **counts})
        if found != expected:
            report.misses.append(
                {
                    "id": case["id"],
                    "category": category,
                    "expected": sorted(expected),
                    "raised": sorted(found),
                }
            )
    return report
