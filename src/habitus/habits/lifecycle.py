"""The review lifecycle: declare, approve, reject, disable, enable, archive, recheck, and proposals.

    candidate --approve--> active --disable--> disabled --enable--> active
        |                    |  \\--(analyze: contradicted)--> dormant --enable--> active
        +--reject--> archived <--archive-- (any)
    (any but archived) --recheck finds a law violation--> suppressed_by_law --recheck clean--> before

Activation (declare, approve, enable, supersede) always runs the same gate inside one
`BEGIN IMMEDIATE` transaction: the wording must still be what was reviewed, the law in force must
pass, no pending relation may stand, and the habit is compared with every approved habit through
cached vectors (prepared outside the transaction). A new possible duplicate or conflict is recorded
as a pending relation and the activation is refused, so two processes activating duplicates at
once cannot both succeed: the second sees the first's vectors in its own transaction.

Every change appends an audit row (actor user/analyze/system, row checksums before and after).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from habitus import codec
from habitus.errors import HabitusError, bad_request
from habitus.habits import examples, rows, scope, similar, vectors
from habitus.habits.law import Law, check_law, load_law
from habitus.habits.store import (
    APPROVED,
    Ledger,
    evidence,
    evidence_stats,
    get_habit,
    habits,
    is_approved,
    law_valid,
    relations,
    stage,
)
from habitus.habits.wording import (
    MAX_NOTE_CHARS,
    check_bp,
    check_polarity,
    clean_field,
    wording_checksum,
)
from habitus.state.clock import utc_now

if TYPE_CHECKING:
    from habitus.embed.engine import Embedder

_HEX = re.compile(r"^[0-9a-f]{12,64}$")
MAX_EVIDENCE = 100
DECLARED_CONFIDENCE = 10_000


def public(habit: dict[str, Any], law: Law | None = None) -> dict[str, Any]:
    """A habit as commands show it. `checksum` is the review checksum that approval must quote."""
    out = {
        "id": habit["id"],
        "status": habit["status"],
        "origin": habit["origin"],
        "condition": habit["condition"],
        "behavior": habit["behavior"],
        "polarity": habit["polarity"],
        "confidence_bp": habit["confidence_bp"],
        "checksum": habit["wording"],
        "approved": is_approved(habit),
        "law_findings": codec.loads(habit["law_findings"]),
        "reason": habit["reason"],
        "created_at": habit["created_at"],
        "updated_at": habit["updated_at"],
        **scope.public(habit),
    }
    if law is not None:
        out["law"] = (
            "ok" if law_valid(habit, law) else ("stale" if habit["law"] != law.fingerprint else "blocked")
        )
    return out


def check_review(habit: dict[str, Any], checksum: str | None) -> None:
    """The review checksum the caller saw must be this habit's current one (full or >= 12 hex)."""
    if checksum is None:
        return
    if not isinstance(checksum, str) or not _HEX.match(checksum):
        raise bad_request(
            "checksum", "expected the hex checksum shown by `habit list`/`habit show` (>= 12 chars)"
        )
    if not habit["wording"].startswith(checksum):
        raise HabitusError(
            "stale",
            f"habit {habit['id']} changed since it was reviewed",
            hint="show it again and review the current wording",
            id=habit["id"],
        )


# -- the activation gate ------------------------------------------------------------------------


@dataclass
class Gate:
    findings: list[dict[str, Any]] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)  # relation ids already standing
    opened: list[str] = field(default_factory=list)  # relation ids created or reopened now

    @property
    def clear(self) -> bool:
        return not (self.findings or self.pending or self.opened)


def _prepare(ledger: Ledger, embedder: Embedder, targets: list[dict[str, Any]]) -> None:
    """Outside any transaction: make sure the targets and all approved habits have current vectors."""
    approved = habits(ledger.conn, APPROVED)
    known = {h["id"] for h in approved}
    vectors.ensure(ledger, embedder, approved + [t for t in targets if t["id"] not in known])


