"""The rich console every renderer writes to: width-aware, without colour when NO_COLOR or TERM=dumb."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.markup import escape

from habitus.render import color_allowed


def console(*, stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    plain = not color_allowed()
    return Console(
        file=stream,
        no_color=plain,
        color_system=None if plain else "auto",
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )


def shorten(text: object, limit: int = 400) -> str:
    """One paragraph of at most `limit` characters (a table cell must not swallow the screen), with
    rich markup escaped: stored words are shown as written, never read as styles."""
    flat = " ".join(str(text or "").split())
    return escape(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def esc(text: object) -> str:
    return escape(str("" if text is None else text))
