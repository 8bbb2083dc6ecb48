"""What `habitus status` reports about advise: reviews, notes, failures, pause, mutes. Read-only."""

from __future__ import annotations

from typing import Any

from habitus.errors import HabitusError
from habitus.state.root import StateRoot


def report(root: StateRoot, *, wait: float) -> dict[str, Any]:
    """Counters from the ledger (null when there is no up-to-date ledger) and the state of mutes.json.
    Never creates or migrates anything."""
    from habitus.advise import mutes, store
    from habitus.advise.review import public_health

    out: dict[str, Any] = {"reviews": None, "mutes": _mutes(root, mutes)}
    with store.reading(root, wait=wait) as conn:
        if conn is None:
            return out
        row = store.health(conn)
        pending = store.pending_count(conn)
    out.update(
        {
            "reviews": row["reviews"],
            "failures": row["failures"],
            "consecutive_failures": row["consecutive_failures"],
            "last_review_at": row["last_review_at"],
            "last_failure": row["last_failure"],
            "notes": {
                "delivered": row["delivered"],
                "suppressed": row["suppressed"],
                "muted": row["muted"],
                "dropped": row["dropped"],
                "held": row["held"],
                "expired": row["expired"],
                "pending": pending,
            },
            "paused": public_health(row)["paused"],
        }
    )
    return out


def _mutes(root: StateRoot, mutes: Any) -> dict[str, Any]:
    try:
        return {"ok": True, "count": len(mutes.load(root).entries)}
    except HabitusError as exc:
        return {"ok": False, "problem": exc.message, "count": None}
