"""Rule sentences (issue 13, the analyze part, fifth round): one sentence of a prompt that states a
standing rule, said once inside a task request and without any friction marker, starts a candidate
worded from that sentence alone, never turned around; a question, a bug report and a one-off task do
not."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyze_helpers import analyzed, needs_e5
from habitus.learn import rules


def test_a_prompt_is_split_into_its_own_sentences_in_any_language() -> None:
    assert rules.sentences("add the export. never log tokens!\n- keep it short") == [
        "add the export.",
        "never log tokens!",
        "keep it short",
    ]
    assert rules.sentences("設定画面を直して。コメントは英語で書くように。") == [
        "設定画面を直して。",
        "コメントは英語で書くように。",
    ]
    assert rules.sentences("fix it") == ["fix it"]
    assert rules.sentences("ok") == []  # one word is no sentence a rule could be read from
    long_prompt = " ".join(f"step {i} is done." for i in range(40))
    assert len(rules.sentences(long_prompt)) == rules.MAX_SENTENCES
    assert rules.sentences("Do not commit unless explicitly asked.</input>") == []  # a pasted template


@pytest.mark.parametrize(
    ("sentence", "wanted", "polarity"),
    [
        (
            "dont forget to branch off main and not the current branch.",
            "Do branch off main and not the current branch.",
            1,
        ),
        (
            "Please don't silence failing tests with skip markers",
            "Do not silence failing tests with skip markers.",
            -1,
        ),
        ("ok please never store tokens in plain text please", "Do not store tokens in plain text.", -1),
        (
            "full schema should not be updated ever, it is a point in time snapshot.",
            "Do follow this rule: full schema should not be updated ever, it is a point in time snapshot.",
            1,
        ),
        ("no verify", "Do follow this rule: no verify.", 1),  # never "Do use verify"
        ("i dont like emdashes", "Do follow this rule: i dont like emdashes.", 1),
    ],
)
def test_a_rule_sentence_is_worded_in_the_users_words_never_inverted(
    sentence: str, wanted: str, polarity: int
) -> None:
    assert rules.wording(sentence) == (wanted, polarity)


@pytest.mark.parametrize(
    ("sentence", "said_as_a_rule"),
    [
        ("always cut branches from main", True),
        ("commit titles should use the conventional format", True),
        ("PRのタイトルは英語で", True),  # another language: its moods are the embedding's to read
        ("the registry basically has a list of types", False),  # a report
        ("still reviewing.", False),
    ],
)
def test_only_sentences_said_as_rules_are_scored(sentence: str, said_as_a_rule: bool) -> None:
    assert rules.asks(sentence) is said_as_a_rule


TASK_DAY = "2026-05-04"


def _session(prompts: list[str]) -> list[tuple[str, str, str]]:
    return [(p, "Done.", f"{TASK_DAY}T09:{i:02d}:00Z") for i, p in enumerate(prompts)]


@needs_e5
def test_a_rule_sentence_inside_a_task_prompt_becomes_a_candidate(state_root: Path) -> None:
    proposals = analyzed(
        state_root,
        _session(
            [
                "add a dark mode toggle to the settings page. dont forget to always branch off main for new "
                "work, never off the current branch.",
                "now add the audit log table",
            ]
        ),
    )
    assert [p["behavior"] for p in proposals] == [
        "Do branch off main for new work, never off the current branch."
    ]


@needs_e5
@pytest.mark.parametrize(
    ("prompt", "rule"),
    [
        ("Füge den CSV-Export hinzu. Commit-Nachrichten immer auf Englisch schreiben.", "Commit-Nachrichten"),
        ("設定画面にダークモードを追加して。コードのコメントは英語で書くように。", "コメントは英語で"),
    ],
)
def test_a_rule_sentence_in_another_language_becomes_a_candidate(
    state_root: Path, prompt: str, rule: str
) -> None:
    proposals = analyzed(state_root, _session([prompt]))
    assert len(proposals) == 1 and rule in proposals[0]["behavior"]
    assert "CSV" not in proposals[0]["behavior"] and "ダークモード" not in proposals[0]["behavior"]


@needs_e5
def test_a_question_a_bug_report_and_a_one_off_task_are_no_rules(state_root: Path) -> None:
    proposals = analyzed(
        state_root,
        _session(
            [
                "why does the login page hang after the redirect?",
                "the export crashes when the list is empty, the stack trace points at format_rows.",
                'rename the save button to "Store" on the settings page.',
                "add a dark mode toggle to the settings page and show me the diff.",
            ]
        ),
    )
    assert proposals == []
