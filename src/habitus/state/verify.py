"""verify: a report-only check of a whole state root. Nothing is written, created or migrated.

Stable issue codes (each issue: {"code", "item"?, "message", "count", "paths"?}):

    store_unreadable   a store cannot be opened as a SQLite database
    schema_newer       a store was written by a newer habitus
    schema_unknown     a store's migration history is not one this habitus knows
    schema_drift       a store's tables, indexes, views or triggers differ from what its migrations create
    sqlite_integrity   PRAGMA integrity_check found damage
    foreign_key        PRAGMA foreign_key_check found rows whose references are missing
    file_invalid       a plain file (config.toml, law.md, mutes.json) fails its check, or is too large
    permissions        a file is not 0600 or a folder not 0700
    foreign_owner      a file or folder belongs to another user
    symlink            a symbolic link inside the root
    special_file       a FIFO, socket or device inside the root, or a folder where a file belongs
    hard_link          a file inside the root has more than one link (writes would reach a file outside)
    unknown_entry      a top-level name that is neither backed up nor excluded (see inventory)
    temp_leftover      a temporary file left by an interrupted atomic write
    restore_journal    an interrupted restore's journal (normally recovered before any command runs)
    restore_leftover   staging or rollback folders of an interrupted restore, without a journal
    verifier_error     a registered domain verifier failed to run (its error code is in "error")

plus the codes of the domain verifiers registered in habitus.state.inventory (row checksums, FTS drift,
the observation chain), each reported with the item it checked.
"""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from pathlib import Path
from typing import Any

from habitus.errors import HabitusError
from habitus.state import backup, files, inventory, statelock
from habitus.state.root import StateRoot

MAX_PATHS = 20
_TEMP = re.compile(r"^\..+\.tmp-\d+-[0-9a-f]{8}$")  # files.atomic_write's temporary names


class Issues:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.found: dict[tuple[str, str], dict[str, Any]] = {}

    def add(self, code: str, message: str, *, item: str = "", path: Path | None = None, **extra: Any) -> None:
        issue = self.found.setdefault(
            (code, item), {"code": code, **({"item": item} if item else {}), "message": message, "count": 0}
        )
        issue["count"] += int(extra.pop("count", 1))
        issue.update(extra)
        if path is not None:
            paths = issue.setdefault("paths", [])
            if len(paths) < MAX_PATHS:
                paths.append(str(path.relative_to(self.root)) if path != self.root else ".")

    def report(self) -> list[dict[str, Any]]:
        return [self.found[key] for key in sorted(self.found)]


def run(root: StateRoot, *, wait: float) -> dict[str, Any]:
    exists = root.exists()
    issues = Issues(root.path)
    items: list[dict[str, Any]] = []
    if exists:
        _check_tree(root.path, issues)  # first: reading must not be what a mode check sees
        for store_item in inventory.STORES:
            items.append(_check_store(root, store_item, issues, wait=wait))
        for file_item in inventory.FILES:
            items.append(_check_file(root, file_item, issues))
        checked = {i.name for i in inventory.items()}
        for name in sorted(inventory.verified() - checked):
            _run_verifiers(inventory.Check(root, name, root.path / name, wait), issues)
    found = issues.report()
    return {"ok": not found, "root": str(root.path), "exists": exists, "items": items, "issues": found}


def _check_store(
    root: StateRoot, item: inventory.StoreItem, issues: Issues, *, wait: float
) -> dict[str, Any]:
    path = root.path / item.name
    store = item.store(root, wait=wait)
    entry: dict[str, Any] = {"name": item.name, "kind": item.kind, "exists": os.path.lexists(path)}
    entry["schema_current"] = store.current_version
    if not entry["exists"] or os.path.islink(path) or path.stat().st_size == 0:
        return entry  # absent, or reported as a symlink by the tree walk, or an empty (new) file
    try:
        version = store.inspect()
    except HabitusError as exc:
        code = exc.code if exc.code in ("schema_newer", "schema_unknown") else "store_unreadable"
        issues.add(code, exc.message, item=item.name)
        return entry
    entry["schema_version"] = version
    assert version is not None
    try:
        conn = backup.connect_ro(path, wait=wait)
    except sqlite3.Error as exc:
        issues.add(
            "store_unreadable", f"{item.name}: cannot be opened ({type(exc).__name__})", item=item.name
        )
        return entry
    try:
        for code, message in backup.integrity_problems(conn):
            issues.add(code, f"{item.name}: {message}", item=item.name)
        if backup.schema_of(conn) != backup.expected_schema(store, version):
            issues.add(
                "schema_drift",
                f"{item.name}: tables, indexes, views or triggers differ from what its migrations create",
                item=item.name,
            )
        _run_verifiers(inventory.Check(root, item.name, path, wait, conn), issues)
    except sqlite3.DatabaseError as exc:
        issues.add("store_unreadable", f"{item.name}: unreadable ({type(exc).__name__})", item=item.name)
    finally:
        conn.close()
    return entry


