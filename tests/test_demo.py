"""habitus demo: the whole loop through the installed console script, and a failing step failing it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import run, run_process
from habitus.demo import tour

STEPS = [
    "$ habitus config set capture.enabled true",
    "$ habitus capture --nl < conversation.jsonl",
    "$ habitus analyze",
    "$ habitus habit list --status candidate",
    "$ habitus habit approve ",
    "| habitus select",
    "$ habitus select --harness claude-code < user-prompt-submit.json",
    "$ habitus memory retain 'This repo releases from main only.' --kind fact --tags release",
    "$ habitus memory retrieve 'which branch do we release from' --hybrid",
    "$ habitus config set advise.enabled true",
    "$ habitus advise < final-turn.json",
    "$ habitus backup --out backup",
    "$ habitus verify",
]


def test_the_demo_runs_the_whole_loop_and_says_so(state_root: Path) -> None:
    out = run_process(["demo"], timeout=300)
    assert out.exit == 0, out.stderr
    text = out.stdout.decode()
    positions = [text.find(step) for step in STEPS]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), positions
    assert re.search(r"\$ habitus habit approve \d --checksum [0-9a-f]{12}", text)
    # The hook's output is printed whole: the exact JSON Claude Code reads, naming the approved habit.
    start = text.index("$ habitus select --harness claude-code")
    body = text[text.index("\n", start) + 1 : text.index("\n}\n", start) + 2]
    context = json.loads(body)["hookSpecificOutput"]["additionalContext"]
    assert "release ready" in context and "clean venv" in context
    assert "shows no sign of the behaviour" in text  # advise flagged the unverified claim
    assert "# demo: every step did what it should" in text
    assert "No model is configured" in text and "habitus config preset" in text  # how to add a preset
    assert not state_root.exists()  # the state root of the calling environment is never touched


def test_keep_leaves_the_folder_to_type_along(tmp_path: Path) -> None:
    assert run(["config", "preset", "codex"]).exit == 0  # the user's own root names a preset
    out = run_process(["demo", "--keep"], timeout=300)
    assert out.exit == 0, out.stderr
    assert "# Your habitus uses the model preset codex (Codex CLI, `codex exec`) for analyze and advise." in (
        out.stdout.decode()
    )
    kept = Path(re.search(r"# kept: (\S+)", out.stdout.decode()).group(1))  # type: ignore[union-attr]
    try:
        assert (kept / "state" / "ledger.sqlite").is_file() and (kept / "backup" / "manifest.json").is_file()
        assert (kept / "conversation.jsonl").read_text().count("\n") == len(tour.sample_turns()) - 1
        # The whole loop: habits approved from analyze are selected for paraphrases of the situations
        # they were learned from, in words none of the corrections used, and in other languages.
        text = out.stdout.decode()
        assert "A German prompt" in text and "A Japanese prompt" in text
        listed = _habitus(kept / "state", ["habit", "list", "--status", "active"])["items"]
        reading = next(h["id"] for h in listed if "whole file" in h["behavior"])
        release = next(h["id"] for h in listed if "release" in h["condition"])
        for prompt, wanted in (
            ("edit categories.py so it rounds half up", reading),
            ("is 0.8 ready to be released?", release),
            ("Lies die Datei settings.py komplett, bevor du sie änderst", reading),
            ("categories.py を最初から最後まで全部読んでから直して", reading),  # Japanese, not the tour's
        ):
            chosen = _habitus(kept / "state", ["select"], {"prompt": prompt})["habits"]
            assert wanted in [h["id"] for h in chosen], prompt
        for prompt in (
            "don't release anything today",
            "what does a release candidate mean?",
            "リリースしないで",
            "die Datei nicht lesen, nur umbenennen",
        ):
            assert _habitus(kept / "state", ["select"], {"prompt": prompt})["habits"] == [], prompt
    finally:
        import shutil

        shutil.rmtree(kept)


def test_a_step_that_does_not_produce_what_it_should_fails_the_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the repeated corrections nothing is proposed: the demo stops at analyze and exits 1."""
    calm = [
        {
            "user": f"add feature {i}",
            "assistant": f"Added feature {i}.",
            "session": "s",
            "at": f"2026-10-0{i}T10:00:00Z",
        }
        for i in range(1, 6)
    ]
    monkeypatch.setattr(tour, "sample_turns", lambda: calm)
    done = run(["demo"])
    assert done.exit == 1 and done.error["code"] == "failed"
    assert "step 3" in done.error["message"] and "release" in done.error["message"]
    assert b"$ habitus analyze" in done.stdout and b"$ habitus habit list" not in done.stdout


def test_results_are_shortened_for_reading() -> None:
    long = {"v": 1, "items": list(range(10)), "text": "x" * 500, "other": 1}
    shown = tour.shorten(long, keep=("items", "text"))
    assert shown["items"] == [0, 1, 2, "… 7 more"]
    assert len(shown["text"]) == tour.STRING_CHARS and shown["text"].endswith("…")
    assert shown["…"] == "1 more key" and "other" not in shown


def _habitus(root: Path, args: list[str], request: dict | None = None) -> dict:
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "habitus", *args],
        input=json.dumps(request).encode() if request is not None else b"",
        capture_output=True,
        env={**os.environ, "HABITUS_HOME": str(root)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
