"""Merge habitus's hooks into a harness's JSON settings file, changing nothing else.

- The file must be a regular file holding one JSON object (or be absent); `hooks`, when present, an
  object in which each event habitus writes is a list of groups, each group an object whose `hooks` is
  a list (other keys under `hooks`, such as Gemini's `enabled`, are left as they are). Anything else
  (unparseable JSON, a comment, another shape, more than MAX_BYTES) is `settings_invalid` (exit 3) and
  a symbolic link is `symlink_refused` (exit 3): the file is left as it is.
- Merge: per event, habitus's handlers already there (found by `is_ours`: any path to habitus, any
  --root) are kept when they are exactly the ones wanted, in order; otherwise they are removed
  (a group left empty goes too) and one group with the wanted handlers is appended. Every other key,
  event, group and handler keeps its place and value. So a second install changes nothing and writes
  nothing.
- Write: the original is first copied to `<name>.habitus-<UTC time>.bak` beside it (same mode, never
  overwriting), then the new text goes to a temporary file in the same folder (fsync) that is renamed
  over the original, keeping its mode (0600 for a new file). If the file changed between reading and
  renaming (the harness saved it meanwhile), the merge starts over from the new contents (3 times at
  most, then `io_error`).
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import time
from pathlib import Path
from typing import Any

from habitus.errors import HabitusError
from habitus.hooks import is_ours

MAX_BYTES = 4 * 1024 * 1024
ATTEMPTS = 3


def _invalid(path: Path, what: str) -> HabitusError:
    return HabitusError(
        "settings_invalid",
        f"{path}: {what}; nothing was changed",
        hint="fix the file, or merge the output of `habitus hooks print` by hand",
    )


def read(path: Path) -> tuple[dict[str, Any] | None, os.stat_result | None, bytes]:
    """The settings object (None when the file does not exist), the file's stat and its bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None, None, b""
    except OSError as exc:
        if os.path.islink(path):
            raise HabitusError(
                "symlink_refused",
                f"{path}: is a symbolic link; habitus does not write through it",
                hint="edit the file it points to, or merge the output of `habitus hooks print` by hand",
            ) from None
        raise HabitusError("io_error", f"{path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _invalid(path, "not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise _invalid(path, f"larger than {MAX_BYTES} bytes")
    if not data.strip():
        return {}, st, data  # an empty file is an empty object
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _invalid(path, "not valid JSON") from None
    if not isinstance(document, dict):
        raise _invalid(path, "not a JSON object")
    return document, st, data


def merge(
    document: dict[str, Any], wanted: dict[str, Any], path: Path
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the merged document, a summary {"added", "removed", "kept"}). `document` is not modified."""
    merged = json.loads(json.dumps(document))
    hooks = merged.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise _invalid(path, "its hooks is not an object")
    summary: dict[str, Any] = {"added": [], "removed": [], "kept": 0}
    wanted_hooks: dict[str, list[dict[str, Any]]] = {
        event: [h for group in groups for h in group["hooks"]] for event, groups in wanted["hooks"].items()
    }
    for event in [*hooks, *(e for e in wanted_hooks if e not in hooks)]:
        groups = hooks.get(event, [])
        if not isinstance(groups, list) or not all(
            isinstance(g, dict) and isinstance(g.get("hooks", []), list) for g in groups
        ):
            if event in wanted_hooks:
                raise _invalid(path, f"hooks.{event} is not a list of groups with a hooks list")
            continue  # not an event habitus writes (Gemini's hooks.enabled, hooks.disabled): untouched
        present = [h for g in groups for h in g.get("hooks", []) if is_ours(h)]
        target = wanted_hooks.get(event, [])
        if present == target:
            summary["kept"] += len(present)
            continue
        remaining = []
        for group in groups:
            handlers = [h for h in group.get("hooks", []) if not is_ours(h)]
            if handlers or not group.get("hooks"):
                remaining.append({**group, "hooks": handlers} if "hooks" in group else group)
        summary["removed"] += [{"event": event, "command": h["command"]} for h in present]
        if target:
            remaining.append({"hooks": target})
            summary["added"] += [{"event": event, "command": h["command"]} for h in target]
        if remaining:
            hooks[event] = remaining
        else:
            hooks.pop(event, None)
    return merged, summary


def _stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def _same_file(a: os.stat_result | None, b: os.stat_result | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.st_ino, a.st_dev, a.st_size, a.st_mtime_ns) == (b.st_ino, b.st_dev, b.st_size, b.st_mtime_ns)


def _current(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _backup(path: Path, data: bytes, mode: int) -> Path:
    for n in range(1, 100):
        name = f"{path.name}.habitus-{_stamp()}" + ("" if n == 1 else f"-{n}") + ".bak"
        target = path.with_name(name)
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
        except FileExistsError:
            continue
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        return target
    raise HabitusError("io_error", f"{path}: no free backup name beside it")


def _write(path: Path, text: bytes, mode: int, before: os.stat_result | None) -> bool:
    """Atomically replace path with text unless it changed since `before`; False when it changed."""
    tmp = path.with_name(f".{path.name}.habitus-{os.getpid()}-{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, mode)
        os.write(fd, text)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        if not _same_file(before, _current(path)):
            os.unlink(tmp)
            return False
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
    return True


def install(path: Path, wanted: dict[str, Any]) -> dict[str, Any]:
    """Merge `wanted` into the settings file at `path`; returns what changed."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    for _ in range(ATTEMPTS):
        document, before, original = read(path)
        merged, summary = merge(document or {}, wanted, path)
        result = {"path": str(path), "created": document is None, "backup": None, **summary}
        if document is not None and merged == document:
            return {**result, "changed": False}
        text = (json.dumps(merged, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        mode = stat.S_IMODE(before.st_mode) if before is not None else 0o600
        if document is not None:
            result["backup"] = str(_backup(path, original, mode))
        if _write(path, text, mode, before):
            return {**result, "changed": True}
    raise HabitusError(
        "io_error", f"{path}: kept changing while habitus merged its hooks", hint="try again in a moment"
    )
