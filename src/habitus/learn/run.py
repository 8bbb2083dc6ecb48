"""One `habitus analyze` run: snapshot the unread queue, analyse it in bounded batches, commit each.

    quick look (no lock, read-only): nothing unread and nothing to rotate -> answer at once
    lock "analyze" (exit 75 when held) -> open the ledger -> snapshot: per generation, the records
        after its watermark up to its last committed seq (records captured later wait for the next run)
    per batch (<= analyze.batch_max_records records, <= analyze.batch_max_bytes bytes, one generation):
        read and verify the records (hash chain; the first must follow the watermark's record)
        analyse (local analyzer or the configured model) -> proposals, memory suggestions
        check and embed the proposals outside the transaction
        ONE transaction: propose_candidate for each proposal (candidates, evidence, audit), the
            pending notes, mark_dormant for each strong contradiction of an active habit, + watermark
    a generation consumed to its last record is rotated into archive/ (observations.rotate)

Failures. A batch whose analysis fails (the model answered unusably, timed out or broke; an
unexpected error in the local analyzer) is recorded in `analyze_failures` together with any refused
answer (`analyze_quarantine`), in their own transaction: earlier batches stay committed, the run stops
and reports the error. The next run retries the batch; its third failure (queue.MAX_ATTEMPTS) marks it
skipped and moves the watermark past it, so no batch is re-read forever. Failures that are not the
batch's fault (no model configured, a missing API key, an unreachable endpoint, a missing embedding
model, locked or damaged state) stop the run without counting an attempt.

`--dry-run` runs the same code against an in-memory copy of the ledger and takes no lock: it reports
what a run would do and writes nothing (the embedding model's verification cache excepted, see
habitus.models.embedders.verify).

Fault injection (tests only, see habitus.state.observations): point `analyze_commit_<n>` stops inside
the n-th batch's transaction, just before it commits.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from habitus import codec
from habitus.errors import HabitusError
from habitus.learn import queue
from habitus.state import locks, observations
from habitus.state.clock import utc_now
from habitus.state.config import Config, load
from habitus.state.faults import fault
from habitus.state.root import StateRoot

if TYPE_CHECKING:
    from habitus.embed.engine import Embedder
    from habitus.habits.store import Ledger
    from habitus.learn.local import Analysis, Known, Vectors
    from habitus.learn.meaning import Gate

# Model failures that are not the batch's fault: they stop the run without counting an attempt.
NOT_THE_BATCH = frozenset({"not_configured", "missing_key", "bad_url", "connection"})

Progress = Callable[[int, int, int], None]  # (records done, records in the snapshot, batches done)


@dataclass(frozen=True)
class UnreadRange:
    generation: int
    after: int  # watermark seq
    through: int  # last committed seq at the snapshot
    current: bool  # the generation capture appends to

    @property
    def records(self) -> int:
        return self.through - self.after


@dataclass
class AnalyzeOutcome:
    batches: list[dict[str, Any]] = field(default_factory=list)
    proposals: dict[str, dict[str, Any]] = field(default_factory=dict)
    suggestions: list[dict[str, Any]] = field(default_factory=list)
    rotated: list[int] = field(default_factory=list)
    dormant: list[dict[str, Any]] = field(default_factory=list)
    records: int = 0


def unread(root: StateRoot, marks: dict[int, queue.Mark]) -> list[UnreadRange]:
    """Generations with records after their watermark (oldest first). Reads manifests only."""
    pending = []
    for info in observations.generations(root):
        mark = marks.get(info.generation)
        seq = mark.seq if mark else 0
        if seq > info.last_seq:
            raise HabitusError(
                "state_corrupt",
                f"observation generation {info.generation} has {info.last_seq} records but analyze "
                f"already read {seq}",
                hint="the observation log was replaced or truncated; restore it from a backup",
            )
        if info.last_seq > seq:
            pending.append(UnreadRange(info.generation, seq, info.last_seq, not info.archived))
    return pending


def _consumed_current(root: StateRoot, marks: dict[int, queue.Mark]) -> int | None:
    """The current generation when it is read to its end but not yet rotated (a run cut short)."""
    current = next((g for g in observations.generations(root) if not g.archived), None)
    if current is None or current.last_seq == 0:
        return None
    mark = marks.get(current.generation)
    return current.generation if mark is not None and mark.seq >= current.last_seq else None


def _read_marks(root: StateRoot, wait: float) -> dict[int, queue.Mark]:
    """Watermarks from the ledger, read-only (none when there is no ledger or it predates analyze)."""
    from habitus.state import ledger

    conn = ledger.store(root, wait=wait).open_current()
    if conn is None:
        return {}
    try:
        return queue.watermarks(conn)
    finally:
        conn.close()


def empty_result(analyzer: str, dry_run: bool) -> dict[str, Any]:
    return {
        "analyzer": analyzer,
        "dry_run": dry_run,
        "queue": {"generations": [], "records": 0},
        "batches": [],
        "records": 0,
        "proposals": [],
        "memory_suggestions": [],
        "dormant": [],
        "rotated": [],
    }


ANALYZE_THREADS = min(2, os.cpu_count() or 1)


def run(
    root: StateRoot, *, wait: float, dry_run: bool = False, progress: Progress | None = None
) -> dict[str, Any]:
    """Analyse every unread observation (see the module docstring); returns the result object."""
    config = load(root)
    model = str(config.get("analyze.model"))
    analyzer = f"model:{model}" if model else "local"
    if dry_run:
        ledger = _memory_ledger(root, wait)
        try:
            pending = unread(root, queue.watermarks(ledger.conn))
            if not pending:
                return empty_result(analyzer, True)
            return _analyse(root, ledger, pending, config, model, progress, dry_run=True, wait=wait)
        finally:
            ledger.close()
    marks = _read_marks(root, wait)
    if not unread(root, marks) and _consumed_current(root, marks) is None:
        return empty_result(analyzer, False)  # the daily timer's usual case: no model, no numpy
    from habitus.habits.store import Ledger

    with locks.hold(root, "analyze", wait=wait):
        ledger = Ledger.open(root, wait=wait)
        try:
            marks = queue.watermarks(ledger.conn)
            pending = unread(root, marks)
            result = _analyse(root, ledger, pending, config, model, progress, dry_run=False, wait=wait)
            stuck = _consumed_current(root, queue.watermarks(ledger.conn))
            if stuck is not None and stuck not in result["rotated"]:
                result["rotated"] += _rotate(root, stuck, config, wait)
            return result
        finally:
            ledger.close()


def _analyse(
    root: StateRoot,
    ledger: Ledger,
    pending: list[UnreadRange],
    config: Config,
    model: str,
    progress: Progress | None,
    *,
    dry_run: bool,
    wait: float,
) -> dict[str, Any]:
    analyzer = f"model:{model}" if model else "local"
    total = sum(p.records for p in pending)
    outcome = AnalyzeOutcome()
    lazy = _Embedder(root)
    started = utc_now()
    failure: HabitusError | None = None
    try:
        for item in pending:
            _generation(root, ledger, item, config, model, lazy, outcome, progress, total, dry_run=dry_run)
            if item.current and not dry_run:
                outcome.rotated += _rotate(root, item.generation, config, wait, through=item.through)
    except HabitusError as error:
        failure = error
        raise
    finally:
        if not dry_run and (outcome.batches or failure is not None):
            _record_run(ledger, analyzer, started, outcome, failure)
    return {
        "analyzer": analyzer,
        "dry_run": dry_run,
        "queue": {
            "generations": [
                {"generation": p.generation, "after_seq": p.after, "through_seq": p.through} for p in pending
            ],
            "records": total,
        },
        "batches": outcome.batches,
        "records": outcome.records,
        "proposals": list(outcome.proposals.values()),
        "memory_suggestions": outcome.suggestions,
        "dormant": outcome.dormant,
        "rotated": outcome.rotated,
    }


def _generation(
    root: StateRoot,
    ledger: Ledger,
    item: UnreadRange,
    config: Config,
    model: str,
    lazy: _Embedder,
    outcome: AnalyzeOutcome,
    progress: Progress | None,
    total: int,
    *,
    dry_run: bool,
) -> None:
    from habitus.habits.law import load_law

    max_records = int(config.get("analyze.batch_max_records"))
    max_bytes = int(config.get("analyze.batch_max_bytes"))
    mark = queue.watermarks_of(ledger.conn, item.generation)
    after = mark.seq if mark else 0
    while after < item.through:
        batch = observations.read(
            root,
            item.generation,
            after_seq=after,
            max_records=min(max_records, item.through - after),
            max_bytes=max_bytes,
        )
        if not batch.records:
            raise HabitusError("state_corrupt", f"observation generation {item.generation} ended early")
        first, last = batch.records[0], batch.records[-1]
        if mark is not None and mark.record and first.get("prev") != mark.record:
            raise HabitusError(
                "checksum_mismatch",
                f"observation {item.generation}:{first['seq']} does not follow the record analyze read last",
                hint="the observation log was rewritten; restore it from a backup",
            )
        span = (item.generation, first["seq"], last["seq"])
        try:
            analysis = _analysis(root, ledger, batch.records, config, model, lazy, span)
            checked = _checked(analysis, lazy, model)
        except HabitusError as error:
            _failed(ledger, span, error, last, mark, model, dry_run=dry_run)
            raise
        except Exception as error:  # a bug on odd data must not block the queue forever
            wrapped = HabitusError("failed", f"internal error ({type(error).__name__}) analysing a batch")
            _failed(ledger, span, wrapped, last, mark, model, dry_run=dry_run)
            raise wrapped from error
        law = load_law(root)
        number = len(outcome.batches) + 1
        new_mark = queue.Mark(item.generation, last["seq"], f"{last['seq']}:{last['checksum']}")
        results = []
        from habitus.habits.lifecycle import propose_candidate

        dormant = []
        with ledger.tx():
            for found, prepared in checked:
                result = propose_candidate(
                    ledger, found.proposal, law=law, prepared=prepared, embedder=lazy.loaded
                )
                results.append((found, result))
            queue.keep_pending(ledger.conn, analysis.keep, analysis.used)
            dormant = _contradicted(ledger, analysis)
            queue.advance(ledger.conn, item.generation, new_mark.seq, new_mark.record, expected=mark)
            queue.clear_failure(ledger.conn, item.generation, first["seq"])
            fault(f"analyze_commit_{number}")
        mark, after = new_mark, new_mark.seq
        outcome.records += len(batch.records)
        outcome.batches.append(
            {
                "generation": item.generation,
                "seq_start": first["seq"],
                "seq_end": last["seq"],
                "records": len(batch.records),
                "bytes": batch.bytes,
                "proposals": len(results),
                "outcome": "analysed" if dry_run else "committed",
            }
        )
        for found, result in results:
            _merge(outcome, found, result)
        _suggest(outcome, analysis.suggestions)
        outcome.dormant += dormant
        if progress is not None:
            progress(outcome.records, total, len(outcome.batches))


MAX_SUGGESTION_REFS = 20


def _contradicted(ledger: Ledger, analysis: Analysis) -> list[dict[str, Any]]:
    """Inside the batch transaction: each habit still active that the batch strongly contradicts goes
    dormant, with the contradicting observation in its audit entry. Nothing is ever activated."""
    from habitus.habits.lifecycle import mark_dormant
    from habitus.habits.store import get_habit

    out: list[dict[str, Any]] = []
    for item in getattr(analysis, "contradictions", []):
        if get_habit(ledger.conn, item.habit)["status"] != "active" or any(
            d["id"] == item.habit for d in out
        ):
            continue
        mark_dormant(
            ledger,
            item.habit,
            note={
                "reason": "contradicted",
                "ref": item.ref,
                "day": item.day,
                "similarity_bp": item.similarity_bp,
            },
            in_transaction=True,
        )
        out.append(
            {"id": item.habit, "ref": item.ref, "note": item.note, "similarity_bp": item.similarity_bp}
        )
    return out


def _suggest(outcome: AnalyzeOutcome, suggestions: list[dict[str, Any]]) -> None:
    """Add memory suggestions; one said again in a later batch only gains its refs (bounded)."""
    from habitus.learn.text import words

    for suggestion in suggestions:
        key = " ".join(words(suggestion["content"]))
        same = next((s for s in outcome.suggestions if " ".join(words(s["content"])) == key), None)
        if same is None:
            outcome.suggestions.append(dict(suggestion))
        else:
            same["refs"] = (same["refs"] + [r for r in suggestion["refs"] if r not in same["refs"]])[
                :MAX_SUGGESTION_REFS
            ]


def _merge(outcome: AnalyzeOutcome, found: Any, result: dict[str, Any]) -> None:
    proposal = found.proposal
    entry = outcome.proposals.get(result["id"])
    refs = [e.ref for e in proposal.evidence]
    if entry is None:
        outcome.proposals[result["id"]] = {
            "id": result["id"],
            "outcome": result["outcome"],
            "status": result["status"],
            "stage": result.get("stage"),
            "condition": proposal.condition,
            "behavior": proposal.behavior,
            "polarity": proposal.polarity,
            "confidence_bp": proposal.confidence_bp,
            "friction": found.friction,
            "evidence": refs,
            "evidence_added": result.get("evidence_added", 0),
            "checksum": result.get("checksum"),
            **({"relations": result["relations"]} if result.get("relations") else {}),
        }
        return
    entry.update(status=result["status"], stage=result.get("stage"))
    entry["evidence"] += [r for r in refs if r not in entry["evidence"]]
    entry["evidence_added"] += result.get("evidence_added", 0)


def _analysis(
    root: StateRoot,
    ledger: Ledger,
    records: list[dict[str, Any]],
    config: Config,
    model: str,
    lazy: _Embedder,
    span: tuple[int, int, int],
) -> Analysis:
    context = habit_context(ledger.conn, lazy.seen)
    if model:
        from habitus.learn.model import analyze

        return analyze(config, model, records, context=context, span=span)
    from habitus.learn import local

    return local.analyze(
        records, load=lazy.vectors, context=context, pending=queue.pending(ledger.conn), gate=lazy.gate
    )


def _checked(analysis: Analysis, lazy: _Embedder, model: str) -> list[tuple[Any, Any]]:
    """Validate and embed each proposal outside the transaction. The model's proposals were checked
    when its answer was accepted; one of the local analyzer's own that does not pass is dropped."""
    from habitus.habits.lifecycle import check_proposal, prepare_proposal

    out = []
    for found in analysis.found:
        try:
            found.proposal = check_proposal(found.proposal)
        except HabitusError:
            if model:
                raise
            continue
        embedder = lazy.get() if found.reuses is None else lazy.loaded
        prepared = None
        if embedder is not None:  # a reused wording comes back in many batches: embedded once per run
            key = (found.proposal.condition, found.proposal.behavior)
            prepared = lazy.prepared.get(key)
            if prepared is None:
                prepared = lazy.prepared[key] = prepare_proposal(embedder, found.proposal)
        out.append((found, prepared))
    return out


