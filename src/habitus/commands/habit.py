"""habitus habit: the human review lifecycle of habits."""

from __future__ import annotations

from typing import Any

import click

from habitus import io
from habitus.dispatch import StateCommand, StateGroup
from habitus.errors import HabitusError, bad_request
from habitus.options import output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": 'declare reads {"condition", "behavior", "polarity", "confidence_bp", "examples"} when '
    "--condition and --behavior are not given. approve, reject, disable, enable, archive and show read "
    '{"id", "checksum"} when REF is not given. list, recheck, export and import do not read stdin.',
    "stdout": 'list: {"v":1,"items":[{"n","id","status","condition","behavior","polarity","confidence_bp",'
    '"checksum","scope","projects","evidence":{"observations","days","stage"},"pending_relations",...}],'
    '"counts","snapshot_expires_at"}. show: {"v":1,"habit":{...,"evidence","relations","audit"}}. '
    'Every habit has "scope": "personal" (applies everywhere; "projects" null) or "project" (adopted '
    'from a repository\'s HABITS.md by `import --project`; "projects" lists the repository top '
    "folders it applies in: select and export use it only when the working directory is inside one). "
    'declare/approve/reject/disable/enable/archive: {"v":1,"habit":{...},"outcome"}. '
    'edit: {"v":1,"habit":{...},"outcome":"edited","original":{...},"evidence_copied"}. '
    'recheck: {"v":1,"checked","updated","suppressed","restored","law","vectors"}. '
    'example add/list/remove: {"v":1,"habit","examples":[{"id","text","source","created_at"}]}. '
    'export: {"v":1,"format","habits","left_out","text"}, or with --out {"v":1,"path","format","habits",'
    '"left_out","changed","created"}, with --check {...,"current":true}; left_out counts active habits '
    "not exported until `habit recheck` (checked against an older law); export writes personal habits "
    "and the project habits of the repository around the current directory. "
    'import: {"v":1,"source","sha256","project","items":[{"line","outcome","id","status","checksum",'
    '"scope","projects",...}],"rejected":[{"line","reason","message"}],"counts"}; "project" is the '
    "repository a --project import scopes its habits to (null otherwise); an existing project habit of "
    'another repository gains this one ("scope_added"); a personal habit with the same wording wins. '
    "A habit's checksum is its review checksum: SHA-256 over its normalised wording and polarity.",
    "files": "<root>/ledger.sqlite (habits, evidence, relations, audit, vectors, review snapshots); "
    "<root>/law.md (optional law: `deny: PHRASE` lines); the embedding model (see habitus-model(1)); "
    "export and import: CLAUDE.md, AGENTS.md, GEMINI.md, .cursor/rules/*.mdc, a repository's HABITS.md.",
}

REF_HELP = "A number from the last `habit list` (valid 15 minutes) or a habit id (h-...)."
_CHECKSUM = click.option(
    "--checksum", metavar="HEX", help="The checksum shown by `habit list`/`habit show` (>= 12 hex)."
)


@click.group(cls=StateGroup)
def cli() -> None:
    """Review habits: list, show, declare, approve, reject, ...

    Nothing is active without approval. `list` numbers what it shows for 15
    minutes, so people can say `habit approve 2`; scripts pass the id and the
    checksum that `list` or `show` printed. A changed wording, an expired list
    or a changed law answers `stale` (exit 3); a law conflict or an unresolved
    possible duplicate answers `refused` (exit 3). `export` writes the approved
    habits into CLAUDE.md, AGENTS.md, GEMINI.md or a Cursor rule; `import` reads
    such a file back as candidates.

    \b
    Examples:
      habitus habit list
      habitus habit approve 2
      habitus habit declare --condition "When a test fails" --behavior "Read the whole error first"
      habitus habit approve h-3f9a2c1b0d4e --checksum 9c1d2e3f4a5b
      habitus habit edit 2 --condition "When editing a file" --behavior "Read all of it first"
    """


def _open(root: StateRoot, wait: float) -> Any:
    from habitus.habits.store import Ledger

    return Ledger.open(root, wait=wait)


