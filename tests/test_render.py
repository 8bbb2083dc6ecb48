"""Output for a person at a terminal: tables on a pty, today's JSON everywhere else, words for errors,
progress on a terminal's stderr only, and nothing of it (nor rich) in hook mode."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from analyze_helpers import FRICTION, capture
from conftest import run, run_process
from pty_helpers import run_pty
from select_helpers import hook_event

HERE = Path(__file__).resolve().parent
ESCAPE = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def plain(data: bytes) -> str:
    return ESCAPE.sub(b"", data).decode()


@pytest.fixture
def reviewed(state_root: Path) -> dict[str, object]:
    """Two analysed candidates, the first approved; one memory; one muted finding."""
    from habitus.advise import mutes
    from habitus.state.root import StateRoot

    capture(state_root, FRICTION)
    assert run(["analyze"]).exit == 0
    listed = run(["habit", "list"]).result
    first = listed["items"][0]
    approved = run(["habit", "approve", "1", "--checksum", first["checksum"][:12]])
    assert approved.exit == 0, approved.stderr
    memory = {"content": "This repo releases from main only. [bold red]not markup[/]", "tags": ["release"]}
    retained = run(["memory", "retain"], memory).result["memory"]
    mutes.change(StateRoot(state_root), "cd" * 32, label="called the release ready unchecked", wait=5)
    return {"habit": first, "memory": retained}


@pytest.mark.slow
def test_json_off_a_terminal_is_byte_for_byte_what_it_was() -> None:
    """The fixture was recorded from the code before terminal output existed (see json_scenario.py)."""
    done = subprocess.run(
        [sys.executable, str(HERE / "json_scenario.py")], capture_output=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    now = json.loads(done.stdout)
    before = json.loads((HERE / "fixtures" / "render" / "json_before.json").read_text())
    assert sorted(now) == sorted(before)
    for name in before:
        assert now[name] == before[name], name


def test_a_terminal_gets_tables_with_the_facts(reviewed: dict[str, object]) -> None:
    habit = reviewed["habit"]
    memory = reviewed["memory"]
    assert isinstance(habit, dict) and isinstance(memory, dict)
    shown = run_pty(["habit", "list"])
    text = plain(shown.stdout)
    assert shown.exit == 0 and not shown.stdout.lstrip().startswith(b"{")
    assert habit["condition"] in text and habit["checksum"][:12] in text and "active" in text
    assert "3 obs / 2 d" in text and "candidate" in text and "habit approve N --checksum" in text

    shown = run_pty(["habit", "show", str(habit["id"])])
    text = plain(shown.stdout)
    assert habit["behavior"] in text and habit["checksum"] in text and "Evidence (3)" in text
    assert "2026-05-04" in text and "approve by user" in text

    shown = run_pty(["memory", "retrieve", "releases"])
    text = plain(shown.stdout)
    assert "This repo releases from main only. [bold red]not markup[/]" in text  # stored words, not styles
    assert str(memory["id"])[:8] in text and "1 shown" in text

    text = plain(run_pty(["memory", "recall", str(memory["id"])]).stdout)
    assert str(memory["id"]) in text and "tags release" in text
    text = plain(run_pty(["memory", "recall", "00000000-0000-4000-8000-000000000000"]).stdout)
    assert "No active memory" in text

    text = plain(run_pty(["advise", "mutes"]).stdout)
    assert "cdcdcd" in text and "called the release ready unchecked" in text and "1 muted" in text

    text = plain(run_pty(["dedupe", "list"]).stdout)
    assert "No possible duplicates" in text

    shown = run_pty(["select"], stdin=b'{"prompt": "add a logging call to the library code"}')
    text = plain(shown.stdout)
    assert shown.exit == 0 and "1 habit(s) apply" in text and str(habit["id"]) in text

    shown = run_pty(["analyze", "--dry-run"])
    assert shown.exit == 0 and "Analyzed 0 observation(s)" in plain(shown.stdout)


def test_json_and_pretty_force_json_on_a_terminal(reviewed: dict[str, object]) -> None:
    piped = run_process(["habit", "list"]).result
    for args in (["habit", "list", "--json"], ["habit", "list", "--pretty"]):
        shown = run_pty(args)
        assert shown.exit == 0
        body = orjson.loads(shown.stdout)
        assert body["v"] == 1 and body["items"] == piped["items"] and body["counts"] == piped["counts"]
    assert b"\n  " in run_pty(["habit", "list", "--pretty"]).stdout
    compact = run_pty(["memory", "retrieve", "releases", "--json", "--no-hybrid"]).stdout
    assert compact == run_process(["memory", "retrieve", "releases", "--no-hybrid"]).stdout
    # --json on the group counts for its subcommand too
    assert orjson.loads(run_pty(["advise", "--json", "mutes"]).stdout)["count"] == 1


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"}, {"TERM": "dumb"}, {"TERM": "dumb", "NO_COLOR": "1"}])
def test_no_color_and_dumb_terminals_get_no_escape_codes(
    reviewed: dict[str, object], env: dict[str, str]
) -> None:
    for args in (["habit", "list"], ["advise", "mutes"], ["habit", "show", "99"]):
        shown = run_pty(args, env=env)
        assert b"\x1b[" not in shown.stdout + shown.stderr, args
    assert b"\x1b[" in run_pty(["habit", "list"]).stdout  # colour is on otherwise


def test_tables_fit_the_terminal_width(reviewed: dict[str, object]) -> None:
    for columns in (60, 100):
        text = plain(run_pty(["habit", "list"], columns=columns, env={"NO_COLOR": "1"}).stdout)
        assert max(len(line) for line in text.splitlines()) <= columns
        assert "checksum" in text


def test_errors_on_a_terminal_are_words_and_the_json_line_for_a_pipe(reviewed: dict[str, object]) -> None:
    shown = run_pty(["habit", "show", "99"], env={"NO_COLOR": "1"})
    assert shown.exit == 3 and shown.stdout == b""
    assert shown.stderr == (
        b"habitus: error: the last list has no item 99 (stale, exit 3)\n  hint: run `habitus habit list` again\n"
    )
    piped = run_pty(["habit", "show", "99"], stderr_tty=False)  # stdout a terminal, stderr a pipe
    assert orjson.loads(piped.stderr)["error"]["code"] == "stale"
    forced = run_pty(["habit", "show", "99", "--json"])
    assert orjson.loads(forced.stderr)["error"] == {
        "code": "stale",
        "message": "the last list has no item 99",
        "exit": 3,
        "hint": "run `habitus habit list` again",
    }
    bad = run_pty(["select"], stdin=b"{not json", env={"NO_COLOR": "1"})
    assert bad.exit == 2 and bad.stderr.startswith(b"habitus: error: stdin: not valid JSON")
    assert bad.stderr.count(b"\n") == 1  # no hint: one line
    usage = run_pty(["habit", "list", "--no-such-option"], env={"NO_COLOR": "1"})
    assert usage.exit == 2 and b"(usage, exit 2)" in usage.stderr and b"hint: see --help" in usage.stderr


def test_error_words_carry_no_terminal_control_characters(state_root: Path) -> None:
    from habitus.errors import HabitusError
    from habitus.render.errors import words

    text = words(HabitusError("io_error", "evil\x1b]0;owned\x07name: denied", hint="look\rhere"))
    assert "\x1b]" not in text and "\x07" not in text and "\r" not in text
    assert "evil?]0;owned?name: denied" in text


def test_progress_shows_on_a_terminal_stderr_only(state_root: Path) -> None:
    capture(state_root, FRICTION)
    shown = run_pty(["analyze"], stdout_tty=False, env={"NO_COLOR": "1"})
    assert shown.exit == 0 and orjson.loads(shown.stdout)["records"] == 8
    assert "analyze" in plain(shown.stderr) and "8/8 records, 1 batches" in plain(shown.stderr)
    capture(state_root, FRICTION, session="s2")
    piped = run_pty(["analyze"], stdout_tty=True, stderr_tty=False)
    assert piped.exit == 0 and piped.stderr == b""  # a pipe never gets a bar
    assert "Analyzed 8 observation(s)" in plain(piped.stdout)


PROBE = """
import sys
sys.argv = ["habitus", *sys.argv[1:]]
from habitus.launcher import main
try:
    main()
