"""Hook events of every harness normalise to one HookEvent; replies follow each harness's protocol."""

from __future__ import annotations

from typing import Any

import pytest

from habitus.errors import HabitusError
from habitus.harness import HookEvent, block_output, context_output, parse_event
from habitus.harness.events import iso_from_epoch

CLAUDE_STOP = {
    "session_id": "abc123",
    "transcript_path": "/tmp/t.jsonl",
    "cwd": "/work",
    "permission_mode": "default",
    "hook_event_name": "Stop",
    "stop_hook_active": False,
    "last_assistant_message": "Done.",
}


@pytest.mark.parametrize(
    ("harness", "name", "kind"),
    [
        ("claude-code", "UserPromptSubmit", "prompt"),
        ("claude-code", "Stop", "stop"),
        ("claude-code", "SubagentStop", "subagent_stop"),
        ("claude-code", "SessionStart", "session_start"),
        ("claude-code", "SessionEnd", "session_end"),
        ("claude-code", "PreCompact", "pre_compact"),
        ("claude-code", "PostToolUse", "post_tool"),
        ("claude-code", "Notification", "other"),
        ("codex", "UserPromptSubmit", "prompt"),
        ("codex", "Stop", "stop"),
        ("codex", "PreCompact", "pre_compact"),
        ("gemini", "BeforeAgent", "prompt"),
        ("gemini", "AfterAgent", "stop"),
        ("gemini", "SessionEnd", "session_end"),
        ("gemini", "PreCompress", "pre_compact"),
        ("gemini", "AfterTool", "post_tool"),
        ("pi", "before_agent_start", "prompt"),
        ("pi", "agent_end", "stop"),
        ("pi", "session_shutdown", "session_end"),
        ("pi", "session_before_compact", "pre_compact"),
    ],
)
def test_event_names_map_to_kinds(harness: str, name: str, kind: str) -> None:
    event = parse_event(harness, {"hook_event_name": name, "session_id": "s"})
    assert (event.kind, event.name, event.harness, event.session_id) == (kind, name, harness, "s")


def test_claude_code_stop_fields() -> None:
    event = parse_event("claude-code", CLAUDE_STOP)
    assert event.transcript_path == "/tmp/t.jsonl" and event.cwd == "/work"
    assert event.last_assistant_message == "Done." and event.stop_hook_active is False
    assert event.raw["permission_mode"] == "default"


def test_codex_hook_with_null_transcript_and_turn_id() -> None:
    event = parse_event(
        "codex",
        {
            "hook_event_name": "Stop",
            "session_id": "t-1",
            "turn_id": "42",
            "transcript_path": None,
            "cwd": "/w",
            "model": "gpt-5",
            "permission_mode": "default",
            "stop_hook_active": True,
            "last_assistant_message": None,
        },
    )
    assert event.kind == "stop" and event.turn_id == "42" and event.transcript_path is None
    assert event.stop_hook_active is True


def test_codex_notify_payload_is_a_stop_event() -> None:
    event = parse_event(
        "codex",
        {
            "type": "agent-turn-complete",
            "thread-id": "b5f6c1c2-1111-2222-3333-444455556666",
            "turn-id": "12345",
            "cwd": "/Users/example/project",
            "input-messages": ["Rename `foo` to `bar` and update the callsites."],
            "last-assistant-message": "Rename complete and verified `cargo build` succeeds.",
        },
    )
    assert event.kind == "stop" and event.name == "agent-turn-complete"
    assert event.session_id == "b5f6c1c2-1111-2222-3333-444455556666" and event.turn_id == "12345"
    assert event.prompt == "Rename `foo` to `bar` and update the callsites."
    assert event.last_assistant_message.startswith("Rename complete")


def test_gemini_after_agent_carries_both_sides() -> None:
    event = parse_event(
        "gemini",
        {
            "hook_event_name": "AfterAgent",
            "session_id": "g",
            "transcript_path": "/x.json",
            "cwd": "/w",
            "timestamp": "2026-01-01T00:00:00Z",
            "prompt": "fix it",
            "prompt_response": "fixed",
            "stop_hook_active": False,
        },
    )
    assert (event.kind, event.prompt, event.last_assistant_message) == ("stop", "fix it", "fixed")
    assert event.timestamp == "2026-01-01T00:00:00Z"


def test_pi_event_from_the_extension() -> None:
    event = parse_event(
        "pi",
        {
            "hook_event_name": "agent_end",
            "session_id": "p",
            "session_file": "/s.jsonl",
            "prompt": "hi",
            "messages": [{"role": "user", "content": "hi"}],
            "timestamp": 1763681630791,
        },
    )
    assert event.kind == "stop" and event.transcript_path == "/s.jsonl" and len(event.messages or []) == 1
    assert event.timestamp == "2025-11-20T23:33:50.791Z"
    assert parse_event("pi", {"type": "agent_end"}).kind == "stop"


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (1.5, "1970-01-01T00:00:01.500Z"),
        (1.9996, "1970-01-01T00:00:02.000Z"),  # milliseconds that round up carry into the seconds
        (59.9999, "1970-01-01T00:01:00.000Z"),
        (1_763_681_630.9996, "2025-11-20T23:33:51.000Z"),
    ],
)
def test_epoch_seconds_round_to_milliseconds(seconds: float, expected: str) -> None:
    assert iso_from_epoch(seconds) == expected


