"""`habitus eval memory`: recall@k and MRR of `memory retrieve` on labelled memories and queries.

Inputs are JSON lines:

    memories  {"id": "m1", "content": "...", "kind": "decision", "tags": ["db"]}   (kind, tags optional)
    queries   {"id": "q1", "query": "...", "expected": ["m1", ...], "category": "paraphrase", "lang": "en"}

The memories are retained into a fresh store in a temporary folder through the same code as `memory
retain` (validation, redaction), then their vectors are built as `memory index-vectors` would (a store
of up to 500 records gets them from its first search anyway). Each query runs as `memory retrieve
QUERY` with no flags (or with `hybrid` forced on or off). A query counts as found when at least one
expected id is in the top k (default 5); its reciprocal rank is 1/rank of the first expected id in the
top 20, else 0. Figures come overall, per category and per lang. A query that expects nothing (`[]`:
no memory answers it) is left out of them and counted under `unanswerable`, with how many came back
empty.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus import codec
from habitus.errors import HabitusError

DEPTH = 20  # how deep the reciprocal rank looks
MAX_LINES = 100_000


@dataclass
class Query:
    id: str
    query: str
    expected: list[str]
    category: str
    lang: str


@dataclass
class RecallTally:
    queries: int = 0
    found: int = 0
    rr: float = 0.0

    def add(self, found: bool, rr: float) -> None:
        self.queries += 1
        self.found += int(found)
        self.rr += rr

    def as_dict(self) -> dict[str, Any]:
        n = max(1, self.queries)
        return {"queries": self.queries, "found": self.found,
                "recall_at_k": round(self.found / n, 4), "mrr": round(self.rr / n, 4)}  # fmt: skip


@dataclass
class Report:
    k: int
    overall: RecallTally = field(default_factory=RecallTally)
    categories: dict[str, RecallTally] = field(default_factory=dict)
    langs: dict[str, RecallTally] = field(default_factory=dict)
    misses: list[dict[str, Any]] = field(default_factory=list)
    modes: dict[str, int] = field(default_factory=dict)
    unanswerable: RecallTally = field(default_factory=RecallTally)  # found: it returned nothing


def _lines(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise HabitusError("not_found", f"{path}: no such {what} file") from None
    with handle:
        for number, line in enumerate(handle, 1):
            if number > MAX_LINES:
                raise HabitusError("bad_request", f"{path}: more than {MAX_LINES} lines")
            if line.strip():
                yield number, codec.parse_object(line, what=f"{path} line {number}")


def _text(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise HabitusError("bad_request", f"{where}: {key}: expected a non-empty string")
    return value


def load_memories(path: Path) -> list[dict[str, Any]]:
    out, seen = [], set()
    for number, obj in _lines(path, "memories"):
        where = f"{path} line {number}"
        memory_id = _text(obj, "id", where)
        if memory_id in seen:
            raise HabitusError("bad_request", f"{where}: id appears twice")
        seen.add(memory_id)
        request = {"content": _text(obj, "content", where)}
        for key in ("kind", "tags"):
            if obj.get(key) is not None:
                request[key] = obj[key]
        out.append({"id": memory_id, "request": request})
    return out


def load_queries(path: Path, known: set[str]) -> list[Query]:
    out = []
    for number, obj in _lines(path, "queries"):
        where = f"{path} line {number}"
        expected = obj.get("expected")
        if not isinstance(expected, list) or not all(isinstance(e, str) for e in expected):
            raise HabitusError("bad_request", f"{where}: expected: a list of memory ids")
        unknown = [e for e in expected if e not in known]
        if unknown:
            raise HabitusError("bad_request", f"{where}: expected: unknown memory id {unknown[0]}")
        out.append(
            Query(
                id=_text(obj, "id", where),
                query=_text(obj, "query", where),
                expected=expected,
                category=str(obj.get("category") or "uncategorised"),
                lang=str(obj.get("lang") or "unknown"),
            )
        )
    return out


def evaluate(
    root: Any, memories: list[dict[str, Any]], queries: list[Query], *, k: int = 5, hybrid: bool | None = None
) -> dict[str, Any]:
    from habitus.memory import core, records, vectors
    from habitus.memory.hybrid import retrieve_ranked
    from habitus.memory.query import selector
    from habitus.memory.stores import MemoryStore
    from habitus.state.clock import utc_now

    report = Report(k=k)
    with tempfile.TemporaryDirectory(prefix="habitus-eval-memory-") as folder:
        store = MemoryStore("global", Path(folder) / "memory.sqlite", wait=5.0)
        try:
            by_store_id: dict[str, str] = {}
            now = utc_now()
            conn = store.writer()
            with store.db.write(conn):
                for memory in memories:
                    try:
                        record = records.create(memory["request"], scope="global", now=now)
                    except HabitusError as exc:
                        raise HabitusError(exc.code, f"memory {memory['id']}: {exc.message}") from None
                    core.insert(conn, record)
                    by_store_id[record["id"]] = memory["id"]
            built = 0
            if hybrid is not False:
                built = _build_vectors(root, store, required=hybrid is True, index=vectors.index)
            for case in queries:
                sel = selector({"query": case.query, "limit": max(k, DEPTH), "hybrid": hybrid})
                result = retrieve_ranked(root, [store], sel, now=now)
                report.modes[result["mode"]] = report.modes.get(result["mode"], 0) + 1
                got = [by_store_id[item["id"]] for item in result["items"]]
                if not case.expected:  # nothing answers it: counted apart, never in recall
                    report.unanswerable.add(not got, 0.0)
                    continue
                rank = next((i for i, g in enumerate(got, 1) if g in case.expected), None)
                found = rank is not None and rank <= k
                rr = 1.0 / rank if rank is not None else 0.0
                for tally in (
                    report.overall,
                    report.categories.setdefault(case.category, RecallTally()),
                    report.langs.setdefault(case.lang, RecallTally()),
                ):
                    tally.add(found, rr)
                if not found:
                    report.misses.append({"id": case.id, "category": case.category, "lang": case.lang,
                                          "expected": case.expected, "got": got[:k]})  # fmt: skip
        finally:
            store.close()
    return {
        "memories": len(memories),
        "k": k,
        "hybrid": hybrid,
        "vectors": built,
        **report.overall.as_dict(),
        "categories": {name: t.as_dict() for name, t in sorted(report.categories.items())},
        "langs": {name: t.as_dict() for name, t in sorted(report.langs.items())},
        "modes": report.modes,
        "unanswerable": {"queries": report.unanswerable.queries, "empty": report.unanswerable.found},
        "misses": report.misses,
    }


def _build_vectors(root: Any, store: Any, *, required: bool, index: Any) -> int:
    from habitus.memory import embedding

    models = []
    for role in embedding.roles(root):
        try:
            models.append(embedding.load(root, role))
        except HabitusError as exc:
            if required or exc.code not in ("model_unavailable", "checksum_mismatch"):
                raise
    return int(index(store, models)["computed"]) if models else 0
