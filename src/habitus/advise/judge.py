"""Semantic judgement of the new work against each approved habit, in any language the embedder reads.

Per habit, two questions, answered from one batch of embeddings:

- is the habit's situation in the new work? The condition against the new units of the right side (the
  user's request for a condition about the user, the agent's text and tool calls otherwise): the best
  cosine, how far it stands above the other habits' best for the same unit (one unit is about one
  situation), and the request itself (a bug report sets up "When fixing a bug");
- does the work show the behaviour? The behaviour against every agent unit of the turn (tool calls
  say what was done: "pip install dist/*.whl" in a fresh venv is evidence whatever the prose says).

These cosines, the word rules' own verdicts (habitus.advise.local.Rule: trigger, evidence, violation)
and a doubt cue of the best trigger unit (a question, a negation, a hypothetical, in the supported
languages) are the features of a logistic scorer trained on the labelled dev slices of
tests/fixtures/advise (scripts/train_advise.py; cross-validated by habit in scripts/cv_advise.py). Every
unit is also compared with every habit: a habit counts by how far it stands above the others for that
unit (some units are close to all habits), and a tool call is embedded with its actions in words
(habitus.advise.actions). Its weights are data
(judge_weights.json), one set per embedding model id: a model without weights gets no semantic notes
(the word rules still run), because cosines of different models are not comparable.

Only a bounded set of units is embedded (MAX_EMBED: the request, the newest tool calls and the last
sentences of the agent's text), so a review stays fast at Stop.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from habitus.advise import signals

if TYPE_CHECKING:
    import numpy as np

    from habitus.advise.local import Rule, Unit

MAX_EMBED = 16
# The situation probability a habit needs when what it asks for by name is absent from the turn
# (`fired`): chosen on the sets of catalogs D-H, which the shipped scorer never saw (docs/quality.md).
MISSING_SITUATION = 0.8
MAX_EMBED_SIGNALS = 10  # with the meaning signals (E5: about ten times MiniLM's cost per unit)
MAX_USER = 2
MAX_TOOLS = 6
MAX_CONTEXT_TOOLS = 2
MAX_EMBED_CHARS = 300
TURN_CHARS = 600
WEIGHTS = "judge_weights.json"

SITUATION = (
    "trig",
    "trig_margin",
    "trig_z",
    "request",
    "request_z",
    "turn_z",
    "turn_top",
    "whole_z",
    "unit_whole_z",
    "unit_cond_z",
    "combined",
    "combined_top",
    "combined_margin",
    "rule_trigger",
    "doubt",
    "meta",
)
BEHAVIOUR = (
    "evidence",
    "evidence_z",
    "evidence_tool",
    "evidence_unit_z",
    "evidence_all",
    "evidence_prose_z",
    "excess",
    "rule_evidence",
    "rule_violation",
    "avoid",
    "avoid_x_evidence_tool",
    "avoid_x_excess",
)
FEATURES = SITUATION + BEHAVIOUR
# With E5 (select's prompt adapter is fitted for it), the judge also reads the meaning signals of
# habitus.advise.signals: the request as select judges it, the units carried by the adapter, the tool
# calls' actions in words, the agent's prose as passages.
SITUATION_V2 = SITUATION + signals.SITUATION
BEHAVIOUR_V2 = BEHAVIOUR + signals.BEHAVIOUR
FEATURES_V2 = SITUATION_V2 + BEHAVIOUR_V2

# A question, a negation or a hypothetical near the claim ("not ready yet", "noch nicht", "todavía
# no", "pas encore", "ainda não", "ещё не", "まだ", "还没"): the claim is not made.
_DOUBT = re.compile(
    r"[?？]\s*$|\b(?:not|never|no|if|would|could|might|maybe|once|later|yet|"
    r"nicht|noch|kein|keine|wenn|würde|könnte|falls|"
    r"todavía|aún|sería|podría|quizás|"
    r"pas|jamais|encore|pourrait|serait|"
    r"não|ainda|seria|poderia|talvez|"
    r"не|нет|ещё|еще|если|бы|можно)\b|まだ|ない|ません|なら|還沒|还没|没有|未|如果|可能",
    re.IGNORECASE,
)


# Talk about habits ("what habits do I have about releases") is not the situation itself.
_META = re.compile(r"\bhabit|\bgewohnheit|\bhábito|\bhabitude|\bпривычк|習慣|习惯|\bhabitus\b", re.IGNORECASE)


@dataclass
class Scored:
    rule: Rule
    probability: float
    trigger: Unit | None


def choose(units: list[Unit], limit: int = MAX_EMBED) -> list[int]:
    """Indexes of the units worth embedding, at most `limit`: the new request, the newest tool calls,
    the last sentences of the new agent text, and a few earlier tool calls of the turn (evidence)."""
    new_user = [i for i, u in enumerate(units) if u.new and u.role == "user" and u.prose]
    new_tools = [i for i, u in enumerate(units) if u.new and u.role == "tool"]
    new_prose = [i for i, u in enumerate(units) if u.new and u.role == "assistant" and u.prose]
    old_tools = [i for i, u in enumerate(units) if not u.new and u.role == "tool"]
    chosen = new_user[:MAX_USER] + new_tools[-MAX_TOOLS:] + old_tools[-MAX_CONTEXT_TOOLS:]
    room = max(0, limit - len(chosen))
    chosen += new_prose[-room:] if room else []
    return sorted(set(chosen))[:limit]


def embed_limit(weights: dict[str, Any] | None) -> int:
    """How many units a review embeds for this scorer (`choose`)."""
    return MAX_EMBED_SIGNALS if weights is not None and reads_signals(weights) else MAX_EMBED


def embed_text(unit: Unit) -> str:
    """What is embedded for a unit: a tool call with its actions in words (habitus.advise.actions)."""
    if unit.role == "tool":
        from habitus.advise import actions

        return actions.described(unit.text[:MAX_EMBED_CHARS])
    return unit.text[: TURN_CHARS if unit.role == "turn" else MAX_EMBED_CHARS]


def turn_text(units: list[Unit]) -> str:
    """The new work as one text: the request, then the tool calls and the agent's last words."""
    new = [u for u in units if u.new]
    parts = [u.text[:200] for u in new if u.role == "user"][:1]
    parts += [_tool_words(u.text) for u in new if u.role == "tool"][-4:]
    parts += [u.text for u in new if u.role == "assistant"][-4:]
    return " ".join(parts)[:TURN_CHARS]


