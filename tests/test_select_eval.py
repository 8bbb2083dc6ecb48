"""`habitus eval select`: figures on the labelled set, input checks, and the calibration of the judge."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from conftest import REPO, run
from habitus.errors import HabitusError
from habitus.select import evaluate
from model_doubles import configure
from select_helpers import FIXTURES

CASES = FIXTURES / "cases.jsonl"


def write_cases(path: Path, cases: list[dict]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    (path.parent / "habits.jsonl").write_text((FIXTURES / "habits.jsonl").read_text())
    return path


SMALL = [
    {
        "id": "a",
        "prompt": "write a Dockerfile for the api",
        "context": [],
        "expected": ["h29"],
        "category": "applies",
    },
    {"id": "b", "prompt": "don't write a Dockerfile", "context": [], "expected": [], "category": "negation"},
    {"id": "c", "prompt": "tell me a joke", "context": [], "expected": ["h01"], "category": "unrelated"},
]


def test_eval_on_a_small_set(tmp_path: Path) -> None:
    path = write_cases(tmp_path / "cases.jsonl", SMALL)
    out = run(["eval", "select", "--cases", str(path)])
    assert out.exit == 0, out.stderr
    result = out.result
    assert result["judge"] == "local" and result["cases"] == 3 and result["habits"] == 32
    assert (result["tp"], result["fp"], result["fn"]) == (1, 0, 1)
    assert result["precision"] == 1.0 and result["recall"] == 0.5
    assert result["categories"]["negation"] == {
        "cases": 1, "exact": 1, "tp": 0, "fp": 0, "fn": 0, "precision": None, "recall": None,
    }  # fmt: skip
    assert result["misses"] == [{"id": "c", "category": "unrelated", "expected": ["h01"], "selected": []}]


def test_eval_parts_split_the_labelled_set() -> None:
    habits = evaluate.load_catalog(FIXTURES / "habits.jsonl")
    cases = evaluate.load_cases(CASES, {h.id for h in habits})
    fit, holdout = evaluate.split(cases, "fit"), evaluate.split(cases, "holdout")
    assert len(fit) + len(holdout) == len(cases) == 289
    assert not {c.id for c in fit} & {c.id for c in holdout}
    for category in {c.category for c in cases}:
        a = sum(c.category == category for c in fit)
        b = sum(c.category == category for c in holdout)
        assert abs(a - b) <= 1, category


def test_eval_holdout_figures_are_consistent() -> None:
    out = run(["eval", "select", "--cases", str(CASES), "--part", "holdout"])
    assert out.exit == 0, out.stderr
    result = out.result
    assert result["cases"] == 143
    assert result["tp"] == sum(c["tp"] for c in result["categories"].values())
    assert result["fp"] == sum(c["fp"] for c in result["categories"].values())
    assert result["precision"] == round(result["tp"] / (result["tp"] + result["fp"]), 3)


@pytest.mark.parametrize(
    ("content", "code", "exit"),
    [
        ('{"id": "a", "prompt": "x"\n', "bad_request", 2),
        ('{"id": "a", "prompt": 3, "context": [], "expected": []}\n', "bad_request", 2),
        ('{"id": "a", "prompt": "x", "context": [], "expected": ["h99"]}\n', "bad_request", 2),
        ("[1]\n", "bad_request", 2),
        ('{"id": "a", "prompt": "x", "context": [{"role": "agent"}], "expected": []}\n', "bad_request", 2),
    ],
)
def test_bad_case_files_are_refused(tmp_path: Path, content: str, code: str, exit: int) -> None:
    path = write_cases(tmp_path / "cases.jsonl", [])
    path.write_text(content)
    out = run(["eval", "select", "--cases", str(path)])
    assert out.exit == exit and out.error["code"] == code
    assert "cases.jsonl:1" in out.error["message"]


def test_a_context_of_chat_messages_reads_as_their_contents(tmp_path: Path) -> None:
    from habitus.select import evaluate

    path = tmp_path / "cases.jsonl"
    line = {
        "id": "a",
        "prompt": "yes go ahead",
        "context": [{"role": "user", "content": "tidy up"}, {"role": "agent", "text": "Commit it?"}],
        "expected": [],
    }
    path.write_text(json.dumps(line) + "\n")
    assert evaluate.load_cases(path, set())[0].context == ("tidy up", "Commit it?")


def test_a_missing_file_and_a_bad_judge(tmp_path: Path) -> None:
    out = run(["eval", "select", "--cases", str(tmp_path / "nope.jsonl")])
    assert out.exit == 1 and out.error["code"] == "not_found"
    out = run(["eval", "select", "--cases", str(CASES), "--judge", "gpt"])
    assert out.exit == 2 and out.error["code"] == "usage"


REJECTING_MODEL = """
import json, sys
request = json.loads(sys.stdin.read())
candidates = json.loads(request["user"])["candidates"]
print(json.dumps({"schema_version": 1, "judgments": [
    {"id": c["id"], "applicable": False, "confidence_bp": 9000, "reason": "not_currently_relevant"}
    for c in candidates]}))
