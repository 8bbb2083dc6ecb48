"""advise notes: content-free filter, finding identity, SimHash, and the dedupe decision table."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from advise_helpers import PARAPHRASES
from habitus.advise.notes import (
    Delivered,
    content_free,
    decide,
    finding_hash,
    fit,
    normalize,
    signature,
    similarity_bp,
)

# OMP #3520: what a flooding advisor said, hundreds of times.
EMPTY = ["Stop.", "Done.", "No issue; continue.", "LGTM", "looks good!", "All good.", "ok", "", "  ", "On track.",
         "Nothing to add.", "no concerns — continue", "Continue.", "Ｏｋ．"]  # fmt: skip
REAL = ["Stop: the migration drops a column that is still read.", "Done? No: the tests were never run.",
        "Continue, but the API key is logged in plain text."]  # fmt: skip


@pytest.mark.parametrize("note", EMPTY)
def test_content_free_notes_are_recognised(note: str) -> None:
    assert content_free(note)


@pytest.mark.parametrize("note", REAL)
def test_notes_with_content_are_kept(note: str) -> None:
    assert not content_free(note)


def test_finding_hash_ignores_case_spacing_and_trailing_punctuation_outside_code() -> None:
    base = finding_hash("Release not verified")
    assert finding_hash("  release   NOT verified.  ") == base
    assert finding_hash("release not verified?!") == base
    assert len(base) == 64 and int(base, 16) >= 0
    assert finding_hash("release verified") != base
    # Code spans keep their case: `Foo` and `foo` may be different identifiers.
    assert finding_hash("rename `Foo`") != finding_hash("rename `foo`")
    assert normalize("Rename `Foo`  NOW.") == "rename `Foo` now"


def test_paraphrases_stay_similar_and_unrelated_notes_do_not() -> None:
    first = signature(PARAPHRASES[0])
    assert all(similarity_bp(first, signature(p)) >= 6_500 for p in PARAPHRASES)
    assert similarity_bp(first, signature("Tests are skipped in CI.")) < 5_000
    assert similarity_bp(first, first) == 10_000
    assert len(first) == 16


@given(st.text(max_size=200), st.text(max_size=200))
def test_similarity_is_symmetric_and_bounded(a: str, b: str) -> None:
    x, y = signature(a), signature(b)
    assert similarity_bp(x, y) == similarity_bp(y, x)
    assert 0 <= similarity_bp(x, y) <= 10_000


SIG = signature(PARAPHRASES[0])
FAR = signature("Tests are skipped in CI.")
PREVIOUS = Delivered("concern", SIG, turn=10)


@pytest.mark.parametrize(
    ("severity", "sig", "previous", "muted", "turn", "reraise", "threshold", "action", "tag"),
    [
        ("concern", SIG, None, False, 1, 4, 5000, "deliver", None),  # first time
        ("blocker", SIG, None, True, 1, 4, 5000, "muted", None),  # muted first, whatever else
        ("blocker", FAR, PREVIOUS, True, 20, 4, 5000, "muted", None),  # muted beats re-raise and duplicate
        ("blocker", SIG, PREVIOUS, False, 14, 4, 5000, "deliver", "re-raised"),  # rose, 4 turns later
        ("blocker", SIG, PREVIOUS, False, 13, 4, 5000, "suppressed", None),  # rose, only 3 turns later
        ("concern", SIG, PREVIOUS, False, 50, 4, 5000, "suppressed", None),  # same severity: not a rise
        ("nit", SIG, PREVIOUS, False, 50, 4, 5000, "suppressed", None),  # lower severity
        ("blocker", SIG, PREVIOUS, False, 50, 0, 5000, "suppressed", None),  # re-raise disabled
        ("concern", FAR, PREVIOUS, False, 11, 4, 5000, "deliver", "possible-duplicate"),  # text changed a lot
        ("concern", FAR, PREVIOUS, False, 11, 4, 0, "suppressed", None),  # threshold 0: never
        (
            "concern",
            SIG,
            PREVIOUS,
            False,
            11,
            4,
            10_000,
            "suppressed",
            None,
        ),  # identical text: 10000 !< 10000
    ],
)
def test_dedupe_decision_table(
    severity: str,
    sig: str,
    previous: Delivered | None,
    muted: bool,
    turn: int,
    reraise: int,
    threshold: int,
    action: str,
    tag: str | None,
) -> None:
    decision = decide(
        severity=severity,
        note_signature=sig,
        previous=previous,
        muted=muted,
        turn=turn,
        reraise_min_turns=reraise,
        threshold_bp=threshold,
    )
    assert (decision.action, decision.tag) == (action, tag)


def test_fit_cuts_visibly() -> None:
    assert fit("short", 80) == "short"
    cut = fit("x" * 200, 80)
    assert len(cut) == 80 and cut.endswith("…")
