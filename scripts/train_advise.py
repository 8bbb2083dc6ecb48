"""Train the local advise reviewer's semantic scorer (habitus.advise.judge) for the current embedding model.

    .venv/bin/python scripts/train_advise.py [--model NAME] [--check]

Reads every labelled dev slice of tests/fixtures/advise (cases, train, heldout, fresh, dev_multilingual,
law_dev; never a blind set) with the 32 habits of tests/fixtures/select/habits.jsonl, all approved. Every
(slice, habit) pair is one example: positive when the slice's expected findings hold that habit. A logistic
regression (L2, Newton steps, numpy only) is fitted on the standardised features, and the thresholds are
chosen to find the most training notes with at most BUDGET false ones per slice (`choose_thresholds`).
The result is written to src/habitus/advise/judge_weights.json under the model's id, beside the other
models' weights. The dev figures come from scripts/cv_advise.py (cross-validation grouped by habit).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from habitus.advise import judge, local  # noqa: E402
from habitus.advise.evaluate import load_cases, load_habits  # noqa: E402
from habitus.advise.slice import Entry, Slice  # noqa: E402
from habitus.habits.vectors import field_input  # noqa: E402
from habitus.models.embedders import load_embedder  # noqa: E402
from habitus.state.root import StateRoot  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures"
# Every dev set: the scorer's figures come from habit-grouped cross-validation (scripts/cv_advise.py).
TRAIN = [
    FIXTURES / "advise" / f"{name}.jsonl"
    for name in ("cases", "train", "heldout", "fresh", "dev_multilingual", "law_dev")
]
BUDGET = 0.02  # false training notes allowed per slice when choosing the thresholds
CATALOG = FIXTURES / "select" / "habits.jsonl"
OUT = REPO / "src" / "habitus" / "advise" / judge.WEIGHTS
L2 = 1.0
POSITIVE_WEIGHT = 4.0  # positives are ~1 in 32 pairs


def examples(embedder: object, habits: list, cases: list) -> tuple[np.ndarray, ...]:
    """Features of every (case, habit) pair; whether a note is expected; whether the habit's situation
    is in the case (its `about` list or its expected findings); whether a note is possible at all."""
    vectors = embedder.embed(
        [field_input(f, getattr(h, f)) for h in habits for f in ("condition", "behavior")]
    )
    conditions, behaviors = vectors[0::2], vectors[1::2]
    rows, labels, about, possible = [], [], [], []
    for case in cases:
        entries = [Entry(e["role"], e["text"], True, e.get("name"), "ok") for e in case["entries"]]
        units = local.units_of(Slice(entries=entries))
        rules = [local.Rule.of(h) for h in habits]
        chosen = [units[i] for i in judge.choose(units)]
        embedded = embedder.embed([judge.embed_text(u) for u in chosen] + [judge.turn_text(units)])
        checks = judge.word_checks(rules, units)
        matrix, _, allowed = judge.features(
            rules, chosen, checks, conditions, behaviors, embedded[:-1], embedded[-1]
        )
        expected = set(case["expected"])
        rows.append(matrix)
        possible.append(allowed)
        labels.extend(float(f"habit:{h.id}" in expected) for h in habits)
        present = set(case.get("about", [])) | {
            k.split(":", 1)[1] for k in expected if k.startswith("habit:")
        }
        about.extend(float(h.id in present) for h in habits)
    return np.vstack(rows), np.asarray(labels), np.asarray(about), np.concatenate(possible)


def stage(x: np.ndarray, y: np.ndarray, positive_weight: float) -> dict[str, object]:
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    w, b = fit((x - mean) / scale, y, positive_weight)
    return {"mean": mean.tolist(), "scale": scale.tolist(), "w": w.tolist(), "b": b}


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


def choose_thresholds(
    x: np.ndarray, y: np.ndarray, allowed: np.ndarray, weights: dict, per: int, budget: int = 0
) -> dict[str, float]:
    """The (top, situation, behaviour) thresholds that find the most true training notes with at most
    `budget` false ones (the fewest possible when none is within it; fewer candidates first); among
    equals, the middle of that region, away from both edges."""
    situation, behaviour = judge.probabilities(x, weights)
    grid = np.round(np.arange(0.30, 0.96, 0.025), 3)
    found: dict[tuple[int, float, float], tuple[int, int]] = {}
    for top in (1, 2):
        for ts in grid:
            for tb in grid:
                trial = {"top": top, "situation_threshold": ts, "behaviour_threshold": tb}
                tp = fp = 0
                for c in range(len(y) // per):
                    rows = slice(c * per, (c + 1) * per)
                    for r in judge.fired(situation[rows], behaviour[rows], trial, allowed[rows]):
                        tp += int(y[c * per + r] > 0)
                        fp += int(y[c * per + r] == 0)
                found[(top, float(ts), float(tb))] = (-max(fp, budget), tp)
    most = max(found.values())
    top = min(t for (t, _, _), tp in found.items() if tp == most)
    region = sorted((ts, tb) for (t, ts, tb), tp in found.items() if t == top and tp == most)
    ts = region[len(region) // 2][0]
    tbs = sorted(tb for s, tb in region if s == ts)
    return {"top": top, "situation_threshold": ts, "behaviour_threshold": tbs[len(tbs) // 2]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="embedding model name (default: the configured one)")
    parser.add_argument("--check", action="store_true", help="print the fit, write nothing")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        embedder = load_embedder(StateRoot(Path(home)), args.model, calibrated=local.CALIBRATED)
        habits = load_habits(CATALOG)
        cases = [c for path in TRAIN for c in load_cases(path)]
        x, y, about, allowed = examples(embedder, habits, cases)
    cut = len(judge.SITUATION)
    situation = stage(x[:, :cut], about, POSITIVE_WEIGHT)
    present = about > 0
    behaviour = stage(x[present, cut:], y[present], 1.0)
    weights = {"features": list(judge.FEATURES), "situation": situation, "behaviour": behaviour}
    weights.update(choose_thresholds(x, y, allowed, weights, len(habits), budget=int(BUDGET * len(cases))))
    situation_p, behaviour_p = judge.probabilities(x, weights)
    notes = [set() for _ in cases]
    for c in range(len(cases)):
        rows = slice(c * len(habits), (c + 1) * len(habits))
        notes[c] = set(judge.fired(situation_p[rows], behaviour_p[rows], weights, allowed[rows]))
    found = sum(int(y[c * len(habits) + r] > 0) for c in range(len(cases)) for r in notes[c])
    print(
        json.dumps(
            {
                "model": embedder.model_id,
                "pairs": len(y),
                "situations": int(about.sum()),
                "notes": int(y.sum()),
                "top": weights["top"],
                "situation_threshold": weights["situation_threshold"],
                "behaviour_threshold": weights["behaviour_threshold"],
                "train_recall_of_scorer": round(found / max(1, int(y.sum())), 3),
                "situation": dict(zip(judge.SITUATION, np.round(situation["w"], 3).tolist(), strict=True)),
                "behaviour": dict(zip(judge.BEHAVIOUR, np.round(behaviour["w"], 3).tolist(), strict=True)),
            },
            indent=1,
        )
    )
    if args.check:
        return
    data = json.loads(OUT.read_text("utf-8")) if OUT.exists() else {"models": {}}
    weights["trained_on"] = {"cases": len(cases), "pairs": len(y), "files": [p.name for p in TRAIN]}
    data["models"][embedder.model_id] = weights
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", "utf-8")


if __name__ == "__main__":
    main()
