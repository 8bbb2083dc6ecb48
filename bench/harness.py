"""Timing helpers for the benchmarks: whole processes, medians after a warm-up, one table."""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HABITUS = str(Path(sys.executable).parent / "habitus")


@dataclass
class Row:
    name: str
    median_ms: float
    runs: int
    target: str = ""
    ok: bool | None = None
    note: str = ""


def time_command(
    argv: list[str], *, runs: int = 15, warmup: int = 2, stdin: bytes = b"", env: dict[str, str] | None = None
) -> list[float]:
    """Wall-clock seconds of each of `runs` executions of argv, after `warmup` untimed ones."""
    full_env = {**os.environ, **(env or {})}
    samples = []
    for index in range(warmup + runs):
        started = time.perf_counter()
        done = subprocess.run(argv, input=stdin, capture_output=True, env=full_env, check=False)
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"{argv} exited {done.returncode}: {done.stderr[-500:]!r}")
        if index >= warmup:
            samples.append(elapsed)
    return samples


def time_call(fn, *, runs: int = 15, warmup: int = 2) -> list[float]:  # type: ignore[no-untyped-def]
    """Seconds of each of `runs` in-process calls of fn(), after warm-up calls."""
    samples = []
    for index in range(warmup + runs):
        started = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - started
        if index >= warmup:
            samples.append(elapsed)
    return samples


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


@contextmanager
def temp_root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="habitus-bench-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def machine() -> str:
    cores = os.cpu_count()
    try:
        with open("/proc/meminfo") as handle:
            kib = int(handle.readline().split()[1])
        memory = f"{kib / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        memory = "unknown memory"
    return f"{platform.system()} {platform.machine()}, {cores} cores, {memory}, Python {platform.python_version()}"


def settle(root: Path, *, quiet_s: float = 0.2, limit_s: float = 10.0) -> None:
    """Wait until the warm worker of `root` (and every process it forked) has used no CPU for `quiet_s`:
    the review a Stop queued after its answer is done, as it is when a person types the next prompt.
    Without it, back-to-back samples time the previous turn's review as well as the hook."""
    import json

    habitus = Path(sys.executable).parent / "habitus"
    env = {**os.environ, "HABITUS_HOME": str(root)}
    done = subprocess.run([str(habitus), "worker", "status"], capture_output=True, env=env, check=False)
    try:
        main = int(json.loads(done.stdout).get("pid") or 0)
    except (ValueError, AttributeError):
        return
    if not main:
        return
    ticks, since, started = -1, time.monotonic(), time.monotonic()
    while time.monotonic() - started < limit_s:
        now = _tree_ticks(main)
        if now != ticks:
            ticks, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return
        time.sleep(0.02)


def _tree_ticks(main: int) -> int:
    """CPU ticks (user + system) of `main` and its descendants, from /proc."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        ticks[int(entry)] = int(fields[11]) + int(fields[12])
    tree, frontier = {main}, [main]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    return sum(ticks.get(pid, 0) for pid in tree)
