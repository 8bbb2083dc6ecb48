"""Hook mode: which command line is a hook call, and its hard deadline (a hook never keeps the agent
waiting).

`hook_call(argv)` is the one test of "is this a hook call": the launcher, the worker's client and
server, and `cli` all ask it, so that they never disagree on which calls are silent and logged.

A hook call (`--harness NAME`) has a total budget (`hooks.budget_ms`, from the start of the process or,
in the worker, from the client's start) and waits at most `hooks.lock_wait_ms` for any lock. When the
budget runs out a SIGALRM raises `deadline` in the main thread, which `cli` logs to errors.jsonl before
it exits 0 with no output. A call stuck inside C code (where a signal cannot raise) is ended by a
watchdog thread shortly after: it logs the same entry and leaves with `os._exit(0)`, which the state is
built to survive like any kill.

Standard library only, and little of it at import time: the thin worker client imports this first.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (8 ms of a hook's start)
if TYPE_CHECKING:  # signal and threading are imported by arm(): the worker client needs neither
    import threading
    from typing import Any

STARTED = time.monotonic()  # the launcher imports this module first: close to the process's start

DEFAULT_BUDGET_MS = 30_000  # the harnesses' own timeout for select and capture
DEFAULT_LOCK_WAIT_MS = 200
DEFAULT_IDLE_MINUTES = 10
GRACE_S = 0.5  # after the soft deadline, before the watchdog ends a process stuck in C code
MAX_CONFIG_BYTES = 1024 * 1024
TABLES = (b"hooks", b"worker", b"embed")  # the config tables Settings reads


class Settings:
    """The [hooks] and [worker] settings a hook needs before anything else is loaded (and embed.threads,
    which decides whether the worker may fork serving processes)."""

    def __init__(self, table: dict[str, Any] | None = None) -> None:
        table = table or {}
        hooks = _table(table.get("hooks"))
        worker = _table(table.get("worker"))
        embed = _table(table.get("embed"))
        self.budget_ms = _int(hooks.get("budget_ms"), DEFAULT_BUDGET_MS, 100, 600_000)
        self.lock_wait_ms = _int(hooks.get("lock_wait_ms"), DEFAULT_LOCK_WAIT_MS, 0, 5_000)
        self.worker = worker.get("enabled", True) is not False
        self.idle_minutes = _int(worker.get("idle_minutes"), DEFAULT_IDLE_MINUTES, 1, 1_440)
        self.embed_threads = _int(embed.get("threads"), 1, 1, 1_024)


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any, default: int, low: int, high: int) -> int:
    # An invalid value here falls back to the default; `config` itself refuses the file (config_invalid).
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return default
    return value


def read_settings(root: str | os.PathLike[str]) -> Settings:
    """[hooks] and [worker] of <root>/config.toml, read with tomllib alone (defaults on any doubt)."""
    try:
        fd = os.open(
            os.path.join(root, "config.toml"), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        )
    except OSError:
        return Settings()
    try:
        data = os.read(fd, MAX_CONFIG_BYTES + 1)
    except OSError:
        return Settings()
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        return Settings()
    if not any(table in data for table in TABLES):
        # No key of these tables can be spelled without its table's name (dotted keys, inline tables
        # and headers all name it; only an escaped quoted key such as "\\u0068ooks" would not, which
        # `config set` never writes), so the defaults are the answer. tomllib (with re, typing and datetime)
        # is most of a warm hook's start: 20-30 ms on a loaded 2-core machine.
        return Settings()
    import tomllib

    try:
        return Settings(tomllib.loads(data.decode("utf-8")))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return Settings()


# Thread counts of the BLAS libraries numpy may be built on (OpenBLAS, MKL, Accelerate, OpenMP builds).
# A hook's matrix products are small: on 2 cores that the agent keeps busy, OpenBLAS's second thread
# waits for a core and spins when it has one, which measured 16-60 ms per product (and slowed the
# embedding model beside it) against 0.2 ms on one thread (docs/speed.md).
ONE_THREAD = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "OMP_NUM_THREADS")


def one_thread() -> None:
    """Run BLAS on one thread in this process and its children, unless the user set a count: a hook
    never competes with the agent for cores. Read when numpy loads, so call it before."""
    for name in ONE_THREAD:
        os.environ.setdefault(name, "1")


# -- which command line is a hook call -------------------------------------------------------------


def argv_value(argv: list[str], flag: str) -> str | None:
    """The value of `flag` in argv (`--flag VALUE` or `--flag=VALUE`; the last one wins, as in click),
    "" for a bare `--flag` at the end, None when it is not given."""
    found = None
    for index, arg in enumerate(argv):
        if arg == flag:
            found = argv[index + 1] if index + 1 < len(argv) else ""
        elif arg.startswith(flag + "="):
            found = arg[len(flag) + 1 :]
    return found


def hook_call(argv: list[str]) -> tuple[str, str] | None:
    """(command, harness) when argv is a hook call: `--harness` is given, to anything but `habitus hooks`
    (where it names the harness to configure). The command is argv's first word that is not an option."""
    harness = argv_value(argv, "--harness")
    command = next((a for a in argv if not a.startswith("-")), None)
    if harness is None or command is None or command == "hooks":
        return None
    return command, harness


