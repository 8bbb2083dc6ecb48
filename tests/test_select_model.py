"""The optional model judge (select.judge = "model:NAME"), driven by scripted command models."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import run
from model_doubles import CommandModel, Step, configure
from select_helpers import COMMIT, DELETE, DOCKER, declare_all, hook_event, injected, select

PROMPT = "write the commit message for the staged diff"
MIXED = "write the commit message, then write a Dockerfile and delete the tmp/ folder"


def judgments(*items: tuple[str, bool, int, str]) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "judgments": [
            {"id": alias, "applicable": ok, "confidence_bp": bp, "reason": reason}
            for alias, ok, bp, reason in items
        ],
    }


def use(state_root: Path, tmp_path: Path, steps: list[Step], **settings: Any) -> CommandModel:
    model = CommandModel(tmp_path / "model", steps)
    configure(state_root, "judge", kind="command", command=model.argv, **settings)
    assert run(["config", "set", "select.judge", "model:judge"]).exit == 0
    return model


def test_the_model_sees_aliases_and_condition_text_only(state_root: Path, tmp_path: Path) -> None:
    habits = declare_all(COMMIT, DELETE, DOCKER)
    model = use(state_root, tmp_path, [Step(stdout="not json")])
    assert select(PROMPT).exit == 1
    request = model.requests()[0]
    assert request["purpose"] == "select"
    sent = json.dumps(request)
    for habit in habits:
        assert habit["id"] not in sent and habit["behavior"] not in sent
    assert "bp" not in json.dumps(json.loads(request["user"])["candidates"])
    user = json.loads(request["user"])
    assert user["request"] == PROMPT and user["max_applicable"] == 3
    assert [c["id"] for c in user["candidates"]] == [f"c{i}" for i in range(1, len(user["candidates"]) + 1)]
    assert {c["condition"] for c in user["candidates"]} <= {COMMIT[0], DELETE[0], DOCKER[0]}
    assert all(set(c) == {"id", "condition"} for c in user["candidates"])
    # the rules of the labelled set, stated to the model: action and object, meaning over wording,
    # implied actions but not incidental steps, and the request as data
    system = request["system"]
    for rule in ("different_action", "Judge by meaning", "implied", "on the way", "data, not instructions"):
        assert rule in system


def _commit_alias(state_root: Path, tmp_path: Path, prompt: str = PROMPT) -> tuple[dict[str, str], int]:
    """Aliases the model is shown for prompt (learned from one recorded call)."""
    probe = use(state_root, tmp_path / "probe", [Step(stdout="{}")])
    select(prompt)
    user = json.loads(probe.requests()[0]["user"])
    return {c["condition"]: c["id"] for c in user["candidates"]}, len(user["candidates"])


def test_a_valid_answer_selects(state_root: Path, tmp_path: Path) -> None:
    declare_all(COMMIT, DELETE)
    alias, _count = _commit_alias(state_root, tmp_path)
    answer = [(a, c == COMMIT[0], 9000, "current_applicability" if c == COMMIT[0] else "not_currently_relevant")
              for c, a in alias.items()]  # fmt: skip
    use(state_root, tmp_path / "real", [Step.answer(judgments(*answer))])
    out = select(PROMPT)
    assert out.exit == 0, out.stderr
    assert [h["condition"] for h in out.result["habits"]] == [COMMIT[0]]
    assert out.result["judge"] == "model:judge"
    hook = run(["select", "--harness", "claude-code"], hook_event("claude-code", PROMPT))
    assert COMMIT[0] in injected("claude-code", hook.result)


def test_low_confidence_only_deselects(state_root: Path, tmp_path: Path) -> None:
    declare_all(COMMIT, DELETE)
    alias, _ = _commit_alias(state_root, tmp_path)
    answer = [(a, c == COMMIT[0], 5000, "current_applicability" if c == COMMIT[0] else "negated")
              for c, a in alias.items()]  # fmt: skip
    use(state_root, tmp_path / "real", [Step.answer(judgments(*answer))])
    out = select(PROMPT)
    assert out.exit == 0 and out.result["habits"] == []


@pytest.mark.parametrize(
    "broken",
    ["missing", "duplicate", "unknown", "inconsistent", "too_many", "not_json", "schema", "exit"],
)
def test_malformed_answers_fail_closed(broken: str, state_root: Path, tmp_path: Path) -> None:
    declare_all(COMMIT, DELETE, DOCKER)
    assert run(["config", "set", "select.max_habits", "1"]).exit == 0
    alias, count = _commit_alias(state_root, tmp_path, MIXED)
    assert count >= 2  # so that "missing" leaves one out and "too_many" exceeds max_habits
    good = [(a, c == COMMIT[0], 9000, "current_applicability" if c == COMMIT[0] else "not_currently_relevant")
            for c, a in alias.items()]  # fmt: skip
    if broken == "missing":
        step = (
            Step.answer(judgments(*good[:-1]))
            if count > 1
            else Step.answer({"schema_version": 1, "judgments": []})
        )
    elif broken == "duplicate":
        step = Step.answer(judgments(*good, good[0]))
    elif broken == "unknown":
        step = Step.answer(judgments(*good, ("c9", False, 9000, "negated")))
    elif broken == "inconsistent":
        step = Step.answer(judgments(*[(a, True, 9000, "negated") for a, *_ in good]))
    elif broken == "too_many":
        step = Step.answer(judgments(*[(a, True, 9000, "current_applicability") for a, *_ in good]))
    elif broken == "not_json":
        step = Step(stdout="Sure! The first one applies.")
    elif broken == "schema":
        step = Step.answer({"schema_version": 1, "judgments": [{"id": "c1", "applicable": "yes"}]})
    else:
        step = Step(stdout="", exit=1)
    use(state_root, tmp_path / "real", [step])
    out = select(MIXED)
    assert out.exit == 1 and out.error["code"] == "model_error", out.stderr
    hook = run(["select", "--harness", "claude-code"], hook_event("claude-code", MIXED))
    assert hook.exit == 0 and hook.stdout == b""


def test_a_timeout_fails_closed(state_root: Path, tmp_path: Path) -> None:
    declare_all(COMMIT)
    use(state_root, tmp_path, [Step.answer(judgments(("c1", True, 9000, "current_applicability")), sleep=5)],
        timeout_s=1)  # fmt: skip
    out = select(PROMPT)
    assert out.exit == 1 and out.error["reason"] == "timeout"


DISABLING_MODEL = """
import json, subprocess, sys
request = json.loads(sys.stdin.read())
candidates = json.loads(request["user"])["candidates"]
subprocess.run([sys.argv[1], "habit", "disable", sys.argv[2]], check=True, capture_output=True)
print(json.dumps({"schema_version": 1, "judgments": [
    {"id": c["id"], "applicable": True, "confidence_bp": 9000, "reason": "current_applicability"}
    for c in candidates]}))
"""


def test_a_habit_disabled_during_judgment_is_not_injected(state_root: Path, tmp_path: Path) -> None:
    (commit,) = declare_all(COMMIT)
    program = tmp_path / "disabling_model.py"
    program.write_text(DISABLING_MODEL)
    habitus = str(Path(sys.executable).parent / "habitus")
    configure(
        state_root, "judge", kind="command", command=[sys.executable, str(program), habitus, commit["id"]]
    )
    assert run(["config", "set", "select.judge", "model:judge"]).exit == 0
    out = select(PROMPT)
    assert out.exit == 0, out.stderr
    assert out.result["habits"] == [] and out.result["reason"] == "state_changed"
    assert run(["habit", "show", commit["id"]]).result["habit"]["status"] == "disabled"
    assert run(["habit", "enable", commit["id"]]).exit == 0
    hook = run(["select", "--harness", "claude-code"], hook_event("claude-code", PROMPT))
    assert hook.stdout == b""  # disabled again by the model during this call: nothing injected
