"""The hooks as each harness runs them: the commands `habitus hooks print` gives, as real processes
of the installed console script, with the harness's documented JSON on stdin and a timeout.

Each harness is walked through one session (the sample's story: a release called ready without any
check), checking every event's stdout and exit status; then the failure paths: corrupt state, capture
and advise off, garbage on stdin. A hook must never exit non-zero and must print nothing but the
harness's own reply.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from advise_helpers import Transcript, enable
from conftest import BIN, run, run_process
from habitus.harness import plan
from obs_helpers import enable as enable_capture
from obs_helpers import payloads
from pi_helpers import extension_as_commonjs

HABIT = {
    "condition": "When about to call a release ready",
    "behavior": "Do build the wheel, install it in a clean venv and run it first.",
}
FACT = "This repo releases from main only."
PROMPT = "bump to 0.6.0 and update the changelog. is it release ready?"
CLAIM = "Bumped the version to 0.6.0 and added the changelog entry. All 53 tests pass. The release is ready to tag."
NEXT = "add a --since option to the export command"
TIMEOUT = 60


def commands(harness: str, root: Path) -> dict[str, list[str]]:
    """event -> the command lines `hooks print` configures for it, in order."""
    done = run_process(["hooks", "print", "--harness", harness, "--root", str(root)])
    assert done.exit == 0, done.stderr
    snippet = json.loads(done.stdout)
    return {e: [h["command"] for g in groups for h in g["hooks"]] for e, groups in snippet["hooks"].items()}


def name(command: str) -> str:
    """'memory index', 'select', ... from a configured command line."""
    words = command.split()
    start = words.index("habitus") + 1
    return " ".join(w for w in words[start : words.index("--root")])


def fire(command: str, stdin: bytes) -> tuple[int, bytes, bytes]:
    done = subprocess.run(
        ["sh", "-c", command], input=stdin, capture_output=True, timeout=TIMEOUT, check=False
    )
    return done.returncode, done.stdout, done.stderr


def event(configured: dict[str, list[str]], hook: str, request: dict[str, Any]) -> Any:
    """Run the one command configured for `hook` (`habitus hook`: every habitus command of the event in
    one process) as the harness would: its reply, or None. It must exit 0, write nothing on stderr,
    and print at most one JSON object."""
    (command,) = configured[hook]
    assert name(command) == "hook"
    status, out, err = fire(command, json.dumps({**request, "hook_event_name": hook}).encode())
    assert status == 0 and err == b"", (hook, command, status, err)
    assert len(out.splitlines()) <= 1, out
    return json.loads(out) if out.strip() else None


GUIDANCE = "habitus: the user approved these habits"  # select's header


def context(reply: Any, hook: str) -> str:
    assert reply is not None, f"{hook}: expected injected context"
    specific = reply["hookSpecificOutput"]
    assert specific["hookEventName"] == hook
    return str(specific["additionalContext"])


def prepare(root: Path) -> str:
    enable_capture(root)
    enable(root)
    done = run(["habit", "declare"], {**HABIT, "polarity": 1})
    assert done.exit == 0, done.stderr
    assert run(["memory", "retain", FACT, "--kind", "fact"]).exit == 0
    return str(done.result["habit"]["id"])


def test_claude_code_session(state_root: Path, tmp_path: Path) -> None:
    habit = prepare(state_root)
    hooks = commands("claude-code", state_root)
    transcript = Transcript(tmp_path / "cc-1.jsonl", session="cc-1")
    base = {"session_id": "cc-1", "transcript_path": str(transcript.path), "cwd": str(tmp_path)}

    start = event(hooks, "SessionStart", {**base, "source": "startup"})
    assert FACT in context(start, "SessionStart")

    transcript.prompt(PROMPT)
    first = context(event(hooks, "UserPromptSubmit", {**base, "prompt": PROMPT}), "UserPromptSubmit")
    assert first.startswith(GUIDANCE) and HABIT["behavior"] in first
    assert habit not in first  # select names no id; advise has nothing waiting yet

    transcript.say(CLAIM)
    stop = event(hooks, "Stop", {**base, "stop_hook_active": False, "last_assistant_message": CLAIM})
    assert stop is None  # captured; the concern waits for the next prompt
    assert [(p["user"], p["assistant"]) for p in payloads(state_root)] == [(PROMPT, CLAIM)]

    transcript.prompt(NEXT)
    delivered = context(event(hooks, "UserPromptSubmit", {**base, "prompt": NEXT}), "UserPromptSubmit")
    assert GUIDANCE not in delivered  # select: nothing applies to this prompt
    assert habit in delivered and "shows no sign of the behaviour" in delivered

    sub = {**base, "stop_hook_active": False, "agent_id": "a1", "agent_transcript_path": str(transcript.path)}
    assert event(hooks, "SubagentStop", sub) is None
    assert event(hooks, "PreCompact", {**base, "trigger": "auto"}) is None
    assert event(hooks, "SessionEnd", {**base, "reason": "prompt_input_exit"}) is None
    assert len(payloads(state_root)) == 1  # the sweeps found nothing a Stop missed
    assert not (state_root / "errors.jsonl").exists()


def test_codex_session_without_a_transcript(state_root: Path, tmp_path: Path) -> None:
    habit = prepare(state_root)
    hooks = commands("codex", state_root)
    base = {"session_id": "cx-1", "transcript_path": None, "cwd": str(tmp_path), "model": "gpt-5-codex"}

    start = event(hooks, "SessionStart", {**base, "source": "startup"})
    assert FACT in context(start, "SessionStart")
    first = event(hooks, "UserPromptSubmit", {**base, "turn_id": "t1", "prompt": PROMPT})
    first_text = context(first, "UserPromptSubmit")  # capture remembered the prompt; select answered
    assert first_text.startswith(GUIDANCE) and HABIT["behavior"] in first_text and habit not in first_text
    stop = event(
        hooks, "Stop", {**base, "turn_id": "t1", "stop_hook_active": False, "last_assistant_message": CLAIM}
    )
    assert stop is None
    assert [(p["user"], p["assistant"]) for p in payloads(state_root)] == [(PROMPT, CLAIM)]
    second = context(
        event(hooks, "UserPromptSubmit", {**base, "turn_id": "t2", "prompt": NEXT}), "UserPromptSubmit"
    )
    assert habit in second and GUIDANCE not in second
    assert event(hooks, "SubagentStop", {**base, "turn_id": "t2", "stop_hook_active": False}) is None
    assert event(hooks, "PreCompact", {**base, "turn_id": "t2", "trigger": "auto"}) is None
    assert not (state_root / "errors.jsonl").exists()


def test_gemini_session(state_root: Path, tmp_path: Path) -> None:
    habit = prepare(state_root)
    hooks = commands("gemini", state_root)
    base = {
        "session_id": "gm-1",
        "transcript_path": str(tmp_path / "chats" / "session.json"),
        "cwd": str(tmp_path),
        "timestamp": "2026-10-08T09:55:00.000Z",
    }
    start = event(hooks, "SessionStart", {**base, "source": "startup"})
    assert FACT in context(start, "SessionStart")
    first = context(event(hooks, "BeforeAgent", {**base, "prompt": PROMPT}), "BeforeAgent")
    assert first.startswith(GUIDANCE) and HABIT["behavior"] in first and habit not in first
    after = event(
        hooks, "AfterAgent", {**base, "prompt": PROMPT, "prompt_response": CLAIM, "stop_hook_active": False}
    )
    assert after is None  # only a blocker would answer {"decision": "deny"}
    assert [(p["user"], p["assistant"]) for p in payloads(state_root)] == [(PROMPT, CLAIM)]
    second = context(event(hooks, "BeforeAgent", {**base, "prompt": NEXT}), "BeforeAgent")
    assert habit in second and GUIDANCE not in second
    assert not (state_root / "errors.jsonl").exists()


def requests(harness: str, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """One documented request per configured event of the harness (Claude Code's with a real transcript,
    Codex's without one, as Codex may send)."""
    transcript = None
    if harness == "claude-code":
        transcript = str(Transcript(tmp_path / "s.jsonl", session="s").prompt(PROMPT).say(CLAIM).path)
    base = {"session_id": "s", "transcript_path": transcript, "cwd": str(tmp_path)}
    prompt, stop = (
        {**base, "prompt": PROMPT},
        {**base, "stop_hook_active": False, "last_assistant_message": CLAIM},
    )
    if harness == "gemini":
        stop = {**base, "prompt": PROMPT, "prompt_response": CLAIM, "stop_hook_active": False}
    return {
        "SessionStart": {**base, "source": "startup"},
        "UserPromptSubmit": prompt,
        "BeforeAgent": prompt,
        "Stop": stop,
        "SubagentStop": stop,
        "AfterAgent": stop,
        "SessionEnd": {**base, "reason": "other"},
        "PreCompact": {**base, "trigger": "manual"},
    }


def silent_everywhere(harness: str, root: Path, tmp_path: Path, stdin: bytes | None = None) -> int:
    """Fire every configured command of every event; each must exit 0 with no output at all.
    Returns how many commands ran."""
    hooks, documented, count = commands(harness, root), requests(harness, tmp_path), 0
    for hook, lines in hooks.items():
        for command in lines:
            body = (
                stdin
                if stdin is not None
                else json.dumps({**documented[hook], "hook_event_name": hook}).encode()
            )
            assert fire(command, body) == (0, b"", b""), (hook, command)
            count += 1
    return count


@pytest.mark.parametrize("harness", ["claude-code", "codex", "gemini"])
def test_corrupt_state_means_exit_0_no_output_and_a_logged_error(
    harness: str, state_root: Path, tmp_path: Path
) -> None:
    prepare(state_root)
    assert run(["capture"], {"user": "x", "assistant": "y", "session": "s"}).exit == 0
    for name_ in ("ledger.sqlite", "memory.sqlite"):
        (state_root / name_).write_bytes(b"this is not a database" * 100)
        for suffix in ("-wal", "-shm"):
            (state_root / (name_ + suffix)).unlink(missing_ok=True)
    (state_root / "observations" / "tail.json").write_text("{broken")
    ran = silent_everywhere(harness, state_root, tmp_path)
    assert ran == len(plan.events(harness))  # one process per event
    logged = [json.loads(line) for line in (state_root / "errors.jsonl").read_text().splitlines()]
    # Every command `hook` runs reads damaged state and logs it (and the next one still runs), except
    # three Codex captures that never reach the log: UserPromptSubmit only remembers the prompt for its
    # Stop (observations/pending/), and a PreCompact or SessionEnd without a transcript has nothing to
    # sweep (Gemini: its SessionEnd).
    assert len(logged) == len(plan.PLAN[harness]) - {"codex": 3, "gemini": 1}.get(harness, 0)
    assert {e["harness"] for e in logged} == {harness}
    assert {e["code"] for e in logged} == {"state_corrupt"}, logged
    assert {e["command"] for e in logged} == {"capture", "select", "advise", "memory"}


@pytest.mark.parametrize("harness", ["claude-code", "codex", "gemini"])
def test_features_turned_off_do_nothing(harness: str, state_root: Path, tmp_path: Path) -> None:
    prepare(state_root)
    for key in ("capture.enabled", "advise.enabled", "select.enabled"):
        assert run(["config", "set", key, "false"]).exit == 0
    assert run(["memory", "remove", "--purge", _memory_id()]).exit == 0
    silent_everywhere(harness, state_root, tmp_path)
    assert payloads(state_root) == [] and not (state_root / "errors.jsonl").exists()
    assert run(["status"]).result["advise"]["reviews"] == 0


def _memory_id() -> str:
    return str(run(["memory", "retrieve", "releases"]).result["items"][0]["id"])


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1, 2]", b'{"hook_event_name": 7}', b"\xff\xfe"])
def test_garbage_on_stdin_is_silent(stdin: bytes, state_root: Path, tmp_path: Path) -> None:
    prepare(state_root)
    silent_everywhere("claude-code", state_root, tmp_path, stdin=stdin)
    assert payloads(state_root) == []


