"""`hooks install` then `hooks uninstall` inside each real client: the guidance reaches the model while
installed, nothing does once uninstalled, and the settings file is byte for byte what it was (the
user's own file with its formatting, or no file where install created it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from e2e import clients
from e2e.clients import FACT, HARNESS, PROMPT
from e2e.fake_model import ANSWER, FakeModel
from e2e.test_clients import session
from habitus.harness import plan

pytestmark = pytest.mark.e2e

# A user's own settings, kept byte for byte: odd indentation, unsorted keys, a hook of their own.
OWN = (
    b'{\n   "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]},\n'
    b'   "cleanupPeriodDays": 30\n}'
)

# Gemini's settings in the keys 0.61 writes itself (it migrates older ones, e.g. general.disableAutoUpdate,
# by rewriting the file at start), on one line as a person might keep them.
GEMINI_OWN = (
    b'{"security": {"auth": {"selectedType": "gemini-api-key"}}, "hooksConfig": {"enabled": true}, '
    b'"general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}, '
    b'"privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}}'
)


def settings_file(s: clients.Session) -> Path:
    if s.name == "claude":
        return s.claude_config / "settings.json"
    if s.name == "codex":
        return s.codex_home / "hooks.json"
    return s.home / ".gemini" / "settings.json"


def hooks(s: clients.Session, verb: str) -> dict:
    done = subprocess.run(
        [str(clients.HABITUS), "hooks", verb, "--harness", clients.HARNESS[s.name]],
        env=s.env(), capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
def test_uninstall_takes_habitus_out_of_the_client_and_gives_the_file_back(
    client: str, tmp_path: Path
) -> None:
    root = tmp_path / "state"
    clients.prepare(root)
    with FakeModel() as model:
        s = session(client, tmp_path, model, hooks=False)
        path = settings_file(s)
        if client == "claude":
            path.write_bytes(OWN)
        elif client == "gemini":
            path.write_bytes(GEMINI_OWN)
        before = path.read_bytes() if path.exists() else None  # codex: no file
        assert hooks(s, "install")["changed"]
        turn = s.run(PROMPT)
        assert turn.exit == 0 and ANSWER in turn.stdout, turn.stderr[-2000:]
        assert model.saw(FACT), "installed, the memory index never reached the model"
        result = hooks(s, "uninstall")
        assert result["changed"] and len(result["removed"]) == len(plan.events(HARNESS[client]))
        assert (path.read_bytes() if path.exists() else None) == before
        model.reset()
        again = s.run(PROMPT)
    assert again.exit == 0 and ANSWER in again.stdout, again.stderr[-2000:]
    assert model.saw("read notes.txt first")
    assert not any(model.saw(text) for text in (FACT, *clients.MARKERS))


def test_a_file_gemini_rewrote_meanwhile_keeps_geminis_changes(tmp_path: Path) -> None:
    """The setup's file has keys Gemini CLI 0.61 migrates (general.disableAutoUpdate ->
    enableAutoUpdate): it rewrites the file during the turn, and uninstall keeps that rewrite."""
    root = tmp_path / "state"
    clients.prepare(root)
    with FakeModel() as model:
        s = session("gemini", tmp_path, model, hooks=False)
        path = settings_file(s)
        before = json.loads(path.read_text())
        assert before["general"] == {"disableAutoUpdate": True, "disableUpdateNag": True}
        hooks(s, "install")
        assert s.run(PROMPT).exit == 0
        during = json.loads(path.read_text())
        result = hooks(s, "uninstall")
    after = json.loads(path.read_text())
    assert during["general"] != before["general"], "Gemini CLI no longer migrates these keys"
    assert result["restored"] is None and result["changed"]
    assert after == {k: v for k, v in during.items() if k != "hooks"} and "hooks" not in before
