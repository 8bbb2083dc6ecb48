"""Measuring the local analyzer on a labelled set (tests/fixtures/analyze, see its README).

Each labelled conversation is captured through the production capture path (redaction, bounds,
hash-chained log) into a fresh temporary state root, analysed by `habitus.learn.run.run` with the
local analyzer, and the candidate habits left in that ledger are compared with the labels:

- a proposal is a true positive when every keyword of an unmatched labelled habit occurs in its
  `condition + " " + behavior` (case-insensitive; a keyword may list `|`-separated alternatives),
  matched greedily in the analyzer's order (highest confidence first), one to one; other proposals
  are false positives, unmatched labels false negatives;
- matched proposals are also checked for the right stage (reviewable / collecting);
- memory suggestions are scored the same way against the labelled facts.

A conversation with `"transcript_format": "pi" | "claude-code" | "codex" | "gemini"` is a real session
file, imported through the production transcript reader (as `capture --transcript` does), so only what
the reader attributes to the human user can become friction. Its labels may give `evidence_quotes`
(exact substrings of the user's messages) instead of `evidence_ats`; the stage of such a habit is not
scored (`stage.unscored` counts them).

Precision and recall are reported in basis points. Nothing outside the temporary roots is touched.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from habitus import codec
from habitus.errors import HabitusError, bad_request
from habitus.state import files
from habitus.state.root import StateRoot

MAX_LABELS_BYTES = 4 * 1024 * 1024
MAX_CONVERSATION_BYTES = 16 * 1024 * 1024
TRANSCRIPT_FORMATS = ("pi", "claude-code", "codex", "gemini")


def keywords_match(keywords: list[str], text: str) -> bool:
    lowered = text.lower()
    return all(any(alt.strip().lower() in lowered for alt in k.split("|")) for k in keywords)


def _match(proposed: list[str], labels: list[dict[str, Any]]) -> list[int | None]:
    """For each proposed text, the index of the label it matches (greedy, one to one), else None."""
    used: set[int] = set()
    out: list[int | None] = []
    for text in proposed:
        found = next(
            (
                i
                for i, label in enumerate(labels)
                if i not in used and keywords_match(label["keywords"], text)
            ),
            None,
        )
        if found is not None:
            used.add(found)
        out.append(found)
    return out


def _ratio(part: int, whole: int) -> int | None:
    return None if whole == 0 else round(10_000 * part / whole)


def load_labels(path: Path) -> dict[str, Any]:
    try:
        data = codec.loads(files.read_bytes(path, MAX_LABELS_BYTES))
    except FileNotFoundError:
        raise HabitusError("not_found", f"{path}: no such labels file") from None
    except ValueError:
        raise HabitusError("bad_json", f"{path}: not valid JSON") from None
    if (
        not isinstance(data, dict)
        or data.get("format") != 1
        or not isinstance(data.get("conversations"), list)
    ):
        raise bad_request("labels", 'expected {"format": 1, "conversations": [...]}')
    for index, conversation in enumerate(data["conversations"]):
        if not isinstance(conversation, dict) or not isinstance(conversation.get("file"), str):
            raise bad_request(f"labels.conversations[{index}].file", "expected a file name")
        name = conversation["file"]
        if "/" in name or name.startswith("."):
            raise bad_request(
                f"labels.conversations[{index}].file", "expected a file name beside labels.json"
            )
        fmt = conversation.get("transcript_format")
        if fmt is not None and fmt not in TRANSCRIPT_FORMATS:
            raise bad_request(
                f"labels.conversations[{index}].transcript_format",
                "expected one of " + ", ".join(TRANSCRIPT_FORMATS),
            )
        for key in ("habits", "facts"):
            items = conversation.get(key, [])
            if not isinstance(items, list) or not all(
                isinstance(i, dict) and isinstance(i.get("keywords"), list) for i in items
            ):
                raise bad_request(
                    f"labels.conversations[{index}].{key}", "expected a list of objects with keywords"
                )
            for item in items:
                quotes = item.get("evidence_quotes", [])
                if not isinstance(quotes, list) or not all(isinstance(q, str) and q for q in quotes):
                    raise bad_request(
                        f"labels.conversations[{index}].{key}.evidence_quotes", "expected a list of strings"
                    )
    return data


def _turns(path: Path) -> list[Any]:
    from habitus.harness.transcripts import Turn

    turns = []
    try:
        raw = files.read_bytes(path, MAX_CONVERSATION_BYTES)
    except FileNotFoundError:
        raise HabitusError("not_found", f"{path}: no such conversation file") from None
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = codec.loads(line)
        except ValueError:
            raise HabitusError("bad_json", f"{path}:{number}: not valid JSON") from None
        if not isinstance(row, dict) or not isinstance(row.get("user"), str):
            raise bad_request(f"{path.name}:{number}.user", "expected a string")
        turns.append(
            Turn(
                user=row["user"],
                assistant=str(row.get("assistant") or ""),
                user_at=row.get("at") if isinstance(row.get("at"), str) else None,
                session_id=row.get("session") if isinstance(row.get("session"), str) else None,
            )
        )
    return turns


def conversation(path: Path, label: dict[str, Any], *, wait: float) -> dict[str, Any]:
    """Capture one conversation into a temporary root, analyse it, score it against its labels."""
    from habitus.capture import capture_turns
    from habitus.habits.store import Ledger, evidence_stats, habits, stage
    from habitus.learn.run import run

    with tempfile.TemporaryDirectory(prefix="habitus-eval-") as folder:
        root = StateRoot.at(Path(folder) / "state")
        root.ensure()
        fmt = label.get("transcript_format")
        if fmt is not None:  # a real session file: read as `capture --transcript` reads it
            from habitus.capture import import_transcript

            if not path.is_file():
                raise HabitusError("not_found", f"{path}: no such conversation file")
            import_transcript(root, path, format=fmt, wait=wait)
        else:
            capture_turns(
                root, _turns(path), harness="generic", source="pair", event=None, wait=wait, full_dedupe=False
            )
        result = run(root, wait=wait)
        with Ledger.open(root, wait=wait) as ledger:
            stats = evidence_stats(ledger.conn)
            found = [
                h
                for h in habits(ledger.conn, ("candidate", "suppressed_by_law"))
                if h["origin"] == "analyzed"
            ]
            found.sort(key=lambda h: (-h["confidence_bp"], h["created_at"], h["id"]))
            proposals = [
                {
                    "condition": h["condition"],
                    "behavior": h["behavior"],
                    "polarity": h["polarity"],
                    "confidence_bp": h["confidence_bp"],
                    "stage": stage(*stats.get(h["id"], (0, 0))),
                    "observations": stats.get(h["id"], (0, 0))[0],
                }
                for h in found
            ]
    labelled = label.get("habits", [])
    matches = _match([f"{p['condition']} {p['behavior']}" for p in proposals], labelled)
    stage_ok = unscored = 0
    for proposal, index in zip(proposals, matches, strict=True):
        proposal["label"] = index
        if index is not None:
            proposal["expected_stage"] = labelled[index].get("stage")
            if "evidence_ats" not in labelled[index] and "evidence_quotes" in labelled[index]:
                unscored += 1  # quoted evidence has no timestamps to stage by
                proposal["stage_scored"] = False
                continue
            stage_ok += proposal["stage"] == labelled[index].get("stage")
    facts = label.get("facts", [])
    suggestions = [{"content": s["content"], "kind": s["kind"]} for s in result["memory_suggestions"]]
    fact_matches = _match([s["content"] for s in suggestions], facts)
    for suggestion, index in zip(suggestions, fact_matches, strict=True):
        suggestion["label"] = index
    tp = sum(m is not None for m in matches)
    fact_tp = sum(m is not None for m in fact_matches)
    return {
        "file": label["file"],
        "habits": {
            "tp": tp,
            "fp": len(proposals) - tp,
            "fn": len(labelled) - tp,
            "stage_correct": stage_ok,
            "stage_unscored": unscored,
        },
        "facts": {"tp": fact_tp, "fp": len(suggestions) - fact_tp, "fn": len(facts) - fact_tp},
        "proposals": proposals,
        "missed": [labelled[i]["behavior"] for i in range(len(labelled)) if i not in matches],
        "memory_suggestions": suggestions,
    }


def evaluate(labels_path: Path, *, only: list[str] | None = None, wait: float = 5.0) -> dict[str, Any]:
    """Score every labelled conversation (or those named in `only`) and the totals."""
    data = load_labels(labels_path)
    chosen = [c for c in data["conversations"] if not only or c["file"] in only]
    unknown = sorted(set(only or []) - {c["file"] for c in data["conversations"]})
    if unknown:
        raise bad_request("conversation", "expected file names listed in the labels: " + ", ".join(unknown))
    per = [conversation(labels_path.parent / c["file"], c, wait=wait) for c in chosen]
    totals: dict[str, Any] = {}
    for key in ("habits", "facts"):
        tp = sum(c[key]["tp"] for c in per)
        fp = sum(c[key]["fp"] for c in per)
        fn = sum(c[key]["fn"] for c in per)
        totals[key] = {
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "precision_bp": _ratio(tp, tp + fp),
            "recall_bp": _ratio(tp, tp + fn),
        }
    confusion: dict[str, dict[str, int]] = {}
    for c in per:
        for p in c["proposals"]:
            if p["label"] is not None and p.get("stage_scored", True):
                row = confusion.setdefault(p["expected_stage"] or "?", {})
                row[p["stage"]] = row.get(p["stage"], 0) + 1
    matched = totals["habits"]["tp"]
    unscored = sum(c["habits"]["stage_unscored"] for c in per)
    totals["stage"] = {
        "matched": matched - unscored,
        "unscored": unscored,  # matched habits labelled by evidence_quotes: no stage to compare
        "correct": sum(c["habits"]["stage_correct"] for c in per),
        "accuracy_bp": _ratio(sum(c["habits"]["stage_correct"] for c in per), matched - unscored),
        "confusion": confusion,  # labelled stage -> proposed stage -> count
    }
    return {"labels": str(labels_path), "conversations": per, **totals}
