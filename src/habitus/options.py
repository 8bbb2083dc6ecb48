"""Option decorators shared by every command, so each flag means the same thing everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from habitus.state.root import StateRoot

F = TypeVar("F", bound=Callable[..., Any])

HARNESSES = ("claude-code", "codex", "gemini", "pi", "generic")
DEFAULT_WAIT = 5.0
ROOT_HELP = "State root (default: $HABITUS_HOME, else $XDG_DATA_HOME/habitus, else ~/.local/share/habitus)."
WAIT_HELP = "Seconds to wait for a lock held by another process before exiting 75."


def _root(ctx: click.Context, param: click.Parameter, value: str | None) -> StateRoot:
    return StateRoot.at(value)


def root_option(*, resolve: bool = True) -> Callable[[F], F]:
    """--root DIR: which state root, as a StateRoot; with resolve=False the text as given (None when
    absent), for a command that hands it on or opens the root itself later."""
    return click.option("--root", "root", metavar="DIR", callback=_root if resolve else None, help=ROOT_HELP)


def wait_option(help: str = WAIT_HELP) -> Callable[[F], F]:
    """--wait SECONDS: how long to wait for a lock another process holds; `help` says what this
    command does with it when that is more than the usual wait."""
    return click.option(
        "--wait",
        type=click.FloatRange(0, 3600),
        default=DEFAULT_WAIT,
        show_default=True,
        metavar="SECONDS",
        help=help,
    )


def state_options(f: F) -> F:
    """--root and --wait: which state root, and how long to wait for a busy lock.

    Only the options: the command entering its root (recovering an interrupted restore, holding the
    shared state lock, the hook-mode cap on --wait) is `habitus.dispatch.StateCommand`'s, once the
    options are parsed.
    """
    return root_option()(wait_option()(f))


def _force_json(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta["habitus.json"] = True  # habitus.render.FORCE_JSON; meta is shared by the whole command line


def output_options(f: F) -> F:
    """--pretty: indent the JSON result; --json: JSON even on a terminal (which otherwise may get a
    table: see habitus.render). Either one means JSON."""
    f = click.option(
        "--json",
        "json_output",
        is_flag=True,
        expose_value=False,
        callback=_force_json,
        help="Write the JSON result even on a terminal (off a terminal it always is JSON).",
    )(f)
    return click.option(
        "--pretty", is_flag=True, help="Indent the JSON result for reading (JSON on a terminal too)."
    )(f)


def stream_options(f: F) -> F:
    """--nl: one request per input line, one result per output line."""
    return click.option(
        "--nl", is_flag=True, help="Stream: read one JSON object per line and write one result per line."
    )(f)


def harness_option(f: F) -> F:
    """--harness NAME: hook mode (the harness's protocol in and out; failures exit 0 silently)."""
    return click.option(
        "--harness",
        type=click.Choice(HARNESSES),
        default=None,
        help="Hook mode: speak this harness's hook protocol; on failure exit 0 with no output "
        "and log the error to <root>/errors.jsonl.",
    )(f)


TRANSCRIPT_FORMATS = ("claude-code", "pi", "codex", "gemini")


def transcript_format_option(formats: tuple[str, ...] = TRANSCRIPT_FORMATS) -> Callable[[F], F]:
    """--format: which transcript format a --transcript file is (auto: recognised from its first lines),
    among the `formats` this command reads."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["auto", *formats]),
        default="auto",
        show_default=True,
        help="Transcript format for --transcript; auto recognises it from the first lines.",
    )
