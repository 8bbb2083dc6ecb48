"""`retrieve --hybrid` with the packaged embedding model: fused ranking, lazy vectors, fallback, models."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import memory_helpers
from habitus.memory import embedding, vectors
from memory_helpers import mem, retain, seq_of

outside_any_repo = memory_helpers.outside_any_repo  # fixtures
repo = memory_helpers.repo

CORPUS = [
    "Use uv, never pip, in this repo",
    "The CI runs on GitHub Actions with a matrix of Python versions",
    "Deploy to production only on Tuesdays after the standup",
    "User prefers tabs over spaces in every file",
    "The database is PostgreSQL 16 on a managed host",
    "Run the linter before committing",
    "Our staging server is called kestrel",
    "Never force-push to main",
]


from habitus.embed import registry  # noqa: E402

# memory's models while embed.model is default
ROLES = [embedding.E5, embedding.MINILM] if registry.e5_available() else [embedding.MINILM_ALONE]
MODELS = len(ROLES)


def lazy(monkeypatch: pytest.MonkeyPatch, most: int) -> None:
    """Let a search compute at most `most` missing vectors of each model."""
    from dataclasses import replace

    original = embedding.roles
    monkeypatch.setattr(embedding, "roles", lambda root: [replace(r, lazy=most) for r in original(root)])


def fill(*args: str) -> dict[str, str]:
    return {text: retain(text, *args)["id"] for text in CORPUS}


def hybrid(query: str, *args: str) -> dict[str, Any]:
    out = mem("retrieve", query, "--hybrid", *args)
    assert out.exit == 0, out.stderr
    return out.result


def vector_rows(root: Path) -> list[tuple[int, str]]:
    conn = memory_helpers.connect(root / "memory.sqlite")
    rows = [
        (int(r[0]), str(r[1])) for r in conn.execute("SELECT seq, model_id FROM memory_vectors ORDER BY seq")
    ]
    conn.close()
    return rows


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("which sql engine", "The database is PostgreSQL 16 on a managed host"),
        ("indentation style", "User prefers tabs over spaces in every file"),
        ("when can we release", "Deploy to production only on Tuesdays after the standup"),
    ],
)
def test_hybrid_finds_by_meaning_what_bm25_misses(state_root: Path, query: str, expected: str) -> None:
    ids = fill()
    text_only = mem("retrieve", query, "--no-hybrid").result["items"]
    assert ids[expected] not in [item["id"] for item in text_only[:1]]  # BM25 alone misses it
    result = hybrid(query)
    assert result["mode"] == "hybrid" and result["hybrid"]["used"] is True
    top = result["items"][0]
    floor = ROLES[0].floor
    assert top["id"] == ids[expected] and top["similarity"] >= floor
    assert all(item["similarity"] is None or item["similarity"] >= floor for item in result["items"])


def test_fusion_puts_a_text_and_meaning_match_first(state_root: Path) -> None:
    from habitus.memory import hybrid as fusion

    ids = fill()
    result = hybrid("deploy production")
    top = result["items"][0]
    assert top["id"] == ids["Deploy to production only on Tuesdays after the standup"]
    assert top["bm25"] > 0 and top["similarity"] is not None
    # First among the text matches, and it stands out by meaning too (a positive mean z-score).
    assert top["score"] > fusion.BM25_WEIGHT / (fusion.RRF_K + 1)
    meaning = [i for i in result["items"] if i["bm25"] is None]
    assert meaning and all(i["score"] < top["score"] for i in meaning)  # found by meaning alone
    assert [i["score"] for i in result["items"]] == sorted(
        (i["score"] for i in result["items"]), reverse=True
    )
    # paging over the fused list
    second = result["items"][1]
    paged = hybrid("deploy production", "--limit", "1", "--offset", "1")
    assert paged["total"] == result["total"] and paged["items"][0]["id"] == second["id"]


def test_weak_text_matches_do_not_outvote_the_vectors(state_root: Path) -> None:
    """With OR semantics "the" matches nearly every record; such matches stay out of the fusion, so a
    question that shares only such words with the record it means still finds it first."""
    from habitus.memory import hybrid as fusion

    ids = fill()
    result = hybrid("what is the relational datastore")
    top = result["items"][0]
    assert top["id"] == ids["The database is PostgreSQL 16 on a managed host"]
    text_only = mem("retrieve", "what is the relational datastore", "--no-hybrid").result["items"]
    assert len(text_only) > 1 and text_only[0]["score"] > 0  # "the" and "is" match several records
    weak = [
        i
        for i in result["items"]
        if i["bm25"] is not None and i["bm25"] < fusion.STRONG * text_only[0]["score"]
    ]
    assert all(i["score"] < top["score"] for i in weak)


def test_one_record_or_none_left_by_the_filters_ranks_without_warnings(state_root: Path) -> None:
    """z-scores of one record (no spread) or of no record (nothing to average) are defined: no NaN,
    no numpy warning on stderr."""
    import warnings

    only = retain("The database is PostgreSQL 16 on a managed host", "--kind", "fact")["id"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = hybrid("which sql engine")
        assert [i["id"] for i in result["items"]] == [only] and result["items"][0]["score"] == 0.0
        assert hybrid("which sql engine", "--kind", "decision")["items"] == []


def test_vectors_are_computed_lazily_once(state_root: Path) -> None:
    fill()
    result = hybrid("database")
    first = result["stores"]["global"]["hybrid"]
    assert first == {
        "used": True, "models": result["hybrid"]["models"], "computed": MODELS * len(CORPUS), "missing": 0,
        "text_mode": "fts",
    }  # fmt: skip
    assert len(result["hybrid"]["models"]) == MODELS
    assert hybrid("database")["stores"]["global"]["hybrid"]["computed"] == 0
    assert len(vector_rows(state_root)) == MODELS * len(CORPUS)


def test_missing_vectors_fall_back_to_bm25_with_a_flag(
    state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = fill()
    lazy(monkeypatch, 3)
    result = hybrid("tabs")
    info = result["stores"]["global"]["hybrid"]
    assert result["mode"] == "fts" and result["hybrid"]["used"] is False
    assert (
        info["used"] is False and info["reason"] == "vectors_missing" and info["missing"] == len(CORPUS) - 3
    )
    assert [s["reason"] for s in info["skipped"]] == ["vectors_missing"] * MODELS
    assert "index-vectors" in info["hint"] and info["computed"] == 3 * MODELS
    assert [i["id"] for i in result["items"]] == [ids["User prefers tabs over spaces in every file"]]
    assert "similarity" not in result["items"][0]  # plain BM25 items
    done = mem("index-vectors").result
    assert (done["computed"], done["missing"], done["stale_replaced"]) == (MODELS * (len(CORPUS) - 3), 0, 0)
    assert [m["computed"] for m in done["models"]] == [len(CORPUS) - 3] * MODELS
    assert hybrid("tabs")["hybrid"]["used"] is True


def test_filters_limit_what_needs_vectors(state_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fill()
    only = retain("The deploy key rotates monthly", "--kind", "decision")
    lazy(monkeypatch, 1)
    result = hybrid("deploy", "--kind", "decision")
    assert result["hybrid"]["used"] is True and [i["id"] for i in result["items"]] == [only["id"]]


def test_vectors_of_another_model_are_never_used(state_root: Path) -> None:
    fill()
    conn = memory_helpers.connect(state_root / "memory.sqlite")
    # a vector of "another model" that is identical to nothing: if it were compared, it would be noise
    for seq in range(1, len(CORPUS) + 1):
        conn.execute(
            "INSERT INTO memory_vectors (seq, model_id, dims, input, vector, created_at) VALUES (?, ?, 2, ?, ?, ?)",
            (seq, "other@0000", "x", b"\x00\x00\x80\x3f" * 2, "2030-01-01T00:00:00.000Z"),
        )
    conn.close()
    result = hybrid("which database do we use")
    assert result["stores"]["global"]["hybrid"]["computed"] == MODELS * len(
        CORPUS
    )  # foreign rows did not count
    assert result["items"][0]["content"].startswith("The database is PostgreSQL")
    models = {model for _, model in vector_rows(state_root)}
    assert models == {"other@0000", *result["hybrid"]["models"]}


def test_content_changed_behind_our_back_fails_closed_until_reindexed(state_root: Path) -> None:
    ids = fill()
    hybrid("tabs")
    conn = memory_helpers.connect(state_root / "memory.sqlite")
    seq = seq_of(conn, ids["User prefers tabs over spaces in every file"])  # its vector is about tabs
    conn.execute("UPDATE memories SET content = 'The staging server is kestrel' WHERE seq = ?", (seq,))
    memory_helpers.set_fts_text(conn, seq, "The staging server is kestrel")
    conn.close()
    result = hybrid("tabs")
    assert result["stores"]["global"]["hybrid"]["reason"] == "vectors_stale" and result["mode"] == "fts"
    report = mem("verify")
    assert report.exit == 1 and [(i["code"], i["ids"]) for i in report.result["issues"]] == [
        ("vector_stale", [ids["User prefers tabs over spaces in every file"]])
    ]
    assert mem("index-vectors").result["stale_replaced"] == MODELS
    assert mem("verify").exit == 0 and hybrid("tabs")["hybrid"]["used"] is True


def test_patch_and_purge_keep_vectors_in_step(state_root: Path) -> None:
    ids = fill()
    hybrid("tabs")
    target = ids["Run the linter before committing"]
    seq = seq_of(memory_helpers.connect(state_root / "memory.sqlite"), target)
    assert mem("retain", request={"id": target, "importance": 0.9}).exit == 0  # content unchanged: kept
    assert seq in {s for s, _ in vector_rows(state_root)}
    assert mem("retain", request={"id": target, "content": "Run ruff before every commit"}).exit == 0
    assert seq not in {s for s, _ in vector_rows(state_root)}
    assert hybrid("code style checks")["stores"]["global"]["hybrid"]["computed"] == MODELS
    assert mem("remove", target, "--purge").exit == 0
    assert seq not in {s for s, _ in vector_rows(state_root)}
    assert mem("verify").exit == 0


def test_both_stores_each_report_their_own_hybrid_state(repo: Path, state_root: Path) -> None:
    project = retain("The project database is SQLite", "--store", "project")
    retain("The global database is PostgreSQL")
    result = hybrid("which database do we use", "--both")
    assert [i["store"] for i in result["items"]] == ["project", "global"]
    assert result["items"][0]["id"] == project["id"]
    assert set(result["stores"]) == {"project", "global"}
    assert all(s["hybrid"]["used"] for s in result["stores"].values())


@pytest.mark.parametrize(
    ("args", "field"),
    [(["--hybrid"], "hybrid"), (["tabs", "--hybrid", "--order-by", "updated_at"], "order_by")],
)
def test_bad_hybrid_requests(state_root: Path, args: list[str], field: str) -> None:
    out = mem("retrieve", *args)
    assert out.exit == 2 and out.error["message"].startswith(f"request.{field}:")


def test_hybrid_on_a_missing_store_loads_nothing_and_creates_nothing(state_root: Path) -> None:
    result = hybrid("anything")
    assert result["total"] == 0 and result["hybrid"]["model"] is None and result["hybrid"]["models"] == []
    assert not state_root.exists()


def test_retain_never_loads_the_embedding_model(state_root: Path) -> None:
    probe = (
        "import sys\n"
        "sys.argv = ['habitus', 'memory', 'retain', 'a fact worth keeping']\n"
        "from habitus.launcher import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = {'numpy', 'onnxruntime', 'tokenizers', 'jsonschema'}\n"
        "sys.stderr.write('HEAVY=' + ','.join(sorted({m.split('.')[0] for m in sys.modules} & heavy)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=60, check=False)
    assert b'"created":true' in done.stdout, done.stderr[-500:]
    assert done.stderr.decode().rsplit("HEAVY=", 1)[1] == ""


def test_locked_and_newer_stores(state_root: Path, tmp_path: Path) -> None:
    from memory_helpers import claude_transcript
    from test_db import HOLD_WRITER

    fill()
    transcript = claude_transcript(tmp_path / "t.jsonl", [("use tabs", "ok")])
    observe_request = {"messages": [{"role": "user", "text": "I prefer tabs."}]}
    acks = {"stream": "p", "messages": [{"role": "user", "text": "ok"}, {"role": "user", "text": "thanks"}]}
    assert mem("observe", request=acks).result["observed"] == 2  # low: prune will want to drop them
    db = state_root / "memory.sqlite"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_WRITER, str(db)], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
        for args, request in (
            (["index-vectors"], None),
            (["observe", "--transcript", str(transcript)], None),
            (["observe"], observe_request),
            (["reflect"], None),
            (["prune", "--budget", "0", "--stream", "p"], None),
        ):
            out = mem(*args, "--wait", "0.2", request=request)
            assert out.exit == 75 and out.error["code"] == "state_locked", args
        # a search does not wait on a writer to compute vectors: it answers with BM25, flagged
        searched = hybrid("tabs", "--wait", "0.2")
        assert searched["hybrid"]["used"] is False and searched["items"]
    finally:
        holder.kill()
        holder.wait()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    before = db.read_bytes()
    for args, request in (
        (["index-vectors"], None),
        (["retrieve", "tabs", "--hybrid"], None),
        (["observe", "--transcript", str(transcript)], None),
        (["observe"], observe_request),
        (["reflect"], None),
        (["prune"], None),
    ):
        out = mem(*args, request=request)
        assert out.exit == 3 and out.error["code"] == "schema_newer", args
    assert db.read_bytes() == before
    assert (
        mem("index-vectors", "--store", "global", "--root", str(tmp_path / "empty")).error["code"]
        == "not_found"
    )


def test_by_default_vectors_join_plain_queries_and_syntax_means_what_it_says(state_root: Path) -> None:
    ids = fill()
    plain = mem("retrieve", "which sql engine").result
    assert plain["mode"] == "hybrid" and plain["hybrid"]["used"] is True
    assert plain["items"][0]["id"] == ids["The database is PostgreSQL 16 on a managed host"]
    assert len(vector_rows(state_root)) == MODELS * len(CORPUS)  # a small store got them on first search
    syntax = mem("retrieve", "tabs AND spaces").result
    assert syntax["mode"] == "fts" and "hybrid" not in syntax
    assert mem("retrieve", "tabs", "--no-hybrid").result["mode"] == "fts"
    listed = mem("retrieve", "tabs", "--order-by", "updated_at").result
    assert listed["mode"] == "fts" and "hybrid" not in listed


def test_by_default_a_large_backlog_answers_by_bm25_without_the_model(
    state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import habitus.models.embedders

    ids = fill()
    lazy(monkeypatch, 3)

    def no_model(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the model must not load")

    monkeypatch.setattr(habitus.models.embedders, "load_embedder", no_model)
    result = mem("retrieve", "tabs").result
    info = result["stores"]["global"]["hybrid"]
    assert result["mode"] == "fts" and info["reason"] == "vectors_missing" and info["missing"] == len(CORPUS)
    assert [i["id"] for i in result["items"]] == [ids["User prefers tabs over spaces in every file"]]
    assert vector_rows(state_root) == []


def test_by_default_a_model_that_does_not_load_means_bm25(
    state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import habitus.models.embedders
    from habitus.errors import HabitusError

    fill()

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise HabitusError("model_unavailable", "gone")

    monkeypatch.setattr(habitus.models.embedders, "load_embedder", broken)
    result = mem("retrieve", "tabs").result
    assert result["mode"] == "fts" and result["items"]
    assert result["hybrid"] == {"model": None, "models": [], "used": False, "reason": "model_unavailable"}
    strict = mem("retrieve", "tabs", "--hybrid")
    assert strict.exit == 3 and strict.error["code"] == "model_unavailable"


def test_index_vectors_reports_progress_per_batch(state_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from habitus.memory.stores import MemoryStore
    from habitus.state.root import StateRoot

    fill()
    monkeypatch.setattr(vectors, "BATCH", 3)
    seen: list[tuple[str, int, int]] = []
    store = MemoryStore("global", state_root / "memory.sqlite", wait=5.0)
    try:
        models = embedding.load_all(StateRoot.at(str(state_root)))
        done = vectors.index(store, models, progress=lambda m, d, t: seen.append((m, d, t)))
    finally:
        store.close()
    assert done["computed"] == MODELS * len(CORPUS)
    order = [m.model_id for m in sorted(models, key=lambda m: m.role.passages)]  # the fastest model first
    assert seen == [(m, d, 8) for m in order for d in (3, 6, 8)]
