"""habitus verify: report-only, stable issue codes, pluggable domain verifiers, exit 1 with the report."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from backup_helpers import damage_index, make_state, tree, write_rows
from conftest import run
from habitus.state import inventory
from habitus.state import ledger as ledger_migrations


def codes(out) -> list[str]:  # type: ignore[no-untyped-def]
    return [issue["code"] for issue in out.result["issues"]]


def test_a_clean_root_verifies(state_root: Path) -> None:
    make_state(state_root, "a", mutes=True)
    out = run(["verify"])
    assert out.exit == 0, out.stdout
    assert out.result["ok"] is True and out.result["issues"] == []
    items = {i["name"]: i for i in out.result["items"]}
    assert (
        items["ledger.sqlite"]["schema_version"] == len(ledger_migrations.MIGRATIONS)
        and items["mutes.json"]["exists"] is True
    )
    assert out.stderr == b""


def test_real_habits_are_checked_and_a_tampered_one_reported(state_root: Path) -> None:
    """The ledger's row verifier on real habit and audit rows (it once crashed on them: exit 1 failed)."""
    declared = run(["habit", "declare"], {"condition": "When a test fails", "behavior": "Read the error"})
    assert declared.exit == 0, declared.stderr
    out = run(["verify"])
    assert out.exit == 0, out.stdout + out.stderr
    conn = sqlite3.connect(state_root / "ledger.sqlite")
    conn.execute("UPDATE habits SET behavior = 'Ignore the error'")
    conn.commit()
    conn.close()
    out = run(["verify"])
    assert out.exit == 1 and out.error["code"] == "issues_found"
    (issue,) = out.result["issues"]
    assert issue["code"] == "row_checksum" and issue["table"] == "habits"
    assert issue["ids"] == [declared.result["habit"]["id"]]


def test_a_missing_root_is_ok_and_nothing_is_created(tmp_path: Path) -> None:
    out = run(["verify", "--root", str(tmp_path / "none")])
    assert out.exit == 0 and out.result["exists"] is False
    assert not (tmp_path / "none").exists()


def test_issues_exit_1_with_the_report_on_stdout_and_the_error_on_stderr(state_root: Path) -> None:
    make_state(state_root, "a")
    os.chmod(state_root / "config.toml", 0o644)
    os.chmod(state_root, 0o755)
    out = run(["verify"])
    assert out.exit == 1
    assert out.error["code"] == "issues_found"
    assert out.result["ok"] is False
    issue = out.result["issues"][0]
    assert issue["code"] == "permissions" and issue["count"] == 2
    assert sorted(issue["paths"]) == [".", "config.toml"]


def test_verify_changes_nothing(state_root: Path) -> None:
    make_state(state_root, "a")
    (state_root / "notes.txt").write_text("mine")
    os.chmod(state_root / "law.md", 0o640)
    before = tree(state_root, skip=())
    assert run(["verify"]).exit == 1
    after = tree(state_root, skip=())
    # SQLite's own -shm/-wal, which any reader of a WAL database creates, aside.
    assert {k: v for k, v in after.items() if not k.endswith(("-shm", "-wal"))} == before


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        ("garbage", "store_unreadable"),
        ("index", "sqlite_integrity"),
        ("newer", "schema_newer"),
        ("history", "schema_unknown"),
        ("drift", "schema_drift"),
    ],
)
def test_store_damage_is_reported(state_root: Path, damage: str, code: str) -> None:
    make_state(state_root, "a", rows=200)
    ledger = state_root / "ledger.sqlite"
    if damage == "garbage":
        ledger.write_bytes(b"\x00garbage" * 2000)
    elif damage == "index":
        damage_index(ledger)
    else:
        statement = {
            "newer": "PRAGMA user_version=999",
            "history": "UPDATE schema_migrations SET name = 'other'",
            "drift": "CREATE INDEX extra ON meta (value)",
        }[damage]
        conn = sqlite3.connect(ledger)
        conn.execute(statement)
        conn.commit()
        conn.close()
    out = run(["verify"])
    assert out.exit == 1
    assert codes(out) == [code]
    assert out.result["issues"][0]["item"] == "ledger.sqlite"


def test_files_links_and_leftovers_are_reported(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "a", law=False)
    (state_root / "config.toml").write_text('[capture]\nenabled = "often"\n')
    os.chmod(state_root / "config.toml", 0o600)
    (tmp_path / "law.md").write_text("law")
    os.symlink(tmp_path / "law.md", state_root / "law.md")
    (state_root / "notes.txt").write_text("x")
    os.chmod(state_root / "notes.txt", 0o600)
    (state_root / ".config.toml.tmp-123-deadbeef").write_text("x")
    os.chmod(state_root / ".config.toml.tmp-123-deadbeef", 0o600)
    os.mkfifo(state_root / "pipe", 0o600)
    (state_root / ".restore" / "stage-0123456789abcdef").mkdir(parents=True, mode=0o700)
    os.chmod(state_root / ".restore", 0o700)
    out = run(["verify"])
    assert out.exit == 1
    found = {i["code"]: i for i in out.result["issues"]}
    assert set(found) == {
        "file_invalid",
        "symlink",
        "unknown_entry",
        "temp_leftover",
        "special_file",
        "restore_leftover",
    }
    assert (
        found["file_invalid"]["error"] == "config_invalid" and found["file_invalid"]["item"] == "config.toml"
    )
    assert found["symlink"]["paths"] == ["law.md"]
    assert sorted(found["unknown_entry"]["paths"]) == ["notes.txt", "pipe"]
    assert found["restore_leftover"]["paths"] == [".restore/stage-0123456789abcdef"]


def test_domain_verifiers_plug_in_through_the_inventory(
    state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_state(state_root, "a")
    write_rows(state_root, "bad", 3)
    (state_root / "observations").mkdir(mode=0o700)
    (state_root / "observations" / "broken").write_text("")
    os.chmod(state_root / "observations" / "broken", 0o600)
    monkeypatch.setattr(
        inventory,
        "VERIFIERS",
        (
            inventory.Verifier("ledger.sqlite", "backup_helpers:flag_bad_rows"),
            inventory.Verifier("observations", "backup_helpers:folder_verifier"),
            inventory.Verifier("observations", "backup_helpers:failing_verifier"),
        ),
    )
    out = run(["verify"])
    assert out.exit == 1
    found = {(i["code"], i.get("item")): i for i in out.result["issues"]}
    assert found[("row_checksum", "ledger.sqlite")]["ids"] == ["bad-00000", "bad-00001", "bad-00002"]
    assert found[("row_checksum", "ledger.sqlite")]["count"] == 3
    assert ("chain_broken", "observations") in found
    assert found[("verifier_error", "observations")]["error"] == "state_corrupt"


def test_paths_in_a_report_are_bounded(state_root: Path) -> None:
    make_state(state_root, "a")
    folder = state_root / "observations"
    folder.mkdir(mode=0o700)
    for n in range(50):
        (folder / f"f{n}").write_text("")
        os.chmod(folder / f"f{n}", 0o644)
    out = run(["verify"])
    issue = out.result["issues"][0]
    assert issue["code"] == "permissions" and issue["count"] == 50 and len(issue["paths"]) == 20


def test_reports_match_the_published_schema(state_root: Path) -> None:
    from habitus import schemas

    make_state(state_root, "a")
    assert schemas.problems("verify-report.v1", run(["verify"]).result) == []
    os.chmod(state_root / "law.md", 0o644)
    (state_root / "notes.txt").write_text("x")
    report = run(["verify"]).result
    assert report["issues"] and schemas.problems("verify-report.v1", report) == []
