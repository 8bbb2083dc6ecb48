"""errors.jsonl: where hook-mode failures go, since a hook must not print or block on failure.

Bounded: past MAX_BYTES the file is rotated to errors.jsonl.1 (one old generation is kept).
Entries carry the error code and message only: never the request, a prompt or a secret. A message
names fields and files, but it can quote what it refused (a path, a value), so it is redacted too.

Appending takes no lock and never waits: the failure being logged may be a held lock (a restore, a
long analyze), and the hook must still leave at once. One `O_APPEND` write per entry keeps concurrent
hooks' lines whole.
"""

from __future__ import annotations

import os

import orjson

from habitus.errors import HabitusError
from habitus.redact import redact
from habitus.state import files
from habitus.state.clock import utc_now
from habitus.state.root import StateRoot

MAX_BYTES = 256 * 1024


def append(root: StateRoot, error: HabitusError, *, command: str, harness: str | None) -> None:
    files.ensure_dir(root.path)  # not root.ensure(): that joins the state lock, which may be what failed
    path = root.errors
    try:
        if path.stat().st_size > MAX_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
    except FileNotFoundError:
        pass
    entry = {
        "at": utc_now(),
        "command": command,
        "harness": harness,
        "code": error.code,
        "exit": error.exit,
        "message": redact(error.message[:4000])[0][:1000],
    }
    fd = files.open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        os.write(fd, orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE))
    finally:
        os.close(fd)


def count(root: StateRoot) -> int:
    """Number of logged failures in the current errors.jsonl (0 when absent)."""
    try:
        fd = files.open_private(root.errors, os.O_RDONLY)
    except FileNotFoundError:
        return 0
    with os.fdopen(fd, "rb") as handle:
        return sum(1 for line in handle if line.strip())
