"""habitus memory trust: let a project store's memories reach the agent (or, with --revoke, stop them)."""

from __future__ import annotations

from pathlib import Path

import click

from habitus import io
from habitus.dispatch import StateCommand
from habitus.errors import HabitusError
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot


@click.command("trust", cls=StateCommand)
@click.option(
    "--project",
    "project",
    type=click.Path(path_type=Path, file_okay=False),
    metavar="DIR",
    help="A folder inside the repository whose store to trust (default: the current directory).",
)
@click.option("--revoke", is_flag=True, help="Stop trusting it: index and retrieve leave it out again.")
@state_options
@output_options
def trust_command(project: Path | None, revoke: bool, root: StateRoot, wait: float, pretty: bool) -> None:
    """Trust a project memory store, so that index and retrieve read it.

    A project store habitus did not create on this machine (one that came with a
    clone), or one whose file changed since, is never read into an agent's
    context until you trust it. Look at it first (`memory export --store project`).
    The record lives in the state root, outside the repository, and holds the
    file's hash: when the file changes behind habitus's back, trust it again.

    \b
    Examples:
      habitus memory export --store project | jq -r .content   # read it first
      habitus memory trust
      habitus memory trust --project ~/src/app --revoke
    """
    import os

    from habitus.memory import stores, trust

    io.read_request()
    where = Path(os.path.abspath(project)) if project is not None else None
    target = stores.open_store(root, "project", wait=wait, cwd=where)
    if not target.exists():
        raise HabitusError("not_found", f"{target.path}: no project memory store to trust")
    target.db.inspect()  # a corrupt, foreign or newer file is refused, never trusted
    if revoke:
        changed = trust.revoke(root, target.path, wait=wait)
        io.write_result({"path": str(target.path), "trusted": False, "changed": changed}, pretty=pretty)
        return
    before = trust.check(root, target.path)
    root.ensure()
    trust.record(root, target.path, how="trusted", wait=wait)
    io.write_result({"path": str(target.path), "trusted": True, "changed": not before.trusted}, pretty=pretty)
