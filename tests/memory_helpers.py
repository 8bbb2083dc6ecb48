"""Helpers for the memory tests: run `habitus memory ...`, make repositories, read stores directly."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import Run, run


@pytest.fixture(autouse=True)
def outside_any_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Tests run from a folder that is not inside a git repository (the checkout itself is one)."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository (a bare `.git` folder is enough) that is the current directory."""
    folder = tmp_path / "repo"
    (folder / ".git").mkdir(parents=True)
    (folder / "src").mkdir()
    monkeypatch.chdir(folder / "src")
    return folder


def mem(*args: str, request: Any = None, stdin: bytes | None = None) -> Run:
    return run(["memory", *args], request, stdin=stdin)


def retain(content: str, *args: str, **fields: Any) -> dict[str, Any]:
    """Retain one memory (fields as a JSON request) and return the stored record."""
    out = mem("retain", *args, request={"content": content, **fields})
    assert out.exit == 0, out.stderr
    return out.result["memory"]


def ids(result: dict[str, Any]) -> list[str]:
    return [item["id"] for item in result["items"]]


def full_record(**fields: Any) -> dict[str, Any]:
    """A complete record as export writes it (defaults, a fixed id and time), with fields replaced."""
    return {
        "id": "0b6f1c7e-4a6b-4c1d-8e2f-0123456789ab",
        "content": "x",
        "kind": "note",
        "scope": "global",
        "namespace": "default",
        "tags": [],
        "importance": 0.5,
        "confidence": 1.0,
        "relevance": None,
        "created_at": "2030-01-01T00:00:00.000Z",
        "updated_at": "2030-01-01T00:00:00.000Z",
        "expires_at": None,
        "removed_at": None,
        "metadata": {},
        **fields,
    }


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    return conn


def seq_of(conn: sqlite3.Connection, memory_id: str) -> int:
    return int(conn.execute("SELECT seq FROM memories WHERE id = ?", (memory_id,)).fetchone()[0])


def claude_transcript(
    path: Path, turns: list[tuple[str, str]], *, session: str = "sess-1", append: bool = False
) -> Path:
    """Write (or append) Claude Code session lines: one user prompt and one assistant answer per turn,
    linked by uuid/parentUuid, one minute apart."""
    import orjson

    lines = path.read_bytes().splitlines() if append and path.exists() else []
    parent = orjson.loads(lines[-1])["uuid"] if lines else None
    count = len(lines)
    with open(path, "ab" if append else "wb") as out:
        for prompt, answer in turns:
            for role, body in (("user", prompt), ("assistant", answer)):
                uid = f"{session}-{count}"
                content: Any = body if role == "user" else [{"type": "text", "text": body}]
                message: dict[str, Any] = {"role": role, "content": content}
                if role == "assistant":
                    message["stop_reason"] = "end_turn"
                record = {
                    "type": role,
                    "uuid": uid,
                    "parentUuid": parent,
                    "sessionId": session,
                    "timestamp": f"2030-01-01T10:{count // 2 % 60:02d}:{count % 2 * 30:02d}.000Z",
                    "message": message,
                }
                out.write(orjson.dumps(record) + b"\n")
                parent, count = uid, count + 1
    return path


def set_fts_text(conn: sqlite3.Connection, seq: int, text: str) -> None:
    """Rewrite a record's FTS row as if text were its content (both columns), behind habitus's back."""
    from habitus.lang.terms import index_text, stem_text

    conn.execute(
        "UPDATE memories_fts SET body = ?, stems = ? WHERE rowid = ?",
        (index_text(text), stem_text(text), seq),
    )
