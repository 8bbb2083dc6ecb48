"""The state lock and the recovery hook every command passes through (habitus.state.guard)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from backup_helpers import make_state, snapshot, tree
from conftest import run, run_process
from habitus import codec
from habitus.errors import HabitusError
from habitus.state import guard, statelock

PROBE = """
import sys
sys.argv = ["habitus", *sys.argv[1:]]
from habitus.launcher import main
try:
    main()
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if m in ("habitus.state.restore", "habitus.state.backup", "fasteners"))
sys.stderr.write("LOADED=" + ",".join(loaded) + "\\n")
"""

SHARER = """
import sys
from habitus.state import guard
guard.enter(__import__("pathlib").Path(sys.argv[1]), 5)
print(guard.holds(__import__("pathlib").Path(sys.argv[1])), flush=True)
sys.stdin.readline()
"""


def loaded_modules(args: list[str]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60)
    line = [x for x in done.stderr.splitlines() if x.startswith("LOADED=")][-1]
    return [m for m in line[len("LOADED=") :].split(",") if m]


def test_with_nothing_to_recover_no_restore_code_is_loaded(state_root: Path) -> None:
    make_state(state_root, "a")
    assert run(["config", "set", "capture.enabled", "true"]).exit == 0  # creates locks/state.lock
    assert (state_root / "locks" / "state.lock").exists()
    assert loaded_modules(["status", "--root", str(state_root)]) == []
    assert loaded_modules(["config", "get", "capture.enabled", "--root", str(state_root)]) == []


def test_shared_holders_block_the_exclusive_lock_until_they_exit(state_root: Path) -> None:
    make_state(state_root, "a")
    statelock.lock_path(state_root).parent.mkdir(mode=0o700)
    statelock.lock_path(state_root).touch(mode=0o600)
    sharer = subprocess.Popen(
        [sys.executable, "-c", SHARER, str(state_root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert sharer.stdin is not None and sharer.stdout is not None
    try:
        assert sharer.stdout.readline().strip() == b"shared"
        assert run(["status", "--wait", "0"]).exit == 0  # shared with shared is fine
        with pytest.raises(HabitusError) as caught, statelock.exclusive(state_root, 0.2):
            pass
        assert caught.value.code == "state_locked"
        assert guard.holds(state_root) is None
    finally:
        sharer.stdin.close()
        sharer.wait(timeout=30)
    with statelock.exclusive(state_root, 5):
        assert guard.holds(state_root) == "exclusive"
    assert guard.holds(state_root) is None


def write_journal(root: Path, body: dict[str, object], *, sign: bool = True) -> None:
    (root / ".restore").mkdir(mode=0o700, exist_ok=True)
    if sign:
        body = {**body, "checksum": codec.checksum(body)}
    path = statelock.journal_path(root)
    path.write_bytes(orjson.dumps(body))
    path.chmod(0o600)


JOURNAL = {
    "format": "habitus-restore-journal",
    "version": 1,
    "token": "0123456789abcdef",
    "phase": "moved",
    "items": [{"name": "law.md", "live": ["law.md"], "install": True}],
    "created_at": "2026-11-30T00:00:00.000Z",
}


@pytest.mark.parametrize(
    ("body", "sign", "code"),
    [
        (JOURNAL, False, "state_corrupt"),
        ({**JOURNAL, "items": [{"name": "../../outside", "live": ["../../outside"]}]}, True, "state_corrupt"),
        ({**JOURNAL, "items": [{"name": "law.md", "live": ["../config.toml"]}]}, True, "state_corrupt"),
        ({**JOURNAL, "items": [{"name": ["law.md"], "live": [["law.md"]]}]}, True, "state_corrupt"),
        ({**JOURNAL, "items": "law.md"}, True, "state_corrupt"),
        ({**JOURNAL, "phase": "dreaming"}, True, "state_corrupt"),
        ({**JOURNAL, "token": "../x"}, True, "state_corrupt"),
        ({**JOURNAL, "version": 2}, True, "schema_newer"),
    ],
    ids=["unsigned", "outside-name", "outside-live", "wrong-types", "not-a-list", "phase", "token", "newer"],
)
def test_a_damaged_journal_fails_closed_and_moves_nothing(
    state_root: Path, body: dict[str, object], sign: bool, code: str
) -> None:
    make_state(state_root, "a")
    rollback = state_root / ".restore" / "rollback-0123456789abcdef"
    rollback.mkdir(parents=True, mode=0o700)
    (rollback / "law.md").write_text("old law")
    write_journal(state_root, body, sign=sign)
    before = tree(state_root)
    for args in (["status"], ["verify"], ["config", "set", "capture.enabled", "false"]):
        out = run(args)
        assert out.exit == 3 and out.error["code"] == code, args
    assert tree(state_root) == before


def test_a_valid_journal_is_rolled_back_by_any_command(state_root: Path) -> None:
    make_state(state_root, "a")
    old_law = (state_root / "law.md").read_bytes()
    rollback = state_root / ".restore" / "rollback-0123456789abcdef"
    rollback.mkdir(parents=True, mode=0o700)
    (state_root / "law.md").rename(rollback / "law.md")
    (state_root / "law.md").write_text("half-installed law")
    write_journal(state_root, JOURNAL)
    before = snapshot(state_root)
    out = run_process(["config", "get", "capture.enabled"])
    assert out.exit == 0, out.stderr
    assert (state_root / "law.md").read_bytes() == old_law
    assert snapshot(state_root) == {**before, "law.md": old_law}
    assert not (state_root / ".restore").exists()
