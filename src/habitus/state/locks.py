"""Inter-process locks: one writer per resource, held with fasteners (fcntl locks die with their process).

A lock that is not acquired within `wait` seconds answers `state_locked` (exit 75). Because the OS
releases fcntl locks when the holder dies, a killed process never leaves a stale lock behind.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from habitus.errors import HabitusError
from habitus.state import files, statelock

if TYPE_CHECKING:
    from habitus.state.root import StateRoot

# The resources that have a single writer (DESIGN.md section 3). Others may be added; names are files.
KNOWN = ("observations", "analyze", "maintenance", "restore", "config", "mutes")
_NAME = re.compile(r"^[a-z][a-z0-9-]{0,40}$")


@contextmanager
def hold(root: StateRoot, name: str, *, wait: float) -> Iterator[None]:
    """Hold the named lock of this state root for the duration of the block."""
    if not _NAME.match(name):
        raise ValueError(f"bad lock name {name!r}")
    import fasteners

    folder = root.ensure_sub("locks")
    statelock.writing(root.path)  # a writer of this root shares the state lock from now on
    path = folder / f"{name}.lock"
    files.create_private(path)  # 0600, and no symlink, FIFO or hard link, before fasteners opens it
    lock = fasteners.InterProcessLock(str(path))
    acquired = lock.acquire(blocking=True, delay=0.005, max_delay=0.05, timeout=max(0.0, wait))
    if not acquired:
        raise HabitusError(
            "state_locked",
            f"the {name} lock of {root.path} is held by another process",
            hint="retry, or pass a larger --wait",
        )
    try:
        yield
    finally:
        lock.release()
