"""Duplicate detection across approved habits, and explicit resolution of each pair.

`scan` compares approved (active and disabled) habits, at most 100 (4,950 pairs), and records
pending relations; it never changes a habit. `resolve` applies one human decision to one pending
relation inside one `BEGIN IMMEDIATE` transaction that first revalidates the relation's checksum,
both habits' checksums and wordings (and, when something stays or becomes active, the law): any
change since the relation was listed rolls back with `stale` (exit 3).

- merge: keep one habit, copy the other's evidence into it, archive the other (duplicates only);
  an approved habit is never replaced by a candidate this way (use supersede);
- supersede: the kept habit (default: the newer wording) becomes the approved, active one after the
  activation gate; the other is archived;
- archive: archive one of the two (default: the newer or unapproved one), keep the other as it is;
- keep-separate: both stay; the decision holds until either wording changes materially.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from habitus.errors import HabitusError, bad_request
from habitus.habits import lifecycle, rows, similar, snapshot, vectors
from habitus.habits.law import Law, load_law
from habitus.habits.store import (
    APPROVED,
    Ledger,
    evidence,
    get_habit,
    habits,
    is_approved,
    relations,
)

if TYPE_CHECKING:
    from habitus.embed.engine import Embedder

SCAN_CAP = 100
ACTIONS = ("merge", "supersede", "archive", "keep-separate")


def get_relation(ledger: Ledger, relation_id: str) -> dict[str, Any]:
    row = ledger.conn.execute("SELECT * FROM habit_relations WHERE id = ?", (relation_id,)).fetchone()
    if row is None:
        raise HabitusError(
            "not_found", f"no relation {relation_id}", hint="`habitus dedupe list --all` lists them"
        )
    return rows.verify("habit_relations", row)


def scan(
    ledger: Ledger, embedder: Embedder, *, actor: str = "user", progress: Callable[..., None] | None = None
) -> dict[str, Any]:
    """Compare approved habits pairwise (cap 100 habits by confidence then id); record relations at or
    above the review threshold; dismiss pending relations among them that no longer reach it.
    `progress(step done, 2 steps, step=NAME)` names the phase: embedding, then comparing."""
    import numpy as np

    chosen = sorted(habits(ledger.conn, APPROVED), key=lambda h: (-h["confidence_bp"], h["id"]))[:SCAN_CAP]
    if progress is not None:
        progress(0, 2, step=f"embedding {len(chosen)} habits")
    embedded = vectors.ensure(ledger, embedder, chosen)
    if progress is not None:
        progress(1, 2, step=f"comparing {len(chosen) * (len(chosen) - 1) // 2} pairs")
    review_bp, strong_bp = similar.thresholds(ledger.root, embedder.kind)
    opened: list[str] = []
    pending: list[str] = []
    dismissed: list[str] = []
    with ledger.tx():
        current = [get_habit(ledger.conn, h["id"]) for h in chosen]
        if any(a["checksum"] != b["checksum"] for a, b in zip(current, chosen, strict=True)):
            raise HabitusError("stale", "habits changed during the scan", hint="run the scan again")
        cached = vectors.load(ledger.conn, current, embedder.model_id, embedder.dims)
        if len(cached) != len(current):
            raise HabitusError(
                "vectors_stale", "some habits have no current vectors", hint="run the scan again"
            )
        scanned = {h["id"] for h in current}
        above = set()
        if len(current) > 1:
            conditions = np.stack([cached[h["id"]]["condition"] for h in current])
            behaviors = np.stack([cached[h["id"]]["behavior"] for h in current])
            effective = np.minimum(conditions @ conditions.T, behaviors @ behaviors.T)
            for i, j in zip(*np.nonzero(np.triu(effective >= review_bp / 10_000 - 1e-4, k=1)), strict=True):
                a, b = current[int(i)], current[int(j)]
                scores = similar.score(cached[a["id"]], cached[b["id"]])
                if scores[0] < review_bp:
                    continue
                above.add(tuple(sorted((a["id"], b["id"]))))
                relation, was_opened = similar.record(
                    ledger.conn, a, b, scores, model_id=embedder.model_id, strong_bp=strong_bp, actor=actor
                )
                if relation is not None:
                    (opened if was_opened else pending).append(relation["id"])
        for relation in relations(ledger.conn, pending=True):
            pair = (relation["habit_a"], relation["habit_b"])
            if pair[0] in scanned and pair[1] in scanned and pair not in above:
                rows.change(
                    ledger.conn,
                    "habit_relations",
                    relation,
                    "dismiss",
                    actor,
                    note={"why": "below_threshold"},
                    decision="dismissed",
                )
                dismissed.append(relation["id"])
    return {
        "habits": len(current),
        "pairs": len(current) * (len(current) - 1) // 2,
        "capped": len(habits(ledger.conn, APPROVED)) > SCAN_CAP,
        "model_id": embedder.model_id,
        "review_bp": review_bp,
        "strong_bp": strong_bp,
        "embedded": embedded,
        "opened": sorted(opened),
        "pending": sorted(pending),
        "dismissed": sorted(dismissed),
    }


def describe(ledger: Ledger, relation: dict[str, Any], law: Law | None = None) -> dict[str, Any]:
    a = get_habit(ledger.conn, relation["habit_a"])
    b = get_habit(ledger.conn, relation["habit_b"])
    return {
        "id": relation["id"],
        "kind": relation["kind"],
        "decision": relation["decision"],
        "similarity_bp": relation["similarity_bp"],
        "condition_bp": relation["condition_bp"],
        "behavior_bp": relation["behavior_bp"],
        "strength": relation["strength"],
        "model_id": relation["model_id"],
        "survivor": relation["survivor"],
        "checksum": relation["checksum"],
        "current": a["wording"] == relation["wording_a"] and b["wording"] == relation["wording_b"],
        "habits": [lifecycle.public(a, law), lifecycle.public(b, law)],
    }


def list_relations(ledger: Ledger, *, include_decided: bool = False) -> dict[str, Any]:
    """Relations (pending only unless include_decided), numbered; remembers the numbering 15 minutes."""
    law = load_law(ledger.root)
    with ledger.tx():
        found = relations(ledger.conn)  # every row verified, so tampering cannot hide a relation
        chosen = sorted(
            (r for r in found if include_decided or r["decision"] == "pending"),
            key=lambda r: (r["decision"] != "pending", -r["similarity_bp"], r["id"]),
        )
        items = [describe(ledger, r, law) for r in chosen]
        expires = snapshot.write(ledger.conn, "relations", [(i["id"], i["checksum"]) for i in items])
    numbered = [{"n": number, **item} for number, item in enumerate(items, start=1)]
    return {"items": numbered, "snapshot_expires_at": snapshot.expires_at(expires)}


def _check_relation_checksum(relation: dict[str, Any], checksum: str | None) -> None:
    if checksum is None:
        raise bad_request("checksum", "required: the relation checksum shown by `dedupe list`")
    if not isinstance(checksum, str) or len(checksum) < 12 or not relation["checksum"].startswith(checksum):
        raise HabitusError(
            "stale",
            f"relation {relation['id']} changed since it was listed",
            hint="run `habitus dedupe list` again",
        )


def _rank(habit: dict[str, Any]) -> tuple[int, int, str, str]:
    """Sort key of the habit that merge/archive keep by default: approved, confident, older, lower id."""
    return (
        0 if habit["status"] in APPROVED else 1,
        -habit["confidence_bp"],
        habit["created_at"],
        habit["id"],
    )


def _roles(
    relation: dict[str, Any], a: dict[str, Any], b: dict[str, Any], action: str, keep: str | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    if keep is not None:
        if keep not in (a["id"], b["id"]):
            raise bad_request("keep", f"expected {a['id']} or {b['id']}")
        return (a, b) if keep == a["id"] else (b, a)
    if action == "supersede":  # the newer wording replaces the older
        newer = max((a, b), key=lambda h: (h["created_at"], h["id"]))
        return (newer, b if newer is a else a)
    first, second = sorted((a, b), key=_rank)
    return first, second


def default_survivors(ledger: Ledger, relation: dict[str, Any]) -> dict[str, str]:
    """Which habit each outcome keeps when no `keep` is given (what `resolve` would choose)."""
    a = get_habit(ledger.conn, relation["habit_a"])
    b = get_habit(ledger.conn, relation["habit_b"])
    return {
        action: _roles(relation, a, b, action, None)[0]["id"] for action in ("merge", "supersede", "archive")
    }


def _archive(ledger: Ledger, habit: dict[str, Any], reason: str, actor: str, action: str) -> dict[str, Any]:
    return rows.change(ledger.conn, "habits", habit, action, actor, status="archived", reason=reason)


def resolve(
    ledger: Ledger,
    relation_id: str,
    checksum: str | None,
    action: str,
    *,
    keep: str | None = None,
    embedder: Embedder | None = None,
    actor: str = "user",
) -> dict[str, Any]:
    """Apply one decision to one pending relation, revalidating everything in one transaction."""
    if action not in ACTIONS:
        raise bad_request("action", "expected one of " + ", ".join(ACTIONS))
    relation = get_relation(ledger, relation_id)
    _check_relation_checksum(relation, checksum)
    if action == "merge" and embedder is None:
        raise ValueError("merge needs the embedder (the absorbed evidence brings example prompts to embed)")
    if action == "supersede":
        if embedder is None:
            raise ValueError("supersede needs the embedder")
        lifecycle._prepare(
            ledger,
            embedder,
            [get_habit(ledger.conn, relation["habit_a"]), get_habit(ledger.conn, relation["habit_b"])],
        )
    refusal: HabitusError | None = None
    with ledger.tx():
        relation = get_relation(ledger, relation_id)
        _check_relation_checksum(relation, checksum)
        if relation["decision"] != "pending":
            raise HabitusError(
                "stale", f"relation {relation_id} was already resolved ({relation['decision']})"
            )
        a = get_habit(ledger.conn, relation["habit_a"])
        b = get_habit(ledger.conn, relation["habit_b"])
        if a["wording"] != relation["wording_a"] or b["wording"] != relation["wording_b"]:
            raise HabitusError(
                "stale",
                f"a habit of relation {relation_id} was reworded",
                hint="run `habitus dedupe scan` again",
            )
        if "archived" in (a["status"], b["status"]):
            raise HabitusError("stale", f"a habit of relation {relation_id} is archived")
        survivor, other = _roles(relation, a, b, action, keep)
        law = load_law(ledger.root)
        if action != "keep-separate":
            lifecycle.check_law_current(survivor, law)
        decision = {
            "keep-separate": "kept_separate",
            "merge": "merged",
            "supersede": "superseded",
            "archive": "archived",
        }[action]
        changed: list[str] = []
        if action == "merge":
            if relation["kind"] != "duplicate":
                raise HabitusError(
                    "refused", "a conflict cannot be merged", hint="supersede, archive or keep-separate"
                )
            if other["status"] in APPROVED and survivor["status"] not in APPROVED:
                raise HabitusError(
                    "refused",
                    "merge keeps the approved habit; to replace it with the candidate's wording, supersede",
                    reason="merge_into_candidate",
                )
            copied = lifecycle._add_evidence(
                ledger,
                survivor["id"],
                [
                    lifecycle.Evidence(e["ref"], e["day"], e["note"])
                    for e in evidence(ledger.conn, other["id"])
                ],
                actor,
            )
            if other["confidence_bp"] > survivor["confidence_bp"] or copied:
                survivor = rows.change(
                    ledger.conn,
                    "habits",
                    survivor,
                    "merge",
                    actor,
                    note={"absorbed": other["id"], "evidence": copied},
                    confidence_bp=max(other["confidence_bp"], survivor["confidence_bp"]),
                )
            other = _archive(ledger, other, f"merged:{survivor['id']}", actor, "merge")
            changed = [survivor["id"], other["id"]]
        elif action == "archive":
            other = _archive(ledger, other, f"duplicate:{survivor['id']}", actor, "archive")
            changed = [other["id"]]
        elif action == "supersede":
            assert embedder is not None
            gate = lifecycle._gate(ledger, survivor, law, embedder, actor=actor, exclude=(other["id"],))
            if gate.opened:
                refusal = lifecycle._refuse(gate, survivor["id"])
            elif not gate.clear:
                raise lifecycle._refuse(gate, survivor["id"])
            else:
                other = _archive(ledger, other, f"superseded:{survivor['id']}", actor, "supersede")
                if not (survivor["status"] == "active" and is_approved(survivor)):
                    survivor = lifecycle._activate(ledger, survivor, law, actor=actor, action="supersede")
                changed = [survivor["id"], other["id"]]
        if refusal is None:
            updated = rows.change(
                ledger.conn,
                "habit_relations",
                get_relation(ledger, relation_id),
                "resolve",
                actor,
                decision=decision,
                survivor=None if action == "keep-separate" else survivor["id"],
            )
            dismissed = (
                similar.dismiss_pending(ledger.conn, other["id"], actor=actor, why=decision)
                if other["status"] == "archived"
                else []
            )
    if refusal is not None:
        raise refusal
    if action == "merge" and embedder is not None:
        # the absorbed evidence brought its example prompts: select fails closed on examples without vectors
        vectors.ensure(ledger, embedder, [get_habit(ledger.conn, survivor["id"])])
    result: dict[str, Any] = {
        "relation": {"id": relation_id, "decision": decision, "survivor": updated["survivor"]},
        "changed": changed,
        "habits": [
            lifecycle.public(get_habit(ledger.conn, h), law)
            for h in (relation["habit_a"], relation["habit_b"])
        ],
    }
    if dismissed:
        result["dismissed_relations"] = dismissed
    return result
