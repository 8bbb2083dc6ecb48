"""Load: 8 processes mixing capture, memory retain and retrieve, habit approve and select on one root, all
at once, each running real `habitus` processes back to back: a round of seven commands (capture, retain,
retrieve, approve, select, capture, retain), once; HABITUS_LOAD_ROUNDS=N repeats it for a longer soak. (It
ran for 30 seconds until 2026-12-07: 147 to 250 commands, none busy, nothing one round does not show.)

Afterwards: every command exited 0 or 75 (`state_locked`, with one JSON error object: a busy SQLite
never escapes as a crash or a traceback); no write was lost and none appeared that was not reported
(each worker's successful captures, memories and approvals are exactly what is stored, and nothing
answered 75 is stored); and every invariant verifies (`habitus verify`: stores, row checksums and the
audit chain, FTS, the observation chain, permissions).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BIN, run
from habit_helpers import REVIEWABLE, propose
from memory_helpers import outside_any_repo
from obs_helpers import lines

__all__ = ["outside_any_repo"]  # autouse fixture: no project store in the checkout

WORKERS = 8
ROUNDS = int(os.environ.get("HABITUS_LOAD_ROUNDS", "1"))
WORKER = Path(__file__).resolve().parent / "load_worker.py"

ACTIVE = [
    ("When I ask for a release", "Run the full test suite first"),
    ("When working on the frontend", "Use the shared components"),
    ("When writing commit messages", "Use the imperative mood"),
]
CANDIDATES = [
    ("When writing Go code", "Run gofmt before committing"),
    ("When a test fails", "Read the whole error message first"),
    ("When editing SQL migrations", "Never change a released migration"),
    ("When adding a dependency", "Explain why in the pull request"),
    ("When writing shell scripts", "Start them with set -eu"),
    ("When naming a branch", "Prefix it with the issue number"),
    ("When the build is red", "Fix it before starting new work"),
    ("When writing a README", "Put the install command first"),
    ("When reviewing a pull request", "Check the tests before the code"),
    ("When logging errors", "Include the request id"),
    ("When deploying on a Friday", "Announce it in the team channel"),
    ("When writing CSS", "Use the design tokens for colours"),
    ("When touching the database schema", "Take a backup first"),
    ("When handling user input", "Validate it at the boundary"),
    ("When writing Python", "Add type hints to public functions"),
    ("When a command is slow", "Profile it before optimising"),
]


def stored_memories(root: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{root / 'memory.sqlite'}?mode=ro", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT content FROM memories")]
    finally:
        conn.close()


def statuses(root: Path) -> dict[str, str]:
    conn = sqlite3.connect(f"file:{root / 'ledger.sqlite'}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT id, status FROM habits").fetchall())
    finally:
        conn.close()


@pytest.mark.slow
def test_eight_processes_mixing_commands_lose_nothing(state_root: Path, tmp_path: Path) -> None:
    assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    for condition, behavior in ACTIVE:
        assert run(["habit", "declare"], {"condition": condition, "behavior": behavior}).exit == 0
    candidates = []
    for n, (condition, behavior) in enumerate(CANDIDATES):
        found = propose(condition, behavior, REVIEWABLE, with_vectors=True, start=10 * n)
        assert found["status"] == "candidate" and not found.get("relations"), found
        candidates.append([found["id"], found["checksum"]])
    assert run(["memory", "retain", "a first memory about load"]).exit == 0

    outputs = [tmp_path / f"worker-{w}.jsonl" for w in range(WORKERS)]
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                str(WORKER),
                str(BIN / "habitus"),
                str(w),
                str(ROUNDS),
                json.dumps(candidates[w::WORKERS]),
                str(outputs[w]),
            ],
            env={**os.environ, "HABITUS_HOME": str(state_root)},
        )
        for w in range(WORKERS)
    ]
    for worker in workers:
        assert worker.wait(timeout=600) == 0
    outcomes = [json.loads(line) for path in outputs for line in path.read_text().splitlines()]

    # Every command either did its work or said it was busy, with one clean error object.
    for o in outcomes:
        assert "Traceback" not in o["stderr"], o
        assert o["exit"] in (0, 75), o
        if o["exit"] == 75:
            (error_line,) = o["stderr"].splitlines()
            assert json.loads(error_line)["error"]["code"] == "state_locked", o
            assert o["stdout"] == "", o
        else:
            assert json.loads(o["stdout"])["v"] == 1, o
    done = {
        op: [o for o in outcomes if o["op"] == op and o["exit"] == 0] for op in {o["op"] for o in outcomes}
    }
    busy = [o for o in outcomes if o["exit"] == 75]
    assert all(done.get(op) for op in ("capture", "retain", "retrieve", "approve", "select")), {
        op: len(v) for op, v in done.items()
    }

    # No lost write and no phantom one.
    captured = [r["payload"]["user"] for r in lines(state_root)]
    assert sorted(captured) == sorted(f"{o['key']} prompt" for o in done["capture"])
    memories = stored_memories(state_root)
    assert sorted(m for m in memories if m.startswith("w")) == sorted(
        f"{o['key']} memory about load" for o in done["retain"]
    )
    active = {h for h, s in statuses(state_root).items() if s == "active"}
    tried = {o["key"] for o in outcomes if o["op"] == "approve"}
    assert active & tried == {o["key"] for o in done["approve"]}
    assert all(o["key"] not in active for o in busy if o["op"] == "approve")

    # Every invariant verifies.
    report = run(["verify"])
    assert report.exit == 0, report.stdout
    print(
        f"{len(outcomes)} commands in {ROUNDS} round(s), {len(busy)} busy (75):",
        {op: len(v) for op, v in sorted(done.items())},
    )
