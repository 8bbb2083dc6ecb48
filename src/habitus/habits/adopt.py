"""Import shared habits as candidates: a team's file or another machine's export, never active here.

Each entry passes the wording law of `habit declare` (length, control characters, injection markers,
secrets: a failing entry is rejected, the others still import). Then this person's ledger decides:

- a habit with the same wording (same review checksum) already here, in any status, wins: no new
  candidate (outcome `exists`, or `rejected_before` when this person rejected it);
- otherwise a new candidate (origin `declared`: people worded it, so approval needs no repeated
  evidence; `suppressed_by_law` when this person's law.md blocks it) whose audit entry `import` holds
  the provenance (source file name, the file's SHA-256, the exporter's checksum, whether the entry was
  edited after export). Near duplicates of approved habits become pending relations, as for analyze
  (`habitus dedupe list`).

A project import (`project`: a repository's top folder, from its HABITS.md) scopes its new candidates
to that repository (habitus.habits.scope): once approved they apply only there. The person's ledger
still decides on a wording it already holds: a personal habit stays personal (it applies everywhere);
a project habit of another repository, unless archived, gains this repository in its scope (audit
entry `scope`), the same approval now holding in both.

Nothing becomes active: approval stays `habit approve`, bound to the wording and its checksum.
All new candidates are written in one transaction: an error writes none of them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from habitus import codec
from habitus.errors import HabitusError
from habitus.habits import lifecycle, rows, scope, vectors
from habitus.habits.law import Law, check_law, load_law
from habitus.habits.share import Rejection, SharedHabit
from habitus.habits.store import Ledger
from habitus.habits.wording import clean_field, wording_checksum
from habitus.state.db import utc_now

if TYPE_CHECKING:
    from habitus.embed.engine import Embedder


def check(entries: list[SharedHabit]) -> tuple[list[SharedHabit], list[Rejection]]:
    """Entries whose wording passes the law (trimmed), and the rejected ones (duplicates in the file too)."""
    kept: list[SharedHabit] = []
    rejected: list[Rejection] = []
    seen: set[str] = set()
    for entry in entries:
        try:
            condition = clean_field("condition", entry.condition)
            behavior = clean_field("behavior", entry.behavior)
        except HabitusError as error:
            reason = str(error.details.get("reason") or error.code)
            rejected.append(Rejection(entry.line, reason, f"line {entry.line}: {error.message}"))
            continue
        wording = wording_checksum(condition, behavior, entry.polarity)
        if wording in seen:
            rejected.append(
                Rejection(entry.line, "duplicate_in_file", f"line {entry.line}: the same habit again")
            )
            continue
        seen.add(wording)
        kept.append(
            SharedHabit(entry.line, condition, behavior, entry.polarity, entry.exported, entry.edited)
        )
    return kept, rejected


def _existing(ledger: Ledger, wording: str) -> dict[str, Any] | None:
    """This person's habit with that wording: a live one first, else a rejected or archived one."""
    row = ledger.conn.execute(
        "SELECT * FROM habits WHERE wording = ? ORDER BY status = 'archived', created_at, id LIMIT 1",
        (wording,),
    ).fetchone()
    return None if row is None else rows.verify("habits", row)


