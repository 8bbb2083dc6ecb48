"""The memory index: bounded text an agent gets at session start, pointing at memories by id.

Order: pins (project store, then global; oldest pin first), then the most recently updated active
records of each store (project, then global; at most `per_store` each; observations are left out,
they belong to observational memory). One row per record:

    - [<store>] [<metadata.source>] <id> <preview of at most 240 characters>

(`[source]` only when the record has one). A project store this user does not trust
(habitus.memory.trust) is not read at all: its summary says `trusted: false` and why. Rows are added under a one-line header while the whole text
stays within `budget` characters; the first row that does not fit ends the list, so a row is never cut.
When not even one row fits, the text is empty. Pins whose record is removed, expired or gone are
skipped and counted as unresolved; they stay pinned until `unpin`. Reading never creates a store.
A record holding an instruction-injection marker (stored before habitus refused them, or written by
another program) is never shown: it is counted in `withheld` (`memory verify` names it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from habitus.memory import records
from habitus.memory.bound import preview
from habitus.memory.stores import MemoryStore, both, open_store
from habitus.state.root import StateRoot

HEADER = "Memory index (habitus; `habitus memory recall ID --store STORE` shows a whole record):"
PER_STORE = 20


def _row(store: str, record: dict[str, Any]) -> str:
    source = record["metadata"].get("source")
    label = f" [{source}]" if isinstance(source, str) and source else ""
    return f"- [{store}]{label} {record['id']} {preview(record['content'])}"


def build(stores: list[MemoryStore], *, budget: int, now: str, per_store: int = PER_STORE) -> dict[str, Any]:
    pinned: list[str] = []
    recent: list[str] = []
    unresolved = withheld = 0
    summary: dict[str, Any] = {}
    for store in stores:
        verdict = store.verdict()
        if store.exists() and not verdict.trusted:  # never read: its text must not reach the agent
            summary[store.name] = {"path": str(store.path), "exists": True, **verdict.describe()}
            continue
        conn = store.reader()
        summary[store.name] = {"path": str(store.path), "exists": conn is not None}
        if conn is None:
            continue
        shown: set[str] = set()
        pins = conn.execute(
            "SELECT m.* FROM memory_pins p LEFT JOIN memories m ON m.id = p.id AND m.removed_at IS NULL "
            "AND (m.expires_at IS NULL OR m.expires_at > ?) ORDER BY p.pinned_at, p.id",
            (now,),
        ).fetchall()
        for row in pins:
            if row["id"] is None:
                unresolved += 1
                continue
            shown.add(row["id"])
            record = records.from_row(row)
            if not records.is_plain(record):
                withheld += 1
                continue
            pinned.append(_row(store.name, record))
        rows = conn.execute(
            # `+column` keeps the planner on the updated_at index (see memory_store: memories_live).
            f"SELECT {records.COLUMNS} FROM memories WHERE +removed_at IS NULL "
            "AND (+expires_at IS NULL OR +expires_at > ?) AND +kind != 'observation' "
            "ORDER BY updated_at DESC, id ASC LIMIT ?",
            (now, per_store + len(shown)),
        ).fetchall()
        fresh = [records.from_row(row) for row in rows if row["id"] not in shown][:per_store]
        clean = [record for record in fresh if records.is_plain(record)]
        withheld += len(fresh) - len(clean)
        recent.extend(_row(store.name, record) for record in clean)
    lines: list[str] = []
    length = len(HEADER)
    for line in pinned + recent:
        if length + 1 + len(line) > budget:
            break
        lines.append(line)
        length += 1 + len(line)
    text = "\n".join([HEADER, *lines]) if lines else ""
    return {
        "text": text,
        "chars": len(text),
        "budget": budget,
        "rows": len(lines),
        "pins": len(pinned) + unresolved,
        "unresolved_pins": unresolved,
        "withheld": withheld,
        "stores": summary,
    }


def of_root(
    root: StateRoot,
    *,
    store: str | None,
    wait: float,
    cwd: Path | None,
    budget: int,
    now: str,
    per_store: int = PER_STORE,
) -> dict[str, Any]:
    """The index of the named store, or without one of the project store (inside a repository, the
    one around `cwd`) and the global store."""
    targets = [open_store(root, store, wait=wait, cwd=cwd)] if store else both(root, wait=wait, cwd=cwd)
    try:
        return build(targets, budget=budget, now=now, per_store=per_store)
    finally:
        for target in targets:
            target.close()
