"""habitus advise: reviews from pairs and transcripts, the session cursor, dedupe, errors and status."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from advise_helpers import CLAIM, RELEASE, VERIFIED, Transcript, declare, enable, pair, review, setting
from conftest import run
from model_doubles import ModelServer, Reply, configure


def test_advise_is_off_until_enabled(state_root: Path) -> None:
    done = run(["advise"], pair(CLAIM))
    assert done.exit == 3 and done.error["code"] == "disabled"
    hook = run(["advise", "--harness", "claude-code"], {"hook_event_name": "Stop", "session_id": "x"})
    assert hook.exit == 0 and hook.stdout == b"" and hook.stderr == b""
    assert not (state_root / "ledger.sqlite").exists()


def test_a_release_called_ready_without_verifying_the_artifact_is_a_concern(state_root: Path) -> None:
    enable(state_root)
    habit = declare(**RELEASE)
    result = review(pair(CLAIM))
    note = result["note"]
    assert note["severity"] == "concern" and note["habit"] == habit and note["reviewer"] == "local"
    assert note["findingKey"] == f"habit:{habit}" and note["tag"] is None and note["delivery"] == "result"
    assert "The release is ready to ship." in note["note"] and len(note["id"]) == 8
    assert note["finding"].startswith(note["id"])
    assert review(pair(VERIFIED, session="other"))["note"] is None  # the behaviour is there: silence


def test_a_repeated_finding_is_suppressed_and_counted(state_root: Path) -> None:
    enable(state_root)
    declare(**RELEASE)
    assert review(pair(CLAIM))["note"] is not None
    again = review(pair("Version 1.4.1 is out of the door: the release is ready."))
    assert again["note"] is None
    assert again["candidates"][0]["decision"] == "suppressed"
    assert again["candidates"][0]["similarity_bp"] >= 5_000
    # Another session is another conversation: the finding is news there.
    assert review(pair(CLAIM, session="s2"))["note"] is not None
    status = run(["status"]).result["advise"]
    assert status["reviews"] == 3 and status["failures"] == 0 and status["paused"] is None
    assert status["notes"] == {"delivered": 2, "suppressed": 1, "muted": 0, "dropped": 0, "held": 0,
                               "expired": 0, "pending": 0}  # fmt: skip
    assert status["mutes"] == {"ok": True, "count": 0}


def test_status_never_creates_state(state_root: Path) -> None:
    advise = run(["status"]).result["advise"]
    assert advise["reviews"] is None and advise["mutes"] == {"ok": True, "count": 0}
    assert not state_root.exists()


def test_the_cursor_makes_each_review_cover_only_new_work(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    declare(**RELEASE)
    t = Transcript(tmp_path / "s.jsonl")
    t.prompt("cut 1.4.0").tool("Bash", {"command": "npm version 1.4.0"}).say(CLAIM)
    first = review({}, "--transcript", str(t.path))
    assert first["note"]["severity"] == "concern" and first["slice"]["new_turns"] == 1
    nothing = review({}, "--transcript", str(t.path))
    assert nothing["reviewed"] is False and nothing["reason"] == "no_new_work"
    answer = {"schema_version": 1, "advice": None}
    with ModelServer([Reply.answer("openai", answer)]) as server:
        configure(state_root, "m", kind="openai", url=server.url("/v1"), model="test")
        setting(state_root, "advise.model", "m")
        t.prompt("now tidy the README").tool("Edit", {"file_path": "README.md", "new_string": "Usage"}).say(
            "README tidied."
        )
        second = review({}, "--transcript", str(t.path))
        sent = server.requests[0].json["messages"][-1]["content"]
    assert second["reviewed"] and second["note"] is None and second["slice"]["new_turns"] == 1
    new_part = sent.split("## New work")[1]
    assert "now tidy the README" in new_part and "README tidied." in new_part
    assert "npm version 1.4.0" not in sent and "cut 1.4.0" not in sent


def test_earlier_work_in_the_same_turn_counts_as_evidence(tmp_path: Path, state_root: Path) -> None:
    """A PostToolUse review after the verification, then a Stop review after the claim: the claim's
    review sees the verification as context, so no false concern."""
    enable(state_root)
    declare(**RELEASE)
    t = Transcript(tmp_path / "s.jsonl")
    t.prompt("ship 1.4.0").tool(
        "Bash", {"command": "python -m build && pip install dist/*.whl && pkg --version"}
    )
    assert review({}, "--transcript", str(t.path))["note"] is None
    t.say("All green. The release is ready to ship.")
    last = review({}, "--transcript", str(t.path))
    assert last["reviewed"] and last["note"] is None and last["candidates"] == []


def test_a_replaced_transcript_starts_over(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    path = tmp_path / "s.jsonl"
    Transcript(path).prompt("first").say("one " * 200)
    assert review({}, "--transcript", str(path))["reviewed"]
    path.unlink()
    Transcript(path).prompt("other").say("short")
    again = review({}, "--transcript", str(path))
    assert again["reviewed"] and again["slice"]["new_turns"] == 1


def test_min_interval_keeps_new_work_for_the_next_review(tmp_path: Path, state_root: Path) -> None:
    enable(state_root, min_interval_s=3600)
    t = Transcript(tmp_path / "s.jsonl")
    t.prompt("a").say("did a")
    assert review({}, "--transcript", str(t.path))["reviewed"]
    t.prompt("b").say("did b")
    assert review({}, "--transcript", str(t.path))["reason"] == "interval"
    setting(state_root, "advise.min_interval_s", 0)
    later = review({}, "--transcript", str(t.path))
    assert later["reviewed"] and later["slice"]["new_turns"] == 1


def test_content_free_model_notes_are_dropped_and_one_note_per_review(state_root: Path) -> None:
    enable(state_root)
    declare(**RELEASE)
    empty = {"note": "No issue; continue.", "severity": "nit", "findingKey": "all fine"}
    real = {
        "note": "The changelog still lists 1.3.9 as unreleased.",
        "severity": "concern",
        "findingKey": "changelog",
    }
    with ModelServer(
        [
            Reply.answer("openai", {"schema_version": 1, "advice": empty}),
            Reply.answer("openai", {"schema_version": 1, "advice": real}),
        ]
    ) as server:
        configure(state_root, "m", kind="openai", url=server.url("/v1"), model="test")
        setting(state_root, "advise.model", "m")
        first = review(pair("Renamed a variable.", session="a"))
        both = review(pair(CLAIM, session="b"))
    assert first["note"] is None and first["candidates"][0]["why"] == "content_free"
    assert both["note"]["reviewer"] == "local"  # same severity: the habit's note goes first
    assert [c["decision"] for c in both["candidates"]] == ["delivered", "held"]


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        ({"assistant": 5}, "bad_request"),
        ({"user": "x"}, "bad_request"),
        ({"assistant": "x", "session": []}, "bad_request"),
    ],
)
def test_bad_requests_change_nothing(state_root: Path, request_: dict[str, object], code: str) -> None:
    enable(state_root)
    done = run(["advise"], request_)
    assert done.exit == 2 and done.error["code"] == code
    assert not (state_root / "ledger.sqlite").exists()


def test_bad_input_errors(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    assert run(["advise"], stdin=b"{nope").error["code"] == "bad_json"
    assert run(["advise"], stdin=b"\xff\xfe").error["code"] == "bad_utf8"
    assert run(["advise", "--transcript", str(tmp_path / "missing.jsonl")]).error["code"] == "not_found"
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    assert run(["advise", "--transcript", str(binary)]).error["code"] == "bad_transcript"
    both = run(["advise", "--transcript", str(binary), "--harness", "claude-code"])
    assert both.exit == 0 and both.stdout == b""  # hook mode: silent, logged
    assert b'"usage"' in (state_root / "errors.jsonl").read_bytes()


def test_a_locked_ledger_answers_75(state_root: Path) -> None:
    enable(state_root)
    review(pair("warm up"))
    holder = sqlite3.connect(state_root / "ledger.sqlite")
    holder.execute("BEGIN IMMEDIATE")
    try:
        done = run(["advise", "--wait", "0"], pair("something new"))
    finally:
        holder.rollback()
        holder.close()
    assert done.exit == 75 and done.error["code"] == "state_locked"


def test_a_newer_ledger_is_refused_untouched(state_root: Path) -> None:
    enable(state_root)
    review(pair("warm up"))
    conn = sqlite3.connect(state_root / "ledger.sqlite")
    conn.execute("PRAGMA user_version = 999")
    conn.commit()
    conn.close()
    before = (state_root / "ledger.sqlite").read_bytes()
    done = run(["advise"], pair("more"))
    assert done.exit == 3 and done.error["code"] == "schema_newer"
    assert (state_root / "ledger.sqlite").read_bytes() == before


def test_a_corrupt_ledger_is_refused(state_root: Path) -> None:
    enable(state_root)
    (state_root / "ledger.sqlite").write_bytes(b"not a database" * 100)
    done = run(["advise"], pair("x"))
    assert done.exit == 3 and done.error["code"] == "state_corrupt"


def test_a_review_killed_before_its_commit_leaves_no_trace(tmp_path: Path, state_root: Path) -> None:
    import signal

    from conftest import run_process

    enable(state_root)
    declare(**RELEASE)
    t = Transcript(tmp_path / "s.jsonl").prompt("release").say(CLAIM)
    killed = run_process(
        ["advise", "--transcript", str(t.path)], env={"HABITUS_TEST_FAULT": "advise_commit:kill"}
    )
    assert killed.exit == -signal.SIGKILL and killed.stdout == b""
    status = run(["status"]).result["advise"]
    assert status["reviews"] == 0 and status["notes"]["delivered"] == 0
    retry = run_process(["advise", "--transcript", str(t.path)])
    assert retry.exit == 0 and retry.result["note"]["severity"] == "concern"  # the same work, reviewed once
    assert run(["status"]).result["advise"]["notes"]["delivered"] == 1


def test_two_reviews_of_one_session_at_once_record_one(
    tmp_path: Path, state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cursor is compare-and-swapped: a review that finishes second, over the same work, records nothing."""
    from habitus.advise import local
    from habitus.advise import review as reviewmod
    from habitus.state.root import StateRoot

    enable(state_root)
    declare(**RELEASE)
    t = Transcript(tmp_path / "s.jsonl").prompt("release").say(CLAIM)
    root = StateRoot(state_root)
    source = reviewmod.Source("s", path=t.path, fmt="claude-code")
    real = local.review
    inner: list[reviewmod.Outcome] = []
    started = []

    def racing(*args: object, **kwargs: object) -> object:
        if not started:  # while this review runs its reviewers, another one finishes the same work
            started.append(True)
            inner.append(reviewmod.run(root, source, wait=5, route=lambda _: "result"))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(local, "review", racing)
    outer = reviewmod.run(root, source, wait=5, route=lambda _: "result")
    assert inner[0].reviewed and inner[0].note is not None
    assert outer.reviewed is False and outer.reason == "concurrent" and outer.note is None
    status = run(["status"]).result["advise"]
    assert status["reviews"] == 1 and status["notes"]["delivered"] == 1


