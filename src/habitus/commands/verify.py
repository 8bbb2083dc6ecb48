"""habitus verify: check every store, file and permission in the state root (report only)."""

from __future__ import annotations

import click

from habitus import io
from habitus.dispatch import ReportCommand
from habitus.errors import HabitusError
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Not read.",
    "stdout": 'One object, also when issues are found: {"v":1,"ok","root","exists","items":[{"name","kind",'
    '"exists","schema_version"?,"schema_current"?}],"issues":[{"code","item"?,"message","count","paths"?}]}. '
    "Issue codes: store_unreadable, schema_newer, schema_unknown, schema_drift, sqlite_integrity, "
    "foreign_key, file_invalid, permissions, foreign_owner, symlink, special_file, unknown_entry, "
    "temp_leftover, restore_journal, restore_leftover, verifier_error, and those of the domain verifiers "
    "(row checksums, full-text index drift, the observation chain). Exit 0 when ok; with issues the report "
    "is still on stdout, stderr carries the error object issues_found, and the exit status is 1.",
    "files": "Reads everything in the state root; writes, creates and migrates nothing.",
}


@click.command(cls=ReportCommand)
@state_options
@output_options
def cli(root: StateRoot, wait: float, pretty: bool) -> None:
    """Check the state root's stores, files and permissions (report only).

    Every store: schema version and history, PRAGMA integrity_check, foreign keys,
    tables and triggers exactly as its migrations create them, and the checks its
    owner registered (row checksums, full-text index drift, the observation
    chain). Every file and folder: 0600/0700, owner, no symbolic links; no
    leftovers of an interrupted restore or write. Nothing is changed.

    \b
    Examples:
      habitus verify --pretty
      habitus verify | jq -r '.issues[].code'
    """
    from habitus import checks
    from habitus.state import verify

    checks.register()

    report = verify.run(root, wait=wait)
    io.write_result(report, pretty=pretty)
    if not report["ok"]:
        raise HabitusError(
            "issues_found",
            f"{root.path}: {len(report['issues'])} kind(s) of issue found",
            hint="the report is on stdout",
        )
