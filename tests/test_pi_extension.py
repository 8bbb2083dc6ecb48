"""The Pi extension (integrations/pi/habitus.ts) under node against a fake Pi with the events of Pi 1.6
(agent_end per attempt, agent_settled, before_agent_start as a union) and of 0.73 (agent_end only)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import BIN, run
from obs_helpers import FIXTURES, enable, payloads
from pi_helpers import extension_as_commonjs

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

DRIVER = """
const ext = require(process.argv[2]);
const handlers = {};
ext({ on: (name, fn) => { handlers[name] = fn; } });
const ctx = { cwd: process.argv[3], sessionManager: { getSessionId: () => process.env.PI_SESSION || "pi-1", getSessionFile: () => undefined } };
const script = JSON.parse(process.argv[4]);
(async () => {
  for (const [name, event] of script) {
    const reply = handlers[name] ? await handlers[name]({ type: name, ...event }, ctx) : undefined;
    if (name === "before_agent_start") process.stdout.write(JSON.stringify(reply === undefined ? null : reply) + "\\n");
  }
})();
"""
PROMPT = "no, use rgb values in the themes, no rgb indices!"
USER = {"role": "user", "content": [{"type": "text", "text": PROMPT}], "timestamp": 1763685465041}
FAILED = {
    "role": "assistant",
    "content": [],
    "stopReason": "error",
    "errorMessage": "503",
    "timestamp": 1763685466000,
}
ANSWER = {
    "role": "assistant",
    "content": [{"type": "text", "text": "Switched the themes to rgb values."}],
    "stopReason": "stop",
    "timestamp": 1763685470000,
}


def drive(tmp_path: Path, script: list[Any], env: dict[str, str], timeout: float = 60) -> tuple[float, bytes]:
    (tmp_path / "ext.js").write_text(extension_as_commonjs("habitus.ts", "habitusExtension"))
    (tmp_path / "drive.js").write_text(DRIVER)
    started = time.monotonic()
    done = subprocess.run(
        ["node", str(tmp_path / "drive.js"), str(tmp_path / "ext.js"), str(tmp_path), json.dumps(script)],
        capture_output=True,
        timeout=timeout,
        env={**os.environ, **env},
        check=False,
    )
    assert done.returncode == 0 and done.stderr == b"", done.stderr[-2000:]
    return time.monotonic() - started, done.stdout


def until(check: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def env_for(root: Path) -> dict[str, str]:
    return {"HABITUS_BIN": str(BIN / "habitus"), "HABITUS_HOME": str(root)}


def test_pi_16_a_retried_503_is_one_turn_with_its_prompt(state_root: Path, tmp_path: Path) -> None:
    enable(state_root)
    script = [
        ["before_agent_start", {"messageType": "user", "prompt": PROMPT, "systemPrompt": "SYSTEM"}],
        ["agent_end", {"messages": [USER, FAILED]}],  # the first attempt: a provider error
        ["agent_end", {"messages": [ANSWER]}],  # the automatic retry: no prompt in it
        ["agent_settled", {"aborted": False}],
    ]
    drive(tmp_path, script, env_for(state_root))
    until(lambda: len(payloads(state_root)) >= 1)
    time.sleep(0.5)
    (stored,) = payloads(state_root)
    assert (stored["user"], stored["assistant"], stored["outcome"]) == (
        PROMPT,
        "Switched the themes to rgb values.",
        "complete",
    )


def test_pi_073_a_retry_without_its_prompt_stores_no_prompt_less_turn(
    state_root: Path, tmp_path: Path
) -> None:
    enable(state_root)
    script = [
        ["before_agent_start", {"prompt": PROMPT, "systemPrompt": "SYSTEM"}],  # 0.73: no messageType
        ["agent_end", {"messages": [USER, ANSWER]}],
        ["agent_end", {"messages": [ANSWER]}],  # a second run without a prompt
    ]
    drive(tmp_path, script, env_for(state_root))
    until(lambda: len(payloads(state_root)) >= 1)
    time.sleep(1.0)
    assert [p["user"] for p in payloads(state_root)] == [PROMPT]


def test_pi_16_an_aborted_run_keeps_the_users_words(state_root: Path, tmp_path: Path) -> None:
    enable(state_root)
    stopped = {**ANSWER, "content": [], "stopReason": "aborted"}
    script = [
        ["before_agent_start", {"messageType": "user", "prompt": PROMPT, "systemPrompt": "SYSTEM"}],
        ["agent_end", {"messages": [USER, stopped]}],
        ["agent_settled", {"aborted": True}],
    ]
    drive(tmp_path, script, env_for(state_root))
    until(lambda: len(payloads(state_root)) >= 1)
    assert [(p["user"], p["outcome"]) for p in payloads(state_root)] == [(PROMPT, "aborted")]


def test_pi_16_a_run_an_extension_started_has_no_prompt(state_root: Path, tmp_path: Path) -> None:
    custom = {"role": "custom", "customType": "x", "content": "check the build", "timestamp": 5}
    event = {"hook_event_name": "before_agent_start", "messageType": "custom", "message": custom}
    from habitus.harness.events import parse_event

    assert parse_event("pi", {**event, "prompt": "ignored"}).prompt is None


def test_a_hung_habitus_does_not_keep_pi_open(state_root: Path, tmp_path: Path) -> None:
    """A habitus that answers the first call (naming a hook budget of 0.5 s) and hangs on every later one:
    the context call dies at 3 s, the background ones 2 s after that budget, not the default 30 s."""
    hung = tmp_path / "hung-habitus"
    hung.write_text(
        f"#!{sys.executable}\nimport pathlib, sys, time\nseen = pathlib.Path(sys.argv[0] + '.seen')\n"
        "if not seen.exists():\n    seen.touch()\n    print('{\"budget_ms\": 500}')\n    sys.exit()\n"
        "time.sleep(60)\n"
    )
    hung.chmod(0o755)
    ask = ["before_agent_start", {"messageType": "user", "prompt": PROMPT, "systemPrompt": "SYSTEM"}]
    script = [
        ask,  # answered at once: the budget, no context
        ask,  # hangs: no context in time
        ["agent_end", {"messages": [USER, ANSWER]}],
        ["agent_settled", {"aborted": False}],
        ["session_shutdown", {}],
    ]
    took, out = drive(tmp_path, script, {"HABITUS_BIN": str(hung)})
    assert [json.loads(line) for line in out.splitlines()] == [None, None]  # the prompt is left alone
    assert took < 20, took  # 3 s, then 2.5 s for the two background calls at once (30 s each unnamed)


@pytest.mark.slow
def test_a_background_call_gets_the_whole_hook_budget(state_root: Path, tmp_path: Path) -> None:
    """agent_settled's review may take a slow model's time: its call lives until the hook budget the
    real `habitus hook` named (hooks.budget_ms), here past the 10 s at which the extension once killed it."""
    assert run(["config", "set", "hooks.budget_ms", "15000"]).exit == 0
    done = tmp_path / "settled"
    slow = tmp_path / "slow-habitus"
    slow.write_text(
        f"#!{sys.executable}\nimport json, pathlib, subprocess, sys, time\ndata = sys.stdin.buffer.read()\n"
        "if json.loads(data)['hook_event_name'] == 'before_agent_start':\n"
        f"    sys.stdout.buffer.write(subprocess.run([{str(BIN / 'habitus')!r}, *sys.argv[1:]], input=data, "
        "capture_output=True).stdout)\n"
        "elif json.loads(data)['hook_event_name'] == 'agent_settled':\n"
        f"    time.sleep(11)\n    pathlib.Path({str(done)!r}).write_text('reviewed')\n"
    )
    slow.chmod(0o755)
    script = [
        ["before_agent_start", {"messageType": "user", "prompt": PROMPT, "systemPrompt": "SYSTEM"}],
        ["agent_end", {"messages": [USER, ANSWER]}],
        ["agent_settled", {"aborted": False}],
    ]
    took, _ = drive(tmp_path, script, {"HABITUS_BIN": str(slow), "HABITUS_HOME": str(state_root)})
    assert done.exists(), f"killed after {took:.1f} s"
    assert took >= 11  # Pi waits for the children an extension started: the call ran to its end


def test_memory_observe_in_a_hook_stores_nothing_until_enabled(state_root: Path) -> None:
    event = {
        "hook_event_name": "agent_end",
        "session_id": "d703a1a9-1b7b-4fb1-b512-c9738b1fe617",
        "session_file": str(FIXTURES / "pi-excerpt.jsonl"),
    }
    out = run(["memory", "observe", "--harness", "pi"], event)
    assert out.exit == 0 and out.stdout == b""
    assert not (state_root / "memory.sqlite").exists()
    assert run(["config", "set", "memory.observe_enabled", "true"]).exit == 0
    assert run(["memory", "observe", "--harness", "pi"], event).exit == 0
    found = run(["memory", "retrieve", "--kind", "observation", "--limit", "100"]).result["items"]
    assert found  # switched on, the same event observes the session


def test_the_events_pi_16_sent_for_a_retried_503_store_one_turn_an_import_agrees(
    state_root: Path, tmp_path: Path
) -> None:
    """The events the real Pi 1.6.0 sent (recorded by an extension) when the loopback model answered
    503 once: two agent_end, the second without the prompt, then agent_settled."""
    enable(state_root)
    script = [json.loads(line) for line in (FIXTURES / "pi-1.6-events.jsonl").read_text().splitlines()]
    assert [name for name, _ in script] == [
        "before_agent_start",
        "agent_end",
        "agent_end",
        "agent_settled",
        "session_shutdown",
    ]
    drive(tmp_path, script, {**env_for(state_root), "PI_SESSION": "01a23386-1893-708f-bc2d-06110bc964e8"})
    until(lambda: len(payloads(state_root)) >= 1)
    time.sleep(0.5)
    (stored,) = payloads(state_root)
    assert (stored["user"], stored["assistant"], stored["outcome"]) == (
        "no, use rgb values in the themes",
        "Answer to the prompt.",
        "complete",
    )
    session = FIXTURES / "pi-1.6-session.jsonl"
    imported = run(["capture", "--transcript", str(session)]).result
    assert imported["appended"] == 0 and imported["duplicates"] == 1
