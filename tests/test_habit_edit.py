"""`habitus habit edit`: a candidate reworded by the person is approved as written, keeps its evidence,
and the original is rejected, all in one transaction; every refusal writes nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import run
from habit_helpers import ERRORS, GOFMT, RELEASE, RELEASE_PARAPHRASE, REVIEWABLE, db, declared, propose
from habitus.habits.rows import verify_audit_chain

NEW = ("When a test fails in CI", "Read the whole failure log before changing code")


def ledger_rows() -> dict[str, list[tuple[Any, ...]]]:
    with db() as conn:
        return {
            table: [tuple(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY rowid")]
            for table in ("habits", "habit_evidence", "habit_relations", "habit_audit", "habit_examples")
        }


def edit(ref: str, condition: str, behavior: str, *extra: str) -> Any:
    return run(["habit", "edit", ref, "--condition", condition, "--behavior", behavior, *extra])


def candidate(**extra: Any) -> dict[str, Any]:
    return propose(*ERRORS, REVIEWABLE, **extra)


def test_edit_approves_the_new_wording_keeps_the_evidence_and_rejects_the_original() -> None:
    original = candidate()
    out = edit(original["id"], *NEW, "--checksum", original["checksum"][:12])
    assert out.exit == 0, out.stderr
    result = out.result
    assert result["outcome"] == "edited" and result["evidence_copied"] == 3
    habit = result["habit"]
    assert (habit["condition"], habit["behavior"], habit["status"]) == (*NEW, "active")
    assert habit["origin"] == "declared" and habit["approved"] is True
    assert result["original"]["id"] == original["id"] and result["original"]["status"] == "archived"
    shown = run(["habit", "show", habit["id"]]).result["habit"]
    assert [e["ref"] for e in shown["evidence"]] == ["obs-1:0:ref", "obs-1:1:ref", "obs-1:2:ref"]
    assert [a["action"] for a in shown["audit"]] == ["declare", "approve"]
    before = run(["habit", "show", original["id"]]).result["habit"]
    assert before["reason"] == "rejected"
    assert (
        before["audit"][-1]["action"] == "reject"
        and before["audit"][-1]["data"]["edited_into"] == habit["id"]
    )
    # analyze does not propose the replaced wording again
    assert candidate(start=10)["outcome"] == "rejected_before"
    with db() as conn:
        assert verify_audit_chain(conn) > 0


def test_edit_by_list_number_uses_the_listed_checksum() -> None:
    original = candidate()
    listed = run(["habit", "list", "--status", "candidate"]).result["items"]
    assert [i["id"] for i in listed] == [original["id"]]
    out = edit("1", *NEW)
    assert out.exit == 0, out.stderr
    assert out.result["original"]["id"] == original["id"]


def test_unchanged_wording_is_an_approval() -> None:
    original = candidate()
    out = edit(original["id"], *ERRORS, "--checksum", original["checksum"])
    assert out.exit == 0, out.stderr
    assert out.result["outcome"] == "activated" and out.result["habit"]["id"] == original["id"]


def test_edit_needs_the_reviewed_checksum_and_refuses_a_stale_one() -> None:
    original = candidate()
    before = ledger_rows()
    out = edit(original["id"], *NEW)
    assert out.exit == 2 and out.error["code"] == "usage"
    out = edit(original["id"], *NEW, "--checksum", "0" * 12)
    assert out.exit == 3 and out.error["code"] == "stale"
    assert ledger_rows() == before


@pytest.mark.parametrize("bad", ["", "x" * 1001, "line\nbreak"])
def test_bad_wording_is_refused_and_nothing_written(bad: str) -> None:
    original = candidate()
    before = ledger_rows()
    out = edit(original["id"], bad, NEW[1], "--checksum", original["checksum"])
    assert out.exit == 2 and out.error["code"] == "bad_request"
    assert ledger_rows() == before


def test_a_law_conflict_in_the_new_wording_writes_nothing(state_root: Path) -> None:
    original = candidate()
    (state_root / "law.md").write_text("deny: failure log\n")
    assert run(["habit", "recheck"]).exit == 0
    before = ledger_rows()
    out = edit(original["id"], *NEW, "--checksum", original["checksum"])
    assert out.exit == 3 and out.error["code"] == "refused" and out.error["reason"] == "law"
    assert ledger_rows() == before


def test_a_possible_duplicate_of_an_approved_habit_writes_nothing() -> None:
    approved = declared(*RELEASE)
    original = candidate()
    before = ledger_rows()
    out = edit(original["id"], *RELEASE_PARAPHRASE, "--checksum", original["checksum"])
    assert out.exit == 3 and out.error["code"] == "refused" and out.error["reason"] == "relation"
    assert out.error["habits"] == [approved["id"]]
    assert ledger_rows() == before


def test_only_candidates_and_suppressed_habits_can_be_edited() -> None:
    active = declared(*GOFMT)
    before = ledger_rows()
    out = edit(active["id"], *NEW, "--checksum", active["checksum"])
    assert out.exit == 3 and out.error["code"] == "refused" and out.error["reason"] == "status"
    assert ledger_rows() == before


def test_a_wording_another_habit_has_is_refused() -> None:
    other = declared(*GOFMT)
    original = candidate()
    before = ledger_rows()
    out = edit(original["id"], *GOFMT, "--checksum", original["checksum"])
    assert out.exit == 3 and out.error["reason"] == "exists" and out.error["id"] == other["id"]
    assert ledger_rows() == before


def test_a_locked_ledger_answers_75_and_changes_nothing(state_root: Path) -> None:
    original = candidate()
    before = ledger_rows()
    holder = sqlite3.connect(state_root / "ledger.sqlite", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        out = edit(original["id"], *NEW, "--checksum", original["checksum"], "--wait", "0.2")
        assert out.exit == 75 and out.error["code"] == "state_locked"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert ledger_rows() == before
