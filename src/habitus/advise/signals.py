"""What the semantic judge reads besides plain cosines, when the embedder is E5 (select's prompt
adapter is fitted for E5 only): whether the habit's situation happened in this turn, and whether the
agent's work shows the behaviour, judged by meaning rather than by the condition's own words.

Situation (is "When calling a release ready" what happened in "Bumped to 3.1.0, good to publish."?):

- the request, judged the way `select` judges a prompt (habitus.select.judge: analyse, retrieve with
  the habits' conditions and exemplars, the gate's probability, its rule vetoes): a bug report sets up
  "When fixing a bug", "can we get 0.9 onto pypi?" calls a release ready;
- every embedded unit (the request, the agent's sentences, its tool calls with their actions in words)
  carried by the prompt adapter (habitus.select.adapter) towards the wording of conditions, then
  compared with each condition: the adapter was fitted on thousands of people's requests, and an agent
  saying what it did reads much like a request for it;
- the new tool calls' actions in words alone ("bumped the version number", "deleted files",
  habitus.advise.actions), against each condition, as they are and carried by the adapter.

Behaviour (did the agent do what the habit asks?):

- the agent's sentences and its whole new text embedded as E5 *passages* and the behaviour as a query:
  E5 was trained to find the passage that answers a query, and "Built the wheel, installed it in a fresh
  venv and ran it" answers "verify the packed artifact" better than it merely resembles it; this reads
  compliance better than symmetric cosines (docs/quality.md);
- the tool calls' actions in words against the behaviour ("edited the CHANGELOG");
- the share of the behaviour's distinctive words that the agent's work holds (habitus.advise.local.Rule:
  "set -euo pipefail" written into the script), and, for a habit that asks to ask the user first, how
  surely the request itself asks for the situation (the user asking to delete a folder has answered
  "ask me first").

Every value is per habit and comes from one review's embeddings; nothing here names a habit. Measured
and trained by scripts/train_advise.py and scripts/cv_advise.py (habit-grouped cross-validation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from habitus.advise.local import Unit
    from habitus.habits.store import ActiveHabit

MAX_PASSAGES = 4  # the agent's last sentences embedded as passages
WHOLE_CHARS = 600  # of the new agent text, embedded as one passage
MAX_PROMPT_CHARS = 1_000  # of the request judged as select judges a prompt
MAX_ACTIONS = 12  # distinct actions in words of the new tool calls
MISSING = float("nan")  # a value that cannot be computed (no unit of that kind): the scorer reads its mean

SITUATION = (
    "prompt_select",
    "adapted_all_z",
    "adapted_agent_z",
    "adapted_user",
    "adapted_agent",
    "adapted_top",
    "adapted_margin",
    "adapted_turn_z",
    "adapted_turn",
    "action_cond",
    "action_cond_z",
    "action_cond_adapted",
    "action_cond_adapted_z",
    "rival_all",
    "rival_agent",
    "has_actions",
)
BEHAVIOUR = (
    "passage_prose",
    "passage_prose_z",
    "passage_whole",
    "passage_whole_z",
    "action_beh",
    "action_beh_z",
    "action_beh_passage",
    "words_share",
    "asks_first_request",
    "has_prose",
)


@dataclass
class Signals:
    """One review's inputs to the features below (built by `gather`)."""

    prompt: np.ndarray  # (habits,) select's probability for the request (0 when not retrieved or vetoed)
    asked: np.ndarray  # (habits,) select would inject the habit for the request (bool)
    adapted: np.ndarray  # (units, dims) the embedded units carried by the prompt adapter
    adapted_turn: np.ndarray | None  # (dims,) the whole new work, likewise
    rivals: np.ndarray  # (2, habits) adapter.rivals over all embedded units, and over the agent's
    actions: np.ndarray  # (k, dims) the new tool calls' actions in words
    actions_adapted: np.ndarray  # (k, dims) the same carried by the prompt adapter
    actions_passage: np.ndarray  # (k, dims) the same as passages
    passages: np.ndarray  # (units, dims) passage vectors of the embedded prose units (zero rows elsewhere)
    whole: np.ndarray | None  # (dims,) the new agent text as one passage
    shares: (
        np.ndarray
    )  # (habits,) share of the behaviour's distinctive words in the agent's work (MISSING: none)
    asks_first: np.ndarray  # (habits,) 1 for a behaviour that asks to ask the user first


