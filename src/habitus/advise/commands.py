"""What a tool call does, read from its name and input: runs a command, writes a file, or reads.

The law's destructive rules speak of what *ran*. A command written into a document ("Write:
docs/recovery.md ... git reset --hard"), echoed, searched for (`grep "rm -rf"`), put in a commit
message or in a heredoc that only creates a file is written about, not run, so `executed` keeps
only the parts of a shell command that execute. A quoted argument that a program runs (`bash -c
'...'`, `psql -c 'DROP TABLE ...'`, `sqlite3 db "DROP ..."`, `ssh host '...'`) stays.

Transcript readers give a tool call as "Name: input" with its whitespace collapsed (habitus.advise.slice).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from habitus.advise.local import Unit

# Tools that write or edit files (Claude Code, Codex, Gemini CLI, Pi, Cursor, MCP file servers).
WRITING_TOOLS = frozenset(
    [
        "write",
        "edit",
        "multiedit",
        "notebookedit",
        "apply_patch",
        "str_replace",
        "str_replace_editor",
        "str_replace_based_edit_tool",
        "write_file",
        "edit_file",
        "create_file",
        "replace",
        "insert",
        "patch",
    ]
)
# Tools that only read or search.
READING_TOOLS = frozenset(
    [
        "read",
        "read_file",
        "grep",
        "glob",
        "ls",
        "list_directory",
        "search",
        "websearch",
        "webfetch",
        "web_fetch",
        "google_web_search",
        "search_file_content",
        "read_many_files",
        "view",
        "todowrite",
        "task",
    ]
)
_SHELL_TOOL = re.compile(r"bash|shell|exec|command|terminal|run|sh$|cmd|powershell")
# Programs whose arguments are only text to show, search or store: what follows them never runs.
TEXT_PROGRAMS = frozenset(
    [
        "echo",
        "printf",
        "cat",
        "tee",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "ack",
        "less",
        "more",
        "head",
        "tail",
        "man",
        "tldr",
        "help",
        "history",
        "type",
        "which",
        "whatis",
        "apropos",
        "info",
        "wc",
        "sort",
        "uniq",
        "diff",
    ]
)
# Sub-commands whose quoted arguments are messages (`git commit -m "..."`, `gh pr create --body "..."`).
MESSAGE_PROGRAMS = frozenset(["git", "gh", "glab", "hg", "svn", "jj"])
# Programs that run their quoted argument (`bash -c '...'`, `ssh host 'cmd'`, `eval "..."`).
RUNNERS = frozenset(
    [
        "bash",
        "sh",
        "zsh",
        "dash",
        "fish",
        "ksh",
        "eval",
        "ssh",
        "xargs",
        "sudo",
        "su",
        "exec",
        "watch",
        "timeout",
        "nohup",
    ]
)
DOC_SUFFIXES = (".md", ".markdown", ".rst", ".txt", ".adoc", ".org", ".html", ".tex")

_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1(.*?)(?:\b\2\b|$)", re.S)
_PREFIX = re.compile(r"^(?:\s*(?:\(|\{|!|time\b|nice\b|env\b|command\b|builtin\b|\w+=\S*))*\s*")


def kind(name: str | None) -> str:
    """ "write", "read", "shell" or "other" for a tool's name (unknown tools are "other")."""
    lowered = (name or "").lower().rsplit("__", 1)[-1]  # mcp__server__tool -> tool
    if lowered in WRITING_TOOLS:
        return "write"
    if lowered in READING_TOOLS:
        return "read"
    if _SHELL_TOOL.search(lowered):
        return "shell"
    return "other"


def split_call(text: str) -> tuple[str, str]:
    """A unit's "Name: input" as (name, input)."""
    name, _, rest = text.partition(": ")
    return (name, rest) if rest or text.endswith(": ") else ("", text)


_PATCH_FILE = re.compile(r"\*\*\* (?:add|update|delete) file: (\S+)", re.IGNORECASE)
_PATCH = re.compile(r"\s*\*\*\* begin patch\b", re.IGNORECASE)


def written_paths(body: str) -> list[str]:
    """Every path a file-writing call writes: the one it names first ("docs/RELEASING.md - [ ] ..."),
    or each file of a Codex patch ("*** Begin Patch *** Update File: package.json @@ ...")."""
    if _PATCH.match(body):
        return _PATCH_FILE.findall(body)
    return [body.split(maxsplit=1)[0]] if body.split() else []


