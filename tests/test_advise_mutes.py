"""Mutes: prefixes resolved fail-closed, atomic user data shared across processes, a broken file fails closed."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from advise_helpers import CLAIM, RELEASE, Transcript, declare, enable, pair, review
from conftest import BIN, run, run_process
from habitus.advise import mutes, store
from habitus.advise.notes import finding_hash
from habitus.state.root import StateRoot


def delivered_finding(state_root: Path, session: str = "s1") -> dict[str, str]:
    note = review(pair(CLAIM, session=session))["note"]
    assert note is not None
    return note


def test_mute_resolves_a_prefix_and_the_finding_never_comes_back(state_root: Path) -> None:
    enable(state_root)
    declare(**RELEASE)
    note = delivered_finding(state_root)
    assert run(["advise", "mutes"]).result == {"v": 1, "items": [], "count": 0}
    muted = run(["advise", "mute", note["id"][:6].upper()])
    assert muted.result == {"v": 1, "id": note["id"], "finding": note["finding"], "label": note["findingKey"],
                            "changed": True}  # fmt: skip
    listed = run(["advise", "mutes"]).result
    assert listed["count"] == 1 and listed["items"][0]["finding"] == note["finding"]
    assert run(["advise", "mute", note["id"]]).result["changed"] is False  # idempotent
    for session in ("s1", "new-session"):
        again = review(pair(CLAIM, session=session))
        assert again["note"] is None and again["candidates"][0]["decision"] == "muted"
    assert run(["advise", "unmute", note["id"]]).result["changed"] is True
    assert review(pair(CLAIM, session="third"))["note"] is not None
    assert run(["status"]).result["advise"]["notes"]["muted"] == 2


@pytest.mark.parametrize(
    ("prefix", "code", "exit"), [("abc12", "usage", 2), ("xyz123", "usage", 2), ("0" * 65, "usage", 2)]
)
def test_bad_prefixes_are_usage_errors(state_root: Path, prefix: str, code: str, exit: int) -> None:
    done = run(["advise", "mute", prefix])
    assert (done.exit, done.error["code"]) == (exit, code)
    assert not (state_root / "mutes.json").exists()


def test_an_unknown_prefix_changes_nothing(state_root: Path) -> None:
    enable(state_root)
    declare(**RELEASE)
    note = delivered_finding(state_root)
    other = "0" * 8 if not note["finding"].startswith("0") else "f" * 8
    done = run(["advise", "mute", other])
    assert done.exit == 1 and done.error["code"] == "not_found"
    assert run(["advise", "unmute", note["id"]]).error["code"] == "not_found"  # not muted
    assert not (state_root / "mutes.json").exists()


def colliding_keys() -> tuple[str, str]:
    seen: dict[str, str] = {}
    for n in range(200_000):
        key = f"finding {n}"
        prefix = finding_hash(key)[:6]
        if prefix in seen:
            return seen[prefix], key
        seen[prefix] = key
    raise AssertionError("no collision")


def test_an_ambiguous_prefix_lists_the_candidates_and_changes_nothing(state_root: Path) -> None:
    first, second = colliding_keys()
    root = StateRoot(state_root)
    with store.writing(root, wait=5) as conn:
        for key in (first, second):
            store.record_finding(conn, scope="s", finding=finding_hash(key), label=key, reviewer="model",
                                 severity="concern", signature="0" * 16, turn=1, action="deliver")  # fmt: skip
    prefix = finding_hash(first)[:6]
    done = run(["advise", "mute", prefix])
    assert done.exit == 2 and done.error["code"] == "ambiguous"
    candidates = done.error["candidates"]
    assert sorted(c["label"] for c in candidates) == sorted([first, second])
    assert all(len(c["id"]) >= 8 and c["id"].startswith(prefix) for c in candidates)
    assert len({c["id"] for c in candidates}) == 2
    assert not (state_root / "mutes.json").exists()
    longer = candidates[0]["id"]
    assert run(["advise", "mute", longer]).result["changed"] is True


def test_mutes_hold_across_processes_and_concurrent_writers_lose_nothing(state_root: Path) -> None:
    root = StateRoot(state_root)
    keys = [f"problem number {n}" for n in range(6)]
    with store.writing(root, wait=5) as conn:
        for key in keys:
            store.record_finding(conn, scope="s", finding=finding_hash(key), label=key, reviewer="model",
                                 severity="concern", signature="0" * 16, turn=1, action="deliver")  # fmt: skip
    procs = [
        subprocess.Popen(
            [str(BIN / "habitus"), "advise", "mute", finding_hash(k)[:12], "--wait", "60"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=os.environ.copy(),
        )
        for k in keys
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    listed = run_process(["advise", "mutes"]).result
    assert sorted(i["label"] for i in listed["items"]) == sorted(keys)
    mode = stat.S_IMODE(os.stat(state_root / "mutes.json").st_mode)
    assert mode == 0o600


def test_a_mute_from_another_process_applies_to_the_next_review(state_root: Path) -> None:
    enable(state_root)
    declare(**RELEASE)
    note = delivered_finding(state_root)
    assert run_process(["advise", "mute", note["id"]]).exit == 0
    again = run_process(["advise"], pair(CLAIM, session="later"))
    assert again.exit == 0 and again.result["note"] is None
    assert again.result["candidates"][0]["decision"] == "muted"


def test_a_concurrent_outside_edit_is_merged_not_clobbered(
    state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = StateRoot(state_root)
    root.ensure()
    outside = {"id": "a" * 64, "label": "edited by hand", "at": ""}
    real_load = mutes.load
    calls = {"n": 0}

    def racing_load(r: StateRoot) -> mutes.Mutes:
        calls["n"] += 1
        if calls["n"] == 2:  # between our read and our write, someone else writes the file
            (state_root / "mutes.json").write_text(json.dumps({"version": 1, "mutes": [outside]}))
        return real_load(r)

    monkeypatch.setattr(mutes, "load", racing_load)
    assert mutes.change(root, "b" * 64, label="ours", wait=5) is True
    saved = json.loads((state_root / "mutes.json").read_text())["mutes"]
    assert [m["id"] for m in saved] == ["a" * 64, "b" * 64]


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b'{"version": 2, "mutes": []}',
        b'{"version": 1, "mutes": [{"id": "zz"}]}',
        b"[]",
        b"\xff",
    ],
)
def test_a_broken_mutes_file_stops_every_delivery_and_is_never_overwritten(
    state_root: Path, content: bytes
) -> None:
    enable(state_root)
    declare(**RELEASE)
    note = delivered_finding(state_root)
    (state_root / "mutes.json").write_bytes(content)
    done = run(["advise"], pair(CLAIM, session="s9"))
    assert done.exit == 3 and done.error["code"] == "state_corrupt" and done.stdout == b""
    assert "mutes.json" in done.error["message"]
    for args in (["advise", "mute", note["id"]], ["advise", "mutes"], ["advise", "unmute", note["id"]]):
        assert run(args).error["code"] == "state_corrupt"
    hook = run(["advise", "--harness", "claude-code"], {"hook_event_name": "Stop", "session_id": "h",
                                                       "last_assistant_message": CLAIM})  # fmt: skip
    assert hook.exit == 0 and hook.stdout == b""
    assert (state_root / "mutes.json").read_bytes() == content
    assert run(["status"]).result["advise"]["mutes"]["ok"] is False


def test_a_note_waiting_for_a_prompt_is_held_while_the_mutes_file_is_broken(state_root: Path) -> None:
    enable(state_root)
    declare(**RELEASE)
    event = {"hook_event_name": "Stop", "session_id": "w", "last_assistant_message": CLAIM}
    assert run(["advise", "--harness", "claude-code"], event).stdout == b""
    (state_root / "mutes.json").write_bytes(b"garbage")
    prompt = {"hook_event_name": "UserPromptSubmit", "session_id": "w", "prompt": "next"}
    assert run(["advise", "--harness", "claude-code"], prompt).stdout == b""
    (state_root / "mutes.json").unlink()
    reply = json.loads(run(["advise", "--harness", "claude-code"], prompt).stdout)
    assert "Approved habit" in reply["hookSpecificOutput"]["additionalContext"]


def test_a_symlinked_mutes_file_is_refused(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    target = tmp_path / "elsewhere.json"
    target.write_text('{"version": 1, "mutes": []}')
    state_root.mkdir(parents=True, exist_ok=True)
    (state_root / "mutes.json").symlink_to(target)
    assert run(["advise"], pair("x")).error["code"] == "state_corrupt"


def test_mutes_survive_a_new_ledger(tmp_path: Path, state_root: Path) -> None:
    """Mutes are user data outside the ledger: losing or replacing the ledger keeps them."""
    enable(state_root)
    t = Transcript(tmp_path / "s.jsonl").prompt("tidy up")
    t.tool("Bash", {"command": "git reset --hard HEAD~3"}).say("Tidied.")
    note = review({}, "--transcript", str(t.path))["note"]
    assert note["findingKey"] == "law:reset_hard"
    assert run(["advise", "mute", note["id"]]).exit == 0
    for suffix in ("", "-wal", "-shm"):
        (state_root / f"ledger.sqlite{suffix}").unlink(missing_ok=True)
    again = review({}, "--transcript", str(t.path))
    assert again["note"] is None and again["candidates"][0]["decision"] == "muted"


def test_check_file_validates_backups() -> None:
    mutes.check_file(b'{"version": 1, "mutes": []}', "mutes.json")
    with pytest.raises(Exception) as caught:
        mutes.check_file(b'{"version": 1, "mutes": [{"id": "x"}]}', "mutes.json")
    assert getattr(caught.value, "code", None) == "state_corrupt"
