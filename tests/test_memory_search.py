"""retrieve: BM25 ranking on a fixed corpus, Unicode, hyphens, literal fallback, filters, order, paging."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

import memory_helpers
from habitus.memory import search
from memory_helpers import ids, mem, retain

outside_any_repo = memory_helpers.outside_any_repo  # a fixture
repo = memory_helpers.repo  # a fixture

# name -> (content, importance). Written so that BM25 gives one defensible order per query.
CORPUS: dict[str, tuple[str, float]] = {
    "twin_low": ("sqlite migration", 0.2),
    "twin_high": ("sqlite migration", 0.9),
    "long_both": (
        "Every sqlite migration runs in one transaction together with its record, and the version "
        "is read before anything writes, so that a newer file is never touched by an older program",
        0.5,
    ),
    "sqlite_only": ("SQLite is the storage engine for every store", 0.5),
    "migration_twice": ("migration after migration: keep each migration small", 0.5),
    "deploy": ("Deploy from main only, never on Fridays", 0.5),
    "unrelated": ("Prefer small commits with honest messages", 0.5),
}


def find(*args: str, request: Any = None) -> memory_helpers.Run:
    """retrieve by BM25 alone (hybrid ranking has its own tests in test_memory_hybrid)."""
    if request is not None:
        return mem("retrieve", *args, request={"hybrid": False, **request})
    return mem("retrieve", *args, "--no-hybrid")


def load_corpus() -> dict[str, str]:
    return {
        name: retain(content, importance=importance)["id"] for name, (content, importance) in CORPUS.items()
    }


def names(result: dict[str, Any], corpus: dict[str, str]) -> list[str]:
    by_id = {v: k for k, v in corpus.items()}
    return [by_id[i] for i in ids(result)]


def test_bm25_ranking_on_a_fixed_corpus() -> None:
    corpus = load_corpus()
    typed = find("sqlite migration").result
    assert typed["mode"] == "fts"
    # Plain words are OR-ed: every record holding either is found. Identical short documents with
    # both words first, tied on BM25 and broken by importance; then the rest by BM25.
    assert names(typed, corpus)[:2] == ["twin_high", "twin_low"]
    assert set(names(typed, corpus)) == {
        "twin_high",
        "twin_low",
        "long_both",
        "sqlite_only",
        "migration_twice",
    }
    scores = [item["score"] for item in typed["items"]]
    assert scores[0] == scores[1] > scores[2]
    both = find("sqlite AND migration").result
    assert names(both, corpus) == ["twin_high", "twin_low", "long_both"]
    either = names(find("sqlite OR migration").result, corpus)
    assert either[:3] == ["twin_high", "twin_low", "migration_twice"]
    assert set(either) == {"twin_high", "twin_low", "long_both", "sqlite_only", "migration_twice"}
    assert either.index("sqlite_only") > either.index("twin_low")
    # Term frequency: three mentions beat one in a document of similar length.
    assert names(find("migration", "--limit", "3").result, corpus)[0] == "migration_twice"
    assert names(find("sqlite NOT migration").result, corpus) == ["sqlite_only"]
    assert names(find('"storage engine"').result, corpus) == ["sqlite_only"]
    assert names(find("stor*").result, corpus) == ["sqlite_only"]
    assert names(find("NEAR(deploy fridays, 5)").result, corpus) == ["deploy"]


def test_ties_on_score_and_importance_break_by_id() -> None:
    made = [retain("identical words here")["id"] for _ in range(6)]
    assert ids(find("identical").result) == sorted(made)
    assert ids(find("identical", "--order", "desc").result) == sorted(made, reverse=True)


@pytest.mark.parametrize(
    ("content", "query"),
    [
        ("Café crème brûlée at the office", "cafe"),
        ("Café crème brûlée at the office", "CAFÉ"),
        ("ΑΘΗΝΑ is the capital", "αθηνα"),
        ("Straße und Übergrößen", "übergrößen"),
        ("我喜欢寿司和拉面", "寿司"),
        ("東京でラーメンを食べた", "ラーメン"),
        ("서울에서 회의가 있습니다", "서울"),
        ("Привет, мир: деплой по пятницам запрещён", "ПЯТНИЦАМ"),
        ("emoji 🚀 launches are fun", "launches"),
    ],
)
def test_unicode_search(content: str, query: str) -> None:
    record = retain(content)
    out = find(query).result
    assert ids(out) == [record["id"]], (content, query, out["mode"])
    assert out["items"][0]["content"] == content
    assert mem("recall", record["id"]).result["memory"]["content"] == content


def test_cjk_substrings_do_not_match_across_words() -> None:
    retain("我喜欢寿司")
    assert find("寿喜").result["total"] == 0


@pytest.mark.parametrize("query", ["node-22", "NODE-22", '"node-22"', "node-22*"])
def test_hyphenated_terms_are_phrases(query: str) -> None:
    hyphen = retain("Pin node-22 for the build image")["id"]
    other = retain("node is installed; 22 tests pass")["id"]  # both words, not as a phrase
    found = ids(find(query).result)
    # As plain words the phrase ranks first and the words still count; as syntax only the phrase.
    assert found == ([hyphen] if '"' in query or "*" in query else [hyphen, other])


@pytest.mark.parametrize(
    ("query", "mode"),
    [
        ("c++ templates", "fts"),
        ("v1.2 release", "fts"),
        ("it's broken", "fts"),
        ("user@localhost", "fts"),
        ("templates AND", "literal"),
        ("(templates OR", "literal"),
        ("(templates", "fts"),  # a parenthesis groups only around an operator: these are words
        ("OR templates", "literal"),
        ("templates NEAR(", "literal"),
    ],
)
def test_unparseable_queries_fall_back_to_literal_search(query: str, mode: str) -> None:
    retain("C++ templates and v1.2 release: it's broken for user@localhost and OR users near here")
    retain("unrelated words only")
    out = find(query)
    assert out.exit == 0, out.stderr
    assert out.result["mode"] == mode
    assert out.result["total"] == 1


@pytest.mark.parametrize("query", ["*", '""', "()", "-", "^", "   "])
def test_queries_with_nothing_searchable_find_nothing(query: str) -> None:
    retain("some content")
    out = find(request={"query": query})
    assert out.exit == 0, out.stderr
    assert out.result["total"] == (1 if not query.strip() else 0)


def test_prepare_quotes_only_what_fts5_cannot_parse() -> None:
    assert search.prepare("sqlite OR migration") == "sqlite OR migration"
    assert search.prepare("node-22 build*") == '"node-22" build*'
    assert search.prepare("(a OR b) NOT c") == "(a OR b) NOT c"
    assert search.prepare('"say ""hi"""') == '"say ""hi"""'
    assert search.prepare("寿司") == '" 寿  司 "'
    assert search.is_syntax("a AND b") and search.is_syntax('"a b"') and search.is_syntax("re*")
    assert not search.is_syntax("cats and dogs or birds not fish") and not search.is_syntax("c++ v1.2")
    assert not search.is_syntax('deploy failed:\nERROR "build 14" already uploaded\nwhat do I bump?')
    assert search.is_syntax("(a OR b) c") and search.is_syntax("(NOT a)")
    assert not search.is_syntax("is the db up (and is it thursday)?")
    assert not search.is_syntax('may I write `buf = malloc(len);` or `log("x")` in the task?')


