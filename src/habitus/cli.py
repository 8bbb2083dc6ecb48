"""The root `habitus` group: a lazy map of subcommands, and the one place exceptions become exit codes.

Subcommand modules are imported only when their command runs, so `habitus --version` and
`habitus --help` load click and the standard library only.
"""

from __future__ import annotations

import os
import sys
import time
from io import BytesIO, TextIOWrapper
from typing import Any

import click

from habitus import __version__, hookmode
from habitus.errors import HabitusError
from habitus.lazygroup import LazyGroup

# name -> (module[:attribute], one-line help). The help is repeated here so that `habitus --help`
# need not import every command; a test checks it matches each command's own first line.
COMMANDS: dict[str, tuple[str, str]] = {
    "advise": ("habitus.commands.advise", "Review recent agent work and deliver at most one note."),
    "analyze": ("habitus.commands.analyze", "Propose candidate habits from unread observations."),
    "backup": ("habitus.commands.backup", "Write a consistent backup of the state root."),
    "capture": ("habitus.commands.capture", "Store hook events and transcripts as redacted observations."),
    "config": ("habitus.commands.config", "Read and change settings in config.toml."),
    "dedupe": ("habitus.commands.dedupe", "Find and resolve possible duplicate habits."),
    "demo": ("habitus.commands.demo", "Run the whole loop offline on a temporary state root."),
    "eval": (
        "habitus.commands.eval",
        "Measure habitus on a labelled set: precision, recall and a confusion table.",
    ),
    "habit": ("habitus.commands.habit", "Review habits: list, show, declare, approve, reject, ..."),
    "hook": ("habitus.commands.hook", "Answer one hook event with every habitus command planned for it."),
    "hooks": (
        "habitus.commands.hooks",
        "Print, install or uninstall hook settings for Claude Code, Codex, Gemini.",
    ),
    "mcp": ("habitus.commands.mcp", "Serve memory and read-only habit tools to an agent over MCP (stdio)."),
    "memory": ("habitus.commands.memory", "Retain, recall and retrieve durable memories."),
    "model": ("habitus.commands.model", "Manage local embedding models: add, list, use, remove."),
    "report": ("habitus.commands.report", "Write an HTML page of recent activity and the habit list."),
    "restore": ("habitus.commands.restore", "Restore the state root from a backup."),
    "review": (
        "habitus.commands.review",
        "Review habits in the terminal: approve, reject, edit, merge, ...",
    ),
    "schedule": ("habitus.commands.schedule", "Install, check or remove the daily analyze timer."),
    "select": ("habitus.commands.select", "Choose the approved habits that apply to a prompt."),
    "status": ("habitus.commands.status", "Report the state root, versions, settings and counts."),
    "worker": ("habitus.commands.worker", "Report on or stop the warm worker that answers hooks."),
    "verify": (
        "habitus.commands.verify",
        "Check the state root's stores, files and permissions (report only).",
    ),
}


