"""The command line's face: reading requests from stdin, writing results and errors.

Only `cli.py` and `commands/` use this module; domains and `state/` use `habitus.codec`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import IO, Any, cast

import orjson

from habitus.codec import MAX_REQUEST_BYTES, parse_object
from habitus.errors import HabitusError

RESULT_VERSION = 1


def _stdin() -> IO[bytes] | None:
    stream = sys.stdin
    if stream is None:
        return None
    try:
        if stream.isatty():
            return None
    except (ValueError, OSError):
        return None
    # A text stdin reads its bytes through .buffer; a stand-in without one (a test's BytesIO) is read as is.
    buffer: IO[bytes] | None = getattr(stream, "buffer", None)
    return buffer if buffer is not None else cast("IO[bytes]", stream)


def read_request() -> dict[str, Any]:
    """Read one request object from stdin. Empty stdin or a terminal means `{}`.

    At most MAX_REQUEST_BYTES + 1 bytes are read, so an oversized input is refused without
    holding it in memory.
    """
    stream = _stdin()
    if stream is None:
        return {}
    data = stream.read(MAX_REQUEST_BYTES + 1)
    return parse_object(data or b"")


def read_request_bytes() -> tuple[bytes, dict[str, Any]]:
    """read_request, and the bytes it was read from (to hand the same request on unchanged)."""
    stream = _stdin()
    data = (stream.read(MAX_REQUEST_BYTES + 1) or b"") if stream is not None else b""
    return data, parse_object(data)


def read_requests(nl: bool) -> Iterator[dict[str, Any]]:
    """Yield request objects: one from the whole of stdin, or one per non-blank line with --nl."""
    if not nl:
        yield read_request()
        return
    stream = _stdin()
    if stream is None:
        return
    for number, line in enumerate(_bounded_lines(stream), start=1):
        if line.strip():
            yield parse_object(line, what=f"stdin line {number}")


def _bounded_lines(stream: IO[bytes]) -> Iterator[bytes]:
    while True:
        line = stream.readline(MAX_REQUEST_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_REQUEST_BYTES and not line.endswith(b"\n"):
            raise HabitusError("request_too_large", f"stdin: a line is longer than {MAX_REQUEST_BYTES} bytes")
        yield line


def write_result(result: dict[str, Any], *, pretty: bool = False, human: str | None = None) -> None:
    """Write one result object (with `"v": 1` first) and a newline to stdout, then flush.

    `human` names the result's kind in habitus.render: on a terminal, without --json or --pretty and
    outside hook mode, that renderer prints it for a person instead. Anywhere else: the JSON, always.
    """
    body = {"v": RESULT_VERSION, **{k: v for k, v in result.items() if k != "v"}}
    if human is not None and not pretty:
        from habitus import render

        if render.wanted(human):
            render.show(human, body)
            return
    option = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS
    if pretty:
        option |= orjson.OPT_INDENT_2
    out = getattr(sys.stdout, "buffer", None)
    data = orjson.dumps(body, option=option)
    if out is None:
        sys.stdout.write(data.decode())
        sys.stdout.flush()
    else:
        out.write(data)
        out.flush()


def write_raw(obj: dict[str, Any], *, pretty: bool = False) -> None:
    """Write a harness-protocol object verbatim (no `v`): hook output belongs to the harness's format."""
    out = getattr(sys.stdout, "buffer", None)
    data = orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE | (orjson.OPT_INDENT_2 if pretty else 0))
    if out is None:
        sys.stdout.write(data.decode())
        sys.stdout.flush()
    else:
        out.write(data)
        out.flush()


def write_reply(reply: dict[str, Any] | None) -> None:
    """A hook's answer (habitus.harness.reply): the harness's object on one line, or nothing at all
    when there is nothing to say (None or empty)."""
    if reply:
        write_raw(reply)


def emit_error(error: HabitusError, *, for_people: bool = False) -> None:
    """One JSON line on stderr; with `for_people` (stderr is a terminal) a line of words and the hint.
    Never raises: a closed stderr must not turn into a traceback."""
    try:
        err = getattr(sys.stderr, "buffer", None)
        if for_people:
            from habitus.render.errors import words

            data = words(error).encode("utf-8", "replace")
        else:
            data = orjson.dumps(error.as_object(), option=orjson.OPT_APPEND_NEWLINE)
        if err is None:
            sys.stderr.write(data.decode())
        else:
            err.write(data)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
