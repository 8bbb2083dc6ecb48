"""habitus hooks uninstall: exactly habitus's entries go, and install then uninstall gives the file back
byte for byte (its formatting and key order included), or no file when install created it."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from conftest import run
from habitus.harness import plan, settings

HARNESSES = ("claude-code", "codex", "gemini")
# A user's own file: 4-space indent, keys in no sorted order, a non-ASCII value, other hooks in the
# events habitus writes, and no trailing newline.
OWN = (
    '{\n    "statusLine": {"type": "command", "command": "~/bin/status"},\n    "model": "opus",\n'
    '    "hooks": {\n        "Stop": [{"hooks": [{"type": "command", "command": "notify-send fertig ✓"}]}],\n'
    '        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],\n'
    '        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}]\n'
    "    },\n"
    '    "permissions": {"deny": [], "allow": ["Bash(ls)"]}\n}'
).encode()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "HABITUS_HOME"):
        monkeypatch.delenv(name, raising=False)
    return folder


def hooks_cmd(verb: str, harness: str, *args: str) -> dict:
    done = run(["hooks", verb, "--harness", harness, *args])
    assert done.exit == 0, done.stderr
    return done.result


def path_of(harness: str, home: Path) -> Path:
    return {
        "claude-code": home / ".claude" / "settings.json",
        "codex": home / ".codex" / "hooks.json",
        "gemini": home / ".gemini" / "settings.json",
    }[harness]


def backups(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name.endswith(".bak"))


@pytest.mark.parametrize("harness", HARNESSES)
def test_install_then_uninstall_gives_the_users_file_back_byte_for_byte(harness: str, home: Path) -> None:
    path = path_of(harness, home)
    path.parent.mkdir()
    path.write_bytes(OWN)
    path.chmod(0o640)
    assert hooks_cmd("install", harness)["changed"]
    assert path.read_bytes() != OWN
    result = hooks_cmd("uninstall", harness)
    assert result["changed"] and not result["deleted"] and result["left"] == []
    assert path.read_bytes() == OWN and stat.S_IMODE(path.stat().st_mode) == 0o640
    assert len(result["removed"]) == len(plan.events(harness))
    assert Path(result["restored"]).read_bytes() == OWN  # the install's backup
    assert b"--harness " + harness.encode() in Path(result["backup"]).read_bytes()  # before uninstall


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_file_install_created_is_removed(harness: str, home: Path) -> None:
    path = path_of(harness, home)
    assert hooks_cmd("install", harness)["created"]
    result = hooks_cmd("uninstall", harness)
    assert result["changed"] and result["deleted"] and result["restored"] is None
    assert not path.exists()
    assert Path(result["backup"]).exists()  # what the file held, in case it was wanted after all
    again = hooks_cmd("uninstall", harness)
    assert not again["changed"] and again["removed"] == [] and again["backup"] is None


def test_uninstalling_twice_writes_nothing_the_second_time(home: Path) -> None:
    path = path_of("claude-code", home)
    path.parent.mkdir()
    path.write_bytes(OWN)
    hooks_cmd("install", "claude-code")
    hooks_cmd("uninstall", "claude-code")
    before = path.read_bytes(), path.stat().st_mtime_ns, backups(path)
    again = hooks_cmd("uninstall", "claude-code")
    assert not again["changed"] and again["removed"] == [] and again["backup"] is None
    assert (path.read_bytes(), path.stat().st_mtime_ns, backups(path)) == before


def test_other_hooks_in_the_same_events_and_groups_stay(home: Path) -> None:
    path = path_of("claude-code", home)
    path.parent.mkdir()
    ours = plan.entry("claude-code", ("capture",), "/old/root", "Stop", "/old/venv/bin/habitus")
    mine = {"type": "command", "command": "my-logger"}
    document = {
        "hooks": {
            "Stop": [{"hooks": [mine, ours]}, {"matcher": "", "hooks": [ours]}],
            "SessionEnd": [
                {"hooks": [{"type": "command", "command": "/usr/bin/habitus capture --harness claude-code"}]}
            ],
            "Notification": [{"hooks": [{"type": "command", "command": "say hi"}]}],
        },
        "env": {"A": "1"},
    }
    path.write_text(json.dumps(document))
    result = hooks_cmd("uninstall", "claude-code")
    left = json.loads(path.read_text())
    assert left == {
        "hooks": {
            "Stop": [{"hooks": [mine]}],
            "Notification": [{"hooks": [{"type": "command", "command": "say hi"}]}],
        },
        "env": {"A": "1"},
    }
    assert [r["event"] for r in result["removed"]] == ["Stop", "Stop", "SessionEnd"]
    assert result["restored"] is None and json.loads(Path(result["backup"]).read_text()) == document


def test_an_entry_the_user_edited_goes_if_it_is_still_habitus_and_stays_if_not(home: Path) -> None:
    path = path_of("codex", home)
    path.parent.mkdir()
    timeout_changed = {**plan.entry("codex", ("select",)), "timeout": 5, "statusMessage": "habitus"}
    rewritten = {"type": "command", "command": "habitus select --harness codex --verbose"}
    wrapped = {"type": "command", "command": "nice -n 10 habitus advise --harness codex"}
    path.write_text(
        json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [timeout_changed, rewritten, wrapped]}]}})
    )
    result = hooks_cmd("uninstall", "codex")
    assert [r["command"] for r in result["removed"]] == [timeout_changed["command"]]
    assert result["left"] == [
        {"event": "UserPromptSubmit", "command": rewritten["command"]},
        {"event": "UserPromptSubmit", "command": wrapped["command"]},
    ]
    assert json.loads(path.read_text()) == {"hooks": {"UserPromptSubmit": [{"hooks": [rewritten, wrapped]}]}}


def test_a_file_changed_between_install_and_uninstall_keeps_the_change(home: Path) -> None:
    path = path_of("gemini", home)
    path.parent.mkdir()
    path.write_bytes(OWN)
    hooks_cmd("install", "gemini")
    changed = json.loads(path.read_text())
    changed["theme"] = "dark"  # the harness saved a setting meanwhile
    changed["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "added-later"})
    path.write_text(json.dumps(changed, indent=2))
    result = hooks_cmd("uninstall", "gemini")
    assert result["changed"] and result["restored"] is None and not result["deleted"]
    expected = json.loads(OWN)
    expected["theme"] = "dark"
    expected["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "added-later"})
    left = json.loads(path.read_text())
    assert json.dumps(left) == json.dumps(expected)  # key order kept too
    assert not any(plan.is_ours(h) for g in left["hooks"].values() for x in g for h in x["hooks"])


def test_a_reinstall_in_between_still_gives_the_original_back(home: Path, tmp_path: Path) -> None:
    path = path_of("claude-code", home)
    path.parent.mkdir()
    path.write_bytes(OWN)
    hooks_cmd("install", "claude-code")
    hooks_cmd("install", "claude-code", "--root", str(tmp_path / "other"))  # a second backup, with hooks
    assert len(backups(path)) == 2
    hooks_cmd("uninstall", "claude-code")
    assert path.read_bytes() == OWN


def test_an_emptied_user_hooks_object_is_restored_as_it_was(home: Path) -> None:
    path = path_of("claude-code", home)
    path.parent.mkdir()
    for own in (b'{"hooks": {}}', b"{}", b"", b'{"model":"opus"}\n'):
        path.write_bytes(own)
        hooks_cmd("install", "claude-code")
        hooks_cmd("uninstall", "claude-code")
        assert path.read_bytes() == own


@pytest.mark.parametrize("content", [b'{"hooks": {', b"// mine\n{}", b"[1]", b'{"hooks": []}', b"\xff\xfe{}"])
def test_a_file_habitus_cannot_read_is_refused_and_left_alone(home: Path, content: bytes) -> None:
    path = path_of("claude-code", home)
    path.parent.mkdir()
    path.write_bytes(content)
    done = run(["hooks", "uninstall", "--harness", "claude-code"])
    assert done.exit == 3 and done.error["code"] == "settings_invalid"
    assert path.read_bytes() == content and [p.name for p in path.parent.iterdir()] == ["settings.json"]


def test_a_symlink_is_refused(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "dotfiles.json"
    target.write_text(json.dumps(plan.snippet("claude-code")))
    before = target.read_bytes()
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").symlink_to(target)
    done = run(["hooks", "uninstall", "--harness", "claude-code"])
    assert done.exit == 3 and done.error["code"] == "symlink_refused"
    assert target.read_bytes() == before and (home / ".claude" / "settings.json").is_symlink()


def test_no_file_is_nothing_to_do(home: Path) -> None:
    result = hooks_cmd("uninstall", "gemini")
    assert not result["changed"] and result["removed"] == [] and not path_of("gemini", home).exists()
    assert not (home / ".gemini").exists()


def test_codex_says_what_its_trust_entries_become(home: Path) -> None:
    hooks_cmd("install", "codex")
    path = path_of("codex", home)
    config = home / ".codex" / "config.toml"
    key = f"{path.resolve()}:stop:0:0"
    config.write_text(f'model = "x"\n[hooks.state."{key}"]\ntrusted_hash = "abc"\n')
    before = config.read_bytes()
    result = hooks_cmd("uninstall", "codex")
    trust = result["trust"]
    assert trust["required"] is False and trust["config"] == str(config) and trust["recorded"] == 1
    assert trust["removed"] == len(plan.events("codex")) and "config.toml" in trust["how"]
    assert config.read_bytes() == before  # habitus never edits Codex's trust
    assert "trust" not in hooks_cmd("uninstall", "claude-code")


def test_project_uninstall(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    monkeypatch.chdir(repo)
    hooks_cmd("install", "codex", "--project")
    assert (repo / ".codex" / "hooks.json").exists()
    assert hooks_cmd("uninstall", "codex", "--project")["deleted"]
    assert not (repo / ".codex" / "hooks.json").exists()
    monkeypatch.chdir(tmp_path)
    done = run(["hooks", "uninstall", "--harness", "codex", "--project"])
    assert done.exit == 2 and done.error["code"] == "no_project"


def test_a_file_saved_meanwhile_is_not_overwritten_or_deleted(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(plan.snippet("claude-code")))
    _, before, _ = settings.read(path)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))  # the harness saved it meanwhile
    assert settings._delete(path, before) is False and path.exists()


def test_a_backup_with_an_empty_hooks_object_never_stands_in_for_remaining_hooks(home: Path) -> None:
    path = path_of("claude-code", home)
    path.parent.mkdir()
    path.write_bytes(b'{"hooks": {}}')
    hooks_cmd("install", "claude-code")
    document = json.loads(path.read_text())
    document["hooks"]["Notification"] = [{"hooks": [{"type": "command", "command": "say hi"}]}]
    path.write_text(json.dumps(document))
    hooks_cmd("uninstall", "claude-code")
    assert json.loads(path.read_text()) == {
        "hooks": {"Notification": [{"hooks": [{"type": "command", "command": "say hi"}]}]}
    }
