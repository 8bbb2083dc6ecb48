"""The thin client a hook process runs before anything else: ask the warm worker, else say "do it here".

Standard library only (no click, no orjson, no json, no habitus.state): a warm hook costs the interpreter's start,
one socket round trip and the worker's own time. `run(argv)` answers the exit status when the worker
served the call (its stdout already written), or None when the caller must run the command itself;
stdin is then still readable, from a copy of what was read.
"""

from __future__ import annotations

import _socket  # the C module: socket.py's enum set-up alone costs a hook 5 ms
import io
import os
import stat
import struct
import sys
import time

from habitus import hookmode
from habitus.worker import (
    MAX_SOCKET_PATH,
    PROTOCOL,
    SERVED,
    code_id,
    dump_header,
    encode,
    load_header,
    sizes,
    socket_path,
)

MAX_STDIN = 8 * 1024 * 1024  # as habitus.codec.MAX_REQUEST_BYTES: more is refused in process
TURN_S = 0.5  # longest wait for the worker to take a call (a loaded machine's fork and reply)
OFF = ("0", "off", "false", "no")


class Unreachable(Exception):
    """No live worker behind the socket: start one."""


class Stuck(Exception):
    """The worker took the call and did not answer before its deadline."""


def served(argv: list[str]) -> bool:
    """Whether argv is a hook call (habitus.hookmode.hook_call) of a command the worker answers."""
    return hookmode.is_hook_call(argv) and any(tuple(argv[: len(c)]) == c for c in SERVED)


def resolve_root(argv: list[str]) -> str:
    """The state root as habitus.state.root.resolve finds it (a test keeps the two in step)."""
    raw = hookmode.argv_value(argv, "--root") or os.environ.get("HABITUS_HOME") or None
    if raw is None:
        xdg = os.environ.get("XDG_DATA_HOME", "")
        base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".local", "share")
        raw = os.path.join(base, "habitus")
    path = os.path.expanduser(raw)
    return path if os.path.isabs(path) else os.path.abspath(path)


def run(argv: list[str]) -> int | None:
    if not served(argv) or os.environ.get("HABITUS_WORKER", "").lower() in OFF:
        return None
    try:
        return _run(argv)
    except Exception:  # the client must never be what breaks a hook: do the work in process
        return None


def _run(argv: list[str]) -> int | None:
    root = resolve_root(argv)
    path = socket_path(root)
    if len(os.fsencode(path)) > MAX_SOCKET_PATH or not os.path.isdir(root):
        return None  # no worker for a root that does not exist yet, or whose socket path cannot fit
    settings = hookmode.read_settings(root)
    if not settings.worker:
        return None
    data = _take_stdin()
    deadline = hookmode.STARTED + settings.budget_ms / 1000
    request = {
        "op": "run",
        "protocol": PROTOCOL,
        "code": code_id(),
        "argv": argv,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "deadline": deadline,
    }
    # Once the worker has taken the call it has the call's whole budget (a model review may need
    # it; doing it again here would call the model twice); the worker's own clock ends it in time.
    wait = max(0.05, hookmode.remaining(deadline) + hookmode.GRACE_S)
    try:
        header, body = ask(path, request, data, timeout=wait)
    except Unreachable:
        spawn(root)
        return None
    except Stuck:
        hookmode.log_deadline(argv, "the warm worker did not answer in time")
        return 0
    except (OSError, ValueError):  # not taken in time, reset mid-call (a killed worker), a bad frame
        return None
    status = header.get("status")
    if status == "mismatch":
        spawn(root)  # the old worker is leaving; the next call finds the new one
        return None
    code = header.get("exit")
    if status != "done" or not isinstance(code, int):
        return None
    try:
        out = sys.stdout.buffer
        out.write(body)
        out.flush()
    except (OSError, ValueError):
        pass  # the harness closed our stdout: nothing more to say
    return code


def ask(
    path: str, request: dict[str, object], body: bytes, *, timeout: float
) -> tuple[dict[str, object], bytes]:
    """Send one request and read the reply. Unreachable when no worker listens; OSError or ValueError
    for anything else that went wrong."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise Unreachable from None
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise ValueError("worker socket is not a private socket of this user")
    give_up = time.monotonic() + timeout
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        try:
            conn.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            raise Unreachable from None  # a stale socket file: its worker is gone
        creds = conn.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, struct.calcsize("3i"))
        if struct.unpack("3i", creds)[1] != os.getuid():
            raise ValueError("worker socket served by another user")
        conn.sendall(encode(dump_header(request), body))
        # A worker that cannot take the call at once (busy, stuck) has not taken it within TURN_S.
        header, reply = _frame(conn, min(give_up, time.monotonic() + TURN_S))
        if header.get("status") == "accepted":
            try:
                header, reply = _frame(conn, give_up)
            except TimeoutError:
                raise Stuck from None
    finally:
        conn.close()
    return header, reply


def _frame(conn: _socket.socket, give_up: float) -> tuple[dict[str, object], bytes]:
    header_size, body_size, json = sizes(_exactly(conn, 8, give_up))
    if json:
        raise ValueError("a JSON reply to a marshal request")
    return load_header(_exactly(conn, header_size, give_up)), _exactly(conn, body_size, give_up)


def _exactly(conn: _socket.socket, size: int, give_up: float) -> bytes:
    chunks = []
    left = size
    while left:
        conn.settimeout(max(0.001, give_up - time.monotonic()))
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionResetError("worker closed the connection mid-reply")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _take_stdin() -> bytes:
    """Read stdin (bounded) and put a copy back, so that a fallback reads exactly the same bytes."""
    stream = sys.stdin
    if stream is None:
        return b""
    try:
        if stream.isatty():
            return b""
        data = stream.buffer.read(MAX_STDIN + 1) or b""
    except (OSError, ValueError, AttributeError):
        return b""
    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="strict")
    return data


def spawn(root: str) -> None:
    """Start a worker for root, detached: its own session, stdio on /dev/null, nothing inherited, so a
    harness that waits for its hook's children (Pi, `claude -p`) never waits for it. Never raises."""
    try:
        pid = os.fork()
    except OSError:
        return
    if pid:
        try:
            os.waitpid(pid, 0)  # the middle process leaves at once
        except OSError:
            pass
        return
    try:  # the middle process: a new session, then the worker as an orphan adopted by init
        os.setsid()
        if os.fork():
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 65536)
        os.chdir(root)  # and -P: never import a "habitus" folder from the hook's directory
        os.execv(sys.executable, [sys.executable, "-P", "-m", "habitus.worker.server", root])
    except BaseException:
        pass
    os._exit(0)
