"""Private files: 0600 files in 0700 folders, no symlinks, atomic replacement.

Every state file habitus writes goes through here, so permissions and symlink refusal hold everywhere
whatever the umask is. A state file must be a regular file with one link: a FIFO would hang the
command that opens it (opens never block here), and a hard link would carry writes outside the root.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path
from typing import BinaryIO

from habitus.errors import HabitusError

FILE_MODE = 0o600
DIR_MODE = 0o700


def refuse_symlink(path: Path) -> None:
    """Raise `symlink_refused` when path exists as a symbolic link."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise HabitusError("io_error", f"{path}: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        raise HabitusError(
            "symlink_refused",
            f"{path} is a symbolic link; habitus refuses to follow links inside its state",
            hint="replace the link with a regular file or folder",
        )


def check_regular(path: Path, st: os.stat_result) -> None:
    """Raise unless st (of path) is a regular file with exactly one link."""
    if not stat.S_ISREG(st.st_mode):
        kind = (
            "a folder"
            if stat.S_ISDIR(st.st_mode)
            else "a FIFO"
            if stat.S_ISFIFO(st.st_mode)
            else "a socket"
            if stat.S_ISSOCK(st.st_mode)
            else "a device"
            if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
            else "not a regular file"
        )
        raise HabitusError(
            "special_file_refused",
            f"{path} is {kind}; habitus keeps its state in regular files only",
            hint="move it away; habitus recreates what it needs",
        )
    if st.st_nlink != 1:
        raise HabitusError(
            "hard_link_refused",
            f"{path} has {st.st_nlink} hard links; writing it would change a file outside the state root",
            hint="replace it with a copy (cp) of its own",
        )


def refuse_unsafe(path: Path) -> None:
    """For files that another library opens (SQLite, the lock library): refuse a symlink, a special
    file or a hard link at path before it is opened; a missing file is fine."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise HabitusError("io_error", f"{path}: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        refuse_symlink(path)
    check_regular(path, st)


def ensure_dir(path: Path) -> Path:
    """Create path (and any missing parents) as 0700 folders; refuse a symlinked folder.

    Existing folders inside the state root are tightened to 0700 rather than trusted as they are.
    """
    path = Path(path)
    missing: list[Path] = []
    probe = path
    while not probe.exists() and not probe.is_symlink():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:
            pass
        except OSError as exc:
            raise HabitusError("io_error", f"{folder}: cannot create folder: {exc.strerror}") from None
    refuse_symlink(path)
    if not path.is_dir():
        raise HabitusError("io_error", f"{path}: exists and is not a folder")
    _tighten(path, DIR_MODE)
    return path


def _tighten(path: Path, mode: int) -> None:
    try:
        st = os.stat(path, follow_symlinks=False)
        if stat.S_IMODE(st.st_mode) != mode and st.st_uid == os.getuid():
            os.chmod(path, mode)
    except OSError:
        pass


def open_private(path: Path, flags: int) -> int:
    """os.open that never follows a final symlink, never blocks (a FIFO), refuses anything but a
    regular file with one link, and creates files 0600 regardless of umask."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, FILE_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise HabitusError(
                "symlink_refused", f"{path} is a symbolic link; habitus refuses to follow it"
            ) from None
        if exc.errno in (errno.ENXIO, errno.EISDIR, errno.ENODEV):  # a FIFO with no reader, a folder
            refuse_unsafe(path)
        raise
    try:
        st = os.fstat(fd)
        check_regular(path, st)
        if stat.S_IMODE(st.st_mode) != FILE_MODE and st.st_uid == os.getuid():
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def create_private(path: Path) -> bool:
    """Create an empty 0600 file if it does not exist. Returns True when this call created it."""
    try:
        fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        refuse_unsafe(path)  # whoever opens it next may block on a FIFO or write through a link
        return False
    os.close(fd)
    return True


def read_bytes(path: Path, max_bytes: int) -> bytes:
    """Read a private file, refusing symlinks and anything larger than max_bytes."""
    fd = open_private(path, os.O_RDONLY)
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise HabitusError("state_corrupt", f"{path}: larger than {max_bytes} bytes")
    return data


def read_regular(path: Path, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """Read up to max_bytes + 1 bytes of a regular file, changing nothing: no final symlink followed
    (OSError ELOOP), no blocking on a FIFO, no mode tightened (unlike read_bytes). Raises ValueError
    when path is not a regular file. Returns the bytes and the file's stat."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(max_bytes + 1), st
    finally:
        os.close(fd)


def open_input(path: Path) -> tuple[BinaryIO, os.stat_result]:
    """Open a file the user named (a transcript: links are followed) for reading without ever
    blocking: a FIFO or device answers `special_file_refused` instead of waiting for a writer."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise HabitusError("special_file_refused", f"{path} is not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), st
    except BaseException:
        os.close(fd)
        raise


def same_file(a: os.stat_result | None, b: os.stat_result | None) -> bool:
    """Whether two stats (None: absent) are of the same unchanged file: inode, device, size, mtime."""
    if a is None or b is None:
        return a is b
    return (a.st_ino, a.st_dev, a.st_size, a.st_mtime_ns) == (b.st_ino, b.st_dev, b.st_size, b.st_mtime_ns)


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace path with data so that readers see the old or the new file, never a mix.

    Temp file in the same folder (0600, O_EXCL), fsync, rename over the target, fsync the folder.
    """
    path = Path(path)
    refuse_symlink(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        with os.fdopen(fd, "wb", closefd=False) as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        os.close(fd)
        _unlink_quietly(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    fsync_dir(path.parent)


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
