"""The local judge's gate: which retrieved habits apply to the prompt now.

Cosine similarity alone cannot tell a request from a negated, hypothetical, quoted or meta prompt
about the same thing: they score alike. The gate is two logistic models whose weights are data
(`gate.json`, fitted by scripts/calibrate_select.py on labelled prompts in eight languages):

- the *live-request classifier* reads a text's embedding (multilingual) and gives the probability
  that it asks for something now, rather than negating, deferring, quoting or talking about habits;
  it is what makes the gate work in every language the embedder reads;
- the *pair model* reads, for one (prompt, habit) pair, the similarities (best of condition and
  exemplars, condition alone, margin over the next habit in the prompt and in the habit's best clause,
  rank; and with condition and behaviour together, and that margin), the live probability of the
  prompt and of its best-matching clause, and the English rule features of `text` (mood, quotation,
  talk about habits, the action lexicon, shared object words), which count only for a prompt read as
  English. docs/quality.md gives the measured gain of each rule feature.

Weights are per embedding model kind (e5, minilm), with a second fit for catalogs of fewer than
SMALL_CATALOG habits (a habit's margin over the next one is wider there): a model without weights gets
no guidance.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from habitus.errors import HabitusError
from habitus.lang.language import is_english
from habitus.select import text

if TYPE_CHECKING:
    from habitus.select.judge import Query

FEATURES = (
    "best",  # best cosine of the prompt's texts with the habit's condition or exemplars
    "condition",  # best cosine with the condition alone
    "margin",  # first: over the next habit; others: below the first
    "first",  # ranked first
    "live",  # live-request probability of the whole prompt
    "unit_live",  # live-request probability of the clause that matches the habit best
    "relative",  # best minus the prompt's cosine with the mean of reference conditions (its hubness)
    "catalog",  # how many habits were compared: log2(n) / 5, at most 1 (32 or more)
    "small_margin",  # margin, for a catalog under 32 habits (its own slope)
    "english",  # the prompt reads as English: the rule features below apply
    "foreign_best",  # best, for a prompt not read as English (its own slope)
    "foreign_live",  # live, for a prompt not read as English
    "blocked",  # English rules: the clause is negated, hypothetical or past, or names another action
    "mention",  # English rules: a question or statement about an action condition
    "meta",  # talk about habits (in several languages)
    "quoted",  # the prompt quotes or pastes material
    "same_action",  # English rules: the clause names the condition's action
    "shared",  # English rules: object words in common (0, 0.5, 1)
    "event",  # the condition is an event ("When a test fails"), not an activity
    "raw",  # best cosine with the condition, the prompt not adapted
    "rival",  # how much nearer the habit than any other known situation (adapter.rivals)
    "clause_margin",  # as margin, among the candidates of the clause that matches the habit best
    "joint",  # best cosine of the adapted prompt's texts with unit(condition + behaviour)
    "joint_margin",  # joint over the best other habit's joint
    "situation",  # how likely the prompt is in the habit's situation, read through the bank (adapter)
)
RULES = ("blocked", "mention", "meta", "quoted", "same_action", "shared")


@dataclass(frozen=True)
class Logistic:
    weights: tuple[float, ...]
    bias: float

    def probability(self, values: Any) -> float:
        z = self.bias + sum(w * float(x) for w, x in zip(self.weights, values, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


@dataclass(frozen=True)
class Gate:
    """One embedding model kind's gate: the pair model, its acceptance threshold and the live-request
    classifier (weights over the embedding's dimensions)."""

    pair: Logistic
    accept_bp: int
    live: Logistic
    dropped: tuple[str, ...] = ()  # rule features the calibration found no gain in (weight 0)
    reference: tuple[float, ...] = ()  # mean vector of reference conditions (for "relative")
    accept_foreign_bp: int | None = None  # the threshold for a prompt not read as English

    def probability(self, values: tuple[float, ...]) -> float:
        return self.pair.probability(values)

    def threshold(self, values: tuple[float, ...]) -> int:
        """The acceptance threshold for a row: a prompt not read as English has its own, chosen for its
        own precision (its cosines with English conditions are lower, and so are its probabilities,
        but its false selections are fewer: the English near misses set accept_bp)."""
        if self.accept_foreign_bp is None or values[FEATURES.index("english")]:
            return self.accept_bp
        return self.accept_foreign_bp


@cache
def weights() -> dict[str, Any]:
    return json.loads(resources.files("habitus.select").joinpath("gate.json").read_text(encoding="utf-8"))


SMALL_CATALOG = 16  # under this many habits, the gate fitted on small catalogs applies


@cache
def for_kind(kind: str, habits: int = SMALL_CATALOG) -> Gate:
    """The gate fitted for this kind of embedding model (and for a small catalog when there are fewer
    than SMALL_CATALOG habits and such a gate exists); `model_unavailable` when there is none."""
    models = weights().get("models", {})
    data = models.get(f"{kind}/small") if habits < SMALL_CATALOG else None
    data = data or models.get(kind)
    if data is None:
        raise HabitusError(
            "model_unavailable",
            f"the local select judge has no gate for embedding model kind {kind}",
            hint="`habitus model use default`",
        )
    names = data.get("features", FEATURES)  # the features this fit was made over, in its weights' order
    given = dict(zip(names, data["pair"]["weights"], strict=True))
    if set(given) - set(FEATURES):
        raise HabitusError(
            "model_unavailable",
            f"the local select judge's gate for {kind} names features this version does not compute",
            hint="reinstall habitus",
        )
    return Gate(  # a feature the fit did not know weighs nothing (it was zero or absent when fitted)
        pair=Logistic(tuple(float(given.get(name, 0.0)) for name in FEATURES), float(data["pair"]["bias"])),
        accept_bp=int(data["accept_bp"]),
        live=Logistic(tuple(data["live"]["weights"]), float(data["live"]["bias"])),
        dropped=tuple(data.get("dropped", ())),
        reference=tuple(data.get("reference", ())),
        accept_foreign_bp=int(data["accept_foreign_bp"]) if "accept_foreign_bp" in data else None,
    )


def hubness(vector: Any, reference: tuple[float, ...]) -> float:
    """The prompt's cosine with the mean reference condition: how close it is to conditions at all."""
    import numpy as np

    return float(np.dot(np.asarray(reference, dtype=np.float32), vector)) if reference else 0.0


def live_probability(vector: Any, kind: str, live: Logistic | None = None) -> float:
    import numpy as np

    model = live or for_kind(kind).live  # the live classifier is the same fit for every catalog size
    z = model.bias + float(np.dot(np.asarray(model.weights, dtype=np.float32), vector))
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def features(
    *,
    best: float,
    condition: float,
    margin: float,
    first: bool,
    live: float,
    unit_live: float,
    hub: float,
    habits: int,
    query: Query,
    unit: text.Clause | None,
    condition_read: text.Condition,
    raw: float = 0.0,
    rival: float = 0.0,
    clause_margin: float | None = None,
    joint: float = 0.0,
    joint_margin: float = 0.0,
    situation: float = 0.0,
) -> tuple[float, ...]:
    english = float(is_english(query.unquoted))
    catalog = min(1.0, math.log2(max(1, habits)) / 5)
    blocked = mention = same = shared = 0.0
    if unit is not None and english:
        blocked = float(
            unit.mood in ("negated", "hypothetical", "past")
            or not text.compatible(unit.action, condition_read.action)
        )
        mention = float(unit.mood in ("question", "statement") and not condition_read.event)
        same = float(text.same_action(unit.action, condition_read.action))
        wanted = text.specific(condition_read.objects) or condition_read.objects
        shared = min(len(unit.objects & wanted), 2) / 2
    return (
        best,
        condition,
        margin,
        float(first),
        live,
        unit_live,
        best - hub,
        catalog,
        margin * (1 - catalog),
        english,
        best * (1 - english),
        live * (1 - english),
        blocked,
        mention,
        float(query.meta),
        float(query.quoted > 0),
        same,
        shared,
        float(condition_read.event),
        raw,
        rival,
        margin if clause_margin is None else clause_margin,
        joint,
        joint_margin,
        situation,
    )
