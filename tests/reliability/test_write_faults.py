"""kill -9 in the middle of a write, for every kind of write a user makes by hand.

Each test runs the real `habitus` console script with HABITUS_TEST_FAULT set so that it SIGKILLs itself
either just before its SQLite transaction commits (`<store>_commit`: nothing of it may be visible) or
just after (`<store>_committed`: all of it must be there, although the command printed nothing). After
the crash: what was committed before is intact, the next command succeeds, retrying the killed command
gives exactly one copy of its write, and `habitus verify` (row checksums, FTS, integrity, permissions)
is clean.

The other crash tests live next to the code they exercise: the observation log append
(tests/test_capture_reliability.py), analyze's batch commit (tests/test_analyze_run.py), advise's
review commit (tests/test_advise_review.py), backup (tests/test_backup.py) and every restore phase
(tests/reliability/test_restore_faults.py).
"""

from __future__ import annotations

import signal
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest

from conftest import Run, run, run_process
from memory_helpers import full_record, outside_any_repo

KILLED = -signal.SIGKILL
__all__ = ["outside_any_repo"]  # autouse: run from a folder outside any git repository
WHEN = ["commit", "committed"]  # killed just before COMMIT, or just after it (before any output)


def crash(args: list[str], point: str, request: Any = None, *, stdin: bytes | None = None) -> None:
    out = run_process(args, request, stdin=stdin, env={"HABITUS_TEST_FAULT": f"{point}:kill"}, timeout=120)
    assert out.exit == KILLED, (out.exit, out.stderr[-2000:])
    assert out.stdout == b""  # it died before it could report anything


def clean(root: Path) -> None:
    """The whole root verifies: stores, row checksums, FTS, the observation chain, permissions."""
    report = run(["verify", "--root", str(root)])
    assert report.exit == 0, report.stdout
    assert report.result["issues"] == []


def ok(out: Run) -> dict[str, Any]:
    assert out.exit == 0, out.stderr
    return out.result


def memory_rows(root: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(f"file:{root / 'memory.sqlite'}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT id, content FROM memories ORDER BY seq").fetchall()
    finally:
        conn.close()


def found(query: str) -> list[str]:
    """What full-text search finds: the FTS rows must agree with the records."""
    found = ok(run(["memory", "retrieve", query, "--limit", "100", "--no-hybrid"]))
    return [item["content"] for item in found["items"]]


@pytest.fixture
def memories(state_root: Path) -> list[tuple[str, str]]:
    """Five committed memories (the store exists and is migrated before the victim runs)."""
    for i in range(5):
        ok(run(["memory", "retain", f"committed fact number {i}"]))
    return memory_rows(state_root)


# -- memory --------------------------------------------------------------------------------------


@pytest.mark.parametrize("when", WHEN)
def test_kill_during_memory_retain(state_root: Path, memories: list[tuple[str, str]], when: str) -> None:
    crash(["memory", "retain", "the victim fact about kiwis"], f"memory_{when}")
    rows = memory_rows(state_root)
    assert rows[:5] == memories
    victims = [content for _, content in rows[5:]]
    assert victims == ([] if when == "commit" else ["the victim fact about kiwis"])
    assert found("kiwis") == victims
    clean(state_root)
    ok(run(["memory", "retain", "the next fact about plums"]))
    assert found("plums") == ["the next fact about plums"]
    clean(state_root)


@pytest.mark.parametrize("when", WHEN)
def test_kill_during_a_memory_patch(state_root: Path, memories: list[tuple[str, str]], when: str) -> None:
    memory_id = memories[2][0]
    crash(["memory", "retain", "--id", memory_id], f"memory_{when}", {"content": "rewritten about kiwis"})
    expected = "rewritten about kiwis" if when == "committed" else "committed fact number 2"
    assert ok(run(["memory", "recall", memory_id]))["memory"]["content"] == expected
    assert found("kiwis") == ([] if when == "commit" else [expected])
    assert len(found("committed")) == (5 if when == "commit" else 4)
    clean(state_root)


@pytest.mark.parametrize("when", WHEN)
def test_kill_during_memory_import_is_all_or_nothing(
    state_root: Path, memories: list[tuple[str, str]], when: str
) -> None:
    lines = b"".join(
        orjson.dumps(
            full_record(id=str(uuid.UUID(int=i, version=4)), content=f"imported fact {i} about figs")
        )
        + b"\n"
        for i in range(40)
    )
    crash(["memory", "import"], f"memory_{when}", stdin=lines)
    imported = [c for _, c in memory_rows(state_root) if c.startswith("imported")]
    assert len(imported) == (0 if when == "commit" else 40)
    assert len(found("figs")) == len(imported)
    clean(state_root)
    if when == "commit":  # the retry imports them all, once
        assert ok(run(["memory", "import"], stdin=lines))["imported"] == 40
        assert len([c for _, c in memory_rows(state_root) if c.startswith("imported")]) == 40
        clean(state_root)


OBSERVE = {
    "stream": "victim-session",
    "messages": [
        {
            "role": "user",
            "text": "I always want tabs, never spaces, in Go files",
            "at": "2030-01-01T10:00:00.000Z",
        },
        {"role": "assistant", "text": "Understood, I will use tabs.", "at": "2030-01-01T10:00:05.000Z"},
        {"role": "user", "text": "We decided to deploy on Fridays only", "at": "2030-01-01T10:01:00.000Z"},
    ],
}


def observations(root: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{root / 'memory.sqlite'}?mode=ro", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT content FROM memories WHERE kind = 'observation'")]
    finally:
        conn.close()


