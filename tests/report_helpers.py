"""Known events written into a real state root, for the activity, status and report tests."""

from __future__ import annotations

import calendar
import sqlite3
import time
from pathlib import Path
from typing import Any

from conftest import run
from habitus.state.root import StateRoot

NOW = calendar.timegm((2026, 12, 1, 15, 0, 0, 0, 0, 0))  # a fixed "today": 2026-12-01, 15:00 UTC


def stamp(day: str, hour: int = 12) -> str:
    return f"{day}T{hour:02d}:00:00.000Z"


def declare(condition: str, behavior: str) -> dict[str, Any]:
    done = run(["habit", "declare", "--condition", condition, "--behavior", behavior])
    assert done.exit == 0, done.stderr
    return done.result["habit"]


def candidate(
    state_root: Path, number: int, condition: str, behavior: str, quotes: list[tuple[str, str]]
) -> str:
    """An analyzed candidate with evidence quotes ((day, note) pairs), sealed like analyze seals it."""
    from habitus.habits import rows
    from habitus.habits.law import load_law
    from habitus.habits.store import Ledger
    from habitus.habits.wording import wording_checksum
    from habitus.state.db import utc_now

    root = StateRoot(state_root)
    habit_id = f"h-{0xC0FFEE000000 + number:012x}"
    with Ledger.open(root, wait=5) as ledger, ledger.tx():
        now = utc_now()
        rows.insert(
            ledger.conn,
            "habits",
            {
                "id": habit_id,
                "condition": condition,
                "behavior": behavior,
                "polarity": 1,
                "confidence_bp": 6000,
                "status": "candidate",
                "origin": "analyzed",
                "candidate_key": f"key-{number}",
                "wording": wording_checksum(condition, behavior, 1),
                "approved_wording": None,
                "approved_at": None,
                "law": load_law(root).fingerprint,
                "law_findings": "[]",
                "reason": None,
                "created_at": now,
                "updated_at": now,
            },
        )
        for i, (day, note) in enumerate(quotes):
            rows.insert(
                ledger.conn,
                "habit_evidence",
                {
                    "habit_id": habit_id,
                    "ref": f"1:{number * 100 + i}",
                    "day": day,
                    "note": note,
                    "actor": "analyze",
                    "created_at": now,
                },
            )
    return habit_id


def select_rows(state_root: Path, per_day: dict[str, list[int]]) -> None:
    """Selection-log rows as select writes them: day -> the `selected` count of each call."""
    conn = sqlite3.connect(state_root / "ledger.sqlite", isolation_level=None)
    try:
        for day, calls in per_day.items():
            for selected in calls:
                conn.execute(
                    "INSERT INTO select_log (at, mode, judge, model_id, outcome, reason, candidates, retrieved,"
                    " selected, reasons, latency_ms) VALUES (?, 'cli', 'local', NULL, ?, 'r', 1, 1, ?, '{}', 5)",
                    (stamp(day), "selected" if selected else "none", selected),
                )
    finally:
        conn.close()


def advise_notes(state_root: Path, per_day: dict[str, tuple[int, int]]) -> None:
    """day -> (notes delivered, pending notes muted at delivery), rows as advise leaves them."""
    conn = sqlite3.connect(state_root / "ledger.sqlite", isolation_level=None)
    try:
        for day, (delivered, muted) in per_day.items():
            for status, count in (("delivered", delivered), ("muted", muted)):
                for _ in range(count):
                    conn.execute(
                        "INSERT INTO advise_notes (scope, finding, severity, tag, reviewer, note, status, channel,"
                        " created_at, delivered_at) VALUES ('s', ?, 'concern', NULL, 'local', '', ?, ?, ?, ?)",
                        (
                            "f" * 64,
                            status,
                            "context" if status == "delivered" else None,
                            stamp(day, 9),
                            stamp(day, 10) if status == "delivered" else None,
                        ),
                    )
        conn.execute("UPDATE advise_health SET muted = 4 WHERE id = 1")
    finally:
        conn.close()


def analyze_runs(state_root: Path, runs: list[tuple[str, int, int]]) -> None:
    """(day, records, proposals) per run, sealed like analyze records them."""
    from habitus.habits.store import Ledger
    from habitus.learn.queue import record_run

    with Ledger.open(StateRoot(state_root), wait=5) as ledger, ledger.tx():
        for day, records, proposals in runs:
            record_run(
                ledger.conn,
                {
                    "analyzer": "local",
                    "started_at": stamp(day),
                    "finished_at": stamp(day, 13),
                    "outcome": "ok",
                    "batches": 1,
                    "records": records,
                    "proposals": proposals,
                    "data": "{}",
                },
            )


def observations_on(monkeypatch: Any, state_root: Path, per_day: dict[str, int]) -> None:
    """Capture real pairs through `habitus capture`, with the log's clock set to each day in turn."""
    from habitus.state import observations

    run(["config", "set", "capture.enabled", "true"])
    n = 0
    with monkeypatch.context() as patch:
        for day, count in per_day.items():
            for _ in range(count):
                n += 1
                patch.setattr(observations, "utc_now", lambda day=day, n=n: f"{day}T08:{n % 60:02d}:00.000Z")
                request = {"user": f"question number {n} about the build", "assistant": f"answer {n}"}
                done = run(["capture"], request)
                assert done.exit == 0 and done.result["appended"] == 1, done.stderr


def mutes_on(state_root: Path, days: list[str]) -> None:
    """mutes.json entries added on these days (the file advise writes)."""
    import orjson

    entries = [
        {"id": f"{i:064x}", "label": f"finding {i}", "at": stamp(day)} for i, day in enumerate(days, 1)
    ]
    path = state_root / "mutes.json"
    path.write_bytes(orjson.dumps({"version": 1, "mutes": entries}))
    path.chmod(0o600)


def days_back(n: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(NOW - n * 86400))
