"""Fit the local select judge's gate (src/habitus/select/gate.json) for one embedding model kind.

    .venv/bin/python scripts/calibrate_select.py [--model e5|minilm] [--write] [--report FILE]

Training data (all hand-written; none of it a blind set still unmeasured), each cases file judged
against its own catalog: catalog A's dev sets in tests/fixtures/select/ (cases.jsonl, cases_blind.jsonl
(named so historically; measured and tuned on, so dev data), train_multilingual.jsonl, dev_paste.jsonl,
dev_followup.jsonl, dev_negation_multilingual.jsonl, outside_dev.jsonl), and every blind select set
whose one measurement is recorded in docs/quality.md (tests/fixtures/blind/select to select_o, catalogs
A, B, D, F, H, J, L, M, N and O: fifteen sets by writers who never saw the code), and two training sets
written for it by such writers (tests/fixtures/select_train_t1 and _t2, a catalog of their own each). Once measured, a blind set
is spent: it is training data from then on, and the next figure that counts comes from a set written
after it. Fitting on strangers' prompts and eight catalogs, not on one catalog's dev prompts alone, is what the blind sets
of 2026-12-07 asked for (docs/quality.md: thresholds fitted on catalog A's dev prompts sat too high for
anyone else's).

1. The live-request classifier: a logistic regression (L2, Newton's method, deterministic) over the
   embedding of each whole prompt. Live (1): applies, paraphrase, mixed, unrelated, near_miss and the
   follow-ups that expect a habit; not live (0): negation, hypothetical, quotation, meta.
2. The pair model: a logistic regression over `gate.FEATURES` for every (case, retrieved habit) row,
   labelled 1 when the habit is expected for the case.
3. Five-fold cross-validation grouped by habit (each habit's fold by SHA-256 of its id; a case goes
   to the fold of its first expected habit, a case expecting none by SHA-256 of its id; both models
   refitted on the other four folds, without any row of a held-out habit), so that no habit's own
   prompts ever train its own score: what an unseen catalog meets. It gives out-of-fold probabilities;
   the acceptance threshold is the lowest (in steps of 250 bp) whose out-of-fold precision on prompts
   read as English is at least TARGET_PRECISION, and a second one, for prompts not read as English,
   the lowest whose precision on those is at least FOREIGN_PRECISION: so that unseen prompts keep
   precision at the cost of recall. (Folds by case, as before 2026-12-02, let a habit's paraphrases
   train its own score and overstated recall: docs/quality.md.)
4. Ablation: each rule feature is dropped (its column zeroed, both models refitted) and the
   out-of-fold F1 at the chosen threshold compared; a rule feature whose removal raises F1 by more
   than NOISE_F1 is dropped from the written gate (weight 0) and listed under "dropped".

With --catalog small, every case is judged against a small catalog instead (2 to 8 habits: the expected
ones and others drawn by the case's hash), and the gate for catalogs under gate.SMALL_CATALOG habits is
fitted (precision floor SMALL_PRECISION): margins over the next habit are wider there.

Prints the cross-validated figures (these are dev/tuned figures, never blind ones) by category, set and
language; --write stores the gate fitted on all cases.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
FIXTURES = REPO / "tests" / "fixtures"
SELECT = FIXTURES / "select"
CATALOG_A = "select/habits.jsonl"
SETS = (  # (cases, catalog), under tests/fixtures
    *(
        (f"select/{name}", CATALOG_A)
        for name in (
            "cases.jsonl",
            "cases_blind.jsonl",
            "train_multilingual.jsonl",
            "dev_paste.jsonl",
            "dev_followup.jsonl",
            "dev_negation_multilingual.jsonl",
            "outside_dev.jsonl",
        )
    ),
    *(
        (f"blind/{name}/cases.jsonl", f"blind/{name}/habits.jsonl")
        for name in (
            "select",
            "select_b",
            "select_c",
            "select_d",
            "select_e",
            "select_f",
            "select_g",
            "select_h",
            "select_i",
            "select_j",
            "select_k",
            "select_l",
            "select_m",
            "select_n",
            "select_o",
        )
    ),
    *((f"{name}/cases.jsonl", f"{name}/habits.jsonl") for name in ("select_train_t1", "select_train_t2")),
)
GATE = REPO / "src" / "habitus" / "select" / "gate.json"
LIVE = {
    "applies",
    "paraphrase",
    "mixed",
    "unrelated",
    "near_miss",
    "multilingual",
    "multi_clause",
    "typo",
    "imperative",
    "long_context",
    "long_paste",
}
NOT_LIVE = {"negation", "hypothetical", "quotation", "meta"}
LIVE_L2 = 30.0
PAIR_L2 = 1.0
FOLDS = 5
# Thresholds are chosen on strangers' prompts only (the spent blind sets and the outside dev set): the
# project's own dev sets were written by people who knew the rules, harder and in another style, and
# held thresholds too high for anyone else (blind sets G and H, 2026-12-07: precision 0.97-1.00 against
# a 0.90 target, recall 0.23-0.31).
STRANGERS_ONLY = True
TARGET_PRECISION = 0.92  # a little above the 0.90 target: blind catalogs new to the gate lost up to 0.04
# Prompts not read as English: no English rule reads their mood. 0.95 held strangers' non-English recall
# at 0.39-0.46 on blind sets I-L while their precision came out 0.97-1.00; 0.925 is the lowest floor whose
# out-of-fold precision on the spent blind sets stays >= 0.92 both overall and on non-English prompts.
FOREIGN_PRECISION = 0.925
SMALL = (2, 3, 5, 8)
SMALL_PRECISION = 0.92  # small catalogs (their case-fold floor 0.90 gave 0.78 on an unseen catalog)
SMALL_FOREIGN_PRECISION = 0.925  # as FOREIGN_PRECISION; few non-English pairs (at 0.97 one set 9000)
CATALOG = "full"  # --catalog: fit the gate for the full catalog or for small ones (gate.SMALL_CATALOG)  # sizes of the small catalogs each case is also judged against
REFERENCE: tuple[float, ...] = ()
LIMIT = 3
THRESHOLDS = range(2000, 9501, 250)
# An ablation's F1 moves by about this much when one or two of the ~380 expected pairs change: a rule
# feature is dropped only when the fit without it is better by more (grouped folds are noisier than
# folds by case, and a feature dropped on noise let "how big is the current Dockerfile?" select).
NOISE_F1 = 0.01


def fit(x: np.ndarray, y: np.ndarray, l2: float, iterations: int = 30) -> tuple[np.ndarray, float]:
    """L2-penalised logistic regression (bias not penalised) by Newton's method, on standardised
    columns (so the penalty treats a cosine's small spread like any other feature's); the weights
    returned apply to the raw columns."""
    x = np.asarray(x, dtype=np.float64)
    mean, std = x.mean(axis=0), x.std(axis=0)
    std[std < 1e-9] = 1.0
    w, b = _fit((x - mean) / std, y, l2, iterations)
    raw = w / std
    return raw, b - float(raw @ mean)


def _fit(x: np.ndarray, y: np.ndarray, l2: float, iterations: int) -> tuple[np.ndarray, float]:
    n, d = x.shape
    a = np.hstack([x, np.ones((n, 1))]).astype(np.float64)
    w = np.zeros(d + 1)
    penalty = np.full(d + 1, l2)
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-np.clip(a @ w, -60, 60)))
        grad = a.T @ (p - y) + penalty * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def habit_fold(habit_key: str) -> int:
    return int(hashlib.sha256(habit_key.encode()).hexdigest(), 16) % FOLDS


def fold_of(item) -> int:  # type: ignore[no-untyped-def]
    """The fold of a case: that of its first expected habit (by catalog and id), else by its id (a
    case and its small-catalog copy share a fold)."""
    if item.case.expected:
        return habit_fold(f"{item.catalog}:{sorted(item.case.expected)[0]}")
    base = item.case.id.removesuffix("~small")
    return int(hashlib.sha256(base.encode()).hexdigest(), 16) % FOLDS


def load(model: str):  # type: ignore[no-untyped-def]
    """Every set's cases prepared against its own catalog. Each item carries `habits` (its catalog) and
    `catalog` (the catalog's file); case ids are qualified by their set."""
    from dataclasses import replace

    from habitus.habits.vectors import field_input
    from habitus.models.embedders import load_embedder
    from habitus.select import evaluate
    from habitus.state.root import StateRoot

    root = StateRoot.at(tempfile.mkdtemp())
    embedder = Cached(load_embedder(root, model))
    catalogs: dict[str, list] = {}
    prepared, origin, language = [], {}, {}
    for cases_name, catalog_name in SETS:
        if catalog_name not in catalogs:
            catalogs[catalog_name] = evaluate.load_catalog(FIXTURES / catalog_name)
        habits = catalogs[catalog_name]
        path = FIXTURES / cases_name
        cases = [
            replace(c, id=f"{cases_name}:{c.id}") for c in evaluate.load_cases(path, {h.id for h in habits})
        ]
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                obj = json.loads(line)
                language[f"{cases_name}:{obj['id']}"] = obj.get("lang") or _note_language(obj.get("note", ""))
        for item in evaluate.prepare(embedder, habits, cases):
            item.habits, item.catalog = habits, catalog_name  # type: ignore[attr-defined]
            origin[item.case.id] = cases_name
            prepared.append(item)
        embedder.save()
    reference = embedder.embed([field_input("condition", h.condition) for h in catalogs[CATALOG_A]]).mean(
        axis=0
    )
    if CATALOG == "small":
        prepared = small_catalogs(embedder, catalogs, prepared)
    embedder.save()
    return prepared, origin, language, embedder.kind, tuple(float(v) for v in reference)


def small_catalogs(embedder, catalogs, prepared):  # type: ignore[no-untyped-def]
    """Each case once more against a small catalog (SMALL habits of its own catalog: the expected ones
    and others drawn by the case's hash), so the gate also holds where a user has only a few habits and
    a habit's margin over the next one is wide. Habit indexes stay those of the full catalog."""
    from habitus.habits.vectors import field_input
    from habitus.select import evaluate, judge

    matrices = {
        name: embedder.embed([field_input("condition", h.condition) for h in habits])
        for name, habits in catalogs.items()
    }
    behaviors = {
        name: embedder.embed([field_input("behavior", h.behavior) for h in habits])
        for name, habits in catalogs.items()
    }
    out = []
    for item in prepared:
        habits, matrix = item.habits, matrices[item.catalog]
        seed = int(hashlib.sha256(item.case.id.encode()).hexdigest(), 16)
        rng = np.random.default_rng(seed % 2**32)
        size = int(rng.choice(SMALL))
        expected = [i for i, h in enumerate(habits) if h.id in item.case.expected]
        others = [i for i in rng.permutation(len(habits)) if i not in expected]
        keep = sorted(expected + others[: max(0, size - len(expected))])
        found = judge.retrieve(embedder, matrix[keep], item.query, behaviors=behaviors[item.catalog][keep])
        found.picked = [keep[j] for j in found.picked]
        case = evaluate.Case(
            item.case.id + "~small",
            item.case.prompt,
            item.case.context,
            item.case.expected,
            item.case.category,
        )
        small = evaluate.Prepared(case, item.query, found)
        small.habits, small.catalog = habits, item.catalog  # type: ignore[attr-defined]
        out.append(small)
    return out


class Cached:
    """The embedder with a cache of vectors on disk (a rerun embeds only new texts)."""

    def __init__(self, inner) -> None:  # type: ignore[no-untyped-def]
        self.inner = inner
        self.kind, self.dims, self.model_id = inner.kind, inner.dims, inner.model_id
        self.path = Path(tempfile.gettempdir()) / f"habitus-calibrate-{inner.model_id}.json"
        self.cache = json.loads(self.path.read_text()) if self.path.exists() else {}

    def embed(self, texts):  # type: ignore[no-untyped-def]
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if todo:
            for t, v in zip(todo, self.inner.embed(todo), strict=True):
                self.cache[t] = [float(x) for x in v]
        return np.asarray([self.cache[t] for t in texts], dtype=np.float32).reshape(len(texts), self.dims)

    def save(self) -> None:
        self.path.write_text(json.dumps(self.cache))


def _note_language(note: str) -> str:
    lowered = note.lower()
    for word, code in (("german", "de"), ("spanish", "es"), ("french", "fr"), ("portuguese", "pt")):
        if word in lowered:
            return code
    return "en"


def live_label(case) -> int | None:  # type: ignore[no-untyped-def]
    if case.category in LIVE or (case.category == "followup" and case.expected):
        return 1
    if case.category in NOT_LIVE:
        return 0
    return None


def train(prepared, *, zeroed: tuple[str, ...] = (), held_out: int | None = None):  # type: ignore[no-untyped-def]
    from habitus.select import gate, judge

    xs, ys = [], []
    for item in prepared:
        label = live_label(item.case)
        if label is not None:
            xs.append(item.found.prompt_vector)
            ys.append(label)
    lw, lb = fit(np.asarray(xs), np.asarray(ys, dtype=np.float64), LIVE_L2)
    live = gate.Logistic(tuple(float(v) for v in lw), lb)
    rows, labels = [], []
    for item in prepared:
        for j, values, _ in judge.candidates(
            item.habits, item.query, item.found, live_model=live, reference=REFERENCE
        ):
            habit = item.habits[item.found.picked[j]].id
            if held_out is not None and habit_fold(f"{item.catalog}:{habit}") == held_out:
                continue  # no row of a held-out habit trains the gate that scores it
            rows.append(_zero(values, zeroed))
            labels.append(float(habit in item.case.expected))
    pw, pb = fit(np.asarray(rows), np.asarray(labels), PAIR_L2)
    return gate.Gate(gate.Logistic(tuple(float(v) for v in pw), pb), 5000, live, zeroed)


def _veto(why, probability):  # type: ignore[no-untyped-def]
    """What judge.decide does with a rule's veto: the probability counts for nothing."""
    from habitus.select import judge

    return 0.0 if why in judge.VETO else probability


def _zero(values, zeroed):  # type: ignore[no-untyped-def]
    from habitus.select import gate

    return tuple(0.0 if name in zeroed else v for name, v in zip(gate.FEATURES, values, strict=True))


def out_of_fold(prepared, *, zeroed=()):  # type: ignore[no-untyped-def]
    """Per case: (read as English, [(habit id, probability)]) from a gate fitted on the other folds."""
    from habitus.lang.language import is_english
    from habitus.select import judge

    out = {}
    for fold in range(FOLDS):
        model = train([p for p in prepared if fold_of(p) != fold], zeroed=zeroed, held_out=fold)
        for item in prepared:
            if fold_of(item) != fold:
                continue
            rows = judge.candidates(
                item.habits, item.query, item.found, live_model=model.live, reference=REFERENCE
            )
            english = is_english(item.query.unquoted)  # as the gate's "english" feature
            out[item.case.id] = (
                english,
                [
                    (item.habits[item.found.picked[j]].id, _veto(why, model.probability(_zero(v, zeroed))))
                    for j, v, why in rows
                ],
            )
    return out


def tally(prepared, scored, threshold, groups=None):  # type: ignore[no-untyped-def]
    """Totals [tp, fp, fn, cases] per group at `threshold`: (for English prompts, for the others)."""
    totals: dict[str, list[int]] = {}
    for item in prepared:
        english, rows = scored[item.case.id]
        at = threshold[0] if english else threshold[1]
        chosen = sorted(((p, h) for h, p in rows if p * 10000 >= at), reverse=True)[:LIMIT]
        selected = {h for _, h in chosen}
        expected = set(item.case.expected)
        keys = ["all", *(groups(item) if groups else [])]
        for key in keys:
            t = totals.setdefault(key, [0, 0, 0, 0])
            t[0] += len(selected & expected)
            t[1] += len(selected - expected)
            t[2] += len(expected - selected)
            t[3] += 1
    return totals


def figures(t: list[int]) -> dict[str, float | int | None]:
    tp, fp, fn, n = t
    p = tp / (tp + fp) if tp + fp else None
    r = tp / (tp + fn) if tp + fn else None
    f1 = 2 * p * r / (p + r) if p and r else None
    return {
        "n": n,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": None if p is None else round(p, 3),
        "recall": None if r is None else round(r, 3),
        "f1": None if f1 is None else round(f1, 3),
    }


def choose(prepared, scored) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """(English, other languages): for each, the lowest threshold whose precision on those prompts
    reaches TARGET_PRECISION, FOREIGN_PRECISION for the others (SMALL_* on small catalogs)."""
    small = any(item.case.id.endswith("~small") for item in prepared)
    chosen = []
    for english, floor in (
        (True, SMALL_PRECISION if small else TARGET_PRECISION),
        (False, SMALL_FOREIGN_PRECISION if small else FOREIGN_PRECISION),
    ):
        part = [
            item
            for item in prepared
            if scored[item.case.id][0] == english and (not STRANGERS_ONLY or _stranger(item.case.id))
        ]
        found = THRESHOLDS[-1]
        for threshold in THRESHOLDS:
            t = tally(part, scored, (threshold, threshold))["all"]
            if t[0] + t[1] and t[0] / (t[0] + t[1]) >= floor:
                found = threshold
                break
        chosen.append(found)
    return chosen[0], chosen[1]


def _stranger(case_id: str) -> bool:
    """Written by someone who never saw the code or the rules: the spent blind sets, the strangers'
    training sets and the outside dev set."""
    return case_id.startswith(("blind/", "select_train_", "select/outside_dev.jsonl"))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="e5")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--report", help="write the figures as JSON to this file")
    parser.add_argument("--no-ablation", action="store_true")
    parser.add_argument("--catalog", choices=("full", "small"), default="full")
    args = parser.parse_args()
    global CATALOG
    CATALOG = args.catalog
    from habitus.select import gate

    prepared, origin, language, kind, reference = load(args.model)
    global REFERENCE
    REFERENCE = reference
    scored = out_of_fold(prepared)
    threshold = choose(prepared, scored)

    def groups(item):  # type: ignore[no-untyped-def]
        base = item.case.id.removesuffix("~small")
        lang = language.get(base, "en")
        catalog = "small" if item.case.id.endswith("~small") else "full"
        out = [f"catalog:{catalog}"]
        if catalog == "small":
            return out
        out += [f"set:{origin[base]}", f"category:{item.case.category}", f"lang:{lang}"]
        if lang != "en":
            out.append("lang:non-en")
        return out

    report = {
        "model": kind,
        "cases": len(prepared),
        "accept_bp": threshold[0],
        "accept_foreign_bp": threshold[1],
        "folds": "grouped by habit",
        "cv": {k: figures(v) for k, v in sorted(tally(prepared, scored, threshold, groups).items())},
        "ablation": {},
    }
    dropped: list[str] = []
    if not args.no_ablation:
        base = figures(tally(prepared, scored, threshold)["all"])["f1"] or 0.0
        for rule in gate.RULES:
            other = out_of_fold(prepared, zeroed=(rule,))
            at = choose(prepared, other)
            f1 = figures(tally(prepared, other, at)["all"])["f1"] or 0.0
            report["ablation"][rule] = {"f1_without": f1, "f1_with": base, "gain": round(base - f1, 3)}
            if base - f1 < -NOISE_F1:
                dropped.append(rule)
    if dropped:  # refit and re-choose without the rule features that gained nothing: the gate written
        scored = out_of_fold(prepared, zeroed=tuple(dropped))
        threshold = choose(prepared, scored)
        report["cv_with_every_rule"] = report["cv"]
        report["cv"] = {k: figures(v) for k, v in sorted(tally(prepared, scored, threshold, groups).items())}
        report.update(accept_bp=threshold[0], accept_foreign_bp=threshold[1], dropped=dropped)
    print(json.dumps(report, indent=1))
    if args.report:
        Path(args.report).write_text(json.dumps(report, indent=1) + "\n")
    if args.write:
        model = train(prepared, zeroed=tuple(dropped))
        data = json.loads(GATE.read_text()) if GATE.exists() else {"models": {}}
        data["models"][kind if CATALOG == "full" else f"{kind}/small"] = {
            "accept_bp": threshold[0],
            "accept_foreign_bp": threshold[1],
            "dropped": dropped,
            "features": list(gate.FEATURES),
            "pair": {"weights": [round(w, 4) for w in model.pair.weights], "bias": round(model.pair.bias, 4)},
            "live": {"weights": [round(w, 5) for w in model.live.weights], "bias": round(model.live.bias, 5)},
            "reference": [round(v, 5) for v in reference],
            "fitted_on": {"cases": len(prepared), "sets": list(SETS)},
        }
        GATE.write_text(json.dumps(data, separators=(",", ":")) + "\n")
        print(f"wrote {GATE} ({kind}: accept {threshold} bp (English, others), dropped {dropped})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
