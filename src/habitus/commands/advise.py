"""habitus advise: review recent agent work and deliver at most one note; mute findings."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from habitus import io
from habitus.dispatch import StateGroup
from habitus.errors import HabitusError, bad_request
from habitus.options import harness_option, output_options, state_options, transcript_format_option
from habitus.state import config
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Hook mode (--harness): the harness's hook event (Claude Code, Codex and Gemini hook JSON; the "
    'event the Pi extension sends; generic {"user","assistant","session"}). With --transcript: not '
    'read. Otherwise: one pair {"user": "...", "assistant": "...", "session": "...", "cwd": "..."} to '
    "review. mute, unmute, mutes and resume read nothing.",
    "stdout": 'A review: {"v":1,"reviewed","reason","note":{"id","finding","note","severity","findingKey",'
    '"tag","reviewer","delivery","habit"}|null,"candidates","reviewers","slice","warnings","health"}. '
    'Hook mode: the harness\'s reply, or nothing: a blocker on Stop is {"decision":"block","reason"}; '
    "notes waiting for the next prompt come back on UserPromptSubmit as hookSpecificOutput."
    'additionalContext; a pause after three failed reviews is shown once as "systemMessage". '
    'mute/unmute: {"v":1,"id","finding","label","changed"}. mutes: {"v":1,"items":[{"id","finding",'
    '"label","at"}],"count"}. resume: {"v":1,"resumed"}.',
    "files": "<root>/ledger.sqlite (advise_sessions: per-session cursors; advise_findings; advise_notes: notes "
    "awaiting delivery; advise_health), <root>/mutes.json (user data, fail-closed), <repo>/.habitus/"
    "advise.toml (optional project narrowing), config.toml ([advise]).",
}


@click.group(cls=StateGroup, invoke_without_command=True)
@click.option(
    "--transcript",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help="Review the work in this transcript (Claude Code, Pi or Codex JSONL) since its last review.",
)
@transcript_format_option(("claude-code", "pi", "codex"))  # advise reads no Gemini transcript
@harness_option
@state_options
@output_options
@click.pass_context
def cli(
    ctx: click.Context,
    transcript: Path | None,
    fmt: str,
    harness: str | None,
    root: StateRoot,
    wait: float,
    pretty: bool,
) -> None:
    """Review recent agent work and deliver at most one note.

    Reads only the work that is new since the last review of the session (a
    cursor in the ledger), bounded to advise.max_slice_chars, with protected
    paths masked and secrets redacted. The local reviewer checks it against
    your approved habits and the law; a model reviewer (advise.model) can add
    one general note. Notes are nit, concern or blocker; a finding already
    delivered is suppressed unless its severity rose (re-raised) or its text
    changed a lot (possible duplicate); muted findings never come back.

    Advise is off until `habitus config set advise.enabled true`: hook mode then
    stays silent, and other calls answer the error code disabled (exit 3).

    \b
    Examples:
      habitus advise --harness claude-code       # Stop, PostToolUse and UserPromptSubmit hooks
      habitus advise --transcript session.jsonl --pretty
      habitus advise mute 1a2b3c4d
    """
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"root": root, "wait": wait, "pretty": pretty}
        return
    enabled = config.load(root).get("advise.enabled")
    if harness is not None:
        if transcript is not None:
            raise HabitusError("usage", "--transcript reviews a file; it does not combine with --harness")
        if not enabled:
            return  # off: a hook stays silent
        from habitus.advise.hook import handle
        from habitus.harness.events import parse_event

        io.write_reply(handle(harness, parse_event(harness, io.read_request()), root, wait=wait))
        return
    if not enabled:
        raise HabitusError(
            "disabled",
            "advise is off: nothing was reviewed",
            hint="turn it on with: habitus config set advise.enabled true",
        )
    from habitus.advise.review import Source, run

    if transcript is not None:
        from habitus.advise.slice import source_id

        if not transcript.is_file():
            raise HabitusError("not_found", f"{transcript}: no such transcript file")
        source = Source(
            f"file:{source_id(transcript)}",
            path=transcript,
            fmt=None if fmt == "auto" else fmt,
            cwd=os.getcwd(),
        )
    else:
        source = _pair(io.read_request())
    io.write_result(run(root, source, wait=wait, route=lambda _: "result").as_dict(), pretty=pretty)


def _pair(request: dict[str, Any]) -> Any:
    from habitus.advise.review import Source
    from habitus.harness.transcripts import Turn

    for key in ("user", "assistant", "session", "cwd"):
        if request.get(key) is not None and not isinstance(request[key], str):
            raise bad_request(key, "expected a string")
    assistant = request.get("assistant") or ""
    if not assistant.strip():
        raise bad_request("assistant", "expected the agent's work to review (a non-empty string)")
    user = request.get("user") or ""
    turn = Turn(user=user, assistant=assistant, continued=not user.strip())
    return Source(f"pair:{request.get('session') or 'default'}", turns=[turn], cwd=request.get("cwd"))


def _state(ctx: click.Context, root: StateRoot, wait: float, pretty: bool) -> tuple[StateRoot, float, bool]:
    """Options given after the subcommand win; otherwise those given to `advise` itself."""
    parent = ctx.obj or {}
    source = ctx.get_parameter_source
    if source("root") == click.core.ParameterSource.DEFAULT and "root" in parent:
        root = parent["root"]
    if source("wait") == click.core.ParameterSource.DEFAULT and "wait" in parent:
        wait = parent["wait"]
    return root, wait, pretty or parent.get("pretty", False)


@cli.command("mute")
@click.argument("finding_id", metavar="ID")
@state_options
@output_options
@click.pass_context
def mute(ctx: click.Context, finding_id: str, root: StateRoot, wait: float, pretty: bool) -> None:
    """Never deliver this finding again.

    ID is a hex prefix (6 or more digits) of a finding advise delivered
    recently, as shown in its note. A prefix shared by several findings is
    refused (ambiguous) with the candidates listed.

    \b
    Example:  habitus advise mute 1a2b3c4d
    """
    root, wait, pretty = _state(ctx, root, wait, pretty)
    from habitus.advise import mutes

    io.write_result(mutes.mute(root, finding_id, wait=wait), pretty=pretty)


@cli.command("unmute")
@click.argument("finding_id", metavar="ID")
@state_options
@output_options
@click.pass_context
def unmute(ctx: click.Context, finding_id: str, root: StateRoot, wait: float, pretty: bool) -> None:
    """Deliver this finding again when a review finds it.

    ID is a hex prefix (6 or more digits) of a muted finding (see `mutes`).

    \b
    Example:  habitus advise unmute 1a2b3c4d
    """
    root, wait, pretty = _state(ctx, root, wait, pretty)
    from habitus.advise import mutes

    io.write_result(mutes.unmute(root, finding_id, wait=wait), pretty=pretty)


@cli.command("mutes")
@state_options
@output_options
@click.pass_context
def list_mutes(ctx: click.Context, root: StateRoot, wait: float, pretty: bool) -> None:
    """List the muted findings.

    \b
    Example:  habitus advise mutes --pretty
    """
    root, wait, pretty = _state(ctx, root, wait, pretty)
    from habitus.advise import mutes

    io.write_result(mutes.listing(root), pretty=pretty, human="advise.mutes")


@cli.command("resume")
@state_options
@output_options
@click.pass_context
def resume(ctx: click.Context, root: StateRoot, wait: float, pretty: bool) -> None:
    """Resume reviews after advise paused itself.

    Advise pauses after three reviews in a row failed (a model that times out
    or answers invalidly, a missing embedding model). Fix the cause, then run this.

    \b
    Example:  habitus advise resume
    """
    root, wait, pretty = _state(ctx, root, wait, pretty)
    from habitus.advise import store

    io.write_result({"resumed": store.resume_reviews(root, wait=wait)}, pretty=pretty)