def _gate(
    ledger: Ledger,
    habit: dict[str, Any],
    law: Law,
    embedder: Embedder,
    *,
    actor: str,
    exclude: tuple[str, ...] = (),
) -> Gate:
    """Inside the writing transaction: may `habit` become active now? Records new relations."""
    conn = ledger.conn
    gate = Gate(findings=check_law(habit["condition"], habit["behavior"], law))
    if gate.findings:
        return gate
    for waiting in relations(conn, habit["id"], pending=True):
        other = waiting["habit_b"] if waiting["habit_a"] == habit["id"] else waiting["habit_a"]
        if other not in exclude:
            gate.pending.append(waiting["id"])
    others = [h for h in habits(conn, APPROVED) if h["id"] != habit["id"] and h["id"] not in exclude]
    cached = vectors.load(conn, [habit, *others], embedder.model_id, embedder.dims)
    missing = [h["id"] for h in [habit, *others] if h["id"] not in cached]
    if missing:
        raise HabitusError(
            "vectors_stale",
            f"{len(missing)} habit(s) have no current vectors for model {embedder.model_id}",
            hint="retry; `habitus habit recheck` rebuilds vectors",
        )
    review_bp, strong_bp = similar.thresholds(ledger.root, embedder.kind)
    for other in others:
        scores = similar.score(cached[habit["id"]], cached[other["id"]])
        if scores[0] < review_bp:
            continue
        relation, opened = similar.record(
            conn, habit, other, scores, model_id=embedder.model_id, strong_bp=strong_bp, actor=actor
        )
        if relation is not None and opened:
            gate.opened.append(relation["id"])
        elif relation is not None and relation["id"] not in gate.pending:
            gate.pending.append(relation["id"])
    return gate


def _activate(ledger: Ledger, habit: dict[str, Any], law: Law, *, actor: str, action: str) -> dict[str, Any]:
    return rows.change(
        ledger.conn,
        "habits",
        habit,
        action,
        actor,
        status="active",
        approved_wording=habit["wording"],
        approved_at=habit["approved_at"] if is_approved(habit) else utc_now(),
        law=law.fingerprint,
        law_findings="[]",
        reason=None,
    )


def check_law_current(habit: dict[str, Any], law: Law) -> None:
    """Activation waits for `recheck` after the law changed: the human re-reviews under the new law."""
    if habit["law"] != law.fingerprint:
        raise HabitusError(
            "stale",
            f"the law changed since habit {habit['id']} was checked",
            hint="run `habitus habit recheck`, then try again",
            reason="law_changed",
        )


def _refuse(gate: Gate, habit_id: str) -> HabitusError:
    if gate.findings:
        rules = sorted({f["rule"] for f in gate.findings})
        return HabitusError(
            "refused",
            f"habit {habit_id} conflicts with the law ({', '.join(rules)})",
            hint="reword it, or change law.md and run `habitus habit recheck`",
            reason="law",
            findings=gate.findings,
        )
    return HabitusError(
        "refused",
        f"habit {habit_id} has unresolved possible duplicates or conflicts",
        hint="`habitus dedupe list`, then `habitus dedupe resolve`",
        reason="relation",
        relations=sorted(set(gate.pending + gate.opened)),
    )


def _activation(
    ledger: Ledger,
    habit_id: str,
    checksum: str | None,
    embedder: Embedder,
    *,
    allowed: tuple[str, ...],
    action: str,
    actor: str,
    evidence_gate: bool,
) -> dict[str, Any]:
    """Approve or enable: prepare vectors, then gate and activate in one transaction."""
    habit = get_habit(ledger.conn, habit_id)
    check_review(habit, checksum)
    if habit["status"] == "active" and is_approved(habit):
        return {"habit": public(habit), "outcome": "unchanged"}
    _check_status(habit, allowed, action)
    if action == "enable" and not is_approved(habit):
        raise HabitusError(
            "refused", f"habit {habit_id} was reworded since approval", hint="approve it again"
        )
    if evidence_gate and habit["origin"] == "analyzed":
        observations, days = evidence_stats(ledger.conn, habit_id).get(habit_id, (0, 0))
        if stage(observations, days) != "reviewable":
            raise HabitusError(
                "refused",
                f"habit {habit_id} is still collecting evidence ({observations} observations over {days} days; "
                "needs 3 over 2)",
                hint="wait for more evidence, or `habitus habit declare` its wording to adopt it now",
                reason="evidence",
            )
    _prepare(ledger, embedder, [habit])
    refusal: HabitusError | None = None
    with ledger.tx():
        habit = get_habit(ledger.conn, habit_id)
        check_review(habit, checksum)
        _check_status(habit, allowed, action)
        law = load_law(ledger.root)
        check_law_current(habit, law)
        gate = _gate(ledger, habit, law, embedder, actor=actor)
        if gate.opened:
            refusal = _refuse(gate, habit_id)  # commit the new relations, then refuse
        elif not gate.clear:
            raise _refuse(gate, habit_id)
        else:
            habit = _activate(ledger, habit, law, actor=actor, action=action)
    if refusal is not None:
        raise refusal
    return {"habit": public(habit, law), "outcome": "activated"}


