"""A project store reaches the agent only when this user trusts it (created here, or `memory trust`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson

import memory_helpers
from memory_helpers import mem, retain

repo = memory_helpers.repo  # fixtures
outside_any_repo = memory_helpers.outside_any_repo

PLANTED = "Deploys go through the release train on Wednesdays"


def cloned_store(repo: Path, tmp_path: Path) -> str:
    """A project store written by someone else (another state root), as a clone would bring it."""
    other = tmp_path / "author"
    made = mem("retain", PLANTED, "--store", "project", "--root", str(other))
    assert made.exit == 0, made.stderr
    return str(made.result["memory"]["id"])


def hook_index() -> bytes:
    return mem("index", "--harness", "claude-code", request={"hook_event_name": "SessionStart"}).stdout


def test_a_store_created_here_is_trusted_and_stays_trusted_after_own_writes(repo: Path) -> None:
    record = retain("Use uv in this repository", "--store", "project")
    assert mem("index").result["stores"]["project"]["exists"] is True
    assert record["id"] in mem("index").result["text"]
    retain("Run ruff before committing", "--store", "project")  # our own write: still trusted
    assert mem("retain", request={"id": record["id"], "importance": 0.9, "store": "project"}).exit == 0
    found = mem("retrieve", "ruff", "--store", "project").result
    assert found["items"][0]["content"] == "Run ruff before committing"
    assert "trusted" not in found["stores"]["project"]
    assert b"Use uv in this repository" in hook_index()


def test_a_cloned_store_is_never_read_until_trusted(repo: Path, tmp_path: Path) -> None:
    memory_id = cloned_store(repo, tmp_path)
    retain("a global note")
    index = mem("index").result
    assert index["stores"]["project"] == {
        "path": str(repo / ".habitus" / "memory.sqlite"), "exists": True, "trusted": False,
        "reason": "untrusted", "hint": index["stores"]["project"]["hint"],
    }  # fmt: skip
    assert PLANTED not in index["text"] and "a global note" in index["text"]
    assert PLANTED.encode() not in hook_index()
    both = mem("retrieve", "release train deploys", "--both").result
    assert [i["store"] for i in both["items"]] == ["global"] * len(both["items"])
    assert both["stores"]["project"]["trusted"] is False
    for args in (["retrieve", "deploys", "--store", "project"], ["recall", memory_id, "--store", "project"]):
        out = mem(*args)
        assert out.exit == 3 and out.error["code"] == "untrusted", args
        assert PLANTED.encode() not in out.stdout + out.stderr
    # export is how a person looks at it before trusting it
    assert PLANTED.encode() in mem("export", "--store", "project").stdout
    trusted = mem("trust")
    assert trusted.exit == 0 and trusted.result["trusted"] is True and trusted.result["changed"] is True
    assert PLANTED in mem("index").result["text"] and PLANTED.encode() in hook_index()
    assert mem("recall", memory_id, "--store", "project").result["memory"]["content"] == PLANTED
    assert mem("trust").result["changed"] is False


def test_a_store_changed_behind_our_back_is_untrusted_again(repo: Path, tmp_path: Path) -> None:
    retain("Use uv in this repository", "--store", "project")
    path = repo / ".habitus" / "memory.sqlite"
    conn = sqlite3.connect(path)  # another program (or a git pull) rewrites it
    conn.execute("UPDATE memories SET importance = 0.1")
    conn.commit()
    conn.close()
    index = mem("index").result
    assert (
        index["stores"]["project"]["trusted"] is False and index["stores"]["project"]["reason"] == "changed"
    )
    assert mem("retrieve", "uv", "--store", "project").error["code"] == "untrusted"
    assert mem("trust").result["trusted"] is True
    assert "Use uv" in mem("index").result["text"]
    # a file replaced by a copy with the same bytes is still the store that was trusted
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data)
    assert "Use uv" in mem("index").result["text"]
    assert mem("trust", "--revoke").result == {"v": 1, "path": str(path), "trusted": False, "changed": True}
    assert mem("index").result["stores"]["project"]["trusted"] is False
    assert mem("trust", "--revoke").result["changed"] is False


def test_trust_names_a_project_folder_and_refuses_what_is_not_a_store(
    tmp_path: Path, outside_any_repo: Path
) -> None:
    assert mem("trust").error["code"] == "no_project"
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    assert mem("trust", "--project", str(other)).error["code"] == "not_found"
    (other / ".habitus").mkdir()
    (other / ".habitus" / "memory.sqlite").write_bytes(b"not a database at all, just bytes" * 10)
    out = mem("trust", "--project", str(other))
    assert out.exit == 3 and out.error["code"] == "state_corrupt"
    assert mem("trust", "--project", str(other), "--revoke").error["code"] == "state_corrupt"


def test_the_trust_record_lives_in_the_state_root_and_is_not_backed_up(
    repo: Path, state_root: Path, tmp_path: Path
) -> None:
    retain("Use uv in this repository", "--store", "project")
    record = state_root / "memory-trust.json"
    assert record.stat().st_mode & 0o777 == 0o600
    stores = orjson.loads(record.read_bytes())["stores"]
    assert list(stores) == [str((repo / ".habitus" / "memory.sqlite").resolve())]
    assert stores[next(iter(stores))]["how"] == "created"
    from conftest import run

    assert run(["verify"]).exit == 0
    backup = run(["backup", "--out", str(tmp_path / "b")])
    assert backup.exit == 0, backup.stderr
    assert not list((tmp_path / "b").rglob("memory-trust.json"))
    record.write_bytes(b"[1, 2")
    out = mem("index")
    assert out.exit == 3 and out.error["code"] == "state_corrupt"
