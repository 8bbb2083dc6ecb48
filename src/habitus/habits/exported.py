"""Which habits `habit export` writes out: the approved ones that apply here, checked once more."""

from __future__ import annotations

from habitus.errors import HabitusError
from habitus.habits.law import load_law
from habitus.habits.scope import repo_of
from habitus.habits.share import Shown
from habitus.habits.store import Ledger, active_habits, count_active
from habitus.habits.wording import clean_field
from habitus.state.root import StateRoot


def exportable(root: StateRoot, *, wait: float, limit: int) -> tuple[list[Shown], int]:
    """The active, approved, law-valid habits that apply here (personal ones, and project ones of the
    repository around the current directory), re-checked by the wording law (redactor included), and
    how many active habits that apply here were left out (checked against an older law: `habit recheck`)."""
    ledger = Ledger.open_read(root, wait=wait)
    if ledger is None:
        return [], 0
    repo = repo_of(None)
    with ledger:
        found = active_habits(ledger.conn, load_law(root), repo=repo, limit=limit)
        active = count_active(ledger.conn, repo)
    shown = []
    for habit in found:
        try:
            clean_field("condition", habit.condition)
            clean_field("behavior", habit.behavior)
        except HabitusError:
            raise HabitusError(
                "refused",
                f"habit {habit.id}: its wording no longer passes the redactor; nothing was exported",
                hint=f"`habitus habit show {habit.id}`, then archive it or declare a clean wording",
                reason="secret",
                id=habit.id,
            ) from None
        shown.append(Shown(habit.condition, habit.behavior, habit.polarity, habit.wording))
    return shown, active - len(shown)