def _tool_words(text: str) -> str:
    from habitus.advise import actions

    found = actions.of(text)
    return text[:80] + (f" ({'; '.join(found)})" if found else "")


@dataclass
class Words:
    """What the word rules saw of one habit in the whole slice (computed once per review)."""

    triggers: list[int]  # units passing its trigger word check
    violations: list[int]  # units holding its avoided words
    evidence: bool  # a do-habit's distinctive words appear in some agent unit
    possible: bool  # a note is possible at all (see `word_checks`)
    violation_tool: bool  # an avoided word in a tool call


def word_checks(rules: list[Rule], every: list[Unit]) -> list[Words]:
    out = []
    for rule in rules:
        triggers = [u for u, unit in enumerate(every) if rule.candidate(unit)] if rule.required else []
        violations = [u for u, unit in enumerate(every) if rule.violation_words(unit)]
        out.append(
            Words(
                triggers,
                violations,
                rule.absence_checked and rule.evidence(every),
                # A habit that only says what to avoid ("do not ...", "X instead of Y") is broken only
                # by doing the avoided thing, so absence proves nothing: its note needs an avoided word
                # in the new work (tool calls are code, and code reads the same in every language).
                not rule.avoided or bool(rule.positive) or bool(violations),
                any(every[u].role == "tool" for u in violations),
            )
        )
    return out


