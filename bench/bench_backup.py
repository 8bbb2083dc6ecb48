"""Backup and restore of a state root holding 100,000 memories and 1,000 habits (target: each <= 5 s).

The state is real: 100,000 memories imported through the memory store API (`bench_memory.corpus`, the
same records the memory benchmarks search) and 1,000 approved habits sealed by the production row code
(`tests/habit_seed.py`; no vectors), plus config.toml. Timed in process through the CLI entry
(`habitus backup` / `habitus restore`), so interpreter start-up is not included (see bench_startup).
"""

from __future__ import annotations

import contextlib
import io as stdio
import shutil
import sys
from pathlib import Path

from harness import Row, median_ms, temp_root, time_call

REPO = Path(__file__).resolve().parent.parent
MEMORIES = 100_000
HABITS = 1_000
TARGET_MS = 5_000


def _fill(path: Path) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    import bench_memory

    from habit_seed import seed_habits
    from habitus.state import config
    from habitus.state.root import StateRoot

    root = StateRoot(path)
    config.set_value(root, "capture.enabled", True, wait=5)
    bench_memory.load(path, bench_memory.corpus(MEMORIES))
    seed_habits(
        root,
        (
            {
                "condition": f"When changing area {i} of the code",
                "behavior": f"Run check {i} first",
                "polarity": 1,
            }
            for i in range(HABITS)
        ),
    )


def _habitus(args: list[str]) -> None:
    from habitus.cli import root

    out = stdio.TextIOWrapper(stdio.BytesIO())
    with contextlib.redirect_stdout(out):
        try:
            root.main(args, prog_name="habitus")
        except SystemExit as exit:
            if exit.code:
                raise RuntimeError(f"habitus {args[0]} exited {exit.code}") from None


def run(runs: int) -> list[Row]:
    with temp_root() as base:
        state = base / "state"
        state.mkdir(mode=0o700)
        _fill(state)
        size_mb = sum(p.stat().st_size for p in state.glob("*.sqlite")) / 1e6
        outs = iter(range(10_000))

        def backup() -> None:
            _habitus(["backup", "--root", str(state), "--out", str(base / f"b{next(outs)}")])

        backups = time_call(backup, runs=runs, warmup=1)
        source = base / "b0"

        def restore() -> None:
            _habitus(["restore", "--root", str(state), str(source)])

        restores = time_call(restore, runs=runs, warmup=1)
        for n in range(runs + 1):
            shutil.rmtree(base / f"b{n}", ignore_errors=True)
    note = f"real memory store and habit rows, {size_mb:.0f} MB of SQLite"
    b, r = median_ms(backups), median_ms(restores)
    return [
        Row("backup: 100k memories + 1k habits", b, runs, "<= 5 s", b <= TARGET_MS, note),
        Row(
            "restore: 100k memories + 1k habits",
            r,
            runs,
            "<= 5 s",
            r <= TARGET_MS,
            "validated + journaled swap",
        ),
    ]
