"""Hook mode's hard deadline, with real processes and real held locks: a hook never waits out a lock,
never outlives its budget, and says why in errors.jsonl without waiting on what failed."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import run
from worker_helpers import EVENT, env_for, hook, prepare, status, stopped_after, wait_ready

START = {"hook_event_name": "SessionStart", "session_id": "w-1", "source": "startup"}
STOP = {
    "hook_event_name": "Stop",
    "session_id": "w-1",
    "last_assistant_message": "Done.",
    "transcript_path": None,
}
# A turn's hooks, as Claude Code runs them.
TURN = [
    (["memory", "index"], START),
    (["select"], EVENT),
    (["advise"], EVENT),
    (["capture"], STOP),
    (["advise"], STOP),
]


@contextmanager
def state_lock_held(root: Path) -> Iterator[None]:
    """Hold the state lock exclusively, as a restore does while it swaps files."""
    fd = os.open(root / "locks" / "state.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def errors(root: Path) -> list[dict[str, object]]:
    path = root / "errors.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def turn(env: dict[str, str]) -> tuple[float, list[bytes]]:
    started = time.monotonic()
    outs = []
    for args, event in TURN:
        done = hook(args, event, env)
        assert done.returncode == 0 and done.stderr == b"", done.stderr
        outs.append(done.stdout)
    return time.monotonic() - started, outs


@pytest.mark.parametrize("worker", [False, True], ids=["in-process", "worker"])
def test_with_the_state_lock_held_a_turn_costs_under_a_second_more_and_says_why(
    state_root: Path, worker: bool
) -> None:
    prepare(state_root)
    env = env_for(state_root, worker=worker)
    with stopped_after(state_root):
        if worker:
            wait_ready(state_root)
        turn(env)  # warm the page cache (and the worker)
        normal, outs = turn(env)
        assert any(outs)  # the unlocked turn injects the habit and the index
        with state_lock_held(state_root):
            held, locked_outs = turn(env)
        assert locked_outs == [b""] * len(TURN)  # nothing injected, nothing blocked
        assert held <= normal + 1.0, (held, normal)
        logged = errors(state_root)
        assert len(logged) == len(TURN)
        assert {e["code"] for e in logged} == {"state_locked"}
        assert all("state lock is held" in str(e["message"]) for e in logged)
        assert [e["command"] for e in logged] == ["memory", "select", "advise", "capture", "advise"]
        if worker:
            assert status(state_root)["served"] > 0


def test_an_explicit_wait_is_capped_in_hook_mode(state_root: Path) -> None:
    prepare(state_root)
    with state_lock_held(state_root):
        started = time.monotonic()
        done = hook(["select", "--wait", "30"], EVENT, env_for(state_root, worker=False))
        took = time.monotonic() - started
    assert done.returncode == 0 and done.stdout == b"" and took < 10
    assert [e["code"] for e in errors(state_root)] == ["state_locked"]


def test_the_budget_ends_a_hook_that_takes_too_long(state_root: Path) -> None:
    prepare(state_root)
    assert run(["config", "set", "hooks.budget_ms", "100"]).exit == 0
    started = time.monotonic()
    done = hook(["select"], EVENT, env_for(state_root, worker=False))  # loading the model takes longer
    took = time.monotonic() - started
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    assert took < 5
    logged = errors(state_root)
    assert [e["code"] for e in logged] == ["deadline"] and logged[0]["command"] == "select"
    assert "hooks.budget_ms" in str(logged[0]["message"])


def test_the_error_log_takes_no_lock(state_root: Path) -> None:
    """errors.jsonl is written while the state lock is held by another process, without waiting."""
    from habitus.errors import HabitusError
    from habitus.state import errorlog, guard, statelock
    from habitus.state.root import StateRoot

    prepare(state_root)
    with state_lock_held(state_root):
        with pytest.raises(HabitusError):  # a command that entered the root but could not take the lock
            guard.enter(state_root, 0.05)
        statelock._entered[state_root] = (5.0, guard._recover)  # as a command with the default --wait
        started = time.monotonic()
        errorlog.append(
            StateRoot(state_root), HabitusError("state_locked", "held"), command="x", harness="pi"
        )
        took = time.monotonic() - started
        guard.release_all()
    assert took < 0.5
    assert [e["code"] for e in errors(state_root)] == ["state_locked"]


def test_hook_settings_are_read_without_the_config_module(state_root: Path) -> None:
    from habitus import hookmode

    assert hookmode.read_settings(state_root).budget_ms == hookmode.DEFAULT_BUDGET_MS  # no file
    state_root.mkdir(exist_ok=True)
    (state_root / "config.toml").write_text(
        "[hooks]\nbudget_ms = 2500\nlock_wait_ms = 50\n[worker]\nenabled = false\n"
    )
    got = hookmode.read_settings(state_root)
    assert (got.budget_ms, got.lock_wait_ms, got.worker) == (2500, 50, False)
    (state_root / "config.toml").write_text("[hooks]\nbudget_ms = 'soon'\n")  # invalid: the default
    assert hookmode.read_settings(state_root).budget_ms == hookmode.DEFAULT_BUDGET_MS
    (state_root / "config.toml").write_bytes(b"\xff\xfe not toml")
    assert hookmode.read_settings(state_root).worker is True
    assert run(["config", "set", "hooks.budget_ms", "50"]).exit == 2  # below the minimum: refused


@pytest.mark.parametrize(
    "toml",
    [
        "hooks.budget_ms = 2500\nworker.enabled = false\nembed.threads = 2\n",  # dotted keys
        "hooks = {budget_ms = 2500}\nworker = {enabled = false}\nembed = {threads = 2}\n",  # inline tables
        '["hooks"]\nbudget_ms = 2500\n[ worker ]\nenabled = false\n[embed]\nthreads = 2\n',  # quoted, spaced
        "[capture]\nenabled = true\n[hooks]\nbudget_ms = 2500\n[worker]\nenabled = false\n"
        "[embed]\nthreads = 2\n",
    ],
)
def test_every_spelling_of_the_hook_tables_is_read(state_root: Path, toml: str) -> None:
    from habitus import hookmode

    state_root.mkdir(exist_ok=True)
    (state_root / "config.toml").write_text(toml)
    got = hookmode.read_settings(state_root)
    assert got.budget_ms == 2500
    assert got.worker is False or "worker" not in toml
    assert got.embed_threads == 2


def test_a_config_without_hook_tables_is_answered_without_parsing_it(state_root: Path) -> None:
    """The defaults, without importing tomllib (most of a warm hook's own start)."""
    state_root.mkdir(exist_ok=True)
    (state_root / "config.toml").write_text("[capture]\nenabled = true\n[advise]\nenabled = true\n")
    probe = (
        "import sys\nfrom habitus import hookmode\n"
        f"s = hookmode.read_settings({str(state_root)!r})\n"
        "print(s.budget_ms, s.worker, 'tomllib' in sys.modules)\n"
    )
    from habitus import hookmode

    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=60, check=True)
    assert done.stdout.split() == [str(hookmode.DEFAULT_BUDGET_MS).encode(), b"True", b"False"]
