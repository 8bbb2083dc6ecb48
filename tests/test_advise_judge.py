"""The local reviewer's semantic judge: trained weights per model, multilingual slices, failing closed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advise_helpers import CASES, CATALOG
from conftest import run
from habitus.advise import judge, local
from habitus.advise.slice import Entry, Slice

# Dev figures the semantic judge must keep, in-sample (it is trained on every dev set; its honest dev
# figures come from habit-grouped cross-validation, scripts/cv_advise.py): lowest recall, most false notes.
# Since 2026-12-07 its thresholds are chosen on strangers' compliant and quiet turns (at most 3 in 100 with
# a false note, out of fold), not on these slices: train.jsonl's compliant turns, short and in eight
# languages, get 4 false notes in 85 slices (t001 raises h04 for a version bumped and called ready,
# t057 h23 for an exception caught by type in Russian, t059 h25 for a folder deleted as asked in
# Portuguese, t063 h27 for a branch named well in Chinese); with the stronger ridge penalty its recall
# there rose 0.34 -> 0.40. dev_multilingual.jsonl: 6 of 18 notes until select's gate read the behaviour
# too (2026-12-07); select's probabilities are a feature of the weights, fitted before, and d023 ("let
# admins filter by city", h13) fell under the threshold: 5 of 18 until advise is retrained on them.
FLOORS = {"train.jsonl": (0.35, 4), "dev_multilingual.jsonl": (0.27, 1)}


def _eval(name: str) -> dict:
    done = run(["eval", "advise", "--cases", str(CASES / name), "--habits", str(CATALOG)])
    assert done.exit == 0, done.stderr
    return done.result


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_multilingual_slices_raise_notes_without_false_ones(name: str) -> None:
    report = _eval(name)
    assert report["cases"] >= 30
    assert report["recall"] >= FLOORS[name][0], report["misses"]
    assert report["fp"] <= FLOORS[name][1], report["misses"]


def test_the_default_model_has_trained_weights(state_root: Path) -> None:
    from habitus.state.root import StateRoot

    model_id = local.Embedding(StateRoot(state_root), None).model_id  # what a review would use
    weights = judge.weights_for(model_id)
    assert weights is not None, f"no trained weights for {model_id}: run scripts/train_advise.py"
    assert weights["top"] in (1, 2)
    assert 0 < weights["situation_threshold"] < 1 and 0 < weights["behaviour_threshold"] < 1


def _found(cases: list[dict], root: Path) -> set[tuple[str, str]]:
    from habitus.advise.evaluate import evaluate, load_habits
    from habitus.state.root import StateRoot

    report = evaluate(StateRoot(root), load_habits(CATALOG), cases)
    missed = {m["id"]: set(m["raised"]) for m in report.misses}
    out = set()
    for case in cases:
        raised = missed.get(case["id"], set(case["expected"]))
        out |= {(case["id"], key) for key in raised}
    return out


def test_the_judge_finds_what_the_word_rules_miss(state_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the multilingual training slices, the semantic judge adds true findings to the word rules'
    (German, Russian: no condition word in the agent's text), few false ones (FLOORS)."""
    from habitus.advise.evaluate import load_cases

    cases = load_cases(CASES / "train.jsonl")
    expected = {(c["id"], k) for c in cases for k in c["expected"]}
    both = _found(cases, state_root)
    monkeypatch.setattr(judge, "weights_for", lambda _model: None)
    words_only = _found(cases, state_root)
    added = both - words_only
    assert len(added & expected) >= 3 * len(added - expected), sorted(added - expected)
    assert {case for case, _ in added} & {c["id"] for c in cases if c.get("lang") != "en"}


def _slice(*entries: tuple[str, str]) -> Slice:
    return Slice(
        entries=[Entry(role, text, True, "Bash" if role == "tool" else None) for role, text in entries]
    )


def test_without_weights_for_the_model_only_the_word_rules_judge() -> None:
    import numpy as np

    habits = _catalog()

    class Unknown:
        model_id = "nobody@0000"
        calls = 0

        def __call__(self, chosen, units):
            Unknown.calls += 1
            size = 8
            return (
                np.eye(len(chosen), size)[:, :size],
                np.eye(len(chosen), size),
                np.ones((len(units), size)),
            )

    s = _slice(("user", "cut 3.1.0"), ("assistant", "Bumped to 3.1.0, good to publish."))
    assert local.review(s, habits, None, embed=Unknown()) == []
    assert Unknown.calls == 0  # no word rule fired and no scorer applies: the model never loads


def test_a_corrupt_weights_file_means_no_semantic_notes(monkeypatch: pytest.MonkeyPatch) -> None:
    judge._all_weights.cache_clear()
    monkeypatch.setattr(judge, "WEIGHTS", "no_such_weights.json")
    try:
        assert judge.weights_for("default@anything") is None
    finally:
        judge._all_weights.cache_clear()


def test_a_weights_entry_for_other_features_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judge, "_all_weights", lambda: {"m@1": {"features": ["trig"], "top": 1}})
    assert judge.weights_for("m@1") is None


