"""The local analyzer across batches and runs: corrections worded differently join one candidate,
calm preferences accumulate through the ledger, rules stated as facts, strong contradictions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest

from analyze_helpers import capture, query
from conftest import run
from habit_helpers import declared
from habitus.learn import local, queue
from habitus.learn.local import Pending

REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
    "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
    "tell you how to proceed."
)


def analyze(*args: str) -> dict:
    out = run(["analyze", *args])
    assert out.exit == 0, out.stderr
    return out.result


def notes(root: Path) -> list[Pending]:
    conn = sqlite3.connect(root / "ledger.sqlite")
    conn.row_factory = sqlite3.Row
    try:
        return queue.pending(conn)
    finally:
        conn.close()


def stages(root: Path) -> dict[str, tuple[str, int, int]]:
    """behaviour -> (status, cited observations, days) of every habit in the ledger."""
    rows = query(
        root,
        "SELECT h.behavior, h.status, COUNT(DISTINCT e.ref), COUNT(DISTINCT e.day) FROM habits h "
        "LEFT JOIN habit_evidence e ON e.habit_id = h.id GROUP BY h.id",
    )
    return {b: (s, n, d) for b, s, n, d in rows}


def test_differently_worded_corrections_join_one_candidate_across_runs(state_root: Path) -> None:
    # Three runs (a daily timer): the same correction in three styles, never the same words.
    capture(
        state_root,
        [
            ("write the csv exporter", "Added export.py.", "2026-06-01T09:00:00Z"),
            ("you forgot the license header, legal checks every file", "Added it.", "2026-06-01T09:03:00Z"),
        ],
    )
    first = analyze()
    [created] = first["proposals"]
    assert created["outcome"] == "created" and created["stage"] == "collecting"
    assert "license header" in created["behavior"]
    capture(
        state_root,
        [
            ("now the json exporter", "Added json_export.py.", "2026-06-02T10:00:00Z"),
            ("where is the license header??", "Added the header.", "2026-06-02T10:02:00Z"),
        ],
    )
    second = analyze()
    [joined] = second["proposals"]
    # A question alone never starts a habit, but it adds evidence to the one it repeats.
    assert joined["id"] == created["id"] and joined["outcome"] == "evidence_added"
    assert joined["stage"] == "collecting" and joined["evidence_added"] == 1
    capture(
        state_root,
        [
            ("and an xml exporter", "Added xml_export.py.", "2026-06-03T11:00:00Z"),
            (
                "again no license header. every source file needs the license header",
                "Sorry.",
                "2026-06-03T11:01:00Z",
            ),
        ],
    )
    third = analyze()
    [last] = third["proposals"]
    assert last["id"] == created["id"] and last["stage"] == "reviewable"
    assert stages(state_root) == {created["behavior"]: ("candidate", 3, 3)}
    # Calm requests around the corrections are never cited.
    cited = {r.rsplit(":", 1)[0] for (r,) in query(state_root, "SELECT ref FROM habit_evidence")}
    assert cited == {"obs-1:2", "obs-2:2", "obs-3:2"}  # each run read a new generation


def test_a_calm_preference_accumulates_through_the_ledger(state_root: Path) -> None:
    # Said once, calmly, about this task's functions: nothing is proposed, the instruction waits in the
    # ledger. (Worded as a standing rule, "on every public function", the meaning gate would start a
    # candidate at once: tests/test_analyze_meaning.py.)
    capture(
        state_root,
        [
            (
                "add a parser for the config, with docstrings on the public functions",
                "Done.",
                "2026-06-01T09:00:00Z",
            )
        ],
    )
    assert analyze()["proposals"] == []
    [note] = notes(state_root)
    assert note.kind == "calm" and "docstrings" in note.text
    assert run(["status"]).result["analyze"]["pending_notes"] == 1
    # Repeated in a later run as a habit ("as usual"): a candidate citing both days.
    capture(
        state_root,
        [("write the cache module, docstrings as usual", "Done, documented.", "2026-06-02T09:00:00Z")],
    )
    second = analyze()
    [preference] = second["proposals"]
    assert not preference["friction"] and preference["stage"] == "collecting"
    assert "docstrings" in preference["behavior"] and len(preference["evidence"]) == 2
    assert notes(state_root) == []  # now cited
    # A third mention on another day joins the candidate: reviewable.
    capture(
        state_root,
        [("now the retry helper, and docstrings like the rest", "Done.", "2026-06-04T09:00:00Z")],
    )
    third = analyze()
    [again] = third["proposals"]
    assert again["id"] == preference["id"] and again["outcome"] == "evidence_added"
    assert again["stage"] == "reviewable"
    # Plain calm requests that share nothing with a preference never add evidence to it.
    capture(state_root, [("add the field number 7 to the report", "Added.", "2026-06-05T09:00:00Z")])
    assert analyze()["proposals"] == []


def test_a_calm_request_never_adds_evidence_to_a_correction(state_root: Path) -> None:
    capture(
        state_root,
        [
            ("read the config module", "Read the first 50 lines.", "2026-06-01T09:00:00Z"),
            ("no, read the whole file, not just the top of it", "Read all of it.", "2026-06-01T09:02:00Z"),
        ],
    )
    [created] = analyze()["proposals"]
    capture(state_root, [("read the parser module and explain it", "It parses...", "2026-06-02T09:00:00Z")])
    assert analyze()["proposals"] == []
    assert stages(state_root)[created["behavior"]] == ("candidate", 1, 1)


@pytest.mark.parametrize(
    ("rows", "habit", "fact"),
    [
        # A rule stated as a fact right after a rejected tool use: its reason, a habit.
        (
            [
                ("commit the notebook", "Staging the notebook and data/: git add .", "2026-06-01T09:00:00Z"),
                (REJECTED, "Stopped.", "2026-06-01T09:01:00Z"),
                (
                    "the exports folder never goes into git, it holds customer data",
                    "Ok.",
                    "2026-06-01T09:02:00Z",
                ),
            ],
            "exports folder",
            None,
        ),
        # A prohibition stated as a rule, with friction of its own.
        (
            [("seriously? invalid input must never crash the server", "Fixed.", "2026-06-01T09:00:00Z")],
            "crash",
            None,
        ),
        # "we always ..." in a correction is a rule ...
        (
            [("we always run the linter before committing here, not after", "Ok.", "2026-06-01T09:00:00Z")],
            "linter",
            None,
        ),
        # ... said calmly it describes how the team works: memory.
        (
            [("we always deploy on fridays after the standup", "Noted.", "2026-06-01T09:00:00Z")],
            None,
            "deploy on fridays",
        ),
        # A description that happens to say "always" is a fact, never a habit.
        (
            [("fyi the nightly backup always starts at 02:00 UTC", "Noted.", "2026-06-01T09:00:00Z")],
            None,
            "nightly backup",
        ),
    ],
)
def test_rules_are_habits_and_descriptions_are_facts(
    state_root: Path, rows: list[tuple[str, str, str]], habit: str | None, fact: str | None
) -> None:
    capture(state_root, rows)
    result = analyze()
    behaviours = [p["behavior"] for p in result["proposals"]]
    if habit is None:
        assert behaviours == []
    else:
        assert len(behaviours) == 1 and habit in behaviours[0], behaviours
    contents = [s["content"].lower() for s in result["memory_suggestions"]]
    if fact is None:
        assert not any(habit and habit in c for c in contents)
    else:
        assert any(fact in c for c in contents), contents


THEME = ("When defining colours in a theme", "Do use rgb values, never palette indices.")
READ = ("When changing a file", "Do read the whole file before editing it.")


def test_a_strong_contradiction_makes_the_active_habit_dormant(state_root: Path) -> None:
    theme = declared(*THEME)
    read = declared(*READ)
    assert theme["status"] == read["status"] == "active"
    capture(
        state_root,
        [
            ("port the dark theme", "Ported it with rgb values.", "2026-06-01T09:00:00Z"),
            (
                "actually, use palette indices from now on, the terminal can't show rgb",
                "Ok.",
                "2026-06-01T09:02:00Z",
            ),
        ],
    )
    result = analyze()
    [dormant] = result["dormant"]
    assert dormant["id"] == theme["id"] and dormant["ref"].startswith("obs-1:2:")
    status = dict(query(state_root, "SELECT id, status FROM habits"))
    assert status[theme["id"]] == "dormant" and status[read["id"]] == "active"
    # Audited: who, why, and the observation that contradicted it.
    [(actor, data)] = query(
        state_root, "SELECT actor, data FROM habit_audit WHERE target = ? AND action = 'dormant'", theme["id"]
    )
    note = orjson.loads(data)
    assert actor == "analyze" and note["reason"] == "contradicted" and note["ref"] == dormant["ref"]
    assert note["status"] == ["active", "dormant"]
    # The replacement is only a candidate; nothing is ever activated by analyze.
    [replacement] = result["proposals"]
    assert "palette indices" in replacement["behavior"] and replacement["status"] == "candidate"
    assert replacement["id"] != theme["id"]
    assert query(state_root, "SELECT COUNT(*) FROM habits WHERE status = 'active'") == [(1,)]
    # The human can bring it back.
    assert run(["habit", "enable", theme["id"]]).exit == 0


def test_lifting_a_requirement_makes_it_dormant_and_proposes_nothing(state_root: Path) -> None:
    read = declared(*READ)
    capture(
        state_root,
        [("you don't need to read the whole file before editing anymore", "Ok.", "2026-06-01T09:00:00Z")],
    )
    result = analyze()
    assert [d["id"] for d in result["dormant"]] == [read["id"]]
    assert result["proposals"] == []


@pytest.mark.parametrize(
    "message",
    [
        "actually, use the other chart",  # a reversal that matches no habit
        "use rgb values in the new theme too",  # agrees with the habit
        "now port the light theme",  # "now" is not a reversal
        "can we use palette indices now?",  # a question decides nothing
    ],
)
def test_no_contradiction_without_an_explicit_reversal_of_one_habit(state_root: Path, message: str) -> None:
    theme = declared(*THEME)
    capture(state_root, [(message, "Ok.", "2026-06-01T09:00:00Z")])
    result = analyze()
    assert result["dormant"] == []
    assert dict(query(state_root, "SELECT id, status FROM habits"))[theme["id"]] == "active"


def test_an_ambiguous_reversal_makes_nothing_dormant(state_root: Path) -> None:
    first = declared("When defining colours in a theme", "Do use rgb values, never palette indices.")
    second = declared("When styling the terminal output", "Do use rgb colours, never palette indices.")
    capture(state_root, [("actually, palette indices are fine now", "Ok.", "2026-06-01T09:00:00Z")])
    assert analyze()["dormant"] == []
    status = dict(query(state_root, "SELECT id, status FROM habits"))
    assert status[first["id"]] == status[second["id"]] == "active"


def test_a_dry_run_reports_the_contradiction_and_changes_nothing(state_root: Path) -> None:
    theme = declared(*THEME)
    capture(state_root, [("actually, palette indices are fine now", "Ok.", "2026-06-01T09:00:00Z")])
    result = analyze("--dry-run")
    assert [d["id"] for d in result["dormant"]] == [theme["id"]]
    assert dict(query(state_root, "SELECT id, status FROM habits"))[theme["id"]] == "active"
    assert query(state_root, "SELECT COUNT(*) FROM analyze_pending") == [(0,)]


def test_pending_notes_are_bounded_sealed_and_verified(
    state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    capture(
        state_root, [("add a parser, with docstrings on every function", "Done.", "2026-06-01T09:00:00Z")]
    )
    analyze()
    conn = sqlite3.connect(state_root / "ledger.sqlite")
    conn.row_factory = sqlite3.Row
    monkeypatch.setattr(queue, "PENDING_KEEP", 3)
    with conn:
        queue.keep_pending(
            conn,
            [
                Pending(0, "calm", f"obs-9:{i}:x", "2026-06-02", f"use tabs number {i}", False)
                for i in range(5)
            ],
            [],
        )
    kept = queue.pending(conn)
    assert [n.ref for n in kept] == ["obs-9:2:x", "obs-9:3:x", "obs-9:4:x"]  # the newest
    with conn:
        queue.keep_pending(
            conn, [Pending(0, "calm", "obs-9:9:x", "2020-01-01", "too old to keep", False)], []
        )
    assert "obs-9:9:x" not in [n.ref for n in queue.pending(conn)]
    conn.execute(
        "UPDATE analyze_pending SET text = 'tampered' WHERE id = (SELECT MAX(id) FROM analyze_pending)"
    )
    conn.commit()
    conn.close()
    capture(state_root, [("again no docstrings?!", "Sorry.", "2026-06-03T09:00:00Z")])
    out = run(["analyze"])
    assert out.exit == 3 and out.error["code"] == "checksum_mismatch"


ACTIVE = [
    ("When defining colours in a theme", "Do use rgb values, never palette indices.", 1),
    ("When changing a file", "Do read the whole file before editing it.", 1),
    ("When writing tests", "Do not mock the database; use a real sqlite file.", -1),
    ("When writing commit messages", "Do not use emoji in commit messages.", -1),
    ("When about to change the public api", "Do ask me first.", 1),
]


@pytest.fixture(scope="module")
def vectors(tmp_path_factory: pytest.TempPathFactory) -> local.Vectors:
    from habitus.models.embedders import load_embedder
    from habitus.state.root import StateRoot

    root = StateRoot.at(tmp_path_factory.mktemp("embed") / "state")
    root.ensure()
    return local.Vectors(load_embedder(root, calibrated="minilm"))  # what analyze uses


@pytest.mark.parametrize(
    ("message", "reversed_habit"),
    [
        ("actually, use palette indices from now on", 0),
        ("actually, palette indices are fine now", 0),
        ("you don't need to read the whole file before editing anymore", 1),
        ("actually, mocking the database is fine now", 2),
        ("from now on, feel free to use emoji in commit messages", 3),
        ("you no longer need to ask before changing the public api", 4),
        ("actually, use the other chart", None),
        ("from now on always run the tests before pushing", None),  # a new rule, not a reversal
        ("actually, use sqlite for the cache", None),  # what a habit asks for is not reversed
        ("scratch that, use tabs", None),
        ("you don't need to run the linter anymore", None),
        ("use palette indices for this one chart", None),  # no reversal marker
    ],
)
def test_which_reversals_contradict_which_habit(
    vectors: local.Vectors, message: str, reversed_habit: int | None
) -> None:
    context = [local.Known(f"h{i}", c, b, p, "active", False) for i, (c, b, p) in enumerate(ACTIVE)]
    record = {
        "gen": 1,
        "seq": 1,
        "checksum": "x",
        "at": "2026-06-01T09:00:00Z",
        "payload": {"user": message, "assistant": "Ok.", "session": "s"},
    }
    found = local.analyze([record], load=lambda: vectors, context=context).contradictions
    assert [c.habit for c in found] == ([] if reversed_habit is None else [f"h{reversed_habit}"])
    assert all(c.similarity_bp >= local.CONTRADICT_BP for c in found)
