"""Real processes: concurrent writers, kill -9 at every point of an append, a paused writer, the Pi extension."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import orjson
import pytest

from conftest import BIN, run_process
from habitus.state import observations as obs
from habitus.state.root import StateRoot
from obs_helpers import enable, entry, lines, spawn_capture
from pi_helpers import extension_as_commonjs


def pair(tag: str, n: int) -> dict[str, str]:
    return {
        "user": f"{tag} prompt {n}",
        "assistant": f"answer {n}",
        "session": tag,
        "at": f"2026-01-01T00:00:{n:02d}Z",
    }


def wait_for(path: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


@pytest.mark.slow
def test_eight_concurrent_writers_make_one_valid_chain(state_root: Path) -> None:
    enable(state_root)
    writers = []
    for w in range(8):
        stream = b"".join(orjson.dumps(pair(f"w{w}", i)) + b"\n" for i in range(250))
        writers.append(spawn_capture(["capture", "--nl", "--wait", "120"], stream))
    for process in writers:
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err[-2000:]
        results = [orjson.loads(x) for x in out.splitlines()]
        assert len(results) == 250 and all(r["appended"] == 1 for r in results)
    records = lines(state_root)
    assert len(records) == 2000
    assert [r["seq"] for r in records] == list(range(1, 2001))
    assert len({r["fp"] for r in records}) == 2000
    assert len({(r["payload"]["session"], r["payload"]["user"]) for r in records}) == 2000
    report = obs.verify(StateRoot(state_root))
    assert report["ok"] and report["issues"] == []


POINTS = ["before_write", "mid_line", "after_jsonl", "after_idx", "after_fp", "after_manifest"]


@pytest.mark.parametrize("point", POINTS)
def test_kill_9_at_every_point_loses_nothing_committed(state_root: Path, point: str) -> None:
    enable(state_root)
    root = StateRoot(state_root)
    obs.append(root, [entry(i) for i in range(5)], wait=5)
    committed = (state_root / "observations" / "obs-000001.jsonl").read_bytes()
    victim = orjson.dumps(pair("victim", 1))
    killed = run_process(["capture"], stdin=victim, env={"HABITUS_TEST_FAULT": f"{point}:kill"})
    assert killed.exit == -signal.SIGKILL
    assert killed.stdout == b""
    # Whatever the point, the committed history is intact and the log still verifies.
    assert (state_root / "observations" / "obs-000001.jsonl").read_bytes().startswith(committed)
    assert obs.verify(root)["ok"]
    # Retrying the killed capture leaves exactly one copy of it; the next capture succeeds.
    retry = run_process(["capture"], stdin=victim)
    assert retry.exit == 0, retry.stderr
    assert run_process(["capture"], pair("next", 2)).result["appended"] == 1
    records = lines(state_root)
    assert [r["payload"]["user"] for r in records] == [f"prompt {i}" for i in range(5)] + [
        "victim prompt 1",
        "next prompt 2",
    ]
    assert [r["seq"] for r in records] == list(range(1, 8))
    report = obs.verify(root)
    assert report["ok"] and report["issues"] == []
    torn = list((state_root / "observations" / "recovered-tails").glob("*.partial"))
    assert len(torn) == (1 if point == "mid_line" else 0)


def test_a_paused_writer_holds_the_lock_then_dies_without_harm(state_root: Path, tmp_path: Path) -> None:
    enable(state_root)
    ready = tmp_path / "ready"
    paused = spawn_capture(
        ["capture"],
        orjson.dumps(pair("paused", 1)),
        env={"HABITUS_TEST_FAULT": "after_idx:pause", "HABITUS_TEST_FAULT_READY": str(ready)},
    )
    try:
        wait_for(ready)
        busy = run_process(["capture", "--wait", "0"], pair("busy", 2))
        assert busy.exit == 75 and busy.error["code"] == "state_locked"
        in_hook = run_process(["capture", "--harness", "generic", "--wait", "0"], pair("hook", 3))
        assert in_hook.exit == 0 and in_hook.stdout == b""  # hook mode: silent, logged
    finally:
        paused.kill()  # SIGKILL, mid-append, lock held
        paused.wait(timeout=60)
    after = run_process(["capture", "--wait", "30"], pair("after", 4))
    assert after.exit == 0 and after.result["appended"] == 1
    assert [r["payload"]["user"] for r in lines(state_root)] == ["paused prompt 1", "after prompt 4"]
    assert obs.verify(StateRoot(state_root))["ok"]
    logged = [orjson.loads(x)["code"] for x in (state_root / "errors.jsonl").read_bytes().splitlines()]
    assert logged == ["state_locked"]


def test_fault_injection_is_inert_without_its_variable(state_root: Path) -> None:
    enable(state_root)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HABITUS_TEST_FAULT")}
    done = subprocess.run(
        [str(BIN / "habitus"), "capture"],
        input=orjson.dumps(pair("x", 1)),
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0
    assert run_process(["capture"], pair("y", 2), env={"HABITUS_TEST_FAULT": "no_such_point:kill"}).exit == 0
    assert len(lines(state_root)) == 2


# -- the Pi extension, run by node against a fake Pi --------------------------------------------------


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_pi_extension_sends_a_finished_run_to_habitus(state_root: Path, tmp_path: Path) -> None:
    enable(state_root)
    (tmp_path / "ext.js").write_text(extension_as_commonjs("habitus.ts", "habitusExtension"))
    driver = tmp_path / "drive.js"
    driver.write_text(
        """
const ext = require(process.argv[2]);
const handlers = {};
ext({ on: (name, fn) => { handlers[name] = fn; } });
const ctx = { cwd: "/w", sessionManager: { getSessionId: () => "pi-session", getSessionFile: () => undefined } };
(async () => {
  await handlers.before_agent_start({ type: "before_agent_start", prompt: "use rgb values, no indices" }, ctx);
  await handlers.agent_end({ type: "agent_end", messages: [
    { role: "user", content: [{ type: "text", text: "use rgb values, no indices" }], timestamp: 1763685465041 },
    { role: "assistant", content: [{ type: "text", text: "Converted." }, { type: "toolCall", id: "c", name: "edit", arguments: {} }], stopReason: "toolUse", timestamp: 1763685465100 },
    { role: "toolResult", toolCallId: "c", toolName: "edit", content: [{ type: "text", text: "big output" }], isError: false },
    { role: "assistant", content: [{ type: "text", text: "Done: all RGB now." }], stopReason: "stop", timestamp: 1763685466000 },
  ] }, ctx);
})();
"""
    )
    node = subprocess.run(
        ["node", str(driver), str(tmp_path / "ext.js")],
        env={**os.environ, "HABITUS_BIN": str(BIN / "habitus")},
        capture_output=True,
        timeout=60,
    )
    assert node.returncode == 0, node.stderr
    # agent_end's `habitus hook` (a process, or the warm worker the first event's reply named) captures
    # the run after the extension has handed it over: wait for the record.
    give_up = time.monotonic() + 60
    while not lines(state_root):
        assert time.monotonic() < give_up, "the run was never captured"
        time.sleep(0.02)
    (record,) = lines(state_root)
    payload = record["payload"]
    assert record["origin"] == {"harness": "pi", "source": "hook", "event": "agent_end"}
    assert payload["user"] == "use rgb values, no indices"
    assert payload["assistant"] == "Converted.\n\nDone: all RGB now."
    assert payload["tools"] == [{"name": "edit", "status": "ok"}] and payload["session"] == "pi-session"