def written_path(body: str) -> str:
    """The first path a file-writing call writes (`written_paths`), or ""."""
    paths = written_paths(body)
    return paths[0] if paths else ""


def is_patch(body: str) -> bool:
    """A Codex patch whose lines a transcript joined: what it adds and what it removes cannot be told
    apart."""
    return _PATCH.match(body) is not None and "\n" not in body.strip()


def is_doc(path: str) -> bool:
    return path.lower().rstrip("`'\",:").endswith(DOC_SUFFIXES)


_PIECE = re.compile(r"'[^']*'?|\"(?:[^\"\\]|\\.)*\"?|&&|\|\||[;|\n]|[^'\"&|;\n]+|&")


def segments(command: str) -> list[str]:
    """The command split at unquoted `&&`, `||`, `;`, `|` and newlines."""
    out: list[str] = []
    current: list[str] = []
    for piece in _PIECE.findall(command):
        if piece in ("&&", "||", ";", "|", "\n"):
            out.append("".join(current))
            current = []
        else:
            current.append(piece)
    out.append("".join(current))
    return [s.strip() for s in out if s.strip()]


def _program(segment: str) -> tuple[str, str]:
    rest = _PREFIX.sub("", segment, count=1)
    first = rest.split(maxsplit=1)[0] if rest.split() else ""
    return first.rsplit("/", 1)[-1], rest


def executed(command: str) -> str:
    """The parts of a shell command that run (see the module doc), joined by " ; "."""

    def heredoc(match: re.Match[str]) -> str:
        before = segments(command[: match.start()])
        program, _ = _program(before[-1] if before else "")
        return match.group(0) if program in RUNNERS or program in _INTERPRETERS else " "

    command = _HEREDOC.sub(heredoc, command)
    kept: list[str] = []
    for segment in segments(command):
        program, rest = _program(segment)
        if not program or program.startswith("#") or program in TEXT_PROGRAMS:
            continue
        if program in MESSAGE_PROGRAMS:
            rest = _QUOTED.sub(" ", rest)
        kept.append(rest)
    return " ; ".join(kept)


_INTERPRETERS = frozenset(
    ["psql", "mysql", "sqlite3", "mongo", "mongosh", "redis-cli", "python", "python3", "node", "ruby", "perl"]
)


@lru_cache(maxsize=4096)
def running_text(unit_text: str) -> str:
    """What a tool-call unit runs: its executed command for a shell tool, its input for other tools
    that act (an MCP database tool's query), nothing for tools that write files or only read."""
    name, body = split_call(unit_text)
    found = kind(name)
    if found == "shell":
        return executed(body)
    return "" if found in ("write", "read") else body


@lru_cache(maxsize=4096)
def editing_text(unit_text: str) -> str:
    """What a tool-call unit puts into code: a file-writing call's input unless it writes a document,
    plus what a shell call runs (`sed -i` into a test file)."""
    name, body = split_call(unit_text)
    found = kind(name)
    if found == "write":
        return "" if is_doc(written_path(body)) else body
    return running_text(unit_text)


def new_calls(units: Iterable[Unit], of_kind: str) -> Iterator[tuple[Unit, str, str]]:
    """The new tool calls of a kind ("write", "shell") that ran, as (unit, tool name, input): a call the
    user rejected or the harness refused never did (a failed one still did)."""
    for unit in units:
        if unit.role != "tool" or not unit.new or unit.status in ("refused", "rejected"):
            continue
        name, body = split_call(unit.text)
        if kind(name) == of_kind:
            yield unit, name, body


def written_lines(units: Iterable[Unit]) -> Iterator[tuple[Unit, str]]:
    """Each line the new file-writing calls put into code (`editing_text`: not a document), after the
    file's path, without a diff's removed lines and with its added lines' marker dropped (one line where
    a transcript joined the file's lines). A patch whose lines were joined is skipped: its added and
    removed lines cannot be told apart (`is_patch`)."""
    for unit, _, body in new_calls(units, "write"):
        if is_patch(body):
            continue
        text = editing_text(unit.text)
        path = written_path(text)
        for line in text[text.find(path) + len(path) :].splitlines():
            if line.startswith("-") and not line.startswith("--"):
                continue  # a diff's removed line
            yield unit, line[1:] if line.startswith("+") and not line.startswith("++") else line