def request_of(units: list[Unit]) -> str:
    """The turn's request: the last user message of the slice, sentence by sentence as its units hold
    it (the new one, or the turn's own when the review continues an earlier part of the turn)."""
    users = [u for u in units if u.role == "user"]
    if not users:
        return ""
    last: list[Unit] = []
    for unit in reversed(users):  # the units of the last user entry are the last run of user units
        if last and unit.new != last[0].new:
            break
        last.insert(0, unit)
    return " ".join(u.text for u in last)[:MAX_PROMPT_CHARS]


def action_texts(units: list[Unit]) -> list[str]:
    """The distinct actions in words of the new tool calls (habitus.advise.actions), in order."""
    from habitus.advise import actions
    from habitus.advise.judge import MAX_EMBED_CHARS

    found: dict[str, None] = {}
    for unit in units:
        if unit.new and unit.role == "tool":
            found.update(dict.fromkeys(actions.of(unit.text[:MAX_EMBED_CHARS])))
    return list(found)[:MAX_ACTIONS]


def whole_text(units: list[Unit]) -> str:
    return " ".join(u.text for u in units if u.new and u.role == "assistant" and u.prose)[:WHOLE_CHARS]


def prompt_probabilities(
    embedder: Any,
    habits: list[ActiveHabit],
    matrix: np.ndarray,
    owners: Any,
    behaviors: np.ndarray,
    prompt: str,
) -> tuple[np.ndarray, np.ndarray]:
    """select's local judgement of `prompt` against `habits` (the same analyse, retrieval, gate and
    vetoes; `matrix`/`owners`/`behaviors` as habitus.habits.vectors.retrieval_matrix gives them): each habit's
    probability (0 for one not retrieved or vetoed), and whether it reaches the gate's threshold.
    Nothing when select has no gate for the model."""
    import numpy as np

    from habitus.errors import HabitusError
    from habitus.select import gate
    from habitus.select import judge as select_judge

    out = np.zeros(len(habits), dtype=np.float64)
    selected = np.zeros(len(habits), dtype=bool)
    if not prompt.strip() or not habits:
        return out, selected
    query = select_judge.analyse(prompt)
    found = select_judge.retrieve(embedder, matrix, query, owners, behaviors=behaviors)
    if not found.picked:
        return out, selected
    try:
        model = gate.for_kind(found.kind, found.habits)
    except HabitusError:
        return out, selected
    for j, values, why in select_judge.candidates(habits, query, found):
        if why not in select_judge.VETO:
            index = found.picked[j]
            out[index] = model.probability(values)
            selected[index] = out[index] * 10000 >= model.threshold(values)
    return out, selected


