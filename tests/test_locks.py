"""Inter-process locks: a held lock answers 75 within --wait; a killed holder frees it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import run

HOLD = """
import sys, time
from habitus.state import locks
from habitus.state.root import StateRoot
with locks.hold(StateRoot.at(sys.argv[1]), sys.argv[2], wait=5):
    print("held", flush=True)
    time.sleep(60)
"""


def hold(root: Path, name: str) -> subprocess.Popen[bytes]:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(root), name], stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
    return holder


def test_held_lock_gives_75_within_wait(state_root: Path) -> None:
    holder = hold(state_root, "config")
    try:
        started = time.monotonic()
        out = run(["config", "set", "capture.enabled", "true", "--wait", "0.5"])
        elapsed = time.monotonic() - started
        assert out.exit == 75
        assert out.error["code"] == "state_locked"
        assert 0.4 <= elapsed < 5
        assert not (state_root / "config.toml").exists()
    finally:
        holder.kill()
        holder.wait()


def test_killed_holder_releases_the_lock(state_root: Path) -> None:
    holder = hold(state_root, "config")
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    out = run(["config", "set", "capture.enabled", "true", "--wait", "2"])
    assert out.exit == 0


def test_lock_is_per_resource(state_root: Path) -> None:
    holder = hold(state_root, "analyze")
    try:
        assert run(["config", "set", "capture.enabled", "true", "--wait", "0"]).exit == 0
    finally:
        holder.kill()
        holder.wait()
