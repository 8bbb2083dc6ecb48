"""habitus dedupe: find possible duplicate (and conflicting) habits and resolve them explicitly."""

from __future__ import annotations

from typing import Any

import click

from habitus import io
from habitus.dispatch import StateGroup
from habitus.errors import HabitusError, bad_request
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": 'resolve reads {"id", "checksum", "action", "keep"} when REF is not given; scan and list do not '
    "read stdin.",
    "stdout": 'scan: {"v":1,"habits","pairs","capped","model_id","review_bp","strong_bp","embedded","opened",'
    '"pending","dismissed"}. list: {"v":1,"items":[{"n","id","kind","decision","similarity_bp","condition_bp",'
    '"behavior_bp","strength","checksum","current","habits":[{...},{...}]}],"snapshot_expires_at"}. '
    'resolve: {"v":1,"relation":{"id","decision","survivor"},"changed","habits"}.',
    "files": "<root>/ledger.sqlite (relations, audit, vectors); the embedding model (see habitus-model(1)).",
}


@click.group(cls=StateGroup)
def cli() -> None:
    """Find and resolve possible duplicate habits.

    Condition and behaviour are compared separately with the local embedding
    model; the effective similarity is the lower of the two. Same polarity
    makes a possible duplicate, opposite polarity a possible conflict. Nothing
    is merged automatically: `resolve` applies your decision, after checking
    that neither habit nor the relation changed since you listed it.

    \b
    Examples:
      habitus dedupe scan
      habitus dedupe list --pretty
      habitus dedupe resolve 1 --action keep-separate
    """


@cli.command("scan")
@state_options
@output_options
def scan_command(root: StateRoot, wait: float, pretty: bool) -> None:
    """Compare approved habits pairwise and record possible duplicates.

    At most 100 habits (4,950 pairs), chosen by confidence then id. Pending
    relations that no longer reach the review threshold are dismissed.

    On a terminal, stderr shows a progress bar.

    \b
    Example:  habitus dedupe scan | jq .opened
    """
    from habitus.habits.dedupe import scan
    from habitus.habits.store import Ledger
    from habitus.models.embedders import load_embedder
    from habitus.render.progress import bar
    from habitus.state import locks

    with (
        bar("dedupe scan", "steps") as progress,
        locks.hold(root, "maintenance", wait=wait),
        Ledger.open(root, wait=wait) as ledger,
    ):
        if progress is not None:
            progress(0, 2, step="loading the embedding model")
        result = scan(ledger, load_embedder(root), progress=progress)
        if progress is not None:
            progress(2, 2, step="done")
    io.write_result(result, pretty=pretty)


@cli.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include resolved and dismissed relations.")
@state_options
@output_options
def list_command(show_all: bool, root: StateRoot, wait: float, pretty: bool) -> None:
    """List possible duplicates and conflicts, numbered for `resolve`.

    Each item shows both habits' full wording and which one each outcome
    keeps. The numbers stay valid for 15 minutes.

    \b
    Example:  habitus dedupe list --pretty
    """
    from habitus.habits.dedupe import list_relations
    from habitus.habits.store import Ledger

    with Ledger.open(root, wait=wait) as ledger:
        result = list_relations(ledger, include_decided=show_all)
    io.write_result(result, pretty=pretty, human="dedupe.list")


@cli.command("resolve")
@click.argument("ref", required=False, metavar="[REF]")
@click.option(
    "--action",
    type=click.Choice(["merge", "supersede", "archive", "keep-separate"]),
    help="merge: keep one, absorb the other's evidence, archive the other; supersede: the kept (default newer) "
    "wording becomes the active one; archive: archive one; keep-separate: both stay.",
)
@click.option("--keep", metavar="ID", help="The habit id to keep (default: see DESCRIPTION).")
@click.option("--checksum", metavar="HEX", help="The relation checksum shown by `dedupe list` (>= 12 hex).")
@state_options
@output_options
def resolve_command(
    ref: str | None,
    action: str | None,
    keep: str | None,
    checksum: str | None,
    root: StateRoot,
    wait: float,
    pretty: bool,
) -> None:
    """Resolve one possible duplicate with an explicit decision.

    REF is a number from the last `dedupe list` (valid 15 minutes) or a
    relation id (r-...) with --checksum. By default merge and archive keep the
    approved (then more confident, then older) habit and supersede keeps the
    newer wording. Everything is revalidated in one transaction; a change since
    the list answers `stale` (exit 3) and changes nothing.

    \b
    Examples:
      habitus dedupe resolve 1 --action keep-separate
      habitus dedupe resolve r-0123456789ab --checksum 5e6f7a8b9c0d --action merge --keep h-0123456789ab
    """
    from habitus.habits import snapshot
    from habitus.habits.dedupe import resolve
    from habitus.habits.store import Ledger

    if ref is None:
        request = io.read_request()
        ref, action = request.get("id"), request.get("action", action)
        keep, checksum = request.get("keep", keep), request.get("checksum", checksum)
        for name, value in (("id", ref), ("action", action)):
            if not isinstance(value, str):
                raise bad_request(name, "expected a string")
        for name, value in (("keep", keep), ("checksum", checksum)):
            if value is not None and not isinstance(value, str):
                raise bad_request(name, "expected a string")
    if action is None:
        raise HabitusError("usage", "--action is required: merge, supersede, archive or keep-separate")
    assert isinstance(ref, str)
    with Ledger.open(root, wait=wait) as ledger:
        relation_id, checksum = snapshot.target(ledger, "relations", ref, checksum)
        embedder: Any = None
        if action in ("merge", "supersede"):
            from habitus.models.embedders import load_embedder

            embedder = load_embedder(root)
        result = resolve(ledger, relation_id, checksum, action, keep=keep, embedder=embedder)
    io.write_result(result, pretty=pretty)
