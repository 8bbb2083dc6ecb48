"""SQLite stores: migrations, version checks before writes, fail-closed opens, transactions."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run
from habitus.errors import HabitusError
from habitus.state import ledger
from habitus.state.db import Migration, Store, sql_migration
from habitus.state.root import StateRoot

TWO = [
    sql_migration("0001_a", "CREATE TABLE a (id INTEGER PRIMARY KEY, v TEXT NOT NULL) STRICT;"),
    sql_migration("0002_b", "CREATE TABLE b (id INTEGER PRIMARY KEY, a_id INTEGER REFERENCES a(id)) STRICT;"),
]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_write_open_creates_and_migrates(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite", TWO, label="s")
    conn = store.open_write()
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    assert [tuple(r) for r in conn.execute("SELECT version, name FROM schema_migrations")] == [
        (1, "0001_a"),
        (2, "0002_b"),
    ]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert stat.S_IMODE((tmp_path / "s.sqlite").stat().st_mode) == 0o600
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO b (a_id) VALUES (99)")
    conn.close()


def test_an_upgrade_applies_only_the_new_migrations(tmp_path: Path) -> None:
    Store(tmp_path / "s.sqlite", TWO[:1], label="s").open_write().close()
    conn = Store(tmp_path / "s.sqlite", TWO, label="s").open_write()
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    conn.close()


def test_failed_migration_changes_nothing(tmp_path: Path) -> None:
    def boom(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE c (x INTEGER) STRICT")
        raise RuntimeError("migration bug")

    Store(tmp_path / "s.sqlite", TWO[:1], label="s").open_write().close()
    with pytest.raises(RuntimeError):
        Store(tmp_path / "s.sqlite", [*TWO[:1], Migration("0002_boom", boom)], label="s").open_write()
    conn = sqlite3.connect(tmp_path / "s.sqlite")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'c'").fetchone()[0] == 0


def make_newer(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE future (x)")
    conn.execute("PRAGMA user_version = 999")
    conn.commit()
    conn.close()


def test_newer_schema_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    make_newer(path)
    before = digest(path)
    store = Store(path, TWO, label="s")
    for opener in (store.open_write, store.open_read, store.inspect):
        with pytest.raises(HabitusError) as caught:
            opener()
        assert caught.value.code == "schema_newer"
        assert caught.value.exit == 3
    assert digest(path) == before
    assert not Path(f"{path}-wal").exists()


def test_newer_ledger_via_the_cli_exits_3_byte_identical(state_root: Path) -> None:
    state_root.mkdir(mode=0o700)
    path = state_root / "ledger.sqlite"
    make_newer(path)
    before = digest(path)
    out = run(["status"])
    assert out.exit == 3
    assert out.error["code"] == "schema_newer"
    assert out.stdout == b""
    assert digest(path) == before


@pytest.mark.parametrize(
    "content", [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 4000]
)
def test_corrupt_file_exits_3(state_root: Path, content: bytes) -> None:
    state_root.mkdir(mode=0o700)
    (state_root / "ledger.sqlite").write_bytes(content)
    out = run(["status"])
    assert out.exit == 3
    assert out.error["code"] == "state_corrupt"
    assert (state_root / "ledger.sqlite").read_bytes() == content
    with pytest.raises(HabitusError) as caught:
        ledger.store(StateRoot(state_root)).open_write()
    assert caught.value.code == "state_corrupt"


def test_foreign_history_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    Store(
        path, [sql_migration("0001_other", "CREATE TABLE z (x INTEGER) STRICT;")], label="s"
    ).open_write().close()
    with pytest.raises(HabitusError) as caught:
        Store(path, TWO, label="s").open_write()
    assert caught.value.code == "schema_unknown"


def test_read_only_open_never_creates_or_migrates(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "s.sqlite"
    store = Store(path, TWO, label="s")
    assert store.open_read() is None
    assert not path.parent.exists()
    Store(path, TWO[:1], label="s").open_write().close()
    with pytest.raises(HabitusError) as caught:
        store.open_read()
    assert caught.value.code == "schema_outdated"
    assert store.inspect() == 1  # status may report it without refusing
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1


def test_read_only_connection_cannot_write(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite", TWO, label="s")
    store.open_write().close()
    conn = store.open_read()
    assert conn is not None
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("INSERT INTO a (v) VALUES ('x')")


def test_write_transaction_rolls_back_on_error(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite", TWO, label="s")
    conn = store.open_write()
    with pytest.raises(ValueError), store.write(conn):
        conn.execute("INSERT INTO a (v) VALUES ('x')")
        raise ValueError("abort")
    assert conn.execute("SELECT count(*) FROM a").fetchone()[0] == 0
    with store.write(conn):
        conn.execute("INSERT INTO a (v) VALUES ('y')")
    assert conn.execute("SELECT count(*) FROM a").fetchone()[0] == 1


def test_strict_tables_reject_wrong_types(tmp_path: Path) -> None:
    conn = Store(tmp_path / "s.sqlite", TWO, label="s").open_write()
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO a (id, v) VALUES ('not an int', 'x')")


def test_every_ledger_table_is_strict(tmp_path: Path) -> None:
    conn = ledger.store(StateRoot(tmp_path)).open_write()
    tables = conn.execute("PRAGMA table_list").fetchall()
    ours = [
        t
        for t in tables
        if t["schema"] == "main" and t["type"] == "table" and not t["name"].startswith("sqlite_")
    ]
    assert ours
    assert all(t["strict"] == 1 for t in ours), [t["name"] for t in ours if not t["strict"]]


HOLD_WRITER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
time.sleep(30)
"""


def test_busy_writer_gives_state_locked(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    Store(path, TWO, label="s").open_write().close()
    holder = subprocess.Popen([sys.executable, "-c", HOLD_WRITER, str(path)], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
        store = Store(path, TWO, label="s", wait=0.3)
        conn = store.open_write()
        started = time.monotonic()
        with pytest.raises(HabitusError) as caught, store.write(conn):
            pass
        assert caught.value.code == "state_locked" and caught.value.exit == 75
        assert time.monotonic() - started < 5
    finally:
        holder.kill()
        holder.wait()


MIGRATE = """
import sys
from habitus.state.db import Store, sql_migration
steps = [sql_migration(f"{i:04d}_t{i}", f"CREATE TABLE t{i} (x INTEGER) STRICT;") for i in range(1, 30)]
Store(sys.argv[1], steps, label="s", wait=30).open_write().close()
"""


def test_concurrent_first_opens_migrate_once(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    procs = [subprocess.Popen([sys.executable, "-c", MIGRATE, str(path)]) for _ in range(4)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 29
    assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == 29


def test_symlinked_database_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.sqlite"
    Store(real, TWO, label="s").open_write().close()
    link = tmp_path / "link.sqlite"
    os.symlink(real, link)
    with pytest.raises(HabitusError) as caught:
        Store(link, TWO, label="s").open_write()
    assert caught.value.code == "symlink_refused"
