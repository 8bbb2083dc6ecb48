"""`memory observe` on transcript files and hook events: a byte watermark, bounded chunks, every harness."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

import memory_helpers
from conftest import BIN, SHARED, needs_shared
from memory_helpers import claude_transcript, mem
from obs_helpers import FIXTURES
from pi_helpers import extension_as_commonjs

outside_any_repo = memory_helpers.outside_any_repo  # a fixture

TURNS = [
    ("Please port the selector to the new theme system.", "I'll read theme.ts first."),
    ("no, that's not it. Use rgb values, no rgb indices!", "Switched to rgb values."),
    ("I prefer tabs over spaces in every file.", "Noted: tabs."),
]


@pytest.fixture
def observe_hooks_on(state_root: Path) -> None:
    """Hooks observe only once it is switched on (test_observe_hooks_are_off_until_enabled)."""
    from conftest import run

    assert run(["config", "set", "memory.observe_enabled", "true"]).exit == 0


def observations(*args: str) -> list[dict[str, Any]]:
    out = mem("retrieve", "--kind", "observation", "--limit", "1000", "--full", *args)
    assert out.exit == 0, out.stderr
    return out.result["items"]


def test_a_transcript_is_read_from_its_byte_watermark(state_root: Path, tmp_path: Path) -> None:
    path = claude_transcript(tmp_path / "0b6f-session.jsonl", TURNS[:2])
    first = mem("observe", "--transcript", str(path)).result
    assert first["stream"] == "0b6f-session" and first["format"] == "claude-code" and first["unit"] == "byte"
    assert first["watermark"] == {"before": 0, "after": path.stat().st_size} and first["remaining"] == 0
    assert [i["content"] for i in first["items"]] == [
        "User: Please port the selector to the new theme system.",
        "Assistant: I'll read theme.ts first.",
        "User: no, that's not it. Use rgb values, no rgb indices!",
        "Assistant: Switched to rgb values.",
    ]
    assert first["items"][0]["metadata"]["at"] == "2030-01-01T10:00:00.000Z"
    assert first["items"][2]["relevance"] == "critical" and first["items"][2]["metadata"]["assertion"] is True
    # nothing new: nothing read
    again = mem("observe", "--transcript", str(path)).result
    assert again["observed"] == 0 and again["watermark"]["before"] == again["watermark"]["after"]
    # the session went on: only the new turn is read
    size = path.stat().st_size
    claude_transcript(path, TURNS[2:], append=True)
    later = mem("observe", "--transcript", str(path)).result
    assert later["watermark"] == {"before": size, "after": path.stat().st_size}
    assert [i["content"] for i in later["items"]] == ["User: I prefer tabs over spaces in every file.",
                                                      "Assistant: Noted: tabs."]  # fmt: skip
    assert len(observations()) == 6


def test_chunks_take_whole_turns_within_the_chunk_size(state_root: Path, tmp_path: Path) -> None:
    turns = [(f"Question {i}: " + "why " * 150, f"Answer {i}: " + "because " * 100) for i in range(6)]
    path = claude_transcript(tmp_path / "long.jsonl", turns)  # about 1,400 characters per turn
    positions: list[int] = []
    runs, result = 0, {"remaining": 1}
    while result["remaining"] and runs < 20:
        runs += 1
        result = mem("observe", "--transcript", str(path), "--chunk-chars", "3000").result
        assert result["watermark"]["after"] > result["watermark"]["before"]
        positions += [i["metadata"]["position"] for i in result["items"]]
        assert len(result["items"]) <= 4  # two whole turns fit 3,000 characters
    assert runs == 3 and len(positions) == 12 and len(set(positions)) == 6  # every turn once, in order
    assert positions == sorted(positions)


def test_a_turn_larger_than_the_chunk_is_cut_and_still_advances(state_root: Path, tmp_path: Path) -> None:
    path = claude_transcript(tmp_path / "big.jsonl", [("Tell me. " + "x " * 5000, "Done: " + "y " * 5000)])
    result = mem("observe", "--transcript", str(path), "--chunk-chars", "1000").result
    assert result["observed"] == 2 and result["remaining"] == 0
    assert result["watermark"]["after"] == path.stat().st_size


def test_an_unfinished_line_waits_for_the_next_run(state_root: Path, tmp_path: Path) -> None:
    path = claude_transcript(tmp_path / "t.jsonl", TURNS[:1])
    whole = path.read_bytes()
    path.write_bytes(whole[:-10])  # the agent is still writing the last line
    partial = mem("observe", "--transcript", str(path)).result
    assert [i["content"] for i in partial["items"]] == [
        "User: Please port the selector to the new theme system."
    ]
    path.write_bytes(whole)
    rest = mem("observe", "--transcript", str(path)).result
    assert [i["content"] for i in rest["items"]] == ["Assistant: I'll read theme.ts first."]


def test_failed_and_rejected_tool_uses_are_observed(state_root: Path) -> None:
    items = mem("observe", "--transcript", str(FIXTURES / "claude-code-short.jsonl")).result["items"]
    rejected = [i for i in items if i["content"].endswith("rejected by the user")]
    assert rejected and all(i["relevance"] == "high" and i["metadata"]["role"] == "tool" for i in rejected)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("codex-rollout.jsonl", "codex"), ("pi-excerpt.jsonl", "pi"), ("codex-legacy.jsonl", "codex")],
)
def test_codex_and_pi_transcripts(state_root: Path, name: str, fmt: str) -> None:
    out = mem("observe", "--transcript", str(FIXTURES / name))
    assert out.exit == 0, out.stderr
    assert out.result["format"] == fmt and out.result["observed"] > 0 and out.result["remaining"] == 0
    assert all(i["metadata"]["at"].endswith("Z") for i in out.result["items"])


def test_a_shrunken_file_is_refused_and_nothing_changes(state_root: Path, tmp_path: Path) -> None:
    path = claude_transcript(tmp_path / "t.jsonl", TURNS)
    mem("observe", "--transcript", str(path))
    before = (state_root / "memory.sqlite").read_bytes()
    claude_transcript(path, TURNS[:1])  # replaced by a shorter file
    out = mem("observe", "--transcript", str(path))
    assert out.exit == 3 and out.error["code"] == "stale"
    assert (state_root / "memory.sqlite").read_bytes() == before
    assert mem("observe", "--transcript", str(path), "--stream", "t-again").exit == 0


def test_a_stream_keeps_its_unit(state_root: Path, tmp_path: Path) -> None:
    path = claude_transcript(tmp_path / "t.jsonl", TURNS)
    assert mem("observe", "--transcript", str(path), "--stream", "s").exit == 0
    out = mem("observe", request={"stream": "s", "messages": [{"role": "user", "text": "hi"}]})
    assert out.exit == 2 and out.error["message"].startswith("request.stream:")
    assert mem("observe", request={"stream": "m", "messages": [{"role": "user", "text": "hi"}]}).exit == 0
    out = mem("observe", "--transcript", str(path), "--stream", "m")
    assert out.exit == 2 and "counts messages" in out.error["message"]


def test_bad_transcript_arguments(state_root: Path, tmp_path: Path) -> None:
    assert mem("observe", "--transcript", str(tmp_path / "missing.jsonl")).error["code"] == "not_found"
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    assert mem("observe", "--transcript", str(binary)).error["code"] == "bad_transcript"
    assert not (state_root / "memory.sqlite").exists()
    both = mem("observe", "--transcript", str(binary), "--harness", "claude-code")  # hook mode: logged
    assert both.exit == 0 and both.stdout == b""
    assert orjson.loads((state_root / "errors.jsonl").read_bytes())["code"] == "usage"


# -- hook mode -------------------------------------------------------------------------------------


@pytest.mark.usefixtures("observe_hooks_on")
def test_a_claude_code_stop_hook_observes_what_is_new_and_prints_nothing(
    state_root: Path, tmp_path: Path
) -> None:
    path = claude_transcript(tmp_path / "sess-1.jsonl", TURNS[:1])
    event = {"hook_event_name": "Stop", "session_id": "sess-1", "transcript_path": str(path),
             "cwd": str(tmp_path), "stop_hook_active": False}  # fmt: skip
    out = mem("observe", "--harness", "claude-code", request=event)
    assert out.exit == 0 and out.stdout == b"" and out.stderr == b""
    assert len(observations()) == 2
    claude_transcript(path, TURNS[1:], append=True)
    assert mem("observe", "--harness", "claude-code", request=event).stdout == b""
    found = observations()
    assert len(found) == 6 and {i["metadata"]["stream"] for i in found} == {"sess-1"}
    # the same file observed from the command line continues the same stream
    assert mem("observe", "--transcript", str(path)).result["watermark"]["before"] == path.stat().st_size


@pytest.mark.parametrize("event", ["SessionStart", "UserPromptSubmit", "SubagentStop", "Notification"])
def test_events_that_end_no_turn_do_nothing(state_root: Path, tmp_path: Path, event: str) -> None:
    path = claude_transcript(tmp_path / "s.jsonl", TURNS)
    out = mem(
        "observe",
        "--harness",
        "claude-code",
        request={"hook_event_name": event, "transcript_path": str(path)},
    )
    assert out.exit == 0 and out.stdout == b"" and not state_root.exists()


@pytest.mark.usefixtures("observe_hooks_on")
def test_codex_and_pi_hooks_read_their_transcripts(state_root: Path, tmp_path: Path) -> None:
    rollout = shutil.copy(FIXTURES / "codex-rollout.jsonl", tmp_path / "rollout-1.jsonl")
    session = shutil.copy(FIXTURES / "pi-excerpt.jsonl", tmp_path / "pi-session.jsonl")
    codex = {"hook_event_name": "Stop", "session_id": "c", "transcript_path": str(rollout), "turn_id": "t"}
    pi = {"hook_event_name": "agent_end", "session_id": "p", "session_file": str(session), "messages": []}
    assert mem("observe", "--harness", "codex", request=codex).stdout == b""
    assert mem("observe", "--harness", "pi", request=pi).stdout == b""
    streams = {i["metadata"]["stream"] for i in observations()}
    assert streams == {"rollout-1", "pi-session"}


@pytest.mark.usefixtures("observe_hooks_on")
@pytest.mark.parametrize(
    ("harness", "event"),
    [
        ("gemini", {"hook_event_name": "AfterAgent", "session_id": "g1", "prompt": "I prefer tabs.",
                    "prompt_response": "Noted.", "transcript_path": "/nonexistent/chat.json"}),
        ("generic", {"user": "I prefer tabs.", "assistant": "Noted.", "session": "g1"}),
    ],
)  # fmt: skip
def test_a_pair_without_a_readable_transcript_is_observed_as_two_messages(
    state_root: Path, harness: str, event: dict[str, Any]
) -> None:
    assert mem("observe", "--harness", harness, request=event).stdout == b""
    assert mem("observe", "--harness", harness, request=event).stdout == b""  # the hook fired twice
    found = observations()
    assert sorted(i["content"] for i in found) == ["Assistant: Noted.", "User: I prefer tabs."]
    assert {i["metadata"]["stream"] for i in found} == {"g1"}


@pytest.mark.usefixtures("observe_hooks_on")
def test_hook_failures_are_silent_and_logged(state_root: Path, tmp_path: Path) -> None:
    event = {"hook_event_name": "Stop", "session_id": "s", "transcript_path": str(tmp_path / "gone.jsonl")}
    out = mem("observe", "--harness", "claude-code", request=event)
    assert out.exit == 0 and out.stdout == b"" and out.stderr == b""
    logged = [orjson.loads(line)["code"] for line in (state_root / "errors.jsonl").read_bytes().splitlines()]
    assert logged == ["not_found"]


@needs_shared
def test_a_real_claude_code_session_in_bounded_runs(state_root: Path) -> None:
    path = SHARED / "fixtures" / "transcripts" / "claude-code" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    size = path.stat().st_size
    runs, result = 0, {"remaining": size}
    while result["remaining"] and runs < 50:
        runs += 1
        result = mem("observe", "--transcript", str(path), "--chunk-chars", "4000").result
        assert result["watermark"]["after"] > result["watermark"]["before"]
        assert sum(len(i["content"]) for i in result["items"]) <= 4000
    assert result["watermark"]["after"] == size and 1 < runs < 50
    found = observations()
    assert found and sum(1 for i in found if i["relevance"] == "critical") < len(found) / 2
    assert mem("verify").exit == 0


# -- the Pi extension, run by node against a fake Pi --------------------------------------------------


@pytest.mark.usefixtures("observe_hooks_on")
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_pi_extension_injects_the_index_and_observes_the_session(
    state_root: Path, tmp_path: Path
) -> None:
    record = mem("retain", "Never force-push to main").result["memory"]
    session = shutil.copy(FIXTURES / "pi-excerpt.jsonl", tmp_path / "pi-session.jsonl")
    (tmp_path / "ext.js").write_text(extension_as_commonjs("habitus.ts", "habitusExtension"))
    driver = tmp_path / "drive.js"
    driver.write_text(
        """
