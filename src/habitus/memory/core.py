"""Memory mutations and single-record reads: retain, recall, remove (soft or purge), pin, unpin.

Every write is one `BEGIN IMMEDIATE` transaction that keeps the canonical row, its tag rows and its FTS
row in step (there are no triggers: each write path below maintains all three); a patch that changes
content also deletes the record's vectors (habitus.memory.vectors), and purge deletes them by cascade. Requests are validated
before a store is opened, so bad input never creates a database.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from habitus.errors import HabitusError
from habitus.lang.terms import index_text, stem_text
from habitus.memory import records
from habitus.memory.stores import MemoryStore
from habitus.state.clock import utc_now

ACTIVE = "removed_at IS NULL AND (expires_at IS NULL OR expires_at > ?)"
_INSERT = f"INSERT INTO memories ({records.ROW_COLUMNS}) VALUES ({', '.join('?' for _ in records.ROW_FIELDS)}) RETURNING seq"
_UPDATE = (
    "UPDATE memories SET " + ", ".join(f"{f} = ?" for f in records.ROW_FIELDS if f != "id") + " WHERE seq = ?"
)


def _not_found(store: MemoryStore, memory_id: str) -> HabitusError:
    return HabitusError("not_found", f"no memory with that id in the {store.name} store ({store.path})")


# -- derived rows ----------------------------------------------------------------------------------


def insert(conn: sqlite3.Connection, record: Mapping[str, Any]) -> int:
    """Insert a canonical record with its tags and (unless removed) its FTS row. Returns its seq."""
    seq = int(conn.execute(_INSERT, records.to_row(record)).fetchone()[0])
    write_tags(conn, seq, record["tags"])
    if record["removed_at"] is None:
        write_fts(conn, seq, record["content"])
    return seq


def write_fts(conn: sqlite3.Connection, seq: int, content: str) -> None:
    """The FTS row of a record: its search text and its stems (see habitus.state.memory_store)."""
    conn.execute(
        "INSERT INTO memories_fts (rowid, body, stems) VALUES (?, ?, ?)",
        (seq, index_text(content), stem_text(content)),
    )


def write_tags(conn: sqlite3.Connection, seq: int, tags: list[str]) -> None:
    conn.execute("DELETE FROM memory_tags WHERE seq = ?", (seq,))
    conn.executemany("INSERT INTO memory_tags (seq, tag) VALUES (?, ?)", [(seq, tag) for tag in tags])


def _refresh_fts(conn: sqlite3.Connection, seq: int, record: Mapping[str, Any]) -> None:
    conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
    if record["removed_at"] is None:
        write_fts(conn, seq, record["content"])


@contextmanager
def _existing(store: MemoryStore, memory_id: str) -> Iterator[tuple[sqlite3.Connection, int, dict[str, Any]]]:
    """A write transaction on the record with this id: (connection, seq, record). `not_found` when the
    store or the record does not exist; a missing store is never created."""
    if not store.exists():
        raise _not_found(store, memory_id)
    conn = store.writer()
    with store.db.write(conn):
        row = conn.execute(
            f"SELECT seq, {records.COLUMNS} FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
        if row is None:
            raise _not_found(store, memory_id)
        yield conn, int(row["seq"]), records.from_row(row)


# -- retain ----------------------------------------------------------------------------------------


def retain(store: MemoryStore, request: Mapping[str, Any], *, now: str | None = None) -> dict[str, Any]:
    """Create a record, or (with `id`) patch an existing one and restore it if it was removed."""
    memory_id = request.get("id")
    if memory_id is None:
        record = records.create(request, scope=store.name, now=now or utc_now())
        conn = store.writer()
        with store.db.write(conn):
            insert(conn, record)
        return {"store": store.name, "created": True, "restored": False, "memory": record}
    records.check_id(memory_id)
    fields = records.patch_fields(request)
    with _existing(store, memory_id) as (conn, seq, old):
        new = records.patch(old, fields, now=now or utc_now())
        values = records.to_row(new)
        conn.execute(_UPDATE, (*values[1:], seq))
        if new["tags"] != old["tags"]:
            write_tags(conn, seq, new["tags"])
        if new["content"] != old["content"] or old["removed_at"] is not None:
            _refresh_fts(conn, seq, new)
        if new["content"] != old["content"]:
            conn.execute("DELETE FROM memory_vectors WHERE seq = ?", (seq,))  # computed from the old text
    return {"store": store.name, "created": False, "restored": old["removed_at"] is not None, "memory": new}


# -- recall ----------------------------------------------------------------------------------------


def recall(store: MemoryStore, memory_id: Any, *, now: str | None = None) -> dict[str, Any]:
    """The active (not removed, not expired) record with this id, or `memory: null`."""
    records.check_id(memory_id)
    store.require_trust()
    conn = store.reader()
    row = None
    if conn is not None:
        row = conn.execute(
            f"SELECT {records.COLUMNS} FROM memories WHERE id = ? AND {ACTIVE}", (memory_id, now or utc_now())
        ).fetchone()
    return {"store": store.name, "memory": None if row is None else records.from_row(row)}


# -- remove ----------------------------------------------------------------------------------------


def remove(
    store: MemoryStore, memory_id: Any, *, purge: bool = False, now: str | None = None
) -> dict[str, Any]:
    """Soft-remove (reversible by retain with the id) or, with purge, delete the record for good.

    Soft removal drops the FTS row and sets `removed_at`; removing a removed record changes nothing.
    Purge deletes the row, its tags, its FTS row and its pin, whether or not it was soft-removed.
    """
    records.check_id(memory_id)
    with _existing(store, memory_id) as (conn, seq, record):
        if purge:
            conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
            conn.execute("DELETE FROM memories WHERE seq = ?", (seq,))  # tags cascade
            conn.execute("DELETE FROM memory_pins WHERE id = ?", (memory_id,))
            return {"store": store.name, "id": memory_id, "removed": True, "purged": True, "memory": None}
        if record["removed_at"] is not None:
            return {"store": store.name, "id": memory_id, "removed": False, "purged": False, "memory": record}
        record = soft_remove(conn, seq, record, now=now or utc_now())
    return {"store": store.name, "id": memory_id, "removed": True, "purged": False, "memory": record}


def soft_remove(
    conn: sqlite3.Connection,
    seq: int,
    record: Mapping[str, Any],
    *,
    now: str,
    note: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Mark a record removed (in the caller's transaction) and drop its FTS row; `note` is merged into
    its metadata (prune records why it dropped an observation)."""
    stamp = records.after(record["updated_at"], now)
    new = {**record, "removed_at": stamp, "updated_at": stamp}
    if note:
        new["metadata"] = records.check_metadata({**record["metadata"], **note})
    conn.execute(_UPDATE, (*records.to_row(new)[1:], seq))
    conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
    return new


