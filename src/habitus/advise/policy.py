"""The advise policy of one review: `[advise]` of the user config, narrowed by an optional project file.

The project file is `<repo>/.habitus/advise.toml` (`<repo>`: the nearest folder at or above the working
folder holding `.git`), top-level keys named like the user settings without `advise.`, plus an optional
`version = 1`. It can only narrow what the user chose: the file comes with the repository, written by
whoever committed it, and must never silently override the user's own settings (turn a review or a
model on, block, or raise a limit). `MERGE` is the whole table:

| key                       | a project file may                | otherwise                        |
|---------------------------|-----------------------------------|----------------------------------|
| enabled                   | set false                         | warned, ignored                  |
| model                     | set "" (no model reviewer)        | warned, ignored (never enables)  |
| block                     | set false                         | warned, ignored                  |
| max_slice_chars           | lower                             | warned, ignored                  |
| max_note_chars            | lower                             | warned, ignored                  |
| max_note_tokens           | lower                             | warned, ignored                  |
| pending_hours             | lower                             | warned, ignored                  |
| similarity_threshold_bp   | lower (fewer redeliveries)        | warned, ignored                  |
| min_interval_s            | raise (fewer reviews)             | warned, ignored                  |
| reraise_min_turns         | raise, or 0 (never re-raise)      | warned, ignored                  |
| protected_paths           | add (union)                       | (cannot remove)                  |
| protected_exceptions      | nothing                           | warned, ignored                  |
| instructions              | add lower-authority text          | (cannot replace the user's)      |

Warnings name the file and the field, never the value. Fail closed: a project file that cannot be read
as TOML, holds a value of the wrong type or out of bounds, or has another `version`, turns advise off
for that review (warning `project_config_invalid`): a broken file must not lift the narrowing it meant.
Unknown keys are warned and ignored.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from habitus.errors import HabitusError
from habitus.state.config import Config
from habitus.state.settings import BY_KEY

PROJECT_FILE = Path(".habitus") / "advise.toml"
MAX_PROJECT_BYTES = 64 * 1024
MAX_INSTRUCTION_CHARS = 12_000

# project key -> what a project file may do with it
MERGE: dict[str, str] = {
    "enabled": "disable",
    "model": "clear",
    "block": "disable",
    "max_slice_chars": "lower",
    "max_note_chars": "lower",
    "max_note_tokens": "lower",
    "pending_hours": "lower",
    "similarity_threshold_bp": "lower",
    "min_interval_s": "raise",
    "reraise_min_turns": "raise_or_zero",
    "protected_paths": "add",
    "protected_exceptions": "never",
    "instructions": "add",
}
_WHY = {
    "disable": "a project file can only turn this off",
    "clear": "a project file can only turn the model reviewer off, never choose or enable a model",
    "lower": "a project file can only lower this",
    "raise": "a project file can only raise this",
    "raise_or_zero": "a project file can only raise this or set it to 0",
    "never": "only the user config can set this",
}


@dataclass
class Policy:
    enabled: bool
    model: str
    block: bool
    max_slice_chars: int
    max_note_chars: int
    max_note_tokens: int
    pending_hours: int
    similarity_threshold_bp: int
    min_interval_s: int
    reraise_min_turns: int
    protected_paths: list[str]
    protected_exceptions: list[str]
    instructions: str
    project_paths: list[str] = field(default_factory=list)
    project_instructions: str = ""
    repo: Path | None = None
    project_file: str | None = None
    off_reason: str | None = None  # why enabled is false: "config", "project", "project_config_invalid"
    warnings: list[dict[str, Any]] = field(default_factory=list)


def from_config(config: Config) -> Policy:
    """The user's policy alone."""
    enabled = bool(config.get("advise.enabled"))
    return Policy(
        enabled=enabled,
        model=config.get("advise.model"),
        block=config.get("advise.block"),
        max_slice_chars=config.get("advise.max_slice_chars"),
        max_note_chars=config.get("advise.max_note_chars"),
        max_note_tokens=config.get("advise.max_note_tokens"),
        pending_hours=config.get("advise.pending_hours"),
        similarity_threshold_bp=config.get("advise.similarity_threshold_bp"),
        min_interval_s=config.get("advise.min_interval_s"),
        reraise_min_turns=config.get("advise.reraise_min_turns"),
        protected_paths=list(config.get("advise.protected_paths")),
        protected_exceptions=list(config.get("advise.protected_exceptions")),
        instructions=config.get("advise.instructions")[:MAX_INSTRUCTION_CHARS],
        off_reason=None if enabled else "config",
    )


def load(config: Config, cwd: str | os.PathLike[str] | None) -> Policy:
    """The policy for a review run from `cwd`: the user's, narrowed by the project file if there is one."""
    from habitus.memory.stores import find_repo

    policy = from_config(config)
    repo = find_repo(Path(cwd or os.getcwd()))
    policy.repo = repo
    if repo is None:
        return policy
    path = repo / PROJECT_FILE
    if not os.path.lexists(path):
        return policy
    policy.project_file = str(path)
    try:
        table = _read(path)
    except HabitusError:
        _invalid(policy, None)
        return policy
    narrow(policy, table)
    return policy


def _read(path: Path) -> dict[str, Any]:
    from habitus.state import files

    try:
        data = files.read_bytes(path, MAX_PROJECT_BYTES)  # refuses a symlink and an oversized file
        return tomllib.loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        raise HabitusError("config_invalid", f"{path}: not readable as TOML") from None


def _invalid(policy: Policy, key: str | None) -> None:
    policy.enabled = False
    policy.off_reason = "project_config_invalid"
    warning = {"code": "project_config_invalid", "file": policy.project_file}
    if key is not None:
        warning["field"] = key
    policy.warnings.append(warning)


def narrow(policy: Policy, table: dict[str, Any]) -> None:
    """Apply a project table to the user's policy, narrowing only (see the module docstring)."""
    if "version" in table and (type(table["version"]) is not int or table["version"] != 1):
        _invalid(policy, "version")
        return
    checked: dict[str, Any] = {}
    for key, value in table.items():
        if key == "version":
            continue
        if key not in MERGE:
            policy.warnings.append(
                {"code": "project_field_unknown", "file": policy.project_file, "field": key}
            )
            continue
        if BY_KEY[f"advise.{key}"].check(value) is not None:
            _invalid(policy, key)
            return
        checked[key] = value
    for key, value in checked.items():
        if not _apply(policy, key, value):
            policy.warnings.append(
                {
                    "code": "project_field_ignored",
                    "file": policy.project_file,
                    "field": key,
                    "why": _WHY[MERGE[key]],
                }
            )


def _apply(policy: Policy, key: str, value: Any) -> bool:
    """Apply one checked project value; False when it would widen the user's policy."""
    rule = MERGE[key]
    current = getattr(policy, key)
    if rule == "add":
        if key == "protected_paths":
            policy.project_paths = list(value)
        else:
            policy.project_instructions = value[:MAX_INSTRUCTION_CHARS]
        return True
    if rule == "never":
        return False
    if rule == "disable":
        if value is not False:
            return value == current
        if key == "enabled" and policy.enabled:
            policy.off_reason = "project"
        setattr(policy, key, False)
        return True
    if rule == "clear":
        if value != "":
            return value == current
        policy.model = ""
        return True
    if rule == "lower":
        ok = value <= current
    elif rule == "raise":
        ok = value >= current
    else:  # raise_or_zero
        ok = value == 0 or (current != 0 and value >= current)
    if ok:
        setattr(policy, key, value)
    return ok
