"""analyze for a person: what was read, the candidates proposed and what to do next."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from habitus.render.habits import wording
from habitus.render.terminal import esc, shorten


def analyze(result: dict[str, Any], out: Console) -> None:
    proposals = result.get("proposals") or []
    batches = result.get("batches") or []
    dry = " (dry run: nothing written)" if result.get("dry_run") else ""
    out.print(
        f"Analyzed {result.get('records', 0)} observation(s) in {len(batches)} batch(es) with the "
        f"{esc(result.get('analyzer'))} analyzer{dry}."
    )
    if proposals:
        table = Table(show_edge=False, pad_edge=False, header_style="bold")
        table.add_column("outcome", no_wrap=True)
        table.add_column("habit", ratio=1, overflow="fold")
        table.add_column("stage", no_wrap=True)
        for p in proposals:
            table.add_row(esc(p.get("outcome")), shorten(wording(p), 300), esc(p.get("stage")))
        out.print(table)
        out.print("[dim]Review them: habitus habit list --status candidate[/dim]")
    else:
        out.print("No new candidate habits.")
    failed = [b for b in batches if b.get("outcome") not in (None, "ok", "committed", "dry_run")]
    if failed:
        out.print(f"[yellow]{len(failed)} batch(es) did not commit[/yellow] (retried by the next run).")
    for note in result.get("memory_suggestions") or []:
        out.print(f"[dim]Memory suggestion: {shorten(note.get('content'), 200)}[/dim]")
    for habit in result.get("dormant") or []:
        out.print(f"[dim]{esc(habit.get('id'))} went dormant: the user reversed it.[/dim]")
