"""habitus eval analyze: precision and recall of the local analyzer on labelled conversations."""

from __future__ import annotations

from pathlib import Path

import click

from habitus import io
from habitus.options import output_options

MAN = {
    "stdin": "Not read.",
    "stdout": 'One object: {"v":1,"labels","conversations":[{"file","habits":{"tp","fp","fn","stage_correct"},'
    '"facts":{"tp","fp","fn"},"proposals":[...],"missed":[...],"memory_suggestions":[...]}],'
    '"habits":{"tp","fp","fn","precision_bp","recall_bp"},"facts":{...},"stage":{"matched","unscored",'
    '"correct","accuracy_bp","confusion"}}. Ratios are basis points (null when undefined).',
    "files": "Reads the labels file and the conversation files beside it; each conversation is captured and "
    "analysed in its own temporary state root, removed afterwards. The real state root is not touched.",
}


@click.command()
@click.option(
    "--labels",
    "labels",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    metavar="FILE",
    help="labels.json of a labelled set (format 1; conversations are JSONL files beside it).",
)
@click.option(
    "--conversation",
    "only",
    multiple=True,
    metavar="FILE",
    help="Score only this conversation (a file name listed in the labels); repeatable.",
)
@output_options
def cli(labels: Path, only: tuple[str, ...], pretty: bool) -> None:
    """Measure the local analyzer on labelled conversations.

    Each conversation is captured into a fresh temporary state root and
    analysed offline; its candidate habits are matched to the labelled ones by
    keywords (one to one) and memory suggestions to the labelled facts.
    Reports precision and recall (basis points), whether matched habits got
    the right stage, and every proposal with the label it matched.

    A conversation with "transcript_format" (pi, claude-code, codex, gemini)
    is a real session file, imported as `capture --transcript` does; its
    labels may quote the user's words ("evidence_quotes") instead of giving
    timestamps, and then their stage is not scored.

    \b
    Example:  habitus eval analyze --labels tests/fixtures/analyze/labels.json | jq .habits
    """
    from habitus.learn.evaluate import evaluate

    io.write_result(evaluate(labels, only=list(only) or None), pretty=pretty)
