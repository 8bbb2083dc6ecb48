"""Approved habits written straight into a ledger through the production row sealing (no review, no
duplicate check): for tests and benchmarks that need many habits fast. Imports no test framework."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from habitus.state.root import StateRoot


def seed_habits(root: StateRoot, habits: Iterable[dict[str, Any]]) -> int:
    """Insert each {"condition", "behavior", "polarity"} as an active, approved, law-checked habit.
    Vectors are not built: `habitus habit recheck` builds the missing ones."""
    from habitus.habits import rows
    from habitus.habits.law import load_law
    from habitus.habits.store import Ledger
    from habitus.habits.wording import wording_checksum
    from habitus.state.clock import utc_now

    law = load_law(root)
    count = 0
    with Ledger.open(root, wait=5) as ledger, ledger.tx():
        for i, habit in enumerate(habits):
            wording = wording_checksum(habit["condition"], habit["behavior"], habit["polarity"])
            now = utc_now()
            rows.insert(
                ledger.conn,
                "habits",
                {
                    "id": f"h-{i:012x}",
                    "condition": habit["condition"],
                    "behavior": habit["behavior"],
                    "polarity": habit["polarity"],
                    "confidence_bp": 8000,
                    "status": "active",
                    "origin": "declared",
                    "candidate_key": None,
                    "wording": wording,
                    "approved_wording": wording,
                    "approved_at": now,
                    "law": law.fingerprint,
                    "law_findings": "[]",
                    "reason": None,
                    "created_at": now,
                    "updated_at": now,
                },
            )
            count += 1
    return count
