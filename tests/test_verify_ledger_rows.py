"""habitus verify on a ledger that holds habits: every checksummed row is checked by column name."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from conftest import run


def test_verify_checks_real_habit_rows_and_reports_a_tampered_one(state_root: Path) -> None:
    declared = run(
        ["habit", "declare", "--condition", "When a test fails", "--behavior", "Do read the error"]
    )
    assert declared.exit == 0, declared.stderr
    clean = run(["verify"])
    assert clean.exit == 0 and clean.result["ok"] is True, clean.stdout
    with sqlite3.connect(state_root / "ledger.sqlite") as conn:
        conn.execute("UPDATE habits SET behavior = 'Do skip the tests'")
    report = run(["verify"])
    assert report.exit == 1 and report.error["code"] == "issues_found"
    found = {i["code"]: i for i in report.result["issues"]}
    assert found["row_checksum"]["table"] == "habits"
    assert found["row_checksum"]["ids"] == [declared.result["habit"]["id"]]
