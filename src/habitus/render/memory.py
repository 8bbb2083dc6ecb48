"""memory retrieve and recall for a person: ranked records with their kind, store and tags."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from habitus.render.terminal import esc, shorten


def memory_retrieve(result: dict[str, Any], out: Console) -> None:
    items = result.get("items") or []
    total = result.get("total", len(items))
    if not items:
        out.print("No memories found.")
    else:
        table = Table(show_edge=False, pad_edge=False, header_style="bold")
        table.add_column("#", justify="right", no_wrap=True)
        table.add_column("memory", ratio=1, overflow="fold")
        table.add_column("kind", no_wrap=True)
        table.add_column("store", no_wrap=True)
        table.add_column("id", no_wrap=True)
        offset = result.get("offset") or 0
        for number, item in enumerate(items, start=offset + 1):
            tags = item.get("tags") or []
            text = shorten(item.get("content"), 600)
            if tags:
                text += f"\n[dim]tags: {shorten(', '.join(map(str, tags)), 200)}[/dim]"
            table.add_row(
                str(number),
                text,
                esc(item.get("kind")),
                esc(item.get("store")),
                str(item.get("id", ""))[:8],
            )
        out.print(table)
    mode = result.get("mode")
    shown = f"{len(items)} of {total}" if total != len(items) else str(total)
    out.print(f"[dim]{shown} shown{f', ranked by {mode}' if mode else ''}.[/dim]")
    if result.get("summarised") or result.get("truncated"):
        out.print("[dim]Long items were shortened; --full prints them whole.[/dim]")


def memory_recall(result: dict[str, Any], out: Console) -> None:
    memory = result.get("memory")
    if memory is None:
        out.print(f"No active memory with that id in the {esc(result.get('store'))} store.")
        return
    out.print(
        f"[bold]{esc(memory.get('id'))}[/bold]  {esc(memory.get('kind'))} in {esc(result.get('store'))} "
        f"({esc(memory.get('scope'))}/{esc(memory.get('namespace'))})"
    )
    out.print(esc(memory.get("content")))
    facts = [f"importance {memory.get('importance')}", f"confidence {memory.get('confidence')}"]
    if memory.get("tags"):
        facts.append("tags " + esc(", ".join(map(str, memory["tags"]))))
    facts.append(f"updated {memory.get('updated_at', '')}")
    if memory.get("expires_at"):
        facts.append(f"expires {memory['expires_at']}")
    out.print(f"[dim]{'; '.join(facts)}[/dim]")