def gather(
    embedder: Any,
    habits: list[ActiveHabit],
    matrix: np.ndarray,
    owners: Any,
    behaviors: np.ndarray,
    units: list[Unit],
    chosen: list[Unit],
    vectors: np.ndarray,
    turn: np.ndarray | None,
) -> Signals:
    """Everything `features` needs beyond the judge's cosines: `units` is the whole slice, `chosen` the
    embedded units and `vectors` their (query) vectors, `turn` the whole new work's vector."""
    import numpy as np

    from habitus.advise.judge import embed_text
    from habitus.advise.local import Rule
    from habitus.select import adapter

    rules = [Rule.of(h) for h in habits]
    fitted = adapter.load(embedder.model_id)
    dims = int(vectors.shape[1]) if vectors.ndim == 2 else int(embedder.dims)
    adapted = adapter.adapt(vectors, fitted) if len(vectors) else np.zeros((0, dims), np.float32)
    conditions = matrix[: len(habits)]
    agent = np.array([u.role != "user" for u in chosen], dtype=bool)
    rivals = np.full((2, len(habits)), MISSING)
    if len(adapted):
        rivals[0] = adapter.rivals(adapted, conditions, fitted)
    if agent.any():
        rivals[1] = adapter.rivals(adapted[agent], conditions, fitted)
    adapted_turn = adapter.adapt(turn[None, :], fitted)[0] if turn is not None else None
    described = action_texts(units)
    prose = [i for i, u in enumerate(chosen) if u.role == "assistant" and u.prose][-MAX_PASSAGES:]
    whole = whole_text(units)
    embedded = embed_passages(embedder, [embed_text(chosen[i]) for i in prose] + ([whole] if whole else []))
    acted, acted_passage = action_vectors(embedder, described, dims)
    passages = np.zeros((len(chosen), dims), dtype=np.float32)
    for row, i in enumerate(prose):
        passages[i] = embedded[row]
    request = request_of(units)
    prompt, asked = prompt_probabilities(embedder, habits, matrix, owners, behaviors, request)
    # Two user messages in a row read as one request ("/the" then "delete the custom theme": select reads
    # the joined text as a command and finds nothing), so the last sentence alone may also answer "ask
    # me first" (the veto); the prompt feature stays the joined request's, as trained.
    last = next((u.text for u in reversed(units) if u.role == "user"), "")
    if last and last != request:
        asked = asked | prompt_probabilities(embedder, habits, matrix, owners, behaviors, last)[1]
    return Signals(
        prompt=prompt,
        asked=asked,
        adapted=adapted,
        adapted_turn=adapted_turn,
        rivals=rivals,
        actions=acted,
        actions_adapted=adapter.adapt(acted, fitted) if len(acted) else acted,
        actions_passage=acted_passage,
        passages=passages,
        whole=embedded[len(prose)] if whole else None,
        shares=np.array([word_share(rule, units) for rule in rules], dtype=np.float64),
        asks_first=np.array([float(rule.asks_first) for rule in rules], dtype=np.float64),
    )


EVIDENT_SHARE = 0.5  # half the behaviour's distinctive words in the agent's work: no absence note


def vetoed(signals: Signals) -> np.ndarray:
    """(habits,) habits the semantic judge may not note whatever its scores: half or more of the
    behaviour's distinctive words are in the agent's work (strangers' slices, out of fold: 56 compliant
    pairs against 5 broken ones), or the behaviour asks to ask the user first and the request itself asks
    for the situation (select would inject the habit for it: the user has answered)."""
    return (signals.shares >= EVIDENT_SHARE) | ((signals.asks_first > 0) & signals.asked)


def word_share(rule: Any, units: list[Unit]) -> float:
    """The share of the behaviour's distinctive words (Rule.positive) some agent unit of the slice holds;
    MISSING when the behaviour has none."""
    from habitus.advise.local import has_word

    if not rule.positive:
        return MISSING
    agent = [u for u in units if u.role != "user"]
    return sum(any(has_word(u, w) for u in agent) for w in rule.positive) / len(rule.positive)


_ACTIONS: dict[tuple[str, bool, str], Any] = {}  # (model id, as a passage, action) -> vector


def action_vectors(embedder: Any, described: list[str], dims: int) -> tuple[np.ndarray, np.ndarray]:
    """The actions' vectors as queries and as passages. The actions are a short fixed list
    (habitus.advise.actions), so their vectors are remembered for the process (a warm worker embeds
    each once)."""
    import numpy as np

    if not described:
        empty = np.zeros((0, dims), np.float32)
        return empty, empty
    for passage in (False, True):
        todo = [d for d in described if (embedder.model_id, passage, d) not in _ACTIONS]
        if todo:
            found = embed_passages(embedder, todo) if passage else embedder.embed(todo)
            _ACTIONS.update({(embedder.model_id, passage, d): v for d, v in zip(todo, found, strict=True)})
    return tuple(  # type: ignore[return-value]
        np.stack([_ACTIONS[(embedder.model_id, passage, d)] for d in described]) for passage in (False, True)
    )


