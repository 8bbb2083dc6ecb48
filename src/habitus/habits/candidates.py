"""The candidate habits awaiting a person's review, with their evidence, read without writing anything.

`habit list` numbers what it shows for the `habit approve N` shorthand (a snapshot row it writes);
this read-only view serves whoever only looks: the agent's `habits_candidates` tool. It opens the
ledger read-only (never created or migrated), verifies every row it reads, and answers an empty list
when there is no ledger yet.
"""

from __future__ import annotations

from typing import Any

from habitus.state.root import StateRoot

MAX_EVIDENCE = 20  # cited observations shown per candidate (the summary counts them all)


def candidates(root: StateRoot, *, wait: float, limit: int) -> dict[str, Any]:
    """{"items": [...], "total"}: candidates, higher confidence first, at most `limit`, each with its
    evidence summary and up to MAX_EVIDENCE cited observations (ref, day, note, actor, created_at)."""
    from habitus.habits import store
    from habitus.habits.detail import stage
    from habitus.habits.law import load_law
    from habitus.habits.lifecycle import public
    from habitus.habits.store import Ledger

    ledger = Ledger.open_read(root, wait=wait)
    if ledger is None:
        return {"items": [], "total": 0}
    law = load_law(root)
    with ledger:
        ledger.conn.execute("BEGIN")  # one consistent snapshot across the reads below
        try:
            found = store.habits(ledger.conn, ("candidate",))
            stats = store.evidence_stats(ledger.conn)
            items = []
            for habit in found[:limit]:
                observations, days = stats.get(habit["id"], (0, 0))
                body = public(habit, law)
                body["evidence_summary"] = {
                    "observations": observations,
                    "days": days,
                    "stage": stage(habit, observations, days),
                }
                body["evidence"] = [
                    {k: e[k] for k in ("ref", "day", "note", "actor", "created_at")}
                    for e in store.evidence(ledger.conn, habit["id"])[:MAX_EVIDENCE]
                ]
                items.append(body)
        finally:
            ledger.conn.execute("ROLLBACK")
    return {"items": items, "total": len(found)}
