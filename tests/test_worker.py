"""The warm worker: hook calls answered by one process per state root, and every way of failing to reach it
falling back to the same answer worked out in the hook's own process.

All real: the console script as the harness runs it, the detached worker it starts, its Unix socket,
kill -9, a real backup and restore, real locks.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import BIN, REPO, run
from obs_helpers import payloads
from worker_helpers import (
    EVENT,
    FACT,
    HABIT,
    alive,
    env_for,
    gone,
    hook,
    prepare,
    status,
    stopped_after,
    wait_ready,
)


def in_process(root: Path, args: list[str], event: dict[str, object]) -> bytes:
    done = hook(args, event, env_for(root, worker=False))
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    return done.stdout


def test_the_warm_worker_answers_every_hook_exactly_as_the_hook_process_would(state_root: Path) -> None:
    prepare(state_root)
    start = {"hook_event_name": "SessionStart", "session_id": "w-1", "source": "startup"}
    expected = {
        "select": in_process(state_root, ["select"], EVENT),
        "index": in_process(state_root, ["memory", "index"], start),
        "advise": in_process(state_root, ["advise"], EVENT),
    }
    assert HABIT["behavior"].encode() in expected["select"] and FACT.encode() in expected["index"]
    with stopped_after(state_root):
        before = wait_ready(state_root)["served"]
        env = env_for(state_root)
        for _ in range(2):
            assert hook(["select"], EVENT, env).stdout == expected["select"]
            assert hook(["memory", "index"], start, env).stdout == expected["index"]
            assert hook(["advise"], EVENT, env).stdout == expected["advise"]
        stop = {"hook_event_name": "Stop", "session_id": "w-1", "last_assistant_message": "Done."}
        stop["transcript_path"] = None  # type: ignore[assignment]
        capture = hook(["capture"], {**EVENT, **stop, "prompt": "use tabs"}, env)
        assert capture.returncode == 0 and capture.stdout == b""
        after = status(state_root)
        assert after["served"] - before == 7  # each call above was the worker's
        assert after["ready"] and after["code"].startswith("0.")
    assert not (state_root / "errors.jsonl").exists()
    assert not (state_root / "worker.sock").exists()  # stop removes its socket


def test_a_served_hook_process_imports_the_thin_client_alone(state_root: Path) -> None:
    """The `habitus` command (entry/habitus, as installed) hands a hook to the worker without `re`, click
    or the rest of habitus: what pip's console-script wrapper imported first cost 5-20 ms a hook."""
    prepare(state_root)
    expected = in_process(state_root, ["select"], EVENT)
    with stopped_after(state_root):
        before = wait_ready(state_root)["served"]
        done = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                str(REPO / "entry" / "habitus"),
                "select",
                "--harness",
                "claude-code",
            ],
            input=json.dumps(EVENT).encode(),
            capture_output=True,
            timeout=90,
            env=env_for(state_root),
            check=False,
        )
        assert done.returncode == 0 and done.stdout == expected
        assert status(state_root)["served"] == before + 1  # the worker answered it
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines() if "|" in line}
    assert {"habitus.launcher", "habitus.worker.client"} <= imported
    assert not imported & {"re", "click", "habitus.cli", "json", "tomllib", "typing"}, imported


def test_status_and_stop_follow_the_json_contract(state_root: Path) -> None:
    done = run(["worker", "status"])
    assert done.exit == 0 and done.result["running"] is False and done.result["pid"] is None
    assert done.result["socket"] == str(state_root / "worker.sock") and done.result["enabled"] is True
    stop = run(["worker", "stop"])
    assert stop.exit == 0 and stop.result == {
        "v": 1,
        "root": str(state_root),
        "socket": str(state_root / "worker.sock"),
        "stopped": False,
        "pid": None,
    }
    prepare(state_root)
    with stopped_after(state_root):
        pid = wait_ready(state_root)["pid"]
        mode = os.lstat(state_root / "worker.sock").st_mode
        assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
        stopped = run(["worker", "stop"])
        assert stopped.result["stopped"] is True and stopped.result["pid"] == pid
        assert gone(pid)
        assert run(["verify"]).exit == 0  # the socket is a known name of the root


