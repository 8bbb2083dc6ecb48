"""Cached embedding vectors of habit conditions and behaviours.

A row of `habit_vectors` is keyed by (habit, field, model id) and records the dimension and the
input checksum of the exact text embedded (`field_input`: the field without a leading "When"/"Do"), so a vector is used only for the model that made it and
only while the habit's wording is what was embedded. Vectors are derived state: `ensure` rebuilds
missing or stale ones (embedding outside any transaction, then writing in a short one).

`condition_matrix` is the fast read for `select`: it fails closed (`vectors_stale`, exit 3) when any
eligible habit lacks a current vector for the model in use.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from habitus.embed import input_checksum
from habitus.errors import HabitusError
from habitus.habits import rows
from habitus.state.clock import utc_now

if TYPE_CHECKING:
    import numpy as np

    from habitus.embed.engine import Embedder
    from habitus.habits.store import ActiveHabit, Ledger

FIELDS = ("condition", "behavior")
# The leading connective ("When …", "Do …") carries no meaning and makes every pair look alike; it is
# left out of what gets embedded (measured on tests/fixtures/habit_pairs.jsonl: ROC AUC 0.955 -> 0.964).
_LEAD = {
    "condition": re.compile(r"^\s*when\b[\s,:]*", re.IGNORECASE),
    "behavior": re.compile(r"^\s*do\b(?!\s*not\b)[\s,:]*", re.IGNORECASE),
}


def field_input(field: str, text: str) -> str:
    """What is embedded for a habit field: its text without a leading "When"/"Do"."""
    stripped = _LEAD[field].sub("", text, count=1)
    return stripped if stripped.strip() else text


@lru_cache(maxsize=16_384)  # select asks for every active habit's on every prompt
def field_checksum(field: str, text: str) -> str:
    return input_checksum(field_input(field, text))


@dataclass(frozen=True)
class Prepared:
    """Vectors of one wording, computed outside a transaction: field -> (input checksum, float32 bytes)."""

    model_id: str
    dims: int
    items: dict[str, tuple[str, bytes]]


def prepare(embedder: Embedder, condition: str, behavior: str) -> Prepared:
    matrix = embedder.embed([field_input("condition", condition), field_input("behavior", behavior)])
    return Prepared(
        embedder.model_id,
        embedder.dims,
        {
            "condition": (field_checksum("condition", condition), matrix[0].astype("<f4").tobytes()),
            "behavior": (field_checksum("behavior", behavior), matrix[1].astype("<f4").tobytes()),
        },
    )


def store(conn: sqlite3.Connection, habit_id: str, prepared: Prepared) -> None:
    """Write (or replace) the vectors of one habit; call inside a transaction."""
    for field, (checksum, blob) in prepared.items.items():
        conn.execute(
            "DELETE FROM habit_vectors WHERE habit_id = ? AND field = ? AND model_id = ?",
            (habit_id, field, prepared.model_id),
        )
        rows.insert(
            conn,
            "habit_vectors",
            {
                "habit_id": habit_id,
                "field": field,
                "model_id": prepared.model_id,
                "dims": prepared.dims,
                "input": checksum,
                "vector": blob,
                "created_at": utc_now(),
            },
        )


def matches(habit: dict[str, Any], prepared: Prepared) -> bool:
    """The prepared vectors were computed from this habit's current wording."""
    return all(prepared.items[f][0] == field_checksum(f, habit[f]) for f in FIELDS)


def load(
    conn: sqlite3.Connection, habits: list[dict[str, Any]], model_id: str, dims: int
) -> dict[str, dict[str, np.ndarray]]:
    """habit id -> field -> unit vector, for the habits whose vectors are current for this model.

    Rows are verified; a vector computed from other wording or with another dimension is skipped
    (the caller decides whether a missing vector is fatal)."""
    import numpy as np

    wanted = {h["id"]: h for h in habits}
    out: dict[str, dict[str, np.ndarray]] = {}
    if not wanted:
        return out
    ids = list(wanted)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        found = conn.execute(
            f"SELECT * FROM habit_vectors WHERE model_id = ? AND habit_id IN ({marks})", [model_id, *chunk]
        )
        for row in found:
            values = rows.verify("habit_vectors", row)
            habit = wanted[values["habit_id"]]
            if values["dims"] != dims or values["input"] != field_checksum(
                values["field"], habit[values["field"]]
            ):
                continue
            out.setdefault(values["habit_id"], {})[values["field"]] = np.frombuffer(
                values["vector"], dtype="<f4"
            )
    return {hid: fields for hid, fields in out.items() if len(fields) == len(FIELDS)}


def ensure(ledger: Ledger, embedder: Embedder, habits: list[dict[str, Any]]) -> int:
    """Embed and store the vectors these habits (and their examples) lack for `embedder`'s model;
    returns how many habits were (re)embedded."""
    from habitus.habits import examples

    examples.ensure_vectors(ledger, embedder, [h["id"] for h in habits])
    return cached(ledger, embedder, habits)[1]


