"""Classes of real sessions (issue 13, the analyze part): forwarded review findings, "let's talk
first" after a rejected tool use, rules stated for the team with a standing scope; and the dev set of
real Claude Code sessions they were tuned on (tests/fixtures/analyze_real_dev, labelled by reading
them before any run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO, run
from habitus.learn.text import forwarded, read_message
from test_analyze_real import _user_texts
from test_fixture_data import keywords_match

DEV = REPO / "tests" / "fixtures" / "analyze_real_dev"
LABELS = DEV / "labels.json"

REVIEW = (
    'The comment on line 779 states "commits are only created when the task makes file changes". '
    "However, this is not entirely accurate. Looking at handlePostTask (lines 899-917), it creates a "
    "TaskCheckpointContext with IsIncremental not set. This means no checkpoint commit is ever created "
    'for it. Consider clarifying the comment: "We don\'t create a shadow branch commit here."'
)


def test_a_forwarded_review_finding_is_not_the_users_correction() -> None:
    assert forwarded(REVIEW)
    reading = read_message(REVIEW)
    assert not reading.friction and not reading.directives and not reading.instructions
    # the user's own words around the same facts are read as usual
    own = "you missed the comment on line 779, handlePostTask never creates a commit. never do that again"
    assert not forwarded(own) and read_message(own).friction
    assert not forwarded("never log from library code, return the error to the caller instead")


@pytest.mark.parametrize(
    ("message", "after_rejection", "wanted"),
    [
        ("wait please let's talk about this", True, "talk through"),
        ("can we talk about what we're doing first?", True, "talk through"),
        ("hold on, let's discuss the plan first", False, "discuss"),
        ("can we talk about what we're doing first?", False, None),  # a calm request: no halt, no rejection
        ("let's talk about the release tomorrow", False, None),
        ("let's discuss it. also fix the tests", True, None),  # more than the halt: read as usual
    ],
)
def test_lets_talk_first_after_the_agent_acted(
    message: str, after_rejection: bool, wanted: str | None
) -> None:
    reading = read_message(message, after_rejection=after_rejection)
    directives = [d.text for d in reading.directives]
    if wanted is None:
        assert not any("approach" in d for d in directives)
    else:
        assert reading.friction and directives == [
            f"{wanted} the approach with the user before making changes"
        ]
        assert reading.directives[0].seed


@pytest.mark.parametrize(
    ("message", "wanted"),
    [
        ("we should be using the strong types instead of string wherever we can", "use the strong types"),
        ("let's make sure we're using US English everywhere please", "use US English everywhere"),
        (
            "we changed summarise to summarize - let's make sure we're using US English everywhere",
            "use US English",
        ),
        ("make sure we use pytest whenever possible", "use pytest whenever possible"),
        ("we should rename foo to bar everywhere", None),  # one task done everywhere, not a habit
        ("let's make sure we rename the flag everywhere", None),
        ("we should add a test for this", None),  # no standing scope: a suggestion for this task
        ("we are changing the language from summarise to summarize", None),
    ],
)
def test_a_rule_stated_for_the_team_with_a_standing_scope(message: str, wanted: str | None) -> None:
    # the opening prompt of a session: a "standing" scope is a rule even there
    reading = read_message(message, opening=True)
    texts = [d.text for d in reading.directives]
    if wanted is None:
        assert not reading.friction and not texts
    else:
        assert reading.friction and "standing" in reading.markers
        assert any(t.startswith(wanted) for t in texts), texts


def test_labels_quote_the_users_own_words() -> None:
    labels = json.loads(LABELS.read_text(encoding="utf-8"))
    for conv in labels["conversations"]:
        users = _user_texts(DEV / conv["file"], conv["transcript_format"])
        for item in conv["habits"] + conv["facts"]:
            for quote in item["evidence_quotes"]:
                assert any(quote in text for text in users), quote
            text = item.get("content") or f"{item['condition']} {item['behavior']}"
            assert keywords_match(item["keywords"], text), item


def test_eval_scores_the_real_dev_sessions(state_root: Path) -> None:
    out = run(["eval", "analyze", "--labels", str(LABELS)])
    assert out.exit == 0, out.stderr
    habits = out.result["habits"]
    assert habits["tp"] + habits["fn"] == 6
    # Dev figures (tuned on this set, 2026-12-07; before this work TP 0 / FP 3 / FN 6).
    assert habits["precision_bp"] >= 8000 and habits["recall_bp"] >= 8000, habits
    for conv in out.result["conversations"]:
        for proposal in conv["proposals"]:
            behavior = proposal["behavior"].lower()
            assert not behavior.startswith("do stash"), proposal  # never inverted


def test_one_exact_command_and_a_division_of_labour_start_no_habit() -> None:
    command = read_message(
        "you just should run `entire enable --telemetry false --agent claude` that will setup everything"
    )
    assert not any(d.seed for d in command.directives)
    assert any(d.seed for d in read_message("no, always run `make lint` before committing").directives)
    labour = read_message(
        "Sure, but the entire cli should handle that automatically for the user, not you adding that for the repo now."
    )
    assert not labour.directives
    norm = read_message("the tests should hit a real database, not mocks", before="I mocked the database.")
    assert [d.text for d in norm.directives] == ["the tests should hit a real database, not mocks"]