def _check_status(habit: dict[str, Any], allowed: tuple[str, ...], action: str) -> None:
    if habit["status"] not in allowed:
        hints = {
            "disabled": "use `habitus habit enable`",
            "dormant": "use `habitus habit enable`",
            "suppressed_by_law": "it conflicts with the law; change law.md and run `habitus habit recheck`",
            "archived": "archived habits stay archived; declare the wording again to start over",
            "candidate": "approve it first",
            "active": "it is already active",
        }
        raise HabitusError(
            "refused",
            f"cannot {action} habit {habit['id']}: it is {habit['status']}",
            hint=hints.get(habit["status"]),
            reason="status",
            status=habit["status"],
        )


def approve(
    ledger: Ledger, habit_id: str, checksum: str, *, embedder: Embedder, actor: str = "user"
) -> dict[str, Any]:
    """Activate a candidate whose wording still has the review checksum the human saw."""
    if checksum is None:
        raise bad_request("checksum", "required: the checksum shown by `habit list` or `habit show`")
    return _activation(
        ledger,
        habit_id,
        checksum,
        embedder,
        allowed=("candidate",),
        action="approve",
        actor=actor,
        evidence_gate=True,
    )


def enable(
    ledger: Ledger, habit_id: str, checksum: str | None = None, *, embedder: Embedder, actor: str = "user"
) -> dict[str, Any]:
    """Re-activate a disabled or dormant habit (same gate as approval)."""
    return _activation(
        ledger,
        habit_id,
        checksum,
        embedder,
        allowed=("disabled", "dormant"),
        action="enable",
        actor=actor,
        evidence_gate=False,
    )


# action -> (statuses it applies to, new status, outcome, reason recorded)
TRANSITIONS: dict[str, tuple[tuple[str, ...], str, str, str | None]] = {
    "reject": (("candidate", "suppressed_by_law"), "archived", "rejected", "rejected"),
    "disable": (("active", "dormant"), "disabled", "disabled", None),
    "archive": (
        ("candidate", "active", "disabled", "dormant", "suppressed_by_law"),
        "archived",
        "archived",
        "archived",
    ),
    "dormant": (("active",), "dormant", "dormant", "contradicted"),
}


def transition(
    ledger: Ledger,
    action: str,
    habit_id: str,
    checksum: str | None = None,
    *,
    actor: str = "user",
    note: dict[str, Any] | None = None,
    in_transaction: bool = False,
) -> dict[str, Any]:
    """A change of status that activates nothing (see TRANSITIONS); archiving also dismisses the
    habit's pending relations. With `in_transaction` the caller holds the writing transaction."""
    if in_transaction:
        return _transition(ledger, action, habit_id, checksum, actor, note)
    with ledger.tx():
        return _transition(ledger, action, habit_id, checksum, actor, note)