def embedded(embedder: Embedder, habits: list[dict[str, Any]]) -> dict[str, dict[str, np.ndarray]]:
    """habit id -> field -> vector, embedded now in one batch (nothing read or stored)."""
    if not habits:
        return {}
    matrix = embedder.embed([field_input(f, h[f]) for h in habits for f in FIELDS])
    return {
        h["id"]: {f: matrix[len(FIELDS) * i + j] for j, f in enumerate(FIELDS)} for i, h in enumerate(habits)
    }


def cached(
    ledger: Ledger, embedder: Embedder, habits: list[dict[str, Any]]
) -> tuple[dict[str, dict[str, np.ndarray]], int]:
    """habit id -> field -> vector of these habits for `embedder`'s model, and how many habits' vectors
    were stored now: current vectors are read, the others embedded outside any transaction and stored in a
    short one, whose write re-checks each habit's wording (one reworded meanwhile is returned, not
    stored)."""
    have = load(ledger.conn, habits, embedder.model_id, embedder.dims)
    todo = [h for h in habits if h["id"] not in have]
    if not todo:
        return have, 0
    have.update(embedded(embedder, todo))
    prepared = {
        h["id"]: Prepared(
            embedder.model_id,
            embedder.dims,
            {f: (field_checksum(f, h[f]), have[h["id"]][f].astype("<f4").tobytes()) for f in FIELDS},
        )
        for h in todo
    }
    written = 0
    with ledger.tx():
        for habit_id, vectors in prepared.items():
            row = ledger.conn.execute("SELECT * FROM habits WHERE id = ?", (habit_id,)).fetchone()
            if row is None or not matches(rows.verify("habits", row), vectors):
                continue
            store(ledger.conn, habit_id, vectors)
            written += 1
    return have, written


def condition_matrix(
    conn: sqlite3.Connection, habits: list[ActiveHabit], model_id: str, dims: int, field: str = "condition"
) -> np.ndarray:
    """The cached condition (or behaviour) vectors of these habits, one row each in the same order
    (float32).

    Fails closed with `vectors_stale` when any habit has no current vector for this model."""
    import numpy as np

    matrix = np.zeros((len(habits), dims), dtype=np.float32)
    if not habits:
        return matrix
    index = {h.id: i for i, h in enumerate(habits)}
    expected = {h.id: field_checksum(field, getattr(h, field)) for h in habits}
    seen = set()
    ids = list(index)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        found = conn.execute(
            f"SELECT * FROM habit_vectors WHERE model_id = ? AND field = ? AND habit_id IN ({marks})",
            [model_id, field, *chunk],
        )
        for row in found:
            values = rows.verify("habit_vectors", row)
            hid = values["habit_id"]
            if values["dims"] == dims and values["input"] == expected[hid]:
                matrix[index[hid]] = np.frombuffer(values["vector"], dtype="<f4")
                seen.add(hid)
    if len(seen) != len(habits):
        raise HabitusError(
            "vectors_stale",
            f"{len(habits) - len(seen)} active habit(s) have no current vector for model {model_id}",
            hint="run `habitus habit recheck` to rebuild them",
        )
    return matrix


def retrieval_matrix(
    conn: sqlite3.Connection, habits: list[ActiveHabit], model_id: str, dims: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What select compares a prompt with: one row per habit's condition (in habit order), then one per
    example, and the habit index owning each row; and one row per habit's behaviour (stored beside the
    condition since vectors were first cached: no new row). Fails closed (`vectors_stale`) like
    condition_matrix."""
    import numpy as np

    from habitus.habits import examples

    conditions = condition_matrix(conn, habits, model_id, dims)
    behaviors = condition_matrix(conn, habits, model_id, dims, "behavior")
    extra, owners = examples.matrix(conn, [h.id for h in habits], model_id, dims)
    matrix = np.vstack([conditions, extra]) if len(extra) else conditions
    return matrix, np.asarray([*range(len(habits)), *owners], dtype=np.int64), behaviors


def reembed_approved(ledger: Ledger, embedder: Embedder) -> tuple[int, int]:
    """Vectors of the embedder's model for every approved habit (after `model use`): how many were
    computed, and how many approved habits there are."""
    from habitus.habits.store import APPROVED, habits  # here: `store` and `habits` name other things above

    approved = habits(ledger.conn, APPROVED)
    return ensure(ledger, embedder, approved), len(approved)


def forget_model(ledger: Ledger, name: str) -> int:
    """Delete every vector a model of this name made (model ids are NAME@FINGERPRINT, so every version
    ever added under the name goes), in one transaction. Returns how many rows went."""
    with ledger.tx():
        return ledger.conn.execute("DELETE FROM habit_vectors WHERE model_id GLOB ?", (f"{name}@*",)).rowcount
