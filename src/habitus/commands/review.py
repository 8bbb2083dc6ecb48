"""habitus review: decide on candidates, possible duplicates and active habits in a terminal UI."""

from __future__ import annotations

import sys

import click

from habitus.dispatch import StateCommand
from habitus.errors import HabitusError
from habitus.options import state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": "The terminal: keys, not JSON. Refused (exit 2) when stdin, stdout or stderr is not a terminal (the screen is drawn on stderr).",
    "stdout": "Not JSON, a person reads it: after the screen closes, one line per decision applied "
    "(`approve h-...: activated`) and a count. The screen itself is drawn on the terminal through stderr.",
    "files": "<root>/ledger.sqlite (habits, evidence, relations, audit); <root>/law.md; the embedding "
    "model (see habitus-model(1)), loaded on the first approval.",
}


@click.command(cls=StateCommand)
@state_options
def cli(root: StateRoot, wait: float) -> None:
    """Review habits in the terminal: approve, reject, edit, merge, ...

    Lists possible duplicates and conflicts first (they block approval), then
    candidates and habits the law suppressed, then active and disabled ones.
    The selected item shows its full wording, stage, the redacted evidence it
    rests on (quotes and days), its conflicts and law findings. One key per
    decision: a approve, r reject, e edit (your wording is approved as written
    and keeps the evidence; the original is rejected), k keep separate,
    m merge, s supersede, d disable, n enable, x archive, ? help, q quit.

    Each key calls what the matching `habit` or `dedupe resolve` command calls,
    with the checksum of what is on screen: if another process changed the item
    since, it is refused as stale, nothing is written, and the list is read
    again. Needs a terminal (use `habit list` and `habit approve N` in scripts).

    \b
    Example:  habitus analyze && habitus review
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty() and sys.stderr.isatty()):
        raise HabitusError(
            "usage",
            "habitus review needs a terminal (stdin, stdout and stderr)",
            hint="in scripts use `habitus habit list` and `habitus habit approve N --checksum HEX`",
        )
    from habitus.habits import review
    from habitus.habits.law import load_law
    from habitus.habits.store import Ledger

    with Ledger.open(root, wait=wait) as ledger:  # a busy or refused ledger fails before the screen opens
        review.load(ledger, load_law(root))
    from habitus.tui.review import ReviewApp

    app = ReviewApp(root, wait=wait)
    app.run()
    for decision in app.decisions:
        result = decision["result"]
        outcome = result.get("outcome") or result["relation"]["decision"]
        click.echo(f"{decision['action']} {decision['id']}: {outcome}")
    click.echo(f"habitus review: {len(app.decisions)} decision(s) applied")
