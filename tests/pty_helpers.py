"""Run the real `habitus` process with stdout and/or stderr attached to a pseudo-terminal.

The terminal is put in raw mode so that the bytes read back are the bytes written (no CR added).
"""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time
import tty
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent  # the venv's bin/, where the console script lives
TERMINAL_SETTINGS = {
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR_FORCE",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "TERM",
    "COLORTERM",
}


@dataclass
class PtyRun:
    exit: int
    stdout: bytes
    stderr: bytes


def _terminal(columns: int) -> tuple[int, int]:
    master, slave = os.openpty()
    tty.setraw(slave)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    return master, slave


def run_pty(
    args: list[str],
    *,
    stdin: bytes = b"",
    env: dict[str, str] | None = None,
    stdout_tty: bool = True,
    stderr_tty: bool = True,
    columns: int = 120,
    timeout: float = 120,
    argv: list[str] | None = None,
) -> PtyRun:
    """Run `habitus ARGS` (or `argv` as given) with stdin a pipe, and stdout/stderr a terminal or a pipe."""
    # The caller's colour and size settings would decide what is drawn: only `env` does here.
    environ = {k: v for k, v in os.environ.items() if k not in TERMINAL_SETTINGS}
    environ["TERM"] = "xterm-256color"
    environ.update(env or {})
    streams: dict[str, tuple[int, int]] = {}
    for name, wanted in (("stdout", stdout_tty), ("stderr", stderr_tty)):
        streams[name] = _terminal(columns) if wanted else os.pipe()
    process = subprocess.Popen(
        argv or [str(BIN / "habitus"), *args],
        stdin=subprocess.PIPE,
        stdout=streams["stdout"][1],
        stderr=streams["stderr"][1],
        env=environ,
        close_fds=True,
    )
    for _, write_end in streams.values():
        os.close(write_end)
    assert process.stdin is not None
    process.stdin.write(stdin)
    process.stdin.close()
    chunks: dict[int, list[bytes]] = {read_end: [] for read_end, _ in streams.values()}
    open_ends = set(chunks)
    deadline = time.monotonic() + timeout
    while open_ends and time.monotonic() < deadline:
        ready, _, _ = select.select(list(open_ends), [], [], 0.5)
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the terminal's last writer closed it
                data = b""
            if data:
                chunks[fd].append(data)
            else:
                open_ends.discard(fd)
    code = process.wait(timeout=max(1.0, deadline - time.monotonic()))
    for fd in chunks:
        os.close(fd)
    return PtyRun(code, b"".join(chunks[streams["stdout"][0]]), b"".join(chunks[streams["stderr"][0]]))
