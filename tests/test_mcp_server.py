"""`habitus mcp` in a real MCP client session: the SDK's own stdio client launches the installed console
script, lists the tools, retains, retrieves by a paraphrase (the packaged embedding model), recalls,
removes softly, asks which approved habit applies, lists candidates with evidence, and cannot approve."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import memory_helpers
from conftest import run
from habit_helpers import REVIEWABLE, propose
from mcp_helpers import Client, session
from memory_helpers import mem
from select_helpers import COMMIT, DELETE, declare_all

outside_any_repo = memory_helpers.outside_any_repo  # fixture: the tests run outside any repository
repo = memory_helpers.repo

pytestmark = pytest.mark.slow

TOOLS = {
    "memory_retrieve",
    "memory_recall",
    "memory_retain",
    "memory_remove",
    "habits_for_request",
    "habits_candidates",
}
SECRET = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"


def ledger_dump(root: Path) -> list[tuple[object, ...]]:
    """Every habit, audit and evidence row: what an approval would change."""
    conn = sqlite3.connect(root / "ledger.sqlite")
    try:
        return [
            *conn.execute("SELECT * FROM habits ORDER BY id"),
            *conn.execute("SELECT * FROM habit_audit ORDER BY id"),
            *conn.execute("SELECT * FROM habit_evidence ORDER BY id"),
        ]
    finally:
        conn.close()


def test_a_session_lists_retains_retrieves_by_meaning_recalls_and_removes(
    state_root: Path, outside_any_repo: Path
) -> None:
    async def body(client: Client) -> None:
        listed = await client.tools()
        assert {tool.name for tool in listed} == TOOLS
        for tool in listed:
            assert tool.input_schema["type"] == "object"
            assert tool.input_schema["additionalProperties"] is False
            assert tool.description
        by_name = {tool.name: tool for tool in listed}
        assert by_name["memory_retrieve"].annotations.read_only_hint is True
        assert by_name["memory_retain"].annotations.read_only_hint is False

        kept = await client.call(
            "memory_retain",
            {"content": "Deploy to production only on Tuesdays after the standup", "kind": "decision"},
        )
        assert not kept.error and kept.body["v"] == 1 and kept.body["created"] is True
        memory = kept.body["memory"]
        assert memory["kind"] == "decision" and memory["metadata"] == {"source": "agent-mcp"}
        for other in ("Use uv, never pip, in this repo", "The staging server is called kestrel"):
            assert not (await client.call("memory_retain", {"content": other})).error

        # A paraphrase sharing no word with the record: found by meaning (hybrid), first.
        found = await client.call("memory_retrieve", {"query": "when can we release"})
        assert not found.error and found.body["mode"] == "hybrid"
        assert found.body["hybrid"]["used"] is True
        top = found.body["items"][0]
        assert top["id"] == memory["id"] and top["similarity"] >= 0.2

        recalled = await client.call("memory_recall", {"id": memory["id"]})
        assert recalled.body["memory"]["content"] == memory["content"]

        removed = await client.call("memory_remove", {"id": memory["id"]})
        assert not removed.error and removed.body["removed"] is True and removed.body["purged"] is False
        assert (await client.call("memory_recall", {"id": memory["id"]})).body["memory"] is None
        again = await client.call("memory_retrieve", {"query": "when can we release"})
        assert memory["id"] not in [item["id"] for item in again.body["items"]]

        # Redaction is the CLI's: the secret never reaches the store.
        secret = await client.call("memory_retain", {"content": f"The bot's deploy key is {SECRET}"})
        assert not secret.error and SECRET not in secret.text
        assert "[REDACTED:github_token]" in secret.body["memory"]["content"]

        # Purge is not offered: the argument is refused and nothing changes.
        purge = await client.call("memory_remove", {"id": memory["id"], "purge": True})
        assert purge.code == "bad_request"

    session(body, root=state_root, cwd=outside_any_repo)
    # Soft removal: the person restores it with the CLI, as for any removed memory.
    removed = mem("retrieve", "--removed", "only").result["items"]
    assert len(removed) == 1 and removed[0]["metadata"]["source"] == "agent-mcp"
    restored = mem("retain", "--id", removed[0]["id"])
    assert restored.exit == 0 and restored.result["restored"] is True
    assert mem("retrieve", "--source", "agent-mcp").result["total"] == 4
    assert SECRET.encode() not in (state_root / "memory.sqlite").read_bytes()


def test_habit_tools_read_and_cannot_approve(state_root: Path, outside_any_repo: Path) -> None:
    commit, _ = declare_all(COMMIT, DELETE)
    candidate = propose("When I ask for a release", "Run the full test suite first", REVIEWABLE)
    before = ledger_dump(state_root)

    async def body(client: Client) -> None:
        chosen = await client.call(
            "habits_for_request", {"prompt": "write the commit message for the staged changes"}
        )
        assert not chosen.error and chosen.body["reason"] == "selected"
        assert [h["id"] for h in chosen.body["habits"]] == [commit["id"]]
        assert COMMIT[1] in chosen.body["guidance"]
        none = await client.call("habits_for_request", {"prompt": "what is the capital of France"})
        assert none.body["habits"] == [] and none.body["guidance"] == ""

        listed = await client.call("habits_candidates", {})
        assert not listed.error and listed.body["total"] == 1
        (item,) = listed.body["items"]
        assert item["id"] == candidate["id"] and item["status"] == "candidate"
        assert item["evidence_summary"] == {"observations": 3, "days": 2, "stage": "reviewable"}
        assert [e["day"] for e in item["evidence"]] == REVIEWABLE

        for name in ("habit_approve", "habits_approve", "habit_declare", "config_set"):
            refused = await client.call(name, {"id": candidate["id"]})
            assert refused.code == "usage"
        # Read tools ignore nothing: an approval smuggled into arguments is refused.
        smuggled = await client.call("habits_candidates", {"approve": candidate["id"]})
        assert smuggled.code == "bad_request"

    session(body, root=state_root, cwd=outside_any_repo)
    assert ledger_dump(state_root) == before  # not one habit, audit or evidence row changed
    status = run(["habit", "show", candidate["id"]]).result["habit"]["status"]
    assert status == "candidate"


def test_project_store_and_trust(state_root: Path, repo: Path) -> None:
    async def body(client: Client) -> None:
        kept = await client.call(
            "memory_retain", {"content": "This repository formats Python with ruff", "store": "project"}
        )
        assert not kept.error and kept.body["store"] == "project"
        found = await client.call("memory_retrieve", {"query": "python code formatter"})
        assert [item["store"] for item in found.body["items"]] == ["project"]

    session(body, root=state_root, cwd=repo / "src")
    assert (repo / ".habitus" / "memory.sqlite").exists()

    # A store this user stopped trusting: skipped by `both`, refused by name.
    assert mem("trust", "--revoke").exit == 0

    async def after(client: Client) -> None:
        named = await client.call("memory_retrieve", {"query": "formatter", "store": "project"})
        assert named.code == "untrusted"
        both = await client.call("memory_retrieve", {"query": "formatter"})
        assert not both.error and both.body["items"] == []

    session(after, root=state_root, cwd=repo / "src")


def test_root_option_wins_over_habitus_home(state_root: Path, outside_any_repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-root"

    async def body(client: Client) -> None:
        kept = await client.call("memory_retain", {"content": "The other root keeps this"})
        assert not kept.error

    session(body, root=state_root, cwd=outside_any_repo, args=("--root", str(other)))
    assert (other / "memory.sqlite").exists() and not (state_root / "memory.sqlite").exists()
    assert mem("retrieve", "--root", str(other), "other root").result["total"] == 1
