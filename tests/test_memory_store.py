"""Memory records: create, patch, restore, recall, soft remove, purge, pins, expiry, stores, validation."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import orjson
import pytest

import memory_helpers
from conftest import run
from habitus.memory import core, stores
from habitus.state.root import StateRoot
from memory_helpers import connect, full_record, ids, mem, retain

outside_any_repo = memory_helpers.outside_any_repo  # a fixture
repo = memory_helpers.repo  # a fixture

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def test_retain_creates_a_complete_record_with_defaults(state_root: Path) -> None:
    out = mem("retain", "  Use uv, never pip  ")
    assert out.exit == 0, out.stderr
    result = out.result
    assert result["store"] == "global" and result["created"] is True and result["restored"] is False
    record = result["memory"]
    assert UUID4.match(record["id"])
    assert TIMESTAMP.match(record["created_at"]) and record["created_at"] == record["updated_at"]
    stamps = {"id": record["id"], "created_at": record["created_at"], "updated_at": record["updated_at"]}
    assert record == full_record(content="Use uv, never pip", **stamps)
    db = state_root / "memory.sqlite"
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert stat.S_IMODE(state_root.stat().st_mode) == 0o700
    recalled = mem("recall", record["id"]).result
    assert recalled == {"v": 1, "store": "global", "memory": record}


def test_retain_from_options_and_from_a_request_agree() -> None:
    by_flags = mem(
        "retain",
        "Deploy from main only",
        "--kind", "decision",
        "--namespace", "ops",
        "--tags", "deploy,git,deploy",
        "--importance", "0.8",
        "--confidence", "0.6",
        "--expires-at", "2099-01-01T00:00:00.000Z",
        "--metadata", '{"source": "cli", "ticket": 12}',
    ).result["memory"]  # fmt: skip
    by_request = retain(
        "Deploy from main only",
        kind="decision",
        namespace="ops",
        tags=["git", "deploy"],
        importance=0.8,
        confidence=0.6,
        expires_at="2099-01-01T00:00:00.000Z",
        metadata={"source": "cli", "ticket": 12},
    )
    strip = ("id", "created_at", "updated_at")
    assert {k: v for k, v in by_flags.items() if k not in strip} == {
        k: v for k, v in by_request.items() if k not in strip
    }
    assert by_flags["tags"] == ["deploy", "git"]


def test_patch_replaces_listed_fields_and_keeps_the_rest() -> None:
    record = retain("first wording", tags=["a", "b"], metadata={"source": "pi"}, importance=0.3)
    out = mem("retain", request={"id": record["id"], "content": "second wording", "tags": ["c"]})
    assert out.exit == 0, out.stderr
    patched = out.result["memory"]
    assert out.result["created"] is False
    assert patched["content"] == "second wording" and patched["tags"] == ["c"]
    assert patched["metadata"] == {"source": "pi"} and patched["importance"] == 0.3
    assert patched["created_at"] == record["created_at"]
    assert patched["updated_at"] >= record["updated_at"]
    found = mem("retrieve", "second").result
    assert ids(found) == [record["id"]]
    assert mem("retrieve", "first", "--no-hybrid").result["total"] == 0
    assert mem("retrieve", request={"tags": ["a"]}).result["total"] == 0


def test_updated_at_never_goes_backwards(state_root: Path) -> None:
    store = stores.open_store(StateRoot(state_root), "global", wait=5)
    created = core.retain(store, {"content": "x"}, now="2030-01-01T00:00:00.500Z")["memory"]
    patched = core.retain(store, {"id": created["id"], "content": "y"}, now="2029-01-01T00:00:00.000Z")
    assert patched["memory"]["updated_at"] == "2030-01-01T00:00:00.501Z"
    removed = core.remove(store, created["id"], now="2028-01-01T00:00:00.000Z")
    assert removed["memory"]["removed_at"] == "2030-01-01T00:00:00.502Z"
    store.close()


def test_patch_of_an_unknown_id_is_not_found_and_creates_nothing(state_root: Path) -> None:
    out = mem("retain", request={"id": "0b6f1c7e-4a6b-4c1d-8e2f-0123456789ab", "content": "x"})
    assert out.exit == 1 and out.error["code"] == "not_found"
    assert not state_root.exists()


def test_soft_remove_hides_and_retain_restores() -> None:
    record = retain("the staging password rotates monthly", tags=["ops"])
    removed = mem("remove", record["id"]).result
    assert removed["removed"] is True and removed["purged"] is False
    assert removed["memory"]["removed_at"] is not None
    assert mem("recall", record["id"]).result["memory"] is None
    assert mem("retrieve", "staging", "--no-hybrid").result["total"] == 0
    assert mem("retrieve", request={"tags": ["ops"]}).result["total"] == 0
    listed = mem("retrieve", "--removed", "only").result
    assert ids(listed) == [record["id"]]
    again = mem("remove", record["id"]).result
    assert again["removed"] is False  # already removed: nothing changes
    restored = mem("retain", request={"id": record["id"]}).result
    assert restored["restored"] is True and restored["memory"]["removed_at"] is None
    assert ids(mem("retrieve", "staging").result) == [record["id"]]
    assert mem("recall", record["id"]).result["memory"]["content"] == record["content"]
    assert mem("verify").exit == 0


def test_purge_deletes_everything_about_a_record(state_root: Path) -> None:
    keep = retain("keep this one", tags=["x"])
    gone = retain("purge this one", tags=["x"])
    assert mem("pin", gone["id"]).exit == 0
    out = mem("remove", gone["id"], "--purge")
    assert out.exit == 0 and out.result["purged"] is True
    conn = connect(state_root / "memory.sqlite")
    assert conn.execute("SELECT count(*) FROM memories WHERE id = ?", (gone["id"],)).fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM memory_tags").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM memory_pins").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM memories_fts").fetchone()[0] == 1
    exported = [orjson.loads(line)["id"] for line in mem("export").stdout.splitlines()]
    assert exported == [keep["id"]]
    assert mem("remove", gone["id"]).error["code"] == "not_found"
    assert mem("verify").exit == 0
    # purge also works on a soft-removed record
    assert mem("remove", keep["id"]).exit == 0
    assert mem("remove", keep["id"], "--purge").result["purged"] is True
    assert mem("export").stdout == b""


def test_expiry(state_root: Path) -> None:
    store = stores.open_store(StateRoot(state_root), "global", wait=5)
    soon = core.retain(
        store, {"content": "release freeze until friday", "expires_at": "2030-06-01T00:00:00.000Z"}
    )
    forever = core.retain(store, {"content": "release notes go in CHANGES"})
    store.close()
    soon_id, forever_id = soon["memory"]["id"], forever["memory"]["id"]
    reader = stores.open_store(StateRoot(state_root), "global", wait=5)
    before, after = "2030-05-31T23:59:59.999Z", "2030-06-01T00:00:00.000Z"
    assert core.recall(reader, soon_id, now=before)["memory"] is not None
    assert core.recall(reader, soon_id, now=after)["memory"] is None  # expires_at is exclusive
    from habitus.memory import query

    def found(expires: str, now: str) -> set[str]:
        sel = query.selector({"query": "release", "expires": expires})
        return {item["id"] for item in query.retrieve_all([reader], sel, now=now)["items"]}

    assert found("active", before) == {soon_id, forever_id}
    assert found("active", after) == {forever_id}
    assert found("expired", after) == {soon_id}
    assert found("any", after) == {soon_id, forever_id}
    reader.close()
    # An expired record can be patched back to life.
    out = mem("retain", request={"id": soon_id, "expires_at": None})
    assert out.exit == 0 and out.result["memory"]["expires_at"] is None
    past = retain("already over", expires_at="2001-01-01T00:00:00.000Z")
    assert mem("recall", past["id"]).result["memory"] is None
    assert mem("retrieve", "over", "--expires", "expired").result["total"] == 1
    revived = mem("retain", "--id", past["id"], "--expires-at", "none").result["memory"]
    assert revived["expires_at"] is None and mem("recall", past["id"]).result["memory"] is not None


def test_pins(state_root: Path) -> None:
    record = retain("pin me")
    first = mem("pin", record["id"]).result
    assert first == {"v": 1, "store": "global", "id": record["id"], "pinned": True, "changed": True}
    assert mem("pin", record["id"]).result["changed"] is False
    assert mem("unpin", record["id"]).result["changed"] is True
    assert mem("unpin", record["id"]).result["changed"] is False
    assert mem("remove", record["id"]).exit == 0
    refused = mem("pin", record["id"])
    assert refused.exit == 1 and refused.error["code"] == "not_found"


def test_project_store_lives_in_the_repository(repo: Path, state_root: Path) -> None:
    record = retain("project fact", "--store", "project")
    assert record["scope"] == "project"
    db = repo / ".habitus" / "memory.sqlite"
    assert db.is_file() and stat.S_IMODE(db.stat().st_mode) == 0o600
    assert (repo / ".habitus" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert not (state_root / "memory.sqlite").exists()
    # scope picks the store when --store is not given
    assert retain("another project fact", scope="project")["scope"] == "project"
    assert mem("recall", record["id"]).result["memory"] is None  # the global store does not have it
    assert mem("recall", record["id"], "--store", "project").result["memory"]["id"] == record["id"]
    mismatch = mem("retain", "x", "--store", "global", "--scope", "project")
    assert mismatch.exit == 2 and mismatch.error["code"] == "bad_request"


def test_project_store_outside_a_repository_is_refused(state_root: Path, tmp_path: Path) -> None:
    for args in (
        ["retain", "x"],
        ["recall", "0b6f1c7e-4a6b-4c1d-8e2f-0123456789ab"],
        ["retrieve"],
        ["verify"],
    ):
        out = mem(*args, "--store", "project")
        assert out.exit == 2 and out.error["code"] == "no_project", args
    assert not state_root.exists()
    assert not any(p.name == ".habitus" for p in tmp_path.rglob("*"))
    # --both and index simply use the global store alone
    assert mem("retrieve", "--both").result["stores"].keys() == {"global"}
    assert mem("index").result["stores"].keys() == {"global"}


def test_read_only_paths_never_create_anything(repo: Path, state_root: Path) -> None:
    some_id = "0b6f1c7e-4a6b-4c1d-8e2f-0123456789ab"
    for args in (
        ["recall", some_id],
        ["recall", some_id, "--store", "project"],
        ["retrieve", "anything", "--both"],
        ["retrieve", "--store", "project"],
        ["index"],
        ["verify"],
        ["verify", "--store", "project"],
        ["export", "--store", "project"],
        ["unpin", some_id],
    ):
        out = mem(*args)
        assert out.exit == 0, (args, out.stderr)
    assert mem("remove", some_id).error["code"] == "not_found"
    assert mem("pin", some_id, "--store", "project").error["code"] == "not_found"
    assert not state_root.exists()
    assert not (repo / ".habitus").exists()
    assert mem("retrieve", "x").result == {
        "v": 1,
        "total": 0,
        "items": [],
        "mode": "fts",
        "limit": 20,
        "offset": 0,
        "stores": {"global": {"path": str(state_root / "memory.sqlite"), "exists": False, "total": 0}},
    }


@pytest.mark.parametrize(
    ("request_body", "field"),
    [
        ({}, "content"),
        ({"content": "   "}, "content"),
        ({"content": 12}, "content"),
        ({"content": "a\u0000b"}, "content"),
        ({"content": "x" * (32 * 1024 + 1)}, "content"),
        ({"content": "x", "kind": "thought"}, "kind"),
        ({"content": "x", "scope": "team"}, "scope"),
        ({"content": "x", "namespace": "Bad Name"}, "namespace"),
        ({"content": "x", "namespace": "-x"}, "namespace"),
        ({"content": "x", "tags": "ok,Not-OK"}, "tags[1]"),
        ({"content": "x", "tags": [1]}, "tags[0]"),
        ({"content": "x", "tags": [f"t{i}" for i in range(33)]}, "tags"),
        ({"content": "x", "importance": 1.5}, "importance"),
        ({"content": "x", "importance": "high"}, "importance"),
        ({"content": "x", "importance": True}, "importance"),
        ({"content": "x", "confidence": -0.1}, "confidence"),
        ({"content": "x", "expires_at": "2030-01-01"}, "expires_at"),
        ({"content": "x", "expires_at": "2030-02-30T00:00:00.000Z"}, "expires_at"),
        ({"content": "x", "expires_at": "2030-01-01T00:00:00Z"}, "expires_at"),
        ({"content": "x", "metadata": [1]}, "metadata"),
        ({"content": "x", "metadata": {"source": 3}}, "metadata.source"),
        ({"content": "x", "metadata": {"pad": "y" * 9000}}, "metadata"),
        ({"content": "x", "relevance": "high"}, "relevance"),
        ({"content": "x", "kind": "observation", "relevance": "urgent"}, "relevance"),
        ({"content": "x", "id": "not-a-uuid"}, "id"),
        ({"content": "x", "id": "0b6f1c7e-4a6b-1c1d-8e2f-0123456789ab"}, "id"),
        ({"content": "x", "store": "elsewhere"}, "store"),
    ],
)
def test_invalid_records_are_refused_and_create_nothing(
    state_root: Path, request_body: dict, field: str
) -> None:
    out = mem("retain", request=request_body)
    assert out.exit == 2, out.stderr
    error = out.error
    assert error["code"] == "bad_request"
    assert error["message"].startswith(f"request.{field}:"), error["message"]
    assert out.stdout == b""
    assert not state_root.exists()


@pytest.mark.parametrize(
    ("stdin", "code"),
    [
        (b"{", "bad_json"),
        (b"[1]", "bad_request"),
        (b'{"content": "\xff"}', "bad_utf8"),
        (b'{"content": NaN}', "bad_json"),
    ],
)
def test_bad_stdin_is_refused(state_root: Path, stdin: bytes, code: str) -> None:
    out = mem("retain", stdin=stdin)
    assert out.exit == 2 and out.error["code"] == code
    assert not state_root.exists()


def test_oversized_request_is_refused(state_root: Path) -> None:
    from habitus import codec

    out = mem("retain", stdin=b'{"content": "' + b"x" * (codec.MAX_REQUEST_BYTES + 1) + b'"}')
    assert out.exit == 2 and out.error["code"] == "request_too_large"
    assert not state_root.exists()


def test_metadata_option_must_be_a_json_object(state_root: Path) -> None:
    assert mem("retain", "x", "--metadata", "{nope").error["code"] == "bad_json"
    assert mem("retain", "x", "--metadata", "[1]").error["code"] == "bad_request"
    assert not state_root.exists()


def test_deeply_nested_metadata_is_refused_before_anything_is_stored(state_root: Path) -> None:
    # Found by the hostile-input fuzz: 252 levels were stored, then the result could not be encoded.
    deep: object = "x"
    for i in range(252):
        deep = [deep] if i % 2 else {"k": deep}
    out = mem("retain", "--nl", request={"content": "Deploys happen on Fridays", "metadata": {"a": deep}})
    assert out.exit == 2 and out.error["code"] == "bad_request"
    assert not state_root.exists()
    shallow = mem("retain", request={"content": "Deploys happen on Fridays", "metadata": {"a": {"b": [1]}}})
    assert shallow.exit == 0 and shallow.result["memory"]["metadata"] == {"a": {"b": [1]}}


def test_observations_carry_a_relevance() -> None:
    record = retain("user prefers tabs", kind="observation")
    assert record["relevance"] == "medium"
    patched = mem("retain", request={"id": record["id"], "relevance": "critical"}).result["memory"]
    assert patched["relevance"] == "critical"
    note = mem("retain", request={"id": record["id"], "kind": "note"}).result["memory"]
    assert note["relevance"] is None
    bad = mem("retain", request={"id": record["id"], "relevance": "low"})
    assert bad.exit == 2 and bad.error["code"] == "bad_request"


def test_nl_streams_one_result_per_line(state_root: Path) -> None:
    lines = b"\n".join(orjson.dumps({"content": f"line {i}", "tags": ["bulk"]}) for i in range(5))
    out = mem("retain", "--nl", stdin=lines)
    assert out.exit == 0, out.stderr
    created = [r["memory"]["id"] for r in out.results]
    assert len(created) == 5 and all(r["v"] == 1 for r in out.results)
    recalled = mem("recall", "--nl", stdin=b"\n".join(orjson.dumps({"id": i}) for i in created))
    assert [r["memory"]["content"] for r in recalled.results] == [f"line {i}" for i in range(5)]
    usage = mem("retain", "x", "--nl", stdin=lines)
    assert usage.exit == 2 and usage.error["code"] == "usage"


def test_every_memory_table_is_strict(state_root: Path) -> None:
    retain("x")
    conn = connect(state_root / "memory.sqlite")
    tables = [
        t
        for t in conn.execute("PRAGMA table_list").fetchall()
        if t["schema"] == "main"
        and t["type"] == "table"
        and not t["name"].startswith(("sqlite_", "memories_fts"))
    ]
    assert {t["name"] for t in tables} >= {"memories", "memory_tags", "memory_pins", "memory_meta"}
    assert all(t["strict"] == 1 for t in tables), [t["name"] for t in tables if not t["strict"]]


def test_status_reports_the_memory_store(state_root: Path) -> None:
    assert run(["status"]).result["stores"]["memory"]["exists"] is False
    retain("x")
    memory = run(["status"]).result["stores"]["memory"]
    assert memory["exists"] is True and memory["schema_version"] == memory["schema_current"]


def test_tags_may_start_with_a_digit_as_people_write_them() -> None:
    record = retain("the shared vault holds the staging login", tags=["1password", "2fa", "k8s"])
    assert record["tags"] == ["1password", "2fa", "k8s"]
    assert mem("retrieve", request={"tags": ["2fa"]}).result["total"] == 1
    for bad in ("-2fa", "2fa-", "two--factor", "2FA", "2 fa"):
        out = mem("retain", request={"content": "x", "tags": [bad]})
        assert out.exit == 2 and out.error["message"].startswith("request.tags[0]:"), bad
