"""habitus memory observe | reflect | prune: observational memory, offline rules or a configured model."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import click

from habitus import io
from habitus.commands.memory_common import merge, open_store, store_option
from habitus.dispatch import StateCommand
from habitus.errors import HabitusError, bad_request
from habitus.options import harness_option, output_options, state_options, transcript_format_option
from habitus.state.root import StateRoot

if TYPE_CHECKING:
    from habitus.memory.observe import Observer

# Hook events after which observe reads the transcript (a turn ended, or the session is ending).
OBSERVE_EVENTS = ("stop", "session_end", "pre_compact")


class _Options(TypedDict):
    """What every way of observing takes: the chunk size, and the model observer (None: the offline
    rules) with its budget of known memories."""

    chunk_chars: int
    observer: Observer | None
    known_chars: int


def _config(root: StateRoot) -> Any:
    from habitus.state import config

    return config.load(root)


def _positive(value: Any, field: str, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= maximum:
        raise bad_request(field, f"expected an integer from 0 to {maximum}")
    return value


def _model(config: Any) -> tuple[str, Any] | None:
    from habitus.memory import model

    return model.configured(config)


@click.command("observe", cls=StateCommand)
@click.option(
    "--stream",
    help="Whose watermark this advances, e.g. a session id (default: default; with --transcript the "
    "file name without its extension).",
)
@click.option(
    "--transcript",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help="Read the next chunk of this transcript file (Claude Code, Codex or Pi JSONL) from the "
    "stream's byte watermark instead of a request.",
)
@transcript_format_option()
@click.option(
    "--chunk-chars",
    type=click.IntRange(1_000, 2_000_000),
    help="Most characters read in this run (default: the memory.observe_chunk_chars setting; with a "
    "model, at most 20% of its context).",
)
@store_option
@harness_option
@state_options
@output_options
def observe_command(stream: str | None, transcript: Path | None, fmt: str, chunk_chars: int | None,
                    store: str | None, harness: str | None, root: StateRoot, wait: float,
                    pretty: bool) -> None:  # fmt: skip
    """Turn a transcript chunk into single-line observations rated by relevance.

    Reads {"stream", "start", "messages": [{"role", "text", "at", "tool"}]}: roles are
    user, assistant or tool; "start" is the transcript position of the first message.
    Or, with --transcript FILE, the file itself from where the last run stopped.
    Messages before the stream's watermark are skipped; the watermark always advances
    past what a run read, even when nothing was worth observing or the observer failed.
    Text is redacted before any observer (or model) sees it.

    Hook mode is off until `habitus config set memory.observe_enabled true`: until
    then it exits 0 and stores nothing. In hook mode (--harness, for Stop, SessionEnd
    or PreCompact hooks) the event's
    transcript_path is read the same way, under the stream named after the file; an
    event without one (a Gemini AfterAgent, a generic pair) is observed as its two
    messages. Nothing is printed in hook mode.

    \b
    Examples:
      echo '{"stream": "s1", "messages": [{"role": "user", "text": "Never push to main."}]}' \\
        | habitus memory observe --store project
      habitus memory observe --transcript ~/.claude/projects/x/0b6f….jsonl
      habitus memory observe --harness claude-code          # in a Stop hook
    """
    from habitus.memory import model, observe
    from habitus.memory.transcript import observe_transcript

    if harness is not None and transcript is not None:
        raise HabitusError("usage", "--transcript reads a file; it does not combine with --harness")
    config = _config(root)
    chars = chunk_chars or config.get("memory.observe_chunk_chars")
    observer, known = None, 0
    chosen = _model(config)
    if chosen is not None:
        name, budget = chosen
        observer = model.ModelObserver(config, name)
        chars, known = min(chars, budget.observe_chunk), budget.observe_known
    fmt_name = None if fmt == "auto" else fmt
    options: _Options = {"chunk_chars": chars, "observer": observer, "known_chars": known}
    if harness is not None:
        if not config.get("memory.observe_enabled"):
            return  # off: a hook stays silent and stores nothing
        _observe_hook(harness, io.read_request(), stream=stream, store=store, root=root, wait=wait, **options)
        return
    if transcript is not None:
        target = open_store(root, wait, store, {})
        try:
            result = observe_transcript(target, transcript, stream=stream, format=fmt_name, **options)
        finally:
            target.close()
        io.write_result(result, pretty=pretty)
        return
    request = merge(io.read_request(), stream=stream)
    target = open_store(root, wait, store, request)
    try:
        result = observe.observe(target, request, **options)
    finally:
        target.close()
    io.write_result(result, pretty=pretty)


def _observe_hook(harness: str, request: dict[str, Any], *, stream: str | None, store: str | None,
                  root: StateRoot, wait: float, **options: Any) -> None:  # fmt: skip
    """Hook mode: observe what the event points at; print nothing."""
    from habitus.harness.events import parse_event
    from habitus.memory import observe, stores
    from habitus.memory.transcript import iso, observe_transcript

    event = parse_event(harness, request)
    if event.kind not in OBSERVE_EVENTS:
        return
    cwd = Path(event.cwd) if event.cwd and os.path.isabs(event.cwd) else None
    target = stores.open_store(root, store or "global", wait=wait, cwd=cwd)
    try:
        # Gemini rewrites a message's record as its tool calls finish: a byte watermark cannot follow
        # that, so its event's own pair is observed instead.
        if event.transcript_path and harness != "gemini":
            fmt = None if harness == "generic" else harness
            observe_transcript(target, Path(event.transcript_path), stream=stream, format=fmt, **options)
        elif event.kind == "stop" and event.prompt and event.last_assistant_message:
            # No transcript to read: the event's own pair, numbered on from the stream's watermark.
            name = stream or observe.stream_name(event.session_id or observe.DEFAULT_STREAM)
            start = observe.watermark(target, "observe", observe.check_stream(name))
            at = iso(event.timestamp, observe.utc_now())
            messages = [
                {"role": "user", "text": event.prompt, "at": at},
                {"role": "assistant", "text": event.last_assistant_message, "at": at},
            ]
            observe.observe(target, {"stream": name, "start": start, "messages": messages}, **options)
    finally:
        target.close()


def _measure(root: StateRoot, target: Any) -> tuple[Any, str | None]:
    """Words and embeddings for an existing store (see habitus.memory.semantic); words alone, and why,
    when the embedding model cannot be loaded. A missing store needs no model."""
    from habitus.memory import semantic, text

    return semantic.measure_for(root) if target.exists() else (text.WORDS, None)


def _noted(result: dict[str, Any], problem: str | None) -> dict[str, Any]:
    return result if problem is None else {**result, "similarity_error": problem}


@click.command("reflect", cls=StateCommand)
@click.option("--stream", help="Which stream's observations to reflect on (default: default).")
@store_option
@state_options
@output_options
def reflect_command(
    stream: str | None, store: str | None, root: StateRoot, wait: float, pretty: bool
) -> None:
    """Crystallise stable facts from new observations into reflections.

    Each run considers the observations added since the last one (its watermark
    always advances; a model is shown what fits its context and the rest waits).
    Reflections are durable, never pruned, and listed by index.

    \b
    Example:  habitus memory reflect --stream s1 --store project | jq -r '.items[].content'
    """
    from habitus.memory import model, reflect

    config = _config(root)
    chosen = _model(config)
    reflector = None if chosen is None else model.ModelReflector(config, *chosen)
    request = merge(io.read_request(), stream=stream)
    target = open_store(root, wait, store, request)
    try:
        measure, problem = _measure(root, target)
        result = reflect.reflect(target, request, reflector=reflector, measure=measure)
    finally:
        target.close()
    io.write_result(_noted(result, problem), pretty=pretty)


@click.command("prune", cls=StateCommand)
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
    completions are never dropped, whoever proposes it; dropping is a soft removal.

    \b
    Example:  habitus memory prune --budget 10000 --stream s1 --store project
    """
    from habitus.memory import model, prune

    config = _config(root)
    request = merge(io.read_request(), stream=stream, budget=budget, dry_run=dry_run or None)
    tokens = request.get("budget")
    tokens = config.get("memory.prune_budget") if tokens is None else _positive(tokens, "budget", 10_000_000)
    chosen = _model(config)
    dropper = None if chosen is None else model.ModelDropper(config, *chosen)
    target = open_store(root, wait, store, request)
    try:
        measure, problem = _measure(root, target) if dropper is None else (None, None)
        result = prune.prune(target, request, budget=tokens, dry_run=request.get("dry_run") is True,
                             dropper=dropper, **({"measure": measure} if measure else {}))  # fmt: skip
    finally:
        target.close()
    io.write_result(_noted(result, problem), pretty=pretty)
