"""Project habits: adopted from a repository's HABITS.md, applied only inside that repository; personal
habits everywhere. The scope lives in the ledger (migration 0008), sealed by the row checksum."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import run
from habit_helpers import declared
from habitus import codec
from habitus.errors import HabitusError
from habitus.habits import rows, share
from habitus.state.db import Store
from habitus.state.ledger import MIGRATIONS
from select_helpers import COMMIT, DELETE, hook_event

BOTH = "Delete the tmp/ directory. Then write the commit message for the cleanup."


def repo(path: Path, *habits: tuple[str, str]) -> Path:
    (path / ".git").mkdir(parents=True)
    (path / "src" / "deep").mkdir(parents=True)
    lines = [f"- {c} -> {b}" for c, b in habits]
    (path / "HABITS.md").write_text("\n".join(["# Team", share.BEGIN, "## Habits", *lines, share.END, ""]))
    return path


def adopt_project(where: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """`habit import --project` run in `where`, then each created candidate approved."""
    monkeypatch.chdir(where)
    out = run(["habit", "import", "--project"])
    assert out.exit == 0, out.stderr
    for item in out.result["items"]:
        if item["outcome"] == "created":
            done = run(["habit", "approve", item["id"], "--checksum", item["checksum"]])
            assert done.exit == 0 and done.result["outcome"] == "activated", done.stderr
    return out.result


def chosen(cwd: Path, monkeypatch: pytest.MonkeyPatch, prompt: str = BOTH) -> set[str]:
    monkeypatch.chdir(cwd)
    out = run(["select"], {"prompt": prompt})
    assert out.exit == 0, out.stderr
    return {h["condition"] for h in out.result["habits"]}


def hooked(cwd: Path | None, prompt: str = BOTH) -> str:
    event = hook_event("claude-code", prompt)
    event["cwd"] = None if cwd is None else str(cwd)
    out = run(["select", "--harness", "claude-code"], event)
    assert out.exit == 0 and out.stderr == b"", out.stderr
    return "" if not out.stdout else str(out.result["hookSpecificOutput"]["additionalContext"])


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state_root: Path) -> dict[str, Path]:
    a = repo(tmp_path / "a", COMMIT)
    b = repo(tmp_path / "b")
    outside = tmp_path / "plain"
    outside.mkdir()
    declared(*DELETE)  # personal
    result = adopt_project(a / "src", monkeypatch)
    assert result["project"] == str(a.resolve())
    assert [i["scope"] for i in result["items"]] == ["project"]
    return {"a": a, "b": b, "outside": outside}


def test_a_project_habit_applies_only_inside_its_repository(
    places: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, outside = places["a"], places["b"], places["outside"]
    assert chosen(a, monkeypatch) == {COMMIT[0], DELETE[0]}
    assert chosen(a / "src" / "deep", monkeypatch) == {COMMIT[0], DELETE[0]}
    assert chosen(b, monkeypatch) == {DELETE[0]}
    assert chosen(outside, monkeypatch) == {DELETE[0]}
    listed = {h["condition"]: h for h in run(["habit", "list"]).result["items"]}
    assert listed[COMMIT[0]]["scope"] == "project" and listed[COMMIT[0]]["projects"] == [str(a.resolve())]
    assert listed[DELETE[0]]["scope"] == "personal" and listed[DELETE[0]]["projects"] is None
    shown = run(["habit", "show", listed[COMMIT[0]]["id"]]).result["habit"]
    assert shown["projects"] == [str(a.resolve())]


def test_the_hook_uses_the_events_cwd(places: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, outside = places["a"], places["b"], places["outside"]
    monkeypatch.chdir(outside)  # the hook process runs elsewhere: the event's cwd decides
    for inside in (a, a / "src" / "deep"):
        text = hooked(inside)
        assert COMMIT[1] in text and DELETE[1] in text
    for elsewhere in (b, outside):
        text = hooked(elsewhere)
        assert COMMIT[1] not in text and DELETE[1] in text
    monkeypatch.chdir(a / "src")  # an event without cwd: the process's directory
    assert COMMIT[1] in hooked(None)


def test_a_symlink_into_the_repository_is_the_same_repository(
    places: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    link = tmp_path / "link"
    link.symlink_to(places["a"] / "src")
    assert COMMIT[1] in hooked(link)
    assert chosen(link, monkeypatch) == {COMMIT[0], DELETE[0]}


def test_another_checkout_of_the_file_widens_the_scope_and_a_personal_wording_wins(
    places: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = places["a"]
    clone = repo(tmp_path / "clone", COMMIT, DELETE)
    assert chosen(clone, monkeypatch) == {DELETE[0]}
    got = adopt_project(clone, monkeypatch)
    by = {i["line"]: i for i in got["items"]}
    commit, delete = sorted(by.values(), key=lambda i: i["line"])
    assert commit["outcome"] == "exists" and commit["scope_added"] == str(clone.resolve())
    assert commit["projects"] == sorted([str(a.resolve()), str(clone.resolve())])
    assert delete["outcome"] == "exists" and delete["scope"] == "personal" and "scope_added" not in delete
    assert chosen(clone, monkeypatch) == {COMMIT[0], DELETE[0]}
    assert chosen(places["b"], monkeypatch) == {DELETE[0]}
    audit = run(["habit", "show", commit["id"]]).result["habit"]["audit"]
    assert [e["action"] for e in audit][-1] == "scope"
    assert run(["verify"]).exit == 0
    again = adopt_project(clone, monkeypatch)  # nothing more to add
    assert all("scope_added" not in i for i in again["items"])


def test_export_writes_what_applies_here_and_round_trips(
    places: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = places["a"], places["b"]
    monkeypatch.chdir(a)
    out = run(["habit", "export", "--format", "agents-md", "--out", "HABITS.md"])
    assert out.exit == 0 and out.result["habits"] == 2, out.stderr
    text = (a / "HABITS.md").read_text()
    assert COMMIT[1] in text and DELETE[1] in text
    monkeypatch.chdir(b)
    elsewhere = run(["habit", "export", "--format", "agents-md"]).result
    assert elsewhere["habits"] == 1 and COMMIT[1] not in elsewhere["text"] and elsewhere["left_out"] == 0
    # another person, another checkout: the exported file imports as project candidates there
    other = tmp_path / "other-root"
    copy = repo(tmp_path / "copy")
    (copy / "HABITS.md").write_bytes((a / "HABITS.md").read_bytes())
    monkeypatch.chdir(copy)
    got = run(["habit", "import", "--project", "--root", str(other)])
    assert got.exit == 0 and got.result["counts"]["created"] == 2, got.stderr
    items = run(["habit", "list", "--all", "--root", str(other)]).result["items"]
    assert {(h["condition"], h["status"], h["scope"]) for h in items} == {
        (COMMIT[0], "candidate", "project"),
        (DELETE[0], "candidate", "project"),
    }
    assert {tuple(h["projects"]) for h in items} == {(str(copy.resolve()),)}
    mine = {h["condition"]: h["checksum"] for h in run(["habit", "list"]).result["items"]}
    assert {h["condition"]: h["checksum"] for h in items} == mine  # the same wordings


def test_import_of_a_plain_file_stays_personal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = repo(tmp_path / "a", COMMIT)
    monkeypatch.chdir(a)
    got = run(["habit", "import", "HABITS.md"])
    assert got.exit == 0 and got.result["project"] is None
    assert [i["scope"] for i in got.result["items"]] == ["personal"]


# -- storage: migration, seals, older programs ---------------------------------------------------

HABIT = {
    "id": "h-0123456789ab",
    "condition": COMMIT[0],
    "behavior": COMMIT[1],
    "polarity": 1,
    "confidence_bp": 10_000,
    "status": "candidate",
    "origin": "declared",
    "candidate_key": None,
    "wording": "0" * 64,
    "approved_wording": None,
    "approved_at": None,
    "law": "none",
    "law_findings": "[]",
    "reason": None,
    "created_at": "2026-11-30T10:00:00Z",
    "updated_at": "2026-11-30T10:00:00Z",
}


def test_migration_keeps_every_existing_habit_personal_and_sealed(state_root: Path) -> None:
    state_root.mkdir(parents=True, mode=0o700)
    path = state_root / "ledger.sqlite"
    old = Store(path, MIGRATIONS[:7], label="ledger")
    conn = old.open_write()
    fields = list(HABIT)
    sealed = codec.checksum({"table": "habits", **HABIT})  # the seal as habitus wrote it before 0008
    with old.write(conn):
        conn.execute(
            f"INSERT INTO habits ({', '.join(fields)}, checksum) VALUES ({', '.join('?' * (len(fields) + 1))})",
            [*HABIT.values(), sealed],
        )
    conn.close()
    listed = run(["habit", "list", "--all"])  # opens for writing: migrates to 0008
    assert listed.exit == 0, listed.stderr
    (item,) = listed.result["items"]
    assert item["id"] == HABIT["id"] and item["scope"] == "personal" and item["projects"] is None
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) == 8
    row = dict(conn.execute("SELECT * FROM habits").fetchone())
    assert row["checksum"] == sealed and row["projects"] is None
    assert {k: row[k] for k in HABIT} == HABIT
    conn.close()
    assert run(["verify"]).exit == 0


def test_the_seal_covers_the_scope(
    places: dict[str, Path], state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = sqlite3.connect(state_root / "ledger.sqlite")
    # a personal habit quietly scoped, and the project habit quietly made personal
    conn.execute("UPDATE habits SET projects = '[\"/x\"]' WHERE condition = ?", (DELETE[0],))
    conn.execute("UPDATE habits SET projects = NULL WHERE condition = ?", (COMMIT[0],))
    conn.commit()
    conn.close()
    checked = run(["verify"])
    assert checked.exit != 0
    monkeypatch.chdir(places["b"])
    out = run(["select"], {"prompt": BOTH})
    assert out.exit == 3 and out.error["code"] == "checksum_mismatch"
    assert hooked(places["b"]) == ""  # the hook stays silent
    assert rows.seal("habits", {**HABIT, "projects": None}) == codec.checksum({"table": "habits", **HABIT})
    assert rows.seal("habits", {**HABIT, "projects": '["/a"]'}) != rows.seal("habits", HABIT)


def test_an_older_habitus_refuses_the_scoped_ledger_untouched(state_root: Path) -> None:
    declared(*DELETE)
    path = state_root / "ledger.sqlite"
    before = path.read_bytes()
    older = Store(path, MIGRATIONS[:7], label="ledger")
    for opening in (older.open_read, older.open_write):
        with pytest.raises(HabitusError) as caught:
            opening()
        assert caught.value.code == "schema_newer" and caught.value.exit == 3
    assert path.read_bytes() == before


def test_the_scope_column_refuses_what_is_not_a_list(state_root: Path) -> None:
    declared(*DELETE)
    conn = sqlite3.connect(state_root / "ledger.sqlite")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE habits SET projects = 'everywhere'")
    conn.close()
    assert os.path.exists(state_root / "ledger.sqlite")


def test_a_reworded_project_candidate_keeps_its_scope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = repo(tmp_path / "a", COMMIT)
    monkeypatch.chdir(a)
    (item,) = run(["habit", "import", "--project"]).result["items"]
    new = ("When writing a git commit message", COMMIT[1])
    out = run(
        [
            "habit",
            "edit",
            item["id"],
            "--condition",
            new[0],
            "--behavior",
            new[1],
            "--checksum",
            item["checksum"],
        ]
    )
    assert out.exit == 0 and out.result["outcome"] == "edited", out.stderr
    assert out.result["habit"]["status"] == "active"
    assert out.result["habit"]["projects"] == [str(a.resolve())]
    monkeypatch.chdir(tmp_path)
    assert (
        run(["select"], {"prompt": "write the commit message for the staged changes"}).result["habits"] == []
    )
    monkeypatch.chdir(a)
    picked = run(["select"], {"prompt": "write the commit message for the staged changes"}).result["habits"]
    assert [h["condition"] for h in picked] == [new[0]]
