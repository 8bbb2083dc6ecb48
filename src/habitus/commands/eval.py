"""habitus eval: measure a capability on a labelled set (precision, recall, confusion table).

Each subcommand lives in its own module (commands/eval_<name>.py) and is loaded only when it runs.
"""

from __future__ import annotations

import importlib

import click

# name -> (module, one-line help); the help is repeated so `habitus eval --help` imports nothing.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "advise": (
        "habitus.commands.eval_advise",
        "Measure the local advise reviewer: precision, recall, misses by category.",
    ),
    "analyze": ("habitus.commands.eval_analyze", "Measure the local analyzer on labelled conversations."),
    "memory": (
        "habitus.commands.eval_memory",
        "Measure memory retrieve: recall@k and MRR by category and language.",
    ),
    "select": (
        "habitus.commands.eval_select",
        "Measure the select judge: precision, recall, confusion by category.",
    ),
}


class LazyEvalGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = SUBCOMMANDS.get(cmd_name)
        if entry is None:
            return None
        command = importlib.import_module(entry[0]).cli
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, SUBCOMMANDS[name][1]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyEvalGroup)
def cli() -> None:
    """Measure habitus on a labelled set: precision, recall and a confusion table.

    Labelled sets are JSON lines; each subcommand documents its format.

    \b
    Example:  habitus eval select --cases tests/fixtures/select/cases.jsonl
    """
