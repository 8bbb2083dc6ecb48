"""The worker process: `python -P -m habitus.worker.server ROOT`, started by a hook's client.

One worker per root, ensured by `<root>/locks/worker.lock` held for its whole life. Its main process
loads the code and the verified embedding model once. The first call of each kind (command, harness,
event) it answers itself, as one process would, so that every module, table and cache that kind needs
is loaded in it; every later call is answered by a process forked from it for that one call (the
model's pages shared copy-on-write, the caches warm), which runs a
fresh habitus command with the client's argv, cwd, environment and stdin under the client's deadline
and exits. Calls therefore run side by side (the hooks of one event, which clients start together)
and none can leave environment, working directory, streams, locks or a half-done state behind in the
main process; a call process that dies (kill -9) costs only its own client, who then does the work
itself. At most MAX_CALLS run at once; past that a client is told "busy" and works in process.
With `embed.threads` above 1 (a model thread pool, which a forked process cannot use) every call is
answered in the main process, one at a time.
The main process leaves on `stop`, on a request from another habitus (version or install), after
`worker.idle_minutes` without requests, and when its socket or root is removed or replaced.
It never logs a request.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import io
import os
import socket
import stat
import struct
import sys
import threading
import time
from pathlib import Path
from typing import Any

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

LOCK_RETRY_S = 2.0  # a worker that is leaving (after a mismatch) gives its lock up within this
POLL_S = 2.0  # how often an idle worker checks that its root and socket are still its own
READ_TIMEOUT_S = 5.0  # a client that connects but does not send its request in this time is dropped
MAX_CALLS = 8  # call processes at once: more are their clients' own to do (a client has its own CPU)
MAX_KINDS = 32  # kinds of call learned in the main process; any further kind is forked cold


class Worker:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / SOCKET_NAME
        self.started = time.time()
        self.served = 0
        self.last = time.monotonic()
        self.identity: tuple[int, int] | None = None
        self.sock: socket.socket | None = None
        self.lock_fd: int | None = None
        self.idle_s = hookmode.read_settings(root).idle_minutes * 60
        self.ready = threading.Event()
        self.calls: set[int] = set()  # the call processes still running
        self.learned: set[tuple[str, ...]] = set()  # the kinds of call answered here once already
        self.threaded = False  # a call here ran the model on a thread pool: never fork again

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
        every run request is answered "warming" and done by its client."""
        assert self.sock is not None
        threading.Thread(target=self._warm, daemon=True).start()
        self.sock.settimeout(POLL_S)
        while True:
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                self.reap()
                if time.monotonic() - self.last > self.idle_s or not self.still_ours():
                    return
                continue
            with conn:
                self.last = time.monotonic()
                try:
                    if not self.handle(conn):
                        return
                except Exception:
                    pass  # this client falls back to its own process; the worker stays up
                self.last = time.monotonic()

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
            header_size, body_size = sizes(_exactly(conn, 8))
            request = load_header(_exactly(conn, header_size))
            body = _exactly(conn, body_size)
        except (OSError, ValueError):
            return True
        op = request.get("op")
        if request.get("protocol") != PROTOCOL or request.get("code") != code_id():
            _reply(conn, {"status": "mismatch"})
            return False  # another habitus: leave, the client works in process and starts a new one
        if op == "stop":
            _reply(conn, {"status": "stopping", **self.describe()})
            return False
        if op == "status":
            _reply(conn, {"status": "running", **self.describe()})
            return True
        if op != "run" or not _valid_run(request):
            _reply(conn, {"status": "bad_request"})
            return True
        settings = hookmode.read_settings(self.root)
        if not settings.worker:
            _reply(conn, {"status": "disabled"})
            return False
        if not self.ready.is_set():
            _reply(conn, {"status": "warming"})
            return True
        if not self.ours(request):
            _reply(conn, {"status": "bad_request"})
            return True
        argv: list[str] = request["argv"]  # type: ignore[assignment]  # checked by _valid_run
        kind = _kind(argv, body)
        # A model on more than one thread has a thread pool (OpenMP, onnxruntime) that a forked process
        # would wait on for ever: with embed.threads above 1 every call is answered here, one at a time.
        self.threaded = self.threaded or settings.embed_threads != 1  # for this process's life
        if self.threaded or (kind not in self.learned and len(self.learned) < MAX_KINDS):
            self.learn(conn, kind, request, body)
            return True
        self.reap()
        if len(self.calls) >= MAX_CALLS:
            _reply(conn, {"status": "busy"})
            return True
        try:
            pid = os.fork()
        except OSError:
            _reply(conn, {"status": "busy"})
            return True
        if pid == 0:
            self.call(conn, request, body)  # never returns
        self.calls.add(pid)
        self.served += 1
        return True

    def learn(self, conn: socket.socket, kind: tuple[str, ...], request: dict[str, Any], body: bytes) -> None:
        """Answer the first call of a kind here, in the main process (which restores its environment,
        directory and streams after it), so that the call processes forked later find it all loaded."""
        _reply(conn, {"status": "accepted"})
        code, out = run_command(request, body)
        self.served += 1
        conn.settimeout(READ_TIMEOUT_S)
        with contextlib.suppress(OSError):
            _reply(conn, {"status": "done", "exit": code}, out)
        if kind not in self.learned:
            self.learned.add(kind)
            gc.collect()
            gc.freeze()  # what is loaded stays untouched by the collector: fewer pages copied per call

    def call(self, conn: socket.socket, request: dict[str, Any], body: bytes) -> None:
        """The call process: answer this one request, then leave (os._exit: nothing of the main
        process's is flushed, closed or unlinked from here)."""
        try:
            if self.sock is not None:
                self.sock.close()  # this process never accepts
            if self.lock_fd is not None:
                os.close(self.lock_fd)  # the lifetime lock stays the main process's alone
            _reply(conn, {"status": "accepted"})  # the client now waits for the answer, not for a turn
            from habitus.select import log as select_log

            select_log.defer()  # the selection-log row is written after the answer is out
            code, out = run_command(request, body)
            conn.settimeout(READ_TIMEOUT_S)
            with contextlib.suppress(OSError):
                _reply(conn, {"status": "done", "exit": code}, out)
            conn.close()
            select_log.flush()
        except BaseException:  # the client falls back to its own process
            pass
        finally:
            os._exit(0)

    def reap(self) -> None:
        for pid in list(self.calls):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.calls.discard(pid)

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
            "pid": os.getpid(),
            "code": code_id(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            "ready": self.ready.is_set(),
            "served": self.served,
            "idle_s": round(time.monotonic() - self.last, 3),
            "idle_limit_s": self.idle_s,
        }