def test_a_pasted_error_with_quotes_is_searched_as_words() -> None:
    """Several lines are pasted text: as FTS5 syntax its quoted message would have to occur verbatim."""
    bump = retain("Bump the build number in app.json before every App Store upload")["id"]
    pasted = 'upload failed:\nERROR ITMS-90189: "Redundant Binary Upload. Build 14 already exists"\nwhat now?'
    result = find(pasted).result
    assert ids(result) == [bump] and result["mode"] == "fts"


def test_plain_words_are_or_ed_stemmed_and_forgiving() -> None:
    releases = retain("The releases are tagged by the CI job")["id"]
    datenbank = retain("Die Datenbanken laufen auf Postgres 16")["id"]
    uv = retain("Use uv, never pip, in this repository")["id"]
    database = retain("The database schema lives in schema.sql")["id"]
    assert ids(find("release").result) == [releases]  # stems: release ~ releases
    assert ids(find("released tagging").result) == [releases]
    assert ids(find("Datenbank").result) == [datenbank]
    assert ids(find("uv or pip").result) == [uv]  # lowercase "or" is a word, not an operator
    assert ids(find("pip and poetry").result) == [uv]  # one word missing never hides a record
    assert ids(find("databse").result) == [database]  # one or two edits away from a stored word
    assert ids(find("relaeses").result) == [releases]  # a transposition
    assert find("zzzz qqqq").result["total"] == 0


