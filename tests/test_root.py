"""State-root resolution: --root, then HABITUS_HOME, then XDG_DATA_HOME, then ~/.local/share."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run
from habitus.errors import HabitusError
from habitus.state.root import resolve


def test_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HABITUS_HOME", str(tmp_path / "env"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert resolve(str(tmp_path / "opt")) == tmp_path / "opt"
    assert resolve(None) == tmp_path / "env"
    monkeypatch.delenv("HABITUS_HOME")
    assert resolve(None) == tmp_path / "xdg" / "habitus"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert resolve(None) == tmp_path / "home" / ".local" / "share" / "habitus"


def test_relative_root_becomes_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve("here") == tmp_path / "here"


def test_filesystem_root_is_refused() -> None:
    with pytest.raises(HabitusError):
        resolve("/")


def test_status_never_creates_state(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    out = run(["status", "--root", str(root)])
    assert out.exit == 0
    assert out.result["exists"] is False
    assert out.result["stores"]["ledger"]["exists"] is False
    assert not root.exists()


def test_status_reports_a_migrated_ledger(state_root: Path) -> None:
    from habitus.state import ledger
    from habitus.state.root import StateRoot

    ledger.store(StateRoot(state_root)).open_write().close()
    report = run(["status"]).result
    assert report["stores"]["ledger"]["schema_version"] == report["stores"]["ledger"]["schema_current"]
    assert report["stores"]["ledger"]["needs_migration"] is False
