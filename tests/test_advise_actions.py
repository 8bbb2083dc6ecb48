"""Tool calls in words: what the semantic judge embeds for a tool call."""

from __future__ import annotations

import pytest

from habitus.advise import actions, judge, local
from habitus.advise.slice import Entry, Slice


@pytest.mark.parametrize(
    ("call", "action"),
    [
        ("Bash: npm version 2.0.0", "bumped the version number"),
        ("Bash: sed -i 's/3.0.2/3.1.0/' pyproject.toml", "bumped the version number"),
        ("Edit: CHANGELOG.md ## 2.0.0", "edited the CHANGELOG"),
        ("Write: tests/test_export.py def test_empty(): ...", "wrote a test"),
        (
            "Bash: python -m venv /tmp/v && /tmp/v/bin/pip install dist/app.whl",
            "installed it in a fresh environment",
        ),
        ("Bash: pytest -q", "ran the test suite"),
        ("Bash: git checkout -b fix/login-timeout", "created a git branch"),
        ("Edit: README.md new flag --json", "edited the README or the docs"),
        ("Read: src/app.py", "read a file"),
    ],
)
def test_a_tool_call_shows_its_actions(call: str, action: str) -> None:
    assert action in actions.of(call)


def test_a_changelog_is_not_the_docs_and_a_command_only_written_about_did_not_run() -> None:
    assert "edited the README or the docs" not in actions.of("Edit: CHANGELOG.md ## 2.0.0")
    assert "ran the test suite" not in actions.of("Bash: echo 'run pytest before pushing' >> notes.txt")
    assert actions.of("Bash: ls") == [] and actions.described("Bash: ls") == "Bash: ls"


def test_the_judge_embeds_a_tool_call_with_its_actions() -> None:
    entries = [Entry("user", "cut 3.1.0", True), Entry("tool", "npm version 3.1.0", True, "Bash", "ok")]
    tool = next(u for u in local.units_of(Slice(entries=entries)) if u.role == "tool")
    assert judge.embed_text(tool) == "Bash: npm version 3.1.0 (bumped the version number)"


def test_word_cosines_are_per_model() -> None:
    assert local.word_cosines("e5@abc") == local.WORD_COSINES["e5"]
    assert local.word_cosines("minilm@abc") == local.WORD_COSINES["minilm"]
    assert local.word_cosines("mine@abc") == local.WORD_COSINES["minilm"]  # an added model


def test_the_default_setting_finds_the_weights_and_cosines_of_its_model() -> None:
    trained = next(k for k in judge._all_weights() if k.startswith("e5@"))
    same = "default@" + trained.split("@", 1)[1]
    assert judge.weights_for(same) is judge.weights_for(trained) is not None
    assert local.word_cosines(same) == local.WORD_COSINES["e5"]
