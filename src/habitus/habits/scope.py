"""Where a habit applies: everywhere (a personal habit) or inside named repositories (a project habit).

A project habit comes from a repository's HABITS.md (`habit import --project`). Its scope is the
list of repository top folders it was adopted in, each the real path (symbolic links resolved) of
the nearest folder at or above the working directory that holds `.git` (a folder, or a worktree's
file). A path is cheap to find in a hook (a walk up, no git process) and names exactly the checkout
the person approved it in; another clone, or the same one after a move, is another place: importing
its HABITS.md there adds that folder to the habit's scope (the person's decision on the wording holds).

Stored in `habits.projects`: NULL for a personal habit, else canonical JSON, a sorted list of paths.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from habitus import codec

MAX_PROJECTS = 50  # repositories one habit may be scoped to


def repo_of(cwd: str | os.PathLike[str] | None) -> str | None:
    """The real path of the repository around `cwd` (the process's working directory when None),
    or None outside any repository or when the folder cannot be resolved."""
    try:
        here = os.path.realpath(cwd if cwd is not None else os.getcwd())
    except (OSError, ValueError):
        return None
    folder = Path(here)
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return str(candidate)
    return None


def decode(stored: str | None) -> list[str] | None:
    """The stored column as a list of paths; None for a personal habit."""
    if stored is None:
        return None
    found = codec.loads(stored)
    return [p for p in found if isinstance(p, str)] if isinstance(found, list) else []


def encode(projects: list[str]) -> str:
    return codec.canonical(sorted(set(projects))).decode()


def public(habit: dict[str, Any]) -> dict[str, Any]:
    """The `scope` and `projects` fields of a habit as commands show it."""
    projects = decode(habit.get("projects"))
    return {"scope": "personal" if projects is None else "project", "projects": projects}


def applies(habit: dict[str, Any], repo: str | None) -> bool:
    projects = decode(habit.get("projects"))
    return projects is None or (repo is not None and repo in projects)
