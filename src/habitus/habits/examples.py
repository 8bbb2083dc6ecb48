"""Exemplars: prompts a habit is known to apply to, compared with a new prompt next to its condition.

A learned habit keeps the redacted user messages of its evidence (source `evidence`, added when it is
approved); `habit declare --example TEXT` gives examples at declare time (`declared`); `habit example
add ID TEXT` records a prompt the user confirms the habit for (`confirmed`). Every text is redacted and
bounded (MAX_CHARS) before it is stored; a habit keeps at most MAX_PER_HABIT, the oldest first.

Exemplars are not part of the approved wording (its checksum covers condition, behaviour and
polarity only), so adding one never re-opens review; instead each row is checksummed like every habit
row, and each addition or removal is an audit row (`example_added` / `example_removed`, with the
example's id, source and the SHA-256 of its text), so `habit show` and `verify` account for them.

Vectors of exemplars are derived state in `habit_example_vectors`, keyed by (example, model id).
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from habitus import codec
from habitus.errors import HabitusError, bad_request
from habitus.habits import rows
from habitus.state.clock import utc_now

if TYPE_CHECKING:
    import numpy as np

    from habitus.embed.engine import Embedder
    from habitus.habits.store import Ledger

MAX_CHARS = 300
MAX_PER_HABIT = 8
MAX_EVIDENCE = 3  # evidence notes kept as exemplars when a learned habit is approved
SOURCES = ("evidence", "declared", "confirmed")


def clean(text: object, field: str = "example") -> str:
    """A redacted, whitespace-collapsed example of at most MAX_CHARS characters."""
    from habitus.redact import redact

    if not isinstance(text, str):
        raise bad_request(field, "expected a string")
    collapsed = " ".join(text.split())
    if not collapsed:
        raise bad_request(field, "expected a non-empty example")
    if len(collapsed) > 4 * MAX_CHARS:
        raise bad_request(field, f"expected at most {MAX_CHARS} characters")
    redacted = redact(collapsed)[0][:MAX_CHARS].strip()
    return redacted


def of(conn: sqlite3.Connection, habit_id: str) -> list[dict[str, Any]]:
    found = conn.execute("SELECT * FROM habit_examples WHERE habit_id = ? ORDER BY id", (habit_id,))
    return [rows.verify("habit_examples", r) for r in found]


def public(example: dict[str, Any]) -> dict[str, Any]:
    return {k: example[k] for k in ("id", "text", "source", "created_at")}


def listed(ledger: Ledger, habit_id: str) -> list[dict[str, Any]]:
    """A habit's examples as commands show them, oldest first."""
    return [public(e) for e in of(ledger.conn, habit_id)]


def remove_one(ledger: Ledger, habit_id: str, example_id: int, actor: str) -> dict[str, Any]:
    """`remove` in its own transaction."""
    with ledger.tx():
        return remove(ledger.conn, habit_id, example_id, actor)


def add(conn: sqlite3.Connection, habit_id: str, text: str, source: str, actor: str) -> dict[str, Any] | None:
    """Store one (already cleaned) example; None when the habit already has it or is full. Call inside
    the writing transaction."""
    if source not in SOURCES:
        raise ValueError(source)
    current = of(conn, habit_id)
    if any(e["text"] == text for e in current) or len(current) >= MAX_PER_HABIT:
        return None
    (next_id,) = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM habit_examples").fetchone()
    row = rows.insert(
        conn,
        "habit_examples",
        {
            "id": next_id,
            "habit_id": habit_id,
            "text": text,
            "source": source,
            "actor": actor,
            "created_at": utc_now(),
        },
    )
    rows.audit(
        conn, habit_id, "example_added", actor, example=next_id, source=source, text=codec.checksum(text)
    )
    return row


def remove(conn: sqlite3.Connection, habit_id: str, example_id: int, actor: str) -> dict[str, Any]:
    found = [e for e in of(conn, habit_id) if e["id"] == example_id]
    if not found:
        raise HabitusError("not_found", f"habit {habit_id} has no example {example_id}")
    conn.execute("DELETE FROM habit_example_vectors WHERE example_id = ?", (example_id,))
    conn.execute("DELETE FROM habit_examples WHERE id = ?", (example_id,))
    rows.audit(
        conn,
        habit_id,
        "example_removed",
        actor,
        example=example_id,
        source=found[0]["source"],
        text=codec.checksum(found[0]["text"]),
    )
    return found[0]


def from_evidence(conn: sqlite3.Connection, habit_id: str) -> list[str]:
    """The redacted user messages of a habit's evidence, first ones first (at most MAX_EVIDENCE)."""
    found = conn.execute(
        "SELECT * FROM habit_evidence WHERE habit_id = ? ORDER BY day, id", (habit_id,)
    ).fetchall()
    out: list[str] = []
    for row in found:
        note = rows.verify("habit_evidence", row).get("note")
        if isinstance(note, str) and note.strip():
            text = clean(note[: 4 * MAX_CHARS])
            if text not in out:
                out.append(text)
        if len(out) >= MAX_EVIDENCE:
            break
    return out


