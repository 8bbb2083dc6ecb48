"""habitus hooks: print or install the hook settings of Claude Code, Codex CLI and Gemini CLI."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from habitus import io
from habitus.errors import HabitusError
from habitus.options import output_options

MAN = {
    "stdin": "Not read.",
    "stdout": 'print: the settings object to merge, in the harness\'s own format (no "v"): {"hooks": {EVENT: '
    '[{"hooks": [{"type": "command", "command", "timeout"}]}]}} (Gemini entries also carry "name" and '
    'a timeout in milliseconds). install: {"v":1,"harness","path","changed","created","backup",'
    '"added":[{"event","command"}],"removed":[{"event","command"}],"kept","note"}; for Codex also '
    '"trust":{"required","config","recorded","untrusted","run","how","why"}: Codex runs only hooks the '
    "user trusted (a hash of each command and timeout in config.toml), so a changed command needs "
    "trusting again; habitus never writes that trust.",
    "files": "install reads and rewrites one file: Claude Code ~/.claude/settings.json "
    "($CLAUDE_CONFIG_DIR/settings.json when set), Codex ~/.codex/hooks.json ($CODEX_HOME/hooks.json when "
    "set), Gemini ~/.gemini/settings.json ($GEMINI_CLI_HOME/.gemini/settings.json when set); with --project the repository's .claude/settings.json, "
    ".codex/hooks.json or .gemini/settings.json. Before changing it, a copy is written beside it as "
    "NAME.habitus-YYYYMMDDTHHMMSSZ.bak. Nothing under the state root is touched.",
}

_HARNESS = click.option(
    "--harness",
    type=click.Choice(["claude-code", "codex", "gemini"]),
    required=True,
    help="The harness whose settings to print or change.",
)
_ROOT = click.option(
    "--root",
    metavar="DIR",
    help="State root the hooks should use, written into each command (default: $HABITUS_HOME when set; "
    "otherwise none, so the hooks use habitus's default root).",
)


@click.group()
def cli() -> None:
    """Print or install hook settings for Claude Code, Codex CLI and Gemini CLI.

    The hooks run the absolute path of this habitus: capture after each turn,
    select and advise's delivery before each prompt, advise when the agent
    stops, the memory index at session start. Each is silent when it has
    nothing to say, and a failing hook exits 0 with no output. A short sh
    guard runs the habitus on PATH when that path is gone, or exits 0 with
    a one-line note when there is none.

    \b
    Examples:
      habitus hooks print --harness claude-code
      habitus hooks install --harness claude-code
      habitus hooks install --harness codex --project
    """


def _program() -> list[str]:
    from habitus.schedule import executable

    return executable()


def _root(value: str | None) -> str | None:
    value = value or os.environ.get("HABITUS_HOME") or None
    return os.path.abspath(os.path.expanduser(value)) if value else None


@cli.command("print")
@_HARNESS
@_ROOT
def print_command(harness: str, root: str | None) -> None:
    """Print the hook settings to merge into the harness's settings file.

    The output is the harness's own format, ready to paste: {"hooks": {...}}.
    `hooks install` merges exactly this.

    \b
    Example:  habitus hooks print --harness gemini
    """
    from habitus.hooks import snippet

    io.write_raw(snippet(harness, _program(), _root(root)), pretty=True)


@cli.command("install")
@_HARNESS
@click.option(
    "--project",
    is_flag=True,
    help="Change the settings of the git repository around the current directory instead of yours.",
)
@_ROOT
@output_options
def install_command(harness: str, project: bool, root: str | None, pretty: bool) -> None:
    """Merge the hook settings into the harness's settings file.

    Other keys, events and hooks are left exactly as they are; habitus's own
    entries (any path to habitus) are replaced, so installing twice changes
    nothing. The file is backed up beside itself first and replaced
    atomically. A file that is not one JSON object of the expected shape
    (settings_invalid) or is a symbolic link (symlink_refused) is refused,
    exit 3, unchanged.

    Codex runs only hooks you have trusted: its config.toml keeps a hash of
    each command and timeout, so a new or changed entry is skipped (silently
    by `codex exec`) until you run `codex` and trust it in the hooks review
    (or /hooks). The result's "trust" says so; habitus never writes trust.

    \b
    Examples:
      habitus hooks install --harness claude-code
      habitus hooks install --harness claude-code --project   # .claude/settings.json of this repo
    """
    from habitus.hooks import NOTES, codex_trust, settings_path, snippet
    from habitus.hooks.settings import install

    repo = None
    if project:
        from habitus.memory.stores import find_repo

        repo = find_repo(Path.cwd())
        if repo is None:
            raise HabitusError(
                "no_project", "--project: the current directory is not inside a git repository"
            )
    path = settings_path(harness, repo)
    outcome: dict[str, Any] = install(path, snippet(harness, _program(), _root(root)))
    if harness == "codex":
        outcome["trust"] = codex_trust(path, outcome)
    io.write_result({"harness": harness, **outcome, "note": NOTES[harness]}, pretty=pretty)
