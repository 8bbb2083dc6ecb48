"""Hook protocol: blockers block a Stop once, other notes wait for the next prompt, nothing repeats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from advise_helpers import CLAIM, RELEASE, Transcript, claude, declare, enable, hook, review, setting
from conftest import run
from model_doubles import ModelServer, Reply, configure


def force_push(t: Transcript) -> Transcript:
    return (
        t.prompt("rebase on main")
        .tool("Bash", {"command": "git push --force origin main"})
        .say("Rebased and pushed.")
    )


def model_says(*answers: Any) -> list[Reply]:
    return [Reply.answer("openai", a) if not isinstance(a, Reply) else a for a in answers]


def note(text: str, severity: str = "blocker", key: str = "unsafe push") -> dict[str, Any]:
    return {"schema_version": 1, "advice": {"note": text, "severity": severity, "findingKey": key}}


def test_a_blocker_on_stop_blocks_once_with_the_note_as_reason(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    t = force_push(Transcript(tmp_path / "s.jsonl"))
    reply = claude(hook("Stop", t, stop_hook_active=False))
    assert reply is not None and set(reply) == {"decision", "reason"}
    assert reply["decision"] == "block" and "force-pushed" in reply["reason"]
    assert reply["reason"].startswith("[habitus advise: blocker ")
    # The agent continues; its next stop carries stop_hook_active and nothing new: no second block.
    t.say("I force-pushed because the rebase rewrote history; say if you want it reverted.")
    assert claude(hook("Stop", t, stop_hook_active=True)) is None
    assert claude(hook("UserPromptSubmit", t, prompt="ok")) is None  # it was delivered: it never repeats


def test_with_stop_hook_active_a_blocker_waits_for_the_next_prompt(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    t = force_push(Transcript(tmp_path / "s.jsonl"))
    assert claude(hook("Stop", t, stop_hook_active=True)) is None
    reply = claude(hook("UserPromptSubmit", t, prompt="next"))
    assert reply is not None
    context = reply["hookSpecificOutput"]
    assert context["hookEventName"] == "UserPromptSubmit" and "force-pushed" in context["additionalContext"]
    assert "- blocker [" in context["additionalContext"]
    assert claude(hook("UserPromptSubmit", t, prompt="again")) is None  # delivered notes never repeat
    status = run(["status"]).result["advise"]
    assert status["notes"]["delivered"] == 1 and status["notes"]["pending"] == 0


def test_concerns_wait_for_the_next_prompt_and_block_is_never_used(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    declare(**RELEASE)
    t = Transcript(tmp_path / "s.jsonl").prompt("release it").say(CLAIM)
    assert claude(hook("Stop", t)) is None
    reply = claude(hook("UserPromptSubmit", t, prompt="thanks"))
    assert "- concern [" in reply["hookSpecificOutput"]["additionalContext"]


def test_post_tool_use_delivers_context_at_once(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    declare(**RELEASE)
    t = Transcript(tmp_path / "s.jsonl").prompt("release it").say("The release is ready.", stop="tool_use")
    t.tool("Bash", {"command": "git tag v1.4.0"})
    reply = claude(hook("PostToolUse", t, tool_name="Bash"))
    assert reply["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert "Approved habit" in reply["hookSpecificOutput"]["additionalContext"]
    assert claude(hook("UserPromptSubmit", t, prompt="x")) is None


def test_never_block_twice_in_a_row_for_one_finding(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    first = note("The push to main skipped review; revert it and open a pull request instead.")
    changed = note(
        "Logging in production uses the wrong level; switch the handler to warning."
    )  # 0.48 similar
    with ModelServer(model_says(first, changed)) as server:
        configure(state_root, "m", kind="openai", url=server.url("/v1"), model="test")
        setting(state_root, "advise.model", "m")
        t = Transcript(tmp_path / "s.jsonl").prompt("ship").say("Shipped.")
        assert claude(hook("Stop", t))["decision"] == "block"
        t.prompt("go on").say("Done with the follow-up.")
        # A possible duplicate of the same finding is delivered, but not as a second block in a row.
        assert claude(hook("Stop", t)) is None
        reply = claude(hook("UserPromptSubmit", t, prompt="and?"))
    assert "possible-duplicate" in reply["hookSpecificOutput"]["additionalContext"]


def test_block_can_be_turned_off(tmp_path: Path, state_root: Path) -> None:
    enable(state_root, block=False)
    t = force_push(Transcript(tmp_path / "s.jsonl"))
    assert claude(hook("Stop", t)) is None
    assert (
        "force-pushed"
        in claude(hook("UserPromptSubmit", t, prompt="x"))["hookSpecificOutput"]["additionalContext"]
    )


def test_a_mute_stops_a_note_already_waiting(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    declare(**RELEASE)
    t = Transcript(tmp_path / "s.jsonl").prompt("release it").say(CLAIM)
    assert claude(hook("Stop", t)) is None
    recent = json.loads(run(["status"]).stdout)["advise"]
    assert recent["notes"]["pending"] == 1
    from habitus.advise.notes import finding_hash

    habit = run(["habit", "list"]).result["items"][0]["id"]
    assert run(["advise", "mute", finding_hash(f"habit:{habit}")[:8]]).exit == 0
    assert claude(hook("UserPromptSubmit", t, prompt="x")) is None
    assert run(["status"]).result["advise"]["notes"]["muted"] == 1


def test_other_events_and_fresh_roots_stay_silent(state_root: Path) -> None:
    enable(state_root)
    assert claude(hook("SessionStart")) is None
    assert claude(hook("UserPromptSubmit", prompt="hi")) is None
    assert claude(hook("Stop")) is None  # no transcript, no message: nothing to review
    assert not (state_root / "ledger.sqlite").exists()


def harness(name: str, event: dict[str, Any]) -> dict[str, Any] | None:
    done = run(["advise", "--harness", name], event)
    assert done.exit == 0 and not done.stderr, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def test_gemini_codex_pi_and_generic(state_root: Path) -> None:
    enable(state_root)
    declare(**RELEASE)
    base = {"session_id": "g1", "cwd": "/tmp"}
    assert (
        harness(
            "gemini", {**base, "hook_event_name": "AfterAgent", "prompt": "release", "prompt_response": CLAIM}
        )
        is None
    )
    reply = harness("gemini", {**base, "hook_event_name": "BeforeAgent", "prompt": "next"})
    assert reply["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    codex = {
        "session_id": "c1",
        "hook_event_name": "Stop",
        "transcript_path": None,
        "last_assistant_message": CLAIM,
    }
    assert harness("codex", codex) is None
    assert (
        "concern"
        in harness("codex", {"session_id": "c1", "hook_event_name": "UserPromptSubmit", "prompt": "x"})[
            "hookSpecificOutput"
        ]["additionalContext"]
    )
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "release"}], "timestamp": 1},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": CLAIM}],
            "stopReason": "stop",
            "timestamp": 2,
        },
    ]
    assert harness("pi", {"hook_event_name": "agent_end", "session_id": "p1", "messages": messages}) is None
    pi = harness("pi", {"hook_event_name": "before_agent_start", "session_id": "p1", "prompt": "next"})
    assert set(pi) == {"additionalContext"} and "Approved habit" in pi["additionalContext"]
    generic = harness("generic", {"user": "release", "assistant": CLAIM, "session": "x1"})
    assert generic is None  # a concern: waits for the next prompt
    assert "Approved habit" in harness("generic", {"user": "next", "session": "x1"})["additionalContext"]


def test_three_failed_reviews_pause_advise_with_one_visible_warning(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    broken = Reply.answer("openai", "this is not json")
    with ModelServer([broken]) as server:
        configure(state_root, "m", kind="openai", url=server.url("/v1"), model="test")
        setting(state_root, "advise.model", "m")
        t = Transcript(tmp_path / "s.jsonl")
        replies = []
        for n in range(4):
            t.prompt(f"step {n}").say(f"did step {n}")
            replies.append(claude(hook("Stop", t)))
        calls = len(server.requests)
    assert replies[:2] == [None, None]
    assert set(replies[2]) == {"systemMessage"} and "paused" in replies[2]["systemMessage"]
    assert "model:not_json" in replies[2]["systemMessage"]
    assert replies[3] is None  # paused: no review, and the warning is not repeated
    assert calls == 3
    status = run(["status"]).result["advise"]
    assert status["paused"]["reason"] == "model:not_json" and status["consecutive_failures"] == 3
    assert status["failures"] == 3
    result = review({"user": "x", "assistant": "y", "session": "z"})
    assert result["reviewed"] is False and result["reason"] == "paused"
    assert result["warnings"][0]["code"] == "advise_paused"
    assert run(["advise", "resume"]).result == {"v": 1, "resumed": True}
    setting(state_root, "advise.model", "")
    assert review({"user": "x", "assistant": "y", "session": "z"})["reviewed"] is True
    assert run(["status"]).result["advise"]["paused"] is None


def test_a_pause_from_other_reviews_is_shown_once_at_the_next_prompt(state_root: Path) -> None:
    enable(state_root, model="m")
    with ModelServer([Reply.answer("openai", "not json at all")]) as server:
        configure(state_root, "m", kind="openai", url=server.url("/v1"), model="test")
        for n in range(3):
            result = review({"user": "x", "assistant": f"work {n}", "session": "cron"})
    assert result["warnings"][-1]["code"] == "advise_paused"  # a non-hook result says so every time
    first = claude(hook("UserPromptSubmit", prompt="hello"))
    assert set(first) == {"systemMessage"} and "habitus advise resume" in first["systemMessage"]
    assert claude(hook("UserPromptSubmit", prompt="again")) is None


def test_a_waiting_note_expires(tmp_path: Path, state_root: Path) -> None:
    import sqlite3

    enable(state_root, pending_hours=1)
    declare(**RELEASE)
    t = Transcript(tmp_path / "s.jsonl").prompt("release it").say(CLAIM)
    assert claude(hook("Stop", t)) is None
    conn = sqlite3.connect(state_root / "ledger.sqlite")
    conn.execute("UPDATE advise_notes SET created_at = '2020-01-01T00:00:00.000Z'")
    conn.commit()
    conn.close()
    assert claude(hook("UserPromptSubmit", t, prompt="much later")) is None
    notes = run(["status"]).result["advise"]["notes"]
    assert notes["expired"] == 1 and notes["pending"] == 0
    conn = sqlite3.connect(state_root / "ledger.sqlite")
    assert conn.execute("SELECT status, note FROM advise_notes").fetchall() == [("expired", "")]
    conn.close()


def test_a_missing_transcript_falls_back_to_the_last_message(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    event = hook(
        "Stop", last_assistant_message="Rebased and pushed.", transcript_path=str(tmp_path / "gone.jsonl")
    )
    assert claude(event) is None
    assert run(["status"]).result["advise"]["reviews"] == 1
    assert not (state_root / "errors.jsonl").exists()