def test_generic_pairs_and_prompts() -> None:
    pair = parse_event(
        "generic", {"user": "u", "assistant": "a", "session": "s", "at": "2026-01-01T00:00:00Z"}
    )
    assert (pair.kind, pair.name, pair.prompt, pair.last_assistant_message, pair.session_id) == (
        "stop",
        "pair",
        "u",
        "a",
        "s",
    )
    assert parse_event("generic", {"user": "u"}).kind == "prompt"
    assert parse_event("generic", {}).kind == "other"


@pytest.mark.parametrize(
    ("harness", "request_", "field"),
    [
        ("claude-code", {"hook_event_name": "Stop", "session_id": 5}, "session_id"),
        ("claude-code", {"hook_event_name": 1}, "hook_event_name"),
        ("claude-code", {"hook_event_name": "Stop", "stop_hook_active": "yes"}, "stop_hook_active"),
        ("claude-code", {"hook_event_name": "UserPromptSubmit", "prompt": ["x"]}, "prompt"),
        ("codex", {"hook_event_name": "Stop", "transcript_path": {}}, "transcript_path"),
        ("codex", {"type": "agent-turn-complete", "input-messages": "x"}, "input-messages"),
        ("gemini", {"hook_event_name": "AfterAgent", "prompt_response": 3}, "prompt_response"),
        ("gemini", {"hook_event_name": "AfterAgent", "timestamp": True}, "timestamp"),
        ("pi", {"hook_event_name": "agent_end", "messages": {"role": "user"}}, "messages"),
        ("generic", {"user": "u", "assistant": 2}, "assistant"),
    ],
)
def test_wrong_types_are_bad_requests_naming_the_field(
    harness: str, request_: dict[str, Any], field: str
) -> None:
    with pytest.raises(HabitusError) as info:
        parse_event(harness, request_)
    assert info.value.code == "bad_request"
    assert f"request.{field}:" in info.value.message


def test_unknown_keys_are_ignored() -> None:
    event = parse_event("claude-code", {**CLAUDE_STOP, "future_field": {"x": [1]}})
    assert event.kind == "stop"


def ev(harness: str, name: str, **extra: Any) -> HookEvent:
    return parse_event(harness, {"hook_event_name": name, **extra})


def test_context_output_follows_each_protocol() -> None:
    assert context_output("claude-code", ev("claude-code", "UserPromptSubmit"), "ctx") == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ctx"}
    }
    assert context_output("claude-code", ev("claude-code", "SessionStart"), "ctx") == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "ctx"}
    }
    assert context_output("codex", ev("codex", "UserPromptSubmit"), "ctx") == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ctx"}
    }
    assert context_output("gemini", ev("gemini", "BeforeAgent"), "ctx") == {
        "hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "ctx"}
    }
    assert context_output("pi", ev("pi", "before_agent_start"), "ctx") == {"additionalContext": "ctx"}
    assert context_output("generic", parse_event("generic", {"user": "u"}), "ctx") == {
        "additionalContext": "ctx"
    }
    assert context_output("claude-code", ev("claude-code", "Stop"), "ctx") is None
    assert context_output("codex", ev("codex", "PostToolUse"), "ctx") is None
    assert context_output("gemini", ev("gemini", "AfterAgent"), "ctx") is None
    assert context_output("claude-code", ev("claude-code", "UserPromptSubmit"), "") is None


def test_block_output_follows_each_protocol() -> None:
    assert block_output("claude-code", ev("claude-code", "Stop"), "fix the test") == {
        "decision": "block",
        "reason": "fix the test",
    }
    assert block_output("claude-code", ev("claude-code", "SubagentStop"), "r") == {
        "decision": "block",
        "reason": "r",
    }
    assert block_output("codex", ev("codex", "Stop"), "r") == {"decision": "block", "reason": "r"}
    assert block_output("gemini", ev("gemini", "AfterAgent"), "r") == {"decision": "deny", "reason": "r"}
    assert block_output("pi", ev("pi", "agent_end"), "r") is None
    assert block_output("claude-code", ev("claude-code", "UserPromptSubmit"), "r") is None
    assert block_output("claude-code", ev("claude-code", "Stop"), "   ") is None


def test_block_output_never_loops_a_stop_hook() -> None:
    active = ev("claude-code", "Stop", stop_hook_active=True)
    assert block_output("claude-code", active, "again") is None
    assert block_output("gemini", ev("gemini", "AfterAgent", stop_hook_active=True), "again") is None
