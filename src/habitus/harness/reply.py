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


def merge(replies: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """One reply for an event from the replies of the commands `habitus hook` ran on it, in order:
    their added context joined (a blank line between), the first block decision with its reason, every
    `systemMessage` joined by a line. None when none of them said anything."""
    said = [reply for reply in replies if reply]
    if not said:
        return None
    if len(said) == 1:
        return said[0]
    merged: dict[str, Any] = {}
    texts: list[str] = []
    notices: list[str] = []
    for reply in said:
        specific = reply.get("hookSpecificOutput")
        if isinstance(specific, dict):
            text = specific.get("additionalContext")
            if isinstance(text, str) and text:
                texts.append(text)
            merged.setdefault(
                "hookSpecificOutput", {k: v for k, v in specific.items() if k != "additionalContext"}
            )
        text = reply.get("additionalContext")
        if isinstance(text, str) and text:
            texts.append(text)
            merged.setdefault("additionalContext", "")
        notice = reply.get("systemMessage")
        if isinstance(notice, str) and notice:
            notices.append(notice)
        if "decision" in reply and "decision" not in merged:
            merged["decision"] = reply["decision"]
            merged["reason"] = reply.get("reason")
    joined = "\n\n".join(texts)
    if "hookSpecificOutput" in merged:
        merged["hookSpecificOutput"]["additionalContext"] = joined
    elif "additionalContext" in merged:
        merged["additionalContext"] = joined
    if notices:
        merged["systemMessage"] = "\n".join(notices)
    return merged
