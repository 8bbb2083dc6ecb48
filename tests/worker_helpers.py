"""Helpers for the warm-worker and hook-deadline tests: real hook processes, a real worker, real locks."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from advise_helpers import enable as enable_advise
from conftest import BIN, run
from obs_helpers import enable as enable_capture

HABIT = {
    "condition": "When about to call a release ready",
    "behavior": "Do build the wheel, install it in a clean venv and run it first.",
}
FACT = "This repo releases from main only."
PROMPT = "bump to 0.6.0 and update the changelog. is it release ready?"
EVENT = {"hook_event_name": "UserPromptSubmit", "session_id": "w-1", "prompt": PROMPT}
TIMEOUT = 90


def prepare(root: Path) -> None:
    """One approved habit, one fact, capture and advise on."""
    enable_capture(root)
    enable_advise(root)
    assert run(["habit", "declare"], {**HABIT, "polarity": 1}).exit == 0
    assert run(["memory", "retain", FACT, "--kind", "fact"]).exit == 0


def env_for(root: Path, *, worker: bool = True, **extra: str) -> dict[str, str]:
    env = {**os.environ, "HABITUS_HOME": str(root), "HABITUS_WORKER": "1" if worker else "0", **extra}
    env.pop("HABITUS_TEST_FAULT", None)
    return env


def hook(
    args: list[str], event: dict[str, Any], env: dict[str, str], *, harness: str = "claude-code"
) -> subprocess.CompletedProcess[bytes]:
    """One hook call as the harness makes it: the console script, the event on stdin."""
    return subprocess.run(
        [str(BIN / "habitus"), *args, "--harness", harness],
        input=json.dumps(event).encode(),
        capture_output=True,
        timeout=TIMEOUT,
        env=env,
        check=False,
    )


def status(root: Path) -> dict[str, Any]:
    done = subprocess.run(
        [str(BIN / "habitus"), "worker", "status", "--root", str(root)],
        capture_output=True,
        timeout=TIMEOUT,
        env=env_for(root),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def wait_ready(root: Path, timeout: float = 60) -> dict[str, Any]:
    """Start the worker with one hook call if none runs, then wait until it has loaded the model."""
    give_up = time.monotonic() + timeout
    if not status(root)["running"]:
        hook(["memory", "index"], {"hook_event_name": "SessionStart", "session_id": "w-0"}, env_for(root))
    while time.monotonic() < give_up:
        found = status(root)
        if found["running"] and found["ready"]:
            return found
        time.sleep(0.1)
    raise AssertionError(f"no ready worker for {root}: {status(root)}")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    return _state(pid) not in ("Z", None)


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def gone(pid: int, timeout: float = 10) -> bool:
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


@contextlib.contextmanager
def stopped_after(root: Path) -> Iterator[None]:
    """Stop (and, if it will not go, kill) this root's worker when the block ends."""
    try:
        yield
    finally:
        found = status(root)
        subprocess.run(
            [str(BIN / "habitus"), "worker", "stop", "--root", str(root)],
            capture_output=True,
            timeout=TIMEOUT,
            env=env_for(root),
            check=False,
        )
        pid = found.get("pid")
        if isinstance(pid, int) and not gone(pid, 5):
            os.kill(pid, signal.SIGKILL)
