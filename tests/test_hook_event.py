"""`habitus hook`: one process per hook event runs every habitus command planned for it, on one reading
of the event, and answers once (what `hooks install` writes since 2026-12-07).

Behaviour only: how much time it saves is bench/'s (bench_hooks, bench_harnesses).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from advise_helpers import Transcript
from conftest import run
from habitus import cli, hookmode
from habitus.harness import plan
from habitus.harness.reply import merge
from worker_helpers import EVENT, FACT, HABIT, env_for, hook, prepare, status, stopped_after, wait_ready

GUIDANCE = "habitus: the user approved these habits"
CLAIM = "Bumped the version to 0.6.0 and added the changelog entry. All 53 tests pass. The release is ready to tag."


def in_process(
    root: Path, args: list[str], event: dict[str, object], *, harness: str = "claude-code"
) -> bytes:
    done = hook(args, event, env_for(root, worker=False), harness=harness)
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    return done.stdout


def lines(root: Path) -> list[dict[str, object]]:
    path = root / "errors.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_merge_joins_context_in_order_and_keeps_a_block_and_notices() -> None:
    select = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "habits"}}
    advise = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "a note"}}
    assert merge([None, None]) is None and merge([]) is None
    assert merge([None, select, None]) == select
    assert merge([select, advise]) == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "habits\n\na note"}
    }
    assert merge([{"additionalContext": "index"}, {"additionalContext": "habits"}]) == {
        "additionalContext": "index\n\nhabits"
    }
    block = {"decision": "block", "reason": "run the tests first", "systemMessage": "habitus paused"}
    assert merge([None, block]) == block
    assert merge([{"systemMessage": "one"}, block]) == {**block, "systemMessage": "one\nhabitus paused"}


def test_a_prompt_gets_the_habits_then_the_waiting_note_in_one_reply(
    state_root: Path, tmp_path: Path
) -> None:
    """select's guidance and advise's waiting note, each what the command alone answers, joined."""
    prepare(state_root)
    transcript = Transcript(tmp_path / "s.jsonl", session="s")
    base = {"session_id": "s", "transcript_path": str(transcript.path), "cwd": str(tmp_path)}
    prompt = {**base, "hook_event_name": "UserPromptSubmit", "prompt": EVENT["prompt"]}
    transcript.prompt(str(EVENT["prompt"]))
    first = run(["hook", "--harness", "claude-code"], prompt)
    assert first.exit == 0 and first.stderr == b""
    text = json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
    assert text.startswith(GUIDANCE) and HABIT["behavior"] in text
    transcript.say(CLAIM)
    stop = run(
        ["hook", "--harness", "claude-code"], {**base, "hook_event_name": "Stop", "stop_hook_active": False}
    )
    assert (stop.exit, stop.stdout) == (0, b"")  # captured; the concern waits for the next prompt
    assert plan.commands_for("claude-code", "UserPromptSubmit") == [("select",), ("advise",)]
    both = run(["hook", "--harness", "claude-code"], prompt)  # both answer: the habit, the waiting note
    joined = json.loads(both.stdout)["hookSpecificOutput"]["additionalContext"]
    alone = json.loads(in_process(state_root, ["select"], prompt))["hookSpecificOutput"]["additionalContext"]
    assert joined.startswith(alone + "\n\n") and "shows no sign of the behaviour" in joined[len(alone) :]
    assert lines(state_root) == []


@pytest.mark.parametrize(
    "stdin", [b"", b"{}", b'{"hook_event_name": "Notification"}', b'{"hook_event_name": 7}']
)
def test_an_event_without_commands_runs_nothing_and_says_nothing(state_root: Path, stdin: bytes) -> None:
    prepare(state_root)
    done = run(["hook", "--harness", "codex"], stdin=stdin)
    assert (done.exit, done.stdout, done.stderr) == (0, b"", b"")
    assert lines(state_root) == []


def test_garbage_is_logged_once_by_hook_itself(state_root: Path) -> None:
    prepare(state_root)
    done = run(["hook", "--harness", "gemini"], stdin=b"not json")
    assert (done.exit, done.stdout, done.stderr) == (0, b"", b"")
    assert [(e["command"], e["code"]) for e in lines(state_root)] == [("hook", "bad_json")]


def test_a_failing_command_leaves_the_hook_calls_clock_and_lock_cap_for_the_next(
    state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command that fails inside `hook` is logged, and the hook call's own deadline and lock-wait cap
    still hold for the command after it (reporting a failure used to disarm the whole call)."""
    prepare(state_root)
    (state_root / "ledger.sqlite").write_bytes(b"this is not a database" * 100)
    seen: list[tuple[str, bool, float]] = []
    original = cli.run_line

    def spy(argv: list[str], stdin: bytes) -> tuple[int, bytes]:
        seen.append((argv[0], hookmode.armed(), hookmode.lock_wait(5.0)))
        return original(argv, stdin)

    monkeypatch.setattr(cli, "run_line", spy)
    done = run(["hook", "--harness", "claude-code"], EVENT)
    assert (done.exit, done.stdout) == (0, b"")
    cap = hookmode.DEFAULT_LOCK_WAIT_MS / 1000
    assert seen == [("select", True, cap), ("advise", True, cap)]
    assert [(e["command"], e["code"]) for e in lines(state_root)] == [
        ("select", "state_corrupt"),
        ("advise", "state_corrupt"),
    ]


