"""`habitus review` driven through Textual's test pilot on a real analyzed root; each decision's ledger is
compared with a second copy of the root where the same decision was made by the equivalent command."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import run
from review_helpers import GOFMT, PARAPHRASE, build, copy, dump, ids, normalised

pytest.importorskip("textual")

from habitus.habits import review
from habitus.models.embedders import load_embedder
from habitus.state.root import StateRoot
from habitus.tui.review import ReviewApp

pytestmark = pytest.mark.slow
_EMBEDDER: list[Any] = []


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("review") / "base"
    build(root)
    return root


@pytest.fixture
def pair(base: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Two identical copies of the base root: one for the review screen, one for the commands."""
    return copy(base, tmp_path / "by-review"), copy(base, tmp_path / "by-commands")


def embedder() -> Any:
    if not _EMBEDDER:
        _EMBEDDER.append(load_embedder(StateRoot.at(None)))
    return _EMBEDDER[0]


def drive(root: Path, steps: Callable[[ReviewApp, Any], Awaitable[None]]) -> ReviewApp:
    app = ReviewApp(StateRoot.at(str(root)), wait=2, embedder=embedder)

    async def main() -> None:
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            await steps(app, pilot)
            await pilot.press("q")

    asyncio.run(main())
    return app


def find(app: ReviewApp, test: Callable[[review.Item], bool]) -> int:
    matches = [i for i, item in enumerate(app.items) if test(item)]
    assert len(matches) == 1, [(i.kind, i.id) for i in app.items]
    return matches[0]


async def select(app: ReviewApp, pilot: Any, index: int) -> None:
    """Move the highlight with the arrow keys, as a person does."""
    await pilot.press("home")
    for _ in range(index):
        await pilot.press("down")
    await pilot.pause()
    assert app.current is app.items[index]


def analyzed(about: str) -> Callable[[review.Item], bool]:
    return lambda i: i.kind == "habit" and i.body["origin"] == "analyzed" and about in i.body["behavior"]


def habit_named(condition: str) -> Callable[[review.Item], bool]:
    return lambda i: i.kind == "habit" and i.body["condition"] == condition


def same_ledger(by_review: Path, by_commands: Path, base: Path) -> None:
    known = ids(base)
    assert normalised(by_review, known) == normalised(by_commands, known)


def item_of(root: Path, test: Callable[[review.Item], bool]) -> review.Item:
    from habitus.habits.law import load_law
    from habitus.habits.store import Ledger

    state = StateRoot.at(str(root))
    with Ledger.open(state, wait=2) as ledger:
        found = [i for i in review.load(ledger, load_law(state)) if test(i)]
    assert len(found) == 1
    return found[0]


def command(root: Path, *args: str) -> dict[str, Any]:
    out = run([*args, "--root", str(root)])
    assert out.exit == 0, out.stderr
    return out.result


# -- each decision, against its command ----------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "about", "verb"), [("a", "read the whole file", "approve"), ("r", "wheel", "reject")]
)
def test_approve_and_reject_match_the_commands(
    pair: tuple[Path, Path], base: Path, key: str, about: str, verb: str
) -> None:
    by_review, by_commands = pair
    target = item_of(by_commands, analyzed(about))
    assert target.body["status"] == "candidate" and target.body["evidence_summary"]["stage"] == "reviewable"

    async def steps(app: ReviewApp, pilot: Any) -> None:
        await select(app, pilot, find(app, analyzed(about)))
        await pilot.press(key)
        await pilot.pause()

    app = drive(by_review, steps)
    assert app.last_error is None and [d["action"] for d in app.decisions] == [verb]
    command(by_commands, "habit", verb, target.id, "--checksum", target.checksum)
    after = {h["id"]: h for h in dump(by_review)["habits"]}[target.id]
    assert after["status"] == ("active" if verb == "approve" else "archived")
    same_ledger(by_review, by_commands, base)


