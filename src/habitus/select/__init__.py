"""select: choose the few approved habits that apply to the current prompt, and word the guidance.

    from habitus.select import select, guidance
    chosen = select(root, prompt, context, wait=5.0, mode="cli")   # -> Selection
    text = guidance(chosen.habits)                                 # what a hook injects

The path (DESIGN.md section 6), every step failing closed:

1. `select.enabled` off, or `select.max_habits` 0: nothing, without opening the ledger.
2. `Ledger.open_read`: no ledger means no habits; a newer, outdated or corrupt ledger refuses (exit 3),
   a busy one answers 75. Nothing is ever created or migrated here.
3. `active_habits`: approved, active, law-valid habits that apply here (personal ones, and project
   ones of the repository around the request's cwd), at most 100 by confidence then id, rows
   verified. None: answer now, before numpy or onnxruntime is imported.
4. Load the embedding model and the cached condition and behaviour vectors (`vectors_stale`, exit 3, when any is
   missing or from another model); retrieve (judge.retrieve); judge (local, or `model:NAME`).
5. Re-read the selected habits (`still_current`): anything disabled, reworded or out of law since
   step 3 means no guidance at all.
6. Append one metadata row to the selection log (select.log), best effort.

Importing this package loads only the standard library and light habitus modules.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from habitus.errors import HabitusError, bad_request

if TYPE_CHECKING:
    from habitus.habits.store import ActiveHabit
    from habitus.state.root import StateRoot

MAX_PROMPT_CHARS = 100_000  # a longer `prompt` request is refused (bad_request); hooks pass any prompt
MAX_CONTEXT = 4  # prior messages used to resolve a follow-up
MAX_CONTEXT_CHARS = 300  # of each


@dataclass
class Selection:
    """What select decided. `reason` is a static code: selected, disabled, no_ledger, no_habits,
    nothing_retrieved, not_applicable, state_changed, empty_prompt."""

    habits: list[ActiveHabit]
    reason: str
    judge: str = "local"
    candidates: int = 0
    retrieved: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    model_id: str | None = None
    latency_ms: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "habits": [
                {"id": h.id, "condition": h.condition, "behavior": h.behavior, "polarity": h.polarity}
                for h in self.habits
            ],
            "guidance": guidance(self.habits),
            "reason": self.reason,
            "judge": self.judge,
            "candidates": self.candidates,
            "retrieved": self.retrieved,
            "reasons": self.reasons,
            "model_id": self.model_id,
        }


def check_request(request: dict[str, Any]) -> tuple[str, list[str]]:
    """(prompt, context) from a `{"prompt": ..., "context": [...]}` request."""
    prompt = request.get("prompt")
    if not isinstance(prompt, str):
        raise bad_request("prompt", "expected a string")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise bad_request("prompt", f"expected at most {MAX_PROMPT_CHARS} characters")
    context = request.get("context", [])
    if context is None:
        context = []
    if not isinstance(context, list) or not all(isinstance(m, str) for m in context):
        raise bad_request("context", "expected a list of strings (prior messages, oldest first)")
    return prompt, context


def clip_context(messages: list[str]) -> list[str]:
    """The last MAX_CONTEXT non-empty messages, each cut to MAX_CONTEXT_CHARS: a longer one keeps its
    start and its end (where an agent's offer, "Want me to commit this?", usually is)."""
    kept = [_clip(m.strip()) for m in messages if m and m.strip()]
    return kept[-MAX_CONTEXT:]


def _clip(message: str) -> str:
    if len(message) <= MAX_CONTEXT_CHARS:
        return message
    head = MAX_CONTEXT_CHARS // 3
    return message[:head] + " … " + message[-(MAX_CONTEXT_CHARS - head - 3) :]


def guidance(habits: list[ActiveHabit]) -> str:
    """The text a hook injects: plainly the user's approved habits, overridden by direct instructions,
    naming each selected condition. Empty when nothing was selected."""
    if not habits:
        return ""
    lines = [
        "habitus: the user approved these habits, and their conditions match this request. "
        "Follow them unless the user's direct instructions say otherwise: direct instructions "
        "always override a habit.",
    ]
    for habit in habits:
        lines.append(f"- {habit.condition} -> {habit.behavior}")
    names = "; ".join(f'"{h.condition}"' for h in habits)
    lines.append(f"Selected because this request matches: {names}.")
    return "\n".join(lines)


def select(
    root: StateRoot,
    prompt: str,
    context: list[str] | None = None,
    *,
    wait: float,
    mode: str = "cli",
    cwd: str | None = None,
) -> Selection:
    """Run the select path for one prompt (see the module docstring). `cwd` is the request's working
    directory (a hook event's `cwd`; the process's when None): project habits apply only inside
    their repositories. Raises HabitusError when state is missing, stale, corrupt, newer or locked,
    or when a model judge fails: no guidance then."""
    from habitus.state import config

    started = time.perf_counter()
    settings = config.load(root)
    judge_setting = str(settings.get("select.judge"))
    limit = int(settings.get("select.max_habits"))
    if not settings.get("select.enabled") or limit <= 0:
        return Selection([], "disabled", judge_setting)
    if not prompt.strip():
        return Selection([], "empty_prompt", judge_setting)

    from habitus.habits.store import Ledger

    ledger = Ledger.open_read(root, wait=wait)
    if ledger is None:
        return Selection([], "no_ledger", judge_setting)
    outcome = Selection([], "no_habits", judge_setting)
    try:
        try:
            _run(ledger, settings, prompt, clip_context(context or []), outcome, limit=limit, cwd=cwd)
        except HabitusError as error:
            outcome.latency_ms = _ms(started)
            _log(root, outcome, mode, failed=error.code)
            raise
        outcome.latency_ms = _ms(started)
        _log(root, outcome, mode)
        return outcome
    finally:
        ledger.close()


def _run(
    ledger: Any,
    config: Any,
    prompt: str,
    context: list[str],
    out: Selection,
    *,
    limit: int,
    cwd: str | None,
) -> None:
    from habitus.habits.law import load_law
    from habitus.habits.scope import repo_of
    from habitus.habits.store import active_habits, still_current

    law = load_law(ledger.root)
    habits = active_habits(ledger.conn, law, repo=repo_of(cwd))
    out.candidates = len(habits)
    if not habits:
        return  # answered without loading numpy or the model

    from habitus.habits.vectors import retrieval_matrix
    from habitus.models.embedders import load_embedder
    from habitus.select import judge

    model_name = judge.judge_name(out.judge)
    embedder = load_embedder(ledger.root)
    out.model_id = embedder.model_id
    matrix, owners, behaviors = retrieval_matrix(ledger.conn, habits, embedder.model_id, embedder.dims)
    query = judge.analyse(prompt, context)
    found = judge.retrieve(embedder, matrix, query, owners, behaviors=behaviors)
    out.retrieved = len(found.picked)
    if not found.picked:
        out.reason = "nothing_retrieved"
        return
    if model_name is None:
        verdict = judge.local_judge(embedder, habits, query, found, limit=limit)
    else:
        verdict = judge.model_judge(config, model_name, habits, query, found, limit=limit)
    out.reasons = verdict.counts()
    picked = [habits[i] for i in verdict.selected[:limit]]
    if not picked:
        out.reason = "not_applicable"
        return
    if not still_current(ledger.conn, law, picked):
        out.reason = "state_changed"
        return
    out.habits = picked
    out.reason = "selected"


def _ms(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)


def _log(root: StateRoot, out: Selection, mode: str, *, failed: str | None = None) -> None:
    from habitus.select import log

    log.append(
        root,
        mode=mode,
        judge=out.judge,
        model_id=out.model_id,
        outcome="failed" if failed else ("selected" if out.habits else "none"),
        reason=failed or out.reason,
        candidates=out.candidates,
        retrieved=out.retrieved,
        selected=len(out.habits),
        reasons=out.reasons,
        latency_ms=out.latency_ms,
    )
