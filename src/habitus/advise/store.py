"""advise's ledger tables: session cursors, findings, notes awaiting delivery, and health counters.

Every function takes an open connection; writers must be called inside `Ledger.tx()`. No prompt, slice
or transcript path is stored: a scope is a harness + session id, or the hash of a transcript's path; a
note's text is kept only while it waits for delivery and is blanked once delivered, expired or muted.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from habitus.advise.notes import RANK, Delivered
from habitus.errors import HabitusError
from habitus.state.clock import utc_now

if TYPE_CHECKING:
    from habitus.state.root import StateRoot

RECENT_FINDINGS = 128  # mute IDs resolve against the findings delivered most recently
PENDING_CAP = 3  # notes emitted at one prompt at most

COUNTERS = ("reviews", "failures", "delivered", "suppressed", "muted", "dropped", "held", "expired")


@contextmanager
def reading(root: StateRoot, *, wait: float) -> Iterator[sqlite3.Connection | None]:
    """A read-only ledger connection; None without an up-to-date ledger (nothing is created)."""
    from habitus.state import ledger

    try:
        conn = ledger.store(root, wait=wait).open_read()
    except HabitusError as exc:
        if exc.code != "schema_outdated":
            raise
        conn = None
    try:
        yield conn
    finally:
        if conn is not None:
            conn.close()


@contextmanager
def writing(root: StateRoot, *, wait: float) -> Iterator[sqlite3.Connection]:
    """One write transaction on the ledger (created and migrated when needed)."""
    from habitus.state import ledger

    db = ledger.store(root, wait=wait)
    conn = db.open_write()
    try:
        with db.write(conn):
            yield conn
    finally:
        conn.close()


@dataclass
class Cursor:
    scope: str
    source: str | None = None
    head: str | None = None
    offset: int = 0
    turn_offset: int = 0
    turns: int = 0
    reviews: int = 0
    last_review_at: str | None = None
    last_block: str | None = None
    exists: bool = False


def cursor(conn: sqlite3.Connection, scope: str) -> Cursor:
    row = conn.execute("SELECT * FROM advise_sessions WHERE scope = ?", (scope,)).fetchone()
    if row is None:
        return Cursor(scope)
    return Cursor(
        scope,
        row["source"],
        row["head"],
        row["offset"],
        row["turn_offset"],
        row["turns"],
        row["reviews"],
        row["last_review_at"],
        row["last_block"],
        True,
    )


def save_cursor(conn: sqlite3.Connection, c: Cursor) -> None:
    conn.execute(
        "INSERT INTO advise_sessions (scope, source, head, offset, turn_offset, turns, reviews, last_review_at,"
        " last_block, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scope) DO UPDATE SET"
        " source = excluded.source, head = excluded.head, offset = excluded.offset,"
        " turn_offset = excluded.turn_offset, turns = excluded.turns, reviews = excluded.reviews,"
        " last_review_at = excluded.last_review_at, last_block = excluded.last_block,"
        " updated_at = excluded.updated_at",
        (
            c.scope,
            c.source,
            c.head,
            c.offset,
            c.turn_offset,
            c.turns,
            c.reviews,
            c.last_review_at,
            c.last_block,
            utc_now(),
        ),
    )


def same_cursor(a: Cursor, b: Cursor) -> bool:
    """Did nobody else review this scope since `a` was read? (compare-and-swap on the cursor)"""
    return (a.exists, a.offset, a.turns, a.reviews, a.source) == (
        b.exists,
        b.offset,
        b.turns,
        b.reviews,
        b.source,
    )


# -- findings ---------------------------------------------------------------------------------------


def delivered(conn: sqlite3.Connection, scope: str, finding: str) -> Delivered | None:
    row = conn.execute(
        "SELECT severity, signature, delivered_turn, deliveries FROM advise_findings"
        " WHERE scope = ? AND finding = ?",
        (scope, finding),
    ).fetchone()
    if row is None or row["deliveries"] == 0:
        return None
    return Delivered(row["severity"], row["signature"], row["delivered_turn"])


def record_finding(
    conn: sqlite3.Connection,
    *,
    scope: str,
    finding: str,
    label: str,
    reviewer: str,
    severity: str,
    signature: str,
    turn: int,
    action: str,
) -> None:
    """Remember what happened to one note of a finding: delivered, suppressed or muted."""
    now = utc_now()
    row = conn.execute(
        "SELECT severity, deliveries FROM advise_findings WHERE scope = ? AND finding = ?", (scope, finding)
    ).fetchone()
    if row is None:
        conn.execute(
            "INSERT INTO advise_findings (scope, finding, label, reviewer, severity, signature, delivered_turn,"
            " deliveries, suppressed, muted, first_at, last_seen_at, last_delivered_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                scope,
                finding,
                label,
                reviewer,
                severity,
                signature,
                turn,
                int(action == "deliver"),
                int(action == "suppressed"),
                int(action == "muted"),
                now,
                now,
                now if action == "deliver" else "",
            ),
        )
        return
    if action == "deliver":
        highest = (
            severity if row["deliveries"] == 0 or RANK[severity] > RANK[row["severity"]] else row["severity"]
        )
        conn.execute(
            "UPDATE advise_findings SET severity = ?, signature = ?, delivered_turn = ?, deliveries = deliveries + 1,"
            " label = ?, last_seen_at = ?, last_delivered_at = ? WHERE scope = ? AND finding = ?",
            (highest, signature, turn, label, now, now, scope, finding),
        )
    else:
        column = "suppressed" if action == "suppressed" else "muted"
        conn.execute(
            f"UPDATE advise_findings SET {column} = {column} + 1, last_seen_at = ? WHERE scope = ? AND finding = ?",
            (now, scope, finding),
        )


def recent_findings(conn: sqlite3.Connection, limit: int = RECENT_FINDINGS) -> list[dict[str, Any]]:
    """The findings delivered most recently (any scope), newest first, one row per finding hash."""
    found = conn.execute(
        "SELECT finding, label, MAX(last_delivered_at) AS at FROM advise_findings"
        " WHERE deliveries > 0 GROUP BY finding ORDER BY at DESC, finding LIMIT ?",
        (limit,),
    )
    return [{"finding": r["finding"], "label": r["label"], "at": r["at"]} for r in found]


# -- notes --------------------------------------------------------------------------------------------


def add_note(
    conn: sqlite3.Connection,
    *,
    scope: str,
    finding: str,
    severity: str,
    tag: str | None,
    reviewer: str,
    note: str,
    channel: str | None,
) -> int:
    """Store a delivered note (its text blanked) or, with channel None, a note pending for the next prompt."""
    pending = channel is None
    now = utc_now()
    cur = conn.execute(
        "INSERT INTO advise_notes (scope, finding, severity, tag, reviewer, note, status, channel, created_at,"
        " delivered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            scope,
            finding,
            severity,
            tag,
            reviewer,
            note if pending else "",
            "pending" if pending else "delivered",
            channel,
            now,
            None if pending else now,
        ),
    )
    return int(cur.lastrowid or 0)


def add_muted(conn: sqlite3.Connection, *, scope: str, finding: str, severity: str, reviewer: str) -> None:
    """Remember, without any text, that a note of a muted finding was held back at review: one row
    so that `habitus status` and `habitus report` can count muted notes per day."""
    now = utc_now()
    conn.execute(
        "INSERT INTO advise_notes (scope, finding, severity, tag, reviewer, note, status, channel, created_at,"
        " delivered_at) VALUES (?, ?, ?, NULL, ?, '', 'muted', NULL, ?, NULL)",
        (scope, finding, severity, reviewer, now),
    )


def take_pending(
    conn: sqlite3.Connection, scope: str, *, muted: set[str], max_age_hours: int
) -> list[dict[str, Any]]:
    """The notes waiting for this scope's next prompt (at most PENDING_CAP, most severe then newest),
    marked delivered; muted ones are marked muted and old ones expired, all with their text blanked."""
    import time

    rows = conn.execute(
        "SELECT * FROM advise_notes WHERE scope = ? AND status = 'pending' ORDER BY id", (scope,)
    ).fetchall()
    cutoff = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - max_age_hours * 3600))
    keep: list[dict[str, Any]] = []
    counts = {"muted": 0, "expired": 0}
    for row in rows:
        status = "muted" if row["finding"] in muted else ("expired" if row["created_at"] < cutoff else None)
        if status:
            counts[status] += 1
            conn.execute("UPDATE advise_notes SET status = ?, note = '' WHERE id = ?", (status, row["id"]))
        else:
            keep.append(dict(row))
    keep.sort(key=lambda r: (-RANK[r["severity"]], -r["id"]))
    chosen, rest = keep[:PENDING_CAP], keep[PENDING_CAP:]
    now = utc_now()
    for row in chosen:
        conn.execute(
            "UPDATE advise_notes SET status = 'delivered', channel = 'prompt', delivered_at = ?, note = ''"
            " WHERE id = ?",
            (now, row["id"]),
        )
    for row in rest:
        conn.execute("UPDATE advise_notes SET status = 'expired', note = '' WHERE id = ?", (row["id"],))
    counts["expired"] += len(rest)
    bump(conn, muted=counts["muted"], expired=counts["expired"])
    return chosen


def pending_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM advise_notes WHERE status = 'pending'").fetchone()[0])


# -- health ---------------------------------------------------------------------------------------------


def health(conn: sqlite3.Connection) -> dict[str, Any]:
    row = conn.execute("SELECT * FROM advise_health WHERE id = 1").fetchone()
    return dict(row) if row is not None else {}


def bump(conn: sqlite3.Connection, **counts: int) -> None:
    changes = {k: v for k, v in counts.items() if v}
    if not changes:
        return
    for key in changes:
        if key not in COUNTERS:
            raise ValueError(f"unknown advise counter {key}")
    assignments = ", ".join(f"{k} = {k} + ?" for k in changes)
    conn.execute(f"UPDATE advise_health SET {assignments} WHERE id = 1", list(changes.values()))


PAUSE_AFTER = 3


def record_outcome(conn: sqlite3.Connection, *, failed: str | None) -> bool:
    """Count a review; a failure adds to the streak and the third in a row pauses advise. Returns True
    when this review paused it."""
    now = utc_now()
    if failed is None:
        conn.execute(
            "UPDATE advise_health SET reviews = reviews + 1, consecutive_failures = 0, last_review_at = ?"
            " WHERE id = 1",
            (now,),
        )
        return False
    conn.execute(
        "UPDATE advise_health SET reviews = reviews + 1, failures = failures + 1,"
        " consecutive_failures = consecutive_failures + 1, last_review_at = ?, last_failure = ? WHERE id = 1",
        (now, failed),
    )
    state = health(conn)
    if state["consecutive_failures"] >= PAUSE_AFTER and state["paused_at"] is None:
        conn.execute(
            "UPDATE advise_health SET paused_at = ?, pause_reason = ?, pause_warned = 0 WHERE id = 1",
            (now, failed),
        )
        return True
    return False


def resume_reviews(root: StateRoot, *, wait: float) -> bool:
    """`resume` in its own write transaction on the root's ledger."""
    with writing(root, wait=wait) as conn:
        return resume(conn)


def resume(conn: sqlite3.Connection) -> bool:
    """Lift a pause; True when advise was paused."""
    was = health(conn).get("paused_at") is not None
    conn.execute(
        "UPDATE advise_health SET paused_at = NULL, pause_reason = NULL, pause_warned = 0,"
        " consecutive_failures = 0 WHERE id = 1"
    )
    return was
