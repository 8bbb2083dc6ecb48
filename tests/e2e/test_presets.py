"""Model presets with the real programs: `habitus config preset claude|codex|gemini|pi` runs the agent CLI
(installed from npm, pointed at the loopback FakeModel: the only double), and `ollama` / `llama-cpp`
talk chat completions to a local server (the FakeModel again).

Each agent CLI runs in a home where habitus's hooks are installed and capture is on, so a recursion
would show as a stored turn, a selection or an injected memory index; none may appear.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from analyze_helpers import FRICTION, LIBRARY, capture
from e2e import clients
from e2e.fake_model import FakeModel
from e2e.test_clients import usable

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

GOOD = {"schema_version": 1, "proposals": [LIBRARY], "memory_suggestions": []}


def analyze(env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [str(clients.HABITUS), "analyze"], env=env, capture_output=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return json.loads(done.stdout)


def selections(env: dict[str, str]) -> int:
    done = subprocess.run(
        [str(clients.HABITUS), "status"], env=env, capture_output=True, timeout=60, check=True
    )
    status = json.loads(done.stdout)
    return int((status["select"] or {}).get("calls") or 0)


@pytest.mark.parametrize("client", ["claude", "codex", "gemini", "pi"])
def test_an_agent_cli_preset_analyzes_without_firing_habitus_hooks(client: str, tmp_path: Path) -> None:
    usable(client)
    root = tmp_path / "state"
    clients.prepare(root)  # capture, advise and select on; a habit and a fact that hooks would inject
    capture(root, FRICTION)
    with FakeModel(answer=json.dumps(GOOD)) as model:
        session = clients.Session(client, tmp_path, model.url, root)  # habitus's hooks installed
        env = session.env()
        preset = [str(clients.HABITUS), "config", "preset", client, "--program", session.argv[-1]]
        if client == "pi":  # Pi runs under the node it needs: a wrapper program stands for `pi`
            wrapper = tmp_path / "bin" / "pi"
            wrapper.parent.mkdir()
            wrapper.write_text(f'#!/bin/sh\nexec "{session.argv[0]}" "{session.argv[1]}" "$@"\n')
            wrapper.chmod(0o755)
            preset[-1] = str(wrapper)
        out = subprocess.run(preset, env=env, capture_output=True, timeout=60, check=False)
        assert out.returncode == 0, out.stderr
        before = (len(clients.stored(root)), selections(env))
        result = analyze(env)
        calls = model.turns()
    assert result["analyzer"] == f"model:{client}"
    assert [(p["condition"], p["behavior"]) for p in result["proposals"]] == [
        (LIBRARY["condition"], LIBRARY["behavior"])
    ]
    assert calls, "the CLI never called the model"
    assert any("return the message to the caller" in c.text for c in calls), "the observations were not sent"
    assert not any(marker in c.text for c in calls for marker in clients.MARKERS)  # no hook injected
    assert (len(clients.stored(root)), selections(env)) == before  # no hook captured or selected
    assert clients.errors(root) == []
    status = json.loads(subprocess.run([str(clients.HABITUS), "status"], env=env, capture_output=True).stdout)
    [entry] = status["models"]
    assert (entry["name"], entry["preset"], entry["used_for"]) == (client, client, ["analyze", "advise"])


@pytest.mark.parametrize("preset", ["ollama", "llama-cpp"])
def test_a_local_server_preset_analyzes(preset: str, tmp_path: Path) -> None:
    root = tmp_path / "state"
    capture(root, FRICTION)
    env = {**os.environ, "HABITUS_HOME": str(root)}
    with FakeModel(answer=json.dumps(GOOD)) as model:
        extra = ["--model", "qwen2.5-coder:7b"] if preset == "ollama" else []
        out = subprocess.run(
            [str(clients.HABITUS), "config", "preset", preset, "--url", f"{model.url}/v1", "--for", "analyze", *extra],
            env=env, capture_output=True, timeout=60, check=False,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        result = analyze(env)
        [call] = model.turns()
    assert result["analyzer"] == f"model:{preset}"
    assert [p["condition"] for p in result["proposals"]] == [LIBRARY["condition"]]
    assert call.path == "/v1/chat/completions"
    assert call.body["model"] == ("qwen2.5-coder:7b" if preset == "ollama" else "local")
    assert call.body["stream"] is False


NOTE = {
    "schema_version": 1,
    "advice": {
        "note": "Run the test suite before calling it done.",
        "severity": "concern",
        "findingKey": "tests-not-run",
    },
}


@pytest.mark.parametrize("client", ["claude", "codex", "gemini", "pi"])
def test_a_preset_reviews_at_stop_inside_the_same_client_without_recursion(
    client: str, tmp_path: Path
) -> None:
    """The client's own Stop hook runs advise, whose model is the same CLI: one review, one stored turn."""
    usable(client)
    root = tmp_path / "state"
    clients.prepare(root)
    with FakeModel(answer=json.dumps(NOTE)) as model:
        session = clients.Session(client, tmp_path, model.url, root)
        (session.cwd / "notes.txt").write_text("The build is green.\n")
        program = session.argv[-1]
        if client == "pi":
            program = str(tmp_path / "pi-wrapper")
            Path(program).write_text(f'#!/bin/sh\nexec "{session.argv[0]}" "{session.argv[1]}" "$@"\n')
            Path(program).chmod(0o755)
        out = subprocess.run(
            [str(clients.HABITUS), "config", "preset", client, "--program", program, "--for", "advise"],
            env=session.env(), capture_output=True, timeout=60, check=False,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        turn = session.run(clients.PROMPT, timeout=240)
        advice = reviewed(session.env(), root)  # while the model still answers
        calls = model.turns()
    assert turn.exit == 0, turn.stderr[-2000:]
    reviews = [c for c in calls if "You are a watchdog reviewer for a coding agent" in c.text]
    # The reviewing CLI may take two calls (the fake model asks it for a tool call, refused or failing in
    # its empty folder); what counts is one review, its own turn never captured, no hook inside it.
    assert reviews, f"no review call among {len(calls)}"
    assert not any(marker in r.text for r in reviews for marker in clients.MARKERS)
    assert len(clients.stored(root)) == 1  # the user's turn; the review's own turn was never captured
    assert (advice["reviews"], advice["failures"], advice["notes"]["pending"]) == (1, 0, 1), (
        advice,
        clients.errors(root),
    )
    assert clients.errors(root) == []


def reviewed(env: dict[str, str], root: Path, seconds: float = 90) -> dict[str, Any]:
    """advise's status once the end of the turn's review is counted, or failed, or logged an error.
    Pi's extension hands agent_settled to the warm worker, which reviews after `pi -p` has exited (the
    review model, another `pi -p`, starts slowly under load); the other clients wait for their hook."""
    deadline = time.monotonic() + seconds  # past the hook budget (30 s) the review has
    while True:
        done = subprocess.run([str(clients.HABITUS), "status"], env=env, capture_output=True, timeout=60)
        advice: dict[str, Any] = json.loads(done.stdout)["advise"]
        if advice["reviews"] or advice["failures"] or clients.errors(root) or time.monotonic() > deadline:
            return advice
        time.sleep(0.25)
