"""Mutes: findings the user never wants delivered again. User data in `<root>/mutes.json`.

    {"version": 1, "mutes": [{"id": "<64-hex finding hash>", "label": "...", "at": "2026-..."}]}

- Written atomically (temp file, fsync, rename) under the `mutes` lock, after checking that the file did
  not change since it was read (a writer outside habitus, such as an editor, makes the write start over
  from the new contents, so nobody's mute is lost). At most MAX_MUTES entries; the file is never
  rewritten by anything but `mute`/`unmute`, so an upgrade or downgrade keeps it.
- Fail closed: a malformed file (bad JSON, another version, a bad entry, too large, a symlink) is never
  overwritten, and while it is malformed no review runs (a muted finding must never be delivered):
  `load` raises `state_corrupt` (exit 3; silent in hook mode) with a hint to repair or remove it.
- Mute IDs are hex prefixes (at least MIN_PREFIX digits) of a finding hash, resolved against the
  findings delivered most recently (mute) or against the mutes themselves (unmute): exactly one match
  acts, none is `not_found`, several is `ambiguous` with the candidates listed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from habitus import codec
from habitus.errors import HabitusError
from habitus.state import files, locks
from habitus.state.root import StateRoot

FILE = "mutes.json"
VERSION = 1
MAX_MUTES = 256
MAX_BYTES = 256 * 1024
MIN_PREFIX = 6
SHOW_PREFIX = 8
_HASH = re.compile(r"^[0-9a-f]{64}$")
_PREFIX = re.compile(r"^[0-9a-f]{6,64}$")


@dataclass
class Mutes:
    entries: list[dict[str, str]]
    fingerprint: str | None  # sha256 of the bytes read; None when the file is absent

    @property
    def ids(self) -> set[str]:
        return {e["id"] for e in self.entries}


def path(root: StateRoot) -> Any:
    return root.path / FILE


def _bad(where: str, what: str) -> HabitusError:
    return HabitusError(
        "state_corrupt",
        f"{where}: {what}",
        hint="advise delivers nothing until it is repaired; fix or remove the file "
        "(removing it unmutes everything)",
    )


def parse(data: bytes, where: str) -> list[dict[str, str]]:
    """The entries of a mutes file, or state_corrupt."""
    if len(data) > MAX_BYTES:
        raise _bad(where, f"larger than {MAX_BYTES} bytes")
    try:
        value = codec.loads(data)
    except ValueError:
        raise _bad(where, "not valid JSON") from None
    if (
        not isinstance(value, dict)
        or value.get("version") != VERSION
        or not isinstance(value.get("mutes"), list)
    ):
        raise _bad(where, f'expected {{"version": {VERSION}, "mutes": [...]}}')
    entries = value["mutes"]
    if len(entries) > MAX_MUTES:
        raise _bad(where, f"more than {MAX_MUTES} mutes")
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("id"), str)
            or not _HASH.match(entry["id"])
            or not isinstance(entry.get("label", ""), str)
            or len(entry.get("label", "")) > 128
            or not isinstance(entry.get("at", ""), str)
            or entry["id"] in seen
        ):
            raise _bad(where, f"mutes[{index}] is not a valid entry")
        seen.add(entry["id"])
    return [{"id": e["id"], "label": e.get("label", ""), "at": e.get("at", "")} for e in entries]


def check_file(data: bytes, where: str) -> None:
    """Validate mutes.json bytes (for backup and restore)."""
    parse(data, where)


def load(root: StateRoot) -> Mutes:
    """The mutes in force. A missing file (or state root) is no mutes; a malformed one is state_corrupt."""
    target = path(root)
    try:
        data = files.read_bytes(target, MAX_BYTES)
    except FileNotFoundError:
        return Mutes([], None)
    except HabitusError as exc:
        if exc.code == "symlink_refused":
            raise _bad(str(target), "is a symbolic link") from None
        if exc.code in ("special_file_refused", "hard_link_refused"):
            raise
        raise _bad(str(target), f"larger than {MAX_BYTES} bytes") from None
    return Mutes(parse(data, str(target)), hashlib.sha256(data).hexdigest())


def _encode(entries: list[dict[str, str]]) -> bytes:
    import orjson

    return orjson.dumps({"version": VERSION, "mutes": entries}, option=orjson.OPT_INDENT_2) + b"\n"


def change(root: StateRoot, finding: str, *, label: str | None, wait: float) -> bool:
    """Add (label given) or remove (label None) one mute. Returns whether the file changed."""
    from habitus.state.clock import utc_now

    root.ensure()
    with locks.hold(root, "mutes", wait=wait):
        for _ in range(5):
            current = load(root)
            entries = [e for e in current.entries if e["id"] != finding]
            if label is not None:
                if len(entries) >= MAX_MUTES:
                    raise HabitusError(
                        "refused", f"{path(root)} already holds {MAX_MUTES} mutes", hint="unmute some first"
                    )
                entries.append({"id": finding, "label": label, "at": utc_now()})
            if label is None and len(entries) == len(current.entries):
                return False
            if label is not None and finding in current.ids:
                return False
            if load(root).fingerprint != current.fingerprint:
                continue  # someone else wrote meanwhile: start over from their version
            files.atomic_write(path(root), _encode(entries))
            return True
    raise HabitusError("state_locked", f"{path(root)} keeps changing while being written", hint="retry")


def mute(root: StateRoot, prefix: str, *, wait: float) -> dict[str, Any]:
    """Mute the recently delivered finding that `prefix` names (the `advise mute` result)."""
    from habitus.advise import store

    check_prefix(prefix)
    load(root)  # a broken mutes file is refused before anything else
    with store.reading(root, wait=wait) as conn:
        recent = store.recent_findings(conn) if conn is not None else []
    found = resolve(prefix, recent, among="recent finding")
    changed = change(root, found["finding"], label=found["label"], wait=wait)
    return _entry(found["finding"], found["label"], changed)


def unmute(root: StateRoot, prefix: str, *, wait: float) -> dict[str, Any]:
    """Unmute the muted finding that `prefix` names (the `advise unmute` result)."""
    found = resolve(prefix, load(root).entries, among="mute")
    changed = change(root, found["id"], label=None, wait=wait)
    return _entry(found["id"], found["label"], changed)


def _entry(finding: str, label: str, changed: bool) -> dict[str, Any]:
    return {"id": finding[:8], "finding": finding, "label": label, "changed": changed}


def listing(root: StateRoot) -> dict[str, Any]:
    """The muted findings, each with the shortest prefix that names it (the `advise mutes` result)."""
    entries = load(root).entries
    hashes = [e["id"] for e in entries]
    items = [
        {"id": shortest_unique(e["id"], hashes), "finding": e["id"], "label": e["label"], "at": e["at"]}
        for e in entries
    ]
    return {"items": items, "count": len(items)}


def check_prefix(prefix: str) -> str:
    prefix = prefix.strip().lower()
    if not _PREFIX.match(prefix):
        raise HabitusError(
            "usage", f"ID: expected {MIN_PREFIX} to 64 hex digits (a finding's ID as advise shows it)"
        )
    return prefix


def resolve(prefix: str, candidates: list[dict[str, Any]], *, among: str) -> dict[str, Any]:
    """The one candidate (dicts with "finding" or "id", and "label") whose hash starts with prefix."""
    prefix = check_prefix(prefix)
    matches = [c for c in candidates if (c.get("finding") or c.get("id", "")).startswith(prefix)]
    if not matches:
        raise HabitusError("not_found", f"no {among} has an ID starting with {prefix}")
    if len(matches) > 1:
        hashes = [m.get("finding") or m["id"] for m in matches]
        raise HabitusError(
            "ambiguous",
            f"{len(matches)} {among}s have an ID starting with {prefix}",
            hint="repeat with a longer prefix",
            candidates=[
                {"id": shortest_unique(h, hashes), "label": m.get("label", "")}
                for h, m in zip(hashes, matches, strict=True)
            ],
        )
    return matches[0]


def shortest_unique(value: str, others: list[str], minimum: int = SHOW_PREFIX) -> str:
    """The shortest prefix of value (at least `minimum` digits) that no other hash in `others` shares."""
    rest = [o for o in others if o != value]
    for length in range(minimum, len(value) + 1):
        if not any(o.startswith(value[:length]) for o in rest):
            return value[:length]
    return value
