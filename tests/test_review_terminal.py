"""`habitus review` in a real terminal: the installed command under tmux, keys sent with send-keys,
the screen read with capture-pane; then the ledger is compared with the one `habit approve --checksum`
leaves on a copy of the same root. tmux comes from the distribution's package (tests/system_packages.py:
installed when absent and possible, otherwise these tests skip)."""

from __future__ import annotations

import os
import shlex
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from conftest import run
from habitus.state import statelock
from review_helpers import build, copy, dump, ids, normalised
from system_packages import program

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="session")
def tmux() -> str:
    return program(("tmux",), "tmux")


class Terminal:
    """One tmux server of our own (its own socket), so no other tmux session is touched."""

    def __init__(self, program: str, socket: str) -> None:
        self.program = program
        self.socket = socket

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            [self.program, "-L", self.socket, *args], capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def start(self, command: str) -> None:
        self.tmux("new-session", "-d", "-s", "t", "-x", "140", "-y", "40", command)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-t", "t")  # -J: a wrapped line reads as one

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; screen:\n{self.screen()}")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "t", *keys)


@pytest.fixture
def terminal(tmux: str) -> Iterator[Terminal]:
    term = Terminal(tmux, f"habitus-test-{os.getpid()}-{time.monotonic_ns()}")
    try:
        yield term
    finally:
        subprocess.run([tmux, "-L", term.socket, "kill-server"], capture_output=True, timeout=30)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("review-terminal") / "base"
    build(root)
    return root


def review_command(root: Path, done: Path, *extra: str) -> str:
    argv = [sys.executable, "-m", "habitus", "review", "--root", str(root), *extra]
    env = "env -u HABITUS_HOME HABITUS_WORKER=0 TERM=xterm-256color"
    # stdout and stderr stay on the terminal; the exit status goes to a file; the pane stays open.
    return f"{env} {shlex.join(argv)}; echo $? > {shlex.quote(str(done))}; sleep 120"


def exit_status(done: Path, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done.exists() and done.read_text().strip():
            return int(done.read_text())
        time.sleep(0.2)
    raise AssertionError("the review command did not end")


def test_approve_in_a_real_terminal_leaves_the_ledger_habit_approve_leaves(
    base: Path, tmp_path: Path, terminal: Terminal
) -> None:
    by_review, by_commands = copy(base, tmp_path / "by-review"), copy(base, tmp_path / "by-commands")
    from habitus.habits import review
    from habitus.habits.law import load_law
    from habitus.habits.store import Ledger
    from habitus.state.root import StateRoot

    state = StateRoot.at(str(by_commands))
    with Ledger.open(state, wait=2) as ledger:
        queue = review.load(ledger, load_law(state))
    index = next(
        i
        for i, item in enumerate(queue)
        if item.kind == "habit"
        and item.body["origin"] == "analyzed"
        and "whole file" in item.body["behavior"]
    )
    target = queue[index]

    done = tmp_path / "exit"
    terminal.start(review_command(by_review, done))
    terminal.wait_for("habitus review")
    terminal.wait_for("Quit")  # the footer of keys
    for _ in range(index):
        terminal.keys("Down")
    shown = terminal.wait_for(target.id)
    assert "Evidence (redacted)" in shown and "Stage: reviewable" in shown
    terminal.keys("a")
    terminal.wait_for("approved")
    terminal.keys("q")
    assert exit_status(done) == 0
    assert f"approve {target.id}: activated" in terminal.wait_for("decision(s) applied")

    out = run(["habit", "approve", target.id, "--checksum", target.checksum, "--root", str(by_commands)])
    assert out.exit == 0 and out.result["outcome"] == "activated"
    known = ids(base)
    assert normalised(by_review, known) == normalised(by_commands, known)


def test_quitting_at_once_in_a_real_terminal_changes_nothing(
    base: Path, tmp_path: Path, terminal: Terminal
) -> None:
    root = copy(base, tmp_path / "root")
    before = dump(root, exact=True)
    done = tmp_path / "exit"
    terminal.start(review_command(root, done))
    terminal.wait_for("Quit")
    terminal.keys("q")
    assert exit_status(done) == 0
    assert "0 decision(s) applied" in terminal.wait_for("decision(s) applied")
    assert dump(root, exact=True) == before


@contextmanager
def ledger_busy(root: Path) -> Iterator[None]:
    """Another writer holds the ledger."""
    holder = sqlite3.connect(root / "ledger.sqlite", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@contextmanager
def restoring(root: Path) -> Iterator[None]:
    """The state lock held exclusively, through the function restore itself uses while it swaps files."""
    with statelock.exclusive(root, wait=5):
        yield


@pytest.mark.parametrize("hold", [ledger_busy, restoring])
def test_busy_state_is_refused_before_the_screen_opens(
    base: Path, tmp_path: Path, terminal: Terminal, hold: Callable[[Path], AbstractContextManager[None]]
) -> None:
    root = copy(base, tmp_path / "root")
    before = dump(root, exact=True)
    done = tmp_path / "exit"
    with hold(root):
        terminal.start(review_command(root, done, "--wait", "0.3"))
        assert exit_status(done) == 75
        shown = terminal.screen()
    assert "state_locked" in shown and "habitus review —" not in shown
    assert dump(root, exact=True) == before


def test_a_corrupt_ledger_is_refused_before_the_screen_opens(
    base: Path, tmp_path: Path, terminal: Terminal
) -> None:
    root = copy(base, tmp_path / "root")
    for name in ("ledger.sqlite-wal", "ledger.sqlite-shm"):
        (root / name).unlink(missing_ok=True)
    (root / "ledger.sqlite").write_bytes(b"this is not a database" * 100)
    done = tmp_path / "exit"
    terminal.start(review_command(root, done))
    assert exit_status(done) == 3
    shown = terminal.screen()
    assert "state_corrupt" in shown and "habitus review —" not in shown
