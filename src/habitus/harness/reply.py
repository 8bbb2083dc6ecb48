"""Hook replies: the object a hook command writes on stdout, in each harness's own format (no "v").

    context_output(harness, event, text) -> dict|None  the harness's "add this as context" reply
    block_output(harness, event, reason) -> dict|None  the harness's "do not stop yet, because..." reply
    with_notice(reply, message) -> dict                the reply plus a line shown to the user
    can_add_context(harness, event), can_block(harness, event): whether that channel exists

None means the harness has no such channel for the event: the command then writes nothing at all
(habitus.io.write_reply). The protocols are described in habitus.harness.events.
"""

from __future__ import annotations

from typing import Any

from habitus.harness.events import HookEvent

# Each harness's name for the events that accept injected context.
_CONTEXT_EVENTS: dict[str, dict[str, str]] = {
    "claude-code": {
        "prompt": "UserPromptSubmit",
        "session_start": "SessionStart",
        "post_tool": "PostToolUse",
    },
    "codex": {"prompt": "UserPromptSubmit", "session_start": "SessionStart"},
    "gemini": {"prompt": "BeforeAgent", "session_start": "SessionStart", "post_tool": "AfterTool"},
}


def context_output(harness: str, event: HookEvent, text: str) -> dict[str, Any] | None:
    """The reply that makes `harness` add `text` to the model's context for `event`, or None when the
    harness offers no such channel for that event (the caller then prints nothing)."""
    if not text:
        return None
    if harness in ("pi", "generic"):
        return {"additionalContext": text} if event.kind in ("prompt", "session_start") else None
    name = _CONTEXT_EVENTS.get(harness, {}).get(event.kind)
    if name is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}


def block_output(harness: str, event: HookEvent, reason: str) -> dict[str, Any] | None:
    """The reply that keeps the agent working with `reason` as feedback, or None.

    Only stop events can be blocked; and never when `stop_hook_active` is set (the harness is already
    continuing because of a stop hook: blocking again would loop). Pi has no such channel.
    """
    if not reason.strip() or event.stop_hook_active:
        return None
    if harness in ("claude-code", "codex") and event.kind in ("stop", "subagent_stop"):
        return {"decision": "block", "reason": reason}
    if harness == "gemini" and event.kind == "stop":
        return {"decision": "deny", "reason": reason}
    if harness == "generic" and event.kind == "stop":
        return {"decision": "block", "reason": reason}
    return None


def can_add_context(harness: str, event: HookEvent) -> bool:
    return context_output(harness, event, "x") is not None


def can_block(harness: str, event: HookEvent) -> bool:
    """Whether a stop could be blocked now (not for a stop a stop hook already continued)."""
    return block_output(harness, event, "x") is not None


def with_notice(reply: dict[str, Any] | None, message: str) -> dict[str, Any]:
    """`reply` plus `systemMessage`, which Claude Code, Codex and Gemini show to the user (not the
    model); the others ignore the key."""
    return {**(reply or {}), "systemMessage": message}