def features(
    rules: list[Rule],
    units: list[Unit],
    words: list[Words],
    conditions: np.ndarray,
    behaviors: np.ndarray,
    vectors: np.ndarray,
    turn: np.ndarray,
) -> tuple[np.ndarray, list[int | None], np.ndarray]:
    """The feature matrix (one row per rule, FEATURES columns), each rule's best trigger unit (an
    index into `units`, the embedded units, None when none is on its side) and whether a note is
    possible at all; `words` are the word rules' verdicts on the whole slice, and `turn`
    is the vector of the whole new work (`turn_text`)."""
    import numpy as np

    n = len(rules)
    out = np.zeros((n, len(FEATURES)), dtype=np.float64)
    best: list[int | None] = [None] * n
    allowed = np.array([w.possible for w in words], dtype=bool)
    if not n or not len(units):
        return out, best, allowed
    cond = vectors @ conditions.T  # units x rules
    beh = vectors @ behaviors.T
    agent = np.array([u.role in ("assistant", "tool") for u in units])
    tool = np.array([u.role == "tool" for u in units])
    new = np.array([u.new for u in units])
    asked = np.array([u.role == "user" for u in units]) & new
    low = -1.0
    trig = np.full(n, low)
    margin = np.zeros(n)
    for r, rule in enumerate(rules):
        side = asked if rule.user_side else agent & new
        if side.any():
            column = np.where(side, cond[:, r], low)
            top = int(column.argmax())
            best[r] = top
            trig[r] = column[top]
            margin[r] = cond[top, r] - float(np.delete(cond[top], r).max()) if n > 1 else 0.0
    request = np.where(asked[:, None], cond, low).max(axis=0) if asked.any() else np.zeros(n)
    evidence = np.zeros(n)
    excess = np.zeros(n)
    for r in range(n):
        others = agent.copy()
        if best[r] is not None:
            others[best[r]] = False  # the claim itself is no evidence of the behaviour
        if others.any():
            evidence[r] = float(np.where(others, beh[:, r], low).max())
            excess[r] = float(np.where(others, beh[:, r] - cond[:, r], low).max())
    evidence_tool = np.where(tool[:, None], beh, low).max(axis=0) if tool.any() else np.zeros(n)
    trig_z, request_z, evidence_z = _z(trig), _z(request), _z(evidence)
    turn_cos = conditions @ turn
    turn_z = _z(turn_cos)
    turn_top = (turn_cos >= np.sort(turn_cos)[-min(2, n)]).astype(np.float64)
    whole = conditions + behaviors  # the habit as a whole: its situation and what is done in it
    whole = whole / np.maximum(np.linalg.norm(whole, axis=1, keepdims=True), 1e-12)
    whole_z = _z(whole @ turn)
    # Per unit, how far each habit stands above the others for it (a unit is about one situation, and
    # some units are close to every habit): the best such standing over the new units, any side.
    unit_whole = np.where(new[:, None], _z_rows(vectors @ whole.T), low).max(axis=0)
    unit_cond = np.where(new[:, None], _z_rows(cond), low).max(axis=0)
    combined = unit_whole + unit_cond + whole_z
    combined_top = (combined >= combined.max()).astype(np.float64)
    ordered = np.sort(combined)
    runner_up = np.where(combined >= ordered[-1], ordered[-2] if n > 1 else ordered[-1], ordered[-1])
    combined_margin = combined - runner_up  # how far it stands above the best other habit (or below the best)
    beh_z = _z_rows(beh)
    evidence_unit = np.where(agent[:, None], beh_z, low).max(axis=0) if agent.any() else np.zeros(n)
    # The agent's own words may say the behaviour was done ("the query uses bound parameters"), even
    # in the sentence that also shows the situation.
    evidence_all = np.where(agent[:, None], beh, low).max(axis=0) if agent.any() else np.zeros(n)
    prose = agent & ~tool
    evidence_prose = np.where(prose[:, None], beh_z, low).max(axis=0) if prose.any() else np.zeros(n)
    meta = float(any(u.new and u.role != "tool" and _META.search(u.text) for u in units))
    for r, rule in enumerate(rules):
        avoid = 1.0 if rule.avoided else 0.0
        u = best[r]
        trigger_unit = units[u] if u is not None else None
        out[r] = (
            trig[r],
            margin[r],
            trig_z[r],
            request[r],
            request_z[r],
            turn_z[r],
            turn_top[r],
            whole_z[r],
            unit_whole[r],
            unit_cond[r],
            combined[r],
            combined_top[r],
            combined_margin[r],
            float(bool(words[r].triggers)),
            float(bool(trigger_unit and trigger_unit.prose and _DOUBT.search(trigger_unit.lowered))),
            meta,
            evidence[r],
            evidence_z[r],
            evidence_tool[r],
            evidence_unit[r],
            evidence_all[r],
            evidence_prose[r],
            excess[r],
            float(words[r].evidence),
            float(words[r].violation_tool),
            avoid,
            avoid * evidence_tool[r],
            avoid * excess[r],
        )
    return out, best, allowed


