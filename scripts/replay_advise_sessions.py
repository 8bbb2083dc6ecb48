"""Replay the real public sessions of the analyze fixtures (Codex, Claude Code) through the production
advise review at about fifteen turn ends each, with the 120 habits of the advise catalogs D-I
approved, and print every note: none of these users had these habits, so each note is read by hand
(right by the habit's letter, or a false note). A dev tool (docs/quality.md).

    .venv/bin/python scripts/replay_advise_sessions.py
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from habitus.advise import review  # noqa: E402
from habitus.state.root import StateRoot  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures"
CATALOGS = (
    "blind/advise_d",
    "blind/advise_e",
    "advise_train_f",
    "advise_train_g",
    "advise_train_h",
    "blind/advise_i",
)
HABITUS = str(REPO / ".venv" / "bin" / "habitus")
POINTS = 15  # turn ends reviewed per session


def sessions() -> list[Path]:
    found = [
        *glob.glob(str(FIXTURES / "blind" / "analyze_real_*" / "*codex*.jsonl")),
        *glob.glob(str(FIXTURES / "blind" / "analyze_real_g" / "*.claude.jsonl")),
        *glob.glob(str(FIXTURES / "analyze_train_r*" / "*.jsonl")),
    ]
    return [Path(p) for p in sorted(found)]


def turn_ends(data: bytes) -> list[int]:
    """Byte offsets just after each line that ends a turn (Codex task_complete, Claude end_turn)."""
    offsets, offset = [], 0
    for line in data.splitlines(keepends=True):
        offset += len(line)
        if b'"task_complete"' in line or b'"end_turn"' in line:
            offsets.append(offset)
    return offsets[:: max(1, len(offsets) // POINTS)]


def main() -> None:
    home = tempfile.mkdtemp()
    env = {**os.environ, "HABITUS_HOME": home}
    subprocess.run(
        [HABITUS, "config", "set", "advise.enabled", "true"], env=env, check=True, capture_output=True
    )
    for catalog in CATALOGS:
        for line in (FIXTURES / catalog / "habits.jsonl").read_text().splitlines():
            habit = json.loads(line)
            wanted = {k: habit[k] for k in ("condition", "behavior", "polarity")}
            subprocess.run([HABITUS, "habit", "declare"], input=json.dumps(wanted).encode(), env=env, check=True,
                           capture_output=True)  # fmt: skip
    os.environ["HABITUS_HOME"] = home
    root = StateRoot(Path(home))
    reviews = notes = 0
    for source in sessions():
        data = source.read_bytes()
        grow = Path(home) / source.name
        written = 0
        for point in turn_ends(data):
            with open(grow, "ab") as handle:  # the session grows as the agent writes it
                handle.write(data[written:point])
            written = point
            outcome = review.run(
                root, review.Source(source.stem, path=grow), wait=5, route=lambda _: "result"
            )
            reviews += outcome.reviewed
            if outcome.note is not None:
                notes += 1
                print(source.name, "|", outcome.note["note"][:260])
    print("reviews", reviews, "notes", notes)


if __name__ == "__main__":
    main()
