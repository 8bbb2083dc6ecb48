"""Where a command begins: once click has parsed its options and before its body runs, a command that
works on a state root enters it (`habitus.state.guard.enter`: recover an interrupted restore, then hold
the shared state lock until `cli` releases it when the command ends).

    @click.command(cls=StateCommand)      a command with --root/--wait (options.state_options)
    @click.command(cls=ReportCommand)     the same, for a command that only reports (verify)
    @click.group(cls=StateGroup)          its subcommands are StateCommands, its subgroups StateGroups

Option parsing stays option parsing (`options` only declares --root and --wait); this is the one place
that turns them into a held lock. A test walks the command tree: every command with --root is one of
these classes.
"""

from __future__ import annotations

from typing import Any

import click

STATE_LOCK_HOOK_WAIT = 0.05  # seconds: a hook gives up on a restore's exclusive lock almost at once


class StateCommand(click.Command):
    """A command that works on the state root its --root names."""

    sweep = True  # remove the staging copies a killed restore left (ReportCommand leaves them)

    def invoke(self, ctx: click.Context) -> Any:
        enter(ctx, sweep=self.sweep)
        return super().invoke(ctx)


class ReportCommand(StateCommand):
    """A command that only reports: it leaves a killed restore's staging copies for the next command
    (so that verify can report them)."""

    sweep = False


class StateGroup(click.Group, StateCommand):
    """A group whose commands work on a state root. Its own callback, when it takes --root (advise),
    enters the root too: click.Group.invoke runs the callback through StateCommand.invoke (next in
    the method order), after the subcommand's name is resolved, as for any command."""

    command_class = StateCommand
    group_class = type  # subgroups are StateGroups


def enter(ctx: click.Context, *, sweep: bool = True) -> None:
    """Enter the root of a parsed command, if it has one. In hook mode (a `harness` argument) its
    --wait is capped at hooks.lock_wait_ms (habitus.hookmode) for every lock the command takes."""
    from habitus.state.root import StateRoot

    root = ctx.params.get("root")
    if not isinstance(root, StateRoot):
        return
    wait = ctx.params["wait"]
    hook = ctx.params.get("harness") is not None
    if hook:
        from habitus import hookmode

        wait = ctx.params["wait"] = hookmode.lock_wait(wait)  # a hook never waits out a held lock
    from habitus.state import guard

    # Commands share the state lock; only a restore holds it exclusively, and then for longer than any
    # hook can wait: a hook gives up on it almost at once.
    guard.enter(root.path, min(wait, STATE_LOCK_HOOK_WAIT) if hook else wait, sweep=sweep)
