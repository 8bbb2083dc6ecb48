"""habitus analyze with analyze.model: the production call path against scripted models.

The loopback HTTP server and the `command` program (tests/model_doubles.py) are the only doubles;
everything else is real: capture, ledger, quarantine table, watermark, failure rule.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from analyze_helpers import FRICTION, LIBRARY, capture, habit_state, query, setting, watermark
from conftest import run
from habitus.learn.queue import MAX_ATTEMPTS
from model_doubles import INJECTIONS, CommandModel, ModelServer, Reply, Step, configure

GOOD = {
    "schema_version": 1,
    "proposals": [LIBRARY],
    "memory_suggestions": [
        {"content": "This repo releases from main only.", "kind": "fact", "source_refs": [3]}
    ],
}


@pytest.fixture(autouse=True)
def quick_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("habitus.models.call.RETRY_DELAY_S", 0.01)


def use_server(root: Path, server: ModelServer, **extra: Any) -> None:
    configure(root, "m", kind="openai", url=server.url("/v1"), model="test-model", **extra)
    setting(root, "analyze.model", "m")


def answer(**changes: Any) -> dict[str, Any]:
    return {**GOOD, "proposals": [{**LIBRARY, **changes}]}


def nothing_changed(root: Path) -> None:
    assert query(root, "SELECT COUNT(*) FROM habits") == [(0,)]
    assert query(root, "SELECT COUNT(*) FROM habit_evidence") == [(0,)]
    assert watermark(root) == 0


def test_a_valid_answer_becomes_a_candidate_with_its_evidence(state_root: Path) -> None:
    capture(state_root, FRICTION)
    with ModelServer([Reply.answer("openai", GOOD)]) as server:
        use_server(state_root, server)
        out = run(["analyze"])
        sent = server.requests[0].json
    assert out.exit == 0, out.stderr
    result = out.result
    assert result["analyzer"] == "model:m"
    [proposal] = result["proposals"]
    assert (proposal["condition"], proposal["behavior"]) == (LIBRARY["condition"], LIBRARY["behavior"])
    assert proposal["stage"] == "reviewable" and proposal["status"] == "candidate"
    assert [r.split(":")[1] for r in proposal["evidence"]] == ["2", "5", "7"]
    assert result["memory_suggestions"][0]["content"] == "This repo releases from main only."
    assert watermark(state_root) == 8
    # What the model saw: the schema's task, bounded observations with their seqs, JSON only.
    user = __import__("json").loads(sent["messages"][-1]["content"])
    assert [o["seq"] for o in user["observations"]] == list(range(1, 9))
    assert user["observations_read"] == {"seq_start": 1, "seq_end": 8, "count": 8}
    assert "Return JSON only" in sent["messages"][0]["content"]


def test_existing_habits_are_sent_so_their_wording_is_reused(state_root: Path) -> None:
    declared = run(
        ["habit", "declare"],
        {"condition": LIBRARY["condition"], "behavior": LIBRARY["behavior"], "polarity": -1},
    )
    assert declared.exit == 0, declared.stderr
    habit_id = declared.result["habit"]["id"]
    capture(state_root, FRICTION)
    with ModelServer([Reply.answer("openai", GOOD)]) as server:
        use_server(state_root, server)
        out = run(["analyze"])
        sent = __import__("json").loads(server.requests[0].json["messages"][-1]["content"])
    assert out.exit == 0, out.stderr
    assert sent["existing_habit_context"] == [
        {
            "condition": LIBRARY["condition"],
            "behavior": LIBRARY["behavior"],
            "polarity": -1,
            "status": "active",
        }
    ]
    [proposal] = out.result["proposals"]
    assert proposal["id"] == habit_id and proposal["outcome"] == "evidence_added"
    assert query(state_root, "SELECT status FROM habits") == [("active",)]  # approval kept


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply.answer("openai", "here you go: {not json"), "not_json"),
        (Reply.answer("openai", {**GOOD, "extra": 1}), "schema_invalid"),
        (Reply.answer("openai", answer(behavior="Always return errors")), "schema_invalid"),
        (Reply.answer("openai", answer(source_refs=[2, 99])), "schema_invalid"),
        (Reply.answer("openai", answer(behavior="Do " + INJECTIONS[0])), "injection"),
        (Reply.answer("openai", answer(evidence_summary=INJECTIONS[2])), "injection"),
        (Reply.answer("openai", answer(behavior="Do use the token ghp_" + "a1B2" * 9)), "schema_invalid"),
        (Reply.answer("openai", GOOD, stop="length"), "max_tokens"),
    ],
    ids=[
        "not_json",
        "extra_key",
        "no_do",
        "ref_outside_batch",
        "injection",
        "injected_summary",
        "secret",
        "cut_off",
    ],
)
def test_an_unusable_answer_is_quarantined_and_changes_no_habit(
    state_root: Path, reply: Reply, reason: str
) -> None:
    capture(state_root, FRICTION)
    with ModelServer([reply]) as server:
        use_server(state_root, server)
        out = run(["analyze"])
    assert out.exit == 1 and out.error["code"] == "model_error" and out.error["reason"] == reason
    assert out.error["attempts"] == 1 and out.error["skipped"] is False
    nothing_changed(state_root)
    [(stored_reason, answer_text)] = query(state_root, "SELECT reason, answer FROM analyze_quarantine")
    assert stored_reason == reason and answer_text
    assert "ghp_" not in answer_text  # quarantined answers are redacted too
    status = run(["status"]).result["analyze"]
    assert status["quarantined"] == 1 and status["failed_batches"] == 1 and status["unread_total"] == 8
    assert status["last_run"]["outcome"] == "failed"


def test_a_failing_batch_is_retried_then_skipped_after_three_attempts(state_root: Path) -> None:
    setting(state_root, "analyze.batch_max_records", 4)
    capture(state_root, FRICTION)
    later = {**GOOD, "proposals": [{**LIBRARY, "source_refs": [5, 7]}], "memory_suggestions": []}
    replies = [Reply.answer("openai", "nope")] * MAX_ATTEMPTS + [Reply.answer("openai", later)]
    with ModelServer(replies) as server:
        use_server(state_root, server)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            out = run(["analyze"])
            assert out.exit == 1 and out.error["attempts"] == attempt
            assert out.error["skipped"] is (attempt == MAX_ATTEMPTS)
            assert watermark(state_root) == (4 if attempt == MAX_ATTEMPTS else 0)
        done = run(["analyze"])
        requests = len(server.requests)
    assert done.exit == 0, done.stderr
    assert [(b["seq_start"], b["seq_end"]) for b in done.result["batches"]] == [(5, 8)]
    assert requests == MAX_ATTEMPTS + 1  # the skipped batch is never sent again
    assert watermark(state_root) == 8
    assert query(state_root, "SELECT attempts, skipped FROM analyze_failures") == [(MAX_ATTEMPTS, 1)]
    assert run(["status"]).result["analyze"]["skipped_batches"] == 1


def test_earlier_batches_stay_committed_when_a_later_one_fails(state_root: Path) -> None:
    setting(state_root, "analyze.batch_max_records", 4)
    capture(state_root, FRICTION)
    first = {"schema_version": 1, "proposals": [{**LIBRARY, "source_refs": [2]}]}
    with ModelServer([Reply.answer("openai", first), Reply.answer("openai", "{")]) as server:
        use_server(state_root, server)
        out = run(["analyze"])
    assert out.exit == 1 and out.error["seq_start"] == 5
    assert watermark(state_root) == 4
    [(condition, _behavior, _polarity, _status, refs)] = habit_state(state_root)
    assert condition == LIBRARY["condition"] and [r for r, _ in refs] == ["obs-1:2"]


def test_a_slow_model_times_out_and_counts_an_attempt(state_root: Path) -> None:
    capture(state_root, FRICTION)
    with ModelServer([Reply.slow("openai", 30)]) as server:
        use_server(state_root, server, timeout_s=1)
        out = run(["analyze"])
    assert out.exit == 1 and out.error["reason"] == "timeout" and out.error["attempts"] == 1
    assert query(state_root, "SELECT COUNT(*) FROM analyze_quarantine") == [(0,)]  # no answer to keep
    nothing_changed(state_root)


def test_a_truncated_body_is_retried_once_then_counts_an_attempt(state_root: Path) -> None:
    capture(state_root, FRICTION)
    with ModelServer([Reply.truncated("openai", GOOD)]) as server:
        use_server(state_root, server)
        out = run(["analyze"])
        assert len(server.requests) == 2
    assert out.exit == 1 and out.error["reason"] == "truncated" and out.error["attempts"] == 1
    nothing_changed(state_root)


def test_an_unreachable_model_is_not_the_batchs_fault(state_root: Path) -> None:
    capture(state_root, FRICTION)
    with ModelServer([Reply.answer("openai", GOOD)]) as server:
        url = server.url("/v1")
    configure(state_root, "m", kind="openai", url=url, model="x")
    setting(state_root, "analyze.model", "m")
    for _ in range(MAX_ATTEMPTS + 1):
        out = run(["analyze"])
        assert out.exit == 1 and out.error["reason"] == "connection"
    nothing_changed(state_root)
    assert query(state_root, "SELECT COUNT(*) FROM analyze_failures") == [(0,)]


def test_an_unconfigured_model_fails_without_touching_the_queue(state_root: Path) -> None:
    capture(state_root, FRICTION)
    setting(state_root, "analyze.model", "missing")
    out = run(["analyze"])
    assert out.exit == 1 and out.error["reason"] == "not_configured"
    nothing_changed(state_root)


def test_the_command_model_gets_redacted_observations(state_root: Path, tmp_path: Path) -> None:
    rows = [
        (
            "no, don't print from library code. mail me at jane.doe@example.com",
            "Done.",
            "2026-05-04T09:05:00Z",
        ),
        *FRICTION[2:],
    ]
    capture(state_root, rows)
    model = CommandModel(tmp_path / "model", [Step.answer({"schema_version": 1, "proposals": []})])
    configure(state_root, "m", kind="command", command=model.argv)
    setting(state_root, "analyze.model", "m")
    out = run(["analyze"])
    assert out.exit == 0, out.stderr
    assert out.result["proposals"] == [] and watermark(state_root) == len(rows)
    [request] = model.requests()
    assert request["purpose"] == "analyze"
    text = str(request)
    assert "jane.doe@example.com" not in text and "library code" in text


def test_the_command_model_injection_is_quarantined(state_root: Path, tmp_path: Path) -> None:
    capture(state_root, FRICTION)
    model = CommandModel(tmp_path / "model", [Step.answer(answer(condition="When " + INJECTIONS[1]))])
    configure(state_root, "m", kind="command", command=model.argv)
    setting(state_root, "analyze.model", "m")
    out = run(["analyze"])
    assert out.exit == 1 and out.error["reason"] == "injection"
    nothing_changed(state_root)
    assert query(state_root, "SELECT COUNT(*) FROM analyze_quarantine") == [(1,)]


def test_the_quarantine_is_bounded(state_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("habitus.learn.queue.QUARANTINE_KEEP", 2)
    monkeypatch.setattr("habitus.learn.queue.MAX_ATTEMPTS", 99)
    capture(state_root, FRICTION)
    with ModelServer([Reply.answer("openai", f"bad {i}") for i in range(4)]) as server:
        use_server(state_root, server)
        for _ in range(4):
            assert run(["analyze"]).exit == 1
    assert query(state_root, "SELECT answer FROM analyze_quarantine ORDER BY id") == [
        ("bad 2",),
        ("bad 3",),
    ]
