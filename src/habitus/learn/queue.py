"""Analyze's rows in the ledger: read watermarks, failed batches, quarantined model answers, runs.

- `analyze_watermarks`: per observation generation, the last seq analysed and that record's
  `"<seq>:<checksum>"` (the next record's `prev`), so a replaced or rewritten log is noticed.
- `analyze_failures`: a batch that failed, by (generation, first seq), with its attempts. The batch is
  retried by the next run; its MAX_ATTEMPTS-th failure skips it (`skipped` = 1) and moves the
  watermark past it, so a batch that always fails is not re-read forever.
- `analyze_quarantine`: model answers refused by validation, redacted, at most QUARANTINE_KEEP rows.
- `analyze_runs`: the last RUNS_KEEP runs that read observations (what `habitus status` shows).
- `analyze_pending`: instructions said once and waiting for a repeat in a later batch (a calm
  preference, a correction that could not start a habit on its own): already-redacted text of at most
  160 characters with its observation ref and day; the newest PENDING_KEEP are kept, none more than
  PENDING_DAYS older than the newest; a note is deleted once a proposal cites it.

All rows are sealed with checksums (`habitus.habits.rows`); a tampered row fails closed (exit 3).
Writers call these inside the ledger transaction they belong to.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from habitus import codec
from habitus.habits import rows
from habitus.state.clock import utc_now
from habitus.state.root import StateRoot

MAX_ATTEMPTS = 3
QUARANTINE_KEEP = 200
RUNS_KEEP = 50
PENDING_KEEP = 500
PENDING_DAYS = 60


@dataclass(frozen=True)
class Mark:
    """Where analysis of one generation stands."""

    generation: int
    seq: int
    record: str  # "<seq>:<checksum>" of the last record read ("" before the first)


def watermarks(conn: sqlite3.Connection | None) -> dict[int, Mark]:
    if conn is None:
        return {}
    out = {}
    for row in conn.execute("SELECT * FROM analyze_watermarks ORDER BY generation"):
        values = rows.verify("analyze_watermarks", row)
        out[values["generation"]] = Mark(values["generation"], values["seq"], values["record"])
    return out


def advance(
    conn: sqlite3.Connection, generation: int, seq: int, record: str, *, expected: Mark | None
) -> None:
    """Move a generation's watermark (inside the batch transaction), refusing if it moved meanwhile."""
    current = watermarks_of(conn, generation)
    if current != expected:
        from habitus.errors import HabitusError

        raise HabitusError("stale", f"ledger.sqlite: the analyze watermark of generation {generation} moved")
    conn.execute("DELETE FROM analyze_watermarks WHERE generation = ?", (generation,))
    rows.insert(
        conn,
        "analyze_watermarks",
        {"generation": generation, "seq": seq, "record": record, "updated_at": utc_now()},
    )


def watermarks_of(conn: sqlite3.Connection, generation: int) -> Mark | None:
    row = conn.execute("SELECT * FROM analyze_watermarks WHERE generation = ?", (generation,)).fetchone()
    if row is None:
        return None
    values = rows.verify("analyze_watermarks", row)
    return Mark(values["generation"], values["seq"], values["record"])


def failure(conn: sqlite3.Connection, generation: int, seq_start: int) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT * FROM analyze_failures WHERE generation = ? AND seq_start = ?", (generation, seq_start)
    ).fetchone()
    return None if row is None else rows.verify("analyze_failures", row)


def record_failure(
    conn: sqlite3.Connection, generation: int, seq_start: int, seq_end: int, reason: str
) -> dict[str, Any]:
    """Count one failed attempt of a batch; the MAX_ATTEMPTS-th marks it skipped. Returns the row."""
    before = failure(conn, generation, seq_start)
    now = utc_now()
    attempts = (before["attempts"] if before else 0) + 1
    conn.execute(
        "DELETE FROM analyze_failures WHERE generation = ? AND seq_start = ?", (generation, seq_start)
    )
    return rows.insert(
        conn,
        "analyze_failures",
        {
            "generation": generation,
            "seq_start": seq_start,
            "seq_end": max(seq_end, before["seq_end"] if before else seq_end),
            "attempts": attempts,
            "reason": reason[:64],
            "skipped": int(attempts >= MAX_ATTEMPTS),
            "first_at": before["first_at"] if before else now,
            "last_at": now,
        },
    )


