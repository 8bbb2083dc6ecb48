"""habitus installed through each client's own plugin mechanism (not `hooks install`), in the real clients.

The plugins and packages are the committed ones under plugins/ (scripts/gen_plugins.py writes them;
tests/test_plugins.py checks they are fresh). Each client validates and installs them offline from this
checkout, the way a user installs from a clone (the same files a GitHub source brings):

- Claude Code: `claude plugin validate`, then `claude plugin install habitus --marketplace DIR` (adds the
  marketplace of .claude-plugin/marketplace.json and installs the plugin in one command).
- Codex: `codex plugin marketplace add DIR` then `codex plugin add habitus@habitus` (the marketplace of
  .agents/plugins/marketplace.json). Codex has no one-command form: a plugin is installed from a
  marketplace already added. Codex runs a plugin's hooks only once the user has trusted them in its
  hooks review, like any hook; the turn here passes --dangerously-bypass-hook-trust, as the hooks-install
  tests do.
- Gemini CLI: `gemini extensions validate`, then `gemini extensions install DIR --consent` (a copy in
  ~/.gemini/extensions/habitus).
- Pi: `pi install DIR` of the repository itself (package.json at its root is the Pi package, as a
  `pi install git:…` of the repository brings it; a local package is loaded in place).

Then one turn shows what a user cares about: the approved habit's guidance and the memory index reach
the model, exactly as with `hooks install` (tests/e2e/test_clients.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from e2e import clients
from e2e.clients import FACT, HABIT, PROMPT, REPO
from e2e.fake_model import ANSWER, FakeModel
from e2e.test_clients import CLIENTS, usable

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
PLUGINS = REPO / "plugins"


def _run(s: clients.Session, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*s.argv, *args], cwd=s.cwd, env=s.env(), stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=timeout, check=False,
    )  # fmt: skip
    assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-2000:])
    return done


def install_plugin(s: clients.Session) -> str:
    """Validate and install habitus into `s`'s client through the client's own mechanism; its output."""
    if s.name == "claude":
        checked = _run(s, "plugin", "validate", str(PLUGINS / "claude-code")).stdout
        checked += _run(s, "plugin", "validate", str(REPO)).stdout
        assert "Validation passed" in checked, checked
        return _run(s, "plugin", "install", "habitus", "--marketplace", str(REPO)).stdout
    if s.name == "codex":
        _run(s, "plugin", "marketplace", "add", str(REPO))
        added = json.loads(_run(s, "plugin", "add", "habitus@habitus", "--json").stdout)
        assert added["pluginId"] == "habitus@habitus", added
        return json.dumps(added)
    if s.name == "gemini":
        folder = str(PLUGINS / "gemini" / "habitus")
        checked = _run(s, "extensions", "validate", folder)
        assert "successfully validated" in checked.stdout + checked.stderr
        return _run(s, "extensions", "install", folder, "--consent").stdout
    return _run(s, "install", str(REPO)).stdout


def plugin_session(client: str, folder: Path, model: FakeModel) -> clients.Session:
    usable(client)
    s = clients.Session(client, folder, model.url, folder / "state", hooks=False)
    s.extra_env["HABITUS_BIN"] = ""  # Pi's extension then runs the habitus on PATH, as a user's does
    (s.cwd / "notes.txt").write_text("The build is green.\n")
    install_plugin(s)
    return s


def _no_hooks_installed(s: clients.Session) -> None:
    """Nothing of `hooks install` is in the client's settings: the guidance came through the plugin."""
    for path in (
        s.claude_config / "settings.json",
        s.codex_home / "hooks.json",
        s.home / ".gemini" / "settings.json",
    ):
        assert not path.exists() or "--harness" not in path.read_text(), path


@pytest.mark.parametrize("client", CLIENTS)
def test_the_plugin_brings_the_approved_habit_and_the_memory_index(client: str, tmp_path: Path) -> None:
    root = tmp_path / "state"
    clients.prepare(root)
    with FakeModel() as model:
        s = plugin_session(client, tmp_path, model)
        _no_hooks_installed(s)
        if client == "pi":
            # Pi's extension gives each context hook 3 s, which the very first select can miss on a
            # loaded machine (with `-e` as much as with the package); the second prompt is the proof.
            s.run(PROMPT)
            model.reset()
        turn = s.run(PROMPT)
    assert turn.exit == 0, turn.stderr[-2000:]
    assert ANSWER in turn.stdout
    assert model.saw("read notes.txt first")
    assert model.saw(HABIT["behavior"]), "the plugin's hooks injected no approved habit"
    assert model.saw(FACT), "the plugin's hooks injected no memory index"
    time.sleep(0.5)
    assert clients.errors(root) == []


