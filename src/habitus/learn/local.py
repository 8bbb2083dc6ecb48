"""The local analyzer: repeated friction in a batch of observations -> candidate habits, offline.

For one batch (records of one generation, in order):

1. read every user message (`habitus.learn.text.read_message`): friction markers, directives, facts;
2. link a rejected tool use to the next observation of the same session within REJECTION_WINDOW_S
   (the user's reason usually follows it): the rejection becomes evidence for what that message asks;
3. group a friction message's directives: one carrying its own marker ("no", "don't", "again", "I
   told you", "always/never") starts a group, an unmarked one elaborates the group before it
   ("no, don't mock the database. use a real sqlite file" is one correction); a kind of prompt said in
   two prompts or more (habitus.learn.standing: a hold-off, "too small", "too long", "too complicated")
   is one more correction, worded for its kind and citing them all; one sentence of a calm prompt that
   the rule-sentence classifier (habitus.learn.rules) reads as a standing rule is one more, worded from
   that sentence alone and kept apart from the corrections;
4. embed each group's gist (habitus.learn.gist: the request and its object, without reasons, markers
   and one-off tails) and cluster them by similarity = cosine + LEXICAL_WEIGHT x shared distinctive
   terms, at CLUSTER_BP: a group joins an existing habit whose behaviour or cited corrections it
   resembles (the habit's exact wording is reused, so evidence accumulates across batches and runs),
   else the most similar cluster, else starts one if it is general enough. Friction-free instructions
   take part only when the batch has a habitual one ("table-driven as usual"), with the ones sharing a
   term with it and the calm instructions kept from earlier batches (`Pending`); a calm instruction
   never joins a correction unless it says it is habitual or removes what the agent just added;
5. turn each cluster into a proposal: "When ..." from the situation the user named ("before ...",
   "in tests", ...), "Do ..." from the best-worded directive in the user's own words, generalised
   away from file names, paths and versions; evidence = the cited observations with their UTC days.

Friction outranks friction-free preferences: a friction cluster is proposed from one general
correction (it then collects evidence), a friction-free one only when it repeats in >= 2 observations
(this batch's or earlier ones kept as `Pending`) and says it is habitual; friction clusters also get
the higher confidence. Facts become memory suggestions. The ledger decides the stage (reviewable at
>= 3 observations over >= 2 days).

Strong contradictions: a message that explicitly lifts or reverses a rule ("actually, do use rgb
indices now", "you don't need to ask before renaming anymore") and matches exactly one active habit
at CONTRADICT_BP (on the side it reverses) is reported as a `Contradiction`; the run marks that habit
dormant (habitus.habits.mark_dormant, audited) and proposes a replacement only as a candidate.

numpy is used through the embedder only; nothing is embedded when a batch holds no friction, no
habitual instruction and no reversal.
"""

from __future__ import annotations

import datetime
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from habitus.habits.lifecycle import Evidence, Proposal
from habitus.lang import pasted
from habitus.learn import foreign, gist, phrasing, rules, standing
from habitus.learn.text import Directive, Reading, content_words, forwarded, read_message, words

if TYPE_CHECKING:
    import numpy as np

    from habitus.embed.engine import Embedder
    from habitus.learn.meaning import Gate

_D = TypeVar("_D", str, None)

REJECTION_WINDOW_S = 30 * 60
# Calibrated on the labelled conversations of tests/fixtures/analyze and analyze_heldout (pairs of
# corrections of the same habit against pairs of different ones; scripts/calibrate_analyze.py).
LEXICAL_WEIGHT = 0.3  # weight of the shared distinctive terms (0..1) added to the cosine
CLUSTER_BP = 5500  # a group joins a cluster, or an existing habit, at this similarity (x 10,000)
CONTRADICT_BP = 8000  # a reversal must match the habit it contradicts at least this well ...
CONTRADICT_MARGIN_BP = 1000  # ... and every other active habit this much less
MAX_CONTEXT_HABITS = 2000
MAX_CONTEXT_NOTES = 3  # cited corrections of a candidate compared with new ones
MAX_PARTS = 1  # requests of one correction also compared one by one
MAX_NOTE_CHARS = 160
MAX_PROMOTE = 16  # prompts of one batch the meaning gate reads as candidate sources
MIN_PROMOTE_WORDS = 3  # content words a promoted prompt needs ("yes, do it" is no rule)
MAX_STATED = 32  # sentences of one batch the rule-sentence classifier reads (each is embedded)
MAX_STATED_PER_PROMPT = 2  # rule sentences one prompt may start candidates from
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
    source: str = "user"  # who wrote the prompt; only "user" is the user's words


def observation(index: int, record: dict[str, Any]) -> Observation:
    """An observation record as the analyzers see it (payload fields with safe defaults). A prompt that
    capture recorded as someone else's (a teammate, a pasted plan, a command, a hook, a tool, a
    subagent) reads as empty: it is context, never the user's words."""
    raw = record.get("payload")
    payload: dict[str, Any] = raw if isinstance(raw, dict) else {}
    source = _str(payload, "source", "user")
    stamp = _str(payload, "user_at", None)
    if stamp is None or not _DAY.match(stamp):
        stamp = _str(record, "at", "")
    return Observation(
        index=index,
        ref=f"obs-{record['gen']}:{record['seq']}:{record['checksum']}",
        day=_day(stamp),
        at=_epoch(stamp),
        session=_str(payload, "session", None),
        user=_str(payload, "user", "") if source == "user" else "",
        assistant=_str(payload, "assistant", ""),
        outcome=_str(payload, "outcome", "complete"),
        source=source,
    )