def test_a_huge_backlog_is_read_from_its_end_only(tmp_path: Path, state_root: Path) -> None:
    enable(state_root)
    t = Transcript(tmp_path / "big.jsonl")
    filler = "lorem ipsum dolor sit amet " * 400
    for n in range(500):
        t.prompt(f"chunk {n}").say(filler)
    t.prompt("the last request").say("The last answer.")
    assert t.path.stat().st_size > 5 * 1024 * 1024
    result = review({}, "--transcript", str(t.path))
    assert result["reviewed"] and result["slice"]["skipped_bytes"] > 0
    assert result["slice"]["chars"] <= 24_000 and result["slice"]["truncated"]


def test_the_hook_path_stays_light(state_root: Path) -> None:
    """A prompt hook with nothing waiting loads no heavy module; nor does any hook while advise is off."""
    import subprocess
    import sys

    import orjson

    probe = (
        "import sys\n"
        "sys.argv = ['habitus', 'advise', '--harness', 'claude-code']\n"
        "from habitus.launcher import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = {'numpy', 'onnxruntime', 'tokenizers', 'jsonschema', 'tomlkit', 'fasteners'}\n"
        "sys.stderr.write('HEAVY=' + ','.join(sorted({m.split('.')[0] for m in sys.modules} & heavy)))\n"
    )

    def loaded(event: dict[str, object]) -> str:
        done = subprocess.run(
            [sys.executable, "-c", probe], input=orjson.dumps(event), capture_output=True, timeout=60
        )
        assert done.stdout == b""
        return done.stderr.decode().rsplit("HEAVY=", 1)[1]

    stop = {"hook_event_name": "Stop", "session_id": "l", "last_assistant_message": "Done."}
    assert loaded(stop) == ""
    enable(state_root)
    review(pair("warm up", session="l"))
    assert loaded({"hook_event_name": "UserPromptSubmit", "session_id": "l", "prompt": "hi"}) == ""
    assert loaded(stop) == ""  # no habits: a review without the embedding model


