"""habitus hook: answer one hook event with every habitus command planned for it, in one process."""

from __future__ import annotations

import functools
from typing import Any

import click

from habitus import io
from habitus.options import root_option, wait_option

HOOK_HARNESSES = ("claude-code", "codex", "gemini", "pi")

MAN = {
    "stdin": "The harness's hook event (Claude Code, Codex and Gemini hook JSON; the event the Pi extension "
    "sends), with its hook_event_name.",
    "stdout": "The harness's reply for that event, or nothing: the replies of the commands it ran, merged "
    "(their additionalContext joined by a blank line, in the order they ran; a Stop blocker's "
    '{"decision","reason"}; systemMessage lines joined). For Pi always an object, with "budget_ms" '
    "(hooks.budget_ms: the deadline the extension gives the calls it does not wait for) and, while the "
    'warm worker is on, "worker": {"socket", "code"}: where the extension may send the session\'s next '
    "events itself.",
    "files": "Whatever the commands it runs read and write (see habitus-select(1), habitus-advise(1), "
    "habitus-capture(1), habitus-memory(1)); failures go to <root>/errors.jsonl.",
}


@click.command()
@click.option(
    "--harness",
    type=click.Choice(HOOK_HARNESSES),
    required=True,
    help="The harness whose event this is (its protocol in and out).",
)
@root_option(resolve=False)
@wait_option("Lock wait handed to each command (a hook caps it at hooks.lock_wait_ms).")
def cli(harness: str, root: str | None, wait: float) -> None:
    """Answer one hook event with every habitus command planned for it.

    What `hooks install` writes for each event. It reads the event once and
    runs, in this process (or the warm worker), the commands habitus runs on
    that event, in order, each exactly as it runs alone with --harness (the
    same stdin, its own failures logged and silent); then it writes one
    reply. Claude Code and Codex UserPromptSubmit: select, advise (Codex:
    capture first); Stop: capture, advise; SessionStart: memory index;
    SessionEnd, PreCompact: capture. Gemini BeforeAgent: select, advise;
    AfterAgent: capture, advise. Pi: what its extension sends. An event
    with no command answers nothing. The whole call has one hook budget
    (hooks.budget_ms): a command that would start after it is not run.
    The session is over at SessionEnd (Pi: session_shutdown): the warm
    worker answers it at once and runs its commands after the answer.

    \b
    Examples:
      habitus hook --harness claude-code     # any Claude Code hook event
      echo '{"hook_event_name": "SessionStart"}' | habitus hook --harness codex
    """
    from habitus import hookmode
    from habitus.cli import run_line
    from habitus.harness import later
    from habitus.harness.plan import AFTER_ANSWER, commands_for
    from habitus.harness.reply import merge

    data, request = io.read_request_bytes()
    name = request.get("hook_event_name")
    if not isinstance(name, str):
        return
    tail = [*(["--root", root] if root is not None else []), "--wait", repr(wait), "--harness", harness]
    replies: list[dict[str, Any] | None] = []
    for args in commands_for(harness, name):
        if name in AFTER_ANSWER and later.queueing():
            later.add(functools.partial(run_line, [*args, *tail], data))
            continue
        if hookmode.expired():
            hookmode.log(hookmode.deadline_error(f"before {' '.join(args)}"))
            break
        _, out = run_line([*args, *tail], data)
        replies.append(_reply(out))
    reply = merge(replies)
    if harness == "pi":
        reply = _for_pi(reply, root)
    io.write_reply(reply)


def _for_pi(reply: dict[str, Any] | None, root: str | None) -> dict[str, Any]:
    """Pi's reply names the hook budget, which the extension gives the calls it does not wait for (a
    review with a slow model needs all of it; a shorter deadline there would cut it), and, when the
    worker is on, the warm worker (its socket and the code it must run), so that the extension can hand
    the session's next events to it over the socket itself, without starting a process
    (habitus.worker's JSON frames); a worker of other code refuses them."""
    import os

    from habitus import hookmode
    from habitus.state.root import StateRoot
    from habitus.worker import code_id, socket_path
    from habitus.worker.client import OFF

    path = StateRoot.at(root).path
    settings = hookmode.read_settings(path)
    reply = {**(reply or {}), "budget_ms": settings.budget_ms}
    if os.environ.get("HABITUS_WORKER", "").lower() in OFF or not settings.worker:
        return reply
    return {**reply, "worker": {"socket": socket_path(str(path)), "code": code_id()}}


def _reply(out: bytes) -> dict[str, Any] | None:
    """A command's hook reply (one JSON object, or nothing)."""
    if not out.strip():
        return None
    import orjson

    try:
        reply = orjson.loads(out)
    except orjson.JSONDecodeError:
        return None
    return reply if isinstance(reply, dict) else None