def _failed(
    ledger: Ledger,
    span: tuple[int, int, int],
    error: HabitusError,
    last: dict[str, Any],
    mark: queue.Mark | None,
    model: str,
    *,
    dry_run: bool,
) -> None:
    """Record a failed attempt (and a refused answer) unless the failure is not the batch's fault."""
    from habitus.models import ModelError

    reason = error.reason if isinstance(error, ModelError) else error.code
    if dry_run or (error.exit in (2, 3, 75) and not isinstance(error, ModelError)):
        return
    if isinstance(error, ModelError) and reason in NOT_THE_BATCH:
        return
    generation, seq_start, seq_end = span
    with ledger.tx():
        if isinstance(error, ModelError) and error.answer is not None:
            queue.quarantine(
                ledger.conn,
                generation=generation,
                seq_start=seq_start,
                seq_end=seq_end,
                model=model,
                reason=reason,
                detail={
                    k: v for k, v in error.details.items() if k in ("path", "keyword", "pattern", "reason")
                },
                answer=error.answer,
            )
        row = queue.record_failure(ledger.conn, generation, seq_start, seq_end, reason)
        if row["skipped"]:
            queue.advance(ledger.conn, generation, seq_end, f"{seq_end}:{last['checksum']}", expected=mark)
    error.details.update(
        generation=generation,
        seq_start=seq_start,
        seq_end=seq_end,
        attempts=row["attempts"],
        skipped=bool(row["skipped"]),
    )


