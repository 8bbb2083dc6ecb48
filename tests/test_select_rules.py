"""The local judge's rule checks, one category at a time, on the 32-habit catalog with the real model.

The prompts here are written for these tests (not taken from tests/fixtures/select/cases.jsonl), so they
check the rules on text the calibration never saw.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from habitus.select import judge, text
from select_helpers import FIXTURES


@cache
def setup() -> tuple[Any, Any, Any]:
    import tempfile

    from habitus.embed import load_embedder
    from habitus.habits.vectors import field_input
    from habitus.select import evaluate
    from habitus.state.root import StateRoot

    embedder = load_embedder(StateRoot.at(tempfile.mkdtemp(prefix="habitus-rules-")))
    habits = evaluate.load_catalog(FIXTURES / "habits.jsonl")
    matrix = embedder.embed([field_input("condition", h.condition) for h in habits])
    return embedder, habits, matrix


def decide(prompt: str, context: tuple[str, ...] = ()) -> tuple[list[str], dict[str, str]]:
    embedder, habits, matrix = setup()
    query = judge.analyse(prompt, list(context))
    found = judge.retrieve(embedder, matrix, query)
    verdict = judge.local_judge(embedder, habits, query, found, limit=3)
    return [habits[i].id for i in verdict.selected], {habits[i].id: r for i, r in verdict.reasons.items()}


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("write a Dockerfile for the worker service", ["h29"]),
        ("please write the commit message for my staged changes", ["h01"]),
        ("review the pull request and then write the commit message", ["h01", "h16"]),
    ],
)
def test_requests_now_select(prompt: str, expected: list[str]) -> None:
    assert sorted(decide(prompt)[0]) == expected


@pytest.mark.parametrize(
    ("prompt", "habit", "reason"),
    [
        ("do not write a commit message, I will do it", "h01", "negated"),
        ("never mind the Dockerfile, we are not containerizing this", "h29", "negated"),
        ('the README says "always write a Dockerfile for each service". who added that line?', "h29", None),
        ("> When writing a commit message, keep it short", "h01", None),
        ("what habits do I have about Dockerfiles?", "h29", "meta_discussion"),
        ("disable the habit about commit messages", "h01", "meta_discussion"),
        ("if we ever write a Dockerfile, which base image would you pick?", "h29", "hypothetical_or_future"),
        ("someday we might bump the version to 2.0", "h04", "hypothetical_or_future"),
        ("what did the last commit message say?", "h01", "mere_mention"),
        ("how big is the current Dockerfile?", "h29", "mere_mention"),
        ("remove the debug logging from the scheduler", "h15", "different_action"),
        ("delete the old Dockerfile", "h29", "different_action"),
    ],
)
def test_rule_categories_reject(prompt: str, habit: str, reason: str | None) -> None:
    selected, reasons = decide(prompt)
    assert selected == []
    if reason is not None:
        assert reasons[habit] == reason


def test_a_follow_up_borrows_its_request_from_the_context() -> None:
    offer = ("clean the build please", "Shall I delete the stale build/ and dist/ directories?")
    assert decide("yes, go ahead", offer)[0] == ["h25"]
    assert decide("no, keep them", offer)[0] == []
    assert decide("yes, go ahead")[0] == []  # without context there is nothing to confirm
    # the context alone never triggers: a prompt with its own topic is judged on its own
    assert decide("thanks. what's left on the todo list?", offer)[0] == []


# -- the text analysis, without the model ----------------------------------------------------------


def test_unquote_removes_quotes_code_and_quoted_lines() -> None:
    body, count = text.unquote('fix "the commit message" in `git log` and\n> a quoted line\nit\'s fine')
    assert count == 3
    assert "commit" not in body and "git log" not in body and "quoted line" not in body
    assert "it's fine" in body  # apostrophes are not quotes


def test_clause_moods() -> None:
    moods = [c.mood for c in text.clauses("don't touch the CI, but fix the failing test")]
    assert moods == ["negated", "request"]
    assert [c.mood for c in text.clauses("what if the build fails?")] == ["hypothetical"]
    assert [c.mood for c in text.clauses("why did the deploy fail last night?")] == ["past"]
    assert [c.mood for c in text.clauses("which tests are slow?")] == ["question"]
    assert [c.mood for c in text.clauses("our logger is noisy")] == ["statement"]
    assert [c.mood for c in text.clauses("the output should be sorted")] == ["request"]
    assert [c.mood for c in text.clauses("could you bump the version")] == ["request"]


def test_clauses_split_on_a_second_verb_only() -> None:
    assert [c.text for c in text.clauses("delete build/ and dist/")] == ["delete build/ and dist/"]
    assert [c.text for c in text.clauses("fix the bug and add a test")] == ["fix the bug", "add a test"]


def test_conditions_and_verb_classes() -> None:
    assert text.condition("When writing a commit message") == text.Condition(
        "create", "write a commit message"
    )
    assert text.condition("When the user asks you to read a file").action == "inspect"
    assert text.condition("When a test fails").event
    assert text.condition("When catching exceptions").action == "fix"
    assert text.condition("When naming variables").action == text.UNKNOWN
    assert text.verb_class("deleting") == "delete" and text.verb_class("wrote") == "create"
    assert not text.compatible("delete", "create") and text.compatible("commit", "create")
    assert text.compatible(None, "create") and text.compatible("delete", text.UNKNOWN)


def test_follow_up_recognition() -> None:
    context = ["Want me to open a pull request?"]
    assert text.followup("sure, go ahead", context).kind == "confirm"
    assert text.followup("sure, go ahead", context).action == "open"
    assert text.followup("not yet", context).kind == "reject"
    assert text.followup("handle them", ["There are merge conflicts."]).action == "fix"
    assert text.followup("same for the light theme", ["I defined the dark theme."]).kind == "continue"
    assert text.followup("carry on with the docs", context).kind == "none"
    assert text.needs_context("yes, do that") and not text.needs_context("write the release notes for 2.0")


def test_object_words() -> None:
    assert text.object_stems("delete src/app/main.py") == {"file"}
    assert text.object_stems("remove the tmp/ folder") >= {"directory"}
    assert {"pull", "request"} <= text.object_stems("review PR #12")
    assert text.stem("dependencies") == text.stem("dependency")
