"""Hook mode: which events review, which deliver, and the harness reply (or None: print nothing).

Delivery, per harness (the channels each publishes; see habitus.harness.events and .reply):

| event                                   | does                                                           |
|-----------------------------------------|----------------------------------------------------------------|
| Stop / SubagentStop (Claude Code, Codex), AfterAgent (Gemini), a generic pair | review; a blocker blocks the stop once (`decision: block`, Gemini `deny`) unless `stop_hook_active`, `advise.block = false`, or the previous review of the session blocked for the same finding; any other accepted note waits for the next prompt (so in the warm worker such a review runs after the answer) |
| PostToolUse (Claude Code), AfterTool (Gemini) | review; an accepted note goes back at once as `additionalContext` |
| agent_end, tool_execution_end (Pi)      | review; the note waits for the next prompt (Pi has no blocking channel) |
| UserPromptSubmit, BeforeAgent, before_agent_start, a generic prompt | deliver the session's waiting notes (at most 3) as context, then mark them delivered so they never repeat |

A pause after three failed reviews is shown once, as `systemMessage` (shown to the user, not the model),
on the next hook call; `habitus status` and every non-hook result keep showing it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.harness import HookEvent, later
from habitus.harness.reply import block_output, can_add_context, can_block, context_output, with_notice

if TYPE_CHECKING:
    from habitus.advise.local import Candidate
    from habitus.advise.review import Source
    from habitus.state.root import StateRoot

REVIEW_KINDS = ("stop", "subagent_stop", "post_tool")


def note_text(severity: str, tag: str | None, finding: str, note: str) -> str:
    label = severity + (f", {tag}" if tag else "")
    return f"- {label} [{finding[:8]}]: {note}"


def context_text(lines: list[str]) -> str:
    return (
        "[habitus advise] A reviewer looked at your recent work. Act on this if it is right; "
        "say so if it is wrong:\n" + "\n".join(lines)
    )


def session_of(event: HookEvent) -> str:
    return f"{event.harness}:{event.session_id or 'default'}"


def source_of(event: HookEvent) -> Source | None:
    """What a review event covers, or None when it carries no work to review. A transcript that is not
    there (yet) leaves the event's own text (the last assistant message) to review."""
    from habitus.advise.review import Source
    from habitus.advise.slice import source_id
    from habitus.harness.transcripts import Turn, turns_from_pi_messages

    session = session_of(event)
    if event.harness == "pi" and event.messages:
        return Source(session, turns=turns_from_pi_messages(event.messages), cwd=event.cwd)
    path = event.transcript_path
    scope = None
    if event.kind == "subagent_stop":
        agent_path = event.raw.get("agent_transcript_path")
        path = agent_path if isinstance(agent_path, str) and agent_path else None
        agent = event.raw.get("agent_id")
        scope = f"{session}:agent:{agent if isinstance(agent, str) and agent else source_id(path or session)}"
    tool = _tool_of(event)
    if tool is not None and event.harness == "gemini":
        # Gemini rewrites the call's record in its chat file only after AfterTool: the event has it.
        return Source(
            session, scope=scope, turns=[Turn(user="", continued=True, tools=[tool])], cwd=event.cwd
        )
    if path and event.harness in ("claude-code", "codex", "pi", "gemini") and Path(path).is_file():
        fmt = event.harness
        return Source(
            session,
            scope=scope,
            path=Path(path),
            fmt=fmt,
            extra_assistant=event.last_assistant_message,
            cwd=event.cwd,
        )
    if tool is not None:  # a tool event without a readable transcript: the call itself is the work
        return Source(
            session, scope=scope, turns=[Turn(user="", continued=True, tools=[tool])], cwd=event.cwd
        )
    if event.last_assistant_message or event.prompt:
        turn = Turn(
            user=event.prompt or "", assistant=event.last_assistant_message or "", continued=not event.prompt
        )
        return Source(session, scope=scope, turns=[turn], cwd=event.cwd)
    return None


def _tool_of(event: HookEvent) -> Any:
    """The tool call a post-tool event reports (Claude Code / Codex PostToolUse, Gemini AfterTool)."""
    from habitus.harness.transcripts import ToolUse, tool_detail

    name = event.raw.get("tool_name")
    if event.kind != "post_tool" or not isinstance(name, str):
        return None
    response = event.raw.get("tool_response")
    failed = isinstance(response, dict) and (response.get("error") or response.get("success") is False)
    return ToolUse(name, status="error" if failed else "ok", detail=tool_detail(event.raw.get("tool_input")))


def handle(harness: str, event: HookEvent, root: StateRoot, *, wait: float) -> dict[str, Any] | None:
    from habitus.advise import review

    if event.kind == "prompt":
        taken, row = review.take_pending(root, session_of(event), wait=wait, cwd=event.cwd)
        reply: dict[str, Any] | None = None
        if taken:
            text = context_text([note_text(n["severity"], n["tag"], n["finding"], n["note"]) for n in taken])
            reply = context_output(harness, event, text)
        return (
            _warn_pause(root, reply, wait=wait) if row.get("paused_at") and not row["pause_warned"] else reply
        )
    if event.kind not in REVIEW_KINDS:
        return None
    source = source_of(event)
    if source is None:
        return None

    def route(candidate: Candidate) -> str | None:
        if event.kind in ("stop", "subagent_stop"):
            return "block" if candidate.severity == "blocker" and can_block(harness, event) else None
        return "context" if can_add_context(harness, event) else None

    # In the warm worker a review that cannot block runs after the answer (habitus.harness.later).
    defer = later.add if event.kind in ("stop", "subagent_stop") and later.queueing() else None
    outcome = review.run(root, source, wait=wait, route=route, defer=defer)
    reply = None
    note = outcome.note
    if note is not None and outcome.channel == "block":
        reply = block_output(
            harness, event, f"[habitus advise: {note['severity']} {note['id']}] {note['note']}"
        )
    elif note is not None and outcome.channel == "context":
        line = note_text(note["severity"], note["tag"], note["finding"], note["note"])
        reply = context_output(harness, event, context_text([line]))
    return _warn_pause(root, reply, wait=wait) if outcome.warn_pause else reply


def _warn_pause(root: StateRoot, reply: dict[str, Any] | None, *, wait: float) -> dict[str, Any]:
    """Add the one pause warning to the reply (shown to the user) and remember it was shown."""
    from habitus.advise import review

    row = review.mark_pause_warned(root, wait=wait)
    return with_notice(reply, review.pause_message(row))
