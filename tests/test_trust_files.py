"""State files are what they should be, and the state root is nobody else's.

Real processes with a timeout: a FIFO that hung a command would fail the test by timing out, not hang
the suite. Every refusal leaves the outside file untouched and answers its own error code.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import orjson
import pytest

from conftest import run, run_process


def _seed(state_root: Path) -> None:
    assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    assert run(["memory", "retain", "the staging host is kestrel"]).exit == 0


@pytest.mark.parametrize("name", ["config.toml", "law.md", "locks/state.lock", "errors.jsonl"])
def test_a_fifo_in_the_root_is_refused_without_hanging(state_root: Path, name: str) -> None:
    _seed(state_root)
    target = state_root / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    os.mkfifo(target, 0o600)
    out = run_process(["status"], timeout=20)
    if name in ("errors.jsonl", "law.md"):
        assert out.exit in (0, 3)  # status does not need these; a FIFO there must not hang it
    else:
        assert out.exit == 3 and out.error["code"] == "special_file_refused", out.stderr
    report = run_process(["verify"], timeout=20)
    if name == "locks/state.lock":  # verify takes the state lock too: a clear refusal
        assert report.exit == 3 and report.error["code"] == "special_file_refused"
        return
    assert report.exit == 1
    assert any(i["code"] == "special_file" for i in orjson.loads(report.stdout)["issues"])
    hook = run_process(
        ["select", "--harness", "claude-code"],
        {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "hi", "cwd": "/"},
        timeout=20,
    )
    assert hook.exit == 0 and hook.stdout == b""


@pytest.mark.parametrize("name", ["memory.sqlite", "memory.sqlite-wal", "config.toml", "errors.jsonl"])
def test_a_hard_link_is_refused_and_the_outside_file_is_unchanged(
    state_root: Path, tmp_path: Path, name: str
) -> None:
    _seed(state_root)
    outside = tmp_path / "outside"
    outside.write_bytes(b"not yours\n")
    target = state_root / name
    target.unlink(missing_ok=True)
    os.link(outside, target)
    before = outside.read_bytes()
    if name == "errors.jsonl":
        # the hook-mode logger must not write through it either
        out = run_process(
            ["capture", "--harness", "claude-code"], {"hook_event_name": "Stop", "session_id": [1]}
        )
        assert out.exit == 0
    else:
        writer = ["config", "set", "capture.retention_days", "30"] if name == "config.toml" else None
        out = run_process(writer or ["memory", "retain", "a second fact"])
        assert out.exit == 3 and out.error["code"] == "hard_link_refused", out.stderr
    assert outside.read_bytes() == before
    report = run_process(["verify"])
    assert report.exit == 1
    assert any(i["code"] == "hard_link" for i in orjson.loads(report.stdout)["issues"])


def test_a_folder_where_the_ledger_belongs_is_a_clear_refusal(state_root: Path) -> None:
    _seed(state_root)
    (state_root / "ledger.sqlite").mkdir()
    out = run_process(["habit", "list"])
    assert out.exit == 3 and out.error["code"] == "special_file_refused"


def test_a_root_owned_by_another_user_is_refused_and_its_config_never_read(
    state_root: Path, tmp_path: Path
) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to give the folder away")
    _seed(state_root)
    marker = tmp_path / "ran"
    (state_root / "config.toml").write_text(
        f'[models.evil]\nkind = "command"\ncommand = ["sh", "-c", "touch {marker}"]\n'
        '[analyze]\nmodel = "evil"\n'
    )
    os.chown(state_root, 65534, 65534)
    for args in (["status"], ["analyze"], ["config", "get", "capture.enabled"]):
        out = run_process(args)
        assert out.exit == 3 and out.error["code"] == "root_unsafe", (args, out.stderr)
    assert not marker.exists()


def test_a_world_writable_root_is_refused(state_root: Path) -> None:
    _seed(state_root)
    os.chmod(state_root, 0o777)
    out = run_process(["memory", "retrieve", "kestrel"])
    assert out.exit == 3 and out.error["code"] == "root_unsafe"
    assert stat.S_IMODE(os.stat(state_root).st_mode) == 0o777  # refused, not silently changed
    hook = run_process(
        ["select", "--harness", "claude-code"],
        {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "hi", "cwd": "/"},
    )
    assert hook.exit == 0 and hook.stdout == b"" and hook.stderr == b""
    assert not (state_root / "errors.jsonl").exists()  # nothing written into a root others control


def test_a_world_writable_folder_above_the_root_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "open"
    shared.mkdir()
    os.chmod(shared, 0o777)
    out = run_process(["status"], env={"HABITUS_HOME": str(shared / "state")})
    assert out.exit == 3 and out.error["code"] == "root_unsafe"
    os.chmod(shared, 0o1777)  # sticky, like /tmp: others cannot replace what is ours
    assert run_process(["status"], env={"HABITUS_HOME": str(shared / "state")}).exit == 0


@pytest.mark.parametrize("command", ["config-get", "transcript", "export-out"])
def test_a_non_utf8_argument_is_a_bad_request_and_writes_nothing(
    state_root: Path, tmp_path: Path, command: str
) -> None:
    bad = os.fsdecode(os.fsencode(str(tmp_path)) + b"/x\xff.jsonl")  # surrogates: the raw bytes in argv
    args = {
        "config-get": ["config", "get", os.fsdecode(b"capture.\xff")],
        "transcript": ["capture", "--transcript", bad],
        "export-out": ["memory", "export", "--out", bad],
    }[command]
    out = run_process(args)  # subprocess passes the surrogates on as the raw bytes
    assert out.exit == 2 and out.error["code"] == "bad_request", out.stderr
    assert b"Traceback" not in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state"] or not (tmp_path / "state").exists()
    assert not any(p.name.startswith("x") for p in tmp_path.iterdir())


@pytest.mark.parametrize(
    "args",
    [
        ["capture", "--harness", "claude-code"],
        ["memory", "observe", "--harness", "claude-code"],
        ["select", "--harness", "claude-code"],
        ["advise", "--harness", "claude-code"],
    ],
    ids=lambda a: a[0] if a[0] != "memory" else "memory-observe",
)
def test_a_fifo_transcript_never_hangs_a_hook(state_root: Path, tmp_path: Path, args: list[str]) -> None:
    _seed(state_root)
    assert run(["config", "set", "memory.observe.enabled", "true"]).exit in (0, 2)
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo, 0o600)
    event = "UserPromptSubmit" if args[0] == "select" else "Stop"
    out = run_process(
        args,
        {
            "hook_event_name": event,
            "session_id": "s",
            "prompt": "hi",
            "cwd": str(tmp_path),
            "transcript_path": str(fifo),
        },
        timeout=20,
    )
    assert out.exit == 0 and out.stderr == b""


def test_verify_does_not_call_a_live_restores_staging_a_leftover(state_root: Path) -> None:
    import fasteners

    _seed(state_root)
    stage = state_root / ".restore" / "stage-0123456789abcdef"
    stage.mkdir(parents=True, mode=0o700)
    (state_root / ".restore").chmod(0o700)
    from habitus.state import files

    files.ensure_dir(state_root / "locks")
    files.create_private(state_root / "locks" / "restore.lock")
    lock = fasteners.InterProcessLock(str(state_root / "locks" / "restore.lock"))
    assert lock.acquire(blocking=False)  # a restore staging right now (held by this process)
    try:
        report = run_process(["verify"])
        assert report.exit == 0, report.stdout
        assert run_process(["memory", "retain", "a write while it stages"]).exit == 0
        assert stage.is_dir()  # a live restore's staging is left alone
    finally:
        lock.release()
    assert run_process(["verify"]).exit == 1  # report-only: it says what is left, removes nothing
    assert stage.is_dir()
    assert run_process(["status"]).exit == 0
    assert not stage.exists()  # once no restore holds it, the next command removes it
