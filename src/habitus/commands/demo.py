"""habitus demo: a guided tour on a temporary state root; every step is a real command."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile

import click

MAN = {
    "stdin": "Not read.",
    "stdout": "Human-readable text (the one command that is not JSON): each step's command line and its "
    "JSON result.",
    "files": "A temporary state root, removed at the end unless --keep is given.",
}

STEPS: list[list[str]] = [
    ["status"],
    ["config", "set", "capture.enabled", "true"],
    ["config", "get", "capture.enabled"],
    ["config", "show"],
]


@click.command()
@click.option("--keep", is_flag=True, help="Keep the temporary state root and print its path.")
def cli(keep: bool) -> None:
    """Run a short guided tour on a temporary state root.

    Each step prints the command a user would type and its JSON result,
    so the demo doubles as a tutorial. Exits 0 only if every step succeeded.

    \b
    Example:  habitus demo
    """
    root = tempfile.mkdtemp(prefix="habitus-demo-")
    env = {**os.environ, "HABITUS_HOME": root}
    failed = 0
    try:
        click.echo(f"# habitus demo: state root {root} (HABITUS_HOME)\n")
        for step in STEPS:
            click.echo("$ habitus " + " ".join(shlex.quote(a) for a in step))
            done = subprocess.run(
                [sys.executable, "-m", "habitus", *step], env=env, capture_output=True, text=True, check=False
            )
            click.echo((done.stdout or done.stderr).rstrip())
            click.echo("")
            if done.returncode != 0:
                failed += 1
        click.echo("demo: every step succeeded" if not failed else f"demo: {failed} step(s) failed")
    finally:
        if keep:
            click.echo(f"state root kept at {root}")
        else:
            import shutil

            shutil.rmtree(root, ignore_errors=True)
    if failed:
        raise SystemExit(1)
