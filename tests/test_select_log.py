"""The selection log: metadata only, bounded, best effort, never the prompt; counts in `habitus status`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from conftest import run
from habit_helpers import db
from select_helpers import COMMIT, DELETE, declare_all, hook_event, select

MARKER = "zqxj-unique-marker-7731"


def rows() -> list[sqlite3.Row]:
    with db() as conn:
        return list(conn.execute("SELECT * FROM select_log ORDER BY id"))


def test_each_call_logs_metadata_only(state_root: Path) -> None:
    declare_all(COMMIT, DELETE)
    assert select("write the commit message for the fix").result["reason"] == "selected"
    assert select("what a nice day").result["habits"] == []
    run(["select", "--harness", "codex"], hook_event("codex", "write the commit message"))
    logged = rows()
    assert [r["outcome"] for r in logged] == ["selected", "none", "selected"]
    assert [r["mode"] for r in logged] == ["cli", "cli", "codex"]
    first = dict(logged[0])
    assert first["judge"] == "local" and first["model_id"].startswith("default@")
    assert first["candidates"] == 2 and first["selected"] == 1 and first["retrieved"] >= 1
    assert first["reason"] == "selected" and '"current_applicability":1' in first["reasons"]
    assert first["latency_ms"] >= 0
    columns = set(first)
    assert columns == {
        "id", "at", "mode", "judge", "model_id", "outcome", "reason", "candidates", "retrieved",
        "selected", "reasons", "latency_ms",
    }  # fmt: skip
    for row in logged:
        text = " ".join(str(v) for v in dict(row).values())
        assert COMMIT[0] not in text and COMMIT[1] not in text and "h-" not in text


def test_the_prompt_never_reaches_the_state_root(state_root: Path) -> None:
    declare_all(COMMIT, DELETE)
    prompts = [
        f"write the commit message {MARKER}",
        f"don't delete anything {MARKER}",
        f"yes do that {MARKER}",
    ]
    for prompt in prompts:
        assert select(prompt, ["Want me to commit this?"]).exit == 0
        for harness in ("claude-code", "gemini", "pi", "generic"):
            assert run(["select", "--harness", harness], hook_event(harness, prompt)).exit == 0
    with db() as conn:  # a failing call too: its error goes to errors.jsonl
        conn.execute("DELETE FROM habit_vectors")
    assert select(f"write the commit message {MARKER}").exit == 3
    assert run(["select", "--harness", "claude-code"], hook_event("claude-code", MARKER)).exit == 0
    assert len(rows()) >= 3 * 5
    needle = MARKER.encode()
    for path in state_root.rglob("*"):
        if path.is_file():
            assert needle not in path.read_bytes(), path


def test_failures_are_logged_with_their_code() -> None:
    declare_all(COMMIT)
    with db() as conn:
        conn.execute("DELETE FROM habit_vectors")
    assert select("write the commit message").exit == 3
    last = rows()[-1]
    assert last["outcome"] == "failed" and last["reason"] == "vectors_stale"


def test_a_busy_ledger_skips_the_row_but_still_answers(state_root: Path) -> None:
    declare_all(COMMIT)
    writer = sqlite3.connect(state_root / "ledger.sqlite", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        out = select("write the commit message")
        assert out.exit == 0 and out.result["reason"] == "selected"
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert rows() == []


def test_the_log_is_bounded(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from habitus.select import log

    declare_all(COMMIT)
    monkeypatch.setattr(log, "MAX_ROWS", 3)
    for _ in range(5):
        select("write the commit message")
    ids = [r["id"] for r in rows()]
    assert len(ids) == 3 and ids == [3, 4, 5]


def test_status_reports_select_counts(state_root: Path) -> None:
    assert run(["status"]).result["select"] is None  # no ledger: null, and nothing created
    assert not state_root.exists()
    declare_all(COMMIT)
    select("write the commit message")
    select("tell me a joke")
    counts = run(["status"]).result["select"]
    assert counts["calls"] == 2 and counts["with_guidance"] == 1 and counts["without_guidance"] == 1
    assert counts["failed"] == 0 and counts["habits_injected"] == 1
    assert isinstance(counts["median_latency_ms"], int) and counts["last_at"]


def test_a_deferred_row_is_written_at_flush_with_the_time_select_ran(state_root: Path) -> None:
    """The warm worker's call process answers first and writes the row after: defer() keeps it,
    flush() writes it, stamped with the call's own time; a flush with nothing kept writes nothing."""
    from habitus.select import log

    declare_all(COMMIT, DELETE)
    assert select("write the commit message for the fix").exit == 0
    log.defer()
    try:
        assert select("write the commit message for the fix").result["reason"] == "selected"
        assert len(rows()) == 1  # kept, not written
    finally:
        log.flush()
    logged = rows()
    assert [r["outcome"] for r in logged] == ["selected", "selected"]
    assert logged[1]["at"] >= logged[0]["at"]
    log.flush()  # no longer deferring: nothing kept, nothing written
    assert select("what a nice day").exit == 0
    assert len(rows()) == 3