def test_generic_pipelines(state_root: Path) -> None:
    """Shell pipelines and cron use --harness generic: a pair is a finished turn, {"user"} a prompt."""
    prepare(state_root)
    program = str(BIN / "habitus")
    pair = json.dumps({"user": PROMPT, "assistant": CLAIM, "session": "g"}).encode()
    assert fire(f"{program} capture --harness generic", pair) == (0, b"", b"")
    status, out, _ = fire(f"{program} select --harness generic", json.dumps({"user": PROMPT}).encode())
    assert status == 0 and HABIT["behavior"] in json.loads(out)["additionalContext"]
    assert fire(f"{program} advise --harness generic", pair)[:2] == (0, b"")
    status, out, _ = fire(
        f"{program} advise --harness generic", json.dumps({"user": NEXT, "session": "g"}).encode()
    )
    assert status == 0 and "shows no sign of the behaviour" in json.loads(out)["additionalContext"]
    assert len(payloads(state_root)) == 1


# -- Pi: the extension under node, against a fake Pi ---------------------------------------------------

PI_DRIVER = """
const ext = require(process.argv[2]);
const handlers = {};
ext({ on: (name, fn) => { handlers[name] = fn; } });
const ctx = { cwd: process.argv[3], sessionManager: { getSessionId: () => "pi-1", getSessionFile: () => undefined } };
const step = process.argv[4];
const text = (role, t) => ({ role, content: [{ type: "text", text: t }], stopReason: role === "assistant" ? "stop" : undefined, timestamp: 1763685465041 });
(async () => {
  const prompt = step === "first" ? process.argv[5] : process.argv[6];
  const reply = await handlers.before_agent_start({ type: "before_agent_start", prompt, systemPrompt: "SYSTEM" }, ctx);
  process.stdout.write(JSON.stringify(reply === undefined ? null : reply) + "\\n");
  if (step === "first") {
    await handlers.agent_end({ type: "agent_end", messages: [text("user", prompt), text("assistant", process.argv[7])] }, ctx);
  }
})();
"""


