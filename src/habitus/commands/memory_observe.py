"""habitus memory observe | reflect | prune: observational memory, offline (rule-based) for now."""

from __future__ import annotations

from typing import Any

import click

from habitus import io
from habitus.commands.memory_common import merge, open_store, store_option
from habitus.errors import bad_request
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot


def _setting(root: StateRoot, key: str) -> Any:
    from habitus.state import config as configuration

    return configuration.load(root).get(key)


def _positive(value: Any, field: str, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= maximum:
        raise bad_request(field, f"expected an integer from 0 to {maximum}")
    return value


@click.command("observe")
@click.option(
    "--stream", help="Whose watermark this transcript advances (default: default), e.g. a session id."
)
@click.option(
    "--chunk-chars",
    type=click.IntRange(1_000, 2_000_000),
    help="Most characters read in this run (default: the memory.observe_chunk_chars setting).",
)
@store_option
@state_options
@output_options
def observe_command(stream: str | None, chunk_chars: int | None, store: str | None, root: StateRoot, wait: float,
                    pretty: bool) -> None:  # fmt: skip
    """Turn a transcript chunk into single-line observations rated by relevance.

    Reads {"stream", "start", "messages": [{"role", "text", "at", "tool"}]}: roles are
    user, assistant or tool; "start" is the transcript position of the first message.
    Messages before the stream's watermark are skipped; the watermark always advances
    past what a run read, even when nothing was worth observing.

    \b
    Example:
      echo '{"stream": "s1", "messages": [{"role": "user", "text": "Never push to main."}]}' \\
        | habitus memory observe --store project
    """
    from habitus.memory import observe

    request = merge(io.read_request(), stream=stream)
    target = open_store(root, wait, store, request)
    try:
        chars = chunk_chars or _setting(root, "memory.observe_chunk_chars")
        result = observe.observe(target, request, chunk_chars=chars)
    finally:
        target.close()
    io.write_result(result, pretty=pretty)


@click.command("reflect")
@click.option("--stream", help="Which stream's observations to reflect on (default: default).")
@store_option
@state_options
@output_options
def reflect_command(
    stream: str | None, store: str | None, root: StateRoot, wait: float, pretty: bool
) -> None:
    """Crystallise stable facts from new observations into reflections.

    Each run considers the observations added since the last one (its watermark
    always advances). Reflections are durable, never pruned, and listed by index.

    \b
    Example:  habitus memory reflect --stream s1 --store project | jq -r '.items[].content'
    """
    from habitus.memory import reflect

    request = merge(io.read_request(), stream=stream)
    target = open_store(root, wait, store, request)
    try:
        result = reflect.reflect(target, request)
    finally:
        target.close()
    io.write_result(result, pretty=pretty)


@click.command("prune")
@click.option(
    "--budget",
    type=click.IntRange(0, 10_000_000),
    metavar="TOKENS",
    help="Token budget for the stream's observations (default: the memory.prune_budget setting).",
)
@click.option("--stream", help="Which stream's observations to prune (default: default).")
@click.option("--dry-run", is_flag=True, help="Report what would be dropped; change nothing.")
@store_option
@state_options
@output_options
def prune_command(budget: int | None, stream: str | None, dry_run: bool, store: str | None, root: StateRoot,
                  wait: float, pretty: bool) -> None:  # fmt: skip
    """Drop observations toward a token budget, in up to three passes.

    Duplicates and superseded ones go first, then low ones covered by reflections,
    then older low and medium ones. Critical observations, user assertions and
    completions are never dropped; dropping is a soft removal.

    \b
    Example:  habitus memory prune --budget 10000 --stream s1 --store project
    """
    from habitus.memory import prune

    request = merge(io.read_request(), stream=stream, budget=budget, dry_run=dry_run or None)
    tokens = request.get("budget")
    tokens = (
        _setting(root, "memory.prune_budget") if tokens is None else _positive(tokens, "budget", 10_000_000)
    )
    target = open_store(root, wait, store, request)
    try:
        result = prune.prune(target, request, budget=tokens, dry_run=request.get("dry_run") is True)
    finally:
        target.close()
    io.write_result(result, pretty=pretty)
