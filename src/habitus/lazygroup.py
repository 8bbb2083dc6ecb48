"""A click group whose subcommands are imported only when one runs, so `--help` imports none of them.

LazyGroup(table=...)   table: name -> ("module[:attribute]", one-line help); attribute defaults to cli
"""

from __future__ import annotations

import importlib
from typing import Any

import click


class LazyGroup(click.Group):
    def __init__(self, *args: Any, table: dict[str, tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.table = table

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.table)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = self.table.get(cmd_name)
        if entry is None:
            return None
        module_name, _, attribute = entry[0].partition(":")
        command = getattr(importlib.import_module(module_name), attribute or "cli")
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, self.table[name][1]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
