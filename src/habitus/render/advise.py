"""advise mutes for a person: the muted findings, with the short id `advise unmute` takes."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from habitus.render.terminal import esc, shorten


def advise_mutes(result: dict[str, Any], out: Console) -> None:
    items = result.get("items") or []
    if not items:
        out.print("No muted findings.")
        return
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("id", no_wrap=True)
    table.add_column("finding", ratio=1, overflow="fold")
    table.add_column("muted at", no_wrap=True)
    for item in items:
        table.add_row(esc(item.get("id")), shorten(item.get("label"), 300), str(item.get("at", "")))
    out.print(table)
    out.print(f"[dim]{result.get('count', len(items))} muted; habitus advise unmute ID[/dim]")
