"""habitus hooks: print, install or uninstall the hook settings of Claude Code, Codex CLI and Gemini CLI."""

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
    'a timeout in milliseconds); for Pi {"extensions": [PATH]}, the extension shipped with habitus. install: {"v":1,"harness","path","changed","created","backup",'
    '"added":[{"event","command"}],"removed":[{"event","command"}],"kept","note"}; for Codex also '
    '"trust":{"required","config","recorded","untrusted","run","how","why"}: Codex runs only hooks the '
    "user trusted (a hash of each command and timeout in config.toml), so a changed command needs "
    "trusting again; habitus never writes that trust. uninstall: "
    '{"v":1,"harness","path","changed","backup","restored","deleted","removed":[{"event","command"}],'
    '"left":[{"event","command"}],"note"} ("restored": the install backup whose bytes were written back; '
    '"deleted": the file was removed; "left": entries that mention habitus but are not its own, kept); '
    'for Codex also "trust":{"required":false,"config","recorded","removed","how","why"}.',
    "files": "install and uninstall read and rewrite one file: Claude Code ~/.claude/settings.json "
    "($CLAUDE_CONFIG_DIR/settings.json when set), Codex ~/.codex/hooks.json ($CODEX_HOME/hooks.json when "
    "set), Gemini ~/.gemini/settings.json ($GEMINI_CLI_HOME/.gemini/settings.json when set); with --project the repository's .claude/settings.json, "
    ".codex/hooks.json or .gemini/settings.json. Before changing it, a copy is written beside it as "
    "NAME.habitus-YYYYMMDDTHHMMSSZ.bak; uninstall reads those backups to restore the file as it was. "
    "Nothing under the state root is touched.",
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
_PROGRAM = click.option(
    "--program",
    metavar="PATH",
    help="Run this habitus in every hook instead of the one on PATH (e.g. a checkout's .venv/bin/habitus; "
    "its file name must be habitus). Written as an absolute path.",
)


@click.group()
def cli() -> None:
    """Print, install or uninstall hook settings for Claude Code, Codex, Gemini.

    The hooks run capture after each turn, select and advise's delivery
    before each prompt, advise when the agent stops, the memory index at
    session start. Each is silent when it has nothing to say, and a failing
    hook exits 0 with no output.

    Each command runs the habitus found on PATH when the hook fires
    ($HABITUS_BIN, when set, wins), not a path of this machine: a project's
    committed settings work for every teammate, and a moved install keeps
    working. With none installed, the hook exits 0 with a one-line note on
    stderr. --program PATH writes a habitus of your choice instead (a
    checkout that is not on PATH); when it is gone, the one on PATH runs.

    \b
    Examples:
      habitus hooks print --harness claude-code
      habitus hooks install --harness claude-code
      habitus hooks install --harness codex --project
      habitus hooks uninstall --harness claude-code
    """


def _program(value: str | None) -> str | None:
    if value is None:
        return None
    path = os.path.abspath(os.path.expanduser(value))
    if os.path.basename(path) != "habitus":
        # habitus recognises its own entries by the program's name (to replace or remove them).
        raise HabitusError("usage", f"--program {value}: the program's file name must be habitus")
    return path


def _settings_path(harness: str, project: bool) -> Path:
    """The settings file; in a repository, only where a folder of the repository holds it: a symlinked
    `.claude` (`.codex`, `.gemini`) would make habitus write outside the repository."""
    from habitus.harness.plan import settings_path

    repo = _project(project)
    path = settings_path(harness, repo)
    if repo is not None:
        folder = path.parent
        while folder != repo and folder != folder.parent:
            if os.path.islink(folder):
                raise HabitusError(
                    "symlink_refused",
                    f"{folder}: is a symbolic link; habitus writes project settings only inside the repository",
                    hint="replace the link with a folder, or merge the output of `habitus hooks print` by hand",
                )
            folder = folder.parent
    return path