def clear_failure(conn: sqlite3.Connection, generation: int, seq_start: int) -> None:
    """A batch that failed before has now been analysed: forget its failed attempts."""
    conn.execute(
        "DELETE FROM analyze_failures WHERE generation = ? AND seq_start = ? AND skipped = 0",
        (generation, seq_start),
    )


def quarantine(
    conn: sqlite3.Connection,
    *,
    generation: int,
    seq_start: int,
    seq_end: int,
    model: str,
    reason: str,
    detail: dict[str, Any],
    answer: str,
) -> None:
    """Keep a refused model answer (redacted, bounded) for inspection; drop the oldest beyond the cap."""
    text = _redacted_answer(answer)
    rows.insert(
        conn,
        "analyze_quarantine",
        {
            "generation": generation,
            "seq_start": seq_start,
            "seq_end": seq_end,
            "model": model[:64],
            "reason": reason[:64],
            "detail": codec.canonical(detail).decode()[:2000],
            "answer": text[:24_000],
            "created_at": utc_now(),
        },
    )
    conn.execute(
        "DELETE FROM analyze_quarantine WHERE id NOT IN "
        "(SELECT id FROM analyze_quarantine ORDER BY id DESC LIMIT ?)",
        (QUARANTINE_KEEP,),
    )


WITHHELD = "[habitus: answer withheld: it still looked like a secret after redaction]"


def _redacted_answer(answer: str) -> str:
    """A model answer made safe to store. An answer is JSON text, where strings are escaped (`\\"`,
    `\\n`), so the redactor's patterns (`"password": "..."`, a PEM key over several lines) would not match
    the raw text: a parsed answer is redacted value by value (secret-named keys lose their values);
    one that does not parse (cut at the size cap) is unescaped first. What still looks sensitive is
    withheld whole."""
    from habitus.redact import looks_sensitive, redact, redact_obj

    try:
        text = codec.dumps(redact_obj(codec.loads(answer))[0]).decode()
    except (ValueError, TypeError):  # not JSON, or nested deeper than it can be written back
        text = answer.replace('\\"', '"').replace("\\n", "\n").replace("\\/", "/").replace("\\\\", "\\")
    text, _ = redact(text)
    return WITHHELD if looks_sensitive(text) else text


def record_run(conn: sqlite3.Connection, run: dict[str, Any]) -> None:
    rows.insert(conn, "analyze_runs", run)
    conn.execute(
        "DELETE FROM analyze_runs WHERE id NOT IN (SELECT id FROM analyze_runs ORDER BY id DESC LIMIT ?)",
        (RUNS_KEEP,),
    )


