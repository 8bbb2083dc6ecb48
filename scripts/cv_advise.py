"""Cross-validate the local advise reviewer's semantic scorer, grouped by habit (a dev tool).

    .venv/bin/python scripts/cv_advise.py [--model NAME] [--folds 8] [--budget 0.05]

Every dev set of tests/fixtures/advise (never a blind one) with the 32 habits of
tests/fixtures/select/habits.jsonl. The habits are split into folds; the scorer is trained on the
(slice, habit) pairs of the other habits' folds (scripts/train_advise.py's fit, thresholds chosen on those
pairs within the false-note budget) and judges the held-out habits: a habit's notes never come from a
scorer that saw it labelled. The word rules and the law run as in a review. Prints recall, precision and
false notes per ten quiet slices (no finding expected), overall and per set.
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
sys.path.insert(0, str(REPO / "scripts"))

from train_advise import BUDGET, POSITIVE_WEIGHT, choose_thresholds, stage  # noqa: E402

from habitus.advise import judge, local  # noqa: E402
from habitus.advise.evaluate import load_cases, load_habits  # noqa: E402
from habitus.advise.slice import Entry, Slice  # noqa: E402
from habitus.habits.law import parse  # noqa: E402
from habitus.habits.vectors import field_input  # noqa: E402
from habitus.models.embedders import load_embedder  # noqa: E402
from habitus.state.root import StateRoot  # noqa: E402

ADVISE = REPO / "tests" / "fixtures" / "advise"
SETS = ("cases", "train", "heldout", "fresh", "dev_multilingual", "law_dev")
CATALOG = REPO / "tests" / "fixtures" / "select" / "habits.jsonl"


class Cached:
    """The embedder with every text's vector remembered (features are recomputed many times)."""

    def __init__(self, embedder: object, path: Path | None = None) -> None:
        import pickle

        self.inner, self.memo, self.path = embedder, {}, path
        self.model_id = embedder.model_id  # type: ignore[attr-defined]
        if path is not None and path.exists():
            self.memo = pickle.loads(path.read_bytes())

    def save(self) -> None:
        import pickle

        if self.path is not None:
            self.path.write_bytes(pickle.dumps(self.memo))

    def embed(self, texts: list[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if todo:
            for t, v in zip(todo, self.inner.embed(todo), strict=True):  # type: ignore[attr-defined]
                self.memo[t] = v
        return np.stack([self.memo[t] for t in texts]) if texts else np.zeros((0, 384), np.float32)


def word_notes(embedder: Cached, habits: list, cases: list) -> list[set[str]]:
    """What the word rules and the law raise on each case (no semantic notes)."""
    vectors = embedder.embed(
        [field_input(f, getattr(h, f)) for h in habits for f in ("condition", "behavior")]
    )
    by_id = {h.id: i for i, h in enumerate(habits)}

    class Embed:
        model_id = embedder.model_id  # its word-check thresholds apply

        def __call__(self, chosen: list, units: list) -> tuple:
            rows = [by_id[h.id] for h in chosen]
            return (
                vectors[[2 * r for r in rows]],
                vectors[[2 * r + 1 for r in rows]],
                embedder.embed([judge.embed_text(u) for u in units]),
            )

    law = parse(None)
    out = []
    trained, judge.weights_for = judge.weights_for, lambda _model_id: None  # the word rules alone
    try:
        for case in cases:
            entries = [Entry(e["role"], e["text"], True, e.get("name"), "ok") for e in case["entries"]]
            out.append({c.key for c in local.review(Slice(entries=entries), habits, law, embed=Embed())})
    finally:
        judge.weights_for = trained
    return out


def features(embedder: Cached, habits: list, cases: list) -> tuple[np.ndarray, ...]:
    from train_advise import examples

    return examples(embedder, habits, cases)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--words-model", default=None, help="the model the word rules' cosines use (--model)")
    parser.add_argument("--folds", type=int, default=8)
    parser.add_argument("--budget", type=float, default=BUDGET, help="false notes allowed per training slice")
    parser.add_argument("--no-words", action="store_true", help="leave the word rules' notes out")
    parser.add_argument("--misses", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--cos", default=None, help="trigger,evidence,violation cosines for the word rules")
    args = parser.parse_args()
    if args.cos:  # trying other word-check thresholds for the words model
        local.WORD_COSINES[args.words_model] = tuple(float(v) for v in args.cos.split(","))  # type: ignore[assignment]
    habits = load_habits(CATALOG)
    named = [(name, c) for name in SETS for c in load_cases(ADVISE / f"{name}.jsonl")]
    cases = [c for _, c in named]
    with tempfile.TemporaryDirectory() as home:
        root = StateRoot(Path(home))
        cache = Path(tempfile.gettempdir())
        args.model = args.model or local.CALIBRATED
        embedder = Cached(
            load_embedder(root, args.model, calibrated=local.CALIBRATED), cache / f"cv-{args.model}.pkl"
        )
        words_embedder = (
            embedder
            if args.words_model in (None, args.model)
            else Cached(
                load_embedder(root, args.words_model, calibrated=local.CALIBRATED),
                cache / f"cv-{args.words_model}.pkl",
            )
        )
        x, y, about, allowed = features(embedder, habits, cases)
        rule_found = [set() for _ in cases] if args.no_words else word_notes(words_embedder, habits, cases)
        embedder.save()
        words_embedder.save()
    per = len(habits)
    n_cases = len(cases)
    cut = len(judge.SITUATION)
    fold_of = np.arange(per) % args.folds
    pair_habit = np.tile(np.arange(per), n_cases)
    judged: list[set[str]] = [set() for _ in cases]
    stats: list[tuple] = []
    for fold in range(args.folds):
        train = fold_of[pair_habit] != fold
        situation = stage(x[train, :cut], about[train], POSITIVE_WEIGHT)
        present = train & (about > 0)
        behaviour = stage(x[present, cut:], y[present], 1.0)
        weights = {"situation": situation, "behaviour": behaviour}
        # Thresholds from the training habits only: their pairs, the held-out habits masked out.
        masked = allowed & train
        weights.update(choose_thresholds(x, y, masked, weights, per, budget=int(args.budget * n_cases)))
        s, b = judge.probabilities(x, weights)
        if args.verbose:
            print(fold, {k: weights[k] for k in ("top", "situation_threshold", "behaviour_threshold")})
        for c in range(n_cases):
            rows = slice(c * per, (c + 1) * per)
            if args.verbose:
                for r in range(per):
                    if fold_of[r] == fold and y[c * per + r] > 0:
                        rank = int((s[rows] > s[c * per + r]).sum())
                        stats.append(
                            (
                                rank,
                                float(s[c * per + r]),
                                float(b[c * per + r]),
                                weights["situation_threshold"],
                                weights["behaviour_threshold"],
                            )
                        )
            for r in judge.fired(s[rows], b[rows], weights, allowed[rows]):
                if fold_of[r] == fold:
                    judged[c].add(f"habit:{habits[r].id}")
    if args.verbose:
        ranks = [t[0] for t in stats]
        print(
            "expected habit pairs", len(stats), "situation rank 0:", ranks.count(0), "rank 1:", ranks.count(1)
        )
        print(
            "rank0 and s>=ts:",
            sum(1 for t in stats if t[0] == 0 and t[1] >= t[3]),
            "rank0 and b>=tb:",
            sum(1 for t in stats if t[0] == 0 and t[2] >= t[4]),
            "both:",
            sum(1 for t in stats if t[0] == 0 and t[1] >= t[3] and t[2] >= t[4]),
        )
        expected = [set(c["expected"]) for c in cases]
        sem = sum(len(j) for j in judged)
        good = sum(len(j & e) for j, e in zip(judged, expected, strict=True))
        new = sum(len((j - w) & e) for j, w, e in zip(judged, rule_found, expected, strict=True))
        print(f"semantic notes {sem}, right {good}, right and not from the word rules {new}")
    report(named, rule_found, judged, args.misses)


def report(named: list, rule_found: list[set[str]], judged: list[set[str]], misses: bool) -> None:
    rows: dict[str, list[int]] = {}
    for (name, case), words, semantic in zip(named, rule_found, judged, strict=True):
        found = words | semantic
        expected = set(case["expected"])
        tp, fp, fn = len(found & expected), len(found - expected), len(expected - found)
        quiet = not expected
        for key in (name, "all", "non-en" if case.get("lang", "en") != "en" else "en"):
            r = rows.setdefault(key, [0, 0, 0, 0, 0, 0])
            r[0] += tp
            r[1] += fp
            r[2] += fn
            r[3] += int(quiet)
            r[4] += int(quiet and bool(found))
            r[5] += 1
        if misses and found != expected:
            print(
                json.dumps(
                    {"id": case["id"], "cat": case["category"], "exp": sorted(expected), "got": sorted(found)}
                )
            )
    for key, (tp, fp, fn, quiet, noisy, n) in rows.items():
        print(
            f"{key:18s} n={n:3d} tp={tp:3d} fp={fp:3d} fn={fn:3d} "
            f"P={tp / max(1, tp + fp):.2f} R={tp / max(1, tp + fn):.2f} "
            f"quiet={quiet:3d} noisy={noisy:2d} per10={10 * noisy / max(1, quiet):.2f}"
        )


if __name__ == "__main__":
    main()
