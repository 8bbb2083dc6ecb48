"""dedupe list for a person: each pair's two wordings side by side, numbered for `dedupe resolve`."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from habitus.render.habits import wording
from habitus.render.terminal import esc, shorten


def dedupe_list(result: dict[str, Any], out: Console) -> None:
    items = result.get("items") or []
    if not items:
        out.print("No possible duplicates or conflicts waiting. `habitus dedupe scan` looks for them.")
        return
    table = Table(show_edge=False, pad_edge=False, header_style="bold", show_lines=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("first habit", ratio=1, overflow="fold")
    table.add_column("second habit", ratio=1, overflow="fold")
    table.add_column("similar", justify="right", no_wrap=True)
    table.add_column("checksum", no_wrap=True)
    for item in items:
        first, second = [*(item.get("habits") or []), {}, {}][:2]
        kind = f"{esc(item.get('kind'))}\n[dim]{esc(item.get('decision'))}[/dim]"
        if not item.get("current", True):
            kind += "\n[red]wording changed[/red]"
        table.add_row(
            str(item.get("n", "")),
            kind,
            f"{esc(first.get('id'))}\n{shorten(wording(first), 300)}",
            f"{esc(second.get('id'))}\n{shorten(wording(second), 300)}",
            f"{item.get('similarity_bp', 0) / 100:.0f}%",
            str(item.get("checksum", ""))[:12],
        )
    out.print(table)
    out.print(
        f"[dim]Numbers valid until {result.get('snapshot_expires_at', '')}: "
        "habitus dedupe resolve N ACTION --checksum PREFIX[/dim]"
    )
