"""habitus report: write a self-contained HTML page of recent activity and the habit list."""

from __future__ import annotations

from pathlib import Path

import click

from habitus import io
from habitus.dispatch import StateCommand
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Not read.",
    "stdout": 'One object: {"v":1,"path","bytes","generated_at","habits","activity"}. habits counts the '
    "habits shown by status; activity is the per-day data the page plots: "
    '{"days","since","until","series":[{"day","selects","with_guidance","habits_selected",'
    '"notes_delivered","notes_muted","mutes_added","observations","analyze_runs","analyze_records",'
    '"proposals"}],"totals","all_time":{"notes_muted"},"sources"} (UTC days; notes_muted counts '
    "notes held back because their finding was muted; all_time.notes_muted is advise's counter since "
    "the ledger began, which also holds mutes from before per-day recording).",
    "files": "Reads ledger.sqlite (habits, evidence, selection log, advise notes, analyze runs), "
    "mutes.json and the observation log's record timestamps; never creates or migrates anything. "
    "Writes --out (default ./habitus-report.html) atomically, mode 0600; refuses a symlink, a folder "
    "or special file, and any path inside the state root.",
}


@click.command(cls=StateCommand)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default="habitus-report.html",
    show_default=True,
    metavar="FILE",
    help="Where to write the HTML page (replaced atomically, mode 0600).",
)
@click.option(
    "--days",
    type=click.IntRange(1, 366),
    default=14,
    show_default=True,
    help="How many UTC days of activity to plot, ending today.",
)
@state_options
@output_options
def cli(out: Path, days: int, root: StateRoot, wait: float, pretty: bool) -> None:
    """Write an HTML page of recent activity and the habit list.

    One self-contained file: inline CSS and SVG plots, no script, no server,
    no network. It shows habits selected, notes delivered and muted,
    observations captured and analyze runs per day, then the active,
    candidate and disabled habits with their wording, stage and evidence
    quotes (re-checked by the redactor). Writes nothing inside the state root.

    \b
    Examples:
      habitus report && xdg-open habitus-report.html
      habitus report --out /tmp/habits.html --days 30 | jq .path
    """
    from habitus.report import page

    target = page.check_target(root, out)
    data = page.collect(root, days=days, wait=wait)
    size = page.write(target, page.render(data))
    counts: dict[str, int] = {}
    for habit in data["habits"]:
        counts[habit["status"]] = counts.get(habit["status"], 0) + 1
    io.write_result(
        {
            "path": str(target),
            "bytes": size,
            "generated_at": data["generated_at"],
            "habits": counts,
            "activity": data["activity"],
        },
        pretty=pretty,
    )
