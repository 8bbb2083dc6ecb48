"""Embedding vectors of memory content, for hybrid retrieval: derived rows in `memory_vectors`.

A row is (seq, model_id, dims, input, vector): the record's content embedded by the model `model_id`
(habitus.embed: name + fingerprint of its files, plus `/passage` for E5's passage vectors; see
habitus.memory.embedding, which also says which models memory uses), `input` =
`input_checksum(content)`. A record has one row per model. Rules:

- Vectors of different models are never compared: every read names the model in use.
- A vector is used only while its input checksum matches the record's content. Every habitus write
  path keeps this true without hashing: a patch that changes content deletes the record's vectors, and
  new records (retain, import, observe, reflect) have no vectors yet. `verify` hashes them all
  (`vector_stale`) and `index-vectors` replaces stale ones, in case another program changed content.
- They are never computed on the retain path (retain stays well under its 150 ms budget without
  loading a model): `memory index-vectors` computes what is missing in batches, model by model (the
  fastest first), and a search computes up to its role's `lazy` missing ones itself before it leaves
  that model out (see habitus.memory.hybrid).

Embedding happens outside any transaction; each batch is written in a short one that re-checks the
record's content, so a record patched meanwhile is skipped (and counted as still missing).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from habitus.embed import input_checksum
from habitus.memory.stores import MemoryStore
from habitus.state.clock import utc_now

if TYPE_CHECKING:
    from habitus.memory.embedding import VectorModel

BATCH = 256


def _missing_sql(clauses: list[str]) -> str:
    where = " AND ".join([*clauses, "NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.seq = m.seq "
                          "AND v.model_id = ?)"])  # fmt: skip
    return f"FROM memories m WHERE {where}"


def missing(conn: sqlite3.Connection, model_id: str, clauses: list[str], params: list[Any]) -> int:
    """How many records matching the clauses (on `memories m`) have no vector of this model."""
    return int(conn.execute(f"SELECT count(*) {_missing_sql(clauses)}", [*params, model_id]).fetchone()[0])


def missing_any(conn: sqlite3.Connection, clauses: list[str], params: list[Any]) -> int:
    """How many records matching the clauses have no vector of any model (cheap: no model needed)."""
    where = " AND ".join([*clauses, "NOT EXISTS (SELECT 1 FROM memory_vectors v WHERE v.seq = m.seq)"])
    return int(conn.execute(f"SELECT count(*) FROM memories m WHERE {where}", params).fetchone()[0])


def compute(
    store: MemoryStore,
    embedder: VectorModel,
    *,
    clauses: list[str] | None = None,
    params: list[Any] | None = None,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed and store the vectors that records matching the clauses (default: every record that is not
    removed) lack for this model, oldest first, at most `limit`. Returns how many were written.
    `progress(done, total)` is called after each committed batch."""
    conn = store.reader()
    if conn is None:
        return 0
    clauses = clauses if clauses is not None else ["m.removed_at IS NULL"]
    params = params or []
    sql = f"SELECT m.seq, m.content {_missing_sql(clauses)} ORDER BY m.seq"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    todo = conn.execute(sql, [*params, embedder.model_id]).fetchall()
    written = 0
    for start in range(0, len(todo), BATCH):
        batch = todo[start : start + BATCH]
        matrix = embedder.embed_records([row["content"] for row in batch])
        writer = store.writer()
        with store.db.write(writer):
            for row, vector in zip(batch, matrix, strict=True):
                current = writer.execute(
                    "SELECT content FROM memories WHERE seq = ?", (row["seq"],)
                ).fetchone()
                if current is None or current[0] != row["content"]:
                    continue  # changed or purged meanwhile
                writer.execute(
                    "INSERT OR REPLACE INTO memory_vectors (seq, model_id, dims, input, vector, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (row["seq"], embedder.model_id, embedder.dims, input_checksum(row["content"]),
                     vector.astype("<f4").tobytes(), utc_now()),
                )  # fmt: skip
                written += 1
        if progress is not None:
            progress(start + len(batch), len(todo))
    return written


def stale(conn: sqlite3.Connection, model_id: str | None = None) -> list[tuple[int, str]]:
    """(seq, id) of vectors whose input checksum no longer matches their record's content (every model,
    or one). Hashes every vector's content: a maintenance check, not a query-time one."""
    sql = "SELECT v.seq, v.input, m.id, m.content FROM memory_vectors v JOIN memories m ON m.seq = v.seq"
    rows = conn.execute(sql + (" WHERE v.model_id = ?" if model_id else ""), [model_id] if model_id else [])
    return [(int(row[0]), str(row[2])) for row in rows if row[1] != input_checksum(row[3])]


def drop_stale(store: MemoryStore, model_id: str) -> int:
    """Delete this model's stale vectors (index-vectors then computes them again)."""
    conn = store.reader()
    if conn is None:
        return 0
    found = stale(conn, model_id)
    if found:
        writer = store.writer()
        with store.db.write(writer):
            writer.executemany(
                "DELETE FROM memory_vectors WHERE seq = ? AND model_id = ?",
                [(seq, model_id) for seq, _ in found],
            )
    return len(found)


def index_one(
    store: MemoryStore,
    embedder: VectorModel,
    *,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """One model's part of `memory index-vectors`: replace its stale vectors, compute missing ones (all,
    or at most limit)."""
    dropped = drop_stale(store, embedder.model_id)
    written = compute(store, embedder, limit=limit, progress=progress)
    conn = store.reader()
    left = 0 if conn is None else missing(conn, embedder.model_id, ["m.removed_at IS NULL"], [])
    return {"model": embedder.model_id, "computed": written, "stale_replaced": dropped, "missing": left}


def index(
    store: MemoryStore,
    models: list[VectorModel],
    *,
    limit: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """`memory index-vectors`: every model's part, the fastest model first (MiniLM embeds several
    times faster than E5, and a store searches with each model as soon as that model's vectors are
    complete). `limit` bounds each model's run; `progress(model_id, done, total)` after each batch.
    Top-level counts add up over the models; `model` names the most important one."""
    parts = []
    for model in sorted(models, key=lambda m: m.role.passages):  # passage (E5) vectors last: slowest
        report = None if progress is None else (lambda d, t, m=model.model_id: progress(m, d, t))
        parts.append(index_one(store, model, limit=limit, progress=report))
    parts.sort(key=lambda part: [m.model_id for m in models].index(part["model"]))
    return {
        "store": store.name,
        "path": str(store.path),
        "model": parts[0]["model"] if parts else None,
        "models": parts,
        **{key: sum(p[key] for p in parts) for key in ("computed", "stale_replaced", "missing")},
    }