def test_an_existing_store_without_stems_still_answers_and_migrates_on_write(state_root: Path) -> None:
    import sqlite3

    from habitus.state import memory_store

    path = state_root / "memory.sqlite"
    state_root.mkdir(exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT"
    )
    for number, migration in enumerate(memory_store.MIGRATIONS[:4], 1):
        migration.apply(conn)
        conn.execute(
            "INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00.000Z')",
            (number, migration.name),
        )
    conn.execute("PRAGMA user_version = 4")
    record = memory_helpers.full_record(content="The releases are tagged by the CI job")
    from habitus.memory import records

    row = records.to_row(record)
    conn.execute(f"INSERT INTO memories ({records.ROW_COLUMNS}) VALUES ({', '.join('?' for _ in row)})", row)
    conn.execute("INSERT INTO memories_fts (rowid, body) VALUES (1, ?)", (record["content"],))
    conn.commit()
    conn.close()
    os_path = str(path)
    assert ids(find("releases tagged").result) == [record["id"]]  # read as it is: no stems yet
    assert find("releasing").result["total"] == 0  # (3 edits from "releases")
    assert (
        sqlite3.connect(os_path).execute("PRAGMA user_version").fetchone()[0] == 4
    )  # reading never migrates
    assert mem("verify").exit == 0
    retain("another note")  # a write migrates: the FTS table gains its stems
    assert sqlite3.connect(os_path).execute("PRAGMA user_version").fetchone()[0] == len(
        memory_store.MIGRATIONS
    )
    assert ids(find("releasing").result) == [record["id"]]
    assert mem("verify").exit == 0


def test_filters() -> None:
    a = retain("alpha deploy", kind="decision", namespace="ops", tags=["deploy", "prod"], importance=0.9)[
        "id"
    ]
    b = retain("beta deploy", kind="note", namespace="ops", tags=["deploy"], importance=0.4, confidence=0.5)[
        "id"
    ]
    c = retain("gamma deploy", kind="fact", namespace="web", tags=["prod"], metadata={"source": "pi"})["id"]

    def found(**selector: Any) -> set[str]:
        out = find(request=selector)
        assert out.exit == 0, out.stderr
        return set(ids(out.result))

    assert found(query="deploy") == {a, b, c}
    assert found(kind="decision") == {a}
    assert found(kind=["decision", "fact"]) == {a, c}
    assert found(namespace="ops") == {a, b}
    assert found(tags=["deploy"]) == {a, b}
    assert found(tags=["deploy", "prod"]) == {a}
    assert found(source="pi") == {c}
    assert found(importance={"gte": 0.5}) == {a, c}
    assert found(importance={"gt": 0.4, "lt": 0.9}) == {c}
    assert found(importance=0.4) == {b}
    assert found(confidence={"lte": 0.5}) == {b}
    assert found(scope="global") == {a, b, c}
    assert found(scope="project") == set()
    flags = find("deploy", "--kind", "note", "--kind", "fact", "--importance-lte", "0.5").result
    assert set(ids(flags)) == {b, c}
    assert set(ids(find("--tag", "prod", "--source", "pi").result)) == {c}


