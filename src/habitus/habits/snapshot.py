"""Review by number: `habit list` and `dedupe list` remember what they showed, for 15 minutes.

The snapshot (one per kind, in the ledger) maps the numbers 1..N to (id, checksum) pairs exactly as
listed. `habit approve 2` resolves 2 through it; an expired snapshot, a number not shown, or an item
whose checksum changed since it was listed answers `stale` (exit 3): list again, review again.
"""

from __future__ import annotations

import sqlite3
import time

from habitus import codec
from habitus.errors import HabitusError
from habitus.habits import rows

TTL_SECONDS = 15 * 60


def _now_ms() -> int:
    return int(time.time() * 1000)


def write(conn: sqlite3.Connection, kind: str, items: list[tuple[str, str]]) -> int:
    """Replace the snapshot of this kind (inside a transaction); returns its expiry in epoch ms."""
    now = _now_ms()
    expires_ms = now + TTL_SECONDS * 1000
    values = {
        "kind": kind,
        "items": codec.canonical([list(item) for item in items]).decode(),
        "created_ms": now,
        "expires_ms": expires_ms,
    }
    conn.execute("DELETE FROM review_snapshots WHERE kind = ?", (kind,))
    rows.insert(conn, "review_snapshots", values)
    return expires_ms


def resolve(conn: sqlite3.Connection, kind: str, number: int) -> tuple[str, str]:
    """(id, checksum) shown as `number` by the last list of this kind, if that list is still fresh."""
    command = "habit list" if kind == "habits" else "dedupe list"
    row = conn.execute("SELECT * FROM review_snapshots WHERE kind = ?", (kind,)).fetchone()
    if row is None:
        raise HabitusError("stale", f"no numbered list to refer to; run `habitus {command}` first")
    values = rows.verify("review_snapshots", row)
    now = _now_ms()
    if not values["created_ms"] <= now < values["expires_ms"]:
        raise HabitusError(
            "stale", "the numbered list expired (15 minutes)", hint=f"run `habitus {command}` again"
        )
    items = codec.loads(values["items"])
    if not 1 <= number <= len(items):
        raise HabitusError(
            "stale", f"the last list has no item {number}", hint=f"run `habitus {command}` again"
        )
    item_id, checksum = items[number - 1]
    return str(item_id), str(checksum)
