"""habitus capture: hook events, transcripts and {user, assistant} pairs into the observation log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from habitus import codec, io
from habitus.dispatch import StateCommand
from habitus.errors import HabitusError, bad_request
from habitus.options import (
    harness_option,
    output_options,
    state_options,
    stream_options,
    transcript_format_option,
)
from habitus.state import config
from habitus.state.root import StateRoot

MAN = {
    "stdin": "Hook mode (--harness): the harness's hook event object (Claude Code, Codex and Gemini hook "
    "JSON; the event the Pi extension integrations/pi/habitus.ts sends; generic "
    '{"user","assistant","session","at"}). With --transcript: not read. Otherwise: one pair '
    '{"user": "...", "assistant": "...", "session": "...", "at": "..."}, or one per line with --nl.',
    "stdout": 'Hook mode: nothing. Otherwise: {"v":1,"appended","duplicates","redactions",'
    '"dropped":{"sensitive","incomplete"},"skipped_lines","generation","first_seq","last_seq"} '
    "(one per input line with --nl).",
    "files": "<root>/observations/: obs-<gen>.jsonl (records), obs-<gen>.idx (offset index), obs-<gen>.fp "
    "(fingerprints), tail.json (checksummed manifest), archive/ (rotated generations, expired after "
    "capture.retention_days), recovered-tails/ (torn bytes moved aside after a crash), pending/ (Codex "
    "prompts awaiting their Stop). Reads config.toml (capture.enabled, capture.retention_days).",
}


@click.command(cls=StateCommand)
@click.argument("notify_json", required=False, metavar="[EVENT_JSON]")
@click.option(
    "--transcript",
    type=click.Path(path_type=Path, dir_okay=True),
    metavar="FILE",
    help="Import a whole transcript file (Claude Code, Pi, Codex or Gemini CLI JSONL). Importing twice "
    "adds nothing.",
)
@transcript_format_option()
@harness_option
@state_options
@stream_options
@output_options
def cli(
    notify_json: str | None,
    transcript: Path | None,
    fmt: str,
    harness: str | None,
    root: StateRoot,
    wait: float,
    nl: bool,
    pretty: bool,
) -> None:
    """Store hook events and transcripts as redacted observations.

    Each observation is one user/assistant pair, redacted, bounded to 64 KiB and
    appended to the hash-chained observation log. Capture is off until
    `habitus config set capture.enabled true`: until then hook mode exits 0
    and stores nothing, and any other call answers the error code disabled
    (exit 3) without reading its input.

    In hook mode (--harness) nothing is printed. Codex's `notify` program may
    pass its event as the EVENT_JSON argument instead of stdin. On a terminal,
    stderr shows a progress bar for --transcript and --nl (--nl: unless stdout
    is a terminal too).

    \b
    Examples:
      habitus capture --harness claude-code          # in a Stop / SessionEnd hook
      habitus capture --transcript ~/.claude/projects/x/session.jsonl --pretty
      echo '{"user": "use tabs", "assistant": "ok"}' | habitus capture
    """
    settings = config.load(root)
    enabled = settings.get("capture.enabled")
    retention = settings.get("capture.retention_days")
    if harness is not None and transcript is not None:
        raise HabitusError("usage", "--transcript imports a file; it does not combine with --harness")
    if harness is not None:
        if not enabled:
            return  # off: a hook stays silent and stores nothing
        _hook(harness, notify_json, root=root, wait=wait, nl=nl, retention=retention)
        return
    if not enabled:
        raise HabitusError(
            "disabled",
            "capture is off: nothing was read or stored",
            hint="turn it on with: habitus config set capture.enabled true",
        )
    if notify_json is not None:
        raise HabitusError("usage", "EVENT_JSON is only read in hook mode", hint="add --harness codex")
    import sys

    from habitus import render
    from habitus.capture import import_transcript
    from habitus.render.progress import bar

    if transcript is not None:
        with bar("capture", "bytes") as progress:
            tally = import_transcript(
                root,
                transcript,
                format=None if fmt == "auto" else fmt,
                wait=wait,
                retention_days=retention,
                progress=progress,
            )
        io.write_result(tally.as_dict(), pretty=pretty)
        return
    if not nl or render.is_tty(sys.stdout):  # a result line per request already shows on a terminal
        for request in io.read_requests(nl):
            io.write_result(_pair(request, root=root, wait=wait, retention=retention), pretty=pretty)
        return
    with bar("capture", "requests") as progress:
        for number, request in enumerate(io.read_requests(nl), start=1):
            io.write_result(_pair(request, root=root, wait=wait, retention=retention), pretty=pretty)
            if progress is not None:
                progress(number)


def _hook(
    harness: str, notify_json: str | None, *, root: StateRoot, wait: float, nl: bool, retention: int
) -> None:
    from habitus.capture import capture_event
    from habitus.harness.events import parse_event

    if notify_json is not None:
        requests = iter([codec.parse_object(notify_json.encode("utf-8"), what="EVENT_JSON")])
    else:
        requests = io.read_requests(nl)
    for request in requests:
        capture_event(root, parse_event(harness, request), wait=wait, retention_days=retention)


def _pair(request: dict[str, Any], *, root: StateRoot, wait: float, retention: int) -> dict[str, Any]:
    from habitus.capture import capture_event
    from habitus.harness.events import parse_event

    for key in ("user", "assistant"):
        value = request.get(key)
        if not isinstance(value, str) or (key == "user" and not value.strip()):
            raise bad_request(key, "expected a non-empty string" if key == "user" else "expected a string")
    event = parse_event("generic", request)
    return capture_event(root, event, wait=wait, retention_days=retention, source="pair").as_dict()
