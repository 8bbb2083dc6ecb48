"""One review: policy, slice, reviewers, validation, dedupe, and the one note it may deliver.

    outcome = run(root, source, wait=wait, route=route)

`source` says what to review (a transcript from its session's cursor, or turns given directly) and
`route(candidate)` picks the delivery channel of an accepted note: "result", "block", "context", or None
to keep it pending for the session's next prompt. A "block" becomes pending when `advise.block` is off or
the session's previous review blocked for the same finding (never twice in a row). Everything durable happens in one
transaction at the end, after a compare-and-swap on the cursor: when another review of the same
session finished meanwhile, this one records nothing (`reason: "concurrent"`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from habitus.advise import notes, store
from habitus.errors import HabitusError
from habitus.state.clock import utc_now
from habitus.state.faults import fault

if TYPE_CHECKING:
    from habitus.advise.local import Candidate
    from habitus.harness.transcripts import Turn
    from habitus.state.root import StateRoot

# Reviewer failures that count towards the pause (anything else refuses the whole command).
LOCAL_FAILURES = ("model_unavailable", "vectors_stale")


@dataclass
class Source:
    session: str  # dedupe, turn clock and pending notes
    scope: str | None = None  # the cursor (default: the session)
    path: Path | None = None  # a transcript read from the cursor
    fmt: str | None = None
    turns: list[Turn] | None = None  # or the new work itself
    extra_assistant: str | None = None  # the hook's last assistant message, if the file lags behind it
    cwd: str | None = None


@dataclass
class Outcome:
    reviewed: bool
    reason: str | None = None
    note: dict[str, Any] | None = None
    channel: str | None = None
    candidates: list[dict[str, Any]] = field(default_factory=list)
    reviewers: dict[str, Any] = field(default_factory=dict)
    slice: dict[str, Any] | None = None
    warnings: list[dict[str, Any]] = field(default_factory=list)
    health: dict[str, Any] = field(default_factory=dict)
    paused_now: bool = False
    warn_pause: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "reviewed": self.reviewed,
            "reason": self.reason,
            "note": self.note,
            "candidates": self.candidates,
            "reviewers": self.reviewers,
            "slice": self.slice,
            "warnings": self.warnings,
            "health": self.health,
        }


def public_health(row: dict[str, Any]) -> dict[str, Any]:
    paused = None
    if row.get("paused_at"):
        paused = {"since": row["paused_at"], "reason": row["pause_reason"]}
    return {"paused": paused, "consecutive_failures": row.get("consecutive_failures", 0)}


def pause_warning(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "code": "advise_paused",
        "since": row["paused_at"],
        "reason": row["pause_reason"],
        "hint": "three reviews in a row failed; see `habitus status`, fix the reviewer, then run "
        "`habitus advise resume`",
    }


def pause_message(row: dict[str, Any]) -> str:
    return (
        f"habitus advise is paused: three reviews in a row failed (last: {row['pause_reason']}). "
        "No review runs until you fix it and run `habitus advise resume`; `habitus status` shows details."
    )


def _blocks(s: Any, law: Any, route: Callable[[Candidate], str | None]) -> bool:
    """Whether the law's findings in the new work hold one the hook would block on (word rules only:
    no model is loaded)."""
    from habitus.advise import local

    return any(route(c) == "block" for c in local.review(s, [], law))


def _elapsed_s(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        parsed = time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return None
    import calendar

    return time.time() - calendar.timegm(parsed)


def run(
    root: StateRoot,
    source: Source,
    *,
    wait: float,
    route: Callable[[Candidate], str | None],
    defer: Callable[[Callable[[], Outcome]], None] | None = None,
) -> Outcome:
    """Review the session's new work. With `defer` (a hook answered by the warm worker), a review whose
    reply cannot block (no model reviewer, no blocker of the law routed to "block" in the new work) is
    handed to `defer` whole, to run after the answer is out: its note waits for the next prompt in
    either case, and the judge's embeddings are most of a turn's end (outcome reason "deferred")."""
    from habitus.advise import commits, local, mutes, policy, protect, slice
    from habitus.habits.store import Ledger
    from habitus.state import config

    settings = config.load(root)
    rules = policy.load(settings, source.cwd)
    outcome = Outcome(False, warnings=list(rules.warnings))
    if not rules.enabled:
        outcome.reason = rules.off_reason
        return outcome
    muted = mutes.load(root).ids  # fails closed: a broken mutes file stops the review here
    scope = source.scope or source.session
    with Ledger.open(root, wait=wait) as ledger:
        conn = ledger.conn
        row = store.health(conn)
        outcome.health = public_health(row)
        if row.get("paused_at"):
            outcome.reason = "paused"
            outcome.warnings.append(pause_warning(row))
            outcome.warn_pause = not row["pause_warned"]
            return outcome
        cursor = store.cursor(conn, scope)
        since = _elapsed_s(cursor.last_review_at)
        if rules.min_interval_s and since is not None and since < rules.min_interval_s:
            outcome.reason = "interval"
            return outcome

        # -- the new work ------------------------------------------------------------------------------
        if source.path is not None:
            window = slice.read_window(source.path, source.fmt, cursor)
            context_turns, new_turns, following = window.context, window.new, window.cursor
            skipped = window.skipped_bytes
        else:
            context_turns, new_turns, following, skipped = [], list(source.turns or []), cursor, 0
        if source.extra_assistant and source.extra_assistant.strip():
            from habitus.harness.transcripts import Turn

            seen = "\n".join(t.assistant for t in new_turns)
            if source.extra_assistant.strip() not in seen:
                new_turns.append(Turn(user="", assistant=source.extra_assistant, continued=True))
        protection = protect.ProtectedPaths.build(
            source.cwd,
            repo=rules.repo,
            user_paths=rules.protected_paths,
            project_paths=rules.project_paths,
            exceptions=rules.protected_exceptions,
        )
        s = slice.build(context_turns, new_turns, rules.max_slice_chars, protection)
        s.skipped_bytes = skipped
        outcome.slice = s.summary()
        if not s.has_new:
            outcome.reason = "no_new_work"
            if source.path is not None and (following.offset, following.source) != (
                cursor.offset,
                cursor.source,
            ):
                with ledger.tx():
                    if store.same_cursor(cursor, store.cursor(conn, scope)):
                        store.save_cursor(conn, following)
            return outcome
        s.branch = commits.head_branch(source.cwd)  # only a review of new work reads it

        # -- reviewers (outside any write transaction: they may take a while) -------------------------------
        candidates: list[Candidate] = []
        failures: list[str] = []
        try:
            from habitus.habits import active_habits, load_law
            from habitus.habits.scope import repo_of

            law = load_law(root)
            if defer is not None and not rules.model and not _blocks(s, law, route):
                defer(lambda: run(root, source, wait=wait, route=route))
                outcome.reason = "deferred"
                return outcome
            habits = active_habits(conn, law, repo=repo_of(source.cwd))
            candidates.extend(local.review(s, habits, law, embed=local.Embedding(root, ledger)))
            outcome.reviewers["local"] = {"status": "ok", "habits": len(habits)}
        except HabitusError as exc:
            if exc.code not in LOCAL_FAILURES:
                raise
            failures.append(f"local:{exc.code}")
            outcome.reviewers["local"] = {"status": "failed", "reason": exc.code}
        if rules.model:
            from habitus.advise import model
            from habitus.models import ModelError

            try:
                found = model.review(settings, rules, s.render())
                outcome.reviewers["model"] = {"status": "ok", "silent": found is None}
                if found is not None:
                    candidates.append(found)
            except ModelError as exc:
                failures.append(f"model:{exc.reason}")
                outcome.reviewers["model"] = {"status": "failed", "reason": exc.reason}
        else:
            outcome.reviewers["model"] = {"status": "off"}
        candidates.sort(key=lambda c: (-notes.RANK.get(c.severity, 0), c.reviewer != "local", -c.rank))

        # -- validate, dedupe, deliver at most one --------------------------------------------------------
        checked = [_check(c, rules, protection) for c in candidates]
        with ledger.tx():
            fresh = store.cursor(conn, scope)
            if not store.same_cursor(cursor, fresh):
                outcome.reason = "concurrent"
                return outcome
            clock = store.cursor(conn, source.session) if scope != source.session else fresh
            turn = clock.turns + max(1, s.new_turns)
            counts = {"delivered": 0, "suppressed": 0, "muted": 0, "dropped": 0, "held": 0}
            chosen: dict[str, Any] | None = None
            block_mark: str | None = None
            for candidate, problem in checked:
                item: dict[str, Any] = {"reviewer": candidate.reviewer, "severity": candidate.severity}
                outcome.candidates.append(item)
                if problem:
                    item["decision"] = "dropped"
                    item["why"] = problem
                    counts["dropped"] += 1
                    continue
                finding = notes.finding_hash(candidate.key)
                item["id"] = finding[: mutes.SHOW_PREFIX]
                if chosen is not None:
                    item["decision"] = "held"
                    counts["held"] += 1
                    continue
                signature = notes.signature(candidate.note)
                decision = notes.decide(
                    severity=candidate.severity,
                    note_signature=signature,
                    previous=store.delivered(conn, source.session, finding),
                    muted=finding in muted,
                    turn=turn,
                    reraise_min_turns=rules.reraise_min_turns,
                    threshold_bp=rules.similarity_threshold_bp,
                )
                action = decision.action
                item["decision"] = "delivered" if action == "deliver" else action
                if decision.similarity_bp is not None:
                    item["similarity_bp"] = decision.similarity_bp
                store.record_finding(
                    conn,
                    scope=source.session,
                    finding=finding,
                    label=notes.label_of(candidate.key),
                    reviewer=candidate.reviewer,
                    severity=candidate.severity,
                    signature=signature,
                    turn=turn,
                    action=action,
                )
                if action != "deliver":
                    counts[action] += 1
                    if action == "muted":
                        store.add_muted(
                            conn,
                            scope=source.session,
                            finding=finding,
                            severity=candidate.severity,
                            reviewer=candidate.reviewer,
                        )
                    continue
                counts["delivered"] += 1
                channel = route(candidate)
                if channel == "block" and (not rules.block or clock.last_block == finding):
                    channel = None  # never block twice in a row for one finding: wait for the next prompt
                if channel == "block":
                    block_mark = finding
                store.add_note(
                    conn,
                    scope=source.session,
                    finding=finding,
                    severity=candidate.severity,
                    tag=decision.tag,
                    reviewer=candidate.reviewer,
                    note=candidate.note,
                    channel=channel,
                )
                chosen = {
                    "id": finding[: mutes.SHOW_PREFIX],
                    "finding": finding,
                    "note": candidate.note,
                    "severity": candidate.severity,
                    "findingKey": notes.label_of(candidate.key),
                    "tag": decision.tag,
                    "reviewer": candidate.reviewer,
                    "delivery": channel or "pending",
                }
                if candidate.habit:
                    chosen["habit"] = candidate.habit
                outcome.channel = channel
            outcome.note = chosen
            following.reviews = fresh.reviews + 1
            following.last_review_at = utc_now()
            if scope == source.session:
                following.turns = turn
                following.last_block = block_mark
                store.save_cursor(conn, following)
            else:
                following.turns = fresh.turns
                following.last_block = block_mark
                store.save_cursor(conn, following)
                clock.turns = turn
                clock.last_block = block_mark
                store.save_cursor(conn, clock)
            store.bump(conn, **counts)
            failed = ", ".join(failures) or None
            outcome.paused_now = store.record_outcome(conn, failed=failed)
            row = store.health(conn)
            outcome.health = public_health(row)
            if outcome.paused_now:
                outcome.warnings.append(pause_warning(row))
                outcome.warn_pause = True

            fault("advise_commit")  # tests only: a process killed here must leave no trace of the review
        outcome.reviewed = True
        return outcome


def _check(candidate: Candidate, policy: Any, protection: Any) -> tuple[Candidate, str | None]:
    """The candidate fitted to the note limit, and why it must be dropped (None to keep it)."""
    from habitus.redact import looks_sensitive, redact

    if candidate.severity not in notes.RANK:
        return candidate, "bad_severity"
    if notes.content_free(candidate.note):
        return candidate, "content_free"
    key = " ".join(candidate.key.split())
    if not key or len(key) > notes.MAX_KEY_CHARS:
        return candidate, "bad_finding_key"
    if protection.touches(candidate.note) or protection.touches(key):
        return candidate, "protected_path"
    note, _ = redact(notes.fit(candidate.note, policy.max_note_chars))
    label, _ = redact(key)
    if looks_sensitive(note) or looks_sensitive(label):
        return candidate, "sensitive"
    candidate.note, candidate.key = note, label
    return candidate, None


def take_pending(
    root: StateRoot, session: str, *, wait: float, cwd: str | None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The notes waiting for this session's next prompt (marked delivered), and the health row. Muted
    findings are dropped here too: a mute issued after a review still stops its pending note. Nothing
    is created: without an up-to-date ledger there is nothing to deliver."""
    from habitus.advise import mutes, policy
    from habitus.state import config

    rules = policy.load(config.load(root), cwd)
    if not rules.enabled:
        return [], {}
    with store.reading(root, wait=wait) as conn:
        if conn is None:
            return [], {}
        pending = conn.execute(
            "SELECT COUNT(*) FROM advise_notes WHERE scope = ? AND status = 'pending'", (session,)
        ).fetchone()[0]
        row = store.health(conn)
    if not pending:
        return [], row
    muted = mutes.load(root).ids
    with store.writing(root, wait=wait) as conn:
        taken = store.take_pending(conn, session, muted=muted, max_age_hours=rules.pending_hours)
        return taken, store.health(conn)


def mark_pause_warned(root: StateRoot, *, wait: float) -> dict[str, Any]:
    """Remember that the pause warning was shown; returns the health row."""
    with store.writing(root, wait=wait) as conn:
        conn.execute("UPDATE advise_health SET pause_warned = 1 WHERE id = 1")
        return store.health(conn)
