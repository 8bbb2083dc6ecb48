"""The wheel is complete, and installs the way users install it.

The wheel is built with the real backend (hatchling, offline) and read back: man pages under
share/man/man1, completions where bash-completion, zsh and fish look, the Pi extension inside the
package, the full Apache-2.0 text, and the PyPI metadata. Then it is installed with pipx and with
`uv tool install` into a temporary home, as a user would, and the installed habitus runs: `--version`,
the Pi extension's path, a hooks install and uninstall in that home, and `man habitus` found where each
tool puts it. Those two need the package registry for the dependencies (slow; they skip when it cannot
be reached) and share download caches across runs.
"""

from __future__ import annotations

import email
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import BIN, REPO
from habitus import __version__

COMPLETIONS = {
    "share/bash-completion/completions/habitus": "habitus.bash",
    "share/zsh/site-functions/_habitus": "_habitus",
    "share/fish/vendor_completions.d/habitus.fish": "habitus.fish",
}
NETWORK_TROUBLE = re.compile(
    r"Failed to establish a new connection|Temporary failure in name resolution|Network is unreachable|"
    r"Name or service not known|Connection refused|Read timed out|ConnectTimeout|dns error|"
    r"Failed to fetch|error sending request|No matching distribution found",
    re.IGNORECASE,
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)],
        cwd=REPO,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    (built,) = out.glob("habitus-*.whl")
    return built


def test_the_wheel_carries_man_pages_completions_the_pi_extension_and_the_license(wheel: Path) -> None:
    data = f"habitus-{__version__}.data/data/"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        pages = sorted(p.name for p in (REPO / "man").glob("*.1"))
        assert "habitus.1" in pages and "habitus-hooks.1" in pages
        for page in pages:
            assert archive.read(f"{data}share/man/man1/{page}") == (REPO / "man" / page).read_bytes()
        for target, source in COMPLETIONS.items():
            assert archive.read(data + target) == (REPO / "completions" / source).read_bytes()
        extension = archive.read("habitus/integrations/pi/habitus.ts")
        assert extension == (REPO / "integrations" / "pi" / "habitus.ts").read_bytes()
        license_text = archive.read(f"habitus-{__version__}.dist-info/licenses/LICENSE").decode()
        assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
        assert "END OF TERMS AND CONDITIONS" in license_text and len(license_text) > 10_000  # full text
        assert any(n.startswith("habitus/schemas/") and n.endswith(".json") for n in names)
        assert not [n for n in names if "__pycache__" in n or n.startswith(("tests/", ".venv", "man/"))]
        metadata = email.message_from_bytes(archive.read(f"habitus-{__version__}.dist-info/METADATA"))
        script = archive.read(f"habitus-{__version__}.data/scripts/habitus").decode()
        mode = archive.getinfo(f"habitus-{__version__}.data/scripts/habitus").external_attr >> 16
    assert metadata["Name"] == "habitus" and metadata["Version"] == __version__
    assert metadata["License-Expression"] == "Apache-2.0" and metadata["License-File"] == "LICENSE"
    assert metadata["Author"] or metadata["Author-email"]
    assert metadata["Requires-Python"] == ">=3.11"
    urls = {u.split(",", 1)[0].strip().lower() for u in metadata.get_all("Project-URL") or []}
    assert {"homepage", "documentation", "repository", "issues"} <= urls
    classifiers = metadata.get_all("Classifier") or []
    assert "Environment :: Console" in classifiers and "Programming Language :: Python :: 3.11" in classifiers
    assert all(
        c.startswith(("Development Status", "Environment", "Intended", "Operating", "Programming", "Topic"))
        for c in classifiers
    )
    assert "claude-code" in metadata["Keywords"] and "codex" in metadata["Keywords"]
    assert "Reviewed habits" in metadata["Summary"] and "## Harnesses" in metadata.get_payload()
    # The command is the wheel's own script (installers write the environment's python into `#!python`),
    # not a generated console script, whose wrapper imports `re` before habitus (docs/speed.md).
    assert script.startswith("#!python\n") and mode & 0o111
    assert "from habitus.launcher import main" in script and "import re" not in script


