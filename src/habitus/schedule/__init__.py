"""A daily `habitus analyze`: systemd user units written only on request, or a crontab line.

`install` writes `habitus-analyze.service` and `habitus-analyze.timer` into
`$XDG_CONFIG_HOME/systemd/user/` (default `~/.config/systemd/user/`) and enables the timer with
`systemctl --user`; `status` compares what is there with what `install` would write; `remove` deletes
only files whose first line is habitus's marker. The service runs the absolute path of the habitus
that installed it, with `--root` naming the state root, sandboxed (read-only system and home, except
the state root). Domain code: returns values or raises HabitusError; never prints.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from habitus.errors import HabitusError
from habitus.state import files

UNIT = "habitus-analyze"
ON_CALENDAR = "*-*-* 03:30:00"
CRON_TIME = "30 3 * * *"
TIMEOUT_START_S = 900
MARKER = "# habitus-managed unit: written by `habitus schedule install`; `habitus schedule remove` deletes it"
MAX_UNIT_BYTES = 64 * 1024
_PLAIN = re.compile(r"^[A-Za-z0-9_./:@+=,-]+$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def unit_dir() -> Path:
    """Where systemd looks for a user's own units: $XDG_CONFIG_HOME/systemd/user."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"
    return base / "systemd" / "user"


def unit_paths() -> dict[str, Path]:
    folder = unit_dir()
    return {"service": folder / f"{UNIT}.service", "timer": folder / f"{UNIT}.timer"}


def executable() -> list[str]:
    """The command that runs this habitus: the console script when that is what runs, else python -m.

    The console script's path is made absolute but not resolved through symlinks, so that a
    ~/.local/bin/habitus link keeps pointing at whatever a later upgrade installs. Under `python -m
    habitus` (or in process, as in tests) the interpreter itself is named: in a virtual environment its
    path must stay unresolved, or the environment's packages would be lost.
    """
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) == "habitus" and os.path.isfile(script) and os.access(script, os.X_OK):
        return [os.path.abspath(script)]
    return [os.path.abspath(sys.executable), "-m", "habitus"]


def _checked(path: str, what: str) -> str:
    if _CONTROL.search(path):
        raise HabitusError(
            "usage", f"the {what} path holds a line break or control character; a unit file cannot name it"
        )
    return path


def _systemd_word(word: str) -> str:
    """One ExecStart word: quoted when needed, with systemd's %-specifiers and $-variables escaped."""
    escaped = word.replace("%", "%%").replace("$", "$$")
    if _PLAIN.match(escaped):
        return escaped
    return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _systemd_path(path: str) -> str:
    """A path in a list setting such as ReadWritePaths= (specifiers expand there; variables do not)."""
    escaped = path.replace("%", "%%")
    if _PLAIN.match(escaped):
        return escaped
    return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'


def command(root: Path) -> list[str]:
    """The command the schedule runs."""
    argv = [*executable(), "analyze", "--root", str(root)]
    for word in argv:
        _checked(word, "habitus or state root")
    return argv


def render(root: Path) -> dict[str, str]:
    """The two unit files `install` writes for this state root, by kind ("service", "timer")."""
    argv = command(root)
    root_text = str(root)
    # PrivateTmp gives the service its own /tmp: a state root under /tmp would vanish from its view.
    in_tmp = any(root_text == t or root_text.startswith(t + "/") for t in ("/tmp", "/var/tmp"))
    service = [
        MARKER,
        "[Unit]",
        "Description=habitus analyze: learn candidate habits from unread observations",
        "Documentation=man:habitus-analyze(1) man:habitus-schedule(1)",
        "",
        "[Service]",
        "Type=oneshot",
        "ExecStart=" + " ".join(_systemd_word(w) for w in argv),
        "# 75 = another analyze holds the lock: not a failure, the next run catches up",
        "SuccessExitStatus=75",
        f"TimeoutStartSec={TIMEOUT_START_S}",
        "Nice=10",
        "IOSchedulingClass=idle",
        "UMask=0077",
        "NoNewPrivileges=yes",
        *([] if in_tmp else ["PrivateTmp=yes"]),
        "ProtectSystem=strict",
        "ProtectHome=read-only",
        f"ReadWritePaths={_systemd_path(root_text)}",
        "ProtectKernelTunables=yes",
        "ProtectKernelModules=yes",
        "ProtectControlGroups=yes",
        "RestrictSUIDSGID=yes",
        "RestrictRealtime=yes",
        "LockPersonality=yes",
    ]
    timer = [
        MARKER,
        "[Unit]",
        "Description=Run habitus analyze daily at 03:30 local time",
        "Documentation=man:habitus-schedule(1)",
        "",
        "[Timer]",
        f"OnCalendar={ON_CALENDAR}",
        "# a run missed while the machine was off happens at the next start",
        "Persistent=true",
        f"Unit={UNIT}.service",
        "",
        "[Install]",
        "WantedBy=timers.target",
    ]
    return {"service": "\n".join(service) + "\n", "timer": "\n".join(timer) + "\n"}


def crontab_line(root: Path) -> str:
    """A crontab entry for the same schedule (cron turns an unescaped % into a newline)."""
    words = " ".join(shlex.quote(w) for w in command(root)).replace("%", "\\%")
    return f"{CRON_TIME} {words} >/dev/null"