def _rotate(
    root: StateRoot, generation: int, config: Config, wait: float, *, through: int | None = None
) -> list[int]:
    marks = _read_marks(root, wait)
    mark = marks.get(generation)
    seq = mark.seq if mark else 0
    if through is not None and seq < through:
        return []
    done = observations.rotate(
        root, generation, seq, wait=wait, retention_days=int(config.get("capture.retention_days"))
    )
    return [generation] if done["rotated"] else []


def _record_run(
    ledger: Ledger, analyzer: str, started: str, outcome: AnalyzeOutcome, failure: HabitusError | None
) -> None:
    data: dict[str, Any] = {"rotated": outcome.rotated}
    if failure is not None:
        data["error"] = failure.code
        reason = failure.details.get("reason")
        if isinstance(reason, str):
            data["reason"] = reason
    try:
        with ledger.tx():
            queue.record_run(
                ledger.conn,
                {
                    "analyzer": analyzer,
                    "started_at": started,
                    "finished_at": utc_now(),
                    "outcome": "failed" if failure else "ok",
                    "batches": len(outcome.batches),
                    "records": outcome.records,
                    "proposals": len(outcome.proposals),
                    "data": codec.canonical(data).decode(),
                },
            )
    except HabitusError:
        if failure is None:
            raise