def test_hooks_print_names_the_pi_extension_in_pis_own_format() -> None:
    done = subprocess.run(
        [str(BIN / "habitus"), "hooks", "print", "--harness", "pi"], capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr
    (path,) = json.loads(done.stdout)["extensions"]
    assert Path(path) == REPO / "integrations" / "pi" / "habitus.ts"  # an editable checkout: its own file
    refused = subprocess.run(
        [str(BIN / "habitus"), "hooks", "print", "--harness", "pi", "--root", "/x"], capture_output=True
    )
    assert refused.returncode == 2 and refused.stdout == b""


# -- installed as users install it ------------------------------------------------------------------------


def _cache(name: str) -> Path:
    """A download cache that outlives the test (tests point HOME at a temporary folder)."""
    configured = os.environ.get("HABITUS_E2E_CACHE")
    base = (
        Path(configured) if configured else Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "habitus-e2e"
    )
    folder = base / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _clean_env(home: Path) -> dict[str, str]:
    """This environment (registry settings, certificates) with a fresh home and none of the tools' own
    locations, so each tool uses its defaults under that home."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIPX_", "UV_", "XDG_", "HABITUS_", "VIRTUAL_ENV", "MANPATH", "PYTHON"))
        and k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME")
    }
    env.update(
        HOME=str(home),
        PATH=f"{home / '.local' / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin",
        PIP_CACHE_DIR=str(_cache("pip")),
        UV_CACHE_DIR=str(_cache("uv")),
        HABITUS_HOME=str(home / "state"),
        HABITUS_WORKER="0",
    )
    return env


def _install(argv: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(argv, env=env, capture_output=True, timeout=900, check=False)
    if done.returncode != 0:
        said = (done.stdout + done.stderr).decode("utf-8", "replace")
        if NETWORK_TROUBLE.search(said):
            pytest.skip(f"the package registry is unreachable: {said.strip().splitlines()[-1][:200]}")
        raise AssertionError(said[-4000:])


def _runs(program: Path, env: dict[str, str]) -> None:
    """The installed habitus answers, finds its own Pi extension, and installs and uninstalls hooks."""

    def habitus(*args: str) -> str:
        done = subprocess.run([str(program), *args], env=env, capture_output=True, timeout=120, check=False)
        assert done.returncode == 0, (args, done.stderr.decode())
        return done.stdout.decode()

    assert habitus("--version") == f"habitus {__version__}\n"
    # The wheel's own script, its `#!python` made this environment's interpreter: no `import re` first.
    script = program.read_bytes()
    assert script.startswith(b"#!/") and b"from habitus.launcher import main" in script
    assert b"import re" not in script
    (extension,) = json.loads(habitus("hooks", "print", "--harness", "pi"))["extensions"]
    assert Path(extension).read_bytes() == (REPO / "integrations" / "pi" / "habitus.ts").read_bytes()
    assert REPO not in Path(extension).parents  # the installed package's copy, not this checkout's
    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_bytes(b'{"model": "opus"}')
    habitus("hooks", "install", "--harness", "claude-code")
    assert "habitus hook --root" in settings.read_text()
    habitus("hooks", "uninstall", "--harness", "claude-code")
    assert settings.read_bytes() == b'{"model": "opus"}'


def _man(env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["man", "-w", "habitus"], env=env, capture_output=True, timeout=30, check=False)


@pytest.mark.slow
def test_pipx_installs_the_wheel_with_its_man_pages_and_completions(wheel: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {**_clean_env(home), "PIPX_DEFAULT_BACKEND": "pip"}  # pipx's default where uv is absent
    _install([str(BIN / "pipx"), "install", "--python", sys.executable, str(wheel)], env)
    local = home / ".local"
    _runs(local / "bin" / "habitus", env)
    page = local / "share" / "man" / "man1" / "habitus.1"  # PIPX_MAN_DIR's default
    assert page.is_symlink() and page.read_bytes() == (REPO / "man" / "habitus.1").read_bytes()
    assert (local / "share" / "man" / "man1" / "habitus-hooks.1").exists()
    for target, source in COMPLETIONS.items():  # pipx links these into ~/.local/share as well
        assert (local / target).read_bytes() == (REPO / "completions" / source).read_bytes()
    if shutil.which("man"):  # man-db finds ~/.local/share/man beside ~/.local/bin on PATH
        found = _man(env)
        assert found.returncode == 0 and Path(found.stdout.decode().strip()).resolve() == page.resolve()


@pytest.mark.slow
def test_uv_tool_installs_the_wheel_with_its_man_pages_in_the_tool(wheel: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = _clean_env(home)
    _install([str(BIN / "uv"), "tool", "install", "--python", sys.executable, str(wheel)], env)
    _runs(home / ".local" / "bin" / "habitus", env)
    tool_dir = subprocess.run(
        [str(BIN / "uv"), "tool", "dir"], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    share = Path(tool_dir) / "habitus" / "share"
    assert (share / "man" / "man1" / "habitus.1").read_bytes() == (REPO / "man" / "habitus.1").read_bytes()
    for target, source in COMPLETIONS.items():
        assert (share.parent / target).read_bytes() == (REPO / "completions" / source).read_bytes()
    if shutil.which("man"):
        # uv links executables only; README's MANPATH line makes `man habitus` work
        assert _man(env).returncode != 0
        found = _man({**env, "MANPATH": f"{share / 'man'}:"})
        assert (
            found.returncode == 0
            and Path(found.stdout.decode().strip()) == share / "man" / "man1" / "habitus.1"
        )