def pi(tmp_path: Path, step: str, env: dict[str, str]) -> dict[str, Any] | None:
    done = subprocess.run(
        [
            "node",
            str(tmp_path / "drive.js"),
            str(tmp_path / "ext.js"),
            str(tmp_path),
            step,
            PROMPT,
            NEXT,
            CLAIM,
        ],
        capture_output=True,
        timeout=TIMEOUT,
        env={**os.environ, **env},
        check=False,
    )
    assert done.returncode == 0 and done.stderr == b"", done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[0])  # type: ignore[no-any-return]


def until(check: Callable[[], bool]) -> None:
    for _ in range(400):  # the extension does not wait for what it starts on agent_end
        if check():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_pi_extension_runs_the_whole_loop(state_root: Path, tmp_path: Path) -> None:
    habit = prepare(state_root)
    (tmp_path / "ext.js").write_text(extension_as_commonjs("habitus.ts", "habitusExtension"))
    (tmp_path / "drive.js").write_text(PI_DRIVER)
    env = {"HABITUS_BIN": str(BIN / "habitus"), "HABITUS_HOME": str(state_root)}

    first = pi(tmp_path, "first", env)
    assert first is not None and first["systemPrompt"].startswith("SYSTEM\n\nMemory index (habitus")
    assert FACT in first["systemPrompt"] and HABIT["behavior"] in first["systemPrompt"]
    until(lambda: bool(payloads(state_root)) and run(["status"]).result["advise"]["reviews"] == 1)
    assert [(p["user"], p["assistant"]) for p in payloads(state_root)] == [(PROMPT, CLAIM)]

    second = pi(tmp_path, "second", env)
    assert second is not None and habit in second["systemPrompt"]
    assert "shows no sign of the behaviour" in second["systemPrompt"]
    assert HABIT["behavior"] + "\nSelected" not in second["systemPrompt"]  # no guidance for this prompt
    assert not (state_root / "errors.jsonl").exists()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_pi_extension_leaves_the_prompt_alone_when_habitus_fails(
    state_root: Path, tmp_path: Path
) -> None:
    prepare(state_root)
    (tmp_path / "ext.js").write_text(extension_as_commonjs("habitus.ts", "habitusExtension"))
    (tmp_path / "drive.js").write_text(PI_DRIVER)
    assert pi(tmp_path, "second", {"HABITUS_BIN": str(tmp_path / "no-such-habitus")}) is None
    for name_ in ("ledger.sqlite", "memory.sqlite"):
        (state_root / name_).write_bytes(b"garbage" * 100)
    env = {"HABITUS_BIN": str(BIN / "habitus"), "HABITUS_HOME": str(state_root)}
    assert pi(tmp_path, "second", env) is None
    assert len((state_root / "errors.jsonl").read_text().splitlines()) == 3  # index, select, advise
