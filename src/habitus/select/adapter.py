"""The prompt adapter: a linear map that carries a prompt's embedding towards the words of the habit
conditions it calls for, learned from a bank of hand-written prompts of recurring coding situations.

A habit's condition ("When fixing a bug") is rarely worded like the prompt that calls for it ("the
cart total is a cent short, sort it out", "die Tests sind rot, kannst du das fixen?"), and a small
embedding model's cosine between the two is barely higher than with unrelated conditions. The bank
(`bank/*.jsonl`, package data) holds 28 prompts for each of about 200 situations of software work
("When writing a commit message", "When a CI pipeline fails", ...): ten English ones in several
styles (plain, paraphrases sharing no word with the description, two-word imperatives, typos,
several clauses, pasted logs) and two in each of nine other languages, written by helpers who never
saw habitus's code, its rules or its evaluation sets. Nothing of a user's is in it.

scripts/build_bank.py fits one matrix A (dims x dims, started at the identity and kept near it) so
that a bank prompt's adapted vector, unit(prompt @ A), is nearest to its own situation's description
among all of them (a softmax over the descriptions, cross-entropy). Conditions are not adapted, so the
map applies to any habit's condition, in the bank or not: select compares the adapted prompt with
each condition, and the raw prompt with a habit's exemplars (prompts themselves). On the select
development sets of catalog A, none of which is in the bank, it raised the share of prompts whose
expected habit ranks first from 78 to 107 of 132 (outside dev set) and the pairs' ROC AUC from 0.875
to 0.966 (docs/quality.md).

Beside the matrix the package keeps the bank's descriptions as the model embeds them: a prompt nearer
some other situation of software work than a habit's condition is less likely that habit's (`rivals`);
and the bank's prompts themselves, adapted (`prompts.npy`, float16, with each one's situation in
`owners.npy`): the prompt's nearest bank prompts say which situation it is in, and a habit whose
condition is that situation's description is likelier (`situations`, which select ranks by).

The matrix is packaged for the embedded default model only (multilingual-e5-small); `manifest.json`
pins that model's fingerprint and the SHA-256 of every bank file. Any other model, or a bank that does
not match its manifest, means no adapter: the prompt is compared as it is (and the gate for that
model kind was fitted that way).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

FOLDER = "bank"


def folder() -> Any:
    return resources.files("habitus.select").joinpath(FOLDER)


def bank_files() -> list[Any]:
    return sorted((e for e in folder().iterdir() if e.name.endswith(".jsonl")), key=lambda e: e.name)


def read_bank() -> list[dict[str, Any]]:
    """Every prompt line of the bank, files in name order, lines in file order."""
    out: list[dict[str, Any]] = []
    for entry in bank_files():
        out.extend(
            json.loads(line) for line in entry.read_text(encoding="utf-8").splitlines() if line.strip()
        )
    return out


def bank_digest() -> dict[str, str]:
    """SHA-256 of each bank file, by name: what the manifest pins."""
    return {entry.name: hashlib.sha256(entry.read_bytes()).hexdigest() for entry in bank_files()}


@dataclass(frozen=True)
class Adapter:
    """The fitted map and the bank's situation descriptions as the model embeds them (unit rows): the
    situations a prompt could be in besides a habit's own."""

    matrix: np.ndarray  # (dims, dims) float32
    descriptions: np.ndarray  # (situations, dims) float32
    prompts: Any = None  # (bank prompts, dims) float32: each bank prompt adapted (unit rows)
    owners: Any = None  # (bank prompts,) int: each bank prompt's situation (a row of descriptions)
    centroids: Any = None  # (situations, dims) float32: unit mean of each situation's adapted prompts


