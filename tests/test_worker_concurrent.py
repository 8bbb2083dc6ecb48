"""The warm worker answers calls side by side: its serving processes, forked from the warm one, each
run a call with the client's own environment, directory and stdin; one that dies or waits holds up
nobody else.

All real: the console script, the detached worker, real git folders, real project stores, real locks.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import fasteners

from conftest import BIN, run
from habitus.worker.server import MEMBERS
from obs_helpers import payloads
from worker_helpers import (
    EVENT,
    HABIT,
    TIMEOUT,
    env_for,
    gone,
    hook,
    prepare,
    status,
    stopped_after,
    wait_ready,
)

START = {"hook_event_name": "SessionStart", "session_id": "c-1", "source": "startup"}


def stop_event(folder: Path, session: str, answer: str) -> dict[str, Any]:
    """A Stop event whose transcript holds one finished turn: capture stores it as one observation."""
    from advise_helpers import Transcript

    path = folder / f"{session}.jsonl"
    Transcript(path, session=session).prompt(f"question of {session}").say(answer)
    return {
        "hook_event_name": "Stop",
        "session_id": session,
        "transcript_path": str(path),
        "last_assistant_message": answer,
    }


def call(
    args: list[str], event: dict[str, Any], env: dict[str, str], cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [str(BIN / "habitus"), *args, "--harness", "claude-code"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    assert process.stdin is not None
    process.stdin.write(json.dumps(event).encode())
    process.stdin.close()
    process.stdin = None
    return process


def answer(process: subprocess.Popen[bytes]) -> bytes:
    out, err = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0 and err == b"", err
    return out


def repo_with_fact(base: Path, name: str, fact: str) -> Path:
    """A git checkout (a .git folder is all habitus looks for) whose project store holds one fact."""
    repo = base / name
    (repo / ".git").mkdir(parents=True)
    done = subprocess.run(
        [str(BIN / "habitus"), "memory", "retain", fact, "--kind", "fact", "--store", "project"],
        cwd=repo,
        capture_output=True,
        timeout=TIMEOUT,
        env=env_for(Path(os.environ["HABITUS_HOME"]), worker=False),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return repo


def call_processes(worker: int) -> list[int]:
    """The worker's serving processes (its children) now."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == worker:
                found.append(int(entry.name))
    return found


def test_concurrent_calls_get_the_answers_of_their_own_cwd_env_and_stdin(
    state_root: Path, tmp_path: Path
) -> None:
    prepare(state_root)
    repos = {
        "a": repo_with_fact(tmp_path, "a", "Repository a deploys with make ship."),
        "b": repo_with_fact(tmp_path, "b", "Repository b deploys with cargo xtask ship."),
    }
    other = {**EVENT, "prompt": "what is a mutex?"}
    cold = env_for(state_root, worker=False)
    expected = {
        "select-habit": answer(call(["select"], EVENT, cold)),
        "select-none": answer(call(["select"], other, cold)),
        "index-a": answer(call(["memory", "index"], START, cold, repos["a"])),
        "index-b": answer(call(["memory", "index"], START, cold, repos["b"])),
        # the environment counts: with select switched off by a root of its own, nothing is said
        "index-elsewhere": answer(
            call(["memory", "index"], START, env_for(tmp_path / "empty", worker=False))
        ),
    }
    assert HABIT["behavior"].encode() in expected["select-habit"] and expected["select-none"] == b""
    assert b"make ship" in expected["index-a"] and b"cargo xtask" not in expected["index-a"]
    assert b"cargo xtask" in expected["index-b"] and b"make ship" not in expected["index-b"]
    warm = env_for(state_root)
    with stopped_after(state_root):
        wait_ready(state_root)
        for key in ("select-habit", "index-a"):  # warm calls, one at a time
            event = EVENT if key.startswith("select") else START
            args = ["select"] if key.startswith("select") else ["memory", "index"]
            assert answer(call(args, event, warm, repos["a"])) == expected[key]
        before = status(state_root)["served"]
        plan = [
            ("select-habit", ["select"], EVENT, warm, None),
            ("select-none", ["select"], other, warm, None),
            ("index-a", ["memory", "index"], START, warm, repos["a"]),
            ("index-b", ["memory", "index"], START, warm, repos["b"]),
            ("index-elsewhere", ["memory", "index"], START, env_for(tmp_path / "empty"), None),
        ] * 3
        started = [(key, call(args, event, env, cwd)) for key, args, event, env, cwd in plan]
        got = [(key, answer(process)) for key, process in started]
        assert [out == expected[key] for key, out in got] == [True] * len(plan)
        # every warm call of this root was the worker's (the other root's are their own processes')
        assert status(state_root)["served"] >= before + 12 - 3


