"""The analyzer's known failure classes (docs/quality.md, issue 13): each read as a person would, and
the two dev sets written for them (tests/fixtures/analyze_classes, analyze_sessions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO
from habitus.lang import pasted
from habitus.learn import foreign
from habitus.learn.text import read_message
from test_analyze_eval import check_labelled_set, evaluate

CLASSES = REPO / "tests" / "fixtures" / "analyze_classes" / "labels.json"
SESSIONS = REPO / "tests" / "fixtures" / "analyze_sessions" / "labels.json"


def seeds(message: str, before: str = "", **kwargs: object) -> list[str]:
    reading = read_message(message, before=before, **kwargs)  # type: ignore[arg-type]
    return [d.text for d in reading.directives if d.seed] if reading.friction else []


@pytest.mark.parametrize(
    ("message", "before", "wanted"),
    [
        # a verdict without "no"/"again" makes the request beside it a correction
        ("bare errors are useless in the logs. wrap them with context", "returns err as is", "wrap them"),
        ("named export pls, we dont do default exports in this codebase", "a default export", "named export"),
        # a second habit named with a pronoun
        (
            "pin the base image and don't run it as root, add a user",
            "FROM node:latest, as root",
            "run it as root",
        ),
        # "X should Y, not Z" against what was done
        ("the tests should hit a real database, not mocks", "I mocked the database", "real database"),
        # a need of a kind of thing, beside a complaint
        ("why does the close button have no label? icon buttons need an aria-label", "", "aria-label"),
        ("and label the axes, always", "", "label the axes"),
        # a request put to the agent in other words
        ("you need to read the whole file before editing it", "Edited the top of it.", "read the whole file"),
        ("you're not supposed to edit generated files", "Edited gen/api.ts.", "edit generated files"),
        ("i want you to ask before deleting files", "Deleted the old folder.", "ask before deleting"),
        ("can you stop adding docstrings to everything?", "Added docstrings.", "stop adding docstrings"),
        ("next time, run the linter", "Committed.", "run the linter"),
        ("wtf are you doing, read the docs first", "I guessed the API.", "read the docs"),
    ],
)
def test_corrections_without_a_marker_start_a_habit(message: str, before: str, wanted: str) -> None:
    found = seeds(message, before)
    assert any(wanted in text for text in found), found


@pytest.mark.parametrize(
    ("message", "before"),
    [
        ("no, not the invoice template, the credit note one", "Updated the invoice template."),
        ("stop, you're going in circles. let's step back and just log the response first", ""),
        ("never mind, revert that", ""),
        ("no that's wrong, the function should return None when the key is missing", "Returns 0."),
        ("can you make sure the api returns 404 for missing users, not 500", "Added the endpoint."),
        ("please don't commit yet, I want to review first", "Done."),
        ("don't touch the migrations folder for this one", "Done."),
        ("wrap it like the others", "Added CancelOrder."),
        ("the app crashes on startup after your last change, wtf", "Changed the imports."),
        ("node:20-alpine isn't pinned either", "FROM node:20-alpine"),  # joins a habit, never starts one
        ("why did you delete the config file??", "Deleted config.yaml."),  # idem
        ("you need to restart the server", "Changed the config."),  # advice for this task
        ("can you check whether the export works", "Added the export."),
        ("don't worry about the old tests, they're being removed", "Fixed two old tests."),
        ("no rush, do it properly", "Quick fix applied."),
        ("don't break the public api while you're at it", "Refactored the module."),
    ],
)
def test_clarifications_one_offs_and_reports_start_nothing(message: str, before: str) -> None:
    assert seeds(message, before) == []


def test_a_specification_opening_a_session_is_not_a_correction() -> None:
    spec = "implement the login page. don't use any external libraries, just fetch"
    assert read_message(spec, opening=True).friction is False
    assert seeds(spec)  # the same words after the agent's work correct it
    # ... unless the opening message complains
    assert read_message("again you used axios. don't use external libraries", opening=True).friction


def test_pasted_output_is_not_the_users_words() -> None:
    message = (
        "here's the error from CI:\n\nError: Do not use `any` type  @typescript-eslint/no-explicit-any\n"
        "  12:7  error  Unexpected any. Specify a different type\n\nfix it"
    )
    assert "Do not use" not in pasted.own_words(message)
    assert read_message(message).directives == []
    shell = "this exploded. invalid themes must NEVER explode\n\n➜  app git:(main) ✗ npx tsx cli.ts\nDebugger attached."
    assert pasted.own_words(shell) == "this exploded. invalid themes must NEVER explode"
    fenced = "use this instead:\n```\nnever_call(x)\n```\nthanks"
    assert "never_call" not in pasted.own_words(fenced)
    assert pasted.own_words("[theme] why is this blue?") == "[theme] why is this blue?"  # one line: typed
    tail = "that should never happen.\n\nNode.js v23.4.0\nWaiting for the debugger...\nWaiting for the debugger..."
    assert pasted.own_words(tail) == "that should never happen."


@pytest.mark.parametrize(
    ("message", "assistant", "fact"),
    [
        ("main is protected, merges need two approvals", "Got it.", "Main is protected"),
        ("the staging db is reset every night at 3am", "Understood, I won't rely on it.", "staging db"),
        ("the api lives at api.acme.dev", "Thanks, I'll point the client there.", "api.acme.dev"),
    ],
)
def test_acknowledged_statements_are_facts(message: str, assistant: str, fact: str) -> None:
    assert any(fact in f.content for f in read_message(message, assistant=assistant).facts)


@pytest.mark.parametrize(
    ("message", "assistant"),
    [
        ("the build takes forever", "Got it, I reordered the layers."),
        ("81a2be is what link text is in md", "Thanks, updated."),
        ("ok, make muted a little brighter", "Understood."),
    ],
)
def test_acknowledged_reports_and_requests_are_not_facts(message: str, assistant: str) -> None:
    assert read_message(message, assistant=assistant).facts == []


@pytest.mark.parametrize(
    ("message", "rule"),
    [
        ("der Server stürzt immer ab, wenn die Konfiguration fehlt", False),
        ("la página de login siempre tarda mucho en cargar", False),
        ("le déploiement échoue toujours sur staging", False),
        ("サーバーはいつも落ちる", False),
        ("Kommentare bitte immer auf Englisch", True),
        ("ich habe dir doch gesagt: immer die komplette Datei lesen", True),
        ("nunca hagas force push a main", True),
        ("non, jamais de latest dans la CI, fixe la version", True),
        # "broken again, please fix it": a complaint and a repair, in any language
        ("schon wieder kaputt, bitte fix das", False),
        ("otra vez falla el build, arréglalo por favor", False),
        ("опять сломалось, пожалуйста исправь", False),
        ("またビルドが壊れた。直してください", False),
        ("otra vez usaste var. usa siempre const", True),
    ],
)
def test_a_rule_word_in_a_report_is_no_rule(message: str, rule: bool) -> None:
    assert (foreign.corrections(message) is not None) is rule


@pytest.mark.parametrize("path", [CLASSES, SESSIONS], ids=["classes", "sessions"])
def test_dev_set_shape(path: Path) -> None:
    check_labelled_set(path)


@pytest.mark.parametrize("path", [CLASSES, SESSIONS], ids=["classes", "sessions"])
def test_dev_sets_hold_their_figures(path: Path) -> None:
    # docs/quality.md reports these (dev figures); a regression below them fails here.
    result = evaluate(path)
    assert result["habits"]["precision_bp"] >= 8500 and result["habits"]["recall_bp"] >= 9000
    assert result["facts"]["recall_bp"] >= 9000
    noise = [c for c in result["conversations"] if c["file"].startswith(("noise", "review_noise"))]
    assert noise and all(c["proposals"] == [] for c in noise)
