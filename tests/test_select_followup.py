"""Follow-ups: an acceptance of the agent's last offer is judged as the offered action, in any language;
a decline never is. The reader (select/followup.py), the query it gives the judge, and the hook path
that finds the offer at the end of a Claude Code transcript."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from conftest import run
from habitus.harness.events import parse_event
from habitus.select import followup, judge
from habitus.select.hook import TAIL_BYTES, context_of
from select_helpers import COMMIT, DELETE, declare_all, hook_event, injected


@pytest.mark.parametrize(
    "prompt",
    [
        "yes please",
        "ok go ahead",
        "yep, do it!",
        "sounds good 👍",
        "ja, mach das",
        "gerne",
        "sí, adelante",
        "vale, hazlo",
        "oui, vas-y",
        "d'accord",
        "sim, pode",
        "sì, procedi",
        "はい、お願いします",
        "うん、やって",
        "好的",
        "可以，做吧",
        "да, давай",
        "네, 해주세요",
    ],
)
def test_an_acceptance_is_read_in_every_language(prompt: str) -> None:
    assert followup.reply(prompt) == followup.Reply("accept")


@pytest.mark.parametrize(
    "prompt",
    [
        "no thanks",
        "no, don't",
        "not now",
        "nope, leave it",
        "nein",
        "nein danke, noch nicht",
        "no, gracias",
        "todavía no",
        "non merci",
        "não, deixa",
        "いいえ、大丈夫です",
        "やめて",
        "不用了",
        "нет, не надо",
        "ok, but first explain what the regex does",  # a deferral: the offer is not for now
        "yes, but don't push it",
    ],
)
def test_a_decline_or_deferral_is_never_an_acceptance(prompt: str) -> None:
    assert followup.reply(prompt).kind == "decline"


@pytest.mark.parametrize(
    "prompt",
    [
        "thanks!",  # thanks alone accepts nothing
        "write the release notes for 2.0",
        "yes, explain it",  # its own words: judged as written
        "nice, commit it",
        "ok " + "and " * 40 + "go",  # longer than a reply
        "",
    ],
)
def test_anything_else_is_neither(prompt: str) -> None:
    assert followup.reply(prompt).kind == "none"


def test_an_acceptance_can_add_a_request_of_its_own() -> None:
    assert followup.reply("yes, and open a PR too") == followup.Reply("accept", "open a PR too")
    assert followup.reply("oui, et ajoute httpx") == followup.Reply("accept", "ajoute httpx")


@pytest.mark.parametrize(
    ("message", "action"),
    [
        ("Fixed. Want me to write the commit message too?", "write the commit message"),
        ("All 212 tests pass. Shall I bump the version to 2.1.0?", "bump the version to 2.1.0"),
        ("I can write the reverse migration. Should I?", "write the reverse migration"),
        ("Alles grün. Soll ich die Commit-Nachricht schreiben?", "die Commit-Nachricht schreiben"),
        ("¿Quieres que resuelva los conflictos en models.py?", "resuelva los conflictos en models.py"),
        ("修正しました。コミットメッセージも書きましょうか？", "コミットメッセージも書きましょう"),
        ("要我创建一个新的 git 分支吗？", "创建一个新的 git 分支"),
        ("Готово. Написать сообщение коммита?", "Написать сообщение коммита"),
        ("Want me to add `httpx` as a dependency?", "add httpx as a dependency"),
    ],
)
def test_the_offer_is_the_last_offered_action(message: str, action: str) -> None:
    found = followup.offer(message)
    assert found is not None and found.action == action


@pytest.mark.parametrize(
    ("message", "action"),
    [
        ("Les tests passent. Voulez-vous que j’écrive le message de commit ?", "écrive le message de commit"),
        ("Veux-tu que j'ajoute un test ?", "ajoute un test"),
    ],
)
def test_a_french_offer_is_read_with_either_apostrophe(message: str, action: str) -> None:
    found = followup.offer(message)
    assert found is not None and found.action == action


def test_an_offered_action_on_the_work_just_done_is_read_without_its_pointer() -> None:
    assert followup.Offer("commit these changes").bare == "commit"
    assert followup.Offer("push all of it").bare == "push"
    assert followup.Offer("remove them").bare == "remove them"  # "them" names something: kept
    assert followup.Offer("review the changes in parser.py").bare == "review the changes in parser.py"
    long = (
        "I rewrote the tokenizer so that it handles nested quotes, updated the three call sites in cli.py "
        "and report.py, and added regression tests for the two bugs you reported. "
        "Want me to commit these changes?"
    )
    query = judge.analyse("yes go ahead", [long])
    assert query.followup.kind == "confirm"
    assert [u.text for u in query.units][-1] == "commit" and {u.mood for u in query.units} == {"request"}


def test_a_pointer_keeps_the_sentence_it_points_back_to() -> None:
    found = followup.offer("The crash comes from a missing None check in parse_row. Should I fix it?")
    assert found == followup.Offer("fix it", "The crash comes from a missing None check in parse_row.")


@pytest.mark.parametrize("message", ["Done: the endpoint returns 200 now.", "テストはすべて通りました。", ""])
def test_a_report_offers_nothing(message: str) -> None:
    assert followup.offer(message) is None


def test_the_judge_reads_an_accepted_offer_as_a_live_request() -> None:
    context = [
        "add tests for the retry helper",
        "Done, all green. I could also write the migration for it if you like.",
    ]
    query = judge.analyse("sí, por favor", context)
    assert query.followup.kind == "confirm" and query.unquoted == "write the migration for it"
    assert [u.mood for u in query.units] == ["request"]  # "if you like" does not make it hypothetical
    declined = judge.analyse("no, gracias", context)
    assert declined.followup.kind == "reject" and "migration" not in declined.unquoted
    assert judge.analyse("sí, por favor").followup.kind == "none"  # no context: nothing to accept
    both = judge.analyse("yes, and open a PR too", ["Want me to commit this?"])
    assert [u.text for u in both.units] == ["commit this", "open a PR too"]


@pytest.mark.parametrize(
    ("prompt", "context"),
    [("nein", ["Want me to commit this?"]), ("no thanks", []), ("不用了", ["Soll ich die Tests anpassen?"])],
)
def test_a_bare_decline_asks_for_nothing(prompt: str, context: list[str]) -> None:
    """A reply that only declines has no clause to judge, with or without an offer before it."""
    assert followup.bare_decline(prompt)
    query = judge.analyse(prompt, context)
    assert query.units == () and query.followup.kind == "reject"


def test_a_decline_with_a_request_of_its_own_is_judged() -> None:
    assert not followup.bare_decline("nope, fix the tests instead")
    query = judge.analyse("nope, fix the tests instead", ["Want me to commit this?"])
    assert query.units and "fix the tests" in query.unquoted


# -- the hook: Claude Code's transcript ------------------------------------------------------------


def _transcript(path: Path, assistant: str, *, before: int = 0) -> Path:
    """A Claude Code transcript: `before` bytes of earlier turns, then a prompt and the agent's answer."""
    lines: list[dict[str, Any]] = []
    n = 0
    while sum(len(orjson.dumps(x)) + 1 for x in lines) < before:
        n += 1
        lines += [
            {"type": "user", "uuid": f"u{n}", "parentUuid": f"a{n - 1}" if n > 1 else None, "sessionId": "s",
             "timestamp": "2026-11-30T09:00:00Z",
             "message": {"role": "user", "content": f"early prompt {n}: delete the tmp/ directory " + "x" * 900}},
            {"type": "assistant", "uuid": f"a{n}", "parentUuid": f"u{n}", "sessionId": "s",
             "timestamp": "2026-11-30T09:00:01Z",
             "message": {"role": "assistant", "content": [{"type": "text", "text": "Deleted. " + "y" * 900}]}},
        ]  # fmt: skip
    lines += [
        {"type": "user", "uuid": "u-last", "parentUuid": f"a{n}" if n else None, "sessionId": "s",
         "timestamp": "2026-11-30T10:00:00Z",
         "message": {"role": "user", "content": "the scheduler skips jobs made by the API, fix it"}},
        {"type": "assistant", "uuid": "a-last", "parentUuid": "u-last", "sessionId": "s",
         "timestamp": "2026-11-30T10:00:05Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": assistant}]}},
    ]  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


