"""Who wrote a prompt: the human, or something that only looks like them.

    source_of(text) -> (source, text)   one of core.SOURCES, and the text to keep as the prompt

Clients record much that is not the user's words in the user's place: Claude Code stores agent-team
messages (`<teammate-message teammate_id=…>`), pasted plans ("Implement the following plan:"), slash
commands (`<command-name>`), local command output, background task notices, system reminders and hook
feedback ("Stop hook feedback:", "Stop hook blocking error from command: …") as user records; Codex
stores a Stop hook's continuation as `<hook_prompt …>`, its `/review` rubric and a skill the user named
(`<skill><name>…</name><path>…/SKILL.md</path>…</skill>`, a message of its own) as the user's; Gemini
CLI glues the context hooks injected in front of the prompt (`<hook_context>…</hook_context>`, its text
escaped); and habitus's own notes come back as "[habitus advise…]". These are recorded with their
source and never count as friction.
"""

from __future__ import annotations

import re

# Gemini CLI wraps every hook's additionalContext so: SessionStart's lands in front of the prompt,
# BeforeAgent's after it (in -p mode both reach the stored prompt and AfterAgent's `prompt`).
_HOOK_CONTEXT = re.compile(
    r"\A(?:\s*(?:<hook_context>.*?</hook_context>|&lt;hook_context&gt;.*?&lt;/hook_context&gt;))+\s*", re.S
)
_TRAILING_HOOK_CONTEXT = re.compile(
    r"(?:\s*(?:<hook_context>(?:(?!<hook_context>).)*</hook_context>"
    r"|&lt;hook_context&gt;(?:(?!&lt;hook_context&gt;).)*&lt;/hook_context&gt;))+\s*\Z",
    re.S,
)
# Codex's `/review` sends its built-in rubric as the user's message ("# Review guidelines:", in Codex
# Desktop 0.142 "## Code review guidelines:\n# Review Guidelines"), the user's focus after it if any.
_CODEX_REVIEW = re.compile(
    r"\A#{1,2} (?:code )?review guidelines:?\s+(?:# review guidelines\s+)?you are acting as a reviewer for a proposed code change",
    re.I,
)
_SLASH = re.compile(r"/[\w:.-]+(?:\s|$)")  # "/mode", "/compact keep the API": a slash command (Pi, Codex)
_PREFIXES: tuple[tuple[str, str], ...] = (
    ("<teammate-message", "teammate"),
    ("<agent-message", "teammate"),
    ("<cross-session-message", "teammate"),
    ("implement the following plan", "plan"),
    ("<command-name>", "command"),
    ("<command-message>", "command"),
    ("<local-command-stdout>", "command"),
    ("<local-command-stderr>", "command"),
    ("<local-command-caveat>", "meta"),
    ("<bash-input>", "command"),
    ("<bash-stdout>", "command"),
    ("<bash-stderr>", "command"),
    ("<task-notification>", "tool"),
    ("<system-reminder>", "meta"),
    ("<session_context>", "meta"),
    ("<environment_context>", "meta"),
    ("<user_instructions>", "meta"),
    ("<user_shell_command>", "command"),
    ("<skill>", "command"),
    ("# agents.md", "meta"),
    ("<hook_prompt", "hook"),
    ("<user-prompt-submit-hook>", "hook"),
    ("stop hook feedback", "hook"),
    ("stop hook blocking error", "hook"),
    ("subagentstop hook", "hook"),
    ("[habitus advise", "hook"),
    ("this session is being continued from a previous conversation", "meta"),
)


def strip_hook_context(text: str) -> str:
    """The prompt without the hook context a client glued before or after it (Gemini CLI `-p`)."""
    if "hook_context" in text[:64]:
        text = _HOOK_CONTEXT.sub("", text, count=1)
    if text.rstrip().endswith(("</hook_context>", "&lt;/hook_context&gt;")):
        text = _TRAILING_HOOK_CONTEXT.sub("", text, count=1)
    return text


def source_of(text: str) -> tuple[str, str]:
    """(source, prompt text): who wrote `text`, with injected hook context removed."""
    text = strip_hook_context(text).strip()
    head = text[:80].lower()
    for prefix, source in _PREFIXES:
        if head.startswith(prefix):
            return source, text
    if "<command-name>" in text[:400] or _SLASH.match(text) or _CODEX_REVIEW.match(text[:200]):
        return "command", text
    return "user", text
