"""The worker process: `python -P -m habitus.worker.server ROOT`, started by a hook's client.

One worker per root, ensured by `<root>/locks/worker.lock` held for its whole life. Its main process
binds the socket and loads the code and the verified embedding model (answering "warming" meanwhile),
then forks MEMBERS serving processes, which share the loaded pages copy-on-write and accept on the same
socket: the hooks of one event, which clients start together, are answered side by side. A serving
process runs each request as a fresh habitus command with the client's argv, cwd, environment and
stdin under the client's deadline, restoring its own after; only imported code, the model and caches
persist between requests, and the state lock is released after each. The main process only watches:
it replaces a serving process that dies (kill -9 costs that call's client a fallback, nothing more),
and the worker leaves on `stop`, on a request from another habitus (version or install), after
`worker.idle_minutes` without requests, and when its socket or root is removed or replaced. With
`embed.threads` above 1 (a model thread pool, which a forked process cannot use) the main process
answers every call itself, one at a time. It never logs a request.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import io
import json
import mmap
import os
import signal
import socket
import stat
import struct
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus import hookmode
from habitus.worker import (
    LOCK_NAME,
    PROTOCOL,
    SERVED,
    SOCKET_NAME,
    code_id,
    dump_header,
    encode,
    load_header,
    sizes,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

LOCK_RETRY_S = 2.0  # a worker that is leaving (after a mismatch) gives its lock up within this
POLL_S = 2.0  # how often an idle worker checks that its root and socket are still its own
READ_TIMEOUT_S = 5.0  # a client that connects but does not send its request in this time is dropped
MEMBERS = 3  # serving processes: calls at once (more wait up to the client's TURN_S, then work in process)
WATCH_S = 0.25  # how often the main process looks for a serving process gone, a stop, or idleness


class Board:
    """What the worker's processes tell each other, in an anonymous shared mapping made before the first
    fork: a leave flag, and per process (one slot each, so no two write one place) its calls served
    and the time of its last request."""

    _FLAG = struct.Struct("=q")
    _SLOT = struct.Struct("=qd")

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.mem = mmap.mmap(-1, self._FLAG.size + slots * self._SLOT.size)
        for slot in range(slots):
            self._put(slot, 0, time.monotonic())

    def _at(self, slot: int) -> int:
        return self._FLAG.size + slot * self._SLOT.size

    def _get(self, slot: int) -> tuple[int, float]:
        served, last = self._SLOT.unpack_from(self.mem, self._at(slot))
        return int(served), float(last)

    def _put(self, slot: int, served: int, last: float) -> None:
        self._SLOT.pack_into(self.mem, self._at(slot), served, last)

    def touch(self, slot: int, *, served: bool = False) -> None:
        count, _ = self._get(slot)
        self._put(slot, count + served, time.monotonic())

    def served(self) -> int:
        return sum(self._get(slot)[0] for slot in range(self.slots))

    def last(self) -> float:
        return max(self._get(slot)[1] for slot in range(self.slots))

    def leave(self) -> None:
        self._FLAG.pack_into(self.mem, 0, 1)

    def leaving(self) -> bool:
        return bool(self._FLAG.unpack_from(self.mem, 0)[0])


class Worker:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / SOCKET_NAME
        self.started = time.time()
        self.board = Board(MEMBERS + 1)  # slot MEMBERS is the main process's
        self.slot = MEMBERS
        self.main = os.getpid()
        self.members: dict[int, int] = {}  # pid -> slot of each serving process
        self.solo = False  # embed.threads above 1: the main process answers every call itself
        self.identity: tuple[int, int] | None = None
        self.sock: socket.socket | None = None
        self.lock_fd: int | None = None
        self.idle_s = hookmode.read_settings(root).idle_minutes * 60
        self.ready = threading.Event()

    # -- life --------------------------------------------------------------------------------------

    def claim(self) -> bool:
        """Take the lifetime lock (False: another worker lives) and bind the socket, 0600."""
        from habitus.state import files

        locks = files.ensure_dir(self.root / "locks")
        fd = files.open_private(locks / LOCK_NAME, os.O_RDWR | os.O_CREAT)
        give_up = time.monotonic() + LOCK_RETRY_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > give_up:
                    os.close(fd)
                    return False
                time.sleep(0.02)
        self.lock_fd = fd
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # stale: we hold the lock, so no live worker owns it
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(str(self.path))
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        sock.listen(32)
        st = os.lstat(self.path)
        self.identity = (st.st_dev, st.st_ino)
        self.sock = sock
        return True

    def still_ours(self) -> bool:
        try:
            st = os.lstat(self.path)
        except OSError:
            return False
        return stat.S_ISSOCK(st.st_mode) and (st.st_dev, st.st_ino) == self.identity

    def close(self) -> None:
        self.end_members()
        if self.sock is not None:
            self.sock.close()
            if self.still_ours():
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
        if self.lock_fd is not None:
            os.close(self.lock_fd)  # releases the lifetime lock

    def serve(self) -> None:
        """Answer clients until it is time to leave. Until the code and model are loaded (by a thread
        at the lowest priority, so that a cold turn's own hooks, loading them too, keep the CPU),
        every run request is answered "warming" and done by its client; then the serving processes
        take over and this one watches them."""
        assert self.sock is not None
        threading.Thread(target=self._warm, daemon=True).start()
        self.sock.settimeout(WATCH_S)
        while True:
            if self.ready.is_set() and not self.solo:
                if hookmode.read_settings(self.root).embed_threads != 1:
                    self.solo = True  # the model's thread pool would hang a forked process
                else:
                    self.watch()
                    return
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                if time.monotonic() - self.board.last() > self.idle_s or not self.still_ours():
                    return
                continue
            if not self.answer(conn):
                return

    def answer(self, conn: socket.socket) -> bool:
        """One connection, by whichever process accepted it; False when the worker should leave."""
        with conn:
            self.board.touch(self.slot)
            try:
                if not self.handle(conn):
                    self.board.leave()
                    return False
            except Exception:
                pass  # this client falls back to its own process; the worker stays up
            self.board.touch(self.slot)
        return True

    def watch(self) -> None:
        """The main process once warm: fork the serving processes, replace any that dies, and leave
        on a stop, after the idle time, or when the socket is no longer ours."""
        gc.collect()
        gc.freeze()  # what is loaded stays untouched by the collector: fewer pages copied per process
        for slot in range(MEMBERS):
            self.fork_member(slot)
        while not self.board.leaving():
            for pid, slot in list(self.members.items()):
                with contextlib.suppress(ChildProcessError):
                    if os.waitpid(pid, os.WNOHANG)[0] == 0:
                        continue
                del self.members[pid]
                self.fork_member(slot)
            if time.monotonic() - self.board.last() > self.idle_s or not self.still_ours():
                return
            time.sleep(WATCH_S)

    def fork_member(self, slot: int) -> None:
        try:
            pid = os.fork()
        except OSError:
            return  # one fewer: its share of calls waits for the others or is done by its clients
        if pid:
            self.members[pid] = slot
            return
        try:  # the serving process
            self.members = {}
            self.slot = slot
            _use_spare_core()
            if self.lock_fd is not None:
                os.close(self.lock_fd)  # the lifetime lock is the main process's: it goes when that does
                self.lock_fd = None
            assert self.sock is not None
            self.sock.settimeout(POLL_S)
            while True:
                try:
                    conn, _ = self.sock.accept()
                except TimeoutError:
                    if os.getppid() != self.main or self.board.leaving():
                        break
                    continue
                if not self.answer(conn):
                    break
        except BaseException:
            pass
        finally:
            os._exit(0)  # nothing of the main process's is flushed, closed or unlinked from here

    def end_members(self) -> None:
        """Stop the serving processes (a call still running is cut: its client does it itself)."""
        for pid in self.members:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        give_up = time.monotonic() + 2.0
        for pid in self.members:
            try:
                while os.waitpid(pid, os.WNOHANG)[0] == 0:
                    if time.monotonic() > give_up:
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                        break
                    time.sleep(0.01)
            except OSError:
                pass  # already gone
        self.members = {}

    def _warm(self) -> None:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)  # this thread only
        preload(self.root)
        self.ready.set()

    # -- one connection ----------------------------------------------------------------------------

    def handle(self, conn: socket.socket) -> bool:
        """Answer one client; False when the worker should leave."""
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        if struct.unpack("3i", creds)[1] != os.getuid():
            return True  # another user: closed without a word
        try:
            conn.settimeout(READ_TIMEOUT_S)
            header_size, body_size, as_json = sizes(_exactly(conn, 8))
            raw = _exactly(conn, header_size)
            request = _json_header(raw) if as_json else load_header(raw)
            body = _exactly(conn, body_size)
        except (OSError, ValueError):
            return True

        def reply(header: dict[str, Any], out: bytes = b"") -> None:
            _reply(conn, header, out, as_json=as_json)

        op = request.get("op")
        if request.get("protocol") != PROTOCOL or request.get("code") != code_id():
            reply({"status": "mismatch"})
            return False  # another habitus: leave, the client works in process and starts a new one
        if op == "stop":
            reply({"status": "stopping", **self.describe()})
            return False
        if op == "status":
            reply({"status": "running", **self.describe()})
            return True
        if op != "run" or not _valid_run(request):
            reply({"status": "bad_request"})
            return True
        if not hookmode.read_settings(self.root).worker:
            reply({"status": "disabled"})
            return False
        if not self.ready.is_set():
            reply({"status": "warming"})
            return True
        if not self.ours(request):
            reply({"status": "bad_request"})
            return True
        reply({"status": "accepted"})  # the client now waits for the answer, not for a turn
        from habitus.harness import later
        from habitus.select import log

        log.defer()  # the selection-log row is written after the answer is out
        later.open_queue()  # and so is a review that cannot change the answer
        try:
            code, out = run_command(request, body)
            self.board.touch(self.slot, served=True)
            conn.settimeout(READ_TIMEOUT_S)
            with contextlib.suppress(OSError):
                reply({"status": "done", "exit": code}, out)
        finally:
            log.flush()
            run_later(request, later.take())
        return True

    def ours(self, request: dict[str, Any]) -> bool:
        """A hook call the worker answers, for this root (as the client's environment resolves it),
        from a folder that exists: anything else is the client's to do."""
        from habitus.worker.client import resolve_root, served

        if not served(request["argv"]) or not os.path.isdir(request["cwd"]):
            return False
        saved = dict(os.environ)
        try:
            os.environ.clear()
            os.environ.update(request["env"])
            return resolve_root(request["argv"]) == str(self.root)
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def describe(self) -> dict[str, Any]:
        return {
            "pid": self.main,
            "code": code_id(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            "ready": self.ready.is_set(),
            "served": self.board.served(),
            "idle_s": round(time.monotonic() - self.board.last(), 3),
            "idle_limit_s": self.idle_s,
        }


def _use_spare_core() -> None:
    """A serving process answers one hook at a time: its E5 may use a second core while one is idle.
    Only here: the main process's OpenMP stays on one thread, so no thread pool exists to be forked."""
    with contextlib.suppress(Exception):
        from habitus.embed import engine

        engine.use_spare_core(True)


def _valid_run(request: dict[str, Any]) -> bool:
    argv, env, cwd, deadline = (request.get(k) for k in ("argv", "env", "cwd", "deadline"))
    return (
        isinstance(argv, list)
        and all(isinstance(a, str) for a in argv)
        and isinstance(env, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
        and isinstance(cwd, str)
        and isinstance(deadline, (int, float))
    )


def run_command(request: dict[str, Any], stdin: bytes) -> tuple[int, bytes]:
    """Run one habitus command as its own process would, with the client's cwd, environment, stdin and
    deadline (CLOCK_MONOTONIC is shared by every process): (exit status, stdout)."""
    from habitus import cli

    os.chdir(request["cwd"])  # checked by the caller; a folder gone since is the client's to handle
    code, result = 0, b""
    try:
        with _quiet(), _as_the_call(request, fresh=False):
            code, result = cli.run_line(request["argv"], stdin)
    except BaseException:  # cli maps every failure; anything left is the worker's own trouble
        code, result = 0, b""
    return code, result


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """A hook prints nothing on stderr, in its answer or after it: what a command writes there is dropped."""
    saved = sys.stderr
    sys.stderr = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    try:
        yield
    finally:
        sys.stderr = saved


def run_later(request: dict[str, Any], work: list[Callable[[], object]]) -> None:
    """Run work a hook call queued for after its answer, in the call's cwd and environment, under a
    fresh hooks.budget_ms; a failure goes to errors.jsonl under the call's names. Never raises."""
    if not work:
        return
    try:
        with _quiet(), _as_the_call(request, fresh=True):
            try:
                for job in work:
                    job()
            except Exception as exc:  # the answer is out: all that is left is to say why in errors.jsonl
                hookmode.log(exc)
    except Exception:
        pass  # the call's folder went away: nothing to run it in, and nowhere it asked to be told


@contextlib.contextmanager
def _as_the_call(request: dict[str, Any], *, fresh: bool) -> Iterator[None]:
    """The client's cwd and environment, with its hook call armed (lock waits capped, SIGALRM) until the
    request's deadline, or with `fresh` a whole hooks.budget_ms from now; all restored after."""
    argv: list[str] = request["argv"]
    saved_env = dict(os.environ)
    call = hookmode.hook_call(argv)
    root = hookmode.argv_value(argv, "--root")
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        try:
            from habitus.state.root import resolve

            settings = hookmode.read_settings(resolve(root))
        except Exception:
            settings = hookmode.Settings()
        deadline = time.monotonic() + settings.budget_ms / 1000 if fresh else float(request["deadline"])
        hookmode.arm(
            deadline,
            settings,
            command=call[0] if call else "habitus",
            harness=call[1] if call else None,
            root=root,
            clock=True,
            hard=False,
        )
        yield
    finally:
        hookmode.disarm()
        os.environ.clear()
        os.environ.update(saved_env)
        with contextlib.suppress(OSError):
            os.chdir("/")


def _exactly(conn: socket.socket, size: int) -> bytes:
    chunks = []
    left = size
    while left:
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionResetError("client went away")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _reply(conn: socket.socket, header: dict[str, Any], body: bytes = b"", *, as_json: bool = False) -> None:
    data = json.dumps(header).encode() if as_json else dump_header(header)
    conn.sendall(encode(data, body, json=as_json))


def _json_header(data: bytes) -> dict[str, Any]:
    """A JSON client's header (Pi's extension): one object; ValueError otherwise. Its request is checked
    like any other (_valid_run); a deadline it gives is a CLOCK_MONOTONIC time, as Python's."""
    try:
        header = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError("bad header") from None
    if not isinstance(header, dict):
        raise ValueError("header is not an object")
    return header


def preload(root: Path) -> None:
    """Load what the served commands need, so the first request is already warm. Best effort."""
    import importlib

    with contextlib.suppress(Exception):
        from habitus import cli

        # Through the root group's map, as a request would load them: the worker sits above the commands.
        for name in sorted({words[0] for words in SERVED}):  # the hook commands a warm worker answers
            importlib.import_module(cli.COMMANDS[name][0].partition(":")[0])
    with contextlib.suppress(Exception):
        from habitus.models.embedders import load_embedder
        from habitus.state.root import StateRoot

        load_embedder(StateRoot(root)).embed(["warm up"])
    with contextlib.suppress(Exception):
        # advise's reviewer reads cosines of the model its thresholds were fitted on (MiniLM while the
        # setting is "default"): loaded here once, not by each serving process on its first review.
        from habitus.advise.local import CALIBRATED
        from habitus.models.embedders import load_embedder
        from habitus.state.root import StateRoot

        load_embedder(StateRoot(root), calibrated=CALIBRATED).embed(["warm up"])
    with contextlib.suppress(Exception):
        importlib.import_module("habitus.memory.index")
        importlib.import_module("habitus.advise.hook")
        importlib.import_module("habitus.capture")
        importlib.import_module("habitus.harness.transcripts")
    with contextlib.suppress(Exception):
        # One read-only selection (its log row dropped), so that the serving processes forked after
        # this find the ledger code, the judge's tables and the habits' vectors' checks already done.
        from habitus.select import log, select

        log.defer()
        try:
            select(StateRoot(root), "warm up the worker", wait=0.2, mode="cli")
        finally:
            log.flush(write=False)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not os.path.isabs(args[0]):
        sys.stderr.write("usage: python -m habitus.worker.server ABSOLUTE_ROOT\n")
        return 2
    os.umask(0o077)
    hookmode.one_thread()  # before preload loads numpy: every call it serves is a hook's
    worker = Worker(Path(args[0]))
    try:
        if not worker.claim():
            return 0
        os.chdir("/")
        worker.serve()
    finally:
        worker.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
