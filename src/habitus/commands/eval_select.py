"""habitus eval select: precision, recall and a confusion table of the select judge on labelled cases."""

from __future__ import annotations

from pathlib import Path

import click

from habitus import io
from habitus.dispatch import StateCommand
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Not read.",
    "stdout": '{"v":1,"judge","part","habits","cases","exact","tp","fp","fn","precision","recall","f1",'
    '"categories":{CATEGORY:{"cases","exact","tp","fp","fn","precision","recall"}},"reasons",'
    '"misses":[{"id","category","expected","selected"}]}. Pairs (case, habit) are counted: a selected '
    "expected habit is a true positive, a selected unexpected one a false positive, an expected one not "
    "selected a false negative; a case is exact when its selection equals its expectation.",
    "files": "Reads the cases and habit catalog files, config.toml (embed.model, select.max_habits, "
    "models.NAME for --judge model:NAME) and the embedding model. Writes nothing.",
}


@click.command(cls=StateCommand)
@click.option(
    "--cases",
    "cases_path",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help='Labelled cases, JSON lines {"id","prompt","context","expected","category"}.',
)
@click.option(
    "--habits",
    "habits_path",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help='Habit catalog, JSON lines {"id","condition","behavior","polarity"} (default: habits.jsonl '
    "next to the cases file).",
)
@click.option(
    "--part",
    type=click.Choice(["all", "fit", "holdout"]),
    default="all",
    show_default=True,
    help="Which half of the cases: fit (what the scorer was fitted on), holdout, or all.",
)
@click.option(
    "--judge",
    "judge_setting",
    default="local",
    show_default=True,
    metavar="local|model:NAME",
    help="The judge to measure: the local judge, or a configured [models.NAME].",
)
@state_options
@output_options
def cli(
    cases_path: Path,
    habits_path: Path | None,
    part: str,
    judge_setting: str,
    root: StateRoot,
    wait: float,
    pretty: bool,
) -> None:
    """Measure the select judge: precision, recall, confusion by category.

    Every catalog habit is a candidate for every case; the judge runs as in
    `habitus select` (retrieval, rule checks, thresholds), without a ledger.

    \b
    Example:
      habitus eval select --cases tests/fixtures/select/cases.jsonl --part holdout --pretty
    """
    from habitus.errors import HabitusError
    from habitus.models.embedders import load_embedder
    from habitus.select import evaluate, judge
    from habitus.state import config
    from habitus.state.settings import BY_KEY

    if BY_KEY["select.judge"].check(judge_setting) is not None:
        raise HabitusError("usage", "--judge: expected local or model:NAME")
    settings = config.load(root)
    model = judge.judge_name(judge_setting)
    habits = evaluate.load_catalog(habits_path or cases_path.with_name("habits.jsonl"))
    cases = evaluate.split(evaluate.load_cases(cases_path, {h.id for h in habits}), part)
    limit = int(settings.get("select.max_habits"))
    report = evaluate.evaluate(load_embedder(root), habits, cases, limit=limit, model=model, config=settings)
    io.write_result(
        {"judge": judge_setting, "part": part, "habits": len(habits), **report.as_dict()}, pretty=pretty
    )
