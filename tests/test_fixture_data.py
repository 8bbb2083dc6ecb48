"""Shape checks for the hand-written evaluation data: select cases, analyze conversations, demo sample.

The figures in README are measured on these files, so a malformed line, a dangling habit id or a label
that contradicts its own evidence would silently skew them. These tests keep the data honest.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SELECT = FIXTURES / "select"
ANALYZE = FIXTURES / "analyze"

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
OBSERVATION_KEYS = {"user", "assistant", "session", "at"}
HABIT_LABEL_KEYS = {"condition", "behavior", "polarity", "stage", "friction", "evidence_ats", "keywords"}
FACT_LABEL_KEYS = {"content", "kind", "evidence_ats", "keywords"}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"{path.name}:{number} is blank"
        row = json.loads(line)
        assert isinstance(row, dict), f"{path.name}:{number} is not an object"
        rows.append(row)
    return rows


def parse_at(value: str) -> datetime:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", value), f"not a UTC timestamp: {value!r}"
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def keywords_match(keywords: list[str], text: str) -> bool:
    """The documented rule: every keyword has one `|`-separated alternative in the text (case-insensitive)."""
    text = text.lower()
    return all(any(alt in text for alt in keyword.split("|")) for keyword in keywords)


def check_conversation(rows: list[dict[str, Any]], name: str) -> dict[str, dict[str, Any]]:
    """Observations have exactly the generic keys, unique ascending UTC timestamps; returns them by `at`."""
    assert rows, name
    ats = []
    for row in rows:
        assert set(row) == OBSERVATION_KEYS, f"{name}: keys {sorted(row)}"
        assert all(isinstance(row[k], str) and row[k].strip() for k in OBSERVATION_KEYS), name
        assert len(row["user"]) <= 2000 and len(row["assistant"]) <= 2000, name
        ats.append(parse_at(row["at"]))
    assert ats == sorted(ats) and len(set(ats)) == len(ats), f"{name}: timestamps not unique and ascending"
    assert len({at.date() for at in ats}) >= 2, f"{name}: spans a single day"
    return {row["at"]: row for row in rows}


def meets_gate(ats: list[str]) -> bool:
    """DESIGN section 4: a suggestion needs >= 3 cited observations across >= 2 UTC days."""
    return len(set(ats)) >= 3 and len({parse_at(at).date() for at in ats}) >= 2


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


def check_case_shape(cases: list[dict[str, Any]], habits: list[dict[str, Any]], id_pattern: str) -> None:
    known = {h["id"] for h in habits}
    ids = [c["id"] for c in cases]
    assert len(set(ids)) == len(ids)
    prompts = [c["prompt"].strip().lower() for c in cases]
    assert len(set(prompts)) == len(prompts), "duplicate prompts"
    for c in cases:
        cid = c["id"]
        assert CASE_KEYS <= set(c) <= CASE_KEYS | {"note"}, cid
        assert re.fullmatch(id_pattern, cid)
        assert isinstance(c["prompt"], str) and c["prompt"].strip(), cid
        assert len(c["prompt"]) <= 2000, cid
        assert isinstance(c["context"], list) and len(c["context"]) <= 4, cid
        assert all(isinstance(m, str) and 0 < len(m) <= 300 for m in c["context"]), cid
        assert isinstance(c["expected"], list) and len(c["expected"]) <= 3, cid
        assert len(set(c["expected"])) == len(c["expected"]), cid
        assert set(c["expected"]) <= known, f"{cid} names an unknown habit"
        assert c["category"] in MINIMUMS, cid
        assert isinstance(c.get("note", ""), str), cid


def test_case_shape(cases: list[dict[str, Any]], habits: list[dict[str, Any]]) -> None:
    check_case_shape(cases, habits, r"c\d{3}")


def test_case_counts(cases: list[dict[str, Any]]) -> None:
    assert len(cases) >= 220
    counts = Counter(c["category"] for c in cases)
    for category, minimum in MINIMUMS.items():
        assert counts[category] >= minimum, f"{category}: {counts[category]} < {minimum}"


def check_labels(cases: list[dict[str, Any]]) -> None:
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


def test_labels_agree_with_categories(cases: list[dict[str, Any]]) -> None:
    check_labels(cases)


def test_every_habit_is_expected_somewhere(cases: list[dict[str, Any]], habits: list[dict[str, Any]]) -> None:
    used = Counter(h for c in cases for h in c["expected"])
    for h in habits:
        assert used[h["id"]] >= 2, f"{h['id']} is expected in fewer than two cases"


def test_blind_set(cases: list[dict[str, Any]], habits: list[dict[str, Any]]) -> None:
    """cases_blind.jsonl: the same rules and categories, new prompts only, every category present."""
    blind = read_jsonl(SELECT / "cases_blind.jsonl")
    check_case_shape(blind, habits, r"b\d{3}")
    check_labels(blind)
    assert len(blind) >= 120
    assert set(Counter(c["category"] for c in blind)) == set(MINIMUMS)
    old = {c["prompt"].strip().lower() for c in cases}
    assert not [c["id"] for c in blind if c["prompt"].strip().lower() in old]
    used = Counter(h for c in blind for h in c["expected"])
    assert set(used) == {h["id"] for h in habits}


def test_followup_dev_set(habits: list[dict[str, Any]]) -> None:
    """dev_followup.jsonl: follow-ups only, both sides of the rule, at least six languages."""
    rows = read_jsonl(SELECT / "dev_followup.jsonl")
    check_case_shape(rows, habits, r"f\d{3}")
    check_labels(rows)
    assert len(rows) >= 60 and {c["category"] for c in rows} == {"followup"}
    languages = {c["note"].split(":")[0] for c in rows}
    assert len(languages) >= 6, languages


def test_negation_dev_set(habits: list[dict[str, Any]]) -> None:
    """dev_negation_multilingual.jsonl: negated, hypothetical and scoped requests in nine languages, and
    negated sentences that report an event; each row names its language."""
    rows = read_jsonl(SELECT / "dev_negation_multilingual.jsonl")
    check_case_shape([{k: v for k, v in r.items() if k != "lang"} for r in rows], habits, r"n\d{3}")
    for c in rows:
        assert c["expected"] == [] if c["category"] in NEVER_APPLIES else c["expected"], c["id"]
    by_language = Counter(c["lang"] for c in rows)
    assert set(by_language) == {"de", "es", "fr", "pt", "it", "ru", "ja", "zh", "ko"}
    assert min(by_language.values()) >= 6


# ---------------------------------------------------------------------------------------------- analyze


@pytest.fixture(scope="module")
def labels() -> dict[str, Any]:
    return json.loads((ANALYZE / "labels.json").read_text(encoding="utf-8"))


def test_every_conversation_is_labelled(labels: dict[str, Any]) -> None:
    assert labels["format"] == 1
    files = [c["file"] for c in labels["conversations"]]
    assert len(set(files)) == len(files)
    assert sorted(files) == sorted(p.name for p in ANALYZE.glob("*.jsonl"))
    assert 6 <= len(files) <= 10


def test_analyze_labels_cite_real_observations(labels: dict[str, Any]) -> None:
    stages: Counter[str] = Counter()
    for conv in labels["conversations"]:
        name = conv["file"]
        by_at = check_conversation(read_jsonl(ANALYZE / name), name)
        assert set(conv) == {"file", "summary", "habits", "facts", "not_habits"}, name
        for habit in conv["habits"]:
            assert set(habit) == HABIT_LABEL_KEYS, name
            assert habit["condition"].startswith("When ") and habit["behavior"].startswith("Do "), name
            assert habit["polarity"] in (1, -1) and isinstance(habit["friction"], bool), name
            assert habit["evidence_ats"] and set(habit["evidence_ats"]) <= set(by_at), (
                f"{name}: unknown evidence"
            )
            # The stage label must follow from the evidence, or the gate figures would be wrong.
            expected = "reviewable" if meets_gate(habit["evidence_ats"]) else "collecting"
            assert habit["stage"] == expected, f"{name}: {habit['condition']}"
            stages[habit["stage"]] += 1
            assert 1 <= len(habit["keywords"]) <= 4 and all(k == k.lower() and k for k in habit["keywords"])
            assert keywords_match(habit["keywords"], habit["condition"] + " " + habit["behavior"]), name
        for fact in conv["facts"]:
            assert set(fact) == FACT_LABEL_KEYS, name
            assert fact["kind"] in {"fact", "preference", "decision"}, name
            assert fact["evidence_ats"] and set(fact["evidence_ats"]) <= set(by_at), name
            assert keywords_match(fact["keywords"], fact["content"]), name
        for item in conv["not_habits"]:
            assert set(item) == {"at", "why"} and item["at"] in by_at, name
    # Both sides of the evidence gate are represented.
    assert stages["reviewable"] >= 5 and stages["collecting"] >= 4


def test_keyword_rule() -> None:
    assert keywords_match(["rgb|hex", "theme"], "When defining THEME colours / Do use hex values")
    assert not keywords_match(["rgb|hex", "theme"], "When defining theme colours / Do use palette indices")


# ---------------------------------------------------------------------------------------------- demo

# The demo's learnable habits: >= 3 corrections across >= 2 days each, cited by these timestamps.
DEMO_RELEASE = ["2026-10-05T10:46:00Z", "2026-10-06T15:18:00Z", "2026-10-07T11:34:00Z"]
DEMO_READ = ["2026-10-05T09:52:00Z", "2026-10-06T14:31:00Z", "2026-10-07T10:50:00Z"]


def demo_rows() -> list[dict[str, Any]]:
    text = (resources.files("habitus.demo") / "sample_conversation.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_demo_sample_shape() -> None:
    rows = demo_rows()
    by_at = check_conversation(rows, "sample_conversation.jsonl")
    assert len({parse_at(at).date() for at in by_at}) >= 3
    for ats, words in ((DEMO_RELEASE, ("release", "ready")), (DEMO_READ, ("whole file",))):
        assert meets_gate(ats)
        for at in ats:
            user = by_at[at]["user"].lower()
            assert all(w in user for w in words), at
            assert re.search(r"\b(no|again|always|i told you)\b", user), at
    assert any("remember" in r["user"].lower() and "main" in r["user"] for r in rows)
    # The final session calls the release ready without building or installing the artifact.
    last = [r for r in rows if r["session"] == rows[-1]["session"]]
    claim = last[-1]["assistant"].lower()
    assert "release is ready" in claim
    assert not re.search(r"wheel|sdist|install|artifact|venv", " ".join(r["assistant"].lower() for r in last))


# ---------------------------------------------------------------------------------------------- privacy

SECRET_PATTERNS = {
    # A domain ends in letters: npm's "> web@1.4.0 build" names a package version, not an address.
    "email": re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)*\.[A-Za-z]{2,}\b"),
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
    files = [
        p
        for folder in (SELECT, ANALYZE, FIXTURES / "analyze_heldout", FIXTURES / "analyze_blind")
        for p in folder.iterdir()
        if p.suffix in {".jsonl", ".json", ".md"}
    ]
    demo = resources.files("habitus.demo") / "sample_conversation.jsonl"
    return [*sorted(files), Path(str(demo))]


@pytest.mark.parametrize("path", data_files(), ids=lambda p: p.name)
def test_no_secrets_or_personal_data(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for name, pattern in SECRET_PATTERNS.items():
        match = pattern.search(text)
        assert match is None, f"{path.name}: looks like a {name}: {match.group(0)[:12]}..."
