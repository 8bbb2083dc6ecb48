"""habitus capture: hook mode for every harness, transcript import, pairs, --nl, disabled, bounds."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from conftest import SHARED, needs_shared, run
from habitus.capture import TRUNCATION_MARKER
from habitus.state import observations as obs
from habitus.state.root import StateRoot
from obs_helpers import FIXTURES, enable, lines, payloads

REAL = SHARED / "fixtures" / "transcripts"


@pytest.fixture
def on(state_root: Path) -> Path:
    enable(state_root)
    return state_root


def hook(harness: str, event: dict[str, Any] | bytes) -> None:
    out = run(
        ["capture", "--harness", harness], stdin=event if isinstance(event, bytes) else orjson.dumps(event)
    )
    assert out.exit == 0 and out.stdout == b"" and out.stderr == b"", out


def errors(root: Path) -> list[dict[str, Any]]:
    path = root / "errors.jsonl"
    return [orjson.loads(x) for x in path.read_bytes().splitlines()] if path.exists() else []


# -- off until enabled ----------------------------------------------------------------------------


def test_hook_mode_when_disabled_stores_nothing_and_creates_nothing(state_root: Path) -> None:
    hook(
        "claude-code",
        {"hook_event_name": "Stop", "transcript_path": str(FIXTURES / "claude-code-short.jsonl")},
    )
    hook("generic", {"user": "u", "assistant": "a"})
    hook("codex", b"{broken json")
    assert not state_root.exists()


def test_explicit_calls_when_disabled_are_refused_without_reading(state_root: Path) -> None:
    out = run(["capture"], {"user": "u", "assistant": "a"})
    assert out.exit == 3 and out.error["code"] == "disabled" and out.stdout == b""
    out = run(["capture", "--transcript", str(FIXTURES / "claude-code-short.jsonl")])
    assert out.error["code"] == "disabled"
    assert not (state_root / "observations").exists()


# -- pairs ----------------------------------------------------------------------------------------------


def test_a_pair_is_stored_redacted(on: Path) -> None:
    out = run(
        ["capture"],
        {
            "user": "deploy with password=hunter2 please",
            "assistant": "Deployed.",
            "session": "s1",
            "at": "2026-01-01T00:00:00Z",
        },
    )
    assert out.exit == 0
    result = out.result
    assert result["appended"] == 1 and result["redactions"] == 1 and result["generation"] == 1
    assert result["first_seq"] == result["last_seq"] == 1
    (payload,) = payloads(on)
    assert payload["user"] == "deploy with password=[REDACTED:secret] please"
    assert payload["session"] == "s1" and payload["user_at"] == "2026-01-01T00:00:00Z"
    assert lines(on)[0]["origin"] == {"harness": "generic", "source": "pair", "event": "pair"}
    assert b"hunter2" not in (on / "observations" / "obs-000001.jsonl").read_bytes()


def test_every_field_of_a_pair_is_redacted(on: Path) -> None:
    """Not only the texts: a timestamp that is not one is dropped, a session id is redacted."""
    secret = "ghp_" + "a1B2c3D4e5" * 4
    out = run(["capture"], {"user": "hi there", "assistant": "ok", "session": "s2", "at": f"token {secret}"})
    assert out.exit == 0 and out.result["appended"] == 1
    (payload,) = payloads(on)
    assert payload["user_at"] is None
    assert secret.encode() not in b"".join(
        p.read_bytes() for p in (on / "observations").rglob("*") if p.is_file()
    )


def test_the_same_pair_twice_is_one_observation(on: Path) -> None:
    pair = {"user": "use tabs", "assistant": "ok", "session": "s", "at": "2026-01-01T00:00:00Z"}
    assert run(["capture"], pair).result["appended"] == 1
    again = run(["capture"], pair).result
    assert again["appended"] == 0 and again["duplicates"] == 1


def test_nl_streams_one_result_per_line(on: Path) -> None:
    stream = b"".join(
        orjson.dumps({"user": f"u{i}", "assistant": "a", "at": f"t{i}"}) + b"\n" for i in range(3)
    )
    out = run(["capture", "--nl"], stdin=stream + b"\n")
    assert [r["last_seq"] for r in out.results] == [1, 2, 3]


@pytest.mark.parametrize(
    ("request_", "code", "field"),
    [
        ({"assistant": "a"}, "bad_request", "user"),
        ({"user": "  ", "assistant": "a"}, "bad_request", "user"),
        ({"user": "u"}, "bad_request", "assistant"),
        ({"user": "u", "assistant": "a", "at": ["x"]}, "bad_request", "at"),
    ],
)
def test_bad_pairs_change_nothing(on: Path, request_: dict[str, Any], code: str, field: str) -> None:
    out = run(["capture"], request_)
    assert out.exit == 2 and out.error["code"] == code and f"request.{field}" in out.error["message"]
    assert not (on / "observations").exists()


@pytest.mark.parametrize(
    ("stdin", "code"),
    [(b"{not json", "bad_json"), (b"\xff\xfe", "bad_utf8"), (b"[1, 2]", "bad_request")],
)
def test_malformed_input_is_a_clear_error_and_writes_nothing(on: Path, stdin: bytes, code: str) -> None:
    out = run(["capture"], stdin=stdin)
    assert out.exit == 2 and out.error["code"] == code
    assert not (on / "observations").exists()


def test_malformed_hook_json_is_silent_logged_and_writes_nothing(on: Path) -> None:
    for harness in ("claude-code", "codex", "gemini", "pi", "generic"):
        hook(harness, b'{"hook_event_name": "Stop", ')
    assert [e["code"] for e in errors(on)] == ["bad_json"] * 5
    assert not (on / "observations").exists()
    assert all("Stop" not in e["message"] for e in errors(on))


def test_an_oversized_answer_keeps_its_tail_with_a_marker(on: Path) -> None:
    answer = "HEAD " + "word " * 40_000 + " THE END"
    assert run(["capture"], {"user": "write a lot", "assistant": answer}).exit == 0
    (record,) = lines(on)
    payload = record["payload"]
    assert payload["assistant"].startswith(TRUNCATION_MARKER) and payload["assistant"].endswith("THE END")
    assert "HEAD" not in payload["assistant"] and payload["truncated"] is True
    assert len(orjson.dumps(record)) + 1 <= obs.MAX_RECORD_BYTES


def test_an_oversized_prompt_keeps_its_head(on: Path) -> None:
    prompt = "START " + "x" * 100_000
    run(["capture"], {"user": prompt, "assistant": "ok"})
    (payload,) = payloads(on)
    assert payload["user"].startswith("START ") and len(payload["user"].encode()) < 17 * 1024


@pytest.mark.parametrize(
    "request_",
    [
        {"user": "\x01" * 16_000, "assistant": "ok"},  # 16 KB that JSON escapes into 96 KB
        {"user": "hi", "assistant": "\x02" * 200_000},
        {"user": "hi", "assistant": "ok", "session": "s" * 1_000_000},
    ],
    ids=["escaped prompt", "escaped answer", "huge session"],
)
def test_any_pair_fits_one_record(on: Path, request_: dict[str, Any]) -> None:
    """Found by the fuzz test: these once failed with exit 1 `failed` (record larger than 64 KiB)."""
    out = run(["capture"], request_)
    assert out.exit == 0, out.stderr
    (record,) = lines(on)
    assert record["payload"]["truncated"] is True or len(record["payload"]["session"]) <= 512
    assert len(orjson.dumps(record)) + 1 <= obs.MAX_RECORD_BYTES


def test_a_pair_that_still_looks_sensitive_is_dropped_and_counted(on: Path) -> None:
    # The tail of a private key without its BEGIN line: redaction cannot place it, the post-check can.
    result = run(["capture"], {"user": "here", "assistant": "-----END RSA PRIVATE KEY-----"}).result
    assert result["appended"] == 0 and result["dropped"]["sensitive"] == 1
    assert not (on / "observations").exists()


# -- transcripts ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("claude-code-short.jsonl", 1),
        ("claude-code-branches.jsonl", 3),
        ("pi-excerpt.jsonl", 5),  # with its aborted run and the run that ended in an API error
        ("codex-rollout.jsonl", 4),  # with its aborted run
        ("codex-legacy.jsonl", 2),
    ],
)
def test_import_is_idempotent(on: Path, name: str, expected: int) -> None:
    first = run(["capture", "--transcript", str(FIXTURES / name)]).result
    assert first["appended"] == expected
    second = run(["capture", "--transcript", str(FIXTURES / name)]).result
    assert second["appended"] == 0 and second["duplicates"] == expected
    assert obs.status(StateRoot(on))["records"] == expected
    assert obs.verify(StateRoot(on))["ok"]


def test_import_keeps_rejections_and_aborted_runs(on: Path) -> None:
    run(["capture", "--transcript", str(FIXTURES / "pi-excerpt.jsonl")])
    run(["capture", "--transcript", str(FIXTURES / "claude-code-short.jsonl")])
    stored = payloads(on)
    assert [p["outcome"] for p in stored] == [
        "aborted",
        "complete",
        "complete",
        "error",
        "complete",
        "rejected",
    ]
    # The aborted run is kept (its prompt is the user's), recorded as the slash command it is.
    assert (stored[0]["user"], stored[0]["source"]) == ("/mode", "command")
    assert [p["source"] for p in stored[1:]] == ["user"] * 5
    rejected = stored[-1]
    assert rejected["tools"] == [
        {"name": "Bash", "status": "rejected"},
        {"name": "Glob", "status": "rejected"},
    ]
    assert (
        rejected["harness"] == "claude-code" and rejected["session"] == "55604662-cf2a-4331-851a-ec234028f8ca"
    )


def test_a_tool_without_a_name_is_stored_with_none(on: Path, tmp_path: Path) -> None:
    # A tool call with no name, and a result whose call the reader never saw: the turn is still stored.
    def message(at: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"type": "message", "timestamp": at, "message": body}

    records = [
        {"type": "session", "id": "s-1", "timestamp": "2025-11-20T23:33:00.000Z", "cwd": "/tmp"},
        message(
            "2025-11-20T23:33:01.000Z", {"role": "user", "content": [{"type": "text", "text": "list it"}]}
        ),
        message(
            "2025-11-20T23:33:02.000Z",
            {"role": "assistant", "content": [{"type": "toolCall", "id": "t-1", "arguments": {}}]},
        ),
        message("2025-11-20T23:33:03.000Z", {"role": "toolResult", "toolCallId": "t-1", "isError": False}),
        message("2025-11-20T23:33:04.000Z", {"role": "toolResult", "toolCallId": "t-9", "isError": True}),
        message(
            "2025-11-20T23:33:05.000Z",
            {"role": "assistant", "content": [{"type": "text", "text": "listed"}], "stopReason": "stop"},
        ),
    ]
    transcript = tmp_path / "pi.jsonl"
    transcript.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    out = run(["capture", "--transcript", str(transcript), "--format", "pi"])
    assert out.exit == 0 and out.result["appended"] == 1
    assert payloads(on)[0]["tools"] == [{"name": None, "status": "ok"}, {"name": None, "status": "error"}]


def test_import_with_an_explicit_format(on: Path) -> None:
    assert (
        run(["capture", "--transcript", str(FIXTURES / "codex-legacy.jsonl"), "--format", "codex"]).exit == 0
    )
    out = run(["capture", "--transcript", str(FIXTURES / "codex-legacy.jsonl"), "--format", "nope"])
    assert out.exit == 2 and out.error["code"] == "usage"


def test_import_errors(on: Path, tmp_path: Path) -> None:
    out = run(["capture", "--transcript", str(tmp_path / "missing.jsonl")])
    assert out.exit == 1 and out.error["code"] == "not_found"
    binary = tmp_path / "x.bin"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    out = run(["capture", "--transcript", str(binary)])
    assert out.exit == 1 and out.error["code"] == "bad_transcript"
    assert not (on / "observations").exists()


def test_event_json_argument_is_only_for_hook_mode(on: Path) -> None:
    out = run(["capture", '{"type": "agent-turn-complete"}'])
    assert out.exit == 2 and out.error["code"] == "usage"


@needs_shared
def test_importing_the_real_sessions(on: Path) -> None:
    big = run(
        ["capture", "--transcript", str(REAL / "claude-code" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")]
    )
    assert big.result["appended"] == 4  # two prompts of the user, two background task notices
    assert [p["source"] for p in payloads(on)] == ["user", "tool", "tool", "user"]
    pi = run(["capture", "--transcript", str(REAL / "pi" / "large-session.jsonl")]).result
    assert pi["appended"] == 88
    again = run(["capture", "--transcript", str(REAL / "pi" / "large-session.jsonl")]).result
    assert again["appended"] == 0 and again["duplicates"] == 88
    data = (on / "observations" / "obs-000001.jsonl").read_bytes()
    assert b"/home/marco" not in data and b"/Users/badlogic" not in data
    assert all(len(line) + 1 <= obs.MAX_RECORD_BYTES for line in data.splitlines())
    assert obs.verify(StateRoot(on))["ok"]


# -- hooks ------------------------------------------------------------------------------------------


def cc_event(name: str, transcript: Path, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": "55604662-cf2a-4331-851a-ec234028f8ca",
        "transcript_path": str(transcript),
        "cwd": "/w",
        "permission_mode": "default",
        "hook_event_name": name,
        **extra,
    }


def test_claude_code_prompt_then_stop_stores_one_pair(on: Path) -> None:
    transcript = FIXTURES / "claude-code-short.jsonl"
    hook(
        "claude-code", cc_event("UserPromptSubmit", transcript, prompt="mix phx.server doesnt seem to start")
    )
    assert not (on / "observations" / "tail.json").exists()
    hook("claude-code", cc_event("Stop", transcript, stop_hook_active=False))
    (record,) = lines(on)
    assert record["origin"] == {"harness": "claude-code", "source": "hook", "event": "Stop"}
    assert record["payload"]["user"] == "mix phx.server doesnt seem to start"
    hook("claude-code", cc_event("Stop", transcript))  # the hook fired twice
    assert len(lines(on)) == 1
    # Importing the same session afterwards adds nothing either: same fingerprint.
    assert run(["capture", "--transcript", str(transcript)]).result["duplicates"] == 1


def test_claude_code_stop_prefers_the_hooks_final_message_when_the_transcript_lags(
    on: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "claude-code-branches.jsonl", transcript)
    hook(
        "claude-code", cc_event("Stop", transcript, last_assistant_message="All 12 tests pass. Also pushed.")
    )
    (payload,) = payloads(on)
    assert payload["user"] == "run the tests again"
    assert payload["assistant"].endswith("All 12 tests pass. Also pushed.")


def test_claude_code_session_end_sweeps_missed_turns(on: Path) -> None:
    transcript = FIXTURES / "claude-code-branches.jsonl"
    hook("claude-code", cc_event("Stop", transcript))
    assert len(lines(on)) == 1
    hook("claude-code", cc_event("SessionEnd", transcript, reason="exit"))
    assert [p["user"] for p in payloads(on)] == [
        "run the tests again",
        "write a hello world in go",
        "make it print the time, not the date",
    ]
    hook("claude-code", cc_event("PreCompact", transcript, trigger="auto"))
    assert len(lines(on)) == 3


def test_claude_code_events_that_store_nothing(on: Path) -> None:
    transcript = FIXTURES / "claude-code-short.jsonl"
    for name in ("SessionStart", "SubagentStop", "PostToolUse", "Notification"):
        hook("claude-code", cc_event(name, transcript))
    assert not (on / "observations" / "tail.json").exists() and errors(on) == []


def test_claude_code_stop_with_a_missing_transcript_is_logged(on: Path, tmp_path: Path) -> None:
    hook("claude-code", cc_event("Stop", tmp_path / "gone.jsonl"))
    assert [e["code"] for e in errors(on)] == ["not_found"]
    assert not (on / "observations" / "tail.json").exists()


def test_codex_prompt_and_stop_without_transcript(on: Path) -> None:
    base = {
        "session_id": "th-1",
        "cwd": "/w",
        "model": "gpt-5",
        "permission_mode": "default",
        "transcript_path": None,
    }
    hook(
        "codex",
        {**base, "hook_event_name": "UserPromptSubmit", "turn_id": "7", "prompt": "never use ls, use rg"},
    )
    assert len(list((on / "observations" / "pending").iterdir())) == 1
    hook(
        "codex",
        {
            **base,
            "hook_event_name": "Stop",
            "turn_id": "7",
            "stop_hook_active": False,
            "last_assistant_message": "Switched to rg.",
        },
    )
    (payload,) = payloads(on)
    assert (payload["user"], payload["assistant"], payload["harness"]) == (
        "never use ls, use rg",
        "Switched to rg.",
        "codex",
    )
    assert list((on / "observations" / "pending").iterdir()) == []


def test_codex_stop_reads_the_rollout(on: Path) -> None:
    hook(
        "codex",
        {
            "hook_event_name": "Stop",
            "session_id": "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5",
            "turn_id": "t4",
            "transcript_path": str(FIXTURES / "codex-rollout.jsonl"),
            "cwd": "/w",
            "model": "gpt-5",
            "permission_mode": "default",
            "stop_hook_active": False,
            "last_assistant_message": "Installed ripgrep with brew and listed the files: app.py, util.py.",
        },
    )
    (payload,) = payloads(on)
    assert payload["user"] == "use brew, not apt"
    assert run(["capture", "--transcript", str(FIXTURES / "codex-rollout.jsonl")]).result["duplicates"] == 1


def test_codex_notify_program_argument(on: Path) -> None:
    event = {
        "type": "agent-turn-complete",
        "thread-id": "b5f6c1c2-1111-2222-3333-444455556666",
        "turn-id": "12345",
        "cwd": "/tmp/project",
        "input-messages": ["Rename `foo` to `bar` and update the callsites."],
        "last-assistant-message": "Rename complete and verified `cargo build` succeeds.",
    }
    out = run(["capture", "--harness", "codex", orjson.dumps(event).decode()])
    assert out.exit == 0 and out.stdout == b""
    (payload,) = payloads(on)
    assert payload["user"].startswith("Rename `foo`") and payload["session"] == event["thread-id"]


def test_gemini_after_agent(on: Path) -> None:
    event = {
        "session_id": "g1",
        "transcript_path": "/nonexistent/session.json",
        "cwd": "/w",
        "hook_event_name": "AfterAgent",
        "timestamp": "2026-01-01T00:00:00Z",
        "prompt": "please stop adding comments",
        "prompt_response": "Removed the comments.",
        "stop_hook_active": False,
    }
    hook("gemini", {**event, "hook_event_name": "BeforeAgent"})
    hook("gemini", event)
    hook("gemini", {**event, "hook_event_name": "SessionEnd", "reason": "exit"})
    (payload,) = payloads(on)
    assert (payload["user"], payload["assistant"], payload["harness"]) == (
        "please stop adding comments",
        "Removed the comments.",
        "gemini",
    )
    assert errors(on) == []


def test_pi_agent_end_from_the_extension(on: Path) -> None:
    event = {
        "hook_event_name": "agent_end",
        "session_id": "d703a1a9-1b7b-4fb1-b512-c9738b1fe617",
        "session_file": str(FIXTURES / "pi-excerpt.jsonl"),
        "cwd": "/w",
        "prompt": "you fucked thet component up",
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "use rgb values, no rgb indices!"}],
                "timestamp": 1763685465041,
            },
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "Converted to RGB."}],
                "stopReason": "stop",
                "timestamp": 1763685466000,
            },
        ],
        "timestamp": "2026-01-01T00:00:00Z",
    }
    hook("pi", event)
    aborted = {**event, "messages": [event["messages"][0], {**event["messages"][1], "stopReason": "aborted"}]}
    hook("pi", {**aborted, "messages": [{**aborted["messages"][0], "timestamp": 1}, aborted["messages"][1]]})
    payload, stopped = payloads(on)
    assert payload["user"] == "use rgb values, no rgb indices!" and payload["harness"] == "pi"
    assert (stopped["user"], stopped["outcome"]) == (payload["user"], "aborted")  # still the user's words
    hook(
        "pi",
        {
            "hook_event_name": "session_shutdown",
            "session_id": event["session_id"],
            "session_file": event["session_file"],
        },
    )
    assert len(payloads(on)) == 7  # the sweep adds the excerpt's five kept turns


def test_a_pi_run_captured_by_the_extension_is_not_imported_twice(on: Path) -> None:
    rows = [orjson.loads(x) for x in (FIXTURES / "pi-excerpt.jsonl").read_bytes().splitlines()]
    messages = [r["message"] for r in rows if r.get("type") == "message"]
    start = next(
        i for i, m in enumerate(messages) if m["role"] == "user" and "REAL fucking good" in str(m["content"])
    )
    end = next(i for i, m in enumerate(messages[start + 1 :], start + 1) if m["role"] == "user")
    hook(
        "pi",
        {
            "hook_event_name": "agent_end",
            "session_id": "d703a1a9-1b7b-4fb1-b512-c9738b1fe617",
            "messages": messages[start:end],
        },
    )
    assert len(payloads(on)) == 1
    imported = run(["capture", "--transcript", str(FIXTURES / "pi-excerpt.jsonl")]).result
    assert imported["appended"] == 4 and imported["duplicates"] == 1


def test_hook_mode_and_transcript_do_not_combine(on: Path) -> None:
    out = run(["capture", "--harness", "claude-code", "--transcript", str(FIXTURES / "codex-legacy.jsonl")])
    assert out.exit == 0 and out.stdout == b""
    assert [e["code"] for e in errors(on)] == ["usage"]
    assert run(["capture", "--transcript", "x", "--harness", "pi"]).exit == 0


def test_generic_hook_mode(on: Path) -> None:
    hook("generic", {"user": "u", "assistant": "a", "session": "s"})
    hook("generic", {"user": "only a prompt"})
    assert lines(on)[0]["origin"]["source"] == "hook" and len(lines(on)) == 1


def test_status_reports_the_log_without_creating_it(state_root: Path) -> None:
    status = run(["status"]).result
    assert status["observations"]["exists"] is False and status["observations"]["records"] == 0
    assert not state_root.exists()
    enable(state_root)
    run(["capture", "--transcript", str(FIXTURES / "codex-legacy.jsonl")])
    got = run(["status"]).result["observations"]
    assert (got["generation"], got["records"], got["last_seq"], got["exists"]) == (1, 2, 2, True)


def test_the_hook_path_stays_light(state_root: Path) -> None:
    """A hook call loads no heavy module; with capture on, only fasteners (for the lock)."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "sys.argv = ['habitus', 'capture', '--harness', 'claude-code']\n"
        "from habitus.launcher import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = {'numpy', 'onnxruntime', 'tokenizers', 'jsonschema', 'tomlkit', 'fasteners', 'sqlite3'}\n"
        "sys.stderr.write('HEAVY=' + ','.join(sorted({m.split('.')[0] for m in sys.modules} & heavy)))\n"
    )
    event = orjson.dumps(cc_event("Stop", FIXTURES / "claude-code-short.jsonl"))

    def loaded() -> str:
        done = subprocess.run([sys.executable, "-c", probe], input=event, capture_output=True, timeout=60)
        return done.stderr.decode().rsplit("HEAVY=", 1)[1]

    assert loaded() == ""
    enable(state_root)
    assert loaded() == "fasteners"
    assert len(lines(state_root)) == 1


def test_a_timestamp_that_cannot_be_one_is_not_stored(on: Path) -> None:
    """Found by fuzzing: a 200 KB "at" made the record too large (exit 1 failed)."""
    out = run(["capture"], {"user": "no, use tabs not spaces", "assistant": "ok", "at": "word " * 40_000})
    assert out.exit == 0 and out.result["appended"] == 1, out.stderr
    (payload,) = payloads(on)
    assert payload["user_at"] is None and payload["user"] == "no, use tabs not spaces"
