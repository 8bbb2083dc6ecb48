"""The whole loop through the production commands: corrections captured, `analyze` proposes a
habit, the user approves it, and `select` gives it for a prompt that paraphrases the situation it was
learned from (and not for an unrelated one). Select's evidence exemplars (the select branch) are not
merged here yet: this runs today's production select, and should only get easier with them."""

from __future__ import annotations

import json
from pathlib import Path

from analyze_helpers import FRICTION, capture
from conftest import run


def select(prompt: str) -> list[str]:
    out = run(["select"], stdin=json.dumps({"prompt": prompt}).encode())
    assert out.exit == 0, out.stderr
    return [h["id"] for h in out.result["habits"]]


def test_a_habit_learned_by_analyze_is_selected_for_a_paraphrase(state_root: Path) -> None:
    capture(state_root, FRICTION)  # three "don't print from library code" corrections over two days
    proposals = run(["analyze"]).result["proposals"]
    printing = [p for p in proposals if "print" in p["behavior"].lower()]
    assert len(printing) == 1 and printing[0]["stage"] == "reviewable", proposals
    listed = {h["id"]: h for h in run(["habit", "list"]).result["items"]}
    habit = listed[printing[0]["id"]]
    approved = run(["habit", "approve", habit["id"], "--checksum", habit["checksum"]])
    assert approved.exit == 0, approved.stderr
    active = approved.result["habit"]["id"]
    # Learned from "add a config loader" -> "Added load_config(), it prints a warning on bad keys" ->
    # "no, don't print from library code ..."; the prompts below say the situation in other words.
    assert select("print a warning from the library when the config has a bad key") == [active]
    assert select("the library code should print something when the file is missing") == [active]
    # Not "add a verbose flag to the cli": that is the prompt whose answer drew the first correction, and
    # since the prompt adapter select reads it as the printing situation; a near miss, not unrelated.
    assert select("add pagination to the users endpoint") == []
    assert select("what's the weather like") == []
