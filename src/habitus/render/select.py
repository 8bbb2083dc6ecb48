"""select for a person: which approved habits apply to the prompt, and why (or why none)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from habitus.render.habits import wording
from habitus.render.terminal import esc


def select(result: dict[str, Any], out: Console) -> None:
    habits = result.get("habits") or []
    considered = (
        f"{result.get('candidates', 0)} approved habit(s) considered, {result.get('retrieved', 0)} retrieved"
    )
    if not habits:
        out.print(f"No habit applies ({esc(result.get('reason'))}); {considered}.")
    else:
        out.print(
            f"[bold]{len(habits)} habit(s) apply[/bold] ({considered}, judge {esc(result.get('judge'))}):"
        )
        for habit in habits:
            out.print(f"  [green]{esc(habit.get('id'))}[/green]  {esc(wording(habit))}")
    reasons = result.get("reasons") or {}
    if reasons:
        out.print(
            "[dim]Turned down: " + esc(", ".join(f"{n} {why}" for why, n in reasons.items())) + "[/dim]"
        )
