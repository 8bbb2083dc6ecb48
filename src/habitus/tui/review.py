"""The `habitus review` screen: a list of what to decide on, the chosen item in full, one key per decision.

Every decision goes through `habitus.habits.review.apply` with the checksum the item was shown with, so
a habit or relation changed by another process since it was displayed is refused (`stale`), shown as
such, and nothing is written; the list is then read again. The ledger is opened for each read and each
decision only, so the screen holds no connection while the person reads. Habit wording is shown as
plain text (never as markup), whatever characters it contains.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Header, Input, Label, ListItem, ListView, Static

from habitus.errors import HabitusError
from habitus.habits import review
from habitus.habits.law import load_law
from habitus.habits.store import Ledger
from habitus.state.root import StateRoot

# key action -> the domain action it applies
KEYS = {
    "approve": "approve",
    "reject": "reject",
    "edit": "edit",
    "disable": "disable",
    "enable": "enable",
    "archive": "archive",
    "keep_separate": "keep-separate",
    "merge": "merge",
    "supersede": "supersede",
}
DONE = {
    "approve": "approved",
    "reject": "rejected",
    "edit": "edited",
    "disable": "disabled",
    "enable": "enabled",
    "archive": "archived",
    "keep-separate": "kept separate",
    "merge": "merged",
    "supersede": "superseded",
}


HELP = """Keys (the footer shows those that apply to the highlighted item)

  Up / Down, Home / End   move through the list
  a   approve a candidate, exactly as shown            (habit approve ID --checksum C)
  r   reject a candidate: analyze will not propose it   (habit reject)
  e   edit a candidate's wording: yours is approved as written, keeps the evidence, the original
      is rejected                                       (habit edit)
  k   keep a possible duplicate separate                (dedupe resolve --action keep-separate)
  m   merge a possible duplicate into the habit shown   (dedupe resolve --action merge)
  s   supersede: the habit shown becomes the active one (dedupe resolve --action supersede)
  d   disable an active habit (it stays approved)       (habit disable)
  n   enable a disabled or dormant habit                (habit enable)
  x   archive a habit                                   (habit archive)
  ?   this help (move to show an item again)
  q   quit: nothing is written but the decisions made

