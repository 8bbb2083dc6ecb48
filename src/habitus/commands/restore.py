"""habitus restore: validate a backup completely, then swap it into the state root with a journal."""

from __future__ import annotations

from pathlib import Path

import click

from habitus import io
from habitus.dispatch import StateCommand
from habitus.errors import bad_request
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": 'Optional: {"path": BACKUP} when the BACKUP argument is not given, so that '
    "`habitus backup | habitus restore --root OTHER` composes (other keys are ignored).",
    "stdout": 'One object: {"v":1,"root","backup":{"path","created_at","habitus"},"dry_run",'
    '"items":[{"name","action","size"?}],"kept":[names],"excluded":[{"name","reason"}],'
    '"observations":{"started","generation","archived"?}}. action is replaced, created, removed (the backup does not have '
    "the item, so the live one is removed) or absent; kept lists items this backup does not manage "
    "(left as they are).",
    "files": "Reads the backup folder. Replaces ledger.sqlite and memory.sqlite (with their -wal/-shm), "
    "config.toml, law.md and mutes.json in the state root; moves the current observation generation into "
    "observations/archive/ and starts a fresh one; never touches models/, errors.jsonl or locks/. Works in "
    "<root>/.restore/: stage-TOKEN/ (validated copies), rollback-TOKEN/ (the replaced live files) and "
    "journal.json (phase prepared, moved, installed or committed; checksummed). Holds locks/restore.lock "
    "and, while swapping, locks/state.lock exclusively: it waits up to --wait for running commands to "
    "finish, and commands started meanwhile wait for it. "
    "RECOVERY: after a crash, the next habitus command finishes a committed restore or rolls back any "
    "other phase before it does anything else. RECOVERY BY HAND (only if journal.json is damaged, which "
    "every command then refuses with state_corrupt): for each file in .restore/rollback-TOKEN/, delete the "
    "file of the same name in the root (if any) and move the rollback copy back; then delete .restore/. "
    "That returns the root to its state before the restore.",
}


@click.command(cls=StateCommand)
@click.argument("backup_dir", metavar="[BACKUP]", required=False, type=click.Path(path_type=Path))
@click.option(
    "--dry-run",
    is_flag=True,
    help="Validate the backup completely and report what would change; change nothing.",
)
@state_options
@output_options
def cli(backup_dir: Path | None, dry_run: bool, root: StateRoot, wait: float, pretty: bool) -> None:
    """Restore the state root from a backup.

    Everything is validated before anything changes: only the file names habitus
    backs up (no paths, links or extra files), sizes and SHA-256 against the
    manifest, schema versions not newer than this habitus with a migration
    history it knows, PRAGMA integrity_check, and exactly the tables and triggers
    its migrations create. A backup that fails any check is refused (exit 3) and
    the state root is left as it was. The swap is journaled: after a crash at any
    point the next command leaves exactly the old or exactly the new state.
    Observations are not in a backup: restore asks the observation log to
    start a fresh generation and never deletes it (the result's "observations"
    says what happened). Without BACKUP, the folder is
    the "path" of the request on stdin (what `habitus backup` writes).

    On a terminal, stderr shows a progress bar.

    \b
    Examples:
      habitus restore --dry-run ~/.local/share/habitus-backups/20261130T221500Z
      habitus restore ~/.local/share/habitus-backups/20261130T221500Z
      habitus backup | habitus restore --root /tmp/copy-of-my-state
    """
    from habitus import checks
    from habitus.state import restore

    checks.register()

    if backup_dir is None:
        path = io.read_request().get("path")
        if not isinstance(path, str) or not path or "\x00" in path:
            raise bad_request("path", "the backup folder (or give BACKUP as an argument)")
        backup_dir = Path(path)
    from habitus.render.progress import bar

    with bar("restore", "bytes") as progress:
        result = restore.run(root, backup_dir, dry_run=dry_run, wait=wait, progress=progress)
    io.write_result(result, pretty=pretty)
