"""verify, repair --rebuild-fts, export and import.

`verify` is report-only: `{"ok", "store", "path", "exists", "schema_version", "issues": [...]}` where
each issue is `{"code", "count", "ids"}` (at most MAX_IDS ids). Stable codes:

    schema_missing    a table of the schema is missing (other checks are then skipped)
    sqlite_integrity  PRAGMA integrity_check found damage
    foreign_key       PRAGMA foreign_key_check found dangling rows
    memory_field      a stored record fails record validation
    memory_sensitive  a stored record holds text that redaction would change or refuse (written before
                      redaction, or by another program): patch it with retain --id, or purge it
    memory_instruction  a stored record holds an instruction-injection marker (written before habitus
                      refused them, or by another program): `index` never shows it; patch or purge it
    tag_field         memory_tags rows differ from the record's tags
    fts_missing       an active record has no FTS row
    fts_removed       a removed record still has an FTS row
    fts_mismatch      an FTS row's text differs from its record's content
    fts_orphan        an FTS row belongs to no record
    fts_integrity     FTS5's own integrity-check failed (the index structure is damaged)
    vector_stale      a vector was computed from other content than its record's (index-vectors mends it)

Export writes every record (removed and expired included) as canonical JSON lines ordered by id.
Import takes such lines, validates them all, and adds them in one transaction; an id already in the
store (or twice in the input) refuses the whole import.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from habitus import codec
from habitus.errors import HabitusError
from habitus.lang.terms import index_text, stem_text
from habitus.memory import core, records, vectors
from habitus.memory.stores import MemoryStore
from habitus.state import db, files
from habitus.state.db import translate
from habitus.state.memory_store import rebuild_fts_table

if TYPE_CHECKING:
    from habitus.state.inventory import Check

MAX_IDS = 100
TABLES = ("memory_meta", "memories", "memory_tags", "memory_pins", "memories_fts", "memory_vectors")


class _Issues:
    def __init__(self) -> None:
        self.found: dict[str, dict[str, Any]] = {}

    def add(self, code: str, memory_id: str | None = None, count: int = 1) -> None:
        issue = self.found.setdefault(code, {"code": code, "count": 0, "ids": []})
        issue["count"] += count
        if memory_id is not None and len(issue["ids"]) < MAX_IDS:
            issue["ids"].append(memory_id)

    def report(self) -> list[dict[str, Any]]:
        return [self.found[code] for code in sorted(self.found)]


# -- verify ----------------------------------------------------------------------------------------


def verify(store: MemoryStore) -> dict[str, Any]:
    """The integrity report of one store. A missing store is reported as ok and absent."""
    conn = store.reader()
    report: dict[str, Any] = {"store": store.name, "path": str(store.path), "exists": conn is not None}
    if conn is None:
        return {"ok": True, **report, "schema_version": None, "issues": []}
    issues = _Issues()
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    missing = [table for table in TABLES if table not in names]
    if missing:
        issues.add("schema_missing", count=len(missing))
    else:
        _check_sqlite(conn, issues)
        by_seq = _check_records(conn, issues)
        _check_tags(conn, by_seq, issues)
        _check_fts(store, conn, by_seq, issues)
        for _, memory_id in dict.fromkeys(vectors.stale(conn)):  # a record has a vector per model
            issues.add("vector_stale", memory_id)
    found = issues.report()
    return {"ok": not found, **report, "schema_version": version, "issues": found}


def verifier(check: Check) -> Iterator[dict[str, Any]]:
    """The global store's report (FTS drift, tags, fields, SQLite integrity) as `habitus verify`'s
    issues, codes unchanged."""
    report = verify(MemoryStore("global", check.path, wait=check.wait))
    for issue in report["issues"]:
        yield {
            "code": issue["code"],
            "message": f"memory store: {issue['code']}",
            "count": issue["count"],
            "ids": issue["ids"],
        }


def _check_sqlite(conn: sqlite3.Connection, issues: _Issues) -> None:
    try:
        rows = [row[0] for row in conn.execute("PRAGMA integrity_check").fetchall()]
    except sqlite3.DatabaseError:
        rows = ["unreadable"]
    if rows != ["ok"]:
        issues.add("sqlite_integrity", count=len(rows))
    dangling = conn.execute("PRAGMA foreign_key_check").fetchall()
    if dangling:
        issues.add("foreign_key", count=len(dangling))


def _check_records(
    conn: sqlite3.Connection, issues: _Issues
) -> dict[int, tuple[str, list[str] | None, str, bool]]:
    """Validate every stored record; returns seq -> (id, tags, content, removed) for the later checks."""
    by_seq: dict[int, tuple[str, list[str] | None, str, bool]] = {}
    for row in conn.execute(f"SELECT seq, {records.ROW_COLUMNS} FROM memories ORDER BY seq"):
        memory_id = str(row["id"])
        try:
            record = records.from_row(row)
            valid = records.full(record, redact=False)
            if records.stored_form(valid) != record or row["source"] != record["metadata"].get("source"):
                raise ValueError("not in canonical form")
        except (HabitusError, ValueError, TypeError):
            issues.add("memory_field", memory_id)
            tags = None  # reported once, as memory_field
        else:
            tags = record["tags"]
            if not records.is_clean(record):
                issues.add("memory_sensitive", memory_id)
            elif not records.is_plain(record):
                issues.add("memory_instruction", memory_id)
        by_seq[int(row["seq"])] = (memory_id, tags, str(row["content"]), row["removed_at"] is not None)
    return by_seq


def _check_tags(
    conn: sqlite3.Connection, by_seq: dict[int, tuple[str, list[str] | None, str, bool]], issues: _Issues
) -> None:
    stored: dict[int, list[str]] = {}
    for seq, tag in conn.execute("SELECT seq, tag FROM memory_tags ORDER BY seq, tag"):
        stored.setdefault(int(seq), []).append(str(tag))
    for seq, (memory_id, tags, _, _) in by_seq.items():
        if tags is not None and stored.get(seq, []) != tags:
            issues.add("tag_field", memory_id)


def _check_fts(
    store: MemoryStore,
    conn: sqlite3.Connection,
    by_seq: dict[int, tuple[str, list[str] | None, str, bool]],
    issues: _Issues,
) -> None:
    seen: set[int] = set()
    stemmed = store.stemmed()
    sql = (
        "SELECT rowid, body, stems FROM memories_fts"
        if stemmed
        else "SELECT rowid, body, NULL FROM memories_fts"
    )
    try:
        for rowid, body, stems in conn.execute(sql):
            seen.add(int(rowid))
            entry = by_seq.get(int(rowid))
            if entry is None:
                issues.add("fts_orphan")
            elif entry[3]:
                issues.add("fts_removed", entry[0])
            elif body != index_text(entry[2]) or (stemmed and stems != stem_text(entry[2])):
                issues.add("fts_mismatch", entry[0])
    except sqlite3.DatabaseError:
        issues.add("fts_integrity")
        return
    for seq, (memory_id, _, _, removed) in by_seq.items():
        if not removed and seq not in seen:
            issues.add("fts_missing", memory_id)
    if not _fts_structure_ok(store):
        issues.add("fts_integrity")


def _fts_structure_ok(store: MemoryStore) -> bool:
    """FTS5's integrity-check is an INSERT, so it needs a read-write connection to the existing file
    (never created: mode=rw); it runs in a transaction that is rolled back. A read-only file skips it."""
    try:
        conn = db.connect(store.path, mode="rw", wait=store.db.wait)
    except sqlite3.Error:
        return True
    try:
        conn.execute("BEGIN")
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
        return True
    except sqlite3.DatabaseError as exc:
        text = str(exc).lower()
        if "readonly" in text or "read-only" in text:
            return True
        if "locked" in text or "busy" in text:
            raise translate(exc, store.path) from None
        return False
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()


# -- repair ----------------------------------------------------------------------------------------


def rebuild_fts(store: MemoryStore) -> dict[str, Any]:
    """Recreate the FTS table and the tag rows from the canonical records, in one transaction."""
    if not store.exists():
        raise HabitusError("not_found", f"{store.path}: no {store.name} memory store to repair")
    conn = store.writer()
    with store.db.write(conn):
        fts = rebuild_fts_table(conn)
        tags = 0
        conn.execute("DELETE FROM memory_tags")
        for row in conn.execute("SELECT seq, tags FROM memories ORDER BY seq").fetchall():
            seq = int(row["seq"])
            try:
                tag_list = codec.loads(row["tags"])
            except Exception:
                tag_list = []
            if isinstance(tag_list, list):
                clean = sorted({t for t in tag_list if isinstance(t, str)})
                core.write_tags(conn, seq, clean)
                tags += len(clean)
    return {"store": store.name, "fts_rows": fts, "tag_rows": tags}


# -- export ----------------------------------------------------------------------------------------


def export_lines(store: MemoryStore) -> Iterator[bytes]:
    """Every record as one canonical JSON line (newline included), ordered by id."""
    conn = store.reader()
    if conn is None:
        return
    for row in conn.execute(f"SELECT {records.COLUMNS} FROM memories ORDER BY id"):
        yield codec.canonical(records.from_row(row)) + b"\n"


def export_to(store: MemoryStore, out: Path) -> int:
    """Write the export to out atomically (0600). Refuses a symlink or the store's own files."""
    out = Path(os.path.abspath(out))
    files.refuse_symlink(out)
    for own in (store.path, Path(f"{store.path}-wal"), Path(f"{store.path}-shm")):
        if out == own or (out.exists() and own.exists() and os.path.samefile(out, own)):
            raise HabitusError("bad_request", "--out: refuses to overwrite the memory store itself")
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    fd = files.open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    count = 0
    try:
        with os.fdopen(fd, "wb") as handle:
            for line in export_lines(store):
                handle.write(line)
                count += 1
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, out)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    files.fsync_dir(out.parent)
    return count