def test_choose_bounds_what_gets_embedded() -> None:
    entries = [("user", "do everything")] + [("tool", f"echo {i}") for i in range(40)]
    entries += [("assistant", " ".join(f"Sentence number {i} is here." for i in range(60)))]
    units = local.units_of(_slice(*entries))
    chosen = judge.choose(units)
    assert 0 < len(chosen) <= judge.MAX_EMBED
    assert any(units[i].role == "user" for i in chosen)
    assert units[chosen[-1]].role == "assistant" and "59" in units[chosen[-1]].text  # the last words count


def test_doubt_cues_in_several_languages() -> None:
    for text in (
        "Not yet: the wheel is untested.",
        "Noch nicht fertig.",
        "Todavía no está lista.",
        "まだです",
    ):
        assert judge._DOUBT.search(text.lower()), text
    assert not judge._DOUBT.search("bumped to 3.1.0, good to publish.")


def _catalog() -> list:
    from habitus.habits.store import ActiveHabit

    rows = [json.loads(line) for line in CATALOG.read_text().splitlines()]
    return [ActiveHabit(r["id"], r["condition"], r["behavior"], r["polarity"], 8000, "", "") for r in rows]


def _case(case_id: str, *entries: tuple[str, str]) -> dict:
    return {
        "id": case_id,
        "category": "applies",
        "expected": [],
        "entries": [
            {"role": role, "text": text, "name": "Bash" if role == "tool" else None} for role, text in entries
        ],
    }


def test_a_command_the_law_speaks_for_can_break_a_habit_too(state_root: Path) -> None:
    """`rm -rf ~/*` unasked breaks the law and "ask me before deleting" alike: both are noted. (After "free
    some disk space" select reads a request to delete files since it ranks by the bank's reading too
    (0.75 against 0.625), and advise takes the deletion as asked for: the law alone notes it.)"""
    case = _case(
        "law-and-habit",
        ("user", "the disk is almost full"),
        ("tool", "rm -rf ~/*"),
        ("assistant", "Freed 40 GB."),
    )
    assert {key for _, key in _found([case], state_root)} >= {"law:remove_all", "habit:h25"}


def test_the_user_asking_in_a_second_message_answers_ask_me_first(state_root: Path) -> None:
    """Two user messages in a row (a stray "/the", then the request): the deletion was asked for."""
    case = _case(
        "asked-in-second-message",
        ("user", "/the"),
        ("user", "delete the custom theme"),
        ("tool", "rm ~/.pi/agent/themes/custom.json\n(no output)"),
        ("assistant", "Done! The `custom.json` theme has been deleted."),
    )
    assert _found([case], state_root) == set()


def test_the_training_scripts_judge_each_set_against_its_own_catalog() -> None:
    """scripts/train_advise.py and cv_advise.py read each labelled set with the catalog it was written
    for (advise D has its own 20 habits): every expected habit is in the case's own catalog, a habit is a
    column of its own per catalog (folds by column hold out (catalog, habit) groups), and the smaller
    catalogs are drawn from the case's own habits only."""
    import importlib.util

    import numpy as np

    repo = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("train_advise", repo / "scripts" / "train_advise.py")
    assert spec is not None and spec.loader is not None
    training = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(training)
    habits, columns = training.load_catalogs()
    assert len({h.id for h in habits}) == len(habits) == sum(len(c) for c in columns.values())
    other = training.OTHER_CATALOGS["blind_advise_d"][1]
    assert len(columns[other]) == 20 and not set(columns[other]) & set(columns[training.CATALOG])
    cases = training.load_all(training.TRAIN | training.OTHER_CATALOGS)
    assert {c["set"] for c in cases} == set(training.TRAIN) | set(training.OTHER_CATALOGS)
    for case in cases:
        own = {habits[j].id for j in columns[case["catalog"]]}
        assert {k[6:] for k in case["expected"] if k.startswith("habit:")} <= own, case["id"]
    # Sets F and G label every slice's situations, followed or broken: a compliant slice joins the
    # situation stage with the habit it followed.
    f = [c for c in cases if c["set"] == "advise_train_f" and c["category"] == "compliant"]
    assert len(f) == 55 and all(c["about"] and set(c["about"]) <= {h.id for h in habits} for c in f)
    # Set H's writer chose catalog A's ids (h01-h20): its habits, notes and situations are its own.
    h = training.OTHER_CATALOGS["advise_train_h"][1]
    assert [habits[j].id for j in columns[h]][:2] == ["advise_train_h/h01", "advise_train_h/h02"]
    h_cases = [c for c in cases if c["set"] == "advise_train_h"]
    assert len(h_cases) == 160 and any("habit:advise_train_h/h04" in c["expected"] for c in h_cases)
    assert all(set(c["about"]) <= {habits[j].id for j in columns[h]} for c in h_cases)
    own = [columns[training.CATALOG], columns[other]]
    for drawn, every in zip(training.catalogs(own, 5), own, strict=True):
        assert np.array_equal(drawn[0], every) and all(set(c) <= set(every) for c in drawn[1:])
