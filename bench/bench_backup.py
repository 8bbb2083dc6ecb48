"""Backup and restore of a state root holding 100,000 memories and 1,000 habits (target: each <= 5 s).

The real habit tables and memory store are not on this branch yet, so the state is SYNTHETIC: the
ledger gets an extra bench-only migration with habit-like tables (habits, evidence, audit, two 384-dim
vectors per habit) and a bench-only `memory.sqlite` store is registered with memory-like tables
(records, tags, pins and an FTS5 index). Both go through the production registry, backup, validation
and restore code exactly as real stores will. Once the real stores are registered, replace
`_synthetic()` with their migrations. Timed in process through the CLI entry (`habitus backup` /
`habitus restore`), so interpreter start-up is not included (see bench_startup for that).
"""

from __future__ import annotations

import contextlib
import io as stdio
import random
import shutil
import struct
from pathlib import Path

from harness import Row, median_ms, temp_root, time_call

MEMORIES = 100_000
HABITS = 1_000
TARGET_MS = 5_000

HABIT_TABLES = """
CREATE TABLE bench_habits (
    id TEXT PRIMARY KEY, condition TEXT NOT NULL, behavior TEXT NOT NULL, polarity INTEGER NOT NULL,
    confidence_bp INTEGER NOT NULL, status TEXT NOT NULL, wording TEXT NOT NULL, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL, checksum TEXT NOT NULL
) STRICT;
CREATE INDEX bench_habits_by_status ON bench_habits (status, confidence_bp DESC, id);
CREATE TABLE bench_evidence (
    id INTEGER PRIMARY KEY, habit_id TEXT NOT NULL REFERENCES bench_habits (id), ref TEXT NOT NULL,
    day TEXT NOT NULL, note TEXT, created_at TEXT NOT NULL, checksum TEXT NOT NULL, UNIQUE (habit_id, ref)
) STRICT;
CREATE TABLE bench_audit (
    id INTEGER PRIMARY KEY, target TEXT NOT NULL, action TEXT NOT NULL, before TEXT, after TEXT,
    created_at TEXT NOT NULL, checksum TEXT NOT NULL
) STRICT;
CREATE INDEX bench_audit_by_target ON bench_audit (target, id);
CREATE TABLE bench_vectors (
    habit_id TEXT NOT NULL REFERENCES bench_habits (id), field TEXT NOT NULL, model_id TEXT NOT NULL,
    vector BLOB NOT NULL, checksum TEXT NOT NULL, PRIMARY KEY (habit_id, field, model_id)
) STRICT, WITHOUT ROWID;
"""

MEMORY_TABLES = """
CREATE TABLE memories (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, content TEXT NOT NULL, kind TEXT NOT NULL,
    scope TEXT NOT NULL, namespace TEXT NOT NULL, tags TEXT NOT NULL, importance REAL NOT NULL,
    confidence REAL NOT NULL, relevance TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    expires_at TEXT, removed_at TEXT, metadata TEXT NOT NULL
) STRICT;
CREATE INDEX memories_live ON memories (removed_at, expires_at);
CREATE INDEX memories_updated ON memories (updated_at);
CREATE INDEX memories_namespace ON memories (namespace, updated_at);
CREATE TABLE memory_tags (
    seq INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE, tag TEXT NOT NULL,
    PRIMARY KEY (seq, tag)
) STRICT, WITHOUT ROWID;
CREATE INDEX memory_tags_tag ON memory_tags (tag, seq);
CREATE TABLE memory_pins (id TEXT PRIMARY KEY, pinned_at TEXT NOT NULL) STRICT, WITHOUT ROWID;
CREATE VIRTUAL TABLE memories_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
"""

WORDS = [
    "deploy",
    "migration",
    "staging",
    "database",
    "release",
    "tests",
    "pytest",
    "rollback",
    "config",
    "secret",
    "vault",
    "token",
    "review",
    "branch",
    "merge",
    "commit",
    "python",
    "rust",
    "typescript",
    "docker",
    "kubernetes",
    "cache",
    "latency",
    "budget",
    "index",
    "query",
    "schema",
    "backup",
    "restore",
    "journal",
    "lock",
    "writer",
    "reader",
    "prompt",
    "habit",
    "memory",
    "advisor",
    "observation",
]


def memory_store(root, *, wait):  # type: ignore[no-untyped-def]
    """The bench-only memory store's factory, registered in the inventory like a real one."""
    from habitus.state.db import Store, sql_migration

    return Store(
        root.path / "memory.sqlite",
        [sql_migration("bench_0001_memories", MEMORY_TABLES)],
        label="memory",
        wait=wait,
    )