const ext = require(process.argv[2]);
const handlers = {};
ext({ on: (name, fn) => { handlers[name] = fn; } });
const ctx = { cwd: process.argv[3], sessionManager: { getSessionId: () => "p", getSessionFile: () => process.argv[4] } };
(async () => {
  const reply = await handlers.before_agent_start({ prompt: "hello", systemPrompt: "SYSTEM" }, ctx);
  process.stdout.write(JSON.stringify(reply) + "\\n");
  await handlers.agent_end({ messages: [] }, ctx);
})();
"""
    )
    env = {**os.environ, "HABITUS_BIN": str(BIN / "habitus"), "HABITUS_HOME": str(state_root)}
    done = subprocess.run(["node", str(driver), str(tmp_path / "ext.js"), str(tmp_path), str(session)],
                          capture_output=True, timeout=60, env=env, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    reply = json.loads(done.stdout.splitlines()[0])
    assert (
        reply["systemPrompt"].startswith("SYSTEM\n\nMemory index (habitus")
        and record["id"] in reply["systemPrompt"]
    )
    for _ in range(200):  # the observe child is not awaited by the extension
        found = mem("retrieve", "--kind", "observation").result["items"]
        if found:
            break
        time.sleep(0.05)
    assert found and {i["metadata"]["stream"] for i in found} == {"pi-session"}


@pytest.mark.usefixtures("observe_hooks_on")
def test_two_observers_of_one_transcript_store_each_turn_once(state_root: Path, tmp_path: Path) -> None:
    turns = [(f"Step {i}: please keep module {i} small.", f"Kept module {i} small.") for i in range(40)]
    path = claude_transcript(tmp_path / "shared.jsonl", turns)
    env = {**os.environ, "HABITUS_HOME": str(state_root)}
    argv = [str(BIN / "habitus"), "memory", "observe", "--transcript", str(path), "--chunk-chars", "1000"]
    for _ in range(12):
        pair = [
            subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for _ in range(2)
        ]
        for process in pair:
            _, err = process.communicate(timeout=60)
            assert process.returncode == 0, err[-500:]
    found = observations()
    assert len(found) == 80 and len({(i["metadata"]["position"], i["metadata"]["role"]) for i in found}) == 80
    assert mem("observe", "--transcript", str(path)).result["watermark"]["before"] == path.stat().st_size
