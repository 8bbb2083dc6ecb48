"""Hook mode: a failure exits 0 with no output and is logged, bounded, to errors.jsonl."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from conftest import run
from habitus.errors import HabitusError
from habitus.state import errorlog
from habitus.state.root import StateRoot


def test_failure_in_hook_mode_is_silent_and_logged(state_root: Path) -> None:
    assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    out = run(["capture", "--harness", "claude-code"], {"hook_event_name": "Stop", "session_id": 7})
    assert out.exit == 0
    assert out.stdout == b"" and out.stderr == b""
    entries = [orjson.loads(line) for line in (state_root / "errors.jsonl").read_bytes().splitlines()]
    assert len(entries) == 1
    assert entries[0]["code"] == "bad_request"
    assert entries[0]["harness"] == "claude-code"
    assert entries[0]["command"] == "capture"


def test_bad_json_in_hook_mode_never_exits_2(state_root: Path) -> None:
    out = run(["capture", "--harness", "codex"], stdin=b"{not json")
    assert out.exit == 0
    assert out.stdout == b""


def test_usage_error_in_hook_mode_never_exits_2(state_root: Path) -> None:
    out = run(["config", "get", "--harness=pi", "--bogus"])
    assert out.exit == 0
    assert out.stdout == b""
    assert orjson.loads((state_root / "errors.jsonl").read_bytes().splitlines()[0])["code"] == "usage"


def test_same_failure_without_hook_mode_is_loud(state_root: Path) -> None:
    assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    out = run(["capture"], {"user": "hello", "assistant": "hi", "session": 7})
    assert out.exit == 2
    assert out.error["code"] == "bad_request"
    assert not (state_root / "errors.jsonl").exists()


def test_error_log_is_bounded(state_root: Path) -> None:
    root = StateRoot(state_root)
    error = HabitusError("io_error", "x" * 900)
    for _ in range(400):
        errorlog.append(root, error, command="capture", harness="generic")
    assert (state_root / "errors.jsonl").stat().st_size <= errorlog.MAX_BYTES + 2048
    assert (state_root / "errors.jsonl.1").exists()
    assert errorlog.count(root) >= 1


def test_a_logged_message_is_redacted(state_root: Path) -> None:
    """A message may quote what it refused; errors.jsonl stores it redacted, whatever the code."""
    secret = "sk-proj-" + "Zx9Lm2Qw" * 6
    errorlog.append(StateRoot(state_root), HabitusError("bad_request", f"request.token: {secret} is bad"),
                    command="capture", harness="generic")  # fmt: skip
    data = (state_root / "errors.jsonl").read_bytes()
    assert secret.encode() not in data and b"[REDACTED:openai_key]" in data


def test_a_hook_runs_blas_on_one_thread_unless_the_user_chose_a_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from habitus import hookmode

    for name in hookmode.ONE_THREAD:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    hookmode.one_thread()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1" and os.environ["MKL_NUM_THREADS"] == "1"
    assert os.environ["OMP_NUM_THREADS"] == "3"  # the user's own setting stands