# -- pins ------------------------------------------------------------------------------------------


def pin(store: MemoryStore, memory_id: Any, *, now: str | None = None) -> dict[str, Any]:
    """Pin an active record so that `index` always lists it first. Pinning twice changes nothing."""
    records.check_id(memory_id)
    stamp = now or utc_now()
    if not store.exists():
        raise _not_found(store, memory_id)
    conn = store.writer()
    with store.db.write(conn):
        active = conn.execute(
            f"SELECT 1 FROM memories WHERE id = ? AND {ACTIVE}", (memory_id, stamp)
        ).fetchone()
        if active is None:
            raise HabitusError(
                "not_found", f"no active memory with that id in the {store.name} store ({store.path})"
            )
        changed = conn.execute(
            "INSERT INTO memory_pins (id, pinned_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING",
            (memory_id, stamp),
        ).rowcount
    return {"store": store.name, "id": memory_id, "pinned": True, "changed": bool(changed)}


def unpin(store: MemoryStore, memory_id: Any) -> dict[str, Any]:
    """Drop a pin, even one whose record is gone. A missing store or pin changes nothing."""
    records.check_id(memory_id)
    changed = 0
    if store.exists():
        conn = store.writer()
        with store.db.write(conn):
            changed = conn.execute("DELETE FROM memory_pins WHERE id = ?", (memory_id,)).rowcount
    return {"store": store.name, "id": memory_id, "pinned": False, "changed": bool(changed)}
