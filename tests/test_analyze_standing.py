"""Standing rules a user says again and again, or once about the prose the agent writes (issue 13, the
analyze part, fourth round): a hold-off ("don't change anything yet") or a complaint about one quality
("too small", "too long", "too complicated") in two prompts of a batch; a ban on a feature of prose ("no
em dashes"); ".." between words ends a sentence; what the program does each time is no rule for the
agent. Sentences written for these tests, none taken from a labelled set."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyze_helpers import analyzed, needs_e5
from habitus.learn import standing
from habitus.learn.text import read_message, sentences


@pytest.mark.parametrize(
    ("message", "kinds"),
    [
        ("hmm nice. don't touch the code yet, tell me what you would do", {"hold"}),
        ("what are the options before you make any edits", {"hold"}),
        ("read the whole module before you change it", set()),  # a rule about reading, no hold
        ("let's agree on the data model first", {"hold"}),
        ("ne modifie rien pour l'instant, on en parle", {"hold"}),
        ("まだ変更しないで、まず相談したい", {"hold"}),
        ("the subtitles are too small to read on a phone", {"small"}),
        ("the captions need to be a bit bigger", {"small"}),
        ("this intro is way too long, nobody reads it", {"long"}),
        ("too many words on the start screen", {"long"}),
        ("der Hilfetext ist zu lang", {"long"}),
        ("the onboarding is too complicated for a first game", {"complex"}),
        ("honestly it's too much to take in", {"complex"}),
        ("the build takes too long to finish", set()),  # time, not text
        ("is the timeout too long? or too short?", set()),  # a question about a choice
        ("make the logo bigger", set()),  # a task
        ("don't change the port", set()),  # a one-off ban, no hold
    ],
)
def test_kinds_of_repeated_prompt(message: str, kinds: set[str]) -> None:
    assert standing.kinds(message) == kinds


@pytest.mark.parametrize(
    ("message", "rule"),
    [
        ("nice. no em dashes please", "no em dashes in text you write"),
        ("shorter + i dont like emojis", "no emojis in text you write"),
        ("write the changelog entry, no exclamation marks", "no exclamation marks in text you write"),
        ("the release notes shouldn't sound so AI generated", "do not write text that sounds AI generated"),
        ("is there no emoji picker?", None),  # a question about the product
        ("no bullet points found in the parser output yet", None),  # a report
    ],
)
def test_a_ban_on_a_feature_of_prose_is_a_rule(message: str, rule: str | None) -> None:
    reading = read_message(message)
    made = [d for d in reading.directives if d.sure]
    if rule is None:
        assert not made
    else:
        assert reading.friction and [d.text for d in made] == [rule] and made[0].seed


def test_two_dots_between_words_end_a_sentence() -> None:
    assert sentences("the card reads fine now..the footer overlaps the score..move the footer down") == [
        "the card reads fine now",
        "the footer overlaps the score",
        "move the footer down",
    ]
    assert sentences("see ../docs/setup.md and wait...") == ["see ../docs/setup.md and wait..."]


def test_a_hold_off_makes_the_messages_requests_part_of_the_discussion() -> None:
    # "any other layout ideas" beside a hold asks for ideas, it states no rule; a prose ban still stands.
    assert read_message("any other layout ideas..don't change anything just yet").directives == []
    assert read_message("any other layout ideas..don't change anything just yet").instructions == []
    held = read_message("and no emojis..don't implement yet")
    assert [d.text for d in held.directives] == ["no emojis in text you write"]


@pytest.mark.parametrize(
    "message",
    [
        "ideally every time you run the exporter it writes a summary to /out/summaries",
        "whenever someone opens the app the splash screen shows the version",
    ],
)
def test_what_the_program_does_each_time_is_no_rule_for_the_agent(message: str) -> None:
    reading = read_message(message)
    assert reading.directives == [] and reading.instructions == []


def test_we_are_not_to_is_a_prohibition() -> None:
    reading = read_message("please tidy the notes, we aren't to use the vendor SDK for the parser")
    assert "rule" in reading.markers
    assert [d.text for d in reading.directives] == ["don't use the vendor SDK for the parser"]


@needs_e5
def test_a_hold_said_twice_becomes_discuss_first(state_root: Path) -> None:
    proposals = analyzed(
        state_root,
        [
            ("add a pause menu to the game", "Added a pause menu.", "2026-05-01T10:00:00Z"),
            (
                "hmm, what would the scoring look like? don't change anything yet",
                "Here is how.",
                "2026-05-01T10:05:00Z",
            ),
            ("ok do it", "Done.", "2026-05-01T10:10:00Z"),
            ("let's agree on the enemy types first, then code", "Sure, options: ...", "2026-05-01T10:20:00Z"),
        ],
    )
    said = [f"{p['condition']} / {p['behavior']}" for p in proposals]
    assert said == ["When making changes / Do discuss the approach with the user first."], said


@needs_e5
def test_a_hold_said_once_is_about_this_task(state_root: Path) -> None:
    proposals = analyzed(
        state_root,
        [
            ("add a pause menu to the game", "Added a pause menu.", "2026-05-01T10:00:00Z"),
            (
                "what would the scoring look like? don't change anything yet",
                "Here is how.",
                "2026-05-01T10:05:00Z",
            ),
            ("ok do it", "Done.", "2026-05-01T10:10:00Z"),
        ],
    )
    assert proposals == []


@needs_e5
def test_a_complaint_repeated_becomes_a_rule_for_what_the_user_reads(state_root: Path) -> None:
    proposals = analyzed(
        state_root,
        [
            ("add a help screen", "Added a help screen.", "2026-05-01T10:00:00Z"),
            ("the help text is too long, nobody will read it", "Shortened it.", "2026-05-01T10:05:00Z"),
            ("add a credits screen", "Added.", "2026-05-01T10:10:00Z"),
            ("still too many words on the credits", "Trimmed.", "2026-05-01T10:15:00Z"),
            ("the build takes too long", "Cached the deps.", "2026-05-01T10:20:00Z"),
        ],
    )
    said = [f"{p['condition']} / {p['behavior']}" for p in proposals]
    assert said == ["When writing text the user reads / Do keep it short and use few words."], said
    assert proposals[0]["polarity"] == 1


@needs_e5
def test_a_ban_on_prose_said_once_is_proposed(state_root: Path) -> None:
    proposals = analyzed(
        state_root,
        [
            ("write the store description", "Here it is: ...", "2026-05-01T10:00:00Z"),
            ("better. no em dashes", "Removed them.", "2026-05-01T10:05:00Z"),
        ],
    )
    said = [f"{p['condition']} / {p['behavior']}" for p in proposals]
    assert len(said) == 1 and "em dashes" in said[0] and said[0].count("Do not") == 1, said
    assert proposals[0]["polarity"] == -1


def test_asking_to_talk_beside_a_hold_off_stops_the_agent() -> None:
    reading = read_message("the menu looks ok..don't add it to the game yet..let's talk about the flow")
    assert "halt" in reading.markers
    assert [d.text for d in reading.directives] == [
        "talk through the approach with the user before making changes"
    ]
    assert reading.directives[0].sure
    assert read_message("let's talk about the flow").directives == []  # no hold: a wish to chat


@needs_e5
def test_two_repeated_complaints_are_two_habits(state_root: Path) -> None:
    proposals = analyzed(
        state_root,
        [
            ("add a settings page", "Added it.", "2026-05-01T10:00:00Z"),
            ("the labels there are too small", "Made them bigger.", "2026-05-01T10:05:00Z"),
            ("way too many words in the intro text", "Trimmed it.", "2026-05-01T10:10:00Z"),
            ("the hints are too small as well", "Bigger now.", "2026-05-01T10:15:00Z"),
            ("the help page is too long", "Shortened.", "2026-05-01T10:20:00Z"),
        ],
    )
    said = sorted(p["behavior"] for p in proposals)
    assert said == ["Do keep it short and use few words.", "Do make text and labels big enough to read."], (
        said
    )


@pytest.mark.parametrize(
    ("message", "banned"),
    [
        ("keine Gedankenstriche bitte", "keine Gedankenstriche bitte"),
        ("ok. pas d'emojis dans les textes du jeu", "pas d'emojis dans les textes du jeu"),
        ("sin emojis, por favor", "sin emojis, por favor"),
        ("説明文では絵文字は使わないで", "説明文では絵文字は使わないで"),
        ("不要用破折号", "不要用破折号"),
        ("der Hilfetext darf nicht nach KI klingen", "der Hilfetext darf nicht nach KI klingen"),
        ("la app no funciona sin emojis?", None),  # a question
        ("Emojis werden nicht angezeigt", None),  # a report
    ],
)
def test_a_ban_on_prose_in_another_language_is_a_rule(message: str, banned: str | None) -> None:
    reading = read_message(message)
    made = [d.text for d in reading.directives if d.sure]
    if banned is None:
        assert made == []
    else:
        assert reading.friction and made == [banned] and "foreign" in reading.markers


@needs_e5
def test_a_ban_on_prose_in_german_is_proposed_in_the_users_words(state_root: Path) -> None:
    proposals = analyzed(
        state_root,
        [
            ("schreib die Beschreibung für den Store", "Hier ist sie: ...", "2026-05-01T10:00:00Z"),
            ("besser. keine Gedankenstriche bitte", "Entfernt.", "2026-05-01T10:05:00Z"),
        ],
    )
    assert [p["behavior"] for p in proposals] == ["Do keine Gedankenstriche bitte."], proposals
