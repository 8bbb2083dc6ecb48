"""Man pages and completions are generated from the click tree; committed copies must not be stale."""

from __future__ import annotations

import importlib.util
import sys

import click

from conftest import REPO
from habitus.cli import COMMANDS, root


def generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "scripts" / "gen_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_docs"] = module
    spec.loader.exec_module(module)
    return module


def test_man_pages_and_completions_are_fresh() -> None:
    stale = generator().stale_files()
    assert stale == [], "run: .venv/bin/python scripts/gen_docs.py"


def test_every_command_has_a_man_page_and_completion() -> None:
    bash = (REPO / "completions" / "habitus.bash").read_text()
    for name in COMMANDS:
        page = (REPO / "man" / f"habitus-{name}.1").read_text()
        for section in (
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "STDIN",
            "STDOUT",
            "EXIT STATUS",
            "FILES",
            "ENVIRONMENT",
            "SEE ALSO",
        ):
            assert f".SH {section}" in page, (name, section)
        assert f'"|{name}") node="{name}"' in bash


def test_root_help_table_matches_each_command() -> None:
    ctx = click.Context(root)
    for name, (_, summary) in COMMANDS.items():
        command = root.get_command(ctx, name)
        assert command is not None
        assert command.get_short_help_str(200) == summary, name


def test_every_option_has_help_text() -> None:
    nodes = generator().command_tree()
    for path, command in nodes:
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, (path, param.name)
        assert command.help, path


def test_readme_documents_every_error_code_and_starts_with_setup() -> None:
    from habitus.errors import CODES

    readme = (REPO / "README.md").read_text()
    for code, (status, _) in CODES.items():
        assert f"| `{code}` | {int(status)} |" in readme, code
    head = readme.split("\n## ", 1)[0]
    assert "bin/habitus demo" in head and "bin/test" in head
    assert "exec bin/test" in (REPO / ".ci" / "run").read_text()
