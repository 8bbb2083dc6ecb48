"""The storage codec: canonical JSON, checksums, and decoding one JSON object with a clear error.

This is the only module that talks to orjson for stored data. `canonical()` is a contract: sorted keys,
compact, UTF-8, no trailing newline. Every checksum and dedupe key in habitus is SHA-256 over it, so
changing it would invalidate stored state. Domains and `state/` use this module; the command line's
stdin/stdout protocol lives in `habitus.io`.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from habitus.errors import HabitusError

MAX_REQUEST_BYTES = 8 * 1024 * 1024  # per object (per line with --nl)


def canonical(obj: Any) -> bytes:
    """The canonical JSON bytes of obj: sorted keys at every depth, compact separators."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)


def checksum(obj: Any) -> str:
    """SHA-256 hex digest of `canonical(obj)`."""
    return hashlib.sha256(canonical(obj)).hexdigest()


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj)


def loads(data: bytes | str) -> Any:
    return orjson.loads(data)


def parse_object(data: bytes, what: str = "stdin") -> dict[str, Any]:
    """Decode one JSON object, with an error code that says exactly what is wrong."""
    if len(data) > MAX_REQUEST_BYTES:
        raise HabitusError(
            "request_too_large",
            f"{what}: request is larger than {MAX_REQUEST_BYTES} bytes",
            hint="split the input or pass a file path instead of its contents",
        )
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HabitusError("bad_utf8", f"{what}: invalid UTF-8 at byte {exc.start}") from None
    if not data.strip():
        return {}
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        # orjson's message quotes no input, only the position.
        raise HabitusError("bad_json", f"{what}: not valid JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(obj, dict):
        raise HabitusError("bad_request", f"{what}: expected a JSON object, got {type(obj).__name__}")
    return obj