def _embedder(root: StateRoot) -> Any:
    from habitus.models.embedders import load_embedder

    return load_embedder(root)


def _target(ledger: Any, ref: str | None, checksum: str | None) -> tuple[str, str | None]:
    """(habit id, review checksum to enforce) from REF or the request on stdin."""
    if ref is None:
        request = io.read_request()
        ref = request.get("id")
        if not isinstance(ref, str):
            raise bad_request("id", "expected a habit id (or pass REF as an argument)")
        given = request.get("checksum", checksum)
        if given is not None and not isinstance(given, str):
            raise bad_request("checksum", "expected a string")
        checksum = given
    from habitus.habits import snapshot

    return snapshot.target(ledger, "habits", ref, checksum)


@cli.command("list")
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice(["candidate", "active", "disabled", "dormant", "archived", "suppressed_by_law"]),
    help="Only habits with this status (repeatable). Default: every status but archived.",
)
@click.option("--all", "show_all", is_flag=True, help="Include archived habits.")
@state_options
@output_options
def list_command(
    statuses: tuple[str, ...], show_all: bool, root: StateRoot, wait: float, pretty: bool
) -> None:
    """List habits, numbered for review.

    Candidates first, then active, disabled, dormant, suppressed and archived;
    within each, higher confidence first. The numbers stay valid for 15 minutes.

    \b
    Example:  habitus habit list --status candidate | jq -r '.items[] | "\\(.n) \\(.condition)"'
    """
    from habitus.habits.listing import listing

    with _open(root, wait) as ledger:
        result = listing(ledger, statuses, archived=show_all)
    io.write_result(result, pretty=pretty, human="habit.list")


@cli.command("show")
@click.argument("ref", required=False)
@state_options
@output_options
def show_command(ref: str | None, root: StateRoot, wait: float, pretty: bool) -> None:
    """Show one habit with its evidence, relations and audit trail.

    \b
    Example:  habitus habit show 1 --pretty
    """
    from habitus.habits import detail
    from habitus.habits.law import load_law

    with _open(root, wait) as ledger:
        habit_id, _ = _target(ledger, ref, None)
        body = detail.describe(ledger, habit_id, load_law(root))
    io.write_result({"habit": body}, pretty=pretty, human="habit.show")


@cli.command("declare")
@click.option("--condition", metavar="TEXT", help='When the habit applies, e.g. "When a test fails".')
@click.option("--behavior", metavar="TEXT", help='What to do then, e.g. "Read the whole error first".')
@click.option(
    "--polarity",
    type=click.Choice(["1", "-1"]),
    default=None,
    help="1 (default): a behaviour to do; -1: a behaviour to avoid.",
)
@click.option(
    "--confidence",
    "confidence_bp",
    type=click.IntRange(0, 10_000),
    default=None,
    help="Confidence in basis points (default 10000 for a declared habit).",
)
@click.option(
    "--example",
    "example_texts",
    multiple=True,
    metavar="TEXT",
    help="A prompt the habit applies to (repeatable); select compares new prompts with it too.",
)
@state_options
@output_options
def declare_command(
    condition: str | None,
    behavior: str | None,
    polarity: str | None,
    confidence_bp: int | None,
    example_texts: tuple[str, ...],
    root: StateRoot,
    wait: float,
    pretty: bool,
) -> None:
    """Create a habit from exact wording and activate it when nothing blocks it.

    Declaring is your confirmation of that exact wording, so the repeated-
    evidence rule does not apply; the law, conflicts and duplicate checks do.
    A blocked habit stays inactive and the result says why (outcome "blocked").

    \b
    Examples:
      habitus habit declare --condition "When I ask for a release" --behavior "Run the full test suite first"
      echo '{"condition": "When ...", "behavior": "Never ...", "polarity": -1}' | habitus habit declare
      habitus habit declare --condition "When writing a commit message" --behavior "Use the imperative" \\
          --example "commit this" --example "schreib die Commit-Nachricht"
    """
    from habitus.habits import examples
    from habitus.habits.lifecycle import DECLARED_CONFIDENCE, declare

    given: object = list(example_texts)
    if condition is None and behavior is None:
        request = io.read_request()
        condition, behavior = request.get("condition"), request.get("behavior")
        polarity_value: object = request.get("polarity", 1)
        confidence: object = request.get("confidence_bp", DECLARED_CONFIDENCE)
        given = request.get("examples", [])
    else:
        if condition is None or behavior is None:
            raise HabitusError("usage", "give both --condition and --behavior (or a request on stdin)")
        polarity_value = int(polarity or 1)
        confidence = DECLARED_CONFIDENCE if confidence_bp is None else confidence_bp
    from habitus.habits.wording import check_bp, check_polarity, clean_field

    # Refuse bad wording before touching the ledger or loading the model.
    clean_field("condition", condition)
    clean_field("behavior", behavior)
    check_polarity(polarity_value)
    check_bp("confidence_bp", confidence)
    if not isinstance(given, list) or len(given) > examples.MAX_PER_HABIT:
        raise bad_request("examples", f"expected a list of at most {examples.MAX_PER_HABIT} strings")
    texts = [examples.clean(t, f"examples[{i}]") for i, t in enumerate(given)]
    with _open(root, wait) as ledger:
        embedder = _embedder(root)
        result = declare(ledger, condition, behavior, polarity_value, confidence, embedder=embedder)
        if texts:
            examples.attach(ledger, embedder, result["habit"]["id"], texts, "declared")
            result["examples"] = examples.listed(ledger, result["habit"]["id"])
    io.write_result(result, pretty=pretty)


