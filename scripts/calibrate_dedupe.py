#!/usr/bin/env python3
"""Calibrate the duplicate thresholds of an embedding model on the labelled habit pairs.

    .venv/bin/python scripts/calibrate_dedupe.py                    # the default model
    .venv/bin/python scripts/calibrate_dedupe.py --model NAME --root DIR

Reads tests/fixtures/habit_pairs.jsonl (pairs labelled duplicate/distinct, with a kind: paraphrase,
same_condition, same_behavior, near_miss, unrelated), scores each pair exactly as `habitus dedupe`
does (min of the condition and behaviour cosines, in basis points) and prints:

- review threshold: the highest multiple of 100 bp that still flags >= 85% of the duplicates
  (a false alarm blocks an activation until a human says keep-separate, a miss costs a duplicate
  habit; on this deliberately hard set 85% recall is where precision stops rising steeply);
- strong threshold: the lowest multiple of 100 bp above every distinct pair (precision 1.0);
- precision/recall at both, and the score range of each kind.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from habitus.habits.similar import score  # noqa: E402
from habitus.habits.vectors import field_input  # noqa: E402
from habitus.models.embedders import load_embedder  # noqa: E402
from habitus.state.root import StateRoot  # noqa: E402

PAIRS = REPO / "tests" / "fixtures" / "habit_pairs.jsonl"
REVIEW_RECALL = 0.85


def scores(model: str | None, root: StateRoot) -> list[tuple[dict, int]]:
    pairs = [json.loads(line) for line in PAIRS.read_text().splitlines() if line.strip()]
    embedder = load_embedder(root, model)
    texts = sorted(
        {field_input(f, h[f]) for p in pairs for h in (p["a"], p["b"]) for f in ("condition", "behavior")}
    )
    matrix = embedder.embed(texts)
    index = {t: matrix[i] for i, t in enumerate(texts)}

    def vec(habit: dict) -> dict:
        return {f: index[field_input(f, habit[f])] for f in ("condition", "behavior")}

    return [(p, score(vec(p["a"]), vec(p["b"]))[0]) for p in pairs]


def metrics(scored: list[tuple[dict, int]], threshold: int) -> tuple[float, float]:
    flagged = [p for p, s in scored if s >= threshold]
    dups = [p for p, _ in scored if p["label"] == "duplicate"]
    true = sum(p["label"] == "duplicate" for p in flagged)
    precision = true / len(flagged) if flagged else 1.0
    return precision, true / len(dups)


def calibrate(scored: list[tuple[dict, int]]) -> tuple[int, int]:
    dup = sorted(s for p, s in scored if p["label"] == "duplicate")
    distinct = [s for p, s in scored if p["label"] != "duplicate"]
    allowed_misses = int(len(dup) * (1 - REVIEW_RECALL))
    review = (dup[allowed_misses] // 100) * 100
    strong = (max(distinct) // 100 + 1) * 100
    return review, max(review, strong)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", help="model name (default: the configured one)")
    parser.add_argument("--root", help="state root (for added models)")
    args = parser.parse_args()
    scored = scores(args.model, StateRoot.at(args.root))
    review, strong = calibrate(scored)
    print(f"pairs: {len(scored)} ({sum(p['label'] == 'duplicate' for p, _ in scored)} duplicates)")
    for kind in ("paraphrase", "same_condition", "same_behavior", "near_miss", "unrelated"):
        values = sorted(s for p, s in scored if p["kind"] == kind)
        if values:
            print(
                f"  {kind:15} n={len(values):3}  min={values[0]:5}  median={values[len(values) // 2]:5}  max={values[-1]:5}"
            )
    for name, threshold in (("review", review), ("strong", strong)):
        precision, recall = metrics(scored, threshold)
        print(f"{name}_bp = {threshold}: precision {precision:.2f}, recall {recall:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
