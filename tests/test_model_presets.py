"""Model presets: `habitus config preset`, how a preset resolves, and how an agent CLI is invoked.

The real CLIs run in tests/e2e/test_presets.py; here the configuration and the invocation's safety
properties (request on stdin only, empty private folder, HABITUS_NO_HOOKS) are checked directly.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from conftest import run, run_process
from habitus.models import ModelError, call_json, presets
from habitus.state import config as configuration
from habitus.state.root import StateRoot

SECRET_TASK = "the user's words: deploy to prod"
SCHEMA = {"type": "object"}


def load(root: Path) -> configuration.Config:
    return configuration.load(StateRoot(root))


def test_config_preset_writes_the_table_and_points_each_use_at_it(state_root: Path) -> None:
    done = run(["config", "preset", "claude"])
    assert done.exit == 0, done.stderr
    assert done.result["model"] == {
        "name": "claude",
        "kind": "preset",
        "preset": "claude",
        "about": "Claude Code, `claude -p`",
        "used_for": ["analyze", "advise"],
    }
    config = load(state_root)
    assert config.get("analyze.model") == "claude" and config.get("advise.model") == "claude"
    assert config.get("select.judge") == "local"
    assert config.model("claude")["timeout_s"] == 120


def test_config_preset_for_select_and_a_local_server(state_root: Path) -> None:
    done = run(
        ["config", "preset", "ollama", "--name", "local", "--model", "qwen2.5-coder:7b", "--for", "select"]
    )
    assert done.exit == 0, done.stderr
    config = load(state_root)
    assert config.get("select.judge") == "model:local" and config.get("analyze.model") == ""
    assert config.model("local")["preset"] == "ollama"
    status = run(["status"]).result
    assert status["models"] == [
        {
            "name": "local",
            "kind": "preset",
            "preset": "ollama",
            "about": "Ollama's OpenAI-compatible API",
            "used_for": ["select"],
        }
    ]
    assert status["enabled"]["select_judge"] == "model:local"


def test_config_preset_refuses_what_it_cannot_write(state_root: Path) -> None:
    assert run(["config", "preset", "nope"]).exit == 2
    bad = run(["config", "preset", "claude", "--name", "Bad Name"])
    assert bad.exit != 0 and bad.error["code"] == "unknown_key"
    assert not (state_root / "config.toml").exists()  # nothing half-written


def test_status_without_models_lists_none(state_root: Path) -> None:
    assert run(["status"]).result["models"] == []


def call(root: Path, name: str = "m") -> None:
    call_json(load(root), name, system="s", user=SECRET_TASK, schema=SCHEMA, max_tokens=64, purpose="analyze")


def test_a_preset_without_its_program_is_not_installed(state_root: Path) -> None:
    run(["config", "preset", "codex", "--name", "m", "--program", "/nonexistent/codex"])
    with pytest.raises(ModelError) as caught:
        call(state_root)
    assert caught.value.reason == "not_installed"
    assert SECRET_TASK not in caught.value.message


def test_an_unset_preset_and_a_server_without_a_model_are_not_configured(state_root: Path) -> None:
    configuration.set_value(StateRoot(state_root), "models.m.kind", "preset", wait=5)
    with pytest.raises(ModelError) as caught:
        call(state_root)
    assert caught.value.reason == "not_configured"
    run(["config", "preset", "ollama", "--name", "o"])
    with pytest.raises(ModelError) as caught:
        call(state_root, "o")
    assert caught.value.reason == "not_configured" and "model" in caught.value.message


def test_an_unknown_preset_value_is_refused_by_config(state_root: Path) -> None:
    done = run(["config", "set", "models.m.preset", "chatgpt-web"])
    assert done.exit != 0 and done.error["code"] == "invalid_value"


@pytest.mark.parametrize("name", ["claude", "codex", "gemini", "pi"])
def test_an_agent_cli_gets_the_request_on_stdin_in_an_empty_private_folder(name: str, tmp_path: Path) -> None:
    folder = tmp_path / "scratch"
    folder.mkdir(mode=0o700)
    call = presets.invocation(
        presets.PRESETS[name], [name], "some-model", system="Return JSON only.", user=SECRET_TASK,
        schema={"type": "object", "required": ["x"]}, folder=folder,
    )  # fmt: skip
    assert call.argv[0] == name and "some-model" in call.argv
    assert not any(SECRET_TASK in arg or "Return JSON only." in arg for arg in call.argv)
    text = call.stdin.decode()
    assert SECRET_TASK in text and "Return JSON only." in text and '"required":["x"]' in text
    assert call.env["HABITUS_NO_HOOKS"] == "1"
    assert call.cwd.parent == folder and list(call.cwd.iterdir()) == []
    assert stat.S_IMODE(call.cwd.stat().st_mode) == 0o700
    if name == "gemini":
        settings = json.loads(Path(call.env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"]).read_text())
        assert settings["hooksConfig"] == {"enabled": False}
    if name == "claude":
        assert json.loads(call.argv[call.argv.index("--settings") + 1]) == {"disableAllHooks": True}


def test_no_hooks_makes_hook_mode_exit_silently(state_root: Path) -> None:
    run(["config", "set", "capture.enabled", "true"])
    event = {"hook_event_name": "Stop", "session_id": "s", "last_assistant_message": "done", "prompt": "p"}
    for args in (
        ["capture", "--harness", "claude-code"],
        ["select", "--harness=gemini"],
        ["memory", "index", "--harness", "pi"],
    ):
        done = run_process(args, event, env={"HABITUS_NO_HOOKS": "1"})
        assert (done.exit, done.stdout, done.stderr) == (0, b"", b"")
    assert not (state_root / "observations").exists() and not (state_root / "errors.jsonl").exists()
    # Not hook mode: commands and `hooks print --harness` still answer.
    assert run_process(["hooks", "print", "--harness", "codex"], env={"HABITUS_NO_HOOKS": "1"}).exit == 0
    assert run_process(["status"], env={"HABITUS_NO_HOOKS": "1"}).result["v"] == 1


def test_a_model_program_runs_with_no_hooks_set(state_root: Path, tmp_path: Path) -> None:
    program = tmp_path / "model.sh"
    program.write_text('#!/bin/sh\ncat > /dev/null\nprintf \'{"no_hooks": "%s"}\' "$HABITUS_NO_HOOKS"\n')
    program.chmod(0o755)
    configuration.set_value(StateRoot(state_root), "models.m.kind", "command", wait=5)
    configuration.set_value(StateRoot(state_root), "models.m.command", [str(program)], wait=5)
    answer = call_json(
        load(state_root), "m", system="s", user="u", schema=SCHEMA, max_tokens=64, purpose="analyze"
    )
    assert answer == {"no_hooks": "1"}


def test_the_demo_sentence_names_what_is_used(state_root: Path) -> None:
    nothing = presets.summary(load(state_root), on_path={})
    assert nothing.startswith("No model is configured") and "habitus config preset NAME" in nothing
    found = presets.summary(load(state_root), on_path={"gemini": True})
    assert "`habitus config preset gemini`" in found
    run(["config", "preset", "pi", "--for", "analyze"])
    configuration.set_value(StateRoot(state_root), "models.api.kind", "openai", wait=5)
    configuration.set_value(StateRoot(state_root), "advise.model", "api", wait=5)
    assert presets.summary(load(state_root), on_path={}) == (
        "Your habitus uses the model api (kind openai) for advise; the model preset pi (Pi, `pi -p`) for analyze."
    )
