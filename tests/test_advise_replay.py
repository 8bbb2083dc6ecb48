"""A scripted model reviewer repeating one finding 300 times delivers it once (plus the one re-raise),
and any malformed reviewer answer fails closed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from advise_helpers import PARAPHRASES, enable, pair, review, setting
from conftest import run
from model_doubles import INJECTIONS, ModelServer, Reply, configure

KEYS = ["Release not verified", "release not verified.", "RELEASE NOT VERIFIED", "  release   not verified "]
EMPTY = ["Looks good.", "No issue; continue.", "Done.", "Stop."]
REVIEWS = 300
RAISE_AT = 150


def script() -> tuple[list[dict[str, Any]], dict[str, int]]:
    """300 answers: the same finding in paraphrases (mostly concern, some nit, one rise to blocker at
    RAISE_AT and blockers after it), with content-free notes and silence mixed in."""
    answers, expected = [], {"dropped": 0, "silent": 0, "notes": 0}
    for i in range(REVIEWS):
        if i % 10 == 3:
            advice: dict[str, Any] | None = {
                "note": EMPTY[i % 4],
                "severity": "nit",
                "findingKey": "all fine",
            }
            expected["dropped"] += 1
        elif i % 10 == 7:
            advice = None
            expected["silent"] += 1
        else:
            severity = "blocker" if i >= RAISE_AT else ("nit" if i % 10 == 5 else "concern")
            advice = {
                "note": PARAPHRASES[i % len(PARAPHRASES)],
                "severity": severity,
                "findingKey": KEYS[i % 4],
            }
            expected["notes"] += 1
        answers.append({"schema_version": 1, "advice": advice})
    return answers, expected


def test_300_reviews_of_one_paraphrased_finding_deliver_it_once_plus_the_re_raise(state_root: Path) -> None:
    enable(state_root, model="m")
    answers, expected = script()
    delivered = []
    with ModelServer([Reply.answer("openai", a) for a in answers]) as server:
        configure(state_root, "m", kind="openai", url=server.url("/v1"), model="test")
        for i in range(REVIEWS):
            result = review(pair(f"Step {i}: bumped things and said it is fine.", session="replay"))
            assert result["reviewed"] and result["reviewers"]["model"]["status"] == "ok"
            if result["note"] is not None:
                delivered.append((i, result["note"]["severity"], result["note"]["tag"]))
        assert len(server.requests) == REVIEWS
    # Once at the start, and once more when it rose to blocker (>= 4 turns later): nothing else.
    assert delivered == [(0, "concern", None), (RAISE_AT, "blocker", "re-raised")]
    status = run(["status"]).result["advise"]
    assert status["reviews"] == REVIEWS and status["failures"] == 0
    assert status["notes"]["delivered"] == 2
    assert status["notes"]["dropped"] == expected["dropped"]
    assert status["notes"]["suppressed"] == expected["notes"] - 2


def test_re_raise_waits_the_configured_number_of_turns(state_root: Path) -> None:
    enable(state_root, model="m", reraise_min_turns=6)
    concern = {"note": PARAPHRASES[0], "severity": "concern", "findingKey": KEYS[0]}
    blocker = {**concern, "severity": "blocker"}
    answers = [concern] + [blocker] * 7
    with ModelServer([Reply.answer("openai", {"schema_version": 1, "advice": a}) for a in answers]) as server:
        configure(state_root, "m", kind="openai", url=server.url("/v1"), model="test")
        tags = [review(pair(f"turn {i}", session="r"))["note"] for i in range(len(answers))]
    assert [n["tag"] if n else None for n in tags] == [None, None, None, None, None, None, "re-raised", None]
    assert tags[0] is not None and tags[6]["severity"] == "blocker"


MALFORMED = {
    "not_json": Reply.answer("openai", "Sure! The release looks risky."),
    "extra_field": Reply.answer("openai", {"schema_version": 1, "advice": None, "mood": "happy"}),
    "bad_severity": Reply.answer(
        "openai",
        {"schema_version": 1, "advice": {"note": "x y z", "severity": "critical", "findingKey": "k"}},
    ),
    "missing_key": Reply.answer(
        "openai", {"schema_version": 1, "advice": {"note": "x y z", "severity": "nit"}}
    ),
    "long_key": Reply.answer(
        "openai",
        {"schema_version": 1, "advice": {"note": "x y z", "severity": "nit", "findingKey": "k" * 201}},
    ),
    "two_notes": Reply.answer("openai", {"schema_version": 1, "advice": [{"note": "a"}, {"note": "b"}]}),
    "wrong_version": Reply.answer("openai", {"schema_version": 2, "advice": None}),
    "injection": Reply.answer(
        "openai",
        {"schema_version": 1, "advice": {"note": INJECTIONS[0], "severity": "blocker", "findingKey": "k"}},
    ),
    "cut_off": Reply.answer("openai", {"schema_version": 1, "advice": None}, stop="length"),
    "server_error": Reply.status_only(500),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_reviewer_output_fails_closed(state_root: Path, case: str) -> None:
    enable(state_root, model="m")
    with ModelServer([MALFORMED[case]]) as server:
        configure(state_root, "m", kind="openai", url=server.url("/v1"), model="test")
        result = review(pair("I deployed the service and updated the docs.", session="bad"))
    assert result["reviewed"] is True and result["note"] is None and result["candidates"] == []
    assert result["reviewers"]["model"]["status"] == "failed"
    status = run(["status"]).result["advise"]
    assert status["failures"] == 1 and status["consecutive_failures"] == 1
    assert status["notes"]["pending"] == 0 and status["notes"]["delivered"] == 0
    assert status["last_failure"] == f"model:{result['reviewers']['model']['reason']}"


def test_a_good_review_resets_the_failure_streak(state_root: Path) -> None:
    enable(state_root, model="m")
    replies = [
        MALFORMED["not_json"],
        MALFORMED["not_json"],
        Reply.answer("openai", {"schema_version": 1, "advice": None}),
    ]
    with ModelServer(replies) as server:
        configure(state_root, "m", kind="openai", url=server.url("/v1"), model="test")
        for i in range(3):
            review(pair(f"work {i}", session="streak"))
    status = run(["status"]).result["advise"]
    assert status["failures"] == 2 and status["consecutive_failures"] == 0 and status["paused"] is None


def test_a_missing_model_is_a_reviewer_failure_not_a_crash(state_root: Path) -> None:
    enable(state_root)
    setting(state_root, "advise.model", "nowhere")
    result = review(pair("Renamed the helper.", session="m"))
    assert result["reviewers"]["model"] == {"status": "failed", "reason": "not_configured"}
    assert result["reviewers"]["local"]["status"] == "ok"