# -- import ----------------------------------------------------------------------------------------


def read_lines(stream: IO[bytes], what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank JSON line of stream, each capped like a request."""
    number = 0
    while True:
        line = stream.readline(codec.MAX_REQUEST_BYTES + 1)
        if not line:
            return
        number += 1
        if len(line) > codec.MAX_REQUEST_BYTES and not line.endswith(b"\n"):
            raise HabitusError(
                "request_too_large", f"{what} line {number}: longer than {codec.MAX_REQUEST_BYTES} bytes"
            )
        if line.strip():
            yield number, codec.parse_object(line, what=f"{what} line {number}")


def import_records(
    store: MemoryStore,
    lines: Iterable[tuple[int, dict[str, Any]]],
    progress: Callable[..., None] | None = None,
) -> dict[str, Any]:
    """Validate every line, then add them all in one transaction (or none). `progress(done, total,
    step=...)` follows the lines read (total unknown), then the records added."""
    batch: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, obj in lines:
        if progress is not None:
            progress(len(batch), None, step="reading")
        try:
            record = records.full(obj)
        except HabitusError as exc:
            raise HabitusError(exc.code, f"line {number}: {exc.message}") from None
        if record["id"] in seen:
            raise HabitusError("bad_request", f"line {number}: request.id: appears twice in the input")
        seen.add(record["id"])
        batch.append(record)
    if not batch:
        store.db.inspect()  # nothing to add, but a newer or corrupt store is still refused
        return {"store": store.name, "imported": 0}
    conn = store.writer()
    with store.db.write(conn):
        for start in range(0, len(batch), 500):
            chunk = [r["id"] for r in batch[start : start + 500]]
            clash = conn.execute(
                f"SELECT id FROM memories WHERE id IN ({', '.join('?' for _ in chunk)}) LIMIT 1", chunk
            ).fetchone()
            if clash is not None:
                raise HabitusError(
                    "already_exists",
                    f"a record in the input already exists in the {store.name} store; nothing was imported",
                    hint="import never overwrites; patch existing records with retain --id",
                    id=clash[0],
                )
        for done, record in enumerate(batch, start=1):
            core.insert(conn, record)
            if progress is not None:
                progress(done, len(batch), step="adding")
    return {"store": store.name, "imported": len(batch)}
