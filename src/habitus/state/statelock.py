"""The state lock: one flock per root and process, SHARED while a command runs, EXCLUSIVE while restore
swaps files.

Every command holds `<root>/locks/state.lock` SHARED for its whole run (`habitus.state.guard.enter`
takes it first); `restore` takes it EXCLUSIVE while it swaps files. So no command can hold an open
connection to a store (or be half-way through a read-modify-write of a file) while restore moves that
file away: the restore waits for running commands, and commands started during the swap wait for it
(exit 75 after `--wait`).

A read-only command on a root that has no lock file yet creates nothing (it takes no lock: there is
no writer and no restore to exclude). Writers create the lock file: `writing()` is called where state
is opened for writing (`Store.open_write`, `locks.hold`) and takes the shared lock then, if the command
did not already hold it.

A journal seen while holding the shared lock belongs to a restore that died: the lock is dropped and
the `recover` function the command entered with (see `guard`) rolls it back or forward. This module
knows nothing of restore itself.

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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from habitus.errors import HabitusError
from habitus.state import files

RESTORE_DIR = ".restore"
JOURNAL = "journal.json"
LOCK_FILE = "state.lock"

_fds: dict[Path, int] = {}  # root -> descriptor of its state.lock
_modes: dict[Path, int] = {}  # root -> fcntl.LOCK_SH or fcntl.LOCK_EX while held
Recover = Callable[[Path, float], None]  # recover(root, wait): roll an interrupted restore back or forward

_entered: dict[Path, tuple[float, Recover]] = {}  # roots this command works on -> its --wait, recovery
_maintaining: set[Path] = set()  # roots under restore or recovery: no automatic shared lock


def journal_path(root: Path) -> Path:
    return Path(root) / RESTORE_DIR / JOURNAL


def lock_path(root: Path) -> Path:
    return Path(root) / "locks" / LOCK_FILE


def enter(root: Path, wait: float, *, recover: Recover) -> None:
    """Hold the shared state lock of root (if its lock file exists), recovering with `recover` a restore
    that died; remember root so that `writing()` takes the lock once the command creates it."""
    root = Path(root)
    _entered[root] = (wait, recover)
    _share(root, wait, recover, create=False)


def writing(folder: Path) -> None:
    """Called where state is created: take the shared lock of `folder` if it is a root this command
    entered and does not hold yet (the root or its lock file did not exist when the command started)."""
    folder = Path(folder)
    entered = _entered.get(folder)
    if entered is None or folder in _modes or folder in _maintaining:
        return
    wait, recover = entered
    _share(folder, wait, recover, create=True)


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


def _share(root: Path, wait: float, recover: Recover, *, create: bool) -> None:
    for _ in range(5):
        fd = _open(root, create=create)
        if fd is not None and root not in _modes:
            _lock(root, fd, fcntl.LOCK_SH, wait)
        # Checked while holding the shared lock: a journal seen now belongs to a restore that died
        # (a live restore holds the lock exclusively for as long as its journal exists).
        if not os.path.lexists(journal_path(root)):
            return
        release(root)
        recover(root, wait)
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
