"""One decision of "is this argv a hook call" (habitus.hookmode.hook_call), and every place that makes it
agrees: the launcher (HABITUS_NO_HOOKS, the warm worker), cli (the clock, silent failures), the worker's
client and server (which calls it answers)."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from habitus import cli, hookmode, launcher
from habitus.errors import HabitusError
from habitus.worker import client

R = "ROOT"  # a state root: replaced by a temporary folder in each test

# argv, (command, harness) when it is a hook call, whether the warm worker answers it
TABLE: list[tuple[list[str], tuple[str, str] | None, bool]] = [
    (["select", "--harness", "claude-code"], ("select", "claude-code"), True),
    (["select", "--harness=gemini"], ("select", "gemini"), True),
    (["capture", "--root", R, "--harness", "codex"], ("capture", "codex"), True),
    (["capture", "--root=" + R, "--harness=codex", "--nl"], ("capture", "codex"), True),
    (["memory", "index", "--harness", "pi"], ("memory", "pi"), True),
    (["advise", "--harness", "generic", "--wait", "0"], ("advise", "generic"), True),
    (["memory", "retain", "--harness", "pi"], ("memory", "pi"), False),
    (["config", "get", "--harness=pi", "--bogus"], ("config", "pi"), False),
    (["select", "--harness"], ("select", ""), True),  # a bare flag: click refuses it, silently
    # --root belongs to each command, so before the command it is a usage error: in hook mode a silent one
    (["--root", R, "select", "--harness", "codex"], (R, "codex"), False),
    (["--root", R, "hooks", "install", "--harness", "x"], (R, "x"), False),
    # `habitus hooks` names the harness to configure: never a hook call
    (["hooks", "install", "--harness", "x"], None, False),
    (["hooks", "print", "--harness=codex"], None, False),
    (["hooks", "uninstall", "--root", R, "--harness", "gemini"], None, False),
    (["select"], None, False),
    (["select", "--harnessy", "x"], None, False),
    (["status", "--pretty"], None, False),
    (["--version"], None, False),
    (["--harness=x"], None, False),
    ([], None, False),
]
IDS = [" ".join(argv) or "(none)" for argv, _, _ in TABLE]


@pytest.mark.parametrize(("argv", "call", "served"), TABLE, ids=IDS)
def test_the_one_decision(argv: list[str], call: tuple[str, str] | None, served: bool) -> None:
    assert hookmode.hook_call(argv) == call
    assert hookmode.is_hook_call(argv) is (call is not None)
    assert client.served(argv) is served
    assert not served or call is not None  # the worker answers hook calls only


@pytest.mark.parametrize(("argv", "call", "served"), TABLE, ids=IDS)
def test_the_launcher_agrees(
    argv: list[str],
    call: tuple[str, str] | None,
    served: bool,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Under HABITUS_NO_HOOKS a hook call ends before cli; anything else reaches cli (but --version,
    which the launcher answers itself)."""
    reached: list[list[str]] = []
    monkeypatch.setattr(cli, "main", lambda: reached.append(sys.argv[1:]))
    monkeypatch.setattr(sys, "argv", ["habitus", *argv])
    monkeypatch.setenv("HABITUS_NO_HOOKS", "1")
    launcher.main()
    version = argv == ["--version"]
    assert reached == ([] if call or version else [argv])
    assert capsys.readouterr().out.startswith("habitus ") is version


@pytest.mark.parametrize(("argv", "call", "served"), TABLE, ids=IDS)
def test_cli_agrees(
    argv: list[str],
    call: tuple[str, str] | None,
    served: bool,
    state_root: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """cli arms hook mode, and turns a failure into a silent exit 0 logged under the call's names,
    exactly for hook calls; a failure of any other call is loud."""
    root = tmp_path / "r"
    rooted = any(R in a for a in argv)
    argv = [a.replace(R, str(root)) for a in argv]
    call = call and (call[0].replace(R, str(root)), call[1])
    armed = cli._arm_hook(argv, process=False)
    try:
        assert armed is (call is not None)
        assert hookmode.armed() is (call is not None)
    finally:
        hookmode.disarm()
    code = cli._fail(HabitusError("failed", "boom"), argv)
    err = capsys.readouterr().err
    if call is None:
        assert code == 1 and '"failed"' in err
        assert not (state_root / "errors.jsonl").exists() and not root.exists()
        return
    assert code == 0 and err == ""
    log = (root if rooted else state_root) / "errors.jsonl"
    entry = orjson.loads(log.read_bytes().splitlines()[-1])
    assert (entry["command"], entry["harness"]) == call


def test_a_deadline_the_client_logs_goes_under_the_call_s_own_root_and_names(tmp_path: Path) -> None:
    """The worker's client logs its give-up from argv alone: `--root=DIR` and `--harness=NAME` count."""
    root = tmp_path / "elsewhere"
    hookmode.log_deadline(["select", f"--root={root}", "--harness=gemini"], "the warm worker did not answer")
    entry = orjson.loads((root / "errors.jsonl").read_bytes().splitlines()[-1])
    assert (entry["code"], entry["command"], entry["harness"]) == ("deadline", "select", "gemini")