def test_status_says_running_when_the_worker_holds_its_lock_but_answers_nothing(state_root: Path) -> None:
    """Every serving process busy: the socket answers nothing, but the lifetime lock says it runs."""
    import fcntl

    from habitus.worker import LOCK_NAME

    (state_root / "locks").mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(state_root / "locks" / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        held = run(["worker", "status"]).result
        assert (held["running"], held["answered"], held["pid"]) == (True, False, None)
    finally:
        os.close(fd)
    free = run(["worker", "status"]).result
    assert (free["running"], free["answered"]) == (False, False)


def test_kill_9_mid_request_falls_back_to_the_same_result(state_root: Path) -> None:
    """The worker is killed while it waits on a held observations lock inside a capture; the hook then
    captures in its own process: exactly one observation, the same as without a worker."""
    import fasteners

    prepare(state_root)
    run(["config", "set", "hooks.lock_wait_ms", "4000"])
    event = {"hook_event_name": "Stop", "session_id": "k-1", "last_assistant_message": "Tabs it is."}
    transcript = state_root.parent / "k.jsonl"
    from advise_helpers import Transcript

    log = Transcript(transcript, session="k-1")
    log.prompt("use tabs in the makefile")
    log.say("Tabs it is.")
    event["transcript_path"] = str(transcript)  # type: ignore[assignment]
    with stopped_after(state_root):
        pid = wait_ready(state_root)["pid"]
        lock = fasteners.InterProcessLock(str(state_root / "locks" / "observations.lock"))
        assert lock.acquire(blocking=True, timeout=5)
        client = subprocess.Popen(
            [str(BIN / "habitus"), "capture", "--harness", "claude-code"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env_for(state_root),
        )
        assert client.stdin is not None
        client.stdin.write(json.dumps(event).encode())
        client.stdin.close()
        client.stdin = None
        time.sleep(1.0)  # the worker has taken the call and waits for the lock
        os.kill(pid, signal.SIGKILL)
        assert gone(pid)
        lock.release()
        out, err = client.communicate(timeout=60)
        assert client.returncode == 0 and out == b"" and err == b""
    assert [(p["user"], p["assistant"]) for p in payloads(state_root)] == [
        ("use tabs in the makefile", "Tabs it is.")
    ]


def test_a_stale_socket_is_replaced_and_the_answer_is_the_same(state_root: Path) -> None:
    prepare(state_root)
    expected = in_process(state_root, ["select"], EVENT)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(state_root / "worker.sock"))
    os.chmod(state_root / "worker.sock", 0o600)
    stale.close()  # the file stays, nobody listens: a worker that died without cleaning up
    with stopped_after(state_root):
        assert hook(["select"], EVENT, env_for(state_root)).stdout == expected
        wait_ready(state_root)
        assert hook(["select"], EVENT, env_for(state_root)).stdout == expected
        assert status(state_root)["served"] >= 1


def test_concurrent_clients_each_get_their_own_answer(state_root: Path) -> None:
    prepare(state_root)
    other = {**EVENT, "prompt": "what is a mutex?"}
    expected = {
        True: in_process(state_root, ["select"], EVENT),
        False: in_process(state_root, ["select"], other),
    }
    assert expected[True] and expected[False] == b""
    answers: list[tuple[bool, bytes, int]] = []
    with stopped_after(state_root):
        before = wait_ready(state_root)["served"]

        def one(n: int) -> None:
            done = hook(["select"], EVENT if n % 2 else other, env_for(state_root))
            answers.append((bool(n % 2), done.stdout, done.returncode))

        threads = [threading.Thread(target=one, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TIMEOUT_S)
        assert len(answers) == 8
        assert all(code == 0 and out == expected[kind] for kind, out, code in answers)
        assert status(state_root)["served"] > before


TIMEOUT_S = 120


def test_another_version_makes_the_worker_leave_and_the_hook_work_in_process(state_root: Path) -> None:
    from habitus.worker import PROTOCOL, socket_path
    from habitus.worker.client import ask

    prepare(state_root)
    expected = in_process(state_root, ["select"], EVENT)
    with stopped_after(state_root):
        pid = wait_ready(state_root)["pid"]
        request = {"op": "run", "protocol": PROTOCOL, "code": "9.9.9:/elsewhere", "argv": ["select"]}
        header, body = ask(socket_path(str(state_root)), request, b"", timeout=10)
        assert header == {"status": "mismatch"} and body == b""
        assert gone(pid)  # the old worker left
        assert (
            hook(["select"], EVENT, env_for(state_root)).stdout == expected
        )  # in process, and a new one starts
        assert wait_ready(state_root)["pid"] != pid


def test_a_restore_while_the_worker_runs_is_seen_by_the_next_hook(state_root: Path, tmp_path: Path) -> None:
    prepare(state_root)
    start = {"hook_event_name": "SessionStart", "session_id": "r-1", "source": "startup"}
    backup = tmp_path / "backup"
    assert run(["backup", "--out", str(backup)]).exit == 0
    with stopped_after(state_root):
        wait_ready(state_root)
        later = "Deploys need a green canary first."
        assert run(["memory", "retain", later, "--kind", "fact"]).exit == 0
        warm = hook(["memory", "index"], start, env_for(state_root)).stdout
        assert later.encode() in warm
        served = status(state_root)["served"]
        restored = run(["restore", str(backup), "--wait", "2"])
        assert restored.exit == 0, restored.stderr  # an idle worker holds no lock a restore waits for
        after = hook(["memory", "index"], start, env_for(state_root)).stdout
        assert status(state_root)["served"] == served + 1
    assert later.encode() not in after and FACT.encode() in after
    assert after == in_process(state_root, ["memory", "index"], start)


def test_a_socket_open_to_others_is_refused(state_root: Path) -> None:
    prepare(state_root)
    expected = in_process(state_root, ["select"], EVENT)
    with stopped_after(state_root):
        served = wait_ready(state_root)["served"]
        os.chmod(state_root / "worker.sock", 0o666)
        assert hook(["select"], EVENT, env_for(state_root)).stdout == expected
        refused = status(state_root)  # status will not talk to it either, though it runs
        assert (refused["running"], refused["answered"], refused["pid"]) == (True, False, None)
        os.chmod(state_root / "worker.sock", 0o600)
        assert status(state_root)["served"] == served  # the hook did not use it


def _open_folder(near: Path) -> str:
    """A folder every user can enter, on the same file system as `near` (for a hard link)."""
    for candidate in (tempfile.gettempdir(), "/var/tmp", "/tmp"):
        st = os.stat(candidate)
        if st.st_mode & 0o001 and st.st_dev == os.stat(near).st_dev:
            return candidate
    pytest.skip("no folder open to other users on the state root's file system")


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to run a client as another user")
def test_a_client_of_another_user_is_not_served(state_root: Path) -> None:
    from habitus.worker import PROTOCOL, code_id, dump_header, encode

    prepare(state_root)
    with stopped_after(state_root):
        served = wait_ready(state_root)["served"]
        # A status request the worker answers its own user (checked below), and not the other one.
        frame = encode(dump_header({"op": "status", "protocol": PROTOCOL, "code": code_id()}), b"")
        own = socket.socket(socket.AF_UNIX)
        own.connect(str(state_root / "worker.sock"))
        own.sendall(frame)
        assert len(own.recv(100)) > 8
        own.close()
        # Let the other user reach the socket at all: a hard link in an open folder, the socket 0666.
        door = Path(tempfile.mkdtemp(prefix="habitus-door-", dir=_open_folder(state_root)))
        os.chmod(door, 0o755)
        os.link(state_root / "worker.sock", door / "w.sock")
        os.chmod(state_root / "worker.sock", 0o666)
        try:
            script = (
                "import socket, struct, sys\n"
                "s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])\n"
                "try:\n"
                "    s.sendall(bytes.fromhex(sys.argv[2])); print(len(s.recv(100)))\n"
                "except (BrokenPipeError, ConnectionResetError):\n"
                "    print(0)\n"
            )
            done = subprocess.run(
                ["/usr/bin/env", "python3", "-c", script, str(door / "w.sock"), frame.hex()],
                capture_output=True,
                timeout=30,
                user=65534,
                check=False,
            )
        finally:
            os.chmod(state_root / "worker.sock", 0o600)
            shutil.rmtree(door)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == b"0"  # closed without a word
        assert status(state_root)["served"] == served


def test_the_client_and_the_state_root_agree_on_where_the_root_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from habitus.state.root import resolve
    from habitus.worker.client import resolve_root

    cases = [
        ({"HABITUS_HOME": str(tmp_path / "h")}, []),
        ({"HABITUS_HOME": ""}, ["--root", str(tmp_path / "r")]),
        ({"HABITUS_HOME": "", "XDG_DATA_HOME": str(tmp_path / "x")}, []),
        ({"HABITUS_HOME": "", "XDG_DATA_HOME": "relative"}, []),
        ({"HABITUS_HOME": "rel/home"}, []),
    ]
    for env, argv in cases:
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        option = argv[1] if argv else None
        assert resolve_root(["select", *argv, "--harness", "generic"]) == str(resolve(option))


def test_the_hook_client_imports_only_the_standard_library() -> None:
    code = (
        "import sys; sys.argv = ['habitus', 'select', '--harness', 'generic']\n"
        "from habitus.worker import client; client.run(sys.argv[1:])\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('click', 'orjson', 'numpy', 'onnxruntime', "
        "'tomlkit', 'json', 'socket', 'typing')]\n"
        "print(bad)"
    )
    done = subprocess.run(
        [str(BIN / "python"), "-c", code],
        input=b"{}",
        capture_output=True,
        timeout=60,
        env={**os.environ, "HABITUS_WORKER": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == b"[]"


def test_a_warm_hook_loads_only_the_client_s_habitus_modules(state_root: Path) -> None:
    """A warm hook's own process loads five habitus modules, no TOML, regex or JSON parser, and nothing
    of the command line: every module here is compiled again by each hook wherever bytecode cannot be
    written (an editable install under PYTHONDONTWRITEBYTECODE), and tomllib alone costs 20-30 ms on a
    loaded machine, so a new import on this path costs every hook call."""
    prepare(state_root)
    probe = (  # a served call leaves by os._exit: the list is written on the way out
        "import os, sys; sys.argv = ['habitus', 'select', '--harness', 'claude-code']\n"
        "leave = os._exit\n"
        "def report(code):\n"
        "    sys.stderr.write('MODULES=' + ','.join(sorted(m for m in sys.modules if m.startswith('habitus')\n"
        "        or m in ('tomllib', 're', 'json'))))\n"
        "    sys.stderr.flush()\n"
        "    leave(code)\n"
        "os._exit = report\n"
        "from habitus.launcher import main\n"
        "main()\n"
    )
    with stopped_after(state_root):
        served = wait_ready(state_root)["served"]
        done = subprocess.run(
            [str(BIN / "python"), "-c", probe],
            input=json.dumps(EVENT).encode(),
            capture_output=True,
            timeout=60,
            env=env_for(state_root),
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert HABIT["behavior"].encode() in done.stdout
        assert status(state_root)["served"] == served + 1  # the worker answered it
    line = done.stderr.decode().rpartition("MODULES=")[2]
    assert line.split(",") == [
        "habitus",
        "habitus.hookmode",
        "habitus.launcher",
        "habitus.worker",
        "habitus.worker.client",
    ]


def test_the_worker_answers_only_hook_calls_for_its_own_root(state_root: Path, tmp_path: Path) -> None:
    from habitus.worker import PROTOCOL, code_id, socket_path
    from habitus.worker.client import ask

    prepare(state_root)
    with stopped_after(state_root):
        served = wait_ready(state_root)["served"]
        base = {"op": "run", "protocol": PROTOCOL, "code": code_id(), "cwd": str(tmp_path), "deadline": 1e12}
        env = {"HABITUS_HOME": str(state_root), "PATH": os.environ["PATH"]}
        for argv, request_env in [
            (["select", "--root", str(tmp_path / "other"), "--harness", "generic"], env),  # another root
            (["select", "--harness", "generic"], {**env, "HABITUS_HOME": str(tmp_path / "other")}),
            (["config", "set", "capture.enabled", "false", "--harness", "generic"], env),  # not a hook call
        ]:
            header, body = ask(
                socket_path(str(state_root)), {**base, "argv": argv, "env": request_env}, b"{}", timeout=10
            )
            assert header == {"status": "bad_request"} and body == b""
        gone_cwd = tmp_path / "gone"
        gone_cwd.mkdir()
        done = subprocess.run(
            [
                "sh",
                "-c",
                f"cd {gone_cwd} && rmdir {gone_cwd} && exec {BIN / 'habitus'} select --harness generic",
            ],
            input=json.dumps({"user": "is it release ready?"}).encode(),
            capture_output=True,
            timeout=60,
            env=env_for(state_root),
            check=False,
        )
        assert done.returncode == 0 and done.stderr == b""  # a hook in a deleted folder: no traceback
        assert status(state_root)["served"] == served


class FakeWorker:
    """A socket at <root>/worker.sock that misbehaves in one chosen way (in a thread of this test)."""

    def __init__(self, root: Path, behaviour: str) -> None:
        from habitus.worker import dump_header, encode

        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(root / "worker.sock"))
        os.chmod(root / "worker.sock", 0o600)
        self.sock.listen(8)
        self.replies = {
            "silent": b"",
            "garbage": b"\x00\x00\x00\x05\x00\x00\x00\x00nope!",
            "accepts-then-hangs": encode(dump_header({"status": "accepted"}), b""),
            "wrong-exit": encode(dump_header({"status": "done", "exit": "zero"}), b"{}"),
        }[behaviour]
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        held = []
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            held.append(conn)  # never closed by us until the end: a hang, not a reset
            if self.replies:
                conn.sendall(self.replies)

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("behaviour", ["silent", "garbage", "wrong-exit"])
def test_a_worker_that_misbehaves_means_the_hook_works_in_process(state_root: Path, behaviour: str) -> None:
    prepare(state_root)
    expected = in_process(state_root, ["select"], EVENT)
    fake = FakeWorker(state_root, behaviour)
    try:
        started = time.monotonic()
        done = hook(["select"], EVENT, env_for(state_root))
        took = time.monotonic() - started
    finally:
        fake.close()
    assert done.returncode == 0 and done.stdout == expected and done.stderr == b""
    assert took < 20
    assert not (state_root / "errors.jsonl").exists()


def test_a_worker_that_takes_the_call_and_hangs_is_given_up_at_the_deadline(state_root: Path) -> None:
    prepare(state_root)
    assert run(["config", "set", "hooks.budget_ms", "1500"]).exit == 0
    fake = FakeWorker(state_root, "accepts-then-hangs")
    try:
        started = time.monotonic()
        done = hook(["select"], EVENT, env_for(state_root))
        took = time.monotonic() - started
    finally:
        fake.close()
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    assert took < 5
    logged = [json.loads(line) for line in (state_root / "errors.jsonl").read_text().splitlines()]
    assert [(e["code"], e["command"], e["harness"]) for e in logged] == [
        ("deadline", "select", "claude-code")
    ]


def test_a_review_that_cannot_block_runs_after_the_worker_s_answer(state_root: Path, tmp_path: Path) -> None:
    """At Stop the warm worker answers first and reviews after: a concern is pending a moment later and
    the next prompt gets it, as without a worker; a force push still blocks the stop in the answer."""
    from advise_helpers import CLAIM, Transcript

    prepare(state_root)  # its habit: "When about to call a release ready"
    concern = Transcript(tmp_path / "c.jsonl", session="c-1").prompt("release it").say(CLAIM)
    pushed = Transcript(tmp_path / "p.jsonl", session="p-1").prompt("rebase on main")
    pushed.tool("Bash", {"command": "git push --force origin main"}).say("Rebased and pushed.")

    def event(name: str, t: Transcript, **extra: object) -> dict[str, object]:
        return {"hook_event_name": name, "session_id": t.session, "transcript_path": str(t.path), **extra}

    with stopped_after(state_root):
        wait_ready(state_root)
        env = env_for(state_root)
        stop = hook(["advise"], event("Stop", concern), env)
        assert stop.returncode == 0 and stop.stdout == b"" and stop.stderr == b""
        deadline = time.monotonic() + 60
        while status_of_advise(state_root)["notes"]["pending"] == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        later = hook(["advise"], event("UserPromptSubmit", concern, prompt="thanks"), env)
        assert b"- concern [" in later.stdout, later.stdout
        blocked = hook(["advise"], event("Stop", pushed, stop_hook_active=False), env)
        assert json.loads(blocked.stdout)["decision"] == "block"
    assert status_of_advise(state_root)["reviews"] == 2
    assert not (state_root / "errors.jsonl").exists()


def status_of_advise(root: Path) -> dict[str, object]:
    done = subprocess.run(
        [str(BIN / "habitus"), "status"], capture_output=True, env=env_for(root, worker=False), check=True
    )
    advise: dict[str, object] = json.loads(done.stdout)["advise"]
    return advise


def test_the_worker_answers_a_stop_before_its_review_is_done(state_root: Path, tmp_path: Path) -> None:
    """The review is held at its commit (a test fault) inside the worker: the Stop hook has its answer
    anyway, long before the budget, and the held process is the worker's, not the hook's."""
    from advise_helpers import CLAIM, Transcript

    prepare(state_root)
    run(["config", "set", "hooks.budget_ms", "120000"])  # the hook cannot be let go by its deadline
    concern = Transcript(tmp_path / "c.jsonl", session="c-1").prompt("release it").say(CLAIM)
    ready = tmp_path / "held.pid"
    event = {"hook_event_name": "Stop", "session_id": "c-1", "transcript_path": str(concern.path)}
    with stopped_after(state_root):
        wait_ready(state_root)
        env = {**env_for(state_root), "HABITUS_TEST_FAULT": "advise_commit:pause"}
        env["HABITUS_TEST_FAULT_READY"] = str(ready)
        client = subprocess.Popen(
            [str(BIN / "habitus"), "advise", "--harness", "claude-code"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        out, err = client.communicate(json.dumps(event).encode(), timeout=30)
        assert (client.returncode, out, err) == (0, b"", b"")
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        held = int(ready.read_text())
        assert held != client.pid and alive(held)  # the review waits in the worker, after the answer
        os.kill(held, signal.SIGKILL)
        assert gone(held)


def test_the_worker_answers_session_end_at_once_and_sweeps_after(state_root: Path, tmp_path: Path) -> None:
    """Codex and Gemini wait for a SessionEnd hook: the warm worker answers it first and sweeps the
    transcript after (the same `habitus hook` path for every harness; a Claude Code transcript here). Held at its write (a test fault), the sweep waits in the worker, not in the hook;
    let run, it stores the turn; a hook process of its own (no worker) sweeps before it answers."""
    from advise_helpers import Transcript

    prepare(state_root)
    run(["config", "set", "hooks.budget_ms", "120000"])  # the hook cannot be let go by its deadline

    def ended(session: str) -> tuple[dict[str, object], str]:
        said = f"Swept answer of {session}."
        t = Transcript(tmp_path / f"{session}.jsonl", session=session).prompt(f"tidy {session}").say(said)
        return {"hook_event_name": "SessionEnd", "session_id": session, "transcript_path": str(t.path)}, said

    def stored(said: str) -> bool:
        return any(said in json.dumps(p) for p in payloads(state_root))

    held_event, held_said = ended("e-held")
    swept_event, swept_said = ended("e-swept")
    own_event, own_said = ended("e-own")
    ready = tmp_path / "held.pid"
    with stopped_after(state_root):
        wait_ready(state_root)
        env = {**env_for(state_root), "HABITUS_TEST_FAULT": "before_write:pause"}
        env["HABITUS_TEST_FAULT_READY"] = str(ready)
        answered = hook(["hook"], held_event, env)
        assert (answered.returncode, answered.stdout, answered.stderr) == (0, b"", b"")
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        held = int(ready.read_text())
        assert alive(held) and not stored(held_said)  # the sweep waits in the worker, after the answer
        os.kill(held, signal.SIGKILL)
        assert gone(held)
        assert hook(["hook"], swept_event, env_for(state_root)).returncode == 0
        deadline = time.monotonic() + 60
        while not stored(swept_said) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert stored(swept_said)
    assert hook(["hook"], own_event, env_for(state_root, worker=False)).returncode == 0
    assert stored(own_said)  # no worker: swept before the answer
    assert not stored(held_said)