@cache
def load(model_id: str) -> Adapter | None:
    """The adapter for this embedding model (`NAME@FINGERPRINT`), or None when none is packaged for it
    or the package's files do not agree with the manifest."""
    import numpy as np

    try:
        manifest = json.loads(folder().joinpath("manifest.json").read_text(encoding="utf-8"))
        if (
            manifest.get("fingerprint") != model_id.rpartition("@")[2]
            or manifest.get("bank") != bank_digest()
        ):
            return None
        with folder().joinpath("adapter.npy").open("rb") as handle:
            matrix = np.load(handle, allow_pickle=False).astype(np.float32)
        with folder().joinpath("descriptions.npy").open("rb") as handle:
            descriptions = np.load(handle, allow_pickle=False).astype(np.float32)
        with folder().joinpath("prompts.npy").open("rb") as handle:
            prompts = np.load(handle, allow_pickle=False).astype(np.float32)
        with folder().joinpath("owners.npy").open("rb") as handle:
            owners = np.load(handle, allow_pickle=False).astype(np.int64)
    except (OSError, ValueError, AttributeError):
        return None
    dims = matrix.shape[0] if matrix.ndim == 2 else 0
    if (
        matrix.shape != (dims, dims)
        or descriptions.ndim != 2
        or descriptions.shape[1] != dims
        or prompts.shape != (manifest.get("prompts"), dims)
        or owners.shape != (len(prompts),)
        or not len(owners)
        or owners[0] != 0
        or np.any(np.diff(owners) != (np.diff(owners) > 0))  # grouped by situation, each one present
        or owners[-1] != len(descriptions) - 1
        or not all(np.all(np.isfinite(a)) for a in (matrix, descriptions, prompts))
    ):
        return None
    norms = np.maximum(np.linalg.norm(descriptions, axis=1, keepdims=True), 1e-12)
    centroids = np.add.reduceat(prompts, np.flatnonzero(np.diff(owners, prepend=-1)), axis=0)
    centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12)
    return Adapter(matrix, descriptions / norms, prompts, owners, centroids)


