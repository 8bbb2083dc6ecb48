"""Where memory lives: the global store in the state root, a project store in the current repository.

- `global`: `<root>/memory.sqlite`.
- `project`: `<repo>/.habitus/memory.sqlite`, where `<repo>` is the nearest folder at or above the current
  directory (or a hook event's `cwd`) that holds a `.git` folder or file (worktrees have a file).
  Outside a repository there is no project store: naming it explicitly is an error (`no_project`),
  while `retrieve --both` and `index` simply use the global store alone.

A store is opened lazily. Read paths use `reader()`, which never creates a file or folder (a missing
store reads as empty); only writers create it, and creating a project store also writes
`.habitus/.gitignore` (`*`) so that memories are never committed by accident.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from habitus.errors import HabitusError
from habitus.state import db, files, memory_store
from habitus.state.root import StateRoot

STORES = ("global", "project")
CACHE_KIB = 32 * 1024


def find_repo(start: Path) -> Path | None:
    """The nearest folder at or above start holding `.git`, or None."""
    here = Path(os.path.abspath(start))
    for folder in (here, *here.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


class MemoryStore:
    """One memory database (global or project), opened at most once per mode."""

    def __init__(self, name: str, path: Path, *, wait: float, root: StateRoot | None = None) -> None:
        self.name = name
        self.path = path
        self.root = root  # a project store's trust is recorded in this state root (habitus.memory.trust)
        self.db = memory_store.store(path, label=name, wait=wait)
        self._reader: sqlite3.Connection | None = None
        self._writer: sqlite3.Connection | None = None
        self._stemmed: bool | None = None
        self._verdict: Any = None
        self._keep_trust: str | None = None  # how habitus wrote a store it trusts: created | written

    def verdict(self) -> Any:
        """Whether this store may be read into an agent's context (the global store always may)."""
        from habitus.memory import trust

        if self.name != "project":
            return trust.Verdict(True)
        if self._verdict is None:
            self._verdict = (
                trust.check(self.root, self.path) if self.root else trust.Verdict(False, "untrusted")
            )
        return self._verdict

    def require_trust(self) -> None:
        """Refuse (`untrusted`) to read an untrusted project store for an agent."""
        from habitus.memory import trust

        verdict = self.verdict()
        if self.exists() and not verdict.trusted:
            raise trust.untrusted_error(self.path, verdict)

    def exists(self) -> bool:
        return self.db.exists()

    def reader(self) -> sqlite3.Connection | None:
        """A read-only connection, or None when the store does not exist (nothing is created)."""
        if self._writer is not None:
            return self._writer
        if self._reader is None:
            try:
                self._reader = self.db.open_read(oldest=memory_store.OLDEST_READABLE)
                if self._reader is not None:
                    _tune(self._reader)
            except HabitusError as exc:
                if exc.code != "schema_outdated" or not self._blank():
                    raise
        return self._reader

    def _blank(self) -> bool:
        """Whether the file is an empty, never-migrated database (a first write that failed or is still
        running): it holds no memories, so a reader treats it as absent. Anything else stays refused."""
        conn = db.connect(self.path, mode="ro", wait=self.db.wait)
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            return version == 0 and tables == 0
        except sqlite3.Error:
            return False
        finally:
            conn.close()

    def stemmed(self) -> bool:
        """Whether the open store's FTS table has the `stems` column (a reader may see an older schema)."""
        conn = self.reader()
        if conn is None:
            return False
        if self._stemmed is None:
            columns = [row[1] for row in conn.execute("PRAGMA table_info(memories_fts)")]
            self._stemmed = "stems" in columns
        return self._stemmed

    def writer(self) -> sqlite3.Connection:
        """A read-write connection, creating and migrating the store when needed."""
        if self._writer is None:
            if self.name == "project":
                created = not self.exists()
                if self.root is not None and (created or self.verdict().trusted):
                    self._keep_trust = "created" if created else "written"
                _prepare_project_folder(self.path.parent)
            self._writer = self.db.open_write()
            _tune(self._writer)
            self._stemmed = None
        return self._writer

    def close(self) -> None:
        for conn in (self._reader, self._writer):
            if conn is not None:
                conn.close()
        self._reader = self._writer = None
        self._stemmed = None
        self._verdict = None
        if self._keep_trust is not None and self.root is not None and self.exists():
            from habitus.memory import trust

            how, self._keep_trust = self._keep_trust, None
            try:
                trust.record(self.root, self.path, how=how, wait=self.db.wait)
            except HabitusError:
                pass  # unrecorded, the store reads as changed: untrusted until `memory trust` (fail closed)


def _tune(conn: sqlite3.Connection) -> None:
    """A page cache large enough for a 100k-record search to stay in memory (allocated only as used)."""
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")


def _prepare_project_folder(folder: Path) -> None:
    files.ensure_dir(folder)
    ignore = folder / ".gitignore"
    if files.create_private(ignore):
        fd = files.open_private(ignore, os.O_WRONLY)
        try:
            os.write(fd, b"# habitus memory: private, never commit\n*\n")
        finally:
            os.close(fd)


def project_path(cwd: Path | None = None) -> Path | None:
    repo = find_repo(cwd if cwd is not None else Path.cwd())
    return None if repo is None else repo / ".habitus" / "memory.sqlite"


def open_store(root: StateRoot, name: str, *, wait: float, cwd: Path | None = None) -> MemoryStore:
    """The named store; `no_project` when the project store is asked for outside a repository."""
    if name == "global":
        return MemoryStore("global", root.memory, wait=wait)
    if name != "project":
        raise HabitusError("bad_request", "request.store: expected global or project")
    path = project_path(cwd)
    if path is None:
        raise HabitusError(
            "no_project",
            f"{cwd or Path.cwd()}: not inside a git repository, so there is no project memory store",
            hint="run it inside a repository, or use --store global",
        )
    return MemoryStore("project", path, wait=wait, root=root)


def both(root: StateRoot, *, wait: float, cwd: Path | None = None) -> list[MemoryStore]:
    """The project store (when inside a repository) then the global store."""
    stores = []
    path = project_path(cwd)
    if path is not None:
        stores.append(MemoryStore("project", path, wait=wait, root=root))
    stores.append(MemoryStore("global", root.memory, wait=wait))
    return stores
