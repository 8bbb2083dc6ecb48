"""What `habitus review` shows and the decisions it applies, through the commands' own functions.

`load` gathers the review queue: pending possible duplicates and conflicts first (they block
approval), then candidates and habits the law suppressed, then active, disabled and dormant habits.
Each item carries the checksum it was shown with. `apply` turns one key press into exactly the call
the equivalent command makes, with that checksum, so the ledger (habit rows, relations, audit rows)
ends up as `habit approve ID --checksum C`, `habit reject ...`, `dedupe resolve ...` would leave it:

    approve / reject / disable / enable / archive   lifecycle.<action>   (habit <action> ID --checksum C)
    edit                                            lifecycle.edit       (habit edit ID --checksum C --condition ... --behavior ...)
    keep-separate / merge / supersede               dedupe.resolve       (dedupe resolve RID --checksum C --action A)

Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from habitus.errors import HabitusError
from habitus.habits import dedupe, detail, lifecycle
from habitus.habits.law import Law
from habitus.habits.store import Ledger, habits, relations

if TYPE_CHECKING:
    from habitus.embed.engine import Embedder

HABIT_ACTIONS: dict[str, tuple[str, ...]] = {
    "candidate": ("approve", "reject", "edit"),
    "suppressed_by_law": ("reject", "edit", "archive"),
    "active": ("disable", "archive"),
    "disabled": ("enable", "archive"),
    "dormant": ("enable", "disable", "archive"),
}
RELATION_ACTIONS = {
    "duplicate": ("keep-separate", "merge", "supersede"),
    "conflict": ("keep-separate", "supersede"),
}
ORDER = ("candidate", "suppressed_by_law", "active", "disabled", "dormant")


@dataclass(frozen=True)
class Item:
    """One thing to decide on, exactly as it was shown."""

    kind: str  # "relation" or "habit"
    id: str
    checksum: str  # the relation checksum, or the habit's review checksum
    actions: tuple[str, ...]
    body: dict[str, Any]  # detail.describe() of a habit; dedupe.describe() (+ "keeps") of a relation


def load(ledger: Ledger, law: Law) -> list[Item]:
    """The review queue, read in one transaction (every row verified)."""
    items: list[Item] = []
    with ledger.tx():
        pending = sorted(relations(ledger.conn, pending=True), key=lambda r: (-r["similarity_bp"], r["id"]))
        for relation in pending:
            body = dedupe.describe(ledger, relation, law)
            body["keeps"] = dedupe.default_survivors(ledger, relation)
            items.append(
                Item(
                    "relation", relation["id"], relation["checksum"], RELATION_ACTIONS[relation["kind"]], body
                )
            )
        found = habits(ledger.conn, ORDER)
        found.sort(key=lambda h: ORDER.index(h["status"]))  # stable: confidence then id within a status
        for habit in found:
            body = detail.describe(ledger, habit["id"], law)
            items.append(Item("habit", habit["id"], habit["wording"], HABIT_ACTIONS[habit["status"]], body))
    return items


def apply(
    ledger: Ledger,
    item: Item,
    action: str,
    *,
    embedder: Callable[[], Embedder],
    wording: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """Apply one decision on an item as shown (its checksum): the result of the command's function."""
    if action not in item.actions:
        raise HabitusError("usage", f"{action} does not apply to this item", hint="see the keys below")
    if item.kind == "relation":
        model = embedder() if action in ("merge", "supersede") else None  # as `dedupe resolve` loads it
        return dedupe.resolve(ledger, item.id, item.checksum, action, embedder=model)
    if action == "edit":
        if wording is None:
            raise HabitusError("usage", "edit needs the new wording")
        return lifecycle.edit(ledger, item.id, item.checksum, *wording, embedder=embedder())
    if action in ("approve", "enable"):
        return getattr(lifecycle, action)(ledger, item.id, item.checksum, embedder=embedder())
    return getattr(lifecycle, action)(ledger, item.id, item.checksum)
