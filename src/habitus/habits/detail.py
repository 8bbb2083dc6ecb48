"""One habit as a person reviews it: wording, stage, evidence, examples, relations and audit trail.

`habit show` prints it and `habitus review` displays it, so both read the same facts the same way.
"""

from __future__ import annotations

from typing import Any

from habitus import codec
from habitus.habits import examples, store
from habitus.habits.adopt import provenance
from habitus.habits.law import Law
from habitus.habits.lifecycle import public

RELATION_FIELDS = ("id", "kind", "decision", "similarity_bp", "strength", "habit_a", "habit_b", "checksum")
AUDIT_FIELDS = ("action", "actor", "before", "after", "data", "created_at")


def stage(habit: dict[str, Any], observations: int, days: int) -> str:
    """reviewable/collecting for analyzed habits; declared ones need no repeated evidence."""
    return "declared" if habit["origin"] == "declared" else store.stage(observations, days)


def describe(ledger: store.Ledger, habit_id: str, law: Law) -> dict[str, Any]:
    """The habit with its evidence (the redacted quotes and days it rests on), its example prompts,
    its relations to other habits, its audit trail and, when imported, its provenance; every row verified."""
    conn = ledger.conn
    habit = store.get_habit(conn, habit_id)
    stats = store.evidence_stats(conn, habit_id).get(habit_id, (0, 0))
    body = public(habit, law)
    body["evidence"] = [
        {k: e[k] for k in ("ref", "day", "note", "actor", "created_at")}
        for e in store.evidence(conn, habit_id)
    ]
    body["examples"] = [examples.public(e) for e in examples.of(conn, habit_id)]
    body["evidence_summary"] = {"observations": stats[0], "days": stats[1], "stage": stage(habit, *stats)}
    body["relations"] = [{k: r[k] for k in RELATION_FIELDS} for r in store.relations(conn, habit_id)]
    trail = store.audit_of(conn, habit_id)
    body["audit"] = [{k: (codec.loads(a[k]) if k == "data" else a[k]) for k in AUDIT_FIELDS} for a in trail]
    imported = provenance(trail)
    if imported is not None:  # only imported habits carry it, so others read exactly as before
        body["provenance"] = imported
    return body
