"""Hook events in: one adapter for Claude Code, Codex CLI, Gemini CLI, Pi and generic.

    parse_event(harness, request) -> HookEvent       normalise a hook's stdin object

The replies that go back out, per harness, are habitus.harness.reply's; the protocols below cover both.

Protocols followed: as published, and as the real clients behave, checked on 2026-12-01 by driving them
offline against a loopback model server: Claude Code 2.1.197 (the events of 2.1.332 are documented in
the project's reference notes), Codex CLI 0.171.0, Gemini CLI 0.61.0, Pi 1.6.0 (and 0.73.1 through the
same extension).

- Claude Code, https://code.claude.com/docs/en/hooks: every event carries `session_id`,
  `transcript_path`, `cwd`, `hook_event_name`; `UserPromptSubmit` adds `prompt`; `Stop` and
  `SubagentStop` add `stop_hook_active` and `last_assistant_message` (SubagentStop also `agent_id`,
  `agent_transcript_path`); `SessionEnd` adds `reason`; `PreCompact` adds `trigger`. Context goes back as
  `{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit"|"SessionStart"|"PostToolUse",
  "additionalContext": ...}}`; a Stop/SubagentStop block is `{"decision": "block", "reason": ...}`.
- Codex CLI hooks (`[features] codex_hooks = true`), the JSON Schemas in openai/codex
  `codex-rs/hooks/schema/generated/*.command.{input,output}.schema.json`: the same event names and
  snake_case fields as Claude Code plus `turn_id` and `model`; `transcript_path` may be null. Output:
  `hookSpecificOutput.additionalContext` for UserPromptSubmit and SessionStart, `decision: "block"` with a
  non-empty `reason` for Stop/SubagentStop. The older `notify` program (openai/codex
  `codex-rs/hooks/src/legacy_notify.rs`) receives `{"type": "agent-turn-complete", "thread-id",
  "turn-id", "cwd", "input-messages", "last-assistant-message"}` as its last argument; it is parsed here
  as a stop event too. `input-messages` holds every prompt of the thread so far (0.171 `exec resume`):
  the prompt of this turn is the last one. 0.171 also has SessionEnd (a sweep of the rollout) and runs
  a Stop hook's continuation inside the same turn (`stop_hook_active` on the next Stop).
- Gemini CLI, google-gemini/gemini-cli `docs/hooks/reference.md` and `packages/core/src/hooks/types.ts`:
  base fields `session_id`, `transcript_path`, `cwd`, `hook_event_name`, `timestamp`; `BeforeAgent` has
  `prompt`, `AfterAgent` has `prompt`, `prompt_response`, `stop_hook_active`; `SessionEnd` `reason`;
  `PreCompress` `trigger`; `AfterTool` `tool_name`, `tool_input`, `tool_response`. In `-p` mode the
  SessionStart context is glued in front of the prompt as `<hook_context>…</hook_context>` (its `<`/`>`
  escaped): parse_event strips it, so that nothing downstream reads habitus's own index as the user's. Context: `hookSpecificOutput: {hookEventName: "BeforeAgent"|"SessionStart"|
  "AfterTool", additionalContext}`; an AfterAgent retry is `{"decision": "deny", "reason": ...}`.
- Pi has no process hooks: extensions subscribe to events in-process (badlogic/pi-mono
  `packages/coding-agent/docs/extensions.md`). habitus ships `integrations/pi/habitus.ts`, which
  sends `{"hook_event_name": <pi event type>, "session_id", "session_file", "cwd", "prompt",
  "messages", "timestamp"}` on stdin. Pi event names: `before_agent_start` (prompt, only when its
  `messageType` is "user" in 1.6), `agent_settled` (1.6: Pi will not continue; the extension sends the
  messages of every attempt since the prompt, and `aborted`), `agent_end` (0.73: the run's messages;
  1.6 fires it per attempt), `session_start`, `session_shutdown`, `session_before_compact`,
  `tool_execution_end`.
  That wire format is habitus's own, so the context reply for Pi is `{"additionalContext": text}`
  (habitus's convention for its extension to inject); Pi has no stop-blocking channel, so
  block_output answers None.
- generic: `{"user": "...", "assistant": "...", "session": "...", "at": "..."}` is a complete pair (a
  stop event); `{"user": ...}` alone is a prompt. Replies use `{"additionalContext": ...}` and
  `{"decision": "block", "reason": ...}`.

Not confirmed: whether Codex and Gemini accept additionalContext on any event other than those listed;
they answer None elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from habitus.errors import bad_request
from habitus.harness.provenance import strip_hook_context

KINDS = (
    "prompt",
    "stop",
    "subagent_stop",
    "session_start",
    "session_end",
    "pre_compact",
    "post_tool",
    "other",
)

_CLAUDE_KINDS = {
    "UserPromptSubmit": "prompt",
    "Stop": "stop",
    "SubagentStop": "subagent_stop",
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "PreCompact": "pre_compact",
    "PostToolUse": "post_tool",
    "PostToolUseFailure": "post_tool",
}
_GEMINI_KINDS = {
    "BeforeAgent": "prompt",
    "AfterAgent": "stop",
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "PreCompress": "pre_compact",
    "AfterTool": "post_tool",
}
_PI_KINDS = {
    "before_agent_start": "prompt",
    "agent_end": "stop",
    "agent_settled": "stop",
    "session_start": "session_start",
    "session_shutdown": "session_end",
    "session_before_compact": "pre_compact",
    "tool_execution_end": "post_tool",
    "tool_result": "post_tool",
}
KIND_MAPS: dict[str, dict[str, str]] = {
    "claude-code": _CLAUDE_KINDS,
    "codex": _CLAUDE_KINDS,
    "gemini": _GEMINI_KINDS,
    "pi": _PI_KINDS,
}


@dataclass
class HookEvent:
    """One hook event, normalised. `raw` keeps the whole request for commands that need more."""

    harness: str
    kind: str  # one of KINDS
    name: str  # the harness's own event name ("Stop", "AfterAgent", "agent_end", "pair", ...)
    session_id: str | None = None
    cwd: str | None = None
    transcript_path: str | None = None
    prompt: str | None = None
    last_assistant_message: str | None = None
    stop_hook_active: bool = False
    timestamp: str | None = None
    turn_id: str | None = None
    messages: list[Any] | None = None  # Pi: the run's messages
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


def _text(request: dict[str, Any], key: str, *, nullable: bool = True) -> str | None:
    value = request.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise bad_request(key, "expected a string" + (" or null" if nullable else ""))
    return value


def _path(request: dict[str, Any], key: str) -> str | None:
    """A file or folder path: a string without NUL characters (the OS cannot represent them)."""
    value = _text(request, key)
    if value is not None and "\x00" in value:
        raise bad_request(key, "expected a path without NUL characters")
    return value


def _flag(request: dict[str, Any], key: str) -> bool:
    value = request.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise bad_request(key, "expected true or false")
    return value


def _stamp(request: dict[str, Any], key: str) -> str | None:
    value = request.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise bad_request(key, "expected an ISO-8601 string or epoch milliseconds")
    if isinstance(value, str):
        return value
    return iso_from_epoch(value / 1000 if value > 1e11 else float(value))


def iso_from_epoch(seconds: float) -> str:
    """ISO-8601 UTC with milliseconds, the form habitus stores timestamps in. The milliseconds are
    rounded first, so that 1.9996 s is 00:00:02.000, not 00:00:01.000."""
    import time

    whole, milliseconds = divmod(round(seconds * 1000), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{milliseconds:03d}Z"


def parse_event(harness: str, request: dict[str, Any]) -> HookEvent:
    """Normalise a hook request of `harness` into a HookEvent.

    Unknown keys are ignored; a known key with the wrong type is `bad_request` naming the key. An event
    the harness has but capture does not use has kind "other".
    """
    if not isinstance(request, dict):
        raise bad_request("(root)", "expected a JSON object")
    if harness == "generic":
        return _generic(request)
    if harness not in KIND_MAPS:
        raise bad_request("harness", "expected one of claude-code, codex, gemini, pi, generic")
    if harness == "codex" and request.get("type") == "agent-turn-complete":
        return _codex_notify(request)
    name = _text(request, "hook_event_name")
    if name is None and harness == "pi":
        name = _text(request, "type")
    name = name or ""
    event = HookEvent(
        harness=harness,
        kind=KIND_MAPS[harness].get(name, "other"),
        name=name,
        session_id=_text(request, "session_id"),
        cwd=_path(request, "cwd"),
        transcript_path=_path(request, "transcript_path"),
        prompt=_text(request, "prompt"),
        last_assistant_message=_text(request, "last_assistant_message"),
        stop_hook_active=_flag(request, "stop_hook_active"),
        timestamp=_stamp(request, "timestamp"),
        turn_id=_text(request, "turn_id"),
        raw=request,
    )
    if event.prompt is not None:
        event.prompt = strip_hook_context(event.prompt)
    if harness == "gemini":
        event.last_assistant_message = _text(request, "prompt_response")
    if harness == "pi":
        if request.get("messageType") not in (None, "user"):
            event.prompt = None  # a run started by an extension's custom message: no one typed it
        event.transcript_path = event.transcript_path or _path(request, "session_file")
        messages = request.get("messages")
        if messages is not None and not isinstance(messages, list):
            raise bad_request("messages", "expected a list of Pi messages")
        event.messages = messages
    return event


def _codex_notify(request: dict[str, Any]) -> HookEvent:
    messages = request.get("input-messages")
    if messages is not None and (
        not isinstance(messages, list) or not all(isinstance(m, str) for m in messages)
    ):
        raise bad_request("input-messages", "expected a list of strings")
    return HookEvent(
        harness="codex",
        kind="stop",
        name="agent-turn-complete",
        session_id=_text(request, "thread-id"),
        cwd=_path(request, "cwd"),
        prompt=messages[-1] if messages else None,
        last_assistant_message=_text(request, "last-assistant-message"),
        turn_id=_text(request, "turn-id"),
        raw=request,
    )


def _generic(request: dict[str, Any]) -> HookEvent:
    user = _text(request, "user")
    assistant = _text(request, "assistant")
    session = _text(request, "session")
    kind = (
        "stop" if user is not None and assistant is not None else ("prompt" if user is not None else "other")
    )
    return HookEvent(
        harness="generic",
        kind=kind,
        name="pair" if kind == "stop" else kind,
        session_id=session,
        cwd=_path(request, "cwd"),
        prompt=user,
        last_assistant_message=assistant,
        timestamp=_stamp(request, "at"),
        raw=request,
    )
