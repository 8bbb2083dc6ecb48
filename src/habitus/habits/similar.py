"""Possible duplicates and conflicts between habits: scoring, thresholds and relation rows.

Condition and behaviour are embedded separately; the effective similarity of two habits is the
*smaller* of the two cosines, in basis points, so both the situation and the action must agree.
Same polarity -> a possible `duplicate`; opposite polarity -> a possible `conflict`. A pair at or
above the review threshold gets a `pending` relation, labelled `strong` at or above the strong
threshold. Nothing is ever merged automatically: a human resolves every relation.

A `kept_separate` decision stands while both wordings are unchanged, whatever model or threshold
later scores the pair; a material rewording of either habit returns the pair to review.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from habitus.habits import rows
from habitus.habits.store import relations
from habitus.state.root import StateRoot

if TYPE_CHECKING:
    import numpy as np

METHOD = "field_min_v1"
# Calibrated per packaged model on tests/fixtures/habit_pairs.jsonl (scripts/calibrate_dedupe.py; README
# "Duplicate detection" has the figures). E5's cosines crowd into 0.77..0.98, hence its high values.
CALIBRATED: dict[str, tuple[int, int]] = {"minilm": (4100, 6500), "e5": (8800, 9200)}
# Other models start from the values published for paraphrase-multilingual-MiniLM-L12-v2.
UNCALIBRATED = (5500, 7000)


def thresholds(root: StateRoot, model_kind: str) -> tuple[int, int]:
    """(review_bp, strong_bp): `dedupe.review_bp`/`dedupe.strong_bp` when set (non-zero), else the
    calibrated values for this kind of model (`Embedder.kind`: e5, minilm), else 5500/7000."""
    from habitus.state import config

    settings = config.load(root)
    review, strong = CALIBRATED.get(model_kind, UNCALIBRATED)
    review = int(settings.get("dedupe.review_bp")) or review
    strong = int(settings.get("dedupe.strong_bp")) or strong
    return review, max(review, strong)


def to_bp(cosine: float) -> int:
    return round(max(-1.0, min(1.0, float(cosine))) * 10_000)


def score(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> tuple[int, int, int]:
    """(effective, condition, behaviour) similarity in basis points."""
    condition = to_bp(a["condition"] @ b["condition"])
    behavior = to_bp(a["behavior"] @ b["behavior"])
    return min(condition, behavior), condition, behavior


def existing(conn: sqlite3.Connection, first: str, second: str) -> dict[str, Any] | None:
    low, high = sorted((first, second))
    row = conn.execute(
        "SELECT * FROM habit_relations WHERE habit_a = ? AND habit_b = ?", (low, high)
    ).fetchone()
    return None if row is None else rows.verify("habit_relations", row)


def record(
    conn: sqlite3.Connection,
    a: dict[str, Any],
    b: dict[str, Any],
    scores: tuple[int, int, int],
    *,
    model_id: str,
    strong_bp: int,
    actor: str,
) -> tuple[dict[str, Any] | None, bool]:
    """Record that a and b score at or above the review threshold (call inside a transaction).

    Returns (relation, opened): the relation is None when an unchanged keep-separate decision covers
    the pair; `opened` is True when this call created or reopened a pending relation."""
    from habitus.state.clock import utc_now

    low, high = (a, b) if a["id"] < b["id"] else (b, a)
    effective, condition, behavior = scores
    fields = {
        "kind": "duplicate" if a["polarity"] == b["polarity"] else "conflict",
        "wording_a": low["wording"],
        "wording_b": high["wording"],
        "similarity_bp": effective,
        "condition_bp": condition,
        "behavior_bp": behavior,
        "strength": "strong" if effective >= strong_bp else "review",
        "method": METHOD,
        "model_id": model_id,
    }
    current = existing(conn, low["id"], high["id"])
    if current is None:
        now = utc_now()
        relation = rows.insert(
            conn,
            "habit_relations",
            {
                "id": rows.new_id(conn, "habit_relations", "r"),
                "habit_a": low["id"],
                "habit_b": high["id"],
                **fields,
                "decision": "pending",
                "survivor": None,
                "created_at": now,
                "updated_at": now,
            },
        )
        rows.audit(conn, relation["id"], "detect", actor, after=relation["checksum"], kind=fields["kind"])
        return relation, True
    unchanged = current["wording_a"] == low["wording"] and current["wording_b"] == high["wording"]
    if current["decision"] == "kept_separate" and unchanged:
        return None, False
    if current["decision"] == "pending":
        if all(current[k] == v for k, v in fields.items()):
            return current, False
        return rows.change(conn, "habit_relations", current, "rescore", actor, **fields), False
    reopened = rows.change(
        conn, "habit_relations", current, "reopen", actor, **fields, decision="pending", survivor=None
    )
    return reopened, True


def dismiss_pending(conn: sqlite3.Connection, habit_id: str, *, actor: str, why: str) -> list[str]:
    """Close the pending relations of a habit that left review (archived, reworded)."""
    closed = []
    for relation in relations(conn, habit_id, pending=True):
        rows.change(
            conn, "habit_relations", relation, "dismiss", actor, note={"why": why}, decision="dismissed"
        )
        closed.append(relation["id"])
    return closed
