"""habitus restore: exact round trips, dry runs, fresh roots, and never swapping under a running command."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from backup_helpers import PY, load_manifest, make_state, save_manifest, snapshot, tree, write_rows
from conftest import run, run_process
from habitus.state import guard, inventory, statelock


def backup_of(root: Path, out: Path) -> Path:
    done = run(["backup", "--root", str(root), "--out", str(out)])
    assert done.exit == 0, done.stderr
    return out


def test_restore_brings_back_exactly_the_backed_up_state(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "old", rows=30, mutes=True)
    before = snapshot(state_root)
    folder = backup_of(state_root, tmp_path / "b")
    make_state(state_root, "new", rows=7, law=False, mutes=True)
    write_rows(state_root, "extra", 3)
    assert snapshot(state_root) != before
    out = run(["restore", str(folder)])
    assert out.exit == 0, out.stderr
    assert snapshot(state_root) == before
    actions = {i["name"]: i["action"] for i in out.result["items"]}
    assert actions == {
        "ledger.sqlite": "replaced",
        "memory.sqlite": "absent",
        "config.toml": "replaced",
        "law.md": "created",
        "mutes.json": "replaced",
    }
    assert out.result["dry_run"] is False and out.result["kept"] == []
    assert out.result["observations"] == {"started": False, "generation": None}  # no log to rotate
    assert not (state_root / statelock.RESTORE_DIR).exists()
    assert run(["verify"]).exit == 0


def test_items_absent_from_the_backup_are_removed(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "old", law=False)
    folder = backup_of(state_root, tmp_path / "b")
    make_state(state_root, "new", law=True, mutes=True)
    out = run(["restore", str(folder)])
    assert out.exit == 0, out.stderr
    actions = {i["name"]: i["action"] for i in out.result["items"]}
    assert actions["law.md"] == "removed" and actions["mutes.json"] == "removed"
    assert not (state_root / "law.md").exists() and not (state_root / "mutes.json").exists()


def test_items_the_backup_does_not_manage_are_kept(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "old")
    folder = backup_of(state_root, tmp_path / "b")
    body = load_manifest(folder)
    body["managed"] = [n for n in body["managed"] if n != "mutes.json"]  # as from an older habitus
    save_manifest(folder, body)
    make_state(state_root, "new", mutes=True)
    mutes = (state_root / "mutes.json").read_bytes()
    out = run(["restore", str(folder)])
    assert out.exit == 0, out.stderr
    assert out.result["kept"] == ["mutes.json"]
    assert (state_root / "mutes.json").read_bytes() == mutes


def test_dry_run_validates_and_changes_nothing(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "old")
    folder = backup_of(state_root, tmp_path / "b")
    make_state(state_root, "new", law=False)
    before = tree(state_root, skip=())
    out = run(["restore", "--dry-run", str(folder)])
    assert out.exit == 0, out.stderr
    assert out.result["dry_run"] is True
    assert {i["name"]: i["action"] for i in out.result["items"]}["law.md"] == "created"
    assert tree(state_root, skip=()) == before


def test_restore_into_a_fresh_root_is_private_under_a_permissive_umask(
    state_root: Path, tmp_path: Path
) -> None:
    make_state(state_root, "old", mutes=True)
    before = snapshot(state_root)
    folder = backup_of(state_root, tmp_path / "b")
    fresh = tmp_path / "fresh"
    old = os.umask(0)
    try:
        out = run(["restore", "--root", str(fresh), str(folder)])
    finally:
        os.umask(old)
    assert out.exit == 0, out.stderr
    assert snapshot(fresh) == before
    for folder_path, _dirs, names in os.walk(fresh):
        assert Path(folder_path).stat().st_mode & 0o777 == 0o700, folder_path
        for name in names:
            assert (Path(folder_path) / name).stat().st_mode & 0o777 == 0o600, name
    assert set(os.listdir(fresh)) == {"ledger.sqlite", "config.toml", "law.md", "mutes.json", "locks"}


def test_a_backup_inside_the_root_is_refused(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "old")
    folder = backup_of(state_root, tmp_path / "b")
    inside = state_root / "b"
    folder.rename(inside)
    out = run(["restore", str(inside)])
    assert out.exit == 2 and out.error["code"] == "usage"


def test_missing_backup_is_not_found(state_root: Path, tmp_path: Path) -> None:
    out = run(["restore", str(tmp_path / "nothing")])
    assert out.exit == 1 and out.error["code"] == "not_found"
    assert not state_root.exists()


def test_a_failure_mid_swap_rolls_back_at_once(
    state_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_state(state_root, "old")
    folder = backup_of(state_root, tmp_path / "b")
    make_state(state_root, "new", mutes=True)
    current = snapshot(state_root)
    monkeypatch.setenv("HABITUS_TEST_FAULT", "restore_installing:raise")
    out = run(["restore", str(folder)])
    assert out.exit == 1 and out.error["code"] == "io_error"
    assert snapshot(state_root) == current
    assert not (state_root / statelock.RESTORE_DIR).exists()


def test_observation_generation_hook_runs_under_the_exclusive_lock(
    state_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_state(state_root, "old")
    wanted = snapshot(state_root)
    folder = backup_of(state_root, tmp_path / "b")
    make_state(state_root, "new")
    calls = []

    def start(root: object, *, wait: float) -> dict[str, object]:
        calls.append(guard.holds(state_root))
        assert snapshot(state_root) == wanted  # called after the restored files are in place
        return {"generation": 8, "previous": 7}

    monkeypatch.setattr(inventory, "start_observation_generation", start)
    out = run(["restore", str(folder)])
    assert out.exit == 0, out.stderr
    assert calls == ["exclusive"]
    assert out.result["observations"] == {"generation": 8, "previous": 7}


def test_a_failing_generation_hook_rolls_the_restore_back(
    state_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_state(state_root, "old")
    folder = backup_of(state_root, tmp_path / "b")
    make_state(state_root, "new")
    current = snapshot(state_root)

    def start(root: object, *, wait: float) -> dict[str, object]:
        raise OSError(5, "observation log unwritable")

    monkeypatch.setattr(inventory, "start_observation_generation", start)
    assert run(["restore", str(folder)]).exit == 1
    assert snapshot(state_root) == current


# -- never swapping files under a running command -------------------------------------------------

HOLDER = """
import sys
from habitus.state import guard, ledger
from habitus.state.root import StateRoot
root = StateRoot.at(sys.argv[1])
guard.enter(root.path, 5)               # what every command does first (habitus.dispatch)
store = ledger.store(root)
conn = store.open_write()               # an open connection to the live ledger
print(guard.holds(root.path), flush=True)
for line in sys.stdin:                  # one committed row per line we are sent
    with store.write(conn):
        conn.execute("INSERT INTO meta VALUES (?, 'v')", (line.strip(),))
    print("ok", flush=True)
