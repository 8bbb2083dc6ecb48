"""kill -9 at every phase of a restore: the next command sees exactly the old or exactly the new state."""

from __future__ import annotations

from pathlib import Path

import pytest

from backup_helpers import killed_writer, make_state, snapshot
from conftest import run, run_process
from habitus.state import statelock

# phase -> which state the next command must see. Up to `committed` a crash rolls back.
PHASES = [
    ("restore_staged", "old"),
    ("restore_prepared", "old"),
    ("restore_moving", "old"),
    ("restore_moved", "old"),
    ("restore_installing", "old"),
    ("restore_installed", "old"),
    ("restore_generation", "old"),
    ("restore_committed", "new"),
]


@pytest.fixture
def states(state_root: Path, tmp_path: Path) -> tuple[Path, dict[str, object], dict[str, object]]:
    """A backup of state 'new' (what restore installs), then the live state 'old' that it replaces.
    The live ledger holds committed rows only in its -wal (its writer was killed), so a rollback must
    bring the -wal back too."""
    make_state(state_root, "backed-up", rows=40, law=False, mutes=True)
    new = snapshot(state_root)
    assert run(["backup", "--out", str(tmp_path / "b")]).exit == 0
    make_state(state_root, "live", rows=10, law=True, mutes=False)
    killed_writer(state_root, "in-wal", 25)
    old = snapshot(state_root)
    assert "in-wal-00024" in str(old["ledger.sqlite"]) and old != new
    return tmp_path / "b", old, new


@pytest.mark.parametrize(("point", "expected"), PHASES)
def test_kill_at_each_phase_leaves_exactly_old_or_new(
    state_root: Path, states: tuple[Path, dict[str, object], dict[str, object]], point: str, expected: str
) -> None:
    folder, old, new = states
    crashed = run_process(["restore", str(folder)], env={"HABITUS_TEST_FAULT": f"{point}:kill"})
    assert crashed.exit == -9, crashed.stderr
    journal = statelock.journal_path(state_root)
    assert journal.exists() == (point != "restore_staged")  # it really died mid-restore
    # verify, report-only, sees what was left: only a staging copy when it died before its journal.
    if point == "restore_staged":
        codes = [i["code"] for i in run(["verify"]).result["issues"]]
        assert codes == ["restore_leftover"]
    # The next command, whatever it is, recovers (or removes the staging copy) before it reads anything.
    out = run(["status"])
    assert out.exit == 0, out.stderr
    assert snapshot(state_root) == (new if expected == "new" else old)
    assert not journal.exists()
    report = run(["verify"])
    assert report.exit == 0, report.stdout
    assert not (state_root / statelock.RESTORE_DIR).exists()
    # And the state works: a write succeeds and the restore can be done again.
    assert run(["config", "set", "capture.enabled", "false"]).exit == 0
    again = run(["restore", str(folder)])
    assert again.exit == 0, again.stderr
    assert snapshot(state_root) == new
    assert run(["verify"]).exit == 0
    assert not (state_root / statelock.RESTORE_DIR).exists()


def test_a_crash_during_recovery_is_recovered_again(
    state_root: Path, states: tuple[Path, dict[str, object], dict[str, object]]
) -> None:
    folder, old, _ = states
    assert (
        run_process(["restore", str(folder)], env={"HABITUS_TEST_FAULT": "restore_installed:kill"}).exit == -9
    )
    # The first command to recover dies after moving one file back.
    dying = run_process(["status"], env={"HABITUS_TEST_FAULT": "recover_rolling_back:kill"})
    assert dying.exit == -9
    assert statelock.journal_path(state_root).exists()
    out = run_process(["status"])
    assert out.exit == 0, out.stderr
    assert snapshot(state_root) == old
    assert not (state_root / statelock.RESTORE_DIR).exists()


def test_a_killed_restore_into_a_fresh_root_leaves_it_empty(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "backed-up", mutes=True)
    assert run(["backup", "--out", str(tmp_path / "b")]).exit == 0
    fresh = tmp_path / "fresh"
    env = {"HABITUS_TEST_FAULT": "restore_installing:kill"}
    assert run_process(["restore", "--root", str(fresh), str(tmp_path / "b")], env=env).exit == -9
    assert run(["status", "--root", str(fresh)]).exit == 0
    assert snapshot(fresh) == {
        "ledger.sqlite": None,
        "memory.sqlite": None,
        "config.toml": None,
        "law.md": None,
        "mutes.json": None,
    }
