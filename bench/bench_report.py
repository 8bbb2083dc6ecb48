"""Status activity and the HTML report over a large root.

- activity: `habitus.report.activity.activity` (what `habitus status` adds on a terminal) over 14 days
  of a root holding 100,000 observations spread over 30 days, 10,000 selection-log rows and 2,000
  advise notes: the observation log is counted by a binary search per day boundary, so the figure
  should not grow with the log;
- report: `habitus report` (the whole command, a subprocess) on the same root with 200 habits of 10
  evidence quotes each.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from harness import HABITUS, REPO, Row, median_ms, temp_root, time_call, time_command

sys.path.insert(0, str(REPO / "src"))

OBSERVATIONS = 100_000
SPREAD_DAYS = 30
SELECTS = 10_000
NOTES = 2_000
HABITS = 200


def _fill(root: Path) -> None:
    from habitus.state import observations as obs
    from habitus.state.root import StateRoot

    payload = {"kind": "pair", "harness": "generic", "user": "u" * 300, "assistant": "a" * 1200}
    origin = {"harness": "generic", "source": "bench", "event": None}
    now = time.time()
    per_day = OBSERVATIONS // SPREAD_DAYS
    original = obs.utc_now
    try:
        for day in range(SPREAD_DAYS):
            stamp = time.strftime(
                "%Y-%m-%dT12:00:00.000Z", time.gmtime(now - (SPREAD_DAYS - 1 - day) * 86400)
            )
            obs.utc_now = lambda stamp=stamp: stamp  # records carry the day they are written on
            entries = (obs.Entry(payload, origin, obs.fingerprint("bench", day, i)) for i in range(per_day))
            obs.append(StateRoot(root), entries, wait=60)
    finally:
        obs.utc_now = original


def _ledger(root: Path) -> None:
    from habitus.habits import rows
    from habitus.habits.law import load_law
    from habitus.habits.store import Ledger
    from habitus.habits.wording import wording_checksum
    from habitus.state.db import utc_now
    from habitus.state.root import StateRoot

    state = StateRoot(root)
    now = time.time()
    with Ledger.open(state, wait=60) as ledger, ledger.tx():
        law = load_law(state)
        for i in range(HABITS):
            condition, behavior = f"When task {i} comes up", f"Do step {i} first"
            wording = wording_checksum(condition, behavior, 1)
            stamp = utc_now()
            rows.insert(ledger.conn, "habits", {
                "id": f"h-{i:012x}", "condition": condition, "behavior": behavior, "polarity": 1,
                "confidence_bp": 7000, "status": "active" if i % 2 else "candidate", "origin": "analyzed",
                "candidate_key": f"k{i}", "wording": wording, "approved_wording": wording if i % 2 else None,
                "approved_at": stamp if i % 2 else None, "law": law.fingerprint, "law_findings": "[]",
                "reason": None, "created_at": stamp, "updated_at": stamp,
            })  # fmt: skip
            for j in range(10):
                day = time.strftime("%Y-%m-%d", time.gmtime(now - j * 86400))
                rows.insert(ledger.conn, "habit_evidence", {
                    "habit_id": f"h-{i:012x}", "ref": f"1:{i * 10 + j}", "day": day,
                    "note": f"you forgot step {i} again, as on day {j}", "actor": "analyze", "created_at": stamp,
                })  # fmt: skip
    conn = sqlite3.connect(root / "ledger.sqlite", isolation_level=None)
    conn.execute("BEGIN")
    for i in range(SELECTS):
        at = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now - (i % SPREAD_DAYS) * 86400))
        conn.execute(
            "INSERT INTO select_log (at, mode, judge, model_id, outcome, reason, candidates, retrieved, selected,"
            " reasons, latency_ms) VALUES (?, 'cli', 'local', NULL, 'selected', 'r', 3, 3, 1, '{}', 5)",
            (at,),
        )
    for i in range(NOTES):
        at = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(now - (i % SPREAD_DAYS) * 86400))
        conn.execute(
            "INSERT INTO advise_notes (scope, finding, severity, tag, reviewer, note, status, channel, created_at,"
            " delivered_at) VALUES ('s', ?, 'concern', NULL, 'local', '', 'delivered', 'context', ?, ?)",
            ("f" * 64, at, at),
        )
    conn.execute("COMMIT")
    conn.close()


def run(runs: int) -> list[Row]:
    from habitus.report.activity import activity
    from habitus.state.root import StateRoot

    with temp_root() as folder:
        root = folder / "state"
        started = time.perf_counter()
        _fill(root)
        _ledger(root)
        setup_s = time.perf_counter() - started
        found = activity(StateRoot(root), wait=5)
        assert found["totals"]["observations"] == (OBSERVATIONS // SPREAD_DAYS) * 14, found["totals"]
        computed = median_ms(time_call(lambda: activity(StateRoot(root), wait=5), runs=runs))
        out = folder / "report.html"
        page = median_ms(time_command([HABITUS, "report", "--root", str(root), "--out", str(out)], runs=runs))
        size = out.stat().st_size
        subprocess.run([HABITUS, "status", "--root", str(root)], check=True, capture_output=True)
    return [
        Row(
            "status activity (14 days, 100,000 observations, 10,000 selections)",
            computed,
            runs,
            "<= 50 ms",
            computed <= 50,
            f"in process; root built in {setup_s:.0f} s",
        ),
        Row(
            "report (200 habits x 10 quotes, same root)",
            page,
            runs,
            "<= 1,500 ms",
            page <= 1500,
            f"whole command; page {size // 1024} KiB",
        ),
    ]
