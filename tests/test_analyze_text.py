"""Reading user messages: friction markers, directives, facts, generalised When/Do wording."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from habitus.learn.phrasing import behavior, condition, fix_typos, generalise, vocabulary
from habitus.learn.text import MAX_DIRECTIVE_CHARS, read_message

REJECTION = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
    "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
    "tell you how to proceed."
)


@pytest.mark.parametrize(
    ("message", "markers"),
    [
        ("no, don't mock the database", {"no", "negative"}),
        ("again with the indices?! rgb values in themes", {"again", "frustration"}),
        ("I told you: snapshot before any prod migration", {"told"}),
        ("I keep telling you: imperative subjects", {"told"}),
        ("stop adding summaries to every page", {"stop", "negative"}),
        ("never delete migration files", {"negative", "always"}),
        ("wtf. use rgb values", {"frustration"}),
        ("you forgot set -euo pipefail again", {"blame"}),
        ("read the full file, not just the top of it", {"contrast"}),
        (REJECTION, {"rejected"}),
    ],
)
def test_friction_markers(message: str, markers: set[str]) -> None:
    reading = read_message(message)
    assert reading.friction and markers <= reading.markers


@pytest.mark.parametrize(
    "message",
    [
        "add a --verbose flag",
        "run it again",
        "thanks, looks good",
        "plot the temperatures as a line chart instead of bars",
        "why do muted and dim look the same?",
        "no one will use the old endpoint",
    ],
)
def test_calm_messages_are_not_friction(message: str) -> None:
    assert not read_message(message).friction


def test_a_rejected_tool_use_with_a_reason_reads_the_reason() -> None:
    reading = read_message(
        "The user doesn't want to proceed with this tool use. The tool use was rejected. "
        "The user provided the following reason for the rejection: never force-push to main"
    )
    assert reading.rejection
    assert [d.text for d in reading.directives] == ["never force-push to main"]
    assert read_message("deploy it", outcome="rejected").rejection  # a capture record's outcome
    # the prompt of a turn whose tool use the user rejected was said before the rejection: a task
    task = read_message("I'd like two things: add a --dry-run flag and log a linear bug", outcome="rejected")
    assert task.rejection and not task.friction and not task.directives
    assert read_message("no, never log from library code", outcome="rejected").friction  # its own marker


@pytest.mark.parametrize(
    ("message", "seed"),
    [
        ("no, don't mock the database in tests", True),
        ("no emoji in commit messages please", True),
        ("no, call it fetch_forecast", False),  # names one thing
        ("no, use 4 spaces in this file, not tabs", False),  # one file
        ("no, run it on 8081 today", False),  # today only
        ("no! reword it", None),  # a one-off command: no directive at all
        ("hmm, no, the other chart", None),  # clarifies the task
    ],
)
def test_which_corrections_may_start_a_habit(message: str, seed: bool | None) -> None:
    directives = read_message(message).directives
    if seed is None:
        assert directives == []
    else:
        assert directives and directives[0].seed is seed


def test_directives_lose_markers_swearing_and_one_off_tails() -> None:
    [directive] = read_message(
        "omfg use fucking rgb values in the themes, no rgb indices! fix both"
    ).directives
    assert directive.text == "use rgb values in the themes, no rgb indices"
    [directive] = read_message("I told you already two times: never log from library code").directives
    assert directive.text == "never log from library code"


def test_a_rule_that_names_its_situation_keeps_its_steps() -> None:
    [directive] = read_message(
        "no. always build the wheel, install it in a clean venv and run it before you call a release ready"
    ).directives
    assert directive.text.endswith("install it in a clean venv and run it before you call a release ready")
    [directive] = read_message("again: before you push, run the linter, fix it").directives
    assert directive.text == "before you push, run the linter"  # a one-word step is still a one-off
    [directive] = read_message("no, use the csv module, install it in a clean venv").directives
    assert directive.text == "use the csv module"  # no situation: a task's next step


def test_an_elaboration_belongs_to_the_correction_before_it() -> None:
    first, second = read_message("no, don't mock the database. use a real sqlite file").directives
    assert first.marked and not second.marked
    one, two = read_message("again: imperative subjects. and don't push to main, open a PR").directives
    assert one.marked and two.marked  # two corrections in one message


@pytest.mark.parametrize(
    ("message", "kind", "content"),
    [
        (
            "fyi this repo publishes to PyPI from main only",
            "fact",
            "This repo publishes to PyPI from main only",
        ),
        ("i prefer squash merges for the PRs in this repo btw", "preference", "I prefer squash merges"),
        ("we use CSS modules in this repo, no css-in-js libraries", "decision", "We use CSS modules"),
        ("heads up, the API allows 1000 calls per day", "fact", "The API allows 1000 calls per day"),
        ("remember that one: vs code needs minimumContrastRatio 1", "fact", "Vs code needs"),
    ],
)
def test_facts_are_memory_not_habits(message: str, kind: str, content: str) -> None:
    reading = read_message(message)
    [fact] = reading.facts
    assert fact.kind == kind and fact.content.startswith(content)
    assert reading.directives == [] and reading.instructions == []


@pytest.mark.parametrize(
    ("message", "directive"),
    [
        ("remember: never push to main", "never push to main"),
        (
            "remember to run the migrations check before deploying",
            "run the migrations check before deploying",
        ),
        ("fyi don't touch the generated client", "don't touch the generated client"),
    ],
)
def test_a_reminder_that_asks_is_a_directive_not_a_fact(message: str, directive: str) -> None:
    reading = read_message(message)
    assert reading.facts == []
    assert [d.text for d in reading.directives + reading.instructions] == [directive]


def test_an_acknowledged_statement_is_a_fact_only_when_the_agent_noted_it() -> None:
    message = "the package supports only node 18 and newer"
    assert read_message(message, assistant="Noted: Node 18 is the minimum.").facts
    assert not read_message(message, assistant="Sure.").facts


def test_generalise_removes_files_paths_and_versions() -> None:
    assert generalise("read theme-selector.ts in full") == "read the file in full"
    assert generalise("look in src/styles/tokens.css first") == "look in the file first"
    assert generalise("put it in coding-agent/test") == "put it in the folder"
    assert generalise("bump to v0.5.0 and 1.2.3-rc1") == "bump to the version"  # repeats collapse
    assert generalise("use node 18") == "use node 18"


@pytest.mark.parametrize(
    ("directive", "expected"),
    [
        ("don't mock the database", ("Do not mock the database.", -1)),
        ("never delete migration files", ("Do not delete migration files.", -1)),
        ("no emoji in commit messages", ("Do not use emoji in commit messages.", -1)),
        ("always run the tests before pushing", ("Do run the tests before pushing.", 1)),
        ("reda the full file", ("Do read the full file.", 1)),
        ("tesr the parser first", ("Do test the parser first.", 1)),  # r is beside t
        ("real sqlite files in tests", ("Do use real sqlite files in tests.", 1)),  # l is far from d
        ("rgb hex values in themes", ("Do use rgb hex values in themes.", 1)),
        (  # a rule stated with a verb of its own is quoted, not made into a thing to use
            "internal changes are never breaking changes, only configuration behavior is",
            (
                "Do follow this rule: internal changes are never breaking changes, only configuration behavior is.",
                1,
            ),
        ),
        (
            "the tests should hit a real database",
            ("Do follow this rule: the tests should hit a real database.", 1),
        ),
        ("before calling it ready, build the wheel", ("Do build the wheel.", 1)),
        ("read docs/theme.md in full", ("Do read the file in full.", 1)),
    ],
)
def test_behavior_wording(directive: str, expected: tuple[str, int]) -> None:
    assert behavior(directive) == expected


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["install the wheel before you say a release is ready"], "When about to say a release is ready"),
        (["snapshot before any prod migration"], "When about to start a prod migration"),
        (["no console in library code"], "When writing library code"),
        (["no mocked database in tests"], "When writing tests"),
        (["never delete migration files"], "When deleting migration files"),
        (
            ["don't push to main directly"],
            "When pushing to main",
        ),  # "directly" is the rule, not the situation
        (["no emoji"], "When adding emoji"),
        (["no conosle logs"], "When adding conosle logs"),  # typos are fixed by fix_typos, see below
        (["no pushes to main"], "When pushing to main"),
        (["read the full file"], "When reading a file"),
        (["never crash on invalid config"], "When handling invalid config"),
        (["make sure every script has set -euo pipefail"], "When writing a script"),
        (["never sudo anything from these scripts"], "When writing scripts"),
        (["stop putting summaries at the end of the doc pages"], "When writing the doc pages"),
        (["use rgb values in the themes"], "When writing themes"),
        (["don't edit 0032, make a new migration"], "When editing a file"),
    ],
)
def test_condition_wording(texts: list[str], expected: str) -> None:
    assert condition(texts) == expected


@pytest.mark.parametrize(
    ("directive", "options", "expected"),
    [
        ("stop putting summaries at the end of pages", {}, ("Do not put summaries at the end of pages.", -1)),
        ("table-driven tests", {"phrase": True}, ("Do use table-driven tests.", 1)),
        ("type hints on everything", {"phrase": True}, ("Do use type hints on everything.", 1)),
        # the situation went into the condition: not repeated
        (
            "ask me before you change the public api",
            {"situation": "When about to change the public api"},
            ("Do ask me first.", 1),
        ),
        # reasons about people and explanations after the request are dropped, requests kept
        (
            "make sure every script has strict mode, I shouldn't have to ask",
            {},
            ("Do make sure every script has strict mode.", 1),
        ),
        ("never delete migration files. prod has them applied.", {}, ("Do not delete migration files.", -1)),
        (
            "don't mock the database. use a real sqlite file",
            {},
            ("Do not mock the database; use a real sqlite file.", -1),
        ),
        (
            "imperative subjects. and no trailing period",
            {},
            ("Do use imperative subjects, and no trailing period.", 1),
        ),
        ("add a table-driven test for it", {}, ("Do add a table-driven test.", 1)),
        ("do use rgb indices", {}, ("Do use rgb indices.", 1)),
    ],
)
def test_behavior_wording_rules(directive: str, options: dict, expected: tuple[str, int]) -> None:
    assert behavior(directive, **options) == expected


def test_typos_are_fixed_only_when_unambiguous() -> None:
    counts = vocabulary(["no conosle logs!", "Removed the console.error calls", "console output is gone"])
    assert fix_typos("no conosle logs", counts) == "no console logs"
    # "sheel" is one typo from both "shell" and "sheet", which the batch uses: ambiguous, kept.
    both = vocabulary(["the shell", "a shell", "the sheet", "a sheet"])
    assert fix_typos("open the sheel", both) == "open the sheel"
    assert fix_typos("open the sheel", vocabulary(["the shell", "a shell"])) == "open the shell"
    assert fix_typos("reda the file", vocabulary(["read it", "read that"])) == "reda the file"  # short words


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=600), st.sampled_from(["complete", "rejected"]), st.text(max_size=60))
def test_any_message_reads_without_error_and_stays_bounded(message: str, outcome: str, reply: str) -> None:
    reading = read_message(message, outcome=outcome, assistant=reply)
    for directive in reading.directives + reading.instructions:
        assert 0 < len(directive.text) <= MAX_DIRECTIVE_CHARS
        wording, polarity = behavior(directive.text)
        assert wording.startswith("Do ") and polarity in (1, -1)
        assert condition([directive.text]).startswith("When ")
    assert len(reading.loose) <= MAX_DIRECTIVE_CHARS
