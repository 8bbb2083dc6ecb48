"""habitus schedule: install, check or remove the systemd user timer that runs analyze daily."""

from __future__ import annotations

import click

from habitus import io
from habitus.dispatch import StateGroup
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Not read.",
    "stdout": 'install: {"v":1,"unit_dir","files":{"service":{"path","action"},"timer":{...}},"command",'
    '"on_calendar","enabled","systemctl":"ok"|"not found"} (action: created, replaced or unchanged); '
    'with --print-crontab: {"v":1,"crontab","command"}. '
    'status: {"v":1,"unit_dir","installed","current","files":{"service":{"path","exists","managed",'
    '"matches"},"timer":{...}},"timer":{"enabled","active"}|null,"command","on_calendar"}. '
    'remove: {"v":1,"unit_dir","removed":[paths],"absent":[paths],"systemctl"}.',
    "files": "$XDG_CONFIG_HOME/systemd/user/habitus-analyze.service and habitus-analyze.timer "
    "(default ~/.config/systemd/user/). Their first line marks them as habitus's; a file there without "
    "it is never overwritten or deleted (refused, exit 3). install creates the state root if needed, "
    "because the service may write only there.",
}


@click.group(cls=StateGroup)
def cli() -> None:
    """Install, check or remove the daily analyze timer.

    The timer runs `habitus analyze --root ROOT` every day at 03:30 local time
    (a run missed while the machine was off happens at the next start), as a
    sandboxed systemd user service that may write only to the state root. The
    units name the absolute path of the habitus that installed them. Nothing is
    written unless you run install; remove deletes only what install wrote.

    \b
    Examples:
      habitus schedule install
      habitus schedule status --pretty
      (crontab -l; habitus schedule install --print-crontab | jq -r .crontab) | crontab -
      habitus schedule remove
    """


@cli.command("install")
@click.option(
    "--print-crontab",
    is_flag=True,
    help="Write nothing; print a crontab line for the same daily run instead.",
)
@state_options
@output_options
def install_command(print_crontab: bool, root: StateRoot, wait: float, pretty: bool) -> None:
    """Write the systemd user units and enable the timer.

    Runs `systemctl --user daemon-reload` and `systemctl --user enable --now
    habitus-analyze.timer`. Without systemctl on PATH the units are still
    written and "enabled" is false; a systemctl that fails is the error
    systemctl_failed. The service gets no API keys from your shell: give a
    model's key to the user manager (systemctl --user set-environment, or an
    EnvironmentFile= in a drop-in made with systemctl --user edit).

    \b
    Example:  habitus schedule install --root ~/.local/share/habitus
    """
    from habitus import schedule

    if print_crontab:
        io.write_result(
            {"crontab": schedule.crontab_line(root.path), "command": schedule.command(root.path)},
            pretty=pretty,
        )
        return
    root.ensure()
    io.write_result(schedule.install(root.path), pretty=pretty)


@cli.command("status")
@state_options
@output_options
def status_command(root: StateRoot, wait: float, pretty: bool) -> None:
    """Report the installed units and whether they match what install would write.

    "current" is false when the units name another habitus, another state root,
    or an older unit text: run install again to refresh them.

    \b
    Example:  habitus schedule status | jq .current
    """
    from habitus import schedule

    io.write_result(schedule.status(root.path), pretty=pretty)


@cli.command("remove")
@output_options
def remove_command(pretty: bool) -> None:
    """Disable the timer and delete the units that install wrote.

    A file in their place that habitus did not write is left alone and the
    command is refused (exit 3).

    \b
    Example:  habitus schedule remove
    """
    from habitus import schedule

    io.write_result(schedule.remove(), pretty=pretty)
