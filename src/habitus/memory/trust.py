"""Which project memory stores this user trusts: only those are read into an agent's context.

A project store (`<repo>/.habitus/memory.sqlite`) can arrive with a clone, and its author's words would
then reach your agent verbatim at session start. So a project store is read by `index`, `retrieve` and
`recall` only when the state root (outside any repository) records it as trusted:

- habitus trusts a project store it creates here, and keeps trusting it after its own writes;
- `habitus memory trust [--project DIR]` trusts the store as it is now (after you have looked at it,
  e.g. with `memory export --store project`); `--revoke` forgets it;
- anything else, a store that came with a clone or one whose file changed since it was trusted (by
  `git pull`, a copy, another program), is untrusted: `index` leaves it out (and says so outside hook
  mode), `retrieve --both` skips it, and naming it (`--store project`) is refused with `untrusted`.

The record is `<root>/memory-trust.json` (0600, never backed up): per real path of a store, the
SHA-256 of its database file and of its `-wal` file (absent when there is none), and the files'
inode, size and change times. A store whose stat is unchanged is trusted without reading it; one
whose stat changed is hashed and trusted only when the hashes still match. Hashing takes about a
millisecond per megabyte; it happens after each habitus write to a trusted project store.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from habitus import codec
from habitus.errors import HabitusError
from habitus.state import files, locks
from habitus.state.clock import utc_now
from habitus.state.root import StateRoot

FILE = "memory-trust.json"
MAX_BYTES = 1024 * 1024
MAX_STORES = 2000
LOCK = "memory-trust"
HINT = "look at it (`habitus memory export --store project`), then `habitus memory trust`"


@dataclass(frozen=True)
class Verdict:
    trusted: bool
    reason: str | None = None  # untrusted (never trusted here) | changed (since it was trusted)

    def describe(self) -> dict[str, Any]:
        if self.trusted:
            return {"trusted": True}
        return {"trusted": False, "reason": self.reason, "hint": HINT}


def key(path: Path) -> str:
    return os.path.realpath(path)


def _stat(path: Path) -> dict[str, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return {"ino": st.st_ino, "dev": st.st_dev, "size": st.st_size,
            "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns}  # fmt: skip


def _digest(path: Path) -> str | None:
    hasher = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                hasher.update(block)
    except FileNotFoundError:
        return None
    return hasher.hexdigest()


def _sidecar(path: Path) -> Path:
    return Path(f"{path}-wal")


def _wal_stat(path: Path) -> dict[str, int] | None:
    """The write-ahead log's stat, None when it is absent or empty (a reader may leave an empty one;
    only its frames change what the database holds)."""
    found = _stat(_sidecar(path))
    return None if found is None or found["size"] == 0 else found


def _wal_digest(path: Path) -> str | None:
    return None if _wal_stat(path) is None else _digest(_sidecar(path))


def fingerprint(path: Path) -> dict[str, Any]:
    """What trusting the store records: hashes and stats of the database and its write-ahead log."""
    return {
        "sha256": _digest(path),
        "stat": _stat(path),
        "wal_sha256": _wal_digest(path),
        "wal_stat": _wal_stat(path),
    }


def _load(root: StateRoot) -> dict[str, Any]:
    path = root.path / FILE
    try:
        data = files.read_bytes(path, MAX_BYTES)
    except FileNotFoundError:
        return {}
    try:
        table = codec.loads(data)
    except Exception:
        raise HabitusError("state_corrupt", f"{path}: not a JSON object of trusted stores") from None
    stores = table.get("stores") if isinstance(table, dict) else None
    if not isinstance(stores, dict) or not all(isinstance(v, dict) for v in stores.values()):
        raise HabitusError("state_corrupt", f"{path}: not a JSON object of trusted stores")
    return stores


def check(root: StateRoot, path: Path) -> Verdict:
    """Whether this project store may be read into an agent's context (see the module doc)."""
    if not root.path.is_dir():
        return Verdict(False, "untrusted")
    entry = _load(root).get(key(path))
    if entry is None:
        return Verdict(False, "untrusted")
    if entry.get("stat") == _stat(path) and entry.get("wal_stat") == _wal_stat(path):
        return Verdict(True)
    if entry.get("sha256") == _digest(path) and entry.get("wal_sha256") == _wal_digest(path):
        return Verdict(True)
    return Verdict(False, "changed")


def record(root: StateRoot, path: Path, *, how: str, wait: float = 5.0) -> dict[str, Any]:
    """Trust the store as it is now (how: created | written | trusted)."""
    with locks.hold(root, LOCK, wait=wait):
        stores = _load(root)
        entry = {**fingerprint(path), "how": how, "at": utc_now()}
        stores[key(path)] = entry
        if len(stores) > MAX_STORES:  # forget the oldest records first
            for stale in sorted(stores, key=lambda k: str(stores[k].get("at")))[: len(stores) - MAX_STORES]:
                del stores[stale]
        files.atomic_write(root.path / FILE, codec.canonical({"v": 1, "stores": stores}))
    return entry


def revoke(root: StateRoot, path: Path, *, wait: float = 5.0) -> bool:
    """Forget the store; True when it was trusted."""
    if not (root.path / FILE).exists():
        return False
    with locks.hold(root, LOCK, wait=wait):
        stores = _load(root)
        if stores.pop(key(path), None) is None:
            return False
        files.atomic_write(root.path / FILE, codec.canonical({"v": 1, "stores": stores}))
    return True


def untrusted_error(path: Path, verdict: Verdict) -> HabitusError:
    why = "changed since you trusted it" if verdict.reason == "changed" else "was not created by you here"
    return HabitusError("untrusted", f"{path}: this project memory store {why}; it is not read", hint=HINT)
