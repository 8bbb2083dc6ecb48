"""Helpers for the analyze tests: conversations captured through the real capture path, ledger reads."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import run
from habitus.capture import capture_turns
from habitus.embed import registry
from habitus.harness.transcripts import Turn
from habitus.state import config
from habitus.state.root import StateRoot

# Three corrections of the same behaviour over two days (reviewable), one more once (collecting),
# a fact, and calm work around them.
FRICTION = [
    ("add a --verbose flag to the cli", "Added --verbose.", "2026-05-04T09:00:00Z"),
    ("no, don't print from library code. return the message to the caller", "Done.", "2026-05-04T09:05:00Z"),
    ("fyi this repo releases from the main branch only", "Noted.", "2026-05-04T09:20:00Z"),
    ("add a config loader", "Added load_config(), it prints a warning on bad keys.", "2026-05-04T10:00:00Z"),
    ("again printing from library code?! return errors to the caller", "Fixed.", "2026-05-04T10:05:00Z"),
    ("support yaml too", "Added yaml support.", "2026-05-05T11:00:00Z"),
    (
        "I told you: never print from library code, give the error back to the caller",
        "Ok.",
        "2026-05-05T11:04:00Z",
    ),
    ("no emoji in commit messages please", "Reworded.", "2026-05-05T12:00:00Z"),
]

# What a scripted model proposes from FRICTION: the habit its three corrections support.
LIBRARY = {
    "condition": "When handling errors in library code",
    "behavior": "Do not print them; return them to the caller.",
    "polarity": -1,
    "confidence_bp": 8800,
    "source_refs": [2, 5, 7],
    "evidence_summary": "Corrected three times over two days.",
}


def turns(rows: list[tuple[str, str, str]], session: str = "s1") -> list[Turn]:
    return [Turn(user=u, assistant=a, user_at=at, session_id=session) for u, a, at in rows]


def capture(root: Path | StateRoot, rows: list[tuple[str, str, str]], session: str = "s1") -> None:
    """Append the pairs through the production capture path (redaction, bounds, hash chain)."""
    state = root if isinstance(root, StateRoot) else StateRoot(Path(root))
    state.ensure()
    capture_turns(
        state, turns(rows, session), harness="generic", source="pair", event=None, wait=5, full_dedupe=False
    )


def analyzed(root: Path, rows: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """Turn capture on (the real config command), capture the pairs, run `habitus analyze`: its proposals."""
    assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    capture(root, rows)
    proposals: list[dict[str, Any]] = run(["analyze"]).result["proposals"]
    return proposals


needs_e5 = pytest.mark.skipif(not registry.e5_available(), reason="the packaged E5 model is not installed")


def calm(n: int, day: str = "2026-05-06", start: int = 0) -> list[tuple[str, str, str]]:
    """n friction-free pairs on one day, one a minute."""
    return [
        (
            f"add the field number {start + i} to the report",
            "Added it.",
            f"{day}T{8 + (start + i) // 60:02d}:{(start + i) % 60:02d}:00Z",
        )
        for i in range(n)
    ]


def setting(root: Path, key: str, value: Any) -> None:
    config.set_value(StateRoot(root), key, value, wait=5)


def ledger(root: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(root / "ledger.sqlite")
    conn.row_factory = sqlite3.Row
    return conn


def query(root: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = ledger(root)
    try:
        return [tuple(r) for r in conn.execute(sql, args)]
    finally:
        conn.close()


def watermark(root: Path, generation: int = 1) -> int:
    found = query(root, "SELECT seq FROM analyze_watermarks WHERE generation = ?", generation)
    return found[0][0] if found else 0


def habit_state(root: Path) -> list[tuple[Any, ...]]:
    """Habits and their evidence, without timestamps or ids: comparable between two state roots."""
    habits = query(
        root, "SELECT id, condition, behavior, polarity, status FROM habits ORDER BY condition, behavior"
    )
    out = []
    for habit_id, condition, behavior, polarity, status in habits:
        refs = query(root, "SELECT ref, day FROM habit_evidence WHERE habit_id = ? ORDER BY ref", habit_id)
        # "obs-<gen>:<seq>" only: the record checksum differs between two captures of the same text
        out.append((condition, behavior, polarity, status, tuple((r.rsplit(":", 1)[0], d) for r, d in refs)))
    return out


def snapshot(root: Path) -> dict[str, str]:
    """Every file under root with the SHA-256 of its bytes (and folders, marked as such)."""
    out = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        out[key] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return out
