"""Review by number: `habit list` and `dedupe list` remember what they showed, for 15 minutes.

The snapshot (one per kind, in the ledger) maps the numbers 1..N to (id, checksum) pairs exactly as
listed. `habit approve 2` resolves 2 through it; an expired snapshot, a number not shown, or an item
whose checksum changed since it was listed answers `stale` (exit 3): list again, review again.
"""

from __future__ import annotations

import re
import sqlite3
import time
from typing import TYPE_CHECKING

from habitus import codec
from habitus.errors import HabitusError
from habitus.habits import rows

if TYPE_CHECKING:
    from habitus.habits.store import Ledger

TTL_SECONDS = 15 * 60
IDS = {  # kind -> what an id of it looks like, and how to say so
    "habits": (re.compile(r"^h-[0-9a-f]{12}$"), "a habit id like h-0123456789ab"),
    "relations": (re.compile(r"^r-[0-9a-f]{12}$"), "a relation id like r-0123456789ab"),
}


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


def expires_at(expires_ms: int) -> str:
    """A snapshot's expiry (epoch ms) as the UTC time a list prints."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expires_ms / 1000))


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


def target(ledger: Ledger, kind: str, ref: str, checksum: str | None) -> tuple[str, str | None]:
    """(id, checksum to enforce) for a REF a person gave: a number of the last list of this kind (with
    the checksum it was shown with, which a given checksum must start), or an id (with `checksum`)."""
    if ref.isdigit():
        item_id, shown = resolve(ledger.conn, kind, int(ref))
        if checksum is not None and not shown.startswith(checksum):
            raise HabitusError("stale", f"item {ref} of the last list has another checksum")
        return item_id, shown
    pattern, example = IDS[kind]
    if not pattern.match(ref):
        raise HabitusError("usage", f"REF: expected a list number or {example}")
    return ref, checksum
