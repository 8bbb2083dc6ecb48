"""Activity per day from a real state root with known events: select log, advise notes and mutes,
observations captured, analyze runs. And the error paths: newer schema, corrupt ledger, bad mutes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from habitus.errors import HabitusError
from habitus.report.activity import SERIES, activity, day_list
from habitus.state.root import StateRoot
from report_helpers import (
    NOW,
    advise_notes,
    analyze_runs,
    days_back,
    declare,
    mutes_on,
    observations_on,
    select_rows,
)


def by_day(result: dict, key: str) -> dict[str, int]:
    return {row["day"]: row[key] for row in result["series"] if row[key]}


def test_a_fresh_root_reports_fourteen_empty_days_and_creates_nothing(state_root: Path) -> None:
    result = activity(StateRoot(state_root), wait=1, now=NOW)
    assert result["days"] == 14 and len(result["series"]) == 14
    assert result["since"] == "2026-11-18" and result["until"] == "2026-12-01"
    assert all(result["totals"][key] == 0 for key in SERIES)
    assert result["sources"] == {"ledger": False, "observations": False, "mutes": True}
    assert not state_root.exists()


def test_known_events_are_counted_on_their_day(state_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    declare("When a test fails", "Read the whole error first")  # creates the ledger
    today, yesterday, old, outside = days_back(0), days_back(1), days_back(13), days_back(14)
    select_rows(state_root, {today: [2, 0, 1], yesterday: [3], old: [0, 0], outside: [3, 3]})
    advise_notes(state_root, {today: (2, 1), old: (1, 0), outside: (5, 5)})
    analyze_runs(state_root, [(yesterday, 200, 2), (yesterday, 50, 0), (outside, 999, 9)])
    mutes_on(state_root, [today, today, outside])
    observations_on(monkeypatch, state_root, {outside: 2, old: 1, yesterday: 3, today: 2})

    result = activity(StateRoot(state_root), wait=1, now=NOW)

    assert by_day(result, "selects") == {today: 3, yesterday: 1, old: 2}
    assert by_day(result, "with_guidance") == {today: 2, yesterday: 1}
    assert by_day(result, "habits_selected") == {today: 3, yesterday: 3}
    assert by_day(result, "notes_delivered") == {today: 2, old: 1}
    assert by_day(result, "notes_muted") == {today: 1}
    assert by_day(result, "mutes_added") == {today: 2}
    assert by_day(result, "observations") == {old: 1, yesterday: 3, today: 2}
    assert by_day(result, "analyze_runs") == {yesterday: 2}
    assert by_day(result, "analyze_records") == {yesterday: 250}
    assert by_day(result, "proposals") == {yesterday: 2}
    assert result["totals"]["observations"] == 6 and result["totals"]["habits_selected"] == 6
    assert result["all_time"] == {"notes_muted": 4}
    assert result["sources"] == {"ledger": True, "observations": True, "mutes": True}


def test_observations_are_counted_across_archived_generations(
    state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from habitus.state import observations

    observations_on(monkeypatch, state_root, {days_back(3): 2})
    observations.start_new_generation(StateRoot(state_root), wait=1)
    observations_on(monkeypatch, state_root, {days_back(3): 1, days_back(0): 4})
    gens = observations.generations(StateRoot(state_root))
    assert len(gens) == 2
    result = activity(StateRoot(state_root), days=7, wait=1, now=NOW)
    assert by_day(result, "observations") == {days_back(3): 3, days_back(0): 4}


def test_a_record_without_its_leading_stamp_fails_closed(
    state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    observations_on(monkeypatch, state_root, {days_back(0): 3})
    log = state_root / "observations" / "obs-000001.jsonl"
    data = bytearray(log.read_bytes())
    data[2:4] = b"xx"  # `{"at"` becomes `{"xx"`: a damaged first record
    log.write_bytes(bytes(data))
    with pytest.raises(HabitusError) as caught:
        activity(StateRoot(state_root), wait=1, now=NOW)
    assert caught.value.code == "state_corrupt"


def test_a_malformed_mutes_file_is_reported_not_fatal(state_root: Path) -> None:
    declare("When a test fails", "Read the whole error first")
    (state_root / "mutes.json").write_bytes(b"{not json")
    result = activity(StateRoot(state_root), wait=1, now=NOW)
    assert result["sources"]["mutes"] is False and "mutes.json" in result["sources"]["mutes_problem"]


def test_a_newer_ledger_is_refused(state_root: Path) -> None:
    declare("When a test fails", "Read the whole error first")
    conn = sqlite3.connect(state_root / "ledger.sqlite")
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    with pytest.raises(HabitusError) as caught:
        activity(StateRoot(state_root), wait=1, now=NOW)
    assert caught.value.code == "schema_newer"


def test_a_tampered_analyze_run_fails_closed(state_root: Path) -> None:
    declare("When a test fails", "Read the whole error first")
    analyze_runs(state_root, [(days_back(0), 10, 1)])
    conn = sqlite3.connect(state_root / "ledger.sqlite", isolation_level=None)
    conn.execute("UPDATE analyze_runs SET proposals = 50")
    conn.close()
    with pytest.raises(HabitusError) as caught:
        activity(StateRoot(state_root), wait=1, now=NOW)
    assert caught.value.code == "checksum_mismatch"


@pytest.mark.parametrize("days", [0, 367])
def test_the_window_is_bounded(days: int) -> None:
    with pytest.raises(HabitusError) as caught:
        day_list(days, NOW)
    assert caught.value.code == "usage"


def test_the_window_ends_today_in_utc() -> None:
    assert day_list(3, NOW) == ["2026-11-29", "2026-11-30", "2026-12-01"]


def test_real_reviews_count_delivered_and_muted_notes_and_the_mute(state_root: Path) -> None:
    """Through advise itself: one note delivered, its finding muted, then held back at two reviews."""
    import time

    from advise_helpers import CLAIM, RELEASE, enable, pair, review
    from advise_helpers import declare as declare_habit
    from conftest import run

    enable(state_root)
    declare_habit(**RELEASE)
    note = review(pair(CLAIM, session="s1"))["note"]
    assert note is not None
    assert run(["advise", "mute", note["id"]]).exit == 0
    for session in ("s1", "s2"):
        assert review(pair(CLAIM, session=session))["candidates"][0]["decision"] == "muted"
    today = time.strftime("%Y-%m-%d", time.gmtime())
    result = activity(StateRoot(state_root), days=2, wait=1)
    assert by_day(result, "notes_delivered") == {today: 1}
    assert by_day(result, "notes_muted") == {today: 2}
    assert by_day(result, "mutes_added") == {today: 1}
    assert result["all_time"] == {"notes_muted": 2}
    conn = sqlite3.connect(state_root / "ledger.sqlite")
    assert conn.execute(
        "SELECT DISTINCT note, channel FROM advise_notes WHERE status = 'muted'"
    ).fetchall() == [("", None)]  # a muted note leaves no text
    conn.close()
