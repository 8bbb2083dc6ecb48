"""A habit broken by what the agent ran, inside the real Claude Code: the agent commits without the
habit's Conventional Commits prefix on main; the review at Stop (in the warm worker, after its answer)
reads the real transcript, and the note reaches the model with the user's next prompt."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from e2e import clients
from e2e.fake_model import FakeModel
from e2e.test_clients import session

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

COMMITS = {
    "condition": "When committing",
    "behavior": "Do use a Conventional Commits prefix (feat:, fix:, chore:) in the message",
    "polarity": 1,
}


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_commit_without_the_prefix_is_a_note_at_the_next_prompt(tmp_path: Path) -> None:
    root = tmp_path / "state"
    clients.prepare(root)
    clients.habitus(root, "habit", "declare", stdin=json.dumps(COMMITS).encode())
    with FakeModel(command="git commit -am 'stuff'") as model:
        s = session("claude", tmp_path, model)
        _git(s.cwd, "init", "-q", "-b", "main")
        _git(s.cwd, "config", "user.email", "dev@example.invalid")
        _git(s.cwd, "config", "user.name", "Dev")
        _git(s.cwd, "add", "notes.txt")
        _git(s.cwd, "commit", "-q", "-m", "chore: start")
        (s.cwd / "notes.txt").write_text("The build is green.\nAnd the docs too.\n")

        first = s.run(
            "commit the notes; read notes.txt first", claude_args=("--allowedTools", "Bash(git commit:*)")
        )
        assert first.exit == 0, first.stderr[-2000:]
        assert _git(s.cwd, "log", "-1", "--format=%s").strip() == "stuff"  # the client really ran it
        time.sleep(3)  # the review runs in the worker after the Stop hook's answer

        model.reset()
        second = s.run("anything else?", claude_args=("--continue",))
        assert second.exit == 0, second.stderr[-2000:]
        assert model.saw("[habitus advise] A reviewer looked at your recent work"), (
            "no note reached the model"
        )
        # the note names the habit and quotes the call that broke it
        assert model.saw(
            "Do use a Conventional Commits prefix (feat:, fix:, chore:) in the message. The new work"
        )
    assert clients.errors(root) == []
