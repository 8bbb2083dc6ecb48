"""The state lock and the restore-recovery hook: what every command does before it touches state.

Every command that takes `--root` (see `options.state_options`) calls `enter()` first:

1. If `<root>/.restore/journal.json` exists, a restore was interrupted: `habitus.state.restore` is
   imported (only then) and rolls it back or forward before anything else reads or writes.
   With nothing to recover this is one `lstat`.
2. The command then holds `<root>/locks/state.lock` SHARED for its whole run; `restore` takes it
   EXCLUSIVE while it swaps files. So no command can hold an open connection to a store (or be
   half-way through a read-modify-write of a file) while restore moves that file away: the restore
   waits for running commands, and commands started during the swap wait for it (exit 75 after
   `--wait`).

A read-only command on a root that has no lock file yet creates nothing (it takes no lock: there is
no writer and no restore to exclude). Writers create the lock file: `writing()` is called where state
is created (`StateRoot.ensure`, `Store.open_write`) and takes the shared lock then, if the command
did not already hold it.

The lock is `flock(2)` on one descriptor per root and process (not fasteners, whose POSIX `lockf`
locks are per process and dropped when any descriptor of the file is closed), opened close-on-exec so
that a model program started by a command never inherits it. The OS releases it when the process
dies, so a killed command never blocks a restore. `release_all()` runs when a command ends.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from habitus.errors import HabitusError
from habitus.state import files

RESTORE_DIR = ".restore"
JOURNAL = "journal.json"
LOCK_FILE = "state.lock"

_fds: dict[Path, int] = {}  # root -> descriptor of its state.lock
_modes: dict[Path, int] = {}  # root -> fcntl.LOCK_SH or fcntl.LOCK_EX while held
_entered: dict[Path, float] = {}  # roots this command works on -> its --wait
_maintaining: set[Path] = set()  # roots under restore or recovery: no automatic shared lock


def journal_path(root: Path) -> Path:
    return Path(root) / RESTORE_DIR / JOURNAL


def lock_path(root: Path) -> Path:
    return Path(root) / "locks" / LOCK_FILE


def enter(root: Path, wait: float, *, sweep: bool = True) -> None:
    """Recover an interrupted restore if there is one, then hold the shared state lock (if it exists).
    With `sweep`, also remove the staging copies of a restore that died before its journal."""
    root = Path(root)
    _entered[root] = wait
    _share(root, wait, create=False)
    if sweep and os.path.lexists(root / RESTORE_DIR) and not os.path.lexists(journal_path(root)):
        from habitus.state import restore
        from habitus.state.root import StateRoot

        try:
            restore.sweep(StateRoot(root))
        except (OSError, HabitusError):
            pass  # best effort: verify reports what stays


def writing(folder: Path) -> None:
    """Called where state is created: take the shared lock of `folder` if it is a root this command
    entered and does not hold yet (the root or its lock file did not exist when the command started)."""
    folder = Path(folder)
    wait = _entered.get(folder)
    if wait is None or folder in _modes or folder in _maintaining:
        return
    _share(folder, wait, create=True)


def holds(root: Path) -> str | None:
    """'shared', 'exclusive' or None: what this process holds on root's state lock."""
    mode = _modes.get(Path(root))
    return None if mode is None else ("exclusive" if mode == fcntl.LOCK_EX else "shared")


@contextmanager
def maintenance(root: Path) -> Iterator[None]:
    """Drop this process's shared lock and stop taking it automatically (restore and recovery take
    the restore lock and then the exclusive lock; holding the shared one meanwhile would deadlock)."""
    root = Path(root)
    release(root)
    _maintaining.add(root)
    try:
        yield
    finally:
        _maintaining.discard(root)


@contextmanager
def exclusive(root: Path, wait: float) -> Iterator[None]:
    """Hold the state lock exclusively: every other command has finished and none can start."""
    root = Path(root)
    fd = _open(root, create=True)
    assert fd is not None
    if root in _modes:
        fcntl.flock(fd, fcntl.LOCK_UN)
        del _modes[root]
    _lock(root, fd, fcntl.LOCK_EX, wait)
    try:
        yield
    finally:
        release(root)


def release(root: Path) -> None:
    root = Path(root)
    fd = _fds.pop(root, None)
    _modes.pop(root, None)
    if fd is not None:
        try:
            os.close(fd)  # closing the only descriptor releases the flock
        except OSError:
            pass


def release_all() -> None:
    """End of a command: drop every lock this process holds and forget the roots it entered."""
    for root in list(_fds):
        release(root)
    _entered.clear()
    _maintaining.clear()


# -- internals ----------------------------------------------------------------------------------


def _share(root: Path, wait: float, *, create: bool) -> None:
    for _ in range(5):
        fd = _open(root, create=create)
        if fd is not None and root not in _modes:
            _lock(root, fd, fcntl.LOCK_SH, wait)
        # Checked while holding the shared lock: a journal seen now belongs to a restore that died
        # (a live restore holds the lock exclusively for as long as its journal exists).
        if not os.path.lexists(journal_path(root)):
            return
        release(root)
        from habitus.state import restore  # the heavy path, only when a journal exists
        from habitus.state.root import StateRoot

        restore.recover(StateRoot(root), wait=wait)
    raise HabitusError(
        "state_locked",
        f"{root}: a restore keeps being interrupted; the state lock could not be taken",
        hint="retry, or run `habitus verify`",
    )


def _open(root: Path, *, create: bool) -> int | None:
    fd = _fds.get(root)
    if fd is not None:
        return fd
    path = lock_path(root)
    if create:
        files.ensure_dir(path.parent)
        fd = files.open_private(path, os.O_RDWR | os.O_CREAT)
    else:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise HabitusError("symlink_refused", f"{path} is a symbolic link") from None
            raise HabitusError("io_error", f"{path}: {exc.strerror}") from None
        try:
            files.check_regular(path, os.fstat(fd))
        except BaseException:
            os.close(fd)
            raise
    _fds[root] = fd
    return fd


def _lock(root: Path, fd: int, operation: int, wait: float) -> None:
    deadline = time.monotonic() + max(0.0, wait)
    delay = 0.005
    while True:
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
        except BlockingIOError:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                release(root)
                what = (
                    "a restore is swapping its files"
                    if operation == fcntl.LOCK_SH
                    else "commands are running"
                )
                raise HabitusError(
                    "state_locked",
                    f"{root}: {what} (the state lock is held by another process)",
                    hint="retry, or pass a larger --wait",
                ) from None
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, 0.05)
            continue
        except OSError as exc:
            release(root)
            raise HabitusError("io_error", f"{lock_path(root)}: {exc.strerror}") from None
        _modes[root] = operation
        return
