"""Harness hook configuration: which habitus command runs on which event, as each harness's settings.

    snippet(harness, root=None, program=None) -> dict   the settings object to merge ({"hooks": {...}});
                                               portable (the habitus on PATH) unless program is given
    settings_path(harness, project)  -> Path  where that harness reads it
    pi_extension()                   -> Path  the Pi extension shipped with habitus
    harness.settings.install(...)              merge into the file (see that module)

What is installed is one `habitus hook --harness NAME` per event (one process: most of a warm hook's
cost is starting it), which runs the commands PLAN gives that event in order and merges their replies;
Claude Code's SessionEnd sweep is an async hook (BACKGROUND). The commands per event follow each
capability's hook protocol (README; habitus.harness.events):

- Claude Code (~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json; a repository's
  .claude/settings.json): SessionStart -> memory index; UserPromptSubmit -> select, then advise (delivers
  notes waiting for this prompt); Stop -> capture, advise; SubagentStop -> advise; SessionEnd and
  PreCompact -> capture (a sweep of the transcript's tail for anything a Stop missed).
- Codex CLI 0.171 (~/.codex/hooks.json, or $CODEX_HOME/hooks.json; a repository's .codex/hooks.json;
  the same shape as Claude Code's): the same, plus capture on UserPromptSubmit (remembers the prompt
  when a Stop arrives without a transcript). Codex clamps SessionEnd timeouts to 3 s, so that entry
  asks for 3 s. Codex runs only hooks the user has trusted (`codex_trust` says how, and why habitus
  never writes that trust itself).
- Gemini CLI 0.61 (~/.gemini/settings.json, or $GEMINI_CLI_HOME/.gemini/settings.json; a repository's
  .gemini/settings.json): SessionStart -> memory index; BeforeAgent -> select, advise; AfterAgent ->
  capture, advise; SessionEnd -> capture (a sweep of the chat file). Gemini's timeouts are
  milliseconds and its entries carry a name.

PostToolUse/AfterTool reviews (advise reads both) are left out on purpose: each would start a process (and often the
embedding model) after every tool call; without them advise reviews when the agent stops. Observational
memory (`memory observe`) is left out too: with a language model configured it waits for the model.
README shows the one entry to add for either.

Timeouts (seconds): generous upper bounds, not expectations; every command answers in well under a
second offline, and a harness that kills a hook loses only that hook's work.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

HARNESSES = ("claude-code", "codex", "gemini")

# (event, habitus arguments after the program, timeout in seconds), in the order they run.
_CAPTURE, _SELECT, _ADVISE, _INDEX = ("capture",), ("select",), ("advise",), ("memory", "index")
_OBSERVE = ("memory", "observe")
HOOK = ("hook",)  # the one command installed per event: it runs that event's commands below
TIMEOUTS = {_CAPTURE: 30, _SELECT: 30, _ADVISE: 90, _INDEX: 15, _OBSERVE: 90}
# What habitus does on each event: the commands `habitus hook` runs, in this order, on one reading of
# the event, answering with their replies merged (habitus.harness.reply.merge).
PLAN: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "claude-code": [
        ("SessionStart", _INDEX),
        ("UserPromptSubmit", _SELECT),
        ("UserPromptSubmit", _ADVISE),
        ("Stop", _CAPTURE),
        ("Stop", _ADVISE),
        ("SubagentStop", _ADVISE),
        ("SessionEnd", _CAPTURE),
        ("PreCompact", _CAPTURE),
    ],
    "codex": [
        ("SessionStart", _INDEX),
        ("UserPromptSubmit", _CAPTURE),
        ("UserPromptSubmit", _SELECT),
        ("UserPromptSubmit", _ADVISE),
        ("Stop", _CAPTURE),
        ("Stop", _ADVISE),
        ("SubagentStop", _ADVISE),
        ("SessionEnd", _CAPTURE),
        ("PreCompact", _CAPTURE),
    ],
    "gemini": [
        ("SessionStart", _INDEX),
        ("BeforeAgent", _SELECT),
        ("BeforeAgent", _ADVISE),
        ("AfterAgent", _CAPTURE),
        ("AfterAgent", _ADVISE),
        ("SessionEnd", _CAPTURE),
    ],
    # Pi's extension (integrations/pi/habitus.ts) sends these events to `habitus hook --harness pi`.
    # agent_end does the work only in Pi 0.73, which has no agent_settled (the extension decides).
    "pi": [
        ("before_agent_start", _INDEX),
        ("before_agent_start", _SELECT),
        ("before_agent_start", _ADVISE),
        ("agent_settled", _CAPTURE),
        ("agent_settled", _ADVISE),
        ("agent_settled", _OBSERVE),
        ("agent_end", _CAPTURE),
        ("agent_end", _ADVISE),
        ("agent_end", _OBSERVE),
        ("session_shutdown", _CAPTURE),
    ],
}


def events(harness: str) -> list[str]:
    """The events habitus hooks for `harness`, in PLAN's order: one `habitus hook` entry each."""
    return list(dict.fromkeys(event for event, _ in PLAN.get(harness, [])))