def test_edit_then_approve_matches_habit_edit(pair: tuple[Path, Path], base: Path) -> None:
    by_review, by_commands = pair
    target = item_of(by_commands, analyzed("read the whole file"))
    condition, behavior = "When editing a file", "Read the whole file before changing any of it"

    async def steps(app: ReviewApp, pilot: Any) -> None:
        await select(app, pilot, find(app, analyzed("read the whole file")))
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("home", "ctrl+k", *condition, "enter")
        await pilot.press("home", "ctrl+k", *behavior, "enter")
        await pilot.pause()

    app = drive(by_review, steps)
    assert app.last_error is None, app.last_error and app.last_error.message
    assert app.decisions[0]["result"]["outcome"] == "edited"
    command(
        by_commands,
        "habit",
        "edit",
        target.id,
        "--checksum",
        target.checksum,
        "--condition",
        condition,
        "--behavior",
        behavior,
    )
    rows = dump(by_review)
    new = [h for h in rows["habits"] if h["condition"] == condition]
    assert len(new) == 1 and new[0]["status"] == "active" and new[0]["behavior"] == behavior
    assert {h["id"]: h for h in rows["habits"]}[target.id]["reason"] == "rejected"

    def cited(habit_id: str) -> list[tuple[str, str]]:
        return [(e["ref"], e["day"]) for e in rows["habit_evidence"] if e["habit_id"] == habit_id]

    assert len(cited(target.id)) == 3 and cited(new[0]["id"]) == cited(target.id)
    # the evidence's example prompts came along, with vectors: select can use the new habit at once
    with sqlite3.connect(by_review / "ledger.sqlite") as conn:
        examples = conn.execute(
            "SELECT id FROM habit_examples WHERE habit_id = ?", (new[0]["id"],)
        ).fetchall()
        embedded = conn.execute(
            "SELECT DISTINCT example_id FROM habit_example_vectors WHERE example_id IN "
            "(SELECT id FROM habit_examples WHERE habit_id = ?)",
            (new[0]["id"],),
        ).fetchall()
    assert len(examples) == 3 and sorted(embedded) == sorted(examples)
    same_ledger(by_review, by_commands, base)


@pytest.mark.parametrize(("key", "action"), [("k", "keep-separate"), ("m", "merge"), ("s", "supersede")])
def test_duplicate_decisions_match_dedupe_resolve(
    pair: tuple[Path, Path], base: Path, key: str, action: str
) -> None:
    by_review, by_commands = pair
    relation = item_of(by_commands, lambda i: i.kind == "relation")
    assert {h["condition"] for h in relation.body["habits"]} >= {PARAPHRASE[0]}

    async def steps(app: ReviewApp, pilot: Any) -> None:
        await select(app, pilot, find(app, lambda i: i.kind == "relation"))
        await pilot.press(key)
        await pilot.pause()

    app = drive(by_review, steps)
    assert app.last_error is None and app.decisions[0]["action"] == action
    command(
        by_commands, "dedupe", "resolve", relation.id, "--checksum", relation.checksum, "--action", action
    )
    decided = {r["id"]: r for r in dump(by_review)["habit_relations"]}[relation.id]
    assert (
        decided["decision"]
        == {"keep-separate": "kept_separate", "merge": "merged", "supersede": "superseded"}[action]
    )
    same_ledger(by_review, by_commands, base)


@pytest.mark.parametrize(
    ("keys", "verbs", "status"),
    [("d", ["disable"], "disabled"), ("dn", ["disable", "enable"], "active"), ("x", ["archive"], "archived")],
)
def test_disable_enable_archive_of_an_active_habit_match_the_commands(
    pair: tuple[Path, Path], base: Path, keys: str, verbs: list[str], status: str
) -> None:
    by_review, by_commands = pair
    target = item_of(by_commands, habit_named(GOFMT[0]))
    assert target.body["status"] == "active"

    async def steps(app: ReviewApp, pilot: Any) -> None:
        await pilot.press("a", "r")  # neither applies to the highlighted duplicate: nothing happens
        for key in keys:
            await select(app, pilot, find(app, habit_named(GOFMT[0])))
            await pilot.press("a")  # approve does not apply to an active habit: nothing happens
            await pilot.press(key)
            await pilot.pause()

    app = drive(by_review, steps)
    assert [d["action"] for d in app.decisions] == verbs
    for verb in verbs:
        command(by_commands, "habit", verb, target.id, "--checksum", target.checksum)
    assert {h["id"]: h for h in dump(by_review)["habits"]}[target.id]["status"] == status
    same_ledger(by_review, by_commands, base)


