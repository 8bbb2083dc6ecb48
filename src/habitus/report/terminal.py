"""`habitus status` for a person at a terminal: a short summary and per-day activity bars.

Plain text from the standard library (no table library: status is a quick command). Colour only
when NO_COLOR is unset and TERM is not `dumb`; block characters only when stdout can encode them.
"""

from __future__ import annotations

import os
from typing import Any

BLOCKS = " ▁▂▃▄▅▆▇█"
ASCII = " .:-=+*#%@"
ROWS = (
    ("habits selected", "habits_selected"),
    ("prompts checked", "selects"),
    ("notes delivered", "notes_delivered"),
    ("notes muted", "notes_muted"),
    ("mutes added", "mutes_added"),
    ("observations", "observations"),
    ("analyze runs", "analyze_runs"),
    ("proposals", "proposals"),
)


def wants_color(environ: dict[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return "NO_COLOR" not in env and env.get("TERM", "") != "dumb"


def can_draw_blocks(encoding: str | None) -> bool:
    try:
        BLOCKS.encode(encoding or "ascii")
    except (LookupError, UnicodeEncodeError):
        return False
    return True


def bars(values: list[int], *, blocks: str = BLOCKS) -> str:
    """One character per value, scaled to the largest; zero is a dot, any non-zero at least one step."""
    top = max(values, default=0)
    out = []
    for value in values:
        if value <= 0:
            out.append("·" if blocks is BLOCKS else ".")
        else:
            out.append(blocks[max(1, round(value * (len(blocks) - 1) / top))])
    return "".join(out)


def render(status: dict[str, Any], activity: dict[str, Any], *, color: bool, unicode: bool) -> str:
    """The status summary and the activity table, as lines of text ending with a newline."""
    bold = (lambda s: f"\x1b[1m{s}\x1b[0m") if color else (lambda s: s)
    dim = (lambda s: f"\x1b[2m{s}\x1b[0m") if color else (lambda s: s)
    lines: list[str] = []

    def field(name: str, value: str) -> None:
        lines.append(f"{bold(f'{name:<13}')}{value}")

    versions = status["versions"]
    lines.append(
        bold(f"habitus {versions['habitus']}")
        + dim(f"  python {versions['python']}{' ·' if unicode else ','} sqlite {versions['sqlite']}")
    )
    field("root", f"{status['root']}" + ("" if status["exists"] else dim("  (not created yet)")))
    enabled = status["enabled"]
    field(
        "enabled",
        "  ".join(f"{name} {_on(enabled.get(name))}" for name in ("capture", "select", "advise"))
        + f"  analyzer {enabled.get('analyzer')}  judge {enabled.get('select_judge')}",
    )
    embeddings = status.get("embeddings")
    if embeddings:
        field("embeddings", f"{embeddings.get('model')}  memory {' + '.join(embeddings.get('memory') or [])}")
    models = status.get("models") or []
    if models:
        field(
            "models",
            ", ".join(
                f"{m.get('name')} ({m.get('preset') or m.get('kind')}: {', '.join(m.get('used_for') or []) or 'unused'})"
                for m in models
            ),
        )
    unknown = status["config"].get("unknown_keys") or []
    if unknown:
        field("config", f"unknown keys in {status['config']['path']}: {', '.join(unknown)}")
    stores = status["stores"]
    field("stores", "  ".join(f"{name} {_store(s)}" for name, s in stores.items()))
    habits = status.get("habits")
    field(
        "habits",
        "none yet"
        if not habits
        else ", ".join(f"{n} {name.replace('_', ' ')}" for name, n in habits.items() if n) or "none yet",
    )
    select = status.get("select")
    if select:
        latency = select.get("median_latency_ms")
        field(
            "select",
            f"{select['calls']} calls, {select['with_guidance']} with guidance, {select['failed']} failed"
            + (f", median {latency} ms" if latency is not None else ""),
        )
    obs = status["observations"]
    field(
        "observations",
        f"{obs['records']} in generation {obs['generation']}" if obs["exists"] else "none captured",
    )
    analyze = status["analyze"]
    last = analyze.get("last_run")
    field(
        "analyze",
        f"{analyze['unread_total']} unread"
        + (
            f"; last run {last['started_at'][:16].replace('T', ' ')} {last['outcome']}: "
            f"{last['records']} read, {last['proposals']} proposed"
            if last
            else "; never run"
        ),
    )
    advise = status["advise"]
    if advise.get("reviews") is not None:
        notes = advise["notes"]
        field(
            "advise",
            f"{advise['reviews']} reviews, {notes['delivered']} notes delivered, {notes['muted']} muted"
            + (dim("  (paused)") if advise.get("paused") else ""),
        )
    mutes = advise["mutes"]
    field("mutes", f"{mutes['count']}" if mutes["ok"] else f"mutes.json unreadable: {mutes.get('problem')}")
    if status["errors"]["logged"]:
        field("errors", f"{status['errors']['logged']} logged in {status['errors']['path']}")

    lines.append("")
    series = activity["series"]
    span = (
        f"{series[0]['day'][5:]} … {series[-1]['day'][5:]}"
        if unicode
        else f"{series[0]['day'][5:]} .. {series[-1]['day'][5:]}"
    )
    lines.append(bold(f"last {activity['days']} days (UTC)") + dim(f"  {span}"))
    blocks = BLOCKS if unicode else ASCII
    for label, key in ROWS:
        values = [row[key] for row in series]
        total = activity["totals"][key]
        lines.append(f"  {label:<16}{total:>7}  {bars(values, blocks=blocks)}")
    if not activity["sources"].get("mutes", True):
        lines.append(dim(f"  mutes.json unreadable: {activity['sources'].get('mutes_problem')}"))
    lines.append(dim("  habitus report writes this as an HTML page with the habit list"))
    return "\n".join(lines) + "\n"


def _on(value: Any) -> str:
    return "on" if value is True else "off" if value is False else str(value)


def _store(store: dict[str, Any]) -> str:
    if not store["exists"]:
        return "absent"
    if store["needs_migration"]:
        return f"v{store['schema_version']} (upgrade pending)"
    return f"v{store['schema_version']}"
