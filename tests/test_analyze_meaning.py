"""The meaning gate (habitus.learn.meaning): a prompt is read as a standing rule or a generalising
correction by the multilingual E5 embedding and a trained scorer, not by word lists; the local analyzer
proposes a new candidate only when one of the prompts it cites reads so."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from analyze_helpers import analyzed, needs_e5
from habitus.habits.lifecycle import Evidence, Proposal
from habitus.learn import local, meaning
from habitus.learn.local import Cluster, Found, Group
from habitus.learn.text import Reading


@pytest.fixture(scope="module")
def gate() -> meaning.Gate:
    from habitus.models.embedders import load_embedder
    from habitus.state.root import StateRoot

    with tempfile.TemporaryDirectory() as folder:
        root = StateRoot.at(Path(folder) / "state")
        root.ensure()
        loaded = meaning.Gate.load(load_embedder(root, threads=2))
    assert loaded is not None
    return loaded


@needs_e5
def test_rules_and_corrections_pass_one_off_requests_and_questions_do_not(gate: meaning.Gate) -> None:
    rules = [
        "never push to main directly, always open a PR first",
        "you keep mocking the database in tests. use a real sqlite file",
        "verwende immer pytest statt unittest",  # not in the training data
    ]
    others = [
        "what does this function return when the list is empty?",
        "commit and push",
        "the login page is broken on safari",
    ]
    scores = gate.scores(rules + others)
    assert min(scores[:3]) >= gate.drop, scores
    assert max(scores[3:]) < gate.drop, scores
    assert gate.scores([]) == []


def test_pasted_text_is_not_read() -> None:
    text = "looks odd:\n```\nTraceback (most recent call last):\n  File x.py\nValueError: bad\n```\n"
    assert "Traceback" not in meaning.text_of(text)
    assert len(meaning.text_of("word " * 1000)) == meaning.TEXT_CHARS


class _Fixed:
    """A gate that scores every prompt the same."""

    def __init__(self, score: float) -> None:
        self.score, self.drop = score, 0.5

    def scores(self, prompts: list[str]) -> list[float]:
        return [self.score for _ in prompts]


def _made(reuses: str | None) -> tuple[Cluster, Found]:
    proposal = Proposal(
        "When committing", "Do write imperative subjects.", 1, 6000, (Evidence("r", "d", None),)
    )
    return Cluster(groups=[0]), Found(proposal, True, reuses)


def test_the_gate_drops_a_new_candidate_none_of_whose_prompts_reads_as_a_rule() -> None:
    groups = [Group(0, "write imperative subjects", [], True, True)]
    observations = [
        local.Observation(0, "r", "2026-05-01", None, None, "use imperative subjects", "", "complete")
    ]
    calm, rejected = [Reading()], [Reading(rejection=True)]
    new, reused = _made(None), _made("h1")

    def gate(score: float) -> Callable[[], Any]:
        return lambda: _Fixed(score)

    assert local._meant([new, reused], groups, observations, calm, gate(0.1)) == [reused]
    assert local._meant([new, reused], groups, observations, calm, gate(0.9)) == [new, reused]
    assert local._meant([new], groups, observations, calm, lambda: None) == [new]  # no gate: no check
    # a rejected tool use is the user stopping the agent: evidence enough whatever the words
    assert local._meant([new], groups, observations, rejected, gate(0.1)) == [new]
    # a swap is read whole by the word rules ("no, yarn no, usa bun"): the scorer cannot veto it
    swapped = [Reading(friction=True, markers={"no", "replacement"})]
    assert local._meant([new], groups, observations, swapped, gate(0.1)) == [new]


@needs_e5
def test_a_calm_rule_said_once_starts_a_candidate_a_one_off_request_does_not(state_root: Path) -> None:
    proposals = analyzed(
        state_root,
        [
            ("add a retry to the upload step", "Added a retry with backoff.", "2026-05-01T10:00:00Z"),
            (
                "please keep all our design notes in the wiki from now on, not in the repo",
                "Understood, I'll put them in the wiki.",
                "2026-05-01T10:05:00Z",
            ),
            ("rename the flag to --dry-run and update the help text", "Renamed.", "2026-05-01T10:10:00Z"),
        ],
    )
    assert [p["stage"] for p in proposals] == ["collecting"], proposals
    assert "wiki" in proposals[0]["behavior"] and "design notes" in proposals[0]["behavior"], proposals
    assert not any("dry-run" in p["behavior"] for p in proposals)
