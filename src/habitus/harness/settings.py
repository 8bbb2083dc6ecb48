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
from habitus.harness.plan import is_ours
from habitus.state.files import same_file

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
        if not same_file(before, _current(path)):
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


def strip(document: dict[str, Any], path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the document without habitus's handlers, a summary {"removed", "left"}). `document` is kept.

    A group left empty by the removal goes, an event left empty goes, and so does `hooks` when it was
    emptied (install adds all three when they are missing). Handlers that mention habitus but are not
    commands habitus writes (the user changed them into something else) are listed in "left" and kept.
    """
    stripped = json.loads(json.dumps(document))
    summary: dict[str, Any] = {"removed": [], "left": []}
    hooks = stripped.get("hooks")
    if hooks is None:
        return stripped, summary
    if not isinstance(hooks, dict):
        raise _invalid(path, "its hooks is not an object")
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list) or not all(
            isinstance(g, dict) and isinstance(g.get("hooks", []), list) for g in groups
        ):
            continue  # not an event list (Gemini's hooks.enabled): habitus never wrote there
        remaining = []
        for group in groups:
            handlers = group.get("hooks", [])
            mine = [h for h in handlers if is_ours(h)]
            summary["removed"] += [{"event": event, "command": h["command"]} for h in mine]
            summary["left"] += [
                {"event": event, "command": h["command"]}
                for h in handlers
                if not is_ours(h) and isinstance(h, dict) and "habitus" in str(h.get("command", ""))
            ]
            if not mine:
                remaining.append(group)
            elif len(mine) < len(handlers):
                remaining.append({**group, "hooks": [h for h in handlers if not is_ours(h)]})
        if len(remaining) == len(groups) and remaining == groups:
            continue
        if remaining:
            hooks[event] = remaining
        else:
            del hooks[event]
    if not hooks and summary["removed"]:
        del stripped["hooks"]
    return stripped, summary


def _same(a: Any, b: Any) -> bool:
    """Equal, key order included (the order a person or a harness wrote them in is part of the file)."""
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


def _order(name: str, prefix: str) -> tuple[str, int]:
    """A backup's (UTC stamp, counter) from its name, so the newest of one second sorts last."""
    stem = name[len(prefix) : -len(".bak")]
    stamp, _, n = stem.partition("-")
    return stamp, int(n) if n.isdigit() else 1


def _original(path: Path, wanted: list[dict[str, Any]]) -> tuple[Path, bytes] | None:
    """The newest backup beside `path` that holds exactly one of `wanted`: its bytes are the file as it
    was, with its own formatting, before habitus merged its hooks into it."""
    prefix = f"{path.name}.habitus-"
    try:
        names = [n for n in os.listdir(path.parent) if n.startswith(prefix) and n.endswith(".bak")]
    except OSError:
        return None
    found = []
    for name in names:
        candidate = path.with_name(name)
        try:
            document, st, data = read(candidate)
        except HabitusError:
            continue
        if document is not None and st is not None and any(_same(document, w) for w in wanted):
            found.append((_order(name, prefix), st.st_mtime_ns, candidate, data))
    if not found:
        return None
    _, _, candidate, data = max(found)
    return candidate, data


def _delete(path: Path, before: os.stat_result) -> bool:
    """Remove path unless it changed since `before`; False when it changed."""
    if not same_file(before, _current(path)):
        return False
    os.unlink(path)
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
    return True


def uninstall(path: Path) -> dict[str, Any]:
    """Remove habitus's handlers from the settings file at `path`; returns what changed.

    When what is left is exactly what a backup beside the file holds (the file as it was before an
    install), that backup's bytes are written back, so install then uninstall leaves the file byte for
    byte as it was; when what is left is empty and no backup holds it (install created the file), the
    file is removed. Otherwise the rest is written as install writes it. The current file is backed up
    first either way.
    """
    for _ in range(ATTEMPTS):
        document, before, original = read(path)
        result: dict[str, Any] = {"path": str(path), "backup": None, "restored": None, "deleted": False}
        if document is None or before is None:
            return {**result, "changed": False, "removed": [], "left": []}
        stripped, summary = strip(document, path)
        result.update(summary)
        if not summary["removed"]:
            return {**result, "changed": False}
        mode = stat.S_IMODE(before.st_mode)
        # The file before install may have held an empty hooks object that the removal dropped.
        wanted = [stripped]
        if "hooks" not in stripped:
            wanted.append({k: stripped.get(k, {}) for k in document})
        backup = _original(path, wanted)
        result["backup"] = str(_backup(path, original, mode))
        if backup is not None:
            result["restored"] = str(backup[0])
            done = _write(path, backup[1], mode, before)
        elif not stripped:
            result["deleted"] = True
            done = _delete(path, before)
        else:
            text = (json.dumps(stripped, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
            done = _write(path, text, mode, before)
        if done:
            return {**result, "changed": True}
        os.unlink(result["backup"])  # the file changed meanwhile: start over from its new contents
    raise HabitusError(
        "io_error", f"{path}: kept changing while habitus removed its hooks", hint="try again in a moment"
    )
