"""`memory reflect`: crystallise stable facts from a stream's observations into reflections.

A reflection is a memory record of kind `reflection`, one line, with `metadata.supporting` naming the
observations it rests on. Reflections are durable (prune never touches them) and appear in `index`.
The offline `RuleReflector` turns
  - each critical or high user assertion (a correction, preference, constraint or decision) into a
    labelled fact ("Preference: ...", "Correction: ..."), and
  - a topic that recurs in two or more observations (user statements of medium or higher relevance, or
    any high ones) into "Recurring: ...";
a reflection that says what an existing one already says is skipped. The reflect watermark (the last
observation `seq` considered) always advances, so an empty or failed run does not repeat itself.
`habitus.memory.model.ModelReflector` asks a language model instead; `accept` enforces the invariants
on whatever a reflector proposes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from habitus.errors import HabitusError
from habitus.memory import core, records, text
from habitus.memory.observe import advance, check_stream, error_label, position
from habitus.memory.stores import MemoryStore
from habitus.state.clock import utc_now

REFLECTION_CHARS = 280
MAX_SUPPORT = 50
RANK = {"low": 0, "medium": 1, "high": 2, "critical": 3}
LABELS = (
    ("correction", "Correction"),
    ("preference", "Preference"),
    ("constraint", "Constraint"),
    ("decision", "Decision"),
)


@dataclass
class Observation:
    seq: int
    id: str
    content: str
    relevance: str
    at: str
    role: str
    position: int
    assertion: bool
    completion: bool
    signals: list[str]
    record: dict[str, Any]

    @property
    def protected(self) -> bool:
        """Never dropped: critical observations, user assertions and completions."""
        return self.relevance == "critical" or self.assertion or self.completion

    @property
    def statement(self) -> str:
        """The content without its speaker prefix ("User: ", "Assistant: ", ...)."""
        head, sep, rest = self.content.partition(": ")
        return rest if sep and len(head) <= 24 else self.content


@dataclass
class ReflectionProposal:
    content: str
    supporting: list[str]


class Reflector(Protocol):
    """Proposes reflections. A reflector with a `window(observations) -> observations` method (the
    model's) is shown only that part of the new observations; the watermark advances past it alone."""

    name: str

    def reflect(self, observations: list[Observation], existing: list[str]) -> list[ReflectionProposal]: ...


def load(conn: Any, stream: str, *, kind: str = "observation", after: int = 0) -> list[Observation]:
    """Active records of kind in the stream with seq > after, in transcript order."""
    rows = conn.execute(
        f"SELECT seq, {records.COLUMNS} FROM memories WHERE kind = ? AND +removed_at IS NULL AND seq > ? "
        "AND json_extract(metadata, '$.stream') = ? ORDER BY seq",
        (kind, after, stream),
    ).fetchall()
    out = []
    for row in rows:
        record = records.from_row(row)
        meta = record["metadata"]
        out.append(
            Observation(
                seq=int(row["seq"]),
                id=record["id"],
                content=record["content"],
                relevance=record["relevance"] or "medium",
                at=str(meta.get("at") or record["created_at"]),
                role=str(meta.get("role") or ""),
                position=int(meta["position"]) if isinstance(meta.get("position"), int) else 0,
                assertion=meta.get("assertion") is True,
                completion=meta.get("completion") is True,
                signals=[s for s in meta.get("signals", []) if isinstance(s, str)],
                record=record,
            )
        )
    out.sort(key=lambda o: (o.at, o.position, o.seq))
    return out


class RuleReflector:
    name = "rules"

    def __init__(self, measure: text.Measure = text.WORDS) -> None:
        self.measure = measure

    def reflect(self, observations: list[Observation], existing: list[str]) -> list[ReflectionProposal]:
        out: list[ReflectionProposal] = []
        for obs in observations:
            if obs.assertion and obs.relevance in ("critical", "high"):
                label = next((name for signal, name in LABELS if signal in obs.signals), None)
                if label is not None:
                    out.append(ReflectionProposal(f"{label}: {obs.statement}", [obs.id]))
        # Recurring topics: what the user keeps saying, or high-relevance findings that come back.
        # Tool results, and agent text that relays them (errors it quotes, output it repeats), are not
        # stable facts: they never make a recurring topic.
        pool = [
            o
            for o in observations
            if len(text.words(o.statement)) >= 4
            and o.role != "tool"
            and "relays_tool" not in o.signals
            and not (o.role == "assistant" and "blocker" in o.signals and "decision" not in o.signals)
            and (
                (o.role == "user" and RANK[o.relevance] >= RANK["medium"])
                or RANK[o.relevance] >= RANK["high"]
            )
        ]
        used: set[int] = set()
        related = self.measure.neighbours([o.statement for o in pool], "related")
        for index in range(len(pool)):
            if index in used:
                continue
            group = [index, *sorted(j for j in related[index] if j > index and j not in used)]
            if len(group) >= 2:
                used.update(group)
                members = [pool[j] for j in group]
                out.append(ReflectionProposal(f"Recurring: {members[-1].statement}", [o.id for o in members]))
        return out


def accept(
    proposals: list[ReflectionProposal],
    observations: list[Observation],
    existing: list[str],
    measure: text.Measure = text.WORDS,
) -> list[ReflectionProposal]:
    """Invariants for any reflector: one bounded line, supported only by the observations it was shown,
    and not a restatement (`measure.same`) of an existing (or an earlier proposed) reflection."""
    known = {o.id for o in observations}
    shaped = []
    for proposal in proposals:
        content = text.clip(text.one_line(proposal.content), REFLECTION_CHARS)
        support = [i for i in dict.fromkeys(proposal.supporting) if i in known][:MAX_SUPPORT]
        if content and support:
            shaped.append(ReflectionProposal(content, support))
    if not shaped:
        return []
    # One pass over existing and proposed texts together: a proposal is kept unless it restates an
    # existing reflection or one kept before it.
    same = measure.neighbours([*existing, *(p.content for p in shaped)], "same")
    said = set(range(len(existing)))
    kept = []
    for offset, proposal in enumerate(shaped):
        index = len(existing) + offset
        if same[index] & said:
            continue
        said.add(index)
        kept.append(proposal)
    return kept


def reflect(
    store: MemoryStore,
    request: dict[str, Any],
    *,
    reflector: Reflector | None = None,
    measure: text.Measure = text.WORDS,
    now: str | None = None,
) -> dict[str, Any]:
    now = now or utc_now()
    stream = check_stream(request.get("stream"))
    reflector = reflector or RuleReflector(measure)
    result: dict[str, Any] = {
        "store": store.name, "stream": stream, "reflector": reflector.name, "similarity": measure.name,
    }  # fmt: skip
    if not store.exists():
        return {
            **result,
            "reflected": 0,
            "items": [],
            "considered": 0,
            "watermark": {"before": 0, "after": 0},
        }
    conn = store.writer()
    before = position(conn, "reflect", stream)
    observations = load(conn, stream, after=before)
    window = getattr(reflector, "window", None)
    if window is not None:  # a model is shown what fits its context: the oldest new ones, by seq
        chosen = {o.seq for o in window(sorted(observations, key=lambda o: o.seq))}
        observations = [o for o in observations if o.seq in chosen]
    existing = [r.content for r in load(conn, stream, kind="reflection")]
    error: HabitusError | None = None
    try:
        proposals = accept(reflector.reflect(observations, existing), observations, existing, measure)
    except HabitusError as exc:  # a failed reflector still advances the watermark
        proposals, error = [], exc
    after = max([before, *(o.seq for o in observations)])
    items = []
    dropped = instructions = 0
    metadata = records.check_metadata({"source": "reflect", "reflector": reflector.name, "stream": stream})
    with store.db.write(conn):
        # A concurrent run may have added reflections meanwhile: check against what is there now.
        proposals = accept(
            proposals, observations, [r.content for r in load(conn, stream, kind="reflection")], measure
        )
        for proposal in proposals:
            try:
                record = records.create(
                    {
                        "content": proposal.content,
                        "kind": "reflection",
                        "importance": 0.7,
                        "confidence": 0.8,
                        "tags": ["reflection"],
                    },
                    scope=store.name,
                    now=now,
                )
                # Checked once for the run (it is the same for every reflection); the supporting ids are
                # the UUIDs of observations `accept` checked: nothing to redact.
                record["metadata"] = {**metadata, "supporting": proposal.supporting}
            except HabitusError as exc:
                if exc.code == "refused":  # an instruction-injection marker (records.check_instructions)
                    instructions += 1
                    continue
                if exc.code != "sensitive_content":
                    raise
                dropped += 1
                continue
            core.insert(conn, record)
            items.append(record)
        label = error_label(error) if error else None
        advance(conn, "reflect", stream, after, len(items), label, now, "seq")
    if error is not None:
        raise error
    return {
        **result,
        "reflected": len(items),
        "dropped_sensitive": dropped,
        "dropped_instruction": instructions,
        "items": items,
        "considered": len(observations),
        "watermark": {"before": before, "after": after},
        # More texts than the embedding measure embeds in one run: judged by word overlap alone.
        **({"similarity_limited": True} if getattr(measure, "limited", False) else {}),
    }
