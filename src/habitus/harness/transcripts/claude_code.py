"""Claude Code session JSONL (checked against 2.1.38/2.1.39 sessions and files 2.1.197 wrote).

One record per line, linked by `uuid`/`parentUuid` (a compaction boundary links through
`logicalParentUuid`; Claude Code 1.0 wrote the summary as a new root, read as following the record before
it); one content block per record; tool results arrive as `user` records holding a
`tool_result` block (`toolUseResult: "User rejected tool use"` when the user rejected it; `is_error` with
"This command requires approval" or a permission message when the harness refused it: the call never
ran); `progress`, `attachment`, `file-history-snapshot`, `queue-operation`, `last-prompt` and `system`
records carry no conversation. Only the active branch counts: the chain from the last record back to
the root, plus tool results hanging off it (parallel tool calls); a branch left by rewinding a prompt is
ignored. In a whole file, a link to a record the file does not hold (a copy that lost a line) continues
from the record before it. What the user typed when rejecting a tool use ("... the user said:\n<reason>")
is the user's next prompt. Not the user's words, recorded with their source (see `provenance`): `isMeta` records (a
skill's expanded text, "Stop hook feedback:" after a Stop hook blocked, which starts a "hook" turn),
compaction summaries, slash commands and their output, teammate messages, pasted plans. A subagent's
transcript (`subagents/agent-*.jsonl`, every record `isSidechain`) holds the parent agent's prompts:
all its turns are "subagent". "[Request interrupted by user]" ends the turn as interrupted; the
prompt is kept.
"""

from __future__ import annotations

import re
from typing import Any

from habitus.harness.provenance import source_of
from habitus.harness.transcripts.core import _block_text, _blocks, _Builder, _chain, _mapping, _Rec

_CC_SKIP_TYPES = {"progress", "file-history-snapshot", "queue-operation", "summary", "system"}
_REJECTED_PREFIX = "The user doesn't want to proceed with this tool use"
# A rejection with a reason: what follows is what the user typed in the rejection box.
_REJECTION_REASON = re.compile(r"\bthe user said:\s*\n(?P<reason>.+)\Z", re.S)
_REFUSED = re.compile(
    r"requires approval|requested permissions? to use|haven't granted|permission to use \S+ (?:has been|was) "
    r"denied|denied by (?:a |the )?(?:permission|policy|hook)|blocked by (?:a |the )?(?:hook|policy)|"
    r"operation was blocked",
    re.I,
)


def _slash_command(text: str) -> str:
    """`<command-name>/x</command-name>...<command-args>y</command-args>` -> `/x y`."""
    name = re.search(r"<command-name>(.*?)</command-name>", text, re.S)
    args = re.search(r"<command-args>(.*?)</command-args>", text, re.S)
    out = (name.group(1).strip() if name else "").strip()
    if args and args.group(1).strip():
        out = f"{out} {args.group(1).strip()}".strip()
    return out


def _claude_code(records: list[_Rec], parents: dict[str, str | None], *, whole: bool = False) -> _Builder:
    conversation = [r for r in records if r.obj.get("type") in ("user", "assistant")]
    main = [r for r in conversation if not r.obj.get("isSidechain")]
    subagent = bool(conversation) and not main
    if main:
        conversation = main
    builder = _Builder()
    builder.forced_source = "subagent" if subagent else None
    if not conversation:
        return builder
    builder.session_id = conversation[-1].obj.get("sessionId") or None
    active = _chain(conversation[-1].uuid, parents, bridge=whole)
    for rec in conversation:
        obj = rec.obj
        if rec.uuid is not None and active and rec.uuid not in active:
            parent = parents.get(rec.uuid)
            if not (obj.get("type") == "user" and parent in active and _has_tool_result(obj)):
                continue  # an abandoned branch
        message = _mapping(obj.get("message"))
        at = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        if obj.get("type") == "assistant":
            _cc_assistant(builder, obj, message, at, rec.offset)
        else:
            _cc_user(builder, obj, message, at, rec)
    builder.finish()
    return builder


def _has_tool_result(obj: dict[str, Any]) -> bool:
    message = obj.get("message")
    return isinstance(message, dict) and any(
        b.get("type") == "tool_result" for b in _blocks(message.get("content"))
    )


def _cc_assistant(
    builder: _Builder, obj: dict[str, Any], message: dict[str, Any], at: str | None, offset: int
) -> None:
    for block in _blocks(message.get("content")):
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            builder.say(block["text"], at, offset)
        elif kind == "tool_use":
            name = block.get("name") if isinstance(block.get("name"), str) else None
            builder.tool(
                name,
                block.get("id") if isinstance(block.get("id"), str) else None,
                offset,
                block.get("input"),
            )
    reason = message.get("stop_reason") if isinstance(message.get("stop_reason"), str) else None
    if obj.get("isApiErrorMessage") or obj.get("error"):
        builder.stop(reason, offset, outcome="error")
    elif reason in ("max_tokens", "model_context_window_exceeded"):
        builder.stop(reason, offset, outcome="truncated")
    elif reason is not None:
        builder.stop(reason, offset)


def _cc_user(
    builder: _Builder, obj: dict[str, Any], message: dict[str, Any], at: str | None, rec: _Rec
) -> None:
    if obj.get("isVisibleInTranscriptOnly") or obj.get("isCompactSummary"):
        return  # a compaction summary continues the conversation; it is nobody's prompt
    blocks = _blocks(message.get("content"))
    results = [b for b in blocks if b.get("type") == "tool_result"]
    reasons: list[str] = []
    for block in results:
        text = _block_text(block.get("content"))
        rejected = obj.get("toolUseResult") == "User rejected tool use" or text.startswith(_REJECTED_PREFIX)
        error = bool(block.get("is_error"))
        builder.result(
            block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else None,
            error=error,
            rejected=rejected,
            refused=error and not rejected and bool(_REFUSED.search(text[:400])),
            offset=rec.offset,
        )
        if rejected and (said := _REJECTION_REASON.search(text)) and said["reason"].strip():
            reasons.append(said["reason"].strip())
    if results:
        for reason in reasons:  # typed in the rejection box: the user's words, answered as a new prompt
            source, reason = source_of(reason)
            builder.prompt(reason, at, rec.uuid, rec.offset, source=builder.forced_source or source)
        return
    text = _block_text(message.get("content")).strip()
    if not text:
        return
    if text.startswith("[Request interrupted by user"):
        builder.stop(None, rec.offset, outcome="interrupted")
        return
    source, text = source_of(text)
    if obj.get("isMeta"):
        current = builder.current
        if source == "user":
            source = "meta"
        if source == "meta" and current is not None and not current.assistant and not current.tools:
            return  # the expansion of the command just given (a skill's text): part of that prompt
    if source == "command" and "<command-name>" in text:
        text = _slash_command(text) or text
    builder.prompt(text, at, rec.uuid, rec.offset, source=builder.forced_source or source)