def _transition(
    ledger: Ledger,
    action: str,
    habit_id: str,
    checksum: str | None,
    actor: str,
    note: dict[str, Any] | None,
) -> dict[str, Any]:
    allowed, to, outcome, reason = TRANSITIONS[action]
    habit = get_habit(ledger.conn, habit_id)
    check_review(habit, checksum)
    if habit["status"] == to:
        return {"habit": public(habit), "outcome": "unchanged"}
    _check_status(habit, allowed, action)
    updated = rows.change(ledger.conn, "habits", habit, action, actor, note=note, status=to, reason=reason)
    dismissed = (
        similar.dismiss_pending(ledger.conn, habit_id, actor=actor, why=action) if to == "archived" else []
    )
    result: dict[str, Any] = {"habit": public(updated), "outcome": outcome}
    if dismissed:
        result["dismissed_relations"] = dismissed
    return result


def reject(
    ledger: Ledger, habit_id: str, checksum: str | None = None, *, actor: str = "user"
) -> dict[str, Any]:
    """A candidate the human does not want: archived with reason `rejected` (analyze will not re-propose it)."""
    return transition(ledger, "reject", habit_id, checksum, actor=actor)


def disable(
    ledger: Ledger, habit_id: str, checksum: str | None = None, *, actor: str = "user"
) -> dict[str, Any]:
    return transition(ledger, "disable", habit_id, checksum, actor=actor)


def archive(
    ledger: Ledger, habit_id: str, checksum: str | None = None, *, actor: str = "user"
) -> dict[str, Any]:
    return transition(ledger, "archive", habit_id, checksum, actor=actor)


def mark_dormant(
    ledger: Ledger,
    habit_id: str,
    *,
    actor: str = "analyze",
    note: dict[str, Any] | None = None,
    in_transaction: bool = False,
) -> dict[str, Any]:
    """For analyze: an active habit strongly contradicted by recent evidence goes dormant (not deleted;
    `habit enable` re-activates it). `note` goes into the audit entry (e.g. the contradicting ref).
    Inside the batch transaction pass `in_transaction=True`."""
    return transition(ledger, "dormant", habit_id, actor=actor, note=note, in_transaction=in_transaction)


# -- declare --------------------------------------------------------------------------------------


def _law_fields(law: Law, findings: list[dict[str, Any]]) -> dict[str, Any]:
    """A new or reworded candidate's law check: suppressed when the law blocks it."""
    return {
        "status": "suppressed_by_law" if findings else "candidate",
        "reason": "law:candidate" if findings else None,
        "law": law.fingerprint,
        "law_findings": codec.canonical(findings).decode(),
    }


def _insert(
    ledger: Ledger,
    condition: str,
    behavior: str,
    polarity: int,
    confidence: int,
    origin: str,
    key: str | None,
    law: Law,
    findings: list[dict[str, Any]],
    actor: str,
    projects: str | None = None,
) -> dict[str, Any]:
    """Insert a new inactive habit (candidate, or suppressed_by_law) with its audit entry; `projects`
    is the stored scope (habitus.habits.scope), None for a personal habit."""
    now = utc_now()
    habit = rows.insert(
        ledger.conn,
        "habits",
        {
            "id": rows.new_id(ledger.conn, "habits", "h"),
            "condition": condition,
            "behavior": behavior,
            "polarity": polarity,
            "confidence_bp": confidence,
            "origin": origin,
            "candidate_key": key,
            "wording": wording_checksum(condition, behavior, polarity),
            "approved_wording": None,
            "approved_at": None,
            "created_at": now,
            "updated_at": now,
            "projects": projects,
            **_law_fields(law, findings),
        },
    )
    action = "declare" if origin == "declared" else "propose"
    rows.audit(ledger.conn, habit["id"], action, actor, after=habit["checksum"], status=habit["status"])
    return habit


def _same_wording(ledger: Ledger, wording: str) -> dict[str, Any] | None:
    row = ledger.conn.execute(
        "SELECT * FROM habits WHERE wording = ? AND status != 'archived' ORDER BY created_at, id LIMIT 1",
        (wording,),
    ).fetchone()
    return None if row is None else rows.verify("habits", row)


