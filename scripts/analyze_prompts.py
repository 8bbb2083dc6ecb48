"""Every human prompt of the analyze dev sets, labelled: does it state a standing rule / correct the agent?

    .venv/bin/python scripts/analyze_prompts.py > /tmp/prompts.jsonl

Reads the dev sets only (every tests/fixtures/analyze*/labels.json; never tests/fixtures/blind). Each
conversation is captured through the production capture path into a temporary root, as `habitus eval
analyze` does, and each observation the local analyzer would read as the user's words becomes one row:

    {"set", "file", "session", "text", "before", "label", "why"}

`label` is 1 when the prompt is evidence of a labelled habit (its `at` in `evidence_ats`, or an
`evidence_quotes` quote in it), else 0 (a not_habit, a fact, or any other prompt: the labellers read
every prompt). `before` is the agent's previous reply in the same session (bounded). The rows are the
training data of scripts/train_analyze_gate.py, with the prompts of tests/fixtures/analyze_gate/ (see its
README).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from habitus.learn.evaluate import _turns, load_labels  # noqa: E402
from habitus.state import observations  # noqa: E402
from habitus.state.root import StateRoot  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures"
BEFORE_CHARS = 600


def dev_sets() -> list[Path]:
    return sorted(FIXTURES.glob("analyze*/labels.json"))  # top-level sets only: never fixtures/blind


def records(path: Path, label: dict[str, Any]) -> list[dict[str, Any]]:
    from habitus.capture import capture_turns, import_transcript

    with tempfile.TemporaryDirectory(prefix="habitus-prompts-") as folder:
        root = StateRoot.at(Path(folder) / "state")
        root.ensure()
        if label.get("transcript_format"):
            import_transcript(root, path, format=label["transcript_format"], wait=5.0)
        else:
            capture_turns(
                root, _turns(path), harness="generic", source="pair", event=None, wait=5.0, full_dedupe=False
            )
        out: list[dict[str, Any]] = []
        for info in observations.generations(root):
            after = 0
            while True:
                batch = observations.read(
                    root, info.generation, after_seq=after, max_records=500, max_bytes=10_000_000
                )
                if not batch.records:
                    break
                out += batch.records
                after = batch.records[-1]["seq"]
        return out


def rows(labels_path: Path) -> list[dict[str, Any]]:
    from habitus.learn.local import observation

    data = load_labels(labels_path)
    out: list[dict[str, Any]] = []
    for conv in data["conversations"]:
        recs = records(labels_path.parent / conv["file"], conv)
        obs = [observation(i, r) for i, r in enumerate(recs)]
        ats: dict[str, str] = {}
        quotes: list[tuple[str, str]] = []
        for habit in conv.get("habits", []):
            for at in habit.get("evidence_ats", []):
                ats[at] = habit["behavior"]
            for quote in habit.get("evidence_quotes", []):
                quotes.append((quote, habit["behavior"]))
        why = {n["quote"]: n["why"] for n in conv.get("not_habits", []) if "quote" in n}
        why_at = {n["at"]: n["why"] for n in conv.get("not_habits", []) if "at" in n}
        for i, o in enumerate(obs):
            if not o.user.strip():
                continue
            stamp = (recs[i].get("payload") or {}).get("user_at") or recs[i].get("at") or ""
            habit = ats.get(stamp) or next((b for q, b in quotes if q in o.user), None)
            reason = why_at.get(stamp) or next((w for q, w in why.items() if q in o.user), "")
            prior = obs[i - 1].assistant if i and obs[i - 1].session == o.session else ""
            out.append(
                {
                    "set": labels_path.parent.name,
                    "file": conv["file"],
                    "session": f"{labels_path.parent.name}/{conv['file']}/{o.session}",
                    "text": o.user,
                    "before": prior[-BEFORE_CHARS:],
                    "label": int(habit is not None),
                    "habit": habit or "",
                    "why": reason,
                }
            )
    return out


def main() -> None:
    for path in dev_sets():
        for row in rows(path):
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
