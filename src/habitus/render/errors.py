"""An error for a person at a terminal: one line of words, then the hint. Standard library only: an
error must not wait for rich to load, and may happen before anything else has."""

from __future__ import annotations

from habitus.errors import HabitusError
from habitus.render import color_allowed


def words(error: HabitusError) -> str:
    body = error.as_object()["error"]
    head = "habitus: error:"
    hint = "hint:"
    if color_allowed():
        head = f"\x1b[1;31m{head}\x1b[0m"
        hint = f"\x1b[2m{hint}\x1b[0m"
    text = f"{head} {_one_line(body['message'])} ({body['code']}, exit {body['exit']})\n"
    if body.get("hint"):
        text += f"  {hint} {_one_line(body['hint'])}\n"
    return text


def _one_line(text: object) -> str:
    # No control characters reach the terminal: a file name could carry an escape sequence.
    flat = " ".join(str(text).split())
    return "".join(c if c.isprintable() else "?" for c in flat)
