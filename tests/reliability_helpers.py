"""Helpers for tests/reliability: the command tree as data, a state root every command has something to
work on, and a logical fingerprint of a state root (to prove that a refused request changed nothing)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import urllib.parse
from pathlib import Path

import click
import orjson

from conftest import run

HARNESSES = ("claude-code", "codex", "gemini", "pi", "generic")

# Arguments a command cannot run without. They point at nothing that exists, so a command that does
# not read stdin fails the same way whatever stdin holds. A new command with a required parameter
# must be added here (test_every_required_parameter_has_a_filler fails until it is).
REQUIRED: dict[tuple[str, ...], list[str]] = {
    # `hooks` takes --harness to name the settings file to write, not to enter hook mode
    ("hook",): ["--harness", "claude-code"],
    ("hooks", "install"): ["--harness", "claude-code"],
    ("hooks", "print"): ["--harness", "claude-code"],
    ("hooks", "uninstall"): ["--harness", "claude-code"],
    ("advise", "mute"): ["0123456789ab"],
    ("advise", "unmute"): ["0123456789ab"],
    ("config", "preset"): ["claude", "--name", "Not A Name"],
    ("config", "unset"): ["capture.retention_days"],
    ("eval", "advise"): ["--cases", "/nonexistent/cases", "--habits", "/nonexistent/habits"],
    ("eval", "analyze"): ["--labels", "/nonexistent/labels.json"],
    ("eval", "select"): ["--cases", "/nonexistent/cases"],
    ("eval", "memory"): ["--memories", "/nonexistent/memories", "--queries", "/nonexistent/queries"],
    ("habit", "export"): ["--format", "agents-md"],
    ("habit", "edit"): ["999", "--condition", "When a test fails", "--behavior", "Read the error first"],
    ("habit", "example", "add"): ["999", "can you cut the 2.1 release"],
    ("habit", "example", "list"): ["999"],
    ("habit", "example", "remove"): ["999", "1"],
    ("memory", "repair"): ["--rebuild-fts"],
    ("model", "add"): ["/nonexistent/model", "--name", "other"],
    ("model", "remove"): ["other"],
    ("model", "use"): ["other"],
}


def commands() -> dict[tuple[str, ...], click.Command]:
    """Every runnable command in the click tree: leaves, and groups that run without a subcommand."""
    from habitus.cli import root

    ctx = click.Context(root)
    found: dict[tuple[str, ...], click.Command] = {}

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(command, click.Group):
            if path and command.invoke_without_command:
                found[path] = command
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                walk(sub, (*path, name))
        else:
            found[path] = command

    walk(root, ())
    return found


def required_params(command: click.Command) -> list[str]:
    return [p.name or "" for p in command.params if p.required]


def option_names(command: click.Command) -> set[str]:
    return {p.name or "" for p in command.params}


def invocations() -> list[list[str]]:
    """Every command once as is (with its required fillers), plus its --nl and hook-mode forms."""
    out: list[list[str]] = []
    for path, command in sorted(commands().items()):
        base = [*path, *REQUIRED.get(path, [])]
        out.append(base)
        names = option_names(command)
        if "nl" in names:
            out.append([*base, "--nl"])
        if "harness" in names and path[0] != "hooks":
            out.extend([*base, "--harness", h] for h in HARNESSES)
    return out


def rich_root(root: Path) -> None:
    """A state root with something in every store: config with capture and advise on, observations,
    active and candidate habits, memories, law and a mute. Built through the commands themselves."""

    def ok(args: list[str], request: object = None, stdin: bytes | None = None) -> None:
        out = run([*args, "--root", str(root)], request, stdin=stdin)
        assert out.exit == 0, (args, out.stderr)

    ok(["config", "set", "capture.enabled", "true"])
    ok(["config", "set", "advise.enabled", "true"])
    (root / "law.md").write_text("Never push to main.\n")
    os.chmod(root / "law.md", 0o600)
    pairs = [
        {"user": "no, use tabs not spaces", "assistant": "Switched to spaces.", "session": "s1"},
        {"user": "I told you: tabs, not spaces", "assistant": "Fixed.", "session": "s1"},
        {"user": "run the tests first", "assistant": "Done.", "session": "s2"},
    ]
    ok(["capture", "--nl"], stdin=b"".join(orjson.dumps(p) + b"\n" for p in pairs))
    ok(["habit", "declare"], {"condition": "When writing Go code", "behavior": "Run gofmt before committing"})
    ok(["habit", "declare"], {"condition": "When a test fails", "behavior": "Read the whole error message"})
    ok(["memory", "retain", "The database is PostgreSQL 16"])
    ok(["memory", "retain", "Use uv, never pip", "--kind", "decision", "--tags", "python"])
    ok(
        ["memory", "observe"],
        {"stream": "s1", "messages": [{"role": "user", "text": "I prefer tabs over spaces in Go files"}]},
    )
    (root / "mutes.json").write_bytes(
        orjson.dumps({"version": 1, "mutes": [{"id": "ab" * 32, "label": "a note", "at": ""}]})
    )
    os.chmod(root / "mutes.json", 0o600)


SQLITE_SIDECARS = ("-wal", "-shm", "-journal")


def _dump(path: Path) -> str:
    uri = "file:" + urllib.parse.quote(str(path)) + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True)
    try:
        return hashlib.sha256("\n".join(sorted(conn.iterdump())).encode()).hexdigest()
    finally:
        conn.close()


def fingerprint(root: Path, *, skip: tuple[str, ...] = ("locks",)) -> dict[str, object]:
    """Every path under root with its mode and content; a SQLite store by its logical content (so that a
    checkpoint, which moves committed pages from the -wal into the file, is no change). SQLite's own
    sidecars and the skipped top-level names are left out."""
    found: dict[str, object] = {}
    if not root.exists():
        return found
    for folder, dirs, names in os.walk(root):
        rel = Path(folder).relative_to(root)
        if rel.parts and rel.parts[0] in skip:
            dirs[:] = []
            continue
        for name in dirs + names:
            if (not rel.parts and name in skip) or name.endswith(SQLITE_SIDECARS):
                continue
            path = Path(folder) / name
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode):
                content: object = _dump(path) if name.endswith(".sqlite") else path.read_bytes()
            else:
                content = None
            found[str(path.relative_to(root))] = (stat.S_IMODE(st.st_mode), stat.S_IFMT(st.st_mode), content)
    return found