def test_a_call_held_on_a_lock_does_not_hold_up_the_next(state_root: Path, tmp_path: Path) -> None:
    """A capture waiting for the observations lock (a long analyze) keeps its call process busy; a
    select started meanwhile is answered by the worker at once, not after the capture."""
    prepare(state_root)
    run(["config", "set", "hooks.lock_wait_ms", "5000"])
    warm = env_for(state_root)
    with stopped_after(state_root):
        wait_ready(state_root)
        for args, event in ((["capture"], stop_event(tmp_path, "q-0", "Warm.")), (["select"], EVENT)):
            assert hook(args, event, warm).returncode == 0
        lock = fasteners.InterProcessLock(str(state_root / "locks" / "observations.lock"))
        assert lock.acquire(blocking=True, timeout=5)
        try:
            held = call(["capture"], stop_event(tmp_path, "q-1", "Done."), warm)
            time.sleep(1.0)  # a serving process has taken the capture and waits on the lock
            served = status(state_root)["served"]
            began = time.monotonic()
            assert HABIT["behavior"].encode() in hook(["select"], EVENT, warm).stdout
            took = time.monotonic() - began
            assert status(state_root)["served"] == served + 1  # the worker answered it
            assert held.poll() is None, "the capture was to be still waiting for the lock"
            assert took < 4.0, took
        finally:
            lock.release()
        assert answer(held) == b""


def test_kill_9_of_the_serving_processes_leaves_the_worker_serving(state_root: Path, tmp_path: Path) -> None:
    """Every serving process is killed while one of them waits on the observations lock inside a
    capture; that capture's client does it in its own process (one observation, as without a worker),
    the worker replaces them and answers the next hooks."""
    prepare(state_root)
    run(["config", "set", "hooks.lock_wait_ms", "5000"])
    warm = env_for(state_root)
    first = stop_event(tmp_path, "k-0", "Warm.")
    event = stop_event(tmp_path, "k-1", "Tabs it is.")
    with stopped_after(state_root):
        worker = wait_ready(state_root)["pid"]
        assert hook(["capture"], first, warm).returncode == 0
        members = call_processes(worker)
        assert len(members) == MEMBERS
        lock = fasteners.InterProcessLock(str(state_root / "locks" / "observations.lock"))
        assert lock.acquire(blocking=True, timeout=5)
        try:
            client = call(["capture"], event, warm)
            time.sleep(1.0)  # a serving process has taken it and waits on the lock
            for pid in members:
                os.kill(pid, signal.SIGKILL)
            assert all(gone(pid) for pid in members)
        finally:
            lock.release()
        assert answer(client) == b""
        assert status(state_root)["pid"] == worker
        served = status(state_root)["served"]
        assert HABIT["behavior"].encode() in hook(["select"], EVENT, warm).stdout
        assert status(state_root)["served"] == served + 1
        replaced = call_processes(worker)
        assert len(replaced) == MEMBERS and not set(replaced) & set(members)
    messages = [p["assistant"] for p in payloads(state_root)]
    assert messages.count("Tabs it is.") == 1 and messages.count("Warm.") == 1


