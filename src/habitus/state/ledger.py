"""The ledger: habits, evidence, relations, audit, vectors, watermarks, findings, mutes, selection log.

Its migrations are an ordered list; a released migration is never edited, only followed by a new one.
"""

from __future__ import annotations

from habitus.state.db import Migration, Store, sql_migration
from habitus.state.root import StateRoot

MIGRATIONS: list[Migration] = [
    sql_migration(
        "0001_meta",
        """
        CREATE TABLE meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) STRICT;
        """,
    ),
]


def store(root: StateRoot, *, wait: float = 5.0) -> Store:
    return Store(root.ledger, MIGRATIONS, label="ledger", wait=wait)