def bank_prompts(vectors: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """The bank prompts' vectors as `situations` reads them: adapted, unit rows, float16 (packaged)."""
    import numpy as np

    return adapt(vectors.astype(np.float32), Adapter(matrix.astype(np.float32), matrix[:0])).astype(
        np.float16
    )


def adapt(vectors: np.ndarray, fitted: Adapter | None) -> np.ndarray:
    """unit(vectors @ matrix), row by row; the vectors themselves when there is no adapter."""
    import numpy as np

    if fitted is None or not len(vectors):
        return vectors
    out = vectors @ fitted.matrix
    return (out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def with_exemplars(conditions: np.ndarray, exemplars: np.ndarray, owners: Any, fitted: Adapter) -> np.ndarray:
    """Each condition's vector moved to unit(condition + mean of its adapted exemplars): a habit's
    examples (prompts it applies to) carried into condition wording, on the same scale as a condition
    without any. Conditions without exemplars are returned as they are."""
    import numpy as np

    if not len(exemplars):
        return conditions
    out = conditions.astype(np.float32, copy=True)
    carried = adapt(exemplars, fitted)
    owners = np.asarray(owners)
    for habit in np.unique(owners):
        mean = carried[owners == habit].mean(axis=0)
        vector = conditions[habit] + mean
        out[habit] = vector / max(float(np.linalg.norm(vector)), 1e-12)
    return out


NEAR = 0.92  # a bank situation this close to a condition is that condition's own, not a rival
RIVAL_CAP = 0.2


def rivals(adapted: np.ndarray, conditions: np.ndarray, fitted: Adapter | None) -> np.ndarray:
    """(habits,): each condition's best score over the texts minus the best score of any bank
    situation that is not the condition's own (a description under NEAR), within +-RIVAL_CAP: how much
    nearer this habit the prompt is than any other known situation of software work. Zero without an
    adapter."""
    import numpy as np

    if fitted is None or not len(conditions) or not len(adapted):
        return np.zeros(len(conditions), dtype=np.float32)
    own = (adapted @ conditions.T).max(axis=0)
    best = (adapted @ fitted.descriptions.T).max(axis=0)  # (situations,): the best over the texts
    near = conditions @ fitted.descriptions.T >= NEAR  # (habits, situations)
    other = np.where(near, -1.0, best[None, :]).max(axis=1)  # max over texts and situations commute
    return np.clip(own - other, -RIVAL_CAP, RIVAL_CAP).astype(np.float32)


NEIGHBOURS = 40  # bank prompts a prompt's situation is read from
NEIGHBOUR_SCALE = 50.0  # softmax scale over their cosines (as the adapter was fitted)
SEARCHED = 10  # situations per text whose bank prompts are searched for neighbours
SITUATION_SCALE = 100.0  # softmax scale of a condition over the bank's situation descriptions


def situations(adapted: np.ndarray, conditions: np.ndarray, fitted: Adapter | None) -> np.ndarray:
    """(habits,): how likely the prompt is in each habit's situation, read through the bank. The prompt's
    nearest bank prompts (adapted, both) vote for their situations (softmax of their cosines); each
    condition is spread over the bank's situations by its closeness to their descriptions; a habit
    scores the best over the texts of the probability that both land on the same situation. A bank
    prompt that is a paraphrase of the prompt ("pip install rich and put it in requirements.txt") knows
    its situation ("When adding a dependency") where the prompt's cosine with the condition is no higher
    than with unrelated ones. Zeros without an adapter."""
    import numpy as np

    if fitted is None or fitted.centroids is None or not len(conditions) or not len(adapted):
        return np.zeros(len(conditions), dtype=np.float32)
    # neighbours are searched among the prompts of the situations whose centroids lie nearest any text
    # (a tenth to a fifth of the bank: nearly always the same neighbours, at that share of the cost)
    near_situations = adapted @ fitted.centroids.T
    s = min(SEARCHED, near_situations.shape[1])
    chosen = np.zeros(len(fitted.centroids), dtype=bool)
    chosen[np.argpartition(-near_situations, s - 1, axis=1)[:, :s].ravel()] = True
    rows = np.flatnonzero(chosen[fitted.owners])
    cosines = adapted @ fitted.prompts[rows].T  # (texts, searched bank prompts)
    k = min(NEIGHBOURS, cosines.shape[1])
    top = np.argpartition(-cosines, k - 1, axis=1)[:, :k]
    near = np.take_along_axis(cosines, top, axis=1)
    weights = np.exp(NEIGHBOUR_SCALE * (near - near.max(axis=1, keepdims=True)))
    weights /= weights.sum(axis=1, keepdims=True)
    votes = np.zeros((len(adapted), len(fitted.descriptions)), dtype=np.float32)
    np.add.at(votes, (np.arange(len(adapted))[:, None], fitted.owners[rows[top]]), weights)
    spread = SITUATION_SCALE * (conditions @ fitted.descriptions.T)
    spread = np.exp(spread - spread.max(axis=1, keepdims=True))
    spread /= spread.sum(axis=1, keepdims=True)
    return (votes @ spread.T).max(axis=0).astype(np.float32)


def fit(
    prompts: np.ndarray,
    owners: np.ndarray,
    descriptions: np.ndarray,
    *,
    scale: float = 50.0,
    l2: float = 0.01,
    steps: int = 300,
    rate: float = 0.01,
) -> np.ndarray:
    """Fit the adapter (full-batch Adam from the identity, deterministic): minimise the cross-entropy of
    softmax(scale * (prompts @ A) @ descriptions.T) against each prompt's own description, plus
    l2 / 2 * ||A - I||^2. Unit rows in; settings chosen on the select dev sets (docs/quality.md)."""
    import numpy as np

    n, dims = prompts.shape
    x = prompts.astype(np.float64)
    d = descriptions.astype(np.float64)
    target = np.eye(len(d))[owners]
    identity = np.eye(dims)
    a = identity.copy()
    first = np.zeros_like(a)
    second = np.zeros_like(a)
    for step in range(1, steps + 1):
        z = scale * (x @ a) @ d.T
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        grad = x.T @ (((p - target) @ d) * scale) / n + l2 * (a - identity)
        first = 0.9 * first + 0.1 * grad
        second = 0.999 * second + 0.001 * grad * grad
        a -= rate * (first / (1 - 0.9**step)) / (np.sqrt(second / (1 - 0.999**step)) + 1e-8)
    return a.astype(np.float32)