def adopt(
    ledger: Ledger,
    entries: list[SharedHabit],
    *,
    source: str,
    data: bytes,
    load_embedder: Callable[[], Embedder],
    project: str | None = None,
) -> dict[str, Any]:
    """Record checked entries (see `check`) as candidates, scoped to `project` when given (None:
    personal); returns one outcome per entry. The embedding model is loaded only when an entry is
    new here (for the duplicate check)."""
    digest = hashlib.sha256(data).hexdigest()
    fresh = [
        e for e in entries if _existing(ledger, wording_checksum(e.condition, e.behavior, e.polarity)) is None
    ]
    embedder = load_embedder() if fresh else None
    prepared: dict[int, vectors.Prepared] = {}
    if embedder is not None:
        prepared = {e.line: vectors.prepare(embedder, e.condition, e.behavior) for e in fresh}
        lifecycle._prepare(ledger, embedder, [])  # approved habits' vectors, for the duplicate check
    outcomes: list[dict[str, Any]] = []
    with ledger.tx():
        law = load_law(ledger.root)
        for entry in entries:
            wording = wording_checksum(entry.condition, entry.behavior, entry.polarity)
            same = _existing(ledger, wording)
            if same is not None:
                rejected = same["status"] == "archived" and same["reason"] == "rejected"
                widened = _widen(ledger, same, project) if project is not None else None
                same = widened if widened is not None else same
                outcomes.append(
                    {
                        "line": entry.line,
                        "outcome": "rejected_before" if rejected else "exists",
                        "id": same["id"],
                        "status": same["status"],
                        "checksum": same["wording"],
                        **scope.public(same),
                        **({"scope_added": project} if widened else {}),
                    }
                )
                continue
            provenance = {
                "source": source,
                "sha256": digest,
                "exported_checksum": entry.exported,
                "edited": entry.edited,
                "line": entry.line,
            }
            if project is not None:
                provenance["project"] = project
            projects = None if project is None else scope.encode([project])
            habit = _insert(ledger, entry, law, provenance, projects)
            outcome: dict[str, Any] = {
                "line": entry.line,
                "outcome": "created",
                "id": habit["id"],
                "status": habit["status"],
                "checksum": habit["wording"],
                "edited": entry.edited,
                **scope.public(habit),
            }
            ready = prepared.get(entry.line)
            if (
                embedder is not None
                and habit["status"] == "candidate"
                and ready is not None
                and vectors.matches(habit, ready)
            ):
                vectors.store(ledger.conn, habit["id"], ready)
                opened = lifecycle._check_candidate(ledger, habit, embedder, "user")
                if opened:
                    outcome["relations"] = opened
            outcomes.append(outcome)
    return {"items": outcomes}


def _widen(ledger: Ledger, habit: dict[str, Any], project: str) -> dict[str, Any] | None:
    """Add `project` to a live project habit's scope (audited); None when nothing changes: a
    personal habit (it already applies everywhere), an archived one, or one already scoped there."""
    projects = scope.decode(habit["projects"])
    if projects is None or project in projects or habit["status"] == "archived":
        return None
    if len(projects) >= scope.MAX_PROJECTS:
        raise HabitusError(
            "refused",
            f"habit {habit['id']} is already scoped to {scope.MAX_PROJECTS} repositories",
            hint="archive it and declare it as a personal habit instead",
            id=habit["id"],
        )
    return rows.change(
        ledger.conn,
        "habits",
        habit,
        "scope",
        "user",
        note={"project_added": project},
        projects=scope.encode([*projects, project]),
    )


def _insert(
    ledger: Ledger, entry: SharedHabit, law: Law, provenance: dict[str, Any], projects: str | None
) -> dict[str, Any]:
    findings = check_law(entry.condition, entry.behavior, law)
    now = utc_now()
    habit = rows.insert(
        ledger.conn,
        "habits",
        {
            "id": rows.new_id(ledger.conn, "habits", "h"),
            "condition": entry.condition,
            "behavior": entry.behavior,
            "polarity": entry.polarity,
            "confidence_bp": lifecycle.DECLARED_CONFIDENCE,
            "origin": "declared",
            "candidate_key": None,
            "wording": wording_checksum(entry.condition, entry.behavior, entry.polarity),
            "approved_wording": None,
            "approved_at": None,
            "created_at": now,
            "updated_at": now,
            "projects": projects,
            **lifecycle._law_fields(law, findings),
        },
    )
    rows.audit(
        ledger.conn,
        habit["id"],
        "import",
        "user",
        after=habit["checksum"],
        status=habit["status"],
        provenance=provenance,
    )
    return habit


def provenance(audit: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Where an imported habit came from (its `import` audit entry), for `habit show`."""
    for entry in audit:
        if entry["action"] == "import":
            data = codec.loads(entry["data"])
            found = data.get("provenance") if isinstance(data, dict) else None
            return found if isinstance(found, dict) else None
    return None
