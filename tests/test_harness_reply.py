"""The bytes a hook command writes on stdout, per harness and channel (habitus.harness.reply through
habitus.io.write_reply): key order, spacing and the closing newline are part of the protocol a harness
parses, so they are pinned here byte for byte."""

from __future__ import annotations

from typing import Any

import pytest

from habitus import io
from habitus.harness.events import parse_event
from habitus.harness.reply import block_output, can_add_context, can_block, context_output, with_notice


def event(harness: str, name: str, **extra: Any) -> Any:
    if harness == "generic":
        return parse_event("generic", {"user": "u", **({"assistant": "a"} if name == "pair" else {})})
    key = "hook_event_name" if harness != "pi" else "type"
    return parse_event(harness, {key: name, **extra})


def written(capsysbinary: pytest.CaptureFixture[bytes], reply: dict[str, Any] | None) -> bytes:
    io.write_reply(reply)
    return capsysbinary.readouterr().out


def ctx(name: str) -> bytes:
    return (
        b'{"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"c\xc3\xa9\\n\\""}}\n'
        % name.encode()
    )


PLAIN = b'{"additionalContext":"c\xc3\xa9\\n\\""}\n'
TEXT = 'c\u00e9\n"'  # non-ASCII stays UTF-8 as it is; the newline and the quote are escaped

# harness, event name, the context reply's bytes (b"" = no channel)
CONTEXT = [
    ("claude-code", "UserPromptSubmit", ctx("UserPromptSubmit")),
    ("claude-code", "SessionStart", ctx("SessionStart")),
    ("claude-code", "PostToolUse", ctx("PostToolUse")),
    ("claude-code", "Stop", b""),
    ("codex", "UserPromptSubmit", ctx("UserPromptSubmit")),
    ("codex", "SessionStart", ctx("SessionStart")),
    ("codex", "PostToolUse", b""),
    ("gemini", "BeforeAgent", ctx("BeforeAgent")),
    ("gemini", "SessionStart", ctx("SessionStart")),
    ("gemini", "AfterTool", ctx("AfterTool")),
    ("gemini", "AfterAgent", b""),
    ("pi", "before_agent_start", PLAIN),
    ("pi", "session_start", PLAIN),
    ("pi", "agent_end", b""),
    ("generic", "prompt", PLAIN),
    ("generic", "pair", b""),
]

# harness, event name, extra fields, the block reply's bytes (b"" = no channel)
BLOCK = [
    ("claude-code", "Stop", {}, b'{"decision":"block","reason":"why"}\n'),
    ("claude-code", "SubagentStop", {}, b'{"decision":"block","reason":"why"}\n'),
    ("claude-code", "Stop", {"stop_hook_active": True}, b""),  # already continuing: never loop
    ("claude-code", "UserPromptSubmit", {}, b""),
    ("codex", "Stop", {}, b'{"decision":"block","reason":"why"}\n'),
    ("gemini", "AfterAgent", {}, b'{"decision":"deny","reason":"why"}\n'),
    ("pi", "agent_end", {}, b""),  # Pi has no stop-blocking channel
    ("generic", "pair", {}, b'{"decision":"block","reason":"why"}\n'),
]


@pytest.mark.parametrize(("harness", "name", "expected"), CONTEXT, ids=[f"{h}-{n}" for h, n, _ in CONTEXT])
def test_context_reply_bytes(
    harness: str, name: str, expected: bytes, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    hook = event(harness, name)
    assert written(capsysbinary, context_output(harness, hook, TEXT)) == expected
    assert can_add_context(harness, hook) is bool(expected)
    assert written(capsysbinary, context_output(harness, hook, "")) == b""  # nothing to add: silence


@pytest.mark.parametrize(
    ("harness", "name", "extra", "expected"), BLOCK, ids=[f"{h}-{n}-{len(x)}" for h, n, x, _ in BLOCK]
)
def test_block_reply_bytes(
    harness: str,
    name: str,
    extra: dict[str, Any],
    expected: bytes,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    hook = event(harness, name, **extra)
    assert written(capsysbinary, block_output(harness, hook, "why")) == expected
    assert can_block(harness, hook) is bool(expected)
    assert written(capsysbinary, block_output(harness, hook, "  ")) == b""


def test_a_notice_rides_after_the_reply_or_alone(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """The pause warning (shown to the user): after whatever the reply says, or on its own."""
    hook = event("claude-code", "Stop")
    reply = with_notice(block_output("claude-code", hook, "why"), "paused")
    assert written(capsysbinary, reply) == b'{"decision":"block","reason":"why","systemMessage":"paused"}\n'
    assert written(capsysbinary, with_notice(None, "paused")) == b'{"systemMessage":"paused"}\n'


def test_nothing_to_say_writes_nothing(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert written(capsysbinary, None) == b"" and written(capsysbinary, {}) == b""