@pytest.mark.parametrize("client", CLIENTS)
def test_the_plugin_with_features_off_sends_nothing(client: str, tmp_path: Path) -> None:
    root = tmp_path / "state"
    clients.prepare(root, capture=False, advise=False, select=False)
    clients.habitus(root, "config", "set", "memory.index_budget", "0")
    with FakeModel() as model:
        turn = plugin_session(client, tmp_path, model).run(PROMPT)
    assert turn.exit == 0, turn.stderr[-2000:]
    assert model.saw("read notes.txt first")
    assert not any(model.saw(text) for text in (HABIT["behavior"], FACT, *clients.MARKERS))
    assert clients.stored(root) == []


# -- review from inside the client ----------------------------------------------------------------------

CANDIDATE = """
import sys
from pathlib import Path
from habitus.habits import lifecycle
from habitus.habits.law import load_law
from habitus.habits.store import Ledger
from habitus.state.root import StateRoot
days = ["2026-11-01", "2026-11-01", "2026-11-02"]
evidence = tuple(lifecycle.Evidence(f"obs-1:{i}:ref", day) for i, day in enumerate(days))
proposal = lifecycle.Proposal(
    "When a test fails", "Read the whole error message before changing code", 1, 8000, evidence, None
)
with Ledger.open(StateRoot(Path(sys.argv[1])), wait=5) as ledger:
    with ledger.tx():
        print(lifecycle.propose_candidate(ledger, proposal, law=load_law(ledger.root))["id"])
"""
# How a user calls the review command in each client (Codex: a plugin's skill, mentioned with $).
REVIEW = {
    "claude": "/habitus:review",
    "codex": "$habitus:review",
    "gemini": "/habitus:review",
    "pi": "/habitus-review",
}
# Where the command runs the read-only listing itself (Claude's !`…`, Gemini's !{…}); elsewhere it tells the
# model to run it, which a scripted model does not do.
LISTS_ITSELF = ("claude", "gemini")
# The user's own Gemini policy that lets !{…} run the listing without asking (-p cannot ask; an
# extension may only deny). Interactively Gemini asks once.
GEMINI_ALLOW = '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "habitus habit list"\ndecision = "allow"\npriority = 100\n'


