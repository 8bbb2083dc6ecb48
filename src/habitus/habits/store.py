"""Reading habits from the ledger: verified rows, evidence statistics, and what `select` may use.

Every function that returns rows verifies their checksums first (`checksum_mismatch`, exit 3).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from habitus.errors import HabitusError
from habitus.habits import rows, scope
from habitus.habits.law import Law
from habitus.state import ledger
from habitus.state.db import Store
from habitus.state.root import StateRoot

STATUSES = ("candidate", "active", "disabled", "dormant", "archived", "suppressed_by_law")
APPROVED = ("active", "disabled")  # what scans compare and candidates are checked against
MIN_OBSERVATIONS = 3
MIN_DAYS = 2
SELECT_CAP = 100


@dataclass
class Ledger:
    """An open ledger connection with its store (for `BEGIN IMMEDIATE` transactions)."""

    root: StateRoot
    store: Store
    conn: sqlite3.Connection

    @classmethod
    def open(cls, root: StateRoot, *, wait: float) -> Ledger:
        """Open for writing (creates and migrates the ledger when needed)."""
        store = ledger.store(root, wait=wait)
        return cls(root, store, store.open_write())

    @classmethod
    def open_read(cls, root: StateRoot, *, wait: float) -> Ledger | None:
        """Open read-only; None when there is no ledger. Never creates or migrates."""
        store = ledger.store(root, wait=wait)
        conn = store.open_read()
        return None if conn is None else cls(root, store, conn)

    def tx(self) -> Any:
        return self.store.write(self.conn)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def stage(observations: int, days: int) -> str:
    """`reviewable` once >= 3 cited observations across >= 2 UTC days, else `collecting`."""
    return "reviewable" if observations >= MIN_OBSERVATIONS and days >= MIN_DAYS else "collecting"


def get_habit(conn: sqlite3.Connection, habit_id: str) -> dict[str, Any]:
    row = conn.execute("SELECT * FROM habits WHERE id = ?", (habit_id,)).fetchone()
    if row is None:
        raise HabitusError("not_found", f"no habit {habit_id}", hint="`habitus habit list --all` lists them")
    return rows.verify("habits", row)


def habits(conn: sqlite3.Connection, statuses: tuple[str, ...] = STATUSES) -> list[dict[str, Any]]:
    """Habits with these statuses, ordered by status, confidence (high first), then id.

    Every habit row is verified, not only the ones returned, so a row tampered into another
    status cannot hide from a listing."""
    order = " ".join(f"WHEN '{s}' THEN {i}" for i, s in enumerate(STATUSES))
    query = f"SELECT * FROM habits ORDER BY CASE status {order} END, confidence_bp DESC, id"
    verified = [rows.verify("habits", r) for r in conn.execute(query)]
    return [h for h in verified if h["status"] in statuses]


def evidence(conn: sqlite3.Connection, habit_id: str) -> list[dict[str, Any]]:
    found = conn.execute("SELECT * FROM habit_evidence WHERE habit_id = ? ORDER BY day, id", (habit_id,))
    return [rows.verify("habit_evidence", r) for r in found]


def evidence_stats(conn: sqlite3.Connection, habit_id: str | None = None) -> dict[str, tuple[int, int]]:
    """habit id -> (distinct cited observations, distinct days); of one habit when `habit_id` is given
    (through the (habit_id, ref) index: analyze asks once per proposal, the whole table grows)."""
    where, params = ("WHERE habit_id = ?", (habit_id,)) if habit_id is not None else ("", ())
    query = f"SELECT habit_id, COUNT(DISTINCT ref), COUNT(DISTINCT day) FROM habit_evidence {where} GROUP BY habit_id"
    return {r[0]: (int(r[1]), int(r[2])) for r in conn.execute(query, params)}


def relations(
    conn: sqlite3.Connection, habit_id: str | None = None, *, pending: bool = False
) -> list[dict[str, Any]]:
    """Relations (of one habit), verified whatever their decision, strongest first."""
    where, params = ("WHERE habit_a = ? OR habit_b = ?", [habit_id, habit_id]) if habit_id else ("", [])
    found = conn.execute(f"SELECT * FROM habit_relations {where} ORDER BY similarity_bp DESC, id", params)
    verified = [rows.verify("habit_relations", r) for r in found]
    return [r for r in verified if r["decision"] == "pending"] if pending else verified


def audit_of(conn: sqlite3.Connection, target: str) -> list[dict[str, Any]]:
    found = conn.execute("SELECT * FROM habit_audit WHERE target = ? ORDER BY id", (target,))
    return [rows.verify("habit_audit", r) for r in found]


def law_valid(habit: dict[str, Any], law: Law) -> bool:
    """Checked against the law in force, and found clean."""
    return habit["law"] == law.fingerprint and habit["law_findings"] == "[]"


def is_approved(habit: dict[str, Any]) -> bool:
    return habit["approved_wording"] is not None and habit["approved_wording"] == habit["wording"]


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    found = dict(conn.execute("SELECT status, COUNT(*) FROM habits GROUP BY status").fetchall())
    return {status: int(found.get(status, 0)) for status in STATUSES}


def status_counts(root: StateRoot, *, wait: float) -> dict[str, int] | None:
    """Habit counts by status for `habitus status`: read-only; None when there is no up-to-date ledger."""
    conn = ledger.store(root, wait=wait).open_current()
    if conn is None:
        return None
    try:
        return counts(conn)
    finally:
        conn.close()


# -- what select uses --------------------------------------------------------------------------


@dataclass(frozen=True)
class ActiveHabit:
    """An approved, active, law-valid habit as `select` sees it."""

    id: str
    condition: str
    behavior: str
    polarity: int
    confidence_bp: int
    wording: str  # review checksum (normalised wording + polarity)
    checksum: str  # row checksum: revalidate with `still_current` before injecting


def count_active(conn: sqlite3.Connection, repo: str | None) -> int:
    """Active habits that apply in `repo` (personal ones and project ones of it), whatever their law."""
    found = conn.execute(
        "SELECT COUNT(*) FROM habits WHERE status = 'active' AND (projects IS NULL OR EXISTS "
        "(SELECT 1 FROM json_each(habits.projects) WHERE json_each.value = ?))",
        (repo,),
    ).fetchone()[0]
    return int(found)


def active_habits(
    conn: sqlite3.Connection, law: Law, *, repo: str | None = None, limit: int = SELECT_CAP
) -> list[ActiveHabit]:
    """Approved, active habits checked clean against the law in force that apply in `repo` (the
    repository top folder of the request, habitus.habits.scope.repo_of; None outside any): personal
    habits, and project habits scoped to that repository. Confidence (high first) then id, at most
    `limit`. Rows are verified (a tampered row raises checksum_mismatch). Habits checked against an
    older law are left out until `habitus habit recheck`."""
    found = conn.execute(
        "SELECT * FROM habits WHERE status = 'active' AND law = ? AND law_findings = '[]' "
        "AND approved_wording = wording AND (projects IS NULL OR EXISTS "
        "(SELECT 1 FROM json_each(habits.projects) WHERE json_each.value = ?)) "
        "ORDER BY confidence_bp DESC, id LIMIT ?",
        (law.fingerprint, repo, limit),
    )
    out = []
    for row in found:
        h = rows.verify("habits", row)
        if not scope.applies(h, repo):  # the checksum-covered value decides, not the query alone
            continue
        out.append(
            ActiveHabit(
                h["id"],
                h["condition"],
                h["behavior"],
                h["polarity"],
                h["confidence_bp"],
                h["wording"],
                h["checksum"],
            )
        )
    return out


def still_current(conn: sqlite3.Connection, law: Law, chosen: list[ActiveHabit]) -> bool:
    """Re-read the chosen habits: True only if each is unchanged, active and law-valid now."""
    if not chosen:
        return True
    marks = ", ".join("?" for _ in chosen)
    found = {
        r["id"]: r
        for r in conn.execute(f"SELECT * FROM habits WHERE id IN ({marks})", [h.id for h in chosen])
    }
    for habit in chosen:
        row = found.get(habit.id)
        if row is None or row["checksum"] != habit.checksum:
            return False
        values = rows.verify("habits", row)
        if values["status"] != "active" or not law_valid(values, law) or not is_approved(values):
            return False
    return True
