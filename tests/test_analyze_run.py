"""habitus analyze (local analyzer): batches, watermarks, transactions, dry run, lock, fast path, gate."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from analyze_helpers import (
    FRICTION,
    calm,
    capture,
    habit_state,
    query,
    setting,
    snapshot,
    watermark,
)
from conftest import run, run_process
from habitus.state import observations as obs
from habitus.state.root import StateRoot


def analyze(*args: str) -> dict:
    out = run(["analyze", *args])
    assert out.exit == 0, out.stderr
    return out.result


def test_friction_becomes_candidates_with_cited_evidence(state_root: Path) -> None:
    capture(state_root, FRICTION)
    result = analyze()
    assert result["analyzer"] == "local" and result["records"] == len(FRICTION)
    assert result["queue"]["generations"] == [{"generation": 1, "after_seq": 0, "through_seq": 8}]
    by_stage = {p["stage"]: p for p in result["proposals"]}
    library = by_stage["reviewable"]
    assert "library code" in library["behavior"] and library["polarity"] == -1
    assert library["condition"].startswith("When ") and library["behavior"].startswith("Do not ")
    # The three corrections over two days, never the calm requests around them.
    assert [r.split(":")[1] for r in library["evidence"]] == ["2", "5", "7"]
    emoji = by_stage["collecting"]
    assert "emoji" in emoji["behavior"] and len(emoji["evidence"]) == 1
    assert all(p["status"] == "candidate" and p["outcome"] == "created" for p in result["proposals"])
    # Nothing is active; the ledger holds the same evidence the result cites.
    assert query(state_root, "SELECT COUNT(*) FROM habits WHERE status != 'candidate'") == [(0,)]
    refs = {r for (r,) in query(state_root, "SELECT ref FROM habit_evidence")}
    assert refs == set(library["evidence"]) | set(emoji["evidence"])
    days = query(state_root, "SELECT DISTINCT day FROM habit_evidence ORDER BY day")
    assert days == [("2026-05-04",), ("2026-05-05",)]  # the days the user wrote, not today


def test_facts_go_to_memory_suggestions_and_nothing_is_written_to_memory(state_root: Path) -> None:
    capture(state_root, FRICTION)
    result = analyze()
    assert [s["content"] for s in result["memory_suggestions"]] == [
        "This repo releases from the main branch only"
    ]
    assert result["memory_suggestions"][0]["kind"] == "fact"
    assert not (state_root / "memory.sqlite").exists()
    assert all("main branch" not in p["behavior"] for p in result["proposals"])


def test_batches_watermark_and_rerun_analyses_nothing_new(state_root: Path) -> None:
    setting(state_root, "analyze.batch_max_records", 3)
    capture(state_root, FRICTION)
    first = analyze()
    assert [(b["seq_start"], b["seq_end"]) for b in first["batches"]] == [(1, 3), (4, 6), (7, 8)]
    assert all(b["outcome"] == "committed" and b["records"] <= 3 for b in first["batches"])
    assert watermark(state_root) == 8
    # Split into batches, the evidence still accumulates on one candidate per behaviour.
    reviewable = [p for p in first["proposals"] if p["stage"] == "reviewable"]
    assert len(reviewable) == 1 and len(reviewable[0]["evidence"]) == 3
    before = habit_state(state_root)
    second = analyze()
    assert second["batches"] == [] and second["proposals"] == [] and second["records"] == 0
    assert habit_state(state_root) == before
    # The consumed generation was rotated; new observations land in the next one.
    assert first["rotated"] == [1]
    assert [g.generation for g in obs.generations(StateRoot(state_root)) if g.archived] == [1]


def test_later_friction_adds_evidence_to_the_existing_candidate(state_root: Path) -> None:
    capture(state_root, FRICTION[:2])
    first = analyze()
    [candidate] = first["proposals"]
    assert candidate["stage"] == "collecting"
    capture(state_root, FRICTION[3:7])
    second = analyze()
    again = next(p for p in second["proposals"] if p["id"] == candidate["id"])
    assert again["outcome"] == "evidence_added" and again["stage"] == "reviewable"
    assert (again["condition"], again["behavior"]) == (candidate["condition"], candidate["behavior"])
    assert query(state_root, "SELECT COUNT(*) FROM habits") == [(1,)]


def test_an_empty_result_still_advances_the_watermark(state_root: Path) -> None:
    capture(state_root, calm(5))
    result = analyze()
    assert result["proposals"] == [] and len(result["batches"]) == 1
    assert watermark(state_root) == 5
    assert query(state_root, "SELECT COUNT(*) FROM habits") == [(0,)]
    assert analyze()["batches"] == []


def test_rejected_candidate_is_not_proposed_again(state_root: Path) -> None:
    capture(state_root, FRICTION[:2])
    [candidate] = analyze()["proposals"]
    rejected = run(["habit", "reject", candidate["id"]])
    assert rejected.exit == 0, rejected.stderr
    capture(
        state_root,
        [("again printing from library code?! return errors to the caller", "Ok.", "2026-05-07T09:00:00Z")],
    )
    [again] = analyze()["proposals"]
    assert again["outcome"] == "rejected_before" and again["id"] == candidate["id"]
    assert query(state_root, "SELECT COUNT(*) FROM habits") == [(1,)]


def test_evidence_gate_three_observations_two_days(state_root: Path) -> None:
    same_day = [
        ("no, don't print from library code", "Ok.", "2026-05-04T09:05:00Z"),
        ("again printing from library code?!", "Ok.", "2026-05-04T10:05:00Z"),
        ("I told you: never print from library code", "Ok.", "2026-05-04T11:04:00Z"),
    ]
    capture(state_root, same_day)
    [proposal] = analyze()["proposals"]
    assert len(proposal["evidence"]) == 3 and proposal["stage"] == "collecting"  # one day only
    approve = run(["habit", "approve", proposal["id"], "--checksum", proposal["checksum"]])
    assert approve.exit == 3 and approve.error["reason"] == "evidence"
    capture(state_root, [("no! never print from library code", "Ok.", "2026-05-05T09:00:00Z")])
    [later] = analyze()["proposals"]
    assert later["id"] == proposal["id"] and later["stage"] == "reviewable"


def test_dry_run_writes_nothing(state_root: Path) -> None:
    capture(state_root, FRICTION[:2])
    analyze()  # a ledger with a candidate and a watermark, a rotated generation
    capture(state_root, FRICTION[3:])
    before = snapshot(state_root)
    dry = analyze("--dry-run")
    assert dry["dry_run"] is True and dry["records"] == 5
    assert {p["stage"] for p in dry["proposals"]} == {"reviewable", "collecting"}
    assert all(b["outcome"] == "analysed" for b in dry["batches"])
    assert snapshot(state_root) == before
    real = analyze()
    assert [(p["condition"], p["behavior"], p["stage"]) for p in real["proposals"]] == [
        (p["condition"], p["behavior"], p["stage"]) for p in dry["proposals"]
    ]


def test_dry_run_on_a_fresh_root_creates_nothing(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    capture(root, FRICTION)
    before = snapshot(root)
    out = run(["analyze", "--dry-run", "--root", str(root)])
    assert out.exit == 0 and out.result["proposals"]
    after = snapshot(root)
    # Only the embedding model's verification cache may appear (see habitus.models.embedders.verify).
    assert {k: v for k, v in after.items() if not k.startswith("models")} == before
    assert not (root / "ledger.sqlite").exists()


def test_nothing_unread_answers_without_loading_heavy_modules(state_root: Path) -> None:
    probe = (
        "import sys\n"
        "sys.argv = ['habitus', 'analyze']\n"
        "from habitus.launcher import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'onnxruntime', 'tokenizers', 'jsonschema'})\n"
        "sys.stderr.write('HEAVY=' + ','.join(heavy) + '\\n')\n"
    )

    def heavy() -> list[str]:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
        assert orjson.loads(done.stdout)["batches"] == [], done.stderr
        line = [x for x in done.stderr.splitlines() if x.startswith("HEAVY=")][-1]
        return [m for m in line[len("HEAVY=") :].split(",") if m]

    assert heavy() == []  # a fresh machine: no state at all
    assert not state_root.exists()  # and the fast path created none
    capture(state_root, FRICTION)
    analyze()
    assert heavy() == []  # everything analysed already


def test_a_held_lock_answers_75(state_root: Path) -> None:
    capture(state_root, FRICTION[:2])
    ready = state_root.parent / "ready"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time, pathlib\n"
            "from habitus.state import locks\nfrom habitus.state.root import StateRoot\n"
            "with locks.hold(StateRoot(pathlib.Path(sys.argv[1])), 'analyze', wait=5):\n"
            "    pathlib.Path(sys.argv[2]).write_text('1')\n    time.sleep(60)\n",
            str(state_root),
            str(ready),
        ]
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert time.monotonic() < deadline and holder.poll() is None
            time.sleep(0.02)
        busy = run_process(["analyze", "--wait", "0"])
        assert busy.exit == 75 and busy.error["code"] == "state_locked" and busy.stdout == b""
    finally:
        holder.kill()
        holder.wait(timeout=60)
    assert not (state_root / "ledger.sqlite").exists() or watermark(state_root) == 0
    assert analyze()["records"] == 2


def test_killed_during_a_batch_commit_keeps_earlier_batches_and_nothing_half_applied(
    state_root: Path, tmp_path: Path
) -> None:
    setting(state_root, "analyze.batch_max_records", 4)
    capture(state_root, FRICTION)
    killed = run_process(["analyze"], env={"HABITUS_TEST_FAULT": "analyze_commit_2:kill"}, timeout=120)
    assert killed.exit == -signal.SIGKILL and killed.stdout == b""
    # Batch 1 (seqs 1-4) is committed with its watermark; batch 2 left no trace.
    assert watermark(state_root) == 4
    cited = {r.split(":")[1] for (r,) in query(state_root, "SELECT ref FROM habit_evidence")}
    assert cited and cited <= {"1", "2", "3", "4"}
    assert (
        sqlite3.connect(state_root / "ledger.sqlite").execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    )
    resumed = analyze()
    assert [(b["seq_start"], b["seq_end"]) for b in resumed["batches"]] == [(5, 8)]
    # The end state is the one an uninterrupted run reaches.
    clean = tmp_path / "clean"
    setting(clean, "analyze.batch_max_records", 4)
    capture(clean, FRICTION)
    assert run(["analyze", "--root", str(clean)]).exit == 0
    assert habit_state(state_root) == habit_state(clean)


def test_a_replaced_observation_log_fails_closed(state_root: Path) -> None:
    capture(state_root, FRICTION[:2])
    setting(state_root, "analyze.batch_max_records", 1)
    first = run_process(["analyze"], env={"HABITUS_TEST_FAULT": "analyze_commit_2:kill"}, timeout=120)
    assert first.exit == -signal.SIGKILL and watermark(state_root) == 1
    # Someone replaces the log with another one of the same length: the chain no longer matches.
    import shutil

    shutil.rmtree(state_root / "observations")
    capture(state_root, [("something else entirely", "ok", "2026-05-04T08:00:00Z"), FRICTION[1]])
    refused = run(["analyze"])
    assert refused.exit == 3 and refused.error["code"] == "checksum_mismatch"
    assert watermark(state_root) == 1


def test_request_on_stdin_is_validated_and_ignored(state_root: Path) -> None:
    capture(state_root, FRICTION[:2])
    assert run(["analyze"], stdin=b"{not json").error["code"] == "bad_json"
    out = run(["analyze"], {"appended": 2, "generation": 1})  # what `habitus capture` prints
    assert out.exit == 0 and out.result["records"] == 2


def test_a_newer_ledger_is_refused_untouched(state_root: Path) -> None:
    capture(state_root, FRICTION[:2])
    analyze()
    capture(state_root, FRICTION[3:5])
    conn = sqlite3.connect(state_root / "ledger.sqlite")
    conn.execute("PRAGMA user_version = 999")
    conn.commit()
    conn.close()
    before = (state_root / "ledger.sqlite").read_bytes()
    for args in (["analyze"], ["analyze", "--dry-run"]):
        out = run(args)
        assert out.exit == 3 and out.error["code"] == "schema_newer", args
    assert (state_root / "ledger.sqlite").read_bytes() == before


def test_progress_goes_to_stderr_only_on_a_terminal(state_root: Path) -> None:
    capture(state_root, FRICTION)
    out = run_process(["analyze"])
    assert out.exit == 0 and out.stderr == b""  # not a TTY: no progress bar
    assert orjson.loads(out.stdout)["records"] == 8
    if not hasattr(os, "openpty"):
        pytest.skip("no pty")
    capture(state_root, FRICTION, session="s2")
    master, slave = os.openpty()
    try:
        done = subprocess.run(
            [str(Path(sys.executable).parent / "habitus"), "analyze"],
            stdout=subprocess.PIPE,
            stderr=slave,
            timeout=120,
            check=False,
            env={**os.environ, "NO_COLOR": "1"},  # the count uninterrupted by colour codes
        )
        os.close(slave)
        shown = os.read(master, 65536)
    finally:
        os.close(master)
    assert done.returncode == 0 and orjson.loads(done.stdout)["records"] == 8
    assert b"analyze" in shown and b"8/8 records" in shown


def test_status_reports_the_queue_last_run_and_quarantine(state_root: Path) -> None:
    capture(state_root, FRICTION)
    before = run(["status"]).result["analyze"]
    assert before["unread"] == [{"generation": 1, "read_seq": 0, "last_seq": 8, "unread": 8}]
    assert before["unread_total"] == 8 and before["last_run"] is None and before["quarantined"] == 0
    assert not (state_root / "ledger.sqlite").exists()  # status never creates it
    analyze()
    after = run(["status"]).result["analyze"]
    assert after["unread_total"] == 0
    assert after["last_run"]["outcome"] == "ok" and after["last_run"]["records"] == 8
    assert after["analyzer"] == "local"