def test_no_command_starts_once_the_budget_is_spent(state_root: Path, tmp_path: Path) -> None:
    prepare(state_root)
    event = {"hook_event_name": "Stop", "session_id": "d", "transcript_path": None, "prompt": "use tabs",
             "last_assistant_message": "Done.", "stop_hook_active": False}  # fmt: skip
    hookmode.arm(
        time.monotonic() - 1, hookmode.Settings(), command="hook", harness="codex", root=None, clock=False
    )
    try:
        code, out = cli.run_line(["hook", "--harness", "codex"], json.dumps(event).encode())
    finally:
        hookmode.disarm()
    assert (code, out) == (0, b"")
    assert [(e["command"], e["code"]) for e in lines(state_root)] == [("hook", "deadline")]
    assert not list((state_root / "observations").glob("obs-*.jsonl")) or all(
        path.stat().st_size == 0 for path in (state_root / "observations").glob("obs-*.jsonl")
    )  # capture never ran


def test_the_warm_worker_answers_hook_as_the_process_would(state_root: Path) -> None:
    prepare(state_root)
    start = {"hook_event_name": "SessionStart", "session_id": "w-1", "source": "startup"}
    expected = {
        name: in_process(state_root, ["hook"], event) for name, event in (("start", start), ("prompt", EVENT))
    }
    assert FACT.encode() in expected["start"] and HABIT["behavior"].encode() in expected["prompt"]
    with stopped_after(state_root):
        before = wait_ready(state_root)["served"]
        env = env_for(state_root)
        for _ in range(2):
            assert hook(["hook"], start, env).stdout == expected["start"]
            assert hook(["hook"], EVENT, env).stdout == expected["prompt"]
        assert status(state_root)["served"] - before == 4  # each call, all its commands, in the worker
    assert lines(state_root) == []


# -- Pi: the extension hands a session's later events to the worker over its socket --------------------


def test_a_pi_reply_names_the_configured_hook_budget(state_root: Path) -> None:
    """Pi's extension gives the calls it does not wait for (agent_settled's review) this budget: even an
    event with nothing to say answers it; other harnesses' replies stay as they were."""
    assert run(["config", "set", "hooks.budget_ms", "45000"]).exit == 0
    settled = {"hook_event_name": "agent_settled", "session_id": "p", "messages": []}
    assert json.loads(in_process(state_root, ["hook"], settled, harness="pi")) == {"budget_ms": 45000}
    stop = {"hook_event_name": "Stop", "session_id": "p", "stop_hook_active": False}
    assert in_process(state_root, ["hook"], stop) == b""


def _json_call(path: str, header: dict[str, object], body: bytes) -> list[tuple[dict[str, object], bytes]]:
    """Send one request with a JSON header (what Pi's extension writes) and read every reply frame."""
    import socket
    import struct

    data = json.dumps(header).encode()
    frames = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(path)
        conn.sendall(struct.pack(">II", len(data) | 1 << 31, len(body)) + data + body)
        buffer = b""
        while chunk := conn.recv(1 << 16):
            buffer += chunk
        while buffer:
            size, length = struct.unpack(">II", buffer[:8])
            assert size & 1 << 31, "a JSON request gets JSON replies"
            size &= ~(1 << 31)
            frames.append((json.loads(buffer[8 : 8 + size]), buffer[8 + size : 8 + size + length]))
            buffer = buffer[8 + size + length :]
    return frames


