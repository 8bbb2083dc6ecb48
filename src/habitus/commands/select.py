"""habitus select: the approved habits that apply to this prompt, as JSON or as a hook's injected context."""

from __future__ import annotations

from typing import Any

import click

from habitus import io
from habitus.dispatch import StateCommand
from habitus.options import harness_option, output_options, state_options
from habitus.state.root import StateRoot

MAN = {
    "stdin": 'One object {"prompt": "...", "context": ["...", ...]} (context: up to 4 prior messages, '
    'oldest first, used only to resolve a follow-up such as "yes, do that"). Hook mode (--harness): '
    "the harness's prompt event (Claude Code and Codex UserPromptSubmit, Gemini BeforeAgent, Pi "
    'before_agent_start, generic {"user": "...", "context": [...]}); other events are ignored.',
    "stdout": 'Without --harness: {"v":1,"habits":[{"id","condition","behavior","polarity"}],"guidance",'
    '"reason","judge","candidates","retrieved","reasons","model_id"}. Hook mode: the harness\'s '
    "context injection (Claude Code and Codex hookSpecificOutput.additionalContext, Gemini the same "
    'for BeforeAgent, Pi and generic {"additionalContext"}) naming each selected condition and '
    "behaviour, without ids; nothing at all when no habit applies or anything fails.",
    "files": "Reads config.toml (select.enabled, select.judge, select.max_habits, embed.model, "
    "models.NAME), law.md, ledger.sqlite (read-only: never created or migrated) and the embedding model; "
    "appends one metadata row to the ledger's select_log (never the prompt, a hash of it, vectors or "
    "guidance) when the ledger exists and is current.",
}


@click.command(cls=StateCommand)
@harness_option
@state_options
@output_options
def cli(harness: str | None, root: StateRoot, wait: float, pretty: bool) -> None:
    """Choose the approved habits that apply to a prompt.

    Only active, approved, law-valid habits are candidates (at most 100);
    at most select.max_habits (3) are chosen. The local judge rejects
    negated, quoted, hypothetical and past requests, talk about habits
    themselves, mere mentions and near misses (same object, another action).
    Missing or stale vectors, a model change or any state doubt means no
    guidance: exit 3 here, silence in hook mode. With no approved habits it
    answers without loading the embedding model.

    \b
    Examples:
      echo '{"prompt": "commit this with a good message"}' | habitus select --pretty
      habitus select --harness claude-code      # a UserPromptSubmit hook
    """
    from habitus.select import check_request, select

    request = io.read_request()
    if harness is not None:
        _hook(harness, request, root=root, wait=wait)
        return
    prompt, context = check_request(request)
    chosen = select(root, prompt, context, wait=wait, mode="cli")
    io.write_result(chosen.as_dict(), pretty=pretty, human="select")


def _hook(harness: str, request: dict[str, Any], *, root: StateRoot, wait: float) -> None:
    from habitus.harness.events import parse_event
    from habitus.harness.reply import context_output
    from habitus.select import guidance, select
    from habitus.select.hook import context_of

    event = parse_event(harness, request)
    if event.kind != "prompt" or not event.prompt or not event.prompt.strip():
        return
    chosen = select(root, event.prompt, context_of(event), wait=wait, mode=harness, cwd=event.cwd)
    if not chosen.habits:
        return
    io.write_reply(context_output(harness, event, guidance(chosen.habits)))