def test_more_calls_than_serving_processes_do_not_wait_for_one(state_root: Path, tmp_path: Path) -> None:
    """Every serving process waits on a held lock inside a capture; a select started then is not left
    waiting for one (its client does it itself once its turn has passed) and answers while the lock
    is held; no capture is stored twice (one that waited out hooks.lock_wait_ms gave up, logged)."""
    prepare(state_root)
    run(["config", "set", "hooks.lock_wait_ms", "5000"])
    warm = env_for(state_root)

    def stop(n: int) -> dict[str, Any]:
        return stop_event(tmp_path, f"m-{n}", f"Answer {n}.")

    with stopped_after(state_root):
        wait_ready(state_root)
        assert hook(["capture"], stop(0), warm).returncode == 0
        lock = fasteners.InterProcessLock(str(state_root / "locks" / "observations.lock"))
        assert lock.acquire(blocking=True, timeout=5)
        try:
            clients = [call(["capture"], stop(n), warm) for n in range(1, MEMBERS + 1)]
            time.sleep(1.0)  # each serving process has taken one
            assert HABIT["behavior"].encode() in answer(call(["select"], EVENT, warm))
        finally:
            lock.release()
        for process in clients:
            assert answer(process) == b""
    messages = [p["assistant"] for p in payloads(state_root)]
    assert len(messages) == len(set(messages)) and "Answer 0." in messages


def test_with_a_threaded_model_every_call_is_answered_in_the_worker_itself(state_root: Path) -> None:
    """embed.threads above 1 gives the model a thread pool, which a forked process would wait on for
    ever: the worker then answers each call in its main process, one at a time, and forks none."""
    prepare(state_root)
    assert run(["config", "set", "embed.threads", "2"]).exit == 0
    expected = answer(call(["select"], EVENT, env_for(state_root, worker=False)))
    assert HABIT["behavior"].encode() in expected
    warm = env_for(state_root)
    with stopped_after(state_root):
        worker = wait_ready(state_root)["pid"]
        served = status(state_root)["served"]
        for _ in range(3):
            process = call(["select"], EVENT, warm)
            time.sleep(0.1)
            assert call_processes(worker) == []
            assert answer(process) == expected
        assert status(state_root)["served"] == served + 3


def test_an_idle_worker_leaves_with_its_serving_processes(state_root: Path) -> None:
    """After the idle time without a request the main process ends its serving processes, removes
    its socket and lets its lifetime lock go (idle time shortened to a second once it is ready)."""
    prepare(state_root)
    probe = (
        "import os, sys, threading, time\n"
        "from pathlib import Path\n"
        "from habitus.worker.server import MEMBERS, Worker\n"
        "worker = Worker(Path(sys.argv[1]))\n"
        "def shorten():\n    worker.ready.wait()\n    time.sleep(0.5)\n    worker.idle_s = 1.0\n"
        "threading.Thread(target=shorten, daemon=True).start()\n"
        "assert worker.claim()\n"
        "try:\n    worker.serve()\n    members = list(worker.members)\nfinally:\n    worker.close()\n"
        "print(len(members) == MEMBERS, [m for m in members if os.path.exists(f'/proc/{m}')])\n"
    )
    done = subprocess.run(
        [str(BIN / "python"), "-c", probe, str(state_root)],
        capture_output=True,
        timeout=TIMEOUT,
        env=env_for(state_root),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(b"\n")[0] == b"True []"
    assert not (state_root / "worker.sock").exists()
    assert status(state_root)["running"] is False


def test_the_serving_processes_compute_on_one_thread(state_root: Path) -> None:
    """A select over a few habits multiplies matrices large enough for OpenBLAS to start its threads,
    which on cores the agent keeps busy made a warm select 2-3 times slower: the worker's processes
    keep to one thread (os.cpu_count() of them otherwise)."""
    prepare(state_root)
    for n, topic in enumerate(("a database migration", "the changelog", "a flaky test", "a code review")):
        habit = {
            "condition": f"When working on {topic}",
            "behavior": f"Do note it in TODO {n}.",
            "polarity": 1,
        }
        assert run(["habit", "declare"], habit).exit == 0
    warm = env_for(state_root)
    for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        warm.pop(name, None)
    with stopped_after(state_root):
        worker = wait_ready(state_root)["pid"]
        for _ in range(2 * MEMBERS):
            assert HABIT["behavior"].encode() in hook(["select"], EVENT, warm).stdout
        for pid in [worker, *call_processes(worker)]:
            assert len(os.listdir(f"/proc/{pid}/task")) == 1, pid
