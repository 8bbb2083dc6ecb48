"""Commits a turn made, read from its shell calls, against habits about commit messages and branches.

Two kinds of habit are common and checkable without a model, in any language of the prose around them:

- a commit message convention named by its prefixes ("Do use a Conventional Commits prefix (feat:,
  fix:, chore:)") or by the convention's name: a commit whose subject starts with none of them breaks it;
- "do not commit on main" ("When you are about to commit and the current branch is main, Do create a
  feature branch first"): a commit made on the branch the condition names breaks it;
- a subject's length ("an imperative subject line of at most 72 characters"): a longer one breaks it.

A commit is read from the command (a transcript keeps what a call ran, not what it printed): its `-m`
message (a heredoc's first line, or its start where a transcript joined the lines) and a branch the same
turn switched to before it; a call that never ran (refused, rejected) or failed made no commit.
"""

from __future__ import annotations

import os
import re
import shlex
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable

    from habitus.advise.local import Unit

CONVENTIONAL = ("feat", "fix", "chore", "docs", "refactor", "test", "perf", "build", "ci", "style", "revert")

_GIT_COMMIT = re.compile(r"(?:^|[;&|]\s*|\s)git\s+(?:-\S+\s+)*commit\b")
_SWITCH = re.compile(
    r"\bgit\s+(?:checkout|switch)(?:\s+(?:-[bBcC]|--create|--force-create))?\s+(?!-)([\w./-]+)(?!\s+--)"
)
_PREFIXES = re.compile(r"(?<![\w/.-])([a-z]{2,10})(?:\([^)]*\))?:(?=[\s,;)]|$)")
_CONVENTION = re.compile(r"\bconventional[- ]commits?\b", re.IGNORECASE)
_COMMITTING = re.compile(r"\bcommit", re.IGNORECASE)
_BRANCH = re.compile(r"\b(main|master|trunk|develop)\b", re.IGNORECASE)
_LIMIT = re.compile(
    r"\b(?:at most|max(?:imum)?|under|up to|no (?:more|longer) than|<=?)\s*(\d{2,3})\s*(?:char|chars|characters)\b",
    re.I,
)
_FEATURE_BRANCH = re.compile(
    r"\b(?:feature|topic|new|own|separate|another)\s+branch\b|\bbranch\s+(?:first|off)\b", re.I
)


class Commit(NamedTuple):
    branch: str | None  # None when the turn does not show it
    subject: str  # the message's first line, or its start ("" when not shown)
    whole: bool  # whether `subject` is the whole first line
    unit: Unit


_HEREDOC = re.compile(r"^\$\(\s*cat\s+<<-?\s*['\"]?(\w+)['\"]?\s*(.*)$", re.S)


def _message(command: str, rest: str) -> tuple[str, bool]:
    """The subject of a `git commit` command's `-m` message and whether it is whole ("", False when the
    message comes from elsewhere). A message written by a heredoc (`-m "$(cat <<'EOF' ...`) shows its
    start only where a transcript joined its lines."""
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        words = []
    found: list[str] = []
    for i, word in enumerate(words):
        if word in ("-F", "--file", "-t", "--template", "-c", "-C", "--reuse-message") or word.startswith(
            "--file="
        ):
            return "", False
        short = word.startswith("-") and not word.startswith("--") and word.endswith("m")
        if i + 1 < len(words) and (word in ("-m", "--message") or short):
            found.append(words[i + 1])
        elif word.startswith("--message="):
            found.append(word.partition("=")[2])
    if not found:
        if "<<" in command and rest.strip():  # the heredoc's lines follow the command's
            return rest.strip().splitlines()[0].strip(), True
        return "", False
    message = found[0].strip()
    heredoc = _HEREDOC.match(message)
    if heredoc:
        text = heredoc.group(2).strip() or rest.strip()
        return (text.splitlines()[0].strip() if text else ""), False
    lines = message.splitlines()
    return (lines[0].strip() if lines else ""), True