def _synthetic() -> None:
    """Register the synthetic stores (see the module docstring)."""
    from habitus.state import inventory, ledger
    from habitus.state.db import sql_migration

    if not any(m.name == "bench_habits" for m in ledger.MIGRATIONS):
        ledger.MIGRATIONS.append(sql_migration("bench_habits", HABIT_TABLES))
    if not any(s.name == "memory.sqlite" for s in inventory.STORES):
        inventory.STORES = (
            *inventory.STORES,
            inventory.StoreItem("memory.sqlite", "bench_backup:memory_store"),
        )


def _fill(path: Path) -> None:
    from habitus import io
    from habitus.state import ledger
    from habitus.state.root import StateRoot

    rng = random.Random(7)
    root = StateRoot(path)
    store = ledger.store(root)
    conn = store.open_write()
    with store.write(conn):
        for n in range(HABITS):
            hid = f"h-{n:012x}"
            row = (
                hid,
                f"When {' '.join(rng.choices(WORDS, k=8))}",
                f"Do {' '.join(rng.choices(WORDS, k=10))}",
            )
            conn.execute(
                "INSERT INTO bench_habits VALUES (?, ?, ?, 1, 8000, 'active', ?, '2026-11-30', '2026-11-30', ?)",
                (*row, row[1] + row[2], io.checksum(list(row))),
            )
            for e in range(3):
                conn.execute(
                    "INSERT INTO bench_evidence (habit_id, ref, day, note, created_at, checksum) "
                    "VALUES (?, ?, '2026-11-30', ?, '2026-11-30', ?)",
                    (hid, f"1:{n * 3 + e}", " ".join(rng.choices(WORDS, k=12)), "0" * 64),
                )
            conn.execute(
                "INSERT INTO bench_audit (target, action, after, created_at, checksum) "
                "VALUES (?, 'approve', ?, '2026-11-30', ?)",
                (hid, row[1], "0" * 64),
            )
            for field in ("condition", "behavior"):
                vector = struct.pack("<384f", *(rng.random() for _ in range(384)))
                conn.execute(
                    "INSERT INTO bench_vectors VALUES (?, ?, 'all-MiniLM-L6-v2', ?, ?)",
                    (hid, field, vector, "0" * 64),
                )
    conn.close()
    mem = memory_store(root, wait=5.0)
    conn = mem.open_write()
    with mem.write(conn):
        for seq in range(1, MEMORIES + 1):
            content = " ".join(rng.choices(WORDS, k=rng.randint(12, 60)))
            tags = rng.sample(WORDS, 2)
            conn.execute(
                "INSERT INTO memories VALUES (?, ?, ?, 'note', 'global', 'default', ?, 0.5, 0.9, NULL, "
                "'2026-11-30T00:00:00.000Z', '2026-11-30T00:00:00.000Z', NULL, NULL, '{}')",
                (seq, f"{seq:08x}-0000-4000-8000-000000000000", content, io.dumps(tags).decode()),
            )
            conn.executemany("INSERT INTO memory_tags VALUES (?, ?)", [(seq, t) for t in tags])
            conn.execute("INSERT INTO memories_fts (rowid, body) VALUES (?, ?)", (seq, content))
    conn.close()
    (path / "config.toml").write_text("[capture]\nenabled = true\n")
    (path / "config.toml").chmod(0o600)


def _habitus(args: list[str]) -> None:
    from habitus.cli import root

    out = stdio.TextIOWrapper(stdio.BytesIO())
    with contextlib.redirect_stdout(out):
        try:
            root.main(args, prog_name="habitus")
        except SystemExit as exit:
            if exit.code:
                raise RuntimeError(f"habitus {args[0]} exited {exit.code}") from None


def run(runs: int) -> list[Row]:
    _synthetic()
    with temp_root() as base:
        state = base / "state"
        state.mkdir(mode=0o700)
        _fill(state)
        size_mb = sum(p.stat().st_size for p in state.glob("*.sqlite")) / 1e6
        outs = iter(range(10_000))

        def backup() -> None:
            _habitus(["backup", "--root", str(state), "--out", str(base / f"b{next(outs)}")])

        backups = time_call(backup, runs=runs, warmup=1)
        source = base / "b0"

        def restore() -> None:
            _habitus(["restore", "--root", str(state), str(source)])

        restores = time_call(restore, runs=runs, warmup=1)
        for n in range(runs + 1):
            shutil.rmtree(base / f"b{n}", ignore_errors=True)
    note = f"synthetic ledger/memory-like tables, {size_mb:.0f} MB of SQLite (real tables not on this branch)"
    b, r = median_ms(backups), median_ms(restores)
    return [
        Row("backup: 100k memories + 1k habits", b, runs, "<= 5 s", b <= TARGET_MS, note),
        Row(
            "restore: 100k memories + 1k habits",
            r,
            runs,
            "<= 5 s",
            r <= TARGET_MS,
            "validated + journaled swap",
        ),
    ]
