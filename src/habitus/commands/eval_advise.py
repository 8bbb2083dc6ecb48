"""habitus eval advise: precision and recall of the local reviewer on labelled slices."""

from __future__ import annotations

from pathlib import Path

import click

from habitus import io
from habitus.dispatch import StateCommand
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Not read.",
    "stdout": '{"v":1,"habits","cases","exact","tp","fp","fn","precision","recall","categories":{CATEGORY:'
    '{"cases","tp","fp","fn","precision","recall"}},"misses":[{"id","category","expected","raised"}]}. '
    "Pairs (case, finding key) are counted.",
    "files": "Reads the cases and habit catalog files, config.toml (embed.model) and the embedding model. "
    "Writes nothing.",
}


@click.command(cls=StateCommand)
@click.option(
    "--cases",
    "cases_path",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help='Labelled slices, JSON lines {"id","category","expected":[KEY],"entries":[{"role","text","name"}]}.',
)
@click.option(
    "--habits",
    "habits_path",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help='Habit catalog, JSON lines {"id","condition","behavior","polarity"}; all count as approved.',
)
@state_options
@output_options
def cli(cases_path: Path, habits_path: Path, root: StateRoot, wait: float, pretty: bool) -> None:
    """Measure the local advise reviewer: precision, recall, misses by category.

    Each case is a slice of new agent work and the finding keys a careful
    reviewer raises on it ("habit:ID", "law:RULE"); the local reviewer runs on
    it as in `habitus advise`, with every catalog habit approved, without a ledger.

    \b
    Example:
      habitus eval advise --cases tests/fixtures/advise/cases.jsonl \\
          --habits tests/fixtures/select/habits.jsonl --pretty
    """
    from habitus.advise.evaluate import evaluate, load_cases, load_habits

    habits = load_habits(habits_path)
    report = evaluate(root, habits, load_cases(cases_path))
    io.write_result({"habits": len(habits), **report.as_dict()}, pretty=pretty)