def head_branch(cwd: str | None) -> str | None:
    """The branch checked out in the repository at or above `cwd` (its `.git/HEAD`, or a worktree's),
    or None: no repository, a detached HEAD, anything unreadable."""
    if not cwd:
        return None
    here = os.path.abspath(cwd)
    for folder in (here, *(str(p) for p in Path(here).parents)):
        dot_git = os.path.join(folder, ".git")
        if not os.path.lexists(dot_git):
            continue
        try:
            if os.path.isdir(dot_git):
                head = os.path.join(dot_git, "HEAD")
            else:  # a worktree or submodule: "gitdir: <path>"
                with open(dot_git, encoding="utf-8") as handle:
                    pointer = handle.read(4096).strip()
                if not pointer.startswith("gitdir:"):
                    return None
                head = os.path.join(folder, pointer[len("gitdir:") :].strip(), "HEAD")
            with open(head, encoding="utf-8") as handle:
                text = handle.read(1024).strip()
        except (OSError, UnicodeDecodeError):
            return None
        return text[len("ref: refs/heads/") :] if text.startswith("ref: refs/heads/") else None
    return None


def made(units: Iterable[Unit], head: str | None = None) -> list[Commit]:
    """The commits the new shell calls of a turn made, in order: what a call runs is its first line
    (a transcript keeps the command, not its output), on the branch the turn switched to before, else,
    with no switch after it, on `head` (the branch checked out when the turn ended: `head_branch`)."""
    from habitus.advise import commands
    from habitus.advise.local import cut_short

    out: list[Commit] = []
    branch: str | None = None  # what a switch of this turn checked out
    settled = 0  # the commits before out[settled] were made before a switch: on a branch not known
    for unit in units:
        if unit.role != "tool" or unit.status in ("refused", "rejected"):
            continue
        name, body = commands.split_call(unit.text)
        if commands.kind(name) != "shell":
            continue
        command, _, rest = body.partition("\n")
        parts = commands.segments(command)
        for k, segment in enumerate(parts):
            switched = _SWITCH.findall(segment)
            if switched:
                branch, settled = switched[-1], len(out)
            elif unit.new and unit.status != "error" and (at := _GIT_COMMIT.search(segment)) is not None:
                subject, whole = _message(segment[at.start() :], rest)
                if k == len(parts) - 1 and not rest and cut_short(unit.text):
                    subject, whole = "", False  # the message may run past where the call was cut
                out.append(Commit(branch, subject, whole, unit))
    return [c._replace(branch=head) if i >= settled and c.branch is None else c for i, c in enumerate(out)]


class CommitRule(NamedTuple):
    prefixes: tuple[str, ...] = ()  # a subject must start with one of them
    branches: tuple[str, ...] = ()  # no commit on these branches
    longest: int | None = None  # a subject's most characters

    def __bool__(self) -> bool:
        return bool(self.prefixes or self.branches or self.longest)


@lru_cache(maxsize=1024)
def rule_of(condition: str, behaviour: str, polarity: int) -> CommitRule:
    """What a habit asks of commits, if it is about commits: message prefixes named in a do-habit's
    behaviour (two or more, or the Conventional Commits convention by name), or a branch the condition
    names that a commit must not be made on (a habit that asks for another branch, or not to commit)."""
    text = f"{condition} {behaviour}"
    if not _COMMITTING.search(text):
        return CommitRule()
    prefixes: tuple[str, ...] = ()
    if polarity > 0:
        named = tuple(dict.fromkeys(m.group(1) for m in _PREFIXES.finditer(behaviour)))
        if _CONVENTION.search(behaviour):
            prefixes = tuple(dict.fromkeys((*named, *CONVENTIONAL)))
        elif len(named) >= 2:
            prefixes = named
    branches: tuple[str, ...] = ()
    if _COMMITTING.search(condition) and (
        _FEATURE_BRANCH.search(behaviour) or (polarity < 0 and _COMMITTING.search(behaviour))
    ):
        branches = tuple(dict.fromkeys(b.lower() for b in _BRANCH.findall(condition)))
    longest = None
    if polarity > 0 and re.search(
        r"\b(?:subject|summary|title|first line|message)", behaviour, re.IGNORECASE
    ):
        limit = _LIMIT.search(behaviour)
        longest = int(limit.group(1)) if limit else None
    return CommitRule(prefixes, branches, longest)


def broken_by(rule: CommitRule, commits: list[Commit]) -> Commit | None:
    """The first commit that breaks the rule, or None."""
    for commit in commits:
        if rule.branches and commit.branch and commit.branch.lower() in rule.branches:
            return commit
        if rule.longest and commit.whole and len(commit.subject) > rule.longest:
            return commit
        if rule.prefixes and commit.subject:
            # a message quoted once more inside a tool's own code (`{"cmd": "git commit -m \"fix: x\""}`)
            head = re.match(r"([a-z]+)(?:\([^)]*\))?!?:", commit.subject.lstrip("\\\"'` "))
            if head is None or head.group(1) not in rule.prefixes:
                return commit
    return None
