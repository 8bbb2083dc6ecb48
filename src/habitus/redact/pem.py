"""Private keys: whole PEM blocks, a block cut before its BEGIN line, and a bare PEM body.

A body is two or more consecutive lines of base64 at least 40 characters long (PEM wraps at 64, OpenSSH
at 70), together with the short last line of the block; it is replaced whole even when neither its
BEGIN nor its END line was pasted. The walk is line by line, so it stays linear on any input.
"""

from __future__ import annotations

from habitus.redact.lazy import Lazy

MARKER = "[REDACTED:private_key]"
_BLOCK = Lazy(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
)
_END = Lazy(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
_BODY_LINE = Lazy(r"[A-Za-z0-9+/]{40,}={0,2}")
_LAST_LINE = Lazy(r"[A-Za-z0-9+/]{2,}={0,2}")
# A line of a body: optional indentation or quoting around the base64 (YAML blocks, a JSON array).
_STRIP = " \t\"',\r"


def redact_blocks(text: str) -> tuple[str, int]:
    if "PRIVATE KEY" not in text:
        return text, 0
    text, count = _BLOCK.subn(MARKER, text)
    text, tails = _redact_tails(text)
    return text, count + tails


def _redact_tails(text: str) -> tuple[str, int]:
    """Each END line together with the base64 lines right before it (a key whose BEGIN line was cut
    off). A bare END line is left for the post-check to flag, so such text is dropped."""
    out, position, count = [], 0, 0
    for match in _END.finditer(text):
        start = match.start()
        while start > position:
            line_start = text.rfind("\n", position, max(position, start - 1)) + 1
            line_start = max(line_start, position)
            line = text[line_start : start - 1].rstrip("\r")
            if len(line) < 16 or not set(line) <= _BASE64:
                break
            start = line_start
        if start == match.start():
            continue
        out.append(text[position:start])
        out.append(MARKER)
        position = match.end()
        count += 1
    if not count:
        return text, 0
    out.append(text[position:])
    return "".join(out), count


def _mixed(line: str) -> bool:
    return (
        any(c.isdigit() for c in line) and any(c.isupper() for c in line) and any(c.islower() for c in line)
    )


def redact_bodies(text: str) -> tuple[str, int]:
    """Runs of two or more base64 lines (a key body without its armour), with the run's last line."""
    if "\n" not in text:
        return text, 0
    lines = text.split("\n")
    out: list[str] = []
    count = 0
    index = 0
    while index < len(lines):
        run = index
        while run < len(lines) and _BODY_LINE.fullmatch(lines[run].strip(_STRIP)):
            run += 1
        if run - index >= 2 and any(_mixed(line) for line in lines[index:run]):
            if run < len(lines) and _LAST_LINE.fullmatch(lines[run].strip(_STRIP)):
                run += 1
            first = lines[index]
            indent = first[: len(first) - len(first.lstrip(" \t"))]
            out.append(indent + MARKER)
            count += 1
            index = run
            continue
        out.append(lines[index])
        index += 1
    if not count:
        return text, 0
    return "\n".join(out), count
