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
Reflections are never pruned. Dropping is a soft removal (`metadata.pruned` says which pass and why),
so `retain --id` restores an observation. `dry_run` reports without changing anything.
A model dropper would implement `Dropper`; the protected set is enforced here, not by the dropper.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Protocol

from habitus.memory import core, text
from habitus.memory.observe import check_stream
from habitus.memory.reflect import RANK, Observation, load
from habitus.memory.stores import MemoryStore
from habitus.state.db import utc_now

PASSES = 3
SUPERSEDED = 0.6
COVERED = 0.5


def line_tokens(obs: Observation) -> int:
    return text.tokens(f"{obs.at} [{obs.relevance}] {obs.content}")


class Dropper(Protocol):
    name: str

    def candidates(
        self, number: int, pool: list[Observation], reflections: list[Observation]
    ) -> list[tuple[Observation, str]]: ...


class RuleDropper:
    """Offline dropper: the three passes of the module doc, as (observation, reason) in drop order."""

    name = "rules"

    def candidates(
        self, number: int, pool: list[Observation], reflections: list[Observation]
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
        out = [
            (o, "covered by a reflection")
            for o in pool
            if o.relevance == "low"
            and (
                o.id in supported
                or any(text.similarity(o.statement, r.statement) >= COVERED for r in reflections)
            )
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
    now: str | None = None,
) -> dict[str, Any]:
    now = now or utc_now()
    stream = check_stream(request.get("stream"))
    dropper = dropper or RuleDropper()
    result: dict[str, Any] = {"store": store.name, "stream": stream, "budget": budget, "dry_run": dry_run}
    if not store.exists():
        return {
            **result,
            "before_tokens": 0,
            "after_tokens": 0,
            "within_budget": True,
            "passes": [],
            "dropped": [],
        }
    conn = store.reader() if dry_run else store.writer()
    assert conn is not None
    with nullcontext() if dry_run else store.db.write(conn):
        pool = load(conn, stream)
        reflections = load(conn, stream, kind="reflection")
        total = before = sum(line_tokens(o) for o in pool)
        passes: list[dict[str, Any]] = []
        dropped: list[dict[str, Any]] = []
        for number in range(1, PASSES + 1):
            if total <= budget:
                break
            gone: set[int] = set()
            for obs, reason in dropper.candidates(number, pool, reflections):
                if total <= budget:
                    break
                if obs.protected or obs.seq in gone:
                    continue  # the invariant holds whatever a dropper proposes
                gone.add(obs.seq)
                total -= line_tokens(obs)
                dropped.append({"id": obs.id, "pass": number, "reason": reason, "relevance": obs.relevance})
                if not dry_run:
                    note = {"pruned": {"pass": number, "reason": reason}}
                    core.soft_remove(conn, obs.seq, obs.record, now=now, note=note)
            pool = [o for o in pool if o.seq not in gone]
            passes.append({"pass": number, "dropped": len(gone), "tokens_after": total})
    return {
        **result,
        "before_tokens": before,
        "after_tokens": total,
        "within_budget": total <= budget,
        "passes": passes,
        "dropped": dropped,
    }
