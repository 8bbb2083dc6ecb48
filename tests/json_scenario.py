"""Every rendered command's JSON off a terminal, on one fixed state root: `python tests/json_scenario.py`.

Runs each command as `python -m habitus` with stdout and stderr pipes, in whichever habitus PYTHONPATH
selects, and prints {name: {"exit", "stdout", "stderr"}} with the values that differ between runs (clock
times, generated ids, the temporary root's path) masked. tests/fixtures/render/json_before.json was
recorded by running it against the code from before terminal output existed (the habit entries since
gained the "scope" and "projects" fields of project habits); test_render.py checks that
today's code still writes the same bytes. Imports no test framework.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

TIME = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")
UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
HABIT = re.compile(rb"h-[0-9a-f]{12}")
OBSERVATION = re.compile(rb"obs-(\d+):(\d+):[0-9a-f]{64}")  # the hash chains the capture time in
ROW = re.compile(rb'"(before|after)":"[0-9a-f]{64}"')  # row checksums seal the generated id and times


def scenario(root: Path) -> dict[str, dict[str, object]]:
    from analyze_helpers import FRICTION, capture
    from habitus.advise import mutes
    from habitus.state.root import StateRoot

    env = {**os.environ, "HABITUS_HOME": str(root), "HABITUS_WORKER": "0"}
    env.pop("NO_COLOR", None)
    capture(root, FRICTION)
    mutes.change(StateRoot(root), "ab" * 32, label="the release was called ready unchecked", wait=5)
    runs: dict[str, dict[str, object]] = {}

    def habitus(name: str, *args: str, stdin: bytes = b"") -> bytes:
        done = subprocess.run(
            [sys.executable, "-m", "habitus", *args], input=stdin, capture_output=True, env=env, timeout=300
        )
        runs[name] = {
            "exit": done.returncode,
            "stdout": mask(done.stdout, root),
            "stderr": mask(done.stderr, root),
        }
        return done.stdout

    habitus("analyze", "analyze")
    habitus("analyze-again", "analyze", "--dry-run")
    listed = json.loads(habitus("habit-list", "habit", "list"))
    habitus("habit-list-pretty", "habit", "list", "--all", "--pretty")
    habitus("habit-show", "habit", "show", "1")
    checksum = listed["items"][0]["checksum"][:12]
    habitus("habit-approve", "habit", "approve", "1", "--checksum", checksum)
    habitus("select", "select", stdin=b'{"prompt": "add a logging call to the library code"}')
    habitus("select-none", "select", stdin=b'{"prompt": "what time is it"}')
    habitus("dedupe-list", "dedupe", "list", "--all")
    memory = {"content": "This repo releases from main only.", "kind": "fact", "tags": ["release"]}
    retained = json.loads(habitus("memory-retain", "memory", "retain", stdin=json.dumps(memory).encode()))
    habitus("memory-retrieve", "memory", "retrieve", "releases from main", "--no-hybrid")
    habitus("memory-recall", "memory", "recall", retained["memory"]["id"])
    habitus("memory-recall-absent", "memory", "recall", "00000000-0000-4000-8000-000000000000")
    habitus("advise-mutes", "advise", "mutes")
    habitus("error-stale", "habit", "show", "99")
    habitus("error-bad-json", "select", stdin=b"{not json")
    return runs


def mask(data: bytes, root: Path) -> str:
    data = data.replace(str(root).encode(), b"<root>")
    data = UUID.sub(b"<uuid>", TIME.sub(b"<time>", data))
    data = ROW.sub(rb'"\1":"<row>"', OBSERVATION.sub(rb"obs-\1:\2:<hash>", HABIT.sub(b"h-<id>", data)))
    return data.decode("utf-8", "replace")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "state"
        json.dump(scenario(root), sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")


if __name__ == "__main__":
    main()