@cli.group("example")
def example_group() -> None:
    """Add, list or remove the example prompts of a habit.

    An example is a prompt the habit applies to: select compares a new prompt
    with a habit's condition and with its examples, and scores the habit by the
    closer one. Examples are redacted before they are stored and do not change
    the habit's approved wording; each change is recorded in its audit trail.

    \b
    Examples:
      habitus habit example add 1 "ship it to PyPI"
      habitus habit example list 1
      habitus habit example remove 1 3
    """


@example_group.command("add")
@click.argument("ref")
@click.argument("text")
@state_options
@output_options
def example_add_command(ref: str, text: str, root: StateRoot, wait: float, pretty: bool) -> None:
    """Record a prompt you confirm this habit applies to.

    \b
    Example:  habitus habit example add 2 "can you cut the 2.1 release"
    """
    from habitus.habits import examples

    cleaned = examples.clean(text, "text")
    with _open(root, wait) as ledger:
        habit_id, _ = _target(ledger, ref, None)
        examples.attach(ledger, _embedder(root), habit_id, [cleaned], "confirmed")
        items = examples.listed(ledger, habit_id)
    io.write_result({"habit": habit_id, "examples": items}, pretty=pretty)


@example_group.command("list")
@click.argument("ref")
@state_options
@output_options
def example_list_command(ref: str, root: StateRoot, wait: float, pretty: bool) -> None:
    """List a habit's example prompts.

    \b
    Example:  habitus habit example list 2 | jq -r '.examples[].text'
    """
    from habitus.habits import examples

    with _open(root, wait) as ledger:
        habit_id, _ = _target(ledger, ref, None)
        items = examples.listed(ledger, habit_id)
    io.write_result({"habit": habit_id, "examples": items}, pretty=pretty)


@example_group.command("remove")
@click.argument("ref")
@click.argument("example_id", type=click.IntRange(1))
@state_options
@output_options
def example_remove_command(ref: str, example_id: int, root: StateRoot, wait: float, pretty: bool) -> None:
    """Remove one example prompt (by the id `habit example list` shows).

    \b
    Example:  habitus habit example remove 2 3
    """
    from habitus.habits import examples

    with _open(root, wait) as ledger:
        habit_id, _ = _target(ledger, ref, None)
        examples.remove_one(ledger, habit_id, example_id, "user")
        items = examples.listed(ledger, habit_id)
    io.write_result({"habit": habit_id, "examples": items}, pretty=pretty)


