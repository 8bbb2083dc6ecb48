"""habitus worker: report on or stop the warm worker that answers this state root's hooks."""

from __future__ import annotations

from typing import Any

import click

from habitus import io
from habitus.dispatch import StateGroup
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Not read.",
    "stdout": 'status: {"v":1,"root","socket","running","answered","enabled","pid","code","started","ready",'
    '"served","idle_s","idle_limit_s"} (pid to idle_limit_s null when no worker runs, or when one runs but '
    'did not answer (answered false: every serving process busy, or its socket refused); code is "VERSION:PACKAGE_DIR"; ready false while it '
    "is still loading the model, when hooks work in their own processes). "
    'stop: {"v":1,"root","socket","stopped","pid"} (stopped false when none was running).',
    "files": "<root>/worker.sock (the worker's socket, 0600), <root>/locks/worker.lock (held by the live "
    "worker). Reads config.toml (worker.enabled, worker.idle_minutes, hooks.budget_ms).",
}


@click.group(cls=StateGroup)
def cli() -> None:
    """Report on or stop the warm worker that answers hooks.

    Hook calls (hook, select, capture, advise, memory index with --harness) are
    answered by one worker per state root that keeps the code and the
    embedding model loaded. The first hook call starts it; it exits after
    worker.idle_minutes (10) without a request, on another habitus version,
    or on `habitus worker stop`. Whenever it cannot answer, a hook does the
    work in its own process with the same result. Switch it off with
    `habitus config set worker.enabled false`; HABITUS_WORKER=0 does the same
    for one environment.

    \b
    Examples:
      habitus worker status --pretty
      habitus worker stop
    """


def _ask(root: StateRoot, op: str) -> dict[str, Any] | None:
    from habitus.worker import PROTOCOL, code_id, socket_path
    from habitus.worker.client import Unreachable, ask

    try:
        header, _ = ask(
            socket_path(str(root.path)), {"op": op, "protocol": PROTOCOL, "code": code_id()}, b"", timeout=2.0
        )
    except (Unreachable, OSError, ValueError):
        return None
    return header


@cli.command("status")
@state_options
@output_options
def status_command(root: StateRoot, wait: float, pretty: bool) -> None:
    """Report whether a worker runs for this root, and its pid, version and load.

    \b
    Example:  habitus worker status --pretty
    """
    from habitus import hookmode
    from habitus.worker import socket_path

    reply = _ask(root, "status")
    running = reply is not None and reply.get("status") == "running"
    # A worker whose serving processes are all busy (or whose socket is refused) answers nothing; its
    # lifetime lock still says it runs.
    silent = not running and _worker_lock_held(root)
    fields = ("pid", "code", "started", "ready", "served", "idle_s", "idle_limit_s")
    io.write_result(
        {
            "root": str(root.path),
            "socket": socket_path(str(root.path)),
            "running": running or silent,
            "answered": running,
            "enabled": hookmode.read_settings(root.path).worker,
            **{k: (reply or {}).get(k) if running else None for k in fields},
        },
        pretty=pretty,
    )


@cli.command("stop")
@state_options
@output_options
def stop_command(root: StateRoot, wait: float, pretty: bool) -> None:
    """Stop this root's worker (the next hook call starts a new one).

    \b
    Example:  habitus worker stop
    """
    from habitus.worker import socket_path

    reply = _ask(root, "stop")
    stopped = reply is not None and reply.get("status") == "stopping"
    if stopped:
        _wait_gone(root)
    io.write_result(
        {
            "root": str(root.path),
            "socket": socket_path(str(root.path)),
            "stopped": stopped,
            "pid": reply.get("pid") if stopped and reply else None,
        },
        pretty=pretty,
    )


def _worker_lock_held(root: StateRoot) -> bool:
    """Whether a live worker holds this root's lifetime lock (probed without waiting or creating it)."""
    import fcntl
    import os

    from habitus.worker import LOCK_NAME

    try:
        fd = os.open(
            root.path / "locks" / LOCK_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        )
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing lets a shared probe lock go
    return False


def _wait_gone(root: StateRoot, timeout: float = 5.0) -> None:
    """Return once the worker has let its lifetime lock go (it has closed its socket by then)."""
    import time

    give_up = time.monotonic() + timeout
    while _worker_lock_held(root) and time.monotonic() < give_up:
        time.sleep(0.01)