"""


def test_restore_never_moves_a_store_that_a_running_command_has_open(
    state_root: Path, tmp_path: Path
) -> None:
    make_state(state_root, "old")
    folder = backup_of(state_root, tmp_path / "b")
    make_state(state_root, "new")
    holder = subprocess.Popen(
        [PY, "-c", HOLDER, str(state_root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == b"shared"
        before = tree(state_root)
        out = run(["restore", str(folder), "--wait", "0.3"])
        assert out.exit == 75 and out.error["code"] == "state_locked"
        assert tree(state_root) == before  # nothing moved
        # The holder's connection still writes into the live file: nothing was swapped under it.
        holder.stdin.write(b"written-after-the-refused-restore\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == b"ok"
        assert "written-after-the-refused-restore" in str(snapshot(state_root)["ledger.sqlite"])
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert run(["restore", str(folder)]).exit == 0  # once the command has finished


def test_a_restore_waits_for_a_running_command_then_proceeds(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "old")
    wanted = snapshot(state_root)
    folder = backup_of(state_root, tmp_path / "b")
    make_state(state_root, "new")
    holder = subprocess.Popen(
        [PY, "-c", HOLDER, str(state_root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert holder.stdin is not None and holder.stdout is not None
    assert holder.stdout.readline().strip() == b"shared"
    restorer = subprocess.Popen(
        [str(Path(PY).parent / "habitus"), "restore", str(folder), "--wait", "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        holder.stdin.write(b"last-write\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == b"ok"
        assert restorer.poll() is None  # still waiting for the holder
        assert "last-write" in str(snapshot(state_root)["ledger.sqlite"])  # landed in the live file
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert restorer.wait(timeout=60) == 0, restorer.stderr.read() if restorer.stderr else b""
    assert snapshot(state_root) == wanted


def test_commands_wait_while_a_restore_swaps_and_see_the_old_state_if_it_dies(
    state_root: Path, tmp_path: Path
) -> None:
    make_state(state_root, "old")
    folder = backup_of(state_root, tmp_path / "b")
    make_state(state_root, "new")
    current = snapshot(state_root)
    ready = tmp_path / "ready"
    restorer = subprocess.Popen(
        [str(Path(PY).parent / "habitus"), "restore", str(folder)],
        env={
            **os.environ,
            "HABITUS_TEST_FAULT": "restore_moved:pause",
            "HABITUS_TEST_FAULT_READY": str(ready),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert restorer.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        assert not (state_root / "ledger.sqlite").exists()  # mid-swap: the live files are aside
        for args in (["status"], ["config", "set", "capture.enabled", "false"], ["verify"], ["backup"]):
            out = run([*args, "--wait", "0.2"])
            assert out.exit == 75 and out.error["code"] == "state_locked", args
    finally:
        restorer.kill()
        restorer.wait(timeout=30)
    out = run(["status"])  # the next command recovers first
    assert out.exit == 0, out.stderr
    assert snapshot(state_root) == current
    assert not (state_root / statelock.RESTORE_DIR).exists()


def test_a_fresh_root_writer_takes_the_shared_lock_when_it_creates_state(state_root: Path) -> None:
    from habitus.state import ledger
    from habitus.state.root import StateRoot

    root = StateRoot(state_root)
    try:
        guard.enter(state_root, 1)
        assert not state_root.exists() and guard.holds(state_root) is None  # nothing created to read
        ledger.store(root).open_write().close()
        assert guard.holds(state_root) == "shared"
        assert (state_root / "locks" / "state.lock").stat().st_mode & 0o777 == 0o600
    finally:
        guard.release_all()
    assert guard.holds(state_root) is None


def test_restore_of_a_backup_made_by_the_installed_command(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "old", mutes=True)
    wanted = snapshot(state_root)
    assert run_process(["backup", "--out", str(tmp_path / "b")]).exit == 0
    make_state(state_root, "new")
    out = run_process(["restore", str(tmp_path / "b")])
    assert out.exit == 0, out.stderr
    assert snapshot(state_root) == wanted


def test_backup_pipes_into_restore(state_root: Path, tmp_path: Path) -> None:
    make_state(state_root, "old", mutes=True)
    wanted = snapshot(state_root)
    habitus = Path(PY).parent / "habitus"
    clone = tmp_path / "clone"
    done = subprocess.run(
        ["sh", "-c", f"{habitus} backup --out {tmp_path / 'b'} | {habitus} restore --root {clone}"],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert snapshot(clone) == wanted


@pytest.mark.parametrize("request_body", [None, {"path": 3}, {"path": ""}, {"other": "x"}])
def test_restore_without_a_folder_is_a_bad_request(state_root: Path, request_body: object) -> None:
    out = run(["restore"], request_body)
    assert out.exit == 2 and out.error["code"] == "bad_request"
    assert "request.path" in out.error["message"]
    assert not state_root.exists()


def test_restore_starts_a_fresh_observation_generation(state_root: Path, tmp_path: Path) -> None:
    from habitus.state import observations
    from habitus.state.root import StateRoot

    assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    folder = backup_of(state_root, tmp_path / "b")
    captured = run(["capture"], {"user": "use tabs", "assistant": "Switched to tabs.", "session": "s1"})
    assert captured.exit == 0 and captured.result["last_seq"] == 1
    out = run(["restore", str(folder)])
    assert out.exit == 0, out.stderr
    assert out.result["observations"] == {"started": True, "generation": 2, "archived": 1}
    root = StateRoot(state_root)
    assert [(g.generation, g.archived, g.last_seq) for g in observations.generations(root)] == [
        (1, True, 1),
        (2, False, 0),
    ]
    assert observations.read(root, 1).records[0]["seq"] == 1  # the old generation stays readable
    again = run(["restore", str(folder)])
    assert again.exit == 0 and again.result["observations"] == {"started": False, "generation": 2}