"""


def test_eval_with_a_model_judge(tmp_path: Path, state_root: Path) -> None:
    program = tmp_path / "rejecting.py"
    program.write_text(REJECTING_MODEL)
    configure(state_root, "judge", kind="command", command=[sys.executable, str(program)])
    path = write_cases(tmp_path / "cases.jsonl", SMALL[:2])
    out = run(["eval", "select", "--cases", str(path), "--judge", "model:judge"])
    assert out.exit == 0, out.stderr
    assert out.result["judge"] == "model:judge"
    assert (out.result["tp"], out.result["fp"], out.result["fn"]) == (0, 0, 1)


def test_the_gate_is_well_formed_data() -> None:
    """scripts/calibrate_select.py writes gate.json: one gate per packaged model kind, each naming the
    features it was fitted over (a feature added since weighs nothing in an older fit)."""
    from habitus.select import gate

    data = gate.weights()
    assert data["models"]["e5"]["features"] == list(gate.FEATURES)
    for kind, habits in (("e5", 32), ("e5/small", 3), ("minilm", 32), ("minilm/small", 3)):
        fitted = data["models"][kind]
        model = gate.for_kind(kind.split("/")[0], habits)
        assert model.accept_bp == fitted["accept_bp"]
        names = fitted["features"]
        assert set(names) <= set(gate.FEATURES) and len(names) == len(fitted["pair"]["weights"])
        for name, weight in zip(names, fitted["pair"]["weights"], strict=True):
            assert model.pair.weights[gate.FEATURES.index(name)] == weight
        assert all(model.pair.weights[gate.FEATURES.index(n)] == 0 for n in set(gate.FEATURES) - set(names))
        assert len(model.pair.weights) == len(gate.FEATURES) and len(model.live.weights) == 384
        assert len(model.reference) == 384 and 2000 <= model.accept_bp <= 9500
        assert set(fitted["dropped"]) <= set(gate.RULES)
        for rule in fitted["dropped"]:  # a rule without a measured gain carries no weight
            assert model.pair.weights[gate.FEATURES.index(rule)] == 0
    with pytest.raises(HabitusError) as caught:
        gate.for_kind("added")
    assert caught.value.code == "model_unavailable"


def test_a_gate_naming_a_feature_this_version_lacks_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A gate.json from a newer fit cannot be read by weight position: it fails closed (no guidance)."""
    import copy

    from habitus.select import gate

    data = copy.deepcopy(gate.weights())
    data["models"]["e5"]["features"] = [*data["models"]["e5"]["features"][:-1], "from_the_future"]
    monkeypatch.setattr(gate, "weights", lambda: data)
    gate.for_kind.cache_clear()
    try:
        with pytest.raises(HabitusError) as caught:
            gate.for_kind("e5", 32)
        assert caught.value.code == "model_unavailable"
    finally:
        gate.for_kind.cache_clear()


def test_the_training_script_fits_a_separating_gate() -> None:
    """The fitting routine of scripts/calibrate_select.py on a toy problem (the real fit needs minutes)."""
    import numpy as np

    spec = importlib.util.spec_from_file_location(
        "calibrate_select", REPO / "scripts" / "calibrate_select.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 3)) * np.array([0.01, 1.0, 5.0])  # columns of very different spread
    y = (x[:, 0] * 100 + x[:, 1] > 0).astype(float)
    w, b = module.fit(x, y, 1.0)
    predicted = (x @ w + b > 0).astype(float)
    assert (predicted == y).mean() > 0.95 and abs(w[2]) < abs(w[0])
