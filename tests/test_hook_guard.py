"""The installed hook command runs the habitus on PATH, wherever it was installed, and survives a missing
or broken one, for every harness: it exits 0 with a one-line note on stderr, never 127 (Gemini CLI reads
127 on BeforeAgent as "deny" and drops the prompt).

Each harness's commands come from a real `habitus hooks print`, run by a copy of the console script in a
folder of its own, which is then moved away or left without its interpreter, and each command is run
as a real process the way the harness runs it (`sh -c COMMAND`, the event on stdin, a chosen PATH).
"""

from __future__ import annotations

import json
import os
import shlex
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


def printed_commands(program: Path, harness: str, root: Path, *extra: str) -> list[str]:
    done = subprocess.run(
        [str(program), "hooks", "print", "--harness", harness, "--root", str(root), *extra],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    snippet = json.loads(done.stdout)
    return [h["command"] for groups in snippet["hooks"].values() for g in groups for h in g["hooks"]]


def fire(command: str, path: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": path, "HOME": os.environ.get("HOME", "/"), "HABITUS_WORKER": "0", **env}
    return subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(PROMPT_EVENT).encode(),
        capture_output=True,
        timeout=60,
        env=env,
    )


def skipped(done: subprocess.CompletedProcess[bytes]) -> bool:
    """Exit 0, nothing on stdout, and the one-line note that says habitus is missing and how to get it."""
    note = done.stderr.decode()
    return (
        done.returncode == 0
        and done.stdout == b""
        and note.count("\n") == 1
        and "habitus is not installed" in note
        and "pipx install habitus" in note
    )


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_commands_name_no_path_of_this_machine(harness: str, tmp_path: Path) -> None:
    program = copy_of_habitus(tmp_path / "bin")
    commands = printed_commands(program, harness, tmp_path / "state")
    assert commands and not any(str(tmp_path / "bin") in c or str(BIN) in c for c in commands)
    assert all(shlex.split(c)[3] == "habitus" for c in commands)


@pytest.mark.parametrize("harness", HARNESSES)
def test_without_habitus_on_path_every_hook_is_silent_with_exit_0(harness: str, tmp_path: Path) -> None:
    program = copy_of_habitus(tmp_path / "bin")
    for command in printed_commands(program, harness, tmp_path / "state"):
        assert skipped(fire(command, "/usr/bin:/bin")), command
        # a HABITUS_BIN that names nothing, and one that is not executable, are skipped the same way
        assert skipped(fire(command, "/usr/bin:/bin", HABITUS_BIN=str(tmp_path / "gone" / "habitus")))
        assert skipped(fire(command, "/usr/bin:/bin", HABITUS_BIN=str(tmp_path / "state")))


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_habitus_on_path_runs_wherever_it_was_installed(harness: str, tmp_path: Path) -> None:
    program = copy_of_habitus(tmp_path / "bin")
    commands = printed_commands(program, harness, tmp_path / "state")
    shutil.move(str(tmp_path / "bin"), str(tmp_path / "moved"))  # the install moved after `hooks print`
    for command in commands:
        done = fire(command, f"{tmp_path / 'moved'}:/usr/bin:/bin")
        assert done.returncode == 0 and done.stderr == b"", (command, done)
        assert done.stdout == b"" or json.loads(done.stdout)


def test_habitus_bin_overrides_path(tmp_path: Path) -> None:
    """A checkout that is not on PATH: HABITUS_BIN names it, and it is what runs."""
    spy = tmp_path / "spy" / "habitus"
    spy.parent.mkdir()
    spy.write_text(f'#!/bin/sh\necho "$@" > {tmp_path / "ran"}\n')
    spy.chmod(0o755)
    command = printed_commands(BIN / "habitus", "claude-code", tmp_path / "s")[0]
    done = fire(command, f"{BIN}:/usr/bin:/bin", HABITUS_BIN=str(spy))
    assert done.returncode == 0 and done.stderr == b""
    assert (tmp_path / "ran").read_text() == f"hook --root {tmp_path / 's'} --harness claude-code\n"


def test_habitus_no_hooks_starts_no_program(tmp_path: Path) -> None:
    spy = tmp_path / "spy" / "habitus"
    spy.parent.mkdir()
    spy.write_text(f"#!/bin/sh\ntouch {tmp_path / 'ran'}\n")
    spy.chmod(0o755)
    for command in printed_commands(BIN / "habitus", "gemini", tmp_path / "s"):
        done = fire(command, f"{spy.parent}:/usr/bin:/bin", HABITUS_NO_HOOKS="1")
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert not (tmp_path / "ran").exists()
    done = fire(command, f"{spy.parent}:/usr/bin:/bin", HABITUS_NO_HOOKS="")
    assert done.returncode == 0 and (tmp_path / "ran").exists()  # empty means unset, as in the launcher


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_pinned_program_that_moved_falls_back_to_path(harness: str, tmp_path: Path) -> None:
    program = copy_of_habitus(tmp_path / "bin")
    commands = printed_commands(program, harness, tmp_path / "state", "--program", str(program))
    assert all(shlex.split(c)[3] == str(program) for c in commands)
    shutil.move(str(tmp_path / "bin"), str(tmp_path / "moved"))
    for command in commands:
        assert skipped(fire(command, "/usr/bin:/bin")), command
        done = fire(command, f"{tmp_path / 'moved'}:/usr/bin:/bin")
        assert done.returncode == 0 and done.stderr == b"", (command, done)


@pytest.mark.parametrize("harness", HARNESSES)
def test_an_uninstalled_interpreter_exits_0_not_127(harness: str, tmp_path: Path) -> None:
    """The script is still on PATH but its environment was removed: the kernel cannot run it."""
    program = copy_of_habitus(tmp_path / "bin")
    commands = printed_commands(program, harness, tmp_path / "state")
    copy_of_habitus(tmp_path / "gone", interpreter=str(tmp_path / "deleted-venv" / "python"))
    os.replace(tmp_path / "gone" / "habitus", program)
    for command in commands:
        raw = subprocess.run(
            ["sh", "-c", f"{program} select --harness {harness}"], capture_output=True, check=False
        )
        assert raw.returncode in (126, 127)  # what the harness would have seen without the guard
        done = fire(command, f"{tmp_path / 'bin'}:/usr/bin:/bin")
        assert done.returncode == 0 and done.stdout == b"", (command, done)


def test_a_program_not_named_habitus_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(BIN / "habitus"), "hooks", "print", "--harness", "codex", "--program", str(tmp_path / "hb")],
        capture_output=True,
        check=False,
    )
    assert done.returncode == 2 and b"must be habitus" in done.stderr and done.stdout == b""


