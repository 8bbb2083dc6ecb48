"""The per-domain checks `habitus verify` runs, registered in `inventory.VERIFIERS`.

Each is `fn(check: inventory.Check) -> Iterable[dict]` yielding issues with stable codes; none writes.
They adapt each domain's own integrity check to verify's report, so the domains keep one definition of
what "intact" means (the same code that refuses a tampered row at run time reports it here).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from habitus.errors import HabitusError

if TYPE_CHECKING:
    from habitus.state.inventory import Check

MAX_IDS = 100


def ledger_rows(check: Check) -> Iterator[dict[str, Any]]:
    """Every checksummed ledger row (habits, evidence, relations, audit, vectors, snapshots) and the
    audit chain. Codes: row_checksum (per table, with the keys of the bad rows), audit_chain."""

    conn = check.conn
    assert conn is not None
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    import sqlite3

    factory, conn.row_factory = conn.row_factory, sqlite3.Row  # the row checks read columns by name
    try:
        yield from _ledger_rows(conn, present)
    finally:
        conn.row_factory = factory


def _ledger_rows(conn: Any, present: set[str]) -> Iterator[dict[str, Any]]:
    from habitus.habits import rows

    for table in rows.FIELDS:
        if table not in present:
            continue
        key = rows.KEYS.get(table)
        bad: list[Any] = []
        for number, row in enumerate(conn.execute(f"SELECT * FROM {table}"), start=1):
            try:
                rows.verify(table, row)
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
            rows.verify_audit_chain(conn)
        except HabitusError as exc:
            if "chain" in exc.message:
                yield {"code": "audit_chain", "message": exc.message}


def memory_store(check: Check) -> Iterator[dict[str, Any]]:
    """The memory store's own report (FTS drift, tags, fields, SQLite integrity), codes unchanged."""
    from habitus.memory.maintenance import verify
    from habitus.memory.stores import MemoryStore

    report = verify(MemoryStore("global", check.path, wait=check.wait))
    for issue in report["issues"]:
        yield {
            "code": issue["code"],
            "message": f"memory store: {issue['code']}",
            "count": issue["count"],
            "ids": issue["ids"],
        }


def observation_log(check: Check) -> Iterator[dict[str, Any]]:
    """The observation log's chain, sizes, index and fingerprints, in full. A torn tail past the last
    commit (uncommitted_tail) is left out: the next append recovers it by design."""
    from habitus.state import observations

    if not check.path.is_dir():
        return
    for issue in observations.verify(check.root)["issues"]:
        if issue["code"] == "uncommitted_tail":
            continue
        yield {
            "code": issue["code"],
            "message": issue["message"],
            "generation": issue["generation"],
            "seq": issue["seq"],
        }