def _check_file(root: StateRoot, item: inventory.FileItem, issues: Issues) -> dict[str, Any]:
    path = root.path / item.name
    entry: dict[str, Any] = {"name": item.name, "kind": item.kind, "exists": os.path.lexists(path)}
    if not entry["exists"] or os.path.islink(path):
        return entry
    try:
        item.validate(_read(path, item.max_bytes), item.name)
    except HabitusError as exc:
        issues.add("file_invalid", exc.message, item=item.name, error=exc.code)
    except OSError as exc:
        issues.add("file_invalid", f"{item.name}: {exc.strerror}", item=item.name, error="io_error")
    return entry


def _read(path: Path, max_bytes: int) -> bytes:
    """Read without changing anything (files.read_bytes would tighten a loose mode: verify reports it)."""
    try:
        data, _ = files.read_regular(path, max_bytes)
    except ValueError:
        raise HabitusError("state_corrupt", f"{path.name}: not a regular file") from None
    if len(data) > max_bytes:
        raise HabitusError("state_corrupt", f"{path.name}: larger than {max_bytes} bytes")
    return data


def _run_verifiers(check: inventory.Check, issues: Issues) -> None:
    for verifier in inventory.verifiers(check.item):
        try:
            for found in verifier(check):
                found = dict(found)
                code = str(found.pop("code"))
                message = str(found.pop("message", code))
                issues.add(code, message, item=check.item, **found)
        except HabitusError as exc:
            issues.add("verifier_error", exc.message, item=check.item, error=exc.code)


def _check_tree(root: Path, issues: Issues) -> None:
    known = inventory.known_names()
    uid = os.getuid()
    for name in sorted(os.listdir(root)):
        if name == statelock.RESTORE_DIR:
            _check_restore_dir(root / name, issues)
        elif _TEMP.match(name):
            issues.add("temp_leftover", "a temporary file of an interrupted write", path=root / name)
        elif name not in known:
            issues.add("unknown_entry", "a name habitus neither backs up nor excludes", path=root / name)
    _check_mode(root, os.lstat(root), uid, issues)
    for folder, dirs, names in os.walk(root, followlinks=False):
        for name in sorted(dirs + names):
            path = Path(folder) / name
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue  # removed while we walked (a concurrent command)
            if folder == str(root) and name == "worker.sock" and stat.S_ISSOCK(st.st_mode):
                st = os.stat_result((stat.S_IFREG | stat.S_IMODE(st.st_mode), *st[1:]))  # as a file
            _check_mode(path, st, uid, issues)


def _check_mode(path: Path, st: os.stat_result, uid: int, issues: Issues) -> None:
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        issues.add("symlink", "a symbolic link inside the state root", path=path)
        return
    if stat.S_ISDIR(st.st_mode):
        if mode != files.DIR_MODE:
            issues.add("permissions", "folders must be 0700 and files 0600", path=path)
    elif stat.S_ISREG(st.st_mode):
        if mode != files.FILE_MODE:
            issues.add("permissions", "folders must be 0700 and files 0600", path=path)
        if st.st_nlink != 1:
            issues.add("hard_link", "a file with more than one hard link inside the state root", path=path)
    else:
        issues.add("special_file", "a FIFO, socket or device inside the state root", path=path)
    if st.st_uid != uid:
        issues.add("foreign_owner", "owned by another user", path=path)


def _check_restore_dir(folder: Path, issues: Issues) -> None:
    if os.path.lexists(folder / statelock.JOURNAL):
        issues.add(
            "restore_journal",
            "an interrupted restore has not been recovered",
            path=folder / statelock.JOURNAL,
        )
    from habitus.state import restore
    from habitus.state.root import StateRoot

    if restore.running(StateRoot(folder.parent)):
        return  # a restore is staging: its folders are live, not left over
    for name in sorted(os.listdir(folder)) if folder.is_dir() and not folder.is_symlink() else []:
        if name != statelock.JOURNAL:
            issues.add("restore_leftover", "left by an interrupted restore", path=folder / name)