def add_candidate(root: Path) -> str:
    """A reviewable candidate with its evidence, as analyze records one; its id."""
    done = subprocess.run(
        [sys.executable, "-c", CANDIDATE, str(root)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("client", CLIENTS)
def test_the_review_command_shows_candidates_and_leaves_approval_to_the_human(
    client: str, tmp_path: Path
) -> None:
    root = tmp_path / "state"
    clients.prepare(root)
    # Gemini's -p glues the memory index before the prompt, which is then no longer a slash command.
    clients.habitus(root, "config", "set", "memory.index_budget", "0")
    candidate = add_candidate(root)
    with FakeModel() as model:
        s = plugin_session(client, tmp_path, model)
        if client == "gemini":
            policies = s.home / ".gemini" / "policies"
            policies.mkdir(parents=True)
            (policies / "allow-habitus-list.toml").write_text(GEMINI_ALLOW)
        turn = s.run(REVIEW[client])
    assert turn.exit == 0, turn.stderr[-2000:]
    assert model.saw("Approval is the user's act"), "the review command's text never reached the model"
    assert model.saw("habitus habit approve N") and model.saw("habitus review")
    if client in LISTS_ITSELF:
        assert model.saw(candidate), "the candidate listing never reached the model"
    shown = json.loads(clients.habitus(root, "habit", "show", candidate))["habit"]
    assert shown["status"] == "candidate"
    decided = {a["action"] for a in shown["audit"]} & {"approve", "reject", "enable", "disable", "archive"}
    assert not decided, shown["audit"]


@pytest.mark.parametrize("client", CLIENTS)
def test_the_plugin_without_habitus_installed_never_stops_the_agent(client: str, tmp_path: Path) -> None:
    """A teammate who installed the plugin but not habitus: every hook exits 0 with a one-line note, the
    prompt reaches the model, nothing of habitus does."""
    root = tmp_path / "state"
    clients.prepare(root)
    with FakeModel() as model:
        s = plugin_session(client, tmp_path, model)
        s.extra_env["PATH"] = os.pathsep.join(
            p
            for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
            if p != str(clients.HABITUS.parent)
        )
        assert shutil.which("habitus", path=s.env()["PATH"]) is None
        turn = s.run(PROMPT)
    assert turn.exit == 0, turn.stderr[-2000:]
    assert ANSWER in turn.stdout
    assert model.saw("read notes.txt first"), "the prompt never reached the model"
    assert not any(model.saw(text) for text in (HABIT["behavior"], FACT, *clients.MARKERS))
    assert clients.stored(root) == []


def uninstall_plugin(s: clients.Session) -> None:
    """Each client's own way out: uninstall the plugin and forget the marketplace."""
    if s.name == "claude":
        _run(s, "plugin", "uninstall", "habitus@habitus")
        _run(s, "plugin", "marketplace", "remove", "habitus")
    elif s.name == "codex":
        _run(s, "plugin", "remove", "habitus@habitus")
        _run(s, "plugin", "marketplace", "remove", "habitus")
    elif s.name == "gemini":
        _run(s, "extensions", "uninstall", "habitus")
    else:
        _run(s, "remove", str(REPO))


def _settings(s: clients.Session) -> Path:
    return {
        "claude": s.claude_config / "settings.json",
        "codex": s.codex_home / "config.toml",
        "gemini": s.home / ".gemini" / "settings.json",
        "pi": s.pi_dir / "settings.json",
    }[s.name]


def _without_empty(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_empty(v) for k, v in value.items() if v not in ({}, [])}
    return value


@pytest.mark.parametrize("client", CLIENTS)
def test_uninstalling_the_plugin_leaves_the_settings_as_they_were(client: str, tmp_path: Path) -> None:
    """Codex restores its config.toml byte for byte. Claude Code, Gemini CLI and Pi rewrite their JSON in
    their own layout, and Claude and Pi leave the emptied keys (`enabledPlugins: {}`, `packages: []`):
    the same settings, not the same bytes (the clients' own writes, which a plugin cannot change)."""
    with FakeModel() as model:
        usable(client)
        s = clients.Session(client, tmp_path, model.url, tmp_path / "state", hooks=False)
        settings = _settings(s)
        if client == "gemini":  # current keys only: Gemini migrates deprecated ones on any rewrite
            settings.write_text('{"general": {"enableAutoUpdate": false}, "ui": {"theme": "Default"}}\n')
        elif not settings.exists():
            settings.write_text('{"theme": "dark"}\n')
        before = settings.read_bytes()
        install_plugin(s)
        assert settings.read_bytes() != before or client == "gemini"  # Gemini keeps extensions apart
        uninstall_plugin(s)
    after = settings.read_bytes()
    if client == "codex":
        assert after == before
    else:
        assert _without_empty(json.loads(after)) == _without_empty(json.loads(before))
    if client == "gemini":
        assert not (s.home / ".gemini" / "extensions" / "habitus").exists()


# -- the MCP server the plugins register ----------------------------------------------------------------

MCP_TOOLS = (
    "memory_retrieve",
    "memory_recall",
    "memory_retain",
    "memory_remove",
    "habits_for_request",
    "habits_candidates",
)


def _mcp_available() -> None:
    done = subprocess.run(
        [str(clients.HABITUS), "mcp", "--help"], capture_output=True, timeout=60, check=False
    )
    if done.returncode != 0:
        pytest.skip("habitus mcp is not available here (the command or its optional extra is missing)")


@pytest.mark.parametrize("client", ["claude", "pi"])
def test_the_plugin_registers_habitus_mcp_and_its_tools_reach_the_model(client: str, tmp_path: Path) -> None:
    """Gemini CLI is left out: an extension cannot mark its server trusted, and `-p` offers only the
    tools of trusted servers (interactively Gemini asks before each call). Codex: see below."""
    _mcp_available()
    root = tmp_path / "state"
    clients.prepare(root)
    with FakeModel() as model:
        turn = plugin_session(client, tmp_path, model).run(PROMPT, timeout=240)
    assert turn.exit == 0, turn.stderr[-2000:]
    missing = [name for name in MCP_TOOLS if not model.saw(name)]
    assert missing == [], f"{client} did not offer the model {missing}"
    assert not any(model.saw(word) for word in ("habit_approve", "habits_approve", "approve_habit"))


def test_codex_takes_the_plugins_mcp_server(tmp_path: Path) -> None:
    """Codex 0.171 lists the plugin's server as enabled. Its `exec` against the scripted model offers no
    MCP tool at all, the plugin's or one added with `codex mcp add` alike, so the turn cannot show it."""
    with FakeModel() as model:
        s = plugin_session("codex", tmp_path, model)
        listed = json.loads(_run(s, "mcp", "list", "--json").stdout)
    [habitus] = [server for server in listed if server["name"] == "habitus"]
    assert habitus["enabled"] is True
    assert {k: habitus["transport"][k] for k in ("type", "command", "args")} == {
        "type": "stdio",
        "command": "habitus",
        "args": ["mcp"],
    }


def test_codex_runs_the_plugins_hooks_only_once_trusted(tmp_path: Path) -> None:
    """`codex plugin add` does not trust a plugin's hooks (the CLI writes no trusted hash), and `codex
    exec` skips untrusted hooks without a word: the user trusts them once in `codex` (its hooks review, or
    /hooks), as with `hooks install`. The other tests pass --dangerously-bypass-hook-trust for that."""
    root = tmp_path / "state"
    clients.prepare(root)
    with FakeModel() as model:
        s = plugin_session("codex", tmp_path, model)
        assert "trusted_hash" not in (s.codex_home / "config.toml").read_text()
        command = [word for word in s.command(PROMPT) if word != "--dangerously-bypass-hook-trust"]
        done = subprocess.run(
            command, cwd=s.cwd, env=s.env(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=240, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert model.saw("read notes.txt first")
    assert not any(model.saw(text) for text in (HABIT["behavior"], FACT))
