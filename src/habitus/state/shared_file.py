"""Files habitus shares with a team (CLAUDE.md, AGENTS.md, GEMINI.md, a Cursor rule): read and replace.

These live in a repository, not in the state root, so they keep their own mode (a new one gets the
usual 0644 less the umask) instead of 0600. The refusals are the state root's: a symbolic link
(`symlink_refused`), a FIFO, device or folder (`special_file_refused`) and a file with more than one
hard link (`hard_link_refused`) are never written, so a write cannot land outside the named file.
Replacement is atomic (a temporary file beside it, fsync, rename, fsync of the folder); when the file
changed between reading and renaming (an editor saved it meanwhile), nothing is written and the caller
gets `io_error`.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from habitus.errors import HabitusError
from habitus.state.files import check_regular, fsync_dir, refuse_symlink, same_file

MAX_BYTES = 1024 * 1024
NEW_FILE_MODE = 0o666  # less the umask, as any editor creates it


@dataclass(frozen=True)
class Shared:
    """A shared file as read: its bytes (empty when absent) and its stat (None when absent)."""

    path: Path
    data: bytes
    st: os.stat_result | None

    @property
    def exists(self) -> bool:
        return self.st is not None


def _too_large(path: Path) -> HabitusError:
    return HabitusError(
        "habits_file_invalid",
        f"{path}: larger than {MAX_BYTES} bytes; nothing was changed",
        hint="a habits file this large is not one a person reviews; split it",
    )


def read_target(path: Path) -> Shared:
    """Read a file export will rewrite: never through a link, never blocking on a FIFO."""
    refuse_symlink(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return Shared(path, b"", None)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            refuse_symlink(path)
        if exc.errno in (errno.EISDIR, errno.ENXIO, errno.ENODEV):
            check_regular(path, os.lstat(path))
        raise HabitusError("io_error", f"{path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        check_regular(path, st)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise _too_large(path)
    return Shared(path, data, st)


def read_source(path: Path) -> bytes:
    """Read a file import was given. Links are followed (a team's CLAUDE.md is often a link to
    AGENTS.md), but a FIFO or device is refused rather than waited on."""
    from habitus.state.files import open_input

    try:
        handle, _ = open_input(path)
    except FileNotFoundError:
        raise HabitusError("not_found", f"{path}: no such file") from None
    except IsADirectoryError:
        raise HabitusError("special_file_refused", f"{path} is a folder, not a habits file") from None
    except OSError as exc:
        raise HabitusError("io_error", f"{path}: {exc.strerror}") from None
    with handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise _too_large(path)
    return data


def replace(before: Shared, data: bytes) -> None:
    """Atomically replace the file read as `before` with data, keeping its mode."""
    path = before.path
    if before.st is not None:
        mode = stat.S_IMODE(before.st.st_mode)
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = NEW_FILE_MODE & ~umask
    if not path.parent.is_dir():
        refuse_symlink(path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.habitus-{os.getpid()}-{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            now = os.lstat(path)
        except FileNotFoundError:
            now = None
        if not same_file(before.st, now):
            raise HabitusError(
                "io_error",
                f"{path}: changed while habitus wrote it; nothing was written",
                hint="run it again",
            )
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(path.parent)