def test_law_findings_are_shown_and_approval_is_not_offered(base: Path, tmp_path: Path) -> None:
    root = copy(base, tmp_path / "root")
    (root / "law.md").write_text("deny: wheel\n", encoding="utf-8")
    os.chmod(root / "law.md", 0o600)
    command(root, "habit", "recheck")
    before = dump(root, exact=True)
    shown: list[str] = []

    async def steps(app: ReviewApp, pilot: Any) -> None:
        index = find(app, analyzed("wheel"))
        assert app.items[index].body["status"] == "suppressed_by_law"
        await select(app, pilot, index)
        shown.append(str(app.query_one("#body").render()))
        assert app.check_action("approve", ()) is False and app.check_action("reject", ()) is True
        await pilot.press("a")
        await pilot.pause()

    app = drive(root, steps)
    assert "Law finding" in shown[0] and "wheel" in shown[0]
    assert app.decisions == [] and dump(root, exact=True) == before


def test_a_new_user_goes_from_analyze_to_approved_without_a_checksum(pair: tuple[Path, Path]) -> None:
    """The screen shows the candidate's evidence (redacted quotes, days); approving it first meets the
    possible duplicate the gate found, which is shown, kept separate with one key, then approved."""
    by_review, _ = pair
    shown: list[str] = []

    async def steps(app: ReviewApp, pilot: Any) -> None:
        await select(app, pilot, find(app, analyzed("wheel")))
        candidate = app.current
        assert candidate is not None
        shown.append(str(app.query_one("#body").render()))
        await pilot.press("a")
        await pilot.pause()
        shown.append(str(app.query_one("#message").render()))
        assert app.last_error is not None and app.last_error.code == "refused"
        await select(
            app,
            pilot,
            find(app, lambda i: i.kind == "relation" and candidate.id in {h["id"] for h in i.body["habits"]}),
        )
        await pilot.press("k")
        await select(app, pilot, find(app, analyzed("wheel")))
        await pilot.press("a")
        await pilot.pause()
        shown.append(str(app.query_one("#message").render()))

    app = drive(by_review, steps)
    text, refused, approved = shown
    assert "Stage: reviewable" in text and "Evidence (redacted):" in text and "2026-10-0" in text
    assert "refused" in refused and "duplicates" in refused
    assert "approved" in approved and [d["action"] for d in app.decisions] == ["keep-separate", "approve"]
    assert app.decisions[1]["result"]["outcome"] == "activated"


# -- nothing written unless decided ------------------------------------------------------------------


def test_quitting_without_a_decision_changes_nothing(pair: tuple[Path, Path]) -> None:
    by_review, _ = pair
    before = dump(by_review, exact=True)

    async def steps(app: ReviewApp, pilot: Any) -> None:
        await pilot.press("down", "down", "up")

    app = drive(by_review, steps)
    assert app.decisions == [] and len(app.items) >= 5
    assert dump(by_review, exact=True) == before


# What analyze's rewording does to a candidate (lifecycle.propose_candidate, same candidate_key): the
# local analyzer writes no keys, so the other process applies that row change directly.
CHANGE = """
import sys
from habitus.habits import rows, similar
from habitus.habits.store import Ledger, get_habit
from habitus.habits.wording import wording_checksum
from habitus.state.root import StateRoot
with Ledger.open(StateRoot.at(sys.argv[1]), wait=5) as ledger, ledger.tx():
    habit = get_habit(ledger.conn, sys.argv[2])
    behavior = "Do read the entire file first."
    rows.change(ledger.conn, "habits", habit, "reword", "analyze", behavior=behavior,
                wording=wording_checksum(habit["condition"], behavior, habit["polarity"]))
    similar.dismiss_pending(ledger.conn, habit["id"], actor="analyze", why="reworded")
print("reworded")
"""


def test_a_habit_changed_by_another_process_is_refused_and_nothing_written(pair: tuple[Path, Path]) -> None:
    by_review, _ = pair
    seen: dict[str, Any] = {}

    async def steps(app: ReviewApp, pilot: Any) -> None:
        index = find(app, analyzed("read the whole file"))
        await select(app, pilot, index)
        item = app.items[index]
        # analyze, in another process, rewords the candidate while it is on screen
        done = subprocess.run([sys.executable, "-c", CHANGE, str(by_review), item.id], capture_output=True)
        assert done.stdout.strip() == b"reworded", done.stderr
        seen["before"] = dump(by_review, exact=True)
        await pilot.press("a")
        await pilot.pause()
        seen["message"] = str(app.query_one("#message").render())
        seen["after"] = dump(by_review, exact=True)

    app = drive(by_review, steps)
    assert app.decisions == [] and app.last_error is not None and app.last_error.code == "stale"
    assert "refused" in seen["message"] and "stale" in seen["message"]
    assert seen["after"] == seen["before"]
    # the list was read again: the item now shows the new wording, still a candidate
    item = item_of(by_review, analyzed("entire file"))
    assert item.body["status"] == "candidate"


