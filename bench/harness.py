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