def _read_unit(path: Path) -> str | None:
    """The text of a unit file, None when absent. A symlink, a folder or an oversized file is not ours.

    Read without files.read_bytes: that one tightens modes, and a file that is not ours must not change.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        return ""  # a symlink (ELOOP), or unreadable: not ours
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_UNIT_BYTES + 1)
    except OSError:
        return ""  # a folder (EISDIR), or unreadable
    return "" if len(data) > MAX_UNIT_BYTES else data.decode("utf-8", "replace")


def _managed(text: str | None) -> bool:
    return text is not None and text.split("\n", 1)[0] == MARKER


def _refuse_foreign(existing: dict[str, str | None], paths: dict[str, Path]) -> None:
    for kind, text in existing.items():
        if text is not None and not _managed(text):
            raise HabitusError(
                "refused",
                f"{paths[kind]} was not written by habitus; it is left untouched",
                hint="move it away yourself if habitus should manage this schedule",
            )


def systemctl(*args: str) -> dict[str, Any] | None:
    """Run `systemctl --user ARGS`; None when there is no systemctl on PATH."""
    program = shutil.which("systemctl")
    if program is None:
        return None
    try:
        done = subprocess.run(
            [program, "--user", *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"args": list(args), "exit": None, "output": "timed out after 60 s"}
    text = (done.stdout or done.stderr).decode("utf-8", "replace").strip()
    return {"args": list(args), "exit": done.returncode, "output": text.split("\n", 1)[0][:200]}


def install(root: Path) -> dict[str, Any]:
    """Write (or refresh) the units and enable the timer. Refuses to overwrite a file habitus did not write."""
    paths = unit_paths()
    wanted = render(root)
    existing = {kind: _read_unit(path) for kind, path in paths.items()}
    _refuse_foreign(existing, paths)
    actions: dict[str, dict[str, str]] = {}
    for kind, path in paths.items():
        if existing[kind] == wanted[kind]:
            action = "unchanged"
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            files.atomic_write(path, wanted[kind].encode("utf-8"))
            action = "created" if existing[kind] is None else "replaced"
        actions[kind] = {"path": str(path), "action": action}
    result: dict[str, Any] = {
        "unit_dir": str(unit_dir()),
        "files": actions,
        "command": command(root),
        "on_calendar": ON_CALENDAR,
        "enabled": False,
    }
    steps = [("daemon-reload",), ("enable", "--now", f"{UNIT}.timer")]
    for step in steps:
        outcome = systemctl(*step)
        if outcome is None:
            result["systemctl"] = "not found"
            result["hint"] = (
                "no systemctl on PATH: the units are written; enable them where systemd runs with "
                f"`systemctl --user daemon-reload && systemctl --user enable --now {UNIT}.timer`, "
                "or use `habitus schedule install --print-crontab`"
            )
            return result
        if outcome["exit"] != 0:
            raise HabitusError(
                "systemctl_failed",
                f"systemctl --user {' '.join(step)} failed (exit {outcome['exit']}); the unit files are written",
                hint="is a systemd user session running? Otherwise use `habitus schedule install --print-crontab`",
                systemctl=outcome,
            )
    result["systemctl"] = "ok"
    result["enabled"] = True
    return result


def status(root: Path) -> dict[str, Any]:
    """What is installed, whether it is habitus's, and whether it matches what install would write now."""
    paths = unit_paths()
    wanted = render(root)
    report: dict[str, Any] = {}
    for kind, path in paths.items():
        text = _read_unit(path)
        report[kind] = {
            "path": str(path),
            "exists": text is not None,
            "managed": _managed(text),
            "matches": text == wanted[kind],
        }
    timer: dict[str, Any] | None = None
    if report["timer"]["exists"]:
        enabled = systemctl("is-enabled", f"{UNIT}.timer")
        active = systemctl("is-active", f"{UNIT}.timer")
        if enabled is not None and active is not None:
            timer = {"enabled": enabled["output"] or None, "active": active["output"] or None}
    return {
        "unit_dir": str(unit_dir()),
        "installed": all(f["managed"] for f in report.values()),
        "current": all(f["matches"] for f in report.values()),
        "files": report,
        "timer": timer,
        "command": command(root),
        "on_calendar": ON_CALENDAR,
    }


def remove() -> dict[str, Any]:
    """Disable the timer and delete the units habitus wrote; refuse when a file there is not habitus's."""
    paths = unit_paths()
    existing = {kind: _read_unit(path) for kind, path in paths.items()}
    _refuse_foreign(existing, paths)
    result: dict[str, Any] = {"unit_dir": str(unit_dir()), "removed": [], "absent": []}
    if all(text is None for text in existing.values()):
        result["absent"] = [str(p) for p in paths.values()]
        result["systemctl"] = "not run"
        return result
    disabled = systemctl("disable", "--now", f"{UNIT}.timer") if existing["timer"] is not None else None
    # `disable` removes the timers.target.wants link; do it ourselves when systemctl could not.
    link = unit_dir() / "timers.target.wants" / f"{UNIT}.timer"
    if link.is_symlink() and os.path.normpath(os.path.join(link.parent, os.readlink(link))) == str(
        paths["timer"]
    ):
        link.unlink()
    for kind, path in paths.items():
        if existing[kind] is None:
            result["absent"].append(str(path))
            continue
        if not _managed(_read_unit(path)):  # changed since we looked: leave it
            raise HabitusError("refused", f"{path} changed while removing; it is left untouched")
        path.unlink()
        result["removed"].append(str(path))
    files.fsync_dir(unit_dir())
    reloaded = systemctl("daemon-reload")
    if reloaded is None:
        result["systemctl"] = "not found"
    else:
        failed = [o for o in (disabled, reloaded) if o is not None and o["exit"] != 0]
        result["systemctl"] = "ok" if not failed else "failed"
        if failed:
            result["systemctl_failures"] = failed
    return result
