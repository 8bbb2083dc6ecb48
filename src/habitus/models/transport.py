"""Bytes to and from a model: one HTTP POST (stdlib http.client) or one program run, both bounded.

Both read at most `cap + 1` bytes of the answer and give up at `deadline` (time.monotonic()). No
redirect is followed (a redirect could carry the key to another host), no proxy is used, and TLS is
verified with the system's trust store. Nothing is logged.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any


class TransportError(Exception):
    """A failure before any answer text exists. `reason` is a key of habitus.models.call.REASONS."""

    def __init__(
        self, reason: str, message: str, *, retry_after: float | None = None, **details: object
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.retry_after = retry_after
        self.details = details


@dataclass
class Response:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TransportError("timeout", "no complete answer before the timeout")
    return left


def post(url: str, headers: dict[str, str], body: bytes, *, deadline: float, cap: int) -> Response:
    """POST body to url; return status, body (at most cap bytes) and lower-cased headers.

    Each blocking step (connect, TLS, send, each read) waits at most until the deadline.
    """
    import http.client
    import ssl
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(
            parts.hostname or "",
            parts.port,
            timeout=_remaining(deadline),
            context=ssl.create_default_context(),
        )
    else:
        connection = http.client.HTTPConnection(
            parts.hostname or "", parts.port, timeout=_remaining(deadline)
        )
    try:
        try:
            connection.request("POST", path, body=body, headers={**headers, "Connection": "close"})
            sock = connection.sock
            if sock is not None:
                sock.settimeout(_remaining(deadline))
            response = connection.getresponse()
            status = response.status
            response_headers = {k.lower(): v for k, v in response.getheaders()}
            declared = response.length  # None when chunked or unknown
            if declared is not None and declared > cap:
                raise TransportError("too_large", f"the answer declares {declared} bytes, over the {cap} cap")
            chunks: list[bytes] = []
            size = 0
            while True:
                if sock is not None:
                    sock.settimeout(_remaining(deadline))
                chunk = response.read1(min(65_536, cap + 1 - size))
                if not chunk:
                    break
                size += len(chunk)
                if size > cap:
                    raise TransportError("too_large", f"the answer is larger than the {cap}-byte cap")
                chunks.append(chunk)
            if response.length:  # http.client counts down what the body still owes
                raise TransportError("truncated", "the response body ended before its declared length")
        except TransportError:
            raise
        except TimeoutError:
            raise TransportError("timeout", "no complete answer before the timeout") from None
        except http.client.IncompleteRead:
            raise TransportError("truncated", "the response body ended before its declared length") from None
        except ssl.SSLCertVerificationError:
            raise TransportError("connection", "the TLS certificate of the endpoint did not verify") from None
        except (OSError, http.client.HTTPException) as exc:
            raise TransportError("connection", f"the connection failed ({type(exc).__name__})") from None
    finally:
        connection.close()
    return Response(status, b"".join(chunks), response_headers)


def run(
    argv: tuple[str, ...],
    stdin: bytes,
    *,
    deadline: float,
    cap: int,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> bytes:
    """Run a model program: stdin in, at most cap bytes of stdout back; its stderr is discarded.

    The program runs in its own session so that a timeout or an oversized answer kills it and every
    child it started. A non-zero exit status is a failure (75, EX_TEMPFAIL, may be retried). Its
    environment (os.environ unless given) always carries HABITUS_NO_HOOKS=1, so a program that is an
    agent with habitus's hooks installed cannot call back into habitus.
    """
    import selectors
    import shutil

    program = argv[0] if os.path.isabs(argv[0]) else shutil.which(argv[0])
    if program is None or not os.access(program, os.X_OK):
        raise TransportError("not_configured", "the model program was not found or is not executable")
    try:
        process = subprocess.Popen(
            [program, *argv[1:]],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            env={**(os.environ if env is None else env), "HABITUS_NO_HOOKS": "1"},
            cwd=cwd,
        )
    except OSError as exc:
        raise TransportError(
            "not_configured", f"the model program could not start ({exc.strerror})"
        ) from None
    assert process.stdin is not None and process.stdout is not None
    writer = threading.Thread(target=_feed, args=(process.stdin, stdin), daemon=True)
    writer.start()
    chunks: list[bytes] = []
    size = 0
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            while True:
                if not selector.select(_remaining(deadline)):
                    continue
                chunk = os.read(process.stdout.fileno(), min(65_536, cap + 1 - size))
                if not chunk:
                    break
                size += len(chunk)
                if size > cap:
                    raise TransportError("too_large", f"the program wrote more than the {cap}-byte cap")
                chunks.append(chunk)
        try:
            status = process.wait(timeout=_remaining(deadline))
        except subprocess.TimeoutExpired:
            raise TransportError("timeout", "the model program did not exit before the timeout") from None
    except BaseException:
        _kill(process)
        raise
    finally:
        writer.join(timeout=5)
        process.stdout.close()
    if status != 0:
        raise TransportError(
            "command_failed", f"the model program exited with status {status}", exit_status=status
        )
    return b"".join(chunks)


def _feed(pipe: Any, data: bytes) -> None:
    try:
        pipe.write(data)
    except (BrokenPipeError, OSError, ValueError):
        pass  # the program stopped reading; its exit status or answer tells the rest
    finally:
        with contextlib.suppress(OSError, ValueError):
            pipe.close()


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)
