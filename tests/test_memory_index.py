"""index: pins first, then recent per store, one row each, within a character budget; the hook mode."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import memory_helpers
from conftest import run, run_process
from habitus.memory.index import HEADER
from memory_helpers import mem, retain

outside_any_repo = memory_helpers.outside_any_repo  # a fixture
repo = memory_helpers.repo  # a fixture


def test_index_lists_pins_first_then_recent_per_store(repo: Path) -> None:
    old_global = retain("global note, old")
    new_global = retain("global decision, new", kind="decision", metadata={"source": "pi"})
    project = retain("project fact", "--store", "project")
    pinned = retain("pinned global rule")
    retain("an observation", kind="observation")
    assert mem("pin", old_global["id"]).exit == 0
    out = mem("index").result
    lines = out["text"].splitlines()
    assert lines[0] == HEADER
    assert lines[1:] == [
        f"- [global] {old_global['id']} global note, old",
        f"- [project] {project['id']} project fact",
        f"- [global] {pinned['id']} pinned global rule",
        f"- [global] [pi] {new_global['id']} global decision, new",
    ]
    assert out["rows"] == 4 and out["chars"] == len(out["text"]) <= out["budget"] == 2000
    assert out["pins"] == 1 and out["unresolved_pins"] == 0


def test_index_respects_the_budget_and_never_cuts_a_row() -> None:
    made = [retain(f"memory number {i} " + "detail " * 10)["id"] for i in range(10)]
    full = mem("index").result
    assert full["rows"] == 10
    first = len(HEADER) + 1 + len(full["text"].splitlines()[1])
    for budget in (0, 50, first - 1, first, first + 10, 1000):
        out = mem("index", "--budget", str(budget)).result
        assert out["chars"] <= budget
        rows = out["text"].splitlines()[1:]
        assert rows == full["text"].splitlines()[1 : 1 + len(rows)]
        if budget < first:
            assert out["text"] == "" and out["rows"] == 0
        else:
            assert out["rows"] == 1 + (budget - first) // (len(rows[0]) + 1)
    long_row = retain("y " * 1000)
    row = mem("index").result["text"].splitlines()[1]
    assert row.startswith(f"- [global] {long_row['id']} ") and row.endswith("…")
    assert len(row) <= len(f"- [global] {long_row['id']} ") + 240
    assert len(made) == 10


def test_index_budget_comes_from_the_setting(state_root: Path) -> None:
    retain("x " * 100)
    assert run(["config", "set", "memory.index_budget", "100"]).exit == 0
    out = mem("index").result
    assert out["budget"] == 100 and out["text"] == ""


def test_unresolved_pins_are_skipped_and_counted() -> None:
    gone = retain("soon removed")
    expired = retain("soon expired", expires_at="2001-01-01T00:00:00.000Z")
    kept = retain("kept")
    for record in (gone, kept):
        assert mem("pin", record["id"]).exit == 0
    assert mem("remove", gone["id"]).exit == 0
    out = mem("index").result
    assert out["pins"] == 2 and out["unresolved_pins"] == 1
    assert gone["id"] not in out["text"] and expired["id"] not in out["text"]
    assert out["text"].splitlines()[1].endswith(f"{kept['id']} kept")


HOOK_EVENTS = [
    ("claude-code", {"hook_event_name": "SessionStart", "session_id": "s"}, "SessionStart"),
    ("claude-code", {"hook_event_name": "UserPromptSubmit", "prompt": "hi"}, "UserPromptSubmit"),
    ("codex", {"hook_event_name": "SessionStart", "transcript_path": None, "model": "m"}, "SessionStart"),
    ("codex", {"hook_event_name": "UserPromptSubmit", "prompt": "hi", "turn_id": "t"}, "UserPromptSubmit"),
    ("gemini", {"hook_event_name": "SessionStart", "timestamp": "2030-01-01T00:00:00Z"}, "SessionStart"),
    ("gemini", {"hook_event_name": "BeforeAgent", "prompt": "hi"}, "BeforeAgent"),
    ("pi", {"hook_event_name": "session_start", "session_file": "/tmp/x.jsonl"}, None),
    ("pi", {"hook_event_name": "before_agent_start", "prompt": "hi"}, None),
    ("generic", {"user": "hi"}, None),
]


@pytest.mark.parametrize(("harness", "event", "name"), HOOK_EVENTS)
def test_every_harness_gets_the_index_as_its_context(
    harness: str, event: dict, name: str | None, state_root: Path
) -> None:
    record = retain("use uv")
    out = mem("index", "--harness", harness, request=event)
    assert out.exit == 0 and out.stderr == b""
    text = mem("index").result["text"]
    assert record["id"] in text
    expected = (
        {"additionalContext": text}
        if name is None
        else {"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}
    )
    assert orjson.loads(out.stdout) == expected


def test_hook_finds_the_project_from_the_event_cwd(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = retain("project only", "--store", "project")
    monkeypatch.chdir(tmp_path)
    event = {"hook_event_name": "SessionStart", "cwd": str(repo / "src")}
    out = mem("index", "--harness", "claude-code", request=event)
    assert record["id"] in orjson.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize(
    ("harness", "request_body"),
    [
        ("claude-code", {"hook_event_name": "Stop"}),
        ("claude-code", {}),
        ("codex", {"hook_event_name": "Stop"}),
        ("codex", {"type": "agent-turn-complete", "thread-id": "t"}),  # the notify program
        ("gemini", {"hook_event_name": "AfterAgent"}),
        ("pi", {"hook_event_name": "SessionStart"}),  # Pi's own name is session_start
        ("pi", {"hook_event_name": "agent_end", "messages": []}),
        ("generic", {"hook_event_name": "SessionStart"}),
        ("generic", {"user": "hi", "assistant": "hello"}),  # a finished pair, not a prompt
    ],
)
def test_hook_mode_is_silent_when_it_has_nothing_to_say(harness: str, request_body: dict) -> None:
    retain("something to index")
    out = mem("index", "--harness", harness, request=request_body)
    assert out.exit == 0 and out.stdout == b"" and out.stderr == b""


def test_hook_mode_with_no_memories_prints_nothing_and_creates_nothing(state_root: Path) -> None:
    out = run_process(["memory", "index", "--harness", "claude-code"], {"hook_event_name": "SessionStart"})
    assert out.exit == 0 and out.stdout == b"" and out.stderr == b""
    assert not state_root.exists()


def test_hook_mode_failure_is_silent_and_logged(state_root: Path) -> None:
    state_root.mkdir(mode=0o700)
    (state_root / "memory.sqlite").write_bytes(b"garbage" * 1000)
    out = mem("index", "--harness", "claude-code", stdin=b"{not json")
    assert out.exit == 0 and out.stdout == b"" and out.stderr == b""
    out = mem("index", "--harness", "claude-code", request={"hook_event_name": "SessionStart"})
    assert out.exit == 0 and out.stdout == b""
    logged = [orjson.loads(line)["code"] for line in (state_root / "errors.jsonl").read_bytes().splitlines()]
    assert logged == ["bad_json", "state_corrupt"]
