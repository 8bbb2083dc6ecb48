"""Analyze: the local analyzer over 10,000, 25,000 and 100,000 observations, and the nothing-unread fast
path.

The observations are generated (seeded) and stored through the production capture path
(`habitus.capture.capture_turns`: redaction, bounds, hash chain), as a month of work: mostly ordinary
requests and questions with replies of a few hundred characters, about 8 % corrections of six
recurring habits in varied words (file names and versions differ), about 2 % facts and 1 % rejected
tool uses with their reason. The timed run is the real `habitus analyze` process on a copy of that
state root (default batches: <= 200 records, <= 80,000 bytes), so it includes start-up, loading the
embedding model, every batch transaction and the rotation at the end.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

from harness import HABITUS, REPO, Row, median_ms, temp_root

sys.path.insert(0, str(REPO / "src"))

# observations -> target: 10,000 in 60 s and 100,000 in 5 min on 2 cores; 25,000 on the linear budget of
# the 100,000 row. A run that grows faster than the observations misses the larger rows.
SIZES = {10_000: 60.0, 25_000: 75.0, 100_000: 300.0}
OBSERVATIONS = 10_000
TARGET_S = SIZES[OBSERVATIONS]

FILES = ["parser.py", "cli.py", "src/app/views.py", "store.ts", "README.md", "config.toml", "api/orders.go"]
THINGS = ["retry logic", "date parsing", "the export", "pagination", "the login form", "caching", "logging"]
HABITS = [
    [
        "you only read the top of {file} again. read the whole file before you change it",
        "read {file} in full this time, not just the grep hits",
        "no, read the entire file first. you missed half of {file}",
    ],
    [
        "again you said it's done without running the tests. run the tests before you say it's done",
        "I told you: run the test suite before calling it finished",
        "did you run the tests?? always run them before saying done",
    ],
    [
        "no print statements in library code, return the error to the caller",
        "again print() in {file}. never print from library code",
        "stop printing from the library, give errors back to the caller",
    ],
    [
        "don't use os.path, use pathlib",
        "again os.path.join in {file}?! pathlib please",
        "I said pathlib, not os.path",
    ],
    [
        "no, commit subjects in imperative mood: 'Add', not 'Added'",
        "again a past tense commit subject. imperative!",
        "I keep telling you: imperative commit subjects",
    ],
    [
        "don't add new dependencies without asking me first",
        "you added {dep} without asking again. ask before adding any dependency",
        "no new packages without asking. remove {dep}",
    ],
]
FACTS = [
    "fyi the staging server is reset every sunday night",
    "btw we deploy on tuesdays and thursdays only",
    "heads up, the payments api allows 100 requests per minute",
    "for the record: production runs python 3.12",
]
ORDINARY = [
    "add {thing} to {file}",
    "fix the bug in {thing}, it fails on {version}",
    "why does {file} take so long to load?",
    "write a test for {thing}",
    "run the tests",
    "commit it",
    "rename the helper in {file} to something clearer",
    "explain how {thing} works in {file}",
    "make {thing} configurable",
    "update the changelog for {version}",
]
REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
    "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
    "tell you how to proceed."
)


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        file=rng.choice(FILES),
        thing=rng.choice(THINGS),
        version=f"{rng.randint(1, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
        dep=rng.choice(["requests", "lodash", "left-pad", "pydantic"]),
    )


def conversation(count: int, seed: int = 5) -> list[tuple[str, str, str, str]]:
    """(user, assistant, at, session) rows: a month of work, about 330 observations a day."""
    rng = random.Random(seed)
    rows = []
    for index in range(count):
        day, minute = divmod(index, 330)
        at = f"2026-03-{1 + day % 28:02d}T{8 + minute // 60:02d}:{minute % 60:02d}:{rng.randint(0, 59):02d}Z"
        session = f"s-{day}-{minute // 40}"
        roll = rng.random()
        if rows and rows[-1][0] == REJECTED and roll < 0.7:
            user = _fill(rng.choice(rng.choice(HABITS)), rng)  # the reason for the rejection
        elif roll < 0.08:
            user = _fill(rng.choice(rng.choice(HABITS)), rng)
        elif roll < 0.10:
            user = _fill(rng.choice(FACTS), rng)
        elif roll < 0.11:
            user = REJECTED
        else:
            user = _fill(rng.choice(ORDINARY), rng)
        reply = " ".join(_fill(rng.choice(ORDINARY), rng) + "." for _ in range(rng.randint(3, 12)))
        rows.append((user, f"Done. {reply}", at, session))
    return rows


def _capture(root: Path, rows: list[tuple[str, str, str, str]]) -> None:
    from habitus.capture import capture_turns
    from habitus.harness.transcripts import Turn
    from habitus.state.root import StateRoot

    state = StateRoot(root)
    state.ensure()
    for start in range(0, len(rows), 1000):
        turns = [
            Turn(user=u, assistant=a, user_at=at, session_id=s) for u, a, at, s in rows[start : start + 1000]
        ]
        capture_turns(state, turns, harness="generic", source="bench", event=None, wait=60, full_dedupe=False)


def _analyze(root: Path) -> tuple[float, dict]:
    started = time.perf_counter()
    done = subprocess.run([HABITUS, "analyze", "--root", str(root)], capture_output=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"analyze failed: {done.stderr[-500:]!r}")
    return elapsed, json.loads(done.stdout)


def run(runs: int) -> list[Row]:
    rows: list[Row] = []
    for size, target in SIZES.items():
        rows.append(_timed(size, target, runs if size == OBSERVATIONS else 1))
    with temp_root() as template, temp_root() as scratch:
        _capture(template, conversation(2_000))
        root = scratch / "idle"
        shutil.copytree(template, root)
        _analyze(root)
        # The daily timer's usual case: nothing unread (same root, already analysed).
        idle = []
        for _ in range(runs + 2):
            elapsed, again = _analyze(root)
            assert again["records"] == 0
            idle.append(elapsed)
        rows.append(Row("analyze, nothing unread", median_ms(idle[2:]), runs, "no model, no numpy", True))
    return rows


def _timed(size: int, target: float, runs: int) -> Row:
    with temp_root() as template, temp_root() as scratch:
        started = time.perf_counter()
        _capture(template, conversation(size))
        capture_s = time.perf_counter() - started
        samples, result = [], {}
        for index in range(max(1, runs // 5)):
            root = scratch / f"r{index}"
            shutil.copytree(template, root)
            elapsed, result = _analyze(root)
            samples.append(elapsed)
        assert result["records"] == size, result["records"]
        stages: dict[str, int] = {}
        for proposal in result["proposals"]:
            stages[proposal["stage"]] = stages.get(proposal["stage"], 0) + 1
        seconds = median_ms(samples) / 1000
        return Row(
            f"analyze, local, {size:,} observations",
            seconds * 1000,
            len(samples),
            f"<= {target:.0f} s",
            seconds <= target,
            f"{len(result['batches'])} batches, {len(result['proposals'])} candidates "
            f"({stages.get('reviewable', 0)} reviewable), {len(result['memory_suggestions'])} memory "
            f"suggestions; capturing them took {capture_s:.1f} s",
        )
