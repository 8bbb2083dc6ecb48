"""habitus inside the real clients (Claude Code, Codex CLI, Gemini CLI, Pi), each installed from npm and
run offline, one non-interactive turn at a time, against a loopback FakeModel that records every request.

What is checked is what a user would care about: what reached the model (the approved habit's guidance,
the memory index; nothing when the features are off), what was stored (the turn, with its tool calls),
and that broken state never stops the agent. Tests marked `e2e_pending` describe behaviour that the
hook-runtime work brings (the hard deadline, a hook that survives a moved binary, each harness's
current formats); they fail on a main without it, and `bin/test` leaves them out until it lands.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from e2e import clients
from e2e.clients import FACT, HABIT, PROMPT
from e2e.fake_model import ANSWER, FakeModel

CLIENTS = ("claude", "codex", "gemini", "pi")
READ_TOOL = {"claude": "Read", "codex": "exec_command", "gemini": "read_file", "pi": "read"}
pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def pending(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.e2e_pending(reason=reason)


def _param(client: str, **pending_for: str) -> object:
    reason = pending_for.get(client)
    return pytest.param(client, marks=[pending(reason)] if reason else [], id=client)


def usable(client: str) -> None:
    """Skip unless the client (and Pi's node) can be installed from the registry."""
    try:
        clients.install(client)
        if client == "pi":
            clients.install("node22")
    except clients.Unavailable as why:
        pytest.skip(f"{client}: {why}")


def session(client: str, folder: Path, model: FakeModel, **kw: object) -> clients.Session:
    usable(client)
    s = clients.Session(client, folder, model.url, folder / "state", **kw)  # type: ignore[arg-type]
    (s.cwd / "notes.txt").write_text("The build is green.\n")
    return s


class Done:
    """One turn of a client with habitus's hooks, on a prepared state root."""

    def __init__(self, client: str, folder: Path) -> None:
        self.client = client
        self.root = folder / "state"
        clients.prepare(self.root)
        with FakeModel() as model:
            self.session = session(client, folder, model)
            self.turn = self.session.run(PROMPT)
            self.model = model
        time.sleep(0.5)  # Pi does not await its agent_end children
        self.stored = clients.stored(self.root)


@pytest.fixture(scope="module")
def done(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Done]:
    """One turn per client, shared by the tests that read it."""
    client = request.param
    usable(client)
    yield Done(client, tmp_path_factory.mktemp(f"turn-{client}"))


@pytest.mark.parametrize("done", CLIENTS, indirect=True)
def test_the_turn_runs_and_the_memory_index_reaches_the_model(done: Done) -> None:
    assert done.turn.exit == 0, done.turn.stderr[-2000:]
    assert ANSWER in done.turn.stdout
    assert done.model.saw(FACT), "the memory index never reached the model"
    assert done.model.saw("read notes.txt first")
    assert clients.errors(done.root) == []


@pytest.mark.parametrize(
    "done",
    [_param(c) for c in CLIENTS],
    indirect=True,
)
def test_the_approved_habit_reaches_the_model(done: Done) -> None:
    assert done.turn.exit == 0
    assert done.model.saw(HABIT["behavior"]), "select injected nothing"


@pytest.mark.parametrize("done", [_param(c) for c in CLIENTS], indirect=True)
def test_the_turn_is_stored_with_its_tool_calls(done: Done) -> None:
    turns = [p for p in done.stored if p.get("assistant") == ANSWER]
    assert len(turns) == 1, done.stored
    assert turns[0]["user"] == PROMPT
    assert [t["name"] for t in turns[0]["tools"]] == [READ_TOOL[done.client]]  # type: ignore[index]


@pytest.mark.parametrize("client", CLIENTS)
def test_features_off_send_nothing_and_store_nothing(client: str, tmp_path: Path) -> None:
    root = tmp_path / "state"
    clients.prepare(root, capture=False, advise=False, select=False)
    clients.habitus(root, "config", "set", "memory.index_budget", "0")
    with FakeModel() as model:
        turn = session(client, tmp_path, model).run(PROMPT)
    assert turn.exit == 0, turn.stderr[-2000:]
    assert ANSWER in turn.stdout
    assert model.saw("read notes.txt first")
    assert not any(model.saw(text) for text in (HABIT["behavior"], FACT, *clients.MARKERS))
    assert clients.stored(root) == []


@pytest.mark.parametrize("client", CLIENTS)
def test_corrupt_state_never_stops_the_agent(client: str, tmp_path: Path) -> None:
    root = tmp_path / "state"
    clients.prepare(root)
    for name in ("ledger.sqlite", "memory.sqlite"):
        (root / name).write_bytes(b"this is not a database\x00" * 64)
    for extra in root.glob("*.sqlite-*"):
        extra.unlink()
    with FakeModel() as model:
        turn = session(client, tmp_path, model).run(PROMPT)
    assert turn.exit == 0, turn.stderr[-2000:]
    assert ANSWER in turn.stdout
    assert model.saw("read notes.txt first")
    assert not any(model.saw(text) for text in (HABIT["behavior"], FACT, *clients.MARKERS))
    time.sleep(0.5)
    logged = clients.errors(root)
    assert logged and all(set(e) >= {"code", "command"} for e in logged), "the failure was not logged"


@pytest.mark.parametrize("client", CLIENTS)
def test_the_pinned_version_is_what_runs(client: str) -> None:
    usable(client)
    argv = clients.argv_of(client)
    out = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    expected = clients.installed_version(client)
    assert expected in out.stdout + out.stderr
    if not clients.latest():
        assert expected == clients.PACKAGES[client].version


# -- what the hook runtime brings (fails until it lands) -------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_a_held_state_lock_costs_under_a_second(client: str, tmp_path: Path) -> None:
    root = tmp_path / "state"
    clients.prepare(root)
    with FakeModel() as model:
        s = session(client, tmp_path, model)
        s.run(PROMPT)  # warm caches once
        normal = min(s.run(PROMPT).seconds for _ in range(2))
        with HeldLocks(root):
            turns = [s.run(PROMPT) for _ in range(2)]
    locked = min(turns, key=lambda t: t.seconds)
    assert all(t.exit == 0 and ANSWER in t.stdout for t in turns)
    # Hooks that waited out the lock cost 5-10 s a turn; on a busy machine a turn's own time varies by a
    # quarter, so the bound scales with it and still catches that. Both sides are the faster of two turns:
    # one locked turn against the best of two normal ones failed on CI's loaded machine (2.5 s vs 0.6 s)
    # and passed alone (the lock's cost is in every turn; the machine's stalls are not).
    bound = normal * 1.25 + 1.0
    assert locked.seconds <= bound, f"{client}: {locked.seconds:.2f} s locked vs {normal:.2f} s"
    assert any(e.get("code") == "state_locked" for e in clients.errors(root)), "errors.jsonl names no lock"


@pytest.mark.parametrize("client", [_param(c) for c in CLIENTS])
def test_a_moved_habitus_does_not_drop_the_prompt(client: str, tmp_path: Path) -> None:
    root = tmp_path / "state"
    clients.prepare(root)
    moved = tmp_path / "old-bin" / "habitus"
    moved.parent.mkdir()
    shutil.copy2(clients.HABITUS, moved)
    with FakeModel() as model:
        s = session(client, tmp_path, model, hooks=False)
        if client == "pi":
            s.extra_env["HABITUS_BIN"] = str(moved)
            s.hooks = True
        else:  # a habitus pinned with --program, then gone, and none on PATH either
            done = subprocess.run(
                [str(moved), "hooks", "install", "--harness", clients.HARNESS[client], "--program", str(moved)],
                env=s.env(), capture_output=True, timeout=60, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert str(moved) in Path(json.loads(done.stdout)["path"]).read_text()
            s.extra_env["PATH"] = without_habitus(s.env()["PATH"])
        moved.unlink()
        turn = s.run(PROMPT)
    assert turn.exit == 0, turn.stderr[-2000:]
    assert ANSWER in turn.stdout
    assert model.saw("read notes.txt first"), "the prompt never reached the model"


def without_habitus(path: str) -> str:
    """PATH minus every folder holding a habitus: as on a teammate's machine without it installed."""
    folders = path.split(os.pathsep)
    return os.pathsep.join(d for d in folders if d and not os.access(os.path.join(d, "habitus"), os.X_OK))


class HeldLocks:
    """Every single-writer lock of the root held by another process (as a restore or analyze would)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __enter__(self) -> None:
        from habitus.state.locks import KNOWN

        code = (
            "import sys, time\nfrom pathlib import Path\n"
            "from contextlib import ExitStack\n"
            "from habitus.state.locks import hold\n"
            "from habitus.state.root import StateRoot\n"
            "root = StateRoot(Path(sys.argv[1]))\n"
            "with ExitStack() as stack:\n"
            "    for name in sys.argv[2:]:\n"
            "        stack.enter_context(hold(root, name, wait=5))\n"
            "    print('held', flush=True)\n"
            "    time.sleep(600)\n"
        )
        self.holder = subprocess.Popen(
            [sys.executable, "-c", code, str(self.root), *KNOWN], stdout=subprocess.PIPE, text=True
        )
        assert self.holder.stdout is not None and self.holder.stdout.readline().strip() == "held"

    def __exit__(self, *exc: object) -> None:
        self.holder.send_signal(signal.SIGTERM)
        self.holder.wait(timeout=10)


@pytest.mark.parametrize("client", CLIENTS)
def test_habitus_no_hooks_silences_every_hook(client: str, tmp_path: Path) -> None:
    """What a preset's child CLI gets: habitus's hooks are installed and on, yet do nothing."""
    root = tmp_path / "state"
    clients.prepare(root)
    with FakeModel() as model:
        s = session(client, tmp_path, model, extra_env={"HABITUS_NO_HOOKS": "1"})
        turn = s.run(PROMPT)
    assert turn.exit == 0, turn.stderr[-2000:]
    assert ANSWER in turn.stdout
    assert model.saw("read notes.txt first")
    assert not any(model.saw(text) for text in (HABIT["behavior"], FACT, *clients.MARKERS))
    time.sleep(0.5)
    assert clients.stored(root) == [] and clients.errors(root) == []