def _str(mapping: dict[str, Any], key: str, default: _D) -> str | _D:
    """`mapping[key]` when it is a string, else `default`: records come from disk and may be damaged."""
    value = mapping.get(key)
    return value if isinstance(value, str) else default


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
    notes: tuple[str, ...] = ()  # the corrections it cites (candidates only), compared like groups


@dataclass(frozen=True)
class Pending:
    """An instruction kept from an earlier batch, waiting for a repeat: a calm instruction (a
    preference said once) or friction without a directive that joined nothing."""

    id: int
    kind: str  # "calm" | "loose"
    ref: str
    day: str
    text: str
    habitual: bool


@dataclass
class Group:
    """One correction (a directive and its elaborations), or one friction-free instruction."""

    observation: int
    text: str  # the primary directive (or loose text): worded from, and noted as evidence
    directives: list[Directive]
    friction: bool
    seed: bool
    loose: bool = False
    habitual: bool = False
    extra: list[int] = field(default_factory=list)  # linked rejections
    gist: str = ""  # what is embedded and compared (habitus.learn.gist): the whole correction ...
    terms: frozenset[str] = frozenset()
    parts: list[tuple[str, frozenset[str]]] = field(default_factory=list)  # ... and each request alone
    pending: int | None = None  # id of the Pending note it stands for
    promoted: bool = False  # started by the meaning gate, not by the word rules
    against: frozenset[int] = frozenset()  # known habits it contradicts (never joins them)
    sure: bool = False  # a repeated kind or a ban on a feature of prose: the meaning gate does not judge it
    stated: bool = False  # a rule sentence inside a prompt (habitus.learn.rules): worded from it alone

    def settle(self, context: str = "") -> None:
        """Compute the gists once the group's directives are complete."""
        texts = [self.text] + [d.text for d in self.directives[1:]]
        self.gist = gist.gist(". ".join(texts), context)
        self.terms = gist.terms(self.gist)
        self.parts = []
        for text in texts[:MAX_PARTS] if len(texts) > 1 else []:
            part = gist.gist(text, context)
            if part != self.gist and all(part != p for p, _ in self.parts):
                self.parts.append((part, gist.terms(part)))

    def views(self) -> list[tuple[str, frozenset[str]]]:
        return [(self.gist, self.terms), *self.parts]


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


@dataclass(frozen=True)
class Contradiction:
    """An explicit reversal of one active habit (see the module docstring)."""

    habit: str
    ref: str
    day: str
    note: str
    similarity_bp: int


@dataclass
class Analysis:
    found: list[Found] = field(default_factory=list)
    suggestions: list[dict[str, Any]] = field(default_factory=list)
    embedded: int = 0
    contradictions: list[Contradiction] = field(default_factory=list)
    keep: list[Pending] = field(default_factory=list)  # new pending notes (id 0)
    used: list[int] = field(default_factory=list)  # pending notes now cited by a proposal