# -- existing habits as context ---------------------------------------------------------------------


class Seen:
    """The ledger rows this run has already read and verified. Without it every batch re-read and
    re-verified every habit and every evidence row, which grew with the square of the observations
    analysed. Evidence rows are only ever appended, so they are read from the last id seen; a habit
    row is verified again whenever any of its columns changed."""

    def __init__(self) -> None:
        self.habits: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.evidence_id = 0
        self.notes: dict[str, list[tuple[str, int, str]]] = {}  # habit id -> (day, id, note), sorted


def habit_context(conn: sqlite3.Connection, seen: Seen | None = None) -> list[Known]:
    """Habits a new proposal may reuse the wording of: every habit that is not archived, plus the
    rejected ones (so that friction resembling a rejected habit is not proposed again)."""
    import bisect

    from habitus.habits import rows
    from habitus.habits.store import STATUSES
    from habitus.learn.local import MAX_CONTEXT_HABITS, MAX_CONTEXT_NOTES, Known

    seen = seen or Seen()
    order = " ".join(f"WHEN '{s}' THEN {i}" for i, s in enumerate(STATUSES))
    verified = {}
    for row in conn.execute(f"SELECT * FROM habits ORDER BY CASE status {order} END, confidence_bp DESC, id"):
        key = tuple(row)
        habit = seen.habits.get(key)
        if habit is None:
            habit = rows.verify("habits", row)
        verified[key] = habit
    seen.habits = verified  # rows that changed or left are forgotten
    for row in conn.execute("SELECT * FROM habit_evidence WHERE id > ? ORDER BY id", (seen.evidence_id,)):
        item = rows.verify("habit_evidence", row)
        seen.evidence_id = max(seen.evidence_id, int(item["id"]))
        if item["note"]:
            bisect.insort(
                seen.notes.setdefault(item["habit_id"], []), (item["day"], int(item["id"]), item["note"])
            )
    out = []
    for habit in verified.values():
        rejected = habit["status"] == "archived" and habit["reason"] == "rejected"
        if habit["status"] == "archived" and not rejected:
            continue
        notes: tuple[str, ...] = ()
        if habit["status"] == "candidate":  # its cited corrections, newest first
            cited = [note for _, _, note in reversed(seen.notes.get(habit["id"], []))]
            notes = tuple(dict.fromkeys(cited))[:MAX_CONTEXT_NOTES]
        out.append(
            Known(
                habit["id"],
                habit["condition"],
                habit["behavior"],
                habit["polarity"],
                habit["status"],
                rejected,
                notes,
            )
        )
        if len(out) >= MAX_CONTEXT_HABITS:
            break
    return out


