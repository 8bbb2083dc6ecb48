"""The plugins and packages under plugins/ are generated from habitus's own hook plan and must not be stale.

tests/e2e/test_plugins.py installs them into the real clients; these checks need no client.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from conftest import REPO
from habitus.hooks import PLAN, is_ours, snippet

HOOKS = {
    "claude-code": "plugins/claude-code/hooks/hooks.json",
    "codex": "plugins/codex/hooks/hooks.json",
    "gemini": "plugins/gemini/habitus/hooks/hooks.json",
}


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_plugins", REPO / "scripts" / "gen_plugins.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_plugins"] = module
    spec.loader.exec_module(module)
    return module


def read(path: str) -> str:
    return (REPO / path).read_text()


def test_the_committed_plugins_are_fresh() -> None:
    assert generator().stale_files() == [], "run: .venv/bin/python scripts/gen_plugins.py"


def test_a_changed_or_extra_file_counts_as_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gen = generator()
    for folder in gen.FOLDERS:
        shutil.copytree(REPO / folder, tmp_path / folder)
    shutil.copy(REPO / "package.json", tmp_path / "package.json")
    monkeypatch.setattr(gen, "REPO", tmp_path)
    assert gen.stale_files() == []
    hooks = tmp_path / HOOKS["codex"]
    hooks.write_text(hooks.read_text().replace("--harness codex", "--harness claude-code", 1))
    (tmp_path / "plugins" / "claude-code" / "commands" / "approve.md").write_text("approve everything\n")
    assert gen.stale_files() == [
        HOOKS["codex"],
        "plugins/claude-code/commands/approve.md (no longer generated)",
    ]
    assert gen.main([]) == 0
    assert gen.stale_files() == []
    assert not (tmp_path / "plugins" / "claude-code" / "commands" / "approve.md").exists()


@pytest.mark.parametrize("harness", sorted(HOOKS))
def test_each_plugin_carries_the_hooks_that_hooks_install_writes(harness: str) -> None:
    """Same events, same habitus commands, same timeouts, in the same order: only the program differs
    (the plugin names `habitus`, found on PATH; hooks install names this machine's path)."""
    committed = json.loads(read(HOOKS[harness]))["hooks"]
    installed = snippet(harness, program="/opt/somewhere/bin/habitus")["hooks"]
    assert list(committed) == list(installed) == list(dict.fromkeys(event for event, _ in PLAN[harness]))
    for event in installed:
        ours = [h for group in committed[event] for h in group["hooks"]]
        theirs = [h for group in installed[event] for h in group["hooks"]]
        assert len(ours) == len(theirs)
        for mine, reference in zip(ours, theirs, strict=True):
            assert mine == {**reference, "command": mine["command"]}
            assert mine["command"] == reference["command"].replace("/opt/somewhere/bin/habitus", "habitus")
            assert is_ours(mine)  # so hooks install/uninstall recognise them as habitus's own


def test_no_generated_file_names_a_path_of_this_machine() -> None:
    for path, text in generator().render_all().items():
        for machine in (str(REPO), "/root", "/home/", "/tmp/", ".venv", sys.executable):
            assert machine not in text, (path, machine)


def test_the_marketplaces_point_at_the_plugins() -> None:
    claude = json.loads(read(".claude-plugin/marketplace.json"))
    [entry] = claude["plugins"]
    assert (
        entry["name"] == "habitus" and (REPO / entry["source"] / ".claude-plugin" / "plugin.json").is_file()
    )
    codex = json.loads(read(".agents/plugins/marketplace.json"))
    [entry] = codex["plugins"]
    assert entry["source"]["source"] == "local"
    assert (REPO / entry["source"]["path"] / ".codex-plugin" / "plugin.json").is_file()
    manifest = json.loads(read("plugins/codex/.codex-plugin/plugin.json"))
    for field in ("hooks", "mcpServers", "skills"):
        assert manifest[field].startswith("./") and (REPO / "plugins" / "codex" / manifest[field]).exists()


def test_every_client_registers_habitus_mcp() -> None:
    server = {"command": "habitus", "args": ["mcp"]}
    assert json.loads(read("plugins/claude-code/.mcp.json"))["mcpServers"]["habitus"] == server
    assert json.loads(read("plugins/codex/.mcp.json"))["mcpServers"]["habitus"] == server
    assert json.loads(read("plugins/gemini/habitus/gemini-extension.json"))["mcpServers"]["habitus"] == server
    assert 'registerMcpServer("habitus", { command: "habitus", args: ["mcp"], exposure: "direct" })' in read(
        "plugins/pi/extensions/habitus-mcp.ts"
    )


def test_the_repository_is_the_pi_package_and_carries_the_extension() -> None:
    package = json.loads(read("package.json"))
    assert "pi-package" in package["keywords"]
    assert package["pi"]["extensions"][0] == "./integrations/pi/habitus.ts"
    for extension in package["pi"]["extensions"]:
        assert (REPO / extension).is_file()
        assert any(extension.removeprefix("./").startswith(f) for f in package["files"])  # what npm packs
    [prompts] = package["pi"]["prompts"]
    assert [p.name for p in REPO.glob(prompts.removeprefix("./"))] == ["habitus-review.md"]


REVIEW_FILES = {
    "claude-code": "plugins/claude-code/commands/review.md",
    "codex": "plugins/codex/skills/review/SKILL.md",
    "gemini": "plugins/gemini/habitus/commands/habitus/review.toml",
    "pi": "plugins/pi/prompts/habitus-review.md",
}


@pytest.mark.parametrize("client", sorted(REVIEW_FILES))
def test_a_review_command_only_shows_and_leaves_every_decision_to_the_human(client: str) -> None:
    text = read(REVIEW_FILES[client])
    if client == "gemini":
        text = tomllib.loads(text)["prompt"]
    # What the command runs by itself (Claude's !`…`, Gemini's !{…}) is the read-only listing, nothing else.
    ran = re.findall(r"!`([^`]*)`", text) + re.findall(r"!\{([^}]*)\}", text)
    assert ran in ([], ["habitus habit list --status candidate --json"]), ran
    assert ran or client in ("codex", "pi")
    assert "habitus habit approve N" in text and "habitus review" in text
    assert "Approval is the user's act, never yours" in text
    if client == "claude-code":
        [tools] = re.findall(r"^allowed-tools: (.*)$", text, re.M)
        assert tools == "Bash(habitus habit list:*), Bash(habitus habit show:*)"


def test_gemini_denies_the_model_every_review_decision() -> None:
    rules = tomllib.loads(read("plugins/gemini/habitus/policies/habitus.toml"))["rule"]
    denied = {
        r["commandPrefix"] for r in rules if r["decision"] == "deny" and r["toolName"] == "run_shell_command"
    }
    assert denied == {f"habitus habit {verb}" for verb in ("approve", "reject", "enable", "declare")}
    assert all(r["decision"] == "deny" for r in rules)  # an extension's allow would be ignored anyway
