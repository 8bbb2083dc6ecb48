"""habitus hooks print / install: the exact snippet, and a merge that touches nothing else."""

from __future__ import annotations

import json
import shlex
import stat
from pathlib import Path

import pytest

from conftest import REPO, run, run_process
from habitus.harness import plan, settings

HARNESSES = ("claude-code", "codex", "gemini")
USER_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls)"], "deny": []},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5}]}
        ],
    },
    "statusLine": {"type": "command", "command": "~/bin/status"},
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "HABITUS_HOME"):
        monkeypatch.delenv(name, raising=False)
    return folder


def handlers(document: dict, event: str) -> list[dict]:
    return [h for group in document["hooks"].get(event, []) for h in group.get("hooks", [])]


def install(harness: str = "claude-code", *args: str) -> dict:
    done = run(["hooks", "install", "--harness", harness, *args])
    assert done.exit == 0, done.stderr
    return done.result


@pytest.mark.parametrize("harness", HARNESSES)
def test_print_names_the_habitus_on_path_for_every_planned_event(harness: str, home: Path) -> None:
    done = run_process(["hooks", "print", "--harness", harness], env={"HOME": str(home)})
    assert done.exit == 0, done.stderr
    snippet = json.loads(done.stdout)
    assert set(snippet) == {"hooks"}
    planned = {(event, plan.HOOK) for event in plan.events(harness)}  # one process per event
    seen = set()
    for event, groups in snippet["hooks"].items():
        for handler in (h for g in groups for h in g["hooks"]):
            guard, words = shlex.split(handler["command"])[:3], shlex.split(handler["command"])[3:]
            assert guard == ["sh", "-c", plan.GUARD]  # survives a moved habitus (tests/test_hook_guard.py)
            assert words[0] == "habitus"  # found on PATH when the hook runs: no path of this machine
            assert words[-2:] == ["--harness", harness] and plan.is_ours(handler)
            assert handler["type"] == "command" and handler["timeout"] >= (1000 if harness == "gemini" else 1)
            seen.add((event, tuple(words[1:-2])))
    assert seen == planned
    events = set(snippet["hooks"])
    assert {"SessionStart"} <= events and ({"UserPromptSubmit", "Stop"} <= events or harness == "gemini")


def test_print_writes_the_state_root_into_each_command(home: Path, tmp_path: Path) -> None:
    out = run(["hooks", "print", "--harness", "claude-code", "--root", str(tmp_path / "r")])
    commands = [h["command"] for e in json.loads(out.stdout)["hooks"].values() for g in e for h in g["hooks"]]
    assert all(f"--root {tmp_path / 'r'} --harness claude-code" in c for c in commands)
    plain = run(["hooks", "print", "--harness", "claude-code"]).stdout.decode()
    assert "--root" not in plain


def test_install_creates_a_missing_file_with_exactly_the_snippet(home: Path) -> None:
    result = install()
    path = home / ".claude" / "settings.json"
    assert (
        result["path"] == str(path) and result["created"] and result["changed"] and result["backup"] is None
    )
    snippet = json.loads(run(["hooks", "print", "--harness", "claude-code"]).stdout)
    assert json.loads(path.read_text()) == snippet
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert {a["event"] for a in result["added"]} == set(snippet["hooks"])


def test_install_merges_without_touching_other_keys_or_hooks(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    original = json.dumps(USER_SETTINGS, indent=4).encode()
    path.write_bytes(original)
    path.chmod(0o644)
    result = install()
    merged = json.loads(path.read_text())
    assert {k: v for k, v in merged.items() if k != "hooks"} == {
        k: v for k, v in USER_SETTINGS.items() if k != "hooks"
    }
    assert merged["hooks"]["PreToolUse"] == USER_SETTINGS["hooks"]["PreToolUse"]
    assert merged["hooks"]["Stop"][0] == USER_SETTINGS["hooks"]["Stop"][0]  # the user's group stays first
    assert [h["command"].split()[-3] for h in handlers(merged, "Stop")[1:]] == ["hook"]
    assert list(merged["hooks"])[:2] == ["Stop", "PreToolUse"]  # existing events keep their place
    backup = Path(result["backup"])
    assert backup.parent == path.parent and backup.read_bytes() == original
    assert stat.S_IMODE(path.stat().st_mode) == 0o644 and stat.S_IMODE(backup.stat().st_mode) == 0o644
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_installing_twice_changes_nothing(home: Path) -> None:
    install()
    path = home / ".claude" / "settings.json"
    before = path.read_bytes(), path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())
    again = install()
    assert not again["changed"] and again["added"] == again["removed"] == [] and again["backup"] is None
    assert again["kept"] == len(plan.events("claude-code"))
    assert (
        path.read_bytes(),
        path.stat().st_mtime_ns,
        sorted(p.name for p in path.parent.iterdir()),
    ) == before


