"""What a state root contains, and how each item is backed up, validated, restored and verified.

This is the one list `backup`, `restore` and `verify` work from, and the allowlist of names a backup may
hold. Every top-level name in a state root is either an item here (backed up and restored), excluded
here (with the reason the result and the man page give), or reported by `verify` as unknown.

State knows the names; the domains know what their content must look like. A domain check plugs in by
registration (`habitus.checks.register()` does it for backup, restore and verify; nothing here imports
a domain):

- a plain file's content check:  register_file_check("mutes.json", check)
  where the check is `fn(data: bytes, where: str) -> None`, raising HabitusError when data is invalid
  (restore refuses such a backup; verify reports `file_invalid`);
- a verifier:                    register(Verifier("ledger.sqlite", fn))
  where the function is `fn(check: Check) -> Iterable[dict]`: each dict one issue with a stable
  `code` (plus optional `message`, `count`, `ids`); `check.conn` is a read-only connection for a store
  item (None for a folder such as "observations"). Verifiers never write.

An item in REGISTERED must have its check registered before it is used: backup, restore and verify
fail instead of skipping a domain's check. State's own stores and checks are named here by
"module:function" (imported only when used): StoreItem("ledger.sqlite", "habitus.state.ledger:store").

The observation log's owner implements `start_observation_generation` below (restore calls it).
"""

from __future__ import annotations

import importlib
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.errors import HabitusError

if TYPE_CHECKING:
    from habitus.state.db import Store
    from habitus.state.root import StateRoot

MAX_STORE_BYTES = 64 * 1024**3
SIDECARS = ("-wal", "-shm", "-journal")  # SQLite's own files next to a store; they move with it


@dataclass(frozen=True)
class StoreItem:
    name: str
    factory: str  # "module:function": fn(root, *, wait) -> Store for <root>/<name>
    max_bytes: int = MAX_STORE_BYTES
    kind: str = "sqlite"

    def store(self, root: StateRoot, *, wait: float) -> Store:
        store = resolve(self.factory)(root, wait=wait)
        if Path(store.path) != root.path / self.name:
            raise ValueError(f"inventory: {self.factory} does not open {self.name}")
        return store

    def names(self) -> tuple[str, ...]:
        """The file names this item occupies in the root: the database and its sidecars."""
        return (self.name, *(self.name + suffix for suffix in SIDECARS))


@dataclass(frozen=True)
class FileItem:
    name: str
    max_bytes: int
    check: str | None = None  # state's own check, "module:function": fn(data: bytes, where: str) -> None
    kind: str = "file"

    def validate(self, data: bytes, where: str) -> None:
        if len(data) > self.max_bytes:
            raise HabitusError("state_corrupt", f"{where}: larger than {self.max_bytes} bytes")
        if self.check:
            resolve(self.check)(data, where)
        if self.name in REGISTERED:
            _registered(self.name, _file_checks.get(self.name))(data, where)

    def names(self) -> tuple[str, ...]:
        return (self.name,)


@dataclass(frozen=True)
class Excluded:
    name: str
    reason: str


@dataclass(frozen=True)
class Verifier:
    item: str  # the inventory name it checks: a StoreItem's, or a folder such as "observations"
    ref: str | Callable[[Check], Iterable[dict[str, Any]]]  # the function, or "module:function"


@dataclass
class Check:
    """What a verifier gets: the root, the item's path, and a read-only connection for a store."""

    root: StateRoot
    item: str
    path: Path
    wait: float
    conn: sqlite3.Connection | None = None


# -- the registry -------------------------------------------------------------------------------

STORES: tuple[StoreItem, ...] = (
    StoreItem("ledger.sqlite", "habitus.state.ledger:store"),
    StoreItem("memory.sqlite", "habitus.state.memory_store:root_store"),
)

FILES: tuple[FileItem, ...] = (
    FileItem("config.toml", 1024 * 1024, "habitus.state.inventory:check_config"),
    FileItem("law.md", 1024 * 1024, "habitus.state.inventory:check_text"),
    FileItem("mutes.json", 4 * 1024 * 1024),
)

