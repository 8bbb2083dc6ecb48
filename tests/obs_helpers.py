"""Helpers for the observation-log and capture tests (not fixtures: plain functions)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from conftest import BIN, REPO
from habitus.state import observations as obs
from habitus.state.root import StateRoot

FIXTURES = REPO / "tests" / "fixtures" / "transcripts"


def entry(n: int, *, text: str = "", tag: str = "t") -> obs.NewObservation:
    return obs.NewObservation(
        payload={"kind": "pair", "user": f"prompt {n}{text}", "assistant": f"answer {n}"},
        origin={"harness": "generic", "source": "test"},
        fingerprint=obs.fingerprint(tag, n),
    )


def lines(root: Path, generation: int = 1, *, archived: bool = False) -> list[dict[str, Any]]:
    folder = root / "observations" / ("archive" if archived else "")
    path = folder / f"obs-{generation:06d}.jsonl"
    return [orjson.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def payloads(root: Path) -> list[dict[str, Any]]:
    return [r["payload"] for r in lines(root)]


def enable(root: Path) -> None:
    """Turn capture on for this state root (the real config command, in process)."""
    from habitus.state import config

    config.set_value(StateRoot(root), "capture.enabled", True, wait=5)


def spawn_capture(
    args: list[str], stdin: bytes, *, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start the real console script without waiting for it (stdin comes from a temporary file, so
    neither side can block on a full pipe)."""
    import tempfile

    with tempfile.TemporaryFile() as source:
        source.write(stdin)
        source.seek(0)
        return subprocess.Popen(
            [str(BIN / "habitus"), *args],
            stdin=source,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )


def python() -> str:
    return sys.executable