class _Embedder:
    """The embedding model, loaded on first need, with the run's cache of gist vectors."""

    def __init__(self, root: StateRoot) -> None:
        self.root = root
        self.loaded: Embedder | None = None
        self._vectors: Vectors | None = None
        self.seen = Seen()
        self.prepared: dict[tuple[str, str], Any] = {}  # (condition, behavior) -> vectors.Prepared
        self._gate: tuple[Gate | None] | None = None  # None: not loaded yet

    def get(self) -> Embedder:
        if self.loaded is None:
            from habitus.models.embedders import load_embedder

            # A batch job, not a hook: it may use both cores a small machine has. Its thresholds were
            # measured with MiniLM.
            self.loaded = load_embedder(self.root, threads=ANALYZE_THREADS, calibrated="minilm")
        return self.loaded

    def gate(self) -> Gate | None:
        """The meaning gate on the configured embedding model (E5 by default), loaded on first need;
        None when that model has no trained gate or does not load (the word rules then decide alone)."""
        if self._gate is None:
            from habitus.learn.meaning import Gate
            from habitus.models.embedders import load_embedder

            try:
                self._gate = (Gate.load(load_embedder(self.root, threads=ANALYZE_THREADS)),)
            except HabitusError:
                self._gate = (None,)
        return self._gate[0]

    def vectors(self) -> Vectors:
        if self._vectors is None:
            from habitus.learn.local import Vectors

            self._vectors = Vectors(self.get())
        return self._vectors


