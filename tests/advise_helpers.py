"""Helpers for the advise tests: state set-up, habits, and Claude Code transcripts written line by line."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from conftest import REPO, run
from habitus.state import config
from habitus.state.root import StateRoot

CATALOG = REPO / "tests" / "fixtures" / "select" / "habits.jsonl"
CASES = REPO / "tests" / "fixtures" / "advise"

RELEASE = {
    "condition": "When calling a release ready",
    "behavior": "Do verify the packed artifact first: build it, install it in a clean environment and run it.",
}
CLAIM = "I bumped the version to 1.4.0 and all 312 tests pass. The release is ready to ship."
VERIFIED = "I built the wheel, installed it in a clean venv and ran it. The release is ready to ship."
# How a model reviewer might word one finding again and again (all >= 0.68 SimHash-similar to the first).
PARAPHRASES = [
    "You called the release ready without verifying the packed artifact; build the wheel, install it in a "
    "clean venv and run it first.",
    "The release was declared ready, but the packed artifact was never verified: build it, install it into a "
    "clean virtualenv and run it.",
    "Release called ready before the built artifact was verified. Install the packed wheel in a fresh "
    "environment and run it before shipping.",
    "You said the release is ready, yet nobody verified the packed artifact. Build, install in a clean env, run.",
    "Calling the release ready is premature: the packed artifact has not been verified (build it, install it "
    "cleanly, run it).",
    "The packed artifact was not verified before you called the release ready; please build and install it in "
    "a clean environment and run it.",
    "Before calling this release ready, verify the packed artifact: build the package, install it in a clean "
    "venv, run the CLI.",
    "Unverified artifact: the release is called ready but the packed wheel was never installed and run in a "
    "clean environment.",
    "You marked the release ready. The packed artifact still needs verifying: build it, install it in a clean "
    "environment, run it.",
]


def setting(root: Path, key: str, value: Any) -> None:
    config.set_value(StateRoot(root), key, value, wait=5)


def enable(root: Path, **settings: Any) -> None:
    setting(root, "advise.enabled", True)
    for key, value in settings.items():
        setting(root, f"advise.{key}", value)


def declare(condition: str, behavior: str, polarity: int = 1) -> str:
    """Declare (and so approve) a habit through the real command; returns its id."""
    done = run(["habit", "declare"], {"condition": condition, "behavior": behavior, "polarity": polarity})
    assert done.exit == 0, done.stderr
    assert done.result["outcome"] == "activated", done.result
    return str(done.result["habit"]["id"])


def catalog() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CATALOG.read_text().splitlines()]


def pair(assistant: str, user: str = "get it out", session: str = "s1", **extra: Any) -> dict[str, Any]:
    return {"user": user, "assistant": assistant, "session": session, **extra}


def review(request: dict[str, Any], *args: str) -> dict[str, Any]:
    done = run(["advise", *args], request)
    assert done.exit == 0, done.stderr
    return done.result


class Transcript:
    """A Claude Code session file, appended record by record as the agent would write it."""

    def __init__(self, path: Path, session: str = "session-1") -> None:
        self.path = path
        self.session = session
        self.parent: str | None = None
        path.touch()

    def _add(self, kind: str, message: dict[str, Any]) -> str:
        ident = str(uuid.uuid4())
        record = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "type": kind,
            "message": message,
            "uuid": ident,
            "sessionId": self.session,
            "timestamp": "2026-11-30T10:00:00.000Z",
        }
        with open(self.path, "a") as handle:
            handle.write(json.dumps(record) + "\n")
        self.parent = ident
        return ident

    def prompt(self, text: str) -> Transcript:
        self._add("user", {"role": "user", "content": text})
        return self

    def tool(self, name: str, arguments: dict[str, Any], *, error: bool = False) -> Transcript:
        call = f"toolu_{uuid.uuid4().hex[:12]}"
        block = {"type": "tool_use", "id": call, "name": name, "input": arguments}
        self._add("assistant", {"role": "assistant", "content": [block], "stop_reason": "tool_use"})
        result = {"type": "tool_result", "tool_use_id": call, "content": "done", "is_error": error}
        self._add("user", {"role": "user", "content": [result]})
        return self

    def say(self, text: str, *, stop: str = "end_turn") -> Transcript:
        self._add(
            "assistant",
            {"role": "assistant", "content": [{"type": "text", "text": text}], "stop_reason": stop},
        )
        return self


def hook(name: str, transcript: Transcript | None = None, **extra: Any) -> dict[str, Any]:
    """A Claude Code hook event for the transcript's session."""
    event: dict[str, Any] = {"hook_event_name": name, "session_id": "session-1", "cwd": str(REPO)}
    if transcript is not None:
        event["transcript_path"] = str(transcript.path)
        event["session_id"] = transcript.session
    event.update(extra)
    return event


def claude(event: dict[str, Any]) -> dict[str, Any] | None:
    """Run `habitus advise --harness claude-code` on an event; the parsed reply, or None for no output."""
    done = run(["advise", "--harness", "claude-code"], event)
    assert done.exit == 0 and not done.stderr, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None