def embed_passages(embedder: Any, texts: list[str]) -> np.ndarray:
    """Texts as E5 passages ("passage: "), or as they are for a model without that distinction."""
    import numpy as np

    if not texts:
        return np.zeros((0, int(embedder.dims)), dtype=np.float32)
    method = getattr(embedder, "embed_passages", None)
    return method(texts) if method is not None else embedder.embed(texts)


def features(
    signals: Signals, units: list[Unit], conditions: np.ndarray, behaviors: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(habits x SITUATION, habits x BEHAVIOUR) for the embedded `units` (those `signals` was gathered
    for)."""
    import numpy as np

    n = len(conditions)
    situation = np.zeros((n, len(SITUATION)), dtype=np.float64)
    behaviour = np.full((n, len(BEHAVIOUR)), MISSING, dtype=np.float64)
    situation[:, 0] = signals.prompt
    roles = np.array([u.role for u in units])
    agent = roles != "user"
    if len(units):
        cosines = signals.adapted @ conditions.T  # units x habits
        standing = _z_rows(cosines)
        everyone = np.ones(len(units), dtype=bool)
        best = _best(standing, everyone)
        situation[:, 1] = best
        situation[:, 2] = _best(standing, agent)
        situation[:, 3] = _best(cosines, roles == "user")
        situation[:, 4] = _best(cosines, agent)
        situation[:, 5] = (best >= best.max()).astype(np.float64)
        ordered = np.sort(best)
        runner_up = ordered[-2] if n > 1 else ordered[-1]
        situation[:, 6] = best - np.where(best >= ordered[-1], runner_up, ordered[-1])
    if signals.adapted_turn is not None:
        turn = conditions @ signals.adapted_turn
        situation[:, 7] = _z(turn)
        situation[:, 8] = turn
    if len(signals.actions):
        plain = signals.actions @ conditions.T
        carried = signals.actions_adapted @ conditions.T
        situation[:, 9] = plain.max(axis=0)
        situation[:, 10] = _z_rows(plain).max(axis=0)
        situation[:, 11] = carried.max(axis=0)
        situation[:, 12] = _z_rows(carried).max(axis=0)
        done = signals.actions @ behaviors.T
        behaviour[:, 4] = done.max(axis=0)
        behaviour[:, 5] = _z_rows(done).max(axis=0)
        behaviour[:, 6] = (signals.actions_passage @ behaviors.T).max(axis=0)
    else:
        situation[:, 9:13] = MISSING
    situation[:, 13:15] = signals.rivals.T
    situation[:, 15] = float(len(signals.actions) > 0)
    prose = np.array([u.role == "assistant" and u.prose for u in units], dtype=bool)
    if len(units) and prose.any():
        said = signals.passages @ behaviors.T
        behaviour[:, 0] = _best(said, prose)
        behaviour[:, 1] = _best(_z_rows(said), prose)
    if signals.whole is not None:
        whole = behaviors @ signals.whole
        behaviour[:, 2] = whole
        behaviour[:, 3] = _z(whole)
    behaviour[:, 7] = signals.shares
    behaviour[:, 8] = signals.asks_first * signals.prompt
    behaviour[:, 9] = float(bool(len(units)) and bool(prose.any()))
    return situation, behaviour


def _best(matrix: np.ndarray, mask: np.ndarray) -> np.ndarray:
    import numpy as np

    if not mask.any():
        return np.full(matrix.shape[1], MISSING)
    return np.where(mask[:, None], matrix, -np.inf).max(axis=0)


def _z_rows(matrix: np.ndarray) -> np.ndarray:
    from habitus.advise.judge import _z_rows

    return _z_rows(matrix)


def _z(values: np.ndarray) -> np.ndarray:
    from habitus.advise.judge import _z

    return _z(values)
