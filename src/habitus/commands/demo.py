"""habitus demo: the whole loop on a temporary state root; every step is a real command."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import click

from habitus.errors import HabitusError

MAN = {
    "stdin": "Not read.",
    "stdout": "Human-readable text (not JSON, like `habitus review`): each step's command line, as typed "
    "from the demo folder with HABITUS_HOME set, and its JSON result, shortened (the hook's output is "
    "shown whole).",
    "files": "A temporary folder (state/ = HABITUS_HOME, the sample conversation, the hook event, the "
    "backup), removed at the end unless --keep is given. Nothing outside it is read or written.",
}


@click.command()
@click.option("--keep", is_flag=True, help="Keep the temporary folder and print its path.")
def cli(keep: bool) -> None:
    """Run the whole loop offline on a temporary state root.

    Captures a sample conversation (four days of a coding agent being corrected),
    analyzes it locally, shows the proposed habits, approves one, selects it for
    a new prompt, shows the exact text a Claude Code hook injects, retains and
    retrieves a memory, reviews the agent's final answer, backs up and verifies.
    Each step prints the command a user would type and its JSON result
    (shortened), so the demo doubles as a tutorial. Exits 0 only if every step
    produced what it should; otherwise 1 naming the step.

    \b
    Example:  habitus demo --keep
    """
    from habitus.demo.tour import tour

    work = Path(tempfile.mkdtemp(prefix="habitus-demo-"))
    started = time.monotonic()
    failed = None
    try:
        click.echo(f"# habitus demo: the whole loop, offline, in {work} (HABITUS_HOME={work}/state).")
        if keep:
            click.echo(f"# To type along afterwards: cd {work} && export HABITUS_HOME=$PWD/state\n")
        else:
            click.echo("# The folder is removed at the end; `habitus demo --keep` keeps it to type along.\n")
        for number, step in enumerate(tour(work), start=1):
            click.echo(f"# {number}. {step.title}")
            click.echo(f"$ {step.command}    # {step.seconds:.2f} s")
            click.echo(_render(step.shown))
            if step.note:
                click.echo("\n".join("  | " + line for line in step.note.splitlines()))
            click.echo("")
            if step.problem:
                failed = (number, step.problem)
                break
        if failed is None:
            click.echo(f"# demo: every step did what it should ({time.monotonic() - started:.1f} s).")
            click.echo(f"# {_models_line()}")
    finally:
        if keep:
            click.echo(f"# kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if failed is not None:
        raise HabitusError("failed", f"demo step {failed[0]}: {failed[1]}")


def _models_line() -> str:
    """The model presets of the user's own state root (read only), or how to add one."""
    import shutil

    from habitus.models.presets import summary
    from habitus.state import config
    from habitus.state.root import StateRoot

    try:
        settings = config.load(StateRoot.at(None))
    except HabitusError:
        settings = config.Config()
    on_path = {name: shutil.which(name) is not None for name in ("claude", "codex", "gemini", "pi")}
    return summary(settings, on_path=on_path)


def _render(value: object, indent: int = 0, width: int = 100) -> str:
    """JSON, one line when it fits, else one key or item per line with short values kept inline."""
    if value is None and indent == 0:
        return "(no output)"
    flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if indent + len(flat) <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        rows = [
            f"{pad}{json.dumps(k, ensure_ascii=False)}: {_render(v, indent + 2, width)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(rows) + "\n" + " " * indent + "}"
    rows = [pad + _render(v, indent + 2, width) for v in value]
    return "[\n" + ",\n".join(rows) + "\n" + " " * indent + "]"