def last_run(conn: sqlite3.Connection) -> dict[str, Any] | None:
    row = conn.execute("SELECT * FROM analyze_runs ORDER BY id DESC LIMIT 1").fetchone()
    if row is None:
        return None
    values = rows.verify("analyze_runs", row)
    return {
        "analyzer": values["analyzer"],
        "started_at": values["started_at"],
        "finished_at": values["finished_at"],
        "outcome": values["outcome"],
        "batches": values["batches"],
        "records": values["records"],
        "proposals": values["proposals"],
        **codec.loads(values["data"]),
    }


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Quarantined answers and skipped batches (rows verified)."""
    quarantined = [
        rows.verify("analyze_quarantine", r) for r in conn.execute("SELECT * FROM analyze_quarantine")
    ]
    failures = [rows.verify("analyze_failures", r) for r in conn.execute("SELECT * FROM analyze_failures")]
    waiting = [rows.verify("analyze_pending", r) for r in conn.execute("SELECT * FROM analyze_pending")]
    return {
        "pending_notes": len(waiting),
        "quarantined": len(quarantined),
        "failed_batches": sum(1 for f in failures if not f["skipped"]),
        "skipped_batches": sum(1 for f in failures if f["skipped"]),
    }


def status(root: StateRoot, *, wait: float) -> dict[str, Any]:
    """The analyze section of `habitus status`: read-only, never creates or migrates the ledger.

    `unread` lists each generation still on disk with records after its watermark; `last_run`,
    `pending_notes` (instructions said once, waiting for a repeat), `quarantined` and the failure
    counts are null when there is no up-to-date ledger."""
    from habitus.state import ledger, observations

    store = ledger.store(root, wait=wait)
    version = store.inspect()
    conn = store.open_read() if version is not None and version == store.current_version else None
    try:
        marks = watermarks(conn)
        unread = []
        for info in observations.generations(root) if root.observations.is_dir() else []:
            seq = marks[info.generation].seq if info.generation in marks else 0
            if info.last_seq > seq:
                unread.append(
                    {
                        "generation": info.generation,
                        "read_seq": seq,
                        "last_seq": info.last_seq,
                        "unread": info.last_seq - seq,
                    }
                )
        found = counts(conn) if conn is not None else {}
        return {
            "unread": unread,
            "unread_total": sum(u["unread"] for u in unread),
            "last_run": last_run(conn) if conn is not None else None,
            "pending_notes": found.get("pending_notes", 0 if version is None else None),
            "quarantined": found.get("quarantined", 0 if version is None else None),
            "failed_batches": found.get("failed_batches", 0 if version is None else None),
            "skipped_batches": found.get("skipped_batches", 0 if version is None else None),
        }
    finally:
        if conn is not None:
            conn.close()


def pending(conn: sqlite3.Connection | None) -> list[Any]:
    """Pending notes, oldest first (rows verified)."""
    from habitus.learn.local import Pending

    if conn is None:
        return []
    out = []
    for row in conn.execute("SELECT * FROM analyze_pending ORDER BY id"):
        values = rows.verify("analyze_pending", row)
        out.append(
            Pending(
                values["id"],
                values["kind"],
                values["ref"],
                values["day"],
                values["text"],
                bool(values["habitual"]),
            )
        )
    return out


def keep_pending(conn: sqlite3.Connection, notes: list[Any], used: list[int]) -> None:
    """Inside the batch transaction: forget the notes a proposal now cites, add the new ones, and
    keep the newest PENDING_KEEP that are at most PENDING_DAYS old."""
    import datetime

    for note_id in used:
        conn.execute("DELETE FROM analyze_pending WHERE id = ?", (note_id,))
    now = utc_now()
    for note in notes:
        if conn.execute(
            "SELECT 1 FROM analyze_pending WHERE ref = ? AND text = ?", (note.ref, note.text)
        ).fetchone():
            continue
        rows.insert(
            conn,
            "analyze_pending",
            {
                "kind": note.kind,
                "ref": note.ref,
                "day": note.day,
                "text": note.text,
                "habitual": int(note.habitual),
                "created_at": now,
            },
        )
    # Age counts in the observations' own days (the newest note's), so that analysing an old
    # transcript keeps what it needs; a note more than PENDING_DAYS older than the newest goes.
    newest = conn.execute("SELECT MAX(day) FROM analyze_pending").fetchone()[0]
    if newest:
        oldest = (datetime.date.fromisoformat(newest) - datetime.timedelta(days=PENDING_DAYS)).isoformat()
        conn.execute("DELETE FROM analyze_pending WHERE day < ?", (oldest,))
    conn.execute(
        "DELETE FROM analyze_pending WHERE id NOT IN (SELECT id FROM analyze_pending ORDER BY id DESC LIMIT ?)",
        (PENDING_KEEP,),
    )
