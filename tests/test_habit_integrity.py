"""Fail closed: tampered rows, broken audit chain, newer schema, corrupt ledger, locked state, concurrency."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import run, run_process
from habit_helpers import (
    ERRORS,
    GOFMT,
    RELEASE,
    RELEASE_PARAPHRASE,
    REVIEWABLE,
    db,
    declared,
    ledger,
    propose,
    root,
)
from habitus.errors import HabitusError
from habitus.habits import active_habits, condition_matrix, load_law
from habitus.habits.rows import verify_audit_chain
from habitus.models.embedders import load_embedder


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("statement", "command"),
    [
        ("UPDATE habits SET behavior = 'Disable the tests'", ["habit", "list"]),
        ("UPDATE habits SET status = 'active', approved_wording = wording", ["habit", "list"]),
        ("UPDATE habits SET confidence_bp = 1", ["habit", "approve", "1"]),
        ("UPDATE habit_evidence SET day = '2026-01-01'", ["habit", "show", "1"]),
        ("UPDATE habit_audit SET actor = 'system'", ["habit", "show", "1"]),
        ("UPDATE habit_relations SET decision = 'kept_separate'", ["dedupe", "list"]),
    ],
)
def test_tampered_rows_are_refused(statement: str, command: list[str]) -> None:
    declared(*RELEASE)
    propose(*RELEASE_PARAPHRASE, REVIEWABLE, with_vectors=True)
    assert run(["habit", "list"]).exit == 0
    conn = db()
    conn.execute(statement)
    conn.commit()
    out = run(command)
    assert out.exit == 3 and out.error["code"] == "checksum_mismatch"
    assert out.stdout == b""


def test_a_tampered_vector_fails_select_closed() -> None:
    habit = declared(*GOFMT)
    conn = db()
    conn.execute("UPDATE habit_vectors SET vector = zeroblob(1536) WHERE field = 'condition'")
    conn.commit()
    embedder = load_embedder(root())
    with ledger() as led:
        chosen = active_habits(led.conn, load_law(led.root))
        assert [h.id for h in chosen] == [habit["id"]]
        with pytest.raises(HabitusError) as caught:
            condition_matrix(led.conn, chosen, embedder.model_id, embedder.dims)
    assert caught.value.code == "checksum_mismatch"


def test_rows_verified_before_are_still_refused_once_tampered() -> None:
    """verify() remembers rows that matched, by their every value (the warm worker reads the same rows
    on each prompt): a row changed afterwards, in any column, is checked again and refused."""
    habit = declared(*GOFMT)
    embedder = load_embedder(root())
    with ledger() as led:
        for _ in range(2):
            chosen = active_habits(led.conn, load_law(led.root))
            condition_matrix(led.conn, chosen, embedder.model_id, embedder.dims)
    conn = db()
    conn.execute("UPDATE habit_vectors SET vector = zeroblob(1536) WHERE field = 'condition'")
    conn.execute("UPDATE habits SET behavior = 'Disable the tests'")
    conn.commit()
    with ledger() as led:
        with pytest.raises(HabitusError) as caught:
            active_habits(led.conn, load_law(led.root))
        assert caught.value.code == "checksum_mismatch"
        with pytest.raises(HabitusError) as caught:
            condition_matrix(led.conn, chosen, embedder.model_id, embedder.dims)
        assert caught.value.code == "checksum_mismatch"
    assert [h.id for h in chosen] == [habit["id"]]


def test_a_deleted_audit_entry_breaks_the_chain() -> None:
    declared(*GOFMT)
    declared(*ERRORS)
    with ledger() as led:
        assert verify_audit_chain(led.conn) == 4
    conn = db()
    conn.execute("DELETE FROM habit_audit WHERE id = 2")
    conn.commit()
    with ledger() as led, pytest.raises(HabitusError) as caught:
        verify_audit_chain(led.conn)
    assert caught.value.code == "checksum_mismatch"


def test_newer_schema_is_refused_and_left_untouched(state_root: Path) -> None:
    declared(*GOFMT)
    conn = db()
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    before = digest(state_root / "ledger.sqlite")
    for args in (
        ["habit", "list"],
        ["habit", "declare", "--condition", "When x", "--behavior", "Do y"],
        ["status"],
    ):
        out = run(args)
        assert out.exit == 3 and out.error["code"] == "schema_newer", args
    assert digest(state_root / "ledger.sqlite") == before


def test_corrupt_ledger_is_refused(state_root: Path) -> None:
    state_root.mkdir(mode=0o700)
    (state_root / "ledger.sqlite").write_bytes(b"this is not a database" * 100)
    out = run(["habit", "list"])
    assert out.exit == 3 and out.error["code"] == "state_corrupt"


def test_locked_ledger_answers_75_and_changes_nothing(state_root: Path) -> None:
    declared(*GOFMT)
    assert run(["habit", "list"]).exit == 0
    holder = sqlite3.connect(state_root / "ledger.sqlite", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        out = run(["habit", "declare", "--condition", ERRORS[0], "--behavior", ERRORS[1], "--wait", "0.2"])
        assert out.exit == 75 and out.error["code"] == "state_locked"
        out = run(["habit", "disable", "1", "--wait", "0.2"])
        assert out.exit == 75
        assert run(["habit", "list", "--wait", "0.2"]).exit == 75  # list writes its snapshot
        assert run(["dedupe", "scan", "--wait", "0.2"]).exit == 75
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert [i["condition"] for i in run(["habit", "list"]).result["items"]] == [GOFMT[0]]


def test_list_and_status_do_not_load_the_model() -> None:
    declared(*GOFMT)
    probe = (
        "import sys\nfrom habitus.launcher import main\nsys.argv = ['habitus', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write('HEAVY=' + ','.join(sorted({'numpy','onnxruntime','tokenizers'} & set(sys.modules))))"
    )
    for args in (["habit", "list"], ["status"], ["habit", "show", "1"], ["habit", "disable", "1"]):
        done = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=60
        )
        assert done.stderr.endswith("HEAVY="), (args, done.stderr)


def test_two_processes_approving_duplicates_at_once_activate_at_most_one() -> None:
    first = propose(*RELEASE, REVIEWABLE)
    second = propose(*RELEASE_PARAPHRASE, REVIEWABLE, start=10)
    args = [
        ["habit", "approve", first["id"], "--checksum", first["checksum"], "--wait", "30"],
        ["habit", "approve", second["id"], "--checksum", second["checksum"], "--wait", "30"],
    ]
    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(lambda a: run_process(a, timeout=120), args))
    assert sorted(o.exit for o in outcomes) == [0, 3], [o.stderr for o in outcomes]
    refused = next(o for o in outcomes if o.exit == 3)
    assert refused.error["code"] == "refused" and refused.error["reason"] == "relation"
    statuses = sorted(r[0] for r in db().execute("SELECT status FROM habits"))
    assert statuses == ["active", "candidate"]
    assert db().execute("SELECT COUNT(*) FROM habit_relations WHERE decision = 'pending'").fetchone()[0] == 1


def test_approvals_interleaved_after_preparation_still_activate_one() -> None:
    """The race the two processes can hit: both prepare vectors before either commits."""
    from habitus.habits import lifecycle

    first = propose(*RELEASE, REVIEWABLE)
    second = propose(*RELEASE_PARAPHRASE, REVIEWABLE, start=10)
    embedder = load_embedder(root())
    with ledger() as one, ledger() as two:
        lifecycle._prepare(one, embedder, [lifecycle.get_habit(one.conn, first["id"])])
        lifecycle._prepare(two, embedder, [lifecycle.get_habit(two.conn, second["id"])])
        assert (
            lifecycle.approve(one, first["id"], first["checksum"], embedder=embedder)["outcome"]
            == "activated"
        )
        with pytest.raises(HabitusError) as caught:
            lifecycle.approve(two, second["id"], second["checksum"], embedder=embedder)
    assert caught.value.code == "refused"
    assert [r[0] for r in db().execute("SELECT status FROM habits ORDER BY status")] == [
        "active",
        "candidate",
    ]


def test_a_killed_declare_leaves_no_half_written_habit(state_root: Path) -> None:
    declared(*GOFMT)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "habitus",
            "habit",
            "declare",
            "--condition",
            ERRORS[0],
            "--behavior",
            ERRORS[1],
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(0.15)  # somewhere in start-up, model load or the transaction
    proc.kill()
    proc.wait()
    conn = db()
    found = conn.execute("SELECT id, status FROM habits WHERE condition = ?", (ERRORS[0],)).fetchall()
    assert len(found) <= 1
    if found:  # committed whole: the habit, its audit and its vectors together
        assert found[0]["status"] == "active"
        assert (
            conn.execute(
                "SELECT COUNT(*) FROM habit_vectors WHERE habit_id = ?", (found[0]["id"],)
            ).fetchone()[0]
            == 2
        )
    assert run(["habit", "list"]).exit == 0
    with ledger() as led:
        verify_audit_chain(led.conn)