@pytest.mark.parametrize(
    ("selector", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
        ({"limit": "5"}, "limit"),
        ({"offset": -1}, "offset"),
        ({"order_by": "relevance"}, "order_by"),
        ({"order_by": "content"}, "order_by"),
        ({"order": "up"}, "order"),
        ({"query": "x", "removed": "only"}, "removed"),
        ({"importance": {"ge": 0.5}}, "importance.ge"),
        ({"importance": {}}, "importance"),
        ({"confidence": {"lt": 2}}, "confidence.lt"),
        ({"kind": ["note", "thought"]}, "kind[1]"),
        ({"tags": ["Bad"]}, "tags[0]"),
        ({"expires": "soon"}, "expires"),
        ({"query": 5}, "query"),
        ({"source": ""}, "source"),
    ],
)
def test_bad_selectors_are_refused(selector: dict, field: str) -> None:
    out = find(request=selector)
    assert out.exit == 2 and out.error["code"] == "bad_request"
    assert out.error["message"].startswith(f"request.{field}:"), out.error["message"]


def test_ordering_and_paging() -> None:
    made = [retain(f"paging record {i}", importance=i / 10)["id"] for i in range(7)]
    newest_first = ids(find("--limit", "100").result)
    assert newest_first == list(reversed(made))  # updated_at desc is the default without a query
    by_importance = ids(find("--order-by", "importance", "--order", "asc").result)
    assert by_importance == made
    by_id = ids(find("--order-by", "id").result)
    assert by_id == sorted(made)
    pages = []
    for offset in range(0, 7, 3):
        page = find("paging", "--limit", "3", "--offset", str(offset)).result
        assert page["total"] == 7
        pages += ids(page)
    assert pages == ids(find("paging", "--limit", "7").result)
    beyond = find("paging", "--offset", "50").result
    assert beyond["total"] == 7 and beyond["items"] == []


def test_both_returns_project_then_global_with_shared_paging(repo: Path) -> None:
    glob = [retain(f"shared topic global {i}")["id"] for i in range(3)]
    proj = [retain(f"shared topic project {i}", "--store", "project")["id"] for i in range(2)]
    out = find("shared topic", "--both").result
    assert out["total"] == 5
    assert [item["store"] for item in out["items"]] == ["project"] * 2 + ["global"] * 3
    assert set(ids(out)[:2]) == set(proj) and set(ids(out)[2:]) == set(glob)
    assert out["stores"]["project"]["total"] == 2 and out["stores"]["global"]["total"] == 3
    page = find("shared topic", "--both", "--limit", "2", "--offset", "1").result
    assert ids(page) == ids(out)[1:3] and page["total"] == 5
    tail = find("shared topic", "--both", "--limit", "2", "--offset", "4").result
    assert ids(tail) == ids(out)[4:]
    assert find("x", "--both", "--store", "global").error["code"] == "usage"


def test_large_results_are_summarised_under_50_kib(state_root: Path) -> None:
    texts = {
        retain(f"bulky {i} " + "word " * 2000)["id"]: (f"bulky {i} " + "word " * 2000).strip()
        for i in range(30)
    }
    out = find("bulky", "--limit", "30")
    assert len(out.stdout) <= 51_200
    result = out.result
    assert result["truncated"] is True and result["total"] == 30 and result["returned"] == 30
    assert result["bytes"] > 51_200
    assert set(ids(result)) == set(texts)
    assert all(len(item["preview"]) <= 240 and item["content_chars"] > 10_000 for item in result["items"])
    assert all(texts[item["id"]].startswith(item["preview"].rstrip("…")) for item in result["items"])
    full = find("bulky", "--limit", "30", "--full")
    assert "truncated" not in full.result and len(full.stdout) > 51_200
    assert {item["id"]: item["content"] for item in full.result["items"]} == texts


def test_summary_drops_trailing_items_when_previews_do_not_fit() -> None:
    from habitus.memory.bound import bound

    items = [
        {"store": "global", "id": f"{i:036d}", "kind": "note", "content": "z" * 500} for i in range(1000)
    ]
    summary = bound({"total": 1000, "items": items})
    assert summary["truncated"] is True
    assert len(orjson.dumps(summary)) <= 51_200
    assert summary["omitted"] == 1000 - len(summary["items"]) > 0
    assert [item["id"] for item in summary["items"]] == [f"{i:036d}" for i in range(len(summary["items"]))]
