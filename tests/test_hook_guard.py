"""The installed hook command survives a moved or uninstalled habitus, for every harness: it exits 0 with a
one-line note on stderr, never 127 (Gemini CLI reads 127 on BeforeAgent as "deny" and drops the prompt).

Each harness's commands come from a real `habitus hooks print`, run by a copy of the console script in a
folder of its own, which is then moved away or left without its interpreter, and each command is run
as a real process the way the harness runs it (`sh -c COMMAND`, the event on stdin).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BIN
from pi_helpers import extension_as_commonjs

HARNESSES = ("claude-code", "codex", "gemini")
PROMPT_EVENT = {"hook_event_name": "BeforeAgent", "session_id": "g-1", "prompt": "is it release ready?"}


def copy_of_habitus(folder: Path, *, interpreter: str | None = None) -> Path:
    """A console script in `folder` that runs this checkout's habitus (or names a missing interpreter)."""
    folder.mkdir(parents=True)
    script = folder / "habitus"
    python = interpreter or str(BIN / "python")
    script.write_text(f"#!{python}\nfrom habitus.launcher import main\nmain()\n")
    script.chmod(0o755)
    return script


def printed_commands(program: Path, harness: str, root: Path) -> list[str]:
    done = subprocess.run(
        [str(program), "hooks", "print", "--harness", harness, "--root", str(root)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    snippet = json.loads(done.stdout)
    return [h["command"] for groups in snippet["hooks"].values() for g in groups for h in g["hooks"]]


def fire(command: str, path: str) -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": path, "HOME": os.environ.get("HOME", "/"), "HABITUS_WORKER": "0"}
    return subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(PROMPT_EVENT).encode(),
        capture_output=True,
        timeout=60,
        env=env,
    )


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_moved_habitus_leaves_every_hook_silent_with_exit_0(harness: str, tmp_path: Path) -> None:
    program = copy_of_habitus(tmp_path / "bin")
    commands = printed_commands(program, harness, tmp_path / "state")
    assert commands and all(str(program) in c for c in commands)
    shutil.move(str(tmp_path / "bin"), str(tmp_path / "moved"))
    for command in commands:
        done = fire(command, "/usr/bin:/bin")  # and no habitus on PATH
        assert done.returncode == 0 and done.stdout == b"", (command, done)
        note = done.stderr.decode()
        assert note.count("\n") == 1 and "habitus" in note and "hook skipped" in note


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_moved_habitus_is_found_on_path(harness: str, tmp_path: Path) -> None:
    program = copy_of_habitus(tmp_path / "bin")
    commands = printed_commands(program, harness, tmp_path / "state")
    shutil.move(str(tmp_path / "bin"), str(tmp_path / "moved"))
    for command in commands:
        done = fire(command, f"{tmp_path / 'moved'}:/usr/bin:/bin")
        assert done.returncode == 0 and done.stderr == b"", (command, done)


@pytest.mark.parametrize("harness", HARNESSES)
def test_an_uninstalled_interpreter_exits_0_not_127(harness: str, tmp_path: Path) -> None:
    """The script is still there but its environment was removed: the kernel cannot run it."""
    program = copy_of_habitus(tmp_path / "bin")
    commands = printed_commands(program, harness, tmp_path / "state")
    copy_of_habitus(tmp_path / "gone", interpreter=str(tmp_path / "deleted-venv" / "python"))
    os.replace(tmp_path / "gone" / "habitus", program)
    for command in commands:
        raw = subprocess.run(
            ["sh", "-c", f"{program} select --harness {harness}"], capture_output=True, check=False
        )
        assert raw.returncode in (126, 127)  # what the harness would have seen without the guard
        done = fire(command, "/usr/bin:/bin")
        assert done.returncode == 0 and done.stdout == b"", (command, done)


def test_a_python_m_install_falls_back_to_the_habitus_on_path(tmp_path: Path) -> None:
    from habitus.hooks import command_line

    command = command_line([str(tmp_path / "gone" / "python"), "-m", "habitus"], ("select",), "generic", None)
    done = fire(command, f"{BIN}:/usr/bin:/bin")
    assert done.returncode == 0 and done.stderr == b""
    alone = fire(command, "/usr/bin:/bin")
    assert alone.returncode == 0 and b"hook skipped" in alone.stderr


def test_the_generic_command_form_is_guarded_too(tmp_path: Path) -> None:
    from habitus.hooks import command_line

    for args in (("select",), ("capture",), ("advise",), ("memory", "index")):
        done = fire(
            command_line([str(tmp_path / "nowhere" / "habitus")], args, "generic", None), "/usr/bin:/bin"
        )
        assert done.returncode == 0 and done.stdout == b"" and b"hook skipped" in done.stderr


def test_reinstalling_writes_the_same_command_and_recognises_the_old_one(tmp_path: Path) -> None:
    from habitus.hooks import command_line, is_ours

    first = command_line(["/opt/habitus/bin/habitus"], ("select",), "codex", "/home/me/state")
    assert first == command_line(["/opt/habitus/bin/habitus"], ("select",), "codex", "/home/me/state")
    assert is_ours({"command": first})
    assert is_ours(
        {"command": "/opt/habitus/bin/habitus select --root /x --harness codex"}
    )  # before the guard
    assert not is_ours({"command": "sh -c 'echo hi' /usr/bin/other select --harness codex"})


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_pi_extension_goes_on_without_habitus(tmp_path: Path) -> None:
    (tmp_path / "ext.js").write_text(extension_as_commonjs("habitus.ts", "habitusExtension"))
    driver = """
const ext = require(process.argv[2]);
const handlers = {};
ext({ on: (name, fn) => { handlers[name] = fn; } });
const ctx = { cwd: process.argv[3], sessionManager: { getSessionId: () => "p", getSessionFile: () => undefined } };
(async () => {
  const reply = await handlers.before_agent_start({ type: "before_agent_start", prompt: "hi", systemPrompt: "S" }, ctx);
  await handlers.agent_end({ type: "agent_end", messages: [] }, ctx);
  process.stdout.write(JSON.stringify(reply === undefined ? null : reply) + "\\n");
})();
"""
    (tmp_path / "drive.js").write_text(driver)
    env = {**os.environ, "HABITUS_BIN": str(tmp_path / "missing" / "habitus")}
    done = subprocess.run(
        ["node", str(tmp_path / "drive.js"), str(tmp_path / "ext.js"), str(tmp_path)],
        capture_output=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    reply = json.loads(done.stdout.splitlines()[0])
    assert reply is None or reply.get("systemPrompt") in (None, "S")
