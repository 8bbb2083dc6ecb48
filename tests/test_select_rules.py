"""The local judge's rule checks, one category at a time, on the 32-habit catalog with the real model.

The prompts here are written for these tests (not taken from tests/fixtures/select/cases.jsonl), so they
check the rules on text the calibration never saw.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from habitus.select import judge, text, vocab
from select_helpers import FIXTURES


@cache
def setup() -> tuple[Any, Any, Any]:
    import tempfile

    from habitus.habits.vectors import field_input
    from habitus.models.embedders import load_embedder
    from habitus.select import evaluate
    from habitus.state.root import StateRoot

    embedder = load_embedder(StateRoot.at(tempfile.mkdtemp(prefix="habitus-rules-")))
    habits = evaluate.load_catalog(FIXTURES / "habits.jsonl")
    matrix = embedder.embed([field_input("condition", h.condition) for h in habits])
    return embedder, habits, matrix


@cache
def behaviors() -> Any:
    from habitus.habits.vectors import field_input

    embedder, habits, _ = setup()
    return embedder.embed([field_input("behavior", h.behavior) for h in habits])


def decide(prompt: str, context: tuple[str, ...] = ()) -> tuple[list[str], dict[str, str]]:
    embedder, habits, matrix = setup()
    query = judge.analyse(prompt, list(context))
    found = judge.retrieve(embedder, matrix, query, behaviors=behaviors())
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
    # deleting the old Dockerfile is deleting a file: h25 ("When deleting files or directories") may
    # apply, but its gate probability sits at the threshold (0.68 against 0.675 before the joint
    # features, 0.62 after: its behaviour says nothing of files), so only the rule's rejection is asserted
    assert set(selected) <= ({"h25"} if prompt == "delete the old Dockerfile" else set())
    if reason is not None:
        assert reasons[habit] == reason


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("we should pull in a library for retries", ["h09"]),
        ("dockerize the worker", ["h29"]),
        ("the login test keeps failing, dig into it", ["h05"]),
        ("give PR 231 a review", ["h16"]),
        ("put up a PR for this branch", ["h17"]),
        ("update every outdated package to the newest version", ["h10"]),
    ],
)
def test_reworded_requests_select(prompt: str, expected: list[str]) -> None:
    """Idioms and synonyms read in plain words (`vocab`) reach their condition."""
    assert decide(prompt)[0] == expected


@pytest.mark.parametrize(
    "prompt",
    [
        "some tests are failing but ignore them",
        "the CI is red. not my problem, ignore it",
        "the Dockerfile is fine, leave it",
        "if CI fails tomorrow, fix it",
        "if we ever add a dependency, check it first",
        "the tests fail. don't fix them yet",
        "move the helpers into a utils package",
    ],
)
def test_what_a_clause_points_back_to_keeps_its_mood(prompt: str) -> None:
    assert decide(prompt)[0] == []


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


def test_an_imperative_after_a_comma_is_a_request() -> None:
    def read(prompt: str) -> list[tuple[str, str | None]]:
        return [(c.mood, c.action) for c in text.clauses(prompt)]

    # a pronoun object: the words before the comma say what it is about, one request
    assert read("the man page has a typo, fix it") == [("request", "fix")]
    assert read("if the upload blows up, handle it instead of crashing") == [("request", "fix")]
    assert read("if we ever get conflicts, resolve them yourself") == [("hypothetical", "fix")]
    # its own object: two clauses
    assert read("the next reader will be lost, leave some notes in the code") == [
        ("statement", None),
        ("request", "create"),
    ]
    # a bare "<verb> it" takes the clause before it along, unless that one has its own action
    assert text.clauses("pytest says 3 failed. sort it out")[0].text == "pytest says 3 failed. sort it out"
    assert read("review PR 4, then merge it") == [("request", "review"), ("request", "merge")]
    assert read("some tests are failing but ignore them") == [("negated", None)]
    assert read("the Dockerfile is fine, leave it") == [("negated", "create")]


def test_plain_words() -> None:
    assert vocab.canonical("Pull in a library for YAML") == "add a dependency for yaml"
    assert vocab.canonical("the build went red, sort it out") == "the build fails, fix it"
    assert vocab.canonical("containerise the API") == "write a dockerfile for the api"
    assert vocab.canonical("give Ana's merge request a thorough once-over") == "review ana's pull request"
    assert vocab.canonical("update lodash to the latest version") == "upgrade lodash to the latest version"
    # words with two common senses stay as they are
    assert vocab.canonical("build the package") == "build the package"
    # a clause's object words come from its plain reading, and include its own verb
    assert {text.stem("add"), text.stem("dependency")} <= text.clauses("pull in a library")[0].objects
    assert "commit" in text.clauses("commit this")[0].objects


def test_the_gate_reads_agreement_and_mood() -> None:
    """The same similarity counts for more when the English rules agree, and for less when they block."""
    from habitus.select import gate

    model = gate.for_kind("e5")
    dockerfile = text.condition("When writing a Dockerfile")
    query = judge.analyse("write a Dockerfile")

    def probability(prompt: str, live: float) -> float:
        q = judge.analyse(prompt)
        values = gate.features(
            best=0.9,
            condition=0.9,
            margin=0.03,
            first=True,
            live=live,
            unit_live=live,
            hub=0.8,
            habits=32,
            query=q,
            unit=q.units[0],
            condition_read=dockerfile,
        )
        return model.probability(values)

    assert query.units[0].mood == "request"
    assert probability("write a Dockerfile", 0.95) > probability("don't write a Dockerfile", 0.95)
    assert probability("write a Dockerfile", 0.95) > probability("write a Dockerfile", 0.2)
    # the event verb still reads: "a test fails" is met by "failing"
    event = text.condition("When a test fails")
    assert event.predicate == "fail" and event.event


def test_at_most_limit_habits_and_all_above_the_threshold() -> None:
    embedder, habits, matrix = setup()
    query = judge.analyse("write a Dockerfile and a shell script for the worker, then commit")
    found = judge.retrieve(embedder, matrix, query, behaviors=behaviors())
    rows = judge.candidates(habits, query, found)
    from habitus.select import gate

    model = gate.for_kind(found.kind)

    def chosen(accept_bp: int, limit: int = 3) -> list[str]:
        strict = gate.Gate(model.pair, accept_bp, model.live, model.dropped, model.reference)
        return [habits[i].id for i in judge.decide(query, found, rows, limit=limit, model=strict).selected]

    assert chosen(10001) == []
    assert len(chosen(0)) == 3 and len(chosen(0, limit=1)) == 1
    assert set(chosen(model.accept_bp)) <= set(chosen(0))


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
    accepted = judge.analyse("sure, go ahead", context)
    assert accepted.followup.kind == "confirm" and accepted.followup.action == "open"
    assert accepted.unquoted == "open a pull request" and accepted.units[0].mood == "request"
    assert judge.analyse("not yet", context).followup.kind == "reject"
    assert text.followup("handle them", ["There are merge conflicts."]).action == "fix"
    assert text.followup("same for the light theme", ["I defined the dark theme."]).kind == "continue"
    assert text.followup("carry on with the docs", context).kind == "none"
    assert judge.analyse("carry on with the docs", context).followup.kind == "none"


def test_object_words() -> None:
    assert text.object_stems("delete src/app/main.py") == {"file", "src", "app", "main", "py"}
    assert {"workflow", "ci"} <= text.object_stems("edit .github/workflows/ci.yml")
    assert "shell" in text.object_stems("fix deploy.sh")
    assert text.object_stems("remove the tmp/ folder") >= {"directory"}
    assert {"pull", "request"} <= text.object_stems("review PR #12")
    assert text.stem("dependencies") == text.stem("dependency")


# -- pasted material: the words of a log, trace, diff or code are shown, not asked for ---------------

TRACEBACK = """Traceback (most recent call last):
  File "/srv/shop/cart.py", line 41, in total
    return sum(item.price for item in self.items)
TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'
"""
GIT_LOG = """commit 5d1c0e9a77b2
Author: Ana <ana (at) example.org>
Date:   Mon Nov 30 09:12:44 2026 +0100

    Delete the unused fixtures and bump the version to 3.2.0
"""


def test_a_paste_is_cut_out_and_the_ask_around_it_stays() -> None:
    body, count = text.unquote(TRACEBACK + "\nthe cart page shows this since the deploy, can you fix it")
    assert count >= 1 and "TypeError" not in body and "cart.py" not in body
    assert body.endswith("the cart page shows this since the deploy, can you fix it")
    ask = "first the log:\n" + GIT_LOG + "\nwho wrote that?\n" + TRACEBACK
    body, count = text.unquote(ask)
    assert body == "first the log:\n…\n\nwho wrote that?\n…\n" and count >= 2


def test_prose_on_several_lines_is_not_a_paste() -> None:
    prose = "three things:\n- fix the login redirect\n- bump the version\n- then write the changelog"
    assert text.unquote(prose) == (prose, 0)
    single = "the build fails with TypeError: x is undefined\nfix it please\nthanks"
    assert text.unquote(single) == (single, 0)  # one machine-looking line is the user's own words


def test_an_unclosed_code_fence_is_quoted_to_the_end() -> None:
    body, count = text.unquote("why does this fail?\n```\nrm -rf build/\ngit commit -m wip")
    assert count == 1 and "commit" not in body and "rm" not in body and body.startswith("why does this fail?")


@pytest.mark.parametrize(
    "prompt",
    [
        GIT_LOG + "\nwho made this commit?",
        TRACEBACK + "\nwhich line does this point at?",
        GIT_LOG + "\nwer hat diesen Commit gemacht?",
        TRACEBACK + "\nこのエラーはどういう意味ですか？",
    ],
)
def test_a_question_about_a_paste_selects_nothing(prompt: str) -> None:
    assert decide(prompt)[0] == []


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        (TRACEBACK + "\nthe cart page shows this when an item has no price. fix the bug", ["h06"]),
        (GIT_LOG + "\nwrite the commit message for the follow-up change, it restores two fixtures", ["h01"]),
    ],
)
def test_the_ask_around_a_paste_selects_its_habit(prompt: str, expected: list[str]) -> None:
    assert decide(prompt)[0] == expected


def test_a_prompt_not_read_as_english_has_its_own_threshold() -> None:
    """No English rule reads its mood, so the calibration chooses its threshold on its own precision
    (docs/quality.md); the fitted gate carries one, and a row not read as English is judged by it."""
    from dataclasses import replace

    from habitus.select import gate

    fitted = gate.for_kind("e5", 32)
    assert fitted.accept_foreign_bp is not None
    model = replace(fitted, accept_bp=8000, accept_foreign_bp=6000)
    english = tuple(1.0 if name == "english" else 0.0 for name in gate.FEATURES)
    other = tuple(0.0 for _ in gate.FEATURES)
    assert model.threshold(english) == 8000 and model.threshold(other) == 6000
    strict = gate.Gate(model.pair, model.accept_bp, model.live)  # no foreign threshold: one for all
    assert strict.threshold(other) == model.accept_bp


# -- prompts not read as English: moods with their scope (select/moods.py) --------------------------


@pytest.mark.parametrize(
    ("prompt", "moods"),
    [
        ("die Datei nicht lesen, nur umbenennen", ["negated", "request"]),
        ("Nicht optimieren, sondern lesbarer machen", ["negated", "request"]),
        ("no borres nada, solo dime qué ocupa tanto espacio", ["negated", "request"]),
        ("ne touche pas au lock file, renomme juste la variable", ["negated", "request"]),
        ("não mexe nos testes, corrige o bug no cálculo do frete", ["negated", "request"]),
        ("non toccare la migrazione ma guarda perché il worker è lento", ["negated", "request"]),
        ("Не меняй код, просто прочитай файл config.py", ["negated", "request"]),
        ("mainにはコミットしないで、新しいブランチを作って", ["negated", "request"]),
        ("先不要提交，只要跑测试", ["negated", "request"]),
        ("태그는 만들지 말고 버전 번호만 올려 주세요", ["negated", "request"]),
        # what follows a condition in its sentence is its consequence, up to a contrast
        ("Si algún día publicamos en PyPI, revisa el empaquetado", ["hypothetical"]),
        ("如果以后要用 Docker，可能需要一个 Dockerfile", ["hypothetical"]),
        (
            "Si algún día publicamos en PyPI, habrá que revisarlo, pero ahora arregla el test",
            ["hypothetical", "hypothetical", "request"],
        ),
        (
            "Falls wir irgendwann umsteigen, bräuchten wir eine Migration. Schreib jetzt die Tests",
            ["hypothetical", "request"],
        ),
        # a relative clause stays with its noun and does not negate it
        ("Исправь тест, который не проходит", ["request"]),
        ("Repariere den Test, der nicht durchläuft", ["request"]),
        # "se" that is no "if", "no" that is a Portuguese article
        ("corrige o bug no cálculo do frete", ["request"]),
        # a subordinate clause belongs to its request; "mais" is no "but" in Portuguese
        ("Bau ein try/except um load_plugins(), damit ein kaputtes Plugin nicht alles mitreißt", ["request"]),
        ("devolve o preço como objeto, e não mais como número", ["request", "negated"]),
    ],
)
def test_a_prompt_not_read_as_english_is_cut_where_its_negation_ends(prompt: str, moods: list[str]) -> None:
    assert [c.mood for c in text.clauses(prompt)] == moods


@pytest.mark.parametrize(
    ("prompt", "habit"),
    [
        ("die Datei nicht lesen, nur umbenennen", "h07"),
        ("Schreib bitte keine Tests, das mache ich selbst", "h31"),
        ("No hagas commit todavía, quiero revisar el diff", "h01"),
        ("Ne supprime pas le dossier logs, j'en ai encore besoin", "h25"),
        ("依存関係はまだ更新しないで", "h10"),
        ("Если когда-нибудь будем выпускать 2.0, надо будет поднять версию", "h04"),
    ],
)
def test_a_negated_or_hypothetical_request_in_another_language_is_vetoed(prompt: str, habit: str) -> None:
    selected, reasons = decide(prompt)
    assert habit not in selected
    assert reasons.get(habit) in ("negated", "hypothetical_or_future")


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("Die Tests in test_parser.py laufen nicht mehr durch", "h05"),  # an event reported in a negation
        (
            "테스트는 건드리지 말고 config.py 파일을 끝까지 읽어 줘",
            "h07",
        ),  # the live request after the negated one
    ],
)
def test_what_a_negation_in_another_language_does_not_reach_still_selects(prompt: str, expected: str) -> None:
    assert expected in decide(prompt)[0]


def decide_among(prompt: str, ids: set[str]) -> tuple[list[str], dict[str, str]]:
    """As decide, against a small catalog of the habits `ids` (the small-catalog gate)."""
    embedder, habits, matrix = setup()
    keep = [i for i, h in enumerate(habits) if h.id in ids]
    few = [habits[i] for i in keep]
    query = judge.analyse(prompt)
    found = judge.retrieve(embedder, matrix[keep], query, behaviors=behaviors()[keep])
    verdict = judge.local_judge(embedder, few, query, found, limit=3)
    return sorted(few[i].id for i in verdict.selected), {few[i].id: r for i, r in verdict.reasons.items()}


def test_a_second_request_reaches_the_habit_that_leads_its_own_clause() -> None:
    # the migration leads the whole prompt; the pull request, second overall, leads its own clause
    prompt = "Write the migration for the new invoices table, then open a pull request for it."
    assert sorted(decide(prompt)[0]) == ["h11", "h17"]
    few = {"h01", "h09", "h10", "h11", "h12", "h29"}
    # the Dockerfile leads the whole prompt; the migration, second overall, leads its own clause. (With
    # "update all our npm packages to their latest versions" as the first request, h10 falls under the
    # small-catalog threshold since select ranks by the bank's reading too: that clause's nearest bank
    # prompts are about publishing packages and runtime upgrades, docs/quality.md 2026-12-07.)
    prompt = "add a migration for the invoices table and then write a Dockerfile for the api"
    assert decide_among(prompt, few)[0] == ["h11", "h29"]


def test_a_statement_yields_to_a_request_in_another_clause() -> None:
    condition = text.condition("When writing error messages shown to users")
    statement = text.clauses("Our error message for a failed payment shows a raw stack trace")[0]
    assert statement.mood == "statement"
    assert judge._rule(statement, condition) == "mere_mention"
    assert judge._rule(statement, condition, asked=True) is None
    said = "Our error message for a failed payment shows a raw stack trace."
    assert decide(said)[1]["h32"] == "mere_mention"
    assert "h32" in decide(said + " Make it friendlier for customers.")[0]


def test_a_question_stays_a_mention_beside_a_request() -> None:
    selected, reasons = decide("what should a good commit message look like? and fix the typo in the README")
    assert "h01" not in selected and reasons["h01"] == "mere_mention"


def test_joint_reads_condition_and_behaviour_together_with_a_margin_among_habits() -> None:
    import numpy as np

    conditions = np.eye(3, 4, dtype=np.float32)
    behaviors = np.asarray([[0, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0]], dtype=np.float32)
    # the prompt names only what the first habit's behaviour speaks of, not any condition
    prompt = np.asarray([[0, 0, 0, 1]], dtype=np.float32)
    scores, margins = judge._joint(prompt, conditions, behaviors)
    assert scores.tolist() == pytest.approx([2**-0.5, 0.0, 0.0])
    assert margins.tolist() == pytest.approx([judge.MARGIN_CAP, -judge.MARGIN_CAP, -judge.MARGIN_CAP])
    assert judge._joint(prompt, conditions[:1], behaviors[:1])[1].tolist() == [0.0]  # no other habit


@pytest.mark.parametrize(
    ("prompt", "habit"),
    [
        # h29 "When writing a Dockerfile" / "Do pin the base image to an exact version tag"
        ("swap the base image from node:18 to node:22-alpine", "h29"),
        # h31 "When writing new tests" / "Do use real temporary files and databases instead of mocks"
        ("cover the importer with specs against a real temp sqlite file", "h31"),
    ],
)
def test_a_prompt_naming_what_the_behaviour_speaks_of_leads_the_gate(prompt: str, habit: str) -> None:
    """Neither prompt shares a word with the habit's condition; both name the behaviour's object. With
    the condition alone the gate put another habit first (h04, h22)."""
    from habitus.select import gate

    embedder, habits, matrix = setup()
    query = judge.analyse(prompt)
    found = judge.retrieve(embedder, matrix, query, behaviors=behaviors())
    model = gate.for_kind(found.kind, found.habits)
    scored = {
        habits[found.picked[j]].id: model.probability(v) for j, v, _ in judge.candidates(habits, query, found)
    }
    assert max(scored, key=scored.__getitem__) == habit


@pytest.mark.parametrize(
    ("prompt", "habit", "before"),
    [
        # h09 "When adding a new dependency"; by the condition alone h07 "When the user asks you to read a file"
        ("pip install httpx and list it in requirements.txt", "h09", "h07"),
        # h02 "When amending a commit"; by the condition alone h01 "When writing a commit message"
        ("fold this one-line fix into the last commit", "h02", "h01"),
    ],
)
def test_a_paraphrase_ranks_by_the_situation_of_its_bank_neighbours(
    prompt: str, habit: str, before: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Retrieval ranks by the condition's cosine moved by the situation the prompt's nearest bank prompts
    share (adapter.situations): the habit of that situation comes first, where the cosine alone put a
    neighbour first; the margin the gate reads follows that order."""
    embedder, habits, matrix = setup()
    query = judge.analyse(prompt)
    found = judge.retrieve(embedder, matrix, query, behaviors=behaviors())
    assert habits[found.picked[0]].id == habit
    assert found.rank_bp == sorted(found.rank_bp, reverse=True)
    assert found.situation_scores[0] == max(found.situation_scores)
    monkeypatch.setattr(judge, "SITUATION_WEIGHT", 0.0)
    alone = judge.retrieve(embedder, matrix, query, behaviors=behaviors())
    assert habits[alone.picked[0]].id == before and alone.rank_bp == alone.best_bp


def test_the_situation_lift_is_on_the_cosine_s_scale() -> None:
    """The rank is the best cosine plus SITUATION_WEIGHT standard deviations of it per standard deviation
    of the situation score: a catalog's spread of cosines bounds how far the bank can move a habit, and
    a flat situation reading (or a single habit) leaves the cosine as it is."""
    import numpy as np

    best = np.asarray([0.80, 0.78, 0.70], dtype=np.float32)
    situation = np.asarray([0.0, 0.9, 0.1], dtype=np.float32)
    rank = judge._rank(best, situation)
    z = (situation - situation.mean()) / situation.std()
    assert np.allclose(rank, best + judge.SITUATION_WEIGHT * best.std() * z, atol=1e-6)
    assert rank.argmax() == 1
    assert judge._rank(best, np.full(3, 0.3, dtype=np.float32)) is best
    one = best[:1]
    assert judge._rank(one, situation[:1]) is one
