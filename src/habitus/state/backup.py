"""Backups: a folder of consistent copies of the state root's items plus a manifest written last.

Layout of a backup folder (0700; files 0600):

    manifest.json   {"format": "habitus-backup", "format_version": 1, "habitus", "created_at",
                     "files": [{"name", "kind", "size", "sha256", "schema_version"?}],
                     "managed": [every item name this habitus backs up],
                     "excluded": [{"name", "reason"}], "checksum"}
    ledger.sqlite   ... one file per item present in the root (see habitus.state.inventory)

SQLite stores are copied with SQLite's online backup API in one step: one read transaction, so the copy
is a consistent snapshot of that store even while other processes keep writing (WAL lets them). The copy
is switched to rollback-journal mode (a single self-contained file) and checked with
`PRAGMA integrity_check`. Plain files are replaced atomically by their writers, so one read is a
consistent copy. Everything is written into a hidden sibling folder `.NAME.partial-*` that is renamed
to NAME only after the manifest (written last) and every file are on disk: a folder named NAME is always
complete, and an interrupted backup leaves only the hidden partial folder.

`read_manifest` and `stage` are restore's validation: structural checks on the folder without writing
anything, then copies into a private staging folder that are checked (size, SHA-256, schema, integrity,
content) after they are copied, so the backup cannot change between the check and the use.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import shutil
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from habitus import __version__, codec
from habitus.errors import HabitusError
from habitus.state import db, files, inventory
from habitus.state.clock import utc_now
from habitus.state.db import Store
from habitus.state.faults import fault
from habitus.state.root import StateRoot

FORMAT = "habitus-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 1024 * 1024
CHUNK = 1024 * 1024
Progress = Callable[..., None]  # progress(bytes done, bytes in all, step=NAME)
SQLITE_MAGIC = b"SQLite format 3\x00"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class ManifestEntry:
    name: str
    kind: str
    size: int
    sha256: str
    schema_version: int | None = None

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "size": self.size,
            "sha256": self.sha256,
        }
        if self.schema_version is not None:
            body["schema_version"] = self.schema_version
        return body


@dataclass(frozen=True)
class Manifest:
    created_at: str
    habitus: str
    entries: tuple[ManifestEntry, ...]
    managed: tuple[str, ...]

    def entry(self, name: str) -> ManifestEntry | None:
        return next((e for e in self.entries if e.name == name), None)


# -- backup ---------------------------------------------------------------------------------------


def default_out(root: StateRoot) -> Path:
    """`<root>-backups/<UTC time>` next to the root: outside it, so removing the root keeps them."""
    return root.path.parent / f"{root.path.name}-backups" / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def create(
    root: StateRoot, out: Path | None, *, wait: float, progress: Progress | None = None
) -> dict[str, Any]:
    """Write a backup of root into the new folder `out` (default: `default_out`). Returns the result.
    `progress(bytes done, bytes in all, step=NAME)` is called before and after each file."""
    if not root.exists():
        raise HabitusError("not_found", f"{root.path}: no state root to back up")
    files.refuse_symlink(root.path)
    target = _target(root, out)
    _sweep_partials(target.parent)
    tmp = target.parent / f".{target.name}.partial-{os.getpid()}-{secrets.token_hex(4)}"
    os.mkdir(tmp, files.DIR_MODE)
    os.chmod(tmp, files.DIR_MODE)
    try:
        entries = []
        stores = [(item, item.store(root, wait=wait)) for item in inventory.STORES]
        stores = [(i, s) for i, s in stores if s.exists() and s.path.stat().st_size > 0]  # empty: nothing
        total = sum(s.path.stat().st_size for _, s in stores) + sum(
            _size(root.path / f.name) for f in inventory.FILES
        )
        done = 0
        for store_item, store in stores:
            if progress is not None:
                progress(done, total, step=store_item.name)
            entries.append(_copy_store(store_item, store, tmp / store_item.name))
            done += store.path.stat().st_size
        for file_item in inventory.FILES:
            entry = _copy_file(file_item, root.path / file_item.name, tmp / file_item.name)
            if entry is not None:
                entries.append(entry)
                done += entry.size
        if progress is not None:
            progress(total, total, step="done")
        fault("backup_before_manifest")
        manifest = _manifest_body(entries)
        _write_new(tmp / MANIFEST, codec.dumps(manifest) + b"\n")
        files.fsync_dir(tmp)
        fault("backup_before_rename")
        if os.path.lexists(target):
            raise HabitusError("usage", f"--out {target}: already exists; a backup never overwrites")
        os.rename(tmp, target)
        files.fsync_dir(target.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {
        "path": str(target),
        "created_at": manifest["created_at"],
        "files": manifest["files"],
        "excluded": manifest["excluded"],
    }


_PARTIAL = re.compile(r"^\..+\.partial-(\d+)-[0-9a-f]{8}$")


def _sweep_partials(folder: Path) -> None:
    """Remove the hidden copies that killed backups left beside their target (named with the pid
    of the backup that wrote them; a live pid's copy is being written and stays)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        match = _PARTIAL.match(name)
        if match is None or _alive(int(match.group(1))):
            continue
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process: not ours to judge
    return True


def _target(root: StateRoot, out: Path | None) -> Path:
    if out is None:
        target = default_out(root)
        files.ensure_dir(target.parent)  # our own folder: created 0700
        for n in range(1, 100):  # two backups within one second get -1, -2, ...
            if not os.path.lexists(target):
                break
            target = target.with_name(f"{target.name.split('-')[0]}-{n}")
        return target
    target = Path(os.path.abspath(out))
    if os.path.lexists(target):
        raise HabitusError("usage", f"--out {target}: already exists; a backup never overwrites")
    if not target.parent.is_dir():
        raise HabitusError("usage", f"--out {target}: its parent folder does not exist")
    if target == root.path or root.path in target.parents:
        raise HabitusError("usage", f"--out {target}: must be outside the state root")
    return target


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # absent: nothing to copy (the copy itself reports any other problem)


def _copy_store(item: inventory.StoreItem, store: Store, dest: Path) -> ManifestEntry:
    store.inspect()  # newer, unknown history or corrupt: refused before anything is copied
    files.create_private(dest)
    try:
        source = db.connect(store.path, mode="ro", wait=store.wait)
        copy = db.connect(dest)
        try:
            source.backup(copy)  # all pages in one step: one read transaction, one snapshot
            copy.execute("PRAGMA journal_mode=DELETE")
        finally:
            copy.close()
            source.close()
    except sqlite3.Error as exc:
        from habitus.state.db import translate

        raise translate(exc, store.path) from None
    version = check_store(item, dest, wait=store.wait)
    _fsync(dest)
    size, digest = _hash_file(dest)
    return ManifestEntry(item.name, item.kind, size, digest, version)


def _copy_file(item: inventory.FileItem, source: Path, dest: Path) -> ManifestEntry | None:
    try:
        data = files.read_bytes(source, item.max_bytes)
    except FileNotFoundError:
        return None
    _write_new(dest, data)
    return ManifestEntry(item.name, item.kind, len(data), hashlib.sha256(data).hexdigest())


def _manifest_body(entries: list[ManifestEntry]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "habitus": __version__,
        "created_at": utc_now(),
        "files": [e.as_dict() for e in entries],
        "managed": sorted(i.name for i in inventory.items()),
        "excluded": [{"name": e.name, "reason": e.reason} for e in inventory.EXCLUDED],
    }
    body["checksum"] = codec.checksum(body)
    return body


# -- validation (restore) -----------------------------------------------------------------------


def _invalid(message: str) -> HabitusError:
    return HabitusError(
        "backup_invalid", message, hint="use a folder written by `habitus backup`, unchanged since"
    )


def read_manifest(source: Path) -> Manifest:
    """Check the backup folder's structure and manifest without writing anything."""
    source = Path(os.path.abspath(source))
    try:
        st = os.lstat(source)
    except FileNotFoundError:
        raise HabitusError("not_found", f"{source}: no such backup folder") from None
    if stat.S_ISLNK(st.st_mode):
        raise HabitusError("symlink_refused", f"{source} is a symbolic link; give the real folder")
    if not stat.S_ISDIR(st.st_mode):
        raise _invalid(f"{source}: not a folder")
    names = sorted(os.listdir(source))
    for name in names:
        _check_entry(source / name)
    if MANIFEST not in names:
        raise _invalid(f"{source}: no {MANIFEST}: not a habitus backup, or an incomplete one")
    body = _load_manifest(source / MANIFEST)
    manifest = _parse_manifest(body, source / MANIFEST)
    listed = {e.name for e in manifest.entries}
    extra = [n for n in names if n != MANIFEST and n not in listed]
    if extra:
        raise _invalid(f"{source}: holds {len(extra)} file(s) that the manifest does not list")
    missing = sorted(listed - set(names))
    if missing:
        raise _invalid(f"{source}: {', '.join(missing)} listed in the manifest but missing")
    return manifest


def _check_entry(path: Path) -> None:
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise HabitusError("symlink_refused", f"{path.parent}: holds a symbolic link; a backup never does")
    if not stat.S_ISREG(st.st_mode):
        raise _invalid(f"{path.parent}: holds something other than regular files")
    if st.st_nlink != 1:
        raise _invalid(f"{path.parent}: holds a hard-linked file; a backup never does")


def _load_manifest(path: Path) -> dict[str, Any]:
    data = _read_regular(path, MAX_MANIFEST_BYTES)
    try:
        body = codec.loads(data)
    except ValueError:
        raise _invalid(f"{path}: not valid JSON") from None
    if not isinstance(body, dict):
        raise _invalid(f"{path}: not a JSON object")
    return body


def _parse_manifest(body: dict[str, Any], where: Path) -> Manifest:
    if body.get("format") != FORMAT:
        raise _invalid(f"{where}: format is not {FORMAT}")
    version = body.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _invalid(f"{where}: format_version must be a positive integer")
    if version > FORMAT_VERSION:
        raise HabitusError(
            "schema_newer",
            f"{where}: backup format {version}; this habitus reads up to {FORMAT_VERSION}",
            hint="restore it with the newer habitus that wrote it",
        )
    claimed = body.get("checksum")
    unsigned = {k: v for k, v in body.items() if k != "checksum"}
    if not isinstance(claimed, str) or claimed != codec.checksum(unsigned):
        raise HabitusError("checksum_mismatch", f"{where}: the manifest does not match its checksum")
    raw_files, managed = body.get("files"), body.get("managed")
    if not isinstance(raw_files, list) or not isinstance(managed, list):
        raise _invalid(f"{where}: files and managed must be lists")
    if not all(isinstance(m, str) for m in managed):
        raise _invalid(f"{where}: managed must list names")
    entries: list[ManifestEntry] = []
    for index, raw in enumerate(raw_files):
        entry = _parse_entry(raw, f"{where}: files[{index}]")
        if entry.name in {e.name for e in entries}:
            raise _invalid(f"{where}: files[{index}] names a file twice")
        if entry.name not in managed:
            raise _invalid(f"{where}: files[{index}] is not among the managed names")
        entries.append(entry)
    for key in ("habitus", "created_at"):
        if not isinstance(body.get(key), str):
            raise _invalid(f"{where}: {key} must be a string")
    return Manifest(body["created_at"], body["habitus"], tuple(entries), tuple(managed))


def _parse_entry(raw: Any, where: str) -> ManifestEntry:
    if not isinstance(raw, dict):
        raise _invalid(f"{where}: not an object")
    name = raw.get("name")
    # The allowlist: only names this habitus backs up, compared exactly. That rules out paths, "..",
    # absolute names, NUL and look-alike characters without parsing any of them.
    item = inventory.item(name)
    if item is None:
        raise _invalid(f"{where}.name: not a file habitus backs up")
    if raw.get("kind") != item.kind:
        raise _invalid(f"{where}.kind: expected {item.kind}")
    size, digest, version = raw.get("size"), raw.get("sha256"), raw.get("schema_version")
    if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= item.max_bytes:
        raise _invalid(f"{where}.size: expected an integer from 0 to {item.max_bytes}")
    if not isinstance(digest, str) or not _HEX64.match(digest):
        raise _invalid(f"{where}.sha256: expected 64 lowercase hex digits")
    if item.kind == "sqlite":
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            raise _invalid(f"{where}.schema_version: expected an integer >= 0")
    elif version is not None:
        raise _invalid(f"{where}.schema_version: only stores have one")
    return ManifestEntry(item.name, item.kind, size, digest, version)


def stage(
    source: Path, manifest: Manifest, dest: Path, *, wait: float, progress: Progress | None = None
) -> None:
    """Copy every file of the backup into dest (0700, created here) and validate the copies.
    `progress(bytes done, bytes in all, step=NAME)` follows the copy, chunk by chunk."""
    files.ensure_dir(dest)
    total = sum(entry.size for entry in manifest.entries)
    done = 0
    for entry in manifest.entries:
        target = dest / entry.name
        copied = None if progress is None else _advance(progress, done, total, entry.name)
        _copy_verified(Path(source) / entry.name, target, entry, copied)
        done += entry.size
        item = inventory.item(entry.name)
        if isinstance(item, inventory.StoreItem):
            if progress is not None:
                progress(done, total, step=f"checking {entry.name}")
            version = check_store(item, target, wait=wait)
            if version != entry.schema_version:
                raise _invalid(f"{target.name}: schema version differs from the manifest")
        elif item is not None:
            item.validate(files.read_bytes(target, item.max_bytes), f"backup {entry.name}")


def _advance(progress: Progress, base: int, total: int, name: str) -> Callable[[int], None]:
    def copied(n: int) -> None:
        progress(base + n, total, step=name)

    return copied


def _copy_verified(
    source: Path, dest: Path, entry: ManifestEntry, copied_so_far: Callable[[int], None] | None = None
) -> None:
    """Copy source to dest while hashing, refusing links and anything but entry's exact size and hash."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        code = "symlink_refused" if exc.errno == errno.ELOOP else "io_error"
        raise HabitusError(code, f"{source}: cannot be opened ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            raise _invalid(f"{source}: not a single regular file")
        if st.st_size != entry.size:
            raise HabitusError("checksum_mismatch", f"{source}: size differs from the manifest")
        digest = hashlib.sha256()
        copied = 0
        out = files.open_private(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        try:
            while chunk := os.read(fd, CHUNK):
                copied += len(chunk)
                if copied > entry.size:
                    raise HabitusError("checksum_mismatch", f"{source}: size differs from the manifest")
                digest.update(chunk)
                _write_all(out, chunk)
                if copied_so_far is not None:
                    copied_so_far(copied)
            os.fsync(out)
        finally:
            os.close(out)
    finally:
        os.close(fd)
    if copied != entry.size or digest.hexdigest() != entry.sha256:
        raise HabitusError("checksum_mismatch", f"{source}: does not match its SHA-256 in the manifest")


def check_store(item: inventory.StoreItem, path: Path, *, wait: float) -> int:
    """Validate a single-file copy of a store: SQLite header in rollback mode, a schema version and
    history this habitus knows, `PRAGMA integrity_check`, foreign keys, and exactly the tables,
    indexes, views and triggers its migrations create. Returns the schema version."""
    with open(path, "rb") as handle:
        header = handle.read(100)
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        raise HabitusError("state_corrupt", f"{path.name}: not a SQLite database")
    if header[18:20] != b"\x01\x01":
        raise _invalid(f"{path.name}: not a single-file copy (WAL mode)")
    store = item.store(StateRoot(path.parent), wait=wait)
    version = store.inspect()  # schema_newer / schema_unknown / state_corrupt
    assert version is not None
    conn = connect_ro(path, wait=wait)
    try:
        problems = integrity_problems(conn)
        if problems:
            raise HabitusError("state_corrupt", f"{path.name}: {problems[0][1]}")
        if schema_of(conn) != expected_schema(store, version) or _stray_internal(conn):
            raise HabitusError(
                "state_corrupt",
                f"{path.name}: its tables, indexes or triggers differ from what this habitus creates",
            )
        # The checks `verify` runs on the live store (row checksums and the audit chain, memory's FTS
        # rows): a copy that would fail closed once installed is refused before the swap.
        for verifier in inventory.verifiers(item.name):
            for issue in verifier(inventory.Check(StateRoot(path.parent), item.name, path, wait, conn)):
                if issue["code"] in _REPORTED_NOT_REFUSED:
                    continue
                raise HabitusError(
                    "checksum_mismatch",
                    f"{path.name}: {issue.get('message', issue['code'])} ({issue['code']})",
                )
    except sqlite3.DatabaseError as exc:
        raise HabitusError("state_corrupt", f"{path.name}: unreadable ({type(exc).__name__})") from None
    finally:
        conn.close()
    return version


# -- SQLite helpers shared with verify ------------------------------------------------------------


def connect_ro(path: Path, *, wait: float) -> sqlite3.Connection:
    return db.connect(path, mode="ro", wait=wait)


def integrity_problems(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """(issue code, message) for damage found by integrity_check and foreign_key_check."""
    problems = []
    try:
        rows = [str(r[0]) for r in conn.execute("PRAGMA integrity_check")]
    except sqlite3.DatabaseError:  # some damage makes the check itself fail part-way
        rows = ["malformed"]
    if rows != ["ok"]:
        problems.append(("sqlite_integrity", "PRAGMA integrity_check found damage"))
    if conn.execute("PRAGMA foreign_key_check").fetchone() is not None:
        problems.append(("foreign_key", "PRAGMA foreign_key_check found rows whose references are missing"))
    return problems


# What verify reports about records that are intact but worth a look (restore brings them back as they
# were; `index` already withholds instruction-like records, and index-vectors mends stale vectors).
_REPORTED_NOT_REFUSED = frozenset({"memory_instruction", "memory_sensitive", "vector_stale"})


def _stray_internal(conn: sqlite3.Connection) -> bool:
    """SQLite's own tables that habitus never creates (ANALYZE's sqlite_stat1..4): their contents steer
    the query planner of whoever opens the store, so a backup brings none."""
    stray = "SELECT 1 FROM sqlite_master WHERE name LIKE 'sqlite\\_stat%' ESCAPE '\\'"
    return conn.execute(stray).fetchone() is not None


def schema_of(conn: sqlite3.Connection) -> list[tuple[str, str, str, str | None]]:
    """The store's own schema objects, without SQLite's internal ones and the shadow tables of virtual
    tables (their definitions belong to the SQLite version, not to habitus)."""
    rows = conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        " ORDER BY type, name"
    ).fetchall()
    virtual = [r[1] for r in rows if r[0] == "table" and str(r[3] or "").upper().startswith("CREATE VIRTUAL")]
    return [
        (str(r[0]), str(r[1]), str(r[2]), r[3])
        for r in rows
        if not (r[0] == "table" and any(str(r[1]).startswith(v + "_") for v in virtual))
    ]


_EXPECTED: dict[tuple[str, ...], list[tuple[str, str, str, str | None]]] = {}


def expected_schema(store: Store, version: int) -> list[tuple[str, str, str, str | None]]:
    """The schema this habitus's first `version` migrations create (run on a scratch database)."""
    migrations = store.migrations[:version]
    key = tuple(m.name for m in migrations)
    if key not in _EXPECTED:
        with tempfile.TemporaryDirectory(prefix="habitus-schema-") as scratch:
            blank = Store(Path(scratch) / "expected.sqlite", migrations, label=store.label, wait=store.wait)
            conn = blank.open_write()
            try:
                _EXPECTED[key] = schema_of(conn)
            finally:
                conn.close()
    return _EXPECTED[key]


# -- small file helpers -----------------------------------------------------------------------------


def _read_regular(path: Path, max_bytes: int) -> bytes:
    try:
        data, st = files.read_regular(path, max_bytes)
    except (OSError, ValueError):
        raise _invalid(f"{path}: cannot be read as a regular file") from None
    if st.st_nlink != 1:
        raise _invalid(f"{path}: not a single regular file")
    if len(data) > max_bytes:
        raise _invalid(f"{path}: larger than {max_bytes} bytes")
    return data


def _write_new(path: Path, data: bytes) -> None:
    fd = files.open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _hash_file(path: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            size += len(chunk)
            digest.update(chunk)
    return size, digest.hexdigest()


def remove_tree(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(path)