def test_a_reinstall_from_another_path_replaces_the_old_entries(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    old = {
        "type": "command",
        "command": "/old/venv/bin/habitus capture --root /old/root --harness claude-code",
    }
    mine = {"type": "command", "command": "my-logger"}
    path.write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [mine, old]}], "SessionEnd": [{"hooks": [old]}]}})
    )
    result = install()
    merged = json.loads(path.read_text())
    assert handlers(merged, "Stop")[0] == mine and old not in handlers(merged, "Stop")
    assert [h for h in handlers(merged, "SessionEnd") if plan.is_ours(h)] == handlers(merged, "SessionEnd")
    assert len(handlers(merged, "SessionEnd")) == 1
    assert {r["command"] for r in result["removed"]} == {old["command"]}
    assert not plan.is_ours(mine) and not plan.is_ours({"command": "habitus memory observe --harness x"})


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b'{"hooks": {', "truncated JSON"),
        (b'{"model": "opus",}', "a trailing comma"),
        (b'// my settings\n{"model": "opus"}', "a comment"),
        (b'["not", "an", "object"]', "not an object"),
        (b'{"hooks": []}', "hooks not an object"),
        (b'{"hooks": {"Stop": {"hooks": []}}}', "an event that is not a list"),
        (b'{"hooks": {"Stop": [{"hooks": "x"}]}}', "a group whose hooks is not a list"),
        (b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_a_file_habitus_cannot_read_is_refused_and_left_alone(home: Path, content: bytes, why: str) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(content)
    done = run(["hooks", "install", "--harness", "claude-code"])
    assert done.exit == 3 and done.error["code"] == "settings_invalid", why
    assert path.read_bytes() == content and [p.name for p in path.parent.iterdir()] == ["settings.json"]


def test_a_symlinked_settings_file_is_refused(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "dotfiles-settings.json"
    target.write_text('{"model": "opus"}')
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").symlink_to(target)
    done = run(["hooks", "install", "--harness", "claude-code"])
    assert done.exit == 3 and done.error["code"] == "symlink_refused"
    assert target.read_text() == '{"model": "opus"}' and (home / ".claude" / "settings.json").is_symlink()


def test_project_settings_go_into_the_repository(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    monkeypatch.chdir(repo / "src")
    result = install("claude-code", "--project")
    assert result["path"] == str(repo / ".claude" / "settings.json") and result["created"]
    assert install("codex", "--project")["path"] == str(repo / ".codex" / "hooks.json")
    assert install("gemini", "--project")["path"] == str(repo / ".gemini" / "settings.json")
    assert not (home / ".claude").exists()
    monkeypatch.chdir(tmp_path)
    done = run(["hooks", "install", "--harness", "claude-code", "--project"])
    assert done.exit == 2 and done.error["code"] == "no_project"


def test_codex_and_gemini_files(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert install("codex")["path"] == str(home / ".codex" / "hooks.json")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    assert install("codex")["path"] == str(tmp_path / "codex-home" / "hooks.json")
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(
        json.dumps(
            {"theme": "dark", "hooks": {"enabled": True, "disabled": ["x"]}, "hooksConfig": {"enabled": True}}
        )
    )
    result = install("gemini")
    merged = json.loads(path.read_text())
    assert merged["theme"] == "dark" and merged["hooksConfig"] == {"enabled": True}
    assert merged["hooks"]["enabled"] is True and merged["hooks"]["disabled"] == ["x"]  # not events: kept
    names = [h["name"] for h in handlers(merged, "BeforeAgent")]
    assert names == ["habitus-hook"] and result["backup"]  # select and advise, in one process
    assert all(h["timeout"] >= 1000 for h in handlers(merged, "AfterAgent"))  # milliseconds


def test_only_claude_codes_session_end_sweep_runs_in_the_background() -> None:
    """Claude Code runs an `"async": true` hook without waiting; `claude -p` lets a SessionEnd one finish
    after it exits but kills an unfinished Stop one, so only the SessionEnd sweep is marked."""
    marked = {
        (harness, event)
        for harness in HARNESSES
        for event, groups in plan.snippet(harness)["hooks"].items()
        for handler in groups[0]["hooks"]
        if handler.get("async")
    }
    assert marked == {("claude-code", "SessionEnd")}
    assert plan.commands_for("claude-code", "SessionEnd") == [("capture",)]


@pytest.mark.parametrize("harness", HARNESSES)
def test_an_install_over_the_per_command_layout_leaves_one_hook_per_event(harness: str, home: Path) -> None:
    """Before 2026-12-07 hooks install wrote one entry per command (select and advise side by side on
    the prompt event): a re-install replaces them all with one `habitus hook` per event, and an
    uninstall after it leaves nothing of either."""
    old = {
        "hooks": {
            event: [
                {
                    "hooks": [
                        plan.entry(harness, args, None, event) for args in plan.commands_for(harness, event)
                    ]
                }
            ]
            for event in plan.events(harness)
        }
    }
    path = plan.settings_path(harness, None)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(old))
    result = install(harness)
    document = json.loads(path.read_text())
    assert result["changed"] and len(result["removed"]) == len(plan.PLAN[harness])
    for event in plan.events(harness):
        (handler,) = handlers(document, event)
        assert shlex.split(handler["command"])[3:5] == ["habitus", "hook"]
    assert run(["hooks", "uninstall", "--harness", harness]).exit == 0
    assert not path.exists() or "habitus" not in path.read_text()


def test_claude_config_dir_is_honoured(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-work"))
    assert install()["path"] == str(tmp_path / "claude-work" / "settings.json")


def test_a_file_changed_by_someone_else_meanwhile_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"model": "opus"}')
    _, before, _ = settings.read(path)
    path.write_text('{"model": "sonnet", "other": 1}')  # the harness saved its settings meanwhile
    assert settings._write(path, b"{}\n", 0o600, before) is False
    assert json.loads(path.read_text()) == {"model": "sonnet", "other": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]


def test_an_empty_file_counts_as_an_empty_object(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text("")
    result = install()
    assert result["changed"] and Path(result["backup"]).read_bytes() == b""
    assert set(json.loads(path.read_text())) == {"hooks"}


@pytest.mark.parametrize(
    ("harness", "heading"), [("claude-code", "Claude Code"), ("codex", "Codex CLI"), ("gemini", "Gemini CLI")]
)
def test_readme_shows_exactly_what_hooks_print_prints(harness: str, heading: str) -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split(f"\n### {heading}\n", 1)[1].split("\n### ", 1)[0]
    block = section.split("```json\n", 1)[1].split("\n```", 1)[0]
    assert json.loads(block) == plan.snippet(harness)


@pytest.mark.parametrize(
    ("harness", "folder"), [("claude-code", ".claude"), ("codex", ".codex"), ("gemini", ".gemini")]
)
def test_a_symlinked_project_folder_is_refused_and_nothing_is_written_outside(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, harness: str, folder: str
) -> None:
    """Issue 15: `hooks install --project` followed a symlinked `.claude` and wrote outside the repository."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".git").mkdir(parents=True)
    outside.mkdir()
    (repo / folder).symlink_to(outside)
    monkeypatch.chdir(repo)
    for command in ("install", "uninstall"):
        done = run(["hooks", command, "--harness", harness, "--project"])
        assert done.exit == 3 and done.error["code"] == "symlink_refused", done.stderr
    assert list(outside.iterdir()) == []
