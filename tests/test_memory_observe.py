"""Observational memory: observe (rubric, watermark, chunks), reflect, prune (passes and invariants)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memory_helpers
from conftest import SHARED, needs_shared
from habitus.errors import HabitusError
from habitus.memory import observe, prune, reflect, stores
from habitus.memory.observe import Message, Proposal
from habitus.state.root import StateRoot
from memory_helpers import mem, retain

outside_any_repo = memory_helpers.outside_any_repo  # a fixture

CHAT = [
    ("user", "Please port user-message-selector.ts to the new theme system."),
    ("assistant", "I'll read theme.ts first. Let me look at the selectors."),
    ("tool", "export const theme = {}\nmore"),
    ("tool", "npm test\nError: Cannot find module 'chalk'\n    at load"),
    ("user", "no, that's not it. Use rgb values in the themes, no rgb indices!"),
    ("user", "I prefer tabs over spaces in every file."),
    ("assistant", "I've fixed the selector and all tests pass now."),
    ("user", "ok"),
    ("user", "We must not touch the legacy renderer."),
    ("user", "The renderer lives in src/tui."),
    ("user", "why does the border flicker?"),
]
EXPECTED = [
    ("medium", "User: Please port user-message-selector.ts to the new theme system.", False, False),
    ("medium", "Assistant: I'll read theme.ts first. Let me look at the selectors.", False, False),
    ("high", "Tool bash failed", False, False),  # tool output never becomes memory: only that it failed
    ("critical", "User: no, that's not it. Use rgb values in the themes, no rgb indices!", True, False),
    ("critical", "User: I prefer tabs over spaces in every file.", True, False),
    ("critical", "Assistant completed: I've fixed the selector and all tests pass now.", False, True),
    ("low", "User: ok", False, False),
    ("high", "User: We must not touch the legacy renderer.", True, False),
    ("medium", "User: The renderer lives in src/tui.", True, False),
    ("medium", "User: why does the border flicker?", False, False),
]


def chat_request(stream: str = "s1", start: int = 0, chat: list[tuple[str, str]] = CHAT) -> dict[str, Any]:
    messages = []
    for index, (role, body) in enumerate(chat):
        message: dict[str, Any] = {"role": role, "text": body, "at": f"2030-01-01T10:00:{index:02d}.000Z"}
        if role == "tool":
            message["tool"] = "read" if index == 2 else "bash"
        messages.append(message)
    return {"stream": stream, "start": start, "messages": messages}


def test_observe_rates_messages_by_the_rubric(state_root: Path) -> None:
    out = mem("observe", request=chat_request())
    assert out.exit == 0, out.stderr
    result = out.result
    assert result["observed"] == len(EXPECTED) and result["remaining"] == 0
    assert result["watermark"] == {"before": 0, "after": len(CHAT)}
    got = [
        (i["relevance"], i["content"], i["metadata"]["assertion"], i["metadata"]["completion"])
        for i in result["items"]
    ]
    assert got == EXPECTED
    first = result["items"][0]
    assert first["kind"] == "observation" and first["metadata"]["stream"] == "s1"
    assert first["metadata"]["at"] == "2030-01-01T10:00:00.000Z" and first["metadata"]["position"] == 0
    assert all("\n" not in i["content"] for i in result["items"])
    # the observations are ordinary memories: searchable, but kept out of the index's recent rows
    assert mem("retrieve", "rgb indices", "--kind", "observation", "--no-hybrid").result["total"] == 1
    assert "rgb" in mem("retrieve", "rgb indices", "--kind", "observation").result["items"][0]["content"]
    assert mem("index").result["rows"] == 0


def test_the_watermark_skips_what_was_observed_and_always_advances(state_root: Path) -> None:
    assert mem("observe", request=chat_request()).result["observed"] == len(EXPECTED)
    again = mem("observe", request=chat_request()).result
    assert again["observed"] == 0 and again["watermark"] == {"before": len(CHAT), "after": len(CHAT)}
    # the transcript grew: only the new tail is read
    grown = [*CHAT, ("user", "Always run the linter before committing.")]
    tail = mem("observe", request=chat_request(chat=grown)).result
    assert [i["content"] for i in tail["items"]] == ["User: Always run the linter before committing."]
    # a run that finds nothing worth observing still advances
    blank = mem("observe", request={"stream": "s2", "messages": [{"role": "user", "text": "   "}] * 3}).result
    assert blank["observed"] == 0 and blank["watermark"] == {"before": 0, "after": 3}
    # another stream has its own watermark
    assert mem("observe", request=chat_request(stream="s3")).result["observed"] == len(EXPECTED)


def test_chunks_are_bounded_and_the_rest_waits(state_root: Path) -> None:
    long_chat = [("user", f"Note {i}: " + "detail " * 150) for i in range(10)]  # about 1,060 chars each
    seen: list[str] = []
    runs = 0
    while runs < 20:
        runs += 1
        result = mem("observe", "--chunk-chars", "2500", request=chat_request(chat=long_chat)).result
        seen += [i["content"] for i in result["items"]]
        assert len(result["items"]) <= 2
        if result["remaining"] == 0 and result["watermark"]["after"] == 10:
            break
    assert runs == 5 and len(seen) == 10


def test_a_tool_results_error_flag_wins_over_its_words(state_root: Path) -> None:
    messages = [
        {"role": "tool", "tool": "read", "text": "| `error` | Error states |", "error": False},
        {"role": "tool", "tool": "bash", "text": "exit status 2", "error": True},
        {"role": "tool", "tool": "bash", "text": "Error: ENOENT"},
    ]
    result = mem("observe", request={"messages": messages}).result
    # read did not fail: no observation (tool output never becomes memory); bash failed, twice
    assert [(i["relevance"], i["content"]) for i in result["items"]] == [("high", "Tool bash failed")]
    assert result["duplicates"] == 1
    bad = mem("observe", request={"messages": [{"role": "tool", "text": "x", "error": "yes"}]})
    assert bad.exit == 2 and bad.error["message"].startswith("request.messages[0].error:")


def test_duplicates_are_skipped(state_root: Path) -> None:
    chat = [("user", "I prefer tabs."), ("user", "i prefer   TABS!"), ("user", "I prefer tabs.")]
    result = mem("observe", request=chat_request(chat=chat)).result
    assert result["observed"] == 1 and result["duplicates"] == 2


class FailingObserver:
    name = "model:test"

    def observe(self, messages: list[Message], known: list[str]) -> list[Proposal]:
        raise HabitusError("model_error", "the model timed out")


class SloppyObserver:
    name = "model:sloppy"

    def observe(self, messages: list[Message], known: list[str]) -> list[Proposal]:
        at = messages[0].at
        return [
            Proposal("two\nlines  of   text", "high", at, "user", messages[0].position),
            Proposal("unknown relevance", "urgent", at, "user", messages[0].position),
            Proposal("outside the chunk", "low", at, "user", 999),
            Proposal("x" * 1000, "low", at, "assistant", messages[1].position, assertion=True),
            Proposal("bad time", "low", "yesterday", "user", messages[0].position),
            Proposal("not who said it", "low", at, "assistant", messages[0].position),
        ]


def test_a_failed_observer_still_advances_the_watermark(state_root: Path) -> None:
    store = stores.open_store(StateRoot(state_root), "global", wait=5)
    with pytest.raises(HabitusError) as caught:
        observe.observe(store, chat_request(), chunk_chars=60_000, observer=FailingObserver())
    assert caught.value.code == "model_error"
    assert observe.watermark(store, "observe", "s1") == len(CHAT)
    row = store.writer().execute("SELECT runs, last_error FROM memory_watermarks").fetchone()
    assert tuple(row) == (1, "model_error")  # the code, and a model's reason when it gives one
    retry = observe.observe(store, chat_request(), chunk_chars=60_000)
    assert retry["observed"] == 0 and retry["watermark"]["before"] == len(CHAT)
    store.close()


def test_invariants_hold_whatever_an_observer_proposes(state_root: Path) -> None:
    store = stores.open_store(StateRoot(state_root), "global", wait=5)
    result = observe.observe(store, chat_request(), chunk_chars=60_000, observer=SloppyObserver())
    store.close()
    contents = [i["content"] for i in result["items"]]
    assert contents == ["two lines of text", "x" * 279 + "…"]
    # only a user's statement is an assertion, whatever the observer says
    assert [i["metadata"]["assertion"] for i in result["items"]] == [False, False]


@pytest.mark.parametrize(
    ("request_body", "field"),
    [
        ({"messages": "hello"}, "messages"),
        ({}, "messages"),
        ({"messages": [{"role": "system", "text": "x"}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "text": 3}]}, "messages[0].text"),
        ({"messages": [{"role": "user", "text": "x", "at": "now"}]}, "messages[0].at"),
        ({"messages": [{"role": "tool", "text": "x", "tool": ""}]}, "messages[0].tool"),
        ({"messages": [], "start": -1}, "start"),
        ({"messages": [], "stream": "has space"}, "stream"),
        ({"messages": [7]}, "messages[0]"),
    ],
)
def test_bad_observe_requests_are_refused(state_root: Path, request_body: dict, field: str) -> None:
    out = mem("observe", request=request_body)
    assert out.exit == 2 and out.error["code"] == "bad_request"
    assert out.error["message"].startswith(f"request.{field}:"), out.error["message"]
    assert not state_root.exists()


def test_reflect_crystallises_assertions_and_recurring_topics(state_root: Path) -> None:
    chat = [
        *CHAT,
        ("user", "The theme loader belongs in the settings dialog."),
        ("user", "The theme loader belongs in the settings page."),
    ]
    observed = mem("observe", request=chat_request(chat=chat)).result["items"]
    out = mem("reflect", "--stream", "s1")
    assert out.exit == 0, out.stderr
    result = out.result
    contents = [i["content"] for i in result["items"]]
    assert contents == [
        "Correction: no, that's not it. Use rgb values in the themes, no rgb indices!",
        "Preference: I prefer tabs over spaces in every file.",
        "Constraint: We must not touch the legacy renderer.",
        "Recurring: The theme loader belongs in the settings page.",
    ]
    by_content = {i["content"]: i["id"] for i in observed}
    assert result["items"][1]["metadata"]["supporting"] == [
        by_content["User: I prefer tabs over spaces in every file."]
    ]
    assert len(result["items"][3]["metadata"]["supporting"]) == 2
    assert all(i["kind"] == "reflection" and i["relevance"] is None for i in result["items"])
    assert result["watermark"]["after"] > result["watermark"]["before"] == 0
    again = mem("reflect", "--stream", "s1").result
    assert again["reflected"] == 0 and again["considered"] == 0
    # a restated preference later does not produce a second reflection
    later = [*chat, ("user", "I prefer tabs over spaces in every file!")]
    mem("observe", request=chat_request(chat=later))
    assert mem("reflect", "--stream", "s1").result["reflected"] == 0
    # reflections are durable facts: the index lists them
    index = mem("index").result["text"]
    assert "Preference: I prefer tabs over spaces in every file." in index


def test_reflect_on_a_missing_store_creates_nothing(state_root: Path) -> None:
    assert mem("reflect").result["reflected"] == 0
    assert mem("prune", "--budget", "10").result["dropped"] == []
    assert not state_root.exists()


def obs(content: str, relevance: str, at: int, role: str = "assistant", **meta: Any) -> str:
    metadata = {"source": "observe", "stream": "p", "role": role, "at": f"2030-01-01T10:{at:02d}:00.000Z",
                "position": at, "assertion": False, "completion": False, "signals": [], **meta}  # fmt: skip
    return retain(content, kind="observation", relevance=relevance, metadata=metadata)["id"]


def build_pool() -> dict[str, str]:
    made = {
        "old_medium": obs("Assistant: looked at the layout code", "medium", 1),
        "dup_a": obs("Tool ls: src tests", "low", 2, role="tool"),
        "tool_1": obs("Tool cat: first file", "low", 3, role="tool"),
        "tool_2": obs("Tool cat: second file", "low", 4, role="tool"),
        "covered": obs("Assistant: theme colours are hex values", "low", 5),
        "critical": obs("User: never force-push", "critical", 6, role="user", assertion=True),
        "assertion": obs("User: the api lives in src/api", "medium", 7, role="user", assertion=True),
        "completion": obs("Assistant completed: fixed the parser", "high", 8, completion=True),
        "superseded": obs("Assistant: build fails with 3 errors in the parser module", "high", 9),
        "dup_b": obs("tool LS: src, tests", "low", 10, role="tool"),
        "newer": obs("Assistant: build fails with 1 error in the parser module", "high", 11),
        "ack": obs("User: ok", "low", 12, role="user", signals=["ack"]),
        "recent_medium": obs("Assistant: next step is the status bar", "medium", 13),
    }
    retain(
        "Fact: theme colours are hex values", kind="reflection",
        metadata={"source": "reflect", "stream": "p", "supporting": []},
    )  # fmt: skip
    return made


PROTECTED = {"critical", "assertion", "completion"}


def test_prune_runs_passes_in_order_and_never_drops_the_protected(state_root: Path) -> None:
    made = build_pool()
    plan = mem("prune", "--stream", "p", "--budget", "0", "--dry-run").result
    assert plan["dry_run"] is True and plan["within_budget"] is False
    names = {v: k for k, v in made.items()}
    dropped = [(names[d["id"]], d["pass"], d["reason"]) for d in plan["dropped"]]
    assert dropped == [
        ("dup_a", 1, "duplicate"),
        ("superseded", 1, "superseded"),
        ("ack", 1, "acknowledgement"),
        ("covered", 2, "covered by a reflection"),
        ("tool_1", 2, "tool run"),  # the last of the run stays in pass 2
        ("tool_2", 3, "old, low"),
        ("old_medium", 3, "old, medium"),
    ]
    assert [p["pass"] for p in plan["passes"]] == [1, 2, 3]
    assert not PROTECTED & {name for name, _, _ in dropped}
    # a dry run changed nothing
    assert mem("retrieve", "--kind", "observation", "--limit", "100").result["total"] == len(made)
    # a budget the first pass reaches stops there
    total = plan["before_tokens"]
    first = mem("prune", "--stream", "p", "--budget", str(total - 1), "--dry-run").result
    assert [names[d["id"]] for d in first["dropped"]] == ["dup_a"] and first["within_budget"] is True
    assert len(first["passes"]) == 1
    # for real: soft removal with the reason recorded, restorable
    done = mem("prune", "--stream", "p", "--budget", "0").result
    assert done["dropped"] == plan["dropped"] and done["after_tokens"] == plan["after_tokens"]
    left = {
        names[i["id"]] for i in mem("retrieve", "--kind", "observation", "--limit", "100").result["items"]
    }
    assert left == PROTECTED | {"dup_b", "newer", "recent_medium"}
    removed = mem("retrieve", "--kind", "observation", "--removed", "only", "--limit", "100").result["items"]
    assert {i["metadata"]["pruned"]["pass_number"] for i in removed} == {1, 2, 3}
    assert mem("retain", request={"id": made["ack"]}).result["restored"] is True
    assert mem("verify").exit == 0


def test_prune_budget_defaults_to_the_setting_and_is_validated(state_root: Path) -> None:
    build_pool()
    result = mem("prune", "--stream", "p", "--dry-run").result
    assert result["budget"] == 10_000 and result["dropped"] == [] and result["within_budget"] is True
    bad = mem("prune", request={"stream": "p", "budget": -5})
    assert bad.exit == 2 and bad.error["code"] == "bad_request"


RELEVANCES = st.sampled_from(["low", "medium", "high", "critical"])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pool=st.lists(
        st.tuples(
            st.sampled_from(["a b c", "a b d", "x y", "tool out", "ok"]),
            RELEVANCES,
            st.booleans(),
            st.booleans(),
            st.sampled_from(["user", "assistant", "tool"]),
        ),
        min_size=1,
        max_size=25,
    ),
    budget=st.integers(0, 400),
)
def test_prune_invariants_property(pool: list[tuple[str, str, bool, bool, str]], budget: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = stores.open_store(StateRoot(Path(folder)), "global", wait=5)
        from habitus.memory import core

        protected = set()
        for index, (words, relevance, assertion, completion, role) in enumerate(pool):
            meta = {"source": "observe", "stream": "q", "role": role, "at": f"2030-01-01T10:{index:02d}:00.000Z",
                    "position": index, "assertion": assertion, "completion": completion,
                    "signals": ["ack"] if words == "ok" else []}  # fmt: skip
            record = core.retain(
                store,
                {
                    "content": f"{words} {index % 3}",
                    "kind": "observation",
                    "relevance": relevance,
                    "metadata": meta,
                },
            )["memory"]
            if relevance == "critical" or assertion or completion:
                protected.add(record["id"])
        result = prune.prune(store, {"stream": "q"}, budget=budget)
        remaining = reflect.load(store.writer(), "q")
        store.close()
    dropped = {d["id"] for d in result["dropped"]}
    assert not dropped & protected
    assert result["after_tokens"] == sum(prune.line_tokens(o) for o in remaining)
    assert len(remaining) == len(pool) - len(dropped)
    assert result["within_budget"] == (result["after_tokens"] <= budget)
    assert len(result["passes"]) <= 3
    if result["before_tokens"] <= budget:
        assert dropped == set()


# -- a real transcript -----------------------------------------------------------------------------


def pi_messages(path: Path) -> list[dict[str, Any]]:
    """The user/assistant/tool messages of a Pi session file (a test-local reader: the production
    transcript readers belong to the harness adapters)."""
    out = []
    for line in path.read_bytes().splitlines():
        entry = orjson.loads(line)
        if entry.get("type") != "message":
            continue
        message = entry["message"]
        role = {"user": "user", "assistant": "assistant", "toolResult": "tool"}.get(message.get("role"))
        content = message.get("content")
        body = content if isinstance(content, str) else " ".join(
            b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
        )  # fmt: skip
        if role is None or not body.strip():
            continue
        item = {"role": role, "text": body, "at": entry["timestamp"]}
        if role == "tool":
            item["tool"] = str(message.get("toolName") or "tool")[:64]
            item["error"] = message.get("isError") is True
        out.append(item)
    return out


@needs_shared
def test_a_real_pi_session_observed_reflected_and_pruned(state_root: Path) -> None:
    messages = pi_messages(SHARED / "fixtures" / "transcripts" / "pi" / "large-session.jsonl")
    assert len(messages) > 500
    request = {"stream": "pi-large", "messages": messages}
    runs = 0
    while True:
        runs += 1
        result = mem("observe", request=request).result
        if result["remaining"] == 0:
            break
    assert runs > 1  # the session is larger than one chunk
    assert result["watermark"]["after"] == len(messages)
    everything = mem("retrieve", "--kind", "observation", "--limit", "1000", "--full").result
    items = everything["items"]
    by_text = {i["content"]: i for i in items}
    correction = next(c for c in by_text if "no rgb indices" in c)
    assert (
        by_text[correction]["relevance"] == "critical"
        and by_text[correction]["metadata"]["assertion"] is True
    )
    assert sum(1 for i in items if i["relevance"] == "critical") < len(items) / 3  # not critical by default
    reflected = mem("reflect", "--stream", "pi-large").result
    assert any("no rgb indices" in i["content"] for i in reflected["items"])
    protected = {
        i["id"]
        for i in items
        if i["relevance"] == "critical" or i["metadata"]["assertion"] or i["metadata"]["completion"]
    }
    pruned = mem("prune", "--stream", "pi-large", "--budget", "3000").result
    assert pruned["after_tokens"] < pruned["before_tokens"]
    assert not protected & {d["id"] for d in pruned["dropped"]}
    left = {
        i["id"] for i in mem("retrieve", "--kind", "observation", "--limit", "1000", "--full").result["items"]
    }
    assert protected <= left
    assert mem("verify").exit == 0


# -- embedding similarity ----------------------------------------------------------------------------

PARAPHRASES = [
    ("user", "create a custom theme for me then open it with the code command"),
    ("assistant", "Created the theme."),
    ("user", "ok, create a new custom theme and open it with code command."),
    ("user", "write some markdown here in chat, anything you can do in markdown"),
]


def test_embeddings_find_a_recurring_topic_that_words_miss(state_root: Path) -> None:
    from habitus.memory import semantic, text
    from habitus.models.embedders import load_embedder

    mem("observe", request=chat_request(chat=PARAPHRASES))
    store = stores.open_store(StateRoot(state_root), "global", wait=5)
    words = reflect.reflect(store, {"stream": "s1"}, measure=text.WORDS, now="2030-01-02T00:00:00.000Z")
    assert words["reflected"] == 0 and words["similarity"] == "words"
    conn = store.writer()
    conn.execute("DELETE FROM memory_watermarks WHERE job = 'reflect'")  # consider them again
    measure = semantic.EmbeddingMeasure(load_embedder(StateRoot(state_root), calibrated="minilm"))
    found = reflect.reflect(store, {"stream": "s1"}, measure=measure)
    store.close()
    assert found["similarity"] == "words+embeddings"
    assert [i["content"] for i in found["items"]] == [
        "Recurring: ok, create a new custom theme and open it with code command."
    ]
    assert len(found["items"][0]["metadata"]["supporting"]) == 2
    # a paraphrase of an existing reflection is a restatement; a different fact is not
    existing = ["Preference: tabs over spaces in every file"]
    proposals = [
        reflect.ReflectionProposal("Preference: use tabs instead of spaces in all files", ["x"]),
        reflect.ReflectionProposal("Preference: never push to main", ["x"]),
    ]
    obs = [reflect.Observation(1, "x", "c", "high", "2030", "user", 0, True, False, [], {})]
    assert [p.content for p in reflect.accept(proposals, obs, existing, measure)] == [
        "Preference: never push to main"
    ]
    assert len(reflect.accept(proposals, obs, existing, text.WORDS)) == 2


def test_reflect_and_prune_say_which_similarity_they_used(state_root: Path) -> None:
    from habitus.state import config as configuration

    mem("observe", request=chat_request(chat=PARAPHRASES))
    assert mem("reflect", "--stream", "s1").result["similarity"] == "words+embeddings"
    assert mem("prune", "--stream", "s1", "--dry-run").result["similarity"] == "words+embeddings"
    configuration.set_value(StateRoot(state_root), "embed.model", "gone", wait=5)
    fallback = mem("reflect", "--stream", "s1").result
    assert fallback["similarity"] == "words" and fallback["similarity_error"] == "model_unavailable"
