"""`retrieve`: a validated selector, then FTS5/BM25 search or a filtered list, ordered and paged.

Selector fields (request keys; the command line has a flag for each):

    query        words as a person types them, or FTS5 syntax (see habitus.memory.search); omitted or ""
                 lists without searching
    kind, scope, namespace, source   a string or a list of strings (any of them); source is metadata.source
    tags         list of slugs: a record must carry all of them
    importance, confidence   a number (equal), or {"gt"|"gte"|"lt"|"lte": number, ...}
    expires      active (default) | expired | any
    removed      exclude (default) | only | include   (search covers records that are not removed)
    order_by     relevance (default with a query) | updated_at (default without) | created_at | id |
                 importance | confidence
    order        asc | desc (default: best first for relevance, asc for id, desc for the others)
    limit        1..1000 (default 20);  offset 0..1,000,000 (default 0)
    hybrid       absent/null (default): vector similarity joins the ranking of a query ordered by
                 relevance wherever the embedding model loads; true: required (an error when the model
                 does not load); false: BM25 alone (see habitus.memory.hybrid)

With a query, relevance is `bm25()` ascending (best first), ties broken by importance (higher first),
then id. Every other order is broken by id. Items carry their `store`, and `score` (= -bm25, higher
is better, comparable only within one store and one query) when a query ran.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from habitus.errors import bad_request
from habitus.memory import records, search
from habitus.memory.stores import MemoryStore
from habitus.state.db import translate
from habitus.state.memory_store import KINDS, SCOPES

ORDER_FIELDS = ("relevance", "updated_at", "created_at", "id", "importance", "confidence")
RANGE_OPS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
MAX_LIMIT = 1000
MAX_OFFSET = 1_000_000
MAX_QUERY_CHARS = 4096
T = TypeVar("T")


@dataclass
class Selector:
    query: str | None = None
    kinds: list[str] = field(default_factory=list)
    scopes: list[str] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    ranges: list[tuple[str, str, float]] = field(default_factory=list)  # (column, operator, value)
    expires: str = "active"
    removed: str = "exclude"
    order_by: str = "updated_at"
    order: str = "desc"
    limit: int = 20
    offset: int = 0
    hybrid: bool | None = None  # None: vectors join the ranking wherever they can (see habitus.memory.hybrid)

    @property
    def wants_vectors(self) -> bool:
        """Whether this search should try hybrid ranking: asked for, or by default for a query of plain
        words (FTS5 syntax such as `deploy NOT staging` means exactly what it says)."""
        if self.query is None or self.order_by != "relevance" or self.hybrid is False:
            return False
        return self.hybrid is True or not search.is_syntax(self.query)


def _strings(value: Any, name: str, check: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [
        check(item, f"{name}[{index}]" if isinstance(value, list) else name)
        for index, item in enumerate(items)
    ]


def _source(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise bad_request(name, "expected a non-empty string")
    return value


def _range(value: Any, name: str) -> list[tuple[str, str, float]]:
    if value is None:
        return []
    if isinstance(value, dict):
        if not value:
            raise bad_request(name, "expected a non-empty range object with gt, gte, lt or lte")
        out = []
        for op, bound in value.items():
            if op not in RANGE_OPS:
                raise bad_request(f"{name}.{op}", "unknown range operator; expected gt, gte, lt or lte")
            out.append((name, RANGE_OPS[op], records.check_unit(bound, f"{name}.{op}")))
        return out
    return [(name, "=", records.check_unit(value, name))]


def _integer(value: Any, name: str, low: int, high: int, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise bad_request(name, f"expected an integer from {low} to {high}")
    return value


def selector(request: dict[str, Any]) -> Selector:
    """Validate a retrieve request into a Selector (raises bad_request naming the field)."""
    query = request.get("query")
    if query is not None and not isinstance(query, str):
        raise bad_request("query", "expected a string")
    if query is not None and len(query) > MAX_QUERY_CHARS:
        raise bad_request("query", f"expected at most {MAX_QUERY_CHARS} characters")
    query = query.strip() if query else None
    sel = Selector(
        query=query or None,
        kinds=_strings(request.get("kind"), "kind", lambda v, n: records.check_choice(v, n, KINDS)),
        scopes=_strings(request.get("scope"), "scope", lambda v, n: records.check_choice(v, n, SCOPES)),
        namespaces=_strings(request.get("namespace"), "namespace", records.check_slug),
        sources=_strings(request.get("source"), "source", _source),
        tags=records.check_tags(request.get("tags") or [], "tags", stored=False),
        ranges=_range(request.get("importance"), "importance")
        + _range(request.get("confidence"), "confidence"),
        expires=records.check_choice(
            request.get("expires", "active"), "expires", ("active", "expired", "any")
        ),
        removed=records.check_choice(
            request.get("removed", "exclude"), "removed", ("exclude", "only", "include")
        ),
        limit=_integer(request.get("limit"), "limit", 1, MAX_LIMIT, 20),
        offset=_integer(request.get("offset"), "offset", 0, MAX_OFFSET, 0),
    )
    hybrid = request.get("hybrid")
    if hybrid is not None and not isinstance(hybrid, bool):
        raise bad_request("hybrid", "expected true, false or null")
    sel.hybrid = hybrid
    if hybrid and sel.query is None:
        raise bad_request("hybrid", "hybrid search needs a query")
    if sel.query is not None and sel.removed != "exclude":
        raise bad_request(
            "removed", "search covers records that are not removed; list removed ones without a query"
        )
    default_order = "relevance" if sel.query is not None else "updated_at"
    sel.order_by = records.check_choice(request.get("order_by", default_order), "order_by", ORDER_FIELDS)
    if sel.order_by == "relevance" and sel.query is None:
        raise bad_request("order_by", "relevance needs a query")
    if sel.hybrid and sel.order_by != "relevance":
        raise bad_request("order_by", "hybrid search orders by relevance")
    default_direction = "asc" if sel.order_by in ("relevance", "id") else "desc"
    sel.order = records.check_choice(request.get("order", default_direction), "order", ("asc", "desc"))
    return sel


def conditions(sel: Selector, now: str, *, page: bool) -> tuple[list[str], list[Any]]:
    """WHERE clauses and parameters. For a page, the (unselective) liveness tests are written `+col`
    so that the planner walks the ORDER BY index instead of sorting every live record; counts keep
    them indexable (memories_live is a covering index for them)."""
    clauses: list[str] = []
    params: list[Any] = []
    plus = "+" if page else ""
    if sel.removed == "exclude":
        clauses.append(f"{plus}m.removed_at IS NULL")
    elif sel.removed == "only":
        clauses.append("m.removed_at IS NOT NULL")
    if sel.expires == "active":
        clauses.append(f"({plus}m.expires_at IS NULL OR {plus}m.expires_at > ?)")
        params.append(now)
    elif sel.expires == "expired":
        clauses.append("m.expires_at IS NOT NULL AND m.expires_at <= ?")
        params.append(now)
    for column, values in (
        ("kind", sel.kinds),
        ("scope", sel.scopes),
        ("namespace", sel.namespaces),
        ("source", sel.sources),
    ):
        if values:
            clauses.append(f"m.{column} IN ({', '.join('?' for _ in values)})")
            params.extend(values)
    for tag in sel.tags:
        clauses.append("EXISTS (SELECT 1 FROM memory_tags t WHERE t.seq = m.seq AND t.tag = ?)")
        params.append(tag)
    for column, op, value in sel.ranges:
        clauses.append(f"m.{column} {op} ?")
        params.append(value)
    return clauses, params


def _order(sel: Selector) -> str:
    direction = sel.order.upper()
    if sel.order_by == "relevance":
        if direction == "ASC":
            return "bm ASC, m.importance DESC, m.id ASC"
        return "bm DESC, m.importance ASC, m.id DESC"
    if sel.order_by == "id":
        return f"m.id {direction}"
    return f"m.{sel.order_by} {direction}, m.id ASC"


def retrieve(store: MemoryStore, sel: Selector, *, now: str) -> dict[str, Any]:
    """One page of matching records from one store: {"store", "total", "items", "mode"}.

    `mode` is "fts" (the query as given), "literal" (the fallback after FTS5 refused the query) or
    "list" (no query). A missing store is empty.
    """
    conn = store.reader()
    mode = "list" if sel.query is None else "fts"
    if conn is None:
        return {"store": store.name, "total": 0, "items": [], "mode": mode}
    if sel.query is None:
        return {"store": store.name, **_page(store, conn, sel, now, None), "mode": mode}
    mode, page = searched(store, sel.query, lambda match: _page(store, conn, sel, now, match))
    return {"store": store.name, **(page or {"total": 0, "items": []}), "mode": mode}


def searched(store: MemoryStore, query: str, run: Callable[[str], T]) -> tuple[str, T | None]:
    """run(MATCH expression) for the query: as FTS5 syntax when it uses that syntax, else (or when
    FTS5 refuses the syntax) as plain words (habitus.memory.search): (mode, result), result None when
    nothing searchable is left. mode is "fts", or "literal" after FTS5 refused the syntax."""
    mode = "fts"
    if search.is_syntax(query):
        match = search.prepare(query)
        if match:
            try:
                return mode, run(match)
            except sqlite3.OperationalError as exc:
                if not search.is_syntax_error(str(exc)):
                    raise translate(exc, store.path) from None
        mode = "literal"
    try:
        match = search.words_match(query, store.reader(), stemmed=store.stemmed())
        return mode, run(match) if match else None
    except sqlite3.OperationalError as exc:
        if not search.is_syntax_error(str(exc)):
            raise translate(exc, store.path) from None
        return mode, None


def ranked(
    conn: sqlite3.Connection, sel: Selector, now: str, match: str, cap: int
) -> list[tuple[int, float]]:
    """(seq, bm25) of the best `cap` matches, best first (hybrid search fuses these with vectors)."""
    clauses, params = conditions(sel, now, page=False)
    where = " AND ".join(["memories_fts MATCH ?", *clauses])
    rows = conn.execute(
        "SELECT m.seq, bm25(memories_fts) AS bm FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid "
        f"WHERE {where} ORDER BY bm ASC, m.importance DESC, m.id ASC LIMIT ?",
        [match, *params, cap],
    ).fetchall()
    return [(int(row[0]), float(row[1])) for row in rows]


def _page(
    store: MemoryStore, conn: sqlite3.Connection, sel: Selector, now: str, match: str | None
) -> dict[str, Any]:
    columns = ", ".join(f"m.{f}" for f in records.FIELDS)
    source, score = "memories m", ""
    if match is not None:
        source = "memories_fts JOIN memories m ON m.seq = memories_fts.rowid"
        score = ", bm25(memories_fts) AS bm"

    def where(page: bool) -> tuple[str, list[Any]]:
        clauses, params = conditions(sel, now, page=page)
        if match is not None:
            clauses.insert(0, "memories_fts MATCH ?")
            params.insert(0, match)
        return ("WHERE " + " AND ".join(clauses)) if clauses else "", params

    condition, params = where(True)
    sql = f"SELECT {columns}{score} FROM {source} {condition} ORDER BY {_order(sel)} LIMIT ? OFFSET ?"
    rows = conn.execute(sql, (*params, sel.limit, sel.offset)).fetchall()
    if 0 < len(rows) < sel.limit or (not rows and sel.offset == 0):
        total = sel.offset + len(rows)  # this page is the tail: no need to count
    else:
        condition, params = where(False)
        total = int(conn.execute(f"SELECT count(*) FROM {source} {condition}", params).fetchone()[0])
    items = []
    for row in rows:
        item = {"store": store.name, **records.from_row(row)}
        if match is not None:
            item["score"] = -float(row["bm"])
        items.append(item)
    return {"total": total, "items": items}


def retrieve_all(
    stores: list[MemoryStore],
    sel: Selector,
    *,
    now: str,
    one: Callable[..., dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One page over the stores in order (project then global for --both): totals add up, and the
    page runs on from one store into the next. Identity is (store, id); scores are per store.
    `one(store, sel, now=)` searches one store (default: retrieve; habitus.memory.hybrid passes its own)."""
    one = one or retrieve
    items: list[dict[str, Any]] = []
    total, offset, mode = 0, sel.offset, "list"
    summary: dict[str, Any] = {}
    for store in stores:
        verdict = store.verdict()
        if store.exists() and not verdict.trusted:  # an untrusted project store is skipped, and says so
            summary[store.name] = {"path": str(store.path), "exists": True, "total": 0, **verdict.describe()}
            continue
        want = sel.limit - len(items)
        part = one(store, replace(sel, offset=offset, limit=max(want, 1)), now=now)
        items += part["items"][: max(want, 0)]
        offset = max(0, offset - part["total"])
        total += part["total"]
        mode = part["mode"]
        summary[store.name] = {"path": str(store.path), "exists": store.exists(), "total": part["total"]}
        if "hybrid" in part:
            summary[store.name]["hybrid"] = part["hybrid"]
    return {
        "total": total,
        "items": items,
        "mode": mode,
        "limit": sel.limit,
        "offset": sel.offset,
        "stores": summary,
    }
