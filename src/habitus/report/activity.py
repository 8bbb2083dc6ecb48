"""Per-day activity over the last N UTC days, read from what the stores already record.

- the selection log (ledger `select_log`): calls, calls that injected guidance, habits injected;
- advise notes (ledger `advise_notes`): notes delivered (by delivery day) and notes muted (by the day
  they were held back: at review, or when a pending note's finding had been muted meanwhile); and
  the mutes the user added (`mutes.json`, by their `at`). Releases before this one recorded a note
  muted at review only in advise's counter (`advise_health.muted`), without a day: `all_time`
  carries that counter;
- observations captured (the observation log's record stamps, habitus.state.observations);
- analyze runs (ledger `analyze_runs`): runs, records read, proposals.

Counts only: no prompt, note text, wording or path is read here. One read transaction on the
ledger, one read of mutes.json, manifests plus a bounded binary search on the observation log.
The stores bound their own history (select_log keeps 10,000 rows, analyze_runs 50), so an old day
may read lower than it was.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from habitus.errors import HabitusError
from habitus.state.root import StateRoot

DEFAULT_DAYS = 14
MAX_DAYS = 366
NOTES_SCAN = 100_000  # newest advise_notes rows looked at (one per delivered note at most)
SERIES = (
    "selects",
    "with_guidance",
    "habits_selected",
    "notes_delivered",
    "notes_muted",
    "mutes_added",
    "observations",
    "analyze_runs",
    "analyze_records",
    "proposals",
)


def day_list(days: int, now: float | None = None) -> list[str]:
    """The last `days` UTC days, oldest first, ending today."""
    if not 1 <= days <= MAX_DAYS:
        raise HabitusError("usage", f"--days: expected 1..{MAX_DAYS}, got {days}")
    today = int((time.time() if now is None else now) // 86400) * 86400
    return [time.strftime("%Y-%m-%d", time.gmtime(today - i * 86400)) for i in range(days - 1, -1, -1)]


def activity(
    root: StateRoot, *, days: int = DEFAULT_DAYS, wait: float, now: float | None = None
) -> dict[str, Any]:
    """{"days", "since", "until", "series": [{"day", <SERIES counts>}], "totals", "all_time", "sources"}.

    `sources` says which stores could be read: "ledger" (false when absent or not migrated yet),
    "observations", and "mutes" (false with `mutes_problem` when mutes.json is malformed; advise
    then delivers nothing either). A newer or corrupt ledger or observation log is refused (exit 3),
    as everywhere else."""
    from habitus.state import observations

    names = day_list(days, now)
    rows = {day: dict.fromkeys(SERIES, 0) for day in names}
    since = names[0]
    sources: dict[str, Any] = {"ledger": False, "observations": False, "mutes": True}
    all_time = {"notes_muted": 0}

    ledger_counts = _ledger(root, since, wait=wait)
    if ledger_counts is not None:
        sources["ledger"] = True
        per_day, all_time["notes_muted"] = ledger_counts
        for (day, key), value in per_day.items():
            if day in rows:
                rows[day][key] += value

    for day, count in observations.records_per_day(root, names).items():
        rows[day]["observations"] = count
    sources["observations"] = root.observations.is_dir()

    try:
        for day in _mutes_added(root):
            if day in rows:
                rows[day]["mutes_added"] += 1
    except HabitusError as exc:
        sources["mutes"] = False
        sources["mutes_problem"] = exc.message

    series = [{"day": day, **rows[day]} for day in names]
    totals = {key: sum(rows[day][key] for day in names) for key in SERIES}
    return {
        "days": days,
        "since": since,
        "until": names[-1],
        "series": series,
        "totals": totals,
        "all_time": all_time,
        "sources": sources,
    }


def _ledger(root: StateRoot, since: str, *, wait: float) -> tuple[dict[tuple[str, str], int], int] | None:
    """(day, series) -> count from the ledger in one read transaction, and advise's counter of muted
    notes since the ledger began; None without an up-to-date ledger (nothing is created)."""
    from habitus.habits import rows
    from habitus.state import ledger
    from habitus.state.db import translate

    store = ledger.store(root, wait=wait)
    conn = store.open_current()
    if conn is None:
        return None
    found: dict[tuple[str, str], int] = {}

    def add(day: str, key: str, value: int) -> None:
        found[(day, key)] = found.get((day, key), 0) + int(value or 0)

    try:
        conn.execute("BEGIN")
        for day, calls, guided, injected in conn.execute(
            "SELECT substr(at, 1, 10) AS day, COUNT(*), SUM(outcome = 'selected'), SUM(selected)"
            " FROM select_log WHERE at >= ? GROUP BY day",
            (since,),
        ):
            add(day, "selects", calls)
            add(day, "with_guidance", guided)
            add(day, "habits_selected", injected)
        for day, status, count in conn.execute(
            "SELECT substr(CASE status WHEN 'delivered' THEN delivered_at ELSE created_at END, 1, 10) AS day,"
            " status, COUNT(*) FROM (SELECT * FROM advise_notes ORDER BY id DESC LIMIT ?)"
            " WHERE status IN ('delivered', 'muted') GROUP BY day, status",
            (NOTES_SCAN,),
        ):
            if day and day >= since:
                add(day, "notes_delivered" if status == "delivered" else "notes_muted", count)
        for row in conn.execute("SELECT * FROM analyze_runs WHERE started_at >= ? ORDER BY id", (since,)):
            run = rows.verify("analyze_runs", row)  # a tampered run row fails closed like status
            day = run["started_at"][:10]
            add(day, "analyze_runs", 1)
            add(day, "analyze_records", run["records"])
            add(day, "proposals", run["proposals"])
        muted = conn.execute("SELECT muted FROM advise_health WHERE id = 1").fetchone()
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise translate(exc, store.path) from None
    finally:
        conn.close()
    return found, int(muted[0]) if muted else 0


def _mutes_added(root: StateRoot) -> list[str]:
    """The UTC day each mute was added (mutes.json; malformed raises state_corrupt)."""
    from habitus.advise import mutes

    return [str(entry.get("at") or "")[:10] for entry in mutes.load(root).entries]