def test_a_json_client_is_served_like_the_python_client(state_root: Path, tmp_path: Path) -> None:
    from habitus.worker import PROTOCOL, code_id, socket_path

    prepare(state_root)
    event = {"hook_event_name": "before_agent_start", "session_id": "p", "prompt": EVENT["prompt"]}
    expected = json.loads(in_process(state_root, ["hook"], event, harness="pi"))
    assert HABIT["behavior"] in expected["additionalContext"] and FACT in expected["additionalContext"]
    assert "worker" not in expected  # HABITUS_WORKER=0: the extension is told of no worker
    assert expected["budget_ms"] == hookmode.DEFAULT_BUDGET_MS  # the deadline of its background calls
    expected["worker"] = {"socket": socket_path(str(state_root)), "code": code_id()}
    with stopped_after(state_root):
        wait_ready(state_root)
        request = {
            "op": "run",
            "protocol": PROTOCOL,
            "code": code_id(),
            "argv": ["hook", "--harness", "pi"],
            "cwd": str(tmp_path),
            "env": env_for(state_root),
            "deadline": time.monotonic() + 30,  # node's process.hrtime is the same CLOCK_MONOTONIC
        }
        frames = _json_call(socket_path(str(state_root)), request, json.dumps(event).encode())
        assert [h["status"] for h, _ in frames] == ["accepted", "done"] and frames[1][0]["exit"] == 0
        assert json.loads(frames[1][1]) == expected
        other = _json_call(socket_path(str(state_root)), {**request, "code": "9.9.9:/elsewhere"}, b"{}")
        assert other == [({"status": "mismatch"}, b"")]  # and that worker leaves, as for Python
    assert lines(state_root) == []


def test_the_pi_extension_sends_later_events_to_the_worker_without_a_process(
    state_root: Path, tmp_path: Path
) -> None:
    """The first event of a session starts `habitus hook` (its reply names the worker); the next ones
    go over the socket from node: no process, the same work (the turn is stored and reviewed)."""
    import shutil
    import subprocess

    from conftest import BIN
    from obs_helpers import payloads
    from pi_helpers import extension_as_commonjs

    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    prepare(state_root)
    spawned = tmp_path / "spawned"
    spy = tmp_path / "habitus"
    spy.write_text(f'#!/bin/sh\necho "$@" >> {spawned}\nexec {BIN / "habitus"} "$@"\n')
    spy.chmod(0o755)
    (tmp_path / "ext.js").write_text(extension_as_commonjs("habitus.ts", "habitusExtension"))
    (tmp_path / "drive.js").write_text(PI_TURN)
    env = env_for(state_root, HABITUS_BIN=str(spy))
    with stopped_after(state_root):
        before = wait_ready(state_root)["served"]
        done = subprocess.run(
            ["node", str(tmp_path / "drive.js"), str(tmp_path / "ext.js"), str(tmp_path), str(EVENT["prompt"]), CLAIM],
            capture_output=True, timeout=90, env=env, check=False,
        )  # fmt: skip
        assert done.returncode == 0 and done.stderr == b"", done.stderr[-2000:]
        first = json.loads(done.stdout.splitlines()[0])
        assert HABIT["behavior"] in first["systemPrompt"] and FACT in first["systemPrompt"]
        assert spawned.read_text().splitlines() == ["hook --harness pi"]  # only before_agent_start
        for _ in range(200):  # agent_settled and session_shutdown: taken by the worker, finished there
            if payloads(state_root) and status(state_root)["served"] - before == 3:
                break
            time.sleep(0.05)
        assert [(p["user"], p["assistant"]) for p in payloads(state_root)] == [(EVENT["prompt"], CLAIM)]
        assert status(state_root)["served"] - before == 3
    assert lines(state_root) == []


PI_TURN = """
const ext = require(process.argv[2]);
const handlers = {};
ext({ on: (name, fn) => { handlers[name] = fn; } });
const ctx = { cwd: process.argv[3], sessionManager: { getSessionId: () => "pi-w", getSessionFile: () => undefined } };
const text = (role, t) => ({ role, content: [{ type: "text", text: t }], stopReason: role === "assistant" ? "stop" : undefined, timestamp: 1763685465041 });
(async () => {
  const prompt = process.argv[4];
  const reply = await handlers.before_agent_start({ type: "before_agent_start", prompt, messageType: "user", systemPrompt: "SYSTEM" }, ctx);
  process.stdout.write(JSON.stringify(reply === undefined ? null : reply) + "\\n");
  await handlers.agent_end({ type: "agent_end", messages: [text("user", prompt), text("assistant", process.argv[5])] }, ctx);
  await handlers.agent_settled({ type: "agent_settled", aborted: false }, ctx);
  await handlers.session_shutdown({ type: "session_shutdown" }, ctx);
})();
"""
