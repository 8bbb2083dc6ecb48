"""The selection log: one metadata row per `habitus select` call, in the ledger's `select_log` table.

A row holds when, the mode (cli or the harness), the judge and embedding model ids, the outcome and a
static reason code, counts (candidates, retrieved, selected), the judge's reasons as counts, and the
latency. Never the prompt, a hash or any other derivative of it, vectors, habit ids or guidance text.

select's path is read-only for the ledger ("never create or migrate"), so the log is written best
effort in its own short transaction on a separate connection, and only when the ledger already exists
at this program's schema version: the connection is opened `mode=rw` (SQLite never creates the file),
the version is re-read inside `BEGIN IMMEDIATE`, and a busy ledger (another writer for more than
BUSY_MS) or any SQLite error skips the row rather than delay or fail the prompt. The table keeps the
newest MAX_ROWS rows.

A host that answers a hook before its process ends (the warm worker's call process) calls `defer()`
first and `flush()` once the answer is out: the row, stamped when select ran, is then written after
the reply instead of inside the prompt's latency.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from habitus import codec
from habitus.state import db, files, ledger
from habitus.state.clock import utc_now
from habitus.state.root import StateRoot

MAX_ROWS = 10_000
BUSY_MS = 50
MODES = ("cli", "claude-code", "codex", "gemini", "pi", "generic")

_deferred: list[tuple[StateRoot, tuple[Any, ...]]] | None = None  # rows kept for flush(), when deferring


def append(
    root: StateRoot,
    *,
    mode: str,
    judge: str,
    model_id: str | None,
    outcome: str,
    reason: str,
    candidates: int,
    retrieved: int,
    selected: int,
    reasons: dict[str, int],
    latency_ms: int,
) -> bool:
    """Write one row; True when written (or kept for flush()), False when skipped (no current ledger,
    busy, or an error)."""
    row = (
        utc_now(),
        mode if mode in MODES else "cli",
        judge[:40],
        None if model_id is None else model_id[:200],
        outcome,
        reason[:40],
        candidates,
        retrieved,
        min(selected, 3),
        codec.canonical(reasons).decode()[:1000],
        max(0, latency_ms),
    )
    if _deferred is not None:
        _deferred.append((root, row))
        return True
    return _write(root, row)


def defer() -> None:
    """Keep the rows append() is given until flush() (this process answers before it writes them)."""
    global _deferred
    _deferred = []


def flush(*, write: bool = True) -> None:
    """Write the rows kept since defer() (drop them with write=False), and stop deferring. Never raises."""
    global _deferred
    rows, _deferred = (_deferred or []) if write else [], None
    for root, row in rows:
        try:
            _write(root, row)
        except Exception:
            pass  # best effort, as every selection-log row is


def _write(root: StateRoot, row: tuple[Any, ...]) -> bool:
    path = root.ledger
    try:
        files.refuse_symlink(path)
        if not path.is_file():
            return False
        conn = db.connect(path, mode="rw", wait=BUSY_MS / 1000)
    except Exception:
        return False
    try:
        conn.execute("BEGIN IMMEDIATE")
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version != len(ledger.MIGRATIONS):
            conn.execute("ROLLBACK")
            return False
        conn.execute(
            "INSERT INTO select_log (at, mode, judge, model_id, outcome, reason, candidates, retrieved, "
            "selected, reasons, latency_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )
        conn.execute("DELETE FROM select_log WHERE id <= (SELECT MAX(id) FROM select_log) - ?", (MAX_ROWS,))
        conn.execute("COMMIT")
        return True
    except sqlite3.Error:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return False
    finally:
        conn.close()


def summary(conn: sqlite3.Connection) -> dict[str, Any]:
    """Counts for `habitus status`, from an open (read-only) ledger connection."""
    by_outcome = dict(conn.execute("SELECT outcome, COUNT(*) FROM select_log GROUP BY outcome").fetchall())
    total, injected, last = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(selected), 0), MAX(at) FROM select_log"
    ).fetchone()
    recent = [r[0] for r in conn.execute("SELECT latency_ms FROM select_log ORDER BY id DESC LIMIT 1000")]
    recent.sort()
    return {
        "calls": int(total),
        "with_guidance": int(by_outcome.get("selected", 0)),
        "without_guidance": int(by_outcome.get("none", 0)),
        "failed": int(by_outcome.get("failed", 0)),
        "habits_injected": int(injected),
        "median_latency_ms": recent[len(recent) // 2] if recent else None,
        "last_at": last,
    }


def status(root: StateRoot, *, wait: float) -> dict[str, Any] | None:
    """The selection-log summary, read-only; None when there is no up-to-date ledger."""
    conn = ledger.store(root, wait=wait).open_current()
    if conn is None:
        return None
    try:
        return summary(conn)
    finally:
        conn.close()
