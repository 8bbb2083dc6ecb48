"""Shared test helpers: an isolated state root per test, and one way to run a command."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import settings

from habitus import hookmode
from habitus.cli import root as cli_root

# The suite runs its processes side by side on few cores, as hooks run beside an agent: BLAS on one
# thread in them and in every process they start (results are the same; tests/test_select_eval.py and
# tests/test_advise_judge.py took 79 s with OpenBLAS's default threads and 44 s with one, 2026-12-07).
hookmode.one_thread()

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("HABITUS_SHARED", REPO.parent / "shared"))
BIN = Path(sys.executable).parent  # the venv's bin/, where the console script lives

# In CI, property tests draw the same examples on every run (derandomize), so a CI result never depends
# on the luck of the draw; locally they keep exploring new examples.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason="../shared is absent (real fixtures live there)"
)


@pytest.fixture(autouse=True)
def state_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own HABITUS_HOME; nothing touches the real home."""
    home = tmp_path / "state"
    monkeypatch.setenv("HABITUS_HOME", str(home))
    monkeypatch.delenv("HABITUS_DEBUG", raising=False)
    # Hook processes work in process: a warm worker per temporary root would outlive its test
    # (tests/test_worker.py turns it on where it is the subject).
    monkeypatch.setenv("HABITUS_WORKER", "0")
    # `habitus hooks install` writes harness settings under these: never the real user's files
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    # Hook commands run the habitus on PATH: this checkout's console script, as after `pipx install`.
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}")
    monkeypatch.delenv("HABITUS_BIN", raising=False)
    return home


@dataclass
class Run:
    exit: int
    stdout: bytes
    stderr: bytes

    @property
    def result(self) -> dict[str, Any]:
        assert self.stdout, f"no stdout (exit {self.exit}); stderr: {self.stderr!r}"
        lines = self.stdout.splitlines()
        assert len(lines) == 1, f"expected one result line, got {len(lines)}"
        return orjson.loads(lines[0])

    @property
    def results(self) -> list[dict[str, Any]]:
        return [orjson.loads(line) for line in self.stdout.splitlines() if line.strip()]

    @property
    def error(self) -> dict[str, Any]:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, f"expected one error line on stderr, got {self.stderr!r}"
        body = orjson.loads(lines[0])["error"]
        assert body["exit"] == self.exit
        return body


def run(args: list[str], request: Any = None, *, stdin: bytes | None = None) -> Run:
    """Run a habitus command in process (CliRunner) with a JSON request or raw stdin bytes."""
    if stdin is None:
        stdin = b"" if request is None else orjson.dumps(request)
    outcome = CliRunner().invoke(cli_root, args, input=stdin, catch_exceptions=False)
    return Run(outcome.exit_code, outcome.stdout_bytes, outcome.stderr_bytes)


def run_process(
    args: list[str],
    request: Any = None,
    *,
    stdin: bytes | None = None,
    timeout: float = 60,
    env: dict[str, str] | None = None,
) -> Run:
    """Run the installed `habitus` console script as a real subprocess."""
    if stdin is None:
        stdin = b"" if request is None else orjson.dumps(request)
    done = subprocess.run(
        [str(BIN / "habitus"), *args],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)
