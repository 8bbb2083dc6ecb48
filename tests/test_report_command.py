"""`habitus report`: the file it writes (0600, atomic, escaped, redacted again) and its refusals,
each of which writes nothing."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run, run_process
from report_helpers import candidate, days_back, declare, select_rows

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token shape the redactor knows


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_report_writes_a_private_self_contained_page(state_root: Path, tmp_path: Path) -> None:
    declare("When a test fails <script>document.title='pwned'</script>", "Read the whole error & fix it")
    candidate(
        state_root,
        1,
        "When the user asks for a commit",
        "Run the linter first",
        [(days_back(1), "you forgot the linter again"), (days_back(0), f"use token {TOKEN} for the push")],
    )
    select_rows(state_root, {days_back(0): [1]})
    out = tmp_path / "page.html"
    done = run(["report", "--out", str(out), "--days", "7"])
    assert done.exit == 0, done.stderr
    result = done.result
    assert result["path"] == str(out) and result["bytes"] == out.stat().st_size
    assert result["habits"] == {"active": 1, "candidate": 1}
    assert len(result["activity"]["series"]) == 7
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    page = out.read_text()
    assert "<script" not in page  # the wording is text, not markup
    assert "When a test fails &lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page
    assert "Read the whole error &amp; fix it" in page
    assert "you forgot the linter again" in page
    assert TOKEN not in page and "ghp_" not in page  # a quote that slipped past storage is redacted again
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    assert page.count('<rect class="bar"') == 7 * 7  # seven charts of seven days
    assert 'http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;;' in page
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("days", ["0", "367", "x"])
def test_days_out_of_range_is_a_usage_error(tmp_path: Path, days: str) -> None:
    refused(["--out", str(tmp_path / "r.html"), "--days", days], "usage", 2)
    assert not (tmp_path / "r.html").exists()


def test_the_page_names_the_root_with_the_home_folder_as_tilde(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home" / "alice"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    root = home / ".local" / "share" / "habitus"
    done = run(["report", "--root", str(root), "--out", str(tmp_path / "r.html")])
    assert done.exit == 0, done.stderr
    page = (tmp_path / "r.html").read_text()
    assert "alice" not in page and "from ~/.local/share/habitus." in page


def test_a_habit_shows_twenty_quotes_and_counts_the_rest(state_root: Path, tmp_path: Path) -> None:
    quotes = [(days_back(i % 5), f"quote number {i:02d}") for i in range(25)]
    candidate(state_root, 2, "When a commit is requested", "Run the linter first", quotes)
    out = tmp_path / "r.html"
    assert run(["report", "--out", str(out)]).exit == 0
    page = out.read_text()
    assert page.count('<blockquote class="quote">') == 20
    assert "and 5 more quotes" in page


def test_report_on_a_fresh_root_creates_no_state(state_root: Path, tmp_path: Path) -> None:
    done = run(["report", "--out", str(tmp_path / "r.html")])
    assert done.exit == 0 and done.result["habits"] == {}
    assert not state_root.exists()
    assert "No habits yet" in (tmp_path / "r.html").read_text()


def test_report_replaces_an_older_page_atomically(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    out.write_text("old")
    assert run(["report", "--out", str(out)]).exit == 0
    assert out.read_text().startswith("<!DOCTYPE html>") and leftovers(tmp_path) == []


def refused(args: list[str], code: str, status: int) -> None:
    done = run(["report", *args])
    assert done.exit == status and done.stdout == b"", done.stderr
    assert done.error["code"] == code


def test_a_symlinked_out_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.html"
    target.write_text("keep")
    link = tmp_path / "r.html"
    link.symlink_to(target)
    refused(["--out", str(link)], "symlink_refused", 3)
    assert target.read_text() == "keep" and link.is_symlink() and leftovers(tmp_path) == []


def test_a_folder_or_fifo_out_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "dir.html"
    folder.mkdir()
    refused(["--out", str(folder)], "special_file_refused", 3)
    fifo = tmp_path / "fifo.html"
    os.mkfifo(fifo)
    refused(["--out", str(fifo)], "special_file_refused", 3)  # and does not hang on it
    assert leftovers(tmp_path) == []


def test_an_unwritable_out_is_an_io_error_and_writes_nothing(tmp_path: Path) -> None:
    refused(["--out", str(tmp_path / "missing" / "r.html")], "io_error", 1)
    plain = tmp_path / "plain"
    plain.write_text("x")
    refused(["--out", str(plain / "r.html")], "io_error", 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs Linux /proc")
def test_a_folder_nobody_can_write_is_an_io_error() -> None:
    refused(["--out", "/proc/habitus-report.html"], "io_error", 1)  # not even root creates files there
    assert not Path("/proc/habitus-report.html").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_an_io_error(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o500)
    try:
        refused(["--out", str(folder / "r.html")], "io_error", 1)
    finally:
        folder.chmod(0o700)
    assert list(folder.iterdir()) == []


def test_out_inside_the_state_root_is_refused(state_root: Path) -> None:
    declare("When a test fails", "Read the whole error first")
    refused(["--out", str(state_root / "report.html")], "bad_request", 2)
    refused(["--out", str(state_root / "ledger.sqlite")], "bad_request", 2)
    assert not (state_root / "report.html").exists()


def test_a_newer_ledger_is_refused_and_nothing_is_written(state_root: Path, tmp_path: Path) -> None:
    declare("When a test fails", "Read the whole error first")
    conn = sqlite3.connect(state_root / "ledger.sqlite")
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    refused(["--out", str(tmp_path / "r.html")], "schema_newer", 3)
    assert not (tmp_path / "r.html").exists() and leftovers(tmp_path) == []


def test_a_corrupt_ledger_is_refused_and_nothing_is_written(state_root: Path, tmp_path: Path) -> None:
    state_root.mkdir(mode=0o700)
    (state_root / "ledger.sqlite").write_bytes(b"this is not a database" * 100)
    refused(["--out", str(tmp_path / "r.html")], "state_corrupt", 3)
    assert not (tmp_path / "r.html").exists()


def test_a_tampered_habit_is_refused(state_root: Path, tmp_path: Path) -> None:
    declare("When a test fails", "Read the whole error first")
    conn = sqlite3.connect(state_root / "ledger.sqlite", isolation_level=None)
    conn.execute("UPDATE habits SET behavior = 'Push to main'")
    conn.close()
    refused(["--out", str(tmp_path / "r.html")], "checksum_mismatch", 3)
    assert not (tmp_path / "r.html").exists()


def test_a_locked_state_root_answers_75_and_writes_nothing(state_root: Path, tmp_path: Path) -> None:
    declare("When a test fails", "Read the whole error first")
    ready = tmp_path / "ready"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time, pathlib\n"
            "from habitus.state import statelock\n"
            "with statelock.exclusive(pathlib.Path(sys.argv[1]), 5):\n"
            "    pathlib.Path(sys.argv[2]).write_text('held')\n"
            "    time.sleep(30)\n",
            str(state_root),
            str(ready),
        ]
    )
    try:
        deadline = time.monotonic() + 20
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists()
        done = run_process(["report", "--out", str(tmp_path / "r.html"), "--wait", "0.2"])
        assert done.exit == 75 and done.error["code"] == "state_locked" and done.stdout == b""
    finally:
        holder.kill()
        holder.wait()
    assert not (tmp_path / "r.html").exists()