def test_the_generic_command_form_is_guarded_too(tmp_path: Path) -> None:
    from habitus.harness.plan import command_line

    for args in (("select",), ("capture",), ("advise",), ("memory", "index")):
        assert skipped(fire(command_line(args, "generic"), "/usr/bin:/bin"))
        pinned = command_line(args, "generic", None, str(tmp_path / "nowhere" / "habitus"))
        assert skipped(fire(pinned, "/usr/bin:/bin"))


def test_reinstalling_writes_the_same_command_and_recognises_the_old_ones(tmp_path: Path) -> None:
    from habitus.harness.plan import command_line, is_ours

    first = command_line(("select",), "codex", "/home/me/state")
    assert first == command_line(("select",), "codex", "/home/me/state") and is_ours({"command": first})
    assert is_ours({"command": command_line(("select",), "codex", None, "/opt/habitus/bin/habitus")})
    assert is_ours(
        {"command": "/opt/habitus/bin/habitus select --root /x --harness codex"}
    )  # before the guard
    previous_guard = (  # what earlier versions wrote: still recognised, so a re-install replaces it
        'sh -c \'p="$0";[ -x "$p" ]||{ p=$(command -v habitus)||{ echo "habitus: $0 is missing; hook'
        ' skipped" >&2;exit 0;};[ "$1" = -m ]&&shift 2;};"$p" "$@";s=$?;[ $s -lt 126 ]||s=0;exit $s\''
        " /home/me/.local/bin/habitus select --harness codex"
    )
    assert is_ours({"command": previous_guard})
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
