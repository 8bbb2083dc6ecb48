"""habitus eval analyze on real sessions (tests/fixtures/analyze_real, a DEV set labelled by reading
them): transcripts read through the production reader, quoted evidence, only the human's words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO, run
from test_fixture_data import keywords_match

REAL = REPO / "tests" / "fixtures" / "analyze_real"
LABELS = REAL / "labels.json"
needs_real = pytest.mark.skipif(not LABELS.is_file(), reason="tests/fixtures/analyze_real is absent")


def evaluate(labels: Path, *extra: str) -> dict:
    out = run(["eval", "analyze", "--labels", str(labels), *extra])
    assert out.exit == 0, out.stderr
    return out.result


def _user_texts(path: Path, fmt: str) -> list[str]:
    from habitus.harness.transcripts import read_transcript

    texts, offset = [], 0
    while True:
        chunk = read_transcript(path, start_offset=offset, format=fmt, hold_last=True)
        texts += [t.user for t in chunk.turns if t.source == "user"]
        if chunk.eof or chunk.end_offset <= offset:
            return texts
        offset = chunk.end_offset


@needs_real
def test_labels_quote_the_users_own_words() -> None:
    labels = json.loads(LABELS.read_text(encoding="utf-8"))
    for conv in labels["conversations"]:
        users = _user_texts(REAL / conv["file"], conv["transcript_format"])
        for item in conv["habits"] + conv["facts"]:
            assert item["evidence_quotes"], item
            for quote in item["evidence_quotes"]:
                assert any(quote in text for text in users), quote
            text = item.get("content") or f"{item['condition']} {item['behavior']}"
            assert keywords_match(item["keywords"], text), item


@needs_real
def test_eval_scores_real_sessions(state_root: Path) -> None:
    result = evaluate(LABELS)
    habits = result["habits"]
    assert habits["tp"] + habits["fn"] == 4
    # Dev figures (tuned on this set, 2026-12-01): a regression below them fails here.
    assert habits["precision_bp"] >= 7500 and habits["recall_bp"] >= 7500, result
    # Quoted evidence carries no timestamps: the stage of a matched habit is not scored.
    assert result["stage"]["unscored"] == habits["tp"] and result["stage"]["matched"] == 0
    claude = next(c for c in result["conversations"] if c["file"].startswith("claude-code"))
    # Task notifications, the compaction summary and a rejection without a reason: nothing to learn.
    assert claude["proposals"] == []
    pi = next(c for c in result["conversations"] if c["file"].startswith("pi-"))
    behaviours = " ".join(p["behavior"] for p in pi["proposals"]).lower()
    assert "tink" not in behaviours and "i think" not in behaviours  # bug reports are not habits


@needs_real
def test_only_the_users_words_become_friction(state_root: Path, tmp_path: Path) -> None:
    # The same Claude Code session with its teammate-like texts marked: a pasted plan and a teammate
    # message full of corrections never become habits; the human's own correction does.
    from habitus.harness.transcripts import Turn

    rows = [
        ("Implement the following plan:\n\n# Plan\n- never use mocks, always use a real database", "plan"),
        (
            '<teammate-message teammate_id="a">no, don\'t use tabs. never use tabs</teammate-message>',
            "teammate",
        ),
        ("<command-name>/clear</command-name>", "command"),
        ("no, don't push to main directly. open a pull request", "user"),
    ]
    from habitus.capture import capture_turns
    from habitus.state.root import StateRoot

    root = StateRoot(state_root)
    root.ensure()
    turns = []
    for index, (text, source) in enumerate(rows):
        turn = Turn(user=text, assistant="Ok.", user_at=f"2026-05-01T10:0{index}:00Z", session_id="s")
        turn.source = source
        turns.append(turn)
    capture_turns(root, turns, harness="claude-code", source="pair", event=None, wait=5, full_dedupe=False)
    proposals = run(["analyze"]).result["proposals"]
    worded = " ".join(p["behavior"].lower() for p in proposals)
    assert "pull request" in worded or "push" in worded, proposals
    assert "mock" not in worded and "tab" not in worded, proposals


def test_bad_transcript_format_and_quotes(tmp_path: Path) -> None:
    labels = tmp_path / "labels.json"
    (tmp_path / "a.jsonl").write_text("")
    labels.write_text(
        json.dumps({"format": 1, "conversations": [{"file": "a.jsonl", "transcript_format": "vim"}]})
    )
    out = run(["eval", "analyze", "--labels", str(labels)])
    assert out.exit == 2 and out.error["code"] == "bad_request"
    labels.write_text(
        json.dumps(
            {
                "format": 1,
                "conversations": [
                    {"file": "a.jsonl", "habits": [{"keywords": ["x"], "evidence_quotes": [""]}]}
                ],
            }
        )
    )
    assert run(["eval", "analyze", "--labels", str(labels)]).error["code"] == "bad_request"
    labels.write_text(
        json.dumps({"format": 1, "conversations": [{"file": "gone.jsonl", "transcript_format": "pi"}]})
    )
    out = run(["eval", "analyze", "--labels", str(labels)])
    assert out.exit == 1 and out.error["code"] == "not_found"
