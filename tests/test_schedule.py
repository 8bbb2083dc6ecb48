"""habitus schedule: systemd user units written, checked and removed; a fake systemctl records calls."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BIN, run, run_process
from habitus import schedule

UNIT_FILES = ("habitus-analyze.service", "habitus-analyze.timer")
FAKE = """#!{python}
import json, os, sys
with open(os.environ["FAKE_SYSTEMCTL_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if "is-enabled" in sys.argv:
    print(os.environ.get("FAKE_SYSTEMCTL_ENABLED", "enabled"))
if "is-active" in sys.argv:
    print("active")
sys.exit(int(os.environ.get("FAKE_SYSTEMCTL_EXIT", "0")))
"""


class Systemd:
    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.config = tmp_path / "xdg-config"
        self.units = self.config / "systemd" / "user"
        self.log = tmp_path / "systemctl.log"
        self.bin = tmp_path / "fake-bin"
        self.bin.mkdir()
        self.empty_bin = tmp_path / "no-systemctl-bin"
        self.empty_bin.mkdir()
        fake = self.bin / "systemctl"
        fake.write_text(FAKE.format(python=sys.executable))
        fake.chmod(0o755)
        self.monkeypatch = monkeypatch
        monkeypatch.setenv("XDG_CONFIG_HOME", str(self.config))
        monkeypatch.setenv("FAKE_SYSTEMCTL_LOG", str(self.log))
        monkeypatch.setenv("PATH", f"{self.bin}{os.pathsep}{os.environ['PATH']}")

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def absent(self) -> None:
        """No systemctl anywhere on PATH."""
        self.monkeypatch.setenv("PATH", str(self.empty_bin))

    def unit(self, name: str) -> str:
        return (self.units / name).read_text()


@pytest.fixture
def systemd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Systemd:
    return Systemd(tmp_path, monkeypatch)


def exec_start(service: str) -> list[str]:
    line = next(x for x in service.splitlines() if x.startswith("ExecStart="))
    return shlex.split(line[len("ExecStart=") :].replace("%%", "%").replace("$$", "$"))


def test_install_writes_hardened_units_and_enables_the_timer(systemd: Systemd, state_root: Path) -> None:
    outcome = run(["schedule", "install"])
    assert outcome.exit == 0, outcome.stderr
    result = outcome.result
    assert result["enabled"] is True and result["systemctl"] == "ok"
    assert {f["action"] for f in result["files"].values()} == {"created"}
    assert systemd.calls() == [
        ["--user", "daemon-reload"],
        ["--user", "enable", "--now", "habitus-analyze.timer"],
    ]
    service, timer = systemd.unit(UNIT_FILES[0]), systemd.unit(UNIT_FILES[1])
    for text in (service, timer):
        assert text.startswith(schedule.MARKER + "\n")
    # in process, argv[0] is pytest: the interpreter runs the package
    assert exec_start(service) == [sys.executable, "-m", "habitus", "analyze", "--root", str(state_root)]
    assert result["command"] == exec_start(service)
    for line in (
        "Type=oneshot",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ProtectHome=read-only",
        f"ReadWritePaths={state_root}",
        "Nice=10",
        "TimeoutStartSec=900",
        "SuccessExitStatus=75",
        "UMask=0077",
    ):
        assert line in service.splitlines(), line
    for line in ("OnCalendar=*-*-* 03:30:00", "Persistent=true", "WantedBy=timers.target"):
        assert line in timer.splitlines(), line
    # the sandbox may write only to the state root, so install creates it (0700)
    assert stat.S_IMODE(state_root.stat().st_mode) == 0o700


def test_the_scheduled_command_runs(systemd: Systemd, state_root: Path) -> None:
    """What the unit would execute is a working habitus, from the console script or in process."""
    for outcome in (run(["schedule", "install"]), run_process(["schedule", "install"])):
        assert outcome.exit == 0, outcome.stderr
        command = outcome.result["command"]
        assert os.path.isabs(command[0])
        done = subprocess.run(
            [*command[:-3], "status", "--root", str(state_root)], capture_output=True, timeout=60
        )
        assert done.returncode == 0 and json.loads(done.stdout)["root"] == str(state_root)
    # the console script names itself, unresolved
    assert command[0] == str(BIN / "habitus")
    assert exec_start(systemd.unit(UNIT_FILES[0]))[0] == str(BIN / "habitus")


def test_install_is_idempotent_and_status_reports_current(systemd: Systemd, state_root: Path) -> None:
    assert run(["schedule", "install"]).exit == 0
    before = {name: systemd.unit(name) for name in UNIT_FILES}
    again = run(["schedule", "install"]).result
    assert {f["action"] for f in again["files"].values()} == {"unchanged"}
    assert {name: systemd.unit(name) for name in UNIT_FILES} == before
    status = run(["schedule", "status"]).result
    assert status["installed"] is True and status["current"] is True
    assert status["timer"] == {"enabled": "enabled", "active": "active"}
    assert all(f["exists"] and f["managed"] and f["matches"] for f in status["files"].values())


def test_status_notices_another_root_and_install_replaces(systemd: Systemd, tmp_path: Path) -> None:
    assert run(["schedule", "install"]).exit == 0
    other = tmp_path / "other root"
    status = run(["schedule", "status", "--root", str(other)]).result
    assert status["installed"] is True and status["current"] is False
    assert status["files"]["timer"]["matches"] is True and status["files"]["service"]["matches"] is False
    assert not other.exists()  # status writes nothing
    replaced = run(["schedule", "install", "--root", str(other)]).result
    assert replaced["files"]["service"]["action"] == "replaced"
    assert replaced["files"]["timer"]["action"] == "unchanged"
    assert exec_start(systemd.unit(UNIT_FILES[0]))[-1] == str(other)


def test_status_when_nothing_is_installed(systemd: Systemd) -> None:
    status = run(["schedule", "status"]).result
    assert status["installed"] is False and status["current"] is False and status["timer"] is None
    assert not any(f["exists"] for f in status["files"].values())
    assert systemd.calls() == [] and not systemd.units.exists()


def test_remove_deletes_only_what_install_wrote(systemd: Systemd) -> None:
    assert run(["schedule", "install"]).exit == 0
    wants = systemd.units / "timers.target.wants"
    wants.mkdir()
    (wants / "habitus-analyze.timer").symlink_to(systemd.units / "habitus-analyze.timer")
    (wants / "other.timer").symlink_to(systemd.units / "other.timer")
    (systemd.units / "other.service").write_text("[Service]\nExecStart=/bin/true\n")
    result = run(["schedule", "remove"]).result
    assert sorted(Path(p).name for p in result["removed"]) == sorted(UNIT_FILES)
    assert not any((systemd.units / name).exists() for name in UNIT_FILES)
    assert not (wants / "habitus-analyze.timer").is_symlink()
    assert (wants / "other.timer").is_symlink() and (systemd.units / "other.service").exists()
    assert systemd.calls()[-2:] == [
        ["--user", "disable", "--now", "habitus-analyze.timer"],
        ["--user", "daemon-reload"],
    ]
    assert result["systemctl"] == "ok"
    again = run(["schedule", "remove"]).result
    assert again["removed"] == [] and len(again["absent"]) == 2


@pytest.mark.parametrize("name", UNIT_FILES)
def test_a_foreign_unit_is_never_touched(name: str, systemd: Systemd) -> None:
    systemd.units.mkdir(parents=True)
    foreign = systemd.units / name
    foreign.write_text("[Unit]\nDescription=mine\n")
    foreign.chmod(0o644)
    for args in (["schedule", "install"], ["schedule", "remove"]):
        outcome = run(args)
        assert outcome.exit == 3 and outcome.error["code"] == "refused" and not outcome.stdout
        assert foreign.read_text() == "[Unit]\nDescription=mine\n"
        assert stat.S_IMODE(foreign.stat().st_mode) == 0o644
    other = next(n for n in UNIT_FILES if n != name)
    assert not (systemd.units / other).exists() and systemd.calls() == []
    status = run(["schedule", "status"]).result
    assert (
        status["installed"] is False
        and status["files"]["timer" if name.endswith("timer") else "service"]["managed"] is False
    )


def test_a_symlinked_unit_is_foreign(systemd: Systemd, tmp_path: Path) -> None:
    systemd.units.mkdir(parents=True)
    target = tmp_path / "elsewhere.service"
    target.write_text(schedule.MARKER + "\n[Service]\n")
    (systemd.units / UNIT_FILES[0]).symlink_to(target)
    assert run(["schedule", "install"]).error["code"] == "refused"
    assert run(["schedule", "remove"]).error["code"] == "refused"
    assert target.read_text() == schedule.MARKER + "\n[Service]\n"


def test_without_systemctl_the_units_are_written_not_enabled(systemd: Systemd) -> None:
    systemd.absent()
    result = run(["schedule", "install"]).result
    assert result["enabled"] is False and result["systemctl"] == "not found" and "hint" in result
    assert all((systemd.units / name).exists() for name in UNIT_FILES)
    assert run(["schedule", "status"]).result["timer"] is None
    removed = run(["schedule", "remove"]).result
    assert len(removed["removed"]) == 2 and removed["systemctl"] == "not found"


def test_failing_systemctl_is_a_clear_error(systemd: Systemd, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SYSTEMCTL_EXIT", "1")
    outcome = run(["schedule", "install"])
    assert outcome.exit == 1 and not outcome.stdout
    error = outcome.error
    assert error["code"] == "systemctl_failed" and error["systemctl"]["args"] == ["daemon-reload"]
    assert all((systemd.units / name).exists() for name in UNIT_FILES)  # as the message says
    removed = run(["schedule", "remove"]).result  # removal still cleans up, and says systemctl failed
    assert len(removed["removed"]) == 2 and removed["systemctl"] == "failed"


def test_print_crontab_writes_nothing(systemd: Systemd, tmp_path: Path) -> None:
    root = tmp_path / "odd root 100%"
    result = run(["schedule", "install", "--print-crontab", "--root", str(root)]).result
    line = result["crontab"]
    assert line.startswith("30 3 * * * ") and line.endswith(" >/dev/null")
    assert "\\%" in line and "100%'" not in line.replace("\\%", "")
    words = shlex.split(line[len("30 3 * * * ") : -len(" >/dev/null")].replace("\\%", "%"))
    assert words == result["command"] and words[-2:] == ["--root", str(root)]
    assert not root.exists() and not systemd.config.exists() and systemd.calls() == []


def test_unit_escaping_of_odd_paths(systemd: Systemd, tmp_path: Path) -> None:
    root = tmp_path / 'my "root" $HOME 50%'
    assert run(["schedule", "install", "--root", str(root)]).exit == 0
    service = systemd.unit(UNIT_FILES[0])
    assert exec_start(service)[-1] == str(root)
    line = next(x for x in service.splitlines() if x.startswith("ExecStart="))
    assert "$$HOME" in line and "50%%" in line
    rw = next(x for x in service.splitlines() if x.startswith("ReadWritePaths="))
    assert shlex.split(rw[len("ReadWritePaths=") :].replace("%%", "%")) == [str(root)]


def test_a_path_with_a_line_break_is_refused(systemd: Systemd, tmp_path: Path) -> None:
    outcome = run(["schedule", "install", "--root", str(tmp_path / "bad\nline")])
    assert outcome.exit == 2 and outcome.error["code"] == "usage"
    assert not systemd.config.exists()


def test_private_tmp_only_when_the_root_is_not_in_tmp() -> None:
    assert "PrivateTmp=yes" in schedule.render(Path("/home/ada/.local/share/habitus"))["service"]
    assert "PrivateTmp=yes" not in schedule.render(Path("/tmp/habitus-state"))["service"]
    assert "PrivateTmp=yes" not in schedule.render(Path("/var/tmp/h"))["service"]
    assert "PrivateTmp=yes" in schedule.render(Path("/tmpfs-data/h"))["service"]


def test_relative_xdg_config_home_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/config")
    assert schedule.unit_dir() == tmp_path / "home" / ".config" / "systemd" / "user"