def declare(
    ledger: Ledger,
    condition: object,
    behavior: object,
    polarity: object = 1,
    confidence_bp: object = DECLARED_CONFIDENCE,
    *,
    embedder: Embedder,
    actor: str = "user",
) -> dict[str, Any]:
    """Create a habit with the exact wording a human confirmed, and activate it when the law passes
    and no possible duplicate or conflict stands; otherwise it stays inactive (suppressed_by_law, or
    a candidate with pending relations). Skips only the repeated-evidence requirement."""
    condition = clean_field("condition", condition)
    behavior = clean_field("behavior", behavior)
    polarity = check_polarity(polarity)
    confidence = check_bp("confidence_bp", confidence_bp)
    wording = wording_checksum(condition, behavior, polarity)
    same = _same_wording(ledger, wording)
    if same is not None:
        if same["status"] == "candidate":
            # The human confirmed this exact wording: that is an approval without the evidence gate.
            return _activation(
                ledger,
                same["id"],
                wording,
                embedder,
                allowed=("candidate",),
                action="approve",
                actor=actor,
                evidence_gate=False,
            )
        return {"habit": public(same), "outcome": "exists"}
    prepared = vectors.prepare(embedder, condition, behavior)
    _prepare(ledger, embedder, [])
    with ledger.tx():
        same = _same_wording(ledger, wording)
        if same is not None:  # declared by another process meanwhile
            return {"habit": public(same), "outcome": "exists"}
        law = load_law(ledger.root)
        findings = check_law(condition, behavior, law)
        habit = _insert(
            ledger, condition, behavior, polarity, confidence, "declared", None, law, findings, actor
        )
        vectors.store(ledger.conn, habit["id"], prepared)
        if findings:
            gate = Gate(findings=findings)
        else:
            gate = _gate(ledger, habit, law, embedder, actor=actor)
            if gate.clear:
                habit = _activate(ledger, habit, law, actor=actor, action="approve")
    result: dict[str, Any] = {
        "habit": public(habit, law),
        "outcome": "activated" if gate.clear else "blocked",
    }
    if gate.findings:
        result["findings"] = gate.findings
    if gate.pending or gate.opened:
        result["relations"] = sorted(set(gate.pending + gate.opened))
    return result


def edit(
    ledger: Ledger,
    habit_id: str,
    checksum: str,
    condition: object,
    behavior: object,
    *,
    embedder: Embedder,
    actor: str = "user",
) -> dict[str, Any]:
    """Replace a candidate's wording by the person's own, approved as written.

    In one transaction: the new wording becomes a declared habit (same polarity) with the original's
    evidence, activated through the same gate as `declare`; the original is rejected (archived with
    reason `rejected`, so analyze does not propose the replaced wording again). When the law or a
    possible duplicate blocks the new wording, the transaction rolls back and nothing is written;
    the refusal names the blocking rules or habits. Unchanged wording is an approval (as declaring
    a candidate's exact wording is)."""
    if checksum is None:
        raise bad_request("checksum", "required: the checksum shown by `habit list` or `habit show`")
    condition = clean_field("condition", condition)
    behavior = clean_field("behavior", behavior)
    allowed = ("candidate", "suppressed_by_law")
    original = get_habit(ledger.conn, habit_id)
    check_review(original, checksum)
    _check_status(original, allowed, "edit")
    polarity = original["polarity"]
    wording = wording_checksum(condition, behavior, polarity)
    if wording == original["wording"]:
        return _activation(
            ledger,
            habit_id,
            checksum,
            embedder,
            allowed=("candidate",),
            action="approve",
            actor=actor,
            evidence_gate=False,
        )
    prepared = vectors.prepare(embedder, condition, behavior)
    _prepare(ledger, embedder, [])
    with ledger.tx():
        original = get_habit(ledger.conn, habit_id)
        check_review(original, checksum)
        _check_status(original, allowed, "edit")
        same = _same_wording(ledger, wording)
        if same is not None:
            raise HabitusError(
                "refused",
                f"habit {same['id']} already has this wording",
                hint="review that habit instead",
                reason="exists",
                id=same["id"],
            )
        law = load_law(ledger.root)
        findings = check_law(condition, behavior, law)
        if findings:
            rules = sorted({f["rule"] for f in findings})
            raise HabitusError(
                "refused",
                f"the new wording conflicts with the law ({', '.join(rules)})",
                hint="reword it differently",
                reason="law",
                findings=findings,
            )
        habit = _insert(
            ledger,
            condition,
            behavior,
            polarity,
            DECLARED_CONFIDENCE,
            "declared",
            None,
            law,
            [],
            actor,
            projects=original.get("projects"),  # a reworded project habit stays in its projects
        )
        vectors.store(ledger.conn, habit["id"], prepared)
        if not _gate(ledger, habit, law, embedder, actor=actor).clear:
            # rolled back with the new habit: the refusal names the habits it may duplicate
            others = sorted(
                {
                    r["habit_b"] if r["habit_a"] == habit["id"] else r["habit_a"]
                    for r in relations(ledger.conn, habit["id"])
                }
            )
            raise HabitusError(
                "refused",
                f"the new wording may duplicate or conflict with {', '.join(others)}",
                hint="reword it, or approve the original and resolve the duplicate with `habitus dedupe`",
                reason="relation",
                habits=others,
            )
        habit = _activate(ledger, habit, law, actor=actor, action="approve")
        cited = [Evidence(e["ref"], e["day"], e["note"]) for e in evidence(ledger.conn, habit_id)]
        copied = _add_evidence(ledger, habit["id"], cited, actor)
        rejected = _transition(ledger, "reject", habit_id, checksum, actor, {"edited_into": habit["id"]})
    # the evidence brought example prompts along: select fails closed on examples without vectors
    vectors.ensure(ledger, embedder, [habit])
    return {
        "habit": public(habit, law),
        "outcome": "edited",
        "original": rejected["habit"],
        "evidence_copied": copied,
    }


