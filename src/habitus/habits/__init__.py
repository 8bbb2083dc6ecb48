"""Habits: the ledger rows, the review lifecycle, law, duplicate detection and cached vectors.

Importing this package is light (stdlib + sqlite3); numpy and the embedding model load only in the
functions that need vectors. Public API for the other parts of habitus:

select (read-only path, never creates or migrates):
    ledger = Ledger.open_read(root, wait=wait)          # None when there is no ledger yet
    law = load_law(root)                                 # law.md + built-in rules, with a fingerprint
    chosen = active_habits(ledger.conn, law)             # approved, active, law-valid; <= 100 by
                                                         # confidence then id; rows verified
    if chosen:                                           # only now load the model
        embedder = load_embedder(root)                   # habitus.embed
        matrix = condition_matrix(ledger.conn, chosen, embedder.model_id, embedder.dims)
        # (n, dims) float32, rows in `chosen` order; raises vectors_stale (exit 3) when any is missing
    ...judge...
    still_current(ledger.conn, law, picked)              # re-read before injecting; False = inject nothing

analyze (inside each batch's transaction):
    embedder = load_embedder(root); law = load_law(root)
    proposal = check_proposal(proposal)                  # raises bad_request/refused: quarantine it
    prepared = prepare_proposal(embedder, proposal)      # outside the transaction (optional)
    with ledger.tx():
        propose_candidate(ledger, proposal, law=law, prepared=prepared, embedder=embedder)
        ...watermark...
    mark_dormant(ledger, habit_id)                       # strong contradiction (own transaction)

maintenance:
    recheck(ledger, embedder=embedder)                   # law fingerprint + rebuild missing vectors
    vectors.ensure(ledger, embedder, habits)             # vectors for any list of habit rows
"""

from __future__ import annotations

from habitus.habits import vectors
from habitus.habits.law import Law, check_law, load_law
from habitus.habits.lifecycle import (
    Evidence,
    Proposal,
    check_proposal,
    mark_dormant,
    prepare_proposal,
    propose_candidate,
    recheck,
)
from habitus.habits.store import ActiveHabit, Ledger, active_habits, still_current
from habitus.habits.vectors import condition_matrix
from habitus.habits.wording import clean_field, wording_checksum

__all__ = [
    "ActiveHabit",
    "Evidence",
    "Law",
    "Ledger",
    "Proposal",
    "active_habits",
    "check_law",
    "check_proposal",
    "clean_field",
    "condition_matrix",
    "load_law",
    "mark_dormant",
    "prepare_proposal",
    "propose_candidate",
    "recheck",
    "still_current",
    "vectors",
    "wording_checksum",
]