# Items whose owner registers its checks (a store's verifier, a file's content check): the ledger's
# row checksums and audit chain, the memory store's FTS rows, the mutes file's format.
REGISTERED = ("ledger.sqlite", "memory.sqlite", "mutes.json")

EXCLUDED: tuple[Excluded, ...] = (
    Excluded(
        "observations",
        "raw observation text (and its archive/) is never backed up, for privacy; "
        "a restore starts a fresh observation generation instead",
    ),
    Excluded("models", "embedding models you added are large files; add them again with `habitus model add`"),
    Excluded("errors.jsonl", "hook-mode failure log: diagnostics of this machine"),
    Excluded("errors.jsonl.1", "hook-mode failure log (rotated)"),
    Excluded("locks", "inter-process locks of this machine"),
    Excluded(
        "memory-trust.json",
        "which project memory stores of this machine you trust; trust them again with `habitus memory trust`",
    ),
    Excluded("worker.sock", "the warm worker's socket while it runs (habitus worker status)"),
    Excluded(".restore", "a restore's journal and staging area while it runs"),
)

VERIFIERS: tuple[Verifier, ...] = (Verifier("observations", "habitus.state.observations:verifier"),)

_verifiers: list[Verifier] = []  # registered by the domains
_file_checks: dict[str, Callable[[bytes, str], None]] = {}


def register(verifier: Verifier) -> None:
    """Add a domain's verifier (once: registering the same function again changes nothing)."""
    if verifier not in _verifiers:
        _verifiers.append(verifier)


def register_file_check(name: str, check: Callable[[bytes, str], None]) -> None:
    _file_checks[name] = check


def start_observation_generation(root: StateRoot, *, wait: float) -> dict[str, Any]:
    """Restore calls this after installing the restored files, under the exclusive state lock, before it
    commits: the current observation generation moves into archive/ (still readable by analyze until it
    expires) and a fresh one starts, so the restored ledger's watermarks never point into observations
    written after the backup. Idempotent: an absent or empty log is left as it is."""
    from habitus.state import observations

    return observations.start_new_generation(root, wait=wait)


# -- lookups ------------------------------------------------------------------------------------


def items() -> tuple[StoreItem | FileItem, ...]:
    return (*STORES, *FILES)


def item(name: object) -> StoreItem | FileItem | None:
    """The item of that exact name (None for anything else, including non-strings)."""
    return next((i for i in items() if isinstance(name, str) and i.name == name), None)


def known_names() -> set[str]:
    """Every top-level name a state root may hold: items with their sidecars, and excluded names."""
    names = {n for i in items() for n in i.names()}
    return names | {e.name for e in EXCLUDED}


def verified() -> set[str]:
    """The names some verifier checks (folders such as "observations" included)."""
    return {v.item for v in (*VERIFIERS, *_verifiers)}


def verifiers(name: str) -> list[Callable[[Check], Iterable[dict[str, Any]]]]:
    """The verifiers of one item: state's own, then those the domains registered."""
    own = [v for v in VERIFIERS if v.item == name]
    registered = [v for v in _verifiers if v.item == name]
    if name in REGISTERED:
        _registered(name, registered or None)
    return [resolve(v.ref) if isinstance(v.ref, str) else v.ref for v in (*own, *registered)]


def _registered(name: str, found: Any) -> Any:
    """found, or a refusal: a domain check left unregistered must not pass as a clean item."""
    if found is None:
        raise RuntimeError(f"inventory: no check registered for {name} (call habitus.checks.register())")
    return found


def resolve(ref: str) -> Callable[..., Any]:
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)  # type: ignore[no-any-return]


# -- checks for the plain files ------------------------------------------------------------------


def _text(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise HabitusError("state_corrupt", f"{where}: not valid UTF-8") from None


def check_config(data: bytes, where: str) -> None:
    """config.toml must parse and hold only valid values (else every command would refuse it)."""
    import tomllib

    from habitus.state import config

    try:
        table = tomllib.loads(_text(data, where))
    except tomllib.TOMLDecodeError:
        raise HabitusError("config_invalid", f"{where}: not valid TOML") from None
    config.validate(table, origin=where)


def check_text(data: bytes, where: str) -> None:
    if "\x00" in _text(data, where):
        raise HabitusError("state_corrupt", f"{where}: holds NUL characters")