# -- recheck --------------------------------------------------------------------------------------


def recheck(
    ledger: Ledger, habit_ids: list[str] | None = None, *, embedder: Embedder | None, actor: str = "user"
) -> dict[str, Any]:
    """Check habits against the law in force (recording its fingerprint), suppress violators, restore
    habits the law no longer blocks, then rebuild missing vectors of approved habits."""
    suppressed, restored, updated_count = [], [], 0
    with ledger.tx():
        law = load_law(ledger.root)
        targets = (
            [get_habit(ledger.conn, h) for h in habit_ids]
            if habit_ids
            else habits(ledger.conn, ("candidate", "active", "disabled", "dormant", "suppressed_by_law"))
        )
        for habit in targets:
            if habit["status"] == "archived":
                continue
            findings = check_law(habit["condition"], habit["behavior"], law)
            changes: dict[str, Any] = {
                "law": law.fingerprint,
                "law_findings": codec.canonical(findings).decode(),
            }
            if findings and habit["status"] != "suppressed_by_law":
                changes.update(status="suppressed_by_law", reason=f"law:{habit['status']}")
                suppressed.append(habit["id"])
            elif not findings and habit["status"] == "suppressed_by_law":
                before = (habit["reason"] or "law:candidate").partition(":")[2] or "candidate"
                if before in ("active", "disabled", "dormant") and not is_approved(habit):
                    before = "candidate"
                changes.update(status=before, reason=None)
                restored.append(habit["id"])
            if all(habit[k] == v for k, v in changes.items()):
                continue
            rows.change(ledger.conn, "habits", habit, "recheck", actor, **changes)
            updated_count += 1
    result: dict[str, Any] = {
        "checked": len(targets),
        "updated": updated_count,
        "suppressed": suppressed,
        "restored": restored,
        "law": law.describe(),
    }
    if embedder is not None:
        approved = habits(ledger.conn, APPROVED)
        result["vectors"] = {
            "model_id": embedder.model_id,
            "embedded": vectors.ensure(ledger, embedder, approved),
            "habits": len(approved),
        }
    return result


# -- proposals from analyze -------------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """One cited observation: an opaque reference (e.g. "obs-3:17:<checksum>") and its UTC day."""

    ref: str
    day: str  # YYYY-MM-DD
    note: str | None = None  # short, already-redacted summary (<= 500 chars)


