"""The shared language layer, and the round trip from what analyze writes to what select reads."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from habitus.lang import grammar, language, words
from habitus.learn import phrasing
from habitus.learn.text import VERBS
from habitus.select import judge, text

# (what the user said, phrase?, expected condition, activity?) for every branch of phrasing.situation
WRITTEN = [
    ("when a test fails, read the log first", False, "When a test fails", False),
    ("before you push to main, run the tests", False, "When about to push to main", True),
    ("before any prod migration, take a backup", False, "When about to start a prod migration", True),
    ("before deploying, run the smoke tests", False, "When deploying", True),
    ("every script needs a shebang", False, "When writing a script", True),
    ("no console logs in library code", False, "When writing library code", True),
    ("table-driven tests", True, "When writing tests", True),
    ("read the full file", False, "When reading a file", True),
    ("never crash on invalid config", False, "When handling invalid config", True),
    ("no pushes to main", False, "When pushing to main", True),
    ("no console logs", False, "When adding console logs", True),
    ("hmm zebra giraffe zebra", False, "When the work involves giraffe and zebra", True),
    ("ok ok", False, "When working on a task like this", True),
]


@pytest.mark.parametrize(("said", "phrase", "expected", "activity"), WRITTEN)
def test_every_wording_analyze_writes_parses_back_in_select(
    said: str, phrase: bool, expected: str, activity: bool
) -> None:
    written = phrasing.condition([said], phrase=phrase)
    assert written == expected
    read = text.condition(written)
    assert read.event is not activity
    assert (grammar.situation(written).activity is True) is activity
    # a plain question about the object reaches an activity only as a mention, never as a trigger
    question = text.clauses(f"what is the status of {read.request}?")[0]
    assert question.mood == "question"
    assert (judge._rule(question, read) == "mere_mention") is activity


def test_about_to_is_an_activity_not_an_event() -> None:
    # the bug: "When about to ..." used to read as an event, so any question triggered the habit
    for condition in ("When about to push to main", "When about to start a release", "Before a release"):
        assert not text.condition(condition).event, condition
    assert text.condition("When about to push to main").action == text.condition("When pushing").action
    assert text.condition("When you are about to modify a file").action == "modify"
    assert text.condition("When a test fails").event and text.condition("When CI is red").event


@given(
    verb=st.sampled_from(sorted(v for v in VERBS if "-" not in v)),
    thing=st.sampled_from(["the release", "main", "a migration", "the docs", "production"]),
)
def test_before_clauses_round_trip_for_every_verb(verb: str, thing: str) -> None:
    written = phrasing.condition([f"before you {verb} {thing}, check with me"])
    assert written.startswith("When ")
    assert not text.condition(written).event, written


def test_stems_are_snowball_and_shared() -> None:
    assert words.stem("dependencies") == words.stem("dependency") == text.stem("dependency")
    assert words.stem("releases") == words.stem("release")
    assert words.stem("wrote") == words.stem("write")
    assert words.stem("Abhängigkeiten", "german") == words.stem("Abhängigkeit", "german")
    assert words.stem("pruebas", "spanish") == words.stem("prueba", "spanish")
    assert words.stem("тестов", "russian") == words.stem("тесты", "russian")
    assert words.stem("言葉", "japanese") == "言葉"  # no stemmer: unchanged


def test_tokens_and_languages() -> None:
    assert words.tokens("Fix the Bug, don’t wait") == ["fix", "the", "bug", "don't", "wait"]
    assert words.tokens("コミット") == ["コミ", "ミッ", "ット"]
    assert words.tokens("修") == ["修"]
    assert language.language_of("Kannst du bitte die Tests laufen lassen?") == "german"
    assert language.language_of("por favor arregla el error de la base de datos") == "spanish"
    assert language.language_of("corrige le bug dans le parseur stp") == "french"
    assert language.language_of("исправь ошибку") == "russian"
    assert language.language_of("テストを書いて") == "japanese"
    assert language.language_of("修复这个错误") == "chinese"
    assert language.language_of("fix the bug") == "english"
    assert language.language_of("") == "english"
    assert "die" not in language.content_stems("Bitte die Tests reparieren")


def test_rooms_share_the_stop_words() -> None:
    from habitus.advise import notes
    from habitus.learn import text as learn_text

    for room in (learn_text.STOPWORDS, text._STOP, notes.STOP_WORDS):
        assert room >= words.ENGLISH_STOP_WORDS


def test_behavior_polarity() -> None:
    assert grammar.behavior_polarity("Do not push to main") == -1
    assert grammar.behavior_polarity("Don't mock the database") == -1
    assert grammar.behavior_polarity("Never log secrets") == -1
    assert grammar.behavior_polarity("Do run the tests") == 1
