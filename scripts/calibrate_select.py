"""Calibrate the local select judge's thresholds on the fit half of tests/fixtures/select/cases.jsonl.

    .venv/bin/python scripts/calibrate_select.py

Grid: HIGH_BP 3000..6000 and LOW_BP 1000..3500 in steps of 250 (LOW <= HIGH). Among the pairs with
precision >= TARGET_PRECISION on the fit half (a margin above the 0.90 goal, for the held-out half),
the chosen pair is the strictest (highest HIGH_BP, then highest LOW_BP) whose recall is within
RECALL_SLACK of the best: a few fit cases are not worth a looser threshold. Prints the choice and the
figures on the fit half, the held-out half and all cases. The held-out half plays no part in the
choice. tests/test_select_eval.py recomputes the choice and fails if judge.py's constants drift.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CASES = REPO / "tests" / "fixtures" / "select" / "cases.jsonl"
HABITS = REPO / "tests" / "fixtures" / "select" / "habits.jsonl"
TARGET_PRECISION = 0.95
RECALL_SLACK = 0.02
LIMIT = 3


def grid() -> list[tuple[int, int]]:
    return [(h, low) for h in range(3000, 6001, 250) for low in range(1000, 3501, 250) if low <= h]


def calibrate(embedder, habits, cases):  # type: ignore[no-untyped-def]
    """(high_bp, low_bp, fit report) chosen on the fit half."""
    from habitus.select import evaluate

    prepared = evaluate.prepare(embedder, habits, evaluate.split(cases, "fit"))
    passing = []
    for high, low in grid():
        total = evaluate.decide_all(habits, prepared, limit=LIMIT, high_bp=high, low_bp=low).total
        p = total.tp / (total.tp + total.fp) if total.tp + total.fp else 0.0
        r = total.tp / (total.tp + total.fn) if total.tp + total.fn else 0.0
        if p >= TARGET_PRECISION:
            passing.append((r, high, low))
    if not passing:
        raise SystemExit("no threshold pair reaches the target precision on the fit half")
    best = max(r for r, _, _ in passing)
    high, low, _ = max((h, lo, r) for r, h, lo in passing if r >= best - RECALL_SLACK)
    return high, low


def main() -> None:
    sys.path.insert(0, str(REPO / "src"))
    from habitus.embed import load_embedder
    from habitus.select import evaluate
    from habitus.state.root import StateRoot

    embedder = load_embedder(StateRoot.at(tempfile.mkdtemp(prefix="habitus-calibrate-")))
    habits = evaluate.load_catalog(HABITS)
    cases = evaluate.load_cases(CASES, {h.id for h in habits})
    high, low = calibrate(embedder, habits, cases)
    print(f"HIGH_BP = {high}\nLOW_BP = {low}")
    for part in ("fit", "holdout", "all"):
        prepared = evaluate.prepare(embedder, habits, evaluate.split(cases, part))
        report = evaluate.decide_all(habits, prepared, limit=LIMIT, high_bp=high, low_bp=low).as_dict()
        print(
            f"{part}: precision {report['precision']} recall {report['recall']} "
            f"tp {report['tp']} fp {report['fp']} fn {report['fn']} cases {report['cases']}"
        )


if __name__ == "__main__":
    main()