def commands_for(harness: str, event: str) -> list[tuple[str, ...]]:
    """The habitus commands (arguments after the program) that `harness`'s `event` runs, in order."""
    return [args for name, args in PLAN.get(harness, []) if name == event]


# Events whose timeout the harness clamps (Codex: SessionEnd and Interrupt to 3 s, with a warning).
CLAMPED = {("codex", "SessionEnd"): 3, ("codex", "Interrupt"): 3}
# Events whose hook the harness runs in the background ("async": true) because nothing it answers is
# needed: Claude Code's SessionEnd, a sweep of the transcript for anything a Stop missed. `claude -p`
# then exits without waiting for it, and the sweep finishes on its own (observed with 2.1.332: an async
# SessionEnd hook outlives the exit; an async Stop hook does not, so Stop's capture stays in the turn).
BACKGROUND = {("claude-code", "SessionEnd")}
# Events after which the session is over: nothing a command does can change what the harness does, so
# the warm worker answers first and runs their commands after the answer (habitus.harness.later), as
# Claude Code does with an async hook. Codex and Gemini wait for a SessionEnd hook before exiting.
AFTER_ANSWER = frozenset({"SessionEnd", "session_shutdown"})
# What the harness still needs besides the file (said in the install result and README).
NOTES = {
    "claude-code": "Claude Code reads settings.json at start: restart running sessions (or review them in /hooks).",
    "codex": "Codex runs hooks.json entries only once you have trusted them: run `codex` and answer "
    "its hooks review (or type /hooks); `codex exec` skips untrusted hooks silently. See trust.",
    "gemini": "Gemini CLI 0.61 runs these (hooks are on unless hooksConfig.enabled is false); older "
    "versions switch them on with hooks.enabled or tools.enableHooks.",
}
NOTES_UNINSTALL = {
    "claude-code": "Claude Code reads settings.json at start: restart running sessions to drop the hooks.",
    "codex": "Codex reads hooks.json at start: restart running sessions. See trust.",
    "gemini": "Gemini CLI reads settings.json at start: restart running sessions to drop the hooks.",
}
# A habitus command this module writes (or wrote, before one `hook` per event): the program, then one
# of these tails.
_TAILS = {(*args, "--harness", harness) for harness in HARNESSES for args in (*TIMEOUTS, HOOK)}


