"""What `habit list` shows: the habits a person reviews, numbered for 15 minutes (habits.snapshot), each
with its evidence so far and the possible duplicates it waits on."""

from __future__ import annotations

from typing import Any

from habitus.habits import snapshot, store
from habitus.habits.detail import stage
from habitus.habits.law import load_law
from habitus.habits.lifecycle import public


def listing(ledger: store.Ledger, statuses: tuple[str, ...], *, archived: bool = False) -> dict[str, Any]:
    """The `habit list` result: habits with these statuses (default every status but archived, unless
    `archived`), in review order, numbered; remembers the numbering (a write, in one transaction)."""
    wanted = statuses or tuple(s for s in store.STATUSES if archived or s != "archived")
    law = load_law(ledger.root)
    with ledger.tx():
        found = store.habits(ledger.conn, wanted)
        stats = store.evidence_stats(ledger.conn)
        pending: dict[str, list[str]] = {}
        for relation in store.relations(ledger.conn, pending=True):
            for side in ("habit_a", "habit_b"):
                pending.setdefault(relation[side], []).append(relation["id"])
        expires = snapshot.write(ledger.conn, "habits", [(h["id"], h["wording"]) for h in found])
        counts = store.counts(ledger.conn)
    items = []
    for number, habit in enumerate(found, start=1):
        observations, days = stats.get(habit["id"], (0, 0))
        item = {"n": number, **public(habit, law)}
        item["evidence"] = {
            "observations": observations,
            "days": days,
            "stage": stage(habit, observations, days),
        }
        item["pending_relations"] = pending.get(habit["id"], [])
        items.append(item)
    return {"items": items, "counts": counts, "snapshot_expires_at": snapshot.expires_at(expires)}
