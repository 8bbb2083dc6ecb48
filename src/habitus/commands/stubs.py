"""Commands whose issues have not landed yet: each answers `not_implemented` (exit 1).

They accept any arguments (and --harness, so hook mode stays silent) so that hook configurations
written today keep working, doing nothing, until the real command replaces the stub.
"""

from __future__ import annotations

import click

from habitus.errors import HabitusError
from habitus.options import harness_option


def _stub(name: str, summary: str) -> click.Command:
    @click.command(name=name, context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    @harness_option
    @click.pass_context
    def command(ctx: click.Context, harness: str | None) -> None:
        raise HabitusError("not_implemented", f"habitus {name} is not implemented yet")

    command.help = f"{summary}\n\nNot implemented yet: answers the error code not_implemented (exit 1)."
    command.short_help = summary
    return command


analyze = _stub("analyze", "Propose candidate habits from unread observations.")
backup = _stub("backup", "Write a consistent backup of the state root.")
restore = _stub("restore", "Restore the state root from a backup.")
select = _stub("select", "Choose the approved habits that apply to a prompt.")
