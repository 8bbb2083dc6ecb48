"""Each harness as it is today: files and events the real clients wrote (Codex CLI 0.171.0, Gemini CLI
0.61.0, Claude Code 2.1.197, Pi 1.6.0), driven offline against a loopback model (see
tests/fixtures/transcripts/README.md), and what capture, select and advise make of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from advise_helpers import enable as enable_advise
from conftest import run
from habitus.harness import plan
from habitus.harness.events import parse_event
from habitus.harness.transcripts import detect_format, read_transcript
from obs_helpers import FIXTURES, enable, payloads
from select_helpers import COMMIT, declare_all, injected

ROLLOUT = FIXTURES / "codex-0.171-rollout.jsonl"
CODEX_EVENTS = FIXTURES / "codex-0.171-events.jsonl"
CHAT = FIXTURES / "gemini-0.61-chat.jsonl"
GEMINI_EVENTS = FIXTURES / "gemini-0.61-events.jsonl"
CLAUDE_BLOCK = FIXTURES / "claude-code-2.1-stop-block.jsonl"
TURN_1 = "01a23356-cb64-7492-bb28-76d4c65dcc3e"


@pytest.fixture
def on(state_root: Path) -> Path:
    enable(state_root)
    return state_root


def capture_hook(harness: str, event: dict[str, Any], *argv: str) -> None:
    out = run(["capture", "--harness", harness, *argv], stdin=b"" if argv else orjson.dumps(event))
    assert out.exit == 0 and out.stdout == b"" and out.stderr == b"", out


def no_errors(root: Path) -> bool:
    return not (root / "errors.jsonl").exists()


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- Codex CLI 0.171 -------------------------------------------------------------------------------


def test_a_real_codex_0171_rollout_imports_its_prompts_answers_and_tools(on: Path) -> None:
    chunk = read_transcript(ROLLOUT)
    assert chunk.format == "codex" and chunk.session_id == "01a23356-cb3b-7260-a312-9476b174cbf5"
    assert [(t.source, t.user, t.assistant) for t in chunk.turns] == [
        ("user", "list files, TOOL echo", "Done: all good."),
        ("hook", "Check the tests before stopping.", "Final answer after the stop hook."),
        ("user", "no, use tabs from now on", "Answer to the prompt."),
    ]
    assert [(u.name, u.status) for u in chunk.turns[0].tools] == [("exec_command", "ok")]
    assert chunk.turns[0].key == TURN_1  # the turn id Codex's hooks and notify name too
    result = run(["capture", "--transcript", str(ROLLOUT)]).result
    assert result["appended"] == 3 and result["dropped"]["incomplete"] == 0
    assert [p["source"] for p in payloads(on)] == ["user", "hook", "user"]


def _rollout_until(path: Path, marker: str | None) -> None:
    lines = ROLLOUT.read_text().splitlines(keepends=True)
    end = next((i for i, line in enumerate(lines) if marker and marker in line), len(lines))
    path.write_text("".join(lines[:end]))


def test_codex_stop_hooks_keep_tools_and_the_answer_after_a_block_and_notify_adds_nothing(
    on: Path, tmp_path: Path
) -> None:
    rollout = tmp_path / "rollout.jsonl"
    stop_1, stop_2, stop_3, notify_1, notify_2 = events(CODEX_EVENTS)
    for event in (stop_1, stop_2, stop_3):
        event["transcript_path"] = str(rollout)
    _rollout_until(rollout, "<hook_prompt")  # what Codex had written when the first Stop fired
    capture_hook("codex", stop_1)
    (first,) = payloads(on)
    assert (first["user"], first["assistant"], first["tools"]) == (
        "list files, TOOL echo",
        "Done: all good.",
        [{"name": "exec_command", "status": "ok"}],
    )
    _rollout_until(rollout, '"ordinal":26,')  # the hook's continuation, up to the next turn
    capture_hook("codex", stop_2)  # stop_hook_active: the answer after the block
    assert [(p["source"], p["assistant"]) for p in payloads(on)][1:] == [
        ("hook", "Final answer after the stop hook.")
    ]
    _rollout_until(rollout, None)
    capture_hook("codex", stop_3)
    capture_hook("codex", {}, json.dumps(notify_1))  # notify sees the same turns: nothing new
    capture_hook("codex", {}, json.dumps(notify_2))
    again = run(["capture", "--transcript", str(rollout)]).result
    assert again["appended"] == 0 and again["duplicates"] == 3
    stored = payloads(on)
    assert [p["user"] for p in stored] == [
        "list files, TOOL echo",
        "Check the tests before stopping.",
        "no, use tabs from now on",
    ]
    assert no_errors(on)


def test_codex_notify_of_a_resumed_thread_names_only_this_turns_prompt(on: Path) -> None:
    notify = events(CODEX_EVENTS)[-1]
    assert notify["input-messages"] == ["list files, TOOL echo", "no, use tabs from now on"]
    assert parse_event("codex", notify).prompt == "no, use tabs from now on"
    capture_hook("codex", {}, json.dumps(notify))
    assert [p["user"] for p in payloads(on)] == ["no, use tabs from now on"]


def test_codex_hooks_install_a_session_end_sweep_within_codexs_3_s(tmp_path: Path) -> None:
    snippet = plan.snippet("codex")["hooks"]
    (handler,) = snippet["SessionEnd"][0]["hooks"]
    expected = plan.command_line(plan.HOOK, "codex")
    assert handler["command"] == expected and handler["timeout"] == 3
    assert plan.commands_for("codex", "SessionEnd") == [("capture",)]


def test_codex_session_end_sweeps_the_rollout(on: Path, tmp_path: Path) -> None:
    event = {
        "session_id": "01a23356-cb3b-7260-a312-9476b174cbf5",
        "transcript_path": str(ROLLOUT),
        "cwd": "/home/alice/proj",
        "hook_event_name": "SessionEnd",
        "reason": "other",
    }
    capture_hook("codex", event)
    assert len(payloads(on)) == 3


def test_hooks_install_for_codex_explains_trust_and_writes_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(home))
    home.mkdir()
    (home / "config.toml").write_text('model = "gpt-5"\n')
    out = run(["hooks", "install", "--harness", "codex"])
    assert out.exit == 0, out.stderr
    trust = out.result["trust"]
    assert trust["required"] is True and trust["run"] == "codex"
    assert trust["untrusted"] == len(out.result["added"]) > 0 and trust["recorded"] == 0
    assert "hash" in trust["why"] and "timeout" in trust["why"] and "trust" in trust["how"].lower()
    assert (home / "config.toml").read_text() == 'model = "gpt-5"\n'  # no trust written for the user
    again = run(["hooks", "install", "--harness", "codex"]).result
    assert again["changed"] is False and again["trust"]["untrusted"] == 0


def test_codex_trust_counts_the_entries_codex_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    hooks_file = (home / "hooks.json").resolve()
    (home / "config.toml").write_text(
        f'[hooks.state."{hooks_file}:stop:0:0"]\ntrusted_hash = "sha256:00"\n'
        f'[hooks.state."/elsewhere/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:11"\n'
    )
    assert plan.codex_trust(hooks_file, {"added": []})["recorded"] == 1


# -- Gemini CLI 0.61 -------------------------------------------------------------------------------


def test_a_real_gemini_chat_file_imports(on: Path) -> None:
    assert detect_format(CHAT) == "gemini"
    chunk = read_transcript(CHAT)
    assert chunk.session_id == "82766330-4347-4e8c-b165-4ca7fe6655f4"
    # The hook context glued to the prompt is gone, the rewound prompt too, the tool call kept.
    assert [(t.user, t.assistant) for t in chunk.turns] == [
        ("please run TOOL echo", "Done: all good."),
        ("Check the tests before stopping.", "Answer to the prompt."),
    ]
    assert [(u.name, u.status, u.detail) for u in chunk.turns[0].tools] == [
        ("run_shell_command", "ok", "echo hi")
    ]
    out = run(["capture", "--transcript", str(CHAT), "--format", "gemini"])
    assert out.exit == 0 and out.result["appended"] == 2
    assert run(["capture", "--transcript", str(CHAT)]).result["duplicates"] == 2


def test_gemini_after_agent_stores_the_prompt_without_habitus_context_and_the_block_once(
    on: Path, tmp_path: Path
) -> None:
    before, _, first, second, _ = events(GEMINI_EVENTS)
    assert before["prompt"].startswith("<hook_context>## habitus memory index &lt;b&gt;")
    assert parse_event("gemini", before).prompt == "please run TOOL echo"
    chat = tmp_path / "session.jsonl"
    lines = CHAT.read_text().splitlines(keepends=True)
    chat.write_text("".join(lines[: next(i for i, x in enumerate(lines) if "Check the tests" in x)]))
    for event in (first, second):
        event["transcript_path"] = str(chat)
    capture_hook("gemini", first)
    chat.write_text("".join(lines))
    capture_hook("gemini", second)  # after the AfterAgent deny: stop_hook_active
    assert [(p["source"], p["user"], p["assistant"]) for p in payloads(on)] == [
        ("user", "please run TOOL echo", "Done: all good."),
        ("hook", "Check the tests before stopping.", "Answer to the prompt."),
    ]
    assert payloads(on)[0]["tools"] == [{"name": "run_shell_command", "status": "ok"}]
    assert run(["capture", "--transcript", str(chat)]).result["appended"] == 0  # a later import agrees
    assert no_errors(on)


def test_gemini_without_a_chat_file_strips_the_context_from_the_event(on: Path) -> None:
    _, _, first, _, _ = events(GEMINI_EVENTS)
    capture_hook("gemini", {**first, "transcript_path": None})
    assert [p["user"] for p in payloads(on)] == ["please run TOOL echo"]


def test_escaped_and_repeated_hook_context_is_stripped() -> None:
    glued = "&lt;hook_context&gt;a&lt;/hook_context&gt;\n<hook_context>b\n</hook_context>\n\nfix the test"
    assert parse_event("gemini", {"hook_event_name": "BeforeAgent", "prompt": glued}).prompt == "fix the test"
    kept = "why does <hook_context> appear in my logs?"
    assert parse_event("gemini", {"hook_event_name": "BeforeAgent", "prompt": kept}).prompt == kept


def test_hook_context_glued_after_the_prompt_is_stripped() -> None:
    """Gemini CLI -p puts BeforeAgent's context after the prompt, in AfterAgent's `prompt` too."""
    glued = "bump to 0.6\n\n<hook_context>habitus: approved habits\n- run the tests</hook_context>"
    both = f"<hook_context>index</hook_context>\n\n{glued}\n&lt;hook_context&gt;x&lt;/hook_context&gt;\n"
    for prompt in (glued, both):
        event = parse_event("gemini", {"hook_event_name": "AfterAgent", "prompt": prompt})
        assert event.prompt == "bump to 0.6"
    kept = "what does <hook_context>x</hook_context> mean in the middle of a prompt?"
    assert parse_event("gemini", {"hook_event_name": "AfterAgent", "prompt": kept}).prompt == kept


def test_select_judges_the_users_prompt_not_habitus_own_memory_index(state_root: Path) -> None:
    declare_all(COMMIT)
    prompt = "write a commit message for these changes"
    index = (
        "Memory index (habitus; `habitus memory recall ID --store STORE` shows a whole record):\n"
        "- [global] 5f0c habits are reviewed before they are approved; list the habits with habitus habit list"
    )
    index = index.replace("<", "&lt;").replace(">", "&gt;")
    plain = run(["select", "--harness", "gemini"], {"hook_event_name": "BeforeAgent", "prompt": prompt})
    glued = run(
        ["select", "--harness", "gemini"],
        {"hook_event_name": "BeforeAgent", "prompt": f"<hook_context>{index}</hook_context>\n\n{prompt}"},
    )
    assert plain.exit == 0 and COMMIT[1] in injected("gemini", json.loads(plain.stdout))
    assert glued.stdout == plain.stdout


def test_gemini_cli_home_decides_where_hooks_install_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gemini-home"))
    assert plan.settings_path("gemini", None) == tmp_path / "gemini-home" / ".gemini" / "settings.json"
    out = run(["hooks", "install", "--harness", "gemini"])
    assert out.exit == 0 and out.result["path"] == str(tmp_path / "gemini-home" / ".gemini" / "settings.json")
    assert not (tmp_path / "home" / ".gemini").exists()
    monkeypatch.delenv("GEMINI_CLI_HOME")
    assert plan.settings_path("gemini", None) == tmp_path / "home" / ".gemini" / "settings.json"


def test_a_gemini_after_tool_event_reaches_the_review(state_root: Path) -> None:
    enable_advise(state_root)
    tool = events(GEMINI_EVENTS)[-1]
    assert tool["hook_event_name"] == "AfterTool"
    risky = {**tool, "tool_input": {"command": "git push --force origin main"}, "transcript_path": None}
    out = run(["advise", "--harness", "gemini"], risky)
    assert out.exit == 0, out.stderr
    reply = json.loads(out.stdout)
    assert "force-pushed" in reply["hookSpecificOutput"]["additionalContext"]
    assert run(["status"]).result["advise"]["reviews"] == 1


# -- Claude Code -----------------------------------------------------------------------------------


def test_after_a_claude_stop_block_the_final_answer_is_stored(on: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    lines = CLAUDE_BLOCK.read_text().splitlines(keepends=True)
    cut = next(i for i, x in enumerate(lines) if "Stop hook feedback" in x)
    transcript.write_text("".join(lines[:cut]))
    base = {"session_id": "b0d86ad2-d0a8-4bff-836b-2e019ec3e0da", "transcript_path": str(transcript)}
    capture_hook(
        "claude-code",
        {
            **base,
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "last_assistant_message": "Done: all good.",
        },
    )
    transcript.write_text("".join(lines))
    final = "Final answer after the stop hook."
    capture_hook(
        "claude-code",
        {**base, "hook_event_name": "Stop", "stop_hook_active": True, "last_assistant_message": final},
    )
    stored = payloads(on)
    assert [(p["source"], p["assistant"]) for p in stored] == [("user", "Done: all good."), ("hook", final)]
    assert stored[-1]["assistant"] == final  # the last answer of the session is the final one
    assert stored[0]["tools"] == [{"name": "Bash", "status": "refused"}]
    assert run(["capture", "--transcript", str(transcript)]).result["appended"] == 0


def test_a_refused_git_clean_is_not_reported_as_run(state_root: Path, tmp_path: Path) -> None:
    enable_advise(state_root)
    event = {
        "session_id": "b0d86ad2",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "Done: all good.",
    }
    refused = tmp_path / "refused.jsonl"
    lines = CLAUDE_BLOCK.read_text().splitlines(keepends=True)
    refused.write_text("".join(lines[: next(i for i, x in enumerate(lines) if "Stop hook feedback" in x)]))
    out = run(["advise", "--harness", "claude-code"], {**event, "transcript_path": str(refused)})
    assert out.exit == 0 and b"git clean" not in out.stdout, out.stdout
    ran = tmp_path / "ran.jsonl"
    ran.write_text(
        refused.read_text()
        .replace(
            '"content":"This command requires approval","is_error":true', '"content":"","is_error":false'
        )
        .replace('"toolUseResult":"Error: This command requires approval"', '"toolUseResult":{}')
    )
    out = run(
        ["advise", "--harness", "claude-code"], {**event, "session_id": "other", "transcript_path": str(ran)}
    )
    assert "The agent ran git clean -f" in json.loads(out.stdout)["reason"]  # the same call, run


def test_a_subagent_transcript_is_not_the_users_words(on: Path, tmp_path: Path) -> None:
    folder = tmp_path / "proj" / "session-1" / "subagents"
    folder.mkdir(parents=True)
    agent = folder / "agent-a1.jsonl"
    records = [
        {
            "parentUuid": None,
            "isSidechain": True,
            "agentId": "a1",
            "type": "user",
            "uuid": "s1",
            "sessionId": "session-1",
            "timestamp": "2026-12-01T10:00:00Z",
            "message": {"role": "user", "content": "Search the repo for every use of the old API."},
        },
        {
            "parentUuid": "s1",
            "isSidechain": True,
            "agentId": "a1",
            "type": "assistant",
            "uuid": "s2",
            "sessionId": "session-1",
            "timestamp": "2026-12-01T10:00:05Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Found 3 uses."}]},
        },
    ]
    agent.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert run(["capture", "--transcript", str(agent)]).result["appended"] == 1
    (stored,) = payloads(on)
    assert stored["source"] == "subagent"


def test_a_first_line_larger_than_the_sniff_window_is_still_recognised(on: Path, tmp_path: Path) -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR" * 40_000},
    }
    first = {
        "parentUuid": None,
        "isSidechain": False,
        "type": "user",
        "uuid": "u1",
        "sessionId": "img",
        "timestamp": "2026-12-01T10:00:00Z",
        "message": {
            "role": "user",
            "content": [image, {"type": "text", "text": "what is wrong in this screenshot?"}],
        },
    }
    answer = {
        "parentUuid": "u1",
        "isSidechain": False,
        "type": "assistant",
        "uuid": "a1",
        "sessionId": "img",
        "timestamp": "2026-12-01T10:00:03Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "The button overlaps the menu."}],
        },
    }
    path = tmp_path / "image.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(answer) + "\n")
    assert path.stat().st_size > 64 * 1024 * 2
    assert detect_format(path) == "claude-code"
    assert run(["capture", "--transcript", str(path)]).result["appended"] == 1
    assert payloads(on)[0]["user"] == "what is wrong in this screenshot?"
