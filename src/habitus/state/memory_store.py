"""Memory stores: the global one (`<root>/memory.sqlite`) and a project's (`<repo>/.habitus/memory.sqlite`).

Both share this schema and its ordered migrations (separate from the ledger's). Canonical rows live in
`memories`; `memory_tags` and `memories_fts` are derived from them and can always be rebuilt
(`habitus memory repair --rebuild-fts`). Append migrations; never edit one that is on main.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from habitus.state.db import Migration, Store, sql_migration

if TYPE_CHECKING:
    from habitus.state.root import StateRoot

KINDS = ("note", "decision", "preference", "fact", "instruction", "observation", "reflection")
SCOPES = ("project", "global")
RELEVANCES = ("low", "medium", "high", "critical")

# `memories_live` makes counting live records cheap, but the planner (without statistics) takes
# `removed_at IS NULL` for selective: queries that page or filter by another index write `+removed_at`.
# `seq` never reuses a number (AUTOINCREMENT), so it can serve as a watermark (reflect).
# `source` is a copy of metadata.source (derived, checked by verify) so that it can be indexed:
# json_extract in a generated column is refused under `trusted_schema=OFF`.
#
# The FTS table is recreated from FTS_TABLE_SQL by `repair --rebuild-fts`. It stores, under the
# memory's `seq` as rowid, the search text (`body`: content with CJK characters spaced out, see
# habitus.lang.terms.index_text) and, since 0005, its stems (`stems`: habitus.lang.terms.stem_text).
# Removed records are not in it; expired ones are (they can be listed).
FTS_TABLE_SQL = (
    "CREATE VIRTUAL TABLE memories_fts USING fts5(body, stems, tokenize = 'unicode61 remove_diacritics 2')"
)
_FTS_TABLE_SQL_0005 = (
    "CREATE VIRTUAL TABLE memories_fts USING fts5(body, stems, tokenize = 'unicode61 remove_diacritics 2')"
)
# The table as 0001 created it (a released migration: never changes).
_FTS_TABLE_SQL_0001 = (
    "CREATE VIRTUAL TABLE memories_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')"
)


def _quoted(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{v}'" for v in values)


MIGRATIONS: list[Migration] = [
    sql_migration(
        "0001_memories",
        f"""
        CREATE TABLE memory_meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) STRICT;

        CREATE TABLE memories (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            content TEXT NOT NULL CHECK (length(content) > 0),
            kind TEXT NOT NULL CHECK (kind IN ({_quoted(KINDS)})),
            scope TEXT NOT NULL CHECK (scope IN ({_quoted(SCOPES)})),
            namespace TEXT NOT NULL,
            tags TEXT NOT NULL,
            importance REAL NOT NULL CHECK (importance >= 0 AND importance <= 1),
            confidence REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
            relevance TEXT CHECK (relevance IS NULL OR relevance IN ({_quoted(RELEVANCES)})),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            expires_at TEXT,
            removed_at TEXT,
            metadata TEXT NOT NULL,
            source TEXT
        ) STRICT;

        CREATE INDEX memories_live ON memories (removed_at, expires_at);
        CREATE INDEX memories_updated ON memories (updated_at);
        CREATE INDEX memories_created ON memories (created_at);
        CREATE INDEX memories_namespace ON memories (namespace, updated_at);
        CREATE INDEX memories_kind ON memories (kind, updated_at);
        CREATE INDEX memories_source ON memories (source);

        CREATE TABLE memory_tags (
            seq INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (seq, tag)
        ) STRICT, WITHOUT ROWID;

        CREATE INDEX memory_tags_tag ON memory_tags (tag, seq);

        CREATE TABLE memory_pins (
            id TEXT PRIMARY KEY,
            pinned_at TEXT NOT NULL
        ) STRICT, WITHOUT ROWID;

        {_FTS_TABLE_SQL_0001};
        """,
    ),
    sql_migration(
        "0002_watermarks",
        """
        CREATE TABLE memory_watermarks (
            job TEXT NOT NULL CHECK (job IN ('observe', 'reflect')),
            stream TEXT NOT NULL,
            position INTEGER NOT NULL CHECK (position >= 0),
            runs INTEGER NOT NULL DEFAULT 0,
            produced INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (job, stream)
        ) STRICT, WITHOUT ROWID;
        """,
    ),
    # What a watermark's position counts: transcript messages (observe fed a request), bytes of a
    # transcript file (observe --transcript), or memory seqs (reflect).
    sql_migration(
        "0003_watermark_units",
        """
        ALTER TABLE memory_watermarks ADD COLUMN unit TEXT NOT NULL DEFAULT 'message'
            CHECK (unit IN ('message', 'byte', 'seq'));
        UPDATE memory_watermarks SET unit = 'seq' WHERE job = 'reflect';
        """,
    ),
    # Embedding vectors of record content for `retrieve --hybrid` (derived; `memory index-vectors`
    # fills them). A vector is used only with the model that made it (`model_id`) and only while
    # `input` (habitus.embed.input_checksum of the content) matches the record.
    sql_migration(
        "0004_vectors",
        """
        CREATE TABLE memory_vectors (
            seq INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
            model_id TEXT NOT NULL,
            dims INTEGER NOT NULL CHECK (dims > 0),
            input TEXT NOT NULL,
            vector BLOB NOT NULL CHECK (length(vector) = dims * 4),
            created_at TEXT NOT NULL,
            PRIMARY KEY (seq, model_id)
        ) STRICT;

        CREATE INDEX memory_vectors_model ON memory_vectors (model_id, seq);
        """,
    ),
    # Stemmed search: the FTS table gains a `stems` column, rebuilt from the records (derived data).
    Migration("0005_fts_stems", lambda conn: rebuild_fts_table(conn, _FTS_TABLE_SQL_0005)),
]


def rebuild_fts_table(conn: sqlite3.Connection, sql: str = FTS_TABLE_SQL) -> int:
    """Recreate memories_fts from FTS_TABLE_SQL and fill it from the records that are not removed (in
    the caller's transaction). Returns the number of rows written."""
    from habitus.lang.terms import index_text, stem_text

    rows = conn.execute("SELECT seq, content FROM memories WHERE removed_at IS NULL ORDER BY seq").fetchall()
    conn.execute("DROP TABLE IF EXISTS memories_fts")
    conn.execute(sql)
    conn.executemany(
        "INSERT INTO memories_fts (rowid, body, stems) VALUES (?, ?, ?)",
        ((seq, index_text(content), stem_text(content)) for seq, content in rows),
    )
    return len(rows)


# Readers accept a store one migration behind (0004, before stems): search then runs without stems,
# so existing stores keep answering until a writing command migrates them.
OLDEST_READABLE = 4


def store(path: Path, *, label: str, wait: float = 5.0) -> Store:
    """The memory store at path (global: `StateRoot.memory`; project: `<repo>/.habitus/memory.sqlite`)."""
    return Store(path, MIGRATIONS, label=f"{label} memory", wait=wait)


def root_store(root: StateRoot, *, wait: float = 5.0) -> Store:
    """The global memory store of a state root (what backup, restore and verify register)."""
    return store(root.memory, label="global", wait=wait)