class Vectors:
    """Gist embeddings, cached by text for the life of a run (habits and notes repeat per batch)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._cache: dict[str, np.ndarray] = {}

    def of(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        todo = sorted({t for t in texts if t not in self._cache})
        if todo:
            for text, row in zip(todo, self.embedder.embed(todo), strict=True):
                self._cache[text] = row
        if not texts:
            return np.zeros((0, self.embedder.dims), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])


def similarity(cosine: float, a: frozenset[str], b: frozenset[str]) -> int:
    """Cosine of two gists raised by their shared distinctive terms, in basis points."""
    return round((cosine + LEXICAL_WEIGHT * gist.shared(a, b)) * 10_000)


def similarities(
    left: np.ndarray, left_terms: list[frozenset[str]], right: np.ndarray, right_terms: list[frozenset[str]]
) -> np.ndarray:
    """`similarity` of every left row with every right row (bp, int64), in matrix operations: the
    pairs grow with the square of a batch and with the number of known habits, a Python loop over
    them was the slowest part of a large run."""
    import numpy as np

    vocabulary: dict[str, int] = {}
    for found in (*left_terms, *right_terms):
        for term in found:
            vocabulary.setdefault(term, len(vocabulary))

    def incidence(sets: list[frozenset[str]]) -> np.ndarray:
        out = np.zeros((len(sets), max(1, len(vocabulary))), dtype=np.float32)
        for row, found in enumerate(sets):
            out[row, [vocabulary[t] for t in found]] = 1.0
        return out

    a, b = incidence(left_terms), incidence(right_terms)
    common = a @ b.T
    smaller = np.minimum(a.sum(axis=1)[:, None], b.sum(axis=1)[None, :])
    overlap = np.divide(common, smaller, out=np.zeros_like(common), where=smaller > 0)
    cosine = (left @ right.T).astype(np.float64)
    return np.rint((cosine + LEXICAL_WEIGHT * overlap.astype(np.float64)) * 10_000).astype(np.int64)


def _best_by_group(values: np.ndarray, owner: np.ndarray, groups: int, *, axis: int) -> np.ndarray:
    """Rows (axis 0) or columns (axis 1) of views folded to their groups by the maximum."""
    import numpy as np

    moved = values if axis == 0 else values.T
    out = np.full((groups, moved.shape[1]), -10_000, dtype=np.int64)
    np.maximum.at(out, owner, moved)
    return out if axis == 0 else out.T


def analyze(
    records: list[dict[str, Any]],
    *,
    load: Callable[[], Vectors],
    context: list[Known],
    pending: list[Pending] | tuple[Pending, ...] = (),
    gate: Callable[[], Gate | None] | None = None,
) -> Analysis:
    """Proposals, memory suggestions, contradictions and pending notes for one batch. `load()` gives
    the (caching) embedder, called only when the batch holds friction, a habitual instruction or a
    reversal. `gate()` gives the (caching) meaning gate (habitus.learn.meaning), called only when the
    batch has a calm instruction of three content words or more to read (an ordinary request is one) or
    a new candidate to check; None or a None gate: no check."""
    observations = [observation(i, r) for i, r in enumerate(records)]
    readings = [_read(observations, i) for i in range(len(observations))]
    links = _link_rejections(observations, readings)
    for i in links:  # a rule stated right after a rejected tool use is its reason
        readings[i] = _read(observations, i, after_rejection=True)
    groups = _groups(observations, readings, links) + _repeated(observations, readings)
    meant = gate if gate is not None else lambda: None
    _promoted(observations, readings, groups, meant)
    groups += _stated(observations, readings, groups, meant)
    result = Analysis(suggestions=_suggestions(observations, readings, links))
    reversals = any(r.reversals for r in readings) and any(k.status == "active" for k in context)
    if not (reversals or any(g.friction or g.habitual for g in groups)):
        result.keep = _to_keep(groups, observations, set())
        return result
    vectors = load()
    if reversals:
        result.contradictions = _contradictions(observations, readings, groups, context, vectors)
    groups = _with_preferences(groups) + _recalled(groups, pending, observations, readings)
    scores, to_known, known_of, known_terms = _scores(groups, context, vectors)
    result.embedded = len(groups)
    clusters = _cluster(groups, scores, to_known, known_of, known_terms)
    vocabulary = phrasing.vocabulary([t for o in observations for t in (o.user, o.assistant)])
    made = [
        (cluster, found)
        for cluster in clusters
        if (found := _proposal(cluster, groups, observations, readings, context, scores, vocabulary))
        is not None
    ]
    made = _meant(made, groups, observations, readings, meant)
    made = _unrepeated(made, groups, context, scores)
    cited: set[int] = set()
    for cluster, found in made:
        result.found.append(found)
        cited.update(cluster.groups)
    result.used = sorted({p for g in cited if (p := groups[g].pending) is not None})
    result.keep = _to_keep(groups, observations, {groups[g].observation for g in cited})
    result.found.sort(key=lambda f: (-f.proposal.confidence_bp, f.proposal.behavior))
    return result


# A negation inside a calm sentence that does not open with it states what happens, not what to do.
_REPORTED_NO = re.compile(
    r"\b(?:won'?t|wouldn'?t|doesn'?t|didn'?t|isn'?t|aren'?t|wasn'?t|can'?t|cannot|couldn'?t"
    r"|(?:will|would|does|did|is|are|was|can|could) not)\b",
    re.IGNORECASE,
)
_OPENS_NO = re.compile(r"^(?:don'?t|do not|never|no)\b", re.IGNORECASE)


def _promoted(
    observations: list[Observation],
    readings: list[Reading],
    groups: list[Group],
    meant: Callable[[], Gate | None],
) -> None:
    """The second source of candidates: a calm general instruction said once ("keep our working
    documentation in linear"), which the word rules only keep as a pending note, starts a candidate
    when the meaning gate reads its prompt as a standing rule or a generalising correction (score >=
    its `source`). Its instruction with the highest score becomes a correction (in place: it was a
    seed already, general by the word rules), then clusters, reuses known habits and is worded like
    any other, in the user's words. Only prompts without friction (the word rules read those, swaps
    too) or a reversal are scored, at most MAX_PROMOTE per batch, so a batch costs a bounded number of
    embeddings. (Promoting friction the word rules judged too narrow was tried: it gave two false
    proposals on the dev sets, one of them inverted.)"""
    calm: dict[int, list[Group]] = {}
    for g in groups:
        if not g.friction and not g.habitual and g.directives and g.seed and g.pending is None:
            if _REPORTED_NO.search(g.text) and not _OPENS_NO.match(g.text):
                continue  # "hardcoded strings won't get translated": a report; worded it would invert
            calm.setdefault(g.observation, []).append(g)
    eligible = [
        i
        for i in sorted(calm)
        if not readings[i].friction
        and not readings[i].reversals
        and len(_content(observations[i].user)) >= MIN_PROMOTE_WORDS
    ]
    # A rule the user asked to have written into the agent's instruction file ("memo") is one by the
    # word rules; the gate, trained on how rules are said, scores its plain wording like a task.
    for i in eligible:
        if "memo" in readings[i].markers:
            calm[i][0].friction = calm[i][0].promoted = True
    asked = [i for i in eligible if "memo" not in readings[i].markers][:MAX_PROMOTE]
    if not asked:
        return
    gate = meant()
    if gate is None:
        return
    scores = gate.scores([observations[i].user for i in asked])
    for i, score in zip(asked, scores, strict=True):
        if score < gate.source:
            continue
        options = calm[i]
        best = options[0]
        if len(options) > 1:
            ranked = gate.scores([o.text for o in options])
            best = options[max(range(len(options)), key=lambda k: ranked[k])]
        best.friction = best.promoted = True


def _stated(
    observations: list[Observation],
    readings: list[Reading],
    groups: list[Group],
    meant: Callable[[], Gate | None],
) -> list[Group]:
    """The third source of candidates: one sentence of a prompt that states a standing rule, said once,
    often inside a task request and without a friction marker ("dont forget to branch off main and not
    the current branch."), read by the rule-sentence classifier of the meaning gate (habitus.learn.rules)
    at or above its threshold. Such a sentence is a correction of its own, `sure` (the classifier has
    judged it) and `stated` (worded from that sentence alone). Prompts with friction, a hold-off or a
    complaint (habitus.learn.standing), a reversal, a rejected tool use or a forwarded review are left to
    the rules that read them, a sentence that a calm rule of its prompt started already is not read
    twice, and questions are no rules. At most MAX_STATED sentences a batch are scored, those whose
    shape looks most like a rule first, so a batch costs a bounded number of embeddings."""
    started: dict[int, list[set[str]]] = {}
    for g in groups:
        if g.friction or g.promoted:
            started.setdefault(g.observation, []).append(set(_content(g.text)))
        for index in g.extra if g.sure else ():
            started.setdefault(index, []).append(set())  # cited by a repeated kind: read already
    said: list[tuple[int, str, int, int]] = []
    for i, o in enumerate(observations):
        r = readings[i]
        if r.friction or r.reversals or r.rejection or not o.user.strip() or forwarded(o.user):
            continue  # friction is the word rules' to read (a correction they found too narrow stays so)
        if (i in started and not all(started[i])) or standing.kinds(pasted.own_words(o.user)):
            continue  # a hold or a complaint is about the task at hand until it repeats
        found = rules.sentences(o.user)
        facts = [set(_content(f.content)) for f in r.facts]
        for k, sentence in enumerate(found):
            words = set(_content(sentence))
            if any(len(words & fact) * 2 >= len(words) > 0 for fact in facts):
                continue  # "we're on python 3.12 everywhere": a memory suggestion, not a habit
            # a sentence a correction of this prompt already stands for would propose it twice
            if (
                not rules.asks(sentence)
                or rules.question(sentence)
                or any(len(words & c) * 2 >= len(c) > 0 for c in started.get(i, []))
            ):
                continue
            said.append((i, sentence, k, len(found)))
    if not said:
        return []
    gate = meant()
    if gate is None or gate.rules is None:
        return []
    if len(said) > MAX_STATED:
        said = sorted(said, key=lambda item: -gate.shape(item[1], item[2], item[3]))[:MAX_STATED]
        said.sort(key=lambda item: (item[0], item[2]))
    scores = gate.rule_scores([(s, k, n) for _, s, k, n in said])
    out: list[Group] = []
    per: Counter[int] = Counter()
    for (i, sentence, _, _), score in zip(said, scores, strict=True):
        if score < gate.rules_threshold or per[i] >= MAX_STATED_PER_PROMPT:
            continue
        text = rules.directive(sentence)
        # the lowest wording score: clustered with a correction, the correction's words are the habit's
        group = Group(i, text, [Directive(text, seed=True, score=-5, marked=True, sure=True)], True, True)
        group.promoted = group.sure = group.stated = True
        group.settle()
        out.append(group)
        per[i] += 1
    return out


SAME_TERMS = 0.5  # share of distinctive terms at which a rule sentence restates another proposal ...
RESTATES_BP = 4500  # ... or similarity to one of its corrections (below CLUSTER_BP: other words)


def _unrepeated(
    made: list[tuple[Cluster, Found]], groups: list[Group], context: list[Known], scores: np.ndarray
) -> list[tuple[Cluster, Found]]:
    """Proposals without those made of rule sentences alone that restate another proposal of the batch
    or a known habit in other words (half their distinctive terms shared; by wording alone they stay
    below CLUSTER_BP): a rule said calmly once beside the corrections of the same habit is that habit."""

    def alone(cluster: Cluster, found: Found) -> bool:
        return found.reuses is None and all(groups[g].stated for g in cluster.groups)

    proposed = [cluster for cluster, found in made if not alone(cluster, found)]
    others = [frozenset().union(*(groups[g].terms for g in cluster.groups)) for cluster in proposed]
    others += [gist.terms(gist.gist(_core(k.behavior, k.polarity))) for k in context]
    mine = [g for cluster in proposed for g in cluster.groups]
    out = []
    for cluster, found in made:
        if alone(cluster, found):
            terms = frozenset().union(*(groups[g].terms for g in cluster.groups))
            near = max((int(scores[g, o]) for g in cluster.groups for o in mine), default=-10_000)
            if near >= RESTATES_BP or any(gist.shared(terms, other) >= SAME_TERMS for other in others):
                continue
        out.append((cluster, found))
    return out


def _content(text: str) -> list[str]:
    """Content words in the text's language (a Japanese or Chinese text has no spaces: its character
    pairs count)."""
    return foreign.content(text) if foreign.is_foreign(text) else content_words(text)


def _meant(
    made: list[tuple[Cluster, Found]],
    groups: list[Group],
    observations: list[Observation],
    readings: list[Reading],
    meant: Callable[[], Gate | None],
) -> list[tuple[Cluster, Found]]:
    """The proposals the meaning gate lets through: one reusing a known habit's wording always (it adds
    evidence), one citing a rejected tool use (the user stopped the agent), a swap ("yarn again. bun.")
    or a reversal ("actually, use palette indices from now on"), or a rule to write into the agent's
    instruction file ("memo"), whose words the rules read as a whole
    and the scorer undervalues in short or foreign prompts, and a new one when at least one of the
    prompts it cites reads as a standing rule or a generalising correction (score >= the gate's `drop`),
    whatever words it used."""

    def exempt(o: int) -> bool:
        return o < len(readings) and (
            readings[o].rejection
            or bool(readings[o].reversals)
            or bool(readings[o].markers & {"replacement", "memo"})
        )

    fresh = [
        i
        for i, (cluster, found) in enumerate(made)
        if found.reuses is None
        and not any(exempt(o) for o in cluster.observations(groups))
        and not any(groups[g].sure for g in cluster.groups)
    ]
    if not fresh:
        return made
    gate = meant()
    if gate is None:
        return made
    texts: dict[int, str] = {}
    for i in fresh:
        cluster = made[i][0]
        for index in cluster.observations(groups):
            if observations[index].user.strip():
                texts.setdefault(index, observations[index].user)
    order = sorted(texts)
    score = dict(zip(order, gate.scores([texts[i] for i in order]), strict=True))
    keep = set(range(len(made))) - set(fresh)
    for i in fresh:
        if max((score.get(o, 0.0) for o in made[i][0].observations(groups)), default=0.0) >= gate.drop:
            keep.add(i)
    return [m for i, m in enumerate(made) if i in keep]


def _before(observations: list[Observation], i: int, replies: int = 1) -> str:
    """The agent's previous replies in the same session: what the user's message reacts to."""
    out: list[str] = []
    here = observations[i]
    for prior in reversed(observations[max(0, i - replies) : i]):
        if here.session and prior.session and here.session != prior.session:
            break
        out.append(prior.assistant)
    return "\n".join(out)


def _read(observations: list[Observation], i: int, *, after_rejection: bool = False) -> Reading:
    o = observations[i]
    return read_message(
        o.user,
        outcome=o.outcome,
        assistant=o.assistant,
        before=_before(observations, i),
        recent=_before(observations, i, 2),
        after_rejection=after_rejection,
        opening=_opening(observations, i),
    )


def _opening(observations: list[Observation], i: int) -> bool:
    """Whether observation i starts its session: no earlier observation of the batch is in it (a
    session that began in an earlier batch is rare against its many turns; without a session id,
    never)."""
    here = observations[i]
    if here.session is None:
        return False
    return all(o.session != here.session for o in observations[:i])


def _link_rejections(observations: list[Observation], readings: list[Reading]) -> dict[int, int]:
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


def _groups(observations: list[Observation], readings: list[Reading], links: dict[int, int]) -> list[Group]:
    groups: list[Group] = []
    for i, reading in enumerate(readings):
        extra = [links[i]] if i in links else []
        # A calm instruction after a rejected tool use may be a new request, not the reason: only a
        # correction (or a fact, see _suggestions) takes the rejection as evidence.
        current: Group | None = None
        mine: list[Group] = []
        for directive in reading.directives:
            if current is None or directive.marked:
                text = directive.text
                if current is None and reading.lead:
                    text = f"{reading.lead}. {text}"  # "printing from library code?! return errors ..."
                current = Group(i, text, [directive], True, directive.seed, extra=list(extra))
                mine.append(current)
            else:
                current.directives.append(directive)  # worded with it, not compared
        for text in reading.loose if reading.friction else []:
            mine.append(Group(i, text, [], True, False, loose=True, extra=list(extra)))
        if not reading.friction:
            for directive in reading.instructions:
                mine.append(
                    Group(i, directive.text, [directive], False, directive.seed, habitual=directive.habitual)
                )
        for group in mine:
            group.sure = any(d.sure for d in group.directives)
            group.settle(group.directives[0].context if group.directives else "")
        groups += mine
    return groups


def _repeated(observations: list[Observation], readings: list[Reading]) -> list[Group]:
    """A correction for each kind of prompt the user said in MIN_PROMPTS prompts or more of the batch
    (habitus.learn.standing: "dont make any changes yet" ... "lets decide on the things first"; "17px
    is too small still" ... "press y link to a checkpoint is too small too"), worded for its kind and
    citing every such prompt. Said once, each is about the task at hand; the meaning gate scores them
    like chat (0.02-0.47), so the correction is `sure` and passes it."""
    seen: dict[str, list[int]] = {}
    for i, o in enumerate(observations):
        if not o.user.strip():
            continue
        for kind in standing.kinds(pasted.own_words(o.user)):
            seen.setdefault(kind, []).append(i)
    out: list[Group] = []
    for kind, cited in seen.items():
        if len(cited) < standing.MIN_PROMPTS:
            continue
        wanted = standing.KINDS[kind][1]
        group = Group(cited[0], wanted, [Directive(wanted, seed=True, score=6, marked=True)], True, True)
        group.extra, group.sure = cited[1:], True
        group.settle()
        out.append(group)
    return out


def _with_preferences(groups: list[Group]) -> list[Group]:
    """Friction groups, plus friction-free instructions only where a habitual one exists: it and the
    instructions sharing a distinctive term with it (the calm repetitions of the same preference)."""
    habitual_terms: set[str] = set()
    for g in groups:
        if g.habitual and not g.friction:
            habitual_terms |= g.terms
    return [g for g in groups if g.friction or g.habitual or habitual_terms & g.terms]


def _recalled(
    groups: list[Group],
    pending: list[Pending] | tuple[Pending, ...],
    observations: list[Observation],
    readings: list[Reading],
) -> list[Group]:
    """Pending notes from earlier batches that may repeat something in this one (sharing a term with
    a correction, for loose notes, or with a habitual instruction, for calm ones), as groups."""
    friction_terms = set().union(*(g.terms for g in groups if g.friction))
    habitual_terms = set().union(*(g.terms for g in groups if g.habitual and not g.friction))
    known_refs = {o.ref for o in observations}
    out = []
    for note in pending:
        terms = gist.terms(gist.gist(note.text))
        wanted = (
            friction_terms
            if note.kind == "loose"
            else habitual_terms | (friction_terms if note.habitual else set())
        )
        if note.ref in known_refs or not terms & wanted:
            continue
        index = len(observations)
        observations.append(Observation(index, note.ref, note.day, None, None, note.text, "", "complete"))
        readings.append(Reading())
        group = Group(
            index,
            note.text,
            [],
            note.kind == "loose",
            False,
            loose=note.kind == "loose",
            habitual=note.habitual,
            pending=note.id,
        )
        group.settle()
        out.append(group)
    return out


def _to_keep(groups: list[Group], observations: list[Observation], cited: set[int]) -> list[Pending]:
    """What to remember for later batches: calm instructions that are general enough to be a
    preference, and corrections that could not start a habit ("again a mock db??", "where is set
    -euo pipefail??"), that no proposal cites."""
    out: list[Pending] = []
    for g in groups:
        if g.pending is not None or g.observation in cited or g.extra:
            continue
        calm = not g.friction and g.seed
        if not (calm or (g.friction and not g.seed)):
            continue  # a correction that could start a habit did (it is cited)
        o = observations[g.observation]
        kind = "calm" if calm else "loose"
        out.append(Pending(0, kind, o.ref, o.day, g.text[:MAX_NOTE_CHARS], g.habitual))
    return out


def _known_rows(context: list[Known]) -> tuple[list[tuple[str, int]], list[int]]:
    """Texts that stand for each known habit (its behaviour and, for candidates, its cited
    corrections), as gists: (text, habit index) rows, and the habit index of each row."""
    rows: list[tuple[str, int]] = []
    for index, known in enumerate(context):
        rows.append((gist.gist(_core(known.behavior, known.polarity)), index))
        for note in known.notes[:MAX_CONTEXT_NOTES] if known.status == "candidate" else ():
            rows.append((gist.gist(note), index))
    return rows, [index for _, index in rows]


def _core(behavior: str, polarity: int) -> str:
    """ "Do not mock the database." -> "don't mock the database"; "Do use X." -> "use X"."""
    body = re.sub(r"^do(?: not)?\s+", "", behavior.strip(), flags=re.IGNORECASE).rstrip(".")
    return f"don't {body}" if polarity < 0 else body


_NEGATED_PART = re.compile(
    r"(?:,\s*|;\s*|\b)(?:no|not|never|instead of|rather than|without)\s+(?:just\s+|any\s+)?([^,.;]{2,80})",
    re.IGNORECASE,
)


def _sides(known: Known) -> tuple[str, str]:
    """(what the habit asks for, what it rules out), each with its situation: "When theming / Do use
    rgb values, no rgb indices." -> ("use rgb values theming", "rgb indices theming"); "Do not mock the
    database; use a real sqlite file." -> ("use a real sqlite file", "mock the database")."""
    body = re.sub(r"^do(?: not)?\s+", "", known.behavior.strip(), flags=re.IGNORECASE).rstrip(".")
    where = re.sub(r"^when\s+(?:about to\s+)?", "", known.condition.strip(), flags=re.IGNORECASE)
    if known.polarity < 0:
        first, _, rest = body.partition(";")
        return (f"{rest.strip()} {where}" if rest.strip() else ""), f"{first.strip()} {where}"
    negated = [m.group(1).strip() for m in _NEGATED_PART.finditer(body)]
    positive = _NEGATED_PART.sub("", body).strip(" ,;")
    return f"{positive} {where}", (f"{', '.join(negated)} {where}" if negated else "")


def _contradictions(
    observations: list[Observation],
    readings: list[Reading],
    groups: list[Group],
    context: list[Known],
    vectors: Vectors,
) -> list[Contradiction]:
    """Reversals that match exactly one active habit on the side they reverse (see the module
    docstring); the groups of that message are kept from joining it."""
    active = [i for i, k in enumerate(context) if k.status == "active"]
    sides = {i: _sides(context[i]) for i in active}
    out: list[Contradiction] = []
    for index, reading in enumerate(readings):
        for reversal in reading.reversals:
            text = gist.gist(re.sub(r"^do\s+(?=\w)", "", reversal.text, flags=re.IGNORECASE))
            terms = gist.terms(text)
            # Now wanted or allowed: it contradicts what a habit rules out; no longer wanted or
            # required: what a habit asks for.
            targets = [(i, sides[i][1] if reversal.polarity > 0 else sides[i][0]) for i in active]
            targets = [(i, t) for i, t in targets if t and terms & gist.terms(t)]
            if not targets:
                continue
            found = vectors.of([text, *(gist.gist(t) for _, t in targets)])
            scores = sorted(
                (
                    (similarity(float(found[0] @ found[k + 1]), terms, gist.terms(gist.gist(t))), i)
                    for k, (i, t) in enumerate(targets)
                ),
                reverse=True,
            )
            best, habit = scores[0]
            runner_up = scores[1][0] if len(scores) > 1 else 0
            if best < CONTRADICT_BP or runner_up > best - CONTRADICT_MARGIN_BP:
                continue
            o = observations[index]
            out.append(Contradiction(context[habit].id, o.ref, o.day, reversal.text[:MAX_NOTE_CHARS], best))
            for g in groups:
                if g.observation == index:
                    g.against = g.against | {habit}
                    if not reversal.lifting:
                        g.friction = g.seed = True  # the explicit replacement is proposed (inactive)
    return out


def _scores(
    groups: list[Group], context: list[Known], vectors: Vectors
) -> tuple[np.ndarray, np.ndarray | None, list[int], list[frozenset[str]]]:
    """Similarity (bp) of every pair of groups, and of every group to each known habit's texts: the
    best over their views (the whole correction, its first request)."""
    import numpy as np

    views = [(g, text, terms) for g, group in enumerate(groups) for text, terms in group.views()]
    matrix = vectors.of([text for _, text, _ in views])
    owner = np.asarray([g for g, _, _ in views], dtype=np.int64)
    view_terms = [terms for _, _, terms in views]
    scores = _best_by_group(similarities(matrix, view_terms, matrix, view_terms), owner, len(groups), axis=0)
    scores = _best_by_group(scores, owner, len(groups), axis=1)
    known_rows, known_of = _known_rows(context)
    if not known_rows:
        return scores, None, known_of, []
    known = vectors.of([text for text, _ in known_rows])
    known_terms = [gist.terms(text) for text, _ in known_rows]
    to_known = _best_by_group(
        similarities(matrix, view_terms, known, known_terms), owner, len(groups), axis=0
    )
    return scores, to_known, known_of, known_terms


def _cluster(
    groups: list[Group],
    scores: np.ndarray,
    to_known: np.ndarray | None,
    known_of: list[int],
    known_terms: list[frozenset[str]],
) -> list[Cluster]:
    clusters: list[Cluster] = []
    by_habit: dict[int, Cluster] = {}
    member: dict[int, int] = {}  # group -> cluster index
    waiting: list[int] = []

    def rank(g: int) -> tuple[int, int, int]:
        group = groups[g]
        return (
            group.pending is not None,
            0 if group.friction and group.seed else 1 if group.friction else 2,
            g,
        )

    for g in sorted(range(len(groups)), key=rank):
        group = groups[g]
        habit = _nearest_known(g, groups, to_known, known_of, known_terms)
        if habit is not None:
            cluster = by_habit.get(habit)
            if cluster is None:
                cluster = by_habit[habit] = Cluster(known=habit)
                clusters.append(cluster)
            cluster.groups.append(g)
            member[g] = clusters.index(cluster)
            continue
        target = _nearest(g, groups, scores, clusters)
        if target is not None:
            clusters[target].groups.append(g)
            member[g] = target
        elif (
            (group.seed or (group.habitual and not group.friction))
            and not group.loose
            and group.pending is None
        ):
            clusters.append(Cluster(groups=[g]))
            member[g] = len(clusters) - 1
        else:
            waiting.append(g)
    for g in waiting:  # a non-seed may join a cluster that a later group started
        target = _nearest(g, groups, scores, clusters)
        if target is not None:
            clusters[target].groups.append(g)
            member[g] = target
    return _linked(clusters, groups, scores)


def _linked(clusters: list[Cluster], groups: list[Group], scores: np.ndarray) -> list[Cluster]:
    """Single linkage: clusters (at most one of them an existing habit) that hold a pair of similar
    corrections, or of similar calm instructions, are one cluster, whatever order the groups came in."""
    merged = True
    while merged:
        merged = False
        for a, first in enumerate(clusters):
            for b in range(a + 1, len(clusters)):
                second = clusters[b]
                if first.known is not None and second.known is not None:
                    continue
                if first.known in {o for g in second.groups for o in groups[g].against} or (
                    second.known in {o for g in first.groups for o in groups[g].against}
                ):
                    continue
                if _apart(first, second, groups):
                    continue
                if any(
                    groups[x].friction == groups[y].friction
                    and groups[x].stated == groups[y].stated  # see _nearest
                    and scores[x, y] >= CLUSTER_BP
                    and (not (_weak(groups[x]) or _weak(groups[y])) or _shares(groups[x], groups[y].terms))
                    for x in first.groups
                    for y in second.groups
                ):
                    first.groups += second.groups
                    first.known = first.known if first.known is not None else second.known
                    del clusters[b]
                    merged = True
                    break
            if merged:
                break
    return clusters


def _apart(first: Cluster, second: Cluster, groups: list[Group]) -> bool:
    """Two repeated kinds the reader worded itself ("keep it short ..." and "make text and labels big
    enough ...", both about text the user reads) are two habits, however alike their words."""
    mine = {groups[g].text for g in first.groups} & _WORDED
    theirs = {groups[g].text for g in second.groups} & _WORDED
    return bool(mine and theirs and mine != theirs)


_WORDED = {wanted for _, wanted in standing.KINDS.values()}


def _may_join(group: Group, friction_target: bool) -> bool:
    """A correction joins corrections; a calm instruction joins calm ones, and a correction only when
    it says it is habitual or removes what the agent just added."""
    return group.friction or not friction_target or group.habitual


def _nearest_known(
    g: int,
    groups: list[Group],
    to_known: np.ndarray | None,
    known_of: list[int],
    known_terms: list[frozenset[str]],
) -> int | None:
    group = groups[g]
    if to_known is None or not (group.friction or group.habitual):
        return None  # a plain calm instruction never adds evidence to an existing habit
    best, best_bp = None, CLUSTER_BP - 1
    for row, habit in enumerate(known_of):
        if habit in group.against or (_weak(group) and not _shares(group, known_terms[row])):
            continue
        if to_known[g, row] > best_bp:
            best, best_bp = habit, int(to_known[g, row])
    return best


def _weak(group: Group) -> bool:
    """A group that could not start a habit (loose friction, a question, an inferred request, a
    calm instruction): it joins only what shares a distinctive term with it, never on wording alone."""
    return not (group.seed and group.friction)


def _shares(group: Group, terms: frozenset[str]) -> bool:
    return any(view_terms & terms for _, view_terms in group.views())


def _nearest(g: int, groups: list[Group], scores: np.ndarray, clusters: list[Cluster]) -> int | None:
    group = groups[g]
    best, best_bp = None, CLUSTER_BP - 1
    for index, cluster in enumerate(clusters):
        if cluster.known is not None and cluster.known in group.against:
            continue
        if not _may_join(group, any(groups[o].friction for o in cluster.groups)):
            continue
        if _apart(Cluster(groups=[g]), cluster, groups):
            continue
        for other in cluster.groups:
            if group.observation == groups[other].observation and group.pending is None:
                continue
            if group.stated != groups[other].stated:
                # a rule sentence is judged by its classifier, a correction by the meaning gate: mixed,
                # one would carry the other past its judge (a restatement is dropped by _unrepeated)
                continue
            if (_weak(group) or _weak(groups[other])) and not _shares(group, groups[other].terms):
                continue  # see _weak
            if scores[g, other] > best_bp:
                best, best_bp = index, int(scores[g, other])
    return best


def _proposal(
    cluster: Cluster,
    groups: list[Group],
    observations: list[Observation],
    readings: list[Reading],
    context: list[Known],
    scores: np.ndarray,
    vocabulary: Counter[str],
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
    notes: dict[int, str] = {}
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
    best = _representative(cluster, groups, scores)
    phrase = bool(best.directives) and best.directives[0].phrase
    texts = [_wording_text(best)] + [
        d.text
        for m in members
        for d in m.directives
        if not best.directives or d.text != best.directives[0].text
    ]
    texts = [t if best.sure else phrasing.fix_typos(t, vocabulary) for t in texts]  # "words" is no typo
    condition, source = phrasing.situation(texts, phrase=phrase)
    if foreign.is_foreign(texts[0]):
        condition, source = foreign.topic(texts), None
    behavior, polarity = phrasing.behavior(
        texts[0], phrase=phrase, situation=condition if source == 0 else None
    )
    if best.stated and not foreign.is_foreign(texts[0]):
        behavior, polarity = rules.wording(texts[0])  # the whole sentence: never "Do use <a statement>"
    if phrasing.garbled(behavior):
        return None
    proposal = Proposal(condition, behavior, polarity, confidence, evidence)
    return Found(proposal, friction, None)


def _representative(cluster: Cluster, groups: list[Group], scores: np.ndarray) -> Group:
    """The best-worded member: a seed with the highest directive score, then the most central."""
    candidates = [g for g in cluster.groups if groups[g].directives and groups[g].seed] or [
        g for g in cluster.groups if groups[g].directives
    ]
    if not candidates:
        candidates = list(cluster.groups)

    calm = not any(groups[g].friction for g in cluster.groups)

    def rank(g: int) -> tuple[bool, float, float, int]:
        score = groups[g].directives[0].score if groups[g].directives else -9
        centrality = float(sum(int(scores[g, o]) for o in cluster.groups))
        return (calm and groups[g].habitual, score, centrality, -g)  # a preference as the user calls it

    return groups[max(candidates, key=rank)]


def _wording_text(group: Group) -> str:
    """A correction's words for the habit: the directive, plus the first clause of an elaboration
    ("Do not mock the database; use a real sqlite file in a tmp dir")."""
    if not group.directives:
        return group.text
    first = group.directives[0].text
    if len(group.directives) > 1:
        more = re.split(r",\s+", group.directives[1].text)[0]
        if 0 < len(more) <= 120 and content_words(more):
            return f"{first.rstrip('.')}; {more}"
    return first


def _suggestions(
    observations: list[Observation], readings: list[Reading], links: dict[int, int]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, reading in enumerate(readings):
        for fact in reading.facts:
            key = " ".join(words(fact.content))
            if key in seen:
                continue
            seen.add(key)
            refs = [observations[links[i]].ref] if i in links else []
            refs.append(observations[i].ref)
            out.append({"content": fact.content, "kind": fact.kind, "refs": refs, "day": observations[i].day})
    return out
