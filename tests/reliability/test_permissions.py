"""Every file habitus writes is 0600 and every folder 0700, even under umask 000, whatever command wrote it."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run
from memory_helpers import claude_transcript, outside_any_repo
from reliability_helpers import rich_root

__all__ = ["outside_any_repo"]  # autouse fixture: no project store in the checkout


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def modes(folder: Path) -> dict[str, str]:
    """Every path under folder (itself included) that is not private: path -> its mode."""
    wrong = {}
    for path in [folder, *folder.rglob("*")]:
        st = os.lstat(path)
        expected = 0o700 if stat.S_ISDIR(st.st_mode) else 0o600
        if stat.S_IMODE(st.st_mode) != expected or stat.S_ISLNK(st.st_mode):
            wrong[str(path)] = oct(stat.S_IMODE(st.st_mode))
    return wrong


def ok(args: list[str], request: object = None) -> None:
    out = run(args, request)
    assert out.exit == 0, (args, out.stderr)


@pytest.mark.slow
def test_every_command_writes_private_files_under_a_permissive_umask(
    state_root: Path, tmp_path: Path, permissive_umask: None
) -> None:
    rich_root(state_root)  # config, capture, habit declare, memory retain and observe
    transcript = claude_transcript(tmp_path / "s.jsonl", [("no, use tabs", "ok"), ("I said tabs!", "fixed")])
    ok(["capture", "--transcript", str(transcript)])
    ok(
        ["capture", "--harness", "codex"],
        {"hook_event_name": "UserPromptSubmit", "session_id": "c", "prompt": "x"},
    )
    ok(["capture", "--harness", "generic", "--wait", "0"], {"user": 5})  # a failure: errors.jsonl
    ok(["analyze"])
    ok(["habit", "recheck"])
    ok(["dedupe", "scan"])
    ok(["select"], {"prompt": "write some Go code"})
    ok(["advise"], {"user": "ship it", "assistant": "I pushed to main", "session": "a"})
    ok(["memory", "observe", "--transcript", str(transcript)])
    ok(["memory", "reflect", "--stream", "s1"])
    ok(["memory", "prune", "--stream", "s1", "--budget", "1"])
    ok(["memory", "index-vectors"])
    ok(["memory", "export", "--out", str(state_root / "exported.jsonl")])
    ok(["config", "set", "capture.retention_days", "14"])
    backup = tmp_path / "backup"
    ok(["backup", "--out", str(backup)])
    fresh = tmp_path / "fresh"
    ok(["restore", "--root", str(fresh), str(backup)])
    ok(["restore", str(backup)])  # over the live root: rollback area, new observation generation
    ok(["status"])
    assert stat.S_IMODE(os.lstat(state_root / "exported.jsonl").st_mode) == 0o600
    os.unlink(state_root / "exported.jsonl")  # not a state file (verify would report it)
    report = run(["verify"])
    assert report.exit == 0, report.stdout
    assert (state_root / "observations" / "archive").is_dir()
    assert (state_root / "errors.jsonl").is_file() and (state_root / "memory.sqlite").is_file()
    for folder in (state_root, backup, fresh):
        assert modes(folder) == {}, folder


def test_an_exported_file_is_private(state_root: Path, permissive_umask: None) -> None:
    ok(["memory", "retain", "a fact"])
    out = state_root.parent / "export.jsonl"
    ok(["memory", "export", "--out", str(out)])
    assert stat.S_IMODE(os.lstat(out).st_mode) == 0o600