def is_hook_call(argv: list[str]) -> bool:
    return hook_call(argv) is not None


# -- the deadline of this hook call --------------------------------------------------------------

_lock_wait_s: float | None = None  # set while a hook call is armed: the cap on every lock wait
_deadline: float | None = None  # the armed call's deadline (monotonic)
_watchdog: threading.Timer | None = None
_armed_for: tuple[str, str | None, str | None] | None = None  # (command, harness, root) to log under
_ticking = False  # an ITIMER_REAL of ours is set


def lock_wait(wait: float) -> float:
    """The lock wait to use: `wait`, capped in hook mode."""
    return wait if _lock_wait_s is None else min(wait, _lock_wait_s)


def remaining(deadline: float) -> float:
    return deadline - time.monotonic()


def arm(
    deadline: float,
    settings: Settings,
    *,
    command: str,
    harness: str | None,
    root: str | None,
    clock: bool = True,
    hard: bool = False,
) -> None:
    """Start one hook call: cap its lock waits; with `clock`, SIGALRM at `deadline` (monotonic; main
    thread only); with `hard`, a watchdog that ends the process GRACE_S later. Without `clock` (a call
    inside a host process, such as a test's CliRunner) only the lock waits are capped."""
    global _lock_wait_s, _watchdog, _armed_for, _ticking, _deadline
    import signal
    import threading

    disarm()
    _lock_wait_s = settings.lock_wait_ms / 1000
    _deadline = deadline
    _armed_for = (command, harness, root)
    if not clock:
        return
    left = max(0.001, remaining(deadline))
    signal.signal(signal.SIGALRM, _expired)
    signal.setitimer(signal.ITIMER_REAL, left)
    _ticking = True
    if hard:
        _watchdog = threading.Timer(left + GRACE_S, _stuck)
        _watchdog.daemon = True
        _watchdog.start()


def disarm() -> None:
    """Stop the clock (the call ended, or is being reported). Safe to call any number of times."""
    global _lock_wait_s, _watchdog, _ticking, _deadline
    if _ticking:
        import signal

        signal.setitimer(signal.ITIMER_REAL, 0)
        _ticking = False
    if _watchdog is not None:
        _watchdog.cancel()
        _watchdog = None
    _lock_wait_s = None
    _deadline = None


def deadline_error(detail: str) -> Exception:
    from habitus.errors import HabitusError

    return HabitusError(
        "deadline",
        f"the hook's time budget ran out ({detail}); it exited 0 and injected nothing",
        hint="raise hooks.budget_ms, or look for a long-held lock or a slow model",
    )


def _expired(signum: int, frame: Any) -> None:
    import signal

    if not _ticking:
        return  # delivered just after disarm(): the call is already ending

    # Again every 50 ms until disarmed, in case a broad `except Exception` swallowed this one.
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    raise deadline_error("hooks.budget_ms")


def armed() -> bool:
    return _lock_wait_s is not None


def expired() -> bool:
    """Whether the armed hook call's budget is spent (False when no call is armed)."""
    return _deadline is not None and remaining(_deadline) <= 0


def _stuck() -> None:
    """The watchdog: the main thread did not come back from C code after the deadline."""
    try:
        log(deadline_error("stuck past hooks.budget_ms"))
    finally:
        os._exit(0)


def log(error: Exception) -> None:
    """Append a hook failure to errors.jsonl under the armed call's names; never raises, takes no lock."""
    command, harness, root = _armed_for or ("habitus", None, None)
    try:
        from habitus.errors import HabitusError
        from habitus.state import errorlog
        from habitus.state.root import StateRoot

        if not isinstance(error, HabitusError):
            error = HabitusError("failed", f"internal error ({type(error).__name__})")
        errorlog.append(StateRoot.at(root), error, command=command, harness=harness)
    except Exception:
        pass  # nowhere left to report; stay silent as the hook protocol requires


def log_deadline(argv: list[str], detail: str) -> None:
    """Log `deadline` for a hook call that never reached cli (the worker client's own give-up)."""
    global _armed_for
    call = hook_call(argv)
    _armed_for = (call[0] if call else "habitus", call[1] if call else None, argv_value(argv, "--root"))
    log(deadline_error(detail))
