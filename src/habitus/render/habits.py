"""habit list and habit show for a person: a numbered table, and one habit's wording, evidence and trail."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from habitus.render.terminal import esc, shorten

STATUS_STYLE = {"candidate": "yellow", "active": "green", "disabled": "dim", "dormant": "dim"}


def wording(habit: dict[str, Any]) -> str:
    """Condition → behaviour, unescaped: callers pass it through shorten() or esc()."""
    return f"{habit.get('condition', '')} → {habit.get('behavior', '')}"


def habit_list(result: dict[str, Any], out: Console) -> None:
    items = result.get("items") or []
    if not items:
        out.print("No habits. `habitus analyze` proposes candidates from captured conversations.")
        _counts(result, out)
        return
    table = Table(show_edge=False, pad_edge=False, expand=False, header_style="bold")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("habit", ratio=1, overflow="fold")
    table.add_column("evidence", no_wrap=True)
    table.add_column("checksum", no_wrap=True)
    for item in items:
        evidence = item.get("evidence") or {}
        status = item.get("status", "")
        notes = []
        if item.get("law") not in (None, "ok"):
            notes.append(f"law: {esc(item['law'])}")
        if item.get("pending_relations"):
            notes.append(f"{len(item['pending_relations'])} possible duplicate(s)")
        if item.get("scope") == "project":
            notes.append(_projects(item))
        text = shorten(wording(item)) + (f"\n[dim]{'; '.join(notes)}[/dim]" if notes else "")
        table.add_row(
            str(item.get("n", "")),
            f"[{STATUS_STYLE.get(status, 'red')}]{esc(status)}[/]",
            text,
            f"{evidence.get('observations', 0)} obs / {evidence.get('days', 0)} d, {evidence.get('stage', '')}",
            str(item.get("checksum", ""))[:12],
        )
    out.print(table)
    _counts(result, out)
    out.print(
        f"[dim]Numbers valid until {result.get('snapshot_expires_at', '')}: "
        "habitus habit approve N --checksum PREFIX[/dim]"
    )


def _projects(habit: dict[str, Any]) -> str:
    """A project habit applies only inside the repositories it was adopted in: say which."""
    folders = [str(f) for f in habit.get("projects") or []]
    shown = ", ".join(folders[:2]) + (f" and {len(folders) - 2} more" if len(folders) > 2 else "")
    return f"project habit: only in {esc(shown)}"


def _counts(result: dict[str, Any], out: Console) -> None:
    counts = result.get("counts") or {}
    shown = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
    if shown:
        out.print(f"Ledger: {shown}.")


def _finding(finding: object) -> str:
    """{"rule", "source", "field", "line"?} as "rule deny in law.md line 3 (behavior)"."""
    if not isinstance(finding, dict):
        return str(finding)
    where = str(finding.get("source", ""))
    if finding.get("line") is not None:
        where += f" line {finding['line']}"
    return f"rule {finding.get('rule', '')} in {where} ({finding.get('field', '')})"


def habit_show(result: dict[str, Any], out: Console) -> None:
    habit = result.get("habit") or {}
    status = habit.get("status", "")
    out.print(f"[bold]{esc(habit.get('id'))}[/bold]  [{STATUS_STYLE.get(status, 'red')}]{esc(status)}[/]")
    out.print(f"When:  {esc(habit.get('condition'))}")
    out.print(f"Then:  {esc(habit.get('behavior'))}")
    summary = habit.get("evidence_summary") or {}
    approved = "approved" if habit.get("approved") else "not approved"
    out.print(
        f"{approved}, origin {habit.get('origin', '')}, confidence {habit.get('confidence_bp', 0) / 100:.0f}%, "
        f"law {esc(habit.get('law'))}; evidence {summary.get('observations', 0)} observations over "
        f"{summary.get('days', 0)} days ({summary.get('stage', '')})"
    )
    out.print(f"checksum {habit.get('checksum', '')}")
    if habit.get("scope") == "project":
        out.print(_projects(habit))
    provenance = habit.get("provenance")
    if provenance:
        edited = ", edited after export" if provenance.get("edited") else ""
        exported = provenance.get("exported_checksum") or "none"
        out.print(
            f"imported from {esc(provenance.get('source'))} (exporter's checksum {esc(exported)}{edited})"
        )
    for finding in habit.get("law_findings") or []:
        out.print(f"[red]law:[/red] {shorten(_finding(finding))}")
    if habit.get("reason"):
        out.print(f"reason: {shorten(habit['reason'])}")
    evidence = habit.get("evidence") or []
    if evidence:
        out.print(f"\n[bold]Evidence[/bold] ({len(evidence)})")
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True)
        grid.add_column(ratio=1, overflow="fold")
        for e in evidence:
            grid.add_row(f"  {esc(e.get('day'))}", shorten(e.get("note"), 300))
        out.print(grid)
    relations = habit.get("relations") or []
    if relations:
        out.print(f"\n[bold]Relations[/bold] ({len(relations)})")
        for r in relations:
            other = r.get("habit_b") if r.get("habit_a") == habit.get("id") else r.get("habit_a")
            out.print(
                f"  {esc(r.get('kind'))} with {esc(other)}: {esc(r.get('decision'))}, "
                f"similarity {r.get('similarity_bp', 0) / 100:.0f}%"
            )
    audit = habit.get("audit") or []
    if audit:
        out.print(f"\n[bold]Audit[/bold] ({len(audit)})")
        for a in audit:
            out.print(f"  {esc(a.get('created_at'))}  {esc(a.get('action'))} by {esc(a.get('actor'))}")
