"""habitus habit export / import: approved habits into the files teams share, and back as candidates."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from habitus import io
from habitus.dispatch import StateCommand
from habitus.errors import HabitusError
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

if TYPE_CHECKING:
    from habitus.state.shared_file import Shared

FORMATS = ("claude-md", "agents-md", "cursor", "gemini")
PROJECT_FILE = "HABITS.md"
EXPORT_LIMIT = 10_000


def _listed(before: Any, where: str) -> list[Any]:
    """The habits a block lists, as export would show them; an entry export would not write is stale."""
    from habitus.habits import share
    from habitus.habits.wording import wording_checksum

    entries, rejected = share.parse(share.decode(before.data, where), where)
    if rejected or any(e.exported is None or e.edited for e in entries):
        first = min([r.line for r in rejected] + [e.line for e in entries if e.exported is None or e.edited])
        raise HabitusError(
            "export_stale",
            f"{where}: line {first} is not an entry as habitus exports it (edited by hand?)",
            hint="re-export it from a ledger that holds these habits",
            path=where,
            line=first,
        )
    return [
        share.Shown(
            e.condition, e.behavior, e.polarity, wording_checksum(e.condition, e.behavior, e.polarity)
        )
        for e in entries
    ]


@click.command("export", cls=StateCommand)
@click.option(
    "--format",
    "format_name",
    type=click.Choice(FORMATS),
    required=True,
    help="claude-md (CLAUDE.md), agents-md (AGENTS.md), gemini (GEMINI.md) or cursor "
    "(a rule such as .cursor/rules/habitus.mdc).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Write the block into FILE (created when absent; only the block changes).",
)
@click.option(
    "--check",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Change nothing; exit 1 (export_stale) unless FILE's block is what --out would write.",
)
@click.option(
    "--intact",
    is_flag=True,
    help="With --check: compare the block with the habits it lists instead of this ledger (no hand "
    "edits, nothing out of order); for CI, which has no ledger.",
)
@click.option("--raw", is_flag=True, help="Without --out/--check: print the text itself instead of JSON.")
@state_options
@output_options
def export_command(
    format_name: str,
    out: Path | None,
    check: Path | None,
    intact: bool,
    raw: bool,
    root: StateRoot,
    wait: float,
    pretty: bool,
) -> None:
    """Write the approved habits into a marked block of a shared file.

    The block sits between `<!-- habitus:begin ... -->` and `<!-- habitus:end -->`;
    text outside it is never changed, and a second export changes nothing. Only
    active, approved habits go out, worded exactly as approved (and checked by the
    redactor again): personal habits, and the project habits of the repository
    around the current directory. Without --out or --check the result is JSON with the text
    in `text`; --raw (or `jq -r .text`) prints the text itself.

    \b
    Examples:
      habitus habit export --format claude-md --out CLAUDE.md
      habitus habit export --format cursor --out .cursor/rules/habitus.mdc
      habitus habit export --format agents-md --check AGENTS.md   # before committing
      habitus habit export --format agents-md --check AGENTS.md --intact   # in CI
      habitus habit export --format gemini --raw
    """
    from habitus.habits import share
    from habitus.state import shared_file

    if out is not None and check is not None:
        raise HabitusError("usage", "give --out or --check, not both")
    if raw and (out is not None or check is not None):
        raise HabitusError("usage", "--raw prints to stdout; it does not go with --out or --check")
    if intact and check is None:
        raise HabitusError("usage", "--intact goes with --check FILE")
    target = out or check
    before: Shared | None
    if intact and check is not None:
        before = shared_file.read_target(check)
        habits, left_out = (_listed(before, str(check)) if before.exists else []), 0
    else:
        from habitus.habits.exported import exportable

        habits, left_out = exportable(root, wait=wait, limit=EXPORT_LIMIT)
        before = shared_file.read_target(target) if target is not None else None
    block = share.render(habits)
    if target is None:
        text = share.new_file(block, format_name)
        if raw:
            sys.stdout.buffer.write(text.encode("utf-8"))
            sys.stdout.buffer.flush()
            return
        io.write_result(
            {"format": format_name, "habits": len(habits), "left_out": left_out, "text": text}, pretty=pretty
        )
        return
    assert before is not None  # read above whenever there is a target
    existing = share.decode(before.data, str(target)) if before.exists else None
    text = share.splice(existing, block, format_name, str(target))
    data = text.encode("utf-8")
    result: dict[str, Any] = {
        "path": str(target),
        "format": format_name,
        "habits": len(habits),
        "left_out": left_out,
    }
    if check is not None:
        if data != before.data or not before.exists:
            what = "the habits it lists" if intact else "the approved habits"
            raise HabitusError(
                "export_stale",
                f"{target}: "
                + ("does not exist" if not before.exists else f"its habitus block is not {what}"),
                hint=f"run `habitus habit export --format {format_name} --out {target}` and commit it",
                path=str(target),
            )
        io.write_result({**result, "current": True}, pretty=pretty)
        return
    changed = data != before.data or not before.exists
    if changed:
        shared_file.replace(before, data)
    io.write_result({**result, "changed": changed, "created": not before.exists}, pretty=pretty)


@click.command("import", cls=StateCommand)
@click.argument("file", required=False, type=click.Path(path_type=Path))
@click.option(
    "--project",
    is_flag=True,
    help=f"Read the repository's {PROJECT_FILE} (the git repository around the current directory); "
    "its habits apply only inside that repository.",
)
@state_options
@output_options
def import_command(file: Path | None, project: bool, root: StateRoot, wait: float, pretty: bool) -> None:
    """Read a shared habits file as candidates that still need your approval.

    FILE is any file with a habitus block (CLAUDE.md, AGENTS.md, GEMINI.md, a
    Cursor rule, a teammate's export). Each entry becomes a candidate with its
    provenance (shown by `habit show`); a wording you already have, in any
    status, stays as you decided it. Nothing becomes active: `habit approve`.
    With --project the new habits are project habits: select applies them
    only when the working directory is inside this repository (its top
    folder, symbolic links resolved); your personal habits apply everywhere.

    \b
    Examples:
      habitus habit import AGENTS.md
      habitus habit import --project          # the repository's HABITS.md
      habitus habit import team.md | jq '.items[] | select(.outcome == "created")'
    """
    from habitus.habits import adopt, share
    from habitus.habits.store import Ledger
    from habitus.redact import redact
    from habitus.state import shared_file

    scoped: str | None = None
    if project:
        from habitus.habits.scope import repo_of
        from habitus.memory.stores import find_repo

        if file is not None:
            raise HabitusError("usage", "give FILE or --project, not both")
        repo, scoped = find_repo(Path.cwd()), repo_of(None)
        if repo is None or scoped is None:
            raise HabitusError("no_project", f"{Path.cwd()}: not inside a git repository")
        file = repo / PROJECT_FILE
    if file is None:
        raise HabitusError("usage", "name the FILE to import (or pass --project)")
    data = shared_file.read_source(file)
    entries, malformed = share.parse(share.decode(data, str(file)), str(file))
    entries, refused = adopt.check(entries)
    rejected = sorted(malformed + refused, key=lambda r: r.line)
    source = redact(str(file.absolute()))[0]
    items: list[dict[str, Any]] = []
    if entries:
        from habitus.models.embedders import load_embedder

        with Ledger.open(root, wait=wait) as ledger:
            outcome = adopt.adopt(
                ledger,
                entries,
                source=source,
                data=data,
                load_embedder=lambda: load_embedder(root),
                project=scoped,
            )
        items = outcome["items"]
    counts = {
        name: sum(i["outcome"] == name for i in items) for name in ("created", "exists", "rejected_before")
    }
    io.write_result(
        {
            "source": source,
            "sha256": hashlib.sha256(data).hexdigest(),
            "project": scoped,
            "items": items,
            "rejected": [r.public() for r in rejected],
            "counts": {**counts, "rejected": len(rejected)},
        },
        pretty=pretty,
    )


def attach(group: click.Group) -> None:
    group.add_command(export_command)
    group.add_command(import_command)