except SystemExit:
    pass
shown = sorted({m.split(".")[0] for m in sys.modules} & {"rich", "pygments"})
open(sys.argv[0] if False else __import__("os").environ["PROBE_OUT"], "w").write(",".join(shown) + "|"
    + ",".join(sorted(m for m in sys.modules if m.startswith("habitus.render"))))
"""


def _probe(tmp_path: Path, args: list[str], stdin: bytes) -> tuple[str, bytes]:
    out = tmp_path / "probe.txt"
    shown = run_pty([], argv=[sys.executable, "-c", PROBE, *args], stdin=stdin, env={"PROBE_OUT": str(out)})
    return out.read_text(), shown.stdout + shown.stderr


@pytest.mark.parametrize("harness", ["claude-code", "generic"])
def test_hook_mode_on_a_terminal_renders_nothing_and_never_imports_rich(
    reviewed: dict[str, object], tmp_path: Path, harness: str
) -> None:
    event = orjson.dumps(hook_event(harness, "add a logging call to the library code"))
    loaded, printed = _probe(tmp_path, ["select", "--harness", harness], event)
    assert loaded.split("|")[0] == ""
    reply = orjson.loads(printed)  # the harness's own format, never a table
    assert "v" not in reply and "library code" in json.dumps(reply)
    stop = orjson.dumps({"hook_event_name": "Stop", "transcript_path": str(tmp_path / "absent.jsonl")})
    for args, stdin in (
        (["capture", "--harness", "claude-code"], stop),
        (["advise", "--harness", "claude-code"], stop),
        (["select", "--harness", "claude-code"], b"{not json"),  # a failing hook: silent, no words
    ):
        loaded, printed = _probe(tmp_path, args, stdin)
        assert loaded.split("|")[0] == "" and b"habitus: error" not in printed, args
    loaded, _ = _probe(tmp_path, ["habit", "list"], b"")  # the probe sees rich where it is used
    assert loaded.split("|")[0] == "rich" and "habitus.render.habits" in loaded


def test_a_pipe_never_imports_rich(reviewed: dict[str, object], tmp_path: Path) -> None:
    out = tmp_path / "probe.txt"
    for args in (["habit", "list"], ["habit", "show", "99"], ["advise", "mutes"]):
        subprocess.run(
            [sys.executable, "-c", PROBE, *args],
            capture_output=True,
            env={**os.environ, "PROBE_OUT": str(out)},
            timeout=120,
            check=False,
        )
        assert out.read_text().split("|")[0] == "", args


def _long_work(state_root: Path, tmp_path: Path) -> list[tuple[str, list[str], bytes]]:
    """(label, args, stdin) of each long-work command, on a root that has something for each."""
    import uuid

    from obs_helpers import FIXTURES, enable

    enable(state_root)
    capture(state_root, FRICTION)
    pairs = b"".join(orjson.dumps({"user": f"fix bug {i}", "assistant": "done"}) + b"\n" for i in range(30))
    for i in range(40):
        assert run(["memory", "retain"], {"content": f"fact number {i}", "kind": "fact"}).exit == 0
    exported = [orjson.loads(line) for line in run(["memory", "export"]).stdout.splitlines()]
    fresh = b"".join(orjson.dumps({**r, "id": str(uuid.uuid4())}) + b"\n" for r in exported if "id" in r)
    declared = {"condition": "When committing", "behavior": "Do write a summary line", "polarity": 1}
    assert run(["habit", "declare"], declared).exit == 0
    return [
        ("capture", ["capture", "--transcript", str(FIXTURES / "claude-code-short.jsonl")], b""),
        ("capture", ["capture", "--nl"], pairs),
        ("analyze", ["analyze"], b""),
        ("dedupe scan", ["dedupe", "scan"], b""),
        ("index-vectors", ["memory", "index-vectors"], b""),
        ("import", ["memory", "import"], fresh),
        ("backup", ["backup", "--out", str(tmp_path / "copy")], b""),
        ("restore", ["restore", "--dry-run", str(tmp_path / "copy")], b""),
    ]


@pytest.mark.slow
def test_long_work_shows_progress_on_a_terminal_and_nothing_in_a_pipe(
    state_root: Path, tmp_path: Path
) -> None:
    work = _long_work(state_root, tmp_path)
    for label, args, stdin in work:
        shown = run_pty(args, stdin=stdin, stdout_tty=False, env={"NO_COLOR": "1"})
        assert shown.exit == 0, (args, shown.stderr[-500:])
        assert orjson.loads(shown.stdout.splitlines()[-1])["v"] == 1, args  # stdout stays JSON
        text = plain(shown.stderr)
        assert text.lstrip().startswith(label) and "━" in text, (args, text)
        assert "0:00:" in text, args  # the elapsed time column of a finished bar
    for _, args, stdin in work:  # the same work with pipes: never a byte on stderr
        if args[0] == "backup":
            args = ["backup", "--out", str(tmp_path / "copy2")]
        if args[:2] == ["memory", "import"]:
            continue  # the same ids again are refused (already_exists), which is not the point here
        done = run_process(args, stdin=stdin)
        assert done.exit == 0 and done.stderr == b"", (args, done.stderr[-300:])


def test_progress_redraws_are_throttled(monkeypatch: pytest.MonkeyPatch) -> None:
    """100,000 reports inside one redraw interval cost about nothing and draw at most twice."""
    import time

    from habitus.render import progress

    monkeypatch.setattr(progress, "for_people", lambda stream: True)
    drawn: list[object] = []
    import rich.progress

    original = rich.progress.Progress.refresh
    monkeypatch.setattr(rich.progress.Progress, "refresh", lambda self: drawn.append(1) or original(self))
    monkeypatch.setattr(progress, "REDRAW_S", 60.0)
    started = time.perf_counter()
    with progress.bar("test") as report:
        assert report is not None
        for i in range(100_000):
            report(i, 100_000)
    elapsed = time.perf_counter() - started
    assert len(drawn) <= 3 and elapsed < 2.0  # generous: a loaded shared machine


def _drawn(renderer: object, result: dict[str, object], width: int = 100) -> str:
    import io as stdio

    from rich.console import Console

    out = stdio.StringIO()
    renderer(result, Console(file=out, width=width, no_color=True, color_system=None))  # type: ignore[operator]
    return out.getvalue()


def test_a_project_habit_says_where_it_applies_and_a_personal_one_says_nothing() -> None:
    from habitus.render.habits import habit_list, habit_show

    base = {"condition": "When releasing", "behavior": "Do run the whole suite", "status": "active"}
    project = {**base, "id": "h-cccccccccccc", "scope": "project", "projects": ["/src/a", "/src/b", "/c"]}
    personal = {**base, "id": "h-dddddddddddd", "scope": "personal", "projects": None}
    listed = _drawn(habit_list, {"items": [{**project, "n": 1}, {**personal, "n": 2}]}, width=160)
    assert listed.count("project habit: only in /src/a, /src/b and 1 more") == 1
    shown = _drawn(habit_show, {"habit": project})
    assert "project habit: only in /src/a, /src/b and 1 more" in shown
    assert "project habit" not in _drawn(habit_show, {"habit": personal})


def test_renderers_show_pairs_findings_and_proposals_and_never_read_markup() -> None:
    from habitus.render.analyze import analyze
    from habitus.render.dedupe import dedupe_list
    from habitus.render.habits import habit_show
    from habitus.render.select import select

    a = {"id": "h-aaaaaaaaaaaa", "condition": "When [red]tagging[/red]", "behavior": "Do run the tests"}
    b = {"id": "h-bbbbbbbbbbbb", "condition": "When releasing", "behavior": "Do run the whole suite"}
    pairs = {
        "items": [
            {
                "n": 1,
                "kind": "duplicate",
                "decision": "pending",
                "similarity_bp": 9312,
                "checksum": "f" * 64,
                "current": False,
                "habits": [a, b],
            }
        ],
        "snapshot_expires_at": "2026-12-01T10:00:00Z",
    }
    text = _drawn(dedupe_list, pairs)
    for fact in (
        "h-aaaaaaaaaaaa",
        "h-bbbbbbbbbbbb",
        "[red]tagging[/red]",
        "93%",
        "f" * 12,
        "wording changed",
    ):
        assert fact in text, fact
    shown = {
        "habit": {
            **a,
            "status": "suppressed_by_law",
            "law_findings": [{"rule": "deny", "source": "law.md", "line": 3, "field": "behavior"}],
            "relations": [
                {
                    "kind": "conflict",
                    "decision": "pending",
                    "similarity_bp": 8000,
                    **{"habit_a": a["id"], "habit_b": b["id"]},
                }
            ],
        }
    }
    text = _drawn(habit_show, shown)
    assert "rule deny in law.md line 3 (behavior)" in text and "conflict with h-bbbbbbbbbbbb" in text
    run_result = {
        "analyzer": "model:local-llm",
        "records": 12,
        "batches": [{"outcome": "committed"}, {"outcome": "failed"}],
        "proposals": [{**b, "outcome": "created", "stage": "collecting"}],
        "memory_suggestions": [{"content": "releases come from main"}],
        "dormant": [{"id": "h-cccccccccccc"}],
    }
    text = _drawn(analyze, run_result)
    for fact in (
        "12 observation(s) in 2 batch(es)",
        "model:local-llm",
        "Do run the whole suite",
        "collecting",
    ):
        assert fact in text, fact
    assert (
        "1 batch(es) did not commit" in text
        and "releases come from main" in text
        and "h-cccccccccccc" in text
    )
    text = _drawn(
        select,
        {
            "habits": [],
            "reason": "not_applicable",
            "candidates": 4,
            "retrieved": 2,
            "reasons": {"mere_mention": 2},
        },
    )
    assert "No habit applies (not_applicable)" in text and "2 mere_mention" in text
