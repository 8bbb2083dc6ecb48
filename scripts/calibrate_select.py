"""Calibrate the local select judge's scorer on the fit half of tests/fixtures/select/cases.jsonl.

    .venv/bin/python scripts/calibrate_select.py

1. Every (live clause, retrieved condition) pair that passes the rule checks is a training row
   (`judge.candidates`, features `judge.FEATURES`). Its label is 1 when the condition's habit is expected
   for the case and this clause is the case's most similar eligible clause for it, else 0.
2. A logistic regression with an L2 penalty (L2, not on the bias) is fitted by Newton's method
   (deterministic); weights and bias are rounded to 3 decimals.
3. The acceptance threshold (2000..8000 bp in steps of 250) is chosen by two-fold cross-validation
   inside the fit half (folds by SHA-256 of the case id; each fold scored by a model fitted on the
   other): the threshold with the best F0.5 (precision weighs twice as much as recall, because unseen
   prompts cost precision first), the middle one when several tie. The weights are then fitted on the
   whole fit half.

Prints the scorer to paste into judge.py and the figures on the fit half. The held-out half and
cases_blind.jsonl play no part (measure them with `habitus eval select`). tests/test_select_eval.py
recomputes the scorer and fails if judge.SCORER drifts from it.
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "tests" / "fixtures" / "select" / "cases.jsonl"
HABITS = REPO / "tests" / "fixtures" / "select" / "habits.jsonl"
BETA = 0.5  # precision weighs twice as much as recall
L2 = 1.0
ITERATIONS = 50
LIMIT = 3
THRESHOLDS = range(2000, 8001, 250)


def training_rows(habits, prepared):  # type: ignore[no-untyped-def]
    """(features, label) for every eligible pair of the prepared cases."""
    from habitus.select import judge

    rows = []
    for item in prepared:
        expected = {i for i, h in enumerate(habits) if h.id in item.case.expected}
        pairs = judge.candidates(item.query, item.found, item.scored)
        best: dict[int, tuple[float, int]] = {}
        for u, j, values in pairs:
            if item.found.picked[j] in expected and (j not in best or values[0] > best[j][0]):
                best[j] = (values[0], u)
        rows.extend((values, int(j in best and best[j][1] == u)) for u, j, values in pairs)
    return rows


def fit_logistic(rows):  # type: ignore[no-untyped-def]
    """(weights, bias) of an L2-penalised logistic regression, Newton's method from zero."""
    import numpy as np

    x = np.array([[*values, 1.0] for values, _ in rows], dtype=np.float64)
    y = np.array([label for _, label in rows], dtype=np.float64)
    penalty = L2 * np.diag([1.0] * (x.shape[1] - 1) + [0.0])
    w = np.zeros(x.shape[1])
    for _ in range(ITERATIONS):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        gradient = x.T @ (p - y) + penalty @ w
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + penalty
        w = w - np.linalg.solve(hessian, gradient)
    return tuple(round(float(v), 3) for v in w[:-1]), round(float(w[-1]), 3)


def fold(case) -> int:  # type: ignore[no-untyped-def]
    """Which of two folds of the fit half a case belongs to (SHA-256 of its id)."""
    return int(hashlib.sha256(case.id.encode()).hexdigest(), 16) % 2


def threshold_curve(habits, prepared):  # type: ignore[no-untyped-def]
    """accept_bp -> (tp, fp, fn) summed over the two folds, each scored by a model fitted on the other."""
    from habitus.select import evaluate, judge

    curve = {accept: [0, 0, 0] for accept in THRESHOLDS}
    for k in (0, 1):
        train = [p for p in prepared if fold(p.case) != k]
        test = [p for p in prepared if fold(p.case) == k]
        weights, bias = fit_logistic(training_rows(habits, train))
        for accept in THRESHOLDS:
            total = evaluate.decide_all(
                habits, test, limit=LIMIT, scorer=judge.Scorer(weights, bias, accept)
            ).total
            for n, value in enumerate((total.tp, total.fp, total.fn)):
                curve[accept][n] += value
    return curve


def f_beta(tp: int, fp: int, fn: int) -> float:
    if not tp:
        return 0.0
    p, r, b2 = tp / (tp + fp), tp / (tp + fn), BETA * BETA
    return (1 + b2) * p * r / (b2 * p + r)


def choose_threshold(curve: dict[int, list[int]]) -> int:
    """The middle of the thresholds that tie for the best cross-validated F-beta."""
    scores = {accept: round(f_beta(*counts), 4) for accept, counts in curve.items()}
    best = max(scores.values())
    tied = sorted(a for a, v in scores.items() if v == best)
    return tied[(len(tied) - 1) // 2]


def calibrate(embedder, habits, cases):  # type: ignore[no-untyped-def]
    """The judge.Scorer: weights fitted on the whole fit half, threshold from its cross-validation."""
    from habitus.select import evaluate, judge

    prepared = evaluate.prepare(embedder, habits, evaluate.split(cases, "fit"))
    accept = choose_threshold(threshold_curve(habits, prepared))
    weights, bias = fit_logistic(training_rows(habits, prepared))
    return judge.Scorer(weights, bias, accept)


def main() -> None:
    sys.path.insert(0, str(REPO / "src"))
    from habitus.embed import load_embedder
    from habitus.select import evaluate, judge
    from habitus.state.root import StateRoot

    embedder = load_embedder(StateRoot.at(tempfile.mkdtemp(prefix="habitus-calibrate-")))
    habits = evaluate.load_catalog(HABITS)
    cases = evaluate.load_cases(CASES, {h.id for h in habits})
    scorer = calibrate(embedder, habits, cases)
    print(f"SCORER = Scorer(weights={scorer.weights}, bias={scorer.bias}, accept_bp={scorer.accept_bp})")
    print("features:", ", ".join(f"{n} {w}" for n, w in zip(judge.FEATURES, scorer.weights, strict=True)))
    prepared = evaluate.prepare(embedder, habits, evaluate.split(cases, "fit"))
    report = evaluate.decide_all(habits, prepared, limit=LIMIT, scorer=scorer).as_dict()
    print(
        f"fit: precision {report['precision']} recall {report['recall']} "
        f"tp {report['tp']} fp {report['fp']} fn {report['fn']} cases {report['cases']}"
    )


if __name__ == "__main__":
    main()
