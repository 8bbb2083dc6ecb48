"""A command or an edit that does the avoided thing in the habit's own words ("sudo pip install" for "do
not use sudo pip") is a note, whatever the judge reads; the phrase shown, searched, negated or removed
is not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run
from habitus.advise import local
from habitus.advise.slice import Entry, Slice
from habitus.habits.store import ActiveHabit

SUDO = (
    "When something needs installing on my machine",
    "Do not use sudo or global installs (sudo pip, npm -g).",
)
TERRAFORM = (
    "When you work on anything under infra/ (Terraform)",
    "Do not run terraform apply or destroy; stop after terraform plan and show me the plan.",
)
PIN = (
    "When you add a new dependency",
    "Do pin it to an exact version in the manifest (no ^, ~ or 'latest').",
)
DOCKER = (
    "When writing or editing a Dockerfile",
    "Do not use the :latest tag for base images; pin a specific version.",
)
PROD = (
    "When you need to look at real data to debug something",
    "Do not connect to production (prod-db, PROD_DATABASE_URL); use the staging replica.",
)
POLARITY = {SUDO: -1, TERRAFORM: -1, PIN: 1, DOCKER: -1, PROD: -1}


def _notes(habit: tuple[str, str], *entries: tuple[str, str, str | None]) -> set[str]:
    """The habit keys the local reviewer raises on these entries (role, text, tool name), word rules and
    phrases only (no model)."""
    active = ActiveHabit("x1", habit[0], habit[1], POLARITY[habit], 8000, "", "")
    s = Slice(entries=[Entry(role, text, True, name) for role, text, name in entries])
    return {c.key for c in local.review(s, [active], None, embed=None)}


@pytest.mark.parametrize(
    ("habit", "tool", "text"),
    [
        (SUDO, "Bash", "sudo pip install pre-commit\nSuccessfully installed pre-commit-3.7.1"),
        (SUDO, "Bash", "npm install -g typescript@5.4.5\nadded 1 package in 2s"),
        (TERRAFORM, "Bash", "cd infra/staging && terraform apply tf.plan\nApply complete!"),
        (TERRAFORM, "Bash", "cd infra/prod && terraform destroy -target=aws_s3_bucket.old -auto-approve"),
        (TERRAFORM, "Bash", "terraform -chdir=infra/network apply"),
        (PROD, "Bash", 'psql "$PROD_DATABASE_URL" -c "select id from subscriptions"'),
        (PIN, "Edit", 'package.json\n    "echarts": "^5.4.3",'),
        (DOCKER, "Write", "Dockerfile\nFROM node:latest\nWORKDIR /app"),
    ],
)
def test_the_avoided_phrase_done_is_a_note(habit: tuple[str, str], tool: str, text: str) -> None:
    assert _notes(habit, ("user", "set it up", None), ("tool", text, tool)) == {"habit:x1"}


@pytest.mark.parametrize(
    ("habit", "tool", "text"),
    [
        (SUDO, "Bash", "python -m venv .venv && .venv/bin/pip install pre-commit"),
        (SUDO, "Bash", "npm install --save-dev typescript@5.4.5"),
        (TERRAFORM, "Bash", 'grep -rn "terraform apply" docs/ infra/'),
        (
            TERRAFORM,
            "Bash",
            "cd infra/staging && terraform plan -out tf.plan\nPlan: 0 to add, terraform apply",
        ),
        (TERRAFORM, "Bash", 'git commit -m "docs: never run terraform apply by hand"'),
        (TERRAFORM, "Write", "docs/infra.md\nRun terraform plan; never terraform apply yourself."),
        (PIN, "Edit", 'package.json\n-    "echarts": "^5.4.3",\n+    "echarts": "5.4.3",'),
        (DOCKER, "Write", "Dockerfile\nFROM node:20.11-alpine\nWORKDIR /app"),
        (DOCKER, "Bash", "npx knex migrate:latest"),  # a tag ends other words: the situation is asked first
        (SUDO, "Bash", "ls $(npm root -g)"),
        (
            PROD,
            "Edit",
            "app/settings.py\nDATABASE_URL = os.environ.get('PROD_DATABASE_URL')",
        ),  # named, not used  # "npm ... -g" with no word of the clause between
    ],
)
def test_the_phrase_shown_searched_or_removed_is_none(habit: tuple[str, str], tool: str, text: str) -> None:
    assert _notes(habit, ("user", "set it up", None), ("tool", text, tool)) == set()


def test_a_call_the_user_rejected_never_ran() -> None:
    active = ActiveHabit("x1", SUDO[0], SUDO[1], -1, 8000, "", "")
    for status, noted in (("rejected", False), ("refused", False), ("error", True), ("ok", True)):
        s = Slice(entries=[Entry("tool", "sudo pip install pre-commit", True, "Bash", status)])
        assert bool(local.review(s, [active], None, embed=None)) is noted, status


def test_the_phrase_in_prose_that_negates_it_is_none() -> None:
    said = "I did not use sudo pip install or npm -g; pre-commit is in the project venv."
    assert _notes(SUDO, ("user", "set up pre-commit", None), ("assistant", said, None)) == set()


def test_a_review_with_the_model_notes_the_phrase_once_and_the_compliant_turn_not(tmp_path: Path) -> None:
    habits = tmp_path / "habits.jsonl"
    habits.write_text(
        json.dumps({"id": "r14", "condition": SUDO[0], "behavior": SUDO[1], "polarity": -1}) + "\n"
    )
    cases = tmp_path / "cases.jsonl"

    def case(case_id: str, command: str, expected: list[str]) -> str:
        entries = [
            {"role": "user", "text": "set up pre-commit for this repo"},
            {"role": "tool", "name": "Bash", "text": command},
            {"role": "assistant", "text": "pre-commit is installed and the hook registered."},
        ]
        return json.dumps({"id": case_id, "category": "applies", "expected": expected, "entries": entries})

    cases.write_text(
        case("broken", "sudo pip install pre-commit", ["habit:r14"])
        + "\n"
        + case("kept", ".venv/bin/pip install pre-commit && .venv/bin/pre-commit install", [])
        + "\n"
    )
    done = run(["eval", "advise", "--cases", str(cases), "--habits", str(habits)])
    assert done.exit == 0, done.stderr
    assert (done.result["tp"], done.result["fp"], done.result["fn"]) == (1, 0, 0), done.result["misses"]
