"""SQLite stores: lazy connections, WAL, busy timeout, foreign keys, ordered migrations, fail-closed opens.

A store is a file plus an ordered list of migrations. Its schema version is `PRAGMA user_version`
(= number of migrations applied); the names of applied migrations are recorded in
`schema_migrations` and must match this program's list. The version is read before anything writes:

- newer than this program knows -> `schema_newer` (exit 3), file never touched;
- a history we do not recognise -> `schema_unknown` (exit 3);
- not a database / malformed -> `state_corrupt` (exit 3).

Read-only opens (`open_read`) never create a file and never migrate: a store that needs migrating
answers `schema_outdated` (exit 3) until a writing command upgrades it.
"""

from __future__ import annotations

import os
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from habitus.errors import HabitusError
from habitus.state import files, statelock
from habitus.state.clock import utc_now
from habitus.state.faults import fault


@dataclass(frozen=True)
class Migration:
    name: str
    apply: Callable[[sqlite3.Connection], object]  # what it returns is ignored


def sql_migration(name: str, script: str) -> Migration:
    """A migration made of plain SQL statements (run one by one inside the migration's transaction)."""

    def apply(conn: sqlite3.Connection) -> None:
        for statement in _split_sql(script):
            conn.execute(statement)

    return Migration(name, apply)


def _split_sql(script: str) -> list[str]:
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        raise ValueError("incomplete SQL statement in migration")
    return statements


def uri(path: str | os.PathLike[str], *, mode: str, immutable: bool = False) -> str:
    """A `file:` URI for path: "ro" reads, "rw" writes an existing file and never creates one;
    immutable (with "ro") reads a complete database file without creating -wal or -shm beside it."""
    if mode not in ("ro", "rw"):
        raise ValueError(f"bad SQLite open mode {mode!r}")
    return (
        "file:"
        + urllib.parse.quote(os.fspath(path))
        + f"?mode={mode}"
        + ("&immutable=1" if immutable else "")
    )


def connect(
    path: str | os.PathLike[str],
    *,
    mode: str | None = None,
    immutable: bool = False,
    wait: float = 5.0,
    any_thread: bool = False,
) -> sqlite3.Connection:
    """Open a SQLite connection: the one place habitus does. mode None opens path read-write (creating
    it; ":memory:" for a private database), "ro"/"rw" as in `uri`. Autocommit (writers say BEGIN or use
    `Store.write`); every connection waits `wait` seconds on a busy database and trusts no schema
    (trusted_schema=OFF: a planted view or trigger cannot call functions). `Store` adds its own."""
    target = os.fspath(path) if mode is None else uri(path, mode=mode, immutable=immutable)
    conn = sqlite3.connect(
        target, uri=mode is not None, timeout=wait, isolation_level=None, check_same_thread=not any_thread
    )
    try:
        conn.execute(f"PRAGMA busy_timeout={int(wait * 1000)}")
        conn.execute("PRAGMA trusted_schema=OFF")
    except BaseException:
        conn.close()
        raise
    return conn


def translate(exc: sqlite3.Error, path: Path) -> HabitusError:
    """Map a sqlite3 error to a documented code: busy -> 75, corrupt -> 3, else I/O (1)."""
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return HabitusError(
            "state_locked", f"{path} is busy (another writer)", hint="retry, or pass a larger --wait"
        )
    if "not a database" in text or "malformed" in text or "corrupt" in text or "file is encrypted" in text:
        return HabitusError("state_corrupt", f"{path} is not a valid SQLite database or is damaged")
    if "readonly" in text or "read-only" in text:
        return HabitusError("io_error", f"{path}: database is read-only")
    return HabitusError("io_error", f"{path}: {exc}")


