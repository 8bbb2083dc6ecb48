"""Real processes: the checkout launcher, the installed entry point, hook mode, and a real pipe."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import orjson

from conftest import BIN, REPO, run_process
from habitus import __version__


def test_bin_habitus_version() -> None:
    done = subprocess.run(
        [str(REPO / "bin" / "habitus"), "--version"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"habitus {__version__}"


def test_hook_mode_swallows_a_failure_in_a_real_process(state_root: Path) -> None:
    assert run_process(["config", "set", "capture.enabled", "true"]).exit == 0
    out = run_process(
        ["capture", "--harness", "claude-code"], {"hook_event_name": "Stop", "session_id": ["s"]}
    )
    assert out.exit == 0
    assert out.stdout == b"" and out.stderr == b""
    entry = orjson.loads((state_root / "errors.jsonl").read_bytes().splitlines()[-1])
    assert entry["code"] == "bad_request"


def test_error_object_from_a_real_process(state_root: Path) -> None:
    out = run_process(["config", "set"], stdin=b"\xff\xfe")
    assert out.exit == 2
    assert out.error["code"] == "bad_utf8"
    assert out.stdout == b""


def test_a_real_pipe_between_two_commands(state_root: Path) -> None:
    assert run_process(["config", "set", "capture.retention_days", "30"]).exit == 0
    # `get` emits {"key", "value", ...}; `set` reads {"key", "value"} and ignores the rest.
    pipeline = f"{BIN / 'habitus'} config get capture.retention_days | {BIN / 'habitus'} config set"
    done = subprocess.run(["sh", "-c", pipeline], capture_output=True, timeout=60, env=os.environ.copy())
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout) == {
        "v": 1,
        "key": "capture.retention_days",
        "value": 30,
        "path": str(state_root / "config.toml"),
    }


def test_closed_stdout_is_quiet(state_root: Path) -> None:
    pipeline = f"{BIN / 'habitus'} config describe --pretty | head -c 10 >/dev/null"
    done = subprocess.run(["sh", "-c", pipeline], capture_output=True, timeout=60)
    assert b"Traceback" not in done.stderr