class RootGroup(LazyGroup):
    """The top-level group: its main() is where hook mode is armed and every failure becomes an exit."""

    def main(  # type: ignore[override]
        self,
        args: list[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        global _depth
        argv = list(sys.argv[1:] if args is None else args)
        timed = False
        _depth += 1
        try:
            timed = _arm_hook(argv, process=args is None)  # inside: a budget already spent is a failure
            _refuse_undecodable(argv)
            result = super().main(argv, prog_name or "habitus", complete_var, standalone_mode=False, **extra)
            code = result if isinstance(result, int) and not isinstance(result, bool) else 0
        except BaseException as exc:  # the one place every failure becomes an exit status
            if isinstance(exc, SystemExit):
                raise
            code = _fail(exc, argv, nested=_depth > 1)
        finally:
            _depth -= 1
            if timed:
                hookmode.disarm()
            guard = sys.modules.get("habitus.state.guard")
            if guard is not None:
                guard.release_all()  # the command is over: let a waiting restore proceed
        sys.exit(code)


_depth = 0  # RootGroup.main calls under way: above 1, a command line run by `habitus hook` (run_line)


def run_line(argv: list[str], stdin: bytes) -> tuple[int, bytes]:
    """Run one habitus command line in this process as its own process would run it: `stdin` as its
    standard input, its standard output captured. (exit status, stdout). Inside a hook call (`habitus
    hook`, the worker) it runs under that call's deadline and lock-wait cap, and a failure of this line
    is logged and leaves the caller's clock running, so the next line is still bounded by it."""
    saved = sys.stdin, sys.stdout
    out = BytesIO()
    sys.stdin = TextIOWrapper(BytesIO(stdin), encoding="utf-8")
    sys.stdout = TextIOWrapper(out, encoding="utf-8", write_through=True)
    code = 0
    try:
        root.main(args=argv, prog_name="habitus")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        result = b""
        try:
            sys.stdout.flush()
            result = out.getvalue()  # before the wrapper goes: it closes what it wraps
        except (OSError, ValueError):
            pass
        sys.stdin, sys.stdout = saved
    return code, result


def _refuse_undecodable(argv: list[str]) -> None:
    """Python hands non-UTF-8 argument bytes over as lone surrogates, which fail later, deep inside
    a command (after it may have written a file): refuse them first, naming the position only."""
    for position, arg in enumerate(argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            raise HabitusError(
                "bad_request",
                f"argument {position} is not valid UTF-8",
                hint="pass paths and values as UTF-8",
            ) from None


def _as_error(exc: BaseException) -> HabitusError:
    """Classify an exception as a documented error. (click itself exits 1 quietly on a closed stdout.)"""
    if isinstance(exc, HabitusError):
        return exc
    if isinstance(exc, click.UsageError):
        return HabitusError("usage", exc.format_message(), hint="see --help")
    if isinstance(exc, click.ClickException):
        return HabitusError("failed", exc.format_message())
    if isinstance(exc, (KeyboardInterrupt, click.Abort)):
        return HabitusError("interrupted", "interrupted")
    if type(exc).__module__ == "sqlite3":
        from habitus.state.db import translate

        return translate(exc, getattr(exc, "filename", None) or "database")  # type: ignore[arg-type]
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return HabitusError("io_error", f"{where}{exc.strerror or type(exc).__name__}")
    return HabitusError(
        "failed",
        f"internal error ({type(exc).__name__})",
        hint="set HABITUS_DEBUG=1 to print a traceback, and report it",
    )


def _arm_hook(argv: list[str], *, process: bool) -> bool:
    """Start hook mode (habitus.hookmode) unless the caller, the worker, already has. The clock runs
    only when this is the process's own command line, not a call hosted by a test runner."""
    call = hookmode.hook_call(argv)
    if call is None or hookmode.armed():
        return False
    root = hookmode.argv_value(argv, "--root")
    try:
        from habitus.state.root import resolve

        settings = hookmode.read_settings(resolve(root))
    except HabitusError:
        settings = hookmode.Settings()
    # From the process's start; a call hosted by another process (a test's CliRunner) starts now.
    started = hookmode.STARTED if process else time.monotonic()
    deadline = started + settings.budget_ms / 1000
    hookmode.arm(deadline, settings, command=call[0], harness=call[1], root=root, clock=process, hard=process)
    return True


def _fail(exc: BaseException, argv: list[str], *, nested: bool = False) -> int:
    if not nested:  # a line run by `habitus hook` leaves the clock to the hook call around it
        hookmode.disarm()  # reporting must not be cut short by the clock it reports
    from habitus import io

    error = _as_error(exc)
    if os.environ.get("HABITUS_DEBUG") and not isinstance(exc, HabitusError):
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    call = hookmode.hook_call(argv)
    if call is not None:
        # Hook mode: a harness reads exit 2 as "block", so every failure is silent and logged.
        _log_hook_failure(error, argv, call)
        return 0
    io.emit_error(error, for_people=_error_for_people(argv))
    return error.exit


def _error_for_people(argv: list[str]) -> bool:
    """Words on a terminal's stderr; the JSON line for a pipe, a file, or when --json was given."""
    if "--json" in argv:
        return False
    from habitus import render

    return render.for_people(sys.stderr)


def _log_hook_failure(error: HabitusError, argv: list[str], call: tuple[str, str]) -> None:
    try:
        from habitus.state import errorlog
        from habitus.state.root import StateRoot

        root = StateRoot.at(hookmode.argv_value(argv, "--root"))
        errorlog.append(root, error, command=call[0], harness=call[1])
    except Exception:
        pass  # nowhere left to report; stay silent as the hook protocol requires


@click.group(
    cls=RootGroup,
    table=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "-V", "--version", prog_name="habitus", message="%(prog)s %(version)s")
def root() -> None:
    """Reviewed habits, durable memory and a watchdog reviewer for coding agents.

    Every command reads one JSON object on stdin and writes one JSON object on stdout;
    errors are one JSON line on stderr. On a terminal some commands print a table and
    errors read as words instead (--json keeps JSON). Exit status: 0 ok, 1 failed, 2 usage, 3 refused
    (fails closed), 75 busy, 130 interrupted.

    \b
    Examples:
      habitus status --pretty
      habitus config set capture.enabled true
      habitus demo
    """


def main() -> None:
    root.main(prog_name="habitus")