@dataclass(frozen=True)
class Proposal:
    condition: str
    behavior: str
    polarity: int
    confidence_bp: int
    evidence: tuple[Evidence, ...]
    candidate_key: str | None = None


def _check_evidence(items: tuple[Evidence, ...]) -> list[Evidence]:
    if not 1 <= len(items) <= MAX_EVIDENCE:
        raise bad_request("evidence", f"expected 1 to {MAX_EVIDENCE} cited observations")
    out = []
    for index, item in enumerate(items):
        if not isinstance(item.ref, str) or not 1 <= len(item.ref) <= 200 or not item.ref.isprintable():
            raise bad_request(f"evidence[{index}].ref", "expected a printable string of 1 to 200 characters")
        try:
            datetime.date.fromisoformat(item.day)
        except (TypeError, ValueError):
            raise bad_request(f"evidence[{index}].day", "expected a date YYYY-MM-DD") from None
        if len(item.day) != 10:
            raise bad_request(f"evidence[{index}].day", "expected a date YYYY-MM-DD")
        note = (
            None
            if item.note is None
            else clean_field(f"evidence[{index}].note", item.note, limit=MAX_NOTE_CHARS)
        )
        out.append(Evidence(item.ref, item.day, note))
    return out


def _add_evidence(ledger: Ledger, habit_id: str, items: list[Evidence], actor: str) -> int:
    added = 0
    for item in items:
        if ledger.conn.execute(
            "SELECT 1 FROM habit_evidence WHERE habit_id = ? AND ref = ?", (habit_id, item.ref)
        ).fetchone():
            continue
        rows.insert(
            ledger.conn,
            "habit_evidence",
            {
                "habit_id": habit_id,
                "ref": item.ref,
                "day": item.day,
                "note": item.note,
                "actor": actor,
                "created_at": utc_now(),
            },
        )
        added += 1
        if item.note and _evidence_examples(ledger, habit_id) < examples.MAX_EVIDENCE:
            # the user's own words are what a later prompt in the same situation looks like
            examples.add(ledger.conn, habit_id, examples.clean(item.note), "evidence", actor)
    return added


def _evidence_examples(ledger: Ledger, habit_id: str) -> int:
    return sum(e["source"] == "evidence" for e in examples.of(ledger.conn, habit_id))


def check_proposal(proposal: Proposal) -> Proposal:
    """The proposal with its wording trimmed, or the HabitusError (bad_request, or refused for
    injection markers and secrets) that `propose_candidate` would raise. Call it before the batch
    transaction to quarantine a bad proposal without rolling back the others."""
    key = proposal.candidate_key
    if key is not None and (not isinstance(key, str) or not 1 <= len(key) <= 200 or not key.isprintable()):
        raise bad_request("candidate_key", "expected a printable string of 1 to 200 characters")
    return Proposal(
        clean_field("condition", proposal.condition),
        clean_field("behavior", proposal.behavior),
        check_polarity(proposal.polarity),
        check_bp("confidence_bp", proposal.confidence_bp),
        tuple(_check_evidence(tuple(proposal.evidence))),
        key,
    )


def prepare_proposal(embedder: Embedder, proposal: Proposal) -> vectors.Prepared:
    """Outside the transaction: the vectors `propose_candidate` uses to check for duplicates."""
    return vectors.prepare(embedder, proposal.condition.strip(), proposal.behavior.strip())