# -- vectors ---------------------------------------------------------------------------------------


def ensure_vectors(ledger: Ledger, embedder: Embedder, habit_ids: list[str]) -> int:
    """Embed the examples of these habits that lack a vector for `embedder`'s model."""
    from habitus.embed import input_checksum

    todo: list[dict[str, Any]] = []
    for start in range(0, len(habit_ids), 500):
        chunk = habit_ids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        for row in ledger.conn.execute(
            f"SELECT e.* FROM habit_examples e WHERE e.habit_id IN ({marks}) AND NOT EXISTS ("
            "SELECT 1 FROM habit_example_vectors v WHERE v.example_id = e.id AND v.model_id = ?)",
            [*chunk, embedder.model_id],
        ):
            todo.append(rows.verify("habit_examples", row))
    if not todo:
        return 0
    matrix = embedder.embed([e["text"] for e in todo])
    written = 0
    with ledger.tx():
        for example, vector in zip(todo, matrix, strict=True):
            still = ledger.conn.execute(
                "SELECT checksum FROM habit_examples WHERE id = ?", (example["id"],)
            ).fetchone()
            if still is None or still[0] != example["checksum"]:
                continue
            ledger.conn.execute(
                "DELETE FROM habit_example_vectors WHERE example_id = ? AND model_id = ?",
                (example["id"], embedder.model_id),
            )
            rows.insert(
                ledger.conn,
                "habit_example_vectors",
                {
                    "example_id": example["id"],
                    "model_id": embedder.model_id,
                    "dims": embedder.dims,
                    "input": input_checksum(example["text"]),
                    "vector": vector.astype("<f4").tobytes(),
                    "created_at": utc_now(),
                },
            )
            written += 1
    return written


def matrix(
    conn: sqlite3.Connection, habit_ids: list[str], model_id: str, dims: int
) -> tuple[np.ndarray, list[int]]:
    """(vectors, owner positions) of the examples of these habits for this model. Fails closed with
    `vectors_stale` when an example has no current vector."""
    import numpy as np

    from habitus.embed import input_checksum

    position = {hid: i for i, hid in enumerate(habit_ids)}
    vectors: list[np.ndarray] = []
    owners: list[int] = []
    missing = 0
    for start in range(0, len(habit_ids), 500):
        chunk = habit_ids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        found = conn.execute(
            "SELECT e.id AS eid, e.habit_id AS hid, e.text AS etext, e.source AS esource, e.actor AS eactor, "
            "e.created_at AS eat, e.checksum AS esum, v.* FROM habit_examples e LEFT JOIN "
            "habit_example_vectors v ON v.example_id = e.id AND v.model_id = ? "
            f"WHERE e.habit_id IN ({marks}) ORDER BY e.id",
            [model_id, *chunk],
        )
        for row in found:
            example = rows.verify(
                "habit_examples",
                {
                    "id": row["eid"],
                    "habit_id": row["hid"],
                    "text": row["etext"],
                    "source": row["esource"],
                    "actor": row["eactor"],
                    "created_at": row["eat"],
                    "checksum": row["esum"],
                },
            )
            if row["example_id"] is None:
                missing += 1
                continue
            values = rows.verify("habit_example_vectors", row)
            if values["dims"] != dims or values["input"] != input_checksum(example["text"]):
                missing += 1
                continue
            vectors.append(np.frombuffer(values["vector"], dtype="<f4"))
            owners.append(position[example["habit_id"]])
    if missing:
        raise HabitusError(
            "vectors_stale",
            f"{missing} habit example(s) have no current vector for model {model_id}",
            hint="run `habitus habit recheck` to rebuild them",
        )
    out = np.stack(vectors) if vectors else np.zeros((0, dims), dtype=np.float32)
    return out, owners


def attach(
    ledger: Ledger, embedder: Embedder, habit_id: str, texts: list[str], source: str, actor: str = "user"
) -> list[dict[str, Any]]:
    """Add cleaned examples to a habit (one transaction, audited), then embed them for the model in
    use. Returns the examples added (one already there, or over MAX_PER_HABIT, is skipped)."""
    cleaned = [clean(t) for t in texts]
    added = []
    with ledger.tx():
        if ledger.conn.execute("SELECT 1 FROM habits WHERE id = ?", (habit_id,)).fetchone() is None:
            raise HabitusError("not_found", f"no habit {habit_id}")
        for text in cleaned:
            row = add(ledger.conn, habit_id, text, source, actor)
            if row is not None:
                added.append(row)
    ensure_vectors(ledger, embedder, [habit_id])
    return added