# -- dry run: an in-memory copy of the ledger ---------------------------------------------------------


def _memory_ledger(root: StateRoot, wait: float) -> Ledger:
    """A private in-memory copy of the ledger (migrated in memory if needed): writes go nowhere."""
    from habitus.habits.store import Ledger
    from habitus.state import ledger

    store = ledger.store(root, wait=wait)
    from habitus.state import db

    memory = db.connect(":memory:", any_thread=True)
    memory.row_factory = sqlite3.Row
    memory.execute("PRAGMA foreign_keys=ON")
    # Not store.inspect(): a read-only open of a WAL database leaves -wal/-shm files behind. The copy
    # is checked instead (newer, unknown or corrupt ledgers fail closed in upgrade()).
    if store.exists():
        try:
            _copy(store.path, memory)
        except sqlite3.Error as exc:
            from habitus.state.db import translate

            raise translate(exc, store.path) from None
    store.upgrade(memory)
    return Ledger(root, store, memory)


def _copy(path: os.PathLike[str], memory: sqlite3.Connection) -> None:
    """Copy the ledger without creating anything next to it. With no -wal file the database file is
    complete and is read as immutable (no -shm/-wal appear); a copy that raced a writer is retried
    through an ordinary read-only connection."""
    from habitus.state import db

    for attempt in range(2):
        wal = os.path.exists(os.fspath(path) + "-wal")
        before = os.stat(path)
        immutable = not wal and attempt == 0
        source = db.connect(path, mode="ro", immutable=immutable)
        try:
            source.backup(memory)
        except sqlite3.Error:
            if not immutable:
                raise
            continue
        finally:
            source.close()
        after = os.stat(path)
        if not immutable or (
            (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size)
            and not os.path.exists(os.fspath(path) + "-wal")
        ):
            return
        time.sleep(0.01)
    raise HabitusError("state_locked", f"{path} kept changing while it was copied", hint="retry")