def test_a_busy_ledger_at_the_key_press_is_refused_and_nothing_written(pair: tuple[Path, Path]) -> None:
    by_review, _ = pair
    seen: dict[str, Any] = {}

    async def steps(app: ReviewApp, pilot: Any) -> None:
        await select(app, pilot, find(app, habit_named(GOFMT[0])))
        seen["before"] = dump(by_review, exact=True)
        holder = sqlite3.connect(by_review / "ledger.sqlite", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            await pilot.press("d")
            await pilot.pause()
            seen["shown"] = len(app.items)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        seen["after"] = dump(by_review, exact=True)

    app = drive(by_review, steps)
    assert app.decisions == [] and app.last_error is not None and app.last_error.code == "state_locked"
    assert seen["after"] == seen["before"]
    assert seen["shown"] >= 5  # the list stays on screen while the ledger is busy


# -- the command's refusals ----------------------------------------------------------------------


def test_refuses_without_a_terminal(base: Path, tmp_path: Path) -> None:
    root = copy(base, tmp_path / "root")
    before = dump(root, exact=True)
    out = run(["review", "--root", str(root)])
    assert out.exit == 2 and out.error["code"] == "usage" and out.stdout == b""
    done = subprocess.run(
        [sys.executable, "-m", "habitus", "review", "--root", str(root)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2 and b'"code":"usage"' in done.stderr and done.stdout == b""
    assert dump(root, exact=True) == before


def test_the_review_queue_lists_duplicates_first_then_candidates_then_active(
    base: Path, tmp_path: Path
) -> None:
    root = copy(base, tmp_path / "root")
    from habitus.habits.law import load_law
    from habitus.habits.store import Ledger

    state = StateRoot.at(str(root))
    with Ledger.open(state, wait=2) as ledger:
        queue = review.load(ledger, load_law(state))
    kinds = [i.kind if i.kind == "relation" else i.body["status"] for i in queue]
    assert kinds == sorted(kinds, key=["relation", "candidate", "suppressed_by_law", "active"].index)
    listed = run(["habit", "list", "--root", str(root)]).result["items"]
    assert {i["id"]: i["checksum"] for i in listed} == {i.id: i.checksum for i in queue if i.kind == "habit"}
    assert all(i.actions == review.RELATION_ACTIONS["duplicate"] for i in queue if i.kind == "relation")


def test_help_lists_every_key_and_an_empty_root_says_there_is_nothing_to_review(tmp_path: Path) -> None:
    shown: list[str] = []

    async def steps(app: ReviewApp, pilot: Any) -> None:
        shown.append(str(app.query_one("#body").render()))
        assert app.check_action("approve", ()) is False
        await pilot.press("a", "question_mark")
        await pilot.pause()
        shown.append(str(app.query_one("#body").render()))

    app = drive(tmp_path / "fresh", steps)
    empty, help_text = shown
    assert app.items == [] and "Nothing to review" in empty
    for key, verb in (
        ("a", "approve"),
        ("r", "reject"),
        ("e", "edit"),
        ("k", "keep"),
        ("m", "merge"),
        ("s", "supersede"),
        ("d", "disable"),
        ("n", "enable"),
        ("x", "archive"),
        ("q", "quit"),
    ):
        assert f"  {key}   {verb}" in help_text, key


def test_wording_is_shown_as_plain_text_never_as_markup(tmp_path: Path) -> None:
    root = tmp_path / "root"
    condition, behavior = (
        "When a [bold]tag[/bold] or [link=http://x]link[/link] shows up",
        "Quote it [red]as is[/]",
    )
    command(root, "habit", "declare", "--condition", condition, "--behavior", behavior)
    shown: list[str] = []

    async def steps(app: ReviewApp, pilot: Any) -> None:
        shown.append(str(app.query_one("#body").render()))

    drive(root, steps)
    assert condition in shown[0] and behavior in shown[0]