@pytest.mark.parametrize("when", WHEN)
def test_kill_during_memory_observe_keeps_watermark_and_observations_together(
    state_root: Path, memories: list[tuple[str, str]], when: str
) -> None:
    crash(["memory", "observe"], f"memory_{when}", OBSERVE)
    after_crash = observations(state_root)
    assert (after_crash == []) == (when == "commit")
    clean(state_root)
    # Sending the same messages again (as a hook does) observes each exactly once in total.
    retry = ok(run(["memory", "observe"], OBSERVE))
    assert len(retry["items"]) == (0 if when == "committed" else len(observations(state_root)))
    final = observations(state_root)
    assert final and len(final) == len(set(final))
    if when == "committed":
        assert final == after_crash
    clean(state_root)


# -- habits --------------------------------------------------------------------------------------


def habits(root: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(f"file:{root / 'ledger.sqlite'}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT id, status, condition FROM habits ORDER BY created_at, id").fetchall()
    finally:
        conn.close()


def audit(root: Path, habit_id: str) -> list[str]:
    conn = sqlite3.connect(f"file:{root / 'ledger.sqlite'}?mode=ro", uri=True)
    try:
        return [
            r[0]
            for r in conn.execute("SELECT action FROM habit_audit WHERE target = ? ORDER BY id", (habit_id,))
        ]
    finally:
        conn.close()


DECLARE = {"condition": "When writing Go code", "behavior": "Run gofmt before committing"}


@pytest.mark.parametrize("when", WHEN)
def test_kill_during_habit_declare(state_root: Path, when: str) -> None:
    first = ok(run(["habit", "declare"], {"condition": "When a test fails", "behavior": "Read the error"}))
    crash(["habit", "declare"], f"ledger_{when}", DECLARE)
    rows = habits(state_root)
    assert rows[0] == (first["habit"]["id"], "active", "When a test fails")
    if when == "commit":
        assert rows[1:] == []
    else:
        ((habit_id, status, _),) = rows[1:]
        assert status == "active" and audit(state_root, habit_id) == ["declare", "approve"]
    clean(state_root)
    again = ok(run(["habit", "declare"], DECLARE))
    assert again["outcome"] == ("activated" if when == "commit" else "exists")
    assert [r[1] for r in habits(state_root)] == ["active", "active"]
    clean(state_root)


@pytest.mark.parametrize("when", WHEN)
def test_kill_during_habit_approve(state_root: Path, when: str) -> None:
    from habit_helpers import REVIEWABLE, propose

    ok(run(["habit", "declare"], {"condition": "When a test fails", "behavior": "Read the error"}))
    candidate = propose("When writing Go code", "Run gofmt before committing", REVIEWABLE, with_vectors=True)
    habit_id, checksum = candidate["id"], candidate["checksum"]
    before = audit(state_root, habit_id)
    crash(["habit", "approve", habit_id, "--checksum", checksum], f"ledger_{when}")
    status = next(s for i, s, _ in habits(state_root) if i == habit_id)
    if when == "commit":
        assert status == "candidate" and audit(state_root, habit_id) == before
    else:
        assert status == "active" and audit(state_root, habit_id) == [*before, "approve"]
    clean(state_root)
    again = ok(run(["habit", "approve", habit_id, "--checksum", checksum]))
    assert again["outcome"] == ("activated" if when == "commit" else "unchanged")
    assert audit(state_root, habit_id).count("approve") == 1
    clean(state_root)


# -- backup --------------------------------------------------------------------------------------


@pytest.mark.parametrize("point", ["backup_before_manifest", "backup_before_rename"])
def test_kill_during_backup_leaves_the_live_root_clean(
    state_root: Path, memories: list[tuple[str, str]], tmp_path: Path, point: str
) -> None:
    ok(run(["habit", "declare"], DECLARE))
    crash(["backup", "--out", str(tmp_path / "b")], point)
    assert not (tmp_path / "b").exists()
    assert memory_rows(state_root) == memories
    clean(state_root)
    ok(run(["memory", "retain", "written after the crash"]))
    assert ok(run(["backup", "--out", str(tmp_path / "b")]))["path"] == str(tmp_path / "b")
    clean(state_root)
