"""Measure a labelled set through the production command line and break the figures down by category
and by language: the report docs/quality.md records for the blind sets.

    .venv/bin/python scripts/blind_report.py select tests/fixtures/blind/select/cases.jsonl
    .venv/bin/python scripts/blind_report.py advise tests/fixtures/blind/advise/cases.jsonl \
        --habits tests/fixtures/blind/select/habits.jsonl

It runs `habitus eval select|advise` and reads back which cases it got wrong. (Memory needs no
script: `habitus eval memory` reports per category and language itself.) A blind set is measured once:
run this after the method is final, record the figures with n and the date, and never tune on it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

HABITUS = Path(__file__).resolve().parent.parent / ".venv" / "bin" / "habitus"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _run(args: list[str], *, env: dict[str, str] | None = None, stdin: bytes = b"") -> dict[str, Any]:
    done = subprocess.run([str(HABITUS), *args], input=stdin, capture_output=True, env=env, check=False)
    if done.returncode != 0:
        sys.exit(f"habitus {' '.join(args[:2])} failed ({done.returncode}): {done.stderr.decode()[:500]}")
    return json.loads(done.stdout)


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def _tally(rows: list[tuple[str, str, set[str], set[str]]]) -> dict[str, Any]:
    """rows: (category, lang, expected, got) per case -> precision/recall per group."""
    groups: dict[str, dict[str, int]] = defaultdict(lambda: {"cases": 0, "tp": 0, "fp": 0, "fn": 0})
    for category, lang, expected, got in rows:
        for key in ("all", f"category:{category}", f"lang:{lang}", "lang:non-en" if lang != "en" else None):
            if key is None:
                continue
            g = groups[key]
            g["cases"] += 1
            g["tp"] += len(expected & got)
            g["fp"] += len(got - expected)
            g["fn"] += len(expected - got)
    return {
        key: {
            **g,
            "precision": _ratio(g["tp"], g["tp"] + g["fp"]),
            "recall": _ratio(g["tp"], g["tp"] + g["fn"]),
        }
        for key, g in sorted(groups.items())
    }


def judged(kind: str, cases_path: Path, habits: Path | None) -> dict[str, Any]:
    args = ["eval", kind, "--cases", str(cases_path)]
    if habits:
        args += ["--habits", str(habits)]
    result = _run(args)
    got_key = "selected" if kind == "select" else "raised"
    wrong = {m["id"]: set(m[got_key]) for m in result["misses"]}
    rows = []
    for case in _lines(cases_path):
        expected = set(case["expected"])
        rows.append((case["category"], case.get("lang", "en"), expected, wrong.get(case["id"], expected)))
    report = _tally(rows)
    if kind == "advise":
        quiet = [r for r in rows if not r[2]]
        report["false_notes_per_10_quiet_turns"] = round(10 * sum(bool(r[3]) for r in quiet) / len(quiet), 2)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=["select", "advise"])
    parser.add_argument("path", type=Path, help="the labelled cases (JSONL)")
    parser.add_argument("--habits", type=Path, help="habit catalog (default: habits.jsonl beside the cases)")
    args = parser.parse_args()
    report = judged(args.part, args.path, args.habits)
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