# The installed command runs habitus through this guard: `sh -c GUARD habitus ARGS...`. $0 names the
# program: `habitus`, found on PATH when the hook runs (so a project's committed settings work on every
# teammate's machine and a moved install keeps working), or a path given at install time; $HABITUS_BIN,
# when set, wins over both. A path that is not an executable file falls back to the habitus on PATH;
# with none, a one-line note goes to stderr and the hook exits 0, printing nothing. HABITUS_NO_HOOKS set
# (a model call habitus started itself) exits 0 before any program starts. An exit of 126 or more (not
# executable, not found, killed) becomes 0 too: Gemini CLI reads exit 127 on BeforeAgent as "deny" and
# drops the prompt. The text never changes with the arguments, so a re-install writes the same command
# (Codex trusts a hook by a hash of its command).
GUARD = (  # short: Claude Code quotes the whole command to the model with a Stop blocker's reason
    '[ -z "$HABITUS_NO_HOOKS" ]||exit 0;p=${HABITUS_BIN:-$0};case $p in */*)[ -f "$p" ]&&[ -x "$p" ]||'
    'p=habitus;;esac;command -v "$p" >/dev/null||{ echo "habitus is not installed (pipx install habitus);'
    ' hook skipped" >&2;exit 0;};"$p" "$@";s=$?;[ $s -lt 126 ]||s=0;exit $s'
)
PROGRAM = "habitus"  # the portable default: whichever habitus is on PATH


def command_line(
    args: tuple[str, ...], harness: str, root: str | None = None, program: str | None = None
) -> str:
    """The hook's command: `sh -c GUARD PROGRAM ARGS... [--root DIR] --harness NAME`."""
    words = [program or PROGRAM, *args, *(["--root", root] if root is not None else []), "--harness", harness]
    return " ".join(shlex.quote(w) for w in ["sh", "-c", GUARD, *words])


def timeout_of(harness: str, event: str, args: tuple[str, ...]) -> int:
    """Seconds the harness gives the command: the longest of what `hook` runs for the event, within
    what the harness allows for that event."""
    parts = commands_for(harness, event) if args == HOOK else [args]
    longest = max((TIMEOUTS[part] for part in parts), default=TIMEOUTS[_CAPTURE])
    return min(longest, CLAMPED.get((harness, event), longest))


def entry(
    harness: str,
    args: tuple[str, ...],
    root: str | None = None,
    event: str | None = None,
    program: str | None = None,
) -> dict[str, Any]:
    """One hook handler object in the harness's format."""
    timeout = timeout_of(harness, event or "", args)
    item: dict[str, Any] = {"type": "command", "command": command_line(args, harness, root, program)}
    if harness == "gemini":
        return {"name": "habitus-" + "-".join(args), **item, "timeout": timeout * 1000}
    if (harness, event) in BACKGROUND:
        return {**item, "timeout": timeout, "async": True}
    return {**item, "timeout": timeout}


def snippet(harness: str, root: str | None = None, program: str | None = None) -> dict[str, Any]:
    """{"hooks": {event: [{"hooks": [handler]}]}}: one group per event with one handler, `habitus hook`,
    which runs every command PLAN gives that event in one process.

    Portable unless `program` is given: each command runs the habitus on PATH (or $HABITUS_BIN), so the
    object can go into a repository's settings or a plugin's hook file as it is. `root` (a state root)
    is written into every command when given.
    """
    return {
        "hooks": {
            event: [{"hooks": [entry(harness, HOOK, root, event, program)]}] for event in events(harness)
        }
    }


