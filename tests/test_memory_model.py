"""Observational memory with a configured language model (scripted: a loopback server or a program).

The model only proposes; the invariants are enforced in code whatever it answers: cited messages and
observations must be ones it was shown, only a user's statement is an assertion, critical observations,
user assertions and completions are never dropped, and a failed or empty run still advances.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import memory_helpers
from habitus.state import config as configuration
from habitus.state.root import StateRoot
from memory_helpers import claude_transcript, mem
from model_doubles import INJECTIONS, CommandModel, ModelServer, Reply, Step, configure

outside_any_repo = memory_helpers.outside_any_repo  # a fixture

SECRET = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
CHAT = [
    ("user", "I am colorblind, so red/green status colours do not work for me."),
    ("assistant", f"I'll switch to symbols. Pushing with {SECRET} now."),
    ("tool", "npm test\nError: Cannot find module 'chalk'"),
    ("user", "why does the border flicker?"),
]


@pytest.fixture(autouse=True)
def quick_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("habitus.models.call.RETRY_DELAY_S", 0.01)


def chat_request(stream: str = "s1", chat: list[tuple[str, str]] = CHAT) -> dict[str, Any]:
    messages = []
    for index, (role, body) in enumerate(chat):
        message: dict[str, Any] = {"role": role, "text": body, "at": f"2030-01-01T10:{index:02d}:30.000Z"}
        if role == "tool":
            message["tool"] = "bash"
        messages.append(message)
    return {"stream": stream, "messages": messages}


def use_model(root: Path, url: str, **extra: Any) -> None:
    configure(root, "m", kind="openai", url=url, model="test-model", **extra)
    configuration.set_value(StateRoot.at(root), "memory.model", "m", wait=5)


def observation(message: int, content: str, relevance: str = "medium", **flags: bool) -> dict[str, Any]:
    return {
        "message": message,
        "content": content,
        "relevance": relevance,
        "assertion": flags.get("assertion", False),
        "completion": flags.get("completion", False),
    }


def sent(server: ModelServer, index: int = 0) -> dict[str, Any]:
    """The `user` object the model received in request `index`."""
    return json.loads(server.requests[index].json["messages"][1]["content"])


def watermark_row(root: Path, job: str = "observe", stream: str = "s1") -> tuple[int, str | None, int]:
    conn = memory_helpers.connect(root / "memory.sqlite")
    row = conn.execute(
        "SELECT position, last_error, runs FROM memory_watermarks WHERE job = ? AND stream = ?", (job, stream)
    ).fetchone()
    conn.close()
    return tuple(row)  # type: ignore[return-value]


# -- observe ---------------------------------------------------------------------------------------


def test_a_model_observes_and_the_invariants_still_hold(state_root: Path) -> None:
    answer = {
        "schema_version": 1,
        "observations": [
            observation(
                1, "User stated they are colorblind; red/green does not work.", "critical", assertion=True
            ),
            observation(2, "Assistant stated it will switch to symbols.", "low", assertion=True),
            observation(3, "npm test failed: Cannot find module 'chalk'.", "high"),
            observation(9, "A message the model was never shown.", "high"),
            observation(4, "User asked why the border flickers.", "medium"),
            observation(4, "user asked why the border FLICKERS", "medium"),  # a duplicate
        ],
    }
    with ModelServer([Reply.answer("openai", answer)]) as server:
        use_model(state_root, server.url("/v1"))
        out = mem("observe", request=chat_request())
        assert out.exit == 0, out.stderr
        user = sent(server)
        system = server.requests[0].json["messages"][0]["content"]
    result = out.result
    assert result["observer"] == "model:m" and result["observed"] == 4 and result["duplicates"] == 1
    assert result["watermark"] == {"before": 0, "after": 4}
    items = result["items"]
    assert [i["metadata"]["position"] for i in items] == [0, 1, 2, 3]
    # timestamps come from the cited message, never from the model
    assert [i["metadata"]["at"] for i in items] == [f"2030-01-01T10:{n:02d}:30.000Z" for n in range(4)]
    assert [i["metadata"]["assertion"] for i in items] == [True, False, False, False]  # not the assistant's
    assert [i["relevance"] for i in items] == ["critical", "low", "high", "medium"]
    # the model got numbered, redacted messages and the rubric; never the secret
    assert [m["n"] for m in user["messages"]] == [1, 2, 3, 4] and user["known"] == []
    assert SECRET not in json.dumps(user) and "[REDACTED:github_token]" in user["messages"][1]["text"]
    assert user["messages"][2] == {"n": 3, "role": "tool", "at": "2030-01-01 10:02", "tool": "bash",
                                   "text": "(tool output withheld)"}  # fmt: skip
    assert "critical" in system and "Do not default to critical" in system


def test_the_model_is_told_what_is_already_known(state_root: Path) -> None:
    empty = {"schema_version": 1, "observations": []}
    with ModelServer([Reply.answer("openai", {"schema_version": 1, "observations": [
        observation(1, "User stated they are colorblind.", "critical", assertion=True)]}),
        Reply.answer("openai", empty)]) as server:  # fmt: skip
        use_model(state_root, server.url("/v1"))
        mem("observe", request=chat_request(chat=CHAT[:1]))
        second = mem("observe", request=chat_request(chat=[*CHAT[:1], ("user", "thanks")])).result
        known = sent(server, 1)["known"]
    assert known == ["2030-01-01 10:00 [critical] User stated they are colorblind."]
    assert second["observed"] == 0 and second["watermark"] == {"before": 1, "after": 2}


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply.answer("openai", {"schema_version": 1, "observations": [{"message": 1}]}), "schema_invalid"),
        (
            Reply.answer("openai", {"schema_version": 1, "observations": [observation(1, "two\nlines")]}),
            "schema_invalid",
        ),
        (Reply.answer("openai", "I observed that the user is colorblind."), "not_json"),
        (
            Reply.answer("openai", {"schema_version": 1, "observations": [observation(1, INJECTIONS[0])]}),
            "injection",
        ),
        (
            Reply.answer("openai", {"schema_version": 1, "observations": [observation(1, INJECTIONS[4])]}),
            "injection",
        ),
        (Reply.status_only(500), "http_status"),
    ],
)
def test_a_failed_model_run_changes_nothing_but_still_advances(
    state_root: Path, reply: Reply, reason: str
) -> None:
    with ModelServer([reply]) as server:
        use_model(state_root, server.url("/v1"))
        out = mem("observe", request=chat_request())
    assert out.exit == 1 and out.error["code"] == "model_error" and out.error["reason"] == reason
    assert watermark_row(state_root) == (len(CHAT), f"model_error:{reason}", 1)
    assert mem("retrieve", "--kind", "observation").result["total"] == 0
    # the next run does not re-read the chunk (the observer-stuck failure of the reference system)
    again = mem("observe", request=chat_request())
    assert again.exit == 0 and again.result["watermark"] == {"before": len(CHAT), "after": len(CHAT)}


def test_a_timeout_still_advances(state_root: Path) -> None:
    with ModelServer([Reply.slow("openai", 5)]) as server:
        use_model(state_root, server.url("/v1"), timeout_s=1)
        out = mem("observe", request=chat_request())
    assert out.exit == 1 and out.error["reason"] == "timeout"
    assert watermark_row(state_root)[:2] == (len(CHAT), "model_error:timeout")


def test_an_empty_answer_is_a_successful_run(state_root: Path) -> None:
    with ModelServer([Reply.answer("openai", {"schema_version": 1, "observations": []})]) as server:
        use_model(state_root, server.url("/v1"))
        out = mem("observe", request=chat_request())
    assert out.exit == 0 and out.result["observed"] == 0
    assert watermark_row(state_root) == (len(CHAT), None, 1)


def test_chunks_are_bounded_by_the_models_context(state_root: Path) -> None:
    chat = [("user", f"Note {i}: " + "detail " * 100) for i in range(10)]  # about 710 chars each
    empty = {"schema_version": 1, "observations": []}
    with ModelServer([Reply.answer("openai", empty)]) as server:
        use_model(state_root, server.url("/v1"), context_tokens=2000)  # 20% = 1,600 characters
        first = mem("observe", "--chunk-chars", "50000", request=chat_request(chat=chat)).result
        shown = sent(server)["messages"]
    assert len(shown) == 2 and sum(len(m["text"]) for m in shown) <= 1600
    assert first["watermark"] == {"before": 0, "after": 2} and first["remaining"] == 8


def test_a_missing_model_table_fails_before_reading(state_root: Path) -> None:
    configuration.set_value(StateRoot.at(state_root), "memory.model", "gone", wait=5)
    out = mem("observe", request=chat_request())
    assert out.exit == 1 and out.error["code"] == "model_error" and out.error["reason"] == "not_configured"
    assert not (state_root / "memory.sqlite").exists()


def test_a_command_model_observes_a_transcript_file(state_root: Path, tmp_path: Path) -> None:
    path = claude_transcript(tmp_path / "sess.jsonl", [("use tabs, never spaces", "Switched to tabs.")])
    model = CommandModel(tmp_path / "model", [Step.answer({"schema_version": 1, "observations": [
        observation(1, "User stated they prefer tabs over spaces.", "critical", assertion=True)]})])  # fmt: skip
    configure(state_root, "m", kind="command", command=model.argv)
    configuration.set_value(StateRoot.at(state_root), "memory.model", "m", wait=5)
    out = mem("observe", "--transcript", str(path))
    assert out.exit == 0, out.stderr
    assert out.result["unit"] == "byte" and out.result["observed"] == 1
    request = model.requests()[0]
    assert request["purpose"] == "memory-observe" and request["schema"]["$id"].endswith(
        "memory-observe.v1.json"
    )
    shown = json.loads(request["user"])["messages"]
    assert [(m["role"], m["text"]) for m in shown] == [
        ("user", "use tabs, never spaces"),
        ("assistant", "Switched to tabs."),
    ]


# -- reflect ---------------------------------------------------------------------------------------


def observe_offline(chat: list[tuple[str, str]], stream: str = "s1") -> list[dict[str, Any]]:
    out = mem("observe", request=chat_request(stream=stream, chat=chat))
    assert out.exit == 0, out.stderr
    return out.result["items"]


PREFERENCES = [
    ("user", "I prefer tabs over spaces in every file."),
    ("user", "We must not touch the legacy renderer."),
    ("user", "Let's use pnpm instead of npm from now on."),
    ("assistant", "I've fixed the selector and all tests pass now."),
]


def handle(record: dict[str, Any]) -> str:
    return record["id"].replace("-", "")[:12]


def test_a_model_reflects_citing_only_observations_it_was_shown(state_root: Path) -> None:
    items = observe_offline(PREFERENCES)
    answer = {
        "schema_version": 1,
        "reflections": [
            {"content": "User prefers tabs; keep every file tab-indented.", "supporting": [handle(items[0])]},
            {
                "content": "Package manager is pnpm, not npm.",
                "supporting": [handle(items[2]), "0123456789ab"],
            },
            {"content": "A fact resting on nothing it was shown.", "supporting": ["0123456789ab"]},
            {"content": "User prefers tabs; keep every file tab-indented!", "supporting": [handle(items[0])]},
        ],
    }
    with ModelServer([Reply.answer("openai", answer)]) as server:
        use_model(state_root, server.url("/v1"))
        out = mem("reflect", "--stream", "s1")
        shown = sent(server)
    assert out.exit == 0, out.stderr
    result = out.result
    assert result["reflector"] == "model:m" and result["considered"] == 4
    assert [i["content"] for i in result["items"]] == [
        "User prefers tabs; keep every file tab-indented.",
        "Package manager is pnpm, not npm.",
    ]
    assert [i["metadata"]["supporting"] for i in result["items"]] == [[items[0]["id"]], [items[2]["id"]]]
    assert (
        shown["observations"][0] == f"[{handle(items[0])}] 2030-01-01 10:00 [critical] {items[0]['content']}"
    )


def test_model_reflection_is_windowed_by_its_context(state_root: Path) -> None:
    chat = [("user", f"We decided to keep module {i} small: " + "words " * 60) for i in range(12)]
    observe_offline(chat)
    empty = {"schema_version": 1, "reflections": []}
    with ModelServer([Reply.answer("openai", empty)]) as server:
        use_model(state_root, server.url("/v1"), context_tokens=2000)  # 40% = 3,200 characters
        first = mem("reflect", "--stream", "s1").result
        second = mem("reflect", "--stream", "s1").result
        sizes = [sum(len(line) for line in sent(server, n)["observations"]) for n in range(2)]
    assert 0 < first["considered"] < 12 and first["considered"] + second["considered"] <= 12
    assert second["watermark"]["before"] == first["watermark"]["after"]
    assert all(size <= 3200 for size in sizes)


def test_a_failed_model_reflection_still_advances(state_root: Path) -> None:
    observe_offline(PREFERENCES)
    with ModelServer(
        [Reply.answer("openai", {"schema_version": 1, "reflections": [{"content": "x"}]})]
    ) as server:
        use_model(state_root, server.url("/v1"))
        out = mem("reflect", "--stream", "s1")
    assert out.exit == 1 and out.error["reason"] == "schema_invalid"
    position, error, _ = watermark_row(state_root, "reflect")
    assert position > 0 and error == "model_error:schema_invalid"
    assert mem("retrieve", "--kind", "reflection").result["total"] == 0


# -- prune -----------------------------------------------------------------------------------------

POOL = [
    ("user", "I prefer tabs over spaces in every file."),  # critical, assertion
    ("user", "The renderer lives in src/tui."),  # medium assertion
    ("assistant", "I've fixed the selector and all tests pass now."),  # completion
    ("assistant", "Let me look at the selectors first."),  # medium
    ("assistant", "I will read the theme file next."),  # medium
]


def test_a_dropper_cannot_drop_what_is_protected(state_root: Path) -> None:
    items = observe_offline(POOL)
    everything = {"schema_version": 1, "drops": [{"id": handle(i), "reason": "routine"} for i in items]}
    with ModelServer([Reply.answer("openai", everything)]) as server:
        use_model(state_root, server.url("/v1"))
        out = mem("prune", "--stream", "s1", "--budget", "0")
        shown = sent(server)
    assert out.exit == 0, out.stderr
    result = out.result
    assert result["dropper"] == "model:m"
    dropped = {d["id"] for d in result["dropped"]}
    assert dropped == {items[3]["id"], items[4]["id"]}
    assert [p["pass"] for p in result["passes"]] == [1, 2, 3] and result["passes"][1]["dropped"] == 0
    left = {i["id"] for i in mem("retrieve", "--kind", "observation").result["items"]}
    assert left == {items[0]["id"], items[1]["id"], items[2]["id"]}
    assert "pressure" in shown and "Pass strategy: clear-cut" in shown["strategy"]
    assert len(shown["observations"]) == len(POOL)


def test_the_budget_stops_a_greedy_dropper(state_root: Path) -> None:
    items = observe_offline(POOL)
    before = mem("prune", "--stream", "s1", "--budget", "0", "--dry-run").result["before_tokens"]
    drops = {"schema_version": 1, "drops": [{"id": handle(i), "reason": "old"} for i in items[3:]]}
    with ModelServer([Reply.answer("openai", drops)]) as server:
        use_model(state_root, server.url("/v1"))
        result = mem("prune", "--stream", "s1", "--budget", str(before - 1)).result
    assert len(result["dropped"]) == 1 and result["within_budget"] is True and len(result["passes"]) == 1


def test_a_dropper_failing_in_a_later_pass_keeps_the_earlier_passes(state_root: Path) -> None:
    items = observe_offline(POOL)
    first = {"schema_version": 1, "drops": [{"id": handle(items[4]), "reason": "routine"}]}
    with ModelServer([Reply.answer("openai", first), Reply.answer("openai", "not json")]) as server:
        use_model(state_root, server.url("/v1"))
        out = mem("prune", "--stream", "s1", "--budget", "0")
    assert out.exit == 1 and out.error["reason"] == "not_json"
    left = {i["id"] for i in mem("retrieve", "--kind", "observation").result["items"]}
    assert items[4]["id"] not in left and len(left) == len(items) - 1
    removed = mem("retrieve", "--kind", "observation", "--removed", "only").result["items"]
    assert removed[0]["metadata"]["pruned"] == {"pass_number": 1, "reason": "routine"}