Every key passes the checksum of what is on the screen: if another process changed the item since,
the decision is refused and nothing is written.
"""


def _wording(habit: dict[str, Any]) -> str:
    verb = "" if habit["polarity"] == 1 else "Avoid: "
    return f"{habit['condition']} → {verb}{habit['behavior']}"


def title(item: review.Item) -> Text:
    """One line of the list."""
    body = item.body
    if item.kind == "relation":
        a, b = body["habits"]
        tag = "possible conflict" if body["kind"] == "conflict" else "possible duplicate"
        return Text.assemble((f"[{tag}] ", "bold magenta"), f"{a['condition']}  ≈  {b['condition']}")
    stage = body["evidence_summary"]["stage"]
    style = {"candidate": "bold yellow", "active": "bold green", "suppressed_by_law": "bold red"}
    return Text.assemble(
        (f"[{body['status']} · {stage}] ", style.get(body["status"], "bold")), _wording(body)
    )


def describe(item: review.Item) -> Text:
    """The whole item: wording, stage, evidence, relations and law findings (plain text, never markup)."""
    out = Text()
    body = item.body
    if item.kind == "relation":
        kind = "Possible conflict (opposite polarity)" if body["kind"] == "conflict" else "Possible duplicate"
        out.append(f"{kind}: similarity {body['similarity_bp'] / 100:.0f}%", "bold magenta")
        out.append(
            f" (condition {body['condition_bp'] / 100:.0f}%, behaviour {body['behavior_bp'] / 100:.0f}%)\n\n"
        )
        for label, habit in zip(("A", "B"), body["habits"], strict=True):
            out.append(f"{label}  {habit['id']}  {habit['status']}\n", "bold")
            out.append(f"   When: {habit['condition']}\n   Do:   {habit['behavior']}")
            out.append("" if habit["polarity"] == 1 else "  (avoid)")
            out.append("\n\n")
        letter = {habit["id"]: name for name, habit in zip(("A", "B"), body["habits"], strict=True)}
        keeps = {action: letter.get(kept, kept) for action, kept in body["keeps"].items()}
        if "merge" in item.actions:
            out.append(
                f"m merge keeps {keeps['merge']} (with both habits' evidence) and archives the other\n"
            )
        out.append(f"s supersede makes {keeps['supersede']} the active wording and archives the other\n")
        out.append("k keep separate leaves both as they are\n")
        return out
    out.append(
        f"{body['id']}  {body['status']}  ({body['origin']}, confidence {body['confidence_bp'] / 100:.0f}%)\n",
        "bold",
    )
    out.append("When: ", "bold")
    out.append(f"{body['condition']}\n")
    out.append("Do:   " if body["polarity"] == 1 else "Avoid: ", "bold")
    out.append(f"{body['behavior']}\n\n")
    summary = body["evidence_summary"]
    out.append(
        f"Stage: {summary['stage']}  ({summary['observations']} observations over {summary['days']} days)\n",
        "green" if summary["stage"] in ("reviewable", "declared") else "yellow",
    )
    if body.get("law") not in (None, "ok"):
        out.append(f"Law: {body['law']}\n", "bold red")
    for finding in body["law_findings"]:
        out.append("Law finding: ", "bold red")
        out.append(", ".join(f"{k}={v}" for k, v in sorted(finding.items())) + "\n")
    pending = [r for r in body["relations"] if r["decision"] == "pending"]
    for relation in pending:
        other = relation["habit_b"] if relation["habit_a"] == body["id"] else relation["habit_a"]
        out.append(f"Possible {relation['kind']} with {other} ", "bold magenta")
        out.append(f"({relation['similarity_bp'] / 100:.0f}%): decide it first (listed above)\n")
    if body["evidence"]:
        out.append("\nEvidence (redacted):\n", "bold")
        for entry in body["evidence"]:
            out.append(f"  {entry['day']}  ", "cyan")
            out.append(f"{entry['note'] or entry['ref']}\n")
    given = [e for e in body["examples"] if e["source"] != "evidence"]  # evidence notes are shown above
    if given:
        out.append("\nExample prompts:\n", "bold")
        for example in given:
            out.append(f"  {example['text']}\n")
    out.append(f"\nchecksum {item.checksum[:12]}", "dim")
    return out


class EditScreen(ModalScreen[tuple[str, str] | None]):
    """Two fields with the current wording; Enter on the last (or Save) returns the new one."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    EditScreen { align: center middle; }
    EditScreen > Vertical { width: 90%; height: auto; border: thick $accent; padding: 1 2; background: $panel; }
    EditScreen Horizontal { height: auto; }
    """

    def __init__(self, condition: str, behavior: str) -> None:
        super().__init__()
        self.condition, self.behavior = condition, behavior

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(
                "Edit the wording. The new wording is approved as you write it; the original is rejected."
            )
            yield Label("When:")
            yield Input(self.condition, id="condition")
            yield Label("Do:")
            yield Input(self.behavior, id="behavior")
            with Horizontal():
                yield Button("Save and approve", id="save", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "condition":
            self.query_one("#behavior", Input).focus()
        else:
            self._save()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self._save()
        else:
            self.dismiss(None)

    def _save(self) -> None:
        self.dismiss((self.query_one("#condition", Input).value, self.query_one("#behavior", Input).value))

    def action_cancel(self) -> None:
        self.dismiss(None)


class ReviewApp(App[None]):
    """Review candidates, possible duplicates and active habits; one key per decision."""

    TITLE = "habitus review"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    #list { width: 45%; border: round $primary; }
    #detail { width: 55%; border: round $secondary; padding: 0 1; }
    #message { height: auto; min-height: 1; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "approve", "Approve"),
        Binding("r", "reject", "Reject"),
        Binding("e", "edit", "Edit"),
        Binding("k", "keep_separate", "Keep separate"),
        Binding("m", "merge", "Merge"),
        Binding("s", "supersede", "Supersede"),
        Binding("d", "disable", "Disable"),
        Binding("n", "enable", "Enable"),
        Binding("x", "archive", "Archive"),
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
    ]

    def __init__(self, root: StateRoot, *, wait: float, embedder: Callable[[], Any] | None = None) -> None:
        super().__init__()
        self.root, self.wait = root, wait
        self.items: list[review.Item] = []
        self.decisions: list[dict[str, Any]] = []  # what was applied, in order (for the summary)
        self.last_error: HabitusError | None = None
        self._embedder: Any = None
        self._make_embedder = embedder

    # -- data ---------------------------------------------------------------------------------

    def embedder(self) -> Any:
        if self._embedder is None:
            if self._make_embedder is not None:
                self._embedder = self._make_embedder()
            else:
                from habitus.models.embedders import load_embedder

                self._embedder = load_embedder(self.root)
        return self._embedder

    def read(self) -> list[review.Item]:
        with Ledger.open(self.root, wait=self.wait) as ledger:
            return review.load(ledger, load_law(self.root))

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            yield ListView(id="list")
            with VerticalScroll(id="detail"):
                yield Static(id="body")
        yield Static(id="message")
        yield Footer()

    async def on_mount(self) -> None:
        await self.reload(0)
        self.query_one(ListView).focus()

    async def reload(self, index: int) -> None:
        try:
            self.items = self.read()
        except HabitusError as exc:  # keep showing the last list: every decision rechecks its checksum
            self.show_error(exc)
        view = self.query_one(ListView)
        await view.clear()
        await view.extend([ListItem(Label(title(item))) for item in self.items])
        self.sub_title = f"{len(self.items)} items" if self.items else "nothing to review"
        if self.items:
            view.index = max(0, min(index, len(self.items) - 1))
        self.show_current()

    @property
    def current(self) -> review.Item | None:
        index = self.query_one(ListView).index
        return self.items[index] if index is not None and 0 <= index < len(self.items) else None

    def show_current(self) -> None:
        item = self.current
        body = self.query_one("#body", Static)
        if item is None:
            body.update(Text("Nothing to review. `habitus analyze` proposes candidates from captured work."))
        else:
            body.update(describe(item))
        self.refresh_bindings()

    def on_list_view_highlighted(self, event: ListView.Highlighted) -> None:
        self.show_current()

    def message(self, text: Text) -> None:
        self.query_one("#message", Static).update(text)

    def show_error(self, exc: HabitusError) -> None:
        self.last_error = exc
        line = Text.assemble(("refused", "bold red"), f" ({exc.code}): {exc.message}")
        if exc.hint:
            line.append(f"  hint: {exc.hint}", "dim")
        self.message(line)

    # -- keys ---------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in KEYS:
            return True
        item = self.current
        return item is not None and KEYS[action] in item.actions

    async def decide(self, action: str, wording: tuple[str, str] | None = None) -> None:
        item = self.current
        if item is None or action not in item.actions:
            return
        index = self.query_one(ListView).index or 0
        try:
            with Ledger.open(self.root, wait=self.wait) as ledger:
                result = review.apply(ledger, item, action, embedder=self.embedder, wording=wording)
        except HabitusError as exc:
            self.show_error(exc)
            await self.reload(index)  # show what is there now
            return
        self.last_error = None
        self.decisions.append({"action": action, "id": item.id, "result": result})
        outcome = result.get("outcome") or result.get("relation", {}).get("decision", "")
        line = Text.assemble((DONE[action], "bold green"), f": {item.id}")
        if action == "edit" and outcome == "edited":
            line.append(f" → {result['habit']['id']}, approved as written", "dim")
        elif outcome:
            line.append(f" ({outcome})", "dim")
        self.message(line)
        await self.reload(index)

    def action_help(self) -> None:
        self.query_one("#body", Static).update(Text(HELP))

    def action_first(self) -> None:
        if self.items:
            self.query_one(ListView).index = 0

    def action_last(self) -> None:
        if self.items:
            self.query_one(ListView).index = len(self.items) - 1

    async def action_approve(self) -> None:
        await self.decide("approve")

    async def action_reject(self) -> None:
        await self.decide("reject")

    async def action_disable(self) -> None:
        await self.decide("disable")

    async def action_enable(self) -> None:
        await self.decide("enable")

    async def action_archive(self) -> None:
        await self.decide("archive")

    async def action_keep_separate(self) -> None:
        await self.decide("keep-separate")

    async def action_merge(self) -> None:
        await self.decide("merge")

    async def action_supersede(self) -> None:
        await self.decide("supersede")

    def action_edit(self) -> None:
        item = self.current
        if item is None or "edit" not in item.actions:
            return

        def done(wording: tuple[str, str] | None) -> None:
            if wording is not None and self.current is item:
                self.call_later(self.decide, "edit", wording)

        self.push_screen(EditScreen(item.body["condition"], item.body["behavior"]), done)
