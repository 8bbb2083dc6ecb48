"""Shape checks for the hand-written evaluation data: select cases, analyze conversations, demo sample.

The figures in README are measured on these files, so a malformed line, a dangling habit id or a label
that contradicts its own evidence would silently skew them. These tests keep the data honest.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SELECT = FIXTURES / "select"

# Minimum number of cases per category; `expected` must be empty for the categories in NEVER_APPLIES.
MINIMUMS = {
    "applies": 50,
    "paraphrase": 35,
    "negation": 20,
    "quotation": 15,
    "meta": 15,
    "hypothetical": 20,
    "unrelated": 35,
    "near_miss": 25,
    "followup": 15,
    "mixed": 15,
}
NEVER_APPLIES = {"negation", "quotation", "meta", "hypothetical", "unrelated"}
ALWAYS_APPLIES = {"applies", "paraphrase", "mixed"}
CASE_KEYS = {"id", "prompt", "context", "expected", "category"}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"{path.name}:{number} is blank"
        row = json.loads(line)
        assert isinstance(row, dict), f"{path.name}:{number} is not an object"
        rows.append(row)
    return rows


@pytest.fixture(scope="module")
def habits() -> list[dict[str, Any]]:
    return read_jsonl(SELECT / "habits.jsonl")


@pytest.fixture(scope="module")
def cases() -> list[dict[str, Any]]:
    return read_jsonl(SELECT / "cases.jsonl")


# ---------------------------------------------------------------------------------------------- select


def test_habit_catalog_shape(habits: list[dict[str, Any]]) -> None:
    assert 25 <= len(habits) <= 40
    ids = [h["id"] for h in habits]
    assert len(set(ids)) == len(ids)
    assert len({h["condition"].lower() for h in habits}) == len(habits)
    for h in habits:
        assert set(h) == {"id", "condition", "behavior", "polarity"}, h["id"]
        assert re.fullmatch(r"h\d\d", h["id"])
        assert h["condition"].startswith("When ") and len(h["condition"]) <= 200, h["id"]
        assert h["behavior"].startswith("Do ") and len(h["behavior"]) <= 300, h["id"]
        assert h["polarity"] in (1, -1), h["id"]
        # An avoid-habit says what not to do; a do-habit never starts with a negation.
        assert h["behavior"].startswith("Do not ") == (h["polarity"] == -1), h["id"]


def test_case_shape(cases: list[dict[str, Any]], habits: list[dict[str, Any]]) -> None:
    known = {h["id"] for h in habits}
    ids = [c["id"] for c in cases]
    assert len(set(ids)) == len(ids)
    prompts = [c["prompt"].strip().lower() for c in cases]
    assert len(set(prompts)) == len(prompts), "duplicate prompts"
    for c in cases:
        cid = c["id"]
        assert CASE_KEYS <= set(c) <= CASE_KEYS | {"note"}, cid
        assert re.fullmatch(r"c\d{3}", cid)
        assert isinstance(c["prompt"], str) and c["prompt"].strip(), cid
        assert len(c["prompt"]) <= 2000, cid
        assert isinstance(c["context"], list) and len(c["context"]) <= 4, cid
        assert all(isinstance(m, str) and 0 < len(m) <= 300 for m in c["context"]), cid
        assert isinstance(c["expected"], list) and len(c["expected"]) <= 3, cid
        assert len(set(c["expected"])) == len(c["expected"]), cid
        assert set(c["expected"]) <= known, f"{cid} names an unknown habit"
        assert c["category"] in MINIMUMS, cid
        assert isinstance(c.get("note", ""), str), cid


def test_case_counts(cases: list[dict[str, Any]]) -> None:
    assert len(cases) >= 220
    counts = Counter(c["category"] for c in cases)
    for category, minimum in MINIMUMS.items():
        assert counts[category] >= minimum, f"{category}: {counts[category]} < {minimum}"


def test_labels_agree_with_categories(cases: list[dict[str, Any]]) -> None:
    for c in cases:
        if c["category"] in NEVER_APPLIES:
            assert c["expected"] == [], c["id"]
        if c["category"] in ALWAYS_APPLIES:
            assert c["expected"], c["id"]
        if c["category"] == "followup":
            assert c["context"] and c.get("note"), c["id"]
    near = [c for c in cases if c["category"] == "near_miss"]
    assert all(c.get("note") for c in near)
    assert sum(1 for c in near if not c["expected"]) >= 0.8 * len(near)
    follow = [c for c in cases if c["category"] == "followup"]
    # Both sides of the follow-up rule must be represented.
    assert sum(1 for c in follow if c["expected"]) >= 5
    assert sum(1 for c in follow if not c["expected"]) >= 5


def test_every_habit_is_expected_somewhere(cases: list[dict[str, Any]], habits: list[dict[str, Any]]) -> None:
    used = Counter(h for c in cases for h in c["expected"])
    for h in habits:
        assert used[h["id"]] >= 2, f"{h['id']} is expected in fewer than two cases"


# ---------------------------------------------------------------------------------------------- privacy

SECRET_PATTERNS = {
    "email": re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+"),
    "provider token": re.compile(
        r"\b(sk-[A-Za-z0-9_-]{16,}|sk_live_\w+|gh[pousr]_\w{20,}|github_pat_\w+|AKIA[0-9A-Z]{16}|xox[abpr]-[\w-]+)"
    ),
    "jwt": re.compile(r"\beyJ[\w-]{10,}\.[\w-]{10,}"),
    "private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    "long hex": re.compile(r"\b[0-9a-fA-F]{32,}\b"),
    "long opaque token": re.compile(r"\b(?=[A-Za-z0-9+/_-]*\d)(?=[A-Za-z0-9+/_-]*[A-Z])[A-Za-z0-9+/_-]{40,}"),
    "credential url": re.compile(r"\w+://[^/\s:@]+:[^/\s@]+@"),
    "home path": re.compile(r"(/home/|/Users/)[a-z]"),
}


def data_files() -> list[Path]:
    return sorted(p for p in SELECT.iterdir() if p.suffix in {".jsonl", ".json", ".md"})


@pytest.mark.parametrize("path", data_files(), ids=lambda p: p.name)
def test_no_secrets_or_personal_data(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for name, pattern in SECRET_PATTERNS.items():
        match = pattern.search(text)
        assert match is None, f"{path.name}: looks like a {name}: {match.group(0)[:12]}..."
