"""Terminal output: what a progress callback costs a loop, and drawing a 100-habit table."""

from __future__ import annotations

import io
import statistics
import time
from unittest import mock

from harness import Row

CALLS = 1_000_000


def _progress_ns_per_call() -> float:
    from habitus.render import progress

    sink = io.StringIO()
    with (
        mock.patch.object(progress, "for_people", lambda stream: True),
        mock.patch("habitus.render.terminal.sys.stderr", sink),
        progress.bar("bench") as report,
    ):
        assert report is not None
        started = time.perf_counter()
        for i in range(CALLS):
            report(i, CALLS)
        elapsed = time.perf_counter() - started
    return elapsed / CALLS * 1e9


def _table_ms() -> float:
    from rich.console import Console

    from habitus.render.habits import habit_list

    items = [
        {
            "n": n,
            "status": "candidate" if n % 3 else "active",
            "condition": f"When working on part {n} of the release",
            "behavior": "Do build the wheel, install it in a clean venv and run it first.",
            "checksum": f"{n:064x}",
            "law": "ok",
            "evidence": {"observations": 3, "days": 2, "stage": "reviewable"},
            "pending_relations": [],
        }
        for n in range(1, 101)
    ]
    result = {"v": 1, "items": items, "counts": {"candidate": 67, "active": 33}, "snapshot_expires_at": "x"}
    started = time.perf_counter()
    habit_list(result, Console(file=io.StringIO(), width=120, color_system="truecolor"))
    return (time.perf_counter() - started) * 1000


def run(runs: int) -> list[Row]:
    per_call = statistics.median(_progress_ns_per_call() for _ in range(3))
    table = statistics.median(_table_ms() for _ in range(max(3, runs // 5)))
    return [
        Row(
            "progress callback, per call (throttled redraw)",
            per_call / 1e6,
            3,
            "<= 1 us a call",
            per_call <= 1000,
            f"{per_call:.0f} ns a call over {CALLS:,} calls",
        ),
        Row(
            "habit list table, 100 habits (rich, 120 columns)",
            table,
            max(3, runs // 5),
            "<= 250 ms",
            table <= 250,
        ),
    ]
