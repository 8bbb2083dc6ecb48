"""Hybrid retrieval: BM25 and embedding similarity, fused by z-scores.

It is on by default for a query ordered by relevance: whenever memory's embedding models load
(habitus.memory.embedding: E5 and MiniLM while `embed.model` is `default`), their vectors join the
ranking (`--no-hybrid` or `"hybrid": false` turns it off; `--hybrid` or `true` makes a model that
does not load an error instead of a fallback, `hybrid.reason = model_unavailable`).

How vectors get built: never on the write path (retain stays fast and never loads a model). A search
computes up to each model's `lazy` missing vectors itself (E5 100, MiniLM 500: about 2 s), so a store of a few
hundred records is hybrid with no setup and each later search fills in what was added since; a bigger
backlog (an import of 100,000 records) is built by `habitus memory index-vectors`, which shows a
progress bar on a terminal and commits batch by batch. Until then such a store answers with the
models whose vectors are complete, or by BM25 alone, and says so.

Per store (scores are never compared across stores):

1. A model joins the ranking when every record matching the filters has a current vector of it. Up to
   its `lazy` missing ones are computed on the spot (a first search of a small store just works); if
   any are still missing, that model is left out, and the store says so: `stores.NAME.hybrid =
   {"used": true, "models": [the ids used], "missing": N, "skipped": [{"model", "reason",
   "missing"}], "hint": ...}` with a hint to run `habitus memory index-vectors` (also when another
   process holds the store's write lock, so a search never waits on a writer to fill vectors in).
   A vector that would be used (a candidate below) whose input checksum no longer matches its record
   (content changed behind habitus's back) leaves its model out the same way (`reason:
   vectors_stale`; hashing every vector on every query would cost too much at 100,000 records, so
   `verify` checks them all). When no model is left, the store **falls back to plain BM25**:
   `{"used": false, "reason": "vectors_missing" | "vectors_stale", ...}`. Fallback, not failure: the
   answer is still the correct full-text answer, and the flag tells the caller it is not the hybrid one.
2. Candidates: the full-text matches (BM25) that score at least STRONG of the best one (with OR
   semantics a record sharing only "the" or "what" with the query matches too; ranked by rank alone,
   such noise would outvote the vectors), and for each model its CANDIDATES records most similar to
   the query (cosine of unit vectors, at least the role's floor).
3. Score fusion: each model's cosines with every filtered record become z-scores (how many standard
   deviations a record stands out from the store for this query); a candidate's score is the mean
   z-score of the models that judge it (MiniLM judges English queries and records only, E5 all) plus
   BM25_WEIGHT / (RRF_K + its rank among the strong text matches); ties by importance, then id.
   Reciprocal rank fusion of the models' ranks, used before, threw away how far a record stands out:
   a paraphrase MiniLM puts first by a wide margin lost to records E5 ranked a little higher (dev
   sets: recall@5 on paraphrases 0.58-0.74 with ranks, 0.70-0.79 with z-scores; docs/quality.md).
   `total` counts the candidates; `hybrid.text_mode` says whether the text part ran as FTS5 syntax
   or, after FTS5 refused the query, literally. Items carry `score` (fused), `bm25` (-bm25, higher is
   better; null when the text did not match) and `similarity` (the cosine of the most important model
   used; null when below its floor).

Vectors of different models are never compared: only rows of the model in use are read.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from habitus.embed import input_checksum
from habitus.errors import HabitusError
from habitus.lang.language import is_english
from habitus.memory import query, records, vectors
from habitus.memory.embedding import Role, VectorModel
from habitus.memory.stores import MemoryStore, both, open_store

if TYPE_CHECKING:
    import numpy as np

CANDIDATES = 1000
STRONG = 0.7  # a full-text match joins the fusion when its BM25 is at least this share of the best
RRF_K = 5  # small: the first few places of the text matches matter far more than the hundredth
BM25_WEIGHT = 2.5  # the first strong text match adds 0.42 of a standard deviation of the vectors' side
HINT = "run `habitus memory index-vectors` (with the same --store) to compute them"


def query_text(query_string: str) -> str:
    """What gets embedded for a query: its words, without FTS5 operators and punctuation."""
    words = [w for w in re.findall(r"\w+", query_string) if w not in ("AND", "OR", "NOT", "NEAR")]
    return " ".join(words) or query_string


def retrieve_ranked(root: Any, stores: list[MemoryStore], sel: query.Selector, *, now: str) -> dict[str, Any]:
    """`memory retrieve`: one page over the stores, ranked by BM25 and, when wanted and possible,
    vectors (the result's `hybrid` says which)."""
    one = Searcher(root, sel) if sel.wants_vectors and any(s.exists() for s in stores) else None
    result = query.retrieve_all(stores, sel, now=now, one=one)
    if one is not None or sel.hybrid is True:
        result["hybrid"] = summary(result, one)
    return result


def retrieve_stores(
    root: Any, request: dict[str, Any], *, store: str | None, wait: float, now: str
) -> dict[str, Any]:
    """`memory retrieve` of one request: over the named store, or (store None) the project store when
    in a repository and trusted, then the global one. A named untrusted project store is refused
    (`untrusted`); the result is not yet bounded (habitus.memory.bound)."""
    sel = query.selector(request)
    targets = both(root, wait=wait) if store is None else [open_store(root, store, wait=wait)]
    try:
        if store is not None:
            targets[0].require_trust()
        return retrieve_ranked(root, targets, sel, now=now)
    finally:
        for target in targets:
            target.close()


def summary(result: dict[str, Any], one: Searcher | None) -> dict[str, Any]:
    """The result's top-level `hybrid`: the most important model loaded, every model loaded, whether
    every store used vectors, and why not."""
    if one is None or not one.models:  # no store to rank, or no model was needed or none loaded
        out: dict[str, Any] = {"model": None, "models": [], "used": False}
        if one is not None and one.problem:
            out["reason"] = one.problem
        return out
    used = [s.get("hybrid", {}).get("used", True) for s in result["stores"].values()]
    return {"model": one.models[0].model_id, "models": [m.model_id for m in one.models], "used": all(used)}


class Searcher:
    """retrieve_all's per-store search for one query. The models are loaded on the first store that
    can use them; by default (hybrid not asked for explicitly) a model that does not load is left out
    (`problem` names why when none loads), and a store with more records lacking any vector than any
    model would compute answers by BM25 without loading a model at all (a 100,000-record store never
    pays for vectors it lacks)."""

    def __init__(self, root: Any, sel: query.Selector) -> None:
        self.root = root
        self.text = query_text(sel.query or "")
        self.strict = sel.hybrid is True
        self.models: list[VectorModel] = []
        self.vectors: dict[str, Any] = {}
        self.problem: str | None = None
        self.loaded = False
        self._roles: list[Role] | None = None

    def roles(self) -> list[Role]:
        if self._roles is None:
            from habitus.memory import embedding

            self._roles = embedding.roles(self.root)
        return self._roles

    def load(self) -> list[VectorModel]:
        if not self.loaded:
            from habitus.memory import embedding

            self.loaded = True
            for role in self.roles():
                if role.english_only and not is_english(self.text):
                    continue  # nothing it could rank; its vectors wait for an English query
                try:
                    model = embedding.load(self.root, role)
                except HabitusError as exc:
                    if self.strict or exc.code not in ("model_unavailable", "checksum_mismatch"):
                        raise
                    self.problem = exc.code
                    continue
                self.models.append(model)
                self.vectors[model.model_id] = model.embed_query(self.text)
        return self.models

    def __call__(self, store: MemoryStore, sel: query.Selector, *, now: str) -> dict[str, Any]:
        conn = store.reader()
        if conn is not None and not self.strict:
            clauses, params = query.conditions(sel, now, page=False)
            lacking = vectors.missing_any(conn, clauses, params)
            if lacking > max(role.lazy for role in self.roles()):
                info = {"used": True, "computed": 0, "missing": 0}
                return _fallback(store, sel, now, info, "vectors_missing", lacking)
        models = self.load() if conn is not None else []
        if not models:
            result = query.retrieve(store, sel, now=now)
            if conn is not None:
                result["hybrid"] = {"used": False, "computed": 0, "missing": 0, "reason": self.problem}
            return result
        return retrieve(store, sel, now=now, models=models, vectors_of=self.vectors, partial=self.strict)


def retrieve(
    store: MemoryStore,
    sel: query.Selector,
    *,
    now: str,
    models: list[VectorModel],
    vectors_of: dict[str, np.ndarray],
    partial: bool = True,
) -> dict[str, Any]:
    conn = store.reader()
    info: dict[str, Any] = {"used": True, "models": [], "computed": 0, "missing": 0}
    if conn is None:
        return {"store": store.name, "total": 0, "items": [], "mode": "hybrid", "hybrid": info}
    clauses, params = query.conditions(sel, now, page=False)
    skipped: list[dict[str, Any]] = []
    lists: list[Similar] = []
    for model in models:
        gap = _fill(store, model, clauses, params, info, partial=partial)
        conn = store.reader()
        assert conn is not None
        if gap:
            skipped.append({"model": model.model_id, "reason": "vectors_missing", "missing": gap})
            continue
        similar = _similar(conn, clauses, params, model, vectors_of[model.model_id])
        if similar is None:
            skipped.append({"model": model.model_id, "reason": "vectors_stale", "missing": 0})
            continue
        info["models"].append(model.model_id)
        lists.append(similar)
    if skipped:
        info["missing"] = max(s["missing"] for s in skipped)
        info["skipped"] = skipped
        info["hint"] = HINT
    if not lists:
        info["models"] = []
        reason = (
            "vectors_missing" if any(s["reason"] == "vectors_missing" for s in skipped) else "vectors_stale"
        )
        return _fallback(store, sel, now, info, reason, info["missing"])
    info["text_mode"], bm = query.searched(
        store, sel.query or "", lambda match: query.ranked(conn, sel, now, match, CANDIDATES)
    )
    bm = bm or []
    best = -bm[0][1] if bm else 0.0
    strong = [seq for seq, score in bm if -score >= STRONG * best]
    fused = _fuse(conn, strong, lists)
    keys = _keys(conn, list(fused))
    order = sorted(fused, key=lambda seq: (-fused[seq], -keys[seq][1], keys[seq][0]))
    page = order[sel.offset : sel.offset + sel.limit]
    bm_of = dict(bm)
    first = lists[0]
    items = []
    for seq, record in _records(conn, page):
        cosine = first.cosine(seq)
        items.append(
            {
                "store": store.name,
                **record,
                "score": round(fused[seq], 6),
                "bm25": None if seq not in bm_of else -bm_of[seq],
                "similarity": None if cosine is None or cosine < first.floor else round(cosine, 4),
            }
        )
    return {"store": store.name, "total": len(order), "items": items, "mode": "hybrid", "hybrid": info}


def _fill(
    store: MemoryStore, model: VectorModel, clauses: list[str], params: list[Any], info: dict[str, Any],
    *, partial: bool,
) -> int:  # fmt: skip
    """Compute the model's missing vectors of the filtered records when the gap is one this call may
    close (by default at most the role's `lazy`; asked for explicitly, up to that many of any gap);
    returns how many are still missing. A locked or read-only store takes none."""
    conn = store.reader()
    assert conn is not None
    gap = vectors.missing(conn, model.model_id, clauses, params)
    if gap and (partial or gap <= model.role.lazy):
        try:
            info["computed"] += vectors.compute(
                store, model, clauses=clauses, params=params, limit=model.role.lazy
            )
        except HabitusError as exc:
            # A search never waits on a writer; a read-only store cannot take vectors either.
            if exc.code not in ("state_locked", "io_error"):
                raise
            return gap
        conn = store.reader()
        assert conn is not None
        gap = vectors.missing(conn, model.model_id, clauses, params)
    return gap


def _fallback(
    store: MemoryStore, sel: query.Selector, now: str, info: dict[str, Any], reason: str, gap: int
) -> dict[str, Any]:
    result = query.retrieve(store, sel, now=now)
    result["hybrid"] = {**info, "used": False, "reason": reason, "missing": gap, "hint": HINT}
    result["hybrid"].pop("models", None)
    return result


class Similar:
    """One model's cosines of the query with every filtered record, as z-scores: how far a record stands
    out from the rest of the store for this query, in the store's own spread. Raw cosines are not
    comparable across models (E5 scores unrelated texts 0.70-0.78, MiniLM 0-0.15), and ranks throw away
    how far the first record stands out; z-scores make them comparable and keep the margin."""

    def __init__(self, seqs: list[int], scores: np.ndarray, role: Role) -> None:
        self.index = {seq: i for i, seq in enumerate(seqs)}
        self.scores = scores
        self.floor = role.floor
        self.english_only = role.english_only
        spread = float(scores.std()) if len(scores) else 0.0  # no rows: numpy would warn of an empty mean
        self.z = (scores - float(scores.mean())) / spread if spread > 1e-6 else scores * 0.0
        self.candidates: list[int] = []

    def cosine(self, seq: int) -> float | None:
        i = self.index.get(seq)
        return None if i is None else float(self.scores[i])

    def zscore(self, seq: int, english: bool) -> float | None:
        i = self.index.get(seq)
        if i is None or (self.english_only and not english):
            return None
        return float(self.z[i])


def _fuse(conn: Any, strong: list[int], lists: list[Similar]) -> dict[int, float]:
    """score = the mean z-score of the models that judge the record + BM25_WEIGHT / (RRF_K + rank among
    the strong text matches), over the candidates: the strong text matches and each model's own."""
    fused: dict[int, float] = {}
    for similar in lists:
        for seq in similar.candidates:
            fused[seq] = 0.0
    for rank, seq in enumerate(strong, 1):
        fused[seq] = BM25_WEIGHT / (RRF_K + rank)
    english: set[int] = set()
    if any(similar.english_only for similar in lists):
        english = {seq for seq, content in _column(conn, list(fused), "content") if is_english(content)}
    for seq in fused:
        zs = [z for z in (similar.zscore(seq, seq in english) for similar in lists) if z is not None]
        if zs:
            fused[seq] += sum(zs) / len(zs)
    return fused


def _similar(
    conn: Any, clauses: list[str], params: list[Any], embedder: VectorModel, vector: np.ndarray
) -> Similar | None:
    """The model's cosines with the filtered records; its candidates are the CANDIDATES most similar at
    or above its floor. None when a candidate's vector was computed from other content (stale)."""
    import numpy as np

    where = " AND ".join(["v.model_id = ?", "v.dims = ?", *clauses])
    rows = conn.execute(
        f"SELECT v.seq, v.vector FROM memory_vectors v JOIN memories m ON m.seq = v.seq WHERE {where}",
        [embedder.model_id, embedder.dims, *params],
    ).fetchall()
    seqs = [int(row[0]) for row in rows]
    if not rows:
        return Similar(seqs, np.zeros(0, dtype=np.float32), embedder.role)
    matrix = np.frombuffer(b"".join([row[1] for row in rows]), dtype="<f4").reshape(len(rows), embedder.dims)
    scores = matrix @ vector.astype(np.float32)
    floor = embedder.role.floor
    best = [seqs[i] for i in np.argsort(-scores, kind="stable")[:CANDIDATES] if scores[i] >= floor]
    inputs = dict(_column(conn, best, "content"))
    checksums = _vector_inputs(conn, best, embedder.model_id)
    if any(input_checksum(inputs[seq]) != checksums.get(seq) for seq in best):
        return None
    if embedder.role.english_only:
        # Its cosines across languages reward shared spelling; the other models judge those records.
        best = [seq for seq in best if is_english(inputs[seq])]
    similar = Similar(seqs, scores, embedder.role)
    similar.candidates = best
    return similar


def _vector_inputs(conn: Any, seqs: list[int], model_id: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for start in range(0, len(seqs), 500):
        chunk = seqs[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        for seq, checksum in conn.execute(
            f"SELECT seq, input FROM memory_vectors WHERE model_id = ? AND seq IN ({marks})",
            [model_id, *chunk],
        ):
            out[int(seq)] = str(checksum)
    return out


def _column(conn: Any, seqs: list[int], column: str) -> list[tuple[int, Any]]:
    out = []
    for start in range(0, len(seqs), 500):
        chunk = seqs[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        out += [
            (int(r[0]), r[1])
            for r in conn.execute(f"SELECT seq, {column} FROM memories WHERE seq IN ({marks})", chunk)
        ]
    return out


def _keys(conn: Any, seqs: list[int]) -> dict[int, tuple[str, float]]:
    """seq -> (id, importance), the tie-breakers."""
    out: dict[int, tuple[str, float]] = {}
    for start in range(0, len(seqs), 500):
        chunk = seqs[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        for seq, memory_id, importance in conn.execute(
            f"SELECT seq, id, importance FROM memories WHERE seq IN ({marks})", chunk
        ):
            out[int(seq)] = (str(memory_id), float(importance))
    return out


def _records(conn: Any, seqs: list[int]) -> list[tuple[int, dict[str, Any]]]:
    """The records of these seqs, in this order."""
    if not seqs:
        return []
    marks = ", ".join("?" for _ in seqs)
    rows = conn.execute(
        f"SELECT seq, {records.COLUMNS} FROM memories WHERE seq IN ({marks})", seqs
    ).fetchall()
    by_seq = {int(row["seq"]): records.from_row(row) for row in rows}
    return [(seq, by_seq[seq]) for seq in seqs if seq in by_seq]
