"""Helpers for the `habitus review` tests: a real state root made by real commands, and ledger dumps.

The root: the demo's sample conversation captured and analyzed (two reviewable candidates with
redacted evidence), then three declared habits: "When I ask for a release" (active), a paraphrase of
it (left a candidate with a pending possible duplicate) and "When writing Go code" (active).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

RELEASE = ("When I ask for a release", "Run the full test suite first")
PARAPHRASE = ("When preparing a new release", "Execute all the tests before publishing")
GOFMT = ("When writing Go code", "Run gofmt before committing")
TIMESTAMPS = ("created_at", "updated_at", "approved_at")
# Row checksums seal timestamps (and the audit chain links them): they differ between two roots
# even when the same decisions were made, so the comparison leaves them out with the timestamps.
SEALS = ("checksum", "before", "after", "prev")
_ID = re.compile(r"\b[hr]-[0-9a-f]{12}\b")


def habitus(root: Path, *args: str, stdin: bytes = b"") -> dict[str, Any]:
    env = {**os.environ, "HABITUS_WORKER": "0"}
    env.pop("HABITUS_HOME", None)
    done = subprocess.run(
        [sys.executable, "-m", "habitus", *args, "--root", str(root)],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, (args, done.stderr)
    lines = done.stdout.splitlines()
    return json.loads(lines[-1]) if lines else {}


def build(root: Path) -> None:
    """Capture and analyze the sample conversation, then declare the three habits (real processes)."""
    sample = resources.files("habitus.demo").joinpath("sample_conversation.jsonl").read_bytes()
    history = b"\n".join(sample.splitlines()[:-1]) + b"\n"
    habitus(root, "config", "set", "capture.enabled", "true")
    habitus(root, "capture", "--nl", stdin=history)
    analyzed = habitus(root, "analyze")
    assert sum(p.get("stage") == "reviewable" for p in analyzed["proposals"]) >= 2, analyzed
    for condition, behavior in (RELEASE, PARAPHRASE, GOFMT):
        habitus(root, "habit", "declare", "--condition", condition, "--behavior", behavior)


def copy(base: Path, dest: Path) -> Path:
    shutil.copytree(base, dest, symlinks=True)
    return dest


def dump(root: Path, *, exact: bool = False) -> dict[str, list[dict[str, Any]]]:
    """The ledger's habits, evidence, examples, relations and audit rows. Unless `exact`, without
    timestamps and the seals over them."""
    conn = sqlite3.connect(f"file:{root / 'ledger.sqlite'}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    tables = {
        "habits": "SELECT * FROM habits ORDER BY created_at, id",
        "habit_evidence": "SELECT * FROM habit_evidence ORDER BY id",
        "habit_examples": "SELECT * FROM habit_examples ORDER BY id",
        "habit_relations": "SELECT * FROM habit_relations ORDER BY created_at, id",
        "habit_audit": "SELECT * FROM habit_audit ORDER BY id",
    }
    if exact:
        tables["review_snapshots"] = "SELECT * FROM review_snapshots ORDER BY kind"
    try:
        out = {}
        for name, query in tables.items():
            rows = [dict(r) for r in conn.execute(query)]
            if not exact:
                rows = [{k: v for k, v in r.items() if k not in TIMESTAMPS + SEALS} for r in rows]
            out[name] = rows
        return out
    finally:
        conn.close()


def normalised(root: Path, known: set[str]) -> dict[str, list[dict[str, Any]]]:
    """`dump` with the ids created after the copy (random per root) renamed by order of appearance in
    the audit trail, so two roots that took the same decisions compare equal."""
    rows = dump(root)
    names: dict[str, str] = {}
    for entry in rows["habit_audit"]:
        for found in _ID.findall(json.dumps(entry)):
            if found not in known and found not in names:
                names[found] = f"{found[0]}-new{len(names) + 1}"

    def rename(value: Any) -> Any:
        return (
            _ID.sub(lambda m: names.get(m.group(0), m.group(0)), value) if isinstance(value, str) else value
        )

    return {table: [{k: rename(v) for k, v in r.items()} for r in found] for table, found in rows.items()}


def ids(root: Path) -> set[str]:
    conn = sqlite3.connect(f"file:{root / 'ledger.sqlite'}?mode=ro", uri=True)
    try:
        return {r[0] for r in conn.execute("SELECT id FROM habits UNION SELECT id FROM habit_relations")}
    finally:
        conn.close()