def test_a_second_review_reads_the_habit_vectors_it_cached(
    state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """advise judges with the configured model, as select does: the habits' vectors are cached under that
    model's id once (one model, not a second one for advise), so a later review never embeds them again."""
    from habitus.embed import engine

    enable(state_root)
    declare(**RELEASE)
    embedded: list[str] = []
    for cls in (engine.OnnxEmbedder, engine.E5Embedder):
        original = cls.embed
        monkeypatch.setattr(
            cls,
            "embed",
            lambda self, texts, *a, _o=original, **k: (embedded.extend(texts), _o(self, texts, *a, **k))[1],
        )
    review(pair(CLAIM))
    assert any("release" in text.lower() and "ready" in text.lower() for text in embedded)  # the condition
    conn = sqlite3.connect(state_root / "ledger.sqlite")
    models = {row[0].partition("@")[0] for row in conn.execute("SELECT model_id FROM habit_vectors")}
    conn.close()
    assert models == {"default"}
    embedded.clear()
    assert review(pair(CLAIM, session="s2"))["note"] is not None  # still judged, from the cache
    assert not any(RELEASE["condition"].removeprefix("When ") in text for text in embedded)
    assert embedded  # the new work itself is embedded


def test_a_ledger_busy_with_another_writer_still_gets_a_review(
    state_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from habitus.errors import HabitusError
    from habitus.habits import vectors

    enable(state_root)
    declare(**RELEASE)

    def locked(*_args: object) -> None:
        raise HabitusError("state_locked", "ledger.sqlite: locked")

    monkeypatch.setattr(vectors, "cached", locked)
    assert review(pair(CLAIM))["note"] is not None  # vectors computed in memory; cached next time
