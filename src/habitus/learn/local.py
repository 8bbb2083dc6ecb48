"""The local analyzer: repeated friction in a batch of observations -> candidate habits, offline.

For one batch (records of one generation, in order):

1. read every user message (`habitus.learn.text.read_message`): friction markers, directives, facts;
2. link a rejected tool use to the next observation of the same session within REJECTION_WINDOW_S
   (the user's reason usually follows it): the rejection becomes evidence for what that message asks;
3. group a friction message's directives: one carrying its own marker ("no", "don't", "again", "I
   told you", "always/never") starts a group, an unmarked one elaborates the group before it
   ("no, don't mock the database. use a real sqlite file" is one correction);
4. embed the groups (and, only when the batch has a habitual instruction such as "table-driven as
   usual", the friction-free instructions that share a word with it) and cluster them: a group joins
   an existing habit whose behaviour is similar (its exact wording is reused, so evidence accumulates
   across batches and runs), else the most similar cluster, else starts one if it is general enough;
5. turn each cluster into a proposal: "When ..." from the situation the user named ("before ...",
   "in tests", ...), "Do ..." from the best-worded directive in the user's own words, generalised
   away from file names, paths and versions; evidence = the cited observations with their UTC days.

Friction outranks friction-free preferences: a friction cluster is proposed from one general
correction (it then collects evidence), a friction-free one only when it repeats in >= 2 observations
and says it is habitual; friction clusters also get the higher confidence. Facts become memory
suggestions. The ledger decides the stage (reviewable at >= 3 observations over >= 2 days).

numpy is used through the embedder only; nothing is embedded when a batch holds no friction.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from habitus.habits.lifecycle import Evidence, Proposal
from habitus.learn import text as wording

if TYPE_CHECKING:
    import numpy as np

    from habitus.embed.engine import Embedder

REJECTION_WINDOW_S = 30 * 60
CLUSTER_BP = 3800  # a group joins a cluster at this cosine (x 10,000) to its nearest member
JOIN_LOOSE_BP = 4800  # friction without a directive joins only a clearly similar cluster
HABIT_BP = 5000  # a group reuses an existing habit's wording at this cosine to its behaviour
MAX_CONTEXT_HABITS = 2000
MAX_NOTE_CHARS = 160
FRICTION_BASE_BP, FRICTION_STEP_BP, FRICTION_MAX_BP = 6000, 800, 9500
PREFERENCE_BASE_BP, PREFERENCE_STEP_BP, PREFERENCE_MAX_BP = 4000, 500, 6500
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Observation:
    index: int
    ref: str  # "obs-<gen>:<seq>:<checksum>"
    day: str  # UTC day the user wrote it
    at: float | None  # epoch seconds, for adjacency
    session: str | None
    user: str
    assistant: str
    outcome: str


def observation(index: int, record: dict[str, Any]) -> Observation:
    """An observation record as the analyzers see it (payload fields with safe defaults)."""
    payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
    stamp = payload.get("user_at") if isinstance(payload.get("user_at"), str) else None
    if stamp is None or not _DAY.match(stamp):
        stamp = record.get("at") if isinstance(record.get("at"), str) else ""
    return Observation(
        index=index,
        ref=f"obs-{record['gen']}:{record['seq']}:{record['checksum']}",
        day=_day(stamp),
        at=_epoch(stamp),
        session=payload.get("session") if isinstance(payload.get("session"), str) else None,
        user=payload.get("user") if isinstance(payload.get("user"), str) else "",
        assistant=payload.get("assistant") if isinstance(payload.get("assistant"), str) else "",
        outcome=payload.get("outcome") if isinstance(payload.get("outcome"), str) else "complete",
    )


def _day(stamp: str) -> str:
    try:
        return _parse(stamp).date().isoformat()
    except ValueError:
        return datetime.datetime.now(datetime.UTC).date().isoformat()


def _parse(stamp: str) -> datetime.datetime:
    value = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    return value.astimezone(datetime.UTC)


def _epoch(stamp: str) -> float | None:
    try:
        return _parse(stamp).timestamp()
    except ValueError:
        return None


@dataclass
class Known:
    """An existing habit as context: its wording is reused when new friction matches it."""

    id: str
    condition: str
    behavior: str
    polarity: int
    status: str
    rejected: bool


@dataclass
class Group:
    """One correction (a directive and its elaborations), or one friction-free instruction."""

    observation: int
    text: str  # the primary directive (or loose text): what is embedded and compared
    directives: list[wording.Directive]
    friction: bool
    seed: bool
    loose: bool = False
    habitual: bool = False
    extra: list[int] = field(default_factory=list)  # linked rejections


@dataclass
class Cluster:
    groups: list[int] = field(default_factory=list)
    known: int | None = None  # index into the habit context

    def observations(self, groups: list[Group]) -> list[int]:
        seen: list[int] = []
        for g in self.groups:
            for index in [groups[g].observation, *groups[g].extra]:
                if index not in seen:
                    seen.append(index)
        return sorted(seen)


@dataclass
class Found:
    """A proposal with what the result shows about it."""

    proposal: Proposal
    friction: bool
    reuses: str | None  # id of the existing habit whose wording it reuses


@dataclass
class Analysis:
    found: list[Found] = field(default_factory=list)
    suggestions: list[dict[str, Any]] = field(default_factory=list)
    embedded: int = 0


def analyze(
    records: list[dict[str, Any]],
    *,
    load: Callable[[], Embedder],
    context: list[Known],
    context_vectors: Callable[[Embedder], np.ndarray | None],
) -> Analysis:
    """Proposals and memory suggestions for one batch. `load()` gives the embedder, called only when
    the batch holds friction (so a calm batch loads no model); `context_vectors(embedder)` gives the
    behaviour vectors of `context`, one row each (None when there is no context)."""
    observations = [observation(i, r) for i, r in enumerate(records)]
    readings = [wording.read_message(o.user, outcome=o.outcome, assistant=o.assistant) for o in observations]
    links = _link_rejections(observations, readings)
    groups = _groups(observations, readings, links)
    result = Analysis(suggestions=_suggestions(observations, readings, links))
    if not any(g.friction or g.habitual for g in groups):
        return result
    embedder = load()
    groups = _with_preferences(groups)
    vectors = embedder.embed([wording.generalise(g.text) for g in groups])
    result.embedded = len(groups)
    clusters = _cluster(groups, vectors, context_vectors(embedder) if context else None)
    for cluster in clusters:
        found = _proposal(cluster, groups, observations, readings, context, vectors)
        if found is not None:
            result.found.append(found)
    result.found.sort(key=lambda f: (-f.proposal.confidence_bp, f.proposal.behavior))
    return result


def _link_rejections(observations: list[Observation], readings: list[wording.Reading]) -> dict[int, int]:
    """observation index -> index of the rejected tool use it explains."""
    links: dict[int, int] = {}
    for i, reading in enumerate(readings[:-1]):
        if not reading.rejection:
            continue
        here, after = observations[i], observations[i + 1]
        if here.session and after.session and here.session != after.session:
            continue
        if here.at is not None and after.at is not None and not 0 <= after.at - here.at <= REJECTION_WINDOW_S:
            continue
        links[i + 1] = i
    return links


def _groups(
    observations: list[Observation], readings: list[wording.Reading], links: dict[int, int]
) -> list[Group]:
    groups: list[Group] = []
    for i, reading in enumerate(readings):
        extra = [links[i]] if i in links else []
        # A calm instruction after a rejected tool use may be a new request, not the reason: only a
        # correction (or a fact, see _suggestions) takes the rejection as evidence.
        directives = reading.directives
        current: Group | None = None
        for directive in directives:
            if current is None or directive.marked:
                text = directive.text
                if current is None and reading.lead:
                    text = f"{reading.lead} {text}"  # "printing from library code?! return errors ..."
                current = Group(i, text, [directive], True, directive.seed, extra=list(extra))
                groups.append(current)
            else:
                current.directives.append(directive)  # worded with it, not compared
        if not directives and reading.loose and reading.friction:
            groups.append(Group(i, reading.loose, [], True, False, loose=True, extra=list(extra)))
        if not reading.friction:
            for directive in reading.instructions:
                groups.append(
                    Group(i, directive.text, [directive], False, directive.seed, habitual=directive.habitual)
                )
    return groups


def _with_preferences(groups: list[Group]) -> list[Group]:
    """Friction groups, plus friction-free instructions only where a habitual one exists: it and the
    instructions sharing a content word with it (the calm repetitions of the same preference)."""
    habitual_words: set[str] = set()
    for g in groups:
        if g.habitual:
            habitual_words |= set(wording.content_words(g.text))
    kept = []
    for g in groups:
        if g.friction or g.habitual or habitual_words & set(wording.content_words(g.text)):
            kept.append(g)
    return kept


def _cluster(groups: list[Group], vectors: np.ndarray, context: np.ndarray | None) -> list[Cluster]:
    import numpy as np

    to_habit = vectors @ context.T if context is not None and len(context) else None
    similar = vectors @ vectors.T
    clusters: list[Cluster] = []
    by_habit: dict[int, Cluster] = {}
    member: dict[int, int] = {}  # group -> cluster index
    waiting: list[int] = []
    order = sorted(range(len(groups)), key=lambda g: (not groups[g].friction, g))
    for g in order:
        group = groups[g]
        if to_habit is not None and to_habit.shape[1]:
            best = int(np.argmax(to_habit[g]))
            if to_habit[g, best] * 10_000 >= HABIT_BP:
                cluster = by_habit.get(best)
                if cluster is None:
                    cluster = by_habit[best] = Cluster(known=best)
                    clusters.append(cluster)
                cluster.groups.append(g)
                member[g] = clusters.index(cluster)
                continue
        target = _nearest(g, groups, similar, clusters, member)
        if target is not None:
            clusters[target].groups.append(g)
            member[g] = target
        elif group.seed and not group.loose:
            clusters.append(Cluster(groups=[g]))
            member[g] = len(clusters) - 1
        else:
            waiting.append(g)
    for g in waiting:  # a non-seed may join a cluster that a later group started
        target = _nearest(g, groups, similar, clusters, member)
        if target is not None:
            clusters[target].groups.append(g)
            member[g] = target
    return clusters


def _nearest(
    g: int, groups: list[Group], similar: np.ndarray, clusters: list[Cluster], member: dict[int, int]
) -> int | None:
    group = groups[g]
    threshold = JOIN_LOOSE_BP if group.loose else CLUSTER_BP
    best, best_bp = None, threshold - 1
    for index, cluster in enumerate(clusters):
        if cluster.known is not None and not cluster.groups:
            continue
        for other in cluster.groups:
            if groups[other].friction != group.friction and not group.friction:
                continue  # a calm instruction does not join a friction cluster
            bp = int(similar[g, other] * 10_000)
            if bp > best_bp:
                best, best_bp = index, bp
    return best


def _proposal(
    cluster: Cluster,
    groups: list[Group],
    observations: list[Observation],
    readings: list[wording.Reading],
    context: list[Known],
    vectors: np.ndarray,
) -> Found | None:
    members = [groups[g] for g in cluster.groups]
    friction = any(m.friction for m in members)
    cited = cluster.observations(groups)
    if cluster.known is None:
        if friction and not any(m.seed and not m.loose for m in members):
            return None
        if not friction and (len(cited) < 2 or not any(m.habitual for m in members)):
            return None
    markers: set[str] = set()
    for index in cited:
        markers |= readings[index].markers
    confidence = (
        min(FRICTION_MAX_BP, FRICTION_BASE_BP + FRICTION_STEP_BP * (len(cited) - 1))
        + 300 * bool(markers & {"told", "again"})
        + 300 * ("rejected" in markers)
        + 200 * ("frustration" in markers)
        if friction
        else min(PREFERENCE_MAX_BP, PREFERENCE_BASE_BP + PREFERENCE_STEP_BP * (len(cited) - 1))
    )
    confidence = min(confidence, FRICTION_MAX_BP)
    notes = {}
    for m in members:
        notes.setdefault(m.observation, m.text[:MAX_NOTE_CHARS])
    evidence = tuple(
        Evidence(
            observations[i].ref,
            observations[i].day,
            notes.get(i) or ("rejected tool use" if readings[i].rejection else None),
        )
        for i in cited
    )
    if cluster.known is not None:
        known = context[cluster.known]
        proposal = Proposal(known.condition, known.behavior, known.polarity, confidence, evidence)
        return Found(proposal, friction, known.id)
    best = _representative(cluster, groups, vectors)
    behavior, polarity = wording.behavior(_wording_text(best))
    texts = [_wording_text(best)] + [
        d.text for m in members for d in m.directives if d.text != best.directives[0].text
    ]
    condition = wording.condition(texts)
    proposal = Proposal(condition, behavior, polarity, confidence, evidence)
    return Found(proposal, friction, None)


def _representative(cluster: Cluster, groups: list[Group], vectors: np.ndarray) -> Group:
    """The best-worded member: a seed with the highest directive score, then the most central."""
    candidates = [g for g in cluster.groups if groups[g].directives and groups[g].seed] or [
        g for g in cluster.groups if groups[g].directives
    ]
    if not candidates:
        candidates = list(cluster.groups)

    def rank(g: int) -> tuple[float, float, int]:
        score = groups[g].directives[0].score if groups[g].directives else -9
        centrality = float(sum(vectors[g] @ vectors[o] for o in cluster.groups))
        return (score, centrality, -g)

    return groups[max(candidates, key=rank)]


def _wording_text(group: Group) -> str:
    """A correction's words for the habit: the directive, plus the first clause of an elaboration
    ("Do not mock the database; use a real sqlite file in a tmp dir")."""
    if not group.directives:
        return group.text
    first = group.directives[0].text
    if len(group.directives) > 1:
        more = re.split(r",\s+", group.directives[1].text)[0]
        if 0 < len(more) <= 120 and wording.content_words(more):
            return f"{first.rstrip('.')}; {more}"
    return first


def _suggestions(
    observations: list[Observation], readings: list[wording.Reading], links: dict[int, int]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, reading in enumerate(readings):
        for fact in reading.facts:
            key = " ".join(wording.words(fact.content))
            if key in seen:
                continue
            seen.add(key)
            refs = [observations[links[i]].ref] if i in links else []
            refs.append(observations[i].ref)
            out.append({"content": fact.content, "kind": fact.kind, "refs": refs, "day": observations[i].day})
    return out
