"""Habit examples: declared, confirmed and learned from evidence; stored redacted, audited, checksummed;
used by select next to the condition; their vectors fail closed like the condition's."""

from __future__ import annotations

from conftest import run
from habit_helpers import REVIEWABLE, db, declare, ledger, propose
from habitus.habits import examples, lifecycle
from habitus.habits.law import load_law

COMMIT = ("When writing a commit message", "Do write an imperative subject line.")


def _listed(ref: str) -> list[dict]:
    out = run(["habit", "example", "list", ref])
    assert out.exit == 0, out.stderr
    return out.result["examples"]


def test_declare_with_examples_and_confirm_more() -> None:
    out = declare(*COMMIT, examples=["commit this please", "schreib die Commit-Nachricht"])
    assert out.exit == 0, out.stderr
    habit = out.result["habit"]
    assert [e["text"] for e in out.result["examples"]] == [
        "commit this please",
        "schreib die Commit-Nachricht",
    ]
    assert {e["source"] for e in out.result["examples"]} == {"declared"}
    before = habit["checksum"]
    added = run(["habit", "example", "add", habit["id"], "git commit -am, you pick the message"])
    assert added.exit == 0 and [e["source"] for e in added.result["examples"]][-1] == "confirmed"
    shown = run(["habit", "show", habit["id"]]).result["habit"]
    assert shown["checksum"] == before  # examples never change the approved wording
    assert len(shown["examples"]) == 3
    actions = [a["action"] for a in shown["audit"]]
    assert actions.count("example_added") == 3
    assert all(
        "text" in a["data"] and len(a["data"]["text"]) == 64
        for a in shown["audit"]
        if a["action"] == "example_added"
    )
    # the same text twice is stored once; removing one is audited
    assert len(run(["habit", "example", "add", habit["id"], "commit this please"]).result["examples"]) == 3
    first = _listed(habit["id"])[0]["id"]
    assert run(["habit", "example", "remove", habit["id"], str(first)]).exit == 0
    assert len(_listed(habit["id"])) == 2
    audit = run(["habit", "show", habit["id"]]).result["habit"]["audit"]
    assert audit[-1]["action"] == "example_removed"
    assert run(["habit", "example", "remove", habit["id"], str(first)]).error["code"] == "not_found"


def test_examples_are_redacted_and_bounded() -> None:
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    out = declare(*COMMIT, examples=[f"push with token {secret} and write the message"])
    assert out.exit == 0, out.stderr
    text = out.result["examples"][0]["text"]
    assert secret not in text
    stored = [r["text"] for r in db().execute("SELECT text FROM habit_examples")]
    assert stored == [text] and secret not in stored[0]
    assert declare(*COMMIT, examples=["x" * 2000]).error["code"] == "bad_request"
    assert declare(*COMMIT, examples="not a list").error["code"] == "bad_request"
    assert declare(*COMMIT, examples=[""]).error["code"] == "bad_request"
    assert declare(*COMMIT, examples=[3]).error["code"] == "bad_request"
    assert declare(*COMMIT, examples=["a"] * 9).error["code"] == "bad_request"


def test_a_tampered_example_fails_closed() -> None:
    habit = declare(*COMMIT, examples=["commit this please"]).result["habit"]
    conn = db()
    conn.execute("UPDATE habit_examples SET text = 'something else'")
    conn.commit()
    out = run(["select"], {"prompt": "write the commit message"})
    assert out.exit == 3 and out.error["code"] == "checksum_mismatch"
    assert run(["habit", "example", "list", habit["id"]]).error["code"] == "checksum_mismatch"


def test_a_missing_example_vector_fails_closed_until_recheck() -> None:
    declare(*COMMIT, examples=["commit this please"])
    conn = db()
    conn.execute("DELETE FROM habit_example_vectors")
    conn.commit()
    out = run(["select"], {"prompt": "write the commit message"})
    assert out.exit == 3 and out.error["code"] == "vectors_stale"
    assert run(["habit", "recheck"]).exit == 0
    assert run(["select"], {"prompt": "write the commit message"}).exit == 0


def test_a_learned_habit_keeps_its_evidence_as_examples() -> None:
    proposal = lifecycle.Proposal(
        "When reading a file",
        "Do read the whole file.",
        1,
        8000,
        tuple(
            lifecycle.Evidence(f"obs-1:{i}:ref", day, note)
            for i, (day, note) in enumerate(
                zip(
                    REVIEWABLE,
                    [
                        "no, read the whole file",
                        "you only read the grep hit, read all of it",
                        "read all of it",
                    ],
                    strict=True,
                )
            )
        ),
        None,
    )
    with ledger() as led, led.tx():
        habit = lifecycle.propose_candidate(led, proposal, law=load_law(led.root))
    habit_id = habit["habit"]["id"] if "habit" in habit else habit["id"]
    with ledger() as led:
        kept = examples.of(led.conn, habit_id)
    assert [e["source"] for e in kept] == ["evidence"] * 3
    assert kept[0]["text"] == "no, read the whole file"
    assert propose("When x", "Do y.", ["2026-11-01"])  # a proposal without notes keeps none
