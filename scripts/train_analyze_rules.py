"""Train the local analyzer's rule-sentence classifier (habitus.learn.rules): does one sentence of a human
prompt state a standing rule?

    .venv/bin/python scripts/train_analyze_rules.py [--check] [--heldout] [--cache FILE.npz]

Training data (dev only; the spent blind sets are named one by one, never a glob of tests/fixtures/blind):

- every sentence (habitus.learn.rules.sentences) of every human prompt of the labelled sets REAL and
  SYNTHETIC, read through the production capture path (scripts/analyze_prompts.py): 1 when it carries
  an `evidence_quotes` quote of a labelled habit (or holds one of its keywords, in a prompt that is
  `evidence_ats` evidence), else 0 (the not_habits, facts and every other sentence: the labellers read
  every prompt); a sentence of an `evidence_ats` prompt without a keyword is left out (unknown);
- tests/fixtures/analyze_gate/written.jsonl (prompts written in 10 languages; a rule prompt of several
  sentences is taken whole), sentences.jsonl (58 prompts written for this classifier in 9 languages:
  30 task requests with one rule sentence inside, `rule`, 1, their other sentences 0, and 28 one-off
  requests, reports and questions, 0) and entire_more.jsonl (188 real prompts, no rule: every sentence 0).

Each sentence is embedded with the packaged multilingual E5 and `features` are added; an L2-regularised
logistic regression is fitted (scripts/train_analyze_gate.py's `fit`).

`--check` reports, leaving one real set out at a time (trained on all the rest), the held-out sentences'
counts at thresholds. `--heldout` runs the analyzer itself (`habitus eval analyze`) on each real set with
the weights trained without it, and prints each set's and the pooled TP / FP / FN. Without either it
writes the "rules" part of src/habitus/learn/meaning_weights.json, trained on everything.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "scripts"))

import analyze_prompts  # noqa: E402
from train_analyze_gate import fit  # noqa: E402

from habitus.learn import meaning, rules  # noqa: E402
from habitus.models.embedders import load_embedder  # noqa: E402
from habitus.state.root import StateRoot  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures"
GATE = FIXTURES / "analyze_gate"
OUT = REPO / "src" / "habitus" / "learn" / meaning.WEIGHTS
REAL = [
    "blind/analyze_real_b",
    "blind/analyze_real_c",
    "blind/analyze_real_d",
    "blind/analyze_real_e",
    "blind/analyze_real_f",
    "blind/analyze/real",
    "analyze_real_dev",
    "analyze_real",
    "analyze_train_r1",
    "analyze_train_r2",
]
SYNTHETIC = [
    "analyze",
    "analyze_heldout",
    "analyze_blind",
    "analyze_classes",
    "analyze_sessions",
    "blind/analyze/synthetic",
]
L2 = 100.0
THRESHOLD = 0.6
_WORD = re.compile(r"\w+")


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def _keyword(habit: dict[str, Any], sentence: str) -> bool:
    lowered = sentence.lower()
    return any(any(a.strip().lower() in lowered for a in k.split("|")) for k in habit.get("keywords", []))


def _quoted(habit: dict[str, Any], sentence: str) -> bool:
    """Whether the sentence holds one of the habit's evidence quotes, or is the part of one that names
    the rule (one of its keywords): the other sentences of a long quote are its task or its reasons."""
    said, words = _norm(sentence), set(_WORD.findall(sentence.lower()))
    for quote in habit.get("evidence_quotes", []):
        wanted, quoted = _norm(quote), set(_WORD.findall(quote.lower()))
        if not wanted:
            continue
        if wanted in said:
            return True
        if said in wanted and len(words) >= 2 and _keyword(habit, sentence):
            return True
        shared = words & quoted
        if len(shared) >= 3 and len(shared) >= 0.7 * len(words) and _keyword(habit, sentence):
            return True
    return False


def set_rows(name: str) -> list[dict[str, Any]]:
    path = FIXTURES / name / "labels.json"
    conversations = {c["file"]: c for c in json.loads(path.read_text())["conversations"]}
    out: list[dict[str, Any]] = []
    for row in analyze_prompts.rows(path):
        conv = conversations[row["file"]]
        said = rules.sentences(row["text"])
        for k, sentence in enumerate(said):
            if not rules.asks(sentence) or rules.question(sentence):
                continue  # the analyzer scores only these (habitus.learn.local._stated)
            label, unknown = 0, False
            for habit in conv.get("habits", []):
                if _quoted(habit, sentence):
                    label = 1
                elif "evidence_ats" in habit and row["label"] and row["habit"] == habit["behavior"]:
                    label, unknown = (1, unknown) if _keyword(habit, sentence) else (label, True)
            if unknown and not label:
                continue
            out.append(
                {
                    "set": name,
                    "session": row["session"],
                    "text": sentence,
                    "k": k,
                    "n": len(said),
                    "label": label,
                }
            )
    return out


def load_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in REAL + SYNTHETIC:
        rows += set_rows(name)
    for i, line in enumerate((GATE / "written.jsonl").read_text().splitlines()):
        r = json.loads(line)
        said = rules.sentences(r["text"])
        if r["label"] and len(said) != 1:
            said = [r["text"]] if len(r["text"]) <= rules.MAX_CHARS else []
        for k, sentence in enumerate(said):
            rows.append(
                {
                    "set": "written",
                    "session": f"written/{i}",
                    "text": sentence,
                    "k": k,
                    "n": len(said),
                    "label": r["label"],
                }
            )
    for i, line in enumerate((GATE / "sentences.jsonl").read_text().splitlines()):
        r = json.loads(line)
        said = [t for t in rules.sentences(r["text"]) if rules.asks(t) and not rules.question(t)]
        for k, sentence in enumerate(said):
            label = int(r["rule"] is not None and _norm(sentence) == _norm(r["rule"]))
            rows.append(
                {
                    "set": "sentences",
                    "session": f"sentences/{i}",
                    "text": sentence,
                    "k": k,
                    "n": len(said),
                    "label": label,
                }
            )
    for line in (GATE / "entire_more.jsonl").read_text().splitlines():
        r = json.loads(line)
        said = rules.sentences(r["text"])
        for k, sentence in enumerate(said):
            rows.append(
                {
                    "set": "entire_more",
                    "session": r["checkpoint"],
                    "text": sentence,
                    "k": k,
                    "n": len(said),
                    "label": 0,
                }
            )
    return rows


def matrix(rows: list[dict[str, Any]], cache: Path | None) -> tuple[np.ndarray, Any]:
    with tempfile.TemporaryDirectory() as folder:
        root = StateRoot.at(Path(folder) / "state")
        root.ensure()
        embedder = load_embedder(root, threads=2)
        texts = sorted({r["text"] for r in rows})
        known: dict[str, np.ndarray] = {}
        if cache is not None and cache.exists():
            stored = np.load(cache, allow_pickle=False)
            known = dict(zip(stored["texts"].tolist(), stored["vectors"], strict=True))
        todo = [t for t in texts if t not in known]
        if todo:
            for text, row in zip(todo, embedder.embed(todo, batch_size=64), strict=True):
                known[text] = row
            if cache is not None:
                np.savez(cache, texts=np.array(list(known)), vectors=np.stack(list(known.values())))
    x = np.stack(
        [
            np.concatenate([known[r["text"]], np.asarray(rules.features(r["text"], r["k"], r["n"]))])
            for r in rows
        ]
    ).astype(np.float64)
    return x, embedder


def check(rows: list[dict[str, Any]], x: np.ndarray, y: np.ndarray) -> None:
    sets = np.array([r["set"] for r in rows])
    oof = np.zeros(len(y))
    for name in REAL:
        test = sets == name
        w, b = fit(x[~test], y[~test], L2)
        oof[test] = 1.0 / (1.0 + np.exp(-(x[test] @ w + b)))
    real = np.isin(sets, REAL)
    for t in np.arange(0.3, 0.95, 0.05):
        hit = real & (oof >= t)
        tp, fp = int((hit & (y == 1)).sum()), int((hit & (y == 0)).sum())
        fn = int((real & (oof < t) & (y == 1)).sum())
        print(f"threshold {t:.2f}: held-out rule sentences TP {tp} FP {fp} FN {fn}")


def entry(w: np.ndarray, b: float, threshold: float) -> dict[str, Any]:
    return {
        "trained_on": "scripts/train_analyze_rules.py (dev sets and spent blind sets only)",
        "l2": L2,
        "threshold": threshold,
        "bias": round(b, 6),
        "weights": [round(float(v), 6) for v in w],
    }


def heldout(
    rows: list[dict[str, Any]], x: np.ndarray, y: np.ndarray, fingerprint: str, threshold: float
) -> None:
    """The analyzer itself on each real set, with rule weights trained without that set."""
    from habitus.learn.evaluate import evaluate

    sets = np.array([r["set"] for r in rows])
    base = json.loads(OUT.read_text())["models"][fingerprint]
    totals = Counter()
    for name in REAL:
        w, b = fit(x[sets != name], y[sets != name], L2)
        fold = {**base, "rules": entry(w, b, threshold)}
        original = meaning._all
        meaning._all = lambda fold=fold: {fingerprint: fold}  # type: ignore[assignment]
        try:
            result = evaluate(FIXTURES / name / "labels.json")
        finally:
            meaning._all = original  # type: ignore[assignment]
        h = result["habits"]
        totals.update({"tp": h["tp"], "fp": h["fp"], "fn": h["fn"]})
        print(f"{name}: TP {h['tp']} FP {h['fp']} FN {h['fn']}", flush=True)
        for c in result["conversations"]:
            for p in c["proposals"]:
                mark = "TP" if p["label"] is not None else "FP"
                print(f"   {mark} {p['condition']} / {p['behavior'][:160]}", flush=True)
    tp, fp, fn = totals["tp"], totals["fp"], totals["fn"]
    print(f"pooled: TP {tp} FP {fp} FN {fn} P {tp / max(1, tp + fp):.2f} R {tp / max(1, tp + fn):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="held-out sentence counts; write nothing")
    parser.add_argument("--heldout", action="store_true", help="the analyzer on each real set left out")
    parser.add_argument("--cache", type=Path, help="an .npz of sentence vectors to reuse")
    parser.add_argument(
        "--threshold", type=float, default=THRESHOLD, help="the rule threshold to write or try"
    )
    args = parser.parse_args()
    rows = load_rows()
    y = np.array([r["label"] for r in rows], dtype=np.float64)
    x, embedder = matrix(rows, args.cache)
    fingerprint = embedder.model_id.partition("@")[2]
    print(json.dumps({"sentences": len(y), "rules": int(y.sum())}))
    if args.check:
        check(rows, x, y)
        return
    if args.heldout:
        heldout(rows, x, y, fingerprint, args.threshold)
        return
    w, b = fit(x, y, L2)
    data = json.loads(OUT.read_text())
    data["models"][fingerprint]["rules"] = entry(w, b, args.threshold)
    OUT.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