def propose_candidate(
    ledger: Ledger,
    proposal: Proposal,
    *,
    law: Law,
    prepared: vectors.Prepared | None = None,
    embedder: Embedder | None = None,
    actor: str = "analyze",
) -> dict[str, Any]:
    """Record a proposed habit with its evidence. Call INSIDE `with ledger.tx():` (analyze commits
    each batch with its watermark). Never activates anything.

    Outcomes: `created` (new candidate), `evidence_added` (same normalised wording exists, not
    archived: evidence is added, an approved habit keeps its approval), `reworded` (a candidate with
    the same candidate_key gets the new wording and must be reviewed again), `rejected_before` (the
    human rejected this wording or key: nothing is stored). The result's `stage` says whether the
    habit is `reviewable` (>= 3 observations over >= 2 days) or still `collecting`. A law violation
    makes the candidate `suppressed_by_law`. With `prepared` vectors (see `prepare_proposal`) and the
    `embedder` that made them, the candidate is checked against approved habits and possible
    duplicates become pending relations."""
    clean = check_proposal(proposal)
    condition, behavior, polarity = clean.condition, clean.behavior, clean.polarity
    confidence, key, items = clean.confidence_bp, clean.candidate_key, list(clean.evidence)
    wording = wording_checksum(condition, behavior, polarity)
    conn = ledger.conn
    rejected = conn.execute(
        "SELECT id FROM habits WHERE status = 'archived' AND reason = 'rejected' AND (wording = ? OR candidate_key = ?)",
        (wording, key),
    ).fetchone()
    if rejected is not None:
        return {"id": rejected[0], "outcome": "rejected_before", "status": "archived"}
    findings = check_law(condition, behavior, law)
    habit = _same_wording(ledger, wording)
    outcome = "evidence_added"
    if habit is None and key is not None:
        row = conn.execute(
            "SELECT * FROM habits WHERE candidate_key = ? AND status IN ('candidate', 'suppressed_by_law') "
            "ORDER BY created_at, id LIMIT 1",
            (key,),
        ).fetchone()
        if row is not None:
            before = rows.verify("habits", row)
            habit = rows.change(
                conn,
                "habits",
                before,
                "reword",
                actor,
                condition=condition,
                behavior=behavior,
                polarity=polarity,
                wording=wording,
                confidence_bp=max(confidence, before["confidence_bp"]),
                **_law_fields(law, findings),
            )
            similar.dismiss_pending(conn, habit["id"], actor=actor, why="reworded")
            outcome = "reworded"
    if habit is None:
        habit = _insert(
            ledger, condition, behavior, polarity, confidence, "analyzed", key, law, findings, actor
        )
        outcome = "created"
    elif (
        outcome == "evidence_added" and habit["status"] == "candidate" and confidence > habit["confidence_bp"]
    ):
        habit = rows.change(conn, "habits", habit, "strengthen", actor, confidence_bp=confidence)
    added = _add_evidence(ledger, habit["id"], items, actor)
    observations, days = evidence_stats(conn, habit["id"]).get(habit["id"], (0, 0))
    result: dict[str, Any] = {
        "id": habit["id"],
        "outcome": outcome,
        "status": habit["status"],
        "stage": stage(observations, days),
        "evidence_added": added,
        "checksum": habit["wording"],
    }
    if findings:
        result["findings"] = findings
    if (
        prepared is not None
        and embedder is not None
        and habit["status"] == "candidate"
        and vectors.matches(habit, prepared)
    ):
        if prepared.model_id != embedder.model_id:
            raise ValueError("prepared vectors come from another model than the embedder")
        vectors.store(conn, habit["id"], prepared)
        opened = _check_candidate(ledger, habit, embedder, actor)
        if opened:
            result["relations"] = opened
    return result


def _check_candidate(ledger: Ledger, habit: dict[str, Any], embedder: Embedder, actor: str) -> list[str]:
    """Compare a candidate with the approved habits that have current vectors (advisory: approval
    repeats the check and fails closed on missing vectors)."""
    others = [h for h in habits(ledger.conn, APPROVED) if h["id"] != habit["id"]]
    cached = vectors.load(ledger.conn, [habit, *others], embedder.model_id, embedder.dims)
    if habit["id"] not in cached:
        return []
    review_bp, strong_bp = similar.thresholds(ledger.root, embedder.kind)
    opened = []
    for other in others:
        if other["id"] not in cached:
            continue
        scores = similar.score(cached[habit["id"]], cached[other["id"]])
        if scores[0] >= review_bp:
            relation, _ = similar.record(
                ledger.conn,
                habit,
                other,
                scores,
                model_id=embedder.model_id,
                strong_bp=strong_bp,
                actor=actor,
            )
            if relation is not None and relation["decision"] == "pending":
                opened.append(relation["id"])
    return opened
