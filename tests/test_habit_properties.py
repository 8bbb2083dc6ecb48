"""Property tests: the wording, law and row-sealing functions never crash and keep their invariants."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from habitus.errors import HabitusError
from habitus.habits import rows
from habitus.habits.law import check_law, parse
from habitus.habits.wording import clean_field, normalize, wording_checksum

TEXT = st.text(max_size=300)


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_clean_field_returns_trimmed_text_or_a_documented_error(text: str) -> None:
    try:
        cleaned = clean_field("behavior", text)
    except HabitusError as exc:
        assert exc.code in ("bad_request", "refused")
        assert exc.exit in (2, 3)
    else:
        assert cleaned == text.strip() and 0 < len(cleaned) <= 1000


@settings(max_examples=200, deadline=None)
@given(TEXT, TEXT, st.sampled_from([1, -1]))
def test_review_checksum_ignores_case_and_spacing_only(condition: str, behavior: str, polarity: int) -> None:
    base = wording_checksum(condition, behavior, polarity)
    assert wording_checksum(
        f"  {condition.upper()} ", behavior.replace(" ", "  "), polarity
    ) == wording_checksum(condition.upper(), behavior, polarity)
    assert normalize(normalize(condition)) == normalize(condition)
    assert wording_checksum(condition, behavior, -polarity) != base


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=2000), TEXT, TEXT)
def test_law_parsing_and_checking_never_crash(law_bytes: bytes, condition: str, behavior: str) -> None:
    try:
        law = parse(law_bytes)
    except HabitusError as exc:
        assert exc.code == "state_corrupt"
        return
    for finding in check_law(condition, behavior, law):
        assert finding["source"] in ("builtin", "law.md") and finding["field"] in ("condition", "behavior")


@settings(max_examples=100, deadline=None)
@given(TEXT, st.integers(-(2**40), 2**40), st.binary(max_size=64))
def test_sealed_rows_verify_and_any_change_is_detected(text: str, number: int, blob: bytes) -> None:
    values = {
        "habit_id": text,
        "field": "condition",
        "model_id": "m",
        "dims": number,
        "input": text[::-1],
        "vector": blob,
        "created_at": "t",
    }
    sealed = {**values, "checksum": rows.seal("habit_vectors", values)}
    assert rows.verify("habit_vectors", sealed) == sealed
    for key, changed in (("dims", number + 1), ("vector", blob + b"\0"), ("habit_id", text + "x")):
        try:
            rows.verify("habit_vectors", {**sealed, key: changed})
        except HabitusError as exc:
            assert exc.code == "checksum_mismatch"
        else:
            raise AssertionError(f"a change of {key} went unnoticed")
