"""`memory prune --budget TOKENS`: drop a stream's observations toward a token budget, in passes.

The pool is the stream's active observations; each counts the tokens of its rendered line
`<at> [<relevance>] <content>` (ceil(chars / 4)). Up to three passes of increasing strength run, each
dropping candidates in order only while the pool is over budget:

  1. clear-cut: exact duplicates (the most relevant, then newest, copy stays), observations superseded
     by a newer, similar one from the same speaker at the same or higher relevance, routine low
     acknowledgements;
  2. topic compression: low observations covered by a reflection (listed in its `supporting`, or saying
     much the same), and runs of routine tool output (the last of each run stays);
  3. age: in the older half of the pool, low observations oldest first, then medium ones that name no
     identifier (path, hash, error code, version, URL).

Never dropped, whatever a pass proposes: critical observations, user assertions, completions.
Reflections are never pruned. Dropping is a soft removal (`metadata.pruned` = {"pass_number", "reason"}),
so `retain --id` restores an observation. `dry_run` reports without changing anything.
`habitus.memory.model.ModelDropper` asks a language model instead of the rules; either way the protected
set and the budget are enforced here, not by the dropper.
"""

from __future__ import annotations

from typing import Any, Protocol

from habitus.errors import HabitusError
from habitus.memory import core, text
from habitus.memory.observe import check_stream
from habitus.memory.reflect import RANK, Observation, load
from habitus.memory.stores import MemoryStore
from habitus.state.clock import utc_now

PASSES = 3
SUPERSEDED = 0.6  # word overlap (see habitus.memory.semantic for why not meaning)


def line_tokens(obs: Observation) -> int:
    return text.tokens(f"{obs.at} [{obs.relevance}] {obs.content}")


class Dropper(Protocol):
    name: str

    def candidates(
        self, number: int, pool: list[Observation], reflections: list[Observation], *, over: int
    ) -> list[tuple[Observation, str]]:
        """(observation, reason) in drop order for pass `number`; `over` = tokens above the budget."""
        ...


