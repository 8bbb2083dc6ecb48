"""Calm standing rules said once on real sessions (issue 13, the analyze part, third round): a calm
request in another language reaches the meaning gate; a rule the user asks to have written into the
agent's instruction file (CLAUDE.md, AGENTS.md) starts a candidate; a calm report with a negation is
never promoted (worded, it would invert)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyze_helpers import analyzed, needs_e5
from habitus.learn import foreign
from habitus.learn.text import read_message


@pytest.mark.parametrize(
    ("message", "wanted"),
    [
        ("コミットメッセージは英語で", "コミットメッセージは英語で"),
        ("新機能は別のワークツリーで作業するように", "新機能は別のワークツリーで作業するように"),
        ("Commit-Nachrichten bitte auf Englisch", "Commit-Nachrichten bitte auf Englisch"),
        ("テストが通るか確認できる？", None),  # a question
        ("あー、タグで管理してたのに", None),  # regret: "のに" is "even though"
        ("もう1回ビルドして", None),  # "once more": this task
        ("ログイン画面が表示されない", None),  # a report
        ("rename the flag to --dry-run", None),  # English: the English reader's
    ],
)
def test_a_calm_request_in_another_language_is_an_instruction(message: str, wanted: str | None) -> None:
    reading = read_message(message)
    assert not reading.friction
    got = [d.text for d in reading.instructions]
    if wanted is None:
        assert wanted not in got and foreign.requests(message) == []
    else:
        assert got == [wanted] and reading.instructions[0].seed


@pytest.mark.parametrize(
    ("message", "rule"),
    [
        (
            "yeah let's update CLAUDE.md but make sure that claude asks before running the e2e tests",
            "make sure that claude asks before running the e2e tests",
        ),
        ("PRのタイトルは英語で書くように. claude.md", "PRのタイトルは英語で書くように"),
        ("add this to AGENTS.md: keep every commit buildable", "keep every commit buildable"),
        ("does CLAUDE.md say anything about the e2e tests?", None),  # a question about the file
        ("add a code map to AGENTS.md in the root dir", None),  # an edit of the file itself
        ("update CLAUDE.md and then run the tests", None),  # two tasks in a row
    ],
)
def test_a_rule_for_the_instruction_file_is_a_memo(message: str, rule: str | None) -> None:
    reading = read_message(message)
    if rule is None:
        assert "memo" not in reading.markers
    else:
        assert "memo" in reading.markers and [d.text for d in reading.instructions] == [rule]


@needs_e5
def test_calm_rules_said_once_become_candidates_in_any_language(state_root: Path) -> None:
    proposals = analyzed(
        state_root,
        [
            ("ログイン画面のバリデーションを追加して", "追加しました。", "2026-05-01T10:00:00Z"),
            ("issueのタイトルは英語に", "了解です。", "2026-05-01T10:05:00Z"),
            ("このファイルを削除して", "削除しました。", "2026-05-01T10:10:00Z"),
            (
                "ok let's update CLAUDE.md but make sure that you ask before running the slow e2e suite",
                "Updated CLAUDE.md.",
                "2026-05-01T10:15:00Z",
            ),
            ("add a code map to AGENTS.md in the root dir", "Added.", "2026-05-01T10:20:00Z"),
        ],
    )
    said = sorted(f"{p['condition']} / {p['behavior']}" for p in proposals)
    assert len(said) == 2, said
    assert "e2e suite" in said[0] and "ask" in said[0], said
    assert "英語" in said[1], said
    assert all(p["polarity"] == 1 for p in proposals)


@needs_e5
def test_a_calm_report_with_a_negation_is_never_promoted(state_root: Path) -> None:
    # Promoted, "hardcoded strings won't get translated" was worded "Do hardcode strings ...".
    proposals = analyzed(
        state_root,
        [
            ("hardcoded strings won't get translated. strings.xml", "Moved it.", "2026-05-01T10:00:00Z"),
            ("the retry helper doesn't handle timeouts, every call should", "Fixed.", "2026-05-01T10:05:00Z"),
        ],
    )
    assert not any("hardcode" in p["behavior"].lower() for p in proposals), proposals