def _z_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row standardised across its columns (a unit's cosines to every habit)."""
    import numpy as np

    if matrix.shape[1] < 2:
        return np.zeros_like(matrix)
    spread = np.maximum(matrix.std(axis=1, keepdims=True), 1e-6)
    return (matrix - matrix.mean(axis=1, keepdims=True)) / spread


def _z(values: np.ndarray) -> np.ndarray:
    import numpy as np

    if len(values) < 2:
        return np.zeros_like(values)
    spread = float(values.std())
    return (values - float(values.mean())) / max(spread, 1e-6)


@lru_cache(maxsize=1)
def _all_weights() -> dict[str, Any]:
    try:
        raw = resources.files("habitus.advise").joinpath(WEIGHTS).read_text("utf-8")
        data = json.loads(raw)
    except (OSError, ValueError):
        return {}
    return data.get("models", {}) if isinstance(data, dict) else {}


def known_name(model_id: str) -> str:
    """The packaged model's name for an id ("NAME@FINGERPRINT"): its own name, or the name weights were
    trained under for the same fingerprint (the "default" setting is E5 under another name)."""
    name, _, fingerprint = model_id.partition("@")
    for trained in _all_weights():
        other, _, same = trained.partition("@")
        if fingerprint and same == fingerprint:
            return other
    return name


def weights_for(model_id: str) -> dict[str, Any] | None:
    """The trained scorer for this embedding model (or one of the same fingerprint: the same files and
    manifest), or None (no semantic notes then)."""
    fingerprint = model_id.partition("@")[2]
    entry = _all_weights().get(model_id) or _all_weights().get(f"{known_name(model_id)}@{fingerprint}")
    if not isinstance(entry, dict) or entry.get("features") not in (list(FEATURES), list(FEATURES_V2)):
        return None
    return entry


def reads_signals(weights: dict[str, Any]) -> bool:
    """Whether this scorer reads habitus.advise.signals (FEATURES_V2) besides the cosines."""
    return weights.get("features") == list(FEATURES_V2)


def _stage(matrix: np.ndarray, stage: dict[str, Any]) -> np.ndarray:
    """A logistic stage: a probability per row. A "softmax" stage (the situation stage of FEATURES_V2)
    scores every habit of the review against the others and against none of them: which situation, if
    any, the turn is in (a turn is about one or two things)."""
    import numpy as np

    mean = np.asarray(stage["mean"], dtype=np.float64)
    scale = np.asarray(stage["scale"], dtype=np.float64)
    w = np.asarray(stage["w"], dtype=np.float64)
    z = np.nan_to_num((matrix - mean) / scale) @ w  # a value that cannot be computed reads as the mean
    if stage.get("kind") == "softmax":
        scores = np.append(z, float(stage["b"]))
        scores = np.exp(scores - scores.max())
        return (scores / scores.sum())[:-1]
    return 1.0 / (1.0 + np.exp(-np.clip(z + float(stage["b"]), -40, 40)))


def probabilities(matrix: np.ndarray, weights: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """P(situation present) and P(behaviour missing or broken | situation), per row of `matrix` (the
    habits of one review: a softmax situation stage reads them together)."""
    cut = len(SITUATION_V2) if reads_signals(weights) else len(SITUATION)
    situation = _stage(matrix[:, :cut], weights["situation"])
    behaviour = _stage(matrix[:, cut:], weights["behaviour"])
    return situation, behaviour


def combined(
    matrix: np.ndarray, meaning: tuple[np.ndarray, np.ndarray], units: list[Unit], best: list[int | None]
) -> np.ndarray:
    """FEATURES_V2 rows: the cosine features (FEATURES) with the signals' situation and behaviour
    features after their own kind. A cosine feature that `features` could not compute (no tool call,
    no other agent unit, no request: it writes 0 or -1 there) is marked missing (NaN), which the
    scorer reads as its mean: a turn of one sentence is not evidence of anything."""
    import numpy as np

    out = np.hstack([matrix[:, : len(SITUATION)], meaning[0], matrix[:, len(SITUATION) :], meaning[1]])
    column = {name: i for i, name in enumerate(FEATURES_V2)}
    roles = [u.role for u in units]
    agent = sum(r != "user" for r in roles)
    gaps = {
        "request": "user" not in roles,
        "request_z": "user" not in roles,
        "evidence_tool": "tool" not in roles,
        "avoid_x_evidence_tool": "tool" not in roles,
        "evidence_unit_z": not agent,
        "evidence_all": not agent,
        "evidence_prose_z": not any(u.role == "assistant" and u.prose for u in units),
    }
    for name, missing in gaps.items():
        if missing:
            out[:, column[name]] = np.nan
    for r, trigger in enumerate(best):
        if trigger is None:
            out[r, [column[n] for n in ("trig", "trig_margin", "trig_z")]] = np.nan
        # evidence and excess read the agent units other than the trigger
        if agent - int(trigger is not None and units[trigger].role != "user") < 1:
            out[r, [column[n] for n in ("evidence", "evidence_z", "excess", "avoid_x_excess")]] = np.nan
    return out


def fired(
    situation: np.ndarray,
    behaviour: np.ndarray,
    weights: dict[str, Any],
    allowed: np.ndarray,
    missing: frozenset[int] = frozenset(),
) -> list[int]:
    """The habits (row indexes) that get a note: among the `top` most likely situations of the slice
    (a turn is about one or two things; judging all habits multiplies the false notes), those whose
    situation and missing behaviour both reach their thresholds. A habit in `missing` (what it asks for
    by name is nowhere in the turn: habitus.advise.artifacts) needs no behaviour score, but the most
    likely situation of the slice and a probability of MISSING_SITUATION."""
    import numpy as np

    order = [int(r) for r in np.argsort(-situation, kind="stable")]
    top = order[: int(weights["top"])]
    found = {
        r
        for r in top
        if allowed[r]
        and situation[r] >= float(weights["situation_threshold"])
        and behaviour[r] >= float(weights["behaviour_threshold"])
    }
    if order and order[0] in missing and allowed[order[0]] and situation[order[0]] >= MISSING_SITUATION:
        found.add(order[0])
    return sorted(found)


def judge(
    rules: list[Rule],
    units: list[Unit],
    words: list[Words],
    conditions: np.ndarray,
    behaviors: np.ndarray,
    vectors: np.ndarray,
    turn: np.ndarray,
    weights: dict[str, Any],
    meaning: signals.Signals | None = None,
    missing: frozenset[int] = frozenset(),
) -> list[Scored]:
    """The rules that get a note (`fired`; `missing`: rows whose named behaviour is absent), with their
    trigger unit. A scorer that reads the signals (`reads_signals`) needs `meaning`
    (habitus.advise.signals.gather for these units); without it, no note."""
    matrix, best, allowed = features(rules, units, words, conditions, behaviors, vectors, turn)
    if not len(matrix):
        return []
    if reads_signals(weights):
        if meaning is None:
            return []
        matrix = combined(matrix, signals.features(meaning, units, conditions, behaviors), units, best)
        allowed = allowed & ~signals.vetoed(meaning)
    situation, behaviour = probabilities(matrix, weights)
    return [
        Scored(rules[r], float(situation[r] * behaviour[r]), units[top])
        for r in fired(situation, behaviour, weights, allowed, missing)
        if (top := best[r]) is not None
    ]