def _action(
    name: str, summary: str, example: str, needs_model: bool, checksum_required: bool
) -> click.Command:
    @click.command(name, cls=StateCommand)
    @click.argument("ref", required=False, metavar="[REF]")
    @_CHECKSUM
    @state_options
    @output_options
    def command(ref: str | None, checksum: str | None, root: StateRoot, wait: float, pretty: bool) -> None:
        from habitus.habits import lifecycle

        with _open(root, wait) as ledger:
            habit_id, checksum = _target(ledger, ref, checksum)
            if checksum_required and checksum is None:
                raise HabitusError(
                    "usage",
                    f"{name} needs the checksum you reviewed: pass --checksum, or a number from `habit list`",
                )
            function = getattr(lifecycle, name)
            if needs_model:
                result = function(ledger, habit_id, checksum, embedder=_embedder(root))
            else:
                result = function(ledger, habit_id, checksum)
        io.write_result(result, pretty=pretty)

    command.help = f"{summary}\n\nREF: {REF_HELP}\n\n\b\nExample:  {example}"
    command.short_help = summary
    return command


cli.add_command(
    _action(
        "approve",
        "Activate a candidate, exactly as you reviewed it.",
        "habitus habit approve 2",
        needs_model=True,
        checksum_required=True,
    )
)
cli.add_command(
    _action(
        "reject",
        "Reject a candidate (archived; analyze will not propose it again).",
        "habitus habit reject 3",
        False,
        False,
    )
)
cli.add_command(
    _action(
        "disable", "Stop using an active habit (it stays approved).", "habitus habit disable 1", False, False
    )
)
cli.add_command(
    _action(
        "enable",
        "Use a disabled or dormant habit again (same checks as approval).",
        "habitus habit enable 1",
        True,
        False,
    )
)
cli.add_command(
    _action(
        "archive",
        "Archive a habit: hidden, kept with its audit trail.",
        "habitus habit archive 4",
        False,
        False,
    )
)


@cli.command("edit")
@click.argument("ref", metavar="REF")
@click.option("--condition", metavar="TEXT", required=True, help="The new condition, as you want it.")
@click.option("--behavior", metavar="TEXT", required=True, help="The new behaviour, as you want it.")
@_CHECKSUM
@state_options
@output_options
def edit_command(
    ref: str, condition: str, behavior: str, checksum: str | None, root: StateRoot, wait: float, pretty: bool
) -> None:
    """Reword a candidate and approve your wording as written.

    Your wording becomes a declared habit (same polarity) that keeps the
    candidate's evidence, activated through the same checks as `declare`; the
    candidate is rejected, so analyze does not propose it again. One
    transaction: a law conflict or a possible duplicate of an approved habit
    answers `refused` (exit 3) and writes nothing.

    \b
    Example:  habitus habit edit 2 --condition "When editing a file" --behavior "Read all of it first"
    """
    from habitus.habits.lifecycle import edit

    with _open(root, wait) as ledger:
        habit_id, checksum = _target(ledger, ref, checksum)
        if checksum is None:
            raise HabitusError(
                "usage",
                "edit needs the checksum you reviewed: pass --checksum, or a number from `habit list`",
            )
        result = edit(ledger, habit_id, checksum, condition, behavior, embedder=_embedder(root))
    io.write_result(result, pretty=pretty)


@cli.command("recheck")
@click.argument("refs", nargs=-1, metavar="[REF]...")
@state_options
@output_options
def recheck_command(refs: tuple[str, ...], root: StateRoot, wait: float, pretty: bool) -> None:
    """Check habits against the current law and rebuild missing vectors.

    Run it after editing law.md or switching the embedding model: until then
    habits checked against the old law stay inactive for `select`. Without REF,
    checks every habit that is not archived.

    \b
    Example:  habitus habit recheck
    """
    from habitus.habits.lifecycle import recheck

    with _open(root, wait) as ledger:
        ids = [_target(ledger, ref, None)[0] for ref in refs] or None
        result = recheck(ledger, ids, embedder=_embedder(root))
    io.write_result(result, pretty=pretty)


# export and import live in their own module (habitus.commands.habit_share)
from habitus.commands import habit_share  # noqa: E402

habit_share.attach(cli)
