"""Helpers for the select tests: habits declared through the real habits API, prompts, hook events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import Run, run
from habit_helpers import declared

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "select"
COMMIT = ("When writing a commit message", "Do write an imperative subject line of at most 72 characters.")
DELETE = ("When deleting files or directories", "Do ask me first unless you created them in this session.")
DOCKER = ("When writing a Dockerfile", "Do pin the base image to an exact version tag, never latest.")
BRANCH = ("When creating a git branch", "Do name it type/short-description, like fix/login-timeout.")


def declare_all(*habits: tuple[str, str]) -> list[dict[str, Any]]:
    out = []
    for condition, behavior in habits:
        habit = declared(condition, behavior)
        assert habit["status"] == "active", habit
        out.append(habit)
    return out


def select(prompt: str, context: list[str] | None = None, *extra: str) -> Run:
    request: dict[str, Any] = {"prompt": prompt}
    if context is not None:
        request["context"] = context
    return run(["select", *extra], request)


def hook_event(harness: str, prompt: str) -> dict[str, Any]:
    """A prompt event as each harness sends it."""
    if harness in ("claude-code", "codex"):
        return {
            "hook_event_name": "UserPromptSubmit",
            "session_id": "s-1",
            "cwd": "/tmp",
            "transcript_path": None,
            "prompt": prompt,
        }
    if harness == "gemini":
        return {"hook_event_name": "BeforeAgent", "session_id": "s-1", "cwd": "/tmp", "prompt": prompt}
    if harness == "pi":
        return {
            "hook_event_name": "before_agent_start",
            "session_id": "s-1",
            "prompt": prompt,
            "messages": [],
        }
    return {"user": prompt}


def injected(harness: str, reply: dict[str, Any]) -> str:
    """The injected context text out of a harness reply."""
    if harness in ("claude-code", "codex", "gemini"):
        assert set(reply) == {"hookSpecificOutput"}
        return str(reply["hookSpecificOutput"]["additionalContext"])
    assert set(reply) == {"additionalContext"}
    return str(reply["additionalContext"])
