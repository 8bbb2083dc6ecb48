"""Output for a person at a terminal: which results have a human form, and when to use it.

A command names its result's kind where it calls `io.write_result(..., human=KIND)`; the JSON is
written unless stdout is a terminal, `--json` (or `--pretty`) was not given and this is not hook mode.
Renderers live in one module per kind and load only when chosen, together with rich: this module
imports the standard library alone, so that a hook or a pipe never pays for them.
"""

from __future__ import annotations

import os
import sys
from typing import Any

# kind -> "module:function"; the function takes (result, console). Another part of habitus adds its
# own kind with `register` (or a line here) rather than rendering inside its command.
RENDERERS: dict[str, str] = {
    "habit.list": "habitus.render.habits:habit_list",
    "habit.show": "habitus.render.habits:habit_show",
    "dedupe.list": "habitus.render.dedupe:dedupe_list",
    "memory.retrieve": "habitus.render.memory:memory_retrieve",
    "memory.recall": "habitus.render.memory:memory_recall",
    "advise.mutes": "habitus.render.advise:advise_mutes",
    "select": "habitus.render.select:select",
    "analyze": "habitus.render.analyze:analyze",
    # "status": its terminal view belongs with `habitus report` (what habitus did lately); it plugs in
    # here, and `habitus status` passes human="status" to io.write_result.
}

FORCE_JSON = "habitus.json"  # the click context's meta key --json sets (one command line, not a process)


def register(kind: str, target: str) -> None:
    """Give results of `kind` a human form: `target` is "module:function", imported when first used."""
    RENDERERS[kind] = target


def _forced_json() -> bool:
    import click

    ctx = click.get_current_context(silent=True)
    return ctx is not None and bool(ctx.meta.get(FORCE_JSON))


def is_tty(stream: Any) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (ValueError, OSError, AttributeError):
        return False


def _hook_mode() -> bool:
    hookmode = sys.modules.get("habitus.hookmode")
    return hookmode is not None and hookmode.armed()


def for_people(stream: Any) -> bool:
    """Whether `stream` (stdout or stderr) is read by a person: a terminal, no --json, not a hook."""
    return not _hook_mode() and is_tty(stream) and not _forced_json()


def wanted(kind: str | None) -> bool:
    return kind is not None and kind in RENDERERS and for_people(sys.stdout)


def show(kind: str, result: dict[str, Any]) -> None:
    """Print `result` in its human form on stdout."""
    import importlib

    from habitus.render.terminal import console

    module, _, function = RENDERERS[kind].partition(":")
    renderer = getattr(importlib.import_module(module), function)
    out = console()
    renderer(result, out)


def color_allowed() -> bool:
    """NO_COLOR (set and not empty, as https://no-color.org says) and TERM=dumb turn colour off."""
    return not os.environ.get("NO_COLOR") and os.environ.get("TERM", "") not in ("dumb", "unknown")
