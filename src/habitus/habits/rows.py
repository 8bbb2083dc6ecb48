"""Checksummed rows of the habit tables: sealing on write, verification on read, and the audit chain.

A row's checksum is `habitus.codec.checksum({"table": TABLE, **fields})` over the named fields below
(everything but the checksum itself and, for evidence and audit rows, the integer rowid). Naming the
fields keeps old checksums valid when a later migration adds a column. A column added later is
OPTIONAL: it enters the checksum only when set, so rows written before it existed keep theirs, and
setting or clearing it on a sealed row is a mismatch like any other change. Any mismatch on read raises
`checksum_mismatch` (exit 3): a tampered or damaged row is never used.

Audit rows also form a chain: `prev` is the checksum of the previous audit row, so a deleted or
reordered entry breaks the chain (`verify_audit_chain`).
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from habitus import codec
from habitus.errors import HabitusError
from habitus.state.clock import utc_now

if TYPE_CHECKING:
    from habitus.state.inventory import Check

FIELDS: dict[str, tuple[str, ...]] = {
    "habits": (
        "id",
        "condition",
        "behavior",
        "polarity",
        "confidence_bp",
        "status",
        "origin",
        "candidate_key",
        "wording",
        "approved_wording",
        "approved_at",
        "law",
        "law_findings",
        "reason",
        "created_at",
        "updated_at",
    ),
    "habit_evidence": ("habit_id", "ref", "day", "note", "actor", "created_at"),
    "habit_relations": (
        "id",
        "kind",
        "habit_a",
        "habit_b",
        "wording_a",
        "wording_b",
        "similarity_bp",
        "condition_bp",
        "behavior_bp",
        "strength",
        "method",
        "model_id",
        "decision",
        "survivor",
        "created_at",
        "updated_at",
    ),
    "habit_audit": ("target", "action", "actor", "before", "after", "data", "prev", "created_at"),
    "habit_vectors": ("habit_id", "field", "model_id", "dims", "input", "vector", "created_at"),
    "review_snapshots": ("kind", "items", "created_ms", "expires_ms"),
    "habit_examples": ("id", "habit_id", "text", "source", "actor", "created_at"),
    "habit_example_vectors": ("example_id", "model_id", "dims", "input", "vector", "created_at"),
    # analyze (habitus.learn.queue)
    "analyze_watermarks": ("generation", "seq", "record", "updated_at"),
    "analyze_failures": (
        "generation",
        "seq_start",
        "seq_end",
        "attempts",
        "reason",
        "skipped",
        "first_at",
        "last_at",
    ),
    "analyze_quarantine": (
        "generation",
        "seq_start",
        "seq_end",
        "model",
        "reason",
        "detail",
        "answer",
        "created_at",
    ),
    "analyze_pending": ("kind", "ref", "day", "text", "habitual", "created_at"),
    "analyze_runs": (
        "analyzer",
        "started_at",
        "finished_at",
        "outcome",
        "batches",
        "records",
        "proposals",
        "data",
    ),
}
OPTIONAL: dict[str, tuple[str, ...]] = {
    "habits": ("projects",),  # 0008: a project habit's repositories (habitus.habits.scope)
}
KEYS = {
    "habits": "id",
    "habit_relations": "id",
    "review_snapshots": "kind",
    "analyze_watermarks": "generation",
}
ACTORS = ("user", "analyze", "system")


def _value(name: str, value: Any) -> Any:
    if isinstance(value, bytes | memoryview):
        import hashlib

        return {"sha256": hashlib.sha256(bytes(value)).hexdigest()}  # blobs are sealed by digest
    return value


def columns(table: str) -> tuple[str, ...]:
    return FIELDS[table] + OPTIONAL.get(table, ())


def seal(table: str, values: dict[str, Any]) -> str:
    body = {name: _value(name, values.get(name)) for name in FIELDS[table]}
    for name in OPTIONAL.get(table, ()):
        if values.get(name) is not None:
            body[name] = _value(name, values[name])
    return codec.checksum({"table": table, **body})


# Rows found to match their checksum, by their every value: a long-lived process (the warm worker and
# its serving processes) reads the same habit rows on every prompt. A row that differs in any
# value is another key and is checked afresh; a mismatch is never remembered.
_SOUND: set[tuple[Any, ...]] = set()
_SOUND_MAX = 50_000


def verify(table: str, row: sqlite3.Row | dict[str, Any]) -> dict[str, Any]:
    """The row as a dict, after checking its checksum (raises checksum_mismatch)."""
    values = dict(row)
    try:
        memo: tuple[Any, ...] | None = (table, *values.items())
        if memo in _SOUND:
            return values
    except TypeError:  # a value that cannot be a key (a memoryview): check it every time
        memo = None
    if values.get("checksum") != seal(table, values):
        key = KEYS.get(table)
        which = f" {values.get(key)}" if key else ""
        raise HabitusError(
            "checksum_mismatch",
            f"ledger.sqlite: a {table} row{which} does not match its checksum",
            hint="the ledger was changed outside habitus; restore it from a backup",
        )
    if memo is not None:
        if len(_SOUND) >= _SOUND_MAX:
            _SOUND.clear()
        _SOUND.add(memo)
    return values


def insert(conn: sqlite3.Connection, table: str, values: dict[str, Any]) -> dict[str, Any]:
    sealed = {**values, "checksum": seal(table, values)}
    names = [*columns(table), "checksum"]
    conn.execute(
        f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
        [sealed.get(n) for n in names],
    )
    return sealed


def update(conn: sqlite3.Connection, table: str, current: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """Write `changes` onto a verified row (by its key), re-sealed; returns the new row."""
    key = KEYS[table]
    new = {**current, **changes}
    if "updated_at" in FIELDS[table] and "updated_at" not in changes:
        new["updated_at"] = utc_now()
    new["checksum"] = seal(table, new)
    names = [n for n in columns(table) if n != key] + ["checksum"]
    cursor = conn.execute(
        f"UPDATE {table} SET {', '.join(f'{n} = ?' for n in names)} WHERE {key} = ? AND checksum = ?",
        [*(new.get(n) for n in names), current[key], current["checksum"]],
    )
    if cursor.rowcount != 1:
        raise HabitusError("stale", f"ledger.sqlite: {table} row {current[key]} changed meanwhile")
    return new


def change(
    conn: sqlite3.Connection,
    table: str,
    current: dict[str, Any],
    action: str,
    actor: str,
    *,
    note: dict[str, Any] | None = None,
    **changes: Any,
) -> dict[str, Any]:
    """Update a verified row and append its audit entry: the one way habits and relations change.

    The audit data records the status (habits) or decision (relations) move, plus `note`."""
    new = update(conn, table, current, **changes)
    data = dict(note or {})
    for name in ("status", "decision"):
        if name in changes and current[name] != new[name]:
            data[name] = [current[name], new[name]]
    audit(
        conn, current[KEYS[table]], action, actor, before=current["checksum"], after=new["checksum"], **data
    )
    return new


def new_id(conn: sqlite3.Connection, table: str, prefix: str) -> str:
    while True:
        candidate = f"{prefix}-{secrets.token_hex(6)}"
        if conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (candidate,)).fetchone() is None:
            return candidate


def audit(
    conn: sqlite3.Connection,
    target: str,
    action: str,
    actor: str,
    *,
    before: str | None = None,
    after: str | None = None,
    **data: Any,
) -> dict[str, Any]:
    """Append one audit row (call inside the writing transaction, so the chain stays linear)."""
    if actor not in ACTORS:
        raise ValueError(f"unknown actor {actor!r}")
    last = conn.execute("SELECT checksum FROM habit_audit ORDER BY id DESC LIMIT 1").fetchone()
    return insert(
        conn,
        "habit_audit",
        {
            "target": target,
            "action": action,
            "actor": actor,
            "before": before,
            "after": after,
            "data": codec.canonical(data).decode(),
            "prev": last[0] if last else "",
            "created_at": utc_now(),
        },
    )


def verify_audit_chain(conn: sqlite3.Connection) -> int:
    """Check every audit row and the chain linking them; returns the number of rows."""
    prev = ""
    count = 0
    for row in conn.execute("SELECT * FROM habit_audit ORDER BY id"):
        values = verify("habit_audit", row)
        if values["prev"] != prev:
            raise HabitusError(
                "checksum_mismatch",
                f"ledger.sqlite: the audit chain is broken at entry {values['id']}",
                hint="audit entries were removed or reordered outside habitus",
            )
        prev = values["checksum"]
        count += 1
    return count


# -- what `habitus verify` (and restore, on a backup's copy) reports -------------------------------

MAX_IDS = 100


def verifier(check: Check) -> Iterator[dict[str, Any]]:
    """Every checksummed ledger row (habits, evidence, relations, audit, vectors, snapshots) and the
    audit chain, as verify's issues: row_checksum (per table, with the keys of the bad rows),
    audit_chain. The same checks that refuse a tampered row at run time; nothing is written."""
    conn = check.conn
    assert conn is not None
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    factory, conn.row_factory = conn.row_factory, sqlite3.Row  # the row checks read columns by name
    try:
        yield from _ledger_issues(conn, present)
    finally:
        conn.row_factory = factory


def _ledger_issues(conn: sqlite3.Connection, present: set[str]) -> Iterator[dict[str, Any]]:
    for table in FIELDS:
        if table not in present:
            continue
        key = KEYS.get(table)
        bad: list[Any] = []
        for number, row in enumerate(conn.execute(f"SELECT * FROM {table}"), start=1):
            try:
                verify(table, row)
            except HabitusError:
                bad.append(row[key] if key else f"row {number}")
        if bad:
            yield {
                "code": "row_checksum",
                "message": f"{len(bad)} {table} row(s) do not match their checksum",
                "table": table,
                "count": len(bad),
                "ids": bad[:MAX_IDS],
            }
    if "habit_audit" in present:
        try:
            verify_audit_chain(conn)
        except HabitusError as exc:
            if "chain" in exc.message:
                yield {"code": "audit_chain", "message": exc.message}