class Store:
    """One SQLite file with its migrations. Opens nothing until asked."""

    def __init__(self, path: Path, migrations: Sequence[Migration], *, label: str, wait: float = 5.0) -> None:
        self.path = Path(path)
        self.migrations = tuple(migrations)
        self.label = label
        self.wait = wait
        names = [m.name for m in self.migrations]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate migration names in {label}")

    @property
    def current_version(self) -> int:
        return len(self.migrations)

    # -- inspection (never writes) ------------------------------------------------------------

    def exists(self) -> bool:
        self._refuse_unsafe_files()
        return self.path.is_file()

    def inspect(self) -> int | None:
        """The schema version on disk (None when absent), after the same fail-closed checks as an
        open: newer, unknown history or corrupt raise. An outdated version is returned, not refused."""
        if not self.exists():
            return None
        conn = self._connect_ro()
        try:
            version = self._checked_version(conn, writable=True)
            return version
        finally:
            conn.close()

    # -- opening ------------------------------------------------------------------------------

    def open_current(self) -> sqlite3.Connection | None:
        """A read-only connection when the store exists at this program's schema version; None when it
        is absent or not migrated yet (report-style readers show "nothing yet" then). Newer, unknown
        or corrupt state is still refused. One connection: version check and reads share it."""
        if not self.exists():
            return None
        conn = self._connect_ro()
        try:
            version = self._checked_version(conn, writable=True)
        except BaseException:
            conn.close()
            raise
        if version < self.current_version:
            conn.close()
            return None
        return conn

    def open_read(self, *, oldest: int | None = None) -> sqlite3.Connection | None:
        """A read-only connection, or None when the store does not exist. Never creates or migrates.
        With `oldest`, a store at that schema version or later (but not yet current) is opened as it
        is, for readers that know how to read older schemas; older ones are still `schema_outdated`."""
        if not self.exists():
            return None
        conn = self._connect_ro()
        try:
            version = self._checked_version(conn, writable=oldest is not None)
            if oldest is not None and version < min(oldest, self.current_version):
                self._check_version(conn, version, writable=False)
        except BaseException:
            conn.close()
            raise
        return conn

    def open_write(self) -> sqlite3.Connection:
        """A read-write connection on an up-to-date schema, creating the file (0600) if needed."""
        files.ensure_dir(self.path.parent)
        statelock.writing(self.path.parent)  # before the file is opened: a restore may not swap it under us
        files.create_private(self.path)
        conn = self._connect_rw()
        try:
            version = self._checked_version(conn, writable=True)
            self._ensure_wal(conn)
            if version < self.current_version:
                self._migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def upgrade(self, conn: sqlite3.Connection) -> None:
        """Apply this store's pending migrations to an open connection, such as an in-memory copy
        (analyze --dry-run); same checks and transactions as opening for writing."""
        version = self._checked_version(conn, writable=True)
        if version < self.current_version:
            self._migrate(conn)

    # -- transactions -------------------------------------------------------------------------

    @contextmanager
    def write(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        """A `BEGIN IMMEDIATE` transaction: committed on success, rolled back on any exception."""
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from None
        try:
            yield conn
            fault(f"{self.path.stem}_commit")  # tests only: e.g. memory_commit, ledger_commit
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise translate(exc, self.path) from None
        fault(f"{self.path.stem}_committed")

    # -- internals ----------------------------------------------------------------------------

    def _connect_rw(self) -> sqlite3.Connection:
        self._refuse_unsafe_files()
        try:
            conn = connect(self.path, wait=self.wait, any_thread=True)
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from None
        self._configure(conn)
        return conn

    def _connect_ro(self) -> sqlite3.Connection:
        self._refuse_unsafe_files()
        try:
            conn = connect(self.path, mode="ro", wait=self.wait, any_thread=True)
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from None
        self._configure(conn)
        return conn

    def _refuse_unsafe_files(self) -> None:
        # SQLite opens these itself (blocking, following links): check them first.
        for suffix in ("", "-wal", "-shm", "-journal"):
            files.refuse_unsafe(self.path.with_name(self.path.name + suffix))

    def _configure(self, conn: sqlite3.Connection) -> None:
        conn.row_factory = sqlite3.Row
        # Connection-level settings only: none of these writes to the file (connect() set the others).
        self._pragma(conn, "PRAGMA foreign_keys=ON")
        self._pragma(conn, "PRAGMA synchronous=FULL")

    def _pragma(self, conn: sqlite3.Connection, statement: str) -> list[sqlite3.Row]:
        try:
            return conn.execute(statement).fetchall()
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from None

    def _ensure_wal(self, conn: sqlite3.Connection) -> None:
        # Switching the journal mode needs an exclusive lock and SQLite may answer "busy" at once
        # without calling the busy handler, so retry here until --wait runs out.
        deadline = time.monotonic() + self.wait
        while True:
            try:
                if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                    conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc).lower() and "busy" not in str(exc).lower():
                    raise translate(exc, self.path) from None
                if time.monotonic() >= deadline:
                    raise translate(exc, self.path) from None
                time.sleep(0.01)

    def _checked_version(self, conn: sqlite3.Connection, *, writable: bool) -> int:
        """Read the version and check the history in one read transaction, so both come from the same
        snapshot even while another process is migrating."""
        self._pragma(conn, "BEGIN")
        try:
            version = self._read_version(conn)
            self._check_version(conn, version, writable=writable)
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")
        return version

    def _read_version(self, conn: sqlite3.Connection) -> int:
        # Reading the header is what detects a non-database file.
        rows = self._pragma(conn, "PRAGMA user_version")
        return int(rows[0][0])

    def _check_version(self, conn: sqlite3.Connection, version: int, *, writable: bool) -> None:
        if version > self.current_version:
            raise HabitusError(
                "schema_newer",
                f"{self.path} has schema version {version}; this habitus knows up to {self.current_version}",
                hint="upgrade habitus; the file was left untouched",
            )
        if version > 0:
            self._check_history(conn, version)
        if version < self.current_version and not writable:
            raise HabitusError(
                "schema_outdated",
                f"{self.path} has schema version {version} and needs migrating to {self.current_version}",
                hint="run any command that writes to it (for example `habitus habit list` after an upgrade)",
            )

    def _check_history(self, conn: sqlite3.Connection, version: int) -> None:
        try:
            rows = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
        except sqlite3.Error as exc:
            if "no such table" in str(exc).lower():
                raise HabitusError("schema_unknown", f"{self.path} has no migration history") from None
            raise translate(exc, self.path) from None
        expected = [(i + 1, m.name) for i, m in enumerate(self.migrations[:version])]
        if [(int(r[0]), str(r[1])) for r in rows] != expected:
            raise HabitusError(
                "schema_unknown",
                f"{self.path}: its migration history does not match this habitus",
                hint="the file was written by a different program or version; it was left untouched",
            )

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Apply pending migrations, each in its own BEGIN IMMEDIATE transaction with its record."""
        while True:
            with self.write(conn):
                version = self._read_version(conn)  # another process may have migrated meanwhile
                self._check_version(conn, version, writable=True)
                if version >= self.current_version:
                    return
                if version == 0:
                    conn.execute(
                        "CREATE TABLE IF NOT EXISTS schema_migrations ("
                        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT"
                    )
                migration = self.migrations[version]
                try:
                    migration.apply(conn)
                except sqlite3.Error as exc:
                    raise translate(exc, self.path) from None
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version + 1, migration.name, utc_now()),
                )
                conn.execute(f"PRAGMA user_version={version + 1}")