def is_ours(handler: Any) -> bool:
    """Whether a hook handler runs a habitus command this module writes (any path to the program, any
    --root), so that a re-install replaces it instead of adding a second one."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    try:
        words = shlex.split(handler["command"])
    except ValueError:
        return False
    if len(words) >= 4 and os.path.basename(words[0]) == "sh" and words[1] == "-c":
        words = words[3:]  # the guard (any version of it) around the habitus command
    if len(words) >= 3 and words[1:3] == ["-m", "habitus"]:
        words = words[2:]
    if not words or os.path.basename(words[0]) != "habitus":
        return False
    words = words[1:]
    if "--root" in words:
        at = words.index("--root")
        words = words[:at] + words[at + 2 :]
    return tuple(words) in _TAILS


def settings_path(harness: str, project: Path | None) -> Path:
    """The file the harness reads hooks from: the user's, or the repository's when `project` is given."""
    if harness == "claude-code":
        if project is not None:
            return project / ".claude" / "settings.json"
        base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
        return Path(base) / "settings.json"
    if harness == "codex":
        if project is not None:
            return project / ".codex" / "hooks.json"
        base = os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
        return Path(base) / "hooks.json"
    if project is not None:
        return project / ".gemini" / "settings.json"
    # Gemini CLI reads $GEMINI_CLI_HOME/.gemini/settings.json when GEMINI_CLI_HOME is set.
    folder = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    return Path(folder) / ".gemini" / "settings.json"


def codex_config(hooks_file: Path) -> Path:
    """The config.toml where Codex keeps the trust of hooks (the user's, also for a project's hooks)."""
    base = os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
    return Path(base) / "config.toml"


def codex_trust(hooks_file: Path, summary: dict[str, Any]) -> dict[str, Any]:
    """What Codex needs before it runs habitus's hooks, for the install result. Nothing is written.

    Codex keeps, in config.toml, `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]` with a
    `trusted_hash` of each hook's command (every argument, --root included) and timeout; a hook without
    a matching hash is skipped (silently by `codex exec`). So any install that changes a command untrusts
    it. Trust is the user's decision about what runs on their machine: habitus explains it and leaves it
    to them.
    """
    changed = len(summary.get("added", []))
    return {
        "required": True,
        "config": str(codex_config(hooks_file)),
        "recorded": _recorded(hooks_file),
        "untrusted": changed,
        "run": "codex",
        "how": "start `codex` in a terminal and answer the hooks review with “Trust all and continue” "
        "(or “Review hooks”), or type /hooks in a session and trust habitus's entries",
        "why": "Codex runs a hook only when config.toml holds a trusted hash of its exact command and "
        "timeout; `codex exec` skips untrusted hooks without a word. A new or changed command (another "
        "path, --root or timeout) needs trusting again. habitus does not write trust for you.",
    }


def codex_untrust(hooks_file: Path, summary: dict[str, Any]) -> dict[str, Any]:
    """What uninstall leaves in Codex's config.toml, for the uninstall result. Nothing is written."""
    return {
        "required": False,
        "config": str(codex_config(hooks_file)),
        "recorded": _recorded(hooks_file),
        "removed": len(summary.get("removed", [])),
        "how": "nothing to do: a trust entry whose hook is gone is never used; delete the "
        '[hooks.state."<hooks.json>:…"] tables of the removed hooks from config.toml to tidy it, or '
        "let `codex` /hooks review what is left",
        "why": "Codex keys trust by the hook's place in hooks.json (event, group, handler) and a hash of its "
        "command; habitus's group was the last of each event, so your own hooks keep their place and "
        "their trust unless you added groups after it. habitus does not edit config.toml.",
    }


def _recorded(hooks_file: Path) -> int:
    """How many hooks of this hooks.json Codex's config.toml records a trust state for."""
    try:
        import tomllib

        with open(codex_config(hooks_file), "rb") as handle:
            state = tomllib.load(handle).get("hooks", {}).get("state", {})
        prefix = f"{hooks_file.resolve()}:"
        return sum(1 for key in state if isinstance(key, str) and key.startswith(prefix))
    except (OSError, ValueError, AttributeError):
        return 0


def pi_extension() -> Path:
    """The Pi extension file: inside the installed package (the wheel carries it), else this checkout's
    integrations/pi/habitus.ts (an editable install runs from src/)."""
    here = Path(__file__).resolve().parent.parent  # the habitus package
    packaged = here / "integrations" / "pi" / "habitus.ts"
    if packaged.is_file():
        return packaged
    return here.parent.parent / "integrations" / "pi" / "habitus.ts"
