"""Corrections in other languages (de, es, fr, pt, ru, ja, zh) through the production path: three
corrections of one habit over three days become one reviewable candidate in the user's own words; calm
requests and bug reports in those languages become nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyze_helpers import capture
from conftest import run
from habitus.learn import foreign

# language -> (three corrections of one habit, a word the habit must keep)
STREAMS = {
    "de": (
        [
            "nein, lies immer die ganze Datei, bevor du sie änderst",
            "schon wieder nur den Anfang gelesen. lies immer die ganze Datei",
            "ich habe dir doch gesagt: immer die komplette Datei lesen",
        ],
        "Datei",
    ),
    "es": (
        [
            "no, siempre ejecuta los tests antes de decir que está listo",
            "otra vez sin tests. siempre corre los tests antes de decir que terminaste",
            "te dije: nunca digas que está listo sin ejecutar los tests",
        ],
        "tests",
    ),
    "fr": (
        [
            "non, ne commite jamais directement sur main",
            "encore sur main ! ne pousse jamais directement sur main",
            "je t'ai dit : jamais de commit directement sur main",
        ],
        "main",
    ),
    "pt": (
        [
            "não, nunca use print em código de biblioteca",
            "de novo print na biblioteca. nunca use print em código de biblioteca",
            "eu já te disse: nunca print em código de biblioteca",
        ],
        "print",
    ),
    "ru": (
        [
            "нет, никогда не пушь напрямую в main",
            "опять запушил в main. никогда не пушь в main напрямую",
            "я же говорил: никогда не пушь в main",
        ],
        "main",
    ),
    "ja": (
        [
            "違う、mainに直接pushしないで",
            "またmainにpushした。mainに直接pushしないで",
            "何度も言ったでしょ、mainには絶対pushしないで",
        ],
        "main",
    ),
    "zh": (
        [
            "不对，不要直接推送到main",
            "又推送到main了。不要直接推送到main",
            "我说过，永远不要直接推送到main",
        ],
        "main",
    ),
}

CALM = [
    "ok, mach weiter",
    "füge bitte einen Test hinzu",
    "nein, das ist falsch",
    "ça ne marche pas",
    "это не работает",
    "そのファイルを読んでください",
    "请添加一个测试",
    "kannst du die Tests laufen lassen?",
    "obrigado, ficou ótimo",
]


def _rows(corrections: list[str]) -> list[tuple[str, str, str]]:
    rows = []
    for day, text in enumerate(corrections, start=1):
        rows.append(
            (f"task {day}", "Done: pushed to main, read the top of the file.", f"2026-05-0{day}T09:00:00Z")
        )
        rows.append((text, "Sorry, fixed.", f"2026-05-0{day}T09:05:00Z"))
    return rows


@pytest.mark.parametrize("language", sorted(STREAMS))
def test_three_corrections_in_a_language_make_one_reviewable_habit(state_root: Path, language: str) -> None:
    corrections, kept = STREAMS[language]
    assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    capture(state_root, _rows(corrections))
    proposals = run(["analyze"]).result["proposals"]
    assert len(proposals) == 1, proposals
    proposal = proposals[0]
    assert proposal["stage"] == "reviewable", proposal
    assert proposal["condition"].startswith("When ") and proposal["behavior"].startswith("Do ")
    assert kept.lower() in proposal["behavior"].lower(), proposal


def test_calm_words_in_other_languages_are_no_correction(state_root: Path) -> None:
    for text in CALM:
        assert foreign.corrections(text) is None, text
    assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    rows = [(text, "Done.", f"2026-05-01T10:{i:02d}:00Z") for i, text in enumerate(CALM)]
    capture(state_root, rows)
    assert run(["analyze"]).result["proposals"] == []


FACTS = [
    ("übrigens, der Staging-Server wird jeden Sonntag zurückgesetzt", "Staging-Server"),
    ("por cierto, desplegamos solo los martes", "martes"),
    ("au fait, la prod tourne en python 3.12", "python"),
    ("кстати, сервер staging сбрасывается каждое воскресенье", "staging"),
    ("ちなみに、本番はPython 3.12です", "Python"),
    ("顺便说一下，我们只在周二部署", "周二"),
    ("wir verwenden pnpm in diesem Repo", "pnpm"),
]


def test_facts_in_other_languages_become_memory_suggestions(state_root: Path) -> None:
    assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    rows = [(text, "Ok.", f"2026-05-01T11:{i:02d}:00Z") for i, (text, _) in enumerate(FACTS)]
    rows.append(("merk dir: nie direkt auf main pushen", "Ok.", "2026-05-01T11:30:00Z"))  # asks
    capture(state_root, rows)
    result = run(["analyze"]).result
    contents = [s["content"] for s in result["memory_suggestions"]]
    assert len(contents) == len(FACTS), contents
    for (_, kept), content in zip(FACTS, contents, strict=True):
        assert kept in content, content
    assert [p["behavior"] for p in result["proposals"]] == ["Do nie direkt auf main pushen."]


# A complaint that something happened again, without a rule word and without asking for anything: it
# says what went wrong, so quoting it as "Do ..." would invert it.
COMPLAINTS = [
    "der Build ist schon wieder rot",
    "otra vez el linter falla en el CI",
    "encore une fois les imports sont en désordre",
    "опять тесты упали на сервере",
    "またCIが落ちている",
]


def test_a_repeated_complaint_never_becomes_a_behaviour() -> None:
    for text in COMPLAINTS:
        assert foreign.corrections(text) is None, text


def test_a_repeated_request_that_asks_is_kept_in_the_users_words() -> None:
    found = foreign.corrections("schon wieder! bitte schreib die Kommentare auf Englisch")
    assert found is not None
    directives, markers = found
    assert "again" in markers and any("Englisch" in d for d in directives), found