def _project(project: bool) -> Path | None:
    if not project:
        return None
    from habitus.memory.stores import find_repo

    repo = find_repo(Path.cwd())
    if repo is None:
        raise HabitusError("no_project", "--project: the current directory is not inside a git repository")
    return repo


def _root(value: str | None) -> str | None:
    value = value or os.environ.get("HABITUS_HOME") or None
    return os.path.abspath(os.path.expanduser(value)) if value else None


@cli.command("print")
@click.option(
    "--harness",
    type=click.Choice(["claude-code", "codex", "gemini", "pi"]),
    required=True,
    help="The harness whose settings to print.",
)
@_ROOT
@_PROGRAM
def print_command(harness: str, root: str | None, program: str | None) -> None:
    """Print the hook settings to merge into the harness's settings file.

    The output is the harness's own format, ready to paste: {"hooks": {...}}.
    `hooks install` merges exactly this. For Pi, whose hooks are an
    extension running inside Pi, it is the extension's place in Pi's
    settings.json: {"extensions": ["/…/habitus/integrations/pi/habitus.ts"]},
    the file that ships inside habitus (or pass it to `pi -e`).

    \b
    Examples:
      habitus hooks print --harness gemini
      pi -e "$(habitus hooks print --harness pi | jq -r '.extensions[0]')"
    """
    from habitus.harness.plan import pi_extension, snippet

    if harness == "pi":
        if root is not None or program is not None:
            raise HabitusError(
                "usage",
                "--root and --program do not apply to Pi: its extension reads $HABITUS_HOME and $HABITUS_BIN",
            )
        io.write_raw({"extensions": [str(pi_extension())]}, pretty=True)
        return
    io.write_raw(snippet(harness, _root(root), _program(program)), pretty=True)


_PROJECT = click.option(
    "--project",
    is_flag=True,
    help="Change the settings of the git repository around the current directory instead of yours.",
)


@cli.command("install")
@_HARNESS
@_PROJECT
@_ROOT
@_PROGRAM
@output_options
def install_command(harness: str, project: bool, root: str | None, program: str | None, pretty: bool) -> None:
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
    from habitus.harness.plan import NOTES, codex_trust, snippet
    from habitus.harness.settings import install

    path = _settings_path(harness, project)
    outcome: dict[str, Any] = install(path, snippet(harness, _root(root), _program(program)))
    if harness == "codex":
        outcome["trust"] = codex_trust(path, outcome)
    io.write_result({"harness": harness, **outcome, "note": NOTES[harness]}, pretty=pretty)


@cli.command("uninstall")
@_HARNESS
@_PROJECT
@output_options
def uninstall_command(harness: str, project: bool, pretty: bool) -> None:
    """Remove habitus's hook entries from the harness's settings file.

    Exactly the entries habitus writes go (any path to habitus, any --root,
    any timeout); every other key, event, group and hook stays. A group or
    event left empty goes too. When what is left is exactly a backup that
    `hooks install` made beside the file, that backup's bytes are written
    back, so install then uninstall leaves the file as it was, byte for
    byte; when nothing is left and no backup holds it (install created the
    file), the file is removed. The file is backed up beside itself first;
    without habitus's entries nothing is written (uninstalling twice is
    harmless). Symbolic links (symlink_refused) and files that are not one
    JSON object (settings_invalid) are refused, exit 3, unchanged. Entries
    that mention habitus but are not commands it writes are kept and listed
    in "left".

    \b
    Examples:
      habitus hooks uninstall --harness claude-code
      habitus hooks uninstall --harness codex --project
    """
    from habitus.harness.plan import NOTES_UNINSTALL, codex_untrust
    from habitus.harness.settings import uninstall

    path = _settings_path(harness, project)
    outcome: dict[str, Any] = uninstall(path)
    if harness == "codex":
        outcome["trust"] = codex_untrust(path, outcome)
    io.write_result({"harness": harness, **outcome, "note": NOTES_UNINSTALL[harness]}, pretty=pretty)