def _kind(argv: list[str], body: bytes) -> tuple[str, ...]:
    """Which kind of call this is: the served command, the harness, the event's name (each loads
    code and data of its own)."""
    import json

    words = next((" ".join(c) for c in SERVED if tuple(argv[: len(c)]) == c), "")
    try:
        event = json.loads(body)
    except ValueError:
        event = None
    name = ""
    if isinstance(event, dict):
        found = event.get("hook_event_name") or event.get("type") or event.get("event") or ""
        name = found[:64] if isinstance(found, str) else ""
    return (words, hookmode.argv_value(argv, "--harness") or "", name)


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

    argv: list[str] = request["argv"]
    saved_env = dict(os.environ)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    out = io.BytesIO()
    os.chdir(request["cwd"])  # checked by the caller
    os.environ.clear()
    os.environ.update(request["env"])
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)  # hooks print none
    call = hookmode.hook_call(argv)
    root = hookmode.argv_value(argv, "--root")
    try:
        from habitus.state.root import resolve

        settings = hookmode.read_settings(resolve(root))
    except Exception:
        settings = hookmode.Settings()
    code, result = 0, b""
    try:
        hookmode.arm(
            float(request["deadline"]),
            settings,
            command=call[0] if call else "habitus",
            harness=call[1] if call else None,
            root=root,
            clock=True,
            hard=False,
        )
        cli.root.main(args=argv, prog_name="habitus")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # cli.main maps every failure; anything left is the worker's own trouble
        code = 0
    finally:
        hookmode.disarm()
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            result = out.getvalue()  # before the wrappers are dropped: they close what they wrap
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.environ.clear()
        os.environ.update(saved_env)
        with contextlib.suppress(OSError):
            os.chdir("/")
    return code, result


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


def _reply(conn: socket.socket, header: dict[str, Any], body: bytes = b"") -> None:
    conn.sendall(encode(dump_header(header), body))


def preload(root: Path) -> None:
    """Load what the served commands need, so the first request is already warm. Best effort."""
    with contextlib.suppress(Exception):
        import importlib

        from habitus import cli

        # Through the root group's map, as a request would load them: the worker sits above the commands.
        for name in sorted({words[0] for words in SERVED}):  # the hook commands a warm worker answers
            importlib.import_module(cli.COMMANDS[name][0].partition(":")[0])
    with contextlib.suppress(Exception):
        from habitus.models.embedders import load_embedder
        from habitus.state.root import StateRoot

        load_embedder(StateRoot(root)).embed(["warm up"])


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not os.path.isabs(args[0]):
        sys.stderr.write("usage: python -m habitus.worker.server ABSOLUTE_ROOT\n")
        return 2
    os.umask(0o077)
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