class RuleDropper:
    """Offline dropper: the three passes of the module doc, as (observation, reason) in drop order."""

    name = "rules"

    def __init__(self, measure: text.Measure = text.WORDS) -> None:
        self.measure = measure

    def candidates(
        self, number: int, pool: list[Observation], reflections: list[Observation], *, over: int = 0
    ) -> list[tuple[Observation, str]]:
        if number == 1:
            return self._clear_cut(pool)
        if number == 2:
            return self._covered(pool, reflections)
        return self._aged(pool)

    def _clear_cut(self, pool: list[Observation]) -> list[tuple[Observation, str]]:
        out: list[tuple[Observation, str]] = []
        best: dict[str, Observation] = {}
        for obs in pool:
            key = text.normal(obs.content)
            kept = best.get(key)
            if kept is None or (RANK[obs.relevance], obs.at, obs.seq) > (
                RANK[kept.relevance],
                kept.at,
                kept.seq,
            ):
                best[key] = obs
        out += [(o, "duplicate") for o in pool if best[text.normal(o.content)] is not o]
        for index, obs in enumerate(pool):
            newer = pool[index + 1 :]
            if any(
                n.role == obs.role
                and RANK[n.relevance] >= RANK[obs.relevance]
                and text.similarity(n.statement, obs.statement) >= SUPERSEDED
                for n in newer
            ):
                out.append((obs, "superseded"))
        out += [(o, "acknowledgement") for o in pool if o.relevance == "low" and "ack" in o.signals]
        return out

    def _covered(
        self, pool: list[Observation], reflections: list[Observation]
    ) -> list[tuple[Observation, str]]:
        supported = {i for r in reflections for i in r.record["metadata"].get("supporting", [])}
        low = [o for o in pool if o.relevance == "low"]
        self.measure.prime([*(o.statement for o in low), *(r.statement for r in reflections)])
        out = [
            (o, "covered by a reflection")
            for o in low
            if o.id in supported or any(self.measure.covers(r.statement, o.statement) for r in reflections)
        ]
        run: list[Observation] = []
        for obs in [*pool, None]:
            if obs is not None and obs.role == "tool" and obs.relevance == "low":
                run.append(obs)
                continue
            out += [(o, "tool run") for o in run[:-1]]
            run = []
        return out

    def _aged(self, pool: list[Observation]) -> list[tuple[Observation, str]]:
        older = pool[: len(pool) // 2]
        low = [(o, "old, low") for o in older if o.relevance == "low"]
        medium = [
            (o, "old, medium")
            for o in older
            if o.relevance == "medium" and not text.has_identifier(o.content)
        ]
        return low + medium


def prune(
    store: MemoryStore,
    request: dict[str, Any],
    *,
    budget: int,
    dry_run: bool = False,
    dropper: Dropper | None = None,
    measure: text.Measure = text.WORDS,
    now: str | None = None,
) -> dict[str, Any]:
    """Plan the passes on a snapshot of the pool (a model dropper may take its time: no lock is held),
    then apply the drops in one transaction, skipping any observation that changed meanwhile. A dropper
    that fails ends the passes: what earlier passes planned is applied, then the error is raised."""
    now = now or utc_now()
    stream = check_stream(request.get("stream"))
    dropper = dropper or RuleDropper(measure)
    result: dict[str, Any] = {
        "store": store.name, "stream": stream, "budget": budget, "dry_run": dry_run, "dropper": dropper.name,
        "similarity": measure.name if isinstance(dropper, RuleDropper) else None,
    }  # fmt: skip
    conn = store.reader() if store.exists() else None
    if conn is None:
        return {**result, "before_tokens": 0, "after_tokens": 0, "within_budget": True, "passes": [],
                "dropped": []}  # fmt: skip
    pool = load(conn, stream)
    reflections = load(conn, stream, kind="reflection")
    total = before = sum(line_tokens(o) for o in pool)
    passes: list[dict[str, Any]] = []
    planned: list[tuple[Observation, int, str]] = []
    error: HabitusError | None = None
    for number in range(1, PASSES + 1):
        if total <= budget:
            break
        try:
            proposed = dropper.candidates(number, pool, reflections, over=total - budget)
        except HabitusError as exc:
            error = exc
            break
        gone: set[int] = set()
        for obs, reason in proposed:
            if total <= budget:
                break
            if obs.protected or obs.seq in gone or all(o.seq != obs.seq for o in pool):
                continue  # the invariant holds whatever a dropper proposes
            gone.add(obs.seq)
            total -= line_tokens(obs)
            planned.append((obs, number, text.clip(text.one_line(reason), 200) or "dropped"))
        pool = [o for o in pool if o.seq not in gone]
        passes.append({"pass": number, "dropped": len(gone), "tokens_after": total})
    if planned and not dry_run:
        total += _apply(store, planned, now)
        planned = [p for p in planned if p[0].record.get("removed_at") is not None]
    result.update(
        before_tokens=before,
        after_tokens=total,
        within_budget=total <= budget,
        passes=passes,
        dropped=[
            {"id": obs.id, "pass": number, "reason": reason, "relevance": obs.relevance}
            for obs, number, reason in planned
        ],
    )
    if error is not None:
        raise error
    return result


def _apply(store: MemoryStore, planned: list[tuple[Observation, int, str]], now: str) -> int:
    """Soft-remove the planned observations that are unchanged since the snapshot; returns the tokens
    of those skipped (they stay in the pool). Applied ones get their new record in `obs.record`."""
    conn = store.writer()
    kept = 0
    with store.db.write(conn):
        for obs, number, reason in planned:
            row = conn.execute(
                "SELECT updated_at, removed_at FROM memories WHERE seq = ?", (obs.seq,)
            ).fetchone()
            if row is None or row[1] is not None or row[0] != obs.record["updated_at"]:
                kept += line_tokens(obs)
                continue
            note = {"pruned": {"pass_number": number, "reason": reason}}
            obs.record = core.soft_remove(conn, obs.seq, obs.record, now=now, note=note)
    return kept
