"""Never invert the user: a correction that swaps one thing for another ("ugh, yarn again. bun.") is
proposed as "Do use bun, not yarn", in every shape and language the analyzer reads, through the
production path (capture, the local analyzer, the ledger)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analyze_helpers import capture
from conftest import run
from habitus.learn import replacement

REPLY = {
    "yarn": "I ran yarn install and added the dependency with yarn add.",
    "npm": "Installed it with npm install.",
    "unittest": "Wrote the tests with unittest.TestCase.",
    "requests": "Fetched it with requests.get.",
    "tabs": "Indented the file with tabs.",
    "moment": "Parsed the dates with moment.",
    "pip": "Installed it with pip install.",
    "mocha": "Added mocha specs.",
}

# (message, wanted, unwanted)
SWAPS = [
    ("ugh, yarn again. bun.", "bun", "yarn"),
    ("yarn again?! use bun", "bun", "yarn"),
    ("again yarn... bun please", "bun", "yarn"),
    ("not npm, pnpm", "pnpm", "npm"),
    ("pnpm, not npm", "pnpm", "npm"),
    ("no unittest, pytest", "pytest", "unittest"),
    ("pytest please, not unittest", "pytest", "unittest"),
    ("pytest instead of unittest", "pytest", "unittest"),
    ("requests again... httpx!", "httpx", "requests"),
    ("tabs again. spaces.", "spaces", "tabs"),
    ("moment again?? dayjs", "dayjs", "moment"),
    ("uv, not pip!!", "uv", "pip"),
    ("no, mocha no, vitest", "vitest", "mocha"),
    # German, Spanish, French, Portuguese, Italian, Russian, Japanese, Chinese
    ("ugh, yarn wieder. bun.", "bun", "yarn"),
    ("nein, nicht yarn, bun bitte", "bun", "yarn"),
    ("pytest statt unittest bitte", "pytest", "unittest"),
    ("otra vez yarn. usa bun", "bun", "yarn"),
    ("usa bun en lugar de yarn", "bun", "yarn"),
    ("no, yarn no, usa bun", "bun", "yarn"),
    ("encore yarn ! bun.", "bun", "yarn"),
    ("utilise bun au lieu de yarn", "bun", "yarn"),
    ("pas npm, pnpm svp", "pnpm", "npm"),
    ("de novo yarn? use bun", "bun", "yarn"),
    ("bun, não yarn", "bun", "yarn"),
    ("di nuovo yarn. bun per favore", "bun", "yarn"),
    ("опять yarn. bun!", "bun", "yarn"),
    ("не yarn, а bun", "bun", "yarn"),
    ("またyarn。bunを使って", "bun", "yarn"),
    ("yarnじゃなくてbunを使って", "bun", "yarn"),
    ("又是yarn。用bun", "bun", "yarn"),
    ("用bun，不要用yarn", "bun", "yarn"),
]

# Messages that name a swap-like shape but ask for none, or are for the sentence reader.
NOT_SWAPS = [
    "no, the block should stay as is",
    "not sure, maybe later",
    "read the full file, not just the top",
    "run the tests again",
    "yarn again",
    "userMessageText is not used it seems?",
    "no, dimGray should be that, no need for linkGray,",
    "i think the queued messages component doesn't adhere to the invariant",
]


@pytest.mark.parametrize(("message", "wanted", "unwanted"), SWAPS, ids=[s[0] for s in SWAPS])
def test_a_swap_is_read_the_right_way_round(message: str, wanted: str, unwanted: str) -> None:
    found = replacement.find(message, REPLY.get(unwanted, ""))
    assert found is not None, message
    assert (found.wanted, found.unwanted) == (wanted, unwanted)


@pytest.mark.parametrize("message", NOT_SWAPS)
def test_what_is_not_a_swap(message: str) -> None:
    before = " ".join(REPLY.values()) + " dimGray userMessageText the block"
    assert replacement.find(message, before) is None


def test_again_needs_the_agents_reply_to_name_it() -> None:
    # "X again" says the agent repeated X: without X in its last reply it is not read as a swap.
    assert replacement.find("ugh, yarn again. bun.", "Added the login form.") is None
    assert replacement.find("ugh, yarn again. bun.", REPLY["yarn"]) is not None


def _positive_part(behavior: str) -> str:
    """What a behaviour asks for: before its first 'not'/'no'/'instead of'."""
    if behavior.lower().startswith("do not "):
        return ""
    return re.split(r",?\s+(?:not|no|instead of|rather than)\s+", behavior, maxsplit=1)[0]


@pytest.mark.parametrize(("message", "wanted", "unwanted"), SWAPS[::3], ids=[s[0] for s in SWAPS[::3]])
def test_the_proposal_never_inverts_the_user(
    state_root: Path, message: str, wanted: str, unwanted: str
) -> None:
    assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    capture(
        state_root,
        [
            ("set up the project", REPLY[unwanted], "2026-05-01T10:00:00Z"),
            (message, "Switched.", "2026-05-01T10:05:00Z"),
        ],
    )
    proposals = run(["analyze"]).result["proposals"]
    assert proposals, message
    for proposal in proposals:
        asked = _positive_part(proposal["behavior"])
        assert not re.search(rf"\b{unwanted}\b", asked, re.IGNORECASE), proposal  # never "Do use yarn ..."
    assert any(
        _positive_part(p["behavior"]).lower().startswith(f"do use {wanted}".lower()) for p in proposals
    ), proposals


def test_repeated_swaps_collect_as_one_habit(state_root: Path) -> None:
    assert run(["config", "set", "capture.enabled", "true"]).exit == 0
    capture(
        state_root,
        [
            ("add the http client", REPLY["yarn"], "2026-05-01T10:00:00Z"),
            ("ugh, yarn again. bun.", "Switched to bun.", "2026-05-01T10:05:00Z"),
            ("add a linter", REPLY["yarn"], "2026-05-02T10:00:00Z"),
            ("yarn again?! use bun", "Sorry, bun.", "2026-05-02T10:05:00Z"),
            ("add the test runner", REPLY["yarn"], "2026-05-03T10:00:00Z"),
            ("nein, nicht yarn, bun bitte", "Bun it is.", "2026-05-03T10:05:00Z"),
        ],
    )
    proposals = run(["analyze"]).result["proposals"]
    bun = [p for p in proposals if "bun" in p["behavior"].lower()]
    assert len(bun) == 1 and bun[0]["stage"] == "reviewable", proposals
    assert not re.search(r"\byarn\b", _positive_part(bun[0]["behavior"]), re.IGNORECASE)