REPORT = (
    "Found it: parse_date() returned None for ISO dates with a trailing Z, so the scheduler skipped every "
    "job the API made. It now normalises the Z before calling fromisoformat, there is a regression test in "
    "tests/test_dates.py, and all 412 tests pass on Linux and macOS. Mail me at dev@example.com if it comes "
    "back after the next deploy. "
)


def _hook(prompt: str, transcript: Path) -> bytes:
    event = {**hook_event("claude-code", prompt), "transcript_path": str(transcript)}
    out = run(["select", "--harness", "claude-code"], event)
    assert out.exit == 0, out.stderr
    return out.stdout


def test_claude_code_yes_please_after_an_offer_injects_the_offered_habit(tmp_path: Path) -> None:
    declare_all(COMMIT, DELETE)
    transcript = _transcript(tmp_path / "s.jsonl", REPORT + "Want me to write the commit message too?")
    assert len(REPORT) > 300  # the offer lies past the first 300 characters of the message
    out = _hook("yes please", transcript)
    text = injected("claude-code", orjson.loads(out))
    assert COMMIT[0] in text and DELETE[0] not in text
    assert COMMIT[0] in injected("claude-code", orjson.loads(_hook("はい、お願いします", transcript)))
    assert _hook("no thanks", transcript) == b""
    assert _hook("nein", transcript) == b""


def test_the_hook_reads_a_bounded_redacted_tail(tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "s.jsonl", REPORT + "Want me to commit this?", before=4 * TAIL_BYTES)
    assert transcript.stat().st_size > 4 * TAIL_BYTES
    event = parse_event(
        "claude-code", {**hook_event("claude-code", "ok"), "transcript_path": str(transcript)}
    )
    context = context_of(event)
    assert context and context[-1].endswith("Want me to commit this?")
    assert all(len(m) <= 300 for m in context)
    assert "dev@example.com" not in " ".join(context)  # redacted before the judge reads it
    assert not any("early prompt 1:" in m for m in context)  # only the tail was read
    long = parse_event(
        "claude-code", {**hook_event("claude-code", "x" * 200), "transcript_path": str(transcript)}
    )
    assert context_of(long) == []  # too long to be a reply: the transcript is not read
    gone = parse_event(
        "claude-code", {**hook_event("claude-code", "ok"), "transcript_path": str(tmp_path / "no")}
    )
    assert context_of(gone) == []  # unreadable: the prompt is judged alone
