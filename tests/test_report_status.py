"""`habitus status`: on a terminal a readable summary with activity bars (NO_COLOR honoured); off a
terminal exactly the JSON object of before, which a test pins (no activity key)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
from pathlib import Path

import orjson

from conftest import BIN, run, run_process
from habitus.report import terminal
from report_helpers import advise_notes, days_back, declare, select_rows

STATUS_KEYS = {
    "v",
    "embeddings",
    "root",
    "exists",
    "versions",
    "config",
    "enabled",
    "models",
    "stores",
    "habits",
    "select",
    "observations",
    "analyze",
    "advise",
    "errors",
}


def on_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run the real entry point with stdout on a pseudo-terminal; returns what it printed."""
    leader, follower = pty.openpty()
    child = subprocess.Popen(
        [str(BIN / "habitus"), *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
    )
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # the child closed its side
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert child.wait(30) == 0, child.stderr.read() if child.stderr else b""
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def test_off_a_terminal_status_prints_the_same_json_object_as_before(state_root: Path) -> None:
    declare("When a test fails", "Read the whole error first")
    select_rows(state_root, {days_back(0): [1]})
    piped = run_process(["status"])
    assert piped.exit == 0
    assert set(piped.result) == STATUS_KEYS  # no "activity": that lives in the terminal view and the report
    in_process = run(["status"])
    assert in_process.stdout == piped.stdout  # byte for byte: one canonical line
    from habitus.report.status import status
    from habitus.state.root import StateRoot

    expected = orjson.dumps(
        {"v": 1, **status(StateRoot(state_root), wait=1)}, option=orjson.OPT_APPEND_NEWLINE
    )
    assert piped.stdout == expected


def test_on_a_terminal_status_shows_a_summary_and_activity_bars(state_root: Path) -> None:
    declare("When a test fails", "Read the whole error first")
    select_rows(state_root, {days_back_real(0): [3, 1], days_back_real(2): [1]})
    advise_notes(state_root, {days_back_real(0): (1, 0)})
    text = on_terminal(
        ["status"], {"NO_COLOR": "1", "TERM": "xterm", "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}
    )
    assert "\x1b[" not in text  # NO_COLOR
    assert not text.lstrip().startswith("{")
    assert f"root         {state_root}" in text
    assert "habits       1 active" in text
    selected = next(line for line in text.splitlines() if line.strip().startswith("habits selected"))
    total, bars = selected.split()[-2:]
    assert total == "5"
    assert (
        len(bars) == 14 and bars[-1] == "█" and bars[-3] == "▂" and bars[:-3] == "·" * 11 and bars[-2] == "·"
    )
    delivered = next(line for line in text.splitlines() if line.strip().startswith("notes delivered"))
    assert delivered.split()[-2:] == ["1", "·" * 13 + "█"]
    observations = next(line for line in text.splitlines() if line.startswith("  observations"))
    assert observations.split()[-2:] == ["0", "·" * 14]


def test_pretty_on_a_terminal_prints_the_json_indented(state_root: Path) -> None:
    text = on_terminal(["status", "--pretty"], {"TERM": "xterm"})
    assert orjson.loads(text)["root"] == str(state_root) and text.startswith('{\n  "v": 1,')


def test_json_on_a_terminal_prints_the_json_of_a_pipe(state_root: Path) -> None:
    text = on_terminal(["status", "--json"], {"TERM": "xterm"})
    assert text.startswith('{"v":1,') and orjson.loads(text)["root"] == str(state_root)


def test_colour_is_used_on_a_terminal_unless_no_color(state_root: Path) -> None:
    env = {"TERM": "xterm", "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}
    os.environ.pop("NO_COLOR", None)
    text = on_terminal(["status"], env)
    assert "\x1b[1m" in text
    assert "not created yet" in text and not state_root.exists()  # status never creates state


def test_bars_scale_to_the_largest_value_and_keep_small_ones_visible() -> None:
    assert terminal.bars([0, 1, 100, 50]) == "·▁█▄"
    assert terminal.bars([0, 0]) == "··"
    assert terminal.bars([0, 1, 2, 4], blocks=terminal.ASCII) == ".:=@"
    assert terminal.can_draw_blocks("utf-8") and not terminal.can_draw_blocks("ascii")
    assert not terminal.wants_color({"NO_COLOR": ""}) and not terminal.wants_color({"TERM": "dumb"})
    assert terminal.wants_color({"TERM": "xterm-256color"})


def days_back_real(n: int) -> str:
    import time

    return time.strftime("%Y-%m-%d", time.gmtime(time.time() - n * 86400))


def test_the_summary_names_configured_models_and_unknown_config_keys(state_root: Path) -> None:
    from habitus.report.activity import activity
    from habitus.report.status import status
    from habitus.state.root import StateRoot

    assert run(["config", "preset", "claude"]).exit == 0
    config = state_root / "config.toml"
    config.write_text(config.read_text() + "\n[mystery]\nknob = 1\n")
    root = StateRoot(state_root)
    text = terminal.render(status(root, wait=1), activity(root, wait=1), color=False, unicode=False)
    assert "models       claude (claude: analyze, advise)" in text
    assert "unknown keys in" in text and "mystery" in text
    assert "last 14 days (UTC)" in text and "·" not in text and "…" not in text  # an ASCII terminal
