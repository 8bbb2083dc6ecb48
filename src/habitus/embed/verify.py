"""Verify model files (size and SHA-256) before first use, remembering success across processes.

The stamp `<root>/models/verified.json` maps each verified file's absolute path to the stat identity
it had when hashed (size, mtime_ns, ctime_ns, inode, device) and the digest it matched. A later
process skips hashing only when all of these still match exactly and the digest is the one expected
now; anything else re-hashes. The stamp is a cache: unreadable or tampered stamps are ignored
(re-hash), never trusted, and it is written only into a state root that already exists.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from habitus import codec
from habitus.embed.registry import FileSpec
from habitus.errors import HabitusError
from habitus.state import files
from habitus.state.root import StateRoot

STAMP = "verified.json"
MAX_STAMP_BYTES = 256 * 1024


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp_path(root: StateRoot) -> Path:
    return root.models / STAMP


def _read_stamp(root: StateRoot) -> dict[str, Any]:
    try:
        data = codec.loads(files.read_bytes(_stamp_path(root), MAX_STAMP_BYTES))
        entries = data["entries"]
        if data.get("checksum") != codec.checksum(entries) or not isinstance(entries, dict):
            return {}
        return entries
    except (OSError, HabitusError, ValueError, KeyError, TypeError):
        return {}


def _write_stamp(root: StateRoot, entries: dict[str, Any]) -> None:
    if not root.exists():
        return  # never create a state root just to cache a hash
    try:
        root.ensure_sub("models")
        body = {"v": 1, "entries": entries, "checksum": codec.checksum(entries)}
        files.atomic_write(_stamp_path(root), codec.canonical(body))
    except (OSError, HabitusError):
        pass  # a cache that cannot be written only costs a re-hash next time


def verify(root: StateRoot, specs: tuple[FileSpec, ...], *, label: str) -> int:
    """Check every file's size and SHA-256; returns how many files were actually hashed.

    Raises `model_unavailable` for a missing or symlinked file and `checksum_mismatch` for a file
    whose size or digest differs from what was pinned or recorded."""
    stamp = _read_stamp(root)
    changed = False
    hashed = 0
    for spec in specs:
        key = str(spec.path)
        try:
            st = os.stat(spec.path, follow_symlinks=False)
        except FileNotFoundError:
            raise HabitusError(
                "model_unavailable", f"{spec.path}: missing file of embedding model {label}"
            ) from None
        if os.path.islink(spec.path):
            raise HabitusError("symlink_refused", f"{spec.path} is a symbolic link")
        if st.st_size != spec.size:
            raise HabitusError(
                "checksum_mismatch",
                f"{spec.path}: size differs from the one recorded for embedding model {label}",
                hint="reinstall the package or re-add the model",
            )
        entry = stamp.get(key)
        if entry == {"stat": _identity(st), "sha256": spec.sha256}:
            continue
        hashed += 1
        if _hash(spec.path) != spec.sha256:
            raise HabitusError(
                "checksum_mismatch",
                f"{spec.path}: SHA-256 differs from the one recorded for embedding model {label}",
                hint="the file was changed or damaged; reinstall the package or re-add the model",
            )
        if _identity(os.stat(spec.path, follow_symlinks=False)) == _identity(st):  # unchanged meanwhile
            stamp[key] = {"stat": _identity(st), "sha256": spec.sha256}
            changed = True
    if changed:
        # Bounded: keep the entries of files that still exist.
        stamp = {k: v for k, v in stamp.items() if os.path.exists(k)}
        _write_stamp(root, stamp)
    return hashed
