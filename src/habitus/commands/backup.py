"""habitus backup: write a consistent backup of the state root into a new folder."""

from __future__ import annotations

from pathlib import Path

import click

from habitus import io
from habitus.dispatch import StateCommand
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Not read.",
    "stdout": 'One object: {"v":1,"path","created_at","files":[{"name","kind","size","sha256",'
    '"schema_version"?}],"excluded":[{"name","reason"}]}.',
    "files": "Reads ledger.sqlite (and every store registered in the inventory), config.toml, law.md and "
    "mutes.json from the state root. Writes the folder --out (default <root>-backups/YYYYMMDDTHHMMSSZ/ next "
    "to the state root) holding a copy of each and manifest.json (format, version, habitus version, "
    "created_at, each file's name, size, SHA-256, kind and schema version, and the excluded list); folder "
    "0700, files 0600. It is built in a hidden sibling .NAME.partial-* and renamed into place after the "
    "manifest is written, so a folder with the final name is always complete. Excluded by design: "
    "observations/ (raw observation text and its archive/ are never backed up), models/, errors.jsonl, "
    "locks/.",
}


@click.command(cls=StateCommand)
@click.option(
    "--out",
    metavar="DIR",
    type=click.Path(path_type=Path),
    help="New folder to write the backup into; it must not exist "
    "(default: <root>-backups/<UTC time>/ next to the state root).",
)
@state_options
@output_options
def cli(out: Path | None, root: StateRoot, wait: float, pretty: bool) -> None:
    """Write a consistent backup of the state root.

    SQLite stores are copied with SQLite's online backup API, so other commands
    may keep writing meanwhile; each copy is one consistent snapshot of its store
    and passes PRAGMA integrity_check. config.toml, law.md and mutes.json are
    copied as they are. Raw observation text, archives, model files, the error
    log and locks are excluded by design (the result lists them). A backup
    folder appears only once it is complete; it is never overwritten.

    On a terminal, stderr shows a progress bar.

    \b
    Examples:
      habitus backup
      habitus backup --out /media/usb/habitus-2026-11-30 | jq .path
    """
    from habitus import checks
    from habitus.render.progress import bar
    from habitus.state import backup

    checks.register()
    with bar("backup", "bytes") as progress:
        result = backup.create(root, out, wait=wait, progress=progress)
    io.write_result(result, pretty=pretty)
